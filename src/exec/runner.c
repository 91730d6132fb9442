/* runner.c - one command in a fresh runner shell; see runner.h */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "exec/pty.h"
#include "common/config.h"
#include "exec/runner.h"
#include "exec/procwatch.h"
#include "exec/sandbox.h"
#include "exec/sigpipe.h"
#include "exec/spawn.h"
#include "exec/zygote.h"
#include "exec/stream.h"
#include "policy/policy.h"
#include "common/strbuf.h"

#define RELAY_BUF	65536
/*
 * The command's stdout pipe, as big as an unprivileged process may make
 * one (fs.pipe-max-size's default): a command writing in 4 KiB pieces
 * then blocks, and wakes the relay, far less often while sshd drains.
 * 256 MiB from `head` through the gateway: 2 to 6% more throughput in
 * three runs (23 of 30 interleaved pairs faster).  The kernel refuses the
 * size when it would take the account past fs.pipe-user-pages-soft; the
 * pipe then stays at 64 KiB.
 */
#define CMD_PIPE_SZ	(1024 * 1024)

/* ---- signals ----------------------------------------------------------- */

static volatile sig_atomic_t got_term;	/* SIGHUP/SIGTERM: end the session */
static volatile sig_atomic_t got_int;	/* SIGINT/SIGQUIT: pass to the command */
static volatile sig_atomic_t got_alrm;
static volatile sig_atomic_t got_cancel;	/* SIGUSR1: end this command only */

static void
on_signal(int sig)
{
	int saved = errno;

	switch (sig) {
	case SIGHUP:
	case SIGTERM:
		got_term = sig;
		break;
	case SIGINT:
	case SIGQUIT:
		got_int = sig;
		break;
	case SIGALRM:
		got_alrm = 1;
		break;
	case SIGUSR1:
		got_cancel = 1;
		break;
	default:
		break;
	}
	ag_sigpipe_notify();
	errno = saved;
}

int
ag_runner_init(struct ag_err *err)
{
	static const int caught[] = { SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGALRM,
	    SIGUSR1 };

	/* no SA_RESTART: a blocked read or write must see EINTR and look at the flags */
	if (ag_sigpipe_catch(caught, sizeof(caught) / sizeof(caught[0]), on_signal, 0, err) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	/* commands that daemonise are re-parented to us, so we can reap and kill them */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		ag_log(LOG_WARNING, "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	return 0;
}

#define REVOKE_CHECK_MS	2000	/* a revoked caller's command outlives it this long */

int
ag_run_check_revoked(const struct ag_run_opts *o, struct ag_run_result *r, long long now,
    long long *next_at)
{
	if (o->revoked == NULL || r->revoked || now < *next_at)
		return r->revoked;
	*next_at = now + REVOKE_CHECK_MS;
	r->revoked = o->revoked(o->revoked_arg) != 0;
	return r->revoked;
}

int
ag_runner_terminating(void)
{
	return got_term != 0;
}

int
ag_runner_cancel_requested(void)
{
	return got_cancel != 0;
}

void
ag_runner_cancel_reset(void)
{
	got_cancel = 0;
}

int
ag_runner_take_alarm(void)
{
	int a = got_alrm;

	got_alrm = 0;
	return a;
}

int
ag_runner_signal_fd(void)
{
	return ag_sigpipe_fd();
}

void
ag_runner_drain_signal_fd(void)
{
	ag_sigpipe_drain();
}

/* ---- helpers ----------------------------------------------------------- */

static void
arm_timer(long long ms)
{
	static int armed;
	struct itimerval it;

	if (ms <= 0 && !armed)
		return;		/* the common case: a command without a timeout */
	armed = ms > 0;
	memset(&it, 0, sizeof(it));
	if (ms > 0) {
		it.it_value.tv_sec = ms / 1000;
		it.it_value.tv_usec = (ms % 1000) * 1000;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A write to a stalled client gives up when the session ends or the timer fires. */
static int
must_stop(void)
{
	return got_term || got_alrm;
}

static int
write_all(int fd, const char *p, size_t n)
{
	return ag_write_all(fd, p, n, must_stop);
}

static void
notice(int fd, const char *fmt, ...) AG_PRINTF(2, 3);

static void
notice(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	(void)write_all(fd, buf, (size_t)n);
}

static pid_t kept[4];	/* ag_runner_keep_child() */

void
ag_runner_keep_child(pid_t pid, int keep)
{
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (keep ? kept[i] == 0 : kept[i] == pid) {
			kept[i] = keep ? pid : 0;
			return;
		}
}

static int
is_kept(pid_t pid, pid_t spare)
{
	size_t i;

	if (pid == spare)
		return 1;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (kept[i] != 0 && kept[i] == pid)
			return 1;
	return 0;
}

/* Reap one dead child that is not spare; 0 when there is none.  A kept
 * child that died is reaped and forgotten: its owner finds it gone. */
static int
reap_one(pid_t spare)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0 ||
	    si.si_pid == spare)
		return 0;
	ag_runner_keep_child(si.si_pid, 0);
	return waitpid(si.si_pid, NULL, WNOHANG) > 0;
}

size_t
ag_runner_children(pid_t of, pid_t *out, size_t max)
{
	char path[64], buf[4096];
	ssize_t n;
	size_t cnt = 0;
	int fd;
	char *p, *end;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)of, (long)of);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; cnt < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0)
			out[cnt++] = (pid_t)v;
	}
	return cnt;
}

void
ag_runner_reap_all(pid_t spare)
{
	pid_t kids[256], me;
	siginfo_t si;
	int round;

	/*
	 * No child at all, living or dead, is the usual end of a command.
	 * __WALL: a child with another exit signal counts too (one that is
	 * reparented to us, the subreaper, gets SIGCHLD anyway).
	 */
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD)
		return;
	me = getpid();
	/* each round kills our children; their children then become ours */
	for (round = 0; round < 200; round++) {
		size_t n = ag_runner_children(me, kids, sizeof(kids) / sizeof(kids[0])), i, others = 0;
		int any = 0;

		for (i = 0; i < n; i++) {
			if (is_kept(kids[i], spare))
				continue;
			others++;
			if (kill(kids[i], SIGKILL) == 0)
				any = 1;
		}
		while (reap_one(spare))
			any = 1;
		if (others == 0 && !any)
			return;
		usleep(2000);
	}
	ag_log(LOG_WARNING, "descendants still alive after repeated SIGKILL");
}

