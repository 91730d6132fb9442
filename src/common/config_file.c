/*
 * config_file.c - reading the policy from disk: who must own the file and
 * every directory above it, a bounded read, the fragments of agentgate.d
 * in the order of their names, and ag_config_load() with its variants
 * (a file's text replaced, a candidate fragment) for `agentgate edit`.
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

#include "common/config.h"
#include "common/config_int.h"
#include "common/safepath.h"
#include "common/strbuf.h"

/* ------------------------------------------------------------------ */
/* Permissions and loading                                             */

/* Root, or the owner of the running executable (so a build tree can hold
 * test configs), owns what the gateway trusts. */
static uid_t
trusted_uid(void)
{
	struct stat exe;

	return stat("/proc/self/exe", &exe) == 0 ? exe.st_uid : 0;
}

/*
 * The policy file and every directory above it belong to root or to the
 * owner of the running executable.
 */
static int
check_perms_internal(const char *path, struct ag_err *err, struct stat *filest,
    char **realp)
{
	return ag_safe_path(path, trusted_uid(), filest, realp, err);
}

int
ag_config_check_perms(const char *path, struct ag_err *err)
{
	struct stat st;
	char *real = NULL;
	int rc;

	ag_err_clear(err);
	rc = check_perms_internal(path, err, &st, &real);
	free(real);
	return rc;
}

/* The policy file or a fragment at path into sb (bounded), checked first
 * unless flags say not; *stp its stat. */
static int
read_file(const char *path, unsigned flags, struct ag_strbuf *sb, struct stat *stp,
    struct ag_err *err)
{
	struct stat checked, st;
	char *real = NULL, chunk[16384];
	ssize_t r;
	int fd = -1, rc = -1;

	memset(&st, 0, sizeof(st));
	if (!(flags & AG_CONFIG_NO_PERMCHECK) &&
	    check_perms_internal(path, err, &checked, &real) == -1)
		goto out;
	/* O_NONBLOCK: a FIFO swapped in must not hang us; regular files ignore it. */
	fd = open(real ? real : path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1) {
		ag_err_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		ag_err_at(err, path, 0, 0, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ag_err_at(err, path, 0, 0, "not a regular file");
		goto out;
	}
	/* What we read must be what we checked (no swap after the walk). */
	if (real != NULL && (st.st_dev != checked.st_dev ||
	    st.st_ino != checked.st_ino)) {
		ag_err_at(err, path, 0, 0, "the file changed while being checked; "
		    "try again");
		goto out;
	}
	if (st.st_size > AG_CONFIG_MAX_BYTES) {
		ag_err_at(err, path, 0, 0, "file is larger than %d bytes",
		    AG_CONFIG_MAX_BYTES);
		goto out;
	}
	/* Read to EOF into a bounded buffer: the file may grow after fstat. */
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			ag_err_at(err, path, 0, 0, "read error: %s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (ag_strbuf_append(sb, chunk, (size_t)r) == -1) {
			ag_err_at(err, path, 0, 0, sb->len + (size_t)r >
			    AG_CONFIG_MAX_BYTES ? "file is larger than %d bytes" :
			    "out of memory reading a file of up to %d bytes",
			    AG_CONFIG_MAX_BYTES);
			goto out;
		}
	}
	rc = 0;
out:
	/* the text holds token hashes: no copy left on the stack for what
	 * the gateway forks later (see ag_config_forget_tokens) */
	explicit_bzero(chunk, sizeof(chunk));
	if (fd != -1)
		close(fd);
	if (stp != NULL)
		*stp = st;
	free(real);
	return rc;
}

/*
 * A fragment's name: ends in ".yaml" and does not start with '.' -- so
 * editors' backups ("x.yaml~", ".x.yaml.swp"), dpkg's and config
 * management's leftovers ("x.yaml.dpkg-old", ".x.yaml.tmp") are not read.
 */
