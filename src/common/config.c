/*
 * config.c - the policy's schema walk (see config.h, agentgate.yaml(5)):
 * from the YAML tree config_yaml.c builds (each node with its line:col, so
 * that every message points at the node it is about) to struct ag_config.
 * Here: the top level and `gateway` (audit, server, egress's place), the
 * `upstreams`, profile references resolved last (a file may name a profile
 * before defining it), names checked across the main file and its
 * fragments, one load built file by file, the table of every key (the
 * documentation test), freeing, and the lookups the rest of the gateway
 * uses.  The sections with more to them have files of their own:
 *
 *   config_ident.c    identities and users
 *   config_profile.c  profiles: rules, paths, env, limits, the validator
 *   config_net.c      a profile's network, gateway.egress
 *   config_file.c     reading from disk: ownership, fragments, ag_config_load
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "common/config_int.h"

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

int
cf_get_profile_ref(struct ctx *c, const struct ynode *v, const char *key,
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

/* gateway.observers: a user, or %group */
static int
check_observer(struct ctx *c, const struct ynode *it, const char *key)
{
	if (!cf_name_ok(it->s[0] == '%' ? it->s + 1 : it->s, "$"))
		return cf_err_node(c, it, "'%s' in '%s' is not a user or %%group name",
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
	return cf_get_profile_ref(c, v, key, REF_DEFAULT, 0,
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
	CF_LIST("observers", struct ag_gateway, observers, check_observer, 0),
	CF_READ("server", gateway_server),
	CF_READ("egress", gateway_egress),
	CF_END
};

/*
 * Room for more entries after the n in *arr (identities, users, profiles,
 * upstreams: the main file's, then each fragment's), zeroed.  Nothing
 * points into these arrays until the references are resolved at the end.
 */
void *
cf_grow(struct ctx *c, void *arr, size_t n, size_t more, size_t size, const struct ynode *v)
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
/* upstreams                                                           */

static int
upstream_profile(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_upstream *u = arg;

	(void)k;
	return cf_get_profile_ref(c, v, key, REF_UPSTREAM, (size_t)(u - c->cfg->upstreams),
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
	if ((u = cf_grow(c, c->cfg->upstreams, c->cfg->nupstreams, v->n / 2, sizeof(*u),
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
	return cf_load_identities(c, v);
}

static int
top_users(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return cf_load_users(c, v);
}

static int
top_profiles(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)key;
	(void)k;
	(void)arg;
	return cf_load_profiles(c, v);
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

static const struct cf_field approvals_fields[] = {
	CF_LIST("approvers", struct ag_approvals_conf, approvers, cf_check_approver, 0),
	CF_FIELD("timeout", CF_DURATION, struct ag_approvals_conf, timeout),
	CF_END
};

static int
top_approvals(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)arg;
	(void)k;
	return cf_walk_fields(c, v, key, "in approvals", approvals_fields,
	    &c->cfg->approvals, &c->cfg->approvals);
}

static const struct cf_field top_fields[] = {
	CF_READ("version", top_version),
	CF_READ("upstreams", top_upstreams),
	CF_READ("gateway", top_gateway),
	CF_READ("identities", top_identities),
	CF_READ("users", top_users),
	CF_READ("profiles", top_profiles),
	CF_READ("approvals", top_approvals),
	CF_END
};

/* Every table, for ag_config_each_key() (the documentation test). */
static const struct {
	const char		*section;
	const struct cf_field	*fields;
} schema[] = {
	{ "", top_fields }, { "gateway", gateway_fields }, { "gateway.audit", audit_fields },
	{ "gateway.server", server_fields }, { "identities[]", cf_identity_fields },
	{ "identities[].previous_token", cf_prev_token_fields },
	{ "profiles.NAME", cf_profile_fields }, { "rule", cf_rule_fields },
	{ "features", cf_feature_fields }, { "paths", cf_paths_fields }, { "network", cf_network_fields },
	{ "gateway.egress", cf_egress_fields },
	{ "file_transfer", cf_transfer_fields }, { "env", cf_env_fields }, { "limits", cf_limits_fields },
	{ "validator", cf_validator_fields }, { "output", cf_output_fields },
	{ "upstreams.NAME", upstream_fields }, { "approvals", approvals_fields },
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

struct ag_config *
cf_cfg_new(struct ctx *c, const char *name, unsigned flags, struct ag_err *err)
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
int
cf_cfg_add(struct ctx *c, const char *buf, size_t len, const char *name, int fragment)
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

/*
 * A rule that waits for approval needs someone who may give it: the
 * profile's approvers or the policy's (fragments may add profiles, so
 * only once every file is read).
 */
static int
check_approvers(struct ctx *c)
{
	const struct ag_config *cfg = c->cfg;
	const struct ag_profile *p;
	size_t i, j;

	for (i = 0; i < cfg->nprofiles; i++) {
		p = &cfg->profiles[i];
		if (ag_profile_approvers(cfg, p)->n > 0)
			continue;
		if (p->unknown == AG_UNKNOWN_APPROVE)
			return cf_err_pos(c, &p->pos, "profile '%s' has 'unknown: approve' but "
			    "nobody may approve: add 'approvers:' to it or 'approvals: "
			    "{ approvers: [...] }' to the policy", p->name);
		for (j = 0; j < p->nallow + p->ndeny; j++) {
			const struct ag_rule *r = j < p->nallow ? &p->allow[j] :
			    &p->deny[j - p->nallow];

			if (r->approve)
				return cf_err_pos(c, &r->pos, "rule %s says 'decision: approve' "
				    "but nobody may approve: add 'approvers:' to profile '%s' "
				    "or 'approvals: { approvers: [...] }' to the policy",
				    r->id, p->name);
		}
	}
	return 0;
}

/* What needs every file read: names, references, targets. */
int
cf_cfg_finish(struct ctx *c)
{
	struct ag_config *cfg = c->cfg;

	if (cfg->nprofiles == 0 && !(c->flags & AG_CONFIG_GATEWAY_ONLY))
		return ag_err_at(c->err, cfg->path, c->root_line, c->root_col,
		    "'profiles' is missing: define at least one profile%s",
		    cfg->files.n > 1 ? " (in the policy file or a fragment)" : "");
	if (check_names(c) == -1 || resolve_refs(c) == -1 || check_approvers(c) == -1)
		return -1;
	/* a target may be an upstream of a fragment not read */
	if (!(c->flags & AG_CONFIG_GATEWAY_ONLY) && check_targets(c) == -1)
		return -1;
	return 0;
}

/* The config when ok, else NULL (freed). */
struct ag_config *
cf_cfg_done(struct ctx *c, int ok)
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
	if (cf_cfg_new(&c, name, 0, err) == NULL)
		return NULL;
	return cf_cfg_done(&c, cf_cfg_add(&c, buf, len, name, 0) == 0 && cf_cfg_finish(&c) == 0);
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
	cf_strlist_free(&p->approvers);
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
	cf_strlist_free(&cfg->approvals.approvers);
	free(cfg->gw.runner);
	free(cfg->gw.pam_service);
	free(cfg->gw.pam_confdir);
	free(cfg->gw.default_profile_name);
	free(cfg->gw.audit.file);
	free(cfg->gw.audit.group);
	free(cfg->gw.audit.http_url);
	free(cfg->gw.audit.spool);
	free(cfg->gw.recordings);
	cf_strlist_free(&cfg->gw.observers);
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
