/*
 * walker.h - the policy's private interface between its files: the state
 * of one decision (struct ag_walker) and the operations the files of
 * src/policy/ and the program descriptors in src/policy/progs/ share.
 * Nothing outside src/policy/ includes it; the part's interface is
 * policy.h (and prog.h for what the sandbox and the environment filter
 * read from the program registry).
 *
 * Who does what:
 *   policy.c    entry points, the walk over the tree, entries and refusals
 *   command.c   one simple command: builtin, function or program, its rule,
 *               its program descriptor, the command a wrapper runs
 *   rules.c     allow and deny rules: names, arguments, subcommands
 *   builtins.c  bash builtins
 *   paths.c     file access, redirections, protected paths, cd tracking
 *   taint.c     arithmetic: which names hold numbers
 *   resolve.c   PATH lookup and realpath caches
 *   progs.c     the program registry (prog.h) and the option parsing its
 *               hooks share
 *   progs/      the descriptors, one file per family of programs
 *
 * Conventions: a check that refuses records the refusal on the current
 * entry (ag_walk_refuse) and, where the caller must stop, returns 0 (or
 * AG_UNWRAP_DONE); out of memory sets w->oom and the decision fails closed.
 * Cross-file names start with ag_walk_ (the walker's) or ag_prog_ (the
 * registry's); everything else is static.
 */
#ifndef AG_POLICY_WALKER_H
#define AG_POLICY_WALKER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "parse/shparse.h"
#include "policy/policy.h"
#include "policy/prog.h"

#define AG_MAX_CWDS	8	/* possible working directories tracked after cd */

/*
 * The directories the shell may be in at a point of the line.  d is where
 * it is (resolved: relative names are opened from there); l is bash's
 * $PWD for it, from which a later `cd ..` or `cd link/..` starts
 * (bash's cd is logical unless -P).
 */
struct ag_cwdset {
	const char	*d[AG_MAX_CWDS];
	const char	*l[AG_MAX_CWDS];
	int		 n;
	int		 unknown;	/* a cd to somewhere the gateway cannot tell */
};

struct ag_pending {		/* an arithmetic use to re-check once taint is known */
	char	*name;
	long	 cmd;
};

/* One word of a simple command. */
struct ag_arg {
	const struct ag_sh_word	*w;
	char			*lit;	/* NULL: not a literal */
};

struct ag_walker {
	const struct ag_policy_ctx	*ctx;
	const struct ag_profile		*prof;
	const struct ag_sh_node		*tree;
	const char			*src;
	size_t				 srclen;
	const char			*pathenv;
	enum ag_verdict			 unknown_v;

	struct ag_policy_cmd		*cmds;
	size_t				 ncmds, capcmds;
	struct ag_arena			*strs;		/* the decision's: the cmds' strings
							 * and what the walk keeps */
	long				 cur;		/* entry refusals attach to */
	const char			*cname;		/* construct name for a lazy entry */
	size_t				 coff;

	const struct ag_cwdset		*cwd;
	struct ag_cwdset		 cwd0;
	const struct ag_sh_node		*root;		/* the whole line */
	const struct ag_sh_redir	*redirs;	/* the simple command's, while it is judged */
	size_t				 nredirs;
	int				 errexit;	/* `set -e` seen in the line's top list */
	const struct ag_cwdset		*cd_ok;		/* where the last cd goes when it
							 * succeeds; NULL: cannot tell */

	const char			**ints;		/* names assigned a literal integer */
	size_t				 nints, capints;
	struct ag_pending		*pend;
	size_t				 npend, cappend;
	const char			**funcs;
	size_t				 nfuncs, capfuncs;
	const struct ag_sh_node		**fdefs;	/* each funcs[i]'s definition */
	size_t				 nfdefs, capfdefs;
	int				 calls;		/* function calls being walked */

	const char			**writes;	/* ctx->record: the decision's */
	size_t				 nwrites, capwrites;
	const char			**inner;
	size_t				 ninner, capinner;

