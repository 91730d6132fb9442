/*
 * sha256.c - SHA-256 (see sha256.h), on nettle.
 *
 * Why nettle and not libcrypto: libcrypto is 4 MiB of code with tens of
 * thousands of relocations and its own constructors, and the gateway
 * started from sshd for one command spent about a millisecond of its CPU
 * mapping it for this one hash (issue 20); nettle's costs a tenth of
 * that.  (Before, EVP's first digest also loaded the OpenSSL
 * configuration and a provider: 2 ms more.)  libcrypto is still what
 * derives token hashes (scrypt, tokenhash.c), loaded when one is needed.
 */
#include "agconfig.h"

#include <stdalign.h>
#include <string.h>

#include <nettle/sha2.h>

#include "common/sha256.h"

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(struct ag_sha256),
    "struct ag_sha256 must hold a struct sha256_ctx");
_Static_assert(alignof(struct sha256_ctx) <= alignof(struct ag_sha256),
    "struct ag_sha256 must be aligned for a struct sha256_ctx");

/* The context is copied in and out, not cast: struct ag_sha256 is
 * another type, and the compiler may assume the two never alias. */
void
ag_sha256_init(struct ag_sha256 *h)
{
	struct sha256_ctx c;

	sha256_init(&c);
	memcpy(h, &c, sizeof(c));
}

void
ag_sha256_update(struct ag_sha256 *h, const void *p, size_t n)
{
	struct sha256_ctx c;

	memcpy(&c, h, sizeof(c));
	sha256_update(&c, n, p);
	memcpy(h, &c, sizeof(c));
}

void
ag_sha256_final(struct ag_sha256 *h, unsigned char out[AG_SHA256_LEN])
{
	struct sha256_ctx c;

	memcpy(&c, h, sizeof(c));
	sha256_digest(&c, AG_SHA256_LEN, out);
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
