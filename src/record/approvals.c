/*
 * approvals.c - requests that wait for a person, and their answers
 * (approvals.h).
 *
 * Files are "key value" lines, written whole under a temporary name and
 * renamed into place, so a reader never sees half of one and the watcher
 * sees the rename (IN_MOVED_TO).  A value keeps every byte: a backslash,
 * a newline, a carriage return, a tab and the other control bytes are
 * written escaped (\\ \n \r \t \xNN) and read back as they were.
 */
#include "agconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/sha256.h"
#include "record/approvals.h"

#define MAX_FOR	(30L * 86400)	/* the longest --for */

struct ag_approval {
	struct ag_approval_req	*req;
	int			 ifd;	/* inotify on the directory */
	int			 filed;
};

const char *
ag_approval_scope_name(enum ag_approval_scope s)
{
	return s == AG_SCOPE_SESSION ? "session" : s == AG_SCOPE_FOR ? "for" : "once";
}

int
ag_approval_parse_duration(const char *s, long *secs)
{
	unsigned long long v = 0, mul = 1;
	const char *p = s;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > (unsigned long long)MAX_FOR)
			return -1;
	}
	switch (*p) {
	case '\0':
		break;
	case 's': mul = 1; p++; break;
	case 'm': mul = 60; p++; break;
	case 'h': mul = 3600; p++; break;
	case 'd': mul = 86400; p++; break;
	default:
		return -1;
	}
	if (*p != '\0' || v == 0 || v * mul > (unsigned long long)MAX_FOR)
		return -1;
	*secs = (long)(v * mul);
	return 0;
}

int
ag_approval_parse_scope(const char *opt, const char *arg, enum ag_approval_scope *scope,
    long *secs, struct ag_err *err)
{
	*secs = 0;
	if (strcmp(opt, "--once") == 0)
		*scope = AG_SCOPE_ONCE;
	else if (strcmp(opt, "--session") == 0)
		*scope = AG_SCOPE_SESSION;
	else if (strcmp(opt, "--for") == 0) {
		*scope = AG_SCOPE_FOR;
		if (arg == NULL || ag_approval_parse_duration(arg, secs) < 0)
			return ag_err_set(err, "--for needs a duration: seconds or a number with "
			    "s, m, h or d (30m, 2h), at most 30 days");
	} else
		return ag_err_set(err, "unknown option '%s' (--once, --session, --for DURATION)",
		    opt);
	return 0;
}

/* ---- who may approve -------------------------------------------------------- */

static int
in_group(const struct passwd *pw, const char *name)
{
	struct group *gr = getgrnam(name);
	char **m;

	if (gr == NULL)
		return 0;
	if (pw->pw_gid == gr->gr_gid)
		return 1;
	for (m = gr->gr_mem; m != NULL && *m != NULL; m++)
		if (strcmp(*m, pw->pw_name) == 0)
			return 1;
	return 0;
}

int
ag_approval_is_approver(const struct ag_strlist *list, uid_t uid)
{
	struct passwd *pw;
	size_t i;

	if (uid == 0)
		return 1;
	if (list == NULL || (pw = getpwuid(uid)) == NULL)
		return 0;
	for (i = 0; i < list->n; i++)
		if (list->v[i][0] == '%' ? in_group(pw, list->v[i] + 1) :
		    strcmp(list->v[i], pw->pw_name) == 0)
			return 1;
	return 0;
}

void
ag_approval_approvers_text(const struct ag_strlist *list, char *buf, size_t bufsz)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; list != NULL && i < list->n && len < bufsz; i++)
		len += (size_t)snprintf(buf + len, bufsz - len, "%s%s", i ? ", " : "",
		    list->v[i]);
	if (buf[0] == '\0')
		snprintf(buf, bufsz, "root");
}

/* ---- files ------------------------------------------------------------------ */

static void
put(FILE *fp, const char *key, const char *v)
{
	fprintf(fp, "%s ", key);
	for (; v != NULL && *v != '\0'; v++) {
		unsigned char ch = (unsigned char)*v;

		if (ch == '\\')
			fputs("\\\\", fp);
		else if (ch == '\n')
			fputs("\\n", fp);
		else if (ch == '\r')
			fputs("\\r", fp);
		else if (ch == '\t')
			fputs("\\t", fp);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(fp, "\\x%02x", ch);
		else
			fputc(ch, fp);
	}
	fputc('\n', fp);
}

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* put()'s value v back as it was, into out (cut at outsz - 1: a command
 * cut so no longer matches its digest). */
