/*
 * config.c - load and validate agentgate.yaml (see config.h, agentgate.yaml(5)).
 *
 * Two passes.  First libyaml's event parser builds a small tree of scalars,
 * lists and mappings, each node carrying its 1-based line:col; this is where
 * the resource limits (depth, event count, scalar length) and the refusal of
 * anchors, aliases, tags and merge keys live.  Then a schema walker turns the
 * tree into struct ag_config, so that every message can point at the exact
 * node it is about.  Profile references are resolved last, once every
 * profile is known, so the file may name profiles before defining them.
 *
 * Anchors, aliases and merge keys are refused rather than supported: an
 * alias makes one node appear in many places (and "billion laughs" style
 * growth), and a policy file is easier to audit when what you read is what
 * applies.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <yaml.h>

#include "common/config.h"
#include "common/misc.h"
#include "common/safepath.h"
#include "common/sshkey.h"
#include "common/strbuf.h"
#include "common/config_int.h"

/* ------------------------------------------------------------------ */
/* Identities: keys, tokens, CIDRs, dates                              */

/*
 * "TYPE BASE64 [comment]": a known type, valid base64 whose embedded type
 * name agrees with TYPE (catches a key pasted with the wrong label or cut
 * short).  Stores "TYPE BASE64".
 */
static int
parse_pubkey(struct ctx *c, const struct ynode *it, char **out)
{
	const char *s = it->s, *t, *b;
	size_t tl, bl, rl;
	unsigned char *raw;
	struct ag_err kerr;

	s += strspn(s, " \t");
	t = s;
	tl = strcspn(t, " \t");
	b = t + tl + strspn(t + tl, " \t");
	bl = strcspn(b, " \t");
	if (tl == 0 || !ag_sshkey_policy_type(t, tl)) {
		char typ[64];

		snprintf(typ, sizeof(typ), "%.*s", (int)(tl < 60 ? tl : 60), t);
		return cf_err_node(c, it, "unknown SSH key type '%s' (expected "
		    "\"ssh-ed25519 AAAA...\", as in a .pub file; known types: "
		    "ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521, sk-ssh-ed25519"
		    "@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com)",
		    cf_quote(c, typ));
	}
	if (bl == 0)
		return cf_err_node(c, it, "SSH key '%s' has no key data after the type",
		    cf_quote(c, it->s));
	if (ag_sshkey_decode(t, tl, b, bl, &raw, &rl, NULL, NULL, &kerr) < 0)
		return cf_err_node(c, it, "SSH key data does not hold a %.*s key (%s: "
		    "truncated, or pasted with the wrong type?)", (int)tl, t, kerr.msg);
	free(raw);
	if ((*out = malloc(tl + 1 + bl + 1)) == NULL)
		return cf_oom(c, it);
	memcpy(*out, t, tl);
	(*out)[tl] = ' ';
	memcpy(*out + tl + 1, b, bl);
	(*out)[tl + 1 + bl] = '\0';
	return 0;
}

static int
hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int
parse_token(struct ctx *c, const struct ynode *v, unsigned char out[32])
{
	size_t i;

	if (cf_want_scalar(c, v, "token_sha256", "a SHA-256 hex digest") == -1)
		return -1;
	if (v->len != 64)
		goto bad;
	for (i = 0; i < 32; i++) {
		int hi = hexval((unsigned char)v->s[2 * i]);
		int lo = hexval((unsigned char)v->s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			goto bad;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
bad:
	explicit_bzero(out, 32);
	return cf_err_node(c, v, "'token_sha256' must be 64 hexadecimal digits (the "
	    "SHA-256 of the token, e.g. from: printf %%s TOKEN | sha256sum)");
}

static int
parse_cidr(struct ctx *c, const struct ynode *it, struct ag_cidr *out)
{
	char addr[INET6_ADDRSTRLEN + 1], fixed[INET6_ADDRSTRLEN];
	const char *slash = strchr(it->s, '/');
	size_t al = slash ? (size_t)(slash - it->s) : it->len, i;
	unsigned long long pfx;
	int max, bad_host = 0;

	if (al == 0 || al >= sizeof(addr))
		goto bad;
	memcpy(addr, it->s, al);
	addr[al] = '\0';
	memset(out, 0, sizeof(*out));
	if (strchr(addr, ':') != NULL) {
		out->family = AF_INET6;
		max = 128;
	} else {
		out->family = AF_INET;
		max = 32;
	}
	if (inet_pton(out->family, addr, out->addr) != 1)
		goto bad;
	out->prefix = max;
	if (slash != NULL) {
		if (cf_parse_uint(slash + 1, strlen(slash + 1), 255, &pfx) != 0 ||
		    strlen(slash + 1) > 3 || pfx > (unsigned)max)
			return cf_err_node(c, it, "invalid prefix length in '%s': "
			    "expected /0 to /%d", cf_quote(c, it->s), max);
		out->prefix = (int)pfx;
	}
	for (i = 0; i < (size_t)max / 8; i++) {
		int keep = out->prefix - (int)i * 8;
		unsigned char mask = keep >= 8 ? 0xff :
		    keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));

		if (out->addr[i] & ~mask)
			bad_host = 1;
		out->addr[i] &= mask;
	}
	if (bad_host) {
		inet_ntop(out->family, out->addr, fixed, sizeof(fixed));
		return cf_err_node(c, it, "'%s' has host bits set (did you mean "
		    "'%s/%d'?)", cf_quote(c, it->s), fixed, out->prefix);
	}
	return 0;
bad:
	return cf_err_node(c, it, "invalid address '%s' in 'from': expected an IPv4 "
	    "or IPv6 address or CIDR such as 10.0.0.0/8 or fd00::/8",
	    cf_quote(c, it->s));
}

static int
days_in_month(int y, int m)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[m - 1];
}

/* Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's method). */
static long long
days_from_civil(int y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
parse_date(struct ctx *c, const struct ynode *v, time_t *out)
{
	unsigned long long y, m, d;
	const char *s = v->s;

	if (cf_want_scalar(c, v, "expires", "a date (YYYY-MM-DD)") == -1)
		return -1;
	if (v->len != 10 || s[4] != '-' || s[7] != '-' ||
	    cf_parse_uint(s, 4, 9999, &y) != 0 || cf_parse_uint(s + 5, 2, 99, &m) != 0 ||
	    cf_parse_uint(s + 8, 2, 99, &d) != 0)
		return cf_err_node(c, v, "invalid date '%s' for 'expires': expected "
		    "YYYY-MM-DD", cf_quote(c, s));
	if (y < 1970 || m < 1 || m > 12 || d < 1 ||
	    d > (unsigned long long)days_in_month((int)y, (int)m))
		return cf_err_node(c, v, "'%s' is not a real calendar date",
		    cf_quote(c, s));
	/* The identity is valid through the whole named day (UTC). */
	*out = (time_t)((days_from_civil((int)y, (int)m, (int)d) + 1) * 86400LL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Profile references                                                  */

static int
add_ref(struct ctx *c, enum refkind kind, size_t idx, const char *name,
    const struct ynode *v)
{
	if (c->nrefs == c->caprefs) {
		size_t ncap = c->caprefs ? c->caprefs * 2 : 16;
		struct pref *n = reallocarray(c->refs, ncap, sizeof(*n));

		if (n == NULL)
			return cf_oom(c, v);
		c->refs = n;
		c->caprefs = ncap;
	}
	c->refs[c->nrefs].kind = kind;
	c->refs[c->nrefs].idx = idx;
	c->refs[c->nrefs].name = name;
	c->refs[c->nrefs].file = c->name;
	c->refs[c->nrefs].line = v->line;
	c->refs[c->nrefs].col = v->col;
	c->nrefs++;
	return 0;
}

static int
get_profile_ref(struct ctx *c, const struct ynode *v, const char *key,
    enum refkind kind, size_t idx, char **out)
{
	if (cf_get_string(c, v, key, out) == -1)
		return -1;
	return add_ref(c, kind, idx, *out, v);
}

static int
profptr_cmp(const void *a, const void *b)
{
	const struct ag_profile *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int
profkey_cmp(const void *key, const void *elem)
{
	const struct ag_profile *const *p = elem;

	return strcmp(key, (*p)->name);
}

static int
unknown_profile(struct ctx *c, const struct pref *r, const char *who)
{
	const struct ag_config *cfg = c->cfg;
	char known[400] = "", *sug;
	size_t i, best = SIZE_MAX, used = 0;
	const char *pick = NULL;

	/* the profile may be in a fragment not read (the last good copy) */
	if (c->flags & AG_CONFIG_GATEWAY_ONLY)
		return 0;
	c->name = r->file;
	for (i = 0; i < cfg->nprofiles; i++) {
		const char *n = cfg->profiles[i].name;
		int w;

		if (cf_close_enough(r->name, n, &best))
			pick = n;
		if (used + strlen(n) + 8 >= sizeof(known)) {
			if (used + 6 < sizeof(known))
				snprintf(known + used, sizeof(known) - used, ", ...");
			used = sizeof(known);
			continue;
		}
		w = snprintf(known + used, sizeof(known) - used, "%s%s",
		    i ? ", " : "", n);
		used += (size_t)w;
	}
	sug = c->qbuf[c->qi++ % 4];
	if (pick != NULL)
		snprintf(sug, sizeof(c->qbuf[0]), " (did you mean '%s'?)", pick);
	else
		sug[0] = '\0';
	return cf_err_at(c, r->line, r->col, "%s refers to unknown profile '%s'%s; "
	    "defined profiles: %s", who, cf_quote(c, r->name), sug, known);
}

static int
resolve_refs(struct ctx *c)
{
	struct ag_config *cfg = c->cfg;
	const struct ag_profile **idx;
	size_t i;
	int rc = 0;

	if ((idx = calloc(cfg->nprofiles + 1, sizeof(*idx))) == NULL)
		return cf_err_at(c, 0, 0, "out of memory");
	for (i = 0; i < cfg->nprofiles; i++)
		idx[i] = &cfg->profiles[i];
	qsort(idx, cfg->nprofiles, sizeof(*idx), profptr_cmp);
	for (i = 0; i < c->nrefs && rc == 0; i++) {
		const struct pref *r = &c->refs[i];
		const struct ag_profile *const *hit = bsearch(r->name, idx,
		    cfg->nprofiles, sizeof(*idx), profkey_cmp);
		const struct ag_profile *p = hit ? *hit : NULL;
		char who[160];

		switch (r->kind) {
		case REF_DEFAULT:
			if (p == NULL)
				rc = unknown_profile(c, r, "gateway.default_profile");
			cfg->gw.default_profile = p;
			break;
		case REF_IDENTITY:
			snprintf(who, sizeof(who), "identity '%s'",
			    cfg->identities[r->idx].name ?
			    cfg->identities[r->idx].name : "?");
			if (p == NULL)
				rc = unknown_profile(c, r, who);
			cfg->identities[r->idx].profile = p;
			break;
		case REF_USER:
			snprintf(who, sizeof(who), "%s '%s'",
			    cfg->users[r->idx].is_group ? "group" : "user",
			    cfg->users[r->idx].name);
			if (p == NULL)
				rc = unknown_profile(c, r, who);
			cfg->users[r->idx].profile = p;
			break;
		case REF_UPSTREAM:
			snprintf(who, sizeof(who), "upstream '%s'", cfg->upstreams[r->idx].name);
			if (p == NULL)
				rc = unknown_profile(c, r, who);
			cfg->upstreams[r->idx].profile = p;
			break;
		}
	}
	free(idx);
	return rc;
}

/* ------------------------------------------------------------------ */
/* gateway                                                             */

static const char *const sandbox_names[] = { "required", "best_effort", "off", NULL };

static const struct {
	const char	*name;
	int		 val;
} facilities[] = {
	{ "auth", LOG_AUTH }, { "authpriv", LOG_AUTHPRIV }, { "cron", LOG_CRON },
	{ "daemon", LOG_DAEMON }, { "ftp", LOG_FTP }, { "lpr", LOG_LPR },
	{ "mail", LOG_MAIL }, { "news", LOG_NEWS }, { "syslog", LOG_SYSLOG },
	{ "user", LOG_USER }, { "uucp", LOG_UUCP },
	{ "local0", LOG_LOCAL0 }, { "local1", LOG_LOCAL1 }, { "local2", LOG_LOCAL2 },
	{ "local3", LOG_LOCAL3 }, { "local4", LOG_LOCAL4 }, { "local5", LOG_LOCAL5 },
	{ "local6", LOG_LOCAL6 }, { "local7", LOG_LOCAL7 },
};

static int
audit_group(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_audit_conf *a = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a group name") == -1)
		return -1;
	if (!cf_name_ok(v->s, "$"))
		return cf_err_node(c, v, "'%s' is not a valid group name", cf_quote(c, v->s));
	return cf_dupstr(c, v, &a->group);
}

/* A size, or 0: the check is off (a log on its own file system). */
static int
audit_min_free(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_audit_conf *a = arg;

	(void)k;
	if (v->type == Y_SCALAR && strcmp(v->s, "0") == 0) {
		a->min_free = 0;
		return 0;
	}
	return cf_get_size(c, v, key, &a->min_free);
}

static int
audit_syslog(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_audit_conf *a = arg;
	const char *names[sizeof(facilities) / sizeof(facilities[0]) + 1];
	size_t i;
	int f;

	(void)k;
	for (i = 0; i < sizeof(facilities) / sizeof(facilities[0]); i++)
		names[i] = facilities[i].name;
	names[i] = NULL;
	if (cf_get_enum(c, v, key, names, &f) == -1)
		return -1;
	a->has_syslog = 1;
	a->syslog_facility = facilities[f].val;
	return 0;
}

static const struct cf_field audit_fields[] = {
	CF_FIELD("file", CF_ABS_PATH, struct ag_audit_conf, file),
	CF_READ("syslog", audit_syslog),
	CF_FIELD("required", CF_BOOL, struct ag_audit_conf, required),
	CF_READ("group", audit_group),
	CF_FIELD("http_url", CF_URL, struct ag_audit_conf, http_url),
	CF_FIELD("spool", CF_ABS_PATH, struct ag_audit_conf, spool),
	CF_READ("min_free", audit_min_free),
	CF_END
};

/* A spool without a collector would fill and never drain: say so. */
static int
check_audit_spool(struct ctx *c, const struct ynode *m, const struct ag_audit_conf *a)
{
	size_t i;

	if (a->spool == NULL || a->http_url != NULL)
		return 0;
	for (i = 0; i + 1 < m->n; i += 2)
		if (m->kid[i]->type == Y_SCALAR && strcmp(m->kid[i]->s, "spool") == 0)
			return cf_err_node(c, m->kid[i], "'spool' keeps records for the "
			    "collector in 'http_url', which is not set");
	return 0;
}

/* gateway.server ----------------------------------------------------- */

static const char *const auth_method_names[] = {
	"publickey", "keyboard-interactive", "password", NULL
};

/* "ADDR:PORT" with a numeric IPv4 address or "*", or "[V6ADDR]:PORT". */
static int
check_listen(struct ctx *c, const struct ynode *it, const char *key)
{
	const char *s = it->s, *colon;
	unsigned long long port;
	unsigned char a[16];
	char host[64];
	size_t hl;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (rb == NULL || rb[1] != ':')
			goto bad;
		hl = (size_t)(rb - s - 1);
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, a) != 1)
			goto bad;
		colon = rb + 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			goto bad;
		hl = (size_t)(colon - s);
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
		host[hl] = '\0';
		if (strcmp(host, "*") != 0 && inet_pton(AF_INET, host, a) != 1)
			goto bad;
	}
	if (cf_parse_uint(colon + 1, strlen(colon + 1), 65535, &port) != 0 || port == 0)
		goto bad;
	return 0;
bad:
	return cf_err_node(c, it, "invalid address '%s' in '%s': write ADDR:PORT with a "
	    "numeric address (\"0.0.0.0:2222\", \"*:2222\", \"[::]:2222\")",
	    cf_quote(c, s), key);
}

static int
check_abs_item(struct ctx *c, const struct ynode *it, const char *key)
{
	return cf_check_abs_path(c, it, key);
}

static int
check_user_name(struct ctx *c, const struct ynode *it, const char *key)
{
	if (!cf_name_ok(it->s, "$"))
		return cf_err_node(c, it, "'%s' in '%s' is not a valid user or group name",
		    cf_quote(c, it->s), key);
	return 0;
}

/* A libssh algorithm list: names, '-', '@', '.', digits, commas. */
static int
get_algos(struct ctx *c, const struct ynode *v, const char *key, char **out)
{
	const char *p;

	if (cf_want_scalar(c, v, key, "a comma-separated list of algorithms") == -1)
		return -1;
	for (p = v->s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '@' || *p == '.' || *p == ',' || *p == '_'))
			return cf_err_node(c, v, "invalid character '%c' in '%s' (write "
			    "algorithm names separated by commas, no spaces)", *p, key);
	if (v->s[0] == ',' || v->s[strlen(v->s) - 1] == ',' || strstr(v->s, ",,") != NULL)
		return cf_err_node(c, v, "empty algorithm name in '%s'", key);
	return cf_dupstr(c, v, out);
}

