/*
 * test_execpolicy.c - deny rules at exec time (src/policy/execpolicy.c): an exec
 * the tree makes is refused exactly when the typed line's deny rules
 * would refuse it, and the programs no deny rule names pass untouched.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "policy/execpolicy.h"

static const char yaml[] =
	"version: 1\n"
	"profiles:\n"
	"  dev:\n"
	"    tier: developer\n"
	"    allow: [make, git]\n"
	"    deny:\n"
	"      - { command: git, subcommands: [push] }\n"
	"      - { command: rm, args: [\"-rf\", \"/\"] }\n"
	"      - su\n"
	"      - { name: no-root-tar, command: tar, argv: [\"-x\", \"-C\", /, \"-f\", \"*\"] }\n"
	"    paths: {read: [\"/\"], write: [\"/tmp\"], exec: [\"/tmp\"]}\n"
	"  strict:\n"
	"    allow: [ls, { command: git, subcommands: [status] }]\n"
	"    paths: {read: [\"/\"], write: [\"/tmp\"]}\n";

static struct ag_config *cfg;
static struct ag_execpolicy ep;
static char pathenv[] = "PATH=/usr/local/bin:/usr/bin:/bin";
static char *envv[] = { pathenv, NULL };

static int
setup(void **state)
{
	struct ag_err err;

	(void)state;
	if ((cfg = ag_config_parse(yaml, sizeof(yaml) - 1, "t.yaml", &err)) == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	ep.profile = ag_config_profile(cfg, "dev");
	ep.home = "/tmp";
	ep.env = envv;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	ag_config_free(cfg);
	return 0;
}

/* judge PATH ARGV...: 1 allow, 0 deny */
static int
judge(const char *path, ...)
{
	static char *words[31];
	char *argv[32], reason[512], rule[256];
	size_t argc = 0;
	va_list ap;
	const char *a;

	va_start(ap, path);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31) {
		free(words[argc]);
		if ((words[argc] = strdup(a)) == NULL)
			fail_msg("out of memory");
		argv[argc] = words[argc];
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	return ag_execpolicy_judge(&ep, path, argv, argc, "/tmp", reason, sizeof(reason),
	    rule, sizeof(rule));
}

static void
denied_subcommand_refused_however_it_is_spelled(void **state)
{
	(void)state;
	assert_int_equal(judge("/usr/bin/git", "git", "push", "origin", NULL), 0);
	assert_int_equal(judge("/usr/bin/git", "git", "-C", "repo", "push", NULL), 0);
	assert_int_equal(judge("/usr/bin/git", "git", "--no-pager", "push", "-q", NULL), 0);
	/* argv[0] lies about the program: the path decides */
	assert_int_equal(judge("/usr/bin/git", "make", "push", NULL), 0);
	/* another file with a denied name */
	assert_int_equal(judge("/tmp/bin/git", "git", "push", NULL), 0);
	/* git's own dispatch (issue 33, 2): argv[0] "git-push" of git itself,
	 * the helper directory's program, a link so named, and the plumbing
	 * that does what push does */
	assert_int_equal(judge("/usr/bin/git", "git-push", "origin", NULL), 0);
	assert_int_equal(judge("/usr/lib/git-core/git-push", "git-push", "origin", NULL), 0);
	assert_int_equal(judge("/usr/lib/git-core/git-push", "anything", NULL), 0);
	assert_int_equal(judge("/home/a/work/bin/git-push", "x", NULL), 0);
	assert_int_equal(judge("/usr/bin/git", "git", "send-pack", "--all", "r", NULL), 0);
	assert_int_equal(judge("/usr/lib/git-core/git-send-pack", "git-send-pack", "r", NULL), 0);
	assert_int_equal(judge("/usr/bin/git", "git", "-C", "x", "http-push", "u", NULL), 0);
	assert_int_equal(judge("/usr/lib/git-core/git-http-push", "x", "u", NULL), 0);
	/* an alias of push (-c alias.p=push, GIT_CONFIG_*): git runs the
	 * command an alias names as a child, whose exec is judged */
	assert_int_equal(judge("/usr/lib/git-core/git", "/usr/lib/git-core/git", "push", "o",
	    NULL), 0);
	/* an external git-NAME is its own program */
	assert_int_equal(judge("/usr/bin/git-lfs", "git-lfs", "pull", NULL), 1);
	/* ... while the other dashed helpers still run */
	assert_int_equal(judge("/usr/lib/git-core/git-remote-https", "git-remote-https", "o",
	    "https://h/r", NULL), 1);
	assert_int_equal(judge("/usr/bin/git", "git-status", NULL), 1);
	assert_int_equal(judge("/usr/lib/git-core/git-upload-pack", "git-upload-pack", "r",
	    NULL), 1);
}