static void
unput(const char *v, char *out, size_t outsz)
{
	size_t j = 0;

	for (; *v != '\0' && j + 1 < outsz; v++) {
		char ch = *v;

		if (ch == '\\' && v[1] != '\0') {
			ch = *++v;
			if (ch == 'n')
				ch = '\n';
			else if (ch == 'r')
				ch = '\r';
			else if (ch == 't')
				ch = '\t';
			else if (ch == 'x' && hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
				ch = (char)(hexval(v[1]) * 16 + hexval(v[2]));
				v += 2;
			}
		}
		out[j++] = ch;
	}
	out[j] = '\0';
}

/* Write dir/name from fn's lines, whole: 0, or -1 with err (EEXIST when
 * name is there already and not ours to replace). */
static int
write_file(const char *name, mode_t mode, void (*fn)(FILE *, const void *), const void *arg,
    struct ag_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	unsigned char rnd[6];
	FILE *fp;
	int fd;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return ag_err_set(err, "no random bytes: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", AG_APPROVALS_DIR, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%02x%02x%02x%02x%02x%02x", AG_APPROVALS_DIR, name,
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)) < 0)
		return ag_err_set(err, "%s: %s", AG_APPROVALS_DIR, strerror(errno));
	(void)fchmod(fd, mode);
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		(void)unlink(tmp);
		return ag_err_set(err, "%s: %s", tmp, strerror(errno));
	}
	fn(fp, arg);
	if (fflush(fp) != 0 || fsync(fileno(fp)) != 0 || fclose(fp) != 0) {
		(void)unlink(tmp);
		return ag_err_set(err, "%s: %s", tmp, strerror(errno));
	}
	/* an answer is given once: link(2) does not replace one that is there */
	if (link(tmp, path) < 0) {
		int e = errno;

		(void)unlink(tmp);
		errno = e;
		return ag_err_set(err, "%s: %s", path, e == EEXIST ? "already there" : strerror(e));
	}
	(void)unlink(tmp);
	return 0;
}

/*
 * Open dir/name as a file nobody could have slipped in: no link followed,
 * regular, one name; its owner in *owner.  NULL when it is not so.
 */
static FILE *
open_checked(const char *name, uid_t *owner, mode_t *mode)
{
	char path[PATH_MAX];
	struct stat st;
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", AG_APPROVALS_DIR, name);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_size > 16384 || (fp = fdopen(fd, "r")) == NULL) {
		close(fd);
		return NULL;
	}
	*owner = st.st_uid;
	if (mode != NULL)
		*mode = st.st_mode;
	return fp;
}

/* Each "key value" line of fp to fn. */
static void
each_line(FILE *fp, void (*fn)(const char *, const char *, void *), void *arg)
{
	/* a command escaped whole: at most 4 bytes for each of its own */
	char line[4 * AG_APPROVAL_MAX_CMD + 64];

	while (fgets(line, sizeof(line), fp) != NULL) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (sp == NULL)
			continue;
		*sp = '\0';
		fn(line, sp + 1, arg);
	}
}

#define SET(field) unput(v, field, sizeof(field))

static void
req_field(const char *k, const char *v, void *arg)
{
	struct ag_approval_req *r = arg;

	if (strcmp(k, "id") == 0) SET(r->id);
	else if (strcmp(k, "session") == 0) SET(r->session);
	else if (strcmp(k, "pid") == 0) r->pid = strtol(v, NULL, 10);
	else if (strcmp(k, "start") == 0) r->start = strtoull(v, NULL, 10);
	else if (strcmp(k, "uid") == 0) r->uid = (uid_t)strtoul(v, NULL, 10);
	else if (strcmp(k, "user") == 0) SET(r->user);
	else if (strcmp(k, "identity") == 0) SET(r->identity);
	else if (strcmp(k, "profile") == 0) SET(r->profile);
	else if (strcmp(k, "rule") == 0) SET(r->rule);
	else if (strcmp(k, "command") == 0) SET(r->command);
	else if (strcmp(k, "digest") == 0) SET(r->digest);
	else if (strcmp(k, "justification") == 0) SET(r->justification);
	else if (strcmp(k, "approvers") == 0) SET(r->approvers);
	else if (strcmp(k, "since") == 0) r->since = strtoll(v, NULL, 10);
	else if (strcmp(k, "deadline") == 0) r->deadline = strtoll(v, NULL, 10);
}

