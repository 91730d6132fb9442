/*
 * shparse.c - a recursive-descent parser for the bash 5.2 grammar, as
 * `bash -c` (no aliases, no history expansion, extglob off outside [[ ]])
 * reads a command line.  See shparse.h for the tree.
 *
 * There is no separate token stream: bash's lexer depends on the parser's
 * state (reserved words only in command position, [[ ]] operators, case
 * patterns, here-documents read at the next newline), so the parser looks
 * at the characters itself, through cur()/la()/adv(), which skip line
 * continuations (backslash-newline) the way bash's shell_getc does.  Places
 * where bash does not remove continuations (single quotes, $'...', the
 * character after a backslash, comments, quoted here-documents) read the
 * raw bytes.
 *
 * Every construct whose reading depends on something the parser cannot
 * settle exactly (the $(( / (( subshell-or-arithmetic fallback, newlines in
 * $(...) while an outer here-document is pending, odd here-doc delimiters,
 * ...) is an error: the line is refused, never guessed at.
 *
 * Cost: each byte is consumed once; nested constructs are parsed in place
 * (no search for the matching parenthesis first), so time is linear in the
 * input.  Recursion is bounded by AG_SH_MAX_DEPTH.
 */
#include "agconfig.h"
#include "common/compat.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/shparse.h"
#include "common/arena.h"
#include "common/misc.h"
#include "common/utf8.h"
#include "common/strbuf.h"

/* A here-document whose body is read at the next newline. */
struct hdoc {
	struct ag_sh_word	*body;		/* owned by its redirection */
	char			*delim;		/* owned by its redirection */
	size_t			 dlen;
	int			 strip;
	int			 quoted;
};

struct parser {
	const char	*s;
	size_t		 len;
	size_t		 pos;
	size_t		 base;		/* offset of s[0] in the caller's input */
	int		 depth;
	int		 status;	/* 0 until the first failure */
	int		 in_heredoc;	/* parsing a here-document body */
	struct ag_err	*err;
	struct ag_arena *ar;		/* where the tree lives */
	struct hdoc	*hd;		/* pending here-documents, in order */
	size_t		 nhd;
	size_t		 hdfloor;	/* entries below belong to an outer $(...) */
	int		 in_paren;	/* inside $( ) or <( ) >( ) bodies (count) */
	int		 tail_cont;	/* a line continuation ran into the end */
	size_t		 ws_from, ws_to;	/* the last run skip_ws() skipped */
};

/* Word scanning modes: what ends a word and which quotes are special. */
enum wmode {
	M_NORMAL,	/* unquoted word: ends at a metacharacter */
	M_DQ,		/* "...": ends at " */
	M_HEREDOC,	/* unquoted here-document body: ends at end of input */
	M_ARITH,	/* $((...)) ((...)): ends at an unmatched ) */
	M_ARITHB,	/* $[...]: ends at an unmatched ] */
	M_ARITHFOR,	/* for ((...)): ends at ; or an unmatched ) */
	M_OPERAND,	/* ${x OP word}: ends at } (or / for a pattern) */
	M_SUBSCR,	/* [subscript]: ends at an unmatched ] */
	M_COND,		/* [[ ]] operand */
	M_REGEX,	/* right side of =~ */
	M_PATTERN,	/* case pattern */
	M_EXTGLOB,	/* inside @( ... ) in [[ ]]: ends at an unmatched ) */
};

/* Open brace of a possible brace expansion. */
struct brace {
	size_t	part;		/* index of the provisional "{" part */
	size_t	off;		/* offset of the { */
	int	comma;
};

/* A word being built. */
struct wbuild {
	struct ag_sh_word	*w;
	struct ag_strbuf	 lit;		/* pending literal text, or: */
	const char		*slice;		/* it, still in the input (lit unused) */
	size_t			 slicelen;
	enum ag_sh_quote	 litq;
	size_t			 litoff, litend;
	int			 haslit;
	struct brace		*br;		/* open braces (M_NORMAL only) */
	size_t			 nbr;
	size_t			*lbr;		/* provisional "[" parts awaiting a ] */
	size_t			 nlbr;
	int			 assign;	/* assignment value: no glob/brace */
	int			 assign_like;	/* NAME= seen: tilde after : */
	int			 dq;		/* inside double quotes (operands) */
	int			 stop_slash;	/* pattern of ${x/pat/rep} */
};

static struct ag_sh_node *parse_list(struct parser *);
static struct ag_sh_node *parse_command(struct parser *);
static struct ag_sh_node *parse_compound(struct parser *);
static int scan(struct parser *, struct wbuild *, enum wmode, int);
static int dq_string(struct parser *, struct wbuild *, size_t);
static struct ag_sh_node *subparse(struct parser *, const char *, size_t,
    size_t, int);

/* ---- errors and memory ------------------------------------------------ */

static int
fail(struct parser *p, int st, size_t off, const char *fmt, ...)
    AG_PRINTF(4, 5);

static int
fail(struct parser *p, int st, size_t off, const char *fmt, ...)
{
	char buf[AG_ERR_MSG_MAX];
	va_list ap;

	if (p->status != 0)
		return -1;
	/* Inside a here-document body nothing is "incomplete": its end is known. */
	if (st == AG_SH_INCOMPLETE && p->in_heredoc)
		st = AG_SH_ERROR;
	p->status = st;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ag_err_off(p->err, (long)(p->base + off), "%s", buf);
	return -1;
}

static int
nomem(struct parser *p)
{
	return fail(p, AG_SH_ERROR, p->pos, "out of memory");
}

/*
 * Every piece of one parse (nodes, words, parts, strings, arrays) comes
 * from one arena that ag_sh_free() releases whole.  No input may make the
 * tree grow without bound: a 1 MiB command of the densest shape (a million
 * unclosed `[`) needs about 150 MiB.
 */
#define TREE_LIMIT	((size_t)256 * 1024 * 1024)

static void *
zalloc(struct parser *p, size_t sz)
{
	void *q = ag_arena_alloc(p->ar, sz);

	if (q == NULL)
		nomem(p);
	return q;
}

/*
 * Make room for element n of a growing array.  The capacity is implicit:
 * the array is given twice the room when n is 0 or a power of two, so
 * appends stay linear without storing a capacity in the public structures.
 */
static int
grow(struct parser *p, void *arrp, size_t n, size_t sz)
{
	void **arr = arrp;
	size_t ncap;
	void *q;

	if (n != 0 && (n & (n - 1)) != 0)
		return 0;
	ncap = n ? n * 2 : 1;
	if (ncap > SIZE_MAX / sz)
		return nomem(p);
	if ((q = ag_arena_grow(p->ar, n ? *arr : NULL, n * sz, ncap * sz)) == NULL)
		return nomem(p);
	*arr = q;
	return 0;
}

static char *
dupmem(struct parser *p, const char *s, size_t n)
{
	char *q = n < SIZE_MAX ? zalloc(p, n + 1) : NULL;

	if (q != NULL && n > 0)
		memcpy(q, s, n);
	return q;
}

/* The text built in sb, moved into the tree ("" when empty); sb is freed. */
static char *
sb_keep(struct parser *p, struct ag_strbuf *sb, size_t *lenp)
{
	char *q = dupmem(p, sb->data != NULL ? sb->data : "", sb->len);

	if (lenp != NULL)
		*lenp = sb->len;
	ag_strbuf_free(sb);
	return q;
}

/* ---- characters --------------------------------------------------------- */

static size_t
skipc(const struct parser *p, size_t i)
{
	while (i + 1 < p->len && p->s[i] == '\\' && p->s[i + 1] == '\n')
		i += 2;
	return i;
}

