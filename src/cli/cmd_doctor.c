/*
 * cmd_doctor.c - `agentgate doctor`: is this host set up so that the
 * gateway really is the only way in for the agent account?
 *
 * It asks sshd for its effective configuration for that user
 * (`sshd -T -C user=...`), looks at the account, its dotfiles, the policy
 * file, the PAM service and the audit path, and prints one line per check:
 * PASS, or FAIL with what to change.  Exit status 0 only when all pass.
 *
 * Everything is judged for the agent user, not for the root running the
 * doctor: rights are computed from stat(2) and the user's groups, never
 * with access(2), which would answer for root.
 */
#include "agconfig.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth/pamconf.h"
#include "auth/pamopts.h"
#include "cli/commands.h"
#include "cli/sshd.h"
#include "common/account.h"
#include "common/config.h"
#include "common/http.h"
#include "common/lastgood.h"
#include "common/rundir.h"
#include "common/err.h"
#include "common/utf8.h"
#include "policy/grantable.h"
#include "policy/policy.h"
#include "record/approvals.h"
#include "policy/setid.h"
#include "common/strbuf.h"
#include "common/misc.h"
#include "common/safepath.h"
#include "exec/sandbox.h"
#include "policy/netrules.h"
#include "record/chain.h"

#define MAX_GROUPS	256

struct doctor {
	int	 nchecks;
	int	 nfail;
	const char *user;
	char	 setup[512];	/* the agentgate setup line that fixes sshd's side */
};

/* The agent user as the kernel would see it. */
struct who {
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 groups[MAX_GROUPS];
	int	 ngroups;
};

/*
 * One line of the report, what may not reach a terminal made visible: a
 * line may quote what the agent could write (a file's name or owner, a
 * policy's text, when the checks find it can), and root reads it.
 */
static void AG_PRINTF(1, 2)
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)ag_utf8_vline(stdout, fmt, ap);
	va_end(ap);
}

/*
 * One check: ok, or a FAIL line that says what was expected (what states
 * the good case) and how to get there.
 */
static void AG_PRINTF(4, 5)
check(struct doctor *d, int ok, const char *what, const char *fixfmt, ...)
{
	char fix[4096];
	va_list ap;

	d->nchecks++;
	if (ok) {
		say("PASS  %s", what);
		return;
	}
	d->nfail++;
	va_start(ap, fixfmt);
	vsnprintf(fix, sizeof(fix), fixfmt, ap);
	va_end(ap);
	say("FAIL  expected: %s; fix: %s", what, fix);
}

/* A check that failed for a reason stated as such (what says what is wrong). */
static void AG_PRINTF(3, 4)
fail(struct doctor *d, const char *what, const char *fixfmt, ...)
{
	char fix[4096];
	va_list ap;

	d->nchecks++;
	d->nfail++;
	va_start(ap, fixfmt);
	vsnprintf(fix, sizeof(fix), fixfmt, ap);
	va_end(ap);
	say("FAIL  %s; fix: %s", what, fix);
}

static int
in_groups(const struct who *w, gid_t g)
{
	int i;

	for (i = 0; i < w->ngroups; i++)
		if (w->groups[i] == g)
			return 1;
	return 0;
}

/* Could the user write to it now, by its mode bits? */
static int
can_write(const struct who *w, const struct stat *st)
{
	if (w->uid == 0)
		return 1;
	if (st->st_uid == w->uid)
		return (st->st_mode & S_IWUSR) != 0;
	if (in_groups(w, st->st_gid))
		return (st->st_mode & S_IWGRP) != 0;
	return (st->st_mode & S_IWOTH) != 0;
}

static int
can_read(const struct who *w, const struct stat *st)
{
	if (w->uid == 0)
		return 1;
	if (st->st_uid == w->uid)
		return (st->st_mode & S_IRUSR) != 0;
	if (in_groups(w, st->st_gid))
		return (st->st_mode & S_IRGRP) != 0;
	return (st->st_mode & S_IROTH) != 0;
}

/* Could the user change it at all?  An owner can always chmod. */
static int
can_modify(const struct who *w, const struct stat *st)
{
	return st->st_uid == w->uid || can_write(w, st);
}

static void
check_forcecommand(struct doctor *d, const struct ag_sshd_conf *c, const struct who *w,
    const char *user, char *found, size_t foundlen)
{
	const char *v = ag_sshd_get(c, "forcecommand");
	char prog[PATH_MAX], what[PATH_MAX + 64];
	const char *base;
	struct stat st;
	size_t n;

	if (v == NULL || strcmp(v, "none") == 0) {
		ssize_t r = readlink("/proc/self/exe", prog, sizeof(prog) - 1);

		prog[r > 0 ? r : 0] = '\0';
		fail(d, "ForceCommand is not set for this user",
		    "run '%s': it writes the 'Match User %s' block with 'ForceCommand %s' and "
		    "the rest of the agent's sshd settings", d->setup, user,
		    prog[0] != '\0' ? prog : "/usr/bin/agentgate");
		return;
	}
	n = strcspn(v, " \t");
	if (n >= sizeof(prog))
		n = sizeof(prog) - 1;
	memcpy(prog, v, n);
	prog[n] = '\0';
	base = strrchr(prog, '/');
	base = base != NULL ? base + 1 : prog;
	if (prog[0] != '/' || strncmp(base, "agentgate", 9) != 0) {
		fail(d, "ForceCommand does not run agentgate",
		    "set 'ForceCommand /absolute/path/to/agentgate' (now: '%s')", v);
		return;
	}
	if (stat(prog, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH)) {
		fail(d, "ForceCommand names a program that is missing or not executable",
		    "install agentgate at %s or correct ForceCommand", prog);
		return;
	}
	snprintf(found, foundlen, "%s", prog);
	snprintf(what, sizeof(what), "ForceCommand runs %s", prog);
	check(d, !can_modify(w, &st), what,
	    "the agent can change %s: chown root:root and chmod 755 it", prog);
}

/*
 * Agents' MCP clients and scripts open subsystems of their own (agentgate(8),
 * AGENT PROTOCOLS), and sshd refuses a subsystem it has no line for,
 * ForceCommand or not.  They are optional: a missing one is a NOTE.
 */
static void
check_subsystems(struct doctor *d, const struct ag_sshd_conf *c)
{
	static const char *const names[] = { "mcp", "agentgate-json" };
	enum { NNAMES = sizeof(names) / sizeof(names[0]) };
	int have[NNAMES];
	size_t i;

	for (i = 0; i < NNAMES; i++)
		have[i] = ag_sshd_has_subsystem(c, names[i]);
	if (have[0] && have[1]) {
		check(d, 1, "Subsystem mcp and agentgate-json are set (ssh -s HOST mcp reaches "
		    "the gateway)", "-");
		return;
	}
	for (i = 0; i < NNAMES; i++)
		if (!have[i])
			say("NOTE  no 'Subsystem %s' line: sshd refuses 'ssh -s HOST %s' "
			    "('%s' adds it outside its Match block)\n", names[i], names[i],
			    d->setup);
}

static void
check_forwarding(struct doctor *d, const struct ag_sshd_conf *c)
{
	static const char *const kws[] = { "allowtcpforwarding", "allowstreamlocalforwarding",
	    "x11forwarding", "allowagentforwarding", "permittunnel" };
	static const char *const names[] = { "AllowTcpForwarding", "AllowStreamLocalForwarding",
	    "X11Forwarding", "AllowAgentForwarding", "PermitTunnel" };
	char bad[256] = "";
	size_t i;

	if (ag_sshd_is(c, "disableforwarding", "yes")) {
		check(d, 1, "forwarding is disabled (DisableForwarding yes)", "-");
		return;
	}
	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (ag_sshd_is(c, kws[i], "no"))
			continue;
		if (bad[0] != '\0')
			strncat(bad, ", ", sizeof(bad) - strlen(bad) - 1);
		strncat(bad, names[i], sizeof(bad) - strlen(bad) - 1);
	}
	if (bad[0] == '\0')
		check(d, 1, "forwarding is disabled (each kind set to no)", "-");
	else
		fail(d, "forwarding is allowed, which bypasses the gateway",
		    "set 'DisableForwarding yes' for the agent, as '%s' does (now enabled: %s)",
		    d->setup, bad);
}

