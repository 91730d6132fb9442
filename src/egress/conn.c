/*
 * conn.c - one connection through the egress proxy (conn.h).
 *
 * What is judged is what the proxy itself will do: the host and port it
 * connects to, after reading the request whole, and the address it
 * resolved that host to.  A plain HTTP request is forwarded as one request
 * ("Connection: close", its body by Content-Length and no further bytes),
 * so a second request pipelined behind it cannot reach a path no rule
 * allows; its Host header must name the host it is sent to.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "egress/conn.h"
#include "policy/netrules.h"

#define HEAD_MAX	(16 * 1024)	/* an HTTP request's head */
#define REQ_TIMEOUT_MS	30000		/* for the client to say what it wants */
#define RELAY_BUF	(256 * 1024)	/* each direction's pipe */

enum proto { P_CONNECT, P_HTTP, P_SOCKS };
static const char *const proto_names[] = { "connect", "http", "socks5" };

struct conn {
	const struct egress_ctx	*ctx;
	int			 cfd, ufd;
	unsigned long		 seq;
	enum proto		 proto;
	char			 host[256];	/* lower case, no brackets */
	int			 port;
	char			 method[16];
	char			 path[2048];	/* plain HTTP: the request's path and query */
	char			 address[INET6_ADDRSTRLEN + 8];
	struct ag_net_verdict	 v;
	const char		*decision;
	char			 reason[512];
	char			 said[512];	/* an address refused: the agent's text */
	char			 error[512];
	unsigned long long	 up, down;	/* bytes to the host, from it */
	int			 pending;	/* 1: resolving, connecting; 2: recorded
						 * by ag_egress_conn_record_pending */
	struct timespec		 start;
	/* plain HTTP */
	char			 head[HEAD_MAX + 1];
	size_t			 headlen;	/* the head, "\r\n\r\n" included */
	size_t			 got;		/* bytes read into head[] */
	long long		 body;		/* Content-Length; -1 none */
};

/*
 * The connections being served, each by a thread of the proxy: stopping
 * shuts their sockets down, so every relay and read ends at once and
 * writes its record.  One lock for the table, one for the audit (its file
 * sink keeps the chain's tail; one writer at a time in this process).
 */
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t audit_mu = PTHREAD_MUTEX_INITIALIZER;
static struct conn *table[AG_EGRESS_MAX_CONN];
static volatile int stopping;

static void
table_put(struct conn *c, int on)
{
	size_t i;

	pthread_mutex_lock(&table_mu);
	for (i = 0; i < AG_EGRESS_MAX_CONN; i++)
		if (on ? table[i] == NULL : table[i] == c) {
			table[i] = on ? c : NULL;
			break;
		}
	pthread_mutex_unlock(&table_mu);
}

/* ---- reading the request -------------------------------------------------- */

/* Read at least 1 byte into buf within ms; bytes read, 0 on EOF, -1 else. */
static ssize_t
read_within(int fd, void *buf, size_t n, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	ssize_t r;

	for (;;) {
		int pr = poll(&pf, 1, ms);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return -1;
		if ((r = read(fd, buf, n)) < 0 && errno == EINTR)
			continue;
		return r;
	}
}

