/* misc.c - the clock, whole writes, fd helpers; see misc.h */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"

const char *
ag_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

int
ag_path_has_dotdot(const char *path)
{
	const char *p;

	for (p = path; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

long long
ag_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
ag_write_all(int fd, const void *buf, size_t n, int (*stop)(void))
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno != EINTR)
				return -1;
			if (stop != NULL && stop())
				return -1;
			continue;
		}
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
ag_read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void
ag_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void
ag_close_range(unsigned first, unsigned last)
{
	long max;
	unsigned fd;

	if (first > last)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, last, 0) == 0)
		return;
#endif
	/* older kernels: one close per possible fd, bounded */
	if ((max = sysconf(_SC_OPEN_MAX)) < 0 || max > 65536)
		max = 65536;
	for (fd = first; fd <= last && fd < (unsigned)max; fd++)
		(void)close((int)fd);
}

int
ag_poll(struct pollfd *pf, size_t n, long long tmo_ms)
{
	int r;

	if (tmo_ms < 0)
		tmo_ms = 0;
	if (tmo_ms > INT_MAX)
		tmo_ms = INT_MAX;
	if ((r = poll(pf, (nfds_t)n, (int)tmo_ms)) >= 0)
		return r;
	if (errno == EINTR) {
		size_t i;

		for (i = 0; i < n; i++)
			pf[i].revents = 0;
		return 0;
	}
	ag_log(LOG_ERR, "poll: %s", strerror(errno));
	return -1;
}

/* Fields 4 (ppid) and 22 (start time) of /proc/PID/stat.  The command name
 * (field 2) may hold spaces and parentheses: parse after the last ')'. */
int
ag_proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return -1;
	if (state != NULL)
		*state = p[2];
	p++;
	for (field = 3; field <= 22; field++) {
		char *end;

		while (*p == ' ')
			p++;
		if (field == 4 || field == 22) {
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno != 0 || end == p)
				return -1;
			if (field == 4)
				*ppid = (pid_t)v;
			else
				*start = v;
			p = end;
			continue;
		}
		p += strcspn(p, " ");
		if (*p == '\0')
			return -1;
	}
	return 0;
}

static int
flock_bounded(int fd, int op, long ms)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	long long since = ag_now_ms();
	struct stat st;
	struct timespec seen_mtime = { 0, 0 };
	off_t seen = -1;

	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (fstat(fd, &st) == 0 && (st.st_size != seen ||
		    st.st_mtim.tv_sec != seen_mtime.tv_sec ||
		    st.st_mtim.tv_nsec != seen_mtime.tv_nsec)) {
			seen = st.st_size;
			seen_mtime = st.st_mtim;
			since = ag_now_ms();
		} else if (ag_now_ms() - since >= ms) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

int
ag_flock_bounded(int fd, long ms)
{
	return flock_bounded(fd, LOCK_EX, ms);
}

int
ag_flock_shared_bounded(int fd, long ms)
{
	return flock_bounded(fd, LOCK_SH, ms);
}
