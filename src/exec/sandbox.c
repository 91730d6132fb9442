/*
 * sandbox.c - per-command kernel sandbox (see sandbox.h, doc/sandbox.md).
 *
 * The mechanism, and why it is built this way:
 *
 * Landlock's EXECUTE right is checked when a file is opened for execve,
 * for the program and for its ELF interpreter, and an exec also needs
 * READ_FILE.  Mapping a readable file with PROT_EXEC is not checked, so
 * `ld.so /bin/bash` runs bash as long as ld.so may be executed (it must be,
 * for every dynamic program) and bash may be read.  Hence the runner shell
 * must end up neither executable nor readable, yet it has to be executed
 * once.  A ruleset entered before that exec would have to allow bash; so
 * the execute/read ruleset ("inner") is entered by bash itself, from the
 * constructor of agsandbox.so, loaded with LD_PRELOAD, which runs before
 * bash's main() and also removes LD_PRELOAD from the environment bash
 * passes on.  The write/network/scope ruleset ("outer") is entered in the
 * child before the exec, so a preload that silently fails to load still
 * leaves writes and network confined, and the script guard line
 * (ag_sandbox_script_guard) makes the runner exit 126 in that case.
 *
 * Read rules are the profile's paths.read and paths.write plus what
 * programs need to start (loader and library directories, locale,
 * terminfo, /etc/ld.so.cache, a few /dev nodes, /proc), with "holes":
 * every file directly inside a program directory (PATH and the standard
 * bin/sbin directories) except the allowed programs, every shell listed in
 * /etc/shells, and the runner.  Landlock cannot subtract, so a read root
 * containing a hole is split: the directory gets READ_DIR only and each
 * entry is granted on its own, recursively, down to the holes.  So the
 * loader can only run allowed programs (or data files it can read), and a
 * shell cannot be copied because it cannot be read.
 *
 * memfd files live on an internal mount that Landlock does not mediate, so
 * a seccomp filter refuses memfd_create() without MFD_NOEXEC_SEAL (and any
 * syscall through a foreign ABI such as i386 int 0x80 or x32).
 */
#include "agconfig.h"
#include "common/compat.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <unistd.h>

#include <netinet/in.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>

#include "common/log.h"
#include "policy/netrules.h"
#include "policy/pathutil.h"
#include "policy/policy.h"
#include "policy/prog.h"
#include "exec/bpf.h"
#include "common/envv.h"
#include "exec/sandbox.h"
#include "common/misc.h"

#ifndef AG_PKGLIBDIR
#define AG_PKGLIBDIR "/usr/local/lib/agentgate"
#endif

/* ---- Landlock definitions newer than some distributions' headers ------- */

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#define AG_LL_NET_BIND_TCP		(1ULL << 0)
#define AG_LL_NET_CONNECT_TCP		(1ULL << 1)
#define AG_LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)
#define AG_LL_SCOPE_SIGNAL		(1ULL << 1)
#define AG_LL_RULE_PATH_BENEATH		1
#define AG_LL_RULE_NET_PORT		2

/* struct landlock_ruleset_attr as of ABI 6; the kernel takes its size */
struct ag_ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

struct ag_ll_path_beneath {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

struct ag_ll_net_port {
	uint64_t	allowed_access;
	uint64_t	port;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset	444
#define SYS_landlock_add_rule		445
#define SYS_landlock_restrict_self	446
#endif

#define FS_READ		(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE_ONLY	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_WRITE_V1	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | \
			 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | \
			 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
			 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | \
			 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

#define MAX_RULES	8192	/* a read root split this finely is a mistake */
#define MAX_DEPTH	24
#define MAX_INTERP	4	/* #! chains followed */

#include "exec/sandbox_int.h"
#include "exec/zygote.h"

static int test_abi = -1;
static char preload_override[PATH_MAX];

void
ag_sandbox_set_test_abi(int abi)
{
	test_abi = abi;
}

void
ag_sandbox_set_preload(const char *path)
{
	if (path == NULL)
		preload_override[0] = '\0';
	else
		snprintf(preload_override, sizeof(preload_override), "%s", path);
}

int
ag_sandbox_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 0)
		v = 0;
	if (test_abi >= 0 && test_abi < v)
		v = test_abi;
	return (int)v;
}

/* ---- small helpers ------------------------------------------------------ */

