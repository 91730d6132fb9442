/*
 * tokenhash.c - agent tokens and their scrypt hashes (tokenhash.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/memops.h>
#include <openssl/evp.h>

#include "common/base64.h"
#include "common/lazylib.h"
#include "common/log.h"
#include "common/tokenhash.h"

/* N = 2^14, r = 8: 16 MiB and some tens of milliseconds a derivation */
#define DEFAULT_LN	14
#define DEFAULT_R	8
#define DEFAULT_P	1
#define MAX_LN		20	/* 1 GiB at r=8: a hash that asks more is refused */
#define SECRET_BYTES	32

/*
 * scrypt is libcrypto's, which is loaded only to derive a key: the
 * gateway parses token hashes at every start (the policy) but derives
 * only in the PAM module, inside sshd, which has libcrypto mapped already,
 * and in `agentgate token new` (issue 20: libcrypto cost a millisecond of
 * every connection's start).
 */
static struct ag_lazylib crypto_lib = { "libcrypto.so.3", 0, "" };
static struct {
	__typeof__(EVP_PBE_scrypt)	*pbe_scrypt;
} lcrypto;

static int
derive(const struct ag_token_hash *h, const char *token, size_t len,
    unsigned char out[AG_TOKEN_KEY])
{
	static const struct ag_lazysym sym[] = {
		AG_LAZYSYM(__typeof__(lcrypto), EVP_PBE_scrypt, pbe_scrypt),
	};
	uint64_t n = (uint64_t)1 << h->ln;
	/* scrypt needs 128 * r * N bytes, plus slack */
	uint64_t maxmem = 128ULL * h->r * n + (1u << 20);

	/* a token refused for want of libcrypto must not look like a wrong one */
	if (ag_lazylib_load(&crypto_lib, sym, sizeof(sym) / sizeof(sym[0]), &lcrypto) < 0) {
		static int told;

		if (!told++)
			ag_log(LOG_ERR, "token hashes cannot be checked or made: %s", crypto_lib.why);
		return -1;
	}
	if (lcrypto.pbe_scrypt(token, len, h->salt, sizeof(h->salt), n, h->r, h->p, maxmem,
	    out, AG_TOKEN_KEY) != 1) {
		ag_log(LOG_ERR, "scrypt (ln=%u, r=%u, p=%u) failed", h->ln, h->r, h->p);
		return -1;
	}
	return 0;
}

/* Decode unpadded base64 of exactly want bytes. */
static int
unb64(const char *s, size_t len, unsigned char *out, size_t want)
{
	unsigned char buf[96];
	ssize_t n;

	/* the text form has no padding (ag_token_new writes none) */
	if (len == 0 || memchr(s, '=', len) != NULL)
		return -1;
	n = ag_base64_decode(s, len, buf, sizeof(buf));
	if (n != (ssize_t)want) {
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	memcpy(out, buf, want);
	explicit_bzero(buf, sizeof(buf));
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
	ok = memeql_sec(k, h->key, sizeof(k));
	explicit_bzero(k, sizeof(k));
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
		explicit_bzero(secret, sizeof(secret));
		return ag_err_set(err, "identity name too long");
	}
	for (i = 0; i < sizeof(secret); i++)
		snprintf(out_token + n + 2 * i, 3, "%02x", secret[i]);
	explicit_bzero(secret, sizeof(secret));
	if (derive(&h, out_token, strlen(out_token), h.key) < 0) {
		explicit_bzero(out_token, toklen);
		explicit_bzero(&h, sizeof(h));
		return crypto_lib.state < 0 ? ag_err_set(err, "scrypt: %s", crypto_lib.why) :
		    ag_err_set(err, "scrypt failed");
	}
	ag_token_hash_format(&h, out_hash);
	explicit_bzero(&h, sizeof(h));
	return 0;
}

void
ag_token_hash_format(const struct ag_token_hash *h, char out[AG_TOKEN_HASH_MAX])
{
	char s64[AG_BASE64_LEN(AG_TOKEN_SALT) + 1], k64[AG_BASE64_LEN(AG_TOKEN_KEY) + 1];

	(void)ag_base64_encode(h->salt, sizeof(h->salt), s64, sizeof(s64));
	(void)ag_base64_encode(h->key, sizeof(h->key), k64, sizeof(k64));
	snprintf(out, AG_TOKEN_HASH_MAX, "$scrypt$ln=%u,r=%u,p=%u$%s$%s", h->ln, h->r, h->p,
	    s64, k64);
	explicit_bzero(k64, sizeof(k64));
}
