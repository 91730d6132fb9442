/*
 * localaddr.h - whether an address is this host's own, asked of the
 * kernel at the moment it matters.
 */
#ifndef AG_LOCALADDR_H
#define AG_LOCALADDR_H

/*
 * Would a connection to addr (family AF_INET, 4 bytes, or AF_INET6, 16,
 * network byte order) be delivered to this host itself?  The kernel's
 * route for it (RTM_GETROUTE) is local (RTN_LOCAL: one of its addresses,
 * or a "local" route such as AnyIP), anycast or broadcast: 1.  Another
 * route, or none: 0.  -1 when the kernel could not be asked.
 *
 * Asked per connection, not read once: an address added while a session
 * runs (a container network, a VPN, an IPv6 temporary address) is the
 * host's from then on, and no list of them is cut at a bound.
 */
int	ag_addr_is_local(int family, const unsigned char *addr);

#endif
