/*
 * tokenrotate.h - the text edit of `agentgate token rotate`: an identity's
 * token_hash replaced, the old hash kept as its previous_token until a set
 * time, in the policy file (or fragment) that holds the identity, with
 * every other byte of the file left as it was.
 *
 * YAML is edited as text, so only where the loader's positions point at
 * exactly what is expected: the token_hash key with its value on the same
 * line, that value the identity's hash, a previous_token written on one
 * line as a flow mapping.  Anything else (a multi-line or escaped scalar,
 * a block previous_token, non-ASCII before a position) is refused, and the
 * caller prints the lines for the admin to paste.  The caller also loads
 * the result and checks that it says what was meant (ag_token_rotate_check).
 */
#ifndef AG_TOKENROTATE_H
#define AG_TOKENROTATE_H

#include <stddef.h>
#include <time.h>

#include "common/config.h"
#include "common/err.h"

/*
 * text (len bytes), the file id's positions were read from, with id's
 * token_hash value replaced by new_hash and its previous_token set to the
 * old hash until `until`.  *out (NUL-terminated, *outlen bytes) is the
 * caller's to free.  0, or -1 with err saying why it cannot be done safely.
 */
int	ag_token_rotate_text(const char *text, size_t len, const struct ag_identity *id,
	    const char *new_hash, time_t until, char **out, size_t *outlen,
	    struct ag_err *err);

/*
 * 0 when after says what rotating identity name of before to new_hash
 * until `until` should: that identity's token_hash is new_hash, its
 * previous_token the old token_hash until `until`, and every identity
 * else, and its other fields, as they were; -1 with err otherwise.
 */
int	ag_token_rotate_check(const struct ag_config *before, const struct ag_config *after,
	    const char *name, const char *new_hash, time_t until, struct ag_err *err);

/* "YYYY-MM-DDTHH:MM:SSZ" of t into buf (21 bytes at least). */
void	ag_token_until_text(time_t t, char *buf, size_t len);

#endif
