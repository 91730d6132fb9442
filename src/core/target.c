/* target.c - the host a line is for, and the run stage there; see target.h */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/envv.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "core/approval.h"
#include "core/target.h"
#include "validate/validator.h"

#define TARGET_NAME_MAX	64
#define STATE_MAX	AG_RUN_CAPTURE_MAX
/* One argument of `sh -c` upstream: the kernel's MAX_ARG_STRLEN is 128 KiB. */
#define REQUEST_MAX	((size_t)120 * 1024)
#define REMOTE_BASH	"/bin/bash --noprofile --norc"

int
ag_target_word(const char *line, size_t len, char *name, size_t namesz, size_t *rest)
{
	size_t i = 0, n;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i >= len || line[i] != '@')
		return 0;
	for (n = i + 1; n < len && line[n] != ' ' && line[n] != '\t' && line[n] != '\n'; n++)
		;
	if (n - i - 1 == 0 || n - i - 1 >= namesz || n - i - 1 > TARGET_NAME_MAX)
		return -1;
	memcpy(name, line + i + 1, n - i - 1);
	name[n - i - 1] = '\0';
	for (i = 0; name[i] != '\0'; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || strchr("_-.", name[i]) != NULL))
			return -1;
	while (n < len && (line[n] == ' ' || line[n] == '\t'))
		n++;
	*rest = n;
	return 1;
}

/*
 * The first look at the host: a private directory for the captures, and
 * the environment its sshd gives a session, as the runner's trap writes
 * it (so the same reader takes it).
 */
static int
open_state(struct ag_target *t, struct ag_err *err)
{
	struct ag_strbuf req;
	char *script, *out = NULL, *nl;
	size_t outlen = 0, off, rlen;
	int status, rc = -1;

	if ((script = ag_runner_script(":", 1, 0, 1)) == NULL)
		return ag_err_set(err, "out of memory");
	ag_strbuf_init(&req, REQUEST_MAX);
	if (ag_strbuf_addstr(&req, "umask 077 && d=$(mktemp -d \"${TMPDIR:-/tmp}/agentgate."
	    "XXXXXXXXXX\") && printf '%s\\n' \"$d\" && exec " REMOTE_BASH " -c ") < 0 ||
	    ag_strbuf_squote_str(&req, script) < 0 || ag_strbuf_addstr(&req, " 3>&1") < 0) {
		ag_err_set(err, "out of memory");
		goto out;
	}
	if (ag_upconn_capture(t->conn, req.data, STATE_MAX, &out, &outlen, &status, err) < 0)
		goto out;
	if (status != 0 || (nl = memchr(out, '\n', outlen)) == NULL || out[0] != '/' ||
	    !ag_runner_capture_records(nl + 1, outlen - (size_t)(nl + 1 - out), &off, &rlen)) {
		ag_err_set(err, "upstream '%s': the first command there (mktemp, printf, %s) "
		    "failed (status %d): the account needs a POSIX shell and bash (a key "
		    "whose authorized_keys line runs a command= of its own needs "
		    "'verbatim: true')", t->up->name, "/bin/bash", status);
		goto out;
	}
	*nl = '\0';
	if ((t->statedir = strdup(out)) == NULL) {
		ag_err_set(err, "out of memory");
		goto out;
	}
	if (ag_session_init_remote(&t->sess, t->up->profile, t->up->user, t->up->name,
	    nl + 1 + off, rlen, err) < 0)
		goto out;
	{
		size_t i;

		for (i = 0; i < t->up->env_keys.n; i++)
			if (ag_session_setenv(&t->sess, t->up->env_keys.v[i],
			    t->up->env_vals.v[i]) < 0) {
				ag_session_free(&t->sess);
				ag_err_set(err, "out of memory");
				goto out;
			}
	}
	t->sess.last_status = 0;
	t->opened = 1;
	rc = 0;
out:
	free(script);
	free(out);
	ag_strbuf_free(&req);
	return rc;
}

