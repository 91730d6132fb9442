/* core.c - a session's start, its channel and its end; see core.h */
#include "agconfig.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/log.h"
#include "core/core.h"
#include "core/approval.h"
#include "core/target.h"
#include "core/terminal.h"
#include "egress/egress.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "policy/envsan.h"
#include "validate/validator.h"

/* The profile the policy gives this caller, with no word from its command line. */
static const struct ag_profile *
own_profile(const struct ag_config *cfg, const char *pam_identity, const char *pam_profile,
    const struct passwd *pw, struct ag_err *err)
{
	size_t i;

	if (pam_identity != NULL) {
		const struct ag_identity *id = ag_config_identity(cfg, pam_identity);

		/* PAM read the policy file as it is now; a gateway that loaded it
		 * earlier (serve, until SIGHUP) answers from its own load */
		if (id == NULL || id->disabled) {
			ag_err_set(err, "identity '%s' is %s in the policy this gateway loaded "
			    "(%s)", pam_identity, id == NULL ? "not" : "disabled", cfg->path);
			return NULL;
		}
		/* the PAM module refused this already; a stack without it, or a
		 * policy edited since, is answered here the same way */
		if (!ag_identity_allows_account(id, pw->pw_name)) {
			ag_err_set(err, "identity '%s' may not log in as account %s: its "
			    "accounts: do not name it (%s)", pam_identity, pw->pw_name,
			    cfg->path);
			return NULL;
		}
		return id->profile;
	}
	if (pam_profile != NULL) {
		const struct ag_profile *p = ag_config_profile(cfg, pam_profile);

		/* The module resolved it from the same file; a mismatch means
		 * the stack set AGENTGATE_PROFILE some other way: refuse. */
		if (p == NULL)
			ag_err_set(err, "PAM named profile '%s', which %s does not define",
			    pam_profile, cfg->path);
		return p;
	}
	for (i = 0; i < cfg->nusers; i++)
		if (!cfg->users[i].is_group && strcmp(cfg->users[i].name, pw->pw_name) == 0)
			return cfg->users[i].profile;
	for (i = 0; i < cfg->nusers; i++)
		if (cfg->users[i].is_group &&
		    ag_account_in_group(pw->pw_name, pw->pw_gid, cfg->users[i].name))
			return cfg->users[i].profile;
	if (cfg->gw.default_profile != NULL)
		return cfg->gw.default_profile;
	ag_err_set(err, "no profile for user %s: not in `users:` and no "
	    "gateway.default_profile in %s", pw->pw_name, cfg->path);
	return NULL;
}

/* Does p's selectable_by name this caller (its identity, account or a group of it)? */
static int
selectable(const struct ag_profile *p, const char *identity, const struct passwd *pw)
{
	size_t i;

	for (i = 0; i < p->selectable_by.n; i++) {
		const char *w = p->selectable_by.v[i];

		if (w[0] == '%' ? ag_account_in_group(pw->pw_name, pw->pw_gid, w + 1) :
		    (identity != NULL && strcmp(w, identity) == 0) || strcmp(w, pw->pw_name) == 0)
			return 1;
	}
	return 0;
}

const struct ag_profile *
ag_core_profile(const struct ag_config *cfg, const char *forced, const char *pam_identity,
    const char *pam_profile, const struct passwd *pw, struct ag_err *err)
{
	const struct ag_profile *own, *p;
	struct ag_err why;

	ag_err_clear(&why);
	own = own_profile(cfg, pam_identity, pam_profile, pw, &why);
	if (forced == NULL) {
		if (own == NULL)
			*err = why;
		return own;
	}
	/*
	 * --profile is on the command line of whoever started the gateway:
	 * sshd's ForceCommand, or the agent itself (a gateway it runs outside
	 * the sandbox).  It may name the caller's own profile, or one whose
	 * selectable_by names the caller; never widen what the policy gives.
	 */
	if ((p = ag_config_profile(cfg, forced)) == NULL) {
		ag_err_set(err, "--profile %s: no such profile in %s", forced, cfg->path);
		return NULL;
	}
	if (p == own || selectable(p, pam_identity, pw))
		return p;
	ag_err_set(err, "--profile %s: profile '%s' does not list %s%s%s (account %s) in "
	    "selectable_by, so it cannot be chosen on the gateway's command line (%s)",
	    forced, forced, pam_identity ? "identity '" : "this caller",
	    pam_identity ? pam_identity : "", pam_identity ? "'" : "", pw->pw_name, cfg->path);
	return NULL;
}

int
ag_core_begin(struct ag_core *core, const struct ag_core_params *p, struct ag_err *err)
{
	struct ag_session_origin origin = p->origin;

	memset(core, 0, sizeof(*core));
	core->cfg = p->cfg;
	core->profile = p->profile;
	core->identity = p->identity;
	core->caller = p->profile;
	core->audit = p->audit;
	core->tty = p->tty;
	core->cmd_in = STDIN_FILENO;
	core->standing = p->standing;
	origin.pw = p->pw;
	if (ag_session_init(&core->sess, p->profile, &origin, err) < 0)
		return -1;
	if (!p->decide_only && ag_runner_init(err) < 0) {
		ag_session_free(&core->sess);
		return -1;
	}
	/* read the key now, while nothing of the agent's runs yet */
	if (ag_core_uses_validator(p->profile) && (!p->decide_only || p->ask) &&
	    (core->ask = ag_ask_new(p->profile->validator, p->profile, p->config_from_caller,
	    err)) == NULL) {
		ag_session_free(&core->sess);
		return -1;
	}
	return 0;
}