/*
 * "publickey", "publickey,keyboard-interactive", or alternatives separated
 * by spaces ("publickey password"), as OpenSSH's AuthenticationMethods.
 */
static int
get_auth_methods(struct ctx *c, const struct ynode *v, const char *key,
    struct ag_server_conf *sc)
{
	const char *p;

	if (cf_want_scalar(c, v, key, "a list of methods such as "
	    "\"publickey,keyboard-interactive\"") == -1)
		return -1;
	sc->nchains = 0;
	for (p = v->s; *p != '\0';) {
		struct ag_auth_chain *ch;
		size_t wl;

		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		if (sc->nchains == AG_AUTH_MAX_CHAINS)
			return cf_err_node(c, v, "too many alternatives in '%s' (at most %d)",
			    key, AG_AUTH_MAX_CHAINS);
		ch = &sc->chains[sc->nchains++];
		ch->nsteps = 0;
		wl = strcspn(p, " \t");
		while (wl > 0) {
			char name[32];
			size_t nl = strcspn(p, ", \t"), i;
			int bit, pam = 0;

			if (nl == 0 || nl >= sizeof(name))
				return cf_err_node(c, v, "empty or overlong method name in '%s'",
				    key);
			memcpy(name, p, nl);
			name[nl] = '\0';
			for (i = 0; auth_method_names[i] != NULL; i++)
				if (strcmp(name, auth_method_names[i]) == 0)
					break;
			if (auth_method_names[i] == NULL)
				return cf_err_node(c, v, "unknown authentication method '%s' in "
				    "'%s': expected publickey, keyboard-interactive or "
				    "password%s", cf_quote(c, name), key,
				    cf_suggest(c, name, auth_method_names));
			bit = i == 0 ? AG_AUTH_PUBLICKEY : i == 1 ? AG_AUTH_KBDINT :
			    AG_AUTH_PASSWORD;
			for (i = 0; i < ch->nsteps; i++) {
				if (ch->step[i] == bit)
					return cf_err_node(c, v, "method '%s' appears twice in "
					    "one chain of '%s'", name, key);
				if (ch->step[i] != AG_AUTH_PUBLICKEY)
					pam = 1;
			}
			/* PAM runs once per connection: one PAM-backed step per chain */
			if (pam && bit != AG_AUTH_PUBLICKEY)
				return cf_err_node(c, v, "keyboard-interactive and password both "
				    "go through PAM: use only one of them in a chain of '%s'",
				    key);
			if (ch->nsteps == AG_AUTH_MAX_STEPS)
				return cf_err_node(c, v, "too many steps in one chain of '%s'",
				    key);
			ch->step[ch->nsteps++] = bit;
			p += nl;
			wl -= nl;
			if (wl > 0 && *p == ',') {
				p++;
				wl--;
				if (wl == 0 || *p == ',')
					return cf_err_node(c, v, "empty method name in '%s'", key);
			}
		}
	}
	if (sc->nchains == 0)
		return cf_err_node(c, v, "'%s' names no method", key);
	return 0;
}

/*
 * OpenSSH's MaxStartups: "start:rate:full" (unauthenticated connections:
 * from start on, rate percent of new ones are dropped, rising to all at
 * full) or a single count (start = full).
 */
static int
get_startups(struct ctx *c, const struct ynode *v, const char *key, long out[3])
{
	unsigned long long n[3];
	const char *p, *q;
	size_t i, colons = 0;
	int bad = 0;

	if (cf_want_scalar(c, v, key, "\"start:rate:full\" or a count") == -1)
		return -1;
	for (q = v->s; *q != '\0'; q++)
		colons += *q == ':';
	if (colons == 0) {
		bad = cf_parse_uint(v->s, strlen(v->s), 100000, &n[0]) < 0;
		n[1] = 100;
		n[2] = n[0];
	} else if (colons == 2) {
		for (p = v->s, i = 0; i < 3 && !bad; i++) {
			size_t len = strcspn(p, ":");

			bad = cf_parse_uint(p, len, 100000, &n[i]) < 0;
			p += len + (p[len] == ':');
		}
	} else
		bad = 1;
	if (bad || n[0] == 0 || n[1] > 100 || n[2] < n[0])
		return cf_err_node(c, v, "'%s' must be \"start:rate:full\" (e.g. \"10:30:100\", "
		    "rate a percentage, start <= full) or a count, got '%s'", key, cf_quote(c, v->s));
	for (i = 0; i < 3; i++)
		out[i] = (long)n[i];
	return 0;
}

static int
server_authorized_keys(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_server_conf *sc = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a path pattern") == -1)
		return -1;
	if (v->s[0] != '/' && strncmp(v->s, "~/", 2) != 0 &&
	    strncmp(v->s, "%h/", 3) != 0)
		return cf_err_node(c, v, "'%s' must be an absolute path or start "
		    "with ~/ or %%h/, got '%s'", key, cf_quote(c, v->s));
	if (strstr(v->s, "/../") != NULL ||
	    (strlen(v->s) >= 3 && strcmp(v->s + strlen(v->s) - 3, "/..") == 0))
		return cf_err_node(c, v, "'%s' may not contain '..' components",
		    key);
	for (const char *p = strchr(v->s, '%'); p != NULL; p = strchr(p + 2, '%'))
		if (p[1] != 'u' && p[1] != 'h')
			return cf_err_node(c, v, "unknown token '%%%c' in '%s': "
			    "expected %%u (user) or %%h (home)", p[1] ? p[1] : ' ',
			    key);
	return cf_dupstr(c, v, &sc->authorized_keys);
}

static int
server_startups(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	return get_startups(c, v, key, ((struct ag_server_conf *)arg)->startups);
}

static int
server_auth_methods(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	return get_auth_methods(c, v, key, arg);
}

/* one reader per algorithm list: the table says which field each fills */
#define ALGOS_READER(name, field) \
static int \
name(struct ctx *c, const char *key, const struct ynode *k, const struct ynode *v, \
    void *arg) \
{ \
	(void)k; \
	return get_algos(c, v, key, &((struct ag_server_conf *)arg)->field); \
}
ALGOS_READER(server_ciphers, ciphers)
ALGOS_READER(server_kex, kex)
ALGOS_READER(server_macs, macs)
ALGOS_READER(server_hostkey_algorithms, hostkey_algorithms)

static const struct cf_field server_fields[] = {
	CF_LIST("listen", struct ag_server_conf, listen, check_listen, 0),
	CF_LIST("host_keys", struct ag_server_conf, host_keys, check_abs_item, 0),
	CF_LIST("allow_users", struct ag_server_conf, allow_users, check_user_name, 0),
	CF_LIST("allow_groups", struct ag_server_conf, allow_groups, check_user_name, 0),
	CF_COUNT_OF("max_connections", struct ag_server_conf, max_connections, 100000),
	CF_COUNT_OF("max_per_source", struct ag_server_conf, max_per_source, 100000),
	CF_READ("max_startups", server_startups),
	CF_COUNT_OF("max_sessions", struct ag_server_conf, max_sessions, 64),
	CF_FIELD("login_grace_time", CF_DURATION, struct ag_server_conf, login_grace_time),
	CF_COUNT_OF("max_auth_tries", struct ag_server_conf, max_auth_tries, 100),
	CF_FIELD("keepalive", CF_DURATION, struct ag_server_conf, keepalive),
	CF_READ("authorized_keys", server_authorized_keys),
	CF_READ("auth_methods", server_auth_methods),
	CF_LIST("accept_env", struct ag_server_conf, accept_env, cf_check_env_glob, 1),
	CF_READ("ciphers", server_ciphers),
	CF_READ("kex", server_kex),
	CF_READ("macs", server_macs),
	CF_READ("hostkey_algorithms", server_hostkey_algorithms),
	CF_END
};

static int
gateway_pam_service(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_gateway *gw = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a PAM service name") == -1)
		return -1;
	if (!cf_name_ok(v->s, ""))
		return cf_err_node(c, v, "'%s' is not a valid PAM service name",
		    cf_quote(c, v->s));
	free(gw->pam_service);
	gw->pam_service = NULL;
	return cf_dupstr(c, v, &gw->pam_service);
}

static int
gateway_default_profile(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	return get_profile_ref(c, v, key, REF_DEFAULT, 0,
	    &((struct ag_gateway *)arg)->default_profile_name);
}

static int
gateway_audit(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_gateway *gw = arg;

	(void)k;
	if (cf_walk_fields(c, v, key, "in gateway.audit", audit_fields, &gw->audit,
	    &gw->audit) == -1)
		return -1;
	return check_audit_spool(c, v, &gw->audit);
}

