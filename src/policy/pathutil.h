/*
 * pathutil.h - path arithmetic for policy checks: make a path absolute
 * (cwd, "~"), normalise it, resolve symlinks the way the kernel will when
 * the file is opened, and test "inside" against directory or glob lists.
 *
 * Every function writes into a caller buffer of outsz bytes and fails with
 * -1 (errno ENAMETOOLONG, ELOOP or EINVAL) rather than truncating.
 */
#ifndef AG_PATHUTIL_H
#define AG_PATHUTIL_H

#include <stddef.h>

/*
 * Lexically normalise an absolute path: collapse "//", drop ".", and let
 * ".." remove the previous component ("/.." stays "/").  No trailing '/'
 * except for "/" itself.  in must start with '/'.
 */
int	ag_path_normalize(const char *in, char *out, size_t outsz);

/*
 * Make p absolute and normalised: "~" and "~/..." use home, anything not
 * starting with '/' is taken relative to cwd (itself absolute).  "~user"
 * is not expanded (EINVAL): the caller refuses what it cannot resolve.
 */
int	ag_path_absolute(const char *p, const char *cwd, const char *home,
	    char *out, size_t outsz);

/*
 * Resolve an absolute path component by component as open(2) would:
 * symlinks in the existing part are followed (dangling ones too, since
 * writing through them creates their target), ".." applies to the
 * resolved directory, and once a component does not exist the rest is
 * appended lexically.  At most 40 symlinks (ELOOP).
 */
int	ag_path_resolve(const char *abs, char *out, size_t outsz);

/*
 * The same for base + "/" + rel, where base is a directory already resolved
 * by ag_path_resolve (its components are not looked at again: the caller
 * resolves a working directory once and judges many names inside it).
 */
int	ag_path_resolve_under(const char *base, const char *rel, char *out,
	    size_t outsz);

/*
 * The filesystem a decision is about may not be this host's (a bastion's
 * upstream, upstream/upstream.h): then it cannot be looked at, and every
 * path is judged as written.  With lexical on (per thread, for the length
 * of one decision), ag_path_resolve() only normalises, no component is a
 * symlink, every "DIR/name" is an executable file, and the session's cwd
 * is taken as given.  Returns the previous setting.
 */
int	ag_path_set_lexical(int on);
int	ag_path_lexical(void);

/* 1 when path is a regular file with an execute bit (stat, so followed). */
int	ag_path_is_exec_file(const char *path);

/*
 * The file bash runs for a bare command name: the first executable
 * "DIR/name" along pathenv, into out (not resolved further).  0 found;
 * -1 not found; -2 when an empty or relative entry comes first, which
 * would make the answer depend on the directory the command runs in (the
 * policy refuses, the sandbox grants nothing: both fail closed, alike).
 */
int	ag_path_search(const char *pathenv, const char *name, char *out, size_t outsz);

/*
 * The next entry of a PATH-style list: *pp advances past it, the entry is
 * copied into buf (an entry too long for buf comes back as "").  NULL when
 * the list is done.
 */
const char *ag_path_entry(const char **pp, char *buf, size_t bufsz);

/* 1 when p contains an unescaped glob character (* ? [). */
int	ag_path_has_glob(const char *p);

/*
 * Match a path against a glob: '*', '?' and '[...]' never match '/',
 * "**" matches any run of characters including '/', and a pattern ending
 * in a slash and "**" also matches the directory itself.  1 match, 0 no match.
 */
int	ag_path_glob_match(const char *pattern, const char *path);

/*
 * 1 when path (absolute, normalised) lies inside pattern: for a plain
 * directory, equal to it or below it; for a glob, the path or one of its
 * ancestors matches it.
 */
int	ag_path_inside(const char *path, const char *pattern);

#endif