/* The current character after line continuations; -1 at the end. */
static int
cur(struct parser *p)
{
	size_t was = p->pos;

	if (was < p->len && p->s[was] != '\\')	/* no continuation here */
		return (unsigned char)p->s[was];

	p->pos = skipc(p, p->pos);
	if (p->pos == p->len && was < p->len)
		p->tail_cont = 1;
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

/* The character k positions ahead, continuations skipped. */
static int
la(struct parser *p, int k)
{
	size_t i = skipc(p, p->pos);

	while (k-- > 0) {
		if (i >= p->len)
			return -1;
		i = skipc(p, i + 1);
	}
	return i < p->len ? (unsigned char)p->s[i] : -1;
}

static void
adv(struct parser *p, int k)
{
	while (k-- > 0) {
		(void)cur(p);
		if (p->pos < p->len)
			p->pos++;
	}
}

static int
is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	    c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

static int
is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

int
ag_sh_is_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !is_name_start((unsigned char)s[0]))
		return 0;
	for (i = 1; i < n; i++)
		if (!is_name_char((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 (common/utf8.h). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned cp;

	return ag_utf8_seq(s, n, &cp);
}

/* Offset of the first invalid UTF-8 byte in s[0..n), or n. */
static size_t
utf8_bad(const char *s, size_t n)
{
	size_t i = 0, l;

	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if ((l = utf8_len((const unsigned char *)s + i, n - i)) == 0)
			return i;
		i += l;
	}
	return n;
}

/* Blanks and a comment; not the newline. */
static void
skip_ws(struct parser *p)
{
	size_t from = p->pos;
	int c;

	for (;;) {
		c = cur(p);
		if (c == ' ' || c == '\t')
			adv(p, 1);
		else if (c == '#') {
			/* A comment runs to the newline, continuations included. */
			const char *nl = memchr(p->s + p->pos, '\n',
			    p->len - p->pos);
			p->pos = nl ? (size_t)(nl - p->s) : p->len;
		} else
			break;
	}
	if (p->pos != from) {
		p->ws_from = from;
		p->ws_to = p->pos;
	}
}

/* Where the construct that ends here ends: before trailing blanks. */
static size_t
end_off(const struct parser *p)
{
	return p->base + (p->pos == p->ws_to && p->ws_from < p->ws_to ?
	    p->ws_from : p->pos);
}

/* Is the reserved word kw next, as a whole unquoted token? */
static int
kw_at(struct parser *p, const char *kw)
{
	size_t i;
	int c;

	/* asked of every command word; its first byte rules most out */
	if (p->pos < p->len && p->s[p->pos] != kw[0] && p->s[p->pos] != '\\')
		return 0;
	i = skipc(p, p->pos);

	for (; *kw != '\0'; kw++) {
		if (i >= p->len || p->s[i] != *kw)
			return 0;
		i = skipc(p, i + 1);
	}
	c = i < p->len ? (unsigned char)p->s[i] : -1;
	return c == -1 || is_meta(c);
}

static void
kw_eat(struct parser *p, const char *kw)
{
	adv(p, (int)strlen(kw));
}

/* ---- tokens --------------------------------------------------------------- */

enum tok {
	T_EOF, T_NL, T_SEMI, T_DSEMI, T_SEMIAND, T_DSEMIAND, T_AMP, T_AND,
	T_PIPE, T_OR, T_PIPEAMP, T_LP, T_RP, T_REDIR, T_WORD
};

static const char *const tok_names[] = {
	"end of file", "newline", ";", ";;", ";&", ";;&", "&", "&&",
	"|", "||", "|&", "(", ")", "", ""
};

/*
 * If a redirection's fd prefix starts at raw index i (digits or {name}
 * right before < or >), return 1.  A number too big for an int is a
 * plain word to bash, and so is anything followed by <( or >(.
 */
static int
fd_prefix_at(const struct parser *p, size_t i, long long *fdp, size_t *endp)
{
	long long v = 0;
	size_t nd = 0;
	int c;

	if (i < p->len && p->s[i] == '{') {
		i = skipc(p, i + 1);
		if (i >= p->len || !is_name_start((unsigned char)p->s[i]))
			return 0;
		while (i < p->len && is_name_char((unsigned char)p->s[i]))
			i = skipc(p, i + 1);
		if (i >= p->len || p->s[i] != '}')
			return 0;
		i = skipc(p, i + 1);
		v = -1;
	} else {
		while (i < p->len && is_digit((unsigned char)p->s[i])) {
			if (++nd > 18)
				return 0;
			v = v * 10 + (p->s[i] - '0');
			i = skipc(p, i + 1);
		}
		if (nd == 0 || v > INT_MAX)
			return 0;
	}
	if (i >= p->len || (p->s[i] != '<' && p->s[i] != '>'))
		return 0;
	c = skipc(p, i + 1) < p->len ? p->s[skipc(p, i + 1)] : -1;
	if (c == '(')
		return 0;
	if (fdp)
		*fdp = v;
	if (endp)
		*endp = i;
	return 1;
}

static enum tok
peek(struct parser *p)
{
	int c = cur(p), c1;

	switch (c) {
	case -1:
		return T_EOF;
	case '\n':
		return T_NL;
	case ';':
		c1 = la(p, 1);
		if (c1 == ';')
			return la(p, 2) == '&' ? T_DSEMIAND : T_DSEMI;
		return c1 == '&' ? T_SEMIAND : T_SEMI;
	case '&':
		c1 = la(p, 1);
		if (c1 == '&')
			return T_AND;
		return c1 == '>' ? T_REDIR : T_AMP;
	case '|':
		c1 = la(p, 1);
		if (c1 == '|')
			return T_OR;
		return c1 == '&' ? T_PIPEAMP : T_PIPE;
	case '(':
		return T_LP;
	case ')':
		return T_RP;
	case '<':
	case '>':
		return la(p, 1) == '(' ? T_WORD : T_REDIR;
	}
	if ((is_digit(c) || c == '{') && fd_prefix_at(p, p->pos, NULL, NULL))
		return T_REDIR;
	return T_WORD;
}

/* The text of the next token, for messages. */
static void
tok_text(struct parser *p, char *buf, size_t n)
{
	enum tok t = peek(p);
	size_t i, k;

	if (t != T_WORD && t != T_REDIR) {
		snprintf(buf, n, "%s", tok_names[t]);
		return;
	}
	i = p->pos;
	k = 0;
	if (t == T_REDIR) {
		while (i < p->len && k + 1 < n && k < 4 &&
		    strchr("<>&|-0123456789", p->s[i]) != NULL)
			buf[k++] = p->s[i++];
	} else {
		while (i < p->len && k + 1 < n && k < 40 &&
		    !is_meta((unsigned char)p->s[i]))
			buf[k++] = p->s[i++];
		if (k == 0 && i < p->len && k + 1 < n)
			buf[k++] = p->s[i];
	}
	buf[k] = '\0';
}

/* "syntax error near unexpected token `X'", or incomplete at the end. */
static int
unexpected(struct parser *p)
{
	char buf[64];

	if (peek(p) == T_EOF)
		return fail(p, AG_SH_INCOMPLETE, p->pos,
		    "syntax error: unexpected end of file");
	tok_text(p, buf, sizeof(buf));
	return fail(p, AG_SH_ERROR, p->pos,
	    "syntax error near unexpected token `%s'", buf);
}

/* ---- nodes and words ------------------------------------------------------ */

static struct ag_sh_node *
node_new(struct parser *p, enum ag_sh_node_type type, size_t off)
{
	struct ag_sh_node *n = zalloc(p, sizeof(*n));

	if (n != NULL) {
		n->type = type;
		n->off = n->end = p->base + off;
	}
	return n;
}

static int
add_kid(struct parser *p, struct ag_sh_node *n, struct ag_sh_node *kid)
{
	if (grow(p, &n->kids, n->nkids, sizeof(*n->kids)) == -1) {
		return -1;
	}
	n->kids[n->nkids++] = kid;
	return 0;
}

static int
add_word(struct parser *p, struct ag_sh_node *n, struct ag_sh_word *w)
{
	if (grow(p, &n->words, n->nwords, sizeof(*n->words)) == -1) {
		return -1;
	}
	n->words[n->nwords++] = w;
	return 0;
}

static int
wb_init(struct parser *p, struct wbuild *b, size_t off)
{
	memset(b, 0, sizeof(*b));
	ag_strbuf_init(&b->lit, 0);
	if ((b->w = zalloc(p, sizeof(*b->w))) == NULL)
		return -1;
	b->w->off = p->base + off;
	return 0;
}

static void
wb_discard(struct wbuild *b)
{
	ag_strbuf_free(&b->lit);
	b->w = NULL;
}

/* Append a part (moved in); returns its index or -1. */
static long
wb_part(struct parser *p, struct wbuild *b, struct ag_sh_part *pt);

/* The pending literal (b->haslit). */
static const char *
lit_text(const struct wbuild *b, size_t *lenp)
{
	if (b->slice != NULL) {
		*lenp = b->slicelen;
		return b->slice;
	}
	*lenp = b->lit.len;
	return b->lit.data != NULL ? b->lit.data : "";
}

static int
lit_is_name(const struct wbuild *b)
{
	size_t n;
	const char *t = lit_text(b, &n);

	return ag_sh_is_name(t, n);
}

static int
in_input(const struct parser *p, const char *s, size_t n)
{
	uintptr_t a = (uintptr_t)s, lo = (uintptr_t)p->s;

	return a >= lo && a - lo <= p->len && n <= p->len - (a - lo);
}

static int
wb_flush(struct parser *p, struct wbuild *b)
{
	struct ag_sh_part pt;
	const char *text;

	if (!b->haslit)
		return 0;
	b->haslit = 0;
	memset(&pt, 0, sizeof(pt));
	pt.type = AG_SH_P_LIT;
	pt.quote = b->litq;
	pt.off = p->base + b->litoff;
	pt.end = p->base + b->litend;
	text = lit_text(b, &pt.len);
	b->slice = NULL;
	if ((pt.text = dupmem(p, text, pt.len)) == NULL)
		return -1;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
}

static long
wb_part(struct parser *p, struct wbuild *b, struct ag_sh_part *pt)
{
	struct ag_sh_word *w = b->w;

	if (b->haslit && wb_flush(p, b) == -1) {
		return -1;
	}
	if (grow(p, &w->parts, w->nparts, sizeof(*w->parts)) == -1) {
		return -1;
	}
	w->parts[w->nparts] = *pt;
	return (long)w->nparts++;
}

/* Literal bytes in quoting context q, from input offsets off..end. */
static int
wb_lit(struct parser *p, struct wbuild *b, enum ag_sh_quote q,
    const char *s, size_t n, size_t off, size_t end)
{
	if (b->haslit && (b->litq != q || q == AG_SH_Q_BACKSLASH) &&
	    wb_flush(p, b) == -1)
		return -1;
	if (!b->haslit) {
		b->haslit = 1;
		b->litq = q;
		b->litoff = off;
		ag_strbuf_reset(&b->lit);
		b->slice = NULL;
		/*
		 * Most literals are one run of the input (a command name, a
		 * plain argument): kept as a pointer there, copied once into
		 * the tree by wb_flush, they cost no buffer of their own.
		 */
		if (in_input(p, s, n)) {
			b->slice = s;
			b->slicelen = n;
			b->litend = end;
			return 0;
		}
	} else if (b->slice != NULL) {
		if (s == b->slice + b->slicelen && in_input(p, s, n)) {
			b->slicelen += n;	/* the input's next bytes */
			b->litend = end;
			return 0;
		}
		if (ag_strbuf_append(&b->lit, b->slice, b->slicelen) == -1)
			return nomem(p);
		b->slice = NULL;
	}
	b->litend = end;
	if (ag_strbuf_append(&b->lit, s, n) == -1)
		return nomem(p);
	return 0;
}

/* A literal that must stay its own part (provisional { and [). */
static long
wb_single(struct parser *p, struct wbuild *b, const char *text, size_t off,
    size_t end)
{
	struct ag_sh_part pt;

	memset(&pt, 0, sizeof(pt));
	pt.type = AG_SH_P_LIT;
	pt.off = p->base + off;
	pt.end = p->base + end;
	pt.len = strlen(text);
	if ((pt.text = dupmem(p, text, pt.len)) == NULL)
		return -1;
	return wb_part(p, b, &pt);
}

static struct ag_sh_word *
wb_finish(struct parser *p, struct wbuild *b, size_t off, size_t end)
{
	struct ag_sh_word *w;

	if (wb_flush(p, b) == -1) {
		wb_discard(b);
		return NULL;
	}
	w = b->w;
	b->w = NULL;
	wb_discard(b);
	w->off = p->base + off;
	w->end = p->base + end;
	if ((w->raw = dupmem(p, p->s + off, end - off)) == NULL) {
		return NULL;
	}
	return w;
}

/* ---- $'...' ----------------------------------------------------------------- */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
put_utf8(struct ag_strbuf *sb, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return ag_strbuf_append(sb, b, n);
}

/*
 * $'...' at p->pos (the $).  The escapes are decoded as bash does; a NUL
 * produced by an escape ends the string there (bash truncates it), the
 * rest up to the closing quote is dropped.
 */
static int
ansi_c(struct parser *p, struct wbuild *b)
{
	struct ag_strbuf sb;
	size_t off = p->pos, i, k;
	int nul = 0, c, v, d;
	uint32_t cp;
	char ch;

	adv(p, 1);		/* $ */
	p->pos = skipc(p, p->pos) + 1;	/* ' */
	ag_strbuf_init(&sb, 0);
	i = p->pos;
	for (;;) {
		if (i >= p->len) {
			ag_strbuf_free(&sb);
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching `''");
		}
		c = (unsigned char)p->s[i];
		if (c == '\'')
			break;
		if (c != '\\' || i + 1 >= p->len) {
			ch = (char)c;
			i++;
			goto put;
		}
		c = (unsigned char)p->s[i + 1];
		i += 2;
		switch (c) {
		case 'a': ch = 7; break;
		case 'b': ch = 8; break;
		case 'e': case 'E': ch = 27; break;
		case 'f': ch = 12; break;
		case 'n': ch = 10; break;
		case 'r': ch = 13; break;
		case 't': ch = 9; break;
		case 'v': ch = 11; break;
		case '\\': case '\'': case '"': case '?': ch = (char)c; break;
		case '0': case '1': case '2': case '3':
		case '4': case '5': case '6': case '7':
			v = c - '0';
			for (k = 0; k < 2 && i < p->len && p->s[i] >= '0' &&
			    p->s[i] <= '7'; k++)
				v = v * 8 + (p->s[i++] - '0');
			ch = (char)(v & 0xff);
			break;
		case 'x':
			v = 0;
			for (k = 0; k < 2 && i < p->len &&
			    (d = hexval((unsigned char)p->s[i])) >= 0; k++, i++)
				v = v * 16 + d;
			if (k == 0) {
				if (!nul && ag_strbuf_append(&sb, "\\x", 2) == -1)
					goto oom;
				continue;
			}
			ch = (char)v;
			break;
		case 'u':
		case 'U':
			cp = 0;
			for (k = 0; k < (c == 'u' ? 4u : 8u) && i < p->len &&
			    (d = hexval((unsigned char)p->s[i])) >= 0; k++, i++)
				cp = cp * 16 + (uint32_t)d;
			if (k == 0) {
				char esc[2] = { '\\', (char)c };
				if (!nul && ag_strbuf_append(&sb, esc, 2) == -1)
					goto oom;
				continue;
			}
			if (cp == 0) {
				nul = 1;
				continue;
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
				ag_strbuf_free(&sb);
				return fail(p, AG_SH_ERROR, i,
				    "$'...' escape is not a valid character");
			}
			if (!nul && put_utf8(&sb, cp) == -1)
				goto oom;
			continue;
		case 'c':
			if (i >= p->len) {
				ch = '\\';
				i--;
				break;
			}
			d = (unsigned char)p->s[i++];
			/* \c\\ takes both backslashes, as bash does */
			if (d == '\\' && i < p->len && p->s[i] == '\\')
				i++;
			if (d == '?')
				ch = 0x7f;
			else
				ch = (char)((d >= 'a' && d <= 'z' ? d - 32 : d) & 0x1f);
			break;
		default:
			/* unknown escape: both characters stay */
			if (!nul && ag_strbuf_addch(&sb, '\\') == -1)
				goto oom;
			ch = (char)c;
			break;
		}
put:
		if (ch == '\0')
			nul = 1;
		if (!nul && ag_strbuf_addch(&sb, ch) == -1)
			goto oom;
	}
	p->pos = i + 1;
	if (!p->in_heredoc && sb.len > 0 && utf8_bad(sb.data, sb.len) < sb.len) {
		ag_strbuf_free(&sb);
		return fail(p, AG_SH_ERROR, off,
		    "$'...' produces bytes that are not valid UTF-8");
	}
	if (wb_lit(p, b, AG_SH_Q_ANSI, sb.data ? sb.data : "", sb.len, off,
	    p->pos) == -1) {
		ag_strbuf_free(&sb);
		return -1;
	}
	ag_strbuf_free(&sb);
	return 0;
oom:
	ag_strbuf_free(&sb);
	return nomem(p);
}

/* ---- expansions --------------------------------------------------------- */

static int
depth_in(struct parser *p)
{
	if (++p->depth > AG_SH_MAX_DEPTH)
		return fail(p, AG_SH_ERROR, p->pos,
		    "nesting too deep (limit %d)", AG_SH_MAX_DEPTH);
	return 0;
}

/* Scan a nested word (operand, subscript, expression) of the given mode. */
static struct ag_sh_word *
subword(struct parser *p, enum wmode m, int dq, int stop_slash)
{
	struct wbuild b;
	size_t off = p->pos;

	if (wb_init(p, &b, off) == -1)
		return NULL;
	b.dq = dq;
	b.stop_slash = stop_slash;
	if (scan(p, &b, m, 1) == -1) {
		wb_discard(&b);
		return NULL;
	}
	return wb_finish(p, &b, off, p->pos);
}

/* Parse a command list that ends at ")" (for $( ) and <( )). */
static struct ag_sh_node *
paren_body(struct parser *p, size_t open)
{
	struct ag_sh_node *body;
	size_t floor = p->hdfloor;

	if (depth_in(p) == -1)
		return NULL;
	p->hdfloor = p->nhd;
	p->in_paren++;
	body = parse_list(p);
	p->in_paren--;
	if (body != NULL && cur(p) != ')') {
		if (peek(p) == T_EOF)
			fail(p, AG_SH_INCOMPLETE, open,
			    "unexpected end of file while looking for matching `)'");
		else
			unexpected(p);
		body = NULL;
	}
	if (body != NULL && p->nhd > p->hdfloor) {
		fail(p, AG_SH_ERROR, p->pos,
		    "here-document inside $(...) or <(...) must end before the `)'");
		body = NULL;
	}
	p->hdfloor = floor;
	p->depth--;
	if (body != NULL)
		adv(p, 1);
	return body;
}

static int
cmdsub(struct parser *p, struct wbuild *b, enum ag_sh_quote q)
{
	struct ag_sh_part pt;
	size_t off = p->pos;

	memset(&pt, 0, sizeof(pt));
	adv(p, 2);
	if ((pt.body = paren_body(p, off)) == NULL)
		return -1;
	pt.type = AG_SH_P_CMDSUB;
	pt.quote = q;
	pt.off = p->base + off;
	pt.end = p->base + p->pos;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
}

/*
 * Is the raw text s[from..to) balanced in parentheses, by plain counting
 * that skips quoted text?  bash reads the body of <(( ... )) that way, so
 * the parser's reading must agree with it.
 */
static int
parens_balanced(const struct parser *p, size_t from, size_t to)
{
	long depth = 0;
	size_t i;
	char c;

	for (i = from; i < to; i++) {
		c = p->s[i];
		if (c == '\\')
			i++;
		else if (c == '\'') {
			while (++i < to && p->s[i] != '\'')
				;
		} else if (c == '"') {
			while (++i < to && p->s[i] != '"')
				if (p->s[i] == '\\')
					i++;
		} else if (c == '(')
			depth++;
		else if (c == ')' && --depth < 0)
			return 0;
	}
	return depth == 0;
}

static int
procsub(struct parser *p, struct wbuild *b)
{
	struct ag_sh_part pt;
	size_t off = p->pos, start;
	int dparen;

	memset(&pt, 0, sizeof(pt));
	pt.dir = (char)cur(p);
	dparen = la(p, 2) == '(';
	adv(p, 2);
	start = p->pos;
	if ((pt.body = paren_body(p, off)) == NULL)
		return -1;
	if (dparen && !parens_balanced(p, start, p->pos - 1)) {
		return fail(p, AG_SH_ERROR, off,
		    "unbalanced parentheses inside <((...)): write <( ( ... ) )");
	}
	pt.type = AG_SH_P_PROCSUB;
	pt.off = p->base + off;
	pt.end = p->base + p->pos;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
}

/* Arithmetic expression after the opening; the closer is checked by the caller. */
static int
arith_part(struct parser *p, struct ag_sh_part *pt, enum wmode m, size_t off)
{
	size_t start = p->pos;

	memset(pt, 0, sizeof(*pt));
	pt->type = AG_SH_P_ARITH;
	if (depth_in(p) == -1)
		return -1;
	pt->expr = subword(p, m, 1, 0);
	p->depth--;
	if (pt->expr == NULL)
		return -1;
	if ((pt->text = dupmem(p, p->s + start, p->pos - start)) == NULL) {
		return -1;
	}
	pt->len = p->pos - start;
	if (strstr(pt->text, "<<") != NULL && strchr(pt->text, '\n') != NULL) {
		/* bash's reader takes such a << for a here-document */
		return fail(p, AG_SH_ERROR, off,
		    "`<<' in an arithmetic expression that spans lines is not "
		    "supported");
	}
	pt->off = p->base + off;
	return 0;
}

/* After an expression: expect "))". */
static int
expect_dparen(struct parser *p, size_t off, const char *what)
{
	if (cur(p) == ')' && la(p, 1) == ')') {
		adv(p, 2);
		return 0;
	}
	if (cur(p) == -1)
		return fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `))'");
	return fail(p, AG_SH_ERROR, p->pos,
	    "%s is not closed by `))'; if a subshell was meant, put a space "
	    "between the parentheses", what);
}

