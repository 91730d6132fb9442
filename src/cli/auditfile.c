/*
 * auditfile.c - reading audit files: the policy's, a rotated series in
 * order, .gz and standard input (see auditfile.h).
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <zlib.h>

#include "cli/auditfile.h"
#include "common/config.h"
#include "common/err.h"
#include "common/lastgood.h"
#include "common/lazylib.h"
#include "record/chain.h"

/* ---- reading .gz and standard input through zlib ------------------------- */

static struct ag_lazylib zlib_lib = { "libz.so.1", 0, "" };

static struct {
	__typeof__(gzdopen)	*dopen;
	__typeof__(gzread)	*read;
	__typeof__(gzerror)	*error;
	__typeof__(gzclose)	*close;
} zl;

struct gz_cookie {
	gzFile	 gz;
	char	*why;		/* zlib's message on a read error */
	size_t	 whylen;
};

static ssize_t
gz_cookie_read(void *c, char *buf, size_t n)
{
	struct gz_cookie *g = c;
	int got, zerr;

	if (n > (size_t)1 << 30)
		n = (size_t)1 << 30;
	if ((got = zl.read(g->gz, buf, (unsigned)n)) < 0) {
		const char *m = zl.error(g->gz, &zerr);

		snprintf(g->why, g->whylen, "%s", zerr == Z_ERRNO ? strerror(errno) : m);
		errno = EIO;
		return -1;
	}
	/* gzread ends a stream cut short like a whole one: only gzerror
	 * tells them apart */
	if (got == 0 && (zl.error(g->gz, &zerr), zerr == Z_BUF_ERROR)) {
		snprintf(g->why, g->whylen, "the compressed file is cut short (unexpected end "
		    "of file)");
		errno = EIO;
		return -1;
	}
	return got;
}

static int
gz_cookie_close(void *c)
{
	struct gz_cookie *g = c;
	int rc = zl.close(g->gz);

	free(g);
	return rc == Z_OK ? 0 : EOF;
}

/*
 * fd as a stream of what it holds decompressed (or as it is, when it is
 * not gzip's), for getline.  NULL with why; fd is closed either way.
 */
static FILE *
gz_stream(int fd, char *why, size_t whylen)
{
#define SYM(f, m)	AG_LAZYSYM(__typeof__(zl), f, m)
	static const struct ag_lazysym sym[] = {
		SYM(gzdopen, dopen), SYM(gzread, read), SYM(gzerror, error), SYM(gzclose, close),
	};
#undef SYM
	static const cookie_io_functions_t io = {
		.read = gz_cookie_read, .close = gz_cookie_close,
	};
	struct gz_cookie *g;
	FILE *fp;

	if (ag_lazylib_load(&zlib_lib, sym, sizeof(sym) / sizeof(sym[0]), &zl) < 0) {
		snprintf(why, whylen, "%s", zlib_lib.why);
		close(fd);
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL || (g->gz = zl.dopen(fd, "rb")) == NULL) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		free(g);
		close(fd);
		return NULL;
	}
	g->why = why;
	g->whylen = whylen;
	if ((fp = fopencookie(g, "r", io)) == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		gz_cookie_close(g);
	}
	return fp;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

FILE *
ag_auditfile_open(const char *name, char *why, size_t whylen)
{
	FILE *fp;
	int fd;

	why[0] = '\0';
	if (strcmp(name, "-") == 0) {
		if ((fd = dup(STDIN_FILENO)) < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return NULL;
		}
		return gz_stream(fd, why, whylen);
	}
	if (has_suffix(name, ".gz")) {
		if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return NULL;
		}
		return gz_stream(fd, why, whylen);
	}
	if ((fp = fopen(name, "re")) == NULL)
		snprintf(why, whylen, "%s", strerror(errno));
	return fp;
}

/* ---- the order of a series -------------------------------------------- */

/*
 * logrotate's number of name: N for "BASE.N" or "BASE.N.gz", 0 for BASE
 * itself; the length of BASE in *baselen.
 */
