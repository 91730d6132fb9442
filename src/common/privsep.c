/*
 * privsep.c - the gateway's one privilege, a group (see privsep.h).
 *
 * The model is ssh-keysign's and crontab's: no daemon, a set-group-ID
 * program that holds what its caller must not, and treats everything the
 * caller hands it (arguments, environment, fds, limits) as hostile.
 */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"

extern char **environ;

static gid_t caller_gid = (gid_t)-1;	/* the real gid at entry */
static gid_t priv_gid = (gid_t)-1;	/* the effective gid at entry */
static int holding;

/* a handful: the audit log, its spool and lock, a recording */
#define PRIVATE_FDS	8
static int private_fds[PRIVATE_FDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };

int
ag_privsep_entry(struct ag_err *err)
{
	struct rlimit no_core = { 0, 0 };
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int fd;

	/* a closed 0, 1 or 2 would be the audit log's fd soon, and our
	 * error messages would land in it */
	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd < 0)
		return ag_err_set(err, "/dev/null: %s", strerror(errno));
	close(fd);
	/*
	 * What the gateway frees is overwritten: the policy file's text and
	 * the parser's copies of it hold every identity's token hash, and the
	 * gateway's children are copies of its memory, some of which the
	 * account's other processes may read before they exec (the keeper
	 * execs afresh; see ag_config_forget_tokens for what is still held).
	 */
	(void)mallopt(M_PERTURB, 0x5a);
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return ag_err_set(err, "getresuid: %s", strerror(errno));
	if (eu != ru || su != ru)
		return ag_err_set(err, "agentgate is installed set-user-ID (uid %lu); it is "
		    "meant to be set-group-ID only: chmod u-s on it", (unsigned long)eu);
	caller_gid = rg;
	priv_gid = eg;
	holding = eg != rg;
	if (!holding)
		return 0;
	/* the kernel already does both for a set-ID exec; said, not assumed */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ag_err_set(err, "PR_SET_DUMPABLE: %s", strerror(errno));
	(void)setrlimit(RLIMIT_CORE, &no_core);
	/* whatever else the caller left open is not ours to pass on */
	ag_close_range(3, ~0U);
	return 0;
}

int
ag_privsep_holding(void)
{
	return holding;
}

/* The variables the gateway reads; everything else is the client's. */
static int
wanted(const char *name, size_t n)
{
	static const char *const keep[] = {
		"SSH_ORIGINAL_COMMAND", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY",
		"TERM", "LANG", "TZ", "PATH", "HOME", "USER", "LOGNAME",
		"SHELL", "AGENTGATE_TOKEN",
	};
	size_t i;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strlen(keep[i]) == n && memcmp(keep[i], name, n) == 0)
			return 1;
	if (n > 3 && memcmp(name, "LC_", 3) == 0) {
		for (i = 3; i < n; i++)
			if (!isupper((unsigned char)name[i]) && name[i] != '_')
				return 0;
		return 1;
	}
	return 0;
}

int
ag_privsep_scrub_env(struct ag_err *err)
{
	/* 14 names and the LC_ family: never near this bound */
	static char *kept[64];
	size_t nkept = 0, i, j, n;
	char **ep;

	for (ep = environ; ep != NULL && *ep != NULL; ep++) {
		const char *eq = strchr(*ep, '=');
		int dup = 0;

		if (eq == NULL || eq == *ep)
			continue;
		n = (size_t)(eq - *ep);
		for (i = 0; i < n; i++)
			if (!(isalnum((unsigned char)(*ep)[i]) || (*ep)[i] == '_'))
				break;
		if (i < n || isdigit((unsigned char)(*ep)[0]) || !wanted(*ep, n))
			continue;
		/* the first one counts, as for getenv(); a second copy further
		 * down must not be what a library or a child finds instead */
		for (j = 0; j < nkept && !dup; j++)
			dup = strncmp(kept[j], *ep, n + 1) == 0;
		if (dup)
			continue;
		if (nkept == sizeof(kept) / sizeof(kept[0]) - 1)
			return ag_err_set(err, "too many locale variables in the environment");
		kept[nkept++] = *ep;
	}
	kept[nkept] = NULL;
	environ = kept;
	return 0;
}

/*
 * Real, effective and saved gid back to the caller's, and checked: a
 * silent failure would hand the agent the audit log.
 */
