/*
 * ratelimit.h - failed token attempts, counted per source address, so a
 * guesser cannot try tokens online as fast as connections open.
 *
 * After AG_RATELIMIT_FREE failures from one address, each further attempt
 * must wait 2^(failures - AG_RATELIMIT_FREE) seconds after the last failure
 * (at most AG_RATELIMIT_MAX_WAIT); until then it is refused without looking
 * at the token, and counts as one more failure (pam_faillock's way: a
 * guesser that does not wait only waits longer).  A success clears nothing:
 * a guesser holding a valid token of its own must not reset the count of
 * its guesses at others'; an hour without failures forgets the address.  Counts live in AG_RATELIMIT_DIR, which only the gateway's
 * group writes (made by root: sshd's bind module, serve); where it is
 * missing there is no limit, and doctor says so.
 */
#ifndef AG_RATELIMIT_H
#define AG_RATELIMIT_H

#include "common/rundir.h"

#define AG_RATELIMIT_DIR	AG_RUNDIR_FAILURES
#define AG_RATELIMIT_FREE	5
#define AG_RATELIMIT_MAX_WAIT	900
#define AG_RATELIMIT_FORGET	3600
#define AG_RATELIMIT_LOCK_MS	5000L	/* the count's lock, at most, without progress */

/* Seconds source must still wait before an attempt counts (0: go on). */
long	ag_ratelimit_wait(const char *source);
/* A failed attempt from source. */
void	ag_ratelimit_failed(const char *source);

#endif
