/*
 * standing.h - whether a live session's caller may still be here.
 *
 * A session is judged once, at login; an identity revoked later (removed
 * from the policy, disabled, expired, its key or token replaced, moved to
 * another profile or off the session's account, locked with `agentgate
 * lock`) must not keep the sessions it already holds.  `agentgate edit` and `agentgate lock` end
 * those at once; the gateway itself looks again before each command, so
 * a policy written by config management, or a lock racing a login, ends
 * them too.  So does a gateway whose own program was removed (package
 * removal): what it would run next may be gone with it.
 *
 * Locks are files in AG_LOCKDIR named "identity:NAME" or "account:NAME",
 * root's, holding the reason; the directory must be root's alone.
 */
#ifndef AG_STANDING_H
#define AG_STANDING_H

#include <sys/types.h>
#include <time.h>

#include "common/config.h"
#include "common/err.h"

#define AG_LOCKDIR	AG_SYSCONFDIR "/agentgate/locks"
#define AG_LOCK_REASON_MAX	256

struct ag_standing {
	const struct ag_config	*cfg;		/* the policy the session began with */
	char			 identity[128];	/* "" = an account's session */
	char			 user[64];
	char			 key[128];	/* the key's fingerprint; "" = none */
	char			 profile[128];
	char			 token[16];	/* "current", "previous": it came in with a
						 * token, which must stay taken; "" = not */
	time_t			 token_until;	/* that token stops then; 0 = no end */
	const char		*path;		/* the policy file, watched */
	int			 as_caller;	/* read it as the caller: its own --config */
	/* what the policy's files looked like (main file, agentgate.d and
	 * each fragment: inode, size, mtime, ctime), digested */
	unsigned char		 stamp[32];
};

void	ag_standing_begin(struct ag_standing *s, const struct ag_config *cfg,
	    const char *identity, const char *user, const char *key, const char *token,
	    const char *profile);

/*
 * 0 while the session may go on; 1 when it must end, with the reason
 * (for the caller and the audit record) in why.  Cheap when nothing
 * changed: a few stat(2) calls.
 */
int	ag_standing_check(struct ag_standing *s, char *why, size_t whylen);

/*
 * The verdict of a policy change on one session: its identity as it was
 * (was, may be NULL when unknown) and as it is in the new policy (now_cfg),
 * the account it is on (user; "" or NULL: not known, not judged: an
 * identity whose accounts: no longer name it ends), the session's key fingerprint ("" or NULL: none or account), the token it
 * logged in with ("current" or "previous" of was; "" or NULL: not by
 * token; then the key is only the transport's) and profile.  A token
 * session goes on while the new policy still takes its token: as the
 * token_hash, or as a previous_token before its until.  1 with why when
 * the session must end.
 */
int	ag_standing_judge(const struct ag_identity *was, const struct ag_config *now_cfg,
	    const char *identity, const char *user, const char *key, const char *token,
	    const char *profile, char *why, size_t whylen);

/* 1 when the identity or the account is locked, with the lock's reason;
 * 0 when not. */
int	ag_lock_held(const char *identity, const char *user, char *why, size_t whylen);
/* The same for the locks in dir (tests: AG_LOCKDIR is the host's). */
int	ag_lock_held_in(const char *dir, const char *identity, const char *user, char *why,
	    size_t whylen);

/* Lock or unlock (root) an identity, or (account 1) an account.  0, or -1
 * with err. */
int	ag_lock_set(int account, const char *name, const char *reason, struct ag_err *err);
int	ag_lock_clear(int account, const char *name, struct ag_err *err);
/* Each lock ("identity" or "account", name, reason) to fn; the count, or
 * -1 with err. */
int	ag_lock_list(void (*fn)(const char *what, const char *name, const char *reason,
	    void *arg), void *arg, struct ag_err *err);

#endif
