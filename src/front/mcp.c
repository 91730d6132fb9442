/*
 * mcp.c - the Model Context Protocol over the channel (agentproto.h): the
 * stdio transport (one JSON-RPC 2.0 message a line), server side.
 *
 * Methods: initialize (version negotiation), ping, tools/list, tools/call;
 * notifications: initialized, cancelled.  Tools: run and explain.  A
 * refusal is a tool result with isError, not a protocol error: the model
 * reads the reason and what is allowed instead.  Every malformed message
 * gets the JSON-RPC error its shape calls for, and the session goes on.
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/strbuf.h"
#include "front/agentproto_int.h"

/* JSON-RPC 2.0 error codes */
#define RPC_PARSE_ERROR		(-32700)
#define RPC_INVALID_REQUEST	(-32600)
#define RPC_METHOD_NOT_FOUND	(-32601)
#define RPC_INVALID_PARAMS	(-32602)
#define RPC_INTERNAL_ERROR	(-32603)

/* Newest first: what the client asks for if we speak it, else the newest. */
static const char *const versions[] = { "2025-11-25", "2025-06-18" };

static struct {
	int	initialized;	/* initialize answered */
} mcp;

static void
send_result(struct ag_pump *pu, json_object *id, json_object *result)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "id", json_object_get(id));
	json_object_object_add(m, "result", result);
	ag_pump_send(pu, m);
	json_object_put(m);
}

static void
send_error(struct ag_pump *pu, json_object *id, int code, const char *msg)
{
	json_object *m = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "id", id != NULL ? json_object_get(id) : NULL);
	json_object_object_add(m, "error", e);
	ag_pump_send(pu, m);
	json_object_put(m);
}

/* ---- tools ------------------------------------------------------------------ */

static json_object *
schema(const char *js)
{
	return json_tokener_parse(js);
}

static const char run_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"A bash command line, as typed at "
    "a prompt; the working directory and exported variables carry over to the next "
    "call\"},"
    "\"timeout_s\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Seconds before "
    "the command is ended (never above the profile's limit)\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false}";

static const char run_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"exit_code\":{\"type\":\"integer\"},"
    "\"signal\":{\"type\":[\"string\",\"null\"]},"
    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
    "\"cwd\":{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"},"
    "\"timed_out\":{\"type\":\"boolean\"},\"cancelled\":{\"type\":\"boolean\"},"
    "\"duration_ms\":{\"type\":\"integer\"},\"ran\":{\"type\":\"boolean\"},"
    "\"decision\":{\"type\":\"string\",\"enum\":[\"allow\",\"deny\",\"ask-allow\","
    "\"ask-deny\"]},"
    "\"reason\":{\"type\":\"string\"},\"rule\":{\"type\":\"string\"},"
    "\"allowed_here\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"unlisted_programs\":{\"type\":\"string\",\"enum\":[\"deny\",\"ask\",\"allow\",\"approve\"]}},"
    "\"required\":[\"exit_code\",\"signal\",\"stdout\",\"stderr\",\"cwd\",\"truncated\","
    "\"duration_ms\",\"decision\",\"reason\"]}";

static const char explain_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"A bash command line\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false}";