/*
 * verbatim: nothing runs there but the lines themselves (the host's own
 * agentgate judges each), so nothing is learnt from it: every line starts
 * in the account's home, taken to be /home/USER, with a default PATH.
 */
static int
verbatim_state(struct ag_target *t, struct ag_err *err)
{
	char cap[512];
	int n = snprintf(cap, sizeof(cap), "HOME=/home/%s%cPWD=/home/%s%cPATH=%s%c",
	    t->up->user, '\0', t->up->user, '\0', AG_DEFAULT_PATH, '\0');

	if (n < 0 || (size_t)n >= sizeof(cap))
		return ag_err_set(err, "upstream '%s': user name too long", t->up->name);
	if (ag_session_init_remote(&t->sess, t->up->profile, t->up->user, t->up->name, cap,
	    (size_t)n, err) < 0)
		return -1;
	t->opened = 1;
	return 0;
}

static int
connect_target(struct ag_target *t, struct ag_err *err)
{
	if ((t->conn = ag_upconn_open(t->up, &t->info, err)) == NULL)
		return -1;
	if (!t->opened && t->up->verbatim && verbatim_state(t, err) < 0) {
		ag_upconn_close(t->conn);
		t->conn = NULL;
		return -1;
	}
	if (!t->opened && open_state(t, err) < 0) {
		ag_upconn_close(t->conn);
		t->conn = NULL;
		return -1;
	}
	return 0;
}

struct ag_target *
ag_target_get(struct ag_core *core, const char *name, int *refused, struct ag_err *err)
{
	const struct ag_upstream *u;
	struct ag_target *t;

	*refused = 0;
	if (!ag_profile_may_target(core->caller, name)) {
		*refused = 1;
		if (strcmp(name, AG_TARGET_LOCAL) == 0)
			ag_err_set(err, "profile '%s' may not run commands on this host (its "
			    "targets do not list 'local')", core->caller->name);
		else {
			char list[512];

			ag_profile_targets_text(core->caller, 1, list, sizeof(list));
			if (ag_config_upstream(core->cfg, name) == NULL)
				ag_err_set(err, "'@%s': no such target; profile '%s' may reach: %s",
				    name, core->caller->name, list[0] ? list : "this host only");
			else
				ag_err_set(err, "'@%s': profile '%s' may not reach upstream '%s' "
				    "(its targets: %s)", name, core->caller->name, name,
				    list[0] ? list : "this host only");
		}
		return NULL;
	}
	if (strcmp(name, AG_TARGET_LOCAL) == 0)
		return NULL;
	if ((u = ag_config_upstream(core->cfg, name)) == NULL || u->profile == NULL) {
		*refused = 1;
		ag_err_set(err, "'@%s': the policy has no such upstream", name);
		return NULL;
	}
	if (core->targets == NULL) {
		if ((core->targets = calloc(core->cfg->nupstreams, sizeof(*core->targets))) == NULL) {
			*refused = 1;
			ag_err_set(err, "out of memory");
			return NULL;
		}
		core->ntargets = core->cfg->nupstreams;
	}
	t = &core->targets[u - core->cfg->upstreams];
	t->up = u;
	if (t->conn == NULL && connect_target(t, err) < 0) {
		*refused = 1;
		return NULL;
	}
	/* a validator of its own profile's, made with the key read now */
	if (t->ask == NULL && ag_core_uses_validator(u->profile) &&
	    (t->ask = ag_ask_new(u->profile->validator, u->profile, 0, err)) == NULL) {
		*refused = 1;
		return NULL;
	}
	return t;
}

void
ag_target_enter(struct ag_core *core, struct ag_target *t, struct ag_target_saved *sv)
{
	sv->profile = core->profile;
	sv->sess = core->sess;
	sv->ask = core->ask;
	core->profile = t->up->profile;
	core->sess = t->sess;
	core->ask = t->ask;
}

