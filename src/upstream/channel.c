/*
 * channel.c - one command on an upstream channel, relayed (upstream.h).
 *
 * One poll loop over the connection's socket, the client's stdin, stdout
 * and stderr, and the process's signal self-pipe (SIGWINCH, the runner's
 * SIGHUP/SIGTERM/SIGUSR1).  The channel is read only while nothing waits
 * to be written to the client: what libssh has not read stays in the
 * upstream's window, so a client that reads slowly slows the command down
 * instead of growing the gateway's buffers.  Stdin goes up only as far as
 * the upstream's window allows, so writing it never blocks the loop.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sshlib.h"

#include "common/log.h"
#include "common/misc.h"
#include "exec/pty.h"
#include "exec/runner.h"
#include "exec/sigpipe.h"
#include "exec/stream.h"
#include "record/recording.h"
#include "upstream/upstream.h"
#include "upstream/upstream_int.h"

#define CHUNK		32768
#define GRACE_MS	2000	/* after SIGTERM upstream, before the channel is closed */
#define REVOKE_CHECK_MS	2000	/* as the runner's (exec/runner.c) */

struct stream {
	int			 fd;		/* the client's side */
	int			 is_stderr;
	int			 eof;		/* the channel's side ended */
	struct ag_stream	 st;		/* cap, redaction, recording, queue (stream.h) */
};

struct relay {
	const struct ag_uprun_opts	*o;
	struct ag_run_result		*r;
	ssh_channel			 ch;
	struct stream			 out, err;
	int				 exit_signal;
};

/* The name a signal has in SSH's exit-signal ("TERM") back to its number. */
static int
signum_of(const char *name)
{
	static const struct { const char *n; int s; } sigs[] = {
		{ "ABRT", SIGABRT }, { "ALRM", SIGALRM }, { "FPE", SIGFPE }, { "HUP", SIGHUP },
		{ "ILL", SIGILL }, { "INT", SIGINT }, { "KILL", SIGKILL }, { "PIPE", SIGPIPE },
		{ "QUIT", SIGQUIT }, { "SEGV", SIGSEGV }, { "TERM", SIGTERM }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 },
	};
	size_t i;

	for (i = 0; name != NULL && i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(sigs[i].n, name) == 0)
			return sigs[i].s;
	return name != NULL ? SIGTERM : 0;
}

static void
on_exit_signal(ssh_session s, ssh_channel ch, const char *signal, int core,
    const char *errmsg, const char *lang, void *userdata)
{
	struct relay *x = userdata;

	(void)s;
	(void)ch;
	(void)core;
	(void)errmsg;
	(void)lang;
	x->exit_signal = signum_of(signal);
}

static int
flush(struct stream *s)
{
	return ag_stream_flush(&s->st, s->fd);
}

static int
pending(const struct stream *s)
{
	return ag_stream_pending(&s->st) > 0;
}

/* Read one stream from the channel while nothing of it waits; 1 if data came. */
static int
pull(struct relay *x, struct stream *s, char *buf)
{
	int n;

	if (s->eof || pending(s) || pending(&x->err))
		return 0;
	n = ag_ssh.ssh_channel_read_nonblocking(x->ch, buf, CHUNK, s->is_stderr);
	if (n > 0) {
		(void)ag_stream_take(&s->st, buf, (size_t)n);
		return 1;
	}
	if (n == SSH_EOF || n == SSH_ERROR || ag_ssh.ssh_channel_is_eof(x->ch) ||
	    ag_ssh.ssh_channel_is_closed(x->ch)) {
		s->eof = 1;
		(void)ag_stream_end(&s->st);
		return 1;
	}
	/* a terminal program paused: its partial line is shown */
	(void)ag_stream_pause(&s->st);
	return 0;
}

