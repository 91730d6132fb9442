/* pty.c - a command in a gateway-owned PTY; see pty.h */
#include "agconfig.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "exec/procwatch.h"
#include "exec/pty.h"
#include "exec/sigpipe.h"
#include "exec/stream.h"
#include "record/recording.h"

#define OUT_BUF		65536		/* one read from the master */
#define IN_BUF		AG_PTY_UNREAD_MAX
#define SUSP_CHECKS	3		/* looks for a stopped group after a ^Z */
#define HOLD_AFTER_INTR_MS 150		/* see write_master() */
#define STOP_SCAN_MS	1000		/* looks for a stopped process in the group */
#define BURST		64		/* master reads per poll when the client keeps up */
#define OUT_GATHER	32768		/* see the relay loop */

/* ---- process-wide state (read by signal handlers) ----------------------- */

static volatile sig_atomic_t got_winch;

/* The terminal as it was before the relay made it raw; -1 = nothing saved. */
static struct termios saved_tio;
static volatile sig_atomic_t saved_tio_fd = -1;
static volatile sig_atomic_t saved_in_fd = -1, saved_in_fl;
static volatile sig_atomic_t saved_out_fd = -1, saved_out_fl;

static void	make_raw(int fd);

static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction fatal_old[sizeof(fatal_sigs) / sizeof(fatal_sigs[0])];

void
ag_pty_restore_terminal(void)
{
	int fd;

	/* out first: when in and out share a file description both saved the original */
	if ((fd = saved_out_fd) >= 0) {
		saved_out_fd = -1;
		(void)fcntl(fd, F_SETFL, saved_out_fl);
	}
	if ((fd = saved_in_fd) >= 0) {
		saved_in_fd = -1;
		(void)fcntl(fd, F_SETFL, saved_in_fl);
	}
	if ((fd = saved_tio_fd) >= 0) {
		saved_tio_fd = -1;
		(void)tcsetattr(fd, TCSANOW, &saved_tio);
	}
}

static void
on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
	ag_sigpipe_notify();
}

/*
 * A crash must not leave the client's terminal raw: restore it, put the
 * previous disposition back (ASan's, or the default) and let the signal
 * take its course — a fault re-executes the instruction, a sent signal is
 * raised again.
 */
static void
on_fatal(int sig, siginfo_t *si, void *uc)
{
	size_t i;

	(void)uc;
	ag_pty_restore_terminal();
	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		if (fatal_sigs[i] == sig)
			(void)sigaction(sig, &fatal_old[i], NULL);
	if (si == NULL || si->si_code <= 0)
		(void)raise(sig);
}

