/* upstream_int.h - what connect.c and channel.c share (upstream.h) */
#ifndef AG_UPSTREAM_INT_H
#define AG_UPSTREAM_INT_H

#include "common/sshlib.h"

#include "common/config.h"
#include "common/err.h"

struct ag_upconn {
	const struct ag_upstream	*up;
	ssh_session			 s;
};

/* A session channel with req started on it (and a PTY first when pty). */
ssh_channel ag_upconn_channel(struct ag_upconn *c, const char *req, int pty, const char *term,
	    int cols, int rows, struct ag_err *err);

#endif
