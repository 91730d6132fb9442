/*
 * cmd_approvals.c - agentgate approvals, approve, refuse: a person answers
 * a line that waits for approval (record/approvals.h) from their own
 * terminal.
 *
 * They keep the gateway's group (set-group-ID install): the answer is a
 * file in the group's directory, owned by the caller's real uid, which is
 * what the waiting gateway believes, and only from an approver that is not
 * the session's own account.  These commands check the same first, so
 * that a caller who may not approve is told so.
 */
#include "agconfig.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/safepath.h"
#include "common/utf8.h"
#include "record/approvals.h"
#include "record/audit.h"
#include "record/live.h"

/* The request's approvers ("alice, %ops"), as the gateway recorded them
 * from its policy, as a list. */
static int
may_approve(const struct ag_approval_req *req, uid_t uid)
{
	char buf[sizeof(req->approvers)], *save = NULL, *t;
	char *v[64];
	struct ag_strlist l = { .v = v, .n = 0 };

	if (uid == req->uid)
		return 0;
	snprintf(buf, sizeof(buf), "%s", req->approvers);
	for (t = strtok_r(buf, ", ", &save); t != NULL && l.n < 64; t = strtok_r(NULL, ", ", &save))
		v[l.n++] = t;
	return ag_approval_is_approver(&l, uid);
}

/*
 * What the agent wrote (its command, its justification, even its identity
 * as the request file says) goes to a person's terminal on one line, as
 * ag_utf8_visible() shows it: a newline as \n, other controls as \xNN,
 * C1 and bidirectional controls as \uNNNN, bytes that are not UTF-8 as
 * \xNN.  A backslash of its own is shown \\, so that `\n` on the screen
 * is a newline in the command, never the two characters.  Whole: a
 * request holds at most what a person can be shown.
 */
static void
put_safe(const char *s)
{
	static char out[4 * AG_APPROVAL_MAX_CMD + 16];
	size_t n;

	while (*s != '\0') {
		/* a backslash is ASCII: the pieces between them are whole UTF-8 */
		n = strcspn(s, "\\");
		if (n > AG_APPROVAL_MAX_CMD)
			n = AG_APPROVAL_MAX_CMD;	/* (no field is longer) */
		fputs(ag_utf8_visible(s, n, n, out, sizeof(out)), stdout);
		s += n;
		if (*s == '\\') {
			fputs("\\\\", stdout);
			s++;
		}
	}
}

static void
when(long long t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, n, "%lld", t);
}

/* What the listing saw: requests shown, and those of the caller's own
 * account that it may not answer. */
struct seen {
	uid_t	uid;
	int	shown, own;
};

static int
show(const struct ag_approval_req *r, void *arg)
{
	struct seen *s = arg;
	char since[32], until[32];

	/* a request is shown to whom may answer it: root and its approvers;
	 * to nobody else (its command and justification may say more than
	 * they should) */
	if (s->uid != 0 && !may_approve(r, s->uid)) {
		if (r->uid == s->uid)
			s->own++;
		return 0;
	}
	s->shown++;
	when(r->since, since, sizeof(since));
	when(r->deadline, until, sizeof(until));
	printf("%s  identity=", r->id);
	put_safe(r->identity[0] ? r->identity : "-");
	printf(" account=");
	put_safe(r->user);
	printf(" profile=");
	put_safe(r->profile);
	printf(" since=%s until=%s\n    command: ", since, until);
	put_safe(r->command);
	printf("\n    rule: ");
	put_safe(r->rule);
	printf("\n    approvers: ");
	put_safe(r->approvers);
	putchar('\n');
	if (r->justification[0]) {
		printf("    justification: ");
		put_safe(r->justification);
		putchar('\n');
	}
	return 0;
}

