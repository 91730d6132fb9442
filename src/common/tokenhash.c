/*
 * tokenhash.c - agent tokens and their scrypt hashes (tokenhash.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/tokenhash.h"

/* N = 2^14, r = 8: 16 MiB and some tens of milliseconds a derivation */
#define DEFAULT_LN	14
#define DEFAULT_R	8
#define DEFAULT_P	1
#define MAX_LN		20	/* 1 GiB at r=8: a hash that asks more is refused */
#define SECRET_BYTES	32

static int
derive(const struct ag_token_hash *h, const char *token, size_t len,
    unsigned char out[AG_TOKEN_KEY])
{
	uint64_t n = (uint64_t)1 << h->ln;
	/* scrypt needs 128 * r * N bytes, plus slack */
	uint64_t maxmem = 128ULL * h->r * n + (1u << 20);

	return EVP_PBE_scrypt(token, len, h->salt, sizeof(h->salt), n, h->r, h->p, maxmem,
	    out, AG_TOKEN_KEY) == 1 ? 0 : -1;
}

/* Unpadded base64 of n bytes into out; returns out. */
static char *
b64(const unsigned char *in, size_t n, char *out)
{
	int k = EVP_EncodeBlock((unsigned char *)out, in, (int)n);

	while (k > 0 && out[k - 1] == '=')
		out[--k] = '\0';
	return out;
}

/* Decode unpadded base64 of exactly want bytes. */
static int
unb64(const char *s, size_t len, unsigned char *out, size_t want)
{
	unsigned char buf[128];
	char tmp[128];
	size_t pad = (4 - len % 4) % 4;
	int n;

	if (len == 0 || len + pad >= sizeof(tmp) || pad == 3)
		return -1;
	memcpy(tmp, s, len);
	memset(tmp + len, '=', pad);
	tmp[len + pad] = '\0';
	if ((n = EVP_DecodeBlock(buf, (unsigned char *)tmp, (int)(len + pad))) < 0)
		return -1;
	n -= (int)pad;
	if (n != (int)want)
		return -1;
	memcpy(out, buf, want);
	OPENSSL_cleanse(buf, sizeof(buf));
	return 0;
}

int
ag_token_hash_parse(const char *text, struct ag_token_hash *h, struct ag_err *err)
{
	const char *salt, *key;
	int used = 0;

	memset(h, 0, sizeof(*h));
	if (sscanf(text, "$scrypt$ln=%u,r=%u,p=%u$%n", &h->ln, &h->r, &h->p, &used) != 3 ||
	    used == 0)
		return ag_err_set(err, "'token_hash' must look like $scrypt$ln=14,r=8,p=1$SALT$KEY "
		    "(make one with: agentgate token new NAME)");
	if (h->ln < 10 || h->ln > MAX_LN || h->r < 1 || h->r > 32 || h->p < 1 || h->p > 16)
		return ag_err_set(err, "'token_hash' parameters out of range (ln 10..%d, r 1..32, "
		    "p 1..16)", MAX_LN);
	salt = text + used;
	if ((key = strchr(salt, '$')) == NULL ||
	    unb64(salt, (size_t)(key - salt), h->salt, sizeof(h->salt)) < 0 ||
	    unb64(key + 1, strlen(key + 1), h->key, sizeof(h->key)) < 0)
		return ag_err_set(err, "'token_hash' must carry a %d-byte salt and a %d-byte key "
		    "in base64", AG_TOKEN_SALT, AG_TOKEN_KEY);
	return 0;
}

int
ag_token_hash_verify(const struct ag_token_hash *h, const char *token, size_t len)
{
	unsigned char k[AG_TOKEN_KEY];
	int ok;

	if (derive(h, token, len, k) < 0)
		return 0;
	ok = CRYPTO_memcmp(k, h->key, sizeof(k)) == 0;
	OPENSSL_cleanse(k, sizeof(k));
	return ok;
}

int
ag_token_name(const char *token, size_t len, char *buf, size_t buflen)
{
	const char *us;
	size_t n;

	if (len <= 4 || memcmp(token, AG_TOKEN_PREFIX, 4) != 0)
		return -1;
	for (us = token + len; us > token + 4 && us[-1] != '_'; us--)
		;
	if (us <= token + 5)
		return -1;
	n = (size_t)(us - 1 - (token + 4));
	if (n == 0 || n >= buflen)
		return -1;
	memcpy(buf, token + 4, n);
	buf[n] = '\0';
	return 0;
}

int
ag_token_new(const char *name, char *out_token, size_t toklen, char *out_hash,
    struct ag_err *err)
{
	unsigned char secret[SECRET_BYTES];
	struct ag_token_hash h;
	char s64[64], k64[64];
	size_t i, n;

	memset(&h, 0, sizeof(h));
	h.ln = DEFAULT_LN;
	h.r = DEFAULT_R;
	h.p = DEFAULT_P;
	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret) ||
	    getrandom(h.salt, sizeof(h.salt), 0) != (ssize_t)sizeof(h.salt))
		return ag_err_set(err, "no randomness from the kernel");
	n = (size_t)snprintf(out_token, toklen, AG_TOKEN_PREFIX "%s_", name);
	if (n + 2 * sizeof(secret) + 1 > toklen) {
		OPENSSL_cleanse(secret, sizeof(secret));
		return ag_err_set(err, "identity name too long");
	}
	for (i = 0; i < sizeof(secret); i++)
		snprintf(out_token + n + 2 * i, 3, "%02x", secret[i]);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (derive(&h, out_token, strlen(out_token), h.key) < 0) {
		OPENSSL_cleanse(out_token, toklen);
		return ag_err_set(err, "scrypt failed");
	}
	snprintf(out_hash, AG_TOKEN_HASH_MAX, "$scrypt$ln=%u,r=%u,p=%u$%s$%s", h.ln, h.r, h.p,
	    b64(h.salt, sizeof(h.salt), s64), b64(h.key, sizeof(h.key), k64));
	OPENSSL_cleanse(&h, sizeof(h));
	return 0;
}
