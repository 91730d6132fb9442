/*
 * command.c - one command line's path through the gateway, stage by stage
 * (core.h): parse -> decide -> ask -> admit -> run -> apply -> record.
 *
 * Each stage reads and fills one struct cmd.  A stage that refuses fills
 * the record (decision, reason, rule), says why on stderr and stops the
 * line there: nothing after a refusal runs, and every line, refused or
 * not, ends in exactly one audit record.
 */
#include "agconfig.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/envv.h"
#include "common/log.h"
#include "common/misc.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "core/approval.h"
#include "core/core.h"
#include "core/standing.h"
#include "core/target.h"
#include "core/tmpclean.h"
#include "record/live.h"
#include "core/terminal.h"
#include "egress/egress.h"
#include "exec/execguard.h"
#include "exec/redact.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "exec/transfer.h"
#include "parse/shparse.h"
#include "policy/execpolicy.h"
#include "policy/netrules.h"
#include "policy/policy.h"
#include "policy/prog.h"
#include "policy/transfer.h"
#include "policy/walker.h"
#include "validate/validator.h"

#ifndef AG_BASH
#define AG_BASH "/bin/bash"
#endif

/* One command line on its way through the stages. */
struct cmd {
	const char		*line;
	size_t			 len;
	int			 flags;		/* AG_CORE_* */
	const struct ag_core_parsed *parsed;	/* the front end's parse of line, or NULL */
	struct ag_sh_node	*tree;		/* parse */
	int			 tree_lent;	/* tree is parsed's: not freed here */
	struct ag_decision	 d;		/* decide */
	struct ag_xfer		 xfer;		/* decide: a file transfer, or none */
	int			 decided;	/* d was filled before the decide stage */
	struct ag_ask_result	 ask;		/* ask: the validator's answer */
	struct json_object	*ask_json;	/* ... as the audit records it */
	int			 asked;		/* ask and ask_rec are filled */
	int			 would_deny;	/* refused by rules in rollout: runs */
	int			 needs_approval;	/* a rule that says decision: approve */
	int			 approved;	/* ... and a person said yes */
	struct ag_core_approved	 ap;		/* approve: how */
	char			 ask_rule[160];	/* "validator:NAME" */
	struct ag_audit_cmd	 rec;		/* what record writes */
	char			**progs;	/* rec.programs, when the mask changed the line */
	struct ag_run_result	 res;		/* run */
	int			 ran_runner;	/* res is filled */
	int			 cleanup;	/* a clean-up line run while the
						 * persistent /tmp is past its bound
						 * (tmpclean.h) */
	char			*cleanup_state;	/* its shell state: the kept one
						 * less functions; NULL: the kept */
	int			 status;	/* $? the line ends with */
	int			 end_session;
	int			 timed_out, cancelled;	/* apply: how the run ended */
	struct ag_target	*t;		/* target: the upstream it is for, or NULL */
	int			 switched;	/* the line made a target the session's */
	int			 echoed;	/* the line is in the recording */
	struct ag_audit_target	 trec;		/* ... as the audit records it */
	char			 why[sizeof(((struct ag_decision *)0)->reason) + 2 * AG_ERR_MSG_MAX];
						/* a refusal's reason */
	char			 rule_label[1024];	/* the record's rule_label */
};

enum next { NEXT, STOP };

/* A refusal: said to the caller, recorded, $? 126. */
static enum next
refuse(struct cmd *c, const char *decision, const char *reason, const char *rule)
{
	fflush(stdout);
	fprintf(stderr, "agentgate: %s\n", reason);
	fflush(stderr);
	c->rec.decision = decision;
	c->rec.reason = reason;
	c->rec.rule = rule;
	c->rec.ran = 0;
	c->status = AG_STATUS_DENIED;
	return STOP;
}

/*
 * Into the recording of a terminal session (core/terminal.h): the line as
 * the prompt showed it, once, before its output; and after a refusal its
 * message, so a replay shows what the caller saw.
 */
static void
term_echo(struct ag_core *core, struct cmd *c)
{
	if (core->pty && !c->echoed)
		ag_core_term_echo(core, c->line, c->len);
	c->echoed = 1;
}

/*
 * sshd hands a subsystem's stderr to clients that do not show it (modern
 * scp says only "Connection closed"): a refused transfer's reason also
 * goes where sshd logs, besides the audit record.
 */
static void
log_refused_transfer(const struct ag_core *core, const struct cmd *c)
{
	if (c->xfer.kind != AG_XFER_NONE && !c->rec.ran && c->rec.reason != NULL)
		ag_log(LOG_NOTICE, "refused %s for user=%s profile=%s: %s",
		    ag_xfer_name(c->xfer.kind), core->sess.user, core->profile->name,
		    c->rec.reason);
}

static void
term_outcome(struct ag_core *core, struct cmd *c)
{
	if (!core->pty)
		return;
	term_echo(core, c);
	if (!c->rec.ran && c->status == AG_STATUS_DENIED && c->rec.reason != NULL)
		ag_core_term_refusal(core, c->rec.reason);
}

/* What the decision knows of the session: the same for a command and explain. */
static void
policy_ctx(const struct ag_core *core, struct ag_policy_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->profile = core->profile;
	ctx->cwd = core->sess.cwd;
	ctx->home = core->sess.home;
	ctx->user = core->sess.user;
	ctx->env = core->sess.env;
}

/* ---- target ----------------------------------------------------------------- */

static void
target_record(struct cmd *c, const struct ag_target *t, const struct ag_upstream *u)
{
	c->trec.name = u->name;
	c->trec.host = u->host;
	c->trec.port = (int)u->port;
	c->trec.user = u->user;
	if (t != NULL) {
		c->trec.hostkey_sha256 = t->info.hostkey[0] ? t->info.hostkey : NULL;
		c->trec.key_sha256 = t->info.key[0] ? t->info.key : NULL;
	}
	c->rec.target = &c->trec;
}

/* Nothing to run: blanks, or a comment. */
static int
blank_line(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n'))
		i++;
	return i == n || p[i] == '#';
}

/*
 * Which host the line is for: a leading @NAME word names it for this line
 * (or, alone, for the session), else the session's.  STOP with the record
 * filled for a refusal or a switch.
 */
static enum next
stage_target(struct ag_core *core, struct cmd *c)
{
	char name[80];
	size_t rest;
	struct ag_err err;
	struct ag_target *t;
	int k, refused;

	c->t = core->at;
	if (core->cfg == NULL || (k = ag_target_word(c->line, c->len, name, sizeof(name),
	    &rest)) == 0) {
		if (c->t != NULL)
			target_record(c, c->t, c->t->up);
		else if (!ag_profile_may_target(core->caller, AG_TARGET_LOCAL) &&
		    !blank_line(c->line, c->len)) {
			/* a bastion-only profile: this host is not one of its targets */
			snprintf(c->why, sizeof(c->why), "profile '%s' runs commands only on its "
			    "targets, not on this host: begin the line with @NAME, or give "
			    "@NAME alone to make it the session's target", core->caller->name);
			return refuse(c, "deny", c->why, "targets");
		}
		return NEXT;
	}
	if (k < 0) {
		snprintf(c->why, sizeof(c->why), "a leading '@' word names a target, and this "
		    "one is not a valid name");
		return refuse(c, "deny", c->why, "targets");
	}
	ag_err_clear(&err);
	t = ag_target_get(core, name, &refused, &err);
	if (refused) {
		const struct ag_upstream *u = ag_config_upstream(core->cfg, name);

		/* who was offered what host key is what an admin needs to see */
		if (u != NULL && ag_profile_may_target(core->caller, name)) {
			const struct ag_target *ft = core->targets != NULL ?
			    &core->targets[u - core->cfg->upstreams] : NULL;

			target_record(c, ft, u);
			snprintf(c->why, sizeof(c->why), "%s", err.msg);
			c->trec.error = c->why;
			return refuse(c, "deny", c->why, "target:connect");
		}
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		return refuse(c, "deny", c->why, "targets");
	}
	if (t != NULL)
		target_record(c, t, t->up);
	while (rest < c->len && (c->line[rest] == '\n' || c->line[rest] == ' ' ||
	    c->line[rest] == '\t'))
		rest++;
	if (rest >= c->len) {
		core->at = t;
		c->switched = 1;
		c->status = 0;
		snprintf(c->why, sizeof(c->why), "the session's commands now run on %s",
		    t != NULL ? name : "this host");
		c->rec.decision = "allow";
		c->rec.reason = c->why;
		c->rec.rule = "targets";
		return STOP;
	}
	c->t = t;
	c->line += rest;
	c->len -= rest;
	c->parsed = NULL;	/* it parsed the line with its @NAME */
	return NEXT;
}

