/*
 * transfer.h - running a file transfer the decision allowed
 * (policy/transfer.h): the program that serves it, run by the runner with
 * `exec` so that it speaks on the client's stdio, under the same kernel
 * sandbox as any command (reads beneath paths.read, writes beneath
 * paths.write).  sftp is this host's sftp-server (with -R when the profile
 * says `read`); legacy scp and rsync are the request itself, which the
 * decision accepted only as plain words.
 */
#ifndef AG_EXEC_TRANSFER_H
#define AG_EXEC_TRANSFER_H

#include <stddef.h>

#include "common/err.h"
#include "policy/transfer.h"

/* The runner script for request req (len bytes): "exec PROGRAM ...",
 * malloc'd.  NULL with err when it cannot run here (no sftp-server). */
char	*ag_transfer_script(const struct ag_xfer *x, const char *req, size_t len,
	    struct ag_err *err);

#endif
