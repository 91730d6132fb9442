/*
 * redact.h - secrets kept out of what a command shows (profile
 * `output.redact`) and out of what the audit records of a command line.
 *
 * Output is judged a line at a time, so a secret that arrives in two reads
 * is still one line when it is judged: a stream's partial line is held
 * until its newline, its end, or AG_REDACT_LINE_MAX bytes.  A line that
 * long is judged in pieces, each ending AG_REDACT_CARRY bytes before what
 * is held (earlier if a match reaches across that point): the rest begins
 * the next piece, so a secret shorter than AG_REDACT_CARRY is judged whole
 * wherever it falls in a long line.  On a line, each
 * match of the built-in shapes (AWS access key ids, GitHub and GitLab
 * tokens, Slack tokens and webhooks, OpenAI and Anthropic `sk-` keys,
 * Google API keys, JWTs, agentgate's own `agt_` identity tokens) and of
 * the profile's own patterns becomes
 * "[REDACTED]"; a PEM private key is replaced whole, from its BEGIN line
 * through its END line (or the end of the stream), by one line saying so.
 *
 * A terminal cannot wait for a newline (a prompt has none): the PTY relay
 * lets a held partial line go when the program pauses (ag_redact_pause), so
 * there a secret written in two pieces with a pause between them can pass.
 */
#ifndef AG_REDACT_H
#define AG_REDACT_H

#include <stddef.h>

#include "common/err.h"

struct ag_profile;

#define AG_REDACT_LINE_MAX	((size_t)64 * 1024)
/* The tail of a full hold judged again with the next piece: longer than
 * any built-in shape's match (a 4096-bit RSA key on one JSON line is 3.3 KiB) */
#define AG_REDACT_CARRY		((size_t)8 * 1024)
#define AG_REDACT_MARK		"[REDACTED]"

/* What a stream's redactor writes: 0, or -1 to stop (the client is gone). */
typedef int (*ag_redact_emit)(void *ctx, const char *p, size_t n);

struct ag_redact;

/*
 * A redactor for one stream under profile p, or NULL when p does not
 * redact (then the caller passes output on as it is).  NULL with err set
 * when p's patterns do not compile (the loader has checked them) or memory
 * ran out.
 */
struct ag_redact *ag_redact_new(const struct ag_profile *p, struct ag_err *err);
void	ag_redact_free(struct ag_redact *r);

/* Take n bytes of the stream; whole lines go to emit, redacted. */
int	ag_redact_feed(struct ag_redact *r, const char *p, size_t n, ag_redact_emit emit,
	    void *ctx);
/* The program paused (a terminal): the held partial line goes as it is. */
int	ag_redact_pause(struct ag_redact *r, ag_redact_emit emit, void *ctx);
/* The stream ended: the rest goes (redacted; an open PEM block stays hidden). */
int	ag_redact_end(struct ag_redact *r, ag_redact_emit emit, void *ctx);

/*
 * A copy of a command line for the audit record: the values assigned to
 * variables whose names say they hold a secret (…TOKEN…, …SECRET…,
 * …PASSWORD…, …API_KEY…, …CREDENTIAL…, AWS_SECRET_ACCESS_KEY; in
 * `export`, `declare`, `readonly`, `local` and in KEY=value prefixes and
 * assignments) become "***", each inside one word of the parse
 * (cmdmask.h), and so does every built-in token shape; a private key is
 * not hidden in a command (red team 24, M1: output keeps its redaction).
 * malloc'd, *outlen set; NULL when out of memory.
 */
char	*ag_redact_command(const char *line, size_t len, size_t *outlen);

#endif
