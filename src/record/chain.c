/*
 * chain.c - the audit file's hash chain (see chain.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/err.h"
#include "common/misc.h"
#include "common/sha256.h"
#include "record/chain.h"

static void
to_hex(const unsigned char *md, size_t n, char out[AG_CHAIN_HEX])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n && 2 * i + 1 < AG_CHAIN_HEX; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 0xf];
	}
	out[2 * i] = '\0';
}

void
ag_chain_hash(const void *p, size_t n, char out[AG_CHAIN_HEX])
{
	unsigned char md[AG_SHA256_LEN];

	ag_sha256(p, n, md);
	to_hex(md, sizeof(md), out);
}

int
ag_chain_seed(char out[AG_CHAIN_HEX])
{
	unsigned char r[32];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	to_hex(r, sizeof(r), out);
	return 0;
}

int
ag_chain_tail(int fd, char out[AG_CHAIN_HEX], int *empty)
{
	unsigned char buf[8192], md[AG_SHA256_LEN];
	struct stat st;
	off_t end, start, pos;
	struct ag_sha256 h;

	*empty = 0;
	if (fstat(fd, &st) < 0)
		return -1;
	if (st.st_size == 0) {
		*empty = 1;
		return 0;
	}
	/* the last line ends before the final newline (a torn one, without
	 * it, is hashed as it is: verify reports it) */
	end = st.st_size;
	if (pread(fd, buf, 1, end - 1) != 1)
		return -1;
	if (buf[0] == '\n')
		end--;
	/* and starts after the newline before it */
	start = 0;
	for (pos = end; pos > 0 && start == 0; ) {
		size_t n = pos >= (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t r = pread(fd, buf, n, pos - (off_t)n);
		size_t i;

		if (r != (ssize_t)n)
			return -1;
		for (i = n; i > 0; i--)
			if (buf[i - 1] == '\n') {
				start = pos - (off_t)n + (off_t)i;
				break;
			}
		pos -= (off_t)n;
	}
	ag_sha256_init(&h);
	for (pos = start; pos < end; ) {
		size_t n = end - pos >= (off_t)sizeof(buf) ? sizeof(buf) : (size_t)(end - pos);

		if (pread(fd, buf, n, pos) != (ssize_t)n) {
			if (errno == 0)
				errno = EIO;
			return -1;
		}
		ag_sha256_update(&h, buf, n);
		pos += (off_t)n;
	}
	ag_sha256_final(&h, md);
	to_hex(md, sizeof(md), out);
	return 0;
}

int
ag_chain_state_path(const char *log, char *out, size_t n)
{
	const char *slash = strrchr(log, '/');
	int dirlen = slash == NULL ? 0 : (int)(slash - log + 1);
	int w;

	w = snprintf(out, n, "%.*s.%s.chain", dirlen, log, log + dirlen);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int AG_PRINTF(3, 4)
broken(struct ag_chain_result *res, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	res->line = line;
	va_start(ap, fmt);
	vsnprintf(res->what, sizeof(res->what), fmt, ap);
	va_end(ap);
	return 1;
}

/* The string field key of o, or NULL. */
static const char *
field(json_object *o, const char *key)
{
	json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

ssize_t
ag_chain_line(FILE *fp, char **buf, size_t *cap, int *too_long)
{
	size_t len = 0;
	int c;

	*too_long = 0;
	while ((c = getc_unlocked(fp)) != EOF) {
		if (len + 2 > *cap) {
			size_t want = *cap == 0 ? 4096 : *cap * 2;
			char *p;

			if (want > AG_CHAIN_MAX_LINE + 2)
				want = AG_CHAIN_MAX_LINE + 2;
			if ((p = realloc(*buf, want)) == NULL) {
				errno = ENOMEM;
				return -1;
			}
			*buf = p;
			*cap = want;
		}
		(*buf)[len++] = (char)c;
		if (c == '\n')
			break;
		if (len > AG_CHAIN_MAX_LINE) {
			*too_long = 1;
			break;
		}
	}
	if (ferror(fp))
		return -1;
	if (len > 0)
		(*buf)[len] = '\0';
	return (ssize_t)len;
}

/* Records of fp, from where res says the reading stopped. */
static int
verify_lines(FILE *fp, char last[AG_CHAIN_HEX], struct ag_chain_result *res)
{
	char want[AG_CHAIN_HEX];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0, after = last[0] != '\0', too_long;

	errno = 0;
	while ((n = ag_chain_line(fp, &line, &cap, &too_long)) > 0) {
		unsigned long k = ++res->records;
		json_tokener *tok;
		json_object *o = NULL;
		const char *prev, *seed;
		size_t len = (size_t)n;

		if (too_long) {
			/* not an audit log: refused unread, like a file that
			 * cannot be read (a gzip bomb, or the wrong file) */
			(void)broken(res, k, "line %lu is longer than %zu bytes: not an audit "
			    "log (not read further)", k, AG_CHAIN_MAX_LINE);
			errno = EFBIG;
			rc = -1;
			break;
		}
		if (line[len - 1] != '\n') {
			res->torn = 1;
			rc = broken(res, k, "truncated: the last record has no end (newline)");
			break;
		}
		len--;
		if ((tok = json_tokener_new()) == NULL) {
			errno = ENOMEM;
			rc = -1;
			break;
		}
		o = json_tokener_parse_ex(tok, line, (int)len);
		if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
		    json_tokener_get_parse_end(tok) != len || !json_object_is_type(o, json_type_object)) {
			json_tokener_free(tok);
			json_object_put(o);
			rc = broken(res, k, "not a JSON record");
			break;
		}
		json_tokener_free(tok);
		prev = field(o, "prev");
		seed = field(o, "seed");
		if (seed != NULL)
			ag_chain_hash(seed, strlen(seed), want);
		if (prev == NULL)
			rc = broken(res, k, "no chain field (prev): not written by the gateway, or "
			    "edited");
		else if (seed != NULL && k > 1)
			rc = broken(res, k, "a second start of the chain (seed): the records "
			    "before it were cut off, or another file was joined to this one");
		else if (seed != NULL && after)
			rc = broken(res, k, "starts a chain of its own (seed) instead of going on "
			    "from the file before it: that file's last records were removed, or "
			    "the files are not one series in this order");
		else if (seed != NULL && strcmp(prev, want) != 0)
			rc = broken(res, k, "altered (its prev does not match its seed)");
		else if (seed == NULL && k == 1 && !after) {
			/* the first file given: the chain began in a file before it
			 * (rotation, a collector's own file), or its start was cut
			 * off; nothing here tells which, and the caller says so */
			res->mid_chain = 1;
			snprintf(res->from, sizeof(res->from), "%.64s", prev);
		} else if (seed == NULL && strcmp(prev, last) != 0)
			rc = k == 1 ? broken(res, k, "the chain breaks between the file before this "
			    "one and this one: records at the end of that one or the start of this "
			    "one were removed, or the files are not one series in this order") :
			    broken(res, k, "the chain breaks here: line %lu was altered, or records "
			    "between it and this one were removed or reordered", k - 1);
		json_object_put(o);
		if (rc != 0)
			break;
		ag_chain_hash(line, len, last);
		res->end += (off_t)len + 1;
	}
	if (rc == 0 && n < 0)
		rc = -1;
	free(line);
	return rc;
}

int
ag_chain_verify(FILE *fp, char last[AG_CHAIN_HEX], struct ag_chain_result *res)
{
	memset(res, 0, sizeof(*res));
	return verify_lines(fp, last, res);
}

int
ag_chain_state_read(int fd, char out[AG_CHAIN_HEX])
{
	char buf[AG_CHAIN_HEX];
	size_t i;

	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    buf[AG_CHAIN_HEX - 1] != '\n')
		return -1;
	for (i = 0; i < AG_CHAIN_HEX - 1; i++)
		if (buf[i] == '\0' || strchr("0123456789abcdef", buf[i]) == NULL)
			return -1;
	memcpy(out, buf, AG_CHAIN_HEX - 1);
	out[AG_CHAIN_HEX - 1] = '\0';
	return 0;
}

