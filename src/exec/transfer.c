/* transfer.c - the program that serves an allowed file transfer; see transfer.h */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>

#include "exec/sandbox.h"
#include "exec/transfer.h"

char *
ag_transfer_script(const struct ag_xfer *x, const char *req, size_t len, struct ag_err *err)
{
	const char *server;
	char *s;
	int n;

	if (x->kind == AG_XFER_SFTP) {
		if ((server = ag_sandbox_sftp_server()) == NULL) {
			ag_err_set(err, "sftp: no sftp-server program on this host");
			return NULL;
		}
		/* exec: the runner shell goes away, the server speaks on its stdio */
		n = asprintf(&s, "exec %s%s", server, x->readonly ? " -R" : "");
	} else
		n = asprintf(&s, "exec %.*s", (int)len, req);
	if (n < 0) {
		ag_err_set(err, "out of memory");
		return NULL;
	}
	return s;
}
