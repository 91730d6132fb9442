/* server_conn.c - one connection's channels and sessions; see server_int.h */
#include "agconfig.h"
#include "common/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/sshlib.h"

#include "record/audit.h"
#include "common/config.h"
#include "core/core.h"
#include "core/standing.h"
#include "policy/envsan.h"
#include "common/log.h"
#include "common/sshkey.h"
#include "auth/pamauth.h"
#include "front/agentproto.h"
#include "front/request.h"
#include "exec/runner.h"
#include "front/server.h"
#include "exec/sigpipe.h"
#include "exec/session.h"

#include "front/server_int.h"
#include "policy/policy.h"

/* The session's audit, or before authentication a handle of its own, one
 * session id per connection; NULL when out of memory. */
static struct ag_audit *
audit_of(struct conn *c)
{
	struct ag_audit_info info;
	struct ag_err err;

	if (c->frame.audit != NULL)
		return c->frame.audit;
	if (c->preaudit == NULL) {
		memset(&info, 0, sizeof(info));
		info.user = c->have_user ? c->user : NULL;
		info.client = c->client;
		info.mode = "server";
		c->preaudit = ag_audit_open(&c->cfg->gw.audit, &info, &err);
	}
	return c->preaudit;
}

void
srv_audit_event(struct conn *c, const char *event, const char *request, const char *decision,
    const char *reason)
{
	struct ag_audit *a = audit_of(c);
	struct ag_err err;

	ag_err_clear(&err);
	if (a != NULL && ag_audit_event(a, event, request, decision, reason, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
}

void
srv_audit_auth_failure(struct conn *c, const char *method, const char *reason,
    const char *reason_class)
{
	struct ag_audit *a = audit_of(c);

	if (a != NULL)
		ag_frame_auth_failure(a, c->cfg, NULL, method, reason, reason_class);
}

/* ---- channels ----------------------------------------------------------------- */

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void
chan_audit(struct chan *ch, const char *request, const char *decision, const char *reason)
{
	ag_log(LOG_INFO, "%s from %s: %s %s%s%s", ch->c->user, ch->c->client, request,
	    decision, reason ? ": " : "", reason ? reason : "");
	srv_audit_event(ch->c, "channel_request", request, decision, reason);
}

/* Tell the client why, on the channel's stderr, the way the gateway does. */
static void
chan_say(struct chan *ch, const char *msg)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "agentgate: %s\r\n", msg);

	if (n > 0)
		(void)ag_ssh.ssh_channel_write_stderr(ch->ch, line, (uint32_t)strlen(line));
}

