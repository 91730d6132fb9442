/*
 * cmdmask.c - secret-named variables' values masked in a command line.
 *
 * The audit record of a command keeps the line as typed, less the values
 * of variables whose names say they hold a secret.  The masks are placed
 * on the parser's own words (red team 20, M1): a mask found by scanning
 * the text for the end of a "word" misread $'..', here-documents and
 * comments (`echo hi # TOKEN='` masked up to the next quote, hiding the
 * commands between), and whatever hides a program or another word hides
 * what the line ran.  Here each mask starts after a NAME= inside one
 * word and ends at that word's end, at a blank in it, or before a
 * command substitution in it, whichever comes first; a substitution's
 * own commands are words of their own, masked the same way.  A value runs
 * to the word's end only where bash assigns it (an assignment, a
 * declaration builtin's argument); anywhere else the word may be another
 * program's text, and only a token is masked (red team 23).
 *
 * Private keys are not masked in a command (red team 24, M1, L1): a key's
 * lines given to a function named cat, a fifo a shell reads or a decoder
 * piped to sh ran as code while the record hid them, and no shape tells
 * data from code.  A key pasted into a line is recorded, in the audit
 * that is root's and the gateway group's; output keeps its redaction
 * (redact.h).
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
 * The end of a value starting at i inside a word that bash does not assign
 * (an argument, `node -e 'API_KEY=1//"...'` or `python3 -c TOKEN='0<nl>...'`;
 * a here-document's line): the value may be another program's text, so
 * only what a token is made of is masked, and whatever else follows (the
 * rest of a program's text) stays visible (red teams 22 and 23).
 */
static size_t
token_end(const char *s, size_t lim, size_t i)
{
	while (i < lim && (isalnum((unsigned char)s[i]) || strchr("-._~+/=:@%!*,^#", s[i]) != NULL))
		i++;
	return i;
}

/* Where a token value begins at i: past one opening quote (`API_KEY='abc'`,
 * `API_KEY="abc"`), which is the shell's or a file's, not the secret's. */
