/*
 * rules.c - the profile's allow and deny rules: which rule names a
 * program (by the file it resolves to, or by name for deny rules), what
 * its arguments and subcommand may be, and the refusal that lists what is
 * allowed instead.
 */
#include "agconfig.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/misc.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "policy/walker.h"

#define AG_ALLOWED_SHOWN 60 	/* of the allowed programs, in a refusal */

const char *
ag_walk_rule_id(const struct ag_walker *w, const struct ag_rule *r, int deny, size_t i,
    char *buf, size_t bufsz)
{
	if (r->id != NULL)
		return r->id;
	snprintf(buf, bufsz, "profiles.%s.%s[%zu]", w->prof->name ? w->prof->name : "?",
	    deny ? "deny" : "allow", i);
	return buf;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "cat, git (status|log), grep, ls": built on the first refusal and kept
 * per thread, keyed by the rules' content (cheap to hash, dear to sort).
 */
static __thread struct {
	uint64_t	 key;
	char		*list;
} alcache;

const char *
ag_walk_allowed_list(struct ag_walker *w)
{
	struct ag_strbuf sb;
	char **items;
	size_t i, j, n = 0;
	uint64_t key = 1469598103934665603ULL;

	if (w->allowed_list != NULL)
		return w->allowed_list;
	for (i = 0; i < w->prof->nallow; i++) {
		const struct ag_rule *r = &w->prof->allow[i];

		key = ag_walk_hash(key, r->command ? r->command : "");
		for (j = 0; j < r->subcommands.n; j++)
			key = ag_walk_hash(key, r->subcommands.v[j]);
		key = ag_walk_hash(key, "\n");
	}
	if (gettid() == getpid() && alcache.list != NULL && alcache.key == key)
		return alcache.list;
	items = calloc(w->prof->nallow + 1, sizeof(*items));
	if (items == NULL) {
		w->oom = 1;
		return "";
	}
	for (i = 0; i < w->prof->nallow; i++) {
		const struct ag_rule *r = &w->prof->allow[i];

		ag_strbuf_init(&sb, 512);
		if (r->command == NULL)
			continue;
		ag_strbuf_addstr(&sb, r->command);
		if (r->subcommands.n > 0) {
			ag_strbuf_addstr(&sb, " (");
			for (j = 0; j < r->subcommands.n; j++) {
				if (j)
					ag_strbuf_addch(&sb, '|');
				ag_strbuf_addstr(&sb, r->subcommands.v[j]);
			}
			ag_strbuf_addch(&sb, ')');
		}
		items[n] = ag_strbuf_detach(&sb, NULL);
		if (items[n] != NULL)
			n++;
	}
	qsort(items, n, sizeof(*items), cmp_str);
	ag_strbuf_init(&sb, 1200);
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(items[i], items[i - 1]) == 0)
			continue;
		if (sb.len > 0 && ag_strbuf_addstr(&sb, ", ") < 0)
			break;
		if (ag_strbuf_addstr(&sb, items[i]) < 0) {
			ag_strbuf_reset(&sb);
			break;
		}
	}
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
	if (sb.len == 0)
		ag_strbuf_addstr(&sb, n ? "(too many to list)" : "nothing");
	w->allowed_list = ag_strbuf_detach(&sb, NULL);
	if (w->allowed_list == NULL) {
		w->oom = 1;
		return "";
	}
	/* hand it to the cache; the walker keeps only a borrowed pointer.
	 * Not from another thread (the exec supervisor's): its cache would
	 * be lost when it ends, so the walker frees its own */
	if (gettid() != getpid()) {
		w->allowed_own = 1;
		return w->allowed_list;
	}
	free(alcache.list);
	alcache.list = w->allowed_list;
	alcache.key = key;
	return w->allowed_list;
}

