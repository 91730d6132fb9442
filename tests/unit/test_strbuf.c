/* test_strbuf.c - the bounded buffer every reader of outside input uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strbuf.h"

static void
appends_and_terminates(void **state)
{
	struct ag_strbuf sb;

	(void)state;
	ag_strbuf_init(&sb, 0);
	assert_int_equal(ag_strbuf_addstr(&sb, "abc"), 0);
	assert_int_equal(ag_strbuf_addch(&sb, 'd'), 0);
	assert_int_equal(ag_strbuf_printf(&sb, "-%d-", 42), 0);
	assert_string_equal(sb.data, "abcd-42-");
	assert_int_equal(sb.len, 8);
	ag_strbuf_free(&sb);
}

static void
refuses_growth_past_limit(void **state)
{
	struct ag_strbuf sb;
	char chunk[100];

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	ag_strbuf_init(&sb, 250);
	assert_int_equal(ag_strbuf_append(&sb, chunk, 100), 0);
	assert_int_equal(ag_strbuf_append(&sb, chunk, 100), 0);
	assert_int_equal(ag_strbuf_append(&sb, chunk, 100), -1);
	assert_int_equal(sb.len, 200);
	assert_int_equal(ag_strbuf_append(&sb, chunk, 50), 0);
	assert_int_equal(ag_strbuf_addch(&sb, 'y'), -1);
	assert_int_equal(ag_strbuf_printf(&sb, "%s", "z"), -1);
	assert_int_equal(sb.len, 250);
	ag_strbuf_free(&sb);
}

static void
detach_hands_over_and_empties(void **state)
{
	struct ag_strbuf sb;
	size_t len;
	char *p;

	(void)state;
	ag_strbuf_init(&sb, 0);
	p = ag_strbuf_detach(&sb, &len);
	assert_non_null(p);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	free(p);
	ag_strbuf_addstr(&sb, "hello");
	p = ag_strbuf_detach(&sb, &len);
	assert_string_equal(p, "hello");
	assert_int_equal(len, 5);
	assert_null(sb.data);
	free(p);
	ag_strbuf_reset(&sb);
	ag_strbuf_free(&sb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(appends_and_terminates),
		cmocka_unit_test(refuses_growth_past_limit),
		cmocka_unit_test(detach_hands_over_and_empties),
	};

	return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