/* ---- parse ------------------------------------------------------------------ */

/*
 * The line's one parse: the front end's (the REPL's, made to know whether
 * the input was complete), or its own.  A line that does not parse is
 * refused in the parse's words, whatever the rules would say of it.
 * STOP for an empty line (or only a comment), which is not a command.
 */
static enum next
stage_parse(struct ag_core *core, struct cmd *c)
{
	struct ag_core_parsed own;
	const struct ag_core_parsed *p = c->parsed;

	if (c->flags & AG_CORE_REQUEST) {
		struct ag_policy_ctx ctx;

		policy_ctx(core, &ctx);
		if (ag_policy_transfer(&ctx, c->line, c->len, &c->xfer, &c->d)) {
			c->decided = 1;		/* not a line of bash */
			return NEXT;
		}
	}
	if (p == NULL) {
		own.tree = NULL;
		ag_err_clear(&own.err);
		own.status = ag_sh_parse(c->line, c->len, &own.tree, &own.err);
		p = &own;
	} else
		c->tree_lent = 1;
	c->tree = p->tree;
	if (p->status != AG_SH_OK) {
		ag_policy_parse_refusal(p->status, &p->err, &c->d);
		c->decided = 1;
		return NEXT;
	}
	if (c->tree->nkids == 0) {
		c->status = core->sess.last_status;
		return STOP;
	}
	return NEXT;
}

/* ---- decide ----------------------------------------------------------------- */

/* A line rollout would let run, where nothing would hold it: the
 * refusal stands, and says why. */
static enum next
rollout_unheld(struct cmd *c, const char *why)
{
	snprintf(c->why, sizeof(c->why), "%s (the profile is in rollout, but %s)",
	    c->d.reason, why);
	return refuse(c, "deny", c->why, c->d.rule);
}

/*
 * A refusal of a line of several commands: the line is refused as a
 * whole, before any of it runs, which `a && b && c` does not show by
 * itself (did a run?).  The reason, then that nothing ran and which part
 * refused, as its first line, cut at 120 bytes.  The reason alone when
 * the line is that one command.
 */
static const char *
line_refusal(struct cmd *c)
{
	const struct ag_policy_cmd *part;
	const char *reason = c->d.reason[0] ? c->d.reason : "refused by policy";
	size_t n, len = c->len;

	if (c->d.ncmds < 2 || c->d.refused_part == 0 || c->d.refused_part > c->d.ncmds)
		return reason;
	part = &c->d.cmds[c->d.refused_part - 1];
	if (part->text == NULL || part->text[0] == '\0')
		return reason;
	n = strcspn(part->text, "\n");
	while (len > 0 && (c->line[len - 1] == '\n' || c->line[len - 1] == ' ' ||
	    c->line[len - 1] == '\t' || c->line[len - 1] == ';'))
		len--;
	if (n == len && memcmp(part->text, c->line, n) == 0)
		return reason;	/* the part is the whole line (a subshell) */
	snprintf(c->why, sizeof(c->why), "%s; nothing of the line ran (the part refused: "
	    "`%.*s%s`)", reason, (int)(n > 120 ? 120 : n), part->text,
	    n > 120 || part->text[n] != '\0' ? " ..." : "");
	return c->why;
}

static enum next
stage_decide(struct ag_core *core, struct cmd *c)
{
	if (!c->decided) {
		struct ag_policy_ctx ctx;

		policy_ctx(core, &ctx);
		if (ag_policy_decide_text(&ctx, c->tree, c->line, c->len, &c->d) < 0)
			c->d.verdict = AG_DENY;
	}
	switch (c->d.verdict) {
	case AG_ALLOW:
	case AG_ASK:		/* the next stage's to settle */
		c->needs_approval = c->d.verdict == AG_ALLOW && c->d.approve;
		return NEXT;
	default:
		if (!c->d.would_run && c->d.approve) {
			/* only rules that wait for a person refused it */
			c->needs_approval = 1;
			return NEXT;
		}
		if (!c->d.would_run)
			return refuse(c, "deny", line_refusal(c), c->d.rule);
		/* rollout: it runs, as the caller expects, under the kernel
		 * sandbox, which still holds what it holds (stage_run); with
		 * none, not even the gateway's own builtins run that way */
		c->would_deny = 1;
		if (core->cfg != NULL && core->cfg->gw.sandbox == AG_SANDBOX_OFF)
			return rollout_unheld(c, "gateway.sandbox is off");
		return NEXT;
	}
}

/* ---- ask -------------------------------------------------------------------- */

/* The rules' own words without their "ask: " lead, for a message after ours. */
static const char *
rules_said(const struct cmd *c)
{
	return strncmp(c->d.reason, "ask: ", 5) == 0 ? c->d.reason + 5 : c->d.reason;
}

static void
ask_record(struct ag_core *core, struct cmd *c)
{
	c->ask_json = ag_ask_json(ag_ask_conf(core->ask), core->ask, &c->ask);
	c->rec.validator = c->ask_json;
	c->asked = 1;
}

/* A webhook handed the command to a person: the caller is told it waits. */
static void
waiting(void *ctx, const char *reason, long seconds)
{
	const struct ag_validator *v = ctx;

	fflush(stdout);
	fprintf(stderr, "agentgate: waiting up to %ld s for a person to approve this command "
	    "(validator '%s')%s%s\n", seconds, v->name, reason[0] ? ": " : "", reason);
	fflush(stderr);
}

/* Who asks, as the request document names them. */
static void
ask_who(const struct ag_core *core, struct ag_ask_who *who)
{
	const char *user;

	memset(who, 0, sizeof(*who));
	who->user = core->sess.user;
	who->waiting = waiting;
	who->ctx = (void *)(uintptr_t)ag_ask_conf(core->ask);
	if (core->audit != NULL) {
		ag_audit_who(core->audit, &user, &who->identity, &who->client);
		who->session = ag_audit_session_id(core->audit);
	}
}

/*
 * What the rules leave unknown under `unknown: ask`: the validator's
 * verdict.  Only ASK reaches here; an allow from the validator runs the
 * line under the same sandbox as any allowed line.
 */
static enum next
stage_ask(struct ag_core *core, struct cmd *c)
{
	const struct ag_validator *v;
	struct ag_ask_who who;

	if (c->d.verdict != AG_ASK)
		return NEXT;
	if (core->ask == NULL) {
		snprintf(c->why, sizeof(c->why), "%s (this needs a validator's second opinion "
		    "and the profile has none; refused)", c->d.reason);
		return refuse(c, "deny", c->why, c->d.rule[0] ? c->d.rule : "unknown:ask");
	}
	v = ag_ask_conf(core->ask);
	ask_who(core, &who);
	who.target = c->t != NULL ? c->t->up->name : NULL;
	(void)ag_ask(core->ask, c->line, c->len, core->sess.cwd, &c->d, &who, &c->ask);
	ask_record(core, c);
	snprintf(c->ask_rule, sizeof(c->ask_rule), "validator:%s", v->name);
	if (c->ask.allow) {
		snprintf(c->why, sizeof(c->why), "allowed by validator '%s'%s%s%s%s", v->name,
		    c->ask.approver[0] ? " (approved by " : "", c->ask.approver,
		    c->ask.approver[0] ? ")" : "", c->ask.reason[0] ? ": " : "");
		snprintf(c->why + strlen(c->why), sizeof(c->why) - strlen(c->why), "%s",
		    c->ask.reason);
		return NEXT;
	}
	if (c->ask.error_class != NULL)
		snprintf(c->why, sizeof(c->why), "refused: validator '%.64s' gave no usable answer "
		    "(%s: %s), and without one nothing the rules leave open runs; %s", v->name,
		    c->ask.error_class, c->ask.error, rules_said(c));
	else
		snprintf(c->why, sizeof(c->why), "refused by validator '%.64s'%s%.128s%s: %s; %s",
		    v->name, c->ask.approver[0] ? " (" : "", c->ask.approver,
		    c->ask.approver[0] ? ")" : "",
		    c->ask.reason[0] ? c->ask.reason : "(no reason given)", rules_said(c));
	return refuse(c, "ask-deny", c->why, c->ask_rule);
}

/* ---- approve ---------------------------------------------------------------- */

/*
 * A rule that says decision: approve: the line waits for a person (or a
 * grant one gave for the session or a while); refused when nobody says
 * yes in time, with the refuser's reason.  The record says who and how.
 */
