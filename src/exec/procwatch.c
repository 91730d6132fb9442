/* procwatch.c - timeout, grace, kill and exit of a command's group; see procwatch.h */
#include "agconfig.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/procwatch.h"

static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* a pidfd is always close-on-exec (pidfd_open(2)) */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

void
ag_procwatch_start(struct ag_procwatch *w, pid_t pid, long timeout, long long now)
{
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->pidfd = open_pidfd(pid);
	w->look = 1;		/* once at the start, then when the pidfd says */
	if (timeout > 0 && timeout < 100L * 365 * 86400)	/* beyond: no limit */
		w->term_at = now + (long long)timeout * 1000;
}

static void
reap(struct ag_procwatch *w, long long now, int fallback)
{
	if (waitpid(w->pid, &w->wstatus, 0) < 0)
		w->wstatus = fallback;
	w->exited = 1;
	w->exited_at = now;
}

int
ag_procwatch_step(struct ag_procwatch *w, long long now, int stop)
{
	siginfo_t si;

	if (w->exited)
		return 1;
	if (w->term_at && !w->timed_out && now >= w->term_at) {
		w->timed_out = 1;
		kill(-w->pid, SIGTERM);
		kill(-w->pid, SIGCONT);
		w->kill_at = now + AG_KILL_GRACE_MS;
	}
	if (stop || (w->kill_at && now >= w->kill_at)) {
		w->killed = 1;
		kill(-w->pid, SIGKILL);
		kill(w->pid, SIGKILL);	/* in case it has no group of its own yet */
		reap(w, now, SIGKILL);
		return 1;
	}
	if (w->pidfd >= 0 && !w->look)
		return 0;
	w->look = 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == w->pid) {
		kill(-w->pid, SIGKILL);	/* the zombie leader keeps the group id ours */
		reap(w, now, 0);
		return 1;
	}
	return 0;
}

long long
ag_procwatch_wait_ms(const struct ag_procwatch *w, long long now, long long cap)
{
	long long t = cap;

	if (w->exited)
		return t;
	if (w->pidfd < 0 && t > 100)
		t = 100;	/* no pidfd: look at the leader now and then */
	if (w->term_at && !w->timed_out && w->term_at - now < t)
		t = w->term_at - now;
	if (w->kill_at && w->kill_at - now < t)
		t = w->kill_at - now;
	return t < 0 ? 0 : t;
}

int
ag_procwatch_fd(const struct ag_procwatch *w)
{
	return w->exited ? -1 : w->pidfd;
}

void
ag_procwatch_ready(struct ag_procwatch *w)
{
	w->look = 1;
}

void
ag_procwatch_close(struct ag_procwatch *w)
{
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->pidfd = -1;
}
