/* terminal.c - the PTY handlers and the session recording; see terminal.h */
#include "agconfig.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "core/terminal.h"
#include "exec/pty.h"
#include "record/audit.h"
#include "record/recording.h"

int
ag_core_term_start(struct ag_core *core)
{
	const struct ag_config *cfg = core->cfg;
	struct ag_rec_info ri;
	struct winsize ws;
	struct ag_err err;
	int required = core->audit != NULL && ag_audit_required(core->audit);

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
	ri.session = core->audit != NULL ? ag_audit_session_id(core->audit) : NULL;
	if (core->audit != NULL) {
		const char *client;

		ag_audit_who(core->audit, &ri.user, &ri.identity, &client);
	}
	ri.width = ws.ws_col;
	ri.height = ws.ws_row;
	ri.term = ag_session_getenv(&core->sess, "TERM");
	ri.shell = core->sess.shell;
	ri.input = cfg->gw.recordings_input;
	if ((core->rec = ag_rec_open(&ri, &err)) != NULL) {
		if (core->audit != NULL)
			(void)ag_audit_set_recording(core->audit, ag_rec_path(core->rec), NULL);
		return 0;
	}
	snprintf(core->rec_error, sizeof(core->rec_error), "%s", err.msg);
	ag_log(LOG_ERR, "session recording: %s", err.msg);
	if (core->audit != NULL) {
		(void)ag_audit_set_recording(core->audit, NULL, err.msg);
		(void)ag_audit_event(core->audit, "recording", cfg->gw.recordings,
		    required ? "end" : "continue", err.msg, NULL);
	}
	if (required) {
		fprintf(stderr, "agentgate: %s; sessions are recorded and the audit log is "
		    "required, so this one cannot start\n", err.msg);
		return -1;
	}
	fprintf(stderr, "agentgate: %s; the session is not recorded\n", err.msg);
	return 0;
}

/* A line of the gateway's into the recording: shown, and marked. */
static void
term_write(struct ag_core *core, const struct ag_strbuf *shown, const char *mark, size_t marklen)
{
	struct ag_err err;

	ag_err_clear(&err);
	if (ag_rec_output(core->rec, shown->data, shown->len, &err) < 0 ||
	    ag_rec_marker(core->rec, mark, marklen, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);	/* the relay finds it dead and reports */
}

/*
 * As the line editor shows it: a control character as ^X, never the
 * character itself for a player's terminal to act on; a newline of a
 * continued line as the continuation prompt.
 */
static int
add_shown(struct ag_strbuf *sb, const char *s, size_t n, int last)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\n')
			rc = ag_strbuf_addstr(sb, last && i + 1 == n ? "\r\n" : "\r\n> ");
		else if (ch < 0x20 || ch == 0x7f)
			rc = ag_strbuf_printf(sb, "^%c", ch == 0x7f ? '?' : ch + '@');
		else
			rc = ag_strbuf_addch(sb, s[i]);
	}
	return rc;
}

void
ag_core_term_echo(struct ag_core *core, const char *line, size_t len)
{
	struct ag_session *s = &core->sess;
	struct ag_strbuf sb, prompt, m;
	char cwd[PATH_MAX + 2];
	size_t body = len > 0 && line[len - 1] == '\n' ? len - 1 : len;

	if (core->rec == NULL || !core->tty)
		return;
	ag_strbuf_init(&sb, AG_CORE_MAX_COMMAND * 3 + sizeof(cwd) * 3 + 512);
	ag_strbuf_init(&prompt, sizeof(cwd) + 512);
	ag_strbuf_init(&m, AG_CORE_MAX_COMMAND + sizeof(cwd) + 512);
	/* the directory's name is the agent's to choose, control characters too */
	if (ag_strbuf_printf(&prompt, "%s@%s:%s$ ", s->user, s->host,
	    ag_session_tilde(s, s->cwd, cwd, sizeof(cwd))) == 0 &&
	    add_shown(&sb, prompt.data, prompt.len, 0) == 0 &&
	    add_shown(&sb, line, len, 1) == 0 &&
	    (body < len || ag_strbuf_addstr(&sb, "\r\n") == 0) &&
	    /* the marker: the prompt and the line exactly as received (the
	     * recording shows a marker safe) */
	    ag_strbuf_append(&m, prompt.data, prompt.len) == 0 &&
	    ag_strbuf_append(&m, line, body) == 0)
		term_write(core, &sb, m.data, m.len);
	ag_strbuf_free(&m);
	ag_strbuf_free(&prompt);
	ag_strbuf_free(&sb);
}

void
ag_core_term_refusal(struct ag_core *core, const char *reason)
{
	struct ag_strbuf sb, m;

	if (core->rec == NULL || !core->tty)
		return;
	ag_strbuf_init(&sb, 6 * AG_ERR_MSG_MAX + 4096);
	ag_strbuf_init(&m, 2 * AG_ERR_MSG_MAX + 4096);
	/* a reason quotes the command's words, whatever bytes they are */
	if (ag_strbuf_printf(&m, "agentgate: %s", reason) == 0 &&
	    add_shown(&sb, m.data, m.len, 0) == 0 && ag_strbuf_addstr(&sb, "\r\n") == 0)
		term_write(core, &sb, m.data, m.len);
	ag_strbuf_free(&m);
	ag_strbuf_free(&sb);
}

void
ag_core_term_failed(struct ag_core *core, const char *why, int *end_session)
{
	int required = core->audit != NULL && ag_audit_required(core->audit);
	struct ag_err err;

	snprintf(core->rec_error, sizeof(core->rec_error), "%s", why);
	fflush(stdout);
	if (required) {
		fprintf(stderr, "agentgate: %s; the session is recorded as the audit log is "
		    "required, so it ends here\n", why);
		*end_session = 1;
	} else
		fprintf(stderr, "agentgate: %s; the session goes on without a recording\n", why);
	ag_log(LOG_ERR, "session recording failed: %s", why);
	if (core->audit != NULL) {
		ag_err_clear(&err);
		(void)ag_audit_set_recording(core->audit, ag_rec_path(core->rec), why);
		if (ag_audit_event(core->audit, "recording", ag_rec_path(core->rec),
		    required ? "end" : "continue", why, &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
	}
	(void)ag_rec_close(core->rec, NULL);
	core->rec = NULL;
}

void
ag_core_term_end(struct ag_core *core)
{
	struct ag_err err;
	char path[PATH_MAX];

	if (core->rec == NULL)
		return;
	snprintf(path, sizeof(path), "%s", ag_rec_path(core->rec));
	ag_err_clear(&err);
	if (ag_rec_close(core->rec, &err) < 0) {
		ag_log(LOG_ERR, "%s", err.msg);
		if (core->audit != NULL)
			(void)ag_audit_set_recording(core->audit, path, err.msg);
	}
	core->rec = NULL;
}
