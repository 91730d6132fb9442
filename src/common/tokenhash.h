/*
 * tokenhash.h - agent tokens and how the policy keeps them: salted scrypt
 * (libcrypto's, loaded when a key is derived), so a policy that leaks does
 * not give away a token, and each guess costs the guesser what it costs
 * the gateway.
 *
 *   token       agt_NAME_<64 hex digits>   (256 random bits; NAME is the
 *               identity's, so the gateway derives once, not per identity)
 *   token_hash  $scrypt$ln=14,r=8,p=1$<salt, base64>$<key, base64>
 *
 * `agentgate token new NAME` makes both.  The older token_sha256 (unsalted)
 * is still read; agentgate check says to replace it.
 */
#ifndef AG_TOKENHASH_H
#define AG_TOKENHASH_H

#include <stddef.h>

#include "common/err.h"

#define AG_TOKEN_PREFIX		"agt_"
#define AG_TOKEN_SALT		16
#define AG_TOKEN_KEY		32
#define AG_TOKEN_HASH_MAX	160	/* the text form, NUL included */

struct ag_token_hash {
	unsigned	ln, r, p;		/* scrypt: N = 2^ln */
	unsigned char	salt[AG_TOKEN_SALT];
	unsigned char	key[AG_TOKEN_KEY];
};

/* Parse the text form; 0, or -1 with a message at err. */
int	ag_token_hash_parse(const char *text, struct ag_token_hash *h, struct ag_err *err);

/* h's text form, as the policy has it (the inverse of ag_token_hash_parse). */
void	ag_token_hash_format(const struct ag_token_hash *h, char out[AG_TOKEN_HASH_MAX]);

/* 1 when token derives h's key (constant-time compare), 0 when not or on error. */
int	ag_token_hash_verify(const struct ag_token_hash *h, const char *token, size_t len);

/*
 * A new token for identity name (out_token: at least 4 + strlen(name) + 66
 * bytes) and its hash's text form (out_hash: AG_TOKEN_HASH_MAX).  0, or -1
 * with err.
 */
int	ag_token_new(const char *name, char *out_token, size_t toklen, char *out_hash,
	    struct ag_err *err);

/* The identity name a token carries ("agt_NAME_hex"), into buf; -1 if none. */
int	ag_token_name(const char *token, size_t len, char *buf, size_t buflen);

#endif
