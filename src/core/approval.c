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
#include "common/sha256.h"
#include "core/approval.h"
#include "core/core.h"
#include "exec/runner.h"
#include "policy/policy.h"
#include "record/approvals.h"
#include "record/audit.h"

/* "RULE\tAPPROVER": a rule approved for the rest of the session, by whom */
static const char *
session_grant_one(const struct ag_core *core, const char *rule, size_t n)
{
	size_t i;

	for (i = 0; i < core->napproved; i++)
		if (strncmp(core->approved_rules[i], rule, n) == 0 &&
		    core->approved_rules[i][n] == '\t')
			return core->approved_rules[i] + n + 1;
	return NULL;
}

/* Who approved every rule of rules (ids joined by ',') for the session,
 * the first one's approver; NULL when one of them is not granted. */
static const char *
session_grant(const struct ag_core *core, const char *rules)
{
	const char *s = rules, *e, *by = NULL, *one;

	for (; *s != '\0'; s = e + 1) {
		e = strchr(s, ',');
		if ((one = session_grant_one(core, s, e != NULL ? (size_t)(e - s) :
		    strlen(s))) == NULL)
			return NULL;
		if (by == NULL)
			by = one;
		if (e == NULL)
			break;
	}
	return by;
}

static void
add_session_grant(struct ag_core *core, const char *rules, const char *approver)
{
	const char *s = rules, *e;
	char **v;
	size_t n;
	char *g;

	for (; *s != '\0'; s = e + 1) {
		e = strchr(s, ',');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (session_grant_one(core, s, n) == NULL &&
		    (v = realloc(core->approved_rules, (core->napproved + 1) * sizeof(*v))) != NULL) {
			core->approved_rules = v;
			if ((g = malloc(n + strlen(approver) + 2)) != NULL) {
				snprintf(g, n + strlen(approver) + 2, "%.*s\t%s", (int)n, s, approver);
				v[core->napproved++] = g;
			}
		}
		if (e == NULL)
			break;
	}
}

/* A request filed ahead by request_access, not yet waited on. */
struct ag_core_pending {
	struct ag_approval_req	 req;
	struct ag_approval	*a;
	struct ag_core_pending	*next;
};

/* The pending request for this line and rule (taken off the list), or NULL. */
static struct ag_core_pending *
take_pending(struct ag_core *core, const char *line, size_t len, const char *rule)
{
	struct ag_core_pending **pp, *p;
	unsigned char sum[AG_SHA256_LEN];
	char hex[2 * AG_SHA256_LEN + 1];
	size_t i;

	ag_sha256(line, len, sum);
	for (i = 0; i < sizeof(sum); i++)
		snprintf(hex + 2 * i, 3, "%02x", sum[i]);
	for (pp = &core->pending; (p = *pp) != NULL; pp = &p->next)
		if (strcmp(p->req.digest, hex) == 0 && strcmp(p->req.rule, rule) == 0) {
			*pp = p->next;
			p->next = NULL;
			return p;
		}
	return NULL;
}

