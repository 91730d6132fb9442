/*
 * sockconnect.h - connect(2) of a command's socket, made by the exec
 * supervisor for the process (execguard.c stops every connect).
 *
 * Why: Landlock (ABI 7) does not mediate connecting to a pathname UNIX
 * socket, and the session's network namespace does not hold one, so a
 * host daemon's socket beneath a readable directory (a database's,
 * docker's, sssd's, a user's agent) would be reachable from any command.
 * Judging the address and letting the kernel go on would not hold: the
 * kernel reads the address, and the descriptor, again, and another thread
 * can change either in between (point the address at the daemon, or dup2
 * a UNIX socket over the INET one that was judged).  So the supervisor
 * makes every connect itself, on the socket it took from the process's
 * own descriptor table (pidfd_getfd, the thread's table), with the copy
 * of the address it judged, and answers with the result.
 *
 * A UNIX socket's name is followed as the process would (execfile.h: its
 * root, its working directory), and the socket is connected to that very
 * inode through /proc/self/fd.  It may be when it sits on one of the
 * session's own writable mounts (its /tmp, the write roots, a private
 * /dev/shm or /var/tmp: a socket a command of the session could have
 * made), or is a socket `network.unix` names (or a socket in a directory
 * it names; the profile's paths.read beneath /run count too).  An
 * abstract name is connected as given where the session has a network
 * namespace of its own, which holds the abstract names (only its own
 * processes' are there).  IPv4 and IPv6 sockets live in that namespace
 * (its loopback and the egress proxy's listeners); netlink ones may not
 * join multicast groups nor name another socket's port id (the gateway's
 * capabilities over the namespace are not the command's).
 *
 * Differences from the process's own connect, stated in doc/sandbox.md:
 * the peer credentials a UNIX listener sees are the gateway's (its pid,
 * its effective group); a blocking connect that does not complete at
 * once is waited for a bounded time (a UNIX listener's full queue, a TCP
 * handshake), while the supervisor answers nothing else of the command.
 */
#ifndef AG_SOCKCONNECT_H
#define AG_SOCKCONNECT_H

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

/* What is kept of one connect for the audit: a UNIX socket refused or
 * named by network.unix, or an attempt to reach an address outside the
 * namespace directly (it fails there: the proxy is the way out). */
struct ag_conn_note {
	int	allowed;
	char	proto[8];		/* unix, tcp, udp */
	char	path[PATH_MAX];		/* the name the process gave ("@name": abstract),
					 * or ADDRESS:PORT */
	char	reason[PATH_MAX + 256];
	char	rule[64];
	char	error[128];		/* allowed, but the connect failed */
};

/*
 * Answer one stopped connect(2) (n, from the listener): resp is filled
 * (the kernel's own errors for a bad socket or address, the connect's
 * result, or EACCES when refused).  1 when note was filled (a refusal, or
 * a socket network.unix names), else 0.  room: the caller can keep one
 * more note; without it a socket network.unix names is refused (every
 * connection to one is recorded).  On the supervisor's thread; r NULL
 * refuses every UNIX name.
 */
int	ag_sockconnect_answer(int listener, const struct seccomp_notif *n,
	    const struct ag_unix_rules *r, int room, struct seccomp_notif_resp *resp,
	    struct ag_conn_note *note);

/* On the supervisor's thread, when it starts and ends: the timer that
 * bounds each connect (0, or -1: every connect will fail with EAGAIN). */
int	ag_sockconnect_thread_start(void);
void	ag_sockconnect_thread_end(void);

/* The kernel lets the supervisor take a process's socket (pidfd_getfd,
 * Linux 5.6): without it every connect fails. */
int	ag_sockconnect_available(void);

#endif
