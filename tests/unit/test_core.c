/*
 * test_core.c - the spine in-process (core/command.c): one line through
 * target -> parse -> decide -> admit -> run -> record, as the ForceCommand
 * front end hands it over, with a profile whose sandbox is off and the
 * audit kept in memory beside the policy's own sinks.  No root, no sshd:
 * each case looks at what the client saw (status, stdout, stderr) and at
 * the records (event, decision, rule).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/config.h"
#include "core/core.h"
#include "record/audit.h"
#include "testutil.h"

/* @DIR@ is the test's directory, @LOG@ where the audit file goes. */
static const char policy_text[] =
    "version: 1\n"
    "gateway:\n"
    "  sandbox: \"off\"\n"
    "@AUDIT@"
    "profiles:\n"
    "  test:\n"
    "    allow: [echo, printf]\n"
    "    deny: [rm]\n"
    "    file_transfer: { sftp: read }\n"
    "    paths: { read: [\"/\"], write: [\"@DIR@\"] }\n";

#define SFTP_SERVER	"/usr/lib/openssh/sftp-server"

struct fx {
	char		 dir[256];
	char		 policy[320];
	struct ag_config *cfg;
	struct ag_audit	*audit;
	struct ag_core	 core;
	int		 began;
};

/* What the client saw of one line. */
struct seen {
	int	status;
	int	end;
	char	out[4096];
	char	err[4096];
};

/* s with every @KEY@ of keys[] (pairs, NULL-ended) replaced. */
static char *
fill(const char *s, const char *const *keys)
{
	char *out = strdup(s), *at, *n;
	size_t i;

	assert_non_null(out);
	for (i = 0; keys[i] != NULL; i += 2)
		while ((at = strstr(out, keys[i])) != NULL) {
			assert_true(asprintf(&n, "%.*s%s%s", (int)(at - out), out, keys[i + 1],
			    at + strlen(keys[i])) > 0);
			free(out);
			out = n;
		}
	return out;
}

/*
 * The session of profile `test` under a policy whose gateway.audit is
 * audit_yaml (YAML lines, "" for none), as forcecommand.c starts one.
 */
static void
begin(struct fx *f, const char *audit_yaml)
{
	const char *keys[] = { "@AUDIT@", audit_yaml, "@DIR@", f->dir, NULL };
	struct ag_audit_info info = { .mode = "exec" };
	struct ag_core_params cp;
	struct ag_err err;
	struct passwd *pw;
	char *text = fill(policy_text, keys);

	assert_non_null(pw = getpwuid(getuid()));
	tu_write_in(f->policy, sizeof(f->policy), f->dir, "agentgate.yaml", text, 0644);
	free(text);
	ag_err_clear(&err);
	if ((f->cfg = ag_config_load(f->policy, AG_CONFIG_NO_PERMCHECK, &err)) == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	memset(&cp, 0, sizeof(cp));
	cp.cfg = f->cfg;
	assert_non_null(cp.profile = ag_config_profile(f->cfg, "test"));
	cp.pw = pw;
	info.user = pw->pw_name;
	info.profile = cp.profile->name;
	assert_non_null(f->audit = ag_audit_open_memory(&f->cfg->gw.audit, &info, &err));
	cp.audit = f->audit;
	if (ag_core_begin(&f->core, &cp, &err) < 0)
		fail_msg("ag_core_begin: %s", err.msg);
	f->began = 1;
}

static void
slurp(int fd, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
}

/* A fresh file in the test's directory for one of the client's streams. */
static int
stream_file(const struct fx *f, const char *name)
{
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_true((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0);
	return fd;
}

/*
 * line through ag_core_command with fds 0-2 as the client's: stdin at its
 * end, stdout and stderr into files that s gets afterwards.
 */
static void
run(struct fx *f, const char *line, int flags, struct seen *s)
{
	int saved[3], in, out, err, i;

	memset(s, 0, sizeof(*s));
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out = stream_file(f, "stdout");
	err = stream_file(f, "stderr");
	assert_true(in >= 0);
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 3; i++)
		assert_true((saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 10)) >= 0);
	assert_int_equal(dup2(in, 0), 0);
	assert_int_equal(dup2(out, 1), 1);
	assert_int_equal(dup2(err, 2), 2);
	s->status = ag_core_command(&f->core, line, strlen(line), flags, &s->end);
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 3; i++) {
		assert_int_equal(dup2(saved[i], i), i);
		close(saved[i]);
	}
	close(in);
	slurp(out, s->out, sizeof(s->out));
	slurp(err, s->err, sizeof(s->err));
}

/* The audit's records so far: the first max in r, the count returned. */
static size_t
records(struct fx *f, json_object **r, size_t max)
{
	return tu_json_lines(ag_audit_memory(f->audit), r, max);
}

/* The one record of event ev among r[0..n), asserted to be one. */
static json_object *
only(json_object **r, size_t n, const char *ev)
{
	json_object *found = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(tu_json_str(r[i], "event"), ev) == 0) {
			if (found != NULL)
				fail_msg("two '%s' records", ev);
			found = r[i];
		}
	if (found == NULL)
		fail_msg("no '%s' record", ev);
	return found;
}

static void
assert_field(json_object *o, const char *k, const char *want)
{
	const char *v = tu_json_str(o, k);

	if (want == NULL ? v != NULL : v == NULL || strcmp(v, want) != 0)
		fail_msg("\"%s\": %s, want %s", k, v != NULL ? v : "(absent)",
		    want != NULL ? want : "(absent)");
}

static void
assert_has(const char *hay, const char *needle)
{
	if (strstr(hay, needle) == NULL)
		fail_msg("'%s' not in '%s'", needle, hay);
}

