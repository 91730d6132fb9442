/*
 * gitplant.c - does a git directory hold something git would run?
 *
 * Why: the repository scan (namespace.c) makes a repository's config and
 * hooks read-only from the first scan that finds it, but a command that
 * creates a repository can fill them before any scan sees it (`git init x
 * && cp hook x/.git/hooks/post-commit`).  Inside the gateway git runs no
 * hook (core.hooksPath=/dev/null), but git run by the account outside it
 * would.  So the gateway scans again after every command, and a git
 * directory that appeared during it is looked at here: a hook that is not
 * one of git's own samples, or a config key that is not one git writes
 * itself, is reported, and commands are refused until it is gone.
 *
 * The gateway's view must not differ from git's, so anything it cannot
 * read as git would counts as planted: a part that is a link or of the
 * wrong type, one it cannot open or list, a config this strict reader
 * does not follow to the letter (a byte-order mark, a NUL, a continued
 * line, a control character), and every key not on the allow-list below
 * (git has many keys that run a program, and gains more: a deny-list
 * misses the next one).
 */
#include "agconfig.h"
#include "common/compat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/privsep.h"
#include "exec/sandbox_int.h"

#define CONFIG_MAX	(1024 * 1024)	/* bytes of a config looked at; past it: planted */
#define ASIDE_TRIES	8	/* names tried for a set-aside */

/*
 * The keys git init, clone, worktree, submodule and a plain commit write
 * (and a few a user sets on a fresh clone), as "section.key",
 * "section.*.key" (any subsection) or "section.*" (every key of the
 * section, no subsection).  None runs a program.  core.worktree is not
 * on it: it moves the work tree, so git run outside writes the agent's
 * files wherever it names (~/.bashrc, /etc/cron.d as root); git writes
 * one only for a submodule, pointing back into the superproject's work
 * tree, so one is allowed only where it resolves beneath the write roots
 * through no link the agent could change (worktree_ok).  A url is checked
 * further: "helper::address" and an unknown "scheme://" run
 * git-remote-NAME, and a submodule's update mode may be "!command"
 * (value_runs).  An alias is not on it: one without "!" still runs git
 * with options of its own (-c core.pager=...).  Values are judged as git
 * reads them: quotes and escapes undone (value_unquote).
 */
static const char *const allowed[] = {
	"core.repositoryformatversion", "core.filemode", "core.bare",
	"core.logallrefupdates", "core.ignorecase", "core.precomposeunicode",
	"core.symlinks", "core.sharedrepository", "core.autocrlf",
	"core.eol", "core.safecrlf", "core.quotepath", "core.sparsecheckout",
	"core.sparsecheckoutcone", "index.sparse", "maintenance.auto", "maintenance.strategy",
	"extensions.*",
	"remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push",
	"remote.*.mirror", "remote.*.tagopt", "remote.*.prune", "remote.*.promisor",
	"remote.*.partialclonefilter",
	"branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote",
	"branch.*.description",
	"submodule.*.url", "submodule.*.active", "submodule.*.branch", "submodule.*.update",
	"user.name", "user.email", "init.defaultbranch", "lfs.repositoryformatversion",
	"receive.denynonfastforwards", "pull.rebase", "pull.ff", "push.default",
	"fetch.prune", "gc.auto", "color.ui",
	NULL
};

static int
key_allowed(const char *section, int has_sub, const char *key)
{
	size_t i, sl = strlen(section);

	for (i = 0; allowed[i] != NULL; i++) {
		const char *r = allowed[i];

		if (strncmp(r, section, sl) != 0 || r[sl] != '.')
			continue;
		r += sl + 1;
		if (strcmp(r, "*") == 0 ? !has_sub : strncmp(r, "*.", 2) == 0 ?
		    has_sub && strcmp(r + 2, key) == 0 : !has_sub && strcmp(r, key) == 0)
			return 1;
	}
	return 0;
}

/*
 * A config value as git reads it (config.c, parse_value), in place: blanks
 * around it dropped, a comment (# or ; outside quotes) cut, quotes
 * removed, \\ \" \n \t \b undone.  0, or -1 where git refuses the line
 * (an unknown escape, an unterminated quote): the reader fails closed.
 */
