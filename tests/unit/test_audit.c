/* test_audit.c - JSON Lines records, file sink safety, concurrent appenders. */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/audit.h"
#include "record/chain.h"
#include "testutil.h"

static char dir[] = "/tmp/ag-audit-test.XXXXXX";
static char path[512];

static const struct ag_audit_info info = {
	.user = "agent", .identity = NULL, .profile = "readonly",
	.client = "127.0.0.1:5555", .mode = "exec",
};

static struct ag_audit *
open_sink(int required)
{
	struct ag_audit_conf conf;
	struct ag_err err;

	memset(&conf, 0, sizeof(conf));
	conf.file = path;
	conf.required = required;
	return ag_audit_open(&conf, &info, &err);
}

/* ag_chain_verify on the file name, one of a series (last). */
static int
verify_file(const char *name, char last[AG_CHAIN_HEX], struct ag_chain_result *res)
{
	FILE *fp = fopen(name, "r");
	int rc;

	assert_non_null(fp);
	rc = ag_chain_verify(fp, last, res);
	fclose(fp);
	return rc;
}

/* The log never was: its chain starts anew. */
static void
unlink_state(void)
{
	char st[300];

	if (ag_chain_state_path(path, st, sizeof(st)) == 0)
		unlink(st);
}

/*
 * Every sink gets the line the file got, chain fields included, so a
 * collector or syslog can verify the same chain; without a file there are
 * no chain fields to give.
 */
static void
every_sink_gets_the_files_line(void **state)
{
	struct ag_audit_conf conf;
	struct ag_audit_cmd c = { .command = "ls", .command_len = 2, .cwd = "/",
	    .decision = "allow", .rule = "profiles.readonly.allow[0]", .ran = 1 };
	struct ag_audit *a;
	struct ag_err err;
	char file[8192];
	ssize_t n;
	int fd;

	(void)state;
	unlink(path);
	unlink_state();
	memset(&conf, 0, sizeof(conf));
	conf.file = path;
	conf.required = 1;
	a = ag_audit_open_memory(&conf, &info, &err);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_int_equal(ag_audit_command_start(a, &c, &err), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, file, sizeof(file) - 1);
	close(fd);
	assert_true(n > 0);
	file[n] = '\0';
	assert_string_equal(ag_audit_memory(a), file);
	assert_non_null(strstr(file, "\"seed\":"));
	assert_non_null(strstr(file, "\"prev\":"));
	ag_audit_close(a);

	a = ag_audit_open_memory(NULL, &info, &err);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_non_null(strstr(ag_audit_memory(a), "\"event\":\"session_start\""));
	assert_null(strstr(ag_audit_memory(a), "\"prev\":"));
	ag_audit_close(a);
	unlink(path);
}

static void
records_have_the_design_fields(void **state)
{
	struct ag_audit *a;
	struct ag_audit_cmd c;
	struct ag_err err;
	json_object *r[8];
	struct stat st;
	size_t n, i;

	(void)state;
	unlink(path);
	a = open_sink(1);
	assert_non_null(a);
	assert_int_equal(ag_audit_ready(a, &err), 0);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	memset(&c, 0, sizeof(c));
	c.command = "echo \"hi\"\n\x01";
	c.command_len = strlen(c.command);
	c.cwd = "/home/agent";
	c.decision = "allow";
	c.reason = "allowed";
	c.rule = "profiles.readonly.allow[0]";
	c.rule_label = "profiles.readonly.allow[0] (echo)";
	c.ran = 1;
	c.exit_status = 3;
	c.duration_ms = 12;
	c.bytes_out = 99;
	c.cwd_after = "/tmp";
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	c.ran = 0;
	c.decision = "deny";
	c.command = "rm -rf /";
	c.command_len = 8;
	c.rule_label = NULL;
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(ag_audit_session_end(a, 3, 2, &err), 0);
	ag_audit_close(a);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	n = tu_json_file(path, r, 8);
	assert_int_equal(n, 4);
	assert_string_equal(tu_json_str(r[0], "event"), "session_start");
	assert_string_equal(tu_json_str(r[1], "event"), "command");
	assert_string_equal(tu_json_str(r[1], "command"), "echo \"hi\"\n\x01");
	assert_string_equal(tu_json_str(r[1], "exit"), "3");
	assert_string_equal(tu_json_str(r[1], "cwd_after"), "/tmp");
	assert_string_equal(tu_json_str(r[1], "truncated"), "false");
	assert_string_equal(tu_json_str(r[1], "rule"), "profiles.readonly.allow[0]");
	assert_string_equal(tu_json_str(r[1], "rule_label"), "profiles.readonly.allow[0] (echo)");
	assert_null(tu_json_str(r[2], "rule_label"));	/* left out when there is none */
	assert_null(tu_json_str(r[2], "exit"));		/* did not run: no result fields */
	assert_string_equal(tu_json_str(r[2], "decision"), "deny");
	assert_string_equal(tu_json_str(r[3], "event"), "session_end");
	for (i = 0; i < n; i++) {
		assert_string_equal(tu_json_str(r[i], "user"), "agent");
		assert_string_equal(tu_json_str(r[i], "client"), "127.0.0.1:5555");
		assert_string_equal(tu_json_str(r[i], "profile"), "readonly");
		assert_string_equal(tu_json_str(r[i], "mode"), "exec");
		assert_int_equal(strlen(tu_json_str(r[i], "session")), 32);
		assert_string_equal(tu_json_str(r[i], "session"), tu_json_str(r[0], "session"));
		assert_int_equal(strlen(tu_json_str(r[i], "ts")), 24);
		assert_null(tu_json_str(r[i], "identity"));
	}
	for (i = 0; i < n; i++)
		json_object_put(r[i]);
}

