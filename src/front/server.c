/* server.c - the built-in SSH server's listener; see server.h, server_int.h */
#include "agconfig.h"
#include "common/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/sshlib.h"

#include "record/audit.h"
#include "common/rundir.h"
#include "common/config.h"
#include "common/lastgood.h"
#include "core/core.h"
#include "policy/envsan.h"
#include "common/log.h"
#include "auth/pamauth.h"
#include "front/repl.h"
#include "exec/runner.h"
#include "front/server.h"
#include "exec/sigpipe.h"
#include "exec/session.h"

#include "front/server_int.h"



/* ---- small helpers ------------------------------------------------------ */

static volatile sig_atomic_t got_chld, got_hup;
volatile sig_atomic_t srv_got_stop;
volatile sig_atomic_t srv_policy_reloaded;
volatile sig_atomic_t srv_forward_to;
static int is_listener;		/* SIGHUP: reload (listener) or end (connection) */
/* A connection's end of its listener slot's pipe: written once authenticated. */
int srv_authed_fd = -1;

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else if (sig == SIGHUP && is_listener)
		got_hup = 1;
	else if (sig == SIGUSR2) {
		if (!is_listener)
			srv_policy_reloaded = 1;
		if (!is_listener && srv_forward_to > 0)
			(void)kill((pid_t)srv_forward_to, SIGUSR2);
	} else
		srv_got_stop = sig;
	ag_sigpipe_notify();
}

static int
install_signals(struct ag_err *err)
{
	static const int caught[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR2 };

	if (ag_sigpipe_catch(caught, sizeof(caught) / sizeof(caught[0]), on_signal, 1, err) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void
srv_default_signals(void)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM,
	    SIGQUIT };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

void
srv_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long
srv_conf_long(long v, long def)
{
	return v > 0 ? v : def;
}

void
srv_format_client(const struct sockaddr_storage *ss, char *addr, size_t alen, int *port,
    char *client, size_t clen)
{
	addr[0] = '\0';
	*port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, addr, (socklen_t)alen);
		*port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, addr, (socklen_t)alen);
		*port = ntohs(in6->sin6_port);
		/* an IPv4 client on a dual-stack socket: show it as IPv4 */
		if (strncmp(addr, "::ffff:", 7) == 0 && strchr(addr + 7, ':') == NULL)
			memmove(addr, addr + 7, strlen(addr + 7) + 1);
	}
	if (strchr(addr, ':') != NULL)
		snprintf(client, clen, "[%s]:%d", addr, *port);
	else
		snprintf(client, clen, "%s:%d", addr, *port);
}

/* ---- host keys ------------------------------------------------------------ */