int
ag_pty_init(struct ag_err *err)
{
	static const int winch[] = { SIGWINCH };
	static int done;
	struct sigaction sa;
	size_t i;

	if (done)
		return 0;
	if (ag_sigpipe_catch(winch, 1, on_winch, 1, err) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		if (sigaction(fatal_sigs[i], &sa, &fatal_old[i]) < 0)
			return ag_err_set(err, "sigaction: %s", strerror(errno));
	done = 1;
	return 0;
}

int
ag_pty_take_winch(void)
{
	int w = got_winch != 0;

	got_winch = 0;
	return w;
}

void
ag_pty_client_size(int fd, struct winsize *ws)
{
	memset(ws, 0, sizeof(*ws));
	if (fd < 0 || ioctl(fd, TIOCGWINSZ, ws) < 0 || ws->ws_col == 0 || ws->ws_row == 0) {
		memset(ws, 0, sizeof(*ws));
		ws->ws_col = AG_PTY_DEFAULT_COLS;
		ws->ws_row = AG_PTY_DEFAULT_ROWS;
	}
}

/* ---- opening ------------------------------------------------------------- */

/* The slave of master m, by the master itself where the kernel can (no path race). */
static int
open_slave(int m)
{
	char name[128];
	int s;

#ifdef TIOCGPTPEER
	if ((s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) >= 0)
		return s;
#endif
	if (ptsname_r(m, name, sizeof(name)) != 0)
		return -1;
	return open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

int
ag_pty_open(struct ag_pty *p, int term_fd, struct ag_err *err)
{
	struct termios tio, *tp = NULL;
	struct winsize ws;
	int m, s;

	p->master = p->slave = p->peer = -1;
	/* the size read now is the latest: an older resize is moot */
	got_winch = 0;
	memset(&ws, 0, sizeof(ws));
	if (term_fd < 0 || ioctl(term_fd, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0 ||
	    ws.ws_row == 0) {
		memset(&ws, 0, sizeof(ws));
		ws.ws_col = AG_PTY_DEFAULT_COLS;
		ws.ws_row = AG_PTY_DEFAULT_ROWS;
	}
	/* the client's erase/kill/intr characters and modes, as a shell would give */
	if (saved_tio_fd >= 0 && saved_tio_fd == term_fd) {
		tio = saved_tio;
		tp = &tio;
	} else if (term_fd >= 0 && tcgetattr(term_fd, &tio) == 0)
		tp = &tio;
	if ((m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return ag_err_set(err, "posix_openpt: %s", strerror(errno));
	if (grantpt(m) < 0 || unlockpt(m) < 0 || (s = open_slave(m)) < 0) {
		ag_err_set(err, "pty: %s", strerror(errno));
		close(m);
		return -1;
	}
	if ((tp != NULL && tcsetattr(s, TCSANOW, tp) < 0) ||
	    ioctl(s, TIOCSWINSZ, &ws) < 0 || tcgetattr(s, &tio) < 0) {
		ag_err_set(err, "pty: %s", strerror(errno));
		close(m);
		close(s);
		return -1;
	}
	/* no job control behind us: ^Z is a byte, not SIGTSTP (see pty.h) */
	tio.c_cc[VSUSP] = _POSIX_VDISABLE;
	if (tcsetattr(s, TCSANOW, &tio) < 0) {
		ag_err_set(err, "pty: %s", strerror(errno));
		close(m);
		close(s);
		return -1;
	}
	p->master = m;
	p->slave = s;
	p->ws = ws;
	/* a description of its own: O_NONBLOCK here must not reach the command */
	if ((p->peer = open_slave(m)) >= 0)
		(void)fcntl(p->peer, F_SETFL, O_RDWR | O_NONBLOCK);
	/* before the command exists: nothing typed from now on is cooked by us */
	make_raw(term_fd);
	return 0;
}

int
ag_pty_child_setup(const struct ag_pty *p)
{
	int s = p->slave;

	if (s < 0 || setsid() < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
		return -1;
	if (dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0)
		return -1;
	if (s > 2)
		close(s);
	if (p->master > 2)
		close(p->master);
	if (p->peer > 2)
		close(p->peer);
	return 0;
}

void
ag_pty_close_slave(struct ag_pty *p)
{
	if (p->slave >= 0)
		close(p->slave);
	p->slave = -1;
}

void
ag_pty_close(struct ag_pty *p)
{
	ag_pty_restore_terminal();
	if (p == NULL)
		return;
	ag_pty_close_slave(p);
	if (p->peer >= 0)
		close(p->peer);
	p->peer = -1;
	if (p->master >= 0)
		close(p->master);
	p->master = -1;
}

/* ---- the relay ------------------------------------------------------------- */

/* Raw mode on the client's terminal, the old modes saved for every way out. */
static void
make_raw(int fd)
{
	struct termios raw;

	if (fd < 0 || saved_tio_fd == fd || tcgetattr(fd, &saved_tio) < 0)
		return;
	raw = saved_tio;
	cfmakeraw(&raw);
	saved_tio_fd = fd;
	if (tcsetattr(fd, TCSANOW, &raw) < 0) {
		ag_log(LOG_WARNING, "cannot make the terminal raw: %s", strerror(errno));
		saved_tio_fd = -1;
	}
}

/* Raw mode and non-blocking I/O on the client's side, saved for every way out. */
static void
enter_raw(int in_fd, int out_fd)
{
	int in_fl, out_fl;

	make_raw(in_fd);
	/* both flags before either changes: in and out may be one file description */
	in_fl = in_fd >= 0 ? fcntl(in_fd, F_GETFL) : -1;
	out_fl = out_fd >= 0 ? fcntl(out_fd, F_GETFL) : -1;
	if (in_fl >= 0) {
		saved_in_fl = in_fl;
		saved_in_fd = in_fd;
		(void)fcntl(in_fd, F_SETFL, in_fl | O_NONBLOCK);
	}
	if (out_fl >= 0) {
		saved_out_fl = out_fl;
		saved_out_fd = out_fd;
		(void)fcntl(out_fd, F_SETFL, out_fl | O_NONBLOCK);
	}
}

void
ag_pty_enter_raw(int in_fd, int out_fd)
{
	enter_raw(in_fd, out_fd);
}

struct relay {
	struct ag_pty			*p;
	const struct ag_pty_relay_opts	*o;
	struct ag_pty_result		*r;
	struct ag_rec			*rec;		/* NULL once it failed */
	struct ag_stream		 st;		/* the output (stream.h) */
	char				*raw;		/* one read from the master */
	char				 in[IN_BUF];
	size_t				 inlen, inoff;
	int				 master_eof;
	int				 in_eof;
	int				 isig;		/* the PTY's ISIG, VINTR, VQUIT */
	unsigned char			 vintr, vquit;
	long long			 hold_until;	/* ms: do not read the client before */
	char				 left[AG_PTY_UNREAD_MAX];	/* see take_typeahead */
	size_t				 leftlen;
	struct ag_procwatch		 pw;
	long long			 start, drain_until, susp_at, scan_at;
	int				 susp_left;	/* looks left after a ^Z */
	int				 extra_fd;	/* o->extra_fd until it is finished */
	int				 master_fl;	/* the master's flags before */
};

static void
rec_failed(struct relay *x, const struct ag_err *e)
{
	x->r->rec_failed = 1;
	snprintf(x->r->rec_error, sizeof(x->r->rec_error), "%s", e->msg);
	ag_log(LOG_ERR, "%s", e->msg);
	x->rec = NULL;
	x->st.o.rec = NULL;
}

static void
stream_rec_failed(void *arg, const struct ag_err *e)
{
	rec_failed(arg, e);
}

/* Our terminal's size onto the PTY (the kernel signals the command). */
static void
sync_size(struct relay *x)
{
	struct winsize ws;
	struct ag_err e;

	if (x->o->in_fd < 0 || ioctl(x->o->in_fd, TIOCGWINSZ, &ws) < 0 ||
	    ws.ws_col == 0 || ws.ws_row == 0)
		return;
	if (ws.ws_col == x->p->ws.ws_col && ws.ws_row == x->p->ws.ws_row)
		return;
	if (ioctl(x->p->master, TIOCSWINSZ, &ws) < 0) {
		ag_log(LOG_WARNING, "TIOCSWINSZ: %s", strerror(errno));
		return;
	}
	x->p->ws = ws;
	ag_err_clear(&e);
	if (x->rec != NULL && ag_rec_resize(x->rec, ws.ws_col, ws.ws_row, &e) < 0)
		rec_failed(x, &e);
}

/* Whether some process of group pgid is stopped (state T or t in /proc). */
static int
group_stopped(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (d == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		char path[300], buf[512], *rp;
		long pg;
		char st;
		ssize_t n;
		int fd;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) S ppid pgrp ...": comm may hold anything, so from the last ')' */
		if ((rp = strrchr(buf, ')')) == NULL ||
		    sscanf(rp + 1, " %c %*d %ld", &st, &pg) != 2)
			continue;
		if (pg == (long)pgid && (st == 'T' || st == 't'))
			found = 1;
	}
	closedir(d);
	return found;
}

/*
 * One read of what the command wrote, into the output stream.  Returns the
 * bytes read, 0 when there was nothing (or at EOF).
 */
static size_t
read_master(struct relay *x)
{
	ssize_t n = read(x->p->master, x->raw, OUT_BUF);

	if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		/* the program paused: a held partial line (a prompt) goes now */
		if (errno == EAGAIN)
			(void)ag_stream_pause(&x->st);
		return 0;
	}
	if (n <= 0) {		/* EIO: every slave fd is closed */
		x->master_eof = 1;
		(void)ag_stream_end(&x->st);
		return 0;
	}
	/* past the cap it is read all the same, so the program never blocks */
	(void)ag_stream_take(&x->st, x->raw, (size_t)n);
	return (size_t)n;
}

static void
write_client(struct relay *x)
{
	if (ag_stream_flush(&x->st, x->o->out_fd) < 0)
		x->r->client_gone = 1;
}

/* Returns 1 when the keystrokes held a ^Z. */
static int
read_client(struct relay *x)
{
	ssize_t n = read(x->o->in_fd, x->in, sizeof(x->in));
	struct ag_err e;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		x->in_eof = 1;
		x->r->client_gone = 1;
		return 0;
	}
	x->inlen = (size_t)n;
	x->inoff = 0;
	ag_err_clear(&e);
	if (x->rec != NULL && ag_rec_input(x->rec, x->in, x->inlen, &e) < 0)
		rec_failed(x, &e);
	return memchr(x->in, 0x1a, x->inlen) != NULL;
}

/*
 * Keystrokes go to the command up to and including an interrupt or quit
 * character; after one, the client is not read for HOLD_AFTER_INTR_MS, so
 * what is typed next (the next command line) stays in our terminal's input
 * queue for the prompt, instead of going to a command that is dying.
 */
static void
write_master(struct relay *x)
{
	size_t n = x->inlen - x->inoff, i;
	ssize_t w;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)x->in[x->inoff + i];

		if (x->isig && c != _POSIX_VDISABLE && (c == x->vintr || c == x->vquit)) {
			n = i + 1;
			x->hold_until = ag_now_ms() + HOLD_AFTER_INTR_MS;
			break;
		}
	}
	w = write(x->p->master, x->in + x->inoff, n);

	if (w < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		x->inlen = x->inoff = 0;	/* the command is gone; so are its keystrokes */
		return;
	}
	x->inoff += (size_t)w;
	if (x->inoff >= x->inlen)
		x->inlen = x->inoff = 0;
}

/*
 * The command has ended: take what it left in the PTY's input queue (see
 * pty.h), then close our open of the slave so the master sees EOF once the
 * last background holder is gone.  Non-canonical mode makes a partial line
 * readable too; the modes are put back for whatever still holds the PTY.
 */
static void
take_typeahead(struct relay *x)
{
	struct termios tio, raw;
	ssize_t n;
	int fd = x->p->peer;

	x->p->peer = -1;
	if (!x->r->client_gone && !x->r->terminated && tcgetattr(fd, &tio) == 0) {
		raw = tio;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(fd, TCSANOW, &raw) == 0) {
			while (x->leftlen < sizeof(x->left) &&
			    (n = read(fd, x->left + x->leftlen, sizeof(x->left) - x->leftlen)) > 0)
				x->leftlen += (size_t)n;
			(void)tcsetattr(fd, TCSANOW, &tio);
		}
	}
	close(fd);
}

