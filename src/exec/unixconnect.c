/*
 * unixconnect.c - connect(2) of a command's UNIX socket, made by the exec
 * supervisor (see unixconnect.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "exec/execfile.h"
#include "exec/unixconnect.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif

/* How long a blocking connect waits for room in a listener's queue:
 * EAGAIN_TRIES times EAGAIN_WAIT_MS, while the supervisor answers nothing
 * else of the command. */
#define EAGAIN_TRIES	100
#define EAGAIN_WAIT_MS	10

static int
valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * connect(2) on the process's socket (the same open file: its flags are
 * the process's), without ever blocking the supervisor: a blocking socket
 * whose listener's queue is full is tried again for a while.  0 or -errno.
 */
static int
connect_for(int sock, const void *sa, socklen_t len, int listener, uint64_t id)
{
	int fl = fcntl(sock, F_GETFL), rc, tries;

	if (fl < 0)
		return -errno;
	if (!(fl & O_NONBLOCK) && fcntl(sock, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	for (tries = 0;; tries++) {
		rc = connect(sock, sa, len) < 0 ? -errno : 0;
		if (rc != -EAGAIN || (fl & O_NONBLOCK) || tries >= EAGAIN_TRIES)
			break;
		(void)poll(NULL, 0, EAGAIN_WAIT_MS);
		if (!valid(listener, id))
			break;
	}
	if (!(fl & O_NONBLOCK))
		(void)fcntl(sock, F_SETFL, fl);
	return rc;
}

/* The mount id of fd, and whether fd is that mount's root. */
static int
mount_of(int fd, uint64_t *id, int *root)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return -1;
	*id = sx.stx_mnt_id;
	*root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return 0;
}

/*
 * The socket file sfd (st), named name by process pid: 1 on a mount of
 * the session's own (one of r->roots is that mount's root: a mount that
 * is not one of them is not, even where a root lies beneath it), 2 a
 * socket network.unix names (the name's own socket, or NAME in one of its
 * directories, NAME the last component the process gave), 0 neither.
 */
static int
judge(pid_t pid, const struct ag_unix_rules *r, int sfd, const struct stat *st,
    const char *name)
{
	const char *base = strrchr(name, '/');
	uint64_t sid, rid;
	int root;
	size_t i;

	base = base != NULL ? base + 1 : name;
	if (r == NULL)
		return 0;
	if (mount_of(sfd, &sid, &root) == 0)
		for (i = 0; i < r->nroots; i++) {
			int fd = ag_execfile_open(pid, AT_FDCWD, r->roots[i], 0), ok;

			if (fd < 0)
				continue;
			ok = mount_of(fd, &rid, &root) == 0 && root && rid == sid;
			close(fd);
			if (ok)
				return 1;
		}
	for (i = 0; i < r->nnames; i++) {
		int fd = ag_execfile_open(pid, AT_FDCWD, r->names[i], 0), ok = 0;
		struct stat o;

		if (fd < 0)
			continue;
		if (fstat(fd, &o) == 0 && S_ISSOCK(o.st_mode))
			ok = o.st_dev == st->st_dev && o.st_ino == st->st_ino;
		else if (S_ISDIR(o.st_mode) && base[0] != '\0' &&
		    fstatat(fd, base, &o, AT_SYMLINK_NOFOLLOW) == 0)
			ok = S_ISSOCK(o.st_mode) && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
		close(fd);
		if (ok)
			return 2;
	}
	return 0;
}

/*
 * A pathname address: the socket it leads to for the process, judged, and
 * connected through /proc/self/fd (the inode judged, not the name again).
 * The walk and the connect are made with the account's group, not the
 * set-group-ID gateway's (this thread's file system ids only).
 */
static int
connect_path(int listener, const struct seccomp_notif *n, const struct ag_unix_rules *r,
    int sock, const char *name, struct ag_unix_note *note)
{
	struct sockaddr_un via;
	gid_t was = (gid_t)setfsgid(getgid());
	struct stat st;
	int fd, rc, verdict;

	fd = ag_execfile_open((pid_t)n->pid, AT_FDCWD, name, 0);
	if (fd < 0) {
		rc = fd;	/* as the kernel: ENOENT, ENOTDIR, ELOOP, EACCES */
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		rc = -ECONNREFUSED;	/* what the kernel says of a file that is no socket */
		goto out;
	}
	if ((verdict = judge((pid_t)n->pid, r, fd, &st, name)) == 0) {
		snprintf(note->reason, sizeof(note->reason), "the UNIX socket '%s' is not the "
		    "session's own (beneath its /tmp or a write root) and network.unix does not "
		    "name it", name);
		snprintf(note->rule, sizeof(note->rule), "network.unix");
		rc = -EACCES;
		goto out;
	}
	if (verdict == 2) {
		note->allowed = 1;
		snprintf(note->reason, sizeof(note->reason), "named in network.unix");
		snprintf(note->rule, sizeof(note->rule), "network.unix");
	}
	memset(&via, 0, sizeof(via));
	via.sun_family = AF_UNIX;
	snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", fd);
	rc = connect_for(sock, &via, sizeof(via), listener, n->id);
out:
	if (fd >= 0)
		close(fd);
	(void)setfsgid(was);
	return rc;
}

int
ag_unixconnect_answer(int listener, const struct seccomp_notif *n,
    const struct ag_unix_rules *r, struct seccomp_notif_resp *resp, struct ag_unix_note *note)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);
	int len = (int)n->data.args[2], dom = 0, pidfd = -1, sock = -1, rc;
	socklen_t dl = sizeof(dom);
	struct sockaddr_un sa;
	struct iovec l, rv;

	memset(note, 0, sizeof(*note));
	resp->id = n->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = 0;
	/* the pid is the stopped process's only while the notification is */
	if ((pidfd = (int)syscall(SYS_pidfd_open, (pid_t)n->pid, 0)) < 0 ||
	    !valid(listener, n->id)) {
		rc = -ECONNREFUSED;
		goto out;
	}
	if ((sock = (int)syscall(SYS_pidfd_getfd, pidfd, (int)n->data.args[0], 0)) < 0) {
		rc = -errno;	/* EBADF, as the kernel */
		goto out;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0) {
		rc = -errno;	/* ENOTSOCK */
		goto out;
	}
	if (dom != AF_UNIX) {
		/* the namespace and Landlock hold the other families, whatever
		 * the address says by the time the kernel reads it */
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		rc = 0;
		goto out;
	}
	if (len < 0 || (size_t)len > sizeof(sa)) {
		rc = -EINVAL;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	l.iov_base = &sa;
	l.iov_len = (size_t)len;
	rv.iov_base = (void *)(uintptr_t)n->data.args[1];
	rv.iov_len = (size_t)len;
	if (len > 0 && process_vm_readv((pid_t)n->pid, &l, 1, &rv, 1, 0) != (ssize_t)len) {
		rc = -EFAULT;
		goto out;
	}
	if (sa.sun_family == AF_UNIX && (size_t)len > off && sa.sun_path[0] != '\0') {
		char name[sizeof(sa.sun_path) + 1];

		memcpy(name, sa.sun_path, (size_t)len - off);
		name[(size_t)len - off] = '\0';
		snprintf(note->path, sizeof(note->path), "%s", name);
		rc = connect_path(listener, n, r, sock, name, note);
	} else if (sa.sun_family == AF_UNIX && (size_t)len > off && (r == NULL || !r->abstract)) {
		/* no namespace of its own: the host's abstract names */
		snprintf(note->path, sizeof(note->path), "@%.*s", (int)((size_t)len - off - 1),
		    sa.sun_path + 1);
		snprintf(note->reason, sizeof(note->reason), "an abstract UNIX socket, and the "
		    "session has no network namespace of its own to hold those");
		snprintf(note->rule, sizeof(note->rule), "network.unix");
		rc = -EACCES;
	} else {
		/* abstract, unnamed or not AF_UNIX at all: the kernel's business,
		 * with the copy judged (the session's namespace holds abstract names) */
		rc = connect_for(sock, &sa, (socklen_t)len, listener, n->id);
	}
out:
	if (sock >= 0)
		close(sock);
	if (pidfd >= 0)
		close(pidfd);
	resp->error = rc;
	return note->rule[0] != '\0';
}
