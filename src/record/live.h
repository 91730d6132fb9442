/*
 * live.h - the sessions running now, for `agentgate sessions` and
 * `agentgate terminate`.
 *
 * Each gateway that holds the privilege-separation group keeps one small
 * file in AG_LIVE_DIR (root:group, mode 3770: the agent's uid cannot write
 * there, and a gateway can remove only its own account's files), named by
 * the session id of its audit records, holding who, from where, since when,
 * and the command running now.  The admin's view reads them and trusts an
 * entry only while a process with that pid and start time is alive.
 */
#ifndef AG_LIVE_H
#define AG_LIVE_H

#include <limits.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/rundir.h"
#include "record/audit.h"

#define AG_LIVE_DIR	AG_RUNDIR_SESSIONS
#define AG_LIVE_MAX_CMD	512	/* of the current command, shown */

/* This process runs session id for info under the policy file policy:
 * register it.  Quietly nothing when the directory is missing or not ours
 * to write (no group). */
void	ag_live_begin(const char *session, const struct ag_audit_info *info,
	    const char *policy);
/* The command now running (NULL: none, between commands). */
void	ag_live_command(const char *command, size_t len);
/*
 * The session ends: remove its entry.  1 when this gateway is to write the
 * session_end record (it removed the entry, or had none), 0 when a witness
 * already did (below).
 */
int	ag_live_end(void);

/*
 * A gateway killed (or crashed) writes no session_end.  Whoever finds its
 * entry with its process gone takes the entry (removes it: one remover,
 * one record) and writes a session_end with reason "gateway_lost" and who
 * saw it (witness) in the gateway's stead: root's `agentgate sessions`,
 * `terminate`, `lock` and `edit` (ag_live_list), the PAM module's session
 * close in sshd's stack, and the next gateway of the account under the
 * same policy as it starts and ends.  The write-ahead command_start of a
 * command that was running stays as it was.
 *
 * ag_live_reap: every such entry; policy NULL: any policy, whose audit
 * conf (NULL) root loads from the policy file the entry names, believed
 * only when only root can have written it; else only the entries of that
 * policy, to conf.
 */
void	ag_live_reap(const char *policy, const struct ag_audit_conf *conf,
	    const char *witness);
/* Who ag_live_list's records name as the witness ("agentgate sessions"). */
void	ag_live_witness(const char *who);

/*
 * Why the administrator ends a session (`agentgate terminate --reason`, a
 * revocation): root leaves it beside the entry before the signal, and the
 * gateway tells its client.  Only a note of root's is believed.
 */
int	ag_live_note_end(const char *session, const char *reason, struct ag_err *err);
void	ag_live_note_clear(const char *session);
/* This gateway's note: 1 with the reason, 0 when there is none. */
int	ag_live_ended_by(char *why, size_t whylen);

struct ag_live_entry {
	char			 session[40];
	pid_t			 pid;
	unsigned long long	 start;
	char			 user[64];
	char			 identity[128];
	char			 profile[128];
	char			 client[160];
	char			 key[128];
	char			 token[16];	/* "current", "previous", "": no token */
	char			 mode[16];
	char			 since[40];
	char			 command[AG_LIVE_MAX_CMD + 1];
	/* the policy file the session runs under, resolved ("": a gateway
	 * from before it was recorded): a change to one policy judges only
	 * its own sessions */
	char			 policy[PATH_MAX];
};

/*
 * Every live entry, in no particular order, to fn; entries whose process
 * is gone are removed and their sessions' ends recorded (above).  Root's.  The count listed, or -1 with err.
 */
int	ag_live_list(int (*fn)(const struct ag_live_entry *, void *), void *arg,
	    struct ag_err *err);

/* Who e's session is, for its audit records (pointing into e). */
void	ag_live_audit_info(const struct ag_live_entry *e, struct ag_audit_info *info);

#endif