/* The client's next keystrokes or stdin bytes, as far as the window allows. */
static int
push_stdin(struct relay *x, int *in_open, char *buf)
{
	uint32_t win = ag_ssh.ssh_channel_window_size(x->ch);
	struct ag_err e;
	ssize_t n;

	if (win == 0)
		return 0;
	n = read(x->o->in_fd, buf, win < CHUNK ? win : CHUNK);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		*in_open = 0;
		if (!x->o->pty)		/* a terminal's end is the client's ^D, a byte */
			ag_ssh.ssh_channel_send_eof(x->ch);
		return 0;
	}
	if (x->o->rec != NULL && ag_rec_input_enabled(x->o->rec) &&
	    ag_rec_input(x->o->rec, buf, (size_t)n, &e) < 0)
		x->r->rec_failed = 1;
	if (ag_ssh.ssh_channel_write(x->ch, buf, (uint32_t)n) != n)
		return -1;
	return 0;
}

static void
resize(struct relay *x)
{
	struct winsize ws;
	struct ag_err e;

	ag_pty_client_size(x->o->in_fd, &ws);
	(void)ag_ssh.ssh_channel_change_pty_size(x->ch, ws.ws_col, ws.ws_row);
	if (x->o->rec != NULL && ag_rec_resize(x->o->rec, ws.ws_col, ws.ws_row, &e) < 0)
		x->r->rec_failed = 1;
}

/* Ask the upstream command to end; the channel closes GRACE_MS later. */
static void
stop(struct relay *x, long long *kill_at)
{
	if (*kill_at != 0)
		return;
	(void)ag_ssh.ssh_channel_request_send_signal(x->ch, "TERM");
	*kill_at = ag_now_ms() + GRACE_MS;
}

/* TERM from the client, checked: letters, digits and -+._ (and short). */
static const char *
term_of(const char *t)
{
	size_t i;

	if (t == NULL || t[0] == '\0' || strlen(t) > 64)
		return "xterm";
	for (i = 0; t[i] != '\0'; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
		    (t[i] >= '0' && t[i] <= '9') || strchr("-+._", t[i]) != NULL))
			return "xterm";
	return t;
}

static int
set_nonblock(int fd, int *saved)
{
	*saved = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	if (*saved >= 0)
		(void)fcntl(fd, F_SETFL, *saved | O_NONBLOCK);
	return 0;
}

