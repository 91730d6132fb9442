/*
 * scancache.c - the repository scan's listings kept between connections.
 *
 * Why: a coding agent opens one connection per command, and each used to
 * read every directory beneath its write roots again to find the git
 * repositories to protect (namespace.c, scan_repos): tens of milliseconds
 * per `ssh host cmd` for a work tree of a few checkouts, before the
 * command started.  Within one session the listings were already kept and
 * trusted only while a directory's identity and ctime held; this file
 * keeps them on disk for the next session of the same account, under the
 * same rule, so a connection costs one lstat per directory instead of a
 * read of each.
 *
 * Where: AG_RUNDIR_SCANS, root:group 3770, which only a gateway holding
 * the privilege-separation group can enter; the agent's uid, which owns
 * the files, cannot reach them to rewrite them.  A gateway without the
 * group keeps no cache (it scans in full at each start, as before).
 * Nothing read here is believed beyond a listing: every directory is
 * still checked against its ctime, and a file that is not what this code
 * writes (another owner, a link, a wrong size, a count out of bounds) is
 * ignored whole.
 *
 * The file, native byte order (it never leaves this machine):
 *   magic, uid, number of write roots, each root (length, bytes); then per
 *   root, its tree in preorder: a record (struct rec) and the name.
 */
#include "agconfig.h"
#include "common/compat.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/privsep.h"
#include "common/rundir.h"
#include "common/sha256.h"
#include "common/strbuf.h"
#include "exec/sandbox_int.h"

static const char magic[8] = "AGSCAN2\n";

#define CACHE_MAX	(64u * 1024 * 1024)	/* bytes of a cache file */
#define CACHE_NODES	(SCAN_ENTRIES + 1024)	/* a scan lists at most this */

struct rec {
	uint64_t	dev, ino;
	int64_t		ctime_s, ctime_ns, read_s, read_ns;
	uint64_t	nentries;
	uint32_t	nsub;
	uint16_t	namelen;
	uint8_t		valid, repo;
};

/* The cache's file for this account and these write roots, or "" when
 * none may be kept (no group, or the directory is not what it must be). */
static void
cache_path(const struct ag_sandbox *sb, char *out, size_t outsz)
{
	struct ag_sha256 h;
	unsigned char md[AG_SHA256_LEN];
	struct stat st;
	size_t i;

	out[0] = '\0';
	if (!ag_privsep_holding() || lstat(AG_RUNDIR_SCANS, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0 || st.st_gid != getegid() || (st.st_mode & 07777) != 03770)
		return;
	/* one file per set of roots: two profiles of one account do not
	 * overwrite each other's */
	ag_sha256_init(&h);
	for (i = 0; i < sb->writes.n; i++)
		ag_sha256_update(&h, sb->writes.v[i], strlen(sb->writes.v[i]) + 1);
	ag_sha256_final(&h, md);
	snprintf(out, outsz, "%s/%lu-%02x%02x%02x%02x%02x%02x%02x%02x", AG_RUNDIR_SCANS,
	    (unsigned long)getuid(), md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7]);
}

/* ---- reading ----------------------------------------------------------- */

struct cursor {
	const unsigned char	*p, *end;
	size_t			 nodes;
};

static int
take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

