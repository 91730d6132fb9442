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
#include "common/strbuf.h"
#include "exec/procwatch.h"
#include "exec/pty.h"
#include "exec/redact.h"
#include "exec/sigpipe.h"
#include "record/recording.h"

#define OUT_BUF		65536		/* one read from the master */
#define OUT_SPARE	512		/* room for a notice after it */
#define IN_BUF		AG_PTY_UNREAD_MAX
#define SUSP_CHECKS	3		/* looks for a stopped group after a ^Z */
#define HOLD_AFTER_INTR_MS 150		/* see write_master() */
#define STOP_SCAN_MS	1000		/* looks for a stopped process in the group */
#define BURST		64		/* master reads per poll when the client keeps up */
#define OUT_GATHER	32768		/* see the relay loop */
#define OUT_READ_MIN	16384		/* room worth a read from the master (compact()) */

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
	char				*out;		/* OUT_BUF + OUT_SPARE */
	size_t				 outlen, outoff;
	char				 in[IN_BUF];
	size_t				 inlen, inoff;
	unsigned long long		 shown;		/* bytes relayed, for the cap */
	int				 cut;
	int				 master_eof;
	int				 in_eof;
	int				 isig;		/* the PTY's ISIG, VINTR, VQUIT */
	unsigned char			 vintr, vquit;
	long long			 hold_until;	/* ms: do not read the client before */
	char				 left[AG_PTY_UNREAD_MAX];	/* see take_typeahead */
	size_t				 leftlen;
	struct ag_redact		*rd;		/* output.redact, or NULL: */
	char				*raw;		/* what was read goes here, */
	struct ag_strbuf		 red;		/* what may be shown here, */
	size_t				 redoff;	/* and on into out */
};

static void
rec_failed(struct relay *x, const struct ag_err *e)
{
	x->r->rec_failed = 1;
	snprintf(x->r->rec_error, sizeof(x->r->rec_error), "%s", e->msg);
	ag_log(LOG_ERR, "%s", e->msg);
	x->rec = NULL;
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

static int
red_emit(void *ctx, const char *p, size_t n)
{
	struct relay *x = ctx;

	return ag_strbuf_append(&x->red, p, n);
}

/*
 * What the client took makes room at the front, moved there only when the
 * room behind is short of want: while the client lags, the pending bytes
 * would otherwise be moved again for every few KiB the command writes.
 */
static void
compact(struct relay *x, size_t want)
{
	if (x->outoff == 0 || (x->outlen < OUT_BUF && OUT_BUF - x->outlen >= want))
		return;
	memmove(x->out, x->out + x->outoff, x->outlen - x->outoff);
	x->outlen -= x->outoff;
	x->outoff = 0;
}

/* What the redactor let through, into the output buffer (and the recording). */
static void
fill_from_red(struct relay *x)
{
	size_t n = x->red.len - x->redoff, room;
	struct ag_err e;

	if (x->rd == NULL || n == 0)
		return;
	compact(x, n);
	room = OUT_BUF + OUT_SPARE - x->outlen;
	if (n > room)
		n = room;
	memcpy(x->out + x->outlen, x->red.data + x->redoff, n);
	ag_err_clear(&e);
	if (x->rec != NULL && n > 0 && ag_rec_output(x->rec, x->out + x->outlen, n, &e) < 0)
		rec_failed(x, &e);
	x->outlen += n;
	x->redoff += n;
	if (x->redoff == x->red.len) {
		ag_strbuf_reset(&x->red);
		x->redoff = 0;
	}
}

/* The redactor's verdict on n raw bytes (how 0), on a pause (1) or on the
 * end (2); if it cannot keep up, the output is cut: nothing unjudged shows. */
static void
redact_step(struct relay *x, int how, const char *p, size_t n)
{
	int rc = how == 0 ? ag_redact_feed(x->rd, p, n, red_emit, x) :
	    how == 1 ? ag_redact_pause(x->rd, red_emit, x) : ag_redact_end(x->rd, red_emit, x);

	if (rc < 0 && !x->cut) {
		x->cut = 1;
		x->r->truncated = 1;
	}
	fill_from_red(x);
}

/*
 * Append what the command wrote to the output buffer (through the
 * redactor when there is one).  Returns the bytes read, 0 when there was
 * nothing (or at EOF, or no room).
 */
static size_t
read_master(struct relay *x)
{
	const struct ag_pty_relay_opts *o = x->o;
	char *dst;
	ssize_t n;
	size_t keep;
	struct ag_err e;

	compact(x, OUT_READ_MIN);
	if (x->outlen >= OUT_BUF || (x->rd != NULL && x->red.len > x->redoff))
		return 0;
	dst = x->rd != NULL ? x->raw : x->out + x->outlen;
	n = read(x->p->master, dst, x->rd != NULL ? OUT_BUF : OUT_BUF - x->outlen);

	if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		/* the program paused: a held partial line (a prompt) goes now */
		if (errno == EAGAIN && x->rd != NULL && !x->cut)
			redact_step(x, 1, NULL, 0);
		return 0;
	}
	if (n <= 0) {		/* EIO: every slave fd is closed */
		x->master_eof = 1;
		if (x->rd != NULL && !x->cut)
			redact_step(x, 2, NULL, 0);
		return 0;
	}
	x->r->bytes_out += (unsigned long long)n;
	if (x->cut)
		return (size_t)n;	/* keep reading so the program never blocks */
	keep = (size_t)n;
	if (o->max_output > 0 && x->shown + keep > (unsigned long long)o->max_output) {
		int m;

		keep = (size_t)((unsigned long long)o->max_output - x->shown);
		x->cut = 1;
		x->r->truncated = 1;
		/* the terminal is raw: \r\n, not \n */
		m = snprintf(dst + keep, OUT_SPARE, "\r\nagentgate: output truncated: more "
		    "than %lld bytes; the rest is discarded\r\n", o->max_output);
		if (m > 0)
			keep += (size_t)m < OUT_SPARE ? (size_t)m : OUT_SPARE - 1;
	}
	x->shown += keep;
	if (x->rd != NULL) {
		if (keep > 0)
			redact_step(x, 0, dst, keep);
		return (size_t)n;
	}
	x->outlen += keep;
	ag_err_clear(&e);
	if (x->rec != NULL && keep > 0 && ag_rec_output(x->rec, dst, keep, &e) < 0)
		rec_failed(x, &e);
	return (size_t)n;
}

