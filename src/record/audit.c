/*
 * audit.c - the audit records (see audit.h): what each event says, built
 * with json-c, and handed to the session's sinks (sink.h: the file, the
 * collector and its spool, syslog).
 */
#include "agconfig.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/sha256.h"
#include "record/audit.h"
#include "record/sink.h"

struct ag_audit {
	int		 required;
	char		 session[33];
	unsigned long	 seq;		/* write-ahead records so far */
	char		*user, *identity, *profile, *client, *key, *token, *mode;
	int		 rollout;
	char		 host[256];	/* this machine, for records read elsewhere */
	char		*recording, *recording_error;
	struct timespec	 start;
	struct ag_sink	*sinks;		/* the file sink first: it adds the chain fields */
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

	if (ag_utf8_valid(s, n))
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
	add_str(o, "key", a->key);
	add_str(o, "token", a->token);
	add_str(o, "host", a->host[0] != '\0' ? a->host : NULL);
	add_str(o, "mode", a->mode);
	return o;
}

const char *
ag_audit_rec_text(struct ag_audit_rec *r, size_t *len)
{
	const char *js;
	size_t n = 0;

	if (r->line == NULL) {
		js = json_object_to_json_string_length(r->o, JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		if (js == NULL || (r->line = ag_utf8_json_safe(js, n, &r->len)) == NULL)
			return NULL;
		/* json_safe leaves room: it allocates 6 per byte */
		r->line[r->len++] = '\n';
		r->line[r->len] = '\0';
	}
	*len = r->len;
	return r->line;
}

/*
 * Send to every sink; frees o.  sync: a write-ahead record, on the disk
 * before this returns.  The record counts as written when a durable sink
 * (the file, the collector or its spool) took it; a durable sink that
 * failed while another took the record is logged.
 */
static int
emit_sync(struct ag_audit *a, json_object *o, int sync, struct ag_err *err)
{
	struct ag_audit_rec r = { o, NULL, 0 };
	struct ag_strbuf whys;
	struct ag_sink *s;
	struct ag_err why;
	int durable = 0, took = 0, rc = 0;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	ag_strbuf_init(&whys, 2 * AG_ERR_MSG_MAX);
	for (s = a->sinks; s != NULL; s = s->next) {
		ag_err_clear(&why);
		durable |= s->ops->durable;
		if (s->ops->emit(s, &r, sync, &why) == 0)
			took |= s->ops->durable;
		else if (s->ops->durable)
			(void)ag_strbuf_printf(&whys, "%s%s", whys.len > 0 ? "; " : "", why.msg);
		else
			ag_log(LOG_ERR, "audit %s: %s", s->ops->name, why.msg);
	}
	if (durable && !took)
		rc = ag_err_set(err, "%s", whys.len > 0 ? whys.data : "audit: no sink took the record");
	else if (whys.len > 0)
		ag_log(LOG_ERR, "%s", whys.data);
	ag_strbuf_free(&whys);
	free(r.line);
	json_object_put(o);
	return rc;
}

static int
emit(struct ag_audit *a, json_object *o, struct ag_err *err)
{
	return emit_sync(a, o, 0, err);
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
	if (gethostname(a->host, sizeof(a->host) - 1) < 0)
		a->host[0] = '\0';
	if (info != NULL) {
		a->user = dup_or_null(info->user);
		a->identity = dup_or_null(info->identity);
		a->profile = dup_or_null(info->profile);
		a->client = dup_or_null(info->client);
		a->key = dup_or_null(info->key);
		a->token = dup_or_null(info->token);
		a->mode = dup_or_null(info->mode);
		a->rollout = info->rollout;
	}
	if (conf != NULL) {
		struct ag_sink **tail = &a->sinks;

		a->required = conf->required;
		/* the file first: its chain fields are in every sink's line */
		if (conf->file != NULL && (*tail = ag_sink_file_open(conf)) != NULL)
			tail = &(*tail)->next;
		else if (conf->file != NULL)
			goto oom;
		if (conf->http_url != NULL && (*tail = ag_sink_http_open(conf)) != NULL)
			tail = &(*tail)->next;
		else if (conf->http_url != NULL)
			goto oom;
		if (conf->has_syslog && (*tail = ag_sink_syslog_open(conf->syslog_facility)) != NULL)
			tail = &(*tail)->next;
		else if (conf->has_syslog)
			goto oom;
	}
	return a;
oom:
	ag_audit_close(a);
	ag_err_set(err, "audit: out of memory");
	return NULL;
}

struct ag_audit *
ag_audit_open_memory(const struct ag_audit_conf *conf, const struct ag_audit_info *info,
    struct ag_err *err)
{
	struct ag_audit *a = ag_audit_open(conf, info, err);
	struct ag_sink **tail;

	if (a == NULL)
		return NULL;
	for (tail = &a->sinks; *tail != NULL; tail = &(*tail)->next)
		;
	if ((*tail = ag_sink_memory_open()) == NULL) {
		ag_audit_close(a);
		ag_err_set(err, "audit: out of memory");
		return NULL;
	}
	return a;
}

const char *
ag_audit_memory(const struct ag_audit *a)
{
	const struct ag_sink *s;

	for (s = a->sinks; s != NULL; s = s->next)
		if (strcmp(s->ops->name, "memory") == 0)
			return ag_sink_memory_text(s);
	return "";
}

void
ag_audit_close(struct ag_audit *a)
{
	if (a == NULL)
		return;
	while (a->sinks != NULL) {
		struct ag_sink *s = a->sinks;

		a->sinks = s->next;
		s->ops->close(s);
	}
	free(a->user);
	free(a->identity);
	free(a->profile);
	free(a->client);
	free(a->key);
	free(a->token);
	free(a->mode);
	free(a->recording);
	free(a->recording_error);
	free(a);
}

int
ag_audit_ready(const struct ag_audit *a, struct ag_err *err)
{
	struct ag_strbuf whys;
	const struct ag_sink *s;
	struct ag_err why;
	int durable = 0, rc = 0;

	ag_strbuf_init(&whys, 2 * AG_ERR_MSG_MAX);
	for (s = a->sinks; s != NULL; s = s->next) {
		if (!s->ops->durable)
			continue;
		durable = 1;
		ag_err_clear(&why);
		if (s->ops->ready(s, &why) == 0)
			break;		/* one that can take records is enough */
		(void)ag_strbuf_printf(&whys, "%s%s", whys.len > 0 ? "; " : "", why.msg);
	}
	if (durable && s == NULL)
		rc = ag_err_set(err, "%s", whys.len > 0 ? whys.data : "audit: no sink");
	ag_strbuf_free(&whys);
	return rc;
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

void
ag_audit_who(const struct ag_audit *a, const char **user, const char **identity,
    const char **client)
{
	*user = a->user;
	*identity = a->identity;
	*client = a->client;
}

int
ag_audit_session_start(struct ag_audit *a, struct ag_err *err)
{
	json_object *o = record(a, "session_start");

	/* a profile in rollout runs what it would refuse: said up front */
	if (o != NULL && a->rollout)
		add_str(o, "enforce", "audit");
	return emit(a, o, err);
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
	if (c->line != NULL && c->command != NULL && (c->line_len != c->command_len ||
	    memcmp(c->line, c->command, c->line_len) != 0)) {
		unsigned char h[AG_SHA256_LEN];
		char hex[2 * AG_SHA256_LEN + 1];
		json_object *pr = json_object_new_array();
		size_t i;

		ag_sha256(c->line, c->line_len, h);
		for (i = 0; i < AG_SHA256_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", h[i]);
		add_str(o, "command_sha256", hex);
		for (i = 0; pr != NULL && i < c->nprograms; i++)
			json_object_array_add(pr, jstr(c->programs[i], strlen(c->programs[i])));
		if (pr != NULL)
			json_object_object_add(o, "programs", pr);
	}
	add_str(o, "cwd", c->cwd);
	add_str(o, "decision", c->decision);
	add_str(o, "reason", c->reason);
	add_str(o, "rule", c->rule);
	add_str(o, "rule_label", c->rule_label);
	if (c->validator != NULL)
		json_object_object_add(o, "validator", json_object_get(c->validator));
	if (c->approval_id != NULL) {
		json_object *v = json_object_new_object();

		if (v != NULL) {
			add_str(v, "id", c->approval_id);
			add_str(v, "approver", c->approver);
			add_str(v, "scope", c->approval_scope);
			add_int(v, "approval_ms", c->approval_ms);
			json_object_object_add(o, "approval", v);
		}
	}
	if (c->target != NULL) {
		const struct ag_audit_target *t = c->target;
		json_object *v = json_object_new_object();

		if (v != NULL) {
			add_str(v, "name", t->name);
			add_str(v, "host", t->host);
			add_int(v, "port", t->port);
			add_str(v, "user", t->user);
			if (t->hostkey_sha256 != NULL)
				add_str(v, "hostkey", t->hostkey_sha256);
			if (t->key_sha256 != NULL)
				add_str(v, "key", t->key_sha256);
			if (t->pty_cols > 0) {
				char sz[32];

				snprintf(sz, sizeof(sz), "%dx%d", t->pty_cols, t->pty_rows);
				add_str(v, "pty", sz);
			}
			if (t->error != NULL)
				add_str(v, "error", t->error);
			json_object_object_add(o, "target", v);
		}
	}
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
		if (c->net_unrecorded > 0)
			add_int(o, "net_unrecorded", (long long)c->net_unrecorded);
	}
	if (c->ran && c->execs_known) {
		json_object *ex = json_object_new_array();
		size_t i;

		for (i = 0; ex != NULL && i < c->nexecs; i++)
			json_object_array_add(ex, jstr(c->execs[i], strlen(c->execs[i])));
		if (ex != NULL)
			json_object_object_add(o, "execs", ex);
		if (c->execs_unlisted > 0)
			add_int(o, "execs_unlisted", (long long)c->execs_unlisted);
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
ag_audit_session_lost(struct ag_audit *a, const char *session, long pid, const char *since,
    const char *witness, struct ag_err *err)
{
	json_object *o;
	char detail[256];

	if (strlen(session) != sizeof(a->session) - 1 ||
	    strspn(session, "0123456789abcdef") != sizeof(a->session) - 1)
		return ag_err_set(err, "audit: '%.40s' is not a session id", session);
	memcpy(a->session, session, sizeof(a->session));
	if ((o = record(a, "session_end")) == NULL)
		return ag_err_set(err, "audit: out of memory");
	snprintf(detail, sizeof(detail), "its gateway (pid %ld, since %s) ended without "
	    "recording the session's end: killed or crashed; how is not known here", pid,
	    since != NULL && *since ? since : "?");
	add_str(o, "reason", "gateway_lost");
	add_str(o, "detail", detail);
	add_str(o, "witness", witness);
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

int
ag_audit_set_mode(struct ag_audit *a, const char *mode)
{
	char *m;

	if (mode == NULL || (m = strdup(mode)) == NULL)
		return -1;
	free(a->mode);
	a->mode = m;
	return 0;
}

int
ag_audit_config_error(const struct ag_audit_info *info, const char *request,
    const struct ag_audit_conf *last_good, const char *path, const char *message)
{
	struct ag_audit_conf conf;
	struct ag_audit *a;
	struct ag_err err;
	json_object *o;
	int rc = -1;

	memset(&conf, 0, sizeof(conf));
	if (last_good != NULL)
		conf = *last_good;
	/* syslog always: the one place known without any policy */
	if (!conf.has_syslog) {
		conf.has_syslog = 1;
		conf.syslog_facility = LOG_AUTHPRIV;
	}
	if ((a = ag_audit_open(&conf, info, NULL)) == NULL)
		return -1;
	if ((o = record(a, "config_error")) != NULL) {
		add_str(o, "request", request);
		add_str(o, "config", path);
		add_str(o, "decision", "deny");
		add_str(o, "reason", message);
		ag_err_clear(&err);
		/* a durable sink: the file or the collector took it */
		if (emit(a, o, &err) == 0 && (conf.file != NULL || conf.http_url != NULL))
			rc = 0;
		else if (conf.file != NULL || conf.http_url != NULL)
			ag_log(LOG_ERR, "config_error record not written to the last good policy's "
			    "audit destinations: %s", err.msg);
	}
	ag_audit_close(a);
	return rc;
}

int
ag_audit_exec_denied(struct ag_audit *a, const char *command, size_t command_len,
    const char *path, char *const *argv, size_t argc, const char *reason, const char *rule,
    int would, struct ag_err *err)
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
	add_str(o, "decision", would ? "would_deny" : "deny");
	add_str(o, "reason", reason);
	add_str(o, "rule", rule);
	return emit(a, o, err);
}

int
ag_audit_approval_requested(struct ag_audit *a, const char *id, const char *rule,
    const char *command, size_t command_len, const char *approvers,
    const char *justification, struct ag_err *err)
{
	json_object *o = record(a, "approval_requested");

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	add_str(o, "id", id);
	add_str(o, "rule", rule);
	if (command != NULL)
		json_object_object_add(o, "command", jstr(command, command_len));
	add_str(o, "approvers", approvers);
	if (justification != NULL)
		json_object_object_add(o, "justification", jstr(justification,
		    strlen(justification)));
	return emit(a, o, err);
}

int
ag_audit_approval_answer(struct ag_audit *a, const char *session, const char *id,
    int approved, const char *scope, long long until, const char *approver,
    const char *reason, struct ag_err *err)
{
	json_object *o = record(a, "approval_answer");

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	add_str(o, "request", session);
	add_str(o, "id", id);
	add_str(o, "answer", approved ? "approved" : "refused");
	add_str(o, "decision", approved ? "allow" : "deny");
	if (approved)
		add_str(o, "scope", scope);
	if (until > 0)
		add_int(o, "until", until);
	add_str(o, "approver", approver);
	if (reason != NULL)
		json_object_object_add(o, "reason", jstr(reason, strlen(reason)));
	return emit(a, o, err);
}

void
ag_audit_forked(struct ag_audit *a)
{
	struct ag_sink *s;

	for (s = a != NULL ? a->sinks : NULL; s != NULL; s = s->next)
		if (s->ops->forked != NULL)
			s->ops->forked(s);
}

int
ag_audit_net(struct ag_audit *a, const struct ag_audit_net *n, struct ag_err *err)
{
	json_object *o = record(a, "net"), *d;

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	if (n->seq > 0)
		add_int(o, "seq", (long long)n->seq);
	add_str(o, "proto", n->proto);
	/* where it was going: "host" is already this machine's */
	if ((d = json_object_new_object()) != NULL) {
		if (n->host != NULL)
			json_object_object_add(d, "host", jstr(n->host, strlen(n->host)));
		if (n->port > 0)
			add_int(d, "port", n->port);
		add_str(d, "address", n->address);
		json_object_object_add(o, "dest", d);
	}
	add_str(o, "method", n->method);
	if (n->path != NULL)
		json_object_object_add(o, "path", jstr(n->path, strlen(n->path)));
	add_str(o, "decision", n->decision);
	if (n->reason != NULL)
		json_object_object_add(o, "reason", jstr(n->reason, strlen(n->reason)));
	add_str(o, "rule", n->rule);
	add_str(o, "error", n->error);
	add_int(o, "bytes_up", (long long)n->bytes_up);
	add_int(o, "bytes_down", (long long)n->bytes_down);
	add_int(o, "duration_ms", n->duration_ms);
	return emit(a, o, err);
}

static int
event(struct ag_audit *a, const char *name, const char *request, const char *decision,
    const char *reason, const char *reason_class, struct ag_err *err)
{
	json_object *o = record(a, name);

	if (o == NULL)
		return ag_err_set(err, "audit: out of memory");
	add_str(o, "request", request);
	add_str(o, "decision", decision);
	add_str(o, "reason", reason);
	add_str(o, "reason_class", reason_class);
	return emit(a, o, err);
}

int
ag_audit_event(struct ag_audit *a, const char *name, const char *request,
    const char *decision, const char *reason, struct ag_err *err)
{
	return event(a, name, request, decision, reason, NULL, err);
}

int
ag_audit_auth_failure(struct ag_audit *a, const char *request, const char *reason,
    const char *reason_class, struct ag_err *err)
{
	return event(a, "auth_failure", request, "deny", reason, reason_class, err);
}
