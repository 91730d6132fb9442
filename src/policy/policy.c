/*
 * policy.c - the decision (see policy.h): every simple command, construct,
 * expansion and redirection in the tree is judged against the profile; the
 * line's verdict is the worst one found (deny > ask > allow) and its reason
 * the first refusal of that severity.
 *
 * The walk is conservative wherever bash's behaviour depends on something
 * the gateway cannot see (a variable's value, a glob's expansion, the
 * arguments xargs appends, the directory after a `cd` it cannot follow): in
 * those places the command is refused ("fail closed") with a reason that
 * says what to write instead.  One exception, in the developer tier only:
 * a relative redirection target or program path after a cd the gateway
 * cannot follow is left to the kernel sandbox, which confines every write
 * and exec of that tier (see ag_walk_check_path and ag_walk_command).
 *
 * `cd` is simulated along the line: after `cd DIR &&` (or `cd DIR || exit`)
 * the shell is in DIR; after `cd DIR;` in DIR or where it was.  Paths are
 * resolved as the kernel will open them; cd itself is logical, as bash's.
 *
 * This file holds the entry points, the walk over the tree (compound
 * commands, words, expansions, assignments) and the entries and refusals
 * it records; walker.h says where the rest lives.
 */
#include "agconfig.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/envv.h"
#include "common/strbuf.h"
#include "policy/envsan.h"
#include "policy/pathutil.h"
#include "policy/walker.h"
#include "common/utf8.h"

#define MAX_ARGS_STACK	32
/* A decision's strings (each command's text, name, path, reason) are
 * bounded by the line, which the parser bounds; this only fails closed. */
#define DECISION_LIMIT	((size_t)256 * 1024 * 1024)

static void walk_node(struct ag_walker *w, const struct ag_sh_node *n);
static void walk_param(struct ag_walker *w, const struct ag_sh_part *p, int arith);

static int
sev(enum ag_verdict v)
{
	return v == AG_DENY ? 2 : v == AG_ASK ? 1 : 0;
}

const char *
ag_verdict_name(enum ag_verdict v)
{
	switch (v) {
	case AG_ALLOW:
		return "allow";
	case AG_DENY:
		return "deny";
	case AG_ASK:
		return "ask";
	}
	return "deny";
}

int
ag_walk_in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (**l == *s && strcmp(*l, s) == 0)
			return 1;
	return 0;
}

/*
 * What a walk keeps (directory sets, names, copies of strings) lives in
 * the decision's arena: nothing of it is freed on its own.  NULL (and the
 * decision is out of memory) when there is no room.
 */
void *
ag_walk_alloc(struct ag_walker *w, size_t sz)
{
	void *p = ag_arena_alloc(w->strs, sz);

	if (p == NULL)
		w->oom = 1;
	return p;
}

char *
ag_walk_strndup(struct ag_walker *w, const char *s, size_t n)
{
	char *d = ag_arena_strndup(w->strs, s, n);

	if (d == NULL)
		w->oom = 1;
	return d;
}

char *
ag_walk_strdup(struct ag_walker *w, const char *s)
{
	char *d = ag_arena_strdup(w->strs, s);

	if (d == NULL)
		w->oom = 1;
	return d;
}

