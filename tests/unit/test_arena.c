/* test_arena.c - the memory a parse tree and a decision's strings live in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/arena.h"

static int
all_zero(const unsigned char *p, size_t n)
{
	while (n-- > 0)
		if (*p++ != 0)
			return 0;
	return 1;
}

/* Pieces of every size, across many chunks: each zeroed, aligned, and
 * still holding what was written after the arena has moved on. */
static void
pieces_are_zeroed_aligned_and_kept(void **state)
{
	struct ag_arena *a = ag_arena_new((size_t)64 << 20);
	static unsigned char *p[3000];
	static size_t sz[3000];
	size_t i, j;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < 3000; i++) {
		sz[i] = i % 7 == 0 ? 1 : (i * 37) % 5000 + 1;
		if (i % 500 == 499)
			sz[i] = 70000;	/* a chunk of its own */
		p[i] = ag_arena_alloc(a, sz[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % _Alignof(max_align_t), 0);
		assert_true(all_zero(p[i], sz[i]));
		memset(p[i], (int)(i & 0xff) | 1, sz[i]);
	}
	for (i = 0; i < 3000; i++)
		for (j = 0; j < sz[i]; j++)
			if (p[i][j] != ((i & 0xff) | 1))
				fail_msg("piece %zu byte %zu overwritten", i, j);
	ag_arena_free(a);
}

static void
zero_bytes_is_a_piece(void **state)
{
	struct ag_arena *a = ag_arena_new(1 << 20);
	void *x, *y;

	(void)state;
	x = ag_arena_alloc(a, 0);
	y = ag_arena_alloc(a, 0);
	assert_non_null(x);
	assert_non_null(y);
	assert_ptr_not_equal(x, y);
	ag_arena_free(a);
}

/* A growing array keeps its elements and has its new room zeroed, small
 * (copied) and big (resized where it is) alike. */
static void
grow_keeps_and_zeroes(void **state)
{
	struct ag_arena *a = ag_arena_new((size_t)64 << 20);
	size_t n = 0, cap = 0, i;
	unsigned *v = NULL;

	(void)state;
	for (i = 0; i < 100000; i++) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4;

			v = ag_arena_grow(a, v, cap * sizeof(*v), ncap * sizeof(*v));
			assert_non_null(v);
			assert_true(all_zero((unsigned char *)(v + cap), (ncap - cap) * sizeof(*v)));
			cap = ncap;
		}
		v[n++] = (unsigned)i * 2654435761u;
	}
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], (unsigned)i * 2654435761u);
	ag_arena_free(a);
}

static void
strings_are_copied_and_bounded(void **state)
{
	struct ag_arena *a = ag_arena_new(1 << 20);
	char big[10000];
	char *s;

	(void)state;
	assert_string_equal(ag_arena_strdup(a, "allowed"), "allowed");
	assert_string_equal(ag_arena_strdup(a, ""), "");
	assert_string_equal(ag_arena_strndup(a, "abcdef", 3), "abc");
	assert_string_equal(ag_arena_strndup(a, "ab\0cd", 5), "ab");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	s = ag_arena_strdup(a, big);
	assert_non_null(s);
	assert_int_equal(strlen(s), sizeof(big) - 1);
	assert_memory_equal(s, big, sizeof(big));
	ag_arena_free(a);
}

/* Past its limit an arena says no (the caller fails closed), and what it
 * gave before is still good. */
static void
limit_fails_closed(void **state)
{
	struct ag_arena *a = ag_arena_new(1 << 20);
	char *first, *p;
	size_t got = 0;

	(void)state;
	first = ag_arena_strdup(a, "kept");
	assert_non_null(first);
	while ((p = ag_arena_alloc(a, 1000)) != NULL) {
		got += 1000;
		assert_true(got < (2u << 20));
	}
	assert_true(got > (1u << 19));
	assert_null(ag_arena_alloc(a, 200000));
	assert_null(ag_arena_grow(a, first, 5, (size_t)2 << 20));
	assert_string_equal(first, "kept");
	ag_arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_are_zeroed_aligned_and_kept),
		cmocka_unit_test(zero_bytes_is_a_piece),
		cmocka_unit_test(grow_keeps_and_zeroes),
		cmocka_unit_test(strings_are_copied_and_bounded),
		cmocka_unit_test(limit_fails_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
