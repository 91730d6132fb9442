/*
 * execpolicy.c - deny rules at exec time (see execpolicy.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/execpolicy.h"
#include "common/misc.h"
#include "common/utf8.h"
#include "policy/policy.h"
#include "policy/prog.h"
#include "policy/walker.h"
#include "common/strbuf.h"

/* Does r name this program? */
static int
rule_names(const struct ag_rule *r, const char *pb, const char *ab)
{
	return r->command != NULL && (strcmp(r->base, pb) == 0 ||
	    (ab != NULL && strcmp(r->base, ab) == 0));
}

/* Does any deny rule, or an allow rule that waits for a person, name this
 * program (under unknown: approve, any program)?  The common case (cc1,
 * as, ld, sh) answers here, without building or parsing a line. */
static int
named_by_deny(const struct ag_profile *p, const char *path, const char *argv0)
{
	const char *pb = ag_base_name(path), *ab = argv0 != NULL ? ag_base_name(argv0) : NULL;
	size_t i;

	if (p->unknown == AG_UNKNOWN_APPROVE)
		return 1;
	for (i = 0; i < p->ndeny; i++)
		if (rule_names(&p->deny[i], pb, ab))
			return 1;
	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].approve && rule_names(&p->allow[i], pb, ab))
			return 1;
	return 0;
}

/* "git -C repo push ..." for messages: the program's name and its
 * arguments, cut to fit, what may not reach a terminal made visible. */
static void
show_argv(const char *path, char *const *argv, size_t argc, char *out, size_t outsz)
{
	char raw[512];
	size_t len, i;

	snprintf(raw, sizeof(raw), "%s", ag_base_name(path));
	for (i = 1; i < argc && (len = strlen(raw)) + 2 < sizeof(raw); i++)
		snprintf(raw + len, sizeof(raw) - len, " %s", argv[i]);
	ag_utf8_visible(raw, strlen(raw), outsz, out, outsz);
}

/* rule is the id of one of p's deny rules (a named one has no index) */
static int
is_deny_rule(const struct ag_profile *p, const char *rule)
{
	size_t i;

	for (i = 0; i < p->ndeny; i++)
		if (p->deny[i].id != NULL && strcmp(p->deny[i].id, rule) == 0)
			return 1;
	return 0;
}

static int judge_exec(const struct ag_execpolicy *ep, const char *path, char *const *argv,
    size_t argc, const char *cwd, char *reason, size_t reasonsz, char *rule, size_t rulesz);

/* The exec judge decides an exec as the typed line would be decided, in
 * the directory the program runs in, once (no rollout's second pass). */
static void
exec_ctx(struct ag_policy_ctx *ctx, const struct ag_execpolicy *ep, const char *cwd)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->profile = ep->profile;
	ctx->cwd = cwd != NULL ? cwd : "/";
	ctx->home = ep->home;
	ctx->env = ep->env;
	ctx->one_pass = 1;
}

/*
 * The dynamic loader run as a program (`ld-linux-x86-64.so.2 /usr/bin/git
 * push`) maps and runs its first operand without another exec: judge that
 * operand and what follows as the exec.  The operand is found as rtld's
 * own loop finds it (glibc 2.36, elf/rtld.c dl_main): its options are the
 * exact words below (a valued one only with a word after it), and any
 * other word is the program, one that starts with '-' too (`ld.so -d/git
 * push` runs ./-d/git).  A word starting with "--" that is not one of its
 * options (`--` included) makes rtld stop with its usage: judged as the
 * program all the same, which refuses no more than rtld runs.  The index
 * of the program among argv, or 0 when path is not a loader or names no
 * program.
 */
static size_t
loader_operand(const char *path, char *const *argv, size_t argc)
{
	static const char *const plain[] = { "--list", "--verify", "--inhibit-cache",
	    "--list-tunables", "--list-diagnostics", "--help", "--version", NULL };
	static const char *const with_value[] = { "--library-path", "--inhibit-rpath",
	    "--audit", "--preload", "--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
	    NULL };
	const char *b = ag_base_name(path);
	size_t i;

	if (strncmp(b, "ld-", 3) != 0 && strncmp(b, "ld.so", 5) != 0 &&
	    strncmp(b, "ld64.so", 7) != 0)
		return 0;
	for (i = 1; i < argc; i++) {
		if (ag_walk_in_list(plain, argv[i]))
			continue;
		if (i + 1 < argc && ag_walk_in_list(with_value, argv[i])) {
			i++;
			continue;
		}
		return i;
	}
	return 0;
}

/*
 * Strict tier: what the loader (or valgrind) is asked to run must be a
 * program the profile allows, judged like a typed line, and nothing may
 * be loaded beside it: the kernel's execute rules see only the loader's
 * own exec, so without this any readable ELF file (a JVM, git's helpers)
 * would run.
 */
