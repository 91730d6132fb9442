/*
 * wire.c - the four validator protocols (see wire.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "validate/wire.h"

/* What every answer must look like; LLM kinds get it as a JSON schema. */
static json_object *
answer_schema(void)
{
	json_object *s = json_object_new_object(), *props = json_object_new_object();
	json_object *dec = json_object_new_object(), *en = json_object_new_array();
	json_object *reason = json_object_new_object(), *conf = json_object_new_object();
	json_object *req = json_object_new_array();

	json_object_array_add(en, json_object_new_string("allow"));
	json_object_array_add(en, json_object_new_string("deny"));
	json_object_object_add(dec, "type", json_object_new_string("string"));
	json_object_object_add(dec, "enum", en);
	json_object_object_add(reason, "type", json_object_new_string("string"));
	json_object_object_add(conf, "type", json_object_new_string("number"));
	json_object_object_add(props, "decision", dec);
	json_object_object_add(props, "reason", reason);
	json_object_object_add(props, "confidence", conf);
	/* strict structured output wants every property required */
	json_object_array_add(req, json_object_new_string("decision"));
	json_object_array_add(req, json_object_new_string("reason"));
	json_object_array_add(req, json_object_new_string("confidence"));
	json_object_object_add(s, "type", json_object_new_string("object"));
	json_object_object_add(s, "properties", props);
	json_object_object_add(s, "required", req);
	json_object_object_add(s, "additionalProperties", json_object_new_boolean(0));
	return s;
}

static json_object *
message(const char *role, const char *content)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", json_object_new_string(content));
	return m;
}

char *
ag_wire_body(const struct ag_validator *v, const char *prompt, const char *doc, size_t *len)
{
	json_object *o = NULL, *msgs, *in, *rf, *js, *tool, *tools, *choice;
	const char *text, *cls;
	char why[128];
	char *out = NULL;

	switch (v->kind) {
	case AG_VK_WEBHOOK:
		if ((out = strdup(doc)) != NULL)
			*len = strlen(out);
		return out;
	case AG_VK_OPA:
		if ((in = ag_wire_parse(doc, strlen(doc), &cls, why, sizeof(why))) == NULL)
			return NULL;
		o = json_object_new_object();
		json_object_object_add(o, "input", in);
		break;
	case AG_VK_OPENAI:
		o = json_object_new_object();
		json_object_object_add(o, "model", json_object_new_string(v->model));
		json_object_object_add(o, "temperature", json_object_new_int(0));
		msgs = json_object_new_array();
		json_object_array_add(msgs, message("system", prompt));
		/* the document is the message: no tags around it to close early */
		json_object_array_add(msgs, message("user", doc));
		json_object_object_add(o, "messages", msgs);
		js = json_object_new_object();
		json_object_object_add(js, "name", json_object_new_string("agentgate_decision"));
		json_object_object_add(js, "strict", json_object_new_boolean(1));
		json_object_object_add(js, "schema", answer_schema());
		rf = json_object_new_object();
		json_object_object_add(rf, "type", json_object_new_string("json_schema"));
		json_object_object_add(rf, "json_schema", js);
		json_object_object_add(o, "response_format", rf);
		break;
	case AG_VK_ANTHROPIC:
		o = json_object_new_object();
		json_object_object_add(o, "model", json_object_new_string(v->model));
		json_object_object_add(o, "max_tokens", json_object_new_int((int)v->max_tokens));
		json_object_object_add(o, "temperature", json_object_new_int(0));
		json_object_object_add(o, "system", json_object_new_string(prompt));
		msgs = json_object_new_array();
		json_object_array_add(msgs, message("user", doc));
		json_object_object_add(o, "messages", msgs);
		tool = json_object_new_object();
		json_object_object_add(tool, "name", json_object_new_string("decide"));
		json_object_object_add(tool, "description", json_object_new_string(
		    "Record the decision on the command described in the user message."));
		json_object_object_add(tool, "input_schema", answer_schema());
		tools = json_object_new_array();
		json_object_array_add(tools, tool);
		json_object_object_add(o, "tools", tools);
		choice = json_object_new_object();
		json_object_object_add(choice, "type", json_object_new_string("tool"));
		json_object_object_add(choice, "name", json_object_new_string("decide"));
		json_object_object_add(o, "tool_choice", choice);
		break;
	}
	if (o == NULL)
		return NULL;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text != NULL && (out = strdup(text)) != NULL)
		*len = strlen(out);
	json_object_put(o);
	return out;
}

