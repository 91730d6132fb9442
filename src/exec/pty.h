/*
 * pty.h - one command in a gateway-owned pseudo-terminal.
 *
 * When the gateway's own stdin is a terminal (sshd allocated one for the
 * channel), each command gets a fresh PTY:
 *
 *   parent: ag_pty_open()        openpty at the client's size (TIOCGWINSZ on
 *                                the gateway's terminal), with its termios
 *           fork()
 *   child:  ag_pty_child_setup() setsid, TIOCSCTTY, slave on fds 0/1/2;
 *                                every other fd (the env-capture pipe on
 *                                fd 3) is the caller's business
 *   parent: ag_pty_close_slave(), then ag_pty_relay() until the command ends
 *           ag_pty_close()
 *
 * The relay puts the gateway's terminal in raw mode and restores it on
 * every way out: normal end, timeout, client gone, the session ending
 * (wake callback), and a fatal signal in the gateway (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT: the handlers ag_pty_init() installs restore the
 * saved termios and file flags, kept in statics, before the signal goes on).
 * Because our terminal is raw, ^C, ^\ and ^D are bytes that reach the PTY's
 * line discipline, which turns them into SIGINT/SIGQUIT for the command's
 * foreground process group and EOF; the gateway never sees them as signals.
 *
 * Ctrl-Z: there is no job control behind the gateway (nothing could bring a
 * stopped command back), so the PTY starts with VSUSP disabled: ^Z is an
 * ordinary byte for the program.  A program that stops itself anyway (vim's
 * :suspend, less after ^Z in its own termios) or is stopped by
 * SIGSTOP/SIGTSTP is continued (SIGCONT to the command's process group):
 * the runner shell at once (waitid), any other process of the group soon
 * after a ^Z and otherwise within a second (a /proc scan).  The command
 * keeps running in the foreground; the user never lands anywhere
 * unvalidated.
 *
 * Window size: ag_pty_init() installs a SIGWINCH handler that only sets a
 * flag and wakes the process's signal self-pipe (sigpipe.h).  The relay then reads the current size of our terminal
 * and sets it on the master (the kernel sends SIGWINCH to the command);
 * a burst of resizes collapses into the latest size.  A resize while no
 * command runs is simply read by the next ag_pty_open().
 *
 * Typeahead: what the client typed while a command ran is written to the
 * PTY at once (the command may read it).  What the command left unread
 * when it ended would die with the PTY; a shell would read it at its next
 * prompt.  So the parent keeps its own open of the slave (peer) until the
 * command ends, then reads the leftover input queue through it and hands it
 * back with the keystrokes it never wrote (unread).  A command cannot push
 * a line there with TIOCSTI: the sandbox's seccomp filter refuses it.
 *
 * Output (stdout and stderr are one stream in a PTY) goes through the
 * stream every relay feeds (stream.h): capped at max_output, redacted,
 * recorded as shown; the rest is read and discarded so the program never
 * blocks.  Writes to the client are non-blocking, so a
 * slow client never delays keystrokes (^C), resizes or the timeout.
 */
#ifndef AG_PTY_H
#define AG_PTY_H

#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "common/err.h"

struct ag_profile;
struct ag_rec;

#define AG_PTY_DRAIN_MS		2000	/* output still read after the command ended */
#define AG_PTY_DEFAULT_COLS	80	/* when our stdin has no size */
#define AG_PTY_DEFAULT_ROWS	24
#define AG_PTY_UNREAD_MAX	4096	/* keystrokes handed back (see unread) */

struct ag_pty {
	int		master;		/* ours; O_CLOEXEC */
	int		slave;		/* -1 after ag_pty_close_slave() */
	int		peer;		/* our own open of the slave, for typeahead */
	struct winsize	ws;		/* the size it was opened with */
};

/*
 * Once per process: the SIGWINCH handler and its self-pipe, and the
 * fatal-signal handlers that restore the terminal.  Idempotent.
 */
int	ag_pty_init(struct ag_err *err);

/*
 * Open a PTY sized like term_fd (the gateway's terminal; -1 or a non-tty:
 * 80x24) with term_fd's termios (or the defaults), VSUSP disabled, and make
 * term_fd raw at once, before the command exists (so ^C typed as it starts
 * reaches it); ag_pty_relay() and ag_pty_close() put term_fd back.
 */
