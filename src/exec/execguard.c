/*
 * execguard.c - the exec supervisor (see execguard.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "exec/bpf.h"
#include "exec/execfile.h"
#include "exec/execguard.h"
#include "exec/sockconnect.h"
#include "common/log.h"


#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE	(1UL << 0)
#endif

#define PAGE	4096

struct ag_execguard {
	ag_execguard_judge_fn	 judge;
	void			*ctx;
	const struct ag_unix_rules *unix_rules;
	int			 sock;		/* our end: the listener arrives here */
	int			 child_sock;	/* the child's end, until started */
	int			 stop[2];	/* written by finish */
	int			 running;
	pthread_t		 th;
	struct ag_exec_denial	*denials;
	size_t			 ndenials;	/* execs and connects, in one list */
	size_t			 nexecs, nconns;	/* of each, at most MAX_DENIALS - 1 */
	unsigned long		 ndropped;	/* execs refused past the list's room */
	unsigned long		 nconns_dropped;	/* connects, the same */
	struct ag_exec_ran	 ran;		/* files let run (execguard.h) */
};

/* ---- child side ----------------------------------------------------------- */

/* The one-byte message that carries the listener (SCM_RIGHTS). */
union cmsg_buf {
	char		buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr	align;
};

static void
fd_msg(struct msghdr *mh, struct iovec *iov, char *byte, union cmsg_buf *u)
{
	memset(mh, 0, sizeof(*mh));
	memset(u, 0, sizeof(*u));
	iov->iov_base = byte;
	iov->iov_len = 1;
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	mh->msg_control = u->buf;
	mh->msg_controllen = sizeof(u->buf);
}

int
ag_execguard_child(const struct ag_execguard *g)
{
	close(g->sock);
	close(g->stop[0]);
	close(g->stop[1]);
	return ag_execguard_install(g->child_sock);
}

