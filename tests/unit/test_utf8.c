/*
 * test_utf8.c - text from a client made safe to show (src/common/utf8.c):
 * C0, DEL, C1 and the bidirectional controls never reach a terminal or a
 * log reader as themselves, invalid UTF-8 is escaped byte by byte, and
 * everything else (accents, CJK, emoji) passes untouched.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/utf8.h"

static const char *
vis(const char *s, size_t max)
{
	static char buf[512];

	return ag_utf8_visible(s, strlen(s), max, buf, sizeof(buf));
}

static void
unsafe_code_points_are_escaped(void **state)
{
	(void)state;
	assert_string_equal(vis("a\xe2\x80\xae" "b", 100), "a\\u202eb");	/* RLO */
	assert_string_equal(vis("\xe2\x81\xa6x\xe2\x81\xa9", 100), "\\u2066x\\u2069");	/* LRI, PDI */
	assert_string_equal(vis("\xe2\x80\x8f", 100), "\\u200f");		/* RLM */
	assert_string_equal(vis("\xd8\x9c", 100), "\\u061c");		/* ALM */
	assert_string_equal(vis("\xc2\x9b" "31m", 100), "\\u009b31m");	/* CSI as C1 */
	assert_string_equal(vis("\x1b[2J\x7f", 100), "\\x1b[2J\\x7f");
	assert_string_equal(vis("a\nb", 100), "a\\nb");
}

static void
invalid_bytes_are_escaped_one_by_one(void **state)
{
	(void)state;
	assert_string_equal(vis("\xff\xfe", 100), "\\xff\\xfe");
	assert_string_equal(vis("\xc2", 100), "\\xc2");		/* cut sequence */
	assert_string_equal(vis("\xed\xa0\x80", 100), "\\xed\\xa0\\x80");	/* surrogate */
	assert_string_equal(vis("\xc0\xaf", 100), "\\xc0\\xaf");	/* overlong */
}

static void
safe_text_passes_untouched(void **state)
{
	(void)state;
	assert_string_equal(vis("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82", 100),
	    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82");
	assert_string_equal(vis("\xe2\x80\x94 dash", 100), "\xe2\x80\x94 dash");
}

static void
cut_never_inside_a_sequence_or_escape(void **state)
{
	char small[12];

	(void)state;
	assert_string_equal(vis("abcdef", 3), "abc...");
	assert_string_equal(vis("\xe6\x97\xa5\xe6\x97\xa5", 3), "\xe6\x97\xa5...");
	/* the buffer bounds the output: whole pieces and "..." only */
	ag_utf8_visible("\xe2\x80\xae\xe2\x80\xae\xe2\x80\xae", 9, 100, small, sizeof(small));
	assert_string_equal(small, "\\u202e...");
}

static void
json_keeps_the_string_and_escapes_the_controls(void **state)
{
	const char js[] = "{\"c\":\"x\xe2\x80\xaey\xc2\x85\x7f\xc3\xa9\"}";
	size_t n = 0;
	char *out;

	(void)state;
	out = ag_utf8_json_safe(js, sizeof(js) - 1, &n);
	assert_non_null(out);
	assert_string_equal(out, "{\"c\":\"x\\u202ey\\u0085\\u007f\xc3\xa9\"}");
	assert_int_equal(n, strlen(out));
	free(out);
}

/* What a read cut short at its end: only a lead byte and fewer
 * continuation bytes than it needs, never a whole or an invalid one. */
static void
cut_counts_only_a_character_begun(void **state)
{
	(void)state;
	assert_int_equal(ag_utf8_cut((const unsigned char *)"ab", 2), 0);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"a\xc3", 2), 1);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"a\xc3\xa9", 3), 0);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"\xe2\x82", 2), 2);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"\xf0\x9f\x98", 3), 3);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"\xf0\x9f\x98\x80", 4), 0);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"a\xff", 2), 0);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"\x80\x80\x80", 3), 0);
	assert_int_equal(ag_utf8_cut((const unsigned char *)"", 0), 0);
}

/* The admin commands' form: the sequences an agent sent root's terminal
 * through a command line (issue 34), a NULL as "", a cut that fits. */
static void
shown_is_the_admin_commands_form(void **state)
{
	char buf[128], small[16];

	(void)state;
	assert_string_equal(ag_utf8_shown("sleep 1 # \x1b]52;c;cm0=\a\x1b]0;pwned\a\x1b[2K",
	    buf, sizeof(buf)), "sleep 1 # \\x1b]52;c;cm0=\\x07\\x1b]0;pwned\\x07\\x1b[2K");
	assert_string_equal(ag_utf8_shown(NULL, buf, sizeof(buf)), "");
	assert_string_equal(ag_utf8_shown("\x1b\x1b\x1b\x1b", small, sizeof(small)),
	    "\\x1b\\x1b\\x1b...");
	assert_null(strchr(ag_utf8_shown("\x1b]52;c;", small, sizeof(small)), '\x1b'));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unsafe_code_points_are_escaped),
		cmocka_unit_test(invalid_bytes_are_escaped_one_by_one),
		cmocka_unit_test(safe_text_passes_untouched),
		cmocka_unit_test(cut_never_inside_a_sequence_or_escape),
		cmocka_unit_test(json_keeps_the_string_and_escapes_the_controls),
		cmocka_unit_test(cut_counts_only_a_character_begun),
		cmocka_unit_test(shown_is_the_admin_commands_form),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
