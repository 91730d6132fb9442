/*
 * taint.c - arithmetic.  bash evaluates a variable's value as an
 * expression wherever arithmetic reads it, and an expression can run
 * commands (a[$(id)]), so a name read there must hold a number: known from
 * the tracked environment or a literal assignment earlier in the line.  At
 * the end of the walk the whole line is searched for other assignments of
 * such names (a loop, read, a later assignment): that is the taint.
 */
#include "agconfig.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "policy/walker.h"

int
ag_walk_is_int_text(const char *s, size_t n)
{
	size_t i = 0;

	if (n > 0 && (s[0] == '-' || s[0] == '+'))
		i++;
	if (i == n || n - i > 18)
		return 0;
	for (; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* A word whose value is a number: digits and signs, and $((...)) results. */
int
ag_walk_word_is_int(const struct ag_sh_word *wd)
{
	size_t i, j, digits = 0;

	if (wd == NULL || wd->nparts == 0)
		return 0;
	for (i = 0; i < wd->nparts; i++) {
		const struct ag_sh_part *p = &wd->parts[i];

		if (p->type == AG_SH_P_ARITH) {
			digits++;
			continue;
		}
		if (p->type != AG_SH_P_LIT)
			return 0;
		for (j = 0; j < p->len; j++) {
			if (isdigit((unsigned char)p->text[j]))
				digits++;
			else if (p->text[j] != '-' && p->text[j] != '+')
				return 0;
		}
	}
	return digits > 0;
}

int
ag_walk_is_int_special(const char *name)
{
	static const char *const s[] = {
		"?", "#", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO",
		"EPOCHSECONDS", "BASHPID", "PPID", "UID", "EUID", NULL
	};

	return ag_walk_in_list(s, name);
}

/*
 * Variables bash sets itself, some from text an agent controls ("_" is
 * the previous command's last argument, PWD a directory name, REPLY what
 * read read): their value before the line runs is never known.
 */
static int
bash_owned(const char *name)
{
	static const char *const own_vars[] = {
		"_", "REPLY", "MAPFILE", "OPTARG", "PWD", "OLDPWD", "HOSTNAME",
		"HOSTTYPE", "MACHTYPE", "OSTYPE", "PS1", "PS2", "PS3", "PS4",
		"SHELLOPTS", "IFS", "FUNCNAME", "DIRSTACK", "PIPESTATUS", "GROUPS",
		"HISTFILE", "HISTCMD", "TERM", "HOME", "PATH", "SHELL", "COPROC",
		"EPOCHREALTIME", "COLUMNS", "LINES", NULL
	};

	return strncmp(name, "BASH", 4) == 0 || strncmp(name, "COMP_", 5) == 0 ||
	    strncmp(name, "READLINE_", 9) == 0 || ag_walk_in_list(own_vars, name);
}

/*
 * A number for sure when arithmetic reads it: the tracked environment holds
 * a number for it, or it is not in the environment (so it starts unset,
 * which reads as 0) and the line gave it a literal number earlier.  An
 * assignment that may not run (after &&, in an if, in a subshell) then
 * leaves it unset or numeric, both harmless.
 */
static int
known_int(const struct ag_walker *w, const char *name)
{
	const char *v;
	size_t i;

	v = ag_walk_env(w, name);
	if (v != NULL)
		return ag_walk_is_int_text(v, strlen(v));
	if (bash_owned(name))
		return 0;
	for (i = 0; i < w->nints; i++)
		if (strcmp(w->ints[i], name) == 0)
			return 1;
	return 0;
}

void
ag_walk_mark_int(struct ag_walker *w, const char *name, size_t n)
{
	char *c = ag_walk_strndup(w, name, n);

	if (c != NULL)
		ag_walk_push(w, &w->ints, &w->nints, &w->capints, c);
}

void
ag_walk_arith_use(struct ag_walker *w, const char *name, size_t n)
{
	char buf[128], ex[80];
	struct ag_pending *p;

	if (n >= sizeof(buf)) {
		ag_walk_refuse(w, AG_DENY, "arith", "a variable name in arithmetic is too long");
		return;
	}
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (ag_walk_is_int_special(buf))
		return;
	if (!known_int(w, buf)) {
		ag_walk_refuse(w, AG_DENY, "arith",
		    "'%s' is used in arithmetic but its value is not known to be a number; bash evaluates such values as expressions, which can run commands (assign it a number earlier in the same line)",
		    ag_walk_excerpt(buf, ex, sizeof(ex)));
		return;
	}
	/* known now; a non-numeric assignment elsewhere in the line (a loop
	 * body, a read) would still change it: checked at the end */
	if (w->npend == w->cappend) {
		size_t cap = w->cappend ? w->cappend * 2 : 8;
		struct ag_pending *np = realloc(w->pend, cap * sizeof(*np));

		if (np == NULL) {
			w->oom = 1;
			return;
		}
		w->pend = np;
		w->cappend = cap;
	}
	p = &w->pend[w->npend];
	p->name = strdup(buf);
	if (p->name == NULL) {
		w->oom = 1;
		return;
	}
	p->cmd = w->cur;
	w->npend++;
}

/* Scan arithmetic source text for variable names. */
void
ag_walk_arith_scan(struct ag_walker *w, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (isdigit(c)) {		/* 10, 0x1f, 16#ff, 64#@_ */
			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' ||
			    s[i] == '#' || s[i] == '@'))
				i++;
			continue;
		}
		if (isalpha(c) || c == '_') {
			size_t st = i, j;

			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
				i++;
			j = i;
			while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n'))
				j++;
			if (j < n && s[j] == '=' && (j + 1 >= n || s[j + 1] != '=')) {
				/* plain assignment: the old value is not read, the new one
				 * is a number */
				ag_walk_mark_int(w, s + st, i - st);
				continue;
			}
			ag_walk_arith_use(w, s + st, i - st);
			continue;
		}
		i++;
	}
}

