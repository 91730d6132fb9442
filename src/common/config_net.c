/*
 * config_net.c - the policy's network keys: a profile's `network` (host
 * rules, presets, the older port lists) and `gateway.egress` (how the
 * session's egress proxy resolves and connects).  What a rule means when
 * a connection is judged is policy/netrules.c; the proxy that enforces it
 * is egress/.
 *
 * The presets live here, with the rest of the policy language: a preset
 * is a name for a list of rules, expanded when the file is loaded, so
 * `explain`, the proxy and the audit all see plain rules, each marked with
 * the preset it came from.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/config.h"
#include "common/config_int.h"

#define MAX_HOST	253

static const struct {
	const char		*name;
	const char *const	*rules;
} presets[] = {
	{ "npm", (const char *const[]){ "registry.npmjs.org", "registry.yarnpkg.com", NULL } },
	{ "pypi", (const char *const[]){ "pypi.org", "files.pythonhosted.org", NULL } },
	{ "crates", (const char *const[]){ "crates.io", "index.crates.io", "static.crates.io",
	    NULL } },
	{ "go", (const char *const[]){ "proxy.golang.org", "sum.golang.org", NULL } },
	{ "github", (const char *const[]){ "github.com", "api.github.com", "codeload.github.com",
	    "objects.githubusercontent.com", "raw.githubusercontent.com", NULL } },
	{ "debian", (const char *const[]){ "GET,HEAD deb.debian.org/**",
	    "GET,HEAD security.debian.org/**", "deb.debian.org", NULL } },
};

const char *const *
ag_net_preset_rules(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(presets[i].name, name) == 0)
			return presets[i].rules;
	return NULL;
}

const char *
ag_net_preset_names(void)
{
	return "npm, pypi, crates, go, github, debian";
}

static const struct {
	const char	*name;
	unsigned	 bit;
} methods[] = {
	{ "GET", AG_NET_M_GET }, { "HEAD", AG_NET_M_HEAD }, { "POST", AG_NET_M_POST },
	{ "PUT", AG_NET_M_PUT }, { "DELETE", AG_NET_M_DELETE }, { "PATCH", AG_NET_M_PATCH },
	{ "OPTIONS", AG_NET_M_OPTIONS },
};

unsigned
ag_net_method_bit(const char *m, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strlen(methods[i].name) == n && memcmp(methods[i].name, m, n) == 0)
			return methods[i].bit;
	return 0;
}

/* A host name or pattern: labels of letters, digits, '-' and '_', a
 * leading "*." at most, or "*" alone. */
