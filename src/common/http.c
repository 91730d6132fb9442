/*
 * http.c - hardened HTTP POSTs over libcurl (see http.h).
 */
#include "agconfig.h"

#include <curl/curl.h>
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/http.h"
#include "common/lazylib.h"

/*
 * libcurl, and what it pulls in (TLS, HTTP/2, IDN, LDAP, Kerberos...), is
 * most of the gateway's shared libraries, and most sessions never make an
 * HTTP request: it is loaded the first time one is made (lazylib.h).
 */
static struct ag_lazylib curl_lib = { "libcurl.so.4", 0, "" };
static int curl_ready;		/* 1 initialised, -1 failed, 0 not yet */

static struct {
	__typeof__(curl_global_init)	*global_init;
	__typeof__(curl_easy_init)	*easy_init;
	__typeof__(curl_easy_setopt)	*easy_setopt;
	__typeof__(curl_easy_perform)	*easy_perform;
	__typeof__(curl_easy_getinfo)	*easy_getinfo;
	__typeof__(curl_easy_cleanup)	*easy_cleanup;
	__typeof__(curl_easy_strerror)	*easy_strerror;
	__typeof__(curl_free)		*free_;
	__typeof__(curl_slist_append)	*slist_append;
	__typeof__(curl_slist_free_all)	*slist_free_all;
	__typeof__(curl_url)		*url;
	__typeof__(curl_url_cleanup)	*url_cleanup;
	__typeof__(curl_url_get)	*url_get;
	__typeof__(curl_url_set)	*url_set;
} lc;

/* 0 once libcurl is there and initialised; -1 with curl_lib.why when not. */
static int
curl_load(void)
{
#define SYM(f, m)	AG_LAZYSYM(__typeof__(lc), f, m)
	static const struct ag_lazysym sym[] = {
		SYM(curl_global_init, global_init), SYM(curl_easy_init, easy_init),
		SYM(curl_easy_setopt, easy_setopt), SYM(curl_easy_perform, easy_perform),
		SYM(curl_easy_getinfo, easy_getinfo), SYM(curl_easy_cleanup, easy_cleanup),
		SYM(curl_easy_strerror, easy_strerror), SYM(curl_free, free_),
		SYM(curl_slist_append, slist_append), SYM(curl_slist_free_all, slist_free_all),
		SYM(curl_url, url), SYM(curl_url_cleanup, url_cleanup),
		SYM(curl_url_get, url_get), SYM(curl_url_set, url_set),
	};
#undef SYM

	if (curl_ready == 0) {
		curl_ready = -1;
		if (ag_lazylib_load(&curl_lib, sym, sizeof(sym) / sizeof(sym[0]), &lc) < 0)
			return -1;
		if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(curl_lib.why, sizeof(curl_lib.why), "cannot initialise libcurl");
			return -1;
		}
		curl_ready = 1;
	}
	return curl_ready > 0 ? 0 : -1;
}

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
	CURLU *a, *b;
	size_t i;
	int same;

	if (curl_load() < 0)
		return 0;	/* not known to be the same: fails closed */
	a = lc.url();
	b = lc.url();
	same = a != NULL && b != NULL &&
	    lc.url_set(a, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    lc.url_set(b, CURLUPART_URL, url, 0) == CURLUE_OK;

	for (i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		char *x = NULL, *y = NULL;

		/* the port as the scheme implies it when not written */
		same = lc.url_get(a, parts[i], &x, CURLU_DEFAULT_PORT) == CURLUE_OK &&
		    lc.url_get(b, parts[i], &y, CURLU_DEFAULT_PORT) == CURLUE_OK &&
		    strcasecmp(x, y) == 0;
		lc.free_(x);
		lc.free_(y);
	}
	lc.url_cleanup(a);
	lc.url_cleanup(b);
	return same;
}

