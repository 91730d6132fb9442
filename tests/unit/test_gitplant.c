/* test_gitplant.c - what the scan after a command takes for planted in a
 * new git directory (src/exec/gitplant.c): hooks other than git's samples,
 * config keys off git's own list, a config it cannot read as git would, a
 * part that is a link; and what it leaves alone.  And what the look after a
 * command takes for a program in a rebase's state (src/exec/gitseq.c): a
 * todo's exec line, a strategy other than git's own, options am would hand
 * to git apply that it does not pass itself, sequencer/opts' strategy;
 * what it leaves alone (git's own state, one older than the command). */
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
	snprintf(dir, sizeof(dir), "/tmp/test_gitplant.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/hooks", dir);
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
	return sb_git_planted(dir, NULL, what, n);
}

static void
fresh_repository_is_clean(void **state)
{
	char what[512];

	(void)state;
	put("config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	    "[remote \"origin\"]\n\turl = ../a\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
	    "[submodule \"lib\"]\n\turl = ../lib\n\tupdate = rebase\n\tactive = true\n"
	    "[extensions]\n\tworktreeConfig = true\n; a comment\n# another\n"
	    "[user]\r\n\tname = A \"B\" C\r\n");
	put("hooks/pre-commit.sample", "#!/bin/sh\n");
	assert_int_equal(planted(what, sizeof(what)), 0);
}

static void
program_keys_are_planted(void **state)
{
	static const char *const cfgs[] = {
		"[core]\n\tfsmonitor = touch x\n", "[Core]\n\tHooksPath = /x\n",
		"[core] editor = vi\n", "[alias]\n\tx = \"!sh -c id\"\n",
		"[filter \"lfs\"]\n\tclean = x\n", "[diff \"bin\"]\n\ttextconv = x\n",
		"[include]\n\tpath = ../x\n", "[includeIf \"gitdir:/\"]\n\tpath = x\n",
		"[credential]\n\thelper = x\n", "[submodule \"s\"]\n\tupdate = !x\n",
		"[core]\n\tsshCommand=x\n",
		/* off the allow-list, whatever git makes of them */
		"[alias]\n\tst = -c core.pager=x log\n", "[commit]\n\tgpgSign = true\n",
		"[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n", "[trailer \"t\"]\n\tcommand = x\n",
		"[interactive]\n\tdiffFilter = x\n", "[mergetool \"m\"]\n\tpath = x\n",
		"[remote \"o\"]\n\turl = ext::sh -c x\n", "[remote \"o\"]\n\tvcs = x\n",
		/* judged as git reads the value: quotes and escapes undone
		 * (red team 23, L2); a helper of an unknown scheme */
		"[remote \"o\"]\n\turl = ext:\"\":sh -c x\n",
		"[remote \"o\"]\n\turl = \"ext::sh\" # c\n",
		"[remote \"o\"]\n\turl = ext\\\"::x\n", "[remote \"o\"]\n\turl = a\\qb\n",
		"[remote \"o\"]\n\turl = \"x\n", "[remote \"o\"]\n\turl = foo://x/y\n",
		"[remote \"o\"]\n\tpushurl = HTTPS://x/y\n",
		"[submodule \"s\"]\n\tupdate = \"!x\"\n",
		/* a work tree outside the write roots (none here) */
		"[core]\n\tworktree = /\n", "[core]\n\tworktree = ../x\n", "[core]\n\tworktree\n",
		/* read otherwise than git reads it: counted as planted */
		"\xef\xbb\xbf[core]\n\tbare = false\n",
		"[core]\n\tzz = a\\\n[user]\n\tname = x\n", "[core\n\tbare = false\n",
		"[core]\n\tbare = false\x01\n", "bare = false\n", "[core]\n\t= x\n",
		NULL
	};
	char what[512];
	size_t i;

	(void)state;
	for (i = 0; cfgs[i] != NULL; i++) {
		put("config", cfgs[i]);
		assert_int_equal(planted(what, sizeof(what)), 1);
		assert_non_null(strstr(what, "/config ("));
	}
}

static void
a_nul_byte_is_planted(void **state)
{
	static const char text[] = "# x\0y\n[core]\n\tfsmonitor = x\n";
	char what[512], p[256];
	FILE *f;

	(void)state;
	snprintf(p, sizeof(p), "%s/config", dir);
	assert_non_null(f = fopen(p, "w"));
	fwrite(text, 1, sizeof(text) - 1, f);
	fclose(f);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "NUL"));
}

static void
linked_parts_are_planted_and_set_aside(void **state)
{
	char what[512], p[256], q[256];
	struct stat st;

	(void)state;
	snprintf(p, sizeof(p), "%s/config", dir);
	assert_int_equal(symlink("elsewhere", p), 0);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "/config (a symbolic link)"));
	assert_int_equal(sb_git_disarm(dir, NULL), 0);
	assert_int_not_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/config.planted", dir);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/hooks", dir);
	snprintf(q, sizeof(q), "%s/hooks-real", dir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink("hooks-real", p), 0);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "/hooks (a symbolic link"));
	assert_int_equal(sb_git_disarm(dir, NULL), 0);
	/* a link is not renamed but replaced by a note (red team 23, L3) */
	snprintf(p, sizeof(p), "%s/hooks.planted", dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void
a_hook_is_planted_and_disarmed(void **state)
{
	char what[512], p[256];
	struct stat st;

	(void)state;
	put("config", "[core]\n\tbare = false\n");
	put("hooks/post-commit", "#!/bin/sh\ntouch x\n");
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "/hooks/post-commit"));
	sb_git_disarm(dir, NULL);
	snprintf(p, sizeof(p), "%s/hooks/post-commit", dir);
	assert_int_not_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/hooks/post-commit.planted", dir);
	assert_int_equal(lstat(p, &st), 0);
	/* still reported, under its new name, until it is removed */
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "post-commit.planted"));
	unlink(p);
	assert_int_equal(planted(what, sizeof(what)), 0);
}

