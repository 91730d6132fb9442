/*
 * namespace.c - the session's namespaces (see sandbox.h, doc/sandbox.md):
 * a user and mount namespace whose mounts make what the kernel sandbox
 * promises about files hold for every program, and a PID namespace that
 * holds every process a command starts, so that nothing outlives its
 * command line, nor the gateway.
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "common/log.h"
#include "common/utf8.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "exec/sandbox_int.h"
#include "exec/zygote.h"
#include "policy/pathutil.h"
#include "policy/policy.h"

/* ---- the session's mount namespace ---------------------------------------- */

/*
 * The loader maps any file it can read, and the command can write files
 * beneath paths.write.  So each command runs in a user and mount namespace
 * (one per prepared sandbox) where every write root is remounted noexec:
 * `ld.so ./written-elf` then fails at mmap(PROT_EXEC).  In the developer
 * tier the same namespace gives paths.exec back its exec right, puts a
 * private tmpfs on /tmp, and binds the protected paths beneath the write
 * roots (git config and hooks of every repository, startup files) read-only,
 * so no program of the tree can change them: Landlock cannot subtract a
 * file from a writable directory, a read-only mount can.  The child joins
 * the namespace before entering Landlock; afterwards Landlock forbids any
 * mount change, and exec leaves a non-root user no capability in it.
 */

/* MS_* flags for a remount of path: what must be kept (a user namespace may
 * not clear "locked" flags) plus set; 0 when path cannot be looked at. */
static unsigned long
flags_of(const struct statvfs *st, unsigned long set)
{
	const struct statvfs sv = *st;
	unsigned long f = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | set;

	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static unsigned long
remount_flags(const char *path, unsigned long set)
{
	struct statvfs sv;

	return statvfs(path, &sv) < 0 ? 0 : flags_of(&sv, set);
}

static int
ops_add(struct ag_sandbox *sb, enum nsop_kind kind, const char *path, unsigned long flags)
{
	if (sb->nops == sb->capops) {
		size_t nc = sb->capops ? sb->capops * 2 : 16;
		struct nsop *n = realloc(sb->ops, nc * sizeof(*n));

		if (n == NULL)
			return -1;
		sb->ops = n;
		sb->capops = nc;
	}
	if ((sb->ops[sb->nops].path = strdup(path)) == NULL)
		return -1;
	sb->ops[sb->nops].kind = kind;
	sb->ops[sb->nops].flags = flags;
	sb->ops[sb->nops].size = 0;
	sb->ops[sb->nops].dev = 0;
	sb->ops[sb->nops].ino = 0;
	sb->ops[sb->nops].part = 0;
	sb->nops++;
	return 0;
}

/* The same, for a part the scan checked (st): bound only if it is still
 * that inode when the mount is made (bind_checked). */
static int
ops_add_checked(struct ag_sandbox *sb, enum nsop_kind kind, const char *path,
    unsigned long flags, const struct stat *st)
{
	if (ops_add(sb, kind, path, flags) < 0)
		return -1;
	sb->ops[sb->nops - 1].dev = st->st_dev;
	sb->ops[sb->nops - 1].ino = st->st_ino;
	sb->ops[sb->nops - 1].part = 1;
	return 0;
}

/* pre followed by v in decimal, into buf (at least 64 bytes), without stdio:
 * ns_apply's callers fork. */
static const char *
str_num(char buf[64], const char *pre, unsigned long long v)
{
	char digits[24];
	size_t n = 0, i, pl = strlen(pre);

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0 && n < sizeof(digits));
	memcpy(buf, pre, pl);
	for (i = 0; i < n; i++)
		buf[pl + i] = digits[n - 1 - i];
	buf[pl + n] = '\0';
	return buf;
}

/* mkdir every directory above path (beneath /run), as a mount point's. */
static void
make_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return;
	memcpy(buf, path, n + 1);
	for (i = strlen("/run/"); i < n; i++)
		if (buf[i] == '/') {
			buf[i] = '\0';
			(void)mkdir(buf, 0755);
			buf[i] = '/';
		}
}

/*
 * ops[at] is NSOP_RUN, followed by its NSOP_KEEP paths: open each while
 * /run is still the host's, cover /run with an empty tmpfs, bind each back
 * from its fd onto a mount point made for it, and make the tmpfs read-only.
 * Returns the index of the last op handled, or -1.
 */
static ssize_t
hide_run(const struct ag_sandbox *sb, size_t at, size_t to)
{
	int fds[MAX_RUN_KEEP];
	char src[64];
	size_t j, n = 0;
	struct stat st;
	ssize_t rc = -1;

	for (j = at + 1; j < to && sb->ops[j].kind == NSOP_KEEP && n < MAX_RUN_KEEP; j++)
		fds[n++] = open(sb->ops[j].path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0755,size=1m") < 0)
		goto out;
	for (j = 0; j < n; j++) {
		const struct nsop *o = &sb->ops[at + 1 + j];
		int t;

		/* gone since it was planned, or a link swapped in: not bound */
		if (fds[j] < 0 || fstat(fds[j], &st) < 0 || S_ISLNK(st.st_mode))
			continue;
		make_parents(o->path);
		if (S_ISDIR(st.st_mode))
			(void)mkdir(o->path, 0755);
		else if ((t = open(o->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0644)) >= 0)
			close(t);
		if (mount(str_num(src, "/proc/self/fd/", (unsigned)fds[j]), o->path, NULL, MS_BIND | MS_REC, NULL) < 0 ||
		    (o->flags != 0 && mount(NULL, o->path, NULL, o->flags, NULL) < 0))
			goto out;
	}
	if (mount(NULL, "/run", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	    "mode=0755,size=1m") < 0)
		goto out;
	rc = (ssize_t)(at + n);
out:
	for (j = 0; j < n; j++)
		if (fds[j] >= 0)
			close(fds[j]);
	return rc;
}

/* path (O_PATH), no link followed anywhere in it: a link at its end is
 * opened as itself. */
int
sb_open_nolinks(const char *path)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/*
 * A part the scan checked (o->dev, o->ino), bound by what was checked:
 * between the scan's lstat and this mount, a command of another
 * connection can swap the part (or a directory above it) for a link, and
 * mount(2) by path would bind the link's target and leave the link the
 * agent's.  So the path is opened with no link followed anywhere in it
 * (openat2), its inode compared, and the mount made from that fd
 * (open_tree, mount_setattr, move_mount onto the same fd): nothing is
 * looked up by path after the comparison.  0, -1 failed, -2 not what was
 * checked (gone, a link, another inode).
 */
static int
bind_checked(const struct nsop *o)
{
	struct mount_attr attr;
	struct stat st;
	int fd, tree, rc = -1;

	if ((fd = sb_open_nolinks(o->path)) < 0)
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? -2 : -1;
	if (fstat(fd, &st) < 0)
		goto out;
	if (st.st_dev != o->dev || st.st_ino != o->ino || S_ISLNK(st.st_mode)) {
		rc = -2;
		goto out;
	}
	if ((tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
	    AT_RECURSIVE)) < 0)
		goto out;
	memset(&attr, 0, sizeof(attr));
	if (o->kind != NSOP_PIN)
		attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		    ((o->flags & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0) |
		    ((o->flags & MS_NOEXEC) ? MOUNT_ATTR_NOEXEC : 0);
	if ((attr.attr_set == 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
	    &attr, sizeof(attr)) == 0) &&
	    move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		rc = 0;
	close(tree);
out:
	close(fd);
	return rc;
}

/*
 * Apply ops[from .. to) in the current (namespace-owning) process.  A path
 * the profile names that vanished since it was listed is skipped; a part
 * the scan checked that is not what was checked is -2; any other failure
 * fails the whole namespace (-1), since what it promises would not hold.
 * Async-signal-safe: runs in forked children.
 */
static int
ns_apply(const struct ag_sandbox *sb, size_t from, size_t to)
{
	char opts[128];
	size_t i;

	for (i = from; i < to; i++) {
		const struct nsop *o = &sb->ops[i];
		ssize_t last;
		int rc;

		switch (o->kind) {
		case NSOP_RUN:
			if ((last = hide_run(sb, i, to)) < 0)
				return -1;
			i = (size_t)last;
			continue;
		case NSOP_KEEP:
			continue;	/* hide_run's */
		case NSOP_GONE:
			continue;
		case NSOP_TMPFS: {
			/* files as well as bytes: an empty file costs kernel
			 * memory that size= does not count (red team 32c-23);
			 * one per 4 KiB of the size, at least 16384 */
			unsigned long long sz = o->size > 0 ? (unsigned long long)o->size : 1ULL << 20;
			unsigned long long ni = sz / 4096 > 16384 ? sz / 4096 : 16384;
			char ino[64];
			size_t k;

			str_num(opts, "mode=0700,size=", sz);
			str_num(ino, ",nr_inodes=", ni);
			k = strlen(opts);
			memcpy(opts + k, ino, strlen(ino) + 1);
			rc = mount("tmpfs", o->path, "tmpfs", o->flags, opts);
			break;
		}
		case NSOP_RDONLY:
			rc = mount(NULL, o->path, NULL, o->flags, NULL);
			break;
		case NSOP_PIN:
			/* recursive: a pointer can have protected something
			 * inside this directory before it came to be pinned */
			if (o->ino != 0) {
				if ((rc = bind_checked(o)) < 0)
					return rc;
				continue;
			}
			rc = mount(o->path, o->path, NULL, MS_BIND | MS_REC, NULL);
			break;
		case NSOP_BIND_CWD:
			/* the directory the keeper entered by fd before the
			 * namespace was made (ns_keeper); no path to it is
			 * looked up, and a failure is never skipped */
			if (mount(".", o->path, NULL, MS_BIND, NULL) < 0 ||
			    mount(NULL, o->path, NULL, o->flags, NULL) < 0 || chdir("/") < 0)
				return -1;
			continue;
		default:
			if (o->ino != 0) {
				if ((rc = bind_checked(o)) < 0)
					return rc;
				continue;
			}
			rc = mount(o->path, o->path, NULL, MS_BIND | MS_REC, NULL);
			if (rc == 0)
				rc = mount(NULL, o->path, NULL, o->flags, NULL);
			break;
		}
		if (rc < 0 && errno != ENOENT)
			return -1;
	}
	return 0;
}

static int
write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, buf, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

/* Async-signal-safe decimal "A A 1\n" for the id maps. */
static size_t
id_map_line(char *out, size_t outsz, unsigned long id)
{
	char num[24];
	size_t n = 0, len = 0, i;

	do {
		num[n++] = (char)('0' + id % 10);
		id /= 10;
	} while (id > 0 && n < sizeof(num));
	if (2 * n + 4 > outsz)
		return 0;
	for (i = 0; i < n; i++)
		out[len++] = num[n - 1 - i];
	out[len++] = ' ';
	for (i = 0; i < n; i++)
		out[len++] = num[n - 1 - i];
	memcpy(out + len, " 1\n", 3);
	return len + 3;
}

/*
 * The init of the session's PID namespace.  Every command's tree runs in
 * that namespace, so whatever a command leaves running (a background job,
 * a double-forked daemon) is reparented here, not to the gateway; the
 * gateway asks for a sweep after each command ('K': everything but init
 * is killed, answered 'k').  When the gateway closes its end, or dies, init
 * exits and the kernel kills every process left in the namespace.  Init
 * mounts the namespace's own /proc first, so a command sees its own
 * processes and only those.
 */
static void __attribute__((noreturn))
ns_init(int ctl, int alive, int readyfd)
{
	struct pollfd pf = { .fd = alive, .events = POLLIN };
	char c = 'n';
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&pf, 1, 0) != 0)
		_exit(1);	/* the keeper is already gone */
	(void)prctl(PR_SET_NAME, "agentgate-ns", 0, 0, 0);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
		c = 'r';
	/* a copy of the gateway's memory: not for the commands to read */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (write(readyfd, &c, 1) != 1)
		_exit(2);
	ag_close_range(0, (unsigned)ctl - 1);
	ag_close_range((unsigned)ctl + 1, ~0U);
	for (;;) {
		ssize_t n = read(ctl, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			_exit(0);	/* the gateway let go: the namespace ends with us */
		if (c != 'K')
			continue;
		/* kill(-1) from init reaches every other process of the namespace;
		 * until none is left, reap what was reparented here */
		for (i = 0; i < 100000; i++) {
			/* kill's errno, before waitpid sets its own (ECHILD): with
			 * waitpid's, "none left" was never seen and every sweep
			 * spun all its rounds, half a second per command */
			int r = kill(-1, SIGKILL), e = errno;

			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			if (r < 0 && e == ESRCH)
				break;
			if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
				sched_yield();	/* dying, but not ours to reap yet */
		}
		if (write(ctl, "k", 1) != 1)
			_exit(0);
	}
}

