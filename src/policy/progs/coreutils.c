/*
 * coreutils.c - programs whose operands name the files they write, checked
 * like redirections: tee, touch, mkdir, rm, rmdir, truncate, shred and
 * unlink write each operand; sort -o F; cp, mv, install and ln their
 * destination (and what lands inside it), mv its sources, ln and cp -s/-l
 * the files their links lead to; dd of=F (and reads if=F).
 *
 * AG_PROG_WRITES_OPERANDS makes command.c refuse them first when an operand
 * is not literal or xargs/find would add some.
 */
#include "agconfig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/misc.h"
#include "policy/prog.h"
#include "policy/walker.h"

/* ---- programs that write every operand ---------------------------------- */

static void
files_opt(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	if (opt == NULL)
		ag_prog_operand(w, ud, val);
}

static void
check_files(struct ag_walker *w, const struct ag_progcall *c)
{
	struct ag_operands ops = { NULL, 0 };
	size_t i;

	ag_prog_parse_opts(w, c->a, c->na, 1, &c->prog->opts, files_opt, &ops);
	for (i = 0; i < ops.n; i++)
		ag_walk_write(w, NULL, ops.v[i], 0);
	free(ops.v);
}

#define WRITES_EACH	.flags = AG_PROG_WRITES_OPERANDS, .check = check_files

static const char *const tee_names[] = { "tee", NULL };
const struct ag_prog ag_prog_tee = { .names = tee_names, WRITES_EACH };

static const char *const touch_names[] = { "touch", NULL };
static const char *const touch_long[] = { "--date", "--reference", "--time", NULL };
const struct ag_prog ag_prog_touch = {
	.names = touch_names, WRITES_EACH, .opts = { "drt", touch_long, NULL },
};

static const char *const mkdir_names[] = { "mkdir", NULL };
const struct ag_prog ag_prog_mkdir = {
	.names = mkdir_names, WRITES_EACH, .opts = { "m", NULL, NULL },
};

static const char *const rm_names[] = { "rm", NULL };
const struct ag_prog ag_prog_rm = { .names = rm_names, WRITES_EACH };

static const char *const rmdir_names[] = { "rmdir", NULL };
const struct ag_prog ag_prog_rmdir = { .names = rmdir_names, WRITES_EACH };

static const char *const truncate_names[] = { "truncate", NULL };
const struct ag_prog ag_prog_truncate = {
	.names = truncate_names, WRITES_EACH, .opts = { "sr", NULL, NULL },
};

static const char *const shred_names[] = { "shred", NULL };
const struct ag_prog ag_prog_shred = {
	.names = shred_names, WRITES_EACH, .opts = { "nsx", NULL, NULL },
};

static const char *const unlink_names[] = { "unlink", NULL };
const struct ag_prog ag_prog_unlink = { .names = unlink_names, WRITES_EACH };

/* ---- sort --------------------------------------------------------------- */