static void
check_sshd_simple(struct doctor *d, const struct ag_sshd_conf *c, const char *kw,
    const char *name, const char *want, const char *why)
{
	char what[256];
	const char *v = ag_sshd_get(c, kw);

	if (v != NULL && strcmp(v, want) == 0) {
		snprintf(what, sizeof(what), "%s %s", name, want);
		check(d, 1, what, "-");
		return;
	}
	snprintf(what, sizeof(what), "%s is %s (%s)", name, v != NULL ? v : "unset", why);
	fail(d, what, "set '%s %s' for the agent, as '%s' does (a line before its "
	    "Include wins)", name, want, d->setup);
}

/*
 * Which key a connection used reaches the gateway only through sshd's PAM
 * session stack (auth/sshbind.h): a bind line, in the service sshd runs
 * (named after the program it was started as), with nothing before it
 * that reads the user's own environment file, which could put a key the
 * connection never used where bind reads sshd's.
 */
static void
check_sshd_bind(struct doctor *d, const struct ag_sshd_conf *c, const char *path,
    const char *sshd)
{
	struct ag_pam_bind b;
	char what[2 * PATH_MAX + 256], service[128], env[512];

	check_sshd_simple(d, c, "usepam", "UsePAM", "yes",
	    "sshd's PAM stack is where the key a connection used is recorded");
	snprintf(what, sizeof(what), "%s records which key each connection used "
	    "(pam_agentgate.so bind)", path);
	(void)ag_pam_find_bind(path, &b);
	check(d, b.top > 0, what,
	    "run '%s' (it adds 'session optional pam_agentgate.so bind' to %s), or no "
	    "key identity is ever recognised", d->setup, path);
	if (b.top == 0)
		return;
	ag_sshd_pam_service(sshd, service, sizeof(service));
	snprintf(what, sizeof(what), "the bind line (%s) is for sshd's PAM service %s",
	    b.where, service);
	check(d, strcmp(b.service, service) == 0, what, "add %s%s to it: bind refuses in "
	    "any service but %s, and sshd runs as %s", AG_PAM_SSHD_SERVICE_OPT, service,
	    b.service, sshd);
	snprintf(what, sizeof(what), "nothing before the bind line of %s reads the user's "
	    "~/.pam_environment", path);
	if (ag_pam_user_env_line(path, b.top, env, sizeof(env)) == 0)
		check(d, 1, what, "-");
	else
		fail(d, "pam_env reads the user's ~/.pam_environment before bind records the "
		    "connection (a key it never used could be recorded)", "move the bind line "
		    "(%s) above '%s', as '%s' does on a new install", b.where, env, d->setup);
}

/* sshd would ask for keyboard-interactive (a token at sshd's own prompt). */
static int
sshd_has_kbdint(const struct ag_sshd_conf *c)
{
	const char *m = ag_sshd_get(c, "authenticationmethods");

	return ag_sshd_is(c, "kbdinteractiveauthentication", "yes") && m != NULL &&
	    strstr(m, "keyboard-interactive") != NULL;
}

/* An AuthorizedKeysFile pattern of sshd's for the account, expanded as sshd does. */
static int
expand_keyfile(const char *pat, size_t len, const struct passwd *pw, char *out, size_t outlen)
{
	struct ag_strbuf sb;
	size_t i;
	int rc = 0;

	ag_strbuf_init(&sb, PATH_MAX);
	if (pat[0] != '/' && pat[0] != '%')
		rc |= ag_strbuf_printf(&sb, "%s/", pw->pw_dir);
	for (i = 0; i < len && rc == 0; i++) {
		if (pat[i] != '%' || i + 1 == len) {
			rc |= ag_strbuf_addch(&sb, pat[i]);
			continue;
		}
		switch (pat[++i]) {
		case '%':
			rc |= ag_strbuf_addch(&sb, '%');
			break;
		case 'h':
			rc |= ag_strbuf_addstr(&sb, pw->pw_dir);
			break;
		case 'u':
			rc |= ag_strbuf_addstr(&sb, pw->pw_name);
			break;
		case 'U':
			rc |= ag_strbuf_printf(&sb, "%lu", (unsigned long)pw->pw_uid);
			break;
		default:
			rc = -1;	/* sshd refuses it too */
		}
	}
	if (rc == 0 && sb.data != NULL && sb.len < outlen)
		memcpy(out, sb.data, sb.len + 1);
	else
		rc = -1;
	ag_strbuf_free(&sb);
	return rc;
}

/* The identity one of whose keys is in the authorized_keys file at path, or NULL. */
static const char *
identity_key_in(const struct ag_config *cfg, const char *path)
{
	char line[20000];
	const char *found = NULL;
	size_t i, k;
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL)
		return NULL;
	while (found == NULL && fgets(line, sizeof(line), fp) != NULL)
		for (i = 0; found == NULL && i < cfg->nidentities; i++)
			for (k = 0; k < cfg->identities[i].keys.n; k++) {
				/* "TYPE BASE64": the base64 names the key */
				const char *key = cfg->identities[i].keys.v[k];
				const char *b64 = strchr(key, ' ');

				if (b64 != NULL && strstr(line, b64 + 1) != NULL) {
					found = cfg->identities[i].name;
					break;
				}
			}
	fclose(fp);
	return found;
}

/*
 * Token agents log in with a key of the account, kept in an
 * AuthorizedKeysFile of the account's own (the drop-in and pam_agentgate(8)
 * say so): safe when the agent cannot change the file, and no identity's
 * key is in it (that key would outlive its identity there).
 */
/* Whether some token identity may log in as user (account.h). */
static int
token_agent_for(const struct ag_config *cfg, const char *user)
{
	size_t i;

	for (i = 0; cfg != NULL && i < cfg->nidentities; i++)
		if ((cfg->identities[i].has_token || cfg->identities[i].has_token_hash) &&
		    !cfg->identities[i].disabled &&
		    ag_identity_allows_account(&cfg->identities[i], user))
			return 1;
	return 0;
}

static void
check_token_keyfile(struct doctor *d, const struct ag_config *cfg, const struct who *w,
    const char *user, const char *files)
{
	char path[PATH_MAX], what[PATH_MAX + 128];
	const struct passwd *pw = getpwnam(user);
	const char *p = files, *who;
	struct ag_err err;
	struct stat st;
	char *real = NULL;
	size_t n;

	while (pw != NULL && *(p += strspn(p, " ")) != '\0') {
		n = strcspn(p, " ");
		if (expand_keyfile(p, n, pw, path, sizeof(path)) < 0) {
			fail(d, "sshd's AuthorizedKeysFile for the account cannot be read here",
			    "'%.*s': use an absolute path such as %s/agentgate/keys/%%u", (int)n, p,
			    AG_SYSCONFDIR);
			return;
		}
		p += n;
		if (lstat(path, &st) < 0 && errno == ENOENT) {
			if (token_agent_for(cfg, user))
				say("NOTE  %s is missing: token agents cannot log in until "
				    "the key of the account they share is there (root's, mode "
				    "0644)\n", path);
			continue;
		}
		snprintf(what, sizeof(what), "the token agents' key file %s is root's, out of "
		    "%s's reach", path, user);
		ag_err_clear(&err);
		if (ag_safe_path(path, 0, &st, &real, &err) < 0) {
			fail(d, what, "%s", err.msg);
			continue;
		}
		free(real);
		real = NULL;
		check(d, !can_modify(w, &st), what, "chown root:root %s; chmod 0644 %s", path,
		    path);
		who = identity_key_in(cfg, path);
		snprintf(what, sizeof(what), "%s holds no identity's key", path);
		check(d, who == NULL, what, "remove identity %s's key from it: a key there "
		    "outlives the identity (the policy is the list of identities' keys)",
		    who != NULL ? who : "-");
	}
}

