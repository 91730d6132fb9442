/*
 * netprobe.c - an adversary's ways out of a session's network (issue 32),
 * for tests/integration/egress_adversary.sh.
 *
 * The agent uploads this file into ~/work and builds it with `cc` through
 * the gateway, as an attacker would; run anywhere else it shows that each
 * probe does reach when nothing confines it.  Each probe prints one line
 *
 *	NAME=reached[:DETAIL]		a connection or a reply got through
 *	NAME=refused:REASON		an errno name (ECONNREFUSED), a stage
 *					and errno (socket:EACCES), a proxy's
 *					status (403), or why (timeout, closed)
 *
 * and lines starting with '#' are information (ports, counts), not probes.
 * Every probe is bounded in time (timeout=MS each, default 2000).
 *
 * usage: netprobe KEY=VALUE... GROUP...
 *   port=P        the outside TCP listener (banner "agentgate-outside")
 *   uport=U       the outside UDP listener (echoes each datagram)
 *   host4=A host6=A   the host's own non-loopback addresses (optional)
 *   proxy=A:P     the proxy (default 127.0.0.1:3128); proxy6=A6 its IPv6
 *                 address (::1), same port
 *   allowed=H:P   a host the rules allow through the proxy (benign probes)
 *   http_host=H   a host with a plain-HTTP rule for GET and HEAD of /pub/ (port 80)
 *   dns=A,A,...   resolvers to ask directly ("resolv": /etc/resolv.conf's)
 *   dns_port=N    (default 53)
 *   vsock_cid=N vsock_port=N   connect there (without: socket(2) only;
 *                 CID 2 is the hypervisor, which on a VM is not ours to poke)
 *   abstract=NAME an abstract Unix socket listening outside
 *   unixpath=PATH[,PATH...] Unix sockets listening outside, by path
 *   wildnames=N,N names for the wild group (only names /etc/hosts resolves:
 *                 any other would make the proxy ask DNS)
 *   netns=INODE   the inode of /proc/self/ns/net outside
 *   prefix=S      put before every name
 * groups: tcp tfo uring raw packet vsock udp mptcp dns unix netns steal
 *         families http socks wild meta autobind flood; "all" is every group
 *         but wild, meta, autobind and flood (those two wait for a line on
 *         stdin; flood=N holds N idle connections to the proxy).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <netinet/udp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/vm_sockets.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#ifndef AF_MCTP
#define AF_MCTP 45
#endif

static struct {
	int port, uport;
	const char *host4, *host6;
	const char *proxy, *proxy6;
	const char *allowed, *http_host;
	const char *dns;
	int dns_port;
	unsigned vsock_cid, vsock_port;
	const char *abstract, *unixpath, *netns, *wildnames;
	int vsock_connect, flood;
	int timeout_ms;
	const char *prefix;
} O = {
	.proxy = "127.0.0.1:3128", .dns_port = 53, .vsock_cid = 1,
	.vsock_port = 9999, .timeout_ms = 2000, .prefix = "",
};

/* ---- output ------------------------------------------------------------- */

static const char *
ename(int e)
{
	const char *n = strerrorname_np(e);

	return n != NULL ? n : "E?";
}

