/*
 * agentproto_int.h - between the pump (agentproto.c) and the protocols it
 * carries (mcp.c, jsonl.c).  Not an interface for anything else.
 */
#ifndef AG_AGENTPROTO_INT_H
#define AG_AGENTPROTO_INT_H

#include <stddef.h>

#include <json-c/json.h>

#define AG_PROTO_LINE_MAX	((size_t)2 * 1024 * 1024)	/* bytes per request line */
#define AG_PROTO_COMMAND_MAX	((size_t)256 * 1024)		/* bytes per command */
#define AG_PROTO_INPUT_MAX	((size_t)1024 * 1024)		/* a call's stdin (write_file) */
#define AG_PROTO_OUTPUT_MAX	((size_t)1024 * 1024)		/* kept per stream per call */
#define AG_PROTO_QUEUE_MAX	64				/* calls waiting their turn */
#define AG_PROTO_PROGRESS_MS	1000				/* between progress notes */

struct ag_pump;

/* What the gateway is asked to do with a call's text. */
enum ag_call_kind {
	AG_CALL_RUN = 'R',		/* a command line, as typed */
	AG_CALL_EXPLAIN = 'E',		/* the decision alone */
	AG_CALL_INPUT = 'I',		/* a command line with input on its stdin */
	AG_CALL_REQUEST = 'Q'		/* request_access: a command line filed for
					 * approval, input its justification */
};

/*
 * A call in flight: what the protocol needs to answer it later.  The pump
 * owns it from ag_pump_submit() on and frees it (id, progress) after done.
 */
struct ag_call {
	json_object		*id;		/* the request's id (a reference), or NULL */
	json_object		*progress;	/* MCP progressToken, or NULL */
	enum ag_call_kind	 kind;
	long			 timeout_s;	/* 0 = the profile's */
	char			*text;
	size_t			 len;
	char			*input;		/* AG_CALL_INPUT: the command's stdin */
	size_t			 inlen;
	int			 tool;		/* the protocol's own tag */
	char			*path;		/* a file tool's path, for its result */
	int			 cancelled;	/* the client gave up: no answer is sent */
	unsigned		 nprogress;
	struct ag_call		*next;
};

struct ag_proto_ops {
	/* one request line (without its newline) */
	void	(*line)(struct ag_pump *pu, const char *line, size_t len);
	/* a line longer than AG_PROTO_LINE_MAX (discarded) */
	void	(*too_long)(struct ag_pump *pu);
	/*
	 * The gateway's answer: result holds the outcome (and, for a run,
	 * stdout and stderr); the protocol sends what it makes of it.  Not
	 * called for a call cancelled before.
	 */
	void	(*done)(struct ag_pump *pu, struct ag_call *call, json_object *result);
	/* a running call that asked for progress, every AG_PROTO_PROGRESS_MS
	 * (NULL: the protocol has no progress) */
	void	(*progress)(struct ag_pump *pu, struct ag_call *call, long long elapsed_ms,
		    size_t out_bytes);
};

extern const struct ag_proto_ops ag_mcp_ops;
extern const struct ag_proto_ops ag_jsonl_ops;

/* The caller's upstreams (bastion mode), "web1, db1", or "" for none: set
 * before the pump starts, for a protocol that describes its tools. */
extern char ag_proto_targets[512];

/* One message to the client: its JSON on one line. */
void	ag_pump_send(struct ag_pump *pu, json_object *msg);

/*
 * Queue a call for the gateway (calls run one at a time, in order).  Takes
 * call; -1 when the queue is full (call freed: the caller answers "busy").
 */
int	ag_pump_submit(struct ag_pump *pu, struct ag_call *call);

/*
 * The client gave up on the call with this id: a waiting call is dropped,
 * the running one is ended (its group, as on a timeout).  0 when found.
 */
int	ag_pump_cancel(struct ag_pump *pu, json_object *id);

/* A new call with a copy of text; NULL when out of memory.  The caller
 * may set input (malloc'd, the call's from then on) for AG_CALL_INPUT. */
struct ag_call *ag_call_new(enum ag_call_kind kind, json_object *id, const char *text,
	    size_t len);
void	ag_call_free(struct ag_call *call);

#endif
