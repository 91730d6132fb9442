/*
 * netrules.h - a profile's network.allow judged for one connection: the
 * egress proxy (egress/) asks before it resolves and again for each
 * address it would connect to; `agentgate explain --host` asks the same.
 *
 * A tunnel (HTTP CONNECT, SOCKS5) is judged on its host and port; a plain
 * HTTP request through the proxy also on its method and path.  A rule
 * names a host ("github.com"), a domain's subdomains ("*.pypi.org"), any
 * name ("*"), or an address; a name never matches an address rule and an
 * address literal never matches a name rule.  After resolution, an address
 * inside the host (loopback, link-local and the cloud metadata service,
 * unspecified, multicast, or one of this host's own) is refused unless an
 * address rule names it: a name an agent controls must not lead the proxy
 * back into the machine.
 */
#ifndef AG_NETRULES_H
#define AG_NETRULES_H

#include <stddef.h>
#include <sys/socket.h>

#include "common/config.h"

struct ag_net_verdict {
	int			  allow;
	const struct ag_net_rule *rule;		/* that allowed it; NULL when refused */
	char			  reason[320];	/* why, for the audit and the agent */
	int			  host_listed;	/* refused, though a rule names the host */
};

/*
 * Judge host (a name, any case, or an address literal without brackets)
 * and port; method and path for a plain HTTP request, NULL for a tunnel.
 * Fills v; returns v->allow.
 */
int	ag_net_judge(const struct ag_profile *p, const char *host, int port, const char *method,
	    const char *path, struct ag_net_verdict *v);

/*
 * May the proxy connect to sa, which a name resolved to under rule (the
 * one that allowed the name)?  NULL when it may; else what the address is
 * ("a loopback address", "the cloud metadata service", "this host's own
 * address" -- asked of the kernel each time, localaddr.h --, ...).
 * Inside the host: refused unless an address rule of p names it on port.
 * A private network (RFC 1918, CGNAT, benchmarking, IPv6 unique local and
 * site-local, local-use NAT64): refused when rule is a pattern ("*", "*.domain"),
 * which a name an agent controls could satisfy, and allowed when it names
 * the host exactly.
 * *pattern_only (when not NULL): 1 when the address is refused only
 * because rule is a pattern (a private network's), else 0.
 */
const char *ag_net_addr_check(const struct ag_profile *p, const struct sockaddr *sa, int port,
	    const struct ag_net_rule *rule, int *pattern_only);

/*
 * The profile's rules as the agent is told them: "registry.npmjs.org,
 * github.com, ..." (hosts, with ":PORT" where not 443), cut to fit len
 * with ", ..." at a whole rule.  "nothing" when there are none.
 */
const char *ag_net_allowed_text(const struct ag_profile *p, char *buf, size_t len);

/* 1 when p reaches anything through the proxy (has rules). */
int	ag_net_has_egress(const struct ag_profile *p);

#endif
