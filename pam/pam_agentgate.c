/*
 * pam_agentgate.c - PAM module: which agent is calling, and may it.
 *
 * auth     identifies the agent by the public key sshd reports in
 *          SSH_AUTH_INFO_0, or by a token (PAM_AUTHTOK, AGENTGATE_TOKEN in
 *          the PAM environment, or a prompt), and sets AGENTGATE_IDENTITY
 *          and AGENTGATE_PROFILE in the PAM environment.
 * account  refuses a disabled or expired identity and a caller outside the
 *          identity's `from` networks.
 * session  logs start and end.
 * bind     (sshd's own stack, session) records which key the connection
 *          used; the module refuses it in any other service.
 *
 * The matching itself is in pamid.c; this file is the PAM glue.  The
 * module runs unprivileged inside the gateway, so everything it needs is
 * the (world-readable, root-owned) policy file.  See pam_agentgate(8).
 */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAM_SM_AUTH
#define PAM_SM_ACCOUNT
#define PAM_SM_SESSION
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "auth/pamopts.h"
#include "auth/ratelimit.h"
#include "auth/sshbind.h"
#include "record/live.h"
#include "common/config.h"
#include "common/err.h"
#include "common/lastgood.h"
#include "record/audit.h"
#include "pamid.h"

#define DATA_NAME	"pam_agentgate_state"
#define TOKEN_PROMPT	"Agent token: "
/* with allow_unidentified an empty answer is a valid one: say so, or a
 * person at the terminal has no way to know */
#define TOKEN_PROMPT_SKIP	"Agent token (Enter for none): "

struct options {
	const char	*config;
	int		 debug;
	int		 use_key;
	int		 use_token;
	int		 try_first_pass;
	int		 use_first_pass;
	int		 allow_unidentified;
	int		 bind;		/* in sshd's own stack: record the connection */
	const char	*sshd_service;	/* that stack's PAM service */
};

/* What auth found, kept for account and session on the same handle. */
struct state {
	struct ag_config		*cfg;
	const struct ag_identity	*id;	/* NULL: no identity matched */
};


/*
 * 1 when the account is in list ("agent,%agents": user names, %groups,
 * comma-separated): the admin lets that account's callers in without an
 * identity.  Any other account's callers must be an identity.
 */
static int
account_listed(pam_handle_t *pamh, const char *list)
{
	const char *user = NULL, *p = list;
	struct passwd *pw;

	if (pam_get_item(pamh, PAM_USER, (const void **)&user) != PAM_SUCCESS ||
	    user == NULL || (pw = getpwnam(user)) == NULL)
		return 0;
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		char name[256];

		if (n > 0 && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (name[0] == '%') {
				struct group *gr = getgrnam(name + 1);
				char **m;

				if (gr != NULL && gr->gr_gid == pw->pw_gid)
					return 1;
				for (m = gr != NULL ? gr->gr_mem : NULL; m != NULL && *m != NULL; m++)
					if (strcmp(*m, user) == 0)
						return 1;
			} else if (strcmp(name, user) == 0)
				return 1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/*
 * `bind` anywhere but sshd's own stack is a mistake that opens a door: it
 * makes auth and account ignore the caller, so in the gateway's service a
 * stack that ends in pam_permit would let anyone in.  Refuse there, and
 * say why.
 */
static int
in_sshd_stack(pam_handle_t *pamh, const struct options *o)
{
	const void *svc = NULL;

	if (pam_get_item(pamh, PAM_SERVICE, &svc) == PAM_SUCCESS && svc != NULL &&
	    strcmp(svc, o->sshd_service) == 0)
		return 1;
	pam_syslog(pamh, LOG_ERR, "refusing: 'bind' belongs in sshd's own PAM stack "
	    "(service %s; %sNAME names another), not in service %s", o->sshd_service,
	    AG_PAM_SSHD_SERVICE_OPT, svc != NULL ? (const char *)svc : "?");
	return 0;
}

/* Unknown options are refused: a typo must not silently change who gets in. */
static int
parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *o)
{
	int i, key = 0, tok = 0;

	memset(o, 0, sizeof(*o));
	o->config = AG_DEFAULT_CONFIG;
	o->sshd_service = AG_PAM_SSHD_SERVICE;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!ag_pam_option_ok(a)) {
			pam_syslog(pamh, LOG_ERR, "unknown option '%s' (config= needs an "
			    "absolute path)", a);
			return -1;
		}
		if (strncmp(a, "config=", 7) == 0 && a[7] == '/')
			o->config = a + 7;
		else if (strcmp(a, "debug") == 0)
			o->debug = 1;
		else if (strcmp(a, "use_key") == 0)
			key = 1;
		else if (strcmp(a, "use_token") == 0)
			tok = 1;
		else if (strcmp(a, "try_first_pass") == 0)
			o->try_first_pass = 1;
		else if (strcmp(a, "use_first_pass") == 0)
			o->use_first_pass = 1;
		else if (strcmp(a, "allow_unidentified") == 0)
			o->allow_unidentified = 1;
		else if (strncmp(a, "allow_unidentified=", 19) == 0)
			o->allow_unidentified = account_listed(pamh, a + 19);
		else if (strcmp(a, "bind") == 0)
			o->bind = 1;
		else if (strncmp(a, AG_PAM_SSHD_SERVICE_OPT, sizeof(AG_PAM_SSHD_SERVICE_OPT) - 1) == 0)
			o->sshd_service = a + sizeof(AG_PAM_SSHD_SERVICE_OPT) - 1;
	}
	if (o->bind && !in_sshd_stack(pamh, o))
		return -1;
	/* Neither named: both ways are on. */
	o->use_key = key || !tok;
	o->use_token = tok || !key;
	return 0;
}

