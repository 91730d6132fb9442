/*
 * progs.c - the program registry (see prog.h): the list of descriptors,
 * the name index the policy looks every command up in, and the option
 * parsing the descriptors' hooks share.
 */
#include "agconfig.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/misc.h"
#include "policy/prog.h"
#include "policy/walker.h"

/*
 * Every descriptor, grouped by family file.  ag_prog_exec is not here: it
 * is the grammar of the exec builtin, which builtins.c reaches directly.
 */
const struct ag_prog *const ag_progs[] = {
	/* wrappers.c */
	&ag_prog_env, &ag_prog_nice, &ag_prog_nohup, &ag_prog_setsid, &ag_prog_unbuffer,
	&ag_prog_stdbuf, &ag_prog_time, &ag_prog_timeout, &ag_prog_xargs, &ag_prog_sudo,
	&ag_prog_flock, &ag_prog_watch, &ag_prog_strace, &ag_prog_ltrace, &ag_prog_gdb,
	&ag_prog_valgrind, &ag_prog_busybox, &ag_prog_loader, &ag_prog_opaque,
	/* coreutils.c */
	&ag_prog_tee, &ag_prog_touch, &ag_prog_mkdir, &ag_prog_rm, &ag_prog_rmdir,
	&ag_prog_truncate, &ag_prog_shred, &ag_prog_unlink, &ag_prog_sort, &ag_prog_cp,
	&ag_prog_mv, &ag_prog_ln, &ag_prog_install, &ag_prog_dd,
	/* sed.c */
	&ag_prog_sed,
	/* pagers.c */
	&ag_prog_man, &ag_prog_less, &ag_prog_more, &ag_prog_vim, &ag_prog_emacs,
	/* git.c */
	&ag_prog_git,
	/* tools.c */
	&ag_prog_docker, &ag_prog_kubectl, &ag_prog_systemctl, &ag_prog_apt, &ag_prog_make,
	&ag_prog_tar, &ag_prog_grep, &ag_prog_rsync, &ag_prog_cvs, &ag_prog_curl, &ag_prog_wget,
	&ag_prog_ssh, &ag_prog_gpg,
	/* langs.c */
	&ag_prog_python, &ag_prog_perl, &ag_prog_ruby, &ag_prog_node, &ag_prog_java, &ag_prog_lua,
	&ag_prog_tclsh, &ag_prog_tex, &ag_prog_shell,
	/* toolchains.c */
	&ag_prog_cargo, &ag_prog_rustc, &ag_prog_rustfmt, &ag_prog_clippy, &ag_prog_go, &ag_prog_npm, &ag_prog_yarn, &ag_prog_pnpm,
	&ag_prog_corepack,
	&ag_prog_pip, &ag_prog_twine, &ag_prog_pypub, &ag_prog_pytest, &ag_prog_pylint,
	&ag_prog_mvn, &ag_prog_gradle, &ag_prog_javac,
	/* find.c */
	&ag_prog_find,
	NULL
};

/*
 * The name index, built once from the descriptors' names: sorted for
 * bsearch, since every command of every line is looked up.  Names ending
 * in '*' are prefixes, tried in order when no name matches exactly.
 */
#define MAX_NAMES	256
#define MAX_PREFIXES	24
#define MAX_WRAPPERS	16

struct ent {
	const char		*name;
	const struct ag_prog	*prog;
};

