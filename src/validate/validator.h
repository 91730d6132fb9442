/*
 * validator.h - the ask stage: a second opinion on a command the profile's
 * rules leave unknown (`unknown: ask`), from an LLM or a policy service
 * over HTTP (profiles.NAME.validator, agentgate.yaml(5)).
 *
 * Only a line whose static verdict is ASK comes here; a deny of any kind
 * never does, so nothing here can turn a refusal into a run.  Whatever
 * goes wrong on the way is a deny that names its class: the key or prompt
 * file, the command's size or encoding, the rate limit, the transport
 * (dns, connect, tls, timeout), the HTTP status, the answer's size, JSON,
 * shape or confidence, a model's refusal or unfinished answer.  The whole
 * exchange, one retry on 429 or 5xx included, fits in timeout_ms.
 *
 * The request document (JSON): command, cwd, profile, tier, user,
 * identity, session, client, and "commands": each simple command the
 * parser found with the program it resolves to, its verdict and why the
 * rules did not allow it (at most AG_ASK_DOC_CMDS_MAX; a line with more has
 * "commands_truncated": true and "commands_total", and is never allowed).
 * For the LLM kinds that document, JSON-encoded, is the whole user
 * message, and the system prompt says it is data.
 *
 * The answer: {"decision": "allow" | "deny", "reason": STRING} and an
 * optional "confidence" from 0 to 1 (a webhook's or OPA's also "approver",
 * who decided); any other key, value or type, or a key twice (anywhere in
 * the answer or its envelope), is a deny.  OPA's
 * {"result": ...} holds that document or a boolean; no result (an
 * undefined decision) is a deny.  A webhook with approval_timeout may
 * answer {"decision": "pending", "reason": ..., "poll": URL on its own
 * server}: the command waits, GETting that URL, until a person's decision
 * comes back or approval_timeout passes (a deny).  What a person decided
 * is not kept for the session: the next run asks again.
 *
 * The API key file is checked when the session starts.  The key itself is
 * read and used only by the helper that asks (agentgate-ask), a child of
 * the gateway started at the first ask, undumpable like it, which makes
 * every exchange of the session on one kept-alive connection: the
 * gateway's own memory, which its children inherit, never holds it.  It
 * is read with the gateway's group, or as the caller when the policy is
 * the caller's --config, and is never in a message, a log line or an
 * audit record.  Answers are kept for the session, keyed by the
 * validator's settings, the prompt, the profile, the cwd, the command and
 * the programs its words resolve to; only in memory.
 */
#ifndef AG_VALIDATOR_H
#define AG_VALIDATOR_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"
#include "policy/policy.h"

struct ag_ask;

/* The longest reason from a validator that is shown or recorded. */
#define AG_ASK_REASON_MAX	300
/*
 * The simple commands a request document describes at most; past them it
 * says "commands_truncated": true and "commands_total", and an allow is a
 * deny ("too-many-commands").
 */
#define AG_ASK_DOC_CMDS_MAX	64

/* Who asks, for the request document; NULL fields are left out. */
struct ag_ask_who {
	const char	*user;
	const char	*identity;
	const char	*session;
	const char	*client;
	const char	*target;	/* the upstream the command is for; NULL: this host */
	/* the rules that hold the line for a person's approval (decision:
	 * approve), ids joined by ','; NULL: an ask of unknown: ask.  The
	 * document says so ("approve"), and the answer is for this run only,
	 * never kept for the session */
	const char	*approve;
	/* told when a webhook hands the command to a person (approval), before
	 * the wait; NULL: nobody to tell */
	void		(*waiting)(void *ctx, const char *reason, long seconds);
	void		*ctx;
};

/* One answer, whatever it came from. */
struct ag_ask_result {
	int	allow;				/* 1 only on a valid "allow" */
	char	reason[AG_ASK_REASON_MAX + 1];	/* the validator's, made printable */
	char	error[AG_ERR_MSG_MAX];		/* why it is a deny without an answer; "" */
	const char *error_class;		/* "timeout", "schema", ...; NULL: answered */
	long	http_status;			/* 0: none */
	long	latency_ms;
	int	cache_hit;
	int	retried;
	int	has_confidence;
	double	confidence;
	int	pending;			/* judge: "pending", poll names where */
	char	poll[1024];
	char	approver[128];			/* who decided, when a person did */
	long	approval_ms;			/* how long the person took; 0: none */
};

/*
 * The validator of profile p (which has one), ready to ask: its key and
 * prompt read now.  key_as_caller: the policy came from the caller
 * (--config), so its files are opened with the caller's group.  A key or
 * prompt that cannot be read does not fail here: every ask is then a deny
 * saying why.  NULL only when out of memory.
 */
struct ag_ask *ag_ask_new(const struct ag_validator *v, const struct ag_profile *p,
	    int key_as_caller, struct ag_err *err);
void	ag_ask_free(struct ag_ask *a);

/* The hex SHA-256 of the system prompt the LLM kinds send ("" for others). */
const char *ag_ask_prompt_sha256(const struct ag_ask *a);

/*
 * A validator's answer as JSON, the one form explain --json and the audit's
 * command records carry ("validator"): who it is (v), the prompt's digest
 * where a (may be NULL) has one, and, where r is not NULL, what it said.
 * No field is secret (the endpoint's URL, which may carry one, is not
 * there).  A new json-c object, or NULL when out of memory.
 */
struct json_object;
struct json_object *ag_ask_json(const struct ag_validator *v, const struct ag_ask *a,
	    const struct ag_ask_result *r);
const struct ag_validator *ag_ask_conf(const struct ag_ask *a);

/*
 * Ask about line (len bytes), decided d (verdict ASK) in cwd.  Always
 * fills r; returns r->allow.
 */
int	ag_ask(struct ag_ask *a, const char *line, size_t len, const char *cwd,
	    const struct ag_decision *d, const struct ag_ask_who *who,
	    struct ag_ask_result *r);

/*
 * For tests and `agentgate explain --json`: the request document for
 * line, as the validator would get it (malloc'd JSON text), or NULL with
 * err (not UTF-8, out of memory).
 */
char	*ag_ask_request_doc(const struct ag_ask *a, const char *line, size_t len,
	    const char *cwd, const struct ag_decision *d, const struct ag_ask_who *who,
	    struct ag_err *err);

/*
 * The validator's answer document (for OPA, the value of "result"),
 * judged strictly; for tests.  1 allow, 0 deny, with r's reason,
 * confidence and (for a malformed one) error and error_class filled.
 */
int	ag_ask_judge_answer(const struct ag_validator *v, const char *text, size_t len,
	    struct ag_ask_result *r);

#endif