static int
read_exact(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read_within(fd, (char *)buf + got, n - got, REQ_TIMEOUT_MS);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int
write_all(int fd, const void *buf, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = send(fd, (const char *)buf + off, n - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = { .fd = fd, .events = POLLOUT };

				(void)poll(&pf, 1, REQ_TIMEOUT_MS);
				continue;
			}
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

static void
lower_copy(char *dst, size_t dstsz, const char *src, size_t n)
{
	size_t i;

	if (n >= dstsz)
		n = dstsz - 1;
	for (i = 0; i < n; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[n] = '\0';
}

/* c's host and port as a URL has them: "[v6]:port" for an IPv6 address. */
static const char *
hostport(const struct conn *c, char *buf, size_t n)
{
	int v6 = strchr(c->host, ':') != NULL;

	snprintf(buf, n, "%s%s%s:%d", v6 ? "[" : "", c->host, v6 ? "]" : "", c->port);
	return buf;
}

/* "host:port" or "[v6]:port" (port required when need_port) into c. */
static int
set_authority(struct conn *c, const char *s, size_t n, int need_port, int dflt)
{
	char tmp[300], host[260];
	const char *why;
	int port;

	if (n == 0 || n >= sizeof(tmp) || memchr(s, '@', n) != NULL)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (ag_net_split_hostport(tmp, host, sizeof(host), &port, &why) < 0)
		return -1;
	if (port == 0) {
		if (need_port)
			return -1;
		port = dflt;
	}
	lower_copy(c->host, sizeof(c->host), host, strlen(host));
	c->port = port;
	return 0;
}

/* The value of header name in the head, or NULL; *len its length. */
static const char *
header(const struct conn *c, const char *name, size_t *len)
{
	const char *p = memchr(c->head, '\n', c->headlen), *end = c->head + c->headlen;
	size_t nl = strlen(name);

	while (p != NULL && ++p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *v;

		if (eol == NULL)
			break;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			v = p + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*len = (size_t)(eol - v);
			while (*len > 0 && (v[*len - 1] == '\r' || v[*len - 1] == ' '))
				(*len)--;
			return v;
		}
		p = eol;
	}
	return NULL;
}

/*
 * The headers of a plain request, as strictly as the host behind the
 * proxy may read them leniently: each "Name: value" with a token name,
 * no folded lines, and Host and Content-Length at most once -- two
 * lengths, or a length the host reads otherwise than the proxy, would let
 * bytes the proxy sends as a body be read as a second request.
 */
static int
headers_plain(struct conn *c)
{
	const char *p = strstr(c->head, "\r\n") + 2, *end = c->head + c->headlen - 2;
	int nhost = 0, nlen = 0;

	while (p < end) {
		const char *eol = strstr(p, "\r\n"), *q;

		if (eol == NULL || eol > end)
			break;
		for (q = p; q < eol && *q != ':'; q++)
			if (!isalnum((unsigned char)*q) && strchr("!#$%&'*+-.^_`|~", *q) == NULL)
				break;
		if (q == p || q == eol || *q != ':') {
			snprintf(c->reason, sizeof(c->reason), "a header line that is not "
			    "'Name: value'");
			return -1;
		}
		if ((size_t)(q - p) == 4 && strncasecmp(p, "Host", 4) == 0)
			nhost++;
		if ((size_t)(q - p) == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
			const char *v = q + 1;

			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			for (; v < eol && *v != ' ' && *v != '\t'; v++)
				if (!isdigit((unsigned char)*v))
					break;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			if (v != eol) {
				snprintf(c->reason, sizeof(c->reason), "a Content-Length that is not "
				    "one number");
				return -1;
			}
			nlen++;
		}
		if (eol[-1] == '\r' || memchr(p, '\n', (size_t)(eol - p)) != NULL ||
		    memchr(p, '\r', (size_t)(eol - p)) != NULL) {
			snprintf(c->reason, sizeof(c->reason), "a bare CR or LF in a header");
			return -1;
		}
		p = eol + 2;
	}
	if (nhost > 1 || nlen > 1) {
		snprintf(c->reason, sizeof(c->reason), "%s more than once", nhost > 1 ? "Host" :
		    "Content-Length");
		return -1;
	}
	return 0;
}

/*
 * Read and parse an HTTP request head.  0 ok; -1 with c->reason set and
 * *status the answer to give (400, 431, 501).
 */
static int
read_http(struct conn *c, int *status)
{
	char *eoh = NULL, *sp1, *sp2, *eol;
	const char *h;
	size_t hl;

	*status = 400;
	while (eoh == NULL) {
		ssize_t r;

		if (c->got >= HEAD_MAX) {
			*status = 431;
			snprintf(c->reason, sizeof(c->reason), "request head longer than %d bytes",
			    HEAD_MAX);
			return -1;
		}
		if ((r = read_within(c->cfd, c->head + c->got, HEAD_MAX - c->got,
		    REQ_TIMEOUT_MS)) <= 0) {
			snprintf(c->reason, sizeof(c->reason), "no complete request");
			return -1;
		}
		c->got += (size_t)r;
		c->head[c->got] = '\0';
		eoh = memmem(c->head, c->got, "\r\n\r\n", 4);
		/* a NUL in the head (not in a body or a TLS hello behind it) */
		if (memchr(c->head, '\0', eoh != NULL ? (size_t)(eoh - c->head) : c->got) != NULL) {
			snprintf(c->reason, sizeof(c->reason), "a NUL byte in the request head");
			return -1;
		}
	}
	c->headlen = (size_t)(eoh - c->head) + 4;
	eol = strstr(c->head, "\r\n");
	if ((sp1 = memchr(c->head, ' ', (size_t)(eol - c->head))) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1))) == NULL ||
	    (size_t)(sp1 - c->head) >= sizeof(c->method) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		snprintf(c->reason, sizeof(c->reason), "not an HTTP/1 request line");
		return -1;
	}
	memcpy(c->method, c->head, (size_t)(sp1 - c->head));
	c->method[sp1 - c->head] = '\0';
	/* no control character or space in the method or the target: a bare
	 * LF or a tab there would split one request line into two requests
	 * for a host that reads them leniently */
	{
		const char *q;

		for (q = c->head; q < sp2; q++)
			if ((unsigned char)*q < 0x21 && q != sp1) {
				snprintf(c->reason, sizeof(c->reason), "a control character in the "
				    "request line");
				return -1;
			}
			else if ((unsigned char)*q == 0x7f) {
				snprintf(c->reason, sizeof(c->reason), "a control character in the "
				    "request line");
				return -1;
			}
		for (q = sp2; q < eol; q++)
			if ((unsigned char)*q < 0x20 || (unsigned char)*q == 0x7f) {
				snprintf(c->reason, sizeof(c->reason), "a control character in the "
				    "request line");
				return -1;
			}
	}
	if (strcmp(c->method, "CONNECT") == 0) {
		c->proto = P_CONNECT;
		if (set_authority(c, sp1 + 1, (size_t)(sp2 - sp1 - 1), 1, 0) < 0) {
			snprintf(c->reason, sizeof(c->reason), "CONNECT needs HOST:PORT");
			return -1;
		}
		return 0;
	}
	c->proto = P_HTTP;
	{
		const char *t = sp1 + 1, *a, *slash;
		size_t tl = (size_t)(sp2 - t), pl;

		if (tl < 8 || strncasecmp(t, "http://", 7) != 0) {
			snprintf(c->reason, sizeof(c->reason), tl >= 8 &&
			    strncasecmp(t, "https://", 8) == 0 ? "https:// goes through CONNECT" :
			    "a proxy request names the whole URL (http://HOST/PATH)");
			return -1;
		}
		/* a fragment is the client's own; in a request it hides a path */
		if (memchr(t, '#', tl) != NULL) {
			snprintf(c->reason, sizeof(c->reason), "a '#' in the request's URL");
			return -1;
		}
		a = t + 7;
		slash = a;
		while (slash < sp2 && *slash != '/' && *slash != '?' && *slash != '#')
			slash++;
		if (set_authority(c, a, (size_t)(slash - a), 0, 80) < 0) {
			snprintf(c->reason, sizeof(c->reason), "no host in the request's URL");
			return -1;
		}
		pl = (size_t)(sp2 - slash);
		if (pl == 0)
			snprintf(c->path, sizeof(c->path), "/");
		else if (*slash != '/' || pl >= sizeof(c->path)) {
			snprintf(c->reason, sizeof(c->reason), "the request's path is not usable");
			return -1;
		} else {
			memcpy(c->path, slash, pl);
			c->path[pl] = '\0';
		}
	}
	if (headers_plain(c) < 0)
		return -1;
	/* the Host header names the host the request goes to, or is absent */
	if ((h = header(c, "Host", &hl)) != NULL) {
		struct conn hc;

		memset(&hc, 0, sizeof(hc));
		if (set_authority(&hc, h, hl, 0, 80) < 0 || strcmp(hc.host, c->host) != 0 ||
		    hc.port != c->port) {
			snprintf(c->reason, sizeof(c->reason), "the Host header (%.*s) names another "
			    "host than the request (%s:%d)", (int)(hl > 100 ? 100 : hl), h, c->host,
			    c->port);
			return -1;
		}
	}
	if (header(c, "Transfer-Encoding", &hl) != NULL) {
		*status = 411;
		snprintf(c->reason, sizeof(c->reason), "a request body must have a Content-Length");
		return -1;
	}
	c->body = 0;
	if ((h = header(c, "Content-Length", &hl)) != NULL) {
		char num[24], *e;

		if (hl == 0 || hl >= sizeof(num)) {
			snprintf(c->reason, sizeof(c->reason), "a bad Content-Length");
			return -1;
		}
		memcpy(num, h, hl);
		num[hl] = '\0';
		errno = 0;
		c->body = strtoll(num, &e, 10);
		if (*e != '\0' || c->body < 0 || errno == ERANGE || c->body > (1LL << 50)) {
			snprintf(c->reason, sizeof(c->reason), "a bad Content-Length");
			return -1;
		}
	}
	return 0;
}

