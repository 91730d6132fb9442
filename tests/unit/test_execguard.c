/*
 * test_execguard.c - the exec supervisor (src/exec/execguard.c) on real
 * processes: every exec of a tree reaches the judge with its path and
 * argv, a refused one fails with EACCES and is reported once, and when
 * nobody answers any more the kernel fails the exec instead of running it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "exec/execguard.h"

/* what the last run() let run (execguard.h: the command's record's execs) */
static struct ag_exec_ran last_ran;

struct seen {
	int	 n;
	char	 paths[256][64];
	int	 saw_relative_resolved;
	int	 saw_long_argv;
};

/* Refuse 'false' and any exec with an argument "push"; log every path. */
static int
judge(void *ctx, const struct ag_exec_req *req, char *reason, size_t rsz, char *rule,
    size_t rulesz)
{
	struct seen *s = ctx;
	const char *b = strrchr(req->path, '/');
	size_t i;

	b = b ? b + 1 : req->path;
	if (s->n < 256)
		snprintf(s->paths[s->n++], sizeof(s->paths[0]), "%s", b);
	if (req->path[0] == '/' && strstr(req->path, "/./true") != NULL)
		s->saw_relative_resolved = 1;
	if (req->argc == 2001)
		s->saw_long_argv = 1;
	for (i = 0; i < req->argc; i++)
		if (strcmp(req->argv[i], "push") == 0)
			goto deny;
	if (strcmp(b, "false") == 0)
		goto deny;
	return 1;
deny:
	snprintf(reason, rsz, "test judge refused %s", b);
	snprintf(rule, rulesz, "test");
	return 0;
}

/*
 * Run script under sh with the guard; returns sh's exit status; output
 * (stdout+stderr) in out.
 */