struct ans_read {
	struct ag_approval_answer	*a;
	char				 id[AG_APPROVAL_ID_LEN + 1];
	char				 digest[65];
};

static void
ans_field(const char *k, const char *v, void *arg)
{
	struct ans_read *r = arg;

	if (strcmp(k, "id") == 0) SET(r->id);
	else if (strcmp(k, "digest") == 0) SET(r->digest);
	else if (strcmp(k, "scope") == 0)
		r->a->scope = strcmp(v, "session") == 0 ? AG_SCOPE_SESSION :
		    strcmp(v, "for") == 0 ? AG_SCOPE_FOR : AG_SCOPE_ONCE;
	else if (strcmp(k, "until") == 0) r->a->until = strtoll(v, NULL, 10);
	else if (strcmp(k, "reason") == 0) SET(r->a->reason);
	else if (strcmp(k, "rule") == 0) SET(r->a->rule);
	else if (strcmp(k, "identity") == 0) SET(r->a->identity);
	else if (strcmp(k, "user") == 0) SET(r->a->user);
}

static void
write_req(FILE *fp, const void *arg)
{
	const struct ag_approval_req *r = arg;

	put(fp, "id", r->id);
	put(fp, "session", r->session);
	fprintf(fp, "pid %ld\nstart %llu\nuid %lu\n", r->pid, r->start, (unsigned long)r->uid);
	put(fp, "user", r->user);
	put(fp, "identity", r->identity);
	put(fp, "profile", r->profile);
	put(fp, "rule", r->rule);
	put(fp, "command", r->command);
	put(fp, "justification", r->justification);
	put(fp, "approvers", r->approvers);
	fprintf(fp, "since %lld\ndeadline %lld\n", r->since, r->deadline);
	put(fp, "digest", r->digest);
}

struct ans_write {
	const struct ag_approval_req	*r;
	const struct ag_approval_answer	*a;
};

static void
write_ans(FILE *fp, const void *arg)
{
	const struct ans_write *w = arg;

	put(fp, "id", w->r->id);
	put(fp, "digest", w->r->digest);
	put(fp, "rule", w->r->rule);
	put(fp, "identity", w->r->identity);
	put(fp, "user", w->r->user);
	if (w->a->approved) {
		put(fp, "scope", ag_approval_scope_name(w->a->scope));
		if (w->a->scope == AG_SCOPE_FOR)
			fprintf(fp, "until %lld\n", w->a->until);
	} else
		put(fp, "reason", w->a->reason);
}

/*
 * The answer file name (ID.ok, ID.no) believed for req: from an approver
 * that is not the session's uid, naming req's id and command.  1 with ans
 * filled, 0 when there is none to believe.
 */
static int
read_answer(const char *name, const struct ag_approval_req *req,
    const struct ag_strlist *approvers, struct ag_approval_answer *ans, int approved)
{
	struct ans_read r;
	struct passwd *pw;
	uid_t owner;
	FILE *fp;

	if ((fp = open_checked(name, &owner, NULL)) == NULL)
		return 0;
	memset(ans, 0, sizeof(*ans));
	memset(&r, 0, sizeof(r));
	r.a = ans;
	each_line(fp, ans_field, &r);
	fclose(fp);
	if (owner == req->uid || !ag_approval_is_approver(approvers, owner)) {
		ag_log(LOG_WARNING, "approval %s: %s/%s is not believed: its owner (uid %lu) "
		    "may not approve this session's lines", req->id, AG_APPROVALS_DIR, name,
		    (unsigned long)owner);
		return 0;
	}
	if (strcmp(r.id, req->id) != 0 || strcmp(r.digest, req->digest) != 0) {
		ag_log(LOG_WARNING, "approval %s: %s/%s names another request or command; "
		    "not believed", req->id, AG_APPROVALS_DIR, name);
		return 0;
	}
	ans->approved = approved;
	if ((pw = getpwuid(owner)) != NULL)
		snprintf(ans->approver, sizeof(ans->approver), "%s", pw->pw_name);
	else
		snprintf(ans->approver, sizeof(ans->approver), "uid %lu", (unsigned long)owner);
	return 1;
}