static void
invalid_utf8_is_replaced(void **state)
{
	struct ag_audit *a;
	struct ag_audit_cmd c;
	struct ag_err err;
	json_object *r[2];

	(void)state;
	unlink(path);
	a = open_sink(1);
	memset(&c, 0, sizeof(c));
	c.command = "echo \xff\xc3(\xe2\x82\xac";
	c.command_len = strlen(c.command);
	c.decision = "deny";
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	ag_audit_close(a);
	assert_int_equal(tu_json_file(path, r, 2), 1);
	assert_string_equal(tu_json_str(r[0], "command"), "echo \xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac");
	json_object_put(r[0]);
}

static void
unsafe_directory_or_file_is_refused(void **state)
{
	struct ag_audit *a;
	struct ag_err err;

	(void)state;
	unlink(path);
	assert_int_equal(chmod(dir, 0770), 0);
	a = open_sink(1);
	assert_int_equal(ag_audit_ready(a, &err), -1);
	assert_non_null(strstr(err.msg, "writable by group"));
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	assert_int_equal(ag_audit_required(a), 1);
	ag_audit_close(a);
	assert_int_equal(chmod(dir, 0700), 0);

	/* a symlink in place of the log is not followed */
	assert_int_equal(symlink("/tmp/ag-audit-elsewhere", path), 0);
	a = open_sink(1);
	assert_int_equal(ag_audit_ready(a, &err), -1);
	ag_audit_close(a);
	assert_int_equal(access("/tmp/ag-audit-elsewhere", F_OK), -1);
	unlink(path);

	/* a log someone else can write is not ours */
	a = open_sink(1);
	ag_audit_close(a);
	assert_int_equal(chmod(path, 0666), 0);
	a = open_sink(1);
	assert_int_equal(ag_audit_ready(a, &err), -1);
	ag_audit_close(a);
	unlink(path);
}

static void
admin_group_gets_read_access(void **state)
{
	struct ag_audit_conf conf;
	struct ag_audit *a;
	struct ag_err err;
	struct stat st;
	mode_t old;

	(void)state;
	if (getuid() != 0)
		skip();		/* only root may give the file to group root */
	old = umask(077);	/* the umask must not decide the mode */
	unlink(path);
	memset(&conf, 0, sizeof(conf));
	conf.file = path;
	conf.required = 1;
	conf.group = (char[]){ "root" };
	a = ag_audit_open(&conf, &info, &err);
	umask(old);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	ag_audit_close(a);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_gid, 0);
	unlink(path);
}