static const char explain_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"decision\":{\"type\":\"string\",\"enum\":[\"allow\",\"deny\",\"ask\"]},"
    "\"reason\":{\"type\":\"string\"},\"rule\":{\"type\":\"string\"},"
    "\"cwd\":{\"type\":\"string\"},"
    "\"commands\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":[\"string\",\"null\"]},\"path\":{\"type\":[\"string\",\"null\"]},"
    "\"verdict\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}}}},"
    "\"allowed_here\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"unlisted_programs\":{\"type\":\"string\",\"enum\":[\"deny\",\"ask\",\"allow\",\"approve\"]}},"
    "\"required\":[\"decision\",\"reason\",\"commands\"]}";

static const char request_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"The bash command line to be "
    "approved, exactly as it will be run\"},"
    "\"justification\":{\"type\":\"string\",\"description\":\"Why it is needed, for "
    "the person who approves it\"}},"
    "\"required\":[\"command\",\"justification\"],\"additionalProperties\":false}";

static const char request_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"state\":{\"type\":\"string\",\"enum\":[\"pending\",\"approved\",\"not_needed\","
    "\"refused\",\"error\"]},"
    "\"request_id\":{\"type\":\"string\"},\"rule\":{\"type\":\"string\"},"
    "\"approvers\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}},"
    "\"required\":[\"state\",\"rule\",\"approvers\",\"reason\"]}";

static const char path_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"Absolute, relative to the session's "
    "working directory, or ~/...\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

static const char write_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"Absolute, relative to the session's "
    "working directory, or ~/...\"},"
    "\"content\":{\"type\":\"string\",\"description\":\"The whole new content (UTF-8, at "
    "most 1 MiB)\"}},"
    "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}";

#define FILE_COMMON \
    "\"path\":{\"type\":\"string\"},\"decision\":{\"type\":\"string\"}," \
    "\"reason\":{\"type\":\"string\"},\"rule\":{\"type\":\"string\"}," \
    "\"exit_code\":{\"type\":\"integer\"},\"stderr\":{\"type\":\"string\"}," \
    "\"truncated\":{\"type\":\"boolean\"},\"cwd\":{\"type\":\"string\"}"

static const char read_output[] =
    "{\"type\":\"object\",\"properties\":{" FILE_COMMON ","
    "\"content\":{\"type\":\"string\"}},"
    "\"required\":[\"path\",\"decision\",\"reason\",\"exit_code\",\"content\"]}";

static const char write_output[] =
    "{\"type\":\"object\",\"properties\":{" FILE_COMMON ","
    "\"bytes\":{\"type\":\"integer\"}},"
    "\"required\":[\"path\",\"decision\",\"reason\",\"exit_code\",\"bytes\"]}";

static const char list_output[] =
    "{\"type\":\"object\",\"properties\":{" FILE_COMMON ","
    "\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\",\"enum\":[\"file\","
    "\"directory\",\"symlink\",\"fifo\",\"socket\",\"executable\"]}}}}},"
    "\"required\":[\"path\",\"decision\",\"reason\",\"exit_code\",\"entries\"]}";

static json_object *
tool(const char *name, const char *title, const char *desc, const char *in, const char *out,
    int readonly)
{
	json_object *t = json_object_new_object(), *ann = json_object_new_object();

	json_object_object_add(t, "name", json_object_new_string(name));
	json_object_object_add(t, "title", json_object_new_string(title));
	json_object_object_add(t, "description", json_object_new_string(desc));
	json_object_object_add(t, "inputSchema", schema(in));
	json_object_object_add(t, "outputSchema", schema(out));
	json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(readonly));
	json_object_object_add(ann, "destructiveHint", json_object_new_boolean(!readonly));
	json_object_object_add(ann, "openWorldHint", json_object_new_boolean(0));
	json_object_object_add(t, "annotations", ann);
	return t;
}

static json_object *
tools_list(void)
{
	json_object *r = json_object_new_object(), *a = json_object_new_array();

	char run_desc[1024];

	snprintf(run_desc, sizeof(run_desc), "Run one bash command line on the host, as the "
	    "account's shell would, after agentgate's policy has allowed it; inside a kernel "
	    "sandbox, audited.  The working directory and exported environment persist "
	    "between calls.  A refused command is an error result that says why and what is "
	    "allowed instead.%s%s%s", ag_proto_targets[0] ? "  Other hosts reachable through "
	    "this gateway: " : "", ag_proto_targets, ag_proto_targets[0] ? ".  Begin the "
	    "command with @HOST to run it there, or send @HOST alone to make it the host of "
	    "every later call (and of the file tools); @local comes back." : "");
	json_object_array_add(a, tool("run", "Run a command", run_desc, run_input, run_output,
	    0));
	json_object_array_add(a, tool("explain", "Explain a decision",
	    "What the policy would decide for a command line in the current directory, "
	    "without running it.", explain_input, explain_output, 1));
	json_object_array_add(a, tool("request_access", "Ask a person to approve a command",
	    "For a command the policy holds for a person's approval (explain says \"approval\"): "
	    "file the request now, with why it is needed, and get its id and state at once.  "
	    "Then call run with the same command: it waits for the answer, or runs at once "
	    "when it is approved already.", request_input, request_output, 0));
	json_object_array_add(a, tool("read_file", "Read a file",
	    "A file's content, read as `cat -- PATH` would be: under the same policy, sandbox "
	    "and audit as that command (so the profile must allow cat).  Text; bytes that "
	    "are not UTF-8 show as U+FFFD; at most 1 MiB.", path_input, read_output, 1));
	json_object_array_add(a, tool("write_file", "Write a file",
	    "Replace a file's content (creating it), as `cat > PATH` would with the content "
	    "on its stdin: only where the profile lets commands write, never a protected "
	    "file; the content is not part of the audit record.", write_input, write_output,
	    0));
	json_object_array_add(a, tool("list_dir", "List a directory",
	    "A directory's entries (names and types), as `ls -1AF -- PATH` would list them, "
	    "under the same policy and sandbox (so the profile must allow ls).", path_input,
	    list_output, 1));
	json_object_object_add(r, "tools", a);
	return r;
}

