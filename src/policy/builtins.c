/*
 * builtins.c - bash builtins: which run without a rule (cd, echo, test,
 * ...), which need one, and what even an allowed builtin may not do
 * (printf -v, declare -n, read -e, hash -p, ...).
 */
#include "agconfig.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/misc.h"
#include "policy/prog.h"
#include "policy/walker.h"

struct builtin;

/* One builtin's check: what it may not do even when allowed. */
typedef void (*builtin_fn)(struct ag_walker *w, const struct builtin *b, struct ag_arg *a,
    size_t na, int flags);

struct builtin {
	const char	*name;
	unsigned	 flags;		/* AG_BI_* (walker.h) and the ones below */
	builtin_fn	 check;
};

enum {
	BI_HARMLESS = 0x100,	/* allowed unless a profile denies it (design.md) */
	BI_RUNS = 0x200,	/* runs the next word, judged as a command of its own
				 * before any rule (command, builtin) */
	BI_UNRULED = 0x400,	/* without a rule its check decides, instead of a
				 * refusal; with one it is allowed as named (set) */
	BI_EXPORT = 0x800,	/* export: declare's check, for the environment */
	BI_READ = 0x1000,	/* read: mapfile's check, with read's options */
	BI_CODE = 0x2000,	/* runs or defines code the line does not show
				 * (eval, source, trap, alias ...) */
};

static const struct ag_rule *
find_builtin_rule(struct ag_walker *w, const char *name, size_t *idx)
{
	size_t i;

	for (i = 0; i < w->prof->nallow; i++)
		if (w->prof->allow[i].command != NULL &&
		    ag_strcmp(w->prof->allow[i].command, name) == 0) {
			*idx = i;
			return &w->prof->allow[i];
		}
	return NULL;
}

/* declare/typeset/local/export/readonly NAME[=VALUE]... */
static void
check_declare(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	const char *name = b->name;
	int exporting = (b->flags & BI_EXPORT) != 0;
	size_t i;
	int opts_done = 0;
	char ex[80];

	for (i = 1; i < na; i++) {
		const struct ag_sh_word *wd = a[i].w;
		const char *s = a[i].lit;
		char nm[256];
		size_t nl = 0;

		if (!opts_done && s != NULL && (s[0] == '-' || s[0] == '+') && s[1] != '\0') {
			if (strcmp(s, "--") == 0) {
				opts_done = 1;
				continue;
			}
			if (strpbrk(s + 1, "fF") != NULL) {
				ag_walk_refuse(w, AG_DENY, "builtin:functions",
				    "'%s %s' defines, exports or prints functions; not allowed",
				    name, s);
				return;
			}
			if (strpbrk(s + 1, "ni") != NULL && !exporting) {
				ag_walk_refuse(w, AG_DENY, "builtin:declare",
				    "'%s %s' is not allowed: namerefs (-n) and integer variables (-i) make later assignments evaluate or redirect values",
				    name, s);
				return;
			}
			continue;
		}
		opts_done = 1;
		/* the name part must be literal even when the value is not:
		 * join the leading literal parts (quoting does not matter to a
		 * builtin's argument) */
		{
			char pre[512];
			size_t pl = 0, k;
			int whole = 1;
			const char *eq;

			for (k = 0; k < wd->nparts; k++) {
				const struct ag_sh_part *pp = &wd->parts[k];

				if (pp->type != AG_SH_P_LIT) {
					whole = 0;
					break;
				}
				if (pl + pp->len >= sizeof(pre)) {
					whole = 0;	/* too long to judge: the name check fails */
					break;
				}
				memcpy(pre + pl, pp->text, pp->len);
				pl += pp->len;
			}
			pre[pl] = '\0';
			while (nl < pl && (isalnum((unsigned char)pre[nl]) || pre[nl] == '_'))
				nl++;
			if (nl == pl && !whole)
				nl = 0;		/* NAME$x: the name itself is not literal */
			else if (nl < pl && pre[nl] != '=' && pre[nl] != '[' &&
			    !(pre[nl] == '+' && nl + 1 < pl && pre[nl + 1] == '='))
				nl = 0;
			if (nl == 0 || nl >= sizeof(nm) || !ag_sh_is_name(pre, nl)) {
				ag_walk_refuse(w, AG_DENY, "literal",
				    "'%s' needs literal variable names, not '%s'", name,
				    ag_walk_excerpt(wd->raw, ex, sizeof(ex)));
				return;
			}
			memcpy(nm, pre, nl);
			nm[nl] = '\0';
			if (!ag_walk_var_name(w, nm, exporting ? "exporting" : "setting"))
				return;
			if (pre[nl] == '[') {
				const char *cl = memchr(pre + nl, ']', pl - nl);

				if (cl == NULL) {
					ag_walk_refuse(w, AG_DENY, "arith", "array subscripts must be literal");
					return;
				}
				ag_walk_arith_scan(w, pre + nl + 1, (size_t)(cl - pre - nl - 1));
			}
			eq = memchr(pre, '=', pl);
			/* declare -a a='(...)' is parsed again as a compound
			 * assignment, and so may be an expanded value: code the
			 * line does not show, like eval's, which the kernel and
			 * the exec judge hold where every exec is judged and no
			 * deny rule names a builtin (`local v=$1`) */
			if (!exporting && eq != NULL &&
			    (eq[1] == '(' || (eq + 1 == pre + pl && !whole)) &&
			    !(ag_walk_exec_judged(w) && !ag_walk_denies_builtin(w))) {
				ag_walk_refuse(w, AG_DENY, "builtin:declare",
				    "'%s NAME=(...)' in a quoted or expanded value is parsed again by bash; use NAME=(...) directly",
				    name);
				return;
			}
		}
		if (s != NULL) {
			const char *eq = strchr(s, '=');

			if (eq && ag_walk_is_int_text(eq + 1, strlen(eq + 1)) && eq[-1] != '+')
				ag_walk_mark_int(w, nm, nl);
		}
	}
}

