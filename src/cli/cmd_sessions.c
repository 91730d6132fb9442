/*
 * cmd_sessions.c - `agentgate sessions` (who is in now, doing what) and
 * `agentgate terminate` (end a session, or every session of an identity),
 * from the registry the gateways keep (record/live.h).  Root's.
 *
 * terminate sends SIGTERM: the gateway ends the running command's process
 * group, writes its session_end record and closes the PAM session, as on a
 * disconnect.  One that has not gone after --wait seconds gets SIGKILL (its
 * commands die with it: they run in its PID namespace, or are swept by
 * its process watcher).  Each termination is audited before the signal.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/utf8.h"
#include "common/config.h"
#include "common/err.h"
#include "common/misc.h"
#include "record/audit.h"
#include "record/live.h"
#include "core/standing.h"

#define TERM_GRACE_S	10	/* SIGTERM, then this long (--wait), then SIGKILL */

int
ag_cli_root_only(const char *what)
{
	if (getuid() == 0 && geteuid() == 0)
		return 0;
	fprintf(stderr, "agentgate: %s: root only\n", what);
	return -1;
}

/*
 * What an agent chose (its command line; what sshd and PAM recorded from
 * the client), as root's terminal may show it: escapes, not obeyed (an OSC
 * 52 clipboard write, a title, line erases).  The registry's fields are
 * bounded, so are these.
 */
struct shown {
	char	identity[4 * 128], user[4 * 64], client[4 * 160];
	char	command[4 * (AG_LIVE_MAX_CMD + 1)];
};

static void
show_entry(const struct ag_live_entry *e, struct shown *s)
{
	ag_utf8_visible(e->identity[0] ? e->identity : "-", e->identity[0] ? strlen(e->identity) :
	    1, sizeof(e->identity), s->identity, sizeof(s->identity));
	ag_utf8_visible(e->user, strlen(e->user), sizeof(e->user), s->user, sizeof(s->user));
	ag_utf8_visible(e->client[0] ? e->client : "-", e->client[0] ? strlen(e->client) : 1,
	    sizeof(e->client), s->client, sizeof(s->client));
	ag_utf8_visible(e->command[0] ? e->command : "(idle)", e->command[0] ?
	    strlen(e->command) : 6, sizeof(e->command), s->command, sizeof(s->command));
}

static int
print_entry(const struct ag_live_entry *e, void *arg)
{
	static struct shown s;
	int *n = arg;

	if ((*n)++ == 0)
		printf("%-8s  %-16s  %-12s  %-22s  %-19s  %-20s  %7s  %s\n", "SESSION", "IDENTITY",
		    "USER", "CLIENT", "KEY", "SINCE", "PID", "COMMAND");
	show_entry(e, &s);
	/* the key's fingerprint, shortened as ssh-keygen -l users recognise it */
	printf("%-8.8s  %-16s  %-12s  %-22s  %-19.19s  %-20s  %7ld  %s\n", e->session, s.identity,
	    s.user, s.client, e->key[0] ? e->key : "-", e->since, (long)e->pid, s.command);
	return 0;
}

