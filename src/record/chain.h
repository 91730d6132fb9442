/*
 * chain.h - the audit file's hash chain.  Every record carries "prev",
 * the SHA-256 (hex) of the record before it, exactly as written and
 * without its newline.  The chain's first record carries a random "seed"
 * and, as prev, the hash of that seed.  It goes on across rotation: the
 * first record of the file that replaces a rotated one names the last
 * record of the rotated file (sink_file.c keeps that hash beside the log),
 * and a collector's copy, whichever way it is cut into files, is the same
 * chain.  Altering, removing or reordering a record then breaks the chain
 * at the next one, within a file or from one file of a series into the
 * next, which `agentgate audit verify` reports.  Removing whole records
 * from the end of the live log is seen against the state file (its hash
 * of the last record written); from the end of a copy, or from the start
 * of the first file verified, it is not detectable from those files alone
 * (the next file, a collector or a syslog copy is the witness).
 */
#ifndef AG_CHAIN_H
#define AG_CHAIN_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

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

/*
 * One line of fp, newline included, into *buf (grown as needed, never past
 * AG_CHAIN_MAX_LINE + 1 bytes and its NUL; the caller frees it): its
 * length, 0 at the end of the input, -1 on a read error or when out of
 * memory.  A line that goes on past the limit is not read further (a small
 * .gz can hold a line of gigabytes): *too_long, and the length read.
 */
ssize_t	ag_chain_line(FILE *fp, char **buf, size_t *cap, int *too_long);

struct ag_chain_result {
	unsigned long	 records;	/* lines read */
	unsigned long	 line;		/* the first bad one; 0 when none, or
					 * when the end is cut (end check) */
	char		 what[PATH_MAX + 512];	/* what is wrong there */
	int		 mid_chain;	/* the first record has no seed: it */
	char		 from[AG_CHAIN_HEX];	/* continues from this hash */
	int		 torn;		/* the break is a last line without
					 * its newline */
	off_t		 end;		/* bytes of the whole records read */
	/* ag_chain_verify_end: */
	int		 end_checked;	/* the last record is the state's */
	char		 state[AG_CHAIN_HEX];	/* the hash the state keeps */
	char		 note[PATH_MAX + 512];	/* why the end was not checked */
};

/*
 * Check one file of a series, read from fp.  last is "" for the first file
 * (whose first record starts the chain with its seed, or continues one that
 * began in a file not given: res->mid_chain), else the hash of the previous
 * file's last record, which this file's first record must name; on return
 * it is the hash of this file's last record (unchanged when it has none).
 * 0 when the chain holds; 1 when it breaks (res says at which line and
 * how: a record altered, removed or reordered, the start cut off, the last
 * record torn, a line that is no record, a second seed); -1 on a read
 * error (errno), or on a line longer than AG_CHAIN_MAX_LINE, which is not
 * read further (res->what says so).
 */
int	ag_chain_verify(FILE *fp, char last[AG_CHAIN_HEX], struct ag_chain_result *res);

/*
 * The end of the live log against the chain's state file beside it
 * (ag_chain_state_path), which keeps the hash of the last record any
 * gateway wrote: removing records from the end of the log is seen there.
 * fp is log, read by ag_chain_verify, with last and res as it left them
 * (0, or 1 for a torn last line: one being written).  Under the state's
 * lock, which every writer takes first, the records appended since and
 * a torn last line are read again, and the state is compared with the
 * last record.  0 when they agree (res->end_checked) or when the end
 * cannot be checked (res->note says why: no state file, a log rotated
 * while read, an empty file); 1 when the chain breaks in what was read
 * again or the end was cut off (res->what); -1 on a read error.
 */
int	ag_chain_verify_end(FILE *fp, const char *log, char last[AG_CHAIN_HEX],
	    struct ag_chain_result *res);

/*
 * The state file beside the audit log that keeps the hash of the last
 * record written, so that the log's next file continues the chain after
 * rotation: "DIR/.BASE.chain" for "DIR/BASE", into out (size n).  0, or -1
 * when it does not fit.
 */
int	ag_chain_state_path(const char *log, char *out, size_t n);

/* The hash the state file behind fd keeps, into out.  0, or -1 when it
 * holds none (empty, or not a hash and its newline). */
int	ag_chain_state_read(int fd, char out[AG_CHAIN_HEX]);

#endif