static int
gateway_server(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_gateway *gw = arg;

	gw->server.present = 1;
	cf_pos(c, &gw->server.pos, k);
	if (cf_is_null(v))
		return 0;
	return cf_walk_fields(c, v, key, "in gateway.server", server_fields, &gw->server,
	    &gw->server);
}

static int
gateway_egress(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_gateway *gw = arg;

	(void)k;
	if (cf_is_null(v))
		return 0;
	return cf_walk_fields(c, v, key, "in gateway.egress", cf_egress_fields, &gw->egress,
	    &gw->egress);
}

static const struct cf_field gateway_fields[] = {
	CF_FIELD("runner", CF_ABS_PATH, struct ag_gateway, runner),
	CF_READ("pam_service", gateway_pam_service),
	CF_FIELD("pam_confdir", CF_ABS_PATH, struct ag_gateway, pam_confdir),
	CF_ENUM_OF("sandbox", struct ag_gateway, sandbox, sandbox_names),
	CF_READ("default_profile", gateway_default_profile),
	CF_READ("audit", gateway_audit),
	CF_FIELD("recordings", CF_ABS_PATH, struct ag_gateway, recordings),
	CF_FIELD("recordings_input", CF_BOOL, struct ag_gateway, recordings_input),
	CF_READ("server", gateway_server),
	CF_READ("egress", gateway_egress),
	CF_END
};

/*
 * Room for more entries after the n in *arr (identities, users, profiles,
 * upstreams: the main file's, then each fragment's), zeroed.  Nothing
 * points into these arrays until the references are resolved at the end.
 */
static void *
grow(struct ctx *c, void *arr, size_t n, size_t more, size_t size, const struct ynode *v)
{
	char *na;

	if (more == 0)
		more = 1;
	if (n > SIZE_MAX / size - more || (na = realloc(arr, (n + more) * size)) == NULL) {
		cf_oom(c, v);
		return NULL;
	}
	memset(na + n * size, 0, more * size);
	return na;
}

/* ------------------------------------------------------------------ */
/* identities                                                          */

struct identctx {
	struct ag_identity	*id;
	size_t			 idx;
};

static int
identity_name(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)k;
	if (cf_want_scalar(c, v, key, "a name") == -1)
		return -1;
	if (!cf_name_ok(v->s, "@"))
		return cf_err_node(c, v, "identity name '%s' may contain only "
		    "letters, digits, '_', '-', '.' and '@' (at most %d)",
		    cf_quote(c, v->s), MAX_NAME);
	return cf_dupstr(c, v, &id->name);
}

static int
identity_keys_of(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;
	size_t i;

	(void)k;
	if (cf_get_strlist(c, v, key, &id->keys, NULL, 0) == -1)
		return -1;
	/* Re-store each key in canonical "TYPE BASE64" form. */
	for (i = 0; i < id->keys.n; i++) {
		char *canon;

		if (parse_pubkey(c, v->kid[i], &canon) == -1)
			return -1;
		free(id->keys.v[i]);
		id->keys.v[i] = canon;
	}
	return 0;
}

static int
identity_token(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)key;
	(void)k;
	if (parse_token(c, v, id->token_sha256) == -1)
		return -1;
	id->has_token = 1;
	return 0;
}

/* A hash in the text form of `agentgate token new` into h. */
static int
read_token_hash(struct ctx *c, const struct ynode *v, const char *key, const char *where,
    struct ag_token_hash *h)
{
	struct ag_err e;

	if (cf_want_scalar(c, v, key, "a hash from agentgate token new") == -1)
		return -1;
	ag_err_clear(&e);
	if (ag_token_hash_parse(v->s, h, &e) < 0)
		return cf_err_node(c, v, "%s%s", where, e.msg);
	return 0;
}

static int
identity_token_hash(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)key;
	if (read_token_hash(c, v, "token_hash", "", &id->token_hash) == -1)
		return -1;
	id->has_token_hash = 1;
	cf_pos(c, &id->token_key_pos, k);
	cf_pos(c, &id->token_val_pos, v);
	return 0;
}

/*
 * "YYYY-MM-DDTHH:MM:SSZ", UTC, as seconds since the epoch: one spelling,
 * so that what `agentgate token rotate` writes and what an admin types
 * mean the same instant.
 */
static int
parse_instant(struct ctx *c, const struct ynode *v, const char *key, time_t *out)
{
	unsigned long long y, mo, d, h, mi, s;
	const char *t = v->s;

	if (cf_want_scalar(c, v, key, "a time (YYYY-MM-DDTHH:MM:SSZ)") == -1)
		return -1;
	if (v->len != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' ||
	    t[16] != ':' || t[19] != 'Z' ||
	    cf_parse_uint(t, 4, 9999, &y) != 0 || cf_parse_uint(t + 5, 2, 99, &mo) != 0 ||
	    cf_parse_uint(t + 8, 2, 99, &d) != 0 || cf_parse_uint(t + 11, 2, 99, &h) != 0 ||
	    cf_parse_uint(t + 14, 2, 99, &mi) != 0 || cf_parse_uint(t + 17, 2, 99, &s) != 0)
		return cf_err_node(c, v, "invalid time '%s' for '%s': expected "
		    "YYYY-MM-DDTHH:MM:SSZ (UTC)", cf_quote(c, t), key);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > (unsigned long long)days_in_month((int)y, (int)mo) || h > 23 || mi > 59 ||
	    s > 59)
		return cf_err_node(c, v, "'%s' is not a real time of day and date",
		    cf_quote(c, t));
	*out = (time_t)(days_from_civil((int)y, (int)mo, (int)d) * 86400LL +
	    (long long)h * 3600 + (long long)mi * 60 + (long long)s);
	return 0;
}

static int
prev_token_hash(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)k;
	if (read_token_hash(c, v, key, "previous_token: ", &id->prev_token_hash) == -1)
		return -1;
	id->has_prev_token |= 1;
	return 0;
}

static int
prev_token_until(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)k;
	if (parse_instant(c, v, key, &id->prev_until) == -1)
		return -1;
	id->has_prev_token |= 2;
	return 0;
}

static const struct cf_field prev_token_fields[] = {
	CF_READ("hash", prev_token_hash),
	CF_READ("until", prev_token_until),
	CF_END
};

/*
 * previous_token: { hash: "$scrypt$...", until: "2026-12-01T12:00:00Z" },
 * the token a rotation replaced, taken until then so that the agent can
 * move to the new one (agentgate token rotate writes it).
 */
static int
identity_prev_token(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	if (v->type != Y_MAP)
		return cf_err_node(c, v, "expected a mapping { hash: ..., until: ... } for "
		    "'%s', got %s", key, cf_kind_of(v));
	if (cf_walk_fields(c, v, key, "in previous_token", prev_token_fields, id, arg) == -1)
		return -1;
	if (!(id->has_prev_token & 1))
		return cf_err_node(c, v, "'previous_token' has no 'hash'");
	if (!(id->has_prev_token & 2))
		return cf_err_node(c, v, "'previous_token' has no 'until' (the time it "
		    "stops working, YYYY-MM-DDTHH:MM:SSZ)");
	id->has_prev_token = 1;
	cf_pos(c, &id->prev_pos, k);
	return 0;
}

static int
identity_profile(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct identctx *ic = arg;

	(void)k;
	return get_profile_ref(c, v, key, REF_IDENTITY, ic->idx, &ic->id->profile_name);
}

static int
identity_from(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;
	size_t i;

	(void)k;
	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of addresses for "
		    "'from', got %s", cf_kind_of(v));
	if (v->n == 0)
		return cf_err_node(c, v, "'from' is an empty list, which would "
		    "match no address: remove the key to allow any address");
	if ((id->from = calloc(v->n, sizeof(*id->from))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		if (cf_want_scalar(c, v->kid[i], key, "an address") == -1 ||
		    parse_cidr(c, v->kid[i], &id->from[i]) == -1)
			return -1;
		id->nfrom = i + 1;
	}
	return 0;
}

static int
identity_expires(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_identity *id = ((struct identctx *)arg)->id;

	(void)key;
	(void)k;
	if (parse_date(c, v, &id->expires) == -1)
		return -1;
	id->has_expires = 1;
	return 0;
}

/* A name of who: an account's (or an identity's, for what), or "%group". */
static int
check_who(struct ctx *c, const struct ynode *it, const char *key, const char *what)
{
	const char *n = it->s[0] == '%' ? it->s + 1 : it->s;

	if (!cf_name_ok(n, "$"))
		return cf_err_node(c, it, "'%s' in '%s' is not %s or %%group name "
		    "(letters, digits, '_', '-', '.', '$')", cf_quote(c, it->s), key, what);
	return 0;
}

static int
check_account(struct ctx *c, const struct ynode *it, const char *key)
{
	return check_who(c, it, key, "an account");
}

static const struct cf_field identity_fields[] = {
	CF_READ("name", identity_name),
	CF_READ("keys", identity_keys_of),
	CF_READ("token_sha256", identity_token),
	CF_READ("token_hash", identity_token_hash),
	CF_READ("previous_token", identity_prev_token),
	CF_READ("profile", identity_profile),
	CF_READ("from", identity_from),
	CF_READ("expires", identity_expires),
	CF_FIELD("disabled", CF_BOOL, struct ag_identity, disabled),
	CF_LIST("accounts", struct ag_identity, accounts, check_account, 0),
	CF_END
};

static int
load_identities(struct ctx *c, const struct ynode *v)
{
	struct ag_config *cfg = c->cfg;
	const struct ynode **names = NULL, *dup, *first;
	struct ag_identity *ids;
	size_t i, j, base = cfg->nidentities;
	int rc = -1;

	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of identities for "
		    "'identities', got %s", cf_kind_of(v));
	if (v->n == 0)
		return 0;
	/* a fragment's come after those read before it */
	if ((ids = grow(c, cfg->identities, base, v->n, sizeof(*ids), v)) == NULL)
		return -1;
	cfg->identities = ids;
	if ((names = calloc(v->n, sizeof(*names))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->kid[i], *nm;
		struct ag_identity *id = &cfg->identities[base + i];
		struct identctx ic = { id, base + i };
		char what[120];

		cfg->nidentities = base + i + 1;
		cf_pos(c, &id->pos, it);
		if (it->type != Y_MAP) {
			cf_err_node(c, it, "expected a mapping for identity #%zu, got %s",
			    i + 1, cf_kind_of(it));
			goto out;
		}
		nm = cf_map_get(it, "name");
		if (nm != NULL && nm->type == Y_SCALAR && !cf_is_null(nm))
			snprintf(what, sizeof(what), "in identity '%s'",
			    cf_quote(c, nm->s));
		else
			snprintf(what, sizeof(what), "in identity #%zu", i + 1);
		if (cf_walk_fields(c, it, "identities", what, identity_fields, ic.id,
		    &ic) == -1)
			goto out;
		if (id->name == NULL) {
			cf_err_node(c, it, "identity #%zu has no 'name'", i + 1);
			goto out;
		}
		if (id->profile_name == NULL) {
			cf_err_node(c, it, "identity '%s' has no 'profile'", id->name);
			goto out;
		}
		if (id->keys.n == 0 && !id->has_token && !id->has_token_hash) {
			cf_err_node(c, it, "identity '%s' has neither 'keys' nor "
			    "'token_sha256', so it can never match", id->name);
			goto out;
		}
		if (id->has_token && id->has_token_hash) {
			cf_err_node(c, it, "identity '%s' has both 'token_sha256' and "
			    "'token_hash': keep the token_hash", id->name);
			goto out;
		}
		if (id->has_prev_token && !id->has_token_hash) {
			cf_err_node(c, cf_map_get(it, "previous_token"), "identity '%s' has "
			    "'previous_token' but no 'token_hash': a previous token is the "
			    "one a token_hash replaced", id->name);
			goto out;
		}
		if (id->has_prev_token && memcmp(id->prev_token_hash.key, id->token_hash.key,
		    sizeof(id->token_hash.key)) == 0) {
			cf_err_node(c, cf_map_get(it, "previous_token"), "identity '%s': "
			    "'previous_token' is the same token as 'token_hash'", id->name);
			goto out;
		}
		names[i] = cf_map_get(it, "name");
		/* a key names one identity: two would make every login with it
		 * ambiguous, and refused, at run time */
		for (j = 0; j < base + i; j++) {
			const struct ag_identity *o = &cfg->identities[j];
			size_t a, b;

			for (a = 0; a < id->keys.n; a++)
				for (b = 0; b < o->keys.n; b++)
					if (strcmp(id->keys.v[a], o->keys.v[b]) == 0) {
						cf_err_node(c, cf_map_get(it, "keys"), "identity "
						    "'%s' has a key of identity '%s' (at %s); a "
						    "key can name only one identity", id->name,
						    o->name, cf_pos_text(c, &o->pos));
						goto out;
					}
		}
	}
	if (cf_find_dup(c, names, v->n, 1, &dup, &first) == -1)
		goto out;
	if (dup != NULL) {
		cf_err_node(c, dup, "duplicate identity '%s' (first defined at %d:%d)",
		    cf_quote(c, dup->s), first->line, first->col);
		goto out;
	}
	rc = 0;
out:
	free(names);
	return rc;
}

