/*
 * suggest.c - a profile drawn from audit records (see suggest.h).
 *
 * Reading only tallies: the command lines that ran (with their account
 * and working directory), the lines and execs that were refused, the
 * connections of net records.  The suggestion is made at the end: each
 * line is decided under an analysis profile that allows everything and
 * names every program whose registry descriptor knows subcommands (so the
 * walker records them) and asks for the files written; the profile drawn
 * from that is then loaded and every line decided again under it, the
 * features a refusal names are turned on, and what it still refuses is
 * said in a comment rather than guessed at.
 */
#include "agconfig.h"

#include <errno.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/config.h"
#include "common/err.h"
#include "common/misc.h"
#include "common/strbuf.h"
#include "policy/policy.h"
#include "policy/prog.h"
#include "policy/suggest.h"

#define TEXT_LIMIT	((size_t)64 * 1024 * 1024)
#define SHOWN_MAX	160	/* bytes of a line in a comment */
#define FEATURE_ROUNDS	8

/* ---- tallies: a key, how often, first and last seen ------------------- */

struct item {
	char		*key;		/* NUL-separated fields, keylen bytes */
	size_t		 keylen;
	unsigned long	 n;
	long long	 first, last;	/* ms; -1: no time */
	void		*sub;		/* a program's subcommands (struct tally) */
	int		 nosub;		/* a use without one */
	int		 sub_known;	/* the registry knows its subcommands */
	const char	*note;		/* why it was refused, for a refused line */
};

struct tally {
	struct item	*v;
	size_t		 n, cap;
	size_t		*idx;		/* open addressing: index + 1, 0 empty */
	size_t		 nidx;
};

static uint64_t
hash(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
	return h;
}

static int
regrow(struct tally *t)
{
	size_t i, n = t->nidx ? t->nidx * 2 : 64, *idx;

	if ((idx = calloc(n, sizeof(*idx))) == NULL)
		return -1;
	for (i = 0; i < t->n; i++) {
		size_t j = hash(t->v[i].key, t->v[i].keylen) & (n - 1);

		while (idx[j] != 0)
			j = (j + 1) & (n - 1);
		idx[j] = i + 1;
	}
	free(t->idx);
	t->idx = idx;
	t->nidx = n;
	return 0;
}

/* The item of key (added, with n 0, when new); NULL when out of memory. */
static struct item *
tally_get(struct tally *t, const char *key, size_t keylen)
{
	struct item *it;
	size_t j;

	if ((t->n + 1) * 2 > t->nidx && regrow(t) < 0)
		return NULL;
	for (j = hash(key, keylen) & (t->nidx - 1); t->idx[j] != 0; j = (j + 1) & (t->nidx - 1)) {
		it = &t->v[t->idx[j] - 1];
		if (it->keylen == keylen && memcmp(it->key, key, keylen) == 0)
			return it;
	}
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 16;
		struct item *nv = realloc(t->v, c * sizeof(*nv));

		if (nv == NULL)
			return NULL;
		t->v = nv;
		t->cap = c;
	}
	it = &t->v[t->n];
	memset(it, 0, sizeof(*it));
	if ((it->key = malloc(keylen + 1)) == NULL)
		return NULL;
	memcpy(it->key, key, keylen);
	it->key[keylen] = '\0';
	it->keylen = keylen;
	it->first = it->last = -1;
	t->idx[j] = ++t->n;
	return it;
}

static void
seen(struct item *it, unsigned long n, long long first, long long last)
{
	it->n += n;
	if (first >= 0 && (it->first < 0 || first < it->first))
		it->first = first;
	if (last >= 0 && (it->last < 0 || last > it->last))
		it->last = last;
}

/* Add n uses of key at [first, last]; the item, or NULL out of memory. */
static struct item *
tally_add(struct tally *t, const char *key, size_t keylen, unsigned long n, long long first,
    long long last)
{
	struct item *it = tally_get(t, key, keylen);

	if (it != NULL)
		seen(it, n, first, last);
	return it;
}

static void
tally_free(struct tally *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].key);
		if (t->v[i].sub != NULL) {
			tally_free(t->v[i].sub);
			free(t->v[i].sub);
		}
	}
	free(t->v);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}