/* ---- the script -------------------------------------------------------- */

/*
 * The prelude.  Only builtins: no process is started for the capture.
 * ${!X@} lists variables by first letter without a fork (unlike
 * $(compgen -e)); ${!n@a} tells exported (x) from not, and arrays (a, A),
 * which bash cannot export, from plain variables.  The final "=\0" record
 * marks a complete capture; the first, "\0=<\0", where the trap's records
 * begin, so whatever the command itself wrote to fd 3 is dropped.
 *
 * Two kinds of record are not exported variables, and a profile that
 * judges every exec keeps them for the next line (session.c): "=v" and a
 * plain variable the script set (one bash did not have before the
 * command: __ag_pre names those), and "=f" and bash's `declare -f`, the
 * functions defined at exit; and an array the script set: "=a", a or A
 * (indexed or associative) and its name, then for each element "=k" and
 * its key and "=e" and its value.
 */
#define ALL_NAMES \
    " ${!A@} ${!B@} ${!C@} ${!D@} ${!E@} ${!F@} ${!G@} ${!H@} ${!I@} ${!J@} ${!K@}" \
    " ${!L@} ${!M@} ${!N@} ${!O@} ${!P@} ${!Q@} ${!R@} ${!S@} ${!T@} ${!U@} ${!V@}" \
    " ${!W@} ${!X@} ${!Y@} ${!Z@} ${!a@} ${!b@} ${!c@} ${!d@} ${!e@} ${!f@} ${!g@}" \
    " ${!h@} ${!i@} ${!j@} ${!k@} ${!l@} ${!m@} ${!n@} ${!o@} ${!p@} ${!q@} ${!r@}" \
    " ${!s@} ${!t@} ${!u@} ${!v@} ${!w@} ${!x@} ${!y@} ${!z@} ${!_@}"

static const char prelude_head[] =
    "__ag_pre=\"" ALL_NAMES " \";"
    "trap '__ag_rc=$?; builtin unset IFS; { builtin printf \"\\0=<\\0\"; for __ag_n in" ALL_NAMES "; do"
    " case ${!__ag_n@a} in *[aA]*r*) ;; *[aA]*) case $__ag_pre in *\" $__ag_n \"*|__ag_*) ;;"
    " *) case ${!__ag_n@a} in *A*) __ag_t=A;; *) __ag_t=a;; esac;"
    " builtin printf \"=a%s%s\\0\" \"$__ag_t\" \"$__ag_n\"; builtin declare -n __ag_r=$__ag_n;"
    " for __ag_k in \"${!__ag_r[@]}\"; do builtin printf \"=k%s\\0=e%s\\0\" \"$__ag_k\" \"${__ag_r[$__ag_k]}\";"
    " done; builtin unset -n __ag_r;; esac;;"
    " *x*) builtin printf \"%s=%s\\0\" \"$__ag_n\" \"${!__ag_n}\";;"
    " *r*) ;; *) case $__ag_pre in *\" $__ag_n \"*|__ag_*) ;;"
    " *) builtin printf \"=v%s=%s\\0\" \"$__ag_n\" \"${!__ag_n}\";; esac;; esac;"
    " done; builtin printf \"=f\"; builtin declare -f; builtin printf \"\\0=\\0\";"
    " } >&3 2>/dev/null; builtin exit $__ag_rc' EXIT;";

/*
 * Where the trap's records begin: just after the last "\0=<\0".  No value
 * holds a NUL and no key is empty, so only the trap's own marker (written
 * last, at exit) or one a command forged earlier can match, and the last
 * one wins.  0 when there is none.
 */
static size_t
capture_start(const char *d, size_t len)
{
	size_t i;

	if (d == NULL)
		return 0;
	for (i = len; i >= 4; i--)
		if (d[i - 1] == '\0' && d[i - 2] == '<' && d[i - 3] == '=' && d[i - 4] == '\0')
			return i;
	return 0;
}

static char *
build_script(const struct ag_run_opts *o)
{
	struct ag_strbuf sb;
	int st = o->last_status & 0xff;

	ag_strbuf_init(&sb, o->cmdlen + sizeof(prelude_head) + 256 +
	    (o->shell_state != NULL ? strlen(o->shell_state) + 2 : 0));
	/* before anything: the gateway's word that the command may run (its
	 * write-ahead record is on the disk); none, or any other, is 126 */
	if (o->admit != NULL && ag_strbuf_printf(&sb, "read -r -n 1 -u %d __ag_g; "
	    "[ \"$__ag_g\" = g ] || exit 126; exec %d<&-; unset __ag_g; ",
	    AG_RUN_GATE_FD, AG_RUN_GATE_FD) < 0)
		goto fail;
	/* then: a runner the sandbox library did not confine exits 126 */
	if (o->sandbox != NULL && ag_strbuf_addstr(&sb, ag_sandbox_script_guard(o->sandbox)) < 0)
		goto fail;
	if (!o->no_capture && ag_strbuf_addstr(&sb, prelude_head) < 0)
		goto fail;
	/* a long command: read from its memfd (builtins only), which then closes */
	if (o->cmdlen > AG_RUN_ARGV_MAX && ag_strbuf_printf(&sb,
	    " IFS= read -r -d '' __ag_c <&%d; exec %d<&-;", AG_RUN_SCRIPT_FD,
	    AG_RUN_SCRIPT_FD) < 0)
		goto fail;
	/* the variables and functions earlier lines left, after __ag_pre
	 * and before $? is set: defining them would reset it */
	if (o->shell_state != NULL && ag_strbuf_printf(&sb, "\n%s\n", o->shell_state) < 0)
		goto fail;
	/* $? for the command: a function that removes itself and returns it */
	if (st != 0 && ag_strbuf_printf(&sb,
	    " __ag_s() { builtin unset -f __ag_s; builtin return %d; }; __ag_s", st) < 0)
		goto fail;
	/* the sandbox guard's test leaves $? at 1: a 0 must be set again */
	if (st == 0 && o->sandbox != NULL && *ag_sandbox_script_guard(o->sandbox) != '\0' &&
	    ag_strbuf_addstr(&sb, " builtin :") < 0)
		goto fail;
	/*
	 * The command on its own line: a trailing comment cannot hide
	 * anything.  One newline after it, not two: bash runs the last
	 * command of `-c` in its own process (exec, no fork) only when
	 * nothing, not even an empty line, follows it.
	 */
	if (o->cmdlen > AG_RUN_ARGV_MAX) {
		if (ag_strbuf_addstr(&sb, "\nbuiltin eval \"$__ag_c\"\n") < 0)
			goto fail;
	} else if (ag_strbuf_addch(&sb, '\n') < 0 ||
	    ag_strbuf_append(&sb, o->cmd, o->cmdlen) < 0 ||
	    ((o->cmdlen == 0 || o->cmd[o->cmdlen - 1] != '\n') && ag_strbuf_addch(&sb, '\n') < 0))
		goto fail;
	return ag_strbuf_detach(&sb, NULL);
fail:
	ag_strbuf_free(&sb);
	return NULL;
}

