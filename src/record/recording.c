/* recording.c - asciicast v2 session recordings; see recording.h */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/recording.h"
#include "common/utf8.h"
#include "common/strbuf.h"
#include "common/misc.h"
#include "common/privsep.h"

/* One event can be large (a 64 KiB read of control bytes, each \u00XX);
 * the buffer is flushed long before this bound. */
#define REC_BUF_LIMIT	((size_t)32 * 1024 * 1024)
#define REC_ID_MAX	128

struct ag_rec {
	int		 fd;		/* -1 once dead */
	char		*path;
	int		 input;
	struct timespec	 start;		/* CLOCK_MONOTONIC at open */
	struct ag_strbuf buf;
	long long	 buffered_since;	/* ms (monotonic) of the oldest buffered byte; 0 = none */
	unsigned char	 carry[4];	/* start of a UTF-8 character cut by the last read */
	size_t		 ncarry;
	unsigned	 cols, rows;	/* last size recorded */
	char		 error[256];	/* why fd is -1 */
};


static double
elapsed(const struct ag_rec *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - r->start.tv_sec) +
	    (double)(ts.tv_nsec - r->start.tv_nsec) / 1e9;
}

static int
dead(const struct ag_rec *r, struct ag_err *err)
{
	return ag_err_set(err, "recording %s: %s", r->path, r->error);
}


int
ag_rec_flush(struct ag_rec *r, struct ag_err *err)
{
	if (r->fd < 0)
		return dead(r, err);
	if (r->buf.len > 0 && ag_write_all(r->fd, r->buf.data, r->buf.len, NULL) < 0) {
		snprintf(r->error, sizeof(r->error), "%s", strerror(errno));
		(void)ag_privsep_close(&r->fd);
		ag_strbuf_reset(&r->buf);
		return dead(r, err);
	}
	ag_strbuf_reset(&r->buf);
	r->buffered_since = 0;
	return 0;
}

/* Append one serialised line to the buffer; flush when it is big. */
static int
queue(struct ag_rec *r, const char *line, size_t len, struct ag_err *err)
{
	if (r->fd < 0)
		return dead(r, err);
	if (ag_strbuf_append(&r->buf, line, len) < 0 || ag_strbuf_addch(&r->buf, '\n') < 0) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		(void)ag_privsep_close(&r->fd);
		return dead(r, err);
	}
	if (r->buffered_since == 0)
		r->buffered_since = ag_now_ms();
	if (r->buf.len >= AG_REC_BUF)
		return ag_rec_flush(r, err);
	return 0;
}

/* [time, code, data] with data encoded by json-c. */
static int
event(struct ag_rec *r, const char *code, const char *data, size_t len, struct ag_err *err)
{
	json_object *s;
	const char *js;
	size_t jl = 0;
	char head[64];
	int hl, rc;
	struct ag_strbuf line;

	if (r->fd < 0)
		return dead(r, err);
	if (len > INT_MAX || (s = json_object_new_string_len(data, (int)len)) == NULL)
		return ag_err_set(err, "recording: out of memory");
	js = json_object_to_json_string_length(s, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &jl);
	/* the time is formatted here: json-c would print a double with 17 digits */
	hl = snprintf(head, sizeof(head), "[%.6f, \"%s\", ", elapsed(r), code);
	ag_strbuf_init(&line, REC_BUF_LIMIT);
	if (js == NULL || hl < 0 || (size_t)hl >= sizeof(head) ||
	    ag_strbuf_append(&line, head, (size_t)hl) < 0 ||
	    ag_strbuf_append(&line, js, jl) < 0 || ag_strbuf_addch(&line, ']') < 0) {
		ag_strbuf_free(&line);
		json_object_put(s);
		return ag_err_set(err, "recording: out of memory");
	}
	json_object_put(s);
	rc = queue(r, line.data, line.len, err);
	ag_strbuf_free(&line);
	return rc;
}

