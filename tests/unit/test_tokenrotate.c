/*
 * test_tokenrotate.c - token rotation: previous_token as the loader reads
 * it, the text edit of `agentgate token rotate` (common/tokenrotate.h) on
 * the shapes it must handle and the ones it must refuse, which token the
 * PAM module's matcher takes and when, and the standing of a session that
 * logged in with the old token.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/tokenhash.h"
#include "common/tokenrotate.h"
#include "core/standing.h"
#include "pamid.h"

#define HEAD	"version: 1\nprofiles:\n  dev:\n    allow: [ls]\nidentities:\n"

/* Two tokens of identity "bot" and a third of "other", made once. */
static char tok1[256], hash1[AG_TOKEN_HASH_MAX], tok2[256], hash2[AG_TOKEN_HASH_MAX];
static char hash3[AG_TOKEN_HASH_MAX], hash4[AG_TOKEN_HASH_MAX];

static int
setup(void **state)
{
	char t[256];
	struct ag_err err;

	(void)state;
	if (ag_token_new("bot", tok1, sizeof(tok1), hash1, &err) < 0 ||
	    ag_token_new("bot", tok2, sizeof(tok2), hash2, &err) < 0 ||
	    ag_token_new("other", t, sizeof(t), hash3, &err) < 0 ||
	    ag_token_new("bot", t, sizeof(t), hash4, &err) < 0)
		return -1;
	return 0;
}

static struct ag_config *
parse_ok(const char *yaml)
{
	struct ag_err err;
	struct ag_config *c;

	ag_err_clear(&err);
	c = ag_config_parse(yaml, strlen(yaml), "p.yaml", &err);
	if (c == NULL)
		fail_msg("%s:%d:%d: %s\n%s", err.file, err.line, err.col, err.msg, yaml);
	return c;
}

/* The loader's message for yaml, which must not load. */
static const char *
parse_err(const char *yaml, int *line)
{
	static struct ag_err err;
	struct ag_config *c;

	ag_err_clear(&err);
	c = ag_config_parse(yaml, strlen(yaml), "p.yaml", &err);
	assert_null(c);
	*line = err.line;
	return err.msg;
}

static void
previous_token_loads(void **state)
{
	char y[2048];
	struct ag_config *c;
	const struct ag_identity *id;

	(void)state;
	snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n"
	    "    previous_token: { hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }\n"
	    "    profile: dev\n", hash2, hash1);
	c = parse_ok(y);
	id = ag_config_identity(c, "bot");
	assert_true(id->has_prev_token);
	assert_int_equal((long long)id->prev_until, 1893553445LL);
	assert_int_equal(id->prev_pos.line, 8);
	assert_int_equal(id->prev_pos.col, 5);
	ag_config_free(c);
}

static void
previous_token_refusals_say_where(void **state)
{
	static const struct {
		const char	*prev;
		const char	*msg;
	} bad[] = {
		{ "{ hash: \"H1\", until: \"2030-01-02 03:04:05\" }", "invalid time" },
		{ "{ hash: \"H1\", until: \"2030-02-30T03:04:05Z\" }", "not a real time" },
		{ "{ hash: \"H1\", until: \"2030-01-02T24:00:00Z\" }", "not a real time" },
		{ "{ hash: \"H1\" }", "has no 'until'" },
		{ "{ until: \"2030-01-02T03:04:05Z\" }", "has no 'hash'" },
		{ "{ hash: \"nope\", until: \"2030-01-02T03:04:05Z\" }", "must look like" },
		{ "{ hash: \"H1\", until: \"2030-01-02T03:04:05Z\", uses: 3 }", "uses" },
		{ "\"H1\"", "expected a mapping" },
		{ "{ hash: \"H2\", until: \"2030-01-02T03:04:05Z\" }", "same token" },
	};
	char y[2048], prev[1024], *p;
	size_t i;
	int line;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(prev, sizeof(prev), "%s", bad[i].prev);
		if ((p = strstr(prev, "H1")) != NULL || (p = strstr(prev, "H2")) != NULL) {
			char rest[512];

			snprintf(rest, sizeof(rest), "%s", p + 2);
			snprintf(p, sizeof(prev) - (size_t)(p - prev), "%s%s",
			    p[1] == '1' ? hash1 : hash2, rest);
		}
		snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n"
		    "    previous_token: %s\n    profile: dev\n", hash2, prev);
		if (strstr(parse_err(y, &line), bad[i].msg) == NULL)
			fail_msg("case %zu: %s", i, parse_err(y, &line));
		assert_int_equal(line, 8);
	}
	/* a previous token needs a current one */
	snprintf(y, sizeof(y), HEAD "  - name: bot\n    keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"
	    "AAAAINrXyg89u0RTKzCfG5oaLlwMiB2wWgZ5XtFHefEtE2SD\"]\n"
	    "    previous_token: { hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }\n"
	    "    profile: dev\n", hash1);
	assert_non_null(strstr(parse_err(y, &line), "no 'token_hash'"));
}

