/*
 * lastgood.c - the last policy that loaded (lastgood.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/lastgood.h"
#include "common/misc.h"
#include "common/rundir.h"
#include "common/safepath.h"
#include "common/sha256.h"
#include "common/strbuf.h"

int
ag_lastgood_path(const char *path, char *buf, size_t len)
{
	unsigned char h[AG_SHA256_LEN];
	char hex[2 * AG_SHA256_LEN + 1];
	size_t i;
	int n;

	ag_sha256(path, strlen(path), h);
	for (i = 0; i < sizeof(h); i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	n = snprintf(buf, len, "%s/%s.yaml", AG_LASTGOOD_DIR, hex);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Does the copy at dst already hold text, with the mode and group wanted? */
static int
same_copy(const char *dst, const struct ag_strbuf *text, mode_t mode, gid_t gid)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, same;

	if ((fd = open(dst, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    st.st_gid != gid || (st.st_mode & 07777) != mode ||
	    (size_t)st.st_size != text->len || (buf = malloc(text->len + 1)) == NULL) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, text->len + 1);
	same = n >= 0 && (size_t)n == text->len && memcmp(buf, text->data, text->len) == 0;
	free(buf);
	close(fd);
	return same;
}

static int
root_dir(const char *path, struct ag_err *err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return ag_err_set(err, "cannot create %s: %s", path, strerror(errno));
	return ag_rundir_root_only(path, err);
}

int
ag_lastgood_save(const char *path, struct ag_err *err)
{
	struct ag_config *cfg;
	struct ag_strbuf text;
	struct stat st;
	char dst[PATH_MAX], tmp[PATH_MAX + 16], *real = NULL;
	mode_t mode;
	int fd = -1, rc = -1;

	ag_err_clear(err);
	/* a relative path names another file from another directory */
	if (geteuid() != 0 || path[0] != '/')
		return 0;
	/* root's alone: the owner of the executable a loader may also trust
	 * (a build tree) is not root, and the copy will be root's */
	if (ag_safe_path(path, 0, &st, &real, err) < 0)
		return -1;
	free(real);
	/* what is copied is what loads now, whatever the caller loaded before */
	if ((cfg = ag_config_load_text(path, &text, &st, err)) == NULL)
		goto out;
	ag_config_free(cfg);
	if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
		ag_err_set(err, "%s: not root's alone", path);
		goto out;
	}
	mode = st.st_mode & 0644;
	if (ag_lastgood_path(path, dst, sizeof(dst)) < 0) {
		ag_err_set(err, "%s: path too long", path);
		goto out;
	}
	if (same_copy(dst, &text, mode, st.st_gid)) {
		rc = 0;
		goto out;
	}
	if (root_dir(AG_STATEDIR, err) < 0 || root_dir(AG_LASTGOOD_DIR, err) < 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", dst);
	if ((fd = mkstemp(tmp)) < 0) {
		ag_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchown(fd, 0, st.st_gid) < 0 || fchmod(fd, mode) < 0 ||
	    ag_write_all(fd, text.data != NULL ? text.data : "", text.len, NULL) < 0 ||
	    fsync(fd) < 0 || rename(tmp, dst) < 0) {
		ag_err_set(err, "cannot write %s: %s", dst, strerror(errno));
		(void)unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	ag_strbuf_free(&text);
	return rc;
}

struct ag_config *
ag_lastgood_load(const char *path, struct ag_err *err)
{
	struct stat st, walked;
	char dst[PATH_MAX], *real = NULL;

	ag_err_clear(err);
	if (path[0] != '/' || ag_lastgood_path(path, dst, sizeof(dst)) < 0) {
		ag_err_set(err, "no last good policy is kept for %s", path);
		return NULL;
	}
	if (lstat(dst, &st) < 0) {
		ag_err_set(err, "no last good policy for %s (%s: %s)", path, dst,
		    strerror(errno));
		return NULL;
	}
	/* the loader would also trust the executable's owner: not here */
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		ag_err_set(err, "%s ignored: not a regular file of root's that only root "
		    "can write", dst);
		return NULL;
	}
	if (ag_safe_path(dst, 0, &walked, &real, err) < 0)
		return NULL;
	free(real);
	/* the copy is the policy file's bytes alone: a profile it names may
	 * be a fragment's, and no agentgate.d lies beside the copy */
	return ag_config_load(dst, AG_CONFIG_GATEWAY_ONLY, err);
}
