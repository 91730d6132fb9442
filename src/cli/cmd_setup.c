/*
 * cmd_setup.c - `agentgate setup --user NAME | --group NAME`: give an
 * existing account (or every account of a group) to agents, the way
 * agentgate(8) SECURITY and `agentgate doctor` want it:
 *
 *   1. sshd's drop-in sshd_config.d/agentgate-NAME.conf, written from the
 *      drop-in the package ships (compiled in, one text) with the Match
 *      line for the account and what the policy's identities need, then
 *      checked with sshd -t (a drop-in sshd refuses is taken back);
 *   2. "session optional pam_agentgate.so bind" in sshd's PAM service, above
 *      any pam_env line that reads ~/.pam_environment;
 *   3. the gateway as the login shell, and in /etc/shells;
 *   4. whether the policy gives the account a profile (it is never
 *      edited here: the lines to add are printed);
 *   5. every check of `agentgate doctor`.
 *
 * Each step says what it found and what it did; a second run finds
 * everything done and changes nothing.  Accounts are never created.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth/pamconf.h"
#include "auth/pamopts.h"
#include "cli/commands.h"
#include "cli/sshd.h"
#include "common/account.h"
#include "common/config.h"
#include "common/err.h"
#include "common/misc.h"
#include "common/strbuf.h"

#define FILE_MAX	(1024 * 1024)	/* sshd's and PAM's files are a few KiB */
#define MAX_MEMBERS	256

/* etc/sshd_config.d/agentgate.conf, as the package ships it (src/Makefile.am) */
static const char dropin_template[] =
#include "cli/sshd_dropin.inc"
    ;

static const char *const subsystems[] = { "mcp", "agentgate-json" };
#define NSUB	(sizeof(subsystems) / sizeof(subsystems[0]))

struct setup {
	const char	*user;		/* --user, or NULL */
	const char	*group;		/* --group, or NULL */
	const char	*name;		/* whichever it is */
	struct ag_doctor_opts doc;	/* config, sshd, sshd_config, pam_file */
	const char	*dir;		/* sshd_config.d */
	const char	*shells;
	const char	*token_keys;	/* AuthorizedKeysFile for token agents */
	int		 dry_run;
	int		 reload;
	char		 gateway[PATH_MAX];
	char		 pam_path[PATH_MAX];
	char		 dropin[PATH_MAX];
	int		 keys, tokens;	/* identities with keys in the policy; with a
				 * token, that may log in as the accounts */
	int		 alltokens;	/* identities with a token, in the policy */
	char		*members[MAX_MEMBERS];	/* the accounts set up */
	int		 nmembers;
	int		 nchanged;
	int		 dropin_changed;
};

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate setup --user NAME | --group NAME [--config FILE]\n"
	    "                       [--sshd PATH] [--sshd-config FILE] [--sshd-config-dir DIR]\n"
	    "                       [--pam-file FILE] [--shells FILE] [--token-keys PATTERN]\n"
	    "                       [--dry-run] [--reload]\n"
	    "\n"
	    "Give an existing account (or each account of a group) to agents: write\n"
	    "sshd's drop-in DIR/agentgate-NAME.conf (checked with sshd -t), add\n"
	    "pam_agentgate.so bind to sshd's PAM service, make the gateway the login\n"
	    "shell, say what the policy still lacks, and run agentgate doctor.  A\n"
	    "second run changes nothing.  Root only.\n"
	    "\n"
	    "  --user NAME            the account (Match User NAME)\n"
	    "  --group NAME           the accounts of a group (Match Group NAME)\n"
	    "  --config FILE          the policy (default %s)\n"
	    "  --sshd PATH            sshd (default %s)\n"
	    "  --sshd-config FILE     sshd's configuration (default: sshd's own)\n"
	    "  --sshd-config-dir DIR  where sshd_config Includes drop-ins (default %s)\n"
	    "  --pam-file FILE        sshd's PAM service (default /etc/pam.d/ and sshd's name)\n"
	    "  --shells FILE          the list of login shells (default /etc/shells)\n"
	    "  --token-keys PATTERN   AuthorizedKeysFile for token agents, when the policy\n"
	    "                         has tokens (default %s)\n"
	    "  --dry-run              say what would change; change nothing\n"
	    "  --reload               reload sshd when its drop-in changed\n",
	    AG_DEFAULT_CONFIG, AG_SSHD, AG_SYSCONFDIR "/ssh/sshd_config.d",
	    AG_SYSCONFDIR "/agentgate/keys/%u");
}

static void
step(const char *what, const char *fmt, ...) AG_PRINTF(2, 3);

/* One line of the report: which step, then what it found or did. */
static void
step(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%-13s", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* ---- files -------------------------------------------------------------- */

/* The whole of a regular file (NUL-terminated) into *out; 1 when it is absent. */
static int
read_file(const char *path, char **out, size_t *len, struct ag_err *err)
{
	struct ag_strbuf sb;
	char buf[8192];
	ssize_t n;
	int fd;

	*out = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT || errno == ELOOP)
			return 1;
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	}
	ag_strbuf_init(&sb, FILE_MAX);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || ag_strbuf_append(&sb, buf, (size_t)n) < 0) {
			ag_err_set(err, "%s: %s", path, n < 0 ? strerror(errno) : "too large");
			close(fd);
			ag_strbuf_free(&sb);
			return -1;
		}
	}
	close(fd);
	if (ag_strbuf_append(&sb, "", 0) < 0) {
		ag_strbuf_free(&sb);
		return ag_err_set(err, "out of memory");
	}
	*out = ag_strbuf_detach(&sb, len);
	return 0;
}

