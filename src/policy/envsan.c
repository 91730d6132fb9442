/*
 * envsan.c - the dangerous-variable filter (see envsan.h).
 *
 * Three groups of names are dangerous:
 *  - what makes the dynamic loader, bash or libc load or run other code
 *    (LD_*, BASH_ENV, BASH_FUNC_*, GCONV_PATH, GLIBC_TUNABLES, ...);
 *  - bash's own control variables, which change how later words of the
 *    same command line are looked up, split or run (PATH, IFS, BASH_CMDS,
 *    BASH_ALIASES, SHELLOPTS, PS4, PROMPT_COMMAND, ...);
 *  - variables that make an allowed program run another one: the ones
 *    every program may read (PAGER, EDITOR, XDG_CONFIG_HOME, OPENSSL_CONF,
 *    ...) here, the ones of one program (GIT_*, LESSOPEN, PYTHONSTARTUP,
 *    NODE_OPTIONS, TAR_OPTIONS, ...) in its descriptor (prog.h, env_filter).
 * A profile adds names with env.deny and lets names through with
 * env.allow, except the "hard" ones: letting those through would make the
 * policy's own reading of the line wrong (PATH decides which file a name
 * runs, IFS how words split), so no profile can allow them.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/envsan.h"
#include "policy/prog.h"

static const char *const hard_set[] = {
	"PATH", "IFS", "BASH_ENV", "ENV", "BASH_FUNC_*", "BASH_CMDS",
	"BASH_ALIASES", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT",
	"EXECIGNORE", "GLOBIGNORE", "BASH_COMPAT", "LD_PRELOAD", "LD_AUDIT",
	"LD_LIBRARY_PATH",
	/* the gateway's own: a token, the sandbox's fd; never a client's to set,
	 * never a command's to see (env.allow cannot let them through) */
	"AGENTGATE_*",
	NULL
};

static const char *const builtin_set[] = {
	/* loader, libc */
	"LD_*", "GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH",
	"HOSTALIASES", "MALLOC_*", "RESOLV_HOST_CONF", "TZDIR",
	/* bash itself */
	"BASH_XTRACEFD", "BASH_LOADABLES_PATH", "BASH_ARGV0", "BASH_ARGV",
	"BASH_ARGC", "BASH_SOURCE", "BASH_LINENO", "BASH_REMATCH",
	"BASH_SUBSHELL", "BASHPID", "PROMPT_COMMAND", "PROMPT_COMMANDS",
	"PS0", "PS3", "PS4", "HOME", "CDPATH", "INPUTRC",
	"HISTFILE", "HISTCONTROL", "HISTIGNORE", "HISTTIMEFORMAT", "HOSTFILE",
	"MAIL", "MAILPATH", "MAILCHECK", "TMOUT", "FUNCNEST", "OPTERR",
	"COMP_WORDBREAKS", "FIGNORE", "TIMEFORMAT", "SHELL", "ZDOTDIR",
	"OLDPWD", "PWD", "DIRSTACK", "FUNCNAME", "GROUPS", "BASH_VERSINFO",
	"EUID", "UID", "PPID", "SHLVL",
	NULL
};

/*
 * What many programs read to start another one or load a library; a
 * single program's variables are in its descriptor (prog.h).  Where every
 * exec is judged (ag_profile_exec_judged) these only choose which program
 * an allowed one runs next, whose exec is judged, so they are a command's
 * to set there (EDITOR=true; git's own, GIT_EDITOR and
 * GIT_SEQUENCE_EDITOR, are in its descriptor's env_developer).
 */
static const char *const runs_set[] = {
	"PAGER", "EDITOR", "VISUAL", "FCEDIT", "BROWSER", "TERMINAL",
	/* the prompts: expanded only by an interactive bash, whose every
	 * command is judged at its exec like the rest (a venv's activate
	 * and deactivate set them) */
	"PS1", "PS2",
	NULL
};

/* What makes any program read other configuration or load a library into
 * itself (OPENSSL_CONF's engines, git's config under XDG_CONFIG_HOME):
 * refused everywhere. */
static const char *const config_set[] = {
	"XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "OPENSSL_CONF",
	"OPENSSL_ENGINES", "KRB5_CONFIG",
	NULL
};

/*
 * Refused as assignments, but kept by the capture filter: the runner shell
 * sets these itself (cwd tracking reads PWD back), and a command cannot
 * change PATH or HOME because the policy refuses those assignments.
 */
static const char *const shell_state[] = {
	"PATH", "HOME", "PWD", "OLDPWD", "SHLVL", NULL
};

static int
in_set(const char *const *set, const char *name)
{
	for (; *set; set++)
		if (ag_glob_match(*set, name))
			return 1;
	return 0;
}

/* Which of a descriptor's sets prog_sets() looks in. */
enum { PROG_FILTER, PROG_HARMLESS, PROG_DEVELOPER };

