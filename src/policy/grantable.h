/*
 * grantable.h - profile paths the sandbox cannot grant.  Landlock grants
 * what exists: a paths.read, paths.write or paths.exec entry that names
 * nothing on this host (a file config management has not made yet) is
 * left out of the ruleset, and the agent meets a bare EACCES.  `check`
 * and `doctor` say so before an agent finds out.
 */
#ifndef AG_GRANTABLE_H
#define AG_GRANTABLE_H

#include <stddef.h>

#include "common/config.h"

/*
 * Each entry of p's paths that does not exist, to fn with where it was
 * written (NULL when not known) and why, the text of the warning; the
 * count.  An entry under "~" is looked at in the home of each account
 * users: gives p, and said nothing of when there is none (whose home it
 * will be is not known here).  Nothing with the sandbox off, nor for a
 * pattern (which the sandbox does not grant either way).
 */
size_t	ag_paths_missing(const struct ag_config *cfg, const struct ag_profile *p,
	    void (*fn)(const struct ag_pos *pos, const char *why, void *), void *arg);

#endif
