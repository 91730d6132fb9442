/* pamauth.c - see pamauth.h */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "auth/pamauth.h"
#include "common/misc.h"

#define MSG_MAX 256

struct ag_pamauth {
	pam_handle_t	*pamh;
	struct pam_conv	 conv;
	int		 interactive;
	ag_pamauth_conv_fn front_conv;	/* the front end's conversation, or NULL */
	void		*front_arg;
	int		 cred_set;
	int		 session_open;
	char		*identity;
	char		*profile;
	const char	*token;		/* "current", "previous", NULL: no token */
	char		 lastmsg[MSG_MAX];	/* last PAM_TEXT_INFO / PAM_ERROR_MSG */
};



/* Module text shown to people: printable ASCII only, bounded. */
static void
copy_printable(char *dst, size_t dstlen, const char *src)
{
	size_t i = 0;

	for (; src != NULL && *src != '\0' && i + 1 < dstlen; src++)
		dst[i++] = ((unsigned char)*src >= 0x20 && (unsigned char)*src < 0x7f) ?
		    *src : '?';
	dst[i] = '\0';
}

/*
 * Ask on the controlling terminal, echo off for secrets.  Bounded in size
 * and in time, so a forgotten prompt cannot hold a session forever.
 * Returns a malloc'd answer or NULL.
 */
static char *
tty_prompt(const char *prompt, int echo)
{
	struct termios old, quiet;
	int fd, restore = 0, done = 0, toolong = 0;
	char buf[AG_PAMAUTH_MAX_RESPONSE + 1], *ans = NULL;
	size_t len = 0;

	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return NULL;
	if (!echo && tcgetattr(fd, &old) == 0) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
		if (tcsetattr(fd, TCSAFLUSH, &quiet) == 0)
			restore = 1;
	}
	if (!echo && !restore)
		goto out;	/* never read a secret with echo on */
	(void)ag_write_all(fd, prompt, strlen(prompt), NULL);
	while (!done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char c;
		ssize_t r;
		int pr = poll(&pfd, 1, AG_PAMAUTH_PROMPT_TIMEOUT * 1000);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			goto out;
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto out;
		if (c == '\n' || c == '\r')
			done = 1;
		else if (len < AG_PAMAUTH_MAX_RESPONSE)
			buf[len++] = c;
		else
			toolong = 1;
	}
	buf[len] = '\0';
	if (!toolong)
		ans = strdup(buf);
out:
	explicit_bzero(buf, sizeof(buf));
	if (restore) {
		(void)tcsetattr(fd, TCSAFLUSH, &old);
		(void)ag_write_all(fd, "\n", 1, NULL);
	}
	close(fd);
	return ans;
}

static void
free_responses(struct pam_response *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].resp != NULL) {
			explicit_bzero(r[i].resp, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
}

/* The whole batch to the front end's conversation (ag_pamauth_params.conv). */
static int
front_conversation(struct ag_pamauth *pa, int num_msg, const struct pam_message **msg,
    struct pam_response *r)
{
	struct ag_pamauth_prompt p[PAM_MAX_NUM_MSG];
	char *ans[PAM_MAX_NUM_MSG];
	int i, ok = 1;

	for (i = 0; i < num_msg; i++) {
		p[i].text = msg[i]->msg != NULL ? msg[i]->msg : "";
		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF: p[i].style = AG_PAMAUTH_ECHO_OFF; break;
		case PAM_PROMPT_ECHO_ON: p[i].style = AG_PAMAUTH_ECHO_ON; break;
		case PAM_ERROR_MSG: p[i].style = AG_PAMAUTH_ERROR; break;
		case PAM_TEXT_INFO: p[i].style = AG_PAMAUTH_INFO; break;
		default: return -1;
		}
		if (p[i].style >= AG_PAMAUTH_INFO)
			copy_printable(pa->lastmsg, sizeof(pa->lastmsg), p[i].text);
		ans[i] = NULL;
	}
	if (pa->front_conv(pa->front_arg, (size_t)num_msg, p, ans) < 0)
		ok = 0;
	for (i = 0; i < num_msg; i++) {
		int prompt = p[i].style < AG_PAMAUTH_INFO;

		if (ok && prompt && (ans[i] == NULL ||
		    strlen(ans[i]) > AG_PAMAUTH_MAX_RESPONSE))
			ok = 0;
		if (prompt)
			r[i].resp = ans[i];	/* freed with r on failure */
		else if (ans[i] != NULL) {
			explicit_bzero(ans[i], strlen(ans[i]));
			free(ans[i]);
		}
	}
	return ok ? 0 : -1;
}