static size_t
lines_of(const char *file, const char *needle)
{
	FILE *f = fopen(file, "r");
	char line[16384];
	size_t n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += needle == NULL || strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/*
 * logrotate renames the log (and creates a new one, or not): the next
 * record goes to the file the path names now, and its chain goes on from
 * the rotated file's last record, also for a session that never saw the
 * rotated file; the two verify as one series, and the new one alone as a
 * chain that starts mid-way.  A symlink planted there instead is refused,
 * its target untouched.
 */
static void
rotated_or_removed_log_is_opened_again(void **state)
{
	struct ag_audit_cmd c = { .command = "ls", .command_len = 2, .cwd = "/",
	    .decision = "allow", .rule = "profiles.readonly.allow[0]", .ran = 1 };
	char old[sizeof(path) + 4], decoy[sizeof(path) + 8];
	struct ag_audit *a;
	struct ag_err err;
	int fd;

	(void)state;
	unlink(path);
	unlink_state();
	snprintf(old, sizeof(old), "%s.1", path);
	snprintf(decoy, sizeof(decoy), "%s.decoy", path);
	a = open_sink(1);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_int_equal(rename(path, old), 0);
	assert_int_equal(ag_audit_ready(a, &err), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(lines_of(old, NULL), 1);
	assert_int_equal(lines_of(path, NULL), 1);
	assert_int_equal(lines_of(path, "\"seed\":"), 0);
	assert_int_equal(lines_of(path, "\"event\":\"command\""), 1);
	{
		char last[AG_CHAIN_HEX] = "";
		struct ag_chain_result res;

		assert_int_equal(verify_file(old, last, &res), 0);
		assert_int_equal(res.mid_chain, 0);
		assert_int_equal(verify_file(path, last, &res), 0);
		last[0] = '\0';
		assert_int_equal(verify_file(path, last, &res), 0);
		assert_int_equal(res.mid_chain, 1);
	}

	/* rotated while no session runs: a new one goes on from it too */
	{
		struct ag_audit *b;
		char older[sizeof(path) + 4], last[AG_CHAIN_HEX] = "";
		struct ag_chain_result res;

		ag_audit_close(a);
		snprintf(older, sizeof(older), "%s.2", path);
		assert_int_equal(rename(old, older), 0);
		assert_int_equal(rename(path, old), 0);
		b = open_sink(1);
		assert_non_null(b);
		assert_int_equal(ag_audit_session_start(b, &err), 0);
		ag_audit_close(b);
		assert_int_equal(verify_file(older, last, &res), 0);
		assert_int_equal(verify_file(old, last, &res), 0);
		assert_int_equal(verify_file(path, last, &res), 0);
		assert_int_equal(res.records, 1);
		/* out of order, the break is at the first record of the file */
		last[0] = '\0';
		assert_int_equal(verify_file(older, last, &res), 0);
		assert_int_equal(verify_file(path, last, &res), 1);
		assert_int_equal(res.line, 1);
		unlink(older);
		a = open_sink(1);
		assert_non_null(a);
	}

	/* removed outright: created again */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(lines_of(path, NULL), 1);

	/* a symlink in its place is not followed, and the record fails */
	assert_int_equal(unlink(path), 0);
	fd = open(decoy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(decoy, path), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), -1);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(lines_of(decoy, NULL), 0);
	ag_audit_close(a);
	unlink(path);
	unlink(old);
	unlink(decoy);
}

/* ag_chain_verify, then ag_chain_verify_end, on the live log. */
static int
verify_live(FILE *fp, struct ag_chain_result *res)
{
	char last[AG_CHAIN_HEX] = "";
	int rc = ag_chain_verify(fp, last, res);

	if (rc == 0 || (rc == 1 && res->torn))
		rc = ag_chain_verify_end(fp, path, last, res);
	return rc;
}

/*
 * The state file keeps the hash of the last record written: records cut
 * from the end of the live log are seen against it.  Records appended,
 * or a line half written, while verify reads are read again under the
 * state's lock and are no failure; nor is a log rotated meanwhile, or one
 * without a state file, whose end verify says it did not check.
 */
static void
end_of_live_log_against_state(void **state)
{
	struct ag_audit_cmd c = { .command = "ls", .command_len = 2, .cwd = "/",
	    .decision = "allow", .rule = "profiles.readonly.allow[0]", .ran = 1 };
	struct ag_chain_result res;
	struct ag_audit *a;
	struct ag_err err;
	char st[300], old[sizeof(path) + 4], hash[AG_CHAIN_HEX], half[64];
	const char *rest;
	struct stat sb;
	FILE *fp;
	int fd;

	(void)state;
	unlink(path);
	unlink_state();
	assert_int_equal(ag_chain_state_path(path, st, sizeof(st)), 0);
	snprintf(old, sizeof(old), "%s.1", path);
	a = open_sink(1);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);

	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(verify_live(fp, &res), 0);
	assert_int_equal(res.end_checked, 1);
	assert_int_equal(res.records, 3);
	fclose(fp);

	/* a record appended after the file was read to its end */
	fp = fopen(path, "r");
	assert_non_null(fp);
	{
		char last[AG_CHAIN_HEX] = "";

		assert_int_equal(ag_chain_verify(fp, last, &res), 0);
		assert_int_equal(ag_audit_command(a, &c, &err), 0);
		assert_int_equal(ag_chain_verify_end(fp, path, last, &res), 0);
		assert_int_equal(res.end_checked, 1);
		assert_int_equal(res.records, 4);
	}
	fclose(fp);

	/* a line read while it was being written: whole under the lock */
	rest = "{\"event\":\"outside\",\"prev\":\"";
	fd = open(path, O_RDWR | O_APPEND);
	assert_true(fd >= 0);
	{
		int empty;
		char line[256], last[AG_CHAIN_HEX] = "";
		size_t cut;

		assert_int_equal(ag_chain_tail(fd, hash, &empty), 0);
		snprintf(line, sizeof(line), "%s%s\"}", rest, hash);
		cut = strlen(line) / 2;
		snprintf(half, sizeof(half), "%.*s", (int)cut, line);
		assert_int_equal(write(fd, half, cut), (ssize_t)cut);
		fp = fopen(path, "r");
		assert_non_null(fp);
		assert_int_equal(ag_chain_verify(fp, last, &res), 1);
		assert_int_equal(res.torn, 1);
		assert_int_equal(res.line, 5);
		assert_int_equal(write(fd, line + cut, strlen(line) - cut), (ssize_t)(strlen(line) - cut));
		assert_int_equal(write(fd, "\n", 1), 1);
		/* as the gateway does before it lets go of the lock */
		ag_chain_hash(line, strlen(line), hash);
		{
			int sfd = open(st, O_WRONLY);
			char buf[AG_CHAIN_HEX];

			assert_true(sfd >= 0);
			memcpy(buf, hash, AG_CHAIN_HEX - 1);
			buf[AG_CHAIN_HEX - 1] = '\n';
			assert_int_equal(pwrite(sfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
			close(sfd);
		}
		assert_int_equal(ag_chain_verify_end(fp, path, last, &res), 0);
		assert_int_equal(res.end_checked, 1);
		assert_int_equal(res.records, 5);
		fclose(fp);
	}

	/* the last two records cut off: the state still names the last */
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	{
		char *buf = malloc((size_t)sb.st_size + 1), *nl;
		int k;

		assert_non_null(buf);
		assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), (ssize_t)sb.st_size);
		buf[sb.st_size - 1] = '\0';
		for (k = 0; k < 2; k++) {
			nl = strrchr(buf, '\n');
			assert_non_null(nl);
			*nl = '\0';
		}
		assert_int_equal(ftruncate(fd, nl - buf + 1), 0);
		free(buf);
	}
	close(fd);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(verify_live(fp, &res), 1);
	assert_int_equal(res.line, 0);
	assert_non_null(strstr(res.what, "records are missing at the end of the file"));
	assert_non_null(strstr(res.what, res.state));
	fclose(fp);

	/* rotated while verify read it: the state is the new file's now */
	fp = fopen(path, "r");
	assert_non_null(fp);
	{
		char last[AG_CHAIN_HEX] = "";

		assert_int_equal(ag_chain_verify(fp, last, &res), 0);
		assert_int_equal(rename(path, old), 0);
		assert_int_equal(ag_audit_command(a, &c, &err), 0);
		assert_int_equal(ag_chain_verify_end(fp, path, last, &res), 0);
		assert_int_equal(res.end_checked, 0);
		assert_non_null(strstr(res.note, "rotated"));
	}
	fclose(fp);

	/* no state file: said, not failed */
	unlink_state();
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(verify_live(fp, &res), 0);
	assert_int_equal(res.end_checked, 0);
	assert_non_null(strstr(res.note, "No such file"));
	fclose(fp);
	/* and a torn last line, without one, is the failure it was */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, half, strlen(half)), (ssize_t)strlen(half));
	close(fd);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(verify_live(fp, &res), 1);
	assert_non_null(strstr(res.what, "truncated"));
	fclose(fp);
	ag_audit_close(a);
	unlink(path);
	unlink(old);
}

