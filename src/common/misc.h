/*
 * misc.h - small mechanisms every part needs, one copy each: a path's last
 * component and its ".." components, a quick string compare, the monotonic
 * clock, writing a whole buffer, non-blocking fds, closing every fd above
 * a bound.  Safe to call in a child between fork and exec where noted.
 */
#ifndef AG_MISC_H
#define AG_MISC_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

/* The last component of a path: what follows its last '/' (all of it when none). */
const char *ag_base_name(const char *path);
/* Whether a path has a ".." component. */
int	ag_path_has_dotdot(const char *path);

/*
 * strcmp(a, b), answered from the first byte when that differs: the
 * program, builtin and rule tables are searched for every command of
 * every line, and most of the names compared differ there.
 */
static inline int
ag_strcmp(const char *a, const char *b)
{
	if (*a != *b)
		return (unsigned char)*a - (unsigned char)*b;
	return strcmp(a, b);
}

/* Milliseconds on CLOCK_MONOTONIC: for deadlines and durations, never dates. */
long long ag_now_ms(void);

/*
 * Write all n bytes, retrying short writes and EINTR.  0 when all was
 * written; -1 with errno otherwise (EIO for a write of 0).  stop, when not
 * NULL, is asked after each EINTR: if it returns nonzero the write gives up
 * with errno EINTR (a relay whose client stalls must still see its timer).
 * Async-signal-safe when stop is.
 */
int	ag_write_all(int fd, const void *buf, size_t n, int (*stop)(void));
/* Read exactly n bytes, retrying short reads and EINTR; 0, or -1 (errno
 * EIO at end of file).  Async-signal-safe. */
int	ag_read_all(int fd, void *buf, size_t n);

/* O_NONBLOCK on fd (errors ignored: the caller's poll loop copes). */
void	ag_set_nonblock(int fd);

/*
 * poll(2) for at most tmo_ms (clamped to 0..INT_MAX).  The number of ready
 * fds; 0, with every revents cleared, also when a signal interrupted it
 * (the signal's self-pipe is then ready at the next call); -1 on any other
 * error, logged.
 */
struct pollfd;
int	ag_poll(struct pollfd *pf, size_t n, long long tmo_ms);

/* Close every fd from first to last, both included.  Async-signal-safe. */
void	ag_close_range(unsigned first, unsigned last);

/*
 * flock(fd, LOCK_EX), waiting while whoever holds the lock makes progress
 * (the file's size or its time of change moves: many sessions taking
 * turns, at the end of a log or rewriting a state file) and giving up
 * after ms milliseconds without any (a holder stopped with SIGSTOP, or
 * by a debugger): 0, or -1 with errno ETIMEDOUT or flock's.
 */
int	ag_flock_bounded(int fd, long ms);

/* The same with LOCK_SH: a reader that keeps writers out a moment. */
int	ag_flock_shared_bounded(int fd, long ms);

/*
 * Parent pid and start time (clock ticks since boot, /proc/PID/stat field
 * 22) of pid: with the pid, the start time names one process for good,
 * where a pid alone may be reused; with state not NULL, its state letter
 * too (R, S, T for stopped, Z for a zombie...).  0, or -1 when pid is gone.
 */
int	ag_proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start, char *state);

#endif