/* ------------------------------------------------------------------ */
/* users                                                               */

static int
user_key(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_config *cfg = c->cfg;
	struct ag_usermap *u = &cfg->users[cfg->nusers];
	int grp = key[0] == '%';

	(void)arg;
	if (!cf_name_ok(key + grp, "$"))
		return cf_err_node(c, k, "'%s' is not a valid %s name", cf_quote(c, key),
		    grp ? "group" : "user");
	cfg->nusers++;
	u->is_group = grp;
	cf_pos(c, &u->pos, k);
	if ((u->name = strdup(key + grp)) == NULL)
		return cf_oom(c, k);
	return get_profile_ref(c, v, key, REF_USER, cfg->nusers - 1,
	    &u->profile_name);
}

static int
load_users(struct ctx *c, const struct ynode *v)
{
	struct ag_usermap *u;

	if (v->type == Y_MAP) {
		if ((u = grow(c, c->cfg->users, c->cfg->nusers, v->n / 2, sizeof(*u),
		    v)) == NULL)
			return -1;
		c->cfg->users = u;
	}
	return cf_walk_map(c, v, "users", "in users", "user", NULL, user_key, NULL);
}

/* ------------------------------------------------------------------ */
/* profiles                                                            */

static const char *const feature_names[] = { "allow", "deny", NULL };
static const char *const wredir_names[] = { "allow", "rules", "deny", NULL };
static const char *const unknown_names[] = { "deny", "ask", "allow", NULL };
static const char *const tier_names[] = { "strict", "developer", NULL };
static const char *const transfer_names[] = { "off", "read", "write", NULL };
/* in the order of enum ag_validator_kind */
static const char *const kind_names[] = { "openai", "anthropic", "opa", "webhook", NULL };

const char *
ag_validator_kind_name(enum ag_validator_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0]) - 1 ? kind_names[k] : "?";
}

struct pctx {
	struct ag_profile	*p;
	int			 is_deny;	/* for rules */
	struct ag_rule		*rule;
	const struct ynode	*argv_key;	/* the rule's 'argv', for messages */
	const struct ynode	*name_val;	/* the rule's 'name' */
	char			 what[200];	/* "in profile 'x'" */
};

static int
check_command(struct ctx *c, const struct ynode *v)
{
	size_t i;

	if (v->len == 0)
		return cf_err_node(c, v, "empty command name");
	for (i = 0; i < v->len; i++)
		if (isspace((unsigned char)v->s[i]))
			return cf_err_node(c, v, "command '%s' contains white space: "
			    "name one program per rule and put arguments in "
			    "'args'", cf_quote(c, v->s));
	if (strchr(v->s, '/') != NULL && v->s[0] != '/')
		return cf_err_node(c, v, "command '%s' must be a bare name or an "
		    "absolute path", cf_quote(c, v->s));
	/* a rule that looks like a pattern would match only a program of
	 * that literal name, that is, nothing */
	if (strpbrk(v->s, "*?[") != NULL)
		return cf_err_node(c, v, "command '%s' is not a pattern: name each "
		    "program (patterns go in 'args')", cf_quote(c, v->s));
	return 0;
}

static int
rule_command(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a program name") == -1 || check_command(c, v) == -1)
		return -1;
	return cf_dupstr(c, v, &pc->rule->command);
}

/* deny_args and allow_options narrow an allow rule; a deny rule has args */
static int
in_deny_rule(struct ctx *c, const char *key, const struct ynode *k, const struct pctx *pc)
{
	if (!pc->is_deny)
		return 0;
	return cf_err_node(c, k, "'%s' has no meaning in a deny rule (%s): "
	    "use 'args' to name the arguments that are refused", key, pc->rule->id);
}

static int
rule_deny_args(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	if (in_deny_rule(c, key, k, pc) == -1)
		return -1;
	return cf_get_strlist(c, v, key, &pc->rule->deny_args, NULL, 0);
}

static int
rule_allow_options(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	if (in_deny_rule(c, key, k, pc) == -1)
		return -1;
	return cf_get_strlist(c, v, key, &pc->rule->allow_options, cf_check_option, 0);
}

/* argv: [] is a rule of its own (no arguments at all), so it is kept apart
 * from "not given" */
static int
rule_argv(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	pc->argv_key = k;
	pc->rule->has_argv = 1;
	return cf_get_strlist(c, v, key, &pc->rule->argv, NULL, 1);
}

static int
rule_name(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a name") == -1)
		return -1;
	if (!cf_name_ok(v->s, ""))
		return cf_err_node(c, v, "rule name '%s' may contain only letters, digits, "
		    "'_', '-' and '.' (at most %d)", cf_quote(c, v->s), MAX_NAME);
	pc->name_val = v;
	return cf_dupstr(c, v, &pc->rule->name);
}

static const struct cf_field rule_fields[] = {
	CF_READ("command", rule_command),
	CF_READ("name", rule_name),
	CF_READ("argv", rule_argv),
	CF_LIST("subcommands", struct ag_rule, subcommands, cf_check_word, 0),
	CF_LIST("args", struct ag_rule, args, NULL, 0),
	CF_READ("deny_args", rule_deny_args),
	CF_READ("allow_options", rule_allow_options),
	CF_END
};

/*
 * argv is the whole argument vector: a list of arguments beside it would
 * either say nothing or contradict it, and which one wins would be a guess.
 */
static int
argv_conflict(struct ctx *c, const struct pctx *pc, const struct ag_rule *r)
{
	const char *other = r->args.n ? "args" : r->subcommands.n ? "subcommands" :
	    r->allow_options.n ? "allow_options" : NULL;

	if (other == NULL)
		return 0;
	return cf_err_node(c, pc->argv_key, "rule %s has both 'argv' and '%s': 'argv' "
	    "is the exact argument list, so write the arguments there (or use '%s' "
	    "without 'argv')", r->id, other, other);
}

static int
same_name(const struct ag_rule *r, size_t n, const struct ag_rule *self, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (&r[i] != self && r[i].name != NULL && strcmp(r[i].name, name) == 0)
			return 1;
	return 0;
}

/* A named rule's id is its name, so that a reference to it (the audit's
 * "rule", a dashboard) outlives an edit that moves it. */
static int
name_rule(struct ctx *c, struct pctx *pc, const char *key, struct ag_rule *r)
{
	struct ag_profile *p = pc->p;
	char id[2 * MAX_NAME + 40];

	if (same_name(p->allow, p->nallow, r, r->name) ||
	    same_name(p->deny, p->ndeny, r, r->name))
		return cf_err_node(c, pc->name_val, "rule name '%s' is used twice in "
		    "profile '%s': each rule's name is its own", r->name, p->name);
	snprintf(id, sizeof(id), "profiles.%s.%s.%s", p->name, key, r->name);
	free(r->id);
	if ((r->id = strdup(id)) == NULL)
		return cf_oom(c, pc->name_val);
	return 0;
}

static int
load_rules(struct ctx *c, struct pctx *pc, const struct ynode *v, const char *key,
    struct ag_rule **out, size_t *nout)
{
	size_t i;

	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of rules for '%s', got %s",
		    key, cf_kind_of(v));
	if (v->n == 0) {
		if (!pc->is_deny)
			return cf_err_node(c, v, "'allow' is an empty list, so profile "
			    "'%s' could run nothing: name the programs it may run",
			    pc->p->name);
		return 0;
	}
	if ((*out = calloc(v->n, sizeof(**out))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->kid[i];
		struct ag_rule *r = &(*out)[i];
		char id[MAX_NAME + 40], what[MAX_NAME + 60];

		*nout = i + 1;
		cf_pos(c, &r->pos, it);
		snprintf(id, sizeof(id), "profiles.%s.%s[%zu]", pc->p->name, key, i);
		if ((r->id = strdup(id)) == NULL)
			return cf_oom(c, it);
		if (it->type == Y_SCALAR && !cf_is_null(it)) {
			if (cf_scalar_has_nul(it))
				return cf_err_node(c, it, "command contains a NUL "
				    "character");
			if (check_command(c, it) == -1)
				return -1;
			if (cf_dupstr(c, it, &r->command) == -1)
				return -1;
			continue;
		}
		if (it->type != Y_MAP)
			return cf_err_node(c, it, "expected a program name or a rule "
			    "mapping in '%s', got %s", key, cf_kind_of(it));
		snprintf(what, sizeof(what), "in rule %s", id);
		pc->rule = r;
		pc->argv_key = pc->name_val = NULL;
		if (cf_walk_fields(c, it, key, what, rule_fields, r, pc) == -1)
			return -1;
		if (r->command == NULL)
			return cf_err_node(c, it, "rule %s has no 'command'", id);
		if (r->has_argv && argv_conflict(c, pc, r) == -1)
			return -1;
		if (r->name != NULL && name_rule(c, pc, key, r) == -1)
			return -1;
	}
	for (i = 0; i < *nout; i++) {
		struct ag_rule *r = &(*out)[i];
		char label[MAX_NAME * 2 + PATH_MAX];

		/* every decision compares it with each rule's; taken once here */
		r->base = ag_base_name(r->command);
		snprintf(label, sizeof(label), "%s (%s)", r->id, r->command);
		if ((r->label = strdup(label)) == NULL)
			return cf_oom(c, v);
	}
	return 0;
}

static const struct cf_field feature_fields[] = {
	CF_ENUM_OF("command_substitution", struct ag_features, command_substitution,
	    feature_names),
	CF_ENUM_OF("process_substitution", struct ag_features, process_substitution,
	    feature_names),
	CF_ENUM_OF("functions", struct ag_features, functions, feature_names),
	CF_ENUM_OF("background", struct ag_features, background, feature_names),
	CF_ENUM_OF("coproc", struct ag_features, coproc, feature_names),
	CF_ENUM_OF("subshell", struct ag_features, subshell, feature_names),
	CF_ENUM_OF("write_redirections", struct ag_features, write_redirections,
	    wredir_names),
	CF_END
};

static int
paths_tmp(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	static const char *const names[] = { "persistent", "session", NULL };
	struct ag_profile *p = arg;
	int e;

	(void)k;
	if (cf_get_enum(c, v, key, names, &e) == -1)
		return -1;
	p->paths_tmp = e == 0 ? AG_TMP_PERSISTENT : AG_TMP_SESSION;
	return 0;
}

static const struct cf_field paths_fields[] = {
	CF_LIST("read", struct ag_profile, paths_read, cf_check_policy_path, 1),
	CF_LIST("write", struct ag_profile, paths_write, cf_check_policy_path, 1),
	CF_LIST("protect", struct ag_profile, paths_protect, cf_check_policy_path, 1),
	CF_LIST("exec", struct ag_profile, paths_exec, cf_check_policy_path, 1),
	CF_READ("tmp", paths_tmp),
	CF_END
};

static const struct cf_field transfer_fields[] = {
	CF_ENUM_OF("sftp", struct ag_profile, sftp, transfer_names),
	CF_FIELD("scp", CF_BOOL, struct ag_profile, scp_legacy),
	CF_FIELD("rsync", CF_BOOL, struct ag_profile, rsync),
	CF_END
};