/* What ns_keeper's exit status N says went wrong. */
static const char *const keeper_steps[] = {
	"?", "unshare failed: no user namespace for this account here",
	"writing uid_map failed", "writing setgroups or gid_map failed",
	"making mounts private failed", "a planned mount failed",
	"forking the namespace's init failed", "init did not start",
	"the network namespace's loopback or the egress listener failed",
	"starting the keeper's own image failed",
	("a part of a git repository beneath the write roots changed (a link or another "
	"file put in its place) between the gateway's check and its read-only mount"),
};
#define KEEPER_CHANGED	10	/* that last one: refused in every sandbox mode */

/* The namespace's loopback up: its own 127.0.0.1 and ::1, nothing else. */
static int
loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return rc;
}

/*
 * The egress proxy's listeners, made here, inside the network namespace,
 * and handed to the gateway: a socket stays in the namespace it was made
 * in, so the proxy (egress/) accepts the session's connections from
 * outside it.  IPv6 only where the namespace has ::1.
 */
static int
egress_listeners(int *fds)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(AG_EGRESS_PORT),
	    .sin_addr = { htonl(INADDR_LOOPBACK) } };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(AG_EGRESS_PORT),
	    .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int one = 1, n = 0;

	if ((fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fds[0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fds[0], (struct sockaddr *)&a4, sizeof(a4)) < 0 || listen(fds[0], 128) < 0)
		return -1;
	n = 1;
	if ((fds[1] = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		if (setsockopt(fds[1], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == 0 &&
		    bind(fds[1], (struct sockaddr *)&a6, sizeof(a6)) == 0 &&
		    listen(fds[1], 128) == 0)
			n = 2;
		else {
			close(fds[1]);
			fds[1] = -1;
		}
	}
	return n;
}

/* n fds over a socket, with one byte of data. */
static int
send_fds(int sock, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	char c = 'L';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int
recv_fds(int sock, int *fds, int max)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int n = 0;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1 || c != 'L')
		return -1;
	for (cm = CMSG_FIRSTHDR(&m); cm != NULL; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (n > max)
				n = max;
			memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)n);
		}
	return n;
}

/*
 * Runs in a child the gateway keeps for the session: makes the user, mount
 * and PID namespaces (and a network namespace with no interfaces for a
 * profile without network), applies the planned mounts, starts the PID
 * namespace's init and then only waits for it.  It stays outside the PID
 * namespace, where no command can see it, so that the gateway can open its
 * /proc/PID/ns/{user,mnt,pid_for_children} and root/; both it and init die
 * with the gateway (PR_SET_PDEATHSIG).
 */
static void __attribute__((noreturn))
ns_keeper(const struct ag_sandbox *sb, int readyfd, int ctl, pid_t gateway)
{
	char line[64];
	size_t n;
	uid_t uid;
	gid_t gid;
	int alive[2], initready[2], lfd[2] = { -1, -1 }, nl = 0;
	pid_t init;
	char c;

	/*
	 * The gateway is not dumpable (front/forcecommand.c), which would leave
	 * this helper's /proc/self/{uid_map,ns} to root.  Dumpable, the agent's
	 * uid can reach what we hold: so this is a fresh image (keeper_exec),
	 * with nothing of the gateway's (its group, its memory, the audit log
	 * and every other fd but ours), and the maps below are for the
	 * caller's own gid.
	 */
	int keep[3] = { readyfd, ctl, sb->ptmp_fd };

	if (ag_privsep_child() < 0)
		_exit(1);
	ag_privsep_close_others(keep, sb->ptmp_fd >= 0 ? 3 : 2);
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	/* before unshare: inside, until the maps exist, we are the overflow id */
	uid = geteuid();
	gid = getegid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != gateway)
		_exit(1);
	(void)prctl(PR_SET_NAME, "agentgate-ns", 0, 0, 0);
	/*
	 * The identity's persistent tmp, entered by the fd the gateway opened
	 * with its group: its parent is not ours to pass through, and a mount
	 * needs a place in the new namespace.  unshare() moves the working
	 * directory into the namespace's copy of its mount, where
	 * NSOP_BIND_CWD binds it.
	 */
	if (sb->ptmp_fd >= 0 && (fchdir(sb->ptmp_fd) < 0 || close(sb->ptmp_fd) < 0))
		_exit(5);
	/* IPC too: System V shared memory and message queues made in a
	 * session are the session's, gone with it, and the host's (the
	 * account's own segments) are not there (red team 21, H5) */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
	    (sb->private_net ? CLONE_NEWNET : 0)) < 0)
		_exit(1);
	if ((n = id_map_line(line, sizeof(line), uid)) == 0 ||
	    write_file("/proc/self/uid_map", line, n) < 0)
		_exit(2);
	if (write_file("/proc/self/setgroups", "deny", 4) < 0 ||
	    (n = id_map_line(line, sizeof(line), gid)) == 0 ||
	    write_file("/proc/self/gid_map", line, n) < 0)
		_exit(3);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(4);
	if (sb->private_net && loopback_up() < 0)
		_exit(8);
	if (sb->egress && (nl = egress_listeners(lfd)) < 0)
		_exit(8);
	switch (ns_apply(sb, 0, sb->nops)) {
	case 0:
		break;
	case -2:
		_exit(KEEPER_CHANGED);
	default:
		_exit(5);
	}
	if (pipe2(alive, O_CLOEXEC) < 0 || pipe2(initready, O_CLOEXEC) < 0 ||
	    (init = fork()) < 0)
		_exit(6);
	if (init == 0) {
		close(alive[1]);
		close(initready[0]);
		close(readyfd);
		if (lfd[0] >= 0)
			close(lfd[0]);
		if (lfd[1] >= 0)
			close(lfd[1]);
		ns_init(ctl, alive[0], initready[1]);
	}
	close(alive[0]);
	close(initready[1]);
	close(ctl);
	/* init's pid as the gateway sees it, then init's byte, in that order:
	 * both written here (from two processes they could interleave) */
	if (write(readyfd, &init, sizeof(init)) != (ssize_t)sizeof(init) ||
	    read(initready[0], &c, 1) != 1 || write(readyfd, &c, 1) != 1)
		_exit(7);
	if (nl > 0 && send_fds(readyfd, lfd, nl) < 0)
		_exit(8);
	if (lfd[0] >= 0)
		close(lfd[0]);
	if (lfd[1] >= 0)
		close(lfd[1]);
	close(initready[0]);
	close(readyfd);
	ag_close_range(0, (unsigned)alive[1] - 1);
	ag_close_range((unsigned)alive[1] + 1, ~0U);
	while (waitpid(init, NULL, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * The keeper is dumpable (above), so it must hold nothing of the gateway's:
 * not a forked copy of its memory (the parsed policy with every identity's
 * token hash, freed buffers of the policy file), which the account's other
 * processes could read.  The forked child gives up the group and execs the
 * gateway's own image afresh, as "agentgate-ns", with no_new_privs (so the
 * set-group-ID bit gives nothing back) and an empty environment; the plan
 * of mounts comes over a memfd.  keeper_entry() runs it before main().
 */
#define KEEPER_NAME	"agentgate-ns"
#define KEEPER_FLAG	"--ns-keeper"
enum { KFD_READY = 3, KFD_CTL, KFD_PLAN, KFD_PTMP };

struct plan_head {
	uint32_t	magic, nops;
	int32_t		private_net, egress, ptmp;
};
struct plan_op {
	int32_t		kind;
	uint32_t	len;		/* of the path that follows, no NUL */
	uint64_t	flags;
	int64_t		size;
};
#define PLAN_MAGIC	0x61676e73u	/* "agns" */

/* The keeper's part of sb, in a memfd at offset 0; the fd, or -1. */
static int
plan_write(const struct ag_sandbox *sb)
{
	struct plan_head h = { PLAN_MAGIC, (uint32_t)sb->nops, sb->private_net, sb->egress,
	    sb->ptmp_fd >= 0 };
	int fd = memfd_create("agentgate-ns-plan", MFD_CLOEXEC);
	size_t i;

	if (fd < 0)
		return -1;
	if (ag_write_all(fd, &h, sizeof(h), NULL) < 0)
		goto fail;
	for (i = 0; i < sb->nops; i++) {
		const struct nsop *o = &sb->ops[i];
		struct plan_op po = { (int32_t)o->kind, (uint32_t)strlen(o->path),
		    (uint64_t)o->flags, (int64_t)o->size };

		if (ag_write_all(fd, &po, sizeof(po), NULL) < 0 ||
		    ag_write_all(fd, o->path, po.len, NULL) < 0)
			goto fail;
	}
	if (lseek(fd, 0, SEEK_SET) == 0)
		return fd;
fail:
	close(fd);
	return -1;
}

/* fd onto to, whatever numbers they have (to is closed first if open) */
static int
move_fd(int fd, int to)
{
	return fd == to ? (fcntl(fd, F_SETFD, 0) < 0 ? -1 : 0) :
	    (dup2(fd, to) < 0 ? -1 : 0);
}

/* In the forked child: never returns. */
static void __attribute__((noreturn))
keeper_exec(int readyfd, int ctl, int plan, int ptmp, pid_t gateway)
{
	static char name[] = KEEPER_NAME, flag[] = KEEPER_FLAG;
	char num[64];
	char *const argv[] = { name, flag, num, NULL };
	char *const envp[] = { NULL };
	int src[4] = { readyfd, ctl, plan, ptmp }, i;

	(void)str_num(num, "", (unsigned long long)gateway);

	if (ag_privsep_child() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(9);
	/* above every target first, so that no move overwrites a source */
	for (i = 0; i < 4; i++)
		if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, KFD_PTMP + 1)) < 0)
			_exit(9);
	for (i = 0; i < 4; i++)
		if (src[i] >= 0 && move_fd(src[i], KFD_READY + i) < 0)
			_exit(9);
	ag_close_range(KFD_PTMP + 1, ~0U);
	execve("/proc/self/exe", argv, envp);
	_exit(9);
}

/*
 * Before main(), in every program of the tree (the gateway, and the unit
 * tests that make namespaces): when started by keeper_exec, be the keeper.
 * Run by hand under that name it is only the caller's own: the group is
 * given up first, and what it does the caller may do anyway.
 */
