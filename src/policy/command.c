/*
 * command.c - one simple command: a function, a builtin or a program; the
 * program's file, its deny and allow rules, and what its descriptor
 * (prog.h) knows about it: the global options before its subcommand, the
 * files it writes (checked like redirections), the programs and scripts it
 * runs, and, for a wrapper, the command it runs, judged as a command of
 * its own.  What is known about which program is in progs/, one file per
 * family.
 */
#include "agconfig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/misc.h"
#include "policy/walker.h"

#define MAX_WRAP	16	/* wrappers inside wrappers */

/*
 * Developer tier: a program path that does not exist yet names a place
 * beneath paths.exec from every directory the shell may be in, resolved
 * as execve(2) will (the part that exists followed, the rest as written).
 * What the line creates there before it runs (a symlink to a system
 * program) is the kernel's to judge: in this tier anything readable may
 * run, and the exec supervisor applies the deny rules to it.
 */
static int
exec_target_ok(struct ag_walker *w, const char *name)
{
	const char *last = ag_base_name(name);
	int i, n = name[0] == '/' ? 1 : w->cwd->n;

	if ((name[0] != '/' && w->cwd->unknown) || strcmp(last, "..") == 0 ||
	    strcmp(last, ".") == 0 || last[0] == '\0')
		return 0;
	for (i = 0; i < n; i++) {
		char abs[PATH_MAX], res[PATH_MAX];

		if (ag_walk_resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0 ||
		    !ag_walk_inside_list(w, &w->prof->paths_exec, res))
			return 0;
	}
	return 1;
}

/* Resolve a command name to a file.  0 ok; -1 not found; -2 ambiguous. */
static int
resolve_cmd(struct ag_walker *w, const char *name, char *real, size_t realsz)
{
	char abs[PATH_MAX];

	if (strchr(name, '/') == NULL)
		return ag_walk_lookup(w->pathenv, name, real, realsz);
	if (name[0] != '/') {
		char other[PATH_MAX];
		int i, rc = -1;

		if (w->cwd->unknown || w->cwd->n < 1)
			return -2;
		/* from every directory the shell may be in, the same file */
		for (i = 0; i < w->cwd->n; i++) {
			char res[PATH_MAX];
			int r;

			/* resolved as execve(2) will: "lnk/.." is the parent of
			 * lnk's target */
			if (ag_walk_resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0)
				r = -1;
			else
				r = ag_walk_lookup(NULL, res, i == 0 ? real : other,
				    i == 0 ? realsz : sizeof(other));
			/* found from one directory and not from another: which
			 * one runs depends on the cd */
			if (i == 0)
				rc = r;
			else if (r != rc || (r == 0 && strcmp(real, other) != 0))
				return -2;
		}
		return rc;
	}
	return ag_walk_lookup(NULL, name, real, realsz);
}

/* A command another one runs, one wrapper deeper. */
void
ag_walk_nested(struct ag_walker *w, struct ag_arg *a, size_t na, int flags)
{
	const char *rec;

	if (w->ctx->record && na > 0 && a[0].lit != NULL &&
	    (rec = ag_walk_strdup(w, a[0].lit)) != NULL)
		(void)ag_walk_push(w, &w->inner, &w->ninner, &w->capinner, rec);
	w->wrap++;
	ag_walk_command(w, a, na, flags);
	w->wrap--;
}

void
ag_walk_inner(struct ag_walker *w, const struct ag_prog *p, const char *base,
    struct ag_arg *a, size_t na, int flags)
{
	struct ag_progcall c = { p, base, a, na, NULL, flags };
	struct ag_unwrap u;
	size_t k, i;

	if (w->wrap >= MAX_WRAP) {
		ag_walk_refuse(w, AG_DENY, "wrapper", "too many nested wrappers");
		return;
	}
	if (p->unwrap == NULL)
		return;		/* chroot, su, ...: allowed by name, nothing to unwrap */
	u.flags = flags | AG_CF_PROG_ONLY;
	u.repl[0] = '\0';
	k = p->unwrap(w, &c, &u);
	if (k == AG_UNWRAP_DONE)
		return;
	if (k >= na) {
		if (u.flags & AG_CF_UNKNOWN_TAIL)
			ag_walk_refuse(w, AG_DENY, "wrapper",
			    "'%s' would run a command taken from its input, which the gateway cannot see",
			    base);
		return;		/* wrapper without a command: prints or exits */
	}
	if (u.repl[0] != '\0') {
		/* xargs -I: words holding the replacement string come from input */
		struct ag_arg *inner = calloc(na - k, sizeof(*inner));

		if (inner == NULL) {
			w->oom = 1;
			return;
		}
		for (i = k; i < na; i++) {
			inner[i - k] = a[i];
			if (a[i].lit != NULL && strstr(a[i].lit, u.repl) != NULL)
				inner[i - k].lit = NULL;
		}
		ag_walk_nested(w, inner, na - k, u.flags);
		free(inner);
		return;
	}
	ag_walk_nested(w, a + k, na - k, u.flags);
}