/* The relay's state, the master non-blocking, the client raw: 0, or -1 with err. */
static int
relay_setup(struct relay *x, struct ag_pty *p, const struct ag_pty_relay_opts *o,
    struct ag_pty_result *r, struct ag_err *err)
{
	/* stdout and stderr are one stream on a terminal, which is raw */
	struct ag_stream_opts so = { .name = "the terminal's output", .tty = 1,
	    .max_output = o->max_output, .redact = o->redact, .rec = o->rec,
	    .rec_failed = stream_rec_failed, .rec_arg = x, .watch = o->watch };
	struct termios tio;
	struct ag_err e;

	memset(r, 0, sizeof(*r));
	memset(x, 0, sizeof(*x));
	x->p = p;
	x->o = o;
	x->r = r;
	x->rec = o->rec;
	x->extra_fd = o->extra_fd;
	x->start = ag_now_ms();
	x->scan_at = x->start + STOP_SCAN_MS;
	if (p->master < 0 || o->pid <= 0)
		return ag_err_set(err, "pty relay: nothing to relay");
	if (ag_stream_init(&x->st, &so, err) < 0)
		return -1;
	x->raw = malloc(OUT_BUF);
	if (x->raw == NULL || (x->master_fl = fcntl(p->master, F_GETFL)) < 0 ||
	    fcntl(p->master, F_SETFL, x->master_fl | O_NONBLOCK) < 0) {
		ag_err_set(err, "pty: %s", x->raw == NULL ? "out of memory" : strerror(errno));
		ag_stream_free(&x->st);
		free(x->raw);
		return -1;
	}
	/* on Linux the master reports the slave's modes */
	if (tcgetattr(p->master, &tio) == 0) {
		x->isig = (tio.c_lflag & ISIG) != 0;
		x->vintr = tio.c_cc[VINTR];
		x->vquit = tio.c_cc[VQUIT];
	}
	ag_procwatch_start(&x->pw, o->pid, o->timeout, x->start);
	enter_raw(o->in_fd, o->out_fd);
	/* a resize while no command ran is recorded now (unless it is no change) */
	ag_err_clear(&e);
	if (x->rec != NULL && ag_rec_resize(x->rec, p->ws.ws_col, p->ws.ws_row, &e) < 0)
		rec_failed(x, &e);
	sync_size(x);		/* resized between ag_pty_open and now */
	return 0;
}

