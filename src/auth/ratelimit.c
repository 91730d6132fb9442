/*
 * ratelimit.c - failed token attempts per source (ratelimit.h).
 *
 * One file per address, "COUNT LAST-FAILURE-EPOCH", read and rewritten
 * under flock so that parallel sessions from one address all count.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth/ratelimit.h"
#include "common/log.h"
#include "common/misc.h"

/* The address as a file name: it is numeric (PAM_RHOST from sshd), but
 * nothing that could name another path gets through. */
static int
path_for(const char *source, char *buf, size_t len)
{
	const char *s = source != NULL && *source != '\0' ? source : "local";

	if (strlen(s) > 64 || strspn(s, "0123456789abcdefABCDEF.:") != strlen(s))
		s = "other";
	return snprintf(buf, len, "%s/%s", AG_RATELIMIT_DIR, s) < (int)len ? 0 : -1;
}

/*
 * Open and lock the source's file; -1 when there is no limiter here (no
 * directory or none of ours, or no failure from the source yet), -2 when the file cannot
 * be had (its lock, or a file the group cannot write): the attempt then
 * waits, since counting nothing would let every account of the host guess
 * freely once one had left a file only it could write.
 */
static int
open_locked(const char *source, int create)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (path_for(source, path, sizeof(path)) < 0)
		return -1;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0660);
	if (fd < 0) {
		/* no directory, or one this caller may not use (a gateway without
		 * the group, which doctor fails): no limiter here */
		if (errno == ENOENT ||
		    faccessat(AT_FDCWD, AG_RATELIMIT_DIR, W_OK | X_OK, AT_EACCESS) < 0)
			return -1;
		ag_log(LOG_ERR, "token limiter %s: %s (remove it: the gateways of every "
		    "account share it, through their group)", path, strerror(errno));
		return -2;
	}
	/* the umask must not keep the other accounts' gateways out */
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) != 0660)
		(void)fchmod(fd, 0660);
	/* bounded: a session of the account stopped while holding it must not
	 * hold up every token login from the address */
	if (ag_flock_bounded(fd, AG_RATELIMIT_LOCK_MS) < 0) {
		close(fd);
		return -2;
	}
	return fd;
}

static void
get(int fd, long *count, long long *last)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	*count = 0;
	*last = 0;
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %lld", count, last) != 2 || *count < 0) {
		*count = 0;
		*last = 0;
	}
	if (time(NULL) - *last > AG_RATELIMIT_FORGET)
		*count = 0;
}

static long
wait_for(long count, long long last)
{
	long long w, left;

	if (count < AG_RATELIMIT_FREE)
		return 0;
	w = count - AG_RATELIMIT_FREE >= 10 ? AG_RATELIMIT_MAX_WAIT :
	    1LL << (count - AG_RATELIMIT_FREE);
	if (w > AG_RATELIMIT_MAX_WAIT)
		w = AG_RATELIMIT_MAX_WAIT;
	left = last + w - (long long)time(NULL);
	return left > 0 ? (long)left : 0;
}

long
ag_ratelimit_wait(const char *source)
{
	long count, w;
	long long last;
	int fd = open_locked(source, 0);

	/* a lock held and not let go, or a file we may not update: the
	 * attempt waits, rather than guessing freely */
	if (fd == -2)
		return AG_RATELIMIT_LOCK_MS / 1000;
	if (fd < 0)
		return 0;
	get(fd, &count, &last);
	w = wait_for(count, last);
	close(fd);
	return w;
}

void
ag_ratelimit_failed(const char *source)
{
	char buf[64];
	long count;
	long long last;
	int fd = open_locked(source, 1), n;

	if (fd < 0)
		return;
	get(fd, &count, &last);
	n = snprintf(buf, sizeof(buf), "%ld %lld\n", count + 1, (long long)time(NULL));
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, buf, (size_t)n, 0);
	close(fd);
}
