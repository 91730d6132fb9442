/* audit.c - JSON Lines audit records; see audit.h */
#include "agconfig.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/privsep.h"
#include "record/audit.h"
#include "record/chain.h"
#include "common/utf8.h"
#include "common/log.h"
#include "common/strbuf.h"

struct ag_audit {
	int	 fd;		/* file sink, -1 when none or unusable */
	int	 has_file;
	char	*file;
	char	 file_error[PATH_MAX + 128];	/* why fd is -1 although has_file */
	int	 has_syslog;
	int	 facility;
	int	 required;
	char	 session[33];
	unsigned long seq;	/* write-ahead records so far */
	char	*user, *identity, *profile, *client, *mode;
	char	*recording, *recording_error;
	struct timespec start;

	/* HTTP collector (gateway.audit.http_url) */
	char	*url;			/* NULL = none */
	char	 url_shown[256];	/* without credentials or query: for messages */
	CURL	*curl;
	struct curl_slist *headers;
	int	 http_state;		/* 0 not tried, 1 last POST taken, -1 refused */
	char	 http_error[CURL_ERROR_SIZE + 32];
	struct timespec http_failed_at;	/* monotonic */

	/* its spool: records the collector has not taken yet */
	char	*spool_dir;		/* NULL = none */
	char	 spool_path[PATH_MAX];	/* spool-<uid>.jsonl */
	int	 spoolfd;		/* -1 = no usable spool */
	int	 lockfd;		/* spool-<uid>.lock: the locks, the sent offset */
	char	 spool_error[PATH_MAX + 128];	/* why the last append failed; "" = none */
};

/* ---- JSON helpers -------------------------------------------------------- */

/*
 * A JSON string from bytes that may not be UTF-8 (a command line is what
 * the client sent): invalid bytes become U+FFFD so the line stays valid JSON.
 */