	char				*allowed_list;
	int				 allowed_own;	/* the walker frees it (rules.c) */
	const char			*home;		/* normalised ctx->home, or NULL */
	int				 cwd0state;	/* once: 0 not yet, 1 ok, -1 failed */
	int				 wrap;
	int				 oom;
	/* every rule that says decision: approve the walk met (matched
	 * allow rules, refusing deny rules, unknown): ids joined by ',' */
	char				 approve_seen[256];
	int				 approve_overflow;
	/*
	 * Last, and not zeroed with the rest (AG_WALKER_ZERO): each is
	 * written before it is read, and clearing 8 KiB was a fortieth of
	 * a decision.
	 */
	char				 cwd0res[PATH_MAX];	/* ctx->cwd resolved, */
	char				 homebuf[PATH_MAX];
};

/* The part of a walker to clear before a walk. */
#define AG_WALKER_ZERO	offsetof(struct ag_walker, cwd0res)

/* How a file is used (ag_walk_check_path). */
enum {
	AG_ACC_READ = 1,
	AG_ACC_WRITE = 2,
	AG_ACC_TREE = 4,	/* a whole directory lands here */
};

/* How a command is reached (ag_walk_command's flags). */
enum {
	AG_CF_PROG_ONLY = 0x01,		/* exec'd by a wrapper: no builtins or functions */
	AG_CF_BUILTIN_ONLY = 0x02,	/* `builtin X` */
	AG_CF_UNKNOWN_TAIL = 0x04,	/* xargs appends arguments nobody can see */
	AG_CF_NAME_ONLY = 0x08,		/* busybox applet: judged by name */
	AG_CF_NO_FUNCS = 0x10,		/* `command X` skips functions */
};

/* How ag_walk_word reads a word: as a shell word, or as arithmetic. */
enum { AG_WORD_PLAIN = 0, AG_WORD_ARITH = 1 };

/* ---- policy.c: entries, refusals, the walk ------------------------------ */

/* Record a refusal on the current entry (the first reason of the worst kind
 * is kept). */
void	ag_walk_refuse(struct ag_walker *w, enum ag_verdict v, const char *rule,
	    const char *fmt, ...) AG_PRINTF(4, 5);
/* The walk met rule (an id), which says decision: approve. */
void	ag_walk_approve_seen(struct ag_walker *w, const char *rule);
/* The current command is allowed by something other than an allow rule. */
void	ag_walk_allow_as(struct ag_walker *w, const char *rule, const char *fmt, ...)
	    AG_PRINTF(3, 4);
void	ag_walk_set_path(struct ag_walker *w, long idx, const char *path);
/* Short, printable excerpt of s for messages, in buf. */
const char *ag_walk_excerpt(const char *s, char *buf, size_t bufsz);
/* Zeroed memory and copies of strings that live as long as the decision;
 * NULL (w->oom set) when out of memory. */
void	*ag_walk_alloc(struct ag_walker *w, size_t sz);
char	*ag_walk_strndup(struct ag_walker *w, const char *s, size_t n);
char	*ag_walk_strdup(struct ag_walker *w, const char *s);
/*
 * A call of a function the line defined: its body walked again where it
 * is called (a relative path in it names the caller's directory's file),
 * and the caller's directory unknown after it when the body may cd.
 * NULL from ag_walk_function: name is no such function.
 */
const struct ag_sh_node *ag_walk_function(const struct ag_walker *w, const char *name);
void	ag_walk_call(struct ag_walker *w, const struct ag_sh_node *fn);

int	ag_walk_push(struct ag_walker *w, const char ***v, size_t *n, size_t *cap,
	    const char *s);
const char *ag_walk_env(const struct ag_walker *w, const char *name);
int	ag_walk_in_list(const char *const *l, const char *s);
int	ag_walk_is_function(const struct ag_walker *w, const char *name);
void	ag_walk_word(struct ag_walker *w, const struct ag_sh_word *wd, int arith);
/* 1 when name may be set (or unset, exported: how); 0 after refusing. */
int	ag_walk_var_name(struct ag_walker *w, const char *name, const char *how);

/* ---- command.c ---------------------------------------------------------- */

