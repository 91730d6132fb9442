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

#include "auth/pamopts.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/http.h"
#include "common/lastgood.h"
#include "common/err.h"
#include "policy/setid.h"
#include "common/strbuf.h"
#include "common/misc.h"
#include "exec/sandbox.h"
#include "policy/netrules.h"

#ifndef AG_SSHD
#define AG_SSHD "/usr/sbin/sshd"
#endif

#define SSHD_OUT_MAX	(1024 * 1024)	/* sshd -T prints a few KiB */
#define SSHD_ERR_MAX	4096
#define SSHD_TIMEOUT_MS	15000
#define MAX_GROUPS	256

struct doctor {
	int	 nchecks;
	int	 nfail;
};

/* The agent user as the kernel would see it. */
struct who {
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 groups[MAX_GROUPS];
	int	 ngroups;
};

/* sshd -T output, one "keyword value" per line (keywords lower case). */
struct sshd_conf {
	char	*text;		/* NUL-separated lines after parsing */
	size_t	 len;
};

/*
 * One check: ok, or a FAIL line that says what was expected (what states
 * the good case) and how to get there.
 */
static void AG_PRINTF(4, 5)
check(struct doctor *d, int ok, const char *what, const char *fixfmt, ...)
{
	va_list ap;

	d->nchecks++;
	if (ok) {
		printf("PASS  %s\n", what);
		return;
	}
	d->nfail++;
	printf("FAIL  expected: %s; fix: ", what);
	va_start(ap, fixfmt);
	vprintf(fixfmt, ap);
	va_end(ap);
	printf("\n");
}