static void
state_cleanup(pam_handle_t *pamh, void *data, int error_status)
{
	struct state *st = data;

	(void)pamh;
	(void)error_status;
	if (st == NULL)
		return;
	ag_config_free(st->cfg);
	free(st);
}

static const char *
item_str(pam_handle_t *pamh, int item)
{
	const void *v = NULL;

	if (pam_get_item(pamh, item, &v) != PAM_SUCCESS || v == NULL)
		return NULL;
	return v;
}

/*
 * The policy does not load: the caller is refused (PAM_AUTHINFO_UNAVAIL),
 * told so in one line where the application shows messages (sshd's
 * keyboard-interactive; not its publickey path, which has no way to),
 * and the audit the admin watches gets a config_error record at the
 * last good policy's destinations (lastgood.h).
 */
static void
config_error(pam_handle_t *pamh, const struct options *o, int flags, const char *msg)
{
	struct ag_audit_info info;
	struct ag_config *last;
	struct ag_err lerr;

	memset(&info, 0, sizeof(info));
	info.user = item_str(pamh, PAM_USER);
	info.client = item_str(pamh, PAM_RHOST);
	if ((last = ag_lastgood_load(o->config, &lerr)) == NULL && o->debug)
		pam_syslog(pamh, LOG_DEBUG, "config_error to syslog only: %s", lerr.msg);
	(void)ag_audit_config_error(&info, "pam", last != NULL ? &last->gw.audit : NULL,
	    o->config, msg);
	ag_config_free(last);
	if (!(flags & PAM_SILENT))
		(void)pam_error(pamh, "agentgate: policy unavailable; the administrator has "
		    "been told");
}

static struct ag_config *
load_config(pam_handle_t *pamh, const struct options *o, int flags)
{
	struct ag_err err;
	struct ag_config *cfg;
	char buf[AG_ERR_MSG_MAX + 300];

	ag_err_clear(&err);
	/* ag_config_load runs ag_config_check_perms first: a policy file an
	 * unprivileged user could have written names no identity. */
	if ((cfg = ag_config_load(o->config, 0, &err)) == NULL) {
		ag_err_format(&err, buf, sizeof(buf));
		pam_syslog(pamh, LOG_ERR, "cannot use policy: %s", buf);
		config_error(pamh, o, flags, buf);
		return NULL;
	}
	/* in sshd's stack (root): a policy that loads is the last good one */
	if (ag_lastgood_save(o->config, &err) < 0)
		pam_syslog(pamh, LOG_WARNING, "cannot keep the policy as the last good one: %s",
		    err.msg);
	return cfg;
}

