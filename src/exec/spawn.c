/* spawn.c - the child side of starting a runner shell; see spawn.h */
#include "agconfig.h"
#include "common/compat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "common/misc.h"
#include "exec/pty.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "exec/spawn.h"

/* "agentgate: PRE WHAT: WHY" on fd */
static void
say(int fd, const char *pre, const char *what, const char *why)
{
	char msg[PATH_MAX + 256];
	int n = snprintf(msg, sizeof(msg), "agentgate: %s%s: %s\n", pre, what, why);

	if (n > 0)
		(void)!write(fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

void
ag_spawn_fail(int fd, const char *what)
{
	say(fd, "", what, strerror(errno));
	_exit(126);
}

/*
 * Every signal back to its default: the ones the gateway ignores, and
 * every one it catches, since until exec a handler would run here, on
 * memory that may be the gateway's.
 */
static void
default_signals(void)
{
	struct sigaction dfl, cur;
	sigset_t none;
	int sig;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &cur) < 0)
			continue;
		if (cur.sa_handler != SIG_DFL)
			(void)sigaction(sig, &dfl, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void
ag_spawn_process(const struct ag_spawn *s)
{
	/* in a PTY: a new session on it, which is also a new process group */
	if (s->pt == NULL)
		setpgid(0, 0);
	else if (ag_pty_child_setup(s->pt) < 0)
		_exit(126);
	/*
	 * If the gateway dies, so does the runner shell; and if it died
	 * before that was asked, the parent is no longer what it was (in
	 * the session's PID namespace, an orphan's parent is its init).
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != s->parent)
		_exit(126);
	if (s->tty >= 0 && s->pt == NULL)
		(void)tcsetpgrp(s->tty, getpid());	/* SIGTTOU still ignored here */
	default_signals();
}

void
ag_spawn_fds(const struct ag_spawn *s, int inner)
{
	int in = -1, out = -1, err = -1, cap = s->cap, script = s->script, gate = s->gate;
	int first, nkeep;

	/* above every target first, so that no dup2 below clobbers a source */
	if (s->pt == NULL && ((in = fcntl(s->in, F_DUPFD, 10)) < 0 ||
	    (out = fcntl(s->out, F_DUPFD, 10)) < 0 || (err = fcntl(s->err, F_DUPFD, 10)) < 0))
		_exit(126);
	if ((cap >= 0 && (cap = fcntl(cap, F_DUPFD, 10)) < 0) ||
	    (script >= 0 && (script = fcntl(script, F_DUPFD, 10)) < 0) ||
	    (gate >= 0 && (gate = fcntl(gate, F_DUPFD, 10)) < 0) ||
	    (inner >= 0 && (inner = fcntl(inner, F_DUPFD, 10)) < 0))
		_exit(126);
	/* with a PTY, 0, 1 and 2 are the terminal already */
	if (s->pt == NULL && (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0))
		_exit(126);
	if ((cap >= 0 && dup2(cap, AG_RUN_CAPTURE_FD) < 0) ||
	    (script >= 0 && dup2(script, AG_RUN_SCRIPT_FD) < 0) ||
	    (gate >= 0 && dup2(gate, AG_RUN_GATE_FD) < 0))
		_exit(126);
	/* kept: the capture, the inner ruleset, the script and the gate */
	first = cap >= 0 ? AG_RUN_CAPTURE_FD + 1 : AG_RUN_CAPTURE_FD;
	nkeep = gate >= 0 ? 2 : script >= 0;
	if (ag_sandbox_child_fds(NULL, inner, first, nkeep) < 0)
		_exit(126);
	if (gate >= 0 && script < 0)
		close(AG_RUN_SCRIPT_FD);	/* whatever was there */
	if (chdir(s->cwd) < 0) {
		say(2, "cannot enter ", s->cwd, strerror(errno));
		_exit(1);
	}
}

void
ag_spawn_exec(const struct ag_spawn *s)
{
	execve(s->path, s->argv, s->env);
	say(2, "cannot run ", s->path, strerror(errno));
	_exit(127);
}