int
ag_walk_push(struct ag_walker *w, const char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		const char **nv = realloc((void *)*v, c * sizeof(*nv));

		if (nv == NULL) {
			w->oom = 1;
			return -1;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = s;
	return 0;
}

const char *
ag_walk_env(const struct ag_walker *w, const char *name)
{
	size_t n = strlen(name);
	char *const *e;

	if (w->ctx->env == NULL)
		return NULL;
	for (e = w->ctx->env; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static long
cmd_new(struct ag_walker *w, const char *name, const char *path, size_t off, size_t end)
{
	struct ag_policy_cmd *c;

	if (w->ncmds == w->capcmds) {
		size_t cap = w->capcmds ? w->capcmds * 2 : 8;

		c = realloc(w->cmds, cap * sizeof(*c));
		if (c == NULL) {
			w->oom = 1;
			return -1;
		}
		w->cmds = c;
		w->capcmds = cap;
	}
	c = &w->cmds[w->ncmds];
	memset(c, 0, sizeof(*c));
	c->verdict = AG_ALLOW;
	c->off = off;
	if (name != NULL)
		c->name = ag_walk_strdup(w, name);
	if (path != NULL)
		c->path = ag_walk_strdup(w, path);
	if (w->src != NULL && end <= w->srclen) {
		while (end > off && (w->src[end - 1] == ' ' || w->src[end - 1] == '\t' ||
		    w->src[end - 1] == '\n'))
			end--;
		c->text = ag_walk_strndup(w, w->src + off, end > off ? end - off : 0);
	}
	if (c->text == NULL)
		c->text = ag_walk_strdup(w, name ? name : "");
	return (long)w->ncmds++;
}

void
ag_walk_set_path(struct ag_walker *w, long idx, const char *path)
{
	struct ag_policy_cmd *c;

	if (idx < 0 || (size_t)idx >= w->ncmds)
		return;
	c = &w->cmds[idx];
	c->path = path ? ag_walk_strdup(w, path) : NULL;
}

void
ag_walk_approve_seen(struct ag_walker *w, const char *rule)
{
	if (ag_policy_rules_add(w->approve_seen, sizeof(w->approve_seen), rule) < 0)
		w->approve_overflow = 1;
}

void
ag_walk_refuse(struct ag_walker *w, enum ag_verdict v, const char *rule, const char *fmt, ...)
{
	struct ag_policy_cmd *c;
	char buf[1800];
	va_list ap;
	int r;

	/* a refusal of a rule that waits for a person: the line names it */
	if (v == AG_DENY && rule != NULL && w->prof != NULL &&
	    ag_profile_has_approvals(w->prof) && ag_policy_approve_rules(w->prof, rule))
		ag_walk_approve_seen(w, rule);
	/*
	 * What bash runs while it evaluates a value as an arithmetic
	 * expression (`a[$(cmd)]`, `$(( $(nproc) * 2 ))`) is code the line
	 * does not show, like eval's: where every exec is judged and no deny
	 * rule names a builtin, the kernel and the exec judge hold it.
	 */
	if (rule != NULL && strcmp(rule, "arith") == 0 && ag_walk_exec_judged(w) &&
	    !ag_walk_denies_builtin(w))
		return;
	/* rollout's second pass: a program no rule names runs as if a plain
	 * rule named it (command.c then checks what it writes and runs) */
	if (w->ctx != NULL && w->ctx->rollout && v == AG_DENY && rule != NULL &&
	    strcmp(rule, "unknown") == 0 && ag_policy_rollout_rules(w->prof, rule))
		return;
	/* ... and the approvals' second pass, the same way */
	if (w->ctx != NULL && w->ctx->approving && v == AG_DENY && rule != NULL &&
	    strcmp(rule, "unknown") == 0 && ag_policy_approve_rules(w->prof, rule))
		return;
	if (w->cur < 0) {
		w->cur = cmd_new(w, w->cname ? w->cname : "", "keyword", w->coff,
		    w->coff);
		if (w->cur < 0)
			return;
	}
	c = &w->cmds[w->cur];
	if (sev(v) <= sev(c->verdict))
		return;		/* keep the first reason of the worst kind */
	r = snprintf(buf, sizeof(buf), "%s: ", v == AG_ASK ? "ask" : "denied");
	va_start(ap, fmt);
	vsnprintf(buf + r, sizeof(buf) - (size_t)r, fmt, ap);
	va_end(ap);
	c->verdict = v;
	c->reason = ag_walk_strdup(w, buf);
	c->rule = ag_walk_strdup(w, rule);
}

/* The current command is allowed by something other than an allow rule:
 * say what, unless something already refused it. */
void
ag_walk_allow_as(struct ag_walker *w, const char *rule, const char *fmt, ...)
{
	struct ag_policy_cmd *c;
	char buf[1024];
	va_list ap;

	if (w->cur < 0 || (size_t)w->cur >= w->ncmds)
		return;
	c = &w->cmds[w->cur];
	if (c->rule != NULL || c->verdict != AG_ALLOW)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->rule = ag_walk_strdup(w, rule);
	c->reason = ag_walk_strdup(w, buf);
}

/* Short, printable excerpt of source text for messages. */
const char *
ag_walk_excerpt(const char *s, char *buf, size_t bufsz)
{
	if (s == NULL)
		return "";
	return ag_utf8_visible(s, strlen(s), 60, buf, bufsz);
}

static int
feature_ok(struct ag_walker *w, enum ag_feature f, const char *key, const char *what)
{
	char rule[64];

	if (f == AG_FEATURE_ALLOW)
		return 1;
	snprintf(rule, sizeof(rule), "feature:%s", key);
	ag_walk_refuse(w, AG_DENY, rule, "%s is turned off in profile '%s' (features.%s: deny)",
	    what, w->prof->name ? w->prof->name : "?", key);
	return 0;
}

/* A plain `cd DIR` or `pushd DIR` as a whole list element. */
static int
is_plain_cd(const struct ag_sh_node *n)
{
	const char *r;

	if (n == NULL || n->type != AG_SH_SIMPLE || n->nwords < 2 || n->nassigns > 0 ||
	    n->nredirs > 0)
		return 0;
	r = n->words[0]->raw ? n->words[0]->raw : "";
	return (ag_walk_builtin_flags(r) & AG_BI_CD_ARG) != 0;
}

/* A bare `exit [N]` or `return [N]`. */
static int
is_exit(const struct ag_sh_node *n)
{
	const char *r;

	if (n == NULL || n->type != AG_SH_SIMPLE || n->nwords < 1 || n->nwords > 2)
		return 0;
	r = n->words[0]->raw ? n->words[0]->raw : "";
	return (ag_walk_builtin_flags(r) & AG_BI_EXIT) != 0;
}

/*
 * After walking list element n: 1 when it was a plain cd whose success
 * the gateway can place (w->cd_ok), and no function of that name could
 * run instead of the builtin.
 */
static int
cd_succeeded(const struct ag_walker *w, const struct ag_sh_node *n)
{
	size_t i;

	if (w->cd_ok == NULL || !is_plain_cd(n))
		return 0;
	for (i = 0; i < w->nfuncs; i++)
		if (ag_walk_builtin_flags(w->funcs[i]) & AG_BI_CD_ARG)
			return 0;
	return 1;
}

/*
 * A `set` that turns errexit on (1) or off (0), as a whole list element;
 * -1 for anything else.
 */
static int
sets_errexit(const struct ag_sh_node *n)
{
	int on = -1;
	size_t i;

	if (n == NULL || n->type != AG_SH_SIMPLE || n->nwords < 2 || n->nassigns > 0 ||
	    n->nredirs > 0 || n->words[0]->raw == NULL || strcmp(n->words[0]->raw, "set") != 0)
		return -1;
	for (i = 1; i < n->nwords; i++) {
		const char *r = n->words[i]->raw;

		if (r == NULL || (r[0] != '-' && r[0] != '+') ||
		    strspn(r + 1, "abefhkmnoptuvxBCEHPT") != strlen(r + 1))
			return -1;	/* quoted, expanded, or positional parameters */
		if (strchr(r + 1, 'e') != NULL)
			on = r[0] == '-';
		if (strchr(r + 1, 'o') != NULL && i + 1 < n->nwords) {
			const char *o = n->words[++i]->raw;	/* the option's name */

			if (o != NULL && strcmp(o, "errexit") == 0)
				on = r[0] == '-';
		}
	}
	return on;
}

/* What decides a condition's status: the last element of its list. */
static const struct ag_sh_node *
last_of(const struct ag_sh_node *n)
{
	while (n != NULL && n->type == AG_SH_LIST && n->nkids > 0 &&
	    !(n->background && n->background[n->nkids - 1]))
		n = n->kids[n->nkids - 1];
	return n;
}

/* The elements of an && chain in order, however the parser nested them;
 * *any collects every directory set a failure could leave behind. */
static void
walk_and(struct ag_walker *w, const struct ag_sh_node *n, const struct ag_cwdset **any)
{
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i] != NULL && n->kids[i]->type == AG_SH_AND) {
			walk_and(w, n->kids[i], any);
			continue;
		}
		w->cd_ok = NULL;
		walk_node(w, n->kids[i]);
		*any = ag_walk_cwd_union(w, *any, w->cwd);
		if (cd_succeeded(w, n->kids[i]))
			w->cwd = w->cd_ok;
	}
}