void
ag_walk_refuse_unknown(struct ag_walker *w, const char *name, const char *why)
{
	const char *list = ag_walk_allowed_list(w);
	size_t len = strlen(list), cut, n = 1, i;
	char ex[80], rid[160];

	if (w->prof->unknown == AG_UNKNOWN_ALLOW) {
		/* the caller has applied the deny rules; the developer tier's
		 * kernel holds what it runs and the exec supervisor applies
		 * them again at every exec (config.c allows it nowhere else) */
		snprintf(rid, sizeof(rid), "profiles.%s.unknown",
		    w->prof->name ? w->prof->name : "?");
		ag_walk_allow_as(w, rid, "allowed: '%s' is not listed in profile '%s', "
		    "which has 'unknown: allow'; the kernel sandbox holds it",
		    ag_walk_excerpt(name, ex, sizeof(ex)), w->prof->name ? w->prof->name : "?");
		return;
	}
	/* a refusal is read on every miss: a long list is cut at a program
	 * boundary, with how many there are */
	if (len <= AG_ALLOWED_SHOWN) {
		ag_walk_refuse(w, w->unknown_v, "unknown",
		    "'%s' is not allowed in profile '%s'%s; allowed here: %s",
		    ag_walk_excerpt(name, ex, sizeof(ex)), w->prof->name ? w->prof->name : "?",
		    why ? why : "", list);
		return;
	}
	for (cut = AG_ALLOWED_SHOWN; cut > 0 && strncmp(list + cut, ", ", 2) != 0; cut--)
		;
	for (i = 0; i + 1 < len; i++)
		n += list[i] == ',' && list[i + 1] == ' ';
	ag_walk_refuse(w, w->unknown_v, "unknown",
	    "'%s' is not allowed in profile '%s'%s; allowed here: %.*s, ... (%zu in all)",
	    ag_walk_excerpt(name, ex, sizeof(ex)), w->prof->name ? w->prof->name : "?",
	    why ? why : "", (int)cut, list, n);
}

int
ag_walk_has_nonlit(const struct ag_arg *a, size_t na)
{
	size_t i;

	for (i = 0; i < na; i++)
		if (a[i].lit == NULL)
			return 1;
	return 0;
}

/* Does a rule's command name the same file as (name, real)? */
int
ag_walk_rule_matches(struct ag_walker *w, const struct ag_rule *r, const char *name,
    const char *real, int by_name_only)
{
	const char *base = ag_base_name(name);
	char rr[PATH_MAX];

	if (r->command == NULL || ag_strcmp(r->base, base) != 0)
		return 0;
	if (by_name_only)
		return 1;
	if (real == NULL)
		return 0;
	if (strchr(r->command, '/') == NULL) {
		if (ag_walk_lookup(w->pathenv, r->command, rr, sizeof(rr)) != 0)
			return 0;
	} else if (ag_walk_lookup(NULL, r->command, rr, sizeof(rr)) != 0)
		return 0;
	return strcmp(rr, real) == 0;
}

/*
 * Match an argument against a glob list.  Path-like globs ("/..." or
 * "~/...") also see the argument as the file it names: in a deny list a
 * match of the written, absolute or resolved form counts, so
 * `cat ../../etc/shadow` and a symlink to it are caught by "/etc/shadow*";
 * in an allow list the resolved file must match (from every directory the
 * shell may be in), so a symlink inside an allowed directory does not lead
 * out of it.
 */