/*
 * A profile whose validator is a webhook a person answers (approval_timeout
 * set, ag_core_webhook_approves): the line's approve rules are put to that
 * person through it, for this run only.  The answer's approver is
 * recorded.
 */
static enum next
approve_by_webhook(struct ag_core *core, struct cmd *c)
{
	const struct ag_validator *v = ag_ask_conf(core->ask);
	struct ag_ask_who who;

	ask_who(core, &who);
	who.target = c->t != NULL ? c->t->up->name : NULL;
	who.approve = c->d.approve_rule;
	(void)ag_ask(core->ask, c->line, c->len, core->sess.cwd, &c->d, &who, &c->ask);
	ask_record(core, c);
	snprintf(c->ap.approver, sizeof(c->ap.approver), "%.63s", c->ask.approver[0] ?
	    c->ask.approver : v->name);
	c->rec.approval_id = "webhook";
	c->rec.approver = c->ap.approver;
	c->rec.approval_scope = "once";
	c->rec.approval_ms = c->ask.approval_ms;
	if (c->ask.allow) {
		c->approved = 1;
		return NEXT;
	}
	if (c->ask.error_class != NULL)
		snprintf(c->why, sizeof(c->why), "refused: %s waits for approval, and validator "
		    "'%.64s' gave no usable answer (%s: %s)", c->d.approve_rule, v->name,
		    c->ask.error_class, c->ask.error);
	else
		snprintf(c->why, sizeof(c->why), "refused by %.128s through validator '%.64s': "
		    "%s (%s)", c->ap.approver, v->name,
		    c->ask.reason[0] ? c->ask.reason : "(no reason given)", c->d.approve_rule);
	return refuse(c, "deny", c->why, c->d.approve_rule);
}

static enum next
stage_approve(struct ag_core *core, struct cmd *c)
{
	if (!c->needs_approval)
		return NEXT;
	if (core->ask != NULL && ag_core_webhook_approves(core->profile))
		return approve_by_webhook(core, c);
	(void)ag_core_approval(core, c->line, c->len > 0 && c->line[c->len - 1] == '\n' ?
	    c->len - 1 : c->len, c->d.approve_rule, &c->ap);
	c->rec.approval_id = c->ap.id[0] ? c->ap.id : NULL;
	c->rec.approver = c->ap.approver[0] ? c->ap.approver : NULL;
	c->rec.approval_scope = c->ap.scope;
	c->rec.approval_ms = c->ap.waited_ms;
	if (c->rec.approval_id == NULL && c->rec.approver != NULL)
		c->rec.approval_id = "grant";
	if (!c->ap.approved)
		return refuse(c, "deny", c->ap.why, c->d.approve_rule);
	c->approved = 1;
	return NEXT;
}

/* ---- admit ------------------------------------------------------------------ */

/* Allowed: the record of the decision must be writable before anything runs. */
static enum next
stage_admit(struct ag_core *core, struct cmd *c)
{
	struct ag_err err;
	int st;

	ag_err_clear(&err);
	/* leaving is never refused, whatever the audit's state (its
	 * session_end record, when it can be written, says how it ended) */
	if (core->audit != NULL && ag_audit_required(core->audit) &&
	    !(c->xfer.kind == AG_XFER_NONE && ag_session_is_bare_exit(&core->sess, c->tree, &st)) &&
	    ag_audit_ready(core->audit, &err) < 0) {
		if (c->xfer.kind != AG_XFER_NONE)
			snprintf(c->why, sizeof(c->why), "%s; the audit log is required, so %s "
			    "was not started", err.msg, ag_xfer_name(c->xfer.kind));
		else
			snprintf(c->why, sizeof(c->why), "%s; the audit log is required, so the "
			    "command was not run", err.msg);
		return refuse(c, "deny", c->why, "audit:required");
	}
	if (c->asked) {
		c->rec.decision = "ask-allow";
		c->rec.reason = c->why;
		c->rec.rule = c->ask_rule;
	} else if (c->approved) {
		c->rec.decision = "allow";
		c->rec.reason = c->ap.why;
		c->rec.rule = c->d.approve_rule;
	} else if (c->would_deny) {
		/* what enforcement would have said, and by which rule */
		c->rec.decision = "would_deny";
		c->rec.reason = c->d.reason;
		c->rec.rule = c->d.rule;
	} else {
		c->rec.decision = "allow";
		c->rec.reason = c->d.reason[0] ? c->d.reason : "allowed";
		c->rec.rule = c->d.rule[0] ? c->d.rule : NULL;
	}
	return NEXT;
}

/*
 * Write-ahead: the decision is on the disk before anything runs, so a
 * gateway killed mid-command still leaves its trace.  A command the
 * runner starts writes it while the runner starts (ag_run_opts.admit:
 * the runner waits for it); what the gateway does itself writes it first.
 * -1: the audit log is required and the record could not be written
 * (c->why says so); nothing may run.
 */
/*
 * What the line runs, as its parse says, each name masked alone: for a
 * record whose command text a mask changed (audit.h), so that no mask
 * can hide a program.  Once per line; nothing when the text is unchanged.
 */
static void
record_programs(struct cmd *c)
{
	size_t i, n = 0, l;

	if (c->progs != NULL || c->rec.line == NULL ||
	    (c->rec.line_len == c->rec.command_len &&
	    memcmp(c->rec.line, c->rec.command, c->rec.line_len) == 0) ||
	    (c->progs = calloc(c->d.ncmds + 1, sizeof(*c->progs))) == NULL)
		return;
	for (i = 0; i < c->d.ncmds; i++) {
		const struct ag_policy_cmd *pc = &c->d.cmds[i];
		const char *nm = pc->path != NULL && pc->path[0] == '/' ? pc->path :
		    pc->name != NULL ? pc->name : "(not a literal word)";
		char *m = ag_redact_command(nm, strlen(nm), &l);

		if (m != NULL)
			c->progs[n++] = m;
	}
	c->rec.programs = c->progs;
	c->rec.nprograms = n;
}

/* What the record held that the command owns. */
static void
free_record(struct cmd *c)
{
	size_t i;

	for (i = 0; c->progs != NULL && c->progs[i] != NULL; i++)
		free(c->progs[i]);
	free(c->progs);
	json_object_put(c->ask_json);
	free(c->cleanup_state);
	c->cleanup_state = NULL;
}

/* The rules in the record, readable after an edit moved them: "rule"
 * keeps the ids, "rule_label" adds each one's program. */
static void
record_rule_label(const struct ag_core *core, struct cmd *c)
{
	c->rec.rule_label = ag_config_rule_labels(core->cfg, c->rec.rule, c->rule_label,
	    sizeof(c->rule_label)) ? c->rule_label : NULL;
}

static int
start_record(struct ag_core *core, struct cmd *c, struct ag_err *err)
{
	record_programs(c);
	record_rule_label(core, c);
	if (core->audit == NULL || ag_audit_command_start(core->audit, &c->rec, err) == 0)
		return 0;
	if (ag_audit_required(core->audit)) {
		snprintf(c->why, sizeof(c->why), "%s; the audit log is required, so the "
		    "command was not run", err->msg);
		c->rec.seq = 0;
		return -1;
	}
	ag_log(LOG_WARNING, "%s", err->msg);
	ag_err_clear(err);
	return 0;
}

struct admit_ctx {
	struct ag_core	*core;
	struct cmd	*c;
};

static int
admit_runner(void *arg, struct ag_err *err)
{
	struct admit_ctx *a = arg;

	if (start_record(a->core, a->c, err) < 0)
		return -1;
	/* the proxy attributes what it sees from now on to this line */
	ag_egress_set_seq(a->core->egress, a->c->rec.seq);
	return 0;
}

/* ---- run -------------------------------------------------------------------- */

/* What every runner gets: the tracked state, the sandbox, the client's fds. */
static void
run_opts(struct ag_core *core, struct ag_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sandbox = core->sandbox;
	o->runner = core->cfg != NULL && core->cfg->gw.runner != NULL ? core->cfg->gw.runner :
	    AG_BASH;
	o->cwd = core->sess.cwd;
	o->env = core->sess.env;
	o->last_status = core->sess.last_status;
	o->in_fd = core->cmd_in;
	o->out_fd = STDOUT_FILENO;
	o->err_fd = STDERR_FILENO;
	o->tty_fd = -1;
	if (core->standing != NULL) {
		o->revoked = ag_core_revoked;
		o->revoked_arg = core;
	}
}

/*
 * A file transfer: the program speaks its protocol on the client's stdio,
 * so no timeout, no output cap and no capture (a cut stream would corrupt
 * it), and nothing else in the line.
 */
