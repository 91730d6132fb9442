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
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "egress/conn.h"
#include "egress/egress.h"
#include "policy/netrules.h"

#define REPORTS_MAX	(64 * 1024)	/* refusals kept for the running line */

struct shared {
	volatile unsigned long	seq;
};

struct ag_egress {
	pid_t		 pid;
	int		 report_fd;	/* read end: "SEQ\tLINE\n" per refusal */
	struct shared	*sh;
	char		 pending[REPORTS_MAX];	/* read, not yet asked for */
	size_t		 npending;
};

/* The proxy process's whole life. */
static void __attribute__((noreturn))
proxy_main(const struct egress_ctx *ctx, const int *lfd, int nl, struct shared *sh,
    pid_t gateway)
{
	struct pollfd pf[2];
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != gateway)
		_exit(1);
	(void)prctl(PR_SET_NAME, "agentgate-proxy", 0, 0, 0);
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
	for (i = 0; i < nl; i++) {
		pf[i].fd = lfd[i];
		pf[i].events = POLLIN;
	}
	for (;;) {
		int n = poll(pf, (nfds_t)nl, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(2);
		}
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
			if ((pid = fork()) == 0) {
				int k;

				for (k = 0; k < nl; k++)
					close(lfd[k]);
				(void)signal(SIGCHLD, SIG_DFL);
				ag_audit_forked(ctx->audit);
				ag_egress_conn(ctx, c, seq);
				_exit(0);
			}
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
	int rep[2] = { -1, -1 };
	pid_t me = getpid();

	if (e == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	e->report_fd = -1;
	if (nl <= 0 || nl > 2 ||
	    (e->sh = mmap(NULL, sizeof(*e->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0)) == MAP_FAILED) {
		e->sh = NULL;
		ag_err_set(err, "egress proxy: %s", nl <= 0 ? "no listener" : strerror(errno));
		goto fail;
	}
	if (pipe2(rep, O_CLOEXEC) < 0 || fcntl(rep[0], F_SETFL, O_NONBLOCK) < 0 ||
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
		int keep[3] = { lfd[0], nl > 1 ? lfd[1] : lfd[0], rep[1] };

		if (keep_only(keep, 3) < 0)
			_exit(1);
		proxy_main(&ctx, lfd, nl, e->sh, me);
	}
	close(rep[1]);
	e->report_fd = rep[0];
	return e;
fail:
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
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
	if (e == NULL)
		return;
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