/* An endless line without a newline: what a gzip bomb decompresses to. */
static ssize_t
endless_read(void *c, char *buf, size_t n)
{
	(void)c;
	memset(buf, 'a', n);
	return (ssize_t)n;
}

/* A line past AG_CHAIN_MAX_LINE is refused without reading it on. */
static void
overlong_line_is_refused_unread(void **state)
{
	static const cookie_io_functions_t io = { .read = endless_read };
	char last[AG_CHAIN_HEX] = "";
	struct ag_chain_result res;
	FILE *fp = fopencookie(NULL, "r", io);

	(void)state;
	assert_non_null(fp);
	errno = 0;
	assert_int_equal(ag_chain_verify(fp, last, &res), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(res.line, 1);
	assert_non_null(strstr(res.what, "longer than"));
	/* it stopped just past the limit */
	assert_true(ftello(fp) <= (off_t)AG_CHAIN_MAX_LINE + 65536);
	fclose(fp);
}

/*
 * A session remembers the hash of the line it wrote last and links its
 * next record to it without reading the file back.  It must not when
 * someone else wrote in between: another session, or a line appended
 * from outside; the chain then links to their line.  Altering a line a
 * session remembers is caught at the record after it, as before.
 */
static void
chain_links_to_what_others_appended(void **state)
{
	struct ag_audit_cmd c = { .command = "ls", .command_len = 2, .cwd = "/",
	    .decision = "allow", .rule = "profiles.readonly.allow[0]", .ran = 1 };
	struct ag_chain_result res;
	struct ag_audit *a, *b;
	struct ag_err err;
	char line[1024], hash[AG_CHAIN_HEX], want[AG_CHAIN_HEX + 16], last[AG_CHAIN_HEX];
	FILE *fp;
	int fd;

	(void)state;
	unlink(path);
	a = open_sink(1);
	b = open_sink(1);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_int_equal(ag_audit_command(b, &c, &err), 0);	/* after a's */
	assert_int_equal(ag_audit_command(a, &c, &err), 0);	/* after b's */
	assert_int_equal(ag_audit_command_start(a, &c, &err), 0);

	/* a record written from outside, linked as a session would: a must
	 * link to it in turn */
	fd = open(path, O_RDWR | O_APPEND);
	assert_true(fd >= 0);
	{
		int empty;

		assert_int_equal(ag_chain_tail(fd, hash, &empty), 0);
		assert_int_equal(empty, 0);
	}
	snprintf(line, sizeof(line), "{\"event\":\"outside\",\"pad\":\"%0400d\",\"prev\":\"%s\"}",
	    0, hash);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	ag_chain_hash(line, strlen(line), hash);
	snprintf(want, sizeof(want), "\"prev\":\"%s\"", hash);
	assert_int_equal(lines_of(path, want), 1);

	fp = fopen(path, "r");
	assert_non_null(fp);
	last[0] = '\0';
	assert_int_equal(ag_chain_verify(fp, last, &res), 0);
	fclose(fp);
	assert_int_equal(res.records, 7);

	/* the last line altered in place, same length: the next record still
	 * links to what was written, and verify says where it broke */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	{
		struct stat st;
		char *buf, *ls;

		assert_int_equal(fstat(fd, &st), 0);
		buf = malloc((size_t)st.st_size + 1);
		assert_non_null(buf);
		assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), (ssize_t)st.st_size);
		buf[st.st_size] = '\0';
		/* "command":"ls" becomes "lx" in the last record */
		buf[st.st_size - 1] = '\0';	/* the last line starts after the newline before it */
		ls = strstr(strrchr(buf, '\n') + 1, "\"command\":\"ls\"");
		assert_non_null(ls);
		assert_int_equal(pwrite(fd, "x", 1, ls - buf + 12), 1);
		free(buf);
	}
	close(fd);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	last[0] = '\0';
	assert_int_equal(ag_chain_verify(fp, last, &res), 1);
	fclose(fp);
	assert_int_equal(res.line, 8);
	ag_audit_close(a);
	ag_audit_close(b);
	unlink(path);
}