int
ag_execguard_install(int sock)
{
#ifdef AG_AUDIT_ARCH
	enum { NEXT = AG_BPF_NEXT, ALLOW, NOTIFY };
	struct ag_bpf b;
	struct sock_fprog fp;
	union cmsg_buf u;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	char c = 'L';
	long fd;
	int rc;

	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_ARCH);
	/* a foreign ABI is the sandbox filter's business (it refuses it) */
	ag_bpf_jeq(&b, AG_AUDIT_ARCH, NEXT, ALLOW);
	ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_jeq(&b, SYS_execve, NOTIFY, NEXT);
	ag_bpf_jeq(&b, SYS_execveat, NOTIFY, NEXT);
	/* a UNIX socket's connect is made by the supervisor (sockconnect.h) */
	ag_bpf_jeq(&b, SYS_connect, NOTIFY, ALLOW);
	ag_bpf_label(&b, ALLOW);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	ag_bpf_label(&b, NOTIFY);
	ag_bpf_ret(&b, SECCOMP_RET_USER_NOTIF);
	if (ag_bpf_finish(&b, &fp) < 0)
		return -1;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	if (fd < 0)
		return -1;
	fd_msg(&mh, &iov, &c, &u);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &(int){ (int)fd }, sizeof(int));
	while ((rc = (int)sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	close((int)fd);
	close(sock);
	return rc == 1 ? 0 : -1;
#else
	(void)sock;
	errno = ENOSYS;
	return -1;
#endif
}

/* ---- reading the stopped process --------------------------------------- */

/* Copy a NUL-terminated string of at most max bytes (NUL included) from
 * the process, a page at a time so that a string ending just before an
 * unmapped page is still read.  Its length, or -1. */
static ssize_t
read_str(pid_t pid, uint64_t addr, char *out, size_t max)
{
	size_t got = 0;

	while (got < max) {
		size_t chunk = PAGE - (size_t)((addr + got) % PAGE);
		struct iovec l, r;
		ssize_t n;
		char *z;

		if (chunk > max - got)
			chunk = max - got;
		l.iov_base = out + got;
		l.iov_len = chunk;
		r.iov_base = (void *)(uintptr_t)(addr + got);
		r.iov_len = chunk;
		if ((n = process_vm_readv(pid, &l, 1, &r, 1, 0)) <= 0)
			return -1;
		if ((z = memchr(out + got, '\0', (size_t)n)) != NULL)
			return z - out;
		got += (size_t)n;
	}
	return -1;	/* longer than max */
}

static int
read_ptr(pid_t pid, uint64_t addr, uint64_t *v)
{
	struct iovec l = { v, sizeof(*v) }, r = { (void *)(uintptr_t)addr, sizeof(*v) };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* readlink of /proc/PID/<what>, NUL-terminated; -1 on failure */
static int
proc_link(pid_t pid, const char *what, char *out, size_t outsz)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%ld/%s", (long)pid, what);
	if ((n = readlink(p, out, outsz - 1)) < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* What one notification asks to run; all storage in the caller's buffers. */
struct req_buf {
	char	 path[PATH_MAX];
	char	 cwd[PATH_MAX];
	/* the name the kernel hands a script's interpreter: the exec's own
	 * (relative as given; /dev/fd/D/NAME or /dev/fd/D from a dirfd), a
	 * nested script's its #! interpreter as written */
	char	 kname[PATH_MAX];
	char	*strs;		/* AG_EXECGUARD_MAX_BYTES */
	size_t	 used;		/* of strs */
	char	*argv[AG_EXECGUARD_MAX_ARGS + 1];
	int	 fd;		/* the file (O_PATH, execfile.h), or -1 */
};

/*
 * The file the exec (or a script's #! line) names, opened as the process
 * would find it, its device and inode put in req.  0; -1 to refuse
 * (reason and rule filled), or with *quiet set to the errno the kernel
 * itself would answer (nothing there: a PATH search tries each entry; not
 * a regular file), which is not recorded.
 */
static int
file_of(pid_t pid, int dirfd, const char *name, int flags, struct req_buf *b,
    struct ag_exec_req *req, char *reason, size_t rsz, char *rule, size_t rulesz, int *quiet)
{
	struct stat st;
	int fd;

	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	if ((fd = ag_execfile_open(pid, dirfd, name, flags)) < 0) {
		if (fd == -ENOENT || fd == -ENOTDIR) {
			*quiet = -fd;
			return -1;
		}
		snprintf(reason, rsz, "denied: the gateway could not follow '%s' to the file it "
		    "names as the process would (%s), so it cannot tell which program it is",
		    req->path != NULL ? req->path : name, strerror(-fd));
		snprintf(rule, rulesz, "exec:unresolved");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*quiet = EACCES;	/* the kernel runs regular files only */
		return -1;
	}
	b->fd = fd;
	req->dev = st.st_dev;
	req->ino = st.st_ino;
	return 0;
}

/*
 * A script runs its #! interpreter within the same execve, which no other
 * exec shows: after the exec as asked is judged, the request becomes the
 * exec the kernel will do (INTERP [ARG] SCRIPT ARGS...) and is judged
 * again, level by level, so that `#!/usr/bin/git push` as a script's first
 * line is judged as git push while /usr/bin/npm (a node script) is still
 * judged as npm.  The file is read through the descriptor file_of opened
 * (the file the kernel runs, even deleted); one the gateway may not read
 * is refused: the kernel reads it whatever its mode (an execute-only
 * `#!/usr/bin/git push` pushes).  1 when req became its interpreter's
 * exec, 0 when it is no script, -1 to refuse (reason and rule filled, or
 * *quiet as file_of).
 */
#define MAX_INTERP_DEPTH	5		/* binfmt_script's nesting, and then some */

static int
interp_level(pid_t pid, struct req_buf *b, struct ag_exec_req *req, char *reason,
    size_t rsz, char *rule, size_t rulesz, int *quiet)
{
	char head[256], *p, *interp, *arg = NULL, *end;
	size_t need, i, add;
	ssize_t n;
	int fd;

	if (b->fd < 0 || (fd = ag_execfile_reopen(b->fd)) < 0) {
		snprintf(reason, rsz, "denied: the gateway may not read '%s', so it cannot see "
		    "what it runs (a script's first line names its interpreter); make it "
		    "readable (chmod +r)", req->path);
		snprintf(rule, rulesz, "exec:unreadable");
		return -1;
	}
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 0) {
		snprintf(reason, rsz, "denied: the gateway could not read '%s' (%s), so it "
		    "cannot see what it runs", req->path, strerror(errno));
		snprintf(rule, rulesz, "exec:unreadable");
		return -1;
	}
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return 0;
	head[n] = '\0';
	if ((p = strchr(head, '\n')) != NULL)
		*p = '\0';
	for (p = head + 2; *p == ' ' || *p == '\t'; p++)
		;
	interp = p;
	while (*p != '\0' && *p != ' ' && *p != '\t')
		p++;
	if (*p != '\0') {
		*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		/* the rest of the line is one argument, trailing blanks cut */
		for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		if (*p != '\0')
			arg = p;
	}
	if (*interp == '\0')
		return 0;
	add = arg != NULL ? 2 : 1;
	need = strlen(interp) + 1 + (arg ? strlen(arg) + 1 : 0) + strlen(b->kname) + 1;
	if (req->argc + add > AG_EXECGUARD_MAX_ARGS || b->used + need > AG_EXECGUARD_MAX_BYTES) {
		snprintf(reason, rsz, "denied: the arguments of an exec are too many or too long "
		    "to check (at most %d arguments, %d bytes)", AG_EXECGUARD_MAX_ARGS,
		    AG_EXECGUARD_MAX_BYTES);
		snprintf(rule, rulesz, "exec:unreadable");
		return -1;
	}
	/* INTERP [ARG] SCRIPT, then the script's own arguments after argv[0]:
	 * SCRIPT as the kernel passes it, the name the exec gave (a relative
	 * `publish` stays one: the interpreter takes it as its own word) */
	for (i = req->argc; i >= 1; i--)
		b->argv[i + add] = b->argv[i];
	b->argv[add] = strcpy(b->strs + b->used, b->kname);
	b->used += strlen(b->kname) + 1;
	b->argv[0] = strcpy(b->strs + b->used, interp);
	b->used += strlen(interp) + 1;
	if (arg != NULL) {
		b->argv[1] = strcpy(b->strs + b->used, arg);
		b->used += strlen(arg) + 1;
	}
	req->argc += add;
	b->argv[req->argc] = NULL;
	req->argv = b->argv;
	/* a nested script gets this interpreter's name as written */
	snprintf(b->kname, sizeof(b->kname), "%s", b->argv[0]);
	/* the interpreter, as the kernel finds it (relative: from the cwd) */
	if (interp[0] == '/')
		snprintf(b->path, sizeof(b->path), "%s", b->argv[0]);
	else if (req->cwd == NULL || (size_t)snprintf(b->path, sizeof(b->path), "%s/%s",
	    req->cwd, b->argv[0]) >= sizeof(b->path)) {
		snprintf(reason, rsz, "denied: the interpreter of a script could not be found");
		snprintf(rule, rulesz, "exec:unreadable");
		return -1;
	}
	req->path = b->path;
	/* the interpreter's file, as the kernel opens it (from the cwd) */
	if (file_of(pid, AT_FDCWD, b->argv[0], 0, b, req, reason, rsz, rule, rulesz, quiet) < 0)
		return -1;
	return 1;
}

/* 0 ok (req filled), -1 refuse (reason filled) */
static int
read_request(const struct seccomp_notif *n, struct req_buf *b, struct ag_exec_req *req,
    char *reason, size_t rsz, char *rule, size_t rulesz, int *quiet)
{
	pid_t pid = (pid_t)n->pid;
	int at = n->data.nr == SYS_execveat;
	uint64_t paddr = at ? n->data.args[1] : n->data.args[0];
	uint64_t aaddr = at ? n->data.args[2] : n->data.args[1];
	int dirfd = at ? (int)n->data.args[0] : AT_FDCWD;
	int flags = at ? (int)n->data.args[4] : 0;
	char raw[PATH_MAX], base[PATH_MAX];
	size_t used = 0, argc = 0;
	ssize_t len;

	memset(req, 0, sizeof(*req));
	req->pid = pid;
	if ((len = read_str(pid, paddr, raw, sizeof(raw))) < 0) {
		snprintf(reason, rsz, "denied: the program path of an exec could not be read");
		return -1;
	}
	if (proc_link(pid, "cwd", b->cwd, sizeof(b->cwd)) == 0)
		req->cwd = b->cwd;
	if (raw[0] == '/') {
		snprintf(b->path, sizeof(b->path), "%s", raw);
	} else {
		char what[32];

		if (dirfd == AT_FDCWD)
			snprintf(what, sizeof(what), "cwd");
		else
			snprintf(what, sizeof(what), "fd/%d", dirfd);
		if (proc_link(pid, what, base, sizeof(base)) < 0) {
			snprintf(reason, rsz, "denied: the directory of an exec could not be read");
			return -1;
		}
		if (raw[0] == '\0' && (flags & AT_EMPTY_PATH))
			snprintf(b->path, sizeof(b->path), "%s", base);	/* fexecve */
		else if ((size_t)snprintf(b->path, sizeof(b->path), "%s/%s", base, raw) >=
		    sizeof(b->path)) {
			snprintf(reason, rsz, "denied: the program path of an exec is too long");
			return -1;
		}
	}
	req->path = b->path;
	/* as the kernel names it for an interpreter (fs/exec.c, alloc_bprm) */
	if (dirfd == AT_FDCWD || raw[0] == '/')
		snprintf(b->kname, sizeof(b->kname), "%s", raw);
	else if (raw[0] == '\0')
		snprintf(b->kname, sizeof(b->kname), "/dev/fd/%d", dirfd);
	else if ((size_t)snprintf(b->kname, sizeof(b->kname), "/dev/fd/%d/%s", dirfd, raw) >=
	    sizeof(b->kname)) {
		snprintf(reason, rsz, "denied: the program path of an exec is too long");
		return -1;
	}
	/* argv: a NULL-terminated array of pointers (a NULL argv is allowed) */
	while (aaddr != 0) {
		uint64_t p;

		if (read_ptr(pid, aaddr + 8 * argc, &p) < 0) {
			snprintf(reason, rsz, "denied: the arguments of an exec could not be read");
			return -1;
		}
		if (p == 0)
			break;
		if (argc >= AG_EXECGUARD_MAX_ARGS ||
		    (len = read_str(pid, p, b->strs + used, AG_EXECGUARD_MAX_BYTES - used)) < 0) {
			snprintf(reason, rsz, "denied: the arguments of an exec are too many or "
			    "too long to check (at most %d arguments, %d bytes)",
			    AG_EXECGUARD_MAX_ARGS, AG_EXECGUARD_MAX_BYTES);
			return -1;
		}
		b->argv[argc++] = b->strs + used;
		used += (size_t)len + 1;
	}
	b->argv[argc] = NULL;
	req->argv = b->argv;
	req->argc = argc;
	b->used = used;
	/* the program is the file the kernel will run, not its name */
	return file_of(pid, dirfd, raw, flags, b, req, reason, rsz, rule, rulesz, quiet);
}

int
ag_execguard_file_id(pid_t pid, const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int fd = ag_execfile_open(pid, AT_FDCWD, path, 0), rc;

	if (fd < 0)
		return -1;
	rc = fstat(fd, &st);
	close(fd);
	if (rc < 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* ---- the thread ------------------------------------------------------------ */

/*
 * A slot of the list for the audit, or NULL past its room (counted): each
 * kind has AG_EXECGUARD_MAX_DENIALS - 1 places and one for how many more
 * there were (finish), so execs cannot crowd connects out.
 */
#define LIST_ROOM	(2 * AG_EXECGUARD_MAX_DENIALS)

static struct ag_exec_denial *
slot(struct ag_execguard *g, int conn)
{
	size_t *used = conn ? &g->nconns : &g->nexecs;
	struct ag_exec_denial *d;

	if (*used >= AG_EXECGUARD_MAX_DENIALS - 1) {
		if (conn)
			g->nconns_dropped++;
		else
			g->ndropped++;
		return NULL;
	}
	if (g->denials == NULL && (g->denials = calloc(LIST_ROOM, sizeof(*g->denials))) == NULL)
		return NULL;
	(*used)++;
	d = &g->denials[g->ndenials++];
	memset(d, 0, sizeof(*d));
	return d;
}

/* Room for one more connect in the list (sockconnect.h: one the profile
 * names is refused without it, so none goes unrecorded). */
static int
conn_room(const struct ag_execguard *g)
{
	return g->nconns < AG_EXECGUARD_MAX_DENIALS - 1;
}

static void
keep_denial(struct ag_execguard *g, const struct ag_exec_req *req, const char *reason,
    const char *rule, int would)
{
	struct ag_exec_denial *d;
	size_t i;

	/* a shell tries each PATH entry in turn: one refusal is enough */
	for (i = 0; i < g->ndenials; i++) {
		const struct ag_exec_denial *o = &g->denials[i];
		size_t k;

		if (o->is_connect || o->argc != req->argc || o->rule == NULL ||
		    strcmp(o->rule, rule) != 0)
			continue;
		for (k = 0; k < req->argc && o->argv[k] != NULL; k++)
			if (strcmp(o->argv[k], req->argv[k]) != 0)
				break;
		if (k == req->argc)
			return;
	}
	if ((d = slot(g, 0)) == NULL)
		return;
	d->would = would;
	d->path = strdup(req->path ? req->path : "");
	d->reason = strdup(reason);
	d->rule = strdup(rule);
	d->argv = calloc(req->argc + 1, sizeof(*d->argv));
	for (i = 0; d->argv != NULL && i < req->argc; i++)
		if ((d->argv[i] = strdup(req->argv[i])) == NULL)
			break;
	d->argc = i;
}

/*
 * The files one exec was let run (the program, then each #! interpreter),
 * gathered while it is judged and kept only once it goes on.
 */
struct let_run {
	char	*path[MAX_INTERP_DEPTH + 2];
	size_t	 n;
};

static void
let_run_note(struct let_run *l, const struct ag_exec_req *req)
{
	if (l->n < sizeof(l->path) / sizeof(l->path[0]) && req->path != NULL &&
	    req->path[0] != '\0')
		l->path[l->n++] = strdup(req->path);	/* NULL: counted below */
}

/* The exec went on: its files join the command's list, once each. */
static void
keep_ran(struct ag_execguard *g, struct let_run *l)
{
	struct ag_exec_ran *r = &g->ran;
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		char *p = l->path[i];

		l->path[i] = NULL;
		for (k = 0; p != NULL && k < r->npaths; k++)
			if (strcmp(r->paths[k], p) == 0)
				break;
		if (p != NULL && k < r->npaths) {
			free(p);
			continue;
		}
		if (r->paths == NULL && (r->paths = calloc(AG_EXECGUARD_MAX_RAN,
		    sizeof(*r->paths))) == NULL) {
			free(p);
			r->more++;
			continue;
		}
		if (p == NULL || r->npaths >= AG_EXECGUARD_MAX_RAN) {
			free(p);
			r->more++;	/* not listed, never unsaid */
			continue;
		}
		r->paths[r->npaths++] = p;
	}
	l->n = 0;
}

static void
let_run_drop(struct let_run *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->path[i]);
	l->n = 0;
}

/* A connect refused, or made to a socket network.unix names. */
static void
keep_connect(struct ag_execguard *g, const struct ag_conn_note *note)
{
	struct ag_exec_denial *d;
	size_t i;

	for (i = 0; i < g->ndenials; i++)	/* a client that retries: once */
		if (g->denials[i].is_connect && g->denials[i].allowed == note->allowed &&
		    g->denials[i].path != NULL && strcmp(g->denials[i].path, note->path) == 0 &&
		    (g->denials[i].error == NULL) == (note->error[0] == '\0'))
			return;	/* a failed connect and a good one are both told */
	if ((d = slot(g, 1)) == NULL)
		return;
	d->is_connect = 1;
	d->allowed = note->allowed;
	d->proto = strdup(note->proto);
	d->error = note->error[0] != '\0' ? strdup(note->error) : NULL;
	d->path = strdup(note->path);
	d->reason = strdup(note->reason);
	d->rule = strdup(note->rule);
	d->argv = calloc(1, sizeof(*d->argv));
}

/* One stopped connect (sockconnect.h). */
static void
answer_connect(struct ag_execguard *g, int listener, const struct seccomp_notif *n,
    struct seccomp_notif_resp *resp)
{
	struct ag_conn_note note;
	int noted = ag_sockconnect_answer(listener, n, g->unix_rules, conn_room(g), resp, &note);

	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		ag_log(LOG_WARNING, "exec supervisor: answer lost: %s", strerror(errno));
	if (noted)
		keep_connect(g, &note);
}

static void
serve(struct ag_execguard *g, int listener)
{
	struct seccomp_notif_sizes sz;
	struct seccomp_notif *n = NULL;
	struct seccomp_notif_resp *resp = NULL;
	struct req_buf *b = NULL;
	int first = 1;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0 ||
	    (n = calloc(1, sz.seccomp_notif > sizeof(*n) ? sz.seccomp_notif : sizeof(*n))) == NULL ||
	    (resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp :
	    sizeof(*resp))) == NULL || (b = calloc(1, sizeof(*b))) == NULL ||
	    (b->strs = malloc(AG_EXECGUARD_MAX_BYTES)) == NULL) {
		if (b != NULL)
			b->fd = -1;
		ag_log(LOG_ERR, "exec supervisor: cannot start: %s", strerror(errno));
		goto out;	/* closing the listener fails every exec: closed */
	}
	b->fd = -1;
	for (;;) {
		struct pollfd pf[2] = { { .fd = listener, .events = POLLIN },
		    { .fd = g->stop[0], .events = POLLIN } };
		struct ag_exec_req req;
		struct let_run lr = { .n = 0 };
		char reason[1024] = "", rule[256] = "exec";
		int ok, quiet = 0;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break;	/* no process uses the filter any more */
		if (!(pf[0].revents & POLLIN))
			continue;
		memset(n, 0, sz.seccomp_notif);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, n) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;	/* the process died meanwhile */
			break;
		}
		if (n->data.nr == SYS_connect) {
			answer_connect(g, listener, n, resp);
			continue;
		}
		if (first) {
			/*
			 * The runner's own exec of its shell: the filter's first
			 * process, which runs the gateway's code until then and
			 * is not dumpable (its memory is the gateway's), so it is
			 * neither read nor judged; the line it runs was judged.
			 * Until it is answered it stays the first (a signal can
			 * restart the exec, which is then asked about again).
			 */
			ok = 1;
		} else if (read_request(n, b, &req, reason, sizeof(reason), rule, sizeof(rule),
		    &quiet) < 0) {
			ok = 0;
			if (strcmp(rule, "exec") == 0)
				snprintf(rule, sizeof(rule), "exec:unreadable");
		} else {
			int depth = 0, lv;

			ok = g->judge(g->ctx, &req, reason, sizeof(reason), rule, sizeof(rule));
			if (ok == 2)
				keep_denial(g, &req, reason, rule, 1);
			if (ok >= 1)
				let_run_note(&lr, &req);
			while (ok >= 1 && (lv = interp_level(req.pid, b, &req, reason,
			    sizeof(reason), rule, sizeof(rule), &quiet)) != 0) {
				if (lv < 0 || ++depth > MAX_INTERP_DEPTH) {
					if (lv > 0) {
						snprintf(reason, sizeof(reason), "denied: a script's "
						    "interpreters nest too deeply");
						snprintf(rule, sizeof(rule), "exec:unreadable");
					}
					ok = 0;
					break;
				}
				ok = g->judge(g->ctx, &req, reason, sizeof(reason), rule,
				    sizeof(rule));
				if (ok == 2)
					keep_denial(g, &req, reason, rule, 1);
				if (ok >= 1)
					let_run_note(&lr, &req);
			}
		}
		/* what was read must still belong to the same, stopped exec */
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0) {
			let_run_drop(&lr);
			continue;
		}
		memset(resp, 0, sz.seccomp_notif_resp);
		resp->id = n->id;
		if (ok >= 1) {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			keep_ran(g, &lr);	/* before the answer: it runs then */
		} else if (quiet != 0) {
			resp->error = -quiet;	/* what the kernel would say */
		} else {
			resp->error = -EACCES;
			keep_denial(g, &req, reason, rule, 0);
		}
		let_run_drop(&lr);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0) {
			if (errno != ENOENT)
				ag_log(LOG_WARNING, "exec supervisor: answer lost: %s",
				    strerror(errno));
		} else
			first = 0;
	}