static unsigned long
rotation_number(const char *name, size_t *baselen)
{
	size_t n = strlen(name), end, i;

	if (has_suffix(name, ".gz"))
		n -= 3;
	for (i = n; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	end = i;
	if (end == n || end < 2 || name[end - 1] != '.' || n - end > 9 ||
	    (name[end] == '0' && n - end > 1)) {
		*baselen = strlen(name);
		return 0;
	}
	*baselen = end - 1;
	return strtoul(name + end, NULL, 10);
}

/* Oldest first: the order a shell's glob does not give. */
void
ag_auditfile_order(char **names, int n)
{
	unsigned long *num;
	size_t len0 = 0, len;
	int i, j, numbered = 0;

	if (n < 2 || (num = calloc((size_t)n, sizeof(*num))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		num[i] = rotation_number(names[i], &len);
		if (strcmp(names[i], "-") == 0 || (has_suffix(names[i], ".gz") && num[i] == 0))
			goto out;
		if (i == 0)
			len0 = len;
		if (len != len0 || strncmp(names[i], names[0], len) != 0)
			goto out;
		numbered |= num[i] > 0;
		for (j = 0; j < i; j++)
			if (num[j] == num[i])
				goto out;
	}
	if (!numbered)
		goto out;
	/* a few files: insertion sort, highest number (oldest) first */
	for (i = 1; i < n; i++) {
		char *name = names[i];
		unsigned long k = num[i];

		for (j = i; j > 0 && num[j - 1] < k; j--) {
			names[j] = names[j - 1];
			num[j] = num[j - 1];
		}
		names[j] = name;
		num[j] = k;
	}
out:
	free(num);
}

/*
 * The policy at config, or when it does not load the last one that did
 * (lastgood.h), after a warning naming the error: the admin reads the
 * audit most when the policy is broken, and the gateway writes the
 * config_error records where the last good policy says.
 */
static struct ag_config *
load_or_last_good(const char *config, const char *cmd)
{
	struct ag_config *cfg;
	struct ag_err err, lerr;
	char msg[AG_ERR_MSG_MAX + 300];

	if ((cfg = ag_config_load(config, 0, &err)) != NULL)
		return cfg;
	if ((cfg = ag_lastgood_load(config, &lerr)) == NULL) {
		ag_err_print(stderr, &err);
		return NULL;
	}
	fprintf(stderr, "agentgate: %s: warning: the policy does not load (%s); using the "
	    "last policy that loaded\n", cmd, ag_err_format(&err, msg, sizeof(msg)));
	return cfg;
}

char *
ag_auditfile_configured(const char *config, const char *cmd, enum ag_auditfile_what what)
{
	struct ag_config *cfg;
	const char *v;
	char *file;

	if ((cfg = load_or_last_good(config, cmd)) == NULL)
		return NULL;
	v = what == AG_AUDITFILE_LOG ? cfg->gw.audit.file : cfg->gw.recordings;
	if (v == NULL) {
		fprintf(stderr, "agentgate: %s: %s %s\n", cmd, config, what == AG_AUDITFILE_LOG ?
		    "configures no audit file (gateway.audit.file): name the files" :
		    "records no sessions (gateway.recordings): name the file to play");
		ag_config_free(cfg);
		return NULL;
	}
	if ((file = strdup(v)) == NULL)
		fprintf(stderr, "agentgate: %s: %s\n", cmd, strerror(ENOMEM));
	ag_config_free(cfg);
	return file;
}

void
ag_auditfile_free(char **owned)
{
	size_t i;

	if (owned == NULL)
		return;
	for (i = 0; owned[i] != NULL; i++)
		free(owned[i]);
	free(owned);
}

/* Add a copy of name to the NULL-terminated *v of *n names; -1 when out of memory. */
static int
push(char ***v, int *n, const char *name)
{
	char **nv;

	if (*n >= 100000 || (nv = realloc(*v, ((size_t)*n + 2) * sizeof(*nv))) == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(name)) == NULL)
		return -1;
	nv[++*n] = NULL;
	return 0;
}

/*
 * file and the rotated files beside it (file.N, file.N.gz), oldest first,
 * as a NULL-terminated vector in *v; *n of them.  0, or -1 after saying
 * why on stderr.
 */
static int
series(const char *file, const char *cmd, char ***v, int *n)
{
	const char *slash = strrchr(file, '/'), *base = slash != NULL ? slash + 1 : file;
	size_t dirlen = slash != NULL ? (size_t)(slash - file) : 0, blen = strlen(base), len;
	char *dir, path[4096];
	struct dirent *de;
	DIR *d;

	*v = NULL;
	*n = 0;
	if (slash == NULL)
		dir = strdup(".");
	else
		dir = strndup(slash == file ? "/" : file, slash == file ? 1 : dirlen);
	if (dir == NULL)
		goto nomem;
	/* a directory that cannot be listed: the file alone, whose open says why */
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, base, blen) != 0 || de->d_name[blen] != '.' ||
			    rotation_number(de->d_name, &len) == 0 || len != blen)
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)dirlen, file,
			    de->d_name) >= sizeof(path))
				continue;
			if (push(v, n, slash != NULL ? path : de->d_name) < 0) {
				closedir(d);
				goto nomem;
			}
		}
		closedir(d);
	}
	free(dir);
	dir = NULL;
	if (push(v, n, file) < 0)
		goto nomem;
	ag_auditfile_order(*v, *n);
	return 0;
nomem:
	free(dir);
	fprintf(stderr, "agentgate: %s: %s\n", cmd, strerror(ENOMEM));
	ag_auditfile_free(*v);
	*v = NULL;
	return -1;
}

