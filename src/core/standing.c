/*
 * standing.c - whether a live session's caller may still be here
 * (standing.h).
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

#include "common/account.h"
#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "common/rundir.h"
#include "common/sha256.h"
#include "common/sshkey.h"
#include "common/tokenrotate.h"
#include "core/standing.h"

static void
stat_into(struct ag_sha256 *h, const char *path)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	if (stat(path, &st) < 0)
		st.st_mode = (mode_t)-1;	/* gone is a state too */
	ag_sha256_update(h, path, strlen(path) + 1);
	ag_sha256_update(h, &st.st_dev, sizeof(st.st_dev));
	ag_sha256_update(h, &st.st_ino, sizeof(st.st_ino));
	ag_sha256_update(h, &st.st_mode, sizeof(st.st_mode));
	ag_sha256_update(h, &st.st_size, sizeof(st.st_size));
	ag_sha256_update(h, &st.st_mtim, sizeof(st.st_mtim));
	/* an in-place write that kept the mtime still moves the ctime */
	ag_sha256_update(h, &st.st_ctim, sizeof(st.st_ctim));
}

/*
 * The policy's files as they are: the main file, its agentgate.d and
 * every entry there (a fragment added, removed or rewritten).  The
 * directory is read whole, whatever its size: a fragment beyond a bound
 * would be one whose change went unseen.
 */
static void
stamp(const char *path, unsigned char out[32])
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], f[PATH_MAX];
	struct ag_sha256 h;
	struct dirent *de;
	DIR *d;

	ag_sha256_init(&h);
	stat_into(&h, path);
	if ((slash == NULL ? snprintf(dir, sizeof(dir), "%s", AG_CONFIG_FRAGDIR) :
	    snprintf(dir, sizeof(dir), "%.*s/%s", (int)(slash - path), path,
	    AG_CONFIG_FRAGDIR)) < (int)sizeof(dir)) {
		stat_into(&h, dir);
		if ((d = opendir(dir)) != NULL) {
			/* readdir's order is the directory's own, stable while it
			 * is unchanged; a change moves its mtime anyway */
			while ((de = readdir(d)) != NULL)
				if (snprintf(f, sizeof(f), "%s/%s", dir, de->d_name) <
				    (int)sizeof(f))
					stat_into(&h, f);
			closedir(d);
		}
	}
	ag_sha256_final(&h, out);
}

void
ag_standing_begin(struct ag_standing *s, const struct ag_config *cfg, const char *identity,
    const char *user, const char *key, const char *token, const char *profile)
{
	const struct ag_identity *id;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	snprintf(s->identity, sizeof(s->identity), "%s", identity ? identity : "");
	snprintf(s->user, sizeof(s->user), "%s", user ? user : "");
	snprintf(s->key, sizeof(s->key), "%s", key ? key : "");
	snprintf(s->token, sizeof(s->token), "%s", token ? token : "");
	snprintf(s->profile, sizeof(s->profile), "%s", profile ? profile : "");
	/* a rotated-out token ends with its window, file changed or not */
	if (strcmp(s->token, "previous") == 0 && cfg != NULL && s->identity[0] != '\0' &&
	    (id = ag_config_identity(cfg, s->identity)) != NULL && id->has_prev_token)
		s->token_until = id->prev_until;
	if (cfg != NULL && cfg->path != NULL) {
		s->path = cfg->path;
		stamp(s->path, s->stamp);
	}
}

/* 1 when one of the identity's keys has this fingerprint. */
static int
has_key(const struct ag_identity *id, const char *fp)
{
	char info[AG_SSHKEY_MAX_B64 + 256], f[128];
	size_t i;

	for (i = 0; i < id->keys.n; i++) {
		if (snprintf(info, sizeof(info), "publickey %s\n", id->keys.v[i]) >=
		    (int)sizeof(info))
			continue;
		if (ag_sshkey_fingerprint(info, f, sizeof(f)) == 0 && strcmp(f, fp) == 0)
			return 1;
	}
	return 0;
}