int
ag_rec_output(struct ag_rec *r, const void *buf, size_t len, struct ag_err *err)
{
	unsigned char *src;
	char *out;
	size_t n, o, cut;
	int rc;

	if (r->fd < 0)
		return dead(r, err);
	if (len == 0)
		return 0;
	/* the carried bytes and this read, as one run */
	n = r->ncarry + len;
	if (len > SIZE_MAX - sizeof(r->carry) || (src = malloc(n)) == NULL)
		return ag_err_set(err, "recording: out of memory");
	memcpy(src, r->carry, r->ncarry);
	memcpy(src + r->ncarry, buf, len);
	/* a character cut by the read is finished with the next output */
	cut = ag_utf8_cut(src, n);
	memcpy(r->carry, src + n - cut, cut);
	r->ncarry = cut;
	if ((out = ag_utf8_repair((const char *)src, n - cut, &o)) == NULL) {
		free(src);
		return ag_err_set(err, "recording: out of memory");
	}
	rc = o > 0 ? event(r, "o", out, o, err) : 0;
	free(src);
	free(out);
	return rc;
}

int
ag_rec_input(struct ag_rec *r, const void *buf, size_t len, struct ag_err *err)
{
	char *txt;
	size_t o;
	int rc;

	if (!r->input || len == 0)
		return 0;
	if (r->fd < 0)
		return dead(r, err);
	/* keystrokes arrive whole; anything not UTF-8 is replaced rather than carried */
	if ((txt = ag_utf8_repair(buf, len, &o)) == NULL)
		return ag_err_set(err, "recording: out of memory");
	rc = event(r, "i", txt, o, err);
	free(txt);
	return rc;
}

int
ag_rec_marker(struct ag_rec *r, const char *label, size_t len, struct ag_err *err)
{
	/* room for every byte escaped (\xff), and the "..." */
	char shown[AG_REC_MARKER_MAX * 4 + 8];

	if (r->fd < 0)
		return dead(r, err);
	ag_utf8_visible(label, len, AG_REC_MARKER_MAX, shown, sizeof(shown));
	return event(r, "m", shown, strlen(shown), err);
}

int
ag_rec_resize(struct ag_rec *r, unsigned cols, unsigned rows, struct ag_err *err)
{
	char sz[32];
	int n;

	if (r->fd < 0)
		return dead(r, err);
	if (cols == r->cols && rows == r->rows)
		return 0;
	n = snprintf(sz, sizeof(sz), "%ux%u", cols, rows);
	if (n < 0 || (size_t)n >= sizeof(sz))
		return ag_err_set(err, "recording: bad size");
	if (event(r, "r", sz, (size_t)n, err) < 0)
		return -1;
	r->cols = cols;
	r->rows = rows;
	return 0;
}

long
ag_rec_next_tick_ms(const struct ag_rec *r)
{
	long long left;

	if (r == NULL || r->fd < 0 || r->buffered_since == 0)
		return -1;
	left = r->buffered_since + AG_REC_FLUSH_MS - ag_now_ms();
	return left < 0 ? 0 : (long)left;
}

int
ag_rec_tick(struct ag_rec *r, struct ag_err *err)
{
	if (r->fd < 0)
		return dead(r, err);
	if (r->buffered_since != 0 && ag_now_ms() - r->buffered_since >= AG_REC_FLUSH_MS)
		return ag_rec_flush(r, err);
	return 0;
}

int
ag_rec_input_enabled(const struct ag_rec *r)
{
	return r != NULL && r->input;
}

const char *
ag_rec_path(const struct ag_rec *r)
{
	return r != NULL ? r->path : NULL;
}

static int
valid_id(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= REC_ID_MAX || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	return i > 0;
}

static int
header(struct ag_rec *r, const struct ag_rec_info *info, struct ag_err *err)
{
	json_object *h = json_object_new_object(), *env = json_object_new_object();
	const char *js;
	size_t jl = 0;
	int rc;

	if (h == NULL || env == NULL) {
		json_object_put(h);
		json_object_put(env);
		return ag_err_set(err, "recording: out of memory");
	}
	json_object_object_add(h, "version", json_object_new_int(2));
	json_object_object_add(h, "width", json_object_new_int64(info->width));
	json_object_object_add(h, "height", json_object_new_int64(info->height));
	json_object_object_add(h, "timestamp", json_object_new_int64((int64_t)time(NULL)));
	if (info->term != NULL)
		json_object_object_add(env, "TERM", json_object_new_string(info->term));
	if (info->shell != NULL)
		json_object_object_add(env, "SHELL", json_object_new_string(info->shell));
	json_object_object_add(h, "env", env);
	json_object_object_add(h, "agentgate_session", json_object_new_string(info->session));
	if (info->identity != NULL)
		json_object_object_add(h, "agentgate_identity",
		    json_object_new_string(info->identity));
	if (info->user != NULL)
		json_object_object_add(h, "agentgate_user", json_object_new_string(info->user));
	js = json_object_to_json_string_length(h, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &jl);
	rc = js != NULL ? queue(r, js, jl, err) : ag_err_set(err, "recording: out of memory");
	json_object_put(h);
	/* the header goes out at once: a file that exists is a file that parses */
	return rc < 0 ? -1 : ag_rec_flush(r, err);
}

