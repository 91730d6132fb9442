/*
 * command.c - one simple command: a function, a builtin or a program; the
 * program's file, its deny and allow rules, and what its descriptor knows
 * about it (the files it writes, the command a wrapper runs).
 *
 * Programs whose own arguments name files they write, checked like
 * redirections: tee FILE..., sed -i FILE..., sort -o F, cp/mv/install/ln
 * destinations (and mv sources), touch, mkdir, rm, rmdir, truncate,
 * dd of=F, time -o F, find -fprint/-fprint0/-fprintf/-fls, git --output=F
 * (and format-patch -o DIR), strace/ltrace -o F.  find -exec/-execdir/-ok
 * commands are checked as commands of their own.
 */
#include "agconfig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/walker.h"

#define MAX_WRAP	16	/* wrappers inside wrappers */

/* Wrappers unwrapped without being named in the profile. */
static const char *const safe_wrappers[] = {
	"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "time",
	NULL
};

/* Wrappers refused unless the profile names them. */
static const char *const risky_wrappers[] = {
	"sudo", "doas", "su", "chroot", "flock", "watch", "parallel", "script",
	"unbuffer", "strace", "ltrace", "gdb", "busybox", "pkexec", "runuser",
	"nsenter", "unshare", "firejail", "ionice", "chrt", "taskset", "numactl",
	"catchsegv", "valgrind", "expect", "ssh-agent", "dbus-launch",
	"systemd-run", "fakeroot", "proot",
	NULL
};

static int
is_loader(const char *base)
{
	return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld.so", 5) == 0 ||
	    strncmp(base, "ld64.so", 7) == 0 || strncmp(base, "ld-musl", 7) == 0;
}

const char *const *
ag_policy_wrappers(void)
{
	return safe_wrappers;
}

/*
 * Developer tier: a program path that does not exist yet names a place
 * beneath paths.exec from every directory the shell may be in, resolved
 * as execve(2) will (the part that exists followed, the rest as written).
 * What the line creates there before it runs (a symlink to a system
 * program) is the kernel's to judge: in this tier anything readable may
 * run, and the exec supervisor applies the deny rules to it.
 */
static int
exec_target_ok(struct ag_walker *w, const char *name)
{
	const char *last = ag_walk_base_name(name);
	int i, n = name[0] == '/' ? 1 : w->cwd->n;

	if ((name[0] != '/' && w->cwd->unknown) || strcmp(last, "..") == 0 ||
	    strcmp(last, ".") == 0 || last[0] == '\0')
		return 0;
	for (i = 0; i < n; i++) {
		char abs[PATH_MAX], res[PATH_MAX];

		if (ag_walk_resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0 ||
		    !ag_walk_inside_list(w, &w->prof->paths_exec, res))
			return 0;
	}
	return 1;
}

/* Resolve a command name to a file.  0 ok; -1 not found; -2 ambiguous. */
static int
resolve_cmd(struct ag_walker *w, const char *name, char *real, size_t realsz)
{
	char abs[PATH_MAX];

	if (strchr(name, '/') == NULL)
		return ag_walk_lookup(w->pathenv, name, real, realsz);
	if (name[0] != '/') {
		char other[PATH_MAX];
		int i, rc = -1;

		if (w->cwd->unknown || w->cwd->n < 1)
			return -2;
		/* from every directory the shell may be in, the same file */
		for (i = 0; i < w->cwd->n; i++) {
			char res[PATH_MAX];
			int r;

			/* resolved as execve(2) will: "lnk/.." is the parent of
			 * lnk's target */
			if (ag_walk_resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0)
				return -1;
			r = ag_walk_lookup(NULL, res, i == 0 ? real : other, i == 0 ? realsz : sizeof(other));
			if (i == 0)
				rc = r;
			else if (r != rc || (r == 0 && strcmp(real, other) != 0))
				return -2;
		}
		return rc;
	}
	return ag_walk_lookup(NULL, name, real, realsz);
}

/*
 * git and find take some arguments as options, so a word the gateway cannot
 * see could be an option that writes a file or runs a program.  A
 * non-literal is accepted only where it is the value of an option that
 * takes one, or after "--".
 */
static int
nonlit_in_option_position(struct ag_arg *a, size_t na, const char *const *valopts,
    size_t *bad)
{
	size_t i;
	int after_dd = 0;

	for (i = 1; i < na; i++) {
		if (a[i].lit != NULL) {
			if (strcmp(a[i].lit, "--") == 0)
				after_dd = 1;
			continue;
		}
		if (after_dd)
			continue;
		if (a[i - 1].lit != NULL && ag_walk_in_list(valopts, a[i - 1].lit))
			continue;
		*bad = i;
		return 1;
	}
	return 0;
}

static const char *const git_valopts[] = {
	"-m", "--message", "--author", "--date", "-n", "--max-count", "--grep",
	"--format", "--pretty", "-S", "-G", "--since", "--until", "--after",
	"--before", "--committer", "-b", "-B", "--branch", "-C", NULL
};

static const char *const find_valopts[] = {
	"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-lname", "-ilname", "-type", "-xtype", "-newer",
	"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size",
	"-user", "-group", "-perm", "-maxdepth", "-mindepth", "-samefile",
	"-inum", "-links", "-uid", "-gid", "-printf", "-used", NULL
};

struct optspec {
	const char	 *short_val;	/* letters that take a value */
	const char *const *long_val;	/* long options that take a value */
	const char *const *long_flag;	/* long options without one that we look at */
};

/*
 * GNU getopt and git accept any unambiguous prefix of a long option
 * ("sort --outp=F" is --output), so an option is named by the first of
 * ours it is a prefix of.  Options that make a program more permissive
 * (sed --sandbox) are left out of these lists: they count only when
 * written in full.
 */
static const char *
canon_long(const char *s, size_t nl, const char *const *a, const char *const *b)
{
	const char *const *lv;
	const char *first = NULL;
	int k;

	if (nl < 3)
		return NULL;
	for (k = 0; k < 2; k++)
		for (lv = k ? b : a; lv && *lv; lv++)
			if (strncmp(*lv, s, nl) == 0) {
				if ((*lv)[nl] == '\0')
					return *lv;
				if (first == NULL)
					first = *lv;
			}
	return first;
}

