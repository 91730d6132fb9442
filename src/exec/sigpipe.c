/* sigpipe.c - the process's one signal self-pipe; see sigpipe.h */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "exec/sigpipe.h"

static int sp[2] = { -1, -1 };

int
ag_sigpipe_catch(const int *sigs, size_t nsigs, void (*handler)(int), int restart,
    struct ag_err *err)
{
	struct sigaction sa;
	size_t i;

	if (sp[0] < 0 && pipe2(sp, O_CLOEXEC | O_NONBLOCK) < 0)
		return ag_err_set(err, "pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NOCLDSTOP | (restart ? SA_RESTART : 0);
	for (i = 0; i < nsigs; i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return ag_err_set(err, "sigaction: %s", strerror(errno));
	return 0;
}

void
ag_sigpipe_notify(void)
{
	int saved = errno;

	if (sp[1] >= 0)
		(void)!write(sp[1], "", 1);	/* full pipe: a wake-up is pending anyway */
	errno = saved;
}

int
ag_sigpipe_fd(void)
{
	return sp[0];
}

void
ag_sigpipe_drain(void)
{
	char buf[64];

	if (sp[0] >= 0)
		while (read(sp[0], buf, sizeof(buf)) > 0)
			;
}

void
ag_sigpipe_close(void)
{
	if (sp[0] >= 0)
		close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	sp[0] = sp[1] = -1;
}
