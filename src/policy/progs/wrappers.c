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
#include <stdlib.h>
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

/* ---- strace, ltrace, gdb ------------------------------------------------ */

/*
 * Tracers fork and exec the program they trace (gdb through $SHELL -c
 * exec PROG; its shell, pipe and python commands run what they run by
 * exec too), and attach only to processes the kernel lets them trace.
 * Where every exec is judged (ag_walk_exec_judged) what runs under them
 * meets the deny rules at its exec, so attaching and the environment of
 * the traced program are the kernel's and the supervisor's to hold.  In
 * the strict tier a rule naming the tracer lets it run a command, not
 * reach other processes or change the command's environment.
 *
 * One option of a tracer, its value (NULL: none): 0, or -1 after refusing.
 */
static int
trace_opt(struct ag_walker *w, const struct ag_progcall *c, const char *opt, const char *val)
{
	int judged = ag_walk_exec_judged(w);
	char ex[80];

	if (strcmp(opt, "-p") == 0 || strcmp(opt, "--attach") == 0 ||
	    strcmp(opt, "-pid") == 0) {
		if (judged)
			return 0;
		ag_walk_refuse(w, AG_DENY, "wrapper:trace",
		    "'%s %s' attaches to another process", c->base, opt);
		return -1;
	}
	if (strcmp(opt, "-E") == 0 || strcmp(opt, "--env") == 0) {
		char nm[256];
		size_t nl = strcspn(val, "=");

		if (!judged) {
			ag_walk_refuse(w, AG_DENY, "wrapper:trace",
			    "'%s %s' changes the environment of the program it runs", c->base, opt);
			return -1;
		}
		/* VAR=VALUE or VAR (unset), judged as env's */
		if (nl == 0 || nl >= sizeof(nm)) {
			ag_walk_refuse(w, AG_DENY, "wrapper:trace", "bad variable name in '%s %s'",
			    c->base, opt);
			return -1;
		}
		memcpy(nm, val, nl);
		nm[nl] = '\0';
		return ag_walk_var_name(w, nm, val[nl] == '=' ? "setting" : "unsetting") ? 0 : -1;
	}
	if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
		/* strace -o '|CMD' (or '!CMD') pipes the trace to sh -c CMD:
		 * an exec the supervisor sees, where it judges every one */
		if (c->prog == &ag_prog_strace && (val[0] == '|' || val[0] == '!')) {
			if (judged)
				return 0;
			ag_walk_refuse(w, AG_DENY, "wrapper:trace",
			    "'%s -o %s' runs a shell command", c->base,
			    ag_walk_excerpt(val, ex, sizeof(ex)));
			return -1;
		}
		ag_walk_write(w, NULL, val, 0);
	}
	return 0;
}

/*
 * strace and ltrace stop at their first operand, the program: options
 * before it as the descriptor's grammar (opts) says, a value glued to its
 * letter (-oFILE, -fo FILE) or after '=' (--output=FILE) or in the next
 * word.
 */
static size_t
unwrap_trace(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	const struct ag_optspec *sp = &c->prog->opts;
	struct ag_arg *a = c->a;
	size_t i;
	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++) {
		const char *s = a[i].lit, *val = NULL, *l;
		char on[64];

		if (s[1] == '-') {
			size_t nl = strcspn(s, "=");
			const char *canon = ag_prog_canon_long(s, nl, sp->long_val, sp->long_flag);

			if (canon != NULL)
				snprintf(on, sizeof(on), "%s", canon);
			else
				snprintf(on, sizeof(on), "%.*s", (int)(nl < 60 ? nl : 60), s);
			if (s[nl] == '=')
				val = s + nl + 1;
			else if (canon != NULL && ag_walk_in_list(sp->long_val, canon)) {
				NEED_LIT(i + 1);
				val = a[++i].lit;
			}
			if (val != NULL && trace_opt(w, c, on, val) < 0)
				return AG_UNWRAP_DONE;
			continue;
		}
		for (l = s + 1; *l != '\0'; l++) {
			if (strchr(sp->short_val, *l) == NULL)
				continue;
			snprintf(on, sizeof(on), "-%c", *l);
			if (l[1] != '\0')
				val = l + 1;
			else {
				NEED_LIT(i + 1);
				val = a[++i].lit;
			}
			if (trace_opt(w, c, on, val) < 0)
				return AG_UNWRAP_DONE;
			break;
		}
	}
	return r < 0 ? AG_UNWRAP_DONE : i;
}

