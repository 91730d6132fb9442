/*
 * ptmp.c - the persistent /tmp of an identity (see sandbox.h, doc/sandbox.md).
 *
 * Why: a coding agent opens one connection per command, and a /tmp that is
 * a fresh tmpfs per session loses `make > /tmp/log` before the next call
 * reads it; the toolchains' caches (sandbox.c, ag_sandbox_cache_env) would
 * start empty at every call too.
 *
 * Where: AG_TMPDIR_BASE, root:group 1770.  Only a gateway holding the
 * privilege-separation group can enter it; the sticky bit keeps one
 * account's gateway from removing another's directories.  In it, one
 * directory per identity of an account (per account when there is no
 * identity), the account's own, mode 0700, holding tmp/ (bound on /tmp in
 * the session's namespace, from the fd opened here: no path is looked up
 * again) and the stamp of its last cleaning.  The account's processes
 * outside the gateway cannot reach it (they do not hold the group), nor
 * can another identity's session, whose /tmp is another directory.
 *
 * Cleaning: an entry nothing has read, written or changed for
 * limits.tmp_age is removed at a session's start, at most once an hour,
 * bounded in entries and depth; the walk goes by fd (openat, unlinkat,
 * O_NOFOLLOW), never follows a link and never leaves the file system.
 *
 * Whose: a uid outlives its account, and a new account given it must not
 * inherit a week of the old one's files and caches (red team 20, L1).  The
 * directory holds an "owner" file, the account's name and its home's
 * device and inode; when they differ from the account's (or it is
 * missing: a directory of an older gateway), the old tmp/ is set aside
 * and removed, and the session starts with an empty one.
 *
 * How much: it is host disk, beside the audit log on most hosts; the
 * gateway measures it (sb_ptmp_usage, its blocks, by fd as the cleaning
 * walks) when a session starts and after each command, and past
 * limits.tmp_disk refuses commands but those that clean up (command.c).
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/privsep.h"
#include "common/sha256.h"
#include "exec/sandbox_int.h"

#define CLEAN_EVERY	3600L		/* seconds between cleanings */
#define CLEAN_ENTRIES	100000		/* entries looked at per cleaning */
#define CLEAN_DEPTH	32		/* directories deeper are left alone */
#define STAMP		"cleaned"
#define OWNER		"owner"		/* whose: account name, home's dev and inode */
#define ASIDE		"old-"		/* a former owner's tmp, being removed */
#define USAGE_ENTRIES	1000000		/* entries a measure looks at, at most */
#define USAGE_DEPTH	64		/* deeper: not measured, refused */

static const char *tmp_base = AG_TMPDIR_BASE;

void
ag_sandbox_set_tmp_base(const char *dir)
{
	tmp_base = dir;
}

const char *
ag_sandbox_tmp_base(void)
{
	return tmp_base;
}

/* The identity's directory name: "UID" or "UID-NAME", a digest of the name
 * when it is not a plain one (the policy's names are, see config.c). */
void
sb_identity_key(const char *identity, char *out, size_t outsz)
{
	unsigned long uid = (unsigned long)getuid();
	size_t i, n = identity != NULL ? strlen(identity) : 0;
	int plain = n > 0 && n <= 64 && identity[0] != '.';

	for (i = 0; plain && i < n; i++)
		plain = (identity[i] >= 'a' && identity[i] <= 'z') ||
		    (identity[i] >= 'A' && identity[i] <= 'Z') ||
		    (identity[i] >= '0' && identity[i] <= '9') || strchr("._-", identity[i]) != NULL;
	if (identity == NULL)
		snprintf(out, outsz, "%lu", uid);
	else if (plain)
		snprintf(out, outsz, "%lu-%s", uid, identity);
	else {
		unsigned char md[AG_SHA256_LEN];
		struct ag_sha256 h;

		ag_sha256_init(&h);
		ag_sha256_update(&h, identity, n);
		ag_sha256_final(&h, md);
		snprintf(out, outsz, "%lu-=%02x%02x%02x%02x%02x%02x%02x%02x", uid, md[0], md[1],
		    md[2], md[3], md[4], md[5], md[6], md[7]);
	}
}

static time_t
newest(const struct stat *st)
{
	time_t t = st->st_mtim.tv_sec;

	if (st->st_atim.tv_sec > t)
		t = st->st_atim.tv_sec;
	if (st->st_ctim.tv_sec > t)
		t = st->st_ctim.tv_sec;
	return t;
}

