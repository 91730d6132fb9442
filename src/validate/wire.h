/*
 * wire.h - what each validator kind puts on the wire around the request
 * document, and takes off the answer (validate/ only; validator.h is the
 * interface).  One place knows the four protocols:
 *
 *   openai     Chat Completions: system + user message, temperature 0,
 *              response_format json_schema (strict, no additional
 *              properties); the answer is choices[0].message.content, a
 *              JSON string, with finish_reason "stop" and no refusal.
 *   anthropic  Messages: system, one user message, max_tokens,
 *              temperature 0, and the decision as a forced tool call
 *              (the tool's input_schema is the answer's schema); the
 *              answer is that tool_use block's input, with stop_reason
 *              "tool_use".
 *   opa        POST {"input": DOC} to the data API; the answer is
 *              "result" (the decision document, or a boolean).
 *   webhook    POST DOC; the answer is the body.
 */
#ifndef AG_VALIDATE_WIRE_H
#define AG_VALIDATE_WIRE_H

#include <stddef.h>

#include "common/config.h"

/* anthropic-version sent with the Messages API */
#define AG_WIRE_ANTHROPIC_VERSION	"2023-06-01"

/*
 * The HTTP body for v's kind around doc (the request document, JSON text)
 * and, for the LLM kinds, the system prompt.  malloc'd, *len set; NULL
 * when out of memory.
 */
char	*ag_wire_body(const struct ag_validator *v, const char *prompt, const char *doc,
	    size_t *len);

/*
 * The header lines carrying key for v's kind (at most 3, NULL-terminated,
 * into hdr; each malloc'd, to be wiped and freed with ag_wire_headers_free).
 * 0, or -1 when out of memory.
 */
int	ag_wire_headers(const struct ag_validator *v, const char *key, char *hdr[4]);
void	ag_wire_headers_free(char *hdr[4]);

/*
 * Take the answer document out of the envelope: *doc (malloc'd JSON text
 * of the decision document) and 0; or -1 with *cls ("not-json", "schema",
 * "refusal", "unfinished", "undefined") and why.
 */
int	ag_wire_unwrap(const struct ag_validator *v, const char *body, size_t len, char **doc,
	    const char **cls, char *why, size_t whylen);

/*
 * JSON text → object with json-c's strict parser, nothing but white space
 * after it, no object in it with a key twice.  NULL when it is not that,
 * with *cls "not-json", "schema" (a key twice, which why names) or
 * "transport" (out of memory).
 */
struct json_object *ag_wire_parse(const char *text, size_t len, const char **cls, char *why,
	    size_t whylen);

#endif