/* 1 when the subtree runs cd/pushd/popd in the current shell. */
static int
has_cd(const struct ag_sh_node *n)
{
	size_t i;

	if (n == NULL)
		return 0;
	if (n->type == AG_SH_SIMPLE) {
		for (i = 0; i < n->nwords; i++) {
			const char *r = n->words[i]->raw;

			if (r == NULL)
				continue;
			if (ag_walk_builtin_flags(r) & AG_BI_CD)
				return 1;
			/* a quoted or expanded name could still be cd */
			if (i == 0 && strpbrk(r, "'\"\\$`") != NULL)
				return 1;
		}
		return 0;
	}
	for (i = 0; i < n->nkids; i++)
		if (has_cd(n->kids[i]))
			return 1;
	for (i = 0; i < n->nitems; i++)
		if (has_cd(n->items[i].body))
			return 1;
	return 0;
}

static void
walk_body(struct ag_walker *w, const struct ag_sh_node *body)
{
	/* $(...), <(...), ( ... ): a subshell, so a cd inside stays inside */
	const struct ag_cwdset *saved = w->cwd;
	long cur = w->cur;

	walk_node(w, body);
	w->cwd = saved;
	w->cur = cur;
}

static void
walk_part(struct ag_walker *w, const struct ag_sh_part *p, int arith)
{
	char ex[80];

	switch (p->type) {
	case AG_SH_P_LIT:
		if (arith)
			ag_walk_arith_scan(w, p->text, p->len);
		break;
	case AG_SH_P_GLOB:
	case AG_SH_P_BRACE:
		if (arith && p->text)
			ag_walk_arith_scan(w, p->text, p->len);
		break;
	case AG_SH_P_TILDE:
		if (arith)
			ag_walk_refuse(w, AG_DENY, "arith", "a '~' expansion inside arithmetic is not allowed");
		break;
	case AG_SH_P_PARAM:
		walk_param(w, p, arith);
		break;
	case AG_SH_P_CMDSUB:
		feature_ok(w, w->prof->features.command_substitution,
		    "command_substitution", "command substitution $(...)");
		if (arith)
			ag_walk_refuse(w, AG_DENY, "arith",
			    "command output used in arithmetic is evaluated as an expression, which can run commands");
		if (p->body != NULL)
			walk_body(w, p->body);
		break;
	case AG_SH_P_PROCSUB:
		feature_ok(w, w->prof->features.process_substitution,
		    "process_substitution", "process substitution <(...)/>(...)");
		if (arith)
			ag_walk_refuse(w, AG_DENY, "arith", "process substitution inside arithmetic is not allowed");
		if (p->body != NULL)
			walk_body(w, p->body);
		break;
	case AG_SH_P_ARITH:
		if (p->expr != NULL)
			ag_walk_word(w, p->expr, AG_WORD_ARITH);
		else if (p->text != NULL) {
			if (memchr(p->text, '$', p->len) || memchr(p->text, '`', p->len))
				ag_walk_refuse(w, AG_DENY, "parse", "arithmetic expression '%s' was not fully parsed",
				    ag_walk_excerpt(p->text, ex, sizeof(ex)));
			else
				ag_walk_arith_scan(w, p->text, p->len);
		}
		break;
	}
}

