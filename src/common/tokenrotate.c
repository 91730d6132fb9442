/*
 * tokenrotate.c - the text edit of `agentgate token rotate` (tokenrotate.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/tokenhash.h"
#include "common/tokenrotate.h"

/* An edit: n bytes at off become s. */
struct splice {
	size_t		 off, n;
	char		 s[AG_TOKEN_HASH_MAX * 2 + 96];
};

void
ag_token_until_text(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)t);
}

/*
 * The offset of line:col (1-based) in text, when that line exists, is
 * plain ASCII up to there (the loader counts characters, this bytes) and
 * col is inside it; else -1.
 */
static long
offset_of(const char *text, size_t len, int line, int col)
{
	size_t i = 0, start;
	int l;

	if (line < 1 || col < 1)
		return -1;
	for (l = 1; l < line; l++) {
		const char *nl = memchr(text + i, '\n', len - i);

		if (nl == NULL)
			return -1;
		i = (size_t)(nl - text) + 1;
	}
	start = i;
	for (; i < start + (size_t)(col - 1); i++)
		if (i >= len || text[i] == '\n' || (unsigned char)text[i] >= 0x80 || text[i] == '\t')
			return -1;
	return (long)i;
}

/* Past the end of the line at off (its '\n' included, or len). */
static size_t
line_end(const char *text, size_t len, size_t off)
{
	const char *nl = memchr(text + off, '\n', len - off);

	return nl != NULL ? (size_t)(nl - text) + 1 : len;
}

/*
 * The key `key` at off, then optional blanks and ':': the offset past the
 * ':' and the blanks after it, or -1.
 */
static long
after_key(const char *text, size_t len, size_t off, const char *key)
{
	size_t k = strlen(key);

	if (off + k > len || memcmp(text + off, key, k) != 0)
		return -1;
	for (off += k; off < len && text[off] == ' '; off++)
		;
	if (off >= len || text[off] != ':')
		return -1;
	for (off++; off < len && text[off] == ' '; off++)
		;
	return (long)off;
}

/*
 * The one-line scalar at off: "..." without escapes, '...' without an
 * embedded quote, or plain.  Its text into buf, its end (past a closing
 * quote) into *end.  -1 when it is anything else.
 */
static int
scalar_at(const char *text, size_t len, size_t off, char *buf, size_t buflen, size_t *end)
{
	size_t i = off, n;
	char q = off < len ? text[off] : '\0';

	if (q == '"' || q == '\'') {
		for (i = off + 1; i < len && text[i] != q; i++)
			if (text[i] == '\n' || text[i] == '\\')
				return -1;
		if (i >= len)
			return -1;
		n = i - off - 1;
		*end = i + 1;
		off++;
	} else {
		/* a hash has ',' (ln=14,r=8): plain, it can only be in a block
		 * mapping, where the value ends at a blank */
		for (; i < len && strchr(" \n\r\t", text[i]) == NULL; i++)
			;
		n = i - off;
		*end = i;
	}
	if (n == 0 || n >= buflen)
		return -1;
	memcpy(buf, text + off, n);
	buf[n] = '\0';
	return 0;
}

static int
splice_cmp(const void *a, const void *b)
{
	const struct splice *x = a, *y = b;

	return x->off < y->off ? 1 : x->off > y->off ? -1 : 0;
}

