/*
 * cmd_replay.c - agentgate replay: play a session recording (asciicast v2)
 * as a transcript in which the gateway's own lines cannot be imitated,
 * erased or overwritten by what the agent's programs printed: output is
 * its text alone, every line of it behind a margin, and the gateway's
 * lines stand at the left edge (in reverse video on a terminal, which
 * output can no longer produce).  --raw plays what the programs drew,
 * as they drew it, with only what could reach beyond the screen taken
 * out (record/termfilter.h): faithful, and forgeable.
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/auditfile.h"
#include "cli/castplay.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "record/recording.h"
#include "record/termfilter.h"


static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate replay [--config FILE] [--speed N] [--idle-limit SECONDS]\n"
	    "                        [--transcript | --raw] FILE | SESSION\n"
	    "       agentgate replay --list [--config FILE]\n"
	    "\n"
	    "Play a session recording (asciicast v2, gateway.recordings): FILE, or\n"
	    "the recording of SESSION (its id or the start of it, 4 hex digits or\n"
	    "more) in the policy's recordings directory.  Every line the gateway\n"
	    "wrote (each command it ran, each refusal) is shown as \"[SECONDS] LINE\"\n"
	    "(in reverse video on a terminal); what the recorded programs printed is\n"
	    "shown as text, every line indented under \"| \", without escape\n"
	    "sequences, carriage returns or backspaces: output cannot move the\n"
	    "cursor, erase, or pass for the gateway's lines.\n"
	    "\n"
	    "  --config FILE         the policy (default %s)\n"
	    "  --list                the recordings there, newest first: session,\n"
	    "                        identity@account, start (UTC), size in bytes\n"
	    "  --speed N             play N times as fast (default 1)\n"
	    "  --idle-limit SECONDS  shorten every pause to at most this (default 2;\n"
	    "                        0: no pauses)\n"
	    "  --transcript          the same lines at once, with no pauses\n"
	    "  --raw                 what the programs drew, as they drew it (for\n"
	    "                        full-screen programs), without what reaches beyond\n"
	    "                        the screen (clipboard writes, titles, links, DCS/APC\n"
	    "                        strings, C1 controls, queries that make the\n"
	    "                        terminal answer); the gateway's lines in reverse\n"
	    "                        video.  Faithful, so forgeable: output can erase,\n"
	    "                        overwrite and imitate the gateway's lines\n",
	    AG_DEFAULT_CONFIG);
}

/* The whole file, line by line. */
static int
play(struct ag_castplay *p, FILE *fp)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	while (rc == 0 && (n = getline(&buf, &cap, fp)) >= 0)
		rc = ag_castplay_line(p, buf, (size_t)n);
	free(buf);
	return ag_castplay_end(p, rc);
}

static int
number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && isfinite(*v) && *v >= 0 ? 0 : -1;
}

/* ---- finding a recording by its session ----------------------------------- */

#define HEADER_MAX	65536	/* a header line; the gateway's are far smaller */

struct cast {
	char		*name;		/* SESSION.cast */
	char		 identity[4 * 64 + 8], user[4 * 64 + 8];	/* shown safe */
	long long	 start;		/* the header's timestamp, else the mtime */
	long long	 size;
};

