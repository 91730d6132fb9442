/*
 * redact.c - secrets kept out of output and audit records (see redact.h).
 *
 * Each built-in shape has literal anchors, one of which every match holds:
 * a line is given to a shape's regular expression only when an anchor is
 * in it, so output without secrets costs a few memmem() calls a line.
 */
#include "agconfig.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "exec/cmdmask.h"
#include "exec/redact.h"

struct shape {
	const char	*anchors[6];
	const char	*re;
	int		 output_only;	/* not in a command's record (a key: cmdmask.c) */
};

static const struct shape shapes[] = {
	{ { "AKIA", "ASIA", "ABIA", "ACCA" }, "(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}", 0 },
	{ { "ghp_", "gho_", "ghu_", "ghs_", "ghr_" }, "gh[pousr]_[A-Za-z0-9]{30,255}", 0 },
	{ { "github_pat_" }, "github_pat_[A-Za-z0-9_]{22,255}", 0 },
	{ { "glpat-" }, "glpat-[A-Za-z0-9_-]{20,}", 0 },
	{ { "xox" }, "xox[abposr]-[A-Za-z0-9-]{10,}", 0 },
	{ { "hooks.slack.com/" }, "https://hooks\\.slack\\.com/services/[A-Za-z0-9/_-]+", 0 },
	{ { "sk-" }, "sk-(proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", 0 },
	{ { "AIza" }, "AIza[0-9A-Za-z_-]{35}", 0 },
	{ { "eyJ" }, "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", 0 },
	/* agentgate's own identity tokens, as ag_token_new() makes them:
	 * agt_NAME_ and 64 lower-case hex digits, NAME an identity's name */
	{ { "agt_" }, "agt_[A-Za-z0-9._@-]+_[0-9a-f]{64}", 0 },
	/* a whole key on one line (escaped newlines, as in JSON) */
	{ { "PRIVATE KEY-----" },
	    /* between the two, only what a key is made of (also with \\n escapes,
	     * as in JSON): never a `;`, a quote or a pipe, so a line shaped like a
	     * key cannot hide what else it runs */
	    "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[A-Za-z0-9+/= \t\\\\]*"
	    "-----END [A-Z0-9 ]*PRIVATE KEY-----", 1 },
};
#define NSHAPES	(sizeof(shapes) / sizeof(shapes[0]))

/*
 * Compiled the first time a line holds one of the shape's anchors: most
 * sessions never meet a secret, and compiling every shape (glibc's regcomp
 * builds an automaton per pattern) cost about a millisecond per connection.
 */
static regex_t builtin_re[NSHAPES];
static signed char builtin_ready[NSHAPES];	/* 1 compiled, -1 failed */

struct ag_redact {
	regex_t		*own;		/* the profile's patterns */
	size_t		 nown;
	char		*hold;		/* the partial line, AG_REDACT_LINE_MAX */
	size_t		 held;
	int		 in_pem;	/* inside a private key's block */
	int		 command;	/* a command line: keys are cmdmask.c's */
	struct ag_strbuf out;		/* judged lines not yet emitted */
};

/* Shape i's expression, or NULL: it does not compile (nothing passes then). */
static const regex_t *
builtin(size_t i)
{
	if (builtin_ready[i] == 0)
		builtin_ready[i] = regcomp(&builtin_re[i], shapes[i].re, REG_EXTENDED) == 0 ? 1 : -1;
	return builtin_ready[i] == 1 ? &builtin_re[i] : NULL;
}

static struct ag_redact *
redact_alloc(void)
{
	struct ag_redact *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if ((r->hold = malloc(AG_REDACT_LINE_MAX)) == NULL) {
		free(r);
		return NULL;
	}
	ag_strbuf_init(&r->out, 0);
	return r;
}