int
ag_wire_headers(const struct ag_validator *v, const char *key, char *hdr[4])
{
	size_t n = 0;
	int rc = 0;

	memset(hdr, 0, 4 * sizeof(*hdr));
	if (v->kind == AG_VK_ANTHROPIC) {
		rc |= asprintf(&hdr[n++], "anthropic-version: %s", AG_WIRE_ANTHROPIC_VERSION) < 0;
		if (key != NULL)
			rc |= asprintf(&hdr[n++], "x-api-key: %s", key) < 0;
	} else if (key != NULL)
		rc |= asprintf(&hdr[n++], "Authorization: Bearer %s", key) < 0;
	if (rc) {
		ag_wire_headers_free(hdr);
		return -1;
	}
	return 0;
}

void
ag_wire_headers_free(char *hdr[4])
{
	size_t i;

	for (i = 0; i < 4; i++) {
		if (hdr[i] != NULL) {
			explicit_bzero(hdr[i], strlen(hdr[i]));
			free(hdr[i]);
		}
		hdr[i] = NULL;
	}
}

static int
fail(const char **cls, const char *c, char *why, size_t whylen, const char *msg)
{
	*cls = c;
	snprintf(why, whylen, "%s", msg);
	return -1;
}

/* As much of a key as a message shows: printable ASCII, the rest '?'. */
static void
shown_key(const char *k, char *out, size_t outsz)
{
	size_t i;

	for (i = 0; k[i] != '\0' && i + 1 < outsz; i++)
		out[i] = k[i] >= 0x20 && k[i] < 0x7f ? k[i] : '?';
	out[i] = '\0';
}

#define WIRE_DEPTH	32	/* json-c's nesting limit below, and ours */

/*
 * 0 when no object in text (which json-c's strict parser has just
 * accepted) has a key twice; -1 with why when one does, or when something
 * in it is not JSON as RFC 8259 writes it.  json-c keeps the last of two
 * equal keys without a word, so {"decision":"deny","decision":"allow"}
 * would read as an allow; an answer that says two things is refused
 * instead (issue 34).
 *
 * json-c has no flag for this and no way to see keys while it parses, so
 * the text is walked once more.  The walk only has to find the structure
 * (strings, braces, brackets, commas) of text already known to be valid;
 * each key is decoded by json-c itself and looked up in a json-c object,
 * so two keys are "equal" exactly when json-c would have merged them:
 * "\u0064ecision" is "decision", and a key is cut at a \u0000 as json-c
 * cuts it.  Comparing raw text instead would miss both.  A single quote
 * outside a string, which json-c's strict mode takes around a key, is
 * refused: it is not JSON, and a key this walk cannot see is not checked.
 */