/*
 * Replace path with text, atomically (a temporary file in the same
 * directory, renamed over it): sshd and PAM read either the old file or
 * the new one, never half of one.  Mode, owner and group as given.
 */
static int
write_atomic(const char *path, const char *text, size_t len, mode_t mode, uid_t uid,
    gid_t gid, struct ag_err *err)
{
	char tmp[PATH_MAX];
	const char *base = ag_base_name(path);
	int fd, n;

	/* a leading dot: the *.conf of sshd's Include never picks it up */
	n = snprintf(tmp, sizeof(tmp), "%.*s.%s.agentgate-XXXXXX", (int)(base - path), path,
	    base);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return ag_err_set(err, "%s: path too long", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return ag_err_set(err, "cannot create a file beside %s: %s", path,
		    strerror(errno));
	if (ag_write_all(fd, text, len, NULL) < 0 || fchown(fd, uid, gid) < 0 ||
	    fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		ag_err_set(err, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		ag_err_set(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Run a program (no shell) with our stdout and stderr; its exit status, or -1. */
static int
run(const char *const *argv)
{
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		execv(argv[0], (char *const *)(uintptr_t)argv);
		fprintf(stderr, "agentgate: setup: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- 1. sshd's drop-in ---------------------------------------------------- */

/* line (len bytes) with the template's placeholders filled in, onto sb */
static int
fill_line(const struct setup *s, const char *line, size_t len, struct ag_strbuf *sb)
{
	static const char gw[] = "@BINDIR@/agentgate";
	char bindir[PATH_MAX];
	size_t i = 0;
	int rc = 0;

	snprintf(bindir, sizeof(bindir), "%.*s", (int)(ag_base_name(s->gateway) - s->gateway - 1),
	    s->gateway);
	while (i < len && rc == 0) {
		const char *at = line + i;

		if (len - i >= sizeof(gw) - 1 && memcmp(at, gw, sizeof(gw) - 1) == 0) {
			rc = ag_strbuf_addstr(sb, s->gateway);
			i += sizeof(gw) - 1;
		} else if (len - i >= 8 && memcmp(at, "@BINDIR@", 8) == 0) {
			rc = ag_strbuf_addstr(sb, bindir);
			i += 8;
		} else if (len - i >= 12 && memcmp(at, "@SYSCONFDIR@", 12) == 0) {
			rc = ag_strbuf_addstr(sb, AG_SYSCONFDIR);
			i += 12;
		} else if (len - i >= 7 && memcmp(at, "@GROUP@", 7) == 0) {
			rc = ag_strbuf_addstr(sb, AG_GROUP);
			i += 7;
		} else {
			rc = ag_strbuf_addch(sb, *at);
			i++;
		}
	}
	return rc;
}

static int
line_is(const char *line, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(line, want, len) == 0;
}

/*
 * The drop-in for this account: the shipped text, its opening comment
 * replaced by one that says who wrote it, the Match line the account's,
 * and for a policy with tokens the variable and the key file token agents
 * need.  keep_sub[i]: write the Subsystem line for subsystems[i] (sshd
 * refuses a second one for the same name).
 */
static int
render_dropin(const struct setup *s, const int *keep_sub, struct ag_strbuf *sb,
    struct ag_err *err)
{
	const char *p = dropin_template, *end = p + strlen(p);
	int header = 1, match = 0, keyfile = 0, acceptenv = 0, rc;
	size_t i;

	rc = ag_strbuf_printf(sb,
	    "# agentgate: sshd settings for %s %s, written by\n"
	    "#     agentgate setup --%s %s\n"
	    "# from the drop-in the package ships.  Run that again after changing the\n"
	    "# policy's identities (keys, tokens): it writes this file anew.  A copy,\n"
	    "# not a link: sshd keeps starting when the package is removed.  Check with\n"
	    "#     sshd -t && agentgate doctor --user %s\n",
	    s->user != NULL ? "the account" : "the accounts of group", s->name,
	    s->user != NULL ? "user" : "group", s->name,
	    s->user != NULL ? s->user : s->members[0] != NULL ? s->members[0] : "NAME");
	while (rc == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;
		int done = 0;

		p += len + (nl != NULL);
		if (header) {
			/* the shipped file's opening comment is about installing it */
			if (len > 0 && line[0] == '#')
				continue;
			header = 0;
		}
		if (line_is(line, len, "Match User agent")) {
			rc = ag_strbuf_printf(sb, "Match %s %s\n", s->user != NULL ? "User" : "Group",
			    s->name);
			match++;
			continue;
		}
		if (s->tokens > 0 && line_is(line, len, "\tAuthorizedKeysFile none")) {
			rc = ag_strbuf_printf(sb, "\tAuthorizedKeysFile %s\n", s->token_keys);
			keyfile++;
			continue;
		}
		if (s->tokens > 0 && line_is(line, len, "\t#AcceptEnv AGENTGATE_TOKEN")) {
			rc = ag_strbuf_addstr(sb, "\tAcceptEnv AGENTGATE_TOKEN\n");
			acceptenv++;
			continue;
		}
		for (i = 0; i < NSUB && !done; i++) {
			size_t n = strlen(subsystems[i]);

			if (len > 10 + n && memcmp(line, "Subsystem ", 10) == 0 &&
			    memcmp(line + 10, subsystems[i], n) == 0 && line[10 + n] == ' ' &&
			    !keep_sub[i]) {
				rc = ag_strbuf_printf(sb, "# Subsystem %s: sshd's configuration has "
				    "it already (sshd refuses a second)\n", subsystems[i]);
				done = 1;
			}
		}
		if (done)
			continue;
		if (rc == 0)
			rc = fill_line(s, line, len, sb);
		if (rc == 0)
			rc = ag_strbuf_addch(sb, '\n');
	}
	if (rc < 0)
		return ag_err_set(err, "out of memory");
	/* the build's template and this code must agree: never half a drop-in */
	if (match != 1 || (s->tokens > 0 && (keyfile != 1 || acceptenv != 1)))
		return ag_err_set(err, "the drop-in built into this agentgate lacks a line "
		    "setup fills in (Match User agent, AuthorizedKeysFile none or "
		    "#AcceptEnv AGENTGATE_TOKEN)");
	return 0;
}

/*
 * text has a line that starts with prefix and then has rest_len more bytes
 * (-1: any number).
 */
static int
has_line(const char *text, const char *prefix, int rest_len)
{
	size_t n = strlen(prefix);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, n) == 0 &&
		    (rest_len < 0 || strcspn(p + n, "\n") == (size_t)rest_len))
			return 1;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return 0;
}

/* The file has a "Subsystem NAME ..." line of its own. */
static int
has_subsystem_line(const char *text, const char *name)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "Subsystem %s ", name);
	return has_line(text, prefix, -1);
}

/* Print the settings of a drop-in (its lines that are not comments). */
static void
show_settings(const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		size_t ws = strspn(p, " \t");

		if (ws < len && p[ws] != '#')
			printf("             | %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

static int
setup_dropin(struct setup *s)
{
	struct ag_strbuf sb;
	struct ag_sshd_conf sc = { NULL, 0 };
	struct ag_err err;
	struct stat st;
	char *old = NULL;
	size_t oldlen = 0;
	int keep[NSUB], i, r, is_link, rc = -1;

	ag_err_clear(&err);
	if (stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "agentgate: setup: %s is not a directory: sshd_config must "
		    "'Include %s/*.conf' (Debian's does), or name another with "
		    "--sshd-config-dir\n", s->dir, s->dir);
		return -1;
	}
	is_link = lstat(s->dropin, &st) == 0 && S_ISLNK(st.st_mode);
	if ((r = read_file(s->dropin, &old, &oldlen, &err)) < 0) {
		fprintf(stderr, "agentgate: setup: %s\n", err.msg);
		return -1;
	}
	/*
	 * A Subsystem line this file had stays; one it lacks is left out when
	 * the rest of sshd's configuration defines it already.
	 */
	for (i = 0; i < (int)NSUB; i++)
		keep[i] = old != NULL && has_subsystem_line(old, subsystems[i]);
	if (!keep[0] || !keep[1]) {
		if (ag_sshd_dump(s->doc.sshd, s->user != NULL ? s->user : "root",
		    s->doc.sshd_config, &sc, &err) < 0) {
			fprintf(stderr, "agentgate: setup: sshd's configuration does not load "
			    "now; fix that first: %s\n", err.msg);
			free(old);
			return -1;
		}
		for (i = 0; i < (int)NSUB; i++)
			keep[i] = keep[i] || !ag_sshd_has_subsystem(&sc, subsystems[i]);
		ag_sshd_conf_free(&sc);
	}
	ag_strbuf_init(&sb, FILE_MAX);
	if (render_dropin(s, keep, &sb, &err) < 0) {
		fprintf(stderr, "agentgate: setup: %s\n", err.msg);
		goto out;
	}
	if (old != NULL && !is_link && oldlen == sb.len && memcmp(old, sb.data, sb.len) == 0) {
		step("sshd drop-in", "%s: as it should be, unchanged", s->dropin);
		rc = 0;
		goto out;
	}
	if (s->dry_run) {
		step("sshd drop-in", "%s: would %s it, with these settings:", s->dropin,
		    is_link ? "replace the link with a copy of" : old != NULL ? "rewrite" :
		    "write");
		show_settings(sb.data);
		s->nchanged++;
		rc = 0;
		goto out;
	}
	/* a link would dangle once the package is gone (and sshd not start) */
	if (is_link && unlink(s->dropin) < 0) {
		fprintf(stderr, "agentgate: setup: %s: %s\n", s->dropin, strerror(errno));
		goto out;
	}
	if (write_atomic(s->dropin, sb.data, sb.len, 0644, 0, 0, &err) < 0) {
		fprintf(stderr, "agentgate: setup: %s\n", err.msg);
		goto out;
	}
	if (ag_sshd_test(s->doc.sshd, s->doc.sshd_config, &err) < 0) {
		struct ag_err e2;

		/* sshd must go on starting: take the new file back */
		ag_err_clear(&e2);
		if (old != NULL && !is_link)
			(void)write_atomic(s->dropin, old, oldlen, 0644, 0, 0, &e2);
		else
			(void)unlink(s->dropin);
		fprintf(stderr, "agentgate: setup: sshd refuses the configuration with %s, so it "
		    "was %s:\n%s\n", s->dropin, old != NULL && !is_link ? "put back as it was" :
		    "removed again", err.msg);
		goto out;
	}
	step("sshd drop-in", "%s: %s; sshd -t accepts it", s->dropin,
	    is_link ? "the link replaced by a copy" : old != NULL ? "rewritten" : "written");
	s->nchanged++;
	s->dropin_changed = 1;
	rc = 0;
out:
	ag_strbuf_free(&sb);
	free(old);
	return rc;
}

/* ---- 2. sshd's PAM stack -------------------------------------------------- */

static const char bind_comment[] =
    "# agentgate: record which key each connection used, for the gateway\n"
    "# (pam_agentgate(8), bind).  Optional: other accounts never depend on it.\n";

/* Where line n (from 1) of text starts; len past its end. */
static size_t
line_at(const char *text, size_t len, int n)
{
	size_t off = 0;

	while (--n > 0 && off < len) {
		const char *nl = memchr(text + off, '\n', len - off);

		off = nl != NULL ? (size_t)(nl - text) + 1 : len;
	}
	return off;
}

static int
is_comment(const char *text, size_t len, int n)
{
	size_t off = line_at(text, len, n);

	off += strspn(text + off, " \t");
	return off < len && text[off] == '#';
}

/*
 * The new text: the bind line (line, with our comment) above line env and
 * the comment lines just above that (pam_agentgate(8), bind: pam_env with
 * user_readenv=1 reads ~/.pam_environment, and what it sets must never be
 * what bind records), or at the end when no line reads it; without the
 * line it had at line old (0: none), and our comment above that.
 */
static int
place_bind(const char *text, size_t len, int env, int old, const char *line,
    struct ag_strbuf *sb)
{
	size_t at = len, from = len, to = len;

	if (env > 0) {
		while (env > 1 && is_comment(text, len, env - 1))
			env--;
		at = line_at(text, len, env);
	}
	if (old > 0) {
		int first = old;

		from = line_at(text, len, old);
		to = line_at(text, len, old + 1);
		if (old > 2 && from >= sizeof(bind_comment) - 1 &&
		    memcmp(text + from - (sizeof(bind_comment) - 1), bind_comment,
		    sizeof(bind_comment) - 1) == 0)
			first = old - 2;
		from = line_at(text, len, first);
	}
	if (ag_strbuf_append(sb, text, at) < 0 ||
	    (at > 0 && text[at - 1] != '\n' && ag_strbuf_addch(sb, '\n') < 0) ||
	    (at == len && ag_strbuf_addch(sb, '\n') < 0) ||
	    ag_strbuf_addstr(sb, bind_comment) < 0 || ag_strbuf_addstr(sb, line) < 0 ||
	    ag_strbuf_addch(sb, '\n') < 0 ||
	    ag_strbuf_append(sb, text + at, (from > at ? from : at) - at) < 0 ||
	    (to < len && ag_strbuf_append(sb, text + to, len - to) < 0))
		return -1;
	return 0;
}

static int
setup_pam(struct setup *s)
{
	struct ag_strbuf sb;
	struct ag_err err;
	struct stat st;
	struct ag_pam_bind b;
	char *text = NULL, bak[PATH_MAX], line[512], service[128], env_text[512];
	size_t len;
	int rc = -1, env;

	ag_err_clear(&err);
	(void)ag_pam_find_bind(s->pam_path, &b);
	env = ag_pam_user_env_line(s->pam_path, b.top, env_text, sizeof(env_text));
	if (b.top > 0 && env == 0) {
		step("sshd PAM", "%s: has pam_agentgate.so bind, unchanged", s->pam_path);
		return 0;
	}
	if (b.top > 0 && env > b.top) {	/* an auth line: moving bind cannot help */
		fprintf(stderr, "agentgate: setup: %s: '%s' reads ~/.pam_environment as sshd "
		    "authenticates: remove its user_readenv=1\n", s->pam_path, env_text);
		return -1;
	}
	if (b.top > 0 && b.depth > 0) {
		fprintf(stderr, "agentgate: setup: %s: the bind line is in a file line %d "
		    "includes, below '%s': move it above that line\n", s->pam_path, b.top,
		    env_text);
		return -1;
	}
	if (stat(s->pam_path, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "agentgate: setup: %s is missing: is it sshd's PAM service? "
		    "(--pam-file)\n", s->pam_path);
		return -1;
	}
	/* the service sshd runs (sshd.h): bind refuses in any other */
	ag_sshd_pam_service(s->doc.sshd, service, sizeof(service));
	snprintf(line, sizeof(line), "session optional pam_agentgate.so bind%s%s",
	    strcmp(service, AG_PAM_SSHD_SERVICE) != 0 ? " " AG_PAM_SSHD_SERVICE_OPT : "",
	    strcmp(service, AG_PAM_SSHD_SERVICE) != 0 ? service : "");
	if (s->dry_run) {
		if (b.top > 0)
			step("sshd PAM", "%s: would move the bind line (line %d) above '%s'",
			    s->pam_path, b.top, env_text);
		else
			step("sshd PAM", "%s: would add '%s'", s->pam_path, line);
		s->nchanged++;
		return 0;
	}
	if (read_file(s->pam_path, &text, &len, &err) != 0) {
		fprintf(stderr, "agentgate: setup: cannot read %s: %s\n", s->pam_path,
		    err.msg[0] ? err.msg : "a link");
		return -1;
	}
	if (b.top > 0) {	/* moved as it is: its module path and options stay */
		size_t from = line_at(text, len, b.top), to = line_at(text, len, b.top + 1);

		snprintf(line, sizeof(line), "%.*s", (int)(to - from), text + from);
		line[strcspn(line, "\n")] = '\0';
	}
	ag_strbuf_init(&sb, FILE_MAX);
	if (place_bind(text, len, env, b.top, line, &sb) < 0) {
		fprintf(stderr, "agentgate: setup: %s: too large\n", s->pam_path);
		goto out;
	}
	if (snprintf(bak, sizeof(bak), "%s.before-agentgate", s->pam_path) >= (int)sizeof(bak)) {
		fprintf(stderr, "agentgate: setup: %s: path too long\n", s->pam_path);
		goto out;
	}
	if (write_atomic(bak, text, len, st.st_mode & 07777, st.st_uid, st.st_gid, &err) < 0 ||
	    write_atomic(s->pam_path, sb.data, sb.len, st.st_mode & 07777, st.st_uid,
	    st.st_gid, &err) < 0) {
		fprintf(stderr, "agentgate: setup: %s\n", err.msg);
		goto out;
	}
	step("sshd PAM", "%s: %s '%s' %s%s%s (the file as it was: %s)", s->pam_path,
	    b.top > 0 ? "moved" : "added", line, env > 0 ? "above '" : "at the end",
	    env > 0 ? env_text : "", env > 0 ? "'" : "", bak);
	s->nchanged++;
	rc = 0;
out:
	ag_strbuf_free(&sb);
	free(text);
	return rc;
}

/* ---- 3. the login shell ----------------------------------------------------- */

static int
setup_shells(struct setup *s)
{
	struct ag_strbuf sb;
	struct ag_err err;
	struct stat st;
	char *text = NULL;
	size_t len;
	int r, rc = -1;

	ag_err_clear(&err);
	if ((r = read_file(s->shells, &text, &len, &err)) < 0) {
		fprintf(stderr, "agentgate: setup: %s\n", err.msg);
		return -1;
	}
	if (r == 0 && has_line(text, s->gateway, 0)) {
		step("login shell", "%s lists %s, unchanged", s->shells, s->gateway);
		free(text);
		return 0;
	}
	if (s->dry_run) {
		step("login shell", "would add %s to %s", s->gateway, s->shells);
		s->nchanged++;
		free(text);
		return 0;
	}
	/* Debian keeps its own record of what add-shell added */
	if (strcmp(s->shells, "/etc/shells") == 0 && access("/usr/sbin/add-shell", X_OK) == 0) {
		const char *argv[] = { "/usr/sbin/add-shell", s->gateway, NULL };

		rc = run(argv) == 0 ? 0 : -1;
	} else {
		ag_strbuf_init(&sb, FILE_MAX);
		if (stat(s->shells, &st) < 0) {
			st.st_mode = 0644;
			st.st_uid = 0;
			st.st_gid = 0;
		}
		if ((text == NULL || ag_strbuf_append(&sb, text, len) == 0) &&
		    (len == 0 || text[len - 1] == '\n' || ag_strbuf_addch(&sb, '\n') == 0) &&
		    ag_strbuf_printf(&sb, "%s\n", s->gateway) == 0)
			rc = write_atomic(s->shells, sb.data, sb.len, st.st_mode & 07777, st.st_uid,
			    st.st_gid, &err);
		else
			ag_err_set(&err, "out of memory");
		ag_strbuf_free(&sb);
	}
	free(text);
	if (rc < 0) {
		fprintf(stderr, "agentgate: setup: cannot add %s to %s%s%s\n", s->gateway,
		    s->shells, err.msg[0] ? ": " : "", err.msg);
		return -1;
	}
	step("login shell", "added %s to %s", s->gateway, s->shells);
	s->nchanged++;
	return 0;
}

static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	    sa.st_ino == sb.st_ino;
}

static int
setup_login_shell(struct setup *s, const char *user)
{
	const struct passwd *pw = getpwnam(user);
	char was[PATH_MAX];
	int r;

	if (pw == NULL) {
		fprintf(stderr, "agentgate: setup: no account '%s'\n", user);
		return -1;
	}
	snprintf(was, sizeof(was), "%s", pw->pw_shell != NULL && *pw->pw_shell != '\0' ?
	    pw->pw_shell : "/bin/sh");
	if (same_file(was, s->gateway)) {
		step("login shell", "%s's is %s, unchanged", user, was);
		return 0;
	}
	if (s->dry_run) {
		step("login shell", "%s's is %s: would make it %s", user, was, s->gateway);
		s->nchanged++;
		return 0;
	}
	if (access("/usr/sbin/usermod", X_OK) == 0) {
		const char *argv[] = { "/usr/sbin/usermod", "-s", s->gateway, user, NULL };

		r = run(argv);
	} else {
		const char *argv[] = { "/usr/bin/chsh", "-s", s->gateway, user, NULL };

		r = run(argv);
	}
	if (r != 0) {
		fprintf(stderr, "agentgate: setup: could not make %s %s's login shell\n",
		    s->gateway, user);
		return -1;
	}
	step("login shell", "%s's was %s, now %s", user, was, s->gateway);
	s->nchanged++;
	return 0;
}

/* ---- 4. the policy ---------------------------------------------------------- */

static int
in_group(const char *user, const char *group)
{
	const struct passwd *pw = getpwnam(user);

	return pw != NULL && ag_account_in_group(user, pw->pw_gid, group);
}

/* The profile users: gives the account (or group), or NULL. */
static const char *
mapped_profile(const struct setup *s, const struct ag_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nusers; i++) {
		const struct ag_usermap *u = &cfg->users[i];

		if (s->user != NULL && ((!u->is_group && strcmp(u->name, s->user) == 0) ||
		    (u->is_group && in_group(s->user, u->name))))
			return u->profile_name;
		if (s->group != NULL && u->is_group && strcmp(u->name, s->group) == 0)
			return u->profile_name;
	}
	return NULL;
}

/*
 * Which identities may log in as the account: an identity without
 * accounts: may log in as every account of the gateway (older policies),
 * so say which line would tie the ones meant for this account to it.
 */
static void
setup_identities(const struct setup *s, const struct ag_config *cfg)
{
	char open[512] = "", here[512] = "", acct[128];
	size_t i, nopen = 0, nhere = 0;

	if (cfg->nidentities == 0)
		return;
	snprintf(acct, sizeof(acct), "%s%s", s->user != NULL ? "" : "%", s->name);
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];
		char *to = id->accounts.n == 0 ? open : here;

		if (id->accounts.n > 0 && (s->user != NULL ?
		    !ag_identity_allows_account(id, s->user) :
		    !ag_strlist_contains(&id->accounts, acct)))
			continue;
		if (strlen(to) + strlen(id->name) + 3 < sizeof(open))
			snprintf(to + strlen(to), sizeof(open) - strlen(to), "%s%s",
			    *to ? ", " : "", id->name);
		if (id->accounts.n == 0)
			nopen++;
		else
			nhere++;
	}
	if (nhere > 0)
		step("identities", "%s: accounts: lets %s log in as %s", s->doc.config, here,
		    acct);
	if (nopen == 0) {
		if (nhere == 0)
			step("identities", "%s: no identity names %s in its accounts: (only "
			    "users: and default_profile can let a caller in)", s->doc.config,
			    acct);
		return;
	}
	step("identities", "%s: %s ha%s no accounts:, so %s may log in as every account "
	    "of the gateway, %s included", s->doc.config, open, nopen == 1 ? "s" : "ve",
	    nopen == 1 ? "it" : "each", acct);
	printf("             To tie an identity meant for %s to it, add under that "
	    "identity (agentgate edit):\n", acct);
	printf("                 accounts: [%s%s%s]\n", s->user != NULL ? "" : "\"", acct,
	    s->user != NULL ? "" : "\"");
}

