/*
 * pathutil.c - path arithmetic for the policy (see pathutil.h).
 *
 * Resolution is done by hand instead of realpath(3) because realpath fails
 * on paths that do not exist yet, and those are exactly the ones a
 * redirection creates: "> link/new" must be judged at the place the
 * kernel will create the file, following dangling symlinks too.
 */
#include "agconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/pathutil.h"

#define MAX_SYMLINKS 40

/* Append "/comp" (len n) to out (length *olen); out is "/" or "/a/b". */
static int
push_comp(char *out, size_t *olen, size_t outsz, const char *comp, size_t n)
{
	size_t need = *olen + (*olen > 1 ? 1 : 0) + n + 1;

	if (need > outsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (*olen > 1)
		out[(*olen)++] = '/';
	memcpy(out + *olen, comp, n);
	*olen += n;
	out[*olen] = '\0';
	return 0;
}

static void
pop_comp(char *out, size_t *olen)
{
	while (*olen > 1 && out[*olen - 1] != '/')
		(*olen)--;
	if (*olen > 1)
		(*olen)--;
	out[*olen] = '\0';
}

/*
 * Take the next component of *pp onto out: "" and "." do nothing, ".."
 * goes up, a name is appended (*before: out's length without it).  1 when
 * a name was appended, 0 when not, -1 when out is too small.
 */
static int
walk_comp(const char **pp, char *out, size_t *olen, size_t outsz, size_t *before)
{
	const char *p = *pp, *s;
	size_t n;

	while (*p == '/')
		p++;
	s = p;
	while (*p && *p != '/')
		p++;
	n = (size_t)(p - s);
	*pp = p;
	if (n == 0 || (n == 1 && s[0] == '.'))
		return 0;
	if (n == 2 && s[0] == '.' && s[1] == '.') {
		pop_comp(out, olen);
		return 0;
	}
	*before = *olen;
	return push_comp(out, olen, outsz, s, n) < 0 ? -1 : 1;
}

int
ag_path_normalize(const char *in, char *out, size_t outsz)
{
	size_t olen = 1;
	const char *p = in;

	if (in == NULL || in[0] != '/' || outsz < 2) {
		errno = EINVAL;
		return -1;
	}
	out[0] = '/';
	out[1] = '\0';
	while (*p) {
		size_t before;

		if (walk_comp(&p, out, &olen, outsz, &before) < 0)
			return -1;
	}
	return 0;
}

int
ag_path_absolute(const char *p, const char *cwd, const char *home, char *out,
    size_t outsz)
{
	char tmp[PATH_MAX * 2];
	size_t n;
	int r;

	if (p == NULL || *p == '\0') {
		errno = EINVAL;
		return -1;
	}
	if (p[0] == '~') {
		if (p[1] != '\0' && p[1] != '/') {
			errno = EINVAL;		/* ~user, ~+, ~- */
			return -1;
		}
		if (home == NULL || home[0] != '/') {
			errno = EINVAL;
			return -1;
		}
		r = snprintf(tmp, sizeof(tmp), "%s/%s", home, p + 1);
	} else if (p[0] == '/') {
		n = strlen(p);
		if (n >= sizeof(tmp)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(tmp, p, n + 1);
		r = (int)n;
	} else {
		if (cwd == NULL || cwd[0] != '/') {
			errno = EINVAL;
			return -1;
		}
		r = snprintf(tmp, sizeof(tmp), "%s/%s", cwd, p);
	}
	if (r < 0 || (size_t)r >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return ag_path_normalize(tmp, out, outsz);
}

/*
 * Walk the components of path (absolute or relative) on top of out, which
 * holds olen bytes of an already resolved directory ("/" to start from the
 * root).
 */
static __thread int lexical;

int
ag_path_set_lexical(int on)
{
	int was = lexical;

	lexical = on;
	return was;
}

int
ag_path_lexical(void)
{
	return lexical;
}

static int
resolve_walk(const char *path, char *out, size_t olen, size_t outsz)
{
	/* rest holds the components still to walk; a symlink's target is
	 * prepended to it, which is why it is larger than one path */
	char rest[PATH_MAX * 2], link[PATH_MAX], tmp[PATH_MAX * 2];
	size_t rlen;
	const char *p;
	int links = 0, missing = 0;

	rlen = strlen(path);
	if (rlen >= sizeof(rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(rest, path, rlen + 1);
	p = rest;
	while (*p) {
		size_t save = 0;
		struct stat st;
		ssize_t ln;
		int k = walk_comp(&p, out, &olen, outsz, &save);

		if (k < 0)
			return -1;
		if (k == 0 || missing || lexical)
			continue;
		if (lstat(out, &st) < 0) {
			/* ENOENT, ENOTDIR, EACCES: judge the rest lexically;
			 * open(2) will fail or create exactly this name */
			missing = 1;
			continue;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > MAX_SYMLINKS) {
			errno = ELOOP;
			return -1;
		}
		ln = readlink(out, link, sizeof(link) - 1);
		if (ln < 0)
			return -1;
		link[ln] = '\0';
		/* new rest = target + "/" + what is left */
		{
			int r = snprintf(tmp, sizeof(tmp), "%s/%s", link, p);

			if (r < 0 || (size_t)r >= sizeof(tmp)) {
				errno = ENAMETOOLONG;
				return -1;
			}
			memcpy(rest, tmp, (size_t)r + 1);
			p = rest;
		}
		if (link[0] == '/') {
			olen = 1;
			out[0] = '/';
			out[1] = '\0';
		} else {
			olen = save;	/* relative: from the link's directory */
			out[olen] = '\0';
		}
	}
	return 0;
}

int
ag_path_resolve(const char *abs, char *out, size_t outsz)
{
	if (abs == NULL || abs[0] != '/' || outsz < 2) {
		errno = EINVAL;
		return -1;
	}
	out[0] = '/';
	out[1] = '\0';
	return resolve_walk(abs, out, 1, outsz);
}

int
ag_path_resolve_under(const char *base, const char *rel, char *out, size_t outsz)
{
	if (base == NULL || base[0] != '/' || rel == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (ag_path_normalize(base, out, outsz) < 0)
		return -1;
	if (rel[0] == '/') {		/* not relative after all */
		out[0] = '/';
		out[1] = '\0';
	}
	return resolve_walk(rel, out, strlen(out), outsz);
}

int
ag_path_has_glob(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '*' || *p == '?' || *p == '[')
			return 1;
	}
	return 0;
}

/* Match a bracket expression at pat (just after '['); sets *next past ']'.
 * Returns 1/0, or -1 when the bracket is not closed (then '[' is literal). */
static int
match_bracket(const char *pat, char c, const char **next)
{
	const char *p = pat;
	int neg = 0, ok = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	if (*p == ']') {		/* a leading ']' is literal */
		ok |= (c == ']');
		p++;
	}
	while (*p && *p != ']') {
		char lo = *p, hi;

		if (lo == '\\' && p[1])
			lo = *++p;
		hi = lo;
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = p[2];
			p += 2;
		}
		if ((unsigned char)c >= (unsigned char)lo &&
		    (unsigned char)c <= (unsigned char)hi)
			ok = 1;
		p++;
	}
	if (*p != ']')
		return -1;
	*next = p + 1;
	return (ok ^ neg) && c != '/';
}

static int
glob_rec(const char *p, const char *s, int budget)
{
	/* budget bounds backtracking: patterns come from the admin, paths
	 * are at most PATH_MAX, but a pathological pattern must not stall */
	while (*p) {
		if (budget-- <= 0)
			return 0;
		if (p[0] == '*' && p[1] == '*') {
			while (*p == '*')
				p++;
			/* "dir" followed by slash-star-star also matches "dir" */
			if (*p == '\0')
				return 1;
			/* "**" + "/" may match zero directories */
			if (*p == '/' && glob_rec(p + 1, s, budget))
				return 1;
			for (; *s; s++)
				if (glob_rec(p, s, budget / 2 + 1))
					return 1;
			return glob_rec(p, s, budget);
		}
		if (*p == '*') {
			p++;
			for (;; s++) {
				if (glob_rec(p, s, budget / 2 + 1))
					return 1;
				if (*s == '\0' || *s == '/')
					return 0;
			}
		}
		if (*s == '\0')
			return 0;
		if (*p == '?') {
			if (*s == '/')
				return 0;
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *next = NULL;
			int m = match_bracket(p + 1, *s, &next);

			if (m >= 0) {
				if (!m)
					return 0;
				p = next;
				s++;
				continue;
			}
			/* unclosed: literal '[' */
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return *s == '\0';
}

int
ag_path_glob_match(const char *pattern, const char *path)
{
	size_t n = strlen(pattern);

	/* X followed by slash-star-star matches X itself */
	if (n >= 3 && strcmp(pattern + n - 3, "/**") == 0 &&
	    strlen(path) == n - 3 && strncmp(pattern, path, n - 3) == 0)
		return 1;
	return glob_rec(pattern, path, 100000);
}

int
ag_path_inside(const char *path, const char *pattern)
{
	size_t n;
	char buf[PATH_MAX];
	size_t len;

	if (!ag_path_has_glob(pattern)) {
		n = strlen(pattern);
		while (n > 1 && pattern[n - 1] == '/')
			n--;
		if (n == 1 && pattern[0] == '/')
			return path[0] == '/';
		return strncmp(path, pattern, n) == 0 &&
		    (path[n] == '\0' || path[n] == '/');
	}
	len = strlen(path);
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	for (;;) {
		if (ag_path_glob_match(pattern, buf))
			return 1;
		while (len > 1 && buf[len - 1] != '/')
			len--;
		if (len <= 1)
			break;
		buf[--len] = '\0';
	}
	return 0;
}

int
ag_path_is_exec_file(const char *path)
{
	struct stat st;

	if (lexical)
		return 1;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
}

const char *
ag_path_entry(const char **pp, char *buf, size_t bufsz)
{
	const char *p = *pp, *e;
	size_t n;

	if (p == NULL)
		return NULL;
	e = strchr(p, ':');
	n = e != NULL ? (size_t)(e - p) : strlen(p);
	*pp = e != NULL ? e + 1 : NULL;
	if (n >= bufsz)
		n = 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

int
ag_path_search(const char *pathenv, const char *name, char *out, size_t outsz)
{
	char dir[PATH_MAX];
	const char *p = pathenv;

	while (ag_path_entry(&p, dir, sizeof(dir)) != NULL) {
		int r;

		if (dir[0] != '/')
			return -2;
		r = snprintf(out, outsz, "%s/%s", dir, name);
		if (r > 0 && (size_t)r < outsz && ag_path_is_exec_file(out))
			return 0;
	}
	return -1;
}
