/* pamid.c - see pamid.h */
#include "agconfig.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <nettle/memops.h>

#include "pamid.h"
#include "common/account.h"
#include "common/sha256.h"
#include "common/sshkey.h"

/* Does identity id list a key whose blob is a (or b, when not NULL)? */
static int
identity_has_key(const struct ag_identity *id, const unsigned char *a, size_t alen,
    const unsigned char *b, size_t blen)
{
	size_t k;

	for (k = 0; k < id->keys.n; k++) {
		const char *key = id->keys.v[k], *sp = strchr(key, ' '), *b64end;
		unsigned char *kb;
		size_t kblen;
		int hit;

		if (sp == NULL)
			continue;
		b64end = sp + 1 + strcspn(sp + 1, " ");
		if (ag_sshkey_decode(key, (size_t)(sp - key), sp + 1,
		    (size_t)(b64end - (sp + 1)), &kb, &kblen, NULL, NULL, NULL) < 0)
			continue;	/* the loader validates keys; never match junk */
		hit = (kblen == alen && memcmp(kb, a, alen) == 0) ||
		    (b != NULL && kblen == blen && memcmp(kb, b, blen) == 0);
		free(kb);
		if (hit)
			return 1;
	}
	return 0;
}

/* One SSH_AUTH_INFO_0 line; updates *found / *ambiguous. */
static int
match_line(const struct ag_config *cfg, const char *line, size_t len,
    const struct ag_identity **found, int *ambiguous, struct ag_err *err)
{
	const char *type, *b64, *sp;
	size_t typelen, b64len, i;
	unsigned char *blob = NULL, *keyblob = NULL;
	size_t bloblen, keybloblen;

	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
			return ag_err_set(err, "control character in line");
	if (len < 10 || memcmp(line, "publickey ", 10) != 0)
		return 0;	/* another method: says nothing about the key */
	type = line + 10;
	if ((sp = memchr(type, ' ', len - 10)) == NULL)
		return ag_err_set(err, "publickey line without a key");
	typelen = (size_t)(sp - type);
	b64 = sp + 1;
	b64len = len - (size_t)(b64 - line);
	if (memchr(b64, ' ', b64len) != NULL)
		return ag_err_set(err, "extra field on publickey line");
	if (ag_sshkey_decode(type, typelen, b64, b64len, &blob, &bloblen,
	    &keyblob, &keybloblen, err) < 0)
		return -1;
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (!identity_has_key(id, blob, bloblen, keyblob, keybloblen))
			continue;
		if (*found != NULL && *found != id)
			*ambiguous = 1;
		else
			*found = id;
	}
	free(blob);
	free(keyblob);
	return 0;
}

enum ag_pamid_match
ag_pamid_by_key(const struct ag_config *cfg, const char *info,
    const struct ag_identity **idp, struct ag_err *err)
{
	const struct ag_identity *found = NULL;
	const char *p, *nl;
	size_t len, lineno = 0;
	int ambiguous = 0;

	*idp = NULL;
	if (info == NULL || *info == '\0')
		return AG_PAMID_NONE;
	if ((len = strnlen(info, AG_PAMID_MAX_INFO + 1)) > AG_PAMID_MAX_INFO) {
		ag_err_set(err, "SSH_AUTH_INFO_0 is longer than %d bytes", AG_PAMID_MAX_INFO);
		return AG_PAMID_MALFORMED;
	}
	for (p = info; p < info + len; p = nl + 1) {
		size_t ll;

		lineno++;
		nl = memchr(p, '\n', (size_t)(info + len - p));
		if (nl == NULL)
			nl = info + len;
		ll = (size_t)(nl - p);
		if (ll > AG_PAMID_MAX_LINE) {
			ag_err_set(err, "SSH_AUTH_INFO_0 line %zu is too long", lineno);
			return AG_PAMID_MALFORMED;
		}
		if (ll == 0)
			continue;
		if (match_line(cfg, p, ll, &found, &ambiguous, err) < 0) {
			char why[AG_ERR_MSG_MAX];

			snprintf(why, sizeof(why), "%s", err != NULL ? err->msg : "");
			ag_err_set(err, "SSH_AUTH_INFO_0 line %zu: %s", lineno, why);
			return AG_PAMID_MALFORMED;
		}
	}
	if (ambiguous)
		return AG_PAMID_AMBIGUOUS;
	if (found == NULL)
		return AG_PAMID_NONE;
	*idp = found;
	return AG_PAMID_FOUND;
}