/* 1 when name is in that set of any program's descriptor. */
static int
prog_sets(int which, const char *name)
{
	const struct ag_prog *const *pp;

	for (pp = ag_progs; *pp != NULL; pp++) {
		const char *const *set = which == PROG_FILTER ? (*pp)->env_filter :
		    which == PROG_HARMLESS ? (*pp)->env_harmless : (*pp)->env_developer;

		if (set != NULL && in_set(set, name))
			return 1;
	}
	return 0;
}

/*
 * One table for every toolchain, not one per program descriptor: a cache
 * location is not something the policy judges, and XDG_CACHE_HOME alone
 * covers only the tools that read it.  In the developer tier these names
 * are a command's to change too (npm_config_cache is, npm_config_* is
 * not): what the tree runs is held there by the kernel and the exec-time
 * deny rules, and a cache is the identity's own files.
 */
static const char *const tmp_env[] = {
	"TMPDIR=/tmp",
	"XDG_CACHE_HOME=/tmp/.cache",
	"npm_config_cache=/tmp/.cache/npm",
	"YARN_CACHE_FOLDER=/tmp/.cache/yarn",
	"PIP_CACHE_DIR=/tmp/.cache/pip",
	"CARGO_HOME=/tmp/.cache/cargo",
	"GOPATH=/tmp/.cache/go",
	"GOCACHE=/tmp/.cache/go-build",
	"GOMODCACHE=/tmp/.cache/go/pkg/mod",
	"GOENV=/tmp/.config/go/env",	/* go env -w: not the root-owned home */
	"GRADLE_USER_HOME=/tmp/.cache/gradle",
	"MAVEN_OPTS=-Dmaven.repo.local=/tmp/.cache/m2/repository",
	"CCACHE_DIR=/tmp/.cache/ccache",
	NULL
};

const char *const *
ag_envsan_tmp_env(void)
{
	return tmp_env;
}

/* 1 when name is one of tmp_env's. */
static int
tmp_env_name(const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; tmp_env[i] != NULL; i++)
		if (strncmp(tmp_env[i], name, n) == 0 && tmp_env[i][n] == '=')
			return 1;
	return 0;
}

int
ag_envsan_is_hard(const char *name)
{
	return name != NULL && in_set(hard_set, name);
}

int
ag_envsan_is_dangerous(const char *name, const struct ag_profile *profile)
{
	if (name == NULL || *name == '\0')
		return 1;
	if (in_set(hard_set, name))
		return 1;
	if (profile != NULL && ag_strlist_match(&profile->env_allow, name))
		return 0;
	/* inside the sets below, names that only label what a program does
	 * (a commit's author), and in the developer tier what test runners
	 * need: what programs the tree starts is held there by the kernel
	 * and the exec-time deny rules */
	if (prog_sets(PROG_HARMLESS, name) ||
	    (profile != NULL && profile->tier == AG_TIER_DEVELOPER &&
	    (prog_sets(PROG_DEVELOPER, name) || tmp_env_name(name))))
		return profile != NULL && ag_strlist_match(&profile->env_deny, name);
	if (in_set(builtin_set, name) || in_set(config_set, name))
		return 1;
	/* a program's own variables can load code into it (NODE_OPTIONS
	 * into npm, GIT_CONFIG_* over the gateway's core.hooksPath), and a
	 * denied program is judged only at its exec: they stay refused */
	if (in_set(runs_set, name))
		return !ag_profile_exec_judged(profile) ||
		    ag_strlist_match(&profile->env_deny, name);
	if (prog_sets(PROG_FILTER, name))
		return 1;
	if (profile != NULL && ag_strlist_match(&profile->env_deny, name))
		return 1;
	return 0;
}

size_t
ag_envsan_filter(char **env, const struct ag_profile *profile)
{
	size_t i, j, removed = 0;

	if (env == NULL)
		return 0;
	for (i = j = 0; env[i] != NULL; i++) {
		char *eq = strchr(env[i], '=');
		char name[256];
		size_t n = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
		int bad;

		/* a name too long to copy, or no '=', is not a variable we
		 * can judge: drop it */
		if (eq == NULL || n >= sizeof(name)) {
			bad = 1;
			n = n >= sizeof(name) ? sizeof(name) - 1 : n;
			memcpy(name, env[i], n);
			name[n] = '\0';
		} else {
			memcpy(name, env[i], n);
			name[n] = '\0';
			bad = !in_set(shell_state, name) &&
			    ag_envsan_is_dangerous(name, profile);
		}
		if (bad) {
			ag_log(LOG_DEBUG, "envsan: dropped %s from the environment",
			    name);
			free(env[i]);
			removed++;
			continue;
		}
		env[j++] = env[i];
	}
	env[j] = NULL;
	return removed;
}