static void
clear_env(pam_handle_t *pamh)
{
	/* only names that are there: deleting an absent one is logged as an
	 * error by Linux-PAM, and an alert on authpriv.err would fire on every
	 * login */
	if (pam_getenv(pamh, "AGENTGATE_IDENTITY") != NULL)
		(void)pam_putenv(pamh, "AGENTGATE_IDENTITY");
	if (pam_getenv(pamh, "AGENTGATE_PROFILE") != NULL)
		(void)pam_putenv(pamh, "AGENTGATE_PROFILE");
	if (pam_getenv(pamh, "AGENTGATE_TOKEN_USED") != NULL)
		(void)pam_putenv(pamh, "AGENTGATE_TOKEN_USED");
	if (pam_getenv(pamh, "AGENTGATE_REFUSED") != NULL)
		(void)pam_putenv(pamh, "AGENTGATE_REFUSED");
	if (pam_getenv(pamh, "AGENTGATE_REFUSED_IDENTITY") != NULL)
		(void)pam_putenv(pamh, "AGENTGATE_REFUSED_IDENTITY");
}

/*
 * Why this module refused, for the gateway's (admin-only) audit record:
 * one word of a fixed set (pam_agentgate(8)), and whose credential it was
 * when one matched an identity.  The caller is told nothing more than
 * before: these stay in the PAM environment of a handle that is ending.
 */
static void
set_refused(pam_handle_t *pamh, const char *class, const char *identity)
{
	char buf[300];

	if (snprintf(buf, sizeof(buf), "AGENTGATE_REFUSED=%s", class) < (int)sizeof(buf))
		(void)pam_putenv(pamh, buf);
	if (identity != NULL && snprintf(buf, sizeof(buf), "AGENTGATE_REFUSED_IDENTITY=%s",
	    identity) < (int)sizeof(buf))
		(void)pam_putenv(pamh, buf);
}

static int
set_env(pam_handle_t *pamh, const struct ag_identity *id)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "AGENTGATE_IDENTITY=%s", id->name);
	if (n < 0 || (size_t)n >= sizeof(buf) || pam_putenv(pamh, buf) != PAM_SUCCESS)
		return -1;
	n = snprintf(buf, sizeof(buf), "AGENTGATE_PROFILE=%s",
	    id->profile_name != NULL ? id->profile_name : "");
	if (n < 0 || (size_t)n >= sizeof(buf) || id->profile_name == NULL ||
	    pam_putenv(pamh, buf) != PAM_SUCCESS)
		return -1;
	return 0;
}

/*
 * Try one token.  Returns the match result; *offered is set when the token
 * was non-empty, so a wrong token fails even under allow_unidentified.
 */
static enum ag_pamid_match
try_token(const struct ag_config *cfg, const char *tok, const struct ag_identity **idp,
    enum ag_pamid_token *which, int *offered)
{
	size_t len;

	*which = AG_PAMID_TOKEN_CURRENT;
	if (tok == NULL || (len = strnlen(tok, AG_PAMID_MAX_TOKEN + 1)) == 0)
		return AG_PAMID_NONE;
	*offered = len > AG_PAMID_MAX_TOKEN ? 2 : 1;	/* 2: too long to be one */
	return ag_pamid_by_token(cfg, tok, len, time(NULL), idp, which);
}

static int
any_token_identity(const struct ag_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nidentities; i++)
		if (cfg->identities[i].has_token || cfg->identities[i].has_token_hash)
			return 1;
	return 0;
}