static void __attribute__((constructor))
keeper_entry(int argc, char **argv, char **envp)
{
	struct ag_sandbox *sb;
	struct plan_head h;
	gid_t g = getgid(), r, e, s;
	uint32_t i;

	(void)envp;
	if (argc != 3 || strcmp(argv[0], KEEPER_NAME) != 0 || strcmp(argv[1], KEEPER_FLAG) != 0)
		return;
	if (setresgid(g, g, g) < 0 || getresgid(&r, &e, &s) < 0 || e != g || s != g)
		_exit(9);
	if (ag_read_all(KFD_PLAN, &h, sizeof(h)) < 0 || h.magic != PLAN_MAGIC ||
	    h.nops > 1U << 20 || (sb = calloc(1, sizeof(*sb))) == NULL ||
	    (sb->ops = calloc(h.nops + 1, sizeof(*sb->ops))) == NULL)
		_exit(9);
	for (i = 0; i < h.nops; i++) {
		struct plan_op po;
		struct nsop *o = &sb->ops[i];

		if (ag_read_all(KFD_PLAN, &po, sizeof(po)) < 0 || po.len >= PATH_MAX ||
		    (o->path = calloc(1, po.len + 1)) == NULL ||
		    ag_read_all(KFD_PLAN, o->path, po.len) < 0)
			_exit(9);
		o->kind = (enum nsop_kind)po.kind;
		o->flags = (unsigned long)po.flags;
		o->size = (long long)po.size;
	}
	close(KFD_PLAN);
	sb->nops = h.nops;
	sb->private_net = h.private_net;
	sb->egress = h.egress;
	sb->ptmp_fd = h.ptmp ? KFD_PTMP : -1;
	ns_keeper(sb, KFD_READY, KFD_CTL, (pid_t)strtol(argv[2], NULL, 10));
}

static int
open_ns(pid_t pid, const char *what, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, what);
	return open(path, flags | O_CLOEXEC);
}

/*
 * Make the session's namespaces (see ns_keeper) and keep them as fds; each
 * command's child joins them with setns(), which costs far less than
 * creating them per command.  The owner of a user namespace holds every
 * capability in it, so joining needs no privilege.  0 ok, -1 when user
 * namespaces are not available here.
 */
static int
make_ns(struct ag_sandbox *sb)
{
	int ready[2], ctl[2], rc = -1, plan;
	pid_t pid, init = 0, me = getpid();
	char c = 0;

	/* a socket, not a pipe: the egress listeners come back over it */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if ((plan = plan_write(sb)) < 0) {
		close(ready[0]);
		close(ready[1]);
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	if ((pid = fork()) == 0)
		keeper_exec(ready[1], ctl[1], plan, sb->ptmp_fd, me);
	close(plan);
	close(ready[1]);
	close(ctl[1]);
	if (pid > 0 && read(ready[0], &init, sizeof(init)) == (ssize_t)sizeof(init) && init > 0 &&
	    read(ready[0], &c, 1) == 1) {
		sb->keeper = pid;
		sb->ctl_fd = ctl[0];
		sb->ns_user_fd = open_ns(pid, "ns/user", O_RDONLY);
		sb->ns_mnt_fd = open_ns(pid, "ns/mnt", O_RDONLY);
		sb->ns_pid_fd = open_ns(pid, "ns/pid_for_children", O_RDONLY);
		sb->ns_ipc_fd = open_ns(pid, "ns/ipc", O_RDONLY);
		if (sb->private_net)
			sb->ns_net_fd = open_ns(pid, "ns/net", O_RDONLY);
		rc = sb->ns_user_fd >= 0 && sb->ns_mnt_fd >= 0 && sb->ns_pid_fd >= 0 &&
		    sb->ns_ipc_fd >= 0 && (!sb->private_net || sb->ns_net_fd >= 0) ? 0 : -1;
		/* the namespace's own /proc, seen through the keeper's root */
		if (rc == 0 && c == 'r' &&
		    (sb->proc_fd = open_ns(pid, "root/proc", O_PATH | O_DIRECTORY)) < 0)
			rc = -1;
		if (rc == 0 && sb->private_tmp &&
		    (sb->tmp_fd = open_ns(pid, "root/tmp", O_PATH | O_DIRECTORY)) < 0)
			rc = -1;
		if (rc == 0 && sb->shm_private &&
		    (sb->shm_fd = open_ns(pid, "root/dev/shm", O_PATH | O_DIRECTORY)) < 0)
			rc = -1;
		if (rc == 0 && sb->egress &&
		    (sb->negress = recv_fds(ready[0], sb->egress_fd, 2)) <= 0) {
			sb->negress = 0;
			rc = -1;
		}
	}
	close(ready[0]);
	if (rc < 0) {
		int st = 0, e = errno;

		if (sb->ctl_fd != ctl[0])
			close(ctl[0]);
		sb_ns_free(sb);
		if (pid > 0 && sb->keeper == 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
		}
		/* which step of ns_keeper failed, for the message */
		if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) > 0)
			sb->ns_step = WEXITSTATUS(st);
		errno = e;
	} else
		sb->nops_done = sb->nops;
	return rc;
}