static int
check_regex(struct ctx *c, const struct ynode *it, const char *key)
{
	regex_t re;
	char msg[160];
	int rc;

	if ((rc = regcomp(&re, it->s, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &re, msg, sizeof(msg));
		return cf_err_node(c, it, "'%s' in '%s' is not a POSIX extended regular "
		    "expression: %s", cf_quote(c, it->s), key, msg);
	}
	regfree(&re);
	return 0;
}

static const struct cf_field output_fields[] = {
	CF_FIELD("redact", CF_BOOL, struct ag_profile, redact),
	CF_LIST("redact_patterns", struct ag_profile, redact_patterns, check_regex, 0),
	CF_END
};

static int
envset_key(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	size_t n = p->env_set_keys.n;

	if (!cf_env_name_ok(key))
		return cf_err_node(c, k, "'%s' in 'env.set' is not a valid "
		    "environment variable name", cf_quote(c, key));
	if (v->type != Y_SCALAR)
		return cf_err_node(c, v, "expected a string for 'env.set.%s', got %s",
		    cf_quote(c, key), cf_kind_of(v));
	if (cf_scalar_has_nul(v))
		return cf_err_node(c, v, "'env.set.%s' contains a NUL character",
		    cf_quote(c, key));
	/* An empty value is a value: "FOO: ''" sets FOO to the empty string. */
	if ((p->env_set_keys.v[n] = strdup(key)) == NULL)
		return cf_oom(c, k);
	p->env_set_keys.n++;
	if ((p->env_set_vals.v[n] = strdup(cf_is_null(v) ? "" : v->s)) == NULL)
		return cf_oom(c, v);
	p->env_set_vals.n++;
	return 0;
}

static int
env_set(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	char what[260];

	(void)k;
	if (v->type == Y_MAP) {
		if ((p->env_set_keys.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL ||
		    (p->env_set_vals.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL)
			return cf_oom(c, v);
	}
	snprintf(what, sizeof(what), "in profiles.%s.env.set", p->name);
	return cf_walk_map(c, v, key, what, "variable", NULL, envset_key, p);
}

static const struct cf_field env_fields[] = {
	CF_LIST("deny", struct ag_profile, env_deny, cf_check_env_glob, 1),
	CF_LIST("allow", struct ag_profile, env_allow, cf_check_env_name, 1),
	CF_READ("set", env_set),
	CF_END
};

static int
limits_memory(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_limits *l = arg;

	(void)k;
	/* "unlimited" has to be said: leaving the key out means the default */
	if (v->type == Y_SCALAR && v->s != NULL && strcmp(v->s, "unlimited") == 0) {
		l->memory = -1;
		return 0;
	}
	return cf_get_size(c, v, key, &l->memory);
}

static const struct cf_field limits_fields[] = {
	CF_FIELD("timeout", CF_DURATION, struct ag_limits, timeout),
	CF_FIELD("max_output", CF_SIZE, struct ag_limits, max_output),
	CF_FIELD("idle_timeout", CF_DURATION, struct ag_limits, idle_timeout),
	CF_COUNT_OF("processes", struct ag_limits, processes, INT_MAX),
	CF_COUNT_OF("open_files", struct ag_limits, open_files, INT_MAX),
	CF_FIELD("file_size", CF_SIZE, struct ag_limits, file_size),
	CF_FIELD("cpu", CF_DURATION, struct ag_limits, cpu),
	CF_FIELD("address_space", CF_SIZE, struct ag_limits, address_space),
	CF_READ("memory", limits_memory),
	CF_FIELD("tmp_size", CF_SIZE, struct ag_limits, tmp_size),
	CF_FIELD("tmp_age", CF_DURATION, struct ag_limits, tmp_age),
	CF_END
};

static int
validator_kind(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_validator *val = arg;
	int e;

	(void)k;
	if (cf_get_enum(c, v, key, kind_names, &e) == -1)
		return -1;
	val->kind = (enum ag_validator_kind)e;
	return 0;
}

/* Older policies say `on_error: deny`; nothing else was ever safe. */
static int
validator_on_error(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	(void)arg;
	if (cf_want_scalar(c, v, key, "deny") == -1)
		return -1;
	if (strcmp(v->s, "deny") != 0)
		return cf_err_node(c, v, "'%s: %s' is not possible: a validator that cannot "
		    "answer always refuses (there is no fail-open mode); remove the key",
		    key, cf_quote(c, v->s));
	return 0;
}

/* A fraction from 0 to 1, as a plain decimal ("0.8"). */
static int
validator_min_confidence(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_validator *val = arg;
	char *end;
	double d;

	(void)k;
	if (cf_want_scalar(c, v, key, "a number from 0 to 1") == -1)
		return -1;
	errno = 0;
	d = strtod(v->s, &end);
	if (v->s[0] == '\0' || *end != '\0' || errno != 0 || !(d >= 0.0 && d <= 1.0) ||
	    strspn(v->s, "0123456789.") != strlen(v->s))
		return cf_err_node(c, v, "'%s' must be a number from 0 to 1, got '%s'", key,
		    cf_quote(c, v->s));
	val->min_confidence = d;
	val->has_min_confidence = 1;
	return 0;
}

static const struct cf_field validator_fields[] = {
	CF_FIELD("name", CF_STRING, struct ag_validator, name),
	CF_FIELD("url", CF_URL, struct ag_validator, url),
	CF_READ("kind", validator_kind),
	CF_FIELD("model", CF_STRING, struct ag_validator, model),
	CF_FIELD("api_key_file", CF_ABS_PATH, struct ag_validator, api_key_file),
	CF_FIELD("prompt_file", CF_ABS_PATH, struct ag_validator, prompt_file),
	CF_COUNT_OF("timeout_ms", struct ag_validator, timeout_ms, 600000),
	CF_COUNT_OF("max_command_bytes", struct ag_validator, max_command_bytes, 1048576),
	CF_COUNT_OF("max_answer_bytes", struct ag_validator, max_answer_bytes, 16777216),
	CF_COUNT_OF("max_per_minute", struct ag_validator, max_per_minute, 100000),
	CF_COUNT_OF("max_tokens", struct ag_validator, max_tokens, 100000),
	CF_READ("min_confidence", validator_min_confidence),
	CF_FIELD("approval_timeout", CF_DURATION, struct ag_validator, approval_timeout),
	CF_READ("on_error", validator_on_error),
	CF_END
};

static int
check_target_name(struct ctx *c, const struct ynode *it, const char *key)
{
	if (!cf_name_ok(it->s, ""))
		return cf_err_node(c, it, "'%s' in '%s' is not an upstream name (letters, "
		    "digits, '_', '-' and '.')", cf_quote(c, it->s), key);
	return 0;
}

static int
check_selector(struct ctx *c, const struct ynode *it, const char *key)
{
	return check_who(c, it, key, "an identity, account");
}

/* "in profiles.NAME.KEY", for the messages of a section of a profile */
static const char *
section_what(char *buf, size_t len, const struct ag_profile *p, const char *key)
{
	snprintf(buf, len, "in profiles.%s.%s", p->name, key);
	return buf;
}

static int
profile_allow(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	pc->is_deny = 0;
	return load_rules(c, pc, v, key, &pc->p->allow, &pc->p->nallow);
}

static int
profile_deny(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	pc->is_deny = 1;
	return load_rules(c, pc, v, key, &pc->p->deny, &pc->p->ndeny);
}

static int
profile_features(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    feature_fields, &p->features, p);
}

static int
profile_paths(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    paths_fields, p, p);
}

static int
profile_network(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	p->has_network = 1;
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_network_fields, p, p) == -1)
		return -1;
	return cf_network_finish(c, p, v);
}

static int
profile_transfer(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    transfer_fields, p, p);
}

static int
profile_output(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    output_fields, p, p) == -1)
		return -1;
	/* patterns of one's own mean redaction on */
	if (p->redact_patterns.n > 0)
		p->redact = 1;
	return 0;
}

static int
profile_env(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    env_fields, p, p);
}

static int
profile_limits(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    limits_fields, &p->limits, &p->limits);
}

static int
profile_validator(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	if ((p->validator = calloc(1, sizeof(*p->validator))) == NULL)
		return cf_oom(c, v);
	p->validator->timeout_ms = 4000;
	p->validator->max_command_bytes = 8192;
	p->validator->max_answer_bytes = 65536;
	p->validator->max_per_minute = 30;
	p->validator->max_tokens = 512;
	cf_pos(c, &p->validator->pos, v);
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    validator_fields, p->validator, p->validator) == -1)
		return -1;
	if (p->validator->url == NULL)
		return cf_err_node(c, v, "profiles.%s.validator has no 'url'", p->name);
	if (p->validator->name != NULL && !cf_name_ok(p->validator->name, ""))
		return cf_err_node(c, cf_map_get(v, "name"), "profiles.%s.validator.name may "
		    "contain only letters, digits, '_', '-' and '.' (at most %d)", p->name,
		    MAX_NAME);
	if ((p->validator->kind == AG_VK_OPENAI || p->validator->kind == AG_VK_ANTHROPIC) &&
	    p->validator->model == NULL)
		return cf_err_node(c, v, "profiles.%s.validator of kind '%s' needs "
		    "a 'model'", p->name, ag_validator_kind_name(p->validator->kind));
	if (p->validator->prompt_file != NULL && (p->validator->kind == AG_VK_OPA ||
	    p->validator->kind == AG_VK_WEBHOOK))
		return cf_err_node(c, cf_map_get(v, "prompt_file"), "profiles.%s.validator: "
		    "'prompt_file' is for the LLM kinds (openai, anthropic), not '%s'", p->name,
		    ag_validator_kind_name(p->validator->kind));
	if (p->validator->approval_timeout > 0 && p->validator->kind != AG_VK_WEBHOOK)
		return cf_err_node(c, cf_map_get(v, "approval_timeout"), "profiles.%s.validator: "
		    "'approval_timeout' is for a webhook, which can hand a command to a person; "
		    "not '%s'", p->name, ag_validator_kind_name(p->validator->kind));
	if (p->validator->name == NULL &&
	    (p->validator->name = strdup(ag_validator_kind_name(p->validator->kind))) == NULL)
		return cf_oom(c, v);
	return 0;
}

static const struct cf_field profile_fields[] = {
	CF_READ("allow", profile_allow),
	CF_READ("deny", profile_deny),
	CF_READ("features", profile_features),
	CF_READ("paths", profile_paths),
	CF_READ("network", profile_network),
	CF_READ("file_transfer", profile_transfer),
	CF_READ("env", profile_env),
	CF_READ("output", profile_output),
	CF_READ("limits", profile_limits),
	CF_ENUM_OF("unknown", struct ag_profile, unknown, unknown_names),
	CF_READ("validator", profile_validator),
	CF_ENUM_OF("tier", struct ag_profile, tier, tier_names),
	CF_LIST("targets", struct ag_profile, targets, check_target_name, 0),
	CF_LIST("selectable_by", struct ag_profile, selectable_by, check_selector, 0),
	CF_END
};

/*
 * With 'unknown: allow' the kernel sandbox holds whatever the line runs,
 * so the constructs the strict model refuses by default (functions, jobs
 * in the background, coproc) are allowed unless features: says deny.
 */
static void
unknown_allow_features(struct ag_profile *p, const struct ynode *f)
{
	if (f == NULL || cf_map_get(f, "functions") == NULL)
		p->features.functions = AG_FEATURE_ALLOW;
	if (f == NULL || cf_map_get(f, "background") == NULL)
		p->features.background = AG_FEATURE_ALLOW;
	if (f == NULL || cf_map_get(f, "coproc") == NULL)
		p->features.coproc = AG_FEATURE_ALLOW;
}

static int
profile_entry(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_config *cfg = c->cfg;
	struct ag_profile *p = &cfg->profiles[cfg->nprofiles];
	struct pctx pc;
	const struct ynode *u;

	(void)arg;
	if (!cf_name_ok(key, ""))
		return cf_err_node(c, k, "profile name '%s' may contain only letters, "
		    "digits, '_', '-' and '.' (at most %d)", cf_quote(c, key), MAX_NAME);
	cfg->nprofiles++;
	cf_pos(c, &p->pos, k);
	p->features.functions = AG_FEATURE_DENY;
	p->features.background = AG_FEATURE_DENY;
	p->features.coproc = AG_FEATURE_DENY;
	if ((p->name = strdup(key)) == NULL)
		return cf_oom(c, k);
	memset(&pc, 0, sizeof(pc));
	pc.p = p;
	snprintf(pc.what, sizeof(pc.what), "in profile '%s'", key);
	if (cf_walk_fields(c, v, key, pc.what, profile_fields, p, &pc) == -1)
		return -1;
	if (p->nallow == 0 && p->unknown == AG_UNKNOWN_DENY)
		return cf_err_node(c, k, "profile '%s' has no 'allow' list: name the "
		    "programs it may run (or set 'unknown: ask' with a validator)",
		    key);
	if (p->unknown == AG_UNKNOWN_ALLOW && p->tier != AG_TIER_DEVELOPER) {
		u = cf_map_get(v, "unknown");
		return cf_err_node(c, u ? u : k, "profile '%s' has 'unknown: allow' but "
		    "is not 'tier: developer': only the developer tier's kernel sandbox "
		    "holds a program no rule names (use 'unknown: deny' or 'ask')", key);
	}
	if (p->unknown == AG_UNKNOWN_ALLOW)
		unknown_allow_features(p, cf_map_get(v, "features"));
	if (p->paths_exec.n > 0 && p->tier != AG_TIER_DEVELOPER) {
		u = cf_map_get(v, "paths");
		u = u ? cf_map_get(u, "exec") : NULL;
		return cf_err_node(c, u ? u : k, "profile '%s' has 'paths.exec' but is "
		    "not 'tier: developer': only the developer tier runs built files",
		    key);
	}
	if (p->unknown == AG_UNKNOWN_ASK && p->validator == NULL) {
		u = cf_map_get(v, "unknown");
		return cf_err_node(c, u ? u : k, "profile '%s' has 'unknown: ask' "
		    "but no 'validator' to ask", key);
	}
	return 0;
}

static int
load_profiles(struct ctx *c, const struct ynode *v)
{
	size_t base = c->cfg->nprofiles;
	struct ag_profile *p;

	if (v->type == Y_MAP) {
		if ((p = grow(c, c->cfg->profiles, base, v->n / 2, sizeof(*p), v)) == NULL)
			return -1;
		c->cfg->profiles = p;
	}
	if (cf_walk_map(c, v, "profiles", "in profiles", "profile", NULL,
	    profile_entry, NULL) == -1)
		return -1;
	if (c->cfg->nprofiles == base)
		return cf_err_node(c, v, "'profiles' is empty: define at least one "
		    "profile");
	return 0;
}

