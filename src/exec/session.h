/*
 * session.h - the tracked state of one gateway session: working directory,
 * OLDPWD, the pushd/popd stack, the exported environment and the status of
 * the previous command ($?).  Every command runs in a fresh runner process;
 * what persists between commands lives here and nowhere else.
 *
 * The builtins cd, pushd, popd and dirs are handled here, without starting a
 * process, when a command line consists of exactly one of them with literal
 * (or tilde) arguments; anything more complex goes to the runner, whose
 * captured environment (PWD included) is applied afterwards.
 *
 * Ownership: struct ag_session owns every string it points to except
 * `profile`; ag_session_free() releases them.
 */
#ifndef AG_SESSION_H
#define AG_SESSION_H

#include <stddef.h>
#include <stdio.h>
#include <pwd.h>

#include "common/config.h"
#include "common/err.h"
#include "parse/shparse.h"

#define AG_SESSION_MAX_ENV	4096		/* entries kept from a capture */
#define AG_SESSION_MAX_DIRS	1024		/* pushd stack depth */
/* the variables and functions kept for later lines, in bytes: with the
 * longest command argv takes (AG_RUN_ARGV_MAX), within one argument's */
#define AG_SESSION_MAX_STATE	(24 * 1024)

struct ag_session {
	const struct ag_profile	*profile;
	char			*user;
	char			*home;
	char			*shell;		/* the account's login shell (SHELL) */
	char			*host;		/* short host name, for the prompt */
	char			*cwd;		/* absolute, logical (like bash's PWD) */
	char			**dirs;		/* dir stack below cwd; dirs[0] is next */
	size_t			 ndirs;
	char			**env;		/* "KEY=VALUE", NULL-terminated; exported vars */
	size_t			 nenv;
	int			 last_status;	/* $? for the next command */
	int			 path_kept;	/* the last capture's PATH had an entry
						 * that is not absolute: not taken */
	int			 remote;	/* another host's (a bastion target):
						 * its directories are not looked at here */
	char			*shell_state;	/* bash text: the plain variables and
						 * functions earlier lines left, kept
						 * where every exec is judged; or NULL */
	int			 state_dropped;	/* the last capture's were over
						 * AG_SESSION_MAX_STATE: not kept */
	char			 env_not_kept[128];	/* the last capture's exported
					 * names that are not carried to the next
					 * line (LD_LIBRARY_PATH), for a note */
	char			 state_forged[160];	/* the first entry of the
					 * last capture's state that is not as
					 * the runner's trap writes it (a line's
					 * own writes to fd 3): left out; or "" */
	int			 has_funcs;	/* shell_state defines functions */
	int			 state_changed;	/* the last capture changed shell_state */
};

/* What sshd handed us that the starting environment may carry over. */
struct ag_session_origin {
	const struct passwd *pw;		/* the account; NULL: the one running us */
	const char	*cwd;			/* absolute start directory; NULL: home */
	const char	*ssh_connection;	/* SSH_CONNECTION, or NULL */
	const char	*ssh_client;		/* SSH_CLIENT */
	const char	*ssh_tty;		/* SSH_TTY */
	const char	*term;			/* TERM, used only when tty */
	const char	*lang;			/* LANG */
	int		 tty;			/* the session has a terminal */
};

/*
 * Set up the starting state for origin->pw (else the account running the
 * gateway): cwd = origin->cwd, else the home directory (or "/" if it is
 * not usable), a minimal environment, then the profile's env.set.  0 ok,
 * -1 with err.
 */
int	ag_session_init(struct ag_session *s, const struct ag_profile *profile,
	    const struct ag_session_origin *origin, struct ag_err *err);
void	ag_session_free(struct ag_session *s);

/*
 * The starting state of a session on another host (a bastion target),
 * from a runner capture taken there (NUL-delimited KEY=VALUE, as
 * ag_session_apply_capture() reads): its environment as that host's sshd
 * gives it, HOME and PWD as its home and cwd; then the profile's env.set.
 * host names the target in the prompt.  0, or -1 with err.
 */
int	ag_session_init_remote(struct ag_session *s, const struct ag_profile *profile,
	    const char *user, const char *host, const char *buf, size_t len,
	    struct ag_err *err);

/* Environment access.  getenv returns a pointer into the vector or NULL. */
const char *ag_session_getenv(const struct ag_session *s, const char *name);
int	ag_session_setenv(struct ag_session *s, const char *name, const char *value);
void	ag_session_unsetenv(struct ag_session *s, const char *name);

/*
 * Replace the environment with a runner's capture: len bytes of NUL-
 * delimited KEY=VALUE records.  Entries that are not valid names, bash's
 * own bookkeeping (SHLVL, _), and everything ag_envsan_filter() refuses
 * are dropped; env.set is applied again so the profile wins; PWD becomes
 * the cwd when it names a directory.  On error the state is unchanged.
 */
int	ag_session_apply_capture(struct ag_session *s, const char *buf, size_t len,
	    struct ag_err *err);

/*
 * If tree is exactly one cd/pushd/popd/dirs call the gateway can run
 * itself, run it (messages and status as bash gives them, on out/errf),
 * set *status and return 1.  Return 0 (nothing done) otherwise.
 * ag_session_is_builtin: the same question, nothing run.
 */
int	ag_session_try_builtin(struct ag_session *s, const struct ag_sh_node *tree,
	    FILE *out, FILE *errf, int *status);
int	ag_session_is_builtin(const struct ag_session *s, const struct ag_sh_node *tree);

/*
 * If tree is exactly a bare `exit [N]`, return 1 and set *status to N
 * (or to $? without N); 0 otherwise.
 */
int	ag_session_is_bare_exit(const struct ag_session *s, const struct ag_sh_node *tree,
	    int *status);

/*
 * 0 when running tree provably cannot change the tracked state (only
 * external programs and side-effect-free builtins, no assignment of any
 * kind, no loop variable, no function defined, and none of s's kept
 * functions, any of which a name may call): the runner can then skip the
 * environment capture, and bash can exec a lone program without forking.
 * 1 otherwise (the safe answer).
 */
/* 1 when name is one of bash's builtins or reserved words: a function
 * of that name would stand in for what the runner's own script calls */
int	ag_session_shell_word(const char *name);
int	ag_session_needs_capture(const struct ag_session *s, const struct ag_sh_node *tree);

/* Keep state (malloc'd bash text of definitions, owned from now; NULL:
 * none) in place of shell_state; has_funcs: it defines functions. */
void	ag_session_keep_state(struct ag_session *s, char *state, int has_funcs);
/* Keep no variables or functions for the next lines (shell_state). */
void	ag_session_forget_state(struct ag_session *s);

/* "/home/agent/src" → "~/src" when under home; writes into buf. */
const char *ag_session_tilde(const struct ag_session *s, const char *path,
	    char *buf, size_t len);

#endif
