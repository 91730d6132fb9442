/*
 * test_pam.c - pam_agentgate.so's identity matching (pam/pamid.c): key
 * lines from SSH_AUTH_INFO_0 (plain keys and certificates), tokens, and the
 * account checks.  The config comes from the real loader (ag_config_parse),
 * the keys and certificates from ssh-keygen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/config.h"
#include "pamid.h"
#include "common/sha256.h"
#include "common/sshkey.h"

/* ssh-keygen -t ed25519 (k1, k2); k1-cert signed by a CA with ssh-keygen -s. */
#define K1	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs5ZvEiBAZ8D9cpbZQpmeCyvAz2xx+ecLuYrUHBxB/s"
#define K2	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIANszs2qYqv1DeHkYWZzjjXF6m2bXMVOdAbMuzlnhPll"
#define K1CERT	"ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIPEvr0EBWwBYsF1j7A/ghot/+zz6+s3bjKk8qnV866v7AAAAIPs5ZvEiBAZ8D9cpbZQpmeCyvAz2xx+ecLuYrUHBxB/sAAAAAAAAAAAAAAABAAAABmsxY2VydAAAAAkAAAAFYWdlbnQAAAAAAAAAAP//////////AAAAAAAAAIIAAAAVcGVybWl0LVgxMS1mb3J3YXJkaW5nAAAAAAAAABdwZXJtaXQtYWdlbnQtZm9yd2FyZGluZwAAAAAAAAAWcGVybWl0LXBvcnQtZm9yd2FyZGluZwAAAAAAAAAKcGVybWl0LXB0eQAAAAAAAAAOcGVybWl0LXVzZXItcmMAAAAAAAAAAAAAADMAAAALc3NoLWVkMjU1MTkAAAAghJumNPmbMtCzQQ+mdHE2WXWTB1/HoUx/O38W0awjJVQAAABTAAAAC3NzaC1lZDI1NTE5AAAAQHsGGbQmKWgsiuxyWvF8OgPxaPxRsKypW/6jJCKbXtD1Fh/IeAsUmwPWEeoo92lGYMnIJj99fTE8R2Dbv7Kg+w4="
#define KR	"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDB56NWu5L73gQhicLn+DpXg0n3cRGk8RM32wdXk7qNjRyHJ/gm+6Il3MJ1NSHwVLkZ67EobIdpxaxt9CrnrNxJikxlGUf9CZ2ruQfhUR8/ratQzVDTkgqR7BCUtwPQeIpfWsBwgOZRyhEb9pN4/l3Zy0+lr01DD7S4K6mwluTbZQ=="
#define KRCERT	"ssh-rsa-cert-v01@openssh.com AAAAHHNzaC1yc2EtY2VydC12MDFAb3BlbnNzaC5jb20AAAAg19lfodnWJBGqOtYRes0QSjc2E4YfhbfsO+mfaCgEUp8AAAADAQABAAAAgQDB56NWu5L73gQhicLn+DpXg0n3cRGk8RM32wdXk7qNjRyHJ/gm+6Il3MJ1NSHwVLkZ67EobIdpxaxt9CrnrNxJikxlGUf9CZ2ruQfhUR8/ratQzVDTkgqR7BCUtwPQeIpfWsBwgOZRyhEb9pN4/l3Zy0+lr01DD7S4K6mwluTbZQAAAAAAAAAAAAAAAQAAAAZrcmNlcnQAAAAJAAAABWFnZW50AAAAAAAAAAD//////////wAAAAAAAACCAAAAFXBlcm1pdC1YMTEtZm9yd2FyZGluZwAAAAAAAAAXcGVybWl0LWFnZW50LWZvcndhcmRpbmcAAAAAAAAAFnBlcm1pdC1wb3J0LWZvcndhcmRpbmcAAAAAAAAACnBlcm1pdC1wdHkAAAAAAAAADnBlcm1pdC11c2VyLXJjAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIISbpjT5mzLQs0EPpnRxNll1kwdfx6FMfzt/FtGsIyVUAAAAUwAAAAtzc2gtZWQyNTUxOQAAAECZ8UgjU+VWrrMkklavH2ucqtsUVBz7jrHbBNf9d5HYQ4CIMgySvLnEIAh9INihSUX5nb2uBxmENl7ez/GjGb8H"
#define KECERT	"ecdsa-sha2-nistp256-cert-v01@openssh.com AAAAKGVjZHNhLXNoYTItbmlzdHAyNTYtY2VydC12MDFAb3BlbnNzaC5jb20AAAAgRMCyztWAMvgIrcG74+PgyBTiuCN8AcMzk//qI/wQdgMAAAAIbmlzdHAyNTYAAABBBPFK7kRwdOUbIx1TIiWtSbONsl3E5mUe3k3jjn50Ag0/fxy7/MQHsMKVH1kVXcyGs9PyGn9/4EJaWDlzWB+V0XIAAAAAAAAAAAAAAAEAAAAGa2VjZXJ0AAAACQAAAAVhZ2VudAAAAAAAAAAA//////////8AAAAAAAAAggAAABVwZXJtaXQtWDExLWZvcndhcmRpbmcAAAAAAAAAF3Blcm1pdC1hZ2VudC1mb3J3YXJkaW5nAAAAAAAAABZwZXJtaXQtcG9ydC1mb3J3YXJkaW5nAAAAAAAAAApwZXJtaXQtcHR5AAAAAAAAAA5wZXJtaXQtdXNlci1yYwAAAAAAAAAAAAAAMwAAAAtzc2gtZWQyNTUxOQAAACCEm6Y0+Zsy0LNBD6Z0cTZZdZMHX8ehTH87fxbRrCMlVAAAAFMAAAALc3NoLWVkMjU1MTkAAABACqPwqJwcBOUnYqfBpjFuXxxQU0CCbF1eL7Gn0i0JXDSvdcm/8meeeYp7RyrIQ88WWd7+flfhrM4mOyggf4+GDw=="
#define KE	"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPFK7kRwdOUbIx1TIiWtSbONsl3E5mUe3k3jjn50Ag0/fxy7/MQHsMKVH1kVXcyGs9PyGn9/4EJaWDlzWB+V0XI="
/* printf %s secret-token | sha256sum */
#define TOKHASH	"930bbdc51b6aed5c2a5678fd6e28dee7a05e8a4b643cfc0b4427c3efb86c0d94"

