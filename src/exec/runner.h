/*
 * runner.h - run one validated command line in a fresh runner shell.
 *
 * The command runs as `RUNNER --noprofile --norc -c SCRIPT` in its own
 * process group, in the tracked cwd, with exactly the tracked environment
 * and only fds 0, 1, 2 and the capture pipe (fd 3).  SCRIPT installs an
 * EXIT trap that writes the exported environment to fd 3 as NUL-delimited
 * KEY=VALUE records followed by an end marker, sets $? to the previous
 * command's status, and then has the command text on its own line, so a
 * trailing comment, `exit N` or a here-document cannot lose the capture.
 * (A command too long for argv comes on a memfd instead: AG_RUN_ARGV_MAX.)
 * The runner must therefore be bash.
 *
 * The gateway relays stdout and stderr (streaming, each capped at
 * max_output), enforces the timeout (SIGTERM to the group, SIGKILL after
 * AG_KILL_GRACE_MS, status 124; exec/procwatch.h), and when the runner shell is gone kills
 * whatever is left of its process group and of its descendants (the
 * gateway is their subreaper): nothing a command starts outlives it.
 *
 * Signals: ag_runner_init() installs handlers for SIGCHLD, SIGHUP, SIGTERM,
 * SIGINT, SIGQUIT, SIGALRM and SIGUSR1 that only set flags and write to a self-pipe,
 * and ignores SIGPIPE and SIGTTOU; the child gets default dispositions.
 */
#ifndef AG_RUNNER_H
#define AG_RUNNER_H

#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"
#include "exec/execguard.h"

struct ag_profile;
struct ag_sandbox;
struct ag_rec;

#define AG_RUN_CAPTURE_MAX	((size_t)1024 * 1024)	/* env capture bound */
#define AG_RUN_STATUS_TIMEOUT	124			/* like timeout(1) */
#define AG_RUN_CAPTURE_FD	3
/*
 * A command longer than this does not fit in one argv string of bash -c
 * (the kernel's MAX_ARG_STRLEN is 128 KiB): the runner reads it from a
 * sealed memfd on AG_RUN_SCRIPT_FD, closes that fd and evals the text.
 */
#define AG_RUN_ARGV_MAX		((size_t)96 * 1024)
#define AG_RUN_SCRIPT_FD	5
/* the runner's gate (admit, below): one byte "g" lets the command run */
#define AG_RUN_GATE_FD		6

struct ag_run_opts {
	const char	*runner;	/* absolute path of bash */
	const char	*cmd;		/* the command text (validated) */
	size_t		 cmdlen;
	const char	*cwd;
	char *const	*env;		/* NULL-terminated KEY=VALUE */
	int		 last_status;	/* $? seen by the command */
	const char	*shell_state;	/* bash text run first: the plain variables
					 * and functions earlier lines left, or NULL */
	int		 in_fd;		/* the command's stdin */
	int		 out_fd;	/* where stdout is relayed */
	int		 err_fd;	/* where stderr and gateway notices go */
	int		 tty_fd;	/* terminal to give the foreground to, or -1 */
	long		 timeout;	/* seconds; 0 = none */
	long long	 max_output;	/* bytes per stream; 0 = unlimited */
	size_t		 capture_max;	/* 0 = AG_RUN_CAPTURE_MAX */
	const struct ag_sandbox *sandbox;	/* kernel sandbox to enter, or NULL (sandbox.h) */
	/*
	 * PTY path (pty.h): the command runs in a fresh PTY sized like in_fd,
	 * which must be the client's terminal (out_fd its screen); stdout and
	 * stderr are one stream there, max_output caps it; tty_fd must be -1.
	 */
	int		 pty;
	struct ag_rec	*rec;		/* PTY output is recorded here, or NULL */
	int		 rec_required;	/* a recording failure ends the command */
	/*
	 * Developer tier: every exec of the command's tree is stopped and
	 * judged by this (execguard.h); NULL = no exec supervision.
	 */
	ag_execguard_judge_fn exec_judge;
	void		*exec_judge_ctx;
	/*
	 * The profile whose output.redact applies to stdout and stderr
	 * (redact.h) or to the PTY's one stream, or NULL.
	 */
	const struct ag_profile *redact;
	/*
	 * Called once the runner is starting, before it may run the command
	 * (the runner's first act is to wait for it): 0 lets it run; -1 (err
	 * set) ends it with nothing run, and ag_run fails with
	 * res->not_admitted.  The write-ahead audit record goes here, so that
	 * writing it overlaps the runner's start instead of preceding it.
	 * NULL: the runner does not wait.
	 */
	int		(*admit)(void *arg, struct ag_err *err);
	void		*admit_arg;
	/*
	 * Looked at every few seconds while the command runs: 1 ends its
	 * process group as a SIGTERM to the gateway would (res->revoked).
	 * The caller's standing (core/standing.h); NULL: never.
	 */
	int		(*revoked)(void *arg);
	void		*revoked_arg;
	/*
	 * The MCP write_file tool's target (the line judged was `cat > PATH`;
	 * PATH with ~/ expanded), or NULL.  The runner then writes in_fd to it
	 * itself, inside the sandbox, after the gate, instead of running the
	 * line: it resolves the directory, judges the file there again
	 * (policy.h, ag_policy_write_refusal, with write_prof and write_home)
	 * and opens it with openat2(2) following no symbolic link, so a link
	 * put in its place after the decision cannot redirect the write.
	 */
	const char	*write_path;
	const struct ag_profile *write_prof;
	const char	*write_home;
	int		 no_capture;	/* the command cannot change state
					 * (ag_session_needs_capture): no trap, no fd 3,
					 * and bash may exec a lone program directly */
};