static int
value_unquote(char *v)
{
	char *const start = v;
	char *out = v;		/* never past v: each byte written was read */
	size_t space = 0;
	int quote = 0;

	for (; *v != '\0'; v++) {
		char c = *v;

		if ((c == ' ' || c == '\t') && !quote) {
			/* blanks inside the value are kept, those before it are not */
			if (out != start)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#'))
			break;
		for (; space > 0; space--)
			*out++ = ' ';
		if (c == '\\') {
			switch (*++v) {
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'n': c = '\n'; break;
			case '\\': case '"': c = *v; break;
			default: return -1;
			}
			*out++ = c;
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		*out++ = c;
	}
	*out = '\0';
	return quote ? -1 : 0;
}

/* A url git fetches or pushes without a remote helper of the agent's
 * choosing: no "helper::address", and a "scheme://" only of the schemes
 * git handles itself (transport.c; http and ftp through its own
 * git-remote-http).  Any other scheme runs git-remote-SCHEME. */
static int
url_runs(const char *v)
{
	static const char *const native[] = { "file", "git", "ssh", "git+ssh", "ssh+git",
		"http", "https", "ftp", "ftps", NULL };
	const char *sep;
	size_t n, i;

	if (strstr(v, "::") != NULL)
		return 1;
	if ((sep = strstr(v, "://")) == NULL)
		return 0;
	n = (size_t)(sep - v);
	if (n == 0 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789+.-") < n)
		return 0;	/* not a url to git: a path, or host:path */
	for (i = 0; native[i] != NULL; i++)
		if (strlen(native[i]) == n && strncmp(v, native[i], n) == 0)
			return 0;
	return 1;
}

/*
 * A value (unquoted) that runs a program under an allowed key: a url git
 * hands to a remote helper (url_runs), a submodule's update mode other
 * than git's own (a "!command").
 */
static int
value_runs(const char *section, const char *key, const char *value)
{
	static const char *const modes[] = { "checkout", "rebase", "merge", "none", NULL };
	size_t i;

	if (strcmp(key, "url") == 0 || strcmp(key, "pushurl") == 0)
		return value != NULL && url_runs(value);
	if (strcmp(section, "submodule") == 0 && strcmp(key, "update") == 0) {
		if (value == NULL)
			return 1;
		for (i = 0; modes[i] != NULL; i++)
			if (strcmp(value, modes[i]) == 0)
				return 0;
		return 1;
	}
	return 0;
}

static void
lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/*
 * A "[section]", "[section "sub"]" or legacy "[section.sub]" header at l
 * (just past '['): the section, lowercased, into section; the rest of
 * the line (a key may follow) returned, or NULL when git would read it
 * differently or not at all.
 */
static char *
config_header(char *l, char *section, size_t secsz, int *has_sub)
{
	size_t n = strspn(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.");
	char *dot;

	if (n == 0 || n >= secsz)
		return NULL;
	memcpy(section, l, n);
	section[n] = '\0';
	*has_sub = 0;
	if ((dot = strchr(section, '.')) != NULL) {
		*dot = '\0';
		*has_sub = 1;
		if (section[0] == '\0')
			return NULL;
	}
	lower(section);
	l += n;
	if (*l == ' ' || *l == '\t') {
		if (*has_sub)
			return NULL;
		l += strspn(l, " \t");
		if (*l++ != '"')
			return NULL;
		while (*l != '"') {
			if (*l == '\0')
				return NULL;
			if (*l == '\\' && l[1] != '\0')
				l++;
			l++;
		}
		l++;
		*has_sub = 1;
	}
	return *l == ']' ? l + 1 : NULL;
}

/*
 * A config's text (n bytes, NUL-terminated at n) of gitdir: 0 when every
 * line is one this reader follows and every key is allowed; 1 with why in
 * what.  With wt (PATH_MAX bytes), keys are not judged: the last
 * core.worktree's value is put there.
 */
static int
config_text(char *buf, size_t n, const char *gitdir, const struct plist *writes, char *wt,
    char *what, size_t whatsz)
{
	char section[64] = "", *l, *next, *key, *value;
	int has_sub = 0;
	size_t k;

	if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		return snprintf(what, whatsz, "begins with a byte-order mark"), 1;
	if (memchr(buf, '\0', n) != NULL)
		return snprintf(what, whatsz, "holds a NUL byte"), 1;
	for (l = buf; l != NULL; l = next) {
		if ((next = strchr(l, '\n')) != NULL)
			*next++ = '\0';
		k = strlen(l);
		if (k > 0 && l[k - 1] == '\r')
			l[--k] = '\0';
		for (key = l; *key; key++)
			if ((unsigned char)*key < 0x20 && *key != '\t')
				return snprintf(what, whatsz, "holds a control character"), 1;
		if (k > 0 && l[k - 1] == '\\')
			return snprintf(what, whatsz, "continues a line with \\"), 1;
		l += strspn(l, " \t");
		if (*l == '[' && (l = config_header(l + 1, section, sizeof(section),
		    &has_sub)) == NULL)
			return snprintf(what, whatsz, "has a section header git may read "
			    "otherwise"), 1;
		l += strspn(l, " \t");
		if (*l == '\0' || *l == '#' || *l == ';')
			continue;
		if (section[0] == '\0' || !isalpha((unsigned char)*l))
			return snprintf(what, whatsz, "has a line git may read otherwise"), 1;
		key = l;
		k = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
		l = key + k;
		l += strspn(l, " \t");
		value = NULL;
		if (*l == '=')
			value = l + 1;
		else if (*l != '\0' && *l != '#' && *l != ';')
			return snprintf(what, whatsz, "has a line git may read otherwise"), 1;
		key[k] = '\0';
		lower(key);
		if (value != NULL && value_unquote(value) < 0)
			return snprintf(what, whatsz, "has a value git may read otherwise"), 1;
		if (wt != NULL) {	/* only core.worktree wanted (sb_git_core_worktree) */
			if (strcmp(section, "core") == 0 && !has_sub &&
			    strcmp(key, "worktree") == 0 && value != NULL)
				snprintf(wt, PATH_MAX, "%s", value);
			continue;
		}
		if (strcmp(section, "core") == 0 && !has_sub && strcmp(key, "worktree") == 0) {
			char bad[PATH_MAX];

			if (value == NULL || *value == '\0')
				return snprintf(what, whatsz, "core.worktree, empty"), 1;
			if (sb_git_worktree_outside(gitdir, value, writes, bad, sizeof(bad)) != 0)
				return snprintf(what, whatsz, "core.worktree: %s is outside the write "
				    "roots or a link", bad), 1;
			continue;
		}
		if (!key_allowed(section, has_sub, key) || value_runs(section, key, value))
			return snprintf(what, whatsz, "%s%s.%s", section, has_sub ? ".*" : "",
			    key), 1;
	}
	return 0;
}

/* dir/name (an fd of dir), a config, read whole: the text (NUL-terminated,
 * its length in *len) to free, or NULL with *why saying what it is
 * instead (NULL: absent). */
static char *
config_read(int dfd, const char *name, size_t *len, const char **why)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int fd;

	*why = NULL;
	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			*why = errno == ELOOP ? "a symbolic link" : "cannot be read";
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file";
		return NULL;
	}
	if (st.st_size > CONFIG_MAX || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		*why = "too large to read";
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (got != (size_t)st.st_size) {
		free(buf);
		*why = "cannot be read";
		return NULL;
	}
	*len = got;
	return buf;
}

/* dir/name (an fd of dir), a config: 1 planted (why in what), 0 not, or absent. */
static int
config_planted(int dfd, const char *path, const char *name, const struct plist *writes,
    char *what, size_t whatsz)
{
	char why[PATH_MAX + 64], *buf;
	const char *fail;
	size_t len;

	if ((buf = config_read(dfd, name, &len, &fail)) == NULL) {
		if (fail == NULL)
			return 0;
		snprintf(what, whatsz, "%s/%s (%s)", path, name, fail);
		return 1;
	}
	if (config_text(buf, len, path, writes, NULL, why, sizeof(why)) == 0) {
		free(buf);
		return 0;
	}
	free(buf);
	snprintf(what, whatsz, "%s/%s (%s)", path, name, why);
	return 1;
}

static int
ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

static const char *const configs[] = { "config", "config.worktree", NULL };
static const char *const quarantined[] = { "config.planted", "config.worktree.planted",
	"hooks.planted", NULL };

/* hooks/ of gitdir (dfd): -2 absent, -1 a link, not a directory or not to
 * be read (why in what), else a listing fd. */
static int
open_hooks(int dfd, const char *gitdir, char *what, size_t whatsz)
{
	int fd = openat(dfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return -2;
	snprintf(what, whatsz, "%s/hooks (%s)", gitdir, errno == ELOOP || errno == ENOTDIR ?
	    "a symbolic link or not a directory" : "cannot be listed");
	return -1;
}

/* hooks (hfd, closed here) of gitdir: 1 with what naming a hook that is
 * not a sample, one git would run first (a name already set aside,
 * NAME*.planted, only when there is no other: a decoy the command made
 * there is not the finding), else 0. */
static int
hooks_planted(int hfd, const char *gitdir, char *what, size_t whatsz)
{
	struct dirent *de;
	DIR *d;
	int found = 0;

	if ((d = fdopendir(hfd)) == NULL) {
		close(hfd);
		snprintf(what, whatsz, "%s/hooks (cannot be listed)", gitdir);
		return 1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0) {
				snprintf(what, whatsz, "%s/hooks (cannot be listed)", gitdir);
				found = 2;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    ends_with(de->d_name, ".sample"))
			continue;
		if (ends_with(de->d_name, ".planted")) {
			if (!found)
				snprintf(what, whatsz, "%s/hooks/%s", gitdir, de->d_name);
			found = 1;
			continue;
		}
		snprintf(what, whatsz, "%s/hooks/%s", gitdir, de->d_name);
		found = 2;
		break;
	}
	closedir(d);
	return found;
}

int
sb_git_planted(const char *gitdir, const struct plist *writes, char *what, size_t whatsz)
{
	struct stat st;
	size_t i;
	int dfd, hfd, found = 0;

	if ((dfd = ag_privsep_open_dir_nofollow(gitdir)) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(what, whatsz, "%s (cannot be read)", gitdir);
		return 1;
	}
	for (i = 0; configs[i] != NULL && !found; i++)
		found = config_planted(dfd, gitdir, configs[i], writes, what, whatsz);
	if (!found && (hfd = open_hooks(dfd, gitdir, what, whatsz)) != -2)
		found = hfd < 0 ? 2 : hooks_planted(hfd, gitdir, what, whatsz);
	/* what was set aside already is named only when nothing live is */
	for (i = 0; quarantined[i] != NULL && found < 2; i++)
		if (fstatat(dfd, quarantined[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!found)
				snprintf(what, whatsz, "%s/%s", gitdir, quarantined[i]);
			found = 1;
			break;
		}
	close(dfd);
	return found != 0;
}

/*
 * A link set aside (red team 23, L3): renamed, it would still lead where
 * it led (into the persistent /tmp, to a repository no scan covers), and
 * whoever reviews it (cd NAME.planted; git commit, as root) would run
 * what lies there.  So it is replaced by a file at the new name that says
 * where it pointed, and removed.  As the caller; 0 or -1 (EEXIST: to is
 * taken).
 */
static int
link_to_note(int dfd, const char *from, const char *to)
{
	char target[PATH_MAX];
	ssize_t n;
	int fd, e;

	if ((n = readlinkat(dfd, from, target, sizeof(target) - 1)) < 0)
		return -1;
	target[n] = '\0';
	if ((fd = openat(dfd, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600)) < 0)
		return -1;
	if (dprintf(fd, "a symbolic link to: %s\n(set aside by agentgate: git follows "
	    "links, so it was replaced by this note)\n", target) < 0 || close(fd) < 0 ||
	    unlinkat(dfd, from, 0) < 0) {
		e = errno;
		(void)unlinkat(dfd, to, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/* from renamed to to in dir (fd), as the caller, never over a name that
 * exists (a decoy there, even a non-empty directory, made by the command
 * that planted: a plain rename would fail on it): 0 or -1.  A link is
 * replaced by a note instead (link_to_note). */
static int
rename_fresh(int dfd, const char *from, const char *to)
{
	struct stat st;
	int rc, e;

	ag_privsep_as_caller();
	if (fstatat(dfd, from, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		rc = link_to_note(dfd, from, to);
		goto out;
	}
	rc = renameat2(dfd, from, dfd, to, RENAME_NOREPLACE);
	/* a file system without the flag (NFS, some FUSE): the name looked
	 * at first; the command that could race it has ended */
	if (rc < 0 && errno == EINVAL) {
		if (fstatat(dfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			errno = EEXIST;
		} else if (errno == ENOENT)
			rc = renameat(dfd, from, dfd, to);
	}
out:
	e = errno;
	ag_privsep_as_gateway();
	errno = e;
	return rc;
}

/* from renamed to a name of the form BASE.planted (to, tosz bytes): BASE
 * itself first, then BASE.<random>.planted, which no command can have
 * made ready.  0, or -1 with errno (EEXIST: every try was taken). */
static int
rename_aside(int dfd, const char *from, const char *base, char *to, size_t tosz)
{
	unsigned char r[6];
	int i;

	if ((size_t)snprintf(to, tosz, "%s.planted", base) >= tosz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (i = 0; i < ASIDE_TRIES; i++) {
		if (rename_fresh(dfd, from, to) == 0)
			return 0;
		if (errno != EEXIST && errno != ENOTEMPTY)
			return -1;
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		if ((size_t)snprintf(to, tosz, "%s.%02x%02x%02x%02x%02x%02x.planted", base, r[0],
		    r[1], r[2], r[3], r[4], r[5]) >= tosz) {
			errno = ENAMETOOLONG;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* from set aside in dir (fd) as BASE.planted (above), as the caller, no
 * link followed.  A directory the command made read-only (chmod 555: the
 * account owns it) is made writable for the rename, as the account, and
 * given its mode back.  0 or -1 with errno. */
static int
set_aside(int dfd, const char *from, const char *base, char *to, size_t tosz)
{
	char self[32];
	struct stat st;
	int rc, e;

	if ((rc = rename_aside(dfd, from, base, to, tosz)) == 0 ||
	    (errno != EACCES && errno != EPERM))
		return rc;
	e = errno;
	/* the fd is O_PATH: its mode is changed through /proc, as the caller */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dfd);
	if (fstat(dfd, &st) < 0 || (st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR)) {
		errno = e;
		return -1;
	}
	ag_privsep_as_caller();
	rc = chmod(self, (st.st_mode & 07777) | S_IWUSR | S_IXUSR);
	ag_privsep_as_gateway();
	if (rc < 0) {
		errno = e;
		return -1;
	}
	rc = rename_aside(dfd, from, base, to, tosz);
	e = errno;
	ag_privsep_as_caller();
	(void)chmod(self, st.st_mode & 07777);
	ag_privsep_as_gateway();
	errno = e;
	return rc;
}

/*
 * What sb_git_planted finds, renamed where git does not look: a hook
 * NAME to NAME.planted, a config to config.planted (git works without
 * one), hooks that are a link, not a directory or not to be listed to
 * hooks.planted.  Every rename goes
 * through the fd of the directory that was looked into (no path is
 * walked again, no link followed).  The names stay, and refuse commands,
 * until someone removes them.  0 when all of it is set aside, -1 when
 * some is not (git outside the gateway may still run it).
 */
int
sb_git_disarm(const char *gitdir, const struct plist *writes)
{
	char to[NAME_MAX + 1], what[PATH_MAX + 128];
	struct dirent *de;
	DIR *d;
	size_t i;
	int dfd, hfd, rc = 0;

	if ((dfd = ag_privsep_open_dir_nofollow(gitdir)) < 0)
		return -1;
	for (i = 0; configs[i] != NULL; i++)
		if (config_planted(dfd, gitdir, configs[i], writes, what, sizeof(what)) &&
		    set_aside(dfd, configs[i], configs[i], to, sizeof(to)) < 0)
			rc = -1;
	/* hooks that cannot be listed go aside whole (a rename in the git
	 * directory needs no access to hooks itself) */
	if ((hfd = open_hooks(dfd, gitdir, what, sizeof(what))) == -1 &&
	    set_aside(dfd, "hooks", "hooks", to, sizeof(to)) < 0)
		rc = -1;
	close(dfd);
	if (hfd < 0)
		return rc;
	if ((d = fdopendir(hfd)) == NULL) {
		close(hfd);
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rc = -1;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    ends_with(de->d_name, ".sample") || ends_with(de->d_name, ".planted"))
			continue;
		if (set_aside(hfd, de->d_name, de->d_name, to, sizeof(to)) < 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int
sb_git_set_aside(const char *dir, const char *name, char *aside, size_t asidesz)
{
	char to[NAME_MAX + 1];
	int dfd, rc, e;

	if ((dfd = ag_privsep_open_dir_nofollow(dir)) < 0)
		return -1;
	rc = set_aside(dfd, name, name, to, sizeof(to));
	e = errno;
	close(dfd);
	if (rc == 0 && (size_t)snprintf(aside, asidesz, "%s/%s", dir, to) >= asidesz)
		rc = -1;
	errno = e;
	return rc;
}

int
sb_git_core_worktree(const char *gitdir, char *out, size_t outsz)
{
	char wt[PATH_MAX] = "", why[128], *buf;
	const char *fail;
	size_t i, len;
	int dfd;

	if ((dfd = ag_privsep_open_dir_nofollow(gitdir)) < 0)
		return 0;
	/* git reads config.worktree after config: its value wins */
	for (i = 0; configs[i] != NULL; i++)
		if ((buf = config_read(dfd, configs[i], &len, &fail)) != NULL) {
			(void)config_text(buf, len, gitdir, NULL, wt, why, sizeof(why));
			free(buf);
		}
	close(dfd);
	return wt[0] != '\0' && (size_t)snprintf(out, outsz, "%s", wt) < outsz;
}
