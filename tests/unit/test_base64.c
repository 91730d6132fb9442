/*
 * test_base64.c - base64 (nettle underneath), and what is built on it:
 * SSH key fingerprints and token hashes (whose scrypt is libcrypto's,
 * loaded when a key is derived).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/base64.h"
#include "common/sshkey.h"
#include "common/tokenhash.h"

/* RFC 4648, section 10, with the padding dropped as ag_base64_encode does */
static const struct { const char *plain, *b64; } rfc[] = {
	{ "", "" }, { "f", "Zg" }, { "fo", "Zm8" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg" },
	{ "fooba", "Zm9vYmE" }, { "foobar", "Zm9vYmFy" },
};

static void
encodes_rfc4648_vectors(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		char out[16];
		ssize_t n = ag_base64_encode((const unsigned char *)rfc[i].plain,
		    strlen(rfc[i].plain), out, sizeof(out));

		assert_int_equal(n, (ssize_t)strlen(rfc[i].b64));
		assert_string_equal(out, rfc[i].b64);
	}
	{
		char small[8];

		/* "foobar" needs 8 characters and the NUL */
		assert_int_equal(ag_base64_encode((const unsigned char *)"foobar", 6, small,
		    sizeof(small)), -1);
	}
}

static void
decodes_padded_and_unpadded(void **state)
{
	static const char *const padded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
	    "Zm9vYmFy" };
	unsigned char out[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		ssize_t n = ag_base64_decode(rfc[i].b64, strlen(rfc[i].b64), out, sizeof(out));

		assert_int_equal(n, (ssize_t)strlen(rfc[i].plain));
		assert_memory_equal(out, rfc[i].plain, (size_t)n);
		n = ag_base64_decode(padded[i], strlen(padded[i]), out, sizeof(out));
		assert_int_equal(n, (ssize_t)strlen(rfc[i].plain));
		assert_memory_equal(out, rfc[i].plain, (size_t)n);
	}
}

static void
refuses_what_is_not_one_spelling(void **state)
{
	static const char *const bad[] = {
		"Zm9v\n", " Zm9v", "Zm 9v", "Zm9v\t",	/* white space nettle would skip */
		"Zm9-", "Zm9_", "Zm9v!",		/* other alphabets, other bytes */
		"Z", "Zm9vY",				/* 6 bits cannot end a byte */
		"Zh==", "Zm9=",				/* unused bits not zero */
		"Zg=", "Zg===", "=Zg=", "Z=g=",		/* padding in the wrong places */
	};
	unsigned char out[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ag_base64_decode(bad[i], strlen(bad[i]), out, sizeof(out)) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
}

static void
never_writes_past_out(void **state)
{
	unsigned char out[8];

	(void)state;
	memset(out, 0xAA, sizeof(out));
	/* 6 bytes, and room for 5: refused, nothing written past out[4] */
	assert_int_equal(ag_base64_decode("Zm9vYmFy", 8, out, 5), -1);
	assert_int_equal(out[5], 0xAA);
	assert_int_equal(ag_base64_decode("Zm9vYmFy", 8, out, 6), 6);
	assert_memory_equal(out, "foobar", 6);
	assert_int_equal(out[6], 0xAA);
}

/* What ssh-keygen -lf prints for this key. */
static void
fingerprint_matches_ssh_keygen(void **state)
{
	char fp[128];

	(void)state;
	assert_int_equal(ag_sshkey_fingerprint("publickey ssh-ed25519 "
	    "AAAAC3NzaC1lZDI1NTE5AAAAIK8B1ExjKqEkmWYeHhkdM7s/gw8lYxjMxazE039ivp9h\n",
	    fp, sizeof(fp)), 0);
	assert_string_equal(fp, "SHA256:lihCD4T22CFKBRgfvnQZANkkx/4NrSGmMoAdTuIDI7o");
	/* one character of the key changed: no longer a key */
	assert_int_equal(ag_sshkey_fingerprint("publickey ssh-ed25519 "
	    "AAAAC3NzaC1lZDI1NTE5AAAAIK8B1ExjKqEkmWYeHhkdM7s/gw8lYxjMxazE039ivp9\n",
	    fp, sizeof(fp)), -1);
}

static void
token_hash_round_trip(void **state)
{
	char token[128], hash[AG_TOKEN_HASH_MAX];
	struct ag_token_hash h;
	struct ag_err err;

	(void)state;
	assert_int_equal(ag_token_new("ci", token, sizeof(token), hash, &err), 0);
	assert_int_equal(strncmp(token, "agt_ci_", 7), 0);
	assert_int_equal(strncmp(hash, "$scrypt$ln=14,r=8,p=1$", 22), 0);
	assert_int_equal(ag_token_hash_parse(hash, &h, &err), 0);
	assert_int_equal(ag_token_hash_verify(&h, token, strlen(token)), 1);
	token[strlen(token) - 1] ^= 1;
	assert_int_equal(ag_token_hash_verify(&h, token, strlen(token)), 0);
	/* the text form carries no padding; a padded salt is refused */
	{
		char padded[AG_TOKEN_HASH_MAX + 2];
		const char *salt = hash + 22, *dollar = strchr(salt, '$');

		snprintf(padded, sizeof(padded), "%.*s==%s", (int)(dollar - hash), hash, dollar);
		assert_int_equal(ag_token_hash_parse(padded, &h, &err), -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encodes_rfc4648_vectors),
		cmocka_unit_test(decodes_padded_and_unpadded),
		cmocka_unit_test(refuses_what_is_not_one_spelling),
		cmocka_unit_test(never_writes_past_out),
		cmocka_unit_test(fingerprint_matches_ssh_keygen),
		cmocka_unit_test(token_hash_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
