/*
 * sink_file.c - the audit file: one JSON object per line, appended with
 * O_APPEND in a single write(2) under the file's lock, each record linked
 * to the line before it (chain.h), also across rotation: the hash of the
 * last record written is kept in a state file beside the log, whose lock
 * every writer takes first.  A write-ahead record is on the disk
 * (fdatasync) before the command starts.  See audit.h for the rules on
 * the file and its directory, and agentgate(8), SECURITY, for who may
 * write there.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "record/chain.h"
#include "record/sink.h"

struct file_sink {
	struct ag_sink	 base;
	int		 fd;		/* -1 when unusable: error says why */
	dev_t		 fd_dev;	/* the file fd is open on */
	ino_t		 fd_ino;
	char		*file;
	char		*group;		/* audit.group, or NULL */
	long long	 min_free;	/* audit.min_free */
	char		 file_error[PATH_MAX + 128];
	/*
	 * The hash of the line this sink wrote last, and where the file
	 * ended after it: while the file is that long, nobody else has
	 * appended, and the next record links to it without reading it back.
	 */
	char		 tail[AG_CHAIN_HEX];
	off_t		 tail_end;	/* -1: unknown (or another file), read it */
	/*
	 * The chain's state file (ag_chain_state_path): the hash of the last
	 * record written to any file of the log, for the first record of the
	 * next one after rotation, and the lock every writer takes before
	 * the log's own: under it, the log a writer finds the path naming is
	 * the one everyone writes to.  -1: none could be opened; a new file
	 * then starts a chain of its own, as before the state file was.
	 */
	int		 cfd;
	dev_t		 cfd_dev;
	ino_t		 cfd_ino;
	char		*cfile;
	char		 cfile_error[PATH_MAX + 128];
	int		 cfile_warned;	/* once per session */
};

static void
add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/*
 * Open (create) one of the sink's files, path, with flags beside
 * O_RDWR: the directory and the file as safe as audit.h says.  The fd,
 * or -1 with why; st is the file's.
 */
static int
open_record_file(const char *path, const char *group, int flags, struct stat *st,
    char *why, size_t whylen)
{
	char dir[PATH_MAX], dwhy[96], *slash;
	mode_t mode = group != NULL ? 0640 : 0600;
	int fd, created = 0, group_dir;

	flags |= O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
	if (path[0] != '/') {
		snprintf(why, whylen, "not an absolute path");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if (stat(dir, st) < 0) {
		snprintf(why, whylen, "directory %s: %s", dir, strerror(errno));
		return -1;
	}
	/* anyone else who can write there could swap the log for their own */
	if (ag_privsep_dir_ok(st, dwhy, sizeof(dwhy)) < 0) {
		snprintf(why, whylen, "directory %s: %s", dir, dwhy);
		return -1;
	}
	group_dir = ag_privsep_group_dir(st);
	fd = open(path, flags);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, flags | O_CREAT | O_EXCL, mode);
		created = fd >= 0;
		if (fd < 0 && errno == EEXIST)	/* another session created it first */
			fd = open(path, flags);
	}
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0 || ag_privsep_file_ok(st) < 0) {
		snprintf(why, whylen, "not a regular file, or writable by others than its owner%s",
		    ag_privsep_holding() ? " and the gateway's group" : "");
		close(fd);
		return -1;
	}
	if (created && (ag_privsep_holding() || group_dir)) {
		/* audit.group would take the file from the group every gateway
		 * writes it through: readers get an ACL instead (agentgate(8)).
		 * Root (serve, before the drop to the user) in the group's
		 * directory shares it the same way, or no gateway could append */
		(void)fchmod(fd, ag_privsep_shared_mode(fd, 0600));
	} else if (created) {
		(void)fchmod(fd, mode);		/* the umask must not decide */
		if (group != NULL) {
			struct group *gr = getgrnam(group);

			if (gr == NULL || fchown(fd, (uid_t)-1, gr->gr_gid) < 0)
				ag_log(LOG_WARNING, "audit log %s: cannot give it to group %s",
				    path, group);
		}
	}
	return ag_privsep_private_fd(fd);
}

static int
open_file(struct file_sink *a)
{
	struct stat st;
	int fd;

	/* read too: each record links to the file's last line (chain.h) */
	fd = open_record_file(a->file, a->group, O_APPEND, &st, a->file_error,
	    sizeof(a->file_error));
	if (fd < 0)
		return -1;
	a->fd_dev = st.st_dev;
	a->fd_ino = st.st_ino;
	a->tail_end = -1;
	a->fd = fd;
	return 0;
}