static void
report(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s%s=", O.prefix, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
info(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("#%s%s=", O.prefix, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ---- addresses ---------------------------------------------------------- */

struct target {
	const char *tag;		/* lo4 host4 lo6 host6 */
	struct sockaddr_storage ss;
	socklen_t len;
};

static int
mkaddr(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

/* "A:P", "[A6]:P": address and port */
static int
split_hostport(const char *s, char *host, size_t hsz, int *port)
{
	const char *c;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');
		if (e == NULL || e[1] != ':' || (size_t)(e - s - 1) >= hsz)
			return -1;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		*port = atoi(e + 2);
		return 0;
	}
	if ((c = strrchr(s, ':')) == NULL || (size_t)(c - s) >= hsz)
		return -1;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	*port = atoi(c + 1);
	return 0;
}

/* the targets lo4, host4, lo6, host6 (those known) on port */
static int
targets(int port, struct target *t)
{
	const char *ip[4] = { "127.0.0.1", O.host4, "::1", O.host6 };
	const char *tag[4] = { "lo4", "host4", "lo6", "host6" };
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		if (ip[i] == NULL || ip[i][0] == '\0')
			continue;
		if (mkaddr(ip[i], port, &t[n].ss, &t[n].len) < 0)
			continue;
		t[n].tag = tag[i];
		n++;
	}
	return n;
}

static int
fam(const struct target *t)
{
	return t->ss.ss_family;
}

/* ---- timed socket helpers ----------------------------------------------- */

static void
nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* a connect in progress finished: 0 or its errno */
static int
wait_connected(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r, err = 0;
	socklen_t l = sizeof(err);

	do
		r = poll(&p, 1, O.timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return ETIMEDOUT;
	if (r < 0)
		return errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		return errno;
	return err;
}

static int
tconnect(int fd, const struct sockaddr *sa, socklen_t len)
{
	nonblock(fd);
	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	return wait_connected(fd);
}

/* read what arrives within ms: bytes, 0 at EOF, -errno (-ETIMEDOUT) */
static ssize_t
tread(int fd, void *buf, size_t n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;
	int pr;

	do
		pr = poll(&p, 1, ms);
	while (pr < 0 && errno == EINTR);
	if (pr == 0)
		return -ETIMEDOUT;
	if (pr < 0)
		return -errno;
	r = recv(fd, buf, n, MSG_DONTWAIT);
	return r < 0 ? -errno : r;
}

static int
twrite(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		ssize_t w;

		if (poll(&pf, 1, O.timeout_ms) <= 0)
			return ETIMEDOUT;
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* after a connection: what the far end says first decides the detail */
static void
report_connected(const char *name, int fd)
{
	char b[64];
	ssize_t r = tread(fd, b, sizeof(b) - 1, O.timeout_ms);

	if (r > 0) {
		b[r] = '\0';
		b[strcspn(b, "\r\n")] = '\0';
		report(name, "reached:%s", b);
	} else {
		report(name, "reached:connected");
	}
}

/* ---- plain TCP, MPTCP ----------------------------------------------------- */

static void
probe_stream(const char *what, int proto)
{
	struct target t[4];
	int i, n = targets(O.port, t);

	for (i = 0; i < n; i++) {
		char name[64];
		int fd, e;

		snprintf(name, sizeof(name), "%s_%s", what, t[i].tag);
		if ((fd = socket(fam(&t[i]), SOCK_STREAM, proto)) < 0) {
			report(name, "refused:socket:%s", ename(errno));
			continue;
		}
		if ((e = tconnect(fd, (struct sockaddr *)&t[i].ss, t[i].len)) != 0)
			report(name, "refused:%s", ename(e));
		else
			report_connected(name, fd);
		close(fd);
	}
}

/* ---- TCP Fast Open: the connect made inside sendto/sendmsg --------------- */

static void
probe_tfo(void)
{
	static const char data[] = "tfo-probe\n";
	struct target t[4];
	int i, how, n = targets(O.port, t);

	for (how = 0; how < 2; how++) {
		for (i = 0; i < n; i++) {
			char name[64];
			int fd, e;
			ssize_t r;

			snprintf(name, sizeof(name), "tfo_%s_%s", how ? "sendmsg" : "sendto", t[i].tag);
			if ((fd = socket(fam(&t[i]), SOCK_STREAM, 0)) < 0) {
				report(name, "refused:socket:%s", ename(errno));
				continue;
			}
			nonblock(fd);
			if (how) {
				struct iovec iov = { .iov_base = (void *)data, .iov_len = sizeof(data) - 1 };
				struct msghdr m = { .msg_name = &t[i].ss, .msg_namelen = t[i].len,
				    .msg_iov = &iov, .msg_iovlen = 1 };
				r = sendmsg(fd, &m, MSG_FASTOPEN | MSG_NOSIGNAL);
			} else {
				r = sendto(fd, data, sizeof(data) - 1, MSG_FASTOPEN | MSG_NOSIGNAL,
				    (struct sockaddr *)&t[i].ss, t[i].len);
			}
			if (r < 0 && errno != EINPROGRESS) {
				report(name, "refused:%s", ename(errno));
				close(fd);
				continue;
			}
			if ((e = wait_connected(fd)) != 0)
				report(name, "refused:%s", ename(e));
			else
				report_connected(name, fd);
			close(fd);
		}
	}
}

/* ---- listen() on a socket never bound: the kernel picks the port --------- */

static void
probe_autobind(void)
{
	int fds[2] = { -1, -1 }, fams[2] = { AF_INET, AF_INET6 }, ports[2] = { 0, 0 };
	char got[2][80] = { "", "" };
	const char *names[2] = { "autobind4", "autobind6" };
	struct timespec t0, now;
	int i;

	for (i = 0; i < 2; i++) {
		struct sockaddr_storage ss;
		socklen_t l = sizeof(ss);

		if ((fds[i] = socket(fams[i], SOCK_STREAM, 0)) < 0) {
			report(names[i], "refused:socket:%s", ename(errno));
			continue;
		}
		if (listen(fds[i], 8) < 0) {
			report(names[i], "refused:listen:%s", ename(errno));
			close(fds[i]);
			fds[i] = -1;
			continue;
		}
		getsockname(fds[i], (struct sockaddr *)&ss, &l);
		ports[i] = ntohs(fams[i] == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
		    ((struct sockaddr_in6 *)&ss)->sin6_port);
		nonblock(fds[i]);
		info(names[i], "%d", ports[i]);
	}
	/* the test connects from outside now, then sends a line */
	info("autobind", "waiting");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p[3] = { { .fd = 0, .events = POLLIN },
		    { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };
		long left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = 60000 - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(p, 3, (int)left) <= 0)
			break;
		for (i = 0; i < 2; i++) {
			struct sockaddr_storage ss;
			socklen_t l = sizeof(ss);
			char a[INET6_ADDRSTRLEN] = "?";
			int c;

			if (!(p[i + 1].revents & POLLIN) ||
			    (c = accept(fds[i], (struct sockaddr *)&ss, &l)) < 0)
				continue;
			if (ss.ss_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
			else
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
			(void)!write(c, "agentgate-probe\n", 16);
			close(c);
			snprintf(got[i], sizeof(got[i]), "%s", a);
		}
		if (p[0].revents) {
			char b[64];
			(void)!read(0, b, sizeof(b));
			break;
		}
	}
	for (i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (got[i][0] != '\0')
			report(names[i], "reached:from-%s", got[i]);
		else
			report(names[i], "refused:no-connection");
		close(fds[i]);
	}
}

/* ---- io_uring, raw system calls ------------------------------------------ */

struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int
uring_init(struct uring *u)
{
	struct io_uring_params p;
	size_t sl, cl;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	if ((u->fd = (int)syscall(__NR_io_uring_setup, 8, &p)) < 0)
		return errno;
	sl = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cl = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sl = cl = sl > cl ? sl : cl;
	sq = mmap(NULL, sl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return errno;
	cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq :
	    mmap(NULL, cl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
	if (cq == MAP_FAILED)
		return errno;
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (u->sqes == MAP_FAILED)
		return errno;
	u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned *)(sq + p.sq_off.array);
	u->cq_head = (unsigned *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* submit n SQEs (linked by the caller), wait for all n; res[user_data] */
static int
uring_run(struct uring *u, const struct io_uring_sqe *sqe, unsigned n, int *res)
{
	unsigned tail = *u->sq_tail, i, done = 0;

	for (i = 0; i < n; i++) {
		unsigned idx = (tail + i) & *u->sq_mask;
		u->sqes[idx] = sqe[i];
		u->sq_array[idx] = idx;
	}
	__atomic_store_n(u->sq_tail, tail + n, __ATOMIC_RELEASE);
	while (done < n) {
		unsigned head, ctail;

		if (syscall(__NR_io_uring_enter, u->fd, done == 0 ? n : 0, n - done,
		    IORING_ENTER_GETEVENTS, NULL, 0) < 0 && errno != EINTR)
			return errno;
		head = *u->cq_head;
		ctail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);
		while (head != ctail) {
			struct io_uring_cqe *c = &u->cqes[head & *u->cq_mask];
			if (c->user_data < n)
				res[c->user_data] = c->res;
			head++;
			done++;
		}
		__atomic_store_n(u->cq_head, head, __ATOMIC_RELEASE);
	}
	return 0;
}

struct ktimespec { long long tv_sec; long long tv_nsec; };

/* request_key(2): its upcall (/sbin/request-key) runs as root in the
 * host's namespaces, and keyutils' dns_resolver resolves the name given */
static void
probe_keys(void)
{
	long k = syscall(SYS_request_key, "dns_resolver", "agentgate-probe.invalid", "x", 0);
	int e = errno;

	if (k < 0 && (e == ENOSYS || e == EPERM || e == EACCES))
		report("keyring_request_key", "refused:%s", ename(e));
	else
		report("keyring_request_key", "reached:%s", k < 0 ? ename(e) : "a-key");
	k = syscall(SYS_add_key, "user", "agentgate-probe", "x", 1, -3 /* session keyring */);
	e = errno;
	if (k < 0 && (e == ENOSYS || e == EPERM || e == EACCES))
		report("keyring_add_key", "refused:%s", ename(e));
	else
		report("keyring_add_key", "reached:%s", k < 0 ? ename(e) : "a-key");
}

static void
probe_uring(void)
{
	static const struct { const char *name; int type, proto; } kinds[] = {
		{ "udp", SOCK_DGRAM, 0 }, { "tcp", SOCK_STREAM, 0 },
		{ "mptcp", SOCK_STREAM, IPPROTO_MPTCP },
	};
	struct uring u = { .fd = -1 };
	struct target t[4];
	int k, i, n, e = uring_init(&u);

	if (e != 0) {
		report("uring_setup", "refused:%s", ename(e));
		return;
	}
	report("uring_setup", "reached:io_uring_setup-works");
	for (k = 0; k < 3; k++) {
		n = targets(kinds[k].type == SOCK_DGRAM ? O.uport : O.port, t);
		for (i = 0; i < n; i++) {
			struct io_uring_sqe q[2];
			struct ktimespec ts = { O.timeout_ms / 1000, (O.timeout_ms % 1000) * 1000000LL };
			char name[64];
			int res[2] = { -EIO, -EIO }, fd;

			snprintf(name, sizeof(name), "uring_%s_%s", kinds[k].name, t[i].tag);
			memset(q, 0, sizeof(q));
			q[0].opcode = IORING_OP_SOCKET;
			q[0].fd = fam(&t[i]);
			q[0].off = (unsigned)kinds[k].type;
			q[0].len = (unsigned)kinds[k].proto;
			if ((e = uring_run(&u, q, 1, res)) != 0) {
				report(name, "refused:io_uring_enter:%s", ename(e));
				continue;
			}
			if (res[0] < 0) {
				report(name, "refused:socket:%s", ename(-res[0]));
				continue;
			}
			fd = res[0];
			memset(q, 0, sizeof(q));
			if (kinds[k].type == SOCK_STREAM) {
				q[0].opcode = IORING_OP_CONNECT;
				q[0].fd = fd;
				q[0].addr = (uintptr_t)&t[i].ss;
				q[0].off = t[i].len;
				q[0].flags = IOSQE_IO_LINK;
				q[0].user_data = 0;
			} else {
				static char payload[] = "uring-probe\n";
				static struct iovec iov;
				static struct msghdr m;
				iov.iov_base = payload;
				iov.iov_len = sizeof(payload) - 1;
				memset(&m, 0, sizeof(m));
				m.msg_name = &t[i].ss;
				m.msg_namelen = t[i].len;
				m.msg_iov = &iov;
				m.msg_iovlen = 1;
				q[0].opcode = IORING_OP_SENDMSG;
				q[0].fd = fd;
				q[0].addr = (uintptr_t)&m;
				q[0].len = 1;
				q[0].flags = IOSQE_IO_LINK;
				q[0].user_data = 0;
			}
			q[1].opcode = IORING_OP_LINK_TIMEOUT;
			q[1].fd = -1;
			q[1].addr = (uintptr_t)&ts;
			q[1].len = 1;
			q[1].user_data = 1;
			if ((e = uring_run(&u, q, 2, res)) != 0) {
				report(name, "refused:io_uring_enter:%s", ename(e));
			} else if (res[0] < 0) {
				report(name, "refused:%s:%s", kinds[k].type == SOCK_STREAM ?
				    "connect" : "sendmsg", ename(res[0] == -ECANCELED ? ETIMEDOUT : -res[0]));
			} else if (kinds[k].type == SOCK_STREAM) {
				report_connected(name, fd);
			} else {
				char b[64];
				ssize_t r = tread(fd, b, sizeof(b), O.timeout_ms);
				if (r > 0)
					report(name, "reached:echo");
				else
					report(name, "refused:%s", r == 0 ? "no-reply" : ename((int)-r));
			}
			close(fd);
		}
	}
	close(u.fd);
}

/* ---- UDP ----------------------------------------------------------------- */

static void
probe_udp(void)
{
	struct target t[4];
	int i, n = targets(O.uport, t);

	for (i = 0; i < n; i++) {
		char name[64], b[64];
		int fd;
		ssize_t r;

		snprintf(name, sizeof(name), "udp_%s", t[i].tag);
		if ((fd = socket(fam(&t[i]), SOCK_DGRAM, 0)) < 0) {
			report(name, "refused:socket:%s", ename(errno));
			continue;
		}
		if (sendto(fd, "udp-probe\n", 10, 0, (struct sockaddr *)&t[i].ss, t[i].len) < 0) {
			report(name, "refused:%s", ename(errno));
		} else if ((r = tread(fd, b, sizeof(b), O.timeout_ms)) > 0) {
			report(name, "reached:echo");
		} else {
			report(name, "refused:%s", r == 0 ? "no-reply" : ename((int)-r));
		}
		close(fd);
	}
}

/* ---- raw sockets ---------------------------------------------------------- */

static uint16_t
csum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (; n > 1; n -= 2, b += 2)
		s += (uint32_t)(b[0] << 8 | b[1]);
	if (n)
		s += (uint32_t)(b[0] << 8);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

/* an ICMP echo to each target; reached when its reply comes back */
static void
probe_icmp(const char *what, int type, int proto, int v6)
{
	struct target t[4];
	int i, n = targets(0, t);

	for (i = 0; i < n; i++) {
		struct icmphdr h;
		char name[64];
		int fd;
		uint16_t id = (uint16_t)(getpid() ^ (i << 8));
		struct timespec t0, now;

		if ((fam(&t[i]) == AF_INET6) != v6)
			continue;
		snprintf(name, sizeof(name), "%s_%s", what, t[i].tag);
		if ((fd = socket(v6 ? AF_INET6 : AF_INET, type, proto)) < 0) {
			report(name, "refused:socket:%s", ename(errno));
			continue;
		}
		memset(&h, 0, sizeof(h));
		h.type = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
		h.un.echo.id = htons(id);
		h.un.echo.sequence = htons(1);
		if (!v6)
			h.checksum = csum(&h, sizeof(h));
		if (sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&t[i].ss, t[i].len) < 0) {
			report(name, "refused:%s", ename(errno));
			close(fd);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			uint8_t b[256];
			ssize_t r;
			const struct icmphdr *rh;
			long left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left = O.timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 +
			    (now.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0) {
				report(name, "refused:ETIMEDOUT");
				break;
			}
			if ((r = tread(fd, b, sizeof(b), (int)left)) <= 0) {
				report(name, "refused:%s", r == 0 ? "closed" : ename((int)-r));
				break;
			}
			/* a raw IPv4 socket reads the IP header; ping and v6 sockets do not */
			if (!v6 && type == SOCK_RAW && r >= 20)
				rh = (const struct icmphdr *)(b + (b[0] & 0xf) * 4);
			else
				rh = (const struct icmphdr *)b;
			if ((const uint8_t *)rh + sizeof(*rh) > b + r)
				continue;
			if (rh->type == (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY) &&
			    (type != SOCK_RAW || rh->un.echo.id == htons(id))) {
				report(name, "reached:echo-reply");
				break;
			}
		}
		close(fd);
	}
}

/* a UDP socket on ADDR:0 to receive the echo of a hand-made datagram */
static int
echo_sink(const char *addr, int *port)
{
	struct sockaddr_in s = { .sin_family = AF_INET };
	socklen_t l = sizeof(s);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, addr, &s.sin_addr);
	if (bind(fd, (struct sockaddr *)&s, sizeof(s)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&s, &l) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(s.sin_port);
	return fd;
}

static void
probe_raw_udp(void)
{
	struct target t[4];
	int i, n = targets(O.uport, t);

	for (i = 0; i < n; i++) {
		struct { struct udphdr u; char d[10]; } pkt;
		char name[64], b[64];
		int fd, sink, sport;
		ssize_t r;

		if (fam(&t[i]) != AF_INET)
			continue;
		snprintf(name, sizeof(name), "raw_udp_%s", t[i].tag);
		if ((fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP)) < 0) {
			report(name, "refused:socket:%s", ename(errno));
			continue;
		}
		if ((sink = echo_sink("0.0.0.0", &sport)) < 0) {
			report(name, "refused:sink:%s", ename(errno));
			close(fd);
			continue;
		}
		memcpy(pkt.d, "raw-probe\n", 10);
		pkt.u.source = htons((uint16_t)sport);
		pkt.u.dest = htons((uint16_t)O.uport);
		pkt.u.len = htons(sizeof(pkt));
		pkt.u.check = 0;		/* none: allowed over IPv4 */
		if (sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&t[i].ss, t[i].len) < 0)
			report(name, "refused:%s", ename(errno));
		else if ((r = tread(sink, b, sizeof(b), O.timeout_ms)) > 0)
			report(name, "reached:echo");
		else
			report(name, "refused:%s", r == 0 ? "no-reply" : ename((int)-r));
		close(sink);
		close(fd);
	}
}

/* AF_PACKET: a whole frame, written onto the loopback interface */
static void
probe_packet(void)
{
	struct {
		struct ether_header e;
		struct iphdr ip;
		struct udphdr u;
		char d[13];
	} __attribute__((packed)) f;
	struct sockaddr_ll ll;
	struct ifaddrs *ifa, *a;
	char list[256] = "", b[64];
	int fd, sink, sport, others = 0;
	ssize_t r;

	/* which interfaces the namespace has */
	if (getifaddrs(&ifa) == 0) {
		for (a = ifa; a != NULL; a = a->ifa_next) {
			if (strstr(list, a->ifa_name) != NULL)
				continue;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			    list[0] ? "," : "", a->ifa_name);
			if (strcmp(a->ifa_name, "lo") != 0 && (a->ifa_flags & IFF_UP))
				others++;
		}
		freeifaddrs(ifa);
	}
	if (others)
		report("ifaces", "reached:%s", list);
	else
		report("ifaces", "refused:only-%s", list[0] ? list : "none");

	if ((fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))) < 0) {
		report("packet_lo4", "refused:socket:%s", ename(errno));
		return;
	}
	if ((sink = echo_sink("127.0.0.1", &sport)) < 0) {
		report("packet_lo4", "refused:sink:%s", ename(errno));
		close(fd);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.e.ether_type = htons(ETHERTYPE_IP);
	f.ip.version = 4;
	f.ip.ihl = 5;
	f.ip.ttl = 64;
	f.ip.protocol = IPPROTO_UDP;
	f.ip.tot_len = htons(sizeof(f) - sizeof(f.e));
	f.ip.saddr = htonl(INADDR_LOOPBACK);
	f.ip.daddr = htonl(INADDR_LOOPBACK);
	f.ip.check = csum(&f.ip, sizeof(f.ip));
	f.u.source = htons((uint16_t)sport);
	f.u.dest = htons((uint16_t)O.uport);
	f.u.len = htons(sizeof(f.u) + sizeof(f.d));
	memcpy(f.d, "packet-probe\n", sizeof(f.d));
	memset(&ll, 0, sizeof(ll));
	ll.sll_family = AF_PACKET;
	ll.sll_ifindex = (int)if_nametoindex("lo");
	ll.sll_protocol = htons(ETH_P_IP);
	ll.sll_halen = ETH_ALEN;
	if (sendto(fd, &f, sizeof(f), 0, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		report("packet_lo4", "refused:%s", ename(errno));
	else if ((r = tread(sink, b, sizeof(b), O.timeout_ms)) > 0)
		report("packet_lo4", "reached:echo");
	else
		report("packet_lo4", "refused:%s", r == 0 ? "no-reply" : ename((int)-r));
	close(sink);
	close(fd);
}

/* ---- AF_VSOCK: not a network namespace's to hold ------------------------- */

static void
probe_vsock(void)
{
	static const struct { const char *name; int type; } k[] = {
		{ "vsock_stream", SOCK_STREAM }, { "vsock_seqpacket", SOCK_SEQPACKET },
		{ "vsock_dgram", SOCK_DGRAM },
	};
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = O.vsock_cid,
	    .svm_port = O.vsock_port };
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		int fd, e;

		if ((fd = socket(AF_VSOCK, k[i].type, 0)) < 0) {
			report(k[i].name, "refused:socket:%s", ename(errno));
			continue;
		}
		if (!O.vsock_connect) {
			report(k[i].name, "reached:socket-created");
		} else if (k[i].type == SOCK_DGRAM) {
			if (sendto(fd, "vsock-probe\n", 12, 0, (struct sockaddr *)&vm, sizeof(vm)) < 0)
				report(k[i].name, "refused:sendto:%s", ename(errno));
			else
				report(k[i].name, "reached:sent-to-cid-%u", O.vsock_cid);
		} else if ((e = tconnect(fd, (struct sockaddr *)&vm, sizeof(vm))) != 0) {
			report(k[i].name, "refused:connect:%s", ename(e));
		} else {
			report(k[i].name, "reached:cid-%u", O.vsock_cid);
		}
		close(fd);
	}
}

/* ---- DNS straight to a resolver ------------------------------------------ */

static size_t
dns_query(uint8_t *q, uint16_t id)
{
	static const char qname[] = "\x16" "agentgate-egress-probe" "\x07" "invalid";
	size_t n = 0;

	q[n++] = (uint8_t)(id >> 8);
	q[n++] = (uint8_t)id;
	q[n++] = 0x01;			/* RD */
	q[n++] = 0x00;
	q[n++] = 0; q[n++] = 1;		/* QDCOUNT */
	memset(q + n, 0, 6);
	n += 6;
	memcpy(q + n, qname, sizeof(qname));	/* with its final zero */
	n += sizeof(qname);
	q[n++] = 0; q[n++] = 1;		/* A */
	q[n++] = 0; q[n++] = 1;		/* IN */
	return n;
}

static void
dns_one(const char *server)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t q[64], b[512];
	char name[80], tag[48];
	size_t qn, i;
	uint16_t id = (uint16_t)(getpid() * 31 + 7);
	int fd, e;
	ssize_t r;

	for (i = 0; server[i] != '\0' && i < sizeof(tag) - 1; i++)
		tag[i] = isalnum((unsigned char)server[i]) ? server[i] : '_';
	tag[i] = '\0';
	if (mkaddr(server, O.dns_port, &ss, &len) < 0)
		return;
	qn = dns_query(q, id);

	snprintf(name, sizeof(name), "dns_udp_%s", tag);
	if ((fd = socket(ss.ss_family, SOCK_DGRAM, 0)) < 0) {
		report(name, "refused:socket:%s", ename(errno));
	} else {
		if (sendto(fd, q, qn, 0, (struct sockaddr *)&ss, len) < 0)
			report(name, "refused:%s", ename(errno));
		else if ((r = tread(fd, b, sizeof(b), O.timeout_ms)) >= 2 &&
		    b[0] == q[0] && b[1] == q[1])
			report(name, "reached:answer");
		else
			report(name, "refused:%s", r >= 0 ? "no-answer" : ename((int)-r));
		close(fd);
	}

	snprintf(name, sizeof(name), "dns_tcp_%s", tag);
	if ((fd = socket(ss.ss_family, SOCK_STREAM, 0)) < 0) {
		report(name, "refused:socket:%s", ename(errno));
		return;
	}
	if ((e = tconnect(fd, (struct sockaddr *)&ss, len)) != 0)
		report(name, "refused:%s", ename(e));
	else
		report(name, "reached:connected");
	close(fd);
}