/* SOCKS5 (RFC 1928), no authentication.  0 ok; -1 with *rep the reply code. */
static int
read_socks(struct conn *c, int *rep)
{
	unsigned char b[262];
	char host[256];

	*rep = 1;
	c->proto = P_SOCKS;
	snprintf(c->method, sizeof(c->method), "CONNECT");
	if (read_exact(c->cfd, b, 2) < 0 || b[1] == 0 || read_exact(c->cfd, b + 2, b[1]) < 0 ||
	    memchr(b + 2, 0x00, b[1]) == NULL) {
		(void)write_all(c->cfd, "\x05\xff", 2);
		snprintf(c->reason, sizeof(c->reason), "SOCKS5 without the no-authentication "
		    "method");
		*rep = -1;
		return -1;
	}
	if (write_all(c->cfd, "\x05\x00", 2) < 0 || read_exact(c->cfd, b, 4) < 0 || b[0] != 5) {
		snprintf(c->reason, sizeof(c->reason), "no complete SOCKS5 request");
		*rep = -1;
		return -1;
	}
	switch (b[3]) {
	case 1:
		if (read_exact(c->cfd, b + 4, 4) < 0 ||
		    inet_ntop(AF_INET, b + 4, host, sizeof(host)) == NULL)
			return -1;
		break;
	case 4:
		if (read_exact(c->cfd, b + 4, 16) < 0 ||
		    inet_ntop(AF_INET6, b + 4, host, sizeof(host)) == NULL)
			return -1;
		break;
	case 3:
		if (read_exact(c->cfd, b + 4, 1) < 0 || b[4] == 0 ||
		    read_exact(c->cfd, host, b[4]) < 0)
			return -1;
		host[b[4]] = '\0';
		if (strlen(host) != b[4] || strchr(host, ':') != NULL)
			return -1;
		break;
	default:
		*rep = 8;
		snprintf(c->reason, sizeof(c->reason), "unknown SOCKS5 address type");
		return -1;
	}
	if (read_exact(c->cfd, b + 250, 2) < 0)
		return -1;
	lower_copy(c->host, sizeof(c->host), host, strlen(host));
	c->port = (b[250] << 8) | b[251];
	if (b[1] != 1) {
		*rep = 7;
		snprintf(c->reason, sizeof(c->reason), "SOCKS5 %s is not offered: only CONNECT",
		    b[1] == 2 ? "BIND" : b[1] == 3 ? "UDP ASSOCIATE" : "command");
		return -1;
	}
	if (c->port == 0)
		return -1;
	return 0;
}

/*
 * A host is a name of letters, digits, '-', '_' and dots, or an address
 * in its standard form.  The resolver also takes "2130706433", "0x7f.1"
 * or "127.1" as addresses: judged as names, they would pass a "*" rule as
 * a name and reach the address they spell.
 */