static int
fragment_name_ok(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The fragments in dir, by name in byte order, into names.  A directory
 * that is not there has none; one that is is checked as the policy file
 * is (each fragment is checked again when read).
 */
static int
fragment_list(const char *dir, unsigned flags, struct ag_strlist *names, int *present,
    struct ag_err *err)
{
	struct stat st, checked;
	struct dirent *de;
	char *real = NULL, **nv;
	DIR *d = NULL;
	int fd = -1, rc = -1;

	*present = 0;
	if (stat(dir, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		return ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
	}
	*present = 1;
	if (!(flags & AG_CONFIG_NO_PERMCHECK) &&
	    ag_safe_dir(dir, trusted_uid(), &checked, &real, err) == -1)
		return -1;
	fd = open(real ? real : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &st) == -1) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (real != NULL && (st.st_dev != checked.st_dev || st.st_ino != checked.st_ino)) {
		ag_err_at(err, dir, 0, 0, "the directory changed while being checked; "
		    "try again");
		goto out;
	}
	if ((d = fdopendir(fd)) == NULL) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	fd = -1;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!fragment_name_ok(de->d_name))
			continue;
		if (names->n == AG_CONFIG_MAX_FRAGMENTS) {
			ag_err_at(err, dir, 0, 0, "more than %d fragments",
			    AG_CONFIG_MAX_FRAGMENTS);
			goto out;
		}
		if ((nv = reallocarray(names->v, names->n + 2, sizeof(*nv))) == NULL)
			goto oom;
		names->v = nv;
		if ((names->v[names->n] = strdup(de->d_name)) == NULL)
			goto oom;
		names->v[++names->n] = NULL;
		errno = 0;
	}
	if (errno != 0) {
		ag_err_at(err, dir, 0, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (names->n > 1)
		qsort(names->v, names->n, sizeof(*names->v), name_cmp);
	rc = 0;
	goto out;
oom:
	ag_err_at(err, dir, 0, 0, "out of memory");
out:
	if (d != NULL)
		closedir(d);
	if (fd != -1)
		close(fd);
	free(real);
	return rc;
}

/* name among names (sorted), added in its place when it is not there. */
static int
add_candidate(struct ag_strlist *names, const char *name, const char *dir,
    struct ag_err *err)
{
	char **nv;
	size_t i;

	for (i = 0; i < names->n; i++)
		if (strcmp(names->v[i], name) == 0)
			return 0;
	if (names->n == AG_CONFIG_MAX_FRAGMENTS)
		return ag_err_at(err, dir, 0, 0, "more than %d fragments",
		    AG_CONFIG_MAX_FRAGMENTS);
	if ((nv = reallocarray(names->v, names->n + 2, sizeof(*nv))) == NULL)
		return ag_err_at(err, dir, 0, 0, "out of memory");
	names->v = nv;
	if ((nv[names->n] = strdup(name)) == NULL)
		return ag_err_at(err, dir, 0, 0, "out of memory");
	nv[++names->n] = NULL;
	qsort(names->v, names->n, sizeof(*names->v), name_cmp);
	return 0;
}

/* Read and add each fragment of the policy file path's agentgate.d. */
static int
add_fragments(struct ctx *c, const char *path)
{
	struct ag_strlist names = { NULL, 0 };
	struct ag_strbuf sb;
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], f[PATH_MAX];
	size_t i;
	int n, rc = -1;

	n = slash == NULL ? snprintf(dir, sizeof(dir), "%s", AG_CONFIG_FRAGDIR) :
	    snprintf(dir, sizeof(dir), "%.*s/%s", (int)(slash - path), path,
	    AG_CONFIG_FRAGDIR);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return ag_err_at(c->err, path, 0, 0, "path too long");
	if (fragment_list(dir, c->flags, &names, &c->cfg->has_fragdir, c->err) == -1)
		goto out;
	/* a candidate fragment not installed yet takes its place in the order */
	if (c->subst_frag != NULL && add_candidate(&names, c->subst_frag, dir, c->err) < 0)
		goto out;
	for (i = 0; i < names.n; i++) {
		n = snprintf(f, sizeof(f), "%s/%s", dir, names.v[i]);
		if (n < 0 || (size_t)n >= sizeof(f)) {
			ag_err_at(c->err, dir, 0, 0, "path too long");
			goto out;
		}
		if (c->subst_frag != NULL && strcmp(names.v[i], c->subst_frag) == 0) {
			if (cf_cfg_add(c, c->subst_buf, c->subst_len, c->subst_shown, 1) == -1)
				goto out;
			continue;
		}
		ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
		if (read_file(f, c->flags, &sb, NULL, c->err) == -1 ||
		    (c->subst_name != NULL && strcmp(f, c->subst_name) == 0 ?
		    cf_cfg_add(c, c->subst_buf, c->subst_len, f, 1) :
		    cf_cfg_add(c, sb.data, sb.len, f, 1)) == -1) {
			ag_strbuf_free(&sb);
			goto out;
		}
		ag_strbuf_free(&sb);
	}
	rc = 0;
out:
	cf_strlist_free(&names);
	return rc;
}

