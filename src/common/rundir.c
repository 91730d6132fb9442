/*
 * rundir.c - root's run-time directories (rundir.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rundir.h"

int
ag_rundir_root_only(const char *path, struct ag_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0)
		return ag_err_set(err, "%s must be a directory of root's that only root "
		    "can write", path);
	return 0;
}

static int
root_dir(const char *path, struct ag_err *err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return ag_err_set(err, "cannot create %s: %s", path, strerror(errno));
	return ag_rundir_root_only(path, err);
}

static int
group_dir(const char *path, gid_t gid, struct ag_err *err)
{
	struct stat st;

	if (mkdir(path, 03770) < 0 && errno != EEXIST)
		return ag_err_set(err, "cannot create %s: %s", path, strerror(errno));
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return ag_err_set(err, "%s is not root's directory", path);
	if ((st.st_gid != gid || (st.st_mode & 07777) != 03770) &&
	    (chown(path, 0, gid) < 0 || chmod(path, 03770) < 0))
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	return 0;
}

int
ag_rundir_make(struct ag_err *err)
{
	struct group *gr;

	if (root_dir(AG_RUNDIR, err) < 0 || root_dir(AG_RUNDIR_SSHD, err) < 0)
		return -1;
	if ((gr = getgrnam(AG_GROUP)) == NULL)
		return ag_err_set(err, "no group %s: no registry of live sessions, no limit "
		    "on token guessing", AG_GROUP);
	if (group_dir(AG_RUNDIR_SESSIONS, gr->gr_gid, err) < 0 ||
	    group_dir(AG_RUNDIR_FAILURES, gr->gr_gid, err) < 0 ||
	    group_dir(AG_RUNDIR_SCANS, gr->gr_gid, err) < 0 ||
	    group_dir(AG_RUNDIR_APPROVALS, gr->gr_gid, err) < 0)
		return -1;
	return 0;
}
