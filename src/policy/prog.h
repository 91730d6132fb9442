/*
 * prog.h - what agentgate knows about particular programs, one descriptor
 * per program (or per family of names that behave alike), in the manner of
 * OpenSSH's keyimpls[]: static data where the knowledge is data (option
 * grammars, variable names), hooks where it is code (a sed script scanner,
 * xargs -I, where cp puts its sources).  Each family has a file in
 * src/policy/progs/; progs.c lists the descriptors and looks names up.
 *
 * Three readers, one descriptor:
 *  - the policy (command.c, rules.c): global options before a subcommand,
 *    the files a program writes, the command a wrapper runs;
 *  - the environment filter (envsan.c): the variables that make a program
 *    run other code;
 *  - the sandbox (exec/sandbox.c): what it removes from and forces into a
 *    command's environment so that an allowed program cannot be talked
 *    into running another (a pager, an editor, a hook).
 *
 * Adding a program: a descriptor in its family's file (or a new file), its
 * declaration at the end of this header and its line in ag_progs[]
 * (progs.c).  Deliberately C, not YAML: the grammars are part of the
 * security argument, reviewed with the code that reads them, and not an
 * administrator's to weaken.
 */
#ifndef AG_POLICY_PROG_H
#define AG_POLICY_PROG_H

#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"

struct ag_walker;		/* policy/walker.h: the decision under way */
struct ag_arg;			/* one word of the command */

/* A global option, before the subcommand (git -C DIR status). */
struct ag_gopt {
	const char	*name;
	unsigned	 flags;		/* AG_GO_* */
};

enum {
	AG_GO_VAL = 0x1,		/* takes a value, after '=' or as the next word */
	AG_GO_RISKY = 0x2,		/* refused unless the rule's allow_options names it */
	AG_GO_RISKY_SET = 0x4,	/* risky only as --opt=VALUE; alone it prints */
	AG_GO_CHDIR = 0x8,		/* its value is where later relative paths start */
};

/*
 * A GNU getopt grammar, for the check hooks (ag_prog_parse_opts): only the
 * options a hook looks at, and those that take a value, need be listed.
 */
struct ag_optspec {
	const char	  *short_val;	/* letters that take a value */
	const char *const *long_val;	/* long options that take a value */
	const char *const *long_flag;	/* long options without one that we look at */
};

/* One command, as a hook sees it. */
struct ag_progcall {
	const struct ag_prog	*prog;
	const char		*base;	/* the program's name as written, without a directory */
	struct ag_arg		*a;	/* the words, a[0] the program */
	size_t			 na;
	const char		*cdir;	/* a global -C DIR, or NULL; "" when it cannot be told */
	int			 flags;	/* AG_CF_* (walker.h): how the command was reached */
};

/* What an unwrap hook tells about the command it found. */
struct ag_unwrap {
	int	flags;		/* AG_CF_* for the inner command (starts as the
				 * wrapper's, plus AG_CF_PROG_ONLY) */
	char	repl[64];	/* xargs -I: words holding this come from input */
};

/* An unwrap hook's answer when there is nothing left to judge: it refused,
 * or it judged what runs itself. */
#define AG_UNWRAP_DONE	((size_t)-1)

enum {
	/* a wrapper whose inner command is judged like a command of its own;
	 * unwrapped without a rule naming it (and made executable by the
	 * strict tier's sandbox, ag_policy_wrappers) */
	AG_PROG_WRAPPER_SAFE = 0x01,
	/* runs programs with other rights or outside the gateway's view:
	 * refused unless a rule names it, and then unwrapped if it can be */
	AG_PROG_WRAPPER_RISKY = 0x02,
	/* its operands name files it writes: they must be literal and may not
	 * come from xargs or find; the check hook judges them */
	AG_PROG_WRITES_OPERANDS = 0x04,
	/* the sandbox forces env_set only when the profile allows the program
	 * (otherwise always: a pager or an editor is reached through others) */
	AG_PROG_DEFUSE_IF_ALLOWED = 0x08,
	/* every operand names something it does, not only the first (make's
	 * targets, gradle's tasks, maven's phases and goals) */
	AG_PROG_SUBS_ALL = 0x10,
	/* a first word +NAME picks a toolchain (rustup: cargo +nightly build) */
	AG_PROG_PLUS_TOOLCHAIN = 0x20,
	/*
	 * A risky wrapper whose programs the exec supervisor sees all the
	 * same: they reach the kernel as execs (strace, gdb), or the exec
	 * judge unwraps the one it runs in its own process (valgrind:
	 * inproc).  Where every exec is judged (ag_profile_exec_judged) it
	 * runs without a rule, unwrapped where its words show the command.
	 */
	AG_PROG_EXEC_SEEN = 0x40,
	/*
	 * Runs whatever code it is handed: a script, or text on its own
	 * command line (sh -c, python3 -c, perl -e).  Nothing in the policy
	 * turns on it; `agentgate policy suggest` flags an allow rule for it
	 * as a risk.
	 */
	AG_PROG_RUNS_CODE = 0x80,
};