/*
 * What the program's descriptor says about its arguments: the files it
 * writes, the scripts and programs it runs.
 */
static void
prog_check(struct ag_walker *w, const struct ag_prog *p, const char *base, struct ag_arg *a,
    size_t na, const char *cdir, int flags)
{
	struct ag_progcall c = { p, base, a, na, cdir, flags };
	char ex[80];
	size_t i;

	if (p == NULL)
		return;
	/* words the line does not show: the kernel and the exec supervisor
	 * judge what they turn out to be (walker.h) */
	if (ag_walk_exec_judged(w) && (ag_walk_has_nonlit(a, na) || (flags & AG_CF_UNKNOWN_TAIL)))
		return;
	if (p->flags & AG_PROG_WRITES_OPERANDS) {
		if (flags & AG_CF_UNKNOWN_TAIL) {
			ag_walk_refuse(w, AG_DENY, "path:write",
			    "'%s' would get file names from xargs or find that the gateway cannot check",
			    base);
			return;
		}
		if (ag_walk_has_nonlit(a, na)) {
			for (i = 1; i < na && a[i].lit; i++)
				;
			ag_walk_refuse(w, AG_DENY, "path:literal",
			    "'%s' writes the files named in its arguments, so they must be literal; '%s' is not",
			    base, ag_walk_excerpt(a[i].w->raw, ex, sizeof(ex)));
			return;
		}
	}
	if (p->check != NULL)
		p->check(w, &c);
}

/*
 * A program no allow rule names: a safe wrapper (judged by what it runs),
 * a program built earlier in the line beneath the developer tier's
 * paths.exec, or a refusal that says what is allowed.
 */
