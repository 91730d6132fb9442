/*
 * cmdmask.h - the values of secret-named variables masked in a command
 * line, on the parser's words (see cmdmask.c).
 */
#ifndef AG_EXEC_CMDMASK_H
#define AG_EXEC_CMDMASK_H

#include <stddef.h>

#include "common/strbuf.h"

/*
 * s[0..len) onto out with each value a secret-named variable is given
 * (…TOKEN…, …SECRET…, …PASSWORD…, …API_KEY…, …_KEY, in an assignment,
 * in a word such as export's `NAME=value` or `--api_key=value`, in a
 * here-document's `NAME=value` line) replaced by "***".  Only where bash
 * assigns (an assignment, a declaration builtin's argument) does the value
 * run to the word's end by bash's quoting; in any other word, also one
 * that begins with NAME=, only a token (letters, digits, -._~+/=:@%!*,^#)
 * is masked, since the word may be another program's text.  A mask lies
 * inside one word of the parse and ends before any command substitution
 * in it, so it never reaches a program, an argument of another word, a
 * comment or the next command.  A line that does not parse (it is not
 * run) is masked word by word as the lexer would split it, never past a
 * line's end.  0, or -1 when out of memory.
 */
/*
 * A private key is not masked here (red team 24, M1): what reaches a
 * shell cannot be told from data by its shape.
 */
int	ag_cmdmask(const char *s, size_t len, struct ag_strbuf *out);

#endif
