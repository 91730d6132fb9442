/*
 * execguard.h - the exec supervisor: every execve/execveat of a command's
 * process tree is stopped by seccomp user notification and judged by the
 * gateway before the kernel goes on (doc/sandbox.md); every connect(2)
 * too, which the supervisor makes itself for a UNIX socket
 * (sockconnect.h).
 *
 * The runner child installs the filter (ag_execguard_child, after
 * no_new_privs) and passes the listener to the gateway over a socket.  A
 * thread of the gateway receives it and answers each notification: it
 * reads the path and argv from the stopped process (process_vm_readv;
 * the gateway is the ancestor of the whole tree, which Yama's ptrace
 * scope 1 requires), asks the judge, and lets the exec continue
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) or fails it with EACCES.  A thread
 * rather than the relay loops: both loops (pipes and PTY) stay as they
 * are, and nothing the tree does can make the gateway's relay wait.
 *
 * The program is the file, not its name: the path is resolved as the
 * process would resolve it (execfile.h) and the judge gets its device
 * and inode beside the name.  A name that leads nowhere fails as the
 * kernel would (ENOENT, ENOTDIR, not recorded: a PATH search tries
 * many); one the gateway cannot follow for another reason, or a file
 * whose first bytes it may not read (a script's #! line says what runs),
 * is refused.
 *
 * Fails closed: a path or argv that cannot be read, is too long, or a
 * judge error refuses the exec; if the gateway stops answering (thread
 * ended, listener closed), the kernel fails the remaining execs (ENOSYS).
 *
 * Limits, stated in doc/sandbox.md: with FLAG_CONTINUE the kernel reads
 * path and argv again after the answer, so a multi-threaded process can
 * change them in between (best effort against a determined program; the
 * Landlock execute rules and the noexec mounts are the kernel-exact part).
 */
#ifndef AG_EXECGUARD_H
#define AG_EXECGUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"
#include "exec/sockconnect.h"

#define AG_EXECGUARD_MAX_ARGS	4096		/* more: refused */
#define AG_EXECGUARD_MAX_BYTES	(256 * 1024)	/* path + argv, more: refused */
#define AG_EXECGUARD_MAX_DENIALS 64		/* kept for the audit per command */
#define AG_EXECGUARD_MAX_RAN	64		/* files let run, listed per command */

/* What the judge sees of one exec. */
struct ag_exec_req {
	pid_t		 pid;
	const char	*path;		/* absolute when it could be made so */
	const char	*cwd;		/* the process's working directory, or NULL */
	char *const	*argv;
	size_t		 argc;
	/* the file itself (execfile.h), as the kernel will find it: a deny
	 * rule's program is known by it, whatever name the exec used */
	dev_t		 dev;
	ino_t		 ino;
};

/* 1 allow; 0 deny, with reason and rule filled; 2 allow, though a rule in
 * rollout (enforce: audit) would refuse it: reason and rule say how, and it
 * is kept like a refusal, marked would. */
typedef int (*ag_execguard_judge_fn)(void *ctx, const struct ag_exec_req *req,
    char *reason, size_t reasonsz, char *rule, size_t rulesz);

/* One refused exec (or one rollout let through), for the audit. */
struct ag_exec_denial {
	char	 *path;
	char	**argv;		/* NULL-terminated */
	size_t	  argc;
	char	 *reason;
	char	 *rule;
	int	  would;	/* let through: a rule in rollout would refuse it */
	/* not an exec: a connect(2) (sockconnect.h), path the UNIX socket's
	 * name or ADDRESS:PORT, refused, or allowed because network.unix
	 * names the socket */
	int	  is_connect;
	int	  allowed;
	char	 *proto;	/* unix, tcp, udp */
	char	 *error;	/* allowed, but the connect failed; or NULL */
};

/*
 * The distinct files the supervisor let run in one command's tree (each
 * #! interpreter too), by the path the exec resolved, never its argv
 * (which may hold a secret): the command's record lists them, so what
 * ran is known whatever the line's text shows or masks (doc/sandbox.md).
 * At most AG_EXECGUARD_MAX_RAN; more counts the execs of files past them.
 */
struct ag_exec_ran {
	char		**paths;	/* npaths of them, owned */
	size_t		  npaths;
	unsigned long	  more;
};

struct ag_execguard;

/*
 * Parent, before fork: a guard for one command.  judge, ctx and
 * unix_rules (where its UNIX sockets may connect by name; NULL: nowhere)
 * must stay valid until ag_execguard_finish.  NULL with err on failure.
 */
struct ag_execguard *ag_execguard_new(ag_execguard_judge_fn judge, void *ctx,
	    const struct ag_unix_rules *unix_rules, struct ag_err *err);
/* Parent, after fork: start answering.  0, or -1 (the command must be killed). */
int	ag_execguard_started(struct ag_execguard *g, struct ag_err *err);
/*
 * Parent, after the command's tree is gone: stop, and hand over what was
 * refused (*denials owned by the caller, free with ag_execguard_denials_free)
 * and, when ran is not NULL, what was let run (free with
 * ag_execguard_ran_free).  Frees g.
 */
void	ag_execguard_finish(struct ag_execguard *g, struct ag_exec_denial **denials, size_t *n,
	    struct ag_exec_ran *ran);
void	ag_execguard_denials_free(struct ag_exec_denial *d, size_t n);
void	ag_execguard_ran_free(struct ag_exec_ran *ran);

/*
 * Child, after no_new_privs and before exec: close the gateway's ends
 * (or a queued listener would keep the exec waiting for an answer that
 * cannot come), install the filter and send its listener to the gateway.
 * g is the child's copy of the parent's guard.  Async-signal-safe.
 * 0, or -1 with errno.
 */
int	ag_execguard_child(const struct ag_execguard *g);
/*
 * The same, for a child that holds only the socket (the session's runner
 * process passed it on, zygote.c): install the filter and send its
 * listener over sock, then close sock.  Async-signal-safe.
 */
int	ag_execguard_install(int sock);
/* Parent: the child's end of the guard's socket, to pass on (-1 once
 * started). */
int	ag_execguard_child_sock(const struct ag_execguard *g);

/*
 * The file path names for process pid, found as an exec of it would be
 * (execfile.h): 0 with its device and inode, or -1.  For the judge, on
 * the supervisor's thread, while pid is stopped in its exec.
 */
int	ag_execguard_file_id(pid_t pid, const char *path, dev_t *dev, ino_t *ino);

#endif
