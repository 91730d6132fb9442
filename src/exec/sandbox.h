/*
 * sandbox.h - the kernel sandbox around each command: Landlock execute,
 * read and write allow-lists, TCP port rules and scoping, no_new_privs,
 * a small seccomp filter, and the profile's resource limits.
 *
 * How it holds together (details in doc/sandbox.md and sandbox.c):
 *  - the parent (gateway) builds two Landlock rulesets once per prepare:
 *      outer: write-class rights, TCP ports, scope (signals, abstract unix)
 *      inner: execute and read rights
 *  - the forked child (ag_sandbox_child, ag_sandbox_child_fds) sets
 *    rlimits and no_new_privs, joins the noexec namespace, installs the
 *    seccomp filter, enters the outer ruleset and leaves the inner
 *    ruleset's fd at AG_SANDBOX_FD;
 *  - the runner shell is executed with LD_PRELOAD naming the small
 *    agsandbox.so, whose constructor enters the inner ruleset before the
 *    shell's main() runs and removes LD_PRELOAD and the fd from the shell.
 *    So the runner is executed once, and afterwards nothing it starts can
 *    execute or even read it again.
 *
 * Ownership: ag_sandbox_prepare() returns an object the caller frees with
 * ag_sandbox_free(); it holds two O_CLOEXEC ruleset fds and may be reused
 * for any number of commands as long as profile, PATH, home and cwd-relative
 * paths have not changed (ag_sandbox_matches()).
 */
#ifndef AG_SANDBOX_H
#define AG_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/err.h"
#include "exec/sockconnect.h"

/* fd where the child leaves the inner ruleset for agsandbox.so */
#define AG_SANDBOX_FD		4
/* environment variable naming that fd; removed by agsandbox.so */
#define AG_SANDBOX_FD_ENV	"AGENTGATE_SANDBOX_FD"
/* The Landlock ABI with every right the sandbox uses (fs, refer, truncate,
 * net, scope); `required` needs less where another mechanism stands in
 * (ag_sandbox_guarantees) */
#define AG_SANDBOX_ABI_NEEDED	6

struct ag_sandbox;

/*
 * Test hooks, set once from main's option parsing (hidden options on the
 * administrator's ForceCommand line) or by unit tests; never from the
 * environment, which a client may influence.
 *  set_test_abi: pretend the kernel offers at most this Landlock ABI
 *                (0 = no Landlock); -1 restores detection.
 *  set_preload:  path of agsandbox.so (default: AG_PKGLIBDIR/agsandbox.so,
 *                then agsandbox.so next to the running binary).
 */
void	ag_sandbox_set_test_abi(int abi);
void	ag_sandbox_set_preload(const char *path);

/*
 * Where identities' persistent /tmp directories live (ptmp.c): root's,
 * the gateway group's, mode 1770.  set_tmp_base: another such directory
 * (tests; the same checks apply to it).
 */
#define AG_TMPDIR_BASE		AG_STATEDIR "/tmp"
void	ag_sandbox_set_tmp_base(const char *dir);
const char *ag_sandbox_tmp_base(void);

/* The Landlock ABI of this kernel (after the test override); 0 = none. */
int	ag_sandbox_abi(void);

/*
 * Parent side.  Resolves the profile's allowed programs through env's PATH,
 * works out what they need, and builds the rulesets.  Honours
 * gateway.sandbox: `off` returns an object that only applies rlimits;
 * `required` fails (NULL, err says why) when the kernel lacks what the
 * rules need; `best_effort` returns an object whose ag_sandbox_note() says
 * what is missing.  home and cwd expand "~" and relative entries of the
 * profile's paths.  identity (NULL: none) names the persistent /tmp the
 * session gets where its profile has one (paths.tmp, ptmp.c).
 */
struct ag_sandbox *ag_sandbox_prepare(const struct ag_config *cfg, const struct ag_profile *p,
	    const char *identity, const char *home, const char *cwd, char *const *env,
	    struct ag_err *err);
void	ag_sandbox_free(struct ag_sandbox *sb);

/*
 * Before each command: git directories that appeared beneath the write
 * roots since the last call are pinned and get their config and hooks
 * bound read-only in the session's namespace.  0 ok, -1 when that failed
 * (err says why): the command must not run.
 */
int	ag_sandbox_refresh(struct ag_sandbox *sb, struct ag_err *err);
/*
 * After a command has ended: the write roots searched again, and a git
 * directory the command created looked into.  What git would run from
 * there (a hook, a config key not on git's own list, a part that cannot
 * be read as git reads it), or NULL; commands are refused from now on
 * while it is there (ag_sandbox_refresh says so).  *set_aside: 1 when all
 * of it was renamed where git does not look, 0 when some could not be.
 */
