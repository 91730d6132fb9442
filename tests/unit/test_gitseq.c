/* test_gitseq.c - what the look after a command takes for a program in a
 * rebase's state (src/exec/gitseq.c): a todo's exec line, a strategy
 * other than git's own, options am would hand to git apply that it does
 * not pass itself, sequencer/opts' strategy; what it leaves alone (git's
 * own state, one older than the command). */
#include <setjmp.h>
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

#include "exec/sandbox_int.h"

static char dir[64];

static void
put(const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	char p[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_gitseq.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/rebase-merge", dir);
	if (mkdir(p, 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/rebase-apply", dir);
	if (mkdir(p, 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/sequencer", dir);
	return mkdir(p, 0755);
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
planted(char *what, size_t n)
{
	const char *name = NULL;
	int rc = sb_git_seq_planted(dir, 0, &name, what, n);

	if (rc)
		assert_non_null(name);
	return rc;
}

static void
gits_own_state_runs_nothing(void **state)
{
	char what[256];

	(void)state;
	put("rebase-merge/git-rebase-todo", "pick 1234567 one\n  p 89abcde two\n"
	    "fixup -C 1111111 three\r\nlabel onto\nreset onto\nmerge -C 2222222 x # m\n"
	    "update-ref refs/heads/b\nbreak\n\n# exec not this\n# x nor this\n");
	put("rebase-merge/done", "exec make test\n");	/* run already */
	put("rebase-merge/strategy", "ort\n");
	put("rebase-merge/strategy_opts", " '--theirs'");
	put("rebase-merge/gpg_sign_opt", "-S");
	put("rebase-apply/apply-opt", " '--whitespace=fix' '-C1' '--reject'");
	put("sequencer/todo", "pick 1234567 a\nrevert 89abcde b\n");
	put("sequencer/opts", "[options]\n\tstrategy = recursive\n\tstrategy-option = "
	    "theirs\n\tsignoff = true\n");
	assert_int_equal(planted(what, sizeof(what)), 0);
}

static void
programs_are_planted(void **state)
{
	static const struct { const char *file, *text, *why; } c[] = {
		{ "rebase-merge/git-rebase-todo", "pick 1 a\nexec id\n", "line 2: exec" },
		{ "rebase-merge/git-rebase-todo", "\t x id\n", "line 1: x" },
		{ "rebase-merge/git-rebase-todo", "Exec id\n", "line 1: Exec" },
		{ "rebase-merge/git-rebase-todo", "pick\x01 1\n", "line 1:" },
		{ "rebase-merge/strategy", "x/../pay\n", "git-merge-x/../pay" },
		{ "rebase-apply/apply-opt", " '--unsafe-paths' '--directory=/etc'", "apply-opt" },
		{ "rebase-apply/apply-opt", " '--uns'", "apply-opt" },
		{ "sequencer/todo", "exec id\n", "line 1: exec" },
		{ "sequencer/opts", "[options]\n\tstrategy = x\n", "opts:" },
		{ "sequencer/opts", "[options]\n\tstrategy = \"ort\"\n", "opts:" },
		{ NULL, NULL, NULL }
	};
	char what[256], p[256];
	size_t i;

	(void)state;
	for (i = 0; c[i].file != NULL; i++) {
		put(c[i].file, c[i].text);
		assert_int_equal(planted(what, sizeof(what)), 1);
		if (strstr(what, c[i].why) == NULL)
			fail_msg("%s: %s", c[i].text, what);
		snprintf(p, sizeof(p), "%s/%s", dir, c[i].file);
		unlink(p);
	}
}

static void
links_and_odd_files_are_planted(void **state)
{
	char what[256], p[256];

	(void)state;
	snprintf(p, sizeof(p), "%s/rebase-merge/git-rebase-todo", dir);
	assert_int_equal(symlink("/tmp/elsewhere", p), 0);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "not a regular file"));
	unlink(p);
	snprintf(p, sizeof(p), "%s/rebase-merge", dir);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(symlink("/tmp/elsewhere", p), 0);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "rebase-merge (a symbolic link)"));
}

static void
older_state_is_left_alone(void **state)
{
	struct timespec now;
	const char *name = NULL;
	char what[256];

	(void)state;
	put("rebase-merge/git-rebase-todo", "exec id\n");
	clock_gettime(CLOCK_REALTIME, &now);
	/* a command that started after it was written (past the slack) */
	assert_int_equal(sb_git_seq_planted(dir, (long long)now.tv_sec * 1000000000LL +
	    now.tv_nsec + 5000000000LL, &name, what, sizeof(what)), 0);
	assert_int_equal(sb_git_seq_planted(dir, (long long)now.tv_sec * 1000000000LL +
	    now.tv_nsec, &name, what, sizeof(what)), 1);
	assert_string_equal(name, "rebase-merge");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(gits_own_state_runs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(programs_are_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(links_and_odd_files_are_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(older_state_is_left_alone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
