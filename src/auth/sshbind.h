/*
 * sshbind.h - what sshd authenticated for a connection, kept where the
 * agent cannot write it.
 *
 * sshd's ExposeAuthInfo file lies in /tmp, belongs to the account and lives
 * as long as the connection: any command of the connection (or of another
 * connection of the same account) can rewrite it before the next session
 * of a multiplexed connection starts.  So the gateway never reads it.
 *
 * Instead pam_agentgate.so, listed with `bind` in sshd's own PAM session
 * stack, runs as root in sshd's privileged monitor for the connection and
 * writes SSH_AUTH_INFO_0 (which sshd, not the client, sets) to
 * AG_SSHBIND_DIR/<monitor pid>, with the monitor's start time.  The gateway
 * finds the record through its ancestry, which only sshd can arrange:
 *
 *   sshd monitor (root, "[priv]")  ->  session process (the account)
 *                                          ->  gateway (the login shell
 *                                              exec'd ForceCommand)
 *
 * The monitor's only child running as the account is the session process,
 * and that process only ever forks sessions that exec the ForceCommand; a
 * process the agent starts anywhere else has another grandparent.  Every
 * session of one connection sees the record of that connection and nothing
 * else.
 */
#ifndef AG_SSHBIND_H
#define AG_SSHBIND_H

#include <sys/types.h>

#include "common/err.h"
#include "common/rundir.h"

#define AG_SSHBIND_DIR		AG_RUNDIR_SSHD
#define AG_SSHBIND_MAX_INFO	(64 * 1024)	/* a longer SSH_AUTH_INFO_0 is refused */
/* A record whose auth info starts so: sshd's stack found the session's
 * environment open to the account (pam_agentgate.c, bind); the gateway
 * refuses the connection with the reason that follows. */
#define AG_SSHBIND_REFUSE	"agentgate-refuse: "

/*
 * sshd's side (the PAM module, as root, in the monitor): record auth_info
 * for the connection whose monitor is the calling process, replacing any
 * older record of that pid, and remove records whose monitor is gone.
 */
int	ag_sshbind_write(const char *user, const char *rhost, const char *auth_info,
	    struct ag_err *err);

/* Remove the calling monitor's record (session close). */
void	ag_sshbind_remove(void);

enum ag_sshbind_result {
	AG_SSHBIND_FOUND,	/* *infop: what sshd recorded for our connection */
	AG_SSHBIND_NONE,	/* not started by sshd's session process, or no record
				 * (sshd's PAM stack does not bind): err says which */
	AG_SSHBIND_BAD		/* a record that cannot be trusted: refuse (err) */
};

/*
 * The gateway's side: the record of the connection this process serves,
 * for the account user (the caller's real uid must own the session
 * process).  *infop is malloc'd; the caller frees it.  rhost gets the
 * client address sshd gave PAM ("" when none): the one to judge `from`
 * and to count token failures by, rather than SSH_CONNECTION, which a
 * gateway started by the agent could be given with any address.
 */
enum ag_sshbind_result ag_sshbind_read(const char *user, char **infop, char *rhost,
	    size_t rhostlen, struct ag_err *err);

#endif
