/* transfer.c - file-transfer requests as verdicts; see transfer.h */
#include "agconfig.h"

#include <stdio.h>
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

int
ag_policy_transfer(const struct ag_profile *p, const char *req, size_t len,
    struct ag_xfer *x, struct ag_decision *d)
{
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
			    "(file_transfer.sftp); use commands such as cat instead", p->name);
			return 1;
		}
		x->readonly = p->sftp == AG_TRANSFER_READ;
		snprintf(d->reason, sizeof(d->reason), "%s", x->readonly ?
		    "sftp read-only, confined" : "sftp, confined");
		d->verdict = AG_ALLOW;
		return 1;
	}
	if (!(k == AG_XFER_SCP ? p->scp_legacy : p->rsync)) {
		snprintf(d->reason, sizeof(d->reason), "%s file transfer is off for profile %s "
		    "(file_transfer.%s); use sftp or commands such as cat instead", name,
		    p->name, name);
		return 1;
	}
	if (!plain_words(req, len)) {
		snprintf(d->reason, sizeof(d->reason), "%s request refused: only plain words "
		    "are accepted (no quotes, variables or operators)", name);
		return 1;
	}
	snprintf(d->reason, sizeof(d->reason), "file transfer, confined");
	d->verdict = AG_ALLOW;
	return 1;
}