static void
concurrent_writers_never_interleave(void **state)
{
	enum { WRITERS = 16, EACH = 100 };
	json_object *r[1];
	char *big;
	int i;

	(void)state;
	unlink(path);
	big = malloc(20001);
	assert_non_null(big);
	memset(big, 'x', 20000);
	big[20000] = '\0';
	for (i = 0; i < WRITERS; i++) {
		pid_t p = fork();

		assert_true(p >= 0);
		if (p == 0) {
			struct ag_audit *a = open_sink(1);
			struct ag_audit_cmd c;
			struct ag_err err;
			int k, bad = 0;

			memset(&c, 0, sizeof(c));
			c.command = big;
			c.command_len = 1000 + (size_t)i * 1000;
			c.decision = "allow";
			for (k = 0; k < EACH; k++)
				bad |= ag_audit_command(a, &c, &err) != 0;
			ag_audit_close(a);
			_exit(bad);
		}
	}
	for (i = 0; i < WRITERS; i++) {
		int st;

		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	free(big);
	assert_int_equal(tu_json_file(path, r, 0), WRITERS * EACH);
}


/* ---- the HTTP collector's spool --------------------------------------------- */

static char url[256];
static char spool[300];

/* A port on 127.0.0.1 where nothing listens: the collector refuses at once. */
static void
refusing_url(const char *userinfo, const char *query)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sin, &len), 0);
	close(s);
	snprintf(url, sizeof(url), "http://%s127.0.0.1:%d/in%s", userinfo,
	    ntohs(sin.sin_port), query);
}

