/*
 * transfer.h - file transfer requests (the sftp subsystem, which modern
 * scp uses too) run under the profile's kernel sandbox.
 *
 * sshd hands a subsystem request to the ForceCommand with the subsystem's
 * command (the sftp-server path or "internal-sftp") in SSH_ORIGINAL_COMMAND.
 * With file_transfer.sftp read or write, the system's sftp-server runs
 * through the runner in the session's cwd, confined like any command
 * (reads beneath paths.read, writes beneath paths.write; `read` adds -R),
 * and the request is audited as one record with rule file_transfer
 * and the server's exit status.  With `off` it is refused with a message.
 */
#ifndef AG_TRANSFER_H
#define AG_TRANSFER_H

#include "front/repl.h"

/* Serve one sftp request on stdin/stdout; returns the exit status. */
int	ag_transfer_sftp(struct ag_repl *r, const char *request);

/*
 * Legacy scp (kind "scp": `scp -t|-f ...`) or rsync (kind "rsync":
 * `rsync --server ...`): refused unless file_transfer.scp / .rsync is true,
 * then run (a plain word list only) in the same sandbox; audited the same.
 */
int	ag_transfer_legacy(struct ag_repl *r, const char *kind, const char *request);

#endif
