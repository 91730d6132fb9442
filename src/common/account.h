/*
 * account.h - which Unix accounts a policy entry names.  An entry is an
 * account's own name or "%group" (the account's primary or a
 * supplementary group), as `users:`, `selectable_by` and an identity's
 * `accounts:` write them; every door (authorized-keys, the PAM module,
 * the gateway, serve, the standing check, explain) asks here, so they
 * give one answer.
 */
#ifndef AG_ACCOUNT_H
#define AG_ACCOUNT_H

#include <sys/types.h>

#include "common/config.h"

/*
 * 1 when the account user, whose primary group is primary, is a member of
 * the group named; 0 otherwise, also when the group does not exist.  An
 * account in more groups than can be listed is judged by its primary
 * group alone.
 */
int	ag_account_in_group(const char *user, gid_t primary, const char *group);

/* 1 when one entry of l names user (by name, or by a group of it). */
int	ag_account_listed(const struct ag_strlist *l, const char *user);

/*
 * 1 when identity id may log in as user: its `accounts:` name the account
 * or a group of it, or it has no `accounts:` (any account, the meaning of
 * policies written before the key existed).  A user that does not exist
 * is in no group.
 */
int	ag_identity_allows_account(const struct ag_identity *id, const char *user);

/*
 * Who may log in as user: the identities (not disabled) that may, and one
 * more when callers without an identity get a profile there (users:, a
 * group of it, or gateway.default_profile).  2 or more: a shared account.
 */
size_t	ag_account_principals(const struct ag_config *cfg, const char *user);

/*
 * 1 when the policy serves more than one account, as far as it and the
 * caller know: the accounts its users: and the identities' accounts:
 * name, and more[0..nmore) (accounts the caller found using the gateway,
 * duplicates allowed); a "%group" counts as several.  Then an identity
 * without accounts: opens every one of them (check and doctor warn).
 */
int	ag_policy_shared(const struct ag_config *cfg, const char *const *more, size_t nmore);

#endif
