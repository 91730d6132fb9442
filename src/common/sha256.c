/*
 * sha256.c - SHA-256 (see sha256.h).
 *
 * Why libcrypto's SHA256_* functions and not EVP: the first EVP digest of
 * a process loads the OpenSSL configuration, starts the default provider
 * and builds its table of algorithm names, then frees it all at exit:
 * about 2 ms, a fifth of the gateway's CPU for one `ssh host cmd`, spent
 * on the audit chain's first record (perf, issue 20).  These functions
 * hash in place, with nothing to set up.  OpenSSL 3 marks them deprecated
 * (for EVP's sake, not their own); OPENSSL_API_COMPAT declares the 1.1.1
 * interface they belong to, in this file only.
 */
#include "agconfig.h"

#include <stdalign.h>
#include <string.h>

#define OPENSSL_API_COMPAT 10101

#include <openssl/sha.h>

#include "common/sha256.h"

_Static_assert(sizeof(SHA256_CTX) <= sizeof(struct ag_sha256),
    "struct ag_sha256 must hold a SHA256_CTX");
_Static_assert(alignof(SHA256_CTX) <= alignof(struct ag_sha256),
    "struct ag_sha256 must be aligned for a SHA256_CTX");

/* The context is copied in and out, not cast: struct ag_sha256 is
 * another type, and the compiler may assume the two never alias. */
void
ag_sha256_init(struct ag_sha256 *h)
{
	SHA256_CTX c;

	(void)SHA256_Init(&c);
	memcpy(h, &c, sizeof(c));
}

void
ag_sha256_update(struct ag_sha256 *h, const void *p, size_t n)
{
	SHA256_CTX c;

	memcpy(&c, h, sizeof(c));
	(void)SHA256_Update(&c, p, n);
	memcpy(h, &c, sizeof(c));
}

void
ag_sha256_final(struct ag_sha256 *h, unsigned char out[AG_SHA256_LEN])
{
	SHA256_CTX c;

	memcpy(&c, h, sizeof(c));
	(void)SHA256_Final(out, &c);
	explicit_bzero(&c, sizeof(c));
	explicit_bzero(h, sizeof(*h));
}

void
ag_sha256(const void *p, size_t n, unsigned char out[AG_SHA256_LEN])
{
	struct ag_sha256 h;

	ag_sha256_init(&h);
	ag_sha256_update(&h, p, n);
	ag_sha256_final(&h, out);
}
