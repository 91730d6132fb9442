/*
 * safepath.h - the StrictModes walk, one copy: a file the gateway trusts
 * (the policy, an authorized_keys file) and every directory above it must
 * belong to root or to one trusted uid and be writable by nobody else, as
 * sshd(8) checks ~/.ssh.  A root-owned sticky directory (/tmp) may be
 * world-writable: others cannot replace what lies in it.
 */
#ifndef AG_SAFEPATH_H
#define AG_SAFEPATH_H

#include <sys/stat.h>
#include <sys/types.h>

#include "common/err.h"

/*
 * Check path (resolved with realpath(3); it must be a regular file) and
 * each directory up to "/".  0 with *realp the malloc'd resolved path and
 * *filest the file's stat, to compare with what is then opened; -1 with a
 * message at err that names the culprit and the fix.
 */
int	ag_safe_path(const char *path, uid_t trusted, struct stat *filest, char **realp,
	    struct ag_err *err);
/* The same for a directory (path itself must be one): agentgate.d. */
int	ag_safe_dir(const char *path, uid_t trusted, struct stat *dirst, char **realp,
	    struct ag_err *err);

#endif
