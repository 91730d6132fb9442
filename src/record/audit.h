/*
 * audit.h - the audit trail: one JSON object per line (built with json-c),
 * to a file, syslog and/or an HTTP collector as gateway.audit configures.
 *
 * File sink: opened once per session with O_APPEND, created 0600 (0640 and
 * group-owned by audit.group when set); its directory must not be group-
 * or world-writable.  Every record is a single write(2), so records from
 * concurrent sessions never interleave.  Syslog sink: the configured
 * facility, priority info.
 *
 * HTTP sink (audit.http_url): each record, the same line the file gets, is
 * POSTed with libcurl as application/x-ndjson (1 s to connect, 2 s in all,
 * no redirects, http/https only, TLS verified, no proxy from the
 * environment).  A record the collector does not take (no answer, not 2xx)
 * is appended to the spool, audit.spool or else the file sink's directory:
 * spool-<uid>.jsonl, 0600, one write per record, at most AG_AUDIT_SPOOL_MAX
 * bytes.  While records wait there, new ones queue behind them; the next
 * record after the collector is back sends them first, oldest first, in
 * batches, then drops them; a session that ends while records wait sends
 * them before it ends, so none is left for a session that may not come.  One session drains at a time (a lock file,
 * spool-<uid>.lock, next to the spool); the others keep appending.
 *
 * A record counts as written when the file, the collector or the spool took
 * it; syslog does not count, as nothing vouches it was kept.
 *
 * Fields (design.md "Audit record"): ts, event, session, user, identity,
 * profile, client, key, token, mode, and per event: command, cwd, decision, reason,
 * rule, validator (an object: name, kind, model, prompt_sha256, verdict,
 * reason, error_class, error, latency_ms, http_status, cache, retried,
 * confidence, approver, approval_ms), exit, signal, duration_ms, bytes_out, truncated, cwd_after.
 * Absent values are left out.  Nothing secret is ever passed in here.
 *
 * Records in the file sink are hash-chained ("prev", "seed": chain.h);
 * the collector and syslog get the same lines.
 */
#ifndef AG_AUDIT_H
#define AG_AUDIT_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"

struct ag_audit;

/* The spool stops taking records at this size (and says so). */
#define AG_AUDIT_SPOOL_MAX	((unsigned long long)64 * 1024 * 1024)

/* Who and what the session is; copied by ag_audit_open(). NULL = absent. */
struct ag_audit_info {
	const char	*user;
	const char	*identity;
	const char	*profile;
	const char	*client;	/* "address:port" */
	const char	*key;		/* "SHA256:..." of the key the caller used; NULL = none */
	const char	*token;		/* "current" or "previous" (a rotation's, before its
					 * until): the token it logged in with; NULL = none */
	const char	*mode;		/* exec, repl, ... */
	int		 rollout;	/* the profile, or a rule of it, says
					 * enforce: audit (session_start says so) */
};

struct json_object;

/* Where an upstream command went (bastion mode): the record's "target". */
struct ag_audit_target {
	const char		*name;		/* the upstream's name in the policy */
	const char		*host;
	int			 port;
	const char		*user;
	const char		*hostkey_sha256;	/* "SHA256:...", the key it offered */
	const char		*key_sha256;	/* the gateway's key it logged in with */
	int			 pty_cols, pty_rows;	/* 0: no PTY upstream */
	const char		*error;		/* why it could not be reached, or NULL */
};

