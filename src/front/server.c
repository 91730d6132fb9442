/* server.c - the built-in SSH server; see server.h */
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

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>

#include "record/audit.h"
#include "common/config.h"
#include "core/core.h"
#include "policy/envsan.h"
#include "common/log.h"
#include "auth/pamauth.h"
#include "front/repl.h"
#include "exec/runner.h"
#include "front/server.h"
#include "exec/sigpipe.h"
#include "exec/session.h"

#define ADDR_MAX	(INET6_ADDRSTRLEN + 1)
#define CLIENT_MAX	(ADDR_MAX + 16)
#define INBUF_MAX	65536		/* client → command stdin, per channel */
#define RELAY_CHUNK	32768		/* command output → channel, per read */
#define FAIL_DELAY_MS	400		/* after a failed password / PAM step */
#define MAX_GROUPS	1024


/* ---- small helpers ------------------------------------------------------ */

static volatile sig_atomic_t got_chld, got_stop, got_hup;
static int is_listener;		/* SIGHUP: reload (listener) or end (connection) */
/* A connection's end of its listener slot's pipe: written once authenticated. */
static int authed_fd = -1;

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else if (sig == SIGHUP && is_listener)
		got_hup = 1;
	else
		got_stop = sig;
	ag_sigpipe_notify();
}