static int
arith_dollar(struct parser *p, struct wbuild *b, enum ag_sh_quote q)
{
	struct ag_sh_part pt;
	size_t off = p->pos;
	int bracket = la(p, 1) == '[';

	adv(p, bracket ? 2 : 3);
	if (arith_part(p, &pt, bracket ? M_ARITHB : M_ARITH, off) == -1)
		return -1;
	if (bracket) {
		if (cur(p) != ']') {
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching `]'");
		}
		adv(p, 1);
	} else if (expect_dparen(p, off, "$((") == -1) {
		return -1;
	}
	pt.quote = q;
	pt.end = p->base + p->pos;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
}

/*
 * Backquotes: bash reads up to the first unescaped backquote (quotes do
 * not count), removes the backslash before $ ` \ (and " inside double
 * quotes), and parses the result as a command.
 */
static int
backtick(struct parser *p, struct wbuild *b, enum ag_sh_quote q, int dq)
{
	struct ag_strbuf sb;
	struct ag_sh_part pt;
	size_t off = p->pos, i;
	int c, n;

	ag_strbuf_init(&sb, 0);
	adv(p, 1);
	i = p->pos;
	for (;;) {
		if (i >= p->len) {
			ag_strbuf_free(&sb);
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching ``'");
		}
		c = (unsigned char)p->s[i];
		if (c == '`')
			break;
		if (c == '\\') {
			if (i + 1 >= p->len) {
				ag_strbuf_free(&sb);
				return fail(p, AG_SH_INCOMPLETE, i,
				    "unexpected end of file after `\\'");
			}
			n = (unsigned char)p->s[i + 1];
			i += 2;
			if (n == '\n')
				continue;
			if (n == '$' || n == '`' || n == '\\' || (dq && n == '"')) {
				if (ag_strbuf_addch(&sb, (char)n) == -1)
					goto oom;
				continue;
			}
			if (ag_strbuf_addch(&sb, '\\') == -1 ||
			    ag_strbuf_addch(&sb, (char)n) == -1)
				goto oom;
			continue;
		}
		if (ag_strbuf_addch(&sb, (char)c) == -1)
			goto oom;
		i++;
	}
	p->pos = i + 1;
	memset(&pt, 0, sizeof(pt));
	pt.body = subparse(p, sb.data ? sb.data : "", sb.len,
	    p->base + off + 1, p->in_heredoc);
	ag_strbuf_free(&sb);
	if (pt.body == NULL)
		return -1;
	pt.type = AG_SH_P_CMDSUB;
	pt.backtick = 1;
	pt.quote = q;
	pt.off = p->base + off;
	pt.end = p->base + p->pos;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
oom:
	ag_strbuf_free(&sb);
	return nomem(p);
}

static int
is_special_param(int c)
{
	return c != -1 && strchr("@*#?-$!0", c) != NULL;
}

/* ${...} at p->pos. */
static int
param_braced(struct parser *p, struct wbuild *b, enum ag_sh_quote q, int dq)
{
	struct ag_sh_part pt;
	struct ag_strbuf name;
	size_t off = p->pos, n;
	const char *op = "";
	int c, c1, slash = 0;

	memset(&pt, 0, sizeof(pt));
	pt.type = AG_SH_P_PARAM;
	pt.quote = q;
	pt.braced = 1;
	ag_strbuf_init(&name, 256);
	adv(p, 2);
	if (depth_in(p) == -1)
		goto out;

	c = cur(p);
	c1 = la(p, 1);
	if (c == '#' && c1 != '}' && (is_name_start(c1) || is_digit(c1) ||
	    is_special_param(c1))) {
		pt.length = 1;
		adv(p, 1);
	} else if (c == '!' && c1 != '}' && c1 != -1) {
		pt.indirect = 1;
		adv(p, 1);
	}
	c = cur(p);
	if (is_name_start(c)) {
		while (is_name_char(c = cur(p))) {
			if (ag_strbuf_addch(&name, (char)c) == -1)
				goto toolong;
			adv(p, 1);
		}
	} else if (is_digit(c)) {
		while (is_digit(c = cur(p))) {
			if (ag_strbuf_addch(&name, (char)c) == -1)
				goto toolong;
			adv(p, 1);
		}
	} else if (is_special_param(c)) {
		ag_strbuf_addch(&name, (char)c);
		adv(p, 1);
	} else if (c == -1) {
		fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `}'");
		goto out;
	} else {
		fail(p, AG_SH_ERROR, off, "bad substitution");
		goto out;
	}
	if ((pt.text = sb_keep(p, &name, &n)) == NULL)
		goto out;
	pt.len = n;

	if (cur(p) == '[' && is_name_start((unsigned char)pt.text[0])) {
		adv(p, 1);
		if ((pt.subscript = subword(p, M_SUBSCR, dq, 0)) == NULL)
			goto out;
		if (cur(p) != ']') {
			fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching `]'");
			goto out;
		}
		adv(p, 1);
	}

	c = cur(p);
	c1 = la(p, 1);
	if (c == '}')
		goto close;
	if (pt.length) {
		fail(p, AG_SH_ERROR, off, "bad substitution");
		goto out;
	}
	if (pt.indirect && (c == '*' || c == '@') && c1 == '}') {
		/* ${!prefix*}, ${!prefix@}: names, no value */
		op = c == '*' ? "*" : "@";
		adv(p, 1);
		goto setop;
	}
	switch (c) {
	case ':':
		if (c1 == '-' || c1 == '=' || c1 == '?' || c1 == '+') {
			op = c1 == '-' ? ":-" : c1 == '=' ? ":=" :
			    c1 == '?' ? ":?" : ":+";
			adv(p, 2);
		} else {
			op = ":";
			adv(p, 1);
		}
		break;
	case '-': op = "-"; adv(p, 1); break;
	case '=': op = "="; adv(p, 1); break;
	case '?': op = "?"; adv(p, 1); break;
	case '+': op = "+"; adv(p, 1); break;
	case '#':
	case '%':
		if (c1 == c) {
			op = c == '#' ? "##" : "%%";
			adv(p, 2);
		} else {
			op = c == '#' ? "#" : "%";
			adv(p, 1);
		}
		break;
	case '/':
		slash = 1;
		if (c1 == '/' || c1 == '#' || c1 == '%') {
			op = c1 == '/' ? "//" : c1 == '#' ? "/#" : "/%";
			adv(p, 2);
		} else {
			op = "/";
			adv(p, 1);
		}
		break;
	case '^':
	case ',':
		if (c1 == c) {
			op = c == '^' ? "^^" : ",,";
			adv(p, 2);
		} else {
			op = c == '^' ? "^" : ",";
			adv(p, 1);
		}
		break;
	case '@':
		if (c1 == -1 || strchr("QEPAKaUuLk", c1) == NULL ||
		    la(p, 2) != '}') {
			fail(p, AG_SH_ERROR, off, "bad substitution");
			goto out;
		}
		op = "@";
		adv(p, 1);
		break;
	case -1:
		fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `}'");
		goto out;
	default:
		fail(p, AG_SH_ERROR, off, "bad substitution");
		goto out;
	}
	if ((pt.operand = subword(p, M_OPERAND, dq, slash)) == NULL)
		goto out;
	if (strcmp(op, ":") == 0 && pt.operand->nparts == 0) {
		fail(p, AG_SH_ERROR, off, "bad substitution");
		goto out;
	}
	if (slash && cur(p) == '/') {
		adv(p, 1);
		if ((pt.operand2 = subword(p, M_OPERAND, dq, 0)) == NULL)
			goto out;
	}
setop:
	if ((pt.op = dupmem(p, op, strlen(op))) == NULL)
		goto out;
close:
	if (pt.op == NULL && (pt.op = dupmem(p, "", 0)) == NULL)
		goto out;
	if (cur(p) != '}') {
		fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `}'");
		goto out;
	}
	adv(p, 1);
	p->depth--;
	ag_strbuf_free(&name);
	pt.off = p->base + off;
	pt.end = p->base + p->pos;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
toolong:
	fail(p, AG_SH_ERROR, off, "parameter name too long");
out:
	ag_strbuf_free(&name);
	return -1;
}

/*
 * The inside of "..." (p->pos just after the opening quote) and the
 * closing quote.  Empty quotes still leave a part: "" is an argument.
 */
static int
dq_string(struct parser *p, struct wbuild *b, size_t off)
{
	size_t n0;

	if (wb_flush(p, b) == -1)
		return -1;
	n0 = b->w->nparts;
	if (scan(p, b, M_DQ, 0) == -1)
		return -1;
	if (cur(p) != '"')
		return fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `\"'");
	if (!b->haslit && b->w->nparts == n0 &&
	    wb_lit(p, b, AG_SH_Q_DOUBLE, "", 0, off, p->pos + 1) == -1)
		return -1;
	adv(p, 1);
	return 0;
}

/* $ at p->pos in a context where $'...' and $"..." are quotes (or not). */
static int
dollar(struct parser *p, struct wbuild *b, enum ag_sh_quote q, int dq)
{
	struct ag_sh_part pt;
	struct ag_strbuf name;
	size_t off = p->pos, n;
	int c1 = la(p, 1), c;

	switch (c1) {
	case '{':
		return param_braced(p, b, q, dq);
	case '(':
		if (la(p, 2) == '(')
			return arith_dollar(p, b, q);
		return cmdsub(p, b, q);
	case '[':
		return arith_dollar(p, b, q);
	case '\'':
		if (!dq)
			return ansi_c(p, b);
		break;
	case '"':
		if (!dq) {
			/* $"..." is a double-quoted string (translation aside) */
			adv(p, 2);
			return dq_string(p, b, off);
		}
		break;
	}
	if (is_name_start(c1) || is_digit(c1) || is_special_param(c1)) {
		memset(&pt, 0, sizeof(pt));
		pt.type = AG_SH_P_PARAM;
		pt.quote = q;
		ag_strbuf_init(&name, 256);
		adv(p, 1);
		if (is_name_start(c1)) {
			while (is_name_char(c = cur(p))) {
				if (ag_strbuf_addch(&name, (char)c) == -1) {
					ag_strbuf_free(&name);
					return fail(p, AG_SH_ERROR, off,
					    "parameter name too long");
				}
				adv(p, 1);
			}
		} else {
			ag_strbuf_addch(&name, (char)c1);
			adv(p, 1);
		}
		if ((pt.text = sb_keep(p, &name, &n)) == NULL ||
		    (pt.op = dupmem(p, "", 0)) == NULL)
			return -1;
		pt.len = n;
		pt.off = p->base + off;
		pt.end = p->base + p->pos;
		return wb_part(p, b, &pt) < 0 ? -1 : 0;
	}
	adv(p, 1);
	return wb_lit(p, b, q, "$", 1, off, p->pos);
}

/* ---- words ------------------------------------------------------------------ */

/* Sequence expression {x..y[..incr]} as bash accepts it (s is the inside). */
static int
is_brace_seq(const char *s, size_t n)
{
	size_t i = 0, k;
	int alpha;

	for (k = 0; k < 3; k++) {
		if (k > 0) {
			if (i + 2 > n || s[i] != '.' || s[i + 1] != '.')
				return k == 2 && i == n ? 1 : 0;
			i += 2;
		}
		alpha = k < 2 && i + 1 <= n && is_name_start((unsigned char)s[i]) &&
		    s[i] != '_' && (i + 1 == n || s[i + 1] == '.');
		if (alpha && k < 2) {
			i++;
			continue;
		}
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i >= n || !is_digit((unsigned char)s[i]))
			return 0;
		while (i < n && is_digit((unsigned char)s[i]))
			i++;
	}
	return i == n;
}

/* Consume a tilde prefix at p->pos if there is one. */
static int
tilde(struct parser *p, struct wbuild *b, enum wmode m, int *done)
{
	struct ag_sh_part pt;
	size_t off = p->pos, i, start;
	int c;

	*done = 0;
	start = skipc(p, off + 1);
	for (i = start; i < p->len; i = skipc(p, i + 1)) {
		c = (unsigned char)p->s[i];
		if (c == '/' || (c == ':' && b->assign_like))
			break;
		if ((m == M_NORMAL || m == M_COND || m == M_PATTERN) && is_meta(c))
			break;
		if (m == M_PATTERN && c == '|')
			break;
		if (m == M_OPERAND && (c == '}' || (b->stop_slash && c == '/')))
			break;
		if (strchr("'\"\\$`", c) != NULL)
			return 0;
		if (p->s[i] == '\n')
			break;
	}
	memset(&pt, 0, sizeof(pt));
	pt.type = AG_SH_P_TILDE;
	/* the user name, continuations removed */
	{
		struct ag_strbuf u;
		size_t j, n;

		ag_strbuf_init(&u, 0);
		for (j = start; j < i; j = skipc(p, j + 1))
			if (ag_strbuf_addch(&u, p->s[j]) == -1) {
				ag_strbuf_free(&u);
				return nomem(p);
			}
		if ((pt.text = sb_keep(p, &u, &n)) == NULL)
			return -1;
		pt.len = n;
	}
	if (!p->in_heredoc && utf8_bad(pt.text, pt.len) < pt.len)
		return fail(p, AG_SH_ERROR, off, "word is not valid UTF-8");
	p->pos = i;
	pt.off = p->base + off;
	pt.end = p->base + i;
	*done = 1;
	return wb_part(p, b, &pt) < 0 ? -1 : 0;
}

/* A plain literal character (UTF-8 sequences whole). */
static int
lit_char(struct parser *p, struct wbuild *b, enum ag_sh_quote q)
{
	size_t off = p->pos, n = 1;
	unsigned char c = (unsigned char)p->s[off];

	if (c >= 0x80) {
		n = utf8_len((const unsigned char *)p->s + off, p->len - off);
		if (n == 0) {
			if (!p->in_heredoc)
				return fail(p, AG_SH_ERROR, off,
				    "word is not valid UTF-8");
			n = 1;
		}
	}
	p->pos += n;
	return wb_lit(p, b, q, p->s + off, n, off, p->pos);
}

/* '...' at p->pos: raw up to the next quote. */
static int
single_quote(struct parser *p, struct wbuild *b)
{
	size_t off = p->pos, start, end, bad;
	const char *q;

	adv(p, 1);
	start = p->pos;
	q = memchr(p->s + start, '\'', p->len - start);
	if (q == NULL)
		return fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `''");
	end = (size_t)(q - p->s);
	if (!p->in_heredoc &&
	    (bad = utf8_bad(p->s + start, end - start)) < end - start)
		return fail(p, AG_SH_ERROR, start + bad, "word is not valid UTF-8");
	p->pos = end + 1;
	return wb_lit(p, b, AG_SH_Q_SINGLE, p->s + start, end - start, off,
	    p->pos);
}

/* Extglob group X( ... ) in [[ ]] (bash turns extglob on there). */
static int
extglob(struct parser *p, struct wbuild *b, int regex)
{
	struct ag_sh_part pt;
	size_t off = p->pos;
	long idx;

	memset(&pt, 0, sizeof(pt));
	pt.type = AG_SH_P_GLOB;
	if ((pt.text = dupmem(p, "", 0)) == NULL)
		return -1;
	if ((idx = wb_part(p, b, &pt)) < 0)
		return -1;
	adv(p, regex ? 1 : 2);
	if (depth_in(p) == -1 || scan(p, b, M_EXTGLOB, 0) == -1)
		return -1;
	p->depth--;
	if (cur(p) != ')')
		return fail(p, AG_SH_INCOMPLETE, off,
		    "unexpected end of file while looking for matching `)'");
	adv(p, 1);
	if (wb_flush(p, b) == -1)
		return -1;
	if ((b->w->parts[idx].text = dupmem(p, p->s + off, p->pos - off)) == NULL)
		return -1;
	b->w->parts[idx].len = p->pos - off;
	b->w->parts[idx].off = p->base + off;
	b->w->parts[idx].end = p->base + p->pos;
	return 0;
}

static int
is_dqlike(enum wmode m, const struct wbuild *b)
{
	return m == M_DQ || m == M_HEREDOC || m == M_ARITH || m == M_ARITHB ||
	    m == M_ARITHFOR || ((m == M_OPERAND || m == M_SUBSCR) && b->dq);
}

/*
 * Characters that are plain text in an unquoted word and in "...": no
 * quoting, expansion, glob, brace, tilde or assignment meaning, ASCII (so
 * no UTF-8 check is due).  Used to take runs of them at once.
 */
static int
plain_normal(int c)
{
	if (c < 0x21 || c > 0x7e)
		return 0;
	return strchr("|&;()<>\\'\"`$*?[]{},~=:!@+#", c) == NULL;
}

static int
plain_dq(int c)
{
	if (c < 0x20 || c > 0x7e)
		return c == '\t' || c == '\n';
	return c != '"' && c != '\\' && c != '$' && c != '`';
}