/* test and [ */
static void
check_test(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	size_t i;
	char ex[80];

	/* what -v's subscript runs is code the line does not show, like
	 * eval's: the kernel holds it unless a deny rule names a builtin */
	if (ag_walk_exec_judged(w) && !ag_walk_denies_builtin(w))
		return;
	for (i = 1; i < na; i++) {
		const struct ag_sh_word *wd = a[i].w;
		size_t k;

		/* unquoted expansions split into any number of words, one of
		 * which may become -v */
		for (k = 0; k < wd->nparts; k++) {
			const struct ag_sh_part *p = &wd->parts[k];

			if (p->quote == AG_SH_Q_NONE && (p->type == AG_SH_P_PARAM ||
			    p->type == AG_SH_P_CMDSUB || p->type == AG_SH_P_ARITH ||
			    p->type == AG_SH_P_GLOB || p->type == AG_SH_P_BRACE)) {
				ag_walk_refuse(w, AG_DENY, "builtin:test",
				    "'%s' with an unquoted expansion ('%s') is not allowed: quote it (\"$x\")",
				    b->name, ag_walk_excerpt(wd->raw, ex, sizeof(ex)));
				return;
			}
		}
		if ((a[i].lit == NULL || strcmp(a[i].lit, "-v") == 0) && i + 1 < na) {
			const char *nx = a[i + 1].lit;

			if (nx == NULL) {
				ag_walk_refuse(w, AG_DENY, "builtin:test",
				    "'%s' with '-v' (or a word that may be '-v') before a non-literal word is not allowed: bash evaluates a subscript in it",
				    b->name);
				return;
			}
			if (nx != NULL && strchr(nx, '[') != NULL && !ag_walk_name_text(w, nx))
				return;
		}
	}
}

/*
 * `set`: the options agents put at the top of every script only make the
 * shell stricter or louder (-e -u -x -v -E, -o pipefail ...), on or off.
 * The rest changes how later words are read or what runs, which the
 * decision has already assumed (-k, -a, -f, +B, -h, -H, -o posix, -T, -P,
 * -n, which would also stop the runner's own capture of the environment),
 * or sets the positional parameters (`set --`, `set x`), so it stays
 * refused.  Bare `set`, `set -o` and `set +o` only print: the variables are
 * the filtered environment that `env` shows too and what the line itself
 * set.  All of it lasts for the one command line (each runs in a fresh
 * runner).
 */
