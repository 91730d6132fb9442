/*
 * core.h - the session core: what happens to a command line between the
 * front end that read it and the result it writes back, the same for every
 * front end (front/forcecommand.c under sshd, front/server.c for `agentgate
 * serve`, and `agentgate explain`, which stops after the decision).
 *
 *   who      the front end: PAM, then ag_core_profile()
 *   begin    ag_core_begin(): the tracked state for the account
 *   serve    the front end's (front/request.h, ag_front_serve): the
 *            channel's request classified once, then one command, the
 *            REPL (front/repl.c reads lines and hands each to
 *            ag_core_command), or a program's protocol (front/agentproto.h:
 *            MCP, JSON Lines); the core never calls up into front/
 *   command  ag_core_command() in core/command.c, stage by stage:
 *              parse   the bash grammar (parse/)
 *              decide  the profile's verdict (policy/); a file-transfer
 *                      request is a verdict too
 *              ask     what the rules leave unknown, under `unknown: ask`:
 *                      the validator's verdict (validate/)
 *              admit   the audit record can be written before anything runs
 *              run     in the gateway (cd, exit), in a runner shell under
 *                      the sandbox (exec/), or a transfer program
 *              apply   the captured cwd and environment, exec refusals
 *              record  the audit record of the result (record/)
 *   end      ag_core_end()
 *
 * The core writes to fds 0-2 only: command output to 1 and 2, its own
 * refusals and notices to 2 as "agentgate: ...", and commands read 0.  A
 * front end that is not a process's stdio (a libssh channel) forks a
 * session process and puts the channel on fds 0-2, as sshd's session child
 * does.  Writing session_start and session_end stays with the front end,
 * which owns the audit.
 */
#ifndef AG_CORE_H
#define AG_CORE_H

#include <pwd.h>
#include <stddef.h>

#include "common/config.h"
#include "common/err.h"
#include "exec/session.h"
#include "policy/policy.h"
#include "record/audit.h"

struct ag_ask;
struct ag_egress;
struct ag_rec;
struct ag_sandbox;
struct ag_standing;
struct ag_target;

/* The status of a command that was not run: refused by the policy, a file
 * transfer that could not start, or an audit record that could not be
 * written. */
#define AG_STATUS_DENIED	126
/* The administrator ended the session (terminate, lock, a revocation, the
 * gateway removed): the reason was printed. */
#define AG_STATUS_ENDED		253
#define AG_CORE_MAX_COMMAND	(1024 * 1024)	/* bytes per command, continuations included */

/* ag_core_command() flags */
#define AG_CORE_REQUEST		0x1	/* the line is the channel's exec/subsystem
					 * request, which may be a file transfer */

/*
 * How the last command line ended, for a front end that reports it as data
 * (agentproto.h) rather than as the terminal shows it.
 */
struct ag_core_outcome {
	char		decision[16];	/* allow, deny, ask-allow, ask-deny; "" = no command */
	char		reason[2304];
	char		rule[256];
	int		ran;		/* the fields below are meaningful */
	int		status;		/* $? */
	int		signal;		/* that ended the command, or 0 */
	int		timed_out;
	int		cancelled;	/* ended by ag_runner's SIGUSR1 */
	int		truncated;
	long long	duration_ms;
	/* where the line ran: this host's or a target's (core/target.h) */
	char		cwd[4096];	/* its working directory after the line */
	const struct ag_profile *profile;	/* the profile that judged it */
};

struct ag_core {
	const struct ag_config	*cfg;
	const struct ag_profile	*profile;
	const char		*identity;	/* PAM's (the params'), or NULL */
	struct ag_session	 sess;		/* tracked cwd, environment, $? */
	struct ag_audit		*audit;		/* the front end's; NULL: no records */
	int			 tty;		/* read through libedit with a prompt */
	int			 cmd_in;	/* stdin given to commands */
	/* the MCP write_file tool's file (~/ expanded) while its `cat > PATH`
	 * is judged and run: the runner writes cmd_in there itself (runner.h) */
	const char		*write_path;
	int			 pty;		/* stdin is a terminal: each command in a PTY */
	unsigned long		 ncommands;	/* decisions made */
	struct ag_sandbox	*sandbox;	/* prepared on first use */
	struct ag_egress	*egress;	/* the sandbox's proxy, or NULL */
	struct ag_ask		*ask;		/* the profile's validator, or NULL */
	int			 sandbox_noted;	/* best_effort note audited */
	/* the persistent /tmp past limits.tmp_disk, or not measurable:
	 * commands but those that clean up are refused (command.c) */
	int			 tmp_measured;
	int			 tmp_over;
	long long		 tmp_next_ms;	/* no walk after a command before */
	char			 tmp_why[512];
	struct ag_rec		*rec;		/* the session's recording, or NULL */
	char			 rec_error[AG_ERR_MSG_MAX];	/* why rec is gone, or "" */
	char			 unread[4096];	/* typed during a PTY command that ended first; */
	size_t			 unread_len;	/* the prompt reads it next */
	struct ag_core_outcome	*outcome;	/* filled by each line, or NULL */
	long			 timeout;	/* seconds for the next lines, below the
						 * profile's limit; 0 = the profile's */
	/*
	 * Bastion mode (core/target.h): profile, sess and ask above are the
	 * context of the host the current line is for; the caller's own
	 * profile decides which hosts those may be.
	 */
	const struct ag_profile	*caller;
	struct ag_target	*targets;	/* one per upstream, opened on first use */
	size_t			 ntargets;
	struct ag_target	*at;		/* the session's target; NULL: this host */
	struct ag_standing	*standing;	/* looked at before each line; NULL: never */
	int			 ended;		/* the standing check ended the session */
	char			 ended_why[1024];	/* why, as its client was told */
	/* approvals (core/approval.h): the rules a person approved for the
	 * rest of this session (--session), and the agent's justification
	 * for the next line that waits (request_access), or NULL */
	char			**approved_rules;
	size_t			 napproved;
	const char		*justification;
	struct ag_core_pending	*pending;	/* requests filed ahead (request_access) */
};