static void
setup_policy(const struct setup *s, const struct ag_config *cfg)
{
	const char *p = mapped_profile(s, cfg);

	setup_identities(s, cfg);

	if (p != NULL) {
		step("policy", "%s: users: gives %s profile %s", s->doc.config, s->name, p);
		return;
	}
	if (cfg->gw.default_profile_name != NULL) {
		step("policy", "%s: %s has the default_profile, %s", s->doc.config, s->name,
		    cfg->gw.default_profile_name);
		return;
	}
	step("policy", "%s maps %s to no profile: %s", s->doc.config, s->name,
	    cfg->nidentities > 0 ? "callers that are no identity of the policy are refused" :
	    "every session is refused");
	printf("             To give it one, add these lines under users: (agentgate edit "
	    "installs them%s%s):\n", strcmp(s->doc.config, AG_DEFAULT_CONFIG) != 0 ?
	    "; --config " : "", strcmp(s->doc.config, AG_DEFAULT_CONFIG) != 0 ?
	    s->doc.config : "");
	printf("                 users:\n");
	if (s->user != NULL)
		printf("                   %s: %s\n", s->user,
		    cfg->nprofiles > 0 ? cfg->profiles[0].name : "PROFILE");
	else
		printf("                   \"%%%s\": %s\n", s->group,
		    cfg->nprofiles > 0 ? cfg->profiles[0].name : "PROFILE");
}

