/*
 * repl.h - the session core and its read loop.
 *
 * ag_repl_command() is the one path every command line takes, whatever
 * front end read it: parse, decide (ag_policy_decide), record (audit), then
 * run it — in the gateway for a lone cd/pushd/popd/dirs, else in a fresh
 * runner — and apply the captured state.  ag_repl_loop() reads command
 * lines: with a terminal, through libedit with a prompt, in-memory history
 * and PS2 continuation; without one, silently, line by line, joining lines
 * while the parser says the input is incomplete.
 */
#ifndef AG_REPL_H
#define AG_REPL_H

#include <stddef.h>

#include "record/audit.h"
#include "common/config.h"
#include "exec/session.h"

struct ag_rec;

/* The status of a command that was not run: refused by the policy, a file
 * transfer request, or an audit record that could not be written. */
#define AG_STATUS_DENIED	126
#define AG_REPL_MAX_COMMAND	(1024 * 1024)	/* bytes per command, continuations included */

struct ag_repl {
	const struct ag_config	*cfg;
	const struct ag_profile	*profile;
	struct ag_session	*sess;
	struct ag_audit		*audit;		/* may be NULL: no records */
	int			 tty;		/* read through libedit with a prompt */
	int			 cmd_in;	/* stdin given to commands */
	unsigned long		 ncommands;	/* decisions made */
	struct ag_sandbox	*sandbox;	/* prepared on first use; freed by the owner */
	int			 sandbox_noted;	/* best_effort note audited */
	int			 pty;		/* stdin is a terminal: each command in a PTY */
	struct ag_rec		*rec;		/* the session's recording, or NULL; owned by
						 * the caller (closed, and set to NULL here
						 * when it fails and the audit is optional) */
	char			 rec_error[AG_ERR_MSG_MAX];	/* why rec is gone, or "" */
	char			 unread[4096];	/* typed during a PTY command that ended first; */
	size_t			 unread_len;	/* the prompt reads it next */
};

/*
 * Decide on, record and run one command line.  Returns the status the
 * line ends with ($? for the next one).  *end_session is set to 1 when
 * the line was a bare `exit [N]` (the REPL then ends with that status) or
 * the client went away.
 */
int	ag_repl_command(struct ag_repl *r, const char *line, size_t len, int *end_session);

/* Read and run commands until EOF, a bare exit, idle timeout or hangup.
 * Returns the session's exit status. */
int	ag_repl_loop(struct ag_repl *r);

/*
 * Make r->sandbox fit the session's current profile, home, cwd and PATH
 * (prepared again only when they changed); audits a best_effort note once
 * per session.  -1 with err when commands must be refused.
 */
int	ag_repl_sandbox(struct ag_repl *r, struct ag_err *err);

#endif
