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
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/err.h"
#include "record/approvals.h"

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
 * as the request file says) goes to a person's terminal: control
 * characters shown as \xNN, never sent to the terminal as they are.
 */
static void
put_safe(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == '\\')
			printf("\\x%02x", ch);
		else
			putchar(ch);
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

static int
show(const struct ag_approval_req *r, void *arg)
{
	char since[32], until[32];

	(void)arg;
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
	struct ag_err err;
	int n;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: agentgate approvals\n");
		return 2;
	}
	ag_err_clear(&err);
	if ((n = ag_approval_list(show, NULL, &err)) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (n == 0)
		printf("no line waits for approval\n");
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
	return 0;
}

static int
give(struct ag_approval_req *req, struct ag_approval_answer *ans)
{
	struct ag_err err;

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