/*
 * With identities that have keys, sshd should take its keys from the
 * policy and from nowhere else, or deleting an identity revokes nothing;
 * identities with tokens need a key of the account to get that far.
 */
static void
check_authkeys(struct doctor *d, const struct ag_sshd_conf *c, const struct ag_config *cfg,
    const struct who *w, const char *user)
{
	const char *cmd = ag_sshd_get(c, "authorizedkeyscommand");
	const char *file = ag_sshd_get(c, "authorizedkeysfile");
	int none = file != NULL && strcmp(file, "none") == 0;
	size_t i;
	int keys = 0, tokens = 0;

	for (i = 0; cfg != NULL && i < cfg->nidentities; i++) {
		keys += cfg->identities[i].keys.n > 0;
		tokens += cfg->identities[i].has_token || cfg->identities[i].has_token_hash;
	}
	if (keys > 0)
		check(d, cmd != NULL && strstr(cmd, "agentgate authorized-keys") != NULL,
		    "sshd takes the account's keys from the policy (AuthorizedKeysCommand)",
		    "run '%s': it sets 'AuthorizedKeysCommand %s authorized-keys %%u' and "
		    "'AuthorizedKeysCommandUser %s' for %s", d->setup, AG_BINDIR "/agentgate",
		    AG_GROUP, user);
	if (!none && tokens > 0)
		check_token_keyfile(d, cfg, w, user, file != NULL ? file : "");
	else if (keys > 0)
		check(d, none, "sshd reads no authorized_keys file for the account",
		    "set 'AuthorizedKeysFile none' for %s, as '%s' does: a key left in a file "
		    "outlives its identity (now: %s)", user, d->setup,
		    file != NULL ? file : "unset");
	/* a token is asked for after sshd let the caller in: an identity with
	 * only a token needs some other way in */
	for (i = 0; none && cfg != NULL && i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (id->keys.n == 0 && !sshd_has_kbdint(c) &&
		    ag_identity_allows_account(id, user))
			say("NOTE  identity %s has only a token, and sshd lets in only the "
			    "identities' keys: give token agents a key of the account (an "
			    "AuthorizedKeysFile of its own: '%s' sets one when the policy has "
			    "tokens) or keyboard-interactive (pam_agentgate(8))\n", id->name,
			    d->setup);
	}
}

/* A profile the account may be given: by an identity, users: or default_profile. */
static const struct ag_profile *
sftp_profile(const struct ag_config *cfg, const struct who *w, const char *user)
{
	const struct ag_profile *p;
	size_t i;

	for (i = 0; i < cfg->nidentities; i++)
		if ((p = cfg->identities[i].profile) != NULL && p->sftp != AG_TRANSFER_OFF &&
		    ag_identity_allows_account(&cfg->identities[i], user))
			return p;
	for (i = 0; i < cfg->nusers; i++) {
		const struct ag_usermap *u = &cfg->users[i];

		if ((p = u->profile) != NULL && p->sftp != AG_TRANSFER_OFF && (u->is_group ?
		    ag_account_in_group(user, w->gid, u->name) : strcmp(u->name, user) == 0))
			return p;
	}
	p = cfg->gw.default_profile;
	return p != NULL && p->sftp != AG_TRANSFER_OFF ? p : NULL;
}

/*
 * sshd refuses a subsystem it has no line for before ForceCommand runs the
 * gateway: sftp under a profile that allows it (file_transfer.sftp) fails
 * with the client's "subsystem request failed" and no audit record.  As
 * for mcp, a NOTE: nothing is open that should not be.
 */
static void
check_sftp(struct doctor *d, const struct ag_sshd_conf *c, const struct ag_config *cfg,
    const struct who *w, const char *user)
{
	const struct ag_profile *p;
	char what[256];

	if (cfg == NULL || (p = sftp_profile(cfg, w, user)) == NULL)
		return;
	if (ag_sshd_has_subsystem(c, "sftp")) {
		snprintf(what, sizeof(what), "Subsystem sftp is set (profile %s allows sftp)",
		    p->name);
		check(d, 1, what, "-");
	} else
		say("NOTE  profile %s allows sftp (file_transfer.sftp: %s), but sshd has no "
		    "'Subsystem sftp' line: sshd refuses 'sftp %s@HOST' before the gateway runs "
		    "(no audit record); add 'Subsystem sftp internal-sftp' to sshd's "
		    "configuration, outside any Match block\n", p->name,
		    p->sftp == AG_TRANSFER_WRITE ? "write" : "read", user);
}

/* AcceptEnv must not let the client set what sshd or the gateway trusts. */
static void
check_acceptenv(struct doctor *d, const struct ag_sshd_conf *c)
{
	static const char *const trusted[] = { "SSH_CONNECTION",
	    "SSH_ORIGINAL_COMMAND", "LD_PRELOAD", "BASH_ENV", "PATH" };
	const char *v;
	char bad[256] = "";
	int i;
	size_t t;

	for (i = 0; (v = ag_sshd_get_nth(c, "acceptenv", i)) != NULL; i++) {
		for (t = 0; t < sizeof(trusted) / sizeof(trusted[0]); t++) {
			if (fnmatch(v, trusted[t], 0) != 0 || strstr(bad, trusted[t]) != NULL)
				continue;
			if (bad[0] != '\0')
				strncat(bad, ", ", sizeof(bad) - strlen(bad) - 1);
			strncat(bad, trusted[t], sizeof(bad) - strlen(bad) - 1);
		}
	}
	if (bad[0] == '\0')
		check(d, 1, "AcceptEnv admits no variable the gateway trusts", "-");
	else
		fail(d, "AcceptEnv lets the client set trusted variables",
		    "accept only 'AcceptEnv AGENTGATE_TOKEN' for the agent, as '%s' does (now "
		    "admitted: %s)", d->setup, bad);
}

/* ---- the account ------------------------------------------------------ */

/*
 * The gateway must be the account's login shell: sshd then executes it
 * directly from its session process, which is not dumpable, and no shell
 * of the account's ever holds a connection (or AGENTGATE_TOKEN) in which
 * another process of the account could attach or read; the gateway
 * refuses identities otherwise (agentgate(8) SECURITY).
 */
static void
check_shell(struct doctor *d, const struct passwd *pw, const char *prog)
{
	const char *sh = pw->pw_shell != NULL && *pw->pw_shell != '\0' ? pw->pw_shell : "/bin/sh";
	char self[PATH_MAX], what[2 * PATH_MAX + 64];
	struct stat st, gw;

	if (prog == NULL) {
		ssize_t r = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[r > 0 ? r : 0] = '\0';
		prog = self[0] != '\0' ? self : "/usr/bin/agentgate";
	}
	if (stat(sh, &st) == 0 && stat(prog, &gw) == 0 && st.st_dev == gw.st_dev &&
	    st.st_ino == gw.st_ino) {
		snprintf(what, sizeof(what), "the account's login shell is the gateway (%s)", sh);
		check(d, 1, what, "-");
		return;
	}
	fail(d, "the account's login shell is not the gateway",
	    "usermod -s %s %s, or '%s' (now '%s'): with another shell, a process of the "
	    "account can take over another identity's session as it starts, and the "
	    "gateway refuses identities", prog, pw->pw_name, d->setup, sh);
}