/* In an unquoted here-document body a double quote is text too. */
static int
plain_heredoc(int c)
{
	return c == '"' || plain_dq(c);
}

/*
 * The three sets above as bits of one table, filled once at load: the
 * lexer asks for every character of every word, and a load and a mask
 * cost less than the tests.
 */
#define PLAIN_NORMAL	1u
#define PLAIN_DQ	2u
#define PLAIN_HEREDOC	4u
static unsigned char plain_tab[256];

__attribute__((constructor)) static void
plain_tab_init(void)
{
	int c;

	for (c = 0; c < 256; c++)
		plain_tab[c] = (unsigned char)((plain_normal(c) ? PLAIN_NORMAL : 0) |
		    (plain_dq(c) ? PLAIN_DQ : 0) | (plain_heredoc(c) ? PLAIN_HEREDOC : 0));
}

/* The bit of plain_tab for mode m; 0: no run is plain there. */
static unsigned
plain_bit(enum wmode m)
{
	return m == M_NORMAL ? PLAIN_NORMAL : m == M_DQ ? PLAIN_DQ :
	    m == M_HEREDOC ? PLAIN_HEREDOC : 0;
}

/*
 * The heart of the lexer: read characters into the word being built until
 * the mode's terminator (not consumed).  at_start: the word starts here
 * (tilde prefix).
 */
static int
scan(struct parser *p, struct wbuild *b, enum wmode m, int at_start)
{
	enum ag_sh_quote q = m == M_DQ ? AG_SH_Q_DOUBLE : AG_SH_Q_NONE;
	int depth = 0, c, n, done, dq = is_dqlike(m, b);
	unsigned pbit = plain_bit(m);
	size_t off;

	if (m == M_HEREDOC)
		q = AG_SH_Q_NONE;
	for (;;) {
		c = cur(p);
		off = p->pos;
		if (c >= 0 && c < 256 && (plain_tab[c] & pbit)) {
			/* fast path: a run of characters that mean nothing here */
			size_t i = off + 1;

			while (i < p->len && (plain_tab[(unsigned char)p->s[i]] & pbit))
				i++;
			p->pos = i;
			at_start = 0;
			if (wb_lit(p, b, q, p->s + off, i - off, off, i) == -1)
				return -1;
			continue;
		}
		if (c == -1) {
			if (m == M_NORMAL || m == M_COND || m == M_REGEX ||
			    m == M_PATTERN || m == M_HEREDOC)
				return 0;
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for the end of a %s",
			    m == M_DQ ? "double-quoted string" :
			    m == M_OPERAND || m == M_SUBSCR ? "${...} expansion" :
			    "nested construct");
		}
		/* terminators */
		switch (m) {
		case M_NORMAL:
			if (is_meta(c)) {
				if ((c == '<' || c == '>') && la(p, 1) == '(') {
					if (procsub(p, b) == -1)
						return -1;
					at_start = 0;
					continue;
				}
				return 0;
			}
			break;
		case M_COND:
		case M_PATTERN:
			if (is_meta(c))
				return 0;
			break;
		case M_REGEX:
			if (c == '(') {
				if (extglob(p, b, 1) == -1)
					return -1;
				continue;
			}
			if (is_meta(c))
				return 0;
			break;
		case M_DQ:
			if (c == '"')
				return 0;
			break;
		case M_HEREDOC:
			break;
		case M_ARITH:
		case M_ARITHFOR:
		case M_EXTGLOB:
			if (c == ';' && m == M_ARITHFOR && depth == 0)
				return 0;
			if (c == '(')
				depth++;
			else if (c == ')' && depth-- == 0)
				return 0;
			break;
		case M_ARITHB:
		case M_SUBSCR:
			if (c == '[')
				depth++;
			else if (c == ']' && depth-- == 0)
				return 0;
			break;
		case M_OPERAND:
			if (c == '}' || (c == '/' && b->stop_slash))
				return 0;
			/* bash runs <(...) inside an unquoted ${x:-...} too */
			if (!b->dq && (c == '<' || c == '>') && la(p, 1) == '(') {
				if (procsub(p, b) == -1)
					return -1;
				at_start = 0;
				continue;
			}
			break;
		}
		if ((m == M_EXTGLOB || m == M_REGEX) && (c == '<' || c == '>') &&
		    la(p, 1) == '(')
			return fail(p, AG_SH_ERROR, off,
			    "process substitution inside a [[ ]] pattern is not "
			    "supported");

		if (at_start && c == '~' && (m == M_NORMAL || m == M_COND ||
		    m == M_PATTERN || (m == M_OPERAND && !b->dq))) {
			at_start = 0;
			if (tilde(p, b, m, &done) == -1)
				return -1;
			if (done)
				continue;
		}
		at_start = 0;

		switch (c) {
		case '\\':
			if (p->pos + 1 >= p->len) {
				if (m == M_HEREDOC) {
					adv(p, 1);
					if (wb_lit(p, b, q, "\\", 1, off, p->pos) == -1)
						return -1;
					continue;
				}
				return fail(p, AG_SH_INCOMPLETE, off,
				    "unexpected end of file after `\\'");
			}
			n = (unsigned char)p->s[p->pos + 1];
			if (dq) {
				/* in "${x-...}" a backslash also hides } (and the / of
				 * ${x/pat/rep}) from the end of the expansion */
				if (n == '$' || n == '`' || n == '\\' ||
				    (n == '"' && m != M_HEREDOC) ||
				    (m == M_OPERAND && n == '}')) {
					p->pos += 2;
					if (wb_lit(p, b, AG_SH_Q_BACKSLASH,
					    p->s + off + 1, 1, off, p->pos) == -1)
						return -1;
				} else if (m != M_DQ && m != M_HEREDOC && n < 0x80) {
					/*
					 * Inside ${...} $((...)) [...] bash skips the
					 * character after a backslash when it looks
					 * for the end; both characters stay.
					 */
					p->pos += 2;
					if (wb_lit(p, b, q, p->s + off, 2, off,
					    p->pos) == -1)
						return -1;
				} else {
					p->pos += 1;
					if (wb_lit(p, b, q, "\\", 1, off, p->pos) == -1)
						return -1;
				}
				continue;
			}
			p->pos += 1;
			if (n >= 0x80) {
				if (lit_char(p, b, AG_SH_Q_BACKSLASH) == -1)
					return -1;
			} else {
				p->pos += 1;
				if (wb_lit(p, b, AG_SH_Q_BACKSLASH, p->s + off + 1, 1,
				    off, p->pos) == -1)
					return -1;
			}
			continue;
		case '\'':
			if (m == M_DQ || m == M_HEREDOC)
				break;
			if ((m == M_OPERAND || m == M_SUBSCR) && b->dq) {
				/*
				 * Inside "${...}" single quotes still hide a } from
				 * the scan but stay in the value; refuse rather
				 * than model which operators remove them.
				 */
				return fail(p, AG_SH_ERROR, off,
				    "single quotes inside a double-quoted ${...} "
				    "are not supported");
			}
			if (single_quote(p, b) == -1)
				return -1;
			continue;
		case '"':
			if (m == M_DQ || m == M_HEREDOC)
				break;
			adv(p, 1);
			if (dq_string(p, b, off) == -1)
				return -1;
			continue;
		case '`':
			if (backtick(p, b, q, m == M_DQ || b->dq) == -1)
				return -1;
			continue;
		case '$':
			if (dollar(p, b, q, dq) == -1)
				return -1;
			continue;
		}

		/* unquoted specials of unquoted words */
		if (m == M_NORMAL || m == M_COND || m == M_PATTERN) {
			if ((c == '*' || c == '?' || c == '+' || c == '@' ||
			    c == '!') && m == M_COND && la(p, 1) == '(') {
				if (extglob(p, b, 0) == -1)
					return -1;
				continue;
			}
			if ((c == '*' || c == '?') && !b->assign) {
				struct ag_sh_part pt;

				memset(&pt, 0, sizeof(pt));
				pt.type = AG_SH_P_GLOB;
				adv(p, 1);
				if ((pt.text = dupmem(p, c == '*' ? "*" : "?", 1)) == NULL)
					return -1;
				pt.len = 1;
				pt.off = p->base + off;
				pt.end = p->base + p->pos;
				if (wb_part(p, b, &pt) < 0)
					return -1;
				continue;
			}
			if (c == '[' && !b->assign) {
				long idx;

				adv(p, 1);
				if ((idx = wb_single(p, b, "[", off, p->pos)) < 0 ||
				    grow(p, &b->lbr, b->nlbr, sizeof(*b->lbr)) == -1)
					return -1;
				b->lbr[b->nlbr++] = (size_t)idx;
				continue;
			}
			if (c == ']' && b->nlbr > 0) {
				size_t k;

				/* the pending [ open bracket expressions */
				for (k = 0; k < b->nlbr; k++)
					b->w->parts[b->lbr[k]].type = AG_SH_P_GLOB;
				b->nlbr = 0;
			}
		}
		if (m == M_NORMAL && !b->assign) {
			if (c == '{') {
				long idx;

				adv(p, 1);
				if ((idx = wb_single(p, b, "{", off, p->pos)) < 0 ||
				    grow(p, &b->br, b->nbr, sizeof(*b->br)) == -1)
					return -1;
				b->br[b->nbr].part = (size_t)idx;
				b->br[b->nbr].off = off;
				b->br[b->nbr].comma = 0;
				b->nbr++;
				continue;
			}
			if (c == ',' && b->nbr > 0)
				b->br[b->nbr - 1].comma = 1;
			if (c == '}' && b->nbr > 0) {
				struct brace *br = &b->br[--b->nbr];
				size_t in = br->off + 1;
				int valid = br->comma;

				if (!valid && off - in <= 64)
					valid = is_brace_seq(p->s + in, off - in);
				if (valid) {
					struct ag_sh_part *pt;

					adv(p, 1);
					if (wb_flush(p, b) == -1)
						return -1;
					pt = &b->w->parts[br->part];
					pt->type = AG_SH_P_BRACE;
					if ((pt->text = dupmem(p, p->s + br->off,
					    p->pos - br->off)) == NULL)
						return -1;
					pt->len = p->pos - br->off;
					pt->end = p->base + p->pos;
					/* an enclosing group sees a comma inside */
					continue;
				}
			}
		}
		if (c == '=' && (m == M_NORMAL) && !b->assign_like &&
		    b->w->nparts == 0 && b->haslit && b->litq == AG_SH_Q_NONE &&
		    lit_is_name(b)) {
			/* NAME=value as an argument: bash expands ~ after = and : */
			b->assign_like = 1;
			adv(p, 1);
			if (wb_lit(p, b, q, "=", 1, off, p->pos) == -1)
				return -1;
			at_start = 1;
			continue;
		}
		if (c == ':' && b->assign_like && (m == M_NORMAL)) {
			adv(p, 1);
			if (wb_lit(p, b, q, ":", 1, off, p->pos) == -1)
				return -1;
			at_start = 1;
			continue;
		}
		if (lit_char(p, b, q) == -1)
			return -1;
	}
}

/* An ordinary word at p->pos in the given mode. */
static struct ag_sh_word *
parse_word(struct parser *p, enum wmode m)
{
	struct wbuild b;
	size_t off;

	cur(p);
	off = p->pos;
	if (wb_init(p, &b, off) == -1)
		return NULL;
	if (scan(p, &b, m, 1) == -1) {
		wb_discard(&b);
		return NULL;
	}
	if (p->pos == off) {
		wb_discard(&b);
		unexpected(p);
		return NULL;
	}
	return wb_finish(p, &b, off, p->pos);
}

/*
 * The inside of NAME[...] (p just past the "["), into the word being
 * built: the subscript's parts, so expansions in it stay visible, then the
 * closing "]".  open is where an unclosed bracket is reported.
 */
static int
wb_subscript(struct parser *p, struct wbuild *b, size_t open)
{
	struct ag_sh_word *sub;
	size_t k;
	int rc = -1;

	if ((sub = subword(p, M_SUBSCR, 0, 0)) == NULL)
		return -1;
	if (cur(p) != ']') {
		fail(p, AG_SH_INCOMPLETE, open,
		    "unexpected end of file while looking for matching `]'");
		goto out;
	}
	if (wb_flush(p, b) == -1)
		goto out;
	for (k = 0; k < sub->nparts; k++) {
		struct ag_sh_part pt = sub->parts[k];

		memset(&sub->parts[k], 0, sizeof(sub->parts[k]));
		if (wb_part(p, b, &pt) < 0)
			goto out;
	}
	adv(p, 1);
	rc = wb_lit(p, b, AG_SH_Q_NONE, "]", 1, p->pos - 1, p->pos);
out:
	return rc;
}

/*
 * A word where bash reads NAME[...] with matched brackets (blanks
 * included): before the command name and in arguments of declaration
 * builtins.  The bracket becomes a GLOB part: unless the word is an
 * assignment (handled elsewhere) bash would glob it.
 */
static struct ag_sh_word *
parse_word_subscript(struct parser *p)
{
	struct wbuild b;
	size_t off, i;
	int c;

	cur(p);
	off = p->pos;
	for (i = off; i < p->len && is_name_char((unsigned char)p->s[i]);
	    i = skipc(p, i + 1))
		;
	if (i == off || !is_name_start((unsigned char)p->s[off]) ||
	    i >= p->len || p->s[i] != '[')
		return parse_word(p, M_NORMAL);
	if (wb_init(p, &b, off) == -1)
		return NULL;
	while ((size_t)p->pos < i) {
		c = cur(p);
		adv(p, 1);
		if (wb_lit(p, &b, AG_SH_Q_NONE, (char *)&(char){ (char)c }, 1,
		    p->pos - 1, p->pos) == -1)
			goto bad;
	}
	{
		struct ag_sh_part pt;

		memset(&pt, 0, sizeof(pt));
		pt.type = AG_SH_P_GLOB;
		if ((pt.text = dupmem(p, "[", 1)) == NULL)
			goto bad;
		pt.len = 1;
		pt.off = p->base + p->pos;
		adv(p, 1);
		pt.end = p->base + p->pos;
		if (wb_part(p, &b, &pt) < 0)
			goto bad;
	}
	if (wb_subscript(p, &b, off) == -1 || scan(p, &b, M_NORMAL, 0) == -1)
		goto bad;
	return wb_finish(p, &b, off, p->pos);
bad:
	wb_discard(&b);
	return NULL;
}

/* ---- here-documents ----------------------------------------------------- */

/* Delimiter after quote removal (no expansion: bash does none). */
static int
heredoc_delim(struct parser *p, const struct ag_sh_word *w, char **out,
    size_t *outlen, int *quoted)
{
	struct ag_strbuf sb;
	const char *r = w->raw;
	size_t n = strlen(r), i = 0;
	int dq = 0;

	*quoted = 0;
	ag_strbuf_init(&sb, 0);
	if (strstr(r, "$'") != NULL || strstr(r, "$\"") != NULL) {
		ag_strbuf_free(&sb);
		return fail(p, AG_SH_ERROR, w->off - p->base,
		    "here-document delimiter with $'...' or $\"...\" is not supported");
	}
	while (i < n) {
		char c = r[i];

		if (c == '\\' && i + 1 < n) {
			if (r[i + 1] == '\n') {
				i += 2;
				continue;
			}
			*quoted = 1;
			if (dq && strchr("$`\"\\", r[i + 1]) == NULL) {
				if (ag_strbuf_addch(&sb, c) == -1)
					goto oom;
			}
			if (ag_strbuf_addch(&sb, r[i + 1]) == -1)
				goto oom;
			i += 2;
			continue;
		}
		if (c == '"') {
			*quoted = 1;
			dq = !dq;
			i++;
			continue;
		}
		if (c == '\'' && !dq) {
			const char *e = memchr(r + i + 1, '\'', n - i - 1);

			*quoted = 1;
			if (e == NULL)
				break;
			if (ag_strbuf_append(&sb, r + i + 1,
			    (size_t)(e - (r + i + 1))) == -1)
				goto oom;
			i = (size_t)(e - r) + 1;
			continue;
		}
		if (ag_strbuf_addch(&sb, c) == -1)
			goto oom;
		i++;
	}
	return (*out = sb_keep(p, &sb, outlen)) == NULL ? -1 : 0;
oom:
	ag_strbuf_free(&sb);
	return nomem(p);
}

