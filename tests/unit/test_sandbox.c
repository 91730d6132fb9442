/*
 * test_sandbox.c - the kernel sandbox, tried from the inside.
 *
 * Each case prepares a sandbox from an inline profile, forks, enters it the
 * way the runner does (ag_sandbox_child, then bash with agsandbox.so
 * preloaded and the guard line first) and runs a script that tries one way
 * out.  Escapes write a canary inside the writable directory, so only the
 * execute rule can stop them: the test asserts the canary is absent and the
 * status non-zero, and that the benign twin of each escape works.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "exec/sandbox.h"

#ifndef AG_BASH
#define AG_BASH "/bin/bash"
#endif
#define LDSO "/lib64/ld-linux-x86-64.so.2"

static char base[64];		/* /tmp/agsbx.XXXXXX: readable, not writable */
static char wdir[128];		/* base/w: paths.write */
static int port_ok, port_bad;	/* listeners on 127.0.0.1 */
static int lsock_ok = -1, lsock_bad = -1;
static int have_python;
static char *base_env[] = { (char[]){ "PATH=/usr/bin:/bin" }, (char[]){ "LANG=C" },
	(char[]){ "HOME=/root" }, NULL };

static int
listen_any(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static const char *write_list;	/* NULL: the writable test directory */

static struct ag_config *
config_for(const char *mode, const char *extra_allow, const char *read, const char *limits)
{
	char wl[256];

	char yaml[4096];
	struct ag_err err;
	struct ag_config *cfg;

	if (write_list != NULL)
		snprintf(wl, sizeof(wl), "%s", write_list);
	else
		snprintf(wl, sizeof(wl), "\"%s\"", wdir);
	snprintf(yaml, sizeof(yaml),
	    "version: 1\n"
	    "gateway: { runner: %s, sandbox: %s }\n"
	    "profiles:\n"
	    "  t:\n"
	    "    allow: [ls, cat, awk, find, cp, mv, touch, rm, mkdir, ln, tee, sed, sleep, python3%s]\n"
	    "    paths: { read: [%s], write: [%s] }\n"
	    "    network: { connect: [%d], bind: [] }\n"
	    "%s",
	    AG_BASH, mode, extra_allow, read, wl, port_ok, limits);
	cfg = ag_config_parse(yaml, strlen(yaml), "test.yaml", &err);
	if (cfg == NULL)
		fail_msg("config: %s", err.msg);
	return cfg;
}

static struct ag_sandbox *
prepare(const struct ag_config *cfg, struct ag_err *err)
{
	return ag_sandbox_prepare(cfg, ag_config_profile(cfg, "t"), NULL, "/root", wdir, base_env, err);
}

/* Run script in bash under sb, the way the runner does; shell-style status. */
static int
run_in(const struct ag_sandbox *sb, const char *script, int as_nobody, int drop_preload)
{
	char **env = ag_sandbox_env(sb, base_env);
	char *full;
	pid_t pid;
	int st;

	assert_non_null(env);
	if (drop_preload) {	/* simulate a loader that ignored LD_PRELOAD */
		size_t i, j;

		for (i = j = 0; env[i] != NULL; i++) {
			if (strncmp(env[i], "LD_PRELOAD=", 11) == 0)
				free(env[i]);
			else
				env[j++] = env[i];
		}
		env[j] = NULL;
	}
	assert_true(asprintf(&full, "%s%s\n", ag_sandbox_script_guard(sb), script) > 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { (char[]){ "bash" }, (char[]){ "--noprofile" }, (char[]){ "--norc" },
		    (char[]){ "-c" }, full, NULL };
		int fd = open("/dev/null", O_RDONLY), inner;

		if (fd < 0 || dup2(fd, 0) < 0)
			_exit(125);
		/* as sshd leaves the gateway: an ordinary, dumpable user process */
		if (as_nobody && getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 ||
		    setuid(65534) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
			_exit(125);
		if (ag_sandbox_child(sb, &inner) < 0)
			_exit(125);
		if (ag_sandbox_child_fds(sb, inner, 3, 0) < 0)
			_exit(125);
		execve(AG_BASH, argv, env);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	free(full);
	ag_sandbox_env_free(env);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Prepare and run script as nobody, as a gateway that sshd started for
 * that account would (prepare makes namespaces the preparing account owns,
 * which only it can join): the script's status.
 */
static int
as_nobody(const struct ag_config *cfg, const char *script)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct ag_sandbox *sb;
		struct ag_err err;
		int rc;

		if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 ||
		    setuid(65534) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
			_exit(125);
		if ((sb = prepare(cfg, &err)) == NULL)
			_exit(124);
		rc = run_in(sb, script, 0, 0);
		ag_sandbox_free(sb);
		_exit(rc);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int
exists(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", wdir, name);
	return lstat(p, &st) == 0;
}

static int
base_exists(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, name);
	return lstat(p, &st) == 0;
}

/* run a formatted script under the default required sandbox */
static struct ag_config *g_cfg;
static struct ag_sandbox *g_sb;

static int
sh(const char *fmt, ...) AG_PRINTF(1, 2);

static int
sh(const char *fmt, ...)
{
	char script[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	return run_in(g_sb, script, 0, 0);
}

static int
setup_all(void **state)
{
	char p[256];
	int fd;

	(void)state;
	snprintf(base, sizeof(base), "/tmp/agsbx.XXXXXX");
	if (mkdtemp(base) == NULL)
		return -1;
	chmod(base, 0755);
	snprintf(wdir, sizeof(wdir), "%s/w", base);
	if (mkdir(wdir, 01777) < 0 || chmod(wdir, 01777) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/outside", base);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return -1;
	if (write(fd, "keep\n", 5) != 5)
		return -1;
	close(fd);
	snprintf(p, sizeof(p), "%s/src", wdir);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return -1;
	close(fd);
	if ((lsock_ok = listen_any(&port_ok)) < 0 || (lsock_bad = listen_any(&port_bad)) < 0)
		return -1;
	have_python = access("/usr/bin/python3", X_OK) == 0;
	ag_sandbox_set_preload(TOP_BUILDDIR "/src/agsandbox.so");
	return 0;
}

static int
teardown_all(void **state)
{
	char cmd[128];

	(void)state;
	close(lsock_ok);
	close(lsock_bad);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static int
setup_default(void **state)
{
	struct ag_err err;

	(void)state;
	if (ag_sandbox_abi() < AG_SANDBOX_ABI_NEEDED)
		return 0;
	g_cfg = config_for("required", "", "\"/\"", "");
	g_sb = prepare(g_cfg, &err);
	if (g_sb == NULL)
		fail_msg("prepare: %s", err.msg);
	return 0;
}

static int
teardown_default(void **state)
{
	(void)state;
	ag_sandbox_free(g_sb);
	ag_config_free(g_cfg);
	g_sb = NULL;
	g_cfg = NULL;
	return 0;
}

#define NEED_LANDLOCK() do { \
	if (ag_sandbox_abi() < AG_SANDBOX_ABI_NEEDED) skip(); \
} while (0)
#define NEED_PYTHON() do { if (!have_python) skip(); } while (0)

/* ---- execute ----------------------------------------------------------- */

static void
runs_allowed_program_and_refuses_others(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(sh("ls %s >/dev/null", wdir), 0);
	assert_int_equal(sh("touch %s/allowed-ok", wdir), 0);
	assert_true(exists("allowed-ok"));
	/* bash reports a refused exec as 126 */
	assert_int_equal(sh("/usr/bin/id -u >/dev/null 2>&1"), 126);
	NEED_PYTHON();
	assert_int_equal(sh("python3 -c 'import os\ntry: os.execv(\"/usr/bin/id\", [\"id\"])\n"
	    "except PermissionError: raise SystemExit(13)'"), 13);
}

/* A wrapper the policy understands runs what it wraps, and lends it no
 * right: the inner program must be executable on its own. */
static void
wrappers_run_allowed_programs_only(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(sh("timeout 30 ls %s >/dev/null", wdir), 0);
	assert_int_equal(sh("env FOO=1 ls %s >/dev/null && nice -n 1 ls %s >/dev/null", wdir, wdir),
	    0);
	assert_int_equal(sh("echo %s | xargs ls >/dev/null", wdir), 0);
	assert_int_equal(sh("nohup ls %s >/dev/null 2>&1", wdir), 0);
	/* ... but not anything else */
	assert_int_equal(sh("timeout 30 id -u >/dev/null 2>&1"), 126);
	assert_int_equal(sh("env id -u >/dev/null 2>&1"), 126);
	assert_int_equal(sh("echo -u | xargs id >/dev/null 2>&1"), 126);
	assert_int_equal(sh("env sh -c true >/dev/null 2>&1"), 126);
}

static void
preload_is_scrubbed_and_fd_closed(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(sh("[ -z \"${LD_PRELOAD-}\" ] && [ -z \"${%s-}\" ]", AG_SANDBOX_FD_ENV), 0);
	assert_int_equal(sh("{ : >&%d; } 2>/dev/null && exit 9; exit 0", AG_SANDBOX_FD), 0);
}

static void
guard_fails_closed_without_preload(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(run_in(g_sb, "touch " "/tmp/x-never", 0, 1), 126);
}

static void
shells_are_not_executable(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_not_equal(sh("/bin/sh -c 'touch %s/c-sh'", wdir), 0);
	assert_int_not_equal(sh("/bin/bash -c 'touch %s/c-bash'", wdir), 0);
	assert_int_not_equal(sh("/usr/bin/bash -c 'touch %s/c-usrbash'", wdir), 0);
	assert_false(exists("c-sh"));
	assert_false(exists("c-bash"));
	assert_false(exists("c-usrbash"));
}

static void
runner_not_reexecutable_through_proc(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_not_equal(sh("/proc/self/exe -c 'touch %s/c-self'", wdir), 0);
	assert_int_not_equal(sh("/proc/$$/exe -c 'touch %s/c-pid'", wdir), 0);
	assert_int_not_equal(sh("exec 7</bin/bash && /dev/fd/7 -c 'touch %s/c-fd'", wdir), 0);
	assert_false(exists("c-self"));
	assert_false(exists("c-pid"));
	assert_false(exists("c-fd"));
	NEED_PYTHON();
	/* an O_PATH fd needs no read right; executing it still needs EXECUTE */
	assert_int_not_equal(sh("python3 -c 'import os\nfd = os.open(\"/bin/bash\", os.O_PATH)\n"
	    "os.execve(fd, [\"bash\", \"-c\", \"touch %s/c-opath\"], {})'", wdir), 0);
	assert_false(exists("c-opath"));
}

static void
loader_cannot_run_the_shell(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(sh(LDSO " /usr/bin/touch %s/ldso-benign", wdir), 0);
	assert_true(exists("ldso-benign"));
	assert_int_not_equal(sh(LDSO " /bin/bash -c 'touch %s/c-ldso'", wdir), 0);
	assert_int_not_equal(sh(LDSO " /bin/dash -c 'touch %s/c-ldso-dash'", wdir), 0);
	/* not a shell, but not allowed: programs are not data either */
	assert_int_not_equal(sh(LDSO " /usr/bin/id -u >/dev/null"), 0);
	assert_false(exists("c-ldso"));
	assert_false(exists("c-ldso-dash"));
	NEED_PYTHON();
	assert_int_not_equal(sh("python3 -c 'import os\nos.execv(\"" LDSO "\", [\"ld.so\", "
	    "\"/bin/bash\", \"-c\", \"touch %s/c-ldso-py\"])'", wdir), 0);
	assert_false(exists("c-ldso-py"));
}

static void
shell_cannot_be_copied(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_not_equal(sh("cp /bin/bash %s/b", wdir), 0);
	assert_int_not_equal(sh("cat /bin/sh > %s/s; chmod +x %s/s; %s/s -c 'touch %s/c-copy'",
	    wdir, wdir, wdir, wdir), 0);
	assert_false(exists("c-copy"));
	/* a copy of an allowed program is not executable where it can be written */
	assert_int_equal(sh("cp /usr/bin/touch %s/t", wdir), 0);
	assert_int_equal(sh("%s/t %s/c-copied-touch", wdir, wdir), 126);
	assert_false(exists("c-copied-touch"));
	/* nor can the loader map it: the write roots are noexec inside */
	assert_int_not_equal(sh(LDSO " %s/t %s/c-ldso-copy", wdir, wdir), 0);
	assert_false(exists("c-ldso-copy"));
	/* bytes written by the shell itself fare no better */
	assert_int_not_equal(sh("printf '\\177ELF' > %s/e; " LDSO " %s/e", wdir, wdir), 0);
}

static void
memfd_exec_is_refused(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	NEED_PYTHON();
	/* memfd files are outside Landlock's view: the seccomp filter stops them */
	assert_int_equal(sh("python3 -c 'import os\ntry: os.memfd_create(\"x\")\n"
	    "except PermissionError: raise SystemExit(13)'"), 13);
	assert_int_not_equal(sh("python3 -c 'import os\nfd = os.memfd_create(\"x\", 8)\n"
	    "os.write(fd, open(\"/usr/bin/touch\", \"rb\").read())\n"
	    "os.execve(fd, [\"touch\", \"%s/c-memfd\"], {})'", wdir), 0);
	assert_false(exists("c-memfd"));
}

static void
escape_hatches_of_allowed_programs_fail(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_not_equal(sh("awk 'BEGIN { exit system(\"touch %s/c-awk\") }'", wdir), 0);
	/* -exec ... + makes find's status report the failed exec; with \\; it does not */
	assert_int_not_equal(sh("find %s -maxdepth 0 -exec /bin/sh -c 'touch %s/c-find' {} +",
	    wdir, wdir), 0);
	(void)sh("find %s -maxdepth 0 -exec /bin/sh -c 'touch %s/c-find' \\;", wdir, wdir);
	/* GNU sed reports a failed `e` but exits 0: only the canary tells */
	(void)sh("sed -n '1e touch %s/c-sed' /etc/hostname", wdir);
	assert_false(exists("c-awk"));
	assert_false(exists("c-find"));
	assert_false(exists("c-sed"));
	/* the benign twin: find -exec of an allowed program works */
	assert_int_equal(sh("find %s/src -exec touch %s/find-ok \\;", wdir, wdir), 0);
	assert_true(exists("find-ok"));
	NEED_PYTHON();
	assert_int_not_equal(sh("python3 -c 'import os\n"
	    "raise SystemExit(os.system(\"touch %s/c-py\") >> 8)'", wdir), 0);
	assert_int_not_equal(sh("python3 -c 'import subprocess\n"
	    "subprocess.run([\"/bin/sh\", \"-c\", \"touch %s/c-sub\"], check=True)'", wdir), 0);
	assert_false(exists("c-py"));
	assert_false(exists("c-sub"));
}

/* ---- write and read ------------------------------------------------------ */

static void
writes_only_beneath_paths_write(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	assert_int_equal(sh("echo hi > %s/inside && mkdir %s/d && ln -s x %s/l && mv %s/inside %s/d/",
	    wdir, wdir, wdir, wdir, wdir), 0);
	assert_true(exists("d/inside"));
	assert_int_not_equal(sh("touch %s/new-outside", base), 0);
	assert_int_not_equal(sh("echo x > %s/outside", base), 0);
	assert_int_not_equal(sh(": > %s/outside", base), 0);
	assert_int_not_equal(sh("echo x | tee %s/tee-outside", base), 0);
	assert_int_not_equal(sh("cp %s/src %s/cp-outside", wdir, base), 0);
	assert_int_not_equal(sh("mv %s/src %s/mv-outside", wdir, base), 0);
	assert_int_not_equal(sh("mkdir %s/dir-outside", base), 0);
	assert_int_not_equal(sh("ln -s x %s/ln-outside", base), 0);
	assert_int_not_equal(sh("rm -f %s/outside", base), 0);
	assert_int_not_equal(sh("sed -i s/keep/gone/ %s/outside", base), 0);
	assert_false(base_exists("new-outside"));
	assert_false(base_exists("tee-outside"));
	assert_false(base_exists("cp-outside"));
	assert_false(base_exists("mv-outside"));
	assert_false(base_exists("dir-outside"));
	assert_false(base_exists("ln-outside"));
	assert_true(base_exists("outside"));
	assert_int_equal(sh("[ \"$(cat %s/outside)\" = keep ]", base), 0);
	assert_true(exists("src"));
	/* devices the command's own I/O needs */
	assert_int_equal(sh("echo x > /dev/null && cat /dev/null"), 0);
}

static void
reads_limited_to_paths_read(void **state)
{
	struct ag_config *cfg;
	struct ag_sandbox *sb;
	struct ag_err err;
	char read[160], script[512];

	(void)state;
	NEED_LANDLOCK();
	snprintf(read, sizeof(read), "\"%s\"", wdir);
	cfg = config_for("required", "", read, "");
	sb = prepare(cfg, &err);
	assert_non_null(sb);
	/* programs still start: loader, libraries, locale are computed */
	snprintf(script, sizeof(script), "ls %s > /dev/null && cat %s/src", wdir, wdir);
	assert_int_equal(run_in(sb, script, 0, 0), 0);
	assert_int_not_equal(run_in(sb, "cat /etc/hostname > /dev/null", 0, 0), 0);
	assert_int_not_equal(run_in(sb, "ls /root > /dev/null", 0, 0), 0);
	snprintf(script, sizeof(script), "cat %s/outside", base);
	assert_int_not_equal(run_in(sb, script, 0, 0), 0);
	ag_sandbox_free(sb);
	ag_config_free(cfg);
	/* with read: ["/"] everything but programs is readable */
	assert_int_equal(sh("cat /etc/hostname > /dev/null && ls /usr/bin > /dev/null"), 0);
	assert_int_not_equal(sh("cat /usr/bin/id > /dev/null"), 0);
}

/* ---- network and scope --------------------------------------------------- */

/*
 * The session's network namespace holds its own loopback and nothing
 * else: a listener of the host is out of reach, even on the port the
 * profile's older `connect` list names (that now means "through the
 * proxy"); what a command listens on is its own; the egress proxy's
 * listener is in the namespace, and the gateway holds it.
 */
static void
network_is_the_namespaces_own(void **state)
{
	int fds[2], n, c;

	(void)state;
	NEED_LANDLOCK();
	NEED_PYTHON();
	assert_int_not_equal(sh("python3 -c 'import socket\n"
	    "socket.create_connection((\"127.0.0.1\", %d))' 2>/dev/null", port_ok), 0);
	assert_int_not_equal(sh("python3 -c 'import socket\n"
	    "socket.create_connection((\"127.0.0.1\", %d))' 2>/dev/null", port_bad), 0);
	/* bash's own /dev/tcp is a connect too */
	assert_int_not_equal(sh("exec 5<>/dev/tcp/127.0.0.1/%d", port_ok), 0);
	/* a server and its client inside one command: the namespace's loopback */
	assert_int_equal(sh("python3 -c 'import socket\ns = socket.socket()\n"
	    "s.bind((\"127.0.0.1\", 0))\ns.listen()\n"
	    "socket.create_connection(s.getsockname()).close()'"), 0);
	/* UDP and MPTCP stay inside it too; VSOCK and packet sockets are refused */
	assert_int_equal(sh("python3 -c 'import socket\nsocket.socket(socket.AF_INET, "
	    "socket.SOCK_DGRAM)'"), 0);
	assert_int_equal(sh("python3 -c 'import socket\ntry: socket.socket(40, "
	    "socket.SOCK_STREAM)\nexcept PermissionError: raise SystemExit(13)'"), 13);
	assert_int_equal(sh("python3 -c 'import socket\ntry: socket.socket(17, "
	    "socket.SOCK_RAW)\nexcept PermissionError: raise SystemExit(13)'"), 13);
	assert_int_equal(sh("python3 -c 'import socket\nsocket.socket(socket.AF_UNIX)'"), 0);
	/* io_uring: ENOSYS (a socket made through it is never seen by seccomp) */
	assert_int_equal(sh("python3 -c 'import ctypes\nr = ctypes.CDLL(None, use_errno=True)"
	    ".syscall(425, 8, ctypes.create_string_buffer(120))\n"
	    "raise SystemExit(38 if r == -1 and ctypes.get_errno() == 38 else 1)'"), 38);
	/* no user namespace of its own (nf_tables and the rest would follow):
	 * unshare refused, clone3 ENOSYS; a plain fork still works */
	assert_int_equal(sh("python3 -c 'import ctypes, os\nl = ctypes.CDLL(None, use_errno=True)\n"
	    "r = l.unshare(0x10000000)\ne = ctypes.get_errno()\n"
	    "r3 = l.syscall(435, None, 0)\ne3 = ctypes.get_errno()\n"
	    "p = os.fork()\nos._exit(0) if p == 0 else os.waitpid(p, 0)\n"
	    "raise SystemExit(42 if (r, e, r3, e3) == (-1, 13, -1, 38) else 1)'"), 42);
	assert_int_not_equal(sh("unshare -U true 2>/dev/null"), 0);
	/* the proxy's listener: a connection made inside waits on the fd the
	 * gateway holds */
	n = ag_sandbox_egress_fds(g_sb, fds);
	assert_true(n >= 1);
	assert_int_equal(sh("exec 5<>/dev/tcp/127.0.0.1/%d", AG_EGRESS_PORT), 0);
	assert_true((c = accept4(fds[0], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0);
	close(c);
}

static void
cannot_signal_outside_its_tree(void **state)
{
	(void)state;
	NEED_LANDLOCK();
	/* signal 0 is checked like any other: the parent (this test) is out of reach */
	assert_int_not_equal(sh("kill -0 $PPID 2>/dev/null"), 0);
	assert_int_not_equal(sh("kill -0 1 2>/dev/null"), 0);
	/* inside it, signals work: the child is killed (143), whenever it runs */
	assert_int_equal(sh("kill -0 $$ || exit 1; sleep 300 & p=$!; kill $p || exit 2; "
	    "wait $p; [ $? -eq 143 ]"), 0);
}

/* ---- limits ---------------------------------------------------------------- */

static void
fork_bomb_is_contained(void **state)
{
	struct ag_config *cfg;
	struct ag_sandbox *sb;
	struct ag_err err;

	(void)state;
	NEED_LANDLOCK();
	NEED_PYTHON();
	/* as nobody (root is exempt from RLIMIT_NPROC), who cannot join the
	 * namespaces root would prepare: nobody prepares them too */
	write_list = "";
	cfg = config_for("required", "", "\"/\"", "    limits: { processes: 24 }\n");
	write_list = NULL;
	/*
	 * A bounded bomb: at most 200 forks, each child lingers until the
	 * parent is done (the pipe's write end closes: an event, where a
	 * sleep would let early children go on a slow machine and free their
	 * slots); exit 0 when the limit stopped it well before that.
	 */
	assert_int_equal(as_nobody(cfg, "python3 -c 'import os\nr, w = os.pipe()\nn = 0\n"
	    "for i in range(200):\n"
	    "    try: pid = os.fork()\n"
	    "    except OSError: break\n"
	    "    if pid == 0:\n"
	    "        os.close(w); os.read(r, 1); os._exit(0)\n"
	    "    n += 1\n"
	    "raise SystemExit(0 if n < 30 else 1)'"), 0);
	ag_config_free(cfg);
	/* RLIMIT_FSIZE: a write past 4096 bytes fails (SIGXFSZ) */
	cfg = config_for("required", "", "\"/\"", "    limits: { file_size: 4096 }\n");
	sb = prepare(cfg, &err);
	assert_non_null(sb);
	{
		char script[1024];

		/* the write stops at the limit: exactly 4096 bytes land */
		snprintf(script, sizeof(script), "python3 -c 'import os, signal\n"
		    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
		    "try: open(\"%s/big\", \"wb\").write(bytes(8192))\n"
		    "except OSError: pass\n"
		    "raise SystemExit(0 if os.path.getsize(\"%s/big\") == 4096 else 1)'",
		    wdir, wdir);
		assert_int_equal(run_in(sb, script, 0, 0), 0);
	}
	ag_sandbox_free(sb);
	ag_config_free(cfg);
	/* the next command is unaffected */
	assert_int_equal(sh("true"), 0);
}

/* ---- modes and ABI ---------------------------------------------------------- */

static void
required_refuses_without_landlock(void **state)
{
	struct ag_config *cfg = config_for("required", "", "\"/\"", "");
	struct ag_err err;
	struct ag_sandbox *sb;

	(void)state;
	ag_sandbox_set_test_abi(0);
	memset(&err, 0, sizeof(err));
	sb = prepare(cfg, &err);
	assert_null(sb);
	assert_non_null(strstr(err.msg, "refused"));
	ag_sandbox_set_test_abi(-1);
	/* a profile with network needs no Landlock ABI 4: the namespace holds
	 * it (where the real kernel has 3 at least: valgrind, for one, offers
	 * none) */
	if (ag_sandbox_abi() >= 3) {
		ag_sandbox_set_test_abi(3);
		sb = prepare(cfg, &err);
		ag_sandbox_set_test_abi(-1);
		assert_non_null(sb);
		ag_sandbox_free(sb);
	}
	ag_config_free(cfg);
}

static void
best_effort_runs_and_says_so(void **state)
{
	struct ag_config *cfg = config_for("best_effort", "", "\"/\"", "");
	struct ag_err err;
	struct ag_sandbox *sb;
	char script[256];

	(void)state;
	ag_sandbox_set_test_abi(0);
	sb = prepare(cfg, &err);
	ag_sandbox_set_test_abi(-1);
	assert_non_null(sb);
	assert_false(ag_sandbox_active(sb));
	assert_non_null(ag_sandbox_note(sb));
	assert_non_null(strstr(ag_sandbox_note(sb), "no Landlock"));
	snprintf(script, sizeof(script), "touch %s/be-ran", wdir);
	assert_int_equal(run_in(sb, script, 0, 0), 0);
	assert_true(exists("be-ran"));
	ag_sandbox_free(sb);

	if (ag_sandbox_abi() >= AG_SANDBOX_ABI_NEEDED) {
		/* ABI 3: files confined, and the network too (the namespace) */
		ag_sandbox_set_test_abi(3);
		sb = prepare(cfg, &err);
		ag_sandbox_set_test_abi(-1);
		assert_non_null(sb);
		assert_true(ag_sandbox_active(sb));
		assert_true(ag_sandbox_note(sb) == NULL ||
		    strstr(ag_sandbox_note(sb), "network") == NULL);
		snprintf(script, sizeof(script), "touch %s/be-outside", base);
		assert_int_not_equal(run_in(sb, script, 0, 0), 0);
		snprintf(script, sizeof(script), "exec 5<>/dev/tcp/127.0.0.1/%d", port_bad);
		assert_int_not_equal(run_in(sb, script, 0, 0), 0);
		ag_sandbox_free(sb);
		/* every older ABI builds valid rulesets: inside works, outside does not */
		for (int abi = 1; abi < AG_SANDBOX_ABI_NEEDED; abi++) {
			ag_sandbox_set_test_abi(abi);
			sb = prepare(cfg, &err);
			ag_sandbox_set_test_abi(-1);
			assert_non_null(sb);
			snprintf(script, sizeof(script), "echo x > %s/abi-%d && ! touch %s/abi-%d",
			    wdir, abi, base, abi);
			assert_int_equal(run_in(sb, script, 0, 0), 0);
			ag_sandbox_free(sb);
		}
	}
	ag_config_free(cfg);
}

static void
off_applies_only_limits(void **state)
{
	struct ag_config *cfg = config_for("off", "", "\"/\"", "");
	struct ag_err err;
	struct ag_sandbox *sb = prepare(cfg, &err);
	char script[256];

	(void)state;
	assert_non_null(sb);
	assert_false(ag_sandbox_active(sb));
	assert_null(ag_sandbox_note(sb));
	snprintf(script, sizeof(script), "touch %s/off-outside && rm %s/off-outside", base, base);
	assert_int_equal(run_in(sb, script, 0, 0), 0);
	ag_sandbox_free(sb);
	ag_config_free(cfg);
}

/* ---- defusing ----------------------------------------------------------------- */

static const char *
env_val(char **env, const char *name)
{
	size_t n = strlen(name);

	for (; *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static void
defuse_sets_git_and_pager_settings(void **state)
{
	struct ag_config *cfg = config_for("off", ", git, less", "\"/\"", "");
	char **env = calloc(8, sizeof(*env));
	const char *cnt;
	int i, n, found_fsmon = 0;

	(void)state;
	assert_non_null(env);
	env[0] = strdup("LESSOPEN=|/tmp/evil %s");
	env[1] = strdup("GIT_CONFIG_COUNT=1");
	env[2] = strdup("GIT_CONFIG_KEY_0=core.pager");
	env[3] = strdup("PAGER=evil");
	env[4] = strdup("KEEP=1");
	assert_int_equal(ag_sandbox_defuse_env(&env, ag_config_profile(cfg, "t")), 0);
	assert_null(env_val(env, "LESSOPEN"));
	assert_string_equal(env_val(env, "PAGER"), "cat");
	assert_string_equal(env_val(env, "LESSSECURE"), "1");
	assert_string_equal(env_val(env, "GIT_CONFIG_NOSYSTEM"), "1");
	assert_string_equal(env_val(env, "KEEP"), "1");
	assert_non_null(cnt = env_val(env, "GIT_CONFIG_COUNT"));
	n = atoi(cnt);
	assert_true(n > 5);
	for (i = 0; i < n; i++) {
		char k[64], v[64];

		snprintf(k, sizeof(k), "GIT_CONFIG_KEY_%d", i);
		snprintf(v, sizeof(v), "GIT_CONFIG_VALUE_%d", i);
		assert_non_null(env_val(env, k));
		assert_non_null(env_val(env, v));
		if (strcmp(env_val(env, k), "core.fsmonitor") == 0)
			found_fsmon = strcmp(env_val(env, v), "false") == 0;
	}
	assert_true(found_fsmon);
	ag_sandbox_env_free(env);
	ag_config_free(cfg);
}

static void
runner_env_carries_no_loader_variables(void **state)
{
	char *env[] = { (char[]){ "LD_LIBRARY_PATH=/tmp/evil" }, (char[]){ "LD_AUDIT=/tmp/a.so" },
		(char[]){ "LD_PRELOAD=/tmp/p.so" }, (char[]){ "KEEP=1" }, NULL };
	char **out;
	size_t i, npre = 0;

	(void)state;
	NEED_LANDLOCK();
	out = ag_sandbox_env(g_sb, env);
	assert_non_null(out);
	assert_null(env_val(out, "LD_LIBRARY_PATH"));
	assert_null(env_val(out, "LD_AUDIT"));
	assert_string_equal(env_val(out, "KEEP"), "1");
	for (i = 0; out[i] != NULL; i++)
		npre += strncmp(out[i], "LD_PRELOAD=", 11) == 0;
	assert_int_equal(npre, 1);
	assert_non_null(strstr(env_val(out, "LD_PRELOAD"), "agsandbox.so"));
	ag_sandbox_env_free(out);
}

static void
defuse_leaves_git_alone_when_git_is_not_allowed(void **state)
{
	struct ag_config *cfg = config_for("off", "", "\"/\"", "");
	char **env = calloc(2, sizeof(*env));

	(void)state;
	assert_non_null(env);
	assert_int_equal(ag_sandbox_defuse_env(&env, ag_config_profile(cfg, "t")), 0);
	assert_null(env_val(env, "GIT_CONFIG_COUNT"));
	assert_string_equal(env_val(env, "PAGER"), "cat");
	ag_sandbox_env_free(env);
	ag_config_free(cfg);
}

static void
udp_only_with_dns_listed(void **state)
{
	struct ag_config *cfg;
	struct ag_sandbox *sb;
	struct ag_err err;
	char yaml[512];

	(void)state;
	NEED_LANDLOCK();
	NEED_PYTHON();
	snprintf(yaml, sizeof(yaml), "version: 1\nprofiles:\n  t:\n    allow: [python3]\n"
	    "    paths: { read: [\"/\"] }\n    network: { connect: [53] }\n");
	cfg = ag_config_parse(yaml, strlen(yaml), "t.yaml", &err);
	assert_non_null(cfg);
	sb = prepare(cfg, &err);
	assert_non_null(sb);
	assert_int_equal(run_in(sb, "python3 -c 'import socket\n"
	    "socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'", 0, 0), 0);
	ag_sandbox_free(sb);
	ag_config_free(cfg);
}

static void
prepared_sandbox_follows_path_and_home(void **state)
{
	char *other_env[] = { (char[]){ "PATH=/usr/local/bin:/usr/bin" }, NULL };
	const struct ag_profile *p;
	struct ag_config *cfg;
	struct ag_sandbox *sb;
	struct ag_err err;

	(void)state;
	NEED_LANDLOCK();
	cfg = config_for("required", "", "\"/\"", "");
	p = ag_config_profile(cfg, "t");
	sb = prepare(cfg, &err);
	assert_non_null(sb);
	assert_true(ag_sandbox_matches(sb, p, "/root", wdir, base_env));
	/* no relative path in the profile: the cwd does not matter */
	assert_true(ag_sandbox_matches(sb, p, "/root", "/", base_env));
	assert_false(ag_sandbox_matches(sb, p, "/home/x", wdir, base_env));
	assert_false(ag_sandbox_matches(sb, p, "/root", wdir, other_env));
	ag_sandbox_free(sb);
	ag_config_free(cfg);
}

/* A planted repository whose config runs programs: git under the sandbox
 * with the defused environment runs none of them. */
static void
planted_git_repo_runs_nothing(void **state)
{
	struct ag_config *cfg;
	struct ag_sandbox *sb;
	struct ag_err err;
	char script[2048];

	(void)state;
	NEED_LANDLOCK();
	if (access("/usr/bin/git", X_OK) != 0)
		skip();
	cfg = config_for("required", ", git", "\"/\"", "");
	sb = prepare(cfg, &err);
	assert_non_null(sb);
	/* plant the repo from outside the sandbox, as a clone would */
	snprintf(script, sizeof(script),
	    "set -e; cd %s; rm -rf repo; mkdir repo; cd repo; git init -q .;"
	    "echo a > f; git add f;"
	    "git config core.fsmonitor 'touch %s/c-fsmon; false';"
	    "git config core.pager 'touch %s/c-pager; cat';"
	    "git config diff.external 'touch %s/c-ext';"
	    "git config alias.st '!touch %s/c-alias';"
	    "echo 'touch %s/c-hook' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
	    wdir, wdir, wdir, wdir, wdir, wdir);
	assert_int_equal(system(script), 0);
	snprintf(script, sizeof(script), "cd %s/repo && git status >/dev/null; git diff HEAD >/dev/null;"
	    "git log -p >/dev/null 2>&1; git -c user.name=a -c user.email=a@b commit -qm m; git st; true",
	    wdir);
	(void)run_in(sb, script, 0, 0);
	assert_false(exists("c-fsmon"));
	assert_false(exists("c-pager"));
	assert_false(exists("c-ext"));
	assert_false(exists("c-alias"));
	assert_false(exists("c-hook"));
	ag_sandbox_free(sb);
	ag_config_free(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runs_allowed_program_and_refuses_others, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(wrappers_run_allowed_programs_only, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(preload_is_scrubbed_and_fd_closed, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(guard_fails_closed_without_preload, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(shells_are_not_executable, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(runner_not_reexecutable_through_proc, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(loader_cannot_run_the_shell, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(shell_cannot_be_copied, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(memfd_exec_is_refused, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(escape_hatches_of_allowed_programs_fail, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(writes_only_beneath_paths_write, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(reads_limited_to_paths_read, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(network_is_the_namespaces_own, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(cannot_signal_outside_its_tree, setup_default, teardown_default),
		cmocka_unit_test_setup_teardown(fork_bomb_is_contained, setup_default, teardown_default),
		cmocka_unit_test(required_refuses_without_landlock),
		cmocka_unit_test(best_effort_runs_and_says_so),
		cmocka_unit_test(off_applies_only_limits),
		cmocka_unit_test(defuse_sets_git_and_pager_settings),
		cmocka_unit_test(defuse_leaves_git_alone_when_git_is_not_allowed),
		cmocka_unit_test_setup_teardown(runner_env_carries_no_loader_variables, setup_default, teardown_default),
		cmocka_unit_test(udp_only_with_dns_listed),
		cmocka_unit_test(prepared_sandbox_follows_path_and_home),
		cmocka_unit_test_setup_teardown(planted_git_repo_runs_nothing, setup_default, teardown_default),
	};

	return cmocka_run_group_tests_name("sandbox", tests, setup_all, teardown_all);
}