static void
probe_dns(void)
{
	char *list, *tok, *save = NULL;

	if (O.dns == NULL)
		return;
	list = strdup(O.dns);
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "resolv") == 0) {
			FILE *f = fopen("/etc/resolv.conf", "r");
			char line[256], ns[128];

			if (f == NULL) {
				info("dns_resolv", "unreadable:%s", ename(errno));
				continue;
			}
			while (fgets(line, sizeof(line), f) != NULL)
				if (sscanf(line, " nameserver %127s", ns) == 1)
					dns_one(ns);
			fclose(f);
		} else {
			dns_one(tok);
		}
	}
	free(list);
}

/* ---- an abstract Unix socket outside ------------------------------------- */

static void
probe_unix(void)
{
	struct sockaddr_un s = { .sun_family = AF_UNIX };
	size_t n;
	int fd, e;

	if (O.abstract == NULL)
		return;
	n = strlen(O.abstract);
	if (n > sizeof(s.sun_path) - 1)
		n = sizeof(s.sun_path) - 1;
	memcpy(s.sun_path + 1, O.abstract, n);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) {
		report("unix_abstract", "refused:socket:%s", ename(errno));
		return;
	}
	if ((e = tconnect(fd, (struct sockaddr *)&s,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n))) != 0)
		report("unix_abstract", "refused:%s", ename(e));
	else
		report_connected("unix_abstract", fd);
	close(fd);
}