struct ag_redact *
ag_redact_new(const struct ag_profile *p, struct ag_err *err)
{
	struct ag_redact *r;
	size_t i;

	if (p == NULL || !p->redact)
		return NULL;
	if ((r = redact_alloc()) == NULL) {
		ag_err_set(err, "output redaction: out of memory");
		return NULL;
	}
	if (p->redact_patterns.n > 0 &&
	    (r->own = calloc(p->redact_patterns.n, sizeof(*r->own))) == NULL) {
		ag_redact_free(r);
		ag_err_set(err, "output redaction: out of memory");
		return NULL;
	}
	for (i = 0; i < p->redact_patterns.n; i++) {
		if (regcomp(&r->own[i], p->redact_patterns.v[i], REG_EXTENDED) != 0) {
			ag_err_set(err, "output.redact_patterns: '%s' does not compile",
			    p->redact_patterns.v[i]);
			ag_redact_free(r);
			return NULL;
		}
		r->nown++;
	}
	return r;
}

void
ag_redact_free(struct ag_redact *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nown; i++)
		regfree(&r->own[i]);
	free(r->own);
	free(r->hold);
	ag_strbuf_free(&r->out);
	free(r);
}

/* ---- one line --------------------------------------------------------------- */

static int
anchored(const struct shape *s, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(s->anchors) / sizeof(s->anchors[0]) && s->anchors[i]; i++)
		if (memmem(p, n, s->anchors[i], strlen(s->anchors[i])) != NULL)
			return 1;
	return 0;
}

/*
 * Every match of re in the NUL-terminated text (len bytes) replaced by the
 * mark, into sb.  0, or -1 when out of memory.
 */
static int
replace_all(const regex_t *re, const char *text, size_t len, struct ag_strbuf *sb)
{
	size_t off = 0;
	regmatch_t m;

	while (off <= len && regexec(re, text + off, 1, &m, off > 0 ? REG_NOTBOL : 0) == 0) {
		size_t so = off + (size_t)m.rm_so, eo = off + (size_t)m.rm_eo;

		if (ag_strbuf_append(sb, text + off, so - off) < 0)
			return -1;
		if (eo == so) {		/* an empty match: keep the byte, move on */
			if (so < len && ag_strbuf_append(sb, text + so, 1) < 0)
				return -1;
			off = so + 1;
			continue;
		}
		if (ag_strbuf_addstr(sb, AG_REDACT_MARK) < 0)
			return -1;
		off = eo;
	}
	if (off < len && ag_strbuf_append(sb, text + off, len - off) < 0)
		return -1;
	return 0;
}

/*
 * A segment without NUL bytes through every pattern that may match it,
 * appended to r->out.
 */
static int
segment(struct ag_redact *r, const char *p, size_t n)
{
	struct ag_strbuf a, b;
	size_t i;
	int rc = 0, any = 0;

	/* most lines hold no anchor and there are no patterns of one's own:
	 * passed on without a copy */
	for (i = 0; r->nown == 0 && i < NSHAPES && !anchored(&shapes[i], p, n); i++)
		;
	if (i == NSHAPES)
		return ag_strbuf_append(&r->out, p, n);
	/* a mark is longer than what it may replace: no bound but the default */
	ag_strbuf_init(&a, 0);
	ag_strbuf_init(&b, 0);
	if (ag_strbuf_append(&a, p, n) < 0 || ag_strbuf_append(&a, "", 0) < 0)
		rc = -1;
	for (i = 0; rc == 0 && i < NSHAPES + r->nown; i++) {
		const regex_t *re;

		if (i < NSHAPES && (!anchored(&shapes[i], a.data, a.len) ||
		    (r->command && shapes[i].output_only)))
			continue;
		re = i < NSHAPES ? builtin(i) : &r->own[i - NSHAPES];
		ag_strbuf_reset(&b);
		if (re == NULL || replace_all(re, a.data, a.len, &b) < 0 ||
		    ag_strbuf_append(&b, "", 0) < 0) {
			rc = -1;
			break;
		}
		/* the result is the next pattern's text */
		{
			struct ag_strbuf t = a;

			a = b;
			b = t;
		}
		any = 1;
	}
	if (rc == 0)
		rc = ag_strbuf_append(&r->out, any ? a.data : p, any ? a.len : n);
	ag_strbuf_free(&a);
	ag_strbuf_free(&b);
	return rc;
}

static const char *
find(const char *p, size_t n, const char *lit)
{
	return memmem(p, n, lit, strlen(lit));
}

