/*
 * test_execfile.c - the file an exec names, found as the process would
 * find it (src/exec/execfile.c), and the registry's programs by their
 * file (src/policy/progfiles.c): links relative and absolute, "..",
 * /proc/self and /dev/fd, a deleted file through its descriptor, loops
 * and missing names; /usr/bin/git, a link to it and git-core's git are
 * git.
 */
#define _GNU_SOURCE
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec/execfile.h"
#include "policy/prog.h"

static char dir[PATH_MAX];

/* the (dev, ino) of what ag_execfile_open found, or -errno */
static int
found(int dirfd, const char *path, int flags, struct stat *st)
{
	int fd = ag_execfile_open(getpid(), dirfd, path, flags);

	if (fd < 0)
		return fd;
	assert_int_equal(fstat(fd, st), 0);
	close(fd);
	return 0;
}

static void
same(const struct stat *a, const struct stat *b)
{
	assert_true(a->st_dev == b->st_dev && a->st_ino == b->st_ino);
}

/* path (printf-style) is found, and is want */
static void __attribute__((format(printf, 3, 4)))
finds(int dirfd, const struct stat *want, const char *fmt, ...)
{
	char p[PATH_MAX + 64];
	struct stat got;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	assert_int_equal(found(dirfd, p, 0, &got), 0);
	same(want, &got);
}

static int
setup(void **state)
{
	char p[PATH_MAX + 32];
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ag-execfile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/prog", dir);
	assert_true((fd = open(p, O_WRONLY | O_CREAT, 0755)) >= 0);
	assert_true(write(fd, "#!/bin/sh\n", 10) == 10);
	close(fd);
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/rel", dir);
	assert_int_equal(symlink("sub/../prog", p), 0);
	snprintf(p, sizeof(p), "%s/loop", dir);
	assert_int_equal(symlink("loop", p), 0);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_links_and_dots(void **state)
{
	char p[PATH_MAX + 32], t[PATH_MAX + 32];
	struct stat want, got;

	(void)state;
	snprintf(p, sizeof(p), "%s/prog", dir);
	assert_int_equal(stat(p, &want), 0);
	/* a relative link with "..", an absolute one, a path with ".." */
	finds(AT_FDCWD, &want, "%s/rel", dir);
	snprintf(p, sizeof(p), "%s/sub/abs", dir);
	snprintf(t, sizeof(t), "%s/rel", dir);
	assert_int_equal(symlink(t, p), 0);
	assert_int_equal(found(AT_FDCWD, p, 0, &got), 0);
	same(&want, &got);
	finds(AT_FDCWD, &want, "%s/sub/../sub/./abs", dir);
	/* ".." at the root stays there */
	finds(AT_FDCWD, &want, "/../../..%s/prog", dir);
	/* execveat's AT_SYMLINK_NOFOLLOW on a link, a loop, nothing there */
	snprintf(p, sizeof(p), "%s/rel", dir);
	assert_int_equal(found(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, &got), -ELOOP);
	snprintf(p, sizeof(p), "%s/loop", dir);
	assert_int_equal(found(AT_FDCWD, p, 0, &got), -ELOOP);
	snprintf(p, sizeof(p), "%s/none", dir);
	assert_int_equal(found(AT_FDCWD, p, 0, &got), -ENOENT);
	snprintf(p, sizeof(p), "%s/prog/x", dir);
	assert_int_equal(found(AT_FDCWD, p, 0, &got), -ENOTDIR);
}

static void
test_relative_and_fds(void **state)
{
	char p[PATH_MAX + 32], cwd[PATH_MAX];
	struct stat want, got;
	int d, fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/prog", dir);
	assert_int_equal(stat(p, &want), 0);
	/* relative to the cwd, and to execveat's directory */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(found(AT_FDCWD, "sub/../rel", 0, &got), 0);
	same(&want, &got);
	assert_int_equal(chdir(cwd), 0);
	assert_true((d = open(dir, O_PATH | O_DIRECTORY)) >= 0);
	assert_int_equal(found(d, "rel", 0, &got), 0);
	same(&want, &got);
	/* fexecve: the descriptor's own file, even deleted */
	assert_true((fd = open(p, O_RDONLY)) >= 0);
	assert_int_equal(found(fd, "", AT_EMPTY_PATH, &got), 0);
	same(&want, &got);
	assert_int_equal(found(fd, "", 0, &got), -ENOENT);
	/* /proc/self/fd/N, /proc/thread-self/fd/N, /dev/fd/N, /proc/PID/fd/N */
	finds(AT_FDCWD, &want, "/proc/self/fd/%d", fd);
	finds(AT_FDCWD, &want, "/proc/thread-self/fd/%d", fd);
	finds(AT_FDCWD, &want, "/dev/fd/%d", fd);
	finds(AT_FDCWD, &want, "/proc/%d/fd/%d", (int)getpid(), fd);
	/* a deleted file is read through the descriptor it was opened by */
	snprintf(p, sizeof(p), "%s/prog", dir);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	{
		int o = ag_execfile_open(getpid(), AT_FDCWD, p, 0), r;
		char head[16];

		assert_true(o >= 0);
		assert_true((r = ag_execfile_reopen(o)) >= 0);
		assert_int_equal(read(r, head, 10), 10);
		assert_memory_equal(head, "#!/bin/sh\n", 10);
		close(r);
		close(o);
	}
	close(fd);
	close(d);
}

/* /usr/bin/git, a link named g to it and git-core's own git are git */
static void
test_registry_files(void **state)
{
	char as[8][AG_PROG_PATH], p[PATH_MAX + 32];
	struct stat st;
	size_t n, i;
	int git = 0;

	(void)state;
	if (stat("/usr/bin/git", &st) < 0)
		skip();
	n = ag_prog_files_match("/usr/bin:/bin", st.st_dev, st.st_ino, as, 8);
	for (i = 0; i < n; i++)
		if (strcmp(strrchr(as[i], '/') + 1, "git") == 0)
			git = 1;
	assert_true(git);
	snprintf(p, sizeof(p), "%s/g", dir);
	assert_int_equal(symlink("/usr/bin/git", p), 0);
	assert_int_equal(found(AT_FDCWD, p, 0, &st), 0);
	assert_true(ag_prog_files_match("/usr/bin:/bin", st.st_dev, st.st_ino, as, 8) >= 1);
	if (stat("/usr/lib/git-core/git", &st) == 0)
		assert_true(ag_prog_files_match("/usr/bin", st.st_dev, st.st_ino, as, 8) >= 1);
	/* a file the registry does not know */
	snprintf(p, sizeof(p), "%s/rel", dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(ag_prog_files_match("/usr/bin", st.st_dev, st.st_ino, as, 8), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_and_dots),
		cmocka_unit_test(test_relative_and_fds),
		cmocka_unit_test(test_registry_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