/* Without a TTY every prompt is answered at once with nothing: an agent
 * on an exec channel has nobody to answer, and waiting would hang the
 * session.  An empty answer, not a failed conversation: that is "no token"
 * to pam_agentgate, a wrong password to any other module, and Linux-PAM
 * logs no error for it on every login. */
static int
conversation(int num_msg, const struct pam_message **msg, struct pam_response **resp,
    void *appdata)
{
	struct ag_pamauth *pa = appdata;
	struct pam_response *r;
	int i;

	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG || resp == NULL)
		return PAM_CONV_ERR;
	if ((r = calloc((size_t)num_msg, sizeof(*r))) == NULL)
		return PAM_BUF_ERR;
	if (pa->front_conv != NULL) {
		if (front_conversation(pa, num_msg, msg, r) < 0)
			goto fail;
		*resp = r;
		return PAM_SUCCESS;
	}
	for (i = 0; i < num_msg; i++) {
		const char *text = msg[i]->msg != NULL ? msg[i]->msg : "";

		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			if (!pa->interactive) {
				if ((r[i].resp = strdup("")) == NULL)
					goto fail;
				break;
			}
			if ((r[i].resp = tty_prompt(text,
			    msg[i]->msg_style == PAM_PROMPT_ECHO_ON)) == NULL)
				goto fail;
			break;
		case PAM_ERROR_MSG:
		case PAM_TEXT_INFO:
			copy_printable(pa->lastmsg, sizeof(pa->lastmsg), text);
			if (pa->interactive) {
				char line[MSG_MAX + 16];
				int fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);

				if (fd >= 0) {
					snprintf(line, sizeof(line), "%s\r\n", pa->lastmsg);
					(void)ag_write_all(fd, line, strlen(line), NULL);
					close(fd);
				}
			}
			break;
		default:
			goto fail;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
fail:
	free_responses(r, num_msg);
	return PAM_CONV_ERR;
}

static int
service_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 128 && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	    strcmp(s, "..") != 0;
}

/* Linux-PAM falls back to the "other" service when a file is missing,
 * which on most systems means pam_unix: refuse instead. */
static int
service_file_present(const char *confdir, const char *service)
{
	static const char *const dirs[] = { "/etc/pam.d", "/usr/lib/pam.d" };
	char path[4096];
	struct stat st;
	size_t i;
	int n;

	if (confdir != NULL) {
		n = snprintf(path, sizeof(path), "%s/%s", confdir, service);
		return n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		n = snprintf(path, sizeof(path), "%s/%s", dirs[i], service);
		if (n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return 1;
	}
	return 0;
}

static void
set_fail(struct ag_pamauth_failure *fail, const char *stage, int status, const char *what)
{
	if (fail == NULL)
		return;
	fail->stage = stage;
	fail->pam_status = status;
	snprintf(fail->pam_error, sizeof(fail->pam_error), "%s", what);
}

static int
put_env(pam_handle_t *pamh, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s;
	int rc;

	if ((s = malloc(n)) == NULL)
		return PAM_BUF_ERR;
	snprintf(s, n, "%s=%s", name, value);
	rc = pam_putenv(pamh, s);	/* PAM copies it */
	explicit_bzero(s, n);
	free(s);
	return rc;
}

/* A name the module put in the environment: short and printable, or refused. */
static int
env_name(pam_handle_t *pamh, const char *var, char **out)
{
	const char *v = pam_getenv(pamh, var);
	size_t i, n;

	*out = NULL;
	if (v == NULL || *v == '\0')
		return 0;
	if ((n = strnlen(v, 256)) >= 256)
		return -1;
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] <= 0x20 || (unsigned char)v[i] >= 0x7f)
			return -1;
	return (*out = strdup(v)) == NULL ? -1 : 0;
}

/*
 * The class of a refusal, for the audit record: pam_agentgate.so's word
 * (AGENTGATE_REFUSED) when it is one of the fixed set, and the identity
 * whose credential it was (an expired previous token); else another
 * module of the stack refused.
 */