void
ag_target_leave(struct ag_core *core, struct ag_target *t, struct ag_target_saved *sv)
{
	t->sess = core->sess;
	core->profile = sv->profile;
	core->sess = sv->sess;
	core->ask = sv->ask;
}

/*
 * The exec request: cd to the tracked cwd (home if it is gone, as a login
 * would), then bash with exactly the tracked environment and the upstream's
 * fixed one, running the runner script; its capture goes to the state file.
 */
static char *
build_request(const struct ag_target *t, const struct ag_session *s, const char *line,
    size_t len, int capture, struct ag_err *err)
{
	struct ag_strbuf sb;
	char *script;
	size_t i;

	if (t->up->verbatim) {
		/* the line as it was judged, for the host's own agentgate to judge */
		char *req;

		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (len > REQUEST_MAX || (req = strndup(line, len)) == NULL) {
			ag_err_set(err, "the command is over %zu bytes, more than one upstream "
			    "exec request carries", REQUEST_MAX);
			return NULL;
		}
		return req;
	}
	if ((script = ag_runner_script(line, len, s->last_status, capture)) == NULL) {
		ag_err_set(err, "the command is over %zu bytes, more than one upstream exec "
		    "request carries", (size_t)AG_RUN_ARGV_MAX);
		return NULL;
	}
	ag_strbuf_init(&sb, REQUEST_MAX);
	if (ag_strbuf_addstr(&sb, "cd -- ") < 0 || ag_strbuf_squote_str(&sb, s->cwd) < 0 ||
	    ag_strbuf_addstr(&sb, " || cd; ") < 0)
		goto full;
	if (capture && (ag_strbuf_addstr(&sb, "exec 3>") < 0 ||
	    ag_strbuf_squote_str(&sb, t->statedir) < 0 || ag_strbuf_addstr(&sb, "/state && ") < 0))
		goto full;
	if (ag_strbuf_addstr(&sb, "exec env -i") < 0)
		goto full;
	for (i = 0; s->env != NULL && s->env[i] != NULL; i++) {
		const char *eq = strchr(s->env[i], '=');
		size_t k;
		int fixed = 0;

		for (k = 0; eq != NULL && k < t->up->env_keys.n; k++)
			if (strlen(t->up->env_keys.v[k]) == (size_t)(eq - s->env[i]) &&
			    strncmp(t->up->env_keys.v[k], s->env[i], (size_t)(eq - s->env[i])) == 0)
				fixed = 1;
		if (eq == NULL || fixed)
			continue;
		if (ag_strbuf_addch(&sb, ' ') < 0 || ag_strbuf_squote_str(&sb, s->env[i]) < 0)
			goto full;
	}
	for (i = 0; i < t->up->env_keys.n; i++)
		/* 'NAME'='VALUE' is one word: NAME=VALUE */
		if (ag_strbuf_addch(&sb, ' ') < 0 || ag_strbuf_squote_str(&sb, t->up->env_keys.v[i]) < 0 ||
		    ag_strbuf_addch(&sb, '=') < 0 || ag_strbuf_squote_str(&sb, t->up->env_vals.v[i]) < 0)
			goto full;
	if (ag_strbuf_addstr(&sb, " " REMOTE_BASH " -c ") < 0 || ag_strbuf_squote_str(&sb, script) < 0)
		goto full;
	free(script);
	return ag_strbuf_detach(&sb, NULL);
full:
	free(script);
	ag_strbuf_free(&sb);
	ag_err_set(err, "the command with the session's environment is over %zu bytes, more "
	    "than one upstream exec request carries", REQUEST_MAX);
	return NULL;
}

