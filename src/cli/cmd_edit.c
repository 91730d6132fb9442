/*
 * cmd_edit.c - `agentgate edit`: change the policy the way visudo changes
 * sudoers.  One bad edit of a live policy locks every agent out at its
 * next login, so the admin edits a copy, the copy is loaded exactly as the
 * gateway will load it, and only a policy that loads replaces the old one,
 * atomically (rename in the same directory), with the old one's owner,
 * group and mode.  Two admins editing at once: the second is told.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/lastgood.h"
#include "common/err.h"
#include "common/misc.h"
#include "core/standing.h"
#include "record/live.h"

static void
edit_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate edit [--config FILE]\n"
	    "\n"
	    "Edit the policy safely: a copy is opened in $VISUAL or $EDITOR (else\n"
	    "sensible-editor, else vi), checked as the gateway will load it, and\n"
	    "installed atomically only when it loads; a broken copy is never\n"
	    "installed.  Sessions that start after that use it; `agentgate serve`\n"
	    "after SIGHUP.  Root only.\n"
	    "\n"
	    "Only the policy file itself is edited; the fragments of the agentgate.d\n"
	    "directory beside it are not, but the copy is checked together with them.\n"
	    "\n"
	    "  -f, --config FILE  policy file (default %s)\n"
	    "  -h, --help         show this help and exit\n", AG_DEFAULT_CONFIG);
}

/* Copy fd `from` (at its start) to fd `to`. */
static int
copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	if (lseek(from, 0, SEEK_SET) < 0)
		return -1;
	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || ag_write_all(to, buf, (size_t)n, NULL) < 0)
			return -1;
	}
	return 0;
}

/* Run the admin's editor on path, as sudoedit and git do: through the
 * shell, so EDITOR may carry arguments ("emacs -nw"). */
