/*
 * testutil.h - what the unit tests share (include after <cmocka.h>): a
 * temporary directory and its removal, writing a file, and the JSON lines
 * of an audit log or a recording.  A failure to write or parse is the
 * test's failure, not a puzzle later.
 *
 * The JSON part needs json-c: include <json.h> before this header (and
 * link $(JSONC_LIBS)).
 */
#ifndef AG_TESTUTIL_H
#define AG_TESTUTIL_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A new directory /tmp/ag-test-TAG.XXXXXX, mode 0755 (so that a sandboxed
 * or dropped-privilege child may look in it), its real path in dir.  0, or
 * -1 (for a setup function to return).
 */
static inline int
tu_tmpdir(char *dir, size_t dirlen, const char *tag)
{
	char tmpl[256], *real;

	snprintf(tmpl, sizeof(tmpl), "/tmp/ag-test-%s.XXXXXX", tag);
	if (mkdtemp(tmpl) == NULL || chmod(tmpl, 0755) < 0 ||
	    (real = realpath(tmpl, NULL)) == NULL)
		return -1;
	snprintf(dir, dirlen, "%s", real);
	free(real);
	return 0;
}

static inline int
tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	/* a directory a test made unreadable must still go */
	if (flag == FTW_DNR)
		(void)chmod(path, 0700);
	return remove(path);
}

/* dir and everything beneath it, links not followed.  0, or -1. */
static inline int
tu_rm_rf(const char *dir)
{
	return nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

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

/* DIR/NAME holds text, with mode; its path in path. */
static inline void
tu_write_in(char *path, size_t pathlen, const char *dir, const char *name, const char *text,
    mode_t mode)
{
	snprintf(path, pathlen, "%s/%s", dir, name);
	write_file(path, text, mode);
}

#ifdef _json_h_
/*
 * Every line of text, parsed strictly (valid UTF-8 required, each line
 * ends with a newline): the first max into out (the caller puts them),
 * the count returned.
 */
static inline size_t
tu_json_lines(const char *text, json_object **out, size_t max)
{
	const char *p = text, *nl;
	size_t n = 0;

	for (; *p != '\0'; p = nl + 1) {
		json_tokener *tok = json_tokener_new();
		json_object *o;

		assert_non_null(tok);
		if ((nl = strchr(p, '\n')) == NULL)
			fail_msg("line %zu has no newline: %s", n + 1, p);
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		o = json_tokener_parse_ex(tok, p, (int)(nl - p));
		if (o == NULL)
			fail_msg("line %zu is not strict JSON: %.*s", n + 1, (int)(nl - p), p);
		json_tokener_free(tok);
		if (n < max)
			out[n] = o;
		else
			json_object_put(o);
		n++;
	}
	return n;
}

/* The same for the lines of the file path. */
static inline size_t
tu_json_file(const char *path, json_object **out, size_t max)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, n;

	if (f == NULL)
		fail_msg("%s: cannot open", path);
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	n = tu_json_lines(text != NULL ? text : "", out, max);
	free(text);
	return n;
}

static inline void
tu_json_put_all(json_object **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_object_put(v[i]);
}

/* o's member k as a string, or NULL when o has none. */
static inline const char *
tu_json_str(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}
#endif

#endif
