/*
 * sink.h - where audit records go, behind one small interface (tlog's
 * writer types are the model): the file (hash-chained), the HTTP collector
 * with its spool, syslog, and memory for unit tests.  audit.c builds a
 * record and hands it to each sink of the session in turn; a sink says
 * whether it took it.  Internal to record/; callers use audit.h.
 */
#ifndef AG_SINK_H
#define AG_SINK_H

#include <stddef.h>

#include <json-c/json.h>

#include "common/config.h"
#include "common/err.h"

/* One record on its way to the sinks. */
struct ag_audit_rec {
	json_object	*o;	/* its fields: a sink may add some before the text exists */
	char		*line;	/* the text every sink gets, newline included, once made */
	size_t		 len;
};

/*
 * The record's text, made on first use (and from then on the same for
 * every sink): one line, C1 and bidirectional controls as \u escapes so a
 * terminal shows them rather than obeys them.  NULL when out of memory.
 */
const char *ag_audit_rec_text(struct ag_audit_rec *r, size_t *len);

struct ag_sink;

struct ag_sink_ops {
	const char	*name;
	/* taking a record counts as writing it (file, collector or spool);
	 * syslog does not, as nothing vouches it was kept */
	int		 durable;
	/* take r; sync: on stable storage before returning.  0, or -1 and why */
	int		(*emit)(struct ag_sink *s, struct ag_audit_rec *r, int sync,
			    struct ag_err *why);
	/* could it take a record now?  0, or -1 and why */
	int		(*ready)(const struct ag_sink *s, struct ag_err *why);
	void		(*close)(struct ag_sink *s);
	/* in a child that goes on writing beside its parent: locks held by an
	 * open file (flock) and a collector's connection are the parent's, so
	 * open its own; NULL when nothing is shared */
	void		(*forked)(struct ag_sink *s);
};

/* Each sink's own struct starts with this. */
struct ag_sink {
	const struct ag_sink_ops	*ops;
	struct ag_sink			*next;
};

/*
 * The sinks.  Each returns NULL only when out of memory: one that cannot
 * be opened (a directory not safe, a collector not reachable) is still
 * returned, and says why from ready() and emit().  The file sink must come
 * first in a session's list: it adds the chain fields ("seed", "prev")
 * that the others then get in the same line.
 */
struct ag_sink *ag_sink_file_open(const struct ag_audit_conf *conf);
struct ag_sink *ag_sink_http_open(const struct ag_audit_conf *conf);
struct ag_sink *ag_sink_syslog_open(int facility);
struct ag_sink *ag_sink_memory_open(void);

/* The memory sink's records so far, one per line ("" when none). */
const char *ag_sink_memory_text(const struct ag_sink *s);

#endif
