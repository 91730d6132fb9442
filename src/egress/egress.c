/*
 * egress.c - the session's egress proxy process (egress.h): accepting on
 * the namespace's listeners, one child per connection, and what the
 * gateway learns back (the running line's seq in, refusals out).
 * What a connection says and where it goes is egress/conn.c.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "egress/conn.h"
#include "egress/egress.h"
#include "policy/netrules.h"

#define REPORTS_MAX	(64 * 1024)	/* refusals kept for the running line */
#define STOP_GRACE_MS	3000		/* for open connections to write their records */
#define PENDING_AFTER_MS 2000		/* then those still pending are recorded */
#define LINE_GRACE_MS	2000		/* for a line's connections to end, at its end */

struct shared {
	volatile unsigned long	seq;
	struct egress_caps	caps;	/* conn.h */
};

struct ag_egress {
	pid_t		 pid;
	int		 ctl_fd;	/* 'E' a line ended; closed: stop */
	int		 report_fd;	/* read end: "SEQ\tLINE\n" per refusal */
	struct shared	*sh;
	char		 pending[REPORTS_MAX];	/* read, not yet asked for */
	size_t		 npending;
	unsigned long	 discarded;	/* lines read past pending's room */
};

/* Connections being served; at most AG_EGRESS_MAX_CONN (conn.h). */
static int live;

struct job {
	const struct egress_ctx	*ctx;
	int			 fd;
	unsigned long		 seq;
};