typedef void (*opt_fn)(struct ag_walker *w, void *ud, const char *opt, const char *val);

/* GNU-style: options may follow operands; "--" ends options.  opt is
 * "-x" or "--name"; operands come with opt NULL. */
static void
parse_opts(struct ag_walker *w, struct ag_arg *a, size_t na, size_t start,
    const struct optspec *sp, opt_fn fn, void *ud)
{
	size_t i;
	int only_operands = 0;

	for (i = start; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (only_operands || s[0] != '-' || s[1] == '\0') {
			fn(w, ud, NULL, s);
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *eq = strchr(s, '=');
			size_t nl = eq ? (size_t)(eq - s) : strlen(s);
			const char *canon = canon_long(s, nl, sp->long_val, sp->long_flag);
			const char *const *lv;
			char on[64];
			int takes = 0;

			if (canon != NULL)
				snprintf(on, sizeof(on), "%s", canon);
			else
				snprintf(on, sizeof(on), "%.*s", (int)(nl < 60 ? nl : 60), s);
			for (lv = sp->long_val; lv && *lv; lv++)
				if (strcmp(*lv, on) == 0)
					takes = 1;
			if (eq != NULL)
				fn(w, ud, on, eq + 1);
			else if (takes && i + 1 < na) {
				fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
				i++;
			} else
				fn(w, ud, on, NULL);
			continue;
		}
		{
			const char *c;

			for (c = s + 1; *c; c++) {
				char on[3] = { '-', *c, '\0' };

				if (sp->short_val && strchr(sp->short_val, *c)) {
					if (c[1] != '\0')
						fn(w, ud, on, c + 1);
					else if (i + 1 < na) {
						fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
						i++;
					} else
						fn(w, ud, on, "");
					break;
				}
				fn(w, ud, on, NULL);
			}
		}
	}
}

struct outctx {
	const char	*prog;
	const char	*base;		/* -C dir or NULL */
	const char	**ops;		/* operands */
	size_t		 nops;
	const char	*target_dir;	/* -t DIR */
	int		 no_target_dir;	/* -T */
	int		 links;		/* ln, cp -s/-l: the sources become links */
	int		 tree;		/* mv, cp -r: directories move or copy */
	int		 in_place;	/* sed -i */
	int		 sandbox;	/* sed --sandbox */
	int		 script_file;	/* sed -f given */
	const char	*scripts[16];	/* sed -e SCRIPT */
	size_t		 nscripts;
	int		 bad;
};

static void
out_write(struct ag_walker *w, struct outctx *o, const char *p)
{
	char b[PATH_MAX];
	const char *base = o->base;

	/* git -C dir: relative output paths are relative to dir, from every
	 * directory the shell may be in */
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
			ag_walk_check_path(w, p, AG_ACC_WRITE | (o->tree ? AG_ACC_TREE : 0), b);
		}
		return;
	}
	ag_walk_check_path(w, p, AG_ACC_WRITE | (o->tree ? AG_ACC_TREE : 0), NULL);
}

static void
collect_op(struct ag_walker *w, struct outctx *o, const char *v)
{
	const char **n;

	if (o->nops % 16 == 0) {
		n = realloc(o->ops, (o->nops + 16) * sizeof(*n));
		if (n == NULL) {
			w->oom = 1;
			return;
		}
		o->ops = n;
	}
	o->ops[o->nops++] = v;
}

static void
opt_files(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL)
		collect_op(w, o, val);
}

static void
opt_sort(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL)
		return;
	if ((strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		out_write(w, o, val);
	if (strcmp(opt, "--compress-program") == 0) {
		ag_walk_refuse(w, AG_DENY, "program:sort", "'sort --compress-program' runs another program");
		o->bad = 1;
	}
}

static void
opt_cpmv(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL) {
		collect_op(w, o, val);
		return;
	}
	if ((strcmp(opt, "-t") == 0 || strcmp(opt, "--target-directory") == 0) && val)
		o->target_dir = val;
	if (strcmp(opt, "-T") == 0 || strcmp(opt, "--no-target-directory") == 0)
		o->no_target_dir = 1;
	if (strcmp(opt, "-s") == 0 || strcmp(opt, "-l") == 0 ||
	    strcmp(opt, "--link") == 0 || strcmp(opt, "--symbolic-link") == 0)
		o->links = 1;
	if (strcmp(opt, "-r") == 0 || strcmp(opt, "-R") == 0 || strcmp(opt, "-a") == 0 ||
	    strcmp(opt, "--recursive") == 0 || strcmp(opt, "--archive") == 0)
		o->tree = 1;
}

static void
opt_sed(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL) {
		collect_op(w, o, val);
		return;
	}
	if (strcmp(opt, "-i") == 0 || strcmp(opt, "--in-place") == 0)
		o->in_place = 1;
	if (strcmp(opt, "--sandbox") == 0)
		o->sandbox = 1;
	if ((strcmp(opt, "-e") == 0 || strcmp(opt, "--expression") == 0) && val) {
		if (o->nscripts < sizeof(o->scripts) / sizeof(o->scripts[0]))
			o->scripts[o->nscripts++] = val;
		else
			o->bad = 1;
	}
	if (strcmp(opt, "-f") == 0 || strcmp(opt, "--file") == 0)
		o->script_file = 1;
}

static void
opt_time(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt != NULL && (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		out_write(w, o, val);
}

/*
 * sed can write files (w, W, s///w) and run commands (e, s///e); refuse
 * scripts that might, unless --sandbox.  Deliberately crude: any 'e', 'w'
 * or 'W' that is not inside an s/// pattern or replacement or a y/// list
 * counts, which refuses a few harmless scripts (`/e/d`) rather than miss
 * a harmful one.
 */
static int
sed_script_risky(const char *s)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		char c = s[i];

		if (c == 's' || c == 'y') {
			char d;
			int k;

			if (i + 1 >= n)
				return 1;
			d = s[i + 1];
			if (d == '\\' || d == '\n')
				return 1;
			i += 2;
			for (k = 0; k < 2; k++) {
				while (i < n && s[i] != d) {
					if (s[i] == '\\')
						i++;
					i++;
				}
				if (i >= n)
					return 1;
				i++;
			}
			if (c == 's')
				while (i < n && strchr("gpiImM0123456789", s[i]))
					i++;
			continue;
		}
		if (c == '/' || c == '\\') {	/* address regex */
			char d = c == '/' ? '/' : (i + 1 < n ? s[++i] : '/');

			i++;
			while (i < n && s[i] != d) {
				if (s[i] == '\\')
					i++;
				i++;
			}
			i++;
			continue;
		}
		if (c == 'e' || c == 'w' || c == 'W')
			return 1;
		if (c == 'r' || c == 'R') {	/* reads a file named to end of line */
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == 'a' || c == 'i' || c == 'c') {	/* text to end of line */
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == 'b' || c == 't' || c == 'T' || c == ':') {
			while (i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}')
				i++;
			continue;
		}
		i++;
	}
	return 0;
}

