/* zygote.c - the session's runner process; see zygote.h */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/seccomp.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "exec/execguard.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "exec/sandbox_int.h"
#include "exec/spawn.h"
#include "exec/zygote.h"

#define ZY_NAME		"agentgate-runner"
#define ZY_FLAG		"--session-runner"
#define KIT_MAGIC	0x61677a31u	/* "agz1" */
#define REQ_MAGIC	0x61677a72u	/* "agzr" */
/* a request's strings: a 96 KiB command (runner.h) and its environment */
#define REQ_MAX		(512 * 1024)
#define REQ_ARGS	64
#define REQ_ENVS	8192
#define STAT_MAX	4096	/* paths a stat request may name */

/* the runner process's fds, as it starts */
enum { ZFD_CTL = 3, ZFD_KIT, ZFD_USER, ZFD_MNT, ZFD_PID, ZFD_IPC, ZFD_NET, ZFD_OUTER,
	ZFD_END };

/* what a request carries, each when its bit is set in the mask */
enum { RF_IN, RF_OUT, RF_ERR, RF_TTY, RF_CAP, RF_SCRIPT, RF_GATE, RF_ERRFD, RF_INNER,
	RF_GUARD, RF_COUNT };

struct kit_head {
	uint32_t	magic;
	uint32_t	nrl;
	uint32_t	nfilter;	/* instructions; 0: none */
	uint32_t	fds;		/* ZFD_* present, bit (fd - ZFD_USER) */
	int64_t		gateway;
};

enum { REQ_SPAWN, REQ_STAT };

struct req_head {
	uint32_t	magic;
	uint32_t	kind;		/* REQ_* */
	uint32_t	mask;		/* RF_* */
	uint32_t	argc, envc;
	uint32_t	len;		/* of the strings that follow */
};

struct ag_zygote {
	pid_t		pid;
	int		ctl;
	unsigned long	gen;	/* the sandbox generation it holds */
};

union fds_cmsg {
	char		buf[CMSG_SPACE(sizeof(int) * RF_COUNT)];
	struct cmsghdr	align;
};

/* ---- the runner process ---------------------------------------------------- */

static void __attribute__((noreturn))
serve_fail(int step)
{
	unsigned char c[2] = { 'e', (unsigned char)step };

	(void)!write(ZFD_CTL, c, sizeof(c));
	_exit(9);
}

/* No capability left, in the session's user namespace or any. */
static int
drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	return (int)syscall(SYS_capset, &h, d);
}

/* Into the session's boundary, in the order the gateway's own child used. */
static void
enter(const struct kit_head *h, struct ag_zygote_kit *k, struct sock_fprog *fp)
{
	int i;

	for (i = 0; i < k->nrl; i++)
		if (setrlimit(k->rl[i].res, &k->rl[i].lim) < 0)
			serve_fail(2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		serve_fail(3);
	/* the user namespace first: it grants what joining the others needs */
	if (setns(ZFD_USER, CLONE_NEWUSER) < 0 || setns(ZFD_MNT, CLONE_NEWNS) < 0 ||
	    setns(ZFD_PID, CLONE_NEWPID) < 0 || setns(ZFD_IPC, CLONE_NEWIPC) < 0 ||
	    ((h->fds & (1u << (ZFD_NET - ZFD_USER))) && setns(ZFD_NET, CLONE_NEWNET) < 0))
		serve_fail(4);
	if (fp->len > 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fp, 0, 0) < 0)
		serve_fail(5);
	if ((h->fds & (1u << (ZFD_OUTER - ZFD_USER))) &&
	    syscall(SYS_landlock_restrict_self, ZFD_OUTER, 0) < 0)
		serve_fail(6);
	if (drop_caps() < 0)
		serve_fail(7);
	ag_close_range(ZFD_KIT, ~0U);
}