static int
arg_matches_mode(struct ag_walker *w, const struct ag_strlist *globs, const char *arg,
    int allow)
{
	size_t i;
	int k;

	for (i = 0; i < globs->n; i++) {
		const char *g = globs->v[i];
		char e[PATH_MAX];
		int all = 1, any = 0;

		if ((g[0] != '/' && g[0] != '~') || arg[0] == '-') {
			if (fnmatch(g, arg, 0) == 0)
				return 1;
			continue;
		}
		if (!allow && fnmatch(g, arg, 0) == 0)
			return 1;
		if (g[0] == '~') {
			if (ag_walk_expand_entry(g, w->home, e, sizeof(e)) < 0)
				continue;
			g = e;
		}
		/* a relative name after a cd to somewhere unknown could be
		 * anything */
		if (arg[0] != '/' && arg[0] != '~' && w->cwd->unknown) {
			if (!allow)
				return 1;
			continue;
		}
		for (k = 0; k < ((arg[0] == '/' || arg[0] == '~') ? 1 : w->cwd->n); k++) {
			char abs[PATH_MAX], res[PATH_MAX];

			if (ag_walk_resolve_in(w, w->cwd->d[k], arg, abs, sizeof(abs), res,
			    sizeof(res)) < 0) {
				if (!allow)
					return 1;
				all = 0;
				break;
			}
			if (fnmatch(g, abs, 0) == 0 || fnmatch(g, res, 0) == 0)
				any = 1;
			if (fnmatch(g, res, 0) != 0)
				all = 0;
		}
		if (!allow && any)
			return 1;
		if (allow && all)
			return 1;
	}
	return 0;
}

static int
arg_matches(struct ag_walker *w, const struct ag_strlist *globs, const char *arg)
{
	return arg_matches_mode(w, globs, arg, 0);
}

/*
 * One element of an argv rule against the word at its position.  In an
 * allow rule an element without glob characters is that word and nothing
 * else (the program gets exactly what the rule says); a pattern is matched
 * as an args glob is, so a pattern for files under /backup does not reach
 * "/backup/../etc".  In a deny rule every spelling of a path counts, as
 * for args.
 */
static int
argv_elem_matches(struct ag_walker *w, const char *g, const char *arg, int allow)
{
	struct ag_strlist one;
	char *v[1];

	if (allow && strpbrk(g, "*?[\\") == NULL)
		return strcmp(g, arg) == 0;
	v[0] = (char *)(uintptr_t)g;
	one.v = v;
	one.n = 1;
	return arg_matches_mode(w, &one, arg, allow);
}

/* 1 when the words after the command name are exactly rule r's argv:
 * as many, each literal and matching the element at its position. */
static int
argv_matches(struct ag_walker *w, const struct ag_rule *r, struct ag_arg *a, size_t na,
    int allow)
{
	size_t i;

	if (na == 0 || na - 1 != r->argv.n)
		return 0;
	for (i = 1; i < na; i++)
		if (a[i].lit == NULL || !argv_elem_matches(w, r->argv.v[i - 1], a[i].lit, allow))
			return 0;
	return 1;
}

/* "tar -x -C /backup -f -": the one form an argv rule allows, for messages */
static const char *
argv_text(const struct ag_rule *r, char *buf, size_t bufsz)
{
	size_t i, len;

	snprintf(buf, bufsz, "%s", r->base);
	for (i = 0; i < r->argv.n && (len = strlen(buf)) + 1 < bufsz; i++)
		snprintf(buf + len, bufsz - len, " %s", r->argv.v[i]);
	return buf;
}

static int
names_same(struct ag_walker *w, const struct ag_rule *r, enum ag_walk_pick how,
    const char *name, const char *real)
{
	if (how == AG_PICK_BUILTIN)
		return r->command != NULL && ag_strcmp(r->command, name) == 0;
	return ag_walk_rule_matches(w, r, name, real, how == AG_PICK_NAME);
}

size_t
ag_walk_pick_rule(struct ag_walker *w, size_t i0, enum ag_walk_pick how, const char *name,
    const char *real, struct ag_arg *a, size_t na)
{
	size_t i;

	if (!w->prof->allow[i0].has_argv || argv_matches(w, &w->prof->allow[i0], a, na, 1))
		return i0;
	for (i = i0 + 1; i < w->prof->nallow; i++) {
		const struct ag_rule *r = &w->prof->allow[i];

		if (names_same(w, r, how, name, real) &&
		    (!r->has_argv || argv_matches(w, r, a, na, 1)))
			return i;
	}
	return i0;
}

/*
 * Walk the tool's global options (from its descriptor p; NULL: none);
 * return the index of the subcommand (or na when none).  Refuses risky options not in allow_options (unless rid
 * is NULL: only looking).  *cdir is set to the -C argument (git), for
 * output paths.
 */