static const char *const sort_long[] = {
	"--output", "--key", "--field-separator", "--buffer-size",
	"--temporary-directory", "--parallel", "--batch-size", "--files0-from",
	"--random-source", "--compress-program", "--sort", NULL
};
static const char *const cp_long[] = {
	"--target-directory", "--suffix", "--backup", "--reflink", "--sparse",
	"--preserve", "--no-preserve", "--context", "--mode", "--owner", "--group",
	"--strip-program", NULL
};
static const char *const sed_long[] = {
	"--expression", "--file", "--line-length", NULL
};
static const char *const sed_flags[] = { "--in-place", NULL };
static const char *const cp_flags[] = {
	"--no-target-directory", "--symbolic-link", "--link", "--recursive",
	"--archive", NULL
};
static const char *const touch_long[] = { "--date", "--reference", "--time", NULL };
static const char *const tee_long[] = { NULL };
static const char *const time_long[] = { "--format", "--output", NULL };

/*
 * Programs whose arguments name files they write.  Returns 1 when the
 * program is one of them (checks done), 0 otherwise.
 */
static int
check_outputs(struct ag_walker *w, const char *base, struct ag_arg *a, size_t na,
    const char *gitc, int flags)
{
	struct outctx o;
	struct optspec sp = { NULL, NULL, NULL };
	size_t i;
	char ex[80];
	enum { K_NONE, K_FILES, K_SORT, K_CPMV, K_SED, K_TIME, K_DD, K_GIT } k = K_NONE;

	if (strchr("tmrscdigul", base[0]) == NULL)
		return 0;	/* none of the names below */

	if (strcmp(base, "tee") == 0 || strcmp(base, "touch") == 0 ||
	    strcmp(base, "mkdir") == 0 || strcmp(base, "rm") == 0 ||
	    strcmp(base, "rmdir") == 0 || strcmp(base, "truncate") == 0 ||
	    strcmp(base, "shred") == 0 || strcmp(base, "unlink") == 0) {
		k = K_FILES;
		if (strcmp(base, "touch") == 0) {
			sp.short_val = "drt";
			sp.long_val = touch_long;
		} else if (strcmp(base, "mkdir") == 0)
			sp.short_val = "m";
		else if (strcmp(base, "truncate") == 0)
			sp.short_val = "sr";
		else if (strcmp(base, "shred") == 0)
			sp.short_val = "nsx";
		else
			sp.long_val = tee_long;
	} else if (strcmp(base, "sort") == 0) {
		k = K_SORT;
		sp.short_val = "okStT";
		sp.long_val = sort_long;
	} else if (strcmp(base, "cp") == 0 || strcmp(base, "mv") == 0 ||
	    strcmp(base, "install") == 0 || strcmp(base, "ln") == 0) {
		k = K_CPMV;
		sp.short_val = strcmp(base, "install") == 0 ? "tSmogZ" : "tSZ";
		sp.long_val = cp_long;
		sp.long_flag = cp_flags;
	} else if (strcmp(base, "sed") == 0) {
		k = K_SED;
		sp.short_val = "efl";
		sp.long_val = sed_long;
		sp.long_flag = sed_flags;
	} else if (strcmp(base, "time") == 0) {
		k = K_TIME;
		sp.short_val = "fo";
		sp.long_val = time_long;
	} else if (strcmp(base, "dd") == 0) {
		k = K_DD;
	} else if (strcmp(base, "git") == 0) {
		k = K_GIT;
	}
	if (k == K_NONE)
		return 0;
	if (k != K_TIME && k != K_GIT) {
		if (flags & AG_CF_UNKNOWN_TAIL) {
			ag_walk_refuse(w, AG_DENY, "path:write",
			    "'%s' would get file names from xargs or find that the gateway cannot check",
			    base);
			return 1;
		}
		if (ag_walk_has_nonlit(a, na)) {
			for (i = 1; i < na && a[i].lit; i++)
				;
			ag_walk_refuse(w, AG_DENY, "path:literal",
			    "'%s' writes the files named in its arguments, so they must be literal; '%s' is not",
			    base, ag_walk_excerpt(a[i].w->raw, ex, sizeof(ex)));
			return 1;
		}
	}
	memset(&o, 0, sizeof(o));
	o.prog = base;
	switch (k) {
	case K_FILES:
		parse_opts(w, a, na, 1, &sp, opt_files, &o);
		for (i = 0; i < o.nops; i++)
			out_write(w, &o, o.ops[i]);
		break;
	case K_SORT:
		parse_opts(w, a, na, 1, &sp, opt_sort, &o);
		break;
	case K_CPMV: {
		const char *dest;
		size_t nsrc;

		if (strcmp(base, "mv") == 0)
			o.tree = 1;
		parse_opts(w, a, na, 1, &sp, opt_cpmv, &o);
		if (o.target_dir) {
			dest = o.target_dir;
			nsrc = o.nops;
		} else if (o.nops >= 1) {
			dest = o.ops[o.nops - 1];
			nsrc = o.nops - 1;
		} else
			break;
		out_write(w, &o, dest);
		/* into a directory: each source lands at DIR/basename */
		if (!o.no_target_dir) {
			for (i = 0; i < nsrc; i++) {
				char p[PATH_MAX];
				const char *bn = ag_walk_base_name(o.ops[i]);
				int r;

				if (*bn == '\0')
					continue;
				r = snprintf(p, sizeof(p), "%s/%s", dest, bn);
				if (r > 0 && (size_t)r < sizeof(p))
					out_write(w, &o, p);
			}
		}
		/* mv removes its sources; a link made now is written through
		 * later in the same line before the gateway could see it, so a
		 * link's target must be writable too */
		if (strcmp(base, "mv") == 0 || strcmp(base, "ln") == 0 ||
		    (strcmp(base, "cp") == 0 && o.links))
			for (i = 0; i < nsrc; i++)
				out_write(w, &o, o.ops[i]);
		break;
	}
	case K_SED: {
		size_t first = 0;
		int risky = o.bad;

		parse_opts(w, a, na, 1, &sp, opt_sed, &o);
		if (o.script_file && !o.sandbox) {
			ag_walk_refuse(w, AG_DENY, "program:sed",
			    "'sed -f FILE' runs a script the gateway cannot see; use -e or add --sandbox");
			break;
		}
		if (o.nscripts == 0 && !o.script_file) {
			if (o.nops == 0)
				break;
			risky |= sed_script_risky(o.ops[0]);
			first = 1;	/* the first operand is the script */
		}
		for (i = 0; i < o.nscripts; i++)
			risky |= sed_script_risky(o.scripts[i]);
		if (risky && !o.sandbox) {
			ag_walk_refuse(w, AG_DENY, "program:sed",
			    "this sed script may run commands or write files (e, w, W); add --sandbox if it does not");
			break;
		}
		if (o.in_place)
			for (i = first; i < o.nops; i++)
				out_write(w, &o, o.ops[i]);
		break;
	}
	case K_TIME:
		parse_opts(w, a, na, 1, &sp, opt_time, &o);
		free(o.ops);
		return 0;	/* time is also a wrapper: the caller unwraps it */
	case K_DD:
		for (i = 1; i < na; i++) {
			if (strncmp(a[i].lit, "of=", 3) == 0)
				out_write(w, &o, a[i].lit + 3);
			else if (strncmp(a[i].lit, "if=", 3) == 0)
				ag_walk_check_path(w, a[i].lit + 3, AG_ACC_READ, NULL);
		}
		break;
	case K_GIT:
		o.base = gitc;
		if (flags & AG_CF_UNKNOWN_TAIL) {
			ag_walk_refuse(w, AG_DENY, "program:git",
			    "git would get arguments from xargs or find that the gateway cannot check");
			break;
		}
		{
			size_t bi = 0;

			if (nonlit_in_option_position(a, na, git_valopts, &bi)) {
				ag_walk_refuse(w, AG_DENY, "program:git",
				    "'%s' could be a git option that writes a file or runs a program; write it literally (or after --)",
				    ag_walk_excerpt(a[bi].w->raw, ex, sizeof(ex)));
				break;
			}
		}
		for (i = 1; i < na; i++) {
			static const char *const git_out[] = {
				"--output", "--output-directory", NULL
			};
			static const char *const git_run[] = {
				"--upload-pack", "--receive-pack", "--exec",
				"--open-files-in-pager", "--ext-diff", NULL
			};
			const char *s = a[i].lit, *eq, *c;
			size_t nl;

			if (s == NULL || strcmp(s, "--") == 0)
				break;		/* pathspecs follow */
			if (strcmp(s, "-O") == 0 || (s[0] == '-' && s[1] == 'O')) {
				ag_walk_refuse(w, AG_DENY, "program:git",
				    "'git ... %s' makes git run another program", ag_walk_excerpt(s, ex, sizeof(ex)));
				break;
			}
			if (strcmp(s, "-o") == 0 && i + 1 < na && a[i + 1].lit != NULL) {
				out_write(w, &o, a[i + 1].lit);
				continue;
			}
			if (s[0] != '-' || s[1] != '-')
				continue;
			eq = strchr(s, '=');
			nl = eq ? (size_t)(eq - s) : strlen(s);
			if ((c = canon_long(s, nl, git_run, NULL)) != NULL && nl >= 4) {
				ag_walk_refuse(w, AG_DENY, "program:git",
				    "'git ... %s' makes git run another program", ag_walk_excerpt(s, ex, sizeof(ex)));
				break;
			}
			if (canon_long(s, nl, git_out, NULL) != NULL && nl >= 5) {
				if (eq != NULL)
					out_write(w, &o, eq + 1);
				else if (i + 1 < na && a[i + 1].lit != NULL)
					out_write(w, &o, a[i + 1].lit);
			}
		}
		free(o.ops);
		return 0;	/* git has its own rule checks too */
	case K_NONE:
		break;
	}
	free(o.ops);
	return 1;
}

