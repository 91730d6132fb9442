/*
 * langs.c - interpreters and their package tools: the variables that make
 * them load code at start-up or from elsewhere (PYTHONSTARTUP, PERL5OPT,
 * NODE_OPTIONS, JAVA_TOOL_OPTIONS, ...), refused as assignments and
 * dropped from captured environments (envsan.c).  The developer tier lets
 * through the few a test runner needs, never the ones that run code at
 * start-up (PYTHONSTARTUP).
 */
#include "agconfig.h"

#include <stddef.h>
#include <string.h>

#include "policy/prog.h"

static const char *const python_names[] = { "python", "python3", NULL };
static const char *const python_env[] = { "PYTHON*", NULL };
static const char *const python_dev[] = {
	"PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED",
	"PYTHONWARNINGS", NULL
};

/*
 * python -m NAME runs the module NAME as a program: `python3 -m twine
 * upload` is `twine upload` to a deny rule.  The interpreter's options
 * come first, clustered (-Im pip) or not; -X and -W take a value, -c and a
 * script end the options without a module.
 */
static size_t
python_module(const char *const *words, size_t nwords, char *name, size_t namesz)
{
	size_t i, k, n;

	for (i = 1; i < nwords; i++) {
		const char *s = words[i], *mod = NULL;

		if (s == NULL || s[0] != '-' || s[1] == '\0' || strcmp(s, "--") == 0)
			return 0;
		if (s[1] == '-') {
			/* the long options that take a value */
			if (strcmp(s, "--check-hash-based-pycs") == 0)
				i++;
			continue;
		}
		for (k = 1; s[k] != '\0'; k++) {
			if (s[k] == 'c')
				return 0;
			if (s[k] == 'X' || s[k] == 'W') {
				if (s[k + 1] == '\0')
					i++;
				break;
			}
			if (s[k] == 'm') {
				if (s[k + 1] != '\0')
					mod = s + k + 1;
				else if (i + 1 < nwords && words[i + 1] != NULL)
					mod = words[++i];
				else
					return 0;
				break;
			}
		}
		if (mod == NULL)
			continue;
		/* python -m runpy MOD: the module runpy runs */
		if (strcmp(mod, "runpy") == 0) {
			if (i + 1 >= nwords || words[i + 1] == NULL)
				return 0;
			mod = words[++i];
		}
		/* the package the module belongs to: twine.__main__ is twine's */
		n = strcspn(mod, ".");
		if (n == 0 || n >= namesz)
			return 0;
		memcpy(name, mod, n);
		name[n] = '\0';
		return i + 1;
	}
	return 0;
}

const struct ag_prog ag_prog_python = {
	.names = python_names, .flags = AG_PROG_RUNS_CODE, .env_filter = python_env,
	.env_developer = python_dev, .dispatch = python_module,
	.runs = "the scripts and modules it is given; `-m NAME` the module NAME as a program (a deny rule on NAME applies)",
};

static const char *const perl_names[] = { "perl", NULL };
static const char *const perl_env[] = { "PERL5*", "PERLLIB", "PERL_*", NULL };
const struct ag_prog ag_prog_perl = {
	.names = perl_names, .flags = AG_PROG_RUNS_CODE, .env_filter = perl_env,
};

static const char *const ruby_names[] = { "ruby", "gem", "bundle", NULL };
static const char *const ruby_env[] = { "RUBY*", "GEM_*", "BUNDLE_*", NULL };
const struct ag_prog ag_prog_ruby = {
	.names = ruby_names, .flags = AG_PROG_RUNS_CODE, .env_filter = ruby_env,
};

/*
 * node [OPTIONS] SCRIPT ARGS: a package manager's entry point run by path
 * (node /usr/lib/node_modules/npm/bin/npm-cli.js publish) is that manager.
 */
static size_t
node_script(const char *const *words, size_t nwords, char *name, size_t namesz)
{
	static const char *const valued[] = {
		"-r", "--require", "--import", "--loader", "--experimental-loader", "-C",
		"--conditions", "--input-type", "--title", "--env-file", NULL
	};
	const char *base, *prog;
	size_t i, k;

	for (i = 1; i < nwords; i++) {
		const char *s = words[i];

		if (s == NULL)
			return 0;
		if (strcmp(s, "-e") == 0 || strcmp(s, "--eval") == 0 || strcmp(s, "-p") == 0 ||
		    strcmp(s, "--print") == 0 || strcmp(s, "-") == 0)
			return 0;	/* code on the line: no script */
		if (strcmp(s, "--") == 0) {
			i++;
			break;
		}
		if (s[0] != '-')
			break;
		for (k = 0; valued[k] != NULL; k++)
			if (strcmp(s, valued[k]) == 0)
				i++;
	}
	if (i >= nwords || words[i] == NULL)
		return 0;
	base = strrchr(words[i], '/');
	base = base != NULL ? base + 1 : words[i];
	if ((prog = ag_prog_entry(base)) == NULL || strlen(prog) >= namesz)
		return 0;
	memcpy(name, prog, strlen(prog) + 1);
	return i + 1;
}

static const char *const node_names[] = { "node", "nodejs", NULL };
static const char *const node_env[] = { "NODE_OPTIONS", "NODE_PATH", NULL };
const struct ag_prog ag_prog_node = {
	.names = node_names, .flags = AG_PROG_RUNS_CODE, .env_filter = node_env,
	.dispatch = node_script,
};

static const char *const java_names[] = { "java", NULL };
static const char *const java_env[] = {
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", NULL
};
const struct ag_prog ag_prog_java = { .names = java_names, .env_filter = java_env };

static const char *const lua_names[] = { "lua", NULL };
static const char *const lua_env[] = { "LUA_INIT*", "LUA_PATH*", "LUA_CPATH*", NULL };
const struct ag_prog ag_prog_lua = {
	.names = lua_names, .flags = AG_PROG_RUNS_CODE, .env_filter = lua_env,
};

static const char *const tclsh_names[] = { "tclsh", NULL };
static const char *const tclsh_env[] = { "TCLLIBPATH", NULL };
const struct ag_prog ag_prog_tclsh = {
	.names = tclsh_names, .flags = AG_PROG_RUNS_CODE, .env_filter = tclsh_env,
};

static const char *const tex_names[] = { "tex", "latex", "pdflatex", NULL };
static const char *const tex_env[] = { "TEXINPUTS", NULL };
const struct ag_prog ag_prog_tex = { .names = tex_names, .env_filter = tex_env };

/*
 * The shells: each runs any command line it is given (-c TEXT, a script,
 * its standard input), which the gateway judges only as the shell's own
 * arguments.  Known here so that what reads the registry can tell a shell
 * from another program; the policy itself treats them as any program.
 */
static const char *const shell_names[] = {
	"bash", "sh", "dash", "zsh", "ksh", "ksh93", "mksh", "yash", "fish", "tcsh", "csh", NULL
};
const struct ag_prog ag_prog_shell = {
	.names = shell_names, .flags = AG_PROG_RUNS_CODE,
	.runs = "any command line it is given (-c TEXT), a script or its standard input, outside the gateway's view",
};
