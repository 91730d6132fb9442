/* pamid.c - see pamid.h */
#include "agconfig.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "pamid.h"

#define CERT_SUFFIX "-cert-v01@openssh.com"

/*
 * What a certificate carries before its serial: after the type string and
 * the nonce come exactly the fields of the plain public key, encoded as in
 * the plain key's blob (PROTOCOL.certkeys).  So the certified key's blob is
 * string(plain type) followed by those fields copied byte for byte.
 */
static const struct {
	const char	*cert;
	const char	*plain;
	int		 nfields;
} cert_types[] = {
	{ "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", 1 },
	{ "ssh-rsa-cert-v01@openssh.com", "ssh-rsa", 2 },
	{ "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256", 2 },
	{ "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384", 2 },
	{ "ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521", 2 },
	{ "ssh-dss-cert-v01@openssh.com", "ssh-dss", 4 },
	{ "sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", 2 },
	{ "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
	  "sk-ecdsa-sha2-nistp256@openssh.com", 3 },
};

int
ag_pamid_sha256(const void *buf, size_t len, unsigned char out[32])
{
	unsigned int n = 0;

	if (EVP_Digest(buf, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32)
		return -1;
	return 0;
}

static int
b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/*
 * Strict base64 (no whitespace, padding only at the end) through
 * libcrypto's decoder, which is lenient about both; the strictness is ours.
 */
static unsigned char *
b64_decode(const char *s, size_t len, size_t *outlen)
{
	size_t i, pad = 0;
	unsigned char *out;
	int n;

	if (len == 0 || len % 4 != 0 || len > AG_PAMID_MAX_LINE)
		return NULL;
	if (s[len - 1] == '=')
		pad++;
	if (s[len - 2] == '=')
		pad++;
	for (i = 0; i < len - pad; i++)
		if (!b64_char((unsigned char)s[i]))
			return NULL;
	if ((out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
	if (n < 0 || (size_t)n < pad) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)n - pad;
	return out;
}

/* Read one SSH wire string at *p; advances *p.  0 ok, -1 when truncated. */
static int
wire_string(const unsigned char **p, const unsigned char *end,
    const unsigned char **s, size_t *slen)
{
	uint32_t n;

	if ((size_t)(end - *p) < 4)
		return -1;
	n = (uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 |
	    (uint32_t)(*p)[2] << 8 | (uint32_t)(*p)[3];
	if ((size_t)(end - *p) - 4 < n)
		return -1;
	*s = *p + 4;
	*slen = n;
	*p += 4 + (size_t)n;
	return 0;
}

/* The certified key's blob out of a certificate blob; NULL when malformed. */
static unsigned char *
cert_key_blob(const unsigned char *blob, size_t len, const char *plain, int nfields,
    size_t *outlen)
{
	const unsigned char *p = blob, *end = blob + len, *s, *fields;
	size_t slen, plen = strlen(plain), flen, total;
	unsigned char *out;
	int i;

	if (wire_string(&p, end, &s, &slen) < 0 ||	/* type, checked by caller */
	    wire_string(&p, end, &s, &slen) < 0)	/* nonce */
		return NULL;
	fields = p;
	for (i = 0; i < nfields; i++)
		if (wire_string(&p, end, &s, &slen) < 0)
			return NULL;
	flen = (size_t)(p - fields);
	total = 4 + plen + flen;
	if ((out = malloc(total)) == NULL)
		return NULL;
	out[0] = (unsigned char)(plen >> 24);
	out[1] = (unsigned char)(plen >> 16);
	out[2] = (unsigned char)(plen >> 8);
	out[3] = (unsigned char)plen;
	memcpy(out + 4, plain, plen);
	memcpy(out + 4 + plen, fields, flen);
	*outlen = total;
	return out;
}

/* Fields after the type string in the plain key types we know. */
static const struct {
	const char	*type;
	int		 nfields;
} plain_types[] = {
	{ "ssh-ed25519", 1 },
	{ "ssh-rsa", 2 },
	{ "ecdsa-sha2-nistp256", 2 },
	{ "ecdsa-sha2-nistp384", 2 },
	{ "ecdsa-sha2-nistp521", 2 },
	{ "ssh-dss", 4 },
	{ "sk-ssh-ed25519@openssh.com", 2 },
	{ "sk-ecdsa-sha2-nistp256@openssh.com", 3 },
};

/* A known plain key must be exactly its fields: nothing missing, nothing after. */
static int
plain_shape_ok(const char *type, size_t typelen, const unsigned char *p,
    const unsigned char *end)
{
	const unsigned char *s;
	size_t slen, i;
	int f;

	for (i = 0; i < sizeof(plain_types) / sizeof(plain_types[0]); i++) {
		if (strlen(plain_types[i].type) != typelen ||
		    memcmp(plain_types[i].type, type, typelen) != 0)
			continue;
		for (f = 0; f < plain_types[i].nfields; f++)
			if (wire_string(&p, end, &s, &slen) < 0)
				return 0;
		return p == end;
	}
	return 1;	/* a type we do not know: compared as an opaque blob */
}

int
ag_pamid_key_decode(const char *type, size_t typelen, const char *b64, size_t b64len,
    unsigned char **blob, size_t *bloblen,
    unsigned char **keyblob, size_t *keybloblen, struct ag_err *err)
{
	const unsigned char *p, *s;
	size_t slen, i, sfx = sizeof(CERT_SUFFIX) - 1;
	unsigned char *b;

	*blob = NULL;
	*bloblen = 0;
	if (keyblob != NULL) {
		*keyblob = NULL;
		*keybloblen = 0;
	}
	if (typelen == 0 || typelen > 128)
		return ag_err_set(err, "bad key type");
	if ((b = b64_decode(b64, b64len, bloblen)) == NULL)
		return ag_err_set(err, "key is not valid base64");
	/* The blob names its own type; a mismatch means a damaged record. */
	p = b;
	if (wire_string(&p, b + *bloblen, &s, &slen) < 0 || slen != typelen ||
	    memcmp(s, type, typelen) != 0) {
		free(b);
		return ag_err_set(err, "key blob does not match its type '%.*s'",
		    (int)typelen, type);
	}
	if (!plain_shape_ok(type, typelen, p, b + *bloblen)) {
		free(b);
		return ag_err_set(err, "key blob is truncated or has trailing data");
	}
	*blob = b;
	if (keyblob == NULL || typelen <= sfx ||
	    memcmp(type + typelen - sfx, CERT_SUFFIX, sfx) != 0)
		return 0;
	for (i = 0; i < sizeof(cert_types) / sizeof(cert_types[0]); i++) {
		if (strlen(cert_types[i].cert) != typelen ||
		    memcmp(cert_types[i].cert, type, typelen) != 0)
			continue;
		*keyblob = cert_key_blob(b, *bloblen, cert_types[i].plain,
		    cert_types[i].nfields, keybloblen);
		if (*keyblob == NULL) {
			free(b);
			*blob = NULL;
			return ag_err_set(err, "certificate is truncated");
		}
		break;
	}
	return 0;
}

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
		if (ag_pamid_key_decode(key, (size_t)(sp - key), sp + 1,
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
	if (ag_pamid_key_decode(type, typelen, b64, b64len, &blob, &bloblen,
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
ag_pamid_by_token(const struct ag_config *cfg, const char *token, size_t len,
    const struct ag_identity **idp)
{
	unsigned char md[32];
	const struct ag_identity *found = NULL;
	int ambiguous = 0;
	size_t i;

	*idp = NULL;
	if (token == NULL || len == 0 || len > AG_PAMID_MAX_TOKEN)
		return AG_PAMID_NONE;
	if (ag_pamid_sha256(token, len, md) < 0)
		return AG_PAMID_NONE;
	/* Every identity is compared, so timing says nothing about which. */
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];
		int eq = CRYPTO_memcmp(md, id->token_sha256, sizeof(md)) == 0;

		if (eq && id->has_token) {
			if (found != NULL)
				ambiguous = 1;
			else
				found = id;
		}
	}
	OPENSSL_cleanse(md, sizeof(md));
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
ag_pamid_account(const struct ag_identity *id, time_t now, const char *rhost)
{
	if (id->disabled)
		return AG_PAMID_DISABLED;
	if (id->has_expires && now >= id->expires)
		return AG_PAMID_EXPIRED;
	if (id->nfrom > 0 && !ag_pamid_from_match(id->from, id->nfrom, rhost))
		return AG_PAMID_FROM;
	return AG_PAMID_OK;
}