static void
check_set(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	static const char *const names[] = {
		"errexit", "nounset", "xtrace", "verbose", "errtrace", "pipefail", NULL
	};
	const char *letters = "euxvE";
	char ex[80];
	size_t i;

	for (i = 1; i < na; i++) {
		const char *o = a[i].lit, *c;
		int want_name = 0;

		if (o == NULL) {
			ag_walk_refuse(w, AG_DENY, "builtin:set", "'set' needs literal options");
			return;
		}
		if ((o[0] != '-' && o[0] != '+') || o[1] == '\0' || strcmp(o, "--") == 0) {
			ag_walk_refuse(w, AG_DENY, "builtin:set",
			    "'set %s' sets the positional parameters; only shell options (set -euo pipefail) are allowed",
			    ag_walk_excerpt(o, ex, sizeof(ex)));
			return;
		}
		for (c = o + 1; *c != '\0'; c++) {
			if (*c == 'o')
				want_name++;
			else if (strchr(letters, *c) == NULL) {
				ag_walk_refuse(w, AG_DENY, "builtin:set",
				    "'set %c%c' changes how the shell reads or runs commands; allowed: set -e -u -x -v -E -o pipefail (errexit, nounset, xtrace, verbose, errtrace)",
				    o[0], *c);
				return;
			}
		}
		for (; want_name > 0; want_name--) {
			if (i + 1 >= na)
				break;	/* `set -o` alone lists the options */
			i++;
			if (a[i].lit == NULL || !ag_walk_in_list(names, a[i].lit)) {
				ag_walk_refuse(w, AG_DENY, "builtin:set",
				    "'set -o %s' is not allowed; allowed: pipefail, errexit, nounset, xtrace, verbose, errtrace",
				    ag_walk_excerpt(a[i].lit ? a[i].lit : a[i].w->raw, ex, sizeof(ex)));
				return;
			}
		}
	}
}

/* command [-pvV] NAME ...: NAME without functions; -v/-V only look up */
static void
check_command(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	size_t k = 1;
	char ex[80];

	for (; k < na && a[k].lit && a[k].lit[0] == '-' && a[k].lit[1]; k++) {
		if (strcmp(a[k].lit, "--") == 0) {
			k++;
			break;
		}
		if (strchr(a[k].lit, 'v') || strchr(a[k].lit, 'V'))
			return;		/* lookup only */
		if (strchr(a[k].lit, 'p')) {
			ag_walk_refuse(w, AG_DENY, "builtin:command",
			    "'command -p' searches a default PATH the profile does not set");
			return;
		}
	}
	if (k >= na)
		return;
	if (a[k].lit == NULL) {
		ag_walk_refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
		    ag_walk_excerpt(a[k].w->raw, ex, sizeof(ex)));
		return;
	}
	ag_walk_nested(w, a + k, na - k, flags | AG_CF_NO_FUNCS);
}

/* builtin NAME ...: NAME must be a builtin */
static void
check_builtin(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	char ex[80];

	if (na < 2)
		return;
	if (a[1].lit == NULL) {
		ag_walk_refuse(w, AG_DENY, "literal", "builtin name must be a literal word, not '%s'",
		    ag_walk_excerpt(a[1].w->raw, ex, sizeof(ex)));
		return;
	}
	ag_walk_nested(w, a + 1, na - 1, flags | AG_CF_BUILTIN_ONLY);
}

static void
check_printf(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	if (na > 1 && (a[1].lit == NULL || strncmp(a[1].lit, "-v", 2) == 0)) {
		ag_walk_refuse(w, AG_DENY, "builtin:printf",
		    "'printf -v' (or a non-literal first argument, which could become -v) assigns a variable; not allowed");
	}
}

static void
check_unset(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	size_t i;

	for (i = 1; i < na; i++) {
		if (a[i].lit == NULL) {
			ag_walk_refuse(w, AG_DENY, "literal", "'unset' needs literal names");
			return;
		}
		if (strcmp(a[i].lit, "-f") == 0 || a[i].lit[0] == '-')
			continue;
		if (strchr(a[i].lit, '[') != NULL) {
			ag_walk_name_text(w, a[i].lit);
			continue;
		}
		ag_walk_var_name(w, a[i].lit, "unsetting");
	}
}