static int
strict_loader_ok(const struct ag_execpolicy *ep, const char *path, char *const *argv,
    size_t argc, size_t lo, const char *cwd, char *reason, size_t reasonsz, char *rule,
    size_t rulesz)
{
	static const char *const loads[] = { "--preload", "--audit", "--library-path", NULL };
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	struct ag_strbuf sb;
	char shown[160];
	size_t i, k;
	int ok;

	show_argv(path, argv, argc, shown, sizeof(shown));
	snprintf(rule, rulesz, "%s", ag_prog_inproc(path, argv, argc) > 0 ? "exec:inproc" :
	    "exec:loader");
	for (i = 1; i < lo; i++)
		for (k = 0; loads[k] != NULL; k++)
			if (strcmp(argv[i], loads[k]) == 0) {
				snprintf(reason, reasonsz, "denied: '%s' loads code beside the "
				    "program (%s)", shown, loads[k]);
				return 0;
			}
	ag_strbuf_init(&sb, AG_EXECPOLICY_MAX);
	ok = ag_strbuf_squote_str(&sb, argv[lo]) == 0;
	for (i = lo + 1; ok && i < argc; i++)
		ok = ag_strbuf_addch(&sb, ' ') == 0 && ag_strbuf_squote_str(&sb, argv[i]) == 0;
	exec_ctx(&ctx, ep, cwd);
	memset(&d, 0, sizeof(d));
	if (ok && ag_policy_check(&ctx, sb.data, sb.len, &d) < 0)
		ok = 0;
	ag_strbuf_free(&sb);
	if (ok && d.verdict == AG_ALLOW) {
		ag_decision_free(&d);
		return 1;
	}
	snprintf(reason, reasonsz, "denied: '%s' runs a program through %s "
	    "that profile '%s' does not allow%s%s", shown,
	    strcmp(rule, "exec:loader") == 0 ? "the dynamic loader" : ag_base_name(path),
	    ep->profile->name,
	    ok ? ": " : "", ok ? d.reason : "");
	ag_decision_free(&d);
	return 0;
}

int
ag_execpolicy_judge(const struct ag_execpolicy *ep, const char *path, char *const *argv,
    size_t argc, const char *cwd, char *reason, size_t reasonsz, char *rule, size_t rulesz)
{
	size_t lo = loader_operand(path, argv, argc);

	/* valgrind and its tools: the registry knows their words (prog.h) */
	if (lo == 0)
		lo = ag_prog_inproc(path, argv, argc);
	if (lo > 0 && ep->profile->tier == AG_TIER_STRICT &&
	    !strict_loader_ok(ep, path, argv, argc, lo, cwd, reason, reasonsz, rule, rulesz))
		return 0;
	if (lo > 0) {
		dev_t dev;
		ino_t ino;

		/* the loader opens its operand as the process would: a file
		 * (ld.so /dev/fd/3 push is git's) */
		if (ep->file_of != NULL && ep->file_of(ep->file_ctx, argv[lo], &dev, &ino) == 0)
			return ag_execpolicy_judge_file(ep, argv[lo], dev, ino, argv + lo,
			    argc - lo, cwd, reason, reasonsz, rule, rulesz);
		return ag_execpolicy_judge(ep, argv[lo], argv + lo, argc - lo, cwd, reason,
		    reasonsz, rule, rulesz);
	}
	return judge_exec(ep, path, argv, argc, cwd, reason, reasonsz, rule, rulesz);
}

/* PATH in env ("NAME=VALUE" strings), or NULL */
static const char *
env_path(char *const *env)
{
	size_t i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], "PATH=", 5) == 0)
			return env[i] + 5;
	return NULL;
}

/*
 * `sh FILE ARGS` (bash, dash, any shell of the registry): the shell reads
 * FILE and runs it in its own process, so FILE is the program as far as
 * the judge can tell when FILE is one of the registry's programs' files
 * (/usr/bin/mvn is a shell script that ends by exec'ing java with the
 * goals: `sh /usr/bin/mvn deploy` is mvn deploy), or is named as one (a
 * project's ./mvnw).  The index of FILE
 * among argv, or 0: no such word (-c TEXT, -s, standard input).  The
 * shells' own options before it: a cluster of letters after '-' or '+'
 * (-o and -O take the next word), and bash's long ones (--rcfile and
 * --init-file take a value); "--" or "-" ends them.
 */