static void
no_rule(struct ag_walker *w, const struct ag_prog *p, const char *name, const char *base,
    int rc, struct ag_arg *a, size_t na, int flags)
{
	char ex[80];
	size_t i;

	if (rc == 0 && p != NULL && (p->flags & AG_PROG_WRAPPER_SAFE)) {
		prog_check(w, p, base, a, na, NULL, flags);
		ag_walk_inner(w, p, base, a, na, flags);
		return;
	}
	if (rc == 0 && (flags & AG_CF_PROG_ONLY) && (ag_walk_builtin_flags(base) & AG_BI_TWIN)) {
		/*
		 * `xargs echo`, `env printf`, `timeout 5 true`: a wrapper runs
		 * the program, not the builtin.  The developer tier lets every
		 * readable program execute, so it runs; the strict tier's
		 * kernel would refuse it, so say so now rather than allow a
		 * command the kernel then kills.
		 */
		if (w->prof->tier == AG_TIER_DEVELOPER) {
			ag_walk_allow_as(w, "builtin", "allowed: '%s' is the program twin of a shell builtin",
			    base);
			return;
		}
		ag_walk_refuse(w, AG_DENY, "unknown",
		    "'%s' run by another program is a program, not the shell builtin, and profile '%s' does not list it (add '%s' to allow)",
		    base, w->prof->name ? w->prof->name : "?", base);
		return;
	}
	if (rc == 0 && p != NULL && (p->flags & AG_PROG_EXEC_SEEN) && ag_walk_exec_judged(w)) {
		/* a tracer or valgrind, run as any unlisted program: what it
		 * runs meets the deny rules at its exec (prog.h), and is
		 * judged here too where the line shows it */
		ag_walk_refuse_unknown(w, name, NULL);
		prog_check(w, p, base, a, na, NULL, flags);
		ag_walk_inner(w, p, base, a, na, flags);
		return;
	}
	if (p != NULL && (p->flags & AG_PROG_WRAPPER_RISKY)) {
		char rule[64];

		snprintf(rule, sizeof(rule), "wrapper:%s", base);
		ag_walk_refuse(w, AG_DENY, rule,
		    "'%s' runs other programs with other rights or outside the gateway's view; the gateway refuses it in every profile, '%s' too, even where allow lists it",
		    base, w->prof->name ? w->prof->name : "?");
		return;
	}
	if (rc != 0 && strchr(name, '/') != NULL && w->prof->tier == AG_TIER_DEVELOPER &&
	    exec_target_ok(w, name)) {
		/* built earlier in the same line (`cc -o t t.c && ./t`):
		 * the kernel and the exec supervisor judge it when it runs */
		char rid2[256];

		snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
		    w->prof->name ? w->prof->name : "?");
		ag_walk_allow_as(w, rid2, "allowed: '%s' will lie beneath paths.exec",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
	} else if (rc != 0 && name[0] != '/' && strchr(name, '/') != NULL &&
	    w->prof->tier == AG_TIER_DEVELOPER && !w->cwd->unknown && w->cwd->n > 1)
		/* `cd d; cc -o t t.c && ./t`: the shell may still be where it
		 * was if cd failed, and that is not beneath paths.exec */
		ag_walk_refuse_unknown(w, name, " (no such program yet, and after a 'cd' "
		    "joined by ';' or '||' it may be run from the directory before the "
		    "'cd', outside paths.exec: join them with '&&')");
	else if (rc != 0)
		ag_walk_refuse_unknown(w, name, strchr(name, '/') ? " (no such program)"
		    : " (and not found in PATH)");
	else if (strchr(name, '/') != NULL && w->prof->nallow > 0) {
		/* a path that looks like an allowed name but is another file */
		int same_name = 0;

		for (i = 0; i < w->prof->nallow; i++)
			if (w->prof->allow[i].command && strcmp(w->prof->allow[i].base, base) == 0)
				same_name = 1;
		/* with unknown: allow another file runs as any unlisted one
		 * does; the deny rules matched it by name above */
		if (same_name && w->prof->unknown != AG_UNKNOWN_ALLOW)
			ag_walk_refuse(w, AG_DENY, "path",
			    "'%s' is not the '%s' the profile allows (a different file with the same name)",
			    ag_walk_excerpt(name, ex, sizeof(ex)), base);
		else
			ag_walk_refuse_unknown(w, name, NULL);
	} else {
		ag_walk_refuse_unknown(w, name, NULL);
		/* rollout's second pass: the program runs as if a plain rule
		 * named it, so what it writes and runs meets the checks */
		if (w->ctx != NULL && (w->ctx->rollout || w->ctx->approving)) {
			prog_check(w, p, base, a, na, NULL, flags);
			if (p != NULL && (p->flags & (AG_PROG_WRAPPER_SAFE | AG_PROG_WRAPPER_RISKY)))
				ag_walk_inner(w, p, base, a, na, flags);
		}
	}
}

/*
 * The first word from si on that rule r's subcommand list does not hold,
 * or na.  A program whose every operand does something (make's targets,
 * gradle's tasks) has each of them looked at, skipping its options and
 * their values and make's VAR=value words.
 */
static size_t
unlisted_sub(const struct ag_rule *r, const struct ag_prog *p, struct ag_arg *a, size_t na,
    size_t si)
{
	const struct ag_gopt *o;
	int operands = 0;
	size_t j;

	if (si >= na)
		return na;
	if (p == NULL || !(p->flags & AG_PROG_SUBS_ALL))
		return a[si].lit == NULL || !ag_strlist_contains(&r->subcommands, a[si].lit) ?
		    si : na;
	for (j = si; j < na; j++) {
		const char *s = a[j].lit;

		if (s == NULL)
			return j;
		if (!operands && strcmp(s, "--") == 0) {
			operands = 1;
			continue;
		}
		if (!operands && s[0] == '-' && s[1] != '\0') {
			for (o = p->global_opts; o != NULL && o->name != NULL; o++)
				if (strcmp(o->name, s) == 0 && (o->flags & AG_GO_VAL))
					j++;
			continue;
		}
		if (strchr(s, '=') == NULL && !ag_strlist_contains(&r->subcommands, s))
			return j;
	}
	return na;
}

int
ag_walk_denies_builtin(const struct ag_walker *w)
{
	size_t i;

	/* a clean-up line runs only a few builtins, and unjudged: what a
	 * builtin evaluates is judged as where a deny rule names one */
	if (w->ctx != NULL && w->ctx->cleanup)
		return 1;

	for (i = 0; i < w->prof->ndeny; i++)
		if (w->prof->deny[i].command != NULL &&
		    ag_walk_builtin_flags(w->prof->deny[i].base) != 0)
			return 1;
	return 0;
}

/* The deny rules of the program p runs by another word's name (python3
 * -m twine upload): 1 when one refused it. */