/*
 * A Unix socket by path: the network namespace does not hold these, the
 * file system does.  Then the host's resolvers, whose sockets would send
 * a name the agent chose out as a DNS query (information only: which of
 * them a host runs varies).
 */
static void
probe_unixpath(void)
{
	static const char *const resolvers[] = {
		"/run/systemd/resolve/io.systemd.Resolve", "/run/nscd/socket",
		"/var/run/nscd/socket", "/run/dbus/system_bus_socket", NULL,
	};
	struct sockaddr_un s = { .sun_family = AF_UNIX };
	const char *p;
	int fd, e, i;

	/* unixpath=P1,P2,...: unix_path, unix_path_2, ... */
	for (p = O.unixpath, i = 1; p != NULL && *p != '\0'; i++) {
		size_t n = strcspn(p, ",");
		char name[32];

		snprintf(name, sizeof(name), i == 1 ? "unix_path" : "unix_path_%d", i);
		snprintf(s.sun_path, sizeof(s.sun_path), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) {
			report(name, "refused:socket:%s", ename(errno));
		} else {
			if ((e = tconnect(fd, (struct sockaddr *)&s, sizeof(s))) != 0)
				report(name, "refused:%s", ename(e));
			else
				report_connected(name, fd);
			close(fd);
		}
	}
	for (i = 0; resolvers[i] != NULL; i++) {
		const char *b = strrchr(resolvers[i], '/') + 1;
		char name[64];

		if (access(resolvers[i], F_OK) < 0)
			continue;
		snprintf(name, sizeof(name), "unix_host_%s", b);
		snprintf(s.sun_path, sizeof(s.sun_path), "%s", resolvers[i]);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
			continue;
		e = tconnect(fd, (struct sockaddr *)&s, sizeof(s));
		info(name, e ? "refused:%s" : "reached:%s", e ? ename(e) : resolvers[i]);
		close(fd);
	}
}