static void core_sandbox_free(struct ag_core *core);

void
ag_core_end(struct ag_core *core)
{
	ag_core_term_end(core);
	ag_targets_end(core);
	core_sandbox_free(core);
	ag_ask_free(core->ask);
	core->ask = NULL;
	ag_runner_reap_all(0);
	ag_session_free(&core->sess);
	ag_core_approvals_end(core);
}

long
ag_core_line_timeout(const struct ag_core *core)
{
	long t = core->profile->limits.timeout;

	if (core->timeout > 0 && (t <= 0 || core->timeout < t))
		t = core->timeout;
	return t;
}

/* The sandbox and its proxy go together. */
static void
core_sandbox_free(struct ag_core *core)
{
	/* the namespace first: what was connected through the proxy ends */
	ag_sandbox_free(core->sandbox);
	core->sandbox = NULL;
	if (core->egress != NULL) {
		ag_runner_keep_child(ag_egress_pid(core->egress), 0);
		ag_egress_stop(core->egress);
		core->egress = NULL;
	}
}

/*
 * A profile with network.allow: the proxy on the listeners the sandbox
 * made in the session's network namespace.  Without it the commands would
 * have no way out at all, so a proxy that cannot start refuses them.
 */
static int
start_egress(struct ag_core *core, struct ag_err *err)
{
	int lfd[2], n = ag_sandbox_egress_fds(core->sandbox, lfd);

	if (n <= 0)
		return 0;
	if ((core->egress = ag_egress_start(core->cfg, core->profile, core->audit, lfd, n,
	    err)) == NULL)
		return -1;
	ag_runner_keep_child(ag_egress_pid(core->egress), 1);
	return 0;
}

/*
 * Developer tier, /tmp the session's own: TMPDIR and the toolchains'
 * caches beneath it (policy/envsan.c has the list), since the home is
 * root's.  Only names neither env.set nor a command has set, and none the
 * profile's env.deny refuses.  Never with the host's /tmp, where another
 * user could have made the directory first.
 */
static int
tmp_env(struct ag_core *core)
{
	const char *const *e = ag_envsan_tmp_env();
	char name[64];
	size_t i, n;

	if (core->profile->tier != AG_TIER_DEVELOPER || !ag_sandbox_private_tmp(core->sandbox))
		return 0;
	for (i = 0; e[i] != NULL; i++) {
		if ((n = strcspn(e[i], "=")) >= sizeof(name))
			continue;
		memcpy(name, e[i], n);
		name[n] = '\0';
		if (ag_session_getenv(&core->sess, name) != NULL ||
		    ag_envsan_is_dangerous(name, core->profile))
			continue;
		if (ag_session_setenv(&core->sess, name, e[i] + n + 1) < 0)
			return -1;
	}
	return 0;
}

/*
 * The account's login shell is the gateway, and SHELL names it: gdb starts
 * its program and its `shell` commands with $SHELL -c, as do script(1) and
 * an editor's :!, and the gateway cannot run inside the sandbox.  Where
 * every exec is judged anyway (ag_profile_exec_judged), SHELL names the
 * shell that runs the commands.  Elsewhere it stays the gateway, which
 * fails such a program closed.
 */
static int
shell_env(struct ag_core *core)
{
	const char *sh = ag_session_getenv(&core->sess, "SHELL");
	struct stat a, b;

	if (!ag_profile_exec_judged(core->profile) || sh == NULL || stat(sh, &a) < 0 ||
	    stat("/proc/self/exe", &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return 0;
	return ag_session_setenv(&core->sess, "SHELL", core->cfg->gw.runner != NULL ?
	    core->cfg->gw.runner : AG_BASH);
}

int
ag_core_sandbox(struct ag_core *core, struct ag_err *err)
{
	struct ag_session *s = &core->sess;
	const char *note;

	if (core->cfg == NULL)
		return 0;
	if (core->sandbox != NULL &&
	    ag_sandbox_matches(core->sandbox, core->profile, s->home, s->cwd, s->env))
		return ag_sandbox_refresh(core->sandbox, err);
	core_sandbox_free(core);
	if ((core->sandbox = ag_sandbox_prepare(core->cfg, core->profile, core->identity, s->home,
	    s->cwd, s->env, err)) == NULL)
		return -1;
	if (tmp_env(core) < 0 || shell_env(core) < 0) {
		core_sandbox_free(core);
		return ag_err_set(err, "out of memory");
	}
	if (start_egress(core, err) < 0) {
		core_sandbox_free(core);
		return -1;
	}
	if ((note = ag_sandbox_note(core->sandbox)) != NULL && !core->sandbox_noted) {
		struct ag_err e;

		core->sandbox_noted = 1;
		ag_log(LOG_WARNING, "sandbox best_effort: %s", note);
		if (core->audit != NULL && ag_audit_event(core->audit, "sandbox", "best_effort",
		    "allow", note, &e) < 0)
			ag_log(LOG_ERR, "%s", e.msg);
	}
	return 0;
}