/* The command's life, looked at each time round: 1 when the relay is done. */
static int
relay_watch(struct relay *x, long long t)
{
	const struct ag_pty_relay_opts *o = x->o;
	struct ag_pty_result *r = x->r;
	struct ag_procwatch *pw = &x->pw;
	pid_t pid = o->pid;
	size_t pend = ag_stream_pending(&x->st);
	siginfo_t si;

	if (!pw->exited && !r->terminated && o->tick_cb != NULL && o->tick_cb(o->tick_arg))
		r->terminated = 1;
	if (!pw->exited && ag_procwatch_step(pw, t, r->terminated || r->client_gone ||
	    (r->rec_failed && o->rec_required)))
		/* what it wrote is still passed on, unless nobody is left to read it */
		x->drain_until = t + (pw->killed && (r->client_gone || r->terminated) ? 0 :
		    AG_PTY_DRAIN_MS);
	/* soon after a ^Z, and every STOP_SCAN_MS: nothing stays stopped */
	if (!pw->exited && ((x->susp_left > 0 && t >= x->susp_at) || t >= x->scan_at)) {
		memset(&si, 0, sizeof(si));
		if ((waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG) == 0 &&
		    si.si_pid == pid) || group_stopped(pid)) {
			kill(-pid, SIGCONT);
			r->continued++;
		}
		if (x->susp_left > 0 && t >= x->susp_at) {
			x->susp_left--;
			x->susp_at = t + (SUSP_CHECKS - x->susp_left) * 200;
		}
		x->scan_at = t + STOP_SCAN_MS;
	}
	if (pw->exited && x->p->peer >= 0)
		take_typeahead(x);
	if (pw->exited && (x->master_eof || r->client_gone) && pend == 0 && x->extra_fd < 0)
		return 1;
	if (pw->exited && t >= x->drain_until && (pend == 0 || r->client_gone))
		return 1;
	/* a client that takes nothing more: give up on it */
	return pw->exited && t >= x->drain_until + AG_PTY_DRAIN_MS;
}