/* Skip wrapper options; returns index of the inner command (na: none), or
 * (size_t)-1 after refusing. */
static size_t
wrapper_inner(struct ag_walker *w, const char *base, struct ag_arg *a, size_t na, int *flags,
    char *replstr, size_t replsz)
{
	/*
	 * Wrappers whose own options are flags, except those listed, which
	 * take the next word as their value; "--" or the first word that is
	 * not an option starts the inner command.
	 */
	static const struct {
		const char		*name;
		const char *const	 valued[4];
	} flag_wrappers[] = {
		{ "nohup", { NULL } },
		{ "setsid", { NULL } },
		{ "unbuffer", { NULL } },
		{ "stdbuf", { "-i", "-o", "-e", NULL } },
		{ "time", { "-f", "-o", NULL } },
	};
	size_t i = 1, fw;
	char ex[80];

	/* a non-literal before the inner command might be an option or the
	 * command itself: NEED_LIT refuses it */
	replstr[0] = '\0';
#define NEED_LIT(j) do { if ((j) >= na || a[j].lit == NULL) { \
	ag_walk_refuse(w, AG_DENY, "wrapper:literal", \
	    "the arguments of '%s' before the command it runs must be literal words", base); \
	return (size_t)-1; } } while (0)

	if (strcmp(base, "env") == 0) {
		for (; i < na; i++) {
			const char *s;
			const char *eq;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0) {
				i++;
				break;
			}
			if (strcmp(s, "-i") == 0 || strcmp(s, "-") == 0 ||
			    strcmp(s, "--ignore-environment") == 0 || strcmp(s, "-0") == 0 ||
			    strcmp(s, "--null") == 0 || strcmp(s, "-v") == 0 ||
			    strcmp(s, "--debug") == 0)
				continue;
			if (strcmp(s, "-u") == 0 || strcmp(s, "--unset") == 0) {
				NEED_LIT(i + 1);
				if (!ag_walk_var_name(w, a[i + 1].lit, "unsetting"))
					return (size_t)-1;
				i++;
				continue;
			}
			if (strncmp(s, "--unset=", 8) == 0 || (strncmp(s, "-u", 2) == 0 && s[2])) {
				if (!ag_walk_var_name(w, s[1] == '-' ? s + 8 : s + 2, "unsetting"))
					return (size_t)-1;
				continue;
			}
			if (strncmp(s, "--ignore-signal", 15) == 0 ||
			    strncmp(s, "--default-signal", 16) == 0 ||
			    strncmp(s, "--block-signal", 14) == 0 ||
			    strcmp(s, "--list-signal-handling") == 0)
				continue;
			if (s[0] == '-') {
				/* -S/--split-string builds a command line from one
				 * string; -C/--chdir moves the command elsewhere */
				ag_walk_refuse(w, AG_DENY, "wrapper:env",
				    "'env %s' is not allowed: the gateway cannot see the command it would run",
				    ag_walk_excerpt(s, ex, sizeof(ex)));
				return (size_t)-1;
			}
			eq = strchr(s, '=');
			if (eq != NULL) {
				char nm[256];
				size_t nl = (size_t)(eq - s);

				if (nl == 0 || nl >= sizeof(nm)) {
					ag_walk_refuse(w, AG_DENY, "wrapper:env", "bad variable name in env");
					return (size_t)-1;
				}
				memcpy(nm, s, nl);
				nm[nl] = '\0';
				if (!ag_walk_var_name(w, nm, "setting"))
					return (size_t)-1;
				continue;
			}
			break;
		}
		return i;
	}
	if (strcmp(base, "nice") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-n") == 0 || strcmp(a[i].lit, "--adjustment") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] == '-')
				continue;	/* -5, -n5, --adjustment=5 */
			break;
		}
		return i;
	}
	for (fw = 0; fw < sizeof(flag_wrappers) / sizeof(flag_wrappers[0]); fw++) {
		const char *const *v;

		if (strcmp(base, flag_wrappers[fw].name) != 0)
			continue;
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] != '-')
				break;
			for (v = flag_wrappers[fw].valued; *v != NULL; v++)
				if (strcmp(a[i].lit, *v) == 0) {
					i++;	/* the option's value */
					break;
				}
		}
		return i;
	}
	if (strcmp(base, "timeout") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-s") == 0 || strcmp(a[i].lit, "-k") == 0 ||
			    strcmp(a[i].lit, "--signal") == 0 ||
			    strcmp(a[i].lit, "--kill-after") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0) {
				i++;
				break;
			}
			if (a[i].lit[0] != '-')
				break;
		}
		return i + 1;	/* the duration */
	}
	if (strcmp(base, "xargs") == 0) {
		*flags |= AG_CF_UNKNOWN_TAIL;
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			if (strncmp(s, "--p", 3) == 0) {	/* --process-slot-var, abbreviated or not */
				ag_walk_refuse(w, AG_DENY, "wrapper:xargs",
				    "'xargs --process-slot-var' sets a variable in the command's environment");
				return (size_t)-1;
			}
			if (strcmp(s, "-I") == 0 || strcmp(s, "--replace") == 0) {
				NEED_LIT(i + 1);
				snprintf(replstr, replsz, "%s", a[i + 1].lit);
				i++;
				continue;
			}
			if (strncmp(s, "--replace=", 10) == 0) {
				snprintf(replstr, replsz, "%s", s + 10);
				continue;
			}
			if (strncmp(s, "-I", 2) == 0 || strncmp(s, "-i", 2) == 0) {
				snprintf(replstr, replsz, "%s", s[2] ? s + 2 : "{}");
				continue;
			}
			if (strchr("adEeLlnPs", s[1]) != NULL && s[2] == '\0' &&
			    s[1] != 'e' && s[1] != 'l') {
				if (s[1] == 'a') {
					NEED_LIT(i + 1);
					ag_walk_check_path(w, a[i + 1].lit, AG_ACC_READ, NULL);
				}
				i++;
				continue;
			}
			if (strncmp(s, "--arg-file=", 11) == 0)
				ag_walk_check_path(w, s + 11, AG_ACC_READ, NULL);
		}
		return i;
	}
	if (strcmp(base, "sudo") == 0 || strcmp(base, "doas") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			/* long options only from a short list: getopt would take
			 * "--sh" for --shell */
			if (s[1] == '-' && strncmp(s, "--user=", 7) != 0 &&
			    strncmp(s, "--group=", 8) != 0 &&
			    strcmp(s, "--non-interactive") != 0 &&
			    strcmp(s, "--set-home") != 0) {
				ag_walk_refuse(w, AG_DENY, "wrapper:sudo",
				    "'%s %s' is not an option the gateway understands; use the short form",
				    base, ag_walk_excerpt(s, ex, sizeof(ex)));
				return (size_t)-1;
			}
			if ((s[1] != '-' && strpbrk(s + 1, "sieE") != NULL) ||
			    strcmp(s, "--shell") == 0 ||
			    strcmp(s, "--login") == 0 || strcmp(s, "--edit") == 0 ||
			    strncmp(s, "--preserve-env", 14) == 0 || strcmp(s, "-E") == 0) {
				ag_walk_refuse(w, AG_DENY, "wrapper:sudo",
				    "'%s %s' starts a shell, an editor or keeps the environment; name the command instead",
				    base, s);
				return (size_t)-1;
			}
			/* the last letter of a cluster may take the next word */
			if (s[1] != '-' && strchr("ugCDhprtTUc", s[strlen(s) - 1]) != NULL)
				i++;
		}
		return i;
	}
	if (strcmp(base, "flock") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "-c") == 0 || strcmp(s, "--command") == 0) {
				ag_walk_refuse(w, AG_DENY, "wrapper:flock",
				    "'flock -c' runs a shell command string; give the command as words");
				return (size_t)-1;
			}
			if (strcmp(s, "-w") == 0 || strcmp(s, "-E") == 0 ||
			    strcmp(s, "--timeout") == 0 || strcmp(s, "--conflict-exit-code") == 0) {
				i++;
				continue;
			}
			if (s[0] != '-')
				break;
		}
		return i + 1;	/* the lock file */
	}
	if (strcmp(base, "watch") == 0) {
		size_t k;

		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-n") == 0 || strcmp(a[i].lit, "--interval") == 0 ||
			    strcmp(a[i].lit, "-q") == 0) {
				i++;
				continue;
			}
			if (a[i].lit[0] != '-')
				break;
		}
		/* without -x watch hands the words to sh -c */
		for (k = i; k < na; k++)
			if (a[k].lit == NULL || strpbrk(a[k].lit, ";&|<>()$`\\\"'*?[]{}~#\n!") != NULL) {
				ag_walk_refuse(w, AG_DENY, "wrapper:watch",
				    "watch runs its arguments through sh -c; shell syntax in them cannot be checked");
				return (size_t)-1;
			}
		return i;
	}
	if (strcmp(base, "strace") == 0 || strcmp(base, "ltrace") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			if (strcmp(s, "-p") == 0 || strncmp(s, "-p", 2) == 0 ||
			    strcmp(s, "-E") == 0 || strncmp(s, "-E", 2) == 0) {
				ag_walk_refuse(w, AG_DENY, "wrapper:trace",
				    "'%s %s' attaches to another process or changes its environment", base, s);
				return (size_t)-1;
			}
			if (strcmp(s, "-o") == 0) {
				NEED_LIT(i + 1);
				ag_walk_check_path(w, a[i + 1].lit, AG_ACC_WRITE, NULL);
				i++;
				continue;
			}
			if (s[2] == '\0' && strchr("abeIPsSuXAn", s[1]) != NULL)
				i++;
		}
		return i;
	}
	if (strcmp(base, "busybox") == 0) {
		*flags |= AG_CF_NAME_ONLY;
		return i;
	}
	if (strcmp(base, "exec") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-a") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] != '-')
				break;
		}
		return i;
	}
	if (is_loader(base)) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "--argv0") == 0) {
				i++;
				continue;
			}
			if (a[i].lit[0] == '-') {
				ag_walk_refuse(w, AG_DENY, "wrapper:ld.so",
				    "'%s %s' changes what the loader loads", base, a[i].lit);
				return (size_t)-1;
			}
			break;
		}
		/* the loader takes a file, not a name to look up */
		if (i < na && strchr(a[i].lit, '/') == NULL) {
			ag_walk_refuse(w, AG_DENY, "wrapper:ld.so",
			    "the loader's program must be given as a path");
			return (size_t)-1;
		}
		return i;
	}
	/* chroot, su, script, parallel, gdb, ...: no feasible unwrapping */
	return (size_t)-2;