static json_object *
text_content(const char *s)
{
	json_object *a = json_object_new_array(), *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(s));
	json_object_array_add(a, t);
	return a;
}

/* A tool error the model reads (not a protocol error). */
static void
tool_error(struct ag_pump *pu, json_object *id, const char *msg)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "content", text_content(msg));
	json_object_object_add(r, "isError", json_object_new_boolean(1));
	send_result(pu, id, r);
}

enum tool { TOOL_RUN, TOOL_EXPLAIN, TOOL_READ, TOOL_WRITE, TOOL_LIST, TOOL_REQUEST };

static const struct {
	const char	*name;
	enum tool	 tool;
	const char	*keys[3];	/* the arguments it takes; the first is required */
} tool_table[] = {
	{ "run", TOOL_RUN, { "command", "timeout_s" } },
	{ "explain", TOOL_EXPLAIN, { "command" } },
	{ "read_file", TOOL_READ, { "path" } },
	{ "write_file", TOOL_WRITE, { "path", "content" } },
	{ "list_dir", TOOL_LIST, { "path" } },
	{ "request_access", TOOL_REQUEST, { "command", "justification" } },
};

/* A string argument: NULL (and an error sent) when absent, not a string or
 * holding a NUL; *len its length. */
static const char *
string_arg(struct ag_pump *pu, json_object *id, json_object *args, const char *key,
    size_t max, size_t *len)
{
	json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_string)) {
		send_error(pu, id, RPC_INVALID_PARAMS, "arguments: a string is required for each "
		    "of the tool's required keys (see its inputSchema)");
		return NULL;
	}
	*len = (size_t)json_object_get_string_len(v);
	if (*len > max || strlen(json_object_get_string(v)) != *len) {
		tool_error(pu, id, "agentgate: argument too long or holding a NUL byte");
		return NULL;
	}
	return json_object_get_string(v);
}

/*
 * A path as one shell word that means exactly that path: single-quoted,
 * with a leading ~/ left outside the quotes so that it names the home.
 */
static int
quote_path(struct ag_strbuf *sb, const char *p)
{
	if (strncmp(p, "~/", 2) == 0) {
		if (ag_strbuf_addstr(sb, "~/") < 0)
			return -1;
		p += 2;
	}
	return ag_strbuf_squote_str(sb, p);
}

/*
 * The file tools are the commands an agent would type for them, so they
 * are judged, sandboxed and audited as exactly those: `cat -- PATH`,
 * `cat > PATH` with the content on its stdin (the content is never part of
 * the command, nor of its audit record), `ls -1AF --quoting-style=c -- PATH`.
 */