static enum ag_pamid_match
identify_by_token(pam_handle_t *pamh, const struct options *o, const struct ag_config *cfg,
    const char *envtok, const struct ag_identity **idp, enum ag_pamid_token *which,
    int *offered)
{
	enum ag_pamid_match m;
	char *resp = NULL;

	if (o->use_first_pass || o->try_first_pass) {
		int ignore = 0;

		m = try_token(cfg, item_str(pamh, PAM_AUTHTOK), idp, which, &ignore);
		/* Another module's password that is no token is not an attempt,
		 * unless this module was told to use nothing else. */
		if (o->use_first_pass) {
			*offered = ignore;
			return m;
		}
		if (m != AG_PAMID_NONE)
			return m;
	}
	if (envtok != NULL) {
		m = try_token(cfg, envtok, idp, which, offered);
		if (*offered)
			return m;
	}
	/*
	 * Ask only when a token could match: a policy without token
	 * identities would otherwise make every interactive login that
	 * falls through to users: answer a question with no right answer.
	 * A non-interactive conversation fails this prompt at once.
	 */
	if (!any_token_identity(cfg))
		return AG_PAMID_NONE;
	if (pam_prompt(pamh, PAM_PROMPT_ECHO_OFF, &resp, "%s",
	    o->allow_unidentified ? TOKEN_PROMPT_SKIP : TOKEN_PROMPT) != PAM_SUCCESS ||
	    resp == NULL) {
		if (o->debug)
			pam_syslog(pamh, LOG_DEBUG, "no token from the conversation");
		return AG_PAMID_NONE;
	}
	m = try_token(cfg, resp, idp, which, offered);
	explicit_bzero(resp, strlen(resp));
	free(resp);
	return m;
}

static int authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv,
    const char *envtok);

PAM_EXTERN int
pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const char *env = pam_getenv(pamh, "AGENTGATE_TOKEN");
	char *envtok = NULL;
	int rc;

	/* Out of the PAM environment at once, used or not: nothing later (the
	 * session's environment, sshd) should ever see it. */
	if (env != NULL) {
		envtok = strdup(env);
		(void)pam_putenv(pamh, "AGENTGATE_TOKEN");
		if (envtok == NULL)
			return PAM_BUF_ERR;
	}
	rc = authenticate(pamh, flags, argc, argv, envtok);
	if (envtok != NULL) {
		explicit_bzero(envtok, strlen(envtok));
		free(envtok);
	}
	return rc;
}