/* the loader runs its operand without an exec of its own */
static void
loader_operand_is_judged_as_the_exec(void **state)
{
	(void)state;
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "/usr/bin/git", "push",
	    NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--library-path", "/x",
	    "--argv0", "make", "/usr/bin/git", "-C", "r", "push", NULL), 0);
	assert_int_equal(judge("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "x",
	    "/bin/su", NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "/usr/bin/git", "status",
	    NULL), 1);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--list", "/bin/ls", NULL),
	    1);
	/* red team 21, H3: rtld's own option list, exactly; a word with one
	 * '-' is the program (./-d/git), not an option to skip */
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "-d/git", "push", "r",
	    NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--inhibit-cache",
	    "--glibc-hwcaps-prepend", "x", "-q/git", "push", NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--verify", "--inhibit-rpath",
	    "x", "/usr/bin/git", "push", NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "-d/git", "status", NULL),
	    1);
}

/*
 * valgrind runs its operand in its own process: the launcher, Debian's
 * valgrind.bin, the tool binary by path and a child's exec under
 * --trace-children=yes are each judged as the program they run.
 */
static void
valgrind_operand_is_judged_as_the_exec(void **state)
{
	(void)state;
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "git", "push", NULL), 0);
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "-q", "--leak-check=full",
	    "--", "git", "-C", "r", "push", NULL), 0);
	assert_int_equal(judge("/usr/bin/valgrind.bin", "valgrind.bin", "-q",
	    "--trace-children=yes", "/usr/bin/git", "push", NULL), 0);
	assert_int_equal(judge("/usr/libexec/valgrind/memcheck-amd64-linux",
	    "/usr/bin/valgrind.bin", "/usr/bin/git", "push", NULL), 0);
	assert_int_equal(judge("/usr/lib/x86_64-linux-gnu/valgrind/none-amd64-linux", "x",
	    "--tool=none", "su", NULL), 0);
	/* valgrind inside valgrind, and the loader inside valgrind */
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "valgrind", "git", "push", NULL), 0);
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "/lib64/ld-linux-x86-64.so.2",
	    "/usr/bin/git", "push", NULL), 0);
	/* git's dispatch by name holds under it too */
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "git-push", "o", NULL), 0);
	/* what no deny rule names runs; `sh -c` is judged when sh runs git */
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "--trace-children=yes", "sh",
	    "-c", "git push", NULL), 1);
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "git", "status", NULL), 1);
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "--version", NULL), 1);
	assert_int_equal(judge("/usr/libexec/valgrind/memcheck-amd64-linux", "valgrind.bin",
	    "./a.out", NULL), 1);
}