static size_t
shell_operand(char *const *argv, size_t argc)
{
	static const char *const long_value[] = { "--rcfile", "--init-file", NULL };
	size_t i;
	const char *p;

	for (i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (strcmp(w, "--") == 0 || strcmp(w, "-") == 0)
			return i + 1 < argc ? i + 1 : 0;
		if (w[0] == '-' && w[1] == '-') {
			if (ag_walk_in_list(long_value, w))
				i++;
			continue;
		}
		if (w[0] != '-' && w[0] != '+')
			return i;
		for (p = w + 1; *p != '\0'; p++) {
			if (*p == 'c' || *p == 's')
				return 0;	/* a command line, or standard input */
			if (*p == 'o' || *p == 'O')
				i++;
		}
	}
	return 0;
}

/* path (or the registry's names for its file, as) is a shell */
static int
is_shell(const char *path, char as[][AG_PROG_PATH], size_t n)
{
	size_t k;

	if (ag_prog_lookup(ag_base_name(path)) == &ag_prog_shell)
		return 1;
	for (k = 0; k < n; k++)
		if (ag_prog_lookup(ag_base_name(as[k])) == &ag_prog_shell)
			return 1;
	return 0;
}

int
ag_execpolicy_judge_file(const struct ag_execpolicy *ep, const char *path, dev_t dev,
    ino_t ino, char *const *argv, size_t argc, const char *cwd, char *reason,
    size_t reasonsz, char *rule, size_t rulesz)
{
	char as[8][AG_PROG_PATH], r2[1024], ru2[256];
	size_t n, k, so;
	int rc, r;

	rc = ag_execpolicy_judge(ep, path, argv, argc, cwd, reason, reasonsz, rule, rulesz);
	n = ag_prog_files_match(env_path(ep->env), dev, ino, as, sizeof(as) / sizeof(as[0]));
	for (k = 0; k < n && rc != 0; k++) {
		if (strcmp(ag_base_name(as[k]), ag_base_name(path)) == 0)
			continue;	/* judged by that name already */
		r2[0] = ru2[0] = '\0';
		r = ag_execpolicy_judge(ep, as[k], argv, argc, cwd, r2, sizeof(r2), ru2,
		    sizeof(ru2));
		if (r == 0 || (r == 2 && rc == 1)) {
			rc = r;
			snprintf(reason, reasonsz, "%s", r2);
			snprintf(rule, rulesz, "%s", ru2);
		}
	}
	/* a shell given a registry program's file: that program (above) */
	if (rc != 0 && ep->file_of != NULL && is_shell(path, as, n) &&
	    (so = shell_operand(argv, argc)) > 0) {
		dev_t fdev;
		ino_t fino;
		char fas[1][AG_PROG_PATH];

		if (ep->file_of(ep->file_ctx, argv[so], &fdev, &fino) == 0 &&
		    (ag_prog_lookup(ag_base_name(argv[so])) != NULL ||
		    ag_prog_files_match(env_path(ep->env), fdev, fino, fas, 1) > 0)) {
			r2[0] = ru2[0] = '\0';
			r = ag_execpolicy_judge_file(ep, argv[so], fdev, fino, argv + so,
			    argc - so, cwd, r2, sizeof(r2), ru2, sizeof(ru2));
			if (r == 0 || (r == 2 && rc == 1)) {
				rc = r;
				snprintf(reason, reasonsz, "%s", r2);
				snprintf(rule, rulesz, "%s", ru2);
			}
		}
	}
	return rc;
}