/* The capture the command's EXIT trap left in the state file. */
static void
read_state(struct ag_target *t, struct ag_run_result *r)
{
	struct ag_strbuf req;
	struct ag_err err;
	char *out = NULL;
	size_t outlen, off, rlen;
	int status;

	ag_err_clear(&err);
	ag_strbuf_init(&req, REQUEST_MAX);
	if (ag_strbuf_addstr(&req, "cat -- ") < 0 || ag_strbuf_squote_str(&req, t->statedir) < 0 ||
	    ag_strbuf_addstr(&req, "/state") < 0 ||
	    ag_upconn_capture(t->conn, req.data, STATE_MAX, &out, &outlen, &status, &err) < 0) {
		if (err.msg[0] != '\0')
			ag_log(LOG_WARNING, "%s", err.msg);
		goto out;
	}
	if (status == 0 && ag_runner_capture_records(out, outlen, &off, &rlen)) {
		memmove(out, out + off, rlen);
		out[rlen] = '\0';
		r->capture = out;
		r->capture_len = rlen;
		r->capture_ok = 1;
		out = NULL;
	}
out:
	free(out);
	ag_strbuf_free(&req);
}

int
ag_target_run(struct ag_core *core, struct ag_target *t, const char *line, size_t len,
    int capture, struct ag_run_result *r, int *cols, int *rows, struct ag_err *err)
{
	struct ag_uprun_opts o;
	char *req;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((req = build_request(t, &core->sess, line, len, capture, err)) == NULL)
		return -1;
	memset(&o, 0, sizeof(o));
	o.req = req;
	o.in_fd = core->cmd_in;
	o.out_fd = STDOUT_FILENO;
	o.err_fd = STDERR_FILENO;
	o.pty = core->pty;
	o.term = ag_session_getenv(&core->sess, "TERM");
	if (o.term == NULL)
		o.term = getenv("TERM");
	o.timeout = ag_core_line_timeout(core);
	o.max_output = core->profile->limits.max_output;
	o.rec = core->pty ? core->rec : NULL;
	o.redact = core->profile->redact ? core->profile : NULL;
	if (core->standing != NULL) {
		o.revoked = ag_core_revoked;
		o.revoked_arg = core;
	}
	fflush(stdout);
	fflush(stderr);
	rc = ag_upconn_run(t->conn, &o, r, cols, rows, err);
	if (rc < 0 && t->conn != NULL) {
		struct ag_err again;

		/* the connection may have died since the last line: once more, anew
		 * (the command did not start: no channel took it) */
		ag_err_clear(&again);
		ag_upconn_close(t->conn);
		t->conn = NULL;
		if (connect_target(t, &again) == 0) {
			ag_err_clear(err);
			rc = ag_upconn_run(t->conn, &o, r, cols, rows, err);
		} else
			*err = again;
	}
	free(req);
	if (rc < 0)
		return -1;
	if (capture && !t->up->verbatim && !r->timed_out && !r->cancelled && !r->terminated &&
	    !r->client_gone)
		read_state(t, r);
	return 0;
}

const struct ag_session *
ag_target_session(const struct ag_core *core)
{
	return core->at != NULL && core->at->opened ? &core->at->sess : &core->sess;
}

void
ag_targets_end(struct ag_core *core)
{
	size_t i;

	for (i = 0; i < core->ntargets; i++) {
		struct ag_target *t = &core->targets[i];

		if (t->conn != NULL && t->statedir != NULL) {
			struct ag_strbuf req;
			char *out = NULL;
			size_t n;
			int st;
			struct ag_err e;

			/* the private directory goes with the session */
			ag_strbuf_init(&req, REQUEST_MAX);
			if (ag_strbuf_addstr(&req, "rm -rf -- ") == 0 &&
			    ag_strbuf_squote_str(&req, t->statedir) == 0)
				(void)ag_upconn_capture(t->conn, req.data, 4096, &out, &n, &st, &e);
			free(out);
			ag_strbuf_free(&req);
		}
		ag_upconn_close(t->conn);
		if (t->opened)
			ag_session_free(&t->sess);
		free(t->statedir);
		ag_ask_free(t->ask);
	}
	free(core->targets);
	core->targets = NULL;
	core->ntargets = 0;
	core->at = NULL;
}