static void
check_dotfiles(struct doctor *d, const struct passwd *pw, const struct who *w)
{
	static const char *const files[] = { "", ".bashrc", ".profile", ".bash_profile",
	    ".bash_login", ".bash_logout", ".ssh", ".ssh/rc", ".ssh/authorized_keys",
	    ".ssh/environment",
	    /* Debian's sshd PAM stack reads it (pam_env user_readenv=1): BASH_ENV
	     * there would run before the gateway */
	    ".pam_environment" };
	char bad[1024] = "", path[PATH_MAX];
	struct stat st;
	size_t i;

	if (pw->pw_dir == NULL || pw->pw_dir[0] != '/') {
		fail(d, "the account has no absolute home directory",
		    "give %s a root-owned home directory", pw->pw_name);
		return;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int n = snprintf(path, sizeof(path), "%s%s%s", pw->pw_dir,
		    files[i][0] != '\0' ? "/" : "", files[i]);

		if (n < 0 || (size_t)n >= sizeof(path) || lstat(path, &st) < 0)
			continue;	/* absent: creating it needs the (checked) directory */
		/* A symlink is followed by sshd and bash; judge its target too. */
		if (!can_modify(w, &st) && !(S_ISLNK(st.st_mode) &&
		    stat(path, &st) == 0 && can_modify(w, &st)))
			continue;
		if (bad[0] != '\0')
			strncat(bad, ", ", sizeof(bad) - strlen(bad) - 1);
		strncat(bad, files[i][0] != '\0' ? files[i] : "the home directory",
		    sizeof(bad) - strlen(bad) - 1);
	}
	if (bad[0] == '\0')
		check(d, 1, "the agent cannot change its home directory or dotfiles", "-");
	else
		fail(d, "the agent can change files sshd or bash run before the gateway",
		    "make them owned by root and not writable by %s (chown root:root, "
		    "chmod go-w); give it a separate work directory (now: %s in %s)",
		    pw->pw_name, bad, pw->pw_dir);
}

/* ---- policy, PAM, audit ----------------------------------------------- */

/*
 * The policy does not load: where its config_error records go (lastgood.h),
 * and what the last policy that loaded said of the sandbox, which is not
 * what this one says (no session starts until it loads).
 */
/* path, set aside, was a rebase's (cherry-pick's, am's) state: rebase-merge,
 * rebase-apply or sequencer, NAME.planted or NAME.RANDOM.planted. */
static int
sequencer_state(const char *path)
{
	static const char *const states[] = { "rebase-merge.", "rebase-apply.", "sequencer.",
		NULL };
	const char *base = strrchr(path, '/');
	size_t i;

	for (i = 0; base != NULL && states[i] != NULL; i++)
		if (strncmp(base + 1, states[i], strlen(states[i])) == 0)
			return 1;
	return 0;
}

/*
 * Git repositories a command of the account created with a hook or a
 * config that runs a program in them, and pointers it wrote that git would
 * follow where the gateway cannot protect (the sandbox's scan after each
 * command set those aside as *.planted): the gateway refuses the
 * identity's commands until they are removed.  One file per identity:
 * UID.planted (no identities), UID-NAME.planted.  As of its last command.
 */
static void
planted_file(struct doctor *d, const struct passwd *pw, const char *file)
{
	char path[PATH_MAX], line[PATH_MAX + 2], who[NAME_MAX + 1];
	const char *dash = strchr(file, '-');
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", AG_RUNDIR_SCANS, file);
	if ((f = fopen(path, "re")) == NULL)
		return;
	n = strlen(file) - strlen(".planted");
	if (dash != NULL && (size_t)(dash - file) < n)
		snprintf(who, sizeof(who), "identity %.*s of %s", (int)(n - (size_t)(dash - file) - 1),
		    dash + 1, pw->pw_name);
	else
		snprintf(who, sizeof(who), "%s", pw->pw_name);
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strcspn(line, "\n");
		line[n] = '\0';
		if (line[0] != '/')
			continue;
		if (n > 8 && strcmp(line + n - 8, ".planted") == 0 && sequencer_state(line))
			fail(d, "git repository planted by a command", "%s is a rebase, "
			    "cherry-pick or am in progress that a command made run a program when "
			    "it is continued, set aside whole under this name; the gateway refuses "
			    "%s's commands until it is removed: review it, then delete it", line, who);
		else if (n > 8 && strcmp(line + n - 8, ".planted") == 0)
			fail(d, "git repository planted by a command", "%s is a pointer git would "
			    "follow (a .git file or commondir) that a command wrote where the "
			    "gateway cannot protect what it reaches, set aside under this name; "
			    "the gateway refuses %s's commands until it is removed: review it, "
			    "then delete it", line, who);
		else
			fail(d, "git repository planted by a command", "%s holds a hook or a "
			    "config that runs a program, set aside as *.planted "
			    "(hooks/NAME.planted, config.planted); the gateway refuses %s's "
			    "commands until they are removed: review them, then delete them",
			    line, who);
	}
	fclose(f);
}