int
ag_cmd_sessions(int argc, char **argv)
{
	struct ag_err err;
	int n = 0;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentgate sessions\n\nList the live sessions: session id (the "
		    "first 8 of the audit records'\nsession), identity, account, client, the "
		    "key's fingerprint (its start),\nstart (UTC), gateway pid, and the command "
		    "running now.  Root only.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: agentgate sessions\n");
		return 2;
	}
	if (ag_cli_root_only("sessions") < 0)
		return 1;
	ag_live_witness("agentgate sessions");
	ag_err_clear(&err);
	if (ag_live_list(print_entry, &n, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (n == 0)
		printf("no live sessions\n");
	return 0;
}

/* One run of ending sessions: who decides which, and the policy whose
 * audit records who ended them. */
struct ending {
	int		(*match)(const struct ag_live_entry *, void *, char *, size_t);
	void		*arg;
	const char	*config;
	const char	*by;		/* "agentgate terminate", "agentgate edit", ... */
	long		 wait_s;
	struct ag_config *cfg;		/* of cfg_path, for the record */
	char		 cfg_path[PATH_MAX];
	int		 cfg_tried;
	int		 found, ended, failed;
};

static int
gone(pid_t pid, unsigned long long start)
{
	unsigned long long s;
	pid_t pp;

	return ag_proc_stat(pid, &pp, &s, NULL) < 0 || s != start;
}

static void
audit_termination(struct ending *t, const struct ag_live_entry *e, const char *reason)
{
	struct ag_audit_info info;
	struct ag_audit *a;
	struct ag_err err;
	struct passwd *pw = getpwuid(getuid());
	char why[AG_LOCK_REASON_MAX + 1024];

	/* the record goes to the session's own policy's audit (another gateway
	 * of the host may run under another policy), else to --config's */
	const char *want = e->policy[0] != '\0' ? e->policy : t->config;

	if (!t->cfg_tried || strcmp(t->cfg_path, want) != 0) {
		t->cfg_tried = 1;
		snprintf(t->cfg_path, sizeof(t->cfg_path), "%s", want);
		ag_config_free(t->cfg);
		ag_err_clear(&err);
		/* without a policy the sessions still end (each gateway records
		 * its own end), only who ended them is not recorded */
		if ((t->cfg = ag_config_load(want, AG_CONFIG_GATEWAY_ONLY, &err)) == NULL) {
			ag_err_print(stderr, &err);
			fprintf(stderr, "agentgate: going on without an audit record of who "
			    "ended the session\n");
		}
	}
	if (t->cfg == NULL)
		return;
	ag_live_audit_info(e, &info);
	info.token = NULL;
	info.mode = "admin";
	snprintf(why, sizeof(why), "ended by %s with %s%s%s", pw != NULL ? pw->pw_name : "root",
	    t->by, *reason ? ": " : "", reason);
	ag_err_clear(&err);
	if ((a = ag_audit_open(&t->cfg->gw.audit, &info, &err)) == NULL ||
	    ag_audit_event(a, "session_terminate", e->session, "deny", why, &err) < 0)
		fprintf(stderr, "agentgate: not audited: %s\n", err.msg);
	ag_audit_close(a);
}

static int
end_one(const struct ag_live_entry *e, void *arg)
{
	struct ending *t = arg;
	static struct shown s;
	char reason[AG_LOCK_REASON_MAX + 256] = "";
	struct ag_err err;
	long long deadline;

	if (!t->match(e, t->arg, reason, sizeof(reason)))
		return 0;
	show_entry(e, &s);
	t->found++;
	audit_termination(t, e, reason);
	/* what its client is told; without the note it still ends */
	ag_err_clear(&err);
	if (ag_live_note_end(e->session, *reason ? reason : "ended by the administrator",
	    &err) < 0)
		fprintf(stderr, "agentgate: %s\n", err.msg);
	/* a gateway its own command stopped (kill -STOP $PPID, sandbox off)
	 * must wake to end its commands, or they outlive it */
	if ((kill(e->pid, SIGTERM) < 0 || kill(e->pid, SIGCONT) < 0) && errno != ESRCH) {
		fprintf(stderr, "agentgate: %.8s (pid %ld): %s\n", e->session, (long)e->pid,
		    strerror(errno));
		ag_live_note_clear(e->session);
		t->failed++;
		return 0;
	}
	deadline = ag_now_ms() + t->wait_s * 1000;
	while (!gone(e->pid, e->start) && ag_now_ms() < deadline) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (!gone(e->pid, e->start)) {
		(void)kill(e->pid, SIGKILL);
		printf("session %.8s (%s@%s, pid %ld) killed: it did not end on SIGTERM\n",
		    e->session, s.identity, s.user, (long)e->pid);
	} else
		printf("session %.8s (%s@%s, pid %ld) ended%s%s\n", e->session, s.identity,
		    s.user, (long)e->pid, *reason ? ": " : "", reason);
	ag_live_note_clear(e->session);
	t->ended++;
	return 0;
}

/* The sessions a new policy revokes (core/standing.h), judged against
 * their identities as the old policy had them. */
struct revoked {
	const struct ag_config	*was, *now;
	const char		*real;		/* the policy file, resolved */
};

static int
revoked_match(const struct ag_live_entry *e, void *arg, char *why, size_t whylen)
{
	const struct revoked *r = arg;

	/* another policy's session (another gateway on the host with an
	 * identity of the same name) is that policy's to judge */
	if (e->policy[0] != '\0' && strcmp(e->policy, r->real) != 0)
		return 0;
	return ag_standing_judge(ag_config_identity(r->was, e->identity), r->now, e->identity,
	    e->user, e->key, e->token, e->profile, why, whylen);
}

int
ag_sessions_end_revoked(const struct ag_config *was, const struct ag_config *now,
    const char *real, const char *by)
{
	struct revoked rv = { was, now, real };

	return ag_sessions_end(revoked_match, &rv, real, by, 10, NULL);
}

int
ag_sessions_end(int (*match)(const struct ag_live_entry *, void *, char *, size_t),
    void *arg, const char *config, const char *by, long wait_s, int *failed)
{
	struct ending t;
	struct ag_err err;

	memset(&t, 0, sizeof(t));
	t.match = match;
	t.arg = arg;
	t.config = config;
	t.by = by;
	t.wait_s = wait_s;
	ag_live_witness(by);
	ag_err_clear(&err);
	if (ag_live_list(end_one, &t, &err) < 0)
		ag_err_print(stderr, &err);
	ag_config_free(t.cfg);
	if (failed != NULL)
		*failed = t.failed;
	return t.found;
}

struct target {
	const char	*session;	/* prefix of the id; NULL = by identity or account */
	const char	*identity;
	const char	*user;
	const char	*reason;
	int		 found;
};

static int
matches(const struct target *t, const struct ag_live_entry *e)
{
	if (t->session != NULL)
		return strncmp(e->session, t->session, strlen(t->session)) == 0;
	/* both given: that identity's sessions on that account */
	return (t->user == NULL || strcmp(e->user, t->user) == 0) &&
	    (t->identity == NULL || strcmp(e->identity, t->identity) == 0);
}

static int
count_one(const struct ag_live_entry *e, void *arg)
{
	struct target *t = arg;

	t->found += matches(t, e);
	return 0;
}

static int
terminate_match(const struct ag_live_entry *e, void *arg, char *why, size_t whylen)
{
	struct target *t = arg;

	if (!matches(t, e))
		return 0;
	snprintf(why, whylen, "%s", t->reason != NULL ? t->reason : "");
	return 1;
}

#define TERMINATE_USAGE "usage: agentgate terminate [--config FILE] [--wait SECONDS] " \
	"[--reason TEXT] SESSION | [--identity NAME] [--user ACCOUNT]\n"

int
ag_cmd_terminate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "identity", required_argument, NULL, 'i' },
		{ "user", required_argument, NULL, 'u' },
		{ "config", required_argument, NULL, 'f' },
		{ "wait", required_argument, NULL, 'w' },
		{ "reason", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct target t;
	char *end;
	struct ag_err err;
	long wait_s = TERM_GRACE_S;
	int ch, failed, found;

	memset(&t, 0, sizeof(t));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":i:u:f:w:r:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'i':
			t.identity = optarg;
			break;
		case 'u':
			t.user = optarg;
			break;
		case 'f':
			config = optarg;
			break;
		case 'w':
			wait_s = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || wait_s < 0 || wait_s > 3600) {
				fprintf(stderr, "agentgate: terminate: --wait takes 0..3600 "
				    "seconds\n");
				return 2;
			}
			break;
		case 'r':
			t.reason = optarg;
			break;
		case 'h':
			printf("Usage: agentgate terminate [--config FILE] [--wait SECONDS] "
			    "[--reason TEXT]\n                           SESSION | [--identity NAME] "
			    "[--user ACCOUNT]\n"
			    "\nEnd a live session (SESSION: its id or a unique prefix, as "
			    "agentgate\nsessions shows it), or every session of an identity, of "
			    "an account, or\nof that identity on that account.\nThe gateway ends the running command and closes the "
			    "session; its client "
			    "is told\nthe administrator ended it (and --reason), and the audit log "
			    "records\nwho ended it.  A gateway still there after --wait seconds\n"
			    "(default %d) is killed.  Root only.\n", TERM_GRACE_S);
			return 0;
		default:
			fputs(TERMINATE_USAGE, stderr);
			return 2;
		}
	}
	if (optind != argc - (t.identity == NULL && t.user == NULL ? 1 : 0)) {
		fputs(TERMINATE_USAGE, stderr);
		return 2;
	}
	if (t.identity == NULL && t.user == NULL) {
		t.session = argv[optind];
		if (strlen(t.session) < 4 || strspn(t.session, "0123456789abcdef") !=
		    strlen(t.session)) {
			fprintf(stderr, "agentgate: terminate: '%s' is not a session id (at least "
			    "4 hex digits; see agentgate sessions)\n", t.session);
			return 2;
		}
	}
	if (ag_cli_root_only("terminate") < 0)
		return 1;
	ag_live_witness("agentgate terminate");
	ag_err_clear(&err);
	/* a prefix names one session or none */
	if (t.session != NULL && ag_live_list(count_one, &t, &err) >= 0 && t.found > 1) {
		fprintf(stderr, "agentgate: terminate: '%s' names %d sessions; give more of "
		    "the id\n", t.session, t.found);
		return 2;
	}
	found = ag_sessions_end(terminate_match, &t, config, "agentgate terminate", wait_s,
	    &failed);
	if (found == 0) {
		fprintf(stderr, "agentgate: terminate: no live session %s%s\n",
		    t.session ? "" : t.user ? "of account " : "of identity ",
		    t.session ? t.session : t.user ? t.user : t.identity);
		return 1;
	}
	return failed == 0 ? 0 : 1;
}
