/* audit.c - JSON Lines audit records; see audit.h */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "log.h"

struct ag_audit {
	int	 fd;		/* file sink, -1 when none or unusable */
	int	 has_file;
	char	*file;
	char	 file_error[PATH_MAX + 128];	/* why fd is -1 although has_file */
	int	 has_syslog;
	int	 facility;
	int	 required;
	char	 session[33];
	char	*user, *identity, *profile, *client, *mode;
	char	*recording, *recording_error;
	struct timespec start;
};

/* ---- JSON helpers -------------------------------------------------------- */

/* Length of a valid UTF-8 sequence at p (max n bytes), 0 if invalid. */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

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
	char *buf;

	for (i = 0; i < n; i += k)
		if ((k = utf8_seq(p + i, n - i)) == 0)
			break;
	if (i >= n)
		return json_object_new_string_len(s, (int)(n > INT_MAX ? INT_MAX : n));
	if (n > (SIZE_MAX - 1) / 3 || (buf = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; ) {
		if ((k = utf8_seq(p + i, n - i)) == 0) {
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

/* Serialise and send to every sink; frees o. */
static int
emit(struct ag_audit *a, json_object *o, struct ag_err *err)
{
	const char *js;
	size_t len = 0;
	char *line;
	int rc = 0;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	js = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (js == NULL || (line = malloc(len + 2)) == NULL) {
		json_object_put(o);
		return ag_err_set(err, "audit: out of memory");
	}
	memcpy(line, js, len);
	line[len] = '\n';
	line[len + 1] = '\0';
	if (a->has_file) {
		if (a->fd < 0) {
			rc = ag_err_set(err, "audit log %s: %s", a->file, a->file_error);
		} else {
			ssize_t w;

			/* one write per record: O_APPEND makes it land whole */
			do
				w = write(a->fd, line, len + 1);
			while (w < 0 && errno == EINTR);
			if (w != (ssize_t)(len + 1)) {
				snprintf(a->file_error, sizeof(a->file_error), "%s",
				    w < 0 ? strerror(errno) : "short write");
				rc = ag_err_set(err, "audit log %s: %s", a->file, a->file_error);
				/* a torn record would corrupt the next one: stop using the file */
				close(a->fd);
				a->fd = -1;
			}
		}
	}
	if (a->has_syslog)
		syslog(a->facility | LOG_INFO, "%s", line);
	free(line);
	json_object_put(o);
	return rc;
}

/* ---- the file sink ------------------------------------------------------- */

static int
open_file(struct ag_audit *a, const struct ag_audit_conf *conf)
{
	char dir[PATH_MAX], *slash;
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
	if (!S_ISDIR(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(a->file_error, sizeof(a->file_error),
		    "directory %s is writable by group or others", dir);
		return -1;
	}
	fd = open(conf->file, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		fd = open(conf->file, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY, mode);
		created = fd >= 0;
		if (fd < 0 && errno == EEXIST)	/* another session created it first */
			fd = open(conf->file, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			    O_NOCTTY);
	}
	if (fd < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(a->file_error, sizeof(a->file_error),
		    "not a regular file, or writable by group or others");
		close(fd);
		return -1;
	}
	if (created) {
		(void)fchmod(fd, mode);		/* the umask must not decide */
		if (conf->group != NULL) {
			struct group *gr = getgrnam(conf->group);

			if (gr == NULL || fchown(fd, (uid_t)-1, gr->gr_gid) < 0)
				ag_log(LOG_WARNING, "audit log %s: cannot give it to group %s",
				    conf->file, conf->group);
		}
	}
	a->fd = fd;
	return 0;
}

/* ---- public ---------------------------------------------------------------- */

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
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
	}
	return a;
}

void
ag_audit_close(struct ag_audit *a)
{
	if (a == NULL)
		return;
	if (a->fd >= 0)
		close(a->fd);
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
	struct stat st;

	if (a->has_file) {
		if (a->fd < 0)
			return ag_err_set(err, "audit log %s: %s", a->file, a->file_error);
		/* a log that was deleted under us records nothing anyone will read */
		if (fstat(a->fd, &st) < 0 || st.st_nlink == 0)
			return ag_err_set(err, "audit log %s: removed while in use", a->file);
	}
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

int
ag_audit_command(struct ag_audit *a, const struct ag_audit_cmd *c, struct ag_err *err)
{
	json_object *o = record(a, "command");

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	if (c->command != NULL)
		json_object_object_add(o, "command", jstr(c->command, c->command_len));
	add_str(o, "cwd", c->cwd);
	add_str(o, "decision", c->decision);
	add_str(o, "reason", c->reason);
	add_str(o, "rule", c->rule);
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
