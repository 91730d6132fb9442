/*
 * lastgood.h - the last policy that loaded, kept by root so that a policy
 * broken outside `agentgate edit` (config management, an editor) still has
 * somewhere to say so: its config_error record goes to the audit
 * destinations of the last good one (record/audit.h).
 *
 * One copy per policy path, byte for byte, at
 *   AG_STATEDIR/last-good/<SHA-256 of the path, hex>.yaml
 * with the policy's group and read bits (root:agentgate 0640 stays so),
 * never writable by anyone but root.  A copy is a policy like any other,
 * read by the same loader; only its gateway.audit section is used.
 *
 * The fragments of agentgate.d are not copied: they may not set anything
 * under gateway, so the policy file's bytes hold all of the gateway
 * section that loaded with them.  The copy is read alone
 * (AG_CONFIG_GATEWAY_ONLY): what its identities and users name may have
 * been a fragment's profile.
 *
 * Written only by root (agentgate check, doctor, edit, serve, and the PAM
 * module in sshd's stack): a file the agent's uid or the gateway's group
 * could write would let either one choose where a record goes.
 */
#ifndef AG_LASTGOOD_H
#define AG_LASTGOOD_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"

#define AG_LASTGOOD_DIR	AG_STATEDIR "/last-good"

/* The copy's path for policy path into buf: 0, or -1 when it does not fit. */
int	ag_lastgood_path(const char *path, char *buf, size_t len);

/*
 * As root: keep path (which just loaded) as the last good policy, when it
 * is root's alone and still loads; a copy with the same bytes is left as
 * it is.  Not root: nothing (0).  0, or -1 with err (the caller warns).
 */
int	ag_lastgood_save(const char *path, struct ag_err *err);

/*
 * The last good policy kept for path, or NULL with err: none, or a copy
 * that is not root's regular file, is writable by anyone but root, or
 * does not load.  Free with ag_config_free().
 */
struct ag_config *ag_lastgood_load(const char *path, struct ag_err *err);

#endif
