/*
 * gitseq.c - does a rebase, cherry-pick, revert or am left in progress
 * hold a program git would run when it is continued?
 *
 * Why: a stopped rebase keeps its plan in the git directory
 * (rebase-merge/git-rebase-todo, sequencer/todo) and `git rebase
 * --continue` carries it out: an `exec` line runs a shell command, and a
 * `strategy` file names a merge program, `git merge-STRATEGY`, found in
 * the work tree.  Those names are the agent's to write while the state
 * exists, and the person (or root, with safe.directory) continues the
 * rebase `git status` tells them about, outside the gateway (red team 23,
 * H1).  They cannot be bound read-only: `git rebase --continue` inside the
 * gateway rewrites them and removes the directory at the end.  So the
 * gateway looks after every command at the state of every git directory
 * it knows, and state the command created or changed that holds anything
 * git would run is set aside whole (namespace.c, seq_sweep).
 *
 * What git 2.39 runs from there (sequencer.c, builtin/rebase.c, am.c):
 * a todo's `exec`/`x` line; `strategy` (and sequencer/opts'
 * options.strategy) other than a merge git has itself; the options am
 * hands to `git apply` (rebase-apply/apply-opt: `--unsafe-paths` writes
 * anywhere).  The rest is data (commit ids, messages, patches, flags).
 * As in gitplant.c, each of these is an allow-list: a todo line whose
 * first word is not one of git's non-exec commands, a file that is not a
 * regular one (a link git follows), or one too large or unreadable,
 * counts as running something.
 */
#include "agconfig.h"
#include "common/compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/sandbox_int.h"

#define STATE_FILE_MAX	(4 * 1024 * 1024)	/* a todo larger is taken as running */
#define CLOCK_SLACK_NS	1000000000LL	/* a file system's coarse ctime */

static const char *const states[] = { "rebase-merge", "rebase-apply", "sequencer", NULL };

/* Merges git does itself (or with its own scripts, from its exec path). */
static int
strategy_builtin(const char *s, size_t n)
{
	static const char *const own[] = { "ort", "recursive", "resolve", "octopus", "ours",
		"subtree", NULL };
	size_t i;

	for (i = 0; own[i] != NULL; i++)
		if (strlen(own[i]) == n && strncmp(s, own[i], n) == 0)
			return 1;
	return 0;
}

/* A todo (git-rebase-todo, sequencer/todo): 1 (line in what) when a line
 * is not a comment or one of git's commands that run nothing. */
static int
todo_runs(const char *buf, char *what, size_t whatsz)
{
	static const char *const safe[] = { "pick", "p", "reword", "r", "edit", "e", "squash",
		"s", "fixup", "f", "break", "b", "drop", "d", "label", "l", "reset", "t",
		"merge", "m", "update-ref", "u", "noop", "revert", NULL };
	const char *l = buf;
	size_t n, i;
	int line = 0;

	for (; *l != '\0'; l += strcspn(l, "\n"), l += *l == '\n') {
		line++;
		l += strspn(l, " \t");
		if (*l == '\0' || *l == '\n' || *l == '\r' || *l == '#')
			continue;
		n = strcspn(l, " \t\r\n");
		for (i = 0; safe[i] != NULL; i++)
			if (strlen(safe[i]) == n && strncmp(l, safe[i], n) == 0)
				break;
		if (safe[i] == NULL) {
			snprintf(what, whatsz, "line %d: %.*s", line, (int)(n > 32 ? 32 : n), l);
			return 1;
		}
	}
	return 0;
}

/* rebase-apply/apply-opt: the options `git am` passes to `git apply`,
 * single-quoted words (sq_quote): only those am itself takes. */
static int
apply_opt_runs(const char *buf, char *what, size_t whatsz)
{
	static const char *const exact[] = { "--ignore-space-change", "--ignore-whitespace",
		"--reject", NULL };
	static const char *const prefix[] = { "--whitespace=", "--directory=", "--exclude=",
		"--include=", "-C", "-p", NULL };
	const char *w = buf;
	size_t n, i;

	for (;;) {
		w += strspn(w, " \t\r\n");
		if (*w == '\0')
			return 0;
		if (*w != '\'' || (n = strcspn(w + 1, "'\\")) == 0 || w[1 + n] != '\'')
			break;	/* an escaped quote, or not git's quoting: not judged */
		for (i = 0; exact[i] != NULL; i++)
			if (strlen(exact[i]) == n && strncmp(w + 1, exact[i], n) == 0)
				break;
		if (exact[i] == NULL) {
			for (i = 0; prefix[i] != NULL; i++)
				if (n > strlen(prefix[i]) && strncmp(w + 1, prefix[i],
				    strlen(prefix[i])) == 0)
					break;
			if (prefix[i] == NULL)
				break;
		}
		w += n + 2;
	}
	snprintf(what, whatsz, "apply-opt: %.40s", w);
	return 1;
}

