/*
 * sed.c - sed writes the files it edits in place (-i), and its scripts can
 * write files (w, W, s///w) and run commands (e, s///e): such scripts are
 * refused unless --sandbox, which makes sed itself refuse those commands.
 * A script in a file (-f) cannot be seen, so it needs --sandbox too.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <string.h>

#include "policy/prog.h"
#include "policy/walker.h"

struct sedargs {
	struct ag_operands	 ops;
	int			 in_place;	/* -i */
	int			 sandbox;	/* --sandbox */
	int			 script_file;	/* -f given */
	const char		*scripts[16];	/* -e SCRIPT */
	size_t			 nscripts;
	int			 bad;		/* more -e than scripts[] holds */
};

static void
sed_opt(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	struct sedargs *o = ud;

	if (opt == NULL) {
		ag_prog_operand(w, &o->ops, val);
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

/*
 * 1 when the script might write a file or run a command.  Deliberately
 * crude: any 'e', 'w' or 'W' that is not inside an s/// pattern or
 * replacement or a y/// list counts, which refuses a few harmless scripts
 * (`/e/d`) rather than miss a harmful one.
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

static void
check_sed(struct ag_walker *w, const struct ag_progcall *c)
{
	struct sedargs o;
	size_t i, first = 0;
	int risky;

	memset(&o, 0, sizeof(o));
	ag_prog_parse_opts(w, c->a, c->na, 1, &c->prog->opts, sed_opt, &o);
	/* scripts beyond the ones kept (or not literal) were not scanned */
	risky = o.bad;
	if (o.script_file && !o.sandbox) {
		ag_walk_refuse(w, AG_DENY, "program:sed",
		    "'sed -f FILE' runs a script the gateway cannot see; use -e or add --sandbox");
		goto out;
	}
	if (o.nscripts == 0 && !o.script_file) {
		if (o.ops.n == 0)
			goto out;
		risky |= sed_script_risky(o.ops.v[0]);
		first = 1;	/* the first operand is the script */
	}
	for (i = 0; i < o.nscripts; i++)
		risky |= sed_script_risky(o.scripts[i]);
	if (risky && !o.sandbox) {
		ag_walk_refuse(w, AG_DENY, "program:sed",
		    "this sed script may run commands or write files (e, w, W); add --sandbox if it does not");
		goto out;
	}
	if (o.in_place)
		for (i = first; i < o.ops.n; i++)
			ag_walk_write(w, NULL, o.ops.v[i], 0);
out:
	free(o.ops.v);
}

static const char *const sed_names[] = { "sed", NULL };
static const char *const sed_long[] = { "--expression", "--file", "--line-length", NULL };
static const char *const sed_flags[] = { "--in-place", NULL };
const struct ag_prog ag_prog_sed = {
	.names = sed_names, .flags = AG_PROG_WRITES_OPERANDS, .check = check_sed,
	.opts = { "efl", sed_long, sed_flags },
};
