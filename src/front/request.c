/*
 * request.c - a session's request classified once (request.h), and the
 * session served as it asks: the front ends' one entry into the core.
 */
#include "agconfig.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/target.h"
#include "core/terminal.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "front/repl.h"
#include "front/request.h"

void
ag_request_of(const char *req, struct ag_request *r)
{
	char name[80];
	size_t rest;

	memset(r, 0, sizeof(*r));
	r->text = req;
	if (req == NULL)
		r->kind = AG_REQ_REPL;
	else if ((r->proto = ag_proto_of(req)) != AG_PROTO_NONE)
		r->kind = AG_REQ_PROTO;
	else if (ag_target_word(req, strlen(req), name, sizeof(name), &rest) == 1 &&
	    req[rest + strspn(req + rest, " \t\n")] == '\0')
		r->kind = AG_REQ_TARGET;
	else
		r->kind = AG_REQ_COMMAND;
}

const char *
ag_request_mode(const struct ag_request *r, int tty)
{
	if (r->kind == AG_REQ_PROTO)
		return ag_proto_mode(r->proto);
	return tty ? "pty" : r->kind == AG_REQ_REPL ? "repl" : "exec";
}

/*
 * The REPL: without a terminal, stdin carries the next commands, so a
 * command must not eat them; it reads /dev/null instead.
 */
static int
serve_repl(struct ag_core *core)
{
	int devnull = -1, status;

	if (!core->tty) {
		if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "agentgate: cannot open /dev/null\n");
			return 1;
		}
		core->cmd_in = devnull;
	}
	status = ag_repl_loop(core);
	if (devnull >= 0)
		close(devnull);
	core->cmd_in = STDIN_FILENO;
	return status;
}

int
ag_front_serve(struct ag_core *core, const struct ag_request *r)
{
	int status = 1, end;

	core->cmd_in = STDIN_FILENO;
	if (r->kind == AG_REQ_PROTO) {
		/* a program's session (MCP, JSON Lines): never a terminal */
		status = ag_proto_serve(core, r->proto);
		goto out;
	}
	core->pty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (core->pty && ag_core_term_start(core) < 0)
		goto out;
	switch (r->kind) {
	case AG_REQ_TARGET:
		/* `ssh -t agent@gw @web1`: a session there */
		status = ag_core_command(core, r->text, strlen(r->text), 0, &end);
		if (status != 0 || end)
			break;
		core->tty = core->pty;	/* with a terminal, the prompt's */
		status = serve_repl(core);
		break;
	case AG_REQ_COMMAND:
		status = ag_core_command(core, r->text, strlen(r->text), AG_CORE_REQUEST, &end);
		break;
	default:
		status = serve_repl(core);
		break;
	}
out:
	fflush(stdout);
	ag_core_term_end(core);
	ag_runner_reap_all(ag_sandbox_keeper(core->sandbox));
	return status;
}