struct ag_audit_cmd {
	unsigned long		 seq;		/* set by ag_audit_command_start */
	const char		*command;	/* as given, secrets masked (redact.h) */
	size_t			 command_len;
	/*
	 * When masking changed the line: the exact line, whose SHA-256 is
	 * recorded ("command_sha256"), and what it runs as its parse says
	 * ("programs", each masked alone), so that no mask can hide a program.
	 */
	const char		*line;
	size_t			 line_len;
	char *const		*programs;
	size_t			 nprograms;
	const char		*cwd;
	const char		*decision;	/* allow, deny, ask-allow, ask-deny */
	const char		*reason;
	const char		*rule;
	const char		*rule_label;	/* rule, its profile rules shown with
						 * their program, or NULL */
	struct json_object	*validator;	/* the validator's answer in its one
						 * form (validator.h ag_ask_json), or NULL */
	const struct ag_audit_target *target;	/* an upstream's, or NULL: this host */
	/* a line that waited for a person (approvals.h): the record's
	 * "approval" object; approval_id NULL: none */
	const char		*approval_id;
	const char		*approver;	/* who answered; NULL: nobody (timeout) */
	const char		*approval_scope;	/* once, session, for (approved) */
	long long		 approval_ms;	/* how long the line waited */
	int			 ran;		/* the fields below are meaningful */
	int			 exit_status;
	int			 signal;	/* 0 = none */
	long long		 duration_ms;
	unsigned long long	 bytes_out;
	int			 truncated;
	const char		*cwd_after;
	/* refused network connections past the cap on their "net" records
	 * (egress.h): counted here, not recorded one by one; 0: none */
	unsigned long		 net_unrecorded;
	/*
	 * What actually ran (the exec supervisor's, developer tier): the
	 * distinct files it let run, by path, never their argv ("execs"),
	 * and the execs past the list ("execs_unlisted").  Whatever the
	 * line's text shows or masks, the program that ran is here.
	 */
	int			 execs_known;	/* the fields below are meaningful */
	char *const		*execs;
	size_t			 nexecs;
	unsigned long		 execs_unlisted;
};

/*
 * Open the sinks of conf (which may configure none).  Returns NULL only
 * when out of memory.  A file sink that cannot be opened does not make this
 * fail: ag_audit_ready() then reports it, so the caller can decide (a
 * required audit refuses commands, an optional one only warns).
 */
struct ag_audit *ag_audit_open(const struct ag_audit_conf *conf,
	    const struct ag_audit_info *info, struct ag_err *err);
void	ag_audit_close(struct ag_audit *a);

/*
 * For unit tests: conf's sinks (conf may be NULL) and, after them, one
 * that keeps every record in memory, the same line the others got;
 * ag_audit_memory() is what it holds so far ("" for none).  The memory
 * sink does not count as writing a record: ag_audit_ready() and a
 * required audit answer as conf's sinks alone would.
 */
struct ag_audit *ag_audit_open_memory(const struct ag_audit_conf *conf,
	    const struct ag_audit_info *info, struct ag_err *err);
const char *ag_audit_memory(const struct ag_audit *a);

/*
 * 0 when a record would be written (see above): the file sink is usable, or
 * the collector took the last record (or was not tried yet), or its spool
 * has room; also 0 when no file or collector is configured.  -1 with err
 * saying what failed otherwise.
 */
int	ag_audit_ready(const struct ag_audit *a, struct ag_err *err);
/*
 * In a child that writes records of its own beside the parent (the egress
 * proxy's connections): the sinks' own files and connections, so that
 * the file's lock and the chain hold between them.
 */
void	ag_audit_forked(struct ag_audit *a);

/* Whether conf says a record that cannot be written stops the command. */
int	ag_audit_required(const struct ag_audit *a);
const char *ag_audit_session_id(const struct ag_audit *a);
/* Who the session is, as ag_audit_open() was told (NULL: absent). */
void	ag_audit_who(const struct ag_audit *a, const char **user, const char **identity,
	    const char **client);

/*
 * Each returns 0 when the record was written (file, collector or spool),
 * else -1 with err; a sink that failed while another took it is logged.
 */
int	ag_audit_session_start(struct ag_audit *a, struct ag_err *err);
/*
 * Write-ahead: the decision for a command about to run, as event
 * "command_start" with a per-session "seq", on the disk (fdatasync) before
 * this returns; the "command" record written after the run repeats the
 * decision with the same seq and adds the result.  A command_start without
 * its command record is a command the gateway never saw end (killed).
 */
int	ag_audit_command_start(struct ag_audit *a, struct ag_audit_cmd *c, struct ag_err *err);
int	ag_audit_command(struct ag_audit *a, const struct ag_audit_cmd *c, struct ag_err *err);
int	ag_audit_session_end(struct ag_audit *a, int status, unsigned long ncommands,
	    struct ag_err *err);
/*
 * The session_end of session (another process's: its gateway is gone,
 * record/live.h), which a (opened with the session's who) writes in the
 * gateway's stead: "reason": "gateway_lost", a "detail" naming the
 * gateway's pid and start (since), and the "witness" that saw it gone.
 * No exit, duration or count: nobody who saw it knows them.
 */
int	ag_audit_session_lost(struct ag_audit *a, const char *session, long pid,
	    const char *since, const char *witness, struct ag_err *err);
