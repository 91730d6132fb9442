/*
 * cmd_join.c - `agentgate join SESSION --observe | --moderate`: watch a
 * live session as it runs, and (--moderate) end it.
 *
 * Who: root, or a user the session's own policy names in
 * gateway.observers (a name, or %group); moderating is root's, since it
 * ends the session as `agentgate terminate` does (a signal to the
 * gateway, which runs as the agent's account).  A non-root observer is
 * judged only by a policy file that root alone can have written
 * (common/safepath.h): a policy the caller wrote would let it name itself.
 *
 * What: the session's recording (gateway.recordings; a terminal
 * session's), read as the gateway writes it (inotify, no polling of the
 * file), shown as `agentgate replay` shows it (cli/castplay.h): the
 * programs' output as plain text behind a margin, every escape sequence
 * dropped or spelled out, never passed to the watcher's terminal.  A
 * session with no recording (a command run without a terminal, or
 * recordings off) shows its commands as the live registry has them.
 *
 * The watcher never writes anything the session can read: its keys go
 * nowhere but here (q leaves, Ctrl-C leaves, Ctrl-T k ends the session
 * when moderating) and are not echoed, recorded or forwarded.  Joining,
 * leaving and a moderator's termination are records of the session's own
 * audit log (session_join, session_leave, session_terminate).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "cli/castplay.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/misc.h"
#include "common/safepath.h"
#include "common/utf8.h"
#include "record/audit.h"
#include "record/live.h"
#include "record/recording.h"

#define JOIN_KEY_CMD	0x14		/* Ctrl-T: the next key is a command */
#define JOIN_KEY_KILL	'k'		/* Ctrl-T k: end the session (--moderate) */
#define JOIN_CHECK_MS	1000		/* how often the gateway's life is checked */
#define JOIN_GROUPS_MAX	256
#define JOIN_USAGE	"usage: agentgate join [--config FILE] --observe | --moderate SESSION\n"

static volatile sig_atomic_t leave_sig;

static void
on_signal(int sig)
{
	leave_sig = sig;
}

struct join {
	const char		*prefix;	/* the SESSION argument */
	int			 found;
	struct ag_live_entry	 e;		/* the session, once found */
	int			 moderate;
	char			 who[64];	/* the watcher's user name */
	struct ag_config	*cfg;		/* the session's policy */
	char			 cast[PATH_MAX];	/* its recording, or "" */
	char			 last_cmd[AG_LIVE_MAX_CMD + 1];
};

static int
find_one(const struct ag_live_entry *e, void *arg)
{
	struct join *j = arg;

	if (strncmp(e->session, j->prefix, strlen(j->prefix)) == 0 && j->found++ == 0)
		j->e = *e;
	return 0;
}

/* 1 when the session is still listed (its gateway alive), with *e fresh. */
static int
still_live(struct join *j)
{
	struct join now;
	struct ag_err err;

	memset(&now, 0, sizeof(now));
	now.prefix = j->e.session;
	ag_err_clear(&err);
	if (ag_live_list(find_one, &now, &err) < 0 || now.found != 1)
		return 0;
	j->e = now.e;
	return 1;
}

/* Whether the user is named in list (user, or %group it is a member of). */
static int
named(const struct ag_strlist *list, const struct passwd *pw)
{
	gid_t groups[JOIN_GROUPS_MAX];
	int ng = JOIN_GROUPS_MAX, k;
	size_t i;

	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ng) < 0)
		ng = 0;		/* more than we look at: the primary group alone */
	for (i = 0; i < list->n; i++) {
		const char *v = list->v[i];
		struct group *gr;

		if (v[0] != '%') {
			if (strcmp(v, pw->pw_name) == 0)
				return 1;
			continue;
		}
		if ((gr = getgrnam(v + 1)) == NULL)
			continue;
		if (gr->gr_gid == pw->pw_gid)
			return 1;
		for (k = 0; k < ng; k++)
			if (groups[k] == gr->gr_gid)
				return 1;
	}
	return 0;
}