/* Rotate bot in yaml to hash2 until `until`; the result loads and passes
 * the check.  Returns the new text (the caller frees). */
static char *
rotate_ok(const char *yaml, time_t until)
{
	struct ag_config *before = parse_ok(yaml), *after;
	struct ag_err err;
	char *out;
	size_t len;

	ag_err_clear(&err);
	if (ag_token_rotate_text(yaml, strlen(yaml), ag_config_identity(before, "bot"), hash2,
	    until, &out, &len, &err) < 0)
		fail_msg("rotate: %s\n%s", err.msg, yaml);
	assert_int_equal(strlen(out), len);
	after = parse_ok(out);
	if (ag_token_rotate_check(before, after, "bot", hash2, until, &err) < 0)
		fail_msg("check: %s\n%s", err.msg, out);
	ag_config_free(before);
	ag_config_free(after);
	return out;
}

static void
rotates_block_flow_and_existing_previous(void **state)
{
	char y[4096], want[2048], *out, *again;
	time_t until = 1893553445;	/* 2030-01-02T03:04:05Z */

	(void)state;
	/* block: a comment and another identity with the same hash stay as they are */
	snprintf(y, sizeof(y), HEAD "  # token_hash: \"%s\"\n  - name: other\n"
	    "    token_hash: \"%s\"\n    profile: dev\n  - name: bot\n"
	    "    token_hash: '%s'   # the bot's\n    profile: dev\n", hash1, hash3, hash1);
	out = rotate_ok(y, until);
	snprintf(want, sizeof(want), "  # token_hash: \"%s\"\n", hash1);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "    token_hash: \"%s\"   # the bot's\n"
	    "    previous_token: { hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }\n"
	    "    profile: dev\n", hash2, hash1);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "  - name: other\n    token_hash: \"%s\"\n", hash3);
	assert_non_null(strstr(out, want));

	/* again, over the previous_token it now has: replaced in place */
	{
		struct ag_config *c = parse_ok(out);
		struct ag_err err;
		size_t len;

		assert_int_equal(ag_token_rotate_text(out, strlen(out), ag_config_identity(c, "bot"),
		    hash4, until + 60, &again, &len, &err), 0);
		ag_config_free(c);
	}
	snprintf(want, sizeof(want), "    token_hash: \"%s\"   # the bot's\n"
	    "    previous_token: { hash: \"%s\", until: \"2030-01-02T03:05:05Z\" }\n"
	    "    profile: dev\n", hash4, hash2);
	assert_non_null(strstr(again, want));
	free(again);
	free(out);

	/* flow, last line without a newline */
	snprintf(y, sizeof(y), HEAD "  - { name: bot, token_hash: \"%s\", profile: dev }", hash1);
	out = rotate_ok(y, until);
	snprintf(want, sizeof(want), "  - { name: bot, token_hash: \"%s\", previous_token: "
	    "{ hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }, profile: dev }", hash2, hash1);
	assert_non_null(strstr(out, want));
	free(out);

	/* a plain value, at the end of the file without a newline */
	snprintf(y, sizeof(y), HEAD "  - profile: dev\n    name: bot\n    token_hash: %s", hash1);
	out = rotate_ok(y, until);
	snprintf(want, sizeof(want), "    token_hash: \"%s\"\n    previous_token: { hash: \"%s\", "
	    "until: \"2030-01-02T03:04:05Z\" }\n", hash2, hash1);
	assert_non_null(strstr(out, want));
	free(out);
}

