/*
 * pamauth.h - the gateway's side of PAM: who is calling, through the
 * service named by gateway.pam_service (pam_agentgate.so decides).
 *
 * One call runs the whole front half of a PAM session:
 *   pam_start_confdir (gateway.pam_confdir) or pam_start
 *   items PAM_RHOST, PAM_TTY, PAM_RUSER
 *   PAM environment SSH_AUTH_INFO_0 (what sshd recorded, sshbind.h) and
 *   AGENTGATE_TOKEN, then pam_authenticate, pam_acct_mgmt, pam_setcred,
 *   pam_open_session.
 * ag_pamauth_end() runs the back half (close_session, delete creds,
 * pam_end) and must run on every exit path of the session, including
 * timeout, disconnect and signals (from the main loop, not a handler).
 * A forked child must never call it: it would close the parent's session.
 *
 * Ownership: ag_pamauth_start returns a handle the caller frees with
 * ag_pamauth_end.  Strings returned by the accessors belong to the handle.
 * The params are only read during the call; the token is copied into the
 * PAM environment and removed from it again after pam_authenticate.
 */
#ifndef AG_PAMAUTH_H
#define AG_PAMAUTH_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"

#define AG_PAMAUTH_MAX_RESPONSE		1024		/* one answer typed at a prompt */
#define AG_PAMAUTH_PROMPT_TIMEOUT	120		/* seconds to answer a prompt */

struct ag_pamauth;

/*
 * A front end's own conversation, for prompts that do not go to a terminal
 * (the built-in server turns them into SSH keyboard-interactive prompts).
 * Called with one PAM batch; answers[i] must be set to a malloc'd string
 * for every prompt (style ECHO_OFF or ECHO_ON) and left NULL for messages.
 * Returns 0, or -1 to fail the conversation (answers already set are freed
 * by the caller).  Answers longer than AG_PAMAUTH_MAX_RESPONSE fail it.
 */
enum ag_pamauth_style {
	AG_PAMAUTH_ECHO_OFF, AG_PAMAUTH_ECHO_ON, AG_PAMAUTH_INFO, AG_PAMAUTH_ERROR
};
struct ag_pamauth_prompt {
	const char		*text;
	enum ag_pamauth_style	 style;
};
typedef int (*ag_pamauth_conv_fn)(void *arg, size_t n,
	    const struct ag_pamauth_prompt *prompts, char **answers);

struct ag_pamauth_params {
	const char	*user;		/* the Unix user (required) */
	const char	*rhost;		/* client address (numeric); NULL = none */
	const char	*tty;		/* tty name, or NULL for "ssh" */
	const char	*ruser;		/* NULL = not set */
	const char	*auth_info;	/* SSH_AUTH_INFO_0 (auth/sshbind.h); NULL = none */
	const char	*token;		/* AGENTGATE_TOKEN; NULL = none.  Caller scrubs its copy. */
	int		 interactive;	/* 1: prompts go to /dev/tty; 0: every prompt fails at once */
	ag_pamauth_conv_fn conv;	/* when set, prompts and messages go here instead */
	void		*conv_arg;
};

/* Why ag_pamauth_start failed, for the audit record (never for the client). */
struct ag_pamauth_failure {
	const char	*stage;		/* "service", "start", "authenticate", "account",
					   "setcred", "open_session" (static strings) */
	int		 pam_status;	/* PAM_* code; 0 when the failure was before PAM */
	char		 pam_error[256];/* pam_strerror() text, or what went wrong */
	char		 identity[128];	/* who auth found before a later stage
					   refused (expired, from), or whose
					   expired previous token it was: "" = none */
	const char	*reason_class;	/* the audit record's reason_class: a word of
					   a fixed set (agentgate(8)), static */
};

/*
 * Run the front half.  On failure returns NULL, err holds one line for the
 * client with nothing an attacker could use ("access denied", or the
 * module's own PAM_TEXT_INFO/PAM_ERROR_MSG such as "This agent identity has
 * expired."), and fail (if not NULL) says what PAM said.  Fails closed when
 * the service file does not exist (Linux-PAM would fall back to "other").
 */
struct ag_pamauth *ag_pamauth_start(const struct ag_config *cfg,
	    const struct ag_pamauth_params *p, struct ag_err *err,
	    struct ag_pamauth_failure *fail);

/*
 * AGENTGATE_IDENTITY / AGENTGATE_PROFILE as they stood after pam_acct_mgmt
 * (later setcred/session modules cannot change them); NULL if unset.  The
 * profile is NULL whenever the identity is: no identity, no profile.
 */
const char *ag_pamauth_identity(const struct ag_pamauth *pa);
const char *ag_pamauth_profile(const struct ag_pamauth *pa);
/* "current" or "previous" when the caller came in with a token (its
 * identity's token_hash, or the previous_token a rotation kept); NULL when
 * not by token. */
const char *ag_pamauth_token(const struct ag_pamauth *pa);

/*
 * The PAM environment (pam_getenvlist: "NAME=value" strings, NULL-ended)
 * without AGENTGATE_TOKEN, for the session's environment as sshd would
 * pass it.  The caller frees each string and the array.  NULL on error.
 */
char	**ag_pamauth_envlist(const struct ag_pamauth *pa);

/* Close the session and end PAM.  NULL-safe; frees pa. */
void	ag_pamauth_end(struct ag_pamauth *pa);



#endif