/*
 * How long verify waits for the state's lock: a gateway holds it for one
 * record, and one stopped while holding it must not hang a cron job.
 */
#define END_LOCK_MS	5000L

/*
 * The end not checked, and why; a torn last line read before stays the
 * failure it was (1).
 */
static int AG_PRINTF(2, 3)
unchecked(struct ag_chain_result *res, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(res->note, sizeof(res->note), "its end is not checked: ");
	va_start(ap, fmt);
	vsnprintf(res->note + n, sizeof(res->note) - (size_t)n, fmt, ap);
	va_end(ap);
	return res->torn ? 1 : 0;
}

int
ag_chain_verify_end(FILE *fp, const char *log, char last[AG_CHAIN_HEX],
    struct ag_chain_result *res)
{
	char path[PATH_MAX];
	struct stat held, named;
	int fd, rc;

	res->note[0] = '\0';
	if (ag_chain_state_path(log, path, sizeof(path)) < 0)
		return unchecked(res, "the chain's state file's name is too long");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)) < 0)
		return unchecked(res, "the chain's state file %s: %s", path, strerror(errno));
	/* the lock every writer takes first, and keeps until the state says
	 * what it wrote: under it the file's end and the state agree */
	if (ag_flock_shared_bounded(fd, END_LOCK_MS) < 0) {
		rc = unchecked(res, "cannot lock the chain's state file %s: %s", path,
		    errno == ETIMEDOUT ? "a gateway has held it too long" : strerror(errno));
		close(fd);
		return rc;
	}
	if (fstat(fileno(fp), &held) < 0 || stat(log, &named) < 0 ||
	    held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
		/* the state now describes the file that replaced this one */
		rc = unchecked(res, "it was rotated (renamed or removed) while verify read it");
		close(fd);
		return rc;
	}
	/* what gateways appended while the file was read, and a last line
	 * read while it was being written, are read again, whole, now */
	if (res->torn) {
		res->records = res->line - 1;
		res->torn = 0;
	}
	res->line = 0;
	res->what[0] = '\0';
	if (fseeko(fp, res->end, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	if ((rc = verify_lines(fp, last, res)) != 0) {
		close(fd);
		return rc;
	}
	if (ag_chain_state_read(fd, res->state) < 0) {
		close(fd);
		return unchecked(res, "the chain's state file %s holds no hash", path);
	}
	close(fd);
	if (last[0] == '\0') {
		/* rotated, and nothing written since: the state names the last
		 * record of the file before it, which was not given */
		return unchecked(res, "it holds no record, and the chain's state names the "
		    "last record of the file before it (not given): %s", res->state);
	}
	if (strcmp(last, res->state) != 0)
		return broken(res, 0, "records are missing at the end of the file: the chain's "
		    "state file %s says the last record's hash is %s, the file ends at %s",
		    path, res->state, last);
	res->end_checked = 1;
	return 0;
}
