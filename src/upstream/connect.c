/*
 * connect.c - one locked-down libssh client connection to an upstream
 * (upstream.h): options, the pinned host key, the key login, and the
 * small helper that runs a command for its output.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sshlib.h"

#include "common/strbuf.h"
#include "upstream/upstream.h"
#include "upstream/upstream_int.h"

#define CAPTURE_CHUNK	16384

/* "SHA256:..." of key, as ssh-keygen -l and OpenSSH's logs print it. */
static void
fingerprint(ssh_key key, char *out, size_t outlen)
{
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp;

	out[0] = '\0';
	if (key == NULL || ag_ssh.ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
	    &hlen) < 0)
		return;
	if ((fp = ag_ssh.ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen)) != NULL) {
		snprintf(out, outlen, "%s", fp);
		ag_ssh.ssh_string_free_char(fp);
	}
	ag_ssh.ssh_clean_pubkey_hash(&hash);
}

/*
 * The key must be the gateway's alone: root's, a regular file, nobody
 * else may read or change it.  Checked on the open file, then handed to
 * libssh by /proc/self/fd so the name cannot be swapped in between.
 */
static int
load_key(const struct ag_upstream *u, ssh_key *key, char *fp, size_t fplen,
    struct ag_err *err)
{
	char path[64];
	struct stat st;
	ssh_key pub = NULL;
	int fd, rc;

	if ((fd = open(u->key, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)) < 0)
		return ag_err_set(err, "upstream '%s': cannot read its key %s: %s", u->name,
		    u->key, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 0027) != 0) {
		close(fd);
		return ag_err_set(err, "upstream '%s': its key %s must be a regular file owned "
		    "by root, readable by the gateway's group at most (mode 0640 or tighter); "
		    "it is not used", u->name, u->key);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = ag_ssh.ssh_pki_import_privkey_file(path, NULL, NULL, NULL, key);
	close(fd);
	if (rc != SSH_OK)
		return ag_err_set(err, "upstream '%s': %s is not a private key libssh can use "
		    "(an OpenSSH key without a passphrase)", u->name, u->key);
	if (ag_ssh.ssh_pki_export_privkey_to_pubkey(*key, &pub) == SSH_OK) {
		fingerprint(pub, fp, fplen);
		ag_ssh.ssh_key_free(pub);
	}
	return 0;
}

static int
set_options(ssh_session s, const struct ag_upstream *u, struct ag_err *err)
{
	bool no = false;
	unsigned int port = (unsigned int)u->port;
	long timeout = u->connect_timeout > 0 ? u->connect_timeout : 10;
	int fail = 0;

	/* first: nothing of ~/.ssh/config or /etc/ssh/ssh_config applies */
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_HOST, u->host) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_PORT, &port) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_USER, u->user) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, u->known_hosts) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, u->known_hosts) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) < 0;
	fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_GSSAPI_DELEGATE_CREDENTIALS, &no) < 0;
	if (u->hostkey_algorithms != NULL)
		fail |= ag_ssh.ssh_options_set(s, SSH_OPTIONS_HOSTKEYS, u->hostkey_algorithms) < 0;
	if (fail)
		return ag_err_set(err, "upstream '%s': cannot set the client's options: %s",
		    u->name, ag_ssh.ssh_get_error(s));
	return 0;
}

/* The host key against the pinned file only. */
static int
check_hostkey(ssh_session s, const struct ag_upstream *u, struct ag_upconn_info *info,
    struct ag_err *err)
{
	ssh_key srv = NULL;

	if (ag_ssh.ssh_get_server_publickey(s, &srv) == SSH_OK) {
		fingerprint(srv, info->hostkey, sizeof(info->hostkey));
		ag_ssh.ssh_key_free(srv);
	}
	switch (ag_ssh.ssh_session_is_known_server(s)) {
	case SSH_KNOWN_HOSTS_OK:
		return 0;
	case SSH_KNOWN_HOSTS_CHANGED:
		return ag_err_set(err, "upstream '%s' (%s:%ld) offered host key %s, which is not "
		    "the key pinned in %s: refused (the key changed, or this is not that host)",
		    u->name, u->host, u->port, info->hostkey, u->known_hosts);
	case SSH_KNOWN_HOSTS_OTHER:
		return ag_err_set(err, "upstream '%s' (%s:%ld) offered host key %s, of a type "
		    "other than the one pinned in %s: refused", u->name, u->host, u->port,
		    info->hostkey, u->known_hosts);
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		return ag_err_set(err, "upstream '%s' (%s:%ld) offered host key %s, which %s "
		    "does not pin: refused (no trust on first use; pin it with ssh-keyscan and "
		    "check the fingerprint)", u->name, u->host, u->port, info->hostkey,
		    u->known_hosts);
	default:
		return ag_err_set(err, "upstream '%s': cannot check its host key against %s: %s",
		    u->name, u->known_hosts, ag_ssh.ssh_get_error(s));
	}
}

