/*
 * sshbind.c - the connection record sshd's PAM stack writes and the
 * gateway reads.  See sshbind.h for why the ancestry proves who wrote it.
 *
 * Record format (text, one file per sshd monitor, root's, 0644: it holds
 * the public half of the key a live connection used, nothing secret):
 *
 *   agentgate-sshbind 1
 *   pid <monitor pid>
 *   start <monitor start time, clock ticks since boot (/proc/PID/stat 22)>
 *   user <account>
 *   rhost <client address sshd gave PAM, or empty>
 *   <empty line>
 *   <SSH_AUTH_INFO_0, verbatim>
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/sshbind.h"
#include "common/misc.h"
#include "common/rundir.h"

#define MAGIC		"agentgate-sshbind 1\n"
#define MAX_RECORD	(AG_SSHBIND_MAX_INFO + 512)

/* 1 when every uid of PID (real, effective, saved, filesystem) is uid. */
static int
proc_all_uids(pid_t pid, uid_t uid)
{
	char path[64], line[256];
	unsigned long u[4];
	FILE *fp;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "Uid:", 4) != 0)
			continue;
		ok = sscanf(line + 4, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4 &&
		    u[0] == uid && u[1] == uid && u[2] == uid && u[3] == uid;
		break;
	}
	fclose(fp);
	return ok;
}

/* Records whose monitor has gone (killed before it could close its PAM
 * session) would otherwise pile up; a later monitor with the same pid has
 * another start time and never trusts them anyway. */