/*
 * Whether identity id has a token and may log in as the accounts set up:
 * only then does the drop-in let a key of the account in for it (the
 * AuthorizedKeysFile) and take its token from the client (AcceptEnv).
 * Match Group applies to the group's later members too: an identity whose
 * accounts: name the group counts, as does one that names a member.
 */
static int
token_for_accounts(const struct setup *s, const struct ag_identity *id)
{
	char grp[128];
	int i;

	if (!id->has_token && !id->has_token_hash)
		return 0;
	if (s->user != NULL)
		return ag_identity_allows_account(id, s->user);
	snprintf(grp, sizeof(grp), "%%%s", s->group);
	if (id->accounts.n == 0 || ag_strlist_contains(&id->accounts, grp))
		return 1;
	for (i = 0; i < s->nmembers; i++)
		if (ag_identity_allows_account(id, s->members[i]))
			return 1;
	return 0;
}

/* ---- reloading sshd ------------------------------------------------------- */

/*
 * The system's sshd is the one sshd's default configuration file is for;
 * systemd reloads it.  Another (--sshd-config) is reloaded by its PidFile.
 */
static int
system_sshd(const struct setup *s)
{
	return s->doc.sshd_config == NULL ||
	    strcmp(s->doc.sshd_config, "/etc/ssh/sshd_config") == 0;
}

