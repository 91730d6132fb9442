/*
 * test_stream.c - one output stream (src/exec/stream.c), as the pipe, PTY
 * and upstream relays feed it: what the client got and what the recording
 * holds, for a secret split across two writes, output over the cap (its
 * notice where and with the line ending the mode needs), a terminal's
 * pause, a client that went away, and the bytes a relay may move itself.
 */
#include "agconfig.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "exec/stream.h"
#include "record/recording.h"

#define ID	"0123456789abcdef0123456789abcdef"
#define SECRET	"AKIAIOSFODNN7EXAMPLE"

static char dir[] = "/tmp/ag-stream-test.XXXXXX";
static struct ag_profile redacting = { .redact = 1 };

/* A client the stream writes to at once (the pipe relay's writer). */
struct client {
	struct ag_strbuf	got;
	int			gone;	/* refuses every write */
};

static int
client_write(void *arg, const char *p, size_t n)
{
	struct client *c = arg;

	if (c->gone)
		return -1;
	return ag_strbuf_append(&c->got, p, n);
}

static struct ag_rec *
open_rec(void)
{
	struct ag_rec_info info = { .dir = dir, .session = ID, .width = 80, .height = 24 };
	char path[512];
	struct ag_err err;
	struct ag_rec *r;

	snprintf(path, sizeof(path), "%s/%s.cast", dir, ID);
	unlink(path);
	ag_err_clear(&err);
	r = ag_rec_open(&info, &err);
	assert_non_null(r);
	return r;
}

/* The "o" events of the recording, closed now, one after the other. */
static char *
recorded(struct ag_rec *r)
{
	struct ag_strbuf sb;
	struct ag_err err;
	char path[512], line[65536];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.cast", dir, ID);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_non_null(f = fopen(path, "r"));
	ag_strbuf_init(&sb, 0);
	assert_non_null(fgets(line, sizeof(line), f));		/* the header */
	while (fgets(line, sizeof(line), f) != NULL) {
		json_object *ev = json_tokener_parse(line);

		assert_non_null(ev);
		if (strcmp(json_object_get_string(json_object_array_get_idx(ev, 1)), "o") == 0) {
			json_object *d = json_object_array_get_idx(ev, 2);

			assert_int_equal(ag_strbuf_append(&sb, json_object_get_string(d),
			    (size_t)json_object_get_string_len(d)), 0);
		}
		json_object_put(ev);
	}
	fclose(f);
	assert_int_equal(ag_strbuf_append(&sb, "", 0), 0);
	return ag_strbuf_detach(&sb, NULL);
}

/* What a queued stream holds for its client, through a pipe, as a string. */
static char *
drained(struct ag_stream *s)
{
	struct ag_strbuf sb;
	int p[2];

	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(ag_stream_flush(s, p[1]), 0);
	assert_int_equal(ag_stream_pending(s), 0);
	close(p[1]);
	ag_strbuf_init(&sb, 0);
	assert_int_equal(ag_strbuf_read_fd(&sb, p[0]), 0);
	close(p[0]);
	assert_int_equal(ag_strbuf_append(&sb, "", 0), 0);
	return ag_strbuf_detach(&sb, NULL);
}

static void
init(struct ag_stream *s, const struct ag_stream_opts *o)
{
	struct ag_err err;

	assert_int_equal(ag_stream_init(s, o, &err), 0);
}

/* The upstream's case: a secret in two writes reaches neither the client nor the disk. */
static void
secret_split_across_writes_is_hidden_and_recorded_as_shown(void **state)
{
	static const char a[] = "key AKIAIOSF", b[] = "ODNN7EXAMPLE end\n";
	struct ag_stream_opts o = { .name = "stdout", .tty = 1, .redact = &redacting };
	struct ag_stream s;
	char *shown, *rec;

	(void)state;
	o.rec = open_rec();
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, a, sizeof(a) - 1), 0);
	assert_int_equal(ag_stream_pending(&s), 0);	/* the partial line is held */
	assert_int_equal(ag_stream_take(&s, b, sizeof(b) - 1), 0);
	assert_int_equal(ag_stream_end(&s), 0);
	shown = drained(&s);
	rec = recorded(o.rec);
	assert_string_equal(shown, "key [REDACTED] end\n");
	assert_string_equal(rec, shown);
	assert_null(strstr(rec, "AKIA"));
	assert_int_equal(s.bytes, sizeof(a) + sizeof(b) - 2);
	assert_false(s.truncated);
	ag_stream_free(&s);
	free(shown);
	free(rec);
}