size_t
ag_walk_subcommand(struct ag_walker *w, const struct ag_rule *r, const char *rid,
    const char *base, const struct ag_prog *p, struct ag_arg *a, size_t na,
    const char **cdir, int *bad)
{
	const struct ag_gopt *opts = p != NULL ? p->global_opts : NULL;
	size_t i;
	char ex[80];

	*cdir = NULL;
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;
		const struct ag_gopt *o;
		const char *eq;
		size_t nl;

		if (s == NULL)
			return i;	/* caller refuses non-literals */
		if (i == 1 && s[0] == '+' && p != NULL && (p->flags & AG_PROG_PLUS_TOOLCHAIN))
			continue;
		if (strcmp(s, "--") == 0)
			return i + 1;
		if (s[0] != '-' || s[1] == '\0')
			return i;
		eq = strchr(s, '=');
		nl = eq ? (size_t)(eq - s) : strlen(s);
		for (o = opts; o && o->name; o++)
			if (strlen(o->name) == nl && strncmp(o->name, s, nl) == 0)
				break;
		if (o == NULL || o->name == NULL) {
			/* an attached short option value (-Cdir) is not understood:
			 * treat the option as taking no value and go on; a wrong
			 * guess only makes the subcommand check stricter */
			continue;
		}
		if (rid != NULL && ((o->flags & AG_GO_RISKY) ||
		    ((o->flags & AG_GO_RISKY_SET) && eq != NULL))) {
			char on[64];

			snprintf(on, sizeof(on), "%.*s", (int)nl, s);
			/* an argv rule that writes the option out allows it */
			if (!ag_strlist_contains(&r->allow_options, on) &&
			    !ag_strlist_contains(&r->argv, s)) {
				/* git -c user.name=...: what it means has a way in */
				int ident = strcmp(base, "git") == 0 && strcmp(on, "-c") == 0 &&
				    i + 1 < na && a[i + 1].lit != NULL &&
				    strncmp(a[i + 1].lit, "user.", 5) == 0;

				ag_walk_refuse(w, AG_DENY, rid,
				    "'%s %s' is not allowed: that option changes what %s runs or which configuration it reads (not in allow_options)%s",
				    base, ag_walk_excerpt(s, ex, sizeof(ex)), base, ident ?
				    "; git takes the commit identity from GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL before any user.name: export them, or set them for one command (GIT_AUTHOR_NAME=... git commit ...)" : "");
				*bad = 1;
			}
		}
		if ((o->flags & AG_GO_VAL) && eq == NULL) {
			if (i + 1 >= na) {
				if (rid != NULL)
					ag_walk_refuse(w, AG_DENY, rid, "'%s %s' needs a value", base, o->name);
				*bad = 1;
				return na;
			}
			/* -C DIR: later relative paths are inside DIR; "" marks a
			 * directory the gateway cannot tell (not literal, or a
			 * relative -C after another) */
			if (o->flags & AG_GO_CHDIR) {
				const char *d = a[i + 1].lit;

				if (d == NULL || (*cdir != NULL && d[0] != '/'))
					*cdir = "";
				else
					*cdir = d;
			}
			i++;
		}
	}
	return na;
}

/*
 * Does deny rule d's subcommand list cover this command?  1 yes, 0 no,
 * -1 the gateway cannot tell (a word it cannot see before the subcommand,
 * or xargs/find supplying the words where the subcommand would be), -2
 * the subcommand may be a user-defined alias (*alias: the word).
 *
 * Unlike find_subcommand, it errs towards "yes": an option the gateway
 * does not know may take the next word as its value (`make -C dir
 * install`, `npm --prefix x publish`), so that word and the one after
 * it are both taken as the subcommand; for a program whose every operand
 * does something (make's targets, gradle's tasks) each one is looked at.
 */
/* The rule lists s, or an action s performs (git send-pack is a push,
 * npm pub is npm publish). */
