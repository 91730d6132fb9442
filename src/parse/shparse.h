/*
 * shparse.h - a bash-grammar parser for the subset of bash that agents send
 * (which is nearly all of it).  It never executes or expands anything: it
 * builds a tree in which every simple command, assignment, redirection and
 * expansion is visible, so the policy can judge what bash would run.
 *
 * Fail closed: anything it cannot parse exactly as bash would is an error
 * with a byte offset and a reason, never a guess.  Input with NUL bytes is
 * refused; words that are not valid UTF-8 are refused.
 *
 * Ownership: ag_sh_parse() returns a tree owned by the caller, freed with
 * ag_sh_free(); every string and sub-node inside belongs to the tree.
 */
#ifndef AG_SHPARSE_H
#define AG_SHPARSE_H

#include <stddef.h>

#include "common/err.h"

#define AG_SH_MAX_INPUT		(1024 * 1024 + 1)	/* bytes */
#define AG_SH_MAX_DEPTH		200			/* nesting of any kind */

struct ag_arena;
struct ag_sh_node;
struct ag_sh_word;

/* ---- words ------------------------------------------------------------ */

enum ag_sh_part_type {
	AG_SH_P_LIT,		/* literal text after quote removal */
	AG_SH_P_PARAM,		/* $name, ${...} */
	AG_SH_P_CMDSUB,		/* $(...) or `...` */
	AG_SH_P_ARITH,		/* $((...)) (and the old $[...]) */
	AG_SH_P_PROCSUB,	/* <(...) or >(...) */
	AG_SH_P_GLOB,		/* unquoted *, ?, [...], or an extglob ?(..) *(..) +(..) @(..) !(..) */
	AG_SH_P_BRACE,		/* unquoted brace expansion {a,b} {1..3} */
	AG_SH_P_TILDE,		/* ~, ~user, ~+, ~- at the start of a word or after : / = in assignments */
};

enum ag_sh_quote {
	AG_SH_Q_NONE = 0,
	AG_SH_Q_SINGLE,		/* '...' */
	AG_SH_Q_ANSI,		/* $'...' (escapes already decoded into text) */
	AG_SH_Q_DOUBLE,		/* "..." or $"..." */
	AG_SH_Q_BACKSLASH,	/* a single character quoted with \ */
};

struct ag_sh_part {
	enum ag_sh_part_type	 type;
	enum ag_sh_quote	 quote;		/* quoting context the part sits in */
	size_t			 off;		/* byte offset of the part in the input */
	size_t			 end;		/* one past its last byte */

	/*
	 * LIT: the literal bytes (may contain NUL? never: refused).
	 * PARAM: the parameter name ("x", "1", "@", "?", "#", "a" for ${a[i]}).
	 * ARITH: the expression source text as written (between the parens).
	 * GLOB/BRACE: the raw text of the pattern / brace group.
	 * TILDE: the user part ("" for ~, "bob", "+", "-").
	 */
	char			*text;
	size_t			 len;

	/* PARAM */
	int			 braced;	/* ${...} rather than $x */
	int			 indirect;	/* ${!x}, ${!x[@]}, ${!prefix*} */
	int			 length;	/* ${#x} */
	struct ag_sh_word	*subscript;	/* ${a[SUB]}: parsed like a word; NULL if none */
	char			*op;		/* "", ":-", "-", ":=", "=", ":?", "?", ":+", "+",
						 * "#", "##", "%", "%%", "/", "//", "/#", "/%",
						 * "^", "^^", ",", ",,", ":" (substring), "@" (transform) */
	struct ag_sh_word	*operand;	/* word after op; for ":" the offset[:length] text,
						 * for "/" the pattern; NULL if none */
	struct ag_sh_word	*operand2;	/* "/" replacement string; NULL if none */

	/* CMDSUB, PROCSUB: the parsed body; ARITH: expansions inside the expression */
	struct ag_sh_node	*body;		/* CMDSUB / PROCSUB */
	int			 backtick;	/* CMDSUB written with `...` */
	char			 dir;		/* PROCSUB: '<' or '>' */
	struct ag_sh_word	*expr;		/* ARITH: the expression parsed like a
						 * double-quoted word, so $x/$(..) inside are visible */
};

struct ag_sh_word {
	struct ag_sh_part	*parts;
	size_t			 nparts;
	size_t			 off, end;	/* span in the input */
	char			*raw;		/* the source text of the word, verbatim */
};

/*
 * If the word is a plain literal after quote removal — only LIT parts,
 * no expansion, glob, brace or tilde — return a malloc'd copy of that
 * literal (the caller frees it); otherwise NULL.  Glob characters inside
 * quotes are literal.  lenp may be NULL.
 */
char	*ag_sh_word_literal(const struct ag_sh_word *w, size_t *lenp);
/* 1 when s[0..n) is a bash name: [A-Za-z_][A-Za-z0-9_]* (ASCII only, as bash). */
int	 ag_sh_is_name(const char *s, size_t n);
/* 1 if any part of the word (recursively) is of the given type. */
int	 ag_sh_word_has(const struct ag_sh_word *w, enum ag_sh_part_type type);

/* ---- redirections and assignments ------------------------------------ */

