/*
 * cmdmask.c - secret-named variables' values masked in a command line.
 *
 * The audit record of a command keeps the line as typed, less the values
 * of variables whose names say they hold a secret.  The masks are placed
 * on the parser's own words (red team 20, M1): a mask found by scanning
 * the text for the end of a "word" misread $'..', here-documents and
 * comments, and whatever hides a program or another word hides what the
 * line ran.
 *
 * Masking by shape cannot follow what bash does with a value later (eval,
 * sh -c "$VAR", $((VAR)), test -v, a declaration's value parsed again, a
 * function named like a builtin: red team 24, H1), so a value is masked
 * only where it cannot be code: token-shaped (no blank, no $ ` ( ) [ ] ;
 * & | < >, quote or backslash, whole or not at all), never where the line
 * itself may expand that name as code, and the command's record lists
 * the programs that ran whatever the text shows (execguard.h).  Private
 * keys are not masked in a command at all (issue 33): a key pasted into a
 * line is recorded, in the audit that is root's and the gateway group's.
 */
#include "agconfig.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "exec/cmdmask.h"
#include "parse/shparse.h"

struct span {
	size_t		a, b;
};

struct spans {
	struct span	*v;
	size_t		 n, cap;
	int		 oom;
};

static void
add(struct spans *s, size_t a, size_t b)
{
	if (b <= a || s->oom)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct span *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].a = a;
	s->v[s->n++].b = b;
}

/* Whether a variable's name says it holds a secret. */
static int
secret_name(const char *p, size_t n)
{
	static const char *const words[] = { "TOKEN", "SECRET", "PASSW", "PASSPHRASE",
	    "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", NULL };
	char up[128];
	size_t i;

	if (n == 0 || n >= sizeof(up))
		return 0;
	for (i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)p[i]);
	up[n] = '\0';
	for (i = 0; words[i] != NULL; i++)
		if (strstr(up, words[i]) != NULL)
			return 1;
	return strcmp(up, "KEY") == 0 || (n > 4 && strcmp(up + n - 4, "_KEY") == 0);
}

/* Where a NAME= is found: what its value may be. */
enum where {
	W_UNPARSED,	/* a line that did not parse (it does not run) */
	W_WORD,		/* a word bash does not assign: an argument, a subscript */
	W_DECL,		/* an argument of declare, typeset, export, local, readonly */
	W_NONE,		/* the same, where the line may have redefined the builtin */
	W_HEREDOC	/* a here-document's body */
};

/* The end of a value starting at i, before lim, as bash reads an
 * assignment's: quotes and backslashes honoured, a blank or an operator
 * ends it. */
static size_t
value_end(const char *s, size_t lim, size_t i)
{
	char q = 0;

	for (; i < lim; i++) {
		char ch = s[i];

		if (q == '\'') {
			if (ch == '\'')
				q = 0;
		} else if (ch == '\\' && i + 1 < lim)
			i++;
		else if (q == '"') {
			if (ch == '"')
				q = 0;
		} else if (ch == '\'' || ch == '"')
			q = ch;
		else if (strchr(" \t\n;&|()<>`", ch) != NULL)
			break;
	}
	return i;
}

/*
 * What a masked value may be made of.  Where bash assigns it (an
 * assignment, a declaration's argument): anything but a blank, a control
 * character, $ ` ( ) [ ] ; & | < >, a quote or a backslash, so nothing in
 * it is expanded, parsed again or ends it early.  In any other word, which
 * may be another program's text (`sh -c "perl -e @TOKEN=system+q!..!"`),
 * only what a token is made of (red team 24, M2).
 */
static int
value_char(unsigned char ch, int assigned)
{
	if (assigned)
		return ch > ' ' && ch != 0x7f && strchr("$`()[];&|<>'\"\\", ch) == NULL;
	return isalnum(ch) || strchr("-._~+/=:@%*^#", ch) != NULL;
}

/*
 * Whether s[a..e) is a value that may be masked: made only of value_char,
 * or that in one pair of matching quotes (`API_KEY='abc'`), whose inside
 * then is the mask (*va, *vb).  Whole or not at all: a value that runs on
 * into anything else is shown.
 */