/* A private key's BEGIN or END line: "-----BEGIN ... PRIVATE KEY-----". */
static const char *
pem_line(const char *p, size_t n, const char *which)
{
	const char *b = find(p, n, which), *k;

	if (b == NULL || (k = find(b, n - (size_t)(b - p), "PRIVATE KEY-----")) == NULL)
		return NULL;
	return b;
}

/* What was judged goes out in one piece (one write, not one a line). */
static int
flush(struct ag_redact *r, ag_redact_emit emit, void *ctx)
{
	int rc = r->out.len > 0 ? emit(ctx, r->out.data, r->out.len) : 0;

	ag_strbuf_reset(&r->out);
	return rc;
}

/* p[0..n) judged piece by piece between NUL bytes, which stay. */
static int
segments(struct ag_redact *r, const char *p, size_t n)
{
	size_t i, s;

	for (s = i = 0; i <= n; i++)
		if (i == n || p[i] == '\0') {
			if (segment(r, p + s, i - s) < 0)
				return -1;
			if (i < n && ag_strbuf_append(&r->out, "", 1) < 0)
				return -1;
			s = i + 1;
		}
	return 0;
}

/* One line (its newline included when it has one), redacted, onto r->out. */
static int
line(struct ag_redact *r, const char *p, size_t n, ag_redact_emit emit, void *ctx)
{
	int nl = n > 0 && p[n - 1] == '\n';
	const char *b, *end = p + n;

	/* a long run of short lines goes on in pieces of a bounded size */
	if (r->out.len >= AG_REDACT_LINE_MAX && flush(r, emit, ctx) < 0)
		return -1;
	/* a command's record: a key is not hidden, since no shape tells
	 * a key's lines from what a shell runs (cmdmask.c, red team 24) */
	if (r->command)
		return segments(r, p, n);
	if (r->in_pem) {
		/* hidden up to and including the END line */
		if (pem_line(p, n, "-----END ") != NULL)
			r->in_pem = 0;
		return 0;
	}
	if ((b = pem_line(p, n, "-----BEGIN ")) != NULL &&
	    pem_line(b, (size_t)(end - b), "-----END ") == NULL) {
		/* a block starts here: what comes before it, then one line for it */
		r->in_pem = 1;
		end = b;
	}
	if (segments(r, p, (size_t)(end - p)) < 0)
		return -1;
	if (r->in_pem && ag_strbuf_printf(&r->out, "[REDACTED PRIVATE KEY]%s",
	    nl ? "\n" : "") < 0)
		return -1;
	return 0;
}

/* ---- streams ---------------------------------------------------------------- */

/*
 * A private key's BEGIN or END marker: not a secret, but a cut through one
 * would hide the key's start or its end from line().
 */
static const regex_t *
pem_marker(void)
{
	static regex_t re;
	static signed char ready;	/* 1 compiled, -1 failed */

	if (ready == 0)
		ready = regcomp(&re, "-----(BEGIN|END) [A-Z0-9 ]*PRIVATE KEY-----",
		    REG_EXTENDED) == 0 ? 1 : -1;
	return ready == 1 ? &re : NULL;
}

/*
 * Where a full hold p[0..n) (n == AG_REDACT_LINE_MAX, no newline) is cut
 * for judging, into *cut; the rest is held and begins the next piece.
 * Cutting at n would split a secret that straddles the boundary into two
 * harmless-looking halves (issue 34).  So the piece ends AG_REDACT_CARRY
 * bytes earlier, and earlier still at the start of any match of a shape,
 * a profile's pattern or a key's marker that reaches across that point:
 * the next piece then holds the whole match, and more after it.  The
 * patterns themselves decide, so a profile's own are covered as the
 * built-in ones are.  *cut is 0 when a match runs from the start of the
 * hold across the point (a secret near 64 KiB long): then the whole hold
 * is judged, as before.  0, or -1 when out of memory (or a built-in shape
 * does not compile, which segment() would fail on too).
 */