static struct ag_audit *
open_http(const char *file, const char *spooldir, int required)
{
	struct ag_audit_conf conf;
	struct ag_err err;

	static char fbuf[512], sbuf[512];

	memset(&conf, 0, sizeof(conf));
	if (file != NULL) {
		snprintf(fbuf, sizeof(fbuf), "%s", file);
		conf.file = fbuf;
	}
	conf.http_url = url;
	if (spooldir != NULL) {
		snprintf(sbuf, sizeof(sbuf), "%s", spooldir);
		conf.spool = sbuf;
	}
	conf.required = required;
	return ag_audit_open(&conf, &info, &err);
}

static void
spool_cleanup(void)
{
	char p[320];

	snprintf(p, sizeof(p), "%s/spool-%lu.lock", dir, (unsigned long)geteuid());
	unlink(p);
	unlink(spool);
	unlink(path);
}

static size_t
count_lines(const char *p)
{
	FILE *f = fopen(p, "r");
	size_t n = 0;
	int ch;

	if (f == NULL)
		return 0;
	while ((ch = getc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static void
refused_record_waits_in_the_spool(void **state)
{
	struct ag_audit *a;
	struct ag_audit_cmd c;
	struct ag_err err;
	json_object *r[4];
	struct stat st;
	mode_t old;

	(void)state;
	spool_cleanup();
	refusing_url("", "");
	old = umask(0277);	/* the umask must not decide the mode */
	a = open_http(NULL, dir, 1);
	umask(old);
	assert_non_null(a);
	assert_int_equal(ag_audit_ready(a, &err), 0);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	memset(&c, 0, sizeof(c));
	c.command = "echo spooled";
	c.command_len = strlen(c.command);
	c.decision = "allow";
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	/* the collector refused but the spool has room: commands may run */
	assert_int_equal(ag_audit_ready(a, &err), 0);
	ag_audit_close(a);

	assert_int_equal(lstat(spool, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* the spool holds the same JSON lines the file sink would */
	snprintf(path, sizeof(path), "%s", spool);
	assert_int_equal(tu_json_file(path, r, 4), 2);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_string_equal(tu_json_str(r[0], "event"), "session_start");
	assert_string_equal(tu_json_str(r[1], "command"), "echo spooled");
	json_object_put(r[0]);
	json_object_put(r[1]);
	spool_cleanup();
}

static void
full_spool_refuses_with_a_message(void **state)
{
	struct ag_audit *a;
	struct ag_err err;
	int fd;

	(void)state;
	spool_cleanup();
	refusing_url("", "");
	fd = open(spool, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)AG_AUDIT_SPOOL_MAX), 0);	/* sparse */
	close(fd);
	a = open_http(NULL, dir, 1);
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	assert_non_null(strstr(err.msg, "is full"));
	assert_non_null(strstr(err.msg, "audit collector"));
	assert_int_equal(ag_audit_ready(a, &err), -1);
	ag_audit_close(a);
	/* nothing was appended past the bound */
	{
		struct stat st;

		assert_int_equal(stat(spool, &st), 0);
		assert_int_equal((unsigned long long)st.st_size, AG_AUDIT_SPOOL_MAX);
	}
	spool_cleanup();
}

static void
unsafe_spool_is_not_used(void **state)
{
	struct ag_audit *a;
	struct ag_err err;
	struct stat st;

	(void)state;
	spool_cleanup();
	refusing_url("", "");

	/* a directory others can write: they could swap the spool */
	assert_int_equal(chmod(dir, 0770), 0);
	a = open_http(NULL, dir, 1);
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	assert_non_null(strstr(err.msg, "writable by group"));
	assert_int_equal(ag_audit_ready(a, &err), -1);
	ag_audit_close(a);
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(access(spool, F_OK), -1);

	/* a symlink in place of the spool is not followed */
	assert_int_equal(symlink("/tmp/ag-audit-spool-elsewhere", spool), 0);
	a = open_http(NULL, dir, 1);
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	ag_audit_close(a);
	assert_int_equal(access("/tmp/ag-audit-spool-elsewhere", F_OK), -1);
	unlink(spool);

	/* a spool someone else can write is not ours */
	a = open_http(NULL, dir, 1);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	ag_audit_close(a);
	assert_int_equal(chmod(spool, 0666), 0);
	a = open_http(NULL, dir, 1);
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	ag_audit_close(a);
	assert_int_equal(count_lines(spool), 1);

	/* nor one another account planted */
	if (geteuid() == 0) {
		assert_int_equal(chmod(spool, 0600), 0);
		assert_int_equal(chown(spool, 65534, 65534), 0);
		a = open_http(NULL, dir, 1);
		assert_int_equal(ag_audit_session_start(a, &err), -1);
		ag_audit_close(a);
		assert_int_equal(stat(spool, &st), 0);
		assert_int_equal(count_lines(spool), 1);
	}
	spool_cleanup();
}

static void
collector_credentials_never_shown(void **state)
{
	struct ag_audit *a;
	struct ag_err err;

	(void)state;
	spool_cleanup();
	refusing_url("agent:pw-secret@", "?token=tok-secret");
	a = open_http(NULL, NULL, 1);		/* no file, no spool */
	assert_int_equal(ag_audit_session_start(a, &err), -1);
	assert_null(strstr(err.msg, "pw-secret"));
	assert_null(strstr(err.msg, "tok-secret"));
	assert_null(strstr(err.msg, "agent:"));
	/* still enough to find the collector */
	assert_non_null(strstr(err.msg, "audit collector http://127.0.0.1:"));
	assert_non_null(strstr(err.msg, "/in: "));
	assert_non_null(strstr(err.msg, "no spool"));
	assert_int_equal(ag_audit_ready(a, &err), -1);
	assert_null(strstr(err.msg, "pw-secret"));
	assert_null(strstr(err.msg, "tok-secret"));
	ag_audit_close(a);
}

static void
file_sink_is_enough_when_collector_and_spool_fail(void **state)
{
	struct ag_audit *a;
	struct ag_err err;
	char ro[300];

	(void)state;
	spool_cleanup();
	refusing_url("", "");
	snprintf(ro, sizeof(ro), "%s/nonexistent", dir);
	a = open_http(path, ro, 1);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	assert_int_equal(ag_audit_ready(a, &err), 0);
	ag_audit_close(a);
	assert_int_equal(count_lines(path), 1);
	spool_cleanup();
}

static void
concurrent_spoolers_never_interleave(void **state)
{
	enum { WRITERS = 8, EACH = 40 };
	char *big;
	int i;

	(void)state;
	spool_cleanup();
	refusing_url("", "");
	big = malloc(8001);
	assert_non_null(big);
	memset(big, 'y', 8000);
	big[8000] = '\0';
	for (i = 0; i < WRITERS; i++) {
		pid_t p = fork();

		assert_true(p >= 0);
		if (p == 0) {
			struct ag_audit *a = open_http(NULL, dir, 1);
			struct ag_audit_cmd c;
			struct ag_err err;
			int k, bad = 0;

			memset(&c, 0, sizeof(c));
			c.command = big;
			c.command_len = 1000 + (size_t)i * 900;
			c.decision = "allow";
			for (k = 0; k < EACH; k++)
				bad |= ag_audit_command(a, &c, &err) != 0;
			ag_audit_close(a);
			_exit(bad);
		}
	}
	for (i = 0; i < WRITERS; i++) {
		int st;

		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	free(big);
	/* every record is in the spool, each a whole line */
	snprintf(path, sizeof(path), "%s", spool);
	{
		json_object *r[1];

		assert_int_equal(tu_json_file(path, r, 0), WRITERS * EACH);
	}
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	spool_cleanup();
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	snprintf(spool, sizeof(spool), "%s/spool-%lu.jsonl", dir, (unsigned long)geteuid());
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	spool_cleanup();
	unlink_state();
	rmdir(dir);
	return 0;
}

/*
 * A session stopped while it holds the log's lock cannot freeze the others
 * (issue 34): the wait is bounded, the record fails closed with a message
 * that says why, and the next record, once the lock is free, is written
 * and chained.
 */
static void
held_lock_fails_closed_in_bounded_time(void **state)
{
	struct ag_audit_conf conf;
	struct ag_audit_cmd c = { .command = "ls", .command_len = 2, .cwd = "/",
	    .decision = "allow" };
	struct ag_audit *a;
	struct ag_err err;
	int holder;

	(void)state;
	unlink(path);
	memset(&conf, 0, sizeof(conf));
	conf.file = path;
	conf.required = 1;
	a = ag_audit_open(&conf, &info, &err);
	assert_non_null(a);
	assert_int_equal(ag_audit_session_start(a, &err), 0);
	/* another session's open file, holding the lock as a stopped one would */
	holder = open(path, O_RDWR | O_CLOEXEC);
	assert_true(holder >= 0);
	assert_int_equal(flock(holder, LOCK_EX), 0);
	ag_err_clear(&err);
	assert_int_equal(ag_audit_command(a, &c, &err), -1);
	assert_non_null(strstr(err.msg, "has held its lock"));
	close(holder);
	/* a stopped process of its own holding it: named, for the admin to end */
	{
		char pidstr[32];
		pid_t kid;
		int st;

		if ((kid = fork()) == 0) {
			int h = open(path, O_RDWR | O_CLOEXEC);

			if (h < 0 || flock(h, LOCK_EX) < 0)
				_exit(1);
			raise(SIGSTOP);
			_exit(0);
		}
		assert_true(kid > 0);
		assert_int_equal(waitpid(kid, &st, WUNTRACED), kid);
		assert_true(WIFSTOPPED(st));
		ag_err_clear(&err);
		assert_int_equal(ag_audit_command(a, &c, &err), -1);
		snprintf(pidstr, sizeof(pidstr), "process %ld, stopped,", (long)kid);
		assert_non_null(strstr(err.msg, pidstr));
		assert_non_null(strstr(err.msg, "kill"));
		kill(kid, SIGKILL);
		assert_int_equal(waitpid(kid, &st, 0), kid);
	}
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	ag_audit_close(a);
	{
		json_object *r[4];
		size_t n = tu_json_file(path, r, 4), i;

		assert_int_equal(n, 2);
		for (i = 0; i < n; i++)
			json_object_put(r[i]);
	}
	unlink(path);
}

/*
 * A line the mask changed keeps what it runs and a digest of the exact
 * text (issue 33): the mask may hide a secret's bytes, never a program.
 */
static void
masked_line_keeps_programs_and_digest(void **state)
{
	struct ag_audit_info minfo = { .user = "u", .mode = "exec" };
	struct ag_audit_cmd c;
	struct ag_err err;
	struct ag_audit *a;
	static char rm[] = "/usr/bin/rm", echo[] = "echo";
	char *progs[] = { echo, rm, echo, NULL };
	const char *line = "echo '-----BEGIN RSA PRIVATE KEY-----'\nrm -rf x";

	(void)state;
	a = ag_audit_open_memory(NULL, &minfo, &err);
	assert_non_null(a);
	memset(&c, 0, sizeof(c));
	c.command = "echo [REDACTED]";
	c.command_len = strlen(c.command);
	c.line = line;
	c.line_len = strlen(line);
	c.programs = progs;
	c.nprograms = 3;
	c.decision = "allow";
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_non_null(strstr(ag_audit_memory(a),
	    "\"programs\":[\"echo\",\"/usr/bin/rm\",\"echo\"]"));
	/* sha256 of the exact line, as `printf '%s' LINE | sha256sum` says */
	assert_non_null(strstr(ag_audit_memory(a), "\"command_sha256\":\""
	    "cb6d19251de796349685373caae07af7cba693c8e3fbcaabfb33756de30f9167\""));
	ag_audit_close(a);
	/* unchanged text: neither field */
	a = ag_audit_open_memory(NULL, &minfo, &err);
	c.command = line;
	c.command_len = strlen(line);
	assert_int_equal(ag_audit_command(a, &c, &err), 0);
	assert_null(strstr(ag_audit_memory(a), "command_sha256"));
	assert_null(strstr(ag_audit_memory(a), "\"programs\""));
	ag_audit_close(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_have_the_design_fields),
		cmocka_unit_test(masked_line_keeps_programs_and_digest),
		cmocka_unit_test(held_lock_fails_closed_in_bounded_time),
		cmocka_unit_test(invalid_utf8_is_replaced),
		cmocka_unit_test(unsafe_directory_or_file_is_refused),
		cmocka_unit_test(admin_group_gets_read_access),
		cmocka_unit_test(rotated_or_removed_log_is_opened_again),
		cmocka_unit_test(chain_links_to_what_others_appended),
		cmocka_unit_test(end_of_live_log_against_state),
		cmocka_unit_test(overlong_line_is_refused_unread),
		cmocka_unit_test(concurrent_writers_never_interleave),
		cmocka_unit_test(refused_record_waits_in_the_spool),
		cmocka_unit_test(full_spool_refuses_with_a_message),
		cmocka_unit_test(unsafe_spool_is_not_used),
		cmocka_unit_test(collector_credentials_never_shown),
		cmocka_unit_test(file_sink_is_enough_when_collector_and_spool_fail),
		cmocka_unit_test(concurrent_spoolers_never_interleave),
		cmocka_unit_test(every_sink_gets_the_files_line),
	};

	return cmocka_run_group_tests_name("audit", tests, setup, teardown);
}