/* "NAME[SUB]" as text (test -v, unset, read): scan SUB as arithmetic. */
int
ag_walk_name_text(struct ag_walker *w, const char *s)
{
	const char *br = strchr(s, '[');
	char ex[80];

	if (br == NULL)
		return ag_sh_is_name(s, strlen(s));
	if (!ag_sh_is_name(s, (size_t)(br - s))) {
		ag_walk_refuse(w, AG_DENY, "arith", "'%s' is not a variable name",
		    ag_walk_excerpt(s, ex, sizeof(ex)));
		return 0;
	}
	if (strchr(br, '$') != NULL || strchr(br, '`') != NULL) {
		ag_walk_refuse(w, AG_DENY, "arith",
		    "the subscript in '%s' is expanded and evaluated by bash, which can run commands",
		    ag_walk_excerpt(s, ex, sizeof(ex)));
		return 0;
	}
	ag_walk_arith_scan(w, br + 1, strlen(br + 1));
	return 1;
}

struct taint {
	const char	**v;
	size_t		  n, cap;
	struct ag_walker	 *w;
};

static void taint_node(struct taint *t, const struct ag_sh_node *n);

static void
taint_add(struct taint *t, const char *name, size_t len)
{
	char *c = ag_walk_strndup(t->w, name, len);

	if (c != NULL)
		ag_walk_push(t->w, &t->v, &t->n, &t->cap, c);
}

static void
taint_word(struct taint *t, const struct ag_sh_word *wd)
{
	size_t i;

	if (wd == NULL)
		return;
	for (i = 0; i < wd->nparts; i++) {
		const struct ag_sh_part *p = &wd->parts[i];

		if (p->body != NULL)
			taint_node(t, p->body);
		taint_word(t, p->subscript);
		taint_word(t, p->operand);
		taint_word(t, p->operand2);
		taint_word(t, p->expr);
		if (p->type == AG_SH_P_PARAM && p->op != NULL && p->text != NULL &&
		    (strcmp(p->op, "=") == 0 || strcmp(p->op, ":=") == 0))
			taint_add(t, p->text, strlen(p->text));
	}
}