static const char *const strace_names[] = { "strace", NULL };
/* the long options that take a value in the next word (strace 6) */
static const char *const strace_long[] = {
	"--abbrev", "--argv0", "--attach", "--columns", "--const-print-style",
	"--decode-pids", "--detach-on", "--env", "--fault", "--inject", "--interruptible",
	"--kvm", "--output", "--raw", "--read", "--signal", "--status", "--string-limit",
	"--summary-columns", "--summary-sort-by", "--summary-syscall-overhead",
	"--syscall-limit", "--trace", "--trace-fds", "--trace-path", "--user", "--verbose",
	"--write", NULL
};
const struct ag_prog ag_prog_strace = {
	.names = strace_names, .flags = AG_PROG_WRAPPER_RISKY | AG_PROG_EXEC_SEEN,
	.unwrap = unwrap_trace, .opts = { "abeEIoOpPsSuUX", strace_long, NULL },
	.runs = "the program it traces, by exec (and sh -c for -o '|CMD')",
};

static const char *const ltrace_names[] = { "ltrace", NULL };
static const char *const ltrace_long[] = {
	"--align", "--indent", "--library", "--output", NULL
};
const struct ag_prog ag_prog_ltrace = {
	.names = ltrace_names, .flags = AG_PROG_WRAPPER_RISKY | AG_PROG_EXEC_SEEN,
	.unwrap = unwrap_trace, .opts = { "aADeFlnopsuwx", ltrace_long, NULL },
	.runs = "the program it traces, by exec",
};

/*
 * gdb [OPTIONS] [PROG [CORE|PID]] or gdb [OPTIONS] --args PROG ARGS...:
 * options take one dash or two, a value after '=' or in the next word.
 * Judged here: the program, with its arguments after --args; what -ex
 * and -x files make it run is judged at its exec.
 */
static const char *const gdb_valued[] = {
	"-b", "-baud", "-c", "-cd", "-command", "-core", "-d", "-D", "-data-directory",
	"-directory", "-e", "-eval-command", "-ex", "-exec", "-i", "-iex",
	"-init-command", "-init-eval-command", "-interpreter", "-ix", "-l", "-p", "-pid",
	"-s", "-se", "-symbols", "-t", "-tty", "-x", NULL
};

static size_t
unwrap_gdb(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	struct ag_arg *a = c->a;
	size_t i, na = c->na;
	int r;

	for (i = 1; (r = next_option(w, c, &i)) > 0; i++) {
		const char *s = a[i].lit + (a[i].lit[1] == '-');
		size_t nl = strcspn(s, "=");
		char on[64];

		if (strcmp(s, "-args") == 0)
			return i + 1;	/* the program and its arguments */
		snprintf(on, sizeof(on), "%.*s", (int)(nl < 60 ? nl : 60), s);
		if (!ag_walk_in_list(gdb_valued, on))
			continue;
		if (s[nl] != '=')
			i++;	/* a -ex command may be any word: judged at its exec */
		if (trace_opt(w, c, on, NULL) < 0)
			return AG_UNWRAP_DONE;
	}
	if (r < 0)
		return AG_UNWRAP_DONE;
	if (i >= na)
		return na;
	/* the program alone: a second operand is a core file or a process */
	ag_walk_nested(w, a + i, 1, u->flags);
	return AG_UNWRAP_DONE;
}

static const char *const gdb_names[] = { "gdb", NULL };
const struct ag_prog ag_prog_gdb = {
	.names = gdb_names, .flags = AG_PROG_WRAPPER_RISKY | AG_PROG_EXEC_SEEN,
	.unwrap = unwrap_gdb,
	.runs = "the program it debugs, by $SHELL -c exec; its shell, pipe and python commands",
};

/* ---- valgrind ----------------------------------------------------------- */

