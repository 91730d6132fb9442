/*
 * sigpipe.h - the process's one signal self-pipe.
 *
 * Every signal the gateway waits for in a poll loop (SIGCHLD, SIGHUP,
 * SIGTERM, SIGINT, SIGQUIT, SIGALRM for the runner; SIGWINCH for the PTY
 * relay; the server's own) has a handler that only sets its part's flag and
 * calls ag_sigpipe_notify(); loops poll ag_sigpipe_fd(), drain it, and then
 * look at the flags.  One pipe, whoever installed the handler: a wake-up
 * meant for one part is never lost to another's drain, since the flags say
 * what happened.
 */
#ifndef AG_SIGPIPE_H
#define AG_SIGPIPE_H

#include <stddef.h>

#include "common/err.h"

/*
 * Create the pipe (once per process) and install handler for each of
 * sigs.  restart: SA_RESTART (a read in progress goes on) or not (it sees
 * EINTR and its loop looks at the flags).  0, or -1 with err.
 */
int	ag_sigpipe_catch(const int *sigs, size_t nsigs, void (*handler)(int), int restart,
	    struct ag_err *err);

/* From a handler: wake the loop.  Async-signal-safe; keeps errno. */
void	ag_sigpipe_notify(void);

/* The read end to poll (-1 before the first ag_sigpipe_catch). */
int	ag_sigpipe_fd(void);

/* Empty the pipe: what woke the loop is now in the flags. */
void	ag_sigpipe_drain(void);

/*
 * Close the pipe (a forked child that makes its own: sharing its parent's
 * would wake the parent's loop with the child's signals).
 */
void	ag_sigpipe_close(void);

#endif
