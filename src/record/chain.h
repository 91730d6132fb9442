/*
 * chain.h - the audit file's hash chain.  Every record of a file carries
 * "prev", the SHA-256 (hex) of the line before it, exactly as written and
 * without its newline; the first record of a file carries a random "seed"
 * and, as prev, the hash of that seed.  Altering, removing or reordering a
 * record then breaks the chain at the next one, which `agentgate audit
 * verify` reports; removing whole records from the end is not detectable
 * from the file alone (a collector or syslog copy is the witness).
 */
#ifndef AG_CHAIN_H
#define AG_CHAIN_H

#include <stddef.h>
#include <stdio.h>

#define AG_CHAIN_HEX	65	/* 64 hex digits and a NUL */

/* Hex SHA-256 of n bytes at p. */
void	ag_chain_hash(const void *p, size_t n, char out[AG_CHAIN_HEX]);

/*
 * The hash of the last line of the file behind fd (which the caller has
 * locked against other writers), into out; *empty set when the file holds
 * nothing yet.  0, or -1 with errno.
 */
int	ag_chain_tail(int fd, char out[AG_CHAIN_HEX], int *empty);

/* A fresh random seed, as hex.  0, or -1. */
int	ag_chain_seed(char out[AG_CHAIN_HEX]);

/* Longest line `audit verify` reads; a longer one is a broken file. */
#define AG_CHAIN_MAX_LINE	((size_t)64 * 1024 * 1024)

struct ag_chain_result {
	unsigned long	 records;	/* lines read */
	unsigned long	 line;		/* the first bad one; 0 when none */
	char		 what[256];	/* what is wrong there */
};

/*
 * Check a whole audit file, read from fp: 0 when the chain holds from the
 * seed to the last line; 1 when it breaks (res says at which line and
 * how: a record altered, removed or reordered, the start cut off, the
 * last record torn, a line that is no record); -1 on a read error (errno).
 */
int	ag_chain_verify(FILE *fp, struct ag_chain_result *res);

#endif
