/*
 * test_privsep.c - what the gateway makes in a place the agent controls
 * (src/common/privsep.c): a directory made beneath a path walked without
 * following links, so a part of it swapped for a link since the gateway
 * looked cannot send the gateway's group somewhere else.
 */
#include "agconfig.h"

#include <errno.h>
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

#include "common/privsep.h"

static char top[] = "/tmp/test_privsep.XXXXXX";

static void
path(char *buf, size_t len, const char *rel)
{
	assert_true((size_t)snprintf(buf, len, "%s/%s", top, rel) < len);
}

static void
made_where_asked(void **state)
{
	char d[PATH_MAX], h[PATH_MAX];
	struct stat st;

	(void)state;
	path(d, sizeof(d), "repo/.git");
	assert_int_equal(mkdir(d, 0755) == 0 || errno == EEXIST, 1);
	assert_int_equal(ag_privsep_mkdir_nofollow(d, "hooks", 0755), 0);
	path(h, sizeof(h), "repo/.git/hooks");
	assert_int_equal(stat(h, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_gid, getgid());
}

/* the repository swapped for a link (to where the group may write): refused */
static void
link_on_the_way_refused(void **state)
{
	char target[PATH_MAX], link[PATH_MAX], d[PATH_MAX], h[PATH_MAX];
	struct stat st;

	(void)state;
	path(target, sizeof(target), "elsewhere/.git");
	assert_int_equal(mkdir(target, 0755) == 0 || errno == EEXIST, 1);
	path(target, sizeof(target), "elsewhere");
	path(link, sizeof(link), "swapped");
	assert_int_equal(symlink(target, link), 0);
	path(d, sizeof(d), "swapped/.git");
	assert_int_equal(ag_privsep_mkdir_nofollow(d, "hooks", 0755), -1);
	assert_true(errno == ENOTDIR || errno == ELOOP);
	path(h, sizeof(h), "elsewhere/.git/hooks");
	assert_int_equal(lstat(h, &st), -1);
	/* the last part a link too */
	path(link, sizeof(link), "last");
	path(target, sizeof(target), "elsewhere/.git");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(ag_privsep_mkdir_nofollow(link, "hooks", 0755), -1);
	assert_int_equal(lstat(h, &st), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(made_where_asked),
		cmocka_unit_test(link_on_the_way_refused),
	};
	char cmd[PATH_MAX + 16];
	int rc;

	if (mkdtemp(top) == NULL || mkdir(strcat(strcpy(cmd, top), "/repo"), 0755) < 0 ||
	    mkdir(strcat(strcpy(cmd, top), "/elsewhere"), 0755) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	(void)!system(cmd);
	return rc;
}