/* One record of the session's own audit log; -1 when it could not be
 * written and the policy requires the audit. */
static int
audit(struct join *j, const char *event, const char *decision, const char *reason)
{
	struct ag_audit_info info;
	struct ag_audit *a;
	struct ag_err err;
	int rc = 0;

	if (j->cfg == NULL)
		return 0;
	ag_live_audit_info(&j->e, &info);
	info.token = NULL;
	info.mode = "admin";
	ag_err_clear(&err);
	if ((a = ag_audit_open(&j->cfg->gw.audit, &info, &err)) == NULL ||
	    ag_audit_event(a, event, j->e.session, decision, reason, &err) < 0) {
		fprintf(stderr, "agentgate: join: not audited: %s\n", err.msg);
		rc = a == NULL || ag_audit_required(a) ? -1 : 0;
	}
	ag_audit_close(a);
	return rc;
}

/*
 * The session's policy, and whether this caller may join: root always
 * (its --config when the gateway recorded no policy), others only as a
 * gateway.observers of a policy only root can have written.
 */
static int
authorize(struct join *j, const char *config)
{
	const char *want = j->e.policy[0] != '\0' ? j->e.policy : config;
	struct ag_err err;
	struct stat st;
	char *real = NULL;

	ag_err_clear(&err);
	if (getuid() == 0) {
		if ((j->cfg = ag_config_load(want, AG_CONFIG_GATEWAY_ONLY, &err)) == NULL) {
			ag_err_print(stderr, &err);
			return -1;
		}
		return 0;
	}
	if (j->e.policy[0] == '\0') {
		fprintf(stderr, "agentgate: join: session %.8s records no policy file; only root "
		    "may join it\n", j->e.session);
		return -1;
	}
	if (ag_safe_path(j->e.policy, 0, &st, &real, &err) < 0 ||
	    (j->cfg = ag_config_load(real, AG_CONFIG_GATEWAY_ONLY, &err)) == NULL) {
		free(real);
		ag_err_print(stderr, &err);
		fprintf(stderr, "agentgate: join: only root may join session %.8s\n",
		    j->e.session);
		return -1;
	}
	free(real);
	if (j->moderate) {
		(void)audit(j, "session_join", "deny", "moderate: root only");
		fprintf(stderr, "agentgate: join: --moderate is root's: ending a session "
		    "signals its gateway (agentgate terminate)\n");
		return -1;
	}
	{
		struct passwd *pw = getpwuid(getuid());

		if (pw == NULL || !named(&j->cfg->gw.observers, pw)) {
			char why[160];

			snprintf(why, sizeof(why), "%s is not in gateway.observers", j->who);
			(void)audit(j, "session_join", "deny", why);
			fprintf(stderr, "agentgate: join: %s may not watch sessions: the "
			    "policy %s names no such user or group in gateway.observers\n",
			    j->who, j->e.policy);
			return -1;
		}
	}
	return 0;
}

static void
header(const struct join *j)
{
	char id[4 * 128], user[4 * 64], prof[4 * 128], client[4 * 160];
	char cmd[4 * (AG_LIVE_MAX_CMD + 1)];
	const struct ag_live_entry *e = &j->e;

	ag_utf8_visible(e->identity[0] ? e->identity : "-", e->identity[0] ?
	    strlen(e->identity) : 1, sizeof(e->identity), id, sizeof(id));
	ag_utf8_visible(e->user, strlen(e->user), sizeof(e->user), user, sizeof(user));
	ag_utf8_visible(e->profile[0] ? e->profile : "-", e->profile[0] ? strlen(e->profile) :
	    1, sizeof(e->profile), prof, sizeof(prof));
	ag_utf8_visible(e->client[0] ? e->client : "-", e->client[0] ? strlen(e->client) : 1,
	    sizeof(e->client), client, sizeof(client));
	ag_utf8_visible(e->command[0] ? e->command : "(idle)", e->command[0] ?
	    strlen(e->command) : 6, sizeof(e->command), cmd, sizeof(cmd));
	printf("agentgate: session %.8s: %s@%s, profile %s, from %s, since %s, now: %s\n",
	    e->session, id, user, prof, client, e->since, cmd);
	printf("agentgate: %s, read-only: q or Ctrl-C leaves%s; %s\n",
	    j->moderate ? "moderating" : "observing",
	    j->moderate ? ", Ctrl-T k ends the session" : "",
	    j->cast[0] ? "the session's output follows, as agentgate replay shows it" :
	    "the session has no recording (no terminal, or gateway.recordings off): its "
	    "commands follow");
	fflush(stdout);
}