struct ag_rec *
ag_rec_open(const struct ag_rec_info *info, struct ag_err *err)
{
	struct ag_rec *r;
	struct stat st;
	char name[REC_ID_MAX + sizeof(AG_REC_SUFFIX)], why[128] = "cannot stat it";
	size_t plen;
	int dfd;

	if (info->dir == NULL || info->dir[0] != '/') {
		ag_err_set(err, "recordings directory %s: not an absolute path",
		    info->dir != NULL ? info->dir : "(none)");
		return NULL;
	}
	if (info->session == NULL || !valid_id(info->session)) {
		ag_err_set(err, "recording: session id is not a safe file name");
		return NULL;
	}
	snprintf(name, sizeof(name), "%s%s", info->session, AG_REC_SUFFIX);
	/* check the directory we then create in, not a name that could be swapped */
	if ((dfd = open(info->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		ag_err_set(err, "recordings directory %s: %s", info->dir, strerror(errno));
		return NULL;
	}
	/* anyone else who can write there could replace or delete recordings */
	if (fstat(dfd, &st) < 0 || ag_privsep_dir_ok(&st, why, sizeof(why)) < 0) {
		ag_err_set(err, "recordings directory %s: %s", info->dir, why);
		close(dfd);
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		close(dfd);
		ag_err_set(err, "recording: out of memory");
		return NULL;
	}
	plen = strlen(info->dir) + 1 + strlen(name) + 1;
	if ((r->path = malloc(plen)) == NULL) {
		close(dfd);
		free(r);
		ag_err_set(err, "recording: out of memory");
		return NULL;
	}
	snprintf(r->path, plen, "%s%s%s", info->dir,
	    info->dir[strlen(info->dir) - 1] == '/' ? "" : "/", name);
	ag_strbuf_init(&r->buf, REC_BUF_LIMIT);
	r->input = info->input;
	r->cols = info->width;
	r->rows = info->height;
	/* a symlink or an existing file in its place is refused, never followed */
	r->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY, 0600);
	close(dfd);
	ag_privsep_private_fd(r->fd);
	if (r->fd < 0) {
		ag_err_set(err, "recording %s: %s", r->path, strerror(errno));
		ag_rec_close(r, NULL);
		return NULL;
	}
	/* the umask must not decide; the gateway's group (privsep.h) reads it
	 * too, for `agentgate join` run by an observer the policy names */
	(void)fchmod(r->fd, ag_privsep_holding() ? 0640 : 0600);
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	if (header(r, info, err) < 0) {
		ag_rec_close(r, NULL);
		return NULL;
	}
	return r;
}

int
ag_rec_close(struct ag_rec *r, struct ag_err *err)
{
	int rc = 0;

	if (r == NULL)
		return 0;
	if (r->fd < 0)
		rc = dead(r, err);	/* what it holds is incomplete */
	else {
		/* a character still cut at the end will never be finished */
		if (r->ncarry > 0) {
			r->ncarry = 0;
			rc = event(r, "o", "\xef\xbf\xbd", 3, err);
		}
		if (ag_rec_flush(r, rc < 0 ? NULL : err) < 0)
			rc = -1;
		if (r->fd >= 0 && ag_privsep_close(&r->fd) < 0 && rc == 0)
			rc = ag_err_set(err, "recording %s: %s", r->path, strerror(errno));
	}
	ag_strbuf_free(&r->buf);
	free(r->path);
	free(r);
	return rc;
}
