/*
 * live.c - the live-session registry (live.h).
 *
 * One text file per session, "key value" lines, replaced whole (write a
 * temporary, rename) whenever the current command changes, so a reader
 * never sees half an entry.
 */
#include "agconfig.h"

#include <dirent.h>
#include <syslog.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "common/misc.h"
#include "common/safepath.h"
#include "record/live.h"

static struct ag_live_entry self;	/* this process's entry */
static int registered;

/* One line's value: no newline can split a field. */
static void
put(FILE *fp, const char *key, const char *v)
{
	fprintf(fp, "%s ", key);
	for (; v != NULL && *v != '\0'; v++)
		fputc(*v == '\n' || *v == '\r' ? ' ' : *v, fp);
	fputc('\n', fp);
}

static void
write_entry(void)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", AG_LIVE_DIR, self.session);
	snprintf(tmp, sizeof(tmp), "%s/.%s.new", AG_LIVE_DIR, self.session);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640)) < 0)
		return;
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		(void)unlink(tmp);
		return;
	}
	fprintf(fp, "pid %ld\nstart %llu\n", (long)self.pid, self.start);
	put(fp, "user", self.user);
	put(fp, "identity", self.identity);
	put(fp, "profile", self.profile);
	put(fp, "client", self.client);
	put(fp, "key", self.key);
	put(fp, "token", self.token);
	put(fp, "mode", self.mode);
	put(fp, "since", self.since);
	put(fp, "command", self.command);
	put(fp, "policy", self.policy);
	if (fclose(fp) != 0 || rename(tmp, path) < 0)
		(void)unlink(tmp);
}

void
ag_live_begin(const char *session, const struct ag_audit_info *info, const char *policy)
{
	char real[PATH_MAX];
	struct stat st;
	struct tm tm;
	time_t now = time(NULL);
	pid_t ppid;

	/* only a gateway holding the group (or root's serve) may write there;
	 * the rest have no entry: the registry is for installed gateways */
	if (stat(AG_LIVE_DIR, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    faccessat(AT_FDCWD, AG_LIVE_DIR, W_OK, AT_EACCESS) < 0)
		return;
	memset(&self, 0, sizeof(self));
	snprintf(self.session, sizeof(self.session), "%s", session);
	self.pid = getpid();
	if (ag_proc_stat(self.pid, &ppid, &self.start, NULL) < 0)
		return;
	snprintf(self.user, sizeof(self.user), "%s", info->user ? info->user : "");
	snprintf(self.identity, sizeof(self.identity), "%s", info->identity ? info->identity : "");
	snprintf(self.profile, sizeof(self.profile), "%s", info->profile ? info->profile : "");
	snprintf(self.client, sizeof(self.client), "%s", info->client ? info->client : "");
	snprintf(self.key, sizeof(self.key), "%s", info->key ? info->key : "");
	snprintf(self.token, sizeof(self.token), "%s", info->token ? info->token : "");
	snprintf(self.mode, sizeof(self.mode), "%s", info->mode ? info->mode : "");
	if (policy != NULL)
		snprintf(self.policy, sizeof(self.policy), "%s",
		    realpath(policy, real) != NULL ? real : policy);
	if (gmtime_r(&now, &tm) != NULL)
		strftime(self.since, sizeof(self.since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	registered = 1;
	write_entry();
}

void
ag_live_command(const char *command, size_t len)
{
	if (!registered)
		return;
	if (command == NULL)
		len = 0;
	if (len > AG_LIVE_MAX_CMD)
		len = AG_LIVE_MAX_CMD;
	memcpy(self.command, command != NULL ? command : "", len);
	self.command[len] = '\0';
	/* a NUL inside a command ends what is shown */
	write_entry();
}

int
ag_live_end(void)
{
	char path[PATH_MAX];

	if (!registered)
		return 1;
	registered = 0;
	snprintf(path, sizeof(path), "%s/%s", AG_LIVE_DIR, self.session);
	/* whoever removes the entry writes the session_end: ENOENT means a
	 * witness found this gateway dead and wrote it (it never is, while
	 * we run: a witness only takes the entry of a process that is gone) */
	return unlink(path) == 0 || errno != ENOENT;
}

static void
note_path(char *path, size_t len, const char *session)
{
	snprintf(path, len, "%s/.%s.end", AG_LIVE_DIR, session);
}

int
ag_live_note_end(const char *session, const char *reason, struct ag_err *err)
{
	char path[PATH_MAX];
	FILE *fp;
	int fd;

	note_path(path, sizeof(path), session);
	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	}
	put(fp, "reason", reason);
	if (fclose(fp) != 0)
		return ag_err_set(err, "%s: %s", path, strerror(errno));
	return 0;
}

void
ag_live_note_clear(const char *session)
{
	char path[PATH_MAX];

	note_path(path, sizeof(path), session);
	(void)unlink(path);
}

int
ag_live_ended_by(char *why, size_t whylen)
{
	char path[PATH_MAX], line[512];
	struct stat st;
	FILE *fp;
	int fd, found = 0;

	if (self.session[0] == '\0')
		return 0;
	note_path(path, sizeof(path), self.session);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		close(fd);
		return 0;
	}
	if (fgets(line, sizeof(line), fp) != NULL && strncmp(line, "reason ", 7) == 0) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(why, whylen, "%s", line + 7);
		found = 1;
	}
	fclose(fp);
	return found;
}

