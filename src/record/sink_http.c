/*
 * sink_http.c - the HTTP collector (gateway.audit.http_url) and its spool:
 * each record is POSTed as one line of application/x-ndjson through
 * common/http.c; what the collector does not take waits in the spool and
 * goes first, oldest first, once it takes records again.  The rules are in
 * audit.h.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "common/strbuf.h"
#include "record/audit.h"
#include "record/sink.h"

struct http_sink {
	struct ag_sink	 base;
	char		*url;
	char		 url_shown[256];	/* without credentials or query: for messages */
	struct ag_http	*http;			/* made at the first POST */
	int		 http_state;		/* 0 not tried, 1 last POST taken, -1 refused */
	char		 http_error[512];
	long long	 http_failed_at;	/* ag_now_ms() */

	/* its spool: records the collector has not taken yet */
	char		*spool_dir;		/* NULL = none */
	char		 spool_path[PATH_MAX];	/* spool-<uid>.jsonl */
	int		 spoolfd;		/* -1 = no usable spool */
	int		 lockfd;		/* spool-<uid>.lock: the locks, the sent offset */
	char		 spool_error[PATH_MAX + 128];	/* why the last append failed */
};

/*
 * A collector must never hold a session up for long: one second to connect,
 * two for the whole exchange.  After a refusal, records go straight to the
 * spool for a while instead of waiting on a collector that is likely still
 * down; a batch of spooled records is at most AG_AUDIT_BATCH bytes, and no
 * new batch starts after AG_AUDIT_DRAIN_MS.
 */
#define AG_AUDIT_CONNECT_MS	1000L
#define AG_AUDIT_TIMEOUT_MS	2000L
#define AG_AUDIT_RETRY_MS	10000L
#define AG_AUDIT_BATCH		((size_t)256 * 1024)
#define AG_AUDIT_DRAIN_MS	1000L
/* a session that ends with records still waiting sends them, unless the
 * collector refuses: without it they would wait for the next session */
#define AG_AUDIT_CLOSE_DRAIN_MS	10000L
#define AG_AUDIT_LOCK_WAIT_MS	3000L

/* Byte ranges of the lock file: short file operations, and the one drainer. */
#define LOCK_SPOOL	0
#define LOCK_DRAIN	1

/* One POST of body (whole lines); 0 when the collector answered 2xx. */
static int
post(struct http_sink *a, const char *body, size_t n)
{
	long status;

	if (a->http == NULL && (a->http = ag_http_new(a->url, "application/x-ndjson",
	    AG_AUDIT_CONNECT_MS, AG_AUDIT_TIMEOUT_MS, a->http_error,
	    sizeof(a->http_error))) == NULL)
		goto fail;
	if (ag_http_post(a->http, body, n, &status, a->http_error, sizeof(a->http_error)) < 0)
		goto fail;
	if (a->http_state < 0)
		ag_log(LOG_INFO, "audit collector %s takes records again", a->url_shown);
	a->http_state = 1;
	return 0;
fail:
	/* said once per outage, not once per record */
	if (a->http_state >= 0)
		ag_log(LOG_WARNING, "audit collector %s: %s%s", a->url_shown, a->http_error,
		    a->spoolfd >= 0 ? "; records are spooled until it takes them" : "");
	a->http_state = -1;
	a->http_failed_at = ag_now_ms();
	return -1;
}

/* The collector refused lately and the spool can hold records meanwhile. */
static int
backing_off(const struct http_sink *a)
{
	return a->spoolfd >= 0 && a->http_state < 0 &&
	    ag_now_ms() - a->http_failed_at < AG_AUDIT_RETRY_MS;
}