static int
unique_keys(const char *text, size_t len, const char **cls, char *why, size_t whylen)
{
	json_object *keys[WIRE_DEPTH];	/* per open level; NULL for an array */
	json_tokener *tok;
	size_t i, j, depth = 0;
	int want_key = 0, rc = -1;

	if ((tok = json_tokener_new_ex(2)) == NULL)
		return fail(cls, "transport", why, whylen, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	for (i = 0; i < len; i++) {
		switch (text[i]) {
		case '"':
			for (j = i + 1; j < len && text[j] != '"'; j++)
				if (text[j] == '\\')
					j++;
			if (j >= len)
				goto notjson;
			if (want_key && depth > 0 && keys[depth - 1] != NULL) {
				json_object *k;
				const char *name;

				json_tokener_reset(tok);
				k = json_tokener_parse_ex(tok, text + i, (int)(j + 1 - i));
				if (k == NULL || !json_object_is_type(k, json_type_string)) {
					json_object_put(k);
					goto notjson;
				}
				name = json_object_get_string(k);
				if (json_object_object_get_ex(keys[depth - 1], name, NULL)) {
					char shown[48];

					shown_key(name, shown, sizeof(shown));
					*cls = "schema";
					snprintf(why, whylen, "the answer has the key '%s' twice",
					    shown);
					json_object_put(k);
					goto out;
				}
				if (json_object_object_add(keys[depth - 1], name, NULL) != 0) {
					json_object_put(k);
					fail(cls, "transport", why, whylen, "out of memory");
					goto out;
				}
				json_object_put(k);
				want_key = 0;
			}
			i = j;
			break;
		case '{':
		case '[':
			if (depth == WIRE_DEPTH)
				goto notjson;
			keys[depth] = NULL;
			if (text[i] == '{' && (keys[depth] = json_object_new_object()) == NULL) {
				fail(cls, "transport", why, whylen, "out of memory");
				goto out;
			}
			depth++;
			want_key = text[i] == '{';
			break;
		case '}':
		case ']':
			if (depth == 0)
				goto notjson;
			json_object_put(keys[--depth]);
			want_key = 0;
			break;
		case ',':
			want_key = depth > 0 && keys[depth - 1] != NULL;
			break;
		case '\'':
			goto notjson;
		default:
			break;
		}
	}
	if (depth == 0) {
		rc = 0;
		goto out;
	}
notjson:
	fail(cls, "not-json", why, whylen, "the answer is not a JSON document");
out:
	while (depth > 0)
		json_object_put(keys[--depth]);
	json_tokener_free(tok);
	return rc;
}

json_object *
ag_wire_parse(const char *text, size_t len, const char **cls, char *why, size_t whylen)
{
	json_tokener *tok;
	json_object *o;
	size_t end;

	if (len > (size_t)INT32_MAX || (tok = json_tokener_new_ex(WIRE_DEPTH)) == NULL)
		goto notjson;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		json_tokener_free(tok);
		goto notjson;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; end < len; end++)
		if (strchr(" \t\r\n", text[end]) == NULL || text[end] == '\0') {
			json_object_put(o);
			goto notjson;
		}
	if (unique_keys(text, len, cls, why, whylen) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
notjson:
	fail(cls, "not-json", why, whylen, "the answer is not a JSON document");
	return NULL;
}

static char *
dup_json(json_object *o)
{
	const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);

	return t != NULL ? strdup(t) : NULL;
}

/* A member of the kind given, or NULL. */
static json_object *
member(json_object *o, const char *key, json_type t)
{
	json_object *m;

	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &m) || !json_object_is_type(m, t))
		return NULL;
	return m;
}

static int
unwrap_openai(json_object *o, char **doc, const char **cls, char *why, size_t whylen)
{
	json_object *ch = member(o, "choices", json_type_array), *c0, *msg, *ref, *fin, *content;

	if (ch == NULL || json_object_array_length(ch) < 1 ||
	    (c0 = json_object_array_get_idx(ch, 0)) == NULL ||
	    (msg = member(c0, "message", json_type_object)) == NULL)
		return fail(cls, "schema", why, whylen, "the answer has no choices[0].message");
	if (json_object_object_get_ex(msg, "refusal", &ref) && ref != NULL &&
	    !json_object_is_type(ref, json_type_null))
		return fail(cls, "refusal", why, whylen, "the model refused to answer");
	if ((fin = member(c0, "finish_reason", json_type_string)) == NULL ||
	    strcmp(json_object_get_string(fin), "stop") != 0) {
		*cls = "unfinished";
		snprintf(why, whylen, "the answer ended with finish_reason '%.40s', not 'stop'",
		    fin != NULL ? json_object_get_string(fin) : "(none)");
		return -1;
	}
	if ((content = member(msg, "content", json_type_string)) == NULL)
		return fail(cls, "schema", why, whylen, "the answer's message has no content");
	if ((*doc = strdup(json_object_get_string(content))) == NULL)
		return fail(cls, "transport", why, whylen, "out of memory");
	return 0;
}