/* One turn's poll set: the index of each fd in pf, -1 when it is not there. */
struct polls {
	struct pollfd	pf[7];
	int		n, m, in, out, sp, x, wake, pid;
};

static int
poll_add(struct polls *ps, int fd, short events)
{
	ps->pf[ps->n] = (struct pollfd){ .fd = fd, .events = events };
	return ps->n++;
}

/* What the loop waits for now, into ps; how long it may wait (ms). */
static long long
relay_fds(struct relay *x, struct polls *ps, long long t)
{
	const struct ag_pty_relay_opts *o = x->o;
	size_t pend = ag_stream_pending(&x->st);
	int sp = ag_sigpipe_fd(), wr;
	long long tmo;
	long rt;

	memset(ps, 0, sizeof(*ps));
	ps->m = ps->in = ps->out = ps->sp = ps->x = ps->wake = ps->pid = -1;
	/*
	 * The command may write on while the client takes what is
	 * pending.  Keystrokes not yet written when it ended stay ours:
	 * written now they would land behind the typeahead already taken
	 * and die with the PTY, so they go back to the prompt instead.
	 */
	wr = x->inlen > 0 && !x->pw.exited;
	if (!x->master_eof && (pend < OUT_GATHER || wr))
		ps->m = poll_add(ps, x->p->master,
		    (short)((pend < OUT_GATHER ? POLLIN : 0) | (wr ? POLLOUT : 0)));
	if (o->in_fd >= 0 && !x->in_eof && x->inlen == 0 && !x->pw.exited && t >= x->hold_until)
		ps->in = poll_add(ps, o->in_fd, POLLIN);
	if (pend > 0 && !x->r->client_gone)
		ps->out = poll_add(ps, o->out_fd, POLLOUT);
	if (sp >= 0)		/* SIGWINCH, and the runner's signals */
		ps->sp = poll_add(ps, sp, POLLIN);
	/* readable when pid exits: the loop then looks at it */
	if (ag_procwatch_fd(&x->pw) >= 0)
		ps->pid = poll_add(ps, ag_procwatch_fd(&x->pw), POLLIN);
	if (x->extra_fd >= 0)
		ps->x = poll_add(ps, x->extra_fd, POLLIN);
	if (o->wake_fd >= 0 && o->wake_fd != sp && o->wake_cb != NULL)
		ps->wake = poll_add(ps, o->wake_fd, POLLIN);
	tmo = ag_procwatch_wait_ms(&x->pw, t, 1000);
	if (x->pw.exited && x->drain_until - t < tmo)
		tmo = x->drain_until - t;
	if (x->susp_left > 0 && x->susp_at - t < tmo)
		tmo = x->susp_at - t;
	if (!x->pw.exited && x->scan_at - t < tmo)
		tmo = x->scan_at - t;
	if (x->hold_until > t && x->hold_until - t < tmo)
		tmo = x->hold_until - t;
	if (x->rec != NULL && (rt = ag_rec_next_tick_ms(x->rec)) >= 0 && rt < tmo)
		tmo = rt;
	return tmo < 0 ? 0 : tmo;
}