/* sshd's PidFile for the configuration set up into buf ("" when none). */
static void
sshd_pidfile(const struct setup *s, char *buf, size_t len)
{
	struct ag_sshd_conf sc = { NULL, 0 };
	struct ag_err err;
	const char *v = NULL;

	ag_err_clear(&err);
	if (ag_sshd_dump(s->doc.sshd, s->user != NULL ? s->user : "root", s->doc.sshd_config,
	    &sc, &err) == 0)
		v = ag_sshd_get(&sc, "pidfile");
	snprintf(buf, len, "%s", v != NULL && strcmp(v, "none") != 0 ? v : "");
	ag_sshd_conf_free(&sc);
}

/* How to make that sshd read the new drop-in, when setup was not told to. */
static void
reload_hint(const struct setup *s)
{
	char pidfile[PATH_MAX];

	if (system_sshd(s)) {
		printf("\nsshd reads the new drop-in when reloaded: systemctl reload ssh (or "
		    "agentgate setup --reload)\n");
		return;
	}
	sshd_pidfile(s, pidfile, sizeof(pidfile));
	if (pidfile[0] != '\0')
		printf("\nthe sshd of %s reads the new drop-in when reloaded: kill -HUP "
		    "\"$(cat %s)\" (or run this setup again with --reload)\n",
		    s->doc.sshd_config, pidfile);
	else
		printf("\nthe sshd of %s reads the new drop-in when reloaded: it has no PidFile, "
		    "so send SIGHUP to its listening process yourself (kill -HUP PID), or "
		    "restart it\n", s->doc.sshd_config);
}