static int
host_plain(struct conn *c)
{
	struct in_addr a4;
	unsigned char a6[16];
	size_t i;

	if (c->host[0] == '\0')
		return 0;
	if (inet_pton(AF_INET, c->host, &a4) == 1 || inet_pton(AF_INET6, c->host, a6) == 1)
		return 1;
	for (i = 0; c->host[i] != '\0'; i++) {
		char ch = c->host[i];

		if (ch == '.')
			continue;
		if (!isalnum((unsigned char)ch) && ch != '-' && ch != '_') {
			snprintf(c->reason, sizeof(c->reason), "'%.100s' is not a host name", c->host);
			return 0;
		}
	}
	if (inet_aton(c->host, &a4) != 0) {
		snprintf(c->reason, sizeof(c->reason), "'%.100s' is an IPv4 address in a "
		    "form the proxy does not take: write it as a.b.c.d", c->host);
		return 0;
	}
	return 1;
}

/* ---- answers -------------------------------------------------------------- */

static void
answer_http(struct conn *c, int status, const char *text)
{
	char buf[2048];
	const char *what = status == 403 ? "Forbidden" : status == 502 ? "Bad Gateway" :
	    status == 504 ? "Gateway Timeout" : status == 411 ? "Length Required" :
	    status == 431 ? "Request Header Fields Too Large" : "Bad Request";
	int n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Connection: close\r\nContent-Length: %zu\r\n\r\n%s\n", status, what,
	    strlen(text) + 1, text);

	/* the text is at most ~1400 bytes: the whole answer fits, as its
	 * Content-Length says */
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)write_all(c->cfd, buf, (size_t)n);
}

static void
answer_socks(struct conn *c, int rep)
{
	unsigned char r[10] = { 5, (unsigned char)rep, 0, 1, 0, 0, 0, 0, 0, 0 };

	if (rep >= 0)
		(void)write_all(c->cfd, r, sizeof(r));
}

/* ---- the record and the report -------------------------------------------- */

/* Another line runs: its counts start.  Under audit_mu. */
static void
line_turn(struct egress_caps *k, unsigned long run)
{
	if (run != 0 && __atomic_load_n(&k->seq, __ATOMIC_SEQ_CST) != run) {
		/* the counts first: the gateway reads them only under the seq */
		__atomic_store_n(&k->line_recorded, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&k->line_dropped, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&k->line_unreported, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&k->seq, run, __ATOMIC_SEQ_CST);
	}
}

/*
 * A refused connection past its caps (egress.h): counted, not recorded,
 * so that a loop of refused connects cannot fill the audit's file system
 * or bury the records around it.  A refusal of line seq: 1 when it is
 * past a cap (or drop: not recorded in any case), then counted.  The
 * per-line counts are the running line's (conn.h); they start again when
 * another line runs, whoever's refusal comes first.  Under audit_mu.
 */
static int
count_refusal(const struct egress_ctx *ctx, unsigned long seq, int drop)
{
	struct egress_caps *k = ctx->caps;
	unsigned long run = ctx->running != NULL ? *ctx->running : seq;
	int ours = run != 0 && seq == run;

	if (k == NULL)
		return drop;
	line_turn(k, run);
	if (drop || k->sess_recorded >= AG_EGRESS_MAX_SESSION_REFUSALS ||
	    (ours && k->line_recorded >= AG_EGRESS_MAX_REFUSAL_RECORDS)) {
		if (ours)
			__atomic_add_fetch(&k->line_dropped, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&k->sess_dropped, 1, __ATOMIC_SEQ_CST);
		return 1;
	}
	if (ours)
		k->line_recorded++;
	k->sess_recorded++;
	return 0;
}

static int
capped(const struct conn *c, const char *decision)
{
	if (decision == NULL || strcmp(decision, "deny") != 0)
		return 0;
	return count_refusal(c->ctx, c->seq, 0);
}

void
ag_egress_conn_uncounted(const struct egress_ctx *ctx, unsigned long seq)
{
	pthread_mutex_lock(&audit_mu);
	(void)count_refusal(ctx, seq, 1);
	pthread_mutex_unlock(&audit_mu);
}

/*
 * The path as the record keeps it: a query string (a token an agent puts
 * in a URL: "?access_token=...") masked whole, as the command record
 * masks a secret's value; rules never judge it.
 */
static const char *
record_path(const struct conn *c, char *buf, size_t n)
{
	size_t pl = strcspn(c->path, "?");

	if (c->path[pl] == '\0' || c->path[pl + 1] == '\0')
		return c->path;
	snprintf(buf, n, "%.*s?***", (int)pl, c->path);
	return buf;
}

/*
 * c's record as n says it; what only its own thread may still change
 * (the address, the error, the byte counts, the decision) only when
 * whole (not while the connection is pending, conn.h).
 */