static int
cut_point(struct ag_redact *r, const char *p, size_t n, size_t *cut)
{
	size_t c = n - AG_REDACT_CARRY, s, e, i;
	struct ag_strbuf a;
	int moved, rc = 0;

	/* no match crosses a NUL: only the segment around the point matters */
	for (s = c; s > 0 && p[s - 1] != '\0'; s--)
		;
	for (e = c; e < n && p[e] != '\0'; e++)
		;
	ag_strbuf_init(&a, 0);
	if (ag_strbuf_append(&a, p + s, e - s) < 0 || ag_strbuf_append(&a, "", 0) < 0)
		rc = -1;
	/* moving the point back may put it inside another pattern's match */
	do {
		moved = 0;
		for (i = 0; rc == 0 && !moved && i < NSHAPES + 1 + r->nown; i++) {
			const regex_t *re;
			regmatch_t m;
			size_t off = 0;

			if (i < NSHAPES && !anchored(&shapes[i], a.data, a.len))
				continue;
			if (i == NSHAPES && find(a.data, a.len, "PRIVATE KEY-----") == NULL)
				continue;
			re = i < NSHAPES ? builtin(i) : i == NSHAPES ? pem_marker() :
			    &r->own[i - NSHAPES - 1];
			if (re == NULL) {
				rc = -1;
				break;
			}
			while (off <= a.len && s + off < c && regexec(re, a.data + off, 1, &m,
			    off > 0 ? REG_NOTBOL : 0) == 0) {
				size_t so = off + (size_t)m.rm_so, eo = off + (size_t)m.rm_eo;

				if (s + so >= c)
					break;
				if (s + eo > c) {
					c = s + so;
					moved = 1;
					break;
				}
				off = eo > so ? eo : so + 1;
			}
		}
	} while (rc == 0 && moved && c > s);
	ag_strbuf_free(&a);
	*cut = c;
	return rc;
}

int
ag_redact_feed(struct ag_redact *r, const char *p, size_t n, ag_redact_emit emit, void *ctx)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl != NULL ? (size_t)(nl - p) + 1 : n;

		if (take > AG_REDACT_LINE_MAX - r->held)
			take = AG_REDACT_LINE_MAX - r->held;
		memcpy(r->hold + r->held, p, take);
		r->held += take;
		p += take;
		n -= take;
		/* a whole line, or as much of one as is held */
		if (r->hold[r->held - 1] == '\n' || r->held == AG_REDACT_LINE_MAX) {
			size_t h = r->held, c = h;

			if (r->hold[h - 1] != '\n') {
				if (cut_point(r, r->hold, h, &c) < 0)
					return -1;
				if (c == 0)
					c = h;
			}
			if (line(r, r->hold, c, emit, ctx) < 0)
				return -1;
			memmove(r->hold, r->hold + c, h - c);
			r->held = h - c;
		}
	}
	return flush(r, emit, ctx);
}

int
ag_redact_pause(struct ag_redact *r, ag_redact_emit emit, void *ctx)
{
	size_t h = r->held;

	r->held = 0;
	if (h > 0 && line(r, r->hold, h, emit, ctx) < 0)
		return -1;
	return flush(r, emit, ctx);
}

int
ag_redact_end(struct ag_redact *r, ag_redact_emit emit, void *ctx)
{
	int rc = ag_redact_pause(r, emit, ctx);

	r->in_pem = 0;
	return rc;
}

/* ---- command lines ---------------------------------------------------------- */

static int
to_strbuf(void *ctx, const char *p, size_t n)
{
	return ag_strbuf_append(ctx, p, n);
}

char *
ag_redact_command(const char *s, size_t len, size_t *outlen)
{
	struct ag_strbuf masked, out;
	struct ag_redact *r;
	int ok;

	ag_strbuf_init(&masked, 0);
	/* the values of secret-named variables, on the parser's words */
	ok = ag_cmdmask(s, len, &masked) == 0;
	/* and whatever has a secret's shape */
	ag_strbuf_init(&out, 0);
	if (ok && (r = redact_alloc()) != NULL) {
		r->command = 1;
		ok &= ag_redact_feed(r, masked.data ? masked.data : "", masked.len, to_strbuf,
		    &out) == 0 && ag_redact_end(r, to_strbuf, &out) == 0 &&
		    ag_strbuf_append(&out, "", 0) == 0;
		ag_redact_free(r);
	} else
		ok = 0;
	ag_strbuf_free(&masked);
	if (!ok) {
		ag_strbuf_free(&out);
		return NULL;
	}
	return ag_strbuf_detach(&out, outlen);
}
