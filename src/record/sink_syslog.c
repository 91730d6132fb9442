/*
 * sink_syslog.c - each record also to syslog(3), the configured facility,
 * priority info.  Not durable: nothing vouches the line was kept, so a
 * record syslog alone took does not count as written.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <syslog.h>

#include "record/sink.h"

struct syslog_sink {
	struct ag_sink	 base;
	int		 facility;
};

static int
syslog_emit(struct ag_sink *s, struct ag_audit_rec *r, int sync, struct ag_err *why)
{
	const char *line;
	size_t len;

	(void)sync;
	if ((line = ag_audit_rec_text(r, &len)) == NULL)
		return ag_err_set(why, "audit: out of memory");
	syslog(((struct syslog_sink *)s)->facility | LOG_INFO, "%s", line);
	return 0;
}

static int
syslog_ready(const struct ag_sink *s, struct ag_err *why)
{
	(void)s;
	(void)why;
	return 0;
}

static void
syslog_close(struct ag_sink *s)
{
	free(s);
}

static const struct ag_sink_ops syslog_ops = {
	.name = "syslog", .durable = 0,
	.emit = syslog_emit, .ready = syslog_ready, .close = syslog_close,
};

struct ag_sink *
ag_sink_syslog_open(int facility)
{
	struct syslog_sink *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->base.ops = &syslog_ops;
	s->facility = facility;
	return &s->base;
}