static int
run(const char *script, struct seen *s, struct ag_exec_denial **d, size_t *nd, char *out,
    size_t outsz, int stop_first)
{
	struct ag_execguard *g;
	struct ag_err err;
	int p[2], rdy[2], go[2], st;
	pid_t pid;
	ssize_t n;
	size_t got = 0;
	char c;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(rdy), 0);
	assert_int_equal(pipe(go), 0);
	g = ag_execguard_new(judge, s, NULL, &err);
	assert_non_null(g);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(rdy[0]);
		close(go[1]);
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || ag_execguard_child(g) < 0)
			_exit(99);
		/* filter in place and listener sent: wait for the go */
		if (write(rdy[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(96);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(errno == ENOSYS ? 98 : 97);
	}
	close(p[1]);
	close(rdy[1]);
	close(go[0]);
	assert_int_equal(ag_execguard_started(g, &err), 0);
	assert_int_equal(read(rdy[0], &c, 1), 1);
	if (stop_first) {
		/* the supervisor is gone before the first exec: nobody answers */
		struct ag_exec_denial *x;
		size_t nx;

		ag_execguard_finish(g, &x, &nx, NULL);
		ag_execguard_denials_free(x, nx);
		g = NULL;
	}
	assert_int_equal(write(go[1], "g", 1), 1);
	close(rdy[0]);
	close(go[1]);
	while (got + 1 < outsz && (n = read(p[0], out + got, outsz - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	ag_execguard_ran_free(&last_ran);
	if (g != NULL)
		ag_execguard_finish(g, d, nd, &last_ran);
	else
		*d = NULL, *nd = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
allowed_execs_run_and_every_exec_is_seen(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	assert_int_equal(run("/bin/echo hello; env FOO=1 /bin/true && echo ok", &s, &d, &nd,
	    out, sizeof(out), 0), 0);
	assert_string_equal(out, "hello\nok\n");
	assert_int_equal(nd, 0);
	/* echo, env, true; sh itself is the filter's first exec, the runner's
	 * own, which is let through unread (its memory is the gateway's) */
	assert_true(s.n >= 3);
	assert_string_equal(s.paths[0], "echo");
	ag_execguard_denials_free(d, nd);
}

static void
refused_exec_fails_with_eacces_and_is_reported_once(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];
	int rc;

	(void)state;
	rc = run("git push origin main; echo rc=$?; env false; echo rc2=$?; /bin/echo after",
	    &s, &d, &nd, out, sizeof(out), 0);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "rc=126"));	/* Permission denied */
	assert_non_null(strstr(out, "rc2=126"));
	assert_non_null(strstr(out, "after"));
	/* sh tries every PATH entry for git: still one report each */
	assert_int_equal(nd, 2);
	assert_string_equal(d[0].argv[0], "git");
	assert_string_equal(d[0].argv[1], "push");
	assert_int_equal(d[0].argc, 4);
	assert_string_equal(d[0].rule, "test");
	assert_non_null(strstr(d[0].reason, "git"));
	assert_non_null(strstr(d[1].path, "false"));
	ag_execguard_denials_free(d, nd);
}

/* How many of the files let run end in name. */
static int
ran_count(const char *name)
{
	size_t i, l = strlen(name);
	int k = 0;

	for (i = 0; i < last_ran.npaths; i++) {
		size_t pl = strlen(last_ran.paths[i]);

		if (pl >= l + 1 && strcmp(last_ran.paths[i] + pl - l, name) == 0 &&
		    last_ran.paths[i][pl - l - 1] == '/')
			k++;
	}
	return k;
}

/* What ran is kept once per file, by path and never argv; a refused exec
 * is not among it; past the list's room, the rest is counted. */
static void
files_let_run_are_kept_once_without_argv(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd, i;
	char out[8192];

	(void)state;
	assert_int_equal(run("/bin/echo s3cr3t-arg >/dev/null; /bin/echo x >/dev/null; "
	    "/bin/true; env false 2>/dev/null; echo done", &s, &d, &nd, out, sizeof(out), 0), 0);
	assert_string_equal(out, "done\n");
	assert_int_equal(ran_count("echo"), 1);
	assert_int_equal(ran_count("true"), 1);
	assert_int_equal(ran_count("env"), 1);
	assert_int_equal(ran_count("false"), 0);
	for (i = 0; i < last_ran.npaths; i++)
		assert_null(strstr(last_ran.paths[i], "s3cr3t"));
	assert_int_equal(last_ran.more, 0);
	ag_execguard_denials_free(d, nd);
	/* 70 distinct files (links to true): 64 listed, the rest counted */
	assert_int_equal(run("d=$(mktemp -d) && i=0 && while [ $i -lt 70 ]; do "
	    "ln -s /bin/true $d/t$i; $d/t$i; i=$((i+1)); done; rm -rf $d; echo done",
	    &s, &d, &nd, out, sizeof(out), 0), 0);
	assert_int_equal(last_ran.npaths, AG_EXECGUARD_MAX_RAN);
	assert_true(last_ran.more >= 6);
	ag_execguard_denials_free(d, nd);
	ag_execguard_ran_free(&last_ran);
}

static void
relative_paths_are_resolved_against_the_cwd(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	assert_int_equal(run("cd /bin && ./true && echo rel", &s, &d, &nd, out, sizeof(out), 0),
	    0);
	assert_string_equal(out, "rel\n");
	assert_true(s.saw_relative_resolved);
	ag_execguard_denials_free(d, nd);
}

static void
many_arguments_reach_the_judge(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	/* 2000 arguments, about 10 KiB: read whole */
	assert_int_equal(run("/bin/true $(seq 1 2000) && echo many", &s, &d, &nd, out,
	    sizeof(out), 0), 0);
	assert_string_equal(out, "many\n");
	assert_true(s.saw_long_argv);
	ag_execguard_denials_free(d, nd);
}

static void
too_many_arguments_fail_closed(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	/* more than AG_EXECGUARD_MAX_ARGS: refused whatever the judge would say */
	assert_int_equal(run("/bin/true $(seq 1 5000); echo rc=$?", &s, &d, &nd, out,
	    sizeof(out), 0), 0);
	assert_non_null(strstr(out, "rc=126\n"));
	assert_int_equal(nd, 1);
	assert_string_equal(d[0].rule, "exec:unreadable");
	ag_execguard_denials_free(d, nd);
}

static void
exec_storm_is_answered(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	assert_int_equal(run("i=0; while [ $i -lt 300 ]; do /bin/true || exit 9; i=$((i+1)); "
	    "done; echo done", &s, &d, &nd, out, sizeof(out), 0), 0);
	assert_string_equal(out, "done\n");
	ag_execguard_denials_free(d, nd);
}

static void
no_supervisor_means_no_exec(void **state)
{
	struct seen s = { 0 };
	struct ag_exec_denial *d;
	size_t nd;
	char out[4096];

	(void)state;
	/* the listener is gone before the first exec: the kernel fails it */
	assert_int_equal(run("echo should-not-run", &s, &d, &nd, out, sizeof(out), 1), 98);
	assert_null(strstr(out, "should-not-run"));
	assert_int_equal(s.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allowed_execs_run_and_every_exec_is_seen),
		cmocka_unit_test(refused_exec_fails_with_eacces_and_is_reported_once),
		cmocka_unit_test(files_let_run_are_kept_once_without_argv),
		cmocka_unit_test(relative_paths_are_resolved_against_the_cwd),
		cmocka_unit_test(many_arguments_reach_the_judge),
		cmocka_unit_test(too_many_arguments_fail_closed),
		cmocka_unit_test(exec_storm_is_answered),
		cmocka_unit_test(no_supervisor_means_no_exec),
	};

	if (RUNNING_ON_VALGRIND) {
		/* valgrind (3.19) does not implement seccomp(2): only construction
		 * and teardown can be checked here; 77 = skipped */
		struct ag_err err;
		struct ag_exec_denial *d;
		size_t nd;
		struct ag_execguard *g = ag_execguard_new(judge, NULL, NULL, &err);

		if (g == NULL)
			return 1;
		ag_execguard_finish(g, &d, &nd, NULL);
		printf("valgrind cannot run seccomp(2): only construction checked\n");
		return nd == 0 ? 77 : 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