struct ag_upconn *
ag_upconn_open(const struct ag_upstream *u, struct ag_upconn_info *info, struct ag_err *err)
{
	struct ag_upconn *c;
	ssh_key key = NULL;
	struct ag_err e;

	memset(info, 0, sizeof(*info));
	if (ag_sshlib_load(&e) < 0) {
		ag_err_set(err, "upstream '%s': %s", u->name, e.msg);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	c->up = u;
	if ((c->s = ag_ssh.ssh_new()) == NULL) {
		ag_err_set(err, "upstream '%s': cannot make an SSH session", u->name);
		goto fail;
	}
	if (set_options(c->s, u, err) < 0)
		goto fail;
	if (ag_ssh.ssh_connect(c->s) != SSH_OK) {
		ag_err_set(err, "upstream '%s': cannot connect to %s:%ld: %s", u->name, u->host,
		    u->port, ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	if (check_hostkey(c->s, u, info, err) < 0)
		goto fail;
	{
		int one = 1, fd = ag_ssh.ssh_get_fd(c->s);

		/* requests and replies are small: Nagle and delayed ACKs would add
		 * tens of ms to each; and no command of the agent's inherits it */
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	/* the key is read only now, and only by a gateway that got this far */
	if (load_key(u, &key, info->key, sizeof(info->key), err) < 0)
		goto fail;
	if (ag_ssh.ssh_userauth_publickey(c->s, NULL, key) != SSH_AUTH_SUCCESS) {
		ag_err_set(err, "upstream '%s': %s@%s:%ld did not accept the gateway's key %s: %s",
		    u->name, u->user, u->host, u->port, info->key, ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	ag_ssh.ssh_key_free(key);
	return c;
fail:
	ag_ssh.ssh_key_free(key);
	ag_upconn_close(c);
	return NULL;
}

void
ag_upconn_close(struct ag_upconn *c)
{
	if (c == NULL)
		return;
	if (c->s != NULL) {
		ag_ssh.ssh_disconnect(c->s);
		ag_ssh.ssh_free(c->s);
	}
	free(c);
}

int
ag_upconn_capture(struct ag_upconn *c, const char *req, size_t max, char **out,
    size_t *outlen, int *status, struct ag_err *err)
{
	struct ag_strbuf sb;
	ssh_channel ch;
	char buf[CAPTURE_CHUNK];
	int n;

	*out = NULL;
	*outlen = 0;
	*status = -1;
	if ((ch = ag_upconn_channel(c, req, 0, NULL, 0, 0, err)) == NULL)
		return -1;
	ag_strbuf_init(&sb, max);
	ag_ssh.ssh_channel_send_eof(ch);
	while ((n = ag_ssh.ssh_channel_read(ch, buf, sizeof(buf), 0)) > 0)
		if (ag_strbuf_append(&sb, buf, (size_t)n) < 0) {
			ag_err_set(err, "upstream '%s': more than %zu bytes of state", c->up->name,
			    max);
			goto fail;
		}
	if (n == SSH_ERROR) {
		ag_err_set(err, "upstream '%s': %s", c->up->name, ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	*status = ag_ssh.ssh_channel_get_exit_status(ch);
	ag_ssh.ssh_channel_close(ch);
	ag_ssh.ssh_channel_free(ch);
	if (ag_strbuf_addch(&sb, '\0') < 0) {
		ag_err_set(err, "out of memory");
		ag_strbuf_free(&sb);
		return -1;
	}
	*out = ag_strbuf_detach(&sb, outlen);
	(*outlen)--;
	return 0;
fail:
	ag_ssh.ssh_channel_close(ch);
	ag_ssh.ssh_channel_free(ch);
	ag_strbuf_free(&sb);
	return -1;
}

ssh_channel
ag_upconn_channel(struct ag_upconn *c, const char *req, int pty, const char *term, int cols,
    int rows, struct ag_err *err)
{
	ssh_channel ch;

	if ((ch = ag_ssh.ssh_channel_new(c->s)) == NULL || ag_ssh.ssh_channel_open_session(ch) != SSH_OK) {
		ag_err_set(err, "upstream '%s': cannot open a channel: %s", c->up->name,
		    ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	if (pty && ag_ssh.ssh_channel_request_pty_size(ch, term, cols, rows) != SSH_OK) {
		ag_err_set(err, "upstream '%s': the host refused a terminal: %s", c->up->name,
		    ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	if (ag_ssh.ssh_channel_request_exec(ch, req) != SSH_OK) {
		ag_err_set(err, "upstream '%s': the host refused the command: %s", c->up->name,
		    ag_ssh.ssh_get_error(c->s));
		goto fail;
	}
	return ch;
fail:
	if (ch != NULL)
		ag_ssh.ssh_channel_free(ch);
	return NULL;
}
