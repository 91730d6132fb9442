/* transfer.c - sftp under the sandbox; see transfer.h */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/audit.h"
#include "common/log.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "exec/session.h"
#include "exec/transfer.h"

static int
refuse(struct ag_repl *r, struct ag_audit_cmd *c, const char *why)
{
	struct ag_err err;

	fprintf(stderr, "agentgate: %s\n", why);
	fflush(stderr);
	c->decision = "deny";
	c->reason = why;
	if (r->audit != NULL && ag_audit_command(r->audit, c, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	return AG_STATUS_DENIED;
}

/*
 * Run an accepted transfer program (cmd: "exec PROGRAM ...") in the
 * session's sandbox with the client's stdio, and audit it with its result.
 * No timeout and no output cap: a cut stream would corrupt the protocol.
 */
static int
run_confined(struct ag_repl *r, struct ag_audit_cmd *c, const char *kind, const char *cmd,
    const char *reason)
{
	struct ag_run_opts o;
	struct ag_run_result res;
	struct ag_err err;
	char why[AG_ERR_MSG_MAX + 128];

	ag_err_clear(&err);
	if (r->audit != NULL && ag_audit_required(r->audit) && ag_audit_ready(r->audit, &err) < 0) {
		snprintf(why, sizeof(why), "%s; the audit log is required, so %s was not started",
		    err.msg, kind);
		c->rule = "audit:required";
		return refuse(r, c, why);
	}
	if (ag_repl_sandbox(r, &err) < 0) {
		snprintf(why, sizeof(why), "%s", err.msg);
		c->rule = "sandbox";
		return refuse(r, c, why);
	}
	memset(&o, 0, sizeof(o));
	o.runner = r->cfg->gw.runner != NULL ? r->cfg->gw.runner : "/bin/bash";
	o.cmd = cmd;
	o.cmdlen = strlen(cmd);
	o.cwd = r->sess->cwd;
	o.env = r->sess->env;
	o.in_fd = STDIN_FILENO;
	o.out_fd = STDOUT_FILENO;
	o.err_fd = STDERR_FILENO;
	o.tty_fd = -1;
	o.no_capture = 1;
	o.sandbox = r->sandbox;
	c->decision = "allow";
	c->reason = reason;
	if (ag_run(&o, &res, &err) < 0) {
		snprintf(why, sizeof(why), "cannot start %s: %s", kind, err.msg);
		return refuse(r, c, why);
	}
	c->ran = 1;
	c->exit_status = res.status;
	c->signal = res.signal;
	c->duration_ms = res.duration_ms;
	c->bytes_out = res.bytes_out;
	c->cwd_after = r->sess->cwd;
	if (r->audit != NULL && ag_audit_command(r->audit, c, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	ag_run_result_free(&res);
	return c->exit_status;
}

int
ag_transfer_sftp(struct ag_repl *r, const char *request)
{
	const struct ag_profile *p = r->profile;
	const char *server = ag_sandbox_sftp_server();
	struct ag_audit_cmd c;
	char cmd[512], why[256];

	memset(&c, 0, sizeof(c));
	c.command = request;
	c.command_len = strlen(request);
	c.cwd = r->sess->cwd;
	c.rule = "file_transfer";
	r->ncommands++;
	if (p->sftp == AG_TRANSFER_OFF) {
		snprintf(why, sizeof(why), "sftp is off for profile %s (file_transfer.sftp); "
		    "use commands such as cat instead", p->name);
		return refuse(r, &c, why);
	}
	if (server == NULL)
		return refuse(r, &c, "sftp: no sftp-server program on this host");
	/* exec: the runner shell goes away, the server speaks on its stdio */
	snprintf(cmd, sizeof(cmd), "exec %s%s", server, p->sftp == AG_TRANSFER_READ ? " -R" : "");
	return run_confined(r, &c, "sftp-server", cmd,
	    p->sftp == AG_TRANSFER_READ ? "sftp read-only, confined" : "sftp, confined");
}

/*
 * Legacy scp (`scp -t|-f ...`) and `rsync --server ...` arrive as a command
 * line for a shell.  Run only when the profile allows the kind, and only a
 * plain word list (no quoting, expansion or operators) so that nothing but
 * that one program can start; the sandbox then confines it like sftp.
 */
static int
plain_words(const char *s)
{
	for (; *s != '\0'; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		    " ._/+=:,@%-", *s) == NULL)
			return 0;
	return 1;
}

int
ag_transfer_legacy(struct ag_repl *r, const char *kind, const char *request)
{
	const struct ag_profile *p = r->profile;
	int allowed = strcmp(kind, "scp") == 0 ? p->scp_legacy : strcmp(kind, "rsync") == 0 ? p->rsync : 0;
	struct ag_audit_cmd c;
	char why[256], *cmd;
	int status;

	memset(&c, 0, sizeof(c));
	c.command = request;
	c.command_len = strlen(request);
	c.cwd = r->sess->cwd;
	c.rule = "file_transfer";
	r->ncommands++;
	if (!allowed) {
		snprintf(why, sizeof(why), "%s file transfer is off for profile %s "
		    "(file_transfer.%s); use sftp or commands such as cat instead", kind, p->name, kind);
		return refuse(r, &c, why);
	}
	if (!plain_words(request)) {
		snprintf(why, sizeof(why), "%s request refused: only plain words are accepted "
		    "(no quotes, variables or operators)", kind);
		return refuse(r, &c, why);
	}
	if (asprintf(&cmd, "exec %s", request) < 0)
		return refuse(r, &c, "out of memory");
	status = run_confined(r, &c, kind, cmd, "file transfer, confined");
	free(cmd);
	return status;
}
