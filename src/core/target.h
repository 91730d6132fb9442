/*
 * target.h - which host a command line is for (bastion mode): this one,
 * or an upstream of the policy's `upstreams:` the caller's profile lists
 * in `targets:`.
 *
 *   @NAME CMD    CMD on NAME, once
 *   @NAME        NAME becomes the session's target (the REPL's prompt says
 *                so); `@local` comes back
 *
 * Everything about a line on a target happens at the gateway as for a
 * local one -- parse, decide, ask, admit, record -- against the target's
 * profile and the target's tracked state (its cwd, exported environment
 * and $?, one struct ag_session per target, kept between lines exactly as
 * locally); only the run stage differs: the validated bytes go to the
 * upstream in one exec request, inside the same runner script the local
 * runner uses, whose EXIT trap leaves the environment capture in a file of
 * the session's own private directory there, read back on the same
 * connection.  The upstream account's shell must be a POSIX shell, and
 * the command runs under /bin/bash there, so it means there what it meant
 * to the gateway's parser.
 */
#ifndef AG_TARGET_H
#define AG_TARGET_H

#include <stddef.h>

#include "core/core.h"
#include "exec/runner.h"
#include "upstream/upstream.h"

struct ag_target {
	const struct ag_upstream *up;
	struct ag_upconn	*conn;		/* NULL until first use, or after a failure */
	struct ag_upconn_info	 info;		/* fingerprints of the last connect */
	struct ag_session	 sess;		/* its tracked state, once opened */
	int			 opened;	/* sess is valid */
	char			*statedir;	/* private directory there, for the capture */
	struct ag_ask		*ask;		/* its profile's validator, or NULL */
};

/*
 * When line begins with an @NAME word: 1, name copied (NUL-terminated),
 * *rest the offset of what follows it (blanks skipped).  0 otherwise; -1
 * for an @word that is not a valid name (too long, or bad characters).
 */
int	ag_target_word(const char *line, size_t len, char *name, size_t namesz, size_t *rest);

/*
 * The target called name for this session, connected and with its state:
 * NULL for "local"; NULL with *refused set and err when the caller's
 * profile does not list it, the policy has no such upstream, or it cannot
 * be reached (err says which, with the host key's fingerprint).
 */
struct ag_target *ag_target_get(struct ag_core *core, const char *name, int *refused,
	    struct ag_err *err);

/* The line's context becomes t's (profile, state, validator), and back. */
struct ag_target_saved {
	const struct ag_profile	*profile;
	struct ag_session	 sess;
	struct ag_ask		*ask;
};
void	ag_target_enter(struct ag_core *core, struct ag_target *t, struct ag_target_saved *sv);
void	ag_target_leave(struct ag_core *core, struct ag_target *t, struct ag_target_saved *sv);

/*
 * The run stage on t (entered): the command with the tracked state, the
 * client's stdio, the profile's limits; r as ag_run() fills it, the
 * capture included when capture is set.  0 started, -1 with err.
 */
int	ag_target_run(struct ag_core *core, struct ag_target *t, const char *line, size_t len,
	    int capture, struct ag_run_result *r, int *cols, int *rows, struct ag_err *err);

/* The tracked state of the session's target (the prompt shows it). */
const struct ag_session *ag_target_session(const struct ag_core *core);

/* Every connection closed, every target's state freed. */
void	ag_targets_end(struct ag_core *core);

#endif
