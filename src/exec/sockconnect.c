/*
 * sockconnect.c - connect(2) of a command's UNIX socket, made by the exec
 * supervisor (see sockconnect.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <unistd.h>

#include "exec/execfile.h"
#include "exec/sockconnect.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL		/* pidfd_open(2): a thread, not its group */
#endif

static int
valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * A blocking connect stops the supervisor for the command until it is
 * through, and the socket's flags and timeouts are the process's to
 * change at any moment (another thread of it clears O_NONBLOCK between a
 * check and the call).  So each connect is bounded by a timer of the
 * supervisor's own thread, whose signal interrupts it: a UNIX listener
 * whose queue stays full for CONNECT_WAIT_MS gets EAGAIN, as a
 * non-blocking connect would; a TCP handshake that is not through by
 * then is waited for by poll, HANDSHAKE_WAIT_MS at most.
 */
#define CONNECT_WAIT_MS		1000
#define HANDSHAKE_WAIT_MS	30000
#define POLL_MS			10

static int wake_signal;

static void
woken(int sig)
{
	(void)sig;
}

static void
wake_install(void)
{
	struct sigaction sa;

	wake_signal = SIGRTMIN + 6;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = woken;		/* no SA_RESTART: the connect ends with EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(wake_signal, &sa, NULL) < 0)
		wake_signal = 0;
}

/*
 * The supervisor thread's timer, made once when it starts: a timer's
 * signal is allocated when it is made, and queued signals are counted per
 * uid, so one made per connect could be refused once a command of the
 * account had queued its allowance (red team 32c-23).
 */
static __thread timer_t wake_timer;
static __thread int wake_ready;

int
ag_sockconnect_thread_start(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct sigevent ev;

	pthread_once(&once, wake_install);
	if (wake_signal == 0)
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = wake_signal;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, &wake_timer) < 0)
		return -1;
	wake_ready = 1;
	return 0;
}

void
ag_sockconnect_thread_end(void)
{
	if (wake_ready)
		timer_delete(wake_timer);
	wake_ready = 0;
}

/* connect(2) on the process's socket, bounded as above.  0 or -errno. */
static int
connect_for(int sock, const void *sa, socklen_t len, int listener, uint64_t id)
{
	struct itimerspec it;
	sigset_t one;
	int rc, dom = 0, fl, tries;
	socklen_t dl = sizeof(dom);

	if (!wake_ready)
		return -EAGAIN;		/* no bound: no connect */
	sigemptyset(&one);
	sigaddset(&one, wake_signal);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = CONNECT_WAIT_MS / 1000;
	it.it_value.tv_nsec = (CONNECT_WAIT_MS % 1000) * 1000000L;
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	if (timer_settime(wake_timer, 0, &it, NULL) < 0)
		rc = -EAGAIN;
	else
		rc = connect(sock, sa, len) < 0 ? -errno : 0;
	memset(&it, 0, sizeof(it));
	(void)timer_settime(wake_timer, 0, &it, NULL);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	if (rc != -EINTR && rc != -EINPROGRESS)
		return rc;
	(void)getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &dom, &dl);
	if (rc == -EINTR && dom == AF_UNIX)
		return -EAGAIN;
	/* a TCP handshake under way: a non-blocking socket's caller waits
	 * for it itself; a blocking one's, the supervisor */
	if ((fl = fcntl(sock, F_GETFL)) >= 0 && (fl & O_NONBLOCK) && rc == -EINPROGRESS)
		return rc;
	{
		struct pollfd pf = { .fd = sock, .events = POLLOUT };
		socklen_t el = sizeof(int);
		int e = ETIMEDOUT;

		for (tries = 0; tries < HANDSHAKE_WAIT_MS / POLL_MS && valid(listener, id); tries++)
			if (poll(&pf, 1, POLL_MS) > 0) {
				if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
					e = errno;
				break;
			}
		return -e;
	}
}

/*
 * The socket behind descriptor fd of thread tid: from the thread's own
 * descriptor table (a thread may have unshared it: its fd 5 is not its
 * group leader's).  A socket, or -errno.
 */
