/* repl.c - the session core and the read loop; see repl.h */
#include "agconfig.h"

#include <errno.h>
#include <histedit.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "policy/policy.h"
#include "record/recording.h"
#include "policy/execpolicy.h"
#include "front/repl.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "parse/shparse.h"
#include "common/strbuf.h"

#ifndef AG_BASH
#define AG_BASH "/bin/bash"
#endif

#define REPL_HISTORY_SIZE	1000

/* ---- the recording -------------------------------------------------------------- */

/*
 * The prompt and the command line as the terminal showed them (libedit
 * wrote them, not a command), so that a replay reads like the session.
 */
static void
rec_command_line(struct ag_repl *r, const char *line, size_t len)
{
	struct ag_strbuf sb;
	struct ag_err err;
	char cwd[4096 + 2];
	size_t i;

	if (r->rec == NULL || !r->tty)
		return;
	ag_strbuf_init(&sb, AG_REPL_MAX_COMMAND * 2 + sizeof(cwd) + 512);
	if (ag_strbuf_printf(&sb, "%s@%s:%s$ ", r->sess->user, r->sess->host,
	    ag_session_tilde(r->sess, r->sess->cwd, cwd, sizeof(cwd))) < 0)
		goto out;
	for (i = 0; i < len; i++) {
		int rc = line[i] != '\n' ? ag_strbuf_addch(&sb, line[i]) :
		    ag_strbuf_addstr(&sb, i + 1 < len ? "\r\n> " : "\r\n");

		if (rc < 0)
			goto out;
	}
	if ((len == 0 || line[len - 1] != '\n') && ag_strbuf_addstr(&sb, "\r\n") < 0)
		goto out;
	ag_err_clear(&err);
	if (ag_rec_output(r->rec, sb.data, sb.len, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);	/* the relay finds it dead and reports */
out:
	ag_strbuf_free(&sb);
}

/*
 * The recording could not be written: audit.required decides whether the
 * session may go on without one.
 */
static void
recording_failed(struct ag_repl *r, const char *why, int *end_session)
{
	int required = r->audit != NULL && ag_audit_required(r->audit);
	struct ag_err err;

	snprintf(r->rec_error, sizeof(r->rec_error), "%s", why);
	fflush(stdout);
	if (required) {
		fprintf(stderr, "agentgate: %s; the session is recorded as the audit log is "
		    "required, so it ends here\n", why);
		*end_session = 1;
	} else
		fprintf(stderr, "agentgate: %s; the session goes on without a recording\n", why);
	ag_log(LOG_ERR, "session recording failed: %s", why);
	if (r->audit != NULL) {
		ag_err_clear(&err);
		(void)ag_audit_set_recording(r->audit, ag_rec_path(r->rec), why);
		if (ag_audit_event(r->audit, "recording", ag_rec_path(r->rec),
		    required ? "end" : "continue", why, &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
	}
	(void)ag_rec_close(r->rec, NULL);
	r->rec = NULL;
}

/* ---- the kernel sandbox ------------------------------------------------------- */

int
ag_repl_sandbox(struct ag_repl *r, struct ag_err *err)
{
	struct ag_session *s = r->sess;
	const char *note;

	if (r->cfg == NULL)
		return 0;
	if (r->sandbox != NULL && ag_sandbox_matches(r->sandbox, r->profile, s->home, s->cwd, s->env))
		return ag_sandbox_refresh(r->sandbox, err);
	ag_sandbox_free(r->sandbox);
	if ((r->sandbox = ag_sandbox_prepare(r->cfg, r->profile, s->home, s->cwd, s->env, err)) == NULL)
		return -1;
	if ((note = ag_sandbox_note(r->sandbox)) != NULL && !r->sandbox_noted) {
		struct ag_err e;

		r->sandbox_noted = 1;
		ag_log(LOG_WARNING, "sandbox best_effort: %s", note);
		if (r->audit != NULL && ag_audit_event(r->audit, "sandbox", "best_effort", "allow",
		    note, &e) < 0)
			ag_log(LOG_ERR, "%s", e.msg);
	}
	return 0;
}

/* ---- one command ----------------------------------------------------------- */

/*
 * Execs the supervisor refused inside the command's tree: one audit record
 * each, and a line to the caller, since the refused program's own message
 * ("Permission denied") does not say why.
 */
static void
exec_denials(struct ag_repl *r, const struct ag_audit_cmd *c, const struct ag_run_result *res)
{
	struct ag_err err;
	size_t i;

	for (i = 0; i < res->ndenials; i++) {
		const struct ag_exec_denial *d = &res->denials[i];

		fprintf(stderr, "agentgate: %s (an exec inside the command: %s)\n",
		    d->reason ? d->reason : "denied", d->path ? d->path : "?");
		if (r->audit != NULL && ag_audit_exec_denied(r->audit, c->command, c->command_len,
		    d->path, d->argv, d->argc, d->reason, d->rule, &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
	}
	fflush(stderr);
}

static void
record(struct ag_repl *r, struct ag_audit_cmd *c)
{
	struct ag_err err;

	if (r->audit == NULL)
		return;
	ag_err_clear(&err);
	if (ag_audit_command(r->audit, c, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
}

static void
refuse(struct ag_repl *r, struct ag_audit_cmd *c, const char *decision,
    const char *reason, const char *rule)
{
	fflush(stdout);
	fprintf(stderr, "agentgate: %s\n", reason);
	fflush(stderr);
	c->decision = decision;
	c->reason = reason;
	c->rule = rule;
	record(r, c);
	r->sess->last_status = AG_STATUS_DENIED;
}

int
ag_repl_command(struct ag_repl *r, const char *line, size_t len, int *end_session)
{
	struct ag_session *s = r->sess;
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	struct ag_sh_node *tree = NULL;
	struct ag_audit_cmd c;
	struct ag_err err;
	char *cwd_before = NULL;
	int status = AG_STATUS_DENIED;
	enum ag_sh_status ps;

	*end_session = 0;
	memset(&d, 0, sizeof(d));
	memset(&c, 0, sizeof(c));
	ag_err_clear(&err);
	if ((cwd_before = strdup(s->cwd)) == NULL) {
		fprintf(stderr, "agentgate: out of memory\n");
		return AG_STATUS_DENIED;
	}
	c.command = line;
	c.command_len = len;
	if (len > 0 && line[len - 1] == '\n')	/* a REPL line's own newline */
		c.command_len--;
	c.cwd = cwd_before;
	r->ncommands++;

	ctx.profile = r->profile;
	ctx.cwd = s->cwd;
	ctx.home = s->home;
	ctx.user = s->user;
	ctx.env = s->env;
	ps = ag_sh_parse(line, len, &tree, &err);
	if (ps == AG_SH_OK) {
		if (tree->nkids == 0) {		/* empty or only a comment */
			r->ncommands--;
			status = s->last_status;
			goto out;
		}
		if (ag_policy_decide(&ctx, tree, &d) < 0)
			d.verdict = AG_DENY;
	} else if (ag_policy_check(&ctx, line, len, &d) < 0 || d.verdict == AG_ALLOW) {
		/* the parser refused it; whatever the policy said, it does not run */
		d.verdict = AG_DENY;
		if (d.reason[0] == '\0' || strcmp(d.reason, "allowed") == 0)
			snprintf(d.reason, sizeof(d.reason), "syntax error: %s", err.msg);
		snprintf(d.rule, sizeof(d.rule), "parse");
	}

	if (d.verdict == AG_DENY) {
		refuse(r, &c, "deny", d.reason[0] ? d.reason : "refused by policy", d.rule);
		goto out;
	}
	if (d.verdict == AG_ASK) {
		char why[sizeof(d.reason) + 160];

		snprintf(why, sizeof(why), "%s (this needs a validator's second opinion, which "
		    "this version of agentgate does not ask for yet; refused)", d.reason);
		refuse(r, &c, "deny", why, d.rule[0] ? d.rule : "unknown:ask");
		goto out;
	}

	/* allowed: the record of the decision must be writable before anything runs */
	if (r->audit != NULL && ag_audit_required(r->audit) &&
	    ag_audit_ready(r->audit, &err) < 0) {
		char why[sizeof(err.msg) + 64];

		snprintf(why, sizeof(why), "%s; the audit log is required, so the command "
		    "was not run", err.msg);
		refuse(r, &c, "deny", why, "audit:required");
		goto out;
	}
	c.decision = "allow";
	c.reason = d.reason[0] ? d.reason : "allowed";
	c.rule = d.rule[0] ? d.rule : NULL;
	c.ran = 1;

	if (ag_session_is_bare_exit(s, tree, &status)) {
		*end_session = 1;
		c.exit_status = status;
		c.cwd_after = s->cwd;
		record(r, &c);
		goto out;
	}
	fflush(stdout);
	if (ag_session_try_builtin(s, tree, stdout, stderr, &status)) {
		c.exit_status = status;
		c.cwd_after = s->cwd;
		record(r, &c);
		goto out;
	}
	{
		struct ag_run_opts o;
		struct ag_run_result res;
		struct ag_execpolicy ep;

		if (ag_repl_sandbox(r, &err) < 0) {
			char why[sizeof(err.msg) + 64];

			snprintf(why, sizeof(why), "%s", err.msg);
			refuse(r, &c, "deny", why, "sandbox");
			status = AG_STATUS_DENIED;
			goto out;
		}
		memset(&o, 0, sizeof(o));
		o.sandbox = r->sandbox;
		o.runner = r->cfg != NULL && r->cfg->gw.runner != NULL ? r->cfg->gw.runner : AG_BASH;
		o.cmd = line;
		o.cmdlen = len;
		o.cwd = s->cwd;
		o.env = s->env;
		o.last_status = s->last_status;
		o.in_fd = r->cmd_in;
		o.out_fd = STDOUT_FILENO;
		o.err_fd = STDERR_FILENO;
		/* on a terminal (REPL, or exec with ssh -t) the command gets the
		 * foreground, or reading it would stop the command with SIGTTIN */
		o.tty_fd = isatty(r->cmd_in) ? r->cmd_in : -1;
		o.timeout = r->profile->limits.timeout;
		o.max_output = r->profile->limits.max_output;
		if (r->pty) {
			/* a terminal of its own (pty.h); ours only relays */
			o.pty = 1;
			o.tty_fd = -1;
			o.in_fd = STDIN_FILENO;
			o.rec = r->rec;
			o.rec_required = r->audit != NULL && ag_audit_required(r->audit);
			rec_command_line(r, line, len);
		}
		o.no_capture = !ag_session_needs_capture(tree);
		/* developer tier: the deny rules hold at every exec of the tree */
		ep.profile = r->profile;
		ep.home = s->home;
		ep.env = s->env;
		if (r->profile->tier == AG_TIER_DEVELOPER && ag_sandbox_active(r->sandbox)) {
			o.exec_judge = ag_execpolicy_guard_judge;
			o.exec_judge_ctx = &ep;
		}
		if (ag_run(&o, &res, &err) < 0) {
			char why[sizeof(err.msg) + 64];

			snprintf(why, sizeof(why), "cannot start the command: %s", err.msg);
			c.ran = 0;
			refuse(r, &c, "allow", why, c.rule);
			status = AG_STATUS_DENIED;
			goto out;
		}
		status = res.status;
		s->last_status = status;
		if (res.capture_ok && ag_session_apply_capture(s, res.capture, res.capture_len,
		    &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
		else if (!res.capture_ok && !o.no_capture)
			ag_log(LOG_DEBUG, "no complete environment capture; state unchanged");
		exec_denials(r, &c, &res);
		c.exit_status = status;
		c.signal = res.signal;
		c.duration_ms = res.duration_ms;
		c.bytes_out = res.bytes_out;
		c.truncated = res.truncated;
		c.cwd_after = s->cwd;
		record(r, &c);
		if (res.client_gone || res.terminated)
			*end_session = 1;
		if (res.unread_len > 0 && res.unread_len <= sizeof(r->unread)) {
			memcpy(r->unread, res.unread, res.unread_len);
			r->unread_len = res.unread_len;
		}
		/* as bash does after ^C: the prompt starts on a line of its own */
		if (o.pty && res.signal == SIGINT && !res.client_gone)
			fputs("\n", stdout);
		if (res.rec_failed && r->rec != NULL)
			recording_failed(r, res.rec_error, end_session);
		ag_run_result_free(&res);
	}
out:
	s->last_status = status;
	ag_decision_free(&d);
	ag_sh_free(tree);
	free(cwd_before);
	return status;
}

/* ---- reading without a terminal ----------------------------------------- */

/*
 * Whether input is complete is judged without the line's own newline: the
 * parser then reports a trailing backslash as a continuation, which is how
 * bash reads a script line by line.
 */
static size_t
parse_len(const struct ag_strbuf *acc)
{
	return acc->len > 0 && acc->data[acc->len - 1] == '\n' ? acc->len - 1 : acc->len;
}

struct reader {
	char	buf[65536];
	size_t	len;
	int	eof;
};

/* RD_TOOLONG: the rest of the line is still unread; RD_TOOLONG_END: the
 * over-long line has been consumed up to and including its newline. */
enum rd { RD_LINE, RD_EOF, RD_IDLE, RD_HANGUP, RD_TOOLONG, RD_TOOLONG_END };

/*
 * Append the next line (with its newline, if any) to acc.  Waits at most
 * idle seconds (0 = forever) for input.
 */
static enum rd
read_line(struct reader *rd, struct ag_strbuf *acc, long idle)
{
	for (;;) {
		char *nl = memchr(rd->buf, '\n', rd->len);
		size_t take = nl != NULL ? (size_t)(nl - rd->buf) + 1 : rd->len;
		struct pollfd pf[2];
		ssize_t n;
		int pr;

		if (nl != NULL || (rd->eof && rd->len > 0)) {
			int over = ag_strbuf_append(acc, rd->buf, take) < 0;

			memmove(rd->buf, rd->buf + take, rd->len - take);
			rd->len -= take;
			return over ? RD_TOOLONG_END : RD_LINE;
		}
		if (rd->eof)
			return RD_EOF;
		if (rd->len == sizeof(rd->buf)) {	/* a long line: move it along */
			if (ag_strbuf_append(acc, rd->buf, rd->len) < 0) {
				rd->len = 0;
				return RD_TOOLONG;
			}
			rd->len = 0;
		}
		if (ag_runner_terminating())
			return RD_HANGUP;
		pf[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = ag_runner_signal_fd(), .events = POLLIN };
		pr = poll(pf, 2, idle > 0 ? (int)(idle * 1000) : -1);
		if (pr < 0 && errno != EINTR)
			return RD_EOF;
		if (pr == 0)
			return RD_IDLE;
		if (pr < 0 || (pf[1].revents & POLLIN)) {
			ag_runner_drain_signal_fd();
			continue;
		}
		n = read(STDIN_FILENO, rd->buf + rd->len, sizeof(rd->buf) - rd->len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			rd->eof = 1;
		else
			rd->len += (size_t)n;
	}
}

/* Skip the rest of an over-long command: everything up to the next newline. */
static void
skip_rest_of_line(struct reader *rd)
{
	struct ag_strbuf junk;

	ag_strbuf_init(&junk, sizeof(rd->buf));
	for (;;) {
		enum rd x;

		ag_strbuf_reset(&junk);
		x = read_line(rd, &junk, 0);
		if (x != RD_TOOLONG)
			break;		/* the newline (or EOF) was reached */
	}
	ag_strbuf_free(&junk);
}

static int
loop_plain(struct ag_repl *r)
{
	static struct reader rd;
	struct ag_strbuf acc;
	long idle = r->profile->limits.idle_timeout;
	int end = 0;

	ag_strbuf_init(&acc, AG_REPL_MAX_COMMAND);
	while (!end) {
		enum rd x = read_line(&rd, &acc, idle);
		struct ag_sh_node *tree = NULL;
		struct ag_err err;
		enum ag_sh_status ps;

		if (x == RD_IDLE) {
			fprintf(stderr, "agentgate: no input for %ld s; closing the session\n", idle);
			break;
		}
		if (x == RD_HANGUP)
			break;
		if (x == RD_TOOLONG || x == RD_TOOLONG_END) {
			fprintf(stderr, "agentgate: command longer than %d bytes; discarded\n",
			    AG_REPL_MAX_COMMAND);
			r->sess->last_status = AG_STATUS_DENIED;
			ag_strbuf_reset(&acc);
			if (x == RD_TOOLONG)
				skip_rest_of_line(&rd);
			continue;
		}
		if (x == RD_EOF && acc.len == 0)
			break;
		ag_err_clear(&err);
		ps = ag_sh_parse(acc.data, parse_len(&acc), &tree, &err);
		ag_sh_free(tree);
		if (ps == AG_SH_INCOMPLETE && x != RD_EOF)
			continue;	/* needs the next line */
		(void)ag_repl_command(r, acc.data, acc.len, &end);
		ag_strbuf_reset(&acc);
		if (x == RD_EOF)
			break;
		if (ag_runner_terminating())
			break;
	}
	ag_strbuf_free(&acc);
	return r->sess->last_status;
}

/* ---- reading from a terminal -------------------------------------------- */

struct tty_state {
	struct ag_repl	*r;
	int		 continuation;
	char		 prompt[4096 + 512];
};

static char *
prompt_fn(EditLine *el)
{
	struct tty_state *ts = NULL;
	char cwd[4096 + 2];

	el_get(el, EL_CLIENTDATA, &ts);
	if (ts == NULL)
		return (char *)(uintptr_t)"$ ";
	if (ts->continuation)
		snprintf(ts->prompt, sizeof(ts->prompt), "> ");
	else
		snprintf(ts->prompt, sizeof(ts->prompt), "%s@%s:%s$ ", ts->r->sess->user,
		    ts->r->sess->host, ag_session_tilde(ts->r->sess, ts->r->sess->cwd, cwd,
		    sizeof(cwd)));
	return ts->prompt;
}

static int
loop_tty(struct ag_repl *r)
{
	struct tty_state ts;
	struct ag_strbuf acc;
	EditLine *el;
	History *hist;
	HistEvent ev;
	long idle = r->profile->limits.idle_timeout;
	int end = 0;

	memset(&ts, 0, sizeof(ts));
	ts.r = r;
	/* no el_source(): nothing is read from the agent's ~/.editrc */
	if ((el = el_init("agentgate", stdin, stdout, stderr)) == NULL)
		return loop_plain(r);
	if ((hist = history_init()) == NULL) {
		el_end(el);
		return loop_plain(r);
	}
	history(hist, &ev, H_SETSIZE, REPL_HISTORY_SIZE);	/* in memory only, never saved */
	el_set(el, EL_CLIENTDATA, &ts);
	el_set(el, EL_PROMPT, prompt_fn);
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_HIST, history, hist);
	el_set(el, EL_SIGNAL, 1);
	ag_strbuf_init(&acc, AG_REPL_MAX_COMMAND);

	while (!end && !ag_runner_terminating()) {
		const char *line;
		int count = 0;
		struct ag_sh_node *tree = NULL;
		struct ag_err err;
		enum ag_sh_status ps;

		ts.continuation = acc.len > 0;
		if (r->unread_len > 0) {
			/* typed while the last command ended: as if typed at this prompt */
			char keys[sizeof(r->unread) + 1];

			memcpy(keys, r->unread, r->unread_len);
			keys[r->unread_len] = '\0';
			r->unread_len = 0;
			el_push(el, keys);
		}
		if (idle > 0)
			alarm((unsigned)idle);
		(void)ag_runner_take_alarm();
		errno = 0;
		line = el_gets(el, &count);
		alarm(0);
		if (ag_runner_take_alarm()) {
			fprintf(stderr, "\nagentgate: no input for %ld s; closing the session\n",
			    idle);
			break;
		}
		if (line == NULL || count <= 0) {
			if (errno == EINTR && !ag_runner_terminating()) {
				/* ^C: drop what was typed, as a shell does */
				fputc('\n', stdout);
				ag_strbuf_reset(&acc);
				continue;
			}
			if (acc.len == 0) {
				fputs("exit\n", stdout);
				break;
			}
			line = "";	/* EOF inside a continuation: run what we have */
			count = 0;
		}
		if (ag_strbuf_append(&acc, line, (size_t)count) < 0) {
			fprintf(stderr, "agentgate: command longer than %d bytes; discarded\n",
			    AG_REPL_MAX_COMMAND);
			ag_strbuf_reset(&acc);
			r->sess->last_status = AG_STATUS_DENIED;
			continue;
		}
		if (count > 0) {
			ag_err_clear(&err);
			ps = ag_sh_parse(acc.data, parse_len(&acc), &tree, &err);
			ag_sh_free(tree);
			if (ps == AG_SH_INCOMPLETE)
				continue;
		}
		{
			/* history gets the whole command, without the final newline */
			size_t hl = acc.len;
			char *h;

			while (hl > 0 && acc.data[hl - 1] == '\n')
				hl--;
			if (hl > 0 && (h = strndup(acc.data, hl)) != NULL) {
				history(hist, &ev, H_ENTER, h);
				free(h);
			}
		}
		(void)ag_repl_command(r, acc.data, acc.len, &end);
		ag_strbuf_reset(&acc);
	}
	ag_strbuf_free(&acc);
	history_end(hist);
	el_end(el);
	return r->sess->last_status;
}

int
ag_repl_loop(struct ag_repl *r)
{
	return r->tty ? loop_tty(r) : loop_plain(r);
}
