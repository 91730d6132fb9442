/*
 * bench_sandbox.c - what the kernel sandbox adds to one command.
 *
 *   contrib/bench/bench_sandbox [N] [AGSANDBOX_SO]
 *
 * Runs N commands (`bash --noprofile --norc -c ':'`, the way the runner
 * starts them) with `sandbox: required` and with `sandbox: off`, the two
 * interleaved so load from other jobs hits both alike, and prints the mean
 * wall time per command, the difference (the sandbox's cost) and the ratio.
 * Also: the one-off ag_sandbox_prepare() cost (per session, or when the
 * profile, PATH or home changes), and the child-side setup alone (fork +
 * ag_sandbox_child + _exit vs fork + _exit).
 */
#include "agconfig.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "exec/sandbox.h"

static const char yaml_fmt[] =
    "version: 1\n"
    "gateway: { sandbox: %s }\n"
    "profiles:\n"
    "  b:\n"
    "    allow: [ls, cat, grep, sed, awk, git, find, python3]\n"
    "    paths: { read: [\"/\"], write: [\"/tmp\"] }\n"
    "    network: { connect: [443] }\n"
    "    limits: { processes: 512, open_files: 1024 }\n";

static char *env[] = { (char[]){ "PATH=/usr/local/bin:/usr/bin:/bin" }, (char[]){ "LANG=C" },
	(char[]){ "HOME=/tmp" }, NULL };

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static struct ag_config *
cfg_for(const char *mode)
{
	char yaml[1024];
	struct ag_err err;
	struct ag_config *cfg;

	snprintf(yaml, sizeof(yaml), yaml_fmt, mode);
	if ((cfg = ag_config_parse(yaml, strlen(yaml), "bench.yaml", &err)) == NULL) {
		fprintf(stderr, "bench_sandbox: %s\n", err.msg);
		exit(1);
	}
	return cfg;
}

/* one command, as the runner starts it; returns wall microseconds */
static double
one(const struct ag_sandbox *sb, char **cenv, int exec_bash)
{
	char script[128];
	char *argv[] = { (char[]){ "bash" }, (char[]){ "--noprofile" }, (char[]){ "--norc" },
	    (char[]){ "-c" }, script, NULL };
	double t0 = now_us();
	pid_t pid;
	int st, inner;

	snprintf(script, sizeof(script), "%s:\n", ag_sandbox_script_guard(sb));
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (ag_sandbox_child(sb, &inner) < 0)
			_exit(125);
		if (!exec_bash)
			_exit(0);
		if (ag_sandbox_child_fds(sb, inner, 3, 0) < 0)
			_exit(125);
		execve(AG_BASH, argv, cenv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_sandbox: command failed (status %d)\n", st);
		exit(1);
	}
	return now_us() - t0;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, i;
	struct ag_config *on_cfg, *off_cfg;
	struct ag_sandbox *on, *off;
	struct ag_sandbox_info info;
	struct ag_err err;
	char **on_env, **off_env;
	double t_on = 0, t_off = 0, c_on = 0, c_off = 0, prep = 0;
	const int nprep = 20;

	if (n < 10)
		n = 10;
	if (argc > 2)
		ag_sandbox_set_preload(argv[2]);
	on_cfg = cfg_for("required");
	off_cfg = cfg_for("off");
	for (i = 0; i < nprep; i++) {
		double t0 = now_us();

		on = ag_sandbox_prepare(on_cfg, ag_config_profile(on_cfg, "b"), "/tmp", "/tmp", env, &err);
		prep += now_us() - t0;
		if (on == NULL) {
			fprintf(stderr, "bench_sandbox: %s\n", err.msg);
			return 1;
		}
		if (i + 1 < nprep)
			ag_sandbox_free(on);
	}
	off = ag_sandbox_prepare(off_cfg, ag_config_profile(off_cfg, "b"), "/tmp", "/tmp", env, &err);
	on_env = ag_sandbox_env(on, env);
	off_env = ag_sandbox_env(off, env);
	if (off == NULL || on_env == NULL || off_env == NULL)
		return 1;
	ag_sandbox_get_info(on, &info);
	/* warm up caches and the page cache */
	for (i = 0; i < 10; i++) {
		(void)one(on, on_env, 1);
		(void)one(off, off_env, 1);
	}
	for (i = 0; i < n; i++) {
		t_on += one(on, on_env, 1);
		t_off += one(off, off_env, 1);
		c_on += one(on, on_env, 0);
		c_off += one(off, off_env, 0);
	}
	printf("sandbox: Landlock ABI %d, %zu executable files, %zu rules, seccomp %s\n",
	    info.abi, info.nexec, info.nrules, info.seccomp ? "on" : "off");
	printf("prepare (once per session/profile):   %8.1f us\n", prep / nprep);
	printf("per command, %d runs each, interleaved:\n", n);
	printf("  bash -c ':'  sandbox off:            %8.1f us\n", t_off / n);
	printf("  bash -c ':'  sandbox required:       %8.1f us\n", t_on / n);
	printf("  added by the sandbox:                %8.1f us  (%.2fx; goal <= 300 us)\n",
	    (t_on - t_off) / n, t_on / t_off);
	printf("  child setup alone (fork+setup+exit): %8.1f us vs %.1f us without (%.2fx)\n",
	    c_on / n, c_off / n, c_on / c_off);
	ag_sandbox_env_free(on_env);
	ag_sandbox_env_free(off_env);
	ag_sandbox_free(on);
	ag_sandbox_free(off);
	ag_config_free(on_cfg);
	ag_config_free(off_cfg);
	return 0;
}
