/*
 * testfile.h - writing a test's files (include after <cmocka.h>): a
 * failure to write is the test's failure, not a puzzle later.
 */
#ifndef AG_TESTFILE_H
#define AG_TESTFILE_H

#include <stdio.h>
#include <sys/stat.h>

/* path holds text, with mode. */
static inline void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
}

#endif
