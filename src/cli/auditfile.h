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

/*
 * The policy config's gateway.audit.file, malloc'd; NULL after saying why
 * on stderr, as "agentgate: audit CMD: ...".
 */
char	*ag_auditfile_configured(const char *config, const char *cmd);

#endif
