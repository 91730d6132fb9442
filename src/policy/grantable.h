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
#include <sys/types.h>

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

/*
 * Each entry of p's paths.write (expanded as above) that lies on the file
 * system dev, to fn with where it was written and what it is; the count.
 * doctor: a write root that shares the audit log's file system can fill it.
 */
size_t	ag_paths_write_on(const struct ag_config *cfg, const struct ag_profile *p,
	    dev_t dev, void (*fn)(const struct ag_pos *pos, const char *what, void *),
	    void *arg);

#endif