/* ---- the namespace itself, and sockets of other namespaces --------------- */

static void
probe_netns(void)
{
	struct stat st;

	if (O.netns == NULL)
		return;
	if (stat("/proc/self/ns/net", &st) < 0) {
		report("netns", "refused:stat:%s", ename(errno));
		return;
	}
	if (strtoull(O.netns, NULL, 10) == (unsigned long long)st.st_ino)
		report("netns", "reached:shared-host-namespace");
	else
		report("netns", "refused:private");
}

static uint64_t
own_cookie(void)
{
	uint64_t c = 0;
	socklen_t l = sizeof(c);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd >= 0) {
		getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l);
		close(fd);
	}
	return c;
}

/* fd an INET socket of another network namespace? */
static int
foreign_inet(int fd, uint64_t mine)
{
	struct stat st;
	uint64_t c = 0;
	int d = 0;
	socklen_t l = sizeof(c), dl = sizeof(d);

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &dl) < 0 ||
	    (d != AF_INET && d != AF_INET6))
		return 0;
	return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) == 0 && c != mine;
}

/*
 * What this process inherited, and what other processes of its own user
 * hold (pidfd_getfd: the permission ptrace needs too): an INET socket of
 * another network namespace would be a way out, and so would any process
 * of another network namespace whose descriptors can be taken (or which
 * could be traced).  Only processes of the same uid are looked at.
 */
static void
probe_steal(void)
{
	uint64_t mine = own_cookie();
	char me[64] = "", what[128] = "";
	DIR *d;
	struct dirent *de;
	int fd, pids = 0, fds = 0, found = 0;
	ssize_t n;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0 && foreign_inet(fd, mine)) {
			snprintf(what, sizeof(what), "inherited-fd-%d", fd);
			found = 1;
			break;
		}
	report("inherited_fd", found ? "reached:%s" : "refused:none", what);

	found = 0;
	what[0] = '\0';
	if ((n = readlink("/proc/self/ns/net", me, sizeof(me) - 1)) > 0)
		me[n] = '\0';
	if ((d = opendir("/proc")) == NULL) {
		report("steal_fd", "refused:proc:%s", ename(errno));
		return;
	}
	while ((de = readdir(d)) != NULL && !found) {
		pid_t pid = (pid_t)atoi(de->d_name);
		char p[64], ns[64] = "";
		struct stat st;
		int pfd, i, other;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%d", (int)pid);
		if (stat(p, &st) < 0 || st.st_uid != getuid())
			continue;
		pids++;
		snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)pid);
		if ((n = readlink(p, ns, sizeof(ns) - 1)) > 0)
			ns[n] = '\0';
		other = n > 0 && strcmp(ns, me) != 0;
		if ((pfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
			continue;
		for (i = 0; i < 256 && !found; i++) {
			int got = (int)syscall(SYS_pidfd_getfd, pfd, i, 0);

			if (got < 0)
				continue;
			fds++;
			if (foreign_inet(got, mine)) {
				snprintf(what, sizeof(what), "socket-of-pid-%d-fd-%d", (int)pid, i);
				found = 1;
			} else if (other && what[0] == '\0') {
				/* taken, though no socket: then it could be traced too */
				snprintf(what, sizeof(what), "fds-of-pid-%d-in-%s", (int)pid, ns);
			}
			close(got);
		}
		close(pfd);
	}
	closedir(d);
	if (what[0] != '\0')
		report("steal_fd", "reached:%s", what);
	else
		report("steal_fd", "refused:none(pids=%d,fds=%d)", pids, fds);
}

/* which socket families and types socket(2) hands out: information */
static void
probe_families(void)
{
	static const struct { const char *name; int dom, type, proto; } k[] = {
		{ "inet_stream", AF_INET, SOCK_STREAM, 0 },
		{ "inet_dgram", AF_INET, SOCK_DGRAM, 0 },
		{ "inet_raw", AF_INET, SOCK_RAW, IPPROTO_RAW },
		{ "inet_sctp", AF_INET, SOCK_STREAM, IPPROTO_SCTP },
		{ "inet_mptcp", AF_INET, SOCK_STREAM, IPPROTO_MPTCP },
		{ "inet_udplite", AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE },
		{ "inet_ping", AF_INET, SOCK_DGRAM, IPPROTO_ICMP },
		{ "inet6_seqpacket", AF_INET6, SOCK_SEQPACKET, 0 },
		{ "packet", AF_PACKET, SOCK_DGRAM, 0 },
		{ "netlink_route", AF_NETLINK, SOCK_RAW, 0 },
		{ "vsock", AF_VSOCK, SOCK_STREAM, 0 },
		{ "tipc", AF_TIPC, SOCK_RDM, 0 },
		{ "rds", AF_RDS, SOCK_SEQPACKET, 0 },
		{ "xdp", AF_XDP, SOCK_RAW, 0 },
		{ "smc", AF_SMC, SOCK_STREAM, 0 },
		{ "kcm", AF_KCM, SOCK_DGRAM, 0 },
		{ "alg", AF_ALG, SOCK_SEQPACKET, 0 },
		{ "key", AF_KEY, SOCK_RAW, 2 },
		{ "can", AF_CAN, SOCK_RAW, 1 },
		{ "bluetooth", AF_BLUETOOTH, SOCK_RAW, 0 },
		{ "qipcrtr", AF_QIPCRTR, SOCK_DGRAM, 0 },
		{ "mctp", AF_MCTP, SOCK_DGRAM, 0 },
		{ "llc", AF_LLC, SOCK_DGRAM, 0 },
		{ "ax25", AF_AX25, SOCK_SEQPACKET, 0 },
		{ "x25", AF_X25, SOCK_SEQPACKET, 0 },
		{ "appletalk", AF_APPLETALK, SOCK_DGRAM, 0 },
		{ "pppox", AF_PPPOX, SOCK_STREAM, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char name[64];
		int fd = socket(k[i].dom, k[i].type, k[i].proto);

		snprintf(name, sizeof(name), "socket_%s", k[i].name);
		if (fd >= 0) {
			info(name, "created");
			close(fd);
		} else {
			info(name, "refused:%s", ename(errno));
		}
	}
}

/* ---- through the proxy ---------------------------------------------------- */

static int
proxy_connect(const char *which, int *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char h[64];
	int port, fd, e;

	if (split_hostport(which, h, sizeof(h), &port) < 0 || mkaddr(h, port, &ss, &len) < 0) {
		*err = EINVAL;
		return -1;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM, 0)) < 0) {
		*err = errno;
		return -1;
	}
	if ((e = tconnect(fd, (struct sockaddr *)&ss, len)) != 0) {
		close(fd);
		*err = e;
		return -1;
	}
	return fd;
}

