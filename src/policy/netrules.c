/*
 * netrules.c - network.allow judged for one connection (netrules.h).
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/localaddr.h"
#include "policy/netrules.h"

int
ag_net_has_egress(const struct ag_profile *p)
{
	return p->has_network && p->nnet_allow > 0;
}

static void
lower(char *dst, size_t dstsz, const char *src)
{
	size_t i;

	for (i = 0; src[i] != '\0' && i + 1 < dstsz; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

/* a request's host against a rule's, both lower case */
static int
host_matches(const struct ag_net_rule *r, const char *host, int is_addr, int family,
    const unsigned char *addr)
{
	size_t hl, dl;

	if (r->is_addr || is_addr)
		return r->is_addr && is_addr && r->family == family &&
		    memcmp(r->addr, addr, family == AF_INET ? 4 : 16) == 0;
	if (strcmp(r->host, "*") == 0)
		return 1;
	if (r->host[0] == '*') {
		/* "*.d": one or more labels before ".d", never "d" itself */
		dl = strlen(r->host + 1);
		hl = strlen(host);
		return hl > dl && strcmp(host + hl - dl, r->host + 1) == 0;
	}
	return strcmp(r->host, host) == 0;
}

/* A request path a path rule may judge: no dot segments and no encoded
 * '.', '/' or '\\' that a server would decode into one. */
static int
path_plain(const char *path)
{
	const char *s;

	if (path[0] != '/')
		return 0;
	for (s = path; *s != '\0' && *s != '?'; s++) {
		if (*s == '#')
			return 0;
		if (*s == '%' && s[1] != '\0' && s[2] != '\0') {
			char h[3] = { s[1], s[2], '\0' };
			unsigned long c = strtoul(h, NULL, 16);

			if (c == '.' || c == '/' || c == '\\' || c == '%')
				return 0;
		}
		if (*s == '\\')
			return 0;
		/* dot segments, also with a ";parameter" that some servers drop */
		if (s[0] == '/' && s[1] == '.' &&
		    (s[2] == '/' || s[2] == '\0' || s[2] == '?' || s[2] == ';' ||
		    (s[2] == '.' && (s[3] == '/' || s[3] == '\0' || s[3] == '?' || s[3] == ';'))))
			return 0;
	}
	return 1;
}

static int
path_matches(const char *glob, const char *path)
{
	char p[4096];
	size_t n = strcspn(path, "?");

	if (n >= sizeof(p))
		return 0;
	memcpy(p, path, n);
	p[n] = '\0';
	return fnmatch(glob, p, 0) == 0;
}