static void
a_config_is_set_aside(void **state)
{
	char what[512], p[256];
	struct stat st;

	(void)state;
	put("config", "[core]\n\tpager = less\n");
	sb_git_disarm(dir, NULL);
	snprintf(p, sizeof(p), "%s/config", dir);
	assert_int_not_equal(lstat(p, &st), 0);
	assert_int_equal(planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "config.planted"));
	snprintf(p, sizeof(p), "%s/config.planted", dir);
	unlink(p);
	assert_int_equal(planted(what, sizeof(what)), 0);
}

/* core.worktree: beneath a write root, through no link there (red team
 * 23, H2); git's submodule form, relative to the git directory */
static void
worktree_beneath_the_write_roots(void **state)
{
	struct plist w = { NULL, 0, 0 };
	char what[512], p[256], root[256];

	(void)state;
	assert_non_null(realpath(dir, root));
	assert_int_equal(sb_plist_add(&w, root), 0);
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	put("config", "[core]\n\tworktree = ../x/../sub\n");
	assert_int_equal(planted(what, sizeof(what)), 1);	/* no roots given */
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 1);	/* dir/.. */
	put("config", "[core]\n\tworktree = sub/./\n");
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 0);
	put("config", "[core]\n\tworktree = \"not-yet\"\n");
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 0);
	put("config", "[core]\n\tworktree = sub/../..\n");
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 1);
	put("config", "[core]\n\tworktree = /\n");
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 1);
	/* a link beneath the root, even one leading back into it */
	snprintf(p, sizeof(p), "%s/ln", dir);
	assert_int_equal(symlink("sub", p), 0);
	put("config", "[core]\n\tworktree = ln\n");
	assert_int_equal(sb_git_planted(dir, &w, what, sizeof(what)), 1);
	assert_non_null(strstr(what, "/ln is outside the write roots or a link"));
	sb_plist_free(&w);
}

/* ---- a rebase's state (gitseq.c): what continuing it runs ---------------- */

static void
state_dirs(void)
{
	static const char *const names[] = { "rebase-merge", "rebase-apply", "sequencer", NULL };
	char p[128];
	size_t i;

	for (i = 0; names[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		assert_int_equal(mkdir(p, 0755), 0);
	}
}

static int
seq_planted(char *what, size_t n)
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
	state_dirs();
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
	assert_int_equal(seq_planted(what, sizeof(what)), 0);
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
		/* git reads the whole file: git-merge-resolve\n/../pay */
		{ "rebase-merge/strategy", "resolve\n/../pay\n", "git-merge-resolve" },
		{ "rebase-merge/strategy_opts", " '--theirs' '--index-output=/etc/x'",
		  "strategy option --index-output" },
		{ "rebase-merge/strategy_opts", " '--the'\\''irs'", "quoted strategy options" },
		{ "sequencer/opts", "[options]\n\tstrategy-option = index-output=/x\n", "opts:" },
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
	state_dirs();
	for (i = 0; c[i].file != NULL; i++) {
		put(c[i].file, c[i].text);
		assert_int_equal(seq_planted(what, sizeof(what)), 1);
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
	state_dirs();
	snprintf(p, sizeof(p), "%s/rebase-merge/git-rebase-todo", dir);
	assert_int_equal(symlink("/tmp/elsewhere", p), 0);
	assert_int_equal(seq_planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "not a regular file"));
	unlink(p);
	snprintf(p, sizeof(p), "%s/rebase-merge", dir);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(symlink("/tmp/elsewhere", p), 0);
	assert_int_equal(seq_planted(what, sizeof(what)), 1);
	assert_non_null(strstr(what, "rebase-merge (a symbolic link)"));
}

static void
older_state_is_left_alone(void **state)
{
	const char *name = NULL;
	char what[256], p[512];
	struct stat st;
	long long born;

	(void)state;
	state_dirs();
	put("rebase-merge/git-rebase-todo", "exec id\n");
	/* times from the file itself, not the clock: nothing here depends on
	 * how long the test takes */
	snprintf(p, sizeof(p), "%s/rebase-merge/git-rebase-todo", dir);
	assert_int_equal(stat(p, &st), 0);
	born = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
	/* a command that started after it was written (past the slack) */
	assert_int_equal(sb_git_seq_planted(dir, born + 5000000000LL, &name, what,
	    sizeof(what)), 0);
	/* one that was running when it was written */
	assert_int_equal(sb_git_seq_planted(dir, born, &name, what, sizeof(what)), 1);
	assert_string_equal(name, "rebase-merge");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fresh_repository_is_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(program_keys_are_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(a_hook_is_planted_and_disarmed, setup, teardown),
		cmocka_unit_test_setup_teardown(a_config_is_set_aside, setup, teardown),
		cmocka_unit_test_setup_teardown(a_nul_byte_is_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(linked_parts_are_planted_and_set_aside, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(worktree_beneath_the_write_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(gits_own_state_runs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(programs_are_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(links_and_odd_files_are_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(older_state_is_left_alone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
