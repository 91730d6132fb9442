/*
 * envsan.c - the dangerous-variable filter (see envsan.h).
 *
 * Three groups of names are dangerous:
 *  - what makes the dynamic loader, bash or libc load or run other code
 *    (LD_*, BASH_ENV, BASH_FUNC_*, GCONV_PATH, GLIBC_TUNABLES, ...);
 *  - bash's own control variables, which change how later words of the
 *    same command line are looked up, split or run (PATH, IFS, BASH_CMDS,
 *    BASH_ALIASES, SHELLOPTS, PS4, PROMPT_COMMAND, ...);
 *  - variables that make an allowed program run another one (GIT_*, PAGER,
 *    EDITOR, LESSOPEN, PYTHONSTARTUP, NODE_OPTIONS, TAR_OPTIONS, ...).
 * A profile adds names with env.deny and lets names through with
 * env.allow, except the "hard" ones: letting those through would make the
 * policy's own reading of the line wrong (PATH decides which file a name
 * runs, IFS how words split), so no profile can allow them.
 */
#include "agconfig.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "policy/envsan.h"
#include "common/log.h"

static const char *const hard_set[] = {
	"PATH", "IFS", "BASH_ENV", "ENV", "BASH_FUNC_*", "BASH_CMDS",
	"BASH_ALIASES", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT",
	"EXECIGNORE", "GLOBIGNORE", "BASH_COMPAT", "LD_PRELOAD", "LD_AUDIT",
	"LD_LIBRARY_PATH",
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
	"PS0", "PS1", "PS2", "PS3", "PS4", "HOME", "CDPATH", "INPUTRC",
	"HISTFILE", "HISTCONTROL", "HISTIGNORE", "HISTTIMEFORMAT", "HOSTFILE",
	"MAIL", "MAILPATH", "MAILCHECK", "TMOUT", "FUNCNEST", "OPTERR",
	"COMP_WORDBREAKS", "FIGNORE", "TIMEFORMAT", "SHELL", "ZDOTDIR",
	"OLDPWD", "PWD", "DIRSTACK", "FUNCNAME", "GROUPS", "BASH_VERSINFO",
	"EUID", "UID", "PPID", "SHLVL",
	/* programs that start other programs */
	"GIT_*", "PAGER", "MANPAGER", "MANOPT", "SYSTEMD_PAGER*", "LESS*",
	"MORE", "EDITOR", "VISUAL", "FCEDIT", "BROWSER", "TERMINAL",
	"SUDO_ASKPASS", "SSH_ASKPASS*", "XDG_CONFIG_HOME",
	"XDG_CONFIG_DIRS", "XDG_DATA_HOME", "PYTHON*", "PERL5*", "PERLLIB",
	"PERL_*", "RUBY*", "GEM_*", "BUNDLE_*", "NODE_OPTIONS", "NODE_PATH",
	"NPM_CONFIG_*", "npm_config_*", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS", "LUA_INIT*", "LUA_PATH*", "LUA_CPATH*",
	"TCLLIBPATH", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_*",
	"TAR_OPTIONS", "GREP_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG",
	"CVS_RSH", "OPENSSL_CONF", "OPENSSL_ENGINES", "CURL_HOME", "WGETRC",
	"PIP_*", "KRB5_CONFIG", "GNUPGHOME", "GPG_AGENT_INFO", "SSH_AUTH_SOCK",
	"MAKEFLAGS", "MAKEFILES", "MFLAGS", "GNUMAKEFLAGS", "EMACSLOADPATH",
	"VIMINIT", "EXINIT", "MYVIMRC", "TEXINPUTS",
	NULL
};

/*
 * Names inside the sets above that only label or tune what a program does
 * and cannot make it run anything else: a commit's author and committer.
 */
static const char *const harmless_set[] = {
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	NULL
};

/*
 * Developer tier: what programs the tree starts is held by the kernel and
 * the exec-time deny rules, not by these variables, and test runners need
 * them; still never the ones that load code at start-up (PYTHONSTARTUP).
 */
static const char *const developer_set[] = {
	"PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED",
	"PYTHONWARNINGS",
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
		if (fnmatch(*set, name, 0) == 0)
			return 1;
	return 0;
}

static int
strlist_globmatch(const struct ag_strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i] != NULL && fnmatch(l->v[i], s, 0) == 0)
			return 1;
	return 0;
}

int
ag_envsan_is_dangerous(const char *name, const struct ag_profile *profile)
{
	if (name == NULL || *name == '\0')
		return 1;
	if (in_set(hard_set, name))
		return 1;
	if (profile != NULL && strlist_globmatch(&profile->env_allow, name))
		return 0;
	if (in_set(harmless_set, name) ||
	    (profile != NULL && profile->tier == AG_TIER_DEVELOPER && in_set(developer_set, name)))
		return profile != NULL && strlist_globmatch(&profile->env_deny, name);
	if (in_set(builtin_set, name))
		return 1;
	if (profile != NULL && strlist_globmatch(&profile->env_deny, name))
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