/* What a front end knows about the session it starts. */
struct ag_core_params {
	const struct ag_config	*cfg;
	const struct ag_profile	*profile;
	const struct passwd	*pw;		/* the account commands run as */
	const char		*identity;	/* who the caller is, or NULL; outlives
						 * the session (its persistent /tmp) */
	struct ag_session_origin origin;	/* what sshd (or the client) handed over */
	struct ag_audit		*audit;		/* NULL: no records (explain) */
	int			 tty;		/* commands are typed at a prompt */
	int			 decide_only;	/* explain: no runner, nothing runs */
	int			 ask;		/* decide_only: still make the validator
						 * (explain --ask) */
	struct ag_standing	*standing;	/* the caller's, checked before each line */
	int			 config_from_caller;	/* the policy is the caller's
						 * --config: its secrets are read as the caller */
};

/*
 * The caller's profile, the same way for every front end: forced (the
 * administrator's --profile on the ForceCommand line; NULL for none), else
 * the profile cfg gives the identity PAM established (AGENTGATE_IDENTITY
 * from pam_agentgate; NULL for none) -- from cfg, so that under serve the
 * identities and the profiles come from one load; an identity cfg does not
 * have, or has disabled, is refused -- else the `users:` map (the user by
 * name, then the first %group the user belongs to), else
 * gateway.default_profile.  NULL with err when none applies: the session
 * is refused.
 */
const struct ag_profile *ag_core_profile(const struct ag_config *cfg, const char *forced,
	    const char *pam_identity,
	    const char *pam_profile, const struct passwd *pw, struct ag_err *err);

/*
 * Start a session for p->pw: the tracked state (home as cwd, the starting
 * environment, env.set) and, unless decide_only, the runner's signal
 * handling.  0, or -1 with err (nothing to free).
 */
int	ag_core_begin(struct ag_core *core, const struct ag_core_params *p, struct ag_err *err);

/* Every descendant reaped, the sandbox and the tracked state freed. */
void	ag_core_end(struct ag_core *core);

/*
 * 1 when the caller lost its standing (core/standing.h) since the session
 * began: the client has been told and the audit has it; the session ends.
 * (void *: the runner's and the upstream relay's callback.)
 */
int	ag_core_revoked(void *core);

/*
 * One command line through every stage (see above).  flags: AG_CORE_*.
 * Returns the status the line ends with ($? for the next one).
 * *end_session is set to 1 when the line was a bare `exit [N]`, the client
 * went away or the session must end.
 */
int	ag_core_command(struct ag_core *core, const char *line, size_t len, int flags,
	    int *end_session);

/*
 * What a front end found parsing line itself (the REPL, to know whether
 * the input is complete): ag_sh_parse()'s status, err and tree, which
 * stays the caller's.  ag_core_command_parsed() takes it for the line's
 * parse instead of parsing the line again, unless an @NAME prefix is taken
 * off first; a syntax error is refused in err's words.
 */
struct ag_core_parsed {
	enum ag_sh_status	 status;
	struct ag_sh_node	*tree;
	struct ag_err		 err;
};

int	ag_core_command_parsed(struct ag_core *core, const char *line, size_t len, int flags,
	    const struct ag_core_parsed *parsed, int *end_session);

/*
 * The decide stage alone, in the session's current context, as
 * ag_core_command() would decide line (explain).  0, or -1 on an internal
 * error (d then says DENY).  ag_decision_free(d) afterwards.
 */
int	ag_core_decide(const struct ag_core *core, const char *line, size_t len,
	    struct ag_decision *d);

/*
 * The ask stage alone for a line d decided ASK (explain --ask): the
 * validator's answer in r.  0, or -1 when the profile has no validator.
 */
struct ag_ask_result;
int	ag_core_ask(struct ag_core *core, const char *line, size_t len,
	    const struct ag_decision *d, struct ag_ask_result *r);

/* Seconds the next command may run: the profile's limit, or the front
 * end's shorter core->timeout; 0 = none. */
long	ag_core_line_timeout(const struct ag_core *core);

/*
 * Make core->sandbox fit the session's current profile, home, cwd and PATH
 * (prepared again only when they changed); audits a best_effort note once
 * per session.  -1 with err when commands must be refused.
 */
int	ag_core_sandbox(struct ag_core *core, struct ag_err *err);

#endif
