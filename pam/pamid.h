/*
 * pamid.h - how pam_agentgate.so recognises an agent and checks its account.
 *
 * Pure functions over a loaded struct ag_config: the key lines sshd exposes
 * in SSH_AUTH_INFO_0, token hashes, expiry, the disabled flag and the
 * `from` networks.  Nothing here calls PAM, so the unit tests drive these
 * directly and the module is only glue around them.
 *
 * Returned identity pointers point into the config and live as long as it.
 */
#ifndef AG_PAMID_H
#define AG_PAMID_H

#include <stddef.h>
#include <time.h>

#include "common/config.h"
#include "common/err.h"

#define AG_PAMID_MAX_INFO	(64 * 1024)	/* larger SSH_AUTH_INFO_0 is malformed */
#define AG_PAMID_MAX_LINE	(16 * 1024)	/* one line of it; certificates fit */
#define AG_PAMID_MAX_TOKEN	1024		/* longer tokens never match */

enum ag_pamid_match {
	AG_PAMID_NONE = 0,	/* nothing offered matched an identity */
	AG_PAMID_FOUND,		/* *idp is the one identity that matched */
	AG_PAMID_AMBIGUOUS,	/* offered credentials match two identities */
	AG_PAMID_MALFORMED,	/* the input could not be parsed (err says why) */
	AG_PAMID_STALE		/* a token: the previous_token of *idp, past its until */
};

/* Which of an identity's tokens matched (ag_pamid_by_token). */
enum ag_pamid_token {
	AG_PAMID_TOKEN_CURRENT = 0,	/* token_hash or token_sha256 */
	AG_PAMID_TOKEN_PREVIOUS		/* previous_token, before its until */
};

/*
 * Match the `publickey TYPE BASE64` lines of info (sshd's SSH_AUTH_INFO_0)
 * against identities[].keys.  A certificate line matches an identity that
 * lists the key the certificate certifies (sshd has already checked the
 * CA, principals and validity) or the identical certificate.  Lines of
 * other methods (password, keyboard-interactive, hostbased, ...) are
 * ignored; a `publickey` line that does not parse makes the whole input
 * MALFORMED, so a damaged record is never half-trusted.
 */
enum ag_pamid_match ag_pamid_by_key(const struct ag_config *cfg, const char *info,
	    const struct ag_identity **idp, struct ag_err *err);

/*
 * Match a token.  One that names its identity (agt_NAME_...) is checked
 * against that identity's token_hash, then its previous_token: FOUND
 * with *which PREVIOUS before the previous token's until, STALE (and *idp
 * the identity, for the audit record only) from then on.  Any other token
 * against identities[].token_sha256: SHA-256 of the token, compared in
 * constant time against every identity (no early exit).  An empty or
 * over-long token matches nothing.  The caller zeroes token.
 */
enum ag_pamid_match ag_pamid_by_token(const struct ag_config *cfg, const char *token,
	    size_t len, time_t now, const struct ag_identity **idp,
	    enum ag_pamid_token *which);

/* Keys are decoded by common/sshkey.h (ag_sshkey_decode). */

enum ag_pamid_acct {
	AG_PAMID_OK = 0,
	AG_PAMID_EXPIRED,	/* now is on or after id->expires */
	AG_PAMID_DISABLED,
	AG_PAMID_FROM,		/* rhost is not inside `from`, or not an address */
	AG_PAMID_WRONG_ACCOUNT	/* `accounts:` do not name user (account.h) */
};

/*
 * The account checks, in this order: disabled, expired, the account user
 * (PAM_USER; NULL is no account), from.
 */
enum ag_pamid_acct ag_pamid_account(const struct ag_identity *id, time_t now,
	    const char *user, const char *rhost);

/*
 * 1 when rhost is a numeric IPv4 or IPv6 address inside one of from[0..n);
 * an IPv4-mapped IPv6 address also matches IPv4 networks.  0 otherwise,
 * including for host names (which the client's resolver controls).
 */
int	ag_pamid_from_match(const struct ag_cidr *from, size_t n, const char *rhost);

#endif