void
ag_http_shown_url(const char *url, char *out, size_t len)
{
	CURLU *h;
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

	snprintf(out, len, "(the server)");
	if (curl_load() < 0 || (h = lc.url()) == NULL)
		return;
	if (lc.url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    lc.url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    lc.url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		(void)lc.url_get(h, CURLUPART_PORT, &port, 0);
		(void)lc.url_get(h, CURLUPART_PATH, &path, 0);
		snprintf(out, len, "%s://%s%s%s%s", scheme, host, port != NULL ? ":" : "",
		    port != NULL ? port : "", path != NULL ? path : "");
	}
	lc.free_(scheme);
	lc.free_(host);
	lc.free_(port);
	lc.free_(path);
	lc.url_cleanup(h);
}

struct ag_http *
ag_http_new(const char *url, const char *content_type, long connect_ms, long total_ms,
    char *why, size_t whylen)
{
	struct ag_http *h = NULL;
	struct curl_slist *l;
	char ct[128];

	if (curl_load() < 0) {
		snprintf(why, whylen, "%s", curl_lib.why);
		return NULL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL || (h->curl = lc.easy_init()) == NULL)
		goto oom;
	h->connect_ms = connect_ms;
	h->total_ms = total_ms;
	if ((h->url = strdup(url)) == NULL)
		goto oom;
	snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
	if ((l = lc.slist_append(NULL, ct)) == NULL)
		goto oom;
	h->headers = l;
	/* "Expect:" stops libcurl waiting a second for 100-continue on big bodies */
	if ((l = lc.slist_append(h->headers, "Expect:")) == NULL)
		goto oom;
	h->headers = l;
	if (lc.easy_setopt(h->curl, CURLOPT_URL, url) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    lc.easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
	    lc.easy_setopt(h->curl, CURLOPT_PROTOCOLS,
		(long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK ||
#endif
	    lc.easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, total_ms) != CURLE_OK ||
	    /* no SIGALRM games under the session's own handlers */
	    lc.easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    /* the session's environment (http_proxy, ...) must not reroute us */
	    lc.easy_setopt(h->curl, CURLOPT_PROXY, "") != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION) !=
	    CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_POST, 1L) != CURLE_OK) {
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
		if ((l = lc.slist_append(l, t->data)) == NULL)
			goto oom;
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		if ((t = lc.slist_append(l, headers[i])) == NULL)
			goto oom;
		else
			l = t;
	if (total_ms < 1)
		total_ms = 1;
	if (lc.easy_setopt(h->curl, CURLOPT_ERRORBUFFER, ebuf) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_HTTPHEADER, l) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, total_ms) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
		h->connect_ms < total_ms ? h->connect_ms : total_ms) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, keep) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_WRITEDATA, &k) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, header) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_HEADERDATA, &k) != CURLE_OK ||
	    (get_url != NULL ?
	    lc.easy_setopt(h->curl, CURLOPT_URL, get_url) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_HTTPGET, 1L) != CURLE_OK :
	    lc.easy_setopt(h->curl, CURLOPT_URL, h->url) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_POST, 1L) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n) != CURLE_OK ||
	    lc.easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK)) {
		snprintf(why, whylen, "libcurl refused an option");
		f = AG_HTTP_TRANSPORT;
		goto out;
	}
	/* a server that hangs up must not kill the session with SIGPIPE */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	(void)sigaction(SIGPIPE, &ign, &old);
	rc = lc.easy_perform(h->curl);
	(void)sigaction(SIGPIPE, &old, NULL);
	(void)lc.easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &code);
	r->status = code;
	r->retry_after_ms = k.retry_after_ms;
	if (rc != CURLE_OK) {
		f = fail_of(rc, k.over);
		if (f == AG_HTTP_TOO_BIG)
			snprintf(why, whylen, "the answer is longer than %zu bytes", cap);
		else
			snprintf(why, whylen, "%s", ebuf[0] != '\0' ? ebuf : lc.easy_strerror(rc));
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
	(void)lc.easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	(void)lc.easy_setopt(h->curl, CURLOPT_ERRORBUFFER, NULL);
	for (t = l; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	lc.slist_free_all(l);
	return f;
oom:
	snprintf(why, whylen, "out of memory");
	for (t = l; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	lc.slist_free_all(l);
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
		lc.easy_cleanup(h->curl);
	lc.slist_free_all(h->headers);
	free(h->url);
	free(h);
}