static json_object *
jstr(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	json_object *o;
	size_t i, out = 0, k;
	unsigned cp;
	char *buf;

	for (i = 0; i < n; i += k)
		if ((k = ag_utf8_seq(p + i, n - i, &cp)) == 0)
			break;
	if (i >= n)
		return json_object_new_string_len(s, (int)(n > INT_MAX ? INT_MAX : n));
	if (n > (SIZE_MAX - 1) / 3 || (buf = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; ) {
		if ((k = ag_utf8_seq(p + i, n - i, &cp)) == 0) {
			memcpy(buf + out, "\xef\xbf\xbd", 3);
			out += 3;
			i++;
		} else {
			memcpy(buf + out, s + i, k);
			out += k;
			i += k;
		}
	}
	o = json_object_new_string_len(buf, (int)(out > INT_MAX ? INT_MAX : out));
	free(buf);
	return o;
}

static void
add_str(json_object *o, const char *key, const char *v)
{
	if (v != NULL)
		json_object_object_add(o, key, jstr(v, strlen(v)));
}

static void
add_int(json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static void
timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char tmp[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", tmp, ts.tv_nsec / 1000000);
}

static json_object *
record(const struct ag_audit *a, const char *event)
{
	json_object *o = json_object_new_object();
	char ts[48];

	if (o == NULL)
		return NULL;
	timestamp(ts, sizeof(ts));
	add_str(o, "ts", ts);
	add_str(o, "event", event);
	add_str(o, "session", a->session);
	add_str(o, "user", a->user);
	add_str(o, "identity", a->identity);
	add_str(o, "profile", a->profile);
	add_str(o, "client", a->client);
	add_str(o, "mode", a->mode);
	return o;
}

/* ---- the HTTP collector and its spool ------------------------------------- */

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
#define AG_AUDIT_LOCK_WAIT_MS	3000L

/* Byte ranges of the lock file: short file operations, and the one drainer. */
#define LOCK_SPOOL	0
#define LOCK_DRAIN	1

static long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* The URL as messages may show it: no user:password, no query (tokens). */
static void
shown_url(const char *url, char *out, size_t len)
{
	CURLU *h = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

	snprintf(out, len, "(the collector)");
	if (h == NULL)
		return;
	if (curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		(void)curl_url_get(h, CURLUPART_PORT, &port, 0);
		(void)curl_url_get(h, CURLUPART_PATH, &path, 0);
		snprintf(out, len, "%s://%s%s%s%s", scheme, host, port != NULL ? ":" : "",
		    port != NULL ? port : "", path != NULL ? path : "");
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(h);
}

/* The collector's answer is not read: a status code is all that counts. */
static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static int
http_init(struct ag_audit *a)
{
	static int global_done;
	struct curl_slist *h;

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(a->http_error, sizeof(a->http_error), "cannot initialise libcurl");
			return -1;
		}
		global_done = 1;
	}
	if ((a->curl = curl_easy_init()) == NULL)
		goto oom;
	/* "Expect:" stops libcurl waiting a second for 100-continue on big batches */
	if ((h = curl_slist_append(NULL, "Content-Type: application/x-ndjson")) == NULL)
		goto oom;
	a->headers = h;
	if ((h = curl_slist_append(a->headers, "Expect:")) == NULL)
		goto oom;
	a->headers = h;
	if (curl_easy_setopt(a->curl, CURLOPT_URL, a->url) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    curl_easy_setopt(a->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
	    curl_easy_setopt(a->curl, CURLOPT_PROTOCOLS,
		(long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK ||
#endif
	    curl_easy_setopt(a->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_CONNECTTIMEOUT_MS, AG_AUDIT_CONNECT_MS) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_TIMEOUT_MS, AG_AUDIT_TIMEOUT_MS) != CURLE_OK ||
	    /* no SIGALRM games under the session's own handlers */
	    curl_easy_setopt(a->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    /* the session's environment (http_proxy, ...) must not reroute the trail */
	    curl_easy_setopt(a->curl, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, a->headers) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION) !=
	    CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_POST, 1L) != CURLE_OK) {
		snprintf(a->http_error, sizeof(a->http_error), "libcurl refused an option");
		goto fail;
	}
	return 0;
oom:
	snprintf(a->http_error, sizeof(a->http_error), "out of memory");
fail:
	/* never POST with half the options: the next record starts over */
	if (a->curl != NULL)
		curl_easy_cleanup(a->curl);
	a->curl = NULL;
	curl_slist_free_all(a->headers);
	a->headers = NULL;
	return -1;
}

/* One POST of body (whole lines); 0 when the collector answered 2xx. */
static int
post(struct ag_audit *a, const char *body, size_t n)
{
	char ebuf[CURL_ERROR_SIZE];
	struct sigaction ign, old;
	CURLcode rc;
	long code = 0;

	if (a->curl == NULL && http_init(a) < 0)
		goto fail;
	ebuf[0] = '\0';
	if (curl_easy_setopt(a->curl, CURLOPT_ERRORBUFFER, ebuf) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n) != CURLE_OK ||
	    curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK) {
		snprintf(a->http_error, sizeof(a->http_error), "libcurl refused an option");
		goto fail;
	}
	/* a collector that hangs up must not kill the session with SIGPIPE */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	(void)sigaction(SIGPIPE, &ign, &old);
	rc = curl_easy_perform(a->curl);
	(void)sigaction(SIGPIPE, &old, NULL);
	(void)curl_easy_setopt(a->curl, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		snprintf(a->http_error, sizeof(a->http_error), "%s",
		    ebuf[0] != '\0' ? ebuf : curl_easy_strerror(rc));
		goto fail;
	}
	(void)curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		snprintf(a->http_error, sizeof(a->http_error), "answered HTTP %ld", code);
		goto fail;
	}
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
	clock_gettime(CLOCK_MONOTONIC, &a->http_failed_at);
	return -1;
}