static int
shaped(const char *s, size_t a, size_t e, int assigned, size_t *va, size_t *vb)
{
	size_t i;

	if (e >= a + 2 && (s[a] == '\'' || s[a] == '"') && s[e - 1] == s[a])
		a++, e--;
	if (e <= a)
		return 0;
	for (i = a; i < e; i++)
		if (!value_char((unsigned char)s[i], assigned))
			return 0;
	*va = a;
	*vb = e;
	return 1;
}

/* The raw end of a value at v in a word bash does not assign: one quoted
 * run, or up to a blank or a quote; never past a blank (a quote left open
 * there is no token, and what follows is scanned on). */
static size_t
word_value_end(const char *s, size_t lim, size_t v)
{
	size_t e = v;

	if (e < lim && (s[e] == '\'' || s[e] == '"')) {
		for (e++; e < lim && s[e] != s[v] && !isspace((unsigned char)s[e]); e++)
			;
		return e < lim && s[e] == s[v] ? e + 1 : e;
	}
	while (e < lim && !isspace((unsigned char)s[e]) && s[e] != '\'' && s[e] != '"')
		e++;
	return e;
}

/*
 * What a line may do with a variable's value besides passing it on as
 * data: evaluate it as code or arithmetic, test or index by its name, hand
 * it to a shell or an interpreter (red team 24, H1).  Any of these words
 * anywhere in the line makes it one that may; matched as text, generously
 * (`bash` and `ssh` hold "sh"), since a miss would hide code and a match
 * only shows a value.
 */
static int
risky_line(const char *s, size_t len)
{
	static const char *const words[] = { "eval", "-c", "((", "$[", "[", "test", "let",
	    "source", ". ", "${!", "trap", "alias", "bind", "complete", "mapfile", "readarray",
	    "-v", "-n", "-C", "sh", "python", "perl", "node", "ruby", "php", "lua", "awk", "sed",
	    "xargs", "env", "exec", "fc", "PROMPT_COMMAND", "|", "`", "$(", "<(", ">(", NULL };
	size_t i;

	for (i = 0; words[i] != NULL; i++)
		if (memmem(s, len, words[i], strlen(words[i])) != NULL)
			return 1;
	return 0;
}

/* Whether s[0..len) names the variable name[0..n) other than to assign it
 * (`NAME=`, `NAME+=`): `$NAME`, `${NAME}`, `test -v NAME`, `$((NAME))`. */
static int
referenced(const char *s, size_t len, const char *name, size_t n)
{
	const char *p = s, *lim = s + len;

	while (n > 0 && (p = memmem(p, (size_t)(lim - p), name, n)) != NULL) {
		const char *e = p + n;
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'),
		    after = e < lim && (isalnum((unsigned char)*e) || *e == '_');

		if (!before && !after) {
			int assign = e < lim && (*e == '=' || (*e == '+' && e + 1 < lim &&
			    e[1] == '='));

			if (!assign || (p > s && (p[-1] == '$' || p[-1] == '{' || p[-1] == '!')))
				return 1;
		}
		p++;
	}
	return 0;
}

/* What a mask needs to know of the whole line. */
struct line {
	const char	*s;
	size_t		 len;
	int		 risky;		/* risky_line() */
};

/* Whether a secret name's value may be masked in this line: not one the
 * line may expand as code (H1). */
static int
maskable(const struct line *ln, const char *name, size_t n)
{
	return secret_name(name, n) && !(ln->risky && referenced(ln->s, ln->len, name, n));
}

/* The spans of the command and process substitutions in w, at any depth
 * of its parts (a parameter's subscript and operands, arithmetic). */
static void word_code(const struct ag_sh_word *w, struct spans *code);

static void
part_code(const struct ag_sh_part *p, struct spans *code)
{
	switch (p->type) {
	case AG_SH_P_CMDSUB:
	case AG_SH_P_PROCSUB:
		add(code, p->off, p->end > p->off ? p->end : p->off + 1);
		break;
	case AG_SH_P_PARAM:
		word_code(p->subscript, code);
		word_code(p->operand, code);
		word_code(p->operand2, code);
		break;
	case AG_SH_P_ARITH:
		word_code(p->expr, code);
		break;
	default:
		break;
	}
}

