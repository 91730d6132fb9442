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
#include <sys/socket.h>
#include <sys/wait.h>
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

struct shared {
	volatile unsigned long	seq;
	int			live;	/* connections being served (atomic) */
};

struct ag_egress {
	pid_t		 pid;
	int		 alive_fd;	/* closed: stop (the proxy sees it hang up) */
	int		 report_fd;	/* read end: "SEQ\tLINE\n" per refusal */
	struct shared	*sh;
	char		 pending[REPORTS_MAX];	/* read, not yet asked for */
	size_t		 npending;
};

/*
 * The gateway let go: no new connection; each open one ends now and
 * writes its record (conn.c stops on SIGTERM); then the proxy goes.
 * With SIGCHLD ignored, wait() returns once every child is gone.
 */
static void __attribute__((noreturn))
proxy_stop(const int *lfd, int nl)
{
	int i;

	for (i = 0; i < nl; i++)
		close(lfd[i]);
	(void)signal(SIGTERM, SIG_IGN);
	(void)kill(0, SIGTERM);
	while (wait(NULL) >= 0 || errno == EINTR)
		;
	_exit(0);
}

/* The proxy process's whole life. */
static void __attribute__((noreturn))
proxy_main(const struct egress_ctx *ctx, const int *lfd, int nl, struct shared *sh,
    pid_t gateway, int alive)
{
	struct pollfd pf[3];
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != gateway)
		_exit(1);
	(void)prctl(PR_SET_NAME, "agentgate-proxy", 0, 0, 0);
	/* a group of its own: the stop reaches its connections, not the gateway */
	(void)setpgid(0, 0);
	/* the gateway's handlers write to its self-pipe: not ours */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			(void)signal(i, SIG_DFL);
	(void)signal(SIGPIPE, SIG_IGN);
	(void)signal(SIGCHLD, SIG_IGN);		/* connections reap themselves */
	{
		sigset_t none;

		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
	}
	(void)ag_net_load_own_addrs();
	/* our own audit file: its lock is then not the gateway's (audit.h) */
	ag_audit_forked(ctx->audit);
	for (i = 0; i < nl; i++) {
		pf[i].fd = lfd[i];
		pf[i].events = POLLIN;
	}
	pf[nl].fd = alive;
	pf[nl].events = POLLIN;
	for (;;) {
		int n = poll(pf, (nfds_t)nl + 1, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(2);
		}
		if (pf[nl].revents != 0)
			proxy_stop(lfd, nl);
		for (i = 0; i < nl; i++) {
			unsigned long seq;
			pid_t pid;
			int c;

			if (!(pf[i].revents & POLLIN))
				continue;
			if ((c = accept4(pf[i].fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
				continue;
			/* read before the fork: the line running when it was opened */
			seq = sh->seq;
			if (__atomic_load_n(&sh->live, __ATOMIC_SEQ_CST) >= AG_EGRESS_MAX_CONN) {
				ag_egress_conn_busy(ctx, c, seq, AG_EGRESS_MAX_CONN);
				continue;
			}
			__atomic_add_fetch(&sh->live, 1, __ATOMIC_SEQ_CST);
			if ((pid = fork()) == 0) {
				int k;

				for (k = 0; k < nl; k++)
					close(lfd[k]);
				close(alive);
				(void)signal(SIGCHLD, SIG_DFL);
				ag_audit_forked(ctx->audit);
				ag_egress_conn(ctx, c, seq);
				__atomic_sub_fetch(&sh->live, 1, __ATOMIC_SEQ_CST);
				_exit(0);
			}
			if (pid < 0)
				__atomic_sub_fetch(&sh->live, 1, __ATOMIC_SEQ_CST);
			close(c);
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
	int rep[2] = { -1, -1 }, alive[2] = { -1, -1 };
	pid_t me = getpid();

	if (e == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	e->report_fd = e->alive_fd = -1;
	if (nl <= 0 || nl > 2 ||
	    (e->sh = mmap(NULL, sizeof(*e->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0)) == MAP_FAILED) {
		e->sh = NULL;
		ag_err_set(err, "egress proxy: %s", nl <= 0 ? "no listener" : strerror(errno));
		goto fail;
	}
	if (pipe2(rep, O_CLOEXEC) < 0 || pipe2(alive, O_CLOEXEC) < 0 ||
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
	if ((e->pid = fork()) < 0) {
		ag_err_set(err, "egress proxy: fork: %s", strerror(errno));
		goto fail;
	}
	if (e->pid == 0) {
		int keep[4] = { lfd[0], nl > 1 ? lfd[1] : lfd[0], rep[1], alive[0] };

		if (keep_only(keep, 4) < 0)
			_exit(1);
		proxy_main(&ctx, lfd, nl, e->sh, me, alive[0]);
	}
	close(rep[1]);
	close(alive[0]);
	e->report_fd = rep[0];
	e->alive_fd = alive[1];
	return e;
fail:
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	if (alive[0] >= 0)
		close(alive[0]);
	if (alive[1] >= 0)
		close(alive[1]);
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

void
ag_egress_set_seq(struct ag_egress *e, unsigned long seq)
{
	if (e != NULL)
		e->sh->seq = seq;
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
	/* full: what is left in the pipe is for the audit alone */
	if (e->npending == sizeof(e->pending)) {
		char sink[4096];

		while (read(e->report_fd, sink, sizeof(sink)) > 0)
			;
	}
}

size_t
ag_egress_refusals(struct ag_egress *e, unsigned long seq, char *buf, size_t len)
{
	size_t used = 0, count = 0, off = 0;

	if (len > 0)
		buf[0] = '\0';
	if (e == NULL || len == 0)
		return 0;
	drain(e);
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
		if (ll == 0 || strstr(buf, tab + 1) != NULL || used + ll + 2 > len)
			continue;
		memcpy(buf + used, tab + 1, ll);
		used += ll;
		buf[used++] = '\n';
		buf[used] = '\0';
		count++;
	}
	memmove(e->pending, e->pending + off, e->npending - off);
	e->npending -= off;
	return count;
}

void
ag_egress_stop(struct ag_egress *e)
{
	int waited = 0;

	if (e == NULL)
		return;
	if (e->alive_fd >= 0)
		close(e->alive_fd);
	/* its connections write their records; a bounded wait, then the group */
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
		kill(-e->pid, SIGKILL);
		kill(e->pid, SIGKILL);
		while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (e->report_fd >= 0)
		close(e->report_fd);
	munmap(e->sh, sizeof(*e->sh));
	free(e);
}