/* Pipes: stdout cut at the cap, its notice on stderr after a newline of its own. */
static void
pipe_cap_cuts_with_the_notice_on_stderr(void **state)
{
	struct client out = { .gone = 0 }, err = { .gone = 0 };
	struct ag_stream_opts oo = { .name = "stdout", .max_output = 10, .write = client_write,
	    .write_arg = &out };
	struct ag_stream_opts eo = { .name = "stderr", .max_output = 10, .write = client_write,
	    .write_arg = &err };
	struct ag_stream so, se;

	(void)state;
	ag_strbuf_init(&out.got, 0);
	ag_strbuf_init(&err.got, 0);
	init(&so, &oo);
	init(&se, &eo);
	so.notice_to = &se;
	assert_int_equal(ag_stream_take(&so, "0123456", 7), 0);
	assert_int_equal(ag_stream_take(&so, "789abcdef", 9), 0);
	assert_int_equal(ag_stream_take(&so, "more", 4), 0);
	assert_int_equal(ag_stream_end(&so), 0);
	assert_int_equal(out.got.len, 10);
	assert_memory_equal(out.got.data, "0123456789", 10);
	assert_string_equal(err.got.data, "\nagentgate: output truncated: stdout exceeded 10 "
	    "bytes; the rest is discarded\n");
	assert_true(so.truncated);
	assert_int_equal(so.bytes, 20);
	/* stderr's own cut, after a whole line: no blank line before its notice */
	ag_strbuf_reset(&err.got);
	assert_int_equal(ag_stream_take(&se, "warning\n", 8), 0);
	assert_int_equal(ag_stream_take(&se, "x\nz", 3), 0);
	assert_string_equal(err.got.data, "warning\nx\n"
	    "agentgate: output truncated: stderr exceeded 10 bytes; the rest is discarded\n");
	ag_stream_free(&so);
	ag_stream_free(&se);
	ag_strbuf_free(&out.got);
	ag_strbuf_free(&err.got);
}

/* A terminal: the notice in the stream itself, in \r\n, and recorded as shown. */
static void
pty_cap_notice_is_in_the_stream_with_crlf(void **state)
{
	struct ag_stream_opts o = { .name = "the terminal's output", .max_output = 8, .tty = 1,
	    .redact = &redacting };
	struct ag_stream s;
	char *shown, *rec;

	(void)state;
	o.rec = open_rec();
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "abc\r\ndefghij", 12), 0);
	assert_true(s.truncated);
	/* the partial line held by the redactor went before the notice */
	shown = drained(&s);
	assert_string_equal(shown, "abc\r\ndef\r\nagentgate: output truncated: the terminal's "
	    "output exceeded 8 bytes; the rest is discarded\r\n");
	assert_int_equal(ag_stream_take(&s, "later", 5), 0);
	assert_int_equal(ag_stream_pending(&s), 0);
	assert_int_equal(s.bytes, 17);
	rec = recorded(o.rec);
	assert_string_equal(rec, shown);
	ag_stream_free(&s);
	free(shown);
	free(rec);
}

/* A pause shows a held partial line (a prompt) on a terminal only. */
static void
pause_shows_a_prompt_on_a_terminal_only(void **state)
{
	struct ag_stream_opts o = { .name = "stdout", .redact = &redacting };
	struct ag_stream s;
	char *shown;

	(void)state;
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "$ ", 2), 0);
	assert_int_equal(ag_stream_pause(&s), 0);
	assert_int_equal(ag_stream_pending(&s), 0);	/* pipes wait for the newline */
	ag_stream_free(&s);

	o.tty = 1;
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "$ ", 2), 0);
	assert_int_equal(ag_stream_pause(&s), 0);
	shown = drained(&s);
	assert_string_equal(shown, "$ ");
	ag_stream_free(&s);
	free(shown);
}