/* ------------------------------------------------------------------ */
/* upstreams                                                           */

static int
upstream_profile(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_upstream *u = arg;

	(void)k;
	return get_profile_ref(c, v, key, REF_UPSTREAM, (size_t)(u - c->cfg->upstreams),
	    &u->profile_name);
}

static int
upstream_algos(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	return get_algos(c, v, key, &((struct ag_upstream *)arg)->hostkey_algorithms);
}

static int
upstream_port(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_upstream *u = arg;

	(void)k;
	return cf_get_count(c, v, key, 65535, &u->port);
}

static int
upstream_env_key(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_upstream *u = arg;
	size_t n = u->env_keys.n;

	if (!cf_env_name_ok(key))
		return cf_err_node(c, k, "'%s' in 'env' is not a valid environment "
		    "variable name", cf_quote(c, key));
	if (v->type != Y_SCALAR || cf_scalar_has_nul(v))
		return cf_err_node(c, v, "expected a string without NUL for 'env.%s'",
		    cf_quote(c, key));
	if ((u->env_keys.v[n] = strdup(key)) == NULL)
		return cf_oom(c, k);
	u->env_keys.n++;
	if ((u->env_vals.v[n] = strdup(cf_is_null(v) ? "" : v->s)) == NULL)
		return cf_oom(c, v);
	u->env_vals.n++;
	return 0;
}

static int
upstream_env(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_upstream *u = arg;

	(void)k;
	if (v->type != Y_MAP)
		return cf_err_node(c, v, "expected a mapping of NAME: value for '%s', got %s",
		    key, cf_kind_of(v));
	if ((u->env_keys.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL ||
	    (u->env_vals.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL)
		return cf_oom(c, v);
	return cf_walk_map(c, v, key, "in env", "variable", NULL, upstream_env_key, u);
}

static int
upstream_user(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	if (cf_want_scalar(c, v, key, "a user name") == -1 || check_user_name(c, v, key) == -1)
		return -1;
	return cf_dupstr(c, v, &((struct ag_upstream *)arg)->user);
}

static const struct cf_field upstream_fields[] = {
	CF_FIELD("host", CF_STRING, struct ag_upstream, host),
	CF_READ("port", upstream_port),
	CF_READ("user", upstream_user),
	CF_FIELD("key", CF_ABS_PATH, struct ag_upstream, key),
	CF_FIELD("known_hosts", CF_ABS_PATH, struct ag_upstream, known_hosts),
	CF_READ("hostkey_algorithms", upstream_algos),
	CF_FIELD("connect_timeout", CF_DURATION, struct ag_upstream, connect_timeout),
	CF_READ("profile", upstream_profile),
	CF_READ("env", upstream_env),
	CF_FIELD("verbatim", CF_BOOL, struct ag_upstream, verbatim),
	CF_END
};

static int
upstream_entry(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_config *cfg = c->cfg;
	struct ag_upstream *u = &cfg->upstreams[cfg->nupstreams];
	char what[MAX_NAME + 40];
	const char *need = NULL;
	const char *p;

	(void)arg;
	if (!cf_name_ok(key, "") || strcmp(key, AG_TARGET_LOCAL) == 0)
		return cf_err_node(c, k, "upstream name '%s' may contain only letters, "
		    "digits, '_', '-' and '.' (at most %d), and is not '%s'", cf_quote(c, key),
		    MAX_NAME, AG_TARGET_LOCAL);
	cfg->nupstreams++;
	cf_pos(c, &u->pos, k);
	u->port = 22;
	u->connect_timeout = 10;
	if ((u->name = strdup(key)) == NULL)
		return cf_oom(c, k);
	snprintf(what, sizeof(what), "in upstream '%s'", key);
	if (cf_walk_fields(c, v, key, what, upstream_fields, u, u) == -1)
		return -1;
	if (u->host == NULL)
		need = "host";
	else if (u->user == NULL)
		need = "user";
	else if (u->key == NULL)
		need = "key";
	else if (u->known_hosts == NULL)
		need = "known_hosts (the upstream's pinned host keys: there is no trust on first use)";
	else if (u->profile_name == NULL)
		need = "profile (what commands are judged against there)";
	if (need != NULL)
		return cf_err_node(c, v, "upstream '%s' has no '%s'", key, need);
	if (u->verbatim && u->env_keys.n > 0)
		return cf_err_node(c, cf_map_get(v, "env"), "upstream '%s': 'env' needs the "
		    "runner script, which 'verbatim: true' does not send", key);
	/* the host goes to libssh as it is: no options, no user@, no spaces */
	for (p = u->host; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == ':' || *p == '_'))
			return cf_err_node(c, cf_map_get(v, "host"), "'host' of upstream '%s' "
			    "must be a host name or address, got '%s'", key, cf_quote(c, u->host));
	if (u->host[0] == '-')
		return cf_err_node(c, cf_map_get(v, "host"), "'host' may not start with '-'");
	return 0;
}

static int
load_upstreams(struct ctx *c, const struct ynode *v)
{
	struct ag_upstream *u;

	if (v->type != Y_MAP)
		return cf_err_node(c, v, "expected a mapping of NAME: upstream for "
		    "'upstreams', got %s", cf_kind_of(v));
	if ((u = grow(c, c->cfg->upstreams, c->cfg->nupstreams, v->n / 2, sizeof(*u),
	    v)) == NULL)
		return -1;
	c->cfg->upstreams = u;
	return cf_walk_map(c, v, "upstreams", "in upstreams", "upstream", NULL,
	    upstream_entry, NULL);
}

/*
 * After every profile and upstream is known: targets name upstreams, and
 * a profile commands are judged against on another host is one the
 * gateway can apply there -- strict, since the developer tier's bound is
 * this host's kernel, which does not reach the upstream.
 */
static int
check_targets(struct ctx *c)
{
	struct ag_config *cfg = c->cfg;
	size_t i, j;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct ag_profile *p = &cfg->profiles[i];

		for (j = 0; j < p->targets.n; j++)
			if (strcmp(p->targets.v[j], AG_TARGET_LOCAL) != 0 &&
			    ag_config_upstream(cfg, p->targets.v[j]) == NULL)
				return cf_err_pos(c, &p->pos, "profile '%s' has "
				    "target '%s', which is neither 'local' nor an upstream",
				    p->name, cf_quote(c, p->targets.v[j]));
	}
	for (i = 0; i < cfg->nupstreams; i++) {
		struct ag_profile *p;

		if (cfg->upstreams[i].profile == NULL)
			continue;
		p = &cfg->profiles[cfg->upstreams[i].profile - cfg->profiles];
		if (p->tier != AG_TIER_STRICT)
			return cf_err_pos(c, &cfg->upstreams[i].pos,
			    "upstream '%s' uses profile '%s', which is tier developer: the "
			    "developer tier's boundary is this host's kernel, which does not "
			    "reach an upstream; give it a strict profile", cfg->upstreams[i].name,
			    p->name);
		p->is_target = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* top level                                                           */

static int
top_version(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)arg;
	(void)k;
	if (cf_want_scalar(c, v, key, "a number") == -1)
		return -1;
	if (strcmp(v->s, "1") != 0)
		return cf_err_node(c, v, "unsupported version '%s': this "
		    "agentgate reads 'version: 1'", cf_quote(c, v->s));
	c->cfg->version = 1;
	return 0;
}

static int
top_gateway(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)arg;
	(void)k;
	return cf_walk_fields(c, v, key, "in gateway", gateway_fields, &c->cfg->gw,
	    &c->cfg->gw);
}

static int
top_identities(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return load_identities(c, v);
}

static int
top_users(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return load_users(c, v);
}

static int
top_profiles(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return load_profiles(c, v);
}

static int
top_upstreams(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return load_upstreams(c, v);
}

static const struct cf_field top_fields[] = {
	CF_READ("version", top_version),
	CF_READ("upstreams", top_upstreams),
	CF_READ("gateway", top_gateway),
	CF_READ("identities", top_identities),
	CF_READ("users", top_users),
	CF_READ("profiles", top_profiles),
	CF_END
};

/* Every table, for ag_config_each_key() (the documentation test). */
static const struct {
	const char		*section;
	const struct cf_field	*fields;
} schema[] = {
	{ "", top_fields }, { "gateway", gateway_fields }, { "gateway.audit", audit_fields },
	{ "gateway.server", server_fields }, { "identities[]", identity_fields },
	{ "identities[].previous_token", prev_token_fields },
	{ "profiles.NAME", profile_fields }, { "rule", rule_fields },
	{ "features", feature_fields }, { "paths", paths_fields }, { "network", cf_network_fields },
	{ "gateway.egress", cf_egress_fields },
	{ "file_transfer", transfer_fields }, { "env", env_fields }, { "limits", limits_fields },
	{ "validator", validator_fields }, { "output", output_fields },
	{ "upstreams.NAME", upstream_fields },
};

/* The enums the tables store as an int. */
_Static_assert(sizeof(enum ag_sandbox_mode) == sizeof(int), "enum ag_sandbox_mode is an int");
_Static_assert(sizeof(enum ag_feature) == sizeof(int), "enum ag_feature is an int");
_Static_assert(sizeof(enum ag_transfer) == sizeof(int), "enum ag_transfer is an int");
_Static_assert(sizeof(enum ag_unknown) == sizeof(int), "enum ag_unknown is an int");
_Static_assert(sizeof(enum ag_tier) == sizeof(int), "enum ag_tier is an int");

void
ag_config_each_key(void (*fn)(const char *section, const char *key, void *arg), void *arg)
{
	size_t i, k;

	for (i = 0; i < sizeof(schema) / sizeof(schema[0]); i++)
		for (k = 0; schema[i].fields[k].key != NULL; k++)
			fn(schema[i].section, schema[i].fields[k].key, arg);
}

/*
 * A fragment (agentgate.d) adds identities, users, profiles and upstreams.
 * What is gateway-wide -- the version, the sandbox mode, the audit
 * destinations -- stays in the one file root edits: its last good copy
 * (lastgood.h) is then all a config_error record needs.
 */
static int
frag_forbidden(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)v;
	(void)arg;
	return cf_err_node(c, k, "'%s' may not be set in a fragment: the gateway-wide "
	    "settings belong in the main policy file, %s", key, c->cfg->path);
}

static const struct cf_field fragment_fields[] = {
	CF_READ("version", frag_forbidden),
	CF_READ("gateway", frag_forbidden),
	CF_READ("upstreams", top_upstreams),
	CF_READ("identities", top_identities),
	CF_READ("users", top_users),
	CF_READ("profiles", top_profiles),
	CF_END
};

/* ------------------------------------------------------------------ */
/* Names across files                                                  */

struct named {
	const char		*name;
	int			 grp;		/* users: a %group */
	const struct ag_pos	*pos;
	size_t			 order;		/* the order read */
};

static int
named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r != 0)
		return r;
	if (x->grp != y->grp)
		return x->grp - y->grp;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The first name (in the order read) defined again in a later file --
 * within one file the walk has refused it already -- as an error at the
 * repeat that says where the first is.
 */
static int
cross_dups(struct ctx *c, const char *noun, struct named *v, size_t n)
{
	size_t i, at = 0, best = SIZE_MAX;

	qsort(v, n, sizeof(*v), named_cmp);
	for (i = 1; i < n; i++)
		if (strcmp(v[i].name, v[i - 1].name) == 0 && v[i].grp == v[i - 1].grp &&
		    v[i].order < best) {
			best = v[i].order;
			at = i;
		}
	if (best == SIZE_MAX)
		return 0;
	c->name = v[at].pos->file;
	return cf_err_pos(c, v[at].pos, "duplicate %s '%s%s' (first defined at %s)", noun,
	    v[at].grp ? "%" : "", cf_quote(c, v[at].name), cf_pos_text(c, v[at - 1].pos));
}

