/*
 * core.h - the session body every front end shares.
 *
 * Once a front end has decided who the caller is (profile), set up the
 * tracked state (ag_session_init) and opened the audit, ag_core_serve()
 * does the rest the same way for all of them - `agentgate` under sshd
 * (ForceCommand, -c, login shell, front/forcecommand.c) and the session processes
 * of `agentgate serve` (server.c):
 *   - with a terminal on stdin and stdout, each command runs in its own PTY
 *     (pty.h) and the session is recorded when gateway.recordings says so;
 *   - an exec request is one command through ag_repl_command(), or a file
 *     transfer (sftp-server/internal-sftp, scp -t/-f, rsync --server) through
 *     transfer.h, judged by the profile's file_transfer;
 *   - no request means the REPL (ag_repl_loop), reading commands from stdin
 *     (commands then read /dev/null unless there is a terminal).
 * It ends with the recording closed, every descendant reaped and the
 * sandbox freed.  Writing session_start/session_end stays with the caller.
 */
#ifndef AG_CORE_H
#define AG_CORE_H

#include <pwd.h>

#include "common/config.h"
#include "common/err.h"
#include "front/repl.h"

/*
 * The caller's profile, the same way for every front end: forced (the
 * administrator's --profile on the ForceCommand line; NULL for none), else
 * the profile of the identity PAM established (AGENTGATE_PROFILE from
 * pam_agentgate; NULL for none), else the `users:` map (the user by name,
 * then the first %group the user belongs to), else gateway.default_profile.
 * NULL with err when none applies: the session is refused.
 */
const struct ag_profile *ag_core_profile(const struct ag_config *cfg, const char *forced,
	    const char *pam_profile, const struct passwd *pw, struct ag_err *err);

/*
 * r: cfg, profile, sess, audit and tty (read commands through libedit)
 * filled in by the caller, everything else zero.  cmd: the exec request, or
 * NULL for the REPL.  Returns the session's exit status.
 */
int	ag_core_serve(struct ag_repl *r, const char *cmd);

/* "sftp", "scp" or "rsync" when cmd is that file-transfer request, else NULL. */
const char *ag_core_transfer_kind(const char *cmd);

#endif