/* Without redaction the bytes pass as they came (NUL bytes too), and unlimited. */
static void
plain_stream_passes_bytes_as_they_are(void **state)
{
	struct ag_stream_opts o = { .name = "stdout" };
	struct ag_stream s;
	char big[100000];
	int p[2];
	size_t total = 0;
	ssize_t n;

	(void)state;
	memset(big, 'x', sizeof(big));
	big[10] = '\0';
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, big, sizeof(big)), 0);
	assert_int_equal(ag_stream_pending(&s), sizeof(big));
	/* a client that takes a little at a time: the queue keeps the rest */
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	while (ag_stream_pending(&s) > 0) {
		char buf[65536];

		assert_int_equal(ag_stream_flush(&s, p[1]), 0);
		while ((n = read(p[0], buf, sizeof(buf))) > 0) {
			assert_memory_equal(buf, big + total, (size_t)n);
			total += (size_t)n;
		}
	}
	assert_int_equal(total, sizeof(big));
	assert_false(s.truncated);
	close(p[0]);
	close(p[1]);
	ag_stream_free(&s);
}

/* A client that went away: the stream says so, and drops the rest. */
static void
gone_client_is_reported(void **state)
{
	struct client c = { .gone = 1 };
	struct ag_stream_opts o = { .name = "stdout", .write = client_write, .write_arg = &c };
	struct ag_stream s, q;
	struct ag_stream_opts qo = { .name = "stdout" };
	int p[2];

	(void)state;
	ag_strbuf_init(&c.got, 0);
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "x\n", 2), -1);
	assert_true(s.gone);
	assert_int_equal(ag_stream_take(&s, "y\n", 2), -1);
	assert_int_equal(s.bytes, 4);
	ag_stream_free(&s);
	/* the queued kind: at the write */
	init(&q, &qo);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(ag_stream_take(&q, "x\n", 2), 0);
	assert_int_equal(ag_stream_flush(&q, p[1]), -1);
	assert_true(q.gone);
	assert_int_equal(ag_stream_pending(&q), 0);
	close(p[1]);
	ag_stream_free(&q);
	ag_strbuf_free(&c.got);
}

/* What a relay may move past the stream (splice): only what it need not see. */
static void
bypass_only_without_redaction_and_within_the_cap(void **state)
{
	struct client c = { .gone = 0 };
	struct ag_stream_opts o = { .name = "stdout", .max_output = 100, .write = client_write,
	    .write_arg = &c };
	struct ag_stream s;

	(void)state;
	ag_strbuf_init(&c.got, 0);
	init(&s, &o);
	assert_int_equal(ag_stream_bypass_room(&s), 100);
	ag_stream_bypassed(&s, 60);
	assert_int_equal(ag_stream_bypass_room(&s), 40);
	ag_stream_bypassed(&s, 40);
	assert_int_equal(ag_stream_bypass_room(&s), 0);
	/* the cap reached past the stream: the next bytes cut it, unseen, no blank line */
	assert_int_equal(ag_stream_take(&s, "z", 1), 0);
	assert_true(s.truncated);
	assert_string_equal(c.got.data, "agentgate: output truncated: stdout exceeded 100 bytes;"
	    " the rest is discarded\n");
	assert_int_equal(s.bytes, 101);
	ag_stream_free(&s);
	o.max_output = 0;
	init(&s, &o);
	assert_int_equal(ag_stream_bypass_room(&s), SIZE_MAX);
	ag_stream_free(&s);
	o.redact = &redacting;
	init(&s, &o);
	assert_int_equal(ag_stream_bypass_room(&s), 0);
	ag_stream_free(&s);
	o.redact = NULL;
	o.write = NULL;		/* a queue: the relay writes, from the queue */
	init(&s, &o);
	assert_int_equal(ag_stream_bypass_room(&s), 0);
	ag_stream_free(&s);
	ag_strbuf_free(&c.got);
}

