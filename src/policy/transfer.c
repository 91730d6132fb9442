/* transfer.c - file-transfer requests as verdicts; see transfer.h */
#include "agconfig.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/transfer.h"

const char *
ag_xfer_name(enum ag_xfer_kind k)
{
	switch (k) {
	case AG_XFER_SFTP:	return "sftp";
	case AG_XFER_SCP:	return "scp";
	case AG_XFER_RSYNC:	return "rsync";
	default:		return "";
	}
}

/* The word at *p (blanks skipped first); *p is moved past it. */
static size_t
next_word(const char **p, const char *end, const char **word)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*word = s;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\n')
		s++;
	*p = s;
	return (size_t)(s - *word);
}

#define AG_XFER_REQ_MAX	8192	/* an scp request, unbundled, to judge */

static int
word_is(const char *w, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

static enum ag_xfer_kind
kind_of(const char *req, size_t len)
{
	const char *p = req, *end = req + len, *w, *base;
	size_t n = next_word(&p, end, &w), bn;

	if (n == 0)
		return AG_XFER_NONE;
	for (base = w + n; base > w && base[-1] != '/'; base--)
		;
	bn = (size_t)(w + n - base);
	if (word_is(base, bn, "sftp-server") || word_is(w, n, "internal-sftp"))
		return AG_XFER_SFTP;
	if (word_is(base, bn, "scp")) {
		/* the remote end of scp is "scp [-options] -t|-f ..." */
		while ((n = next_word(&p, end, &w)) > 0)
			if (n > 1 && w[0] == '-' && w[1] != '-' &&
			    (memchr(w, 't', n) != NULL || memchr(w, 'f', n) != NULL))
				return AG_XFER_SCP;
		return AG_XFER_NONE;
	}
	if (word_is(base, bn, "rsync")) {
		while ((n = next_word(&p, end, &w)) > 0)
			if (word_is(w, n, "--server"))
				return AG_XFER_RSYNC;
	}
	return AG_XFER_NONE;
}

static int
plain_words(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '\0' || strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789 ._/+=:,@%-", s[i]) == NULL)
			return 0;
	return 1;
}

/*
 * scp's remote end takes its options bundled (`scp -pf FILE` is a
 * download): a deny rule names `-f`, so each bundle is judged as the
 * separate options scp's getopt reads.  Options that take an argument end
 * a bundle (the rest is the argument).  0, or -1 when out is too small.
 */
static int
unbundle_scp(const char *req, size_t len, char *out, size_t outsz)
{
	const char *p = req, *end = req + len, *w;
	size_t n, o = 0, i;
	int first = 1;

	while ((n = next_word(&p, end, &w)) > 0) {
		if (first || n < 3 || w[0] != '-' || w[1] == '-') {
			if (o + n + 2 > outsz)
				return -1;
			if (o > 0)
				out[o++] = ' ';
			memcpy(out + o, w, n);
			o += n;
			first = 0;
			continue;
		}
		for (i = 1; i < n; i++) {
			if (o + 4 > outsz)
				return -1;
			out[o++] = ' ';
			out[o++] = '-';
			out[o++] = w[i];
			if (strchr("lciPSoFJ", w[i]) != NULL && i + 1 < n) {
				if (o + (n - i - 1) + 2 > outsz)
					return -1;
				out[o++] = ' ';
				memcpy(out + o, w + i + 1, n - i - 1);
				o += n - i - 1;
				break;
			}
		}
	}
	out[o] = '\0';
	return 0;
}

/* rsync's daemon mode over ssh: what it sends is chosen inside its own
 * protocol (and --config names its rules), where no deny rule sees it. */
static int
rsync_daemon(const char *req, size_t len)
{
	const char *p = req, *end = req + len, *w;
	size_t n;

	while ((n = next_word(&p, end, &w)) > 0)
		if (word_is(w, n, "--daemon") || (n >= 8 && memcmp(w, "--config", 8) == 0))
			return 1;
	return 0;
}

/* The words after the program in req match rule r's argv, one by one. */
static int
argv_is(const struct ag_rule *r, const char *req, size_t len)
{
	const char *p = req, *end = req + len, *w;
	char word[AG_XFER_REQ_MAX];
	size_t n, i;

	(void)next_word(&p, end, &w);
	for (i = 0; (n = next_word(&p, end, &w)) > 0; i++) {
		if (i >= r->argv.n || n >= sizeof(word))
			return 0;
		memcpy(word, w, n);
		word[n] = '\0';
		if (fnmatch(r->argv.v[i], word, 0) != 0)
			return 0;
	}
	return i == r->argv.n;
}

/* 1 when an allow rule of p names cat: a refusal may point at it. */
static int
lists_cat(const struct ag_profile *p)
{
	size_t i;

	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].base != NULL && strcmp(p->allow[i].base, "cat") == 0)
			return 1;
	return 0;
}

