/*
 * setid.h - allowed programs that need a privilege the sandbox never
 * grants.  Under the kernel sandbox every command runs with no_new_privs:
 * a set-user-ID or set-group-ID program (sudo, su, passwd, crontab)
 * starts without its privilege and fails however the rules allow it.
 * Nor does a wrapper the gateway always refuses (sudo, su, pkexec) run
 * however an allow rule names it.  `check`, `explain` and `doctor` say so
 * before an agent finds out.
 */
#ifndef AG_SETID_H
#define AG_SETID_H

#include <limits.h>
#include <stddef.h>

#include "common/config.h"

/*
 * 1 when path (absolute), or name looked up in the session's default
 * PATH, is a set-ID program on this host and cfg's sandbox disarms it;
 * then why says so (and what to do instead).  0 otherwise.
 */
int	ag_setid_disarmed(const struct ag_config *cfg, const char *name, const char *path,
	    char *why, size_t whylen);

/*
 * 1 when name (a program's name or path) is a wrapper the gateway refuses
 * whatever the rules say (sudo, su, doas, pkexec, ...: AG_PROG_WRAPPER_RISKY
 * in policy/progs), so that an allow rule naming it is dead; then why says
 * so.  0 otherwise.
 */
int	ag_setid_refused_wrapper(const char *name, char *why, size_t whylen);

/* Each allow rule of p naming a refused wrapper or a disarmed set-ID
 * program, to fn with the why text; the count. */
size_t	ag_setid_rules(const struct ag_config *cfg, const struct ag_profile *p,
	    void (*fn)(const struct ag_rule *, const char *why, void *), void *arg);

#endif
