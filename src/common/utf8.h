/*
 * utf8.h - text that came from a client, made safe to show: one copy of
 * UTF-8 validation and of the rule for what may not reach a terminal or a
 * log reader as is.  Unsafe: C0 controls and DEL, C1 controls (U+0080 to
 * U+009F), the bidirectional marks, embeddings, overrides and isolates
 * (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), and bytes
 * that are not UTF-8.
 */
#ifndef AG_UTF8_H
#define AG_UTF8_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

/* Length of the valid UTF-8 sequence at p (at most n bytes) and its code
 * point in *cp; 0 when the bytes there are not UTF-8. */
size_t	ag_utf8_seq(const unsigned char *p, size_t n, unsigned *cp);

/*
 * How many bytes at the end of p[0..n) begin a character that the end cut
 * short (0 to 3): a lead byte and only continuation bytes after it, fewer
 * than it needs.  A stream read in pieces carries them to the next piece.
 */
size_t	ag_utf8_cut(const unsigned char *p, size_t n);
/* 1 when all n bytes at s are UTF-8. */
int	ag_utf8_valid(const char *s, size_t n);

/* 1 when the code point may not be shown as is (see above). */
int	ag_utf8_unsafe(unsigned cp);

/*
 * A copy of the first n bytes of s for a message or a terminal: unsafe
 * code points as \u202e (\n as \n, other C0 and DEL as \x1b), bytes that
 * are not UTF-8 as \xff.  At most max bytes of s are shown, then "...";
 * never cut inside a sequence or an escape.  out is always terminated.
 */
char	*ag_utf8_visible(const char *s, size_t n, size_t max, char *out, size_t outsz);

/*
 * ag_utf8_visible() of the string s (NULL: ""), as much of it as fits in
 * out: the form in which every admin command prints text that an agent
 * may have chosen (a command line, a path, a reason quoting either).
 */
const char *ag_utf8_shown(const char *s, char *out, size_t outsz);

/*
 * One line of a report, formatted, made visible as above, written to fp
 * with a newline (a newline at the end of fmt is that one): for lines
 * that quote what an agent may have chosen among the gateway's words.
 * At most 8 KiB of it; -1 when the write fails.
 */
int	ag_utf8_line(FILE *fp, const char *fmt, ...) AG_PRINTF(2, 3);
int	ag_utf8_vline(FILE *fp, const char *fmt, va_list ap) AG_PRINTF(2, 0);

/*
 * A JSON text (json-c's output) with every unsafe code point that json-c
 * leaves raw (DEL, C1, bidi controls) written as a \uXXXX escape: the same
 * string to a JSON reader, inert on a terminal.  malloc'd with room for
 * one more byte and the NUL, *outlen set; NULL when out of memory.
 */
char	*ag_utf8_json_safe(const char *js, size_t n, size_t *outlen);

/*
 * A copy of the n bytes at s that is UTF-8: every byte that does not
 * start a valid sequence becomes U+FFFD.  malloc'd, NUL-terminated, *outlen
 * set; NULL when out of memory.
 */
char	*ag_utf8_repair(const char *s, size_t n, size_t *outlen);

#endif