static void
record_as(const struct conn *c, int whole, const char *decision, const char *reason,
    const char *error)
{
	char path[sizeof(c->path) + 8];
	struct ag_audit_net n;
	struct timespec now;
	struct ag_err err;

	if (c->ctx->audit == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	memset(&n, 0, sizeof(n));
	n.seq = c->seq;
	n.proto = proto_names[c->proto];
	n.host = c->host[0] ? c->host : NULL;
	n.port = c->port;
	n.address = whole && c->address[0] ? c->address : NULL;
	n.method = c->proto == P_HTTP ? c->method : NULL;
	n.path = c->proto == P_HTTP && c->path[0] ? record_path(c, path, sizeof(path)) : NULL;
	n.decision = decision;
	n.reason = reason != NULL && reason[0] ? reason : NULL;
	n.rule = c->v.rule != NULL ? c->v.rule->text : NULL;
	n.error = error != NULL && error[0] ? error : NULL;
	n.bytes_up = whole ? c->up : 0;
	n.bytes_down = whole ? c->down : 0;
	n.duration_ms = (long long)(now.tv_sec - c->start.tv_sec) * 1000 +
	    (now.tv_nsec - c->start.tv_nsec) / 1000000;
	ag_err_clear(&err);
	pthread_mutex_lock(&audit_mu);
	if (!capped(c, decision) && ag_audit_net(c->ctx->audit, &n, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	pthread_mutex_unlock(&audit_mu);
}

static void
record(struct conn *c)
{
	record_as(c, 1, c->decision, c->reason, c->error);
}

/* A line for the agent, shown on the command's stderr when it ends: a
 * client's own error for a refused or failed CONNECT says only "502". */
/*
 * What was told the gateway for the running line, each text once: a
 * client retrying one host would fill the pipe the gateway reads only
 * when the line ends, and the next host refused would go unsaid.  Hashes
 * of "SEQ\tLINE"; under audit_mu.
 */
#define REPORTED_MAX	1024
static unsigned long long reported[REPORTED_MAX];
static size_t nreported;
static unsigned long reported_run;

static unsigned long long
fnv1a(const char *s, size_t n)
{
	unsigned long long h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void
report(struct conn *c, const char *line)
{
	const struct egress_ctx *ctx = c->ctx;
	unsigned long run;
	unsigned long long h;
	char buf[2048];
	size_t i;
	int n, seen = 0;

	n = snprintf(buf, sizeof(buf), "%lu\t%s", c->seq, line);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return;
	/* one line for the agent, whatever the request held */
	for (i = 0; i < (size_t)n; i++)
		if (((unsigned char)buf[i] < 0x20 && buf[i] != '\t') ||
		    (unsigned char)buf[i] == 0x7f)
			buf[i] = '?';
	buf[n++] = '\n';
	h = fnv1a(buf, (size_t)n);
	pthread_mutex_lock(&audit_mu);
	run = ctx->running != NULL ? *ctx->running : c->seq;
	if (run != reported_run) {
		reported_run = run;
		nreported = 0;
	}
	for (i = 0; i < nreported && !seen; i++)
		seen = reported[i] == h;
	if (!seen) {
		/* at most PIPE_BUF: written whole or not at all */
		if (write(ctx->report_fd, buf, (size_t)n) != n) {
			/* full: the audit has it; the agent is told how many */
			if (ctx->caps != NULL && run != 0 && c->seq == run) {
				line_turn(ctx->caps, run);
				__atomic_add_fetch(&ctx->caps->line_unreported, 1,
				    __ATOMIC_SEQ_CST);
			}
		} else if (nreported < REPORTED_MAX)
			reported[nreported++] = h;
	}
	pthread_mutex_unlock(&audit_mu);
}

/* The refusal for the agent, through the gateway, and the record: both
 * before the client hears it, so the command cannot end first. */
static void
refuse(struct conn *c, const char *line)
{
	c->decision = "deny";
	record(c);
	report(c, line);
}

static void
refuse_host(struct conn *c)
{
	char allowed[400], line[1200], hp[300];

	ag_net_allowed_text(c->ctx->p, allowed, sizeof(allowed));
	/* what is wrong, when it is not the host itself */
	snprintf(line, sizeof(line), "agentgate: blocked connection to %s%s%s (allowed here: %s)",
	    hostport(c, hp, sizeof(hp)), c->v.host_listed ? ": " : "",
	    c->v.host_listed ? c->v.reason : "", allowed);
	snprintf(c->reason, sizeof(c->reason), "%s", c->v.reason);
	refuse(c, line);
}

/* ---- where to connect ----------------------------------------------------- */

static int
connect_within(const struct sockaddr *sa, socklen_t len, long timeout_s, char *err,
    size_t errsz)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
	socklen_t el = sizeof(e);
	struct pollfd pf;

	if (fd < 0) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, sa, len) < 0 && errno != EINPROGRESS) {
		snprintf(err, errsz, "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	pf.fd = fd;
	pf.events = POLLOUT;
	if (poll(&pf, 1, (int)(timeout_s * 1000)) <= 0) {
		snprintf(err, errsz, "connect: timed out after %lds", timeout_s);
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e != 0) {
		snprintf(err, errsz, "connect: %s", strerror(e ? e : errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void
name_addr(struct conn *c, const struct sockaddr *sa)
{
	char a[INET6_ADDRSTRLEN];
	const void *p = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (inet_ntop(sa->sa_family, p, a, sizeof(a)) != NULL)
		snprintf(c->address, sizeof(c->address), sa->sa_family == AF_INET6 ? "[%s]:%d" :
		    "%s:%d", a, ntohs(((const struct sockaddr_in *)sa)->sin_port));
}

/*
 * Resolve and connect: the admin's gateway.egress.resolve first (believed
 * as written), else the system's resolver, each address checked
 * (ag_net_addr_check).  c->ufd on success; on failure -1 with c->error,
 * or -2 when every address was refused (c->reason says why).
 */
static int
open_upstream(struct conn *c)
{
	const struct ag_egress_conf *ec = &c->ctx->cfg->gw.egress;
	long timeout = ec->connect_timeout > 0 ? ec->connect_timeout : 10;
	struct addrinfo hints, *res = NULL, *ai;
	const char *host = c->host, *refused = NULL;
	char port[8];
	int trusted = 0, rc, pattern_only = 0;
	size_t i;

	snprintf(port, sizeof(port), "%d", c->port);
	for (i = 0; i < ec->nresolve; i++) {
		const struct ag_egress_map *m = &ec->resolve[i];

		if (strcmp(m->host, c->host) == 0 && (m->port == 0 || m->port == c->port)) {
			host = m->addr;
			if (m->to_port != 0)
				snprintf(port, sizeof(port), "%d", m->to_port);
			trusted = 1;
			break;
		}
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (trusted ? AI_NUMERICHOST : 0);
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(c->error, sizeof(c->error), "cannot resolve %s: %s", c->host,
		    gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		const char *cls;
		int po;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (!trusted && (cls = ag_net_addr_check(c->ctx->p, ai->ai_addr, c->port,
		    c->v.rule, &po)) != NULL) {
			if (refused == NULL) {
				refused = cls;
				pattern_only = po;
				name_addr(c, ai->ai_addr);
			}
			continue;
		}
		name_addr(c, ai->ai_addr);
		if ((c->ufd = connect_within(ai->ai_addr, ai->ai_addrlen, timeout, c->error,
		    sizeof(c->error))) >= 0) {
			c->error[0] = '\0';
			freeaddrinfo(res);
			return 0;
		}
	}
	freeaddrinfo(res);
	if (c->error[0] == '\0' && refused != NULL) {
		/* a private network: what a pattern does not reach, and what does */
		if (pattern_only)
			snprintf(c->said, sizeof(c->said), "%s resolves to %s, which a pattern "
			    "rule ('%.100s') does not reach: a network.allow rule naming the host "
			    "exactly, or the address, does", c->host, refused, c->v.rule != NULL ?
			    c->v.rule->text : "?");
		else
			snprintf(c->said, sizeof(c->said), "%s resolves to %s, which only a "
			    "network.allow rule naming that address reaches", c->host, refused);
		snprintf(c->reason, sizeof(c->reason), "%.440s (%s)", c->said, c->address);
		return -2;
	}
	if (c->error[0] == '\0')
		snprintf(c->error, sizeof(c->error), "%s has no IPv4 or IPv6 address", c->host);
	return -1;
}

/* ---- the relay ------------------------------------------------------------ */

struct half {
	int		 from, to;
	int		 p[2];		/* the bytes in between, in the kernel */
	size_t		 inpipe, cap;	/* in the pipe; its size */
	int		 full;		/* the pipe took nothing more: wait for the writer
					 * (its slots, not its bytes, may be what ran out) */
	long long	 left;		/* bytes this direction may still carry; -1 any */
	int		 eof;		/* from said EOF (or may say nothing more) */
	unsigned long long *count;
};

#define SPLICE_FLAGS	(SPLICE_F_NONBLOCK | SPLICE_F_MOVE)

/*
 * Move bytes both ways until both directions are done, socket to pipe to
 * socket with splice(2): the bytes never enter the proxy's memory, which
 * costs about a third of the CPU a copy through a buffer does.  A plain
 * HTTP request's client side carries only its body (left), then nothing.
 */
static void
relay(struct conn *c, long long client_left)
{
	struct half h[2] = {
		{ c->cfd, c->ufd, { -1, -1 }, 0, 0, 0, client_left, client_left == 0, &c->up },
		{ c->ufd, c->cfd, { -1, -1 }, 0, 0, 0, -1, 0, &c->down },
	};
	int i, n, done[2] = { 0, 0 };

	for (i = 0; i < 2; i++) {
		if (pipe2(h[i].p, O_CLOEXEC | O_NONBLOCK) < 0) {
			snprintf(c->error, sizeof(c->error), "pipe: %s", strerror(errno));
			goto out;
		}
		/* the account's pipe pages may be short: then the default */
		(void)fcntl(h[i].p[1], F_SETPIPE_SZ, RELAY_BUF);
		n = fcntl(h[i].p[1], F_GETPIPE_SZ);
		h[i].cap = n > 0 ? (size_t)n : 4096;
	}
	(void)fcntl(c->cfd, F_SETFL, fcntl(c->cfd, F_GETFL) | O_NONBLOCK);
	(void)fcntl(c->ufd, F_SETFL, fcntl(c->ufd, F_GETFL) | O_NONBLOCK);
	while (!done[0] || !done[1]) {
		struct pollfd pf[2];

		if (stopping)
			break;
		memset(pf, 0, sizeof(pf));
		pf[0].fd = c->cfd;
		pf[1].fd = c->ufd;
		for (i = 0; i < 2; i++) {
			int fi = h[i].from == c->cfd ? 0 : 1, ti = 1 - fi;

			if (done[i])
				continue;
			if (h[i].inpipe > 0)
				pf[ti].events |= POLLOUT;
			if (!h[i].eof && !h[i].full && h[i].inpipe < h[i].cap)
				pf[fi].events |= POLLIN;
		}
		if ((n = poll(pf, 2, -1)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* a side we wait on for nothing hung up or failed: what is left
		 * can reach no one (poll reports it whatever events asked for,
		 * so without this the loop would spin) */
		if ((pf[0].events == 0 && (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))) ||
		    (pf[1].events == 0 && (pf[1].revents & (POLLHUP | POLLERR | POLLNVAL))))
			break;
		for (i = 0; i < 2; i++) {
			struct half *x = &h[i];
			int fi = x->from == c->cfd ? 0 : 1, ti = 1 - fi;

			if (done[i])
				continue;
			if (!x->eof && !x->full && x->inpipe < x->cap &&
			    (pf[fi].revents & (POLLIN | POLLHUP | POLLERR))) {
				size_t want = x->cap - x->inpipe;
				ssize_t r;

				if (x->left >= 0 && (unsigned long long)x->left < want)
					want = (size_t)x->left;
				r = want > 0 ? splice(x->from, NULL, x->p[1], NULL, want, SPLICE_FLAGS) : 0;
				if (r > 0) {
					x->inpipe += (size_t)r;
					if (x->left > 0)
						x->left -= r;
				} else if (r < 0 && errno == EAGAIN && x->inpipe > 0)
					x->full = 1;
				else if (r == 0 || (errno != EAGAIN && errno != EINTR))
					x->eof = 1;
			}
			if (x->inpipe > 0 && (pf[ti].revents & (POLLOUT | POLLERR | POLLHUP))) {
				ssize_t w = splice(x->p[0], NULL, x->to, NULL, x->inpipe, SPLICE_FLAGS);

				if (w > 0) {
					x->inpipe -= (size_t)w;
					x->full = 0;
					*x->count += (unsigned long long)w;
				} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
					/* the reader is gone: nothing more goes either way */
					done[0] = done[1] = 1;
					break;
				}
			}
			if (x->left == 0)
				x->eof = 1;
			if (x->eof && x->inpipe == 0 && !done[i]) {
				done[i] = 1;
				/* a plain request's client is not half-closed: it waits
				 * for the answer with its side open */
				if (i == 1 || client_left < 0)
					(void)shutdown(x->to, SHUT_WR);
			}
		}
		/* the host answered in full: the request's connection is over */
		if (done[1] && client_left >= 0)
			break;
	}
out:
	for (i = 0; i < 2; i++) {
		if (h[i].p[0] >= 0)
			close(h[i].p[0]);
		if (h[i].p[1] >= 0)
			close(h[i].p[1]);
	}
}

/* The head forwarded for a plain HTTP request: origin-form, one request. */
static int
forward_head(struct conn *c)
{
	char out[HEAD_MAX + 256];
	size_t o;
	const char *p = strstr(c->head, "\r\n") + 2, *end = c->head + c->headlen - 2;
	int n = snprintf(out, sizeof(out), "%s %s HTTP/1.1\r\n", c->method, c->path);

	if (n < 0 || (size_t)n >= sizeof(out))
		return -1;
	o = (size_t)n;
	while (p < end) {
		const char *eol = strstr(p, "\r\n");
		size_t ll;

		if (eol == NULL || eol > end)
			break;
		ll = (size_t)(eol - p) + 2;
		if (strncasecmp(p, "Proxy-", 6) != 0 && strncasecmp(p, "Connection:", 11) != 0 &&
		    strncasecmp(p, "Keep-Alive:", 11) != 0) {
			if (o + ll >= sizeof(out))
				return -1;
			memcpy(out + o, p, ll);
			o += ll;
		}
		p = eol + 2;
	}
	n = snprintf(out + o, sizeof(out) - o, "Connection: close\r\n\r\n");
	if (n < 0 || (size_t)n >= sizeof(out) - o)
		return -1;
	o += (size_t)n;
	if (write_all(c->ufd, out, o) < 0)
		return -1;
	c->up += o;
	return 0;
}

/* ---- one connection ------------------------------------------------------- */

void
ag_egress_conn_busy(const struct egress_ctx *ctx, int fd, unsigned long seq, int max,
    unsigned long quiet)
{
	struct conn c;
	char line[600];

	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.seq = seq;
	c.cfd = fd;
	c.ufd = -1;
	clock_gettime(CLOCK_MONOTONIC, &c.start);
	snprintf(c.reason, sizeof(c.reason), "%d connections through the proxy are open "
	    "already (%lu more refused since the last such record)", max, quiet);
	snprintf(line, sizeof(line), "agentgate: refused a connection: %s", c.reason);
	refuse(&c, line);
	close(fd);
}

void
ag_egress_conn(const struct egress_ctx *ctx, int fd, unsigned long seq)
{
	struct conn *c = calloc(1, sizeof(*c));
	unsigned char first;
	int status = 400, rep = 1, rc;
	ssize_t r;

	if (c == NULL) {
		close(fd);
		return;
	}
	c->ctx = ctx;
	c->cfd = fd;
	c->ufd = -1;
	c->seq = seq;
	c->body = -1;
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	table_put(c, 1);
	if (stopping)
		(void)shutdown(fd, SHUT_RDWR);
	if ((r = read_within(fd, &first, 0, REQ_TIMEOUT_MS)) < 0 ||
	    recv(fd, &first, 1, MSG_PEEK) != 1)
		goto out;
	if (first == 0x05) {
		if (read_socks(c, &rep) < 0) {
			if (c->reason[0] == '\0')
				snprintf(c->reason, sizeof(c->reason), "a malformed SOCKS5 request");
			answer_socks(c, rep);
			c->decision = "deny";
			record(c);
			goto out;
		}
	} else if (read_http(c, &status) < 0) {
		char line[1000];

		snprintf(line, sizeof(line), "agentgate: refused a proxy request%s%s: %s",
		    c->host[0] ? " to " : "", c->host, c->reason);
		refuse(c, line);
		answer_http(c, status, line);
		goto out;
	}
	if (!host_plain(c)) {
		char line[700];

		snprintf(line, sizeof(line), "agentgate: refused a proxy request: %s", c->reason);
		refuse(c, line);
		if (c->proto == P_SOCKS)
			answer_socks(c, 2);
		else
			answer_http(c, 400, line);
		goto out;
	}
	if (!ag_net_judge(ctx->p, c->host, c->port, c->proto == P_HTTP ? c->method : NULL,
	    c->proto == P_HTTP ? c->path : NULL, &c->v)) {
		char allowed[400], text[1400], hp[300];

		refuse_host(c);
		ag_net_allowed_text(ctx->p, allowed, sizeof(allowed));
		snprintf(text, sizeof(text), "agentgate: blocked connection to %s: %s "
		    "(allowed here: %s)", hostport(c, hp, sizeof(hp)), c->v.reason, allowed);
		if (c->proto == P_SOCKS)
			answer_socks(c, 2);
		else
			answer_http(c, 403, text);
		goto out;
	}
	snprintf(c->reason, sizeof(c->reason), "%s", c->v.reason);
	__atomic_store_n(&c->pending, 1, __ATOMIC_SEQ_CST);
	rc = open_upstream(c);
	{
		int was = 1;

		/* the proxy stopped meanwhile and wrote the record */
		if (!__atomic_compare_exchange_n(&c->pending, &was, 0, 0, __ATOMIC_SEQ_CST,
		    __ATOMIC_SEQ_CST))
			goto out;
	}
	if (rc == -2) {
		char line[1200], hp[300];

		/* the agent's text names no address: that would make the proxy
		 * tell what any name under a pattern resolves to */
		snprintf(line, sizeof(line), "agentgate: blocked connection to %s: %s",
		    hostport(c, hp, sizeof(hp)), c->said);
		refuse(c, line);
		if (c->proto == P_SOCKS)
			answer_socks(c, 2);
		else
			answer_http(c, 403, line);
		goto out;
	}
	c->decision = "allow";
	if (rc < 0) {
		char line[1000], hp[300];

		snprintf(line, sizeof(line), "agentgate: %s: %s", hostport(c, hp, sizeof(hp)),
		    c->error);
		{
			char said[1200];

			snprintf(said, sizeof(said), "agentgate: %s is allowed here, but the "
			    "gateway could not reach it: %s", hp, c->error);
			report(c, said);
		}
		if (c->proto == P_SOCKS)
			answer_socks(c, strncmp(c->error, "cannot resolve", 14) == 0 ? 4 : 5);
		else
			answer_http(c, strstr(c->error, "timed out") ? 504 : 502, line);
		record(c);
		goto out;
	}
	if (c->proto == P_SOCKS)
		answer_socks(c, 0);
	else if (c->proto == P_CONNECT) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		(void)write_all(c->cfd, ok, sizeof(ok) - 1);
	}
	if (c->proto == P_HTTP) {
		size_t extra = c->got - c->headlen;
		long long left = c->body;

		if (forward_head(c) < 0)
			goto done;
		if ((long long)extra > left)
			extra = (size_t)left;	/* a second request behind it: dropped */
		if (extra > 0 && write_all(c->ufd, c->head + c->headlen, extra) < 0)
			goto done;
		c->up += extra;
		relay(c, left - (long long)extra);
	} else {
		/* bytes sent right behind CONNECT (a TLS hello) go through */
		if (c->got > c->headlen && write_all(c->ufd, c->head + c->headlen,
		    c->got - c->headlen) < 0)
			goto done;
		c->up += c->got > c->headlen ? c->got - c->headlen : 0;
		relay(c, -1);
	}
done:
	record(c);
out:
	table_put(c, 0);
	if (c->ufd >= 0)
		close(c->ufd);
	close(c->cfd);
	free(c);
}

void
ag_egress_conn_stop_all(void)
{
	size_t i;

	pthread_mutex_lock(&table_mu);
	stopping = 1;
	for (i = 0; i < AG_EGRESS_MAX_CONN; i++)
		if (table[i] != NULL) {
			(void)shutdown(table[i]->cfd, SHUT_RDWR);
			if (table[i]->ufd >= 0)
				(void)shutdown(table[i]->ufd, SHUT_RDWR);
		}
	pthread_mutex_unlock(&table_mu);
}

void
ag_egress_conn_record_pending(void)
{
	size_t i;

	pthread_mutex_lock(&table_mu);
	for (i = 0; i < AG_EGRESS_MAX_CONN; i++) {
		int was = 1;

		/* its thread is in the resolver or connect(2): what it has read
		 * and judged stays as it is; the rest is its own */
		if (table[i] != NULL && __atomic_compare_exchange_n(&table[i]->pending, &was, 2, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			record_as(table[i], 0, "allow", table[i]->v.reason, "the session ended "
			    "while the proxy was resolving the name or connecting to it");
	}
	pthread_mutex_unlock(&table_mu);
}