/* The request's strings into v (n of them), from *p; -1 if they run out. */
static int
take_strings(char **p, const char *end, char **v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		char *z = memchr(*p, '\0', (size_t)(end - *p));

		if (z == NULL)
			return -1;
		v[i] = *p;
		*p = z + 1;
	}
	v[n] = NULL;
	return 0;
}

/* The runner's child: spawn.h's steps, then the runner. */
static void __attribute__((noreturn))
runner_child(struct ag_spawn *s, int inner, int guard)
{
	ag_spawn_process(s);
	if (guard >= 0 && ag_execguard_install(guard) < 0)
		ag_spawn_fail(s->errfd, "cannot start the exec supervisor");
	ag_spawn_fds(s, inner);
	ag_spawn_exec(s);
}

/* One request: the runner's pid in the reply, or -errno. */
static int32_t
one_request(const struct req_head *h, char *str, size_t len, const int *fd, char **env,
    pid_t parent)
{
	char *p = str, *end = str + len, *path, *cwd;
	char *argv[REQ_ARGS + 1];
	struct ag_spawn s;
	pid_t pid;

	if (h->argc == 0 || h->argc > REQ_ARGS || h->envc > REQ_ENVS || h->len != len ||
	    len == 0 || str[len - 1] != '\0' ||
	    fd[RF_ERRFD] < 0 || (fd[RF_IN] < 0 || fd[RF_OUT] < 0 || fd[RF_ERR] < 0))
		return -EPROTO;
	path = p;
	p += strlen(p) + 1;
	cwd = p < end ? p : NULL;
	if (cwd != NULL)
		p += strlen(p) + 1;
	if (cwd == NULL || p > end || take_strings(&p, end, argv, h->argc) < 0 ||
	    take_strings(&p, end, env, h->envc) < 0 || p != end)
		return -EPROTO;
	s = (struct ag_spawn){ .in = fd[RF_IN], .out = fd[RF_OUT], .err = fd[RF_ERR],
	    .pt = NULL, .tty = fd[RF_TTY], .cap = fd[RF_CAP], .script = fd[RF_SCRIPT],
	    .gate = fd[RF_GATE], .errfd = fd[RF_ERRFD], .parent = parent, .cwd = cwd,
	    .path = path, .argv = argv, .env = env };
	/* the gateway's child, born in the session's PID namespace */
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL,
	    NULL, 0UL);
	if (pid == 0)
		runner_child(&s, fd[RF_INNER], fd[RF_GUARD]);
	return pid < 0 ? -errno : (int32_t)pid;
}

/* A stat request: each path as the session's mount namespace has it. */
static void
stat_request(const struct req_head *h, char *str, size_t len, struct ag_zygote_stat *out)
{
	char *p = str, *end = str + len;
	uint32_t i;

	for (i = 0; i < h->argc; i++) {
		struct statx sx;
		char *z = memchr(p, '\0', (size_t)(end - p));
		int fd;

		memset(&out[i], 0, sizeof(out[i]));
		if (z == NULL)
			continue;
		if ((fd = sb_open_nolinks(p)) >= 0) {
			if (statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx) == 0) {
				out[i].found = 1;
				out[i].dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
				out[i].ino = sx.stx_ino;
				out[i].mount_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
				    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
			}
			close(fd);
		}
		p = z + 1;
	}
}

/*
 * Read requests until the gateway closes the socket.  buf (REQ_MAX) and
 * env (REQ_ENVS + 1) were allocated before the limits: an address space
 * limit below what the process maps already (AddressSanitizer reserves
 * terabytes) would refuse every later allocation, and none is made.
 */
