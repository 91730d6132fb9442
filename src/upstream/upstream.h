/*
 * upstream.h - bastion mode: the gateway as an SSH client of the hosts
 * behind it (`upstreams:` in the policy), over libssh.
 *
 * What reaches an upstream has been through the whole pipeline at the
 * gateway (core/target.h decides which host, core/command.c judges the
 * line against that host's profile); this layer only carries the validated
 * bytes there and the output back.
 *
 * The client is locked down as a jump host's must be:
 *   - no ssh_config is read (SSH_OPTIONS_PROCESS_CONFIG off): an agent's
 *     ~/.ssh/config with a ProxyCommand or a Match exec never runs;
 *   - no ssh-agent, no forwarding of any kind, no identity but the
 *     upstream's own key file, which must be root's and not readable by
 *     others (the gateway reads it through its group; the agent's uid
 *     cannot), and is read only when the connection is made;
 *   - the host key must be in the upstream's pinned known_hosts file:
 *     unknown, changed or of another type, the connection is refused and
 *     the fingerprint the host offered is reported (no trust on first use).
 * One connection per session and upstream: one handshake, then a channel
 * per command.
 */
#ifndef AG_UPSTREAM_H
#define AG_UPSTREAM_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"
#include "exec/runner.h"

struct ag_rec;
struct ag_upconn;

#define AG_UPSTREAM_FP_MAX	128

struct ag_upconn_info {
	char	hostkey[AG_UPSTREAM_FP_MAX];	/* "SHA256:..." the host offered, or "" */
	char	key[AG_UPSTREAM_FP_MAX];	/* "SHA256:..." of the gateway's key, or "" */
};

/*
 * Connect to u, check its host key against the pinned file, log in with
 * u's key.  info is filled as far as it got (the offered host key also
 * when it is refused).  NULL with err saying what failed.
 */
struct ag_upconn *ag_upconn_open(const struct ag_upstream *u, struct ag_upconn_info *info,
	    struct ag_err *err);
void	ag_upconn_close(struct ag_upconn *c);

/*
 * Run req (a command line for the upstream account's shell) with no
 * stdin and collect its stdout, at most max bytes (more is an error).
 * *out is malloc'd and NUL-terminated.  0, or -1 with err.
 */
int	ag_upconn_capture(struct ag_upconn *c, const char *req, size_t max, char **out,
	    size_t *outlen, int *status, struct ag_err *err);

struct ag_uprun_opts {
	const char	*req;		/* the exec request */
	int		 in_fd;		/* the command's stdin; -1: none (EOF at once) */
	int		 out_fd;
	int		 err_fd;
	/*
	 * A PTY upstream, sized like in_fd (the client's terminal, made raw
	 * for the length of the command; SIGWINCH forwards its new size);
	 * stdout and stderr are then one stream.
	 */
	int		 pty;
	const char	*term;		/* TERM for the PTY; checked, else "xterm" */
	long		 timeout;	/* seconds; 0 = none */
	long long	 max_output;	/* bytes per stream; 0 = unlimited */
	struct ag_rec	*rec;		/* PTY output recorded here, or NULL */
	const struct ag_profile *redact;	/* its output.redact applies, or NULL */
	/* asked every few seconds: 1 stops the command (r->revoked), as
	 * ag_run_opts' revoked does; NULL: never */
	int		(*revoked)(void *arg);
	void		*revoked_arg;
};


/*
 * Run one command on a new channel and relay it, r filled as ag_run()
 * fills it (status as $?: 128+N for an exit signal, 124 after the timeout)
 * and *cols, *rows the PTY's size (0 without one): the client's stdin to
 * the channel as the upstream's window allows, its stdout and stderr to
 * out_fd and err_fd (non-blocking; the channel is not read while a write
 * waits, so a slow client holds the upstream back instead of filling the
 * gateway's memory), exit status and exit signal back.  Timeout, cancel
 * and the session's end send the upstream command SIGTERM, then close the
 * channel.  0 when the command was started (r filled), -1 with err.
 */
int	ag_upconn_run(struct ag_upconn *c, const struct ag_uprun_opts *o,
	    struct ag_run_result *r, int *cols, int *rows, struct ag_err *err);

#endif
