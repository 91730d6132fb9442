/*
 * sandbox_int.h - what the files of the kernel sandbox share (sandbox.c:
 * rulesets, seccomp, the child side, the environment; namespace.c: the
 * session's user, mount and PID namespaces).  Not for other parts: their
 * interface is sandbox.h.
 */
#ifndef AG_SANDBOX_INT_H
#define AG_SANDBOX_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "common/config.h"
#include "common/err.h"
#include "exec/bpf.h"
#include "exec/sandbox.h"
#include "exec/sockconnect.h"

struct plist {
	char	**v;
	size_t	  n, cap;
};

/* One mount operation in the session's namespace (see ns_apply). */
enum nsop_kind {
	NSOP_REMOUNT,	/* bind path onto itself, then remount with flags */
	NSOP_PIN,	/* bind onto itself only: a mount point cannot be renamed
			 * or removed, so a .git directory stays where it is */
	NSOP_TMPFS,	/* a fresh tmpfs on path, with flags */
	NSOP_RUN,	/* /run: a fresh read-only tmpfs, with the NSOP_KEEP
			 * paths that follow it bound back */
	NSOP_KEEP,	/* a path beneath /run, bound back; then flags */
	NSOP_BIND_CWD,	/* the keeper's working directory (the identity's
			 * persistent tmp, see ptmp.c) bound on path; then flags */
	NSOP_GONE,	/* a repository's part found unbound (ns_verify): nothing */
	NSOP_RDONLY,	/* the mount at path remounted in place with flags
			 * (read-only): no bind, so "/" itself can be */
};

struct nsop {
	enum nsop_kind	 kind;
	char		*path;
	unsigned long	 flags;
	long long	 size;		/* NSOP_TMPFS: its size in bytes */
	dev_t		 dev;		/* NSOP_REMOUNT, NSOP_PIN of a part the scan
					 * checked: what must be bound (ino 0: the
					 * path, a write root the profile names) */
	ino_t		 ino;
	int		 part;		/* of a git repository (ns_verify) */
};

/* The private /tmp of a developer-tier session without limits.tmp_size. */
#define AG_TMP_SIZE_DEFAULT	(512LL << 20)
/* How long an unused entry of a persistent /tmp stays without limits.tmp_age. */
#define AG_TMP_AGE_DEFAULT	(7L * 86400)

/*
 * The repository scan's bounds.  Past any of them the scan cannot say
 * that every git directory beneath the write roots is protected, so the
 * command is refused (namespace.c, scan_limit): never a silent stop.
 */
#define MAX_REPOS	1024	/* git repositories pinned per session */
#define SCAN_DEPTH	64	/* how deep write roots are searched for .git */
#define SCAN_ENTRIES	200000	/* directory entries looked at per scan */
#define MAX_RUN_KEEP	32	/* paths beneath /run a profile may name */

enum { RL_NPROC, RL_NOFILE, RL_FSIZE, RL_CPU, RL_AS, RL_DATA, RL_SIGPENDING, RL_COUNT };

/*
 * What the repository scan read in one directory, kept for the next scan
 * (namespace.c, scan_repos): while the directory's identity and ctime are
 * what they were, its entries are too, and it is not read again.
 */
struct scan_dir {
	char		 *name;		/* in the parent; NULL for a write root */
	dev_t		  dev;
	ino_t		  ino;
	struct timespec	  ctime;
	struct timespec	  read_at;	/* when the entries were read */
	size_t		  nentries;	/* what readdir returned, for the budget */
	int		  valid;	/* the fields below may be used */
	int		  repo;		/* SD_* below */
	struct scan_dir	**sub;		/* its directories, in readdir order */
	size_t		  nsub;
};

/* What a scan_dir's listing says about git (namespace.c, read_listing). */
#define SD_GITDIR	1	/* a git directory: HEAD, and objects/ and refs/
				 * or a commondir file (links count: git follows them) */
#define SD_COMMONDIR	2	/* it holds a commondir file */
#define SD_DOTGIT_FILE	4	/* it holds a .git that is a file or a link */
#define SD_TMPLINK	8	/* it holds a link into a persistent /tmp's host
				 * directory, or through /proc (a work tree
				 * git outside the gateway would follow) */
#define SD_ALL		15