static void
check_planted(struct doctor *d, const struct passwd *pw)
{
	char mine[32], prefix[32];
	struct dirent *de;
	DIR *dir;

	snprintf(mine, sizeof(mine), "%lu.planted", (unsigned long)pw->pw_uid);
	snprintf(prefix, sizeof(prefix), "%lu-", (unsigned long)pw->pw_uid);
	if ((dir = opendir(AG_RUNDIR_SCANS)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		size_t n = strlen(de->d_name);

		if (strcmp(de->d_name, mine) == 0 || (strncmp(de->d_name, prefix,
		    strlen(prefix)) == 0 && n > 8 && strcmp(de->d_name + n - 8, ".planted") == 0))
			planted_file(d, pw, de->d_name);
	}
	closedir(dir);
}

static void
describe_last_good(const char *path)
{
	static const char *const modes[] = { "required", "best_effort", "off" };
	struct ag_config *last;
	struct ag_err err;
	const struct ag_audit_conf *a;
	char url[512];

	if ((last = ag_lastgood_load(path, &err)) == NULL) {
		say("WARN  sessions are refused and their config_error records go to syslog "
		    "only: %s\n", err.msg);
		return;
	}
	a = &last->gw.audit;
	url[0] = '\0';
	if (a->http_url != NULL)
		ag_http_shown_url(a->http_url, url, sizeof(url));
	say("      sessions are refused; config_error records go to the last good "
	    "policy's audit destinations: %s%s%s%ssyslog\n", a->file ? a->file : "",
	    a->file ? ", " : "", url, url[0] ? ", " : "");
	say("      (the last good policy had gateway.sandbox: %s)\n",
	    modes[last->gw.sandbox]);
	ag_config_free(last);
}

static struct ag_config *
check_policy(struct doctor *d, const char *path, const struct who *w)
{
	struct ag_err err;
	struct ag_config *cfg;
	struct stat st;
	struct group *gr;
	char buf[AG_ERR_MSG_MAX + 300], what[PATH_MAX + 64];
	size_t i, secrets = 0;

	ag_err_clear(&err);
	if (stat(path, &st) < 0) {
		fail(d, "the policy file is missing",
		    "install one at %s (make install, or 'apt-get install --reinstall -o "
		    "Dpkg::Options::=--force-confmiss agentgate', puts the example policy "
		    "there), or pass --config", path);
		return NULL;
	}
	if (ag_config_check_perms(path, &err) < 0) {
		fail(d, "the policy file or a directory above it is unsafe",
		    "%s (make them owned by root and not group/world-writable)",
		    ag_err_format(&err, buf, sizeof(buf)));
		return NULL;
	}
	if ((cfg = ag_config_load(path, 0, &err)) == NULL) {
		fail(d, "the policy file does not load",
		    "%s (run 'agentgate check --config %s')",
		    ag_err_format(&err, buf, sizeof(buf)), path);
		describe_last_good(path);
		return NULL;
	}
	snprintf(what, sizeof(what), "policy %s is safe and valid", path);
	check(d, 1, what, "-");
	if (ag_lastgood_save(path, &err) < 0)
		say("WARN  not kept as the last good policy (a config_error would go to "
		    "syslog only): %s\n", err.msg);
	if (stat(path, &st) < 0)
		return cfg;
	/*
	 * Keys and token hashes are for the gateway's group: an agent that can
	 * read them can guess a weak token offline.  The gateway reads the
	 * installed policy with its group, so the agent needs no access.
	 */
	gr = getgrnam(AG_GROUP);
	if (can_read(w, &st)) {
		for (i = 0; cfg != NULL && i < cfg->nidentities; i++)
			secrets += cfg->identities[i].keys.n > 0 || cfg->identities[i].has_token ||
			    cfg->identities[i].has_token_hash;
		check(d, secrets == 0, "the agent cannot read the identities' keys and token "
		    "hashes", "chown root:%s %s && chmod 0640 %s (the gateway reads it with "
		    "its group)", AG_GROUP, path, path);
	} else {
		snprintf(what, sizeof(what), "policy %s is readable by group %s, not by the "
		    "agent", path, AG_GROUP);
		check(d, gr != NULL && st.st_gid == gr->gr_gid && (st.st_mode & S_IRGRP), what,
		    "chown root:%s %s && chmod 0640 %s: neither the agent nor the gateway's "
		    "group can read it now", AG_GROUP, path, path);
	}
	return cfg;
}

/* The first option of a pam_agentgate.so line the module does not know. */
static int
unknown_option(const struct ag_pam_line *l, void *arg)
{
	char *bad = arg;
	int i;

	if (!ag_pam_line_is(l, "pam_agentgate.so"))
		return 0;
	for (i = 0; i < l->argc; i++)
		if (!ag_pam_option_ok(l->argv[i])) {
			snprintf(bad, 256, "%.200s", l->argv[i]);
			return 1;
		}
	return 0;
}

/* Every pam_agentgate.so line's options are ones the module knows: it
 * refuses every login over a typo, and says so only in syslog. */
static void
check_pam_options(struct doctor *d, const char *path)
{
	char bad[256] = "", what[PATH_MAX + 64];

	(void)ag_pam_each_line(path, unknown_option, bad);
	snprintf(what, sizeof(what), "every pam_agentgate.so option in %s is known", path);
	check(d, bad[0] == '\0', what, "'%s' is not an option of pam_agentgate.so (see "
	    "pam_agentgate(8)); the module refuses every login until it is fixed", bad);
}

static int
any_bind(const struct ag_pam_line *l, void *arg)
{
	(void)arg;
	return ag_pam_line_is(l, "pam_agentgate.so") && ag_pam_line_has(l, "bind") ?
	    l->top_lineno : 0;
}

/*
 * What the gateway's stack lets through: a caller pam_agentgate.so refuses
 * must be refused, in auth (which agent) and account (may it, now: the
 * identity disabled, expired, from elsewhere).  Not so with the module
 * sufficient or optional, a [...] control that lets a failure pass, a
 * sufficient module (pam_permit, say) or a jump before it, or bind, which
 * is for sshd's stack.  A stack without the module in auth is one of key
 * identities only: account identifies the caller by key (pam_agentgate(8)).
 */
static void
check_pam_stack(struct doctor *d, const char *path)
{
	static const char *const phases[] = { "auth", "account" };
	char why[1024], what[PATH_MAX + 128];
	size_t i;
	int line;

	line = ag_pam_each_line(path, any_bind, NULL);
	snprintf(what, sizeof(what), "no pam_agentgate.so line of %s has bind", path);
	check(d, line == 0, what, "remove 'bind' from line %d: it belongs in sshd's own "
	    "stack only (the module refuses every caller with it here)", line);
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		int rc = ag_pam_refusal_holds(path, phases[i], why, sizeof(why));

		snprintf(what, sizeof(what), "a caller pam_agentgate.so refuses is refused by "
		    "%s (%s%s)", path, phases[i], rc == -2 && i == 0 ? ": no line, account "
		    "identifies by key" : "");
		check(d, rc == 0 || (rc == -2 && i == 0), what,
		    "%s; write '%s required pam_agentgate.so' with no sufficient module, done "
		    "or jump above it, as the shipped /etc/pam.d/agentgate does "
		    "(pam_agentgate(8))", why, phases[i]);
	}
}

static void
check_pam(struct doctor *d, const struct ag_config *cfg, const struct who *w)
{
	const char *service = cfg != NULL && cfg->gw.pam_service != NULL ?
	    cfg->gw.pam_service : "agentgate";
	const char *dirs[2] = { "/etc/pam.d", "/usr/lib/pam.d" };
	char path[PATH_MAX], what[PATH_MAX + 64];
	struct stat st;
	int i, nd = 2, found = -1;

	if (cfg != NULL && cfg->gw.pam_confdir != NULL) {
		dirs[0] = cfg->gw.pam_confdir;
		nd = 1;
	}
	for (i = 0; i < nd && found < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], service);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			found = i;
	}
	if (found < 0) {
		fail(d, "PAM service file is missing (the gateway refuses every session)",
		    "install the gateway's PAM service as %s/%s (make install, or 'apt-get "
		    "install --reinstall -o Dpkg::Options::=--force-confmiss agentgate', puts "
		    "the shipped one at /etc/pam.d/agentgate; pam_agentgate(8))", dirs[0],
		    service);
		return;
	}
	snprintf(what, sizeof(what), "PAM service %s is present", path);
	check(d, !can_modify(w, &st), what,
	    "the agent can change its own PAM stack: chown root:root %s; chmod 644 %s",
	    path, path);
	check_pam_options(d, path);
	check_pam_stack(d, path);
}

/* dir of path into buf; 0, or -1 when path has no directory part. */
static int
dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) : 0;

	if (n == 0 || n >= len)
		return -1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 0;
}

/* A directory where the gateway keeps records: root's, the group's, closed to others. */
static void
layout_dir(struct doctor *d, const char *what, const char *dir, gid_t g)
{
	char line[PATH_MAX + 128];
	struct stat st;
	int ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	    st.st_gid == g && (st.st_mode & 0070) == 0070 && (st.st_mode & 0007) == 0;

	snprintf(line, sizeof(line), "%s %s is root:%s, mode 2770", what, dir, AG_GROUP);
	check(d, ok, line, "install -d -o root -g %s -m 2770 %s", AG_GROUP, dir);
}

/*
 * The audit log and its chain state should be root's, written through the
 * group.  The gateway runs as the agent's account: the files it creates
 * (the first log, the chain state) are that account's, which could then
 * change their mode should it ever reach them past the 2770 directory.
 * Only root can give them to root; logrotate's create does for each later
 * log.  A WARN: the directory keeps the account out.
 */
static void
check_audit_owner(struct doctor *d, const char *file)
{
	char chain[PATH_MAX], what[2 * PATH_MAX + 64], bad[2 * PATH_MAX + 2] = "";
	const char *owner = NULL;
	const struct passwd *pw;
	struct stat st;
	uid_t uid = 0;

	if (stat(file, &st) < 0)
		return;		/* the first session makes it */
	if (st.st_uid != 0) {
		snprintf(bad, sizeof(bad), "%s", file);
		uid = st.st_uid;
	}
	if (ag_chain_state_path(file, chain, sizeof(chain)) == 0 && stat(chain, &st) == 0 &&
	    st.st_uid != 0) {
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s", bad[0] ? " " : "",
		    chain);
		if (uid == 0)
			uid = st.st_uid;
	}
	if (bad[0] == '\0') {
		snprintf(what, sizeof(what), "audit file %s and its chain state are root's", file);
		check(d, 1, what, "-");
		return;
	}
	if ((pw = getpwuid(uid)) != NULL)
		owner = pw->pw_name;
	say("WARN  %s %s owned by %s%s%ld%s, not root: the gateway created %s as the "
	    "account it ran for (it writes through group %s); that account could change "
	    "%s mode if it reached %s; fix: chown root %s\n", bad,
	    strchr(bad, ' ') != NULL ? "are" : "is", owner != NULL ? owner : "",
	    owner != NULL ? " (uid " : "uid ", (long)uid, owner != NULL ? ")" : "",
	    strchr(bad, ' ') != NULL ? "them" : "it", AG_GROUP,
	    strchr(bad, ' ') != NULL ? "their" : "its",
	    strchr(bad, ' ') != NULL ? "them" : "it", bad);
}

