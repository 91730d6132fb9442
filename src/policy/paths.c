/*
 * paths.c - the files a line touches: redirections and the targets of
 * programs that write their operands, judged against paths.read,
 * paths.write and the protected paths, each resolved as the kernel will
 * open it from every directory the shell may be in; and the tracking of
 * those directories along the line (cd, pushd, popd).
 */
#include "agconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/misc.h"
#include "common/strbuf.h"
#include "policy/pathutil.h"
#include "policy/walker.h"

/*
 * The session's cwd, resolved, remembered per thread and checked again on
 * every use with one stat(2): the same device and inode as when it was
 * resolved means the same directory, whatever happened to the symlinks on
 * the way to it, so the resolved name still names it.
 */
static __thread struct {
	char	cwd[PATH_MAX];
	char	res[PATH_MAX];
	dev_t	dev;
	ino_t	ino;
	int	valid;
} cwdcache;

static int
resolve_session_cwd(const char *cwd, char *out, size_t outsz)
{
	struct stat st, st2;

	if (ag_path_lexical() || stat(cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		return ag_path_resolve(cwd, out, outsz);
	if (cwdcache.valid && strcmp(cwdcache.cwd, cwd) == 0 &&
	    cwdcache.dev == st.st_dev && cwdcache.ino == st.st_ino &&
	    strlen(cwdcache.res) < outsz) {
		strcpy(out, cwdcache.res);
		return 0;
	}
	if (ag_path_resolve(cwd, out, outsz) < 0)
		return -1;
	/* only a name that leads to that same directory is remembered */
	if (strlen(cwd) < sizeof(cwdcache.cwd) && strlen(out) < sizeof(cwdcache.res) &&
	    stat(out, &st2) == 0 && st2.st_dev == st.st_dev && st2.st_ino == st.st_ino) {
		strcpy(cwdcache.cwd, cwd);
		strcpy(cwdcache.res, out);
		cwdcache.dev = st.st_dev;
		cwdcache.ino = st.st_ino;
		cwdcache.valid = 1;
	}
	return 0;
}

/*
 * Resolve p as seen from directory dir (one of w->cwd's): abs gets the
 * lexical absolute path, res the file the kernel will open, resolved
 * component by component ("lnk/.." is the parent of lnk's target, as for
 * open(2) and execve(2), not the directory holding lnk).  Directories in
 * the cwd set are resolved already, except the session's own cwd, which is
 * resolved once per decision, so a relative name costs only its own
 * components.
 */
int
ag_walk_resolve_in(struct ag_walker *w, const char *dir, const char *p, char *abs, size_t abssz,
    char *res, size_t ressz)
{
	char raw[PATH_MAX * 2];
	int r;

	if (ag_path_absolute(p, dir, w->home, abs, abssz) < 0)
		return -1;
	if (p[0] != '/' && p[0] != '~') {
		const char *base = dir;

		if (dir == w->ctx->cwd) {
			if (w->cwd0state == 0)
				w->cwd0state = resolve_session_cwd(dir, w->cwd0res,
				    sizeof(w->cwd0res)) == 0 ? 1 : -1;
			base = w->cwd0state == 1 ? w->cwd0res : NULL;
		}
		if (base != NULL)
			return ag_path_resolve_under(base, p, res, ressz);
		r = snprintf(raw, sizeof(raw), "%s/%s", dir, p);
	} else if (p[0] == '~')
		r = snprintf(raw, sizeof(raw), "%s%s", w->home, p + 1);	/* "~", "~/..." */
	else
		r = snprintf(raw, sizeof(raw), "%s", p);
	if (r < 0 || (size_t)r >= sizeof(raw)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* not abs: its ".." were taken lexically */
	return ag_path_resolve(raw, res, ressz);
}

/* Add (d, l) to ns unless there; 0 ok, -1 when the set is full (unknown). */
static int
cwd_add(struct ag_cwdset *ns, const char *d, const char *l)
{
	int k;

	for (k = 0; k < ns->n; k++)
		if (strcmp(ns->d[k], d) == 0 && strcmp(ns->l[k], l) == 0)
			return 0;
	if (ns->n >= AG_MAX_CWDS) {
		ns->unknown = 1;
		return -1;
	}
	ns->d[ns->n] = d;
	ns->l[ns->n++] = l;
	return 0;
}

/* The directories of both sets (the shell may be in any of them). */
const struct ag_cwdset *
ag_walk_cwd_union(struct ag_walker *w, const struct ag_cwdset *a, const struct ag_cwdset *b)
{
	struct ag_cwdset *ns;
	int i;

	if (a == b)
		return a;
	if ((ns = ag_walk_alloc(w, sizeof(*ns))) == NULL)
		return b;
	*ns = *a;
	for (i = 0; !ns->unknown && i < b->n; i++)
		(void)cwd_add(ns, b->d[i], b->l[i]);
	ns->unknown |= b->unknown;
	return ns;
}

/*
 * A cd (or pushd) to target from every directory the shell may be in;
 * target NULL: somewhere the gateway cannot tell.  physical: `cd -P`.
 * w->cd_ok becomes the set of where the shell is when the cd succeeded,
 * w->cwd that set and the old one (cd may fail).
 *
 * bash's cd first tries the logical name ($PWD/target with ".." taken
 * lexically) and, when that is no directory, the name as the kernel sees
 * it; which one exists may change before the cd runs (a mkdir earlier in
 * the line), so when they differ both count.
 */
void
ag_walk_cd(struct ag_walker *w, const char *target, int physical)
{
	struct ag_cwdset *ns;
	const struct ag_cwdset *os = w->cwd;
	int i;

	w->cd_ok = NULL;
	ns = ag_walk_alloc(w, sizeof(*ns));
	if (ns == NULL)
		return;
	if (target == NULL || os->unknown) {
		*ns = *os;
		ns->unknown = 1;
		w->cwd = ns;
		return;
	}
	for (i = 0; i < os->n; i++) {
		char abs[PATH_MAX], res[PATH_MAX], lres[PATH_MAX];
		char *d, *l;

		if (ag_walk_resolve_in(w, os->d[i], target, abs, sizeof(abs), res, sizeof(res)) < 0)
			goto unknown;
		if ((d = ag_walk_strdup(w, res)) == NULL)
			return;
		if (!physical) {
			/* Where the logical and physical names are one and the
			 * target has no "..", both resolve the same components:
			 * res is lres, without walking from / again. */
			if (ag_path_absolute(target, os->l[i], w->home, abs, sizeof(abs)) < 0)
				goto unknown;
			if (target[0] != '~' && strcmp(os->l[i], os->d[i]) == 0 &&
			    !ag_path_has_dotdot(target)) {
				if (strlen(res) >= sizeof(lres))
					goto unknown;
				strcpy(lres, res);
			} else if (ag_path_resolve(abs, lres, sizeof(lres)) < 0)
				goto unknown;
			if ((l = ag_walk_strdup(w, abs)) == NULL)
				return;
			if (strcmp(lres, res) != 0) {
				char *ld = ag_walk_strdup(w, lres);

				if (ld == NULL)
					return;
				if (cwd_add(ns, ld, l) < 0)
					goto unknown;
				l = d;	/* the fallback: bash takes $PWD from getcwd */
			}
		} else
			l = d;
		if (cwd_add(ns, d, l) < 0)
			goto unknown;
	}
	w->cd_ok = ns;
	w->cwd = ag_walk_cwd_union(w, os, ns);
	return;
unknown:
	ns->unknown = 1;
	w->cwd = ag_walk_cwd_union(w, os, ns);
}

static const char *const protect_builtin[] = {
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout",
	"~/.bash_aliases", "~/.profile", "~/.inputrc", "~/.ssh/**",
	"~/.gitconfig", "~/.config/git/**", "~/.zshrc", "~/.zshenv",
	"~/.zprofile", "~/.zlogin", "~/.zlogout", "~/.config/fish/**",
	"~/.pam_environment", "~/.config/environment.d/**", "~/.config/autostart/**",
	"~/.config/systemd/**", "~/.local/bin/**", "~/bin/**", "~/.xprofile",
	"~/.xsessionrc", "~/.curlrc", "~/.wgetrc", "~/.netrc", "~/.npmrc",
	"~/.pypirc", "~/.vimrc", "~/.exrc", "~/.lesskey", "~/.gnupg/**",
	"~/.forward", "~/.config/pip/**", "~/.cargo/config*",
	"**/.git/config", "**/.git/config.worktree", "**/.git/hooks/**",
	"**/.git/info/attributes", "**/.git/worktrees/*/config*",
	"**/.gitattributes", "**/.gitmodules", "**/.envrc",
	NULL
};

const char *const *
ag_policy_protected(void)
{
	return protect_builtin;
}

/* Expand a list entry: "~" and "~/x" from home; relative entries are
 * taken relative to home as well (documented in agentgate.yaml(5)). */
int
ag_walk_expand_entry(const char *e, const char *home, char *out, size_t outsz)
{
	int r;

	if (home != NULL && strcmp(home, "/") == 0)
		home = "";
	if (e[0] == '~' && e[1] == '\0')
		r = snprintf(out, outsz, "%s", home ? (*home ? home : "/") : "/nonexistent");
	else if (e[0] == '~' && e[1] == '/')
		r = snprintf(out, outsz, "%s%s", home ? home : "/nonexistent", e + 1);
	else if (e[0] == '/' || (e[0] == '*' && e[1] == '*'))
		r = snprintf(out, outsz, "%s", e);
	else
		r = snprintf(out, outsz, "%s/%s", home ? home : "/nonexistent", e);
	return (r < 0 || (size_t)r >= outsz) ? -1 : 0;
}

/* 1 when abs (resolved) is inside one of the list's entries. */
int
ag_walk_inside_list(const struct ag_walker *w, const struct ag_strlist *l, const char *abs)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		char e[PATH_MAX], r[PATH_MAX];

		if (ag_walk_expand_entry(l->v[i], w->home, e, sizeof(e)) < 0)
			continue;
		if (ag_path_inside(abs, e))
			return 1;
		/* the entry itself may sit behind a symlink (/tmp → /private/tmp) */
		if (!ag_path_has_glob(e) && ag_walk_cached_resolve(e, r, sizeof(r)) == 0 &&
		    strcmp(r, e) != 0 && ag_path_inside(abs, r))
			return 1;
	}
	return 0;
}

/*
 * Cheap test that a protect pattern could match abs or an ancestor, so
 * the common write (somewhere in the work tree) skips most glob matching.
 * Errs towards 1.
 */
static int
protect_prefilter(const char *pat, const char *abs, const char *home)
{
	const char *lit, *g;
	size_t hl, ll;

	if (pat[0] == '~' && (pat[1] == '/' || pat[1] == '\0')) {
		if (home == NULL)
			return 1;
		hl = strcmp(home, "/") == 0 ? 0 : strlen(home);
		if (strncmp(abs, home, hl) != 0)
			return 0;
		lit = pat + 1;
		abs += hl;
	} else if (pat[0] == '*' && pat[1] == '*') {
		lit = pat + 2;
		g = strpbrk(lit, "*?[\\");
		ll = g ? (size_t)(g - lit) : strlen(lit);
		while (ll > 0 && lit[ll - 1] == '/')
			ll--;
		return ll == 0 || memmem(abs, strlen(abs), lit, ll) != NULL;
	} else
		return 1;
	g = strpbrk(lit, "*?[\\");
	ll = g ? (size_t)(g - lit) : strlen(lit);
	while (ll > 0 && lit[ll - 1] == '/')
		ll--;
	return strncmp(abs, lit, ll) == 0;
}

static const char *
protected_by(const struct ag_walker *w, const char *abs)
{
	char e[PATH_MAX], rhome[PATH_MAX], alt[PATH_MAX];
	const char *home = w->home;
	int have_rhome;
	size_t i;

	have_rhome = home && home[0] == '/' &&
	    ag_walk_cached_resolve(home, rhome, sizeof(rhome)) == 0 && strcmp(rhome, home) != 0;
	for (i = 0; protect_builtin[i]; i++) {
		const char *p = protect_builtin[i];

		if (protect_prefilter(p, abs, home) && ag_walk_expand_entry(p, home, e,
		    sizeof(e)) == 0 && ag_path_inside(abs, e))
			return p;
		if (have_rhome && protect_prefilter(p, abs, rhome) &&
		    ag_walk_expand_entry(p, rhome, alt, sizeof(alt)) == 0 && ag_path_inside(abs, alt))
			return p;
	}
	for (i = 0; i < w->prof->paths_protect.n; i++) {
		const char *p = w->prof->paths_protect.v[i];

		if (ag_walk_expand_entry(p, home, e, sizeof(e)) == 0 && ag_path_inside(abs, e))
			return p;
		if (have_rhome && ag_walk_expand_entry(p, rhome, alt, sizeof(alt)) == 0 &&
		    ag_path_inside(abs, alt))
			return p;
	}
	return NULL;
}

/*
 * 1 when abs is a directory above a protected path (".../.git" for the
 * pattern of .git/config in any directory, home for ~/.ssh): moving or
 * recursively copying
 * a directory there would put files at the protected place.
 */
static const char *
protected_below(const struct ag_walker *w, const char *abs)
{
	const char *home = w->home;
	size_t i, n = 0, k;
	const char *pats[128];
	char e[PATH_MAX];

	for (i = 0; protect_builtin[i] && n < 128; i++)
		pats[n++] = protect_builtin[i];
	for (i = 0; i < w->prof->paths_protect.n && n < 128; i++)
		pats[n++] = w->prof->paths_protect.v[i];
	for (k = 0; k < n; k++) {
		char *sl;

		if (ag_walk_expand_entry(pats[k], home, e, sizeof(e)) < 0)
			continue;
		/* every proper prefix that ends before a '/' */
		for (sl = strchr(e + 1, '/'); sl != NULL; sl = strchr(sl + 1, '/')) {
			char save = *sl;
			int only_stars;

			*sl = '\0';
			only_stars = strspn(e, "*/") == strlen(e);
			if (!only_stars && ag_path_glob_match(e, abs)) {
				*sl = save;
				return pats[k];
			}
			*sl = save;
		}
	}
	return NULL;
}

void
ag_walk_list_text(const struct ag_strlist *l, char *buf, size_t bufsz)
{
	size_t i, j = 0;

	buf[0] = '\0';
	for (i = 0; i < l->n && j + 8 < bufsz; i++) {
		int r = snprintf(buf + j, bufsz - j, "%s%s", i ? ", " : "", l->v[i]);

		if (r < 0 || (size_t)r >= bufsz - j) {
			buf[j] = '\0';
			break;
		}
		j += (size_t)r;
	}
	if (l->n == 0)
		snprintf(buf, bufsz, "none");
}

static int
is_always_ok_dev(const char *p)
{
	return strcmp(p, "/dev/null") == 0 || strcmp(p, "/dev/stdout") == 0 ||
	    strcmp(p, "/dev/stderr") == 0 || strcmp(p, "/dev/stdin") == 0 ||
	    strcmp(p, "/dev/tty") == 0 || strcmp(p, "/dev/zero") == 0 ||
	    (strncmp(p, "/dev/fd/", 8) == 0 && p[8] != '\0' &&
	    strspn(p + 8, "0123456789") == strlen(p + 8));
}

/* The developer tier's /tmp is the session's own tmpfs (sandbox.c). */
static int
in_private_tmp(const char *res)
{
	return strcmp(res, "/tmp") == 0 || strncmp(res, "/tmp/", 5) == 0;
}

/*
 * Why an access to the file at abs (res once resolved) is refused: the
 * rule's name, with the text in msg; NULL when it is allowed.
 */
static const char *
path_refusal(struct ag_walker *w, const char *abs, const char *res, int acc, char *msg,
    size_t msgsz)
{
	char ex[80], lt[400];
	const char *prot;

	if (acc & AG_ACC_WRITE) {
		prot = protected_by(w, res);
		if (prot == NULL && strcmp(res, abs) != 0)
			prot = protected_by(w, abs);
		if (prot == NULL && (acc & AG_ACC_TREE))
			prot = protected_below(w, res);
		if (prot != NULL) {
			snprintf(msg, msgsz, "writing to '%s' is not allowed: it matches the protected path '%s' (files that shells, ssh or git later run or read)",
			    ag_walk_excerpt(res, ex, sizeof(ex)), prot);
			return "path:protect";
		}
		if (!ag_walk_inside_list(w, &w->prof->paths_write, res) &&
		    !(w->prof->tier == AG_TIER_DEVELOPER && in_private_tmp(res))) {
			ag_walk_list_text(&w->prof->paths_write, lt, sizeof(lt));
			snprintf(msg, msgsz, "writing to '%s' is outside paths.write (%s)%s",
			    ag_walk_excerpt(res, ex, sizeof(ex)), lt,
			    w->prof->tier == AG_TIER_DEVELOPER ? " and the session's own /tmp" : "");
			return "path:write";
		}
	}
	if ((acc & AG_ACC_READ) && !ag_walk_inside_list(w, &w->prof->paths_read, res)) {
		ag_walk_list_text(&w->prof->paths_read, lt, sizeof(lt));
		snprintf(msg, msgsz, "reading '%s' is outside paths.read (%s)",
		    ag_walk_excerpt(res, ex, sizeof(ex)), lt);
		return "path:read";
	}
	return NULL;
}

const char *
ag_policy_write_refusal(const struct ag_profile *prof, const char *home, const char *abs,
    char *msg, size_t msgsz)
{
	static struct ag_walker w;	/* large; only prof and home are read */

	memset(&w, 0, AG_WALKER_ZERO);
	w.prof = prof;
	w.home = home != NULL && home[0] == '/' ? home : NULL;
	return path_refusal(&w, abs, abs, AG_ACC_WRITE, msg, msgsz);
}

/*
 * Check one file access at literal path p (relative to base, or to every
 * directory the shell may be in).  what: "writing to" / "reading".
 */
void
ag_walk_check_path(struct ag_walker *w, const char *p, int acc, const char *base)
{
	char abs[PATH_MAX], res[PATH_MAX], ex[80], msg[1200], first_msg[1200];
	const struct ag_cwdset *cs = w->cwd;
	const char *rule, *first = NULL, *rec;
	int i, n, nok = 0;

	if (p[0] == '\0') {
		ag_walk_refuse(w, AG_DENY, "path", "an empty file name cannot be checked");
		return;
	}
	/* bash opens these names itself, without the file system */
	if (strncmp(p, "/dev/tcp/", 9) == 0 || strncmp(p, "/dev/udp/", 9) == 0) {
		ag_walk_refuse(w, AG_DENY, "path:network",
		    "'%s' opens a network connection from bash itself; use an allowed program instead",
		    ag_walk_excerpt(p, ex, sizeof(ex)));
		return;
	}
	if (is_always_ok_dev(p))
		return;
	if (p[0] != '/' && !(p[0] == '~' && (p[1] == '\0' || p[1] == '/')) &&
	    base == NULL && cs->unknown) {
		/*
		 * Developer tier only: its kernel sandbox confines every write
		 * to paths.write and the private /tmp and binds the protected
		 * files beneath them read-only, so a relative target the
		 * gateway cannot place is left to it, not refused.  (A whole
		 * tree landing here could cover a protected path below it:
		 * still refused.)  The strict tier refuses.
		 */
		if (w->prof->tier == AG_TIER_DEVELOPER && !(acc & AG_ACC_TREE))
			return;
		ag_walk_refuse(w, AG_DENY, "path:cwd",
		    "cannot tell which directory '%s' is relative to after a 'cd' in the same line; use an absolute path",
		    ag_walk_excerpt(p, ex, sizeof(ex)));
		return;
	}
	n = (base != NULL || p[0] == '/' || p[0] == '~') ? 1 : cs->n;
	for (i = 0; i < n; i++) {
		const char *dir = base ? base : cs->d[i];

		if (ag_walk_resolve_in(w, dir, p, abs, sizeof(abs), res, sizeof(res)) < 0) {
			ag_walk_refuse(w, AG_DENY, "path", "cannot resolve the path '%s' (%s)",
			    ag_walk_excerpt(p, ex, sizeof(ex)), strerror(errno));
			return;
		}
		if (strncmp(abs, "/dev/tcp/", 9) == 0 || strncmp(abs, "/dev/udp/", 9) == 0) {
			ag_walk_refuse(w, AG_DENY, "path:network",
			    "'%s' opens a network connection from bash itself",
			    ag_walk_excerpt(p, ex, sizeof(ex)));
			return;
		}
		if (is_always_ok_dev(abs) || is_always_ok_dev(res))
			continue;
		if ((acc & AG_ACC_WRITE) && w->ctx->record &&
		    (rec = ag_walk_strdup(w, res[0] != '\0' ? res : abs)) != NULL)
			(void)ag_walk_push(w, &w->writes, &w->nwrites, &w->capwrites, rec);
		if ((rule = path_refusal(w, abs, res, acc, msg, sizeof(msg))) == NULL)
			nok++;
		else if (first == NULL) {
			first = rule;
			snprintf(first_msg, sizeof(first_msg), "%s", msg);
		}
	}
	if (first == NULL)
		return;
	/*
	 * Where the shell may be in more than one directory (a cd before, on
	 * its own: it may fail), a target allowed from one of them is the
	 * developer tier's kernel sandbox's to judge, which confines every
	 * write and read whichever directory it is.  The strict tier refuses
	 * and says how to write the line so the gateway can tell.
	 */
	if (n > 1 && nok > 0 && w->prof->tier == AG_TIER_DEVELOPER)
		return;
	ag_walk_refuse(w, AG_DENY, first, "%s%s", first_msg, n > 1 ?
	    " (where the line is if the 'cd' before it fails; join them with '&&')" : "");
}

/*
 * A word usable as a file name: a literal, or "~"/"~/..." followed by
 * literal text.  Returns malloc'd text or NULL.
 */
char *
ag_walk_word_path(const struct ag_sh_word *wd)
{
	char *lit = ag_sh_word_literal(wd, NULL);
	struct ag_strbuf sb;
	size_t i;

	if (lit != NULL || wd->nparts == 0)
		return lit;
	if (wd->parts[0].type != AG_SH_P_TILDE || wd->parts[0].text == NULL ||
	    wd->parts[0].text[0] != '\0')
		return NULL;
	ag_strbuf_init(&sb, PATH_MAX);
	ag_strbuf_addch(&sb, '~');
	for (i = 1; i < wd->nparts; i++) {
		if (wd->parts[i].type != AG_SH_P_LIT ||
		    ag_strbuf_append(&sb, wd->parts[i].text, wd->parts[i].len) < 0) {
			ag_strbuf_free(&sb);
			return NULL;
		}
	}
	if (sb.len > 1 && sb.data[1] != '/') {
		ag_strbuf_free(&sb);
		return NULL;
	}
	return ag_strbuf_detach(&sb, NULL);
}

/* An argument "~/x" is what the program receives as HOME/x: expand it. */
char *
ag_walk_tilde_arg(const struct ag_walker *w, const struct ag_sh_word *wd)
{
	char *p = ag_walk_word_path(wd), *r;
	size_t n;

	if (p == NULL || p[0] != '~')
		return p;
	if (w->home == NULL || w->home[0] != '/') {
		free(p);
		return NULL;
	}
	n = strlen(w->home) + strlen(p);
	r = malloc(n);
	if (r != NULL)
		snprintf(r, n, "%s%s", w->home, p + 1);
	free(p);
	return r;
}

/*
 * A file a program writes.  git -C dir: relative output paths are
 * relative to dir, from every directory the shell may be in.
 */
void
ag_walk_write(struct ag_walker *w, const char *cdir, const char *p, int tree)
{
	char b[PATH_MAX];
	const char *base = cdir;

	if (base != NULL && p[0] != '/' && p[0] != '~') {
		int i, n = base[0] == '/' || base[0] == '~' ? 1 : w->cwd->n;
		char abs[PATH_MAX];

		if ((w->cwd->unknown && base[0] != '/' && base[0] != '~') || base[0] == '\0') {
			ag_walk_refuse(w, AG_DENY, "path:cwd", "cannot tell where '%s' is relative to", p);
			return;
		}
		for (i = 0; i < n; i++) {
			if (ag_walk_resolve_in(w, w->cwd->d[i], base, abs, sizeof(abs), b, sizeof(b)) < 0) {
				ag_walk_refuse(w, AG_DENY, "path:cwd", "cannot tell where '%s' is relative to", p);
				return;
			}
			ag_walk_check_path(w, p, AG_ACC_WRITE | (tree ? AG_ACC_TREE : 0), b);
		}
		return;
	}
	ag_walk_check_path(w, p, AG_ACC_WRITE | (tree ? AG_ACC_TREE : 0), NULL);
}

int
ag_walk_exec_judged(const struct ag_walker *w)
{
	return ag_profile_exec_judged(w->prof);
}

/* The redirection writes a file (/dev/null is none): a literal target t,
 * or one the line does not show (t NULL). */
static int
writes_file(const struct ag_sh_redir *rd, const char *t)
{
	switch (rd->op) {
	case AG_SH_R_DUP_OUT:
		/* >&2, >&-: fds; >&word with a name is &>word */
		if (t != NULL && (t[0] == '\0' || strcmp(t, "-") == 0 ||
		    strspn(t, "0123456789") >= strlen(t) - (t[strlen(t) - 1] == '-')))
			return 0;
		break;
	case AG_SH_R_OUT:
	case AG_SH_R_APPEND:
	case AG_SH_R_CLOBBER:
	case AG_SH_R_OUT_ERR:
	case AG_SH_R_APPEND_ERR:
	case AG_SH_R_RDWR:
		break;
	default:
		return 0;
	}
	return t == NULL || strcmp(t, "/dev/null") != 0;
}

static void
refuse_write_redir(struct ag_walker *w, const struct ag_sh_redir *rd, const char *why)
{
	char ex[80];

	ag_walk_refuse(w, AG_DENY, "feature:write_redirections",
	    "a redirection that writes a file ('%s') is refused in profile '%s' "
	    "(features.write_redirections: %s)",
	    ag_walk_excerpt(rd->target ? rd->target->raw : "", ex, sizeof(ex)),
	    w->prof->name ? w->prof->name : "?", why);
}

/*
 * features.write_redirections, for an account that may run its exact
 * commands and nothing else: `deny`, no redirection writes a file;
 * `rules`, only on a command an allow rule names (printf under an argv
 * rule, not an echo, true or `:` that no rule names), decided by
 * ag_walk_write_redirs_ruled once the command is judged.  1 when the
 * redirection may go on to the path checks.
 */
static int
write_redir_ok(struct ag_walker *w, const struct ag_sh_redir *rd, const char *t)
{
	if (w->prof->features.write_redirections == AG_WREDIR_ALLOW || !writes_file(rd, t))
		return 1;
	if (w->prof->features.write_redirections == AG_WREDIR_RULES && w->cur >= 0)
		return 1;
	refuse_write_redir(w, rd, w->prof->features.write_redirections == AG_WREDIR_RULES ?
	    "rules, and no rule names a command here" : "deny");
	return 0;
}

void
ag_walk_write_redirs_ruled(struct ag_walker *w, const struct ag_sh_redir *r, size_t nr)
{
	const struct ag_policy_cmd *c;
	char prefix[256];
	size_t i;

	if (w->prof->features.write_redirections != AG_WREDIR_RULES || w->cur < 0)
		return;
	c = &w->cmds[w->cur];
	snprintf(prefix, sizeof(prefix), "profiles.%s.allow", w->prof->name ? w->prof->name : "?");
	if (c->verdict == AG_DENY ||
	    (c->rule != NULL && strncmp(c->rule, prefix, strlen(prefix)) == 0))
		return;
	for (i = 0; i < nr; i++) {
		char *t = r[i].op == AG_SH_R_DUP_OUT ?
		    (r[i].target ? ag_sh_word_literal(r[i].target, NULL) : NULL) :
		    (r[i].target ? ag_walk_word_path(r[i].target) : NULL);
		int wf = writes_file(&r[i], t);

		free(t);
		if (wf) {
			refuse_write_redir(w, &r[i], "rules, and no allow rule names this command");
			return;
		}
	}
}

void
ag_walk_redirs(struct ag_walker *w, const struct ag_sh_redir *r, size_t nr)
{
	size_t i;
	char ex[80];

	for (i = 0; i < nr; i++) {
		const struct ag_sh_redir *rd = &r[i];
		char *t;
		int acc = 0;

		if (rd->fdvar != NULL) {
			/* {var}>file assigns the new fd number to var */
			ag_walk_var_name(w, rd->fdvar, "setting");
			ag_walk_mark_int(w, rd->fdvar, strlen(rd->fdvar));
		}
		switch (rd->op) {
		case AG_SH_R_HEREDOC:
		case AG_SH_R_HEREDOC_STRIP:
		case AG_SH_R_HERESTRING:
			ag_walk_word(w, rd->target, AG_WORD_PLAIN);
			continue;
		case AG_SH_R_DUP_IN:
		case AG_SH_R_DUP_OUT:
			ag_walk_word(w, rd->target, AG_WORD_PLAIN);
			t = rd->target ? ag_sh_word_literal(rd->target, NULL) : NULL;
			if (t == NULL && ag_walk_exec_judged(w))
				continue;
			if (t == NULL) {
				ag_walk_refuse(w, AG_DENY, "path:literal",
				    "the target of '>&' must be a literal fd number or '-', not '%s'",
				    ag_walk_excerpt(rd->target ? rd->target->raw : "", ex, sizeof(ex)));
				continue;
			}
			if (t[0] != '\0' && (strspn(t, "0123456789") == strlen(t) ||
			    (strspn(t, "0123456789") == strlen(t) - 1 &&
			    t[strlen(t) - 1] == '-'))) {
				free(t);
				continue;
			}
			if (strcmp(t, "-") == 0) {
				free(t);
				continue;
			}
			/* >&word with a file name is &>word */
			if (rd->op == AG_SH_R_DUP_OUT && !write_redir_ok(w, rd, t)) {
				free(t);
				continue;
			}
			ag_walk_check_path(w, t, rd->op == AG_SH_R_DUP_IN ? AG_ACC_READ : AG_ACC_WRITE, NULL);
			free(t);
			continue;
		case AG_SH_R_IN:
			acc = AG_ACC_READ;
			break;
		case AG_SH_R_RDWR:
			acc = AG_ACC_READ | AG_ACC_WRITE;
			break;
		case AG_SH_R_OUT:
		case AG_SH_R_APPEND:
		case AG_SH_R_CLOBBER:
		case AG_SH_R_OUT_ERR:
		case AG_SH_R_APPEND_ERR:
			acc = AG_ACC_WRITE;
			break;
		}
		ag_walk_word(w, rd->target, AG_WORD_PLAIN);
		t = rd->target ? ag_walk_word_path(rd->target) : NULL;
		if ((acc & AG_ACC_WRITE) && !write_redir_ok(w, rd, t)) {
			free(t);
			continue;
		}
		if (t == NULL && ag_walk_exec_judged(w))
			continue;
		if (t == NULL) {
			ag_walk_refuse(w, AG_DENY, "path:literal",
			    "a redirection target must be a literal file name, not '%s'",
			    ag_walk_excerpt(rd->target ? rd->target->raw : "", ex, sizeof(ex)));
			continue;
		}
		ag_walk_check_path(w, t, acc, NULL);
		free(t);
	}
}