static const char yaml[] =
    "version: 1\n"
    "profiles:\n"
    "  r: { allow: [ls] }\n"
    "  w: { allow: [ls, git] }\n"
    "identities:\n"
    "  - name: one\n"
    "    keys: [\"" K1 " one@host\"]\n"
    "    profile: r\n"
    "    from: [\"10.0.0.0/8\", \"2001:db8::/32\", \"192.168.1.128/25\"]\n"
    "  - name: two\n"
    "    keys: [\"" K2 "\", \"" KR "\"]\n"
    "    profile: w\n"
    "    expires: 2020-01-31\n"
    "  - name: tok\n"
    "    token_sha256: " TOKHASH "\n"
    "    profile: w\n"
    "    disabled: true\n"
    "  - name: ecdsa\n"
    "    keys: [\"" KE "\"]\n"
    "    profile: r\n";

static int
setup(void **state)
{
	struct ag_err err;
	struct ag_config *cfg = ag_config_parse(yaml, sizeof(yaml) - 1, "test.yaml", &err);

	if (cfg == NULL)
		fprintf(stderr, "config: %s\n", err.msg);
	*state = cfg;
	return cfg == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	ag_config_free(*state);
	return 0;
}

/* Table of SSH_AUTH_INFO_0 contents and what they should identify. */
static const struct keycase {
	const char		*name;
	const char		*info;
	enum ag_pamid_match	 want;
	const char		*identity;
} keycases[] = {
	{ "plain_key", "publickey " K1 "\n", AG_PAMID_FOUND, "one" },
	{ "second_key_of_identity", "publickey " KR "\n", AG_PAMID_FOUND, "two" },
	{ "ecdsa_key", "publickey " KE, AG_PAMID_FOUND, "ecdsa" },
	{ "certificate_of_listed_key", "publickey " K1CERT "\n", AG_PAMID_FOUND, "one" },
	{ "rsa_certificate", "publickey " KRCERT "\n", AG_PAMID_FOUND, "two" },
	{ "ecdsa_certificate", "publickey " KECERT "\n", AG_PAMID_FOUND, "ecdsa" },
	{ "key_after_other_methods", "password\nkeyboard-interactive\npublickey " K2 "\n",
	  AG_PAMID_FOUND, "two" },
	{ "same_identity_twice", "publickey " K1 "\npublickey " K1CERT "\n",
	  AG_PAMID_FOUND, "one" },
	{ "two_identities_ambiguous", "publickey " K1 "\npublickey " K2 "\n",
	  AG_PAMID_AMBIGUOUS, NULL },
	/* a host key is not the user's key */
	{ "hostbased_ignored", "hostbased " K1 "\n", AG_PAMID_NONE, NULL },
	{ "unknown_key", "publickey ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIISbpjT5mzLQs0EPpnRxNll1kwdfx6FMfzt/FtGsIyVU\n",
	  AG_PAMID_NONE, NULL },
	{ "empty", "", AG_PAMID_NONE, NULL },
	{ "only_password", "password\n", AG_PAMID_NONE, NULL },
	{ "missing_key", "publickey ssh-ed25519\n", AG_PAMID_MALFORMED, NULL },
	{ "extra_field", "publickey " K1 " comment\n", AG_PAMID_MALFORMED, NULL },
	{ "bad_base64", "publickey ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs5Zv!iBAZ8D9cpbZQpmeCyvAz2xx+ecLuYrUHBxB/s\n",
	  AG_PAMID_MALFORMED, NULL },
	{ "base64_not_multiple_of_4", "publickey ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs\n",
	  AG_PAMID_MALFORMED, NULL },
	{ "truncated_plain_key", "publickey ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs5\n",
	  AG_PAMID_MALFORMED, NULL },
	/* K1 with four extra bytes (an empty string) after its one field */
	{ "trailing_data", "publickey ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs5ZvEiBAZ8D9cpbZQpmeCyvAz2xx+ecLuYrUHBxB/sAAAAAA==\n",
	  AG_PAMID_MALFORMED, NULL },
	/* the K1 blob claimed to be RSA: type and blob disagree */
	{ "type_mismatch", "publickey ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIPs5ZvEiBAZ8D9cpbZQpmeCyvAz2xx+ecLuYrUHBxB/s\n",
	  AG_PAMID_MALFORMED, NULL },
	/* a matching key after a damaged line is not trusted either */
	{ "damaged_then_good", "publickey ssh-ed25519 ****\npublickey " K1 "\n",
	  AG_PAMID_MALFORMED, NULL },
	{ "control_character", "publickey " K1 "\r\n", AG_PAMID_MALFORMED, NULL },
	/* certificate whose blob ends inside the key fields */
	{ "truncated_certificate", "publickey ssh-ed25519-cert-v01@openssh.com "
	  "AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIPEvr0EBWwBYsF1j7A/ghot/+zz6+s3bjKk8qnV866v7AAAA\n",
	  AG_PAMID_MALFORMED, NULL },
};