/* Lock one byte of the lock file, waiting at most wait_ms; 0 or -1. */
static int
spool_lock(struct http_sink *a, off_t which, long wait_ms)
{
	struct flock fl;
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	long long t0;

	t0 = ag_now_ms();
	for (;;) {
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		fl.l_start = which;
		fl.l_len = 1;
		if (fcntl(a->lockfd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			return -1;
		if (ag_now_ms() - t0 >= wait_ms) {
			errno = EAGAIN;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

static void
spool_unlock(struct http_sink *a, off_t which)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = which;
	fl.l_len = 1;
	(void)fcntl(a->lockfd, F_OFD_SETLK, &fl);
}

/* A spool file must be ours alone: a regular file nobody else can write. */
static int
spool_file_ok(int fd, struct stat *st)
{
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * How much of the spool the collector already has: a drain that was cut
 * short leaves the records it sent in place and this offset after them (in
 * the lock file), so they are not sent twice.  Anything odd reads as 0: a
 * record sent twice rather than one never sent.
 */
static off_t
sent_offset(const struct http_sink *a, off_t size)
{
	char buf[32], *end, c;
	long long v;
	ssize_t n;

	n = pread(a->lockfd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || *end != '\n' || v <= 0 || v > (long long)size)
		return 0;
	/* it must fall just after a record */
	if (pread(a->spoolfd, &c, 1, (off_t)v - 1) != 1 || c != '\n')
		return 0;
	return (off_t)v;
}

static void
set_sent_offset(struct http_sink *a, off_t off)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%020lld\n", (long long)off);

	if (pwrite(a->lockfd, buf, (size_t)n, 0) != n)
		ag_log(LOG_ERR, "audit spool %s: cannot note what was sent: %s",
		    a->spool_path, strerror(errno));
}

/* Records wait in the spool: new ones queue behind them. */
static int
spool_pending(const struct http_sink *a)
{
	struct stat st;

	return fstat(a->spoolfd, &st) == 0 && st.st_size > sent_offset(a, st.st_size);
}

/* Append one record (one write) under the spool lock; 0, or -1 with spool_error. */
static int
spool_append(struct http_sink *a, const char *line, size_t n)
{
	struct stat st;
	ssize_t w;

	if (spool_lock(a, LOCK_SPOOL, AG_AUDIT_LOCK_WAIT_MS) < 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s: cannot lock: %s",
		    a->spool_path, errno == EAGAIN ? "busy for too long" : strerror(errno));
		return -1;
	}
	if (fstat(a->spoolfd, &st) < 0 || st.st_nlink == 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s: removed while in use",
		    a->spool_path);
		goto fail;
	}
	if ((unsigned long long)st.st_size + n > AG_AUDIT_SPOOL_MAX) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s is full (%d MiB): the "
		    "collector has not taken records for a long while", a->spool_path,
		    (int)(AG_AUDIT_SPOOL_MAX >> 20));
		goto fail;
	}
	do
		w = write(a->spoolfd, line, n);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)n) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s: %s", a->spool_path,
		    w < 0 ? strerror(errno) : "short write");
		/* a torn record would spoil the one after it */
		if (ftruncate(a->spoolfd, st.st_size) < 0)
			ag_log(LOG_ERR, "%s: cannot cut a torn record: %s", a->spool_path,
			    strerror(errno));
		goto fail;
	}
	spool_unlock(a, LOCK_SPOOL);
	a->spool_error[0] = '\0';
	return 0;
fail:
	spool_unlock(a, LOCK_SPOOL);
	return -1;
}

/*
 * POST the spool from off to size in batches of whole lines, noting after
 * each what the collector took, until all is sent, the collector refuses,
 * or the time is up.  Returns where sending stopped.
 */
static off_t
send_batches(struct http_sink *a, off_t off, off_t size, long long t0,
    long budget_ms)
{
	struct ag_strbuf sb;
	char chunk[65536];
	size_t cut;
	off_t pos;
	ssize_t r = 0;
	char *nl;

	ag_strbuf_init(&sb, AG_AUDIT_SPOOL_MAX + sizeof(chunk) + 1);
	while (off < size && ag_now_ms() - t0 < budget_ms) {
		ag_strbuf_reset(&sb);
		pos = off;
		nl = NULL;
		while (pos < size) {
			size_t want = (size_t)(size - pos) < sizeof(chunk) ?
			    (size_t)(size - pos) : sizeof(chunk);

			r = pread(a->spoolfd, chunk, want, pos);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (ag_strbuf_append(&sb, chunk, (size_t)r) < 0)
				goto out;
			pos += r;
			if (sb.len >= AG_AUDIT_BATCH &&
			    (nl = memrchr(sb.data, '\n', sb.len)) != NULL)
				break;
		}
		if (r < 0) {
			ag_log(LOG_ERR, "audit spool %s: %s", a->spool_path, strerror(errno));
			goto out;
		}
		if (sb.len == 0)
			break;
		if (nl != NULL) {
			cut = (size_t)(nl - sb.data) + 1;
		} else {
			/* up to size; a last line without its newline gets one */
			cut = sb.len;
			if (sb.data[sb.len - 1] != '\n' && ag_strbuf_addch(&sb, '\n') < 0)
				goto out;
		}
		if (post(a, sb.data, nl != NULL ? cut : sb.len) < 0)
			break;
		off += (off_t)cut;
		set_sent_offset(a, off);
	}
out:
	ag_strbuf_free(&sb);
	return off;
}

/*
 * Send spooled records, oldest first.  One session drains at a time (the
 * drain lock); the others keep appending meanwhile, past the end the
 * drainer looked at.  The spool is emptied under the spool lock, and only
 * when nothing was appended since, so no append is ever cut off.  wait_ms:
 * how long to wait for another drainer (0: leave it to them); budget_ms:
 * no new batch after that.
 */
