/*
 * procwatch.h - the life of one command's process group, as both relays
 * (the runner's pipes, runner.c, and the PTY, pty.c) drive it from their
 * poll loops:
 *
 *   running   the group leader (the runner shell) and whatever it starts
 *   timeout   at the deadline: SIGTERM to the group, and SIGCONT, since a
 *             stopped process would never see the TERM
 *   grace     AG_KILL_GRACE_MS later, or at once when the caller says stop
 *             (the client went away, the session ends): SIGKILL
 *   exited    the leader is gone: the rest of the group is killed with it
 *             (the zombie leader keeps the group id ours until it is
 *             reaped) and the leader reaped, its status kept
 *
 * The leader's exit is seen through a pidfd where the kernel has one (the
 * loop polls ag_procwatch_fd()), else by a look at every turn.
 */
#ifndef AG_PROCWATCH_H
#define AG_PROCWATCH_H

#include <sys/types.h>

#define AG_KILL_GRACE_MS	2000	/* SIGTERM -> SIGKILL */

struct ag_procwatch {
	pid_t		pid;		/* the leader; its group is -pid */
	int		pidfd;		/* readable once pid exits, or -1 */
	int		look;		/* waitid at the next step */
	long long	term_at;	/* the deadline, 0 = none */
	long long	kill_at;	/* 0 until the TERM went out */
	int		timed_out;
	int		killed;		/* SIGKILL sent on stop or after the grace */
	int		exited;
	long long	exited_at;
	int		wstatus;	/* of the leader, once exited */
};

/* Watch pid from now; timeout in seconds (0 or absurdly large: none). */
void	ag_procwatch_start(struct ag_procwatch *w, pid_t pid, long timeout, long long now);

/*
 * One turn: the deadline, the grace, stop (nonzero: kill now), the
 * leader's exit.  Returns 1 once the leader has exited.
 */
int	ag_procwatch_step(struct ag_procwatch *w, long long now, int stop);

/* ms until the watch must step again, at most cap (for poll's timeout). */
long long ag_procwatch_wait_ms(const struct ag_procwatch *w, long long now, long long cap);

/* The fd to poll for the leader's exit (-1: none, step looks every turn),
 * and what the loop calls when it was readable. */
int	ag_procwatch_fd(const struct ag_procwatch *w);
void	ag_procwatch_ready(struct ag_procwatch *w);

void	ag_procwatch_close(struct ag_procwatch *w);

#endif