static void
key_table(void **state)
{
	const struct ag_config *cfg = *state;
	size_t i;

	for (i = 0; i < sizeof(keycases) / sizeof(keycases[0]); i++) {
		const struct keycase *k = &keycases[i];
		const struct ag_identity *id = (const void *)1;
		struct ag_err err;
		enum ag_pamid_match m;

		ag_err_clear(&err);
		m = ag_pamid_by_key(cfg, k->info, &id, &err);
		if (m != k->want)
			fail_msg("%s: got %d, want %d (%s)", k->name, m, k->want, err.msg);
		if (k->identity != NULL) {
			assert_non_null(id);
			assert_string_equal(id->name, k->identity);
		} else {
			assert_null(id);
		}
		if (m == AG_PAMID_MALFORMED)
			assert_true(strlen(err.msg) > 0);
	}
}

static void
key_info_too_long_is_malformed(void **state)
{
	const struct ag_identity *id;
	struct ag_err err;
	char *big = malloc(AG_PAMID_MAX_INFO + 2);

	assert_non_null(big);
	memset(big, 'x', AG_PAMID_MAX_INFO + 1);
	big[AG_PAMID_MAX_INFO + 1] = '\0';
	assert_int_equal(ag_pamid_by_key(*state, big, &id, &err), AG_PAMID_MALFORMED);
	/* one line over the line bound, total under the info bound */
	memcpy(big, "publickey ", 10);
	big[AG_PAMID_MAX_LINE + 1] = '\0';
	assert_int_equal(ag_pamid_by_key(*state, big, &id, &err), AG_PAMID_MALFORMED);
	free(big);
}

