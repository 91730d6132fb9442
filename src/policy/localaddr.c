/*
 * localaddr.c - is an address this host's own (localaddr.h): one route
 * lookup through rtnetlink, which an unprivileged process may make.
 */
#include "agconfig.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "policy/localaddr.h"

/* An answer the kernel gives at once; bounded all the same. */
#define ASK_TIMEOUT_S	2

/* The answer to our request: 1 local, 0 not, -1 none or malformed. */
static int
answer(const char *buf, size_t n, unsigned seq)
{
	size_t off = 0;

	/* the kernel's messages, each whole and aligned (NLMSG_OK without
	 * its signed length) */
	while (off + sizeof(struct nlmsghdr) <= n) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)(buf + off);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > n - off)
			return -1;
		off += NLMSG_ALIGN(h->nlmsg_len);
		if (h->nlmsg_seq != seq)
			continue;
		if (h->nlmsg_type == NLMSG_ERROR) {
			/* the payload follows the aligned header (NLMSG_DATA, without
			 * its cast of const away) */
			const struct nlmsgerr *e = (const void *)((const char *)h +
			    NLMSG_HDRLEN);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -1;
			/* no route at all: nothing here answers there either */
			return e->error == -ENETUNREACH || e->error == -EHOSTUNREACH ? 0 : -1;
		}
		if (h->nlmsg_type == RTM_NEWROUTE) {
			const struct rtmsg *r = (const void *)((const char *)h + NLMSG_HDRLEN);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*r)))
				return -1;
			return r->rtm_type == RTN_LOCAL || r->rtm_type == RTN_ANYCAST ||
			    r->rtm_type == RTN_BROADCAST;
		}
	}
	return -1;
}

int
ag_addr_is_local(int family, const unsigned char *addr)
{
	static unsigned seqs;
	struct {
		struct nlmsghdr	n;
		struct rtmsg	r;
		char		attrs[RTA_SPACE(16)];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval tv = { ASK_TIMEOUT_S, 0 };
	struct rtattr *rta;
	char buf[8192];
	size_t len = family == AF_INET ? 4 : 16;
	unsigned seq = __atomic_add_fetch(&seqs, 1, __ATOMIC_RELAXED);
	ssize_t got;
	int fd, rc;

	if (family != AF_INET && family != AF_INET6)
		return -1;
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(req.r));
	req.n.nlmsg_type = RTM_GETROUTE;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.n.nlmsg_seq = seq;
	req.r.rtm_family = (unsigned char)family;
	req.r.rtm_dst_len = (unsigned char)(len * 8);
	rta = (struct rtattr *)(void *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
	rta->rta_type = RTA_DST;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), addr, len);
	req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_SPACE(len);
	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel,
	    sizeof(kernel)) != (ssize_t)req.n.nlmsg_len) {
		close(fd);
		return -1;
	}
	do
		got = recv(fd, buf, sizeof(buf), 0);
	while (got < 0 && errno == EINTR);
	rc = got > 0 ? answer(buf, (size_t)got, seq) : -1;
	close(fd);
	return rc;
}