static void __attribute__((noreturn))
serve(char *buf, char **env, struct ag_zygote_stat *st, pid_t parent)
{
	for (;;) {
		struct req_head h;
		struct iovec iov[2] = { { &h, sizeof(h) }, { buf, REQ_MAX } };
		union fds_cmsg u;
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
		    .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *cm;
		int fd[RF_COUNT], got[RF_COUNT], ngot = 0, i, k;
		int32_t reply;
		ssize_t n;

		memset(&u, 0, sizeof(u));
		n = recvmsg(ZFD_CTL, &mh, MSG_CMSG_CLOEXEC);
		if (n == 0)
			_exit(0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(9);
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (i = 0; i < (int)nfd && ngot < RF_COUNT; i++)
					memcpy(&got[ngot++], CMSG_DATA(cm) + i * sizeof(int),
					    sizeof(int));
			}
		if ((size_t)n < sizeof(h))
			h.mask = 0;
		for (i = k = 0; i < RF_COUNT; i++)
			fd[i] = (h.mask & (1u << i)) && k < ngot ? got[k++] : -1;
		if ((size_t)n < sizeof(h) || h.magic != REQ_MAGIC ||
		    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || k != ngot ||
		    (uint32_t)__builtin_popcount(h.mask) != (uint32_t)ngot)
			reply = -EPROTO;
		else if (h.kind == REQ_STAT && ngot == 0 && h.argc <= STAT_MAX &&
		    h.len == (size_t)n - sizeof(h)) {
			stat_request(&h, buf, (size_t)n - sizeof(h), st);
			if (send(ZFD_CTL, st, sizeof(*st) * h.argc, MSG_NOSIGNAL) < 0)
				_exit(9);
			continue;
		} else if (h.kind == REQ_SPAWN)
			reply = one_request(&h, buf, (size_t)n - sizeof(h), fd, env, parent);
		else
			reply = -EPROTO;
		for (i = 0; i < ngot; i++)
			close(got[i]);
		if (send(ZFD_CTL, &reply, sizeof(reply), MSG_NOSIGNAL) != sizeof(reply))
			_exit(9);
	}
}

/*
 * Before main(), in every program of the tree: when started by
 * ag_zygote_start, be the session's runner process.  Run by hand under
 * that name it is only the caller's own: the group is given up first,
 * and what it does the caller may do anyway.
 */
static void __attribute__((constructor))
zygote_entry(int argc, char **argv, char **envp)
{
	static const int quiet[] = { SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU,
	    SIGPIPE, SIGWINCH, SIGUSR1, SIGUSR2, SIGALRM };
	struct ag_zygote_kit k;
	struct kit_head h;
	struct sock_filter *ins = NULL;
	struct sock_fprog fp = { 0, NULL };
	struct ag_zygote_stat *st;
	char *buf, **env;
	gid_t g = getgid(), r, e, s;
	pid_t gateway;
	size_t i;

	(void)envp;
	if (argc != 2 || strcmp(argv[0], ZY_NAME) != 0 || strcmp(argv[1], ZY_FLAG) != 0)
		return;
	if (setresgid(g, g, g) < 0 || getresgid(&r, &e, &s) < 0 || e != g || s != g)
		_exit(9);
	(void)prctl(PR_SET_NAME, ZY_NAME, 0, 0, 0);	/* not "exe" in ps */
	/* not readable by the commands' account while it lives (/proc/PID/mem) */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		serve_fail(1);
	memset(&k, 0, sizeof(k));
	if (ag_read_all(ZFD_KIT, &h, sizeof(h)) < 0 || h.magic != KIT_MAGIC ||
	    h.nrl > AG_ZYGOTE_MAX_RLIMITS || h.nfilter > 4096 ||
	    ag_read_all(ZFD_KIT, k.rl, sizeof(k.rl[0]) * h.nrl) < 0)
		serve_fail(1);
	k.nrl = (int)h.nrl;
	if (h.nfilter > 0) {
		if ((ins = calloc(h.nfilter, sizeof(*ins))) == NULL ||
		    ag_read_all(ZFD_KIT, ins, sizeof(*ins) * h.nfilter) < 0)
			serve_fail(1);
		fp.len = (unsigned short)h.nfilter;
		fp.filter = ins;
	}
	if ((buf = malloc(REQ_MAX)) == NULL || (env = calloc(REQ_ENVS + 1, sizeof(*env))) == NULL ||
	    (st = calloc(STAT_MAX, sizeof(*st))) == NULL)
		serve_fail(1);
	/* a stat answer for STAT_MAX paths is one message */
	(void)setsockopt(ZFD_CTL, SOL_SOCKET, SO_SNDBUF,
	    &(int){ (int)(sizeof(*st) * STAT_MAX) + 4096 }, sizeof(int));
	gateway = (pid_t)h.gateway;
	/* its runners never inherit the socket, whatever they keep */
	if (fcntl(ZFD_CTL, F_SETFD, FD_CLOEXEC) < 0)
		serve_fail(1);
	/* dies with the gateway; and if that happened already, goes now */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != gateway)
		_exit(9);
	/* what the terminal or sshd sends the gateway's group is not for it;
	 * each runner puts every signal back to its default (spawn.c) */
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	enter(&h, &k, &fp);
	free(ins);
	if (write(ZFD_CTL, "r", 1) != 1)
		_exit(9);
	/* its runners are in the session's PID namespace: their parent, the
	 * gateway, is outside it, and getppid() says 0 there */
	serve(buf, env, st, 0);
}