static int
sub_listed(const struct ag_rule *d, const struct ag_prog *p, const char *s)
{
	size_t i;

	for (i = 0; i < d->subcommands.n; i++)
		if (ag_prog_spells(p, s, d->subcommands.v[i]))
			return 1;
	return 0;
}

static int
deny_subcommand(const struct ag_rule *d, const char *base, struct ag_arg *a, size_t na,
    int flags, const char **alias)
{
	const struct ag_prog *p = ag_prog_lookup(base);
	const struct ag_gopt *opts = p != NULL ? p->global_opts : NULL, *o;
	int all = p != NULL && (p->flags & AG_PROG_SUBS_ALL), maybe_value = 0, operands = 0;
	size_t i;

	for (i = 1; i < na; i++) {
		const char *s = a[i].lit, *eq;
		size_t nl;

		if (s == NULL)
			return -1;
		/* rustup's toolchain word: cargo +nightly publish */
		if (i == 1 && s[0] == '+' && p != NULL && (p->flags & AG_PROG_PLUS_TOOLCHAIN))
			continue;
		if (!operands && strcmp(s, "--") == 0) {
			if (all) {
				operands = 1;
				continue;
			}
			if (i + 1 >= na)
				break;
			if (a[i + 1].lit == NULL)
				return -1;
			return sub_listed(d, p, a[i + 1].lit) ? 1 : 0;
		}
		if (operands || s[0] != '-' || s[1] == '\0') {
			if (sub_listed(d, p, s))
				return 1;
			if (all)
				continue;
			if (ag_prog_maybe_alias(p, s)) {
				/* cargo reads [alias] from every .cargo/config.toml
				 * up the tree, --config and CARGO_ALIAS_*: only its
				 * own commands are what they say */
				*alias = s;
				return -2;
			}
			if (maybe_value) {	/* perhaps the value: look on */
				maybe_value = 0;
				continue;
			}
			return 0;
		}
		eq = strchr(s, '=');
		nl = eq ? (size_t)(eq - s) : strlen(s);
		for (o = opts; o && o->name; o++)
			if (strlen(o->name) == nl && strncmp(o->name, s, nl) == 0)
				break;
		if (o != NULL && o->name != NULL) {
			maybe_value = 0;
			if ((o->flags & AG_GO_VAL) && eq == NULL) {
				if (++i >= na)
					break;
				if (a[i].lit == NULL)
					return -1;
			}
			continue;
		}
		maybe_value = eq == NULL;
	}
	/* no subcommand among the words: none, or the one xargs appends */
	return (flags & AG_CF_UNKNOWN_TAIL) ? -1 : 0;
}

/* Deny rules: 1 when one refuses the command (refusal recorded). */
/*
 * Whether a file the simple command being judged reads through an input
 * redirection (<, <>, any fd) matches the deny rule's argument globs: 1
 * yes, 0 no, -1 when a source is not a literal name.
 */
static int
redir_source_hit(struct ag_walker *w, const struct ag_rule *d)
{
	size_t i;
	int hit = 0;

	for (i = 0; i < w->nredirs && !hit; i++) {
		const struct ag_sh_redir *r = &w->redirs[i];
		char *src;

		if (r->op != AG_SH_R_IN && r->op != AG_SH_R_RDWR)
			continue;
		if ((src = ag_sh_word_literal(r->target, NULL)) == NULL &&
		    (src = ag_walk_tilde_arg(w, r->target)) == NULL)
			return -1;
		hit = (d->args.n && arg_matches(w, &d->args, src)) ||
		    (d->deny_args.n && arg_matches(w, &d->deny_args, src));
		free(src);
	}
	return hit;
}

/* The first argument a rule's subcommands name, for a message; "" if none. */
static const char *
subcommand_shown(const struct ag_rule *d, const char *base, struct ag_arg *a, size_t na)
{
	const struct ag_prog *p = ag_prog_lookup(base);
	size_t i;

	for (i = 1; i < na; i++)
		if (a[i].lit != NULL && sub_listed(d, p, a[i].lit))
			return a[i].lit;
	return "";
}