void
sb_ns_free(struct ag_sandbox *sb)
{
	int *fds[] = { &sb->ns_user_fd, &sb->ns_mnt_fd, &sb->ns_pid_fd, &sb->ns_ipc_fd,
	    &sb->ns_net_fd, &sb->proc_fd,
	    &sb->tmp_fd, &sb->shm_fd, &sb->ctl_fd, &sb->egress_fd[0], &sb->egress_fd[1] };
	size_t i;

	/* init sees its control socket close and takes the namespace with it */
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	if (sb->keeper > 0) {
		kill(sb->keeper, SIGKILL);
		while (waitpid(sb->keeper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	sb->keeper = 0;
	sb->negress = 0;
}

/* Apply the operations added since the namespace was made, inside it:
 * 0, -1, or -2 when a part the scan checked changed before its bind. */
static int
ns_catch_up(struct ag_sandbox *sb)
{
	pid_t pid;
	int st;

	if (sb->nops_done == sb->nops)
		return 0;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		/* mounts need no /proc/self of ours: stays not dumpable */
		if (ag_privsep_child() < 0)
			_exit(1);
		if (setns(sb->ns_user_fd, CLONE_NEWUSER) < 0 ||
		    setns(sb->ns_mnt_fd, CLONE_NEWNS) < 0)
			_exit(1);
		switch (ns_apply(sb, sb->nops_done, sb->nops)) {
		case 0:
			_exit(0);
		case -2:
			_exit(3);
		default:
			_exit(2);
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		return -2;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = EPERM;
		return -1;
	}
	sb->nops_done = sb->nops;
	return 0;
}

/* ---- protected paths beneath the write roots (developer tier) ------------- */

static int
beneath_any(const struct plist *roots, const char *path)
{
	size_t i;

	for (i = 0; i < roots->n; i++)
		if (sb_path_within(path, roots->v[i]))
			return 1;
	return 0;
}

/*
 * A protected file with another name beneath a write root could be
 * changed through that name, past the read-only mount: a hard link made
 * before the file was protected (in the command that created the
 * repository).  Such a file is not protected but refused.
 */
static int
linked_elsewhere(const char *path, const struct stat *st)
{
	DIR *d;
	struct dirent *de;
	int bad = 0;

	if (S_ISREG(st->st_mode))
		return st->st_nlink > 1;
	if (!S_ISDIR(st->st_mode) || (d = opendir(path)) == NULL)
		return 0;
	while (!bad && (de = readdir(d)) != NULL) {
		struct stat cs;

		if (fstatat(dirfd(d), de->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(cs.st_mode) && cs.st_nlink > 1)
			bad = 1;
	}
	closedir(d);
	return bad;
}

/*
 * Bind path (the part of a git directory the scan just checked, st) read-only
 * if a write root holds it: that inode and no other (bind_checked).  0 ok,
 * -1 out of memory, -2 a protected file is hard-linked, or the part cannot
 * be looked at (sb->refusal says).
 */
static int unreadable(struct ag_sandbox *sb, const char *path, int e);

static int
protect_path(struct ag_sandbox *sb, const char *path, const struct stat *st)
{
	unsigned long f;

	if (!beneath_any(&sb->writes, path))
		return 0;
	if (linked_elsewhere(path, st)) {
		snprintf(sb->refusal, sizeof(sb->refusal), "kernel sandbox: '%s' is protected "
		    "but has another name (a hard link) through which it could still be "
		    "written; remove the other link: commands are refused until then", path);
		return -2;
	}
	if ((f = remount_flags(path, MS_RDONLY | MS_NOEXEC)) == 0)
		return unreadable(sb, path, errno);
	return ops_add_checked(sb, NSOP_REMOUNT, path, f, st);
}

/* A path the profile protects (a startup file, maybe a link into a
 * dotfiles checkout): where it leads now is bound, if it exists. */
static int
protect_named(struct ag_sandbox *sb, const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	size_t before;
	int rc;

	if (realpath(path, real) == NULL || lstat(real, &st) < 0 ||
	    !beneath_any(&sb->writes, real))
		return 0;
	before = sb->nops;
	if ((rc = protect_path(sb, real, &st)) == 0 && sb->nops > before)
		sb->ops[sb->nops - 1].part = 0;	/* not a repository's: ns_verify */
	return rc;
}

/*
 * A bound of the repository scan was reached at path: what lies past it may
 * hold a git directory the scan cannot protect, so the command is refused
 * (-2, sb->refusal says which bound and where) rather than run with the
 * protection silently incomplete.
 */
static int
scan_limit(struct ag_sandbox *sb, long limit, const char *what, const char *path)
{
	snprintf(sb->refusal, sizeof(sb->refusal), "refused: more than %ld %s %s: the git "
	    "protection cannot see past it; remove or move it out of paths.write (or narrow "
	    "paths.write): commands are refused until then", limit, what, path);
	return -2;
}

/*
 * A directory beneath a write root the scan cannot read (its mode, say,
 * 0311): git may still find a repository in it by name.  Refused like a
 * bound (-2), naming it, rather than scanned as if empty.
 */
static int
unreadable(struct ag_sandbox *sb, const char *path, int e)
{
	snprintf(sb->refusal, sizeof(sb->refusal), "refused: %s cannot be read by the "
	    "gateway (%s): the git protection cannot see past it; make it readable, or "
	    "remove it or move it out of paths.write: commands are refused until then",
	    path, strerror(e));
	return -2;
}

/*
 * The scan after a command found a git directory it had not seen: the
 * command made it, and could fill its hooks and config before they were
 * read-only.  What git would run from there is kept (sb->planted, and for
 * the account's next connections) and refuses commands until it is gone.
 */
/* gitdir was made at or after since (ns; 0: never): its birth time, or
 * where the file system keeps none, its ctime (later, so it errs on the
 * side of looking).  A second of slack for the file system's coarse clock. */
static int
born_since(const char *gitdir, long long since)
{
	struct statx sx;
	long long t;

	if (since == 0)
		return 0;
	if (statx(AT_FDCWD, gitdir, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &sx) < 0)
		return 1;
	t = (sx.stx_mask & STATX_BTIME) ? (long long)sx.stx_btime.tv_sec * 1000000000LL +
	    sx.stx_btime.tv_nsec : (long long)sx.stx_ctime.tv_sec * 1000000000LL +
	    sx.stx_ctime.tv_nsec;
	return t >= since - 1000000000LL;
}

static int seq_check(struct ag_sandbox *sb, const char *gitdir, long long since);

static int
check_planted(struct ag_sandbox *sb, const char *gitdir)
{
	char what[PATH_MAX + 128];

	if (!sb->check_new && !born_since(gitdir, sb->check_since))
		return 0;
	/* its rebase state, however old: a git directory moved here (its work
	 * tree renamed) brings what no look after a command saw in place */
	if (seq_check(sb, gitdir, 0) < 0)
		return -1;
	if (!sb_git_planted(gitdir, &sb->writes, what, sizeof(what)))
		return 0;
	/* git run outside the gateway must not run it meanwhile; what cannot
	 * be set aside is said to be so */
	if (sb_git_disarm(gitdir, &sb->writes) < 0)
		sb->planted_stuck = 1;
	if (sb->planted_now[0] == '\0')
		snprintf(sb->planted_now, sizeof(sb->planted_now), "%s", what);
	if (!sb_plist_has(&sb->planted, gitdir)) {
		if (sb_plist_add(&sb->planted, gitdir) < 0)
			return -1;
		sb_planted_save(sb);
	}
	return 0;
}

/*
 * Before a command: a git directory found planted (above) that still is
 * refuses it, naming what is there; one no longer planted (or gone) is
 * forgotten.  -2 with sb->refusal, 0, or -1 out of memory.
 */
#define WHAT_MAX	(PATH_MAX - 256)	/* of what, in a refusal */

/* What an entry of sb->planted still holds (what says), or 0: a git
 * directory's plant, or a pointer set aside (its NAME.planted path). */
static int
still_planted(const struct ag_sandbox *sb, const char *entry, char *what, size_t whatsz)
{
	struct stat st;
	size_t n = strlen(entry);

	if (n > 8 && strcmp(entry + n - 8, ".planted") == 0) {
		if (lstat(entry, &st) < 0)
			return 0;
		snprintf(what, whatsz, "%s", entry);
		return 1;
	}
	return sb_git_planted(entry, &sb->writes, what, whatsz);
}

static int
planted_refuses(struct ag_sandbox *sb)
{
	char what[PATH_MAX + 128], shown[WHAT_MAX + 64];
	struct plist keep = { NULL, 0, 0 };
	size_t i, n;

	/* again each time: another connection of the identity may have found one */
	if (sb_planted_load(sb) < 0)
		return -1;
	n = sb->planted.n;
	what[0] = '\0';
	for (i = 0; i < n; i++) {
		char w[sizeof(what)];

		if (!still_planted(sb, sb->planted.v[i], w, sizeof(w)))
			continue;
		if (what[0] == '\0')
			snprintf(what, sizeof(what), "%s", w);
		if (sb_plist_add(&keep, sb->planted.v[i]) < 0) {
			sb_plist_free(&keep);
			return -1;
		}
	}
	sb_plist_free(&sb->planted);
	sb->planted = keep;
	if (keep.n != n)
		sb_planted_save(sb);
	if (what[0] == '\0')
		return 0;
	/* the agent chose the path: a newline in it must not read as another
	 * line of the message (red team 22) */
	ag_utf8_shown(what, shown, sizeof(shown));
	/* what git no longer reads is said to be so, and what to do */
	if (strstr(what, ".planted") != NULL)
		snprintf(sb->refusal, sizeof(sb->refusal), "refused: %.*s was put in a git "
		    "repository by a command before the gateway could make it read-only, and "
		    "set aside under this name, which git does not read (nothing runs it): "
		    "review it, then delete it (as the account outside the gateway, or as "
		    "root); this identity's commands are refused until then", WHAT_MAX, shown);
	else
		snprintf(sb->refusal, sizeof(sb->refusal), "refused: %.*s was put in a git "
		    "repository by a command before the gateway could make it read-only, and "
		    "could not be set aside: git run outside the gateway may run it; delete it "
		    "(as the account outside the gateway, or as root); this identity's "
		    "commands are refused until then", WHAT_MAX, shown);
	return -2;
}

/*
 * The git directories already protected, known by what they are as well
 * as by name: one renamed aside and another put at its name (a copy, with
 * planted hooks) is a new one, to be pinned, bound and looked into.
 */
static void
repo_key(const char *gitdir, char *key, size_t keysz)
{
	struct stat st;

	if (lstat(gitdir, &st) < 0)
		memset(&st, 0, sizeof(st));
	snprintf(key, keysz, "%lu:%lu:%s", (unsigned long)st.st_dev, (unsigned long)st.st_ino,
	    gitdir);
}

static int
repo_known(const struct ag_sandbox *sb, const char *gitdir)
{
	char key[PATH_MAX + 48];

	repo_key(gitdir, key, sizeof(key));
	return sb_plist_has(&sb->repos, key);
}

/* 0, -1 out of memory, -2 past MAX_REPOS (sb->refusal says). */
static int
repo_add(struct ag_sandbox *sb, const char *gitdir)
{
	char key[PATH_MAX + 48];

	if (sb->repos.n >= MAX_REPOS)
		return scan_limit(sb, MAX_REPOS, "git repositories beneath the write roots, "
		    "the next at", gitdir);
	repo_key(gitdir, key, sizeof(key));
	return sb_plist_add(&sb->repos, key);
}

/*
 * A part of a git directory that git reads programs from (config,
 * config.worktree, hooks) must be what it seems: a link is followed by
 * git wherever it leads now, and a bind of where it led at the scan
 * leaves the link itself the agent's (its target swapped or filled
 * later); a config that is a directory or a FIFO, or hooks that are a
 * file, are not what git made.  Either refuses (-2, sb->refusal says)
 * rather than bind a resolved target.  1 with st when it is there; 0
 * when it is absent and need not be (the caller made it, or it is not
 * needed); absent where it must be and the account could still create it
 * (a later command would write it unbound): refused.
 */
static int
part_check(struct ag_sandbox *sb, const char *gitdir, const char *name, int want_dir,
    int must, struct stat *st)
{
	char p[PATH_MAX];
	const char *why;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", gitdir, name) >= sizeof(p))
		why = "has a name too long to check";
	else if (lstat(p, st) < 0) {
		if (errno == ENOENT && (!must || access(gitdir, W_OK) != 0))
			return 0;
		why = errno == ENOENT ? "is missing and could not be made" : "cannot be looked at";
	} else if (S_ISLNK(st->st_mode))
		why = "is a symbolic link (git would follow it wherever it leads later)";
	else if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		why = want_dir ? "is not a directory" : "is not a regular file";
	else
		return 1;
	snprintf(sb->refusal, sizeof(sb->refusal), "refused: %s %s: the git protection binds "
	    "only a plain %s there; replace it with one (as the account outside the gateway, "
	    "or as root): commands are refused until then", p, why,
	    want_dir ? "directory" : "file");
	return -2;
}

/* gitdir pinned (NSOP_PIN): the directory the scan found, and no link. */
static int
pin_gitdir(struct ag_sandbox *sb, const char *gitdir)
{
	struct stat st;

	if (lstat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(sb->refusal, sizeof(sb->refusal), "refused: %s changed (it is gone, "
		    "a link or not a directory) while the gateway protected it: the command "
		    "is refused; the next command checks again", gitdir);
		return -2;
	}
	return ops_add_checked(sb, NSOP_PIN, gitdir, 0, &st);
}

/*
 * A repository: its .git directory is pinned (it cannot be moved aside by
 * itself; its work tree can, and a copy put back is a new repository to
 * the scan after the command), its config and hooks are read-only.  A repository without
 * a hooks directory gets an empty one first, or the command could create it.
 */
static int
protect_repo(struct ag_sandbox *sb, const char *gitdir)
{
	static const char *const parts[] = { "config", "config.worktree", "hooks", NULL };
	struct stat st[3];
	int there[3];
	char p[PATH_MAX];
	size_t i;
	int rc;

	if (repo_known(sb, gitdir))
		return 0;
	/* what the command that made it put there, before anything is bound */
	if (check_planted(sb, gitdir) < 0)
		return -1;
	/* the git directory is the agent's: it may have become a link since
	 * the scan, to where our group may write (the audit directory) */
	(void)ag_privsep_mkdir_nofollow(gitdir, "hooks", 0755);
	/* and a config and a config.worktree, or one the command writes later
	 * would not be bound (git makes a config; a repository made by hand,
	 * or whose config was set aside as planted, may have none; git reads
	 * config.worktree once extensions.worktreeConfig is set) */
	(void)ag_privsep_create_nofollow(gitdir, "config", 0644);
	(void)ag_privsep_create_nofollow(gitdir, "config.worktree", 0644);
	/* a link or a part of the wrong type: refused, and not kept as
	 * known, so every scan refuses until it is fixed */
	for (i = 0; parts[i] != NULL; i++)
		if ((there[i] = part_check(sb, gitdir, parts[i], parts[i][0] == 'h', 1,
		    &st[i])) < 0)
			return there[i];
	if ((rc = repo_add(sb, gitdir)) < 0 || (rc = pin_gitdir(sb, gitdir)) < 0)
		return rc;
	for (i = 0; parts[i] != NULL; i++)
		if (there[i] && (size_t)snprintf(p, sizeof(p), "%s/%s", gitdir, parts[i]) <
		    sizeof(p) && (rc = protect_path(sb, p, &st[i])) < 0)
			return rc;
	return 0;
}

/*
 * git follows two files the agent can write to another directory's config
 * and hooks (gitlinks.c): a `.git` file or link in a work tree, and a
 * `commondir` file in a git directory (a worktree's, or one planted in a
 * protected repository).  Each is read at every scan and what it points to
 * beneath a write root is protected too: a git directory as below, a
 * common directory as a repository (its config must exist, or the command
 * is refused: a config created later would not be covered).  A worktree's
 * own git directory (it has commondir) holds only config.worktree of what
 * git runs programs from, and is not pinned: `git worktree remove` must
 * remove it.  hops bounds a chain of pointers.
 */
#define POINTER_HOPS	4

static int protect_gitdir(struct ag_sandbox *sb, const char *gitdir, int kind, int hops);
static int protect_repo(struct ag_sandbox *sb, const char *gitdir);

static const char otherwise[] = "through /proc (git resolves it as itself, not as the "
    "gateway) or into a persistent /tmp (written outside the write roots)";

/* dir/name, a pointer, was written since the scan before the command (the
 * scan after it, or a command whose check after it may not have run). */
static int
pointer_fresh(const struct ag_sandbox *sb, const char *dir, const char *name)
{
	char p[PATH_MAX];

	if (sb->check_new)
		return 1;
	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) &&
	    born_since(p, sb->check_since);
}

/*
 * A pointer the scan cannot follow as git would (why).  One a command just
 * wrote is set aside (NAME.planted: git follows no such name), kept with
 * the planted (its path) and told, as a planted hook is: refused and left
 * in place, git run outside the gateway would follow it, to what no
 * read-only mount covers, until someone removed it.  One that was there
 * before (the account's, written outside the gateway) is refused (-2).
 */
static int
pointer_refused(struct ag_sandbox *sb, const char *dir, const char *name, const char *why)
{
	char aside[PATH_MAX];

	if (pointer_fresh(sb, dir, name)) {
		if (sb_git_set_aside(dir, name, aside, sizeof(aside)) == 0) {
			if (sb->planted_now[0] == '\0')
				snprintf(sb->planted_now, sizeof(sb->planted_now), "%s/%s (points "
				    "%s)", dir, name, why);
			if (!sb_plist_has(&sb->planted, aside)) {
				if (sb_plist_add(&sb->planted, aside) < 0)
					return -1;
				sb_planted_save(sb);
			}
			return 0;
		}
		/* said and audited after the command, naming the pointer;
		 * the scan before each next command refuses it (below) */
		sb->planted_stuck = 1;
		if (sb->planted_now[0] == '\0')
			snprintf(sb->planted_now, sizeof(sb->planted_now), "%s/%s (points %s)",
			    dir, name, why);
	}
	snprintf(sb->refusal, sizeof(sb->refusal), "refused: %s/%s points %s: the git "
	    "protection cannot follow it; remove it: commands are refused until then",
	    dir, name, why);
	return -2;
}

/*
 * What a pointer reaches, protected as a git directory (kind) or a common
 * directory (kind 0).  Reached through a pointer a command just wrote, it
 * is looked into as a new repository is, however old it is: the command
 * could have filled it before it pointed there.
 */
static int
protect_target(struct ag_sandbox *sb, const char *dir, const char *name, const char *target,
    int kind)
{
	int saved = sb->check_new, rc;

	if (pointer_fresh(sb, dir, name))
		sb->check_new = 1;
	rc = kind != 0 ? protect_gitdir(sb, target, kind, 0) : protect_repo(sb, target);
	sb->check_new = saved;
	return rc;
}

/* A commondir sends git to another directory's config and hooks: that
 * directory is protected as a repository (its config made, if it has
 * none, and bound, as protect_repo does). */
static int
follow_commondir(struct ag_sandbox *sb, const char *gitdir, int hops)
{
	char common[PATH_MAX];
	int rc = sb_git_pointer(gitdir, "commondir", NULL, common, sizeof(common));

	if (rc == -2)
		return pointer_refused(sb, gitdir, "commondir", otherwise);
	if (rc < 0 || hops > POINTER_HOPS)
		return pointer_refused(sb, gitdir, "commondir", "where the scan cannot tell");
	if (rc == 0 || !beneath_any(&sb->writes, common) || repo_known(sb, common))
		return 0;
	return protect_target(sb, gitdir, "commondir", common, 0);
}

static int
protect_gitdir(struct ag_sandbox *sb, const char *gitdir, int kind, int hops)
{
	char p[PATH_MAX];

	/* for the sweep after the command (seq_sweep), whatever the bounds */
	if (!sb_plist_has(&sb->gitdirs, gitdir) && sb_plist_add(&sb->gitdirs, gitdir) < 0)
		return -1;
	if (!(kind & SD_COMMONDIR))
		return protect_repo(sb, gitdir);
	/* once: a worktree's git directory is kept with the repositories,
	 * unpinned; its commondir is read at every scan */
	if (!repo_known(sb, gitdir)) {
		struct stat st;
		int rc;

		if (check_planted(sb, gitdir) < 0)
			return -1;
		/* kept as known (and bound) only once it has a config.worktree:
		 * one made empty here would be a mount point that `git worktree
		 * remove` cannot remove; one written later is looked into by
		 * the scan after that command, as a new repository's is */
		if ((rc = part_check(sb, gitdir, "config.worktree", 0, 0, &st)) < 0)
			return rc;
		if (rc == 1 && (size_t)snprintf(p, sizeof(p), "%s/config.worktree", gitdir) <
		    sizeof(p)) {
			if ((rc = repo_add(sb, gitdir)) < 0 || (rc = protect_path(sb, p, &st)) < 0)
				return rc;
		}
	}
	return follow_commondir(sb, gitdir, hops + 1);
}

/* dir holds a .git that is not a directory of its own: a "gitdir: PATH"
 * file, or a link (to a directory, or to such a file). */
static int
follow_dotgit(struct ag_sandbox *sb, const char *dir)
{
	char link[PATH_MAX], target[PATH_MAX];
	struct stat st;
	int rc, kind;

	if ((size_t)snprintf(link, sizeof(link), "%s/.git", dir) >= sizeof(link))
		return pointer_refused(sb, dir, ".git", "where the scan cannot tell");
	if (stat(link, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = realpath(link, target) != NULL ? 1 : -1;
		if (rc == 1 && sb_git_resolves_otherwise(link, target))
			rc = -2;
	} else
		rc = sb_git_pointer(dir, ".git", "gitdir: ", target, sizeof(target));
	if (rc == -2)
		return pointer_refused(sb, dir, ".git", otherwise);
	if (rc < 0)
		return pointer_refused(sb, dir, ".git", "where the scan cannot tell");
	if (rc == 0 || !beneath_any(&sb->writes, target) || (kind = sb_git_kind(target)) == 0)
		return 0;	/* nothing git would use, or nothing the agent can write */
	return protect_target(sb, dir, ".git", target, kind);
}

/* dir/name is a link that leads, as the gateway resolves it, into a
 * persistent /tmp's host directory, or names /proc or a magic link. */
static int
link_elsewhere(const char *dir, const char *name)
{
	char path[PATH_MAX], target[PATH_MAX], real[PATH_MAX];
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    (n = readlink(path, target, sizeof(target) - 1)) < 0)
		return 0;	/* not a link (now), or gone */
	target[n] = '\0';
	return sb_git_resolves_otherwise(path, realpath(path, real) != NULL ? real : NULL) ||
	    (target[0] == '/' && sb_git_resolves_otherwise(target, NULL));
}

/*
 * The scan runs before every command, and a write root can hold a large
 * tree (several checkouts, a build directory): reading every directory
 * again cost milliseconds per command.  So what each directory held is
 * kept (struct scan_dir) and read again only when the directory may have
 * changed: another inode at that name, or its ctime moved.  Creating,
 * removing or renaming an entry moves a directory's ctime, and nothing
 * but the clock sets it (utimensat moves it too).  The clock is coarse
 * (a tick): a change in the same tick as the one before it would leave
 * ctime as it was, so a listing read less than SCAN_RACY_NS after the
 * directory's ctime is not trusted (git's "racily clean" index entries).
 * That reasoning needs the directory's ctime to come from this kernel's
 * clock: on a network file system (the server's clock) or an overlay,
 * every scan reads every directory, as before.  What is visited, and in
 * what order, is what a full scan would visit.
 */
#define SCAN_RACY_NS	1000000000LL

/* File systems whose ctimes this kernel stamps from its own clock. */
static int
local_clock_fs(int fd)
{
	static const unsigned long local[] = {
		0xEF53,		/* ext2/3/4 */
		0x58465342,	/* xfs */
		0x9123683E,	/* btrfs */
		0x01021994,	/* tmpfs */
		0xF2F52010,	/* f2fs */
	};
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf) < 0)
		return 0;
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)sf.f_type == local[i])
			return 1;
	return 0;
}

