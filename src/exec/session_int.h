/*
 * session_int.h - what session.c and dirstack.c share: the builtins the
 * gateway runs itself (argc words in argv, bash's messages on errf, what
 * dirs prints on out; bash's exit status).
 */
#ifndef AG_SESSION_INT_H
#define AG_SESSION_INT_H

#include <stdio.h>

#include "exec/session.h"

/* path made absolute against base (NULL: as it is) with . and .. and
 * repeated slashes resolved by name, as bash's logical cd does; malloc'd,
 * NULL when out of memory. */
char	*ag_session_canon_path(const char *base, const char *path);
/* 0 when path is a directory the account may enter, else an errno value. */
int	ag_session_dir_usable(const char *path);

int	ag_dirstack_cd(struct ag_session *s, size_t argc, char **argv, FILE *out, FILE *errf);
int	ag_dirstack_pushd(struct ag_session *s, size_t argc, char **argv, FILE *out,
	    FILE *errf);
int	ag_dirstack_popd(struct ag_session *s, size_t argc, char **argv, FILE *out,
	    FILE *errf);
int	ag_dirstack_dirs(struct ag_session *s, size_t argc, char **argv, FILE *out,
	    FILE *errf);

#endif
