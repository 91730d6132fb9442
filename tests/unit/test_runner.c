/* test_runner.c - the runner shell: capture, status, limits, cleanup (real bash). */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec/runner.h"

#ifndef AG_BASH
#define AG_BASH "/bin/bash"
#endif

static char *base_env[] = { (char[]){ "PATH=/usr/bin:/bin" }, (char[]){ "KEEP=1" }, NULL };

static int no_capture;

struct run {
	struct ag_run_result	res;
	char			out[1 << 20];
	char			err[1 << 16];
	size_t			outlen, errlen;
	int			rc;
};

static size_t
slurp(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	lseek(fd, 0, SEEK_SET);
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* Run cmd with the given knobs; stdout/stderr land in temp files. */
static struct run *
run(const char *cmd, int last, long timeout, long long max_output)
{
	static struct run r;
	struct ag_run_opts o;
	struct ag_err err;
	char of[] = "/tmp/ag-run-out.XXXXXX", ef[] = "/tmp/ag-run-err.XXXXXX";
	int ofd = mkstemp(of), efd = mkstemp(ef), in = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(ofd >= 0 && efd >= 0 && in >= 0);
	unlink(of);
	unlink(ef);
	ag_run_result_free(&r.res);
	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	o.runner = AG_BASH;
	o.cmd = cmd;
	o.cmdlen = strlen(cmd);
	o.cwd = "/tmp";
	o.env = base_env;
	o.last_status = last;
	o.in_fd = in;
	o.out_fd = ofd;
	o.err_fd = efd;
	o.tty_fd = -1;
	o.timeout = timeout;
	o.max_output = max_output;
	o.no_capture = no_capture;
	r.rc = ag_run(&o, &r.res, &err);
	r.outlen = slurp(ofd, r.out, sizeof(r.out));
	r.errlen = slurp(efd, r.err, sizeof(r.err));
	close(ofd);
	close(efd);
	close(in);
	return &r;
}

/* 1 if the capture holds exactly this record. */
static int
captured(const struct run *r, const char *rec)
{
	size_t off = 0;

	while (off < r->res.capture_len) {
		const char *p = r->res.capture + off;

		if (strcmp(p, rec) == 0)
			return 1;
		off += strlen(p) + 1;
	}
	return 0;
}

static void
capture_survives_exit_n(void **state)
{
	struct run *r = run("export FOO=bar; exit 3", 0, 0, 0);

	(void)state;
	assert_int_equal(r->rc, 0);
	assert_int_equal(r->res.status, 3);
	assert_true(r->res.capture_ok);
	assert_true(captured(r, "FOO=bar"));
	assert_true(captured(r, "KEEP=1"));
	assert_true(captured(r, "PWD=/tmp"));
}

static void
capture_survives_trailing_comment(void **state)
{
	struct run *r = run("export A=1 # trailing comment; export A=2", 0, 0, 0);

	(void)state;
	assert_int_equal(r->res.status, 0);
	assert_true(r->res.capture_ok);
	assert_true(captured(r, "A=1"));
}

static void
capture_survives_heredoc_and_syntax_error(void **state)
{
	struct run *r = run("export H=1; cat <<EOF\nbody $H\nEOF", 0, 0, 0);

	(void)state;
	assert_string_equal(r->out, "body 1\n");
	assert_true(captured(r, "H=1"));
	r = run("export S=1\nif then fi", 0, 0, 0);
	assert_int_equal(r->res.status, 2);
	assert_true(r->res.capture_ok);
	assert_true(captured(r, "S=1"));
}

static void
previous_status_is_visible(void **state)
{
	struct run *r = run("echo $?", 42, 0, 0);

	(void)state;
	assert_string_equal(r->out, "42\n");
	r = run("echo $?; declare -F", 0, 0, 0);
	assert_string_equal(r->out, "0\n");	/* and no helper function left behind */
	r = run("declare -F; echo $?", 7, 0, 0);
	assert_string_equal(r->out, "0\n");
}

static void
not_exported_and_arrays_are_not_captured(void **state)
{
	struct run *r = run("PLAIN=1; export ARR; ARR=(1 2); export E=x", 0, 0, 0);

	(void)state;
	assert_true(captured(r, "E=x"));
	assert_false(captured(r, "PLAIN=1"));
	assert_false(captured(r, "ARR=1"));
}

static void
signal_death_is_128_plus_n(void **state)
{
	struct run *r = run("export X=1; kill -9 $$", 0, 0, 0);

	(void)state;
	assert_int_equal(r->res.status, 137);
	assert_int_equal(r->res.signal, 9);
	assert_false(r->res.capture_ok);	/* nothing half-captured is applied */
}

static void
records_forged_on_fd3_are_dropped(void **state)
{
	/* fd 3 is writable by the command, but only what the exit trap writes
	 * after its own begin marker counts: a forged marker and end record
	 * written earlier change nothing */
	struct run *r = run("printf 'X=1\\0' >&3; printf '\\0=<\\0Z=9\\0=\\0' >&3; export Y=2",
	    0, 0, 0);

	(void)state;
	assert_true(r->res.capture_ok);
	assert_false(captured(r, "X=1"));
	assert_false(captured(r, "Z=9"));
	assert_true(captured(r, "Y=2"));
}

static void
timeout_kills_with_124(void **state)
{
	struct run *r;

	(void)state;
	/* would take five minutes if the timeout did not kill it */
	r = run("sleep 300", 0, 1, 0);
	assert_int_equal(r->res.status, 124);
	assert_true(r->res.timed_out);
	assert_non_null(strstr(r->err, "timed out after 1 s"));
}

static void
timeout_with_term_ignored_kills_after_grace(void **state)
{
	struct run *r;

	(void)state;
	r = run("trap '' TERM; sleep 300", 0, 1, 0);
	assert_int_equal(r->res.status, 124);
	assert_true(r->res.timed_out);
	/* TERM was ignored: only the KILL after the grace period ended it */
	assert_int_equal(r->res.signal, SIGKILL);
}

static void
output_cap_cuts_with_one_notice(void **state)
{
	struct run *r = run("seq 1 100000; seq 1 100000 >&2", 0, 0, 1000);
	char *p;
	int notices = 0;

	(void)state;
	assert_int_equal(r->outlen, 1000);
	assert_true(r->res.truncated);
	assert_int_equal(r->res.status, 0);
	assert_true(r->res.bytes_out > 1000000);
	for (p = r->err; (p = strstr(p, "output truncated")) != NULL; p++)
		notices++;
	assert_int_equal(notices, 2);	/* one per stream */
	assert_true(r->res.capture_ok);
}

static void
large_output_passes_whole(void **state)
{
	struct run *r = run("seq 1 100000", 0, 0, 0);

	(void)state;
	assert_int_equal(r->outlen, 588895);
	assert_false(r->res.truncated);
}

static void
background_and_escaped_processes_die(void **state)
{
	struct run *r = run("sleep 100 & echo $!; setsid sleep 101 & echo $!", 0, 0, 0);
	long a, b;

	(void)state;
	assert_int_equal(sscanf(r->out, "%ld\n%ld", &a, &b), 2);
	assert_int_equal(kill((pid_t)a, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(kill((pid_t)b, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void
only_given_env_and_fds(void **state)
{
	struct run *r = run("env; echo FDS:; ls /proc/$$/fd", 0, 0, 0);

	(void)state;
	assert_non_null(strstr(r->out, "KEEP=1\n"));
	assert_null(strstr(r->out, "HOME="));
	assert_non_null(strstr(r->out, "FDS:\n0\n1\n2\n3\n"));
	assert_null(strstr(r->out, "3\n4"));
}

/*
 * A command longer than one argv string may be (128 KiB) runs all the same,
 * from a memfd the runner closes before the command starts: $? and the
 * capture as for a short one, no extra fd left to the command.
 */
static void
command_longer_than_argv_runs(void **state)
{
	size_t n = 200 * 1024, i;
	char *cmd = malloc(n + 256), *p;
	struct run *r;

	(void)state;
	assert_non_null(cmd);
	p = cmd + sprintf(cmd, "echo $?; x='");
	for (i = 0; i < n; i++)
		*p++ = (char)('a' + i % 26);
	strcpy(p, "'\necho ${#x}; export LONG=${x:0:3}; echo FDS:; ls /proc/$$/fd\n");
	r = run(cmd, 9, 0, 0);
	free(cmd);
	assert_int_equal(r->rc, 0);
	assert_int_equal(r->res.status, 0);
	assert_non_null(strstr(r->out, "9\n204800\nFDS:\n0\n1\n2\n3\n"));
	assert_null(strstr(r->out, "3\n4"));
	assert_true(r->res.capture_ok);
	assert_true(captured(r, "LONG=abc"));
}

static void
stateless_command_gets_no_capture_fd(void **state)
{
	struct run *r;

	(void)state;
	no_capture = 1;
	r = run("echo FDS:; ls /proc/$$/fd; exit 5", 3, 0, 0);
	no_capture = 0;
	assert_non_null(strstr(r->out, "FDS:\n0\n1\n2\n"));
	assert_null(strstr(r->out, "\n3\n"));
	assert_int_equal(r->res.status, 5);
	assert_false(r->res.capture_ok);
}

static void
capture_is_bounded(void **state)
{
	struct run *r = run("export BIG=$(head -c 1100000 /dev/zero | tr '\\0' x)", 0, 0, 0);

	(void)state;
	assert_int_equal(r->res.status, 0);
	assert_false(r->res.capture_ok);
}

static void
missing_runner_is_127(void **state)
{
	struct ag_run_opts o;
	struct ag_run_result res;
	struct ag_err err;
	int efd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)state;
	memset(&o, 0, sizeof(o));
	o.runner = "/nonexistent/bash";
	o.cmd = "true";
	o.cmdlen = 4;
	o.cwd = "/";
	o.env = base_env;
	o.in_fd = 0;
	o.out_fd = efd;
	o.err_fd = efd;
	o.tty_fd = -1;
	assert_int_equal(ag_run(&o, &res, &err), 0);
	assert_int_equal(res.status, 127);
	assert_false(res.capture_ok);
	ag_run_result_free(&res);
	close(efd);
}

static int
setup(void **state)
{
	struct ag_err err;

	(void)state;
	return ag_runner_init(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capture_survives_exit_n),
		cmocka_unit_test(capture_survives_trailing_comment),
		cmocka_unit_test(capture_survives_heredoc_and_syntax_error),
		cmocka_unit_test(previous_status_is_visible),
		cmocka_unit_test(not_exported_and_arrays_are_not_captured),
		cmocka_unit_test(signal_death_is_128_plus_n),
		cmocka_unit_test(records_forged_on_fd3_are_dropped),
		cmocka_unit_test(timeout_kills_with_124),
		cmocka_unit_test(timeout_with_term_ignored_kills_after_grace),
		cmocka_unit_test(output_cap_cuts_with_one_notice),
		cmocka_unit_test(large_output_passes_whole),
		cmocka_unit_test(background_and_escaped_processes_die),
		cmocka_unit_test(only_given_env_and_fds),
		cmocka_unit_test(stateless_command_gets_no_capture_fd),
		cmocka_unit_test(command_longer_than_argv_runs),
		cmocka_unit_test(capture_is_bounded),
		cmocka_unit_test(missing_runner_is_127),
	};

	return cmocka_run_group_tests_name("runner", tests, setup, NULL);
}
