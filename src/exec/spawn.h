/*
 * spawn.h - the child side of starting a command's runner shell: what
 * happens between fork and exec.
 *
 * Two callers fork a runner.  The gateway itself (runner.c), for commands
 * with a terminal, a write step, or no per-session runner; and the
 * session's runner process (zygote.c), which is already inside the
 * sandbox's namespaces, filter and outer ruleset and only forks and execs.
 * Both go through the same steps here, in this order:
 *
 *	ag_spawn_process()	own process group (or session on the PTY),
 *				death with the gateway, default signals
 *	(the caller: enter the sandbox, the exec supervisor's filter)
 *	ag_spawn_fds()		the command's fds where the runner wants them,
 *				nothing else open, the working directory
 *	ag_spawn_exec()		the runner
 *
 * Every function is async-signal-safe: the gateway's child may share the
 * gateway's memory until its exec (runner.c, spawn_runner).
 */
#ifndef AG_SPAWN_H
#define AG_SPAWN_H

#include <sys/types.h>

struct ag_pty;

struct ag_spawn {
	int		 in, out, err;	/* to 0, 1, 2; unused with a PTY */
	const struct ag_pty *pt;	/* the command's own terminal, or NULL */
	int		 tty;		/* the caller's terminal: the command's
					 * group goes in front on it; -1 none */
	int		 cap;		/* to AG_RUN_CAPTURE_FD, or -1 */
	int		 script;	/* to AG_RUN_SCRIPT_FD, or -1 */
	int		 gate;		/* to AG_RUN_GATE_FD, or -1 */
	int		 errfd;		/* where a failure before the shuffle is said */
	pid_t		 parent;	/* the gateway; 0: outside the child's PID
					 * namespace (getppid() says 0 there) */
	const char	*cwd;
	const char	*path;		/* the runner */
	char *const	*argv;
	char *const	*env;
};

/* Say why the command cannot start (with errno's text) on fd; exit 126. */
void	ag_spawn_fail(int fd, const char *what) __attribute__((noreturn));
/* Process group or terminal session, death signal, default signals and
 * an empty mask.  Exits (126) on failure. */
void	ag_spawn_process(const struct ag_spawn *s);
/*
 * The fds: 0-2, the capture, script and gate fds at theirs, inner (the
 * sandbox's inner ruleset, or -1) at AG_SANDBOX_FD, everything else
 * closed; then the working directory (a failure is said on the command's
 * stderr: exit 1).  Exits (126) on failure.
 */
void	ag_spawn_fds(const struct ag_spawn *s, int inner);
/* Run the runner; says why not on fd 2 and exits 127. */
void	ag_spawn_exec(const struct ag_spawn *s) __attribute__((noreturn));

#endif
