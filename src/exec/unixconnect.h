/*
 * unixconnect.h - connect(2) of a command's UNIX socket, made by the exec
 * supervisor for the process (execguard.c stops every connect).
 *
 * Why: Landlock (ABI 7) does not mediate connecting to a pathname socket,
 * and the session's network namespace does not hold one, so a host
 * daemon's socket beneath a readable directory (a database's, docker's,
 * sssd's, a user's agent) would be reachable from any command.  The
 * supervisor reads the address once, finds the socket the name leads to
 * as the process would (execfile.h: its root, its working directory), and
 * connects the process's own socket (pidfd_getfd) to that very inode
 * through /proc/self/fd: the process cannot change the address between
 * the judgement and the connect, since the kernel never reads it again.
 *
 * A socket may be connected to when it sits on one of the session's own
 * writable mounts (its /tmp, the write roots, a private /dev/shm or
 * /var/tmp: a socket a command of the session could have made), or is a
 * socket `network.unix` names (or a socket in a directory it names).  An
 * abstract or unnamed address is connected as given: the session's
 * network namespace holds the abstract names, so only its own processes'
 * are there.  A socket of another family is left to the kernel (the
 * namespace and Landlock hold it): the family of a socket cannot change.
 *
 * The connection's peer credentials are the gateway's (its pid, its
 * effective group), and connecting is done without blocking: a listener
 * whose queue stays full for a while gets EAGAIN, as a non-blocking
 * connect would.
 */
#ifndef AG_UNIXCONNECT_H
#define AG_UNIXCONNECT_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/seccomp.h>

/* Where a command's UNIX sockets may be connected by name. */
struct ag_unix_rules {
	char	**roots;	/* mount points: any socket on one of these mounts */
	size_t	  nroots;
	char	**names;	/* network.unix: a socket, or a directory of sockets */
	size_t	  nnames;
	int	  abstract;	/* abstract names are the session's own (its
				 * network namespace); 0: refused */
};

/* What is kept of one connect for the audit: refused, or to a named socket. */
struct ag_unix_note {
	int	allowed;
	char	path[PATH_MAX];		/* the name the process gave ("@name": abstract) */
	char	reason[PATH_MAX + 256];
	char	rule[64];
};

/*
 * Answer one stopped connect(2) (n, from the listener): resp is filled
 * (the kernel's own errors for a bad socket or address, the connect's
 * result, EACCES when refused, or "continue" for another family).  1 when
 * note was filled (a refusal, or a socket network.unix names), else 0.
 * On the supervisor's thread; r may be NULL (nothing but the kernel's).
 */
int	ag_unixconnect_answer(int listener, const struct seccomp_notif *n,
	    const struct ag_unix_rules *r, struct seccomp_notif_resp *resp,
	    struct ag_unix_note *note);

#endif
