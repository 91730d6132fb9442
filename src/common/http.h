/*
 * http.h - the one way agentgate talks HTTP (libcurl): the audit collector
 * today, the validator next.  What makes a request safe to send from a
 * gateway is decided here once: http and https only, no redirects,
 * certificates verified, bounded connect and total time, no proxy taken
 * from the environment (the session's http_proxy must not reroute the
 * audit trail or the validator's key), no signals, SIGPIPE ignored while
 * the request runs.  Messages name the URL as ag_http_shown_url() shows
 * it: no user:password, no query (tokens travel there).
 */
#ifndef AG_HTTP_H
#define AG_HTTP_H

#include <stddef.h>

struct ag_http;

/*
 * A client for POSTs of content_type to url; NULL with why (out of memory,
 * libcurl refused an option).  connect_ms and total_ms bound each request.
 */
struct ag_http *ag_http_new(const char *url, const char *content_type, long connect_ms,
	    long total_ms, char *why, size_t whylen);

/*
 * POST body; the answer's body is read and dropped (a status is all that
 * counts here).  0 when the server answered 2xx; -1 with why (the
 * transport's error, or "answered HTTP 503").  *status gets the code, or 0.
 */
int	ag_http_post(struct ag_http *h, const char *body, size_t n, long *status, char *why,
	    size_t whylen);

/* Why an exchange failed, for callers that must name the class of failure. */
enum ag_http_fail {
	AG_HTTP_OK = 0,
	AG_HTTP_DNS,		/* the name did not resolve */
	AG_HTTP_CONNECT,	/* no connection */
	AG_HTTP_TLS,		/* handshake or certificate */
	AG_HTTP_TIMEOUT,	/* the time given ran out */
	AG_HTTP_TOO_BIG,	/* the answer passed the cap */
	AG_HTTP_STATUS,		/* answered, but not 2xx */
	AG_HTTP_TRANSPORT,	/* anything else on the way */
};
const char *ag_http_fail_name(enum ag_http_fail f);	/* "dns", "connect", ... */

/* One answer: its status and at most cap bytes of its body, NUL-terminated. */
struct ag_http_reply {
	long	 status;		/* 0 when none came */
	char	*body;			/* malloc'd; NULL when there was none */
	size_t	 len;
	long	 retry_after_ms;	/* Retry-After in seconds, as ms; -1 absent */
};

/*
 * POST body with the extra header lines (NULL-terminated, "Name: value";
 * they may hold a secret: they are copied into no message), giving the
 * whole exchange at most total_ms, and keep at most cap bytes of the
 * answer.  0 on a 2xx answer; otherwise the class of failure with why
 * (never the headers) and r filled with what came (free it either way
 * with ag_http_reply_free).
 */
enum ag_http_fail ag_http_exchange(struct ag_http *h, const char *const *headers,
	    const char *body, size_t n, long total_ms, size_t cap, struct ag_http_reply *r,
	    char *why, size_t whylen);
void	ag_http_reply_free(struct ag_http_reply *r);

/*
 * The same as ag_http_exchange, but a GET of url (another resource on the
 * client's server: the caller checks that it is) without a body.
 */
enum ag_http_fail ag_http_get(struct ag_http *h, const char *url, const char *const *headers,
	    long total_ms, size_t cap, struct ag_http_reply *r, char *why, size_t whylen);

/* 1 when url has the scheme, host and port of base. */
int	ag_http_same_origin(const char *base, const char *url);

void	ag_http_free(struct ag_http *h);

/* url without credentials or query, for messages; "(the server)" if unparsable. */
void	ag_http_shown_url(const char *url, char *out, size_t len);

#endif