static int
take_socket(int listener, const struct seccomp_notif *n, int fd)
{
	char line[256], path[64];
	struct stat a, b;
	pid_t tgid = 0;
	int pidfd, sock;
	FILE *f;

	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)n->pid, PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL) {
		/* before Linux 6.9: the group's pidfd, and the socket checked
		 * against the thread's own table below */
		snprintf(path, sizeof(path), "/proc/%ld/status", (long)n->pid);
		if ((f = fopen(path, "re")) != NULL) {
			while (fgets(line, sizeof(line), f) != NULL)
				if (sscanf(line, "Tgid: %d", &tgid) == 1)
					break;
			fclose(f);
		}
		pidfd = tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
	}
	/* the pid is the stopped thread's only while the notification is */
	if (pidfd < 0 || !valid(listener, n->id)) {
		if (pidfd >= 0)
			close(pidfd);
		return -ECONNREFUSED;
	}
	sock = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	if (sock < 0)
		return -errno;	/* EBADF, as the kernel */
	if (tgid > 0) {
		snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)n->pid, fd);
		if (stat(path, &a) < 0 || fstat(sock, &b) < 0 || a.st_dev != b.st_dev ||
		    a.st_ino != b.st_ino) {
			close(sock);
			return -EBADF;
		}
	}
	return sock;
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
		if (fstat(fd, &o) < 0)
			ok = 0;
		else if (S_ISSOCK(o.st_mode))
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
    int room, int sock, const char *name, struct ag_conn_note *note)
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
	if (verdict == 2 && !room) {
		/* a connection to a host daemon is recorded, or not made */
		snprintf(note->reason, sizeof(note->reason), "the UNIX socket '%s' is named in "
		    "network.unix, but this command made more connections than its audit "
		    "record lists; run it in a line of its own", name);
		snprintf(note->rule, sizeof(note->rule), "network.unix");
		rc = -EACCES;
		goto out;
	}
	memset(&via, 0, sizeof(via));
	via.sun_family = AF_UNIX;
	snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", fd);
	rc = connect_for(sock, &via, sizeof(via), listener, n->id);
	if (verdict == 2) {
		note->allowed = 1;
		snprintf(note->reason, sizeof(note->reason), "named in network.unix");
		snprintf(note->rule, sizeof(note->rule), "network.unix");
		if (rc < 0)
			snprintf(note->error, sizeof(note->error), "%s", strerror(-rc));
	}
out:
	if (fd >= 0)
		close(fd);
	(void)setfsgid(was);
	return rc;
}

/*
 * An IPv4 or IPv6 address outside the session's namespace (not its
 * loopback): the attempt fails there, and is noted so the agent hears why
 * (a client that ignores HTTPS_PROXY).  1 when noted.
 */
static int
direct(const struct sockaddr_storage *ss, socklen_t len, int type, struct ag_conn_note *note)
{
	char a[INET6_ADDRSTRLEN] = "";
	unsigned port;

	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *v4 = (const void *)ss;

		if ((ntohl(v4->sin_addr.s_addr) >> 24) == 127)
			return 0;
		inet_ntop(AF_INET, &v4->sin_addr, a, sizeof(a));
		port = ntohs(v4->sin_port);
		snprintf(note->path, sizeof(note->path), "%s:%u", a, port);
	} else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *v6 = (const void *)ss;

		if (IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) || (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr) &&
		    v6->sin6_addr.s6_addr[12] == 127))
			return 0;
		inet_ntop(AF_INET6, &v6->sin6_addr, a, sizeof(a));
		port = ntohs(v6->sin6_port);
		snprintf(note->path, sizeof(note->path), "[%s]:%u", a, port);
	} else
		return 0;
	snprintf(note->proto, sizeof(note->proto), "%s", type == SOCK_DGRAM ? "udp" : "tcp");
	snprintf(note->reason, sizeof(note->reason), "a direct connection to %s: the session's "
	    "network has only its loopback, and the way out is the egress proxy "
	    "(HTTPS_PROXY, HTTP_PROXY, ALL_PROXY)", note->path);
	snprintf(note->rule, sizeof(note->rule), "network.proxy");
	return 1;
}

