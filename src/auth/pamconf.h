/*
 * pamconf.h - PAM service files read the way Linux-PAM reads them, for
 * agentgate doctor and agentgate setup: one reader for sshd's service (where
 * is pam_agentgate.so bind, what runs before it) and the gateway's own (does
 * a refusal of pam_agentgate.so refuse the caller).
 */
#ifndef AG_PAMCONF_H
#define AG_PAMCONF_H

#include <limits.h>
#include <stddef.h>

#define AG_PAMCONF_MAX_ARGS	32	/* a line's arguments beyond this are not seen */

/* One module line.  Valid during the callback only. */
struct ag_pam_line {
	const char	*file;		/* the file it is in */
	int		 lineno;	/* its line there, from 1 */
	int		 depth;		/* 0: the service file; 1: a file it @includes */
	int		 top_lineno;	/* the service file's line: the @include's for depth 1 */
	const char	*type;		/* auth, account, password or session, lower case */
	int		 dash;		/* written "-type": skipped when the module does not load */
	const char	*control;	/* required, sufficient, include, "[success=ok ...]", ... */
	const char	*module;	/* as written: a name or a path */
	int		 argc;
	const char	*argv[AG_PAMCONF_MAX_ARGS];
};

/*
 * fn(line, arg) for each module line of the service file at path and of
 * the files it @includes (one level, as Debian's /etc/pam.d/sshd does), in
 * the order Linux-PAM runs them.  Stops when fn returns nonzero and returns
 * that; 0 otherwise, and for a file that cannot be read.
 */
int	ag_pam_each_line(const char *path,
	    int (*fn)(const struct ag_pam_line *line, void *arg), void *arg);

/* The line loads module (a base name such as "pam_env.so"). */
int	ag_pam_line_is(const struct ag_pam_line *l, const char *module);
/* The line has argument arg. */
int	ag_pam_line_has(const struct ag_pam_line *l, const char *arg);
/* The value of the line's name=value argument (prefix "name="), or NULL. */
const char *ag_pam_line_value(const struct ag_pam_line *l, const char *prefix);

/* The service's first "session ... pam_agentgate.so bind" line. */
struct ag_pam_bind {
	int	 top;		/* its top_lineno; 0: the service has none */
	int	 depth;		/* 1: in a file the service @includes */
	char	 where[PATH_MAX + 16];	/* FILE:LINE */
	char	 service[128];	/* the service it records in (sshd_service=, or sshd) */
};
/* Fills b; returns b->top. */
int	ag_pam_find_bind(const char *path, struct ag_pam_bind *b);

/*
 * The first line of the service that reads the user's own environment file
 * (pam_env.so user_readenv=1) in a phase that runs before or with sshd's
 * session (auth, session), before line before_top of the service file
 * (0: anywhere), with its text in buf; 0 when there is none.
 */
int	ag_pam_user_env_line(const char *path, int before_top, char *buf, size_t len);

/*
 * Whether a caller pam_agentgate.so refuses in phase type ("auth" or
 * "account") is refused by the gateway's service at path: 0; -1 with why
 * (the line that lets the caller in, and how) in buf; -2 when no line of
 * the phase runs the module.  A stack holds
 * when a line of pam_agentgate.so whose every failure is "bad" or "die"
 * (required, requisite, or a [...] control saying so) runs with no line
 * before it that can end the stack or jump (sufficient, done, a jump,
 * include or substack, which the doctor does not follow), and no line
 * anywhere resets the stack.
 */
int	ag_pam_refusal_holds(const char *path, const char *type, char *buf, size_t len);

#endif
