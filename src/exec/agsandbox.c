/*
 * agsandbox.c - agsandbox.so, preloaded into the runner shell only.
 *
 * Its constructor runs after the dynamic loader has mapped the shell and
 * before the shell's main(): it enters the Landlock ruleset the gateway
 * left at the fd named by AGENTGATE_SANDBOX_FD (execute and read rights
 * that exclude the shell itself), closes that fd and removes LD_PRELOAD
 * and AGENTGATE_SANDBOX_FD from the environment, so nothing the shell
 * starts loads this library or sees the fd.  See sandbox.c for why.
 *
 * Loaded into anything else (someone setting LD_PRELOAD by hand) without
 * the variable it does nothing; with the variable it can only restrict.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/sandbox.h"

extern char **environ;

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

static void
die(const char *msg)
{
	(void)!write(2, msg, strlen(msg));
	_exit(126);
}

/*
 * The environment is edited in place, on the array main() receives too.
 * Not getenv/unsetenv: bash defines its own, and the executable's symbols
 * win over libc's, so those would talk to a shell that does not exist yet.
 */
static const char *
take(const char *name)
{
	size_t n = strlen(name);
	const char *val = NULL;
	char **ep = environ;

	while (ep != NULL && *ep != NULL) {
		if (strncmp(*ep, name, n) == 0 && (*ep)[n] == '=') {
			char **dp = ep;

			if (val == NULL)
				val = *ep + n + 1;
			do
				dp[0] = dp[1];
			while (*dp++ != NULL);
		} else
			ep++;
	}
	return val;
}

__attribute__((constructor)) static void
ag_sandbox_enter(void)
{
	const char *v = take(AG_SANDBOX_FD_ENV);
	char *end;
	long fd;

	if (v == NULL)
		return;
	(void)take("LD_PRELOAD");
	fd = strtol(v, &end, 10);
	if (end == v || *end != '\0' || fd < 0 || fd > 1024)
		die("agentgate: sandbox: bad " AG_SANDBOX_FD_ENV "\n");
	if (syscall(SYS_landlock_restrict_self, (int)fd, 0) != 0)
		die("agentgate: sandbox: cannot enter the execute/read ruleset\n");
	close((int)fd);
}
