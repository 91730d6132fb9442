/*
 * wrappers.c - programs that run another program: where in their
 * arguments the inner command starts, which of their options the gateway
 * must refuse, and which of them are unwrapped without a rule (the safe
 * ones) or refused unless a rule names them (the risky ones).  What a
 * wrapper runs is then judged as a command of its own (command.c).
 *
 * Each unwrap hook skips the wrapper's options and returns the index of
 * the inner command (na: there is none), or AG_UNWRAP_DONE after
 * refusing.  A word the gateway cannot see before the inner command
 * might be an option or the command itself, so it is refused (NEED_LIT).
 */
#include "agconfig.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "policy/prog.h"
#include "policy/walker.h"

static int
need_lit(struct ag_walker *w, const struct ag_progcall *c, size_t j)
{
	if (j < c->na && c->a[j].lit != NULL)
		return 1;
	ag_walk_refuse(w, AG_DENY, "wrapper:literal",
	    "the arguments of '%s' before the command it runs must be literal words", c->base);
	return 0;
}

#define NEED_LIT(j) do { if (!need_lit(w, c, (j))) return AG_UNWRAP_DONE; } while (0)

/*
 * The common shape of a wrapper's options, at a[*i]: 1 when it is an
 * option word (it starts with '-'); 0 when the options end there, at "--"
 * (*i moved past it) or at the first word that is not an option; -1 after
 * refusing a word the gateway cannot see.
 */
static int
next_option(struct ag_walker *w, const struct ag_progcall *c, size_t *i)
{
	const char *s;

	if (*i >= c->na)
		return 0;
	if (!need_lit(w, c, *i))
		return -1;
	s = c->a[*i].lit;
	if (strcmp(s, "--") == 0) {
		(*i)++;
		return 0;
	}
	return s[0] == '-';
}

/* ---- env ---------------------------------------------------------------- */

static size_t
unwrap_env(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, na = c->na;
	char ex[80];

	for (i = 1; i < na; i++) {
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
				return AG_UNWRAP_DONE;
			i++;
			continue;
		}
		if (strncmp(s, "--unset=", 8) == 0 || (strncmp(s, "-u", 2) == 0 && s[2])) {
			if (!ag_walk_var_name(w, s[1] == '-' ? s + 8 : s + 2, "unsetting"))
				return AG_UNWRAP_DONE;
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
			return AG_UNWRAP_DONE;
		}
		eq = strchr(s, '=');
		if (eq != NULL) {
			char nm[256];
			size_t nl = (size_t)(eq - s);

			if (nl == 0 || nl >= sizeof(nm)) {
				ag_walk_refuse(w, AG_DENY, "wrapper:env", "bad variable name in env");
				return AG_UNWRAP_DONE;
			}
			memcpy(nm, s, nl);
			nm[nl] = '\0';
			if (!ag_walk_var_name(w, nm, "setting"))
				return AG_UNWRAP_DONE;
			continue;
		}
		break;
	}
	return i;
}

static const char *const env_names[] = { "env", NULL };
const struct ag_prog ag_prog_env = {
	.names = env_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_env,
};

/* ---- nice --------------------------------------------------------------- */

static size_t
unwrap_nice(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;

	int r;

	/* -5, -n5, --adjustment=5 are one word; -n 5 two */
	for (i = 1; (r = next_option(w, c, &i)) > 0; i++)
		if (strcmp(a[i].lit, "-n") == 0 || strcmp(a[i].lit, "--adjustment") == 0)
			i++;
	return r < 0 ? AG_UNWRAP_DONE : i;
}

static const char *const nice_names[] = { "nice", NULL };
const struct ag_prog ag_prog_nice = {
	.names = nice_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_nice,
};

/* ---- wrappers whose own options are flags ------------------------------- */

/*
 * Options are flags, except the words in the descriptor's wrap_valued,
 * which take the next word as their value; "--" or the first word that is
 * not an option starts the inner command.
 */
