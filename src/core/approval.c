/*
 * approval.c - a line that waits for a person (approval.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "core/approval.h"
#include "core/core.h"
#include "record/approvals.h"
#include "record/audit.h"

/* "RULE\tAPPROVER": a rule approved for the rest of the session, by whom */
static const char *
session_grant(const struct ag_core *core, const char *rule)
{
	size_t i, n = strlen(rule);

	for (i = 0; i < core->napproved; i++)
		if (strncmp(core->approved_rules[i], rule, n) == 0 &&
		    core->approved_rules[i][n] == '\t')
			return core->approved_rules[i] + n + 1;
	return NULL;
}

static void
add_session_grant(struct ag_core *core, const char *rule, const char *approver)
{
	char **v;
	size_t n = strlen(rule) + strlen(approver) + 2;
	char *s;

	if ((v = realloc(core->approved_rules, (core->napproved + 1) * sizeof(*v))) == NULL)
		return;
	core->approved_rules = v;
	if ((s = malloc(n)) == NULL)
		return;
	snprintf(s, n, "%s\t%s", rule, approver);
	v[core->napproved++] = s;
}

void
ag_core_approvals_end(struct ag_core *core)
{
	size_t i;

	for (i = 0; i < core->napproved; i++)
		free(core->approved_rules[i]);
	free(core->approved_rules);
	core->approved_rules = NULL;
	core->napproved = 0;
}

static void
fill_req(const struct ag_core *core, const char *rule, const char *approvers,
    struct ag_approval_req *req)
{
	const char *sid = core->audit != NULL ? ag_audit_session_id(core->audit) : NULL;
	time_t now = time(NULL);

	memset(req, 0, sizeof(*req));
	snprintf(req->session, sizeof(req->session), "%s", sid != NULL ? sid : "");
	req->pid = (long)getpid();
	req->uid = getuid();
	snprintf(req->user, sizeof(req->user), "%s", core->sess.user ? core->sess.user : "");
	snprintf(req->identity, sizeof(req->identity), "%s", core->identity ? core->identity : "");
	snprintf(req->profile, sizeof(req->profile), "%s", core->profile->name);
	snprintf(req->rule, sizeof(req->rule), "%s", rule);
	snprintf(req->justification, sizeof(req->justification), "%s",
	    core->justification ? core->justification : "");
	snprintf(req->approvers, sizeof(req->approvers), "%s", approvers);
	req->since = (long long)now;
	req->deadline = (long long)now + ag_approvals_timeout(core->cfg);
}

int
ag_core_approval(struct ag_core *core, const char *line, size_t len, const char *rule,
    struct ag_core_approved *out)
{
	const struct ag_strlist *approvers = ag_profile_approvers(core->cfg, core->profile);
	struct ag_approval_answer ans;
	struct ag_approval_req req;
	struct ag_approval *a;
	struct ag_err err;
	char who[512];
	const char *by;
	long long t0;
	long tmo = ag_approvals_timeout(core->cfg);
	int r;

	memset(out, 0, sizeof(*out));
	ag_approval_approvers_text(approvers, who, sizeof(who));
	if ((by = session_grant(core, rule)) != NULL) {
		out->approved = 1;
		out->scope = "session";
		snprintf(out->approver, sizeof(out->approver), "%s", by);
		snprintf(out->why, sizeof(out->why), "approved by %s for this session (%s)",
		    by, rule);
		return 1;
	}
	if (ag_approval_standing(core->identity, core->sess.user, getuid(), rule, approvers,
	    &ans)) {
		out->approved = 1;
		out->scope = "for";
		snprintf(out->approver, sizeof(out->approver), "%s", ans.approver);
		snprintf(out->why, sizeof(out->why), "approved by %s until %lld (%s)",
		    ans.approver, ans.until, rule);
		return 1;
	}
	ag_err_clear(&err);
	fill_req(core, rule, who, &req);
	if ((a = ag_approval_file(&req, line, len, &err)) == NULL) {
		snprintf(out->why, sizeof(out->why), "refused: %.200s needs a person's approval, and "
		    "no request can be filed (%.300s); is the gateway installed set-group-ID?",
		    rule, err.msg);
		return 0;
	}
	snprintf(out->id, sizeof(out->id), "%s", req.id);
	if (core->audit != NULL && ag_audit_approval_requested(core->audit, req.id, rule,
	    line, len, who, core->justification, &err) < 0 && ag_audit_required(core->audit)) {
		ag_approval_close(a);
		snprintf(out->why, sizeof(out->why), "%.300s; the audit log is required, so the "
		    "line does not wait for approval", err.msg);
		return 0;
	}
	fflush(stdout);
	fprintf(stderr, "agentgate: waiting for approval (request %s) by %s — %.*s\n"
	    "agentgate: (up to %ld s; an approver runs `agentgate approve %s` or "
	    "`agentgate refuse %s --reason ...`)\n", req.id, who,
	    (int)(len > 200 ? 200 : len), line, tmo, req.id, req.id);
	fflush(stderr);
	t0 = ag_now_ms();
	r = ag_approval_wait(a, approvers, tmo, STDOUT_FILENO, &ans, &err);
	out->waited_ms = ag_now_ms() - t0;
	ag_approval_close(a);
	if (r == 1 && ans.approved) {
		out->approved = 1;
		out->scope = ag_approval_scope_name(ans.scope);
		snprintf(out->approver, sizeof(out->approver), "%s", ans.approver);
		snprintf(out->why, sizeof(out->why), "approved by %s (%s, request %s)",
		    ans.approver, out->scope, req.id);
		if (ans.scope == AG_SCOPE_SESSION)
			add_session_grant(core, rule, ans.approver);
		return 1;
	}
	if (r == 1) {
		snprintf(out->approver, sizeof(out->approver), "%s", ans.approver);
		snprintf(out->why, sizeof(out->why), "refused by %s: %s (request %s, %s)",
		    ans.approver, ans.reason[0] ? ans.reason : "(no reason given)", req.id, rule);
	} else if (r == 0)
		snprintf(out->why, sizeof(out->why), "approval timed out: nobody of %s answered "
		    "request %s in %ld s (%s)", who, req.id, tmo, rule);
	else
		snprintf(out->why, sizeof(out->why), "request %s withdrawn: %.300s", req.id, err.msg);
	return 0;
}
