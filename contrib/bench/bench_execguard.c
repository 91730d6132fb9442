/*
 * bench_execguard.c - what the exec supervisor (src/exec/execguard.c) adds to
 * one exec.
 *
 *   contrib/bench/bench_execguard [N] [ROUNDS]
 *
 * A child sets no_new_privs and then runs N times fork + execve(/bin/true)
 * + waitpid from a C loop, once without and once with the supervisor's
 * filter (every execve stopped by seccomp user notification, read and
 * judged by the gateway's thread with a judge that allows everything, and
 * continued), in ROUNDS interleaved rounds so load from other jobs hits
 * both alike.  The child times its own loop (the set-up of the filter is
 * not counted; it is printed apart).  Prints the mean wall time per exec
 * of each, the difference (the supervisor's cost per exec) and the ratio,
 * and the same for CPU time (user + system of the whole tree and of the
 * supervisor thread, from getrusage), which load from other jobs disturbs
 * less than wall time.  Not a test: no thresholds.
 */
#include "agconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/execguard.h"

static char *const true_argv[] = { (char[]){ "true" }, NULL };
static char *const no_env[] = { NULL };

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* user + system CPU microseconds of who (RUSAGE_SELF or RUSAGE_CHILDREN) */
static double
cpu_us(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int
allow_all(void *ctx, const struct ag_exec_req *req, char *reason, size_t reasonsz,
    char *rule, size_t rulesz)
{
	(void)ctx;
	(void)req;
	(void)reason;
	(void)reasonsz;
	(void)rule;
	(void)rulesz;
	return 1;
}

/* Child: n execs of /bin/true; writes the loop's microseconds to fd. */
static void __attribute__((noreturn))
exec_loop(int n, int fd)
{
	double t0 = now_us(), dt;
	int i, st;

	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			_exit(2);
		if (p == 0) {
			execve("/bin/true", true_argv, no_env);
			_exit(127);
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			_exit(3);
	}
	dt = now_us() - t0;
	_exit(write(fd, &dt, sizeof(dt)) == (ssize_t)sizeof(dt) ? 0 : 4);
}

/*
 * One round of n execs, with or without the supervisor.  Returns the
 * loop's wall time in microseconds; *setup gets fork-to-ready of the child
 * (filter installed and listener passed, or only no_new_privs), *cpu the
 * CPU time of the round (the tree and this process, the supervisor thread).
 */
static double
round_of(int n, int guarded, double *setup, double *cpu)
{
	double c0 = cpu_us(RUSAGE_SELF) + cpu_us(RUSAGE_CHILDREN);
	struct ag_execguard *g = NULL;
	struct ag_exec_denial *d;
	struct ag_err err;
	double dt = 0, t0;
	size_t nd;
	int p[2], rdy[2], st;
	pid_t pid;
	char c;

	if (pipe(p) < 0 || pipe(rdy) < 0) {
		perror("pipe");
		exit(1);
	}
	if (guarded && (g = ag_execguard_new(allow_all, NULL, NULL, &err)) == NULL) {
		fprintf(stderr, "bench_execguard: %s\n", err.msg);
		exit(1);
	}
	t0 = now_us();
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		close(rdy[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    (g != NULL && ag_execguard_child(g) < 0))
			_exit(5);
		if (write(rdy[1], "r", 1) != 1)
			_exit(6);
		close(rdy[1]);
		exec_loop(n, p[1]);
	}
	close(p[1]);
	close(rdy[1]);
	if (g != NULL && ag_execguard_started(g, &err) < 0) {
		fprintf(stderr, "bench_execguard: %s\n", err.msg);
		exit(1);
	}
	if (read(rdy[0], &c, 1) != 1) {
		fprintf(stderr, "bench_execguard: the child could not set up\n");
		exit(1);
	}
	*setup += now_us() - t0;
	if (read(p[0], &dt, sizeof(dt)) != (ssize_t)sizeof(dt))
		dt = -1;
	close(p[0]);
	close(rdy[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || dt < 0) {
		fprintf(stderr, "bench_execguard: the exec loop failed (status %d)\n", st);
		exit(1);
	}
	if (g != NULL) {
		ag_execguard_finish(g, &d, &nd);
		ag_execguard_denials_free(d, nd);
	}
	*cpu += cpu_us(RUSAGE_SELF) + cpu_us(RUSAGE_CHILDREN) - c0;
	return dt;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	double t_off = 0, t_on = 0, s_off = 0, s_on = 0, c_off = 0, c_on = 0, junk = 0;
	int per, i;

	if (rounds < 1)
		rounds = 1;
	if (n < rounds)
		n = rounds;
	per = n / rounds;
	n = per * rounds;
	/* warm up the page cache and the thread machinery */
	(void)round_of(20, 0, &junk, &junk);
	(void)round_of(20, 1, &junk, &junk);
	for (i = 0; i < rounds; i++) {
		t_off += round_of(per, 0, &s_off, &c_off);
		t_on += round_of(per, 1, &s_on, &c_on);
	}
	printf("fork + execve(/bin/true) + waitpid, %d execs each, %d interleaved rounds:\n",
	    n, rounds);
	printf("  without the supervisor:            %8.1f us per exec\n", t_off / n);
	printf("  with the supervisor (allow all):   %8.1f us per exec\n", t_on / n);
	printf("  added per exec:                    %8.1f us  (%.2fx)\n", (t_on - t_off) / n,
	    t_on / t_off);
	printf("  CPU per exec (tree + supervisor):  %8.1f us vs %.1f us without  (%.2fx)\n",
	    c_on / n, c_off / n, c_on / c_off);
	printf("  child set-up (fork to ready):      %8.1f us vs %.1f us without\n",
	    s_on / rounds, s_off / rounds);
	return 0;
}