static void
reload_sshd(const struct setup *s)
{
	char pidfile[PATH_MAX], buf[32];
	long pid = 0;
	FILE *fp;

	sshd_pidfile(s, pidfile, sizeof(pidfile));
	if (pidfile[0] != '\0' && (fp = fopen(pidfile, "re")) != NULL) {
		if (fgets(buf, sizeof(buf), fp) != NULL)
			pid = strtol(buf, NULL, 10);
		fclose(fp);
	}
	/* what systemd's ssh.service does to reload: sshd re-reads its files */
	if (pid > 1 && kill((pid_t)pid, SIGHUP) == 0) {
		step("reload", "sent SIGHUP to sshd (pid %ld, from %s)", pid, pidfile);
	} else if (!system_sshd(s)) {
		/* systemctl would reload the host's sshd, not this one */
		step("reload", "no running sshd of %s found (pid file %s): start it, or send "
		    "SIGHUP to it yourself", s->doc.sshd_config,
		    pidfile[0] != '\0' ? pidfile : "none");
	} else if (access("/bin/systemctl", X_OK) == 0 || access("/usr/bin/systemctl", X_OK) == 0) {
		const char *argv[] = { access("/bin/systemctl", X_OK) == 0 ? "/bin/systemctl" :
		    "/usr/bin/systemctl", "reload", "ssh", NULL };

		if (run(argv) == 0)
			step("reload", "systemctl reload ssh");
		else
			step("reload", "could not reload sshd: do it yourself");
	} else
		step("reload", "no running sshd found (pid file %s): start it, or reload it "
		    "yourself", pidfile[0] != '\0' ? pidfile : "none");
}

