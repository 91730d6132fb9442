/*
 * bench_validator.c - what the ask stage (src/validate/) adds around the
 * validator's HTTP round trip.
 *
 *   contrib/bench/bench_validator [N] [ROUNDS]
 *
 * A small HTTP/1.1 server in a thread of this process answers every POST
 * with the same Chat Completions envelope (keep-alive, no work), so its
 * own latency is as small and as steady as a server's can be.  Then, in
 * ROUNDS interleaved rounds of N calls each:
 *
 *   baseline  libcurl alone: the same request body POSTed on one kept-alive
 *             connection, the answer read and dropped;
 *   ask       ag_ask() with a different command each call (no cache hit):
 *             the request document, the envelope, the POST, unwrapping and
 *             judging the answer;
 *   cached    ag_ask() with one command again and again (every call a hit).
 *
 * Prints the mean wall time per call of each, ask minus baseline (the
 * stage's own cost per asked command; the target is under 1 ms)
 * and the cached call's time (target under 10 us).  Not a test: no
 * thresholds.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "policy/policy.h"
#include "validate/validator.h"

static const char answer[] =
    "{\"id\":\"c\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
    "{\"role\":\"assistant\",\"content\":\"{\\\"decision\\\":\\\"allow\\\",\\\"reason\\\":"
    "\\\"fine\\\",\\\"confidence\\\":0.9}\",\"refusal\":null},\"finish_reason\":\"stop\"}]}";

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One connection: read a request (headers, then Content-Length bytes), answer. */
static void *
serve_conn(void *arg)
{
	int fd = (int)(long)arg;
	char buf[1 << 16], out[1024];
	size_t have = 0;
	int ol, one = 1;

	/* one write per answer, sent at once: no delayed-ACK stalls to measure */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ol = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", sizeof(answer) - 1, answer);
	for (;;) {
		char *end;
		ssize_t r;
		size_t need;
		const char *cl;

		while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
			if (have == sizeof(buf) || (r = read(fd, buf + have, sizeof(buf) - have)) <= 0)
				goto out;
			have += (size_t)r;
		}
		*end = '\0';
		cl = strcasestr(buf, "content-length:");
		need = (size_t)(end + 4 - buf) + (cl != NULL ? strtoul(cl + 15, NULL, 10) : 0);
		if (need > sizeof(buf))
			goto out;
		while (have < need) {
			if ((r = read(fd, buf + have, sizeof(buf) - have)) <= 0)
				goto out;
			have += (size_t)r;
		}
		if (write(fd, out, (size_t)ol) != ol)
			goto out;
		memmove(buf, buf + need, have - need);
		have -= need;
	}
out:
	close(fd);
	return NULL;
}

static void *
serve(void *arg)
{
	int ls = (int)(long)arg;

	for (;;) {
		pthread_t t;
		int fd = accept(ls, NULL, NULL);

		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, serve_conn, (void *)(long)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
	return NULL;
}

static size_t
drop(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, rounds = argc > 2 ? atoi(argv[2]) : 5;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct ag_validator v;
	struct ag_profile p;
	struct ag_decision d;
	struct ag_ask *a;
	struct ag_ask_result r;
	struct ag_err err;
	pthread_t th;
	char url[128], cmd[64], *body;
	char vname[] = "bench", model[] = "m", pname[] = "developer";
	double t_base = 0, t_ask = 0, t_hit = 0, t0;
	long seq = 0;
	int ls, i, k;
	CURL *c;

	if (n < 1 || rounds < 1)
		return 2;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 16) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) < 0 ||
	    pthread_create(&th, NULL, serve, (void *)(long)ls) != 0) {
		perror("bench_validator: server");
		return 1;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", ntohs(sa.sin_port));

	memset(&v, 0, sizeof(v));
	v.name = vname;
	v.url = url;
	v.kind = AG_VK_OPENAI;
	v.model = model;
	v.timeout_ms = 10000;
	v.max_command_bytes = 8192;
	v.max_answer_bytes = 65536;
	v.max_per_minute = 0;
	memset(&p, 0, sizeof(p));
	p.name = pname;
	p.tier = AG_TIER_DEVELOPER;
	memset(&d, 0, sizeof(d));
	d.verdict = AG_ASK;
	ag_err_clear(&err);
	if ((a = ag_ask_new(&v, &p, 0, &err)) == NULL) {
		fprintf(stderr, "bench_validator: %s\n", err.msg);
		return 1;
	}
	/* the baseline sends the body the stage would send */
	body = ag_ask_request_doc(a, "uname -a", 8, "/home/agent/work", &d, NULL, &err);
	c = curl_easy_init();
	if (body == NULL || c == NULL)
		return 1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	/* warm both connections up */
	curl_easy_perform(c);
	ag_ask(a, "uname -a", 8, "/home/agent/work", &d, NULL, &r);
	if (!r.allow) {
		fprintf(stderr, "bench_validator: the stage did not get the answer: %s\n", r.error);
		return 1;
	}
	for (k = 0; k < rounds; k++) {
		t0 = now_us();
		for (i = 0; i < n; i++)
			curl_easy_perform(c);
		t_base += now_us() - t0;
		t0 = now_us();
		for (i = 0; i < n; i++) {
			int len = snprintf(cmd, sizeof(cmd), "uname -a # %ld", ++seq);

			ag_ask(a, cmd, (size_t)len, "/home/agent/work", &d, NULL, &r);
		}
		t_ask += now_us() - t0;
		t0 = now_us();
		for (i = 0; i < n; i++)
			ag_ask(a, "uname -a", 8, "/home/agent/work", &d, NULL, &r);
		t_hit += now_us() - t0;
		if (!r.cache_hit) {
			fprintf(stderr, "bench_validator: the repeated command missed the cache\n");
			return 1;
		}
	}
	t_base /= (double)n * rounds;
	t_ask /= (double)n * rounds;
	t_hit /= (double)n * rounds;
	printf("per call, mean of %d x %d (wall time, us):\n", rounds, n);
	printf("  baseline: libcurl POST, kept-alive     %9.1f\n", t_base);
	printf("  ask:      the stage, cache miss         %9.1f\n", t_ask);
	printf("  stage's own cost (ask - baseline)       %9.1f   (%.2fx the baseline)\n",
	    t_ask - t_base, t_ask / t_base);
	printf("  cached:   the stage, cache hit          %9.2f\n", t_hit);
	curl_easy_cleanup(c);
	free(body);
	ag_ask_free(a);
	return 0;
}