static int
give_up_group(int (*setres)(gid_t, gid_t, gid_t))
{
	gid_t r, e, s;

	if (!holding)
		return 0;
	if (setres(caller_gid, caller_gid, caller_gid) < 0)
		return -1;
	if (getresgid(&r, &e, &s) < 0 || r != caller_gid || e != caller_gid || s != caller_gid ||
	    (geteuid() != 0 && setres((gid_t)-1, priv_gid, (gid_t)-1) == 0)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * The system call itself, not glibc's wrapper: setresgid(3) in a process
 * that once had threads (the exec supervisor's) signals them all through
 * shared state, and a child may share the gateway's memory until it
 * execs.  A child has one thread, so the call covers all of it.
 */
static int
sys_setresgid(gid_t r, gid_t e, gid_t s)
{
	return (int)syscall(SYS_setresgid, r, e, s);
}

/* The gateway's own fds, closed (and forgotten, when the memory is ours). */
static void
close_private(int forget)
{
	size_t i;

	for (i = 0; i < PRIVATE_FDS; i++)
		if (private_fds[i] >= 0) {
			close(private_fds[i]);
			if (forget)
				private_fds[i] = -1;
		}
}

int
ag_privsep_drop(struct ag_err *err)
{
	if (!holding)
		return 0;
	close_private(1);
	/* the whole process, whatever threads it has: glibc's call */
	if (give_up_group(setresgid) < 0)
		return ag_err_set(err, "cannot give up group %lu: %s", (unsigned long)priv_gid,
		    strerror(errno));
	holding = 0;
	return 0;
}

int
ag_privsep_private_fd(int fd)
{
	size_t i;

	for (i = 0; fd >= 0 && i < PRIVATE_FDS; i++)
		if (private_fds[i] < 0) {
			private_fds[i] = fd;
			return fd;
		}
	return fd;	/* more than we ever open: still closed on exec */
}

int
ag_privsep_close(int *fd)
{
	size_t i;
	int rc;

	if (*fd < 0)
		return 0;
	for (i = 0; i < PRIVATE_FDS; i++)
		if (private_fds[i] == *fd)
			private_fds[i] = -1;
	rc = close(*fd);
	*fd = -1;
	return rc;
}

void
ag_privsep_close_others(const int *keep, size_t nkeep)
{
	int fds[PRIVATE_FDS + 16], n = 0, i, j, t;
	unsigned next = 3;
	size_t k;

	for (k = 0; k < PRIVATE_FDS; k++)
		if (private_fds[k] >= 3)
			fds[n++] = private_fds[k];
	for (k = 0; k < nkeep && n < (int)(sizeof(fds) / sizeof(fds[0])); k++)
		if (keep[k] >= 3)
			fds[n++] = keep[k];
	for (i = 1; i < n; i++)		/* a handful: insertion sort */
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if ((unsigned)fds[i] > next)
			ag_close_range(next, (unsigned)fds[i] - 1);
		if ((unsigned)fds[i] + 1 > next)
			next = (unsigned)fds[i] + 1;
	}
	ag_close_range(next, ~0U);
}

int
ag_privsep_child_exec(void)
{
	close_private(0);
	return give_up_group(sys_setresgid);
}

int
ag_privsep_child(void)
{
	close_private(1);
	return give_up_group(sys_setresgid);
}

/* Switching between the two gids we hold cannot fail; if it did, going on
 * would open a caller's path with our group. */
static void
set_egid(gid_t g)
{
	if (setresgid((gid_t)-1, g, (gid_t)-1) < 0 || getegid() != g) {
		ag_log(LOG_CRIT, "cannot switch to group %lu: %s", (unsigned long)g,
		    strerror(errno));
		abort();
	}
}

void
ag_privsep_as_caller(void)
{
	if (holding)
		set_egid(caller_gid);
}

void
ag_privsep_as_gateway(void)
{
	if (holding)
		set_egid(priv_gid);
}

/*
 * dir opened a part at a time from "/", following no link: O_NOFOLLOW on
 * every part (openat2's RESOLVE_NO_SYMLINKS would do, but not under
 * valgrind, which does not know it).  An O_PATH fd, or -1 with errno.
 */
static int
open_dir_nofollow(const char *dir)
{
	char part[NAME_MAX + 1];
	const char *p = dir, *e;
	int fd, next;

	if (*p != '/') {
		errno = EINVAL;
		return -1;
	}
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			return fd;
		for (e = p; *e != '\0' && *e != '/'; e++)
			;
		if ((size_t)(e - p) > NAME_MAX || (e - p == 2 && p[0] == '.' && p[1] == '.') ||
		    (e - p == 1 && p[0] == '.')) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(part, p, (size_t)(e - p));
		part[e - p] = '\0';
		next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p = e;
	}
}

enum nofollow_op { NF_MKDIR, NF_CREATE, NF_RENAME, NF_OPEN };

/* One operation on names in dir, walked as above, as the caller. */
static int
in_dir_nofollow(enum nofollow_op op, const char *dir, const char *name, const char *to,
    mode_t mode)
{
	int fd, f, rc = -1, e;

	ag_privsep_as_caller();
	if ((fd = open_dir_nofollow(dir)) >= 0) {
		switch (op) {
		case NF_MKDIR:
			rc = mkdirat(fd, name, mode);
			break;
		case NF_CREATE:
			f = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
			rc = f < 0 ? -1 : close(f);
			break;
		case NF_RENAME:
			rc = renameat(fd, name, fd, to);
			break;
		case NF_OPEN:	/* dir itself, for a listing: the fd */
			rc = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			break;
		}
		e = errno;
		close(fd);
		errno = e;
	}
	e = errno;
	ag_privsep_as_gateway();
	errno = e;
	return rc;
}

int
ag_privsep_mkdir_nofollow(const char *dir, const char *name, mode_t mode)
{
	return in_dir_nofollow(NF_MKDIR, dir, name, NULL, mode);
}

int
ag_privsep_create_nofollow(const char *dir, const char *name, mode_t mode)
{
	return in_dir_nofollow(NF_CREATE, dir, name, NULL, mode);
}

int
ag_privsep_rename_nofollow(const char *dir, const char *from, const char *to)
{
	return in_dir_nofollow(NF_RENAME, dir, from, to, 0);
}

int
ag_privsep_open_dir_nofollow(const char *dir)
{
	return in_dir_nofollow(NF_OPEN, dir, NULL, NULL, 0);
}

gid_t
ag_privsep_serve_gid(void)
{
	struct group *gr;

	if (holding)
		return priv_gid;
	if (geteuid() != 0 || (gr = getgrnam(AG_GROUP)) == NULL)
		return (gid_t)-1;
	return gr->gr_gid;
}

int
ag_privsep_serve_session(const char *user, uid_t uid, gid_t gid, struct ag_err *err)
{
	gid_t keep = ag_privsep_serve_gid();
	gid_t e = keep != (gid_t)-1 ? keep : gid;

	if (geteuid() != 0) {
		if (getuid() != uid || geteuid() != uid)
			return ag_err_set(err, "not running as %s", user);
		return 0;
	}
	if (initgroups(user, gid) < 0)
		return ag_err_set(err, "initgroups(%s): %s", user, strerror(errno));
	if (setresgid(gid, e, e) < 0)
		return ag_err_set(err, "setresgid: %s", strerror(errno));
	if (setresuid(uid, uid, uid) < 0)
		return ag_err_set(err, "setresuid: %s", strerror(errno));
	/* verify: a silent failure here would run commands as root */
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != e)
		return ag_err_set(err, "privileges not dropped");
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return ag_err_set(err, "root privileges could be regained");
	caller_gid = gid;
	priv_gid = e;
	holding = e != gid;
	/* the uid change made us not dumpable; a server that never was root
	 * needs it said */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ag_err_set(err, "PR_SET_DUMPABLE: %s", strerror(errno));
	return 0;
}