#undef NEED_LIT
}

void
ag_walk_inner(struct ag_walker *w, const char *base, struct ag_arg *a, size_t na, int flags)
{
	char repl[64];
	size_t k, i;
	int f = flags | AG_CF_PROG_ONLY;

	if (w->wrap >= MAX_WRAP) {
		ag_walk_refuse(w, AG_DENY, "wrapper", "too many nested wrappers");
		return;
	}
	k = wrapper_inner(w, base, a, na, &f, repl, sizeof(repl));
	if (k == (size_t)-1)
		return;
	if (k == (size_t)-2)
		return;		/* allowed by name, nothing to unwrap */
	if (k >= na) {
		if ((f & AG_CF_UNKNOWN_TAIL) && strcmp(base, "xargs") == 0) {
			/* xargs alone runs the program echo (not the builtin): it
			 * must be allowed like any other, or the kernel would stop
			 * it after the gateway said yes */
			char echo[] = "echo", real[PATH_MAX];
			struct ag_arg e = { a[0].w, echo };

			for (i = 0; i < w->prof->nallow; i++)
				if (ag_walk_rule_matches(w, &w->prof->allow[i], echo,
				    ag_walk_lookup(w->pathenv, echo, real, sizeof(real)) == 0 ? real : NULL, 0))
					break;
			if (i == w->prof->nallow) {
				/* the developer tier's kernel lets echo run; a deny
				 * rule still holds */
				if (w->prof->tier == AG_TIER_DEVELOPER)
					(void)ag_walk_deny_hit(w, echo, &e, 1, f);
				else
					ag_walk_refuse(w, AG_DENY, "wrapper:xargs",
					    "'xargs' without a command runs the program echo, which profile '%s' does not allow; name the command xargs should run",
					    w->prof->name ? w->prof->name : "?");
				return;
			}
			w->wrap++;
			ag_walk_command(w, &e, 1, f);
			w->wrap--;
			return;
		}
		if (f & AG_CF_UNKNOWN_TAIL)
			ag_walk_refuse(w, AG_DENY, "wrapper",
			    "'%s' would run a command taken from its input, which the gateway cannot see",
			    base);
		return;		/* wrapper without a command: prints or exits */
	}
	if (repl[0] != '\0') {
		/* xargs -I: words holding the replacement string come from input */
		struct ag_arg *c = calloc(na - k, sizeof(*c));

		if (c == NULL) {
			w->oom = 1;
			return;
		}
		for (i = k; i < na; i++) {
			c[i - k] = a[i];
			if (a[i].lit != NULL && strstr(a[i].lit, repl) != NULL)
				c[i - k].lit = NULL;
		}
		w->wrap++;
		ag_walk_command(w, c, na - k, f);
		w->wrap--;
		free(c);
		return;
	}
	w->wrap++;
	ag_walk_command(w, a + k, na - k, f);
	w->wrap--;
}