static void
free_casts(struct cast *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static int
newest_first(const void *a, const void *b)
{
	const struct cast *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void
header_field(json_object *h, const char *key, char *out, size_t outsz)
{
	json_object *v;
	const char *s;

	if (h != NULL && json_object_object_get_ex(h, key, &v) &&
	    json_object_is_type(v, json_type_string) && (s = json_object_get_string(v))[0] != '\0')
		ag_utf8_visible(s, strlen(s), 64, out, outsz);
	else
		snprintf(out, outsz, "-");
}

/* c's identity, account and start from its header line (what it has). */
static void
read_header(int dfd, struct cast *c)
{
	char *line;
	json_object *h = NULL, *v;
	struct stat st;
	FILE *fp = NULL;
	int fd;

	if ((fd = openat(dfd, c->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0 &&
	    fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		c->size = (long long)st.st_size;
		c->start = (long long)st.st_mtime;
		fp = fdopen(fd, "re");
	}
	if (fp == NULL && fd >= 0)
		close(fd);
	if (fp != NULL && (line = malloc(HEADER_MAX)) != NULL) {
		if (fgets(line, HEADER_MAX, fp) != NULL)
			h = json_tokener_parse(line);
		free(line);
	}
	if (fp != NULL)
		fclose(fp);
	if (h != NULL && !json_object_is_type(h, json_type_object)) {
		json_object_put(h);
		h = NULL;
	}
	header_field(h, "agentgate_identity", c->identity, sizeof(c->identity));
	header_field(h, "agentgate_user", c->user, sizeof(c->user));
	if (h != NULL && json_object_object_get_ex(h, "timestamp", &v) &&
	    json_object_is_type(v, json_type_int))
		c->start = (long long)json_object_get_int64(v);
	json_object_put(h);
}

/*
 * The recordings in dir whose session starts with prefix (NULL: all),
 * newest first, into *out (free with free_casts); their number, or -1
 * after saying why.
 */
static int
find_casts(const char *dir, const char *prefix, struct cast **out)
{
	struct cast *v = NULL, *nv;
	struct dirent *de;
	size_t n = 0, cap = 0, plen = prefix != NULL ? strlen(prefix) : 0, sl = strlen(AG_REC_SUFFIX);
	DIR *d;

	*out = NULL;
	if ((d = opendir(dir)) == NULL) {
		fprintf(stderr, "agentgate: replay: %s: %s%s\n", dir, strerror(errno),
		    errno == EACCES ? " (root and the gateway's group can read it)" : "");
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len <= sl ||
		    strcmp(de->d_name + len - sl, AG_REC_SUFFIX) != 0 ||
		    (prefix != NULL && (len - sl < plen || strncasecmp(de->d_name, prefix, plen) != 0)))
			continue;
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto nomem;
			v = nv;
		}
		memset(&v[n], 0, sizeof(v[n]));
		if ((v[n].name = strdup(de->d_name)) == NULL)
			goto nomem;
		read_header(dirfd(d), &v[n]);
		n++;
	}
	closedir(d);
	if (n > 0)	/* qsort's base may not be NULL, even for none */
		qsort(v, n, sizeof(*v), newest_first);
	*out = v;
	return (int)n;
nomem:
	closedir(d);
	fprintf(stderr, "agentgate: replay: %s\n", strerror(ENOMEM));
	free_casts(v, n);
	return -1;
}

static void
print_cast(FILE *fp, const struct cast *c)
{
	char when[32], who[sizeof(c->identity) + sizeof(c->user)];
	time_t t = (time_t)c->start;
	struct tm tm;
	int idlen = (int)(strlen(c->name) - strlen(AG_REC_SUFFIX));

	if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(when, sizeof(when), "-");
	snprintf(who, sizeof(who), "%s@%s", c->identity, c->user);
	fprintf(fp, "%-32.*s  %-24s  %-20s  %10lld\n", idlen, c->name, who, when, c->size);
}

static void
print_casts(FILE *fp, const struct cast *v, int n)
{
	int i;

	fprintf(fp, "%-32s  %-24s  %-20s  %10s\n", "SESSION", "IDENTITY@USER", "START", "SIZE");
	for (i = 0; i < n; i++)
		print_cast(fp, &v[i]);
}

/* A name that is a session id, or its start, rather than a file's. */
static int
session_like(const char *s)
{
	size_t n = strlen(s);

	return n >= 4 && n <= 128 && strspn(s, "0123456789abcdefABCDEF") == n;
}

/* The file of the recording of session (a prefix) in the policy's
 * directory, malloc'd; NULL after saying why. */
static char *
session_file(const char *config, const char *session)
{
	struct cast *v;
	char *dir, *path = NULL;
	int n;

	if ((dir = ag_auditfile_configured(config, "replay", AG_AUDITFILE_RECORDINGS)) == NULL)
		return NULL;
	if ((n = find_casts(dir, session, &v)) == 0)
		fprintf(stderr, "agentgate: replay: no recording of session %s in %s\n", session, dir);
	else if (n > 1) {
		fprintf(stderr, "agentgate: replay: %d recordings in %s are of a session starting "
		    "%s; give more of its id:\n", n, dir, session);
		print_casts(stderr, v, n);
	} else if (n == 1 && asprintf(&path, "%s/%s", dir, v[0].name) < 0) {
		path = NULL;
		fprintf(stderr, "agentgate: replay: %s\n", strerror(ENOMEM));
	}
	if (n > 0)
		free_casts(v, n);
	free(dir);
	return path;
}

static int
list(const char *config)
{
	struct cast *v;
	char *dir;
	int n;

	if ((dir = ag_auditfile_configured(config, "replay", AG_AUDITFILE_RECORDINGS)) == NULL)
		return 2;
	n = find_casts(dir, NULL, &v);
	free(dir);
	if (n < 0)
		return 2;
	if (n == 0)
		printf("no recordings\n");
	else
		print_casts(stdout, v, n);
	free_casts(v, n);
	return 0;
}

int
ag_cmd_replay(int argc, char **argv)
{
	const char *config = AG_DEFAULT_CONFIG, *file;
	struct ag_castplay p;
	struct stat st;
	char *found = NULL;
	FILE *fp;
	int i, rc, listing = 0;

	int raw = 0, transcript = 0;
	double speed = 1, idle_limit = 2;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--transcript") == 0)
			transcript = 1;
		else if (strcmp(a, "--raw") == 0)
			raw = 1;
		else if (strcmp(a, "--list") == 0)
			listing = 1;
		else if (strcmp(a, "--config") == 0 && i + 1 < argc)
			config = argv[++i];
		else if (strcmp(a, "--speed") == 0 && i + 1 < argc) {
			if (number(argv[++i], &speed) < 0 || speed <= 0) {
				fprintf(stderr, "agentgate: replay: --speed takes a number above 0\n");
				return 2;
			}
		} else if (strcmp(a, "--idle-limit") == 0 && i + 1 < argc) {
			if (number(argv[++i], &idle_limit) < 0) {
				fprintf(stderr, "agentgate: replay: --idle-limit takes seconds, 0 or more\n");
				return 2;
			}
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (listing && i == argc)
		return list(config);
	if (listing || i != argc - 1 || (raw && transcript)) {
		usage(stderr);
		return 2;
	}
	file = argv[i];
	/* not a file here: a session's id, looked up among the recordings */
	if (stat(file, &st) < 0 && errno == ENOENT && session_like(file)) {
		if ((found = session_file(config, file)) == NULL)
			return 2;
		file = found;
	}
	if ((fp = fopen(file, "re")) == NULL) {
		fprintf(stderr, "agentgate: replay: %s: %s\n", file, strerror(errno));
		free(found);
		return 2;
	}
	ag_castplay_init(&p, "replay", file, raw);
	p.speed = speed;
	p.idle_limit = idle_limit;
	p.transcript = transcript;
	rc = play(&p, fp);
	fclose(fp);
	free(found);
	return rc;
}