/* An action of a program a deny rule may name (cargo publish), and what it
 * does, in words for `explain`. */
struct ag_action {
	const char	*name;
	const char	*what;
};

struct ag_prog {
	/* the names it is run by, NULL-terminated; a trailing '*' matches
	 * every name that starts so (the loader's versioned names) */
	const char *const	*names;
	unsigned		 flags;		/* AG_PROG_* */

	/* options before a subcommand, NULL-terminated */
	const struct ag_gopt	*global_opts;
	/* options whose value may be a word the gateway cannot see; anywhere
	 * else such a word could be an option that writes or runs something */
	const char *const	*valopts;
	/* the grammar the check hook parses the arguments with */
	struct ag_optspec	 opts;
	/* flag-only wrappers: the option words that take the next word */
	const char *const	*wrap_valued;

	/* where the command a wrapper runs starts (na: nowhere), or
	 * AG_UNWRAP_DONE */
	size_t	(*unwrap)(struct ag_walker *w, const struct ag_progcall *c,
		    struct ag_unwrap *u);
	/* the files it writes, the programs and scripts it runs: refusals
	 * are recorded on the walker */
	void	(*check)(struct ag_walker *w, const struct ag_progcall *c);

	/* environment variables (globs) that make it run or load other code,
	 * refused as assignments and dropped from captured environments
	 * (envsan.c) */
	const char *const	*env_filter;
	/* inside env_filter, the ones that only label its output */
	const char *const	*env_harmless;
	/* inside env_filter, the ones the developer tier lets through */
	const char *const	*env_developer;
	/* what the sandbox removes from every command's environment, and then
	 * sets ("NAME=VALUE") to defuse the program (exec/sandbox.c) */
	const char *const	*env_drop;
	const char *const	*env_set;

	/*
	 * How the program dispatches on its own name: run as "git-push" (the
	 * helper directory's program, a link, or the main binary with that
	 * argv[0]) git does what `git push` does.  The prefix, or NULL.
	 */
	const char		*dashed;
	/* subcommands that do what another one does, as pairs ("send-pack",
	 * "push"), NULL-terminated: a deny rule naming the action refuses
	 * every spelling of it */
	const char *const	*same_as;
	/* how else a word spells an action (npm's abbreviations, gradle's
	 * task abbreviations, maven's plugin goals): 1 when it may */
	int	(*spells)(const char *word, const char *action);
	/* its own subcommands, NULL-terminated, when any other word may be a
	 * user-defined alias the gateway cannot read (cargo's [alias]) */
	const char *const	*builtin_subs;
	/* why a word outside builtin_subs is refused, beyond aliases, for
	 * the message (git's help.autocorrect), or NULL */
	const char		*alias_note;
	/*
	 * Runs the program another word names (python -m pip): returns the
	 * index of the first argument after that word and puts the program's
	 * name in name; 0 when it does not (or a word before it is not
	 * literal: NULL in words).
	 */
	size_t	(*dispatch)(const char *const *words, size_t nwords, char *name, size_t namesz);
	/*
	 * Runs the program an operand names inside its own process, so that
	 * program's exec never reaches the kernel (valgrind): the operand's
	 * index in words, or 0 when there is none or a word before it is not
	 * literal (NULL).  One grammar for the typed line (its unwrap hook)
	 * and the exec judge (ag_prog_inproc).
	 */
	size_t	(*inproc)(const char *const *words, size_t nwords);
	/*
	 * Subcommands that write where the sandbox keeps files read-only
	 * (git's config), NULL-terminated, and what the gateway says when a
	 * command that ran one of them fails: the program's own error names
	 * the file, not why, nor what to do instead.
	 */
	const char *const	*readonly_subs;
	const char		*readonly_note;
	/* the file names of its entry points, run directly or by an
	 * interpreter (npm-cli.js): the program under another name */
	const char *const	*entry_names;
	/*
	 * Where its file lives besides PATH, absolute, NULL-terminated: the
	 * helper directory's own binary (git's git-core/git, whose git-NAME
	 * are links to it), the loader's paths, an entry point.  The exec
	 * judge knows the program by its file there (ag_prog_files_match).
	 */
	const char *const	*files;

	/* for `explain`: what it runs besides itself, and the actions a deny
	 * rule may name ({ NULL, NULL }-terminated) */
	const char		*runs;
	const struct ag_action	*actions;
};

/* The subcommand sub of p as the action it performs ("send-pack" ->
 * "push"); sub itself when it is no other's. */
const char *ag_prog_action(const struct ag_prog *p, const char *sub);

/* 1 when word, as p's subcommand (or target, task, goal), may perform the
 * action a rule names: the action itself, a same_as alias of it, or a
 * spelling p's spells hook knows.  p may be NULL. */