struct ag_sandbox {
	enum ag_sandbox_mode	 mode;
	int			 abi;
	int			 outer_fd;	/* -1 when none */
	int			 inner_fd;	/* -1 when none */
	int			 inner_in_child;/* no preload: enter inner before exec */
	int			 nnp;
	int			 seccomp;
	struct ag_bpf		 filt;
	struct sock_fprog	 fprog;
	int			 rl_set[RL_COUNT];
	struct rlimit		 rl[RL_COUNT];
	/*
	 * The session's private user+mount namespace is built from a list of
	 * mount operations, in order: write roots remounted noexec, paths.exec
	 * roots given exec back (developer tier), a private tmpfs on /tmp
	 * (developer tier), and the protected paths beneath write roots bound
	 * read-only (developer tier).  ag_sandbox_refresh() appends to it.
	 */
	struct nsop		 *ops;
	size_t			  nops, capops;
	size_t			  nops_done;	/* applied in the namespace */
	int			  developer;	/* profile tier: developer */
	int			  private_tmp;	/* /tmp is the session's own (a tmpfs, or
						 * the identity's persistent directory) */
	int			  ptmp_fd;	/* that directory (O_PATH), bound on /tmp
						 * by the keeper; -1 when /tmp is a tmpfs */
	int			  tmp_writable;	/* and commands may write there */
	int			  shm_private;	/* /dev/shm is the session's own tmpfs */
	int			  shm_fd;	/* its root (O_PATH), as tmp_fd; -1 none */
	int			  tmp_fd;	/* its root (O_PATH), for Landlock: a rule
						 * on the mount point does not cover it */
	struct plist		  writes;	/* write roots, for refresh scans */
	struct scan_dir		 *scan;		/* one per write root: the last scan */
	size_t			  nscan;
	int			  scan_read;	/* a directory was read since the last save */
	struct plist		  repos;	/* .git directories already pinned */
	struct plist		  gitdirs;	/* every git directory the last complete
						 * scan met: the sweep after a command */
	long long		  cmd_start;	/* ns: when the last command started */
	int			  check_new;	/* the scan after a command: look into what
						 * it created (gitplant.c) */
	struct plist		  planted;	/* git directories so found, refused on */
	char			  planted_key[96];	/* whose: sb_identity_key */
	long long		  check_since;	/* look into git directories born since
						 * (ns; a command's check may not have run) */
	int			  planted_stuck;	/* some of it could not be set aside */
	char			  planted_now[PATH_MAX + 128];	/* what the scan after
						 * the last command found, or "" */
	char			  refusal[PATH_MAX + 256];	/* why the scan refused
						 * (a hard-linked protected file, a limit) */
	int			  ns_user_fd;	/* the namespace, built once; -1 none */
	int			  ns_mnt_fd;
	int			  ns_pid_fd;	/* the session's PID namespace; -1 none */
	int			  ns_ipc_fd;	/* its System V IPC namespace; -1 none */
	int			  private_net;	/* a network namespace: its loopback only */
	int			  ns_net_fd;	/* it; -1 none */
	int			  egress;	/* the profile reaches hosts through the proxy */
	int			  egress_fd[2];	/* its listeners inside the namespace; -1 none */
	int			  negress;
	int			  ns_step;	/* the keeper's failed step (exit status) */
	int			  proc_fd;	/* its /proc (O_PATH), for Landlock; -1 none */
	int			  ctl_fd;	/* to that namespace's init (sweep) */
	pid_t			  keeper;	/* holds the namespaces; 0 none */
	char			*preload;	/* agsandbox.so when used */
	char			*note;
	struct plist		 exec;		/* files with EXECUTE */
	/* where a command's UNIX sockets may connect by name (sockconnect.h):
	 * the session's own writable mounts, and network.unix */
	struct plist		 unix_roots;
	struct plist		 unix_names;
	struct ag_unix_rules	 unix_rules;
	/*
	 * Strict tier: what the inner ruleset was built from, kept so that
	 * ag_sandbox_grant_once() can build a variant for one command.
	 */
	struct plist		 kept_progdirs, kept_holes, kept_reads;
	int			 once_fd;	/* that variant while it is in force; -1 */
	size_t			 nrules;
	/* what the rules were computed from, for ag_sandbox_matches() */
	const struct ag_profile	*profile;
	char			*home;
	char			*cwd;		/* NULL when no path used it */
	char			*path_env;
	char			 guard[64];
	unsigned long		 generation;	/* new at each prepare: the session's
						 * runner process is made anew */
};

/* state used while building */
struct build {
	struct ag_sandbox	*sb;
	const struct ag_profile	*p;
	const char		*home;
	const char		*cwd;
	const char		*identity;	/* NULL: none */
	int			 used_cwd;
	struct plist		 progdirs;	/* directories whose files are holes */
	struct plist		 holes;		/* files never readable nor executable */
	struct plist		 reads;		/* read roots */
	struct plist		 writes;	/* write roots */
	struct plist		 execs;		/* developer tier: paths.exec roots */
	uint64_t		 rd_dir, rd_file;	/* what a read root grants */
	int			 rs_inner;	/* the inner ruleset being built */
	uint64_t		 h_inner, h_outer;
	uint64_t		 h_net, scoped;
	struct ag_err		*err;
};

/* sandbox.c */
int	sb_plist_add(struct plist *l, const char *s);
int	sb_plist_has(const struct plist *l, const char *s);
void	sb_plist_free(struct plist *l);
int	sb_path_within(const char *b, const char *a);
int	sb_note_add(struct ag_sandbox *sb, const char *what);

/* ptmp.c: the identity's persistent tmp directory, made if missing and
 * cleaned of what is older than max_age seconds; an O_PATH fd, or -1 with
 * why (then /tmp is a tmpfs of the session's own). */