/*
 * A strategy option git passes to the merge as --OPT: only the ones that
 * change how it merges, not where it writes (resolve's --index-output=
 * wrote an index at any path: red team 33-25, H4).  n: its length.
 */
static int
strategy_option_ok(const char *o, size_t n)
{
	static const char *const ok[] = { "ours", "theirs", "patience", "histogram",
		"minimal", "ignore-space-change", "ignore-all-space", "ignore-space-at-eol",
		"ignore-cr-at-eol", "renormalize", "no-renormalize", "no-renames",
		"find-renames", "find-renames=", "rename-threshold=", "diff-algorithm=",
		"subtree", "subtree=", NULL };
	size_t i, k;

	if (n >= 2 && o[0] == '-' && o[1] == '-') {
		o += 2;
		n -= 2;
	}
	for (i = 0; ok[i] != NULL; i++) {
		k = strlen(ok[i]);
		if (ok[i][k - 1] == '=' ? n >= k && strncmp(o, ok[i], k) == 0 :
		    n == k && strncmp(o, ok[i], k) == 0)
			return 1;
	}
	return 0;
}

/* strategy_opts (rebase-merge/): git writes each option single-quoted
 * (" '--theirs'") and splits it like a command line; a word quoted any
 * other way is taken as running (what it would split to is not judged). */
static int
strategy_opts_run(const char *buf, char *what, size_t whatsz)
{
	const char *w = buf, *o;
	size_t n, on;

	for (;;) {
		w += strspn(w, " \t\r\n");
		if ((n = strcspn(w, " \t\r\n")) == 0)
			return 0;
		o = w;
		on = n;
		if (n >= 2 && w[0] == '\'' && w[n - 1] == '\'') {
			o = w + 1;
			on = n - 2;
		}
		if (memchr(o, '\'', on) != NULL || memchr(o, '"', on) != NULL ||
		    memchr(o, '\\', on) != NULL) {
			snprintf(what, whatsz, "quoted strategy options");
			return 1;
		}
		if (!strategy_option_ok(o, on)) {
			snprintf(what, whatsz, "strategy option %.*s", on > 40 ? 40 : (int)on, o);
			return 1;
		}
		w += n;
	}
}

/* sequencer/opts, as git_config_set_in_file writes it: "[options]" and
 * "\tKEY = VALUE" lines, a strategy only one of git's own. */
static int
opts_runs(const char *buf, char *what, size_t whatsz)
{
	static const char *const keys[] = { "no-commit", "edit", "allow-empty",
		"allow-empty-message", "drop-redundant-commits", "keep-redundant-commits",
		"signoff", "record-origin", "allow-ff", "mainline", "strategy",
		"strategy-option", "allow-rerere-auto", "default-msg-cleanup", "gpg-sign",
		NULL };
	const char *l = buf, *v;
	size_t n, vn, i;

	for (; *l != '\0'; l += strcspn(l, "\n"), l += *l == '\n') {
		l += strspn(l, " \t");
		if (*l == '\n' || *l == '\0' || strncmp(l, "[options]\n", 10) == 0)
			continue;
		n = strcspn(l, " =\n");
		for (i = 0; keys[i] != NULL; i++)
			if (strlen(keys[i]) == n && strncmp(l, keys[i], n) == 0)
				break;
		v = l + n;
		if (keys[i] == NULL || strncmp(v, " = ", 3) != 0)
			break;
		v += 3;
		vn = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789=._/+-");
		if (v[vn] != '\n' && v[vn] != '\0')
			break;
		if (strcmp(keys[i], "strategy") == 0 && !strategy_builtin(v, vn))
			break;
		if (strcmp(keys[i], "strategy-option") == 0 && !strategy_option_ok(v, vn))
			break;
	}
	if (*l == '\0')
		return 0;
	snprintf(what, whatsz, "opts: %.*s", (int)strcspn(l, "\n") > 40 ? 40 :
	    (int)strcspn(l, "\n"), l);
	return 1;
}