/*
 * Bulk output: read and pass on until the client would block or the
 * command has nothing more for now, without a poll between.  A PTY hands
 * over at most a few KiB per read: up to OUT_GATHER is gathered before one
 * write, so the client side (sshd) gets fewer, larger chunks; a lone
 * keystroke's echo goes at once.
 */
static void
relay_output(struct relay *x)
{
	int burst;

	for (burst = 0; burst < BURST && !x->master_eof && !x->r->client_gone; burst++) {
		size_t got = 0, n;

		while (ag_stream_pending(&x->st) < OUT_GATHER && (n = read_master(x)) > 0)
			got += n;
		if (ag_stream_pending(&x->st) > 0)
			write_client(x);
		if (got == 0 || ag_stream_pending(&x->st) > 0)
			break;	/* nothing new, or the client is full: poll */
	}
}

/* What poll found. */
static void
relay_events(struct relay *x, const struct polls *ps)
{
	const struct ag_pty_relay_opts *o = x->o;
	struct ag_pty_result *r = x->r;
	const struct pollfd *pf = ps->pf;

	if (ps->pid >= 0 && pf[ps->pid].revents != 0)
		ag_procwatch_ready(&x->pw);
	if (ps->sp >= 0 && (pf[ps->sp].revents & POLLIN)) {
		ag_sigpipe_drain();
		if (got_winch) {
			got_winch = 0;	/* then read the size: the latest one wins */
			sync_size(x);
		}
		if (o->wake_fd == pf[ps->sp].fd && o->wake_cb != NULL && o->wake_cb(o->wake_arg))
			r->terminated = 1;
	}
	if (ps->wake >= 0 && (pf[ps->wake].revents & POLLIN) && o->wake_cb(o->wake_arg))
		r->terminated = 1;
	if (ps->x >= 0 && (pf[ps->x].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    o->extra_cb(o->extra_arg, x->extra_fd) < 0)
		x->extra_fd = -1;
	if (ps->in >= 0 && (pf[ps->in].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    read_client(x)) {
		x->susp_left = SUSP_CHECKS;
		x->susp_at = ag_now_ms() + 50;
	}
	if (ps->m >= 0 && (pf[ps->m].revents & POLLOUT) && !x->pw.exited)
		write_master(x);
	if (ps->out >= 0 && (pf[ps->out].revents & (POLLOUT | POLLHUP | POLLERR)))
		write_client(x);
	if (ps->m >= 0 && (pf[ps->m].revents & (POLLIN | POLLHUP | POLLERR)))
		relay_output(x);
}

/* The command ended: the recording on disk, the terminal back, r filled. */
static void
relay_finish(struct relay *x)
{
	struct ag_pty_result *r = x->r;
	struct ag_err e;

	/* what it wrote is on disk before the prompt comes back */
	ag_err_clear(&e);
	if (x->rec != NULL && ag_rec_flush(x->rec, &e) < 0)
		rec_failed(x, &e);
	ag_pty_restore_terminal();
	/* what was typed first comes first */
	memcpy(r->unread, x->left, x->leftlen);
	r->unread_len = x->leftlen;
	if (x->inlen > x->inoff) {
		size_t n = x->inlen - x->inoff;

		if (n > sizeof(r->unread) - r->unread_len)
			n = sizeof(r->unread) - r->unread_len;
		memcpy(r->unread + r->unread_len, x->in + x->inoff, n);
		r->unread_len += n;
	}
	ag_procwatch_close(&x->pw);
	r->truncated = x->st.truncated;
	r->bytes_out = x->st.bytes;
	r->watched = x->st.watched;
	ag_stream_free(&x->st);
	free(x->raw);
	(void)fcntl(x->p->master, F_SETFL, x->master_fl);
	r->wstatus = x->pw.wstatus;
	r->timed_out = x->pw.timed_out;
	r->duration_ms = ag_now_ms() - x->start;
}

int
ag_pty_relay(struct ag_pty *p, const struct ag_pty_relay_opts *o, struct ag_pty_result *r,
    struct ag_err *err)
{
	struct relay x;
	struct polls ps;

	if (relay_setup(&x, p, o, r, err) < 0)
		return -1;
	for (;;) {
		long long t = ag_now_ms(), tmo;
		struct ag_err e;

		if (relay_watch(&x, t))
			break;
		tmo = relay_fds(&x, &ps, t);
		if (ag_poll(ps.pf, (size_t)ps.n, tmo) < 0) {
			r->client_gone = 1;
			continue;
		}
		relay_events(&x, &ps);
		ag_err_clear(&e);
		if (x.rec != NULL && ag_rec_tick(x.rec, &e) < 0)
			rec_failed(&x, &e);
	}
	relay_finish(&x);
	return 0;
}
