/*
 * approvals.h - lines that wait for a person (decision: approve), and
 * the answers people give from their own terminal.
 *
 * One directory, AG_RUNDIR/approvals, root:group 3770 (common/rundir.h):
 * the gateway (the agent's uid, holding the group) writes ID.req there;
 * `agentgate approve` and `refuse` (set-group-ID, run by an approver)
 * write ID.ok or ID.no beside it.  The agent's uid alone cannot write in
 * it, and an answer is believed only from a regular file with one link
 * whose owner is an approver (root, or named by approvers:) and not the
 * session's own uid: a file an approver's process created.  The answer
 * names the request's id and the SHA-256 of its command, so it cannot be
 * moved to another line.  Its approver is the file owner's name, never
 * what the file says.
 */
#ifndef AG_APPROVALS_H
#define AG_APPROVALS_H

#include <sys/types.h>

#include "common/config.h"
#include "common/err.h"
#include "common/rundir.h"

#define AG_APPROVALS_DIR	AG_RUNDIR_APPROVALS
#define AG_APPROVAL_ID_LEN	16	/* hex characters */
#define AG_APPROVAL_MAX_CMD	2048	/* the longest command a request shows, whole */
#define AG_APPROVAL_MAX_JUSTIFICATION	500	/* bytes of an agent's justification */
#define AG_APPROVAL_MAX_SESSION	8	/* requests pending at once, per session */
#define AG_APPROVAL_MAX_ACCOUNT	64	/* and per account */

enum ag_approval_scope { AG_SCOPE_ONCE = 0, AG_SCOPE_SESSION, AG_SCOPE_FOR };

const char *ag_approval_scope_name(enum ag_approval_scope s);	/* once, session, for */
/* "90s", "30m", "2h", "1d" or seconds: 0 and *secs, or -1 (bad, zero, over
 * 30 days). */
int	ag_approval_parse_duration(const char *s, long *secs);
/* "--once", "--session", "--for", with the duration for --for: 0, or -1
 * with err. */
int	ag_approval_parse_scope(const char *opt, const char *arg, enum ag_approval_scope *scope,
	    long *secs, struct ag_err *err);

/* A request, as its file says. */
struct ag_approval_req {
	char		id[AG_APPROVAL_ID_LEN + 1];
	char		session[64];
	long		pid;
	unsigned long long start;	/* the gateway's start time (ag_proc_stat) */
	uid_t		uid;		/* the session's account */
	char		user[64];
	char		identity[128];
	char		profile[128];
	char		rule[256];
	char		command[AG_APPROVAL_MAX_CMD + 1];
	char		digest[65];	/* SHA-256 of the whole line, hex */
	char		justification[AG_APPROVAL_MAX_JUSTIFICATION + 12];
	char		approvers[512];	/* for people: "alice, %ops" */
	long long	since, deadline;	/* seconds since the epoch */
};

/* An answer. */
struct ag_approval_answer {
	int			 approved;
	enum ag_approval_scope	 scope;
	long long		 until;		/* AG_SCOPE_FOR: seconds since the epoch */
	char			 approver[64];	/* the answer file owner's name */
	char			 reason[512];	/* a refusal's */
	char			 rule[256];	/* the request's, for a standing grant */
	char			 identity[128];
	char			 user[64];
};

/* 1 when uid may approve: root, or an account or a %group member of list. */
int	ag_approval_is_approver(const struct ag_strlist *list, uid_t uid);
/* list as one line for people, "alice, %ops" (root: when empty). */
void	ag_approval_approvers_text(const struct ag_strlist *list, char *buf, size_t bufsz);

/* 1 while req's gateway runs: its pid, with the start time it recorded,
 * not a zombie.  A request of a gateway that is gone is never answered. */
int	ag_approval_alive(const struct ag_approval_req *req);

/* ---- the gateway's side ---- */
struct ag_approval;
/*
 * The live requests in the directory of this session (session, or pid
 * when session is "") and of this account (uid), for the caps above.
 */
void	ag_approval_count(const char *session, long pid, uid_t uid, int *in_session,
	    int *of_account);
/*
 * File req (id, digest and the gateway's start time filled here from line
 * and req->pid) and watch the directory for its answer.  NULL with err
 * when the line is longer than AG_APPROVAL_MAX_CMD (a person is shown the
 * whole command or nothing), or the directory is not there or not
 * writable (a gateway without the group cannot ask anyone).
 */
struct ag_approval *ag_approval_file(struct ag_approval_req *req, const char *line,
	    size_t len, struct ag_err *err);
/*
 * Wait for an answer believed (above) until timeout_s, or until
 * watch_fd (the caller's output; -1: none) reports its reader gone, or
 * stop (NULL: none) says so after a signal.  1 answered (ans filled), 0
 * timed out, -1 cancelled or failed (err).
 */
int	ag_approval_wait(struct ag_approval *a, const struct ag_strlist *approvers,
	    long timeout_s, int watch_fd, int (*stop)(void), struct ag_approval_answer *ans,
	    struct ag_err *err);
/* The request a's file holds moved (a copy of it, same id): look there. */
void	ag_approval_rebind(struct ag_approval *a, struct ag_approval_req *req);
/* Withdraw the request (its file removed) and free a. */
void	ag_approval_close(struct ag_approval *a);
/*
 * A standing grant (--for, unexpired) for this identity on this account
 * and rule, from an approver: 1 (ans filled) or 0.
 */
int	ag_approval_standing(const char *identity, const char *user, uid_t self,
	    const char *rule, const struct ag_strlist *approvers,
	    struct ag_approval_answer *ans);

/* ---- the approver's side ---- */
/* Each pending request, oldest first not promised; fn returning nonzero
 * stops.  The count, or -1 with err.  Answers left behind (their request
 * gone, no unexpired --for) are removed where the caller may. */
int	ag_approval_list(int (*fn)(const struct ag_approval_req *, void *), void *arg,
	    struct ag_err *err);
/* The request id, checked to be a gateway's (regular, one link, not
 * writable by others, owner the uid it names) and whole (its command's
 * SHA-256 is its digest: what is shown is what runs): 0, or -1 with err. */
int	ag_approval_read(const char *id, struct ag_approval_req *req, struct ag_err *err);
/* Answer req as the caller (ans->approved, scope, until, reason): 0, or
 * -1 with err (already answered, cannot write). */
int	ag_approval_answer(const struct ag_approval_req *req,
	    const struct ag_approval_answer *ans, struct ag_err *err);

#endif