int	sb_ptmp_open(const char *identity, long max_age, char *why, size_t whylen);
/* "UID" or "UID-NAME" (a digest for a name that is not plain): what is
 * kept per identity is named so (ptmp.c, scancache.c). */
void	sb_identity_key(const char *identity, char *out, size_t outsz);
/* ptmp.c: the bytes beneath the persistent tmp directory tfd (its
 * blocks), counted until past limit: 0 at most limit, 1 past it (*used),
 * -1 when it cannot be measured (a directory it cannot read, too deep, too
 * many entries), with why. */
int	sb_ptmp_usage(int tfd, long long limit, long long *used, char *why, size_t whylen);

/* namespace.c */

/*
 * The session's namespaces, planned from b's write roots and made once: a
 * user and mount namespace with the planned mounts, and a PID namespace
 * whose init holds /proc and sweeps it after every command.  0, or -1
 * with b->err (only when the sandbox is required and cannot be had).
 */
int	sb_ns_make(struct ag_sandbox *sb, struct build *b);
/* scancache.c: the scans' listings kept between sessions of one account
 * (sb->scan, one per write root, freshly allocated).  Load: 0, or -1 out
 * of memory; a missing or unusable cache leaves the scans empty. */
int	sb_scan_load(struct ag_sandbox *sb);
void	sb_scan_save(const struct ag_sandbox *sb);
/* The git directories holding what a command planted (sb->planted), kept
 * for the account's next connections: load merges, -1 out of memory. */
int	sb_planted_load(struct ag_sandbox *sb);
void	sb_planted_save(const struct ag_sandbox *sb);
/* A command is about to run (mark) or its check after it has run (clear);
 * the earliest time another gateway of the account marked (0: none),
 * the records of gateways that are gone added to stale. */
void	sb_pending_mark(void);
void	sb_pending_clear(void);
long long sb_pending_since(struct plist *stale);
/* gitlinks.c: what git would take for a git directory at dir, links
 * followed (SD_GITDIR, with SD_COMMONDIR), or 0. */
int	sb_git_kind(const char *dir);
/* The directory the file dir/name points to (prefix, as "gitdir: ",
 * first; relative to dir), canonical, into out (PATH_MAX bytes): 1, 0
 * when there is none (no such file, a dangling target: git would not
 * follow it either), -1 when it cannot be told (too long, a link loop),
 * -2 when git may resolve it otherwise (through /proc) or it leads into a
 * persistent /tmp, which the agent writes outside the write roots. */
int	sb_git_pointer(const char *dir, const char *name, const char *prefix, char *out,
	    size_t outsz);
/* target (as written), real (as the gateway resolved it): 1 when git may
 * resolve it otherwise or it leads into a persistent /tmp (above). */
int	sb_git_resolves_otherwise(const char *target, const char *real);
/* A core.worktree value (relative to gitdir, as git reads it): 0 when it
 * resolves beneath one of writes through no symbolic link that lies
 * beneath one of them (the agent could point it elsewhere later); else 1,
 * the path that fails into bad: such a link, or where the value leads. */
int	sb_git_worktree_outside(const char *gitdir, const char *value,
	    const struct plist *writes, char *bad, size_t badsz);
/* gitplant.c: 1 when gitdir holds a hook other than git's samples, a
 * config key not on git's own list (a core.worktree outside writes), or a
 * part it cannot read as git would (what names it), else 0. */
int	sb_git_planted(const char *gitdir, const struct plist *writes, char *what,
	    size_t whatsz);
/* gitplant.c: gitdir's core.worktree (config.worktree's, else config's),
 * unquoted, into out: 1, or 0 when it has none. */
int	sb_git_core_worktree(const char *gitdir, char *out, size_t outsz);
/* gitseq.c: 1 when one of gitdir's rebase-merge, rebase-apply, sequencer
 * (its name into *name) was made or changed at or after since (ns; 0: any
 * time) and holds what git runs when it is continued (an exec line, a
 * merge program: what says), else 0. */
int	sb_git_seq_planted(const char *gitdir, long long since, const char **name,
	    char *what, size_t whatsz);
/* Renames what it finds where git does not look (NAME.planted, or
 * NAME.RANDOM.planted when that is taken), as sb_git_set_aside: 0, or
 * -1 when some of it could not be set aside. */
int	sb_git_disarm(const char *gitdir, const struct plist *writes);
/* dir/name renamed to dir/name.planted (or, that name taken, to
 * dir/name.RANDOM.planted), as the caller, no link followed (a pointer
 * git would follow), its path into aside: 0, or -1.  A directory the
 * account made read-only is made writable for it and given its mode back. */
int	sb_git_set_aside(const char *dir, const char *name, char *aside, size_t asidesz);
/* path (O_PATH), no link followed anywhere in it: a link at its end is
 * opened as itself (namespace.c; the runner process's stat requests too). */
int	sb_open_nolinks(const char *path);
/* Ends the PID namespace (and whatever runs in it) and closes the fds. */
void	sb_ns_free(struct ag_sandbox *sb);
/* Forgets what the repository scans read (sb->scan). */
void	sb_scan_free(struct ag_sandbox *sb);

#endif