static void
sweep(void)
{
	DIR *d;
	struct dirent *de;

	if ((d = opendir(AG_SSHBIND_DIR)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX], buf[256], *end;
		unsigned long long start = 0, rstart;
		long pid;
		pid_t ppid;
		ssize_t n;
		int fd, stale;

		errno = 0;
		pid = strtol(de->d_name, &end, 10);
		if (errno != 0 || end == de->d_name || *end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", AG_SSHBIND_DIR, de->d_name);
		stale = ag_proc_stat((pid_t)pid, &ppid, &start, NULL) < 0;
		if (!stale && (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
			char *s;

			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			stale = (s = strstr(buf, "\nstart ")) == NULL ||
			    sscanf(s + 7, "%llu", &rstart) != 1 || rstart != start;
		}
		if (stale)
			(void)unlink(path);
	}
	closedir(d);
}

int
ag_sshbind_write(const char *user, const char *rhost, const char *auth_info,
    struct ag_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX], head[512];
	unsigned long long start;
	pid_t self = getpid(), ppid;
	size_t ilen;
	int fd, hl;

	if (geteuid() != 0)
		return ag_err_set(err, "bind: only sshd's privileged process (root) can "
		    "record a connection");
	if (user == NULL || *user == '\0' || strpbrk(user, "\n\r") != NULL)
		return ag_err_set(err, "bind: no valid user name");
	if (rhost == NULL || strlen(rhost) > 64 || strspn(rhost,
	    "0123456789abcdefABCDEF.:") != strlen(rhost))
		rhost = "";	/* a name, not an address: nothing to judge `from` by */
	if (auth_info == NULL)
		auth_info = "";
	if ((ilen = strlen(auth_info)) > AG_SSHBIND_MAX_INFO)
		return ag_err_set(err, "bind: SSH_AUTH_INFO_0 is longer than %d bytes",
		    AG_SSHBIND_MAX_INFO);
	/* root is here once per login: the run-time directories are made here
	 * (the group's ones too; without the group there are none, and the
	 * record is made all the same) */
	if (ag_rundir_make(err) < 0 && ag_rundir_root_only(AG_SSHBIND_DIR, err) < 0)
		return -1;
	if (ag_proc_stat(self, &ppid, &start, NULL) < 0)
		return ag_err_set(err, "bind: cannot read /proc/self/stat");
	sweep();
	hl = snprintf(head, sizeof(head), MAGIC "pid %ld\nstart %llu\nuser %s\nrhost %s\n\n",
	    (long)self, start, user, rhost);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return ag_err_set(err, "bind: user name too long");
	snprintf(path, sizeof(path), "%s/%ld", AG_SSHBIND_DIR, (long)self);
	snprintf(tmp, sizeof(tmp), "%s/.%ld.new", AG_SSHBIND_DIR, (long)self);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return ag_err_set(err, "bind: cannot create %s: %s", tmp, strerror(errno));
	if (fchmod(fd, 0644) < 0 || ag_write_all(fd, head, (size_t)hl, NULL) < 0 ||
	    ag_write_all(fd, auth_info, ilen, NULL) < 0) {
		ag_err_set(err, "bind: cannot write %s: %s", tmp, strerror(errno));
		close(fd);	/* sshd's monitor lives as long as the connection */
		(void)unlink(tmp);
		return -1;
	}
	if (close(fd) < 0) {
		ag_err_set(err, "bind: cannot write %s: %s", tmp, strerror(errno));
		(void)unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		ag_err_set(err, "bind: cannot install %s: %s", path, strerror(errno));
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

void
ag_sshbind_remove(void)
{
	char path[PATH_MAX];

	if (geteuid() != 0)
		return;
	snprintf(path, sizeof(path), "%s/%ld", AG_SSHBIND_DIR, (long)getpid());
	(void)unlink(path);
}

/* Read the whole record at fd, bounded. */
static char *
read_record(int fd, size_t *lenp, struct ag_err *err)
{
	char *buf;
	size_t len = 0;

	if ((buf = malloc(MAX_RECORD + 1)) == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, MAX_RECORD + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ag_err_set(err, "cannot read the connection record: %s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		if ((len += (size_t)r) > MAX_RECORD) {
			ag_err_set(err, "the connection record is too long");
			free(buf);
			return NULL;
		}
	}
	if (memchr(buf, '\0', len) != NULL) {
		ag_err_set(err, "the connection record holds a NUL byte");
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

enum ag_sshbind_result
ag_sshbind_read(const char *user, char **infop, char *rhost, size_t rhostlen,
    struct ag_err *err)
{
	char path[PATH_MAX], *buf, *info, expect[512];
	unsigned long long sstart, mstart;
	pid_t session = getppid(), monitor, mppid;
	struct stat st;
	size_t len;
	int fd, hl;

	*infop = NULL;
	if (rhostlen > 0)
		rhost[0] = '\0';
	/* Our parent must be a process of the account whose own parent is a
	 * monitor with a record; pid 1 (we were orphaned) is neither. */
	if (session <= 1 || ag_proc_stat(session, &monitor, &sstart, NULL) < 0 || monitor <= 1 ||
	    !proc_all_uids(session, getuid())) {
		ag_err_set(err, "not started by an sshd session of this account");
		return AG_SSHBIND_NONE;
	}
	if (ag_proc_stat(monitor, &mppid, &mstart, NULL) < 0 || !proc_all_uids(monitor, 0)) {
		ag_err_set(err, "not started by an sshd session of this account");
		return AG_SSHBIND_NONE;
	}
	if (lstat(AG_SSHBIND_DIR, &st) < 0 && errno == ENOENT) {
		ag_err_set(err, "sshd recorded no connection (is pam_agentgate.so bind in "
		    "sshd's PAM session stack, and UsePAM yes?)");
		return AG_SSHBIND_NONE;
	}
	if (ag_rundir_root_only(AG_RUNDIR, err) < 0 ||
	    ag_rundir_root_only(AG_SSHBIND_DIR, err) < 0)
		return AG_SSHBIND_BAD;
	snprintf(path, sizeof(path), "%s/%ld", AG_SSHBIND_DIR, (long)monitor);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)) < 0) {
		if (errno == ENOENT) {
			ag_err_set(err, "sshd recorded nothing for this connection (is "
			    "pam_agentgate.so bind in sshd's PAM session stack, and UsePAM yes?)");
			return AG_SSHBIND_NONE;
		}
		ag_err_set(err, "cannot open %s: %s", path, strerror(errno));
		return AG_SSHBIND_BAD;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		close(fd);
		ag_err_set(err, "%s is not a regular file of root's that only root can write",
		    path);
		return AG_SSHBIND_BAD;
	}
	buf = read_record(fd, &len, err);
	close(fd);
	if (buf == NULL)
		return AG_SSHBIND_BAD;
	hl = snprintf(expect, sizeof(expect), MAGIC "pid %ld\nstart %llu\nuser %s\nrhost ",
	    (long)monitor, mstart, user);
	if (hl < 0 || (size_t)hl >= sizeof(expect) || len < (size_t)hl ||
	    memcmp(buf, expect, (size_t)hl) != 0) {
		free(buf);
		ag_err_set(err, "%s is not the record of this connection (another "
		    "process, account or start time)", path);
		return AG_SSHBIND_BAD;
	}
	{
		const char *a = buf + hl, *nl = strchr(a, '\n');
		size_t n = nl != NULL ? (size_t)(nl - a) : 0;

		if (nl == NULL || nl[1] != '\n' || n >= rhostlen) {
			free(buf);
			ag_err_set(err, "%s is malformed", path);
			return AG_SSHBIND_BAD;
		}
		memcpy(rhost, a, n);
		rhost[n] = '\0';
		hl += (int)n + 2;
	}
	/* The session process was alive (still our parent) after we read its
	 * parent: its pid was not reused by another process meanwhile. */
	if (getppid() != session) {
		free(buf);
		ag_err_set(err, "the sshd session process went away");
		return AG_SSHBIND_BAD;
	}
	info = buf + hl;
	if (strncmp(info, AG_SSHBIND_REFUSE, strlen(AG_SSHBIND_REFUSE)) == 0) {
		ag_err_set(err, "sshd's PAM stack refused this connection to the gateway: %.300s",
		    info + strlen(AG_SSHBIND_REFUSE));
		free(buf);
		return AG_SSHBIND_BAD;
	}
	memmove(buf, info, len - (size_t)hl + 1);
	*infop = buf;
	return AG_SSHBIND_FOUND;
}