/*
 * The privilege separation (agentgate(8), SECURITY): the gateway is
 * set-group-ID to AG_GROUP, which alone writes the records and reads the
 * secrets; the agent is not in it.  prog is what ForceCommand runs (NULL:
 * this binary).
 */
struct audit_fs {
	const char	*profile;
	const char	*log;
	long long	 min_free;
};

static void
warn_audit_fs(const struct ag_pos *pos, const char *what, void *arg)
{
	const struct audit_fs *a = arg;

	(void)pos;
	say("WARN  profiles.%s.%s is on the file system of the audit log %s: a session "
	    "can fill it, and then every account's commands are refused until space is "
	    "freed (%s); give the log a file system of its own\n", a->profile, what, a->log,
	    a->min_free > 0 ? "audit.min_free keeps room for the records that follow" :
	    "audit.min_free is 0: not even the refusals are recorded");
}

/*
 * A full file system under the audit log refuses every account: said when
 * what an agent may write (its write roots, the persistent /tmp) is on it.
 */
static void
check_audit_space(const struct ag_config *cfg)
{
	struct audit_fs a = { NULL, cfg->gw.audit.file, cfg->gw.audit.min_free };
	char dir[PATH_MAX];
	struct stat st, t;
	size_t i;

	if (a.log == NULL || dir_of(a.log, dir, sizeof(dir)) < 0 || stat(dir, &st) < 0)
		return;
	for (i = 0; i < cfg->nprofiles; i++) {
		a.profile = cfg->profiles[i].name;
		(void)ag_paths_write_on(cfg, &cfg->profiles[i], st.st_dev, warn_audit_fs, &a);
		if (cfg->gw.sandbox != AG_SANDBOX_OFF &&
		    ag_profile_tmp_persistent(&cfg->profiles[i]) &&
		    stat(ag_sandbox_tmp_base(), &t) == 0 && t.st_dev == st.st_dev) {
			const struct ag_profile *p = &cfg->profiles[i];
			char what[PATH_MAX + 128];

			/* bounded per identity, not as a whole */
			snprintf(what, sizeof(what), "tmp (persistent, %s, up to %lld MiB an "
			    "identity: limits.tmp_disk)", ag_sandbox_tmp_base(),
			    (p->limits.tmp_disk > 0 ? p->limits.tmp_disk : AG_TMP_DISK_DEFAULT) >> 20);
			warn_audit_fs(NULL, what, &a);
		}
	}
}

/*
 * The accounts of the gateway: user, and those whose login shell it is
 * (what setup makes).  When the policy serves more than one, an identity
 * without accounts: opens each of them: the admin is told which line
 * would tie it to its own.
 */
#define MAX_GW_ACCOUNTS	64

static void
check_identities(const struct ag_config *cfg, const char *user, const char *prog)
{
	char *names[MAX_GW_ACCOUNTS], list[256] = "";
	const char *more[MAX_GW_ACCOUNTS];
	struct passwd *pw;
	size_t n = 0, i;

	if (cfg == NULL || cfg->nidentities == 0)
		return;
	more[n++] = user;
	setpwent();
	while (prog != NULL && n < MAX_GW_ACCOUNTS && (pw = getpwent()) != NULL)
		if (pw->pw_shell != NULL && strcmp(pw->pw_shell, prog) == 0 &&
		    strcmp(pw->pw_name, user) != 0 && (names[n] = strdup(pw->pw_name)) != NULL) {
			more[n] = names[n];
			n++;
		}
	endpwent();
	for (i = 0; i < n; i++)
		if (strlen(list) + strlen(more[i]) + 3 < sizeof(list))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			    i ? ", " : "", more[i]);
	for (i = 0; ag_policy_shared(cfg, more, n) && i < cfg->nidentities; i++)
		if (cfg->identities[i].accounts.n == 0)
			say("WARN  identity %s has no accounts:, so it may log in as every "
			    "account of the gateway (%s%s); in %s, add under it: accounts: "
			    "[ACCOUNT]\n", cfg->identities[i].name, list,
			    n > 1 ? "" : ", and those the policy names", cfg->path);
	for (i = 1; i < n; i++)
		free(names[i]);
}

