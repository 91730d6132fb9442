/*
 * request.h - what a session was asked for, classified once at the front
 * door: sshd's SSH_ORIGINAL_COMMAND (or a login shell's -c), serve's
 * channel request, `agentgate mcp|json` as the command.  The front ends
 * name the session's mode from it and hand it to ag_front_serve, which
 * runs the REPL, one command, a session on an upstream, or an agent
 * protocol; nothing reads the string for its kind again.
 */
#ifndef AG_REQUEST_H
#define AG_REQUEST_H

#include "front/agentproto.h"

struct ag_core;

enum ag_request_kind {
	AG_REQ_REPL,		/* no command: lines from stdin, or a terminal */
	AG_REQ_COMMAND,		/* one command line (which may be a file transfer) */
	AG_REQ_TARGET,		/* "@NAME" alone: a session on that upstream */
	AG_REQ_PROTO		/* "[DIR/]agentgate mcp|json": an agent protocol */
};

struct ag_request {
	enum ag_request_kind	 kind;
	const char		*text;	/* COMMAND and TARGET: the request as given */
	enum ag_proto		 proto;	/* PROTO: which */
};

/* Classify req (NULL: none). */
void	ag_request_of(const char *req, struct ag_request *r);

/* The audit record's mode: "mcp", "json", or for the others "pty" on a
 * terminal (tty), else "exec" for a command and "repl" for none. */
const char *ag_request_mode(const struct ag_request *r, int tty);

/* Serve the session the request asks for on fds 0, 1 and 2; its status. */
int	ag_front_serve(struct ag_core *core, const struct ag_request *r);

#endif