static void
drain(struct http_sink *a, long wait_ms, long budget_ms)
{
	long long t0;
	struct stat st;
	off_t size, off;

	if (spool_lock(a, LOCK_DRAIN, wait_ms) < 0)
		return;			/* another session is at it */
	t0 = ag_now_ms();
	while (ag_now_ms() - t0 < budget_ms) {
		if (fstat(a->spoolfd, &st) < 0)
			break;
		size = st.st_size;
		if ((off = sent_offset(a, size)) >= size)
			break;
		if (send_batches(a, off, size, t0, budget_ms) < size)
			break;
		if (spool_lock(a, LOCK_SPOOL, AG_AUDIT_LOCK_WAIT_MS) < 0)
			break;
		if (fstat(a->spoolfd, &st) == 0 && st.st_size == size) {
			/* forget the offset first: a crash in between resends, never skips */
			set_sent_offset(a, 0);
			if (ftruncate(a->spoolfd, 0) < 0)
				ag_log(LOG_ERR, "audit spool %s: %s", a->spool_path,
				    strerror(errno));
		}
		spool_unlock(a, LOCK_SPOOL);
	}
	spool_unlock(a, LOCK_DRAIN);
}

/*
 * The record to the collector, or to the spool when the collector does not
 * take it (or records are already waiting there, which go first).  0 when
 * one of them has it; otherwise -1 and why.
 */
static int
http_deliver(struct http_sink *a, const char *line, size_t n, struct ag_err *why)
{
	if (a->spoolfd < 0) {
		if (post(a, line, n) == 0)
			return 0;
		return ag_err_set(why, "audit collector %s: %s; %s%s", a->url_shown,
		    a->http_error, a->spool_dir != NULL ? "audit spool " : "",
		    a->spool_dir != NULL ? a->spool_error : "no spool to keep the record");
	}
	if (!backing_off(a) && !spool_pending(a) && post(a, line, n) == 0)
		return 0;
	if (spool_append(a, line, n) == 0) {
		if (!backing_off(a))
			drain(a, 0, AG_AUDIT_DRAIN_MS);
		return 0;
	}
	/* the spool could not take it: maybe draining it makes room */
	if (!backing_off(a)) {
		drain(a, 0, AG_AUDIT_DRAIN_MS);
		if (!spool_pending(a) && post(a, line, n) == 0)
			return 0;
		if (spool_append(a, line, n) == 0)
			return 0;
	}
	return ag_err_set(why, "audit collector %s: %s; audit spool %s", a->url_shown,
	    a->http_state < 0 ? a->http_error : "records are waiting in the spool",
	    a->spool_error);
}

/* Open name in the spool directory as a file of ours alone; -1 with spool_error. */
static int
spool_open(struct http_sink *a, const char *name, int flags)
{
	struct stat st;
	int fd;

	fd = open(name, flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s: %s", name,
		    strerror(errno));
		return -1;
	}
	if (spool_file_ok(fd, &st) < 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "%s: not a regular file of "
		    "this account's, or writable by group or others", name);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != 0600)
		(void)fchmod(fd, 0600);		/* the umask must not decide */
	return fd;
}

/*
 * The spool directory (gateway.audit.spool, else the audit file's) must
 * exist and be writable by no one but its owner.  The spool and its lock
 * file are opened here, once, like the audit file: the built-in server
 * opens them as root and keeps using them after it drops to the user.
 */
static int
open_spool(struct http_sink *a, const char *dir)
{
	unsigned long uid = (unsigned long)geteuid();
	struct stat st;
	char lock[PATH_MAX], why[96];
	int n1, n2;

	if (stat(dir, &st) < 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (ag_privsep_dir_ok(&st, why, sizeof(why)) < 0) {
		snprintf(a->spool_error, sizeof(a->spool_error), "directory %s: %s", dir, why);
		return -1;
	}
	n1 = snprintf(a->spool_path, sizeof(a->spool_path), "%s/spool-%lu.jsonl", dir, uid);
	n2 = snprintf(lock, sizeof(lock), "%s/spool-%lu.lock", dir, uid);
	if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof(a->spool_path) ||
	    (size_t)n2 >= sizeof(lock)) {
		snprintf(a->spool_error, sizeof(a->spool_error), "directory %s: name too long",
		    dir);
		return -1;
	}
	if ((a->lockfd = ag_privsep_private_fd(spool_open(a, lock, O_RDWR))) < 0)
		return -1;
	if ((a->spoolfd = ag_privsep_private_fd(spool_open(a, a->spool_path,
	    O_RDWR | O_APPEND))) < 0) {
		(void)ag_privsep_close(&a->lockfd);
		return -1;
	}
	return 0;
}