/* ---- the accounts ---------------------------------------------------------- */

static int
add_member(struct setup *s, const char *name)
{
	int i;

	for (i = 0; i < s->nmembers; i++)
		if (strcmp(s->members[i], name) == 0)
			return 0;
	if (s->nmembers >= MAX_MEMBERS - 1 || (s->members[s->nmembers] = strdup(name)) == NULL)
		return -1;
	s->nmembers++;
	return 0;
}

/* The accounts to set up: the user, or the group's members and those whose group it is. */
static int
find_accounts(struct setup *s)
{
	const struct group *gr;
	const struct passwd *pw;
	gid_t gid;
	char **m;

	if (s->user != NULL) {
		if (getpwnam(s->user) == NULL) {
			fprintf(stderr,
			    "agentgate: setup: there is no account '%s', and setup creates none.  "
			    "Create it, with\n"
			    "    useradd --create-home --shell %s %s\n"
			    "    chown root:root /home/%s && chmod 0755 /home/%s\n"
			    "    install -d -o %s -g %s /home/%s/work\n"
			    "(a home whose files the agent cannot change, a place to work), then run "
			    "setup again.\n", s->user, s->gateway, s->user, s->user, s->user,
			    s->user, s->user, s->user);
			return -1;
		}
		return add_member(s, s->user);
	}
	if ((gr = getgrnam(s->group)) == NULL) {
		fprintf(stderr,
		    "agentgate: setup: there is no group '%s', and setup creates none.  Create "
		    "it and put the agent accounts in it, with\n"
		    "    groupadd %s\n"
		    "    usermod -a -G %s ACCOUNT\n"
		    "then run setup again.\n", s->group, s->group, s->group);
		return -1;
	}
	gid = gr->gr_gid;
	for (m = gr->gr_mem; *m != NULL; m++)
		if (add_member(s, *m) < 0)
			return -1;
	setpwent();
	while ((pw = getpwent()) != NULL)
		if (pw->pw_gid == gid && add_member(s, pw->pw_name) < 0) {
			endpwent();
			return -1;
		}
	endpwent();
	if (s->nmembers == 0) {
		fprintf(stderr, "agentgate: setup: group '%s' has no accounts yet: put the "
		    "agent accounts in it (usermod -a -G %s ACCOUNT), then run setup again\n",
		    s->group, s->group);
		return -1;
	}
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

static int
parse_args(struct setup *s, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], **dst = NULL;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--dry-run") == 0 || strcmp(a, "-n") == 0) {
			s->dry_run = 1;
			continue;
		}
		if (strcmp(a, "--reload") == 0) {
			s->reload = 1;
			continue;
		}
		if (strcmp(a, "--user") == 0)
			dst = &s->user;
		else if (strcmp(a, "--group") == 0)
			dst = &s->group;
		else if (strcmp(a, "--config") == 0)
			dst = &s->doc.config;
		else if (strcmp(a, "--sshd") == 0)
			dst = &s->doc.sshd;
		else if (strcmp(a, "--sshd-config") == 0)
			dst = &s->doc.sshd_config;
		else if (strcmp(a, "--sshd-config-dir") == 0)
			dst = &s->dir;
		else if (strcmp(a, "--pam-file") == 0)
			dst = &s->doc.pam_file;
		else if (strcmp(a, "--shells") == 0)
			dst = &s->shells;
		else if (strcmp(a, "--token-keys") == 0)
			dst = &s->token_keys;
		if (dst == NULL || i + 1 >= argc) {
			fprintf(stderr, "agentgate: setup: %s option '%s'\n",
			    dst == NULL ? "unknown" : "a value is missing after", a);
			usage(stderr);
			return 2;
		}
		*dst = argv[++i];
	}
	if ((s->user == NULL) == (s->group == NULL)) {
		fprintf(stderr, "agentgate: setup: name the account with --user NAME, or a "
		    "group of them with --group NAME (one of the two)\n");
		usage(stderr);
		return 2;
	}
	s->name = s->user != NULL ? s->user : s->group;
	if (!ag_account_name_ok(s->name)) {
		fprintf(stderr, "agentgate: setup: '%s' is not an account or group name\n",
		    s->name);
		return 2;
	}
	if (strchr(s->token_keys, ' ') != NULL || (s->token_keys[0] != '/' &&
	    strncmp(s->token_keys, "%h/", 3) != 0)) {
		fprintf(stderr, "agentgate: setup: --token-keys: an absolute path without "
		    "spaces, such as %s\n", AG_SYSCONFDIR "/agentgate/keys/%u");
		return 2;
	}
	return -1;
}