/* A check that failed for a reason stated as such (what says what is wrong). */
static void AG_PRINTF(3, 4)
fail(struct doctor *d, const char *what, const char *fixfmt, ...)
{
	va_list ap;

	d->nchecks++;
	d->nfail++;
	printf("FAIL  %s; fix: ", what);
	va_start(ap, fixfmt);
	vprintf(fixfmt, ap);
	va_end(ap);
	printf("\n");
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

/* ---- sshd -T ---------------------------------------------------------- */

static void
drain(int *fd, struct ag_strbuf *sb, int *over)
{
	char buf[4096];
	ssize_t r = read(*fd, buf, sizeof(buf));

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (ag_strbuf_append(sb, buf, (size_t)r) < 0)
		*over = 1;
}

/* Run sshd -T without a shell; stdout and stderr read with bounds and a deadline. */
static int
sshd_dump(const char *sshd, const char *user, const char *file, struct sshd_conf *out,
    struct ag_err *err)
{
	char spec[512];
	const char *argv[8];
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, status = 0, argc = 0, over = 0, n;
	struct ag_strbuf sout, serr;
	long long t0;
	pid_t pid;

	n = snprintf(spec, sizeof(spec), "user=%s,host=localhost,addr=127.0.0.1", user);
	if (n < 0 || (size_t)n >= sizeof(spec))
		return ag_err_set(err, "user name too long");
	argv[argc++] = sshd;
	argv[argc++] = "-T";
	argv[argc++] = "-C";
	argv[argc++] = spec;
	if (file != NULL) {
		argv[argc++] = "-f";
		argv[argc++] = file;
	}
	argv[argc] = NULL;

	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		ag_err_set(err, "pipe: %s", strerror(errno));
		goto fail_pipes;
	}
	if ((pid = fork()) < 0) {
		ag_err_set(err, "fork: %s", strerror(errno));
		goto fail_pipes;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
			_exit(127);
		/* execv's argv is not const for historical reasons only. */
		execv(sshd, (char *const *)(uintptr_t)argv);
		dprintf(2, "cannot run %s: %s\n", sshd, strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	o[1] = e[1] = -1;
	ag_strbuf_init(&sout, SSHD_OUT_MAX);
	ag_strbuf_init(&serr, SSHD_ERR_MAX);
	t0 = ag_now_ms();
	while (o[0] >= 0 || e[0] >= 0) {
		struct pollfd p[2] = { { .fd = o[0], .events = POLLIN },
				       { .fd = e[0], .events = POLLIN } };
		long left = SSHD_TIMEOUT_MS - (long)(ag_now_ms() - t0);
		int pr;

		if (left <= 0 || over)
			break;
		pr = poll(p, 2, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (o[0] >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&o[0], &sout, &over);
		if (e[0] >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			int eover = 0;

			drain(&e[0], &serr, &eover);	/* excess stderr is dropped */
		}
	}
	if (o[0] >= 0 || e[0] >= 0)
		kill(pid, SIGKILL);
	if (o[0] >= 0)
		close(o[0]);
	if (e[0] >= 0)
		close(e[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (over || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		const char *msg = serr.data != NULL ? serr.data : "";

		ag_err_set(err, "%s -T failed%s %.*s", sshd,
		    over ? " (output too large)" : ":", (int)strcspn(msg, "\n"), msg);
		ag_strbuf_free(&sout);
		ag_strbuf_free(&serr);
		return -1;
	}
	ag_strbuf_free(&serr);
	out->text = ag_strbuf_detach(&sout, &out->len);
	if (out->text == NULL) {
		out->text = strdup("");
		out->len = 0;
		if (out->text == NULL)
			return ag_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < out->len; i++)
		if (out->text[i] == '\n')
			out->text[i] = '\0';
	return 0;

fail_pipes:
	for (n = 0; n < 2; n++) {
		if (o[n] >= 0)
			close(o[n]);
		if (e[n] >= 0)
			close(e[n]);
	}
	return -1;
}

/* The value of the idx-th line for keyword (0-based), or NULL. */
static const char *
sshd_get_nth(const struct sshd_conf *c, const char *kw, int idx)
{
	size_t kl = strlen(kw), i = 0;

	while (i < c->len) {
		const char *line = c->text + i;
		size_t ll = strlen(line);

		if (ll > kl && strncmp(line, kw, kl) == 0 && line[kl] == ' ' && idx-- == 0)
			return line + kl + 1;
		i += ll + 1;
	}
	return NULL;
}

static const char *
sshd_get(const struct sshd_conf *c, const char *kw)
{
	return sshd_get_nth(c, kw, 0);
}

static int
sshd_is(const struct sshd_conf *c, const char *kw, const char *want)
{
	const char *v = sshd_get(c, kw);

	return v != NULL && strcmp(v, want) == 0;
}

static void
check_forcecommand(struct doctor *d, const struct sshd_conf *c, const struct who *w,
    const char *user, char *found, size_t foundlen)
{
	const char *v = sshd_get(c, "forcecommand");
	char prog[PATH_MAX], what[PATH_MAX + 64];
	const char *base;
	struct stat st;
	size_t n;

	if (v == NULL || strcmp(v, "none") == 0) {
		ssize_t r = readlink("/proc/self/exe", prog, sizeof(prog) - 1);

		prog[r > 0 ? r : 0] = '\0';
		fail(d, "ForceCommand is not set for this user",
		    "add 'ForceCommand %s' in a 'Match User %s' block "
		    "(see etc/sshd_config.d/agentgate.conf)",
		    prog[0] != '\0' ? prog : "/usr/bin/agentgate", user);
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
check_subsystems(struct doctor *d, const struct sshd_conf *c)
{
	static const char *const names[] = { "mcp", "agentgate-json" };
	enum { NNAMES = sizeof(names) / sizeof(names[0]) };
	int have[NNAMES] = { 0 }, k;
	const char *v;
	size_t i, n;

	for (k = 0; (v = sshd_get_nth(c, "subsystem", k)) != NULL; k++)
		for (i = 0; i < NNAMES; i++) {
			n = strlen(names[i]);
			if (strncmp(v, names[i], n) == 0 && (v[n] == ' ' || v[n] == '\t'))
				have[i] = 1;
		}
	if (have[0] && have[1]) {
		check(d, 1, "Subsystem mcp and agentgate-json are set (ssh -s HOST mcp reaches "
		    "the gateway)", "-");
		return;
	}
	for (i = 0; i < NNAMES; i++)
		if (!have[i])
			printf("NOTE  no 'Subsystem %s' line: sshd refuses 'ssh -s HOST %s' "
			    "(add it outside any Match block, as etc/sshd_config.d/agentgate.conf "
			    "does)\n", names[i], names[i]);
}

static void
check_forwarding(struct doctor *d, const struct sshd_conf *c)
{
	static const char *const kws[] = { "allowtcpforwarding", "allowstreamlocalforwarding",
	    "x11forwarding", "allowagentforwarding", "permittunnel" };
	static const char *const names[] = { "AllowTcpForwarding", "AllowStreamLocalForwarding",
	    "X11Forwarding", "AllowAgentForwarding", "PermitTunnel" };
	char bad[256] = "";
	size_t i;

	if (sshd_is(c, "disableforwarding", "yes")) {
		check(d, 1, "forwarding is disabled (DisableForwarding yes)", "-");
		return;
	}
	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (sshd_is(c, kws[i], "no"))
			continue;
		if (bad[0] != '\0')
			strncat(bad, ", ", sizeof(bad) - strlen(bad) - 1);
		strncat(bad, names[i], sizeof(bad) - strlen(bad) - 1);
	}
	if (bad[0] == '\0')
		check(d, 1, "forwarding is disabled (each kind set to no)", "-");
	else
		fail(d, "forwarding is allowed, which bypasses the gateway",
		    "set 'DisableForwarding yes' for the agent (now enabled: %s)", bad);
}

static void
check_sshd_simple(struct doctor *d, const struct sshd_conf *c, const char *kw,
    const char *name, const char *want, const char *why)
{
	char what[256];
	const char *v = sshd_get(c, kw);

	if (v != NULL && strcmp(v, want) == 0) {
		snprintf(what, sizeof(what), "%s %s", name, want);
		check(d, 1, what, "-");
		return;
	}
	snprintf(what, sizeof(what), "%s is %s (%s)", name, v != NULL ? v : "unset", why);
	fail(d, what, "set '%s %s' for the agent", name, want);
}

/*
 * fn(type, option, arg) for each option of each pam_agentgate.so line of the
 * PAM service file at path, and of the files it @includes (one level: as
 * Debian's /etc/pam.d/sshd does); option is NULL once per line with none.
 * Stops when fn returns nonzero, and returns that.
 */
static int
each_agentgate_option(const char *path, int depth,
    int (*fn)(const char *type, const char *option, void *arg), void *arg)
{
	char line[1024];
	FILE *fp;
	int rc = 0;

	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (rc == 0 && fgets(line, sizeof(line), fp) != NULL) {
		char *p = line + strspn(line, " \t"), *tok, *save = NULL, *type;
		int module = 0;

		if (strncmp(p, "@include", 8) == 0) {
			char inc[PATH_MAX];

			p += 8 + strspn(p + 8, " \t");
			p[strcspn(p, " \t\n")] = '\0';
			if (depth > 0 || *p == '\0')
				continue;
			snprintf(inc, sizeof(inc), "%s%s", *p == '/' ? "" : "/etc/pam.d/", p);
			rc = each_agentgate_option(inc, 1, fn, arg);
			continue;
		}
		if ((type = strtok_r(p, " \t\n", &save)) == NULL || *type == '#')
			continue;
		while (rc == 0 && (tok = strtok_r(NULL, " \t\n", &save)) != NULL &&
		    *tok != '#') {
			const char *base = strrchr(tok, '/');

			if (module)
				rc = fn(type, tok, arg);
			else if (strcmp(base != NULL ? base + 1 : tok, "pam_agentgate.so") == 0) {
				module = 1;
				rc = fn(type, NULL, arg);
			}
		}
	}
	fclose(fp);
	return rc;
}

static int
is_bind(const char *type, const char *option, void *arg)
{
	(void)arg;
	return (strcmp(type, "session") == 0 || strcmp(type, "-session") == 0) &&
	    option != NULL && strcmp(option, "bind") == 0;
}

/*
 * Which key a connection used reaches the gateway only through sshd's PAM
 * session stack (auth/sshbind.h).  sshd's PAM service is named after the
 * program it was started as.
 */
static void
check_sshd_bind(struct doctor *d, const struct sshd_conf *c, const char *sshd)
{
	char svc[128], path[PATH_MAX], what[PATH_MAX + 64];
	const char *base = strrchr(sshd, '/');
	size_t i;

	check_sshd_simple(d, c, "usepam", "UsePAM", "yes",
	    "sshd's PAM stack is where the key a connection used is recorded");
	snprintf(svc, sizeof(svc), "%s", base != NULL ? base + 1 : sshd);
	for (i = 0; svc[i] != '\0'; i++)
		svc[i] = (char)tolower((unsigned char)svc[i]);
	snprintf(path, sizeof(path), "/etc/pam.d/%s", svc);
	snprintf(what, sizeof(what), "%s records which key each connection used "
	    "(pam_agentgate.so bind)", path);
	check(d, each_agentgate_option(path, 0, is_bind, NULL), what,
	    "add 'session optional pam_agentgate.so bind' to %s, or no key identity "
	    "is ever recognised", path);
}

/* sshd would ask for keyboard-interactive (a token at sshd's own prompt). */
static int
sshd_has_kbdint(const struct sshd_conf *c)
{
	const char *m = sshd_get(c, "authenticationmethods");

	return sshd_is(c, "kbdinteractiveauthentication", "yes") && m != NULL &&
	    strstr(m, "keyboard-interactive") != NULL;
}

/*
 * With identities that have keys, sshd should take its keys from the
 * policy and from nowhere else, or deleting an identity revokes nothing.
 */
static void
check_authkeys(struct doctor *d, const struct sshd_conf *c, const struct ag_config *cfg,
    const char *user)
{
	const char *cmd = sshd_get(c, "authorizedkeyscommand");
	const char *file = sshd_get(c, "authorizedkeysfile");
	size_t i;
	int keys = 0;

	for (i = 0; cfg != NULL && i < cfg->nidentities; i++)
		keys += cfg->identities[i].keys.n > 0;
	if (keys == 0)
		return;
	check(d, cmd != NULL && strstr(cmd, "agentgate authorized-keys") != NULL,
	    "sshd takes the account's keys from the policy (AuthorizedKeysCommand)",
	    "set 'AuthorizedKeysCommand /usr/bin/agentgate authorized-keys %%u' and "
	    "'AuthorizedKeysCommandUser %s' for %s (etc/sshd_config.d/agentgate.conf)",
	    AG_GROUP, user);
	check(d, file != NULL && strcmp(file, "none") == 0,
	    "sshd reads no authorized_keys file for the account",
	    "set 'AuthorizedKeysFile none' for %s: a key left in a file outlives its "
	    "identity (now: %s)", user, file != NULL ? file : "unset");
	/* a token is asked for after sshd let the caller in: an identity with
	 * only a token needs some other way in */
	for (i = 0; cfg != NULL && i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (id->keys.n == 0 && file != NULL && strcmp(file, "none") == 0 &&
		    !sshd_has_kbdint(c))
			printf("NOTE  identity %s has only a token, and sshd lets in only the "
			    "identities' keys: give token agents a key of the account (an "
			    "AuthorizedKeysFile of its own) or keyboard-interactive "
			    "(pam_agentgate(8))\n", id->name);
	}
}

/* AcceptEnv must not let the client set what sshd or the gateway trusts. */
static void
check_acceptenv(struct doctor *d, const struct sshd_conf *c)
{
	static const char *const trusted[] = { "SSH_CONNECTION",
	    "SSH_ORIGINAL_COMMAND", "LD_PRELOAD", "BASH_ENV", "PATH" };
	const char *v;
	char bad[256] = "";
	int i;
	size_t t;

	for (i = 0; (v = sshd_get_nth(c, "acceptenv", i)) != NULL; i++) {
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
		    "accept only 'AcceptEnv AGENTGATE_TOKEN' for the agent (now admitted: %s)",
		    bad);
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
	    "usermod -s %s %s (now '%s'): with another shell, a process of the account can "
	    "take over another identity's session as it starts, and the gateway refuses "
	    "identities", prog, pw->pw_name, sh);
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
static void
describe_last_good(const char *path)
{
	static const char *const modes[] = { "required", "best_effort", "off" };
	struct ag_config *last;
	struct ag_err err;
	const struct ag_audit_conf *a;
	char url[512];

	if ((last = ag_lastgood_load(path, &err)) == NULL) {
		printf("WARN  sessions are refused and their config_error records go to syslog "
		    "only: %s\n", err.msg);
		return;
	}
	a = &last->gw.audit;
	url[0] = '\0';
	if (a->http_url != NULL)
		ag_http_shown_url(a->http_url, url, sizeof(url));
	printf("      sessions are refused; config_error records go to the last good "
	    "policy's audit destinations: %s%s%s%ssyslog\n", a->file ? a->file : "",
	    a->file ? ", " : "", url, url[0] ? ", " : "");
	printf("      (the last good policy had gateway.sandbox: %s)\n",
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
		    "install one at %s (example: etc/agentgate.yaml), or pass --config", path);
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
		printf("WARN  not kept as the last good policy (a config_error would go to "
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
unknown_option(const char *type, const char *option, void *arg)
{
	char *bad = arg;

	(void)type;
	if (option == NULL || ag_pam_option_ok(option))
		return 0;
	snprintf(bad, 256, "%.200s", option);
	return 1;
}

/* Every pam_agentgate.so line's options are ones the module knows: it
 * refuses every login over a typo, and says so only in syslog. */
static void
check_pam_options(struct doctor *d, const char *path)
{
	char bad[256] = "", what[PATH_MAX + 64];

	(void)each_agentgate_option(path, 0, unknown_option, bad);
	snprintf(what, sizeof(what), "every pam_agentgate.so option in %s is known", path);
	check(d, bad[0] == '\0', what, "'%s' is not an option of pam_agentgate.so (see "
	    "pam_agentgate(8)); the module refuses every login until it is fixed", bad);
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
		    "install etc/pam.d/agentgate as %s/%s", dirs[0], service);
		return;
	}
	snprintf(what, sizeof(what), "PAM service %s is present", path);
	check(d, !can_modify(w, &st), what,
	    "the agent can change its own PAM stack: chown root:root %s; chmod 644 %s",
	    path, path);
	check_pam_options(d, path);
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
 * The privilege separation (agentgate(8), SECURITY): the gateway is
 * set-group-ID to AG_GROUP, which alone writes the records and reads the
 * secrets; the agent is not in it.  prog is what ForceCommand runs (NULL:
 * this binary).
 */
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
	} else
		check(d, cfg->gw.audit.has_syslog, cfg->gw.audit.has_syslog ?
		    "audit records go to syslog" : "an audit sink is configured",
		    "set gateway.audit.file (and/or syslog) in the policy");
	if (cfg->gw.audit.spool != NULL)
		layout_dir(d, "audit spool", cfg->gw.audit.spool, g);
	if (cfg->gw.recordings != NULL)
		layout_dir(d, "recordings directory", cfg->gw.recordings, g);
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
	char allowed[1024];
	size_t i;

	if (!ag_net_has_egress(p)) {
		printf("      profile %s: network: none (the session's own loopback only)\n",
		    p->name);
		return;
	}
	printf("      profile %s: network: through the egress proxy to %s\n", p->name,
	    ag_net_allowed_text(p, allowed, sizeof(allowed)));
	for (i = 0; i < p->nnet_allow; i++)
		if (strcmp(p->net_allow[i].host, "*") == 0)
			printf("WARN  profile %s: network rule '%s' reaches any host name on port %d: "
			    "name the hosts (network.allow, network.presets) instead\n", p->name,
			    p->net_allow[i].text, p->net_allow[i].port);
}

static void
warn_setid(const struct ag_rule *r, const char *why, void *arg)
{
	(void)arg;
	printf("WARN  %s allows %s, but %s\n", r->id, r->command, why);
}

/*
 * What the sandbox guarantees for each profile on this kernel, and by what;
 * a guarantee a profile states and nothing here enforces is a failure
 * under `sandbox: required` (every command would be refused) and a
 * warning under best_effort.
 */
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
		printf("      sandbox: unknown, the policy did not load (gateway.sandbox not read)\n");
		return;
	}
	if (cfg->gw.sandbox == AG_SANDBOX_OFF) {
		printf("      sandbox: off (gateway.sandbox), nothing below is enforced\n");
		return;
	}
	ns = userns_ok(w);
	snprintf(what, sizeof(what), "%s can make the sandbox's user namespace", user);
	check(d, ns || cfg->gw.sandbox != AG_SANDBOX_REQUIRED, what,
	    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
	    "on Ubuntu an AppArmor profile with 'userns,' for agentgate; systemd: "
	    "RestrictNamespaces=user mnt pid net)");
	printf("      Landlock ABI %d on this kernel\n", abi);
	for (k = 0; k < cfg->nprofiles; k++) {
		const struct ag_profile *p = &cfg->profiles[k];

		n = ag_sandbox_guarantees(p, abi, g, AG_GUARANTEES_MAX);
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "profile %s: %s (%s)", p->name, g[i].what,
			    g[i].how != NULL ? g[i].how : "not enforced here");
			if (g[i].how == NULL && !g[i].stated) {
				printf("NOTE  %s; needs %s\n", what, g[i].needs);
				continue;
			}
			if (g[i].how == NULL && cfg->gw.sandbox != AG_SANDBOX_REQUIRED) {
				printf("WARN  %s; commands run without it (best_effort); needs %s\n",
				    what, g[i].needs);
				continue;
			}
			check(d, g[i].how != NULL, what, "needs %s; until then every command of "
			    "this profile is refused (gateway.sandbox: required)", g[i].needs);
		}
		describe_network(p);
		(void)ag_setid_rules(cfg, p, warn_setid, NULL);
	}
}

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate doctor [--config FILE] [--user USER] [--sshd PATH] "
	    "[--sshd-config FILE]\n");
}