static int
authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv, const char *envtok)
{
	struct options o;
	struct state *st;
	struct ag_config *cfg;
	const struct ag_identity *id = NULL;
	enum ag_pamid_match m = AG_PAMID_NONE;
	enum ag_pamid_token which = AG_PAMID_TOKEN_CURRENT;
	const char *how = NULL, *user = item_str(pamh, PAM_USER);
	const char *rhost = item_str(pamh, PAM_RHOST);
	struct ag_err err;
	int offered = 0;

	if (parse_options(pamh, argc, argv, &o) < 0)
		return PAM_SERVICE_ERR;
	if (o.bind)	/* sshd's stack: only the session part has work */
		return PAM_IGNORE;
	/* Whatever an earlier module (pam_env, a user file) put there, only
	 * this module names the identity; and nothing an earlier call on this
	 * handle decided survives a new attempt. */
	clear_env(pamh);
	(void)pam_set_data(pamh, DATA_NAME, NULL, NULL);
	if ((cfg = load_config(pamh, &o, flags)) == NULL) {
		set_refused(pamh, "policy_unavailable", NULL);
		return PAM_AUTHINFO_UNAVAIL;
	}

	ag_err_clear(&err);
	if (o.use_key) {
		m = ag_pamid_by_key(cfg, pam_getenv(pamh, "SSH_AUTH_INFO_0"), &id, &err);
		if (m == AG_PAMID_MALFORMED) {
			pam_syslog(pamh, LOG_WARNING, "refusing user=%s rhost=%s: %s",
			    user ? user : "?", rhost ? rhost : "?", err.msg);
			set_refused(pamh, "malformed", NULL);
			ag_config_free(cfg);
			return PAM_AUTH_ERR;
		}
		how = "key";
	}
	if (m == AG_PAMID_NONE && o.use_token) {
		long wait = ag_ratelimit_wait(rhost);

		/* a guesser from this address waits, whatever it sends now, and
		 * an attempt while it should wait counts as one more failure */
		if (wait > 0) {
			ag_ratelimit_failed(rhost);
			pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s: too many failed "
			    "token attempts from this address (%ld s left)", user ? user : "?",
			    rhost ? rhost : "?", wait);
			(void)pam_info(pamh, "Too many failed token attempts from this address; "
			    "try again in %ld seconds.", wait);
			set_refused(pamh, "rate_limited", NULL);
			ag_config_free(cfg);
			return PAM_MAXTRIES;
		}
		m = identify_by_token(pamh, &o, cfg, envtok, &id, &which, &offered);
		how = "token";
		if (offered && m != AG_PAMID_FOUND)
			ag_ratelimit_failed(rhost);
	}
	if (m == AG_PAMID_AMBIGUOUS) {
		pam_syslog(pamh, LOG_ERR, "refusing user=%s rhost=%s: credentials match "
		    "more than one identity (fix the policy)", user ? user : "?",
		    rhost ? rhost : "?");
		set_refused(pamh, "ambiguous", NULL);
		ag_config_free(cfg);
		return PAM_AUTH_ERR;
	}
	if (m == AG_PAMID_STALE) {
		pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s: the previous token of "
		    "identity=%s, which stopped working at its until", user ? user : "?",
		    rhost ? rhost : "?", id->name);
		set_refused(pamh, "expired_token", id->name);
		ag_config_free(cfg);
		return PAM_AUTH_ERR;
	}
	if (m != AG_PAMID_FOUND) {
		int rc;

		if (offered) {
			pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s: token matches "
			    "no identity", user ? user : "?", rhost ? rhost : "?");
			set_refused(pamh, offered == 2 ? "malformed" : "unknown_token", NULL);
			rc = PAM_AUTH_ERR;
		} else if (o.allow_unidentified) {
			if (o.debug)
				pam_syslog(pamh, LOG_DEBUG, "no identity for user=%s; "
				    "leaving the decision to the rest of the stack",
				    user ? user : "?");
			rc = PAM_IGNORE;
		} else {
			pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s: no key or "
			    "token of a known identity", user ? user : "?", rhost ? rhost : "?");
			set_refused(pamh, "no_credential", NULL);
			rc = PAM_AUTH_ERR;
		}
		if (rc == PAM_IGNORE && (st = calloc(1, sizeof(*st))) != NULL) {
			/* kept for the later stages: no identity's token with it */
			ag_config_forget_tokens(cfg, NULL);
			st->cfg = cfg;
			if (pam_set_data(pamh, DATA_NAME, st, state_cleanup) == PAM_SUCCESS)
				return rc;
			free(st);
		}
		ag_config_free(cfg);
		return rc;
	}
	/* which token, for the gateway's records and its standing check: a
	 * session on a rotated-out token ends when that token does */
	if (set_env(pamh, id) < 0 || (strcmp(how, "token") == 0 &&
	    pam_putenv(pamh, which == AG_PAMID_TOKEN_PREVIOUS ? "AGENTGATE_TOKEN_USED=previous" :
	    "AGENTGATE_TOKEN_USED=current") != PAM_SUCCESS) ||
	    (st = calloc(1, sizeof(*st))) == NULL) {
		clear_env(pamh);
		ag_config_free(cfg);
		return PAM_BUF_ERR;
	}
	/* kept for the later stages, in the gateway's memory too (its own
	 * PAM service): of the tokens, only the caller's */
	ag_config_forget_tokens(cfg, id->name);
	st->cfg = cfg;
	st->id = id;
	if (pam_set_data(pamh, DATA_NAME, st, state_cleanup) != PAM_SUCCESS) {
		clear_env(pamh);
		state_cleanup(pamh, st, 0);
		return PAM_BUF_ERR;
	}
	pam_syslog(pamh, LOG_INFO, "identified user=%s rhost=%s as identity=%s "
	    "profile=%s by %s%s", user ? user : "?", rhost ? rhost : "?", id->name,
	    id->profile_name, how, which == AG_PAMID_TOKEN_PREVIOUS ?
	    " (the previous token, before its until)" : "");
	return PAM_SUCCESS;
}

