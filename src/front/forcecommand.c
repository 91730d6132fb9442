/*
 * forcecommand.c - the gateway: what sshd runs as ForceCommand (command in
 * SSH_ORIGINAL_COMMAND), as a login shell (`-c COMMAND`, or "-" leading
 * argv[0]), or for an interactive session (the REPL).
 *
 * The mode comes only from what sshd decided: SSH_ORIGINAL_COMMAND, -c, and
 * whether stdin is a terminal.  Nothing the client can set (TERM, LANG,
 * AcceptEnv variables) changes how a command is judged.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/pamauth.h"
#include "auth/sshbind.h"
#include "common/config.h"
#include "common/lastgood.h"
#include "common/log.h"
#include "common/sshkey.h"
#include "common/privsep.h"
#include "common/proctitle.h"
#include "core/core.h"
#include "core/standing.h"
#include "exec/runner.h"
#include "front/agentproto.h"
#include "front/forcecommand.h"
#include "front/frame.h"
#include "front/request.h"
#include "exec/sandbox.h"
#include "record/audit.h"
#include "record/live.h"
#include "policy/policy.h"

/* "addr port addr port" → "addr:port" ("[v6]:port"). */
static void
client_from(const char *conn, char *buf, size_t len)
{
	char addr[128];
	unsigned port;

	buf[0] = '\0';
	if (conn == NULL || sscanf(conn, "%127s %u", addr, &port) != 2)
		return;
	if (strchr(addr, ':') != NULL)
		snprintf(buf, len, "[%s]:%u", addr, port);
	else
		snprintf(buf, len, "%s:%u", addr, port);
}

/* A session refused before it began: the log and the audit say who and why. */
static void
login_refused(const struct ag_config *cfg, const struct ag_audit_info *info,
    const char *stage, const char *why, const char *reason_class)
{
	ag_log(LOG_WARNING, "authentication failed for %s%s%s%s%s: %s", info->user,
	    info->identity ? " identity " : "", info->identity ? info->identity : "",
	    info->key ? " key " : "", info->key ? info->key : "", why);
	ag_frame_auth_failure(NULL, cfg, info, stage, why, reason_class);
}

/*
 * Run the PAM service for this session (authenticate, account, open
 * session).  The key sshd accepted (sshbind.h) reaches the module as
 * SSH_AUTH_INFO_0; a token the admin lets through AcceptEnv is taken out
 * of our environment first, so no command can ever see it.  On failure the
 * client gets one line, the audit log the PAM detail, and NULL is returned.
 */
static struct ag_pamauth *
pam_begin(const struct ag_config *cfg, const struct passwd *pw, const char *auth_info,
    const char *rhost, const struct ag_audit_info *info)
{
	struct ag_pamauth_params p;
	struct ag_pamauth_failure fail;
	struct ag_pamauth *pa;
	struct ag_err err;
	char *tok;
	char *token = NULL, tty[PATH_MAX];

	ag_err_clear(&err);
	memset(&fail, 0, sizeof(fail));
	if ((tok = getenv("AGENTGATE_TOKEN")) != NULL) {
		token = strdup(tok);
		explicit_bzero(tok, strlen(tok));
		unsetenv("AGENTGATE_TOKEN");
		if (token == NULL) {
			fail.stage = "token";
			snprintf(fail.pam_error, sizeof(fail.pam_error), "out of memory");
			ag_err_set(&err, "authentication failed");
			goto fail;
		}
	}
	memset(&p, 0, sizeof(p));
	p.user = pw->pw_name;
	if (rhost != NULL && *rhost != '\0')
		p.rhost = rhost;
	if (isatty(STDIN_FILENO) && ttyname_r(STDIN_FILENO, tty, sizeof(tty)) == 0)
		p.tty = tty;
	p.auth_info = auth_info;
	p.token = token;
	/*
	 * Nothing is asked at the terminal: sshd makes the account its owner,
	 * so another process of the account (another identity's, outside the
	 * sandbox) could read a token typed there before we do.  A token
	 * comes in the environment (SendEnv) or through sshd's own
	 * keyboard-interactive prompt, inside the SSH protocol.
	 */
	p.interactive = 0;
	pa = ag_pamauth_start(cfg, &p, &err, &fail);
	if (token != NULL) {
		explicit_bzero(token, strlen(token));
		free(token);
		token = NULL;
	}
	if (pa != NULL)
		return pa;
fail:
	if (token != NULL) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	fprintf(stderr, "agentgate: %s\n", err.msg);
	{
		struct ag_audit_info fi = *info;
		char why[512];

		snprintf(why, sizeof(why), "PAM %s: %s", fail.stage ? fail.stage : "?",
		    fail.pam_error);
		/* who it was, when PAM got as far as telling (an expired identity) */
		if (fail.identity[0] != '\0')
			fi.identity = fail.identity;
		login_refused(cfg, &fi, fail.stage, why, fail.reason_class);
	}
	return NULL;
}