static void
token_matches_hash(void **state)
{
	const struct ag_identity *id;
	enum ag_pamid_token which;

	assert_int_equal(ag_pamid_by_token(*state, "secret-token", 12, time(NULL), &id, &which), AG_PAMID_FOUND);
	assert_string_equal(id->name, "tok");
}

static void
token_wrong_or_prefix_does_not_match(void **state)
{
	const struct ag_identity *id;
	enum ag_pamid_token which;

	assert_int_equal(ag_pamid_by_token(*state, "secret-tokeN", 12, time(NULL), &id, &which), AG_PAMID_NONE);
	assert_null(id);
	assert_int_equal(ag_pamid_by_token(*state, "secret-toke", 11, time(NULL), &id, &which), AG_PAMID_NONE);
	assert_int_equal(ag_pamid_by_token(*state, "secret-token\n", 13, time(NULL), &id, &which), AG_PAMID_NONE);
	/* identities without a token have an all-zero hash field: never matched */
	assert_int_equal(ag_pamid_by_token(*state, "", 0, time(NULL), &id, &which), AG_PAMID_NONE);
}

static void
token_too_long_never_matches(void **state)
{
	const struct ag_identity *id;
	enum ag_pamid_token which;
	char *t = malloc(AG_PAMID_MAX_TOKEN + 1);

	assert_non_null(t);
	memset(t, 'a', AG_PAMID_MAX_TOKEN + 1);
	assert_int_equal(ag_pamid_by_token(*state, t, AG_PAMID_MAX_TOKEN + 1, time(NULL), &id, &which),
	    AG_PAMID_NONE);
	free(t);
}

static void
sha256_known_answer(void **state)
{
	unsigned char md[32];
	static const unsigned char want[32] = {	/* FIPS 180-2 "abc" */
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde,
		0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
		0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad };

	/* FIPS 180-2, two blocks */
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const unsigned char want2[32] = {
		0x24, 0x8d, 0x6a, 0x61, 0xd2, 0x06, 0x38, 0xb8, 0xe5, 0xc0, 0x26, 0x93,
		0x0c, 0x3e, 0x60, 0x39, 0xa3, 0x3c, 0xe4, 0x59, 0x64, 0xff, 0x21, 0x67,
		0xf6, 0xec, 0xed, 0xd4, 0x19, 0xdb, 0x06, 0xc1 };
	struct ag_sha256 h;
	size_t i;

	(void)state;
	ag_sha256("abc", 3, md);
	assert_memory_equal(md, want, 32);
	ag_sha256(two, sizeof(two) - 1, md);
	assert_memory_equal(md, want2, 32);
	/* the same message fed a byte, then odd pieces, at a time */
	ag_sha256_init(&h);
	for (i = 0; i < sizeof(two) - 1; i += i % 3 + 1)
		ag_sha256_update(&h, two + i, i + i % 3 + 1 <= sizeof(two) - 1 ?
		    i % 3 + 1 : sizeof(two) - 1 - i);
	ag_sha256_final(&h, md);
	assert_memory_equal(md, want2, 32);
}

static const struct fromcase {
	const char	*rhost;
	int		 want;
} fromcases[] = {
	{ "10.1.2.3", 1 },
	{ "10.255.255.255", 1 },
	{ "11.0.0.1", 0 },
	{ "9.255.255.255", 0 },
	{ "192.168.1.128", 1 },
	{ "192.168.1.255", 1 },
	{ "192.168.1.127", 0 },
	{ "2001:db8::1", 1 },
	{ "2001:db8:ffff::1", 1 },
	{ "2001:db9::1", 0 },
	{ "::ffff:10.9.9.9", 1 },	/* v4-mapped matches the v4 network */
	{ "::ffff:11.9.9.9", 0 },
	{ "::10.9.9.9", 0 },		/* not v4-mapped: a v6 address */
	{ "localhost", 0 },		/* names are never trusted */
	{ "10.1.2.3.evil.example", 0 },
	{ "", 0 },
	{ "10.1.2.3 ", 0 },
	{ "fe80::1%eth0", 0 },
};