/* send req, read until the proxy closes or is quiet for the timeout */
static size_t
read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n - 1 && (r = tread(fd, buf + got, n - 1 - got, O.timeout_ms)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	return got;
}

/* the status codes of every response in buf, "200,403" */
static void
statuses(const char *buf, char *out, size_t n, int *n200)
{
	const char *p = buf;

	out[0] = '\0';
	*n200 = 0;
	while ((p = strstr(p, "HTTP/1.")) != NULL) {
		if (p == buf || p[-1] == '\n') {
			int code = atoi(p + 9);
			snprintf(out + strlen(out), n - strlen(out), "%s%d", out[0] ? "," : "", code);
			if (code >= 200 && code < 300)
				(*n200)++;
		}
		p += 7;
	}
}

/*
 * One HTTP exchange with the proxy; min200 successful responses (or the
 * outside listener's banner anywhere) mean the request got through.
 */
static void
http_probe(const char *name, const char *req, int min200)
{
	char buf[8192], st[128];
	int fd, e, n200;

	if ((fd = proxy_connect(O.proxy, &e)) < 0) {
		report(name, "refused:proxy:%s", ename(e));
		return;
	}
	if ((e = twrite(fd, req, strlen(req))) != 0) {
		report(name, "refused:write:%s", ename(e));
		close(fd);
		return;
	}
	read_all(fd, buf, sizeof(buf));
	close(fd);
	statuses(buf, st, sizeof(st), &n200);
	if (strstr(buf, "agentgate-outside") != NULL)
		report(name, "reached:outside-listener");
	else if (n200 >= min200)
		report(name, "reached:%s", st);
	else
		report(name, "refused:%s", st[0] ? st : "closed");
}

static void
http_connect(const char *name, const char *authority, const char *extra)
{
	char req[1024];

	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
	    authority, authority, extra ? extra : "");
	http_probe(name, req, 1);
}

/* "A" or "[A6]" for an authority */
static const char *
bracket(const char *ip, char *b, size_t n)
{
	snprintf(b, n, strchr(ip, ':') ? "[%s]" : "%s", ip);
	return b;
}

