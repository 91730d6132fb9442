/*
 * conn.h - one connection through the egress proxy (egress.h), in a
 * process of its own: what the client asks for (HTTP CONNECT, a plain
 * http:// request, SOCKS5), the verdict, the name resolved by the proxy,
 * the relay, and the "net" audit record when it ends.  Internal to
 * egress/.
 */
#ifndef AG_EGRESS_CONN_H
#define AG_EGRESS_CONN_H

#include "common/config.h"
#include "record/audit.h"

/*
 * The "net" records of refused connections, counted against their caps
 * (egress.h); in memory the gateway shares, changed by the proxy's
 * threads under one lock, read by the gateway once a line has ended.
 * The per-line counts are the running line's: a refusal of a line that
 * has ended (its name resolved after the line's settle) counts against
 * the session's cap alone, and leaves the running line's counts as they
 * are.
 */
struct egress_caps {
	unsigned long	seq;		/* the line the per-line counts are of */
	unsigned long	line_recorded, line_dropped;
	unsigned long	line_unreported;	/* not told the gateway: its pipe full */
	unsigned long	sess_recorded, sess_dropped;
};

struct egress_ctx {
	const struct ag_config	*cfg;
	const struct ag_profile	*p;
	struct ag_audit		*audit;		/* NULL: no records */
	int			 report_fd;	/* refusals for the gateway */
	struct egress_caps	*caps;		/* NULL: no caps */
	const volatile unsigned long *running;	/* the line now running; 0 none */
};

/* "net" records of refused connections: per command line, as for refused
 * execs (execguard.h), and per session; past either, a count */
#define AG_EGRESS_MAX_REFUSAL_RECORDS	63
#define AG_EGRESS_MAX_SESSION_REFUSALS	1024

/* Connections one session may have open through the proxy at once. */
#define AG_EGRESS_MAX_CONN	256

/* Serve the accepted connection fd, opened while line seq ran; closes it.
 * Runs in a thread of the proxy's. */
void	ag_egress_conn(const struct egress_ctx *ctx, int fd, unsigned long seq);

/* The proxy is stopping: every connection being served ends now and
 * writes its record; none starts. */
void	ag_egress_conn_stop_all(void);

/* The proxy is going now: a record for each connection still being
 * resolved or connected (its thread cannot be woken), as allowed, with
 * that as its error; its thread then writes none. */
void	ag_egress_conn_record_pending(void);

/* Refuse fd at once: max connections are open already (recorded, with the
 * number of refusals since the last such record). */
void	ag_egress_conn_busy(const struct egress_ctx *ctx, int fd, unsigned long seq, int max,
	    unsigned long quiet);

/* A refusal of line seq's that is not recorded one by one (the ones between
 * two busy records): counted, as one past the caps is. */
void	ag_egress_conn_uncounted(const struct egress_ctx *ctx, unsigned long seq);

#endif