/* Read the pending here-document bodies; p->pos is at a line start. */
static int
read_heredocs(struct parser *p)
{
	struct ag_strbuf body, line;
	size_t i, start, le, nb, tabs;
	const char *nl;
	int ok = -1;

	ag_strbuf_init(&body, 0);
	ag_strbuf_init(&line, 0);
	for (i = p->hdfloor; i < p->nhd; i++) {
		struct hdoc *h = &p->hd[i];
		struct ag_sh_word *w = h->body;

		ag_strbuf_reset(&body);
		start = p->pos;
		for (;;) {
			if (p->pos >= p->len) {
				fail(p, AG_SH_INCOMPLETE, p->pos,
				    "here-document not terminated (wanted `%s')",
				    h->delim);
				goto out;
			}
			/* one logical line: unquoted bodies join continuations */
			ag_strbuf_reset(&line);
			for (;;) {
				nl = memchr(p->s + p->pos, '\n', p->len - p->pos);
				le = nl ? (size_t)(nl - p->s) : p->len;
				nb = 0;
				while (!h->quoted && nb < le - p->pos &&
				    p->s[le - 1 - nb] == '\\')
					nb++;
				if (nb % 2 == 1 && nl != NULL) {
					if (ag_strbuf_append(&line, p->s + p->pos,
					    le - 1 - p->pos) == -1)
						goto oom;
					p->pos = le + 1;
					continue;
				}
				if (ag_strbuf_append(&line, p->s + p->pos,
				    le - p->pos) == -1)
					goto oom;
				p->pos = nl ? le + 1 : p->len;
				break;
			}
			tabs = 0;
			if (h->strip)
				while (tabs < line.len && line.data[tabs] == '\t')
					tabs++;
			if (line.len - tabs == h->dlen && (h->dlen == 0 ||
			    memcmp(line.data + tabs, h->delim, h->dlen) == 0))
				break;
			/*
			 * Inside $( ) bash also ends the body at a line that
			 * starts with the delimiter and goes on with blanks and
			 * ")" ("E)", "E )x"), so what follows would be live
			 * code to bash but body text to us.  Any line that
			 * starts with the delimiter and has more is refused.
			 */
			if (p->in_paren > 0 && h->dlen > 0 && line.len - tabs > h->dlen &&
			    memcmp(line.data + tabs, h->delim, h->dlen) == 0) {
				fail(p, AG_SH_ERROR, start,
				    "here-document line starting with its delimiter `%s' "
				    "inside $(...) is read differently by bash; refused",
				    h->delim);
				goto out;
			}
			if (ag_strbuf_append(&body, line.data ? line.data + tabs : "",
			    line.len - tabs) == -1 ||
			    ag_strbuf_addch(&body, '\n') == -1)
				goto oom;
		}
		w->off = p->base + start;
		w->end = p->base + p->pos;
		if ((w->raw = dupmem(p, body.data ? body.data : "", body.len)) == NULL)
			goto out;
		if (h->quoted) {
			struct ag_sh_part pt;

			memset(&pt, 0, sizeof(pt));
			pt.type = AG_SH_P_LIT;
			pt.quote = AG_SH_Q_SINGLE;
			pt.off = w->off;
			pt.end = w->end;
			if ((pt.text = dupmem(p, w->raw, body.len)) == NULL)
				goto out;
			pt.len = body.len;
			if ((w->parts = zalloc(p, sizeof(*w->parts))) == NULL)
				goto out;
			w->parts[0] = pt;
			w->nparts = 1;
		} else {
			struct parser q;
			struct wbuild b;
			struct ag_sh_word *bw;

			memset(&q, 0, sizeof(q));
			q.s = w->raw;
			q.len = body.len;
			q.base = p->base + start;
			q.depth = p->depth;
			q.err = p->err;
			q.ar = p->ar;
			q.in_heredoc = 1;
			if (wb_init(&q, &b, 0) == -1 || scan(&q, &b, M_HEREDOC, 0) == -1) {
				if (b.w != NULL)
					wb_discard(&b);
				p->status = AG_SH_ERROR;
				goto out;
			}
			bw = wb_finish(&q, &b, 0, q.len);
			if (bw == NULL) {
				p->status = AG_SH_ERROR;
				goto out;
			}
			w->parts = bw->parts;
			w->nparts = bw->nparts;
			bw->parts = NULL;
			bw->nparts = 0;
		}
	}
	p->nhd = p->hdfloor;
	ok = 0;
	goto out;
oom:
	nomem(p);
out:
	ag_strbuf_free(&body);
	ag_strbuf_free(&line);
	return ok;
}

/* Consume the newline at p->pos and read here-documents due now. */
static int
newline(struct parser *p)
{
	adv(p, 1);
	if (p->hdfloor > 0)
		return fail(p, AG_SH_ERROR, p->pos - 1,
		    "a newline inside $(...) while a here-document is pending "
		    "is not supported");
	if (p->nhd > p->hdfloor)
		return read_heredocs(p);
	return 0;
}

/* Blanks, comments and newlines. */
static int
skip_nl(struct parser *p)
{
	for (;;) {
		skip_ws(p);
		if (cur(p) != '\n')
			return 0;
		if (newline(p) == -1)
			return -1;
	}
}

/* ---- redirections ------------------------------------------------------- */

static int
all_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_digit((unsigned char)s[i]))
			return 0;
	return 1;
}

static int
parse_redir(struct parser *p, struct ag_sh_node *n)
{
	struct ag_sh_redir r;
	struct ag_sh_word *w;
	long long fd;
	size_t end, off;
	int c;

	memset(&r, 0, sizeof(r));
	r.fd = -1;
	cur(p);
	off = p->pos;
	r.off = p->base + off;
	if (fd_prefix_at(p, p->pos, &fd, &end)) {
		if (p->s[p->pos] == '{') {
			/* {name} */
			struct ag_strbuf sb;

			ag_strbuf_init(&sb, 0);
			adv(p, 1);
			while ((c = cur(p)) != '}') {
				if (ag_strbuf_addch(&sb, (char)c) == -1) {
					ag_strbuf_free(&sb);
					return nomem(p);
				}
				adv(p, 1);
			}
			adv(p, 1);
			if ((r.fdvar = sb_keep(p, &sb, NULL)) == NULL)
				return -1;
		} else {
			r.fd = (int)fd;
			p->pos = end;
		}
	}
	c = cur(p);
	if (c == '&') {
		adv(p, 2);
		if (cur(p) == '>') {
			adv(p, 1);
			r.op = AG_SH_R_APPEND_ERR;
		} else
			r.op = AG_SH_R_OUT_ERR;
	} else if (c == '<') {
		adv(p, 1);
		c = cur(p);
		if (c == '<') {
			adv(p, 1);
			if (cur(p) == '<') {
				adv(p, 1);
				r.op = AG_SH_R_HERESTRING;
			} else if (cur(p) == '-') {
				adv(p, 1);
				r.op = AG_SH_R_HEREDOC_STRIP;
			} else
				r.op = AG_SH_R_HEREDOC;
		} else if (c == '&') {
			adv(p, 1);
			r.op = AG_SH_R_DUP_IN;
		} else if (c == '>') {
			adv(p, 1);
			r.op = AG_SH_R_RDWR;
		} else
			r.op = AG_SH_R_IN;
	} else {
		adv(p, 1);
		c = cur(p);
		if (c == '>') {
			adv(p, 1);
			r.op = AG_SH_R_APPEND;
		} else if (c == '&') {
			adv(p, 1);
			r.op = AG_SH_R_DUP_OUT;
		} else if (c == '|') {
			adv(p, 1);
			r.op = AG_SH_R_CLOBBER;
		} else
			r.op = AG_SH_R_OUT;
	}
	skip_ws(p);
	if ((r.op == AG_SH_R_DUP_IN || r.op == AG_SH_R_DUP_OUT) && cur(p) == '-') {
		/* bash reads the "-" of <&- >&- as a token of its own: ">&-x"
		 * closes the fd and "x" is the next word */
		struct wbuild b;

		off = p->pos;
		adv(p, 1);
		if (wb_init(p, &b, off) == -1) {
			return -1;
		}
		if (wb_lit(p, &b, AG_SH_Q_NONE, "-", 1, off, p->pos) == -1 ||
		    (w = wb_finish(p, &b, off, p->pos)) == NULL) {
			wb_discard(&b);
			return -1;
		}
		goto have_target;
	}
	if (peek(p) != T_WORD) {
		if (peek(p) == T_EOF)
			return fail(p, AG_SH_ERROR, p->pos,
			    "syntax error near unexpected token `newline'");
		return unexpected(p);
	}
	if ((w = parse_word(p, M_NORMAL)) == NULL) {
		return -1;
	}
have_target:
	if (r.op == AG_SH_R_HEREDOC || r.op == AG_SH_R_HEREDOC_STRIP) {
		struct hdoc h;

		memset(&h, 0, sizeof(h));
		if (heredoc_delim(p, w, &r.delim, &h.dlen, &r.heredoc_quoted) == -1) {
			return -1;
		}
		if ((w = zalloc(p, sizeof(*w))) == NULL ||
		    grow(p, &p->hd, p->nhd, sizeof(*p->hd)) == -1) {
			return -1;
		}
		h.body = w;
		h.delim = r.delim;
		h.strip = r.op == AG_SH_R_HEREDOC_STRIP;
		h.quoted = r.heredoc_quoted;
		p->hd[p->nhd++] = h;
	} else if (r.op == AG_SH_R_DUP_IN || r.op == AG_SH_R_DUP_OUT) {
		size_t len;
		char *lit = ag_sh_word_literal(w, &len);
		int isfd = lit != NULL && (strcmp(lit, "-") == 0 ||
		    all_digits(lit, len) ||
		    (len > 1 && lit[len - 1] == '-' && all_digits(lit, len - 1)));

		free(lit);
		/* >&word with a word that is no fd: output and error to a file */
		if (!isfd && r.op == AG_SH_R_DUP_OUT)
			r.op = AG_SH_R_OUT_ERR;
	}
	r.target = w;
	if (grow(p, &n->redirs, n->nredirs, sizeof(*n->redirs)) == -1) {
		return -1;
	}
	n->redirs[n->nredirs++] = r;
	return 0;
}

/* Redirections after a compound command. */
static int
trailing_redirs(struct parser *p, struct ag_sh_node *n)
{
	for (;;) {
		skip_ws(p);
		if (peek(p) != T_REDIR)
			return 0;
		if (parse_redir(p, n) == -1)
			return -1;
	}
}

/* ---- simple commands and assignments ------------------------------------ */

/* An element of a=( ... ): [key]=value is read with matched brackets. */
static struct ag_sh_word *
array_elem(struct parser *p)
{
	struct wbuild b;
	size_t off;

	cur(p);
	off = p->pos;
	if (p->s[off] != '[')
		return parse_word(p, M_NORMAL);
	if (wb_init(p, &b, off) == -1)
		return NULL;
	adv(p, 1);
	if (wb_lit(p, &b, AG_SH_Q_NONE, "[", 1, off, p->pos) == -1)
		goto bad;
	if (wb_subscript(p, &b, off) == -1)
		goto bad;
	b.assign = 1;
	if (scan(p, &b, M_NORMAL, 0) == -1)
		goto bad;
	return wb_finish(p, &b, off, p->pos);
bad:
	wb_discard(&b);
	return NULL;
}