static int
judge_exec(const struct ag_execpolicy *ep, const char *path, char *const *argv,
    size_t argc, const char *cwd, char *reason, size_t reasonsz, char *rule, size_t rulesz)
{
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	struct ag_strbuf sb;
	size_t i;
	int ok, rc;

	const struct ag_prog *dp = NULL;
	const char *dsub = NULL;

	/*
	 * A program that dispatches on its name (/usr/lib/git-core/git-push,
	 * git run with argv[0] "git-push") is judged as the command it is:
	 * "git push ...", whatever path or argv[0] spelled it.
	 */
	if (ag_prog_dashed(path, argc > 0 ? argv[0] : NULL, &dp, &dsub) &&
	    !named_by_deny(ep->profile, dp->names[0], NULL))
		return 1;
	if (dp == NULL) {
		/* python3 -m twine upload is twine upload; npm-cli.js is npm */
		const struct ag_prog *ip = ag_prog_lookup(ag_base_name(path));
		const char *entry = ag_prog_entry(ag_base_name(path));
		char mod[64];
		size_t rest;

		if (entry != NULL && named_by_deny(ep->profile, entry, NULL))
			return judge_exec(ep, entry, argv, argc, cwd, reason, reasonsz, rule,
			    rulesz);

		if (ip != NULL && ip->dispatch != NULL &&
		    (rest = ip->dispatch((const char *const *)argv, argc, mod, sizeof(mod))) > 0 &&
		    named_by_deny(ep->profile, mod, NULL))
			return judge_exec(ep, mod, argv + rest - 1, argc - rest + 1, cwd, reason,
			    reasonsz, rule, rulesz);
	}
	if (dp == NULL && !named_by_deny(ep->profile, path, argc > 0 ? argv[0] : NULL))
		return 1;
	/* the program as the path the kernel is asked to run, then the arguments */
	ag_strbuf_init(&sb, AG_EXECPOLICY_MAX);
	ok = dp != NULL ? ag_strbuf_squote_str(&sb, dp->names[0]) == 0 && ag_strbuf_addch(&sb, ' ') == 0 &&
	    ag_strbuf_squote_str(&sb, dsub) == 0 : ag_strbuf_squote_str(&sb, path) == 0;
	/*
	 * A dashed name outside the program's own commands (git-lfs) is
	 * another program, or git dying on a command it does not have: no
	 * alias and no guess runs, so only a rule naming the word counts
	 * (after "--" no word is taken for an alias, rules.c).
	 */
	if (ok && dp != NULL && ag_prog_maybe_alias(dp, dsub)) {
		ag_strbuf_reset(&sb);
		ok = ag_strbuf_squote_str(&sb, dp->names[0]) == 0 &&
		    ag_strbuf_addstr(&sb, " -- ") == 0 && ag_strbuf_squote_str(&sb, dsub) == 0;
	}
	for (i = 1; ok && i < argc; i++)
		ok = ag_strbuf_addch(&sb, ' ') == 0 && ag_strbuf_squote_str(&sb, argv[i]) == 0;
	if (!ok) {
		ag_strbuf_free(&sb);
		snprintf(reason, reasonsz, "denied: the exec of '%s' is too long to check "
		    "against the deny rules", ag_base_name(path));
		snprintf(rule, rulesz, "exec:too-long");
		return 0;
	}
	exec_ctx(&ctx, ep, cwd);
	if (ag_policy_check(&ctx, sb.data, sb.len, &d) < 0) {
		ag_strbuf_free(&sb);
		ag_decision_free(&d);
		snprintf(reason, reasonsz, "denied: the exec of '%s' could not be checked",
		    ag_base_name(path));
		snprintf(rule, rulesz, "exec:error");
		return 0;
	}
	ag_strbuf_free(&sb);
	/*
	 * Deny rules are matched before anything else; a refusal for another
	 * reason (not in allow, an option the prompt would refuse) does not
	 * count here.  A line that does not parse (invalid UTF-8 in an
	 * argument) of a program a deny rule names is refused.
	 */
	/*
	 * Rules that wait for a person hold an exec the line did not show (a
	 * recipe's git push, a program no rule names under unknown: approve)
	 * as they hold a typed one: it goes on only when the person's answer
	 * to this line covered every such rule it meets.
	 */
	if (!d.parse_error && d.approve_rule[0] != '\0' &&
	    (d.verdict == AG_ALLOW || ag_policy_approve_rules(ep->profile, d.rule))) {
		char shown[160];

		if (ag_policy_rules_within(d.approve_rule, ep->approved)) {
			ag_decision_free(&d);
			return 1;
		}
		show_argv(path, argv, argc, shown, sizeof(shown));
		snprintf(reason, reasonsz, "denied: '%s' waits for a person's approval (%s); "
		    "run it as a line of its own, which waits for one", shown, d.approve_rule);
		snprintf(rule, rulesz, "%s", d.approve_rule);
		ag_decision_free(&d);
		return 0;
	}
	if (d.parse_error || (d.verdict == AG_DENY && is_deny_rule(ep->profile, d.rule))) {
		char shown[160];

		show_argv(path, argv, argc, shown, sizeof(shown));
		if (d.parse_error)
			snprintf(reason, reasonsz, "denied: '%s' names a program a deny rule covers, "
			    "and its arguments cannot be checked", shown);
		else {
			const struct ag_rule *r = ag_profile_rule(ep->profile, d.rule,
			    strlen(d.rule));

			const char *why = strncmp(d.reason, "denied: ", 8) == 0 ? d.reason + 8 :
			    d.reason;

			/* the rule's own words when they say more than its name
			 * (a `cargo fmt` in a recipe: run cargo-fmt instead; a git word that
			 * may be an alias or a guess) */
			snprintf(reason, reasonsz, "denied: '%s' is refused by %s%s%s", shown,
			    r != NULL && r->label != NULL ? r->label : d.rule,
			    strstr(why, " is denied by ") == NULL && why[0] ? ": " : "",
			    strstr(why, " is denied by ") == NULL ? why : "");
		}
		snprintf(rule, rulesz, "%s", d.parse_error ? "exec:unparsable" : d.rule);
		/* a rule in rollout: the exec goes on, and is recorded */
		rc = !d.parse_error && ag_policy_rollout_rules(ep->profile, d.rule) ? 2 : 0;
		ag_decision_free(&d);
		return rc;
	}
	ag_decision_free(&d);
	return 1;
}
