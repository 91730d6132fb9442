/*
 * config_ident.c - who may log in: `identities` (keys with their type
 * checked, token hashes and a rotation's previous_token, `from` CIDRs,
 * expiry dates) and the `users` map from account or %group to profile.
 * Profile names are resolved later (cf_get_profile_ref), once every file
 * is read.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "common/config_int.h"
#include "common/sshkey.h"

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

const struct cf_field cf_prev_token_fields[] = {
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
	if (cf_walk_fields(c, v, key, "in previous_token", cf_prev_token_fields, id, arg) == -1)
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
	return cf_get_profile_ref(c, v, key, REF_IDENTITY, ic->idx, &ic->id->profile_name);
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
int
cf_check_who(struct ctx *c, const struct ynode *it, const char *key, const char *what)
{
	const char *n = it->s[0] == '%' ? it->s + 1 : it->s;

	if (!cf_name_ok(n, "$"))
		return cf_err_node(c, it, "'%s' in '%s' is not %s or %%group name "
		    "(letters, digits, '_', '-', '.', '$')", cf_quote(c, it->s), key, what);
	return 0;
}

/* approvers: accounts and %groups (root always may, unnamed) */
int
cf_check_approver(struct ctx *c, const struct ynode *it, const char *key)
{
	return cf_check_who(c, it, key, "an account");
}

static int
check_account(struct ctx *c, const struct ynode *it, const char *key)
{
	return cf_check_who(c, it, key, "an account");
}

const struct cf_field cf_identity_fields[] = {
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

int
cf_load_identities(struct ctx *c, const struct ynode *v)
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
	if ((ids = cf_grow(c, cfg->identities, base, v->n, sizeof(*ids), v)) == NULL)
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
		if (cf_walk_fields(c, it, "identities", what, cf_identity_fields, ic.id,
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
	return cf_get_profile_ref(c, v, key, REF_USER, cfg->nusers - 1,
	    &u->profile_name);
}

int
cf_load_users(struct ctx *c, const struct ynode *v)
{
	struct ag_usermap *u;

	if (v->type == Y_MAP) {
		if ((u = cf_grow(c, c->cfg->users, c->cfg->nusers, v->n / 2, sizeof(*u),
		    v)) == NULL)
			return -1;
		c->cfg->users = u;
	}
	return cf_walk_map(c, v, "users", "in users", "user", NULL, user_key, NULL);
}