static void
from_table(void **state)
{
	const struct ag_identity *one = ag_config_identity(*state, "one");
	size_t i;

	assert_non_null(one);
	assert_int_equal(one->nfrom, 3);
	for (i = 0; i < sizeof(fromcases) / sizeof(fromcases[0]); i++)
		if (ag_pamid_from_match(one->from, one->nfrom, fromcases[i].rhost) !=
		    fromcases[i].want)
			fail_msg("rhost '%s': want %d", fromcases[i].rhost, fromcases[i].want);
	assert_int_equal(ag_pamid_from_match(one->from, one->nfrom, NULL), 0);
}

static void
account_checks(void **state)
{
	const struct ag_identity *one = ag_config_identity(*state, "one");
	const struct ag_identity *two = ag_config_identity(*state, "two");
	const struct ag_identity *tok = ag_config_identity(*state, "tok");
	const struct ag_identity *ec = ag_config_identity(*state, "ecdsa");
	time_t now = time(NULL);

	assert_int_equal(ag_pamid_account(one, now, "agent", "10.0.0.1"), AG_PAMID_OK);
	assert_int_equal(ag_pamid_account(one, now, "agent", "127.0.0.1"), AG_PAMID_FROM);
	assert_int_equal(ag_pamid_account(one, now, "agent", NULL), AG_PAMID_FROM);
	assert_int_equal(ag_pamid_account(one, now, "agent", "host.example"), AG_PAMID_FROM);
	/* expires: 2020-01-31 means through that day (UTC) */
	assert_int_equal(ag_pamid_account(two, now, "agent", "127.0.0.1"), AG_PAMID_EXPIRED);
	assert_int_equal(ag_pamid_account(two, two->expires - 1, "agent", NULL), AG_PAMID_OK);
	assert_int_equal(ag_pamid_account(two, two->expires, "agent", NULL), AG_PAMID_EXPIRED);
	assert_int_equal(ag_pamid_account(tok, now, "agent", "10.0.0.1"), AG_PAMID_DISABLED);
	/* no `from`: any address, or none */
	assert_int_equal(ag_pamid_account(ec, now, "agent", NULL), AG_PAMID_OK);
	assert_int_equal(ag_pamid_account(ec, now, "agent", "2001:db8::5"), AG_PAMID_OK);
}

static void
cert_reduces_to_listed_key_blob(void **state)
{
	unsigned char *blob, *kblob, *plain, *none;
	size_t blen, kblen, plen, nlen;
	const char *c = K1CERT, *sp = strchr(c, ' ');
	const char *k = K1, *ksp = strchr(k, ' ');

	(void)state;
	assert_int_equal(ag_sshkey_decode(c, (size_t)(sp - c), sp + 1, strlen(sp + 1),
	    &blob, &blen, &kblob, &kblen, NULL), 0);
	assert_int_equal(ag_sshkey_decode(k, (size_t)(ksp - k), ksp + 1,
	    strlen(ksp + 1), &plain, &plen, &none, &nlen, NULL), 0);
	assert_null(none);		/* a plain key has no certified key */
	assert_non_null(kblob);
	assert_int_equal(kblen, plen);
	assert_memory_equal(kblob, plain, plen);
	free(blob);
	free(kblob);
	free(plain);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_table),
		cmocka_unit_test(key_info_too_long_is_malformed),
		cmocka_unit_test(token_matches_hash),
		cmocka_unit_test(token_wrong_or_prefix_does_not_match),
		cmocka_unit_test(token_too_long_never_matches),
		cmocka_unit_test(sha256_known_answer),
		cmocka_unit_test(from_table),
		cmocka_unit_test(account_checks),
		cmocka_unit_test(cert_reduces_to_listed_key_blob),
	};

	return cmocka_run_group_tests_name("pamid", tests, setup, teardown);
}