int
ag_server_check_key_file(const char *path, struct ag_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return ag_err_set(err, "host key %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ag_err_set(err, "host key %s is not a regular file", path);
	if (st.st_uid != geteuid())
		return ag_err_set(err, "host key %s is owned by uid %ld, not by the user "
		    "running agentgate (uid %ld)", path, (long)st.st_uid, (long)geteuid());
	if ((st.st_mode & 077) != 0)
		return ag_err_set(err, "host key %s is accessible by group or others (mode "
		    "%04o): chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
	return 0;
}

int
ag_server_generate_host_key(const char *path, struct ag_err *err)
{
	ssh_key key = NULL;
	char pub[PATH_MAX], *b64 = NULL;
	int fd, rc = -1;
	FILE *fp;

	if (snprintf(pub, sizeof(pub), "%s.pub", path) >= (int)sizeof(pub))
		return ag_err_set(err, "%s: path too long", path);
	if (ag_sshlib_load(err) < 0)
		return -1;
	/* claim the name first: never overwrite a key, never race a symlink */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return ag_err_set(err, "cannot create %s: %s", path, strerror(errno));
	close(fd);
	if (ag_ssh.ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK) {
		ag_err_set(err, "cannot generate an ed25519 key");
		goto out;
	}
	if (ag_ssh.ssh_pki_export_privkey_file(key, NULL, NULL, NULL, path) != SSH_OK) {
		ag_err_set(err, "cannot write %s", path);
		goto out;
	}
	if (chmod(path, 0600) < 0 || ag_ssh.ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
		ag_err_set(err, "cannot finish %s", path);
		goto out;
	}
	if ((fd = open(pub, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0 ||
	    (fp = fdopen(fd, "w")) == NULL) {
		ag_err_set(err, "cannot create %s: %s", pub, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fprintf(fp, "%s %s agentgate-host-key\n", ag_ssh.ssh_key_type_to_char(ag_ssh.ssh_key_type(key)), b64);
	if (fclose(fp) != 0) {
		ag_err_set(err, "cannot write %s", pub);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		(void)unlink(path);
	ag_ssh.ssh_string_free_char(b64);
	ag_ssh.ssh_key_free(key);
	return rc;
}

/*
 * Load every configured host key into bind.  ed25519 is required (so
 * every modern client finds a key it trusts), RSA is optional, other
 * types are refused rather than silently offered.
 */
static int
load_host_keys(const struct ag_server_conf *sc, ssh_bind bind, struct ag_err *err)
{
	static const char *const defkeys[] = { AG_SERVER_DEFAULT_HOST_KEY };
	const char *const *paths = (const char *const *)sc->host_keys.v;
	size_t n = sc->host_keys.n, i;
	int have_ed = 0, have_rsa = 0;

	if (n == 0) {
		paths = defkeys;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		ssh_key key = NULL;
		enum ssh_keytypes_e t;

		if (ag_server_check_key_file(paths[i], err) < 0)
			return -1;
		if (ag_ssh.ssh_pki_import_privkey_file(paths[i], NULL, NULL, NULL, &key) != SSH_OK)
			return ag_err_set(err, "host key %s: cannot read the private key "
			    "(an unencrypted OpenSSH key is expected)", paths[i]);
		t = ag_ssh.ssh_key_type(key);
		if ((t == SSH_KEYTYPE_ED25519 && have_ed) || (t == SSH_KEYTYPE_RSA && have_rsa)) {
			ag_ssh.ssh_key_free(key);
			return ag_err_set(err, "host key %s: a second %s key (one of each "
			    "type)", paths[i], ag_ssh.ssh_key_type_to_char(t));
		}
		if (t != SSH_KEYTYPE_ED25519 && t != SSH_KEYTYPE_RSA) {
			ag_ssh.ssh_key_free(key);
			return ag_err_set(err, "host key %s: type %s is not supported (use "
			    "ed25519, optionally also RSA)", paths[i], ag_ssh.ssh_key_type_to_char(t));
		}
		/* the bind takes ownership of the key */
		if (ag_ssh.ssh_bind_options_set(bind, SSH_BIND_OPTIONS_IMPORT_KEY, key) != SSH_OK) {
			ag_ssh.ssh_key_free(key);
			return ag_err_set(err, "host key %s: %s", paths[i], ag_ssh.ssh_get_error(bind));
		}
		have_ed |= t == SSH_KEYTYPE_ED25519;
		have_rsa |= t == SSH_KEYTYPE_RSA;
	}
	if (!have_ed)
		return ag_err_set(err, "gateway.server.host_keys: an ed25519 host key is "
		    "required (agentgate serve --generate-host-key %s)",
		    AG_SERVER_DEFAULT_HOST_KEY);
	return 0;
}

static int
setup_bind(const struct ag_server_conf *sc, ssh_bind bind, struct ag_err *err)
{
	bool no = false;
	const struct {
		enum ssh_bind_options_e	 opt;
		const char		*val;
		const char		*name;
	} algos[] = {
		{ SSH_BIND_OPTIONS_CIPHERS_C_S, sc->ciphers ? sc->ciphers : AG_SERVER_DEFAULT_CIPHERS, "ciphers" },
		{ SSH_BIND_OPTIONS_CIPHERS_S_C, sc->ciphers ? sc->ciphers : AG_SERVER_DEFAULT_CIPHERS, "ciphers" },
		{ SSH_BIND_OPTIONS_KEY_EXCHANGE, sc->kex ? sc->kex : AG_SERVER_DEFAULT_KEX, "kex" },
		{ SSH_BIND_OPTIONS_HMAC_C_S, sc->macs ? sc->macs : AG_SERVER_DEFAULT_MACS, "macs" },
		{ SSH_BIND_OPTIONS_HMAC_S_C, sc->macs ? sc->macs : AG_SERVER_DEFAULT_MACS, "macs" },
		{ SSH_BIND_OPTIONS_HOSTKEY_ALGORITHMS, sc->hostkey_algorithms ?
		    sc->hostkey_algorithms : AG_SERVER_DEFAULT_HOSTKEY_ALGOS, "hostkey_algorithms" },
	};
	size_t i;

	/* only what agentgate.yaml says: no /etc/libssh/libssh_server.config */
	if (ag_ssh.ssh_bind_options_set(bind, SSH_BIND_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK)
		return ag_err_set(err, "libssh: %s", ag_ssh.ssh_get_error(bind));
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		if (ag_ssh.ssh_bind_options_set(bind, algos[i].opt, algos[i].val) != SSH_OK)
			return ag_err_set(err, "gateway.server.%s: libssh refuses '%s': %s",
			    algos[i].name, algos[i].val, ag_ssh.ssh_get_error(bind));
	return load_host_keys(sc, bind, err);
}

/* ---- listening ------------------------------------------------------------ */

static int
open_listener(const char *spec, struct ag_err *err)
{
	char host[ADDR_MAX + 2];
	const char *port;
	struct addrinfo hints, *res = NULL;
	int fd = -1, one = 1, rc;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (rb == NULL || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
			return ag_err_set(err, "listen address %s: expected [V6ADDR]:PORT", spec);
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = '\0';
		port = rb + 2;
	} else {
		const char *colon = strrchr(spec, ':');

		if (colon == NULL || (size_t)(colon - spec) >= sizeof(host))
			return ag_err_set(err, "listen address %s: expected ADDR:PORT", spec);
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = '\0';
		port = colon + 1;
		if (strcmp(host, "*") == 0)
			snprintf(host, sizeof(host), "0.0.0.0");
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0)
		return ag_err_set(err, "listen address %s: %s", spec, gai_strerror(rc));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ag_err_set(err, "listen address %s: socket: %s", spec, strerror(errno));
		goto fail;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "[::]" means IPv6 only; IPv4 is its own listen entry */
	if (res->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		ag_err_set(err, "listen address %s: %s", spec, strerror(errno));
		goto fail;
	}
	freeaddrinfo(res);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return -1;
}

/* ---- the listener -------------------------------------------------------------- */

struct conn_slot {
	pid_t	pid;
	char	addr[ADDR_MAX];
	int	authfd;		/* readable once it authenticated; -1 after */
};

static size_t
count_source(const struct conn_slot *slots, size_t n, const char *addr)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (slots[i].pid > 0 && strcmp(slots[i].addr, addr) == 0)
			k++;
	return k;
}

static void
reap_connections(struct conn_slot *slots, size_t n, size_t *active)
{
	pid_t pid;
	int st;
	size_t i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (i = 0; i < n; i++)
			if (slots[i].pid == pid) {
				slots[i].pid = 0;
				if (slots[i].authfd >= 0)
					close(slots[i].authfd);
				slots[i].authfd = -1;
				(*active)--;
			}
}

/* Connections that have not authenticated yet, overall. */
static size_t
count_startups(const struct conn_slot *slots, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += slots[i].pid > 0 && slots[i].authfd >= 0;
	return k;
}

/*
 * OpenSSH's MaxStartups: from `start` unauthenticated connections on, a
 * new one is dropped with a probability rising from rate% to 100% at
 * `full`, so that clients holding connections open without logging in
 * cannot keep everyone else out (they also meet login_grace_time and
 * max_per_source).
 */
static int
startup_refused(const struct ag_server_conf *sc, size_t pre)
{
	long start = sc->startups[0] > 0 ? sc->startups[0] : AG_SERVER_DEFAULT_STARTUPS_START;
	long rate = sc->startups[0] > 0 ? sc->startups[1] : AG_SERVER_DEFAULT_STARTUPS_RATE;
	long full = sc->startups[0] > 0 ? sc->startups[2] : AG_SERVER_DEFAULT_STARTUPS_FULL;
	long p;

	if ((long)pre < start)
		return 0;
	if ((long)pre >= full)
		return 1;
	p = rate + (100 - rate) * ((long)pre - start) / (full - start);
	return (long)arc4random_uniform(100) < p;
}

static void
accept_one(struct ag_config *cfg, ssh_bind bind, int lfd, int *lfds, size_t nl,
    struct conn_slot *slots, size_t nslots, size_t *active)
{
	const struct ag_server_conf *sc = &cfg->gw.server;
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	char addr[ADDR_MAX], client[CLIENT_MAX];
	int fd, port, ap[2];
	size_t i, slot;
	pid_t pid;

	fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	srv_format_client(&peer, addr, sizeof(addr), &port, client, sizeof(client));
	if (*active >= nslots) {
		ag_log(LOG_WARNING, "connection from %s refused: %zu connections "
		    "(gateway.server.max_connections)", client, *active);
		close(fd);
		return;
	}
	if (count_source(slots, nslots, addr) >= (size_t)srv_conf_long(sc->max_per_source,
	    AG_SERVER_DEFAULT_MAX_PER_SOURCE)) {
		ag_log(LOG_WARNING, "connection from %s refused: too many from this "
		    "address (gateway.server.max_per_source)", client);
		close(fd);
		return;
	}
	if (startup_refused(sc, count_startups(slots, nslots))) {
		ag_log(LOG_WARNING, "connection from %s dropped: %zu connections not "
		    "authenticated yet (gateway.server.max_startups)", client,
		    count_startups(slots, nslots));
		close(fd);
		return;
	}
	for (slot = 0; slot < nslots && slots[slot].pid > 0; slot++)
		;
	if (pipe2(ap, O_CLOEXEC | O_NONBLOCK) < 0) {
		ag_log(LOG_ERR, "pipe: %s", strerror(errno));
		close(fd);
		return;
	}
	if ((pid = fork()) < 0) {
		ag_log(LOG_ERR, "fork: %s", strerror(errno));
		close(ap[0]);
		close(ap[1]);
		close(fd);
		return;
	}
	if (pid == 0) {
		for (i = 0; i < nl; i++)
			close(lfds[i]);
		for (i = 0; i < nslots; i++)
			if (slots[i].authfd >= 0)
				close(slots[i].authfd);
		close(ap[0]);
		srv_authed_fd = ap[1];
		srv_default_signals();
		/* the connection's own handlers: SIGCHLD and stop requests */
		ag_sigpipe_close();
		got_chld = srv_got_stop = got_hup = 0;
		is_listener = 0;
		{
			struct ag_err err;

			if (install_signals(&err) < 0)
				_exit(1);
		}
		_exit(srv_connection_main(cfg, bind, fd, &peer));
	}
	close(fd);
	close(ap[1]);
	slots[slot].authfd = ap[0];
	slots[slot].pid = pid;
	snprintf(slots[slot].addr, sizeof(slots[slot].addr), "%s", addr);
	(*active)++;
}

static int
daemonize(struct ag_err *err)
{
	pid_t pid;
	int fd;

	if ((pid = fork()) < 0)
		return ag_err_set(err, "fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	(void)setsid();
	if ((pid = fork()) < 0)
		return ag_err_set(err, "fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		return ag_err_set(err, "chdir /: %s", strerror(errno));
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		(void)dup2(fd, 0);
		(void)dup2(fd, 1);
		(void)dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

/*
 * SIGHUP: read the policy again for the connections still to come (those
 * running keep theirs: they are forks with their own copy, but each opens
 * its next channels only for a caller the policy, read again, still takes:
 * SIGUSR2 tells them).  A policy that
 * does not load leaves the old one in place.  Listen addresses, host keys
 * and algorithms need a restart.
 */
static void
reload(const struct ag_server_opts *o, struct ag_config **cfg,
    struct ag_config **owned, const struct conn_slot *slots, size_t nslots)
{
	struct ag_config *n;
	struct ag_err err;
	char msg[AG_ERR_MSG_MAX + 512];
	size_t i;

	if (o->config_path == NULL)
		return;
	ag_err_clear(&err);
	if ((n = ag_config_load(o->config_path, 0, &err)) == NULL) {
		ag_log(LOG_ERR, "SIGHUP: policy not reloaded, the old one stays: %s",
		    ag_err_format(&err, msg, sizeof(msg)));
		return;
	}
	if (ag_lastgood_save(o->config_path, &err) < 0)
		ag_log(LOG_WARNING, "SIGHUP: not kept as the last good policy: %s", err.msg);
	ag_config_free(*owned);
	*owned = n;
	*cfg = n;
	/* the connections in progress judge their next channels against the
	 * policy as it is now (server_conn.c); told before the log line says
	 * it is done */
	for (i = 0; i < nslots; i++)
		if (slots[i].pid > 0)
			(void)kill(slots[i].pid, SIGUSR2);
	ag_log(LOG_INFO, "SIGHUP: policy %s reloaded for new connections (listen "
	    "addresses and host keys change only on restart)", o->config_path);
}

int
ag_server_run(struct ag_config *cfg, const struct ag_server_opts *o,
    struct ag_err *err)
{
	const struct ag_server_conf *sc = &cfg->gw.server;
	static const char *const deflisten[] = { "0.0.0.0:" AG_SERVER_DEFAULT_PORT,
	    "[::]:" AG_SERVER_DEFAULT_PORT };
	const char *const *listen = o->listen;
	size_t nlisten = o->nlisten, nl = 0, i, nslots, active = 0;
	int lfds[AG_SERVER_MAX_LISTEN];
	struct conn_slot *slots = NULL;
	struct pollfd *pf = NULL;
	ssh_bind bind = NULL;
	struct ag_config *owned = NULL;	/* a reloaded policy; the caller owns the first */
	int rc = -1;

	if (listen == NULL || nlisten == 0) {
		listen = (const char *const *)sc->listen.v;
		nlisten = sc->listen.n;
	}
	if (nlisten == 0) {
		listen = deflisten;
		nlisten = 2;
	}
	if (nlisten > AG_SERVER_MAX_LISTEN)
		return ag_err_set(err, "at most %d listen addresses", AG_SERVER_MAX_LISTEN);
	if (ag_sshlib_load(err) < 0)
		return -1;
	if (ag_ssh.ssh_init() != SSH_OK)
		return ag_err_set(err, "libssh initialisation failed");
	if ((bind = ag_ssh.ssh_bind_new()) == NULL) {
		ag_err_set(err, "out of memory");
		goto out;
	}
	if (setup_bind(sc, bind, err) < 0)
		goto out;
	if (geteuid() == 0) {
		struct ag_err lerr;

		/* for agentgate sessions/terminate and the token-guessing limit;
		 * not a reason to refuse service */
		ag_err_clear(&lerr);
		if (ag_rundir_make(&lerr) < 0)
			ag_log(LOG_WARNING, "%s", lerr.msg);
	}
	for (i = 0; i < nlisten; i++) {
		int fd = open_listener(listen[i], err);

		if (fd < 0) {
			/* the default IPv6 entry may fail on a host without IPv6 */
			if (listen == deflisten && i == 1) {
				ag_log(LOG_INFO, "%s", err->msg);
				ag_err_clear(err);
				continue;
			}
			goto out;
		}
		lfds[nl++] = fd;
	}
	nslots = (size_t)srv_conf_long(sc->max_connections, AG_SERVER_DEFAULT_MAX_CONNECTIONS);
	if ((slots = calloc(nslots, sizeof(*slots))) == NULL ||
	    (pf = calloc(AG_SERVER_MAX_LISTEN + 1 + nslots, sizeof(*pf))) == NULL) {
		ag_err_set(err, "out of memory");
		goto out;
	}
	for (i = 0; i < nslots; i++)
		slots[i].authfd = -1;
	if (!o->foreground && daemonize(err) < 0)
		goto out;
	is_listener = 1;
	if (install_signals(err) < 0)
		goto out;
	for (i = 0; i < nlisten; i++)
		ag_log(LOG_INFO, "listening on %s", listen[i]);

	while (!srv_got_stop) {
		size_t np = nl + 1, k;

		for (i = 0; i < nl; i++)
			pf[i] = (struct pollfd){ .fd = lfds[i], .events = POLLIN };
		pf[nl] = (struct pollfd){ .fd = ag_sigpipe_fd(), .events = POLLIN };
		/* connections not authenticated yet: their pipe says when they are */
		for (k = 0; k < nslots; k++)
			if (slots[k].pid > 0 && slots[k].authfd >= 0)
				pf[np++] = (struct pollfd){ .fd = slots[k].authfd, .events = POLLIN };
		if (poll(pf, (nfds_t)np, -1) < 0 && errno != EINTR) {
			ag_err_set(err, "poll: %s", strerror(errno));
			goto out;
		}
		for (i = nl + 1; i < np; i++)
			if (pf[i].revents != 0)
				for (k = 0; k < nslots; k++)
					if (slots[k].authfd == pf[i].fd) {
						close(slots[k].authfd);
						slots[k].authfd = -1;
					}
		if (pf[nl].revents & POLLIN)
			ag_sigpipe_drain();
		if (got_chld) {
			got_chld = 0;
			reap_connections(slots, nslots, &active);
		}
		if (got_hup) {
			got_hup = 0;
			reload(o, &cfg, &owned, slots, nslots);
		}
		for (i = 0; i < nl && !srv_got_stop; i++)
			if (pf[i].revents & POLLIN)
				accept_one(cfg, bind, lfds[i], lfds, nl, slots, nslots, &active);
	}
	ag_log(LOG_INFO, "stopping (signal %d); %zu connection(s) continue", (int)srv_got_stop,
	    active);
	rc = 0;
out:
	for (i = 0; i < nl; i++)
		close(lfds[i]);
	free(slots);
	free(pf);
	if (bind != NULL)
		ag_ssh.ssh_bind_free(bind);
	ag_config_free(owned);
	ag_ssh.ssh_finalize();
	return rc;
}