/* find -exec CMD ... ; / + : check CMD as a command of its own. */
static void
check_find(struct ag_walker *w, struct ag_arg *a, size_t na, int flags)
{
	size_t i, j;
	char ex[80];

	if (flags & AG_CF_UNKNOWN_TAIL) {
		ag_walk_refuse(w, AG_DENY, "program:find",
		    "find would get arguments from xargs that the gateway cannot check");
		return;
	}
	if (nonlit_in_option_position(a, na, find_valopts, &j)) {
		ag_walk_refuse(w, AG_DENY, "program:find",
		    "'%s' could be a find action that deletes, writes or runs something; write it literally",
		    ag_walk_excerpt(a[j].w->raw, ex, sizeof(ex)));
		return;
	}
	/* -delete removes what the search finds below the start paths */
	for (i = 1; i < na; i++)
		if (a[i].lit && strcmp(a[i].lit, "-delete") == 0)
			break;
	if (i < na) {
		size_t nstart = 0;

		/* find's own options come before the start paths */
		for (j = 1; j < na && a[j].lit; j++) {
			if (strcmp(a[j].lit, "-D") == 0)
				j++;
			else if (strcmp(a[j].lit, "-H") != 0 && strcmp(a[j].lit, "-L") != 0 &&
			    strcmp(a[j].lit, "-P") != 0 && strncmp(a[j].lit, "-O", 2) != 0)
				break;
		}
		for (; j < na; j++) {
			const char *s = a[j].lit;

			if (s == NULL) {
				ag_walk_refuse(w, AG_DENY, "path:literal",
				    "'find -delete' needs literal start paths");
				return;
			}
			if (s[0] == '-' || s[0] == '(' || s[0] == '!')
				break;
			ag_walk_check_path(w, s, AG_ACC_WRITE, NULL);
			nstart++;
		}
		if (nstart == 0)
			ag_walk_check_path(w, ".", AG_ACC_WRITE, NULL);
	}
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (strcmp(s, "-exec") == 0 || strcmp(s, "-execdir") == 0 ||
		    strcmp(s, "-ok") == 0 || strcmp(s, "-okdir") == 0) {
			struct ag_arg *inner;
			size_t ni = 0;

			for (j = i + 1; j < na; j++)
				if (a[j].lit && (strcmp(a[j].lit, ";") == 0 ||
				    strcmp(a[j].lit, "+") == 0))
					break;
			if (j == i + 1) {
				ag_walk_refuse(w, AG_DENY, "program:find", "'find %s' without a command", s);
				return;
			}
			inner = calloc(j - i - 1, sizeof(*inner));
			if (inner == NULL) {
				w->oom = 1;
				return;
			}
			for (ni = 0; ni < j - i - 1; ni++) {
				inner[ni] = a[i + 1 + ni];
				if (inner[ni].lit && strstr(inner[ni].lit, "{}") != NULL)
					inner[ni].lit = NULL;	/* a file name find fills in */
			}
			if (inner[0].lit == NULL)
				ag_walk_refuse(w, AG_DENY, "literal",
				    "the command of 'find %s' must be a literal word", s);
			else if (strcmp(s, "-execdir") == 0 || strcmp(s, "-okdir") == 0) {
				/* runs in each file's directory: relative names cannot be
				 * checked */
				if (strchr(inner[0].lit, '/') != NULL && inner[0].lit[0] != '/')
					ag_walk_refuse(w, AG_DENY, "program:find",
					    "'find %s' with a relative program path", s);
				else {
					w->wrap++;
					ag_walk_command(w, inner, ni, flags | AG_CF_PROG_ONLY);
					w->wrap--;
				}
			} else {
				w->wrap++;
				ag_walk_command(w, inner, ni, flags | AG_CF_PROG_ONLY);
				w->wrap--;
			}
			free(inner);
			i = j;
			continue;
		}
		if ((strcmp(s, "-fprint") == 0 || strcmp(s, "-fprint0") == 0 ||
		    strcmp(s, "-fls") == 0 || strcmp(s, "-fprintf") == 0)) {
			if (i + 1 >= na || a[i + 1].lit == NULL) {
				ag_walk_refuse(w, AG_DENY, "path:literal",
				    "the file of 'find %s' must be literal", ag_walk_excerpt(s, ex, sizeof(ex)));
				return;
			}
			ag_walk_check_path(w, a[i + 1].lit, AG_ACC_WRITE, NULL);
		}
	}
}