int
ag_walk_deny_hit(struct ag_walker *w, const char *base, struct ag_arg *a, size_t na, int flags)
{
	char ridbuf[160], ex[80];
	const char *rid = NULL;
	size_t i;
	/* what the line does not show is judged at the exec, with the words
	 * the program really gets (a builtin has no exec) */
	int exec_judges = ag_walk_exec_judged(w) && !ag_walk_builtin_flags(base);

	for (i = 0; i < w->prof->ndeny; i++) {
		const struct ag_rule *d = &w->prof->deny[i];
		int hit = 0;
		size_t j;

		if (d->command == NULL || d->base[0] != base[0] || strcmp(d->base, base) != 0)
			continue;
		rid = ag_walk_rule_id(w, d, 1, i, ridbuf, sizeof(ridbuf));
		if (ag_rule_is_plain(d))
			hit = 1;
		if (!hit && d->has_argv) {
			/* the words must be seen to be compared; xargs would
			 * add some */
			if (ag_walk_has_nonlit(a, na) || (flags & AG_CF_UNKNOWN_TAIL)) {
				if (exec_judges)
					continue;
				ag_walk_refuse(w, AG_DENY, rid,
				    "'%s' has a deny rule in profile '%s' on its exact arguments, and an argument the gateway cannot see; use literal arguments",
				    base, w->prof->name ? w->prof->name : "?");
				return 1;
			}
			if (!argv_matches(w, d, a, na, 0))
				continue;
			hit = 1;
		}
		if (!hit && d->args.n == 0 && d->deny_args.n == 0) {
			/* subcommands only: what follows the subcommand cannot
			 * change which subcommand runs */
			const char *alias = NULL;
			int r = deny_subcommand(d, base, a, na, flags, &alias);

			if (r == -2) {
				const struct ag_prog *p = ag_prog_lookup(base);
				const char *note = p != NULL ? p->alias_note : NULL;
				const char *shown = ag_walk_excerpt(alias, ex, sizeof(ex));

				/* git's guess runs inside git: no installed
				 * subcommand to name (there, the note says why) */
				if (note != NULL)
					ag_walk_refuse(w, AG_DENY, rid,
					    "'%s %s' is not one of %s's own commands, so it may be a user-defined alias of what %s denies; %s; use %s's own command name",
					    base, shown, base, d->label ? d->label : rid, note, base);
				else
					ag_walk_refuse(w, AG_DENY, rid,
					    "'%s %s' is not one of %s's own commands, so it may be a user-defined alias of what %s denies (an alias in a config file may stand in for an installed subcommand); use %s's own command name, or run the installed subcommand directly as %s would: %s-%s %s ...",
					    base, shown, base, d->label ? d->label : rid, base, base, base,
					    shown, shown);
				return 1;
			}
			if (r == -1 && exec_judges)
				continue;
			if (r < 0) {
				ag_walk_refuse(w, AG_DENY, rid, ag_walk_has_nonlit(a, na) ?
				    "'%s' has deny rules in profile '%s' and an argument the gateway cannot see before its subcommand; use literal arguments" :
				    "'%s' has deny rules in profile '%s' on its subcommand, which xargs or find would supply; give the subcommand literally",
				    base, w->prof->name ? w->prof->name : "?");
				return 1;
			}
			if (r == 0)
				continue;
			hit = 1;
		}
		if (!hit && (ag_walk_has_nonlit(a, na) || (flags & AG_CF_UNKNOWN_TAIL))) {
			if (exec_judges)
				continue;
			ag_walk_refuse(w, AG_DENY, rid,
			    "'%s' has deny rules in profile '%s' and an argument the gateway cannot see; use literal arguments",
			    base, w->prof->name ? w->prof->name : "?");
			return 1;
		}
		for (j = 1; !hit && j < na; j++) {
			if (a[j].lit == NULL)
				continue;
			if (d->args.n && arg_matches(w, &d->args, a[j].lit))
				hit = 1;
			if (d->deny_args.n && arg_matches(w, &d->deny_args, a[j].lit))
				hit = 1;
		}
		if (!hit && (d->args.n || d->deny_args.n)) {
			/* `cat < /etc/shadow` reads what `cat /etc/shadow` would */
			int r = redir_source_hit(w, d);

			if (r < 0) {
				ag_walk_refuse(w, AG_DENY, rid,
				    "'%s' has deny rules in profile '%s' and reads from a file the gateway cannot see ('<' with an expansion); use a literal file name",
				    base, w->prof->name ? w->prof->name : "?");
				return 1;
			}
			hit = r;
		}
		if (!hit && d->subcommands.n) {
			const char *alias = NULL;

			hit = deny_subcommand(d, base, a, na, flags, &alias) == 1;
		}
		if (hit) {
			/* the same words live and in explain: the program, the
			 * subcommand the rule names, and the rule */
			char what[160];

			const char *sub = subcommand_shown(d, base, a, na);

			snprintf(what, sizeof(what), "%s%s%s", base, sub[0] ? " " : "", sub);
			ag_walk_refuse(w, AG_DENY, rid, "'%s' is denied by %s",
			    ag_walk_excerpt(what, ex, sizeof(ex)), d->label ? d->label : rid);
			return 1;
		}
	}
	return 0;
}