static enum next
run_transfer(struct ag_core *core, struct cmd *c, struct ag_run_opts *o)
{
	struct ag_err err;
	char *script;

	ag_err_clear(&err);
	if ((script = ag_transfer_script(&c->xfer, c->line, c->len, &err)) == NULL)
		goto fail;
	o->in_fd = STDIN_FILENO;
	o->cmd = script;
	o->cmdlen = strlen(script);
	o->no_capture = 1;
	if (ag_run(o, &c->res, &err) < 0) {
		free(script);
		if (c->res.not_admitted)
			return refuse(c, "deny", c->why, "audit:required");
		snprintf(c->why, sizeof(c->why), "cannot start %s: %s",
		    c->xfer.kind == AG_XFER_SFTP ? "sftp-server" : ag_xfer_name(c->xfer.kind),
		    err.msg);
		return refuse(c, "deny", c->why, c->rec.rule);
	}
	free(script);
	c->ran_runner = 1;
	return NEXT;
fail:
	snprintf(c->why, sizeof(c->why), "%s", err.msg);
	return refuse(c, "deny", c->why, c->rec.rule);
}

/* The file path names for the process whose exec is judged. */
static int
exec_file_of(const void *fctx, const char *path, dev_t *dev, ino_t *ino)
{
	const struct ag_exec_req *req = fctx;

	return ag_execguard_file_id(req->pid, path, dev, ino);
}

/* What the exec supervisor's judge is given. */
struct judge_ctx {
	struct ag_execpolicy	ep;
	int			cleanup;	/* only tmpclean.h's programs run */
};

/* The exec supervisor's judge (exec/execguard.h): the profile's (policy/). */
static int
exec_judge(void *ctx, const struct ag_exec_req *req, char *reason, size_t reasonsz,
    char *rule, size_t rulesz)
{
	const struct judge_ctx *jc = ctx;
	struct ag_execpolicy ep = jc->ep;

	/* while the persistent /tmp is past its bound, whatever the line's
	 * words: the system's clean-up programs only, by the file run */
	if (jc->cleanup && !ag_tmpclean_file(req->dev, req->ino)) {
		snprintf(reason, reasonsz, "only the system's clean-up programs run while the "
		    "persistent /tmp is past limits.tmp_disk");
		snprintf(rule, rulesz, "limits.tmp_disk");
		return 0;
	}

	/* the program is the file the kernel runs (execfile.h), and so is
	 * what the dynamic loader is asked to run */
	ep.file_of = exec_file_of;
	ep.file_ctx = req;
	return ag_execpolicy_judge_file(&ep, req->path, req->dev, req->ino, req->argv, req->argc,
	    req->cwd, reason, reasonsz, rule, rulesz);
}

static enum next
run_command(struct ag_core *core, struct cmd *c, struct ag_run_opts *o)
{
	struct judge_ctx jc;
	struct ag_execpolicy *ep = &jc.ep;
	struct ag_err err;
	char **cleanup_env = NULL;
	int r;

	ag_err_clear(&err);
	o->cmd = c->line;
	o->cmdlen = c->len;
	/* on a terminal (REPL, or exec with ssh -t) the command gets the
	 * foreground, or reading it would stop the command with SIGTTIN */
	o->tty_fd = isatty(core->cmd_in) ? core->cmd_in : -1;
	o->timeout = ag_core_line_timeout(core);
	o->max_output = core->profile->limits.max_output;
	if (core->pty) {
		/* a terminal of its own (pty.h); ours only relays */
		o->pty = 1;
		o->tty_fd = -1;
		o->in_fd = STDIN_FILENO;
		o->rec = core->rec;
		o->rec_required = core->audit != NULL && ag_audit_required(core->audit);
		term_echo(core, c);
	}
	o->no_capture = !ag_session_needs_capture(&core->sess, c->tree);
	/* a clean-up line runs without the functions earlier lines left */
	o->shell_state = c->cleanup ? c->cleanup_state : core->sess.shell_state;
	jc.cleanup = c->cleanup;
	/* ... and without what makes the loader load other code (tmpclean.h) */
	if (c->cleanup && (cleanup_env = ag_tmpclean_env(o->env)) == NULL)
		return refuse(c, "deny", "denied: out of memory", "limits.tmp_disk");
	if (cleanup_env != NULL)
		o->env = cleanup_env;
	o->redact = core->profile->redact ? core->profile : NULL;
	/* the deny rules hold at every exec of the tree (and in the strict
	 * tier, what the dynamic loader is asked to run) */
	ep->profile = core->profile;
	ep->home = core->sess.home;
	ep->env = core->sess.env;
	ep->approved = c->approved ? c->d.approve_rule : NULL;
	ep->file_of = NULL;
	ep->file_ctx = NULL;
	if (ag_sandbox_active(core->sandbox)) {
		o->exec_judge = exec_judge;
		o->exec_judge_ctx = &jc;
	}
	if (core->write_path != NULL) {
		/* the write_file tool: its `cat > PATH` done by the runner's own
		 * step, which follows no link (runner.h); nothing is executed */
		o->write_path = core->write_path;
		o->write_prof = core->profile;
		o->write_home = core->sess.home;
		o->no_capture = 1;
		o->shell_state = NULL;
		o->tty_fd = -1;
		o->exec_judge = NULL;
	}
	r = ag_run(o, &c->res, &err);
	free(cleanup_env);
	if (r < 0) {
		if (c->res.not_admitted)
			return refuse(c, "deny", c->why, "audit:required");
		snprintf(c->why, sizeof(c->why), "cannot start the command: %s", err.msg);
		return refuse(c, "allow", c->why, c->rec.rule);
	}
	c->ran_runner = 1;
	return NEXT;
}

/*
 * Strict tier: the programs only the validator allowed, or only rollout
 * lets run, may execute for this line alone (sandbox.h); whatever else it
 * starts meets the usual rules.
 */
static int
grant_asked(struct ag_core *core, struct cmd *c, struct ag_err *err)
{
	const char *progs[64];
	size_t i, n = 0;

	for (i = 0; i < c->d.ncmds && n < sizeof(progs) / sizeof(progs[0]); i++)
		if ((c->d.cmds[i].verdict == AG_ASK ||
		    ((c->would_deny || c->approved) && c->d.cmds[i].verdict == AG_DENY)) &&
		    c->d.cmds[i].path != NULL &&
		    c->d.cmds[i].path[0] == '/')
			progs[n++] = c->d.cmds[i].path;
	return ag_sandbox_grant_once(core->sandbox, progs, n, err);
}


/*
 * On an upstream: the same bytes, the same runner script, over the
 * target's connection (core/target.h).
 */
static enum next
run_upstream(struct ag_core *core, struct cmd *c)
{
	struct ag_err err;

	if (c->xfer.kind != AG_XFER_NONE) {
		snprintf(c->why, sizeof(c->why), "file transfers (scp, sftp, rsync) are not "
		    "relayed to an upstream; '%s' cannot take one through the gateway",
		    c->t->up->name);
		return refuse(c, "deny", c->why, "targets");
	}
	term_echo(core, c);
	ag_err_clear(&err);
	if (ag_target_run(core, c->t, c->line, c->len,
	    ag_session_needs_capture(&core->sess, c->tree),
	    &c->res, &c->trec.pty_cols, &c->trec.pty_rows, &err) < 0) {
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		c->trec.error = c->why;
		return refuse(c, "allow", c->why, c->rec.rule);
	}
	c->ran_runner = 1;
	return NEXT;
}

/*
 * A git repository the command created with a hook or a program-running
 * config in it, before the sandbox could make them read-only: said to the
 * caller and audited; the gateway refuses commands while it is there.
 */
static void
planted_after(struct ag_core *core)
{
	int set_aside;
	const char *what = ag_sandbox_after(core->sandbox, &set_aside);
	char msg[AG_ERR_MSG_MAX], shown[AG_ERR_MSG_MAX / 2];
	struct ag_err e;

	if (what == NULL)
		return;
	/* a path the agent chose: a newline in it is shown, not obeyed */
	what = ag_utf8_shown(what, shown, sizeof(shown));
	snprintf(msg, sizeof(msg), "%s was put in a git repository by the command that created "
	    "it, before the gateway could make it read-only: %s, and commands are refused "
	    "until that is removed", what, set_aside ? "it is set aside as *.planted, a name "
	    "git does not read" : "it could NOT be set aside (git run outside the gateway "
	    "may run it: remove it now)");
	fflush(stdout);
	fprintf(stderr, "agentgate: %s\n", msg);
	fflush(stderr);
	if (core->audit != NULL && ag_audit_event(core->audit, "sandbox", "git_planted", "deny",
	    msg, &e) < 0)
		ag_log(LOG_ERR, "%s", e.msg);
}

