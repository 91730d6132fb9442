/* test_server.c - the built-in server's file checks: host keys, authorized
 * keys paths and their StrictModes-like permission walk. */
#include "agconfig.h"

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

#include "front/server.h"
#include "testutil.h"

#ifndef TOP_BUILDDIR
#define TOP_BUILDDIR "."
#endif

/* Under the build tree, not /tmp: a world-writable parent fails the walk. */
static char dir[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/server-unit.XXXXXX", TOP_BUILDDIR);
	if (mkdtemp(dir) == NULL || chmod(dir, 0755) < 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return tu_rm_rf(dir);
}

static void
expands_keys_path_tokens(void **state)
{
	char out[256];
	struct ag_err err;

	(void)state;
	assert_int_equal(ag_server_expand_keys_path("~/.ssh/authorized_keys", "bob",
	    "/home/bob", out, sizeof(out), &err), 0);
	assert_string_equal(out, "/home/bob/.ssh/authorized_keys");
	assert_int_equal(ag_server_expand_keys_path("/etc/keys/%u", "bob", "/home/bob",
	    out, sizeof(out), &err), 0);
	assert_string_equal(out, "/etc/keys/bob");
	assert_int_equal(ag_server_expand_keys_path("%h/k-%u", "bob", "/home/bob", out,
	    sizeof(out), &err), 0);
	assert_string_equal(out, "/home/bob/k-bob");
	/* a relative home would make the path relative: refused */
	assert_int_equal(ag_server_expand_keys_path("~/k", "bob", "home", out,
	    sizeof(out), &err), -1);
	assert_non_null(strstr(err.msg, "not absolute"));
	assert_int_equal(ag_server_expand_keys_path("/k/%z", "bob", "/h", out,
	    sizeof(out), &err), -1);
	/* bounded: a long user name does not overflow */
	assert_int_equal(ag_server_expand_keys_path("/k/%u%u%u%u", "0123456789abcdef",
	    "/h", out, 40, &err), -1);
	assert_non_null(strstr(err.msg, "too long"));
}

static void
keys_perms_strict(void **state)
{
	char sub[PATH_MAX + 8], file[PATH_MAX + 32], link[PATH_MAX + 32];
	struct ag_err err;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/.ssh", dir);
	snprintf(file, sizeof(file), "%s/authorized_keys", sub);
	snprintf(link, sizeof(link), "%s/linked_keys", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(file, "ssh-ed25519 AAAA x\n", 0600);
	assert_int_equal(ag_server_check_keys_perms(file, getuid(), &err), 0);

	assert_int_equal(chmod(file, 0620), 0);
	assert_int_equal(ag_server_check_keys_perms(file, getuid(), &err), -1);
	assert_non_null(strstr(err.msg, "is writable by"));
	assert_int_equal(chmod(file, 0600), 0);

	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(ag_server_check_keys_perms(file, getuid(), &err), -1);
	assert_non_null(strstr(err.msg, sub));
	/* sticky and root-owned (like /tmp) is safe above the file; sticky
	 * and owned by anyone else is not */
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(ag_server_check_keys_perms(file, getuid(), &err),
	    getuid() == 0 ? 0 : -1);
	assert_int_equal(chmod(sub, 0700), 0);

	/* a symlink is judged by where it leads */
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(ag_server_check_keys_perms(link, getuid(), &err), 0);
	assert_int_equal(chmod(sub, 0770), 0);
	assert_int_equal(ag_server_check_keys_perms(link, getuid(), &err), -1);
	assert_int_equal(chmod(sub, 0700), 0);

	if (getuid() == 0) {
		/* another user's file may not authorise this one */
		assert_int_equal(chown(file, 12345, 12345), 0);
		assert_int_equal(ag_server_check_keys_perms(file, 23456, &err), -1);
		assert_non_null(strstr(err.msg, "is owned by"));
		/* the owner itself, under root-owned directories, is fine */
		assert_int_equal(chown(sub, 12345, 12345), 0);
		assert_int_equal(ag_server_check_keys_perms(file, 12345, &err), 0);
	}
	snprintf(file, sizeof(file), "%s/missing", dir);
	assert_int_equal(ag_server_check_keys_perms(file, getuid(), &err), -1);
}

static void
host_key_generated_and_checked(void **state)
{
	char key[PATH_MAX + 16], pub[PATH_MAX + 32], link[PATH_MAX + 16], line[512];
	struct ag_err err;
	struct stat st;
	FILE *fp;

	(void)state;
	snprintf(key, sizeof(key), "%s/hostkey", dir);
	snprintf(pub, sizeof(pub), "%s.pub", key);
	snprintf(link, sizeof(link), "%s/hostkey.lnk", dir);
	assert_int_equal(ag_server_generate_host_key(key, &err), 0);
	assert_int_equal(stat(key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_non_null(fp = fopen(pub, "r"));
	assert_non_null(fgets(line, sizeof(line), fp));
	fclose(fp);
	assert_int_equal(strncmp(line, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", 32), 0);
	assert_int_equal(ag_server_check_key_file(key, &err), 0);

	/* never over an existing key */
	assert_int_equal(ag_server_generate_host_key(key, &err), -1);
	assert_non_null(strstr(err.msg, "File exists"));

	assert_int_equal(chmod(key, 0640), 0);
	assert_int_equal(ag_server_check_key_file(key, &err), -1);
	assert_non_null(strstr(err.msg, "chmod 600"));
	assert_int_equal(chmod(key, 0604), 0);
	assert_int_equal(ag_server_check_key_file(key, &err), -1);
	assert_int_equal(chmod(key, 0600), 0);

	assert_int_equal(symlink(key, link), 0);
	assert_int_equal(ag_server_check_key_file(link, &err), -1);
	assert_non_null(strstr(err.msg, "not a regular file"));
	if (getuid() == 0) {
		assert_int_equal(chown(key, 12345, 0), 0);
		assert_int_equal(ag_server_check_key_file(key, &err), -1);
		assert_non_null(strstr(err.msg, "owned by uid 12345"));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expands_keys_path_tokens),
		cmocka_unit_test_setup_teardown(keys_perms_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(host_key_generated_and_checked, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
