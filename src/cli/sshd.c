/*
 * sshd.c - sshd -T, sshd -t and sshd's PAM service name, for doctor and setup.
 */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/sshd.h"
#include "common/misc.h"
#include "common/strbuf.h"

#define SSHD_OUT_MAX	(1024 * 1024)	/* sshd -T prints a few KiB */
#define SSHD_ERR_MAX	4096
#define SSHD_TIMEOUT_MS	15000

static void
drain(int *fd, struct ag_strbuf *sb, int *over)
{
	char buf[4096];
	ssize_t r = read(*fd, buf, sizeof(buf));

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (ag_strbuf_append(sb, buf, (size_t)r) < 0)
		*over = 1;
}

/*
 * Run sshd with argv (argv[0] is the program); its stdout into out (NULL:
 * dropped), its stderr's first lines into the error when it fails.
 */
static int
run_sshd(const char *const *argv, struct ag_strbuf *out, struct ag_err *err)
{
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, status = 0, over = 0, n;
	struct ag_strbuf sout, serr;
	long long t0;
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		ag_err_set(err, "pipe: %s", strerror(errno));
		goto fail_pipes;
	}
	if ((pid = fork()) < 0) {
		ag_err_set(err, "fork: %s", strerror(errno));
		goto fail_pipes;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
			_exit(127);
		/* execv's argv is not const for historical reasons only. */
		execv(argv[0], (char *const *)(uintptr_t)argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	o[1] = e[1] = -1;
	ag_strbuf_init(&sout, SSHD_OUT_MAX);
	ag_strbuf_init(&serr, SSHD_ERR_MAX);
	t0 = ag_now_ms();
	while (o[0] >= 0 || e[0] >= 0) {
		struct pollfd p[2] = { { .fd = o[0], .events = POLLIN },
				       { .fd = e[0], .events = POLLIN } };
		long left = SSHD_TIMEOUT_MS - (long)(ag_now_ms() - t0);
		int pr;

		if (left <= 0 || over)
			break;
		pr = poll(p, 2, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (o[0] >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&o[0], &sout, &over);
		if (e[0] >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			int eover = 0;

			drain(&e[0], &serr, &eover);	/* excess stderr is dropped */
		}
	}
	if (o[0] >= 0 || e[0] >= 0)
		kill(pid, SIGKILL);
	if (o[0] >= 0)
		close(o[0]);
	if (e[0] >= 0)
		close(e[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (over || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		const char *msg = serr.data != NULL ? serr.data : "";
		size_t ml = strlen(msg);

		while (ml > 0 && msg[ml - 1] == '\n')
			ml--;
		ag_err_set(err, "%s %s failed%s %.*s", argv[0], argv[1],
		    over ? " (output too large)" : ":", (int)(ml > 400 ? 400 : ml), msg);
		ag_strbuf_free(&sout);
		ag_strbuf_free(&serr);
		return -1;
	}
	ag_strbuf_free(&serr);
	if (out != NULL)
		*out = sout;
	else
		ag_strbuf_free(&sout);
	return 0;

fail_pipes:
	for (n = 0; n < 2; n++) {
		if (o[n] >= 0)
			close(o[n]);
		if (e[n] >= 0)
			close(e[n]);
	}
	return -1;
}

int
ag_sshd_dump(const char *sshd, const char *user, const char *file, struct ag_sshd_conf *out,
    struct ag_err *err)
{
	char spec[512];
	const char *argv[8];
	struct ag_strbuf sb;
	int argc = 0, n;

	n = snprintf(spec, sizeof(spec), "user=%s,host=localhost,addr=127.0.0.1", user);
	if (n < 0 || (size_t)n >= sizeof(spec))
		return ag_err_set(err, "user name too long");
	argv[argc++] = sshd;
	argv[argc++] = "-T";
	argv[argc++] = "-C";
	argv[argc++] = spec;
	if (file != NULL) {
		argv[argc++] = "-f";
		argv[argc++] = file;
	}
	argv[argc] = NULL;
	if (run_sshd(argv, &sb, err) < 0)
		return -1;
	out->text = ag_strbuf_detach(&sb, &out->len);
	if (out->text == NULL) {
		out->text = strdup("");
		out->len = 0;
		if (out->text == NULL)
			return ag_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < out->len; i++)
		if (out->text[i] == '\n')
			out->text[i] = '\0';
	return 0;
}

void
ag_sshd_conf_free(struct ag_sshd_conf *c)
{
	free(c->text);
	c->text = NULL;
	c->len = 0;
}

int
ag_sshd_test(const char *sshd, const char *file, struct ag_err *err)
{
	const char *argv[5] = { sshd, "-t", NULL, NULL, NULL };

	if (file != NULL) {
		argv[2] = "-f";
		argv[3] = file;
	}
	return run_sshd(argv, NULL, err);
}

const char *
ag_sshd_get_nth(const struct ag_sshd_conf *c, const char *kw, int idx)
{
	size_t kl = strlen(kw), i = 0;

	while (i < c->len) {
		const char *line = c->text + i;
		size_t ll = strlen(line);

		if (ll > kl && strncmp(line, kw, kl) == 0 && line[kl] == ' ' && idx-- == 0)
			return line + kl + 1;
		i += ll + 1;
	}
	return NULL;
}

const char *
ag_sshd_get(const struct ag_sshd_conf *c, const char *kw)
{
	return ag_sshd_get_nth(c, kw, 0);
}

int
ag_sshd_is(const struct ag_sshd_conf *c, const char *kw, const char *want)
{
	const char *v = ag_sshd_get(c, kw);

	return v != NULL && strcmp(v, want) == 0;
}

int
ag_sshd_has_subsystem(const struct ag_sshd_conf *c, const char *name)
{
	size_t n = strlen(name);
	const char *v;
	int k;

	for (k = 0; (v = ag_sshd_get_nth(c, "subsystem", k)) != NULL; k++)
		if (strncmp(v, name, n) == 0 && (v[n] == ' ' || v[n] == '\t'))
			return 1;
	return 0;
}

void
ag_sshd_pam_service(const char *sshd, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", ag_base_name(sshd));
	for (i = 0; buf[i] != '\0'; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
}

void
ag_sshd_pam_path(const char *sshd, char *buf, size_t len)
{
	char svc[128];

	ag_sshd_pam_service(sshd, svc, sizeof(svc));
	snprintf(buf, len, "/etc/pam.d/%s", svc);
}
