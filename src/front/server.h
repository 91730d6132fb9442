/*
 * server.h - the built-in SSH server (`agentgate serve`), on libssh.
 *
 * The listener only accepts: it enforces the connection caps and forks one
 * process per connection, and never runs a command itself.  A connection
 * process does the key exchange and authentication (publickey against the
 * user's authorized-keys file, keyboard-interactive and password through
 * the PAM service, chained as gateway.server.auth_methods says), runs the
 * PAM front half (ag_pamauth_start) with the key used as SSH_AUTH_INFO_0,
 * and then - when the listener runs as root - forks: the parent stays root
 * only to close the PAM session at the end, the child drops to the user
 * (initgroups, setgid, setuid, verified) and serves the session channels.
 * Each exec or shell request gets a fresh session process whose stdin,
 * stdout and stderr are pipes (or the PTY after a pty-req); it runs the
 * one session core (core/core.h), so the server decides
 * and runs nothing on its own.
 */
#ifndef AG_SERVER_H
#define AG_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/err.h"

/* Defaults for what gateway.server leaves out (see agentgate.yaml(5)). */
#define AG_SERVER_DEFAULT_PORT			"2222"
#define AG_SERVER_DEFAULT_MAX_CONNECTIONS	100
#define AG_SERVER_DEFAULT_MAX_PER_SOURCE	10
/* max_startups, as OpenSSH's MaxStartups default */
#define AG_SERVER_DEFAULT_STARTUPS_START	10
#define AG_SERVER_DEFAULT_STARTUPS_RATE		30
#define AG_SERVER_DEFAULT_STARTUPS_FULL		100
#define AG_SERVER_DEFAULT_MAX_SESSIONS		10
#define AG_SERVER_DEFAULT_LOGIN_GRACE		60
#define AG_SERVER_DEFAULT_MAX_AUTH_TRIES	6
#define AG_SERVER_DEFAULT_AUTHORIZED_KEYS	"~/.ssh/authorized_keys"
#define AG_SERVER_DEFAULT_HOST_KEY		AG_SYSCONFDIR "/agentgate/ssh_host_ed25519_key"
#define AG_SERVER_DEFAULT_CIPHERS \
	"chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com"
#define AG_SERVER_DEFAULT_KEX \
	"curve25519-sha256,curve25519-sha256@libssh.org"
#define AG_SERVER_DEFAULT_MACS \
	"hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com"
#define AG_SERVER_DEFAULT_HOSTKEY_ALGOS \
	"ssh-ed25519,rsa-sha2-512,rsa-sha2-256"
#define AG_SERVER_MAX_LISTEN			16
#define AG_SERVER_MAX_AUTHKEYS_BYTES		(1024 * 1024)
#define AG_SERVER_MAX_ENV			64	/* accepted env requests per channel */
#define AG_SERVER_MAX_COMMAND			(256 * 1024)	/* bytes in an exec request */

struct ag_server_opts {
	const char		*config_path;	/* re-read on SIGHUP; NULL = no reload */
	const char *const	*listen;	/* overrides gateway.server.listen; NULL = config */
	size_t			 nlisten;
	int			 foreground;	/* 0: detach (daemon) */
	int			 log_stderr;	/* log to stderr instead of syslog */
};

/*
 * Load and check the host keys, open the listeners and serve until SIGTERM
 * or SIGINT (connections in progress go on, like sshd's).  SIGHUP re-reads
 * the policy for new connections.  Returns 0 after a clean stop, -1 with err when the server
 * could not start (bad host key, address in use, ...).
 */
int	ag_server_run(struct ag_config *cfg, const struct ag_server_opts *o,
	    struct ag_err *err);

/*
 * Write a new ed25519 private key to path (created 0600, never over an
 * existing file) and its public key to path.pub.  0 ok, -1 with err.
 */
int	ag_server_generate_host_key(const char *path, struct ag_err *err);

/*
 * The host-key file check on its own: a regular file (not a symlink) owned
 * by the running user and with no permission bits for group or others.
 */
int	ag_server_check_key_file(const char *path, struct ag_err *err);

/*
 * Expand an authorized_keys pattern for one user: "%u" the user name,
 * "%h" and a leading "~/" the home directory.  The result must be an
 * absolute path.  0 ok, -1 with err.
 */
int	ag_server_expand_keys_path(const char *pattern, const char *user,
	    const char *home, char *out, size_t outlen, struct ag_err *err);

/*
 * The StrictModes-like check of an authorized-keys file: the file and
 * every directory above it owned by root or uid and not writable by group
 * or others.  0 ok, -1 with err naming the offending path.
 */
int	ag_server_check_keys_perms(const char *path, uid_t uid, struct ag_err *err);

#endif
