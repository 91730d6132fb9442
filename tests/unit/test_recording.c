/* test_recording.c - asciicast v2 files: header, events, encoding, flushing, file safety. */
#include "agconfig.h"

#include <errno.h>
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/recording.h"
#include "record/termfilter.h"
#include "common/strbuf.h"
#include "testutil.h"

#define ID "0123456789abcdef0123456789abcdef"

static char dir[256];
static char path[512];

static int
setup(void **state)
{
	(void)state;
	if (tu_tmpdir(dir, sizeof(dir), "rec") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.cast", dir, ID);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	chmod(dir, 0755);
	return tu_rm_rf(dir);
}

static int
each_setup(void **state)
{
	(void)state;
	unlink(path);
	chmod(dir, 0755);
	return 0;
}

static struct ag_rec *
open_rec(int input, struct ag_err *err)
{
	struct ag_rec_info info = {
		.dir = dir, .session = ID, .width = 100, .height = 30,
		.term = "xterm-256color", .shell = "/bin/bash", .input = input,
	};

	ag_err_clear(err);
	return ag_rec_open(&info, err);
}

static const char *ev_code(json_object *ev);
static const char *ev_data(json_object *ev, size_t *len);

/* The gateway's lines are "m" events, their text shown safe: no control
 * character of a command line reaches a player as is. */
static void
markers_are_m_events_shown_safe(void **state)
{
	static const char line[] = "agt@vm:~$ echo \033]52;c;eA==\007 \xff\n";
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[8];
	const char *d;
	size_t len;

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	assert_int_equal(ag_rec_output(r, "out\r\n", 5, &err), 0);
	assert_int_equal(ag_rec_marker(r, line, sizeof(line) - 1, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(tu_json_file(path, v, 8), 3);
	assert_string_equal(ev_code(v[1]), "o");
	assert_string_equal(ev_code(v[2]), "m");
	d = ev_data(v[2], &len);
	assert_string_equal(d, "agt@vm:~$ echo \\x1b]52;c;eA==\\x07 \\xff\\n");
	assert_null(memchr(d, 0x1b, len));
	tu_json_put_all(v, 3);
}

static char *
filtered(int mode, const char *const *writes)
{
	struct ag_termfilter f;
	struct ag_strbuf out;
	size_t i;

	ag_termfilter_init(&f, mode);
	ag_strbuf_init(&out, 1 << 20);
	for (i = 0; writes[i] != NULL; i++)
		assert_int_equal(ag_termfilter_feed(&f, writes[i], strlen(writes[i]), &out), 0);
	assert_int_equal(ag_strbuf_addch(&out, '\0'), 0);
	return ag_strbuf_detach(&out, NULL);
}

static void
expect(int mode, const char *const *writes, const char *want)
{
	char *o = filtered(mode, writes);

	assert_string_equal(o, want);
	free(o);
}

/* What reaches beyond the screen is dropped, also when a write cuts it;
 * what draws the screen passes. */
static void
replay_filter_drops_what_reaches_beyond_the_screen(void **state)
{
	static const char *const osc[] = {
		"a\033]52;c;ZXZpbA==\007b\033]0;title\033\\c",
		"\033]8;;http://x\033\\link\033]8;;\033\\d",
		"\033P1$qm\033\\e\033_apc\033\\f\033^pm\033\\g",
		"\033]5", "2;c;c3BsaXQ=\007h", NULL };
	static const char *const c1[] = { "i\xc2\x9b" "6nj\xc2\x9d" "0;t\xc2\x9c" "k", "\xe2\x80\xaeR\x07\x0e", NULL };
	static const char *const queries[] = {
		"\033[6n\033[c\033[>c\033[21t\033[8;1;1t\033[2$p\033[5i\033c", "l", NULL };
	static const char *const draw[] = {
		"\033[1;31mred\033[0m\r\n\033[2J\033[H\033[?1049h\033[?1049l\033[1A\033[2K",
		"\033", "[3", "2mx\t\by\0337\0338\033(0q\033(B\033[2 q", NULL };
	static const char *const utf8[] = { "caf\xc3", "\xa9 \xe2\x82", "\xac \xff.", NULL };
	char *o;

	(void)state;
	expect(AG_TERMFILTER_DISPLAY, osc, "abclinkdefgh");
	expect(AG_TERMFILTER_DISPLAY, c1, "i6nj0;tkR");
	expect(AG_TERMFILTER_DISPLAY, queries, "l");
	expect(AG_TERMFILTER_DISPLAY, draw,
	    "\033[1;31mred\033[0m\r\n\033[2J\033[H\033[?1049h\033[?1049l\033[1A\033[2K"
	    "\033[32mx\t\by\0337\0338\033(0q\033(B\033[2 q");
	expect(AG_TERMFILTER_DISPLAY, utf8, "caf\xc3\xa9 \xe2\x82\xac \xef\xbf\xbd.");
	/* a transcript keeps only the text, and shows the strings */
	expect(AG_TERMFILTER_PLAIN, draw, "red\nx\tyq");
	expect(AG_TERMFILTER_PLAIN, osc,
	    "a<ESC]52;c;ZXZpbA==>b<ESC]0;title>c<ESC]8;;http://x>link<ESC]8;;>d"
	    "<ESCP1$qm>e<ESC_apc>f<ESC^pm>g<ESC]52;c;c3BsaXQ=>h");
	{
		/* a character across the filter's own 4 KiB buffers stays whole */
		static char edge[4096 + 8];
		const char *const edges[] = { edge, NULL };

		memset(edge, 'a', 4095);
		memcpy(edge + 4095, "\xc3\xa9z", 3);
		o = filtered(AG_TERMFILTER_DISPLAY, edges);
		assert_int_equal(strlen(o), 4098);
		assert_string_equal(o + 4095, "\xc3\xa9z");
		free(o);
	}
	{
		/* ST as a C1 control ends a string; CAN aborts one; a string
		 * never ended stops hiding what follows */
		static const char *const c1st[] = { "\033]0;t\xc2\x9c" "a\033]0;u\x18" "b", NULL };
		static char big[AG_TERMFILTER_STR_MAX + 64];
		const char *const longstr[] = { big, NULL };

		expect(AG_TERMFILTER_DISPLAY, c1st, "ab");
		memset(big, 'x', sizeof(big) - 1);
		memcpy(big, "\033]2;", 4);
		memcpy(big + sizeof(big) - 8, "VISIBLE", 7);
		o = filtered(AG_TERMFILTER_DISPLAY, longstr);
		assert_non_null(strstr(o, "VISIBLE"));
		free(o);
		o = filtered(AG_TERMFILTER_PLAIN, longstr);
		assert_non_null(strstr(o, "<ESC]2;xxx"));
		assert_non_null(strstr(o, "...>"));
		assert_non_null(strstr(o, "VISIBLE"));
		assert_true(strlen(o) < 400);
		free(o);
	}
}

static const char *
ev_code(json_object *ev)
{
	assert_true(json_object_is_type(ev, json_type_array));
	assert_int_equal(json_object_array_length(ev), 3);
	return json_object_get_string(json_object_array_get_idx(ev, 1));
}

static double
ev_time(json_object *ev)
{
	return json_object_get_double(json_object_array_get_idx(ev, 0));
}

static const char *
ev_data(json_object *ev, size_t *len)
{
	json_object *d = json_object_array_get_idx(ev, 2);

	*len = (size_t)json_object_get_string_len(d);
	return json_object_get_string(d);
}

static void
header_has_the_asciicast_fields_and_mode_0600(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[4], *x, *env;
	struct stat st;
	mode_t old = umask(0);	/* the file mode must not depend on the umask */
	time_t before = time(NULL), after;

	(void)state;
	r = open_rec(0, &err);
	after = time(NULL);
	umask(old);
	assert_non_null(r);
	assert_string_equal(ag_rec_path(r), path);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(tu_json_file(path, v, 4), 1);
	assert_true(json_object_object_get_ex(v[0], "version", &x));
	assert_int_equal(json_object_get_int(x), 2);
	assert_true(json_object_object_get_ex(v[0], "width", &x));
	assert_int_equal(json_object_get_int(x), 100);
	assert_true(json_object_object_get_ex(v[0], "height", &x));
	assert_int_equal(json_object_get_int(x), 30);
	assert_true(json_object_object_get_ex(v[0], "timestamp", &x));
	/* taken while it was opened: between the two readings of the clock,
	 * however long the machine took (not within a fixed slack of one) */
	assert_true(json_object_get_int64(x) >= before && json_object_get_int64(x) <= after);
	assert_true(json_object_object_get_ex(v[0], "env", &env));
	assert_true(json_object_object_get_ex(env, "TERM", &x));
	assert_string_equal(json_object_get_string(x), "xterm-256color");
	assert_true(json_object_object_get_ex(env, "SHELL", &x));
	assert_string_equal(json_object_get_string(x), "/bin/bash");
	assert_true(json_object_object_get_ex(v[0], "agentgate_session", &x));
	assert_string_equal(json_object_get_string(x), ID);
	tu_json_put_all(v, 1);
}

static void
output_events_have_relative_increasing_times(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[8];
	const char *d;
	size_t len;
	struct timespec ts = { 0, 60 * 1000000 };

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	assert_int_equal(ag_rec_output(r, "hello ", 6, &err), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(ag_rec_output(r, "world\r\n", 7, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(tu_json_file(path, v, 8), 3);
	assert_string_equal(ev_code(v[1]), "o");
	assert_string_equal(ev_code(v[2]), "o");
	d = ev_data(v[1], &len);
	assert_int_equal(len, 6);
	assert_memory_equal(d, "hello ", 6);
	d = ev_data(v[2], &len);
	assert_int_equal(len, 7);
	assert_memory_equal(d, "world\r\n", 7);
	/* relative to the start, increasing, and at least the pause apart
	 * (a sleep guarantees a lower bound; how much later is the machine's) */
	assert_true(ev_time(v[1]) >= 0.0);
	assert_true(ev_time(v[2]) - ev_time(v[1]) >= 0.05);
	tu_json_put_all(v, 3);
}

/* Concatenate the data of every "o" event. */
static size_t
all_output(json_object **v, size_t n, char *buf, size_t cap)
{
	size_t i, out = 0;

	for (i = 1; i < n; i++) {
		const char *d;
		size_t len;

		if (strcmp(ev_code(v[i]), "o") != 0)
			continue;
		d = ev_data(v[i], &len);
		assert_true(out + len <= cap);
		memcpy(buf + out, d, len);
		out += len;
	}
	return out;
}

static void
binary_and_split_utf8_output_stays_valid_json(void **state)
{
	static const char expect[] =
	    "\0\x1b[1m\"q\\" "\xef\xbf\xbd\xef\xbf\xbd"	/* NUL, ESC, quote, backslash, FF FE */
	    "\xc3\xa9"					/* é, split over two reads */
	    "\xf0\x9f\x98\x80"				/* 😀, split over three */
	    "\xef\xbf\xbd\xef\xbf\xbd"			/* overlong C0 AF */
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"		/* surrogate ED A0 80 */
	    "x\xef\xbf\xbd" "y"				/* a lone continuation byte */
	    "\xef\xbf\xbd";				/* cut at the end, never finished */
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[32];
	char got[256];
	size_t n, len;

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	assert_int_equal(ag_rec_output(r, "\0\x1b[1m\"q\\\xff\xfe\xc3", 11, &err), 0);
	assert_int_equal(ag_rec_output(r, "\xa9\xf0\x9f", 3, &err), 0);
	assert_int_equal(ag_rec_output(r, "\x98", 1, &err), 0);
	assert_int_equal(ag_rec_output(r, "\x80\xc0\xaf\xed\xa0\x80x\x80y", 9, &err), 0);
	assert_int_equal(ag_rec_output(r, "\xe2\x82", 2, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	n = tu_json_file(path, v, 32);
	assert_true(n >= 3);
	len = all_output(v, n, got, sizeof(got));
	assert_int_equal(len, sizeof(expect) - 1);
	assert_memory_equal(got, expect, len);
	tu_json_put_all(v, n < 32 ? n : 32);
}

static void
resize_events_are_cols_x_rows_and_not_repeated(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[8];
	const char *d;
	size_t len;

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	assert_int_equal(ag_rec_resize(r, 100, 30, &err), 0);	/* the header's size */
	assert_int_equal(ag_rec_resize(r, 120, 40, &err), 0);
	assert_int_equal(ag_rec_resize(r, 120, 40, &err), 0);
	assert_int_equal(ag_rec_resize(r, 80, 24, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(tu_json_file(path, v, 8), 3);
	assert_string_equal(ev_code(v[1]), "r");
	d = ev_data(v[1], &len);
	assert_string_equal(d, "120x40");
	assert_string_equal(ev_code(v[2]), "r");
	d = ev_data(v[2], &len);
	assert_string_equal(d, "80x24");
	tu_json_put_all(v, 3);
}

static void
input_is_recorded_only_when_enabled(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	json_object *v[8];
	const char *d;
	size_t len;

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	assert_false(ag_rec_input_enabled(r));
	assert_int_equal(ag_rec_input(r, "s3cret\r", 7, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(tu_json_file(path, v, 8), 1);
	tu_json_put_all(v, 1);

	unlink(path);
	assert_non_null(r = open_rec(1, &err));
	assert_true(ag_rec_input_enabled(r));
	assert_int_equal(ag_rec_input(r, "ls\r", 3, &err), 0);
	assert_int_equal(ag_rec_close(r, &err), 0);
	assert_int_equal(tu_json_file(path, v, 8), 2);
	assert_string_equal(ev_code(v[1]), "i");
	d = ev_data(v[1], &len);
	assert_string_equal(d, "ls\r");
	tu_json_put_all(v, 2);
}

static size_t
file_size(void)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (size_t)st.st_size;
}

static void
events_are_buffered_and_flushed_within_a_second(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	size_t hdr, after;
	long left;
	char *big;
	struct timespec ts = { 1, 50 * 1000000 }, t0, t1;

	(void)state;
	assert_non_null(r = open_rec(0, &err));
	hdr = file_size();
	assert_true(hdr > 0);				/* the header is on disk at once */
	assert_int_equal(ag_rec_next_tick_ms(r), -1);	/* nothing buffered */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ag_rec_output(r, "abc", 3, &err), 0);
	assert_int_equal(file_size(), hdr);		/* a small event waits */
	left = ag_rec_next_tick_ms(r);
	assert_true(left >= 0 && left <= AG_REC_FLUSH_MS);
	assert_int_equal(ag_rec_tick(r, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* not yet a second old: checked only when this machine really got
	 * here within the second (a stalled test proves nothing either way) */
	if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 <
	    AG_REC_FLUSH_MS - 100)
		assert_int_equal(file_size(), hdr);
	nanosleep(&ts, NULL);
	assert_int_equal(ag_rec_next_tick_ms(r), 0);
	assert_int_equal(ag_rec_tick(r, &err), 0);
	after = file_size();
	assert_true(after > hdr);
	assert_int_equal(ag_rec_next_tick_ms(r), -1);

	/* an explicit flush (command end) writes at once */
	assert_int_equal(ag_rec_output(r, "def", 3, &err), 0);
	assert_int_equal(file_size(), after);
	assert_int_equal(ag_rec_flush(r, &err), 0);
	assert_true(file_size() > after);
	after = file_size();

	/* a lot of output does not wait for the clock */
	assert_non_null(big = malloc(AG_REC_BUF));
	memset(big, 'z', AG_REC_BUF);
	assert_int_equal(ag_rec_output(r, big, AG_REC_BUF, &err), 0);
	assert_true(file_size() >= after + AG_REC_BUF);
	free(big);
	assert_int_equal(ag_rec_close(r, &err), 0);
}

static void
symlink_or_existing_file_is_refused(void **state)
{
	struct ag_err err;
	struct ag_rec *r;
	char target[600], buf[16];
	struct stat st;
	int fd;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	unlink(target);
	assert_int_equal(symlink(target, path), 0);
	r = open_rec(0, &err);
	assert_null(r);
	assert_non_null(strstr(err.msg, "exists"));
	assert_int_equal(lstat(target, &st), -1);	/* nothing created through the link */
	unlink(path);

	/* an existing file (another session's, or planted) is never appended to */
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
	assert_int_equal(write(fd, "planted", 7), 7);
	close(fd);
	assert_null(open_rec(0, &err));
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	unlink(path);
}

static void
unsafe_directory_is_refused(void **state)
{
	static const mode_t bad[] = { 0777, 0775, 0757, 01777 };
	struct ag_err err;
	struct ag_rec_info info = { .session = ID, .width = 80, .height = 24 };
	char file[600];
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(dir, bad[i]), 0);
		assert_null(open_rec(0, &err));
		assert_non_null(strstr(err.msg, "writable by "));
		assert_int_equal(access(path, F_OK), -1);
	}
	chmod(dir, 0755);
	info.dir = "relative/dir";
	assert_null(ag_rec_open(&info, &err));
	info.dir = "/nonexistent-ag-rec";
	assert_null(ag_rec_open(&info, &err));
	/* a file where the directory should be */
	snprintf(file, sizeof(file), "%s/plain", dir);
	assert_true((fd = open(file, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);
	info.dir = file;
	assert_null(ag_rec_open(&info, &err));
	unlink(file);
}

static void
session_id_must_be_a_plain_name(void **state)
{
	static const char *bad[] = { "", "../escape", "a/b", "x y", "a\nb", ".", ".." };
	struct ag_rec_info info = { .dir = dir, .width = 80, .height = 24 };
	struct ag_err err;
	char esc[600];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		info.session = bad[i];
		assert_null(ag_rec_open(&info, &err));
	}
	info.session = NULL;
	assert_null(ag_rec_open(&info, &err));
	snprintf(esc, sizeof(esc), "%s/../escape.cast", dir);
	assert_int_equal(access(esc, F_OK), -1);
}

/* In a child: the file may grow only a little (RLIMIT_FSIZE), so a flush fails. */
static void
write_failure_is_reported_and_sticks(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if ((pid = fork()) == 0) {
		struct ag_err err;
		struct ag_rec *r = open_rec(0, &err);
		struct rlimit rl;
		static char big[AG_REC_BUF];

		if (r == NULL)
			_exit(10);
		signal(SIGXFSZ, SIG_IGN);
		rl.rlim_cur = rl.rlim_max = (rlim_t)file_size() + 100;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(11);
		memset(big, 'a', sizeof(big));
		if (ag_rec_output(r, big, sizeof(big), &err) == 0)
			_exit(12);	/* over AG_REC_BUF: written now, and it must fail */
		if (strstr(err.msg, "File too large") == NULL)
			_exit(13);
		ag_err_clear(&err);
		if (ag_rec_output(r, "x", 1, &err) == 0 || err.msg[0] == '\0')
			_exit(14);	/* dead from then on, with a message */
		if (ag_rec_resize(r, 1, 1, &err) == 0 || ag_rec_flush(r, &err) == 0)
			_exit(15);
		if (ag_rec_close(r, &err) == 0)
			_exit(16);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(header_has_the_asciicast_fields_and_mode_0600, each_setup),
		cmocka_unit_test_setup(output_events_have_relative_increasing_times, each_setup),
		cmocka_unit_test_setup(binary_and_split_utf8_output_stays_valid_json, each_setup),
		cmocka_unit_test_setup(resize_events_are_cols_x_rows_and_not_repeated, each_setup),
		cmocka_unit_test_setup(markers_are_m_events_shown_safe, each_setup),
		cmocka_unit_test(replay_filter_drops_what_reaches_beyond_the_screen),
		cmocka_unit_test_setup(input_is_recorded_only_when_enabled, each_setup),
		cmocka_unit_test_setup(events_are_buffered_and_flushed_within_a_second, each_setup),
		cmocka_unit_test_setup(symlink_or_existing_file_is_refused, each_setup),
		cmocka_unit_test_setup(unsafe_directory_is_refused, each_setup),
		cmocka_unit_test_setup(session_id_must_be_a_plain_name, each_setup),
		cmocka_unit_test_setup(write_failure_is_reported_and_sticks, each_setup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