static void
walk_param(struct ag_walker *w, const struct ag_sh_part *p, int arith)
{
	const char *op = p->op ? p->op : "";
	const char *name = p->text ? p->text : "";
	char ex[80];

	if (p->indirect) {
		ag_walk_refuse(w, AG_DENY, "expansion:indirect",
		    "'${!%s}' (indirect expansion) is not allowed: it expands a variable named by another variable's value",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
	}
	if (strcmp(op, "@") == 0) {
		char *t = p->operand ? ag_sh_word_literal(p->operand, NULL) : NULL;

		if (t == NULL || strchr(t, 'P') != NULL)
			ag_walk_refuse(w, AG_DENY, "expansion:prompt",
			    "'${%s@...}' with prompt expansion (@P) is not allowed: it can run commands hidden in the value",
			    ag_walk_excerpt(name, ex, sizeof(ex)));
		free(t);
	}
	if (p->subscript != NULL) {
		char *s = ag_sh_word_literal(p->subscript, NULL);

		if (s == NULL || (strcmp(s, "@") != 0 && strcmp(s, "*") != 0))
			ag_walk_word(w, p->subscript, AG_WORD_ARITH);
		free(s);
	}
	if ((strcmp(op, "=") == 0 || strcmp(op, ":=") == 0) &&
	    ag_sh_is_name(name, strlen(name)) && ag_envsan_is_dangerous(name, w->prof)) {
		char rule[160];

		snprintf(rule, sizeof(rule), "env:%s", name);
		ag_walk_refuse(w, AG_DENY, rule,
		    "'${%s%s...}' assigns '%s', which is not allowed (it changes how bash or programs run)",
		    name, op, name);
	}
	if (arith && !p->length) {
		if (op[0] == '\0' || strcmp(op, "-") == 0 || strcmp(op, ":-") == 0 ||
		    strcmp(op, "+") == 0 || strcmp(op, ":+") == 0) {
			if (ag_sh_is_name(name, strlen(name)) || ag_walk_is_int_special(name))
				ag_walk_arith_use(w, name, strlen(name));
			else
				ag_walk_refuse(w, AG_DENY, "arith",
				    "'$%s' is used in arithmetic but its value is not known to be a number",
				    ag_walk_excerpt(name, ex, sizeof(ex)));
			if (p->operand != NULL)
				ag_walk_word(w, p->operand, AG_WORD_ARITH);
		} else {
			ag_walk_refuse(w, AG_DENY, "arith",
			    "'${%s%s...}' inside arithmetic is not allowed: its value is evaluated as an expression",
			    ag_walk_excerpt(name, ex, sizeof(ex)), op);
			if (p->operand != NULL)
				ag_walk_word(w, p->operand, AG_WORD_PLAIN);
			if (p->operand2 != NULL)
				ag_walk_word(w, p->operand2, AG_WORD_PLAIN);
		}
		return;
	}
	if (strcmp(op, ":") == 0) {
		if (p->operand != NULL)
			ag_walk_word(w, p->operand, AG_WORD_ARITH);
	} else if (p->operand != NULL) {
		ag_walk_word(w, p->operand, AG_WORD_PLAIN);
	}
	if (p->operand2 != NULL)
		ag_walk_word(w, p->operand2, AG_WORD_PLAIN);
}

/* Every part of a word; arith: the word is read as an arithmetic expression
 * ($((...)), a subscript, let), where a variable's value is evaluated. */
void
ag_walk_word(struct ag_walker *w, const struct ag_sh_word *wd, int arith)
{
	size_t i;

	if (wd == NULL)
		return;
	for (i = 0; i < wd->nparts; i++)
		walk_part(w, &wd->parts[i], arith);
}

int
ag_walk_var_name(struct ag_walker *w, const char *name, const char *how)
{
	char rule[160], ex[80];

	if (!ag_envsan_is_dangerous(name, w->prof))
		return 1;
	/*
	 * With 'unknown: allow' which file a name runs decides nothing the
	 * kernel does not hold: any program may run, and the deny rules
	 * match by name here and at every exec.
	 */
	if (w->prof->unknown == AG_UNKNOWN_ALLOW && strcmp(name, "PATH") == 0)
		return 1;
	/*
	 * Where every exec is judged, IFS (`while IFS= read -r`) and
	 * LD_LIBRARY_PATH (`LD_LIBRARY_PATH=. ./test`) may be set within a
	 * line: the line's words are judged again at each exec however they
	 * were split, and a library is mapped executable only from where a
	 * built program could run anyway (paths.exec).  Neither is kept for
	 * the next line (the captured state drops them), so the runner shell
	 * and the gateway's own script never start with them.
	 */
	if (ag_profile_exec_judged(w->prof) &&
	    (strcmp(name, "IFS") == 0 || strcmp(name, "LD_LIBRARY_PATH") == 0))
		return 1;
	snprintf(rule, sizeof(rule), "env:%s", name);
	ag_walk_refuse(w, AG_DENY, rule,
	    "%s '%s' is not allowed: it changes how bash or the programs it starts behave%s",
	    how, ag_walk_excerpt(name, ex, sizeof(ex)),
	    " (a profile may list it in env.allow)");
	return 0;
}

static void
check_assign(struct ag_walker *w, const struct ag_sh_assign *a, int persistent)
{
	size_t i;

	ag_walk_var_name(w, a->name, "setting");
	if (a->subscript != NULL)
		ag_walk_word(w, a->subscript, AG_WORD_ARITH);
	if (a->value != NULL)
		ag_walk_word(w, a->value, AG_WORD_PLAIN);
	for (i = 0; i < a->nelems; i++) {
		const struct ag_sh_word *e = a->elems[i];

		ag_walk_word(w, e, AG_WORD_PLAIN);
		/* "[k]=v": k is an arithmetic subscript for indexed arrays */
		if (e->nparts > 0 && e->parts[0].type == AG_SH_P_LIT &&
		    e->parts[0].quote == AG_SH_Q_NONE && e->parts[0].len > 0 &&
		    e->parts[0].text[0] == '[') {
			const char *t = e->parts[0].text;
			const char *cl = memchr(t, ']', e->parts[0].len);

			if (cl != NULL)
				ag_walk_arith_scan(w, t + 1, (size_t)(cl - t - 1));
			else
				ag_walk_refuse(w, AG_DENY, "arith",
				    "array element subscripts must be literal numbers");
		}
	}
	if (persistent && a->value != NULL && a->subscript == NULL && !a->append &&
	    !a->is_array && ag_walk_word_is_int(a->value))
		ag_walk_mark_int(w, a->name, strlen(a->name));
}

int
ag_walk_is_function(const struct ag_walker *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nfuncs; i++)
		if (strcmp(w->funcs[i], name) == 0)
			return 1;
	return 0;
}

static void
decide_simple(struct ag_walker *w, const struct ag_sh_node *n)
{
	struct ag_arg stack[MAX_ARGS_STACK], *a = stack;
	long saved = w->cur;
	size_t i;

	w->cur = cmd_new(w, NULL, NULL, n->off, n->end);
	if (w->cur < 0) {
		w->cur = saved;
		return;
	}
	for (i = 0; i < n->nassigns; i++)
		check_assign(w, &n->assigns[i], n->nwords == 0);
	for (i = 0; i < n->nwords; i++)
		ag_walk_word(w, n->words[i], AG_WORD_PLAIN);
	ag_walk_redirs(w, n->redirs, n->nredirs);
	if (n->nwords == 0) {
		struct ag_policy_cmd *c = &w->cmds[w->cur];

		c->path = ag_walk_strdup(w, n->nassigns ? "assignment" : "redirection");
		ag_walk_write_redirs_ruled(w, n->redirs, n->nredirs);
		w->cur = saved;
		return;
	}
	if (n->nwords > MAX_ARGS_STACK) {
		a = calloc(n->nwords, sizeof(*a));
		if (a == NULL) {
			w->oom = 1;
			w->cur = saved;
			return;
		}
	}
	for (i = 0; i < n->nwords; i++) {
		a[i].w = n->words[i];
		a[i].lit = ag_sh_word_literal(n->words[i], NULL);
		/* "~" is fixed for arguments, and for a command name
		 * (~/bin/tool is HOME/bin/tool, as bash runs it) */
		if (a[i].lit == NULL)
			a[i].lit = ag_walk_tilde_arg(w, n->words[i]);
	}
	if (a[0].lit == NULL) {
		ag_walk_command(w, a, n->nwords, 0);	/* says why, or lets the exec judge */
	} else {
		struct ag_policy_cmd *c = &w->cmds[w->cur];

		c->name = ag_walk_strdup(w, a[0].lit);
		/* what the program reads through `<` meets its deny rules too */
		w->redirs = n->redirs;
		w->nredirs = n->nredirs;
		ag_walk_command(w, a, n->nwords, 0);
		w->redirs = NULL;
		w->nredirs = 0;
		ag_walk_write_redirs_ruled(w, n->redirs, n->nredirs);
	}
	/* what a wrapper or find -exec runs with words from input (xargs -I,
	 * {}) is judged on a copy of a[], so every literal is still here */
	for (i = 0; i < n->nwords; i++)
		free(a[i].lit);
	if (a != stack)
		free(a);
	w->cur = saved;
}