static void
check_layout(struct doctor *d, const struct ag_config *cfg, const struct who *w,
    const char *user, const char *prog)
{
	char self[PATH_MAX], dir[PATH_MAX], line[PATH_MAX + 128];
	const struct group *gr = getgrnam(AG_GROUP);
	struct stat st;
	gid_t g;
	size_t i;

	if (gr == NULL) {
		fail(d, "group " AG_GROUP " exists",
		    "groupadd --system %s (make install does this)", AG_GROUP);
		return;
	}
	g = gr->gr_gid;
	snprintf(line, sizeof(line), "%s is not in group %s", user, AG_GROUP);
	check(d, !in_groups(w, g), line, "gpasswd -d %s %s (a member writes the audit log "
	    "and reads the secrets itself)", user, AG_GROUP);
	if (prog == NULL) {
		ssize_t r = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[r > 0 ? r : 0] = '\0';
		prog = self;
	}
	snprintf(line, sizeof(line), "%s is set-group-ID %s, owned by root", prog, AG_GROUP);
	check(d, stat(prog, &st) == 0 && st.st_uid == 0 && st.st_gid == g &&
	    (st.st_mode & S_ISGID) && !(st.st_mode & S_ISUID) && !(st.st_mode & 0022), line,
	    "chown root:%s %s; chmod 2755 %s (without it the agent's uid owns its audit "
	    "log)", AG_GROUP, prog, prog);
	if (cfg == NULL)
		return;
	if (cfg->gw.audit.file != NULL) {
		if (dir_of(cfg->gw.audit.file, dir, sizeof(dir)) < 0)
			fail(d, "audit file is an absolute path", "set an absolute "
			    "gateway.audit.file");
		else
			layout_dir(d, "audit directory", dir, g);
		if (stat(cfg->gw.audit.file, &st) == 0) {
			snprintf(line, sizeof(line), "audit file %s is group %s, mode 0660",
			    cfg->gw.audit.file, AG_GROUP);
			check(d, S_ISREG(st.st_mode) && st.st_gid == g &&
			    (st.st_mode & 0060) == 0060 && !(st.st_mode & 0007), line,
			    "chgrp %s %s; chmod 0660 %s", AG_GROUP, cfg->gw.audit.file,
			    cfg->gw.audit.file);
		}
		check_audit_owner(d, cfg->gw.audit.file);
	} else
		check(d, cfg->gw.audit.has_syslog, cfg->gw.audit.has_syslog ?
		    "audit records go to syslog" : "an audit sink is configured",
		    "set gateway.audit.file (and/or syslog) in the policy");
	check_audit_space(cfg);
	if (cfg->gw.audit.spool != NULL)
		layout_dir(d, "audit spool", cfg->gw.audit.spool, g);
	if (cfg->gw.recordings != NULL)
		layout_dir(d, "recordings directory", cfg->gw.recordings, g);
	for (i = 0; i < cfg->nprofiles && !ag_profile_tmp_persistent(&cfg->profiles[i]); i++)
		;
	if (i < cfg->nprofiles) {
		const char *t = ag_sandbox_tmp_base();

		/* without it sessions still run, each with a /tmp of its own:
		 * said, not failed */
		snprintf(line, sizeof(line), "persistent /tmp directory %s (profile %s) is "
		    "root:%s, mode 1770", t, cfg->profiles[i].name, AG_GROUP);
		if (lstat(t, &st) < 0)
			say("NOTE  %s is missing: each session's /tmp is a tmpfs of its own, "
			    "gone when it ends; to keep it per identity: install -d -o root -g %s "
			    "-m 1770 %s\n", t, AG_GROUP, t);
		else if (S_ISDIR(st.st_mode) && st.st_uid == 0 && st.st_gid == g &&
		    (st.st_mode & 01777) == 01770)
			check(d, 1, line, "-");
		else
			say("WARN  %s is not root:%s, mode 1770: not used, each session's /tmp "
			    "is a tmpfs of its own; fix: chown root:%s %s; chmod 1770 %s\n", t,
			    AG_GROUP, AG_GROUP, t, t);
	}
	for (i = 0; i < cfg->nprofiles; i++) {
		const struct ag_validator *v = cfg->profiles[i].validator;

		if (v == NULL || v->api_key_file == NULL)
			continue;
		snprintf(line, sizeof(line), "validator key %s is root:%s, mode 0640, "
		    "unreadable by %s", v->api_key_file, AG_GROUP, user);
		check(d, stat(v->api_key_file, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == 0 && st.st_gid == g && !(st.st_mode & 0027) && !can_read(w, &st),
		    line, "chown root:%s %s; chmod 0640 %s", AG_GROUP, v->api_key_file,
		    v->api_key_file);
	}
	/* bastion mode: the keys the gateway logs in to upstreams with, and the
	 * host keys it trusts there */
	for (i = 0; i < cfg->nupstreams; i++) {
		const struct ag_upstream *u = &cfg->upstreams[i];

		snprintf(line, sizeof(line), "upstream %s: key %s is root:%s, mode 0640, "
		    "unreadable by %s", u->name, u->key, AG_GROUP, user);
		check(d, stat(u->key, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
		    st.st_gid == g && !(st.st_mode & 0027) && !can_read(w, &st), line,
		    "chown root:%s %s; chmod 0640 %s", AG_GROUP, u->key, u->key);
		snprintf(line, sizeof(line), "upstream %s: pinned host keys %s exist, root's, "
		    "not writable by %s", u->name, u->known_hosts, user);
		check(d, stat(u->known_hosts, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    st.st_uid == 0 && !(st.st_mode & 0022) && !can_write(w, &st), line,
		    "ssh-keyscan -p %ld %s > %s (then check the fingerprints); chown root %s; "
		    "chmod 0644 %s", u->port, u->host, u->known_hosts, u->known_hosts,
		    u->known_hosts);
	}
}

/* 1 when the account can make a user namespace (the sandbox's, below). */
static int
userns_ok(const struct who *w)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(w->gid) < 0 || setuid(w->uid) < 0)
			_exit(2);
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	}
	if (pid < 0)
		return 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* What a profile's commands may reach, in the words `explain --host` uses. */
static void
describe_network(const struct ag_profile *p)
{
	char allowed[1024], sockets[1024] = "";
	size_t i, len;

	/* what sockconnect.c connects: the session's own, network.unix's, and
	 * what paths.read names beneath /run */
	len = 0;
	for (i = 0; i < p->net_unix.n + p->paths_read.n; i++) {
		const char *u = i < p->net_unix.n ? p->net_unix.v[i] :
		    p->paths_read.v[i - p->net_unix.n];
		int w;

		if (i >= p->net_unix.n && strncmp(u, "/run/", 5) != 0)
			continue;
		w = snprintf(sockets + len, sizeof(sockets) - len, " and %s", u);
		if (w < 0 || (size_t)w >= sizeof(sockets) - len) {
			snprintf(sockets + (len > sizeof(sockets) - 8 ? sizeof(sockets) - 8 : len),
			    8, " ...");
			break;
		}
		len += (size_t)w;
	}
	say("      profile %s: UNIX sockets: the session's own (its /tmp, the write roots)%s\n",
	    p->name, sockets);
	if (!ag_net_has_egress(p)) {
		say("      profile %s: network: none (the session's own loopback only)\n",
		    p->name);
		return;
	}
	say("      profile %s: network: through the egress proxy to %s\n", p->name,
	    ag_net_allowed_text(p, allowed, sizeof(allowed)));
	for (i = 0; i < p->nnet_allow; i++)
		if (strcmp(p->net_allow[i].host, "*") == 0)
			say("WARN  profile %s: network rule '%s' reaches any host name on port %d: "
			    "name the hosts (network.allow, network.presets) instead\n", p->name,
			    p->net_allow[i].text, p->net_allow[i].port);
}

static void
warn_setid(const struct ag_rule *r, const char *why, void *arg)
{
	(void)arg;
	say("WARN  %s allows %s, but %s\n", r->id, r->command, why);
}

static void
warn_missing(const struct ag_pos *pos, const char *why, void *arg)
{
	(void)pos;
	say("WARN  profiles.%s.%s\n", (const char *)arg, why);
}

/*
 * What the sandbox guarantees for each profile on this kernel, and by what;
 * a guarantee a profile states and nothing here enforces is a failure
 * under `sandbox: required` (every command would be refused) and a
 * warning under best_effort.
 */
/*
 * A profile in rollout runs what its rules would refuse: not a fault, but
 * nothing an admin should forget, and with the sandbox off it cannot work
 * (such lines are refused: nothing would hold them).
 */
static void
check_rollout(const struct ag_config *cfg)
{
	size_t i, k, n;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct ag_profile *p = &cfg->profiles[i];

		if (!ag_profile_in_rollout(p))
			continue;
		for (k = n = 0; k < p->nallow + p->ndeny; k++)
			n += (k < p->nallow ? p->allow[k].enforce :
			    p->deny[k - p->nallow].enforce) == AG_ENFORCE_AUDIT;
		if (p->enforce == AG_ENFORCE_AUDIT)
			say("WARN  profile %s is in rollout (enforce: audit): lines its rules "
			    "would refuse run under the sandbox and are recorded as would_deny "
			    "(agentgate audit show --decision would_deny); remove enforce when "
			    "the rules are right%s\n", p->name, cfg->gw.sandbox == AG_SANDBOX_OFF ?
			    "; with gateway.sandbox: off they are refused instead" : "");
		else
			say("WARN  profile %s: %zu rule(s) in rollout (enforce: audit): what they "
			    "refuse runs and is recorded as would_deny%s\n", p->name, n,
			    cfg->gw.sandbox == AG_SANDBOX_OFF ?
			    "; with gateway.sandbox: off it is refused instead" : "");
	}
}

/*
 * Lines that wait for a person need somewhere to file their requests: the
 * group's directory, made at each login by pam_agentgate.so bind (and by
 * serve), which a set-group-ID gateway writes (the layout check above).
 */
static void
check_approvals(const struct ag_config *cfg)
{
	struct stat st;
	char who[512];
	size_t i;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct ag_profile *p = &cfg->profiles[i];

		if (!ag_profile_has_approvals(p))
			continue;
		ag_approval_approvers_text(ag_profile_approvers(cfg, p), who, sizeof(who));
		if (stat(AG_APPROVALS_DIR, &st) < 0 || !S_ISDIR(st.st_mode))
			say("WARN  profile %s has lines that wait for approval (by %s), and %s "
			    "is not there yet: it is made at the next login through sshd's "
			    "pam_agentgate.so bind (or by serve); until then such lines are "
			    "refused\n", p->name, who, AG_APPROVALS_DIR);
		else
			say("NOTE  profile %s: lines that meet an approve rule wait up to %ld s "
			    "for %s (agentgate approvals)\n", p->name, ag_approvals_timeout(cfg),
			    who);
	}
}

