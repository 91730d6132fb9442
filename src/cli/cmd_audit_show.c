/*
 * cmd_audit_show.c - agentgate audit show: the records of audit files that
 * match a few filters, one readable line each (or as they are, --json),
 * so that reading the log needs no jq.  What an agent chose (its command
 * line, its identity's name) is shown with its controls as escapes: the
 * log is read on an admin's terminal.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/auditfile.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/utf8.h"
#include "record/chain.h"

#define SHOW_TEXT_MAX	400	/* bytes of a command or reason shown */
#define SHOW_NAME_MAX	64	/* of an identity or account */

struct filter {
	const char	*identity, *user, *session, *decision, *event;
	size_t		 session_len;
	long long	 since, until;	/* ms since the epoch; -1: none */
	int		 json;
};

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate audit show [--config FILE] [--identity NAME] [--user ACCOUNT]\n"
	    "                           [--session ID-PREFIX] [--since WHEN] [--until WHEN]\n"
	    "                           [--decision allow|deny|ask-allow|ask-deny|would_deny]\n"
	    "                           [--event NAME] [--json] [FILE...]\n"
	    "\n"
	    "Print the audit records that match every filter given, one line each:\n"
	    "time (UTC), session (its first 8), identity@account, event, decision,\n"
	    "and the command (else the reason), with control characters shown as\n"
	    "escapes.  Without FILE, the policy's gateway.audit.file; FILEs are read\n"
	    "as audit verify reads them (a rotated series oldest first, .gz, -).\n"
	    "\n"
	    "  -f, --config FILE      the policy (default %s)\n"
	    "  -i, --identity NAME    records of this identity\n"
	    "  -u, --user ACCOUNT     records of this account\n"
	    "  -S, --session PREFIX   records of the session whose id starts so, and\n"
	    "                         the session_terminate that ended it\n"
	    "  -s, --since WHEN       records at WHEN or later\n"
	    "  -U, --until WHEN       records before WHEN\n"
	    "  -d, --decision WHAT    allow, deny, ask-allow, ask-deny or would_deny\n"
	    "  -e, --event NAME       session_start, command, session_end, ...\n"
	    "  -j, --json             the matching records as they are in the file\n"
	    "  -h, --help             show this help and exit\n"
	    "\n"
	    "WHEN is a UTC date or time (2026-11-28, 2026-11-28T10:00,\n"
	    "2026-11-28T10:00:00Z) or a time before now (90s, 30m, 1h, 2d, 1w).\n"
	    "Exit 0; 1 when a line was no record (said on stderr, the rest shown);\n"
	    "2 on a usage or read error.\n", AG_DEFAULT_CONFIG);
}

/* ---- records ---------------------------------------------------------------- */

/* The string field key of o, or NULL. */
static const char *
str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int
same(const char *want, const char *have)
{
	return want == NULL || (have != NULL && strcmp(want, have) == 0);
}

static int
prefixed(const struct filter *f, const char *id)
{
	return id != NULL && strncasecmp(id, f->session, f->session_len) == 0;
}

/*
 * A record of the session f picks: its own (session), or the admin's
 * session_terminate that ended it, which has the admin's own session id and
 * the one it ended as its request (the session's own session_revoked, when
 * it saw the end, is its own record).
 */
static int
of_session(const struct filter *f, json_object *o, const char *s)
{
	const char *ev = str(o, "event");

	return prefixed(f, s) || (ev != NULL && strcmp(ev, "session_terminate") == 0 &&
	    prefixed(f, str(o, "request")));
}

static int
matches(const struct filter *f, json_object *o)
{
	const char *s = str(o, "session"), *ts = str(o, "ts");
	long long t;

	if (!same(f->identity, str(o, "identity")) || !same(f->user, str(o, "user")) ||
	    !same(f->decision, str(o, "decision")) || !same(f->event, str(o, "event")))
		return 0;
	if (f->session != NULL && !of_session(f, o, s))
		return 0;
	if (f->since >= 0 || f->until >= 0) {
		if (ts == NULL || (t = ag_auditfile_time(ts)) < 0)
			return 0;
		if ((f->since >= 0 && t < f->since) || (f->until >= 0 && t >= f->until))
			return 0;
	}
	return 1;
}

/* The field shown safe, or "-". */
static const char *
visible(json_object *o, const char *key, size_t max, char *buf, size_t bufsz)
{
	const char *s = str(o, key);

	if (s == NULL || s[0] == '\0')
		return "-";
	return ag_utf8_visible(s, strlen(s), max, buf, bufsz);
}

