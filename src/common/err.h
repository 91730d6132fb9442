/*
 * err.h - the one error-reporting convention of agentgate.
 *
 * A function that can fail returns -1 (or NULL) and fills a caller-provided
 * struct ag_err.  Position fields are optional: a config error carries
 * file:line:col, a parse error the byte offset into the command line.
 * ag_err_format() renders "FILE:LINE:COL: message" or just "message".
 */
#ifndef AG_ERR_H
#define AG_ERR_H

#include <stddef.h>
#include <stdio.h>

#define AG_ERR_MSG_MAX 1024

struct ag_err {
	char msg[AG_ERR_MSG_MAX];
	char file[256];		/* "" when not about a file */
	int line;		/* 1-based; 0 = unknown */
	int col;		/* 1-based; 0 = unknown */
	long off;		/* byte offset in a command line; -1 = none */
};

#if defined(__GNUC__)
#define AG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AG_PRINTF(a, b)
#endif

void	ag_err_clear(struct ag_err *err);
/* Set the message; keeps no position.  Always returns -1 so callers can
 * write "return ag_err_set(err, ...);". err may be NULL. */
int	ag_err_set(struct ag_err *err, const char *fmt, ...) AG_PRINTF(2, 3);
/* Set the message with a file position. Returns -1. */
int	ag_err_at(struct ag_err *err, const char *file, int line, int col,
	    const char *fmt, ...) AG_PRINTF(5, 6);
/* Set the message with a byte offset into a command line. Returns -1. */
int	ag_err_off(struct ag_err *err, long off, const char *fmt, ...)
	    AG_PRINTF(3, 4);
/* Render into buf ("file:line:col: msg", "msg"); returns buf. */
const char *ag_err_format(const struct ag_err *err, char *buf, size_t len);
/* Print "agentgate: <formatted>\n" on fp. */
void	ag_err_print(FILE *fp, const struct ag_err *err);

#endif
