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
 * one of git's own samples, or a config key that names a program, is
 * reported, and commands are refused until it is gone.
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
#include <sys/stat.h>
#include <unistd.h>

#include "common/privsep.h"
#include "exec/sandbox_int.h"

#define CONFIG_MAX	(1024 * 1024)	/* bytes of a config looked at; past it: planted */

/* Keys that run a program, as "section.key", "section.*.key" (any
 * subsection) or "section.*" (every key of the section). */
static const char *const running[] = {
	"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.editor",
	"core.pager", "core.askpass", "core.gitproxy", "sequence.editor",
	"diff.external", "diff.*.textconv", "diff.*.command", "merge.*.driver",
	"filter.*", "credential.helper", "credential.*.helper", "include.path",
	"includeif.*", "gpg.program", "gpg.*.program", "pager.*",
	"uploadpack.packobjectshook", "remote.*.uploadpack", "remote.*.receivepack",
	"web.browser", "browser.*.cmd", "man.*.cmd", "difftool.*.cmd",
	"mergetool.*.cmd", "sendemail.sendmailcmd", "sendemail.smtpserver",
	"core.alternaterefscommand", "protocol.allow", "protocol.*.allow",
	NULL
};

static int
key_runs(const char *section, int has_sub, const char *key, const char *value)
{
	size_t i, sl = strlen(section);

	/* an alias or a submodule's update mode runs a shell when it begins with ! */
	if ((strcmp(section, "alias") == 0 && !has_sub) ||
	    (strcmp(section, "submodule") == 0 && has_sub && strcmp(key, "update") == 0))
		return value != NULL && value[strspn(value, " \t\"")] == '!';
	for (i = 0; running[i] != NULL; i++) {
		const char *r = running[i];

		if (strncmp(r, section, sl) != 0 || r[sl] != '.')
			continue;
		r += sl + 1;
		if (strcmp(r, "*") == 0)
			return 1;
		if (strncmp(r, "*.", 2) == 0 ? has_sub && strcmp(r + 2, key) == 0 :
		    !has_sub && strcmp(r, key) == 0)
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
 * One line of a config: a "[section "sub"]" header (which may carry a key
 * after it) and/or a "key = value".  1 when the key runs a program, its
 * name in what.
 */
static int
config_line(char *l, char *section, size_t secsz, int *has_sub, char *what, size_t whatsz)
{
	char *key, *value = NULL, *e;
	size_t n;

	l += strspn(l, " \t");
	if (*l == '[') {
		if ((e = strchr(l, ']')) == NULL)
			return 0;
		*e = '\0';
		n = strcspn(l + 1, " \t.\"");
		*has_sub = l[1 + n] != '\0';
		if (n >= secsz)
			n = secsz - 1;
		memcpy(section, l + 1, n);
		section[n] = '\0';
		lower(section);
		l = e + 1;
		l += strspn(l, " \t");
	}
	if (!isalpha((unsigned char)*l) || section[0] == '\0')
		return 0;
	key = l;
	n = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
	if (key[n] != '\0') {
		value = key + n;
		value += strspn(value, " \t");
		value = *value == '=' ? value + 1 : NULL;
		key[n] = '\0';
	}
	lower(key);
	if (!key_runs(section, *has_sub, key, value))
		return 0;
	snprintf(what, whatsz, "%s%s.%s", section, *has_sub ? ".*" : "", key);
	return 1;
}

/* path, a config file: 1 planted (the key in what), 0 not, or absent. */
static int
config_runs(const char *path, char *what, size_t whatsz)
{
	char section[64] = "", key[96], *buf, *l, *next;
	struct stat st;
	ssize_t n;
	int fd, has_sub = 0, found = 0;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (st.st_size > CONFIG_MAX || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		snprintf(what, whatsz, "%s (too large to read)", path);
		return 1;
	}
	do
		n = read(fd, buf, (size_t)st.st_size);
	while (n < 0 && errno == EINTR);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (l = buf; l != NULL && !found; l = next) {
		if ((next = strchr(l, '\n')) != NULL)
			*next++ = '\0';
		found = config_line(l, section, sizeof(section), &has_sub, key, sizeof(key));
	}
	free(buf);
	if (found)
		snprintf(what, whatsz, "%s (%s)", path, key);
	return found;
}

static int
ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

static const char *const configs[] = { "config", "config.worktree", NULL };
static const char *const quarantined[] = { "config.planted", "config.worktree.planted", NULL };

int
sb_git_planted(const char *gitdir, char *what, size_t whatsz)
{
	char p[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	size_t i;
	int found = 0;

	for (i = 0; configs[i] != NULL; i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", gitdir, configs[i]) < sizeof(p) &&
		    config_runs(p, what, whatsz))
			return 1;
	for (i = 0; quarantined[i] != NULL; i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", gitdir, quarantined[i]) < sizeof(p) &&
		    lstat(p, &st) == 0) {
			snprintf(what, whatsz, "%s", p);
			return 1;
		}
	if ((size_t)snprintf(p, sizeof(p), "%s/hooks", gitdir) >= sizeof(p) ||
	    (d = opendir(p)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    ends_with(de->d_name, ".sample"))
			continue;
		snprintf(what, whatsz, "%s/%s", p, de->d_name);
		found = 1;
	}
	closedir(d);
	return found;
}

/*
 * What sb_git_planted finds, renamed where git does not look: a hook
 * NAME to NAME.planted, a config to config.planted (git works without
 * one).  The names stay, and refuse commands, until someone removes them.
 */
void
sb_git_disarm(const char *gitdir)
{
	char p[PATH_MAX], to[NAME_MAX + 1], what[PATH_MAX + 128];
	struct dirent *de;
	DIR *d;
	size_t i;

	for (i = 0; configs[i] != NULL; i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", gitdir, configs[i]) < sizeof(p) &&
		    config_runs(p, what, sizeof(what)))
			(void)ag_privsep_rename_nofollow(gitdir, configs[i], quarantined[i]);
	if ((size_t)snprintf(p, sizeof(p), "%s/hooks", gitdir) >= sizeof(p) ||
	    (d = opendir(p)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    !ends_with(de->d_name, ".sample") && !ends_with(de->d_name, ".planted") &&
		    (size_t)snprintf(to, sizeof(to), "%s.planted", de->d_name) < sizeof(to))
			(void)ag_privsep_rename_nofollow(p, de->d_name, to);
	closedir(d);
}