/* ag_config_load(), leaving what it read of path in *sb (the caller's to
 * free) and the file's stat in *stp. */
struct subst {
	const char	*name;		/* a file whose text is buf (replacing) */
	const char	*frag, *shown;	/* a candidate fragment (load_fragment) */
	const char	*buf;
	size_t		 len;
};

static struct ag_config *
load(const char *path, unsigned flags, struct ag_strbuf *sb_out, struct stat *stp,
    const struct subst *subst, struct ag_err *err)
{
	static const struct subst none;
	struct ag_config *cfg = NULL;
	struct ag_strbuf sb;
	struct stat st;
	struct ctx c;
	int main_subst;

	if (subst == NULL)
		subst = &none;
	main_subst = subst->name != NULL && strcmp(subst->name, path) == 0;
	ag_err_clear(err);
	ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
	if (read_file(path, flags, &sb, &st, err) == 0 &&
	    cf_cfg_new(&c, path, flags, err) != NULL) {
		c.subst_name = subst->name;
		c.subst_frag = subst->frag;
		c.subst_shown = subst->shown;
		c.subst_buf = subst->buf;
		c.subst_len = subst->len;
		cfg = cf_cfg_done(&c, cf_cfg_add(&c, main_subst ? subst->buf : sb.data,
		    main_subst ? subst->len : sb.len, path, 0) == 0 &&
		    ((flags & AG_CONFIG_GATEWAY_ONLY) || add_fragments(&c, path) == 0) &&
		    cf_cfg_finish(&c) == 0);
	}
	if (stp != NULL)
		*stp = st;
	if (sb_out != NULL)
		*sb_out = sb;
	else
		ag_strbuf_free(&sb);
	return cfg;
}

struct ag_config *
ag_config_load(const char *path, unsigned flags, struct ag_err *err)
{
	return load(path, flags, NULL, NULL, NULL, err);
}

struct ag_config *
ag_config_load_replacing(const char *path, const char *file, const char *buf, size_t len,
    struct ag_err *err)
{
	struct subst s = { .name = file, .buf = buf, .len = len };

	return load(path, 0, NULL, NULL, &s, err);
}

struct ag_config *
ag_config_load_fragment(const char *path, const char *name, const char *shown,
    const char *buf, size_t len, struct ag_err *err)
{
	struct subst s = { .frag = name, .shown = shown, .buf = buf, .len = len };

	ag_err_clear(err);
	if (strchr(name, '/') != NULL || !fragment_name_ok(name))
		return ag_err_set(err, "'%s' is not a name the loader reads in %s: a "
		    "fragment's name ends in .yaml and does not start with '.'", name,
		    AG_CONFIG_FRAGDIR), NULL;
	return load(path, 0, NULL, NULL, &s, err);
}

struct ag_config *
ag_config_load_text(const char *path, struct ag_strbuf *text, struct stat *st,
    struct ag_err *err)
{
	return load(path, 0, text, st, NULL, err);
}