static void
other_subcommands_and_programs_pass(void **state)
{
	(void)state;
	assert_int_equal(judge("/usr/bin/git", "git", "status", NULL), 1);
	assert_int_equal(judge("/usr/bin/git", "git", "-C", "repo", "commit", "-m", "push", NULL), 1);
	assert_int_equal(judge("/usr/bin/make", "make", "-j2", "push", NULL), 1);
	assert_int_equal(judge("/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "cc1", "-quiet", "x.c", NULL), 1);
	assert_int_equal(judge("/bin/sh", "sh", "-c", "git push", NULL), 1);	/* judged when sh runs git */
	assert_int_equal(judge("/usr/bin/rm", "rm", "-f", "x.o", NULL), 1);
}

static void
denied_program_and_arguments(void **state)
{
	char reason[512], rule[256];
	char a0[] = "su", a1[] = "-c", a2[] = "id";
	char *argv[] = { a0, a1, a2, NULL };

	(void)state;
	assert_int_equal(ag_execpolicy_judge(&ep, "/bin/su", argv, 3, "/tmp", reason,
	    sizeof(reason), rule, sizeof(rule)), 0);
	assert_string_equal(rule, "profiles.dev.deny[2]");
	assert_non_null(strstr(reason, "su"));
	assert_int_equal(judge("/usr/bin/rm", "rm", "-rf", "/", NULL), 0);
}

/* A deny rule's argv at exec time: exactly that vector, by its name. */
static void
denied_exact_argv_by_name(void **state)
{
	char reason[512], rule[256];
	char a0[] = "tar", a1[] = "-x", a2[] = "-C", a3[] = "/", a4[] = "-f", a5[] = "a.tar";
	char *argv[] = { a0, a1, a2, a3, a4, a5, NULL };

	(void)state;
	assert_int_equal(ag_execpolicy_judge(&ep, "/usr/bin/tar", argv, 6, "/tmp", reason,
	    sizeof(reason), rule, sizeof(rule)), 0);
	assert_string_equal(rule, "profiles.dev.deny.no-root-tar");
	assert_non_null(strstr(reason, "profiles.dev.deny.no-root-tar (tar)"));
	/* another directory, or one word more, is not that vector */
	assert_int_equal(judge("/usr/bin/tar", "tar", "-x", "-C", "/tmp", "-f", "a.tar", NULL), 1);
	assert_int_equal(judge("/usr/bin/tar", "tar", "-x", "-C", "/", "-f", "a.tar", "-v", NULL), 1);
	/* the same directory spelled otherwise is */
	assert_int_equal(judge("/usr/bin/tar", "tar", "-x", "-C", "/tmp/..", "-f", "a.tar", NULL), 0);
	assert_int_equal(judge("/usr/bin/tar", "tar", "-x", "-C", "//", "-f", "a.tar", NULL), 0);
}

/*
 * Strict tier: the loader runs only what the profile allows, judged as a
 * typed line (the kernel's execute rules see only the loader's own exec),
 * and loads nothing beside it.
 */
static void
strict_loader_runs_only_allowed_programs(void **state)
{
	const struct ag_profile *dev = ep.profile;

	(void)state;
	ep.profile = ag_config_profile(cfg, "strict");
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "/bin/ls", "-l", NULL), 1);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "/usr/bin/git", "status",
	    NULL), 1);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "/usr/bin/git", "log",
	    NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so",
	    "/usr/lib/openssh/sftp-server", NULL), 0);
	assert_int_equal(judge("/lib/ld64.so.2", "ld64.so.2", "/usr/bin/make", NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--preload", "/tmp/x.so",
	    "/bin/ls", NULL), 0);
	assert_int_equal(judge("/lib64/ld-linux-x86-64.so.2", "ld.so", "--library-path", "/tmp",
	    "/bin/ls", NULL), 0);
	/* valgrind too: its tool binary's exec is the only one the kernel sees */
	assert_int_equal(judge("/usr/bin/valgrind", "valgrind", "-q", "/bin/ls", NULL), 1);
	assert_int_equal(judge("/usr/libexec/valgrind/memcheck-amd64-linux", "valgrind.bin",
	    "/usr/bin/git", "log", NULL), 0);
	/* programs run by their own exec are the kernel's to judge */
	assert_int_equal(judge("/usr/bin/make", "make", NULL), 1);
	ep.profile = dev;
}

static void
unparsable_or_huge_exec_of_a_denied_program_fails_closed(void **state)
{
	static char big[AG_EXECPOLICY_MAX];

	(void)state;
	assert_int_equal(judge("/usr/bin/git", "git", "st\xff\xfe", NULL), 0);
	memset(big, 'a', sizeof(big) - 1);
	assert_int_equal(judge("/usr/bin/git", "git", big, NULL), 0);
	/* a huge exec of a program no rule names is not even looked at */
	assert_int_equal(judge("/usr/bin/ld", "ld", big, NULL), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(denied_subcommand_refused_however_it_is_spelled),
		cmocka_unit_test(loader_operand_is_judged_as_the_exec),
		cmocka_unit_test(valgrind_operand_is_judged_as_the_exec),
		cmocka_unit_test(other_subcommands_and_programs_pass),
		cmocka_unit_test(denied_program_and_arguments),
		cmocka_unit_test(denied_exact_argv_by_name),
		cmocka_unit_test(unparsable_or_huge_exec_of_a_denied_program_fails_closed),
		cmocka_unit_test(strict_loader_runs_only_allowed_programs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