void
ag_core_approvals_end(struct ag_core *core)
{
	struct ag_core_pending *p;
	size_t i;

	while ((p = core->pending) != NULL) {
		core->pending = p->next;
		ag_approval_close(p->a);
		free(p);
	}
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

/* File the request for line (req, *a): 0, or -1 with out->why. */
static int
file_request(struct ag_core *core, const char *line, size_t len, const char *rule,
    const char *who, struct ag_approval_req *req, struct ag_approval **a,
    struct ag_core_approved *out)
{
	struct ag_err err;
	size_t jlen = core->justification != NULL ? strlen(core->justification) : 0;
	int in_session, of_account;

	ag_err_clear(&err);
	*a = NULL;
	/* a person sees the whole line and all the agent says, or nothing */
	if (len > AG_APPROVAL_MAX_CMD || jlen > AG_APPROVAL_MAX_JUSTIFICATION) {
		snprintf(out->why, sizeof(out->why), "refused: %.200s needs a person's approval, "
		    "and the %s is too long to show a person for approval (%zu bytes, at most "
		    "%d)", rule, len > AG_APPROVAL_MAX_CMD ? "command" : "justification",
		    len > AG_APPROVAL_MAX_CMD ? len : jlen, len > AG_APPROVAL_MAX_CMD ?
		    AG_APPROVAL_MAX_CMD : AG_APPROVAL_MAX_JUSTIFICATION);
		return -1;
	}
	fill_req(core, rule, who, req);
	ag_approval_count(req->session, req->pid, req->uid, &in_session, &of_account);
	if (in_session >= AG_APPROVAL_MAX_SESSION || of_account >= AG_APPROVAL_MAX_ACCOUNT) {
		snprintf(out->why, sizeof(out->why), "refused: %.200s needs a person's approval, "
		    "and %s has %d requests waiting already (at most %d); wait for their "
		    "answers first", rule, in_session >= AG_APPROVAL_MAX_SESSION ?
		    "this session" : "this account", in_session >= AG_APPROVAL_MAX_SESSION ?
		    in_session : of_account, in_session >= AG_APPROVAL_MAX_SESSION ?
		    AG_APPROVAL_MAX_SESSION : AG_APPROVAL_MAX_ACCOUNT);
		return -1;
	}
	if ((*a = ag_approval_file(req, line, len, &err)) == NULL) {
		snprintf(out->why, sizeof(out->why), "refused: %.200s needs a person's approval, and "
		    "no request can be filed (%.300s); is the gateway installed set-group-ID?",
		    rule, err.msg);
		return -1;
	}
	if (core->audit != NULL && ag_audit_approval_requested(core->audit, req->id, rule,
	    line, len, who, core->justification, &err) < 0 && ag_audit_required(core->audit)) {
		ag_approval_close(*a);
		*a = NULL;
		snprintf(out->why, sizeof(out->why), "%.300s; the audit log is required, so the "
		    "line does not wait for approval", err.msg);
		return -1;
	}
	return 0;
}

int
ag_core_approval(struct ag_core *core, const char *line, size_t len, const char *rule,
    struct ag_core_approved *out)
{
	const struct ag_strlist *approvers = ag_profile_approvers(core->cfg, core->profile);
	struct ag_approval_answer ans;
	struct ag_approval_req req;
	struct ag_core_pending *pend;
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
	if ((pend = take_pending(core, line, len, rule)) != NULL) {
		/* filed ahead by request_access: its answer may be there already */
		req = pend->req;
		a = pend->a;
		ag_approval_rebind(a, &req);
		free(pend);
	} else if (file_request(core, line, len, rule, who, &req, &a, out) < 0)
		return 0;
	snprintf(out->id, sizeof(out->id), "%s", req.id);
	fflush(stdout);
	fprintf(stderr, "agentgate: waiting for approval (request %s) by %s — %.*s\n"
	    "agentgate: (up to %ld s; an approver runs `agentgate approve %s` or "
	    "`agentgate refuse %s --reason ...`)\n", req.id, who,
	    (int)(len > 200 ? 200 : len), line, tmo, req.id, req.id);
	fflush(stderr);
	/* a request filed ahead waits out what is left of its own time */
	if (req.deadline - (long long)time(NULL) < tmo)
		tmo = req.deadline > (long long)time(NULL) ? (long)(req.deadline - time(NULL)) : 1;
	t0 = ag_now_ms();
	r = ag_approval_wait(a, approvers, tmo, STDOUT_FILENO, ag_runner_terminating, &ans, &err);
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

int
ag_core_request_access(struct ag_core *core, const char *line, size_t len,
    const char *justification, struct ag_core_request *out)
{
	const struct ag_strlist *approvers = ag_profile_approvers(core->cfg, core->profile);
	struct ag_approval_answer ans;
	struct ag_core_approved ap;
	struct ag_core_pending *p;
	struct ag_decision d;
	const char *rule;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	ag_approval_approvers_text(approvers, out->approvers, sizeof(out->approvers));
	memset(&d, 0, sizeof(d));
	if (ag_core_decide(core, line, len, &d) < 0) {
		snprintf(out->state, sizeof(out->state), "error");
		snprintf(out->why, sizeof(out->why), "the line could not be judged");
		ag_decision_free(&d);
		return -1;
	}
	rule = d.approve_rule;
	snprintf(out->rule, sizeof(out->rule), "%s", d.approve ? rule : d.rule);
	if (!d.approve) {
		snprintf(out->state, sizeof(out->state), d.verdict == AG_DENY ? "refused" :
		    "not_needed");
		snprintf(out->why, sizeof(out->why), "%.1000s", d.verdict == AG_DENY ? d.reason :
		    "the rules allow this line as it is: run it");
		goto out;
	}
	if (session_grant(core, rule) != NULL || ag_approval_standing(core->identity,
	    core->sess.user, getuid(), rule, approvers, &ans)) {
		snprintf(out->state, sizeof(out->state), "approved");
		snprintf(out->why, sizeof(out->why), "an approval already covers %s: run it", rule);
		goto out;
	}
	if ((p = take_pending(core, line, len, rule)) == NULL) {
		if ((p = calloc(1, sizeof(*p))) == NULL) {
			snprintf(out->state, sizeof(out->state), "error");
			snprintf(out->why, sizeof(out->why), "out of memory");
			rc = -1;
			goto out;
		}
		core->justification = justification;
		memset(&ap, 0, sizeof(ap));
		rc = file_request(core, line, len, rule, out->approvers, &p->req, &p->a, &ap);
		core->justification = NULL;
		if (rc < 0) {
			free(p);
			snprintf(out->state, sizeof(out->state), "error");
			snprintf(out->why, sizeof(out->why), "%s", ap.why);
			goto out;
		}
		ag_approval_rebind(p->a, &p->req);
	}
	p->next = core->pending;
	core->pending = p;
	snprintf(out->state, sizeof(out->state), "pending");
	snprintf(out->id, sizeof(out->id), "%s", p->req.id);
	snprintf(out->why, sizeof(out->why), "waiting for approval (request %s) by %s; run "
	    "the same command to wait for the answer", p->req.id, out->approvers);
out:
	ag_decision_free(&d);
	return rc;
}

int
ag_core_webhook_approves(const struct ag_profile *p)
{
	const struct ag_validator *v = p != NULL ? p->validator : NULL;

	return v != NULL && v->kind == AG_VK_WEBHOOK && v->approval_timeout > 0 &&
	    ag_profile_has_approvals(p);
}

int
ag_core_uses_validator(const struct ag_profile *p)
{
	return p != NULL && p->validator != NULL &&
	    (p->unknown == AG_UNKNOWN_ASK || ag_core_webhook_approves(p));
}
