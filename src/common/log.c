/* log.c - see log.h */
#include "agconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "common/log.h"

static int log_stderr = 1;
static int log_level = LOG_INFO;
static const char *log_ident = "agentgate";

void
ag_log_open(const char *ident, int to_stderr, int facility)
{
	log_ident = ident != NULL ? ident : "agentgate";
	log_stderr = to_stderr;
	if (!to_stderr)
		openlog(log_ident, LOG_PID | LOG_NDELAY, facility);
}

void
ag_log_set_level(int level)
{
	log_level = level;
}

int
ag_log_level(void)
{
	return log_level;
}

void
ag_log(int prio, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	if (LOG_PRI(prio) > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (log_stderr)
		fprintf(stderr, "%s[%ld]: %s\n", log_ident, (long)getpid(), buf);
	else
		syslog(prio, "%s", buf);
}