static void
construct(struct ag_walker *w, const char *name, size_t off)
{
	w->cur = -1;
	w->cname = name;
	w->coff = off;
}

/* A list: `a; b & c`.  What runs in the background is a feature. */
static void
walk_list(struct ag_walker *w, const struct ag_sh_node *n)
{
	long saved = w->cur;
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		if (n->background && n->background[i]) {
			const struct ag_cwdset *cs = w->cwd;

			construct(w, "&", n->kids[i]->end);
			feature_ok(w, w->prof->features.background, "background",
			    "running a command in the background (&)");
			w->cur = saved;
			walk_node(w, n->kids[i]);
			w->cwd = cs;
		} else {
			int e = n == w->root ? sets_errexit(n->kids[i]) : -1;

			w->cd_ok = NULL;
			walk_node(w, n->kids[i]);
			if (e >= 0)
				w->errexit = e;
			/* `set -e; cd DIR; cmd`: a failed cd ends the line,
			 * so cmd runs in DIR (only in the line's own top
			 * list: in a condition errexit does not apply) */
			else if (n == w->root && w->errexit && cd_succeeded(w, n->kids[i]))
				w->cwd = w->cd_ok;
		}
	}
}

static void
walk_or(struct ag_walker *w, const struct ag_sh_node *n)
{
	size_t i;

	/* `cd DIR || exit 1`: past it the shell is in DIR or gone */
	if (n->nkids == 2 && is_plain_cd(n->kids[0]) && is_exit(n->kids[1])) {
		const struct ag_cwdset *ok;

		w->cd_ok = NULL;
		walk_node(w, n->kids[0]);
		ok = cd_succeeded(w, n->kids[0]) ? w->cd_ok : NULL;
		walk_node(w, n->kids[1]);
		if (ok != NULL)
			w->cwd = ok;
		return;
	}
	for (i = 0; i < n->nkids; i++)
		walk_node(w, n->kids[i]);
}

/*
 * `if cd DIR; then cmd; fi`: cmd runs only where the cd took the shell.
 * Afterwards it may be wherever any branch, or a failed condition with no
 * branch taken, left it.
 */
static void
walk_if(struct ag_walker *w, const struct ag_sh_node *n)
{
	const struct ag_cwdset *after = w->cwd, *failed;
	size_t i, nconds = (n->nkids - (n->has_else ? 1 : 0)) / 2;

	for (i = 0; i < nconds; i++) {
		w->cd_ok = NULL;
		walk_node(w, n->kids[2 * i]);
		failed = w->cwd;
		if (cd_succeeded(w, last_of(n->kids[2 * i])))
			w->cwd = w->cd_ok;
		walk_node(w, n->kids[2 * i + 1]);
		after = ag_walk_cwd_union(w, after, w->cwd);
		w->cwd = failed;
	}
	for (i = 2 * nconds; i < n->nkids; i++)
		walk_node(w, n->kids[i]);
	w->cwd = ag_walk_cwd_union(w, after, w->cwd);
}

/* `[[ ... ]]`: the operands of an arithmetic comparison are arithmetic. */
static void
walk_dbracket(struct ag_walker *w, const struct ag_sh_node *n)
{
	static const char *const arith_ops[] = {
		"-eq", "-ne", "-lt", "-le", "-gt", "-ge", NULL
	};
	unsigned char *isar = NULL;
	size_t i;

	w->cur = cmd_new(w, "[[", "keyword", n->off, n->end);
	if (n->nwords > 0 && (isar = calloc(n->nwords, 1)) == NULL) {
		w->oom = 1;
		return;
	}
	for (i = 0; i < n->nwords; i++) {
		const char *r = n->words[i]->raw ? n->words[i]->raw : "";

		if (ag_walk_in_list(arith_ops, r)) {
			if (i > 0)
				isar[i - 1] = 1;
			if (i + 1 < n->nwords)
				isar[i + 1] = 1;
		}
		if (strcmp(r, "-v") == 0 && i + 1 < n->nwords) {
			char *t = ag_sh_word_literal(n->words[i + 1], NULL);

			if (t == NULL)
				ag_walk_refuse(w, AG_DENY, "arith",
				    "'[[ -v ... ]]' needs a literal variable name");
			else if (strchr(t, '['))
				ag_walk_name_text(w, t);
			free(t);
		}
	}
	for (i = 0; i < n->nwords; i++)
		ag_walk_word(w, n->words[i], isar[i] ? AG_WORD_ARITH : AG_WORD_PLAIN);
	free(isar);
}

/* Defining a function is a feature; its body is judged where it is
 * defined, and a cd in it may leave the shell anywhere. */