/* A new PTY pair for the channel, with the requested size. */
static int
open_pty(struct chan *ch)
{
	if ((ch->pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)) < 0 ||
	    grantpt(ch->pty_master) < 0 || unlockpt(ch->pty_master) < 0 ||
	    ptsname_r(ch->pty_master, ch->tty_name, sizeof(ch->tty_name)) != 0)
		return -1;
	if ((ch->pty_slave = open(ch->tty_name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	return ioctl(ch->pty_slave, TIOCSWINSZ, &ch->ws);
}

static int
on_pty_request(ssh_session s, ssh_channel channel, const char *term, int cols, int rows,
    int px, int py, void *ud)
{
	struct chan *ch = ud;
	size_t i;

	(void)s;
	(void)channel;
	if (ch->pid > 0 || ch->pty) {
		chan_audit(ch, "pty-req", "deny", "too late or twice");
		return -1;
	}
	for (i = 0; term != NULL && term[i] != '\0'; i++)
		if (!((term[i] >= 'a' && term[i] <= 'z') || (term[i] >= 'A' && term[i] <= 'Z') ||
		    (term[i] >= '0' && term[i] <= '9') || term[i] == '-' || term[i] == '_' ||
		    term[i] == '.' || term[i] == '+'))
			break;
	if (term == NULL || term[i] != '\0' || i == 0 || i >= sizeof(ch->term))
		snprintf(ch->term, sizeof(ch->term), "dumb");
	else
		snprintf(ch->term, sizeof(ch->term), "%s", term);
	memset(&ch->ws, 0, sizeof(ch->ws));
	ch->ws.ws_col = (unsigned short)(cols > 0 && cols < 10000 ? cols : 80);
	ch->ws.ws_row = (unsigned short)(rows > 0 && rows < 10000 ? rows : 24);
	ch->ws.ws_xpixel = (unsigned short)(px > 0 && px < 65536 ? px : 0);
	ch->ws.ws_ypixel = (unsigned short)(py > 0 && py < 65536 ? py : 0);
	if (open_pty(ch) < 0) {
		chan_audit(ch, "pty-req", "deny", strerror(errno));
		close_fd(&ch->pty_master);
		close_fd(&ch->pty_slave);
		return -1;
	}
	ch->pty = 1;
	chan_audit(ch, "pty-req", "allow", NULL);
	return 0;
}

static int
on_window_change(ssh_session s, ssh_channel channel, int cols, int rows, int px, int py,
    void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (!ch->pty || ch->pty_master < 0)
		return -1;
	ch->ws.ws_col = (unsigned short)(cols > 0 && cols < 10000 ? cols : ch->ws.ws_col);
	ch->ws.ws_row = (unsigned short)(rows > 0 && rows < 10000 ? rows : ch->ws.ws_row);
	ch->ws.ws_xpixel = (unsigned short)(px > 0 && px < 65536 ? px : 0);
	ch->ws.ws_ypixel = (unsigned short)(py > 0 && py < 65536 ? py : 0);
	/* the kernel sends SIGWINCH to the terminal's foreground job */
	return ioctl(ch->pty_master, TIOCSWINSZ, &ch->ws) < 0 ? -1 : 0;
}

static int
on_env_request(ssh_session s, ssh_channel channel, const char *name, const char *value,
    void *ud)
{
	struct chan *ch = ud;
	const struct ag_server_conf *sc = ch->c->sc;
	char req[160];
	const char *why = NULL;
	size_t i;

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "env %.100s", name != NULL ? name : "");
	for (i = 0; name != NULL && name[i] != '\0'; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
		    name[i] == '_' || (i > 0 && name[i] >= '0' && name[i] <= '9')))
			break;
	if (name != NULL && strcmp(name, "AGENTGATE_TOKEN") == 0) {
		/* the identity was decided at login, before any channel: a token
		 * here would be ignored, and the caller never know it */
		ch->token_in_env = 1;
		why = "a token is sent at login under serve (keyboard-interactive), "
		    "not in the environment";
		chan_say(ch, "under agentgate serve a token is answered at login "
		    "(keyboard-interactive, gateway.server.auth_methods), not sent in the "
		    "environment; this session is refused");
	} else if (name == NULL || value == NULL || i == 0 || name[i] != '\0' || i > 128)
		why = "not a variable name";
	else if (strlen(value) > 4096)
		why = "value too long";
	else if (ch->pid > 0)
		why = "the session has started";
	else if (!ag_strlist_match(&sc->accept_env, name))
		why = "not in gateway.server.accept_env";
	else if (ag_envsan_is_dangerous(name, ch->c->profile))
		why = "a variable the gateway never accepts";
	else if (ch->nenv == AG_SERVER_MAX_ENV)
		why = "too many variables";
	if (why != NULL) {
		chan_audit(ch, req, "deny", why);
		return -1;
	}
	for (i = 0; i < ch->nenv; i++)
		if (strcmp(ch->env_names[i], name) == 0)
			break;
	if (i == ch->nenv) {
		if ((ch->env_names[i] = strdup(name)) == NULL)
			return -1;
		ch->env_vals[i] = NULL;
		ch->nenv++;
	}
	free(ch->env_vals[i]);
	if ((ch->env_vals[i] = strdup(value)) == NULL)
		return -1;
	chan_audit(ch, req, "allow", NULL);
	return 0;
}

static const char *
env_value(const struct chan *ch, const char *name)
{
	size_t i;

	for (i = 0; i < ch->nenv; i++)
		if (strcmp(ch->env_names[i], name) == 0)
			return ch->env_vals[i];
	return NULL;
}

/*
 * The session process: the one session core, on fds 0-2, as the user.
 * Returns the exit status of the session.
 */
