/*
 * test_policy.c - the decision, driven by tables of command lines grouped by
 * family.  Each family has both sides: benign commands an agent really
 * sends that must be allowed, and the attempts to get around each rule
 * that must be refused.
 *
 * Profiles come from inline YAML through ag_config_parse.  A temporary
 * directory holds a fake home, a PATH directory of symlinks to the real
 * programs, and look-alike files ("@T/evil/ls") for path resolution.
 * "@T" in a command is replaced by that directory.
 */
#include "agconfig.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "policy/envsan.h"
#include "policy/pathutil.h"
#include "policy/policy.h"
#include "policy/prog.h"

enum { A = 'A', D = 'D', K = 'K', P = 'P' };

struct tcase {
	const char	*profile;
	const char	*cmd;
	int		 expect;	/* A allow, D deny, K ask, P parse error */
	const char	*rule;		/* prefix of out.rule, or NULL */
};

static const char yaml[] =
    "version: 1\n"
    "profiles:\n"
    "  ro:\n"
    "    allow:\n"
    "      - ls\n"
    "      - cat\n"
    "      - grep\n"
    "      - wc\n"
    "      - head\n"
    "      - { command: git, subcommands: [status, log, diff, show], allow_options: [\"-C\"] }\n"
    "      - { command: find, deny_args: [\"-exec*\", \"-execdir*\", \"-ok*\", \"-okdir*\", \"-delete\", \"-fprint*\", \"-fls\"] }\n"
    "    deny:\n"
    "      - { command: cat, args: [\"/etc/shadow*\"] }\n"
    "    paths:\n"
    "      read: [\"/\"]\n"
    "      write: [\"~/work\"]\n"
    "    unknown: deny\n"
    "  dev:\n"
    "    allow: [ls, cat, grep, sed, sort, tee, cp, mv, touch, mkdir, rm, head, wc, awk,\n"
    "            find, git, read, let, declare, mapfile, mytool]\n"
    "    deny:\n"
    "      - pushd\n"
    "      - { command: git, subcommands: [push] }\n"
    "    features: { functions: allow, background: allow }\n"
    "    paths: { read: [\"/\"], write: [\"~/work\"], protect: [\"~/work/secret/**\"] }\n"
    "    env: { allow: [EDITOR], deny: [\"AWS_*\", \"TOK?N\", \"[XY]_KEY\", \"*_PASSWORD\"] }\n"
    "    unknown: ask\n"
    "    validator: { url: \"http://127.0.0.1:9/v1/chat/completions\", model: m }\n"
    "  strict:\n"
    "    allow: [ls, cat]\n"
    "    features: { command_substitution: deny, process_substitution: deny,\n"
    "                subshell: deny, coproc: deny }\n"
    "    paths: { read: [\"~/work\"], write: [\"~/work\"] }\n"
    "    unknown: deny\n"
    "  wrap:\n"
    "    allow: [ls, grep, sudo, busybox, flock, watch, strace, chroot, unbuffer, echo,\n"
    "            { command: cat, deny_args: [\"/etc/*\"] },\n"
    "            { command: head, args: [\"-n\", \"[0-9]*\", \"*.log\"] },\n"
    "            { command: wc, args: [\"-l\", \"~/work/*\"] }]\n"
    "    features: { coproc: allow }\n"
    "    paths: { read: [\"/\"], write: [\"~/work\"] }\n"
    "    unknown: deny\n"
    "  tier:\n"
    "    tier: developer\n"
    "    allow: [ls, cat, make, mkdir, mv, cargo, npm, python3, gradle, mvn]\n"
    "    deny:\n"
    "      - { command: git, subcommands: [push] }\n"
    "      - su\n"
    "      - { command: make, subcommands: [install] }\n"
    "      - { command: cargo, subcommands: [publish] }\n"
    "      - { command: npm, subcommands: [publish] }\n"
    "      - { command: gradle, subcommands: [publish] }\n"
    "      - { command: mvn, subcommands: [deploy] }\n"
    "      - { command: twine, subcommands: [upload] }\n"
    "    paths: { read: [\"/\"], write: [\"~/work\"], exec: [\"~/work\"] }\n"
    "    unknown: deny\n"
    "  open:\n"
    "    tier: developer\n"
    "    allow:\n"
    "      - ls\n"
    "      - { command: git, subcommands: [status, log] }\n"
    "    deny:\n"
    "      - { command: git, subcommands: [push] }\n"
    "      - su\n"
    "    paths: { read: [\"/\"], write: [\"~/work\"], exec: [\"~/work\"] }\n"
    "    unknown: allow\n"
    "  openbi:\n"
    "    tier: developer\n"
    "    deny: [ulimit]\n"
    "    paths: { read: [\"/\"], write: [\"~/work\"] }\n"
    "    features: { background: deny }\n"
    "    unknown: allow\n"
    "  backup:\n"
    "    allow:\n"
    "      - { name: restore, command: tar, argv: [\"-x\", \"-C\", /tmp, \"-f\", \"-\"] }\n"
    "      - { command: tar, argv: [\"-t\", \"-f\", \"-\"] }\n"
    "      - { command: date, argv: [] }\n"
    "      - { command: head, argv: [\"-n\", \"[0-9]*\", /etc/hosts] }\n"
    "      - { name: hosts, command: cat, argv: [\"/etc/host*\"] }\n"
    "      - { command: git, argv: [\"-c\", core.pager=cat, log] }\n"
    "      - { command: echo, argv: [hi] }\n"
    "      - ls\n"
    "    deny:\n"
    "      - { name: no-root, command: ls, argv: [/] }\n"
    "    paths: { read: [\"/\"], write: [\"/tmp\", \"~/work\"] }\n"
    "    unknown: deny\n"
    "  exact:\n"
    "    allow:\n"
    "      - { name: request, command: printf, argv: [\"v[0-9]*\"] }\n"
    "    features: { write_redirections: rules }\n"
    "    paths: { read: [\"/\"], write: [\"/tmp\"] }\n"
    "  nowrite:\n"
    "    allow: [ls]\n"
    "    features: { write_redirections: deny }\n"
    "    paths: { read: [\"/\"], write: [\"/tmp\"] }\n";

static struct ag_config *cfg;
static char tdir[64];
static char home[128], work[160], pathenv[200];
static char *envv[8];
static char env_count[] = "COUNT=7", env_bad[] = "BAD=a[$(id)]", env_lang[] = "LANG=C.UTF-8";

/* ---- fixture ------------------------------------------------------------ */

static void
xsystem(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture command failed: %s\n", cmd);
		abort();
	}
}

static int
setup(void **state)
{
	static const char *const real[] = {
		"ls", "cat", "grep", "wc", "head", "git", "find", "sed", "sort",
		"tee", "cp", "mv", "touch", "mkdir", "rm", "awk", "env", "nice",
		"nohup", "timeout", "stdbuf", "setsid", "xargs", "sleep", "id", "sh",
		"bash", "strace", "flock", "watch", "dd", "truncate", "python3", "make",
		"tar", "date", NULL
	};
	static const char *const fake[] = {
		"sudo", "doas", "busybox", "mytool", "unbuffer", "chroot", "gdb",
		"parallel", "valgrind", "ltrace", "memcheck-amd64-linux", NULL
	};
	struct ag_err err;
	size_t i;

	(void)state;
	snprintf(tdir, sizeof(tdir), "/tmp/agpolicyXXXXXX");
	if (mkdtemp(tdir) == NULL)
		return -1;
	snprintf(home, sizeof(home), "%s/home", tdir);
	snprintf(work, sizeof(work), "%s/home/work", tdir);
	xsystem("mkdir -p %s/bin %s/evil %s/lnk %s/.ssh %s/.config %s/.git/hooks "
	    "%s/.git/info %s/secret %s/sub/.git",
	    tdir, tdir, tdir, home, home, work, work, work, work);
	for (i = 0; real[i]; i++)
		xsystem("p=$(command -v %s) && ln -s \"$p\" %s/bin/%s || true",
		    real[i], tdir, real[i]);
	for (i = 0; fake[i]; i++)
		xsystem("cp /bin/true %s/bin/%s", tdir, fake[i]);
	xsystem("cp /bin/ls %s/evil/ls && ln -s /bin/ls %s/lnk/ls", tdir, tdir);
	/* echo as a program (xargs runs it); command -v would name the builtin */
	xsystem("for p in /usr/bin/echo /bin/echo; do [ -x $p ] && ln -s $p %s/bin/echo && break; done; "
	    "[ -e %s/bin/echo ]", tdir, tdir);
	xsystem("cp /bin/true %s/ls", work);
	/* built files: ./configure, build/test_foo, and one named like a denied program */
	xsystem("mkdir -p %s/build && cp /bin/true %s/configure && cp /bin/true %s/build/test_foo "
	    "&& cp /bin/true %s/build/su", work, work, work, work);
	/* symlinks whose ".." is not the directory holding them */
	xsystem("mkdir -p %s/evil/sub && ln -s %s/evil/sub %s/evsub && ln -s %s/sub %s/wl",
	    tdir, tdir, work, work, home);
	xsystem("ln -s ../.bashrc %s/bashrc-link && ln -s ../.ssh %s/sshdir", work, work);
	xsystem("ln -s /etc/shadow %s/shadowlink", tdir);
	xsystem("ln -s /etc/passwd %s/passwd-link", work);
	snprintf(pathenv, sizeof(pathenv), "PATH=%s/bin", tdir);
	envv[0] = pathenv;
	envv[1] = env_count;
	envv[2] = env_bad;
	envv[3] = env_lang;
	envv[4] = NULL;

	cfg = ag_config_parse(yaml, sizeof(yaml) - 1, "test.yaml", &err);
	if (cfg == NULL) {
		fprintf(stderr, "config: %s (line %d col %d)\n", err.msg, err.line, err.col);
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	ag_config_free(cfg);
	if (tdir[0] != '\0' && strncmp(tdir, "/tmp/agpolicy", 13) == 0)
		xsystem("rm -rf %s", tdir);
	return 0;
}

/* Replace "@T" with the fixture directory. */
static void
subst(const char *in, char *out, size_t outsz)
{
	size_t j = 0;

	for (; *in && j + 1 < outsz; in++) {
		if (in[0] == '@' && in[1] == 'T') {
			size_t n = strlen(tdir);

			if (j + n + 1 >= outsz)
				break;
			memcpy(out + j, tdir, n);
			j += n;
			in++;
			continue;
		}
		out[j++] = *in;
	}
	out[j] = '\0';
}

static void
decide_in(const char *profile, const char *cmd, const char *cwd, char *const *env,
    struct ag_decision *d)
{
	struct ag_policy_ctx ctx;
	char line[4096];

	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = ag_config_profile(cfg, profile);
	assert_non_null(ctx.profile);
	ctx.cwd = cwd;
	ctx.home = home;
	ctx.user = "agent";
	ctx.env = env;
	subst(cmd, line, sizeof(line));
	assert_int_not_equal(ag_policy_check(&ctx, line, strlen(line), d), -1);
}

static int
run_table(const char *family, const struct tcase *t, size_t n)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		struct ag_decision d;
		int got;

		decide_in(t[i].profile, t[i].cmd, work, envv, &d);
		got = d.parse_error ? P : d.verdict == AG_ALLOW ? A :
		    d.verdict == AG_ASK ? K : D;
		if (got != t[i].expect ||
		    (t[i].rule != NULL && strncmp(d.rule, t[i].rule, strlen(t[i].rule)) != 0)) {
			fprintf(stderr, "[%s] %s: expected %c%s%s, got %c (%s) %s\n    for: %s\n",
			    family, t[i].profile, t[i].expect, t[i].rule ? " rule " : "",
			    t[i].rule ? t[i].rule : "", got, d.rule, d.reason, t[i].cmd);
			failed++;
		}
		/* every refusal says why, every entry has a verdict reason */
		if (d.verdict != AG_ALLOW && d.reason[0] == '\0') {
			fprintf(stderr, "[%s] empty reason for: %s\n", family, t[i].cmd);
			failed++;
		}
		ag_decision_free(&d);
	}
	printf("[%s] %zu cases, %zu failed\n", family, n, failed);
	return (int)failed;
}

#define RUN(fam, tab) assert_int_equal(run_table(fam, tab, sizeof(tab) / sizeof(tab[0])), 0)

/* ---- quoting ------------------------------------------------------------ */

static const struct tcase quoting[] = {
	{ "ro", "echo 'a;b'", A, NULL },
	{ "ro", "echo \"a;b\"", A, NULL },
	{ "ro", "echo 'rm -rf /'", A, NULL },
	{ "ro", "grep -R 'a|b' .", A, NULL },
	{ "ro", "grep '$(' file", A, NULL },
	{ "ro", "echo \"\\$(id)\"", A, NULL },
	{ "ro", "echo a\\;b", A, NULL },
	{ "ro", "cat 'my file'", A, NULL },
	{ "ro", "ls \"-la\"", A, NULL },
	{ "ro", "echo $'a\\nb'", A, NULL },
	{ "ro", "echo \"it's\"", A, NULL },
	{ "ro", "grep -e 'x' -e \"y\" .", A, NULL },
	{ "ro", "ls # ; rm x", A, NULL },
	{ "ro", "echo '#'; ls", A, NULL },
	{ "ro", "l''s", A, NULL },
	{ "ro", "\"ls\" -l", A, NULL },
	{ "ro", "\\ls", A, NULL },
	{ "ro", "$'\\x6c\\x73'", A, NULL },
	{ "ro", "echo '`rm x`'", A, NULL },
	{ "ro", "echo \"a | b && c\"", A, NULL },
	{ "ro", "grep -c '^$' file", A, NULL },
	{ "ro", "ls -la\n", A, NULL },
	{ "ro", "", A, NULL },
	{ "ro", "# just a comment", A, NULL },
	{ "ro", "s''h", D, "unknown" },
	{ "ro", "\\sh", D, "unknown" },
	{ "ro", "\"s\"h", D, "unknown" },
	{ "ro", "$'\\x73'h", D, "unknown" },
	{ "ro", "$'\\163h'", D, "unknown" },
	{ "ro", "$'\\u0073h'", D, "unknown" },
	{ "ro", "r\"\"m x", D, "unknown" },
	{ "ro", "echo a; rm x", D, "unknown" },
	{ "ro", "echo 'a' ; rm x", D, "unknown" },
	{ "ro", "echo \"a\" && rm x", D, "unknown" },
	{ "ro", "echo a || rm x", D, "unknown" },
	{ "ro", "echo a | sh", D, "unknown" },
	{ "ro", "ls\nrm x", D, "unknown" },
	{ "ro", "ls # comment\nrm x", D, "unknown" },
	{ "ro", "ls\r\nrm x", D, "unknown" },
	{ "ro", "ls\vrm", D, "unknown" },
	{ "ro", "ls;rm x", D, "unknown" },
	{ "ro", "ls&&rm x", D, "unknown" },
	{ "ro", "echo \"$(rm x)\"", D, "unknown" },
	{ "ro", "echo '", P, "parse" },
	{ "ro", "echo \"unbalanced", P, "parse" },
	{ "ro", "echo `ls", P, "parse" },
	{ "ro", "ls )", P, "parse" },
	{ "ro", "ls &&", P, "parse" },
	{ "ro", "if ls", P, "parse" },
	{ "ro", "echo $(", P, "parse" },
	{ "ro", "ls \xff", P, "parse" },
};

static void
family_quoting(void **state)
{
	(void)state;
	RUN("quoting", quoting);
}

/* ---- expansions --------------------------------------------------------- */

