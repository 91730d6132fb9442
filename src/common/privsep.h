/*
 * privsep.h - the gateway's one privilege: a group.
 *
 * Installed set-group-ID to a system group (default "agentgate",
 * ./configure --with-group), the gateway can write the audit log, the
 * spool and the recordings, and read secrets, none of which the agent's
 * uid can touch on its own.  The group is held only by processes the agent
 * cannot reach (not dumpable: no ptrace, no /proc/PID/fd) and is dropped,
 * real, effective and saved, in every child before anything of the
 * agent's runs.  Files the caller names (--config, SSH_USER_AUTH) are
 * opened with the caller's own group, so the group never reads for them.
 *
 * Without the set-group-ID bit (a build tree, or an install that chose
 * not to) every call here is a no-op and the gateway runs as before.
 */
#ifndef AG_PRIVSEP_H
#define AG_PRIVSEP_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/err.h"

/*
 * First thing in main(): fds 0-2 open (a set-ID program must not write
 * its messages into the first file it opens), and when set-ID: not
 * dumpable, no core, every other inherited fd closed.  Refuses (-1) to run
 * set-user-ID: the design is one group, and a setuid agentgate is an
 * install mistake that must not be used.
 */
int	ag_privsep_entry(struct ag_err *err);

/* Nonzero when the gateway holds a group its caller does not have. */
int	ag_privsep_holding(void);

/*
 * Keep only the environment variables the gateway itself reads (sshd's
 * SSH_*, TERM, LANG and LC_*, TZ, PATH, HOME, USER, LOGNAME, SHELL,
 * AGENTGATE_TOKEN), each once, well formed: what a client or the
 * account's ~/.ssh/environment put there cannot steer the gateway's own
 * libraries.  The commands' environment is built separately, from policy.
 */
int	ag_privsep_scrub_env(struct ag_err *err);

/* Subcommands that need no privilege (check, explain, doctor, audit)
 * give it up for good at once. */
int	ag_privsep_drop(struct ag_err *err);

/*
 * In a child, before anything of the agent's runs: real, effective and
 * saved gid all back to the caller's, checked.  Async-signal-safe; -1 with
 * errno on failure (the child must then _exit).
 */
int	ag_privsep_child(void);
/*
 * The same for a child that execs next and may share the gateway's memory
 * until then (vfork-like): it writes to no memory of the gateway's.
 */
int	ag_privsep_child_exec(void);

/*
 * The gateway's own fds (audit log, its lock and spool, the recording):
 * registered when opened, closed by ag_privsep_child() in every child
 * before it can become dumpable, so the agent's uid cannot reopen them
 * through /proc/PID/fd of a process that is briefly its own.  Closing one
 * goes through ag_privsep_close(), which forgets it and sets *fd to -1.
 */
int	ag_privsep_private_fd(int fd);
int	ag_privsep_close(int *fd);
/*
 * A helper of the gateway's own that runs nothing of the agent's (the
 * egress proxy): every fd from 3 up closed but those above and keep[].
 */
void	ag_privsep_close_others(const int *keep, size_t nkeep);

/*
 * Bracket the opening of a file the caller named: between these two the
 * effective gid is the caller's, so a path the agent chose is opened only
 * if the agent could open it itself.
 */
void	ag_privsep_as_caller(void);
void	ag_privsep_as_gateway(void);

/*
 * Make name in dir, a directory the agent controls, as the caller: dir is
 * walked without following a link anywhere in it (a part swapped for one
 * since the gateway looked would lead elsewhere), and the new directory
 * has the caller's gid.  0, or -1 with errno (a link on the way: ENOTDIR).
 */
int	ag_privsep_mkdir_nofollow(const char *dir, const char *name, mode_t mode);
/* The same for an empty file (O_EXCL), and for a rename within dir. */
int	ag_privsep_create_nofollow(const char *dir, const char *name, mode_t mode);
int	ag_privsep_rename_nofollow(const char *dir, const char *from, const char *to);
/* dir walked the same way, opened for reading (a listing): the fd, or -1
 * with errno (a link on the way: ENOTDIR or ELOOP). */
int	ag_privsep_open_dir_nofollow(const char *dir);

/*
 * The gateway's group for this process: the one held, or for root (serve,
 * also under NoNewPrivileges, which ignores the set-group-ID bit) the
 * configured one, which its session processes keep (effective and saved)
 * after dropping to the user so that they write the audit like the gateway
 * under sshd; (gid_t)-1 when there is none (no such group, or neither).
 */
gid_t	ag_privsep_serve_gid(void);

/*
 * serve, in a session process running as root: become the user (its
 * groups, uid, gid) keeping only ag_privsep_serve_gid() as effective and
 * saved gid, verified, not dumpable.  Not root: only checks that we
 * already are the user.
 */
int	ag_privsep_serve_session(const char *user, uid_t uid, gid_t gid, struct ag_err *err);

/*
 * Where the gateway keeps its records (audit directory, spool, recordings):
 * writable by no one but its owner and, set-group-ID, our group; and then
 * also root's and closed to others, since the files in it belong to the
 * agent's uid and a path is all it would need.  0, or -1 and why.
 */
int	ag_privsep_dir_ok(const struct stat *st, char *why, size_t len);

/* A record file: regular, writable by its owner and at most our group. */
int	ag_privsep_file_ok(const struct stat *st);

/*
 * A file every agent account's gateway shares (the audit log), just
 * created as fd with mode, by a gateway holding the group or by root in
 * the group's directory (ag_privsep_group_dir): given to the group with
 * the owner's rights also for the group; the mode to fchmod it to.
 */
mode_t	ag_privsep_shared_mode(int fd, mode_t mode);

/*
 * 1 when the directory is the gateway group's (set-group-ID, that group):
 * a file created in it takes the group, and must be the group's to write
 * too, whoever creates it (serve's root process, before it drops to the
 * user, or a gateway), or the other kind could not append to it.
 */
int	ag_privsep_group_dir(const struct stat *st);
/*
 * 1 when the real uid is root or the account named like the group
 * (AG_GROUP, created by make install for sshd's AuthorizedKeysCommandUser):
 * the callers `agentgate authorized-keys` reads the policy for.
 */
int	ag_privsep_keys_caller(void);

#endif