/* The chain's state file; without it the sink works as before it was. */
static void
open_state(struct file_sink *a)
{
	struct stat st;

	(void)ag_privsep_close(&a->cfd);
	if (a->cfile == NULL)
		return;
	a->cfd = open_record_file(a->cfile, a->group, 0, &st, a->cfile_error,
	    sizeof(a->cfile_error));
	if (a->cfd < 0) {
		if (a->cfile_warned++ == 0)
			ag_log(LOG_WARNING, "audit log %s: its chain state %s: %s (after rotation the "
			    "next file starts a chain of its own)", a->file, a->cfile, a->cfile_error);
		return;
	}
	a->cfd_dev = st.st_dev;
	a->cfd_ino = st.st_ino;
}

/*
 * logrotate (and an admin's mv) renames the log and creates a new one: a
 * gateway that goes on appending to the file it opened writes where no one
 * reads.  Before each record, a path that names another file, or none,
 * is opened (created) again.  A file we could not open stays failed.
 */
static int
still_named(const char *path, dev_t dev, ino_t ino)
{
	struct stat now;

	return stat(path, &now) == 0 && now.st_dev == dev && now.st_ino == ino;
}

static void
follow_rotation(struct file_sink *a)
{
	if (a->fd < 0 || still_named(a->file, a->fd_dev, a->fd_ino))
		return;
	(void)ag_privsep_close(&a->fd);
	if (open_file(a) < 0)
		ag_log(LOG_ERR, "audit log %s (reopened after rotation): %s", a->file,
		    a->file_error);
}

/*
 * Every gateway appending to the file takes its lock for one record; one
 * stopped while holding it (SIGSTOP by its own account, a debugger) must
 * not freeze every other session: the wait is bounded, and a record that
 * cannot be written in time fails closed like any other (a required
 * audit refuses the command, and says why).  What is bounded is a wait in
 * which nobody writes: many sessions taking turns (a busy host, a slow
 * sanitizer build) make the file grow, and while it grows the holder is
 * not stuck, so the wait goes on.
 */
#define LOCK_WAIT_MS	5000L

/*
 * The link to the file's last line: the one we remember when the file is
 * still as we left it (st is its fstat under the lock), else read back.
 */
static int
chain_prev(struct file_sink *a, const struct stat *st, char prev[AG_CHAIN_HEX], int *empty)
{
	if (a->tail_end > 0 && st->st_size == a->tail_end) {
		*empty = 0;
		memcpy(prev, a->tail, AG_CHAIN_HEX);
		return 0;
	}
	if (ag_chain_tail(a->fd, prev, empty) < 0)
		return -1;
	/* a new file (rotation): go on from the last record of the one before */
	if (*empty && a->cfd >= 0 && ag_chain_state_read(a->cfd, prev) == 0)
		*empty = 0;
	return 0;
}