static struct ag_call *
file_call(struct ag_pump *pu, json_object *id, enum tool t, json_object *args)
{
	struct ag_strbuf sb;
	struct ag_call *c = NULL;
	const char *path, *content = NULL;
	size_t plen, clen = 0;

	if ((path = string_arg(pu, id, args, "path", 4096, &plen)) == NULL)
		return NULL;
	if (plen == 0) {
		tool_error(pu, id, "agentgate: path is empty");
		return NULL;
	}
	if (t == TOOL_WRITE &&
	    (content = string_arg(pu, id, args, "content", AG_PROTO_INPUT_MAX, &clen)) == NULL)
		return NULL;
	ag_strbuf_init(&sb, 16384);
	if (ag_strbuf_addstr(&sb, t == TOOL_READ ? "cat -- " : t == TOOL_WRITE ? "cat > " :
	    "ls -1AF --quoting-style=c -- ") < 0 || quote_path(&sb, path) < 0 ||
	    (c = ag_call_new(t == TOOL_WRITE ? AG_CALL_INPUT : AG_CALL_RUN, id, sb.data,
	    sb.len)) == NULL || (c->path = strdup(path)) == NULL ||
	    (t == TOOL_WRITE && (c->input = malloc(clen + 1)) == NULL)) {
		ag_strbuf_free(&sb);
		ag_call_free(c);
		send_error(pu, id, RPC_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	ag_strbuf_free(&sb);
	if (t == TOOL_WRITE) {
		memcpy(c->input, content, clen);
		c->inlen = clen;
	}
	return c;
}

/* request_access: the command, and its justification as the call's input. */
static struct ag_call *
request_call(struct ag_pump *pu, json_object *id, json_object *args)
{
	const char *cmd, *just;
	size_t len, jlen;
	struct ag_call *c;

	if ((cmd = string_arg(pu, id, args, "command", AG_PROTO_COMMAND_MAX, &len)) == NULL ||
	    (just = string_arg(pu, id, args, "justification", 4096, &jlen)) == NULL)
		return NULL;
	if ((c = ag_call_new(AG_CALL_REQUEST, id, cmd, len)) == NULL ||
	    (jlen > 0 && (c->input = malloc(jlen)) == NULL)) {
		ag_call_free(c);
		send_error(pu, id, RPC_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	if (jlen > 0)
		memcpy(c->input, just, jlen);
	c->inlen = jlen;
	return c;
}

static void
tools_call(struct ag_pump *pu, json_object *id, json_object *params)
{
	json_object *name, *args, *tmo, *meta, *tok;
	struct ag_call *c;
	const char *n;
	size_t i, k, len;

	if (!json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		send_error(pu, id, RPC_INVALID_PARAMS, "tools/call needs a tool name");
		return;
	}
	n = json_object_get_string(name);
	for (i = 0; i < sizeof(tool_table) / sizeof(tool_table[0]) && strcmp(n, tool_table[i].name) != 0; i++)
		;
	if (i == sizeof(tool_table) / sizeof(tool_table[0])) {
		send_error(pu, id, RPC_INVALID_PARAMS, "unknown tool (tools/list says which "
		    "there are)");
		return;
	}
	if (!json_object_object_get_ex(params, "arguments", &args) ||
	    !json_object_is_type(args, json_type_object)) {
		send_error(pu, id, RPC_INVALID_PARAMS, "tools/call needs arguments (an object)");
		return;
	}
	json_object_object_foreach(args, key, val) {
		(void)val;
		for (k = 0; k < 3 && tool_table[i].keys[k] != NULL && strcmp(key, tool_table[i].keys[k]); k++)
			;
		if (k == 3 || tool_table[i].keys[k] == NULL) {
			send_error(pu, id, RPC_INVALID_PARAMS, "arguments: unknown key");
			return;
		}
	}
	if (tool_table[i].tool == TOOL_RUN || tool_table[i].tool == TOOL_EXPLAIN) {
		const char *cmd = string_arg(pu, id, args, "command", AG_PROTO_COMMAND_MAX, &len);

		if (cmd == NULL)
			return;
		if ((c = ag_call_new(tool_table[i].tool == TOOL_RUN ? AG_CALL_RUN : AG_CALL_EXPLAIN, id,
		    cmd, len)) == NULL) {
			send_error(pu, id, RPC_INTERNAL_ERROR, "out of memory");
			return;
		}
	} else if (tool_table[i].tool == TOOL_REQUEST) {
		if ((c = request_call(pu, id, args)) == NULL)
			return;
	} else if ((c = file_call(pu, id, tool_table[i].tool, args)) == NULL)
		return;
	c->tool = (int)tool_table[i].tool;
	if (json_object_object_get_ex(args, "timeout_s", &tmo)) {
		int64_t t = json_object_get_int64(tmo);

		if (!json_object_is_type(tmo, json_type_int) || t < 1 || t > 86400 * 365) {
			ag_call_free(c);
			send_error(pu, id, RPC_INVALID_PARAMS, "arguments: timeout_s must be a "
			    "positive integer");
			return;
		}
		c->timeout_s = (long)t;
	}
	if (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta, "progressToken", &tok) &&
	    (json_object_is_type(tok, json_type_string) || json_object_is_type(tok, json_type_int)))
		c->progress = json_object_get(tok);
	if (ag_pump_submit(pu, c) < 0)
		send_error(pu, id, RPC_INTERNAL_ERROR, "too many calls waiting; try again");
}

/* One name of `ls --quoting-style=c` output ("name" and its -F mark). */
static json_object *
ls_entry(const char *p, size_t n)
{
	struct ag_strbuf name;
	json_object *e;
	const char *type = "file";
	size_t i = 1;

	if (n < 2 || p[0] != '"')
		return NULL;
	ag_strbuf_init(&name, 8192);
	for (; i < n && p[i] != '"'; i++) {
		char ch = p[i];

		if (ch == '\\' && i + 1 < n) {
			ch = p[++i];
			if (ch >= '0' && ch <= '7') {
				int v = 0, d;

				for (d = 0; d < 3 && i < n && p[i] >= '0' && p[i] <= '7'; d++, i++)
					v = v * 8 + (p[i] - '0');
				i--;
				ch = (char)v;
			} else
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' :
				    ch == 'a' ? '\a' : ch == 'b' ? '\b' : ch == 'f' ? '\f' :
				    ch == 'v' ? '\v' : ch == 'e' ? '\033' : ch;
		}
		(void)ag_strbuf_addch(&name, ch);
	}
	if (i + 1 < n)
		switch (p[i + 1]) {
		case '/': type = "directory"; break;
		case '@': type = "symlink"; break;
		case '|': type = "fifo"; break;
		case '=': type = "socket"; break;
		case '*': type = "executable"; break;
		default: break;
		}
	e = json_object_new_object();
	(void)ag_strbuf_append(&name, "", 0);
	json_object_object_add(e, "name", json_object_new_string_len(name.data, (int)name.len));
	json_object_object_add(e, "type", json_object_new_string(type));
	ag_strbuf_free(&name);
	return e;
}

/*
 * A file tool's result out of its command's: what the tool promises
 * (content, entries, bytes written) and the decision, reason and exit.
 */
static json_object *
file_result(const struct ag_call *call, json_object *res)
{
	json_object *o = json_object_new_object(), *v, *out = NULL;
	static const char *const keep[] = { "decision", "reason", "rule", "exit_code",
	    "stderr", "truncated", "cwd" };
	size_t i;

	json_object_object_add(o, "path", json_object_new_string(call->path));
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (json_object_object_get_ex(res, keep[i], &v))
			json_object_object_add(o, keep[i], json_object_get(v));
	(void)json_object_object_get_ex(res, "stdout", &out);
	if (call->tool == TOOL_READ)
		json_object_object_add(o, "content", json_object_get(out));
	else if (call->tool == TOOL_WRITE)
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)call->inlen));
	else {
		json_object *a = json_object_new_array();
		const char *p = out != NULL ? json_object_get_string(out) : "", *nl;

		for (; *p; p = nl + 1) {
			json_object *e;

			if ((nl = strchr(p, '\n')) == NULL)
				nl = p + strlen(p) - 1;
			if ((e = ls_entry(p, (size_t)(nl - p) + (*nl != '\n'))) != NULL)
				json_object_array_add(a, e);
		}
		json_object_object_add(o, "entries", a);
	}
	return o;
}