int
ag_token_rotate_text(const char *text, size_t len, const struct ag_identity *id,
    const char *new_hash, time_t until, char **out, size_t *outlen, struct ag_err *err)
{
	struct splice sp[2];
	struct ag_token_hash h;
	struct ag_strbuf sb;
	char old[AG_TOKEN_HASH_MAX], when[32];
	long k, v, p;
	size_t vend, pos, i, nsp = 0, ls;

	*out = NULL;
	if (!id->has_token_hash || id->token_key_pos.line == 0)
		return ag_err_set(err, "identity '%s' has no token_hash to rotate (make one "
		    "with: agentgate token new %s)", id->name, id->name);
	if (id->token_val_pos.line != id->token_key_pos.line)
		return ag_err_set(err, "the token_hash of identity '%s' is not on one line "
		    "with its key", id->name);
	if ((k = offset_of(text, len, id->token_key_pos.line, id->token_key_pos.col)) < 0 ||
	    after_key(text, len, (size_t)k, "token_hash") < 0 ||
	    (v = offset_of(text, len, id->token_val_pos.line, id->token_val_pos.col)) < 0 ||
	    scalar_at(text, len, (size_t)v, old, sizeof(old), &vend) < 0)
		return ag_err_set(err, "the token_hash of identity '%s' is not written as one "
		    "plain or quoted value on its line", id->name);
	/* the value there is the hash the loader read for this identity */
	if (ag_token_hash_parse(old, &h, err) < 0 || memcmp(&h, &id->token_hash, sizeof(h)) != 0) {
		explicit_bzero(&h, sizeof(h));
		return ag_err_set(err, "the token_hash found at line %d of identity '%s' is "
		    "not the one the policy loads", id->token_val_pos.line, id->name);
	}
	explicit_bzero(&h, sizeof(h));
	ag_token_until_text(until, when, sizeof(when));

	/* the new value, quoted (a hash has '$': never plain in doubt) */
	sp[nsp].off = (size_t)v;
	sp[nsp].n = vend - (size_t)v;
	snprintf(sp[nsp].s, sizeof(sp[nsp].s), "\"%s\"", new_hash);
	nsp++;

	if (id->has_prev_token) {
		/* previous_token: { ... } on its line, replaced whole */
		const char *open, *close;

		if ((p = offset_of(text, len, id->prev_pos.line, id->prev_pos.col)) < 0 ||
		    (k = after_key(text, len, (size_t)p, "previous_token")) < 0 ||
		    text[k] != '{' ||
		    (close = memchr(text + k, '}', line_end(text, len, (size_t)k) - (size_t)k)) ==
		    NULL || ((open = memchr(text + k + 1, '{', (size_t)(close - text - k - 1))) !=
		    NULL))
			return ag_err_set(err, "the previous_token of identity '%s' is not one "
			    "{ hash: ..., until: ... } on its line", id->name);
		sp[nsp].off = (size_t)p;
		sp[nsp].n = (size_t)(close + 1 - (text + p));
		snprintf(sp[nsp].s, sizeof(sp[nsp].s), "previous_token: { hash: \"%s\", "
		    "until: \"%s\" }", old, when);
		nsp++;
	} else {
		/* what is before the key on its line says flow or block */
		ls = (size_t)offset_of(text, len, id->token_key_pos.line, 1);
		for (i = (size_t)offset_of(text, len, id->token_key_pos.line,
		    id->token_key_pos.col); i > ls && text[i - 1] == ' '; i--)
			;
		if (i > ls && (text[i - 1] == '{' || text[i - 1] == ',')) {
			sp[nsp].off = vend;
			sp[nsp].n = 0;
			snprintf(sp[nsp].s, sizeof(sp[nsp].s), ", previous_token: { hash: \"%s\", "
			    "until: \"%s\" }", old, when);
		} else {
			/* a block mapping: only "- " items and blanks before the key, and
			 * nothing but a comment after the value */
			for (pos = ls; pos < i; pos++)
				if (text[pos] != ' ' && text[pos] != '-')
					break;
			for (k = (long)vend; (size_t)k < len && text[k] == ' '; k++)
				;
			if (pos < i || ((size_t)k < len && text[k] != '\n' && text[k] != '#' &&
			    text[k] != '\r'))
				return ag_err_set(err, "the token_hash of identity '%s' is neither "
				    "in a flow mapping nor alone on its line", id->name);
			sp[nsp].off = line_end(text, len, vend);
			sp[nsp].n = 0;
			snprintf(sp[nsp].s, sizeof(sp[nsp].s), "%s%*sprevious_token: { hash: "
			    "\"%s\", until: \"%s\" }\n", sp[nsp].off == len && len > 0 &&
			    text[len - 1] != '\n' ? "\n" : "", id->token_key_pos.col - 1, "",
			    old, when);
		}
		nsp++;
	}
	explicit_bzero(old, sizeof(old));

	/* from the end, so the earlier offsets hold */
	qsort(sp, nsp, sizeof(sp[0]), splice_cmp);
	if (nsp == 2 && sp[1].off + sp[1].n > sp[0].off)
		return ag_err_set(err, "the token_hash and previous_token of identity '%s' "
		    "overlap", id->name);
	ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
	pos = 0;
	for (i = nsp; i-- > 0; ) {
		if (ag_strbuf_append(&sb, text + pos, sp[i].off - pos) < 0 ||
		    ag_strbuf_append(&sb, sp[i].s, strlen(sp[i].s)) < 0)
			goto oom;
		pos = sp[i].off + sp[i].n;
	}
	if (ag_strbuf_append(&sb, text + pos, len - pos) < 0 || ag_strbuf_append(&sb, "", 1) < 0)
		goto oom;
	*outlen = sb.len - 1;
	*out = sb.data;
	return 0;
oom:
	ag_strbuf_free(&sb);
	return ag_err_set(err, "out of memory, or the policy would grow past %d bytes",
	    AG_CONFIG_MAX_BYTES);
}