static void
field(struct ag_live_entry *e, const char *key, const char *v)
{
	static const struct {
		const char	*key;
		size_t		 off, len;
	} f[] = {
#define F(name) { #name, offsetof(struct ag_live_entry, name), \
		sizeof(((struct ag_live_entry *)0)->name) }
		F(user), F(identity), F(profile), F(client), F(key), F(token), F(mode),
		F(since), F(command), F(policy),
#undef F
	};
	size_t i;

	if (strcmp(key, "pid") == 0)
		e->pid = (pid_t)strtol(v, NULL, 10);
	else if (strcmp(key, "start") == 0)
		e->start = strtoull(v, NULL, 10);
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (strcmp(key, f[i].key) == 0)
			snprintf((char *)e + f[i].off, f[i].len, "%s", v);
}

/* The entry in the file at path (named name): 0, or -1 when unreadable. */
static int
read_entry(const char *path, const char *name, struct ag_live_entry *e)
{
	char line[PATH_MAX + 64];
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	memset(e, 0, sizeof(*e));
	memcpy(e->session, name, strlen(name));
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (sp == NULL)
			continue;
		*sp = '\0';
		field(e, line, sp + 1);
	}
	fclose(fp);
	return 0;
}

/* 1 when the entry's gateway is no longer running: no such process, another
 * process with its pid, or a zombie its parent has not reaped yet. */
static int
gateway_gone(const struct ag_live_entry *e)
{
	unsigned long long start;
	pid_t ppid;
	char state;

	return e->pid <= 0 || ag_proc_stat(e->pid, &ppid, &start, &state) < 0 ||
	    start != e->start || state == 'Z' || state == 'X';
}

void
ag_live_audit_info(const struct ag_live_entry *e, struct ag_audit_info *info)
{
	memset(info, 0, sizeof(*info));
	info->user = e->user;
	info->identity = e->identity[0] ? e->identity : NULL;
	info->profile = e->profile[0] ? e->profile : NULL;
	info->client = e->client[0] ? e->client : NULL;
	info->key = e->key[0] ? e->key : NULL;
	info->token = e->token[0] ? e->token : NULL;
	info->mode = e->mode[0] ? e->mode : NULL;
}

static const char *witness_name = "agentgate";

void
ag_live_witness(const char *who)
{
	witness_name = who;
}

/*
 * e's gateway is gone without removing its entry (at path): killed, or
 * crashed.  Whoever removes an entry writes the session's end, so take it
 * (a second witness, or the gateway itself, then finds it gone) and write
 * the session_end the gateway never did: to conf's audit, or, with conf
 * NULL (root), to the audit of the policy the session ran under, which
 * must be a file only root can have written (a gateway the agent starts
 * with its own --config names its own policy, and root would append to
 * whatever file that names).
 */
