/*
 * rundir.h - root's run-time directories under AG_RUNDIR, made by the
 * root parts (sshd's bind module at each login, serve at start) and
 * checked by the rest:
 *
 *   AG_RUNDIR                 root 0755
 *   AG_RUNDIR/sshd            root 0755          connection records (auth/sshbind.h)
 *   AG_RUNDIR/sessions        root:group 3770    live sessions (record/live.h)
 *   AG_RUNDIR/failures        root:group 3770    failed token attempts (auth/ratelimit.h)
 *   AG_RUNDIR/scans           root:group 3770    the sandbox's repository scans
 *                                                (exec/scancache.c)
 *   AG_RUNDIR/approvals       root:group 3770    lines waiting for a person, and
 *                                                their answers (record/approvals.h)
 *
 * The group directories are the gateway's to write and not the agent's;
 * sticky, so a gateway removes only its own account's files.
 */
#ifndef AG_RUNDIR_H
#define AG_RUNDIR_H

#include "common/err.h"

#define AG_RUNDIR_SSHD		AG_RUNDIR "/sshd"
#define AG_RUNDIR_SESSIONS	AG_RUNDIR "/sessions"
#define AG_RUNDIR_FAILURES	AG_RUNDIR "/failures"
#define AG_RUNDIR_SCANS		AG_RUNDIR "/scans"
#define AG_RUNDIR_APPROVALS	AG_RUNDIR "/approvals"

/* Make them all (root only); 0, or -1 with err for the first that failed.
 * Without the group the group directories are not made. */
int	ag_rundir_make(struct ag_err *err);

/* 0 when path is a directory of root's that only root can write. */
int	ag_rundir_root_only(const char *path, struct ag_err *err);

#endif