static size_t
token_start(const char *s, size_t lim, size_t i)
{
	return i + 1 < lim && (s[i] == '\'' || s[i] == '"') ? i + 1 : i;
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
 * Each NAME= in s[a..b) (NAME at a word-ish start: not after a name's
 * character, `$` or `{`) whose NAME names a secret: its value masked, up
 * to the first of the value's end and a code span.  Where bash assigns
 * the word (wh W_DECL, at the word's start) the value ends where bash's
 * quoting says; anywhere else it is what a token is made of, so a
 * program's text that begins with NAME= (`python3 -c TOKEN='0<nl>code'`)
 * stays visible.  Code spans are skipped: their commands are walked on
 * their own.
 */
static void
scan(const char *s, size_t a, size_t b, const struct spans *code, enum where wh,
    struct spans *m)
{
	size_t i = a, j, e, v, lim;

	while (i < b) {
		size_t k = past_code(code, i);

		if (k != i) {
			i = k;
			continue;
		}
		if (!(isalpha((unsigned char)s[i]) || s[i] == '_') ||
		    (i > a && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_' ||
		    s[i - 1] == '$' || s[i - 1] == '{'))) {
			i++;
			continue;
		}
		for (j = i; j < b && (isalnum((unsigned char)s[j]) || s[j] == '_'); j++)
			;
		if (j < b && s[j] == '=' && secret_name(s + i, j - i)) {
			/* a line that did not parse is masked by the shell's
			 * quoting (it does not run) */
			lim = code_from(code, j + 1, b);
			if (wh == W_UNPARSED)
				v = j + 1, e = value_end(s, lim, v);
			else
				v = token_start(s, lim, j + 1), e = token_end(s, lim, v);
			add(m, v, e);
			i = e > j + 1 ? e : j + 1;
			continue;
		}
		i = j;
	}
}

/* What bash reads again as a compound assignment, `declare -a 'A=(...)'`,
 * may be masked only when it is plain text: no expansion, substitution,
 * escape or redirection, which would run code the line does not show. */
static int
plain_array(const char *s, size_t a, size_t b)
{
	for (; a < b; a++)
		if (!isalnum((unsigned char)s[a]) && strchr("-._~+/=:@%!*,^# \t\n[]()'\"", s[a]) == NULL)
			return 0;
	return 1;
}

/*
 * A declaration builtin's argument s[a..b): bash assigns it, so a secret
 * name's value is masked as bash reads it, with the word's quoting
 * (`export "PASSWORD=a b"`, `declare -A 'TOKEN=([k]=v)'`), `+=` and a
 * subscript; an array's elements, in parentheses.  What follows the value,
 * and a word that assigns no secret, is scanned as any word.
 */
static void
decl_word(const char *s, size_t a, size_t b, const struct spans *code, struct spans *m)
{
	size_t p = a, n, v, e, lim;
	char q = 0;

	if (p < b && (s[p] == '\'' || s[p] == '"'))
		q = s[p++];
	for (n = p; n < b && (isalnum((unsigned char)s[n]) || s[n] == '_'); n++)
		;
	v = n;
	if (v < b && s[v] == '[')
		while (v < b && s[v] != ']')
			v++;
	if (v < b && s[v] == ']')
		v++;
	if (v < b && s[v] == '+')
		v++;
	if (n == p || isdigit((unsigned char)s[p]) || v >= b || s[v] != '=' ||
	    !secret_name(s + p, n - p)) {
		scan(s, a, b, code, W_WORD, m);
		return;
	}
	v++;
	lim = code_from(code, v, b);
	if (v < lim && s[v] == '(' && q == 0) {
		/* `declare -A TOKEN=([k]=v [j]='a b')`: inside the parentheses */
		for (e = v + 1;; e++) {
			e = value_end(s, lim, e);
			if (e >= lim || s[e] == ')')
				break;
		}
		add(m, v + 1, e);
	} else if (v < lim && s[v] == '(') {
		/* quoted: bash parses it again; plain text only */
		for (e = lim; e > v + 1 && s[e - 1] != ')'; e--)
			;
		if (plain_array(s, v, lim) && e > v + 1)
			add(m, v + 1, e - 1);
		else
			e = v;
	} else {
		/* a scalar, to its end as bash's quoting says */
		e = value_end(s, lim, q != 0 ? p - 1 : v);
		if (e < v)
			e = v;
		add(m, v, q != 0 && e == b && e > v && s[e - 1] == q ? e - 1 : e);
	}
	if (e < b)
		scan(s, e, b, code, W_WORD, m);
}

/* What a walk of one parsed line needs. */
struct walk {
	const char		*s;
	size_t			 len;
	const struct ag_sh_node	*root;
	struct spans		*m;
};

static void walk_node(struct walk *c, const struct ag_sh_node *n);

/* A declaration builtin, as bash sees the command's first word (spelled
 * plainly; `builtin export` and `"export"` are not read so by bash). */
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

/* Whether the line defines a function called name (which would run in
 * the program's place). */
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

/* ---- the walk ------------------------------------------------------------------ */

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
	b = w->end <= c->len ? w->end : c->len;
	if (wh == W_HEREDOC && b > w->off + 1) {
		/* not the delimiter's line, the body's last */
		for (i = b - 1; i > w->off && c->s[i - 1] != '\n'; i--)
			;
		b = i;
	}
	if (w->off < b) {
		if (wh == W_DECL)
			decl_word(c->s, w->off, b, &code, c->m);
		else
			scan(c->s, w->off, b, &code, wh, c->m);
	}
	free(code.v);
	/* the commands of its substitutions (their output is read: a
	 * value, a file), and words within its parts */
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

/* An assignment to a secret-named variable: its whole value, up to a
 * command substitution in it (whose commands are walked). */
static void
walk_assign(struct walk *c, const struct ag_sh_assign *as)
{
	struct spans code = { NULL, 0, 0, 0 };
	size_t i, len = c->len;

	if (as->name != NULL && secret_name(as->name, strlen(as->name))) {
		if (as->value != NULL) {
			word_code(as->value, &code);
			add(c->m, as->value->off, code_from(&code, as->value->off,
			    as->value->end <= len ? as->value->end : len));
		}
		for (i = 0; i < as->nelems; i++) {
			code.n = 0;
			word_code(as->elems[i], &code);
			add(c->m, as->elems[i]->off, code_from(&code, as->elems[i]->off,
			    as->elems[i]->end <= len ? as->elems[i]->end : len));
		}
		c->m->oom |= code.oom;
		free(code.v);
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
	int decl;

	if (n == NULL)
		return;
	/* not a function the line defines in the builtin's place */
	decl = n->nwords > 0 && declaration(n->words[0]) && !defined_here(c->root,
	    n->words[0]->raw);
	for (i = 0; i < n->nassigns; i++)
		walk_assign(c, &n->assigns[i]);
	for (i = 0; i < n->nwords; i++)
		walk_word(c, n->words[i], i > 0 && decl ? W_DECL : W_WORD);
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
unparsed(const char *s, size_t len, struct spans *m)
{
	struct spans none = { NULL, 0, 0, 0 };
	size_t a = 0, b;

	while (a < len) {
		const char *nl = memchr(s + a, '\n', len - a);

		b = nl != NULL ? (size_t)(nl - s) : len;
		scan(s, a, b, &none, W_UNPARSED, m);
		a = b + 1;
	}
}

int
ag_cmdmask(const char *s, size_t len, struct ag_strbuf *out)
{
	struct spans m = { NULL, 0, 0, 0 };
	struct ag_sh_node *t = NULL;
	struct ag_err err;
	size_t i, from = 0;
	int rc = 0;

	if (ag_sh_parse(s, len, &t, &err) == AG_SH_OK) {
		struct walk c = { s, len, t, &m };

		walk_node(&c, t);
	} else
		unparsed(s, len, &m);
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