static void
word_code(const struct ag_sh_word *w, struct spans *code)
{
	size_t i;

	for (i = 0; w != NULL && i < w->nparts; i++)
		part_code(&w->parts[i], code);
}

/* The first code span that starts at or after i, or lim. */
static size_t
code_from(const struct spans *code, size_t i, size_t lim)
{
	size_t k, m = lim;

	for (k = 0; k < code->n; k++)
		if (code->v[k].a >= i && code->v[k].a < m)
			m = code->v[k].a;
	return m;
}

/* Inside a code span: where it ends; else i. */
static size_t
past_code(const struct spans *code, size_t i)
{
	size_t k;

	for (k = 0; k < code->n; k++)
		if (i >= code->v[k].a && i < code->v[k].b)
			return code->v[k].b;
	return i;
}

/*
 * Each NAME= in s[a..b) (NAME at a word's start, or after a blank, a
 * quote or a `-`: not inside other text such as perl's `@TOKEN=`) whose
 * NAME names a secret the line does not expand as code: its value masked
 * when it is token-shaped as a whole (shaped()).  Code spans are skipped:
 * their commands are walked on their own, and a value that runs into one
 * is not token-shaped.  A line that did not parse (it does not run) reads
 * values as bash's quoting would.
 */
static void
scan(const struct line *ln, size_t a, size_t b, const struct spans *code, enum where wh,
    struct spans *m)
{
	const char *s = ln->s;
	size_t i = a, j, e, va, vb, lim;

	while (i < b) {
		size_t k = past_code(code, i);

		if (k != i) {
			i = k;
			continue;
		}
		if (!(isalpha((unsigned char)s[i]) || s[i] == '_') ||
		    (i > a && strchr(" \t\n'\"-", s[i - 1]) == NULL)) {
			i++;
			continue;
		}
		for (j = i; j < b && (isalnum((unsigned char)s[j]) || s[j] == '_'); j++)
			;
		if (j < b && s[j] == '=' && maskable(ln, s + i, j - i)) {
			lim = code_from(code, j + 1, b);
			if (wh == W_UNPARSED)
				e = value_end(s, lim, j + 1);
			else
				e = word_value_end(s, lim, j + 1);
			/* whole: it ends at the word's end, a blank or a quote */
			if ((e >= b || isspace((unsigned char)s[e]) || s[e] == '\'' ||
			    s[e] == '"') && shaped(s, j + 1, e, wh == W_UNPARSED, &va, &vb))
				add(m, va, vb);
			i = e > j + 1 ? e : j + 1;
			continue;
		}
		i = j;
	}
}

/*
 * A declaration builtin's argument s[a..b): bash assigns it, so a secret
 * name's value is masked with the word's quoting (`export 'TOKEN=abc'`)
 * and `+=`, when it is token-shaped and ends the word.  Never a subscript
 * (bash expands it) nor an array, which bash parses again (`declare -a
 * TOKEN='([0]=$(..))'`: red team 24, H1).  Anything else is scanned as any
 * word.
 */
static void
decl_word(const struct line *ln, size_t a, size_t b, const struct spans *code,
    struct spans *m)
{
	const char *s = ln->s;
	size_t p = a, n, v, e, va, vb, lim;
	char q = 0;

	if (p < b && (s[p] == '\'' || s[p] == '"'))
		q = s[p++];
	for (n = p; n < b && (isalnum((unsigned char)s[n]) || s[n] == '_'); n++)
		;
	v = n;
	if (v < b && s[v] == '+')
		v++;
	if (n == p || isdigit((unsigned char)s[p]) || v >= b || s[v] != '=' ||
	    !maskable(ln, s + p, n - p)) {
		scan(ln, a, b, code, W_WORD, m);
		return;
	}
	v++;
	lim = code_from(code, v, b);
	if (q != 0) {
		/* 'NAME=value': the value is the quote's inside */
		for (e = v; e < lim && s[e] != q; e++)
			;
		if (e + 1 == b && e < lim && shaped(s, v, e, 1, &va, &vb))
			add(m, va, vb);
		return;
	}
	e = value_end(s, lim, v);
	if (e == b && shaped(s, v, e, 1, &va, &vb))
		add(m, va, vb);
	else if (e < b)
		scan(ln, e, b, code, W_WORD, m);
}