int
ag_auditfile_args(int argc, char **argv, const char *config, const char *cmd, int rotated,
    char ***names, int *n, char ***owned)
{
	char *file;
	int i, stdin_seen = 0, rc;

	*owned = NULL;
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "-") == 0 && stdin_seen++) {
			fprintf(stderr, "agentgate: %s: standard input (-) given twice\n", cmd);
			return -1;
		}
	if (argc == 0) {
		if ((file = ag_auditfile_configured(config, cmd, AG_AUDITFILE_LOG)) == NULL)
			return -1;
		*n = 0;
		if (rotated)
			rc = series(file, cmd, owned, n);
		else if ((rc = push(owned, n, file)) < 0)
			fprintf(stderr, "agentgate: %s: %s\n", cmd, strerror(ENOMEM));
		free(file);
		if (rc < 0)
			return -1;
		*names = *owned;
		return 0;
	}
	ag_auditfile_order(argv, argc);
	*names = argv;
	*n = argc;
	return 0;
}

int
ag_auditfile_gz(const char *name)
{
	return has_suffix(name, ".gz");
}

/* ---- times ------------------------------------------------------------ */

/* "YYYY-MM-DD[THH:MM[:SS[.mmm]]][Z]" (a space for the T) as ms since the
 * epoch, UTC; -1 when s is not one. */
long long
ag_auditfile_time(const char *s)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, n = 0, k;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -1;
	s += n;
	if (*s == 'T' || *s == ' ') {
		if (sscanf(s + 1, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5)
			return -1;
		s += 1 + n;
		if (*s == ':') {
			if (sscanf(s + 1, "%2d%n", &sec, &n) != 1 || n != 2)
				return -1;
			s += 1 + n;
			if (*s == '.') {
				for (s++, k = 0; *s >= '0' && *s <= '9'; s++, k++)
					if (k < 3)
						ms = ms * 10 + (*s - '0');
				if (k == 0)
					return -1;
				for (; k < 3; k++)
					ms *= 10;
			}
		}
	}
	if (*s == 'Z')
		s++;
	if (*s != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60 || h < 0 || mi < 0 || sec < 0)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	/* timegm carries the 31st of a 30-day month over: not a date */
	if (tm.tm_mday != d)
		return -1;
	return (long long)t * 1000 + ms;
}

/* WHEN, absolute or "N" and a unit before now, as ms; -1 when not one. */
long long
ag_auditfile_when(const char *s)
{
	static const struct { char unit; long long ms; } units[] = {
		{ 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 }, { 'd', 86400000 },
		{ 'w', 604800000 },
	};
	struct timespec now;
	unsigned long long n;
	char *end;
	size_t i;

	if (s[0] >= '0' && s[0] <= '9' && strchr(s, '-') == NULL) {
		errno = 0;
		n = strtoull(s, &end, 10);
		if (errno != 0 || end[0] == '\0' || end[1] != '\0' || n > 100ULL * 366 * 86400)
			return -1;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (units[i].unit == end[0]) {
				clock_gettime(CLOCK_REALTIME, &now);
				return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 -
				    (long long)n * units[i].ms;
			}
		return -1;
	}
	return ag_auditfile_time(s);
}

/* ---- the records ------------------------------------------------------ */

static const char *
shown(const char *name)
{
	return strcmp(name, "-") == 0 ? "(standard input)" : name;
}

int
ag_auditfile_each(char **names, int n, const char *cmd, ag_auditfile_fn fn, void *arg)
{
	char why[256], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int i, rc = 0, too_long, stop = 0;

	for (i = 0; i < n && !stop; i++) {
		unsigned long lineno = 0;
		FILE *fp;

		if ((fp = ag_auditfile_open(names[i], why, sizeof(why))) == NULL) {
			int e = errno;

			fprintf(stderr, "agentgate: %s: %s: %s%s\n", cmd, shown(names[i]), why,
			    e == EACCES ? " (root and the audit group can read it)" : "");
			free(line);
			return 2;
		}
		while (!stop && (len = ag_chain_line(fp, &line, &cap, &too_long)) > 0) {
			json_object *o;

			lineno++;
			if (too_long) {
				fprintf(stderr, "agentgate: %s: %s:%lu: a line over 64 MiB, "
				    "which no record is: not read further\n", cmd, shown(names[i]),
				    lineno);
				rc = 1;
				break;
			}
			if (len == 1 && line[0] == '\n')
				continue;
			o = json_tokener_parse(line);
			if (o == NULL || !json_object_is_type(o, json_type_object)) {
				fprintf(stderr, "agentgate: %s: %s:%lu: not a record\n", cmd,
				    shown(names[i]), lineno);
				json_object_put(o);
				rc = 1;
				continue;
			}
			stop = fn(arg, o, line, (size_t)len);
			json_object_put(o);
		}
		if (!stop && (len < 0 || fclose(fp) == EOF)) {
			fprintf(stderr, "agentgate: %s: %s: %s\n", cmd, shown(names[i]),
			    why[0] != '\0' ? why : strerror(errno));
			if (len < 0)
				fclose(fp);
			free(line);
			return 2;
		}
		if (stop)
			fclose(fp);
	}
	free(line);
	return stop ? stop : rc;
}
