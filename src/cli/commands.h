/*
 * commands.h - the subcommands of the agentgate binary.  Each takes the
 * argv that starts at its own name and returns the process exit status.
 */
#ifndef AG_COMMANDS_H
#define AG_COMMANDS_H

int	ag_cmd_check(int argc, char **argv);	/* agentgate check   (cmd_check.c) */
/* what check says of a policy that loads but allows what cannot work or
 * opens more than it seems to (stderr; check and edit) */
struct ag_config;
void	ag_check_warnings(const struct ag_config *cfg, const char *path);
int	ag_cmd_explain(int argc, char **argv);	/* agentgate explain (cmd_explain.c) */
int	ag_cmd_doctor(int argc, char **argv);	/* agentgate doctor  (cmd_doctor.c) */
int	ag_cmd_setup(int argc, char **argv);	/* agentgate setup   (cmd_setup.c) */

/* What the doctor looks at; NULL sshd_config and pam_file: sshd's own. */
struct ag_doctor_opts {
	const char	*config;	/* the policy */
	const char	*user;		/* the agent account */
	const char	*sshd;		/* the sshd program */
	const char	*sshd_config;
	const char	*pam_file;	/* sshd's PAM service file */
};
/* Every check, printed; 0 when all pass, 1 when one failed, 2 when it cannot run. */
int	ag_doctor_run(const struct ag_doctor_opts *o);
/* A name useradd would take for an account or group. */
int	ag_account_name_ok(const char *name);
int	ag_cmd_serve(int argc, char **argv);	/* agentgate serve   (cmd_serve.c) */
int	ag_cmd_audit(int argc, char **argv);	/* agentgate audit   (cmd_audit.c) */
/* agentgate audit show (cmd_audit_show.c); argv starts at "show" */
int	ag_cmd_audit_show(int argc, char **argv);
int	ag_cmd_replay(int argc, char **argv);	/* agentgate replay  (cmd_replay.c) */
int	ag_cmd_policy(int argc, char **argv);	/* agentgate policy suggest (cmd_policy.c) */
/* agentgate authorized-keys, sshd's AuthorizedKeysCommand (cmd_authkeys.c) */
int	ag_cmd_authkeys(int argc, char **argv);
int	ag_cmd_edit(int argc, char **argv);	/* agentgate edit    (cmd_edit.c) */
int	ag_cmd_token(int argc, char **argv);	/* agentgate token   (cmd_token.c) */
/* agentgate sessions, agentgate terminate (cmd_sessions.c) */
int	ag_cmd_sessions(int argc, char **argv);
int	ag_cmd_terminate(int argc, char **argv);
/* agentgate approvals, approve, refuse (cmd_approvals.c) */
int	ag_cmd_approvals(int argc, char **argv);
int	ag_cmd_approve(int argc, char **argv);
int	ag_cmd_refuse(int argc, char **argv);
/* agentgate join (cmd_join.c) */
int	ag_cmd_join(int argc, char **argv);
/* agentgate lock, agentgate unlock (cmd_lock.c) */
int	ag_cmd_lock(int argc, char **argv);
int	ag_cmd_unlock(int argc, char **argv);

/*
 * End each live session match() picks (1, with the reason its client is
 * told in why): audited as ended by `by`, signalled, killed after wait_s
 * seconds.  The number matched; *failed, those that could not be signalled.
 */
struct ag_live_entry;
int	ag_sessions_end(int (*match)(const struct ag_live_entry *, void *, char *, size_t),
	    void *arg, const char *config, const char *by, long wait_s, int *failed);
/* End the live sessions of policy file real (resolved) that policy now
 * revokes, judged against their identities as was had them; by says who. */
int	ag_sessions_end_revoked(const struct ag_config *was, const struct ag_config *now,
	    const char *real, const char *by);
/* 0 when running as root; -1 after saying that WHAT is root's only. */
int	ag_cli_root_only(const char *what);
/* The gateway itself: ForceCommand, -c, login shell, REPL. */
#include "front/forcecommand.h"

#endif