static void
usage_error(const char *msg)
{
	fprintf(stderr, "agentgate: %s\n"
	    "usage: agentgate [--config FILE] [--profile NAME] [--log-stderr] [-c COMMAND]\n",
	    msg);
}

struct args {
	const char	*config_path;
	const char	*forced;	/* --profile */
	const char	*cmd;		/* -c */
	int		 log_stderr;
};

/* 0, or 2 after a usage error. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "profile", required_argument, NULL, 'p' },
		{ "log-stderr", no_argument, NULL, 'l' },
		/* hidden, for tests: only the ForceCommand line can say this */
		{ "test-landlock-abi", required_argument, NULL, 'A' },
		{ "test-tmp-base", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(a, 0, sizeof(*a));
	a->config_path = AG_DEFAULT_CONFIG;
	optind = 1;
	opterr = 0;
	/* '+': no reordering; a login shell's -c takes the next word whole */
	while ((ch = getopt_long(argc, argv, "+:c:", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			a->config_path = optarg;
			break;
		case 'p':
			a->forced = optarg;
			break;
		case 'l':
			a->log_stderr = 1;
			break;
		case 'c':
			a->cmd = optarg;
			break;
		case 'A': {
			char *end;
			long abi;

			/* a weaker sandbox than the kernel's is root's to ask for */
			if (ag_privsep_holding() && getuid() != 0) {
				usage_error("--test-landlock-abi is for root");
				return 2;
			}
			abi = strtol(optarg, &end, 10);

			if (end == optarg || *end != '\0' || abi < 0 || abi > 64) {
				usage_error("--test-landlock-abi: expected a Landlock ABI number");
				return 2;
			}
			ag_sandbox_set_test_abi((int)abi);
			break;
		}
		case 'T':
			/* where persistent /tmp directories live: the directory
			 * must pass the checks the real one does (root:group
			 * 1770), which only root can make */
			if (optarg[0] != '/') {
				usage_error("--test-tmp-base: expected an absolute path");
				return 2;
			}
			ag_sandbox_set_tmp_base(optarg);
			break;
		default:
			usage_error("unknown option or missing argument");
			return 2;
		}
	}
	if (optind < argc) {
		usage_error("unexpected argument");
		return 2;
	}
	return 0;
}

/*
 * sshd runs the ForceCommand through the account's login shell; with the
 * gateway as that shell (agentgate(8) SECURITY) that is `agentgate -c
 * 'agentgate --config FILE'`.  A -c whose first word is the gateway is its
 * own invocation: the words after it are the gateway's options, and the
 * client's command is SSH_ORIGINAL_COMMAND (none: the REPL).  Only plain
 * words: there is no shell here to give quotes or '$' a meaning.
 * 1: it was (a updated), 0: it was not, -1: a usage error.
 */
static int
own_invocation(struct args *a)
{
	static char buf[4096];
	static char *words[32];
	const char *w = a->cmd + strspn(a->cmd, " \t"), *base;
	struct args inner;
	size_t n = 0, wl = strcspn(w, " \t");
	char *p;

	for (base = w + wl; base > w && base[-1] != '/'; base--)
		;
	if ((size_t)(w + wl - base) != strlen("agentgate") || strncmp(base, "agentgate", 9) != 0 ||
	    ag_proto_of(a->cmd) != AG_PROTO_NONE)	/* `agentgate mcp`: a request */
		return 0;
	if (strlen(a->cmd) >= sizeof(buf) || strpbrk(a->cmd, "'\"\\$`;|&<>(){}*?[]~\n") != NULL) {
		usage_error("-c: the gateway's own command line must be plain words "
		    "(no quotes, '$' or other shell syntax: no shell reads it)");
		return -1;
	}
	strcpy(buf, a->cmd);
	for (p = strtok(buf, " \t"); p != NULL; p = strtok(NULL, " \t")) {
		if (n + 1 >= sizeof(words) / sizeof(words[0])) {
			usage_error("-c: too many words");
			return -1;
		}
		words[n++] = p;
	}
	words[n] = NULL;
	if (parse_args((int)n, words, &inner) != 0)
		return -1;
	if (inner.cmd != NULL) {
		usage_error("-c: the gateway's own command line has a -c of its own");
		return -1;
	}
	*a = inner;
	return 1;
}

/*
 * Is the account's login shell this very gateway?  Then sshd's session
 * process, which is not dumpable, executes the set-group-ID gateway
 * directly, and no process of the account (ptrace, /proc/PID/environ)
 * ever holds the connection before the gateway does.  With another shell
 * (bash -c agentgate) there is a moment when an ordinary process of the
 * account has it: another identity's process could take it over, or read
 * its AGENTGATE_TOKEN.
 */
static int
shell_is_gateway(const struct passwd *pw)
{
	const char *sh = pw->pw_shell != NULL && *pw->pw_shell != '\0' ? pw->pw_shell : "/bin/sh";
	struct stat st, self;

	return stat(sh, &st) == 0 && stat("/proc/self/exe", &self) == 0 &&
	    st.st_dev == self.st_dev && st.st_ino == self.st_ino;
}

/* The session's audit info and the core's origin, from what sshd handed us. */
static void
session_origin(struct ag_core_params *cp, struct ag_audit_info *info, const struct passwd *pw,
    const char *cmd, char *client, size_t clientlen)
{
	struct ag_session_origin *o = &cp->origin;
	struct ag_request req;

	client_from(getenv("SSH_CONNECTION"), client, clientlen);
	memset(info, 0, sizeof(*info));
	info->user = pw->pw_name;
	info->client = client[0] ? client : NULL;
	/* a terminal (ssh -t, or an interactive login) means the PTY path */
	ag_request_of(cmd, &req);
	info->mode = ag_request_mode(&req, isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
	memset(cp, 0, sizeof(*cp));
	cp->pw = pw;
	cp->tty = cmd == NULL && isatty(STDIN_FILENO);
	o->ssh_connection = getenv("SSH_CONNECTION");
	o->ssh_client = getenv("SSH_CLIENT");
	o->ssh_tty = getenv("SSH_TTY");
	o->term = getenv("TERM");
	o->lang = getenv("LANG");
	o->tty = isatty(STDIN_FILENO);
}

/*
 * No policy: the client learns only that it is not its fault; the admin,
 * in the log and in the audit of the last policy that loaded (lastgood.h),
 * what is wrong.  Called as the caller when --config is its own.
 */
static void
config_unloaded(const char *path, const struct ag_err *err, const struct ag_audit_info *info)
{
	struct ag_config *last;
	struct ag_err lerr;
	char msg[AG_ERR_MSG_MAX + 512];

	/* the destinations of the last policy that loaded, read as the
	 * policy itself was */
	last = ag_lastgood_load(path, &lerr);
	ag_privsep_as_gateway();
	fprintf(stderr, "agentgate: policy unavailable; the administrator has been told\n");
	ag_err_format(err, msg, sizeof(msg));
	ag_log(LOG_ERR, "policy not loaded: %s", msg);
	if (last == NULL)
		ag_log(LOG_WARNING, "config_error to syslog only: %s", lerr.msg);
	(void)ag_audit_config_error(info, NULL, last != NULL ? &last->gw.audit : NULL, path, msg);
	ag_config_free(last);
}

/*
 * Which key sshd accepted: only from the record sshd's own PAM stack made
 * for this connection, never the ExposeAuthInfo file (SSH_USER_AUTH), which
 * the agent can rewrite between two sessions of a connection.  A record
 * that cannot be trusted refuses the session (said and audited).
 */
static enum ag_sshbind_result
read_binding(const struct ag_config *cfg, const struct passwd *pw, struct ag_audit_info *info,
    char **auth_info, char *keyfp, size_t keyfplen, char *rhost, size_t rhostlen)
{
	enum ag_sshbind_result bound;
	struct ag_err err;

	ag_err_clear(&err);
	switch ((bound = ag_sshbind_read(pw->pw_name, auth_info, rhost, rhostlen, &err))) {
	case AG_SSHBIND_FOUND:
		if (ag_sshkey_fingerprint(*auth_info, keyfp, keyfplen) == 0)
			info->key = keyfp;
		break;
	case AG_SSHBIND_NONE:
		ag_log(LOG_INFO, "no key for this session: %s", err.msg);
		break;
	case AG_SSHBIND_BAD:
		fprintf(stderr, "agentgate: authentication failed: cannot use what sshd "
		    "recorded about this login\n");
		login_refused(cfg, info, "auth_info", err.msg, "malformed");
		break;
	}
	return bound;
}

/*
 * An account with identities whose login shell is not the gateway
 * (shell_is_gateway): the session is refused, said, logged and audited.
 */
static void
shell_refused(const struct ag_config *cfg, const struct passwd *pw,
    const struct ag_audit_info *info)
{
	char why[512 + PATH_MAX], self[PATH_MAX], *tok;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(why, sizeof(why), "account %s has identities but its login shell is "
	    "%s, not the gateway: another process of the account could take over "
	    "a session before the gateway starts (chsh -s %s %s; agentgate(8) "
	    "SECURITY)", pw->pw_name, *pw->pw_shell ? pw->pw_shell : "/bin/sh",
	    n > 0 ? self : "/usr/bin/agentgate", pw->pw_name);
	fprintf(stderr, "agentgate: refused: this account is not set up for "
	    "identities; the administrator has been told\n");
	ag_log(LOG_ERR, "session refused: %s", why);
	if ((tok = getenv("AGENTGATE_TOKEN")) != NULL) {
		explicit_bzero(tok, strlen(tok));
		unsetenv("AGENTGATE_TOKEN");
	}
	login_refused(cfg, info, "login_shell", why, "account_not_set_up");
}

/* How the session ended: the administrator's end is said, at a prompt on a
 * line of its own. */
static int
end_status(const struct ag_core *core, int status)
{
	char ended[1024];

	if (core->ended)
		return AG_STATUS_ENDED;
	if (ag_runner_terminating() && ag_live_ended_by(ended, sizeof(ended))) {
		fprintf(stderr, "%sagentgate: the administrator ended this session: %s\n",
		    isatty(STDERR_FILENO) ? "\n" : "", ended);
		return AG_STATUS_ENDED;
	}
	return status;
}

int
ag_cmd_session(int argc, char **argv)
{
	struct args a;
	struct ag_config *cfg = NULL;
	const struct ag_profile *profile;
	struct ag_core_params cp;
	struct ag_core core;
	struct ag_audit_info info;
	struct ag_frame frame;
	struct ag_pamauth *pam = NULL;
	struct ag_request req;
	struct ag_err err;
	struct passwd *pw;
	char client[160], keyfp[128], rhost[80], *auth_info = NULL, ended[1024];
	struct ag_standing standing;
	enum ag_sshbind_result bound;
	const char *cmd;
	int status = 1, began = 0, direct;

	ag_err_clear(&err);
	memset(&frame, 0, sizeof(frame));
	argv = ag_proctitle_init(argc, argv);
	if ((status = parse_args(argc, argv, &a)) != 0)
		return status;
	if (a.cmd != NULL && own_invocation(&a) < 0)
		return 2;
	status = 1;
	ag_log_open("agentgate", a.log_stderr, LOG_AUTHPRIV);
	/*
	 * Commands run as the same user as the gateway: without this they
	 * could read its memory (/proc/PPID/mem: PAM state, the validator key)
	 * or reopen its fds (/proc/PPID/fd: the audit log) wherever the
	 * sandbox is off or the kernel cannot scope ptrace.  Children become
	 * dumpable again only by exec, after dropping the group.
	 */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the commands' environment is built from policy (exec/session.c);
	 * this one is only what sshd and the client left us */
	if (ag_privsep_scrub_env(&err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}

	cmd = a.cmd != NULL ? a.cmd : getenv("SSH_ORIGINAL_COMMAND");
	errno = 0;
	if ((pw = getpwuid(getuid())) == NULL) {
		fprintf(stderr, "agentgate: cannot look up uid %ld\n", (long)getuid());
		return 1;
	}
	session_origin(&cp, &info, pw, cmd, client, sizeof(client));

	/* --config is the caller's word: a file it could not read itself is
	 * not one it may make us read.  The installed policy is root's and may
	 * be readable by the group alone, keys and token hashes with it. */
	if (strcmp(a.config_path, AG_DEFAULT_CONFIG) != 0)
		ag_privsep_as_caller();
	if ((cfg = ag_config_load(a.config_path, 0, &err)) == NULL) {
		config_unloaded(a.config_path, &err, &info);
		return 1;
	}
	ag_privsep_as_gateway();
	bound = read_binding(cfg, pw, &info, &auth_info, keyfp, sizeof(keyfp), rhost,
	    sizeof(rhost));
	if (bound == AG_SSHBIND_BAD)
		goto out;
	/*
	 * Where the client is: SSH_CONNECTION is sshd's only when sshd started
	 * us directly (the gateway as login shell, with a record of the
	 * connection); otherwise a shell in between, or the agent starting a
	 * gateway itself, could have set it.  Then the record's address, or
	 * "local" when there is no record.
	 */
	direct = shell_is_gateway(pw);
	if (bound != AG_SSHBIND_FOUND)
		snprintf(client, sizeof(client), "local");
	else if (!direct)
		snprintf(client, sizeof(client), "%s", rhost[0] ? rhost : "local");
	info.client = client;
	if (cfg->nidentities > 0 && (bound == AG_SSHBIND_FOUND || getenv("AGENTGATE_TOKEN")) &&
	    !direct) {
		shell_refused(cfg, pw, &info);
		goto out;
	}
	/* the address `from` and the token limit judge: sshd's, from the
	 * record; a gateway sshd did not start has none (SSH_CONNECTION is
	 * then whatever its starter put there) */
	pam = pam_begin(cfg, pw, auth_info, rhost, &info);
	if (pam == NULL && isatty(STDIN_FILENO))
		fprintf(stderr, "agentgate: no token is read from the terminal (another "
		    "process of the account could read it first): send it with "
		    "AGENTGATE_TOKEN (ssh -o SendEnv=AGENTGATE_TOKEN)\n");
	free(auth_info);
	auth_info = NULL;
	if (pam == NULL)
		goto out;
	info.identity = ag_pamauth_identity(pam);
	info.token = ag_pamauth_token(pam);
	if ((profile = ag_core_profile(cfg, a.forced, ag_pamauth_identity(pam),
	    ag_pamauth_profile(pam), pw, &err)) == NULL) {
		ag_err_print(stderr, &err);
		ag_log(LOG_WARNING, "session refused: %s", err.msg);
		goto out;
	}
	info.profile = profile->name;
	info.rollout = ag_profile_in_rollout(profile);
	/* a lock, or a policy changed since PAM judged the caller */
	ag_standing_begin(&standing, cfg, info.identity, pw->pw_name, info.key, info.token,
	    profile->name);
	if (ag_standing_check(&standing, ended, sizeof(ended))) {
		fprintf(stderr, "agentgate: refused: %s\n", ended);
		ag_log(LOG_WARNING, "session refused: %s", ended);
		login_refused(cfg, &info, "locked", ended, "locked");
		goto out;
	}
	ag_config_forget_tokens(cfg, info.identity);
	cp.cfg = cfg;
	cp.identity = info.identity;
	standing.as_caller = strcmp(a.config_path, AG_DEFAULT_CONFIG) != 0;
	cp.standing = &standing;
	cp.profile = profile;
	cp.config_from_caller = strcmp(a.config_path, AG_DEFAULT_CONFIG) != 0;
	if (ag_frame_open(&frame, cfg, &info, AG_FRAME_TELL | AG_FRAME_REAP, &err) < 0)
		goto out;
	cp.audit = frame.audit;
	if (ag_core_begin(&core, &cp, &err) < 0) {
		ag_err_print(stderr, &err);
		goto out;
	}
	began = 1;
	ag_frame_start(&frame);
	ag_frame_enter(&frame);

	ag_request_of(cmd, &req);
	status = end_status(&core, ag_front_serve(&core, &req));
	ag_frame_close(&frame, status, core.ncommands);
out:
	free(auth_info);
	if (began)
		ag_core_end(&core);
	ag_frame_free(&frame);
	ag_pamauth_end(pam);
	ag_config_free(cfg);
	return status;
}