/* ---- the gateway's side ------------------------------------------------------ */

static int
kit_write(int fd, const struct ag_zygote_kit *k, pid_t gateway)
{
	struct kit_head h = { .magic = KIT_MAGIC, .nrl = (uint32_t)k->nrl,
	    .nfilter = k->filter != NULL ? k->filter->len : 0, .gateway = gateway };

	h.fds = (1u << 0) | (1u << 1) | (1u << 2) | (1u << (ZFD_IPC - ZFD_USER)) |
	    (k->net_fd >= 0 ? 1u << (ZFD_NET - ZFD_USER) : 0) |
	    (k->outer_fd >= 0 ? 1u << (ZFD_OUTER - ZFD_USER) : 0);
	if (ag_write_all(fd, &h, sizeof(h), NULL) < 0 ||
	    ag_write_all(fd, k->rl, sizeof(k->rl[0]) * (size_t)k->nrl, NULL) < 0 ||
	    (h.nfilter > 0 &&
	    ag_write_all(fd, k->filter->filter, sizeof(*k->filter->filter) * h.nfilter, NULL) < 0))
		return -1;
	return 0;
}

/* In the forked child: never returns. */
static void __attribute__((noreturn))
start_child(int ctl, int kit, const struct ag_zygote_kit *k)
{
	static char name[] = ZY_NAME, flag[] = ZY_FLAG;
	char *const argv[] = { name, flag, NULL };
	char *const envp[] = { NULL };
	int src[ZFD_END - ZFD_CTL] = { ctl, kit, k->user_fd, k->mnt_fd, k->pid_fd, k->ipc_fd,
	    k->net_fd, k->outer_fd };
	int i;

	if (ag_privsep_child() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(9);
	/* above every target first, so that no move overwrites a source */
	for (i = 0; i < ZFD_END - ZFD_CTL; i++)
		if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, ZFD_END)) < 0)
			_exit(9);
	for (i = 0; i < ZFD_END - ZFD_CTL; i++)
		if (src[i] >= 0 && dup2(src[i], ZFD_CTL + i) < 0)
			_exit(9);
	ag_close_range(ZFD_END, ~0U);
	/* not the gateway's stdio (the ssh channel): nothing of it here */
	if ((i = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 || dup2(i, 0) < 0 || dup2(i, 1) < 0 ||
	    dup2(i, 2) < 0)
		_exit(9);
	execve("/proc/self/exe", argv, envp);
	_exit(9);
}