static void
lost(const char *path, const struct ag_live_entry *e, const struct ag_audit_conf *conf,
    const char *witness)
{
	struct ag_config *cfg = NULL;
	struct ag_audit_info info;
	struct ag_audit *a = NULL;
	struct ag_err err;
	struct stat st;
	char *real = NULL;
	int done = 0, fd;

	/*
	 * Taken under a lock on the entry itself, one witness at a time, and
	 * removed only once the record is written (or never can be): a write
	 * that fails (the log's lock held by a stopped process) leaves it for
	 * the next witness, and so does a witness that dies (the kernel lets
	 * go of its lock).  An entry with no name left was another witness's.
	 */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;		/* another witness's, or another account's entry */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		return;
	}
	ag_err_clear(&err);
	if (conf == NULL) {
		if (e->policy[0] == '\0')
			ag_err_set(&err, "no policy recorded for it");
		else if (ag_safe_path(e->policy, 0, &st, &real, &err) == 0)
			cfg = ag_config_load(real, AG_CONFIG_GATEWAY_ONLY, &err);
		if (cfg == NULL) {
			/* not a write that may work later: said once, and let go */
			ag_log(LOG_WARNING, "session %s: its gateway (pid %ld) is gone without "
			    "recording the session's end, and it cannot be recorded: %s",
			    e->session, (long)e->pid, err.msg);
			done = 1;
			goto out;
		}
		conf = &cfg->gw.audit;
	}
	ag_live_audit_info(e, &info);
	if ((a = ag_audit_open(conf, &info, &err)) == NULL ||
	    ag_audit_session_lost(a, e->session, (long)e->pid, e->since, witness, &err) < 0)
		ag_log(LOG_ERR, "session %s: its gateway (pid %ld) is gone; the session's end "
		    "is not recorded yet: %s", e->session, (long)e->pid, err.msg);
	else if ((done = 1))
		ag_log(LOG_WARNING, "session %s (%s@%s): its gateway (pid %ld) is gone without "
		    "recording the session's end; recorded by %s", e->session,
		    e->identity[0] ? e->identity : "-", e->user, (long)e->pid, witness);
out:
	ag_audit_close(a);
	ag_config_free(cfg);
	free(real);
	if (done)
		(void)unlink(path);
	close(fd);
}

void
ag_live_reap(const char *policy, const struct ag_audit_conf *conf, const char *witness)
{
	char real[PATH_MAX], path[PATH_MAX];
	struct ag_live_entry e;
	struct dirent *de;
	DIR *d;

	if (policy != NULL && realpath(policy, real) == NULL)
		return;
	if ((d = opendir(AG_LIVE_DIR)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(e.session))
			continue;
		snprintf(path, sizeof(path), "%s/%s", AG_LIVE_DIR, de->d_name);
		if (read_entry(path, de->d_name, &e) < 0 || !gateway_gone(&e))
			continue;
		/* a gateway writes only to its own policy's audit */
		if (policy != NULL && strcmp(e.policy, real) != 0)
			continue;
		lost(path, &e, conf, witness);
	}
	closedir(d);
}

int
ag_live_list(int (*fn)(const struct ag_live_entry *, void *), void *arg, struct ag_err *err)
{
	DIR *d;
	struct dirent *de;
	int n = 0;

	if ((d = opendir(AG_LIVE_DIR)) == NULL) {
		if (errno == ENOENT)
			return 0;
		return ag_err_set(err, "%s: %s", AG_LIVE_DIR, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		struct ag_live_entry e;
		char path[PATH_MAX];

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(e.session))
			continue;
		snprintf(path, sizeof(path), "%s/%s", AG_LIVE_DIR, de->d_name);
		if (read_entry(path, de->d_name, &e) < 0)
			continue;
		/* a gateway killed before it could end its session */
		if (gateway_gone(&e)) {
			lost(path, &e, NULL, witness_name);
			continue;
		}
		n++;
		if (fn(&e, arg) != 0)
			break;
	}
	closedir(d);
	return n;
}
