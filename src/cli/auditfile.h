/*
 * auditfile.h - reading audit files for `agentgate audit verify` and
 * `agentgate audit show`: the policy's file, a rotated series in
 * logrotate's order, .gz files and standard input (zlib loaded only when
 * one is read: lazylib.h).
 */
#ifndef AG_AUDITFILE_H
#define AG_AUDITFILE_H

#include <stdio.h>

/* name opened for reading ("-": standard input, compressed or not; a name
 * ending in .gz decompressed); NULL with why. */
FILE	*ag_auditfile_open(const char *name, char *why, size_t whylen);

/* 1 when name ends in .gz. */
int	 ag_auditfile_gz(const char *name);

/*
 * Names that are all one log as logrotate numbers it (FILE, FILE.1,
 * FILE.2.gz, ...) put oldest first; any other set left in the given order.
 */
void	 ag_auditfile_order(char **names, int n);

enum ag_auditfile_what {
	AG_AUDITFILE_LOG,		/* gateway.audit.file */
	AG_AUDITFILE_RECORDINGS,	/* gateway.recordings */
};

/*
 * What the policy config names, malloc'd; NULL after saying why on stderr,
 * as "agentgate: CMD: ...".  When config does not load, what the last
 * policy that loaded names (lastgood.h), after a one-line warning.
 */
char	*ag_auditfile_configured(const char *config, const char *cmd,
	    enum ag_auditfile_what what);

/*
 * The files CMD reads: argv (standard input at most once, a series put in
 * order), or without any the policy's audit file (with rotated, also the
 * files logrotate made of it beside it, FILE.N[.gz], oldest first), which
 * *owned then holds (free with ag_auditfile_free; NULL otherwise).  When
 * the policy does not load, the last one that did (lastgood.h) names the
 * file, after a warning.  0, or -1 after saying why.
 */
int	 ag_auditfile_args(int argc, char **argv, const char *config, const char *cmd,
	    int rotated, char ***names, int *n, char ***owned);

/* Frees a NULL-terminated vector of names; NULL is a no-op. */
void	 ag_auditfile_free(char **owned);

/*
 * A record's "ts" ("YYYY-MM-DD[THH:MM[:SS[.mmm]]][Z]", a space for the T)
 * as ms since the epoch, UTC; -1 when s is not one.
 */
long long ag_auditfile_time(const char *s);
/* A command line's WHEN: such a time, or N and a unit (s, m, h, d, w)
 * before now; -1 when s is neither. */
long long ag_auditfile_when(const char *s);

/*
 * Each record of names (in order: ag_auditfile_args) handed to fn with the
 * line as written, until fn returns other than 0.  A line that is no record
 * is said on stderr ("agentgate: CMD: FILE:LINE: not a record") and
 * skipped.  0; 1 when a line was no record; 2 after saying which file could
 * not be read and why; or what fn returned to stop.
 */
struct json_object;
typedef int (*ag_auditfile_fn)(void *arg, struct json_object *o, const char *line,
	    size_t len);
int	 ag_auditfile_each(char **names, int n, const char *cmd, ag_auditfile_fn fn,
	    void *arg);

#endif