static int
user_name_ok(const char *u)
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

int
ag_cmd_doctor(int argc, char **argv)
{
	const char *config = AG_DEFAULT_CONFIG, *user = "agent", *sshd = AG_SSHD;
	const char *sshd_config = NULL;
	struct doctor d = { 0, 0 };
	struct sshd_conf sc = { NULL, 0 };
	struct ag_config *cfg;
	struct passwd *pw;
	struct who w;
	struct ag_err err;
	char what[256], prog[PATH_MAX] = "";
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
			config = argv[++i];
		else if (strcmp(a, "--user") == 0)
			user = argv[++i];
		else if (strcmp(a, "--sshd") == 0)
			sshd = argv[++i];
		else if (strcmp(a, "--sshd-config") == 0)
			sshd_config = argv[++i];
		else if (strcmp(a, "--test-landlock-abi") == 0)
			ag_sandbox_set_test_abi(atoi(argv[++i]));	/* for the tests */
		else {
			fprintf(stderr, "agentgate: doctor: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!user_name_ok(user)) {
		fprintf(stderr, "agentgate: doctor: '%s' is not a user name\n", user);
		return 2;
	}
	if ((pw = getpwnam(user)) == NULL) {
		fprintf(stderr, "agentgate: doctor: no user '%s' (use --user)\n", user);
		return 2;
	}
	/* Copy what is needed: later getpw* calls reuse the static buffer. */
	w.uid = pw->pw_uid;
	w.gid = pw->pw_gid;
	w.ngroups = MAX_GROUPS;
	if (getgrouplist(user, pw->pw_gid, w.groups, &w.ngroups) < 0)
		w.ngroups = 0;	/* more than MAX_GROUPS: judge by owner/other only */

	printf("agentgate doctor: user %s, policy %s\n", user, config);
	ag_err_clear(&err);
	if (sshd_dump(sshd, user, sshd_config, &sc, &err) < 0) {
		snprintf(what, sizeof(what), "cannot read sshd's configuration: %.200s", err.msg);
		fail(&d, what, "run the doctor as root; check 'sshd -t'%s%s",
		    sshd_config ? " -f " : "", sshd_config ? sshd_config : "");
	} else {
		check_forcecommand(&d, &sc, &w, user, prog, sizeof(prog));
		check_subsystems(&d, &sc);
		check_forwarding(&d, &sc);
		check_sshd_simple(&d, &sc, "permituserrc", "PermitUserRC", "no",
		    "~/.ssh/rc would run before the gateway");
		check_sshd_bind(&d, &sc, sshd);
		check_sshd_simple(&d, &sc, "permituserenvironment", "PermitUserEnvironment",
		    "no", "~/.ssh/environment could set LD_PRELOAD");
		check_acceptenv(&d, &sc);
	}
	/* getpwnam again: the pointer may have been overwritten meanwhile. */
	if ((pw = getpwnam(user)) != NULL) {
		check_shell(&d, pw, prog[0] != '\0' ? prog : NULL);
		check_dotfiles(&d, pw, &w);
	}
	cfg = check_policy(&d, config, &w);
	if (sc.text != NULL)
		check_authkeys(&d, &sc, cfg, user);
	free(sc.text);
	check_pam(&d, cfg, &w);
	check_layout(&d, cfg, &w, user, prog[0] != '\0' ? prog : NULL);
	check_sandbox(&d, cfg, &w, user);
	ag_config_free(cfg);

	printf("%d checks, %d failed\n", d.nchecks, d.nfail);
	return d.nfail == 0 ? 0 : 1;
}