int
ag_cmd_setup(int argc, char **argv)
{
	struct setup s = {
		.doc = { AG_DEFAULT_CONFIG, NULL, AG_SSHD, NULL, NULL },
		.dir = AG_SYSCONFDIR "/ssh/sshd_config.d",
		.shells = "/etc/shells",
		.token_keys = AG_SYSCONFDIR "/agentgate/keys/%u",
	};
	struct ag_config *cfg;
	struct ag_err err;
	ssize_t r;
	int rc, i, failed = 0;
	size_t k;

	if ((rc = parse_args(&s, argc, argv)) >= 0)
		return rc;
	if (getuid() != 0 || geteuid() != 0) {
		fprintf(stderr, "agentgate: setup: root only (it writes sshd's configuration "
		    "and changes the account)\n");
		return 1;
	}
	/* what sshd is to run: this gateway, where it is installed */
	r = readlink("/proc/self/exe", s.gateway, sizeof(s.gateway) - 1);
	if (r <= 0 || s.gateway[0] != '/') {
		fprintf(stderr, "agentgate: setup: cannot tell where this program is\n");
		return 1;
	}
	s.gateway[r] = '\0';
	if (snprintf(s.dropin, sizeof(s.dropin), "%s/agentgate-%s.conf", s.dir, s.name) >=
	    (int)sizeof(s.dropin))
		return 2;
	if (s.doc.pam_file != NULL)
		snprintf(s.pam_path, sizeof(s.pam_path), "%s", s.doc.pam_file);
	else
		ag_sshd_pam_path(s.doc.sshd, s.pam_path, sizeof(s.pam_path));
	s.doc.pam_file = s.pam_path;
	if (find_accounts(&s) < 0)
		return 1;

	ag_err_clear(&err);
	if ((cfg = ag_config_load(s.doc.config, 0, &err)) == NULL) {
		ag_err_print(stderr, &err);
		fprintf(stderr, "agentgate: setup: the policy must load first (agentgate edit%s%s)\n",
		    strcmp(s.doc.config, AG_DEFAULT_CONFIG) != 0 ? " --config " : "",
		    strcmp(s.doc.config, AG_DEFAULT_CONFIG) != 0 ? s.doc.config : "");
		rc = 1;
		goto out;
	}
	for (k = 0; k < cfg->nidentities; k++) {
		s.keys += cfg->identities[k].keys.n > 0;
		s.alltokens += cfg->identities[k].has_token || cfg->identities[k].has_token_hash;
		s.tokens += token_for_accounts(&s, &cfg->identities[k]);
	}
	printf("agentgate setup: %s %s, gateway %s, policy %s (%d identities with keys, %d "
	    "with tokens)%s\n", s.user != NULL ? "account" : "group", s.name, s.gateway,
	    s.doc.config, s.keys, s.alltokens, s.dry_run ? "; a dry run: nothing is changed" : "");
	if (strcmp(s.doc.config, AG_DEFAULT_CONFIG) != 0)
		printf("WARN  the gateway sshd runs reads %s, not %s: install the policy there "
		    "(a --config on sshd's command line would be read with the agent's rights)\n",
		    AG_DEFAULT_CONFIG, s.doc.config);

	rc = 1;
	if (setup_dropin(&s) < 0 || setup_pam(&s) < 0 || setup_shells(&s) < 0)
		goto out;
	for (i = 0; i < s.nmembers; i++)
		if (setup_login_shell(&s, s.members[i]) < 0)
			goto out;
	setup_policy(&s, cfg);
	if (s.tokens > 0)
		printf("NOTE  token agents log in with a key of the account, which sshd reads "
		    "from %s (root's, mode 0644; no identity's key in it), then send their token "
		    "(ssh -o SendEnv=AGENTGATE_TOKEN)\n", s.token_keys);
	else if (s.alltokens > 0)
		printf("NOTE  no identity with a token may log in as %s%s (their accounts: "
		    "do not name it): its drop-in reads no key file and takes no "
		    "AGENTGATE_TOKEN; run setup again after giving one this account\n",
		    s.user != NULL ? "" : "the accounts of group ", s.name);

	if (s.dry_run) {
		if (s.nchanged == 0)
			printf("setup: nothing to change: %s %s is set up already\n",
			    s.user != NULL ? "account" : "group", s.name);
		else
			printf("setup: a dry run: %d change%s to make, none made\n", s.nchanged,
			    s.nchanged == 1 ? "" : "s");
		rc = 0;
		goto out;
	}
	if (s.nchanged == 0)
		printf("setup: nothing to change: %s %s is set up already\n",
		    s.user != NULL ? "account" : "group", s.name);
	else
		printf("setup: %d change%s\n", s.nchanged, s.nchanged == 1 ? "" : "s");

	for (i = 0; i < s.nmembers; i++) {
		printf("\n");
		s.doc.user = s.members[i];
		if (ag_doctor_run(&s.doc) != 0)
			failed++;
	}
	if (s.dropin_changed && s.reload)
		reload_sshd(&s);
	else if (s.dropin_changed)
		reload_hint(&s);
	else if (s.reload)
		printf("\nsshd's drop-in is unchanged: no reload needed\n");
	if (failed > 0)
		printf("agentgate setup: the doctor found something to fix (above)\n");
	rc = failed > 0 ? 1 : 0;
out:
	ag_config_free(cfg);
	for (i = 0; i < s.nmembers; i++)
		free(s.members[i]);
	return rc;
}