void	ag_walk_command(struct ag_walker *w, struct ag_arg *a, size_t na, int flags);
/* A command another one runs (a wrapper's, find -exec's, `command X`'s),
 * judged as a command of its own. */
void	ag_walk_nested(struct ag_walker *w, struct ag_arg *a, size_t na, int flags);
/* What the wrapper a[0] (described by p, named base) runs. */
void	ag_walk_inner(struct ag_walker *w, const struct ag_prog *p, const char *base,
	    struct ag_arg *a, size_t na, int flags);

/* ---- builtins.c --------------------------------------------------------- */

/* What the policy elsewhere needs to know about a bash builtin. */
enum {
	AG_BI_BUILTIN = 0x01,	/* it is one */
	AG_BI_ASSIGNS = 0x02,	/* assigns the variables its arguments name */
	AG_BI_CD = 0x04,	/* changes the directory (cd, pushd, popd) */
	AG_BI_CD_ARG = 0x08,	/* ... to the one its argument names (cd, pushd) */
	AG_BI_EXIT = 0x10,	/* leaves the shell or the function (exit, return) */
	AG_BI_TWIN = 0x20,	/* a harmless program of the same name does the same
				 * (coreutils echo, printf, test, true, ...) */
	AG_BI_PUBLIC = 0xff,
};

/* AG_BI_* of a builtin's name; 0 when it is none. */
unsigned ag_walk_builtin_flags(const char *name);
void	ag_walk_builtin(struct ag_walker *w, const char *name, struct ag_arg *a, size_t na,
	    int flags);

/* ---- rules.c ------------------------------------------------------------ */

int	ag_walk_has_nonlit(const struct ag_arg *a, size_t na);
const char *ag_walk_rule_id(const struct ag_walker *w, const struct ag_rule *r, int deny,
	    size_t i, char *buf, size_t bufsz);
/* Does rule r name the same file as (name, real)? */
int	ag_walk_rule_matches(struct ag_walker *w, const struct ag_rule *r, const char *name,
	    const char *real, int by_name_only);
/* How ag_walk_pick_rule tells that a later rule names the same program:
 * as ag_walk_rule_matches does (by file, or by name only), or as a builtin
 * rule's name. */
enum ag_walk_pick { AG_PICK_FILE = 0, AG_PICK_NAME, AG_PICK_BUILTIN };
/* Allow rule i0 names the program (name, resolved to real); the rule that
 * judges this command: i0, or when i0's argv does not match the words a
 * later rule for the same program whose argv does or that has none. */
size_t	ag_walk_pick_rule(struct ag_walker *w, size_t i0, enum ag_walk_pick how,
	    const char *name, const char *real, struct ag_arg *a, size_t na);
/* Deny rules: 1 when one refuses the command (refusal recorded). */
int	ag_walk_deny_hit(struct ag_walker *w, const char *base, struct ag_arg *a, size_t na,
	    int flags);
int	ag_walk_rule_args_ok(struct ag_walker *w, const struct ag_rule *r, const char *rid,
	    const char *base, struct ag_arg *a, size_t na, int flags);
const char *ag_walk_allowed_list(struct ag_walker *w);
void	ag_walk_refuse_unknown(struct ag_walker *w, const char *name, const char *why);

/* The subcommand's index after p's global options (p NULL: none) */
size_t	ag_walk_subcommand(struct ag_walker *w, const struct ag_rule *r, const char *rid,
	    const char *base, const struct ag_prog *p, struct ag_arg *a, size_t na,
	    const char **cdir, int *bad);

/* ---- paths.c ------------------------------------------------------------ */

/*
 * 1 when the profile is exec-judged (ag_profile_exec_judged): what the
 * typed line cannot see (an expansion, xargs' input, a redirection to
 * "$f") is left to the kernel and the exec supervisor instead of refused.
 */
int	ag_walk_exec_judged(const struct ag_walker *w);

/* 1 when a deny rule of the profile names a shell builtin: no exec shows
 * one, so what the line does not show could be it (command.c); and for
 * a clean-up line (ag_policy_ctx.cleanup), whose builtins run unjudged. */
int	ag_walk_denies_builtin(const struct ag_walker *w);