static void
sort_opt(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	if (opt == NULL)
		return;
	if ((strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		ag_walk_write(w, NULL, val, 0);
	if (strcmp(opt, "--compress-program") == 0)
		ag_walk_refuse(w, AG_DENY, "program:sort",
		    "'sort --compress-program' runs another program");
}

static void
check_sort(struct ag_walker *w, const struct ag_progcall *c)
{
	ag_prog_parse_opts(w, c->a, c->na, 1, &c->prog->opts, sort_opt, NULL);
}

static const char *const sort_names[] = { "sort", NULL };
static const char *const sort_long[] = {
	"--output", "--key", "--field-separator", "--buffer-size",
	"--temporary-directory", "--parallel", "--batch-size", "--files0-from",
	"--random-source", "--compress-program", "--sort", NULL
};
const struct ag_prog ag_prog_sort = {
	.names = sort_names, .flags = AG_PROG_WRITES_OPERANDS, .check = check_sort,
	.opts = { "okStT", sort_long, NULL },
};

/* ---- cp, mv, install, ln ------------------------------------------------ */

struct cpmv {
	struct ag_operands	 ops;
	const char		*target_dir;	/* -t DIR */
	int			 no_target_dir;	/* -T */
	int			 links;		/* ln, cp -s/-l: the sources become links */
	int			 tree;		/* mv, cp -r: directories move or copy */
};

static void
cpmv_opt(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct cpmv *o = ud;

	if (opt == NULL) {
		ag_prog_operand(w, &o->ops, val);
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
check_cpmv(struct ag_walker *w, const struct ag_progcall *c)
{
	struct cpmv o;
	const char *dest;
	size_t i, nsrc;

	memset(&o, 0, sizeof(o));
	if (c->prog == &ag_prog_mv)
		o.tree = 1;
	ag_prog_parse_opts(w, c->a, c->na, 1, &c->prog->opts, cpmv_opt, &o);
	if (o.target_dir) {
		dest = o.target_dir;
		nsrc = o.ops.n;
	} else if (o.ops.n >= 1) {
		dest = o.ops.v[o.ops.n - 1];
		nsrc = o.ops.n - 1;
	} else
		goto out;
	ag_walk_write(w, NULL, dest, o.tree);
	/* into a directory: each source lands at DIR/basename */
	if (!o.no_target_dir) {
		for (i = 0; i < nsrc; i++) {
			char p[PATH_MAX];
			const char *bn = ag_base_name(o.ops.v[i]);
			int r;

			if (*bn == '\0')
				continue;
			r = snprintf(p, sizeof(p), "%s/%s", dest, bn);
			if (r > 0 && (size_t)r < sizeof(p))
				ag_walk_write(w, NULL, p, o.tree);
		}
	}
	/* mv removes its sources; a link made now is written through later
	 * in the same line before the gateway could see it, so a link's
	 * target must be writable too -- unless the kernel holds every
	 * write of the line (walker.h, ag_walk_exec_judged): then
	 * `ln -s /usr/bin/python3 ~/work/bin/py` writes only the link */
	if (c->prog == &ag_prog_mv || (!ag_walk_exec_judged(w) &&
	    (c->prog == &ag_prog_ln || (c->prog == &ag_prog_cp && o.links))))
		for (i = 0; i < nsrc; i++)
			ag_walk_write(w, NULL, o.ops.v[i], o.tree);
out:
	free(o.ops.v);
}

static const char *const cp_long[] = {
	"--target-directory", "--suffix", "--backup", "--reflink", "--sparse",
	"--preserve", "--no-preserve", "--context", "--mode", "--owner", "--group",
	"--strip-program", NULL
};
static const char *const cp_flags[] = {
	"--no-target-directory", "--symbolic-link", "--link", "--recursive",
	"--archive", NULL
};

#define CPMV	.flags = AG_PROG_WRITES_OPERANDS, .check = check_cpmv

static const char *const cp_names[] = { "cp", NULL };
const struct ag_prog ag_prog_cp = {
	.names = cp_names, CPMV, .opts = { "tSZ", cp_long, cp_flags },
};

static const char *const mv_names[] = { "mv", NULL };
const struct ag_prog ag_prog_mv = {
	.names = mv_names, CPMV, .opts = { "tSZ", cp_long, cp_flags },
};

static const char *const ln_names[] = { "ln", NULL };
const struct ag_prog ag_prog_ln = {
	.names = ln_names, CPMV, .opts = { "tSZ", cp_long, cp_flags },
};

static const char *const install_names[] = { "install", NULL };
const struct ag_prog ag_prog_install = {
	.names = install_names, CPMV, .opts = { "tSmogZ", cp_long, cp_flags },
};

/* ---- dd ----------------------------------------------------------------- */

static void
check_dd(struct ag_walker *w, const struct ag_progcall *c)
{
	size_t i;

	for (i = 1; i < c->na; i++) {
		if (strncmp(c->a[i].lit, "of=", 3) == 0)
			ag_walk_write(w, NULL, c->a[i].lit + 3, 0);
		else if (strncmp(c->a[i].lit, "if=", 3) == 0)
			ag_walk_check_path(w, c->a[i].lit + 3, AG_ACC_READ, NULL);
	}
}

static const char *const dd_names[] = { "dd", NULL };
const struct ag_prog ag_prog_dd = {
	.names = dd_names, .flags = AG_PROG_WRITES_OPERANDS, .check = check_dd,
};