/* One file of a state directory (fd dfd): 1 when git would run
 * something from it (what says), else 0. */
static int
file_runs(int dfd, const char *name, char *what, size_t whatsz)
{
	char why[96], *buf;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, rc;

	if (strcmp(name, "git-rebase-todo") != 0 && strcmp(name, "todo") != 0 &&
	    strcmp(name, "strategy") != 0 && strcmp(name, "apply-opt") != 0 &&
	    strcmp(name, "opts") != 0 && strcmp(name, "strategy_opts") != 0)
		return 0;	/* data: ids, messages, patches, flags */
	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > STATE_FILE_MAX || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		if (fd >= 0)
			close(fd);
		snprintf(what, whatsz, "%.64s (cannot be read as git reads it)", name);
		return 1;
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
	why[0] = '\0';
	if (got != (size_t)st.st_size || memchr(buf, '\0', got) != NULL) {
		snprintf(why, sizeof(why), "cannot be read as git reads it");
		rc = 1;
	} else if (strcmp(name, "strategy") == 0) {
		/* git takes the whole file but one trailing newline (read_oneliner):
		 * "resolve\n/../pay" is git-merge-resolve\n/../pay (red team 33-25) */
		size_t len = got;

		if (len > 0 && buf[len - 1] == '\n' && --len > 0 && buf[len - 1] == '\r')
			len--;
		rc = !strategy_builtin(buf, len) &&
		    snprintf(why, sizeof(why), "names the merge program git-merge-%.*s",
		    len > 40 ? 40 : (int)len, buf) > 0;
	}
	else if (strcmp(name, "apply-opt") == 0)
		rc = apply_opt_runs(buf, why, sizeof(why));
	else if (strcmp(name, "strategy_opts") == 0)
		rc = strategy_opts_run(buf, why, sizeof(why));
	else if (strcmp(name, "opts") == 0)
		rc = opts_runs(buf, why, sizeof(why));
	else
		rc = todo_runs(buf, why, sizeof(why));
	free(buf);
	if (rc)
		snprintf(what, whatsz, "%.64s (%.95s)", name, why);
	return rc;
}

static int
changed_since(const struct stat *st, long long since)
{
	return since == 0 || (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec >=
	    since - CLOCK_SLACK_NS;
}

/* gitdir (fd gfd)'s state directory name: 1 when changed since and
 * holding what git runs (what), else 0. */
static int
state_planted(int gfd, const char *name, long long since, char *what, size_t whatsz)
{
	char why[192] = "";
	struct stat st, es;
	struct dirent *de;
	DIR *d;
	int sfd, fresh;

	if (fstatat(gfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;	/* none (or gone) */
	fresh = changed_since(&st, since);
	if (S_ISLNK(st.st_mode)) {
		/* git follows it to what no look here covers */
		snprintf(what, whatsz, "%s (a symbolic link)", name);
		return fresh;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;	/* git takes no rebase for in progress */
	if ((sfd = openat(gfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(sfd)) == NULL) {
		if (sfd >= 0)
			close(sfd);
		snprintf(what, whatsz, "%s (cannot be listed)", name);
		return fresh;
	}
	/* every entry is read: one changed may make another matter */
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0 && why[0] == '\0')
				snprintf(why, sizeof(why), "cannot be listed");
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &es, AT_SYMLINK_NOFOLLOW) < 0) {
			if (why[0] == '\0')
				snprintf(why, sizeof(why), "%.64s cannot be looked at", de->d_name);
			continue;
		}
		fresh |= changed_since(&es, since);
		if (why[0] != '\0')
			continue;
		if (!S_ISREG(es.st_mode))
			snprintf(why, sizeof(why), "%.64s is not a regular file", de->d_name);
		else
			(void)file_runs(dirfd(d), de->d_name, why, sizeof(why));
	}
	closedir(d);
	if (why[0] == '\0' || !fresh)
		return 0;
	snprintf(what, whatsz, "%s/%s", name, why);
	return 1;
}

int
sb_git_seq_planted(const char *gitdir, long long since, const char **name, char *what,
    size_t whatsz)
{
	size_t i;
	int gfd, rc = 0;

	if ((gfd = open(gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;	/* gone, or not a directory now: the scan sees to that */
	for (i = 0; states[i] != NULL && rc == 0; i++)
		if ((rc = state_planted(gfd, states[i], since, what, whatsz)) != 0)
			*name = states[i];
	close(gfd);
	return rc;
}