int
ag_net_judge(const struct ag_profile *p, const char *host, int port, const char *method,
    const char *path, struct ag_net_verdict *v)
{
	char h[256];
	unsigned char addr[16];
	int family = 0, is_addr = 0, saw_host = 0, saw_tunnel_only = 0;
	unsigned mbit = method != NULL ? ag_net_method_bit(method, strlen(method)) : 0;
	size_t i;

	memset(v, 0, sizeof(*v));
	lower(h, sizeof(h), host);
	if (inet_pton(AF_INET, h, addr) == 1) {
		is_addr = 1;
		family = AF_INET;
	} else if (inet_pton(AF_INET6, h, addr) == 1) {
		is_addr = 1;
		family = AF_INET6;
	}
	if (!p->has_network || p->nnet_allow == 0) {
		snprintf(v->reason, sizeof(v->reason), "profile '%s' has no network",
		    p->name ? p->name : "?");
		return 0;
	}
	for (i = 0; i < p->nnet_allow; i++) {
		const struct ag_net_rule *r = &p->net_allow[i];

		if (!host_matches(r, h, is_addr, family, addr))
			continue;
		saw_host = 1;
		if (r->port != 0 && r->port != port)
			continue;
		if (r->methods != 0) {
			if (method == NULL) {
				saw_tunnel_only = 1;	/* a tunnel hides method and path */
				continue;
			}
			if ((r->methods & mbit) == 0)
				continue;
			if (r->path != NULL && (path == NULL || !path_plain(path) ||
			    !path_matches(r->path, path)))
				continue;
		}
		v->allow = 1;
		v->rule = r;
		snprintf(v->reason, sizeof(v->reason), "network.allow '%.200s'%s%s%s", r->text,
		    r->preset ? " (preset " : "", r->preset ? r->preset : "",
		    r->preset ? ")" : "");
		return 1;
	}
	v->host_listed = saw_host;
	if (saw_tunnel_only)
		snprintf(v->reason, sizeof(v->reason), "%.150s:%d is allowed only for plain HTTP "
		    "requests a rule's method and path match; a tunnel (CONNECT, SOCKS) hides "
		    "them", h, port);
	else if (method != NULL && saw_host)
		snprintf(v->reason, sizeof(v->reason), "no network.allow rule of profile '%s' "
		    "allows %.10s %.100s:%d%.*s", p->name ? p->name : "?", method, h, port,
		    path == NULL ? 0 : strcspn(path, "?") > 100 ? 100 : (int)strcspn(path, "?"),
		    path != NULL ? path : "");
	else if (saw_host)
		snprintf(v->reason, sizeof(v->reason), "no network.allow rule of profile '%s' "
		    "allows port %d of %.150s", p->name ? p->name : "?", port, h);
	else
		snprintf(v->reason, sizeof(v->reason), "%.150s is not in network.allow of profile "
		    "'%s'", h, p->name ? p->name : "?");
	return 0;
}

/* What an IPv4 address inside the host is, or NULL. */
static const char *
v4_class(const unsigned char *a)
{
	if (a[0] == 127)
		return "a loopback address";
	if (a[0] == 169 && a[1] == 254)
		return a[2] == 169 && a[3] == 254 ? "the cloud metadata service" :
		    "a link-local address";
	if (a[0] == 0)
		return "an unspecified address";
	if (a[0] >= 224)
		return "a multicast or reserved address";
	if (a[0] == 100 && a[1] == 100 && a[2] == 100 && a[3] == 200)
		return "the cloud metadata service";	/* Alibaba's */
	if (a[0] == 168 && a[1] == 63 && a[2] == 129 && a[3] == 16)
		return "the cloud metadata service";	/* Azure's WireServer */
	if (a[0] == 192 && a[1] == 0 && a[2] == 0 && a[3] == 192)
		return "the cloud metadata service";	/* Oracle's older one */
	return NULL;
}

/*
 * The IPv4 address a translated IPv6 address stands for: NAT64's
 * well-known prefix 64:ff9b::/96 (RFC 6052), 6to4's 2002::/16 (RFC 3056);
 * else NULL.
 */
static const unsigned char *
embedded_v4(const unsigned char *a)
{
	static const unsigned char wkp[12] = { 0x00, 0x64, 0xff, 0x9b };

	if (memcmp(a, wkp, 12) == 0)
		return a + 12;
	if (a[0] == 0x20 && a[1] == 0x02)
		return a + 2;
	return NULL;
}

static const char *
v6_class(const unsigned char *a)
{
	static const unsigned char loop[16] = { [15] = 1 }, any[16] = { 0 };
	static const unsigned char meta[16] = { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 };

	if (memcmp(a, loop, 16) == 0)
		return "a loopback address";
	if (memcmp(a, any, 16) == 0)
		return "an unspecified address";
	if (memcmp(a, meta, 16) == 0)
		return "the cloud metadata service";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "a link-local address";
	if (a[0] == 0xff)
		return "a multicast address";
	/* IPv4-mapped and -compatible: the kernel connects to the v4 inside */
	if ((memcmp(a, any, 10) == 0 && a[10] == 0xff && a[11] == 0xff) ||
	    (memcmp(a, any, 12) == 0))
		return v4_class(a + 12) ? v4_class(a + 12) : "an IPv4 address in IPv6 form";
	/* NAT64's well-known prefix and 6to4: a gateway outside carries them
	 * to the v4 inside, which is what they are (DNS64 gives IPv4-only
	 * hosts such as github.com these addresses) */
	if (embedded_v4(a) != NULL)
		return v4_class(embedded_v4(a));
	return NULL;
}