/* 1 when a key of was is not among now's. */
static int
lost_a_key(const struct ag_identity *was, const struct ag_identity *now)
{
	size_t i, j;

	for (i = 0; i < was->keys.n; i++) {
		for (j = 0; j < now->keys.n; j++)
			if (strcmp(was->keys.v[i], now->keys.v[j]) == 0)
				break;
		if (j == now->keys.n)
			return 1;
	}
	return 0;
}

static int
token_replaced(const struct ag_identity *was, const struct ag_identity *now)
{
	return was->has_token != now->has_token || was->has_token_hash != now->has_token_hash ||
	    (was->has_token && memcmp(was->token_sha256, now->token_sha256,
	    sizeof(was->token_sha256)) != 0) ||
	    (was->has_token_hash && memcmp(&was->token_hash, &now->token_hash,
	    sizeof(was->token_hash)) != 0);
}

/*
 * Whether now still takes the token a session of was logged in with
 * (token: "current" or "previous" of was): as its token_hash, or as its
 * previous_token before the until (then *until is that time, else 0).
 * 1 with why when it does not.
 */
static int
token_gone(const struct ag_identity *was, const struct ag_identity *now, const char *token,
    time_t *until, char *why, size_t whylen)
{
	const struct ag_token_hash *used;
	char when[32];

	*until = 0;
	if (strcmp(token, "previous") == 0) {
		if (!was->has_prev_token)
			goto replaced;
		used = &was->prev_token_hash;
	} else if (was->has_token_hash) {
		used = &was->token_hash;
	} else {
		/* token_sha256 has no previous: any change ends it */
		if (token_replaced(was, now))
			goto replaced;
		return 0;
	}
	if (now->has_token_hash && memcmp(used, &now->token_hash, sizeof(*used)) == 0)
		return 0;
	if (now->has_prev_token && memcmp(used, &now->prev_token_hash, sizeof(*used)) == 0) {
		if (time(NULL) < now->prev_until) {
			*until = now->prev_until;
			return 0;
		}
		ag_token_until_text(now->prev_until, when, sizeof(when));
		snprintf(why, whylen, "the previous token of identity %s, which this session "
		    "logged in with, stopped working at %s", was->name, when);
		return 1;
	}
replaced:
	snprintf(why, whylen, "the token of identity %s was replaced", was->name);
	return 1;
}

static int
judge(const struct ag_identity *was, const struct ag_config *now_cfg, const char *identity,
    const char *user, const char *key, const char *token, const char *profile,
    time_t *until, char *why, size_t whylen)
{
	const struct ag_identity *now;

	if (identity == NULL || *identity == '\0')
		return 0;	/* an account's session: only a lock ends it */
	if ((now = ag_config_identity(now_cfg, identity)) == NULL) {
		snprintf(why, whylen, "identity %s was removed from the policy", identity);
		return 1;
	}
	if (now->disabled) {
		snprintf(why, whylen, "identity %s was disabled", identity);
		return 1;
	}
	if (now->has_expires && time(NULL) >= now->expires) {
		snprintf(why, whylen, "identity %s has expired", identity);
		return 1;
	}
	if (user != NULL && *user != '\0' && !ag_identity_allows_account(now, user)) {
		snprintf(why, whylen, "identity %s may no longer log in as account %s (its "
		    "accounts: do not name it)", identity, user);
		return 1;
	}
	if (profile != NULL && *profile != '\0' && now->profile != NULL &&
	    strcmp(now->profile->name, profile) != 0) {
		snprintf(why, whylen, "identity %s was moved to profile %s", identity,
		    now->profile->name);
		return 1;
	}
	if (token != NULL && *token != '\0') {
		/* the key sshd saw is then only the transport's */
		if (was != NULL && token_gone(was, now, token, until, why, whylen))
			return 1;
	} else if (key != NULL && *key != '\0') {
		/*
		 * A certificate's fingerprint is no key's in the policy: then
		 * any key the identity lost may have been the one it certifies.
		 */
		if (!has_key(now, key) && (was == NULL || has_key(was, key) ||
		    lost_a_key(was, now))) {
			snprintf(why, whylen, "the key this session logged in with (%s) was "
			    "removed from identity %s", key, identity);
			return 1;
		}
	} else if (was != NULL && token_replaced(was, now)) {
		snprintf(why, whylen, "the token of identity %s was replaced", identity);
		return 1;
	}
	return 0;
}