static int
name_ok(const char *s, size_t n)
{
	return n > 0 && n <= NAME_MAX && memchr(s, '/', n) == NULL &&
	    memchr(s, '\0', n) == NULL && !(n == 1 && s[0] == '.') &&
	    !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* One node and its subtree into d (zeroed); -1 on anything malformed. */
static int
read_node(struct cursor *c, struct scan_dir *d, int depth, int root)
{
	struct rec r;
	uint32_t i;

	if (depth > SCAN_DEPTH + 1 || ++c->nodes > CACHE_NODES || take(c, &r, sizeof(r)) < 0)
		return -1;
	if (root) {
		if (r.namelen != 0)
			return -1;	/* a write root is named by the header */
	} else {
		if ((size_t)r.namelen > (size_t)(c->end - c->p) ||
		    !name_ok((const char *)c->p, r.namelen) ||
		    (d->name = strndup((const char *)c->p, r.namelen)) == NULL)
			return -1;
		c->p += r.namelen;
	}
	if (r.nsub > CACHE_NODES - c->nodes || r.valid > 1 || r.repo > SD_ALL ||
	    r.ctime_ns < 0 || r.ctime_ns >= 1000000000 || r.read_ns < 0 || r.read_ns >= 1000000000 ||
	    r.nentries > SCAN_ENTRIES)
		return -1;
	d->dev = (dev_t)r.dev;
	d->ino = (ino_t)r.ino;
	d->ctime.tv_sec = (time_t)r.ctime_s;
	d->ctime.tv_nsec = (long)r.ctime_ns;
	d->read_at.tv_sec = (time_t)r.read_s;
	d->read_at.tv_nsec = (long)r.read_ns;
	d->nentries = (size_t)r.nentries;
	d->valid = r.valid;
	d->repo = r.repo;
	if (r.nsub == 0)
		return 0;
	if ((d->sub = calloc(r.nsub, sizeof(*d->sub))) == NULL)
		return -1;
	for (i = 0; i < r.nsub; i++) {
		if ((d->sub[i] = calloc(1, sizeof(*d->sub[i]))) == NULL)
			return -1;
		d->nsub = i + 1;
		if (read_node(c, d->sub[i], depth + 1, 0) < 0)
			return -1;
	}
	return 0;
}

static unsigned char *
read_file(const char *path, size_t *lenp)
{
	struct stat st;
	unsigned char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	/* only what this account's gateway wrote, as it writes it */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    st.st_nlink != 1 || (st.st_mode & 077) != 0 || st.st_size < (off_t)sizeof(magic) ||
	    st.st_size > (off_t)CACHE_MAX || (buf = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	*lenp = got;
	return buf;
}

int
sb_scan_load(struct ag_sandbox *sb)
{
	char path[PATH_MAX];
	unsigned char *buf;
	size_t len, i;
	struct cursor c;
	uint32_t uid, nroots;

	cache_path(sb, path, sizeof(path));
	if (path[0] == '\0' || sb->nscan != sb->writes.n ||
	    (buf = read_file(path, &len)) == NULL)
		return 0;
	c.p = buf;
	c.end = buf + len;
	c.nodes = 0;
	if (memcmp(c.p, magic, sizeof(magic)) != 0)
		goto bad;
	c.p += sizeof(magic);
	if (take(&c, &uid, sizeof(uid)) < 0 || uid != (uint32_t)getuid() ||
	    take(&c, &nroots, sizeof(nroots)) < 0 || nroots != sb->writes.n)
		goto bad;
	for (i = 0; i < nroots; i++) {
		uint32_t n;

		if (take(&c, &n, sizeof(n)) < 0 || n != strlen(sb->writes.v[i]) ||
		    (size_t)(c.end - c.p) < n || memcmp(c.p, sb->writes.v[i], n) != 0)
			goto bad;
		c.p += n;
	}
	for (i = 0; i < nroots; i++)
		if (read_node(&c, &sb->scan[i], 0, 1) < 0)
			goto bad;
	if (c.p != c.end)
		goto bad;
	free(buf);
	return 0;
bad:
	/* as if there were no cache: every directory is read */
	free(buf);
	sb_scan_free(sb);
	if ((sb->scan = calloc(sb->writes.n ? sb->writes.n : 1, sizeof(*sb->scan))) == NULL)
		return -1;
	sb->nscan = sb->writes.n;
	return 0;
}

/* ---- writing ----------------------------------------------------------- */

static int
write_node(struct ag_strbuf *b, const struct scan_dir *d)
{
	struct rec r;
	size_t n = d->name != NULL ? strlen(d->name) : 0, i;

	memset(&r, 0, sizeof(r));
	r.dev = (uint64_t)d->dev;
	r.ino = (uint64_t)d->ino;
	r.ctime_s = (int64_t)d->ctime.tv_sec;
	r.ctime_ns = (int64_t)d->ctime.tv_nsec;
	r.read_s = (int64_t)d->read_at.tv_sec;
	r.read_ns = (int64_t)d->read_at.tv_nsec;
	r.nentries = (uint64_t)d->nentries;
	r.nsub = (uint32_t)d->nsub;
	r.namelen = (uint16_t)n;
	r.valid = d->valid != 0;
	r.repo = (uint8_t)d->repo;
	if (ag_strbuf_append(b, &r, sizeof(r)) < 0 || ag_strbuf_append(b, d->name, n) < 0)
		return -1;
	for (i = 0; i < d->nsub; i++)
		if (write_node(b, d->sub[i]) < 0)
			return -1;
	return 0;
}

/* b into path, whole or not at all: a reader sees the old file or the new. */
static void
write_whole(const char *path, const struct ag_strbuf *b)
{
	char tmp[PATH_MAX + 32];
	size_t off = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%ld.new", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return;
	while (off < b->len) {
		ssize_t n = write(fd, b->data + off, b->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (close(fd) < 0 || off != b->len || rename(tmp, path) < 0)
		(void)unlink(tmp);
}

void
sb_scan_save(const struct ag_sandbox *sb)
{
	char path[PATH_MAX];
	struct ag_strbuf b;
	uint32_t v;
	size_t i;

	cache_path(sb, path, sizeof(path));
	if (path[0] == '\0' || sb->nscan != sb->writes.n)
		return;
	ag_strbuf_init(&b, CACHE_MAX);
	v = (uint32_t)getuid();
	if (ag_strbuf_append(&b, magic, sizeof(magic)) < 0 ||
	    ag_strbuf_append(&b, &v, sizeof(v)) < 0)
		goto out;
	v = (uint32_t)sb->writes.n;
	if (ag_strbuf_append(&b, &v, sizeof(v)) < 0)
		goto out;
	for (i = 0; i < sb->writes.n; i++) {
		v = (uint32_t)strlen(sb->writes.v[i]);
		if (ag_strbuf_append(&b, &v, sizeof(v)) < 0 ||
		    ag_strbuf_append(&b, sb->writes.v[i], v) < 0)
			goto out;
	}
	for (i = 0; i < sb->nscan; i++)
		if (write_node(&b, &sb->scan[i]) < 0)
			goto out;
	write_whole(path, &b);
out:
	ag_strbuf_free(&b);
}

/* ---- git directories holding what a command planted -------------------- */

/*
 * The git directories a command created with a hook or a program-running
 * config in them (namespace.c, check_planted), and the pointers it wrote
 * that were set aside, are kept here for the identity's next connections,
 * which refuse commands while it is there: AG_RUNDIR_SCANS/KEY.planted
 * (KEY: sb_identity_key, "UID" without identities), one path a line.  Per
 * identity, not per account: what is set aside runs nowhere, and one
 * identity's command must not refuse another's (red team 19, M2).
 * `agentgate doctor` lists them.  Without the group, only the session
 * that saw it remembers.
 */
static int
rundir_ok(void)
{
	struct stat st;

	return ag_privsep_holding() && lstat(AG_RUNDIR_SCANS, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == 0 && st.st_gid == getegid() && (st.st_mode & 07777) == 03770;
}

static void
planted_path(const struct ag_sandbox *sb, char *out, size_t outsz)
{
	out[0] = '\0';
	if (sb->planted_key[0] != '\0' && rundir_ok())
		snprintf(out, outsz, "%s/%s.planted", AG_RUNDIR_SCANS, sb->planted_key);
}

int
sb_planted_load(struct ag_sandbox *sb)
{
	char path[PATH_MAX];
	unsigned char *buf;
	char *l, *next;
	size_t len;

	planted_path(sb, path, sizeof(path));
	if (path[0] == '\0' || (buf = read_file(path, &len)) == NULL)
		return 0;
	buf[len - 1] = '\0';	/* the file ends with a newline */
	for (l = (char *)buf; l != NULL; l = next) {
		if ((next = strchr(l, '\n')) != NULL)
			*next++ = '\0';
		if (l[0] == '/' && !sb_plist_has(&sb->planted, l) &&
		    sb_plist_add(&sb->planted, l) < 0) {
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

void
sb_planted_save(const struct ag_sandbox *sb)
{
	char path[PATH_MAX];
	struct ag_strbuf b;
	size_t i;

	planted_path(sb, path, sizeof(path));
	if (path[0] == '\0')
		return;
	if (sb->planted.n == 0) {
		(void)unlink(path);
		return;
	}
	ag_strbuf_init(&b, CACHE_MAX);
	/* a line each: a path with a newline stays this connection's own
	 * (it would read as two, naming what was not planted) */
	for (i = 0; i < sb->planted.n; i++)
		if (strchr(sb->planted.v[i], '\n') == NULL &&
		    (ag_strbuf_append(&b, sb->planted.v[i], strlen(sb->planted.v[i])) < 0 ||
		    ag_strbuf_append(&b, "\n", 1) < 0))
			goto out;
	write_whole(path, &b);
out:
	ag_strbuf_free(&b);
}

/* ---- commands whose check after them may not have run ------------------- */

/*
 * The check after a command (namespace.c, ag_sandbox_after) runs when the
 * command has ended; until then, or when the gateway is killed first,
 * another connection of the account would protect a repository the
 * command made (and planted) without looking into it.  So before the
 * runner starts, AG_RUNDIR_SCANS/UID.pending.PID records when; the check
 * after removes it.  Another connection's scan looks into every git
 * directory born since the earliest such time, and removes the records
 * of gateways that are gone once it has.
 */
static void
pending_path(char *out, size_t outsz, long pid)
{
	snprintf(out, outsz, "%s/%lu.pending.%ld", AG_RUNDIR_SCANS, (unsigned long)getuid(), pid);
}

void
sb_pending_mark(void)
{
	char path[PATH_MAX], line[32];
	struct timespec now;
	struct ag_strbuf b;

	if (!rundir_ok())
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(line, sizeof(line), "%020lld\n", (long long)now.tv_sec * 1000000000LL +
	    now.tv_nsec);
	pending_path(path, sizeof(path), (long)getpid());
	ag_strbuf_init(&b, sizeof(line));
	if (ag_strbuf_append(&b, line, strlen(line)) == 0)
		write_whole(path, &b);
	ag_strbuf_free(&b);
}

void
sb_pending_clear(void)
{
	char path[PATH_MAX];

	if (!rundir_ok())
		return;
	pending_path(path, sizeof(path), (long)getpid());
	(void)unlink(path);
}

long long
sb_pending_since(struct plist *stale)
{
	char prefix[64], path[PATH_MAX];
	struct dirent *de;
	long long since = 0;
	DIR *d;

	if (!rundir_ok() || (d = opendir(AG_RUNDIR_SCANS)) == NULL)
		return 0;
	snprintf(prefix, sizeof(prefix), "%lu.pending.", (unsigned long)getuid());
	while ((de = readdir(d)) != NULL) {
		unsigned char *buf;
		char *end;
		long pid;
		long long t;
		size_t len;

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		pid = strtol(de->d_name + strlen(prefix), &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid())
			continue;
		pending_path(path, sizeof(path), pid);
		if ((buf = read_file(path, &len)) == NULL)
			continue;
		buf[len - 1] = '\0';
		t = strtoll((char *)buf, NULL, 10);
		free(buf);
		if (t > 0 && (since == 0 || t < since))
			since = t;
		/* its gateway is gone: its command too, and all it made is there */
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			(void)sb_plist_add(stale, path);
	}
	closedir(d);
	return since;
}