static int
dispatched_deny(struct ag_walker *w, const struct ag_prog *p, struct ag_arg *a, size_t na,
    int flags)
{
	const char **words;
	char name[64];
	size_t i, rest;

	if (p == NULL || p->dispatch == NULL)
		return 0;
	if ((words = calloc(na, sizeof(*words))) == NULL) {
		ag_walk_refuse(w, AG_DENY, "internal", "out of memory");
		return 1;
	}
	for (i = 0; i < na; i++)
		words[i] = a[i].lit;
	rest = p->dispatch(words, na, name, sizeof(name));
	free(words);
	return rest > 0 && ag_walk_deny_hit(w, name, a + rest - 1, na - rest + 1, flags);
}

/* A program allow rule r (the ridx-th) names: its arguments, its
 * subcommand, and what its descriptor says. */
static void
with_rule(struct ag_walker *w, const struct ag_prog *p, const struct ag_rule *r, size_t ridx,
    const char *base, struct ag_arg *a, size_t na, int flags)
{
	char ridbuf[160], ex[80], sl[400];
	const char *rid, *cdir = NULL;
	int bad = 0;
	size_t si = na;

	rid = ag_walk_rule_id(w, r, 0, ridx, ridbuf, sizeof(ridbuf));
	if (!ag_walk_rule_args_ok(w, r, rid, base, a, na, flags))
		return;
	if (r->subcommands.n > 0 || (p != NULL && p->global_opts != NULL)) {
		si = ag_walk_subcommand(w, r, rid, base, p, a, na, &cdir, &bad);
		if (bad)
			return;
		if (r->subcommands.n > 0 && (si = unlisted_sub(r, p, a, na, si)) < na) {
			ag_walk_list_text(&r->subcommands, sl, sizeof(sl));
			ag_walk_refuse(w, AG_DENY, rid,
			    "'%s %s' is not allowed in profile '%s'; allowed here: %s (%s)",
			    base, ag_walk_excerpt(a[si].lit ? a[si].lit : a[si].w->raw, ex, sizeof(ex)),
			    w->prof->name ? w->prof->name : "?", base, sl);
			return;
		}
	}
	/* a rule that wants a person's approval holds the line wherever it
	 * matched: typed, behind a wrapper, in find -exec */
	if (r->approve)
		ag_walk_approve_seen(w, rid);
	/* say which rule let it through (kept if something refuses later) */
	if (w->cur >= 0 && w->cmds[w->cur].rule == NULL)
		w->cmds[w->cur].rule = ag_walk_strdup(w, rid);
	if (w->cur >= 0 && si < na && a[si].lit != NULL)
		w->cmds[w->cur].sub = ag_walk_strdup(w, a[si].lit);
	prog_check(w, p, base, a, na, cdir, flags);
	if (p != NULL && (p->flags & (AG_PROG_WRAPPER_SAFE | AG_PROG_WRAPPER_RISKY)))
		ag_walk_inner(w, p, base, a, na, flags);
}

