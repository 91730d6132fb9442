/*
 * agentproto.h - structured front ends for programs: MCP (the Model Context
 * Protocol's stdio transport) and JSON Lines, over one SSH channel.
 *
 * Requested as `ssh -s agent@host mcp` / `ssh -s agent@host agentgate-json`
 * (sshd runs the ForceCommand with SSH_ORIGINAL_COMMAND set to the
 * subsystem's command, "AGENTGATE mcp" / "AGENTGATE json"; `agentgate serve`
 * maps its subsystems to the same), or as that command itself.
 *
 * The session splits in two processes, as OpenSSH's privilege separation
 * does, so that the one that speaks to the client never waits on a command:
 *
 *   the gateway (core)  keeps the session core, its audit and sandbox; its
 *                       fds 1 and 2 become two pipes, 0 is /dev/null; it
 *                       takes one request at a time from a control socket,
 *                       runs it through ag_core_command() and answers with
 *                       the outcome (core.h) as a JSON object
 *   the pump (child)    owns the channel, without the gateway's group or
 *                       any of its files: reads requests line by line,
 *                       answers what needs no command (initialize, ping,
 *                       tools/list), queues the rest, collects each
 *                       command's stdout and stderr from the pipes, sends
 *                       progress, and on a cancellation sends the gateway
 *                       SIGUSR1 (runner.h: that command's group is ended)
 *
 * Everything a command does therefore passes the same stages, sandbox and
 * audit as a typed one; the session's audit records say mode "mcp" or
 * "json".
 */
#ifndef AG_AGENTPROTO_H
#define AG_AGENTPROTO_H

#include <stddef.h>

struct ag_core;

enum ag_proto {
	AG_PROTO_NONE,
	AG_PROTO_MCP,
	AG_PROTO_JSON
};

/* The protocol a channel request asks for: "[DIR/]agentgate mcp|json". */
enum ag_proto ag_proto_of(const char *req);

/* Its name in the audit record's mode: "mcp", "json". */
const char *ag_proto_mode(enum ag_proto p);

/* Serve the channel on fds 0 and 1 until the client closes it; the status. */
int	ag_proto_serve(struct ag_core *core, enum ag_proto p);

#endif