/* What the next file of the log goes on from, after rotation. */
static void
save_state(struct file_sink *a)
{
	char buf[AG_CHAIN_HEX];

	if (a->cfd < 0)
		return;
	memcpy(buf, a->tail, AG_CHAIN_HEX - 1);
	buf[AG_CHAIN_HEX - 1] = '\n';
	if (pwrite(a->cfd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		ag_log(LOG_WARNING, "audit log %s: cannot keep the chain's state in %s: %s",
		    a->file, a->cfile, strerror(errno));
}

/*
 * The state file's lock, first: under it the path names the log everyone
 * writes to (a rename since is seen here), so no record goes into a
 * rotated file after the next file's first one went on from it.  0 (also
 * without a state file), or -1 and errno.
 */
static int
lock_state(struct file_sink *a)
{
	if (a->cfile != NULL && (a->cfd < 0 || !still_named(a->cfile, a->cfd_dev, a->cfd_ino)))
		open_state(a);
	if (a->cfd < 0)
		return 0;
	if (ag_flock_bounded(a->cfd, LOCK_WAIT_MS) < 0)
		return -1;
	follow_rotation(a);
	return 0;
}


static void
unlock_state(struct file_sink *a)
{
	if (a->cfd >= 0)
		(void)flock(a->cfd, LOCK_UN);
}

/* A lock nobody released in time: not the file's fault, keep it for the
 * next record. */
/*
 * Who holds the flock of the log or its chain state, from /proc/locks
 * (numbers as the kernel prints them there): the pid, or 0 when none is
 * found.  *stopped: that process is stopped (SIGSTOP, a tracer).
 */
static pid_t
lock_holder(const struct file_sink *a, int *stopped)
{
	int fds[2] = { a->cfd, a->fd }, i, n = 0;
	struct stat st[2];
	char line[256], state = '?';
	unsigned long long ino, start;
	pid_t ppid;
	unsigned maj, mnr;
	long p;
	pid_t pid = 0;
	FILE *fp;

	*stopped = 0;
	for (i = 0; i < 2; i++)
		if (fds[i] >= 0 && fstat(fds[i], &st[n]) == 0)
			n++;
	if (n == 0 || (fp = fopen("/proc/locks", "re")) == NULL)
		return 0;
	while (pid == 0 && fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%*s FLOCK %*s %*s %ld %x:%x:%llu", &p, &maj, &mnr, &ino) != 4 ||
		    p <= 0 || p == (long)getpid())
			continue;
		for (i = 0; i < n; i++)
			if (ino == (unsigned long long)st[i].st_ino &&
			    makedev(maj, mnr) == st[i].st_dev)
				pid = (pid_t)p;
	}
	fclose(fp);
	if (pid > 0 && ag_proc_stat(pid, &ppid, &start, &state) < 0)
		state = '?';
	*stopped = state == 'T' || state == 't';
	return pid;
}

static int
held(struct file_sink *a, struct ag_err *why)
{
	int stopped;
	pid_t pid;

	if (errno != ETIMEDOUT)
		return ag_err_set(why, "audit log %s: cannot lock it: %s", a->file,
		    strerror(errno));
	/* the admin's lead: which process, so that it can be ended */
	if ((pid = lock_holder(a, &stopped)) > 0) {
		ag_err_set(why, "audit log %s: process %ld%s has held its lock for %ld s "
		    "without writing; the record was not written (end it: kill %ld)", a->file,
		    (long)pid, stopped ? ", stopped," : "", LOCK_WAIT_MS / 1000, (long)pid);
		ag_log(LOG_ERR, "%s", why->msg);
		return -1;
	}
	return ag_err_set(why, "audit log %s: another session has held its lock for %ld s "
	    "without writing (a gateway stopped while writing?); the record was not written",
	    a->file, LOCK_WAIT_MS / 1000);
}

/*
 * The file sink's part: under the file's lock (other sessions append to
 * it too), link the record to the file's last line (chain.h) and write it
 * in one write(2); then, for a write-ahead record, push it to the disk
 * before the command starts (outside the lock: other sessions need not
 * wait for our disk).  The line it writes is the one every other sink gets.
 */
/*
 * A command is refused while the log's file system has less than
 * audit.min_free left, so that what follows (the refusal, the ends of
 * the sessions still running) has room: a write root or the persistent
 * /tmp on the same file system could otherwise fill it, and every
 * account's commands would fail on a torn record with no word of why.
 */
static int
short_of_space(const struct file_sink *a, struct ag_err *why)
{
	struct statvfs vfs;
	long long left;

	if (a->min_free <= 0 || fstatvfs(a->fd, &vfs) < 0)
		return 0;
	left = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
	if (left >= a->min_free)
		return 0;
	ag_err_set(why, "audit log %s: its file system has %lld KiB left, less than "
	    "audit.min_free (%lld KiB): commands are refused until space is freed there",
	    a->file, left >> 10, a->min_free >> 10);
	return 1;
}

static int
file_emit(struct ag_sink *s, struct ag_audit_rec *r, int sync, struct ag_err *why)
{
	struct file_sink *a = (struct file_sink *)s;
	json_object *o = r->o;
	size_t *len = &r->len;
	char prev[AG_CHAIN_HEX], seed[AG_CHAIN_HEX];
	const char *line;
	int empty = 0, locked;
	struct stat st;
	ssize_t w;

	follow_rotation(a);
	if (a->fd < 0)
		return ag_err_set(why, "audit log %s: %s", a->file, a->file_error);
	/* only a write-ahead record starts something: the rest may use the room */
	if (sync && short_of_space(a, why))
		return -1;
	if (lock_state(a) < 0)
		return held(a, why);
	if (a->fd < 0) {
		unlock_state(a);
		return ag_err_set(why, "audit log %s: %s", a->file, a->file_error);
	}
	locked = ag_flock_bounded(a->fd, LOCK_WAIT_MS) == 0;
	if (!locked && errno == ETIMEDOUT) {
		unlock_state(a);
		return held(a, why);
	}
	if (!locked || fstat(a->fd, &st) < 0 || chain_prev(a, &st, prev, &empty) < 0 ||
	    (empty && ag_chain_seed(seed) < 0)) {
		snprintf(a->file_error, sizeof(a->file_error), "cannot read the chain: %s",
		    strerror(errno));
		goto fail;
	}
	if (empty) {
		ag_chain_hash(seed, strlen(seed), prev);
		add_str(o, "seed", seed);
	}
	add_str(o, "prev", prev);
	if ((line = ag_audit_rec_text(r, len)) == NULL) {
		snprintf(a->file_error, sizeof(a->file_error), "out of memory");
		goto fail;
	}
	/* one write per record: O_APPEND makes it land whole */
	do
		w = write(a->fd, line, *len);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)*len) {
		snprintf(a->file_error, sizeof(a->file_error), "%s",
		    w < 0 ? strerror(errno) : "short write (no space left?)");
		/* a torn record (a full disk) is taken back: the file ends with
		 * the last whole record, and the chain still holds */
		if (w > 0)
			(void)!ftruncate(a->fd, st.st_size);
		goto fail;
	}
	/* the line without its newline is what the next record links to */
	ag_chain_hash(line, *len - 1, a->tail);
	a->tail_end = st.st_size + (off_t)*len;
	save_state(a);
	(void)flock(a->fd, LOCK_UN);
	unlock_state(a);
	if (sync && fdatasync(a->fd) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "%s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	unlock_state(a);
	a->tail_end = -1;
	/* a torn record would corrupt the next one: stop using the file */
	(void)ag_privsep_close(&a->fd);
	return ag_err_set(why, "audit log %s: %s", a->file, a->file_error);
}

