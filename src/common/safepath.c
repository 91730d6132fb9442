/*
 * safepath.c - the StrictModes walk (see safepath.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/safepath.h"

static void
owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res != NULL)
		snprintf(buf, len, "%s (uid %lu)", res->pw_name, (unsigned long)uid);
	else
		snprintf(buf, len, "uid %lu", (unsigned long)uid);
}

/* want: S_IFREG or S_IFDIR, what path itself must be */
static int
safe_walk(const char *path, mode_t want, uid_t trusted, struct stat *filest, char **realp,
    struct ag_err *err)
{
	struct stat st;
	char *real, *walk, who[128], ok[160];
	size_t len;
	int is_file = want == S_IFREG, first = 1;

	*realp = NULL;
	if ((real = realpath(path, NULL)) == NULL)
		return ag_err_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
	if ((walk = strdup(real)) == NULL) {
		free(real);
		return ag_err_at(err, path, 0, 0, "out of memory");
	}
	if (trusted == 0)
		snprintf(ok, sizeof(ok), "root");
	else {
		owner_name(trusted, who, sizeof(who));
		snprintf(ok, sizeof(ok), "root or %s", who);
	}
	len = strlen(walk);
	for (;;) {
		if (stat(walk, &st) == -1) {
			ag_err_at(err, path, 0, 0, "cannot check %s: %s", walk,
			    strerror(errno));
			goto bad;
		}
		if (first) {
			if ((st.st_mode & S_IFMT) != want) {
				ag_err_at(err, path, 0, 0, "unsafe: %s is not a %s", walk,
				    is_file ? "regular file" : "directory");
				goto bad;
			}
			*filest = st;
			first = 0;
		}
		if (st.st_uid != 0 && st.st_uid != trusted) {
			owner_name(st.st_uid, who, sizeof(who));
			ag_err_at(err, path, 0, 0, "unsafe: %s %s is owned by %s; "
			    "it must be owned by %s (fix: chown root %s)",
			    is_file ? "file" : "directory", walk, who, ok, walk);
			goto bad;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
		    (is_file || st.st_uid != 0 || !(st.st_mode & S_ISVTX))) {
			ag_err_at(err, path, 0, 0, "unsafe: %s %s is writable by "
			    "%s (mode %04o); fix: chmod go-w %s",
			    is_file ? "file" : "directory", walk,
			    (st.st_mode & S_IWOTH) ? "everyone" : "its group",
			    (unsigned)(st.st_mode & 07777), walk);
			goto bad;
		}
		if (len == 1)
			break;
		/* Up one component; realpath gives no trailing '/' or "//". */
		while (len > 1 && walk[len - 1] != '/')
			len--;
		if (len > 1)
			len--;
		walk[len] = '\0';
		is_file = 0;
	}
	free(walk);
	*realp = real;
	return 0;
bad:
	free(walk);
	free(real);
	return -1;
}


int
ag_safe_path(const char *path, uid_t trusted, struct stat *filest, char **realp,
    struct ag_err *err)
{
	return safe_walk(path, S_IFREG, trusted, filest, realp, err);
}

int
ag_safe_dir(const char *path, uid_t trusted, struct stat *dirst, char **realp,
    struct ag_err *err)
{
	return safe_walk(path, S_IFDIR, trusted, dirst, realp, err);
}