static int
check_names(struct ctx *c)
{
	const struct ag_config *cfg = c->cfg;
	struct named *v;
	size_t i, max;
	int rc = -1;

	if (cfg->files.n < 2)
		return 0;
	max = cfg->nidentities;
	if (cfg->nusers > max)
		max = cfg->nusers;
	if (cfg->nprofiles > max)
		max = cfg->nprofiles;
	if (cfg->nupstreams > max)
		max = cfg->nupstreams;
	if ((v = calloc(max + 1, sizeof(*v))) == NULL)
		return ag_err_set(c->err, "out of memory");
	for (i = 0; i < cfg->nidentities; i++)
		v[i] = (struct named){ cfg->identities[i].name, 0, &cfg->identities[i].pos, i };
	if (cross_dups(c, "identity", v, cfg->nidentities) == -1)
		goto out;
	for (i = 0; i < cfg->nusers; i++)
		v[i] = (struct named){ cfg->users[i].name, cfg->users[i].is_group,
		    &cfg->users[i].pos, i };
	if (cross_dups(c, "user", v, cfg->nusers) == -1)
		goto out;
	for (i = 0; i < cfg->nprofiles; i++)
		v[i] = (struct named){ cfg->profiles[i].name, 0, &cfg->profiles[i].pos, i };
	if (cross_dups(c, "profile", v, cfg->nprofiles) == -1)
		goto out;
	for (i = 0; i < cfg->nupstreams; i++)
		v[i] = (struct named){ cfg->upstreams[i].name, 0, &cfg->upstreams[i].pos, i };
	if (cross_dups(c, "upstream", v, cfg->nupstreams) == -1)
		goto out;
	rc = 0;
out:
	free(v);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Parsing: the main file, then each fragment, then what joins them    */

/* name (the file about to be read) as the config's next in files; c->name
 * is then the config's copy, which positions point at. */
static int
file_begin(struct ctx *c, const char *name)
{
	struct ag_strlist *f = &c->cfg->files;
	char **nv;

	if ((nv = reallocarray(f->v, f->n + 2, sizeof(*nv))) == NULL)
		return ag_err_at(c->err, name, 0, 0, "out of memory");
	f->v = nv;
	if ((f->v[f->n] = strdup(name)) == NULL)
		return ag_err_at(c->err, name, 0, 0, "out of memory");
	c->name = f->v[f->n++];
	f->v[f->n] = NULL;
	return 0;
}

static struct ag_config *
cfg_new(struct ctx *c, const char *name, unsigned flags, struct ag_err *err)
{
	struct ag_config *cfg;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->err = err;
	c->flags = flags;
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL) {
		ag_err_at(err, name, 0, 0, "out of memory");
		return NULL;
	}
	c->cfg = cfg;
	cfg->gw.sandbox = AG_SANDBOX_REQUIRED;
	cfg->gw.audit.required = 1;
	cfg->gw.audit.min_free = AG_AUDIT_MIN_FREE_DEFAULT;
	if ((cfg->path = strdup(name)) == NULL ||
	    (cfg->gw.runner = strdup("/bin/bash")) == NULL ||
	    (cfg->gw.pam_service = strdup("agentgate")) == NULL) {
		ag_err_at(err, name, 0, 0, "out of memory");
		ag_config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* One file's text into the config: the main file, or a fragment. */
static int
cfg_add(struct ctx *c, const char *buf, size_t len, const char *name, int fragment)
{
	struct ynode *root = NULL;
	int rc = -1;

	if (file_begin(c, name) == -1)
		return -1;
	if (buf == NULL) {	/* libyaml asserts on a NULL input */
		buf = "";
		len = 0;
	}
	if (len > AG_CONFIG_MAX_BYTES)
		return ag_err_at(c->err, c->name, 0, 0, "file is larger than %d bytes",
		    AG_CONFIG_MAX_BYTES);
	if (cf_build_tree(c, buf, len, &root) == -1)
		return -1;
	if (root == NULL || cf_is_null(root)) {
		cf_ynode_free(root);
		if (fragment)	/* nothing to add, as an empty drop-in does */
			return 0;
		return ag_err_at(c->err, c->name, 1, 1, "the file is empty: it needs at "
		    "least 'version: 1' and 'profiles'");
	}
	if (root->type != Y_MAP) {
		cf_err_node(c, root, "expected a mapping at the top level, got %s",
		    cf_kind_of(root));
		goto out;
	}
	if (cf_walk_fields(c, root, "top level", "at the top level",
	    fragment ? fragment_fields : top_fields, c->cfg, NULL) == -1)
		goto out;
	if (!fragment) {
		if (c->cfg->version == 0) {
			cf_err_node(c, root, "'version' is missing: add 'version: 1' at "
			    "the top of the file");
			goto out;
		}
		c->root_line = root->line;
		c->root_col = root->col;
	}
	rc = 0;
out:
	cf_ynode_free(root);
	return rc;
}

/* What needs every file read: names, references, targets. */
static int
cfg_finish(struct ctx *c)
{
	struct ag_config *cfg = c->cfg;

	if (cfg->nprofiles == 0 && !(c->flags & AG_CONFIG_GATEWAY_ONLY))
		return ag_err_at(c->err, cfg->path, c->root_line, c->root_col,
		    "'profiles' is missing: define at least one profile%s",
		    cfg->files.n > 1 ? " (in the policy file or a fragment)" : "");
	if (check_names(c) == -1 || resolve_refs(c) == -1)
		return -1;
	/* a target may be an upstream of a fragment not read */
	if (!(c->flags & AG_CONFIG_GATEWAY_ONLY) && check_targets(c) == -1)
		return -1;
	return 0;
}

/* The config when ok, else NULL (freed). */
static struct ag_config *
cfg_done(struct ctx *c, int ok)
{
	free(c->refs);
	c->refs = NULL;
	if (ok)
		return c->cfg;
	ag_config_free(c->cfg);
	return NULL;
}

struct ag_config *
ag_config_parse(const char *buf, size_t len, const char *name, struct ag_err *err)
{
	struct ctx c;

	ag_err_clear(err);
	if (name == NULL)
		name = "agentgate.yaml";
	if (cfg_new(&c, name, 0, err) == NULL)
		return NULL;
	return cfg_done(&c, cfg_add(&c, buf, len, name, 0) == 0 && cfg_finish(&c) == 0);
}

/* ------------------------------------------------------------------ */
/* Permissions and loading                                             */

/* Root, or the owner of the running executable (so a build tree can hold
 * test configs), owns what the gateway trusts. */
static uid_t
trusted_uid(void)
{
	struct stat exe;

	return stat("/proc/self/exe", &exe) == 0 ? exe.st_uid : 0;
}

/*
 * The policy file and every directory above it belong to root or to the
 * owner of the running executable.
 */
static int
check_perms_internal(const char *path, struct ag_err *err, struct stat *filest,
    char **realp)
{
	return ag_safe_path(path, trusted_uid(), filest, realp, err);
}

int
ag_config_check_perms(const char *path, struct ag_err *err)
{
	struct stat st;
	char *real = NULL;
	int rc;

	ag_err_clear(err);
	rc = check_perms_internal(path, err, &st, &real);
	free(real);
	return rc;
}

/* The policy file or a fragment at path into sb (bounded), checked first
 * unless flags say not; *stp its stat. */
static int
read_file(const char *path, unsigned flags, struct ag_strbuf *sb, struct stat *stp,
    struct ag_err *err)
{
	struct stat checked, st;
	char *real = NULL, chunk[16384];
	ssize_t r;
	int fd = -1, rc = -1;

	memset(&st, 0, sizeof(st));
	if (!(flags & AG_CONFIG_NO_PERMCHECK) &&
	    check_perms_internal(path, err, &checked, &real) == -1)
		goto out;
	/* O_NONBLOCK: a FIFO swapped in must not hang us; regular files ignore it. */
	fd = open(real ? real : path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1) {
		ag_err_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		ag_err_at(err, path, 0, 0, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ag_err_at(err, path, 0, 0, "not a regular file");
		goto out;
	}
	/* What we read must be what we checked (no swap after the walk). */
	if (real != NULL && (st.st_dev != checked.st_dev ||
	    st.st_ino != checked.st_ino)) {
		ag_err_at(err, path, 0, 0, "the file changed while being checked; "
		    "try again");
		goto out;
	}
	if (st.st_size > AG_CONFIG_MAX_BYTES) {
		ag_err_at(err, path, 0, 0, "file is larger than %d bytes",
		    AG_CONFIG_MAX_BYTES);
		goto out;
	}
	/* Read to EOF into a bounded buffer: the file may grow after fstat. */
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			ag_err_at(err, path, 0, 0, "read error: %s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (ag_strbuf_append(sb, chunk, (size_t)r) == -1) {
			ag_err_at(err, path, 0, 0, sb->len + (size_t)r >
			    AG_CONFIG_MAX_BYTES ? "file is larger than %d bytes" :
			    "out of memory reading a file of up to %d bytes",
			    AG_CONFIG_MAX_BYTES);
			goto out;
		}
	}
	rc = 0;
out:
	/* the text holds token hashes: no copy left on the stack for what
	 * the gateway forks later (see ag_config_forget_tokens) */
	explicit_bzero(chunk, sizeof(chunk));
	if (fd != -1)
		close(fd);
	if (stp != NULL)
		*stp = st;
	free(real);
	return rc;
}

/*
 * A fragment's name: ends in ".yaml" and does not start with '.' -- so
 * editors' backups ("x.yaml~", ".x.yaml.swp"), dpkg's and config
 * management's leftovers ("x.yaml.dpkg-old", ".x.yaml.tmp") are not read.
 */
static int
fragment_name_ok(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The fragments in dir, by name in byte order, into names.  A directory
 * that is not there has none; one that is is checked as the policy file
 * is (each fragment is checked again when read).
 */
static int
fragment_list(const char *dir, unsigned flags, struct ag_strlist *names, int *present,
    struct ag_err *err)
{
	struct stat st, checked;
	struct dirent *de;
	char *real = NULL, **nv;
	DIR *d = NULL;
	int fd = -1, rc = -1;

	*present = 0;
	if (stat(dir, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		return ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
	}
	*present = 1;
	if (!(flags & AG_CONFIG_NO_PERMCHECK) &&
	    ag_safe_dir(dir, trusted_uid(), &checked, &real, err) == -1)
		return -1;
	fd = open(real ? real : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &st) == -1) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (real != NULL && (st.st_dev != checked.st_dev || st.st_ino != checked.st_ino)) {
		ag_err_at(err, dir, 0, 0, "the directory changed while being checked; "
		    "try again");
		goto out;
	}
	if ((d = fdopendir(fd)) == NULL) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	fd = -1;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!fragment_name_ok(de->d_name))
			continue;
		if (names->n == AG_CONFIG_MAX_FRAGMENTS) {
			ag_err_at(err, dir, 0, 0, "more than %d fragments",
			    AG_CONFIG_MAX_FRAGMENTS);
			goto out;
		}
		if ((nv = reallocarray(names->v, names->n + 2, sizeof(*nv))) == NULL)
			goto oom;
		names->v = nv;
		if ((names->v[names->n] = strdup(de->d_name)) == NULL)
			goto oom;
		names->v[++names->n] = NULL;
		errno = 0;
	}
	if (errno != 0) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (names->n > 1)
		qsort(names->v, names->n, sizeof(*names->v), name_cmp);
	rc = 0;
	goto out;
oom:
	ag_err_at(err, dir, 0, 0, "out of memory");
out:
	if (d != NULL)
		closedir(d);
	if (fd != -1)
		close(fd);
	free(real);
	return rc;
}

/* name among names (sorted), added in its place when it is not there. */
static int
add_candidate(struct ag_strlist *names, const char *name, const char *dir,
    struct ag_err *err)
{
	char **nv;
	size_t i;

	for (i = 0; i < names->n; i++)
		if (strcmp(names->v[i], name) == 0)
			return 0;
	if (names->n == AG_CONFIG_MAX_FRAGMENTS)
		return ag_err_at(err, dir, 0, 0, "more than %d fragments",
		    AG_CONFIG_MAX_FRAGMENTS);
	if ((nv = reallocarray(names->v, names->n + 2, sizeof(*nv))) == NULL)
		return ag_err_at(err, dir, 0, 0, "out of memory");
	names->v = nv;
	if ((nv[names->n] = strdup(name)) == NULL)
		return ag_err_at(err, dir, 0, 0, "out of memory");
	nv[++names->n] = NULL;
	qsort(names->v, names->n, sizeof(*names->v), name_cmp);
	return 0;
}

/* Read and add each fragment of the policy file path's agentgate.d. */
static int
add_fragments(struct ctx *c, const char *path)
{
	struct ag_strlist names = { NULL, 0 };
	struct ag_strbuf sb;
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], f[PATH_MAX];
	size_t i;
	int n, rc = -1;

	n = slash == NULL ? snprintf(dir, sizeof(dir), "%s", AG_CONFIG_FRAGDIR) :
	    snprintf(dir, sizeof(dir), "%.*s/%s", (int)(slash - path), path,
	    AG_CONFIG_FRAGDIR);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return ag_err_at(c->err, path, 0, 0, "path too long");
	if (fragment_list(dir, c->flags, &names, &c->cfg->has_fragdir, c->err) == -1)
		goto out;
	/* a candidate fragment not installed yet takes its place in the order */
	if (c->subst_frag != NULL && add_candidate(&names, c->subst_frag, dir, c->err) < 0)
		goto out;
	for (i = 0; i < names.n; i++) {
		n = snprintf(f, sizeof(f), "%s/%s", dir, names.v[i]);
		if (n < 0 || (size_t)n >= sizeof(f)) {
			ag_err_at(c->err, dir, 0, 0, "path too long");
			goto out;
		}
		if (c->subst_frag != NULL && strcmp(names.v[i], c->subst_frag) == 0) {
			if (cfg_add(c, c->subst_buf, c->subst_len, c->subst_shown, 1) == -1)
				goto out;
			continue;
		}
		ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
		if (read_file(f, c->flags, &sb, NULL, c->err) == -1 ||
		    (c->subst_name != NULL && strcmp(f, c->subst_name) == 0 ?
		    cfg_add(c, c->subst_buf, c->subst_len, f, 1) :
		    cfg_add(c, sb.data, sb.len, f, 1)) == -1) {
			ag_strbuf_free(&sb);
			goto out;
		}
		ag_strbuf_free(&sb);
	}
	rc = 0;
out:
	cf_strlist_free(&names);
	return rc;
}