/* A command-only session: each new command the registry shows, once. */
static void
show_command(struct join *j)
{
	char cmd[4 * (AG_LIVE_MAX_CMD + 1)];

	if (strcmp(j->e.command, j->last_cmd) == 0)
		return;
	snprintf(j->last_cmd, sizeof(j->last_cmd), "%s", j->e.command);
	if (j->e.command[0] == '\0')
		return;
	ag_utf8_visible(j->e.command, strlen(j->e.command), sizeof(j->e.command), cmd,
	    sizeof(cmd));
	printf("[command] %s\n", cmd);
	fflush(stdout);
}

/* What the recording holds now, complete lines to the player; a line
 * still being written waits in *part.  0, or 1 when it cannot be shown. */
static int
drain(struct ag_castplay *p, int fd, struct ag_strbuf *part)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		char *nl;

		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (ag_strbuf_append(part, buf, (size_t)n) < 0) {
			fprintf(stderr, "agentgate: join: a recording line over %d MiB\n",
			    AG_CASTPLAY_LINE_MAX / (1024 * 1024));
			return 1;
		}
		while (part->len > 0 && (nl = memchr(part->data, '\n', part->len)) != NULL) {
			size_t len = (size_t)(nl - part->data) + 1;
			int rc;

			*nl = '\0';
			rc = ag_castplay_line(p, part->data, len);
			memmove(part->data, part->data + len, part->len - len);
			part->len -= len;
			if (rc != 0)
				return rc;
		}
	}
	/* the gateway writes its line's output copy and marker together:
	 * what is held now has no marker coming */
	return ag_castplay_flush(p);
}

/* End the session as `agentgate terminate` does, naming the moderator. */
static int
moderate_match(const struct ag_live_entry *e, void *arg, char *why, size_t whylen)
{
	const struct join *j = arg;

	if (strcmp(e->session, j->e.session) != 0)
		return 0;
	snprintf(why, whylen, "ended by moderator %s", j->who);
	return 1;
}

/* 0 when it ended. */
static int
end_session(struct join *j, const char *config)
{
	int failed = 0;

	printf("agentgate: ending session %.8s\n", j->e.session);
	fflush(stdout);
	if (ag_sessions_end(moderate_match, j, j->e.policy[0] ? j->e.policy : config,
	    "agentgate join --moderate", 10, &failed) == 0 || failed) {
		fprintf(stderr, "agentgate: join: session %.8s could not be ended\n",
		    j->e.session);
		return -1;
	}
	return 0;
}

/* The keys: 1 to leave, 0 to go on, 2 when the session is to end. */
static int
key(struct join *j, unsigned char c, int *cmdkey)
{
	if (*cmdkey) {
		*cmdkey = 0;
		if (c == JOIN_KEY_KILL) {
			if (j->moderate)
				return 2;
			fprintf(stderr, "agentgate: join: observing only (--moderate ends "
			    "sessions)\n");
		}
		return 0;
	}
	if (c == JOIN_KEY_CMD)
		*cmdkey = 1;
	return c == 'q' || c == 0x03 ? 1 : 0;
}

/* The watcher's keys, read from *infd (-1 once it has none left): 1 to
 * leave (*ended when the moderator ended the session), 0 to watch on. */
