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

void	ag_http_free(struct ag_http *h);

/* url without credentials or query, for messages; "(the server)" if unparsable. */
void	ag_http_shown_url(const char *url, char *out, size_t len);

#endif
