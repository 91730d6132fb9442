/*
 * egress.h - the session's egress proxy: the one way out of a sandboxed
 * session's network namespace.
 *
 * The sandbox makes the listeners inside the namespace (127.0.0.1 and ::1,
 * port AG_EGRESS_PORT, exec/sandbox.h); this process accepts on them from
 * outside it, in the host's network, as the account.  One port speaks HTTP
 * (CONNECT, and absolute-form requests for plain http://) and SOCKS5.
 * Each connection is judged by the profile's network.allow
 * (policy/netrules.h) before its name is resolved -- by the proxy, never
 * by the client -- and again for the address it resolved to; allowed, it
 * is relayed; either way it is one "net" audit record, with the seq of
 * the command line that was running when it was opened.  A session runs
 * one command line at a time and sweeps what it leaves behind, so that
 * command is the one whose process tree opened it.
 *
 * The proxy is a child of the gateway; each connection is handled by a
 * thread of its own, which writes the record when the connection ends.
 */
#ifndef AG_EGRESS_H
#define AG_EGRESS_H

#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/err.h"
#include "record/audit.h"

struct ag_egress;

/*
 * Start the proxy for profile p on listeners lfd[0 .. nl) (the caller
 * keeps its own copies).  audit may be NULL (no records).  NULL with err
 * when it cannot be started: the session's commands then have no network.
 */
struct ag_egress *ag_egress_start(const struct ag_config *cfg, const struct ag_profile *p,
	    struct ag_audit *audit, const int *lfd, int nl, struct ag_err *err);

/* The pid to spare in the gateway's sweeps (exec/runner.h). */
pid_t	ag_egress_pid(const struct ag_egress *e);

/*
 * A refused connection is one "net" record, for the first
 * AG_EGRESS_MAX_REFUSAL_RECORDS (63) of a line and
 * AG_EGRESS_MAX_SESSION_REFUSALS of a session (conn.h); past either, it
 * is counted: after ag_egress_line_end, how many of line seq's were not
 * recorded one by one, for its command record (0: none).
 */
unsigned long ag_egress_unrecorded(struct ag_egress *e, unsigned long seq);

/* The command line now running (its audit seq); 0 between lines. */
void	ag_egress_set_seq(struct ag_egress *e, unsigned long seq);

/*
 * The line's processes are gone (after the sandbox's sweep): what they
 * left waiting in the listeners' queues is accepted now, as theirs, before
 * this returns, so no connection of one line is taken for the next one's.
 * 0, or -1 when the proxy is gone.
 */
int	ag_egress_line_end(struct ag_egress *e);

/*
 * After the line with seq: each refused connection it made, once per
 * host and port, as a line for the agent ("agentgate: blocked connection
 * to example.org:443 (allowed here: ...)\n"), into buf (NUL-terminated,
 * cut at a whole line); when not all fit, or the proxy could not tell
 * them all, a last line "agentgate: and N more refused connections not
 * listed here ...".  The number of lines.
 */
size_t	ag_egress_refusals(struct ag_egress *e, unsigned long seq, char *buf, size_t len);

/* Stop accepting; connections already open end with their peers. */
void	ag_egress_stop(struct ag_egress *e);

#endif