/* 1 when every allow rule of p for prog (there is one at least) has argv. */
static int
has_exact(const struct ag_profile *p, const char *prog)
{
	size_t i, n = 0;

	for (i = 0; i < p->nallow; i++) {
		if (p->allow[i].base == NULL || strcmp(p->allow[i].base, prog) != 0)
			continue;
		if (!p->allow[i].has_argv)
			return 0;
		n++;
	}
	return n > 0;
}

/* p's allow rules for prog, copied (the caller frees); NULL when out of
 * memory. */
static struct ag_rule *
exact_rules(const struct ag_profile *p, const char *prog, size_t *n)
{
	struct ag_rule *v;
	size_t i;

	*n = 0;
	if ((v = calloc(p->nallow, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].base != NULL && strcmp(p->allow[i].base, prog) == 0)
			v[(*n)++] = p->allow[i];
	return v;
}

/*
 * A deny always wins, for a transfer as for any line: the request judged
 * as the command it is by a view of the profile that allows the transfer's
 * own program (file_transfer said it may run) and keeps every deny rule,
 * so `deny: [{command: rsync, args: ["--sender"]}]` refuses a pull.  sftp
 * is no command line: a deny rule naming sftp-server (or internal-sftp)
 * refuses it whole.  1 when a deny rule refused (d filled), else 0.
 */
static int
denied_by_rule(const struct ag_policy_ctx *ctx, enum ag_xfer_kind k, const char *req,
    size_t len, struct ag_decision *d)
{
	const struct ag_profile *p = ctx->profile;
	struct ag_profile view;
	struct ag_policy_ctx vctx;
	struct ag_decision vd;
	struct ag_rule allow, *exact;
	char prog[8], flat[AG_XFER_REQ_MAX];
	size_t i, nexact = 0;
	int rc;

	if (k == AG_XFER_SFTP) {
		for (i = 0; i < p->ndeny; i++) {
			const struct ag_rule *r = &p->deny[i];

			if (r->base != NULL && (strcmp(r->base, "sftp-server") == 0 ||
			    strcmp(r->base, "internal-sftp") == 0) &&
			    (ag_rule_is_plain(r) || (r->has_argv && argv_is(r, req, len)))) {
				if (r->id != NULL)
					snprintf(d->rule, sizeof(d->rule), "%s", r->id);
				else
					snprintf(d->rule, sizeof(d->rule), "profiles.%s.deny[%zu]",
					    p->name, i);
				snprintf(d->reason, sizeof(d->reason), "sftp is denied by %s",
				    r->label != NULL ? r->label : d->rule);
				d->verdict = AG_DENY;
				return 1;
			}
		}
		return 0;
	}
	if (k == AG_XFER_RSYNC && rsync_daemon(req, len)) {
		snprintf(d->rule, sizeof(d->rule), "file_transfer");
		snprintf(d->reason, sizeof(d->reason), "rsync's daemon mode over ssh is refused: "
		    "what it transfers is chosen inside its protocol, where the profile's rules "
		    "cannot see it; use rsync without '::'");
		d->verdict = AG_DENY;
		return 1;
	}
	if (p->ndeny == 0 && !has_exact(p, k == AG_XFER_SCP ? "scp" : "rsync"))
		return 0;
	if (k == AG_XFER_SCP) {
		if (unbundle_scp(req, len, flat, sizeof(flat)) < 0) {
			snprintf(d->rule, sizeof(d->rule), "file_transfer");
			snprintf(d->reason, sizeof(d->reason), "scp request too long to judge");
			d->verdict = AG_DENY;
			return 1;
		}
		req = flat;
		len = strlen(flat);
	}
	memset(&allow, 0, sizeof(allow));
	snprintf(prog, sizeof(prog), "%s", k == AG_XFER_SCP ? "scp" : "rsync");
	allow.command = prog;
	allow.base = allow.command;
	view = *p;
	/* exact forms (argv) the profile gives the program are the only
	 * requests it may make, as at the prompt */
	exact = NULL;
	if (has_exact(p, prog)) {
		if ((exact = exact_rules(p, prog, &nexact)) == NULL) {
			snprintf(d->rule, sizeof(d->rule), "internal");
			snprintf(d->reason, sizeof(d->reason), "out of memory while judging "
			    "the %s request", prog);
			d->verdict = AG_DENY;
			return 1;
		}
		view.allow = exact;
		view.nallow = nexact;
	} else {
		view.allow = &allow;
		view.nallow = 1;
	}
	view.unknown = AG_UNKNOWN_DENY;
	view.validator = NULL;
	vctx = *ctx;
	vctx.profile = &view;
	memset(&vd, 0, sizeof(vd));
	rc = ag_policy_check(&vctx, req, len, &vd);
	if (rc == 0 && vd.verdict == AG_ALLOW && exact != NULL)
		snprintf(d->rule, sizeof(d->rule), "%s", vd.rule);	/* the form it matched */
	free(exact);
	if (rc < 0 || vd.verdict != AG_ALLOW) {
		d->verdict = AG_DENY;
		snprintf(d->rule, sizeof(d->rule), "%s", vd.rule[0] ? vd.rule : "file_transfer");
		snprintf(d->reason, sizeof(d->reason), "%s", vd.reason[0] ? vd.reason :
		    "refused by the profile's deny rules");
		ag_decision_free(&vd);
		return 1;
	}
	ag_decision_free(&vd);
	return 0;
}

int
ag_policy_transfer(const struct ag_policy_ctx *ctx, const char *req, size_t len,
    struct ag_xfer *x, struct ag_decision *d)
{
	const struct ag_profile *p = ctx->profile;
	enum ag_xfer_kind k = kind_of(req, len);
	const char *name = ag_xfer_name(k);

	if (k == AG_XFER_NONE)
		return 0;
	memset(x, 0, sizeof(*x));
	memset(d, 0, sizeof(*d));
	x->kind = k;
	snprintf(d->rule, sizeof(d->rule), "file_transfer");
	d->verdict = AG_DENY;
	if (k == AG_XFER_SFTP) {
		if (p->sftp == AG_TRANSFER_OFF) {
			snprintf(d->reason, sizeof(d->reason), "sftp is off for profile %s "
			    "(file_transfer.sftp)%s", p->name, lists_cat(p) ?
			    "; use commands such as cat instead" : "");
			return 1;
		}
		x->readonly = p->sftp == AG_TRANSFER_READ;
		if (denied_by_rule(ctx, k, req, len, d))
			return 1;
		snprintf(d->reason, sizeof(d->reason), "%s", x->readonly ?
		    "sftp read-only, confined" : "sftp, confined");
		d->verdict = AG_ALLOW;
		return 1;
	}
	if (!(k == AG_XFER_SCP ? p->scp_legacy : p->rsync)) {
		/* point only at what this profile offers instead */
		int sftp = p->sftp != AG_TRANSFER_OFF, cat = lists_cat(p);

		snprintf(d->reason, sizeof(d->reason), "%s file transfer is off for profile %s "
		    "(file_transfer.%s)%s%s%s%s", name, p->name, name,
		    sftp || cat ? "; use " : "", sftp ? "sftp" : "", sftp && cat ? " or " : "",
		    cat ? "commands such as cat instead" : sftp ? " instead" : "");
		return 1;
	}
	if (!plain_words(req, len)) {
		snprintf(d->reason, sizeof(d->reason), "%s request refused: only plain words "
		    "are accepted (no quotes, variables or operators)", name);
		return 1;
	}
	if (denied_by_rule(ctx, k, req, len, d))
		return 1;
	snprintf(d->reason, sizeof(d->reason), "file transfer, confined");
	d->verdict = AG_ALLOW;
	return 1;
}
