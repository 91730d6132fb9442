/*
 * http.c - hardened HTTP POSTs over libcurl (see http.h).
 */
#include "agconfig.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"

struct ag_http {
	CURL			*curl;
	struct curl_slist	*headers;
};

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

/* The answer is not read: a status code is all that counts. */
static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
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
	    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ||
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

int
ag_http_post(struct ag_http *h, const char *body, size_t n, long *status, char *why,
    size_t whylen)
{
	char ebuf[CURL_ERROR_SIZE];
	struct sigaction ign, old;
	CURLcode rc;
	long code = 0;

	*status = 0;
	ebuf[0] = '\0';
	if (curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, ebuf) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n) != CURLE_OK ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK) {
		snprintf(why, whylen, "libcurl refused an option");
		return -1;
	}
	/* a server that hangs up must not kill the session with SIGPIPE */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	(void)sigaction(SIGPIPE, &ign, &old);
	rc = curl_easy_perform(h->curl);
	(void)sigaction(SIGPIPE, &old, NULL);
	(void)curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", ebuf[0] != '\0' ? ebuf : curl_easy_strerror(rc));
		return -1;
	}
	(void)curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &code);
	*status = code;
	if (code < 200 || code > 299) {
		snprintf(why, whylen, "answered HTTP %ld", code);
		return -1;
	}
	return 0;
}

void
ag_http_free(struct ag_http *h)
{
	if (h == NULL)
		return;
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h);
}