/* A private network's address (not the internet), or NULL. */
static const char *
private_class(int family, const unsigned char *a)
{
	if (family == AF_INET6) {
		if ((a[0] & 0xfe) == 0xfc)
			return "a private (unique local) address";
		if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
			return "a private (site-local) address";
		/* NAT64 for one network's own use (RFC 8215): any v4 behind it */
		if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b &&
		    a[4] == 0x00 && a[5] == 0x01)
			return "a local-use NAT64 address";
		if (embedded_v4(a) != NULL)
			return private_class(AF_INET, embedded_v4(a));
		return NULL;
	}
	if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168))
		return "a private network's address";
	if (a[0] == 100 && (a[1] & 0xc0) == 64)
		return "a carrier-grade NAT address";
	if (a[0] == 198 && (a[1] & 0xfe) == 18)
		return "a benchmarking network's address";
	return NULL;
}

const char *
ag_net_addr_check(const struct ag_profile *p, const struct sockaddr *sa, int port,
    const struct ag_net_rule *rule, int *pattern_only)
{
	const unsigned char *a;
	const char *cls;
	int family = sa->sa_family, own;
	size_t i, len;

	if (family == AF_INET) {
		a = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
		len = 4;
		cls = v4_class(a);
	} else if (family == AF_INET6) {
		a = (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		len = 16;
		cls = v6_class(a);
	} else
		return "not an internet address";
	/* asked now: the host's addresses change while a session runs */
	if (cls == NULL && (own = ag_addr_is_local(family, a)) != 0)
		cls = own > 0 ? "this host's own address" : "an address the kernel could not "
		    "say is not this host's own";
	if (pattern_only != NULL)
		*pattern_only = 0;
	if (cls == NULL && (rule == NULL || rule->host[0] == '*')) {
		cls = private_class(family, a) != NULL ? private_class(family, a) :
		    family == AF_INET6 && memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 ?
		    private_class(AF_INET, a + 12) : NULL;
		if (cls != NULL && pattern_only != NULL)
			*pattern_only = 1;
	}
	if (cls == NULL)
		return NULL;
	for (i = 0; p->has_network && i < p->nnet_allow; i++) {
		const struct ag_net_rule *r = &p->net_allow[i];

		if (r->is_addr && r->family == family && memcmp(r->addr, a, len) == 0 &&
		    (r->port == 0 || r->port == port))
			return NULL;
	}
	return cls;
}

const char *
ag_net_allowed_text(const struct ag_profile *p, char *buf, size_t len)
{
	size_t i, k, used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; p->has_network && i < p->nnet_allow; i++) {
		const struct ag_net_rule *r = &p->net_allow[i];
		char one[300];
		int n, dup = 0;

		if (r->is_addr && r->family == AF_INET6)
			n = snprintf(one, sizeof(one), "[%s]:%d", r->host, r->port);
		else if (r->methods != 0 || r->port != 443)
			n = snprintf(one, sizeof(one), "%s:%d", r->host, r->port);
		else
			n = snprintf(one, sizeof(one), "%s", r->host);
		if (n < 0 || (size_t)n >= sizeof(one))
			continue;
		/* the same host twice (a preset's HTTP and HTTPS rules): once */
		for (k = 0; k < i && !dup; k++)
			dup = strcmp(p->net_allow[k].host, r->host) == 0 &&
			    p->net_allow[k].port == r->port;
		if (dup)
			continue;
		if (used + (used ? 2 : 0) + (size_t)n + 5 >= len) {
			snprintf(buf + used, len - used, "%s...", used ? ", " : "");
			return buf;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", one);
	}
	if (used == 0)
		snprintf(buf, len, "nothing");
	return buf;
}
