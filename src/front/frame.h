/*
 * frame.h - what every front end does around a session, whatever reads its
 * commands (the gateway under sshd, a serve connection): the audit with its
 * session_start and session_end, the log line, the process title, the
 * entry `agentgate sessions` lists, and the sessions of killed gateways
 * this one ends.  And the record of a login refused before any session.
 *
 * The steps are apart because serve opens the audit as root, then forks
 * and drops to the user before it has a session to show; the gateway
 * prepares its core between the audit and session_start, so that a core
 * that cannot begin leaves no session_start without its end:
 *
 *	ag_frame_open	the audit (the caller hands it to the core)
 *	ag_frame_start	session_start, the log line
 *	ag_frame_enter	the process title, the live entry, lost sessions ended
 *	ag_frame_close	session_end (unless a witness wrote it), lost sessions
 *	ag_frame_free	the live entry gone, the audit closed
 */
#ifndef AG_FRAME_H
#define AG_FRAME_H

#include "common/err.h"
#include "record/audit.h"

struct ag_config;

/* ag_frame_open() flags */
#define AG_FRAME_TELL	0x1	/* stderr is the client's: failures are said there
				 * (else logged: serve has no channel yet) */
#define AG_FRAME_REAP	0x2	/* end the sessions of this policy whose gateways
				 * were killed (ag_live_reap), as this one starts
				 * and ends */

struct ag_frame {
	const struct ag_config	*cfg;
	struct ag_audit		*audit;		/* the session's; NULL before open */
	struct ag_audit_info	 info;		/* as opened; its strings are the caller's
						 * and outlive the frame */
	int			 flags;
	char			 witness[64];	/* who ended lost sessions */
};

/*
 * Open the session's audit for info under cfg's audit conf.  0, or -1 (out
 * of memory) after telling the client or the log.  f is the caller's,
 * zeroed or not; ag_frame_free(f) afterwards either way.
 */
int	ag_frame_open(struct ag_frame *f, const struct ag_config *cfg,
	    const struct ag_audit_info *info, int flags, struct ag_err *err);
/* session_start, and the log line naming the session. */
void	ag_frame_start(struct ag_frame *f);
/* The process title, the live entry, and (AG_FRAME_REAP) lost sessions. */
void	ag_frame_enter(struct ag_frame *f);
/* The session ended with status after ncommands command lines. */
void	ag_frame_close(struct ag_frame *f, int status, unsigned long ncommands);
/* After the core has ended: no live entry is left, the audit is closed. */
void	ag_frame_free(struct ag_frame *f);

/*
 * A login refused: the auth_failure record (ag_audit_auth_failure) of
 * stage, why and reason_class (NULL: none known), to a, the connection's
 * audit, or when a is NULL to an audit of its own opened from cfg for info.
 * A record that cannot be written is logged.
 */
void	ag_frame_auth_failure(struct ag_audit *a, const struct ag_config *cfg,
	    const struct ag_audit_info *info, const char *stage, const char *why,
	    const char *reason_class);

#endif