/* cd and pushd: where the shell goes, for the paths after them */
static void
check_cd(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	const char *t = NULL;
	int known = 1, physical = 0, is_pushd = b->name[0] == 'p';
	size_t i;

	for (i = 1; i < na; i++) {
		const char *o = a[i].lit;

		if (o == NULL) {
			char *p = ag_walk_word_path(a[i].w);

			if (p == NULL)
				known = 0;
			else {
				t = ag_walk_strdup(w, p);
				free(p);
			}
			break;
		}
		if (strcmp(o, "--") == 0) {
			if (i + 1 < na) {
				t = a[i + 1].lit;
				known = t != NULL;
			}
			break;
		}
		if (o[0] == '-' && o[1] != '\0') {
			if (is_pushd && strcmp(o, "-n") == 0) {
				/* only adds to the stack: no cd */
				w->cd_ok = NULL;
				return;
			}
			/* cd -L -P -e -@ (the last of -L/-P counts); pushd -N
			 * rotates the stack */
			if (is_pushd || strspn(o + 1, "LPe@") != strlen(o + 1)) {
				known = 0;
				break;
			}
			for (o++; *o != '\0'; o++)
				if (*o == 'P' || *o == 'L')
					physical = *o == 'P';
			continue;
		}
		t = o;
		break;
	}
	/* bare cd goes home; bare pushd swaps with the stack */
	if (t == NULL && known && i >= na && !is_pushd)
		t = w->home;
	if (t == NULL || strcmp(t, "-") == 0 || t[0] == '+' ||
	    ag_walk_env(w, "CDPATH") != NULL)
		known = 0;
	ag_walk_cd(w, known ? t : NULL, physical);
}

static void
check_popd(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	ag_walk_cd(w, NULL, 0);
}

/* read and mapfile/readarray/getopts: the names they assign, and no
 * readline (read -e) or callback (mapfile -C) */
static void
check_read(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	const char *name = b->name;
	int is_read = (b->flags & BI_READ) != 0;
	size_t i;

	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL) {
			ag_walk_refuse(w, AG_DENY, "literal", "'%s' needs literal arguments", name);
			return;
		}
		if (s[0] == '-' && s[1] != '\0') {
			const char *takes = is_read ? "adinNptu" : "dnOsuc";
			size_t j;

			/* flags together as bash takes them: -ra NAME, -rd ''
			 * (a flag with a value takes the rest, or the next word) */
			for (j = 1; s[j] != '\0'; j++) {
				const char *v;

				if ((is_read && s[j] == 'e') || (!is_read && s[j] == 'C')) {
					ag_walk_refuse(w, AG_DENY,
					    is_read ? "builtin:read" : "builtin:mapfile",
					    "'%s %s' can run commands (readline or a callback)", name, s);
					return;
				}
				if (strchr(takes, s[j]) == NULL)
					continue;
				v = s[j + 1] != '\0' ? s + j + 1 : i + 1 < na ? a[++i].lit : "";
				/* read -a NAME assigns an array */
				if (is_read && s[j] == 'a') {
					if (v == NULL) {
						ag_walk_refuse(w, AG_DENY, "literal",
						    "'read -a' needs a literal array name");
						return;
					}
					if (!ag_walk_var_name(w, v, "setting"))
						return;
				}
				break;
			}
			continue;
		}
		ag_walk_var_name(w, s, "setting");
	}
}

static void
check_let(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	size_t i;

	for (i = 1; i < na; i++)
		ag_walk_word(w, a[i].w, AG_WORD_ARITH);
}

/* hash and enable: -p/-f change which file a command name runs */
static void
check_hash(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	char rule[64];
	size_t i;

	for (i = 1; i < na; i++)
		if (a[i].lit == NULL || (a[i].lit[0] == '-' &&
		    strpbrk(a[i].lit, "pf") != NULL)) {
			snprintf(rule, sizeof(rule), "builtin:%s", b->name);
			ag_walk_refuse(w, AG_DENY, rule,
			    "'%s -p/-f' changes which file a command name runs", b->name);
			return;
		}
}

