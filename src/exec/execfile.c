/*
 * execfile.c - the file an exec names, as the process sees it (see
 * execfile.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "exec/execfile.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC	0x9fa0
#endif
#define PROC_ROOT_INO		1
#define MAX_LINKS		40		/* the kernel's MAXSYMLINKS */
#define REST_MAX		(2 * PATH_MAX)	/* what is left of the name, links spliced in */

static int
proc_open(pid_t tid, const char *what, int flags)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%ld/%s", (long)tid, what);
	return open(p, flags | O_CLOEXEC);
}

static int
on_proc(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

static int
same_file(int a, const struct stat *b)
{
	struct stat st;

	return fstat(a, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino;
}

/*
 * What /proc/self (or /proc/thread-self) of the /proc at procfd is to
 * thread tid: "TGID" or "TGID/task/TID" in that /proc's pid namespace.
 * One in which the gateway is seen too (its self resolves for us: the
 * sandbox could not mount its own) counts as the gateway's (Tgid, Pid);
 * otherwise it is the process's own namespace's (the last numbers of
 * NStgid and NSpid).  0, or -errno.
 */
static int
self_name(pid_t tid, int procfd, int thread, char *out, size_t outsz)
{
	char buf[2048], *line, *save = NULL, me[32];
	long tgid = -1, id = -1;
	ssize_t n;
	int fd, ours = readlinkat(procfd, "self", me, sizeof(me)) > 0;

	if ((fd = proc_open(tid, "status", O_RDONLY)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		long *dst = strncmp(line, ours ? "Tgid:" : "NStgid:", ours ? 5 : 7) == 0 ? &tgid :
		    strncmp(line, ours ? "Pid:" : "NSpid:", ours ? 4 : 6) == 0 ? &id : NULL;
		char *p;

		if (dst == NULL)
			continue;
		/* the last number: the innermost namespace */
		for (p = line + strlen(line); p > line && p[-1] >= '0' && p[-1] <= '9'; p--)
			;
		*dst = strtol(p, NULL, 10);
	}
	if (tgid <= 0 || id <= 0)
		return -ESRCH;
	if (thread)
		snprintf(out, outsz, "%ld/task/%ld", tgid, id);
	else
		snprintf(out, outsz, "%ld", tgid);
	return 0;
}

/* rest becomes head + "/" + rest (head may be ""): 0, or -ENAMETOOLONG */
static int
splice_name(char *rest, size_t restsz, const char *head)
{
	char tmp[REST_MAX];
	int n;

	n = snprintf(tmp, sizeof(tmp), "%s/%s", head, rest);
	if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= restsz)
		return -ENAMETOOLONG;
	memcpy(rest, tmp, (size_t)n + 1);
	return 0;
}

static void
replace(int *cur, int fd)
{
	close(*cur);
	*cur = fd;
}

int
ag_execfile_open(pid_t tid, int dirfd, const char *path, int flags)
{
	char rest[REST_MAX], comp[NAME_MAX + 1], target[PATH_MAX];
	struct stat rootst;
	int root, cur, links = 0, rc;
	size_t off = 0;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if ((root = proc_open(tid, "root", O_PATH | O_DIRECTORY)) < 0)
		return -errno;
	if (fstat(root, &rootst) < 0) {
		rc = -errno;
		close(root);
		return rc;
	}
	if (path[0] == '/')
		cur = dup(root);
	else if (dirfd == AT_FDCWD)
		cur = proc_open(tid, "cwd", O_PATH | O_DIRECTORY);
	else {
		char what[32];

		snprintf(what, sizeof(what), "fd/%d", dirfd);
		cur = proc_open(tid, what, O_PATH);
	}
	if (cur < 0) {
		rc = errno == ENOENT ? -EBADF : -errno;
		close(root);
		return rc;
	}
	if (path[0] == '\0') {
		close(root);
		if (flags & AT_EMPTY_PATH)
			return cur;		/* fexecve: the descriptor's own file */
		close(cur);
		return -ENOENT;
	}
	snprintf(rest, sizeof(rest), "%s", path);
	for (;;) {
		const char *s = rest + off, *e;
		struct stat st;
		size_t len;
		int nfd, last;

		while (*s == '/')
			s++;
		if (*s == '\0')
			break;
		for (e = s; *e != '\0' && *e != '/'; e++)
			;
		if ((len = (size_t)(e - s)) > NAME_MAX) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, s, len);
		comp[len] = '\0';
		for (last = 1; *e != '\0'; e++)
			if (*e != '/') {
				last = 0;
				break;
			}
		off = (size_t)(e - rest);
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			/* the process's root is its top: ".." stays there */
			if (same_file(cur, &rootst))
				continue;
			if ((nfd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				goto fail_errno;
			replace(&cur, nfd);
			continue;
		}
		if ((strcmp(comp, "self") == 0 || strcmp(comp, "thread-self") == 0) &&
		    on_proc(cur) && fstat(cur, &st) == 0 && st.st_ino == PROC_ROOT_INO) {
			char who[64];

			/* a link whose text depends on who reads it */
			if (++links > MAX_LINKS) {
				rc = -ELOOP;
				goto fail;
			}
			if ((rc = self_name(tid, cur, comp[0] == 't', who, sizeof(who))) < 0 ||
			    (rc = splice_name(rest + off, sizeof(rest) - off, who)) < 0)
				goto fail;
			continue;
		}
		if ((nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
			goto fail_errno;
		if (fstat(nfd, &st) < 0) {
			close(nfd);
			goto fail_errno;
		}
		if (!S_ISLNK(st.st_mode)) {
			replace(&cur, nfd);
			continue;
		}
		close(nfd);
		if ((last && (flags & AT_SYMLINK_NOFOLLOW)) || ++links > MAX_LINKS) {
			rc = -ELOOP;
			goto fail;
		}
		if (on_proc(cur)) {
			/* /proc/N/fd/M, cwd, root, exe: the kernel goes to the
			 * object itself, which no text says */
			if ((nfd = openat(cur, comp, O_PATH | O_CLOEXEC)) < 0)
				goto fail_errno;
			replace(&cur, nfd);
			continue;
		}
		{
			ssize_t n = readlinkat(cur, comp, target, sizeof(target) - 1);

			if (n < 0)
				goto fail_errno;
			if ((size_t)n >= sizeof(target) - 1) {
				rc = -ENAMETOOLONG;
				goto fail;
			}
			target[n] = '\0';
		}
		/* the link's text, then what followed it */
		memmove(rest, rest + off, strlen(rest + off) + 1);
		off = 0;
		if ((rc = splice_name(rest, sizeof(rest), target)) < 0)
			goto fail;
		if (target[0] == '/') {
			if ((nfd = dup(root)) < 0)
				goto fail_errno;
			replace(&cur, nfd);
		}
	}
	close(root);
	return cur;
fail_errno:
	rc = -errno;
fail:
	close(cur);
	close(root);
	return rc;
}

int
ag_execfile_reopen(int fd)
{
	char p[64];
	int r;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	return r < 0 ? -errno : r;
}