static int
host_ok(const char *h)
{
	size_t i, n = strlen(h), label = 0;

	if (n == 0 || n > MAX_HOST)
		return 0;
	if (strcmp(h, "*") == 0)
		return 1;
	if (h[0] == '*') {
		if (h[1] != '.')
			return 0;
		h += 2;
	}
	for (i = 0; h[i] != '\0'; i++) {
		if (h[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '_')
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0;
}

/*
 * Split "HOST[:PORT]" or "[V6]:PORT" or a bare IPv6 address.  host gets
 * the host (brackets removed), *port the port or 0.  0, or -1 with why.
 */
int
ag_net_split_hostport(const char *s, char *host, size_t hostsz, int *port, const char **why)
{
	const char *colon = NULL, *end;
	size_t hl;

	*port = 0;
	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL) {
			*why = "a '[' without its ']'";
			return -1;
		}
		hl = (size_t)(end - s - 1);
		s++;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL) {
			*why = "text after ']' that is not ':PORT'";
			return -1;
		}
	} else {
		colon = strrchr(s, ':');
		/* two colons and no brackets: an IPv6 address without a port */
		if (colon != NULL && strchr(s, ':') != colon)
			colon = NULL;
		hl = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (hl == 0 || hl >= hostsz) {
		*why = hl == 0 ? "no host" : "a host name longer than 253 characters";
		return -1;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (colon != NULL) {
		char *e;
		unsigned long p = strtoul(colon + 1, &e, 10);

		if (colon[1] == '\0' || *e != '\0' || p == 0 || p > 65535) {
			*why = "a port that is not a number from 1 to 65535";
			return -1;
		}
		*port = (int)p;
	}
	return 0;
}

/*
 * Parse one rule's text into r (r->text, host and path allocated).  0, or
 * -1 with a message in why.
 */
static int
parse_rule(const char *text, struct ag_net_rule *r, char *why, size_t whysz)
{
	char host[MAX_HOST + 3], target[MAX_HOST + 4096];
	const char *sp = strchr(text, ' '), *t = text, *e, *slash;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (sp != NULL) {
		const char *m = text;

		while (m < sp) {
			const char *comma = memchr(m, ',', (size_t)(sp - m));
			size_t n = (size_t)((comma != NULL ? comma : sp) - m);
			unsigned bit = ag_net_method_bit(m, n);

			if (bit == 0) {
				snprintf(why, whysz, "'%.*s' is not an HTTP method this rule can "
				    "name (GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS)", (int)n, m);
				return -1;
			}
			r->methods |= bit;
			m += n + (comma != NULL);
		}
		t = sp + 1;
		while (*t == ' ')
			t++;
	}
	if (strlen(t) >= sizeof(target)) {
		snprintf(why, whysz, "the rule is too long");
		return -1;
	}
	snprintf(target, sizeof(target), "%s", t);
	/* a path only after the host (and port) of a method rule */
	slash = target[0] == '[' ? strchr(strchr(target, ']') ? strchr(target, ']') : target, '/') :
	    strchr(target, '/');
	if (slash != NULL) {
		if (r->methods == 0) {
			snprintf(why, whysz, "a path needs a method rule (for example \"GET,HEAD "
			    "%s\"): inside an HTTPS tunnel the proxy sees only the host", t);
			return -1;
		}
		if ((r->path = strdup(slash)) == NULL)
			goto oom;
		target[slash - target] = '\0';
	}
	if (ag_net_split_hostport(target, host, sizeof(host), &r->port, &e) < 0) {
		snprintf(why, whysz, "%s", e);
		return -1;
	}
	for (i = 0; host[i] != '\0'; i++)
		host[i] = (char)tolower((unsigned char)host[i]);
	if (inet_pton(AF_INET, host, r->addr) == 1) {
		r->is_addr = 1;
		r->family = AF_INET;
	} else if (inet_pton(AF_INET6, host, r->addr) == 1) {
		r->is_addr = 1;
		r->family = AF_INET6;
	} else if (!host_ok(host)) {
		snprintf(why, whysz, "'%.100s' is not a host name, '*.domain', '*' or an address",
		    host);
		return -1;
	}
	if (r->port == 0)
		r->port = r->methods != 0 ? 80 : 443;
	if ((r->host = strdup(host)) == NULL || (r->text = strdup(text)) == NULL)
		goto oom;
	return 0;
oom:
	snprintf(why, whysz, "out of memory");
	return -1;
}

static void
rule_free(struct ag_net_rule *r)
{
	free(r->text);
	free(r->host);
	free(r->path);
}

static int
push_rule(struct ctx *c, const struct ynode *at, struct ag_profile *p, const char *text,
    const char *preset)
{
	struct ag_net_rule *n, r;
	char why[256];

	if (parse_rule(text, &r, why, sizeof(why)) < 0) {
		rule_free(&r);
		return cf_err_node(c, at, "network rule '%s': %s", cf_quote(c, text), why);
	}
	if ((n = realloc(p->net_allow, (p->nnet_allow + 1) * sizeof(*n))) == NULL) {
		rule_free(&r);
		return cf_oom(c, at);
	}
	r.preset = preset;
	cf_pos(c, &r.pos, at);
	n[p->nnet_allow++] = r;
	p->net_allow = n;
	return 0;
}

static int
network_connect(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;

	(void)k;
	return cf_get_ports(c, v, key, &p->net_connect, &p->nnet_connect);
}

static int
network_bind(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;

	(void)k;
	return cf_get_ports(c, v, key, &p->net_bind, &p->nnet_bind);
}

static int
network_allow(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	size_t i;

	(void)k;
	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of host rules for '%s', got %s", key,
		    cf_kind_of(v));
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->kid[i];

		if (cf_want_scalar(c, it, key, "a host rule") == -1)
			return -1;
		if (strlen(it->s) != it->len)
			return cf_err_node(c, it, "network rule contains a NUL character");
		if (push_rule(c, it, p, it->s, NULL) == -1)
			return -1;
	}
	return 0;
}

static int
network_presets(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	size_t i;

	(void)k;
	if (cf_get_strlist(c, v, key, &p->net_presets, NULL, 1) == -1)
		return -1;
	for (i = 0; i < p->net_presets.n; i++)
		if (ag_net_preset_rules(p->net_presets.v[i]) == NULL)
			return cf_err_node(c, v->kid[i], "unknown network preset '%s' (the "
			    "presets are: %s)", cf_quote(c, p->net_presets.v[i]),
			    ag_net_preset_names());
	return 0;
}