const char *ag_sandbox_after(struct ag_sandbox *sb, int *set_aside);
/*
 * Just before the runner starts: recorded for the account's other
 * connections, whose scans look into git directories made since, until
 * ag_sandbox_after has run (or the gateway is found gone).
 */
void	ag_sandbox_command_starts(struct ag_sandbox *sb);

/*
 * Strict tier, for the one command a validator allowed (validate/): the
 * programs it names (absolute paths; their interpreters follow) may
 * execute, and their data trees be read, in the commands started until
 * ag_sandbox_grant_end().  Shells and the runner stay holes whatever is
 * asked.  A no-op in the developer tier (whatever may be read may run)
 * and when nothing new is named.  0, or -1 with err: the command must not
 * run.
 */
int	ag_sandbox_grant_once(struct ag_sandbox *sb, const char *const *progs, size_t n,
	    struct ag_err *err);
void	ag_sandbox_grant_end(struct ag_sandbox *sb);

/* 1 when sb was prepared for this profile, home, cwd and PATH. */
int	ag_sandbox_matches(const struct ag_sandbox *sb, const struct ag_profile *p,
	    const char *home, const char *cwd, char *const *env);

/* NULL, or a one-line description of what best_effort had to leave out. */
const char *ag_sandbox_note(const struct ag_sandbox *sb);
/* 1 when /tmp is the session's own (not the host's): a tmpfs, or the
 * identity's persistent directory; 2 for the latter. */
int	ag_sandbox_private_tmp(const struct ag_sandbox *sb);
/* The persistent /tmp's bytes against limits.tmp_disk (default
 * AG_TMP_DISK_DEFAULT), for the gateway to refuse commands past it:
 * 0 within it or no persistent /tmp, 1 past it, -1 it cannot be
 * measured; *used and *limit set, and why for -1. */
int	ag_sandbox_tmp_usage(const struct ag_sandbox *sb, long long *used, long long *limit,
	    char *why, size_t whylen);
#define AG_TMP_DISK_DEFAULT	(4LL << 30)
/* 1 when Landlock rules are in force (not off, kernel has Landlock). */
int	ag_sandbox_active(const struct ag_sandbox *sb);

/*
 * The environment for the runner: a heap copy of env (free with
 * ag_sandbox_env_free) with the defusing settings of
 * ag_sandbox_defuse_env() and, when active, LD_PRELOAD and
 * AG_SANDBOX_FD_ENV for agsandbox.so.  NULL on allocation failure.
 */
char	**ag_sandbox_env(const struct ag_sandbox *sb, char *const *env);
void	ag_sandbox_env_free(char **env);

/*
 * Force safe settings for programs whose configuration can start others
 * (git, less, man, vim) into *envp, a NULL-terminated heap vector of heap
 * strings which may be reallocated: existing entries for these names are
 * replaced.  0 ok, -1 on allocation failure (*envp still valid).
 */
int	ag_sandbox_defuse_env(char ***envp, const struct ag_profile *p);

/*
 * A line of bash the runner puts before the command: it exits 126 when
 * agsandbox.so did not enter the inner ruleset (AG_SANDBOX_FD still open),
 * so a missing or ignored preload fails closed.  "" when not active.
 */
const char *ag_sandbox_script_guard(const struct ag_sandbox *sb);

/*
 * Child side, all async-signal-safe (no allocation):
 *
 * ag_sandbox_child_enter: after fork, before the child rearranges its fds
 * (the sandbox's own fds are still where the parent had them): rlimits,
 * no_new_privs, the session's user, mount and PID namespaces.  1 when the
 * child has joined them: its children are then born in the session's PID
 * namespace, so the runner forks once more (see runner.c); 0 when there
 * is none.
 *
 * ag_sandbox_child_confine: seccomp, the outer ruleset (after which the
 * process can no longer mount); the inner ruleset's fd is kept aside in
 * *inner (-1 when there is none) for the next step.  ag_sandbox_child
 * does both steps in one.
 *
 * ag_sandbox_child_fds: once fds 0 .. first-1 are in place (first <=
 * AG_SANDBOX_FD), and the caller's nkeep fds right above AG_SANDBOX_FD,
 * puts the inner ruleset (inner, from the step before) at AG_SANDBOX_FD
 * and closes every other fd from first up; replaces the caller's own
 * close loop.
 *
 * Both return 0, or -1 with errno set: the caller must then _exit without
 * running anything.  None of them writes to memory but its own stack, so
 * a child that shares the gateway's memory until it execs (runner.c) may
 * call them.  ag_sandbox_child_joins says whether ag_sandbox_child_enter
 * would join namespaces (and the child must fork once more).
 */