static void
refused_class(pam_handle_t *pamh, struct ag_pamauth_failure *fail)
{
	static const char *const classes[] = {
		"unknown_token", "expired_token", "rate_limited", "malformed", "ambiguous",
		"no_credential", "policy_unavailable", "identity_disabled",
		"identity_expired", "address_refused", "account_refused", "wrong_account",
	};
	const char *v = pam_getenv(pamh, "AGENTGATE_REFUSED"), *who;
	size_t i;

	if (fail == NULL)
		return;
	fail->reason_class = "pam_refused";
	for (i = 0; v != NULL && i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(v, classes[i]) == 0)
			fail->reason_class = classes[i];
	who = pam_getenv(pamh, "AGENTGATE_REFUSED_IDENTITY");
	if (fail->identity[0] == '\0' && who != NULL && strlen(who) < sizeof(fail->identity) &&
	    strspn(who, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	    "._-@") == strlen(who))
		snprintf(fail->identity, sizeof(fail->identity), "%s", who);
}

/* Drop the credentials, end the handle with status rc, free pa. */
static void
release(struct ag_pamauth *pa, int rc)
{
	if (pa->cred_set)
		(void)pam_setcred(pa->pamh, PAM_DELETE_CRED);
	pam_end(pa->pamh, rc);
	free(pa->identity);
	free(pa->profile);
	free(pa);
}

struct ag_pamauth *
ag_pamauth_start(const struct ag_config *cfg, const struct ag_pamauth_params *p,
    struct ag_err *err, struct ag_pamauth_failure *fail)
{
	struct ag_pamauth *pa;
	const char *service = cfg->gw.pam_service != NULL ? cfg->gw.pam_service : "agentgate";
	const char *stage = "start";
	int rc;

	set_fail(fail, "service", 0, "");
	fail->identity[0] = '\0';
	fail->reason_class = "service_unavailable";
	if (p->user == NULL || *p->user == '\0' || !service_ok(service)) {
		set_fail(fail, "service", 0, "bad user or service name");
		ag_err_set(err, "access denied");
		return NULL;
	}
	if (!service_file_present(cfg->gw.pam_confdir, service)) {
		set_fail(fail, "service", 0, "PAM service file missing");
		ag_err_set(err, "access denied (authentication is not set up on this host)");
		return NULL;
	}
	if ((pa = calloc(1, sizeof(*pa))) == NULL) {
		set_fail(fail, "start", PAM_BUF_ERR, "out of memory");
		ag_err_set(err, "access denied");
		return NULL;
	}
	pa->interactive = p->interactive;
	pa->front_conv = p->conv;
	pa->front_arg = p->conv_arg;
	pa->conv.conv = conversation;
	pa->conv.appdata_ptr = pa;

	if (cfg->gw.pam_confdir != NULL) {
#ifdef HAVE_PAM_START_CONFDIR
		rc = pam_start_confdir(service, p->user, &pa->conv, cfg->gw.pam_confdir,
		    &pa->pamh);
#else
		set_fail(fail, "start", 0, "gateway.pam_confdir needs Linux-PAM >= 1.4");
		ag_err_set(err, "access denied (authentication is not set up on this host)");
		free(pa);
		return NULL;
#endif
	} else {
		rc = pam_start(service, p->user, &pa->conv, &pa->pamh);
	}
	if (rc != PAM_SUCCESS) {
		set_fail(fail, "start", rc, pa->pamh != NULL ?
		    pam_strerror(pa->pamh, rc) : "pam_start failed");
		if (pa->pamh != NULL)
			pam_end(pa->pamh, rc);
		free(pa);
		ag_err_set(err, "access denied");
		return NULL;
	}

	if ((rc = pam_set_item(pa->pamh, PAM_TTY, p->tty != NULL ? p->tty : "ssh")) ||
	    (p->rhost != NULL && *p->rhost != '\0' &&
	    (rc = pam_set_item(pa->pamh, PAM_RHOST, p->rhost))) ||
	    (p->ruser != NULL && (rc = pam_set_item(pa->pamh, PAM_RUSER, p->ruser))) ||
	    (p->auth_info != NULL &&
	    (rc = put_env(pa->pamh, "SSH_AUTH_INFO_0", p->auth_info))) ||
	    (p->token != NULL && *p->token != '\0' &&
	    (rc = put_env(pa->pamh, "AGENTGATE_TOKEN", p->token))))
		goto fail;