int
ag_approval_alive(const struct ag_approval_req *req)
{
	unsigned long long start;
	pid_t ppid;
	char state;

	return req->pid > 0 && ag_proc_stat((pid_t)req->pid, &ppid, &start, &state) == 0 &&
	    start == req->start && state != 'Z' && state != 'X';
}

/* ---- the gateway's side ------------------------------------------------------- */

void
ag_approval_count(const char *session, long pid, uid_t uid, int *in_session,
    int *of_account)
{
	struct ag_approval_req req;
	struct ag_err e;
	struct dirent *de;
	char id[AG_APPROVAL_ID_LEN + 1];
	size_t nl;
	DIR *d;

	*in_session = *of_account = 0;
	if ((d = opendir(AG_APPROVALS_DIR)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (nl != AG_APPROVAL_ID_LEN + 4 || strcmp(de->d_name + AG_APPROVAL_ID_LEN, ".req") != 0)
			continue;
		memcpy(id, de->d_name, AG_APPROVAL_ID_LEN);
		id[AG_APPROVAL_ID_LEN] = '\0';
		ag_err_clear(&e);
		if (ag_approval_read(id, &req, &e) < 0 || req.uid != uid || !ag_approval_alive(&req))
			continue;
		(*of_account)++;
		if (session[0] != '\0' ? strcmp(req.session, session) == 0 : req.pid == pid)
			(*in_session)++;
	}
	closedir(d);
}

static void
hex(const unsigned char *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = '\0';
}

struct ag_approval *
ag_approval_file(struct ag_approval_req *req, const char *line, size_t len,
    struct ag_err *err)
{
	unsigned char rnd[AG_APPROVAL_ID_LEN / 2], sum[AG_SHA256_LEN];
	struct ag_approval *a;
	char name[64];
	pid_t ppid;

	/* a person approves the whole command or none of it: never a part */
	if (len > AG_APPROVAL_MAX_CMD || memchr(line, '\0', len) != NULL)
		return ag_err_set(err, "too long to show a person for approval (%zu bytes, at "
		    "most %d)", len, AG_APPROVAL_MAX_CMD), NULL;
	if (ag_proc_stat((pid_t)req->pid, &ppid, &req->start, NULL) < 0)
		return ag_err_set(err, "cannot read the gateway's start time (pid %ld)",
		    req->pid), NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return ag_err_set(err, "out of memory"), NULL;
	a->req = req;
	a->ifd = -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		ag_err_set(err, "no random bytes: %s", strerror(errno));
		goto fail;
	}
	hex(rnd, sizeof(rnd), req->id);
	ag_sha256(line, len, sum);
	hex(sum, sizeof(sum), req->digest);
	memcpy(req->command, line, len);
	req->command[len] = '\0';
	/* watched before the request can be seen: no answer is missed */
	if ((a->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(a->ifd, AG_APPROVALS_DIR, IN_MOVED_TO | IN_CLOSE_WRITE |
	    IN_CREATE) < 0) {
		ag_err_set(err, "cannot watch %s: %s", AG_APPROVALS_DIR, strerror(errno));
		goto fail;
	}
	snprintf(name, sizeof(name), "%s.req", req->id);
	if (write_file(name, 0640, write_req, req, err) < 0)
		goto fail;
	a->filed = 1;
	return a;
fail:
	ag_approval_close(a);
	return NULL;
}

/* 1 answered, 0 not yet. */
static int
try_answers(struct ag_approval *a, const struct ag_strlist *approvers,
    struct ag_approval_answer *ans)
{
	char name[64];

	/* (only one can be an approver's: answer() gives one or the other) */
	snprintf(name, sizeof(name), "%s.ok", a->req->id);
	if (read_answer(name, a->req, approvers, ans, 1))
		return 1;
	snprintf(name, sizeof(name), "%s.no", a->req->id);
	return read_answer(name, a->req, approvers, ans, 0);
}

int
ag_approval_wait(struct ag_approval *a, const struct ag_strlist *approvers,
    long timeout_s, int watch_fd, int (*stop)(void), struct ag_approval_answer *ans,
    struct ag_err *err)
{
	long long deadline = ag_now_ms() + timeout_s * 1000LL, left;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pf[2];
	size_t n = 1;

	pf[0].fd = a->ifd;
	pf[0].events = POLLIN;
	if (watch_fd >= 0) {
		pf[1].fd = watch_fd;
		pf[1].events = 0;	/* only POLLERR/POLLHUP: its reader gone */
		n = 2;
	}
	for (;;) {
		if (try_answers(a, approvers, ans))
			return 1;
		if ((left = deadline - ag_now_ms()) <= 0)
			return 0;
		pf[0].revents = 0;
		if (n == 2)
			pf[1].revents = 0;
		if (poll(pf, n, left > 60000 ? 60000 : (int)left) < 0) {
			if (errno != EINTR)
				return ag_err_set(err, "poll: %s", strerror(errno));
			if (stop != NULL && stop())
				return ag_err_set(err, "the session is ending");
			continue;
		}
		if (n == 2 && (pf[1].revents & (POLLERR | POLLHUP | POLLNVAL)))
			return ag_err_set(err, "the client went away while the line waited "
			    "for approval");
		if (pf[0].revents & POLLIN)
			while (read(a->ifd, buf, sizeof(buf)) > 0)
				;	/* which file does not matter: both are looked at */
	}
}

void
ag_approval_rebind(struct ag_approval *a, struct ag_approval_req *req)
{
	a->req = req;
}

void
ag_approval_close(struct ag_approval *a)
{
	char path[PATH_MAX];

	if (a == NULL)
		return;
	if (a->filed) {
		snprintf(path, sizeof(path), "%s/%s.req", AG_APPROVALS_DIR, a->req->id);
		(void)unlink(path);
	}
	if (a->ifd >= 0)
		close(a->ifd);
	free(a);
}

int
ag_approval_standing(const char *identity, const char *user, uid_t self, const char *rule,
    const struct ag_strlist *approvers, struct ag_approval_answer *ans)
{
	struct ag_approval_req req;
	struct ans_read r;
	struct dirent *de;
	struct passwd *pw;
	uid_t owner;
	FILE *fp;
	DIR *d;
	size_t nl;
	int found = 0;

	if ((d = opendir(AG_APPROVALS_DIR)) == NULL)
		return 0;
	memset(&req, 0, sizeof(req));
	req.uid = self;
	while (!found && (de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (de->d_name[0] == '.' || nl < 4 || strcmp(de->d_name + nl - 3, ".ok") != 0)
			continue;
		if ((fp = open_checked(de->d_name, &owner, NULL)) == NULL)
			continue;
		memset(ans, 0, sizeof(*ans));
		memset(&r, 0, sizeof(r));
		r.a = ans;
		each_line(fp, ans_field, &r);
		fclose(fp);
		if (owner == self || !ag_approval_is_approver(approvers, owner) ||
		    ans->scope != AG_SCOPE_FOR || ans->until <= (long long)time(NULL) ||
		    strcmp(ans->rule, rule) != 0)
			continue;
		/* the same identity on the same account (a name reused later
		 * for another is another) */
		if (strcmp(ans->identity, identity != NULL ? identity : "") != 0 ||
		    strcmp(ans->user, user != NULL ? user : "") != 0)
			continue;
		ans->approved = 1;
		if ((pw = getpwuid(owner)) != NULL)
			snprintf(ans->approver, sizeof(ans->approver), "%s", pw->pw_name);
		found = 1;
	}
	closedir(d);
	return found;
}

/* ---- the approver's side ------------------------------------------------------ */

int
ag_approval_read(const char *id, struct ag_approval_req *req, struct ag_err *err)
{
	char name[64];
	uid_t owner;
	mode_t mode;
	unsigned char sum[AG_SHA256_LEN];
	char digest[2 * AG_SHA256_LEN + 1];
	FILE *fp;
	size_t i;

	for (i = 0; id[i] != '\0'; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			break;
	if (i != AG_APPROVAL_ID_LEN || id[i] != '\0')
		return ag_err_set(err, "'%s' is not a request id (%d hex digits; see "
		    "`agentgate approvals`)", id, AG_APPROVAL_ID_LEN);
	snprintf(name, sizeof(name), "%s.req", id);
	if ((fp = open_checked(name, &owner, &mode)) == NULL)
		return ag_err_set(err, "no request %s is waiting (answered, timed out, or "
		    "its client went away)", id);
	memset(req, 0, sizeof(*req));
	each_line(fp, req_field, req);
	fclose(fp);
	if ((mode & 022) != 0 || owner != req->uid || strcmp(req->id, id) != 0 ||
	    strlen(req->digest) != 64)
		return ag_err_set(err, "request %s is not a gateway's (owner, mode or content); "
		    "not answered", id);
	ag_sha256(req->command, strlen(req->command), sum);
	hex(sum, sizeof(sum), digest);
	if (strcmp(digest, req->digest) != 0)
		return ag_err_set(err, "request %s does not hold the whole command it asks "
		    "for (its digest differs); not shown, not answered", id);
	return 0;
}

/*
 * An answer whose request is gone and that grants nothing more (not an
 * unexpired --for): removed, where the caller may (its own, or root).
 */
static void
collect(const char *name)
{
	char path[PATH_MAX];
	struct ag_approval_answer ans;
	struct ans_read r;
	struct stat st;
	uid_t owner;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%.*s.req", AG_APPROVALS_DIR, AG_APPROVAL_ID_LEN, name);
	if (lstat(path, &st) == 0 || (fp = open_checked(name, &owner, NULL)) == NULL)
		return;
	memset(&ans, 0, sizeof(ans));
	memset(&r, 0, sizeof(r));
	r.a = &ans;
	each_line(fp, ans_field, &r);
	fclose(fp);
	if (ans.scope == AG_SCOPE_FOR && ans.until > (long long)time(NULL))
		return;
	if (owner == getuid() || getuid() == 0) {
		snprintf(path, sizeof(path), "%s/%s", AG_APPROVALS_DIR, name);
		(void)unlink(path);
	}
}

int
ag_approval_list(int (*fn)(const struct ag_approval_req *, void *), void *arg,
    struct ag_err *err)
{
	struct ag_approval_req req;
	struct ag_err e;
	struct dirent *de;
	char id[AG_APPROVAL_ID_LEN + 1];
	size_t nl;
	int n = 0;
	DIR *d;

	if ((d = opendir(AG_APPROVALS_DIR)) == NULL) {
		if (errno == ENOENT)
			return 0;
		return ag_err_set(err, "%s: %s", AG_APPROVALS_DIR, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (nl == AG_APPROVAL_ID_LEN + 3 && (strcmp(de->d_name + AG_APPROVAL_ID_LEN, ".ok") == 0 ||
		    strcmp(de->d_name + AG_APPROVAL_ID_LEN, ".no") == 0))
			collect(de->d_name);
		if (nl != AG_APPROVAL_ID_LEN + 4 || strcmp(de->d_name + AG_APPROVAL_ID_LEN, ".req") != 0)
			continue;
		memcpy(id, de->d_name, AG_APPROVAL_ID_LEN);
		id[AG_APPROVAL_ID_LEN] = '\0';
		ag_err_clear(&e);
		if (ag_approval_read(id, &req, &e) < 0)
			continue;
		/* a gateway killed while it waited */
		if (!ag_approval_alive(&req))
			continue;
		n++;
		if (fn(&req, arg) != 0)
			break;
	}
	closedir(d);
	return n;
}

int
ag_approval_answer(const struct ag_approval_req *req, const struct ag_approval_answer *ans,
    struct ag_err *err)
{
	struct ans_write w = { .r = req, .a = ans };
	char name[64], other[PATH_MAX];

	snprintf(other, sizeof(other), "%s/%s.%s", AG_APPROVALS_DIR, req->id,
	    ans->approved ? "no" : "ok");
	if (access(other, F_OK) == 0)
		return ag_err_set(err, "request %s is answered already", req->id);
	snprintf(name, sizeof(name), "%s.%s", req->id, ans->approved ? "ok" : "no");
	if (write_file(name, 0644, write_ans, &w, err) < 0)
		return -1;
	return 0;
}