/* The collector refused lately and the spool can hold records meanwhile. */
static int
backing_off(const struct ag_audit *a)
{
	return a->spoolfd >= 0 && a->http_state < 0 &&
	    ms_since(&a->http_failed_at) < AG_AUDIT_RETRY_MS;
}

/* Lock one byte of the lock file, waiting at most wait_ms; 0 or -1. */
static int
spool_lock(struct ag_audit *a, off_t which, long wait_ms)
{
	struct flock fl;
	struct timespec t0, nap = { 0, 10 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
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
		if (ms_since(&t0) >= wait_ms) {
			errno = EAGAIN;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

static void
spool_unlock(struct ag_audit *a, off_t which)
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
sent_offset(const struct ag_audit *a, off_t size)
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
set_sent_offset(struct ag_audit *a, off_t off)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%020lld\n", (long long)off);

	if (pwrite(a->lockfd, buf, (size_t)n, 0) != n)
		ag_log(LOG_ERR, "audit spool %s: cannot note what was sent: %s",
		    a->spool_path, strerror(errno));
}

/* Records wait in the spool: new ones queue behind them. */
static int
spool_pending(const struct ag_audit *a)
{
	struct stat st;

	return fstat(a->spoolfd, &st) == 0 && st.st_size > sent_offset(a, st.st_size);
}

/* Append one record (one write) under the spool lock; 0, or -1 with spool_error. */
static int
spool_append(struct ag_audit *a, const char *line, size_t n)
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
		(void)ftruncate(a->spoolfd, st.st_size);
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
send_batches(struct ag_audit *a, off_t off, off_t size, const struct timespec *t0)
{
	struct ag_strbuf sb;
	char chunk[65536];
	size_t cut;
	off_t pos;
	ssize_t r = 0;
	char *nl;

	ag_strbuf_init(&sb, AG_AUDIT_SPOOL_MAX + sizeof(chunk) + 1);
	while (off < size && ms_since(t0) < AG_AUDIT_DRAIN_MS) {
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
 * when nothing was appended since, so no append is ever cut off.
 */
static void
drain(struct ag_audit *a)
{
	struct timespec t0;
	struct stat st;
	off_t size, off;

	if (spool_lock(a, LOCK_DRAIN, 0) < 0)
		return;			/* another session is at it */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < AG_AUDIT_DRAIN_MS) {
		if (fstat(a->spoolfd, &st) < 0)
			break;
		size = st.st_size;
		if ((off = sent_offset(a, size)) >= size)
			break;
		if (send_batches(a, off, size, &t0) < size)
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
http_deliver(struct ag_audit *a, const char *line, size_t n, struct ag_err *why)
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
			drain(a);
		return 0;
	}
	/* the spool could not take it: maybe draining it makes room */
	if (!backing_off(a)) {
		drain(a);
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
spool_open(struct ag_audit *a, const char *name, int flags)
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
open_spool(struct ag_audit *a, const char *dir)
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
spool_usable(const struct ag_audit *a)
{
	struct stat st;

	return a->spoolfd >= 0 && a->spool_error[0] == '\0' &&
	    fstat(a->spoolfd, &st) == 0 && st.st_nlink > 0 &&
	    (unsigned long long)st.st_size < AG_AUDIT_SPOOL_MAX;
}

/*
 * The record as one line, newline included; NULL when out of memory.  C1
 * and bidirectional controls a command carried are \u escapes, so that
 * reading the log on a terminal shows them rather than obeys them.
 */
static char *
serialise(json_object *o, size_t *len)
{
	const char *js;
	size_t n = 0;
	char *line;

	js = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (js == NULL || (line = ag_utf8_json_safe(js, n, len)) == NULL)
		return NULL;
	line[(*len)++] = '\n';	/* json_safe leaves room: it allocates 6 per byte */
	line[*len] = '\0';
	return line;
}

/*
 * The file sink's part: under the file's lock (other sessions append to
 * it too), link the record to the file's last line (chain.h), write it in
 * one write(2) and, for a write-ahead record, push it to the disk before
 * the command starts.  Returns the line every other sink gets too, or NULL
 * with ferr set (the record is then built without chain fields).
 */
static char *
write_file(struct ag_audit *a, json_object *o, int sync, size_t *len, char *ferr,
    size_t ferrsz)
{
	char prev[AG_CHAIN_HEX], seed[AG_CHAIN_HEX];
	char *line = NULL;
	int empty = 0, locked;
	struct stat st;
	ssize_t w;

	locked = flock(a->fd, LOCK_EX) == 0;
	if (!locked || ag_chain_tail(a->fd, prev, &empty) < 0 ||
	    (empty && (ag_chain_seed(seed) < 0 || ag_chain_hash(seed, strlen(seed), prev) < 0))) {
		snprintf(a->file_error, sizeof(a->file_error), "cannot read the chain: %s",
		    strerror(errno));
		goto fail;
	}
	if (empty)
		add_str(o, "seed", seed);
	add_str(o, "prev", prev);
	if ((line = serialise(o, len)) == NULL) {
		snprintf(a->file_error, sizeof(a->file_error), "out of memory");
		goto fail;
	}
	/* one write per record: O_APPEND makes it land whole */
	if (fstat(a->fd, &st) < 0)
		st.st_size = -1;
	do
		w = write(a->fd, line, *len);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)*len || (sync && fdatasync(a->fd) < 0)) {
		snprintf(a->file_error, sizeof(a->file_error), "%s",
		    w < 0 || w == (ssize_t)*len ? strerror(errno) :
		    "short write (no space left?)");
		/* a torn record (a full disk) is taken back: the file ends with
		 * the last whole record, and the chain still holds */
		if (w > 0 && w < (ssize_t)*len && st.st_size >= 0)
			(void)!ftruncate(a->fd, st.st_size);
		goto fail;
	}
	(void)flock(a->fd, LOCK_UN);
	return line;
fail:
	snprintf(ferr, ferrsz, "audit log %s: %s", a->file, a->file_error);
	/* a torn record would corrupt the next one: stop using the file */
	(void)ag_privsep_close(&a->fd);
	free(line);
	return NULL;
}

/*
 * Serialise and send to every sink; frees o.  sync: a write-ahead record,
 * on the disk before this returns.  The record counts as written when the
 * file, the collector or its spool took it (syslog is not kept anywhere
 * we can vouch for); a sink that failed while another took the record is
 * logged.
 */
static int
emit_sync(struct ag_audit *a, json_object *o, int sync, struct ag_err *err)
{
	char ferr[sizeof(a->file_error) + PATH_MAX + 32];
	struct ag_err herr;
	size_t len = 0;
	char *line = NULL;
	int durable = 0, took = 0;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	ferr[0] = '\0';
	ag_err_clear(&herr);
	if (a->has_file) {
		durable = 1;
		if (a->fd < 0)
			snprintf(ferr, sizeof(ferr), "audit log %s: %s", a->file, a->file_error);
		else if ((line = write_file(a, o, sync, &len, ferr, sizeof(ferr))) != NULL)
			took = 1;
	}
	if (line == NULL && (line = serialise(o, &len)) == NULL) {
		json_object_put(o);
		return ag_err_set(err, "audit: out of memory");
	}
	if (a->url != NULL) {
		durable = 1;
		if (http_deliver(a, line, len, &herr) == 0)
			took = 1;
	}
	if (a->has_syslog)
		syslog(a->facility | LOG_INFO, "%s", line);
	free(line);
	json_object_put(o);
	if (!durable)
		return 0;
	if (!took) {
		if (ferr[0] != '\0' && herr.msg[0] != '\0')
			return ag_err_set(err, "%s; %s", ferr, herr.msg);
		return ag_err_set(err, "%s", ferr[0] != '\0' ? ferr : herr.msg);
	}
	if (ferr[0] != '\0')
		ag_log(LOG_ERR, "%s", ferr);
	if (herr.msg[0] != '\0')
		ag_log(LOG_ERR, "%s", herr.msg);
	return 0;
}

static int
emit(struct ag_audit *a, json_object *o, struct ag_err *err)
{
	return emit_sync(a, o, 0, err);
}

/* ---- the file sink ------------------------------------------------------- */

static int
open_file(struct ag_audit *a, const struct ag_audit_conf *conf)
{
	char dir[PATH_MAX], why[96], *slash;
	struct stat st;
	mode_t mode = conf->group != NULL ? 0640 : 0600;
	int fd, created = 0;

	if (conf->file[0] != '/') {
		snprintf(a->file_error, sizeof(a->file_error), "not an absolute path");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", conf->file);
	if ((slash = strrchr(dir, '/')) == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if (stat(dir, &st) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	/* anyone else who can write there could swap the log for their own */
	if (ag_privsep_dir_ok(&st, why, sizeof(why)) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "directory %s: %s", dir, why);
		return -1;
	}
	/* read too: each record links to the file's last line (chain.h) */
	fd = open(conf->file, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		fd = open(conf->file, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY, mode);
		created = fd >= 0;
		if (fd < 0 && errno == EEXIST)	/* another session created it first */
			fd = open(conf->file, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			    O_NOCTTY);
	}
	if (fd < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || ag_privsep_file_ok(&st) < 0) {
		snprintf(a->file_error, sizeof(a->file_error),
		    "not a regular file, or writable by others than its owner%s",
		    ag_privsep_holding() ? " and the gateway's group" : "");
		close(fd);
		return -1;
	}
	if (created && ag_privsep_holding()) {
		/* audit.group would take the file from the group every gateway
		 * writes it through: readers get an ACL instead (agentgate(8)) */
		(void)fchmod(fd, ag_privsep_shared_mode(fd, 0600));
	} else if (created) {
		(void)fchmod(fd, mode);		/* the umask must not decide */
		if (conf->group != NULL) {
			struct group *gr = getgrnam(conf->group);

			if (gr == NULL || fchown(fd, (uid_t)-1, gr->gr_gid) < 0)
				ag_log(LOG_WARNING, "audit log %s: cannot give it to group %s",
				    conf->file, conf->group);
		}
	}
	a->fd = ag_privsep_private_fd(fd);
	return 0;
}

/* ---- public ---------------------------------------------------------------- */

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* The collector and its spool; -1 only when out of memory. */
static int
open_http(struct ag_audit *a, const struct ag_audit_conf *conf)
{
	char *slash;

	if ((a->url = strdup(conf->http_url)) == NULL)
		return -1;
	shown_url(a->url, a->url_shown, sizeof(a->url_shown));
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

struct ag_audit *
ag_audit_open(const struct ag_audit_conf *conf, const struct ag_audit_info *info,
    struct ag_err *err)
{
	struct ag_audit *a = calloc(1, sizeof(*a));
	unsigned char rnd[16];
	size_t i;

	if (a == NULL) {
		ag_err_set(err, "audit: out of memory");
		return NULL;
	}
	a->fd = -1;
	a->lockfd = -1;
	a->spoolfd = -1;
	clock_gettime(CLOCK_MONOTONIC, &a->start);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		/* unique enough for correlating lines; not a secret */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		memset(rnd, 0, sizeof(rnd));
		memcpy(rnd, &ts, sizeof(ts) < sizeof(rnd) ? sizeof(ts) : sizeof(rnd));
		rnd[15] ^= (unsigned char)getpid();
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(a->session + 2 * i, 3, "%02x", rnd[i]);
	if (info != NULL) {
		a->user = dup_or_null(info->user);
		a->identity = dup_or_null(info->identity);
		a->profile = dup_or_null(info->profile);
		a->client = dup_or_null(info->client);
		a->mode = dup_or_null(info->mode);
	}
	if (conf != NULL) {
		a->required = conf->required;
		a->has_syslog = conf->has_syslog;
		a->facility = conf->syslog_facility;
		if (conf->file != NULL) {
			a->has_file = 1;
			if ((a->file = strdup(conf->file)) == NULL) {
				ag_audit_close(a);
				ag_err_set(err, "audit: out of memory");
				return NULL;
			}
			if (open_file(a, conf) < 0)
				ag_log(LOG_ERR, "audit log %s: %s", conf->file, a->file_error);
		}
		if (conf->http_url != NULL && open_http(a, conf) < 0) {
			ag_audit_close(a);
			ag_err_set(err, "audit: out of memory");
			return NULL;
		}
	}
	return a;
}

void
ag_audit_close(struct ag_audit *a)
{
	if (a == NULL)
		return;
	(void)ag_privsep_close(&a->fd);
	(void)ag_privsep_close(&a->lockfd);
	(void)ag_privsep_close(&a->spoolfd);
	if (a->curl != NULL)
		curl_easy_cleanup(a->curl);
	curl_slist_free_all(a->headers);
	free(a->url);
	free(a->spool_dir);
	free(a->file);
	free(a->user);
	free(a->identity);
	free(a->profile);
	free(a->client);
	free(a->mode);
	free(a->recording);
	free(a->recording_error);
	free(a);
}

int
ag_audit_ready(const struct ag_audit *a, struct ag_err *err)
{
	char ferr[sizeof(a->file_error) + PATH_MAX + 32];
	struct stat st;

	ferr[0] = '\0';
	if (a->has_file) {
		if (a->fd < 0)
			snprintf(ferr, sizeof(ferr), "audit log %s: %s", a->file, a->file_error);
		/* a log that was deleted under us records nothing anyone will read */
		else if (fstat(a->fd, &st) < 0 || st.st_nlink == 0)
			snprintf(ferr, sizeof(ferr), "audit log %s: removed while in use",
			    a->file);
		else
			return 0;
	}
	if (a->url != NULL) {
		/* a collector not tried yet gets the benefit of the doubt: the
		 * session_start record tries it before any command */
		if (a->http_state >= 0 || spool_usable(a))
			return 0;
		return ag_err_set(err, "%s%saudit collector %s: %s; %s%s%s", ferr,
		    ferr[0] != '\0' ? "; " : "", a->url_shown, a->http_error,
		    a->spool_dir != NULL ? "audit spool " : "",
		    a->spool_dir == NULL ? "no spool to keep records" :
		    a->spool_error[0] != '\0' ? a->spool_error : a->spool_path,
		    a->spool_dir != NULL && a->spool_error[0] == '\0' ? " is full" : "");
	}
	if (ferr[0] != '\0')
		return ag_err_set(err, "%s", ferr);
	return 0;
}

int
ag_audit_required(const struct ag_audit *a)
{
	return a->required;
}

const char *
ag_audit_session_id(const struct ag_audit *a)
{
	return a->session;
}

int
ag_audit_session_start(struct ag_audit *a, struct ag_err *err)
{
	return emit(a, record(a, "session_start"), err);
}

/* What a command's records share: the line, where, the verdict. */
static json_object *
command_record(struct ag_audit *a, const char *event, const struct ag_audit_cmd *c)
{
	json_object *o = record(a, event);

	if (o == NULL)
		return NULL;
	if (c->seq > 0)
		add_int(o, "seq", (long long)c->seq);
	if (c->command != NULL)
		json_object_object_add(o, "command", jstr(c->command, c->command_len));
	add_str(o, "cwd", c->cwd);
	add_str(o, "decision", c->decision);
	add_str(o, "reason", c->reason);
	add_str(o, "rule", c->rule);
	return o;
}

int
ag_audit_command_start(struct ag_audit *a, struct ag_audit_cmd *c, struct ag_err *err)
{
	c->seq = ++a->seq;
	return emit_sync(a, command_record(a, "command_start", c), 1, err);
}

int
ag_audit_command(struct ag_audit *a, const struct ag_audit_cmd *c, struct ag_err *err)
{
	json_object *o = command_record(a, "command", c);

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	if (c->ran) {
		add_int(o, "exit", c->exit_status);
		if (c->signal)
			add_int(o, "signal", c->signal);
		add_int(o, "duration_ms", c->duration_ms);
		add_int(o, "bytes_out", (long long)c->bytes_out);
		json_object_object_add(o, "truncated", json_object_new_boolean(c->truncated));
		add_str(o, "cwd_after", c->cwd_after);
	}
	return emit(a, o, err);
}

int
ag_audit_session_end(struct ag_audit *a, int status, unsigned long ncommands,
    struct ag_err *err)
{
	json_object *o = record(a, "session_end");
	struct timespec now;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	clock_gettime(CLOCK_MONOTONIC, &now);
	add_int(o, "exit", status);
	add_int(o, "duration_ms", (long long)(now.tv_sec - a->start.tv_sec) * 1000 +
	    (now.tv_nsec - a->start.tv_nsec) / 1000000);
	add_int(o, "commands", (long long)ncommands);
	add_str(o, "recording", a->recording);
	add_str(o, "recording_error", a->recording_error);
	return emit(a, o, err);
}

int
ag_audit_set_recording(struct ag_audit *a, const char *path, const char *error)
{
	char *p = NULL, *e = NULL;

	if ((path != NULL && (p = strdup(path)) == NULL) ||
	    (error != NULL && (e = strdup(error)) == NULL)) {
		free(p);
		return -1;
	}
	free(a->recording);
	free(a->recording_error);
	a->recording = p;
	a->recording_error = e;
	return 0;
}

void
ag_audit_config_error(const struct ag_audit_info *info, const char *path,
    const char *message)
{
	struct ag_audit_conf conf;
	struct ag_audit *a;

	memset(&conf, 0, sizeof(conf));
	conf.has_syslog = 1;
	conf.syslog_facility = LOG_AUTHPRIV;
	if ((a = ag_audit_open(&conf, info, NULL)) == NULL)
		return;
	{
		json_object *o = record(a, "config_error");

		if (o != NULL) {
			add_str(o, "config", path);
			add_str(o, "reason", message);
			(void)emit(a, o, NULL);
		}
	}
	ag_audit_close(a);
}

int
ag_audit_exec_denied(struct ag_audit *a, const char *command, size_t command_len,
    const char *path, char *const *argv, size_t argc, const char *reason, const char *rule,
    struct ag_err *err)
{
	json_object *o = record(a, "exec_denied"), *av;
	size_t i;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	if (command != NULL)
		json_object_object_add(o, "command", jstr(command, command_len));
	add_str(o, "path", path);
	if ((av = json_object_new_array()) == NULL) {
		json_object_put(o);
		return ag_err_set(err, "audit: out of memory");
	}
	for (i = 0; i < argc && argv[i] != NULL; i++)
		json_object_array_add(av, jstr(argv[i], strlen(argv[i])));
	json_object_object_add(o, "argv", av);
	add_str(o, "decision", "deny");
	add_str(o, "reason", reason);
	add_str(o, "rule", rule);
	return emit(a, o, err);
}

int
ag_audit_event(struct ag_audit *a, const char *event, const char *request,
    const char *decision, const char *reason, struct ag_err *err)
{
	json_object *o = record(a, event);

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	add_str(o, "request", request);
	add_str(o, "decision", decision);
	add_str(o, "reason", reason);
	return emit(a, o, err);
}
