/*
 * http.c - hardened HTTP POSTs over libcurl (see http.h).
 */
#include "agconfig.h"

#include <curl/curl.h>
#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/http.h"

struct ag_http {
	CURL			*curl;
	char			*url;		/* where POSTs go */
	struct curl_slist	*headers;
	long			 connect_ms;	/* at most this to connect */
	long			 total_ms;	/* ag_http_post's budget */
};

int
ag_http_same_origin(const char *base, const char *url)
{
	static const CURLUPart parts[] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
	CURLU *a = curl_url(), *b = curl_url();
	size_t i;
	int same = a != NULL && b != NULL &&
	    curl_url_set(a, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(b, CURLUPART_URL, url, 0) == CURLUE_OK;

	for (i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		char *x = NULL, *y = NULL;

		/* the port as the scheme implies it when not written */
		same = curl_url_get(a, parts[i], &x, CURLU_DEFAULT_PORT) == CURLUE_OK &&
		    curl_url_get(b, parts[i], &y, CURLU_DEFAULT_PORT) == CURLUE_OK &&
		    strcasecmp(x, y) == 0;
		curl_free(x);
		curl_free(y);
	}
	curl_url_cleanup(a);
	curl_url_cleanup(b);
	return same;
}

void
ag_http_shown_url(const char *url, char *out, size_t len)
{
	CURLU *h = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

	snprintf(out, len, "(the server)");
	if (h == NULL)
		return;
	if (curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		(void)curl_url_get(h, CURLUPART_PORT, &port, 0);
		(void)curl_url_get(h, CURLUPART_PATH, &path, 0);
		snprintf(out, len, "%s://%s%s%s%s", scheme, host, port != NULL ? ":" : "",
		    port != NULL ? port : "", path != NULL ? path : "");
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(h);
}

struct ag_http *
ag_http_new(const char *url, const char *content_type, long connect_ms, long total_ms,
    char *why, size_t whylen)
{
	static int global_done;
	struct ag_http *h;
	struct curl_slist *l;
	char ct[128];

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(why, whylen, "cannot initialise libcurl");
			return NULL;
		}
		global_done = 1;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL || (h->curl = curl_easy_init()) == NULL)
		goto oom;
	h->connect_ms = connect_ms;
	h->total_ms = total_ms;
	if ((h->url = strdup(url)) == NULL)
		goto oom;
	snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
	if ((l = curl_slist_append(NULL, ct)) == NULL)
		goto oom;
	h->headers = l;
	/* "Expect:" stops libcurl waiting a second for 100-continue on big bodies */
	if ((l = curl_slist_append(h->headers, "Expect:")) == NULL)
		goto oom;
	h->headers = l;
	if (curl_easy_setopt(h->curl, CURLOPT_URL, url) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
	    curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS,
		(long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK ||
#endif
	    curl_easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, total_ms) != CURLE_OK ||
	    /* no SIGALRM games under the session's own handlers */
	    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    /* the session's environment (http_proxy, ...) must not reroute us */
	    curl_easy_setopt(h->curl, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION) !=
	    CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POST, 1L) != CURLE_OK) {
		snprintf(why, whylen, "libcurl refused an option");
		ag_http_free(h);
		return NULL;
	}
	return h;
oom:
	snprintf(why, whylen, "out of memory");
	ag_http_free(h);
	return NULL;
}

/* What an exchange gathers while libcurl reads the answer. */
struct sink {
	char	*buf;
	size_t	 len, size;	/* size: allocated */
	size_t	 cap;		/* most kept; 0: read and drop */
	int	 over;		/* the answer passed cap */
	long	 retry_after_ms;
};

static size_t
keep(char *p, size_t size, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t add = size * n;
	char *nb;

	if (k->cap == 0)
		return add;
	if (add > k->cap - k->len) {
		k->over = 1;
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	}
	if (k->len + add + 1 > k->size) {
		size_t want = k->size ? k->size : 4096;

		while (want < k->len + add + 1)
			want *= 2;
		if ((nb = realloc(k->buf, want)) == NULL)
			return 0;
		k->buf = nb;
		k->size = want;
	}
	memcpy(k->buf + k->len, p, add);
	k->len += add;
	k->buf[k->len] = '\0';
	return add;
}

/* Retry-After in its seconds form; a date is treated as absent. */
static size_t
header(char *p, size_t size, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t len = size * n, i = 12;
	long v = 0;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i < len && isdigit((unsigned char)p[i])) {
			for (; i < len && isdigit((unsigned char)p[i]) && v < 86400; i++)
				v = v * 10 + (p[i] - '0');
			k->retry_after_ms = v * 1000;
		}
	}
	return len;
}

const char *
ag_http_fail_name(enum ag_http_fail f)
{
	static const char *const names[] = { "ok", "dns", "connect", "tls", "timeout",
	    "too-big", "http-status", "transport" };

	return (size_t)f < sizeof(names) / sizeof(names[0]) ? names[f] : "transport";
}