static int
session_main(struct conn *c, struct chan *ch, const char *cmd, int st_fd)
{
	char *tcmd = NULL;
	struct ag_request req;
	struct ag_core_params cp;
	struct ag_core core;
	struct ag_standing standing;
	struct ag_err err;
	char keyfp[128];
	char conn_s[2 * ADDR_MAX + 32], client_s[ADDR_MAX + 32];
	int status;
	size_t i;

	ag_err_clear(&err);
	/* fd 2 is the client's stderr now: log lines must not go there */
	ag_log_open("agentgate", 0, LOG_AUTHPRIV);
	snprintf(conn_s, sizeof(conn_s), "%s %d %s %d", c->caddr, c->cport, c->laddr, c->lport);
	snprintf(client_s, sizeof(client_s), "%s %d %d", c->caddr, c->cport, c->lport);
	memset(&cp, 0, sizeof(cp));
	cp.cfg = c->cfg;
	cp.profile = c->profile;
	cp.identity = c->identity;
	cp.audit = c->frame.audit;
	cp.tty = ch->pty && cmd == NULL;	/* the REPL reads through libedit */
	cp.origin.ssh_connection = conn_s;
	cp.origin.ssh_client = client_s;
	cp.origin.ssh_tty = ch->pty ? ch->tty_name : NULL;
	cp.origin.term = ch->pty ? ch->term : NULL;
	cp.origin.lang = env_value(ch, "LANG");
	cp.origin.tty = ch->pty;
	/* a lock ends it at the next line; a changed policy, where the user
	 * can read it (serve's session runs as the user, without the group) */
	if (c->auth_info == NULL || ag_sshkey_fingerprint(c->auth_info, keyfp, sizeof(keyfp)) < 0)
		keyfp[0] = '\0';
	ag_standing_begin(&standing, c->cfg, c->identity, c->user, keyfp,
	    ag_pamauth_token(c->pam), c->profile->name);
	/*
	 * The connection's policy is the one loaded when it began.  Once the
	 * listener has loaded another (SIGHUP), each new channel (a multiplexed
	 * client's next command) is judged against the policy file before its
	 * first command: an identity deleted or disabled since opens no new
	 * session on a connection it still holds.  A stamp nothing matches
	 * makes that check read the file.
	 */
	if (srv_policy_reloaded)
		memset(standing.stamp, 0, sizeof(standing.stamp));
	cp.standing = &standing;
	ag_config_forget_tokens(c->cfg, c->identity);
	if (ag_core_begin(&core, &cp, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	ag_request_of(cmd, &req);
	if (req.kind == AG_REQ_PROTO && c->frame.audit != NULL)
		(void)ag_audit_set_mode(c->frame.audit, ag_request_mode(&req, 0));
	for (i = 0; i < ch->nenv; i++)
		if (!ag_envsan_is_dangerous(ch->env_names[i], c->profile))
			(void)ag_session_setenv(&core.sess, ch->env_names[i], ch->env_vals[i]);
	/* the same session core as under sshd: a PTY per command, the
	 * recording, file transfer, the REPL */
	if (c->target[0] != '\0' && req.kind != AG_REQ_PROTO) {
		/* `ssh agent:web1@gw [CMD]`: the session (or CMD) is web1's */
		size_t n = strlen(c->target) + (cmd != NULL ? strlen(cmd) : 0) + 3;

		if ((tcmd = malloc(n)) == NULL) {
			fprintf(stderr, "agentgate: out of memory\n");
			ag_core_end(&core);
			return 1;
		}
		snprintf(tcmd, n, "@%s%s%s", c->target, cmd != NULL ? " " : "",
		    cmd != NULL ? cmd : "");
		cmd = tcmd;
	}
	ag_request_of(cmd, &req);
	status = ag_front_serve(&core, &req);
	if (core.ended)
		status = AG_STATUS_ENDED;
	free(tcmd);
	fflush(stdout);
	fflush(stderr);
	{
		unsigned long n = core.ncommands;

		(void)!write(st_fd, &n, sizeof(n));
	}
	ag_core_end(&core);
	return status;
}

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int
start_session(struct chan *ch, const char *cmd)
{
	struct conn *c = ch->c;
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, stp[2] = { -1, -1 };
	pid_t pid;
	size_t i;

	if (ch->pid > 0 || ch->token_in_env)
		return -1;
	if (pipe2(stp, O_CLOEXEC) < 0 || (!ch->pty && (pipe2(inp, O_CLOEXEC) < 0 ||
	    pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0))) {
		ag_log(LOG_ERR, "pipe: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) < 0) {
		ag_log(LOG_ERR, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int in = ch->pty ? ch->pty_slave : inp[0];
		int out = ch->pty ? ch->pty_slave : outp[1];
		int er = ch->pty ? ch->pty_slave : errp[1];

		srv_default_signals();
		(void)setsid();
		if (ch->pty)
			(void)ioctl(ch->pty_slave, TIOCSCTTY, 0);
		if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
			_exit(127);
		/* nothing of the connection stays open in here: not the socket,
		 * not another channel's pipes (their EOF depends on it) */
		close(c->fd);
		ag_sigpipe_close();
		for (i = 0; i < c->nchans; i++) {
			struct chan *o = &c->chans[i];

			if (!o->used)
				continue;
			if (o->in_fd >= 0) close(o->in_fd);
			if (o->out_fd >= 0 && o->out_fd != o->in_fd) close(o->out_fd);
			if (o->err_fd >= 0) close(o->err_fd);
			if (o->st_fd >= 0) close(o->st_fd);
			if (o->pty_master >= 0) close(o->pty_master);
			if (o != ch && o->pty_slave >= 0) close(o->pty_slave);
		}
		if (ch->pty_slave > 2)
			close(ch->pty_slave);
		for (i = 0; i < 2; i++) {
			if (inp[i] > 2) close(inp[i]);
			if (outp[i] > 2) close(outp[i]);
			if (errp[i] > 2) close(errp[i]);
		}
		close(stp[0]);
		_exit(session_main(c, ch, cmd, stp[1]));
	}
	close(stp[1]);
	ch->st_fd = stp[0];
	set_nonblock(ch->st_fd);
	if (ch->pty) {
		close_fd(&ch->pty_slave);
		ch->in_fd = ch->out_fd = ch->pty_master;
		ch->err_eof = 1;
	} else {
		close(inp[0]);
		close(outp[1]);
		close(errp[1]);
		ch->in_fd = inp[1];
		ch->out_fd = outp[0];
		ch->err_fd = errp[0];
		set_nonblock(ch->in_fd);
		set_nonblock(ch->out_fd);
		set_nonblock(ch->err_fd);
	}
	ch->pid = pid;
	return 0;
fail:
	for (i = 0; i < 2; i++) {
		if (inp[i] >= 0) close(inp[i]);
		if (outp[i] >= 0) close(outp[i]);
		if (errp[i] >= 0) close(errp[i]);
		if (stp[i] >= 0) close(stp[i]);
	}
	return -1;
}

static int
on_exec_request(ssh_session s, ssh_channel channel, const char *command, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (command == NULL || strlen(command) > AG_SERVER_MAX_COMMAND) {
		chan_audit(ch, "exec", "deny", "command missing or too long");
		return -1;
	}
	if (ch->pid > 0 || start_session(ch, command) < 0) {
		chan_audit(ch, "exec", "deny", "cannot start the session");
		return -1;
	}
	return 0;	/* the command itself is judged and audited by the session core */
}

static int
on_shell_request(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (ch->pid > 0 || start_session(ch, NULL) < 0) {
		chan_audit(ch, "shell", "deny", "cannot start the session");
		return -1;
	}
	chan_audit(ch, "shell", "allow", NULL);
	return 0;
}

static int
on_subsystem_request(ssh_session s, ssh_channel channel, const char *sub, void *ud)
{
	struct chan *ch = ud;
	char req[96];

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "subsystem %.64s", sub != NULL ? sub : "");
	/* the programs' protocols (agentproto.h): a session like any other */
	if (sub != NULL && (strcmp(sub, "mcp") == 0 || strcmp(sub, "agentgate-json") == 0)) {
		if (ch->pid > 0 || start_session(ch, strcmp(sub, "mcp") == 0 ? "agentgate mcp" :
		    "agentgate json") < 0) {
			chan_audit(ch, req, "deny", "cannot start the session");
			return -1;
		}
		chan_audit(ch, req, "allow", NULL);
		return 0;
	}
	if (sub == NULL || strcmp(sub, "sftp") != 0) {
		chan_audit(ch, req, "deny", "only the sftp, mcp and agentgate-json subsystems "
		    "are served");
		chan_say(ch, "this subsystem is not available through agentgate");
		return -1;
	}
	if (ch->c->profile->sftp == AG_TRANSFER_OFF) {
		chan_audit(ch, req, "deny", "file_transfer.sftp is off for this profile");
		chan_say(ch, "sftp is off for this profile (file_transfer.sftp); use "
		    "commands such as cat instead");
		return -1;
	}
	/* sftp-server runs confined like a command; transfer.c audits it */
	if (ch->pid > 0 || start_session(ch, "internal-sftp") < 0) {
		chan_audit(ch, req, "deny", "cannot start the session");
		return -1;
	}
	chan_audit(ch, req, "allow", NULL);
	return 0;
}

static const struct {
	const char	*name;
	int		 sig;
} signals[] = {
	{ "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP }, { "KILL", SIGKILL },
	{ "QUIT", SIGQUIT }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
};

/*
 * The running command is the session process's child that leads its own
 * process group (the runner puts each command in a new group).
 */
static int
signal_command(pid_t session_pid, int sig)
{
	pid_t kids[512];
	size_t n = ag_runner_children(session_pid, kids, sizeof(kids) / sizeof(kids[0])), i;
	int hit = 0;

	/* the command's process group leaders among the session's children */
	for (i = 0; i < n; i++)
		if (kids[i] > 1 && getpgid(kids[i]) == kids[i] && kill(-kids[i], sig) == 0)
			hit = 1;
	return hit;
}

static void
on_signal_request(ssh_session s, ssh_channel channel, const char *signame, void *ud)
{
	struct chan *ch = ud;
	char req[64];
	size_t i;

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "signal %.16s", signame != NULL ? signame : "");
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signame != NULL && strcmp(signame, signals[i].name) == 0)
			break;
	if (i == sizeof(signals) / sizeof(signals[0])) {
		chan_audit(ch, req, "deny", "not a signal a client may send");
		return;
	}
	if (ch->pid <= 0 || ch->exited || !signal_command(ch->pid, signals[i].sig)) {
		chan_audit(ch, req, "deny", "no command is running");
		return;
	}
	chan_audit(ch, req, "allow", NULL);
}

static int
on_data(ssh_session s, ssh_channel channel, void *data, uint32_t len, int is_stderr, void *ud)
{
	struct chan *ch = ud;
	size_t take;

	(void)s;
	(void)channel;
	(void)is_stderr;
	if (ch->in_fd < 0 && ch->pid > 0)
		return (int)len;	/* nobody reads it any more: discard */
	take = INBUF_MAX - ch->inlen;
	if (take > len)
		take = len;
	memcpy(ch->inbuf + ch->inlen, data, take);
	ch->inlen += take;
	if (take < len)
		ch->stalled = 1;	/* the rest waits in libssh, inside the window */
	return (int)take;
}

static void
on_eof(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	ch->client_eof = 1;
}

static void
on_close(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	ch->client_closed = 1;
	ch->client_eof = 1;
	if (ch->pid > 0 && !ch->exited)
		kill(ch->pid, SIGHUP);	/* the session ends and takes its command along */
}

static ssh_channel
on_channel_open(ssh_session s, void *ud)
{
	struct conn *c = ud;
	struct chan *ch = NULL;
	size_t i, active = 0;

	for (i = 0; i < c->nchans; i++) {
		if (c->chans[i].used)
			active++;
		else if (ch == NULL)
			ch = &c->chans[i];
	}
	if (ch == NULL || active >= c->nchans) {
		srv_audit_event(c, "channel_request", "session", "deny", "too many sessions");
		return NULL;
	}
	memset(ch, 0, sizeof(*ch));
	ch->c = c;
	ch->used = 1;
	ch->pty_master = ch->pty_slave = -1;
	ch->in_fd = ch->out_fd = ch->err_fd = ch->st_fd = -1;
	ch->ref_out.ch = ch;
	ch->ref_err.ch = ch;
	ch->ref_err.err = 1;
	if ((ch->ch = ag_ssh.ssh_channel_new(s)) == NULL) {
		ch->used = 0;
		return NULL;
	}
	ssh_callbacks_init(&ch->cb);
	ch->cb.userdata = ch;
	ch->cb.channel_data_function = on_data;
	ch->cb.channel_eof_function = on_eof;
	ch->cb.channel_close_function = on_close;
	ch->cb.channel_signal_function = on_signal_request;
	ch->cb.channel_pty_request_function = on_pty_request;
	ch->cb.channel_shell_request_function = on_shell_request;
	ch->cb.channel_pty_window_change_function = on_window_change;
	ch->cb.channel_exec_request_function = on_exec_request;
	ch->cb.channel_env_request_function = on_env_request;
	ch->cb.channel_subsystem_request_function = on_subsystem_request;
	ag_ssh.ssh_set_channel_callbacks(ch->ch, &ch->cb);
	return ch->ch;
}

/* Everything the callbacks above do not take: forwarding, X11, globals. */
static int
on_message(ssh_session s, ssh_message m, void *ud)
{
	struct conn *c = ud;
	const char *what = "request", *why = "forwarding is not available through agentgate";

	(void)s;
	switch (ag_ssh.ssh_message_type(m)) {
	case SSH_REQUEST_CHANNEL_OPEN:
		switch (ag_ssh.ssh_message_subtype(m)) {
		case SSH_CHANNEL_DIRECT_TCPIP: what = "direct-tcpip"; break;
		case SSH_CHANNEL_FORWARDED_TCPIP: what = "forwarded-tcpip"; break;
		case SSH_CHANNEL_X11: what = "x11"; break;
		case SSH_CHANNEL_AUTH_AGENT: what = "auth-agent"; break;
		default: what = "channel-open"; why = "only session channels are served"; break;
		}
		break;
	case SSH_REQUEST_GLOBAL:
		switch (ag_ssh.ssh_message_subtype(m)) {
		case SSH_GLOBAL_REQUEST_TCPIP_FORWARD: what = "tcpip-forward"; break;
		case SSH_GLOBAL_REQUEST_CANCEL_TCPIP_FORWARD: what = "cancel-tcpip-forward"; break;
		case SSH_GLOBAL_REQUEST_KEEPALIVE: return 1;	/* just answered */
		default: what = "global-request"; why = "not supported by agentgate"; break;
		}
		break;
	case SSH_REQUEST_CHANNEL:
		switch (ag_ssh.ssh_message_subtype(m)) {
		case SSH_CHANNEL_REQUEST_X11: what = "x11-req"; break;
		default: what = "channel-request"; why = "not supported by agentgate"; break;
		}
		break;
	default:
		break;
	}
	srv_audit_event(c, "channel_request", what, "deny", why);
	ag_log(LOG_INFO, "%s from %s: %s refused", c->user, c->client, what);
	return 1;	/* libssh sends the refusal */
}

/* ---- the relay loop -------------------------------------------------------- */

static int
on_child_output(socket_t fd, int revents, void *ud)
{
	struct chan *ch = ((struct fdref *)ud)->ch;
	int is_err = ((struct fdref *)ud)->err;
	char buf[RELAY_CHUNK];
	uint32_t win;
	ssize_t n;

	(void)revents;
	if ((is_err ? ch->err_eof : ch->out_eof) || ch->client_closed)
		return 0;
	/* read only what the client's window can take: no unbounded buffering */
	if ((win = ag_ssh.ssh_channel_window_size(ch->ch)) == 0)
		return 0;
	n = read(fd, buf, win < sizeof(buf) ? win : sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {	/* EOF, or EIO on a PTY whose slave side is gone */
		if (is_err)
			ch->err_eof = 1;
		else
			ch->out_eof = 1;
		return 0;
	}
	if ((is_err ? ag_ssh.ssh_channel_write_stderr(ch->ch, buf, (uint32_t)n) :
	    ag_ssh.ssh_channel_write(ch->ch, buf, (uint32_t)n)) < 0) {
		ch->out_eof = ch->err_eof = 1;
		ch->client_closed = 1;
	}
	return 0;
}

/* Keep the event's fd set in step with the windows and EOFs. */
static void
update_fds(struct conn *c, struct chan *ch)
{
	int want_out = ch->out_fd >= 0 && !ch->out_eof && !ch->client_closed &&
	    ag_ssh.ssh_channel_window_size(ch->ch) > 0;
	int want_err = ch->err_fd >= 0 && !ch->err_eof && !ch->client_closed &&
	    ag_ssh.ssh_channel_window_size(ch->ch) > 0;

	if (want_out && !ch->out_reg) {
		if (ag_ssh.ssh_event_add_fd(c->ev, ch->out_fd, POLLIN, on_child_output,
		    &ch->ref_out) == SSH_OK)
			ch->out_reg = 1;
	} else if (!want_out && ch->out_reg) {
		ag_ssh.ssh_event_remove_fd(c->ev, ch->out_fd);
		ch->out_reg = 0;
	}
	if (want_err && !ch->err_reg) {
		if (ag_ssh.ssh_event_add_fd(c->ev, ch->err_fd, POLLIN, on_child_output,
		    &ch->ref_err) == SSH_OK)
			ch->err_reg = 1;
	} else if (!want_err && ch->err_reg) {
		ag_ssh.ssh_event_remove_fd(c->ev, ch->err_fd);
		ch->err_reg = 0;
	}
	if (ch->err_eof && !ch->pty)
		close_fd(&ch->err_fd);
	if (ch->out_eof && !ch->out_reg && ch->out_fd >= 0 && !ch->pty)
		close_fd(&ch->out_fd);
}

/* Client input → the command's stdin (or the PTY), without blocking. */
static void
pump_input(struct chan *ch)
{
	if (ch->in_fd < 0 || ch->pid <= 0)
		return;
	while (ch->inlen > 0) {
		ssize_t w = write(ch->in_fd, ch->inbuf, ch->inlen);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {	/* the reader is gone: drop what is left */
			ch->inlen = 0;
			if (!ch->pty)
				close_fd(&ch->in_fd);
			return;
		}
		memmove(ch->inbuf, ch->inbuf + w, ch->inlen - (size_t)w);
		ch->inlen -= (size_t)w;
	}
	if (ch->stalled) {
		int r = ag_ssh.ssh_channel_read_nonblocking(ch->ch, ch->inbuf,
		    (uint32_t)(INBUF_MAX - ch->inlen), 0);

		if (r > 0)
			ch->inlen += (size_t)r;
		else
			ch->stalled = 0;
		return;
	}
	/* the client's EOF closes the command's stdin once all of it is written */
	if (ch->client_eof && !ch->pty)
		close_fd(&ch->in_fd);
}

static void
finish_chan(struct conn *c, struct chan *ch)
{
	size_t i;

	if (ch->st_fd >= 0) {
		unsigned long n = 0;

		if (read(ch->st_fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
			c->ncommands += n;
		close_fd(&ch->st_fd);
	}
	if (!ch->client_closed) {
		if (WIFSIGNALED(ch->wstatus)) {
			const char *name = "KILL";

			for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
				if (signals[i].sig == WTERMSIG(ch->wstatus))
					name = signals[i].name;
			(void)ag_ssh.ssh_channel_request_send_exit_signal(ch->ch, name,
			    WCOREDUMP(ch->wstatus) ? 1 : 0, "", "");
		} else
			(void)ag_ssh.ssh_channel_request_send_exit_status(ch->ch,
			    WEXITSTATUS(ch->wstatus));
		(void)ag_ssh.ssh_channel_send_eof(ch->ch);
		(void)ag_ssh.ssh_channel_close(ch->ch);
	}
	if (ch->out_reg)
		ag_ssh.ssh_event_remove_fd(c->ev, ch->out_fd);
	if (ch->err_reg)
		ag_ssh.ssh_event_remove_fd(c->ev, ch->err_fd);
	if (ch->in_fd != ch->out_fd)
		close_fd(&ch->in_fd);
	close_fd(&ch->out_fd);
	close_fd(&ch->err_fd);
	if (ch->pty) {
		ch->in_fd = -1;
		close_fd(&ch->pty_master);
	}
	close_fd(&ch->pty_slave);
	for (i = 0; i < ch->nenv; i++) {
		free(ch->env_names[i]);
		free(ch->env_vals[i]);
	}
	ag_ssh.ssh_channel_free(ch->ch);
	ch->finished = 1;
	ch->used = 0;
}

static void
reap(struct conn *c)
{
	pid_t pid;
	int st;
	size_t i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (i = 0; i < c->nchans; i++)
			if (c->chans[i].used && c->chans[i].pid == pid) {
				c->chans[i].exited = 1;
				c->chans[i].wstatus = st;
			}
}

static int
on_sig_fd(socket_t fd, int revents, void *ud)
{
	(void)fd;
	(void)revents;
	(void)ud;
	ag_sigpipe_drain();
	return 0;
}

static void
serve_channels(struct conn *c)
{
	time_t last_keepalive = time(NULL), gone_at = 0;
	long ka = c->sc->keepalive;
	size_t i;

	c->nchans = (size_t)srv_conf_long(c->sc->max_sessions, AG_SERVER_DEFAULT_MAX_SESSIONS);
	if ((c->chans = calloc(c->nchans, sizeof(*c->chans))) == NULL ||
	    (c->ev = ag_ssh.ssh_event_new()) == NULL)
		return;
	ssh_callbacks_init(&c->scb);
	c->scb.userdata = c;
	c->scb.channel_open_request_session_function = on_channel_open;
	ag_ssh.ssh_set_server_callbacks(c->s, &c->scb);
	ag_ssh.ssh_set_message_callback(c->s, on_message, c);
	ag_ssh.ssh_set_blocking(c->s, 0);
	if (ag_ssh.ssh_event_add_session(c->ev, c->s) != SSH_OK ||
	    ag_ssh.ssh_event_add_fd(c->ev, ag_sigpipe_fd(), POLLIN, on_sig_fd, c) != SSH_OK)
		return;
	for (;;) {
		int busy = 0, running, rc;

		for (i = 0; i < c->nchans; i++) {
			struct chan *ch = &c->chans[i];

			if (!ch->used)
				continue;
			pump_input(ch);
			if (ch->inlen > 0 || ch->stalled)
				busy = 1;
			update_fds(c, ch);
		}
		rc = ag_ssh.ssh_event_dopoll(c->ev, busy ? 20 : 1000);
		if (srv_got_stop) {
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].pid > 0 && !c->chans[i].exited)
					kill(c->chans[i].pid, SIGHUP);
			srv_got_stop = 0;
		}
		reap(c);
		for (i = 0; i < c->nchans; i++) {
			struct chan *ch = &c->chans[i];

			if (ch->used && ch->pid > 0 && ch->exited &&
			    (ch->out_eof || ch->client_closed) &&
			    (ch->err_eof || ch->client_closed))
				finish_chan(c, ch);
			else if (ch->used && ch->client_closed && ch->pid <= 0)
				finish_chan(c, ch);
		}
		if (rc == SSH_ERROR || !ag_ssh.ssh_is_connected(c->s)) {
			/* the client is gone: end the sessions (SIGHUP, as a hangup
			 * would), and do not wait for ever on one that ignores it */
			if (gone_at == 0)
				gone_at = time(NULL);
			running = 0;
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].pid > 0 && !c->chans[i].exited) {
					kill(c->chans[i].pid, time(NULL) - gone_at > 5 ? SIGKILL :
					    SIGHUP);
					running = 1;
				}
			if (!running)
				break;
			/* wait for the sessions to end their commands and go */
			srv_sleep_ms(50);
			reap(c);
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].exited) {
					c->chans[i].client_closed = 1;
					finish_chan(c, &c->chans[i]);
				}
			continue;
		}
		if (ka > 0 && time(NULL) - last_keepalive >= ka) {
			(void)ag_ssh.ssh_send_keepalive(c->s);
			last_keepalive = time(NULL);
		}
	}
}

