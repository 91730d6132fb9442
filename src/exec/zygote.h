/*
 * zygote.h - the session's runner process: one process per sandboxed
 * session, already inside the session's namespaces, seccomp filter and
 * outer Landlock ruleset, that only forks and execs a runner shell for
 * each command (doc/sandbox.md, "The session's runner process").
 *
 * Without it every command paid for joining four namespaces, forking
 * twice (joining a PID namespace takes effect for children only) and
 * entering the filter and the ruleset again, though a session's boundary
 * does not change between its commands.
 *
 * The gateway forks it once and it executes the gateway's own binary
 * under another name (so it holds none of the gateway's memory: no
 * policy, no keys), gives up the gateway's group, enters the boundary
 * (kit below), drops every capability the user namespace gave it, and
 * is not dumpable.  It then reads requests on a socket: the command's
 * fds (SCM_RIGHTS) and its runner, cwd, argv and environment.  Each
 * runner is made with CLONE_PARENT: it is the gateway's child, as a
 * runner the gateway forks itself is, so the gateway waits for it, sees
 * its status and kills its group exactly as before; it is born in the
 * session's PID namespace; it inherits the filter and the outer ruleset,
 * and enters the command's inner ruleset through agsandbox.so as before.
 * The runner process ends when the gateway closes the socket, or dies
 * (SIGKILL) with it.
 */
#ifndef AG_ZYGOTE_H
#define AG_ZYGOTE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <linux/filter.h>

#include "common/err.h"

struct ag_spawn;
struct ag_zygote;

#define AG_ZYGOTE_MAX_RLIMITS	8

/* What the runner process enters once, in this order. */
struct ag_zygote_kit {
	struct {
		int		res;
		struct rlimit	lim;
	} rl[AG_ZYGOTE_MAX_RLIMITS];
	int			 nrl;
	int			 user_fd, mnt_fd, pid_fd, ipc_fd, net_fd;	/* net: -1 none */
	const struct sock_fprog	*filter;	/* NULL: none */
	int			 outer_fd;	/* the outer ruleset; -1 none */
};

/* Start it: NULL with err when it cannot start (the caller forks itself). */
struct ag_zygote *ag_zygote_start(const struct ag_zygote_kit *kit, struct ag_err *err);
pid_t	ag_zygote_pid(const struct ag_zygote *z);
/*
 * One runner: the child goes through spawn.h's steps with s (s->parent
 * and s->pt are the runner process's to set: no terminal), installs the
 * exec supervisor's filter on guard when guard >= 0, and has inner at
 * AG_SANDBOX_FD.  The caller's fds are only passed: it closes its own.
 * The runner's pid (the caller's child), or -1 with errno: EMSGSIZE when
 * the request is too big to pass, EPIPE when the runner process is gone.
 */
pid_t	ag_zygote_spawn(struct ag_zygote *z, const struct ag_spawn *s, int inner, int guard);
/* End it and wait for it. */
void	ag_zygote_stop(struct ag_zygote *z);

/* What a path is in the session's mount namespace, no link followed. */
struct ag_zygote_stat {
	int		found;
	int		mount_root;	/* the root of a mount */
	uint64_t	dev, ino;
};
/* Each of n paths looked up (O_PATH, no link anywhere) and stat'ed by the
 * runner process, which is in the session's mount namespace: one round
 * trip instead of a process that joins it.  0, or -1 with errno (EMSGSIZE:
 * too many; EPIPE: the runner process is gone). */
int	ag_zygote_stat(struct ag_zygote *z, const char *const *paths, size_t n,
	    struct ag_zygote_stat *out);

/*
 * The gateway's one runner process, for sb's boundary: started at the
 * first call (kept from ag_runner_reap_all), replaced after a new prepare;
 * NULL when sb's commands are the gateway's to fork or it cannot start
 * (said once in the log).  ag_zygote_forget ends one that failed (the next
 * call starts another); ag_zygote_release ends sb's when sb goes.
 */
struct ag_sandbox;
struct ag_zygote *ag_zygote_of(const struct ag_sandbox *sb);
void	ag_zygote_forget(struct ag_zygote *z);
void	ag_zygote_release(const struct ag_sandbox *sb);

#endif