/* exec CMD: CMD judged as a command of its own */
static void
check_exec(struct ag_walker *w, const struct builtin *b, struct ag_arg *a, size_t na,
    int flags)
{
	if (na > 1)
		ag_walk_inner(w, &ag_prog_exec, b->name, a, na, flags);
}

/* Every bash builtin, sorted (strcmp order) for bsearch on every command. */
static const struct builtin builtins[] = {
	{ ".", AG_BI_BUILTIN | BI_CODE, NULL },
	{ ":", AG_BI_BUILTIN | BI_HARMLESS, NULL },
	{ "[", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, check_test },
	{ "alias", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "bg", AG_BI_BUILTIN, NULL },
	{ "bind", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "break", AG_BI_BUILTIN, NULL },
	{ "builtin", AG_BI_BUILTIN | BI_RUNS, check_builtin },
	{ "caller", AG_BI_BUILTIN, NULL },
	{ "cd", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_CD | AG_BI_CD_ARG, check_cd },
	{ "command", AG_BI_BUILTIN | BI_RUNS, check_command },
	{ "compgen", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "complete", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "compopt", AG_BI_BUILTIN, NULL },
	{ "continue", AG_BI_BUILTIN, NULL },
	{ "declare", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_declare },
	{ "dirs", AG_BI_BUILTIN | BI_HARMLESS, NULL },
	{ "disown", AG_BI_BUILTIN, NULL },
	{ "echo", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, NULL },
	{ "enable", AG_BI_BUILTIN | BI_CODE, check_hash },
	{ "eval", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "exec", AG_BI_BUILTIN, check_exec },
	{ "exit", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_EXIT, NULL },
	{ "export", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_ASSIGNS | BI_EXPORT, check_declare },
	{ "false", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, NULL },
	{ "fc", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "fg", AG_BI_BUILTIN, NULL },
	{ "getopts", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_read },
	{ "hash", AG_BI_BUILTIN, check_hash },
	{ "help", AG_BI_BUILTIN, NULL },
	{ "history", AG_BI_BUILTIN, NULL },
	{ "jobs", AG_BI_BUILTIN, NULL },
	{ "kill", AG_BI_BUILTIN, NULL },
	{ "let", AG_BI_BUILTIN, check_let },
	{ "local", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_declare },
	{ "logout", AG_BI_BUILTIN, NULL },
	{ "mapfile", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_read },
	{ "popd", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_CD, check_popd },
	{ "printf", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN | AG_BI_ASSIGNS, check_printf },
	{ "pushd", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_CD | AG_BI_CD_ARG, check_cd },
	{ "pwd", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, NULL },
	{ "read", AG_BI_BUILTIN | AG_BI_ASSIGNS | BI_READ, check_read },
	{ "readarray", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_read },
	{ "readonly", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_declare },
	{ "return", AG_BI_BUILTIN | AG_BI_EXIT, NULL },
	{ "set", AG_BI_BUILTIN | BI_UNRULED, check_set },
	{ "shift", AG_BI_BUILTIN, NULL },
	{ "shopt", AG_BI_BUILTIN, NULL },
	{ "source", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "suspend", AG_BI_BUILTIN, NULL },
	{ "test", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, check_test },
	{ "times", AG_BI_BUILTIN, NULL },
	{ "trap", AG_BI_BUILTIN | BI_CODE, NULL },
	{ "true", AG_BI_BUILTIN | BI_HARMLESS | AG_BI_TWIN, NULL },
	{ "type", AG_BI_BUILTIN, NULL },
	{ "typeset", AG_BI_BUILTIN | AG_BI_ASSIGNS, check_declare },
	{ "ulimit", AG_BI_BUILTIN, NULL },
	{ "umask", AG_BI_BUILTIN, NULL },
	{ "unalias", AG_BI_BUILTIN, NULL },
	{ "unset", AG_BI_BUILTIN | BI_HARMLESS, check_unset },
	{ "wait", AG_BI_BUILTIN, NULL },
};