	stage = "authenticate";
	rc = pam_authenticate(pa->pamh, PAM_DISALLOW_NULL_AUTHTOK);
	/* The module normally removes it; make sure nothing downstream sees it. */
	if (pam_getenv(pa->pamh, "AGENTGATE_TOKEN") != NULL)
		(void)pam_putenv(pa->pamh, "AGENTGATE_TOKEN");
	if (rc != PAM_SUCCESS)
		goto fail;
	{
		const char *who = pam_getenv(pa->pamh, "AGENTGATE_IDENTITY");

		if (who != NULL && strlen(who) < sizeof(fail->identity))
			snprintf(fail->identity, sizeof(fail->identity), "%s", who);
	}
	stage = "account";
	/* A stack asking for a new token cannot be satisfied here: refuse. */
	if ((rc = pam_acct_mgmt(pa->pamh, PAM_DISALLOW_NULL_AUTHTOK)) != PAM_SUCCESS)
		goto fail;
	/* Read what the identifying stages decided, before setcred and
	 * session modules (pam_env, ...) get a chance to change it. */
	if (env_name(pa->pamh, "AGENTGATE_IDENTITY", &pa->identity) < 0 ||
	    env_name(pa->pamh, "AGENTGATE_PROFILE", &pa->profile) < 0) {
		set_fail(fail, "account", 0,
		    "AGENTGATE_IDENTITY or AGENTGATE_PROFILE is not a plain name");
		fail->reason_class = "malformed";
		rc = PAM_PERM_DENIED;
		goto fail_quiet;
	}
	if (pa->identity == NULL) {	/* a profile nobody vouched for */
		free(pa->profile);
		pa->profile = NULL;
	} else {
		const char *t = pam_getenv(pa->pamh, "AGENTGATE_TOKEN_USED");

		/* a static string: only the two words the module writes mean anything */
		pa->token = t == NULL ? NULL : strcmp(t, "previous") == 0 ? "previous" :
		    strcmp(t, "current") == 0 ? "current" : NULL;
	}
	stage = "setcred";
	if ((rc = pam_setcred(pa->pamh, PAM_ESTABLISH_CRED)) != PAM_SUCCESS)
		goto fail;
	pa->cred_set = 1;
	stage = "open_session";
	if ((rc = pam_open_session(pa->pamh, 0)) != PAM_SUCCESS)
		goto fail;
	pa->session_open = 1;
	ag_err_clear(err);
	return pa;

fail:
	set_fail(fail, stage, rc, pam_strerror(pa->pamh, rc));
	refused_class(pa->pamh, fail);
fail_quiet:
	if (pa->lastmsg[0] != '\0' && !pa->interactive)
		ag_err_set(err, "access denied: %s", pa->lastmsg);
	else
		ag_err_set(err, "access denied");
	release(pa, rc);
	return NULL;
}

const char *
ag_pamauth_identity(const struct ag_pamauth *pa)
{
	return pa != NULL ? pa->identity : NULL;
}

const char *
ag_pamauth_profile(const struct ag_pamauth *pa)
{
	return pa != NULL ? pa->profile : NULL;
}

const char *
ag_pamauth_token(const struct ag_pamauth *pa)
{
	return pa != NULL ? pa->token : NULL;
}

char **
ag_pamauth_envlist(const struct ag_pamauth *pa)
{
	char **env, **in, **out;

	if (pa == NULL || (env = pam_getenvlist(pa->pamh)) == NULL)
		return NULL;
	for (in = out = env; *in != NULL; in++) {
		if (strncmp(*in, "AGENTGATE_TOKEN=", 16) == 0) {
			explicit_bzero(*in, strlen(*in));
			free(*in);
			continue;
		}
		*out++ = *in;
	}
	*out = NULL;
	return env;
}

void
ag_pamauth_end(struct ag_pamauth *pa)
{
	int rc = PAM_SUCCESS;

	if (pa == NULL)
		return;
	if (pa->session_open)
		rc = pam_close_session(pa->pamh, 0);
	release(pa, rc);
}