PAM_EXTERN int
pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_SUCCESS;
}

/*
 * The state auth left on this handle; else (sshd runs keyboard-interactive
 * auth in a child process and passes back only the PAM environment) the
 * identity AGENTGATE_IDENTITY names, which our auth stage set after
 * clearing it; else (account without auth, sshd's publickey path) the
 * identity of the key.  NULL on failure, *rc set.
 */
static struct state *
account_state(pam_handle_t *pamh, const struct options *o, int flags, int *rc)
{
	const void *data = NULL;
	struct state *st;
	struct ag_err err;
	enum ag_pamid_match m;
	const char *name;

	if (pam_get_data(pamh, DATA_NAME, &data) == PAM_SUCCESS && data != NULL)
		return (struct state *)(uintptr_t)data;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		*rc = PAM_BUF_ERR;
		return NULL;
	}
	if ((st->cfg = load_config(pamh, o, flags)) == NULL) {
		free(st);
		*rc = PAM_AUTHINFO_UNAVAIL;
		return NULL;
	}
	ag_err_clear(&err);
	if ((name = pam_getenv(pamh, "AGENTGATE_IDENTITY")) != NULL) {
		if ((st->id = ag_config_identity(st->cfg, name)) == NULL) {
			pam_syslog(pamh, LOG_WARNING, "refusing: AGENTGATE_IDENTITY names "
			    "no identity of the policy");
			state_cleanup(pamh, st, 0);
			*rc = PAM_PERM_DENIED;
			return NULL;
		}
	} else if (o->use_key) {
		m = ag_pamid_by_key(st->cfg, pam_getenv(pamh, "SSH_AUTH_INFO_0"), &st->id, &err);
		if (m == AG_PAMID_MALFORMED || m == AG_PAMID_AMBIGUOUS) {
			pam_syslog(pamh, LOG_WARNING, "refusing: %s", m == AG_PAMID_MALFORMED ?
			    err.msg : "key matches more than one identity");
			state_cleanup(pamh, st, 0);
			*rc = PAM_PERM_DENIED;
			return NULL;
		}
	}
	if (st->id != NULL && set_env(pamh, st->id) < 0) {
		state_cleanup(pamh, st, 0);
		*rc = PAM_BUF_ERR;
		return NULL;
	}
	ag_config_forget_tokens(st->cfg, st->id != NULL ? st->id->name : NULL);
	if (pam_set_data(pamh, DATA_NAME, st, state_cleanup) != PAM_SUCCESS) {
		state_cleanup(pamh, st, 0);
		*rc = PAM_BUF_ERR;
		return NULL;
	}
	return st;
}