static int
push_def(struct ag_walker *w, const struct ag_sh_node *n)
{
	if (w->nfdefs == w->capfdefs) {
		size_t c = w->capfdefs ? w->capfdefs * 2 : 8;
		const struct ag_sh_node **nv = realloc((void *)w->fdefs, c * sizeof(*nv));

		if (nv == NULL) {
			w->oom = 1;
			return -1;
		}
		w->fdefs = nv;
		w->capfdefs = c;
	}
	w->fdefs[w->nfdefs++] = n;
	return 0;
}

const struct ag_sh_node *
ag_walk_function(const struct ag_walker *w, const char *name)
{
	size_t i;

	/* the last definition is the one a call runs */
	for (i = w->nfuncs; i > 0; i--)
		if (strcmp(w->funcs[i - 1], name) == 0)
			return w->fdefs[i - 1];
	return NULL;
}

/* Calls nested deeper than this (a recursive function) are refused: the
 * walk cannot follow them. */
#define MAX_CALLS	8

void
ag_walk_call(struct ag_walker *w, const struct ag_sh_node *fn)
{
	const struct ag_cwdset *cs = w->cwd;
	long saved = w->cur;
	size_t i;

	if (w->calls >= MAX_CALLS) {
		ag_walk_refuse(w, AG_DENY, "builtin:functions", "function calls nest more than "
		    "%d deep here; the gateway cannot follow what they do", MAX_CALLS);
		return;
	}
	w->calls++;
	for (i = 0; i < fn->nkids; i++)
		walk_node(w, fn->kids[i]);
	w->calls--;
	w->cur = saved;
	if (has_cd(fn))
		ag_walk_cd(w, NULL, 0);
	else
		w->cwd = cs;
}

static void
walk_funcdef(struct ag_walker *w, const struct ag_sh_node *n)
{
	long saved = w->cur;
	const struct ag_cwdset *cs;
	size_t i;

	w->cur = cmd_new(w, "function", "keyword", n->off, n->end);
	if (feature_ok(w, w->prof->features.functions, "functions", "defining functions") &&
	    n->name && ag_walk_push(w, &w->funcs, &w->nfuncs, &w->capfuncs, n->name) == 0 &&
	    push_def(w, n) < 0)
		w->nfuncs--;
	w->cur = saved;
	if (has_cd(n))
		ag_walk_cd(w, NULL, 0);
	cs = w->cwd;
	for (i = 0; i < n->nkids; i++)
		walk_node(w, n->kids[i]);
	w->cwd = cs;
}

static void
walk_node(struct ag_walker *w, const struct ag_sh_node *n)
{
	long saved = w->cur;
	const char *scname = w->cname;
	size_t scoff = w->coff;
	size_t i, j;

	if (n == NULL || w->oom)
		return;
	switch (n->type) {
	case AG_SH_SIMPLE:
		decide_simple(w, n);
		return;
	case AG_SH_LIST:
		walk_list(w, n);
		break;
	case AG_SH_PIPELINE:
		for (i = 0; i < n->nkids; i++) {
			const struct ag_cwdset *cs = w->cwd;

			walk_node(w, n->kids[i]);
			if (n->nkids > 1)
				w->cwd = cs;	/* each part runs in a subshell */
		}
		break;
	case AG_SH_AND: {
		/*
		 * `cd DIR && cmd`: cmd runs only if the cd succeeded, so only in
		 * DIR.  After the whole list the shell may be wherever a failed
		 * element left it, so every set seen along the way counts then.
		 */
		const struct ag_cwdset *any = w->cwd;

		walk_and(w, n, &any);
		w->cwd = ag_walk_cwd_union(w, any, w->cwd);
		break;
	}
	case AG_SH_OR:
		walk_or(w, n);
		break;
	case AG_SH_GROUP:
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_IF:
		walk_if(w, n);
		break;
	case AG_SH_SUBSHELL:
		construct(w, "( )", n->off);
		feature_ok(w, w->prof->features.subshell, "subshell", "a subshell ( ... )");
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_body(w, n->kids[i]);
		break;
	case AG_SH_WHILE:
	case AG_SH_UNTIL:
		if (has_cd(n))
			ag_walk_cd(w, NULL, 0);	/* repeated cd: anywhere */
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_FOR:
	case AG_SH_SELECT:
		construct(w, n->type == AG_SH_FOR ? "for" : "select", n->off);
		if (n->name)
			ag_walk_var_name(w, n->name, "looping over");
		for (i = 0; i < n->nwords; i++)
			ag_walk_word(w, n->words[i], AG_WORD_PLAIN);
		w->cur = saved;
		if (has_cd(n))
			ag_walk_cd(w, NULL, 0);
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_ARITH_FOR:
		construct(w, "for ((", n->off);
		if (has_cd(n))
			ag_walk_cd(w, NULL, 0);
		for (i = 0; i < n->nwords; i++)
			ag_walk_word(w, n->words[i], AG_WORD_ARITH);
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_CASE:
		construct(w, "case", n->off);
		for (i = 0; i < n->nwords; i++)
			ag_walk_word(w, n->words[i], AG_WORD_PLAIN);
		for (i = 0; i < n->nitems; i++)
			for (j = 0; j < n->items[i].npatterns; j++)
				ag_walk_word(w, n->items[i].patterns[j], AG_WORD_PLAIN);
		w->cur = saved;
		for (i = 0; i < n->nitems; i++)
			walk_node(w, n->items[i].body);
		break;
	case AG_SH_DBRACKET:
		walk_dbracket(w, n);
		break;
	case AG_SH_ARITH_CMD:
		w->cur = cmd_new(w, "((", "keyword", n->off, n->end);
		for (i = 0; i < n->nwords; i++)
			ag_walk_word(w, n->words[i], AG_WORD_ARITH);
		break;
	case AG_SH_FUNCDEF:
		walk_funcdef(w, n);
		break;
	case AG_SH_COPROC:
		construct(w, "coproc", n->off);
		feature_ok(w, w->prof->features.coproc, "coproc", "coproc");
		if (n->name)
			ag_walk_var_name(w, n->name, "naming a coproc");
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_body(w, n->kids[i]);
		break;
	}
	/* trailing redirections of a compound command */
	if (n->type != AG_SH_SIMPLE && n->nredirs > 0) {
		construct(w, "redirection", n->off);
		ag_walk_redirs(w, n->redirs, n->nredirs);
	}
	w->cur = saved;
	w->cname = scname;
	w->coff = scoff;
}