static const struct tcase expansions[] = {
	{ "ro", "echo $HOME", A, NULL },
	{ "ro", "echo ${HOME}", A, NULL },
	{ "ro", "echo \"${HOME:-/x}\"", A, NULL },
	{ "ro", "echo ${#HOME}", A, NULL },
	{ "ro", "echo $(ls)", A, NULL },
	{ "ro", "echo \"$(ls -la)\"", A, NULL },
	{ "ro", "echo `ls`", A, NULL },
	{ "ro", "echo $(echo $(ls))", A, NULL },
	{ "ro", "echo ${x:-$(ls)}", A, NULL },
	{ "ro", "echo ~", A, NULL },
	{ "ro", "ls ~/work", A, NULL },
	{ "ro", "echo {a,b}", A, NULL },
	{ "ro", "echo *.c", A, NULL },
	{ "ro", "echo $((1+2))", A, NULL },
	{ "ro", "echo ${x@Q}", A, NULL },
	{ "ro", "echo ${x/a/b}", A, NULL },
	{ "ro", "echo ${x%.c}.o", A, NULL },
	{ "ro", "ls $(echo .)", A, NULL },
	{ "ro", "grep x $(ls)", A, NULL },
	{ "ro", "echo $?", A, NULL },
	{ "ro", "echo \"$@\"", A, NULL },
	{ "ro", "$(echo sh)", D, "literal" },
	{ "ro", "`echo sh`", D, "literal" },
	{ "ro", "${x}", D, "literal" },
	{ "ro", "\"$x\"", D, "literal" },
	{ "ro", "$x -la", D, "literal" },
	{ "ro", "l$x", D, "literal" },
	{ "ro", "/bin/s?", D, "literal" },
	{ "ro", "/bin/[s]h", D, "literal" },
	{ "ro", "{ls,rm} x", D, "literal" },
	{ "ro", "~/bin/x", D, "unknown" },	/* HOME/bin/x, as bash runs it */
	{ "ro", "~root/x", D, "literal" },
	{ "ro", "cat${IFS}/etc/passwd", D, "literal" },
	{ "ro", "$(printf '\\x73\\x68')", D, "literal" },
	{ "ro", "echo $(rm x)", D, "unknown" },
	{ "ro", "echo `rm x`", D, "unknown" },
	{ "ro", "echo ${x:-$(rm x)}", D, "unknown" },
	{ "ro", "echo ${x:=$(rm y)}", D, "unknown" },
	{ "ro", "echo ${x/a/$(rm y)}", D, "unknown" },
	{ "ro", "echo $(echo $(rm x))", D, "unknown" },
	{ "ro", "echo `echo \\`rm x\\``", D, "unknown" },
	{ "ro", "echo ${!x}", D, "expansion:indirect" },
	{ "ro", "echo ${!x[@]}", D, "expansion:indirect" },
	{ "ro", "echo ${x@P}", D, "expansion:prompt" },
	{ "ro", "echo $(( $(rm x) ))", D, NULL },
	{ "ro", "echo ${a[$(rm x)]}", D, NULL },
	{ "ro", "echo <(rm x)", D, "unknown" },
	{ "ro", "cat <(rm x)", D, NULL },
	{ "ro", "grep x <(rm x)", D, "unknown" },
	{ "ro", "grep x <(ls)", A, NULL },
	{ "ro", "ls > >(rm x)", D, NULL },
	{ "ro", "echo ${PATH:=/tmp}", D, "env:PATH" },
	{ "ro", "echo ${IFS=x}", D, "env:IFS" },
};

static void
family_expansions(void **state)
{
	(void)state;
	RUN("expansions", expansions);
}

/* ---- compound commands -------------------------------------------------- */

static const struct tcase compound[] = {
	{ "ro", "( ls )", A, NULL },
	{ "ro", "{ ls; }", A, NULL },
	{ "ro", "if ls; then cat f; fi", A, NULL },
	{ "ro", "if ls; then :; elif grep x y; then ls; else cat z; fi", A, NULL },
	{ "ro", "while false; do ls; done", A, NULL },
	{ "ro", "until ls; do :; done", A, NULL },
	{ "ro", "for f in a b; do grep x \"$f\"; done", A, NULL },
	/* cat has a deny rule on its arguments: unseen ones are refused */
	{ "ro", "for f in a b; do cat \"$f\"; done", D, "profiles.ro.deny[0]" },
	{ "ro", "for f in *.c; do grep -l main \"$f\"; done", A, NULL },
	{ "ro", "for ((i=0;i<3;i++)); do echo $i; done", A, NULL },
	{ "ro", "case x in a) ls;; b|c) cat f;; *) ;; esac", A, NULL },
	{ "ro", "case x in a) ls;& b) ls;;& *) ;; esac", A, NULL },
	{ "ro", "[[ -f x && $HOME == /* ]]", A, NULL },
	{ "ro", "[[ $x =~ ^a.*b$ ]]", A, NULL },
	{ "ro", "! ls", A, NULL },
	{ "ro", "ls | grep x | wc -l", A, NULL },
	{ "ro", "ls |& grep x", A, NULL },
	{ "ro", "time ls", A, NULL },
	{ "ro", "time -p ls", A, NULL },
	{ "ro", "ls && cat f || echo no", A, NULL },
	{ "ro", "{ ls; cat f; } > /dev/null 2>&1", A, NULL },
	{ "ro", "if [ -d x ]; then ls x; fi", A, NULL },
	{ "ro", "( rm x )", D, "unknown" },
	{ "ro", "{ rm x; }", D, "unknown" },
	{ "ro", "if rm x; then :; fi", D, "unknown" },
	{ "ro", "if ls; then rm x; fi", D, "unknown" },
	{ "ro", "if ls; then :; elif rm x; then :; fi", D, "unknown" },
	{ "ro", "if ls; then :; else rm x; fi", D, "unknown" },
	{ "ro", "while rm x; do :; done", D, "unknown" },
	{ "ro", "until false; do rm x; done", D, "unknown" },
	{ "ro", "for f in $(rm x); do :; done", D, "unknown" },
	{ "ro", "for f in a; do rm $f; done", D, "unknown" },
	{ "ro", "for ((i=$(rm x);i<1;i++)); do :; done", P, "parse" },
	{ "ro", "case $(rm x) in *) ;; esac", D, "unknown" },
	{ "ro", "case x in $(rm y)) ;; esac", D, "unknown" },
	{ "ro", "case x in *) rm y;; esac", D, "unknown" },
	{ "ro", "[[ $(rm x) ]]", D, "unknown" },
	{ "ro", "[[ -n \"$(rm x)\" ]]", D, "unknown" },
	{ "ro", "(( $(rm x) ))", D, NULL },
	{ "ro", "ls | rm x", D, "unknown" },
	{ "ro", "! rm x", D, "unknown" },
	{ "ro", "time rm x", D, "unknown" },
	{ "ro", "function f { rm x; }", D, "feature:functions" },
	{ "ro", "f() { ls; }", D, "feature:functions" },
	{ "ro", "coproc ls", D, "feature:coproc" },
	{ "ro", "coproc c { ls; }", D, "feature:coproc" },
	{ "ro", "sleep 1 &", D, "feature:background" },
	{ "ro", "ls & ls", D, "feature:background" },
	{ "ro", "ls > /dev/null &", D, "feature:background" },
	{ "ro", "{ ls; } > /etc/x", D, "path:write" },
	{ "ro", "while read l; do echo $l; done < f", D, "builtin:read" },
	{ "ro", "select x in a b; do ls; done", A, NULL },
	{ "ro", "select PATH in a; do ls; done", D, "env:PATH" },
};

static void
family_compound(void **state)
{
	(void)state;
	RUN("compound", compound);
}

/* ---- here-documents ----------------------------------------------------- */

static const struct tcase heredocs[] = {
	{ "ro", "cat <<EOF\nhello $HOME\nEOF", A, NULL },
	{ "ro", "cat <<'EOF'\n$(rm x)\nEOF", A, NULL },
	{ "ro", "cat <<\"EOF\"\n`rm x`\nEOF", A, NULL },
	{ "ro", "cat <<-EOF\n\thello\n\tEOF", A, NULL },
	{ "ro", "cat > ~/work/f <<EOF\nx\nEOF", A, NULL },
	{ "ro", "cat > notes.md <<'EOF'\n# Title\n; rm -rf / && $(id)\nEOF", A, NULL },
	{ "ro", "cat <<< \"hello\"", A, NULL },
	{ "ro", "grep x <<< $(ls)", A, NULL },
	{ "ro", "cat <<A <<B\na\nA\nb\nB", A, NULL },
	{ "ro", "cat <<EOF | grep x\n$(ls)\nEOF", A, NULL },
	{ "ro", "cat <<EOF\n$(rm x)\nEOF", D, "unknown" },
	{ "ro", "cat <<EOF\n`rm x`\nEOF", D, "unknown" },
	{ "ro", "cat <<EOF\n${x:-$(rm x)}\nEOF", D, "unknown" },
	{ "ro", "cat <<EOF\n$((x))\nEOF", D, "arith" },
	{ "ro", "cat <<EOF\n${!x}\nEOF", D, "expansion:indirect" },
	{ "ro", "cat > /etc/x <<EOF\nx\nEOF", D, "path:write" },
	{ "ro", "cat > ~/.bashrc <<'EOF'\nx\nEOF", D, "path:protect" },
	{ "ro", "cat <<< $(rm x)", D, "unknown" },
	{ "ro", "cat <<A <<B\na\nA\n$(rm x)\nB", D, "unknown" },
	{ "ro", "cat <<EOF\nx\n", P, "parse" },
	{ "ro", "cat <<EOF; rm x\nhi\nEOF", D, "unknown" },
};

static void
family_heredocs(void **state)
{
	(void)state;
	RUN("heredocs", heredocs);
}

/* ---- wrappers ----------------------------------------------------------- */