static int
keys(struct join *j, const char *config, int *infd, int *cmdkey, int *ended)
{
	unsigned char k[64];
	ssize_t i, got = read(*infd, k, sizeof(k));

	if (got <= 0 && !(got < 0 && (errno == EINTR || errno == EAGAIN)))
		*infd = -1;		/* no more keys: watch on */
	for (i = 0; i < got; i++) {
		int what = key(j, k[i], cmdkey);

		if (what == 2)
			*ended = end_session(j, config) == 0;
		if (what != 0)
			return 1;
	}
	return 0;
}

/* What inotify saw: 1 when the session ended (its recording closed by the
 * gateway, its entry removed); a command-only session's new command shown. */
static int
events(struct join *j, int in, int wd_file, int recorded)
{
	char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	int ended = 0;

	while ((n = read(in, ev, sizeof(ev))) > 0) {
		char *q = ev;

		while (q < ev + n) {
			const struct inotify_event *ie = (const struct inotify_event *)(void *)q;

			if (ie->wd == wd_file && (ie->mask & IN_CLOSE_WRITE))
				ended = 1;
			else if (ie->wd != wd_file && ie->len > 0 &&
			    strcmp(ie->name, j->e.session) == 0) {
				if (ie->mask & IN_DELETE)
					ended = 1;
				else if (!recorded && still_live(j))
					show_command(j);
			}
			q += sizeof(*ie) + ie->len;
		}
	}
	return ended;
}

