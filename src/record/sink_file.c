/*
 * sink_file.c - the audit file: one JSON object per line, appended with
 * O_APPEND in a single write(2) under the file's lock, each record linked
 * to the line before it (chain.h).  A write-ahead record is on the disk
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
	char		 file_error[PATH_MAX + 128];
	/*
	 * The hash of the line this sink wrote last, and where the file
	 * ended after it: while the file is that long, nobody else has
	 * appended, and the next record links to it without reading it back.
	 */
	char		 tail[AG_CHAIN_HEX];
	off_t		 tail_end;	/* -1: unknown (or another file), read it */
};

static void
add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static int
open_file(struct file_sink *a)
{
	char dir[PATH_MAX], why[96], *slash;
	struct stat st;
	mode_t mode = a->group != NULL ? 0640 : 0600;
	int fd, created = 0, group_dir;

	if (a->file[0] != '/') {
		snprintf(a->file_error, sizeof(a->file_error), "not an absolute path");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", a->file);
	if ((slash = strrchr(dir, '/')) == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if (stat(dir, &st) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	/* anyone else who can write there could swap the log for their own */
	if (ag_privsep_dir_ok(&st, why, sizeof(why)) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "directory %s: %s", dir, why);
		return -1;
	}
	group_dir = ag_privsep_group_dir(&st);
	/* read too: each record links to the file's last line (chain.h) */
	fd = open(a->file, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		fd = open(a->file, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY, mode);
		created = fd >= 0;
		if (fd < 0 && errno == EEXIST)	/* another session created it first */
			fd = open(a->file, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			    O_NOCTTY);
	}
	if (fd < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || ag_privsep_file_ok(&st) < 0) {
		snprintf(a->file_error, sizeof(a->file_error),
		    "not a regular file, or writable by others than its owner%s",
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
		if (a->group != NULL) {
			struct group *gr = getgrnam(a->group);

			if (gr == NULL || fchown(fd, (uid_t)-1, gr->gr_gid) < 0)
				ag_log(LOG_WARNING, "audit log %s: cannot give it to group %s",
				    a->file, a->group);
		}
	}
	a->fd_dev = st.st_dev;
	a->fd_ino = st.st_ino;
	a->tail_end = -1;
	a->fd = ag_privsep_private_fd(fd);
	return 0;
}

/*
 * logrotate (and an admin's mv) renames the log and creates a new one: a
 * gateway that goes on appending to the file it opened writes where no one
 * reads.  Before each record, a path that names another file, or none,
 * is opened (created) again.  A file we could not open stays failed.
 */
static void
follow_rotation(struct file_sink *a)
{
	struct stat now;

	if (a->fd < 0)
		return;
	if (stat(a->file, &now) == 0 && now.st_dev == a->fd_dev && now.st_ino == a->fd_ino)
		return;
	(void)ag_privsep_close(&a->fd);
	if (open_file(a) < 0)
		ag_log(LOG_ERR, "audit log %s (reopened after rotation): %s", a->file,
		    a->file_error);
}

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
	return ag_chain_tail(a->fd, prev, empty);
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
 * The file sink's part: under the file's lock (other sessions append to
 * it too), link the record to the file's last line (chain.h) and write it
 * in one write(2); then, for a write-ahead record, push it to the disk
 * before the command starts (outside the lock: other sessions need not
 * wait for our disk).  The line it writes is the one every other sink gets.
 */
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
	locked = ag_flock_bounded(a->fd, LOCK_WAIT_MS) == 0;
	if (!locked && errno == ETIMEDOUT) {
		/* not the file's fault: keep it for the next record */
		return ag_err_set(why, "audit log %s: another session has held its lock for %ld s "
		    "without writing (a gateway stopped while writing?); the record was not written", a->file,
		    LOCK_WAIT_MS / 1000);
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
	(void)flock(a->fd, LOCK_UN);
	if (sync && fdatasync(a->fd) < 0) {
		snprintf(a->file_error, sizeof(a->file_error), "%s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
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
	free(a->file);
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
	a->fd = -1;
	a->tail_end = -1;
	if (open_file(a) < 0)
		ag_log(LOG_ERR, "audit log %s: %s", conf->file, a->file_error);
	return &a->base;
}