enum ag_sh_redir_op {
	AG_SH_R_IN,		/* <    */
	AG_SH_R_OUT,		/* >    */
	AG_SH_R_APPEND,		/* >>   */
	AG_SH_R_CLOBBER,	/* >|   */
	AG_SH_R_RDWR,		/* <>   */
	AG_SH_R_HEREDOC,	/* <<   */
	AG_SH_R_HEREDOC_STRIP,	/* <<-  */
	AG_SH_R_HERESTRING,	/* <<<  */
	AG_SH_R_OUT_ERR,	/* &> and >& with a file target */
	AG_SH_R_APPEND_ERR,	/* &>>  */
	AG_SH_R_DUP_IN,		/* <&N, <&-  */
	AG_SH_R_DUP_OUT,	/* >&N, >&-  */
};

struct ag_sh_redir {
	enum ag_sh_redir_op	 op;
	int			 fd;		/* explicit left fd, -1 if none */
	char			*fdvar;		/* {var}>file: "var"; NULL if none */
	/*
	 * The target word (file name, fd number or "-" for DUP, the string
	 * for <<<).  For here-documents: the body.  A body with an unquoted
	 * delimiter is parsed like a double-quoted word (expansions visible);
	 * with a quoted delimiter it is one LIT part.
	 */
	struct ag_sh_word	*target;
	char			*delim;		/* here-doc delimiter after quote removal */
	int			 heredoc_quoted;
	size_t			 off;
};

struct ag_sh_assign {
	char			*name;
	struct ag_sh_word	*subscript;	/* a[SUB]=...; NULL if none */
	int			 append;	/* += */
	int			 is_array;	/* a=(...) */
	struct ag_sh_word	*value;		/* scalar value; NULL for a=() or is_array */
	struct ag_sh_word	**elems;	/* array elements, each a word ("[k]=v" stays one word) */
	size_t			 nelems;
	size_t			 off;
};

/* ---- commands --------------------------------------------------------- */

enum ag_sh_node_type {
	AG_SH_SIMPLE,		/* assigns + words (argv) + redirs; words may be empty */
	AG_SH_PIPELINE,		/* kids: the commands; negated (!), timed (time [-p]),
				 * pipe_stderr[i] for |& after kid i */
	AG_SH_AND,		/* kids[0] && kids[1] */
	AG_SH_OR,		/* kids[0] || kids[1] */
	AG_SH_LIST,		/* kids in order; background[i] set for "kid &" */
	AG_SH_SUBSHELL,		/* ( kids[0] ) */
	AG_SH_GROUP,		/* { kids[0]; } */
	AG_SH_IF,		/* kids: cond1, then1, [cond2, then2 ...], [else]; has_else */
	AG_SH_WHILE,		/* kids[0] condition, kids[1] body */
	AG_SH_UNTIL,		/* kids[0] condition, kids[1] body */
	AG_SH_FOR,		/* name, words (NULL words/nwords 0 = "$@"), kids[0] body */
	AG_SH_ARITH_FOR,	/* words[0..2]: init, test, step (ARITH words), kids[0] body */
	AG_SH_SELECT,		/* like FOR */
	AG_SH_CASE,		/* words[0] subject; items */
	AG_SH_DBRACKET,		/* [[ ... ]]: words are the operands and operators in order */
	AG_SH_ARITH_CMD,	/* (( ... )): words[0] is an ARITH word */
	AG_SH_FUNCDEF,		/* name, kids[0] the body (a compound command) */
	AG_SH_COPROC,		/* name (may be NULL), kids[0] the command */
};

struct ag_sh_case_item {
	struct ag_sh_word	**patterns;
	size_t			  npatterns;
	struct ag_sh_node	 *body;		/* may be NULL for an empty item */
	char			  term[4];	/* ";;", ";&", ";;&", or "" for the last */
};

struct ag_sh_node {
	enum ag_sh_node_type	 type;
	size_t			 off, end;	/* span in the input */

	struct ag_sh_node	**kids;
	size_t			  nkids;

	struct ag_sh_word	**words;
	size_t			  nwords;

	struct ag_sh_assign	 *assigns;	/* SIMPLE only */
	size_t			  nassigns;

	struct ag_sh_redir	 *redirs;	/* SIMPLE, and trailing redirections of compounds */
	size_t			  nredirs;

	char			 *name;		/* FOR/SELECT variable, FUNCDEF/COPROC name */

	unsigned char		 *background;	/* LIST: per kid, 1 when followed by & */
	unsigned char		 *pipe_stderr;	/* PIPELINE: per kid, 1 when followed by |& */
	int			  negated;	/* PIPELINE: ! */
	int			  timed;	/* PIPELINE: time */
	int			  has_else;	/* IF */

	struct ag_sh_case_item	 *items;	/* CASE */
	size_t			  nitems;

	struct ag_arena	 *arena;	/* the root's: the memory of the whole
						 * tree (NULL in every other node) */
};

/* ---- parsing ---------------------------------------------------------- */

enum ag_sh_status {
	AG_SH_OK = 0,
	AG_SH_ERROR = -1,	/* syntax error or refused input; err->off, err->msg */
	AG_SH_INCOMPLETE = 1,	/* valid so far but needs more input (open quote,
				 * here-doc without delimiter, trailing \ or && or |,
				 * unclosed if/for/...): the REPL asks for a PS2 line */
};

/*
 * Parse len bytes of src.  On AG_SH_OK *out is a LIST (possibly with no
 * kids, for empty or comment-only input).  On anything else *out is NULL.
 */
enum ag_sh_status ag_sh_parse(const char *src, size_t len, struct ag_sh_node **out,
    struct ag_err *err);
/* Free a tree ag_sh_parse returned, whole: its nodes are not freed one by one. */
void	ag_sh_free(struct ag_sh_node *root);

/* Debug/explain: print the tree as an indented outline. */
void	ag_sh_dump(const struct ag_sh_node *node, FILE *fp);

#endif