/* Whether the spool could take a record now (for ag_audit_ready). */
static int
spool_usable(const struct http_sink *a)
{
	struct stat st;

	return a->spoolfd >= 0 && a->spool_error[0] == '\0' &&
	    fstat(a->spoolfd, &st) == 0 && st.st_nlink > 0 &&
	    (unsigned long long)st.st_size < AG_AUDIT_SPOOL_MAX;
}

/* The collector and its spool; -1 only when out of memory. */
static int
open_http(struct http_sink *a, const struct ag_audit_conf *conf)
{
	char *slash;

	if ((a->url = strdup(conf->http_url)) == NULL)
		return -1;
	ag_http_shown_url(a->url, a->url_shown, sizeof(a->url_shown));
	/* no spool key: the file sink's directory, if there is one */
	if (conf->spool != NULL) {
		if ((a->spool_dir = strdup(conf->spool)) == NULL)
			return -1;
	} else if (conf->file != NULL) {
		if ((a->spool_dir = strdup(conf->file)) == NULL)
			return -1;
		if ((slash = strrchr(a->spool_dir, '/')) == a->spool_dir)
			a->spool_dir[1] = '\0';
		else if (slash != NULL)
			*slash = '\0';
	}
	if (a->spool_dir != NULL && open_spool(a, a->spool_dir) < 0)
		ag_log(LOG_ERR, "audit spool: %s", a->spool_error);
	return 0;
}

static int
http_emit(struct ag_sink *s, struct ag_audit_rec *r, int sync, struct ag_err *why)
{
	struct http_sink *a = (struct http_sink *)s;
	const char *line;
	size_t len;

	(void)sync;	/* the collector's 2xx, or the spool's write, is what we have */
	if ((line = ag_audit_rec_text(r, &len)) == NULL)
		return ag_err_set(why, "audit: out of memory");
	return http_deliver(a, line, len, why);
}

static int
http_ready(const struct ag_sink *s, struct ag_err *why)
{
	const struct http_sink *a = (const struct http_sink *)s;

	/* a collector not tried yet gets the benefit of the doubt: the
	 * session_start record tries it before any command */
	if (a->http_state >= 0 || spool_usable(a))
		return 0;
	return ag_err_set(why, "audit collector %s: %s; %s%s%s", a->url_shown, a->http_error,
	    a->spool_dir != NULL ? "audit spool " : "",
	    a->spool_dir == NULL ? "no spool to keep records" :
	    a->spool_error[0] != '\0' ? a->spool_error : a->spool_path,
	    a->spool_dir != NULL && a->spool_error[0] == '\0' ? " is full" : "");
}

static void
http_close(struct ag_sink *s)
{
	struct http_sink *a = (struct http_sink *)s;

	/*
	 * The last session out sends what is still waiting, however briefly
	 * each session before it could drain under load -- also one whose
	 * last post failed: one that timed out on a loaded collector must not
	 * leave the records for a session that may never come.  A collector
	 * that is really down refuses the first batch, which ends the drain.
	 */
	if (a->spoolfd >= 0 && spool_pending(a))
		drain(a, AG_AUDIT_LOCK_WAIT_MS, AG_AUDIT_CLOSE_DRAIN_MS);

	(void)ag_privsep_close(&a->lockfd);
	(void)ag_privsep_close(&a->spoolfd);
	ag_http_free(a->http);
	free(a->url);
	free(a->spool_dir);
	free(a);
}

/*
 * The parent's connection to the collector is not ours to use or to close
 * (closing a TLS session writes to it): left as it is, a new one is made
 * at the next record.  The spool's files are opened again, for locks of
 * our own.
 */
static void
http_forked(struct ag_sink *s)
{
	struct http_sink *a = (struct http_sink *)s;

	a->http = NULL;
	a->http_state = 0;
	(void)ag_privsep_close(&a->lockfd);
	(void)ag_privsep_close(&a->spoolfd);
	if (a->spool_dir != NULL && open_spool(a, a->spool_dir) < 0)
		ag_log(LOG_ERR, "audit spool: %s", a->spool_error);
}

static const struct ag_sink_ops http_ops = {
	.name = "http", .durable = 1,
	.emit = http_emit, .ready = http_ready, .close = http_close, .forked = http_forked,
};

struct ag_sink *
ag_sink_http_open(const struct ag_audit_conf *conf)
{
	struct http_sink *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->base.ops = &http_ops;
	a->spoolfd = -1;
	a->lockfd = -1;
	if (open_http(a, conf) < 0) {
		http_close(&a->base);
		return NULL;
	}
	return &a->base;
}