static void scan_dir_free(struct scan_dir *d);

static void
scan_dir_clear(struct scan_dir *d)
{
	size_t i;

	for (i = 0; i < d->nsub; i++)
		scan_dir_free(d->sub[i]);
	free(d->sub);
	d->sub = NULL;
	d->nsub = 0;
	d->valid = 0;
}

static void
scan_dir_free(struct scan_dir *d)
{
	scan_dir_clear(d);
	free(d->name);
	free(d);
}

void
sb_scan_free(struct ag_sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->nscan; i++)
		scan_dir_clear(&sb->scan[i]);
	free(sb->scan);
	sb->scan = NULL;
	sb->nscan = 0;
}

static long long
ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int
listing_holds(const struct scan_dir *d, const struct stat *st)
{
	return d->valid && d->dev == st->st_dev && d->ino == st->st_ino &&
	    d->ctime.tv_sec == st->st_ctim.tv_sec && d->ctime.tv_nsec == st->st_ctim.tv_nsec &&
	    ts_ns(&d->read_at) - ts_ns(&d->ctime) > SCAN_RACY_NS;
}

/* The child of d called name from the last listing (readdir keeps its
 * order for entries that stay), or a new one; NULL when out of memory. */
static struct scan_dir *
take_sub(struct scan_dir **old, size_t nold, size_t *cursor, const char *name)
{
	struct scan_dir *c;
	size_t k;

	for (k = *cursor; k < nold && k < *cursor + 8; k++)
		if (old[k] != NULL && strcmp(old[k]->name, name) == 0) {
			c = old[k];
			old[k] = NULL;
			*cursor = k + 1;
			return c;
		}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->name = strdup(name)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * Read dir's entries into d, budget permitting: 0, -1 out of memory, 1
 * when dir is gone (then d is empty), 2 when the budget ran out before the
 * listing did, 3 when dir or an entry cannot be read (errno says why): a
 * directory the scan cannot list may hold a repository git can use.
 */
static int
read_listing(const char *dir, size_t *budget, struct scan_dir *d)
{
	struct scan_dir **old = d->sub, **sub = NULL;
	size_t nold = d->nsub, nsub = 0, cap = 0, cursor = 0, k;
	struct timespec now;
	struct stat st;
	struct dirent *de;
	DIR *dp;
	int fd, rc = 0, head = 0, objects = 0, refs = 0, common = 0, dotgit = 0, complete = 0,
	    tmplink = 0;

	d->sub = NULL;
	d->nsub = 0;
	d->valid = 0;
	d->nentries = 0;
	d->repo = 0;
	clock_gettime(CLOCK_REALTIME, &now);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0 || (dp = fdopendir(fd)) == NULL) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		/* gone, or made a link, since the lstat: nothing there now */
		rc = e == ENOENT || e == ENOTDIR || e == ELOOP ? 1 : 3;
		errno = e;
		goto out;
	}
	for (;;) {
		struct stat es;
		unsigned char type;
		struct scan_dir *c;

		errno = 0;
		if ((de = readdir(dp)) == NULL) {
			if (errno != 0) {
				rc = 3;
				break;
			}
			complete = 1;
			break;
		}
		if (*budget == 0) {
			rc = 2;
			break;
		}
		(*budget)--;
		d->nentries++;
		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		/* the entry's type from readdir; a stat only where it says nothing */
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(fd, de->d_name, &es, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue;
				rc = 3;
				break;
			}
			type = S_ISDIR(es.st_mode) ? DT_DIR : S_ISREG(es.st_mode) ? DT_REG : DT_LNK;
		} else
			type = de->d_type;
		/* what git would take for a git directory: it follows links */
		if (type == DT_LNK && !tmplink)
			tmplink = link_elsewhere(dir, de->d_name);
		if (type == DT_REG || type == DT_LNK) {
			head |= strcmp(de->d_name, "HEAD") == 0;
			common |= strcmp(de->d_name, "commondir") == 0;
			dotgit |= strcmp(de->d_name, ".git") == 0;
		}
		/* any type: git checks only access(X_OK) for refs, and a file
		 * here still makes git take the directory for a repository */
		objects |= strcmp(de->d_name, "objects") == 0;
		refs |= strcmp(de->d_name, "refs") == 0;
		/* every directory, node_modules too: a repository may sit anywhere */
		if (type != DT_DIR)
			continue;
		if (nsub == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct scan_dir **n = realloc(sub, nc * sizeof(*n));

			if (n == NULL) {
				rc = -1;
				break;
			}
			sub = n;
			cap = nc;
		}
		if ((c = take_sub(old, nold, &cursor, de->d_name)) == NULL) {
			rc = -1;
			break;
		}
		sub[nsub++] = c;
	}
	d->valid = complete && local_clock_fs(fd);
	{
		int e = errno;

		closedir(dp);
		errno = e;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->ctime = st.st_ctim;
	d->read_at = now;
	d->repo = (head && ((objects && refs) || common) ? SD_GITDIR : 0) |
	    (common ? SD_COMMONDIR : 0) | (dotgit ? SD_DOTGIT_FILE : 0) |
	    (tmplink ? SD_TMPLINK : 0);
out:
	d->sub = sub;
	d->nsub = nsub;
	for (k = 0; k < nold; k++)
		if (old[k] != NULL)
			scan_dir_free(old[k]);
	free(old);
	return rc;
}