/*
 * What an allow rule's args and deny_args say about the arguments, for
 * programs and builtins alike.  1 when they hold; 0 after refusing.
 */
int
ag_walk_rule_args_ok(struct ag_walker *w, const struct ag_rule *r, const char *rid,
    const char *base, struct ag_arg *a, size_t na, int flags)
{
	char ex[80];
	size_t i;

	if ((flags & AG_CF_UNKNOWN_TAIL) && !ag_rule_is_plain(r)) {
		ag_walk_refuse(w, AG_DENY, rid,
		    "'%s' has argument rules in profile '%s', but xargs/find would add arguments the gateway cannot see",
		    base, w->prof->name ? w->prof->name : "?");
		return 0;
	}
	if (!ag_rule_is_plain(r) && ag_walk_has_nonlit(a, na)) {
		for (i = 1; i < na && a[i].lit; i++)
			;
		ag_walk_refuse(w, AG_DENY, rid,
		    "'%s' has argument rules in profile '%s', so its arguments must be literal words, not '%s'",
		    base, w->prof->name ? w->prof->name : "?",
		    ag_walk_excerpt(i < na && a[i].w ? a[i].w->raw : "", ex, sizeof(ex)));
		return 0;
	}
	if (r->has_argv && !argv_matches(w, r, a, na, 1)) {
		char form[400], shown[400];

		argv_text(r, form, sizeof(form));
		ag_walk_refuse(w, AG_DENY, rid,
		    "'%s' is allowed in profile '%s' only with the exact arguments of %s: '%s'%s",
		    base, w->prof->name ? w->prof->name : "?", r->label ? r->label : rid,
		    ag_utf8_visible(form, strlen(form), 240, shown, sizeof(shown)),
		    r->argv.n == 0 ? " (no arguments)" : "");
		return 0;
	}
	for (i = 1; i < na; i++) {
		if (a[i].lit == NULL)
			continue;
		if (r->deny_args.n && arg_matches(w, &r->deny_args, a[i].lit)) {
			ag_walk_refuse(w, AG_DENY, rid, "argument '%s' of '%s' is denied in profile '%s'",
			    ag_walk_excerpt(a[i].lit, ex, sizeof(ex)), base,
			    w->prof->name ? w->prof->name : "?");
			return 0;
		}
		if (r->args.n && !arg_matches_mode(w, &r->args, a[i].lit, 1)) {
			ag_walk_refuse(w, AG_DENY, rid,
			    "argument '%s' of '%s' is not among the arguments profile '%s' allows",
			    ag_walk_excerpt(a[i].lit, ex, sizeof(ex)), base,
			    w->prof->name ? w->prof->name : "?");
			return 0;
		}
	}
	return 1;
}