/*
 * valgrind loads its program into its own process: the launcher execs
 * the tool binary (memcheck-amd64-linux ...) with the same words, and
 * with --trace-children=yes each exec of the program's children becomes
 * another exec of the launcher.  Its options are single words (--opt=V,
 * -q, -v) up to "--" or the first operand, the program.
 */
static size_t
valgrind_operand(const char *const *words, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++) {
		if (words[i] == NULL)
			return 0;
		if (strcmp(words[i], "--") == 0)
			return i + 1 < n && words[i + 1] != NULL ? i + 1 : 0;
		if (words[i][0] != '-')
			return i;
	}
	return 0;
}

static size_t
unwrap_valgrind(struct ag_walker *w, const struct ag_progcall *c, struct ag_unwrap *u)
{
	const char **words;
	size_t i, k;

	if ((words = calloc(c->na, sizeof(*words))) == NULL) {
		w->oom = 1;
		return AG_UNWRAP_DONE;
	}
	for (i = 0; i < c->na; i++)
		words[i] = c->a[i].lit;
	k = valgrind_operand(words, c->na);
	free(words);
	if (k > 0)
		return k;
	for (i = 1; i < c->na && c->a[i].lit != NULL; i++)
		;
	/* a word it cannot see where the program may be: the exec judge
	 * sees it where every exec is judged */
	if (i < c->na && !ag_walk_exec_judged(w))
		NEED_LIT(i);
	return c->na;	/* no program: --help, --version */
}

/* --log-file=F, --xml-file=F, --massif-out-file=F ...: files it writes */
static void
check_valgrind(struct ag_walker *w, const struct ag_progcall *c)
{
	size_t i;

	for (i = 1; i < c->na && c->a[i].lit != NULL && c->a[i].lit[0] == '-' &&
	    strcmp(c->a[i].lit, "--") != 0; i++) {
		const char *s = c->a[i].lit, *eq = strchr(s, '=');

		if (s[1] == '-' && eq != NULL && eq - s > 7 && strncmp(eq - 5, "-file", 5) == 0)
			ag_walk_write(w, NULL, eq + 1, 0);
	}
}

/* the launcher, Debian's script and binary, and the tools' binaries
 * (TOOL-ARCH-OS in its libexec directory) */
static const char *const valgrind_names[] = {
	"valgrind", "valgrind.bin", "memcheck-*", "cachegrind-*", "callgrind-*",
	"helgrind-*", "drd-*", "massif-*", "dhat-*", "lackey-*", "none-*", "exp-bbv-*",
	"getoff-*", NULL
};
const struct ag_prog ag_prog_valgrind = {
	.names = valgrind_names, .flags = AG_PROG_WRAPPER_RISKY | AG_PROG_EXEC_SEEN,
	.unwrap = unwrap_valgrind, .check = check_valgrind, .inproc = valgrind_operand,
	.runs = "the program it checks, inside its own process (its children too with --trace-children=yes)",
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
/* the loaders' files: a link named x to one is still the loader */
static const char *const loader_files[] = {
	"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3",
	"/lib/ld-linux.so.2", "/lib64/ld64.so.2", "/lib/ld64.so.1", "/lib/ld-linux-riscv64-lp64d.so.1",
	"/lib/ld-musl-x86_64.so.1", "/lib/ld-musl-aarch64.so.1", "/lib/ld-musl-armhf.so.1", NULL
};
const struct ag_prog ag_prog_loader = {
	.names = loader_names, .flags = AG_PROG_WRAPPER_RISKY, .unwrap = unwrap_loader,
	.files = loader_files,
};

/* ---- wrappers the gateway cannot see into ------------------------------- */

/*
 * They change who runs the command, in which namespace or under which
 * tracer, or read it from elsewhere; a rule naming one allows it by name,
 * and nothing is unwrapped.
 */
static const char *const opaque_names[] = {
	"su", "chroot", "parallel", "script", "pkexec", "runuser",
	"nsenter", "unshare", "firejail", "ionice", "chrt", "taskset", "numactl",
	"catchsegv", "expect", "ssh-agent", "dbus-launch",
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