static void *
conn_thread(void *arg)
{
	struct job j = *(struct job *)arg;

	free(arg);
	ag_egress_conn(j.ctx, j.fd, j.seq);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * One thread per connection: a fork each cost milliseconds (copy-on-write
 * faults on the gateway's memory), a thread tens of microseconds.  Small
 * stacks: a connection needs little beyond its heap buffers.
 */
static void
serve(const struct egress_ctx *ctx, int fd, unsigned long seq)
{
	static time_t last_busy;
	static unsigned long busy_quiet;
	pthread_attr_t attr;
	pthread_t t;
	struct job *j;

	if (__atomic_load_n(&live, __ATOMIC_SEQ_CST) >= AG_EGRESS_MAX_CONN) {
		/* a flood of refusals is one record a second, with its count */
		time_t now = time(NULL);

		if (now != last_busy) {
			last_busy = now;
			ag_egress_conn_busy(ctx, fd, seq, AG_EGRESS_MAX_CONN, busy_quiet);
			busy_quiet = 0;
		} else {
			/* not recorded, but counted: the line's net_unrecorded */
			busy_quiet++;
			ag_egress_conn_uncounted(ctx, seq);
			close(fd);
		}
		return;
	}
	if ((j = malloc(sizeof(*j))) == NULL) {
		close(fd);
		return;
	}
	j->ctx = ctx;
	j->fd = fd;
	j->seq = seq;
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0 ||
	    pthread_attr_setstacksize(&attr, 256 * 1024) != 0 ||
	    pthread_create(&t, &attr, conn_thread, j) != 0) {
		__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
		free(j);
		close(fd);
	}
	pthread_attr_destroy(&attr);
}

/*
 * The gateway let go: no new connection; each open one ends now and
 * writes its record; then the proxy goes (the gateway kills it after a
 * bounded wait in any case).
 */
static void __attribute__((noreturn))
proxy_stop(const int *lfd, int nl)
{
	int i;

	for (i = 0; i < nl; i++)
		close(lfd[i]);
	ag_egress_conn_stop_all();
	for (i = 0; i < PENDING_AFTER_MS / 5 && __atomic_load_n(&live, __ATOMIC_SEQ_CST) > 0;
	    i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	/* what is still resolving or connecting will not end in time: its
	 * record now, before the gateway's wait runs out */
	ag_egress_conn_record_pending();
	_exit(0);
}

/*
 * A line ended: what its processes left in the listeners' queues was
 * opened while it ran, so it is accepted now, under its seq, before the
 * next line starts (the gateway waits for the answer).
 */
static void
drain_queue(const struct egress_ctx *ctx, const int *lfd, int nl, unsigned long seq)
{
	int i, c;

	for (i = 0; i < nl; i++)
		while ((c = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC)) >= 0)
			serve(ctx, c, seq);
}

/*
 * A line ended and its processes with it: the connections it opened end
 * too (their clients are gone), and write their records and counts
 * (conn.h's caps) before the gateway writes the line's; a bounded wait.
 */
static void
settle(void)
{
	int i;

	for (i = 0; i < LINE_GRACE_MS / 5 && __atomic_load_n(&live, __ATOMIC_SEQ_CST) > 0; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* The proxy process's whole life. */
static void __attribute__((noreturn))
proxy_main(const struct egress_ctx *ctx, const int *lfd, int nl, struct shared *sh,
    pid_t gateway, int ctl)
{
	struct pollfd pf[3];
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != gateway)
		_exit(1);
	(void)prctl(PR_SET_NAME, "agentgate-proxy", 0, 0, 0);
	/* the gateway's handlers write to its self-pipe: not ours */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			(void)signal(i, SIG_DFL);
	(void)signal(SIGPIPE, SIG_IGN);
	{
		sigset_t none;

		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
	}
	/* a relayed connection holds six fds (two sockets, two pipes): room
	 * for AG_EGRESS_MAX_CONN of them, as far as the hard limit lets */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8 * AG_EGRESS_MAX_CONN) {
			rl.rlim_cur = rl.rlim_max < 8 * AG_EGRESS_MAX_CONN ? rl.rlim_max :
			    8 * AG_EGRESS_MAX_CONN;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	/* our own audit file: its lock is then not the gateway's (audit.h) */
	ag_audit_forked(ctx->audit);
	for (i = 0; i < nl; i++) {
		/* a drain takes what is queued and no more */
		(void)fcntl(lfd[i], F_SETFL, fcntl(lfd[i], F_GETFL) | O_NONBLOCK);
		pf[i].fd = lfd[i];
		pf[i].events = POLLIN;
	}
	pf[nl].fd = ctl;
	pf[nl].events = POLLIN;
	for (;;) {
		int n = poll(pf, (nfds_t)nl + 1, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(2);
		}
		if (pf[nl].revents != 0) {
			char m;

			/* 'E': the line ended, its queue is drained and answered;
			 * the gateway gone (EOF): stop */
			if (read(ctl, &m, 1) != 1)
				proxy_stop(lfd, nl);
			if (m == 'E') {
				drain_queue(ctx, lfd, nl, sh->seq);
				settle();
				if (write(ctl, "e", 1) != 1)
					proxy_stop(lfd, nl);
			}
			continue;
		}
		for (i = 0; i < nl; i++) {
			int c;

			if (!(pf[i].revents & POLLIN))
				continue;
			if ((c = accept4(pf[i].fd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
				/* out of fds: the queue waits rather than the loop
				 * spinning on it */
				if (errno == EMFILE || errno == ENFILE) {
					struct timespec ts = { 0, 20 * 1000 * 1000 };

					nanosleep(&ts, NULL);
				}
				continue;
			}
			/* the line running when it was opened */
			serve(ctx, c, sh->seq);
		}
	}
}

/*
 * The proxy holds what it needs and nothing of the session's: the
 * listeners, the report pipe, and the gateway's own fds (the audit log);
 * the client's channel (fds 0-2) and the sandbox's fds would keep the
 * session and its namespace alive.
 */
static int
keep_only(const int *keep, size_t nkeep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), fd;

	if (null < 0)
		return -1;
	for (fd = 0; fd < 3; fd++)
		if (dup2(null, fd) < 0)
			return -1;
	close(null);
	ag_privsep_close_others(keep, nkeep);
	return 0;
}

struct ag_egress *
ag_egress_start(const struct ag_config *cfg, const struct ag_profile *p,
    struct ag_audit *audit, const int *lfd, int nl, struct ag_err *err)
{
	struct ag_egress *e = calloc(1, sizeof(*e));
	struct egress_ctx ctx;
	int rep[2] = { -1, -1 }, ctl[2] = { -1, -1 };
	pid_t me = getpid();

	if (e == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	e->report_fd = e->ctl_fd = -1;
	if (nl <= 0 || nl > 2 ||
	    (e->sh = mmap(NULL, sizeof(*e->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0)) == MAP_FAILED) {
		e->sh = NULL;
		ag_err_set(err, "egress proxy: %s", nl <= 0 ? "no listener" : strerror(errno));
		goto fail;
	}
	if (pipe2(rep, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    fcntl(rep[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(rep[1], F_SETFL, O_NONBLOCK) < 0) {
		ag_err_set(err, "egress proxy: pipe: %s", strerror(errno));
		goto fail;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = cfg;
	ctx.p = p;
	ctx.audit = audit;
	ctx.report_fd = rep[1];
	ctx.caps = &e->sh->caps;
	ctx.running = &e->sh->seq;
	if ((e->pid = fork()) < 0) {
		ag_err_set(err, "egress proxy: fork: %s", strerror(errno));
		goto fail;
	}
	if (e->pid == 0) {
		int keep[4] = { lfd[0], nl > 1 ? lfd[1] : lfd[0], rep[1], ctl[1] };

		if (keep_only(keep, 4) < 0)
			_exit(1);
		proxy_main(&ctx, lfd, nl, e->sh, me, ctl[1]);
	}
	close(rep[1]);
	close(ctl[1]);
	e->report_fd = rep[0];
	e->ctl_fd = ctl[0];
	return e;
fail:
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	if (ctl[0] >= 0)
		close(ctl[0]);
	if (ctl[1] >= 0)
		close(ctl[1]);
	if (e->sh != NULL)
		munmap(e->sh, sizeof(*e->sh));
	free(e);
	return NULL;
}

pid_t
ag_egress_pid(const struct ag_egress *e)
{
	return e != NULL ? e->pid : 0;
}

unsigned long
ag_egress_unrecorded(struct ag_egress *e, unsigned long seq)
{
	struct egress_caps *k;

	if (e == NULL || e->sh == NULL)
		return 0;
	k = &e->sh->caps;
	return __atomic_load_n(&k->seq, __ATOMIC_SEQ_CST) == seq ?
	    __atomic_load_n(&k->line_dropped, __ATOMIC_SEQ_CST) : 0;
}

void
ag_egress_set_seq(struct ag_egress *e, unsigned long seq)
{
	if (e != NULL)
		e->sh->seq = seq;
}

int
ag_egress_line_end(struct ag_egress *e)
{
	char a;

	if (e == NULL || e->ctl_fd < 0)
		return 0;
	if (write(e->ctl_fd, "E", 1) != 1)
		return -1;
	while (read(e->ctl_fd, &a, 1) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* What the proxy reported since the last call, appended to pending. */
static void
drain(struct ag_egress *e)
{
	ssize_t n;

	while (e->npending < sizeof(e->pending) &&
	    (n = read(e->report_fd, e->pending + e->npending,
	    sizeof(e->pending) - e->npending)) > 0)
		e->npending += (size_t)n;
	/* full: what is left in the pipe is for the audit alone, counted */
	if (e->npending == sizeof(e->pending)) {
		char sink[4096];

		while ((n = read(e->report_fd, sink, sizeof(sink))) > 0) {
			const char *p = sink;

			while ((p = memchr(p, '\n', (size_t)(sink + n - p))) != NULL) {
				e->discarded++;
				p++;
			}
		}
	}
}

/* Room kept in ag_egress_refusals's buffer for its last line. */
#define MORE_LINE	100

size_t
ag_egress_refusals(struct ag_egress *e, unsigned long seq, char *buf, size_t len)
{
	size_t used = 0, count = 0, off = 0;
	unsigned long more;

	if (len > 0)
		buf[0] = '\0';
	if (e == NULL || len <= MORE_LINE)
		return 0;
	drain(e);
	more = e->discarded;
	e->discarded = 0;
	if (__atomic_load_n(&e->sh->caps.seq, __ATOMIC_SEQ_CST) == seq)
		more += __atomic_load_n(&e->sh->caps.line_unreported, __ATOMIC_SEQ_CST);
	while (off < e->npending) {
		char *nl = memchr(e->pending + off, '\n', e->npending - off);
		char *tab, *line;
		size_t ll;

		if (nl == NULL)
			break;		/* a line still being written */
		*nl = '\0';
		line = e->pending + off;
		off = (size_t)(nl - e->pending) + 1;
		if ((tab = strchr(line, '\t')) == NULL || strtoul(line, NULL, 10) != seq)
			continue;
		ll = strlen(tab + 1);
		/* once per host and port: a client retrying says nothing new */
		if (ll == 0 || strstr(buf, tab + 1) != NULL)
			continue;
		if (used + ll + 2 > len - MORE_LINE) {
			more++;
			continue;
		}
		memcpy(buf + used, tab + 1, ll);
		used += ll;
		buf[used++] = '\n';
		buf[used] = '\0';
		count++;
	}
	memmove(e->pending, e->pending + off, e->npending - off);
	e->npending -= off;
	if (more > 0) {
		snprintf(buf + used, len - used, "agentgate: and %lu more refused connection%s "
		    "not listed here (each is in the audit log)\n", more, more == 1 ? "" : "s");
		count++;
	}
	return count;
}

void
ag_egress_stop(struct ag_egress *e)
{
	int waited = 0;

	if (e == NULL)
		return;
	if (e->ctl_fd >= 0)
		close(e->ctl_fd);
	/* its connections write their records; a bounded wait, then it goes */
	while (e->pid > 0 && waited < STOP_GRACE_MS) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		pid_t r = waitpid(e->pid, NULL, WNOHANG);

		if (r == e->pid || (r < 0 && errno != EINTR)) {
			e->pid = 0;
			break;
		}
		nanosleep(&ts, NULL);
		waited += 5;
	}
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (e->report_fd >= 0)
		close(e->report_fd);
	munmap(e->sh, sizeof(*e->sh));
	free(e);
}
