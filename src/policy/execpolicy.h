/*
 * execpolicy.h - the profile's deny rules applied to one exec of a
 * command's process tree (developer tier; see doc/sandbox.md).
 *
 * The exec supervisor (execsup.h) hands each execve/execveat of the tree
 * to ag_execpolicy_judge().  Only deny rules count here: what the tree
 * starts is not judged against `allow` (the kernel bounds it instead), but
 * a program a deny rule names is judged exactly as the typed line would
 * be, by the same policy code, so `git -C x push` in a Makefile recipe
 * meets the rule that refuses `git push` at the prompt.
 */
#ifndef AG_EXECPOLICY_H
#define AG_EXECPOLICY_H

#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"

/* Longest exec (path and arguments, quoted) that is judged; a longer one
 * of a program some deny rule names is refused (fail closed). */
#define AG_EXECPOLICY_MAX	(256 * 1024)

struct ag_execpolicy {
	const struct ag_profile	*profile;
	const char		*home;
	char *const		*env;		/* for PATH, as at the prompt */
	/* the rules a person approved the line for (ids joined by ','), or
	 * NULL: an exec that meets a rule waiting for approval goes on only
	 * when the person's answer covered that rule */
	const char		*approved;
	/*
	 * The file a path names for the process whose exec is judged (the
	 * exec supervisor's resolver, exec/execfile.h): 0 with its device
	 * and inode, or -1.  For what the dynamic loader is asked to run;
	 * NULL: by its name only.
	 */
	int			(*file_of)(const void *fctx, const char *path, dev_t *dev,
				    ino_t *ino);
	const void		*file_ctx;
};

/*
 * 1 when the exec may go on; 0 when a deny rule refuses it, with reason
 * and rule (the deny rule's id, "profiles.NAME.deny[N]" or
 * "profiles.NAME.deny.RULENAME") filled.  path is absolute; cwd the
 * process's working directory (for relative arguments), NULL if unknown.
 */
int	ag_execpolicy_judge(const struct ag_execpolicy *ep, const char *path,
	    char *const *argv, size_t argc, const char *cwd, char *reason, size_t reasonsz,
	    char *rule, size_t rulesz);

/*
 * The same, for the file (dev, ino) the exec runs: judged by the name it
 * was run by, and again as each registry program that file is
 * (ag_prog_files_match), so that a link named g, /dev/fd/3 or
 * /proc/self/fd/3 of an open /usr/bin/git meets the rules on git.  The
 * strictest answer counts.
 */
int	ag_execpolicy_judge_file(const struct ag_execpolicy *ep, const char *path, dev_t dev,
	    ino_t ino, char *const *argv, size_t argc, const char *cwd, char *reason,
	    size_t reasonsz, char *rule, size_t rulesz);

#endif