int	ag_sandbox_child_enter(const struct ag_sandbox *sb);
int	ag_sandbox_child_joins(const struct ag_sandbox *sb);
int	ag_sandbox_child_confine(const struct ag_sandbox *sb, int *inner);
int	ag_sandbox_child(const struct ag_sandbox *sb, int *inner);
int	ag_sandbox_child_fds(const struct ag_sandbox *sb, int inner, int first, int nkeep);

/*
 * The session's runner process (zygote.h) enters what the child above
 * would: ag_sandbox_zygote_kit fills k with it, or returns -1 when this
 * sandbox's commands are forked by the gateway (no namespaces, or
 * best_effort's runner that confines itself).  Its fds stay the
 * sandbox's.  ag_sandbox_generation changes whenever a prepare made a new
 * boundary (a runner process of an older one must go);
 * ag_sandbox_inner_fd is the ruleset the next command's runner enters
 * (a grant's variant while one is in force), or -1.
 */
struct ag_zygote_kit;
int	ag_sandbox_zygote_kit(const struct ag_sandbox *sb, struct ag_zygote_kit *k);
unsigned long ag_sandbox_generation(const struct ag_sandbox *sb);
int	ag_sandbox_inner_fd(const struct ag_sandbox *sb);
/* Where its commands' UNIX sockets may connect by name (sockconnect.h). */
const struct ag_unix_rules *ag_sandbox_unix_rules(const struct ag_sandbox *sb);

/*
 * After each command: every process the command left in the session's PID
 * namespace is killed (its init does it).  0, or -1 when the namespace is
 * gone (the next command cannot start in it either).
 */
int	ag_sandbox_sweep(const struct ag_sandbox *sb);

/* The helper that holds the session's namespaces: a child of the gateway
 * that ag_runner_reap_all() must spare.  0 when there is none. */
pid_t	ag_sandbox_keeper(const struct ag_sandbox *sb);

/*
 * Where the session's egress proxy listens inside its network namespace
 * (127.0.0.1 and ::1); the sandbox puts HTTP_PROXY, HTTPS_PROXY, ALL_PROXY
 * and NO_PROXY in every command's environment for it.
 */
#define AG_EGRESS_PORT	3128

/*
 * The listeners made inside the namespace for a profile with network.allow
 * (egress/egress.h accepts on them): up to two fds into fds, their number
 * returned; 0 when the session has none.  The sandbox keeps them open.
 */
int	ag_sandbox_egress_fds(const struct ag_sandbox *sb, int fds[2]);

/* The system's sftp-server program, or NULL (file_transfer.sftp runs it). */
const char *ag_sandbox_sftp_server(void);

/* Read-only view for tests and `doctor`: numbers of rules and programs. */
/*
 * What the sandbox guarantees for a profile on a kernel with Landlock ABI
 * abi, and by which mechanism; one list for ag_sandbox_prepare() (which,
 * under `sandbox: required`, refuses when a guarantee the profile states
 * has none) and `agentgate doctor` (which prints it).
 */
struct ag_guarantee {
	const char	*what;		/* "writes only beneath paths.write" */
	const char	*how;		/* the mechanism here; NULL: none */
	const char	*needs;		/* what would provide it, when how is NULL */
	int		 stated;	/* the profile promises it: required refuses */
};
#define AG_GUARANTEES_MAX	16
size_t	ag_sandbox_guarantees(const struct ag_profile *p, int abi,
	    struct ag_guarantee *g, size_t max);

/*
 * The terminal of one command (the slave of the PTY the gateway made for
 * it, by fd): readable and writable by path for the command's tree, as no
 * other terminal of the host is.  0, or -1 with err.
 */
int	ag_sandbox_allow_terminal(const struct ag_sandbox *sb, int fd, struct ag_err *err);

struct ag_sandbox_info {
	int	abi;		/* effective ABI used */
	size_t	nexec;		/* files with execute permission */
	size_t	nrules;		/* Landlock rules in both rulesets */
	int	seccomp;	/* the memfd filter is installed */
};
void	ag_sandbox_get_info(const struct ag_sandbox *sb, struct ag_sandbox_info *info);
/* The i-th executable file (realpath), or NULL past the end. */
const char *ag_sandbox_exec_path(const struct ag_sandbox *sb, size_t i);

#endif