/*
 * The session's recording (pty.h, recording.h), named by session_end as
 * "recording", and why it stopped or never started ("recording_error").
 * Both copied; NULL = absent.  0, or -1 when out of memory.
 */
int	ag_audit_set_recording(struct ag_audit *a, const char *path, const char *error);
/* The mode later records name (a serve channel that speaks MCP says "mcp"). */
int	ag_audit_set_mode(struct ag_audit *a, const char *mode);

/*
 * A record that is not about one command, for front ends with more to say
 * (the built-in server): event "auth_failure" (request = the method, e.g.
 * "publickey"), "channel_request" (request = "pty-req", "env LANG",
 * "tcpip-forward", ...), with decision (allow, deny) and reason.  NULL
 * fields are left out.  0 when the record was written, else -1.
 */
int	ag_audit_event(struct ag_audit *a, const char *event, const char *request,
	    const char *decision, const char *reason, struct ag_err *err);

/*
 * A login refused: event "auth_failure", decision "deny", request (the
 * stage or method), reason (the detail) and reason_class, one word of a
 * fixed set for the admin's queries (agentgate(8) AUDIT RECORDS); NULL
 * fields are left out.  The client is never told any of it.
 */
int	ag_audit_auth_failure(struct ag_audit *a, const char *request, const char *reason,
	    const char *reason_class, struct ag_err *err);

/*
 * Developer tier: an exec inside the tree of the command line `command`
 * that a deny rule refused (execpolicy.h): event "exec_denied" with the
 * program's path, its argv, reason and rule; decision "deny", or
 * "would_deny" for one a rule in rollout let through (would).
 */
int	ag_audit_exec_denied(struct ag_audit *a, const char *command, size_t command_len,
	    const char *path, char *const *argv, size_t argc, const char *reason,
	    const char *rule, int would, struct ag_err *err);

/*
 * A line filed for a person's approval (approvals.h): event
 * "approval_requested" with the request's id, the rule that holds it, the
 * command, the approvers it waits for and the agent's justification
 * (NULL: none).  The command's own record later carries the answer.
 */
int	ag_audit_approval_requested(struct ag_audit *a, const char *id, const char *rule,
	    const char *command, size_t command_len, const char *approvers,
	    const char *justification, struct ag_err *err);

/*
 * A person's answer to a request (`agentgate approve` / `refuse`), in the
 * audit of the session that asked: event "approval_answer" with request
 * (that session's id), id, answer ("approved", "refused"), scope (once,
 * session, for; an approval's), until (--for: seconds since the epoch, 0:
 * none), approver and reason (a refusal's).  NULL fields are left out.
 */
int	ag_audit_approval_answer(struct ag_audit *a, const char *session, const char *id,
	    int approved, const char *scope, long long until, const char *approver,
	    const char *reason, struct ag_err *err);

/*
 * A connection through the session's egress proxy (egress/egress.h):
 * event "net", with the seq of the command line that opened it, what it
 * asked for, the address the proxy resolved it to, the verdict and the
 * rule, and the bytes each way.  NULL fields are left out.
 */
struct ag_audit_net {
	unsigned long		 seq;
	const char		*proto;		/* connect, http, socks5 */
	const char		*host;
	int			 port;
	const char		*address;	/* "ADDR:PORT" it went to, or was refused */
	const char		*method;	/* plain HTTP */
	const char		*path;		/* plain HTTP, as requested */
	const char		*decision;	/* allow, deny */
	const char		*reason;
	const char		*rule;
	const char		*error;		/* allowed, but it could not be reached */
	unsigned long long	 bytes_up, bytes_down;
	long long		 duration_ms;
};
int	ag_audit_net(struct ag_audit *a, const struct ag_audit_net *n, struct ag_err *err);

/*
 * The policy at path could not be loaded (message: the loader's error) by
 * the gateway (request NULL), sshd's key lookup ("authorized-keys") or the
 * PAM module ("pam"): event "config_error", decision "deny", with
 * "config" the policy's path, to the audit destinations of the
 * last policy that loaded (last_good: common/lastgood.h; NULL when none
 * is kept), the hash-chained file included, and to syslog (last_good's
 * facility, else authpriv).  0 when the file or the collector took it,
 * -1 when only syslog could have.
 */
int	ag_audit_config_error(const struct ag_audit_info *info, const char *request,
	    const struct ag_audit_conf *last_good, const char *path, const char *message);

#endif