static int
install_signals(struct ag_err *err)
{
	static const int caught[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };

	if (ag_sigpipe_catch(caught, sizeof(caught) / sizeof(caught[0]), on_signal, 1, err) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void
default_signals(void)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM,
	    SIGQUIT };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long
conf_long(long v, long def)
{
	return v > 0 ? v : def;
}

static void
format_client(const struct sockaddr_storage *ss, char *addr, size_t alen, int *port,
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
	/* claim the name first: never overwrite a key, never race a symlink */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return ag_err_set(err, "cannot create %s: %s", path, strerror(errno));
	close(fd);
	if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK) {
		ag_err_set(err, "cannot generate an ed25519 key");
		goto out;
	}
	if (ssh_pki_export_privkey_file(key, NULL, NULL, NULL, path) != SSH_OK) {
		ag_err_set(err, "cannot write %s", path);
		goto out;
	}
	if (chmod(path, 0600) < 0 || ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
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
	fprintf(fp, "%s %s agentgate-host-key\n", ssh_key_type_to_char(ssh_key_type(key)), b64);
	if (fclose(fp) != 0) {
		ag_err_set(err, "cannot write %s", pub);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		(void)unlink(path);
	ssh_string_free_char(b64);
	ssh_key_free(key);
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
		if (ssh_pki_import_privkey_file(paths[i], NULL, NULL, NULL, &key) != SSH_OK)
			return ag_err_set(err, "host key %s: cannot read the private key "
			    "(an unencrypted OpenSSH key is expected)", paths[i]);
		t = ssh_key_type(key);
		if ((t == SSH_KEYTYPE_ED25519 && have_ed) || (t == SSH_KEYTYPE_RSA && have_rsa)) {
			ssh_key_free(key);
			return ag_err_set(err, "host key %s: a second %s key (one of each "
			    "type)", paths[i], ssh_key_type_to_char(t));
		}
		if (t != SSH_KEYTYPE_ED25519 && t != SSH_KEYTYPE_RSA) {
			ssh_key_free(key);
			return ag_err_set(err, "host key %s: type %s is not supported (use "
			    "ed25519, optionally also RSA)", paths[i], ssh_key_type_to_char(t));
		}
		/* the bind takes ownership of the key */
		if (ssh_bind_options_set(bind, SSH_BIND_OPTIONS_IMPORT_KEY, key) != SSH_OK) {
			ssh_key_free(key);
			return ag_err_set(err, "host key %s: %s", paths[i], ssh_get_error(bind));
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
	if (ssh_bind_options_set(bind, SSH_BIND_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK)
		return ag_err_set(err, "libssh: %s", ssh_get_error(bind));
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		if (ssh_bind_options_set(bind, algos[i].opt, algos[i].val) != SSH_OK)
			return ag_err_set(err, "gateway.server.%s: libssh refuses '%s': %s",
			    algos[i].name, algos[i].val, ssh_get_error(bind));
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

/* ---- one connection: state ------------------------------------------------- */

struct conn;
struct chan;

/* What an fd callback needs to know: whose output, which stream. */
struct fdref {
	struct chan	*ch;
	int		 err;
};

struct chan {
	struct conn		*c;
	ssh_channel		 ch;
	struct ssh_channel_callbacks_struct cb;
	int			 used;
	/* requests */
	int			 pty;
	int			 pty_master, pty_slave;
	char			 tty_name[64];
	char			 term[64];
	struct winsize		 ws;
	char			*env_names[AG_SERVER_MAX_ENV];
	char			*env_vals[AG_SERVER_MAX_ENV];
	size_t			 nenv;
	/* the session process */
	pid_t			 pid;
	int			 exited, wstatus;
	int			 in_fd, out_fd, err_fd, st_fd;	/* our ends; -1 = closed */
	int			 out_reg, err_reg;		/* in the ssh_event */
	int			 out_eof, err_eof;
	int			 client_eof, client_closed, finished;
	char			 inbuf[INBUF_MAX];
	size_t			 inlen;
	int			 stalled;	/* libssh holds input we did not take */
	unsigned long		 ncommands;
	struct fdref		 ref_out, ref_err;
};

struct conn {
	const struct ag_config		*cfg;
	const struct ag_server_conf	*sc;
	ssh_session			 s;
	int				 fd;
	char				 caddr[ADDR_MAX];
	int				 cport;
	char				 laddr[ADDR_MAX];
	int				 lport;
	char				 client[CLIENT_MAX];
	/* authentication */
	char				 user[64];
	int				 have_user, user_ok;
	uid_t				 uid;
	gid_t				 gid;
	char				*home;
	int				 done[AG_AUTH_MAX_STEPS];
	size_t				 ndone;
	long				 tries;
	char				*auth_info;
	struct ag_pamauth		*pam;
	const struct ag_profile		*profile;
	char				*identity;
	ssh_message			 kbd_msg;	/* where the next kbd-int prompt goes */
	const char			*password;	/* during a password attempt */
	/* session */
	struct ag_audit			*preaudit;	/* records before authentication */
	struct ag_audit			*audit;
	struct ssh_server_callbacks_struct scb;
	ssh_event			 ev;
	struct chan			*chans;
	size_t				 nchans;
	unsigned long			 ncommands;
};

static void
audit_event(struct conn *c, const char *event, const char *request, const char *decision,
    const char *reason)
{
	struct ag_err err;

	ag_err_clear(&err);
	if (c->audit != NULL) {
		if (ag_audit_event(c->audit, event, request, decision, reason, &err) < 0)
			ag_log(LOG_ERR, "%s", err.msg);
		return;
	}
	/* before authentication: a handle of its own, one session id per connection */
	if (c->preaudit == NULL) {
		struct ag_audit_info info;

		memset(&info, 0, sizeof(info));
		info.user = c->have_user ? c->user : NULL;
		info.client = c->client;
		info.mode = "server";
		if ((c->preaudit = ag_audit_open(&c->cfg->gw.audit, &info, &err)) == NULL)
			return;
	}
	if (ag_audit_event(c->preaudit, event, request, decision, reason, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
}

/* ---- authorized keys ------------------------------------------------------- */

int
ag_server_expand_keys_path(const char *pattern, const char *user, const char *home,
    char *out, size_t outlen, struct ag_err *err)
{
	size_t o = 0;
	const char *p = pattern;

#define PUT(s, n) do {							\
		if ((n) >= outlen - o)					\
			return ag_err_set(err, "authorized_keys path too long"); \
		memcpy(out + o, (s), (n));				\
		o += (n);						\
	} while (0)

	if (outlen == 0)
		return ag_err_set(err, "no room");
	if (strncmp(p, "~/", 2) == 0) {
		PUT(home, strlen(home));
		p++;
	}
	for (; *p != '\0'; p++) {
		if (*p == '%' && p[1] == 'u') {
			PUT(user, strlen(user));
			p++;
		} else if (*p == '%' && p[1] == 'h') {
			PUT(home, strlen(home));
			p++;
		} else if (*p == '%') {
			return ag_err_set(err, "authorized_keys: unknown token %%%c",
			    p[1] ? p[1] : ' ');
		} else
			PUT(p, 1);
	}
#undef PUT
	out[o] = '\0';
	if (out[0] != '/')
		return ag_err_set(err, "authorized_keys path %s is not absolute", out);
	return 0;
}

int
ag_server_check_keys_perms(const char *path, uid_t uid, struct ag_err *err)
{
	char real[PATH_MAX], *slash;
	struct stat st;

	if (realpath(path, real) == NULL)
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	for (;;) {
		if (stat(real, &st) < 0)
			return ag_err_set(err, "%s: %s", real, strerror(errno));
		if (st.st_uid != 0 && st.st_uid != uid)
			return ag_err_set(err, "bad ownership of %s (uid %ld): the keys of "
			    "uid %ld must be owned by that user or root", real,
			    (long)st.st_uid, (long)uid);
		/*
		 * A root-owned sticky directory above the file (/tmp) is safe:
		 * nobody else can rename or replace what lies in it.  The
		 * same rule as the policy file's (ag_config_check_perms).
		 */
		if ((st.st_mode & 022) != 0 && !(S_ISDIR(st.st_mode) &&
		    st.st_uid == 0 && (st.st_mode & S_ISVTX) != 0))
			return ag_err_set(err, "bad modes for %s (%04o): writable by group "
			    "or others", real, (unsigned)(st.st_mode & 07777));
		if (strcmp(real, "/") == 0)
			return 0;
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/* 1: key is listed for the user, 0: not, -1: the file is unusable (logged). */
static int
key_authorized(struct conn *c, ssh_key key)
{
	const char *pat = c->sc->authorized_keys != NULL ? c->sc->authorized_keys :
	    AG_SERVER_DEFAULT_AUTHORIZED_KEYS;
	char path[PATH_MAX], *buf = NULL, *line, *save = NULL;
	struct ag_err err;
	struct stat st;
	size_t len = 0;
	int fd, found = 0, lineno = 0;

	ag_err_clear(&err);
	if (ag_server_expand_keys_path(pat, c->user, c->home, path, sizeof(path), &err) < 0 ||
	    ag_server_check_keys_perms(path, c->uid, &err) < 0) {
		ag_log(LOG_WARNING, "authorized keys of %s not used: %s", c->user, err.msg);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0) {
		ag_log(LOG_WARNING, "authorized keys of %s: %s: %s", c->user, path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > AG_SERVER_MAX_AUTHKEYS_BYTES ||
	    (buf = malloc(AG_SERVER_MAX_AUTHKEYS_BYTES + 1)) == NULL) {
		ag_log(LOG_WARNING, "authorized keys of %s: %s is not a regular file of at "
		    "most %d bytes", c->user, path, AG_SERVER_MAX_AUTHKEYS_BYTES);
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, AG_SERVER_MAX_AUTHKEYS_BYTES + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len > AG_SERVER_MAX_AUTHKEYS_BYTES)
			break;
	}
	close(fd);
	if (len > AG_SERVER_MAX_AUTHKEYS_BYTES) {
		ag_log(LOG_WARNING, "authorized keys of %s: %s is too large", c->user, path);
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL && !found;
	    line = strtok_r(NULL, "\n", &save)) {
		char *type, *b64, *sp = NULL;
		enum ssh_keytypes_e t;
		ssh_key k = NULL;

		lineno++;
		line += strspn(line, " \t\r");
		if (*line == '\0' || *line == '#')
			continue;
		type = strtok_r(line, " \t\r", &sp);
		b64 = strtok_r(NULL, " \t\r", &sp);
		if (type == NULL)
			continue;
		t = ssh_key_type_from_name(type);
		if (t == SSH_KEYTYPE_UNKNOWN || b64 == NULL) {
			/*
			 * Options (from=, command=, restrict, ...) change what a key
			 * may do; honouring only some of them would widen access, so
			 * such a line grants nothing.
			 */
			ag_log(LOG_INFO, "%s:%d: key options are not supported; line "
			    "ignored", path, lineno);
			continue;
		}
		if (ssh_pki_import_pubkey_base64(b64, t, &k) != SSH_OK)
			continue;
		if (ssh_key_cmp(k, key, SSH_KEY_CMP_PUBLIC) == 0)
			found = 1;
		ssh_key_free(k);
	}
	explicit_bzero(buf, len);
	free(buf);
	return found;
}

/* ---- users ------------------------------------------------------------------ */

static int
in_list(const struct ag_strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Whether user may log in at all.  root only when allow_users names it;
 * a listener that is not root can only serve the user it runs as.
 */
static int
user_allowed(struct conn *c, const struct passwd *pw)
{
	const struct ag_server_conf *sc = c->sc;
	gid_t groups[MAX_GROUPS];
	int ng = MAX_GROUPS, i;
	size_t j;

	if (geteuid() != 0 && pw->pw_uid != geteuid())
		return 0;
	if (pw->pw_uid == 0 && !in_list(&sc->allow_users, pw->pw_name))
		return 0;
	if (sc->allow_users.n == 0 && sc->allow_groups.n == 0)
		return 1;
	if (in_list(&sc->allow_users, pw->pw_name))
		return 1;
	if (sc->allow_groups.n == 0)
		return 0;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ng) < 0)
		return 0;
	for (i = 0; i < ng; i++) {
		struct group *gr = getgrgid(groups[i]);

		for (j = 0; gr != NULL && j < sc->allow_groups.n; j++)
			if (strcmp(gr->gr_name, sc->allow_groups.v[j]) == 0)
				return 1;
	}
	return 0;
}

/* The first user named fixes the user of the connection (as sshd does). */
static int
set_user(struct conn *c, const char *user)
{
	struct passwd *pw;

	if (user == NULL || *user == '\0' || strlen(user) >= sizeof(c->user))
		return -1;
	if (c->have_user)
		return strcmp(c->user, user) == 0 ? 0 : -1;
	snprintf(c->user, sizeof(c->user), "%s", user);
	c->have_user = 1;
	errno = 0;
	if ((pw = getpwnam(user)) == NULL)
		return 0;	/* unknown users fail every method, without saying so */
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	if ((c->home = strdup(pw->pw_dir)) == NULL)
		return -1;
	c->user_ok = user_allowed(c, pw);
	if (!c->user_ok)
		ag_log(LOG_NOTICE, "user %s from %s is not allowed by gateway.server",
		    user, c->client);
	return 0;
}

/* The caller's profile, as every front end resolves it (core.c). */
static const struct ag_profile *
resolve_profile(struct conn *c, struct ag_err *err)
{
	struct passwd *pw;

	errno = 0;
	if ((pw = getpwnam(c->user)) == NULL || pw->pw_uid != c->uid) {
		ag_err_set(err, "user %s changed or vanished", c->user);
		return NULL;
	}
	return ag_core_profile(c->cfg, NULL, ag_pamauth_profile(c->pam), pw, err);
}

/* ---- authentication ---------------------------------------------------------- */

/* libssh hides these accessors behind a deprecation in favour of server
 * callbacks, which cannot carry a synchronous PAM conversation; the
 * message API is the supported way to do keyboard-interactive with PAM. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static ssh_key
msg_pubkey(ssh_message m)
{
	return ssh_message_auth_pubkey(m);
}

static enum ssh_publickey_state_e
msg_pubkey_state(ssh_message m)
{
	return ssh_message_auth_publickey_state(m);
}

static const char *
msg_password(ssh_message m)
{
	return ssh_message_auth_password(m);
}
#pragma GCC diagnostic pop

static const struct ag_auth_chain default_chain = { { AG_AUTH_PUBLICKEY }, 1 };

static const char *
method_name(int m)
{
	return m == AG_AUTH_PUBLICKEY ? "publickey" : m == AG_AUTH_KBDINT ?
	    "keyboard-interactive" : "password";
}

static void
chains(const struct conn *c, const struct ag_auth_chain **v, size_t *n)
{
	if (c->sc->nchains == 0) {
		*v = &default_chain;
		*n = 1;
	} else {
		*v = c->sc->chains;
		*n = c->sc->nchains;
	}
}

/* Chains whose first steps are exactly what is done: bit mask of next steps. */
static int
next_methods(const struct conn *c, int *complete_with)
{
	const struct ag_auth_chain *v;
	size_t n, i, j;
	int next = 0;

	chains(c, &v, &n);
	*complete_with = 0;
	for (i = 0; i < n; i++) {
		if (v[i].nsteps <= c->ndone)
			continue;
		for (j = 0; j < c->ndone; j++)
			if (v[i].step[j] != c->done[j])
				break;
		if (j < c->ndone)
			continue;
		next |= v[i].step[c->ndone];
		if (v[i].nsteps == c->ndone + 1)
			*complete_with |= v[i].step[c->ndone];
	}
	return next;
}

static int
libssh_methods(int m)
{
	return ((m & AG_AUTH_PUBLICKEY) ? SSH_AUTH_METHOD_PUBLICKEY : 0) |
	    ((m & AG_AUTH_KBDINT) ? SSH_AUTH_METHOD_INTERACTIVE : 0) |
	    ((m & AG_AUTH_PASSWORD) ? SSH_AUTH_METHOD_PASSWORD : 0);
}

/* The keyboard-interactive bridge: one PAM batch = one INFO_REQUEST. */
static int
kbd_conv(void *arg, size_t n, const struct ag_pamauth_prompt *p, char **answers)
{
	struct conn *c = arg;
	const char *prompts[32];
	char echo[32], instruction[1024] = "";
	size_t np = 0, i, k;
	ssh_message m;

	for (i = 0; i < n; i++) {
		if (p[i].style == AG_PAMAUTH_INFO || p[i].style == AG_PAMAUTH_ERROR) {
			size_t l = strlen(instruction);

			snprintf(instruction + l, sizeof(instruction) - l, "%s%s",
			    l ? "\n" : "", p[i].text);
			continue;
		}
		if (np == sizeof(prompts) / sizeof(prompts[0]))
			return -1;
		prompts[np] = p[i].text;
		echo[np++] = p[i].style == AG_PAMAUTH_ECHO_ON;
	}
	if (np == 0)
		return 0;	/* a message alone: shown with the next prompt, if any */
	if (c->kbd_msg == NULL ||
	    ssh_message_auth_interactive_request(c->kbd_msg, "", instruction,
	    (unsigned)np, prompts, echo) != SSH_OK)
		return -1;
	ssh_message_free(c->kbd_msg);
	c->kbd_msg = NULL;
	for (;;) {
		if ((m = ssh_message_get(c->s)) == NULL)
			return -1;
		if (ssh_message_type(m) == SSH_REQUEST_AUTH &&
		    ssh_message_subtype(m) == SSH_AUTH_METHOD_INTERACTIVE &&
		    ssh_message_auth_kbdint_is_response(m))
			break;
		/* anything else in the middle of a conversation ends it */
		ssh_message_reply_default(m);
		ssh_message_free(m);
		return -1;
	}
	c->kbd_msg = m;
	if ((size_t)ssh_userauth_kbdint_getnanswers(c->s) != np)
		return -1;
	for (i = 0, k = 0; i < n; i++) {
		const char *a;

		if (p[i].style == AG_PAMAUTH_INFO || p[i].style == AG_PAMAUTH_ERROR)
			continue;
		a = ssh_userauth_kbdint_getanswer(c->s, (unsigned)k++);
		if (a == NULL || strlen(a) > AG_PAMAUTH_MAX_RESPONSE ||
		    (answers[i] = strdup(a)) == NULL)
			return -1;
	}
	return 0;
}

/* The password method: the one secret prompt gets the password sent. */
static int
password_conv(void *arg, size_t n, const struct ag_pamauth_prompt *p, char **answers)
{
	struct conn *c = arg;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i].style != AG_PAMAUTH_ECHO_OFF)
			continue;
		if (c->password == NULL || (answers[i] = strdup(c->password)) == NULL)
			return -1;
		c->password = NULL;	/* one answer per attempt */
	}
	return 0;
}

/* The PAM front half, once per connection.  0 ok, -1 failed (reason set). */
static int
run_pam(struct conn *c, int method, char *reason, size_t rlen)
{
	struct ag_pamauth_params pp;
	struct ag_pamauth_failure fail;
	struct ag_err err;

	if (c->pam != NULL)
		return 0;
	memset(&pp, 0, sizeof(pp));
	memset(&fail, 0, sizeof(fail));
	ag_err_clear(&err);
	pp.user = c->user;
	pp.rhost = c->caddr;
	pp.tty = "ssh";
	pp.auth_info = c->auth_info;
	pp.interactive = 0;
	if (method == AG_AUTH_KBDINT)
		pp.conv = kbd_conv;
	else if (method == AG_AUTH_PASSWORD)
		pp.conv = password_conv;
	pp.conv_arg = c;
	if ((c->pam = ag_pamauth_start(c->cfg, &pp, &err, &fail)) == NULL) {
		snprintf(reason, rlen, "PAM %s: %.300s", fail.stage ? fail.stage : "start",
		    fail.pam_error[0] ? fail.pam_error : err.msg);
		return -1;
	}
	return 0;
}

enum { AUTH_AGAIN, AUTH_DONE, AUTH_FATAL };

static int
auth_fail(struct conn *c, ssh_message m, const char *method, const char *reason,
    int delay)
{
	int complete;
	char why[512];

	c->tries++;
	snprintf(why, sizeof(why), "%s (attempt %ld of %ld)", reason, c->tries,
	    conf_long(c->sc->max_auth_tries, AG_SERVER_DEFAULT_MAX_AUTH_TRIES));
	ag_log(LOG_NOTICE, "failed %s for %s from %s: %s", method,
	    c->have_user ? c->user : "(none)", c->client, why);
	audit_event(c, "auth_failure", method, "deny", why);
	if (delay)
		sleep_ms(FAIL_DELAY_MS);
	if (c->tries >= conf_long(c->sc->max_auth_tries, AG_SERVER_DEFAULT_MAX_AUTH_TRIES)) {
		audit_event(c, "auth_failure", method, "deny",
		    "too many authentication failures: disconnected");
		ag_log(LOG_NOTICE, "too many authentication failures for %s from %s",
		    c->have_user ? c->user : "(none)", c->client);
		ssh_disconnect(c->s);
		return AUTH_FATAL;
	}
	if (m != NULL) {
		ssh_message_auth_set_methods(m, libssh_methods(next_methods(c, &complete)));
		ssh_message_reply_default(m);
	}
	return AUTH_AGAIN;
}

/* One method has just succeeded: partial success, or the end of a chain. */
static int
step_done(struct conn *c, ssh_message m, int method)
{
	int complete, next;
	char reason[512];
	struct ag_err err;

	(void)next_methods(c, &complete);
	if (method != AG_AUTH_PUBLICKEY || (complete & method)) {
		/* keyboard-interactive/password are PAM itself; a finished chain
		 * always passes PAM (account, identity, session) */
		int r = run_pam(c, method, reason, sizeof(reason));

		/*
		 * A keyboard-interactive conversation answers on its latest
		 * message (the first one is gone once a prompt was sent); NULL
		 * when the conversation broke off and there is nothing to answer.
		 */
		if (method == AG_AUTH_KBDINT)
			m = c->kbd_msg;
		if (r < 0)
			return auth_fail(c, m, method_name(method), reason, 1);
		if (m == NULL)
			return AUTH_FATAL;
	}
	if (c->ndone < AG_AUTH_MAX_STEPS)
		c->done[c->ndone++] = method;
	next = next_methods(c, &complete);
	if (next != 0) {
		ssh_message_auth_set_methods(m, libssh_methods(next));
		ssh_message_auth_reply_success(m, 1);
		ag_log(LOG_INFO, "partial success (%s) for %s from %s", method_name(method),
		    c->user, c->client);
		return AUTH_AGAIN;
	}
	ag_err_clear(&err);
	if ((c->profile = resolve_profile(c, &err)) == NULL) {
		/* nothing of this attempt may carry over to the next one */
		ag_pamauth_end(c->pam);
		c->pam = NULL;
		if (c->ndone > 0)
			c->ndone--;
		return auth_fail(c, m, method_name(method), err.msg, 1);
	}
	if (ag_pamauth_identity(c->pam) != NULL &&
	    (c->identity = strdup(ag_pamauth_identity(c->pam))) == NULL)
		return AUTH_FATAL;
	ssh_message_auth_reply_success(m, 0);
	return AUTH_DONE;
}

static int
handle_auth(struct conn *c, ssh_message *mp)
{
	ssh_message m = *mp;
	int method, next, complete, bit;

	if (set_user(c, ssh_message_auth_user(m)) < 0) {
		ag_log(LOG_NOTICE, "client %s changed the user name during "
		    "authentication: disconnected", c->client);
		audit_event(c, "auth_failure", "user", "deny", "user name changed");
		ssh_disconnect(c->s);
		return AUTH_FATAL;
	}
	next = next_methods(c, &complete);
	method = ssh_message_subtype(m);
	bit = method == SSH_AUTH_METHOD_PUBLICKEY ? AG_AUTH_PUBLICKEY :
	    method == SSH_AUTH_METHOD_INTERACTIVE ? AG_AUTH_KBDINT :
	    method == SSH_AUTH_METHOD_PASSWORD ? AG_AUTH_PASSWORD : 0;
	if (method == SSH_AUTH_METHOD_NONE || bit == 0 || !(next & bit)) {
		/* "none" is how a client asks for the list: not a failure */
		if (method == SSH_AUTH_METHOD_NONE) {
			ssh_message_auth_set_methods(m, libssh_methods(next));
			ssh_message_reply_default(m);
			return AUTH_AGAIN;
		}
		return auth_fail(c, m, bit ? method_name(bit) : "unsupported",
		    "method not allowed at this step", 0);
	}
	if (bit == AG_AUTH_PUBLICKEY) {
		ssh_key key = msg_pubkey(m);
		enum ssh_publickey_state_e st = msg_pubkey_state(m);
		int ok = c->user_ok && key != NULL ? key_authorized(c, key) : 0;

		if (ok != 1)
			return auth_fail(c, m, "publickey", c->user_ok ?
			    "key not in the authorized keys file" :
			    "unknown or not allowed user", 0);
		if (st == SSH_PUBLICKEY_STATE_NONE) {
			ssh_message_auth_reply_pk_ok_simple(m);
			return AUTH_AGAIN;
		}
		if (st != SSH_PUBLICKEY_STATE_VALID)
			return auth_fail(c, m, "publickey", "bad signature", 0);
		if (c->auth_info == NULL) {
			char *b64 = NULL;
			size_t n;

			if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK)
				return AUTH_FATAL;
			n = strlen(b64) + 64;
			if ((c->auth_info = malloc(n)) == NULL) {
				ssh_string_free_char(b64);
				return AUTH_FATAL;
			}
			/* what sshd's ExposeAuthInfo writes, for pam_agentgate */
			snprintf(c->auth_info, n, "publickey %s %s\n",
			    ssh_key_type_to_char(ssh_key_type(key)), b64);
			ssh_string_free_char(b64);
		}
		return step_done(c, m, AG_AUTH_PUBLICKEY);
	}
	if (!c->user_ok) {
		/* no PAM conversation for a user who may not log in at all */
		return auth_fail(c, m, method_name(bit), "unknown or not allowed user", 1);
	}
	if (bit == AG_AUTH_PASSWORD) {
		int r;

		c->password = msg_password(m);
		r = step_done(c, m, AG_AUTH_PASSWORD);
		c->password = NULL;
		return r;
	}
	/* keyboard-interactive */
	if (ssh_message_auth_kbdint_is_response(m))
		return auth_fail(c, m, "keyboard-interactive", "unexpected response", 0);
	c->kbd_msg = m;
	*mp = NULL;	/* the conversation owns it now */
	{
		int r = step_done(c, m, AG_AUTH_KBDINT);

		if (c->kbd_msg != NULL) {
			ssh_message_free(c->kbd_msg);
			c->kbd_msg = NULL;
		}
		return r;
	}
}

static int
auth_phase(struct conn *c)
{
	int complete;

	ssh_set_auth_methods(c->s, libssh_methods(next_methods(c, &complete)));
	for (;;) {
		ssh_message m = ssh_message_get(c->s);
		int r;

		if (m == NULL)
			return -1;
		if (ssh_message_type(m) != SSH_REQUEST_AUTH) {
			ssh_message_reply_default(m);	/* service requests: accept */
			ssh_message_free(m);
			continue;
		}
		r = handle_auth(c, &m);
		if (m != NULL)
			ssh_message_free(m);
		if (r == AUTH_DONE)
			return 0;
		if (r == AUTH_FATAL)
			return -1;
	}
}

/* ---- privileges ------------------------------------------------------------- */

static int
drop_privileges(struct conn *c, struct ag_err *err)
{
	if (geteuid() != 0) {
		if (getuid() != c->uid || geteuid() != c->uid)
			return ag_err_set(err, "not running as %s", c->user);
		return 0;
	}
	if (initgroups(c->user, c->gid) < 0)
		return ag_err_set(err, "initgroups(%s): %s", c->user, strerror(errno));
	if (setresgid(c->gid, c->gid, c->gid) < 0)
		return ag_err_set(err, "setresgid: %s", strerror(errno));
	if (setresuid(c->uid, c->uid, c->uid) < 0)
		return ag_err_set(err, "setresuid: %s", strerror(errno));
	/* verify: a silent failure here would run commands as root */
	if (getuid() != c->uid || geteuid() != c->uid || getgid() != c->gid ||
	    getegid() != c->gid)
		return ag_err_set(err, "privileges not dropped");
	if (c->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return ag_err_set(err, "root privileges could be regained");
	return 0;
}

/*
 * The connection process holds the SSH session keys and the audit fd and
 * runs as the same user as the commands: no ptrace, no /proc/PID/mem or
 * fd access, no core dump for them (the kernel does this on a uid change
 * anyway; a server that never was root needs it said).
 */
static void
not_dumpable(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		ag_log(LOG_WARNING, "PR_SET_DUMPABLE: %s", strerror(errno));
}

/* ---- channels ----------------------------------------------------------------- */

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void
chan_audit(struct chan *ch, const char *request, const char *decision, const char *reason)
{
	ag_log(LOG_INFO, "%s from %s: %s %s%s%s", ch->c->user, ch->c->client, request,
	    decision, reason ? ": " : "", reason ? reason : "");
	audit_event(ch->c, "channel_request", request, decision, reason);
}

/* Tell the client why, on the channel's stderr, the way the gateway does. */
static void
chan_say(struct chan *ch, const char *msg)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "agentgate: %s\r\n", msg);

	if (n > 0)
		(void)ssh_channel_write_stderr(ch->ch, line, (uint32_t)strlen(line));
}

/* A new PTY pair for the channel, with the requested size. */
static int
open_pty(struct chan *ch)
{
	if ((ch->pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)) < 0 ||
	    grantpt(ch->pty_master) < 0 || unlockpt(ch->pty_master) < 0 ||
	    ptsname_r(ch->pty_master, ch->tty_name, sizeof(ch->tty_name)) != 0)
		return -1;
	if ((ch->pty_slave = open(ch->tty_name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	return ioctl(ch->pty_slave, TIOCSWINSZ, &ch->ws);
}

static int
on_pty_request(ssh_session s, ssh_channel channel, const char *term, int cols, int rows,
    int px, int py, void *ud)
{
	struct chan *ch = ud;
	size_t i;

	(void)s;
	(void)channel;
	if (ch->pid > 0 || ch->pty) {
		chan_audit(ch, "pty-req", "deny", "too late or twice");
		return -1;
	}
	for (i = 0; term != NULL && term[i] != '\0'; i++)
		if (!((term[i] >= 'a' && term[i] <= 'z') || (term[i] >= 'A' && term[i] <= 'Z') ||
		    (term[i] >= '0' && term[i] <= '9') || term[i] == '-' || term[i] == '_' ||
		    term[i] == '.' || term[i] == '+'))
			break;
	if (term == NULL || term[i] != '\0' || i == 0 || i >= sizeof(ch->term))
		snprintf(ch->term, sizeof(ch->term), "dumb");
	else
		snprintf(ch->term, sizeof(ch->term), "%s", term);
	memset(&ch->ws, 0, sizeof(ch->ws));
	ch->ws.ws_col = (unsigned short)(cols > 0 && cols < 10000 ? cols : 80);
	ch->ws.ws_row = (unsigned short)(rows > 0 && rows < 10000 ? rows : 24);
	ch->ws.ws_xpixel = (unsigned short)(px > 0 && px < 65536 ? px : 0);
	ch->ws.ws_ypixel = (unsigned short)(py > 0 && py < 65536 ? py : 0);
	if (open_pty(ch) < 0) {
		chan_audit(ch, "pty-req", "deny", strerror(errno));
		close_fd(&ch->pty_master);
		close_fd(&ch->pty_slave);
		return -1;
	}
	ch->pty = 1;
	chan_audit(ch, "pty-req", "allow", NULL);
	return 0;
}

static int
on_window_change(ssh_session s, ssh_channel channel, int cols, int rows, int px, int py,
    void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (!ch->pty || ch->pty_master < 0)
		return -1;
	ch->ws.ws_col = (unsigned short)(cols > 0 && cols < 10000 ? cols : ch->ws.ws_col);
	ch->ws.ws_row = (unsigned short)(rows > 0 && rows < 10000 ? rows : ch->ws.ws_row);
	ch->ws.ws_xpixel = (unsigned short)(px > 0 && px < 65536 ? px : 0);
	ch->ws.ws_ypixel = (unsigned short)(py > 0 && py < 65536 ? py : 0);
	/* the kernel sends SIGWINCH to the terminal's foreground job */
	return ioctl(ch->pty_master, TIOCSWINSZ, &ch->ws) < 0 ? -1 : 0;
}

static int
on_env_request(ssh_session s, ssh_channel channel, const char *name, const char *value,
    void *ud)
{
	struct chan *ch = ud;
	const struct ag_server_conf *sc = ch->c->sc;
	char req[160];
	const char *why = NULL;
	size_t i;

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "env %.100s", name != NULL ? name : "");
	for (i = 0; name != NULL && name[i] != '\0'; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
		    name[i] == '_' || (i > 0 && name[i] >= '0' && name[i] <= '9')))
			break;
	if (name == NULL || value == NULL || i == 0 || name[i] != '\0' || i > 128)
		why = "not a variable name";
	else if (strlen(value) > 4096)
		why = "value too long";
	else if (ch->pid > 0)
		why = "the session has started";
	else if (!ag_strlist_match(&sc->accept_env, name))
		why = "not in gateway.server.accept_env";
	else if (ag_envsan_is_dangerous(name, ch->c->profile))
		why = "a variable the gateway never accepts";
	else if (ch->nenv == AG_SERVER_MAX_ENV)
		why = "too many variables";
	if (why != NULL) {
		chan_audit(ch, req, "deny", why);
		return -1;
	}
	for (i = 0; i < ch->nenv; i++)
		if (strcmp(ch->env_names[i], name) == 0)
			break;
	if (i == ch->nenv) {
		if ((ch->env_names[i] = strdup(name)) == NULL)
			return -1;
		ch->env_vals[i] = NULL;
		ch->nenv++;
	}
	free(ch->env_vals[i]);
	if ((ch->env_vals[i] = strdup(value)) == NULL)
		return -1;
	chan_audit(ch, req, "allow", NULL);
	return 0;
}

static const char *
env_value(const struct chan *ch, const char *name)
{
	size_t i;

	for (i = 0; i < ch->nenv; i++)
		if (strcmp(ch->env_names[i], name) == 0)
			return ch->env_vals[i];
	return NULL;
}

/*
 * The session process: the one session core, on fds 0-2, as the user.
 * Returns the exit status of the session.
 */
static int
session_main(struct conn *c, struct chan *ch, const char *cmd, int st_fd)
{
	struct ag_core_params cp;
	struct ag_core core;
	struct ag_err err;
	char conn_s[2 * ADDR_MAX + 32], client_s[ADDR_MAX + 32];
	int status;
	size_t i;

	ag_err_clear(&err);
	/* fd 2 is the client's stderr now: log lines must not go there */
	ag_log_open("agentgate", 0, LOG_AUTHPRIV);
	snprintf(conn_s, sizeof(conn_s), "%s %d %s %d", c->caddr, c->cport, c->laddr, c->lport);
	snprintf(client_s, sizeof(client_s), "%s %d %d", c->caddr, c->cport, c->lport);
	memset(&cp, 0, sizeof(cp));
	cp.cfg = c->cfg;
	cp.profile = c->profile;
	cp.audit = c->audit;
	cp.tty = ch->pty && cmd == NULL;	/* the REPL reads through libedit */
	cp.origin.ssh_connection = conn_s;
	cp.origin.ssh_client = client_s;
	cp.origin.ssh_tty = ch->pty ? ch->tty_name : NULL;
	cp.origin.term = ch->pty ? ch->term : NULL;
	cp.origin.lang = env_value(ch, "LANG");
	cp.origin.tty = ch->pty;
	if (ag_core_begin(&core, &cp, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	for (i = 0; i < ch->nenv; i++)
		if (!ag_envsan_is_dangerous(ch->env_names[i], c->profile))
			(void)ag_session_setenv(&core.sess, ch->env_names[i], ch->env_vals[i]);
	/* the same session core as under sshd: a PTY per command, the
	 * recording, file transfer, the REPL */
	status = ag_core_serve(&core, cmd);
	fflush(stdout);
	fflush(stderr);
	{
		unsigned long n = core.ncommands;

		(void)!write(st_fd, &n, sizeof(n));
	}
	ag_core_end(&core);
	return status;
}

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int
start_session(struct chan *ch, const char *cmd)
{
	struct conn *c = ch->c;
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, stp[2] = { -1, -1 };
	pid_t pid;
	size_t i;

	if (ch->pid > 0)
		return -1;
	if (pipe2(stp, O_CLOEXEC) < 0 || (!ch->pty && (pipe2(inp, O_CLOEXEC) < 0 ||
	    pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0))) {
		ag_log(LOG_ERR, "pipe: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) < 0) {
		ag_log(LOG_ERR, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int in = ch->pty ? ch->pty_slave : inp[0];
		int out = ch->pty ? ch->pty_slave : outp[1];
		int er = ch->pty ? ch->pty_slave : errp[1];

		default_signals();
		(void)setsid();
		if (ch->pty)
			(void)ioctl(ch->pty_slave, TIOCSCTTY, 0);
		if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
			_exit(127);
		/* nothing of the connection stays open in here: not the socket,
		 * not another channel's pipes (their EOF depends on it) */
		close(c->fd);
		ag_sigpipe_close();
		for (i = 0; i < c->nchans; i++) {
			struct chan *o = &c->chans[i];

			if (!o->used)
				continue;
			if (o->in_fd >= 0) close(o->in_fd);
			if (o->out_fd >= 0 && o->out_fd != o->in_fd) close(o->out_fd);
			if (o->err_fd >= 0) close(o->err_fd);
			if (o->st_fd >= 0) close(o->st_fd);
			if (o->pty_master >= 0) close(o->pty_master);
			if (o != ch && o->pty_slave >= 0) close(o->pty_slave);
		}
		if (ch->pty_slave > 2)
			close(ch->pty_slave);
		for (i = 0; i < 2; i++) {
			if (inp[i] > 2) close(inp[i]);
			if (outp[i] > 2) close(outp[i]);
			if (errp[i] > 2) close(errp[i]);
		}
		close(stp[0]);
		_exit(session_main(c, ch, cmd, stp[1]));
	}
	close(stp[1]);
	ch->st_fd = stp[0];
	set_nonblock(ch->st_fd);
	if (ch->pty) {
		close_fd(&ch->pty_slave);
		ch->in_fd = ch->out_fd = ch->pty_master;
		ch->err_eof = 1;
	} else {
		close(inp[0]);
		close(outp[1]);
		close(errp[1]);
		ch->in_fd = inp[1];
		ch->out_fd = outp[0];
		ch->err_fd = errp[0];
		set_nonblock(ch->in_fd);
		set_nonblock(ch->out_fd);
		set_nonblock(ch->err_fd);
	}
	ch->pid = pid;
	return 0;
fail:
	for (i = 0; i < 2; i++) {
		if (inp[i] >= 0) close(inp[i]);
		if (outp[i] >= 0) close(outp[i]);
		if (errp[i] >= 0) close(errp[i]);
		if (stp[i] >= 0) close(stp[i]);
	}
	return -1;
}

static int
on_exec_request(ssh_session s, ssh_channel channel, const char *command, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (command == NULL || strlen(command) > AG_SERVER_MAX_COMMAND) {
		chan_audit(ch, "exec", "deny", "command missing or too long");
		return -1;
	}
	if (ch->pid > 0 || start_session(ch, command) < 0) {
		chan_audit(ch, "exec", "deny", "cannot start the session");
		return -1;
	}
	return 0;	/* the command itself is judged and audited by the session core */
}

static int
on_shell_request(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	if (ch->pid > 0 || start_session(ch, NULL) < 0) {
		chan_audit(ch, "shell", "deny", "cannot start the session");
		return -1;
	}
	chan_audit(ch, "shell", "allow", NULL);
	return 0;
}

static int
on_subsystem_request(ssh_session s, ssh_channel channel, const char *sub, void *ud)
{
	struct chan *ch = ud;
	char req[96];

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "subsystem %.64s", sub != NULL ? sub : "");
	if (sub == NULL || strcmp(sub, "sftp") != 0) {
		chan_audit(ch, req, "deny", "only the sftp subsystem is served");
		chan_say(ch, "this subsystem is not available through agentgate");
		return -1;
	}
	if (ch->c->profile->sftp == AG_TRANSFER_OFF) {
		chan_audit(ch, req, "deny", "file_transfer.sftp is off for this profile");
		chan_say(ch, "sftp is off for this profile (file_transfer.sftp); use "
		    "commands such as cat instead");
		return -1;
	}
	/* sftp-server runs confined like a command; transfer.c audits it */
	if (ch->pid > 0 || start_session(ch, "internal-sftp") < 0) {
		chan_audit(ch, req, "deny", "cannot start the session");
		return -1;
	}
	chan_audit(ch, req, "allow", NULL);
	return 0;
}

static const struct {
	const char	*name;
	int		 sig;
} signals[] = {
	{ "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP }, { "KILL", SIGKILL },
	{ "QUIT", SIGQUIT }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
};

/*
 * The running command is the session process's child that leads its own
 * process group (the runner puts each command in a new group).
 */
static int
signal_command(pid_t session_pid, int sig)
{
	pid_t kids[512];
	size_t n = ag_runner_children(session_pid, kids, sizeof(kids) / sizeof(kids[0])), i;
	int hit = 0;

	/* the command's process group leaders among the session's children */
	for (i = 0; i < n; i++)
		if (kids[i] > 1 && getpgid(kids[i]) == kids[i] && kill(-kids[i], sig) == 0)
			hit = 1;
	return hit;
}

static void
on_signal_request(ssh_session s, ssh_channel channel, const char *signame, void *ud)
{
	struct chan *ch = ud;
	char req[64];
	size_t i;

	(void)s;
	(void)channel;
	snprintf(req, sizeof(req), "signal %.16s", signame != NULL ? signame : "");
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signame != NULL && strcmp(signame, signals[i].name) == 0)
			break;
	if (i == sizeof(signals) / sizeof(signals[0])) {
		chan_audit(ch, req, "deny", "not a signal a client may send");
		return;
	}
	if (ch->pid <= 0 || ch->exited || !signal_command(ch->pid, signals[i].sig)) {
		chan_audit(ch, req, "deny", "no command is running");
		return;
	}
	chan_audit(ch, req, "allow", NULL);
}

static int
on_data(ssh_session s, ssh_channel channel, void *data, uint32_t len, int is_stderr, void *ud)
{
	struct chan *ch = ud;
	size_t take;

	(void)s;
	(void)channel;
	(void)is_stderr;
	if (ch->in_fd < 0 && ch->pid > 0)
		return (int)len;	/* nobody reads it any more: discard */
	take = INBUF_MAX - ch->inlen;
	if (take > len)
		take = len;
	memcpy(ch->inbuf + ch->inlen, data, take);
	ch->inlen += take;
	if (take < len)
		ch->stalled = 1;	/* the rest waits in libssh, inside the window */
	return (int)take;
}

static void
on_eof(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	ch->client_eof = 1;
}

static void
on_close(ssh_session s, ssh_channel channel, void *ud)
{
	struct chan *ch = ud;

	(void)s;
	(void)channel;
	ch->client_closed = 1;
	ch->client_eof = 1;
	if (ch->pid > 0 && !ch->exited)
		kill(ch->pid, SIGHUP);	/* the session ends and takes its command along */
}

static ssh_channel
on_channel_open(ssh_session s, void *ud)
{
	struct conn *c = ud;
	struct chan *ch = NULL;
	size_t i, active = 0;

	for (i = 0; i < c->nchans; i++) {
		if (c->chans[i].used)
			active++;
		else if (ch == NULL)
			ch = &c->chans[i];
	}
	if (ch == NULL || active >= c->nchans) {
		audit_event(c, "channel_request", "session", "deny", "too many sessions");
		return NULL;
	}
	memset(ch, 0, sizeof(*ch));
	ch->c = c;
	ch->used = 1;
	ch->pty_master = ch->pty_slave = -1;
	ch->in_fd = ch->out_fd = ch->err_fd = ch->st_fd = -1;
	ch->ref_out.ch = ch;
	ch->ref_err.ch = ch;
	ch->ref_err.err = 1;
	if ((ch->ch = ssh_channel_new(s)) == NULL) {
		ch->used = 0;
		return NULL;
	}
	ssh_callbacks_init(&ch->cb);
	ch->cb.userdata = ch;
	ch->cb.channel_data_function = on_data;
	ch->cb.channel_eof_function = on_eof;
	ch->cb.channel_close_function = on_close;
	ch->cb.channel_signal_function = on_signal_request;
	ch->cb.channel_pty_request_function = on_pty_request;
	ch->cb.channel_shell_request_function = on_shell_request;
	ch->cb.channel_pty_window_change_function = on_window_change;
	ch->cb.channel_exec_request_function = on_exec_request;
	ch->cb.channel_env_request_function = on_env_request;
	ch->cb.channel_subsystem_request_function = on_subsystem_request;
	ssh_set_channel_callbacks(ch->ch, &ch->cb);
	return ch->ch;
}

/* Everything the callbacks above do not take: forwarding, X11, globals. */
static int
on_message(ssh_session s, ssh_message m, void *ud)
{
	struct conn *c = ud;
	const char *what = "request", *why = "forwarding is not available through agentgate";

	(void)s;
	switch (ssh_message_type(m)) {
	case SSH_REQUEST_CHANNEL_OPEN:
		switch (ssh_message_subtype(m)) {
		case SSH_CHANNEL_DIRECT_TCPIP: what = "direct-tcpip"; break;
		case SSH_CHANNEL_FORWARDED_TCPIP: what = "forwarded-tcpip"; break;
		case SSH_CHANNEL_X11: what = "x11"; break;
		case SSH_CHANNEL_AUTH_AGENT: what = "auth-agent"; break;
		default: what = "channel-open"; why = "only session channels are served"; break;
		}
		break;
	case SSH_REQUEST_GLOBAL:
		switch (ssh_message_subtype(m)) {
		case SSH_GLOBAL_REQUEST_TCPIP_FORWARD: what = "tcpip-forward"; break;
		case SSH_GLOBAL_REQUEST_CANCEL_TCPIP_FORWARD: what = "cancel-tcpip-forward"; break;
		case SSH_GLOBAL_REQUEST_KEEPALIVE: return 1;	/* just answered */
		default: what = "global-request"; why = "not supported by agentgate"; break;
		}
		break;
	case SSH_REQUEST_CHANNEL:
		switch (ssh_message_subtype(m)) {
		case SSH_CHANNEL_REQUEST_X11: what = "x11-req"; break;
		default: what = "channel-request"; why = "not supported by agentgate"; break;
		}
		break;
	default:
		break;
	}
	audit_event(c, "channel_request", what, "deny", why);
	ag_log(LOG_INFO, "%s from %s: %s refused", c->user, c->client, what);
	return 1;	/* libssh sends the refusal */
}

/* ---- the relay loop -------------------------------------------------------- */

static int
on_child_output(socket_t fd, int revents, void *ud)
{
	struct chan *ch = ((struct fdref *)ud)->ch;
	int is_err = ((struct fdref *)ud)->err;
	char buf[RELAY_CHUNK];
	uint32_t win;
	ssize_t n;

	(void)revents;
	if ((is_err ? ch->err_eof : ch->out_eof) || ch->client_closed)
		return 0;
	/* read only what the client's window can take: no unbounded buffering */
	if ((win = ssh_channel_window_size(ch->ch)) == 0)
		return 0;
	n = read(fd, buf, win < sizeof(buf) ? win : sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {	/* EOF, or EIO on a PTY whose slave side is gone */
		if (is_err)
			ch->err_eof = 1;
		else
			ch->out_eof = 1;
		return 0;
	}
	if ((is_err ? ssh_channel_write_stderr(ch->ch, buf, (uint32_t)n) :
	    ssh_channel_write(ch->ch, buf, (uint32_t)n)) < 0) {
		ch->out_eof = ch->err_eof = 1;
		ch->client_closed = 1;
	}
	return 0;
}

/* Keep the event's fd set in step with the windows and EOFs. */
static void
update_fds(struct conn *c, struct chan *ch)
{
	int want_out = ch->out_fd >= 0 && !ch->out_eof && !ch->client_closed &&
	    ssh_channel_window_size(ch->ch) > 0;
	int want_err = ch->err_fd >= 0 && !ch->err_eof && !ch->client_closed &&
	    ssh_channel_window_size(ch->ch) > 0;

	if (want_out && !ch->out_reg) {
		if (ssh_event_add_fd(c->ev, ch->out_fd, POLLIN, on_child_output,
		    &ch->ref_out) == SSH_OK)
			ch->out_reg = 1;
	} else if (!want_out && ch->out_reg) {
		ssh_event_remove_fd(c->ev, ch->out_fd);
		ch->out_reg = 0;
	}
	if (want_err && !ch->err_reg) {
		if (ssh_event_add_fd(c->ev, ch->err_fd, POLLIN, on_child_output,
		    &ch->ref_err) == SSH_OK)
			ch->err_reg = 1;
	} else if (!want_err && ch->err_reg) {
		ssh_event_remove_fd(c->ev, ch->err_fd);
		ch->err_reg = 0;
	}
	if (ch->err_eof && !ch->pty)
		close_fd(&ch->err_fd);
	if (ch->out_eof && !ch->out_reg && ch->out_fd >= 0 && !ch->pty)
		close_fd(&ch->out_fd);
}

/* Client input → the command's stdin (or the PTY), without blocking. */
static void
pump_input(struct chan *ch)
{
	if (ch->in_fd < 0 || ch->pid <= 0)
		return;
	while (ch->inlen > 0) {
		ssize_t w = write(ch->in_fd, ch->inbuf, ch->inlen);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {	/* the reader is gone: drop what is left */
			ch->inlen = 0;
			if (!ch->pty)
				close_fd(&ch->in_fd);
			return;
		}
		memmove(ch->inbuf, ch->inbuf + w, ch->inlen - (size_t)w);
		ch->inlen -= (size_t)w;
	}
	if (ch->stalled) {
		int r = ssh_channel_read_nonblocking(ch->ch, ch->inbuf,
		    (uint32_t)(INBUF_MAX - ch->inlen), 0);

		if (r > 0)
			ch->inlen += (size_t)r;
		else
			ch->stalled = 0;
		return;
	}
	/* the client's EOF closes the command's stdin once all of it is written */
	if (ch->client_eof && !ch->pty)
		close_fd(&ch->in_fd);
}

static void
finish_chan(struct conn *c, struct chan *ch)
{
	size_t i;

	if (ch->st_fd >= 0) {
		unsigned long n = 0;

		if (read(ch->st_fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
			c->ncommands += n;
		close_fd(&ch->st_fd);
	}
	if (!ch->client_closed) {
		if (WIFSIGNALED(ch->wstatus)) {
			const char *name = "KILL";

			for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
				if (signals[i].sig == WTERMSIG(ch->wstatus))
					name = signals[i].name;
			(void)ssh_channel_request_send_exit_signal(ch->ch, name,
			    WCOREDUMP(ch->wstatus) ? 1 : 0, "", "");
		} else
			(void)ssh_channel_request_send_exit_status(ch->ch,
			    WEXITSTATUS(ch->wstatus));
		(void)ssh_channel_send_eof(ch->ch);
		(void)ssh_channel_close(ch->ch);
	}
	if (ch->out_reg)
		ssh_event_remove_fd(c->ev, ch->out_fd);
	if (ch->err_reg)
		ssh_event_remove_fd(c->ev, ch->err_fd);
	if (ch->in_fd != ch->out_fd)
		close_fd(&ch->in_fd);
	close_fd(&ch->out_fd);
	close_fd(&ch->err_fd);
	if (ch->pty) {
		ch->in_fd = -1;
		close_fd(&ch->pty_master);
	}
	close_fd(&ch->pty_slave);
	for (i = 0; i < ch->nenv; i++) {
		free(ch->env_names[i]);
		free(ch->env_vals[i]);
	}
	ssh_channel_free(ch->ch);
	ch->finished = 1;
	ch->used = 0;
}

static void
reap(struct conn *c)
{
	pid_t pid;
	int st;
	size_t i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (i = 0; i < c->nchans; i++)
			if (c->chans[i].used && c->chans[i].pid == pid) {
				c->chans[i].exited = 1;
				c->chans[i].wstatus = st;
			}
}

static int
on_sig_fd(socket_t fd, int revents, void *ud)
{
	(void)fd;
	(void)revents;
	(void)ud;
	ag_sigpipe_drain();
	return 0;
}

static void
serve_channels(struct conn *c)
{
	time_t last_keepalive = time(NULL), gone_at = 0;
	long ka = c->sc->keepalive;
	size_t i;

	c->nchans = (size_t)conf_long(c->sc->max_sessions, AG_SERVER_DEFAULT_MAX_SESSIONS);
	if ((c->chans = calloc(c->nchans, sizeof(*c->chans))) == NULL ||
	    (c->ev = ssh_event_new()) == NULL)
		return;
	ssh_callbacks_init(&c->scb);
	c->scb.userdata = c;
	c->scb.channel_open_request_session_function = on_channel_open;
	ssh_set_server_callbacks(c->s, &c->scb);
	ssh_set_message_callback(c->s, on_message, c);
	ssh_set_blocking(c->s, 0);
	if (ssh_event_add_session(c->ev, c->s) != SSH_OK ||
	    ssh_event_add_fd(c->ev, ag_sigpipe_fd(), POLLIN, on_sig_fd, c) != SSH_OK)
		return;
	for (;;) {
		int busy = 0, running, rc;

		for (i = 0; i < c->nchans; i++) {
			struct chan *ch = &c->chans[i];

			if (!ch->used)
				continue;
			pump_input(ch);
			if (ch->inlen > 0 || ch->stalled)
				busy = 1;
			update_fds(c, ch);
		}
		rc = ssh_event_dopoll(c->ev, busy ? 20 : 1000);
		if (got_stop) {
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].pid > 0 && !c->chans[i].exited)
					kill(c->chans[i].pid, SIGHUP);
			got_stop = 0;
		}
		reap(c);
		for (i = 0; i < c->nchans; i++) {
			struct chan *ch = &c->chans[i];

			if (ch->used && ch->pid > 0 && ch->exited &&
			    (ch->out_eof || ch->client_closed) &&
			    (ch->err_eof || ch->client_closed))
				finish_chan(c, ch);
			else if (ch->used && ch->client_closed && ch->pid <= 0)
				finish_chan(c, ch);
		}
		if (rc == SSH_ERROR || !ssh_is_connected(c->s)) {
			/* the client is gone: end the sessions (SIGHUP, as a hangup
			 * would), and do not wait for ever on one that ignores it */
			if (gone_at == 0)
				gone_at = time(NULL);
			running = 0;
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].pid > 0 && !c->chans[i].exited) {
					kill(c->chans[i].pid, time(NULL) - gone_at > 5 ? SIGKILL :
					    SIGHUP);
					running = 1;
				}
			if (!running)
				break;
			/* wait for the sessions to end their commands and go */
			sleep_ms(50);
			reap(c);
			for (i = 0; i < c->nchans; i++)
				if (c->chans[i].used && c->chans[i].exited) {
					c->chans[i].client_closed = 1;
					finish_chan(c, &c->chans[i]);
				}
			continue;
		}
		if (ka > 0 && time(NULL) - last_keepalive >= ka) {
			(void)ssh_send_keepalive(c->s);
			last_keepalive = time(NULL);
		}
	}
}

/* ---- one connection ----------------------------------------------------------- */

static void
local_addr(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char tmp[CLIENT_MAX];

	c->laddr[0] = '\0';
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0)
		format_client(&ss, c->laddr, sizeof(c->laddr), &c->lport, tmp, sizeof(tmp));
}

static int
connection_main(const struct ag_config *cfg, ssh_bind bind, int fd,
    const struct sockaddr_storage *peer)
{
	struct conn c;
	struct ag_audit_info info;
	struct ag_err err;
	pid_t child;
	int status = 1, forked = 0;

	memset(&c, 0, sizeof(c));
	ag_err_clear(&err);
	c.cfg = cfg;
	c.sc = &cfg->gw.server;
	c.fd = fd;
	format_client(peer, c.caddr, sizeof(c.caddr), &c.cport, c.client, sizeof(c.client));
	local_addr(&c);
	/* the login grace time: the default SIGALRM action ends the process */
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)conf_long(c.sc->login_grace_time, AG_SERVER_DEFAULT_LOGIN_GRACE));

	if ((c.s = ssh_new()) == NULL)
		return 1;
	if (ssh_bind_accept_fd(bind, c.s, fd) != SSH_OK) {
		ag_log(LOG_ERR, "connection from %s: %s", c.client, ssh_get_error(bind));
		goto out;
	}
	if (ssh_handle_key_exchange(c.s) != SSH_OK) {
		ag_log(LOG_INFO, "connection from %s: key exchange failed: %s", c.client,
		    ssh_get_error(c.s));
		goto out;
	}
	if (auth_phase(&c) < 0)
		goto out;
	alarm(0);
	/* tell the listener: this one no longer counts against max_startups */
	if (authed_fd >= 0) {
		(void)write(authed_fd, "a", 1);
		close(authed_fd);
		authed_fd = -1;
	}
	ag_audit_close(c.preaudit);
	c.preaudit = NULL;

	memset(&info, 0, sizeof(info));
	info.user = c.user;
	info.identity = c.identity;
	info.profile = c.profile->name;
	info.client = c.client;
	info.mode = "server";
	/* opened while still root, so one audit file serves every user */
	if ((c.audit = ag_audit_open(&cfg->gw.audit, &info, &err)) == NULL) {
		ag_log(LOG_ERR, "%s", err.msg);
		goto out;
	}
	if (ag_audit_session_start(c.audit, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	ag_log(LOG_INFO, "session %s: user %s%s%s, profile %s, from %s",
	    ag_audit_session_id(c.audit), c.user, c.identity ? ", identity " : "",
	    c.identity ? c.identity : "", c.profile->name, c.client);

	if (geteuid() == 0) {
		/*
		 * The PAM session is closed as root when the connection ends; only
		 * this small parent keeps root for that, everything that talks to
		 * the client runs in the child, as the user.
		 */
		if ((child = fork()) < 0) {
			ag_log(LOG_ERR, "fork: %s", strerror(errno));
			goto out;
		}
		if (child > 0) {
			int st;

			close(fd);
			while (waitpid(child, &st, 0) < 0 && errno == EINTR)
				;
			ag_pamauth_end(c.pam);
			c.pam = NULL;
			return 0;	/* no ssh_free: the socket is the child's */
		}
		forked = 1;
	}
	if (drop_privileges(&c, &err) < 0) {
		ag_log(LOG_ERR, "session for %s refused: %s", c.user, err.msg);
		audit_event(&c, "auth_failure", "privileges", "deny", err.msg);
		_exit(1);
	}
	not_dumpable();
	serve_channels(&c);
	(void)ag_audit_session_end(c.audit, 0, c.ncommands, &err);
	status = 0;
out:
	if (c.s != NULL) {
		ssh_disconnect(c.s);
		if (c.ev != NULL)
			ssh_event_free(c.ev);
		ssh_free(c.s);
	}
	free(c.chans);
	ag_audit_close(c.preaudit);
	ag_audit_close(c.audit);
	/* a forked child must never end PAM: its root parent does */
	if (!forked)
		ag_pamauth_end(c.pam);
	free(c.home);
	free(c.auth_info);
	free(c.identity);
	return status;
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
accept_one(const struct ag_config *cfg, ssh_bind bind, int lfd, int *lfds, size_t nl,
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
	format_client(&peer, addr, sizeof(addr), &port, client, sizeof(client));
	if (*active >= nslots) {
		ag_log(LOG_WARNING, "connection from %s refused: %zu connections "
		    "(gateway.server.max_connections)", client, *active);
		close(fd);
		return;
	}
	if (count_source(slots, nslots, addr) >= (size_t)conf_long(sc->max_per_source,
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
		authed_fd = ap[1];
		default_signals();
		/* the connection's own handlers: SIGCHLD and stop requests */
		ag_sigpipe_close();
		got_chld = got_stop = got_hup = 0;
		is_listener = 0;
		{
			struct ag_err err;

			if (install_signals(&err) < 0)
				_exit(1);
		}
		_exit(connection_main(cfg, bind, fd, &peer));
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
 * running keep theirs: they are forks with their own copy).  A policy that
 * does not load leaves the old one in place.  Listen addresses, host keys
 * and algorithms need a restart.
 */
static void
reload(const struct ag_server_opts *o, const struct ag_config **cfg,
    struct ag_config **owned)
{
	struct ag_config *n;
	struct ag_err err;
	char msg[AG_ERR_MSG_MAX + 512];

	if (o->config_path == NULL)
		return;
	ag_err_clear(&err);
	if ((n = ag_config_load(o->config_path, 0, &err)) == NULL) {
		ag_log(LOG_ERR, "SIGHUP: policy not reloaded, the old one stays: %s",
		    ag_err_format(&err, msg, sizeof(msg)));
		return;
	}
	ag_config_free(*owned);
	*owned = n;
	*cfg = n;
	ag_log(LOG_INFO, "SIGHUP: policy %s reloaded for new connections (listen "
	    "addresses and host keys change only on restart)", o->config_path);
}

int
ag_server_run(const struct ag_config *cfg, const struct ag_server_opts *o,
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
	if (ssh_init() != SSH_OK)
		return ag_err_set(err, "libssh initialisation failed");
	if ((bind = ssh_bind_new()) == NULL) {
		ag_err_set(err, "out of memory");
		goto out;
	}
	if (setup_bind(sc, bind, err) < 0)
		goto out;
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
	nslots = (size_t)conf_long(sc->max_connections, AG_SERVER_DEFAULT_MAX_CONNECTIONS);
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

	while (!got_stop) {
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
			reload(o, &cfg, &owned);
		}
		for (i = 0; i < nl && !got_stop; i++)
			if (pf[i].revents & POLLIN)
				accept_one(cfg, bind, lfds[i], lfds, nl, slots, nslots, &active);
	}
	ag_log(LOG_INFO, "stopping (signal %d); %zu connection(s) continue", (int)got_stop,
	    active);
	rc = 0;
out:
	for (i = 0; i < nl; i++)
		close(lfds[i]);
	free(slots);
	free(pf);
	if (bind != NULL)
		ssh_bind_free(bind);
	ag_config_free(owned);
	ssh_finalize();
	return rc;
}