void
ag_walk_command(struct ag_walker *w, struct ag_arg *a, size_t na, int flags)
{
	const char *name = a[0].lit;
	const char *base;
	char real[PATH_MAX], ex[80];
	const struct ag_rule *r = NULL;
	const struct ag_prog *p;
	size_t ridx = 0, i;
	int rc;

	if (name == NULL && ag_walk_exec_judged(w) && !ag_walk_denies_builtin(w)) {
		/* `$CC -o x x.c`: which program runs is known at its exec,
		 * judged there with the words it gets; no builtin the
		 * supervisor cannot see is denied */
		ag_walk_allow_as(w, "kernel:exec", "allowed: the command name '%s' is known only "
		    "when it runs; the exec supervisor judges it then",
		    ag_walk_excerpt(a[0].w ? a[0].w->raw : "", ex, sizeof(ex)));
		return;
	}
	if (name == NULL) {
		ag_walk_refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
		    ag_walk_excerpt(a[0].w ? a[0].w->raw : "", ex, sizeof(ex)));
		return;
	}
	if (name[0] == '\0') {
		ag_walk_refuse(w, AG_DENY, "literal", "an empty command name is not allowed");
		return;
	}
	base = ag_base_name(name);
	p = ag_prog_lookup(base);
	if (flags & AG_CF_NAME_ONLY) {
		/* a busybox applet: judged by its name alone */
		for (i = 0; i < w->prof->nallow; i++)
			if (ag_walk_rule_matches(w, &w->prof->allow[i], name, NULL, 1))
				break;
		if (strchr(name, '/') != NULL || i == w->prof->nallow) {
			if (!ag_walk_deny_hit(w, base, a, na, flags & ~AG_CF_NAME_ONLY))
				ag_walk_refuse_unknown(w, name, " (as a busybox applet)");
			return;
		}
		i = ag_walk_pick_rule(w, i, AG_PICK_NAME, name, NULL, a, na);
		with_rule(w, p, &w->prof->allow[i], i, base, a, na, flags & ~AG_CF_NAME_ONLY);
		return;
	}
	if (strchr(name, '/') == NULL && !(flags & AG_CF_PROG_ONLY)) {
		const struct ag_sh_node *fn;

		if (!(flags & (AG_CF_NO_FUNCS | AG_CF_BUILTIN_ONLY)) &&
		    (fn = ag_walk_function(w, name)) != NULL && !ag_walk_builtin_flags(name) &&
		    ag_walk_lookup(w->pathenv, name, real, sizeof(real)) == -1) {
			/* its body, checked where it was defined, is checked
			 * again where it is called (relative paths are the
			 * caller's); if the definition did not run (an if, a
			 * subshell), the name runs nothing.  A function
			 * shadowing a builtin or a program is judged as that
			 * builtin or program. */
			ag_walk_set_path(w, w->cur, "function");
			ag_walk_call(w, fn);
			return;
		}
		if (ag_walk_builtin_flags(name)) {
			/* deny rules name builtins too */
			if (!ag_walk_deny_hit(w, name, a, na, flags))
				ag_walk_builtin(w, name, a, na, flags);
			return;
		}
	}
	if (flags & AG_CF_BUILTIN_ONLY) {
		ag_walk_refuse(w, AG_DENY, "builtin", "'%s' is not a shell builtin",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	rc = resolve_cmd(w, name, real, sizeof(real));
	if (rc == -2 && w->prof->tier == AG_TIER_DEVELOPER && strchr(name, '/') != NULL &&
	    !ag_walk_deny_hit(w, base, a, na, flags)) {
		/* developer tier only: which file ./x is cannot be told here
		 * (a cd the gateway cannot follow); the kernel lets only
		 * paths.exec and the system's programs run, and the exec
		 * supervisor applies the deny rules to whatever it is.  The
		 * deny rules by name hold here already.  The strict tier
		 * refuses below. */
		if (w->cur >= 0 && w->wrap == 0)
			ag_walk_set_path(w, w->cur, NULL);
		ag_walk_allow_as(w, "kernel:exec", "allowed: which file '%s' is depends on a 'cd' the "
		    "gateway cannot follow; the kernel sandbox decides", ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (rc == -2) {
		ag_walk_refuse(w, AG_DENY, "path",
		    strchr(name, '/') ? "cannot tell which file '%s' is after a 'cd' in the same line; join them with '&&' (cd DIR && ./x)"
		    : "PATH has a relative or empty entry, so '%s' cannot be resolved safely",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (w->cur >= 0 && w->wrap == 0)
		ag_walk_set_path(w, w->cur, rc == 0 ? real : NULL);

	/* deny rules first: matched by name, which also covers other files
	 * with the same name, the program it runs by another word's name
	 * (python3 -m twine, node npm-cli.js), and an entry point's program
	 * (npm-cli.js is npm) */
	if (ag_walk_deny_hit(w, base, a, na, flags) || dispatched_deny(w, p, a, na, flags) ||
	    (ag_prog_entry(base) != NULL &&
	    ag_walk_deny_hit(w, ag_prog_entry(base), a, na, flags)))
		return;

	for (i = 0; i < w->prof->nallow; i++)
		if (ag_walk_rule_matches(w, &w->prof->allow[i], name, rc == 0 ? real : NULL, 0)) {
			ridx = ag_walk_pick_rule(w, i, AG_PICK_FILE, name, rc == 0 ? real : NULL,
			    a, na);
			r = &w->prof->allow[ridx];
			break;
		}
	if (r == NULL && rc == 0 && strchr(name, '/') != NULL &&
	    w->prof->tier == AG_TIER_DEVELOPER && ag_walk_inside_list(w, &w->prof->paths_exec, real)) {
		char rid2[256];

		snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
		    w->prof->name ? w->prof->name : "?");
		ag_walk_allow_as(w, rid2, "allowed: '%s' lies beneath paths.exec", ag_walk_excerpt(real, ex, sizeof(ex)));
		return;
	}
	if (r == NULL)
		no_rule(w, p, name, base, rc, a, na, flags);
	else
		with_rule(w, p, r, ridx, base, a, na, flags);
}