static int
cmp_builtin(const void *k, const void *e)
{
	return ag_strcmp((const char *)k, ((const struct builtin *)e)->name);
}

static const struct builtin *
builtin_lookup(const char *name)
{
	return bsearch(name, builtins, sizeof(builtins) / sizeof(builtins[0]),
	    sizeof(builtins[0]), cmp_builtin);
}

unsigned
ag_walk_builtin_flags(const char *name)
{
	const struct builtin *b = builtin_lookup(name);

	return b != NULL ? b->flags & AG_BI_PUBLIC : 0;
}

/*
 * With 'unknown: allow' (developer tier only) a builtin no rule names runs
 * as an unlisted program does: what it starts is held by the kernel and
 * judged at exec.  What the kernel cannot see is a builtin, so when a deny
 * rule names one, the builtins that run code the line does not show stay
 * refused: they could hide it.
 */
static int
unknown_allows(struct ag_walker *w, const struct builtin *b)
{
	size_t i;

	if (w->prof->unknown != AG_UNKNOWN_ALLOW)
		return 0;
	if (!(b->flags & BI_CODE))
		return 1;
	for (i = 0; i < w->prof->ndeny; i++)
		if (w->prof->deny[i].command != NULL &&
		    builtin_lookup(w->prof->deny[i].base) != NULL) {
			ag_walk_refuse(w, AG_DENY, "builtin:code",
			    "'%s' runs code the gateway cannot see, and profile '%s' denies the builtin '%s', which the kernel cannot hold",
			    b->name, w->prof->name ? w->prof->name : "?", w->prof->deny[i].base);
			return -1;
		}
	return 1;
}

void
ag_walk_builtin(struct ag_walker *w, const char *name, struct ag_arg *a, size_t na, int flags)
{
	const struct builtin *b = builtin_lookup(name);
	const struct ag_rule *r;
	size_t ridx = 0;
	char ridbuf[160];
	int u;

	ag_walk_set_path(w, w->cur, "builtin");
	if (b == NULL)
		return;		/* the caller asked ag_walk_builtin_flags first */
	if (b->flags & BI_RUNS) {
		b->check(w, b, a, na, flags);
		return;
	}
	if ((r = find_builtin_rule(w, name, &ridx)) != NULL) {
		ridx = ag_walk_pick_rule(w, ridx, AG_PICK_BUILTIN, name, NULL, a, na);
		r = &w->prof->allow[ridx];
	}
	if (r == NULL && (b->flags & BI_UNRULED)) {
		b->check(w, b, a, na, flags);
		return;
	}
	if (r == NULL && !(b->flags & BI_HARMLESS) && (u = unknown_allows(w, b)) <= 0) {
		char rule[64];

		if (u < 0)
			return;
		snprintf(rule, sizeof(rule), "builtin:%s", name);
		ag_walk_refuse(w, AG_DENY, rule,
		    "'%s' is a shell builtin that is not allowed in profile '%s' (it can run code, change the shell, or hide what runs); allowed here: %s",
		    name, w->prof->name ? w->prof->name : "?", ag_walk_allowed_list(w));
		return;
	}
	if (r != NULL) {
		const char *rid = ag_walk_rule_id(w, r, 0, ridx, ridbuf, sizeof(ridbuf));

		if (!ag_walk_rule_args_ok(w, r, rid, name, a, na, flags))
			return;
		/* audited under the rule that let it run, as a program is */
		if (w->cur >= 0 && w->cmds[w->cur].rule == NULL)
			w->cmds[w->cur].rule = ag_walk_strdup(w, rid);
	}
	/* what every allowed builtin still may not do */
	if (b->check != NULL && !(b->flags & BI_UNRULED))
		b->check(w, b, a, na, flags);
	if (r == NULL && !(b->flags & BI_HARMLESS)) {
		snprintf(ridbuf, sizeof(ridbuf), "profiles.%s.unknown",
		    w->prof->name ? w->prof->name : "?");
		ag_walk_allow_as(w, ridbuf, "allowed: the builtin '%s' is not listed in profile "
		    "'%s', which has 'unknown: allow'", name, w->prof->name ? w->prof->name : "?");
	}
}
