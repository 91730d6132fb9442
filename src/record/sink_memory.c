/*
 * sink_memory.c - records kept in memory, for unit tests that look at
 * what a session recorded without a file, a collector or a syslog daemon.
 * Not durable: a witness beside the policy's own sinks, so that whether a
 * record counts as written (and a required audit refuses a command) is
 * what those sinks say, as in a real session.
 */
#include "agconfig.h"

#include <stdlib.h>

#include "common/strbuf.h"
#include "record/sink.h"

/* a test's session writes a few KiB; this only bounds a runaway one */
#define MEMORY_MAX	((size_t)16 * 1024 * 1024)

struct memory_sink {
	struct ag_sink	 base;
	struct ag_strbuf text;
};

static int
memory_emit(struct ag_sink *s, struct ag_audit_rec *r, int sync, struct ag_err *why)
{
	struct memory_sink *m = (struct memory_sink *)s;
	const char *line;
	size_t len;

	(void)sync;
	if ((line = ag_audit_rec_text(r, &len)) == NULL ||
	    ag_strbuf_append(&m->text, line, len) < 0)
		return ag_err_set(why, "audit: out of memory");
	return 0;
}

static int
memory_ready(const struct ag_sink *s, struct ag_err *why)
{
	(void)s;
	(void)why;
	return 0;
}

static void
memory_close(struct ag_sink *s)
{
	struct memory_sink *m = (struct memory_sink *)s;

	ag_strbuf_free(&m->text);
	free(m);
}

static const struct ag_sink_ops memory_ops = {
	.name = "memory", .durable = 0,
	.emit = memory_emit, .ready = memory_ready, .close = memory_close,
};

struct ag_sink *
ag_sink_memory_open(void)
{
	struct memory_sink *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->base.ops = &memory_ops;
	ag_strbuf_init(&m->text, MEMORY_MAX);
	return &m->base;
}

const char *
ag_sink_memory_text(const struct ag_sink *s)
{
	const struct memory_sink *m = (const struct memory_sink *)s;

	return m->text.len > 0 ? m->text.data : "";
}