/* The fields a rotation leaves alone, equal in a and b. */
static int
same_but_token(const struct ag_identity *a, const struct ag_identity *b)
{
	size_t i;

	if (strcmp(a->name, b->name) != 0 || a->keys.n != b->keys.n ||
	    a->has_token != b->has_token ||
	    memcmp(a->token_sha256, b->token_sha256, sizeof(a->token_sha256)) != 0 ||
	    strcmp(a->profile_name, b->profile_name) != 0 || a->nfrom != b->nfrom ||
	    a->has_expires != b->has_expires || a->expires != b->expires ||
	    a->disabled != b->disabled)
		return 0;
	for (i = 0; i < a->keys.n; i++)
		if (strcmp(a->keys.v[i], b->keys.v[i]) != 0)
			return 0;
	return a->nfrom == 0 || memcmp(a->from, b->from, a->nfrom * sizeof(*a->from)) == 0;
}

int
ag_token_rotate_check(const struct ag_config *before, const struct ag_config *after,
    const char *name, const char *new_hash, time_t until, struct ag_err *err)
{
	struct ag_token_hash nh;
	size_t i;

	if (before->nidentities != after->nidentities || before->nprofiles != after->nprofiles ||
	    before->nusers != after->nusers || before->nupstreams != after->nupstreams)
		return ag_err_set(err, "the edited policy has other entries than before");
	if (ag_token_hash_parse(new_hash, &nh, err) < 0)
		return -1;
	for (i = 0; i < before->nidentities; i++) {
		const struct ag_identity *a = &before->identities[i], *b = &after->identities[i];
		int ok;

		if (!same_but_token(a, b))
			return ag_err_set(err, "the edit would change identity '%s' beyond its "
			    "token", a->name);
		if (strcmp(a->name, name) != 0) {
			ok = a->has_token_hash == b->has_token_hash &&
			    memcmp(&a->token_hash, &b->token_hash, sizeof(a->token_hash)) == 0 &&
			    a->has_prev_token == b->has_prev_token &&
			    memcmp(&a->prev_token_hash, &b->prev_token_hash,
			    sizeof(a->prev_token_hash)) == 0 && a->prev_until == b->prev_until;
			if (!ok)
				return ag_err_set(err, "the edit would change the token of "
				    "identity '%s'", a->name);
			continue;
		}
		ok = b->has_token_hash && memcmp(&b->token_hash, &nh, sizeof(nh)) == 0 &&
		    b->has_prev_token && memcmp(&b->prev_token_hash, &a->token_hash,
		    sizeof(a->token_hash)) == 0 && b->prev_until == until;
		if (!ok) {
			explicit_bzero(&nh, sizeof(nh));
			return ag_err_set(err, "the edited policy does not give identity '%s' the "
			    "new token with the old one until the set time", name);
		}
	}
	explicit_bzero(&nh, sizeof(nh));
	return 0;
}