/* ( elem ... ) of an array assignment, at the "(". */
static int
array_elems(struct parser *p, struct ag_sh_word ***elemsp, size_t *np,
    size_t off)
{
	struct ag_sh_word *w;
	int c;

	adv(p, 1);
	if (depth_in(p) == -1)
		return -1;
	for (;;) {
		if (skip_nl(p) == -1)
			return -1;
		c = peek(p);
		if (c == T_RP) {
			adv(p, 1);
			break;
		}
		if (c == T_EOF)
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching `)'");
		if (c != T_WORD)
			return unexpected(p);
		if ((w = array_elem(p)) == NULL)
			return -1;
		if (grow(p, elemsp, *np, sizeof(**elemsp)) == -1) {
			return -1;
		}
		(*elemsp)[(*np)++] = w;
	}
	p->depth--;
	c = cur(p);
	if (c != -1 && !is_meta(c))
		return fail(p, AG_SH_ERROR, p->pos,
		    "syntax error near unexpected token `%c'", c);
	return 0;
}

/*
 * NAME=( ... ) as an argument of a declaration builtin: bash reads it as a
 * compound assignment; it stays one word here (NAME=( elements )), with
 * the elements' expansions visible.  Returns NULL with *tried 0 when the
 * text is not of that form.
 */
static struct ag_sh_word *
decl_array_word(struct parser *p, int *tried)
{
	struct ag_sh_word **elems = NULL;
	struct wbuild b;
	size_t nelems = 0, off, i, k, e;
	int ok = -1;

	*tried = 0;
	cur(p);
	off = p->pos;
	for (i = off; i < p->len && is_name_char((unsigned char)p->s[i]);
	    i = skipc(p, i + 1))
		;
	if (i == off || !is_name_start((unsigned char)p->s[off]))
		return NULL;
	if (i < p->len && p->s[i] == '+')
		i = skipc(p, i + 1);
	if (i >= p->len || p->s[i] != '=')
		return NULL;
	e = skipc(p, i + 1);
	if (e >= p->len || p->s[e] != '(')
		return NULL;
	*tried = 1;
	if (wb_init(p, &b, off) == -1)
		return NULL;
	while (p->pos < e) {
		char c = (char)cur(p);

		adv(p, 1);
		if (wb_lit(p, &b, AG_SH_Q_NONE, &c, 1, p->pos - 1, p->pos) == -1)
			goto out;
	}
	if (wb_lit(p, &b, AG_SH_Q_NONE, "(", 1, p->pos, p->pos + 1) == -1 ||
	    array_elems(p, &elems, &nelems, off) == -1 ||
	    wb_flush(p, &b) == -1)
		goto out;
	for (k = 0; k < nelems; k++) {
		if (k > 0 && wb_lit(p, &b, AG_SH_Q_NONE, " ", 1, elems[k]->off - p->base,
		    elems[k]->off - p->base) == -1)
			goto out;
		if (wb_flush(p, &b) == -1)
			goto out;
		for (i = 0; i < elems[k]->nparts; i++) {
			struct ag_sh_part pt = elems[k]->parts[i];

			memset(&elems[k]->parts[i], 0, sizeof(pt));
			if (wb_part(p, &b, &pt) < 0)
				goto out;
		}
	}
	if (wb_lit(p, &b, AG_SH_Q_NONE, ")", 1, p->pos - 1, p->pos) == -1)
		goto out;
	ok = 0;
out:
	for (k = 0; k < nelems; k++)
	if (ok == -1) {
		wb_discard(&b);
		return NULL;
	}
	return wb_finish(p, &b, off, p->pos);
}

/*
 * NAME=, NAME+=, NAME[sub]= at p->pos?  *got is set when it was an
 * assignment (and is parsed into n).  A NAME[...] not followed by = is
 * left for the caller to read as a word.
 */
static int
try_assign(struct parser *p, struct ag_sh_node *n, int *got)
{
	struct ag_sh_assign a;
	size_t save, off, i;
	struct ag_strbuf name;
	int c;

	*got = 0;
	cur(p);
	save = off = p->pos;
	if (!is_name_start(cur(p)))
		return 0;
	/* cheap pre-check on raw text: a name, then = += or [ */
	for (i = off; i < p->len && is_name_char((unsigned char)p->s[i]);
	    i = skipc(p, i + 1))
		;
	if (i >= p->len || (p->s[i] != '=' && p->s[i] != '[' &&
	    !(p->s[i] == '+' && skipc(p, i + 1) < p->len &&
	    p->s[skipc(p, i + 1)] == '=')))
		return 0;

	memset(&a, 0, sizeof(a));
	a.off = p->base + off;
	ag_strbuf_init(&name, 0);
	while (is_name_char(c = cur(p))) {
		if (ag_strbuf_addch(&name, (char)c) == -1) {
			ag_strbuf_free(&name);
			return nomem(p);
		}
		adv(p, 1);
	}
	if ((a.name = sb_keep(p, &name, NULL)) == NULL)
		return -1;
	if (cur(p) == '[') {
		size_t nhd = p->nhd;

		adv(p, 1);
		if ((a.subscript = subword(p, M_SUBSCR, 0, 0)) == NULL) {
			return -1;
		}
		if (cur(p) != ']') {
			return fail(p, AG_SH_INCOMPLETE, off,
			    "unexpected end of file while looking for matching `]'");
		}
		adv(p, 1);
		if (!(cur(p) == '=' || (cur(p) == '+' && la(p, 1) == '='))) {
			/* not an assignment: a word (glob) after all */
			p->pos = save;
			p->nhd = nhd;
			return 0;
		}
	}
	if (cur(p) == '+') {
		a.append = 1;
		adv(p, 1);
	}
	adv(p, 1);	/* = */
	if (cur(p) == '(' ) {
		if (a.subscript != NULL) {
			return fail(p, AG_SH_ERROR, p->pos,
			    "syntax error near unexpected token `('");
		}
		a.is_array = 1;
		if (array_elems(p, &a.elems, &a.nelems, off) == -1) {
			return -1;
		}
	} else {
		struct wbuild b;
		size_t voff = p->pos;

		if (wb_init(p, &b, voff) == -1) {
			return -1;
		}
		b.assign = 1;
		b.assign_like = 1;
		if (scan(p, &b, M_NORMAL, 1) == -1) {
			wb_discard(&b);
			return -1;
		}
		if ((a.value = wb_finish(p, &b, voff, p->pos)) == NULL) {
			return -1;
		}
	}
	if (grow(p, &n->assigns, n->nassigns, sizeof(*n->assigns)) == -1) {
		return -1;
	}
	n->assigns[n->nassigns++] = a;
	*got = 1;
	return 0;
}

static int
is_decl_builtin(const struct ag_sh_word *w)
{
	static const char *const names[] = {
		"declare", "typeset", "export", "local", "readonly", NULL
	};
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (ag_strcmp(w->raw, names[i]) == 0)
			return 1;
	return 0;
}

static int
is_compound_start(struct parser *p)
{
	static const char *const kws[] = {
		"{", "if", "while", "until", "for", "select", "case", "[[", NULL
	};
	size_t i;

	if (peek(p) == T_LP)
		return 1;
	for (i = 0; kws[i] != NULL; i++)
		if (kw_at(p, kws[i]))
			return 1;
	return 0;
}

/*
 * A function name: plain text, no quoting or expansion (what bash would
 * make of a quoted name is not worth modelling).  NULL if not.
 */
static char *
func_name(struct parser *p, const struct ag_sh_word *w)
{
	char *lit = ag_sh_word_literal(w, NULL);
	int plain = lit != NULL && lit[0] != '\0' && strcmp(lit, w->raw) == 0;

	free(lit);
	return plain ? dupmem(p, w->raw, strlen(w->raw)) : NULL;
}

static struct ag_sh_node *
funcdef(struct parser *p, char *name, size_t off)
{
	struct ag_sh_node *n, *body;

	if (skip_nl(p) == -1) {
		return NULL;
	}
	if (!is_compound_start(p)) {
		unexpected(p);
		return NULL;
	}
	if ((body = parse_compound(p)) == NULL) {
		return NULL;
	}
	if ((n = node_new(p, AG_SH_FUNCDEF, off)) == NULL) {
		return NULL;
	}
	n->name = name;
	if (add_kid(p, n, body) == -1) {
		return NULL;
	}
	n->end = end_off(p);
	return n;
}

static struct ag_sh_node *
parse_simple(struct parser *p)
{
	struct ag_sh_node *n;
	struct ag_sh_word *w;
	size_t off;
	int got, decl = 0;
	enum tok t;

	skip_ws(p);
	off = p->pos;
	if ((n = node_new(p, AG_SH_SIMPLE, off)) == NULL)
		return NULL;
	for (;;) {
		skip_ws(p);
		t = peek(p);
		if (t == T_REDIR) {
			if (parse_redir(p, n) == -1)
				goto bad;
			continue;
		}
		if (t == T_LP && n->nwords == 1 && n->nassigns == 0 &&
		    n->nredirs == 0) {
			/* NAME () compound-command */
			char *name = func_name(p, n->words[0]);

			if (name == NULL) {
				fail(p, AG_SH_ERROR, off,
				    "`%s': not a valid function name",
				    n->words[0]->raw);
				goto bad;
			}
			adv(p, 1);
			skip_ws(p);
			if (peek(p) != T_RP) {
				unexpected(p);
				goto bad;
			}
			adv(p, 1);
			return funcdef(p, name, off);
		}
		if (t != T_WORD)
			break;
		if (n->nwords == 0) {
			if (try_assign(p, n, &got) == -1)
				goto bad;
			if (got)
				continue;
		}
		w = NULL;
		if (decl) {
			int tried;

			w = decl_array_word(p, &tried);
			if (w == NULL && tried)
				goto bad;
		}
		if (w == NULL && (n->nwords == 0 || decl))
			w = parse_word_subscript(p);
		else if (w == NULL)
			w = parse_word(p, M_NORMAL);
		if (w == NULL || add_word(p, n, w) == -1)
			goto bad;
		if (n->nwords == 1)
			decl = is_decl_builtin(w);
	}
	if (n->nwords == 0 && n->nassigns == 0 && n->nredirs == 0) {
		unexpected(p);
		goto bad;
	}
	n->end = end_off(p);
	return n;
bad:
	return NULL;
}

/* ---- compound commands -------------------------------------------------- */

static int
at_closer(struct parser *p)
{
	static const char *const kws[] = {
		"then", "else", "elif", "fi", "do", "done", "esac", "}", NULL
	};
	size_t i;

	for (i = 0; kws[i] != NULL; i++)
		if (kw_at(p, kws[i]))
			return 1;
	return 0;
}

/* A compound list that must not be empty. */
static struct ag_sh_node *
clist(struct parser *p)
{
	struct ag_sh_node *n = parse_list(p);

	if (n != NULL && n->nkids == 0) {
		unexpected(p);
		return NULL;
	}
	return n;
}

static int
expect_kw(struct parser *p, const char *kw)
{
	skip_ws(p);
	if (!kw_at(p, kw))
		return unexpected(p);
	kw_eat(p, kw);
	return 0;
}

static struct ag_sh_node *
wrap1(struct parser *p, enum ag_sh_node_type type, size_t off,
    struct ag_sh_node *kid)
{
	struct ag_sh_node *n;

	if (kid == NULL)
		return NULL;
	if ((n = node_new(p, type, off)) == NULL) {
		return NULL;
	}
	if (add_kid(p, n, kid) == -1) {
		return NULL;
	}
	return n;
}

/* A non-empty compound list as the next kid of n. */
static int
add_clist(struct parser *p, struct ag_sh_node *n)
{
	struct ag_sh_node *kid = clist(p);

	if (kid == NULL)
		return -1;
	return add_kid(p, n, kid);
}

static struct ag_sh_node *
parse_if(struct parser *p, size_t off)
{
	struct ag_sh_node *n = node_new(p, AG_SH_IF, off);

	if (n == NULL)
		return NULL;
	kw_eat(p, "if");
	for (;;) {
		if (add_clist(p, n) == -1 || expect_kw(p, "then") == -1 ||
		    add_clist(p, n) == -1)
			goto bad;
		skip_ws(p);
		if (kw_at(p, "elif")) {
			kw_eat(p, "elif");
			continue;
		}
		if (kw_at(p, "else")) {
			kw_eat(p, "else");
			n->has_else = 1;
			if (add_clist(p, n) == -1)
				goto bad;
		}
		if (expect_kw(p, "fi") == -1)
			goto bad;
		return n;
	}
bad:
	return NULL;
}

static struct ag_sh_node *
parse_while(struct parser *p, size_t off, int until)
{
	struct ag_sh_node *n = node_new(p, until ? AG_SH_UNTIL : AG_SH_WHILE, off);

	if (n == NULL)
		return NULL;
	kw_eat(p, until ? "until" : "while");
	if (add_clist(p, n) == -1 || expect_kw(p, "do") == -1 ||
	    add_clist(p, n) == -1 || expect_kw(p, "done") == -1) {
		return NULL;
	}
	return n;
}

/* do ... done or { ... } after for/select. */
static int
loop_body(struct parser *p, struct ag_sh_node *n)
{
	struct ag_sh_node *body;

	if (skip_nl(p) == -1)
		return -1;
	if (kw_at(p, "{")) {
		if ((body = parse_compound(p)) == NULL)
			return -1;
		return add_kid(p, n, body);
	}
	if (expect_kw(p, "do") == -1)
		return -1;
	if ((body = clist(p)) == NULL)
		return -1;
	if (add_kid(p, n, body) == -1)
		return -1;
	return expect_kw(p, "done");
}

static struct ag_sh_node *
parse_arith_for(struct parser *p, size_t off)
{
	struct ag_sh_node *n = node_new(p, AG_SH_ARITH_FOR, off);
	int k;

	if (n == NULL)
		return NULL;
	adv(p, 2);
	for (k = 0; k < 3; k++) {
		struct ag_sh_part pt;
		struct wbuild b;
		struct ag_sh_word *w;
		size_t eoff = p->pos;

		if (arith_part(p, &pt, M_ARITHFOR, eoff) == -1)
			goto bad;
		pt.end = p->base + p->pos;
		if (ag_sh_word_has(pt.expr, AG_SH_P_CMDSUB) ||
		    ag_sh_word_has(pt.expr, AG_SH_P_PROCSUB)) {
			/* bash splits the text at ; itself; do not model it */
			fail(p, AG_SH_ERROR, eoff,
			    "command substitution inside for ((...)) is not supported");
			goto bad;
		}
		if (wb_init(p, &b, eoff) == -1) {
			goto bad;
		}
		if (wb_part(p, &b, &pt) < 0 ||
		    (w = wb_finish(p, &b, eoff, p->pos)) == NULL) {
			wb_discard(&b);
			goto bad;
		}
		if (add_word(p, n, w) == -1)
			goto bad;
		if (k < 2) {
			if (cur(p) != ';') {
				if (cur(p) == -1)
					fail(p, AG_SH_INCOMPLETE, off,
					    "unexpected end of file in for ((...))");
				else
					fail(p, AG_SH_ERROR, p->pos,
					    "syntax error: arithmetic expression required");
				goto bad;
			}
			adv(p, 1);
		}
	}
	if (expect_dparen(p, off, "for ((") == -1)
		goto bad;
	skip_ws(p);
	if (peek(p) == T_SEMI)
		adv(p, 1);
	if (loop_body(p, n) == -1)
		goto bad;
	return n;
bad:
	return NULL;
}

static struct ag_sh_node *
parse_for(struct parser *p, size_t off, int select)
{
	struct ag_sh_node *n;
	struct ag_sh_word *w;
	enum tok t;

	kw_eat(p, select ? "select" : "for");
	skip_ws(p);
	if (!select && peek(p) == T_LP && la(p, 1) == '(')
		return parse_arith_for(p, off);
	if ((n = node_new(p, select ? AG_SH_SELECT : AG_SH_FOR, off)) == NULL)
		return NULL;
	if (peek(p) != T_WORD) {
		unexpected(p);
		goto bad;
	}
	if ((w = parse_word(p, M_NORMAL)) == NULL)
		goto bad;
	if (!ag_sh_is_name(w->raw, strlen(w->raw))) {
		fail(p, AG_SH_ERROR, w->off - p->base,
		    "`%s': not a valid identifier", w->raw);
		goto bad;
	}
	n->name = w->raw;
	w->raw = NULL;
	skip_ws(p);
	t = peek(p);
	if (t == T_SEMI) {
		adv(p, 1);
	} else {
		if (skip_nl(p) == -1)
			goto bad;
		if (kw_at(p, "in")) {
			kw_eat(p, "in");
			/* "in" with no words: an empty list, not "$@" */
			if ((n->words = zalloc(p, sizeof(*n->words))) == NULL)
				goto bad;
			for (;;) {
				skip_ws(p);
				t = peek(p);
				if (t == T_WORD) {
					if ((w = parse_word(p, M_NORMAL)) == NULL ||
					    add_word(p, n, w) == -1)
						goto bad;
					continue;
				}
				if (t == T_SEMI) {
					adv(p, 1);
					break;
				}
				if (t == T_NL)
					break;
				unexpected(p);
				goto bad;
			}
		}
	}
	if (loop_body(p, n) == -1)
		goto bad;
	return n;
bad:
	return NULL;
}

static struct ag_sh_node *
parse_case(struct parser *p, size_t off)
{
	struct ag_sh_node *n = node_new(p, AG_SH_CASE, off);
	struct ag_sh_word *w;
	enum tok t;

	if (n == NULL)
		return NULL;
	kw_eat(p, "case");
	skip_ws(p);
	if (peek(p) != T_WORD) {
		unexpected(p);
		goto bad;
	}
	if ((w = parse_word(p, M_NORMAL)) == NULL || add_word(p, n, w) == -1)
		goto bad;
	if (skip_nl(p) == -1 || expect_kw(p, "in") == -1)
		goto bad;
	for (;;) {
		struct ag_sh_case_item *it;

		if (skip_nl(p) == -1)
			goto bad;
		if (kw_at(p, "esac")) {
			kw_eat(p, "esac");
			break;
		}
		if (grow(p, &n->items, n->nitems, sizeof(*n->items)) == -1)
			goto bad;
		it = &n->items[n->nitems++];
		memset(it, 0, sizeof(*it));
		if (peek(p) == T_LP)
			adv(p, 1);
		for (;;) {
			skip_ws(p);
			if (peek(p) != T_WORD) {
				unexpected(p);
				goto bad;
			}
			if ((w = parse_word(p, M_PATTERN)) == NULL)
				goto bad;
			if (grow(p, &it->patterns, it->npatterns,
			    sizeof(*it->patterns)) == -1) {
				goto bad;
			}
			it->patterns[it->npatterns++] = w;
			skip_ws(p);
			t = peek(p);
			if (t == T_PIPE) {
				adv(p, 1);
				continue;
			}
			if (t == T_RP) {
				adv(p, 1);
				break;
			}
			unexpected(p);
			goto bad;
		}
		if ((it->body = parse_list(p)) == NULL)
			goto bad;
		if (it->body->nkids == 0) {
			it->body = NULL;
		}
		skip_ws(p);
		t = peek(p);
		if (t == T_DSEMI || t == T_SEMIAND || t == T_DSEMIAND) {
			strcpy(it->term, t == T_DSEMI ? ";;" : t == T_SEMIAND ?
			    ";&" : ";;&");
			adv(p, t == T_DSEMIAND ? 3 : 2);
			continue;
		}
		if (kw_at(p, "esac")) {
			kw_eat(p, "esac");
			break;
		}
		unexpected(p);
		goto bad;
	}
	return n;
bad:
	return NULL;
}

/* ---- [[ ... ]] ---------------------------------------------------------- */

static int
cond_addop(struct parser *p, struct ag_sh_node *n, const char *op, int k)
{
	struct wbuild b;
	struct ag_sh_word *w;
	size_t off;

	cur(p);
	off = p->pos;
	adv(p, k);
	if (wb_init(p, &b, off) == -1)
		return -1;
	if (wb_lit(p, &b, AG_SH_Q_NONE, op, strlen(op), off, p->pos) == -1 ||
	    (w = wb_finish(p, &b, off, p->pos)) == NULL) {
		wb_discard(&b);
		return -1;
	}
	return add_word(p, n, w);
}

enum ctok { C_END, C_AND, C_OR, C_LP, C_RP, C_NOT, C_LT, C_GT, C_WORD, C_EOF, C_BAD };

static int
cpeek(struct parser *p, enum ctok *ct)
{
	enum tok t;

	if (skip_nl(p) == -1)
		return -1;
	if (kw_at(p, "]]")) {
		*ct = C_END;
		return 0;
	}
	if (kw_at(p, "!") && la(p, 1) != '(') {
		/* !( is an extglob pattern here, "! (" negates a group */
		*ct = C_NOT;
		return 0;
	}
	t = peek(p);
	switch (t) {
	case T_EOF: *ct = C_EOF; break;
	case T_AND: *ct = C_AND; break;
	case T_OR: *ct = C_OR; break;
	case T_LP: *ct = C_LP; break;
	case T_RP: *ct = C_RP; break;
	case T_WORD: *ct = C_WORD; break;
	case T_REDIR:
		if (cur(p) == '<' && la(p, 1) != '<' && la(p, 1) != '&' &&
		    la(p, 1) != '>')
			*ct = C_LT;
		else if (cur(p) == '>' && la(p, 1) != '>' && la(p, 1) != '&' &&
		    la(p, 1) != '|')
			*ct = C_GT;
		else
			*ct = C_BAD;
		break;
	default:
		*ct = C_BAD;
		break;
	}
	return 0;
}

static int
is_unop(const char *s)
{
	return s[0] == '-' && s[1] != '\0' && s[2] == '\0' &&
	    strchr("abcdefghknoprstuvwxzGLNORS", s[1]) != NULL;
}

static int
is_binop(const char *s)
{
	static const char *const ops[] = {
		"==", "=", "!=", "=~", "-eq", "-ne", "-lt", "-le", "-gt", "-ge",
		"-nt", "-ot", "-ef", NULL
	};
	size_t i;

	for (i = 0; ops[i] != NULL; i++)
		if (strcmp(s, ops[i]) == 0)
			return 1;
	return 0;
}

static int cond_or(struct parser *, struct ag_sh_node *);

static int
cond_error(struct parser *p, enum ctok ct)
{
	if (ct == C_EOF)
		return fail(p, AG_SH_INCOMPLETE, p->pos,
		    "unexpected end of file in [[ ... ]]");
	return unexpected(p);
}

/*
 * Inside [[ ]] a newline may follow [[ ! ( && || and a complete test,
 * but not an operand that waits for its operator or an operator that
 * waits for its operand.
 */
static int
cond_nonl(struct parser *p)
{
	skip_ws(p);
	if (cur(p) == '\n')
		return fail(p, AG_SH_ERROR, p->pos,
		    "unexpected token `newline' inside a [[ ]] test");
	return 0;
}

static int
cond_term(struct parser *p, struct ag_sh_node *n)
{
	struct ag_sh_word *w, *w2;
	enum ctok ct;
	int r = -1;

	if (depth_in(p) == -1)
		return -1;
	if (cpeek(p, &ct) == -1)
		goto out;
	switch (ct) {
	case C_NOT:
		if (cond_addop(p, n, "!", 1) == -1)
			goto out;
		r = cond_term(p, n);
		goto out;
	case C_LP:
		if (cond_addop(p, n, "(", 1) == -1 || cond_or(p, n) == -1 ||
		    cpeek(p, &ct) == -1)
			goto out;
		if (ct != C_RP) {
			cond_error(p, ct);
			goto out;
		}
		r = cond_addop(p, n, ")", 1);
		goto out;
	case C_WORD:
		break;
	default:
		cond_error(p, ct);
		goto out;
	}
	if ((w = parse_word(p, M_COND)) == NULL || add_word(p, n, w) == -1)
		goto out;
	if (cond_nonl(p) == -1 || cpeek(p, &ct) == -1)
		goto out;
	if (is_unop(w->raw)) {
		/* a unary operator takes the next word, whatever it is */
		if (ct != C_WORD) {
			char buf[64];

			tok_text(p, buf, sizeof(buf));
			if (ct == C_EOF)
				cond_error(p, ct);
			else
				fail(p, AG_SH_ERROR, p->pos, "unexpected argument "
				    "`%s' to conditional unary operator",
				    ct == C_END ? "]]" : buf);
			goto out;
		}
		if ((w2 = parse_word(p, M_COND)) == NULL || add_word(p, n, w2) == -1)
			goto out;
		r = 0;
		goto out;
	}
	if (ct == C_LT || ct == C_GT) {
		if (cond_addop(p, n, ct == C_LT ? "<" : ">", 1) == -1 ||
		    cond_nonl(p) == -1 || cpeek(p, &ct) == -1)
			goto out;
		if (ct != C_WORD) {
			cond_error(p, ct);
			goto out;
		}
		if ((w2 = parse_word(p, M_COND)) == NULL || add_word(p, n, w2) == -1)
			goto out;
		r = 0;
		goto out;
	}
	if (ct == C_WORD) {
		int regex;

		if ((w2 = parse_word(p, M_COND)) == NULL || add_word(p, n, w2) == -1)
			goto out;
		if (!is_binop(w2->raw)) {
			fail(p, AG_SH_ERROR, w2->off - p->base,
			    "conditional binary operator expected");
			goto out;
		}
		regex = strcmp(w2->raw, "=~") == 0;
		if (cond_nonl(p) == -1 || cpeek(p, &ct) == -1)
			goto out;
		if (ct != C_WORD && !(regex && ct == C_LP)) {
			cond_error(p, ct);
			goto out;
		}
		if ((w2 = parse_word(p, regex ? M_REGEX : M_COND)) == NULL ||
		    add_word(p, n, w2) == -1)
			goto out;
	}
	r = 0;
out:
	p->depth--;
	return r;
}

static int
cond_and(struct parser *p, struct ag_sh_node *n)
{
	enum ctok ct;

	if (cond_term(p, n) == -1)
		return -1;
	for (;;) {
		if (cpeek(p, &ct) == -1)
			return -1;
		if (ct != C_AND)
			return 0;
		if (cond_addop(p, n, "&&", 2) == -1 || cond_term(p, n) == -1)
			return -1;
	}
}

static int
cond_or(struct parser *p, struct ag_sh_node *n)
{
	enum ctok ct;

	if (depth_in(p) == -1)
		return -1;
	if (cond_and(p, n) == -1)
		return -1;
	for (;;) {
		if (cpeek(p, &ct) == -1)
			return -1;
		if (ct != C_OR)
			break;
		if (cond_addop(p, n, "||", 2) == -1 || cond_and(p, n) == -1)
			return -1;
	}
	p->depth--;
	return 0;
}

static struct ag_sh_node *
parse_dbracket(struct parser *p, size_t off)
{
	struct ag_sh_node *n = node_new(p, AG_SH_DBRACKET, off);
	enum ctok ct;

	if (n == NULL)
		return NULL;
	kw_eat(p, "[[");
	if (cond_or(p, n) == -1 || cpeek(p, &ct) == -1)
		goto bad;
	if (ct != C_END) {
		cond_error(p, ct);
		goto bad;
	}
	kw_eat(p, "]]");
	return n;
bad:
	return NULL;
}

static struct ag_sh_node *
parse_arith_cmd(struct parser *p, size_t off)
{
	struct ag_sh_node *n = node_new(p, AG_SH_ARITH_CMD, off);
	struct ag_sh_part pt;
	struct wbuild b;
	struct ag_sh_word *w;

	if (n == NULL)
		return NULL;
	adv(p, 2);
	if (arith_part(p, &pt, M_ARITH, off) == -1)
		goto bad;
	if (expect_dparen(p, off, "((") == -1) {
		goto bad;
	}
	pt.end = p->base + p->pos;
	if (wb_init(p, &b, off) == -1) {
		goto bad;
	}
	if (wb_part(p, &b, &pt) < 0 ||
	    (w = wb_finish(p, &b, off, p->pos)) == NULL) {
		wb_discard(&b);
		goto bad;
	}
	if (add_word(p, n, w) == -1)
		goto bad;
	return n;
bad:
	return NULL;
}

/* A compound command (and its trailing redirections). */
static struct ag_sh_node *
parse_compound(struct parser *p)
{
	struct ag_sh_node *n = NULL;
	size_t off;

	skip_ws(p);
	off = p->pos;
	if (depth_in(p) == -1)
		return NULL;
	if (peek(p) == T_LP) {
		if (la(p, 1) == '(')
			n = parse_arith_cmd(p, off);
		else {
			adv(p, 1);
			n = wrap1(p, AG_SH_SUBSHELL, off, clist(p));
			if (n != NULL && peek(p) != T_RP) {
				unexpected(p);
				n = NULL;
			}
			if (n != NULL)
				adv(p, 1);
		}
	} else if (kw_at(p, "{")) {
		kw_eat(p, "{");
		n = wrap1(p, AG_SH_GROUP, off, clist(p));
		if (n != NULL && expect_kw(p, "}") == -1) {
			n = NULL;
		}
	} else if (kw_at(p, "if"))
		n = parse_if(p, off);
	else if (kw_at(p, "while"))
		n = parse_while(p, off, 0);
	else if (kw_at(p, "until"))
		n = parse_while(p, off, 1);
	else if (kw_at(p, "for"))
		n = parse_for(p, off, 0);
	else if (kw_at(p, "select"))
		n = parse_for(p, off, 1);
	else if (kw_at(p, "case"))
		n = parse_case(p, off);
	else if (kw_at(p, "[["))
		n = parse_dbracket(p, off);
	else
		unexpected(p);
	if (n != NULL && trailing_redirs(p, n) == -1) {
		n = NULL;
	}
	if (n != NULL)
		n->end = end_off(p);
	p->depth--;
	return n;
}

static struct ag_sh_node *
parse_function(struct parser *p, size_t off)
{
	struct ag_sh_word *w;
	char *name;

	kw_eat(p, "function");
	skip_ws(p);
	if (peek(p) != T_WORD) {
		unexpected(p);
		return NULL;
	}
	if ((w = parse_word(p, M_NORMAL)) == NULL)
		return NULL;
	name = func_name(p, w);
	if (name == NULL) {
		fail(p, AG_SH_ERROR, w->off - p->base,
		    "`%s': not a valid function name", w->raw);
		return NULL;
	}
	skip_ws(p);
	if (peek(p) == T_LP) {
		adv(p, 1);
		skip_ws(p);
		if (peek(p) != T_RP) {
			unexpected(p);
			return NULL;
		}
		adv(p, 1);
	}
	return funcdef(p, name, off);
}

static struct ag_sh_node *
parse_coproc(struct parser *p, size_t off)
{
	struct ag_sh_node *n, *kid;
	char *name = NULL;
	size_t save, i;

	kw_eat(p, "coproc");
	skip_ws(p);
	if (!is_compound_start(p)) {
		static const char *const kws[] = {
			"!", "then", "else", "elif", "fi", "do", "done", "esac",
			"}", "in", "]]", "function", "coproc", NULL
		};
		size_t k;

		/*
		 * bash reads the token after "coproc WORD" in command position
		 * (for "coproc NAME { ...; }"): a reserved word there that
		 * starts no compound command is a syntax error.
		 */
		save = p->pos;
		for (i = save; i < p->len && !is_meta((unsigned char)p->s[i]);
		    i = skipc(p, i + 1))
			;
		p->pos = i;
		skip_ws(p);
		for (k = 0; kws[k] != NULL; k++)
			if (kw_at(p, kws[k]))
				break;
		if (kws[k] != NULL) {
			unexpected(p);
			return NULL;
		}
		p->pos = save;

		/* NAME compound-command?  otherwise a simple command */
		for (i = p->pos; i < p->len && is_name_char((unsigned char)p->s[i]);
		    i = skipc(p, i + 1))
			;
		if (i > save && is_name_start((unsigned char)p->s[save])) {
			struct ag_strbuf sb;

			ag_strbuf_init(&sb, 0);
			while (p->pos < i) {
				if (ag_strbuf_addch(&sb, (char)cur(p)) == -1) {
					ag_strbuf_free(&sb);
					nomem(p);
					return NULL;
				}
				adv(p, 1);
			}
			skip_ws(p);
			if (is_compound_start(p)) {
				if ((name = sb_keep(p, &sb, NULL)) == NULL)
					return NULL;
			} else {
				ag_strbuf_free(&sb);
				p->pos = save;
			}
		}
	}
	if (name != NULL || is_compound_start(p))
		kid = parse_compound(p);
	else
		kid = parse_simple(p);
	if ((n = wrap1(p, AG_SH_COPROC, off, kid)) == NULL) {
		return NULL;
	}
	n->name = name;
	return n;
}

static struct ag_sh_node *
parse_command(struct parser *p)
{
	struct ag_sh_node *n;
	size_t off;
	enum tok t;

	skip_ws(p);
	off = p->pos;
	if (depth_in(p) == -1)
		return NULL;
	t = peek(p);
	if (t == T_WORD && kw_at(p, "function"))
		n = parse_function(p, off);
	else if (t == T_WORD && kw_at(p, "coproc"))
		n = parse_coproc(p, off);
	else if (is_compound_start(p))
		n = parse_compound(p);
	else if (t == T_WORD && (at_closer(p) || kw_at(p, "!") ||
	    kw_at(p, "in") || kw_at(p, "]]"))) {
		/* reserved words that cannot start a command */
		unexpected(p);
		n = NULL;
	} else
		n = parse_simple(p);
	if (n != NULL)
		n->end = end_off(p);
	p->depth--;
	return n;
}

/* ---- pipelines and lists ------------------------------------------------ */

static struct ag_sh_node *
parse_pipeline(struct parser *p)
{
	struct ag_sh_node *n, *cmd;
	size_t off;
	int negated = 0, timed = 0;
	enum tok t;

	skip_ws(p);
	off = p->pos;
	for (;;) {
		if (kw_at(p, "!")) {
			kw_eat(p, "!");
			negated ^= 1;
		} else if (kw_at(p, "time")) {
			kw_eat(p, "time");
			timed = timed ? timed : 1;
			skip_ws(p);
			if (kw_at(p, "-p")) {
				kw_eat(p, "-p");
				timed = 2;
				skip_ws(p);
			}
			/* bash 5.2 also skips a "--" here */
			if (kw_at(p, "--"))
				kw_eat(p, "--");
		} else
			break;
		skip_ws(p);
	}
	t = peek(p);
	if (timed && t == T_WORD) {
		size_t i = p->pos;

		/* bash 5.2 trips over "time NAME=(...)" inside $( ) and <( ) */
		while (i < p->len && is_name_char((unsigned char)p->s[i]))
			i++;
		if (i < p->len && p->s[i] == '+')
			i++;
		if (i + 1 < p->len && p->s[i] == '=' && p->s[i + 1] == '(') {
			fail(p, AG_SH_ERROR, p->pos,
			    "an array assignment right after `time' is not supported");
			return NULL;
		}
	}
	if ((negated || timed) && (t == T_SEMI || t == T_NL || t == T_EOF)) {
		/* "time" or "!" alone: an empty command */
		if ((n = node_new(p, AG_SH_PIPELINE, off)) == NULL)
			return NULL;
		n->negated = negated;
		n->timed = timed;
		if ((cmd = node_new(p, AG_SH_SIMPLE, p->pos)) == NULL ||
		    add_kid(p, n, cmd) == -1 ||
		    (n->pipe_stderr = zalloc(p, 1)) == NULL)
			return NULL;
		return n;
	}
	if ((cmd = parse_command(p)) == NULL)
		return NULL;
	skip_ws(p);
	t = peek(p);
	if (t != T_PIPE && t != T_PIPEAMP && !negated && !timed)
		return cmd;
	if ((n = node_new(p, AG_SH_PIPELINE, off)) == NULL) {
		return NULL;
	}
	n->negated = negated;
	n->timed = timed;
	for (;;) {
		if (grow(p, &n->pipe_stderr, n->nkids, 1) == -1) {
			goto bad;
		}
		n->pipe_stderr[n->nkids] = 0;
		if (add_kid(p, n, cmd) == -1)
			goto bad;
		skip_ws(p);
		t = peek(p);
		if (t != T_PIPE && t != T_PIPEAMP)
			break;
		n->pipe_stderr[n->nkids - 1] = t == T_PIPEAMP;
		adv(p, t == T_PIPE ? 1 : 2);
		if (skip_nl(p) == -1)
			goto bad;
		if ((cmd = parse_command(p)) == NULL)
			goto bad;
	}
	n->end = end_off(p);
	return n;
bad:
	return NULL;
}

static struct ag_sh_node *
parse_and_or(struct parser *p)
{
	struct ag_sh_node *left, *right, *n;
	int depth0 = p->depth;
	size_t off;
	enum tok t;

	skip_ws(p);
	off = p->pos;
	if ((left = parse_pipeline(p)) == NULL)
		return NULL;
	for (;;) {
		skip_ws(p);
		t = peek(p);
		if (t != T_AND && t != T_OR) {
			p->depth = depth0;
			return left;
		}
		adv(p, 2);
		/* each && or || nests the tree one level deeper */
		if (depth_in(p) == -1 || skip_nl(p) == -1 ||
		    (right = parse_pipeline(p)) == NULL) {
			return NULL;
		}
		if ((n = node_new(p, t == T_AND ? AG_SH_AND : AG_SH_OR, off)) == NULL ||
		    add_kid(p, n, left) == -1)
			return NULL;
		if (add_kid(p, n, right) == -1) {
			return NULL;
		}
		n->end = end_off(p);
		left = n;
	}
}

/*
 * A list of and-or lists separated by ; & and newlines.  It stops (without
 * consuming) at the end, ")", ";;" and friends, and at reserved words that
 * close a compound command; the caller checks which one it wanted.
 */
static struct ag_sh_node *
parse_list(struct parser *p)
{
	struct ag_sh_node *n, *kid;
	enum tok t;

	skip_ws(p);
	if ((n = node_new(p, AG_SH_LIST, p->pos)) == NULL)
		return NULL;
	if (depth_in(p) == -1)
		goto bad;
	for (;;) {
		skip_ws(p);
		t = peek(p);
		if (t == T_NL) {
			if (newline(p) == -1)
				goto bad;
			continue;
		}
		if (t == T_EOF || t == T_RP || t == T_DSEMI || t == T_SEMIAND ||
		    t == T_DSEMIAND)
			break;
		if (t == T_WORD && at_closer(p))
			break;
		if ((kid = parse_and_or(p)) == NULL)
			goto bad;
		if (grow(p, &n->background, n->nkids, 1) == -1) {
			goto bad;
		}
		n->background[n->nkids] = 0;
		if (add_kid(p, n, kid) == -1)
			goto bad;
		skip_ws(p);
		t = peek(p);
		if (t == T_SEMI)
			adv(p, 1);
		else if (t == T_AMP) {
			adv(p, 1);
			n->background[n->nkids - 1] = 1;
		} else if (t != T_NL)
			break;
	}
	p->depth--;
	n->end = end_off(p);
	return n;
bad:
	return NULL;
}

/* A whole program: a list up to the end, all here-documents read. */
static struct ag_sh_node *
parse_program(struct parser *p)
{
	struct ag_sh_node *n = parse_list(p);

	if (n == NULL)
		return NULL;
	skip_ws(p);
	if (peek(p) != T_EOF) {
		unexpected(p);
		return NULL;
	}
	if (p->tail_cont) {
		/* "cmd \" + newline: the line goes on in the next one */
		fail(p, AG_SH_INCOMPLETE, p->len, "line continuation at the end");
		return NULL;
	}
	if (p->nhd > 0) {
		fail(p, AG_SH_INCOMPLETE, p->pos,
		    "here-document not terminated (wanted `%s')", p->hd[0].delim);
		return NULL;
	}
	return n;
}

/* Parse s as a separate program (backquote contents). */
static struct ag_sh_node *
subparse(struct parser *p, const char *s, size_t len, size_t base,
    int in_heredoc)
{
	struct parser q;
	struct ag_sh_node *n;

	memset(&q, 0, sizeof(q));
	q.s = s;
	q.len = len;
	q.base = base;
	q.depth = p->depth + 1;
	q.err = p->err;
	q.ar = p->ar;
	q.in_heredoc = in_heredoc;
	if (q.depth > AG_SH_MAX_DEPTH) {
		fail(p, AG_SH_ERROR, p->pos, "nesting too deep (limit %d)",
		    AG_SH_MAX_DEPTH);
		return NULL;
	}
	n = parse_program(&q);
	if (n == NULL && p->status == 0) {
		/* the backquotes are closed: nothing more can complete it */
		p->status = AG_SH_ERROR;
	}
	return n;
}

/* ---- public ------------------------------------------------------------- */

enum ag_sh_status
ag_sh_parse(const char *src, size_t len, struct ag_sh_node **out,
    struct ag_err *err)
{
	struct parser p;
	struct ag_sh_node *n;
	const char *nul;

	if (out == NULL) {
		ag_err_off(err, 0, "no place for the tree");
		return AG_SH_ERROR;
	}
	*out = NULL;
	ag_err_clear(err);
	if (src == NULL && len > 0) {
		ag_err_off(err, 0, "no input");
		return AG_SH_ERROR;
	}
	if (len > AG_SH_MAX_INPUT) {
		ag_err_off(err, AG_SH_MAX_INPUT, "command is too long (limit %d bytes)",
		    AG_SH_MAX_INPUT);
		return AG_SH_ERROR;
	}
	if (len > 0 && (nul = memchr(src, '\0', len)) != NULL) {
		ag_err_off(err, nul - src, "command contains a NUL byte");
		return AG_SH_ERROR;
	}
	memset(&p, 0, sizeof(p));
	p.s = src ? src : "";
	p.len = len;
	p.err = err;
	if ((p.ar = ag_arena_new(TREE_LIMIT)) == NULL) {
		ag_err_off(err, 0, "out of memory");
		return AG_SH_ERROR;
	}
	n = parse_program(&p);
	if (n == NULL) {
		ag_arena_free(p.ar);
		if (p.status == 0)
			ag_err_off(err, (long)p.pos, "parse failed");
		return p.status == AG_SH_INCOMPLETE ? AG_SH_INCOMPLETE : AG_SH_ERROR;
	}
	n->arena = p.ar;
	*out = n;
	return AG_SH_OK;
}

void
ag_sh_free(struct ag_sh_node *n)
{
	if (n != NULL)
		ag_arena_free(n->arena);
}

char *
ag_sh_word_literal(const struct ag_sh_word *w, size_t *lenp)
{
	struct ag_strbuf sb;
	size_t i, n;
	char *s;

	if (w == NULL)
		return NULL;
	ag_strbuf_init(&sb, 0);
	for (i = 0; i < w->nparts; i++) {
		if (w->parts[i].type != AG_SH_P_LIT ||
		    ag_strbuf_append(&sb, w->parts[i].text, w->parts[i].len) == -1) {
			ag_strbuf_free(&sb);
			return NULL;
		}
	}
	if ((s = ag_strbuf_detach(&sb, &n)) == NULL) {
		if ((s = strdup("")) == NULL)
			return NULL;
		n = 0;
	}
	if (lenp != NULL)
		*lenp = n;
	return s;
}

int
ag_sh_word_has(const struct ag_sh_word *w, enum ag_sh_part_type type)
{
	size_t i;

	if (w == NULL)
		return 0;
	for (i = 0; i < w->nparts; i++) {
		const struct ag_sh_part *pt = &w->parts[i];

		if (pt->type == type || ag_sh_word_has(pt->subscript, type) ||
		    ag_sh_word_has(pt->operand, type) ||
		    ag_sh_word_has(pt->operand2, type) ||
		    ag_sh_word_has(pt->expr, type))
			return 1;
	}
	return 0;
}

/* ---- dump --------------------------------------------------------------- */

static const char *const node_names[] = {
	"SIMPLE", "PIPELINE", "AND", "OR", "LIST", "SUBSHELL", "GROUP", "IF",
	"WHILE", "UNTIL", "FOR", "ARITH_FOR", "SELECT", "CASE", "DBRACKET",
	"ARITH_CMD", "FUNCDEF", "COPROC"
};

static const char *const part_names[] = {
	"LIT", "PARAM", "CMDSUB", "ARITH", "PROCSUB", "GLOB", "BRACE", "TILDE"
};

static const char *const quote_names[] = {
	"", " single", " ansi", " double", " backslash"
};

static const char *const redir_names[] = {
	"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "&>", "&>>", "<&", ">&"
};

static void dump_node(const struct ag_sh_node *, FILE *, int);

static void
indent(FILE *fp, int d)
{
	fprintf(fp, "%*s", d * 2, "");
}

/* Text with control characters escaped, so the outline stays one line each. */
static void
dump_text(FILE *fp, const char *s, size_t n)
{
	size_t i;

	fputc('"', fp);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\x%02x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void dump_word(const struct ag_sh_word *, FILE *, int, const char *);

static void
dump_part(const struct ag_sh_part *pt, FILE *fp, int d)
{
	indent(fp, d);
	fprintf(fp, "%s%s ", part_names[pt->type], quote_names[pt->quote]);
	switch (pt->type) {
	case AG_SH_P_PARAM:
		fprintf(fp, "%s%s%s", pt->braced ? "braced " : "",
		    pt->indirect ? "indirect " : "", pt->length ? "length " : "");
		dump_text(fp, pt->text, pt->len);
		if (pt->op != NULL && pt->op[0] != '\0')
			fprintf(fp, " op %s", pt->op);
		fputc('\n', fp);
		dump_word(pt->subscript, fp, d + 1, "subscript");
		dump_word(pt->operand, fp, d + 1, "operand");
		dump_word(pt->operand2, fp, d + 1, "operand2");
		break;
	case AG_SH_P_CMDSUB:
	case AG_SH_P_PROCSUB:
		if (pt->type == AG_SH_P_PROCSUB)
			fprintf(fp, "%c(\n", pt->dir);
		else
			fprintf(fp, "%s\n", pt->backtick ? "`" : "$(");
		dump_node(pt->body, fp, d + 1);
		break;
	case AG_SH_P_ARITH:
		dump_text(fp, pt->text, pt->len);
		fputc('\n', fp);
		dump_word(pt->expr, fp, d + 1, "expr");
		break;
	default:
		dump_text(fp, pt->text, pt->len);
		fputc('\n', fp);
		break;
	}
}

static void
dump_word(const struct ag_sh_word *w, FILE *fp, int d, const char *label)
{
	size_t i;

	if (w == NULL)
		return;
	indent(fp, d);
	fprintf(fp, "%s ", label);
	dump_text(fp, w->raw ? w->raw : "", w->raw ? strlen(w->raw) : 0);
	fputc('\n', fp);
	for (i = 0; i < w->nparts; i++)
		dump_part(&w->parts[i], fp, d + 1);
}

static void
dump_node(const struct ag_sh_node *n, FILE *fp, int d)
{
	size_t i, k;

	if (n == NULL)
		return;
	indent(fp, d);
	fputs(node_names[n->type], fp);
	if (n->name != NULL)
		fprintf(fp, " name=%s", n->name);
	if (n->negated)
		fputs(" negated", fp);
	if (n->timed)
		fputs(n->timed == 2 ? " timed-p" : " timed", fp);
	if (n->has_else)
		fputs(" else", fp);
	if (n->type == AG_SH_FOR && n->words == NULL)
		fputs(" in-\"$@\"", fp);
	fprintf(fp, " [%zu-%zu]\n", n->off, n->end);
	for (i = 0; i < n->nassigns; i++) {
		const struct ag_sh_assign *a = &n->assigns[i];

		indent(fp, d + 1);
		fprintf(fp, "assign %s%s%s\n", a->name, a->append ? " +=" : "",
		    a->is_array ? " array" : "");
		dump_word(a->subscript, fp, d + 2, "subscript");
		dump_word(a->value, fp, d + 2, "value");
		for (k = 0; k < a->nelems; k++)
			dump_word(a->elems[k], fp, d + 2, "elem");
	}
	for (i = 0; i < n->nwords; i++)
		dump_word(n->words[i], fp, d + 1, "word");
	for (i = 0; i < n->nredirs; i++) {
		const struct ag_sh_redir *r = &n->redirs[i];

		indent(fp, d + 1);
		fprintf(fp, "redir %s", redir_names[r->op]);
		if (r->fd >= 0)
			fprintf(fp, " fd=%d", r->fd);
		if (r->fdvar != NULL)
			fprintf(fp, " fdvar=%s", r->fdvar);
		if (r->delim != NULL) {
			fputs(" delim=", fp);
			dump_text(fp, r->delim, strlen(r->delim));
			if (r->heredoc_quoted)
				fputs(" quoted", fp);
		}
		fputc('\n', fp);
		dump_word(r->target, fp, d + 2,
		    r->delim != NULL ? "body" : "target");
	}
	for (i = 0; i < n->nitems; i++) {
		const struct ag_sh_case_item *it = &n->items[i];

		indent(fp, d + 1);
		fprintf(fp, "item %s\n", it->term[0] ? it->term : "(last)");
		for (k = 0; k < it->npatterns; k++)
			dump_word(it->patterns[k], fp, d + 2, "pattern");
		dump_node(it->body, fp, d + 2);
	}
	for (i = 0; i < n->nkids; i++) {
		if (n->type == AG_SH_LIST && n->background != NULL &&
		    n->background[i]) {
			indent(fp, d + 1);
			fputs("background:\n", fp);
		}
		if (n->type == AG_SH_PIPELINE && n->pipe_stderr != NULL &&
		    i > 0 && n->pipe_stderr[i - 1]) {
			indent(fp, d + 1);
			fputs("|&\n", fp);
		}
		dump_node(n->kids[i], fp, d + 1);
	}
}

void
ag_sh_dump(const struct ag_sh_node *node, FILE *fp)
{
	dump_node(node, fp, 0);
}