/* The gateway's answer, as the tool's result. */
static void
mcp_done(struct ag_pump *pu, struct ag_call *call, json_object *res)
{
	json_object *r = json_object_new_object(), *d, *ran, *to, *ca, *rule, *st;
	const char *decision = "", *state;
	int is_error;

	if (call->tool == TOOL_READ || call->tool == TOOL_WRITE || call->tool == TOOL_LIST) {
		json_object *fr = file_result(call, res), *ec;

		/* a file tool that did not do its job is an error, whatever the cause */
		is_error = !json_object_object_get_ex(fr, "exit_code", &ec) ||
		    json_object_get_int(ec) != 0;
		json_object_object_add(r, "content", text_content(json_object_to_json_string_ext(fr,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
		json_object_object_add(r, "structuredContent", fr);
		json_object_object_add(r, "isError", json_object_new_boolean(is_error));
		send_result(pu, call->id, r);
		return;
	}
	if (json_object_object_get_ex(res, "decision", &d))
		decision = json_object_get_string(d);
	/* refused, or ended by the gateway (timeout, cancel): the model should
	 * not read it as the command's own answer */
	state = json_object_object_get_ex(res, "state", &st) ? json_object_get_string(st) : "error";
	is_error = (call->tool == TOOL_REQUEST && (strcmp(state, "refused") == 0 ||
	    strcmp(state, "error") == 0)) ||
	    (call->tool == TOOL_RUN &&
	    ((json_object_object_get_ex(res, "rule", &rule) &&
	    strcmp(json_object_get_string(rule), "revoked") == 0) ||
	    (json_object_object_get_ex(res, "ran", &ran) && !json_object_get_boolean(ran) &&
	    strncmp(decision, "allow", 5) != 0) || strcmp(decision, "deny") == 0 ||
	    strcmp(decision, "ask-deny") == 0 ||
	    (json_object_object_get_ex(res, "timed_out", &to) && json_object_get_boolean(to)) ||
	    (json_object_object_get_ex(res, "cancelled", &ca) && json_object_get_boolean(ca))));
	/* clients without structured output read the same thing as text */
	json_object_object_add(r, "content", text_content(json_object_to_json_string_ext(res,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
	json_object_object_add(r, "structuredContent", json_object_get(res));
	json_object_object_add(r, "isError", json_object_new_boolean(is_error));
	send_result(pu, call->id, r);
}

static void
mcp_progress(struct ag_pump *pu, struct ag_call *call, long long elapsed_ms, size_t out_bytes)
{
	json_object *m = json_object_new_object(), *p = json_object_new_object();
	char msg[128];

	snprintf(msg, sizeof(msg), "running for %lld s, %zu bytes of output", elapsed_ms / 1000,
	    out_bytes);
	json_object_object_add(p, "progressToken", json_object_get(call->progress));
	json_object_object_add(p, "progress", json_object_new_int64(++call->nprogress));
	json_object_object_add(p, "message", json_object_new_string(msg));
	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(m, "params", p);
	ag_pump_send(pu, m);
	json_object_put(m);
}

/* ---- messages --------------------------------------------------------------- */

static void
initialize(struct ag_pump *pu, json_object *id, json_object *params)
{
	json_object *r, *v, *caps, *tools, *info;
	const char *want = NULL, *use = versions[0];
	size_t i;

	if (params != NULL && json_object_object_get_ex(params, "protocolVersion", &v) &&
	    json_object_is_type(v, json_type_string))
		want = json_object_get_string(v);
	if (want == NULL) {
		send_error(pu, id, RPC_INVALID_PARAMS, "initialize needs a protocolVersion");
		return;
	}
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(want, versions[i]) == 0)
			use = versions[i];
	r = json_object_new_object();
	caps = json_object_new_object();
	tools = json_object_new_object();
	info = json_object_new_object();
	json_object_object_add(r, "protocolVersion", json_object_new_string(use));
	json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(r, "capabilities", caps);
	json_object_object_add(info, "name", json_object_new_string("agentgate"));
	json_object_object_add(info, "title", json_object_new_string("agentgate"));
	json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(r, "serverInfo", info);
	json_object_object_add(r, "instructions", json_object_new_string(
	    "Commands run on this host through agentgate: each is checked against a policy "
	    "before it runs, inside a kernel sandbox, and audited.  Use `run` as a shell "
	    "(cd and export persist between calls); a refusal says why and lists what is "
	    "allowed.  `explain` tells what would be decided without running anything."));
	mcp.initialized = 1;
	send_result(pu, id, r);
}

static void
notification(struct ag_pump *pu, const char *method, json_object *params)
{
	json_object *rid;

	if (strcmp(method, "notifications/cancelled") == 0 && params != NULL &&
	    json_object_object_get_ex(params, "requestId", &rid))
		(void)ag_pump_cancel(pu, rid);
	/* initialized, and anything else: nothing to answer */
}

static void
mcp_line(struct ag_pump *pu, const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	json_object *msg, *v, *id = NULL, *params = NULL;
	const char *method;
	size_t end;

	if (tok == NULL)
		return;
	if (strlen(line) != len) {
		json_tokener_free(tok);
		send_error(pu, NULL, RPC_PARSE_ERROR, "parse error: a NUL byte in the message");
		return;
	}
	/* with its NUL, so that a lone number is complete too */
	msg = json_tokener_parse_ex(tok, line, (int)len + 1);
	end = json_tokener_get_parse_end(tok);
	if (end > len)
		end = len;
	if (msg == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    line[end + strspn(line + end, " \t")] != '\0') {
		json_object_put(msg);
		json_tokener_free(tok);
		send_error(pu, NULL, RPC_PARSE_ERROR, "parse error: not one JSON value");
		return;
	}
	json_tokener_free(tok);
	if (json_object_is_type(msg, json_type_array)) {
		/* JSON-RPC batches left MCP in 2025-06-18 */
		send_error(pu, NULL, RPC_INVALID_REQUEST, "batches are not supported");
		goto out;
	}
	if (!json_object_is_type(msg, json_type_object)) {
		send_error(pu, NULL, RPC_INVALID_REQUEST, "a message is a JSON object");
		goto out;
	}
	if (json_object_object_get_ex(msg, "id", &id) && id != NULL &&
	    !json_object_is_type(id, json_type_string) && !json_object_is_type(id, json_type_int)) {
		send_error(pu, NULL, RPC_INVALID_REQUEST, "id must be a string or an integer");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		send_error(pu, id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "method", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		/* a response from the client: we never ask it anything */
		if (id == NULL || (!json_object_object_get_ex(msg, "result", NULL) &&
		    !json_object_object_get_ex(msg, "error", NULL)))
			send_error(pu, id, RPC_INVALID_REQUEST, "a request needs a method");
		goto out;
	}
	method = json_object_get_string(v);
	if (json_object_object_get_ex(msg, "params", &params) && params != NULL &&
	    !json_object_is_type(params, json_type_object)) {
		if (id != NULL)
			send_error(pu, id, RPC_INVALID_PARAMS, "params must be an object");
		goto out;
	}
	if (id == NULL) {
		notification(pu, method, params);
		goto out;
	}
	if (strncmp(method, "notifications/", 14) == 0) {
		send_error(pu, id, RPC_INVALID_REQUEST, "a notification has no id");
		goto out;
	}
	if (strcmp(method, "ping") == 0)
		send_result(pu, id, json_object_new_object());
	else if (strcmp(method, "initialize") == 0)
		initialize(pu, id, params);
	else if (!mcp.initialized)
		send_error(pu, id, RPC_INVALID_REQUEST, "initialize first");
	else if (strcmp(method, "tools/list") == 0)
		send_result(pu, id, tools_list());
	else if (strcmp(method, "tools/call") == 0 && params != NULL)
		tools_call(pu, id, params);
	else if (strcmp(method, "tools/call") == 0)
		send_error(pu, id, RPC_INVALID_PARAMS, "tools/call needs params");
	else
		send_error(pu, id, RPC_METHOD_NOT_FOUND, "method not found");
out:
	json_object_put(msg);
}

static void
mcp_too_long(struct ag_pump *pu)
{
	send_error(pu, NULL, RPC_INVALID_REQUEST, "message too long (at most 2 MiB a line)");
}

const struct ag_proto_ops ag_mcp_ops = {
	.line = mcp_line,
	.too_long = mcp_too_long,
	.done = mcp_done,
	.progress = mcp_progress,
};