int
ag_sockconnect_answer(int listener, const struct seccomp_notif *n,
    const struct ag_unix_rules *r, int room, struct seccomp_notif_resp *resp,
    struct ag_conn_note *note)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);
	int len = (int)n->data.args[2], dom = 0, sock, rc;
	socklen_t dl = sizeof(dom);
	struct sockaddr_storage ss;
	struct sockaddr_un *sa = (struct sockaddr_un *)&ss;
	struct iovec l, rv;

	memset(note, 0, sizeof(*note));
	resp->id = n->id;
	resp->val = 0;
	resp->flags = 0;
	if ((sock = rc = take_socket(listener, n, (int)n->data.args[0])) < 0)
		goto out;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0) {
		rc = -errno;	/* ENOTSOCK */
		goto out;
	}
	/* the address, once: what is judged is what is connected */
	if (len < 0 || (size_t)len > sizeof(ss)) {
		rc = -EINVAL;
		goto out;
	}
	memset(&ss, 0, sizeof(ss));
	l.iov_base = &ss;
	l.iov_len = (size_t)len;
	rv.iov_base = (void *)(uintptr_t)n->data.args[1];
	rv.iov_len = (size_t)len;
	if (len > 0 && process_vm_readv((pid_t)n->pid, &l, 1, &rv, 1, 0) != (ssize_t)len) {
		rc = -EFAULT;
		goto out;
	}
	switch (dom) {
	case AF_INET:
	case AF_INET6: {
		int type = 0;
		socklen_t tl = sizeof(type);

		/* the session's namespace holds them: its loopback, the proxy */
		rc = connect_for(sock, &ss, (socklen_t)len, listener, n->id);
		(void)getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl);
		if (rc != 0 && rc != -EINPROGRESS)
			(void)direct(&ss, (socklen_t)len, type, note);
		break;
	}
	case AF_NETLINK: {
		struct sockaddr_nl *nl = (struct sockaddr_nl *)&ss;

		/* another socket's port id or groups need CAP_NET_ADMIN over the
		 * namespace, which the gateway has and the command has not */
		if ((size_t)len >= sizeof(*nl) && nl->nl_family == AF_NETLINK &&
		    (nl->nl_groups != 0 || nl->nl_pid != 0))
			rc = -EPERM;
		else
			rc = connect_for(sock, &ss, (socklen_t)len, listener, n->id);
		break;
	}
	case AF_UNIX:
		if (sa->sun_family == AF_UNIX && (size_t)len > off && (size_t)len <= sizeof(*sa) &&
		    sa->sun_path[0] != '\0') {
			char name[sizeof(sa->sun_path) + 1];

			memcpy(name, sa->sun_path, (size_t)len - off);
			name[(size_t)len - off] = '\0';
			snprintf(note->proto, sizeof(note->proto), "unix");
			snprintf(note->path, sizeof(note->path), "%s", name);
			rc = connect_path(listener, n, r, room, sock, name, note);
		} else if (sa->sun_family == AF_UNIX && (size_t)len > off &&
		    (size_t)len <= sizeof(*sa) && (r == NULL || !r->abstract)) {
			/* no namespace of its own: the host's abstract names */
			snprintf(note->proto, sizeof(note->proto), "unix");
			snprintf(note->path, sizeof(note->path), "@%.*s",
			    (int)((size_t)len - off - 1), sa->sun_path + 1);
			snprintf(note->reason, sizeof(note->reason), "an abstract UNIX socket, and "
			    "the session has no network namespace of its own to hold those");
			snprintf(note->rule, sizeof(note->rule), "network.unix");
			rc = -EACCES;
		} else {
			/* abstract, unnamed, or malformed: the kernel's answer to
			 * the copy (the session's namespace holds abstract names) */
			rc = connect_for(sock, &ss, (socklen_t)len, listener, n->id);
		}
		break;
	default:
		rc = -EACCES;	/* no other family can be made in the session */
		break;
	}
out:
	if (sock >= 0)
		close(sock);
	resp->error = rc;
	return note->rule[0] != '\0';
}

int
ag_sockconnect_available(void)
{
	/* a bad pidfd is EBADF where the call exists */
	return syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == EBADF;
}
