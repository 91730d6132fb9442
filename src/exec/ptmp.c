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
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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
	snprintf(shown, sizeof(shown), "%s/%s/tmp", tmp_base, name);
	if ((tfd = own_dir(idfd, "tmp", shown, 0, why, whylen)) >= 0)
		clean(idfd, tfd, max_age > 0 ? max_age : AG_TMP_AGE_DEFAULT);
	close(idfd);
	return tfd;
}