static void
taint_node(struct taint *t, const struct ag_sh_node *n)
{
	size_t i, j;

	if (n == NULL)
		return;
	for (i = 0; i < n->nassigns; i++) {
		const struct ag_sh_assign *a = &n->assigns[i];

		if (a->value == NULL || a->subscript != NULL || a->append ||
		    a->is_array || !ag_walk_word_is_int(a->value))
			taint_add(t, a->name, strlen(a->name));
		taint_word(t, a->value);
		taint_word(t, a->subscript);
		for (j = 0; j < a->nelems; j++)
			taint_word(t, a->elems[j]);
	}
	if ((n->type == AG_SH_FOR || n->type == AG_SH_SELECT ||
	    n->type == AG_SH_COPROC) && n->name != NULL)
		taint_add(t, n->name, strlen(n->name));
	/* any command word that looks like NAME or NAME=... may be a variable
	 * a builtin (read, mapfile, declare, export, getopts, printf -v)
	 * sets: taint them all, which only ever refuses more */
	if (n->type == AG_SH_SIMPLE && n->nwords > 1) {
		int assigning = 0;

		for (i = 0; i < n->nwords; i++)
			if (n->words[i]->raw &&
			    (ag_walk_builtin_flags(n->words[i]->raw) & AG_BI_ASSIGNS))
				assigning = 1;
		for (i = 1; assigning && i < n->nwords; i++) {
			const struct ag_sh_word *wd = n->words[i];
			const char *r = wd->raw ? wd->raw : "";
			size_t k = 0;

			while (isalnum((unsigned char)r[k]) || r[k] == '_')
				k++;
			if (k > 0 && (r[k] == '\0' || r[k] == '=' || r[k] == '[' ||
			    r[k] == '+')) {
				char *lit = ag_sh_word_literal(wd, NULL);
				const char *eq = lit ? strchr(lit, '=') : NULL;

				if (lit == NULL || eq == NULL ||
				    !ag_walk_is_int_text(eq + 1, strlen(eq + 1)))
					taint_add(t, r, k);
				free(lit);
			}
		}
	}
	for (i = 0; i < n->nwords; i++)
		taint_word(t, n->words[i]);
	for (i = 0; i < n->nredirs; i++)
		taint_word(t, n->redirs[i].target);
	for (i = 0; i < n->nkids; i++)
		taint_node(t, n->kids[i]);
	for (i = 0; i < n->nitems; i++) {
		for (j = 0; j < n->items[i].npatterns; j++)
			taint_word(t, n->items[i].patterns[j]);
		taint_node(t, n->items[i].body);
	}
}

/*
 * Arithmetic uses that looked numeric, but the line also assigns the name
 * something else (a loop, read, a later assignment).
 */
void
ag_walk_taint_finish(struct ag_walker *w)
{
	size_t i;

	if (w->npend > 0 && !w->oom) {
		struct taint t;

		memset(&t, 0, sizeof(t));
		t.w = w;
		taint_node(&t, w->tree);
		for (i = 0; i < w->npend; i++) {
			size_t j;

			for (j = 0; j < t.n; j++)
				if (strcmp(t.v[j], w->pend[i].name) == 0)
					break;
			if (j < t.n) {
				w->cur = w->pend[i].cmd;
				if (w->cur < 0) {
					w->cname = "arithmetic";
					w->coff = 0;
				}
				ag_walk_refuse(w, AG_DENY, "arith",
				    "'%s' is used in arithmetic and also given a value that is not a literal number in the same line; bash would evaluate that value as an expression",
				    w->pend[i].name);
			}
		}
		free((void *)t.v);
	}
}