/* What a walk of one parsed line needs. */
struct walk {
	struct line		 ln;
	const struct ag_sh_node	*root;
	struct spans		*m;
};

static void walk_node(struct walk *c, const struct ag_sh_node *n);

/* Whether the line defines a function called name (which would run in
 * the builtin's place). */
static int
defined_here(const struct ag_sh_node *n, const char *name)
{
	size_t i;

	if (n == NULL)
		return 0;
	if (n->type == AG_SH_FUNCDEF && n->name != NULL && strcmp(n->name, name) == 0)
		return 1;
	for (i = 0; i < n->nkids; i++)
		if (defined_here(n->kids[i], name))
			return 1;
	for (i = 0; i < n->nitems; i++)
		if (defined_here(n->items[i].body, name))
			return 1;
	return 0;
}

/* A declaration builtin's name, as bash sees the command's first word
 * (spelled plainly; `builtin export` and `"export"` are not read so). */
static int
declaration(const struct ag_sh_word *w)
{
	static const char *const names[] = { "declare", "typeset", "export", "local", "readonly",
	    NULL };
	size_t i;

	for (i = 0; w != NULL && w->raw != NULL && names[i] != NULL; i++)
		if (strcmp(w->raw, names[i]) == 0)
			return 1;
	return 0;
}

/*
 * Whether the line may have made a declaration builtin something else: a
 * function of that name in it, or eval, source, `.` or alias, which can
 * define one unseen (red team 24, M2: `eval 'export() { eval "${1#*=}";
 * }'; export TOKEN=..` ran the value).  Such a command's words are not
 * masked at all; a function kept from an earlier line runs what the
 * record's execs list.
 */
static int
redefined(const struct walk *c, const struct ag_sh_word *w)
{
	const struct line *ln = &c->ln;

	return defined_here(c->root, w->raw) || memmem(ln->s, ln->len, "eval", 4) != NULL ||
	    memmem(ln->s, ln->len, "source", 6) != NULL || memmem(ln->s, ln->len, "alias", 5) !=
	    NULL || memmem(ln->s, ln->len, ". ", 2) != NULL;
}

/* w, found where wh says. */
static void
walk_word(struct walk *c, const struct ag_sh_word *w, enum where wh)
{
	struct spans code = { NULL, 0, 0, 0 };
	size_t i, b;

	if (w == NULL)
		return;
	word_code(w, &code);
	c->m->oom |= code.oom;
	b = w->end <= c->ln.len ? w->end : c->ln.len;
	if (wh == W_HEREDOC && b > w->off + 1) {
		/* not the delimiter's line, the body's last */
		for (i = b - 1; i > w->off && c->ln.s[i - 1] != '\n'; i--)
			;
		b = i;
	}
	if (w->off < b && wh != W_NONE) {
		if (wh == W_DECL)
			decl_word(&c->ln, w->off, b, &code, c->m);
		else
			scan(&c->ln, w->off, b, &code, wh, c->m);
	}
	free(code.v);
	/* the commands of its substitutions, and words within its parts */
	for (i = 0; i < w->nparts; i++) {
		const struct ag_sh_part *p = &w->parts[i];

		if (p->type == AG_SH_P_CMDSUB || p->type == AG_SH_P_PROCSUB)
			walk_node(c, p->body);
		else if (p->type == AG_SH_P_PARAM) {
			walk_word(c, p->subscript, W_WORD);
			walk_word(c, p->operand, W_WORD);
			walk_word(c, p->operand2, W_WORD);
		} else if (p->type == AG_SH_P_ARITH)
			walk_word(c, p->expr, W_WORD);
	}
}