/* ---- one connection ----------------------------------------------------------- */

static void
local_addr(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char tmp[CLIENT_MAX];

	c->laddr[0] = '\0';
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0)
		srv_format_client(&ss, c->laddr, sizeof(c->laddr), &c->lport, tmp, sizeof(tmp));
}

int
srv_connection_main(struct ag_config *cfg, ssh_bind bind, int fd,
    const struct sockaddr_storage *peer)
{
	struct conn c;
	struct ag_audit_info info;
	struct ag_err err;
	char keyfp[128];
	pid_t child;
	int status = 1, forked = 0;

	memset(&c, 0, sizeof(c));
	ag_err_clear(&err);
	c.cfg = cfg;
	c.sc = &cfg->gw.server;
	c.fd = fd;
	srv_format_client(peer, c.caddr, sizeof(c.caddr), &c.cport, c.client, sizeof(c.client));
	local_addr(&c);
	/* the login grace time: the default SIGALRM action ends the process */
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)srv_conf_long(c.sc->login_grace_time, AG_SERVER_DEFAULT_LOGIN_GRACE));

	if ((c.s = ag_ssh.ssh_new()) == NULL)
		return 1;
	if (ag_ssh.ssh_bind_accept_fd(bind, c.s, fd) != SSH_OK) {
		ag_log(LOG_ERR, "connection from %s: %s", c.client, ag_ssh.ssh_get_error(bind));
		goto out;
	}
	if (ag_ssh.ssh_handle_key_exchange(c.s) != SSH_OK) {
		ag_log(LOG_INFO, "connection from %s: key exchange failed: %s", c.client,
		    ag_ssh.ssh_get_error(c.s));
		goto out;
	}
	if (srv_auth_phase(&c) < 0)
		goto out;
	alarm(0);
	/* tell the listener: this one no longer counts against max_startups */
	if (srv_authed_fd >= 0) {
		if (write(srv_authed_fd, "a", 1) < 0)
			ag_log(LOG_DEBUG, "listener: %s", strerror(errno));
		close(srv_authed_fd);
		srv_authed_fd = -1;
	}
	ag_audit_close(c.preaudit);
	c.preaudit = NULL;

	memset(&info, 0, sizeof(info));
	info.user = c.user;
	info.identity = c.identity;
	info.profile = c.profile->name;
	info.rollout = ag_profile_in_rollout(c.profile);
	info.client = c.client;
	if (c.auth_info != NULL && ag_sshkey_fingerprint(c.auth_info, keyfp, sizeof(keyfp)) == 0)
		info.key = keyfp;
	info.token = ag_pamauth_token(c.pam);
	info.mode = "server";
	/*
	 * Opened and started while still root, so one audit file serves every
	 * user; entered (title, live entry) in the child, once it is the
	 * user's.  Failures go to the log: there is no channel to say them on
	 * yet.  No AG_FRAME_REAP: ending the gateways' lost sessions is the
	 * sshd gateway's and root's `agentgate sessions`, never serve's.
	 */
	if (ag_frame_open(&c.frame, cfg, &info, 0, &err) < 0)
		goto out;
	ag_frame_start(&c.frame);

	if (geteuid() == 0) {
		/*
		 * The PAM session is closed as root when the connection ends; only
		 * this small parent keeps root for that, everything that talks to
		 * the client runs in the child, as the user.
		 */
		if ((child = fork()) < 0) {
			ag_log(LOG_ERR, "fork: %s", strerror(errno));
			goto out;
		}
		if (child > 0) {
			int st;

			/* a reload seen before this line is passed on too */
			srv_forward_to = child;
			if (srv_policy_reloaded)
				(void)kill(child, SIGUSR2);

			close(fd);
			while (waitpid(child, &st, 0) < 0 && errno == EINTR)
				;
			ag_pamauth_end(c.pam);
			c.pam = NULL;
			return 0;	/* no ssh_free: the socket is the child's */
		}
		forked = 1;
	}
	if (srv_drop_privileges(&c, &err) < 0) {
		ag_log(LOG_ERR, "session for %s refused: %s", c.user, err.msg);
		srv_audit_auth_failure(&c, "privileges", err.msg, NULL);
		_exit(1);
	}
	ag_frame_enter(&c.frame);
	serve_channels(&c);
	ag_frame_close(&c.frame, 0, c.ncommands);
	status = 0;
out:
	if (c.s != NULL) {
		ag_ssh.ssh_disconnect(c.s);
		if (c.ev != NULL)
			ag_ssh.ssh_event_free(c.ev);
		ag_ssh.ssh_free(c.s);
	}
	free(c.chans);
	ag_audit_close(c.preaudit);
	ag_frame_free(&c.frame);
	/* a forked child must never end PAM: its root parent does */
	if (!forked)
		ag_pamauth_end(c.pam);
	free(c.home);
	free(c.auth_info);
	free(c.identity);
	return status;
}