struct ag_zygote *
ag_zygote_start(const struct ag_zygote_kit *k, struct ag_err *err)
{
	static const char *const steps[] = { "", "reading its kit", "the limits",
	    "no_new_privs", "joining the namespaces", "the seccomp filter",
	    "the Landlock ruleset", "dropping capabilities" };
	struct ag_zygote *z;
	int sv[2], kit[2] = { -1, -1 }, st;
	unsigned char c[2] = { 0, 0 };
	ssize_t n;

	if (k->user_fd < 0 || k->mnt_fd < 0 || k->pid_fd < 0 || k->ipc_fd < 0) {
		ag_err_set(err, "no session namespaces to run in");
		return NULL;
	}
	if ((z = calloc(1, sizeof(*z))) == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ag_err_set(err, "socketpair: %s", strerror(errno));
		free(z);
		return NULL;
	}
	/* the kit fits a pipe's buffer: written before the fork, read after */
	if (pipe2(kit, O_CLOEXEC) < 0 || kit_write(kit[1], k, getpid()) < 0) {
		ag_err_set(err, "the runner process's kit: %s", strerror(errno));
		goto fail;
	}
	close(kit[1]);
	kit[1] = -1;
	if ((z->pid = fork()) < 0) {
		ag_err_set(err, "fork: %s", strerror(errno));
		goto fail;
	}
	if (z->pid == 0)
		start_child(sv[1], kit[0], k);
	close(sv[1]);
	close(kit[0]);
	z->ctl = sv[0];
	while ((n = read(z->ctl, c, sizeof(c))) < 0 && errno == EINTR)
		;
	if (n == 1 && c[0] == 'r') {
		/* a request bigger than the default socket buffer is refused by
		 * the kernel (EMSGSIZE): the caller forks the runner itself */
		(void)setsockopt(z->ctl, SOL_SOCKET, SO_SNDBUF, &(int){ REQ_MAX + 4096 },
		    sizeof(int));
		return z;
	}
	ag_err_set(err, "the session's runner process did not start (%s)",
	    n == 2 && c[0] == 'e' && c[1] < sizeof(steps) / sizeof(steps[0]) ? steps[c[1]] :
	    "it ended");
	close(z->ctl);
	(void)kill(z->pid, SIGKILL);
	while (waitpid(z->pid, &st, 0) < 0 && errno == EINTR)
		;
	free(z);
	return NULL;
fail:
	close(sv[0]);
	close(sv[1]);
	if (kit[0] >= 0)
		close(kit[0]);
	if (kit[1] >= 0)
		close(kit[1]);
	free(z);
	return NULL;
}

pid_t
ag_zygote_pid(const struct ag_zygote *z)
{
	return z->pid;
}

/* s's strings, NUL after each: runner, cwd, argv, env. */
static char *
req_strings(const struct ag_spawn *s, uint32_t *argc, uint32_t *envc, size_t *len)
{
	size_t n = strlen(s->path) + strlen(s->cwd) + 2, i;
	char *buf, *p;

	for (i = 0; s->argv[i] != NULL; i++)
		n += strlen(s->argv[i]) + 1;
	*argc = (uint32_t)i;
	for (i = 0; s->env[i] != NULL; i++)
		n += strlen(s->env[i]) + 1;
	*envc = (uint32_t)i;
	if (n > REQ_MAX || *argc > REQ_ARGS || *envc > REQ_ENVS || (buf = malloc(n)) == NULL) {
		errno = EMSGSIZE;
		return NULL;
	}
	p = buf;
	p = stpcpy(p, s->path) + 1;
	p = stpcpy(p, s->cwd) + 1;
	for (i = 0; s->argv[i] != NULL; i++)
		p = stpcpy(p, s->argv[i]) + 1;
	for (i = 0; s->env[i] != NULL; i++)
		p = stpcpy(p, s->env[i]) + 1;
	*len = n;
	return buf;
}

