/* core.c - the session body every front end shares; see core.h */
#include "agconfig.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "record/audit.h"
#include "core/core.h"
#include "common/log.h"
#include "exec/pty.h"
#include "record/recording.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "exec/session.h"
#include "exec/transfer.h"

#define MAX_GROUPS	1024

/*
 * The caller's profile: --profile NAME (set by the administrator on the
 * ForceCommand line), else the profile of the identity PAM established
 * (AGENTGATE_PROFILE from pam_agentgate), else the `users:` map (the user
 * by name, then the first %group the user belongs to), else
 * gateway.default_profile, else none (refuse).
 */
const struct ag_profile *
ag_core_profile(const struct ag_config *cfg, const char *forced, const char *pam_profile,
    const struct passwd *pw, struct ag_err *err)
{
	gid_t groups[MAX_GROUPS];
	int ngroups = MAX_GROUPS;
	size_t i;

	if (forced != NULL) {
		const struct ag_profile *p = ag_config_profile(cfg, forced);

		if (p == NULL)
			ag_err_set(err, "--profile %s: no such profile in %s", forced, cfg->path);
		return p;
	}
	if (pam_profile != NULL) {
		const struct ag_profile *p = ag_config_profile(cfg, pam_profile);

		/* The module resolved it from the same file; a mismatch means
		 * the stack set AGENTGATE_PROFILE some other way: refuse. */
		if (p == NULL)
			ag_err_set(err, "PAM named profile '%s', which %s does not define",
			    pam_profile, cfg->path);
		return p;
	}
	for (i = 0; i < cfg->nusers; i++)
		if (!cfg->users[i].is_group && strcmp(cfg->users[i].name, pw->pw_name) == 0)
			return cfg->users[i].profile;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
		ngroups = 0;	/* more than MAX_GROUPS: only the user map and default apply */
	for (i = 0; i < cfg->nusers; i++) {
		struct group *gr;
		int j;

		if (!cfg->users[i].is_group || (gr = getgrnam(cfg->users[i].name)) == NULL)
			continue;
		for (j = 0; j < ngroups; j++)
			if (groups[j] == gr->gr_gid)
				return cfg->users[i].profile;
	}
	if (cfg->gw.default_profile != NULL)
		return cfg->gw.default_profile;
	ag_err_set(err, "no profile for user %s: not in `users:` and no "
	    "gateway.default_profile in %s", pw->pw_name, cfg->path);
	return NULL;
}

/*
 * File-transfer requests arrive as commands too (subsystem sftp under
 * ForceCommand, scp's remote end, rsync's server side); transfer.h runs
 * them confined, or refuses them, as the profile's file_transfer says.
 */
const char *
ag_core_transfer_kind(const char *cmd)
{
	char first[PATH_MAX];
	const char *p = cmd, *base;
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, " \t\n");
	if (n == 0 || n >= sizeof(first))
		return NULL;
	memcpy(first, p, n);
	first[n] = '\0';
	base = strrchr(first, '/') != NULL ? strrchr(first, '/') + 1 : first;
	if (strcmp(base, "sftp-server") == 0 || strcmp(first, "internal-sftp") == 0)
		return "sftp";
	if (strcmp(base, "scp") == 0) {
		const char *a = p + n;

		/* the remote end of scp is "scp [-options] -t|-f ..." */
		while (*a != '\0') {
			size_t wl;

			a += strspn(a, " \t");
			wl = strcspn(a, " \t");
			if (wl > 1 && a[0] == '-' && a[1] != '-' &&
			    (memchr(a, 't', wl) != NULL || memchr(a, 'f', wl) != NULL))
				return "scp";
			a += wl;
		}
	}
	if (strcmp(base, "rsync") == 0 && strstr(p + n, "--server") != NULL)
		return "rsync";
	return NULL;
}

/*
 * A session with a terminal: the SIGWINCH and crash handlers, and the
 * recording when gateway.recordings asks for one.  -1 when the session must
 * not start (a required recording that cannot be created; message printed).
 */
static int
start_pty(struct ag_repl *r, const struct ag_config *cfg, const struct ag_session *sess,
    struct ag_audit *audit)
{
	struct ag_rec_info ri;
	struct winsize ws;
	struct ag_err err;
	int required = ag_audit_required(audit);

	ag_err_clear(&err);
	if (ag_pty_init(&err) < 0) {
		ag_err_print(stderr, &err);
		return -1;
	}
	if (cfg->gw.recordings == NULL)
		return 0;
	memset(&ws, 0, sizeof(ws));
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0 || ws.ws_row == 0) {
		ws.ws_col = AG_PTY_DEFAULT_COLS;
		ws.ws_row = AG_PTY_DEFAULT_ROWS;
	}
	memset(&ri, 0, sizeof(ri));
	ri.dir = cfg->gw.recordings;
	ri.session = ag_audit_session_id(audit);
	ri.width = ws.ws_col;
	ri.height = ws.ws_row;
	ri.term = ag_session_getenv(sess, "TERM");
	ri.shell = sess->shell;
	ri.input = cfg->gw.recordings_input;
	if ((r->rec = ag_rec_open(&ri, &err)) != NULL) {
		(void)ag_audit_set_recording(audit, ag_rec_path(r->rec), NULL);
		return 0;
	}
	snprintf(r->rec_error, sizeof(r->rec_error), "%s", err.msg);
	ag_log(LOG_ERR, "session recording: %s", err.msg);
	(void)ag_audit_set_recording(audit, NULL, err.msg);
	(void)ag_audit_event(audit, "recording", cfg->gw.recordings,
	    required ? "end" : "continue", err.msg, NULL);
	if (required) {
		fprintf(stderr, "agentgate: %s; sessions are recorded and the audit log is "
		    "required, so this one cannot start\n", err.msg);
		return -1;
	}
	fprintf(stderr, "agentgate: %s; the session is not recorded\n", err.msg);
	return 0;
}

int
ag_core_serve(struct ag_repl *r, const char *cmd)
{
	struct ag_err err;
	int status = 1;

	ag_err_clear(&err);
	r->cmd_in = STDIN_FILENO;
	r->pty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (r->pty && start_pty(r, r->cfg, r->sess, r->audit) < 0)
		goto end;
	if (cmd != NULL) {
		const char *kind = ag_core_transfer_kind(cmd);
		int end;

		if (kind != NULL && strcmp(kind, "sftp") == 0)
			status = ag_transfer_sftp(r, cmd);
		else if (kind != NULL)
			status = ag_transfer_legacy(r, kind, cmd);
		else
			status = ag_repl_command(r, cmd, strlen(cmd), &end);
	} else {
		int devnull = -1;

		/*
		 * Without a terminal, stdin carries the next commands: a command
		 * must not eat them, so it reads /dev/null instead.
		 */
		if (!r->tty) {
			if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
				fprintf(stderr, "agentgate: cannot open /dev/null\n");
				goto end;
			}
			r->cmd_in = devnull;
		}
		status = ag_repl_loop(r);
		if (devnull >= 0)
			close(devnull);
		r->cmd_in = STDIN_FILENO;
	}
end:
	fflush(stdout);
	if (r->rec != NULL) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s", ag_rec_path(r->rec));
		if (ag_rec_close(r->rec, &err) < 0) {
			ag_log(LOG_ERR, "%s", err.msg);
			(void)ag_audit_set_recording(r->audit, path, err.msg);
		}
		r->rec = NULL;
	}
	ag_runner_reap_all();
	ag_sandbox_free(r->sandbox);
	r->sandbox = NULL;
	return status;
}
