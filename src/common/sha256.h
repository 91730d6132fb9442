/*
 * sha256.h - SHA-256, the one copy the audit chain, key fingerprints,
 * token hashes and the validator's cache use.
 */
#ifndef AG_SHA256_H
#define AG_SHA256_H

#include <stddef.h>

#define AG_SHA256_LEN	32

/* Room for nettle's context; sha256.c checks that it fits. */
struct ag_sha256 {
	unsigned long long	opaque[16];
};

void	ag_sha256_init(struct ag_sha256 *h);
void	ag_sha256_update(struct ag_sha256 *h, const void *p, size_t n);
void	ag_sha256_final(struct ag_sha256 *h, unsigned char out[AG_SHA256_LEN]);
/* The digest of n bytes at p, in one call. */
void	ag_sha256(const void *p, size_t n, unsigned char out[AG_SHA256_LEN]);

#endif