void
ag_walk_command(struct ag_walker *w, struct ag_arg *a, size_t na, int flags)
{
	const char *name = a[0].lit;
	const char *base;
	char real[PATH_MAX], ridbuf[160], ex[80];
	const char *rid = NULL;
	const struct ag_rule *r = NULL;
	size_t ridx = 0, i;
	int rc, bad = 0;

	if (name == NULL) {
		ag_walk_refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
		    ag_walk_excerpt(a[0].w ? a[0].w->raw : "", ex, sizeof(ex)));
		return;
	}
	if (name[0] == '\0') {
		ag_walk_refuse(w, AG_DENY, "literal", "an empty command name is not allowed");
		return;
	}
	base = ag_walk_base_name(name);
	if (flags & AG_CF_NAME_ONLY) {
		/* a busybox applet: judged by its name alone */
		for (i = 0; i < w->prof->nallow; i++)
			if (ag_walk_rule_matches(w, &w->prof->allow[i], name, NULL, 1))
				break;
		if (strchr(name, '/') != NULL || i == w->prof->nallow) {
			ag_walk_refuse_unknown(w, name, " (as a busybox applet)");
			return;
		}
		flags &= ~AG_CF_NAME_ONLY;
		r = &w->prof->allow[i];
		ridx = i;
		rc = 0;
		real[0] = '\0';
		goto have_rule;
	}
	if (strchr(name, '/') == NULL && !(flags & AG_CF_PROG_ONLY)) {
		if (!(flags & (AG_CF_NO_FUNCS | AG_CF_BUILTIN_ONLY)) && ag_walk_is_function(w, name) &&
		    !ag_walk_is_builtin(name) &&
		    ag_walk_lookup(w->pathenv, name, real, sizeof(real)) == -1) {
			/* its body was checked where it was defined; and if the
			 * definition did not run (an if, a subshell), the name
			 * runs nothing.  A function shadowing a builtin or a
			 * program is judged as that builtin or program. */
			ag_walk_set_path(w, w->cur, "function");
			return;
		}
		if (ag_walk_is_builtin(name)) {
			/* deny rules name builtins too */
			if (!ag_walk_deny_hit(w, name, a, na, flags))
				ag_walk_builtin(w, name, a, na, flags);
			return;
		}
	}
	if (flags & AG_CF_BUILTIN_ONLY) {
		ag_walk_refuse(w, AG_DENY, "builtin", "'%s' is not a shell builtin",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	rc = resolve_cmd(w, name, real, sizeof(real));
	if (rc == -2 && w->prof->tier == AG_TIER_DEVELOPER && strchr(name, '/') != NULL &&
	    !ag_walk_deny_hit(w, base, a, na, flags)) {
		/* developer tier only: which file ./x is cannot be told here
		 * (a cd the gateway cannot follow); the kernel lets only
		 * paths.exec and the system's programs run, and the exec
		 * supervisor applies the deny rules to whatever it is.  The
		 * deny rules by name hold here already.  The strict tier
		 * refuses below. */
		if (w->cur >= 0 && w->wrap == 0)
			ag_walk_set_path(w, w->cur, NULL);
		ag_walk_allow_as(w, "kernel:exec", "allowed: which file '%s' is depends on a 'cd' the "
		    "gateway cannot follow; the kernel sandbox decides", ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (rc == -2) {
		ag_walk_refuse(w, AG_DENY, "path",
		    strchr(name, '/') ? "cannot tell which file '%s' is after a 'cd' in the same line"
		    : "PATH has a relative or empty entry, so '%s' cannot be resolved safely",
		    ag_walk_excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (w->cur >= 0 && w->wrap == 0)
		ag_walk_set_path(w, w->cur, rc == 0 ? real : NULL);

	/* deny rules first: matched by name, which also covers other files
	 * with the same name */
	if (ag_walk_deny_hit(w, base, a, na, flags))
		return;

	for (i = 0; i < w->prof->nallow; i++)
		if (ag_walk_rule_matches(w, &w->prof->allow[i], name, rc == 0 ? real : NULL, 0)) {
			r = &w->prof->allow[i];
			ridx = i;
			break;
		}
	if (r == NULL && rc == 0 && strchr(name, '/') != NULL &&
	    w->prof->tier == AG_TIER_DEVELOPER && ag_walk_inside_list(w, &w->prof->paths_exec, real)) {
		char rid2[256];

		snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
		    w->prof->name ? w->prof->name : "?");
		ag_walk_allow_as(w, rid2, "allowed: '%s' lies beneath paths.exec", ag_walk_excerpt(real, ex, sizeof(ex)));
		return;
	}
	if (r == NULL) {
		if (rc == 0 && ag_walk_in_list(safe_wrappers, base)) {
			if (strcmp(base, "time") == 0)
				check_outputs(w, base, a, na, NULL, flags);
			ag_walk_inner(w, base, a, na, flags);
			return;
		}
		if (ag_walk_in_list(risky_wrappers, base) || is_loader(base)) {
			char rule[64];

			snprintf(rule, sizeof(rule), "wrapper:%s", base);
			ag_walk_refuse(w, AG_DENY, rule,
			    "'%s' runs other programs with other rights or outside the gateway's view; not allowed in profile '%s'",
			    base, w->prof->name ? w->prof->name : "?");
			return;
		}
		if (rc != 0 && strchr(name, '/') != NULL && w->prof->tier == AG_TIER_DEVELOPER &&
		    exec_target_ok(w, name)) {
			/* built earlier in the same line (`cc -o t t.c && ./t`):
			 * the kernel and the exec supervisor judge it when it runs */
			char rid2[256];

			snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
			    w->prof->name ? w->prof->name : "?");
			ag_walk_allow_as(w, rid2, "allowed: '%s' will lie beneath paths.exec",
			    ag_walk_excerpt(name, ex, sizeof(ex)));
		} else if (rc != 0)
			ag_walk_refuse_unknown(w, name, strchr(name, '/') ? " (no such program)"
			    : " (and not found in PATH)");
		else if (strchr(name, '/') != NULL && w->prof->nallow > 0) {
			/* a path that looks like an allowed name but is another file */
			int same_name = 0;

			for (i = 0; i < w->prof->nallow; i++)
				if (w->prof->allow[i].command &&
				    strcmp(ag_walk_base_name(w->prof->allow[i].command), base) == 0)
					same_name = 1;
			if (same_name)
				ag_walk_refuse(w, AG_DENY, "path",
				    "'%s' is not the '%s' the profile allows (a different file with the same name)",
				    ag_walk_excerpt(name, ex, sizeof(ex)), base);
			else
				ag_walk_refuse_unknown(w, name, NULL);
		} else
			ag_walk_refuse_unknown(w, name, NULL);
		return;
	}
have_rule:
	rid = ag_walk_rule_id(w, r, 0, ridx, ridbuf, sizeof(ridbuf));
	if (!ag_walk_rule_args_ok(w, r, rid, base, a, na, flags))
		return;
	{
		const char *cdir = NULL;

		if (r->subcommands.n > 0 || ag_walk_tool_opts(base) != NULL) {
			size_t si = ag_walk_subcommand(w, r, rid, base, a, na, &cdir, &bad);

			if (bad)
				return;
			if (r->subcommands.n > 0 && si < na &&
			    (a[si].lit == NULL || !ag_strlist_contains(&r->subcommands, a[si].lit))) {
				char sl[400];

				ag_walk_list_text(&r->subcommands, sl, sizeof(sl));
				ag_walk_refuse(w, AG_DENY, rid,
				    "'%s %s' is not allowed in profile '%s'; allowed here: %s (%s)",
				    base, ag_walk_excerpt(a[si].lit ? a[si].lit : a[si].w->raw, ex, sizeof(ex)),
				    w->prof->name ? w->prof->name : "?", base, sl);
				return;
			}
		}
		check_outputs(w, base, a, na, cdir, flags);
	}
	/* say which rule let it through (kept if something refuses later) */
	if (w->cur >= 0 && w->cmds[w->cur].rule == NULL &&
	    (w->cmds[w->cur].rule = strdup(rid)) == NULL)
		w->oom = 1;
	if (strcmp(base, "find") == 0)
		check_find(w, a, na, flags);
	if (ag_walk_in_list(safe_wrappers, base) || ag_walk_in_list(risky_wrappers, base) || is_loader(base))
		ag_walk_inner(w, base, a, na, flags);
}
