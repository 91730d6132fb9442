/*
 * test_standing.c - which policy changes revoke a live session
 * (core/standing.h): the verdict `agentgate edit` and the gateway's
 * before-each-line check both use, for each way an identity can lose its
 * standing, and the changes that must leave a session alone.
 */
#include "agconfig.h"

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

#include "testutil.h"

#include "common/config.h"
#include "core/standing.h"

#define KEY_A	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINrXyg89u0RTKzCfG5oaLlwMiB2wWgZ5XtFHefEtE2SD"
/* ssh-keygen -lf of KEY_A */
#define FP_A	"SHA256:y7SLcAm6VTH0WCN12KekYSSvRSAfLlusAvY48Aowoas"
#define KEY_B	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEz4+ScRySYEkKbLHp6ECwESxXJZxHZREuJvgVHHJ5ri"
#define TOK1	"6894ddb902c671b97aae683c7e776d4925e275610ff086faa6d00dd2bfe20e7a"
#define TOK2	"1111ddb902c671b97aae683c7e776d4925e275610ff086faa6d00dd2bfe20e7a"
#define HEAD	"version: 1\nprofiles:\n  dev:\n    allow: [ls]\n  ro:\n    allow: [ls]\n" \
		"identities:\n"

static struct ag_config *
parse(const char *yaml)
{
	struct ag_err err;
	struct ag_config *c;

	ag_err_clear(&err);
	c = ag_config_parse(yaml, strlen(yaml), "test.yaml", &err);
	if (c == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	return c;
}

/* The verdict on a session of identity `who` (key fp or token) when the
 * policy goes from was to now; why is filled when it ends. */
static int
judge(const char *was, const char *now, const char *who, const char *key,
    const char *profile, char *why, size_t len)
{
	struct ag_config *w = parse(was), *n = parse(now);
	int r;

	why[0] = '\0';
	r = ag_standing_judge(ag_config_identity(w, who), n, who, "agent", key, NULL, profile,
	    why, len);
	ag_config_free(w);
	ag_config_free(n);
	return r;
}

static const char base[] = HEAD
    "  - { name: a, keys: [\"" KEY_A "\"], profile: dev }\n"
    "  - { name: t, token_sha256: " TOK1 ", profile: dev }\n";

static void
test_unchanged_keeps(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(judge(base, base, "a", FP_A, "dev", why, sizeof(why)), 0);
	assert_int_equal(judge(base, base, "t", NULL, "dev", why, sizeof(why)), 0);
	/* an account's session: no identity to lose */
	assert_int_equal(judge(base, HEAD "  - { name: z, token_sha256: " TOK1 ", profile: dev }\n",
	    "", NULL, "dev", why, sizeof(why)), 0);
}

static void
test_removed_disabled_expired(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(judge(base, HEAD "  - { name: t, token_sha256: " TOK1 ", profile: dev }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 1);
	assert_string_equal(why, "identity a was removed from the policy");
	assert_int_equal(judge(base, HEAD
	    "  - { name: a, keys: [\"" KEY_A "\"], profile: dev, disabled: true }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 1);
	assert_string_equal(why, "identity a was disabled");
	assert_int_equal(judge(base, HEAD
	    "  - { name: a, keys: [\"" KEY_A "\"], profile: dev, expires: 2020-01-01 }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 1);
	assert_string_equal(why, "identity a has expired");
}

static void
test_profile_moved(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(judge(base, HEAD "  - { name: a, keys: [\"" KEY_A "\"], profile: ro }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 1);
	assert_string_equal(why, "identity a was moved to profile ro");
}

static void
test_keys(void **state)
{
	char why[512];

	(void)state;
	/* its key gone: ends; another key added: stays */
	assert_int_equal(judge(base, HEAD "  - { name: a, keys: [\"" KEY_B "\"], profile: dev }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "(" FP_A ") was removed from identity a"));
	assert_int_equal(judge(base, HEAD
	    "  - { name: a, keys: [\"" KEY_A "\", \"" KEY_B "\"], profile: dev }\n",
	    "a", FP_A, "dev", why, sizeof(why)), 0);
	/* a certificate's fingerprint matches no listed key: losing any key
	 * may be losing the one it certifies, so the session ends */
	assert_int_equal(judge(HEAD "  - { name: a, keys: [\"" KEY_A "\", \"" KEY_B "\"], profile: dev }\n",
	    base, "a", "SHA256:certificate", "dev", why, sizeof(why)), 1);
	assert_int_equal(judge(base, HEAD
	    "  - { name: a, keys: [\"" KEY_A "\", \"" KEY_B "\"], profile: dev }\n",
	    "a", "SHA256:certificate", "dev", why, sizeof(why)), 0);
}

static void
test_token_replaced(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(judge(base, HEAD "  - { name: t, token_sha256: " TOK2 ", profile: dev }\n",
	    "t", NULL, "dev", why, sizeof(why)), 1);
	assert_string_equal(why, "the token of identity t was replaced");
	/* a key session of the same identity is not its token's */
	assert_int_equal(judge(HEAD "  - { name: a, keys: [\"" KEY_A "\"], token_sha256: " TOK1
	    ", profile: dev }\n", HEAD "  - { name: a, keys: [\"" KEY_A "\"], token_sha256: " TOK2
	    ", profile: dev }\n", "a", FP_A, "dev", why, sizeof(why)), 0);
}

/* Locks: by identity and by account, any name the policy takes, only
 * root's, and a directory another could write locks everyone. */
static void
test_locks(void **state)
{
	char dir[] = "/tmp/agentgate-locks-XXXXXX", f[256], why[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(ag_lock_held_in(dir, "a", "acct", why, sizeof(why)), 0);
	snprintf(f, sizeof(f), "%s/identity:rt@corp", dir);
	write_file(f, "incident 42\n", 0644);
	assert_int_equal(ag_lock_held_in(dir, "rt@corp", "acct", why, sizeof(why)), 1);
	assert_string_equal(why, "identity rt@corp is locked: incident 42");
	assert_int_equal(ag_lock_held_in(dir, "a", "acct", why, sizeof(why)), 0);
	snprintf(f, sizeof(f), "%s/account:acct", dir);
	write_file(f, "", 0644);
	assert_int_equal(ag_lock_held_in(dir, "a", "acct", why, sizeof(why)), 1);
	assert_string_equal(why, "account acct is locked: locked by the administrator");
	unlink(f);
	/* a lock file others may write still locks, saying so */
	snprintf(f, sizeof(f), "%s/identity:.svc", dir);
	write_file(f, "x\n", 0666);
	assert_int_equal(ag_lock_held_in(dir, ".svc", NULL, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "not root's alone"));
	unlink(f);
	/* names that walk the directory are no lock at all */
	assert_int_equal(ag_lock_held_in(dir, "../x", NULL, why, sizeof(why)), 0);
	if (geteuid() == 0) {
		assert_int_equal(chmod(dir, 0777), 0);
		assert_int_equal(ag_lock_held_in(dir, "a", "acct", why, sizeof(why)), 1);
		assert_non_null(strstr(why, "every identity is locked"));
		assert_int_equal(chmod(dir, 0755), 0);
	}
	snprintf(f, sizeof(f), "%s/identity:rt@corp", dir);
	unlink(f);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged_keeps),
		cmocka_unit_test(test_removed_disabled_expired),
		cmocka_unit_test(test_profile_moved),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_token_replaced),
		cmocka_unit_test(test_locks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