PAM_EXTERN int
pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;
	struct state *st;
	const char *user = item_str(pamh, PAM_USER), *rhost = item_str(pamh, PAM_RHOST);
	const char *why = NULL, *tell = NULL, *class = "account_refused";
	int rc = PAM_PERM_DENIED;

	if (parse_options(pamh, argc, argv, &o) < 0)
		return PAM_SERVICE_ERR;
	if (o.bind)
		return PAM_IGNORE;
	if ((st = account_state(pamh, &o, flags, &rc)) == NULL)
		return rc;
	if (st->id == NULL) {
		if (o.allow_unidentified)
			return PAM_IGNORE;
		pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s: no identity",
		    user ? user : "?", rhost ? rhost : "?");
		set_refused(pamh, "no_credential", NULL);
		return PAM_USER_UNKNOWN;
	}
	switch (ag_pamid_account(st->id, time(NULL), user, rhost)) {
	case AG_PAMID_OK:
		if (o.debug)
			pam_syslog(pamh, LOG_DEBUG, "account ok: identity=%s", st->id->name);
		return PAM_SUCCESS;
	case AG_PAMID_DISABLED:
		why = "identity is disabled";
		tell = "This agent identity is disabled.";
		class = "identity_disabled";
		rc = PAM_PERM_DENIED;
		break;
	case AG_PAMID_EXPIRED:
		why = "identity has expired";
		tell = "This agent identity has expired.";
		class = "identity_expired";
		rc = PAM_ACCT_EXPIRED;
		break;
	case AG_PAMID_FROM:
		why = (rhost == NULL || *rhost == '\0') ? "no client address, and the "
		    "identity is limited to `from` networks" :
		    "client address is outside the identity's `from` networks";
		tell = "This agent identity may not connect from this address.";
		class = "address_refused";
		rc = PAM_PERM_DENIED;
		break;
	case AG_PAMID_WRONG_ACCOUNT:
		why = "the identity's accounts: do not name this account";
		tell = "This agent identity may not log in as this account.";
		class = "wrong_account";
		rc = PAM_PERM_DENIED;
		break;
	default:
		why = "unexpected account state";
		tell = "Access denied.";
		rc = PAM_PERM_DENIED;
		break;
	}
	pam_syslog(pamh, LOG_NOTICE, "refusing user=%s rhost=%s identity=%s: %s",
	    user ? user : "?", rhost ? rhost : "?", st->id->name, why);
	clear_env(pamh);
	/* whose credential it was: the admin asks who tried which account */
	set_refused(pamh, class, strcmp(class, "wrong_account") == 0 ? st->id->name : NULL);
	if (!(flags & PAM_SILENT))
		(void)pam_info(pamh, "%s", tell);
	return rc;
}

static void
log_session(pam_handle_t *pamh, const char *what)
{
	const void *data = NULL;
	const struct state *st = NULL;
	const char *user = item_str(pamh, PAM_USER), *rhost = item_str(pamh, PAM_RHOST);
	const char *ident = pam_getenv(pamh, "AGENTGATE_IDENTITY");
	const char *prof = pam_getenv(pamh, "AGENTGATE_PROFILE");

	if (pam_get_data(pamh, DATA_NAME, &data) == PAM_SUCCESS)
		st = data;
	if (st != NULL && st->id != NULL) {
		ident = st->id->name;
		prof = st->id->profile_name;
	}
	pam_syslog(pamh, LOG_INFO, "session %s for user=%s identity=%s profile=%s rhost=%s",
	    what, user ? user : "?", ident ? ident : "-", prof ? prof : "-",
	    rhost ? rhost : "-");
}

/*
 * `bind`, in sshd's stack: sshd has set SSH_AUTH_INFO_0 by the time it opens
 * the session (not yet during account), in its privileged monitor, once per
 * connection.  Keep it where the gateway of each session finds it and the
 * agent cannot write (sshbind.h).
 */
/*
 * pam_env with user_readenv=1 (Debian's /etc/pam.d/sshd has it) reads
 * ~/.pam_environment as root and may set any variable, and sshd copies the
 * PAM environment into the session's: SSH_ORIGINAL_COMMAND (for a session
 * that sent no command), AGENTGATE_TOKEN (in place of the one the client
 * sent), SSH_AUTH_INFO_0 (before a bind line below it: a key the connection
 * never used).  sshd itself puts nothing there but SSH_AUTH_INFO_0, so:
 *  - what another module set under SSH_* or AGENTGATE_* is removed here;
 *  - a user file that names such a variable (or cannot be read to tell)
 *    could set it again after us, or did before: the record then says so,
 *    and the gateway refuses the connection (sshbind.h).
 * Returns a reason for refusing, or NULL.
 */
static int
trusted_name(const char *v, size_t n)
{
	return (n > 4 && strncmp(v, "SSH_", 4) == 0) || (n > 10 && strncmp(v, "AGENTGATE_", 10) == 0);
}