pid_t
ag_zygote_spawn(struct ag_zygote *z, const struct ag_spawn *s, int inner, int guard)
{
	const int slot[RF_COUNT] = { s->in, s->out, s->err, s->tty, s->cap, s->script, s->gate,
	    s->errfd, inner, guard };
	struct req_head h = { .magic = REQ_MAGIC, .kind = REQ_SPAWN };
	union fds_cmsg u;
	struct iovec iov[2];
	struct msghdr mh;
	struct cmsghdr *cm;
	int fds[RF_COUNT], nfd = 0, i, e;
	int32_t reply;
	size_t len;
	char *str;
	ssize_t n;

	if (s->pt != NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((str = req_strings(s, &h.argc, &h.envc, &len)) == NULL)
		return -1;
	h.len = (uint32_t)len;
	for (i = 0; i < RF_COUNT; i++)
		if (slot[i] >= 0) {
			h.mask |= 1u << i;
			fds[nfd++] = slot[i];
		}
	memset(&u, 0, sizeof(u));
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ str, len };
	mh = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
	    .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd) };
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfd);
	while ((n = sendmsg(z->ctl, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	e = errno;
	free(str);
	if (n < 0) {
		errno = e == EMSGSIZE || e == ENOBUFS ? EMSGSIZE : EPIPE;
		return -1;
	}
	while ((n = recv(z->ctl, &reply, sizeof(reply), 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(reply)) {
		errno = EPIPE;
		return -1;
	}
	if (reply < 0) {
		errno = (int)-reply;
		return -1;
	}
	return (pid_t)reply;
}

void
ag_zygote_stop(struct ag_zygote *z)
{
	if (z == NULL)
		return;
	close(z->ctl);
	(void)kill(z->pid, SIGKILL);
	while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(z);
}

int
ag_zygote_stat(struct ag_zygote *z, const char *const *paths, size_t n,
    struct ag_zygote_stat *out)
{
	struct req_head h = { .magic = REQ_MAGIC, .kind = REQ_STAT, .argc = (uint32_t)n };
	struct iovec iov[2];
	struct msghdr mh;
	size_t len = 0, i;
	char *str, *p;
	ssize_t got;
	int e;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		len += strlen(paths[i]) + 1;
	if (n > STAT_MAX || len > REQ_MAX || (str = malloc(len)) == NULL) {
		errno = EMSGSIZE;
		return -1;
	}
	for (p = str, i = 0; i < n; i++)
		p = stpcpy(p, paths[i]) + 1;
	h.len = (uint32_t)len;
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ str, len };
	mh = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 };
	while ((got = sendmsg(z->ctl, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	e = errno;
	free(str);
	if (got < 0) {
		errno = e == EMSGSIZE || e == ENOBUFS ? EMSGSIZE : EPIPE;
		return -1;
	}
	while ((got = recv(z->ctl, out, sizeof(*out) * n, 0)) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)(sizeof(*out) * n)) {
		errno = EPIPE;
		return -1;
	}
	return 0;
}

/* ---- the one of this process ------------------------------------------------- */

static struct ag_zygote *current;	/* of the sandbox generation it names */
static unsigned long failed;		/* the generation it could not start for */

struct ag_zygote *
ag_zygote_of(const struct ag_sandbox *sb)
{
	unsigned long gen = ag_sandbox_generation(sb);
	struct ag_zygote_kit kit;
	struct ag_err err;

	if (current != NULL && current->gen != gen)
		ag_zygote_forget(current);
	if (current != NULL)
		return current;
	if (failed == gen || ag_sandbox_zygote_kit(sb, &kit) < 0)
		return NULL;
	if ((current = ag_zygote_start(&kit, &err)) == NULL) {
		ag_log(LOG_WARNING, "sandbox: %s; each command's runner is forked by the "
		    "gateway", err.msg);
		failed = gen;
		return NULL;
	}
	current->gen = gen;
	ag_runner_keep_child(current->pid, 1);
	return current;
}

void
ag_zygote_forget(struct ag_zygote *z)
{
	if (z == NULL)
		return;
	if (z == current)
		current = NULL;
	ag_runner_keep_child(z->pid, 0);
	ag_zygote_stop(z);
}

void
ag_zygote_release(const struct ag_sandbox *sb)
{
	if (current != NULL && current->gen == ag_sandbox_generation(sb))
		ag_zygote_forget(current);
}