/*
 * Links beneath dir that lead into a persistent /tmp by its host path, or
 * through /proc (red team 22): git run outside the gateway (root's, with
 * safe.directory) takes a linked work tree for the repository there,
 * which no scan covers.  Each is a pointer: set aside when a command just
 * made it, else refused (pointer_refused).
 */
static int
tmp_links(struct ag_sandbox *sb, const char *dir)
{
	struct dirent *de;
	DIR *dp;
	int rc = 0;

	if ((dp = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : unreadable(sb, dir, errno);
	while (rc == 0 && (de = readdir(dp)) != NULL)
		if ((de->d_type == DT_LNK || de->d_type == DT_UNKNOWN) &&
		    link_elsewhere(dir, de->d_name))
			rc = pointer_refused(sb, dir, de->d_name, otherwise);
	closedir(dp);
	return rc;
}

/*
 * Find git directories beneath dir (canonical), bounded in depth and work:
 * a directory holding HEAD, and objects/ and refs/ or a commondir file, is
 * one whatever its name - a checkout's .git, a bare repository (a push to
 * it runs its hooks), a --separate-git-dir, a submodule's
 * .git/modules/NAME, a worktree's .git/worktrees/NAME - and links among
 * those count, as git follows them.  Inside one, everything is searched
 * further, the object store too.  d: what the last scan read there.
 */
static int
scan_repos(struct ag_sandbox *sb, const char *dir, int depth, size_t *budget,
    struct scan_dir *d)
{
	struct stat st;
	size_t i;
	int rc;

	if (lstat(dir, &st) < 0) {
		int e = errno;

		scan_dir_clear(d);
		return e == ENOENT || e == ENOTDIR ? 0 : unreadable(sb, dir, e);
	}
	if (!S_ISDIR(st.st_mode)) {
		scan_dir_clear(d);
		return 0;
	}
	if (listing_holds(d, &st) && *budget >= d->nentries)
		*budget -= d->nentries;
	else {
		sb->scan_read = 1;
		if ((rc = read_listing(dir, budget, d)) == 2)
			return scan_limit(sb, SCAN_ENTRIES, "directory entries beneath the "
			    "write roots, the last read in", dir);
		if (rc == 3) {
			int e = errno;

			scan_dir_clear(d);
			/* another's directory the account can neither enter nor
			 * change (a private mktemp -d of root's under a /tmp write
			 * root): nothing of the agent's is in it, and no git of
			 * the account's reaches into it */
			if (e == EACCES && st.st_uid != getuid() && access(dir, X_OK) != 0)
				return 0;
			return unreadable(sb, dir, e);
		}
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	if ((d->repo & SD_GITDIR) && (rc = protect_gitdir(sb, dir, d->repo, 0)) < 0)
		return rc;
	if ((d->repo & SD_DOTGIT_FILE) && (rc = follow_dotgit(sb, dir)) < 0)
		return rc;
	if ((d->repo & SD_TMPLINK) && (rc = tmp_links(sb, dir)) < 0)
		return rc;
	for (i = 0; i < d->nsub; i++) {
		char child[PATH_MAX];

		/* a repository nested in a git directory is found anywhere
		 * in it (modules/, worktrees/, objects/, lfs/): git takes a
		 * directory for one wherever it is, and the object store's
		 * loose objects and packs are files, listed once and then
		 * kept (struct scan_dir) like any directory's */
		if (depth >= SCAN_DEPTH)
			return scan_limit(sb, SCAN_DEPTH, "levels of directories beneath a "
			    "write root, at", dir);
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", strcmp(dir, "/") ? dir : "",
		    d->sub[i]->name) < sizeof(child) &&
		    (rc = scan_repos(sb, child, depth + 1, budget, d->sub[i])) < 0)
			return rc;
	}
	return 0;
}

/*
 * What git does when a stopped rebase is continued is written in the git
 * directory (gitseq.c) and cannot be bound read-only: `git rebase
 * --continue` in the gateway rewrites it.  So after every command (and
 * when another gateway's command may not have been looked after, since
 * then) every git directory the scan before it met is looked at directly,
 * not through the bounded scan: a bound the command reaches (200,001 names
 * made before the rebase state is written) stops the scan, not this.  State
 * made or changed since then that holds a program git runs is set aside
 * whole (rebase-merge.planted: git sees no rebase in progress), told and
 * refused on as a planted hook is.  The same look follows each git
 * directory's core.worktree again: a link the command put on its way
 * (the work tree itself swapped for a link to ~) is set aside as a
 * pointer (pointer_refused).
 */
static int pointer_refused(struct ag_sandbox *sb, const char *dir, const char *name,
    const char *why);

static long long
now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* path, or a directory on the way to it beneath a write root, changed
 * (ctime) since: an old link in a directory renamed into place counts.
 * A second of slack for the file system's coarse clock. */
static int
changed_on_way(const struct ag_sandbox *sb, const char *path, long long since)
{
	char p[PATH_MAX], *slash;
	struct stat st;
	size_t i;

	snprintf(p, sizeof(p), "%s", path);
	while (beneath_any(&sb->writes, p)) {
		for (i = 0; i < sb->writes.n; i++)
			if (strcmp(p, sb->writes.v[i]) == 0)
				return 0;	/* the root itself is not the agent's to move */
		if (lstat(p, &st) < 0 || (long long)st.st_ctim.tv_sec * 1000000000LL +
		    st.st_ctim.tv_nsec >= since - 1000000000LL)
			return 1;
		if ((slash = strrchr(p, '/')) == NULL || slash == p)
			break;
		*slash = '\0';
	}
	return 0;
}

static int
worktree_sweep(struct ag_sandbox *sb, const char *gitdir, long long since)
{
	char value[PATH_MAX], bad[PATH_MAX], *slash;
	struct stat st;

	if (sb_git_core_worktree(gitdir, value, sizeof(value)) <= 0 ||
	    !sb_git_worktree_outside(gitdir, value, &sb->writes, bad, sizeof(bad)) ||
	    lstat(bad, &st) < 0 || !S_ISLNK(st.st_mode) || !beneath_any(&sb->writes, bad) ||
	    !changed_on_way(sb, bad, since) || (slash = strrchr(bad, '/')) == NULL)
		return 0;	/* the account's own, or nothing the command did */
	*slash = '\0';
	return pointer_refused(sb, bad, slash + 1, "where a git work tree (core.worktree of "
	    "a repository) lies: git run outside the gateway would write there");
}

/* gitdir's rebase state, made or changed since (0: any time), set aside
 * when it holds what git runs.  0, or -1 out of memory. */
static int
seq_check(struct ag_sandbox *sb, const char *gitdir, long long since)
{
	char what[256], aside[PATH_MAX];
	const char *name;

	if (sb_git_seq_planted(gitdir, since, &name, what, sizeof(what)) != 1)
		return 0;
	if (sb_git_set_aside(gitdir, name, aside, sizeof(aside)) == 0) {
		if (!sb_plist_has(&sb->planted, aside)) {
			if (sb_plist_add(&sb->planted, aside) < 0)
				return -1;
			sb_planted_save(sb);
		}
	} else
		sb->planted_stuck = 1;
	if (sb->planted_now[0] == '\0')
		snprintf(sb->planted_now, sizeof(sb->planted_now), "%.*s/%s: a rebase, "
		    "cherry-pick or am in progress that runs a program when continued",
		    PATH_MAX - 256, gitdir, what);
	return 0;
}

static int
seq_sweep(struct ag_sandbox *sb, long long since)
{
	size_t i;
	int rc;

	for (i = 0; i < sb->gitdirs.n; i++)
		if ((rc = worktree_sweep(sb, sb->gitdirs.v[i], since)) < 0 ||
		    (rc = seq_check(sb, sb->gitdirs.v[i], since)) < 0)
			return rc;
	return 0;
}

static int scan_all(struct ag_sandbox *sb, size_t *budget);

static int
scan_write_roots(struct ag_sandbox *sb)
{
	struct plist stale = { NULL, 0, 0 };
	size_t i, budget = SCAN_ENTRIES;
	int rc;

	if (!sb->check_new && (rc = planted_refuses(sb)) < 0)
		return rc;
	/* another gateway's command whose check after it has not run (yet,
	 * or ever: the gateway was killed): what was made since is looked into */
	if (!sb->check_new) {
		sb->check_since = sb_pending_since(&stale);
		/* met again by this scan: the list is whole when it completes */
		sb_plist_free(&sb->gitdirs);
	}
	rc = scan_all(sb, &budget);
	/* whatever the scan reached: the sweep does not depend on its bounds */
	if (sb->check_new || sb->check_since != 0) {
		int src = seq_sweep(sb, !sb->check_new ? sb->check_since : sb->cmd_start != 0 ?
		    sb->cmd_start : now_ns());

		if (rc == 0 && src < 0)
			rc = src;
	}
	if (rc == 0)
		for (i = 0; i < stale.n; i++)
			(void)unlink(stale.v[i]);
	/* what that found refuses this command already */
	if (rc == 0 && sb->check_since != 0 && sb->planted.n > 0)
		rc = planted_refuses(sb);
	sb_plist_free(&stale);
	sb->check_since = 0;
	return rc;
}

static int
scan_all(struct ag_sandbox *sb, size_t *budget)
{
	size_t i;
	int rc;

	if (sb->nscan != sb->writes.n) {
		sb_scan_free(sb);
		if ((sb->scan = calloc(sb->writes.n, sizeof(*sb->scan))) == NULL)
			return -1;
		sb->nscan = sb->writes.n;
		/* what this account's last session read, checked like our own */
		if (sb_scan_load(sb) < 0)
			return -1;
	}
	for (i = 0; i < sb->writes.n; i++) {
		const char *w = sb->writes.v[i];

		/* a /tmp that is the session's own is not the host's /tmp
		 * this path names (other users' private directories and all) */
		if (sb->private_tmp && strncmp(w, "/tmp", 4) == 0 && (w[4] == '\0' || w[4] == '/'))
			continue;
		if ((rc = scan_repos(sb, w, 0, budget, &sb->scan[i])) < 0)
			return rc;
	}
	if (sb->scan_read) {
		sb->scan_read = 0;
		sb_scan_save(sb);
	}
	return 0;
}

/*
 * /tmp is the session's own in both tiers: what other sessions and the
 * account's other programs left there (a tmux server's socket, an
 * ssh-agent's, X11's) is not reachable, and the session's files are not
 * theirs.  Writable where the profile writes /tmp (always in the
 * developer tier, whose tools expect it).  It is the identity's persistent
 * directory (ptmp.c) where paths.tmp says so (the developer tier's
 * default), so that what one call leaves there the next finds; else, or
 * when that directory cannot be had, a tmpfs of the session's own,
 * bounded, since a tmpfs is memory and by default half of the host's.
 */
/* The persistent /tmp's bind, or 0 (not wanted, or not to be had: said
 * once per gateway), or -1 out of memory. */
static int
plan_persistent(struct build *b, unsigned long noexec)
{
	static int noted;
	struct ag_sandbox *sb = b->sb;
	char why[PATH_MAX + 160];
	struct statvfs sv;

	if (!ag_profile_tmp_persistent(b->p))
		return 0;
	if (sb->ptmp_fd < 0)
		sb->ptmp_fd = sb_ptmp_open(b->identity, b->p->limits.tmp_age, why, sizeof(why));
	else
		why[0] = '\0';
	if (sb->ptmp_fd >= 0 && fstatvfs(sb->ptmp_fd, &sv) < 0) {
		snprintf(why, sizeof(why), "%s: %s", ag_sandbox_tmp_base(), strerror(errno));
		close(sb->ptmp_fd);
		sb->ptmp_fd = -1;
	}
	if (sb->ptmp_fd < 0) {
		if (!noted)
			ag_log(LOG_WARNING, "persistent /tmp not available (%s): /tmp is the "
			    "session's own tmpfs, gone when it ends", why);
		noted = 1;
		return 0;
	}
	if (ops_add(sb, NSOP_BIND_CWD, "/tmp", flags_of(&sv, noexec)) < 0)
		return -1;
	return 1;
}

static int
plan_tmp(struct build *b)
{
	struct ag_sandbox *sb = b->sb;
	const struct plist *named[] = { &b->reads, &b->writes };
	unsigned long noexec = beneath_any(&b->execs, "/tmp") ? 0 : MS_NOEXEC;
	size_t k, j;
	int rc;

	if (sb->private_tmp)
		return 0;
	/* a strict-tier profile that names a path beneath /tmp (a CI job's
	 * /tmp/build) shares the host's, as it asked */
	for (k = 0; !sb->developer && k < 2; k++)
		for (j = 0; j < named[k]->n; j++)
			if (strcmp(named[k]->v[j], "/tmp") != 0 &&
			    sb_path_within(named[k]->v[j], "/tmp"))
				return 0;
	if ((rc = plan_persistent(b, noexec)) < 0)
		return -1;
	if (rc == 0) {
		if (ops_add(sb, NSOP_TMPFS, "/tmp", MS_NOSUID | MS_NODEV | noexec) < 0)
			return -1;
		sb->ops[sb->nops - 1].size = b->p->limits.tmp_size > 0 ?
		    b->p->limits.tmp_size : AG_TMP_SIZE_DEFAULT;
	}
	sb->private_tmp = 1;
	sb->tmp_writable = sb->developer || beneath_any(&b->writes, "/tmp");
	return 0;
}

/*
 * The namespace plan beyond the noexec write roots.  Both tiers: the
 * protected paths beneath the write roots are bound read-only, for every
 * program (an allowed awk or sftp-server as much as a recipe).  The
 * startup files are policy.c's list (ag_policy_protected), so that the
 * typed line and the kernel protect the same names; "**" entries are found
 * by the repository scan, globbed ones that exist are bound, missing names
 * cannot be (see doc/sandbox.md).  Developer tier: paths.exec gets exec
 * back, and /tmp is the session's own tmpfs.
 */
static int
plan_ns(struct build *b)
{
	struct ag_sandbox *sb = b->sb;
	const char *const *prot = ag_policy_protected();
	size_t i, k;
	int rc;

	for (i = 0; sb->developer && i < b->execs.n; i++) {
		unsigned long f;

		if (!beneath_any(&b->writes, b->execs.v[i]))
			continue;
		if ((f = remount_flags(b->execs.v[i], 0)) != 0 &&
		    ops_add(sb, NSOP_REMOUNT, b->execs.v[i], f & ~(unsigned long)MS_NOEXEC) < 0)
			return -1;
	}
	if (plan_tmp(b) < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		const struct ag_strlist *l = &b->p->paths_protect;
		size_t n = k == 0 ? SIZE_MAX : l->n;

		for (i = 0; i < n && (k == 1 || prot[i] != NULL); i++) {
			const char *e = k == 0 ? prot[i] : l->v[i];
			char abs[PATH_MAX], *star;
			size_t len;

			if (strncmp(e, "**/", 3) == 0)
				continue;	/* found by the repository scan */
			/* relative entries are relative to home, as in policy.c */
			if (ag_path_absolute(e, b->home, b->home, abs, sizeof(abs)) < 0)
				continue;
			len = strlen(abs);
			if (len > 3 && strcmp(abs + len - 3, "/**") == 0)
				abs[len - 3] = '\0';	/* a whole directory */
			if ((star = strpbrk(abs, "*?[")) != NULL) {
				glob_t g;
				size_t j;

				if (glob(abs, GLOB_NOSORT, NULL, &g) == 0) {
					for (j = 0; j < g.gl_pathc; j++)
						if ((rc = protect_named(sb, g.gl_pathv[j])) < 0) {
							globfree(&g);
							return rc;
						}
					globfree(&g);
				}
				continue;
			}
			if ((rc = protect_named(sb, abs)) < 0)
				return rc;
		}
	}
	return scan_write_roots(sb);
}

/*
 * Plan and build the namespace.  Without user namespaces, the strict tier
 * notes what it loses; the developer tier's protections exist only there,
 * so `required` refuses and best_effort notes it.
 */
static int
refusal_err(const struct ag_sandbox *sb, struct ag_err *err)
{
	return ag_err_set(err, "%s", sb->refusal);
}

/*
 * Landlock does not mediate connecting to a pathname socket, and the
 * network namespace does not hold one; /run is where daemons keep theirs
 * (the systemd user manager's bus, which starts programs outside the
 * sandbox; the system bus; resolved and nscd, which resolve names for it;
 * docker, containerd, podman, databases).  So /run is an empty read-only
 * tmpfs in every sandboxed session, and only what the session needs is
 * bound back: the profile's paths beneath it (read-only unless a write
 * root), the programs it allows and the preload there, and /run/utmp
 * (who, uptime).  A profile that reads "/" does not get /run with it.
 */
static int
keep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nsop *)a)->path, ((const struct nsop *)b)->path);
}