static void
print_line(json_object *o)
{
	static char text[4 * SHOW_TEXT_MAX + 8];
	char ident[4 * SHOW_NAME_MAX + 8], user[4 * SHOW_NAME_MAX + 8], who[sizeof(ident) * 2];
	char when[32], ev[4 * 40 + 8], dec[4 * 12 + 8];
	const char *ts = str(o, "ts"), *s = str(o, "session"), *what = NULL;
	json_object *v;
	long long t;
	time_t sec;
	struct tm tm;

	if (ts != NULL && (t = ag_auditfile_time(ts)) >= 0) {
		sec = (time_t)(t / 1000);
		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	} else
		snprintf(when, sizeof(when), "-");
	snprintf(who, sizeof(who), "%s@%s",
	    visible(o, "identity", SHOW_NAME_MAX, ident, sizeof(ident)),
	    visible(o, "user", SHOW_NAME_MAX, user, sizeof(user)));
	if (str(o, "command") != NULL)
		what = visible(o, "command", SHOW_TEXT_MAX, text, sizeof(text));
	else if (str(o, "reason") != NULL)
		what = visible(o, "reason", SHOW_TEXT_MAX, text, sizeof(text));
	else if (str(o, "request") != NULL)
		what = visible(o, "request", SHOW_TEXT_MAX, text, sizeof(text));
	else if (json_object_object_get_ex(o, "exit", &v) && json_object_is_type(v, json_type_int)) {
		snprintf(text, sizeof(text), "exit %lld", (long long)json_object_get_int64(v));
		what = text;
	}
	printf("%-20s  %-8.8s  %-24s  %-13s  %-*s%s%s\n", when,
	    s != NULL && strspn(s, "0123456789abcdef") >= 8 ? s : "-", who,
	    visible(o, "event", 40, ev, sizeof(ev)), what != NULL ? 9 : 0,
	    visible(o, "decision", 12, dec, sizeof(dec)), what != NULL ? "  " : "",
	    what != NULL ? what : "");
}

/*
 * --json: the record as written, what json-c leaves raw in a string (DEL,
 * C1, bidi controls) escaped; a line with raw controls, which the gateway
 * never writes, as json-c writes the record instead.
 */
static void
print_json(json_object *o, const char *line, size_t len)
{
	const char *js = line;
	size_t i, n = len, outlen;
	char *safe;

	if (n > 0 && line[n - 1] == '\n')
		n--;
	for (i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20)
			break;
	if (i < n && (js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE)) != NULL)
		n = strlen(js);
	if (js == NULL || (safe = ag_utf8_json_safe(js, n, &outlen)) == NULL) {
		fprintf(stderr, "agentgate: audit show: %s\n", strerror(ENOMEM));
		return;
	}
	printf("%s\n", safe);
	free(safe);
}

/* One record for show(): f's, printed. */
static int
show_one(void *arg, json_object *o, const char *line, size_t len)
{
	const struct filter *f = arg;

	if (matches(f, o)) {
		if (f->json)
			print_json(o, line, len);
		else
			print_line(o);
	}
	return 0;
}

/* The records of names (in order) that f picks.  0, 1 (a line no record), 2. */
static int
show(struct filter *f, char **names, int n)
{
	int rc = ag_auditfile_each(names, n, "audit show", show_one, f);

	if (rc != 2 && fflush(stdout) == EOF) {
		fprintf(stderr, "agentgate: audit show: standard output: %s\n", strerror(errno));
		return 2;
	}
	return rc;
}

static int
bad_value(const char *opt, const char *v, const char *want)
{
	char buf[4 * 64 + 8];

	fprintf(stderr, "agentgate: audit show: %s '%s': %s\n", opt,
	    ag_utf8_visible(v, strlen(v), 64, buf, sizeof(buf)), want);
	return 2;
}

int
ag_cmd_audit_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "identity", required_argument, NULL, 'i' },
		{ "user", required_argument, NULL, 'u' },
		{ "session", required_argument, NULL, 'S' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'U' },
		{ "decision", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct filter f;
	char **owned, **names;
	int ch, rc, n;

	memset(&f, 0, sizeof(f));
	f.since = f.until = -1;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:i:u:S:s:U:d:e:jh", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			config = optarg;
			break;
		case 'i':
			f.identity = optarg;
			break;
		case 'u':
			f.user = optarg;
			break;
		case 'S':
			f.session = optarg;
			f.session_len = strlen(optarg);
			if (f.session_len == 0 || f.session_len > 32 ||
			    strspn(optarg, "0123456789abcdefABCDEF") != f.session_len)
				return bad_value("--session", optarg,
				    "a session id or its start, in hex");
			break;
		case 's':
		case 'U':
			if ((*(ch == 's' ? &f.since : &f.until) = ag_auditfile_when(optarg)) < 0)
				return bad_value(ch == 's' ? "--since" : "--until", optarg,
				    "not a time: give 2026-11-28, 2026-11-28T10:00, "
				    "2026-11-28T10:00:00Z (UTC), or 30m, 1h, 2d before now");
			break;
		case 'd':
			if (strcmp(optarg, "allow") != 0 && strcmp(optarg, "deny") != 0 &&
			    strcmp(optarg, "ask-allow") != 0 && strcmp(optarg, "ask-deny") != 0 &&
			    strcmp(optarg, "would_deny") != 0)
				return bad_value("--decision", optarg,
				    "give allow, deny, ask-allow, ask-deny or would_deny");
			f.decision = optarg;
			break;
		case 'e':
			if (optarg[0] == '\0' || strspn(optarg, "abcdefghijklmnopqrstuvwxyz_") !=
			    strlen(optarg))
				return bad_value("--event", optarg,
				    "an event's name, as session_start, command, session_end");
			f.event = optarg;
			break;
		case 'j':
			f.json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "agentgate: audit show: option '%s' needs an argument\n",
			    argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "agentgate: audit show: unknown option '%s'\n"
			    "Try 'agentgate audit show --help'.\n", argv[optind - 1]);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (ag_auditfile_args(argc, argv, config, "audit show", 1, &names, &n, &owned) < 0)
		return 2;
	rc = show(&f, names, n);
	ag_auditfile_free(owned);
	return rc;
}