int	ag_prog_spells(const struct ag_prog *p, const char *word, const char *action);

/* 1 when word may be a user-defined alias of p (not one of its own
 * subcommands, and p reads aliases the gateway cannot see). */
int	ag_prog_maybe_alias(const struct ag_prog *p, const char *word);

/*
 * An exec of a program that dispatches on its name (path's last component
 * or argv[0]'s, "git-push"): the registry's program (*p) and the
 * subcommand the name runs (*sub, pointing into path or argv0).  0 when
 * the exec is no such thing.
 */
int	ag_prog_dashed(const char *path, const char *argv0, const struct ag_prog **p,
	    const char **sub);

/*
 * An exec of path (argv) that runs another program in its own process:
 * the index in argv of that program (judge it and what follows as the
 * exec), or 0.
 */
size_t	ag_prog_inproc(const char *path, char *const *argv, size_t argc);

/* Longest path ag_prog_files_match reports. */
#define AG_PROG_PATH	256

/*
 * The registry's programs as files: the paths (at most max, one per
 * name) under which the registry knows the file (dev, ino), every
 * program name looked up in the system's bin directories and in pathvar
 * (a PATH value), and the descriptors' files.  The table is built at the
 * first call and again when pathvar changes.  How many were put in out.
 */
size_t	ag_prog_files_match(const char *pathvar, dev_t dev, ino_t ino,
	    char (*out)[AG_PROG_PATH], size_t max);

/* The program (its first name) whose entry point file name is base
 * (npm-cli.js is npm), or NULL. */
const char *ag_prog_entry(const char *base);

/* What to say when a command that ran name's subcommand sub failed,
 * where the sandbox keeps what it writes read-only (readonly_note), or
 * NULL.  name may have a directory. */
const char *ag_prog_readonly_note(const char *name, const char *sub);

/* The descriptor for a program name (no directory), or NULL. */
const struct ag_prog *ag_prog_lookup(const char *name);

/* Every descriptor, NULL-terminated, in the order of progs.c. */
extern const struct ag_prog *const ag_progs[];

/* 1 when an allow rule of prof names the program (by its last component,
 * as the sandbox needs it), or prof is NULL. */
int	ag_prog_allowed(const struct ag_prog *p, const struct ag_profile *prof);

/*
 * For the unit tests: 0 when the registry is sound (every name once, the
 * index holds them all); -1 and why otherwise.
 */
int	ag_prog_registry_check(char *why, size_t whysz);

/* ---- the descriptors (src/policy/progs/) -------------------------------- */

/* wrappers.c */
extern const struct ag_prog ag_prog_env, ag_prog_nice, ag_prog_nohup, ag_prog_setsid,
    ag_prog_unbuffer, ag_prog_stdbuf, ag_prog_time, ag_prog_timeout, ag_prog_xargs,
    ag_prog_sudo, ag_prog_flock, ag_prog_watch, ag_prog_strace, ag_prog_ltrace,
    ag_prog_gdb, ag_prog_valgrind, ag_prog_busybox, ag_prog_loader, ag_prog_opaque, ag_prog_exec;
/* coreutils.c */
extern const struct ag_prog ag_prog_tee, ag_prog_touch, ag_prog_mkdir, ag_prog_rm,
    ag_prog_rmdir, ag_prog_truncate, ag_prog_shred, ag_prog_unlink, ag_prog_sort,
    ag_prog_cp, ag_prog_mv, ag_prog_ln, ag_prog_install, ag_prog_dd;
/* sed.c */
extern const struct ag_prog ag_prog_sed;
/* pagers.c */
extern const struct ag_prog ag_prog_man, ag_prog_less, ag_prog_more, ag_prog_vim,
    ag_prog_emacs;
/* git.c */
extern const struct ag_prog ag_prog_git;
/* tools.c */
extern const struct ag_prog ag_prog_docker, ag_prog_kubectl, ag_prog_systemctl, ag_prog_apt,
    ag_prog_make, ag_prog_tar, ag_prog_grep, ag_prog_rsync, ag_prog_cvs, ag_prog_curl,
    ag_prog_wget, ag_prog_ssh, ag_prog_gpg;
/* langs.c */
extern const struct ag_prog ag_prog_python, ag_prog_perl, ag_prog_ruby, ag_prog_node,
    ag_prog_java, ag_prog_lua, ag_prog_tclsh, ag_prog_tex, ag_prog_shell;
/* toolchains.c */
extern const struct ag_prog ag_prog_cargo, ag_prog_rustc, ag_prog_rustfmt, ag_prog_clippy, ag_prog_go, ag_prog_npm,
    ag_prog_yarn, ag_prog_pnpm, ag_prog_corepack, ag_prog_pip, ag_prog_twine, ag_prog_pypub, ag_prog_pytest,
    ag_prog_pylint, ag_prog_mvn, ag_prog_gradle, ag_prog_javac;
/* find.c */
extern const struct ag_prog ag_prog_find;

#endif
