/*
 * log.h - the one logger: syslog, or stderr in the foreground and in tests.
 * Messages for the person or agent at the other end of the session do not
 * go through here; they are written to the client's stderr directly.
 */
#ifndef AG_LOG_H
#define AG_LOG_H

#include <syslog.h>

#include "common/err.h"

/* to_stderr: 1 = log lines on stderr ("agentgate[pid]: ..."), 0 = syslog. */
void	ag_log_open(const char *ident, int to_stderr, int facility);
/* Messages above level (LOG_ERR..LOG_DEBUG) are dropped; default LOG_INFO. */
void	ag_log_set_level(int level);
int	ag_log_level(void);
void	ag_log(int prio, const char *fmt, ...) AG_PRINTF(2, 3);

#endif