static int
cmp_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = memcmp(x->key, y->key, n);

	return c != 0 ? c : (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

/* Sorted by key, for output that does not depend on the log's order (the
 * index is dropped: no lookups after this). */
static void
tally_sort(struct tally *t)
{
	free(t->idx);
	t->idx = NULL;
	t->nidx = 0;
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), cmp_key);
}

/* ---- the records -------------------------------------------------------- */

struct ag_suggest {
	struct ag_suggest_opts	 o;
	char			*home;		/* o.home, or the first account's */
	char			*user;		/* the first matching account */
	size_t			 matched;
	long long		 first, last;
	struct tally		 lines;		/* user \0 cwd \0 line: ran */
	struct tally		 refused;	/* line: refused at the time */
	struct tally		 execs;		/* exec_denied: path */
	struct tally		 hosts;		/* net allowed: host:port */
	struct tally		 blocked;	/* net refused: host:port */
	unsigned long		 upstream;	/* lines of bastion mode, left out */
};

struct ag_suggest *
ag_suggest_new(const struct ag_suggest_opts *o)
{
	struct ag_suggest *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->o = *o;
	s->first = s->last = -1;
	if (o->home != NULL && (s->home = strdup(o->home)) == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

void
ag_suggest_free(struct ag_suggest *s)
{
	if (s == NULL)
		return;
	tally_free(&s->lines);
	tally_free(&s->refused);
	tally_free(&s->execs);
	tally_free(&s->hosts);
	tally_free(&s->blocked);
	free(s->home);
	free(s->user);
	free(s);
}

size_t
ag_suggest_matched(const struct ag_suggest *s)
{
	return s->matched;
}

static const char *
field(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int
has(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v);
}

static int
same(const char *want, const char *have)
{
	return want == NULL || (have != NULL && strcmp(want, have) == 0);
}

/* "YYYY-MM-DDTHH:MM:SS[.mmm]Z" as ms, or -1. */
static long long
ts_ms(const char *s)
{
	struct tm tm;
	int ms = 0, n = 0;
	time_t t;

	if (s == NULL)
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return -1;
	if (s[n] == '.' && s[n + 1] >= '0' && s[n + 1] <= '9')
		ms = (int)strtol(s + n + 1, NULL, 10) % 1000;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	return (long long)t * 1000 + ms;
}

/* The home of the first account seen, for ~ (unless given). */
static int
learn_home(struct ag_suggest *s, const char *user)
{
	struct passwd *pw;

	if (s->user != NULL || user == NULL)
		return 0;
	if ((s->user = strdup(user)) == NULL)
		return -1;
	if (s->home == NULL && (pw = getpwnam(user)) != NULL && pw->pw_dir != NULL &&
	    pw->pw_dir[0] == '/' && (s->home = strdup(pw->pw_dir)) == NULL)
		return -1;
	return 0;
}

/* A connection's host:port, from a net record's dest. */
static int
net_record(struct ag_suggest *s, json_object *o, long long t)
{
	json_object *d, *port;
	const char *host, *dec = field(o, "decision");
	char key[600];
	int n;

	if (!json_object_object_get_ex(o, "dest", &d) || (host = field(d, "host")) == NULL ||
	    !json_object_object_get_ex(d, "port", &port))
		return 0;
	n = snprintf(key, sizeof(key), "%s:%d", host, json_object_get_int(port));
	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	return tally_add(dec != NULL && strcmp(dec, "allow") == 0 ? &s->hosts : &s->blocked, key,
	    (size_t)n, 1, t, t) == NULL ? -1 : 0;
}

int
ag_suggest_record(struct ag_suggest *s, json_object *o)
{
	const char *ev = field(o, "event"), *user = field(o, "user"), *cmd, *dec, *cwd;
	long long t = ts_ms(field(o, "ts"));
	struct ag_strbuf key;
	struct item *it;

	if (ev == NULL || !same(s->o.identity, field(o, "identity")) ||
	    !same(s->o.account, user) || !same(s->o.profile, field(o, "profile")))
		return 0;
	if ((s->o.since >= 0 || s->o.until >= 0) &&
	    (t < 0 || (s->o.since >= 0 && t < s->o.since) || (s->o.until >= 0 && t >= s->o.until)))
		return 0;
	if (strcmp(ev, "net") == 0) {
		s->matched++;
		return net_record(s, o, t);
	}
	if (strcmp(ev, "exec_denied") == 0) {
		const char *p = field(o, "path");

		s->matched++;
		return p == NULL || tally_add(&s->execs, p, strlen(p), 1, t, t) != NULL ? 0 : -1;
	}
	/* command, not command_start: one record per line that ran, with
	 * its outcome */
	if (strcmp(ev, "command") != 0 || (cmd = field(o, "command")) == NULL)
		return 0;
	s->matched++;
	if (s->first < 0 || (t >= 0 && t < s->first))
		s->first = t;
	if (t > s->last)
		s->last = t;
	if (learn_home(s, user) < 0)
		return -1;
	if (has(o, "target")) {
		/* an upstream's command, judged by that upstream's profile */
		s->upstream++;
		return 0;
	}
	dec = field(o, "decision");
	/* it ran: it has an outcome, or it was allowed (a gateway killed
	 * mid-command leaves none) */
	if (!has(o, "exit") && !has(o, "signal") && (dec == NULL ||
	    (strcmp(dec, "allow") != 0 && strcmp(dec, "ask-allow") != 0))) {
		it = tally_add(&s->refused, cmd, strlen(cmd), 1, t, t);
		return it == NULL ? -1 : 0;
	}
	cwd = field(o, "cwd");
	ag_strbuf_init(&key, TEXT_LIMIT);
	if (ag_strbuf_addstr(&key, user != NULL ? user : "") < 0 ||
	    ag_strbuf_addch(&key, '\0') < 0 ||
	    ag_strbuf_addstr(&key, cwd != NULL && cwd[0] == '/' ? cwd : "") < 0 ||
	    ag_strbuf_addch(&key, '\0') < 0 || ag_strbuf_addstr(&key, cmd) < 0) {
		ag_strbuf_free(&key);
		return -1;
	}
	it = tally_add(&s->lines, key.data, key.len, 1, t, t);
	ag_strbuf_free(&key);
	return it == NULL ? -1 : 0;
}

/* ---- the analysis --------------------------------------------------------- */

/* A line entry's fields. */
static void
line_fields(const struct item *it, const char **user, const char **cwd, const char **line)
{
	*user = it->key;
	*cwd = *user + strlen(*user) + 1;
	*line = *cwd + strlen(*cwd) + 1;
}

/* A word as YAML: plain when that reads back as the same string. */
static int
yq(struct ag_strbuf *sb, const char *s)
{
	static const char *const special[] = {
		"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", NULL
	};
	const unsigned char *p;
	size_t i;
	int plain = s[0] != '\0' && strchr("-?:,[]{}#&*!|>'\"%@`~. ", s[0]) == NULL &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-") ==
	    strlen(s) && !(s[0] >= '0' && s[0] <= '9');

	for (i = 0; special[i] != NULL; i++)
		if (strcasecmp(s, special[i]) == 0)
			plain = 0;
	if (plain)
		return ag_strbuf_addstr(sb, s);
	if (ag_strbuf_addch(sb, '"') < 0)
		return -1;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		int r;

		if (*p == '"' || *p == '\\')
			r = ag_strbuf_printf(sb, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			r = ag_strbuf_printf(sb, "\\x%02x", *p);
		else
			r = ag_strbuf_addch(sb, (char)*p);
		if (r < 0)
			return -1;
	}
	return ag_strbuf_addch(sb, '"');
}

/* Text for a comment: one line, controls as '?', at most SHOWN_MAX bytes. */
static const char *
oneline(const char *s, char *buf, size_t bufsz)
{
	size_t i, n = strlen(s);

	if (n > SHOWN_MAX)
		n = SHOWN_MAX;
	if (n >= bufsz - 4)
		n = bufsz - 4;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	snprintf(buf + n, bufsz - n, "%s", strlen(s) > n ? "..." : "");
	return buf;
}

static const char *
when(long long ms, char *buf, size_t bufsz)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms < 0 || gmtime_r(&t, &tm) == NULL)
		return "?";
	strftime(buf, bufsz, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* "# N uses, first T, last T" for an item. */
static int
uses(struct ag_strbuf *sb, const char *indent, const char *what, const struct item *it)
{
	char a[32], b[32];

	return ag_strbuf_printf(sb, "%s# %s%s%lu use%s, first %s, last %s\n", indent,
	    what != NULL ? what : "", what != NULL ? ": " : "", it->n, it->n == 1 ? "" : "s",
	    when(it->first, a, sizeof(a)), when(it->last, b, sizeof(b)));
}

/* The analysis profile: everything allowed and every file writable, with a
 * rule for each program whose descriptor knows subcommands, so that the
 * walk records them (it does where a rule takes the program). */
static struct ag_config *
analysis_config(const struct tally *seen_progs, char *why, size_t whylen)
{
	struct ag_strbuf sb;
	struct ag_config *cfg = NULL;
	struct ag_err err;
	size_t i, k;

	ag_strbuf_init(&sb, TEXT_LIMIT);
	if (ag_strbuf_addstr(&sb, "version: 1\nprofiles:\n  analysis:\n    tier: developer\n"
	    "    unknown: allow\n    paths: { read: [\"/\"], write: [\"/\"] }\n"
	    "    features: { functions: allow, background: allow, coproc: allow }\n"
	    "    allow:\n") < 0)
		goto nomem;
	for (i = 0; ag_progs[i] != NULL; i++) {
		const struct ag_prog *p = ag_progs[i];

		if (p->global_opts == NULL)
			continue;
		for (k = 0; p->names[k] != NULL; k++)
			if (strchr(p->names[k], '*') == NULL &&
			    ag_strbuf_printf(&sb, "      - %s\n", p->names[k]) < 0)
				goto nomem;
	}
	/* and every program seen, so that its descriptor's checks run (the
	 * files cp writes) where unknown: allow would let it by unread */
	for (i = 0; seen_progs != NULL && i < seen_progs->n; i++) {
		const char *name = seen_progs->v[i].key;

		const struct ag_prog *p = ag_prog_lookup(ag_base_name(name));

		if ((name[0] == '/' || strchr(name, '/') == NULL) &&
		    (p == NULL || p->global_opts == NULL || name[0] == '/') &&
		    (ag_strbuf_addstr(&sb, "      - ") < 0 || yq(&sb, name) < 0 ||
		    ag_strbuf_addch(&sb, '\n') < 0))
			goto nomem;
	}
	if ((cfg = ag_config_parse(sb.data, sb.len, "(policy suggest's analysis)", &err)) == NULL)
		snprintf(why, whylen, "%s", err.msg);
	ag_strbuf_free(&sb);
	return cfg;
nomem:
	ag_strbuf_free(&sb);
	snprintf(why, whylen, "%s", strerror(ENOMEM));
	return NULL;
}

/* What the profile to suggest is made of. */
struct draft {
	struct tally	 progs;		/* name: uses, sub (struct tally of subcommands) */
	struct tally	 dirs;		/* directories written */
	struct tally	 notes;		/* "line\0why": what the analysis could not place */
	unsigned	 features;	/* FEAT_* to allow */
};

static const char *const feature_names[] = {
	"command_substitution", "process_substitution", "functions", "background", "coproc",
	"subshell", NULL
};

/* ctx for a line entry: its account's home, its directory (or the home,
 * or /, when it is gone). */
static void
line_ctx(const struct ag_suggest *s, const struct item *it, const struct ag_profile *prof,
    struct ag_policy_ctx *ctx, const char **line)
{
	const char *user, *cwd;
	struct stat st;

	line_fields(it, &user, &cwd, line);
	memset(ctx, 0, sizeof(*ctx));
	ctx->profile = prof;
	ctx->home = s->home;
	ctx->user = user[0] != '\0' ? user : NULL;
	if (cwd[0] == '/' && stat(cwd, &st) == 0 && S_ISDIR(st.st_mode))
		ctx->cwd = cwd;
	else
		ctx->cwd = s->home != NULL ? s->home : "/";
}

/* The directory a written file lands in, as a policy writes it ("~/x"). */
static int
write_dir(const struct ag_suggest *s, const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL && slash != path ? (size_t)(slash - path) : 1, hl;

	if (path[0] != '/')
		return -1;
	if (s->home != NULL && (hl = strlen(s->home)) > 1 && strncmp(path, s->home, hl) == 0 &&
	    (n == hl || (n > hl && path[hl] == '/')))
		return snprintf(out, outsz, "~%.*s", (int)(n - hl), path + hl) < (int)outsz ? 0 : -1;
	return snprintf(out, outsz, "%.*s", (int)n, path) < (int)outsz ? 0 : -1;
}

static int
note(struct draft *d, const char *line, const char *why, unsigned long n, long long first,
    long long last)
{
	struct ag_strbuf sb;
	int rc = -1;

	ag_strbuf_init(&sb, TEXT_LIMIT);
	if (ag_strbuf_addstr(&sb, line) == 0 && ag_strbuf_addch(&sb, '\0') == 0 &&
	    ag_strbuf_addstr(&sb, why) == 0 &&
	    tally_add(&d->notes, sb.data, sb.len, n, first, last) != NULL)
		rc = 0;
	ag_strbuf_free(&sb);
	return rc;
}

/* One simple command of a line that ran, n times: its name as written, its
 * program ("builtin", ...), subcommand, and why the analysis refused it. */
static int
draft_cmd(struct draft *d, const char *name, const char *path, const char *sub,
    const char *refused, const struct item *it, const char *line)
{
	const struct ag_prog *p;
	struct item *pr;

	if (name == NULL || path == NULL)
		return name == NULL ? note(d, line, "a command name known only when it runs",
		    it->n, it->first, it->last) : 0;
	if (strcmp(path, "keyword") == 0 || strcmp(path, "function") == 0)
		return 0;
	if (strchr(name, '/') != NULL && name[0] != '/')
		return note(d, line, "a program named by a relative path: name it absolute, or "
		    "give a developer-tier profile paths.exec", it->n, it->first, it->last);
	if (refused != NULL && note(d, line, refused, it->n, it->first, it->last) < 0)
		return -1;
	if ((pr = tally_add(&d->progs, name, strlen(name), it->n, it->first, it->last)) ==
	    NULL)
		return -1;
	p = strcmp(path, "builtin") == 0 ? NULL : ag_prog_lookup(ag_base_name(name));
	/* every operand of make, gradle, mvn does something: one of them is
	 * no list of what may run */
	pr->sub_known = p != NULL && p->global_opts != NULL && !(p->flags & AG_PROG_SUBS_ALL);
	if (!pr->sub_known || sub == NULL) {
		pr->nosub = 1;
		return 0;
	}
	if (pr->sub == NULL && (pr->sub = calloc(1, sizeof(struct tally))) == NULL)
		return -1;
	return tally_add(pr->sub, sub, strlen(sub), it->n, it->first, it->last) == NULL ? -1 : 0;
}

static int
draft_line(struct ag_suggest *s, struct draft *d, const struct ag_profile *prof,
    const struct item *it)
{
	struct ag_policy_ctx ctx;
	struct ag_decision dec;
	const char *line;
	char dir[4096];
	size_t i;
	int rc = 0;

	line_ctx(s, it, prof, &ctx, &line);
	ctx.record = 1;
	if (ag_policy_check(&ctx, line, strlen(line), &dec) < 0 && !dec.parse_error) {
		ag_decision_free(&dec);
		return -1;
	}
	if (dec.parse_error)
		rc = note(d, line, dec.reason, it->n, it->first, it->last);
	for (i = 0; rc == 0 && i < dec.ncmds; i++)
		rc = draft_cmd(d, dec.cmds[i].name, dec.cmds[i].path, dec.cmds[i].sub,
		    dec.cmds[i].verdict != AG_ALLOW ? dec.cmds[i].reason : NULL, it, line);
	/* a wrapper's command, judged as typed: its subcommand is not seen */
	for (i = 0; rc == 0 && i < dec.ninner; i++)
		rc = draft_cmd(d, dec.inner[i], dec.inner[i], NULL, NULL, it, line);
	for (i = 0; rc == 0 && i < dec.nwrites; i++)
		if (write_dir(s, dec.writes[i], dir, sizeof(dir)) == 0 &&
		    tally_add(&d->dirs, dir, strlen(dir), it->n, it->first, it->last) == NULL)
			rc = -1;
	ag_decision_free(&dec);
	return rc;
}

/* ---- the YAML ------------------------------------------------------------- */

/* 1 when dir lies beneath another entry of t (which covers it). */
static int
covered(const struct tally *t, size_t k)
{
	const char *d = t->v[k].key;
	size_t i, n;

	for (i = 0; i < t->n; i++) {
		const char *e = t->v[i].key;

		n = strlen(e);
		if (i != k && strncmp(d, e, n) == 0 && (d[n] == '/' || strcmp(e, "/") == 0) &&
		    strlen(d) > n)
			return 1;
	}
	return 0;
}

/* The risks the registry knows of a program, as comments. */
static int
risks(struct ag_strbuf *sb, const char *name)
{
	const struct ag_prog *p = ag_prog_lookup(ag_base_name(name));
	const char *runs;

	if (p == NULL)
		return 0;
	runs = p->runs != NULL ? p->runs : "the command it is given";
	if (p->flags & AG_PROG_RUNS_CODE)
		return ag_strbuf_printf(sb, "      # RISK: %s runs whatever code it is handed "
		    "(a script, -c or -e text): %s\n", name, runs);
	if ((p->flags & (AG_PROG_WRAPPER_SAFE | AG_PROG_WRAPPER_RISKY | AG_PROG_EXEC_SEEN)) ||
	    p->runs != NULL || p->dispatch != NULL || p->inproc != NULL)
		return ag_strbuf_printf(sb, "      # RISK: %s runs other programs: %s\n", name,
		    runs);
	return 0;
}

static int
emit_prog(struct ag_strbuf *sb, const struct item *pr)
{
	const struct tally *subs = pr->sub;
	char buf[64];
	size_t i;

	if (uses(sb, "      ", pr->key, pr) < 0 || risks(sb, pr->key) < 0)
		return -1;
	if (subs == NULL || subs->n == 0 || !pr->sub_known) {
		if (ag_strbuf_addstr(sb, "      - ") < 0 || yq(sb, pr->key) < 0)
			return -1;
		return ag_strbuf_addch(sb, '\n');
	}
	tally_sort(pr->sub);
	if (ag_strbuf_addstr(sb, "      #   ") < 0)
		return -1;
	for (i = 0; i < subs->n; i++)
		if (ag_strbuf_printf(sb, "%s%s %lu", i > 0 ? ", " : "",
		    oneline(subs->v[i].key, buf, sizeof(buf)), subs->v[i].n) < 0)
			return -1;
	if (ag_strbuf_addstr(sb, pr->nosub ? " (and without a subcommand)\n" : "\n") < 0 ||
	    ag_strbuf_addstr(sb, "      - { command: ") < 0 || yq(sb, pr->key) < 0 ||
	    ag_strbuf_addstr(sb, ", subcommands: [") < 0)
		return -1;
	for (i = 0; i < subs->n; i++)
		if ((i > 0 && ag_strbuf_addstr(sb, ", ") < 0) || yq(sb, subs->v[i].key) < 0)
			return -1;
	return ag_strbuf_addstr(sb, "] }\n");
}

static int
emit_header(struct ag_strbuf *sb, const struct ag_suggest *s)
{
	char a[32], b[32];

	return ag_strbuf_printf(sb,
	    "# agentgate policy suggest: %zu records%s%s%s%s%s%s from %s, %s to %s.\n"
	    "# Review every line (the RISK: ones first), narrow what is wider than the\n"
	    "# job needs, then add the profile with `agentgate edit` (or as a fragment\n"
	    "# in agentgate.d) and give it to the account (users:) or the identity\n"
	    "# (profile:).  Nothing here was applied.\n"
	    "profiles:\n  %s:\n    tier: strict\n",
	    s->matched, s->o.identity ? " of identity " : "", s->o.identity ? s->o.identity : "",
	    s->o.account ? " of account " : "", s->o.account ? s->o.account : "",
	    s->o.profile ? " under profile " : "", s->o.profile ? s->o.profile : "",
	    s->o.source != NULL ? s->o.source : "the audit", when(s->first, a, sizeof(a)),
	    when(s->last, b, sizeof(b)), s->o.name);
}

static int
emit_paths(struct ag_strbuf *sb, const struct ag_suggest *s, struct draft *d)
{
	size_t i, n = 0;

	if (ag_strbuf_addstr(sb, "    paths:\n"
	    "      read: [\"/\"]    # reads are not recorded: narrow by hand\n"
	    "      # what the line shows it writes (redirections, the output files of\n"
	    "      # programs the gateway knows); what a program writes by itself (git\n"
	    "      # commit's .git, a build's output) is not in the records: add it\n") < 0)
		return -1;
	tally_sort(&d->dirs);
	for (i = 0; i < d->dirs.n; i++)
		n += !covered(&d->dirs, i);
	if (n == 0)
		return ag_strbuf_addstr(sb, "      write: []\n");
	if (ag_strbuf_addstr(sb, "      write:\n") < 0)
		return -1;
	for (i = 0; i < d->dirs.n; i++) {
		const struct item *it = &d->dirs.v[i];

		if (covered(&d->dirs, i))
			continue;
		if (uses(sb, "        ", NULL, it) < 0)
			return -1;
		if (it->key[0] != '~' && ag_strbuf_printf(sb, "        # RISK: a write outside "
		    "the home%s%s\n", s->home != NULL ? " " : "", s->home != NULL ? s->home : "") < 0)
			return -1;
		if (ag_strbuf_addstr(sb, "        - ") < 0 || yq(sb, it->key) < 0 ||
		    ag_strbuf_addch(sb, '\n') < 0)
			return -1;
	}
	return 0;
}

static int
emit_network(struct ag_strbuf *sb, struct ag_suggest *s)
{
	char buf[SHOWN_MAX + 8];
	size_t i;

	tally_sort(&s->hosts);
	tally_sort(&s->blocked);
	if (s->hosts.n > 0 && ag_strbuf_addstr(sb, "    network:\n      allow:\n") < 0)
		return -1;
	for (i = 0; i < s->hosts.n; i++)
		if (uses(sb, "        ", NULL, &s->hosts.v[i]) < 0 ||
		    ag_strbuf_addstr(sb, "        - ") < 0 || yq(sb, s->hosts.v[i].key) < 0 ||
		    ag_strbuf_addch(sb, '\n') < 0)
			return -1;
	for (i = 0; i < s->blocked.n; i++)
		if (ag_strbuf_printf(sb, "    # refused at the time, not added: a connection to "
		    "%s (%lu)\n", oneline(s->blocked.v[i].key, buf, sizeof(buf)),
		    s->blocked.v[i].n) < 0)
			return -1;
	return 0;
}

static int
emit_notes(struct ag_strbuf *sb, struct ag_suggest *s, struct draft *d)
{
	char a[SHOWN_MAX + 8], b[SHOWN_MAX + 8];
	size_t i;

	tally_sort(&d->notes);
	tally_sort(&s->refused);
	tally_sort(&s->execs);
	for (i = 0; i < d->notes.n; i++) {
		const struct item *it = &d->notes.v[i];

		if (ag_strbuf_printf(sb, "    # NOTE: not covered (%lu): %s\n    #   because: %s\n",
		    it->n, oneline(it->key, a, sizeof(a)),
		    oneline(it->key + strlen(it->key) + 1, b, sizeof(b))) < 0)
			return -1;
	}
	for (i = 0; i < s->refused.n; i++)
		if (ag_strbuf_printf(sb, "    # refused at the time, not added (%lu): %s\n",
		    s->refused.v[i].n, oneline(s->refused.v[i].key, a, sizeof(a))) < 0)
			return -1;
	for (i = 0; i < s->execs.n; i++)
		if (ag_strbuf_printf(sb, "    # an exec refused at the time, not added (%lu): %s\n",
		    s->execs.v[i].n, oneline(s->execs.v[i].key, a, sizeof(a))) < 0)
			return -1;
	if (s->upstream > 0 && ag_strbuf_printf(sb, "    # %lu upstream command%s (bastion "
	    "mode) left out: an upstream's profile judges them\n", s->upstream,
	    s->upstream == 1 ? "" : "s") < 0)
		return -1;
	return 0;
}

/* The profile for d, its notes left out when bare (for loading it). */
static char *
render(struct ag_suggest *s, struct draft *d, int bare)
{
	struct ag_strbuf sb;
	size_t i;
	int rc;

	ag_strbuf_init(&sb, TEXT_LIMIT);
	rc = bare ? ag_strbuf_printf(&sb, "version: 1\nprofiles:\n  %s:\n    tier: strict\n",
	    s->o.name) : emit_header(&sb, s);
	if (rc == 0)
		rc = ag_strbuf_addstr(&sb, d->progs.n > 0 ? "    allow:\n" : "    allow: []\n");
	for (i = 0; rc == 0 && i < d->progs.n; i++)
		rc = emit_prog(&sb, &d->progs.v[i]);
	if (rc == 0 && d->features != 0) {
		rc = ag_strbuf_addstr(&sb, "    features:\n");
		for (i = 0; rc == 0 && feature_names[i] != NULL; i++)
			if (d->features & (1u << i))
				rc = ag_strbuf_printf(&sb, "      %s: allow\n", feature_names[i]);
	}
	if (rc == 0)
		rc = emit_paths(&sb, s, d);
	if (rc == 0)
		rc = emit_network(&sb, s);
	if (rc == 0 && !bare)
		rc = emit_notes(&sb, s, d);
	if (rc == 0)
		rc = ag_strbuf_addstr(&sb, "    unknown: deny\n");
	if (rc < 0) {
		ag_strbuf_free(&sb);
		return NULL;
	}
	return ag_strbuf_detach(&sb, NULL);
}

/*
 * Every line decided under the draft: a refusal for a feature turns it
 * on (1: decide again); any other is noted, once (final).  0 when nothing
 * changed, 1 when a feature was added, -1 on error.
 */
static int
verify(struct ag_suggest *s, struct draft *d, int final, char *why, size_t whylen)
{
	struct ag_config *cfg;
	const struct ag_profile *prof;
	struct ag_err err;
	char *text;
	size_t i, k;
	int changed = 0;

	if ((text = render(s, d, 1)) == NULL) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -1;
	}
	cfg = ag_config_parse(text, strlen(text), "(the suggestion)", &err);
	free(text);
	if (cfg == NULL || (prof = ag_config_profile(cfg, s->o.name)) == NULL) {
		snprintf(why, whylen, "the suggestion does not load: %s",
		    cfg == NULL ? err.msg : "no profile");
		ag_config_free(cfg);
		return -1;
	}
	for (i = 0; i < s->lines.n && changed >= 0; i++) {
		struct ag_policy_ctx ctx;
		struct ag_decision dec;
		const char *line;

		line_ctx(s, &s->lines.v[i], prof, &ctx, &line);
		if (ag_policy_check(&ctx, line, strlen(line), &dec) < 0 && !dec.parse_error) {
			ag_decision_free(&dec);
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			changed = -1;
			break;
		}
		if (dec.verdict != AG_ALLOW && !dec.parse_error) {
			for (k = 0; feature_names[k] != NULL; k++)
				if (strncmp(dec.rule, "feature:", 8) == 0 &&
				    strcmp(dec.rule + 8, feature_names[k]) == 0 &&
				    !(d->features & (1u << k))) {
					d->features |= 1u << k;
					changed = 1;
				}
			if (final && note(d, line, dec.reason, s->lines.v[i].n,
			    s->lines.v[i].first, s->lines.v[i].last) < 0)
				changed = -1;
		}
		ag_decision_free(&dec);
	}
	ag_config_free(cfg);
	return changed;
}

char *
ag_suggest_yaml(struct ag_suggest *s, char *why, size_t whylen)
{
	struct ag_config *cfg;
	const struct ag_profile *prof;
	struct draft d;
	char *out = NULL;
	size_t i;
	int round, pass, rc = 0;

	memset(&d, 0, sizeof(d));
	/* twice: the programs the line names, then each under a rule */
	for (pass = 0; pass < 2; pass++) {
		struct tally seen_progs = d.progs;

		memset(&d.progs, 0, sizeof(d.progs));
		tally_free(&d.dirs);
		tally_free(&d.notes);
		cfg = analysis_config(pass > 0 ? &seen_progs : NULL, why, whylen);
		tally_free(&seen_progs);
		if (cfg == NULL)
			goto out;
		prof = ag_config_profile(cfg, "analysis");
		for (i = 0; rc == 0 && prof != NULL && i < s->lines.n; i++)
			rc = draft_line(s, &d, prof, &s->lines.v[i]);
		ag_config_free(cfg);
		if (rc < 0) {
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			goto out;
		}
	}
	tally_sort(&d.progs);
	for (round = 0; round < FEATURE_ROUNDS; round++)
		if ((rc = verify(s, &d, 0, why, whylen)) <= 0)
			break;
	if (rc < 0 || verify(s, &d, 1, why, whylen) < 0)
		goto out;
	if ((out = render(s, &d, 0)) == NULL)
		snprintf(why, whylen, "%s", strerror(ENOMEM));
out:
	tally_free(&d.progs);
	tally_free(&d.dirs);
	tally_free(&d.notes);
	return out;
}