/* ag_config_load(), leaving what it read of path in *sb (the caller's to
 * free) and the file's stat in *stp. */
struct subst {
	const char	*name;		/* a file whose text is buf (replacing) */
	const char	*frag, *shown;	/* a candidate fragment (load_fragment) */
	const char	*buf;
	size_t		 len;
};

static struct ag_config *
load(const char *path, unsigned flags, struct ag_strbuf *sb_out, struct stat *stp,
    const struct subst *subst, struct ag_err *err)
{
	static const struct subst none;
	struct ag_config *cfg = NULL;
	struct ag_strbuf sb;
	struct stat st;
	struct ctx c;
	int main_subst;

	if (subst == NULL)
		subst = &none;
	main_subst = subst->name != NULL && strcmp(subst->name, path) == 0;
	ag_err_clear(err);
	ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
	if (read_file(path, flags, &sb, &st, err) == 0 &&
	    cfg_new(&c, path, flags, err) != NULL) {
		c.subst_name = subst->name;
		c.subst_frag = subst->frag;
		c.subst_shown = subst->shown;
		c.subst_buf = subst->buf;
		c.subst_len = subst->len;
		cfg = cfg_done(&c, cfg_add(&c, main_subst ? subst->buf : sb.data,
		    main_subst ? subst->len : sb.len, path, 0) == 0 &&
		    ((flags & AG_CONFIG_GATEWAY_ONLY) || add_fragments(&c, path) == 0) &&
		    cfg_finish(&c) == 0);
	}
	if (stp != NULL)
		*stp = st;
	if (sb_out != NULL)
		*sb_out = sb;
	else
		ag_strbuf_free(&sb);
	return cfg;
}

struct ag_config *
ag_config_load(const char *path, unsigned flags, struct ag_err *err)
{
	return load(path, flags, NULL, NULL, NULL, err);
}

struct ag_config *
ag_config_load_replacing(const char *path, const char *file, const char *buf, size_t len,
    struct ag_err *err)
{
	struct subst s = { .name = file, .buf = buf, .len = len };

	return load(path, 0, NULL, NULL, &s, err);
}

struct ag_config *
ag_config_load_fragment(const char *path, const char *name, const char *shown,
    const char *buf, size_t len, struct ag_err *err)
{
	struct subst s = { .frag = name, .shown = shown, .buf = buf, .len = len };

	ag_err_clear(err);
	if (strchr(name, '/') != NULL || !fragment_name_ok(name))
		return ag_err_set(err, "'%s' is not a name the loader reads in %s: a "
		    "fragment's name ends in .yaml and does not start with '.'", name,
		    AG_CONFIG_FRAGDIR), NULL;
	return load(path, 0, NULL, NULL, &s, err);
}

struct ag_config *
ag_config_load_text(const char *path, struct ag_strbuf *text, struct stat *st,
    struct ag_err *err)
{
	return load(path, 0, text, st, NULL, err);
}

/* ------------------------------------------------------------------ */
/* Freeing and lookups                                                 */

static void
rules_free(struct ag_rule *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].command);
		cf_strlist_free(&r[i].subcommands);
		cf_strlist_free(&r[i].args);
		cf_strlist_free(&r[i].deny_args);
		cf_strlist_free(&r[i].allow_options);
		cf_strlist_free(&r[i].argv);
		free(r[i].name);
		free(r[i].id);
		free(r[i].label);
	}
	free(r);
}

static void
profile_free(struct ag_profile *p)
{
	free(p->name);
	rules_free(p->allow, p->nallow);
	rules_free(p->deny, p->ndeny);
	cf_strlist_free(&p->paths_read);
	cf_strlist_free(&p->paths_write);
	cf_strlist_free(&p->paths_protect);
	cf_strlist_free(&p->paths_exec);
	cf_strlist_free(&p->redact_patterns);
	cf_strlist_free(&p->targets);
	cf_strlist_free(&p->selectable_by);
	cf_network_free(p);
	cf_strlist_free(&p->env_deny);
	cf_strlist_free(&p->env_allow);
	/* env.set arrays may be allocated with no entries yet. */
	cf_strlist_free(&p->env_set_keys);
	cf_strlist_free(&p->env_set_vals);
	if (p->validator != NULL) {
		free(p->validator->name);
		free(p->validator->url);
		free(p->validator->model);
		free(p->validator->api_key_file);
		free(p->validator->prompt_file);
		free(p->validator);
	}
}

void
ag_config_forget_tokens(struct ag_config *cfg, const char *keep)
{
	size_t i;

	for (i = 0; i < cfg->nidentities; i++) {
		struct ag_identity *id = &cfg->identities[i];

		if (keep != NULL && strcmp(id->name, keep) == 0)
			continue;
		explicit_bzero(id->token_sha256, sizeof(id->token_sha256));
		explicit_bzero(&id->token_hash, sizeof(id->token_hash));
		explicit_bzero(&id->prev_token_hash, sizeof(id->prev_token_hash));
		id->has_token = id->has_token_hash = id->has_prev_token = 0;
	}
}

void
ag_config_free(struct ag_config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	free(cfg->path);
	cf_strlist_free(&cfg->files);
	free(cfg->gw.runner);
	free(cfg->gw.pam_service);
	free(cfg->gw.pam_confdir);
	free(cfg->gw.default_profile_name);
	free(cfg->gw.audit.file);
	free(cfg->gw.audit.group);
	free(cfg->gw.audit.http_url);
	free(cfg->gw.audit.spool);
	free(cfg->gw.recordings);
	cf_egress_free(&cfg->gw.egress);
	cf_strlist_free(&cfg->gw.server.listen);
	cf_strlist_free(&cfg->gw.server.host_keys);
	cf_strlist_free(&cfg->gw.server.allow_users);
	cf_strlist_free(&cfg->gw.server.allow_groups);
	cf_strlist_free(&cfg->gw.server.accept_env);
	free(cfg->gw.server.authorized_keys);
	free(cfg->gw.server.ciphers);
	free(cfg->gw.server.kex);
	free(cfg->gw.server.macs);
	free(cfg->gw.server.hostkey_algorithms);
	for (i = 0; i < cfg->nidentities; i++) {
		struct ag_identity *id = &cfg->identities[i];

		free(id->name);
		cf_strlist_free(&id->keys);
		explicit_bzero(id->token_sha256, sizeof(id->token_sha256));
		explicit_bzero(&id->token_hash, sizeof(id->token_hash));
		explicit_bzero(&id->prev_token_hash, sizeof(id->prev_token_hash));
		free(id->profile_name);
		free(id->from);
		cf_strlist_free(&id->accounts);
	}
	free(cfg->identities);
	for (i = 0; i < cfg->nusers; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].profile_name);
	}
	free(cfg->users);
	for (i = 0; i < cfg->nprofiles; i++)
		profile_free(&cfg->profiles[i]);
	free(cfg->profiles);
	for (i = 0; i < cfg->nupstreams; i++) {
		struct ag_upstream *u = &cfg->upstreams[i];

		free(u->name);
		free(u->host);
		free(u->user);
		free(u->key);
		free(u->known_hosts);
		free(u->hostkey_algorithms);
		free(u->profile_name);
		cf_strlist_free(&u->env_keys);
		cf_strlist_free(&u->env_vals);
	}
	free(cfg->upstreams);
	free(cfg);
}

const struct ag_upstream *
ag_config_upstream(const struct ag_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; cfg != NULL && i < cfg->nupstreams; i++)
		if (strcmp(cfg->upstreams[i].name, name) == 0)
			return &cfg->upstreams[i];
	return NULL;
}

const char *
ag_profile_targets_text(const struct ag_profile *p, int with_local, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; p != NULL && i < p->targets.n; i++) {
		int n;

		if (!with_local && strcmp(p->targets.v[i], AG_TARGET_LOCAL) == 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p->targets.v[i]);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0';
			break;
		}
		used += (size_t)n;
	}
	return buf;
}

int
ag_profile_tmp_persistent(const struct ag_profile *p)
{
	return p->paths_tmp == AG_TMP_PERSISTENT ||
	    (p->paths_tmp == AG_TMP_UNSET && p->tier == AG_TIER_DEVELOPER);
}

int
ag_profile_may_target(const struct ag_profile *p, const char *target)
{
	if (p->targets.n == 0)
		return strcmp(target, AG_TARGET_LOCAL) == 0;
	return ag_strlist_contains(&p->targets, target);
}

const struct ag_rule *
ag_profile_rule(const struct ag_profile *p, const char *id, size_t idlen)
{
	size_t i;

	for (i = 0; p != NULL && i < p->nallow + p->ndeny; i++) {
		const struct ag_rule *r = i < p->nallow ? &p->allow[i] : &p->deny[i - p->nallow];

		if (r->id != NULL && strlen(r->id) == idlen && memcmp(r->id, id, idlen) == 0)
			return r;
	}
	return NULL;
}

static const struct ag_rule *
config_rule(const struct ag_config *cfg, const char *id, size_t idlen)
{
	const struct ag_rule *r = NULL;
	size_t i;

	for (i = 0; cfg != NULL && r == NULL && i < cfg->nprofiles; i++)
		r = ag_profile_rule(&cfg->profiles[i], id, idlen);
	return r;
}

int
ag_config_rule_labels(const struct ag_config *cfg, const char *rules, char *buf, size_t len)
{
	struct ag_strbuf sb;
	const char *s, *e;
	int any = 0;

	if (rules == NULL || len == 0)
		return 0;
	ag_strbuf_init(&sb, 16384);
	for (s = rules; *s != '\0'; s = *e ? e + 1 : e) {
		const struct ag_rule *r;

		e = s + strcspn(s, ",");
		if (s != rules)
			ag_strbuf_addstr(&sb, ", ");
		if ((r = config_rule(cfg, s, (size_t)(e - s))) != NULL) {
			ag_strbuf_addstr(&sb, r->label);
			any = 1;
		} else
			ag_strbuf_append(&sb, s, (size_t)(e - s));
	}
	/* cut, rather than lose it, when the bound is reached */
	snprintf(buf, len, "%.*s", (int)sb.len, sb.data ? sb.data : "");
	ag_strbuf_free(&sb);
	return any;
}

const struct ag_profile *
ag_config_profile(const struct ag_config *cfg, const char *name)
{
	size_t i;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cfg->nprofiles; i++)
		if (strcmp(cfg->profiles[i].name, name) == 0)
			return &cfg->profiles[i];
	return NULL;
}

const struct ag_identity *
ag_config_identity(const struct ag_config *cfg, const char *name)
{
	size_t i;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cfg->nidentities; i++)
		if (cfg->identities[i].name != NULL &&
		    strcmp(cfg->identities[i].name, name) == 0)
			return &cfg->identities[i];
	return NULL;
}

/*
 * fnmatch(pattern, s, 0), with the two shapes most patterns have (a name,
 * a NAME_* prefix) decided without it: every variable a command sets or
 * captures is looked up in a few hundred patterns (envsan.c), and fnmatch
 * costs a hundred times a strcmp.  Without FNM_PATHNAME or FNM_PERIOD a
 * trailing '*' is any suffix, so the prefix test gives the same answer.
 */
int
ag_glob_match(const char *pattern, const char *s)
{
	size_t n;

	if (pattern == NULL || s == NULL)
		return 0;
	if (pattern[0] != s[0] && strchr("*?[\\", pattern[0]) == NULL)
		return 0;
	n = strcspn(pattern, "*?[\\");
	if (pattern[n] == '\0')
		return strcmp(pattern, s) == 0;
	if (pattern[n] == '*' && pattern[n + 1] == '\0')
		return strncmp(pattern, s, n) == 0;
	return fnmatch(pattern, s, 0) == 0;
}

int
ag_strlist_match(const struct ag_strlist *globs, const char *s)
{
	size_t i;

	if (globs == NULL)
		return 0;
	for (i = 0; i < globs->n; i++)
		if (ag_glob_match(globs->v[i], s))
			return 1;
	return 0;
}

int
ag_strlist_contains(const struct ag_strlist *l, const char *s)
{
	size_t i;

	if (l == NULL || s == NULL)
		return 0;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}