enum ag_pamid_match
ag_pamid_by_token(const struct ag_config *cfg, const char *token, size_t len, time_t now,
    const struct ag_identity **idp, enum ag_pamid_token *which)
{
	unsigned char md[32];
	const struct ag_identity *found = NULL;
	int ambiguous = 0;
	size_t i;

	*idp = NULL;
	*which = AG_PAMID_TOKEN_CURRENT;
	if (token == NULL || len == 0 || len > AG_PAMID_MAX_TOKEN)
		return AG_PAMID_NONE;
	/* a token from `agentgate token new` names its identity: one scrypt
	 * derivation, not one per identity (two while a rotation's previous
	 * token is kept) */
	{
		char name[256];
		const struct ag_identity *id;

		if (ag_token_name(token, len, name, sizeof(name)) == 0 &&
		    (id = ag_config_identity(cfg, name)) != NULL && id->has_token_hash) {
			*idp = id;
			if (ag_token_hash_verify(&id->token_hash, token, len))
				return AG_PAMID_FOUND;
			if (id->has_prev_token &&
			    ag_token_hash_verify(&id->prev_token_hash, token, len)) {
				*which = AG_PAMID_TOKEN_PREVIOUS;
				return now < id->prev_until ? AG_PAMID_FOUND : AG_PAMID_STALE;
			}
			*idp = NULL;
			return AG_PAMID_NONE;
		}
	}
	ag_sha256(token, len, md);
	/* Every identity is compared, so timing says nothing about which. */
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];
		int eq = memeql_sec(md, id->token_sha256, sizeof(md));

		if (eq && id->has_token) {
			if (found != NULL)
				ambiguous = 1;
			else
				found = id;
		}
	}
	explicit_bzero(md, sizeof(md));
	if (ambiguous)
		return AG_PAMID_AMBIGUOUS;
	if (found == NULL)
		return AG_PAMID_NONE;
	*idp = found;
	return AG_PAMID_FOUND;
}

static int
prefix_match(const unsigned char *a, const unsigned char *net, int prefix)
{
	int full = prefix / 8, rest = prefix % 8;
	unsigned char mask;

	if (memcmp(a, net, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (unsigned char)(0xff << (8 - rest));
	return (a[full] & mask) == (net[full] & mask);
}

int
ag_pamid_from_match(const struct ag_cidr *from, size_t n, const char *rhost)
{
	unsigned char a4[4], a6[16];
	int have4 = 0, have6 = 0;
	size_t i;

	if (rhost == NULL || *rhost == '\0')
		return 0;
	if (inet_pton(AF_INET, rhost, a4) == 1) {
		have4 = 1;
	} else if (inet_pton(AF_INET6, rhost, a6) == 1) {
		static const unsigned char mapped[12] =
		    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		have6 = 1;
		if (memcmp(a6, mapped, sizeof(mapped)) == 0) {
			memcpy(a4, a6 + 12, 4);
			have4 = 1;
		}
	} else {
		return 0;	/* a host name, or garbage: never trusted */
	}
	for (i = 0; i < n; i++) {
		if (from[i].family == AF_INET && have4 && from[i].prefix >= 0 &&
		    from[i].prefix <= 32 && prefix_match(a4, from[i].addr, from[i].prefix))
			return 1;
		if (from[i].family == AF_INET6 && have6 && from[i].prefix >= 0 &&
		    from[i].prefix <= 128 && prefix_match(a6, from[i].addr, from[i].prefix))
			return 1;
	}
	return 0;
}

enum ag_pamid_acct
ag_pamid_account(const struct ag_identity *id, time_t now, const char *user,
    const char *rhost)
{
	if (id->disabled)
		return AG_PAMID_DISABLED;
	if (id->has_expires && now >= id->expires)
		return AG_PAMID_EXPIRED;
	if (!ag_identity_allows_account(id, user))
		return AG_PAMID_WRONG_ACCOUNT;
	if (id->nfrom > 0 && !ag_pamid_from_match(id->from, id->nfrom, rhost))
		return AG_PAMID_FROM;
	return AG_PAMID_OK;
}