static void
check_sandbox(struct doctor *d, const struct ag_config *cfg, const struct who *w,
    const char *user)
{
	struct ag_guarantee g[AG_GUARANTEES_MAX];
	char what[512];
	int abi = ag_sandbox_abi(), ns;
	size_t i, k, n;

	if (cfg == NULL) {
		/* not "off": the file may well say required */
		say("      sandbox: unknown, the policy did not load (gateway.sandbox not read)\n");
		return;
	}
	if (cfg->gw.sandbox == AG_SANDBOX_OFF) {
		say("      sandbox: off (gateway.sandbox), nothing below is enforced\n");
		if ((n = ag_account_principals(cfg, user)) >= 2)
			say("WARN  account %s is shared by %zu callers (identities, and those "
			    "without one) with the sandbox off: each one's commands can trace, "
			    "read and act within every other's (agentgate(8) SECURITY); give "
			    "each its own account, or turn the sandbox on\n", user, n);
		/* a refused wrapper is dead whatever the sandbox (set-ID
		 * programs are not disarmed with it off) */
		for (i = 0; i < cfg->nprofiles; i++)
			(void)ag_setid_rules(cfg, &cfg->profiles[i], warn_setid, NULL);
		return;
	}
	ns = userns_ok(w);
	snprintf(what, sizeof(what), "%s can make the sandbox's user namespace", user);
	check(d, ns || cfg->gw.sandbox != AG_SANDBOX_REQUIRED, what,
	    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
	    "on Ubuntu an AppArmor profile with 'userns,' for agentgate; systemd: "
	    "RestrictNamespaces=user mnt pid net)");
	say("      Landlock ABI %d on this kernel\n", abi);
	for (k = 0; k < cfg->nprofiles; k++) {
		const struct ag_profile *p = &cfg->profiles[k];

		n = ag_sandbox_guarantees(p, abi, g, AG_GUARANTEES_MAX);
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "profile %s: %s (%s)", p->name, g[i].what,
			    g[i].how != NULL ? g[i].how : "not enforced here");
			if (g[i].how == NULL && !g[i].stated) {
				say("NOTE  %s; needs %s\n", what, g[i].needs);
				continue;
			}
			if (g[i].how == NULL && cfg->gw.sandbox != AG_SANDBOX_REQUIRED) {
				say("WARN  %s; commands run without it (best_effort); needs %s\n",
				    what, g[i].needs);
				continue;
			}
			check(d, g[i].how != NULL, what, "needs %s; until then every command of "
			    "this profile is refused (gateway.sandbox: required)", g[i].needs);
		}
		describe_network(p);
		(void)ag_setid_rules(cfg, p, warn_setid, NULL);
		(void)ag_paths_missing(cfg, p, warn_missing, (void *)p->name);
	}
}

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate doctor [--config FILE] [--user USER] [--sshd PATH] "
	    "[--sshd-config FILE] [--pam-file FILE]\n");
}

int
ag_account_name_ok(const char *u)
{
	size_t i, n = strlen(u);

	if (n == 0 || n > 64 || u[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' && u[i] <= 'Z') ||
		    (u[i] >= '0' && u[i] <= '9') || u[i] == '_' || u[i] == '-' ||
		    u[i] == '.' || (u[i] == '$' && i == n - 1)))
			return 0;
	return 1;
}

/* The options naming other files than the defaults, for a command line shown to the admin. */
static void
setup_line(struct doctor *d, const struct ag_doctor_opts *o)
{
	snprintf(d->setup, sizeof(d->setup), "agentgate setup --user %s%s%s%s%s%s%s",
	    o->user, strcmp(o->config, AG_DEFAULT_CONFIG) != 0 ? " --config " : "",
	    strcmp(o->config, AG_DEFAULT_CONFIG) != 0 ? o->config : "",
	    strcmp(o->sshd, AG_SSHD) != 0 ? " --sshd " : "",
	    strcmp(o->sshd, AG_SSHD) != 0 ? o->sshd : "",
	    o->sshd_config != NULL ? " --sshd-config " : "",
	    o->sshd_config != NULL ? o->sshd_config : "");
}

int
ag_doctor_run(const struct ag_doctor_opts *o)
{
	const char *user = o->user;
	struct doctor d = { 0, 0, user, "" };
	struct ag_sshd_conf sc = { NULL, 0 };
	struct ag_config *cfg;
	struct passwd *pw;
	struct who w;
	struct ag_err err;
	char what[256], prog[PATH_MAX] = "", pampath[PATH_MAX];

	if (!ag_account_name_ok(user)) {
		fprintf(stderr, "agentgate: doctor: '%s' is not a user name\n", user);
		return 2;
	}
	if ((pw = getpwnam(user)) == NULL) {
		fprintf(stderr, "agentgate: doctor: no user '%s' (use --user)\n", user);
		return 2;
	}
	setup_line(&d, o);
	/* Copy what is needed: later getpw* calls reuse the static buffer. */
	w.uid = pw->pw_uid;
	w.gid = pw->pw_gid;
	w.ngroups = MAX_GROUPS;
	if (getgrouplist(user, pw->pw_gid, w.groups, &w.ngroups) < 0)
		w.ngroups = 0;	/* more than MAX_GROUPS: judge by owner/other only */
	if (o->pam_file != NULL)
		snprintf(pampath, sizeof(pampath), "%s", o->pam_file);
	else
		ag_sshd_pam_path(o->sshd, pampath, sizeof(pampath));

	say("agentgate doctor: user %s, policy %s\n", user, o->config);
	ag_err_clear(&err);
	if (ag_sshd_dump(o->sshd, user, o->sshd_config, &sc, &err) < 0) {
		snprintf(what, sizeof(what), "cannot read sshd's configuration: %.200s", err.msg);
		fail(&d, what, "run the doctor as root; check 'sshd -t'%s%s",
		    o->sshd_config ? " -f " : "", o->sshd_config ? o->sshd_config : "");
	} else {
		check_forcecommand(&d, &sc, &w, user, prog, sizeof(prog));
		check_subsystems(&d, &sc);
		check_forwarding(&d, &sc);
		check_sshd_simple(&d, &sc, "permituserrc", "PermitUserRC", "no",
		    "~/.ssh/rc would run before the gateway");
		check_sshd_bind(&d, &sc, pampath, o->sshd);
		check_sshd_simple(&d, &sc, "permituserenvironment", "PermitUserEnvironment",
		    "no", "~/.ssh/environment could set LD_PRELOAD");
		check_acceptenv(&d, &sc);
	}
	/* getpwnam again: the pointer may have been overwritten meanwhile. */
	if ((pw = getpwnam(user)) != NULL) {
		check_shell(&d, pw, prog[0] != '\0' ? prog : NULL);
		check_dotfiles(&d, pw, &w);
		check_planted(&d, pw);
	}
	cfg = check_policy(&d, o->config, &w);
	if (sc.text != NULL) {
		check_authkeys(&d, &sc, cfg, &w, user);
		check_sftp(&d, &sc, cfg, &w, user);
	}
	ag_sshd_conf_free(&sc);
	check_pam(&d, cfg, &w);
	check_identities(cfg, user, prog[0] != '\0' ? prog : NULL);
	check_layout(&d, cfg, &w, user, prog[0] != '\0' ? prog : NULL);
	check_sandbox(&d, cfg, &w, user);
	if (cfg != NULL) {
		check_rollout(cfg);
		check_approvals(cfg);
	}
	ag_config_free(cfg);

	say("%d checks, %d failed\n", d.nchecks, d.nfail);
	return d.nfail == 0 ? 0 : 1;
}

int
ag_cmd_doctor(int argc, char **argv)
{
	struct ag_doctor_opts o = { AG_DEFAULT_CONFIG, "agent", AG_SSHD, NULL, NULL };
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		if (strcmp(a, "--config") == 0)
			o.config = argv[++i];
		else if (strcmp(a, "--user") == 0)
			o.user = argv[++i];
		else if (strcmp(a, "--sshd") == 0)
			o.sshd = argv[++i];
		else if (strcmp(a, "--sshd-config") == 0)
			o.sshd_config = argv[++i];
		else if (strcmp(a, "--pam-file") == 0)
			o.pam_file = argv[++i];
		else if (strcmp(a, "--test-landlock-abi") == 0)
			ag_sandbox_set_test_abi(atoi(argv[++i]));	/* for the tests */
		else {
			fprintf(stderr, "agentgate: doctor: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	return ag_doctor_run(&o);
}