char *
ag_runner_script(const char *cmd, size_t len, int last_status, int capture)
{
	struct ag_run_opts o;

	if (len > AG_RUN_ARGV_MAX)
		return NULL;
	memset(&o, 0, sizeof(o));
	o.cmd = cmd;
	o.cmdlen = len;
	o.last_status = last_status;
	o.no_capture = !capture;
	return build_script(&o);
}

int
ag_runner_capture_records(const char *d, size_t len, size_t *off, size_t *rlen)
{
	size_t cstart = capture_start(d, len);

	/* the trap's records, then its "=\0" end marker: complete, or nothing */
	if (cstart == 0 || len - cstart < 2 || d[len - 1] != '\0' || d[len - 2] != '=' ||
	    (len - cstart > 2 && d[len - 3] != '\0'))
		return 0;
	*off = cstart;
	*rlen = len - cstart - 2;
	return 1;
}

/*
 * The text of a command too long for argv, in a sealed memfd the runner
 * reads and closes first thing: nothing can change it after the decision,
 * and no path names it.
 */
static int
command_memfd(const struct ag_run_opts *o, struct ag_err *err)
{
	int fd = memfd_create("agentgate-command", MFD_CLOEXEC | MFD_ALLOW_SEALING |
	    MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL)	/* before Linux 6.3 */
		fd = memfd_create("agentgate-command", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		ag_err_set(err, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ag_write_all(fd, o->cmd, o->cmdlen, NULL) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		ag_err_set(err, "the command's memfd: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the child --------------------------------------------------------- */

/*
 * The child has joined the session's PID namespace, into which only its
 * own children are born: it forks once more and stays outside, as the
 * gateway's child and the leader of the command's process group, only
 * waiting; the command goes on in the new child.  What ends the command
 * ends this process the same way (its exit status, or the same signal),
 * so the gateway sees the command's status.  Returns in the new child.
 */
static void
wait_outside(int errfd)
{
	/* what the gateway or the terminal sends the group is for the command */
	static const int held[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN,
	    SIGTTOU, SIGPIPE, SIGWINCH };
	struct rlimit no_core = { 0, 0 };
	sigset_t one;
	pid_t pid;
	size_t i;
	int st, sig;

	if ((pid = fork()) < 0)
		ag_spawn_fail(errfd, "cannot start the command in its PID namespace");
	if (pid == 0) {
		/* its parent is outside the namespace: getppid() says 0, so no check */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		return;
	}
	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		signal(held[i], SIG_IGN);
	/* nothing of the command's stays open here: its pipes and terminal see
	 * their end when the command's tree lets go of them */
	ag_close_range(0, ~0U);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	if (!WIFSIGNALED(st))
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
	sig = WTERMSIG(st);
	(void)setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* What the runner's child starts from (the arguments of child()). */
struct child_args {
	const struct ag_run_opts	*o;
	char				*script;
	char *const			*env;
	int				 outw, errw, capw, textfd, gater;
	const struct ag_execguard	*guard;
	pid_t				 parent;
	const struct ag_pty		*pt;
	int				 shared;	/* the gateway's memory, until exec */
};

/*
 * The runner's process, up to the exec of bash.  It may share the
 * gateway's memory (spawn_runner): it writes nothing but its own stack,
 * and what it calls keeps to that too (ag_privsep_child_exec, the
 * sandbox's child functions); the PID namespace's extra fork and the
 * exec supervisor happen only in a forked child.
 */
/* write_step's refusal: on stderr, as the command's own would be; exit 1 */
static void __attribute__((noreturn, format(printf, 1, 2)))
write_fail(const char *fmt, ...)
{
	char msg[PATH_MAX + 1400];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		_exit(1);
	if ((size_t)n > sizeof(msg) - 2)
		n = (int)sizeof(msg) - 2;
	msg[n++] = '\n';
	(void)!write(2, msg, (size_t)n);
	_exit(1);
}

static int
open2(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	how.mode = mode;
	/* not a link in any component, none of them magic (/proc/PID/fd) */
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	if (dirfd != AT_FDCWD)
		how.resolve |= RESOLVE_BENEATH;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * The MCP write_file tool's write (runner.h, write_path), in the runner's
 * process: forked, in the sandbox, in the command's cwd, stdin on fd 0.
 * The decision judged `cat > PATH` when the path was what it was then; a
 * link put in its place since (a process of the account outside the
 * sandbox, a command running beside this one) must not carry the write
 * to a name the decision refused.  So: the directory as it resolves now,
 * the file judged again there, then both opened following no link: a
 * link swapped in between these steps makes the open fail.
 */
static void __attribute__((noreturn))
write_step(const struct ag_run_opts *o)
{
	char dir[PATH_MAX], rdir[PATH_MAX], abs[PATH_MAX], msg[1200], buf[16384];
	const char *base, *slash = strrchr(o->write_path, '/');
	ssize_t n, w, off;
	int dfd, fd;

	/* the gate: the write-ahead record is on the disk (build_script) */
	if (o->admit != NULL && (read(AG_RUN_GATE_FD, buf, 1) != 1 || buf[0] != 'g'))
		_exit(126);
	(void)close(AG_RUN_GATE_FD);
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == o->write_path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->write_path), o->write_path);
	base = slash != NULL ? slash + 1 : o->write_path;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		write_fail("agentgate: write_file: %s: not a file name", o->write_path);
	if (realpath(dir, rdir) == NULL)
		write_fail("agentgate: write_file: %s: %s", dir, strerror(errno));
	if (snprintf(abs, sizeof(abs), "%s%s%s", rdir, strcmp(rdir, "/") == 0 ? "" : "/",
	    base) >= (int)sizeof(abs))
		write_fail("agentgate: write_file: %s: %s", o->write_path, strerror(ENAMETOOLONG));
	if (o->write_prof != NULL &&
	    ag_policy_write_refusal(o->write_prof, o->write_home, abs, msg, sizeof(msg)) != NULL)
		write_fail("agentgate: write_file: %s (the path resolves there now)", msg);
	if ((dfd = open2(AT_FDCWD, rdir, O_PATH | O_DIRECTORY, 0)) < 0)
		write_fail("agentgate: write_file: %s: %s", dir, errno == ELOOP ?
		    "a symbolic link took a directory's place while it was written" :
		    strerror(errno));
	if ((fd = open2(dfd, base, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0666)) < 0)
		write_fail("agentgate: write_file: %s: %s", o->write_path, errno == ELOOP ||
		    errno == EXDEV ? "is a symbolic link: not followed" : strerror(errno));
	while ((n = read(0, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			write_fail("agentgate: write_file: reading the content: %s",
			    strerror(errno));
		for (off = 0; off < n; off += w)
			if ((w = write(fd, buf + off, (size_t)(n - off))) < 0 && errno != EINTR)
				write_fail("agentgate: write_file: %s: %s", o->write_path,
				    strerror(errno));
			else if (w < 0)
				w = 0;
	}
	if (close(fd) < 0)
		write_fail("agentgate: write_file: %s: %s", o->write_path, strerror(errno));
	_exit(0);
}

static void __attribute__((noreturn))
child(const struct child_args *ca)
{
	static char a_name[] = "bash", a_np[] = "--noprofile", a_nr[] = "--norc", a_c[] = "-c";
	const struct ag_run_opts *o = ca->o;
	char *argv[] = { a_name, a_np, a_nr, a_c, ca->script, a_name, NULL };
	struct ag_spawn sp = { .in = o->in_fd, .out = ca->outw, .err = ca->errw, .pt = ca->pt,
	    .tty = o->tty_fd, .cap = ca->capw, .script = ca->textfd, .gate = ca->gater,
	    .errfd = o->err_fd, .parent = ca->parent, .cwd = o->cwd, .path = o->runner,
	    .argv = argv, .env = ca->env };
	int inner = -1;

	/* before anything else: nothing of the agent's may run with our group */
	if (ag_privsep_child_exec() < 0)
		ag_spawn_fail(o->err_fd, "cannot give up the gateway's group");
	ag_spawn_process(&sp);
	/*
	 * Not dumpable until it execs, as the gateway it copies: its memory
	 * holds what the gateway's does (the policy, serve's host key), and
	 * the account's other processes could read a dumpable copy for as
	 * long as the command runs (the PID namespace's parent below stays).
	 * The exec supervisor does not read this child's exec: it is the
	 * first one its filter sees (execguard.c), and the exec makes the
	 * shell dumpable for the ones that follow.
	 */
	/* before the fd shuffle below: the sandbox's fds are still where they were */
	if (o->sandbox != NULL) {
		int joined = ag_sandbox_child_enter(o->sandbox);

		if (joined < 0)
			ag_spawn_fail(o->err_fd, "cannot enter the kernel sandbox");
		if (joined)
			wait_outside(o->err_fd);	/* returns in the PID namespace */
		if (ag_sandbox_child_confine(o->sandbox, &inner) < 0)
			ag_spawn_fail(o->err_fd, "cannot enter the kernel sandbox");
	}
	/* after no_new_privs (above), before the shuffle closes the socket */
	if (ca->guard != NULL && ag_execguard_child(ca->guard) < 0)
		ag_spawn_fail(o->err_fd, "cannot start the exec supervisor");
	ag_spawn_fds(&sp, inner);
	if (o->write_path != NULL)
		write_step(o);
	ag_spawn_exec(&sp);
}

/* clone(2)'s entry: child() never returns */
static int
child_entry(void *arg)
{
	child(arg);
}

#define SHARED_STACK	(128 * 1024)

/*
 * Start the runner's process.  Copying the gateway for it (fork: its page
 * tables, then a copy-on-write fault for every page the gateway touches
 * while the command runs) cost about a quarter of a millisecond per
 * command on a 2-core VM, more than the rest of the gateway's work.  So,
 * as posix_spawn(3) does, the child borrows the gateway's memory on a
 * stack of its own (CLONE_VM | CLONE_VFORK), and the gateway waits until
 * it has run bash or failed.  Signals are blocked meanwhile: a handler of
 * the gateway's must not run in the child (which resets them all before
 * it unblocks).  A child that must fork again (into the session's PID
 * namespace), start the exec supervisor's thread side, or take a
 * terminal gets a copy of its own, as before.  A child that stalls before
 * its exec (a working directory on a file system that hangs) holds the
 * gateway with it, where a forked one would have been timed out; the
 * second step of agentgate terminate (SIGKILL) still ends both.
 */
/*
 * A runner from the session's runner process, which is already where the
 * command's process must be: only a fork and the exec are left.  Its pid,
 * or -1 with errno; -2 when this command is the gateway's to fork (a
 * terminal or a write step, a boundary the runner process cannot hold, a
 * request too big to pass, or no runner process: it could not start).
 */
static pid_t
spawn_in_session(struct child_args *ca)
{
	static char a_name[] = "bash", a_np[] = "--noprofile", a_nr[] = "--norc", a_c[] = "-c";
	const struct ag_run_opts *o = ca->o;
	char *argv[] = { a_name, a_np, a_nr, a_c, ca->script, a_name, NULL };
	struct ag_spawn sp = { .in = o->in_fd, .out = ca->outw, .err = ca->errw, .pt = NULL,
	    .tty = o->tty_fd, .cap = ca->capw, .script = ca->textfd, .gate = ca->gater,
	    .errfd = o->err_fd, .parent = 0, .cwd = o->cwd, .path = o->runner,
	    .argv = argv, .env = ca->env };
	struct ag_zygote *z;
	int tries;
	pid_t pid;

	if (ca->pt != NULL || o->write_path != NULL || !ag_sandbox_child_joins(o->sandbox))
		return -2;
	for (tries = 0; tries < 2; tries++) {
		if ((z = ag_zygote_of(o->sandbox)) == NULL)
			return -2;
		pid = ag_zygote_spawn(z, &sp, ag_sandbox_inner_fd(o->sandbox),
		    ca->guard != NULL ? ag_execguard_child_sock(ca->guard) : -1);
		if (pid > 0)
			return pid;
		if (errno == EMSGSIZE)
			return -2;
		if (errno != EPIPE)
			return -1;
		ag_zygote_forget(z);	/* it died (killed, or out of memory): once more */
	}
	return -2;
}

static pid_t
spawn_runner(struct child_args *ca)
{
	static char *stack;
	sigset_t all, old;
	pid_t pid;
	int e;

	ca->shared = 0;
	if ((pid = spawn_in_session(ca)) != -2)
		return pid;
	/* AddressSanitizer keeps the bounds of the gateway's stack and its
	 * own state in memory the child would share: on another stack it
	 * reports false errors, then corrupts that state.  It gets a fork
	 * (the plain build's tests run the shared path). */
	/* (the write step runs no program: it waits for the gate and writes
	 * in the child, which must not hold up the gateway as a vfork does) */
	if (AG_ASAN || ca->guard != NULL || ca->pt != NULL || ca->o->write_path != NULL ||
	    ag_sandbox_child_joins(ca->o->sandbox)) {
		if ((pid = fork()) == 0)
			child(ca);
		return pid;
	}
	if (stack == NULL) {
		long pg = sysconf(_SC_PAGESIZE);
		size_t guard_len = pg > 0 ? (size_t)pg : 4096;
		char *m = mmap(NULL, SHARED_STACK + guard_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		/* an overflow faults instead of writing below the stack */
		if (mprotect(m, guard_len, PROT_NONE) < 0) {
			e = errno;
			(void)munmap(m, SHARED_STACK + guard_len);
			errno = e;
			return -1;
		}
		stack = m + guard_len;
	}
	ca->shared = 1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(child_entry, stack + SHARED_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, ca);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

const char *const ag_run_refusal_words[] = {
	"Permission denied", "Read-only file system", NULL
};

/* ---- the parent -------------------------------------------------------- */

/* One of the command's pipes, relayed: the transport around an ag_stream. */
struct pipe_out {
	int		 fd;		/* our read end; -1 at EOF */
	int		 dst;
	int		 nosplice;	/* dst takes no splice(2): copy */
	struct ag_stream st;		/* cap, redaction, notice (stream.h) */
};

/* The stream's writer: a stalled client is given up on when must_stop says so. */
static int
write_dst(void *arg, const char *p, size_t n)
{
	return write_all(*(int *)arg, p, n) < 0 && errno != EINTR ? -1 : 0;
}

/*
 * What the stream need not see moves from the command's pipe to ours in the
 * kernel (splice), as far as the stream allows; reaching the cap, a
 * redactor, or a destination splice refuses, and the end of the stream,
 * take the copying path below.  1: done (*rc is pump's result); 0: copy.
 */
static int
pump_splice(struct pipe_out *s, int *rc)
{
	size_t want = ag_stream_bypass_room(&s->st);
	ssize_t n;

	if (s->nosplice || want == 0)
		return 0;
	if (want > RELAY_BUF)
		want = RELAY_BUF;
	*rc = 0;
	if ((n = splice(s->fd, NULL, s->dst, NULL, want, SPLICE_F_MOVE)) > 0) {
		ag_stream_bypassed(&s->st, (size_t)n);
		return 1;
	}
	if (n == 0)
		return 0;	/* the end: the copying path sees it too */
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	if (errno == EINVAL || errno == ENOSYS) {
		s->nosplice = 1;
		return 0;
	}
	*rc = -1;		/* the client is gone */
	return 1;
}

/* 0, or -1 when the client is gone. */
static int
pump(struct pipe_out *s, char *buf)
{
	ssize_t n;
	int rc;

	if (pump_splice(s, &rc))
		return rc;
	if ((n = read(s->fd, buf, RELAY_BUF)) < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		n = 0;
	}
	if (n == 0) {
		close(s->fd);
		s->fd = -1;
		return ag_stream_end(&s->st);
	}
	return ag_stream_take(&s->st, buf, (size_t)n);
}

static void
capture_read(int *fd, struct ag_strbuf *cap, int *overflow, char *buf)
{
	ssize_t n = read(*fd, buf, RELAY_BUF);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (!*overflow && ag_strbuf_append(cap, buf, (size_t)n) < 0)
		*overflow = 1;	/* keep draining so the runner never blocks on it */
}

/* ---- the parent, PTY path ------------------------------------------------ */

struct pty_ctx {
	const struct ag_run_opts *o;
	struct ag_run_result	*r;
	long long		 revoke_at;
	pid_t			 pid;
	int			*capfd;
	struct ag_strbuf	*cap;
	int			*overflow;
	char			*buf;
};

static int
pty_capture(void *arg, int fd)
{
	struct pty_ctx *c = arg;

	(void)fd;
	capture_read(c->capfd, c->cap, c->overflow, c->buf);
	return *c->capfd < 0 ? -1 : 0;
}

/* The runner's signals while the relay runs: 1 = the session ends. */
static int
pty_wake(void *arg)
{
	struct pty_ctx *c = arg;

	if (got_int) {		/* not from the terminal (it is raw): passed on all the same */
		kill(-c->pid, got_int);
		got_int = 0;
	}
	return got_term != 0;
}

/*
 * The relay owns the loop: keystrokes, output (one stream), window size,
 * timeout and the capture pipe; what it reports lands in r as the pipe
 * path would have it.
 */
static int
pty_tick(void *arg)
{
	struct pty_ctx *c = arg;

	return ag_run_check_revoked(c->o, c->r, ag_now_ms(), &c->revoke_at);
}

static void
run_in_pty(const struct ag_run_opts *o, struct ag_run_result *r, struct ag_pty *pt, pid_t pid,
    int *capfd, struct ag_strbuf *cap, int *overflow, char *buf, int *wstatus)
{
	struct pty_ctx c = { .o = o, .r = r, .pid = pid, .capfd = capfd, .cap = cap,
	    .overflow = overflow, .buf = buf };
	struct ag_pty_relay_opts ro;
	struct ag_pty_result pr;
	struct ag_err e;

	ag_pty_close_slave(pt);
	memset(&ro, 0, sizeof(ro));
	ro.pid = pid;
	ro.in_fd = o->in_fd;
	ro.out_fd = o->out_fd;
	ro.timeout = o->timeout > 0 && o->timeout < 100L * 365 * 86400 ? o->timeout : 0;
	ro.max_output = o->max_output;
	ro.rec = o->rec;
	ro.rec_required = o->rec_required;
	ro.redact = o->redact != NULL && o->redact->redact ? o->redact : NULL;
	ro.watch = ag_run_refusal_words;
	ro.extra_fd = *capfd;
	ro.extra_cb = pty_capture;
	ro.extra_arg = &c;
	ro.wake_fd = ag_sigpipe_fd();
	ro.wake_cb = pty_wake;
	ro.wake_arg = &c;
	if (o->revoked != NULL) {
		ro.tick_cb = pty_tick;
		ro.tick_arg = &c;
	}
	ag_err_clear(&e);
	if (ag_pty_relay(pt, &ro, &pr, &e) < 0) {
		ag_log(LOG_ERR, "%s", e.msg);
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		if (waitpid(pid, wstatus, 0) < 0)
			*wstatus = SIGKILL;
		r->terminated = 1;
		return;
	}
	*wstatus = pr.wstatus;
	r->timed_out = pr.timed_out;
	r->truncated = pr.truncated;
	r->client_gone = pr.client_gone;
	r->terminated = pr.terminated && !r->revoked;
	r->bytes_out = pr.bytes_out;
	r->refusal_said = pr.watched != 0;
	r->rec_failed = pr.rec_failed;
	snprintf(r->rec_error, sizeof(r->rec_error), "%s", pr.rec_error);
	r->unread_len = pr.unread_len < sizeof(r->unread) ? pr.unread_len : sizeof(r->unread);
	memcpy(r->unread, pr.unread, r->unread_len);
}

/* One ag_run: what it opened, for every way out. */
struct run {
	const struct ag_run_opts *o;
	struct ag_run_result	*r;
	int			 outp[2], errp[2], capp[2], gate[2];
	int			 textfd, capfd, overflow, wstatus;
	char			*script, *buf, **senv;
	struct ag_strbuf	 cap;
	struct ag_pty		 pt;
	struct ag_execguard	*guard;
	struct ag_procwatch	 pw;
	struct pipe_out		 so, se;
	long long		 start;
	pid_t			 pid;
};

/* The streams, the script, the pipes, the PTY and the supervisor: 0, or -1 with err. */
static int
run_prepare(struct run *x, struct ag_err *err)
{
	const struct ag_run_opts *o = x->o;
	const struct ag_profile *rp = o->pty ? NULL : o->redact;	/* the PTY's is its relay's */
	struct ag_stream_opts so = { .name = "stdout", .max_output = o->max_output,
	    .redact = rp, .write = write_dst, .write_arg = &x->so.dst };
	struct ag_stream_opts se = { .name = "stderr", .max_output = o->max_output,
	    .redact = rp, .write = write_dst, .write_arg = &x->se.dst,
	    .watch = ag_run_refusal_words };

	ag_strbuf_init(&x->cap, o->capture_max ? o->capture_max : AG_RUN_CAPTURE_MAX);
	x->so.dst = o->out_fd;
	x->se.dst = o->err_fd;
	if (ag_stream_init(&x->so.st, &so, err) < 0 || ag_stream_init(&x->se.st, &se, err) < 0)
		return -1;
	/* the cut of stdout is said on stderr, beside the command's own errors */
	x->so.st.notice_to = &x->se.st;
	if ((x->script = build_script(o)) == NULL)
		return ag_err_set(err, "command too long");
	/* the runner's environment with the sandbox's settings (defused, preload) */
	if (o->sandbox != NULL && (x->senv = ag_sandbox_env(o->sandbox, o->env)) == NULL)
		return ag_err_set(err, "out of memory");
	if ((x->buf = malloc(RELAY_BUF)) == NULL)
		return ag_err_set(err, "out of memory");
	if (o->cmdlen > AG_RUN_ARGV_MAX && (x->textfd = command_memfd(o, err)) < 0)
		return -1;
	if (o->pty && (ag_pty_open(&x->pt, o->in_fd, err) < 0 ||
	    ag_sandbox_allow_terminal(o->sandbox, x->pt.slave, err) < 0))
		return -1;
	if ((!o->pty && (pipe2(x->outp, O_CLOEXEC) < 0 || pipe2(x->errp, O_CLOEXEC) < 0)) ||
	    (!o->no_capture && pipe2(x->capp, O_CLOEXEC) < 0) ||
	    (o->admit != NULL && pipe2(x->gate, O_CLOEXEC) < 0))
		return ag_err_set(err, "pipe: %s", strerror(errno));
	if (!o->pty)
		(void)fcntl(x->outp[0], F_SETPIPE_SZ, CMD_PIPE_SZ);
	if (o->exec_judge != NULL &&
	    (x->guard = ag_execguard_new(o->exec_judge, o->exec_judge_ctx,
	    ag_sandbox_unix_rules(o->sandbox), err)) == NULL)
		return -1;
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
close_pair(int p[2])
{
	close_fd(&p[0]);
	close_fd(&p[1]);
}

/* The runner started, admitted, and its pipes' far ends closed: 0, or -1 with err. */
static int
run_start(struct run *x, struct ag_err *err)
{
	const struct ag_run_opts *o = x->o;
	struct child_args ca;

	got_int = 0;
	got_alrm = 0;
	ca = (struct child_args){ .o = o, .script = x->script,
	    .env = x->senv != NULL ? x->senv : o->env, .outw = x->outp[1], .errw = x->errp[1],
	    .capw = x->capp[1], .textfd = x->textfd, .gater = x->gate[0], .guard = x->guard,
	    .parent = getpid(), .pt = o->pty ? &x->pt : NULL };
	if ((x->pid = spawn_runner(&ca)) < 0)
		return ag_err_set(err, "cannot start the runner: %s", strerror(errno));
	close_fd(&x->textfd);
	close_fd(&x->gate[0]);
	/*
	 * The tree's first exec (the runner itself) waits for the exec
	 * supervisor: started before the admission, so the shell starts while
	 * the record is made durable; it runs nothing before the gate opens.
	 */
	if (x->guard != NULL && ag_execguard_started(x->guard, err) < 0) {
		kill(x->pid, SIGKILL);
		(void)waitpid(x->pid, NULL, 0);
		return -1;
	}
	/* the runner starts while the command is admitted (its record written) */
	if (o->admit != NULL) {
		if (o->admit(o->admit_arg, err) < 0) {
			close_fd(&x->gate[1]);
			x->r->not_admitted = 1;
			kill(x->pid, SIGKILL);
			(void)waitpid(x->pid, NULL, 0);
			return -1;
		}
		/* a runner that ended already (no such directory...) says why
		 * itself below; the write fails then (SIGPIPE is ignored) */
		(void)!write(x->gate[1], "g", 1);
		close_fd(&x->gate[1]);
	}
	ag_sandbox_env_free(x->senv);
	x->senv = NULL;
	/* also here: no race with kill(-pid) below (in a PTY the child's setsid does it) */
	if (!o->pty)
		(void)setpgid(x->pid, x->pid);
	if (o->tty_fd >= 0 && !o->pty)
		(void)tcsetpgrp(o->tty_fd, x->pid);
	x->so.fd = x->outp[0];
	x->se.fd = x->errp[0];
	x->capfd = x->capp[0];
	x->outp[0] = x->errp[0] = x->capp[0] = -1;
	close_pair(x->outp);
	close_pair(x->errp);
	close_pair(x->capp);
	return 0;
}

/* The pipes path: stdout, stderr and the capture pipe until the runner is gone. */
static void
relay_pipes(struct run *x)
{
	const struct ag_run_opts *o = x->o;
	struct ag_run_result *r = x->r;
	struct ag_procwatch *pw = &x->pw;
	long long give_up_at = 0, revoke_at = x->start;
	pid_t pid = x->pid;

	ag_procwatch_start(pw, pid, o->timeout, x->start);
	if (pw->term_at)
		arm_timer(pw->term_at - x->start);	/* a write to a stalled client is cut short */
	for (;;) {
		struct pollfd pf[7];
		int npf = 0, i_out = -1, i_err = -1, i_cap = -1, i_sig, i_o1 = -1, i_o2 = -1,
		    i_pid = -1, was_timed_out = pw->timed_out;
		long long t = ag_now_ms(), tmo;

		if (got_int && !pw->exited) {
			kill(-pid, got_int);
			got_int = 0;
		}
		if (!pw->exited)
			(void)ag_run_check_revoked(o, r, t, &revoke_at);
		if (!pw->exited && ag_procwatch_step(pw, t, got_term || got_cancel ||
		    r->client_gone || r->revoked)) {
			/* the runner is gone: whatever it left behind goes too */
			r->terminated = pw->killed && got_term != 0;
			r->cancelled = pw->killed && got_cancel != 0;
			ag_runner_reap_all(ag_sandbox_keeper(o->sandbox));
			(void)ag_sandbox_sweep(o->sandbox);
			give_up_at = t + AG_KILL_GRACE_MS;
		}
		if (pw->timed_out && !was_timed_out)
			arm_timer(AG_KILL_GRACE_MS);
		if (pw->exited && x->so.fd < 0 && x->se.fd < 0 && x->capfd < 0)
			break;
		if (pw->exited && t >= give_up_at)
			break;	/* an escaped process holds a pipe: stop waiting */

		if (x->so.fd >= 0) {
			pf[npf] = (struct pollfd){ .fd = x->so.fd, .events = POLLIN };
			i_out = npf++;
		}
		if (x->se.fd >= 0) {
			pf[npf] = (struct pollfd){ .fd = x->se.fd, .events = POLLIN };
			i_err = npf++;
		}
		if (x->capfd >= 0) {
			pf[npf] = (struct pollfd){ .fd = x->capfd, .events = POLLIN };
			i_cap = npf++;
		}
		pf[npf] = (struct pollfd){ .fd = ag_sigpipe_fd(), .events = POLLIN };
		i_sig = npf++;
		if (ag_procwatch_fd(pw) >= 0) {
			pf[npf] = (struct pollfd){ .fd = ag_procwatch_fd(pw), .events = POLLIN };
			i_pid = npf++;
		}
		/* a client that disconnects shows up as an error on our output */
		if (!r->client_gone) {
			pf[npf] = (struct pollfd){ .fd = o->out_fd, .events = 0 };
			i_o1 = npf++;
			pf[npf] = (struct pollfd){ .fd = o->err_fd, .events = 0 };
			i_o2 = npf++;
		}
		tmo = ag_procwatch_wait_ms(pw, t, 1000);
		if (pw->exited && give_up_at - t < tmo)
			tmo = give_up_at - t < 0 ? 0 : give_up_at - t;
		if (ag_poll(pf, (size_t)npf, tmo) < 0) {
			r->client_gone = 1;
			continue;
		}
		if (pf[i_sig].revents & POLLIN)
			ag_sigpipe_drain();
		if (i_pid >= 0 && pf[i_pid].revents != 0)
			ag_procwatch_ready(pw);
		if (i_o1 >= 0 && ((pf[i_o1].revents & (POLLERR | POLLHUP)) ||
		    (pf[i_o2].revents & (POLLERR | POLLHUP))))
			r->client_gone = 1;
		if (i_out >= 0 && (pf[i_out].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    pump(&x->so, x->buf) < 0)
			r->client_gone = 1;
		if (i_err >= 0 && (pf[i_err].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    pump(&x->se, x->buf) < 0)
			r->client_gone = 1;
		if (i_cap >= 0 && (pf[i_cap].revents & (POLLIN | POLLHUP | POLLERR)))
			capture_read(&x->capfd, &x->cap, &x->overflow, x->buf);
		if (r->client_gone)
			x->so.st.cut = x->se.st.cut = 1;	/* nothing more to relay to */
	}
	x->wstatus = pw->wstatus;
	r->timed_out = pw->timed_out;
	r->truncated = x->so.st.truncated || x->se.st.truncated;
	r->bytes_out = x->so.st.bytes + x->se.st.bytes;
	r->refusal_said = x->se.st.watched != 0;
}

/* Everything the run opened is closed (a stream still open ends first). */
static void
run_close(struct run *x)
{
	struct ag_exec_denial *d;
	size_t nd;

	/* a stream still open (an escaped process holds it) shows what it held */
	(void)ag_stream_end(&x->so.st);
	(void)ag_stream_end(&x->se.st);
	ag_stream_free(&x->so.st);
	ag_stream_free(&x->se.st);
	close_pair(x->outp);
	close_pair(x->errp);
	close_pair(x->capp);
	close_pair(x->gate);
	close_fd(&x->so.fd);
	close_fd(&x->se.fd);
	close_fd(&x->capfd);
	close_fd(&x->textfd);
	ag_pty_close(&x->pt);
	ag_sandbox_env_free(x->senv);
	x->senv = NULL;
	if (x->guard != NULL) {
		ag_execguard_finish(x->guard, &d, &nd, NULL);
		ag_execguard_denials_free(d, nd);
		x->guard = NULL;
	}
	ag_strbuf_free(&x->cap);
	free(x->script);
	free(x->buf);
	x->script = x->buf = NULL;
}

/* The command has ended: what is left of its tree goes, and r is filled. */
static void
run_finish(struct run *x)
{
	const struct ag_run_opts *o = x->o;
	struct ag_run_result *r = x->r;
	size_t cstart, clen;

	(void)ag_stream_end(&x->so.st);
	(void)ag_stream_end(&x->se.st);
	ag_procwatch_close(&x->pw);
	arm_timer(0);
	got_alrm = 0;
	ag_pty_close(&x->pt);
	close_fd(&x->so.fd);
	close_fd(&x->se.fd);
	close_fd(&x->capfd);
	ag_runner_reap_all(ag_sandbox_keeper(o->sandbox));
	/* what the command left in its PID namespace goes too */
	if (ag_sandbox_sweep(o->sandbox) < 0)
		ag_log(LOG_ERR, "sandbox: the session's PID namespace is gone");
	/* the tree is gone: what the supervisor refused goes to the caller */
	r->ran_known = x->guard != NULL;
	ag_execguard_finish(x->guard, &r->denials, &r->ndenials, &r->ran);
	x->guard = NULL;
	if (o->tty_fd >= 0 && !o->pty)
		(void)tcsetpgrp(o->tty_fd, getpgrp());

	r->duration_ms = ag_now_ms() - x->start;
	if (WIFSIGNALED(x->wstatus)) {
		r->signal = WTERMSIG(x->wstatus);
		r->status = 128 + r->signal;
	} else
		r->status = WEXITSTATUS(x->wstatus);
	if (r->timed_out) {
		r->status = AG_RUN_STATUS_TIMEOUT;
		notice(o->err_fd, "agentgate: command timed out after %ld s and was killed\n",
		    o->timeout);
	}
	if (x->overflow)
		ag_log(LOG_WARNING, "environment capture larger than %zu bytes; ignored",
		    x->cap.limit);
	if (!x->overflow && !r->timed_out && ag_runner_capture_records(x->cap.data, x->cap.len,
	    &cstart, &clen)) {
		r->capture_ok = 1;
		r->capture_len = clen;
		memmove(x->cap.data, x->cap.data + cstart, r->capture_len);
		x->cap.data[r->capture_len] = '\0';
		r->capture = ag_strbuf_detach(&x->cap, NULL);
	}
}

int
ag_run(const struct ag_run_opts *o, struct ag_run_result *r, struct ag_err *err)
{
	struct run x = { .o = o, .r = r, .outp = { -1, -1 }, .errp = { -1, -1 },
	    .capp = { -1, -1 }, .gate = { -1, -1 }, .textfd = -1, .capfd = -1,
	    .pt = { .master = -1, .slave = -1, .peer = -1 }, .pw = { .pidfd = -1 },
	    .so = { .fd = -1 }, .se = { .fd = -1 }, .start = ag_now_ms() };

	memset(r, 0, sizeof(*r));
	if (run_prepare(&x, err) < 0 || run_start(&x, err) < 0) {
		run_close(&x);
		return -1;
	}
	if (o->pty)
		run_in_pty(o, r, &x.pt, x.pid, &x.capfd, &x.cap, &x.overflow, x.buf, &x.wstatus);
	else
		relay_pipes(&x);
	run_finish(&x);
	run_close(&x);
	return 0;
}

void
ag_run_result_free(struct ag_run_result *r)
{
	if (r == NULL)
		return;
	free(r->capture);
	r->capture = NULL;
	r->capture_len = 0;
	ag_execguard_denials_free(r->denials, r->ndenials);
	r->denials = NULL;
	r->ndenials = 0;
	ag_execguard_ran_free(&r->ran);
	r->ran_known = 0;
}