/* One word bash assigns to a secret name: masked when token-shaped. */
static void
assigned_word(struct walk *c, const struct ag_sh_word *w)
{
	size_t va, vb, e;

	if (w == NULL || w->off >= c->ln.len)
		return;
	e = w->end <= c->ln.len ? w->end : c->ln.len;
	if (shaped(c->ln.s, w->off, e, 1, &va, &vb))
		add(c->m, va, vb);
}

/* An assignment to a secret-named variable the line does not expand as
 * code: its value, or each element of an array, when token-shaped; never
 * with a subscript (bash expands it: `TOKEN[$(..)]=1`). */
static void
walk_assign(struct walk *c, const struct ag_sh_assign *as)
{
	size_t i;

	if (as->name != NULL && as->subscript == NULL &&
	    maskable(&c->ln, as->name, strlen(as->name))) {
		assigned_word(c, as->value);
		for (i = 0; i < as->nelems; i++)
			assigned_word(c, as->elems[i]);
	}
	walk_word(c, as->subscript, W_WORD);
	walk_word(c, as->value, W_WORD);
	for (i = 0; i < as->nelems; i++)
		walk_word(c, as->elems[i], W_WORD);
}

static void
walk_node(struct walk *c, const struct ag_sh_node *n)
{
	size_t i, k;
	enum where decl;

	if (n == NULL)
		return;
	decl = n->nwords > 0 && declaration(n->words[0]) ? (redefined(c, n->words[0]) ? W_NONE :
	    W_DECL) : W_WORD;
	for (i = 0; i < n->nassigns; i++)
		walk_assign(c, &n->assigns[i]);
	for (i = 0; i < n->nwords; i++)
		walk_word(c, n->words[i], i > 0 ? decl : W_WORD);
	for (i = 0; i < n->nredirs; i++) {
		int hd = n->redirs[i].op == AG_SH_R_HEREDOC || n->redirs[i].op == AG_SH_R_HEREDOC_STRIP;

		walk_word(c, n->redirs[i].target, hd ? W_HEREDOC : W_WORD);
	}
	for (i = 0; i < n->nitems; i++) {
		for (k = 0; k < n->items[i].npatterns; k++)
			walk_word(c, n->items[i].patterns[k], W_WORD);
		walk_node(c, n->items[i].body);
	}
	for (i = 0; i < n->nkids; i++)
		walk_node(c, n->kids[i]);
}

static int
by_start(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* A line that does not parse: each line of it scanned on its own. */
static void
unparsed(const struct line *ln, struct spans *m)
{
	struct spans none = { NULL, 0, 0, 0 };
	size_t a = 0, b;

	while (a < ln->len) {
		const char *nl = memchr(ln->s + a, '\n', ln->len - a);

		b = nl != NULL ? (size_t)(nl - ln->s) : ln->len;
		scan(ln, a, b, &none, W_UNPARSED, m);
		a = b + 1;
	}
}

int
ag_cmdmask(const char *s, size_t len, struct ag_strbuf *out)
{
	struct spans m = { NULL, 0, 0, 0 };
	struct ag_sh_node *t = NULL;
	struct ag_err err;
	struct line ln = { s, len, risky_line(s, len) };
	size_t i, from = 0;
	int rc = 0;

	if (ag_sh_parse(s, len, &t, &err) == AG_SH_OK) {
		struct walk c = { ln, t, &m };

		walk_node(&c, t);
	} else
		unparsed(&ln, &m);
	ag_sh_free(t);
	if (m.oom) {
		free(m.v);
		return -1;
	}
	if (m.n > 1)
		qsort(m.v, m.n, sizeof(*m.v), by_start);
	for (i = 0; i < m.n && rc == 0; i++) {
		size_t b = m.v[i].b;

		if (b <= from)
			continue;	/* inside one already masked */
		if (m.v[i].a < from) {
			from = b;	/* overlaps it: the same mark */
			continue;
		}
		rc = ag_strbuf_append(out, s + from, m.v[i].a - from) < 0 ||
		    ag_strbuf_addstr(out, "***") < 0 ? -1 : 0;
		from = b;
	}
	if (rc == 0 && ag_strbuf_append(out, s + from, len - from) < 0)
		rc = -1;
	free(m.v);
	return rc;
}