static int
watch(struct join *j, const char *config)
{
	struct ag_castplay p;
	struct ag_strbuf part;
	struct termios saved, raw;
	struct pollfd pfd[2];
	int in, fd = -1, wd_file = -1, tty = 0, cmdkey = 0, rc = 0, done = 0, ended = 0;
	long long last_check = ag_now_ms();

	if ((in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		fprintf(stderr, "agentgate: join: inotify: %s\n", strerror(errno));
		return 1;
	}
	/* the entry is replaced whenever the command changes, removed at the end */
	if (inotify_add_watch(in, AG_LIVE_DIR, IN_MOVED_TO | IN_DELETE) < 0) {
		fprintf(stderr, "agentgate: join: %s: %s\n", AG_LIVE_DIR, strerror(errno));
		close(in);
		return 1;
	}
	if (j->cast[0] != '\0') {
		if ((fd = open(j->cast, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0 ||
		    (wd_file = inotify_add_watch(in, j->cast, IN_MODIFY | IN_CLOSE_WRITE)) < 0) {
			fprintf(stderr, "agentgate: join: %s: %s\n", j->cast, strerror(errno));
			if (fd >= 0)
				close(fd);
			close(in);
			return 1;
		}
	}
	ag_castplay_init(&p, "join", j->cast, 0);
	p.transcript = 1;
	ag_strbuf_init(&part, AG_CASTPLAY_LINE_MAX);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
		/* keys one at a time, never echoed; Ctrl-C still a signal */
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tty = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	pfd[0].fd = in;
	pfd[0].events = POLLIN;
	pfd[1].fd = STDIN_FILENO;
	pfd[1].events = POLLIN;
	if (fd >= 0)
		rc = drain(&p, fd, &part);
	else
		show_command(j);
	while (rc == 0 && !done && !leave_sig) {
		int r = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, JOIN_CHECK_MS);

		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "agentgate: join: poll: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (done = keys(j, config, &pfd[1].fd, &cmdkey, &ended)))
			break;
		if (r > 0 && (pfd[0].revents & POLLIN) && events(j, in, wd_file, fd >= 0))
			ended = 1;
		if (fd >= 0)
			rc = drain(&p, fd, &part);
		/* a gateway killed leaves its entry: checked now and then */
		if (!done && !ended && ag_now_ms() - last_check >= JOIN_CHECK_MS) {
			last_check = ag_now_ms();
			ended = !still_live(j);
		}
		done |= ended;
	}
	if (fd >= 0) {
		if (rc == 0)
			rc = drain(&p, fd, &part);
		close(fd);
		rc = ag_castplay_end(&p, rc);
	} else
		ag_strbuf_free(&p.out);		/* nothing was played */
	ag_strbuf_free(&part);
	close(in);
	if (tty)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (ended)
		printf("agentgate: session %.8s ended\n", j->e.session);
	fflush(stdout);
	return rc;
}

int
ag_cmd_join(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "observe", no_argument, NULL, 'o' },
		{ "moderate", no_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct join j;
	struct ag_err err;
	struct sigaction sa;
	struct passwd *pw;
	struct stat st;
	char why[256];
	int ch, mode = 0, rc;

	memset(&j, 0, sizeof(j));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":omf:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
		case 'm':
			if (mode != 0 && mode != ch) {
				fputs(JOIN_USAGE, stderr);
				return 2;
			}
			mode = ch;
			break;
		case 'f':
			config = optarg;
			break;
		case 'h':
			printf("Usage: agentgate join [--config FILE] --observe | --moderate "
			    "SESSION\n\nWatch a live session (SESSION: its id or a unique prefix, "
			    "as agentgate\nsessions shows it): a header line, then its output as "
			    "it is produced,\nas agentgate replay shows it (no escape sequence "
			    "reaches this terminal),\nuntil it ends or q or Ctrl-C.  Nothing "
			    "typed here reaches the session.\n--moderate: Ctrl-T k also ends the "
			    "session (as agentgate terminate).\nRoot, or (--observe) a user or "
			    "%%group of the session policy's\ngateway.observers.  Joining, leaving "
			    "and ending are in the session's audit log.\n");
			return 0;
		default:
			fputs(JOIN_USAGE, stderr);
			return 2;
		}
	}
	if (mode == 0 || optind != argc - 1) {
		fputs(JOIN_USAGE, stderr);
		return 2;
	}
	j.prefix = argv[optind];
	j.moderate = mode == 'm';
	if (strlen(j.prefix) < 4 || strspn(j.prefix, "0123456789abcdef") != strlen(j.prefix)) {
		fprintf(stderr, "agentgate: join: '%s' is not a session id (at least 4 hex "
		    "digits; see agentgate sessions)\n", j.prefix);
		return 2;
	}
	pw = getpwuid(getuid());
	if (pw != NULL)
		snprintf(j.who, sizeof(j.who), "%s", pw->pw_name);
	else
		snprintf(j.who, sizeof(j.who), "uid %ld", (long)getuid());
	ag_live_witness("agentgate join");
	ag_err_clear(&err);
	if (ag_live_list(find_one, &j, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (j.found != 1) {
		if (j.found == 0)
			fprintf(stderr, "agentgate: join: no live session %s\n", j.prefix);
		else
			fprintf(stderr, "agentgate: join: '%s' names %d sessions; give more of "
			    "the id\n", j.prefix, j.found);
		return 1;
	}
	if (authorize(&j, config) < 0) {
		ag_config_free(j.cfg);
		return 1;
	}
	if (j.cfg->gw.recordings != NULL) {
		snprintf(j.cast, sizeof(j.cast), "%s/%s%s", j.cfg->gw.recordings, j.e.session,
		    AG_REC_SUFFIX);
		if (stat(j.cast, &st) < 0 || !S_ISREG(st.st_mode))
			j.cast[0] = '\0';
	}
	snprintf(why, sizeof(why), "%s joined to %s%s", j.who,
	    j.moderate ? "moderate" : "observe", j.cast[0] ? "" : " (commands only)");
	if (audit(&j, "session_join", "allow", why) < 0) {
		fprintf(stderr, "agentgate: join: the audit log is required and cannot be "
		    "written: not joining\n");
		ag_config_free(j.cfg);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	header(&j);
	rc = watch(&j, config);
	snprintf(why, sizeof(why), "%s left", j.who);
	(void)audit(&j, "session_leave", "allow", why);
	ag_config_free(j.cfg);
	return rc;
}