static int
unwrap_anthropic(json_object *o, char **doc, const char **cls, char *why, size_t whylen)
{
	json_object *content = member(o, "content", json_type_array), *stop, *b, *t, *n, *in;
	size_t i;

	if ((stop = member(o, "stop_reason", json_type_string)) != NULL &&
	    strcmp(json_object_get_string(stop), "refusal") == 0)
		return fail(cls, "refusal", why, whylen, "the model refused to answer");
	if (stop == NULL || strcmp(json_object_get_string(stop), "tool_use") != 0) {
		*cls = "unfinished";
		snprintf(why, whylen, "the answer stopped with '%.40s', not the decision tool",
		    stop != NULL ? json_object_get_string(stop) : "(none)");
		return -1;
	}
	for (i = 0; content != NULL && i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		if ((t = member(b, "type", json_type_string)) == NULL ||
		    strcmp(json_object_get_string(t), "tool_use") != 0)
			continue;
		if ((n = member(b, "name", json_type_string)) == NULL ||
		    strcmp(json_object_get_string(n), "decide") != 0 ||
		    (in = member(b, "input", json_type_object)) == NULL)
			return fail(cls, "schema", why, whylen, "the tool call is not the "
			    "decision tool with an input object");
		if ((*doc = dup_json(in)) == NULL)
			return fail(cls, "transport", why, whylen, "out of memory");
		return 0;
	}
	return fail(cls, "schema", why, whylen, "the answer has no decision tool call");
}

static int
unwrap_opa(json_object *o, char **doc, const char **cls, char *why, size_t whylen)
{
	json_object *r;
	const char *text;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "result", &r) || r == NULL)
		return fail(cls, "undefined", why, whylen, "the policy's decision is undefined "
		    "(no 'result')");
	/* a boolean rule (`allow := ...`) answers yes or no without a reason */
	if (json_object_is_type(r, json_type_boolean))
		text = json_object_get_boolean(r) ?
		    "{\"decision\":\"allow\",\"reason\":\"the OPA policy allows it\"}" :
		    "{\"decision\":\"deny\",\"reason\":\"the OPA policy does not allow it\"}";
	else if ((*doc = dup_json(r)) == NULL)
		return fail(cls, "transport", why, whylen, "out of memory");
	else
		return 0;
	if ((*doc = strdup(text)) == NULL)
		return fail(cls, "transport", why, whylen, "out of memory");
	return 0;
}

int
ag_wire_unwrap(const struct ag_validator *v, const char *body, size_t len, char **doc,
    const char **cls, char *why, size_t whylen)
{
	json_object *o;
	int rc;

	*doc = NULL;
	*cls = NULL;
	if (v->kind == AG_VK_WEBHOOK) {
		if ((*doc = malloc(len + 1)) == NULL)
			return fail(cls, "transport", why, whylen, "out of memory");
		memcpy(*doc, body, len);
		(*doc)[len] = '\0';
		return 0;
	}
	if ((o = ag_wire_parse(body, len, cls, why, whylen)) == NULL)
		return -1;
	switch (v->kind) {
	case AG_VK_OPENAI:
		rc = unwrap_openai(o, doc, cls, why, whylen);
		break;
	case AG_VK_ANTHROPIC:
		rc = unwrap_anthropic(o, doc, cls, why, whylen);
		break;
	default:
		rc = unwrap_opa(o, doc, cls, why, whylen);
		break;
	}
	json_object_put(o);
	return rc;
}