static void
refuses_what_it_cannot_edit_safely(void **state)
{
	char y[4096];
	struct ag_config *c;
	struct ag_err err;
	char *out;
	size_t len;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		if (i == 0)	/* value on the next line */
			snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash:\n      "
			    "\"%s\"\n    profile: dev\n", hash1);
		else if (i == 1)	/* a block previous_token */
			snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n"
			    "    previous_token:\n      hash: \"%s\"\n      until: "
			    "\"2030-01-02T03:04:05Z\"\n    profile: dev\n", hash1, hash3);
		else	/* an escape inside the quoted value */
			snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: "
			    "\"\\x24%s\"\n    profile: dev\n", hash1 + 1);
		c = parse_ok(y);
		ag_err_clear(&err);
		out = NULL;
		if (ag_token_rotate_text(y, strlen(y), ag_config_identity(c, "bot"), hash2,
		    1893553445, &out, &len, &err) == 0)
			fail_msg("case %zu edited:\n%s", i, out);
		assert_null(out);
		assert_true(err.msg[0] != '\0');
		ag_config_free(c);
	}
	/* positions that do not point at this text's hash (another file's) */
	snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n    profile: dev\n",
	    hash1);
	c = parse_ok(y);
	snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n    profile: dev\n",
	    hash3);
	assert_int_equal(ag_token_rotate_text(y, strlen(y), ag_config_identity(c, "bot"), hash2,
	    1893553445, &out, &len, &err), -1);
	assert_non_null(strstr(err.msg, "not the one the policy loads"));
	ag_config_free(c);
}

static void
check_refuses_a_wrong_result(void **state)
{
	char a[2048], b[2048];
	struct ag_config *before, *after;
	struct ag_err err;

	(void)state;
	snprintf(a, sizeof(a), HEAD "  - { name: bot, token_hash: \"%s\", profile: dev }\n"
	    "  - { name: other, token_hash: \"%s\", profile: dev }\n", hash1, hash3);
	/* the other identity's token changed too */
	snprintf(b, sizeof(b), HEAD "  - { name: bot, token_hash: \"%s\", previous_token: "
	    "{ hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }, profile: dev }\n"
	    "  - { name: other, token_hash: \"%s\", profile: dev }\n", hash2, hash1, hash4);
	before = parse_ok(a);
	after = parse_ok(b);
	assert_int_equal(ag_token_rotate_check(before, after, "bot", hash2, 1893553445, &err), -1);
	assert_non_null(strstr(err.msg, "'other'"));
	/* the wrong window */
	assert_int_equal(ag_token_rotate_check(before, after, "bot", hash2, 1893553446, &err), -1);
	ag_config_free(before);
	ag_config_free(after);
}