/* ---- the persistent /tmp's bound ------------------------------------------- */

/*
 * The persistent /tmp measured against limits.tmp_disk (red team 20, M2:
 * it is host disk, often the audit log's).  Measuring walks the whole
 * tree, and the toolchains' caches live there (tens of milliseconds for
 * an npm cache): after a walk that took over TMP_WALK_CHEAP_MS, the walk
 * after a command is skipped until fifty times its cost has passed, so it
 * takes at most 2% of the session's time.  A session's first command, and
 * every command while the bound is passed (a clean-up must be seen), are
 * always measured.
 */
#define TMP_WALK_CHEAP_MS	5

static void
tmp_measure(struct ag_core *core, int after)
{
	long long used, limit, t0 = ag_now_ms(), cost;
	char why[320];
	int r;

	if (after && core->tmp_measured && !core->tmp_over && t0 < core->tmp_next_ms)
		return;
	r = ag_sandbox_tmp_usage(core->sandbox, &used, &limit, why, sizeof(why));
	cost = ag_now_ms() - t0;
	core->tmp_next_ms = cost > TMP_WALK_CHEAP_MS ? t0 + 50 * cost : 0;
	core->tmp_measured = 1;
	core->tmp_over = r != 0;
	if (r > 0)
		snprintf(core->tmp_why, sizeof(core->tmp_why), "the persistent /tmp holds over "
		    "%lld MiB, more than limits.tmp_disk (%lld MiB)", used >> 20, limit >> 20);
	else if (r < 0)
		snprintf(core->tmp_why, sizeof(core->tmp_why), "the persistent /tmp cannot be "
		    "measured against limits.tmp_disk: %s", why);
}

/*
 * What a line of clean-up programs holds that bash would run unseen
 * (red team 24, H2): an assignment or environment prefix
 * (LD_LIBRARY_PATH=~/lib ls), or what the policy refuses when told the
 * line is a clean-up one (a subscript or arithmetic bash evaluates, test
 * -v of a subscript: the strict tier's refusals).  NULL: nothing.
 */
static const char *
tmp_cleanup_held(struct ag_core *core, struct cmd *c, char *buf, size_t bufsz)
{
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	const char *shape = ag_tmpclean_shape(c->tree);
	int ok;

	if (shape != NULL)
		return shape;
	policy_ctx(core, &ctx);
	ctx.cleanup = 1;
	ctx.one_pass = 1;
	memset(&d, 0, sizeof(d));
	ok = ag_policy_decide_text(&ctx, c->tree, c->line, c->len, &d) == 0 &&
	    d.verdict == AG_ALLOW;
	if (!ok)
		snprintf(buf, bufsz, "what bash would run unseen (%s)",
		    d.reason[0] != '\0' ? d.reason : "the rules refuse it");
	ag_decision_free(&d);
	return ok ? NULL : buf;
}

/* Refused while the persistent /tmp is past its bound, but for a line
 * that cleans up. */
static int
tmp_refused(struct ag_core *core, struct cmd *c)
{
	char held_why[sizeof(((struct ag_decision *)0)->reason) + 64];
	const char *held = NULL;

	if (!core->tmp_measured)
		tmp_measure(core, 0);	/* the session's first command */
	if (!core->tmp_over)
		return 0;
	if (ag_tmpclean_line(&c->d, c->line, c->len) &&
	    (held = tmp_cleanup_held(core, c, held_why, sizeof(held_why))) == NULL) {
		/* its plain variables, not its functions (tmpclean.h) */
		if (core->sess.shell_state == NULL ||
		    (c->cleanup_state = ag_tmpclean_state(core->sess.shell_state)) != NULL) {
			c->cleanup = 1;
			return 0;
		}
	}
	snprintf(c->why, sizeof(c->why), "denied: %s: remove what it no longer needs "
	    "(" AG_TMPCLEAN_SAID ", run meanwhile, e.g. "
	    "`du -sh /tmp/*` then `rm -rf /tmp/NAME`); entries unused for limits.tmp_age "
	    "go by themselves%s%s", core->tmp_why, held != NULL ? "; this line holds " : "",
	    held != NULL ? held : "");
	return 1;
}

static enum next
stage_run(struct ag_core *core, struct cmd *c)
{
	struct ag_session *s = &core->sess;
	struct admit_ctx ac = { .core = core, .c = c };
	struct ag_run_opts o;
	struct ag_err err;
	enum next r;
	int bare_exit, builtin, sb;

	c->rec.ran = 1;
	/* what the gateway does itself (a bare exit, a lone cd/pushd/popd/dirs)
	 * or sends upstream has no runner to wait for it: its record first */
	bare_exit = c->xfer.kind == AG_XFER_NONE && ag_session_is_bare_exit(s, c->tree, &c->status);
	builtin = !bare_exit && c->t == NULL && c->xfer.kind == AG_XFER_NONE &&
	    ag_session_is_builtin(s, c->tree);
	ag_err_clear(&err);
	if ((c->t != NULL || bare_exit || builtin) && start_record(core, c, &err) < 0 &&
	    !bare_exit)
		return refuse(c, "deny", c->why, "audit:required");
	if (bare_exit) {
		c->end_session = 1;
		return NEXT;
	}
	if (c->t != NULL && c->would_deny)
		return rollout_unheld(c, "an upstream's lines run under that host's own rules");
	if (c->t != NULL)
		return run_upstream(core, c);
	if (builtin) {
		fflush(stdout);
		(void)ag_session_try_builtin(s, c->tree, stdout, stderr, &c->status);
		return NEXT;
	}
	ag_err_clear(&err);
	sb = ag_core_sandbox(core, &err);
	if (sb == 0 && c->would_deny && !ag_sandbox_active(core->sandbox))
		return rollout_unheld(c, "this session has no kernel sandbox to run it under");
	if (sb == 0 && (c->asked || c->would_deny || c->approved))
		sb = grant_asked(core, c, &err);
	if (sb < 0) {
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		return refuse(c, "deny", c->why, "sandbox");
	}
	if (tmp_refused(core, c))
		return refuse(c, "deny", c->why, "limits.tmp_disk");
	run_opts(core, &o);
	ag_sandbox_command_starts(core->sandbox);
	o.admit = admit_runner;
	o.admit_arg = &ac;
	r = c->xfer.kind != AG_XFER_NONE ? run_transfer(core, c, &o) : run_command(core, c, &o);
	ag_sandbox_grant_end(core->sandbox);
	planted_after(core);
	tmp_measure(core, 1);
	return r;
}

/* ---- apply ------------------------------------------------------------------ */

/*
 * The line about one refused exec names the program as it was run (git,
 * bin/py: what the line or script typed, argv[0]), and the file the
 * kernel resolved only where that is not plain from the name (a symbolic
 * link, argv[0] set to something else).
 */
static void
exec_denial_line(const struct ag_exec_denial *d)
{
	const char *a0 = d->argv != NULL && d->argc > 0 && d->argv[0] != NULL &&
	    d->argv[0][0] != '\0' ? d->argv[0] : d->path;
	const char *base = strrchr(d->path, '/');

	base = base != NULL ? base + 1 : d->path;
	if (strcmp(a0, d->path) == 0 || (strchr(a0, '/') == NULL && strcmp(a0, base) == 0))
		fprintf(stderr, "agentgate: %s (an exec inside the command: %s)\n",
		    d->reason ? d->reason : "denied", a0);
	else
		fprintf(stderr, "agentgate: %s (an exec inside the command: %s, which is %s)\n",
		    d->reason ? d->reason : "denied", a0, d->path);
}

/*
 * A connect the supervisor made for the process (exec/sockconnect.h) and
 * noted: a UNIX socket refused, or connected because network.unix names
 * it, or an address outside the namespace tried directly (it failed
 * there).  A "net" record, and for a refusal a line to the caller, since
 * "Permission denied" or "Network is unreachable" says nothing of why.
 */