/* features.write_redirections: rules, once the simple command at w->cur is
 * judged: refuses its file-writing redirections unless an allow rule let
 * it run. */
void	ag_walk_write_redirs_ruled(struct ag_walker *w, const struct ag_sh_redir *r, size_t nr);

/* Check one file access (AG_ACC_*) at literal path p, relative to base or to
 * every directory the shell may be in. */
void	ag_walk_check_path(struct ag_walker *w, const char *p, int acc, const char *base);
/* A file a program writes (tree: a whole directory may land there); a
 * relative p is taken from cdir (git -C) when it is not NULL. */
void	ag_walk_write(struct ag_walker *w, const char *cdir, const char *p, int tree);
void	ag_walk_redirs(struct ag_walker *w, const struct ag_sh_redir *r, size_t nr);
char	*ag_walk_word_path(const struct ag_sh_word *wd);
char	*ag_walk_tilde_arg(const struct ag_walker *w, const struct ag_sh_word *wd);
int	ag_walk_resolve_in(struct ag_walker *w, const char *dir, const char *p, char *abs,
	    size_t abssz, char *res, size_t ressz);
int	ag_walk_expand_entry(const char *e, const char *home, char *out, size_t outsz);
int	ag_walk_inside_list(const struct ag_walker *w, const struct ag_strlist *l,
	    const char *abs);
void	ag_walk_list_text(const struct ag_strlist *l, char *buf, size_t bufsz);
/* A cd to target (NULL: somewhere unknown) from every directory. */
void	ag_walk_cd(struct ag_walker *w, const char *target, int physical);
const struct ag_cwdset *ag_walk_cwd_union(struct ag_walker *w, const struct ag_cwdset *a,
	    const struct ag_cwdset *b);

/* ---- progs.c: what the descriptors' hooks share ------------------------- */

/* An option (opt "-x" or "--name", val its value or NULL) or an operand
 * (opt NULL), as ag_prog_parse_opts finds them. */
typedef void (*ag_opt_fn)(struct ag_walker *w, void *ud, const char *opt, const char *val);

/* GNU-style: options may follow operands; "--" ends options. */
void	ag_prog_parse_opts(struct ag_walker *w, struct ag_arg *a, size_t na, size_t start,
	    const struct ag_optspec *sp, ag_opt_fn fn, void *ud);
/* The option of a or b that s (nl bytes) is a prefix of, or NULL. */
const char *ag_prog_canon_long(const char *s, size_t nl, const char *const *a,
	    const char *const *b);
/* 1 (*bad its index) when a word the gateway cannot see stands where an
 * option could, other than as the value of one of valopts. */
int	ag_prog_nonlit_option(const struct ag_arg *a, size_t na, const char *const *valopts,
	    size_t *bad);

/* A hook's operands, freed by the hook. */
struct ag_operands {
	const char	**v;
	size_t		  n;
};
void	ag_prog_operand(struct ag_walker *w, struct ag_operands *o, const char *v);

/* ---- taint.c ------------------------------------------------------------ */

int	ag_walk_is_int_text(const char *s, size_t n);
int	ag_walk_word_is_int(const struct ag_sh_word *wd);
int	ag_walk_is_int_special(const char *name);
void	ag_walk_mark_int(struct ag_walker *w, const char *name, size_t n);
void	ag_walk_arith_use(struct ag_walker *w, const char *name, size_t n);
void	ag_walk_arith_scan(struct ag_walker *w, const char *s, size_t n);
int	ag_walk_name_text(struct ag_walker *w, const char *s);
/* At the end: arithmetic uses of names the line also sets to non-numbers. */
void	ag_walk_taint_finish(struct ag_walker *w);

/* ---- resolve.c ---------------------------------------------------------- */

uint64_t ag_walk_hash(uint64_t h, const char *s);
/* name through pathenv, or realpath of an absolute name (pathenv NULL):
 * 0 found; -1 not found; -2 PATH has a relative or empty entry. */
int	ag_walk_lookup(const char *pathenv, const char *name, char *real, size_t realsz);
int	ag_walk_cached_resolve(const char *abs, char *out, size_t outsz);

#endif