int
sb_plist_add(struct plist *l, const char *s)
{
	char *d;

	if (l->n + 1 >= l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		char **nv = realloc(l->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	if ((d = strdup(s)) == NULL)
		return -1;
	l->v[l->n++] = d;
	l->v[l->n] = NULL;
	return 0;
}

int
sb_plist_has(const struct plist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

void
sb_plist_free(struct plist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* 1 when b equals a or lies below it (both canonical, absolute) */
int
sb_path_within(const char *b, const char *a)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return 1;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static void
parent_of(const char *p, char *out, size_t outsz)
{
	const char *s = strrchr(p, '/');
	size_t n = s == NULL ? 0 : (size_t)(s - p);

	if (n == 0)
		n = 1;
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* ---- ELF interpreter and #! --------------------------------------------- */

/*
 * The program interpreter named by an ELF file (PT_INTERP) or by a "#!"
 * line.  Returns 1 and fills out, 0 when there is none (static ELF,
 * unknown format), -1 when the file cannot be read.
 */
static int
interp_of(const char *path, char *out, size_t outsz)
{
	unsigned char head[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -1;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 2)
		goto out;
	if (head[0] == '#' && head[1] == '!') {
		size_t i = 2, j = 0;

		while (i < (size_t)n && (head[i] == ' ' || head[i] == '\t'))
			i++;
		while (i < (size_t)n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' &&
		    j + 1 < outsz)
			out[j++] = (char)head[i++];
		out[j] = '\0';
		rc = j > 0 && out[0] == '/';
		goto out;
	}
	if ((size_t)n >= sizeof(Elf64_Ehdr) && memcmp(head, ELFMAG, SELFMAG) == 0 &&
	    head[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		unsigned i;

		memcpy(&eh, head, sizeof(eh));
		if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
			goto out;
		for (i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_INTERP)
				continue;
			if (ph.p_filesz < 2 || ph.p_filesz >= outsz)
				break;
			if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
				break;
			out[ph.p_filesz] = '\0';
			rc = out[0] == '/' && strlen(out) + 1 == ph.p_filesz;
			break;
		}
	}
	/* 32-bit programs are left to fail: their loader is not granted */
out:
	close(fd);
	return rc;
}

/* ---- Landlock rule helpers ---------------------------------------------- */

static int
add_fd_rule(struct build *b, int rsfd, int pfd, uint64_t access)
{
	struct ag_ll_path_beneath pb;

	if (access == 0)
		return 0;
	if (b->sb->nrules >= MAX_RULES)
		return ag_err_set(b->err, "sandbox: more than %d Landlock rules; narrow paths.read",
		    MAX_RULES);
	pb.allowed_access = access;
	pb.parent_fd = pfd;
	if (syscall(SYS_landlock_add_rule, rsfd, AG_LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return ag_err_set(b->err, "landlock_add_rule: %s", strerror(errno));
	b->sb->nrules++;
	return 0;
}

/* Grant access on path (dir rights dropped for files).  Missing paths are
 * skipped: a profile may name directories that do not exist yet. */
static int
add_path_rule(struct build *b, int rsfd, int dirfd, const char *path, uint64_t access)
{
	struct stat st;
	int fd = openat(dirfd, path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		access &= FS_FILE_ONLY;
	rc = add_fd_rule(b, rsfd, fd, access);
	close(fd);
	return rc;
}

static int
is_hole(const struct build *b, const char *path)
{
	char dir[PATH_MAX];

	if (sb_plist_has(&b->holes, path))
		return 1;
	parent_of(path, dir, sizeof(dir));
	return sb_plist_has(&b->progdirs, dir);
}

static int
has_hole_within(const struct build *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->progdirs.n; i++)
		if (sb_path_within(b->progdirs.v[i], dir))
			return 1;
	for (i = 0; i < b->holes.n; i++)
		if (sb_path_within(b->holes.v[i], dir))
			return 1;
	return 0;
}

/*
 * The holes directly inside dir (canonical), as names into b->holes (room
 * for all of them).  A split directory's entries are tested against these
 * names rather than each entry's path being built and looked up in the
 * whole list.
 */
static size_t
holes_in(const struct build *b, const char *dir, const char **names)
{
	size_t i, k = 0, dl = strcmp(dir, "/") == 0 ? 0 : strlen(dir);

	for (i = 0; i < b->holes.n; i++) {
		const char *h = b->holes.v[i];

		if (strncmp(h, dir, dl) == 0 && h[dl] == '/' && h[dl + 1] != '\0' &&
		    strchr(h + dl + 1, '/') == NULL)
			names[k++] = h + dl + 1;
	}
	return k;
}

/* Grant reading of root (canonical) except the holes beneath it. */
static int
add_read_split(struct build *b, const char *root, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	const char **here;
	size_t nhere, i;
	int fd, rc = 0, isprog;

	if (lstat(root, &st) < 0 || S_ISLNK(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode) && sb_plist_has(&b->holes, root))
		return 0;	/* a whole directory left out (/dev/pts) */
	if (!S_ISDIR(st.st_mode))
		return is_hole(b, root) ? 0 :
		    add_path_rule(b, b->rs_inner, AT_FDCWD, root, b->rd_file);
	if (!has_hole_within(b, root))
		return add_path_rule(b, b->rs_inner, AT_FDCWD, root, b->rd_dir);
	if (depth > MAX_DEPTH)
		return 0;
	/* listing stays possible; entries are granted one by one (a directory
	 * the gateway cannot list gets the right all the same) */
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return add_path_rule(b, b->rs_inner, AT_FDCWD, root, LANDLOCK_ACCESS_FS_READ_DIR);
	if (add_fd_rule(b, b->rs_inner, fd, LANDLOCK_ACCESS_FS_READ_DIR) < 0) {
		close(fd);
		return -1;
	}
	if ((here = calloc(b->holes.n + 1, sizeof(*here))) == NULL) {
		close(fd);
		return ag_err_set(b->err, "out of memory");
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		free(here);
		return 0;
	}
	isprog = sb_plist_has(&b->progdirs, root);
	nhere = holes_in(b, root, here);
	/*
	 * A split directory is often a program directory of a thousand
	 * files (/usr/bin, for a developer profile's deny list), so each
	 * file is opened beside the listing, by name, and its rule takes
	 * the file rights without a stat: readdir said what it is.
	 */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;
		int efd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_LNK)
			continue;	/* its target is granted (or not) where it lives */
		if (type == DT_DIR) {
			char child[PATH_MAX];

			if (snprintf(child, sizeof(child), "%s%s%s", root,
			    strcmp(root, "/") == 0 ? "" : "/", de->d_name) < (int)sizeof(child))
				rc = add_read_split(b, child, depth + 1);
			continue;
		}
		if (isprog)
			continue;
		for (i = 0; i < nhere && strcmp(here[i], de->d_name) != 0; i++)
			;
		if (i < nhere)
			continue;
		/* not followed: a name swapped for a link grants the link, not its target */
		if ((efd = openat(fd, de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		rc = add_fd_rule(b, b->rs_inner, efd, b->rd_file & FS_FILE_ONLY);
		close(efd);
	}
	closedir(d);
	free(here);
	return rc;
}

/* ---- what is executable ------------------------------------------------- */

static int
add_exec(struct build *b, const char *path, int depth)
{
	char real[PATH_MAX], interp[PATH_MAX];
	int r;

	if (realpath(path, real) == NULL || !ag_path_is_exec_file(real))
		return 0;
	if (sb_plist_has(&b->holes, real)) {
		ag_log(LOG_WARNING, "sandbox: %s is a shell or the runner and is never executable "
		    "inside the sandbox", real);
		return 0;
	}
	if (sb_plist_has(&b->sb->exec, real))
		return 0;
	if (sb_plist_add(&b->sb->exec, real) < 0)
		return ag_err_set(b->err, "out of memory");
	r = interp_of(real, interp, sizeof(interp));
	if (r == 1) {
		if (depth >= MAX_INTERP)
			return 0;
		return add_exec(b, interp, depth + 1);
	}
	return 0;
}

static const char *const std_progdirs[] = {
	"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
	"/usr/games", "/usr/local/games", NULL
};

static int
add_progdir(struct build *b, const char *dir)
{
	char real[PATH_MAX];
	struct stat st;

	if (realpath(dir, real) == NULL || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	/* "/" or /usr as a PATH entry would hide everything: ignore */
	if (strcmp(real, "/") == 0 || strcmp(real, "/usr") == 0 || sb_plist_has(&b->progdirs, real))
		return 0;
	return sb_plist_add(&b->progdirs, real) < 0 ? ag_err_set(b->err, "out of memory") : 0;
}

static int
add_hole(struct build *b, const char *path)
{
	char real[PATH_MAX];

	if (realpath(path, real) == NULL || sb_plist_has(&b->holes, real))
		return 0;
	return sb_plist_add(&b->holes, real) < 0 ? ag_err_set(b->err, "out of memory") : 0;
}

static int
collect_holes(struct build *b, const char *runner, const char *path_env)
{
	FILE *fp;
	char line[PATH_MAX];
	const char *p;
	size_t i;

	for (i = 0; std_progdirs[i] != NULL; i++)
		if (add_progdir(b, std_progdirs[i]) < 0)
			return -1;
	for (p = path_env; ag_path_entry(&p, line, sizeof(line)) != NULL; )
		if (line[0] == '/' && add_progdir(b, line) < 0)
			return -1;
	if (!b->sb->inner_in_child && runner != NULL && add_hole(b, runner) < 0)
		return -1;
	/* every login shell the system knows, wherever it lives */
	if ((fp = fopen("/etc/shells", "re")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			line[strcspn(line, " \t\r\n#")] = '\0';
			if (line[0] != '/')
				continue;
			if (b->sb->inner_in_child && runner != NULL) {
				char r1[PATH_MAX], r2[PATH_MAX];

				if (realpath(line, r1) && realpath(runner, r2) && strcmp(r1, r2) == 0)
					continue;
			}
			if (add_hole(b, line) < 0) {
				fclose(fp);
				return -1;
			}
		}
		fclose(fp);
	}
	return 0;
}

/* A deny rule refuses the program name whatever its arguments. */
static int
denied_by_name(const struct ag_profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ndeny; i++) {
		const struct ag_rule *r = &p->deny[i];
		const char *c = r->command, *s;

		if (c == NULL || !ag_rule_is_plain(r))
			continue;
		s = strrchr(c, '/');
		if (strcmp(s ? s + 1 : c, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * Developer tier: shells and the toolchain run, so the only holes are the
 * programs a deny rule refuses whole (no subcommand or argument condition):
 * those are refused by the kernel for every process of the tree.  Narrower
 * deny rules are checked at each exec by the exec supervisor.
 */
static int
collect_deny_holes(struct build *b, const char *path_env)
{
	size_t i;

	for (i = 0; i < b->p->ndeny; i++) {
		const struct ag_rule *r = &b->p->deny[i];
		char found[PATH_MAX];

		if (r->command == NULL || !ag_rule_is_plain(r) || ag_path_has_glob(r->command))
			continue;
		if (r->command[0] == '/') {
			if (add_hole(b, r->command) < 0)
				return -1;
		} else if (strchr(r->command, '/') == NULL &&
		    ag_path_search(path_env, r->command, found, sizeof(found)) == 0 &&
		    add_hole(b, found) < 0)
			return -1;
	}
	return 0;
}

/* ---- the profile's paths ------------------------------------------------ */

static int
expand_paths(struct build *b, const struct ag_strlist *l, struct plist *out)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		char abs[PATH_MAX], real[PATH_MAX];
		const char *s = l->v[i];

		if (ag_path_has_glob(s)) {
			ag_log(LOG_WARNING, "sandbox: path pattern %s cannot be a Landlock rule; "
			    "ignored by the sandbox", s);
			continue;
		}
		if (s[0] != '/' && s[0] != '~')
			b->used_cwd = 1;
		if (ag_path_absolute(s, b->cwd, b->home, abs, sizeof(abs)) < 0)
			continue;
		if (realpath(abs, real) == NULL)
			continue;	/* does not exist (yet): nothing to grant */
		if (!sb_plist_has(out, real) && sb_plist_add(out, real) < 0)
			return ag_err_set(b->err, "out of memory");
	}
	return 0;
}

/*
 * The profile's paths are granted (and bound back into /run) as their
 * real paths; a symbolic link on the way that lies beneath a write root is
 * one a command could have made, pointing the grant anywhere
 * (~/work/build -> /run/user/UID).  So a path that passes through such a
 * link is refused, not followed.  0, or -1 with b->err set.
 */
static int
agent_link(struct build *b, const char *what, const char *entry, const char *abs)
{
	char pre[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
	struct stat st;
	size_t i, k, n = strlen(abs);

	if (n >= sizeof(pre))
		return 0;
	for (i = 1; i <= n; i++) {
		if (i < n && abs[i] != '/')
			continue;
		memcpy(pre, abs, i);
		pre[i] = '\0';
		if (lstat(pre, &st) < 0)
			return 0;		/* the rest does not exist: nothing granted */
		if (!S_ISLNK(st.st_mode))
			continue;
		/* the directory holding the link, as it really is */
		memcpy(dir, pre, i);
		dir[i] = '\0';
		*strrchr(dir, '/') = '\0';
		if (realpath(dir[0] != '\0' ? dir : "/", target) == NULL)
			return 0;
		for (k = 0; k < b->writes.n; k++)
			if (sb_path_within(target, b->writes.v[k])) {
				ssize_t r = readlink(pre, target, sizeof(target) - 1);

				target[r > 0 ? r : 0] = '\0';
				return ag_err_set(b->err, "kernel sandbox: %s entry '%s' passes through "
				    "the symbolic link %s -> %s, beneath the write root %s, which a "
				    "command could have made: it is not followed, and commands are "
				    "refused until it is a directory again", what, entry, pre, target,
				    b->writes.v[k]);
			}
	}
	return 0;
}

static int
check_links(struct build *b)
{
	const struct ag_strlist *lists[] = { &b->p->paths_read, &b->p->paths_write,
	    &b->p->paths_exec };
	static const char *const names[] = { "paths.read", "paths.write", "paths.exec" };
	size_t i, k;

	for (k = 0; k < 3; k++)
		for (i = 0; i < lists[k]->n; i++) {
			char abs[PATH_MAX];

			if (ag_path_has_glob(lists[k]->v[i]) ||
			    ag_path_absolute(lists[k]->v[i], b->cwd, b->home, abs, sizeof(abs)) < 0)
				continue;
			if (agent_link(b, names[k], lists[k]->v[i], abs) < 0)
				return -1;
		}
	return 0;
}

/* What a dynamically linked program and the runner need to start. */
static const char *const sys_reads[] = {
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/locale",
	"/usr/share/locale", "/usr/share/i18n", "/usr/share/zoneinfo", "/etc/alternatives",
	"/lib64", "/usr/lib64", "/usr/local/lib",
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
	"/proc", NULL
};

/*
 * Not /dev/pts: every terminal of the host is there, other sessions'
 * included; a command's own terminal is added when it is made
 * (ag_sandbox_allow_terminal), and /dev/tty names it too.
 */
static const char *const dev_writes[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", NULL
};

/*
 * The canonical name of dir_real/name (dir_real canonical), or NULL when
 * it does not exist.  One lstat where the entry is no link: realpath()
 * would read every component again, for each of a profile's programs.
 */
static char *
realpath_in(const char *dir_real, const char *name, char *out)
{
	char cand[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", strcmp(dir_real, "/") ? dir_real : "",
	    name) >= sizeof(cand) || lstat(cand, &st) < 0)
		return NULL;
	if (S_ISLNK(st.st_mode))
		return realpath(cand, out);
	memcpy(out, cand, strlen(cand) + 1);
	return out;
}

/*
 * Per program from exec.v[from] on: the directory of each loader (the
 * multiarch library directory) and the usual data and library trees named
 * after it (/usr/lib/python3.11, /usr/share/git-core, ...).
 */
static int
add_prog_reads(struct build *b, size_t from)
{
	static const char *const roots[] = { "/usr/lib", "/usr/share", "/usr/libexec" };
	static const struct { int root; const char *suffix; } fmts[] = {
		{ 0, "" }, { 1, "" }, { 0, "-core" }, { 1, "-core" }, { 2, "" } };
	char root_real[sizeof(roots) / sizeof(roots[0])][PATH_MAX];
	size_t i, k, nexec = b->sb->exec.n;

	for (k = 0; k < sizeof(roots) / sizeof(roots[0]); k++)
		if (realpath(roots[k], root_real[k]) == NULL)
			root_real[k][0] = '\0';
	for (i = from; i < nexec; i++) {
		const char *e = b->sb->exec.v[i], *base = strrchr(e, '/') + 1;
		char name[NAME_MAX + 8], real[PATH_MAX];

		if (strncmp(base, "ld-", 3) == 0 || strstr(base, ".so") != NULL) {
			parent_of(e, real, sizeof(real));
			if (!sb_plist_has(&b->reads, real) && sb_plist_add(&b->reads, real) < 0)
				return ag_err_set(b->err, "out of memory");
			continue;
		}
		for (k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
			const char *r = root_real[fmts[k].root];

			if (r[0] == '\0' || (size_t)snprintf(name, sizeof(name), "%s%s", base,
			    fmts[k].suffix) >= sizeof(name))
				continue;
			if (realpath_in(r, name, real) != NULL && !sb_plist_has(&b->reads, real) &&
			    sb_plist_add(&b->reads, real) < 0)
				return ag_err_set(b->err, "out of memory");
		}
	}
	return 0;
}

static int
collect_reads(struct build *b)
{
	size_t i;

	if (expand_paths(b, &b->p->paths_read, &b->reads) < 0 ||
	    expand_paths(b, &b->p->paths_write, &b->writes) < 0 ||
	    expand_paths(b, &b->p->net_unix, &b->sb->unix_names) < 0)
		return -1;
	/* what the profile reads beneath /run is there for its daemons'
	 * sockets (only what it names there is bound back) */
	for (i = 0; i < b->reads.n; i++)
		if (strncmp(b->reads.v[i], "/run/", 5) == 0 &&
		    !sb_plist_has(&b->sb->unix_names, b->reads.v[i]) &&
		    sb_plist_add(&b->sb->unix_names, b->reads.v[i]) < 0)
			return ag_err_set(b->err, "out of memory");
	/* a socket network.unix names is read too: bound back into /run */
	for (i = 0; i < b->sb->unix_names.n; i++)
		if (!sb_plist_has(&b->reads, b->sb->unix_names.v[i]) &&
		    sb_plist_add(&b->reads, b->sb->unix_names.v[i]) < 0)
			return ag_err_set(b->err, "out of memory");
	for (i = 0; i < b->writes.n; i++)
		if (!sb_plist_has(&b->reads, b->writes.v[i]) && sb_plist_add(&b->reads, b->writes.v[i]) < 0)
			return ag_err_set(b->err, "out of memory");
	for (i = 0; sys_reads[i] != NULL; i++) {
		char real[PATH_MAX];

		if (realpath(sys_reads[i], real) != NULL && !sb_plist_has(&b->reads, real) &&
		    sb_plist_add(&b->reads, real) < 0)
			return ag_err_set(b->err, "out of memory");
	}
	return add_prog_reads(b, 0);
}

/* ---- building the rulesets ---------------------------------------------- */

static int
create_ruleset(struct build *b, uint64_t fs, uint64_t net, uint64_t scoped)
{
	struct ag_ll_ruleset_attr a;
	size_t sz;
	long fd;

	memset(&a, 0, sizeof(a));
	a.handled_access_fs = fs;
	a.handled_access_net = net;
	a.scoped = scoped;
	/* older kernels reject a larger struct with non-zero tail; pass what the ABI knows */
	sz = b->sb->abi >= 6 ? sizeof(a) : b->sb->abi >= 4 ?
	    offsetof(struct ag_ll_ruleset_attr, scoped) :
	    offsetof(struct ag_ll_ruleset_attr, handled_access_net);
	fd = syscall(SYS_landlock_create_ruleset, &a, sz, 0);
	if (fd < 0)
		return ag_err_set(b->err, "landlock_create_ruleset: %s", strerror(errno));
	if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		close((int)fd);
		return ag_err_set(b->err, "fcntl: %s", strerror(errno));
	}
	return (int)fd;
}

/* The execute/read ruleset from sb->exec and b's reads and holes; its fd or -1. */
static int
build_inner(struct build *b)
{
	struct ag_sandbox *sb = b->sb;
	size_t i;
	int fd;

	/*
	 * Scoped again: each command's runner enters this ruleset on its own,
	 * so its tree is a domain of its own.  It can then signal (or reach
	 * by an abstract socket) nothing but that tree: not the session's
	 * runner process, which is in the outer domain only, and not what an
	 * earlier command of the session left (swept anyway).
	 */
	if ((fd = create_ruleset(b, b->h_inner, 0, sb->abi >= 6 ?
	    AG_LL_SCOPE_ABSTRACT_UNIX | AG_LL_SCOPE_SIGNAL : 0)) < 0)
		return -1;
	b->rs_inner = fd;
	if ((b->h_inner & LANDLOCK_ACCESS_FS_REFER) &&
	    add_path_rule(b, fd, AT_FDCWD, "/", LANDLOCK_ACCESS_FS_REFER) < 0)
		goto fail;
	for (i = 0; i < sb->exec.n; i++)
		if (add_path_rule(b, fd, AT_FDCWD, sb->exec.v[i],
		    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE) < 0)
			goto fail;
	for (i = 0; i < b->reads.n; i++)
		if (add_read_split(b, b->reads.v[i], 0) < 0)
			goto fail;
	if (sb->private_tmp && add_fd_rule(b, fd, sb->tmp_fd, b->rd_dir) < 0)
		goto fail;
	if (sb->shm_fd >= 0 && add_fd_rule(b, fd, sb->shm_fd, b->rd_dir) < 0)
		goto fail;
	/* the PID namespace's own /proc is another mount than the host's */
	if (sb->proc_fd >= 0 && add_fd_rule(b, fd, sb->proc_fd, b->rd_dir) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static uint64_t
inner_handled(const struct ag_sandbox *sb)
{
	/* REFER is denied by every ruleset that does not grant it, handled or
	 * not: without this, a rename or link across directories (git mv,
	 * os.rename) fails with EXDEV.  Where a file may move is the outer
	 * (write) layer's business; the inner one lets it through. */
	return LANDLOCK_ACCESS_FS_EXECUTE | FS_READ |
	    (sb->abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0);
}

static int
build_rulesets(struct build *b)
{
	struct ag_sandbox *sb = b->sb;
	size_t i;
	int fd;

	b->h_outer = FS_WRITE_V1;
	if (sb->abi >= 2)
		b->h_outer |= LANDLOCK_ACCESS_FS_REFER;
	if (sb->abi >= 3)
		b->h_outer |= LANDLOCK_ACCESS_FS_TRUNCATE;
	/*
	 * In the session's network namespace a command reaches its own
	 * loopback and, through the proxy, the hosts the profile names: no port
	 * rules are needed there.  Without that namespace nothing would keep
	 * TCP in, so Landlock refuses every TCP connect and bind.
	 */
	b->h_net = sb->abi >= 4 && sb->ns_net_fd < 0 ? AG_LL_NET_BIND_TCP | AG_LL_NET_CONNECT_TCP : 0;
	b->scoped = sb->abi >= 6 ? AG_LL_SCOPE_ABSTRACT_UNIX | AG_LL_SCOPE_SIGNAL : 0;
	b->h_inner = inner_handled(sb);

	if ((fd = create_ruleset(b, b->h_outer, b->h_net, b->scoped)) < 0)
		return -1;
	sb->outer_fd = fd;
	for (i = 0; i < b->writes.n; i++)
		if (add_path_rule(b, sb->outer_fd, AT_FDCWD, b->writes.v[i], b->h_outer) < 0)
			return -1;
	/* the session's own tmpfs, mounted over /tmp in its namespace: a rule
	 * on the mount point covers what is mounted there */
	if (sb->tmp_writable && add_fd_rule(b, sb->outer_fd, sb->tmp_fd, b->h_outer) < 0)
		return -1;
	/* and its own /dev/shm where /tmp is writable: POSIX semaphores and
	 * shared memory (sem_open, shm_open) live there */
	if (sb->tmp_writable && sb->shm_fd >= 0 &&
	    add_fd_rule(b, sb->outer_fd, sb->shm_fd, b->h_outer) < 0)
		return -1;
	for (i = 0; dev_writes[i] != NULL; i++)
		if (add_path_rule(b, sb->outer_fd, AT_FDCWD, dev_writes[i],
		    b->h_outer & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)) < 0)
			return -1;

	if ((fd = build_inner(b)) < 0)
		return -1;
	sb->inner_fd = fd;
	return 0;
}

/*
 * Besides memfd (see the top of the file), no new user namespace (below),
 * and sockets:
 *  - io_uring is refused outright (ENOSYS, so programs fall back to plain
 *    system calls): a socket made through it is never seen by this filter;
 *  - a socket family must be one the network namespace holds: UNIX,
 *    IPv4, IPv6 and netlink (getaddrinfo, ip).  VSOCK reaches the
 *    hypervisor whatever the namespace; packet, Bluetooth, CAN, XDP, TIPC,
 *    RDS, ALG and the rest are attack surface no command needs;
 *  - without the session's network namespace (best_effort where user
 *    namespaces are missing) nothing keeps IPv4 and IPv6 in: neither is
 *    allowed at all.
 */
static int
build_seccomp(struct ag_sandbox *sb)
{
#ifdef AG_AUDIT_ARCH
	enum { NEXT = AG_BPF_NEXT, ALLOW, DENY, NOSYS, MEMFD, SOCKET, PAIR, UNIXTYPE, IOCTL,
	    NEWUSER };
	struct ag_bpf *b = &sb->filt;
	int inet = sb->ns_net_fd >= 0;

	ag_bpf_init(b);
	ag_bpf_ld(b, AG_BPF_ARCH);
	ag_bpf_jeq(b, AG_AUDIT_ARCH, NEXT, NOSYS);
	ag_bpf_ld(b, AG_BPF_NR);
#ifdef AG_X32_BIT
	ag_bpf_jge(b, AG_X32_BIT, NOSYS, NEXT);
#endif
	ag_bpf_jeq(b, SYS_memfd_create, MEMFD, NEXT);
	/* before Landlock ABI 3 truncate(2) is not mediated: no path may be
	 * truncated (ftruncate needs an fd Landlock let be opened for writing) */
	if (sb->abi < 3)
		ag_bpf_jeq(b, SYS_truncate, DENY, NEXT);
	ag_bpf_jeq(b, SYS_io_uring_setup, NOSYS, NEXT);
	ag_bpf_jeq(b, SYS_io_uring_enter, NOSYS, NEXT);
	ag_bpf_jeq(b, SYS_io_uring_register, NOSYS, NEXT);
	/* no kernel keys: request_key(2) runs /sbin/request-key as root in the
	 * host's namespaces with a description the command chose (keyutils'
	 * dns_resolver looks that name up with the host's resolver) */
	ag_bpf_jeq(b, SYS_request_key, NOSYS, NEXT);
	ag_bpf_jeq(b, SYS_add_key, NOSYS, NEXT);
	ag_bpf_jeq(b, SYS_keyctl, NOSYS, NEXT);
	/* no user namespace of its own: inside one a command would hold every
	 * capability, and with them nf_tables and the rest of the kernel's
	 * namespaced attack surface (clone3's flags are in memory: ENOSYS, and
	 * the C library falls back to clone) */
	ag_bpf_jeq(b, SYS_clone3, NOSYS, NEXT);
	ag_bpf_jeq(b, SYS_unshare, NEWUSER, NEXT);
	ag_bpf_jeq(b, SYS_clone, NEWUSER, NEXT);
	ag_bpf_jeq(b, SYS_ioctl, IOCTL, NEXT);
	ag_bpf_jeq(b, SYS_socket, SOCKET, NEXT);
	ag_bpf_jeq(b, SYS_socketpair, PAIR, ALLOW);

	/*
	 * ioctl(fd, TIOCSTI/TIOCLINUX): no faking keystrokes.  What a command
	 * leaves unread on its terminal goes to the REPL's prompt (pty.h), so
	 * a pushed line would be read as if the agent had typed it.
	 */
	ag_bpf_label(b, IOCTL);
	ag_bpf_ld(b, AG_BPF_ARG(1));
	ag_bpf_jeq(b, TIOCSTI, DENY, NEXT);
	ag_bpf_jeq(b, TIOCLINUX, DENY, ALLOW);

	/* unshare(flags), clone(flags, ...) */
	ag_bpf_label(b, NEWUSER);
	ag_bpf_ld(b, AG_BPF_ARG(0));
	ag_bpf_jset(b, CLONE_NEWUSER, DENY, ALLOW);

	/* memfd_create(name, flags): only sealed non-executable */
	ag_bpf_label(b, MEMFD);
	ag_bpf_ld(b, AG_BPF_ARG(1));
	ag_bpf_jset(b, MFD_NOEXEC_SEAL, ALLOW, DENY);

	/* socket(domain, type, protocol): the families the namespace holds */
	ag_bpf_label(b, SOCKET);
	ag_bpf_ld(b, AG_BPF_ARG(0));
	ag_bpf_jeq(b, AF_UNIX, UNIXTYPE, NEXT);
	ag_bpf_jeq(b, AF_NETLINK, ALLOW, NEXT);
	ag_bpf_jeq(b, AF_INET, inet ? ALLOW : DENY, NEXT);
	ag_bpf_jeq(b, AF_INET6, inet ? ALLOW : DENY, DENY);

	/* socketpair(domain, type, ...): only AF_UNIX makes pairs */
	ag_bpf_label(b, PAIR);
	ag_bpf_ld(b, AG_BPF_ARG(0));
	ag_bpf_jeq(b, AF_UNIX, UNIXTYPE, ALLOW);

	/*
	 * AF_UNIX stream and seqpacket sockets only: a datagram socket (and
	 * SOCK_RAW, which the kernel makes one) sends to any socket's name
	 * with sendto/sendmsg, whose address lies in memory the filter
	 * cannot read (a pair's end too), past the exec supervisor, which
	 * connects stream and seqpacket sockets for the process
	 * (sockconnect.h); those ignore a send's address.
	 */
	ag_bpf_label(b, UNIXTYPE);
	ag_bpf_ld(b, AG_BPF_ARG(1));
	ag_bpf_and(b, 0xf);	/* SOCK_TYPE_MASK: without NONBLOCK, CLOEXEC */
	ag_bpf_jeq(b, SOCK_STREAM, ALLOW, NEXT);
	ag_bpf_jeq(b, SOCK_SEQPACKET, ALLOW, DENY);

	ag_bpf_label(b, ALLOW);
	ag_bpf_ret(b, SECCOMP_RET_ALLOW);
	ag_bpf_label(b, DENY);
	ag_bpf_ret(b, SECCOMP_RET_ERRNO | EACCES);
	ag_bpf_label(b, NOSYS);
	ag_bpf_ret(b, SECCOMP_RET_ERRNO | ENOSYS);
	if (ag_bpf_finish(b, &sb->fprog) < 0)
		return -1;
	sb->seccomp = 1;
#else
	(void)sb;
#endif
	return 0;
}

/*
 * A command's memory without `limits.memory`: enough for compilers, test
 * suites and language runtimes, not enough for one allowed command to
 * take the host (RLIMIT_DATA: what it writes, not what it only reserves).
 */
#define AG_MEMORY_STRICT	(1LL << 30)	/* 1 GiB */
#define AG_MEMORY_DEVELOPER	(8LL << 30)	/* 8 GiB */
#define AG_SIGPENDING		1024		/* queued signals (RLIMIT_SIGPENDING) */

static void
set_limits(struct ag_sandbox *sb, const struct ag_limits *l, enum ag_tier tier)
{
	long long mem = l->memory != 0 ? l->memory :
	    tier == AG_TIER_DEVELOPER ? AG_MEMORY_DEVELOPER : AG_MEMORY_STRICT;
	struct { int idx; long long v; } t[] = {
		{ RL_NPROC, l->processes }, { RL_NOFILE, l->open_files },
		{ RL_FSIZE, l->file_size }, { RL_CPU, l->cpu }, { RL_AS, l->address_space },
		{ RL_DATA, mem },	/* -1: "unlimited", not set */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].v <= 0)
			continue;
		sb->rl_set[t[i].idx] = 1;
		sb->rl[t[i].idx].rlim_cur = (rlim_t)t[i].v;
		sb->rl[t[i].idx].rlim_max = (rlim_t)t[i].v;
	}
	/*
	 * Queued signals are counted per uid, the gateway's with its
	 * commands': a command that queued the account's whole allowance
	 * would leave the gateway none (its supervisor's timers, every
	 * session's).  A command may queue this many.
	 */
	sb->rl_set[RL_SIGPENDING] = 1;
	sb->rl[RL_SIGPENDING].rlim_cur = sb->rl[RL_SIGPENDING].rlim_max = AG_SIGPENDING;
	/* SIGXCPU at the soft limit, SIGKILL a second later */
	if (sb->rl_set[RL_CPU])
		sb->rl[RL_CPU].rlim_max = sb->rl[RL_CPU].rlim_cur + 1;
}

/* agsandbox.so: the override, the installed one, or the build tree's. */
static int
find_preload(char *out, size_t outsz)
{
	char exe[PATH_MAX], dir[PATH_MAX], cand[3][PATH_MAX];
	ssize_t n;
	size_t i, nc = 0;

	if (preload_override[0] != '\0')
		snprintf(cand[nc++], PATH_MAX, "%s", preload_override);
	snprintf(cand[nc++], PATH_MAX, "%s", AG_PKGLIBDIR "/agsandbox.so");
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		parent_of(exe, dir, sizeof(dir));
		if ((size_t)snprintf(cand[nc], PATH_MAX, "%s/agsandbox.so", dir) < PATH_MAX)
			nc++;
	}
	for (i = 0; i < nc; i++) {
		struct ag_err e;
		char real[PATH_MAX];

		if (realpath(cand[i], real) == NULL || strpbrk(real, ": \t") != NULL)
			continue;
		/* the file every command's shell loads must be as trusted as the binary */
		if (ag_config_check_perms(real, &e) < 0) {
			ag_log(LOG_WARNING, "sandbox: not using %s: %s", real, e.msg);
			continue;
		}
		snprintf(out, outsz, "%s", real);
		return 0;
	}
	return -1;
}

int
sb_note_add(struct ag_sandbox *sb, const char *what)
{
	size_t old = sb->note ? strlen(sb->note) : 0, n = strlen(what);
	char *s = realloc(sb->note, old + n + 3);

	if (s == NULL)
		return -1;
	if (old)
		memcpy(s + old, "; ", 3);
	else
		s[0] = '\0';
	strcat(s, what);
	sb->note = s;
	return 0;
}

const char *
ag_sandbox_sftp_server(void)
{
	static const char *const cands[] = { "/usr/lib/openssh/sftp-server",
	    "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server",
	    "/usr/lib/ssh/sftp-server", NULL };
	size_t i;

	for (i = 0; cands[i] != NULL; i++)
		if (ag_path_is_exec_file(cands[i]))
			return cands[i];
	return NULL;
}

/* ---- what holds on this kernel ------------------------------------------- */

/* A profile that reaches no host. */
static int
no_network(const struct ag_profile *p)
{
	return !ag_net_has_egress(p);
}

size_t
ag_sandbox_guarantees(const struct ag_profile *p, int abi, struct ag_guarantee *g,
    size_t max)
{
	const char *ll = abi >= 1 ? "Landlock" : NULL;
	const struct ag_guarantee all[] = {
		{ p->tier == AG_TIER_DEVELOPER ?
		    "programs execute only where the developer tier allows" :
		    "only the allowed programs execute", ll, "Landlock (Linux 5.13)", 1 },
		{ "reads only beneath paths.read", ll, "Landlock (Linux 5.13)", 1 },
		{ "writes only beneath paths.write", ll, "Landlock (Linux 5.13)", 1 },
		{ "no truncation outside paths.write",
		    abi >= 3 ? "Landlock ABI 3" : abi >= 1 ? "seccomp refuses truncate(2)" : NULL,
		    "Landlock (Linux 5.13)", 1 },
		{ "renames and links stay within paths.write",
		    abi >= 2 ? "Landlock ABI 2" : abi >= 1 ? "Landlock ABI 1 refuses them all" : NULL,
		    "Landlock (Linux 5.13)", 1 },
		{ "protected paths are read-only for every program",
		    "read-only binds in a mount namespace", NULL, 1 },
		no_network(p) ?
		    (struct ag_guarantee){ "no network: only the session's own loopback",
		    "network namespace", "user namespaces", 1 } :
		    (struct ag_guarantee){ "network only to network.allow's hosts, through the "
		    "gateway's egress proxy, each connection audited",
		    "network namespace with only its loopback, egress proxy outside it",
		    "user namespaces", 1 },
		{ "no VSOCK, packet or other socket family; no io_uring; no kernel keys "
		    "(request_key's upcall runs in the host's namespaces)", "seccomp", NULL, 1 },
		{ "UNIX sockets only the session's own and network.unix's, each connect "
		    "made by the gateway", ag_sockconnect_available() ?
		    "seccomp user notification, pidfd_getfd" : NULL, "pidfd_getfd (Linux 5.6)", 1 },
		{ "signals only to the command's own processes",
		    abi >= 6 ? "PID namespace, Landlock ABI 6" : "PID namespace", NULL, 1 },
		{ "no process outlives the command", "PID namespace", NULL, 1 },
		/* not a profile key: a note where it does not hold */
		{ "abstract UNIX sockets only within the session", "network namespace", NULL, 0 },
	};
	size_t i, n = sizeof(all) / sizeof(all[0]);

	for (i = 0; i < n && i < max; i++)
		g[i] = all[i];
	return i;
}

/*
 * Under `required`, -1 with err when a guarantee the profile states has no
 * mechanism here; otherwise each missing one becomes a note.
 */
static int
check_guarantees(struct ag_sandbox *sb, const struct ag_profile *p, struct ag_err *err)
{
	struct ag_guarantee g[AG_GUARANTEES_MAX];
	size_t i, n = ag_sandbox_guarantees(p, sb->abi, g, AG_GUARANTEES_MAX);
	char what[512];

	for (i = 0; i < n; i++) {
		if (g[i].how != NULL)
			continue;
		snprintf(what, sizeof(what), "%s is not enforced: it needs %s%s", g[i].what,
		    g[i].needs, sb->abi == 0 ? " and this kernel offers no Landlock" : "");
		if (g[i].stated && sb->mode == AG_SANDBOX_REQUIRED)
			return ag_err_set(err, "kernel sandbox: for profile '%s', %s (Landlock ABI "
			    "here: %d); gateway.sandbox is required: commands are refused",
			    p->name ? p->name : "?", what, sb->abi);
		if (sb_note_add(sb, what) < 0)
			return ag_err_set(err, "out of memory");
	}
	return 0;
}

/*
 * After the namespaces: the mounts a command's UNIX socket may connect to
 * a socket on (sockconnect.h), those a command of the session could have
 * made it on: its own /tmp, the write roots, and /dev/shm and /var/tmp
 * where they are the session's own tmpfs.  The host's /tmp a profile
 * shares is not one (a tmux server's socket is there).
 */
static int
build_unix_rules(struct ag_sandbox *sb, struct build *b)
{
	size_t i;

	if (sb->private_tmp && sb_plist_add(&sb->unix_roots, "/tmp") < 0)
		return ag_err_set(b->err, "out of memory");
	for (i = 0; i < sb->nops; i++)
		if (sb->ops[i].kind == NSOP_TMPFS && (strcmp(sb->ops[i].path, "/dev/shm") == 0 ||
		    strcmp(sb->ops[i].path, "/var/tmp") == 0) &&
		    sb_plist_add(&sb->unix_roots, sb->ops[i].path) < 0)
			return ag_err_set(b->err, "out of memory");
	for (i = 0; i < b->writes.n; i++)
		if (!sb_plist_has(&sb->unix_roots, b->writes.v[i]) &&
		    sb_plist_add(&sb->unix_roots, b->writes.v[i]) < 0)
			return ag_err_set(b->err, "out of memory");
	sb->unix_rules.roots = sb->unix_roots.v;
	sb->unix_rules.nroots = sb->unix_roots.n;
	sb->unix_rules.names = sb->unix_names.v;
	sb->unix_rules.nnames = sb->unix_names.n;
	sb->unix_rules.abstract = sb->ns_net_fd >= 0;
	return 0;
}

/*
 * After the namespaces: the network the session got, and the seccomp
 * filter that follows from it.  Without a network namespace a profile
 * with network has none at all (build_seccomp, build_rulesets): `required`
 * refuses, best_effort says so.
 */
static int
net_check(struct ag_sandbox *sb, struct build *b)
{
	if (sb->ns_net_fd < 0) {
		sb->egress = 0;
		if (!no_network(b->p) && sb->mode == AG_SANDBOX_REQUIRED)
			return ag_err_set(b->err, "kernel sandbox: profile '%s' reaches hosts "
			    "through the egress proxy, which needs the session's network "
			    "namespace (user namespaces), and gateway.sandbox is required: "
			    "commands are refused", b->p->name ? b->p->name : "?");
		if (!no_network(b->p) && sb_note_add(sb, "no network namespace: network.allow "
		    "cannot be reached (no IPv4 or IPv6 at all)") < 0)
			return ag_err_set(b->err, "out of memory");
	}
	if (build_seccomp(sb) < 0)
		return ag_err_set(b->err, "sandbox: the seccomp filter does not assemble");
	return 0;
}

/* ---- public -------------------------------------------------------------- */

/* The sandbox with no fd open yet, and the build that fills it; NULL when
 * out of memory. */
static struct ag_sandbox *
sb_new(const struct ag_config *cfg, const struct ag_profile *p, const char *identity,
    const char *home, const char *cwd, struct build *b, struct ag_err *err)
{
	struct ag_sandbox *sb = calloc(1, sizeof(*sb));

	memset(b, 0, sizeof(*b));
	if (sb == NULL) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	b->sb = sb;
	b->p = p;
	b->home = home ? home : "/";
	b->cwd = cwd ? cwd : "/";
	b->identity = identity;
	b->err = err;
	static unsigned long generations;

	sb->outer_fd = sb->inner_fd = sb->once_fd = -1;
	sb->generation = ++generations;
	sb->ns_user_fd = sb->ns_mnt_fd = sb->ns_pid_fd = sb->ns_ipc_fd = sb->ns_net_fd =
	    sb->proc_fd = -1;
	sb->egress_fd[0] = sb->egress_fd[1] = -1;
	sb->ctl_fd = -1;
	sb->tmp_fd = sb->ptmp_fd = sb->shm_fd = -1;
	sb->mode = cfg->gw.sandbox;
	sb->profile = p;
	sb->developer = p->tier == AG_TIER_DEVELOPER;
	b->rd_dir = FS_READ;
	b->rd_file = LANDLOCK_ACCESS_FS_READ_FILE;
	if (sb->developer) {
		/* whatever may be read may run; the noexec mounts of the write
		 * roots (less paths.exec) keep freshly written files out */
		b->rd_dir |= LANDLOCK_ACCESS_FS_EXECUTE;
		b->rd_file |= LANDLOCK_ACCESS_FS_EXECUTE;
	}
	return sb;
}

static void
build_free(struct build *b)
{
	sb_plist_free(&b->progdirs);
	sb_plist_free(&b->holes);
	sb_plist_free(&b->reads);
	sb_plist_free(&b->writes);
	sb_plist_free(&b->execs);
}

/* The runner's library (agsandbox.so); missing, `required` refuses and
 * best_effort keeps the runner shell executable (inner_in_child). */
static int
find_runner_lib(struct ag_sandbox *sb, struct ag_err *err)
{
	char preload[PATH_MAX];

	if (find_preload(preload, sizeof(preload)) == 0) {
		if ((sb->preload = strdup(preload)) == NULL)
			return ag_err_set(err, "out of memory");
		return 0;
	}
	if (sb->mode == AG_SANDBOX_REQUIRED)
		return ag_err_set(err, "kernel sandbox: agsandbox.so not found in %s (or not owned "
		    "by root): commands are refused", AG_PKGLIBDIR);
	if (sb_note_add(sb, "agsandbox.so missing: the runner shell stays executable") < 0)
		return ag_err_set(err, "out of memory");
	sb->inner_in_child = 1;
	return 0;
}

/* What no command may read or run, whatever the read roots hold. */
static int
collect_all_holes(struct build *b, const char *runner, const char *path_env)
{
	const struct ag_profile *p = b->p;

	if ((b->sb->developer ? collect_deny_holes(b, path_env) :
	    collect_holes(b, runner, path_env)) < 0)
		return -1;
	/* every terminal of the host, other sessions' included: a command's
	 * own is added when it is made (ag_sandbox_allow_terminal) */
	if (add_hole(b, "/dev/pts") < 0)
		return -1;
	/* the validator's key is its group's (file mode); should the mode be
	 * wrong, the kernel still keeps every command from reading it */
	if (p->validator != NULL && p->validator->api_key_file != NULL &&
	    add_hole(b, p->validator->api_key_file) < 0)
		return -1;
	return 0;
}

/* add_exec the program name says: an absolute path, or a name found on
 * path_env (a relative path: none). */
static int
add_exec_named(struct build *b, const char *path_env, const char *name)
{
	char found[PATH_MAX];

	if (strchr(name, '/') != NULL)
		return name[0] == '/' ? add_exec(b, name, 0) : 0;
	if (ag_path_search(path_env, name, found, sizeof(found)) != 0)
		return 0;	/* not here: nothing to allow */
	return add_exec(b, found, 0);
}

/* The programs the profile lets run: execute rights for each. */
static int
collect_execs(struct build *b, const char *runner, const char *path_env)
{
	const struct ag_profile *p = b->p;
	const char *const *wr = ag_policy_wrappers();
	size_t i;

	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].command != NULL && p->allow[i].command[0] != '\0' &&
		    add_exec_named(b, path_env, p->allow[i].command) < 0)
			return -1;
	if (b->sb->inner_in_child && add_exec(b, runner, 0) < 0)
		return -1;
	/* `timeout 5 make`, `xargs wc`: the policy judged the inner command,
	 * which still needs its own execute right; a wrapper adds none */
	for (i = 0; !b->sb->developer && p->nallow > 0 && wr[i] != NULL; i++)
		if (!denied_by_name(p, wr[i]) && add_exec_named(b, path_env, wr[i]) < 0)
			return -1;
	/* file_transfer.scp / .rsync: the remote end is that same program */
	if ((p->scp_legacy && add_exec_named(b, path_env, "scp") < 0) ||
	    (p->rsync && add_exec_named(b, path_env, "rsync") < 0))
		return -1;
	/* file_transfer.sftp: the server runs through the runner like a command */
	if (p->sftp != AG_TRANSFER_OFF && ag_sandbox_sftp_server() != NULL &&
	    add_exec(b, ag_sandbox_sftp_server(), 0) < 0)
		return -1;
	return 0;
}

/* A program the command could rewrite is not executable inside: the
 * admin hears of the paths.exec entry that hides it. */
static void
warn_rewritable(const struct ag_sandbox *sb, const struct build *b)
{
	size_t i, k;

	for (i = 0; !sb->developer && i < sb->exec.n; i++)
		for (k = 0; k < b->writes.n; k++)
			if (sb_path_within(sb->exec.v[i], b->writes.v[k]))
				ag_log(LOG_WARNING, "sandbox: %s lies beneath paths.write entry %s: a "
				    "program the command can rewrite is not executable inside the "
				    "sandbox", sb->exec.v[i], b->writes.v[k]);
}

struct ag_sandbox *
ag_sandbox_prepare(const struct ag_config *cfg, const struct ag_profile *p, const char *identity,
    const char *home, const char *cwd, char *const *env, struct ag_err *err)
{
	struct ag_sandbox *sb;
	struct build b;
	const char *path_env = ag_envv_get(env, "PATH");
	const char *runner = cfg->gw.runner ? cfg->gw.runner : "/bin/bash";

	if ((sb = sb_new(cfg, p, identity, home, cwd, &b, err)) == NULL)
		return NULL;
	if ((sb->home = strdup(b.home)) == NULL || (sb->path_env = strdup(path_env ? path_env : "")) == NULL)
		goto oom;
	set_limits(sb, &p->limits, p->tier);
	if (sb->mode == AG_SANDBOX_OFF)
		return sb;

	sb->nnp = 1;
	sb->abi = ag_sandbox_abi();
	sb->private_net = 1;
	sb->egress = !no_network(p);
	if (check_guarantees(sb, p, err) < 0)
		goto fail;
	/* no Landlock: the namespaces still hold the tree and the mounts */
	if (sb->abi == 0) {
		if (collect_reads(&b) < 0 || check_links(&b) < 0 || sb_ns_make(sb, &b) < 0 ||
		    build_unix_rules(sb, &b) < 0 || net_check(sb, &b) < 0)
			goto fail;
		build_free(&b);
		return sb;
	}
	if (find_runner_lib(sb, err) < 0 || collect_all_holes(&b, runner, path_env) < 0 ||
	    collect_execs(&b, runner, path_env) < 0)
		goto fail;
	if (collect_reads(&b) < 0 ||
	    (sb->developer && expand_paths(&b, &p->paths_exec, &b.execs) < 0) ||
	    check_links(&b) < 0 || sb_ns_make(sb, &b) < 0 || build_unix_rules(sb, &b) < 0 ||
	    net_check(sb, &b) < 0 || build_rulesets(&b) < 0)
		goto fail;
	warn_rewritable(sb, &b);
	if (b.used_cwd && (sb->cwd = strdup(b.cwd)) == NULL)
		goto oom;
	snprintf(sb->guard, sizeof(sb->guard), "{ : >&%d; } 2>/dev/null && exit 126\n",
	    AG_SANDBOX_FD);
	if (!sb->developer) {
		/* for ag_sandbox_grant_once */
		sb->kept_progdirs = b.progdirs;
		sb->kept_holes = b.holes;
		sb->kept_reads = b.reads;
		memset(&b.progdirs, 0, sizeof(b.progdirs));
		memset(&b.holes, 0, sizeof(b.holes));
		memset(&b.reads, 0, sizeof(b.reads));
	}
	build_free(&b);
	return sb;
oom:
	ag_err_set(err, "out of memory");
fail:
	build_free(&b);
	ag_sandbox_free(sb);
	return NULL;
}

void
ag_sandbox_free(struct ag_sandbox *sb)
{
	size_t i;

	if (sb == NULL)
		return;
	ag_zygote_release(sb);	/* it holds what is closed below */
	if (sb->outer_fd >= 0)
		close(sb->outer_fd);
	if (sb->inner_fd >= 0)
		close(sb->inner_fd);
	ag_sandbox_grant_end(sb);
	sb_plist_free(&sb->kept_progdirs);
	sb_plist_free(&sb->kept_holes);
	sb_plist_free(&sb->kept_reads);
	sb_ns_free(sb);
	if (sb->ptmp_fd >= 0)
		close(sb->ptmp_fd);
	sb_plist_free(&sb->exec);
	sb_plist_free(&sb->unix_roots);
	sb_plist_free(&sb->unix_names);
	sb_scan_free(sb);
	sb_plist_free(&sb->writes);
	sb_plist_free(&sb->repos);
	sb_plist_free(&sb->gitdirs);
	sb_plist_free(&sb->planted);
	for (i = 0; i < sb->nops; i++)
		free(sb->ops[i].path);
	free(sb->ops);
	free(sb->preload);
	free(sb->note);
	free(sb->home);
	free(sb->cwd);
	free(sb->path_env);
	free(sb);
}

int
ag_sandbox_matches(const struct ag_sandbox *sb, const struct ag_profile *p, const char *home,
    char const *cwd, char *const *env)
{
	const char *path_env = ag_envv_get(env, "PATH");

	if (sb == NULL || sb->profile != p)
		return 0;
	if (strcmp(sb->home, home ? home : "/") != 0)
		return 0;
	if (strcmp(sb->path_env, path_env ? path_env : "") != 0)
		return 0;
	if (sb->cwd != NULL && strcmp(sb->cwd, cwd ? cwd : "/") != 0)
		return 0;
	return 1;
}

const char *
ag_sandbox_note(const struct ag_sandbox *sb)
{
	return sb ? sb->note : NULL;
}

int
ag_sandbox_tmp_usage(const struct ag_sandbox *sb, long long *used, long long *limit,
    char *why, size_t whylen)
{
	*used = 0;
	*limit = sb != NULL && sb->profile->limits.tmp_disk > 0 ?
	    sb->profile->limits.tmp_disk : AG_TMP_DISK_DEFAULT;
	if (sb == NULL || !sb->private_tmp || sb->ptmp_fd < 0)
		return 0;
	return sb_ptmp_usage(sb->ptmp_fd, *limit, used, why, whylen);
}

int
ag_sandbox_private_tmp(const struct ag_sandbox *sb)
{
	if (sb == NULL || !sb->private_tmp || sb->ns_user_fd < 0)
		return 0;
	return sb->ptmp_fd >= 0 ? 2 : 1;
}

int
ag_sandbox_active(const struct ag_sandbox *sb)
{
	return sb != NULL && sb->mode != AG_SANDBOX_OFF && sb->abi > 0 && sb->inner_fd >= 0;
}

const char *
ag_sandbox_script_guard(const struct ag_sandbox *sb)
{
	return ag_sandbox_active(sb) && !sb->inner_in_child ? sb->guard : "";
}

void
ag_sandbox_get_info(const struct ag_sandbox *sb, struct ag_sandbox_info *info)
{
	memset(info, 0, sizeof(*info));
	if (sb == NULL)
		return;
	info->abi = sb->abi;
	info->nexec = sb->exec.n;
	info->nrules = sb->nrules;
	info->seccomp = sb->seccomp;
}

const char *
ag_sandbox_exec_path(const struct ag_sandbox *sb, size_t i)
{
	return sb != NULL && i < sb->exec.n ? sb->exec.v[i] : NULL;
}

/* the inner ruleset's fd in the child, moved out of the way of the caller's
 * fd shuffle (fork gives each child its own copy of this variable) */

int
ag_sandbox_child_enter(const struct ag_sandbox *sb)
{
	static const int res[RL_COUNT] = { RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_CPU,
	    RLIMIT_AS, RLIMIT_DATA, RLIMIT_SIGPENDING };
	int i;

	if (sb == NULL)
		return 0;
	for (i = 0; i < RL_COUNT; i++)
		if (sb->rl_set[i] && setrlimit(res[i], &sb->rl[i]) < 0)
			return -1;
	if (sb->mode == AG_SANDBOX_OFF)
		return 0;
	if (sb->nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if (!ag_sandbox_child_joins(sb))
		return 0;
	/* the user namespace first: it grants what joining the others needs */
	if (setns(sb->ns_user_fd, CLONE_NEWUSER) < 0 || setns(sb->ns_mnt_fd, CLONE_NEWNS) < 0 ||
	    setns(sb->ns_pid_fd, CLONE_NEWPID) < 0 || setns(sb->ns_ipc_fd, CLONE_NEWIPC) < 0 ||
	    (sb->ns_net_fd >= 0 && setns(sb->ns_net_fd, CLONE_NEWNET) < 0))
		return -1;
	return 1;
}

int
ag_sandbox_child_joins(const struct ag_sandbox *sb)
{
	return sb != NULL && sb->mode != AG_SANDBOX_OFF && sb->ns_user_fd >= 0;
}

unsigned long
ag_sandbox_generation(const struct ag_sandbox *sb)
{
	return sb != NULL ? sb->generation : 0;
}

int
ag_sandbox_zygote_kit(const struct ag_sandbox *sb, struct ag_zygote_kit *k)
{
	static const int res[RL_COUNT] = { RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_CPU,
	    RLIMIT_AS, RLIMIT_DATA, RLIMIT_SIGPENDING };
	int i;

	/* best_effort's runner enters the inner ruleset itself: forked here */
	if (!ag_sandbox_child_joins(sb) || sb->ns_pid_fd < 0 || sb->inner_in_child || !sb->nnp)
		return -1;
	memset(k, 0, sizeof(*k));
	for (i = 0; i < RL_COUNT && k->nrl < AG_ZYGOTE_MAX_RLIMITS; i++)
		if (sb->rl_set[i]) {
			k->rl[k->nrl].res = res[i];
			k->rl[k->nrl++].lim = sb->rl[i];
		}
	k->user_fd = sb->ns_user_fd;
	k->mnt_fd = sb->ns_mnt_fd;
	k->pid_fd = sb->ns_pid_fd;
	k->ipc_fd = sb->ns_ipc_fd;
	k->net_fd = sb->ns_net_fd;
	k->filter = sb->seccomp ? &sb->fprog : NULL;
	k->outer_fd = sb->outer_fd;
	return 0;
}

const struct ag_unix_rules *
ag_sandbox_unix_rules(const struct ag_sandbox *sb)
{
	return sb != NULL && sb->mode != AG_SANDBOX_OFF ? &sb->unix_rules : NULL;
}

int
ag_sandbox_inner_fd(const struct ag_sandbox *sb)
{
	if (sb == NULL || sb->mode == AG_SANDBOX_OFF)
		return -1;
	return sb->once_fd >= 0 ? sb->once_fd : sb->inner_fd;
}

int
ag_sandbox_allow_terminal(const struct ag_sandbox *sb, int fd, struct ag_err *err)
{
	struct ag_ll_path_beneath pb;

	if (!ag_sandbox_active(sb) || fd < 0)
		return 0;
	pb.parent_fd = fd;
	pb.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE |
	    (sb->abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
	if (sb->outer_fd >= 0 &&
	    syscall(SYS_landlock_add_rule, sb->outer_fd, AG_LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return ag_err_set(err, "landlock_add_rule (terminal): %s", strerror(errno));
	pb.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
	if (syscall(SYS_landlock_add_rule, sb->inner_fd, AG_LL_RULE_PATH_BENEATH, &pb, 0) < 0 ||
	    (sb->once_fd >= 0 &&
	    syscall(SYS_landlock_add_rule, sb->once_fd, AG_LL_RULE_PATH_BENEATH, &pb, 0) < 0))
		return ag_err_set(err, "landlock_add_rule (terminal): %s", strerror(errno));
	return 0;
}

int
ag_sandbox_grant_once(struct ag_sandbox *sb, const char *const *progs, size_t n,
    struct ag_err *err)
{
	struct build b;
	size_t nexec, nrules, i;
	int fd, rc = -1;

	ag_sandbox_grant_end(sb);
	if (!ag_sandbox_active(sb) || sb->developer || n == 0)
		return 0;
	memset(&b, 0, sizeof(b));
	b.sb = sb;
	b.p = sb->profile;
	b.err = err;
	b.rd_dir = FS_READ;
	b.rd_file = LANDLOCK_ACCESS_FS_READ_FILE;
	b.h_inner = inner_handled(sb);
	/* borrowed: given back below, never freed here */
	b.progdirs = sb->kept_progdirs;
	b.holes = sb->kept_holes;
	nexec = sb->exec.n;
	nrules = sb->nrules;
	for (i = 0; i < sb->kept_reads.n; i++)
		if (sb_plist_add(&b.reads, sb->kept_reads.v[i]) < 0) {
			ag_err_set(err, "out of memory");
			goto out;
		}
	for (i = 0; i < n; i++)
		if (progs[i] != NULL && progs[i][0] == '/' && add_exec(&b, progs[i], 0) < 0)
			goto out;
	if (sb->exec.n == nexec) {
		rc = 0;		/* nothing new may run: the usual ruleset serves */
		goto out;
	}
	if (add_prog_reads(&b, nexec) < 0 || (fd = build_inner(&b)) < 0)
		goto out;
	sb->once_fd = fd;
	rc = 0;
out:
	/* the session's own list stays what the inner ruleset says */
	while (sb->exec.n > nexec)
		free(sb->exec.v[--sb->exec.n]);
	if (sb->exec.v != NULL)
		sb->exec.v[sb->exec.n] = NULL;
	sb->nrules = nrules;
	sb->kept_progdirs = b.progdirs;
	sb->kept_holes = b.holes;
	sb_plist_free(&b.reads);
	return rc;
}

void
ag_sandbox_grant_end(struct ag_sandbox *sb)
{
	if (sb != NULL && sb->once_fd >= 0) {
		close(sb->once_fd);
		sb->once_fd = -1;
	}
}

int
ag_sandbox_child(const struct ag_sandbox *sb, int *inner)
{
	*inner = -1;
	return ag_sandbox_child_enter(sb) < 0 ? -1 : ag_sandbox_child_confine(sb, inner);
}

int
ag_sandbox_child_confine(const struct ag_sandbox *sb, int *inner_out)
{
	int inner;

	*inner_out = -1;
	if (sb == NULL || sb->mode == AG_SANDBOX_OFF)
		return 0;
	if (sb->seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sb->fprog, 0, 0) < 0)
		return -1;
	if (sb->outer_fd >= 0 && syscall(SYS_landlock_restrict_self, sb->outer_fd, 0) < 0)
		return -1;
	inner = sb->once_fd >= 0 ? sb->once_fd : sb->inner_fd;
	if (inner < 0)
		return 0;
	if (sb->inner_in_child)
		return syscall(SYS_landlock_restrict_self, inner, 0) < 0 ? -1 : 0;
	if ((*inner_out = fcntl(inner, F_DUPFD_CLOEXEC, 64)) < 0)
		return -1;
	return 0;
}

int
ag_sandbox_child_fds(const struct ag_sandbox *sb, int inner, int first, int nkeep)
{
	(void)sb;
	if (first > AG_SANDBOX_FD || nkeep < 0) {
		errno = EINVAL;
		return -1;
	}
	if (inner < 0) {
		ag_close_range((unsigned)first, AG_SANDBOX_FD);
		ag_close_range(AG_SANDBOX_FD + 1 + (unsigned)nkeep, ~0U);
		return 0;
	}
	if (dup2(inner, AG_SANDBOX_FD) < 0)
		return -1;
	ag_close_range((unsigned)first, AG_SANDBOX_FD - 1);
	ag_close_range(AG_SANDBOX_FD + 1 + (unsigned)nkeep, ~0U);
	return 0;
}

/* ---- environment -------------------------------------------------------- */

/*
 * Names removed from the command's environment before the forced ones,
 * besides each program descriptor's env_drop (policy/prog.h).
 */
static const char *const defuse_drop[] = {
	"LD_PRELOAD", AG_SANDBOX_FD_ENV, NULL
};

/* Forced whatever the profile allows, besides each program descriptor's
 * env_set: the pager any program falls back to. */
static const char *const defuse_always[] = { "PAGER=cat", NULL };

static int
name_matches(const char *entry, const char *const *names)
{
	size_t len = strcspn(entry, "=");
	char name[256];
	size_t i;

	if (len >= sizeof(name))
		return 0;
	memcpy(name, entry, len);
	name[len] = '\0';
	for (i = 0; names[i] != NULL; i++)
		if (ag_glob_match(names[i], name))
			return 1;
	return 0;
}

/* 1 when the entry's name is one of a program descriptor's env_drop. */
static int
prog_drops(const char *entry)
{
	const struct ag_prog *const *pp;

	for (pp = ag_progs; *pp != NULL; pp++)
		if ((*pp)->env_drop != NULL && name_matches(entry, (*pp)->env_drop))
			return 1;
	return 0;
}

int
ag_sandbox_defuse_env(char ***envp, const struct ag_profile *p)
{
	const struct ag_prog *const *pp;
	char **env = *envp;
	size_t i, j;

	/* drop what a captured environment or the profile could have let in */
	for (i = j = 0; env[i] != NULL; i++) {
		if (name_matches(env[i], defuse_drop) || prog_drops(env[i]))
			free(env[i]);
		else
			env[j++] = env[i];
	}
	env[j] = NULL;
	for (i = 0; defuse_always[i] != NULL; i++)
		if (ag_envv_putf(envp, "%s", defuse_always[i]) < 0)
			return -1;
	/* each program's settings: a pager or an editor always (others reach
	 * them), git only where the profile allows it */
	for (pp = ag_progs; *pp != NULL; pp++) {
		const char *const *set = (*pp)->env_set;

		if (set == NULL || (((*pp)->flags & AG_PROG_DEFUSE_IF_ALLOWED) &&
		    !ag_prog_allowed(*pp, p)))
			continue;
		for (i = 0; set[i] != NULL; i++)
			if (ag_envv_putf(envp, "%s", set[i]) < 0)
				return -1;
	}
	return 0;
}

void
ag_sandbox_env_free(char **env)
{
	ag_envv_free(env);
}

/*
 * The proxy for every client that reads the usual variables (curl, git,
 * pip, npm, cargo, go, wget, Python's and Node's own where they honour
 * them): set on every command, so unsetting them in one changes nothing
 * but that client's failure.  HTTP and SOCKS5 share the one port.
 */
static int
egress_env(char ***envp)
{
	static const char *const http[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
	    "https_proxy", NULL };
	static const char *const socks[] = { "ALL_PROXY", "all_proxy", NULL };
	static const char *const none[] = { "NO_PROXY", "no_proxy", NULL };
	size_t i;

	for (i = 0; http[i] != NULL; i++)
		if (ag_envv_putf(envp, "%s=http://127.0.0.1:%d", http[i], AG_EGRESS_PORT) < 0)
			return -1;
	for (i = 0; socks[i] != NULL; i++)
		if (ag_envv_putf(envp, "%s=socks5h://127.0.0.1:%d", socks[i], AG_EGRESS_PORT) < 0)
			return -1;
	for (i = 0; none[i] != NULL; i++)
		if (ag_envv_putf(envp, "%s=localhost,127.0.0.1,::1", none[i]) < 0)
			return -1;
	/* Node 24 and later read the variables only when asked */
	return ag_envv_putf(envp, "NODE_USE_ENV_PROXY=1");
}

char **
ag_sandbox_env(const struct ag_sandbox *sb, char *const *env)
{
	size_t n = ag_envv_count(env), i;
	char **out = calloc(n + 1, sizeof(*out));

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((out[i] = strdup(env[i])) == NULL)
			goto fail;
	if (sb == NULL)
		return out;
	/* defusing is not kernel confinement: it applies with `sandbox: off` too */
	if (ag_sandbox_defuse_env(&out, sb->profile) < 0)
		goto fail;
	if (ag_sandbox_active(sb)) {
		/*
		 * Nothing may load code into the runner before agsandbox.so has
		 * confined it: no LD_LIBRARY_PATH, LD_AUDIT, ... even if the
		 * profile's env.allow lets them through the guard.
		 */
		static const char *const ld[] = { "LD_*", NULL };
		size_t k, j;

		for (k = j = 0; out[k] != NULL; k++) {
			if (name_matches(out[k], ld))
				free(out[k]);
			else
				out[j++] = out[k];
		}
		out[j] = NULL;
	}
	if (sb->negress > 0 && egress_env(&out) < 0)
		goto fail;
	if (ag_sandbox_active(sb) && !sb->inner_in_child &&
	    (ag_envv_putf(&out, "LD_PRELOAD=%s", sb->preload) < 0 ||
	    ag_envv_putf(&out, "%s=%d", AG_SANDBOX_FD_ENV, AG_SANDBOX_FD) < 0))
		goto fail;
	return out;
fail:
	ag_sandbox_env_free(out);
	return NULL;
}