static size_t
unwrap_flags(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;
	const char *const *v;
	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++)
		for (v = c->prog->wrap_valued; v != NULL && *v != NULL; v++)
			if (strcmp(a[i].lit, *v) == 0) {
				i++;	/* the option's value */
				break;
			}
	return r < 0 ? AG_UNWRAP_DONE : i;
}

static const char *const nohup_names[] = { "nohup", NULL };
const struct ag_prog ag_prog_nohup = {
	.names = nohup_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_flags,
};

static const char *const setsid_names[] = { "setsid", NULL };
const struct ag_prog ag_prog_setsid = {
	.names = setsid_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_flags,
};

static const char *const unbuffer_names[] = { "unbuffer", NULL };
const struct ag_prog ag_prog_unbuffer = {
	.names = unbuffer_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_flags,
};

static const char *const stdbuf_names[] = { "stdbuf", NULL };
static const char *const stdbuf_valued[] = { "-i", "-o", "-e", NULL };
const struct ag_prog ag_prog_stdbuf = {
	.names = stdbuf_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_flags,
	.wrap_valued = stdbuf_valued,
};

/* time -o FILE writes FILE */
static void
time_opt(struct ag_walker *w, void *ud, const char *opt, const char *val)
{
	if (opt != NULL && (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		ag_walk_write(w, NULL, val, 0);
}

static void
check_time(struct ag_walker *w, const struct ag_progcall *c)
{
	ag_prog_parse_opts(w, c->a, c->na, 1, &c->prog->opts, time_opt, NULL);
}

static const char *const time_names[] = { "time", NULL };
static const char *const time_valued[] = { "-f", "-o", NULL };
static const char *const time_long[] = { "--format", "--output", NULL };
const struct ag_prog ag_prog_time = {
	.names = time_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_flags,
	.wrap_valued = time_valued, .opts = { "fo", time_long, NULL }, .check = check_time,
};

/* ---- timeout ------------------------------------------------------------ */

static size_t
unwrap_timeout(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;

	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++)
		if (strcmp(a[i].lit, "-s") == 0 || strcmp(a[i].lit, "-k") == 0 ||
		    strcmp(a[i].lit, "--signal") == 0 || strcmp(a[i].lit, "--kill-after") == 0)
			i++;
	return r < 0 ? AG_UNWRAP_DONE : i + 1;	/* after the duration */
}

static const char *const timeout_names[] = { "timeout", NULL };
const struct ag_prog ag_prog_timeout = {
	.names = timeout_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_timeout,
};

/* ---- xargs -------------------------------------------------------------- */

/*
 * xargs alone runs the program echo (not the builtin): it must be allowed
 * like any other, or the kernel would stop it after the gateway said yes.
 */
static void
xargs_echo(struct ag_walker *w, const struct ag_progcall *c, int flags)
{
	char echo[] = "echo", real[PATH_MAX];
	struct ag_arg e = { c->a[0].w, echo };
	size_t i;

	for (i = 0; i < w->prof->nallow; i++)
		if (ag_walk_rule_matches(w, &w->prof->allow[i], echo,
		    ag_walk_lookup(w->pathenv, echo, real, sizeof(real)) == 0 ? real : NULL, 0))
			break;
	if (i == w->prof->nallow) {
		/* the developer tier's kernel lets echo run; a deny rule
		 * still holds */
		if (w->prof->tier == AG_TIER_DEVELOPER)
			(void)ag_walk_deny_hit(w, echo, &e, 1, flags);
		else
			ag_walk_refuse(w, AG_DENY, "wrapper:xargs",
			    "'xargs' without a command runs the program echo, which profile '%s' does not allow; name the command xargs should run",
			    w->prof->name ? w->prof->name : "?");
		return;
	}
	ag_walk_nested(w, &e, 1, flags);
}

static size_t
unwrap_xargs(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, na = c->na;

	int r;

	u->flags |= AG_CF_UNKNOWN_TAIL;
	for (i = 1; (r = next_option(w, c, &i)) > 0; i++) {
		const char *s = a[i].lit;

		if (strncmp(s, "--p", 3) == 0) {	/* --process-slot-var, abbreviated or not */
			ag_walk_refuse(w, AG_DENY, "wrapper:xargs",
			    "'xargs --process-slot-var' sets a variable in the command's environment");
			return AG_UNWRAP_DONE;
		}
		if (strcmp(s, "-I") == 0 || strcmp(s, "--replace") == 0) {
			NEED_LIT(i + 1);
			snprintf(u->repl, sizeof(u->repl), "%s", a[i + 1].lit);
			i++;
			continue;
		}
		if (strncmp(s, "--replace=", 10) == 0) {
			snprintf(u->repl, sizeof(u->repl), "%s", s + 10);
			continue;
		}
		if (strncmp(s, "-I", 2) == 0 || strncmp(s, "-i", 2) == 0) {
			snprintf(u->repl, sizeof(u->repl), "%s", s[2] ? s + 2 : "{}");
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
	if (r < 0)
		return AG_UNWRAP_DONE;
	if (i >= na) {
		xargs_echo(w, c, u->flags);
		return AG_UNWRAP_DONE;
	}
	return i;
}

static const char *const xargs_names[] = { "xargs", NULL };
const struct ag_prog ag_prog_xargs = {
	.names = xargs_names, .flags = AG_PROG_WRAPPER_SAFE, .unwrap = unwrap_xargs,
};

/* ---- sudo, doas --------------------------------------------------------- */

static size_t
unwrap_sudo(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;
	char ex[80];
	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++) {
		const char *s = a[i].lit;

		/* long options only from a short list: getopt would take
		 * "--sh" for --shell */
		if (s[1] == '-' && strncmp(s, "--user=", 7) != 0 &&
		    strncmp(s, "--group=", 8) != 0 &&
		    strcmp(s, "--non-interactive") != 0 &&
		    strcmp(s, "--set-home") != 0) {
			ag_walk_refuse(w, AG_DENY, "wrapper:sudo",
			    "'%s %s' is not an option the gateway understands; use the short form",
			    c->base, ag_walk_excerpt(s, ex, sizeof(ex)));
			return AG_UNWRAP_DONE;
		}
		if ((s[1] != '-' && strpbrk(s + 1, "sieE") != NULL) ||
		    strcmp(s, "--shell") == 0 ||
		    strcmp(s, "--login") == 0 || strcmp(s, "--edit") == 0 ||
		    strncmp(s, "--preserve-env", 14) == 0 || strcmp(s, "-E") == 0) {
			ag_walk_refuse(w, AG_DENY, "wrapper:sudo",
			    "'%s %s' starts a shell, an editor or keeps the environment; name the command instead",
			    c->base, s);
			return AG_UNWRAP_DONE;
		}
		/* the last letter of a cluster may take the next word */
		if (s[1] != '-' && strchr("ugCDhprtTUc", s[strlen(s) - 1]) != NULL)
			i++;
	}
	return r < 0 ? AG_UNWRAP_DONE : i;
}

static const char *const sudo_names[] = { "sudo", "doas", NULL };
static const char *const sudo_env[] = { "SUDO_ASKPASS", NULL };
const struct ag_prog ag_prog_sudo = {
	.names = sudo_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_sudo,
	.env_filter = sudo_env,
};

/* ---- flock -------------------------------------------------------------- */

static size_t
unwrap_flock(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, na = c->na;

	for (i = 1; i < na; i++) {
		const char *s;

		NEED_LIT(i);
		s = a[i].lit;
		if (strcmp(s, "-c") == 0 || strcmp(s, "--command") == 0) {
			ag_walk_refuse(w, AG_DENY, "wrapper:flock",
			    "'flock -c' runs a shell command string; give the command as words");
			return AG_UNWRAP_DONE;
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

static const char *const flock_names[] = { "flock", NULL };
const struct ag_prog ag_prog_flock = {
	.names = flock_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_flock,
};

/* ---- watch -------------------------------------------------------------- */

static size_t
unwrap_watch(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, k, na = c->na;

	for (i = 1; i < na; i++) {
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
			return AG_UNWRAP_DONE;
		}
	return i;
}

static const char *const watch_names[] = { "watch", NULL };
const struct ag_prog ag_prog_watch = {
	.names = watch_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_watch,
};

/* ---- strace, ltrace ----------------------------------------------------- */

static size_t
unwrap_trace(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;

	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++) {
		const char *s = a[i].lit;

		if (strcmp(s, "-p") == 0 || strncmp(s, "-p", 2) == 0 ||
		    strcmp(s, "-E") == 0 || strncmp(s, "-E", 2) == 0) {
			ag_walk_refuse(w, AG_DENY, "wrapper:trace",
			    "'%s %s' attaches to another process or changes its environment",
			    c->base, s);
			return AG_UNWRAP_DONE;
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
	return r < 0 ? AG_UNWRAP_DONE : i;
}

static const char *const trace_names[] = { "strace", "ltrace", NULL };
const struct ag_prog ag_prog_strace = {
	.names = trace_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_trace,
};

/* ---- busybox ------------------------------------------------------------ */

/* busybox APPLET ...: the applet is judged by its name alone */
static size_t
unwrap_busybox(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	u->flags |= AG_CF_NAME_ONLY;
	return 1;
}

static const char *const busybox_names[] = { "busybox", NULL };
const struct ag_prog ag_prog_busybox = {
	.names = busybox_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_busybox,
};

/* ---- the dynamic loader run as a program -------------------------------- */

static size_t
unwrap_loader(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, na = c->na;

	for (i = 1; i < na; i++) {
		NEED_LIT(i);
		if (strcmp(a[i].lit, "--argv0") == 0) {
			i++;
			continue;
		}
		if (a[i].lit[0] == '-') {
			ag_walk_refuse(w, AG_DENY, "wrapper:ld.so",
			    "'%s %s' changes what the loader loads", c->base, a[i].lit);
			return AG_UNWRAP_DONE;
		}
		break;
	}
	/* the loader takes a file, not a name to look up */
	if (i < na && strchr(a[i].lit, '/') == NULL) {
		ag_walk_refuse(w, AG_DENY, "wrapper:ld.so",
		    "the loader's program must be given as a path");
		return AG_UNWRAP_DONE;
	}
	return i;
}

static const char *const loader_names[] = {
	"ld-linux*", "ld.so*", "ld64.so*", "ld-musl*", NULL
};
const struct ag_prog ag_prog_loader = {
	.names = loader_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_loader,
};

/* ---- wrappers the gateway cannot see into ------------------------------- */

/*
 * They change who runs the command, in which namespace or under which
 * tracer, or read it from elsewhere; a rule naming one allows it by name,
 * and nothing is unwrapped.
 */
static const char *const opaque_names[] = {
	"su", "chroot", "parallel", "script", "gdb", "pkexec", "runuser",
	"nsenter", "unshare", "firejail", "ionice", "chrt", "taskset", "numactl",
	"catchsegv", "valgrind", "expect", "ssh-agent", "dbus-launch",
	"systemd-run", "fakeroot", "proot",
	NULL
};
const struct ag_prog ag_prog_opaque = {
	.names = opaque_names, .flags = AG_PROG_WRAPPER_RISKY,
};

/* ---- the exec builtin --------------------------------------------------- */

static size_t
unwrap_exec(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i;

	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++)
		if (strcmp(a[i].lit, "-a") == 0)
			i++;	/* argv[0] */
	return r < 0 ? AG_UNWRAP_DONE : i;
}

/* Not in the registry: a program named exec is no wrapper; builtins.c
 * unwraps the builtin with it. */
static const char *const exec_names[] = { "exec", NULL };
const struct ag_prog ag_prog_exec = {
	.names = exec_names, .unwrap = unwrap_exec,
};