/* "r1,r2": the distinct rules of an allowed line, for the audit; "allow"
 * when there is none (an empty line) or they do not fit. */
static void
allowed_by(struct ag_decision *out)
{
	size_t i, j, len = 0;

	out->rule[0] = '\0';
	for (i = 0; i < out->ncmds; i++) {
		const char *r = out->cmds[i].rule;
		int seen = 0;
		size_t n;

		for (j = 0; j < i && !seen; j++)
			seen = strcmp(out->cmds[j].rule, r) == 0;
		if (seen)
			continue;
		n = strlen(r);
		if (len + n + 2 > sizeof(out->rule)) {
			len = 0;
			break;
		}
		if (len > 0)
			out->rule[len++] = ',';
		memcpy(out->rule + len, r, n + 1);
		len += n;
	}
	if (len == 0)
		snprintf(out->rule, sizeof(out->rule), "allow");
}

/* The gateway itself could not decide: deny, and say so. */
static void
deny_internal(struct ag_decision *out, const char *why)
{
	out->verdict = AG_DENY;
	snprintf(out->reason, sizeof(out->reason), "denied: %s", why);
	snprintf(out->rule, sizeof(out->rule), "internal");
}

static void
finish(struct ag_walker *w, struct ag_decision *out)
{
	size_t i;
	int worst = 0;
	const struct ag_policy_cmd *first = NULL;
	size_t at = 0;

	ag_walk_taint_finish(w);
	out->cmds = w->cmds;
	out->ncmds = w->ncmds;
	w->cmds = NULL;
	out->writes = w->writes;
	out->nwrites = w->nwrites;
	w->writes = NULL;
	out->inner = w->inner;
	out->ninner = w->ninner;
	w->inner = NULL;
	for (i = 0; i < out->ncmds; i++) {
		struct ag_policy_cmd *c = &out->cmds[i];

		if (c->reason == NULL)
			c->reason = ag_walk_strdup(w, "allowed");
		if (c->rule == NULL)
			c->rule = ag_walk_strdup(w, c->path &&
			    strcmp(c->path, "builtin") == 0 ? "builtin" : "allow");
		if (sev(c->verdict) > worst) {
			worst = sev(c->verdict);
			first = c;
			at = i + 1;
		}
	}
	if (w->oom) {
		deny_internal(out, "out of memory while deciding");
		return;
	}
	if (first == NULL) {
		out->verdict = AG_ALLOW;
		snprintf(out->reason, sizeof(out->reason), "allowed");
		/* the rules that let it run (profiles.x.allow[3],
		 * profiles.x.paths.exec, builtin, ...), each once, in order */
		allowed_by(out);
		return;
	}
	out->verdict = first->verdict;
	out->refused_part = at;
	snprintf(out->reason, sizeof(out->reason), "%s", first->reason ? first->reason : "denied");
	snprintf(out->rule, sizeof(out->rule), "%s", first->rule ? first->rule : "unknown");
}

static int
decide(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    const char *src, size_t srclen, struct ag_decision *out)
{
	struct ag_walker w;
	size_t i;

	memset(&w, 0, AG_WALKER_ZERO);
	w.ctx = ctx;
	w.prof = ctx ? ctx->profile : NULL;
	if (ctx == NULL || w.prof == NULL || ctx->cwd == NULL || ctx->cwd[0] != '/') {
		deny_internal(out, "no profile or working directory to decide with");
		return -1;
	}
	if ((w.strs = ag_arena_new(DECISION_LIMIT)) == NULL) {
		deny_internal(out, "out of memory while deciding");
		return -1;
	}
	w.tree = tree;
	w.src = src;
	w.srclen = srclen;
	w.cur = -1;
	w.unknown_v = w.prof->unknown == AG_UNKNOWN_ASK ? AG_ASK : AG_DENY;
	w.pathenv = ag_walk_env(&w, "PATH");
	if (w.pathenv == NULL)
		w.pathenv = AG_DEFAULT_PATH;
	/* "~" and protected paths need one spelling of home: no trailing
	 * slash, no "//" (a home of "/" is kept as "/") */
	if (ctx->home != NULL && ctx->home[0] == '/' &&
	    ag_path_normalize(ctx->home, w.homebuf, sizeof(w.homebuf)) == 0)
		w.home = w.homebuf;
	w.cwd0.d[0] = ctx->cwd;
	w.cwd0.l[0] = ctx->cwd;
	w.cwd0.n = 1;
	w.cwd = &w.cwd0;

	w.root = tree;
	{
		int was = ag_path_set_lexical(ctx->remote);

		walk_node(&w, tree);
		ag_path_set_lexical(was);
	}
	finish(&w, out);
	out->strings = w.strs;	/* the cmds' strings, with them */
	memcpy(out->approve_rule, w.approve_seen, sizeof(out->approve_rule));
	if (w.approve_overflow) {
		out->verdict = AG_DENY;
		snprintf(out->reason, sizeof(out->reason), "denied: the line meets more rules "
		    "that wait for approval than one request can name; split it");
		snprintf(out->rule, sizeof(out->rule), "approve:too-many");
	}

	free(w.cmds);
	free((void *)w.writes);
	free((void *)w.inner);
	for (i = 0; i < w.npend; i++)
		free(w.pend[i].name);
	free(w.pend);
	free((void *)w.ints);
	free((void *)w.funcs);
	free((void *)w.fdefs);
	if (w.allowed_own)
		free(w.allowed_list);
	return w.oom ? -1 : 0;
}

/*
 * A refusal in a profile in rollout, or with rules that wait for approval:
 * decided again with those rules refusing nothing (rollout.c); would_run
 * (rollout) or approve when nothing else refuses.
 */
