/*
 * gitlinks.c - the files by which git finds a git directory somewhere else.
 *
 * Why: the repository scan (namespace.c) binds the config and hooks of
 * every git directory beneath the write roots read-only.  git does not
 * only use the directory it stands in: a `.git` file ("gitdir: PATH") in
 * a work tree, or a `commondir` file in a git directory, sends it to
 * another directory's config and hooks.  Those names are the agent's to
 * write, so the scan reads them each time and protects (or refuses) what
 * they point to.  What git accepts as a git directory is checked here the
 * way git checks it (setup.c, is_git_directory): HEAD, and objects/ and
 * refs/ in the common directory, links followed (of any file type: git
 * checks only that it may search them).
 */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

#include "exec/sandbox.h"
#include "exec/sandbox_int.h"

static int
exists_at(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) &&
	    stat(p, &st) == 0;
}

/* objects/ and refs/: git checks access(X_OK) only (a file passes), so
 * anything at the name counts; a dangling link too (fail closed). */
static int
any_at(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) &&
	    lstat(p, &st) == 0;
}

/*
 * The text of dir/name, a regular file (links followed, as git does; a
 * FIFO is not waited on), as git reads a .git file or commondir: the
 * whole file up to a NUL, its trailing CRs and LFs cut, a newline within
 * kept (a path git follows through a directory named "x\n": red team
 * 33-25, H2).  1 read, 0 absent or not a regular file, -1 too long to be
 * a path.
 */
static int
pointer_text(const char *dir, const char *name, char *out, size_t outsz)
{
	char p[PATH_MAX];
	struct stat st;
	size_t got = 0, len;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) >= sizeof(p) ||
	    (fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	while (got < outsz - 1) {
		n = read(fd, out + got, outsz - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	out[got] = '\0';
	if (got == outsz - 1 && strlen(out) == got)
		return -1;
	for (len = strlen(out); len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'); len--)
		out[len - 1] = '\0';
	return 1;
}

int
sb_git_kind(const char *dir)
{
	char common[PATH_MAX];
	int kind = 0;

	if (!exists_at(dir, "HEAD"))
		return 0;
	if (exists_at(dir, "commondir"))
		kind |= SD_COMMONDIR;
	if (any_at(dir, "objects") && any_at(dir, "refs"))
		return kind | SD_GITDIR;
	if ((kind & SD_COMMONDIR) && sb_git_pointer(dir, "commondir", NULL, common,
	    sizeof(common)) > 0 && any_at(common, "objects") && any_at(common, "refs"))
		return kind | SD_GITDIR;
	return 0;
}

/*
 * A pointer the gateway cannot resolve as git will: through a magic link
 * (/proc/self/cwd, /proc/PID/root: the gateway's process is not git's),
 * or anywhere in /proc; or into a persistent /tmp (the agent writes it as
 * /tmp, outside the write roots, so what lies there is not protected).
 */
static int
in_proc(const char *path)
{
	path += strspn(path, "/");
	return strncmp(path, "proc", 4) == 0 && (path[4] == '/' || path[4] == '\0');
}

int
sb_git_resolves_otherwise(const char *target, const char *real)
{
	struct open_how how;
	const char *base = ag_sandbox_tmp_base();
	int fd;

	if (in_proc(target))
		return 1;
	/* a link elsewhere to a magic link: ELOOP (ENOENT: nothing there, as
	 * the gateway resolves it; git, resolving as itself, might find one,
	 * but only through a magic link or /proc, caught here) */
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_NO_MAGICLINKS;
	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof(how))) >= 0)
		close(fd);
	else if (errno == ELOOP)
		return 1;
	return real != NULL && (in_proc(real) || (base != NULL && sb_path_within(real, base)));
}

