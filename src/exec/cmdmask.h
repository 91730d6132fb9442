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
 * here-document's `NAME=value` line) replaced by "***", only where it
 * cannot be code (red team 24, H1, M2): token-shaped as a whole (no
 * blank, $ ` ( ) [ ] ; & | < >, quote or backslash; in a word bash does
 * not assign, a token's letters only), no array or subscript, no
 * declaration builtin the line may have redefined, and no name the line
 * may expand as code (eval, sh -c, $((..)), test -v, [[ ]], a subscript,
 * a pipe to a shell).  A mask lies inside one word of the parse.  A line
 * that does not parse (it is not run) is masked word by word as the
 * lexer would split it, never past a line's end.  0, or -1 when out of
 * memory.
 */
/*
 * A private key is not masked here (red team 24, M1): what reaches a
 * shell cannot be told from data by its shape.
 */
int	ag_cmdmask(const char *s, size_t len, struct ag_strbuf *out);

#endif
