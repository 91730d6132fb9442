/* server_auth.c - one connection's authentication; see server_int.h */
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
#include "common/config.h"
#include "core/core.h"
#include "policy/envsan.h"
#include "common/log.h"
#include "common/privsep.h"
#include "auth/pamauth.h"
#include "front/repl.h"
#include "exec/runner.h"
#include "front/server.h"
#include "exec/sigpipe.h"
#include "exec/session.h"

#include "front/server_int.h"
#include "common/safepath.h"

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
	struct stat st;
	char *real = NULL;
	int rc;

	/* the user's keys: the file and every directory above it the user's
	 * or root's, writable by nobody else (sshd's StrictModes) */
	rc = ag_safe_path(path, uid, &st, &real, err);
	free(real);
	return rc;
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
		t = ag_ssh.ssh_key_type_from_name(type);
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
		if (ag_ssh.ssh_pki_import_pubkey_base64(b64, t, &k) != SSH_OK)
			continue;
		if (ag_ssh.ssh_key_cmp(k, key, SSH_KEY_CMP_PUBLIC) == 0)
			found = 1;
		ag_ssh.ssh_key_free(k);
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

	char name[sizeof(c->user)];
	const char *colon;

	if (user == NULL || *user == '\0' || strlen(user) >= sizeof(c->user))
		return -1;
	/* "agent:web1" (Warpgate's form): the account, and the session's target */
	snprintf(name, sizeof(name), "%s", user);
	if ((colon = strchr(user, ':')) != NULL) {
		name[colon - user] = '\0';
		if (strlen(colon + 1) >= sizeof(c->target) || colon[1] == '\0' ||
		    strspn(colon + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789_-.") != strlen(colon + 1))
			return -1;
	}
	if (c->have_user)
		return strcmp(c->user, name) == 0 && (colon == NULL ? c->target[0] == '\0' :
		    strcmp(c->target, colon + 1) == 0) ? 0 : -1;
	snprintf(c->user, sizeof(c->user), "%s", name);
	if (colon != NULL)
		snprintf(c->target, sizeof(c->target), "%s", colon + 1);
	user = c->user;
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
	return ag_core_profile(c->cfg, NULL, ag_pamauth_identity(c->pam),
	    ag_pamauth_profile(c->pam), pw, err);
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
	return ag_ssh.ssh_message_auth_pubkey(m);
}

static enum ssh_publickey_state_e
msg_pubkey_state(ssh_message m)
{
	return ag_ssh.ssh_message_auth_publickey_state(m);
}

static const char *
msg_password(ssh_message m)
{
	return ag_ssh.ssh_message_auth_password(m);
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
	    ag_ssh.ssh_message_auth_interactive_request(c->kbd_msg, "", instruction,
	    (unsigned)np, prompts, echo) != SSH_OK)
		return -1;
	ag_ssh.ssh_message_free(c->kbd_msg);
	c->kbd_msg = NULL;
	for (;;) {
		if ((m = ag_ssh.ssh_message_get(c->s)) == NULL)
			return -1;
		if (ag_ssh.ssh_message_type(m) == SSH_REQUEST_AUTH &&
		    ag_ssh.ssh_message_subtype(m) == SSH_AUTH_METHOD_INTERACTIVE &&
		    ag_ssh.ssh_message_auth_kbdint_is_response(m))
			break;
		/* anything else in the middle of a conversation ends it */
		ag_ssh.ssh_message_reply_default(m);
		ag_ssh.ssh_message_free(m);
		return -1;
	}
	c->kbd_msg = m;
	if ((size_t)ag_ssh.ssh_userauth_kbdint_getnanswers(c->s) != np)
		return -1;
	for (i = 0, k = 0; i < n; i++) {
		const char *a;

		if (p[i].style == AG_PAMAUTH_INFO || p[i].style == AG_PAMAUTH_ERROR)
			continue;
		a = ag_ssh.ssh_userauth_kbdint_getanswer(c->s, (unsigned)k++);
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
		/* who, when PAM got as far as telling (an expired identity) */
		snprintf(reason, rlen, "PAM %s: %.300s%s%s", fail.stage ? fail.stage : "start",
		    fail.pam_error[0] ? fail.pam_error : err.msg,
		    fail.identity[0] ? "; identity " : "", fail.identity);
		c->fail_class = fail.reason_class;
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
	    srv_conf_long(c->sc->max_auth_tries, AG_SERVER_DEFAULT_MAX_AUTH_TRIES));
	ag_log(LOG_NOTICE, "failed %s for %s from %s: %s", method,
	    c->have_user ? c->user : "(none)", c->client, why);
	srv_audit_auth_failure(c, method, why, c->fail_class);
	c->fail_class = NULL;
	if (delay)
		srv_sleep_ms(FAIL_DELAY_MS);
	if (c->tries >= srv_conf_long(c->sc->max_auth_tries, AG_SERVER_DEFAULT_MAX_AUTH_TRIES)) {
		srv_audit_auth_failure(c, method,
		    "too many authentication failures: disconnected", NULL);
		ag_log(LOG_NOTICE, "too many authentication failures for %s from %s",
		    c->have_user ? c->user : "(none)", c->client);
		ag_ssh.ssh_disconnect(c->s);
		return AUTH_FATAL;
	}
	if (m != NULL) {
		ag_ssh.ssh_message_auth_set_methods(m, libssh_methods(next_methods(c, &complete)));
		ag_ssh.ssh_message_reply_default(m);
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
		ag_ssh.ssh_message_auth_set_methods(m, libssh_methods(next));
		ag_ssh.ssh_message_auth_reply_success(m, 1);
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
	ag_ssh.ssh_message_auth_reply_success(m, 0);
	return AUTH_DONE;
}

static int
handle_auth(struct conn *c, ssh_message *mp)
{
	ssh_message m = *mp;
	int method, next, complete, bit;

	if (set_user(c, ag_ssh.ssh_message_auth_user(m)) < 0) {
		ag_log(LOG_NOTICE, "client %s changed the user name during "
		    "authentication: disconnected", c->client);
		srv_audit_auth_failure(c, "user", "user name changed", NULL);
		ag_ssh.ssh_disconnect(c->s);
		return AUTH_FATAL;
	}
	next = next_methods(c, &complete);
	method = ag_ssh.ssh_message_subtype(m);
	bit = method == SSH_AUTH_METHOD_PUBLICKEY ? AG_AUTH_PUBLICKEY :
	    method == SSH_AUTH_METHOD_INTERACTIVE ? AG_AUTH_KBDINT :
	    method == SSH_AUTH_METHOD_PASSWORD ? AG_AUTH_PASSWORD : 0;
	if (method == SSH_AUTH_METHOD_NONE || bit == 0 || !(next & bit)) {
		/* "none" is how a client asks for the list: not a failure */
		if (method == SSH_AUTH_METHOD_NONE) {
			ag_ssh.ssh_message_auth_set_methods(m, libssh_methods(next));
			ag_ssh.ssh_message_reply_default(m);
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
			ag_ssh.ssh_message_auth_reply_pk_ok_simple(m);
			return AUTH_AGAIN;
		}
		if (st != SSH_PUBLICKEY_STATE_VALID)
			return auth_fail(c, m, "publickey", "bad signature", 0);
		if (c->auth_info == NULL) {
			char *b64 = NULL;
			size_t n;

			if (ag_ssh.ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK)
				return AUTH_FATAL;
			n = strlen(b64) + 64;
			if ((c->auth_info = malloc(n)) == NULL) {
				ag_ssh.ssh_string_free_char(b64);
				return AUTH_FATAL;
			}
			/* what sshd's ExposeAuthInfo writes, for pam_agentgate */
			snprintf(c->auth_info, n, "publickey %s %s\n",
			    ag_ssh.ssh_key_type_to_char(ag_ssh.ssh_key_type(key)), b64);
			ag_ssh.ssh_string_free_char(b64);
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
	if (ag_ssh.ssh_message_auth_kbdint_is_response(m))
		return auth_fail(c, m, "keyboard-interactive", "unexpected response", 0);
	c->kbd_msg = m;
	*mp = NULL;	/* the conversation owns it now */
	{
		int r = step_done(c, m, AG_AUTH_KBDINT);

		if (c->kbd_msg != NULL) {
			ag_ssh.ssh_message_free(c->kbd_msg);
			c->kbd_msg = NULL;
		}
		return r;
	}
}

int
srv_auth_phase(struct conn *c)
{
	int complete;

	ag_ssh.ssh_set_auth_methods(c->s, libssh_methods(next_methods(c, &complete)));
	for (;;) {
		ssh_message m = ag_ssh.ssh_message_get(c->s);
		int r;

		if (m == NULL)
			return -1;
		if (ag_ssh.ssh_message_type(m) != SSH_REQUEST_AUTH) {
			ag_ssh.ssh_message_reply_default(m);	/* service requests: accept */
			ag_ssh.ssh_message_free(m);
			continue;
		}
		r = handle_auth(c, &m);
		if (m != NULL)
			ag_ssh.ssh_message_free(m);
		if (r == AUTH_DONE)
			return 0;
		if (r == AUTH_FATAL)
			return -1;
	}
}

/* ---- privileges ------------------------------------------------------------- */

/*
 * The connection process holds the SSH session keys and the audit fd and
 * runs as the same user as the commands: it keeps the gateway's group (the
 * audit log's, as under sshd) and is not dumpable, so no command can
 * ptrace it, read its memory or reopen its fds (common/privsep.c).
 */
int
srv_drop_privileges(struct conn *c, struct ag_err *err)
{
	return ag_privsep_serve_session(c->user, c->uid, c->gid, err);
}