int
sb_git_pointer(const char *dir, const char *name, const char *prefix, char *out, size_t outsz)
{
	char line[PATH_MAX + 16], joined[PATH_MAX * 2 + 2];
	const char *target = line;
	int rc;

	if ((rc = pointer_text(dir, name, line, sizeof(line))) <= 0)
		return rc;
	if (prefix != NULL) {
		if (strncmp(line, prefix, strlen(prefix)) != 0)
			return 0;	/* git refuses it: nothing is followed */
		target += strlen(prefix);
	}
	if (*target == '\0')
		return 0;
	/* relative to the directory that holds the file, as git reads it */
	if (*target != '/') {
		if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", dir, target) >= PATH_MAX)
			return -1;
		target = joined;
	}
	if (outsz < PATH_MAX)
		return -1;
	if (sb_git_resolves_otherwise(target, NULL))
		return -2;
	if (realpath(target, out) == NULL)
		return errno == ENAMETOOLONG || errno == ELOOP ? -1 : 0;
	return sb_git_resolves_otherwise(target, out) ? -2 : 1;
}

static int
within_any(const struct plist *roots, const char *path)
{
	size_t i;

	for (i = 0; roots != NULL && i < roots->n; i++)
		if (sb_path_within(path, roots->v[i]))
			return 1;
	return 0;
}

/*
 * core.worktree walked a name at a time, as the kernel walks it for git's
 * chdir: "." skipped, ".." to the parent of where the walk stands (which
 * is canonical, so that is the real parent), a link the system put above
 * the write roots followed.  A link beneath a write root is the agent's
 * to repoint after the check, so the walk stops there; a name that does
 * not exist (yet) is taken as written.
 */
/*
 * A link no process of the account can change: root's, in a directory
 * that is root's and writable by no one else.  A link of the account's
 * anywhere (the persistent /tmp's host directory, a sticky /tmp) can be
 * pointed elsewhere after the check (red team 33-25, H7).
 */
static int
link_fixed(const char *path, const struct stat *st)
{
	char dir[PATH_MAX];
	struct stat ds;
	char *slash;

	if (st->st_uid != 0 || snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    (slash = strrchr(dir, '/')) == NULL)
		return 0;
	slash[slash == dir ? 1 : 0] = '\0';
	return lstat(dir, &ds) == 0 && S_ISDIR(ds.st_mode) && ds.st_uid == 0 &&
	    !(ds.st_mode & (S_IWGRP | S_IWOTH));
}

int
sb_git_worktree_outside(const char *gitdir, const char *value, const struct plist *writes,
    char *bad, size_t badsz)
{
	char cur[PATH_MAX], next[PATH_MAX];
	const char *p = value;
	struct stat st;
	size_t n;
	int gone = 0;

	if (*p == '/')
		snprintf(cur, sizeof(cur), "/");
	else if (realpath(gitdir, cur) == NULL) {
		snprintf(bad, badsz, "%s", gitdir);
		return 1;
	}
	for (;;) {
		p += strspn(p, "/");
		if ((n = strcspn(p, "/")) == 0)
			break;
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (slash != NULL)
				slash[slash == cur ? 1 : 0] = '\0';
			p += n;
			continue;
		}
		if ((size_t)snprintf(next, sizeof(next), "%s/%.*s", strcmp(cur, "/") ? cur : "",
		    (int)n, p) >= sizeof(next)) {
			snprintf(bad, badsz, "%s", value);
			return 1;
		}
		p += n;
		if (!gone && lstat(next, &st) == 0) {
			if (S_ISLNK(st.st_mode)) {
				if (within_any(writes, next) || !link_fixed(next, &st) ||
				    realpath(next, cur) == NULL) {
					snprintf(bad, badsz, "%s", next);
					return 1;
				}
				continue;
			}
		} else if (!gone && errno != ENOENT) {
			snprintf(bad, badsz, "%s", next);
			return 1;
		} else
			gone = 1;
		memcpy(cur, next, strlen(next) + 1);
	}
	if (!within_any(writes, cur)) {
		snprintf(bad, badsz, "%s", cur);
		return 1;
	}
	return 0;
}