static int
keep_add(struct build *b, const char *path, int writable)
{
	struct ag_sandbox *sb = b->sb;
	size_t i, first;
	unsigned long f;

	if (strncmp(path, "/run/", 5) != 0 || path[5] == '\0')
		return 0;
	for (first = 0; first < sb->nops && sb->ops[first].kind != NSOP_RUN; first++)
		;
	for (i = first + 1; i < sb->nops; i++)
		if (strcmp(sb->ops[i].path, path) == 0) {
			if (writable)	/* a write root wins over a read of it */
				sb->ops[i].flags = remount_flags(path, 0);
			return 0;
		}
	if (sb->nops - first > MAX_RUN_KEEP)
		return ag_err_set(b->err, "kernel sandbox: the profile names more than %d paths "
		    "beneath /run (%s ...); name their common directory", MAX_RUN_KEEP, path);
	f = remount_flags(path, writable ? 0 : MS_RDONLY);
	if (ops_add(sb, NSOP_KEEP, path, f) < 0)
		return ag_err_set(b->err, "out of memory");
	return 0;
}

/*
 * The other places every uid may leave a socket: /dev/shm and /var/tmp
 * are empty tmpfs too, unless the profile names a path in them.
 */
static int
plan_shared_tmp(struct build *b)
{
	static const char *const dirs[] = { "/dev/shm", "/var/tmp" };
	const struct plist *named[] = { &b->reads, &b->writes };
	struct stat st;
	size_t i, k, j;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int keep = 0;

		if (lstat(dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		for (k = 0; k < 2 && !keep; k++)
			for (j = 0; j < named[k]->n && !keep; j++)
				keep = sb_path_within(named[k]->v[j], dirs[i]);
		if (keep)
			continue;
		if (ops_add(b->sb, NSOP_TMPFS, dirs[i], MS_NOSUID | MS_NODEV | MS_NOEXEC) < 0)
			return ag_err_set(b->err, "out of memory");
		/* memory, like a tmpfs /tmp: bounded the same */
		b->sb->ops[b->sb->nops - 1].size = b->p->limits.tmp_size > 0 ?
		    b->p->limits.tmp_size : AG_TMP_SIZE_DEFAULT;
		/* POSIX semaphores and shared memory (python's multiprocessing
		 * locks, queues and pools): written where /tmp is */
		if (i == 0)
			b->sb->shm_private = 1;
	}
	return 0;
}

static int
plan_run(struct build *b)
{
	struct ag_sandbox *sb = b->sb;
	const struct plist *ro[] = { &b->reads, &b->execs, &sb->exec };
	size_t i, k, first = sb->nops;
	struct stat st;

	if (lstat("/run", &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (ops_add(sb, NSOP_RUN, "/run", 0) < 0)
		return ag_err_set(b->err, "out of memory");
	for (i = 0; i < b->writes.n; i++)
		if (keep_add(b, b->writes.v[i], 1) < 0)
			return -1;
	for (k = 0; k < sizeof(ro) / sizeof(ro[0]); k++)
		for (i = 0; i < ro[k]->n; i++)
			if (keep_add(b, ro[k]->v[i], 0) < 0)
				return -1;
	if ((sb->preload != NULL && keep_add(b, sb->preload, 0) < 0) ||
	    (lstat("/run/utmp", &st) == 0 && S_ISREG(st.st_mode) &&
	    keep_add(b, "/run/utmp", 0) < 0))
		return -1;
	/* a directory before what is beneath it: its mount must not cover theirs */
	qsort(sb->ops + first + 1, sb->nops - first - 1, sizeof(*sb->ops), keep_cmp);
	return plan_shared_tmp(b);
}

/*
 * Landlock mediates writing files but not changing their metadata: a
 * command could chmod, chown or utime what the account owns outside the
 * write roots (make ~/.bashrc world-writable, backdate a file).  The
 * account's files are in its home, so the home is bound read-only, with
 * the write roots beneath it bound back read-write after it (their own
 * NSOP_REMOUNT, which follows).  A home that is a write root, or beneath
 * one, stays as it is.
 */
static int
plan_home(struct build *b)
{
	char real[PATH_MAX];
	unsigned long f;
	struct stat st;

	if (realpath(b->home, real) == NULL || strcmp(real, "/") == 0 ||
	    stat(real, &st) < 0 || !S_ISDIR(st.st_mode) || beneath_any(&b->writes, real))
		return 0;
	if ((f = remount_flags(real, MS_RDONLY)) == 0)
		return 0;
	return ops_add(b->sb, NSOP_REMOUNT, real, f);
}

/* A mount point as /proc/self/mountinfo writes it (\\ooo for a space,
 * a tab, a newline, a backslash), decoded into out; 0, or -1 too long. */
static int
mountinfo_path(const char *s, size_t n, char *out, size_t outsz)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			ch = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (k + 1 >= outsz)
			return -1;
		out[k++] = ch;
	}
	out[k] = '\0';
	return 0;
}

/*
 * Landlock mediates writing files but not changing their metadata, and
 * the account owns files outside its home too (a mail spool, as useradd
 * makes it: red team 20, L2): every mount outside the write roots is made
 * read-only in the session's namespace, in place ("/" included), before
 * the home's and the write roots' own binds, which follow and bring the
 * write roots back read-write.  Not the kernel's (/proc, /sys), the
 * devices' (/dev: a terminal's own mode, `mesg`), nor /run and /tmp, which
 * the namespace replaces; a mount already read-only needs nothing.
 * Returns 0, -1 out of memory or a mount table that cannot be read.
 */
static int
plan_readonly(struct build *b)
{
	static const char *const own[] = { "/proc", "/sys", "/dev", "/run", "/tmp" };
	char line[4 * PATH_MAX], mp[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int rc = 0;

	if (f == NULL)
		return -1;
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		const char *p = line, *e;
		unsigned long fl;
		struct statvfs sv;
		size_t i;
		int field;

		/* the fifth field: the mount point */
		for (field = 1; field < 5 && p != NULL; field++)
			if ((p = strchr(p, ' ')) != NULL)
				p++;
		if (p == NULL || (e = strchr(p, ' ')) == NULL ||
		    mountinfo_path(p, (size_t)(e - p), mp, sizeof(mp)) < 0 || mp[0] != '/')
			continue;
		for (i = 0; i < sizeof(own) / sizeof(own[0]) && !sb_path_within(mp, own[i]); i++)
			;
		if (i < sizeof(own) / sizeof(own[0]) || beneath_any(&b->writes, mp))
			continue;
		if (statvfs(mp, &sv) < 0 || (sv.f_flag & ST_RDONLY))
			continue;
		fl = flags_of(&sv, MS_RDONLY);
		if (ops_add(b->sb, NSOP_RDONLY, mp, fl) < 0)
			rc = -1;
	}
	fclose(f);
	return rc;
}

int
sb_ns_make(struct ag_sandbox *sb, struct build *b)
{
	size_t i;
	int rc;

	sb_identity_key(b->identity, sb->planted_key, sizeof(sb->planted_key));
	if (plan_run(b) < 0)
		return -1;
	if (sb->developer && plan_readonly(b) < 0)
		return ag_err_set(b->err, "kernel sandbox: cannot read the mount table: %s",
		    strerror(errno));
	if (plan_home(b) < 0)
		return ag_err_set(b->err, "out of memory");
	for (i = 0; i < b->writes.n; i++) {
		unsigned long f = remount_flags(b->writes.v[i], MS_NOEXEC);

		if (sb_plist_add(&sb->writes, b->writes.v[i]) < 0)
			return ag_err_set(b->err, "out of memory");
		if (f != 0 && ops_add(sb, NSOP_REMOUNT, b->writes.v[i], f) < 0)
			return ag_err_set(b->err, "out of memory");
	}
	if (b->writes.n > 0 && (rc = plan_ns(b)) < 0)
		return rc == -2 ? refusal_err(sb, b->err) : ag_err_set(b->err, "out of memory");
	if (b->writes.n == 0 && plan_tmp(b) < 0)
		return ag_err_set(b->err, "out of memory");
	/* a fork or a namespace can fail for want of a resource another
	 * session is about to free: one more try before refusing */
	if (make_ns(sb) == 0 || make_ns(sb) == 0)
		return 0;
	if (sb->ns_step == KEEPER_CHANGED)
		return ag_err_set(b->err, "refused: %s, so it is not bound: the command is "
		    "refused; the next command checks again", keeper_steps[KEEPER_CHANGED]);
	sb->private_tmp = sb->tmp_writable = 0;
	if (sb->mode == AG_SANDBOX_REQUIRED)
		return ag_err_set(b->err, "kernel sandbox: commands need a user, mount and PID "
		    "namespace of their own (%s), and gateway.sandbox is required: commands are "
		    "refused", sb->ns_step > 0 && sb->ns_step < (int)(sizeof(keeper_steps) /
		    sizeof(keeper_steps[0])) ? keeper_steps[sb->ns_step] : strerror(errno));
	if (sb_note_add(sb, sb->developer ? "no user namespaces: protected paths beneath "
	    "paths.write are not read-only for programs, files written there stay mappable by "
	    "the loader, /tmp is not private, and what a command leaves running outlives the "
	    "gateway if it is killed" : "no user namespaces: protected paths beneath paths.write "
	    "are not read-only for programs, files written there stay mappable by the dynamic "
	    "loader, and what a command leaves running outlives the gateway if it is killed") < 0)
		return ag_err_set(b->err, "out of memory");
	return 0;
}

/* gitdir no longer counted as protected: the next scan protects it again
 * (and the scan after a command looks into it as into a new one). */
static void
repo_forget(struct ag_sandbox *sb, const char *gitdir)
{
	size_t i, j;

	for (i = j = 0; i < sb->repos.n; i++) {
		const char *k = strchr(sb->repos.v[i], ':');

		if (k != NULL && (k = strchr(k + 1, ':')) != NULL && strcmp(k + 1, gitdir) == 0)
			free(sb->repos.v[i]);
		else
			sb->repos.v[j++] = sb->repos.v[i];
	}
	sb->repos.n = j;
}

/* o (a part bound by bind_checked) is still bound here: the inode that
 * was checked, at the root of a mount. */
static int
still_bound(const struct nsop *o)
{
	struct statx sx;
	int fd, ok;

	if ((fd = sb_open_nolinks(o->path)) < 0)
		return 0;
	ok = statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx) == 0 && sx.stx_ino == o->ino &&
	    makedev(sx.stx_dev_major, sx.stx_dev_minor) == o->dev &&
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	close(fd);
	return ok;
}