static int
run_editor(const char *path)
{
	const char *ed = getenv("VISUAL");
	char cmd[4096];
	pid_t pid;
	int st;

	if (ed == NULL || *ed == '\0')
		ed = getenv("EDITOR");
	if (ed == NULL || *ed == '\0')
		ed = access("/usr/bin/sensible-editor", X_OK) == 0 ? "/usr/bin/sensible-editor" : "vi";
	if (snprintf(cmd, sizeof(cmd), "%s \"$1\"", ed) >= (int)sizeof(cmd))
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, "sh", path, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* 1 when the two files have the same bytes. */
static int
same_content(int a, int b)
{
	char x[8192], y[8192];
	ssize_t n, m;

	if (lseek(a, 0, SEEK_SET) < 0 || lseek(b, 0, SEEK_SET) < 0)
		return 0;
	for (;;) {
		n = read(a, x, sizeof(x));
		m = n > 0 ? read(b, y, (size_t)n) : read(b, y, 1);
		if (n < 0 || m < 0 || n != m)
			return 0;
		if (n == 0)
			return 1;
		if (memcmp(x, y, (size_t)n) != 0)
			return 0;
	}
}

/* Ask at the terminal whether to edit again; no terminal: no. */
static int
again(void)
{
	char line[32];

	if (!isatty(STDIN_FILENO))
		return 0;
	fputs("What now? (e)dit again, e(x)it without saving [e]: ", stdout);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 0;
	return line[0] != 'x' && line[0] != 'X' && line[0] != 'q' && line[0] != 'Q';
}

int
ag_cmd_edit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = AG_DEFAULT_CONFIG;
	char tmp[PATH_MAX], real[PATH_MAX], *slash;
	struct ag_config *cfg = NULL, *old = NULL;
	struct ag_err err;
	struct stat st;
	int ch, fd = -1, tfd = -1, status = 1;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			path = optarg;
			break;
		case 'h':
			edit_usage(stdout);
			return 0;
		default:
			edit_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		edit_usage(stderr);
		return 2;
	}
	if (getuid() != 0 || geteuid() != 0) {
		fprintf(stderr, "agentgate: edit: the policy is root's: run it as root\n");
		return 1;
	}
	if (realpath(path, real) == NULL) {
		fprintf(stderr, "agentgate: edit: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if ((fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		fprintf(stderr, "agentgate: edit: %s: %s\n", real,
		    fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "agentgate: edit: %s is being edited by someone else "
		    "(agentgate edit holds a lock on it); try again later\n", real);
		goto out;
	}
	/* the copy beside it, so the final rename is atomic; root's, 0600 */
	if ((slash = strrchr(real, '/')) == NULL ||
	    snprintf(tmp, sizeof(tmp), "%.*s/.%s.edit-XXXXXX", (int)(slash - real), real,
	    slash + 1) >= (int)sizeof(tmp)) {
		fprintf(stderr, "agentgate: edit: %s: path too long\n", real);
		goto out;
	}
	if ((tfd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "agentgate: edit: cannot create a copy beside %s: %s\n", real,
		    strerror(errno));
		goto out;
	}
	if (fchmod(tfd, 0600) < 0 || copy_fd(fd, tfd) < 0) {
		fprintf(stderr, "agentgate: edit: cannot copy %s: %s\n", real, strerror(errno));
		goto out_tmp;
	}
	/* who holds sessions now, as the policy being replaced says */
	ag_err_clear(&err);
	old = ag_config_load(real, 0, &err);
	for (;;) {
		if (run_editor(tmp) < 0) {
			fprintf(stderr, "agentgate: edit: the editor failed; %s is unchanged\n",
			    real);
			goto out_tmp;
		}
		/* editors often replace the file: look at what is there now */
		close(tfd);
		if ((tfd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
			fprintf(stderr, "agentgate: edit: the copy is gone; %s is unchanged\n", real);
			goto out;
		}
		if (same_content(fd, tfd)) {
			printf("agentgate: edit: no changes; %s is unchanged\n", real);
			status = 0;
			goto out_tmp;
		}
		/* the copy as the gateway will load it (fchown first: the loader
		 * refuses what root does not own or others could write) */
		if (fchown(tfd, st.st_uid, st.st_gid) < 0 ||
		    fchmod(tfd, st.st_mode & 07777 & ~(mode_t)022) < 0) {
			fprintf(stderr, "agentgate: edit: %s: %s\n", tmp, strerror(errno));
			goto out_tmp;
		}
		ag_err_clear(&err);
		if ((cfg = ag_config_load(tmp, 0, &err)) != NULL)
			break;
		/* name the file being edited, not the copy */
		if (strcmp(err.file, tmp) == 0)
			snprintf(err.file, sizeof(err.file), "%.*s", (int)sizeof(err.file) - 1, real);
		ag_err_print(stderr, &err);
		fprintf(stderr, "agentgate: edit: that policy does not load; %s is unchanged\n",
		    real);
		if (!again())
			goto out_tmp;
		if (fchmod(tfd, 0600) < 0)
			goto out_tmp;
	}
	if (fsync(tfd) < 0 || rename(tmp, real) < 0) {
		fprintf(stderr, "agentgate: edit: cannot install %s: %s\n", real, strerror(errno));
		goto out_tmp;
	}
	printf("agentgate: edit: %s installed; new sessions use it (serve: after SIGHUP)\n", real);
	fflush(stdout);
	/* what check would warn about, as visudo says at save time; loaded
	 * again where it now is, so that the warnings name the real file */
	{
		struct ag_config *shown;

		ag_err_clear(&err);
		if ((shown = ag_config_load(real, 0, &err)) != NULL)
			ag_check_warnings(shown, real);
		ag_config_free(shown);
	}
	if (ag_lastgood_save(path, &err) < 0)
		fprintf(stderr, "agentgate: edit: not kept as the last good policy: %s\n",
		    err.msg);
	if (ag_sessions_end_revoked(old, cfg, real, "agentgate edit") > 0)
		printf("agentgate: edit: the sessions above were ended: the new policy revokes "
		    "them\n");
	status = 0;
	goto out;
out_tmp:
	(void)unlink(tmp);
out:
	ag_config_free(cfg);
	ag_config_free(old);
	if (tfd >= 0)
		close(tfd);
	if (fd >= 0)
		close(fd);
	return status;
}
