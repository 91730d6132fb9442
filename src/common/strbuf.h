/*
 * strbuf.h - a small growable byte buffer with a hard upper bound.
 *
 * Every buffer that grows from outside input (a client, a child, a file)
 * has a limit; an append past it fails instead of growing.  The data is
 * always NUL-terminated so it can be used as a C string when it holds text.
 */
#ifndef AG_STRBUF_H
#define AG_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "common/err.h"

struct ag_strbuf {
	char	*data;		/* NUL-terminated; NULL until the first append */
	size_t	 len;
	size_t	 cap;
	size_t	 limit;		/* maximum len; 0 = AG_STRBUF_DEFAULT_LIMIT */
};

#define AG_STRBUF_DEFAULT_LIMIT	((size_t)64 * 1024 * 1024)

void	ag_strbuf_init(struct ag_strbuf *sb, size_t limit);
/* 0 ok; -1 when the limit would be exceeded or memory ran out. */
int	ag_strbuf_append(struct ag_strbuf *sb, const void *p, size_t n);
int	ag_strbuf_addstr(struct ag_strbuf *sb, const char *s);
int	ag_strbuf_addch(struct ag_strbuf *sb, char c);
int	ag_strbuf_squote(struct ag_strbuf *sb, const char *s, size_t n);
int	ag_strbuf_squote_str(struct ag_strbuf *sb, const char *s);
int	ag_strbuf_printf(struct ag_strbuf *sb, const char *fmt, ...)
	    AG_PRINTF(2, 3);
void	ag_strbuf_reset(struct ag_strbuf *sb);	/* len = 0, keeps memory */
/* Hand the data to the caller (who frees it); the buffer is emptied. */
char	*ag_strbuf_detach(struct ag_strbuf *sb, size_t *lenp);
void	ag_strbuf_free(struct ag_strbuf *sb);
/* Append all that fd holds up to its end: 0, or -1 (errno; E2BIG past the limit). */
int	ag_strbuf_read_fd(struct ag_strbuf *sb, int fd);

#endif