/*
 * A mount in this namespace can be undone from outside it: since Linux
 * 3.18, renaming or removing a mount point in another mount namespace
 * detaches the mount here.  Another connection's command can do that to a
 * repository its own namespace does not bind (one it made), `git config`
 * run outside the gateway does it to config (it renames config.lock over
 * it).  So before and after every command each bound part of a repository
 * is looked at again, inside the namespace: still the inode bound, still
 * the root of a mount.  A repository with a part that is not is forgotten,
 * so the scan binds it again, and the scan after a command looks into it
 * as into a new one (what the command could write there meanwhile).
 * 0, or -1 when the look could not be had (the caller refuses).
 */
static void
part_gone(struct ag_sandbox *sb, size_t idx)
{
	struct nsop *o = &sb->ops[idx];
	char gitdir[PATH_MAX], *slash;

	snprintf(gitdir, sizeof(gitdir), "%s", o->path);
	if (o->kind == NSOP_REMOUNT && (slash = strrchr(gitdir, '/')) != NULL)
		*slash = '\0';	/* config, config.worktree, hooks: its git directory */
	repo_forget(sb, gitdir);
	o->kind = NSOP_GONE;
}

/*
 * ns_verify through the session's runner process, which is in the
 * namespace already: one round trip, where a process joining it costs a
 * fork.  0, 1 when it could not be asked (the caller forks), -1 out of
 * memory.
 */
static int
ns_verify_asked(struct ag_sandbox *sb)
{
	struct ag_zygote *z = ag_zygote_of(sb);
	struct ag_zygote_stat *st;
	const char **paths;
	size_t *idx, i, n = 0;
	int rc = 1;

	if (z == NULL)
		return 1;
	paths = calloc(sb->nops_done, sizeof(*paths));
	idx = calloc(sb->nops_done, sizeof(*idx));
	st = calloc(sb->nops_done, sizeof(*st));
	if (paths == NULL || idx == NULL || st == NULL) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < sb->nops_done; i++)
		if (sb->ops[i].part &&
		    (sb->ops[i].kind == NSOP_REMOUNT || sb->ops[i].kind == NSOP_PIN)) {
			paths[n] = sb->ops[i].path;
			idx[n++] = i;
		}
	if (ag_zygote_stat(z, paths, n, st) < 0) {
		if (errno == EPIPE)
			ag_zygote_forget(z);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct nsop *o = &sb->ops[idx[i]];

		if (!st[i].found || st[i].ino != (uint64_t)o->ino ||
		    st[i].dev != (uint64_t)o->dev || !st[i].mount_root)
			part_gone(sb, idx[i]);
	}
	rc = 0;
out:
	free(paths);
	free(idx);
	free(st);
	return rc;
}

static int
ns_verify(struct ag_sandbox *sb)
{
	size_t i, idx;
	ssize_t n;
	pid_t pid;
	int p[2], st;

	if (sb->ns_user_fd < 0 || sb->nops_done == 0)
		return 0;
	if ((st = ns_verify_asked(sb)) <= 0)
		return st;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (ag_privsep_child() < 0 || setns(sb->ns_user_fd, CLONE_NEWUSER) < 0 ||
		    setns(sb->ns_mnt_fd, CLONE_NEWNS) < 0)
			_exit(1);
		for (i = 0; i < sb->nops_done; i++) {
			const struct nsop *o = &sb->ops[i];

			if (o->part && (o->kind == NSOP_REMOUNT || o->kind == NSOP_PIN) &&
			    !still_bound(o) && write(p[1], &i, sizeof(i)) != sizeof(i))
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], &idx, sizeof(idx))) == sizeof(idx) || (n < 0 && errno == EINTR))
		if (n > 0 && idx < sb->nops_done)
			part_gone(sb, idx);
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int
ag_sandbox_refresh(struct ag_sandbox *sb, struct ag_err *err)
{
	int rc;

	if (sb == NULL || sb->ns_user_fd < 0 || sb->writes.n == 0)
		return 0;
	if (ns_verify(sb) < 0)
		return ag_err_set(err, "kernel sandbox: could not check that the git "
		    "repositories are still protected (%s): the command is refused",
		    strerror(errno));
	if ((rc = scan_write_roots(sb)) < 0)
		return rc == -2 ? refusal_err(sb, err) : ag_err_set(err, "out of memory");
	if ((rc = ns_catch_up(sb)) == -2) {
		/* what was bound before it stays; what was not is planned
		 * again by the next scan, which looks at every repository anew */
		sb->nops_done = sb->nops;
		sb_plist_free(&sb->repos);
		return ag_err_set(err, "refused: %s, so it is not bound: the command is "
		    "refused; the next command checks again", keeper_steps[KEEPER_CHANGED]);
	}
	if (rc < 0)
		return ag_err_set(err, "kernel sandbox: could not protect a new git repository "
		    "(%s): the command is refused", strerror(errno));
	return 0;
}

const char *
ag_sandbox_after(struct ag_sandbox *sb, int *set_aside)
{
	*set_aside = 1;
	if (sb == NULL || sb->ns_user_fd < 0 || sb->writes.n == 0)
		return NULL;
	sb->planted_now[0] = '\0';
	sb->planted_stuck = 0;
	sb->check_new = 1;
	/* a part unbound during the command: its repository is looked into
	 * below; the look failing: every repository is */
	if (ns_verify(sb) < 0)
		sb_plist_free(&sb->repos);
	/* a bound reached, or out of memory: the next command's scan says so */
	(void)scan_write_roots(sb);
	sb->check_new = 0;
	sb_pending_clear();
	*set_aside = !sb->planted_stuck;
	return sb->planted_now[0] != '\0' ? sb->planted_now : NULL;
}

void
ag_sandbox_command_starts(struct ag_sandbox *sb)
{
	if (sb == NULL || sb->ns_user_fd < 0 || sb->writes.n == 0)
		return;
	sb->cmd_start = now_ns();
	sb_pending_mark();
}

int
ag_sandbox_sweep(const struct ag_sandbox *sb)
{
	char c;

	if (sb == NULL || sb->ctl_fd < 0)
		return 0;
	if (write(sb->ctl_fd, "K", 1) != 1)
		return -1;
	while (read(sb->ctl_fd, &c, 1) < 0)
		if (errno != EINTR)
			return -1;
	return c == 'k' ? 0 : -1;
}

pid_t
ag_sandbox_keeper(const struct ag_sandbox *sb)
{
	return sb != NULL ? sb->keeper : 0;
}

int
ag_sandbox_egress_fds(const struct ag_sandbox *sb, int fds[2])
{
	if (sb == NULL || sb->negress <= 0)
		return 0;
	fds[0] = sb->egress_fd[0];
	fds[1] = sb->egress_fd[1];
	return sb->negress;
}