static void
probe_http(void)
{
	char a[256], req[2048];
	const char *hh = O.http_host ? O.http_host : "plain.test";
	int p = O.port;

	/* CONNECT to IP literals no rule names: the outside listener */
	snprintf(a, sizeof(a), "127.0.0.1:%d", p);
	http_connect("http_connect_lo4", a, NULL);
	if (O.host4) {
		snprintf(a, sizeof(a), "%s:%d", O.host4, p);
		http_connect("http_connect_host4", a, NULL);
	}
	snprintf(a, sizeof(a), "[::1]:%d", p);
	http_connect("http_connect_lo6", a, NULL);
	if (O.host6) {
		snprintf(a, sizeof(a), "[%s]:%d", O.host6, p);
		http_connect("http_connect_host6", a, NULL);
	}
	/* a name that resolves to loopback */
	snprintf(a, sizeof(a), "localhost:%d", p);
	http_connect("http_connect_localhost", a, NULL);
	/* the target is the request line's; a Host header naming an allowed host changes nothing */
	if (O.allowed) {
		char h[300];
		snprintf(a, sizeof(a), "127.0.0.1:%d", p);
		snprintf(h, sizeof(h), "Host: %s\r\n", O.allowed);
		snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\n%s\r\n", a, h);
		http_probe("http_connect_host_header_allowed", req, 1);
		/* userinfo-looking authority: the allowed name before an '@' */
		snprintf(a, sizeof(a), "%s@127.0.0.1:%d", O.allowed, p);
		http_connect("http_connect_userinfo", a, NULL);
		/* the allowed host on another port */
		snprintf(a, sizeof(a), "%.*s:%d", (int)strcspn(O.allowed, ":"), O.allowed, p);
		http_connect("http_connect_allowed_other_port", a, NULL);
		/* benign: the allowed host itself */
		http_connect("http_connect_allowed", O.allowed, NULL);
	}
	/* a tunnel to a host whose rule is plain HTTP with method and path:
	 * through it any method and path would go */
	snprintf(a, sizeof(a), "%s:80", hh);
	http_connect("http_connect_http_rule_host", a, NULL);

	/* a refused CONNECT with a second request smuggled behind it */
	snprintf(req, sizeof(req),
	    "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
	    "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
	    "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", p, p, p, p,
	    O.host4 ? O.host4 : "127.0.0.1");
	/* (the last one lacks a port on purpose: malformed, still refused) */
	http_probe("http_smuggle_after_refusal", req, 1);

	/* absolute-form plain HTTP */
	snprintf(req, sizeof(req), "GET http://%s/pub/ok HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_get_allowed", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", hh, p);
	http_probe("http_host_header_differs", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/x HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n", hh);
	http_probe("http_host_header_other_name", req, 1);
	snprintf(req, sizeof(req), "GET /pub/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", p);
	http_probe("http_origin_form", req, 1);
	snprintf(req, sizeof(req), "GET http://%s@127.0.0.1:%d/pub/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", hh, p, p);
	http_probe("http_userinfo", req, 1);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", p, p);
	http_probe("http_get_lo4", req, 1);
	snprintf(req, sizeof(req), "GET http://%s:%d/pub/x HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", hh, p, hh, p);
	http_probe("http_get_rule_host_other_port", req, 1);
	snprintf(req, sizeof(req), "POST http://%s/pub/x HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_method_not_in_rule", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/private/x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_path_not_in_rule", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/../private/x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_path_dotdot", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/%%2e%%2e/private/x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_path_encoded_dotdot", req, 1);
	/* what a server may read as a dot segment that the rule did not see */
	snprintf(req, sizeof(req), "GET http://%s/pub/#/../../private/x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_path_fragment_dotdot", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/..;/private/x HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hh, hh);
	http_probe("http_path_semicolon_dotdot", req, 1);
	/* two Host headers: the proxy checks one, a server may use the other */
	snprintf(req, sizeof(req), "GET http://%s/pub/x HTTP/1.1\r\nHost: %s\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", hh, hh, p);
	http_probe("http_duplicate_host", req, 1);
	snprintf(req, sizeof(req), "GET http://%s/pub/x HTTP/1.1\r\nHost : 127.0.0.1:%d\r\nConnection: close\r\n\r\n", hh, p);
	http_probe("http_host_space_colon", req, 1);
	/* framing a lenient server reads otherwise: a request hidden in the body */
	{
		char hidden[512];
		int hl = snprintf(hidden, sizeof(hidden), "POST /private/smuggled HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", hh);

		snprintf(req, sizeof(req),
		    "GET http://%s/pub/a HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nContent-Length: 0\r\n\r\n%s",
		    hh, hh, hl, hidden);
		http_probe("http_duplicate_content_length", req, 2);
		snprintf(req, sizeof(req),
		    "GET http://%s/pub/a HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n%s",
		    hh, hh, hl + 5, hidden);
		http_probe("http_te_space_colon", req, 2);
	}
	/* keep-alive: an allowed request, then one no rule allows, same connection */
	snprintf(req, sizeof(req),
	    "GET http://%s/pub/a HTTP/1.1\r\nHost: %s\r\n\r\n"
	    "POST http://%s/private/b HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	    hh, hh, hh, hh);
	http_probe("http_pipeline_second_refused", req, 2);
	snprintf(req, sizeof(req),
	    "GET http://%s/pub/a HTTP/1.1\r\nHost: %s\r\n\r\n"
	    "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
	    hh, hh, p, p);
	http_probe("http_pipeline_other_host", req, 2);
	/* Content-Length and Transfer-Encoding both: a request hidden in the body */
	{
		char hidden[512];
		snprintf(hidden, sizeof(hidden), "0\r\n\r\nPOST /private/smuggled HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", hh);
		snprintf(req, sizeof(req),
		    "GET http://%s/pub/a HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\nTransfer-Encoding: chunked\r\n\r\n%s",
		    hh, hh, strlen(hidden), hidden);
		http_probe("http_cl_te_smuggle", req, 2);
	}
}

/* ---- SOCKS ------------------------------------------------------------------ */

/*
 * SOCKS5 without authentication: cmd 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE;
 * atyp 1 IPv4, 3 name, 4 IPv6.
 */
static void
socks5(const char *name, const char *proxy, int cmd, const char *host, int port)
{
	uint8_t m[300], r[300];
	size_t n = 0, hl;
	int fd, e;
	ssize_t got;
	struct in_addr a4;
	struct in6_addr a6;

	if ((fd = proxy_connect(proxy, &e)) < 0) {
		report(name, "refused:proxy:%s", ename(e));
		return;
	}
	if ((e = twrite(fd, "\x05\x01\x00", 3)) != 0 ||
	    (got = tread(fd, r, 2, O.timeout_ms)) != 2 || r[0] != 5 || r[1] != 0) {
		report(name, "refused:greeting");
		close(fd);
		return;
	}
	m[n++] = 5;
	m[n++] = (uint8_t)cmd;
	m[n++] = 0;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		m[n++] = 1;
		memcpy(m + n, &a4, 4);
		n += 4;
	} else if (inet_pton(AF_INET6, host, &a6) == 1) {
		m[n++] = 4;
		memcpy(m + n, &a6, 16);
		n += 16;
	} else {
		hl = strlen(host);
		m[n++] = 3;
		m[n++] = (uint8_t)hl;
		memcpy(m + n, host, hl);
		n += hl;
	}
	m[n++] = (uint8_t)(port >> 8);
	m[n++] = (uint8_t)port;
	if ((e = twrite(fd, m, n)) != 0) {
		report(name, "refused:write:%s", ename(e));
	} else if ((got = tread(fd, r, sizeof(r), O.timeout_ms)) < 2) {
		report(name, "refused:%s", got == 0 ? "closed" : got < 0 ? ename((int)-got) : "short");
	} else if (r[1] != 0) {
		report(name, "refused:socks-%d", r[1]);
	} else if (cmd == 1) {
		/* the reply may carry the far end's banner after the address */
		size_t al = r[3] == 1 ? 4 : r[3] == 4 ? 16 : (size_t)r[4] + 1;
		size_t hdr = 4 + al + 2;
		if ((size_t)got > hdr) {
			char b[64];
			size_t k = (size_t)got - hdr < sizeof(b) - 1 ? (size_t)got - hdr : sizeof(b) - 1;
			memcpy(b, r + hdr, k);
			b[k] = '\0';
			b[strcspn(b, "\r\n")] = '\0';
			report(name, "reached:%s", b);
		} else {
			report_connected(name, fd);
		}
	} else {
		report(name, "reached:socks-granted-cmd-%d", cmd);
	}
	close(fd);
}

/* SOCKS4 (and 4a with a name): the proxy speaks SOCKS5 only */
static void
socks4(const char *name, const char *host, int port)
{
	uint8_t m[300], r[8];
	size_t n = 0;
	struct in_addr a;
	int fd, e;
	ssize_t got;

	if ((fd = proxy_connect(O.proxy, &e)) < 0) {
		report(name, "refused:proxy:%s", ename(e));
		return;
	}
	m[n++] = 4;
	m[n++] = 1;
	m[n++] = (uint8_t)(port >> 8);
	m[n++] = (uint8_t)port;
	if (inet_pton(AF_INET, host, &a) == 1) {
		memcpy(m + n, &a, 4);
		n += 4;
		m[n++] = 0;		/* empty user id */
	} else {
		memcpy(m + n, "\0\0\0\1", 4);
		n += 4;
		m[n++] = 0;
		memcpy(m + n, host, strlen(host) + 1);
		n += strlen(host) + 1;
	}
	if ((e = twrite(fd, m, n)) != 0)
		report(name, "refused:write:%s", ename(e));
	else if ((got = tread(fd, r, sizeof(r), O.timeout_ms)) < 2)
		report(name, "refused:%s", got == 0 ? "closed" : got < 0 ? ename((int)-got) : "short");
	else if (r[1] == 0x5a)
		report_connected(name, fd);
	else
		report(name, "refused:socks4-%d", r[1]);
	close(fd);
}

static void
probe_socks(void)
{
	char ah[256];
	int p = O.port, ap = 443;

	socks5("socks_connect_lo4", O.proxy, 1, "127.0.0.1", p);
	if (O.host4)
		socks5("socks_connect_host4", O.proxy, 1, O.host4, p);
	socks5("socks_connect_lo6", O.proxy, 1, "::1", p);
	if (O.host6)
		socks5("socks_connect_host6", O.proxy, 1, O.host6, p);
	socks5("socks_connect_localhost", O.proxy, 1, "localhost", p);
	socks5("socks_connect_v4mapped_lo", O.proxy, 1, "::ffff:127.0.0.1", p);
	socks5("socks_connect_http_rule_host", O.proxy, 1, O.http_host ? O.http_host : "plain.test", 80);
	socks5("socks_bind", O.proxy, 2, "0.0.0.0", 0);
	socks5("socks_udp_associate", O.proxy, 3, "0.0.0.0", 0);
	socks4("socks4_connect_lo4", "127.0.0.1", p);
	socks4("socks4a_connect_localhost", "localhost", p);
	if (O.allowed && split_hostport(O.allowed, ah, sizeof(ah), &ap) == 0) {
		socks5("socks_connect_allowed_other_port", O.proxy, 1, ah, p);
		socks5("socks_connect_allowed", O.proxy, 1, ah, ap);
		if (O.proxy6)
			socks5("socks_connect_allowed_via_proxy6", O.proxy6, 1, ah, ap);
	}
	if (O.proxy6)
		socks5("socks_connect_lo4_via_proxy6", O.proxy6, 1, "127.0.0.1", p);
}

/*
 * With a rule "*" (any name): the spellings of loopback, of "this host"
 * and of the host's own addresses that a name check can miss.
 */
static void
probe_wild(void)
{
	static const struct { const char *tag, *host; } w[] = {
		{ "127_1", "127.1" }, { "decimal", "2130706433" }, { "hex", "0x7f000001" },
		{ "octal", "0177.0.0.1" }, { "127_0_0_2", "127.0.0.2" },
		{ "zeros", "0.0.0.0" }, { "zero", "0" },
		{ "v6_lo", "::1" }, { "v6_unspec", "::" },
		{ "v4mapped", "::ffff:127.0.0.1" }, { "v4mapped_hex", "::ffff:7f00:1" },
		{ "v4mapped_long", "0:0:0:0:0:ffff:127.0.0.1" },
	};
	size_t i;
	char name[80], a[128], b[96], v4m[80];

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		snprintf(name, sizeof(name), "wild_http_%s", w[i].tag);
		snprintf(a, sizeof(a), "%s:%d", bracket(w[i].host, b, sizeof(b)), O.port);
		http_connect(name, a, NULL);
		/* SOCKS5 picks IPv4/IPv6/name from the text: 127.1 and the like
		 * go as names, for the proxy to parse or resolve */
		snprintf(name, sizeof(name), "wild_socks_%s", w[i].tag);
		socks5(name, O.proxy, 1, w[i].host, O.port);
	}
	if (O.wildnames != NULL) {
		char *list = strdup(O.wildnames), *tok, *save = NULL;

		for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			char tag[40];

			for (i = 0; tok[i] != '\0' && i < sizeof(tag) - 1; i++)
				tag[i] = isalnum((unsigned char)tok[i]) ? tok[i] : '_';
			tag[i] = '\0';
			snprintf(name, sizeof(name), "wild_http_name_%s", tag);
			snprintf(a, sizeof(a), "%s:%d", tok, O.port);
			http_connect(name, a, NULL);
			snprintf(name, sizeof(name), "wild_socks_name_%s", tag);
			socks5(name, O.proxy, 1, tok, O.port);
		}
		free(list);
	}
	if (O.host4) {
		snprintf(a, sizeof(a), "%s:%d", O.host4, O.port);
		http_connect("wild_http_host4", a, NULL);
		socks5("wild_socks_host4", O.proxy, 1, O.host4, O.port);
		snprintf(v4m, sizeof(v4m), "::ffff:%s", O.host4);
		snprintf(a, sizeof(a), "[%s]:%d", v4m, O.port);
		http_connect("wild_http_host4_v4mapped", a, NULL);
		socks5("wild_socks_host4_v4mapped", O.proxy, 1, v4m, O.port);
	}
	if (O.host6) {
		snprintf(a, sizeof(a), "[%s]:%d", O.host6, O.port);
		http_connect("wild_http_host6", a, NULL);
		socks5("wild_socks_host6", O.proxy, 1, O.host6, O.port);
	}
	snprintf(a, sizeof(a), "GET http://127.1:%d/ HTTP/1.1\r\nHost: 127.1:%d\r\nConnection: close\r\n\r\n", O.port, O.port);
	http_probe("wild_http_get_127_1", a, 1);
	snprintf(a, sizeof(a), "GET http://[::ffff:127.0.0.1]:%d/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", O.port);
	http_probe("wild_http_get_v4mapped", a, 1);
}

/* the cloud metadata address (only where a refusal is already known not to connect) */
static void
probe_meta(void)
{
	http_connect("meta_http_connect", "169.254.169.254:80", NULL);
	socks5("meta_socks_connect", O.proxy, 1, "169.254.169.254", 80);
	http_probe("meta_http_get",
	    "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n", 1);
}

/*
 * Connections to the proxy held open, none saying anything: what each one
 * costs outside the sandbox is for the test to count.  Waits for a line on
 * stdin (at most 60 s).
 */
static void
probe_flood(int n)
{
	int *fds = calloc((size_t)n, sizeof(int)), i, open_ = 0, e;
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char b[64];

	if (fds == NULL)
		return;
	for (i = 0; i < n; i++)
		if ((fds[i] = proxy_connect(O.proxy, &e)) >= 0)
			open_++;
	info("flood", "%d-open", open_);
	if (poll(&p, 1, 60000) > 0)
		(void)!read(0, b, sizeof(b));
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

/* ---- main ---------------------------------------------------------------- */

static int
want(int argc, char **argv, const char *g)
{
	int i, all = 0;
	static const char *notall[] = { "wild", "meta", "autobind", "flood", NULL };

	for (i = 1; i < argc; i++) {
		if (strchr(argv[i], '=') != NULL)
			continue;
		if (strcmp(argv[i], g) == 0)
			return 1;
		if (strcmp(argv[i], "all") == 0)
			all = 1;
	}
	if (!all)
		return 0;
	for (i = 0; notall[i] != NULL; i++)
		if (strcmp(notall[i], g) == 0)
			return 0;
	return 1;
}

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		const char *k = argv[i];

		if (v == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(k, "port") == 0) O.port = atoi(v);
		else if (strcmp(k, "uport") == 0) O.uport = atoi(v);
		else if (strcmp(k, "host4") == 0) O.host4 = *v ? v : NULL;
		else if (strcmp(k, "host6") == 0) O.host6 = *v ? v : NULL;
		else if (strcmp(k, "proxy") == 0) O.proxy = v;
		else if (strcmp(k, "proxy6") == 0) {
			static char p6[80];
			const char *c = strrchr(O.proxy, ':');
			snprintf(p6, sizeof(p6), "[%s]:%s", v, c ? c + 1 : "3128");
			O.proxy6 = p6;
		}
		else if (strcmp(k, "allowed") == 0) O.allowed = v;
		else if (strcmp(k, "http_host") == 0) O.http_host = v;
		else if (strcmp(k, "dns") == 0) O.dns = v;
		else if (strcmp(k, "dns_port") == 0) O.dns_port = atoi(v);
		else if (strcmp(k, "vsock_cid") == 0) {
			O.vsock_cid = (unsigned)strtoul(v, NULL, 0);
			O.vsock_connect = 1;
		}
		else if (strcmp(k, "vsock_port") == 0) O.vsock_port = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(k, "abstract") == 0) O.abstract = v;
		else if (strcmp(k, "unixpath") == 0) O.unixpath = v;
		else if (strcmp(k, "wildnames") == 0) O.wildnames = v;
		else if (strcmp(k, "netns") == 0) O.netns = v;
		else if (strcmp(k, "timeout") == 0) O.timeout_ms = atoi(v);
		else if (strcmp(k, "flood") == 0) O.flood = atoi(v);
		else if (strcmp(k, "prefix") == 0) O.prefix = v;
		else {
			fprintf(stderr, "netprobe: unknown key %s\n", k);
			return 2;
		}
		v[-1] = '=';
	}
	if (O.uport == 0)
		O.uport = O.port;
	signal(SIGPIPE, SIG_IGN);

	if (want(argc, argv, "netns")) probe_netns();
	if (want(argc, argv, "families")) probe_families();
	if (want(argc, argv, "tcp")) probe_stream("tcp", 0);
	if (want(argc, argv, "mptcp")) probe_stream("mptcp", IPPROTO_MPTCP);
	if (want(argc, argv, "tfo")) probe_tfo();
	if (want(argc, argv, "udp")) probe_udp();
	if (want(argc, argv, "uring")) probe_uring();
	if (want(argc, argv, "keys")) probe_keys();
	if (want(argc, argv, "raw")) {
		probe_icmp("raw_icmp", SOCK_RAW, IPPROTO_ICMP, 0);
		probe_icmp("raw_icmp6", SOCK_RAW, IPPROTO_ICMPV6, 1);
		probe_icmp("ping", SOCK_DGRAM, IPPROTO_ICMP, 0);
		probe_raw_udp();
	}
	if (want(argc, argv, "packet")) probe_packet();
	if (want(argc, argv, "vsock")) probe_vsock();
	if (want(argc, argv, "unix")) {
		probe_unix();
		probe_unixpath();
	}
	if (want(argc, argv, "dns")) probe_dns();
	if (want(argc, argv, "steal")) probe_steal();
	if (want(argc, argv, "http")) probe_http();
	if (want(argc, argv, "socks")) probe_socks();
	if (want(argc, argv, "wild")) probe_wild();
	if (want(argc, argv, "meta")) probe_meta();
	if (want(argc, argv, "autobind")) probe_autobind();
	if (want(argc, argv, "flood")) probe_flood(O.flood);
	return 0;
}