static int
relaxed_pass(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    const char *src, size_t srclen, struct ag_decision *out, int approving, char *seen,
    size_t seensz)
{
	const struct ag_profile *p = ctx->profile;
	int (*relaxes)(const struct ag_profile *, const char *) = approving ?
	    ag_policy_approve_rules : ag_policy_rollout_rules;
	struct ag_profile p2;
	struct ag_policy_ctx c2;
	struct ag_decision d2;
	struct ag_rule *allow = NULL, *deny = NULL;
	size_t i, n;
	int ok = 0;

	/*
	 * The profile as rollout (or an approval) makes it: its relaxed deny
	 * rules gone, its relaxed allow rules plain (any subcommand or
	 * argument; the global options they allow stay as they were).  Every
	 * command is then walked as under any rule that lets it run, with
	 * every check of the gateway's own; nothing is skipped after a
	 * refusal.
	 */
	p2 = *p;
	if ((p->nallow > 0 && (allow = calloc(p->nallow, sizeof(*allow))) == NULL) ||
	    (p->ndeny > 0 && (deny = calloc(p->ndeny, sizeof(*deny))) == NULL))
		goto out;
	for (i = 0; i < p->nallow; i++) {
		allow[i] = p->allow[i];
		if (!approving && relaxes(p, p->allow[i].id)) {
			memset(&allow[i].subcommands, 0, sizeof(allow[i].subcommands));
			memset(&allow[i].args, 0, sizeof(allow[i].args));
			memset(&allow[i].argv, 0, sizeof(allow[i].argv));
			memset(&allow[i].deny_args, 0, sizeof(allow[i].deny_args));
			allow[i].has_argv = 0;
		}
	}
	for (i = n = 0; i < p->ndeny; i++)
		if (!relaxes(p, p->deny[i].id))
			deny[n++] = p->deny[i];
	p2.allow = allow;
	p2.deny = deny;
	p2.ndeny = n;
	c2 = *ctx;
	c2.profile = &p2;
	if (approving)
		c2.approving = 1;
	else
		c2.rollout = 1;
	memset(&d2, 0, sizeof(d2));
	ok = decide(&c2, tree, src, srclen, &d2) == 0 && d2.verdict == AG_ALLOW;
	if (ok && seen != NULL)
		snprintf(seen, seensz, "%s", d2.approve_rule);
	ag_decision_free(&d2);
out:
	free(allow);
	free(deny);
	return ok;
}

static void
second_passes(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    const char *src, size_t srclen, struct ag_decision *out)
{
	char seen[sizeof(out->approve_rule)];

	if (ctx == NULL || ctx->rollout || ctx->approving || ctx->one_pass || ctx->profile == NULL)
		return;
	if (out->verdict == AG_ALLOW && out->approve_rule[0] != '\0') {
		/* allowed by rules that want a person to say so */
		out->approve = 1;
		return;
	}
	if (out->verdict != AG_DENY || out->parse_error)
		return;
	if (ag_profile_in_rollout(ctx->profile))
		out->would_run = relaxed_pass(ctx, tree, src, srclen, out, 0, NULL, 0);
	/* refused only by rules that wait for a person: the line waits for
	 * every such rule it meets, the ones the relaxed walk lets run too */
	if (!out->would_run && ag_profile_has_approvals(ctx->profile) &&
	    ag_policy_approve_rules(ctx->profile, out->rule) &&
	    relaxed_pass(ctx, tree, src, srclen, out, 1, seen, sizeof(seen)) &&
	    ag_policy_rules_add(out->approve_rule, sizeof(out->approve_rule), seen) == 0 &&
	    ag_policy_rules_add(out->approve_rule, sizeof(out->approve_rule), out->rule) == 0)
		out->approve = 1;
}

int
ag_policy_decide_text(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    const char *src, size_t srclen, struct ag_decision *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = decide(ctx, tree, src, srclen, out);
	second_passes(ctx, tree, src, srclen, out);
	return r;
}

int
ag_policy_decide(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    struct ag_decision *out)
{
	return ag_policy_decide_text(ctx, tree, NULL, 0, out);
}

void
ag_policy_parse_refusal(enum ag_sh_status st, const struct ag_err *err, struct ag_decision *out)
{
	memset(out, 0, sizeof(*out));
	out->verdict = AG_DENY;
	out->parse_error = 1;
	out->incomplete = st == AG_SH_INCOMPLETE;
	if (out->incomplete)
		snprintf(out->reason, sizeof(out->reason), "denied: the command is incomplete (%s)",
		    err->msg[0] ? err->msg : "needs more input");
	else if (err->off >= 0)
		snprintf(out->reason, sizeof(out->reason),
		    "denied: cannot parse the command at byte %ld: %s", err->off,
		    err->msg[0] ? err->msg : "syntax error");
	else
		snprintf(out->reason, sizeof(out->reason), "denied: cannot parse the command: %s",
		    err->msg[0] ? err->msg : "syntax error");
	snprintf(out->rule, sizeof(out->rule), "parse");
}

int
ag_policy_check(const struct ag_policy_ctx *ctx, const char *line, size_t len,
    struct ag_decision *out)
{
	struct ag_sh_node *tree = NULL;
	struct ag_err err;
	enum ag_sh_status st;
	int r;

	memset(out, 0, sizeof(*out));
	ag_err_clear(&err);
	st = ag_sh_parse(line, len, &tree, &err);
	if (st != AG_SH_OK) {
		ag_policy_parse_refusal(st, &err, out);
		ag_sh_free(tree);
		return 0;
	}
	r = decide(ctx, tree, line, len, out);
	second_passes(ctx, tree, line, len, out);
	ag_sh_free(tree);
	return r;
}

void
ag_decision_free(struct ag_decision *d)
{
	if (d == NULL)
		return;
	free(d->cmds);
	free((void *)d->writes);
	free((void *)d->inner);
	ag_arena_free(d->strings);
	d->cmds = NULL;
	d->ncmds = 0;
	d->writes = NULL;
	d->nwrites = 0;
	d->inner = NULL;
	d->ninner = 0;
	d->strings = NULL;
}