/*
 * Remove what beneath dfd (opened for reading, consumed) is older than
 * cutoff.  A directory's own times are taken before its entries go (which
 * moves them), so an old tree goes in one cleaning.
 */
static void
clean_dir(int dfd, const struct stat *top, time_t cutoff, int depth, size_t *budget)
{
	struct dirent *de;
	DIR *d;

	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while (*budget > 0 && (de = readdir(d)) != NULL) {
		struct stat st, os;
		int sub;

		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		(*budget)--;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != top->st_dev)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			/* a link goes as a link: what it names is not looked at */
			if (newest(&st) < cutoff)
				(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (depth >= CLEAN_DEPTH)
			continue;
		/* swapped for a link or another directory since the stat: left */
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (sub < 0)
			continue;
		if (fstat(sub, &os) < 0 || os.st_dev != st.st_dev || os.st_ino != st.st_ino) {
			close(sub);
			continue;
		}
		clean_dir(sub, top, cutoff, depth + 1, budget);
		if (newest(&st) < cutoff)
			(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);	/* if empty */
	}
	closedir(d);
}

/* Clean tmp (beneath idfd) when the stamp says the last cleaning is old. */
static void
clean(int idfd, int tfd, long max_age)
{
	long every = max_age < CLEAN_EVERY ? max_age : CLEAN_EVERY;
	time_t now = time(NULL);
	struct stat st, top;
	size_t budget = CLEAN_ENTRIES;
	int fd;

	if (fstatat(idfd, STAMP, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_mtim.tv_sec <= now && now - st.st_mtim.tv_sec < every)
		return;
	if ((fd = openat(idfd, STAMP, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
		(void)futimens(fd, NULL);
		close(fd);
	}
	if ((fd = openat(tfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &top) < 0) {
		close(fd);
		return;
	}
	clean_dir(fd, &top, now - max_age, 0, &budget);
}

/* Remove the whole tree name beneath dfd (bounded: what is left is
 * removed by a later session's start). */
static void
remove_tree(int dfd, const char *name)
{
	struct stat top;
	size_t budget = CLEAN_ENTRIES;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &top) < 0) {
		close(fd);
		return;
	}
	/* a cutoff past every time: everything goes */
	clean_dir(fd, &top, (time_t)((~0ULL) >> 1), 0, &budget);
	(void)unlinkat(dfd, name, AT_REMOVEDIR);
}

/* The account's owner line: "NAME DEV INO\n" (its home's). */
static int
owner_line(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	struct stat st;

	if (pw == NULL || pw->pw_name == NULL)
		return -1;
	if (pw->pw_dir == NULL || stat(pw->pw_dir, &st) < 0)
		memset(&st, 0, sizeof(st));
	return snprintf(buf, len, "%s %llu %llu\n", pw->pw_name,
	    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino) < (int)len ? 0 : -1;
}

/*
 * The identity's directory idfd is this account's (the owner file says
 * so), or its tmp/ is set aside now and the owner file written; then
 * whatever was set aside is removed.  -1 with why when the owner cannot
 * be written (the session then has a tmpfs of its own).
 */
static int owner_settle(int idfd, const char *want, char *why, size_t whylen);

static int
owner_check(int idfd, char *why, size_t whylen)
{
	char want[400];
	struct dirent *de;
	int lk, rc, fd;
	DIR *d;

	if (owner_line(want, sizeof(want)) < 0) {
		snprintf(why, whylen, "the account is not in the password database");
		return -1;
	}
	/* one session at a time: another's fresh tmp is not set aside */
	if ((lk = openat(idfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    flock(lk, LOCK_EX) < 0) {
		snprintf(why, whylen, "cannot lock it: %s", strerror(errno));
		if (lk >= 0)
			close(lk);
		return -1;
	}
	rc = owner_settle(idfd, want, why, whylen);
	close(lk);
	if (rc < 0)
		return -1;
	/* what was set aside, now or by a session cut short; not under the
	 * lock: a long removal keeps no other session waiting */
	if ((fd = openat(idfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, ASIDE, strlen(ASIDE)) == 0)
			remove_tree(dirfd(d), de->d_name);
	closedir(d);
	return 0;
}

/* owner_check's part under the lock. */
static int
owner_settle(int idfd, const char *want, char *why, size_t whylen)
{
	char have[400], aside[64];
	ssize_t n = -1;
	int fd;

	if ((fd = openat(idfd, OWNER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		n = read(fd, have, sizeof(have) - 1);
		close(fd);
	}
	if (n < 0 || (size_t)n != strlen(want) || memcmp(have, want, (size_t)n) != 0) {
		/* another account's, or an older gateway's: not inherited */
		snprintf(aside, sizeof(aside), ASIDE "%ld-%ld", (long)time(NULL), (long)getpid());
		if (renameat(idfd, "tmp", idfd, aside) < 0 && errno != ENOENT) {
			snprintf(why, whylen, "cannot set a former owner's tmp aside: %s",
			    strerror(errno));
			return -1;
		}
		(void)unlinkat(idfd, STAMP, 0);
		(void)unlinkat(idfd, OWNER, 0);
		fd = openat(idfd, OWNER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, want, strlen(want)) != (ssize_t)strlen(want)) {
			snprintf(why, whylen, "cannot write its owner: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* One directory's blocks and its entries', into *used; stops past limit.
 * 0, 1 past limit, -1 not measured (why). */
static int
usage_dir(int dfd, dev_t dev, long long limit, long long *used, int depth, size_t *budget,
    char *why, size_t whylen)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		if ((*budget)-- == 0) {
			snprintf(why, whylen, "it holds over %d entries", USAGE_ENTRIES);
			rc = -1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;	/* gone since readdir */
		*used += (long long)st.st_blocks * 512;
		if (*used > limit) {
			rc = 1;
			break;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		if (depth >= USAGE_DEPTH) {
			snprintf(why, whylen, "a directory is nested over %d deep", USAGE_DEPTH);
			rc = -1;
			break;
		}
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (sub < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
			continue;	/* gone or swapped since the stat */
		if (sub < 0) {
			snprintf(why, whylen, "/tmp/.../%.200s cannot be read (%s): chmod u+rx "
			    "it, or remove it", de->d_name, strerror(errno));
			rc = -1;
			break;
		}
		rc = usage_dir(sub, dev, limit, used, depth + 1, budget, why, whylen);
	}
	closedir(d);
	return rc;
}

int
sb_ptmp_usage(int tfd, long long limit, long long *used, char *why, size_t whylen)
{
	size_t budget = USAGE_ENTRIES;
	struct stat st;
	int fd;

	*used = 0;
	if ((fd = openat(tfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*used = (long long)st.st_blocks * 512;
	return usage_dir(fd, st.st_dev, limit, used, 0, &budget, why, whylen);
}

/* fd of name beneath dfd, made first (mode 0700) if missing: a directory
 * of this uid's, not a link; -1 with why otherwise. */
static int
own_dir(int dfd, const char *name, const char *shown, int closed, char *why, size_t whylen)
{
	struct stat st;
	int fd;

	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", shown, strerror(errno));
		return -1;
	}
	if ((fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s: %s", shown, errno == ENOTDIR ?
		    "not a directory (a link?)" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (closed && (st.st_mode & 077) != 0)) {
		snprintf(why, whylen, "%s is not this account's own %sdirectory", shown,
		    closed ? "private " : "");
		close(fd);
		return -1;
	}
	return fd;
}

int
sb_ptmp_open(const char *identity, long max_age, char *why, size_t whylen)
{
	char name[96], shown[PATH_MAX];
	struct stat st;
	int bfd, idfd, tfd;

	if (!ag_privsep_holding()) {
		snprintf(why, whylen, "the gateway is not set-group-ID %s", AG_GROUP);
		return -1;
	}
	if ((bfd = open(tmp_base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s: %s", tmp_base, strerror(errno));
		return -1;
	}
	if (fstat(bfd, &st) < 0 || st.st_uid != 0 || st.st_gid != getegid() ||
	    (st.st_mode & 01777) != 01770) {
		snprintf(why, whylen, "%s is not root:%s, mode 1770", tmp_base, AG_GROUP);
		close(bfd);
		return -1;
	}
	sb_identity_key(identity, name, sizeof(name));
	snprintf(shown, sizeof(shown), "%s/%s", tmp_base, name);
	idfd = own_dir(bfd, name, shown, 1, why, whylen);
	close(bfd);
	if (idfd < 0)
		return -1;
	if (owner_check(idfd, why, whylen) < 0) {
		close(idfd);
		return -1;
	}
	snprintf(shown, sizeof(shown), "%s/%s/tmp", tmp_base, name);
	if ((tfd = own_dir(idfd, "tmp", shown, 0, why, whylen)) >= 0)
		clean(idfd, tfd, max_age > 0 ? max_age : AG_TMP_AGE_DEFAULT);
	close(idfd);
	return tfd;
}