static const char *
user_env_may_forge(const char *user)
{
	char path[PATH_MAX], buf[16384];
	struct passwd *pw;
	struct stat st;
	const char *p;
	ssize_t n;
	int fd, bad;

	if (user == NULL || (pw = getpwnam(user)) == NULL || pw->pw_dir == NULL)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/.pam_environment", pw->pw_dir) >=
	    sizeof(path))
		return "the home directory's path is too long to look for ~/.pam_environment";
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return errno == ENOENT || errno == ENOTDIR ? NULL :
		    "~/.pam_environment cannot be read to tell what it sets";
	bad = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= (off_t)sizeof(buf);
	n = bad ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return "~/.pam_environment cannot be read to tell what it sets";
	buf[n] = '\0';
	/* each line's first word is the variable (pam_env(8)); `export` too */
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		p += strspn(p, " \t");
		if (strncmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
			p += 6 + strspn(p + 6, " \t");
		if (trusted_name(p, strcspn(p, " \t=\n")))
			return "~/.pam_environment sets SSH_* or AGENTGATE_* variables, which the "
			    "gateway trusts (pam_env user_readenv)";
	}
	return NULL;
}

/* Remove what another module put under SSH_* and AGENTGATE_* (see above). */
static void
scrub_env(pam_handle_t *pamh, const char *user)
{
	char **env = pam_getenvlist(pamh), gone[256] = "";
	size_t i, used = 0;

	for (i = 0; env != NULL && env[i] != NULL; i++) {
		size_t n = strcspn(env[i], "=");
		char name[128];

		if (!trusted_name(env[i], n) || (n == 15 && strncmp(env[i], "SSH_AUTH_INFO_0", 15) == 0) ||
		    n >= sizeof(name))
			continue;
		memcpy(name, env[i], n);
		name[n] = '\0';
		(void)pam_putenv(pamh, name);	/* no '=': removes it */
		if (used + n + 2 < sizeof(gone))
			used += (size_t)snprintf(gone + used, sizeof(gone) - used, " %s", name);
	}
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		explicit_bzero(env[i], strlen(env[i]));
		free(env[i]);
	}
	free(env);
	if (used > 0)
		pam_syslog(pamh, LOG_ERR, "removed from the session environment of user=%s, set by "
		    "a module before bind (pam_env user_readenv?):%s", user ? user : "?", gone);
}

static int
bind_open(pam_handle_t *pamh, const struct options *o)
{
	const char *user = item_str(pamh, PAM_USER), *why;
	char refuse[256];
	struct ag_err err;
	int rc;

	ag_err_clear(&err);
	scrub_env(pamh, user);
	if ((why = user_env_may_forge(user)) != NULL) {
		pam_syslog(pamh, LOG_ERR, "connection of user=%s refused to the gateway: %s",
		    user ? user : "?", why);
		snprintf(refuse, sizeof(refuse), AG_SSHBIND_REFUSE "%s", why);
		rc = ag_sshbind_write(user, item_str(pamh, PAM_RHOST), refuse, &err);
	} else
		rc = ag_sshbind_write(user, item_str(pamh, PAM_RHOST),
		    pam_getenv(pamh, "SSH_AUTH_INFO_0"), &err);
	if (rc < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot record the connection of user=%s: %s",
		    user ? user : "?", err.msg);
		return PAM_SESSION_ERR;
	}
	if (o->debug)
		pam_syslog(pamh, LOG_DEBUG, "recorded the connection of user=%s", user);
	return PAM_SUCCESS;
}

PAM_EXTERN int
pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;

	(void)flags;
	if (parse_options(pamh, argc, argv, &o) < 0)
		return PAM_SERVICE_ERR;
	if (o.bind)
		return bind_open(pamh, &o);
	log_session(pamh, "opened");
	return PAM_SUCCESS;
}

PAM_EXTERN int
pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;

	(void)flags;
	if (parse_options(pamh, argc, argv, &o) < 0)
		return PAM_SERVICE_ERR;
	if (o.bind) {
		ag_sshbind_remove();
		/*
		 * The connection is over: a gateway of the account killed by
		 * another of its processes (no sandbox) left its session
		 * without an end.  Root here sees it gone and records it.
		 */
		ag_live_reap(NULL, NULL, "sshd's session close (pam_agentgate bind)");
		return PAM_SUCCESS;
	}
	log_session(pamh, "closed");
	return PAM_SUCCESS;
}