static int
file_ready(const struct ag_sink *s, struct ag_err *why)
{
	const struct file_sink *a = (const struct file_sink *)s;

	/* a log renamed or removed under us is opened again at the next
	 * record (follow_rotation); that open failing fails the record */
	if (a->fd < 0)
		return ag_err_set(why, "audit log %s: %s", a->file, a->file_error);
	return 0;
}

static void
file_close(struct ag_sink *s)
{
	struct file_sink *a = (struct file_sink *)s;

	(void)ag_privsep_close(&a->fd);
	(void)ag_privsep_close(&a->cfd);
	free(a->file);
	free(a->cfile);
	free(a->group);
	free(a);
}

/*
 * flock(2) belongs to the open file, which a child shares with its parent
 * and its siblings: without a file of its own, two of them would each
 * "hold" the lock at once and link their records to the same line.
 */
static void
file_forked(struct ag_sink *s)
{
	struct file_sink *a = (struct file_sink *)s;

	if (a->cfd >= 0)
		open_state(a);
	if (a->fd < 0)
		return;
	(void)ag_privsep_close(&a->fd);
	a->tail_end = -1;
	if (open_file(a) < 0)
		ag_log(LOG_ERR, "audit log %s (reopened in a child): %s", a->file, a->file_error);
}

static const struct ag_sink_ops file_ops = {
	.name = "file", .durable = 1,
	.emit = file_emit, .ready = file_ready, .close = file_close, .forked = file_forked,
};

struct ag_sink *
ag_sink_file_open(const struct ag_audit_conf *conf)
{
	struct file_sink *a = calloc(1, sizeof(*a));

	if (a == NULL || (a->file = strdup(conf->file)) == NULL ||
	    (conf->group != NULL && (a->group = strdup(conf->group)) == NULL)) {
		if (a != NULL)
			free(a->file);
		free(a);
		return NULL;
	}
	a->base.ops = &file_ops;
	a->min_free = conf->min_free;
	a->fd = -1;
	a->cfd = -1;
	a->tail_end = -1;
	{
		char st[PATH_MAX];

		if (ag_chain_state_path(a->file, st, sizeof(st)) == 0)
			a->cfile = strdup(st);
	}
	if (open_file(a) < 0)
		ag_log(LOG_ERR, "audit log %s: %s", conf->file, a->file_error);
	else
		open_state(a);
	return &a->base;
}