static void
relay_loop(struct relay *x, int sock)
{
	const struct ag_uprun_opts *o = x->o;
	struct ag_run_result *r = x->r;
	long long deadline = o->timeout > 0 ? ag_now_ms() + o->timeout * 1000 : 0, kill_at = 0,
	    revoke_at = 0;
	int in_open = o->in_fd >= 0, sigfd = ag_sigpipe_fd();
	char *buf = malloc(CHUNK);

	if (buf == NULL)
		return;
	for (;;) {
		struct pollfd pf[5];
		int np = 0, isock = -1, iin = -1, iout = -1, ierr = -1, isig = -1, wait_ms = 1000;
		long long now;

		/* what libssh holds is taken before sleeping on the socket */
		while (pull(x, &x->out, buf) || (!o->pty && pull(x, &x->err, buf))) {
			if (flush(&x->out) < 0 || flush(&x->err) < 0) {
				r->client_gone = 1;
				goto out;
			}
		}
		if (flush(&x->out) < 0 || flush(&x->err) < 0) {
			r->client_gone = 1;
			goto out;
		}
		if (x->out.eof && (o->pty || x->err.eof) && !pending(&x->out) &&
		    !pending(&x->err))
			break;
		now = ag_now_ms();
		if (kill_at != 0 && now >= kill_at)
			goto out;
		if (o->revoked != NULL && !r->revoked && now >= revoke_at) {
			revoke_at = now + REVOKE_CHECK_MS;
			if (o->revoked(o->revoked_arg)) {
				r->revoked = 1;
				stop(x, &kill_at);
			}
		}
		if (deadline != 0 && now >= deadline && !r->timed_out) {
			r->timed_out = 1;
			fflush(stdout);
			dprintf(o->err_fd, "\nagentgate: timed out after %ld s (limits.timeout); "
			    "the command on the upstream was sent SIGTERM\n", o->timeout);
			stop(x, &kill_at);
		}
		if (!pending(&x->out) && !pending(&x->err)) {
			pf[np].fd = sock;
			pf[np].events = POLLIN;
			isock = np++;
		}
		if (pending(&x->out)) {
			pf[np].fd = x->out.fd;
			pf[np].events = POLLOUT;
			iout = np++;
		}
		if (pending(&x->err)) {
			pf[np].fd = x->err.fd;
			pf[np].events = POLLOUT;
			ierr = np++;
		}
		/* once the command's output has ended, what the client types is
		 * for the next prompt: it stays unread in our terminal */
		if (in_open && !x->out.eof && ag_ssh.ssh_channel_window_size(x->ch) > 0) {
			pf[np].fd = o->in_fd;
			pf[np].events = POLLIN;
			iin = np++;
		}
		if (sigfd >= 0) {
			pf[np].fd = sigfd;
			pf[np].events = POLLIN;
			isig = np++;
		}
		/* the bounds: the timeout, the grace, and a look at the window
		 * (an adjust from the upstream arrives on the socket we may not
		 * be polling while output waits) */
		if (deadline != 0 && !r->timed_out && deadline - now < wait_ms)
			wait_ms = (int)(deadline - now);
		if (kill_at != 0 && kill_at - now < wait_ms)
			wait_ms = (int)(kill_at - now);
		if (wait_ms < 0)
			wait_ms = 0;
		if (poll(pf, (nfds_t)np, wait_ms) < 0 && errno != EINTR)
			break;
		if (isig >= 0 && (pf[isig].revents & POLLIN)) {
			ag_sigpipe_drain();
			if (o->pty && ag_pty_take_winch())
				resize(x);
			if (ag_runner_terminating()) {
				r->terminated = 1;
				stop(x, &kill_at);
				goto out;
			}
			if (ag_runner_cancel_requested() && !r->cancelled) {
				r->cancelled = 1;
				stop(x, &kill_at);
			}
		}
		if (iin >= 0 && (pf[iin].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    push_stdin(x, &in_open, buf) < 0) {
			in_open = 0;
			if (!o->pty)
				ag_ssh.ssh_channel_send_eof(x->ch);
		}
		if ((iout >= 0 && (pf[iout].revents & (POLLERR | POLLHUP))) ||
		    (ierr >= 0 && (pf[ierr].revents & (POLLERR | POLLHUP)))) {
			r->client_gone = 1;
			stop(x, &kill_at);
			goto out;
		}
		(void)isock;	/* readable: the pull at the top takes it */
	}
out:
	free(buf);
}

static void
stream_rec_failed(void *arg, const struct ag_err *e)
{
	struct relay *x = arg;

	(void)e;
	x->r->rec_failed = 1;
}

/*
 * The client's streams, redacted before anything of the command runs (no
 * redactor, no output).  In a PTY the upstream sends one stream, stdout;
 * elsewhere the cut of stdout is said on stderr.
 */
static int
streams_init(struct relay *x, struct ag_err *err)
{
	const struct ag_uprun_opts *o = x->o;
	struct ag_stream_opts so = { .name = o->pty ? "the terminal's output" : "stdout",
	    .max_output = o->max_output, .tty = o->pty, .redact = o->redact, .rec = o->rec,
	    .rec_failed = stream_rec_failed, .rec_arg = x };
	struct ag_stream_opts se = so;

	se.name = "stderr";
	if (o->pty)
		se.redact = NULL;	/* unused */
	x->out.fd = o->out_fd;
	x->err.fd = o->err_fd;
	x->err.is_stderr = 1;
	if (ag_stream_init(&x->out.st, &so, err) < 0 || ag_stream_init(&x->err.st, &se, err) < 0)
		return -1;
	if (!o->pty)
		x->out.st.notice_to = &x->err.st;
	return 0;
}

static void
streams_free(struct relay *x)
{
	ag_stream_free(&x->out.st);
	ag_stream_free(&x->err.st);
}

int
ag_upconn_run(struct ag_upconn *c, const struct ag_uprun_opts *o, struct ag_run_result *r,
    int *cols, int *rows, struct ag_err *err)
{
	struct ssh_channel_callbacks_struct cb;
	struct relay x;
	struct winsize ws;
	long long t0 = ag_now_ms();
	int out_fl = -1, err_fl = -1, st;

	memset(r, 0, sizeof(*r));
	*cols = *rows = 0;
	memset(&x, 0, sizeof(x));
	x.o = o;
	x.r = r;
	if (streams_init(&x, err) < 0) {
		streams_free(&x);
		return -1;
	}
	if (o->pty) {
		ag_pty_client_size(o->in_fd, &ws);
		*cols = ws.ws_col;
		*rows = ws.ws_row;
		/* ^C typed as it starts must reach it as a byte */
		ag_pty_enter_raw(o->in_fd, o->out_fd);
		(void)ag_pty_take_winch();
	}
	if ((x.ch = ag_upconn_channel(c, o->req, o->pty, term_of(o->term), *cols, *rows,
	    err)) == NULL) {
		if (o->pty)
			ag_pty_restore_terminal();
		streams_free(&x);
		return -1;
	}
	memset(&cb, 0, sizeof(cb));
	cb.userdata = &x;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_callbacks_init(&cb);
	ag_ssh.ssh_set_channel_callbacks(x.ch, &cb);
	if (!o->pty)
		set_nonblock(o->out_fd, &out_fl);
	if (o->err_fd != o->out_fd || o->pty)
		set_nonblock(o->err_fd, &err_fl);
	if (o->in_fd < 0)
		ag_ssh.ssh_channel_send_eof(x.ch);
	if (o->rec != NULL && o->pty) {
		struct ag_err e;

		if (ag_rec_resize(o->rec, ws.ws_col, ws.ws_row, &e) < 0)
			r->rec_failed = 1;
	}

	relay_loop(&x, ag_ssh.ssh_get_fd(c->s));

	/* the client may be gone: what is queued for it is dropped */
	(void)flush(&x.out);
	(void)flush(&x.err);
	if (!ag_ssh.ssh_channel_is_closed(x.ch) && (r->timed_out || r->cancelled || r->terminated ||
	    r->client_gone))
		ag_ssh.ssh_channel_close(x.ch);
	st = r->timed_out || r->cancelled || r->terminated || r->client_gone ? -1 :
	    ag_ssh.ssh_channel_get_exit_status(x.ch);
	if (x.exit_signal != 0) {
		r->signal = x.exit_signal;
		r->status = 128 + x.exit_signal;
	} else
		r->status = st >= 0 ? (st & 0xff) : 255;
	if (r->timed_out)
		r->status = 124;
	else if (r->cancelled)
		r->status = 130;
	/* libssh keeps a channel the far end has not closed yet past
	 * ssh_channel_free(): our callbacks, on this stack, must go first */
	ag_ssh.ssh_remove_channel_callbacks(x.ch, &cb);
	ag_ssh.ssh_channel_close(x.ch);
	ag_ssh.ssh_channel_free(x.ch);
	if (out_fl >= 0)
		(void)fcntl(o->out_fd, F_SETFL, out_fl);
	if (err_fl >= 0)
		(void)fcntl(o->err_fd, F_SETFL, err_fl);
	if (o->pty)
		ag_pty_restore_terminal();
	r->truncated = x.out.st.truncated || x.err.st.truncated;
	r->bytes_out = x.out.st.bytes + x.err.st.bytes;
	streams_free(&x);
	if (r->rec_failed)
		snprintf(r->rec_error, sizeof(r->rec_error), "the session's recording could not "
		    "be written");
	r->duration_ms = ag_now_ms() - t0;
	return 0;
}