static const struct tcase wrappers[] = {
	{ "ro", "env ls", A, NULL },
	{ "ro", "env -i ls -la", A, NULL },
	{ "ro", "env FOO=bar ls", A, NULL },
	{ "ro", "env -u FOO ls", A, NULL },
	{ "ro", "env -- ls", A, NULL },
	{ "ro", "env", A, NULL },
	{ "ro", "nice ls", A, NULL },
	{ "ro", "nice -n 5 ls", A, NULL },
	{ "ro", "nice -5 ls", A, NULL },
	{ "ro", "nohup ls", A, NULL },
	{ "ro", "timeout 5 ls", A, NULL },
	{ "ro", "timeout -s KILL 5 ls", A, NULL },
	{ "ro", "timeout --kill-after=1 5 ls", A, NULL },
	{ "ro", "stdbuf -oL ls", A, NULL },
	{ "ro", "stdbuf -o L ls", A, NULL },
	{ "ro", "setsid ls", A, NULL },
	{ "ro", "xargs grep x", A, NULL },
	{ "wrap", "ls | xargs", A, NULL },
	{ "ro", "xargs -0 ls", A, NULL },
	{ "ro", "xargs -n 1 ls", A, NULL },
	{ "ro", "xargs -I{} grep x {}", A, NULL },
	{ "ro", "ls | xargs -r wc -l", A, NULL },
	{ "ro", "nice env ls", A, NULL },
	{ "ro", "command -v rm", A, NULL },
	{ "ro", "command -V sh", A, NULL },
	{ "ro", "command ls", A, NULL },
	{ "ro", "builtin echo x", A, NULL },
	{ "ro", "builtin cd /", A, NULL },
	{ "ro", "env sh", D, "unknown" },
	{ "ro", "env -i sh", D, "unknown" },
	{ "ro", "env -S 'sh -c id'", D, "wrapper:env" },
	{ "ro", "env --split-string=sh", D, "wrapper:env" },
	{ "ro", "env -C /tmp ls", D, "wrapper:env" },
	{ "ro", "env LD_PRELOAD=x ls", D, "env:LD_PRELOAD" },
	{ "ro", "env PATH=/tmp ls", D, "env:PATH" },
	{ "ro", "env -u PATH ls", D, "env:PATH" },
	{ "ro", "env $x", D, "wrapper:literal" },
	{ "ro", "env eval ls", D, "unknown" },
	{ "ro", "xargs sh", D, "unknown" },
	{ "ro", "xargs rm", D, "unknown" },
	{ "ro", "xargs -I{} sh -c {}", D, "unknown" },
	{ "ro", "xargs git log", D, "profiles.ro.allow" },
	{ "ro", "xargs cat", D, "profiles.ro.deny" },
	{ "ro", "xargs env", D, "wrapper" },
	{ "ro", "xargs -I% % x", D, "literal" },
	{ "ro", "xargs --process-slot-var=LD_PRELOAD ls", D, "wrapper:xargs" },
	{ "ro", "xargs --proc=LD_PRELOAD ls", D, "wrapper:xargs" },
	{ "ro", "timeout --sig INT 1 sh", D, "unknown" },
	{ "ro", "env --sp='sh -c id'", D, "wrapper:env" },
	{ "ro", "nice sh", D, "unknown" },
	{ "ro", "nice -n 5 rm x", D, "unknown" },
	{ "ro", "timeout 1 sh", D, "unknown" },
	{ "ro", "timeout -s 9 1 rm x", D, "unknown" },
	{ "ro", "nohup rm x", D, "unknown" },
	{ "ro", "stdbuf -oL sh", D, "unknown" },
	{ "ro", "setsid sh", D, "unknown" },
	{ "ro", "nice timeout 1 env nohup sh", D, "unknown" },
	{ "ro", "command sh", D, "unknown" },
	{ "ro", "command rm x", D, "unknown" },
	{ "ro", "command -p ls", D, "builtin:command" },
	{ "ro", "command eval x", D, "builtin:eval" },
	{ "ro", "command -- eval x", D, "builtin:eval" },
	{ "ro", "command $x", D, "literal" },
	{ "ro", "builtin eval ls", D, "builtin:eval" },
	{ "ro", "builtin rm", D, "builtin" },
	{ "ro", "builtin $x", D, "literal" },
	{ "ro", "sudo ls", D, "wrapper:sudo" },
	{ "ro", "doas ls", D, "wrapper:doas" },
	{ "ro", "su -c id", D, "wrapper:su" },
	{ "ro", "chroot / ls", D, "wrapper:chroot" },
	{ "ro", "strace ls", D, "wrapper:strace" },
	{ "ro", "flock /tmp/l ls", D, "wrapper:flock" },
	{ "ro", "watch ls", D, "wrapper:watch" },
	{ "ro", "busybox sh", D, "wrapper:busybox" },
	{ "ro", "gdb -ex r ls", D, "wrapper:gdb" },
	{ "ro", "parallel rm ::: x", D, "wrapper:parallel" },
	{ "ro", "/lib64/ld-linux-x86-64.so.2 /bin/sh", D, NULL },
	{ "ro", "exec sh", D, "builtin:exec" },
	{ "ro", "exec ls", D, "builtin:exec" },
	{ "wrap", "sudo ls", A, NULL },
	{ "wrap", "sudo -u bob ls -la", A, NULL },
	{ "wrap", "sudo rm x", D, "unknown" },
	{ "wrap", "sudo -s", D, "wrapper:sudo" },
	{ "wrap", "sudo -i", D, "wrapper:sudo" },
	{ "wrap", "sudo -E ls", D, "wrapper:sudo" },
	{ "wrap", "sudo -iu root", D, "wrapper:sudo" },
	{ "wrap", "sudo --sh", D, "wrapper:sudo" },
	{ "wrap", "sudo --user=bob ls", A, NULL },
	{ "wrap", "sudo -nu bob ls", A, NULL },
	{ "wrap", "sudo sh", D, "unknown" },
	{ "wrap", "sudo $x", D, "wrapper:literal" },
	{ "wrap", "busybox ls", A, NULL },
	{ "wrap", "busybox sh", D, "unknown" },
	{ "wrap", "flock /tmp/l ls", A, NULL },
	{ "wrap", "flock -c 'rm x' /tmp/l", D, "wrapper:flock" },
	{ "wrap", "watch ls", A, NULL },
	{ "wrap", "watch -n 5 grep x f", A, NULL },
	{ "wrap", "watch 'ls; rm x'", D, "wrapper:watch" },
	{ "wrap", "watch rm x", D, "unknown" },
	{ "wrap", "strace -f ls", A, NULL },
	{ "wrap", "strace -p 1", D, "wrapper:trace" },
	{ "wrap", "strace sh", D, "unknown" },
	{ "wrap", "strace -o /etc/x ls", D, "path:write" },
	/* strict tier: a rule naming a tracer lets it run a command, no more */
	{ "wrap", "strace -fo /etc/x ls", D, "path:write" },
	{ "wrap", "strace --output /etc/x ls", D, "path:write" },
	{ "wrap", "strace --attach=1", D, "wrapper:trace" },
	{ "wrap", "strace -E X=1 ls", D, "wrapper:trace" },
	{ "wrap", "strace -o '|sh' ls", D, "wrapper:trace" },
	{ "wrap", "strace -s 100 -e trace=open -- ls", A, NULL },
	{ "wrap", "strace -s 100 sh", D, "unknown" },
	{ "ro", "valgrind ls", D, "wrapper:valgrind" },
	{ "ro", "ltrace ls", D, "wrapper:ltrace" },
	{ "ro", "@T/bin/memcheck-amd64-linux ls", D, "wrapper:memcheck-amd64-linux" },
	/* developer tier without unknown: allow: as the strict tier */
	{ "tier", "strace ls", D, "wrapper:strace" },
	{ "tier", "gdb ./configure", D, "wrapper:gdb" },
	{ "tier", "valgrind ls", D, "wrapper:valgrind" },
	{ "wrap", "unbuffer ls", A, NULL },
	{ "wrap", "unbuffer sh", D, "unknown" },
	{ "wrap", "chroot /x ls", A, NULL },
	{ "dev", "find . -name '*.c' -exec grep -l x {} +", A, NULL },
	{ "dev", "find . -type f -exec wc -l {} \\;", A, NULL },
	{ "dev", "find . -exec rm {} \\;", D, "path:literal" },
	{ "dev", "find . -exec sh -c 'x' \\;", K, "unknown" },
	{ "dev", "find . -execdir sh \\;", K, "unknown" },
	{ "dev", "find . -ok ./x {} \\;", K, "unknown" },
	{ "dev", "find . $x", D, "program:find" },
	{ "dev", "find . -name \"$x\" -print", A, NULL },
	{ "dev", "ls | xargs find", D, "program:find" },
	{ "dev", "find . -fprint /etc/x", D, "path:write" },
	{ "dev", "find ~/work -delete", A, NULL },
	{ "dev", "find / -delete", D, "path:write" },
	{ "dev", "find -L /etc -delete", D, "path:write" },
	{ "dev", "find -H -O2 ~/work -name '*.o' -delete", A, NULL },
	{ "dev", "find . -exec {} \\;", D, "literal" },
	{ "dev", "xargs rm", D, "path:write" },
	{ "dev", "xargs sed -i s/a/b/", D, "path:write" },
	/* xargs alone runs the program echo: allowed only where echo is (or
	 * where the kernel lets it run), never allowed and then killed */
	{ "ro", "xargs", D, "wrapper:xargs" },
	{ "ro", "ls | xargs -0", D, "wrapper:xargs" },
	{ "tier", "ls | xargs", A, NULL },
	/* arguments from the input cannot reach a deny rule's subcommand */
	{ "dev", "echo push | xargs git", D, "profiles.dev.deny[1]" },
	{ "dev", "xargs git -C sub", D, "profiles.dev.deny[1]" },
	{ "dev", "xargs -I{} git {} origin", D, "profiles.dev.deny[1]" },
	{ "dev", "xargs nice git", D, "profiles.dev.deny[1]" },
	{ "tier", "echo install | xargs make", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs -n1 make", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs make -C sub", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs timeout 5 env make", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs -- make -k", D, "profiles.tier.deny[2]" },
	/* every operand of make is a target: xargs may add `install` */
	{ "tier", "ls | xargs make all", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs make -C sub all", D, "profiles.tier.deny[2]" },
	{ "tier", "xargs -I{} make all {}", D, "profiles.tier.deny[2]" },
	{ "tier", "make all install", D, "profiles.tier.deny[2]" },
	{ "tier", "make -C install all", A, NULL },
	{ "tier", "make all", A, NULL },
	/* the toolchains' spellings of a denied action (registry, toolchains.c);
	 * "unknown": no deny rule fired, the program is not on the tests' PATH */
	{ "tier", "cargo +nightly publish", D, "profiles.tier.deny[3]" },
	{ "tier", "cargo --locked publish", D, "profiles.tier.deny[3]" },
	{ "tier", "cargo p", D, "profiles.tier.deny[3]" },
	{ "tier", "cargo build", D, "unknown" },
	{ "tier", "cargo t", D, "profiles.tier.deny[3]" },	/* CARGO_ALIAS_T=publish */
	{ "tier", "npm pub", D, "profiles.tier.deny[4]" },
	{ "tier", "npm --prefix x publ", D, "profiles.tier.deny[4]" },
	{ "tier", "npm test", D, "unknown" },
	{ "tier", "npm install p", D, "unknown" },
	{ "tier", "npm t", D, "unknown" },		/* npm's alias of test */
	{ "tier", "npm un x", D, "unknown" },
	{ "tier", "npm distTags", D, "unknown" },	/* dist-tag: not publish */
	{ "tier", "gradle build pub", D, "profiles.tier.deny[5]" },
	{ "tier", "gradle :app:publishToMavenCentral", D, "profiles.tier.deny[5]" },
	{ "tier", "gradle -x publish build", D, "unknown" },
	{ "tier", "mvn clean deploy", D, "profiles.tier.deny[6]" },
	{ "tier", "mvn deploy:deploy-file", D, "profiles.tier.deny[6]" },
	{ "tier", "mvn org.apache.maven.plugins:maven-deploy-plugin:3.1.1:deploy", D,
	    "profiles.tier.deny[6]" },
	{ "tier", "mvn clean package", D, "unknown" },
	{ "tier", "python3 -m twine upload x", D, "profiles.tier.deny[7]" },
	{ "tier", "python3 -Im twine.__main__ upload x", D, "profiles.tier.deny[7]" },
	{ "tier", "python3 -c 'import twine' upload", A, NULL },
	{ "tier", "python3 -m pytest", A, NULL },
	{ "tier", "python3 -m runpy twine upload x", D, "profiles.tier.deny[7]" },
	{ "tier", "/usr/lib/node_modules/npm/bin/npm-cli.js publish", D, "profiles.tier.deny[4]" },
	/* an option the gateway does not know may take the next word */
	{ "tier", "make -C sub install", D, "profiles.tier.deny[2]" },
	{ "tier", "make -j 4 install", D, "profiles.tier.deny[2]" },
	{ "tier", "make --directory sub install", D, "profiles.tier.deny[2]" },
	{ "tier", "make -- install", D, "profiles.tier.deny[2]" },
	{ "tier", "make -C sub", A, "profiles.tier.allow" },
	{ "tier", "make -j4 all", A, "profiles.tier.allow" },
	/* what the wrapper runs, from a built file: the developer tier's
	 * rules, deny rules first */
	{ "tier", "timeout 60 ./build/test_foo", A, NULL },
	{ "tier", "timeout 60 ./build/su", D, "profiles.tier.deny[1]" },
	{ "ro", "timeout 60 ./build/test_foo", D, "unknown" },
};

static void
family_wrappers(void **state)
{
	(void)state;
	RUN("wrappers", wrappers);
}

/* ---- builtins ----------------------------------------------------------- */

static const struct tcase builtins[] = {
	{ "ro", "cd /", A, NULL },
	{ "ro", "cd", A, NULL },
	{ "ro", "cd ~", A, NULL },
	{ "ro", "cd -", A, NULL },
	{ "ro", "cd .. && ls", A, NULL },
	{ "ro", "pwd", A, NULL },
	{ "ro", "echo x", A, NULL },
	{ "ro", "echo -e 'a\\tb'", A, NULL },
	{ "ro", "printf '%s\\n' x", A, NULL },
	{ "ro", "printf -- '%s' x", A, NULL },
	{ "ro", "printf \"%s\" \"$x\"", A, NULL },
	{ "ro", "test -f x", A, NULL },
	{ "ro", "[ -f x ]", A, NULL },
	{ "ro", "[ \"$x\" = y ]", A, NULL },
	{ "ro", "[ -n \"$x\" ]", A, NULL },
	{ "ro", "test -v HOME", A, NULL },
	{ "ro", "true", A, NULL },
	{ "ro", "false", A, NULL },
	{ "ro", ":", A, NULL },
	{ "ro", ": ${x:=1}", A, NULL },
	{ "ro", "exit 0", A, NULL },
	{ "ro", "export FOO=bar", A, NULL },
	{ "ro", "export FOO", A, NULL },
	{ "ro", "export FOO=\"$HOME/x\"", A, NULL },
	{ "ro", "unset FOO", A, NULL },
	{ "ro", "pushd /tmp", A, NULL },
	{ "ro", "popd", A, NULL },
	{ "ro", "dirs", A, NULL },
	{ "ro", "eval ls", D, "builtin:eval" },
	{ "ro", "source x", D, "builtin:source" },
	{ "ro", ". x", D, "builtin:." },
	{ "ro", "trap 'rm x' EXIT", D, "builtin:trap" },
	{ "ro", "alias ls=rm", D, "builtin:alias" },
	/* the options agents put at the top of scripts only make bash stricter */
	{ "ro", "set -x", A, NULL },
	{ "ro", "set -euo pipefail; ls", A, NULL },
	{ "ro", "set -Eeuo pipefail", A, NULL },
	{ "ro", "set -e -u -o pipefail -o errexit +x", A, NULL },
	{ "ro", "set +o xtrace", A, NULL },
	{ "ro", "set -o", A, NULL },
	{ "ro", "set +o", A, NULL },
	{ "ro", "set", A, NULL },
	{ "ro", "set -eux", A, NULL },
	{ "ro", "set -v; set +v", A, NULL },
	{ "ro", "set -o nounset -o errtrace +o pipefail +eu", A, NULL },
	{ "ro", "set -oe pipefail", A, NULL },
	{ "ro", "builtin set -euo pipefail && ls", A, NULL },
	{ "ro", "set -euo pipefail\ncd ~/work/sub\nls > out", A, NULL },
	/* ... and nothing that changes how words are read or what runs */
	{ "ro", "set -k", D, "builtin:set" },
	{ "ro", "set -a", D, "builtin:set" },
	{ "ro", "set -f", D, "builtin:set" },
	{ "ro", "set +B", D, "builtin:set" },
	{ "ro", "set -T", D, "builtin:set" },
	{ "ro", "set -P", D, "builtin:set" },
	{ "ro", "set -euk", D, "builtin:set" },
	{ "ro", "set -o posix", D, "builtin:set" },
	{ "ro", "set -o history", D, "builtin:set" },
	{ "ro", "set -eo vi", D, "builtin:set" },
	{ "ro", "set -o \"$x\"", D, "builtin:set" },
	{ "ro", "set -- rm -rf /", D, "builtin:set" },
	{ "ro", "set x y", D, "builtin:set" },
	{ "ro", "set -e $X", D, "builtin:set" },
	{ "ro", "set -n", D, "builtin:set" },
	{ "ro", "set -h", D, "builtin:set" },
	{ "ro", "set -", D, "builtin:set" },
	{ "ro", "set -o pipef", D, "builtin:set" },
	{ "ro", "set -o emacs", D, "builtin:set" },
	{ "ro", "set -o", A, NULL },
	{ "ro", "set -eo", A, NULL },
	{ "ro", "command set -k", D, "builtin:set" },
	{ "ro", "set -e; set -a; ls", D, "builtin:set" },
	{ "ro", "shopt -s expand_aliases", D, "builtin:shopt" },
	{ "ro", "hash -p /bin/sh ls", D, "builtin:hash" },
	{ "ro", "enable -f x.so y", D, "builtin:enable" },
	{ "ro", "ulimit -n 1", D, "builtin:ulimit" },
	{ "ro", "umask 0", D, "builtin:umask" },
	{ "ro", "declare -f", D, "builtin:declare" },
	{ "ro", "typeset -f", D, "builtin:typeset" },
	{ "ro", "mapfile -C cb x", D, "builtin:mapfile" },
	{ "ro", "readarray x", D, "builtin:readarray" },
	{ "ro", "printf -v x y", D, "builtin:printf" },
	{ "ro", "printf -vx y", D, "builtin:printf" },
	{ "ro", "printf $x", D, "builtin:printf" },
	{ "ro", "read -e x", D, "builtin:read" },
	{ "ro", "read x", D, "builtin:read" },
	{ "ro", "fc -l", D, "builtin:fc" },
	{ "ro", "history", D, "builtin:history" },
	{ "ro", "bind -x x", D, "builtin:bind" },
	{ "ro", "complete -C cmd x", D, "builtin:complete" },
	{ "ro", "kill 1", D, "builtin:kill" },
	{ "ro", "wait", D, "builtin:wait" },
	{ "ro", "disown", D, "builtin:disown" },
	{ "ro", "jobs", D, "builtin:jobs" },
	{ "ro", "bg", D, "builtin:bg" },
	{ "ro", "fg", D, "builtin:fg" },
	{ "ro", "suspend", D, "builtin:suspend" },
	{ "ro", "logout", D, "builtin:logout" },
	{ "ro", "caller", D, "builtin:caller" },
	{ "ro", "compgen -c", D, "builtin:compgen" },
	{ "ro", "let x=1", D, "builtin:let" },
	{ "ro", "local x", D, "builtin:local" },
	{ "ro", "readonly x", D, "builtin:readonly" },
	{ "ro", "getopts a x", D, "builtin:getopts" },
	{ "ro", "type ls", D, "builtin:type" },
	{ "ro", "unalias x", D, "builtin:unalias" },
	{ "ro", "[ $x = y ]", D, "builtin:test" },
	{ "ro", "test \"$x\" \"$y\"", D, "builtin:test" },
	{ "ro", "[ -v 'a[$(id)]' ]", D, "arith" },
	{ "ro", "test -v a[i]", D, NULL },
	{ "ro", "test -v 'a[i]'", D, "arith" },
	{ "ro", "test -v $x", D, "builtin:test" },
	{ "ro", "unset 'a[$(id)]'", D, "arith" },
	{ "ro", "unset PATH", D, "env:PATH" },
	{ "ro", "unset $x", D, "literal" },
	{ "dev", "read x", A, NULL },
	{ "dev", "read -r -p 'name: ' x", A, NULL },
	{ "dev", "read -e x", D, "builtin:read" },
	{ "dev", "read PATH", D, "env:PATH" },
	{ "dev", "read -a BASH_CMDS", D, "env:BASH_CMDS" },
	{ "dev", "read -ra BASH_ALIASES", D, "env:BASH_ALIASES" },
	{ "dev", "read -r -a words", A, NULL },
	{ "dev", "read -a \"$x\"", D, "literal" },
	{ "dev", "read $x", D, "literal" },
	{ "dev", "let x=1+2", A, NULL },
	{ "dev", "let x=y", D, "arith" },
	{ "dev", "declare -a arr", A, NULL },
	{ "dev", "declare -A m", A, NULL },
	{ "dev", "declare -n r=PATH", D, "builtin:declare" },
	{ "dev", "declare -i x=5", D, "builtin:declare" },
	{ "dev", "declare -x PATH=/tmp", D, "env:PATH" },
	{ "dev", "declare -f x", D, "builtin:functions" },
	{ "dev", "declare -a a='([$(id)]=1)'", D, NULL },
	{ "dev", "declare $x=1", D, "literal" },
	{ "dev", "mapfile -t lines < f", A, NULL },
	{ "dev", "mapfile -C cb -c 1 x", D, "builtin:mapfile" },
	{ "dev", "mapfile BASH_CMDS", D, "env:BASH_CMDS" },
	{ "dev", "pushd /tmp", D, "profiles.dev.deny" },
	{ "dev", "eval ls", D, "builtin:eval" },
};

static void
family_builtins(void **state)
{
	(void)state;
	RUN("builtins", builtins);
}

/* ---- redirections ------------------------------------------------------- */

static const struct tcase redirections[] = {
	{ "ro", "ls > /dev/null", A, NULL },
	{ "ro", "ls 2>/dev/null", A, NULL },
	{ "ro", "ls > ~/work/out", A, NULL },
	{ "ro", "ls >> ~/work/out", A, NULL },
	{ "ro", "ls &> ~/work/out", A, NULL },
	{ "ro", "ls &>> ~/work/out", A, NULL },
	{ "ro", "ls 2>&1", A, NULL },
	{ "ro", "ls >&2", A, NULL },
	{ "ro", "ls 3>&-", A, NULL },
	{ "ro", "ls 2>&1 | grep x", A, NULL },
	{ "ro", "ls < /etc/hostname", A, NULL },
	{ "ro", "ls > ~/work/new/../x", A, NULL },
	{ "ro", "ls >| ~/work/x", A, NULL },
	{ "ro", "ls > /dev/stderr", A, NULL },
	{ "ro", "cat < /dev/fd/0", A, NULL },
	{ "ro", "ls > x", A, NULL },
	{ "ro", "ls > sub/x.txt", A, NULL },
	{ "ro", "ls > @T/home/work/y", A, NULL },
	{ "ro", "ls {fd}> ~/work/x", A, NULL },
	{ "ro", "ls > .git/HEAD.tmp", A, NULL },
	{ "ro", "ls > .gitignore", A, NULL },
	{ "ro", "cd /etc && ls > /dev/null", A, NULL },
	{ "ro", "cd ~/work && ls > out.txt", A, NULL },
	{ "ro", "(cd /etc); ls > out.txt", A, NULL },
	{ "ro", "ls > /etc/passwd", D, "path:write" },
	{ "ro", "ls >> /etc/x", D, "path:write" },
	{ "ro", "ls > ~/.bashrc", D, "path:protect" },
	{ "ro", "ls >> ~/.ssh/authorized_keys", D, "path:protect" },
	{ "ro", "ls > .git/hooks/pre-commit", D, "path:protect" },
	{ "ro", "ls > .git/config", D, "path:protect" },
	{ "ro", "ls > sub/.git/config", D, "path:protect" },
	{ "ro", "ls > ~/work/../.profile", D, "path:protect" },
	{ "ro", "ls > ../x", D, "path:write" },
	{ "ro", "ls > bashrc-link", D, "path:protect" },
	{ "ro", "ls > sshdir/authorized_keys", D, "path:protect" },
	{ "ro", "ls > $f", D, "path:literal" },
	{ "ro", "ls > \"$f\"", D, "path:literal" },
	{ "ro", "ls > $(echo f)", D, "path:literal" },
	{ "ro", "ls > /dev/tcp/10.0.0.1/80", D, "path:network" },
	{ "ro", "cat < /dev/tcp/10.0.0.1/80", D, "path:network" },
	{ "ro", "ls > /dev/udp/10.0.0.1/53", D, "path:network" },
	{ "ro", "ls <> /etc/x", D, "path:write" },
	{ "ro", "ls &>> /etc/x", D, "path:write" },
	{ "ro", "ls 2> /etc/x", D, "path:write" },
	{ "ro", "ls >& /etc/x", D, "path:write" },
	{ "ro", "ls > ~root/x", D, "path:literal" },
	{ "ro", "ls > *.txt", D, "path:literal" },
	{ "ro", "ls > {a,b}", D, "path:literal" },
	{ "ro", "cd /etc && ls > passwd", D, "path:write" },
	{ "ro", "cd ~ && ls > .bashrc", D, "path:protect" },
	{ "ro", "cd ~/.ssh; ls > authorized_keys", D, "path:protect" },
	{ "ro", "cd $x; ls > f", D, "path:cwd" },
	{ "ro", "for d in a b; do cd ..; done; ls > x", D, "path:cwd" },
	{ "ro", "cd .. || true; ls > x", D, "path:write" },
	{ "ro", "ls {PATH}> ~/work/x", D, "env:PATH" },
	{ "ro", "ls >&$x", D, "path:literal" },
	{ "dev", "echo x > ~/work/secret/y", D, "path:protect" },
	{ "dev", "echo x > ~/work/notsecret", A, NULL },
	{ "strict", "cat < /etc/hostname", D, "path:read" },
	{ "strict", "cat < ~/work/f", A, NULL },
};

static void
family_redirections(void **state)
{
	(void)state;
	RUN("redirections", redirections);
}

/* ---- assignments -------------------------------------------------------- */

static const struct tcase assignments[] = {
	{ "ro", "FOO=bar ls", A, NULL },
	{ "ro", "FOO=bar", A, NULL },
	{ "ro", "a=(1 2 3)", A, NULL },
	{ "ro", "a[1]=x", A, NULL },
	{ "ro", "x=1; y=$x", A, NULL },
	{ "ro", "export LANG=C", A, NULL },
	{ "ro", "x+=y", A, NULL },
	{ "ro", "AWS_KEY=x ls", A, NULL },
	{ "ro", "x=$(ls)", A, NULL },
	{ "dev", "export EDITOR=vi", A, NULL },
	{ "dev", "EDITOR=vi git commit", A, NULL },
	{ "ro", "LD_PRELOAD=x ls", D, "env:LD_PRELOAD" },
	{ "ro", "LD_LIBRARY_PATH=/tmp ls", D, "env:LD_LIBRARY_PATH" },
	{ "ro", "LD_AUDIT=x ls", D, "env:LD_AUDIT" },
	{ "ro", "PATH=/tmp ls", D, "env:PATH" },
	{ "ro", "export PATH=/tmp", D, "env:PATH" },
	{ "ro", "PATH=/tmp", D, "env:PATH" },
	{ "ro", "PATH+=:/tmp", D, "env:PATH" },
	{ "ro", "IFS=x", D, "env:IFS" },
	{ "ro", "IFS=/ ls", D, "env:IFS" },
	{ "ro", "BASH_ENV=x ls", D, "env:BASH_ENV" },
	{ "ro", "export BASH_ENV=x", D, "env:BASH_ENV" },
	{ "ro", "ENV=x ls", D, "env:ENV" },
	{ "ro", "SHELLOPTS=xtrace ls", D, "env:SHELLOPTS" },
	{ "ro", "BASHOPTS=x ls", D, "env:BASHOPTS" },
	{ "ro", "PS4='$(rm x)'", D, "env:PS4" },
	{ "ro", "PROMPT_COMMAND=x", D, "env:PROMPT_COMMAND" },
	{ "ro", "GIT_SSH_COMMAND=x git status", D, "env:GIT_SSH_COMMAND" },
	{ "ro", "GIT_PAGER=sh git log", D, "env:GIT_PAGER" },
	{ "ro", "PAGER=sh git log", D, "env:PAGER" },
	{ "ro", "LESSOPEN='|rm x' ls", D, "env:LESSOPEN" },
	{ "ro", "EDITOR=vi", D, "env:EDITOR" },
	{ "ro", "HOME=/tmp", D, "env:HOME" },
	{ "ro", "CDPATH=/etc", D, "env:CDPATH" },
	{ "ro", "GLOBIGNORE=x", D, "env:GLOBIGNORE" },
	{ "ro", "BASH_CMDS[ls]=/bin/sh", D, "env:BASH_CMDS" },
	{ "ro", "BASH_ALIASES[ls]=rm", D, "env:BASH_ALIASES" },
	{ "ro", "BASH_XTRACEFD=1", D, "env:BASH_XTRACEFD" },
	{ "ro", "PYTHONSTARTUP=x ls", D, "env:PYTHONSTARTUP" },
	{ "ro", "PERL5OPT=x ls", D, "env:PERL5OPT" },
	{ "ro", "NODE_OPTIONS=x ls", D, "env:NODE_OPTIONS" },
	{ "ro", "GCONV_PATH=x ls", D, "env:GCONV_PATH" },
	{ "ro", "export -f f", D, "builtin:functions" },
	{ "ro", "export $x", D, "literal" },
	{ "ro", "export \"PATH=/x\"", D, "env:PATH" },
	{ "ro", "export PA\"TH\"=/x", D, "env:PATH" },
	{ "ro", "declare -x PATH=/tmp", D, "builtin:declare" },
	{ "ro", "readonly PATH", D, "builtin:readonly" },
	{ "ro", "a[$(rm x)]=1", D, NULL },
	{ "ro", "a[$(ls)]=1", D, "arith" },
	{ "ro", "x=$(rm y)", D, "unknown" },
	{ "ro", "a=($(rm x))", D, "unknown" },
	{ "ro", "for PATH in /tmp; do ls; done", D, "env:PATH" },
	{ "ro", "coproc IFS { ls; }", D, NULL },
	{ "dev", "AWS_KEY=x ls", D, "env:AWS_KEY" },
	{ "dev", "export AWS_SECRET_ACCESS_KEY=x", D, "env:AWS_SECRET_ACCESS_KEY" },
	{ "dev", "PATH=/x ls", D, "env:PATH" },
};

static void
family_assignments(void **state)
{
	(void)state;
	RUN("assignments", assignments);
}

/* ---- arithmetic --------------------------------------------------------- */

static const struct tcase arith[] = {
	{ "ro", "echo $((1+2))", A, NULL },
	{ "ro", "x=5; echo $((x*2))", A, NULL },
	{ "ro", "x=5; echo $((x))", A, NULL },
	{ "ro", "x=5; echo $(( $x + 1 ))", A, NULL },
	{ "ro", "echo $((RANDOM % 10))", A, NULL },
	{ "ro", "echo $(( $# + 1 ))", A, NULL },
	{ "ro", "echo $((COUNT + 1))", A, NULL },
	{ "ro", "((1 < 2))", A, NULL },
	{ "ro", "x=3; ((x++))", A, NULL },
	{ "ro", "for ((i=0; i<3; i++)); do echo $i; done", A, NULL },
	{ "ro", "i=0; while [ \"$i\" -lt 3 ]; do i=$((i+1)); done", A, NULL },
	{ "ro", "x=1; echo ${arr[x]}", A, NULL },
	{ "ro", "echo ${arr[0]}", A, NULL },
	{ "ro", "echo ${arr[@]} ${#arr[*]}", A, NULL },
	{ "ro", "echo ${s:1:2}", A, NULL },
	{ "ro", "x=2; echo ${s:x}", A, NULL },
	{ "ro", "[[ 1 -eq 1 ]]", A, NULL },
	{ "ro", "x=4; [[ $x -gt 3 ]]", A, NULL },
	{ "ro", "echo $((16#ff + 0x10))", A, NULL },
	{ "ro", "(( x = 5 )); echo $((x))", A, NULL },
	{ "ro", "echo $(( ${#HOME} + 1 ))", A, NULL },
	{ "ro", "[ \"$x\" -eq 1 ]", A, NULL },
	{ "ro", "x='a[$(id)]'; echo $((x))", D, "arith" },
	{ "ro", "false && BAD=1; echo $((BAD))", D, "arith" },
	{ "ro", "(BAD=1); echo $((BAD))", D, "arith" },
	{ "ro", "echo 'a[$(id)]'; _=1; echo $((_))", D, "arith" },
	{ "ro", "PWD=1; echo $((PWD))", D, NULL },
	{ "ro", "false && n=1; echo $((n))", A, NULL },
	{ "ro", "N=3; echo $((N * 2))", A, NULL },
	{ "ro", "COUNT=x; echo $((COUNT))", D, "arith" },
	{ "ro", "echo $((x))", D, "arith" },
	{ "ro", "echo $((y+1))", D, "arith" },
	{ "ro", "((x))", D, "arith" },
	{ "ro", "echo $(( $x ))", D, "arith" },
	{ "ro", "echo $((BAD))", D, "arith" },
	{ "ro", "echo $((HOME))", D, "arith" },
	{ "ro", "echo $(($1))", D, "arith" },
	{ "ro", "x=5; x=$y; echo $((x))", D, "arith" },
	{ "ro", "x=5; echo $((x)); x=$(ls)", D, "arith" },
	{ "ro", "x=5; for x in a b; do echo $((x)); done", D, "arith" },
	{ "ro", "x=5; while :; do echo $((x)); x=$y; done", D, "arith" },
	{ "ro", "for ((i=0; i<n; i++)); do :; done", D, "arith" },
	{ "ro", "[[ $x -eq 1 ]]", D, "arith" },
	{ "ro", "[[ x -lt 1 ]]", D, "arith" },
	{ "ro", "[[ 1 -ne \"$y\" ]]", D, "arith" },
	{ "ro", "[[ -v a[$x] ]]", D, "arith" },
	{ "ro", "[[ -v $x ]]", D, "arith" },
	{ "ro", "echo ${a[$x]}", D, "arith" },
	{ "ro", "echo ${a[i]}", D, "arith" },
	{ "ro", "echo ${s:$x:1}", D, "arith" },
	{ "ro", "echo ${s:x}", D, "arith" },
	{ "ro", "a[x]=1", D, "arith" },
	{ "ro", "a=([x]=1)", D, "arith" },
	{ "ro", "echo $(( $(ls) ))", D, "arith" },
	{ "ro", "echo $((`ls`))", D, "arith" },
	{ "ro", "x=5; echo $((x${y}))", D, "arith" },
	{ "ro", "echo ${x:-$((y))}", D, "arith" },
	{ "ro", "echo $(( ${x%a} ))", D, "arith" },
	{ "ro", "echo $[x]", D, "arith" },
	{ "dev", "x=1; read x; echo $((x))", D, "arith" },
	{ "dev", "let y=x+1", D, "arith" },
	{ "dev", "let i=0 i++", A, NULL },
};

static void
family_arith(void **state)
{
	(void)state;
	RUN("arith", arith);
}

/* ---- path resolution ---------------------------------------------------- */

static const struct tcase paths[] = {
	{ "ro", "ls", A, NULL },
	{ "ro", "/usr/bin/ls", A, NULL },
	{ "ro", "/bin/ls", A, NULL },
	{ "ro", "@T/lnk/ls", A, NULL },
	{ "ro", "@T/bin/ls", A, NULL },
	{ "ro", "/usr/bin/../bin/ls", A, NULL },
	{ "ro", "/usr//bin/./ls -la", A, NULL },
	{ "ro", "@T/evil/ls", D, "path" },
	{ "ro", "./ls", D, "path" },
	{ "ro", "../work/ls", D, "path" },
	{ "ro", "/tmp/ls", D, "unknown" },
	{ "ro", "/usr/bin/sh", D, "unknown" },
	{ "ro", "nosuchprog", D, "unknown" },
	{ "ro", "cd @T/evil && ./ls", D, "path" },
	{ "ro", "@T/bin/mytool", D, "unknown" },
	{ "ro", "@T/bin/sudo", D, "wrapper:sudo" },
	{ "dev", "mytool", A, NULL },
	{ "dev", "@T/bin/mytool --x", A, NULL },
	{ "dev", "python3 x.py", K, "unknown" },
	{ "dev", "nosuch", K, "unknown" },
	{ "dev", "@T/evil/ls", D, "path" },
};

static void
family_paths(void **state)
{
	(void)state;
	RUN("paths", paths);
}

/* ---- per-program rules -------------------------------------------------- */

static const struct tcase programs[] = {
	{ "ro", "git status", A, NULL },
	{ "ro", "git log --oneline -n 3", A, NULL },
	{ "ro", "git -C @T/home/work --no-pager status", A, NULL },
	{ "ro", "git -C dir --no-pager status", A, NULL },
	{ "ro", "git --no-pager log -p", A, NULL },
	{ "ro", "git diff HEAD~1 -- src/", A, NULL },
	{ "ro", "git show HEAD:README", A, NULL },
	{ "ro", "git", A, NULL },
	{ "ro", "git --version", A, NULL },
	{ "ro", "git -P log", A, NULL },
	{ "ro", "git log --format='%h %s' | head -n 5", A, NULL },
	{ "ro", "git diff --output=out.diff", A, NULL },
	{ "ro", "git push", D, "profiles.ro.allow[5]" },
	{ "ro", "git commit -m x", D, "profiles.ro.allow[5]" },
	{ "ro", "git -c core.pager=sh log", D, "profiles.ro.allow[5]" },
	{ "ro", "git -c x=y status", D, "profiles.ro.allow[5]" },
	{ "ro", "git --exec-path=/tmp status", D, "profiles.ro.allow[5]" },
	{ "ro", "git --git-dir=/tmp/x status", D, "profiles.ro.allow[5]" },
	{ "ro", "git --git-dir /tmp/x status", D, "profiles.ro.allow[5]" },
	{ "ro", "git --work-tree=/ status", D, "profiles.ro.allow[5]" },
	{ "ro", "git -p log", D, "profiles.ro.allow[5]" },
	{ "ro", "git --paginate log", D, "profiles.ro.allow[5]" },
	{ "ro", "git --config-env=core.pager=X log", D, "profiles.ro.allow[5]" },
	{ "ro", "git -C /tmp -c core.pager=sh status", D, "profiles.ro.allow[5]" },
	{ "ro", "git $x", D, "profiles.ro.allow[5]" },
	{ "ro", "git log $x", D, "profiles.ro.allow[5]" },
	{ "ro", "git show *", D, "profiles.ro.allow[5]" },
	{ "ro", "git log --output=/etc/x", D, "path:write" },
	{ "ro", "git -C ~/.ssh diff --output=authorized_keys", D, "path:protect" },
	{ "ro", "git diff --ext-diff", D, "program:git" },
	{ "ro", "git log -- $(rm x)", D, NULL },
	{ "ro", "g\\it push", D, "profiles.ro.allow[5]" },
	{ "dev", "git commit -m 'fix: handle ; and $( in args'", A, NULL },
	{ "dev", "git commit -m \"$(cat msg.txt)\"", A, NULL },
	{ "dev", "git push", D, "profiles.dev.deny[1]" },
	{ "dev", "git -C x push origin main", D, "profiles.dev.deny[1]" },
	{ "dev", "git -c user.name=x commit", D, "profiles.dev.allow" },
	{ "dev", "git log $x", D, "program:git" },
	{ "dev", "git log -- $x", A, NULL },
	{ "dev", "ls | xargs git add", D, "program:git" },
	{ "dev", "git fetch --upload-pack=sh", D, "program:git" },
	{ "dev", "git grep -O x", D, "program:git" },
	{ "ro", "find . -name '*.c'", A, NULL },
	{ "ro", "find . -type f -print", A, NULL },
	{ "ro", "find . -exec rm {} \\;", D, "profiles.ro.allow[6]" },
	{ "ro", "find . -execdir sh \\;", D, "profiles.ro.allow[6]" },
	{ "ro", "find . -delete", D, "profiles.ro.allow[6]" },
	{ "ro", "find . -fprint x", D, "profiles.ro.allow[6]" },
	{ "ro", "find . $x", D, "profiles.ro.allow[6]" },
	{ "ro", "find . -name $x", D, "profiles.ro.allow[6]" },
	{ "ro", "find . -name \"$x\"", D, "profiles.ro.allow[6]" },
	{ "ro", "cat /etc/hostname", A, NULL },
	{ "ro", "cat /etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat /etc/shadow-", D, "profiles.ro.deny[0]" },
	/* what the program reads through a redirection meets the same rule */
	{ "ro", "cat < /etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat 0</etc/shadow-", D, "profiles.ro.deny[0]" },
	{ "ro", "cat 3</etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cd /etc && cat < shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat < ../../../../../../etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat < \"$F\"", D, "path:literal" },
	{ "ro", "cat < /etc/hosts", A, NULL },
	{ "ro", "cat <<< /etc/shadow", A, NULL },
	{ "ro", "grep root < /etc/shadow", A, NULL },	/* the rule names cat only */
	{ "ro", "cat /etc/../etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat //etc/shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cd /etc && cat shadow", D, "profiles.ro.deny[0]" },
	{ "ro", "cat @T/shadowlink", D, "profiles.ro.deny[0]" },
	{ "ro", "cat $f", D, "profiles.ro.deny[0]" },
	{ "ro", "cat /etc/shado?", D, "profiles.ro.deny[0]" },
	{ "ro", "cat x /etc/shadow", D, "profiles.ro.deny[0]" },
	{ "wrap", "cat x", A, NULL },
	{ "wrap", "cat /etc/passwd", D, "profiles.wrap.allow" },
	{ "wrap", "head -n 5 x.log", A, NULL },
	{ "wrap", "head /etc/passwd", D, "profiles.wrap.allow" },
	{ "wrap", "cat @T/shadowlink", D, "profiles.wrap.allow" },
	{ "wrap", "wc -l ~/work/a.txt", A, NULL },
	{ "wrap", "wc -l a.txt", A, NULL },
	{ "wrap", "wc -l passwd-link", D, "profiles.wrap.allow" },
	{ "wrap", "wc -l ~/work/../.profile", D, "profiles.wrap.allow" },
	{ "wrap", "wc -l /etc/passwd", D, "profiles.wrap.allow" },
	{ "dev", "tee ~/work/log", A, NULL },
	{ "dev", "ls | tee -a out.txt", A, NULL },
	{ "dev", "sed -i 's/a/b/' f.txt", A, NULL },
	{ "dev", "sed 's/a/b/' f", A, NULL },
	{ "dev", "sed -n '/start/,/end/p' f", A, NULL },
	{ "dev", "sed -e 's/x/y/' -e 's/a/b/' f", A, NULL },
	{ "dev", "sort -o sorted.txt x", A, NULL },
	{ "dev", "sort -u x", A, NULL },
	{ "dev", "cp a b", A, NULL },
	{ "dev", "cp -r a b ~/work/dir/", A, NULL },
	{ "dev", "mv a b", A, NULL },
	{ "dev", "cp -s ~/.bashrc x", D, "path:protect" },
	{ "dev", "cp --link ~/.ssh/authorized_keys k", D, "path:protect" },
	{ "dev", "cp -s a b", A, NULL },
	{ "dev", "mv evil .git", D, "path:protect" },
	{ "dev", "mv evil sub/.git", D, "path:protect" },
	{ "dev", "cp -r evil/.git sub/", D, "path:protect" },
	{ "dev", "cp -r evil/hooks .git/", D, "path:protect" },
	{ "dev", "cp -r src dst", A, NULL },
	{ "dev", "mv src/a.c src/b.c", A, NULL },
	{ "dev", "sed 'r /etc/hosts\ne id' f", D, "program:sed" },
	{ "dev", "sed '/x/r other.txt' f", A, NULL },
	{ "dev", "touch x", A, NULL },
	{ "dev", "mkdir -p d/e", A, NULL },
	{ "dev", "rm -f x", A, NULL },
	{ "dev", "rm -rf build", A, NULL },
	{ "dev", "tee ~/.ssh/authorized_keys", D, "path:protect" },
	{ "dev", "tee /etc/x", D, "path:write" },
	{ "dev", "tee $(echo f)", D, "path:literal" },
	{ "dev", "sed -i 's/a/b/' ~/.bashrc", D, "path:protect" },
	{ "dev", "sed -i.bak s/x/y/ /etc/hosts", D, "path:write" },
	{ "dev", "sed --in-place=.b s/x/y/ /etc/hosts", D, "path:write" },
	{ "dev", "sed 's/x/id/e' f", D, "program:sed" },
	{ "dev", "sed 'w /tmp/x' f", D, "program:sed" },
	{ "dev", "sed -e '1e id' f", D, "program:sed" },
	{ "dev", "sed -f script f", D, "program:sed" },
	{ "dev", "sed -n p $f", D, "path:literal" },
	{ "dev", "sort -o /etc/x y", D, "path:write" },
	{ "dev", "sort -o/etc/x y", D, "path:write" },
	{ "dev", "sort --output=/etc/x y", D, "path:write" },
	{ "dev", "sort --compress-program=sh x", D, "program:sort" },
	{ "dev", "sort --outp=/etc/x y", D, "path:write" },
	{ "dev", "sort --compress=sh x", D, "program:sort" },
	{ "dev", "cp --target=/etc x", D, "path:write" },
	{ "dev", "cp --recur evil/. .git", D, "path:protect" },
	{ "dev", "sed --in-pl s/a/b/ ~/.bashrc", D, "path:protect" },
	{ "dev", "sed --sandbox 's/x/id/e' f", A, NULL },
	{ "dev", "sed --sand 's/x/id/e' f", D, "program:sed" },
	/* more scripts than the checker keeps: the unscanned rest is refused */
	{ "dev", "sed -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e 'w /tmp/x' f", D, "program:sed" },
	{ "dev", "sed -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e p -e 's/x/id/e' f", D, "program:sed" },
	{ "dev", "git log --outp=/etc/x", D, "path:write" },
	{ "dev", "git diff --ext-d", D, "program:git" },
	{ "dev", "git fetch --upload=sh", D, "program:git" },
	{ "dev", "git log -- --output=/etc/x", A, NULL },
	{ "dev", "git -C \"$d\" diff --output=x", D, NULL },
	{ "dev", "git -C ~ -C .ssh diff --output=x", D, "path" },
	{ "dev", "git -C ~/work/sub diff --output=x.diff", A, NULL },
	{ "dev", "cp x /etc/", D, "path:write" },
	{ "dev", "cp x ~/.ssh/", D, "path:protect" },
	{ "dev", "cp x .git/hooks/", D, "path:protect" },
	{ "dev", "cp hook .git/hooks/pre-commit", D, "path:protect" },
	{ "dev", "cp -t /etc x", D, "path:write" },
	{ "dev", "cp --target-directory=/etc x", D, "path:write" },
	{ "dev", "mv ~/.bashrc x", D, "path:protect" },
	{ "dev", "mv x ~/.profile", D, "path:protect" },
	{ "dev", "touch ~/.bashrc", D, "path:protect" },
	{ "dev", "mkdir ~/.config/git", D, "path:protect" },
	{ "dev", "rm ~/.bashrc", D, "path:protect" },
	{ "dev", "rm /etc/x", D, "path:write" },
	{ "dev", "rm -rf -- /", D, "path:write" },
	{ "dev", "rm $x", D, "path:literal" },
	{ "dev", "rm *.o", D, "path:literal" },
	{ "dev", "rm() { :; }; rm /etc/passwd", D, "path:write" },
	{ "dev", "if false; then rm() { :; }; fi; rm /etc/passwd", D, "path:write" },
	{ "dev", "f() { ls; }; f", A, NULL },
	{ "dev", "ls() { :; }; ls", A, NULL },
	{ "dev", "ls &", A, NULL },
};

static void
family_programs(void **state)
{
	(void)state;
	RUN("programs", programs);
}

/* ---- protected paths ---------------------------------------------------- */

static const struct tcase protect[] = {
	{ "dev", "echo > ~/.bash_profile", D, "path:protect" },
	{ "dev", "echo > ~/.bash_login", D, "path:protect" },
	{ "dev", "echo > ~/.bash_logout", D, "path:protect" },
	{ "dev", "echo > ~/.profile", D, "path:protect" },
	{ "dev", "echo > ~/.inputrc", D, "path:protect" },
	{ "dev", "echo > ~/.gitconfig", D, "path:protect" },
	{ "dev", "echo > ~/.config/git/config", D, "path:protect" },
	{ "dev", "echo > ~/.ssh/rc", D, "path:protect" },
	{ "dev", "echo > sub/.git/config", D, "path:protect" },
	{ "dev", "echo > .gitattributes", D, "path:protect" },
	{ "dev", "echo > x/.gitattributes", D, "path:protect" },
	{ "dev", "echo > .git/info/attributes", D, "path:protect" },
	{ "dev", "echo > .git/hooks/post-checkout", D, "path:protect" },
	{ "dev", "echo > ~/work/secret/a", D, "path:protect" },
	{ "dev", "echo > secret/deep/er", D, "path:protect" },
	{ "dev", "echo > .envrc", D, "path:protect" },
	{ "dev", "echo > ~/work/notsecret", A, NULL },
	{ "dev", "echo > ~/work/.gitignore", A, NULL },
	{ "dev", "echo > ~/work/.git/HEAD", A, NULL },
	{ "dev", "echo > ~/work/src/main.c", A, NULL },
	{ "dev", "echo > ~/work/hooks.md", A, NULL },
};

static void
family_protect(void **state)
{
	(void)state;
	RUN("protect", protect);
}

/* ---- tiers and the cd idioms ------------------------------------------------ */

static const struct tcase tiers[] = {
	/* developer tier: built files beneath paths.exec run */
	{ "tier", "./ls", A, "profiles.tier.paths.exec" },
	{ "tier", "./not-built-yet", A, "profiles.tier.paths.exec" },
	{ "tier", "ls && ./t", A, NULL },
	{ "tier", "cd sub && ./x", A, NULL },
	{ "tier", "sub/../ls --version", A, "profiles.tier.paths.exec" },
	/* ... nowhere else, and never under a denied name */
	{ "tier", "@T/evil/ls", D, "path" },
	{ "tier", "../../evil/ls", D, "path" },
	{ "tier", "/tmp/not-there", D, "unknown" },
	{ "tier", "./../../bin/x", D, "unknown" },
	{ "tier", "su", D, "profiles.tier.deny" },
	{ "tier", "git push", D, "profiles.tier.deny" },
	/* a cd the gateway cannot follow: the kernel decides in this tier */
	{ "tier", "cd \"$X\" && ./configure", A, NULL },
	{ "tier", "cd \"$X\" && printf x > out", A, NULL },
	{ "tier", "cd \"$X\" && su", D, "profiles.tier.deny" },
	{ "ro", "cd \"$X\" && ./configure", D, "path" },
	{ "ro", "cd \"$X\" && printf x > out", D, "path:cwd" },
	/* the private /tmp */
	{ "tier", "printf x > /tmp/scratch", A, NULL },
	{ "ro", "printf x > /tmp/scratch", D, "path:write" },
	/* strict tier: built files do not run */
	{ "ro", "./ls", D, "path" },
	{ "ro", "./not-built-yet", D, "unknown" },
	/* cd DIR && ...: only DIR; cd DIR; ...: either */
	{ "ro", "cd / && cd ~/work/sub && printf x > f", A, NULL },
	{ "ro", "cd / && cd ~/work/sub && ls && printf x > f", A, NULL },
	{ "ro", "cd /; cd ~/work/sub; printf x > f", D, "path:write" },
	{ "ro", "cd / && printf x > f", D, "path:write" },
	{ "ro", "cd ~/work/sub && printf x > f; printf y > g", A, NULL },
	{ "ro", "cd / && ls; printf x > f", D, "path:write" },
	/* cd DIR || exit: past it, only DIR */
	{ "ro", "cd / || exit 1\ncd ~/work/sub || exit 1\nprintf x > f", A, NULL },
	{ "ro", "cd ~/work/sub || exit 1; printf x > f", A, NULL },
	{ "ro", "cd ~/work/sub || ls; cd /; printf x > f", D, "path:write" },
	{ "ro", "cd / || echo failed; printf x > f", D, "path:write" },
	/* the idioms: built files, after a cd the gateway follows */
	{ "tier", "./configure", A, "profiles.tier.paths.exec" },
	{ "tier", "build/test_foo", A, "profiles.tier.paths.exec" },
	{ "tier", "@T/home/work/build/test_foo", A, "profiles.tier.paths.exec" },
	{ "tier", "cd build && ./test_foo", A, NULL },
	{ "tier", "cd / && cd ~/work && ./configure && make", A, NULL },
	{ "tier", "cd ~/work/build || exit 1; ./test_foo > log", A, NULL },
	{ "tier", "cd sub; ./x", A, NULL },
	{ "ro", "./configure", D, "unknown" },
	{ "ro", "cd ~/work && ./configure", D, "unknown" },
	{ "ro", "build/test_foo", D, "unknown" },
	/* a deny rule names programs, wherever they were built */
	{ "tier", "./build/su", D, "profiles.tier.deny[1]" },
	{ "tier", "cd build && ./su", D, "profiles.tier.deny[1]" },
	{ "tier", "cd \"$X\" && ./su", D, "profiles.tier.deny[1]" },
	/* outside paths.exec: not run */
	{ "tier", "@T/evil/sub/../ls", D, "path" },
	{ "tier", "../../evil/x", D, "unknown" },
	{ "tier", "/tmp/x", D, "unknown" },
	{ "tier", "/bin/../tmp/x", D, "unknown" },
	/* a program path is resolved as execve(2) does: evsub's ".." is
	 * evil/, not work/ */
	{ "tier", "evsub/../ls", D, "path" },
	{ "tier", "evsub/../not-built", D, "unknown" },
	{ "tier", "evsub/../../../bin/sh", D, "unknown" },
	/* cd DIR && cmd > file: only DIR; with ; or || both */
	{ "ro", "cd sub && printf x > f", A, NULL },
	{ "ro", "cd ~/work/sub && printf x > ../f", A, NULL },
	{ "ro", "cd sub; printf x > f", A, NULL },
	{ "ro", "cd sub && printf x > ../f", A, NULL },
	{ "ro", "cd sub; printf x > ../f", D, "path:write" },
	{ "ro", "cd sub || printf x > ../f", D, "path:write" },
	{ "ro", "cd sub && ls || printf x > ../f", D, "path:write" },
	{ "ro", "cd sub && ls && printf x > ../f", A, NULL },
	{ "ro", "cd / && cd ~/work && cd sub && printf x > f", A, NULL },
	{ "ro", "pushd / && printf x > ~/work/f && printf y > f", D, "path:write" },
	{ "ro", "pushd ~/work/sub && printf x > f", A, NULL },
	/* pushd -n does not change directory; pushd alone or -N: cannot tell */
	{ "ro", "pushd -n / && printf x > f", A, NULL },
	{ "ro", "pushd && printf x > f", D, "path:cwd" },
	{ "ro", "pushd -1 && printf x > f", D, "path:cwd" },
	{ "ro", "pushd +1 && printf x > f", D, "path:cwd" },
	{ "tier", "pushd && printf x > f", A, NULL },
	/* a function named cd may not cd at all */
	{ "dev", "cd /; cd() { :; }; cd ~/work/sub && printf x > f", D, "path:write" },
	{ "dev", "cd /; cd ~/work/sub && printf x > f", A, NULL },
	/* cd is logical (bash's $PWD, ".." taken lexically) unless -P; where
	 * the two differ (home/wl is work/sub), either may be the result */
	{ "ro", "cd ../wl/.. && printf x > f", D, "path:write" },
	{ "ro", "cd -P ../wl/.. && printf x > f", A, NULL },
	{ "ro", "cd -P ../wl && cd -L .. && printf x > f", A, NULL },
	{ "ro", "cd ../wl && cd .. && printf x > f", D, "path:write" },
	/* a symlink taken from the session's own directory (whose logical and
	 * physical names are one): evsub is @T/evil/sub, so ".." after it is
	 * work/ for bash's $PWD and @T/evil for the kernel */
	{ "ro", "cd evsub && cd .. && printf x > f", D, "path:write" },
	{ "ro", "cd -P evsub && cd -L .. && printf x > f", D, "path:write" },
	{ "ro", "cd evsub && printf x > ../f", D, "path:write" },
	{ "ro", "cd evsub && printf x > f", D, "path:write" },
	{ "ro", "cd sub && cd .. && printf x > f", A, NULL },
	{ "ro", "cd ./sub/ && cd .. && printf x > f", A, NULL },
	{ "ro", "cd -Q / && printf x > f", D, "path:cwd" },
	/* an absolute target is resolved as open(2) does: sshdir is ../.ssh */
	{ "ro", "printf x > ~/work/sshdir/../.bashrc", D, "path:protect" },
	{ "ro", "printf x > @T/home/work/sshdir/../.bashrc", D, "path:protect" },
	{ "ro", "printf x > ~/work/sub/../f", A, NULL },
	/* git -C DIR: DIR as the kernel sees it, from every possible cwd */
	{ "ro", "git -C sub log --output=o", A, NULL },
	{ "ro", "git -C sshdir log --output=x", D, "path:protect" },
	{ "ro", "git -C sshdir log --output=../.bashrc", D, "path:protect" },
	{ "ro", "cd /; git -C . log --output=o", D, "path:write" },
	{ "ro", "cd \"$X\"; git -C . log --output=o", D, "path:cwd" },
	/* where the directory cannot be known: the kernel in the developer
	 * tier, a refusal in the strict one */
	{ "tier", "for d in a b; do cd $d; done; ./configure", A, NULL },
	{ "tier", "for d in a b; do cd $d && printf x > f; done", A, NULL },
	{ "ro", "for d in a b; do cd $d && printf x > f; done", D, "path:cwd" },
	{ "ro", "for d in a b; do cd $d; done; ./configure", D, "path" },
	{ "tier", "cd \"$X\" && mv a b", D, "path:cwd" },
	/* cd DIR; cmd: where the cd may fail, the developer tier leaves a
	 * target allowed from one of the directories to the kernel, and
	 * refuses one allowed from none; the strict tier refuses and says
	 * how to write the line */
	{ "tier", "cd ~/.ssh; printf x > ../.bashrc", D, "path:protect" },
	{ "tier", "cd sub; printf x > ../f", A, NULL },
	{ "tier", "cd /; printf x > f", A, NULL },
	{ "tier", "cd ~/.ssh; printf x > authorized_keys", A, NULL },
	{ "tier", "cd sub\nprintf x > ../f", A, NULL },
	{ "tier", "cd /nonexistent; ./configure", A, NULL },
	{ "tier", "cd sub; su", D, "profiles.tier.deny" },
	{ "ro", "cd /; printf x > f", D, "path:write" },
	{ "ro", "cd sub; ./x", D, "unknown" },
	{ "ro", "cd sub; ./ls", D, "path" },
	/* if cd DIR; then ...: the branch runs in DIR; after it, either */
	{ "ro", "if cd sub; then printf x > ../f; fi", A, NULL },
	{ "ro", "if cd /; then printf x > ~/work/f; fi", A, NULL },
	{ "ro", "if cd sub; then :; else printf x > ../f; fi", D, "path:write" },
	{ "ro", "if cd sub; then :; fi; printf x > ../f", D, "path:write" },
	{ "ro", "if ls; then :; elif cd sub; then printf x > ../f; fi", A, NULL },
	{ "ro", "if cd() { :; }; cd sub; then printf x > ../f; fi", D, NULL },
	/* set -e: a failed cd ends the line (only in the line's own list) */
	{ "ro", "set -e; cd sub; printf x > ../f", A, NULL },
	{ "ro", "set -euo pipefail\ncd sub\nprintf x > ../f", A, NULL },
	{ "ro", "set -o errexit; cd sub; printf x > ../f", A, NULL },
	{ "ro", "set -o pipefail; cd sub; printf x > ../f", D, "path:write" },
	{ "ro", "set -e; set +e; cd sub; printf x > ../f", D, "path:write" },
	{ "ro", "(set -e); cd sub; printf x > ../f", D, "path:write" },
	{ "ro", "if true; then set -e; fi; cd sub; printf x > ../f", D, "path:write" },
	{ "ro", "set -e; cd sub || true; printf x > ../f", D, "path:write" },
	{ "ro", "set -e; { cd sub; printf x > ../f; }", D, "path:write" },
	/* a builtin's program twin, run by a wrapper */
	{ "tier", "xargs echo", A, NULL },
	{ "tier", "ls | xargs -I{} echo {}", A, NULL },
	{ "ro", "ls | xargs echo", D, "unknown" },
};

static void
family_tiers(void **state)
{
	(void)state;
	RUN("tiers", tiers);
}

/* unknown: allow (developer tier): refused only what the kernel cannot hold */
static const struct tcase unknown_allow[] = {
	{ "open", "stat x; file x; sha256sum x", A, "profiles.open.unknown" },
	{ "open", "while read l; do echo \"$l\"; done < f", A, NULL },
	{ "open", "f() { echo hi; }; f", A, NULL },
	{ "open", "sleep 1 & wait", A, NULL },
	{ "open", "sleep 100 & kill %1", A, NULL },
	{ "open", "source ./env.sh && . ./env.sh", A, "profiles.open.unknown" },
	{ "open", "eval 'echo hi'; trap 'echo x' EXIT; type ls; hash; jobs", A, NULL },
	{ "open", "mapfile -t a < f; readarray b < f", A, NULL },
	{ "open", "echo $(nproc); seq 3", A, NULL },
	{ "open", "find . -name '*.c' -exec wc -l {} +", A, NULL },
	{ "open", "export PATH=$PATH:~/work/bin MAKEFLAGS=-j2", A, NULL },
	{ "open", "~/work/bin/tool", A, "profiles.open.paths.exec" },
	{ "open", "coproc cat", A, NULL },
	/* what the kernel cannot hold, or the line shows */
	{ "open", "git push", D, "profiles.open.deny" },
	{ "open", "xargs git push", D, "profiles.open.deny" },
	{ "open", "su -c id", D, "profiles.open.deny" },
	{ "open", "git rebase main", D, "profiles.open.allow" },
	{ "open", "frob > /etc/x", D, "path:write" },
	{ "open", "frob > ~/work/.git/hooks/x", D, "path:protect" },
	/* what the line does not show: the exec supervisor and the kernel
	 * judge it (ag_walk_exec_judged) */
	{ "open", "$x arg", A, "kernel:exec" },
	{ "open", "\"$PY\" -m pytest", A, "kernel:exec" },
	{ "open", "rm -f *.o; cp \"$f\" /tmp/; echo x > \"$out\"", A, NULL },
	{ "open", "GIT_EDITOR=true EDITOR=true git status", A, NULL },
	/* git -c outranks the sandbox's fixed settings (core.hooksPath) */
	{ "open", "git -c core.hooksPath=h status", D, "profiles.open.allow" },
	{ "open", "GIT_CONFIG_COUNT=1 git status", D, "env:GIT_CONFIG_COUNT" },
	{ "open", "NODE_OPTIONS=--require=x.js npm pack", D, "env:NODE_OPTIONS" },
	{ "open", "export PAGER=cat GIT_SEQUENCE_EDITOR=true", A, NULL },
	{ "open", "ln -s /usr/bin/python3 ~/work/py", A, NULL },
	{ "open", "export BASH_ENV=/x", D, "env:BASH_ENV" },
	{ "open", "export LD_PRELOAD=/x.so", D, "env:LD_PRELOAD" },
	/* every exec judged: IFS and LD_LIBRARY_PATH within a line (not kept) */
	{ "open", "export IFS=x", A, NULL },
	{ "open", "while IFS= read -r l; do echo \"$l\"; done < f", A, NULL },
	{ "open", "IFS=, read -ra parts <<< a,b", A, NULL },
	{ "open", "LD_LIBRARY_PATH=. ./test_m", A, NULL },
	{ "open", "export LD_AUDIT=/x.so", D, "env:LD_AUDIT" },
	{ "open", "RUSTFLAGS=-Dwarnings cargo build", A, NULL },
	{ "open", "npm_config_node_options=--require=x npm test", D, "env:npm_config_node_options" },
	{ "open", "npm_config_loglevel=error npm test", A, NULL },
	{ "open", "hash -p /bin/sh ls", D, "builtin:hash" },
	{ "open", "read -e x", D, "builtin:read" },
	{ "open", "sudo id", D, "wrapper:sudo" },
	/*
	 * Debuggers and tracers: what they run reaches the kernel as an exec
	 * the supervisor judges (valgrind's program through its own words,
	 * prog.h), so they run; the line still judges what it shows.
	 */
	{ "open", "strace -f ls", A, "profiles.open.unknown" },
	{ "open", "strace -f -o trace.txt ./configure", A, NULL },
	{ "open", "strace -p 1", A, NULL },
	{ "open", "strace -E X=1 -E Y git status", A, NULL },
	{ "open", "strace -o '|grep open' ls", A, NULL },
	{ "open", "strace -f git push", D, "profiles.open.deny" },
	{ "open", "strace -fe trace=execve -s 99 -- git -C r push", D, "profiles.open.deny" },
	{ "open", "strace --trace execve git push", D, "profiles.open.deny" },
	{ "open", "strace -o /etc/x ls", D, "path:write" },
	{ "open", "strace -fo/etc/x ls", D, "path:write" },
	{ "open", "strace --output=/etc/x ls", D, "path:write" },
	{ "open", "strace --out /etc/x ls", D, "path:write" },
	{ "open", "strace -E LD_PRELOAD=/x.so ls", D, "env:LD_PRELOAD" },
	{ "open", "ltrace -o /etc/x ls", D, "path:write" },
	{ "open", "ltrace -S git push", D, "profiles.open.deny" },
	{ "open", "gdb -batch -ex bt ./configure", A, NULL },
	{ "open", "gdb -q -batch -ex 'shell git push'", A, NULL },
	{ "open", "gdb -p 1 -batch -ex bt", A, NULL },
	{ "open", "gdb --batch --ex=run --args git push origin", D, "profiles.open.deny" },
	{ "open", "gdb -x cmds su", D, "profiles.open.deny" },
	{ "open", "valgrind --leak-check=full -q ./configure", A, NULL },
	{ "open", "valgrind --version", A, NULL },
	{ "open", "valgrind $VGOPTS ./configure", A, NULL },
	{ "open", "valgrind git push", D, "profiles.open.deny" },
	{ "open", "valgrind -q -- git push", D, "profiles.open.deny" },
	/* sh's own exec of git is judged, valgrind's or not */
	{ "open", "valgrind --trace-children=yes sh -c 'git push'", A, NULL },
	{ "open", "@T/bin/memcheck-amd64-linux git push", D, "profiles.open.deny" },
	{ "open", "valgrind --log-file=/etc/x ls", D, "path:write" },
	{ "open", "valgrind --xml=yes --xml-file=/etc/vg.xml ls", D, "path:write" },
	{ "open", "valgrind --log-file=vg.%p.log ls", A, NULL },
	/* a deny rule names a builtin: what hides code stays refused */
	{ "openbi", "ulimit -n 10", D, "profiles.openbi.deny" },
	{ "openbi", "eval 'ulimit -n 10'", D, "builtin:code" },
	{ "openbi", "source ./x.sh", D, "builtin:code" },
	{ "openbi", "trap 'ulimit -n 1' EXIT", D, "builtin:code" },
	{ "openbi", "read l < f; kill %1; frob", A, NULL },
	/* a variable could name the denied builtin, which no exec shows */
	{ "openbi", "$x -n 10", D, "literal" },
	{ "openbi", "[ $n -lt 3 ]", D, "builtin:test" },
	{ "open", "[ $n -lt 3 ] && [ -n $x ]", A, NULL },
	/* features: deny stays meaningful */
	{ "openbi", "sleep 1 &", D, "feature:background" },
	{ "openbi", "f() { :; }", A, NULL },
};

static void
family_unknown_allow(void **state)
{
	(void)state;
	RUN("unknown_allow", unknown_allow);
}

/* The two idioms exactly as typed, from the home directory. */
static void
cd_idioms_from_home(void **state)
{
	static const struct tcase t[] = {
		{ "ro", "cd ~/work && printf x > Makefile", A, NULL },
		{ "ro", "cd ~/work || exit 1; printf x > Makefile", A, NULL },
		{ "ro", "cd ~/work; printf x > Makefile", D, "path:write" },
		{ "ro", "cd ~/work || printf x > Makefile", D, "path:write" },
		{ "tier", "cd ~/work && ./configure && make", A, NULL },
		{ "tier", "cd work/build && ./test_foo", A, NULL },
		{ "tier", "./configure", D, "unknown" },
		{ "ro", "cd ~/work && ./configure", D, "unknown" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ag_decision d;

		decide_in(t[i].profile, t[i].cmd, home, envv, &d);
		if ((t[i].expect == A) != (d.verdict == AG_ALLOW) ||
		    (t[i].rule != NULL && strncmp(d.rule, t[i].rule, strlen(t[i].rule)) != 0))
			fail_msg("%s: %s: got %s (%s) %s", t[i].profile, t[i].cmd,
			    ag_verdict_name(d.verdict), d.rule, d.reason);
		ag_decision_free(&d);
	}
}

/* ---- argv: exact argument rules ------------------------------------------ */

static const struct tcase argv_rules[] = {
	/* the benign commands, as the backup job sends them */
	{ "backup", "tar -x -C /tmp -f -", A, "profiles.backup.allow.restore" },
	{ "backup", "'tar' \"-x\" -C /tmp -f '-'", A, "profiles.backup.allow.restore" },
	{ "backup", "tar -t -f -", A, "profiles.backup.allow[1]" },
	{ "backup", "env tar -x -C /tmp -f -", A, NULL },
	{ "backup", "nice -n 5 tar -x -C /tmp -f -", A, NULL },
	{ "backup", "timeout 60 tar -t -f -", A, NULL },
	{ "backup", "tar -x -C /tmp -f - < /dev/null", A, NULL },
	{ "backup", "date", A, "profiles.backup.allow[2]" },
	{ "backup", "head -n 20 /etc/hosts", A, NULL },
	{ "backup", "cat /etc/hosts", A, "profiles.backup.allow.hosts" },
	{ "backup", "git -c core.pager=cat log", A, NULL },
	{ "backup", "echo hi", A, NULL },
	{ "backup", "ls -l", A, NULL },
	{ "backup", "ls / /", A, NULL },
	/* one word more, fewer, glued, split or moved */
	{ "backup", "tar -x -C /tmp -f - --to-command=sh", D, "profiles.backup.allow.restore" },
	{ "backup", "tar --to-command=sh -x -C /tmp -f -", D, "profiles.backup.allow.restore" },
	{ "backup", "tar -x -C /tmp -f - 2>/dev/null --to-command=sh", D, "profiles.backup.allow.restore" },
	{ "backup", "tar -x -C /tmp -f - >/dev/null --use-compress-program=sh", D, NULL },
	{ "backup", "tar -xC/tmp -f -", D, NULL },
	{ "backup", "tar -x -C/tmp -f -", D, NULL },
	{ "backup", "tar -x -C /tmp -f - --", D, NULL },
	{ "backup", "tar -- -x -C /tmp -f -", D, NULL },
	{ "backup", "tar -x '-C /tmp' -f -", D, NULL },
	{ "backup", "tar '-x -C' /tmp -f -", D, NULL },
	{ "backup", "tar -x -C /tmp -f", D, NULL },
	{ "backup", "tar -x -C /tmp", D, NULL },
	{ "backup", "tar", D, NULL },
	{ "backup", "tar -x -C / -f -", D, NULL },
	{ "backup", "tar -x -C /tmp/ -f -", D, NULL },
	{ "backup", "tar -x -C /tmp/../etc -f -", D, NULL },
	{ "backup", "tar -x -C /tmp -f /etc/shadow", D, NULL },
	{ "backup", "tar -t -f - -x -C /tmp", D, NULL },
	/* words the gateway cannot count or see */
	{ "backup", "tar -x -C /tmp -f \"$f\"", D, NULL },
	{ "backup", "tar -x -C /tmp -f $f", D, NULL },
	{ "backup", "tar -x -C /tmp $opts -f -", D, NULL },
	{ "backup", "tar -x -C /tmp -f {-,--to-command=sh}", D, NULL },
	{ "backup", "tar -x -C /tmp -f -*", D, NULL },
	{ "backup", "tar -x -C ~ -f -", D, NULL },
	{ "backup", "tar -x -C $(echo /tmp) -f -", D, NULL },
	{ "backup", "tar -x -C /tmp -f - $(echo --to-command=sh)", D, NULL },
	{ "backup", "xargs tar -x -C /tmp -f -", D, NULL },
	{ "backup", "echo --to-command=sh | xargs tar -x -C /tmp -f -", D, NULL },
	/* through wrappers and the environment */
	{ "backup", "env tar -x -C /tmp -f - --to-command=sh", D, "profiles.backup.allow.restore" },
	{ "backup", "nice tar -x -C / -f -", D, NULL },
	{ "backup", "timeout 5 env nice tar -xf - -C /tmp", D, NULL },
	{ "backup", "TAR_OPTIONS=--to-command=sh tar -x -C /tmp -f -", D, NULL },
	{ "backup", "env TAR_OPTIONS=--to-command=sh tar -x -C /tmp -f -", D, NULL },
	{ "backup", "export TAR_OPTIONS=--to-command=sh; tar -x -C /tmp -f -", D, NULL },
	/* argv: [] is no arguments at all, even an empty one */
	{ "backup", "date -s 2020-01-01", D, "profiles.backup.allow[2]" },
	{ "backup", "date ''", D, NULL },
	{ "backup", "date +%s", D, NULL },
	/* a pattern element: one word, and a path pattern sees the file */
	{ "backup", "head -n -5 /etc/hosts", D, NULL },
	{ "backup", "head -n 5 /etc/shadow", D, NULL },
	{ "backup", "head -n '5 /etc/shadow' /etc/hosts", A, NULL },
	{ "backup", "cat /etc/hosts/../shadow", D, NULL },
	{ "backup", "cat /etc/shadow", D, NULL },
	{ "backup", "cat /etc/hosts /etc/shadow", D, NULL },
	/* a global option the argv writes out, and only that one */
	{ "backup", "git -c core.pager=sh log", D, NULL },
	{ "backup", "git -c core.pager=cat log -p", D, NULL },
	{ "backup", "git log", D, NULL },
	/* a builtin's rule */
	{ "backup", "echo bye", D, NULL },
	/* a deny rule's argv: that vector, however the path is spelled */
	{ "backup", "ls /", D, "profiles.backup.deny.no-root" },
	{ "backup", "ls //", D, "profiles.backup.deny.no-root" },
	{ "backup", "ls /tmp/..", D, "profiles.backup.deny.no-root" },
	{ "backup", "cd / && ls .", D, "profiles.backup.deny.no-root" },
	{ "backup", "ls $d", D, "profiles.backup.deny.no-root" },
};

static void
family_argv(void **state)
{
	(void)state;
	RUN("argv", argv_rules);
}

/* The refusal says which rule and the one form it allows. */
static void
argv_refusal_names_the_form(void **state)
{
	struct ag_decision d;

	(void)state;
	decide_in("backup", "tar -x -C /tmp -f - --to-command=sh", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "profiles.backup.allow.restore");
	assert_non_null(strstr(d.reason, "profiles.backup.allow.restore (tar)"));
	assert_non_null(strstr(d.reason, "'tar -x -C /tmp -f -'"));
	ag_decision_free(&d);
	decide_in("backup", "date -u", work, envv, &d);
	assert_non_null(strstr(d.reason, "profiles.backup.allow[2] (date)"));
	assert_non_null(strstr(d.reason, "(no arguments)"));
	ag_decision_free(&d);
	decide_in("backup", "ls /", work, envv, &d);
	assert_non_null(strstr(d.reason, "denied by profiles.backup.deny.no-root (ls)"));
	ag_decision_free(&d);
}

/* ---- features ----------------------------------------------------------- */

static const struct tcase features[] = {
	{ "strict", "ls", A, NULL },
	{ "strict", "echo x", A, NULL },
	{ "strict", "ls | cat", A, NULL },
	{ "strict", "{ ls; }", A, NULL },
	{ "strict", "echo $(ls)", D, "feature:command_substitution" },
	{ "strict", "echo `ls`", D, "feature:command_substitution" },
	{ "strict", "x=$(ls)", D, "feature:command_substitution" },
	{ "strict", "cat <(ls)", D, "feature:process_substitution" },
	{ "strict", "ls > >(cat)", D, "feature:process_substitution" },
	{ "strict", "( ls )", D, "feature:subshell" },
	{ "strict", "coproc ls", D, "feature:coproc" },
	{ "strict", "f() { ls; }", D, "feature:functions" },
	{ "strict", "ls &", D, "feature:background" },
	{ "dev", "f() { sh; }", K, "unknown" },
	{ "dev", "sleep 1 &", K, "unknown" },
	{ "wrap", "coproc ls", A, NULL },
	{ "wrap", "coproc sh", D, "unknown" },
	/* write_redirections: rules, only a command an allow rule names
	 * writes through a redirection; deny, none does */
	{ "exact", "printf v1 > /tmp/req", A, "profiles.exact.allow.request" },
	{ "exact", "printf v1 >> /tmp/req 2>&1", A, "profiles.exact.allow.request" },
	{ "exact", "echo x > /tmp/req", D, "feature:write_redirections" },
	{ "exact", "true > /tmp/req", D, "feature:write_redirections" },
	{ "exact", ": > /tmp/req", D, "feature:write_redirections" },
	{ "exact", "> /tmp/req", D, "feature:write_redirections" },
	{ "exact", "echo x >&/tmp/req", D, "feature:write_redirections" },
	{ "exact", "{ printf v1; } > /tmp/req", D, "feature:write_redirections" },
	{ "exact", "echo x > /dev/null", A, NULL },
	{ "exact", "echo x 2>&1", A, NULL },
	{ "nowrite", "ls > /tmp/out", D, "feature:write_redirections" },
	{ "nowrite", "ls <> /tmp/out", D, "feature:write_redirections" },
	{ "nowrite", "ls > /dev/null 2>&1", A, NULL },
	{ "nowrite", "ls < /etc/hosts", A, NULL },
};

static void
family_features(void **state)
{
	(void)state;
	RUN("features", features);
}

/* ---- unknown: ask / deny, and reasons ------------------------------------ */

static void
unknown_reason_names_allowed(void **state)
{
	struct ag_decision d;

	(void)state;
	decide_in("ro", "rm x", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "unknown");
	assert_string_equal(d.reason,
	    "denied: 'rm' is not allowed in profile 'ro'; allowed here: "
	    "cat, find, git (status|log|diff|show), grep, head, ls, wc");
	ag_decision_free(&d);

	decide_in("dev", "sh -c id", work, envv, &d);
	assert_int_equal(d.verdict, AG_ASK);
	assert_non_null(strstr(d.reason, "ask: 'sh' is not allowed in profile 'dev'"));
	ag_decision_free(&d);

	/* deny beats ask, and the reason is the first refusal of that kind */
	decide_in("dev", "sh; ls > /etc/x; cat > /etc/y", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "path:write");
	assert_non_null(strstr(d.reason, "/etc/x"));
	assert_int_equal(d.ncmds, 3);
	assert_int_equal(d.cmds[0].verdict, AG_ASK);
	assert_int_equal(d.cmds[1].verdict, AG_DENY);
	ag_decision_free(&d);
}

/* `cd d; cc -o t t.c && ./t`: the refusal says why, and what to write */
static void
unbuilt_after_cd_reason(void **state)
{
	struct ag_decision d;

	(void)state;
	decide_in("tier", "cd /; ./not-built-yet", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "unknown");
	assert_non_null(strstr(d.reason, "no such program yet"));
	assert_non_null(strstr(d.reason, "join them with '&&'"));
	ag_decision_free(&d);

	/* only one directory it can be run from, outside paths.exec */
	decide_in("tier", "cd / && ./not-built-yet", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_non_null(strstr(d.reason, "(no such program);"));
	ag_decision_free(&d);

	/* both directories beneath paths.exec: it runs */
	decide_in("tier", "cd sub; ./not-built-yet", work, envv, &d);
	assert_int_equal(d.verdict, AG_ALLOW);
	ag_decision_free(&d);
}

static void
write_reason_names_paths(void **state)
{
	struct ag_decision d;

	(void)state;
	decide_in("ro", "echo x > /etc/passwd", work, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "path:write");
	assert_string_equal(d.reason,
	    "denied: writing to '/etc/passwd' is outside paths.write (~/work)");
	ag_decision_free(&d);

	decide_in("ro", "$x", work, envv, &d);
	assert_string_equal(d.reason, "denied: command name must be a literal word, not '$x'");
	ag_decision_free(&d);
}

static void
per_command_entries(void **state)
{
	struct ag_decision d;
	char lsbin[PATH_MAX + 8], lsreal[PATH_MAX];

	(void)state;
	/* where ls really is depends on the host (merged /usr or not) */
	snprintf(lsbin, sizeof(lsbin), "%s/bin/ls", tdir);
	assert_non_null(realpath(lsbin, lsreal));
	decide_in("ro", "ls -la | grep x; echo $(cat f)", work, envv, &d);
	assert_int_equal(d.verdict, AG_ALLOW);
	assert_int_equal(d.ncmds, 4);
	assert_string_equal(d.cmds[0].name, "ls");
	assert_string_equal(d.cmds[0].path, lsreal);
	assert_string_equal(d.cmds[0].text, "ls -la");
	assert_string_equal(d.cmds[0].rule, "profiles.ro.allow[0]");
	assert_string_equal(d.cmds[0].reason, "allowed");
	assert_int_equal(d.cmds[0].off, 0);
	assert_string_equal(d.cmds[1].name, "grep");
	assert_int_equal(d.cmds[1].off, 9);
	assert_string_equal(d.cmds[2].name, "echo");
	assert_string_equal(d.cmds[2].path, "builtin");
	assert_string_equal(d.cmds[2].rule, "builtin");
	assert_string_equal(d.cmds[3].name, "cat");
	ag_decision_free(&d);
}

/* PATH with an empty or relative entry makes lookups depend on the cwd. */
static void
relative_path_entry_refused(void **state)
{
	char pe[256];
	char *env[2];
	struct ag_decision d;

	(void)state;
	snprintf(pe, sizeof(pe), "PATH=:%s/bin", tdir);
	env[0] = pe;
	env[1] = NULL;
	decide_in("ro", "ls", work, env, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "path");
	ag_decision_free(&d);

	snprintf(pe, sizeof(pe), "PATH=%s/evil:%s/bin", tdir, tdir);
	decide_in("ro", "ls", work, env, &d);
	/* the profile allows "ls" as found in PATH: here that is evil/ls */
	assert_int_equal(d.verdict, AG_ALLOW);
	assert_non_null(strstr(d.cmds[0].path, "/evil/ls"));
	ag_decision_free(&d);
	decide_in("ro", "/usr/bin/ls", work, env, &d);
	assert_int_equal(d.verdict, AG_DENY);
	ag_decision_free(&d);
}

/* The session cwd's resolution is remembered; re-pointing a symlink on the
 * way to it between two commands must not fool the next decision. */
static void
cwd_symlink_swapped_between_commands(void **state)
{
	char cwd[256], cmd[1024];
	struct ag_decision d;

	(void)state;
	snprintf(cwd, sizeof(cwd), "%s/cwdlink", work);
	xsystem("rm -f %s && ln -s sub %s", cwd, cwd);
	decide_in("ro", "echo x > authorized_keys", cwd, envv, &d);
	assert_int_equal(d.verdict, AG_ALLOW);
	ag_decision_free(&d);
	snprintf(cmd, sizeof(cmd), "rm -f %s && ln -s ../.ssh %s", cwd, cwd);
	xsystem("%s", cmd);
	decide_in("ro", "echo x > authorized_keys", cwd, envv, &d);
	assert_int_equal(d.verdict, AG_DENY);
	assert_string_equal(d.rule, "path:protect");
	ag_decision_free(&d);
	xsystem("rm -f %s", cwd);
}

static void
decide_on_tree_without_source(void **state)
{
	struct ag_policy_ctx ctx;
	struct ag_sh_node *tree = NULL;
	struct ag_decision d;
	struct ag_err err;
	const char *line = "ls | rm x";

	(void)state;
	assert_int_equal(ag_sh_parse(line, strlen(line), &tree, &err), AG_SH_OK);
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = ag_config_profile(cfg, "ro");
	ctx.cwd = work;
	ctx.home = home;
	ctx.env = envv;
	assert_int_equal(ag_policy_decide(&ctx, tree, &d), 0);
	assert_int_equal(d.verdict, AG_DENY);
	assert_int_equal(d.ncmds, 2);
	assert_string_equal(d.cmds[1].name, "rm");
	ag_decision_free(&d);
	ag_sh_free(tree);
	ag_decision_free(NULL);
	assert_string_equal(ag_verdict_name(AG_ASK), "ask");
}

static void
nul_byte_refused(void **state)
{
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	const char line[] = "ls\0; rm x";

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = ag_config_profile(cfg, "ro");
	ctx.cwd = work;
	ctx.home = home;
	ctx.env = envv;
	assert_int_equal(ag_policy_check(&ctx, line, sizeof(line) - 1, &d), 0);
	assert_int_equal(d.verdict, AG_DENY);
	assert_int_equal(d.parse_error, 1);
	assert_string_equal(d.rule, "parse");
	ag_decision_free(&d);
}

/* The sandbox makes exactly these executable in the strict tier: the
 * wrappers whose inner command the policy judges, none that runs with
 * other rights. */
static void
wrappers_listed(void **state)
{
	static const char *const want[] = {
		"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "time", NULL
	};
	const char *const *wr = ag_policy_wrappers();
	size_t i, j, n = 0;

	(void)state;
	assert_non_null(wr);
	for (i = 0; wr[i] != NULL; i++) {
		n++;
		assert_string_not_equal(wr[i], "sudo");
		assert_string_not_equal(wr[i], "busybox");
	}
	for (j = 0; want[j] != NULL; j++) {
		for (i = 0; wr[i] != NULL && strcmp(wr[i], want[j]) != 0; i++)
			;
		assert_non_null(wr[i]);
	}
	assert_int_equal(n, j);
}

/* ---- the program registry and the builtin table ------------------------- */

/* Every name of every descriptor finds it; none is claimed twice. */
static void
registry_is_sound(void **state)
{
	char why[200] = "";
	const struct ag_prog *const *pp;
	size_t n = 0;

	(void)state;
	if (ag_prog_registry_check(why, sizeof(why)) != 0)
		fail_msg("program registry: %s", why);
	for (pp = ag_progs; *pp != NULL; pp++) {
		assert_non_null((*pp)->names);
		assert_non_null((*pp)->names[0]);
		n++;
	}
	assert_true(n > 40);
	assert_ptr_equal(ag_prog_lookup("git"), &ag_prog_git);
	assert_ptr_equal(ag_prog_lookup("podman"), ag_prog_lookup("docker"));
	assert_ptr_equal(ag_prog_lookup("ld-linux-x86-64.so.2"), &ag_prog_loader);
	assert_ptr_equal(ag_prog_lookup("ld64.so.2"), &ag_prog_loader);
	assert_null(ag_prog_lookup("ld"));
	assert_null(ag_prog_lookup("gitk"));
	assert_null(ag_prog_lookup(""));
	/* the exec builtin's grammar is no program's */
	assert_null(ag_prog_lookup("exec"));
}

/* Each builtin is found in the sorted table (a name out of order would be
 * missed by bsearch and judged as a program). */
static void
every_builtin_is_one(void **state)
{
	static const char *const names[] = {
		".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller",
		"cd", "command", "compgen", "complete", "compopt", "continue",
		"declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
		"export", "false", "fc", "fg", "getopts", "hash", "help", "history",
		"jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf",
		"pushd", "pwd", "read", "readarray", "readonly", "return", "set",
		"shift", "shopt", "source", "suspend", "test", "times", "trap", "true",
		"type", "typeset", "ulimit", "umask", "unalias", "unset", "wait",
		NULL
	};
	size_t i;

	(void)state;
	for (i = 0; names[i] != NULL; i++) {
		struct ag_decision d;

		decide_in("ro", names[i], work, envv, &d);
		assert_int_equal(d.ncmds, 1);
		if (d.cmds[0].path == NULL || strcmp(d.cmds[0].path, "builtin") != 0)
			fail_msg("'%s' is not taken for a builtin (%s)", names[i],
			    d.cmds[0].path ? d.cmds[0].path : "no path");
		ag_decision_free(&d);
	}
}

/* ---- envsan and pathutil ------------------------------------------------ */

static void
envsan_sets(void **state)
{
	const struct ag_profile *dev = ag_config_profile(cfg, "dev");
	char *env[8];
	size_t i;

	(void)state;
	assert_true(ag_envsan_is_dangerous("LD_PRELOAD", NULL));
	assert_true(ag_envsan_is_dangerous("BASH_FUNC_ls%%", NULL));
	assert_true(ag_envsan_is_dangerous("GIT_EXTERNAL_DIFF", NULL));
	assert_true(ag_envsan_is_dangerous("PATH", dev));
	assert_false(ag_envsan_is_dangerous("LANG", NULL));
	assert_false(ag_envsan_is_dangerous("EDITOR", dev));	/* env.allow */
	assert_true(ag_envsan_is_dangerous("EDITOR", NULL));
	assert_true(ag_envsan_is_dangerous("AWS_X", dev));	/* env.deny */
	assert_false(ag_envsan_is_dangerous("AWS_X", NULL));
	/* names and NAME_* prefixes are matched without fnmatch: the edges */
	assert_true(ag_envsan_is_dangerous("LD_", NULL));
	assert_false(ag_envsan_is_dangerous("LD", NULL));
	assert_false(ag_envsan_is_dangerous("LDX", NULL));
	assert_false(ag_envsan_is_dangerous("PS1X", NULL));
	assert_false(ag_envsan_is_dangerous("XPS1", NULL));
	assert_true(ag_envsan_is_dangerous("AWS_", dev));
	assert_false(ag_envsan_is_dangerous("AWS", dev));
	/* and the other globs a profile may write, through fnmatch */
	assert_true(ag_envsan_is_dangerous("TOKEN", dev));
	assert_false(ag_envsan_is_dangerous("TOKENS", dev));
	assert_true(ag_envsan_is_dangerous("Y_KEY", dev));
	assert_false(ag_envsan_is_dangerous("Z_KEY", dev));
	assert_true(ag_envsan_is_dangerous("DB_PASSWORD", dev));
	assert_false(ag_envsan_is_dangerous("DB_PASSWORDS", dev));

	env[0] = strdup("LANG=C");
	env[1] = strdup("LD_PRELOAD=/x.so");
	env[2] = strdup("PWD=/home/a");
	env[3] = strdup("PAGER=sh");
	env[4] = strdup("noequals");
	env[5] = strdup("AWS_KEY=1");
	env[6] = NULL;
	assert_int_equal(ag_envsan_filter(env, dev), 4);
	assert_string_equal(env[0], "LANG=C");
	assert_string_equal(env[1], "PWD=/home/a");
	assert_null(env[2]);
	for (i = 0; env[i]; i++)
		free(env[i]);
}

/*
 * A bastion target's profile is judged against another host's files
 * (ctx.remote): nothing here is looked at.  This host's symlinks do not
 * move a path, a program need not exist here, and a path to a program is
 * not the name the profile allows.
 */
static void
remote_is_judged_as_written(void **state)
{
	static const char y[] =
	    "version: 1\n"
	    "profiles:\n"
	    "  web:\n"
	    "    allow: [echo, cd, deploy-tool, cat]\n"
	    "    deny: [{ command: cat, args: [\"/etc/shadow*\"] }]\n"
	    "    paths: { read: [\"/\"], write: [\"/srv/app\"] }\n";
	static const struct { const char *cmd; int allow; } cases[] = {
		{ "deploy-tool --now", 1 },		/* not a program here */
		{ "/opt/bin/deploy-tool", 0 },		/* a path is not the name */
		{ "echo hi > /srv/app/x", 1 },
		{ "echo hi > /srv/app/../../etc/x", 0 },
		{ "echo hi > /etc/motd", 0 },
		{ "cd /srv/app && echo ok > rel", 1 },
		{ "cat /etc/shadow", 0 },
		{ "uptime", 0 },
		{ "echo hi > @T/passwd-link", 0 },	/* lexically outside /srv/app, /tmp */
	};
	struct ag_config *c;
	struct ag_policy_ctx ctx;
	struct ag_err err;
	char pathvar[] = "PATH=/usr/local/bin:/usr/bin";
	char *env[] = { pathvar, NULL };
	size_t i;

	(void)state;
	c = ag_config_parse(y, sizeof(y) - 1, "remote.yaml", &err);
	assert_non_null(c);
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = ag_config_profile(c, "web");
	ctx.cwd = "/srv/app";
	ctx.home = "/home/deploy";
	ctx.user = "deploy";
	ctx.env = env;
	ctx.remote = 1;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ag_decision d;
		char line[1024];

		subst(cases[i].cmd, line, sizeof(line));
		assert_int_equal(ag_policy_check(&ctx, line, strlen(line), &d), 0);
		if ((d.verdict == AG_ALLOW) != cases[i].allow)
			fail_msg("remote: %s: %s (%s)", line, ag_verdict_name(d.verdict), d.reason);
		ag_decision_free(&d);
	}
	/* a symlink here that leads out: remote, only the written path counts */
	{
		struct ag_decision d;
		char line[1024];

		xsystem("mkdir -p %s/srvlink && ln -sfn /etc %s/srvlink/app", tdir, tdir);
		/* allowed: srvlink; the line writes through its link app -> /etc */
		snprintf(line, sizeof(line), "echo x > %s/srvlink/app/motd", tdir);
		ctx.profile = ag_config_profile(c, "web");
		ag_config_free(c);
		{
			char y2[512];

			snprintf(y2, sizeof(y2), "version: 1\nprofiles:\n  web:\n    allow: [echo]\n"
			    "    paths: { read: [\"/\"], write: [\"%s/srvlink\"] }\n", tdir);
			c = ag_config_parse(y2, strlen(y2), "remote2.yaml", &err);
			assert_non_null(c);
		}
		ctx.profile = ag_config_profile(c, "web");
		assert_int_equal(ag_policy_check(&ctx, line, strlen(line), &d), 0);
		assert_int_equal(d.verdict, AG_ALLOW);
		ag_decision_free(&d);
		/* the same line judged on this host follows the link to /etc */
		ctx.remote = 0;
		ctx.cwd = "/";
		assert_int_equal(ag_policy_check(&ctx, line, strlen(line), &d), 0);
		assert_int_not_equal(d.verdict, AG_ALLOW);
		ag_decision_free(&d);
		/* and the lexical view ends with the decision */
		assert_int_equal(ag_path_lexical(), 0);
	}
	ag_config_free(c);
}

static void
pathutil_basics(void **state)
{
	char out[4096], in[256];

	(void)state;
	assert_int_equal(ag_path_normalize("/a//b/./c/../d/", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/b/d");
	assert_int_equal(ag_path_normalize("/../..", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(ag_path_absolute("~/x", "/c", "/h", out, sizeof(out)), 0);
	assert_string_equal(out, "/h/x");
	assert_int_equal(ag_path_absolute("y/../z", "/c", "/h", out, sizeof(out)), 0);
	assert_string_equal(out, "/c/z");
	assert_int_equal(ag_path_absolute("~bob/x", "/c", "/h", out, sizeof(out)), -1);
	assert_int_equal(ag_path_normalize("/a/b", out, 3), -1);
	/* dangling relative symlink: resolved to where the write lands */
	snprintf(in, sizeof(in), "%s/bashrc-link", work);
	assert_int_equal(ag_path_resolve(in, out, sizeof(out)), 0);
	snprintf(in, sizeof(in), "%s/.bashrc", home);
	assert_string_equal(out, in);
	snprintf(in, sizeof(in), "%s/sshdir/../x", work);
	assert_int_equal(ag_path_resolve(in, out, sizeof(out)), 0);
	snprintf(in, sizeof(in), "%s/x", home);
	assert_string_equal(out, in);
	snprintf(in, sizeof(in), "%s", work);
	/* sshdir is ../.ssh, so its ".." is home, not work */
	assert_int_equal(ag_path_resolve_under(in, "sshdir/../sub/./x", out, sizeof(out)), 0);
	snprintf(in, sizeof(in), "%s/sub/x", home);
	assert_string_equal(out, in);
	assert_int_equal(ag_path_resolve_under("/", "/etc/../tmp", out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp");
	assert_true(ag_path_glob_match("**/.git/config", "/a/b/.git/config"));
	assert_true(ag_path_glob_match("/h/.ssh/**", "/h/.ssh"));
	assert_true(ag_path_glob_match("/h/.ssh/**", "/h/.ssh/a/b"));
	assert_false(ag_path_glob_match("/h/*", "/h/a/b"));
	assert_true(ag_path_glob_match("/h/[ab]?", "/h/bz"));
	assert_true(ag_path_inside("/h/work/x", "/h/work"));
	assert_false(ag_path_inside("/h/workshop", "/h/work"));
	assert_true(ag_path_inside("/anything", "/"));
	assert_true(ag_path_inside("/h/.ssh/k", "/h/.ssh/**"));
	assert_true(ag_path_inside("/r/.git/hooks/pre", "**/.git/hooks/**"));
}

/* A write judged again where it is made (the MCP write_file tool's): the
 * resolved file's name against the protected paths and paths.write. */
static void
write_refusal_after_resolution(void **state)
{
	const struct ag_profile *dev = ag_config_profile(cfg, "dev");
	char p[PATH_MAX], msg[1200];
	const char *rule;

	(void)state;
	snprintf(p, sizeof(p), "%s/notes.txt", work);
	assert_null(ag_policy_write_refusal(dev, home, p, msg, sizeof(msg)));
	snprintf(p, sizeof(p), "%s/.gitattributes", work);
	assert_non_null(rule = ag_policy_write_refusal(dev, home, p, msg, sizeof(msg)));
	assert_string_equal(rule, "path:protect");
	assert_non_null(strstr(msg, ".gitattributes"));
	snprintf(p, sizeof(p), "%s/.bashrc", home);
	assert_string_equal(ag_policy_write_refusal(dev, home, p, msg, sizeof(msg)),
	    "path:protect");
	snprintf(p, sizeof(p), "%s/secret/key", work);
	assert_string_equal(ag_policy_write_refusal(dev, home, p, msg, sizeof(msg)),
	    "path:protect");
	assert_string_equal(ag_policy_write_refusal(dev, home, "/etc/passwd", msg, sizeof(msg)),
	    "path:write");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(family_quoting),
		cmocka_unit_test(family_expansions),
		cmocka_unit_test(family_compound),
		cmocka_unit_test(family_heredocs),
		cmocka_unit_test(family_wrappers),
		cmocka_unit_test(family_builtins),
		cmocka_unit_test(family_redirections),
		cmocka_unit_test(family_assignments),
		cmocka_unit_test(family_arith),
		cmocka_unit_test(family_paths),
		cmocka_unit_test(family_programs),
		cmocka_unit_test(family_unknown_allow),
		cmocka_unit_test(family_protect),
		cmocka_unit_test(family_tiers),
		cmocka_unit_test(cd_idioms_from_home),
		cmocka_unit_test(family_features),
		cmocka_unit_test(family_argv),
		cmocka_unit_test(argv_refusal_names_the_form),
		cmocka_unit_test(unknown_reason_names_allowed),
		cmocka_unit_test(write_reason_names_paths),
		cmocka_unit_test(per_command_entries),
		cmocka_unit_test(relative_path_entry_refused),
		cmocka_unit_test(cwd_symlink_swapped_between_commands),
		cmocka_unit_test(decide_on_tree_without_source),
		cmocka_unit_test(nul_byte_refused),
		cmocka_unit_test(wrappers_listed),
		cmocka_unit_test(unbuilt_after_cd_reason),
		cmocka_unit_test(registry_is_sound),
		cmocka_unit_test(every_builtin_is_one),
		cmocka_unit_test(envsan_sets),
		cmocka_unit_test(pathutil_basics),
		cmocka_unit_test(remote_is_judged_as_written),
		cmocka_unit_test(write_refusal_after_resolution),
	};

	return cmocka_run_group_tests_name("policy", tests, setup, teardown);
}
