/*
 * approval.h - a line that waits for a person (decision: approve): a
 * grant this session or an approver already gave, else a request filed
 * (record/approvals.h) and waited on, the agent told at once.
 */
#ifndef AG_CORE_APPROVAL_H
#define AG_CORE_APPROVAL_H

#include <stddef.h>

struct ag_core;

struct ag_core_approved {
	int		 approved;
	const char	*scope;		/* once, session, for */
	char		 approver[64];
	char		 id[24];	/* the request's; "" when a grant let it run */
	long long	 waited_ms;
	char		 why[1024];	/* the refusal, or how it was approved */
};

/*
 * Line (len bytes), which rule holds for approval: 1 approved, 0 refused
 * (by a person, the timeout, the client leaving, or because nobody can be
 * asked); out filled either way.
 */
int	ag_core_approval(struct ag_core *core, const char *line, size_t len, const char *rule,
	    struct ag_core_approved *out);
/*
 * request_access (the agent protocols): file the request for line ahead,
 * with the agent's justification, and answer at once; a later run of the
 * same line waits on it (or runs, once approved).  state: "pending" (id
 * set), "approved" (a grant already covers it), "not_needed" (the rules
 * allow it as it is), "refused" (nothing an approval could change; why
 * says), "error".  0, or -1 when the line could not be judged.
 */
struct ag_core_request {
	char		 state[16];
	char		 id[24];
	char		 rule[256];
	char		 approvers[512];
	char		 why[1024];
};
int	ag_core_request_access(struct ag_core *core, const char *line, size_t len,
	    const char *justification, struct ag_core_request *out);
/* The session's grants forgotten and its pending requests withdrawn
 * (its end). */
void	ag_core_approvals_end(struct ag_core *core);

/*
 * 1 when p's validator is asked: under unknown: ask, or, for its rules
 * that wait for approval, when it is a webhook a person answers
 * (approval_timeout): such a line is then put to that person through it.
 */
struct ag_profile;
int	ag_core_uses_validator(const struct ag_profile *p);
/* p's validator is where its lines that wait for approval go. */
int	ag_core_webhook_approves(const struct ag_profile *p);

#endif