static void
write_client(struct relay *x)
{
	ssize_t w = write(x->o->out_fd, x->out + x->outoff, x->outlen - x->outoff);

	if (w < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		x->r->client_gone = 1;
		x->outlen = x->outoff = 0;
		return;
	}
	x->outoff += (size_t)w;
	if (x->outoff >= x->outlen)
		x->outlen = x->outoff = 0;
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

int
ag_pty_relay(struct ag_pty *p, const struct ag_pty_relay_opts *o, struct ag_pty_result *r,
    struct ag_err *err)
{
	struct relay x;
	long long start = ag_now_ms(), drain_until = 0;
	long long susp_at = 0, scan_at = start + STOP_SCAN_MS;
	int susp_left = 0, extra_fd = o->extra_fd, fl;
	pid_t pid = o->pid;
	struct ag_procwatch pw;

	memset(r, 0, sizeof(*r));
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.o = o;
	x.r = r;
	x.rec = o->rec;
	if (p->master < 0 || pid <= 0)
		return ag_err_set(err, "pty relay: nothing to relay");
	if ((x.out = malloc(OUT_BUF + OUT_SPARE)) == NULL)
		return ag_err_set(err, "out of memory");
	/* no redactor, no output: a secret must not pass because one failed */
	ag_strbuf_init(&x.red, 16 * OUT_BUF);
	if (o->redact != NULL && ((x.rd = ag_redact_new(o->redact, err)) == NULL ||
	    (x.raw = malloc(OUT_BUF + OUT_SPARE)) == NULL)) {
		ag_redact_free(x.rd);
		free(x.out);
		return err->msg[0] ? -1 : ag_err_set(err, "out of memory");
	}
	if ((fl = fcntl(p->master, F_GETFL)) < 0 ||
	    fcntl(p->master, F_SETFL, fl | O_NONBLOCK) < 0) {
		free(x.out);
		return ag_err_set(err, "pty: %s", strerror(errno));
	}
	{
		struct termios tio;

		/* on Linux the master reports the slave's modes */
		if (tcgetattr(p->master, &tio) == 0) {
			x.isig = (tio.c_lflag & ISIG) != 0;
			x.vintr = tio.c_cc[VINTR];
			x.vquit = tio.c_cc[VQUIT];
		}
	}
	ag_procwatch_start(&pw, pid, o->timeout, start);
	enter_raw(o->in_fd, o->out_fd);
	if (x.rec != NULL) {
		struct ag_err e;

		/* a resize while no command ran is recorded now (unless it is no change) */
		ag_err_clear(&e);
		if (ag_rec_resize(x.rec, p->ws.ws_col, p->ws.ws_row, &e) < 0)
			rec_failed(&x, &e);
	}
	sync_size(&x);		/* resized between ag_pty_open and now */

	for (;;) {
		struct pollfd pf[7];
		int npf = 0, i_m = -1, i_in = -1, i_out = -1, i_sp = -1, i_x = -1,
		    i_wake = -1, i_pid = -1, wr;

		fill_from_red(&x);	/* what the redactor let through, as room allows */
		long long t = ag_now_ms(), tmo;
		long rt;
		siginfo_t si;
		int sp = ag_sigpipe_fd();

		if (!pw.exited && !r->terminated && o->tick_cb != NULL && o->tick_cb(o->tick_arg))
			r->terminated = 1;
		if (!pw.exited && ag_procwatch_step(&pw, t, r->terminated || r->client_gone ||
		    (r->rec_failed && o->rec_required)))
			/* what it wrote is still passed on, unless nobody is left to read it */
			drain_until = t + (pw.killed && (r->client_gone || r->terminated) ? 0 :
			    AG_PTY_DRAIN_MS);
		/* soon after a ^Z, and every STOP_SCAN_MS: nothing stays stopped */
		if (!pw.exited && ((susp_left > 0 && t >= susp_at) || t >= scan_at)) {
			memset(&si, 0, sizeof(si));
			if ((waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG) == 0 &&
			    si.si_pid == pid) || group_stopped(pid)) {
				kill(-pid, SIGCONT);
				r->continued++;
			}
			if (susp_left > 0 && t >= susp_at) {
				susp_left--;
				susp_at = t + (SUSP_CHECKS - susp_left) * 200;
			}
			scan_at = t + STOP_SCAN_MS;
		}
		if (pw.exited && p->peer >= 0)
			take_typeahead(&x);
		if (pw.exited && (x.master_eof || r->client_gone) && x.outlen == 0 && extra_fd < 0)
			break;
		if (pw.exited && t >= drain_until && (x.outlen == 0 || r->client_gone))
			break;
		if (pw.exited && t >= drain_until + AG_PTY_DRAIN_MS)
			break;	/* a client that takes nothing more: give up on it */

		/*
		 * The command may write on while the client takes what is
		 * pending.  Keystrokes not yet written when it ended stay ours:
		 * written now they would land behind the typeahead already taken
		 * and die with the PTY, so they go back to the prompt instead.
		 */
		wr = x.inlen > 0 && !pw.exited;
		if (!x.master_eof && (x.outlen - x.outoff < OUT_GATHER || wr)) {
			pf[npf] = (struct pollfd){ .fd = p->master,
			    .events = (short)((x.outlen - x.outoff < OUT_GATHER ? POLLIN : 0) |
			    (wr ? POLLOUT : 0)) };
			i_m = npf++;
		}
		if (o->in_fd >= 0 && !x.in_eof && x.inlen == 0 && !pw.exited && t >= x.hold_until) {
			pf[npf] = (struct pollfd){ .fd = o->in_fd, .events = POLLIN };
			i_in = npf++;
		}
		if (x.outlen > 0 && !r->client_gone) {
			pf[npf] = (struct pollfd){ .fd = o->out_fd, .events = POLLOUT };
			i_out = npf++;
		}
		if (sp >= 0) {		/* SIGWINCH, and the runner's signals */
			pf[npf] = (struct pollfd){ .fd = sp, .events = POLLIN };
			i_sp = npf++;
		}
		/* readable when pid exits: the loop then looks at it */
		if (ag_procwatch_fd(&pw) >= 0) {
			pf[npf] = (struct pollfd){ .fd = ag_procwatch_fd(&pw), .events = POLLIN };
			i_pid = npf++;
		}
		if (extra_fd >= 0) {
			pf[npf] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
			i_x = npf++;
		}
		if (o->wake_fd >= 0 && o->wake_fd != sp && o->wake_cb != NULL) {
			pf[npf] = (struct pollfd){ .fd = o->wake_fd, .events = POLLIN };
			i_wake = npf++;
		}
		tmo = ag_procwatch_wait_ms(&pw, t, 1000);
		if (pw.exited && drain_until - t < tmo)
			tmo = drain_until - t;
		if (susp_left > 0 && susp_at - t < tmo)
			tmo = susp_at - t;
		if (!pw.exited && scan_at - t < tmo)
			tmo = scan_at - t;
		if (x.hold_until > t && x.hold_until - t < tmo)
			tmo = x.hold_until - t;
		if (x.rec != NULL && (rt = ag_rec_next_tick_ms(x.rec)) >= 0 && rt < tmo)
			tmo = rt;
		if (tmo < 0)
			tmo = 0;
		if (ag_poll(pf, (size_t)npf, tmo) < 0) {
			r->client_gone = 1;
			continue;
		}
		if (i_pid >= 0 && pf[i_pid].revents != 0)
			ag_procwatch_ready(&pw);
		if (i_sp >= 0 && (pf[i_sp].revents & POLLIN)) {
			ag_sigpipe_drain();
			if (got_winch) {
				got_winch = 0;	/* then read the size: the latest one wins */
				sync_size(&x);
			}
			if (o->wake_fd == sp && o->wake_cb != NULL && o->wake_cb(o->wake_arg))
				r->terminated = 1;
		}
		if (i_wake >= 0 && (pf[i_wake].revents & POLLIN) && o->wake_cb(o->wake_arg))
			r->terminated = 1;
		if (i_x >= 0 && (pf[i_x].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    o->extra_cb(o->extra_arg, extra_fd) < 0)
			extra_fd = -1;
		if (i_in >= 0 && (pf[i_in].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    read_client(&x)) {
			susp_left = SUSP_CHECKS;
			susp_at = ag_now_ms() + 50;
		}
		if (i_m >= 0 && (pf[i_m].revents & POLLOUT) && !pw.exited)
			write_master(&x);
		if (i_out >= 0 && (pf[i_out].revents & (POLLOUT | POLLHUP | POLLERR)))
			write_client(&x);
		/*
		 * Bulk output: read and pass on until the client would block or
		 * the command has nothing more for now, without a poll between.
		 */
		if (i_m >= 0 && (pf[i_m].revents & (POLLIN | POLLHUP | POLLERR))) {
			int burst;

			/*
			 * A PTY hands over at most a few KiB per read: gather up to
			 * OUT_GATHER before one write, so the client side (sshd) gets
			 * fewer, larger chunks; a lone keystroke's echo goes at once.
			 */
			for (burst = 0; burst < BURST && !x.master_eof && !r->client_gone;
			    burst++) {
				size_t got = 0, n;

				while (x.outlen - x.outoff < OUT_GATHER && (n = read_master(&x)) > 0)
					got += n;
				if (x.outlen > x.outoff)
					write_client(&x);
				if (got == 0 || x.outlen > x.outoff)
					break;	/* nothing new, or the client is full: poll */
			}
		}
		if (x.rec != NULL) {
			struct ag_err e;

			ag_err_clear(&e);
			if (ag_rec_tick(x.rec, &e) < 0)
				rec_failed(&x, &e);
		}
	}
	/* the command ended: what it wrote is on disk before the prompt comes back */
	if (x.rec != NULL) {
		struct ag_err e;

		ag_err_clear(&e);
		if (ag_rec_flush(x.rec, &e) < 0)
			rec_failed(&x, &e);
	}
	ag_pty_restore_terminal();
	/* what was typed first comes first */
	memcpy(r->unread, x.left, x.leftlen);
	r->unread_len = x.leftlen;
	if (x.inlen > x.inoff) {
		size_t n = x.inlen - x.inoff;

		if (n > sizeof(r->unread) - r->unread_len)
			n = sizeof(r->unread) - r->unread_len;
		memcpy(r->unread + r->unread_len, x.in + x.inoff, n);
		r->unread_len += n;
	}
	ag_procwatch_close(&pw);
	ag_redact_free(x.rd);
	free(x.raw);
	ag_strbuf_free(&x.red);
	(void)fcntl(p->master, F_SETFL, fl);
	r->wstatus = pw.wstatus;
	r->timed_out = pw.timed_out;
	r->duration_ms = ag_now_ms() - start;
	free(x.out);
	return 0;
}