/* network.unix: a socket's path, or its directory's; no pattern (the
 * sandbox matches the file itself, sockconnect.h) */
static int
check_unix_path(struct ctx *c, const struct ynode *it, const char *key)
{
	if (cf_check_policy_path(c, it, key) == -1)
		return -1;
	if (strpbrk(it->s, "*?[") != NULL)
		return cf_err_node(c, it, "'%s' in '%s' is a pattern; name the socket, or the "
		    "directory that holds it", cf_quote(c, it->s), key);
	return 0;
}

const struct cf_field cf_network_fields[] = {
	CF_READ("allow", network_allow),
	CF_READ("presets", network_presets),
	CF_READ("connect", network_connect),
	CF_READ("bind", network_bind),
	CF_LIST("unix", struct ag_profile, net_unix, check_unix_path, 1),
	CF_END
};

int
cf_network_finish(struct ctx *c, struct ag_profile *p, const struct ynode *at)
{
	size_t i, k;
	char text[32];

	for (i = 0; i < p->net_presets.n; i++) {
		const char *const *rules = ag_net_preset_rules(p->net_presets.v[i]);

		for (k = 0; rules[k] != NULL; k++)
			if (push_rule(c, at, p, rules[k], p->net_presets.v[i]) == -1)
				return -1;
	}
	/* the older port list: any host name on that port, through the proxy */
	for (i = 0; i < p->nnet_connect; i++) {
		snprintf(text, sizeof(text), "*:%d", p->net_connect[i]);
		if (push_rule(c, at, p, text, NULL) == -1)
			return -1;
	}
	return 0;
}

void
cf_network_free(struct ag_profile *p)
{
	size_t i;

	for (i = 0; i < p->nnet_allow; i++)
		rule_free(&p->net_allow[i]);
	free(p->net_allow);
	cf_strlist_free(&p->net_presets);
	cf_strlist_free(&p->net_unix);
	free(p->net_connect);
	free(p->net_bind);
}

/* ---- gateway.egress ------------------------------------------------------- */

static int
egress_resolve(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_egress_conf *e = arg;
	size_t i;

	(void)k;
	if (v->type != Y_MAP)
		return cf_err_node(c, v, "expected a mapping of HOST[:PORT]: ADDRESS[:PORT] for "
		    "'%s', got %s", key, cf_kind_of(v));
	if ((e->resolve = calloc(v->n / 2 + 1, sizeof(*e->resolve))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *kn = v->kid[i], *vn = v->kid[i + 1];
		struct ag_egress_map *m = &e->resolve[e->nresolve];
		char host[MAX_HOST + 3], addr[64];
		unsigned char buf[16];
		const char *why;
		size_t j;

		if (cf_want_scalar(c, vn, key, "an address") == -1)
			return -1;
		if (ag_net_split_hostport(kn->s, host, sizeof(host), &m->port, &why) < 0)
			return cf_err_node(c, kn, "'%s' in '%s': %s", cf_quote(c, kn->s), key, why);
		for (j = 0; host[j] != '\0'; j++)
			host[j] = (char)tolower((unsigned char)host[j]);
		if (!host_ok(host) || host[0] == '*')
			return cf_err_node(c, kn, "'%s' in '%s' is not a host name", cf_quote(c,
			    kn->s), key);
		if (ag_net_split_hostport(vn->s, addr, sizeof(addr), &m->to_port, &why) < 0)
			return cf_err_node(c, vn, "'%s' in '%s': %s", cf_quote(c, vn->s), key, why);
		if (inet_pton(AF_INET, addr, buf) != 1 && inet_pton(AF_INET6, addr, buf) != 1)
			return cf_err_node(c, vn, "'%s' in '%s' is not an IPv4 or IPv6 address",
			    cf_quote(c, addr), key);
		if ((m->host = strdup(host)) == NULL || (m->addr = strdup(addr)) == NULL)
			return cf_oom(c, vn);
		e->nresolve++;
	}
	return 0;
}

const struct cf_field cf_egress_fields[] = {
	CF_READ("resolve", egress_resolve),
	CF_FIELD("connect_timeout", CF_DURATION, struct ag_egress_conf, connect_timeout),
	CF_END
};

void
cf_egress_free(struct ag_egress_conf *e)
{
	size_t i;

	for (i = 0; i < e->nresolve; i++) {
		free(e->resolve[i].host);
		free(e->resolve[i].addr);
	}
	free(e->resolve);
	e->resolve = NULL;
	e->nresolve = 0;
}