/*
 * Watched words (the kernel's refusals as programs print them): seen
 * within one take, across two, and in what the cap drops; the bytes pass
 * as they are; the stream is not bypassed until one is seen.
 */
static void
watched_words_are_seen_across_takes_and_past_the_cap(void **state)
{
	static const char *const words[] = { "Permission denied", "Read-only file system", NULL };
	struct client c = { .gone = 0 };
	struct ag_stream_opts o = { .name = "stderr", .write = client_write, .write_arg = &c,
	    .watch = words };
	struct ag_stream s;

	(void)state;
	ag_strbuf_init(&c.got, 0);
	init(&s, &o);
	assert_int_equal(ag_stream_bypass_room(&s), 0);
	assert_int_equal(ag_stream_take(&s, "cp: cannot create 'x': Read-only", 32), 0);
	assert_int_equal(s.watched, 0);
	assert_int_equal(ag_stream_take(&s, " file system\n", 13), 0);
	assert_int_equal(s.watched, 2);
	assert_string_equal(c.got.data, "cp: cannot create 'x': Read-only file system\n");
	assert_int_equal(ag_stream_bypass_room(&s), SIZE_MAX);
	ag_stream_free(&s);
	/* a byte at a time */
	init(&s, &o);
	for (const char *p = "x: Permission denied"; *p != '\0'; p++)
		assert_int_equal(ag_stream_take(&s, p, 1), 0);
	assert_int_equal(s.watched, 1);
	ag_stream_free(&s);
	/* beyond the cap: not shown, still seen */
	o.max_output = 4;
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "abcdef: Permission denied\n", 26), 0);
	assert_int_equal(s.watched, 1);
	ag_stream_free(&s);
	/* neither word */
	o.max_output = 0;
	init(&s, &o);
	assert_int_equal(ag_stream_take(&s, "Permission granted; file system read-only\n", 42), 0);
	assert_int_equal(s.watched, 0);
	ag_stream_free(&s);
	ag_strbuf_free(&c.got);
}

/* A profile whose patterns do not compile: no stream, so no unjudged output. */
static void
redactor_that_cannot_be_made_is_an_error(void **state)
{
	static char bad[] = "([";
	char *pats[] = { bad };
	struct ag_profile p = { .redact = 1 };
	struct ag_stream_opts o = { .name = "stdout", .redact = &p };
	struct ag_stream s;
	struct ag_err err;

	(void)state;
	p.redact_patterns.v = pats;
	p.redact_patterns.n = 1;
	assert_int_equal(ag_stream_init(&s, &o, &err), -1);
	assert_non_null(strstr(err.msg, "does not compile"));
	ag_stream_free(&s);
}

static int
setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);	/* a client gone is an EPIPE, as in the gateway */
	if (mkdtemp(dir) == NULL)
		return -1;
	return chmod(dir, 0755);
}

/* The directory holds one recording at the most (open_rec replaces it). */
static int
teardown(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/%s.cast", dir, ID);
	(void)unlink(path);
	return rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(secret_split_across_writes_is_hidden_and_recorded_as_shown),
		cmocka_unit_test(pipe_cap_cuts_with_the_notice_on_stderr),
		cmocka_unit_test(pty_cap_notice_is_in_the_stream_with_crlf),
		cmocka_unit_test(pause_shows_a_prompt_on_a_terminal_only),
		cmocka_unit_test(plain_stream_passes_bytes_as_they_are),
		cmocka_unit_test(gone_client_is_reported),
		cmocka_unit_test(bypass_only_without_redaction_and_within_the_cap),
		cmocka_unit_test(redactor_that_cannot_be_made_is_an_error),
		cmocka_unit_test(watched_words_are_seen_across_takes_and_past_the_cap),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