struct ag_run_result {
	int			 status;	/* shell-style: exit code, 128+N for a signal, 124 timeout */
	int			 not_admitted;	/* admit refused: nothing ran */
	int			 signal;	/* signal that killed the runner, or 0 */
	int			 timed_out;
	int			 truncated;	/* some output was cut at max_output */
	int			 client_gone;	/* our stdout/stderr went away: group killed */
	int			 terminated;	/* the gateway got SIGHUP/SIGTERM: group killed */
	int			 cancelled;	/* the gateway got SIGUSR1: group killed */
	int			 revoked;	/* opts->revoked said so: group killed */
	unsigned long long	 bytes_out;	/* bytes the command wrote to stdout + stderr */
	int			 refusal_said;	/* its stderr (or terminal) said "Permission
						 * denied" or "Read-only file system": the
						 * kernel may have refused a write */
	long long		 duration_ms;
	char			*capture;	/* the records, end marker removed; owned */
	size_t			 capture_len;
	int			 capture_ok;	/* complete (end marker seen, within bound) */
	int			 rec_failed;	/* PTY path: the recording could not be written */
	char			 rec_error[AG_ERR_MSG_MAX];
	char			 unread[4096];	/* PTY path: keystrokes the command never got */
	size_t			 unread_len;
	struct ag_exec_denial	*denials;	/* execs the supervisor refused; owned */
	size_t			 ndenials;
	int			 ran_known;	/* an exec supervisor watched: ran is all */
	struct ag_exec_ran	 ran;		/* the files it let run; owned */
};

/*
 * What programs print when the kernel refused them a write (EACCES from
 * Landlock or the file's mode, EROFS from a read-only mount): the
 * gateway cannot see those refusals, only the program's words
 * (res->refusal_said).
 */
extern const char *const ag_run_refusal_words[];

/* Once per process, before the first ag_run(): signals, subreaper, self-pipe. */
int	ag_runner_init(struct ag_err *err);

/*
 * Run one command.  Returns 0 when the command was started (res filled,
 * whatever its status), -1 when it could not be started (err says why).
 */
int	ag_run(const struct ag_run_opts *opts, struct ag_run_result *res, struct ag_err *err);
void	ag_run_result_free(struct ag_run_result *res);

/* For the runner's and the PTY relay's loops: opts->revoked, asked at
 * most every few seconds (*next_at), remembered in r->revoked. */
int	ag_run_check_revoked(const struct ag_run_opts *o, struct ag_run_result *r,
	    long long now, long long *next_at);

/* 1 once SIGHUP or SIGTERM has arrived: the session should end. */
int	ag_runner_terminating(void);
/*
 * SIGUSR1 cancels the command that runs (or the next one to start): its
 * process group is ended as on a timeout, and the session goes on.  A front
 * end that takes requests clears it when it takes one (agentproto.h).
 */
void	ag_runner_cancel_reset(void);
/* 1 once SIGUSR1 asked to cancel the command that runs (a relay of its own). */
int	ag_runner_cancel_requested(void);
/* 1 if SIGALRM fired since the last call (clears it). */
int	ag_runner_take_alarm(void);
/* The self-pipe's read end, for a front end's poll loop; drained by it. */
int	ag_runner_signal_fd(void);
void	ag_runner_drain_signal_fd(void);

/* Kill (SIGKILL) and reap every remaining descendant of the gateway but
 * spare (the sandbox's namespace keeper, sandbox.h; 0 for none) and the
 * children kept with ag_runner_keep_child() */
void	ag_runner_reap_all(pid_t spare);

/* A helper of the gateway's own (the validator's, validate/) that the sweep
 * after each command must leave alone: keep 1 to add it, 0 to drop it. */
void	ag_runner_keep_child(pid_t pid, int keep);

/*
 * The direct children of process of (its main thread's, from
 * /proc/PID/task/PID/children), at most max of them.
 */
size_t	ag_runner_children(pid_t of, pid_t *out, size_t max);

/*
 * The script a runner shell is given for cmd (see above: with capture,
 * the EXIT trap's records on fd AG_RUN_CAPTURE_FD; $?; the command on its
 * own line), without a sandbox guard, for a runner on another host
 * (core/target.c).  len at most AG_RUN_ARGV_MAX.  malloc'd, or NULL.
 */
char	*ag_runner_script(const char *cmd, size_t len, int last_status, int capture);
/*
 * In what fd 3 received, the trap's records: 1 with *off and *rlen (the
 * end marker left out) when they are complete, 0 when there are none.
 */
int	ag_runner_capture_records(const char *d, size_t len, size_t *off, size_t *rlen);

#endif