int
ag_cmd_approvals(int argc, char **argv)
{
	struct seen seen = { .uid = getuid() };
	struct ag_err err;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: agentgate approvals\n");
		return 2;
	}
	ag_err_clear(&err);
	if (ag_approval_list(show, &seen, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (seen.shown == 0)
		printf("no line waits for %s\n", seen.uid == 0 ? "approval" : "your approval");
	if (seen.own > 0)
		printf("(the lines this account's own sessions wait with cannot be approved, "
		    "nor listed, by this account)\n");
	return 0;
}

/* The request, and whether the caller may answer it: 0, or an exit status. */
static int
answerable(const char *id, struct ag_approval_req *req)
{
	struct ag_err err;

	ag_err_clear(&err);
	if (ag_approval_read(id, req, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (getuid() == req->uid) {
		fprintf(stderr, "agentgate: request %s is a line of your own account's "
		    "session: it cannot be approved or refused by the account that asks\n", id);
		return 1;
	}
	if (!may_approve(req, getuid())) {
		fprintf(stderr, "agentgate: you may not answer request %s: you are not one of "
		    "its approvers (nor root)\n", id);
		return 1;
	}
	if (!ag_approval_alive(req)) {
		fprintf(stderr, "agentgate: request %s is not answered: the gateway that asked "
		    "(pid %ld) is gone\n", id, req->pid);
		return 1;
	}
	return 0;
}

struct find_live {
	const char		*session;
	struct ag_live_entry	 e;
	int			 found;
};

static int
find_live(const struct ag_live_entry *e, void *arg)
{
	struct find_live *f = arg;

	if (strcmp(e->session, f->session) == 0 && f->found++ == 0)
		f->e = *e;
	return 0;
}

/*
 * The answer, in the audit log of the policy the asking session runs
 * under (as `agentgate join` records a join): 0, or -1 when it cannot be
 * written there, and then no answer is given.
 */
static int
audit_answer(const struct ag_approval_req *req, const struct ag_approval_answer *ans)
{
	struct find_live f = { .session = req->session };
	struct ag_config *cfg = NULL;
	struct ag_audit_info info;
	struct ag_audit *a = NULL;
	struct passwd *pw = getpwuid(getuid());
	struct ag_err err;
	struct stat st;
	char *real = NULL, who[64];
	int rc = -1;

	ag_err_clear(&err);
	snprintf(who, sizeof(who), "%s", pw != NULL ? pw->pw_name : "?");
	if (req->session[0] == '\0' || ag_live_list(find_live, &f, &err) < 0 || f.found != 1 ||
	    f.e.policy[0] == '\0') {
		ag_err_set(&err, "the session that asked (%.40s) is not among the live sessions, "
		    "or records no policy file", req->session[0] ? req->session : "-");
		goto out;
	}
	if (ag_safe_path(f.e.policy, 0, &st, &real, &err) < 0 ||
	    (cfg = ag_config_load(real, AG_CONFIG_GATEWAY_ONLY, &err)) == NULL)
		goto out;
	ag_live_audit_info(&f.e, &info);
	info.token = NULL;
	info.mode = "admin";
	if ((a = ag_audit_open(&cfg->gw.audit, &info, &err)) == NULL)
		goto out;
	if (ag_audit_approval_answer(a, req->session, req->id, ans->approved,
	    ag_approval_scope_name(ans->scope), ans->scope == AG_SCOPE_FOR ? ans->until : 0,
	    who, ans->approved ? NULL : ans->reason, &err) < 0 && ag_audit_required(a))
		goto out;
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "agentgate: request %s is not answered: the answer cannot be "
		    "audited: %s\n", req->id, err.msg);
	ag_audit_close(a);
	ag_config_free(cfg);
	free(real);
	return rc;
}

static int
give(struct ag_approval_req *req, struct ag_approval_answer *ans)
{
	struct ag_err err;

	if (audit_answer(req, ans) < 0)
		return 1;
	ag_err_clear(&err);
	if (ag_approval_answer(req, ans, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	return 0;
}

int
ag_cmd_approve(int argc, char **argv)
{
	struct ag_approval_answer ans;
	struct ag_approval_req req;
	struct ag_err err;
	const char *id = NULL, *dur = NULL;
	long secs = 0;
	int i, rc;

	memset(&ans, 0, sizeof(ans));
	ans.approved = 1;
	ag_err_clear(&err);
	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			const char *arg = strcmp(argv[i], "--for") == 0 ? argv[i + 1] : NULL;

			if (ag_approval_parse_scope(argv[i], arg, &ans.scope, &secs, &err) < 0) {
				ag_err_print(stderr, &err);
				return 2;
			}
			if (arg != NULL) {
				dur = arg;
				i++;
			}
		} else if (id == NULL)
			id = argv[i];
		else
			id = "";
	}
	if (id == NULL || id[0] == '\0') {
		fprintf(stderr, "usage: agentgate approve ID [--once | --session | --for DURATION]\n");
		return 2;
	}
	if ((rc = answerable(id, &req)) != 0)
		return rc;
	if (ans.scope == AG_SCOPE_FOR)
		ans.until = (long long)time(NULL) + secs;
	if ((rc = give(&req, &ans)) != 0)
		return rc;
	printf("approved request %s (%s%s%s): ", id, ag_approval_scope_name(ans.scope),
	    dur != NULL ? " " : "", dur != NULL ? dur : "");
	put_safe(req.command);
	putchar('\n');
	return 0;
}

int
ag_cmd_refuse(int argc, char **argv)
{
	struct ag_approval_answer ans;
	struct ag_approval_req req;
	const char *id = NULL, *reason = NULL;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reason") == 0 && i + 1 < argc)
			reason = argv[++i];
		else if (argv[i][0] != '-' && id == NULL)
			id = argv[i];
		else
			id = "";
	}
	if (id == NULL || id[0] == '\0' || reason == NULL || reason[0] == '\0') {
		fprintf(stderr, "usage: agentgate refuse ID --reason TEXT\n");
		return 2;
	}
	if ((rc = answerable(id, &req)) != 0)
		return rc;
	memset(&ans, 0, sizeof(ans));
	snprintf(ans.reason, sizeof(ans.reason), "%s", reason);
	if ((rc = give(&req, &ans)) != 0)
		return rc;
	printf("refused request %s: ", id);
	put_safe(req.command);
	putchar('\n');
	return 0;
}
