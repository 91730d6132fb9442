/*
 * transfer.h - file-transfer requests as verdicts of the decision stage.
 *
 * A channel's request may be a file transfer rather than a command line:
 * sshd hands the sftp subsystem to the ForceCommand as the subsystem's
 * command (an sftp-server path or "internal-sftp", which modern scp uses
 * too), scp's remote end arrives as `scp [-opts] -t|-f ...`, rsync's as
 * `rsync --server ...`.  They are not bash for the agent to write, so they
 * are recognised here, before the parser, and only in the request that
 * opened the channel (core.h: AG_CORE_REQUEST); the profile's
 * file_transfer says whether each kind may run.  exec/transfer.h runs an
 * allowed one under the session's sandbox.
 */
#ifndef AG_POLICY_TRANSFER_H
#define AG_POLICY_TRANSFER_H

#include <stddef.h>

#include "common/config.h"
#include "policy/policy.h"

enum ag_xfer_kind {
	AG_XFER_NONE = 0,
	AG_XFER_SFTP,
	AG_XFER_SCP,		/* legacy scp (scp -O): `scp -t|-f ...` */
	AG_XFER_RSYNC,		/* `rsync --server ...` */
};

struct ag_xfer {
	enum ag_xfer_kind	 kind;
	int			 readonly;	/* sftp: file_transfer.sftp is `read` */
};

/* "sftp", "scp", "rsync" (or "" for AG_XFER_NONE). */
const char *ag_xfer_name(enum ag_xfer_kind k);

/*
 * If req (len bytes) is a file-transfer request, return 1 with x and d
 * filled: d->verdict AG_ALLOW or AG_DENY, the reason written for the
 * client, rule "file_transfer" (or the deny rule that refused it: deny
 * rules apply to transfers as to any line; or, when every allow rule for
 * rsync or scp has an argv, the one the request matched or the one that
 * refused it).  Return 0, touching neither,
 * otherwise.  scp and rsync requests are shell lines; one that is more
 * than plain words (quotes, expansions, operators) is refused, so that
 * nothing but that one program can start.
 */
int	ag_policy_transfer(const struct ag_policy_ctx *ctx, const char *req, size_t len,
	    struct ag_xfer *x, struct ag_decision *d);

#endif
