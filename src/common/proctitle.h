/*
 * proctitle.h - what `ps` shows for a gateway: "agentgate: IDENTITY@USER
 * [SESSION] MODE", so an admin can tell sessions apart and find the one to
 * end (agentgate sessions / terminate).  Never the command line: ps is
 * readable by every user, and a command may carry a secret.
 *
 * The title overwrites the memory of the process's original argv and
 * environment strings, as sshd's setproctitle does; ag_proctitle_init()
 * first moves both to the heap and returns the copy of argv to use.
 */
#ifndef AG_PROCTITLE_H
#define AG_PROCTITLE_H

#include "common/err.h"

/* Call first thing, before anything keeps a pointer into argv or environ.
 * Returns argv's heap copy (the original is left as it was when memory
 * runs out: then no title). */
char	**ag_proctitle_init(int argc, char **argv);

/* Set the title; truncated to the space the original strings had. */
void	ag_proctitle_set(const char *fmt, ...) AG_PRINTF(1, 2);

#endif