/*
 * The first line of a session refused: $? 126, nothing on stdout, the
 * client told why (said is in what it was told), and one record, the
 * refusal's: event command, decision deny, rule, no result (nothing ran,
 * so no command_start either).
 */
static void
assert_refused(struct fx *f, const char *line, int flags, const char *said, const char *rule)
{
	json_object *r[2];
	struct seen s;

	run(f, line, flags, &s);
	assert_int_equal(s.status, AG_STATUS_DENIED);
	assert_false(s.end);
	assert_string_equal(s.out, "");
	assert_true(strncmp(s.err, "agentgate: ", 11) == 0);
	assert_has(s.err, said);
	assert_int_equal(records(f, r, 2), 1);
	assert_field(r[0], "event", "command");
	assert_field(r[0], "command", line);
	assert_field(r[0], "decision", "deny");
	assert_field(r[0], "rule", rule);
	assert_field(r[0], "exit", NULL);
	tu_json_put_all(r, 1);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL || tu_tmpdir(f->dir, sizeof(f->dir), "core") < 0)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	if (f->began)
		ag_core_end(&f->core);
	ag_audit_close(f->audit);
	ag_config_free(f->cfg);
	(void)tu_rm_rf(f->dir);
	free(f);
	return 0;
}

/* A deny rule: nothing runs, the client is told why, one record says so. */
static void
denied_line_is_refused_and_recorded(void **state)
{
	begin(*state, "");
	assert_refused(*state, "rm -rf /nonexistent-agentgate-test", 0,
	    "'rm' is denied by profiles.test.deny[0]", "profiles.test.deny[0]");
}

/* An allow rule: the command runs, its output reaches the client, and the
 * decision is recorded before it runs and again with the result. */
static void
allowed_line_runs_and_is_recorded(void **state)
{
	struct fx *f = *state;
	json_object *r[8], *start, *done;
	struct seen s;
	size_t n;

	begin(f, "");
	run(f, "echo hello; printf 'to %s\\n' stderr >&2", 0, &s);
	assert_int_equal(s.status, 0);
	assert_string_equal(s.out, "hello\n");
	assert_string_equal(s.err, "to stderr\n");
	n = records(f, r, 8);
	start = only(r, n, "command_start");
	done = only(r, n, "command");
	assert_field(start, "decision", "allow");
	assert_field(done, "decision", "allow");
	assert_field(done, "rule", "profiles.test.allow[0],profiles.test.allow[1]");
	assert_field(done, "exit", "0");
	assert_string_equal(tu_json_str(start, "seq"), tu_json_str(done, "seq"));
	tu_json_put_all(r, n < 8 ? n : 8);

	/* $? is the session's: the next line sees it */
	run(f, "echo $?; (exit 3)", 0, &s);
	assert_string_equal(s.out, "0\n");
	assert_int_equal(s.status, 3);
}

/*
 * audit.required and a log that cannot be written (its directory is
 * writable by others): the allowed command is not run, the client is told
 * why, and the refusal is what the records that could be kept say.
 */
static void
unwritable_required_audit_refuses(void **state)
{
	struct fx *f = *state;
	char logdir[300], yaml[600], flag[400], line[500];
	struct seen s;

	snprintf(logdir, sizeof(logdir), "%s/log", f->dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	assert_int_equal(chmod(logdir, 0777), 0);
	snprintf(yaml, sizeof(yaml), "  audit:\n    file: %s/audit.jsonl\n    required: true\n",
	    logdir);
	snprintf(flag, sizeof(flag), "%s/ran", f->dir);
	snprintf(line, sizeof(line), "echo > %s", flag);
	begin(f, yaml);
	assert_refused(f, line, 0, "writable by others; the audit log is required, so the "
	    "command was not run", "audit:required");
	assert_int_equal(access(flag, F_OK), -1);

	/* leaving is never refused */
	run(f, "exit 4", 0, &s);
	assert_int_equal(s.status, 4);
	assert_true(s.end);
}

/*
 * sshd's exec request `scp -t DIR` or sftp-server is a file transfer,
 * judged by file_transfer (scp off, sftp read here) rather than as a line
 * of bash.
 */
static void
transfer_request_is_a_verdict(void **state)
{
	struct fx *f = *state;
	json_object *r[3] = { NULL };
	struct seen s;

	begin(f, "");
	assert_refused(f, "scp -t /tmp", AG_CORE_REQUEST, "scp file transfer is off for "
	    "profile test (file_transfer.scp)", "file_transfer");

	/* sftp may read: the server runs on the client's stdio, which is at
	 * its end here, so it ends at once */
	if (access(SFTP_SERVER, X_OK) < 0)
		return;
	run(f, SFTP_SERVER, AG_CORE_REQUEST, &s);
	assert_int_equal(s.status, 0);
	assert_string_equal(s.out, "");
	assert_int_equal(records(f, r, 3), 3);
	assert_field(r[1], "event", "command_start");
	assert_field(r[2], "event", "command");
	assert_field(r[2], "decision", "allow");
	assert_field(r[2], "rule", "file_transfer");
	assert_field(r[2], "exit", "0");
	tu_json_put_all(r, 3);
}

/* A leading @NAME the policy has no upstream for: refused before parsing. */
static void
unknown_target_is_refused(void **state)
{
	begin(*state, "");
	assert_refused(*state, "@nosuch echo hi", 0, "'@nosuch': no such target; profile "
	    "'test' may reach: ", "targets");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(denied_line_is_refused_and_recorded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(allowed_line_runs_and_is_recorded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(unwritable_required_audit_refuses, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(transfer_request_is_a_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_target_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