int
ag_standing_judge(const struct ag_identity *was, const struct ag_config *now_cfg,
    const char *identity, const char *user, const char *key, const char *token,
    const char *profile, char *why, size_t whylen)
{
	time_t until;

	return judge(was, now_cfg, identity, user, key, token, profile, &until, why, whylen);
}

/*
 * A lock's file: "identity:NAME" or "account:NAME", so that no identity
 * name (any of letters, digits, '_', '-', '.', '@') can be taken for an
 * account's, nor for the temporary files, which start with '.'.
 */
static int
lock_file(char *path, size_t len, const char *dir, int account, const char *name)
{
	size_t n = strlen(name);

	/* "." and ".." are names like any other here: the prefix keeps the
	 * file in dir (the policy accepts them as identities) */
	if (n == 0 || n >= 128 || strchr(name, '/') != NULL || strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@$") != n)
		return -1;
	snprintf(path, len, "%s/%s:%s", dir, account ? "account" : "identity", name);
	return 0;
}

/* The lock file's reason; 1 locked, 0 not. */
static int
lock_read(const char *dir, int account, const char *name, char *why, size_t whylen)
{
	char path[PATH_MAX], buf[AG_LOCK_REASON_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (lock_file(path, sizeof(path), dir, account, name) < 0)
		return 0;	/* no identity or account is called that */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? 0 : (snprintf(why, whylen, "its lock cannot be read: %s",
		    strerror(errno)), 1);
	/* a lock only root can have made; anything else there still locks */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		close(fd);
		snprintf(why, whylen, "its lock file is not root's alone");
		return 1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(why, whylen, "%s", buf[0] ? buf : "locked by the administrator");
	return 1;
}

int
ag_lock_held(const char *identity, const char *user, char *why, size_t whylen)
{
	return ag_lock_held_in(AG_LOCKDIR, identity, user, why, whylen);
}

int
ag_lock_held_in(const char *dir, const char *identity, const char *user, char *why,
    size_t whylen)
{
	char reason[AG_LOCK_REASON_MAX];
	struct ag_err err;
	struct stat st;

	if (lstat(dir, &st) < 0)
		return 0;
	/* a directory the agent could write is one it could empty */
	ag_err_clear(&err);
	if (ag_rundir_root_only(dir, &err) < 0) {
		snprintf(why, whylen, "every identity is locked: %s", err.msg);
		return 1;
	}
	if (identity != NULL && *identity != '\0' && lock_read(dir, 0, identity, reason,
	    sizeof(reason))) {
		snprintf(why, whylen, "identity %s is locked: %s", identity, reason);
		return 1;
	}
	if (user != NULL && *user != '\0' && lock_read(dir, 1, user, reason, sizeof(reason))) {
		snprintf(why, whylen, "account %s is locked: %s", user, reason);
		return 1;
	}
	return 0;
}

/*
 * The gateway's own program was removed since it started (the package
 * removed or purged): what it would run next (the sandbox's preload, the
 * libraries it loads late) may be gone with it.  An upgrade puts a new
 * program at the same path, and sessions go on, as sshd's do.
 */
static int
exe_gone(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;

	if (n <= 0)
		return 0;
	self[n] = '\0';
	if ((size_t)n <= dl || strcmp(self + n - dl, deleted) != 0)
		return 0;
	self[n - dl] = '\0';
	return access(self, X_OK) < 0;
}

int
ag_standing_check(struct ag_standing *s, char *why, size_t whylen)
{
	const struct ag_identity *id;
	unsigned char now_stamp[32];
	struct ag_config *now;
	struct ag_err err;
	time_t until;
	int r;

	if (exe_gone()) {
		snprintf(why, whylen, "the gateway was removed from this host since the "
		    "session began");
		return 1;
	}
	if (ag_lock_held(s->identity, s->user, why, whylen))
		return 1;
	/* an expiry passes with no change to the file */
	if (s->identity[0] != '\0' && (id = ag_config_identity(s->cfg, s->identity)) != NULL &&
	    id->has_expires && time(NULL) >= id->expires) {
		snprintf(why, whylen, "identity %s has expired", s->identity);
		return 1;
	}
	if (s->token_until != 0 && time(NULL) >= s->token_until) {
		char when[32];

		ag_token_until_text(s->token_until, when, sizeof(when));
		snprintf(why, whylen, "the previous token of identity %s, which this session "
		    "logged in with, stopped working at %s", s->identity, when);
		return 1;
	}
	if (s->path == NULL)
		return 0;
	stamp(s->path, now_stamp);
	if (memcmp(now_stamp, s->stamp, sizeof(now_stamp)) == 0)
		return 0;
	memcpy(s->stamp, now_stamp, sizeof(now_stamp));
	ag_err_clear(&err);
	if (s->as_caller)
		ag_privsep_as_caller();
	now = ag_config_load(s->path, 0, &err);
	if (s->as_caller)
		ag_privsep_as_gateway();
	if (now == NULL) {
		/* not a revocation: the next login reports it (config_error) */
		ag_log(LOG_WARNING, "policy changed but does not load; this session keeps "
		    "the one it began with: %s", err.msg);
		return 0;
	}
	until = s->token_until;
	r = judge(s->identity[0] ? ag_config_identity(s->cfg, s->identity) : NULL,
	    now, s->identity, s->user, s->key, s->token, s->profile, &until, why, whylen);
	/* the window as the policy now has it: widened, narrowed, or made the
	 * current token again (no end) */
	if (r == 0 && s->token[0] != '\0')
		s->token_until = until;
	ag_config_free(now);
	return r;
}

int
ag_lock_set(int account, const char *name, const char *reason, struct ag_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd;

	if (lock_file(path, sizeof(path), AG_LOCKDIR, account, name) < 0)
		return ag_err_set(err, "'%s' is not %s name", name, account ? "an account" :
		    "an identity");
	if (mkdir(AG_LOCKDIR, 0755) < 0 && errno != EEXIST)
		return ag_err_set(err, "cannot create %s: %s", AG_LOCKDIR, strerror(errno));
	if (ag_rundir_root_only(AG_LOCKDIR, err) < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/.lock-XXXXXX", AG_LOCKDIR);
	if ((fd = mkstemp(tmp)) < 0)
		return ag_err_set(err, "%s: %s", tmp, strerror(errno));
	if (fchmod(fd, 0644) < 0 || ag_write_all(fd, reason, strlen(reason), NULL) < 0 ||
	    ag_write_all(fd, "\n", 1, NULL) < 0 || fsync(fd) < 0 || close(fd) < 0 ||
	    rename(tmp, path) < 0) {
		ag_err_set(err, "%s: %s", path, strerror(errno));
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

int
ag_lock_clear(int account, const char *name, struct ag_err *err)
{
	char path[PATH_MAX];

	if (lock_file(path, sizeof(path), AG_LOCKDIR, account, name) < 0)
		return ag_err_set(err, "'%s' is not %s name", name, account ? "an account" :
		    "an identity");
	if (unlink(path) < 0)
		return ag_err_set(err, "%s: %s", errno == ENOENT ? name : path,
		    errno == ENOENT ? "not locked" : strerror(errno));
	return 0;
}

int
ag_lock_list(void (*fn)(const char *what, const char *name, const char *reason, void *arg),
    void *arg, struct ag_err *err)
{
	char reason[AG_LOCK_REASON_MAX];
	struct dirent *de;
	const char *colon;
	DIR *d;
	int n = 0, account;

	if ((d = opendir(AG_LOCKDIR)) == NULL)
		return errno == ENOENT ? 0 : ag_err_set(err, "%s: %s", AG_LOCKDIR,
		    strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if ((colon = strchr(de->d_name, ':')) == NULL)
			continue;
		if ((size_t)(colon - de->d_name) == 7 && strncmp(de->d_name, "account", 7) == 0)
			account = 1;
		else if ((size_t)(colon - de->d_name) == 8 &&
		    strncmp(de->d_name, "identity", 8) == 0)
			account = 0;
		else
			continue;
		if (!lock_read(AG_LOCKDIR, account, colon + 1, reason, sizeof(reason)))
			continue;
		fn(account ? "account" : "identity", colon + 1, reason, arg);
		n++;
	}
	closedir(d);
	return n;
}