int	ag_pty_open(struct ag_pty *p, int term_fd, struct ag_err *err);

/*
 * In the child after fork(): new session, the slave as controlling terminal
 * and fds 0, 1, 2; master and the original slave fd closed.  Only
 * async-signal-safe calls.  Returns -1 on failure (then _exit).  The caller
 * must not have made itself a process group leader (setsid would fail).
 */
int	ag_pty_child_setup(const struct ag_pty *p);

/*
 * For a relay whose far end is not a local PTY (an upstream's, upstream/):
 * the client's terminal raw and non-blocking as ag_pty_relay() makes it,
 * put back by ag_pty_restore_terminal(); its size (80x24 when it has
 * none); whether SIGWINCH came since the last look (clears it).
 */
void	ag_pty_enter_raw(int in_fd, int out_fd);
void	ag_pty_client_size(int fd, struct winsize *ws);
int	ag_pty_take_winch(void);

/* In the parent after fork(): close our copy of the slave. */
void	ag_pty_close_slave(struct ag_pty *p);
/* Close both ends and restore the terminal (also when the relay never ran). */
void	ag_pty_close(struct ag_pty *p);

struct ag_pty_relay_opts {
	pid_t		 pid;		/* the child: session leader, its pgid == pid */
	int		 in_fd;		/* the client's keystrokes; a tty is made raw */
	int		 out_fd;	/* the client's screen */
	long		 timeout;	/* seconds; 0 = none */
	long long	 max_output;	/* bytes; 0 = unlimited */
	struct ag_rec	*rec;		/* recording, or NULL */
	int		 rec_required;	/* recording failure ends the command */
	/* the profile whose output.redact applies (redact.h), or NULL */
	const struct ag_profile *redact;
	/* words to watch for in the output (stream.h), or NULL */
	const char *const	*watch;
	/*
	 * An extra fd the relay drains while it runs (the runner's env-capture
	 * pipe): on POLLIN/HUP, extra_cb is called; it returns -1 once the fd
	 * is finished (closed by the callback).  -1 = none.
	 */
	int		 extra_fd;
	int		(*extra_cb)(void *arg, int fd);
	void		*extra_arg;
	/*
	 * A wake-up fd, -1 = none: when it is readable, wake_cb returns 1 if
	 * the session must end (SIGHUP/SIGTERM arrived): the command is then
	 * killed.  wake_cb drains the fd, unless it is the process's signal
	 * self-pipe (sigpipe.h), which the relay drains itself.
	 */
	int		 wake_fd;
	int		(*wake_cb)(void *arg);
	void		*wake_arg;
	/* Asked each time round the relay (at least once a second): 1 ends
	 * the command as wake_cb does.  NULL: never. */
	int		(*tick_cb)(void *arg);
	void		*tick_arg;
};

struct ag_pty_result {
	int			wstatus;	/* waitpid status of pid */
	int			timed_out;
	int			truncated;
	int			client_gone;	/* in_fd/out_fd went away: group killed */
	int			terminated;	/* wake_cb said stop: group killed */
	int			rec_failed;	/* the recording could not be written */
	int			continued;	/* times a stopped command was continued */
	unsigned long long	bytes_out;	/* bytes the command wrote */
	int			watched;	/* 1 + index in watch of a word seen, or 0 */
	long long		duration_ms;
	char			rec_error[AG_ERR_MSG_MAX];
	/*
	 * Keystrokes the command never read, because it ended first: what it
	 * left in the PTY's input queue, then what the relay had not written
	 * yet (typically what was typed right after a ^C).  The caller gives
	 * them to whatever reads the terminal next.
	 */
	char			unread[AG_PTY_UNREAD_MAX];
	size_t			unread_len;
};

/*
 * Relay between the client and the PTY until the command (pid) has ended
 * and its output is drained; reap pid and SIGKILL what is left of its
 * process group.  Returns 0 (r filled) or -1 when the relay could not start
 * (err; the caller kills and reaps pid).
 */
int	ag_pty_relay(struct ag_pty *p, const struct ag_pty_relay_opts *o,
	    struct ag_pty_result *r, struct ag_err *err);

/*
 * Put the saved terminal back (async-signal-safe; the fatal-signal
 * handlers call it).  Harmless when nothing is saved.
 */
void	ag_pty_restore_terminal(void);

#endif