/*
 * The group whose members may write the gateway's records: the one held,
 * or for root that was not given it (serve under systemd's
 * NoNewPrivileges, which ignores the set-group-ID bit) the configured one.
 */
static int
gateway_gid(gid_t g)
{
	gid_t ours = ag_privsep_serve_gid();
	struct group *gr;

	if (ours != (gid_t)-1 && g == ours)
		return 1;
	/* a process whose own group is the gateway's: sshd's
	 * AuthorizedKeysCommandUser, a system user made with a primary group
	 * of that name, writes through the group as the set-group-ID gateway
	 * would (it holds nothing more, so it is not "holding") */
	return !holding && g == getegid() && (gr = getgrnam(AG_GROUP)) != NULL &&
	    gr->gr_gid == g;
}

int
ag_privsep_dir_ok(const struct stat *st, char *why, size_t len)
{
	if (!S_ISDIR(st->st_mode))
		snprintf(why, len, "not a directory");
	else if (st->st_mode & S_IWOTH)
		snprintf(why, len, "writable by others");
	else if ((st->st_mode & S_IWGRP) && !gateway_gid(st->st_gid))
		snprintf(why, len, "writable by group %lu", (unsigned long)st->st_gid);
	else if (holding && st->st_uid != 0)
		snprintf(why, len, "owned by uid %lu, not by root", (unsigned long)st->st_uid);
	else if (holding && (st->st_mode & S_IRWXO))
		/* the files in it are the agent's own uid's: a path to them is
		 * all the agent would need to rewrite them */
		snprintf(why, len, "open to others (mode %04o)", (unsigned)(st->st_mode & 07777));
	else
		return 0;
	return -1;
}

int
ag_privsep_file_ok(const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || (st->st_mode & S_IWOTH))
		return -1;
	if ((st->st_mode & S_IWGRP) && !gateway_gid(st->st_gid))
		return -1;
	return 0;
}

mode_t
ag_privsep_shared_mode(int fd, mode_t mode)
{
	gid_t g = ag_privsep_serve_gid();	/* held, or root's configured one */

	if (g == (gid_t)-1)
		return mode;
	/* every agent account's gateway appends to it, through the group */
	if (fchown(fd, (uid_t)-1, g) < 0)
		return mode;
	return (mode_t)(mode | ((mode & 0600) >> 3));
}

int
ag_privsep_group_dir(const struct stat *st)
{
	return (st->st_mode & S_ISGID) && gateway_gid(st->st_gid);
}

int
ag_privsep_keys_caller(void)
{
	struct passwd *pw;
	uid_t uid = getuid();

	if (uid == 0)
		return 1;
	return (pw = getpwnam(AG_GROUP)) != NULL && pw->pw_uid == uid;
}