static enum ag_http_fail
fail_of(CURLcode rc, int over)
{
	if (over)
		return AG_HTTP_TOO_BIG;
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return AG_HTTP_DNS;
	case CURLE_COULDNT_CONNECT:
		return AG_HTTP_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return AG_HTTP_TIMEOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_USE_SSL_FAILED:
		return AG_HTTP_TLS;
	default:
		return AG_HTTP_TRANSPORT;
	}
}

static enum ag_http_fail perform(struct ag_http *h, const char *get_url,
    const char *const *headers, const char *body, size_t n, long total_ms, size_t cap,
    struct ag_http_reply *r, char *why, size_t whylen);

enum ag_http_fail
ag_http_exchange(struct ag_http *h, const char *const *headers, const char *body, size_t n,
    long total_ms, size_t cap, struct ag_http_reply *r, char *why, size_t whylen)
{
	return perform(h, NULL, headers, body, n, total_ms, cap, r, why, whylen);
}

enum ag_http_fail
ag_http_get(struct ag_http *h, const char *url, const char *const *headers, long total_ms,
    size_t cap, struct ag_http_reply *r, char *why, size_t whylen)
{
	return perform(h, url, headers, NULL, 0, total_ms, cap, r, why, whylen);
}

/* One request: a POST of body to the client's URL, or a GET of get_url. */
static enum ag_http_fail
perform(struct ag_http *h, const char *get_url, const char *const *headers, const char *body,
    size_t n, long total_ms, size_t cap, struct ag_http_reply *r, char *why, size_t whylen)
{
	char ebuf[CURL_ERROR_SIZE];
	struct sigaction ign, old;
	struct curl_slist *l = NULL, *t;
	struct sink k;
	CURLcode rc;
	long code = 0;
	size_t i;
	enum ag_http_fail f = AG_HTTP_OK;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	memset(&k, 0, sizeof(k));
	k.cap = cap;
	k.retry_after_ms = -1;
	ebuf[0] = '\0';
	for (t = h->headers; t != NULL; t = t->next)
		if ((l = curl_slist_append(l, t->data)) == NULL)
			goto oom;
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		if ((t = curl_slist_append(l, headers[i])) == NULL)
			goto oom;
		else
			l = t;
	if (total_ms < 1)
		total_ms = 1;
	if (curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, ebuf) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, l) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, total_ms) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
		h->connect_ms < total_ms ? h->connect_ms : total_ms) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, keep) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &k) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, header) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, &k) != CURLE_OK ||
	    (get_url != NULL ?
	    curl_easy_setopt(h->curl, CURLOPT_URL, get_url) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L) != CURLE_OK :
	    curl_easy_setopt(h->curl, CURLOPT_URL, h->url) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK)) {
		snprintf(why, whylen, "libcurl refused an option");
		f = AG_HTTP_TRANSPORT;
		goto out;
	}
	/* a server that hangs up must not kill the session with SIGPIPE */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	(void)sigaction(SIGPIPE, &ign, &old);
	rc = curl_easy_perform(h->curl);
	(void)sigaction(SIGPIPE, &old, NULL);
	(void)curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &code);
	r->status = code;
	r->retry_after_ms = k.retry_after_ms;
	if (rc != CURLE_OK) {
		f = fail_of(rc, k.over);
		if (f == AG_HTTP_TOO_BIG)
			snprintf(why, whylen, "the answer is longer than %zu bytes", cap);
		else
			snprintf(why, whylen, "%s", ebuf[0] != '\0' ? ebuf : curl_easy_strerror(rc));
		goto out;
	}
	if (code < 200 || code > 299) {
		snprintf(why, whylen, "answered HTTP %ld", code);
		f = AG_HTTP_STATUS;
	}
out:
	r->body = k.buf;
	r->len = k.len;
	k.buf = NULL;
	/* the list may hold a key: nothing of it outlives the request */
	(void)curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	(void)curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, NULL);
	for (t = l; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	curl_slist_free_all(l);
	return f;
oom:
	snprintf(why, whylen, "out of memory");
	for (t = l; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	curl_slist_free_all(l);
	return AG_HTTP_TRANSPORT;
}

void
ag_http_reply_free(struct ag_http_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

int
ag_http_post(struct ag_http *h, const char *body, size_t n, long *status, char *why,
    size_t whylen)
{
	struct ag_http_reply r;
	enum ag_http_fail f;

	f = ag_http_exchange(h, NULL, body, n, h->total_ms, 0, &r, why, whylen);
	*status = r.status;
	ag_http_reply_free(&r);
	return f == AG_HTTP_OK ? 0 : -1;
}

void
ag_http_free(struct ag_http *h)
{
	if (h == NULL)
		return;
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h->url);
	free(h);
}