out:
	if (b != NULL && b->fd >= 0)
		close(b->fd);
	if (b != NULL)
		free(b->strs);
	free(b);
	free(n);
	free(resp);
}

/* Receive the listener from the child, or -1 (it died first, or we stop). */
static int
recv_listener(struct ag_execguard *g)
{
	union cmsg_buf u;
	struct pollfd pf[2] = { { .fd = g->sock, .events = POLLIN },
	    { .fd = g->stop[0], .events = POLLIN } };
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	char c;
	int fd = -1;

	while (poll(pf, 2, -1) < 0)
		if (errno != EINTR)
			return -1;
	if (pf[1].revents || !(pf[0].revents & POLLIN))
		return -1;
	fd_msg(&mh, &iov, &c, &u);
	if (recvmsg(g->sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void *
thread_main(void *arg)
{
	struct ag_execguard *g = arg;
	int listener = recv_listener(g);

	if (listener >= 0) {
		if (ag_sockconnect_thread_start() < 0)
			ag_log(LOG_WARNING, "exec supervisor: no timer for connects (%s): each "
			    "will fail", strerror(errno));
		serve(g, listener);
		ag_sockconnect_thread_end();
		close(listener);
	}
	return NULL;
}

/* ---- parent side ------------------------------------------------------------ */

struct ag_execguard *
ag_execguard_new(ag_execguard_judge_fn judge, void *ctx, const struct ag_unix_rules *unix_rules,
    struct ag_err *err)
{
	struct ag_execguard *g = calloc(1, sizeof(*g));
	int sv[2] = { -1, -1 };

	if (g == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	g->judge = judge;
	g->ctx = ctx;
	g->unix_rules = unix_rules;
	g->stop[0] = g->stop[1] = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(g->stop, O_CLOEXEC) < 0) {
		ag_err_set(err, "exec supervisor: %s", strerror(errno));
		if (sv[0] >= 0) {
			close(sv[0]);
			close(sv[1]);
		}
		free(g);
		return NULL;
	}
	g->sock = sv[0];
	g->child_sock = sv[1];
	return g;
}

int
ag_execguard_started(struct ag_execguard *g, struct ag_err *err)
{
	sigset_t all, old;
	int rc;

	close(g->child_sock);
	g->child_sock = -1;
	/* signals stay with the main thread and its self-pipe */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&g->th, NULL, thread_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return ag_err_set(err, "exec supervisor: %s", strerror(rc));
	g->running = 1;
	return 0;
}

void
ag_execguard_finish(struct ag_execguard *g, struct ag_exec_denial **denials, size_t *n,
    struct ag_exec_ran *ran)
{
	*denials = NULL;
	*n = 0;
	if (ran != NULL)
		memset(ran, 0, sizeof(*ran));
	if (g == NULL)
		return;
	if (g->running) {
		(void)!write(g->stop[1], "s", 1);
		pthread_join(g->th, NULL);
	}
	if (g->child_sock >= 0)
		close(g->child_sock);
	close(g->sock);
	close(g->stop[0]);
	close(g->stop[1]);
	/* refusals past the room: one more entry that says how many, so the
	 * audit counts every refused exec and connect */
	if (g->nconns_dropped > 0 && g->denials != NULL) {
		struct ag_exec_denial *d = &g->denials[g->ndenials];
		char why[320];

		memset(d, 0, sizeof(*d));
		snprintf(why, sizeof(why), "%lu more connections in this command were refused "
		    "(only the first %d are listed one by one; past them a socket network.unix "
		    "names is refused too, so that none goes unrecorded: run such a command in "
		    "a line of its own)", g->nconns_dropped, AG_EXECGUARD_MAX_DENIALS - 1);
		d->is_connect = 1;
		d->proto = strdup("");
		d->path = strdup("");
		d->reason = strdup(why);
		d->rule = strdup("network.more");
		d->argv = calloc(1, sizeof(*d->argv));
		g->ndenials++;
	}
	if (g->ndropped > 0 && g->denials != NULL) {
		struct ag_exec_denial *d = &g->denials[g->ndenials];
		char why[160];

		memset(d, 0, sizeof(*d));
		snprintf(why, sizeof(why), "denied: %lu more execs in this command were refused "
		    "(only the first %d are listed one by one)", g->ndropped,
		    AG_EXECGUARD_MAX_DENIALS - 1);
		d->path = strdup("");
		d->reason = strdup(why);
		d->rule = strdup("exec:more");
		d->argv = calloc(1, sizeof(*d->argv));
		g->ndenials++;
	}
	*denials = g->denials;
	*n = g->ndenials;
	if (ran != NULL)
		*ran = g->ran;
	else
		ag_execguard_ran_free(&g->ran);
	free(g);
}

void
ag_execguard_ran_free(struct ag_exec_ran *ran)
{
	size_t i;

	if (ran == NULL)
		return;
	for (i = 0; i < ran->npaths; i++)
		free(ran->paths[i]);
	free(ran->paths);
	memset(ran, 0, sizeof(*ran));
}

void
ag_execguard_denials_free(struct ag_exec_denial *d, size_t n)
{
	size_t i, k;

	if (d == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(d[i].path);
		free(d[i].reason);
		free(d[i].rule);
		free(d[i].proto);
		free(d[i].error);
		for (k = 0; d[i].argv != NULL && k < d[i].argc; k++)
			free(d[i].argv[k]);
		free(d[i].argv);
	}
	free(d);
}

int
ag_execguard_child_sock(const struct ag_execguard *g)
{
	return g->child_sock;
}