static struct {
	struct ent	 names[MAX_NAMES];
	size_t		 nnames;
	struct ent	 prefixes[MAX_PREFIXES];
	size_t		 nprefixes;
	const char	*wrappers[MAX_WRAPPERS + 1];	/* ag_policy_wrappers() */
	char		 problem[160];	/* what ag_prog_registry_check reports */
} reg;

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static int
cmp_ent(const void *a, const void *b)
{
	return ag_strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static void
reg_build(void)
{
	size_t i, k, nw = 0;

	for (i = 0; ag_progs[i] != NULL; i++) {
		const struct ag_prog *p = ag_progs[i];

		for (k = 0; p->names[k] != NULL; k++) {
			const char *n = p->names[k];
			size_t len = strlen(n);

			if (len > 0 && n[len - 1] == '*') {
				if (reg.nprefixes < MAX_PREFIXES)
					reg.prefixes[reg.nprefixes++] = (struct ent){ n, p };
				else
					snprintf(reg.problem, sizeof(reg.problem),
					    "more than %d prefix names", MAX_PREFIXES);
			} else if (reg.nnames < MAX_NAMES)
				reg.names[reg.nnames++] = (struct ent){ n, p };
			else
				snprintf(reg.problem, sizeof(reg.problem),
				    "more than %d names", MAX_NAMES);
			if (k == 0 && (p->flags & AG_PROG_WRAPPER_SAFE)) {
				if (nw < MAX_WRAPPERS)
					reg.wrappers[nw++] = n;
				else
					snprintf(reg.problem, sizeof(reg.problem),
					    "more than %d safe wrappers", MAX_WRAPPERS);
			}
		}
	}
	reg.wrappers[nw] = NULL;
	qsort(reg.names, reg.nnames, sizeof(reg.names[0]), cmp_ent);
	for (i = 1; i < reg.nnames; i++)
		if (strcmp(reg.names[i - 1].name, reg.names[i].name) == 0)
			snprintf(reg.problem, sizeof(reg.problem), "'%s' is named twice",
			    reg.names[i].name);
}

static void
reg_init(void)
{
	(void)pthread_once(&reg_once, reg_build);
}

const char *
ag_prog_action(const struct ag_prog *p, const char *sub)
{
	size_t i;

	for (i = 0; p != NULL && p->same_as != NULL && p->same_as[i] != NULL; i += 2)
		if (strcmp(p->same_as[i], sub) == 0)
			return p->same_as[i + 1];
	return sub;
}

int
ag_prog_spells(const struct ag_prog *p, const char *word, const char *action)
{
	if (strcmp(word, action) == 0 || strcmp(ag_prog_action(p, word), action) == 0)
		return 1;
	return p != NULL && p->spells != NULL && p->spells(word, action);
}

size_t
ag_prog_inproc(const char *path, char *const *argv, size_t argc)
{
	const struct ag_prog *p = ag_prog_lookup(ag_base_name(path));

	return p != NULL && p->inproc != NULL ? p->inproc((const char *const *)argv, argc) : 0;
}

const char *
ag_prog_entry(const char *base)
{
	size_t i;

	for (i = 0; ag_progs[i] != NULL; i++)
		if (ag_progs[i]->entry_names != NULL &&
		    ag_walk_in_list(ag_progs[i]->entry_names, base))
			return ag_progs[i]->names[0];
	return NULL;
}

const char *
ag_prog_readonly_note(const char *name, const char *sub)
{
	const struct ag_prog *p;

	if (name == NULL || sub == NULL || (p = ag_prog_lookup(ag_base_name(name))) == NULL ||
	    p->readonly_subs == NULL || !ag_walk_in_list(p->readonly_subs, sub))
		return NULL;
	return p->readonly_note;
}

int
ag_prog_maybe_alias(const struct ag_prog *p, const char *word)
{
	return p != NULL && p->builtin_subs != NULL && !ag_walk_in_list(p->builtin_subs, word);
}

int
ag_prog_dashed(const char *path, const char *argv0, const struct ag_prog **p,
    const char **sub)
{
	const char *pb = strrchr(path, '/'), *ab = argv0 != NULL ? strrchr(argv0, '/') : NULL;
	size_t i, n;

	pb = pb != NULL ? pb + 1 : path;
	ab = argv0 == NULL ? NULL : ab != NULL ? ab + 1 : argv0;
	for (i = 0; ag_progs[i] != NULL; i++) {
		const char *d = ag_progs[i]->dashed;

		if (d == NULL)
			continue;
		n = strlen(d);
		/* the helper directory's git-push, or a link named so */
		if (strncmp(pb, d, n) == 0 && pb[n] != '\0') {
			*p = ag_progs[i];
			*sub = pb + n;
			return 1;
		}
		/* git itself, told by argv[0] which command it is */
		if (ab != NULL && ag_prog_lookup(pb) == ag_progs[i] && strncmp(ab, d, n) == 0 &&
		    ab[n] != '\0') {
			*p = ag_progs[i];
			*sub = ab + n;
			return 1;
		}
	}
	return 0;
}

const struct ag_prog *
ag_prog_lookup(const char *name)
{
	struct ent key = { name, NULL }, *e;
	size_t i;

	reg_init();
	e = bsearch(&key, reg.names, reg.nnames, sizeof(reg.names[0]), cmp_ent);
	if (e != NULL)
		return e->prog;
	for (i = 0; i < reg.nprefixes; i++)
		if (strncmp(name, reg.prefixes[i].name, strlen(reg.prefixes[i].name) - 1) == 0)
			return reg.prefixes[i].prog;
	return NULL;
}

int
ag_prog_registry_check(char *why, size_t whysz)
{
	size_t i, k;

	reg_init();
	if (reg.problem[0] != '\0') {
		snprintf(why, whysz, "%s", reg.problem);
		return -1;
	}
	for (i = 0; ag_progs[i] != NULL; i++)
		for (k = 0; ag_progs[i]->names[k] != NULL; k++) {
			const char *n = ag_progs[i]->names[k];

			if (n[strlen(n) - 1] != '*' && ag_prog_lookup(n) != ag_progs[i]) {
				snprintf(why, whysz, "'%s' does not find its descriptor", n);
				return -1;
			}
		}
	return 0;
}

int
ag_prog_allowed(const struct ag_prog *p, const struct ag_profile *prof)
{
	size_t i;

	if (prof == NULL)
		return 1;
	for (i = 0; i < prof->nallow; i++) {
		if (prof->allow[i].command != NULL && ag_walk_in_list(p->names, prof->allow[i].base))
			return 1;
	}
	return 0;
}

const char *const *
ag_policy_wrappers(void)
{
	reg_init();
	return reg.wrappers;
}

/* ---- option parsing for the hooks --------------------------------------- */

/*
 * GNU getopt and git accept any unambiguous prefix of a long option
 * ("sort --outp=F" is --output), so an option is named by the first of
 * ours it is a prefix of.  Options that make a program more permissive
 * (sed --sandbox) are left out of these lists: they count only when
 * written in full.
 */
const char *
ag_prog_canon_long(const char *s, size_t nl, const char *const *a, const char *const *b)
{
	const char *const *lv;
	const char *first = NULL;
	int k;

	if (nl < 3)
		return NULL;
	for (k = 0; k < 2; k++)
		for (lv = k ? b : a; lv && *lv; lv++)
			if (strncmp(*lv, s, nl) == 0) {
				if ((*lv)[nl] == '\0')
					return *lv;
				if (first == NULL)
					first = *lv;
			}
	return first;
}

void
ag_prog_parse_opts(struct ag_walker *w, struct ag_arg *a, size_t na, size_t start,
    const struct ag_optspec *sp, ag_opt_fn fn, void *ud)
{
	size_t i;
	int only_operands = 0;

	for (i = start; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (only_operands || s[0] != '-' || s[1] == '\0') {
			fn(w, ud, NULL, s);
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *eq = strchr(s, '=');
			size_t nl = eq ? (size_t)(eq - s) : strlen(s);
			const char *canon = ag_prog_canon_long(s, nl, sp->long_val, sp->long_flag);
			const char *const *lv;
			char on[64];
			int takes = 0;

			if (canon != NULL)
				snprintf(on, sizeof(on), "%s", canon);
			else
				snprintf(on, sizeof(on), "%.*s", (int)(nl < 60 ? nl : 60), s);
			for (lv = sp->long_val; lv && *lv; lv++)
				if (strcmp(*lv, on) == 0)
					takes = 1;
			if (eq != NULL)
				fn(w, ud, on, eq + 1);
			else if (takes && i + 1 < na) {
				fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
				i++;
			} else
				fn(w, ud, on, NULL);
			continue;
		}
		{
			const char *c;

			for (c = s + 1; *c; c++) {
				char on[3] = { '-', *c, '\0' };

				if (sp->short_val && strchr(sp->short_val, *c)) {
					if (c[1] != '\0')
						fn(w, ud, on, c + 1);
					else if (i + 1 < na) {
						fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
						i++;
					} else
						fn(w, ud, on, "");
					break;
				}
				fn(w, ud, on, NULL);
			}
		}
	}
}

/*
 * git and find take some arguments as options, so a word the gateway cannot
 * see could be an option that writes a file or runs a program.  A
 * non-literal is accepted only where it is the value of an option that
 * takes one, or after "--".
 */
int
ag_prog_nonlit_option(const struct ag_arg *a, size_t na, const char *const *valopts,
    size_t *bad)
{
	size_t i;
	int after_dd = 0;

	for (i = 1; i < na; i++) {
		if (a[i].lit != NULL) {
			if (strcmp(a[i].lit, "--") == 0)
				after_dd = 1;
			continue;
		}
		if (after_dd)
			continue;
		if (a[i - 1].lit != NULL && ag_walk_in_list(valopts, a[i - 1].lit))
			continue;
		*bad = i;
		return 1;
	}
	return 0;
}

/* Append v to the operand list (grown 16 at a time); out of memory: w->oom. */
void
ag_prog_operand(struct ag_walker *w, struct ag_operands *o, const char *v)
{
	const char **n;

	if (o->n % 16 == 0) {
		n = realloc(o->v, (o->n + 16) * sizeof(*n));
		if (n == NULL) {
			w->oom = 1;
			return;
		}
		o->v = n;
	}
	o->v[o->n++] = v;
}