static void
connect_seen(struct ag_core *core, struct cmd *c, const struct ag_exec_denial *d)
{
	const char *prof = core->profile->name ? core->profile->name : "?";
	const char *proto = d->proto != NULL ? d->proto : "unix";
	struct ag_audit_net n;
	struct ag_err err;
	char shown[PATH_MAX + 64];

	ag_utf8_shown(d->path, shown, sizeof(shown));
	if (d->allowed)
		;
	else if (d->path[0] == '\0')
		fprintf(stderr, "agentgate: %s\n", d->reason);	/* how many more */
	else if (strcmp(proto, "unix") != 0 && ag_net_has_egress(core->profile))
		fprintf(stderr, "agentgate: blocked direct connection to %s (%s): the session "
		    "reaches the network only through the egress proxy (HTTPS_PROXY, HTTP_PROXY "
		    "and ALL_PROXY are set for each command)\n", shown, proto);
	else if (strcmp(proto, "unix") != 0)
		fprintf(stderr, "agentgate: blocked direct connection to %s (%s): profile '%s' "
		    "has no network (network.allow)\n", shown, proto, prof);
	else
		fprintf(stderr, "agentgate: blocked connection to the UNIX socket %s: not the "
		    "session's own (beneath its /tmp or a write root), and network.unix of "
		    "profile '%s' does not name it\n", shown, prof);
	if (core->audit == NULL)
		return;
	memset(&n, 0, sizeof(n));
	n.seq = c->rec.seq;
	n.proto = proto;
	n.address = d->path;
	n.decision = d->allowed ? "allow" : "deny";
	n.reason = d->reason;
	n.rule = d->rule;
	n.error = d->error;
	ag_err_clear(&err);
	if (ag_audit_net(core->audit, &n, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
}

/*
 * Execs the supervisor refused inside the command's tree: one audit record
 * each, and a line to the caller, since the refused program's own message
 * ("Permission denied") does not say why.
 */
static void
exec_denials(struct ag_core *core, struct cmd *c)
{
	struct ag_err err;
	size_t i;

	for (i = 0; i < c->res.ndenials; i++) {
		const struct ag_exec_denial *d = &c->res.denials[i];

		if (d->is_connect) {
			connect_seen(core, c, d);
			continue;
		}
		if (d->would)
			;	/* rollout: the agent sees what enforcement would not */
		else if (d->path != NULL && d->path[0] != '\0')
			exec_denial_line(d);
		else
			fprintf(stderr, "agentgate: %s\n", d->reason ? d->reason : "denied");
		if (core->audit != NULL && ag_audit_exec_denied(core->audit, c->rec.command,
		    c->rec.command_len, d->path, d->argv, d->argc, d->reason, d->rule, d->would,
		    &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
	}
	fflush(stderr);
}

/* An exec the supervisor refused, and said so (exec_denials). */
static int
exec_denial_said(const struct cmd *c)
{
	size_t i;

	for (i = 0; i < c->res.ndenials; i++)
		if (!c->res.denials[i].would && !c->res.denials[i].allowed)
			return 1;
	return 0;
}

/*
 * A command that failed where the sandbox may be why, and the program's
 * own error does not say so: one note on stderr, the first that applies.
 * A subcommand that writes where the sandbox keeps files read-only (git
 * config: "Device or resource busy" names the file, not why or what
 * instead); or a "Permission denied" or "Read-only file system" the
 * program printed (runner.h), which for a write outside the roots or to
 * a protected file is the kernel's, unseen by the gateway: the note names
 * the roots.  Not after an exec the supervisor refused, which was said.
 */
static void
failure_note(struct ag_core *core, struct cmd *c)
{
	const struct ag_profile *p = core->profile;
	const char *note = NULL;
	char roots[400], buf[1024];
	size_t i;

	if (c->status == 0 || !ag_sandbox_active(core->sandbox))
		return;
	for (i = 0; i < c->d.ncmds && note == NULL; i++)
		note = ag_prog_readonly_note(c->d.cmds[i].name, c->d.cmds[i].sub);
	if (note == NULL && c->res.refusal_said && !exec_denial_said(c)) {
		ag_walk_list_text(&p->paths_write, roots, sizeof(roots));
		snprintf(buf, sizeof(buf), "if that \"Permission denied\" or \"Read-only file "
		    "system\" was a write, the sandbox refused it: this session may write only "
		    "under %s%s, and protected files there (~/.bashrc, .git/config, .git/hooks "
		    "...) are read-only; write beneath those instead", p->paths_write.n > 0 ?
		    roots : "nothing", p->tier == AG_TIER_DEVELOPER ? " and its own /tmp" : "");
		note = buf;
	}
	if (note == NULL)
		return;
	fprintf(stderr, "%sagentgate: note: %s\n", core->pty ? "\r\n" : "", note);
	fflush(stderr);
}

/*
 * A line that ends with `cmd &`: each line runs in a shell of its own and
 * nothing it starts outlives it (runner.h), so the job ended with the
 * line, and `jobs`, `wait` or `kill %1` on a later line find nothing.
 * Said once, after the line, since bash itself says nothing.
 */
static void
background_note(struct ag_core *core, struct cmd *c)
{
	const struct ag_sh_node *t = c->tree;

	if (t == NULL || t->type != AG_SH_LIST || t->nkids == 0 || t->background == NULL ||
	    !t->background[t->nkids - 1])
		return;
	fprintf(stderr, "%sagentgate: note: a background job ends with its line (each line "
	    "runs in a shell of its own, and what it starts does not outlive it): start "
	    "the job and wait for it on one line (cmd & ...; wait)\n", core->pty ? "\r\n" : "");
	fflush(stderr);
}

/*
 * Connections the egress proxy refused while the line ran: a line each,
 * once per host, since a client's own message ("403", "could not
 * resolve") does not say what is allowed.  The records are the proxy's.
 */
static void
egress_refusals(struct ag_core *core, struct cmd *c)
{
	char buf[4096];

	if (core->egress == NULL)
		return;
	if (ag_egress_line_end(core->egress) < 0)
		ag_log(LOG_ERR, "egress proxy: gone");
	if (ag_egress_refusals(core->egress, c->rec.seq, buf, sizeof(buf)) > 0) {
		fputs(buf, stderr);
		fflush(stderr);
	}
	c->rec.net_unrecorded = ag_egress_unrecorded(core->egress, c->rec.seq);
	ag_egress_set_seq(core->egress, 0);
}

/* `declare -A NAME=(...)`, as session.c keeps an associative array */
static int
assoc_definition(const struct ag_sh_node *k)
{
	char *w0, *w1;
	int ok;

	if (k->type != AG_SH_SIMPLE || k->nwords != 3 || k->nassigns != 0 || k->nredirs != 0)
		return 0;
	w0 = ag_sh_word_literal(k->words[0], NULL);
	w1 = ag_sh_word_literal(k->words[1], NULL);
	ok = w0 != NULL && w1 != NULL && strcmp(w0, "declare") == 0 && strcmp(w1, "-A") == 0;
	free(w0);
	free(w1);
	return ok;
}

/* The name a kept definition defines, for the note that leaves it out. */
static const char *
definition_name(const struct ag_sh_node *k)
{
	if (k->type == AG_SH_FUNCDEF)
		return k->name;
	if (k->type == AG_SH_SIMPLE && k->nassigns > 0)
		return k->assigns[0].name;
	return NULL;
}

/*
 * The variables and functions a line left for the next (session.c) are
 * code the next runner runs first, and what a command writes can stand in
 * for the trap that reports them: they are kept only as what the trap
 * writes (assignments of quoted values, `declare -A NAME=(...)` for an
 * associative array, function definitions, nothing else at the top), and
 * each only when the rules allow it as a typed line would be, a function's
 * body judged as at its definition.  A definition the rules refuse is left
 * out and the rest kept (a venv's `deactivate` resets PYTHONHOME, which
 * must not cost the session its other functions); anything but
 * definitions, and nothing is kept.  Returns NULL when all is kept as it
 * is, else what was left out and why, in why.
 */
static const char *
state_judge(struct ag_core *core, char *why, size_t whysz)
{
	struct ag_session *s = &core->sess;
	struct ag_sh_node *t = NULL;
	struct ag_policy_ctx ctx;
	struct ag_strbuf kept;
	struct ag_err err;
	size_t i, nkids, ndropped = 0;
	int funcs = 0, bad = 0;

	if (ag_sh_parse(s->shell_state, strlen(s->shell_state), &t, &err) != AG_SH_OK) {
		ag_session_forget_state(s);
		return "they do not parse";
	}
	for (i = 0; i < t->nkids && !bad; i++) {
		const struct ag_sh_node *k = t->kids[i];

		if (t->background != NULL && t->background[i])
			bad = 1;
		while (k != NULL && k->type == AG_SH_PIPELINE && k->nkids == 1 && !k->negated)
			k = k->kids[0];
		if (k == NULL || !(k->type == AG_SH_FUNCDEF || (k->type == AG_SH_SIMPLE &&
		    k->nwords == 0 && k->nassigns > 0 && k->nredirs == 0) ||
		    assoc_definition(k)))
			bad = 1;
	}
	if (bad) {
		ag_sh_free(t);
		ag_session_forget_state(s);
		return "they hold more than definitions";
	}
	policy_ctx(core, &ctx);
	ag_strbuf_init(&kept, AG_SESSION_MAX_STATE);
	why[0] = '\0';
	for (i = 0; i < t->nkids; i++) {
		const struct ag_sh_node *k = t->kids[i], *def = k;
		struct ag_decision d;
		int ok, shadow;

		while (def->type == AG_SH_PIPELINE)
			def = def->kids[0];
		/* decided as the definition's own text would be as a line:
		 * a function body as at its definition, not as run */
		memset(&d, 0, sizeof(d));
		ok = ag_policy_check(&ctx, s->shell_state + k->off, k->end - k->off, &d) == 0 &&
		    d.verdict == AG_ALLOW;
		/* a function named after a builtin or reserved word would run
		 * in place of what the next runner's own script calls */
		shadow = ok && def->type == AG_SH_FUNCDEF && ag_session_shell_word(def->name);
		ok = ok && !shadow;
		if (!ok && ndropped++ == 0) {
			const char *name = definition_name(def);

			snprintf(why, whysz, "%s (%s)", name != NULL ? name : "a definition",
			    shadow ? "a function named after a shell builtin or keyword" :
			    d.reason[0] ? d.reason : "the rules refuse it");
		}
		ag_decision_free(&d);
		if (!ok)
			continue;
		funcs |= def->type == AG_SH_FUNCDEF;
		if (ag_strbuf_append(&kept, s->shell_state + k->off, k->end - k->off) < 0 ||
		    ag_strbuf_addch(&kept, '\n') < 0) {
			ndropped = t->nkids;
			snprintf(why, whysz, "they are too large to keep");
			break;
		}
	}
	nkids = t->nkids;
	ag_sh_free(t);
	if (ndropped == 0) {
		ag_strbuf_free(&kept);
		return NULL;
	}
	if (ndropped > 1) {
		size_t n = strlen(why);

		snprintf(why + n, whysz - n, ", and %zu more", ndropped - 1);
	}
	ag_session_keep_state(s, ndropped >= nkids ? NULL :
	    ag_strbuf_detach(&kept, NULL), funcs);
	ag_strbuf_free(&kept);
	return why;
}

/* The kept state's entries the capture had that are not as the runner's
 * trap writes them (session.h state_forged): said, and recorded. */
static void
state_forged_note(struct ag_core *core, struct cmd *c)
{
	char msg[sizeof(core->sess.state_forged) + 160];
	struct ag_err e;

	snprintf(msg, sizeof(msg), "not kept for the next lines: %s; the shell state "
	    "the line reported is not as bash writes it", core->sess.state_forged);
	if (!(c->flags & AG_CORE_REQUEST))
		fprintf(stderr, "%sagentgate: %s\n", core->pty ? "\r\n" : "", msg);
	ag_err_clear(&e);
	if (core->audit != NULL && ag_audit_event(core->audit, "sandbox", "state_forged",
	    "deny", msg, &e) < 0)
		ag_log(LOG_ERR, "%s", e.msg);
}

static void
stage_apply(struct ag_core *core, struct cmd *c)
{
	struct ag_session *s = &core->sess;
	struct ag_run_result *res = &c->res;
	struct ag_err err;
	char *kept = NULL;
	int kept_funcs = s->has_funcs;

	if (!c->ran_runner)
		return;
	c->status = res->status;
	c->rec.signal = res->signal;
	c->rec.duration_ms = res->duration_ms;
	c->rec.bytes_out = res->bytes_out;
	if (c->xfer.kind != AG_XFER_NONE)
		return;
	s->last_status = c->status;
	ag_err_clear(&err);
	s->path_kept = 0;
	s->state_dropped = 0;
	s->state_changed = 0;
	/* a clean-up line ran without the kept functions (tmpclean.h):
	 * the kept state stays as it was */
	if (c->cleanup && s->shell_state != NULL && (kept = strdup(s->shell_state)) == NULL)
		kept_funcs = 0;
	if (res->capture_ok && ag_session_apply_capture(s, res->capture, res->capture_len,
	    &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	if (c->cleanup) {
		ag_session_keep_state(s, kept, kept_funcs);
		s->state_changed = 0;
	}
	else if (s->path_kept && !(c->flags & AG_CORE_REQUEST))
		fprintf(stderr, "%sagentgate: PATH is kept as it was for the next lines: an entry "
		    "of the new one is not an absolute directory\n", core->pty ? "\r\n" : "");
	else if (s->state_dropped && !(c->flags & AG_CORE_REQUEST))
		fprintf(stderr, "%sagentgate: the shell's variables and functions are kept as "
		    "they were for the next lines: the new ones are over %d KiB (exported "
		    "variables are kept)\n", core->pty ? "\r\n" : "", AG_SESSION_MAX_STATE / 1024);
	else if (!res->capture_ok && ag_session_needs_capture(&core->sess, c->tree))
		ag_log(LOG_DEBUG, "no complete environment capture; state unchanged");
	/* a state that is not as the runner's trap writes it is the line's
	 * own writes to the capture's descriptor: what is not is left out */
	if (res->capture_ok && s->state_forged[0] != '\0')
		state_forged_note(core, c);
	if (res->capture_ok && s->env_not_kept[0] != '\0' && !(c->flags & AG_CORE_REQUEST))
		fprintf(stderr, "%sagentgate: not kept for the next lines: %s (it changes how "
		    "programs load or read what follows; set it on the line that needs it, "
		    "as in `NAME=VALUE ./prog`)\n", core->pty ? "\r\n" : "", s->env_not_kept);
	/* an exec request's line is the session's last: nothing to keep */
	if (res->capture_ok && s->state_changed && s->shell_state != NULL &&
	    (c->flags & AG_CORE_REQUEST))
		ag_session_forget_state(s);
	else if (res->capture_ok && s->state_changed && s->shell_state != NULL) {
		char why[sizeof(((struct ag_decision *)0)->reason) + 256];
		const char *left = state_judge(core, why, sizeof(why));

		if (left != NULL)
			fprintf(stderr, "%sagentgate: not kept for the next lines: %s\n",
			    core->pty ? "\r\n" : "", left);
	}
	exec_denials(core, c);
	egress_refusals(core, c);
	failure_note(core, c);
	background_note(core, c);
	c->rec.truncated = res->truncated;
	c->timed_out = res->timed_out;
	c->cancelled = res->cancelled;
	if (res->client_gone || res->terminated || res->revoked)
		c->end_session = 1;
	if (res->unread_len > 0 && res->unread_len <= sizeof(core->unread)) {
		memcpy(core->unread, res->unread, res->unread_len);
		core->unread_len = res->unread_len;
	}
	/* as bash does after ^C: the prompt starts on a line of its own */
	if (core->pty && res->signal == SIGINT && !res->client_gone)
		fputs("\n", stdout);
}

/* ---- record ----------------------------------------------------------------- */

static void
stage_record(struct ag_core *core, struct cmd *c)
{
	struct ag_err err;

	record_programs(c);
	record_rule_label(core, c);
	if (c->rec.ran) {
		c->rec.exit_status = c->status;
		c->rec.cwd_after = core->sess.cwd;
	}
	if (c->ran_runner && c->res.ran_known) {
		c->rec.execs_known = 1;
		c->rec.execs = c->res.ran.paths;
		c->rec.nexecs = c->res.ran.npaths;
		c->rec.execs_unlisted = c->res.ran.more;
	}
	if (core->audit == NULL)
		return;
	ag_err_clear(&err);
	if (ag_audit_command(core->audit, &c->rec, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
}

/* What the front end reports of the line (core.h), in the line's context. */
static void
stage_outcome(const struct ag_core *core, const struct cmd *c, struct ag_core_outcome *o)
{
	/* a switch reports where the session is now; a line, where it ran */
	const struct ag_session *s = c->switched ? ag_target_session(core) : &core->sess;

	memset(o, 0, sizeof(*o));
	snprintf(o->cwd, sizeof(o->cwd), "%s", s->cwd);
	o->profile = c->switched && core->at != NULL ? core->at->up->profile : core->profile;
	snprintf(o->decision, sizeof(o->decision), "%s", c->rec.decision ? c->rec.decision : "");
	snprintf(o->reason, sizeof(o->reason), "%s", c->rec.reason ? c->rec.reason : "");
	snprintf(o->rule, sizeof(o->rule), "%s", c->rec.rule ? c->rec.rule : "");
	o->ran = c->rec.ran;
	o->status = c->status;
	o->signal = c->rec.signal;
	o->timed_out = c->timed_out;
	o->cancelled = c->cancelled;
	o->truncated = c->rec.truncated;
	o->duration_ms = c->rec.duration_ms;
	/* the line was allowed and ran, then the administrator ended the
	 * session under it: a front end that reports it must not read its
	 * status as the command's own answer */
	if (core->ended && c->rec.ran) {
		snprintf(o->reason, sizeof(o->reason), "this session has been ended: %s",
		    core->ended_why);
		snprintf(o->rule, sizeof(o->rule), "revoked");
	} else if (c->rec.ran && ag_runner_terminating()) {
		char why[512];

		if (ag_live_ended_by(why, sizeof(why))) {
			snprintf(o->reason, sizeof(o->reason),
			    "the administrator ended this session: %s", why);
			snprintf(o->rule, sizeof(o->rule), "revoked");
		}
	}
}

/* ---- the line --------------------------------------------------------------- */

/*
 * The caller may have lost its right to be here since the session began
 * (core/standing.h): then no line of it runs, the client is told why once,
 * and the audit says so.
 */
static int
revoked(struct ag_core *core)
{
	char *why = core->ended_why;
	struct ag_err err;

	if (core->ended)
		return 1;
	if (core->standing == NULL || ag_standing_check(core->standing, why,
	    sizeof(core->ended_why)) == 0)
		return 0;
	core->ended = 1;
	fprintf(stderr, "%sagentgate: this session has been ended: %s\n",
	    core->pty ? "\r\n" : "", why);
	fflush(stderr);
	ag_log(LOG_NOTICE, "session ended: %s", why);
	ag_err_clear(&err);
	if (core->audit != NULL && ag_audit_event(core->audit, "session_revoked", NULL, "deny",
	    why, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	return 1;
}

/* While a command runs (the runner and the upstream relay ask every few
 * seconds). */
int
ag_core_revoked(void *core)
{
	return revoked(core);
}

int
ag_core_command(struct ag_core *core, const char *line, size_t len, int flags,
    int *end_session)
{
	return ag_core_command_parsed(core, line, len, flags, NULL, end_session);
}

int
ag_core_command_parsed(struct ag_core *core, const char *line, size_t len, int flags,
    const struct ag_core_parsed *parsed, int *end_session)
{
	struct ag_session *s;
	struct ag_target_saved saved;
	struct cmd c;
	char *cwd_before = NULL, *recorded;
	size_t reclen;
	int entered = 0;

	*end_session = 0;
	if (core->outcome != NULL)
		memset(core->outcome, 0, sizeof(*core->outcome));
	if (revoked(core)) {
		/* a front end that reports each line says it was not run */
		if (core->outcome != NULL) {
			snprintf(core->outcome->decision, sizeof(core->outcome->decision), "deny");
			snprintf(core->outcome->reason, sizeof(core->outcome->reason),
			    "this session has been ended: %s", core->ended_why);
			snprintf(core->outcome->rule, sizeof(core->outcome->rule), "revoked");
		}
		*end_session = 1;
		return AG_STATUS_ENDED;
	}
	memset(&c, 0, sizeof(c));
	/* what the record keeps: no secret a variable's name or shape betrays */
	if ((recorded = ag_redact_command(line, len, &reclen)) == NULL) {
		fprintf(stderr, "agentgate: out of memory\n");
		return AG_STATUS_DENIED;
	}
	c.line = line;
	c.len = len;
	c.flags = flags;
	c.parsed = parsed;
	c.status = AG_STATUS_DENIED;
	c.rec.command = recorded;
	c.rec.command_len = reclen;
	if (reclen > 0 && recorded[reclen - 1] == '\n')	/* a REPL line's own newline */
		c.rec.command_len--;
	c.rec.line = line;
	c.rec.line_len = len > 0 && line[len - 1] == '\n' ? len - 1 : len;
	c.rec.cwd = core->sess.cwd;
	if (stage_target(core, &c) == STOP) {
		core->ncommands++;
		stage_record(core, &c);
		term_outcome(core, &c);
		if (core->outcome != NULL)
			stage_outcome(core, &c, core->outcome);
		free_record(&c);
		free(recorded);
		return c.status;
	}
	if (c.t != NULL) {
		/* the line is judged, run and tracked as the target's */
		ag_target_enter(core, c.t, &saved);
		entered = 1;
	}
	s = &core->sess;
	if ((cwd_before = strdup(s->cwd)) == NULL) {
		fprintf(stderr, "agentgate: out of memory\n");
		goto out;
	}
	c.rec.cwd = cwd_before;

	if (stage_parse(core, &c) == STOP)
		goto out;		/* not a command: no record */
	core->ncommands++;
	if (stage_decide(core, &c) == NEXT && stage_ask(core, &c) == NEXT &&
	    stage_approve(core, &c) == NEXT && stage_admit(core, &c) == NEXT) {
		/* what `agentgate sessions` shows while it runs */
		ag_live_command(c.rec.command, c.rec.command_len);
		if (stage_run(core, &c) == NEXT)
			stage_apply(core, &c);
		ag_live_command(NULL, 0);
	}
	stage_record(core, &c);
	term_outcome(core, &c);
	log_refused_transfer(core, &c);
	if (core->outcome != NULL)
		stage_outcome(core, &c, core->outcome);
	if (c.ran_runner && c.res.rec_failed && core->rec != NULL)
		ag_core_term_failed(core, c.res.rec_error, &c.end_session);
	if (c.ran_runner)
		ag_run_result_free(&c.res);
	/* a transfer leaves $? alone: the REPL never sees one */
	if (c.xfer.kind == AG_XFER_NONE)
		s->last_status = c.status;
	*end_session = c.end_session || core->ended;
out:
	if (entered)
		ag_target_leave(core, c.t, &saved);
	ag_decision_free(&c.d);
	if (!c.tree_lent)
		ag_sh_free(c.tree);
	free_record(&c);
	free(cwd_before);
	free(recorded);
	return c.status;
}

int
ag_core_decide(const struct ag_core *core, const char *line, size_t len,
    struct ag_decision *d)
{
	static char default_path[] = "PATH=" AG_DEFAULT_PATH;
	static char *const no_env[] = { default_path, NULL };
	const struct ag_upstream *u;
	struct ag_policy_ctx ctx;
	struct ag_xfer xfer;
	char name[80];
	size_t rest;
	int k;

	policy_ctx(core, &ctx);
	/* what a channel's request would be, judged as the gateway judges it */
	if (core->at == NULL && ag_policy_transfer(&ctx, line, len, &xfer, d))
		return 0;
	if (core->cfg == NULL || (k = ag_target_word(line, len, name, sizeof(name), &rest)) == 0) {
		if (core->at == NULL)
			return ag_policy_check(&ctx, line, len, d);
		/* the session's target judges what names none */
		snprintf(name, sizeof(name), "%s", core->at->up->name);
		k = 1;
		rest = 0;
	}
	/* explain of an @NAME line: as that target would judge it, in its
	 * state when the session has one, else from its root */
	memset(d, 0, sizeof(*d));
	d->verdict = AG_DENY;
	snprintf(d->rule, sizeof(d->rule), "targets");
	if (k < 0 || !ag_profile_may_target(core->caller, name)) {
		snprintf(d->reason, sizeof(d->reason), "'@%s' is not a target profile '%s' may "
		    "reach", k < 0 ? "?" : name, core->caller->name);
		return 0;
	}
	if (strcmp(name, AG_TARGET_LOCAL) == 0)
		return ag_policy_check(&ctx, line + rest, len - rest, d);
	if ((u = ag_config_upstream(core->cfg, name)) == NULL || u->profile == NULL) {
		snprintf(d->reason, sizeof(d->reason), "'@%s': no such upstream", name);
		return 0;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = u->profile;
	ctx.remote = 1;
	ctx.user = u->user;
	if (core->targets != NULL && core->targets[u - core->cfg->upstreams].opened) {
		const struct ag_session *ts = &core->targets[u - core->cfg->upstreams].sess;

		ctx.cwd = ts->cwd;
		ctx.home = ts->home;
		ctx.env = ts->env;
	} else {
		ctx.cwd = "/";
		ctx.home = "/";
		ctx.env = no_env;
	}
	return ag_policy_check(&ctx, line + rest, len - rest, d);
}

int
ag_core_ask(struct ag_core *core, const char *line, size_t len, const struct ag_decision *d,
    struct ag_ask_result *r)
{
	struct ag_ask_who who;

	if (core->ask == NULL)
		return -1;
	ask_who(core, &who);
	(void)ag_ask(core->ask, line, len, core->sess.cwd, d, &who, r);
	return 0;
}
