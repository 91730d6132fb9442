/*
 * jsonl.c - JSON Lines for scripts and CI (agentproto.h): one request
 * object a line, {"id": ..., "command": "...", "timeout_s": N}, and one
 * result object a line with the same id and the fields of MCP's `run`
 * (exit_code, signal, stdout, stderr, cwd, truncated, timed_out,
 * duration_ms, decision, reason; allowed_here beside a refusal only).
 * {"id": ..., "explain":
 * "..."} answers with the decision alone; {"id": ..., "request_access":
 * "...", "justification": "..."} files the line for a person's approval
 * and answers at once (request_id, state, rule, approvers, reason).  A request that cannot be read
 * is answered {"id": ... or null, "error": "..."}; the session goes on.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "front/agentproto_int.h"

static void
error_line(struct ag_pump *pu, json_object *id, const char *msg)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "id", id != NULL ? json_object_get(id) : NULL);
	json_object_object_add(m, "error", json_object_new_string(msg));
	ag_pump_send(pu, m);
	json_object_put(m);
}

static void
jsonl_line(struct ag_pump *pu, const char *line, size_t len)
{
	json_object *req, *id = NULL, *cmd = NULL, *tmo, *just = NULL;
	enum ag_call_kind kind = AG_CALL_RUN;
	struct ag_call *c;

	if (strlen(line) != len || (req = json_tokener_parse(line)) == NULL) {
		error_line(pu, NULL, "not a JSON object");
		return;
	}
	if (!json_object_is_type(req, json_type_object)) {
		error_line(pu, NULL, "not a JSON object");
		goto out;
	}
	(void)json_object_object_get_ex(req, "id", &id);
	if (json_object_object_get_ex(req, "explain", &cmd))
		kind = AG_CALL_EXPLAIN;
	else if (json_object_object_get_ex(req, "request_access", &cmd)) {
		kind = AG_CALL_REQUEST;
		if (!json_object_object_get_ex(req, "justification", &just) ||
		    !json_object_is_type(just, json_type_string) ||
		    json_object_get_string_len(just) > 4096) {
			error_line(pu, id, "\"justification\" (a string, at most 4 KiB) is "
			    "required with request_access");
			goto out;
		}
	} else
		(void)json_object_object_get_ex(req, "command", &cmd);
	if (cmd == NULL || !json_object_is_type(cmd, json_type_string)) {
		error_line(pu, id, "\"command\" (a string) is required");
		goto out;
	}
	json_object_object_foreach(req, key, val) {
		(void)val;
		if (strcmp(key, "id") != 0 && strcmp(key, "command") != 0 &&
		    strcmp(key, "explain") != 0 && strcmp(key, "timeout_s") != 0 &&
		    strcmp(key, "request_access") != 0 && strcmp(key, "justification") != 0) {
			error_line(pu, id, "unknown key (id, command, explain, request_access, "
			    "justification, timeout_s)");
			goto out;
		}
	}
	if ((size_t)json_object_get_string_len(cmd) > AG_PROTO_COMMAND_MAX ||
	    strlen(json_object_get_string(cmd)) != (size_t)json_object_get_string_len(cmd)) {
		error_line(pu, id, "command too long (256 KiB) or holding a NUL byte");
		goto out;
	}
	if ((c = ag_call_new(kind, id, json_object_get_string(cmd),
	    (size_t)json_object_get_string_len(cmd))) == NULL) {
		error_line(pu, id, "out of memory");
		goto out;
	}
	if (just != NULL && json_object_get_string_len(just) > 0) {
		if ((c->input = malloc((size_t)json_object_get_string_len(just))) == NULL) {
			ag_call_free(c);
			error_line(pu, id, "out of memory");
			goto out;
		}
		memcpy(c->input, json_object_get_string(just),
		    (size_t)json_object_get_string_len(just));
		c->inlen = (size_t)json_object_get_string_len(just);
	}
	if (json_object_object_get_ex(req, "timeout_s", &tmo)) {
		int64_t t = json_object_get_int64(tmo);

		if (!json_object_is_type(tmo, json_type_int) || t < 1 || t > 86400 * 365) {
			ag_call_free(c);
			error_line(pu, id, "timeout_s must be a positive integer");
			goto out;
		}
		c->timeout_s = (long)t;
	}
	if (ag_pump_submit(pu, c) < 0)
		error_line(pu, id, "too many requests waiting");
out:
	json_object_put(req);
}

static void
jsonl_too_long(struct ag_pump *pu)
{
	error_line(pu, NULL, "request too long (at most 2 MiB a line)");
}

static void
jsonl_done(struct ag_pump *pu, struct ag_call *call, json_object *res)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "id", call->id != NULL ? json_object_get(call->id) : NULL);
	json_object_object_foreach(res, key, val)
		json_object_object_add(m, key, json_object_get(val));
	ag_pump_send(pu, m);
	json_object_put(m);
}

const struct ag_proto_ops ag_jsonl_ops = {
	.line = jsonl_line,
	.too_long = jsonl_too_long,
	.done = jsonl_done,
	.progress = NULL,	/* a script reads the result line */
};