static void
pam_takes_previous_until_its_time(void **state)
{
	char y[2048];
	struct ag_config *c;
	const struct ag_identity *id;
	enum ag_pamid_token which;

	(void)state;
	snprintf(y, sizeof(y), HEAD "  - name: bot\n    token_hash: \"%s\"\n"
	    "    previous_token: { hash: \"%s\", until: \"2030-01-02T03:04:05Z\" }\n"
	    "    profile: dev\n", hash2, hash1);
	c = parse_ok(y);
	assert_int_equal(ag_pamid_by_token(c, tok2, strlen(tok2), 1893553444, &id, &which),
	    AG_PAMID_FOUND);
	assert_int_equal(which, AG_PAMID_TOKEN_CURRENT);
	assert_int_equal(ag_pamid_by_token(c, tok1, strlen(tok1), 1893553444, &id, &which),
	    AG_PAMID_FOUND);
	assert_int_equal(which, AG_PAMID_TOKEN_PREVIOUS);
	assert_string_equal(id->name, "bot");
	/* from until on: refused, and whose it was is known for the audit */
	assert_int_equal(ag_pamid_by_token(c, tok1, strlen(tok1), 1893553445, &id, &which),
	    AG_PAMID_STALE);
	assert_string_equal(id->name, "bot");
	/* the new token is never stale */
	assert_int_equal(ag_pamid_by_token(c, tok2, strlen(tok2), 1893553445, &id, &which),
	    AG_PAMID_FOUND);
	ag_config_free(c);
}

static void
session_on_old_token_lives_through_the_window(void **state)
{
	char was[2048], now[2048], past[2048], gone[2048], why[512];
	struct ag_config *w, *n, *p, *g;

	(void)state;
	snprintf(was, sizeof(was), HEAD "  - { name: bot, token_hash: \"%s\", profile: dev }\n",
	    hash1);
	snprintf(now, sizeof(now), HEAD "  - { name: bot, token_hash: \"%s\", previous_token: "
	    "{ hash: \"%s\", until: \"2099-01-01T00:00:00Z\" }, profile: dev }\n", hash2, hash1);
	snprintf(past, sizeof(past), HEAD "  - { name: bot, token_hash: \"%s\", previous_token: "
	    "{ hash: \"%s\", until: \"2001-01-01T00:00:00Z\" }, profile: dev }\n", hash2, hash1);
	snprintf(gone, sizeof(gone), HEAD "  - { name: bot, token_hash: \"%s\", profile: dev }\n",
	    hash2);
	w = parse_ok(was);
	n = parse_ok(now);
	p = parse_ok(past);
	g = parse_ok(gone);
	/* logged in with the token that a rotation made the previous one; the
	 * transport key sshd saw does not count */
	assert_int_equal(ag_standing_judge(ag_config_identity(w, "bot"), n, "bot", "agent",
	    "SHA256:transport", "current", "dev", why, sizeof(why)), 0);
	assert_int_equal(ag_standing_judge(ag_config_identity(w, "bot"), p, "bot", "agent",
	    "SHA256:transport", "current", "dev", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "stopped working at 2001-01-01T00:00:00Z"));
	assert_int_equal(ag_standing_judge(ag_config_identity(w, "bot"), g, "bot", "agent",
	    "SHA256:transport", "current", "dev", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "was replaced"));
	/* logged in with the previous token itself */
	assert_int_equal(ag_standing_judge(ag_config_identity(n, "bot"), n, "bot", "agent", NULL,
	    "previous", "dev", why, sizeof(why)), 0);
	assert_int_equal(ag_standing_judge(ag_config_identity(n, "bot"), g, "bot", "agent", NULL,
	    "previous", "dev", why, sizeof(why)), 1);
	/* the new token's session is untouched by the previous one going */
	assert_int_equal(ag_standing_judge(ag_config_identity(n, "bot"), g, "bot", "agent", NULL,
	    "current", "dev", why, sizeof(why)), 0);
	ag_config_free(w);
	ag_config_free(n);
	ag_config_free(p);
	ag_config_free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(previous_token_loads),
		cmocka_unit_test(previous_token_refusals_say_where),
		cmocka_unit_test(rotates_block_flow_and_existing_previous),
		cmocka_unit_test(refuses_what_it_cannot_edit_safely),
		cmocka_unit_test(check_refuses_a_wrong_result),
		cmocka_unit_test(pam_takes_previous_until_its_time),
		cmocka_unit_test(session_on_old_token_lives_through_the_window),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
