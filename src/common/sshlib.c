/*
 * sshlib.c - libssh's functions, looked up at the first use (sshlib.h).
 */
#include "agconfig.h"

#include <stddef.h>

#include "common/lazylib.h"
#include "common/sshlib.h"

struct ag_sshlib ag_ssh;

static struct ag_lazylib ssh_lib = { "libssh.so.4", 0, "" };

int
ag_sshlib_load(struct ag_err *err)
{
#define AG_SSHLIB_SYM(f)	AG_LAZYSYM(struct ag_sshlib, f, f),
	static const struct ag_lazysym sym[] = { AG_SSHLIB_FUNCS(AG_SSHLIB_SYM) };
#undef AG_SSHLIB_SYM

	if (ag_lazylib_load(&ssh_lib, sym, sizeof(sym) / sizeof(sym[0]), &ag_ssh) < 0)
		return ag_err_set(err, "cannot load libssh: %s", ssh_lib.why);
	return 0;
}
