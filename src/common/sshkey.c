/*
 * sshkey.c - SSH public keys and certificates as OpenSSH writes them (see
 * sshkey.h): one strict decoder for the policy loader and the PAM module.
 */
#include "agconfig.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/sha256.h"
#include "common/sshkey.h"

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

/* Fields after the type string in the plain key types we know; policy: a
 * type a policy file may name (DSA is gone from OpenSSH). */
static const struct {
	const char	*type;
	int		 nfields;
	int		 policy;
} plain_types[] = {
	{ "ssh-ed25519", 1, 1 },
	{ "ssh-rsa", 2, 1 },
	{ "ecdsa-sha2-nistp256", 2, 1 },
	{ "ecdsa-sha2-nistp384", 2, 1 },
	{ "ecdsa-sha2-nistp521", 2, 1 },
	{ "ssh-dss", 4, 0 },
	{ "sk-ssh-ed25519@openssh.com", 2, 1 },
	{ "sk-ecdsa-sha2-nistp256@openssh.com", 3, 1 },
};

int
ag_sshkey_policy_type(const char *type, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(plain_types) / sizeof(plain_types[0]); i++)
		if (plain_types[i].policy && strlen(plain_types[i].type) == len &&
		    memcmp(plain_types[i].type, type, len) == 0)
			return 1;
	return 0;
}

/* A key as authorized_keys writes it: padded base64, nothing else. */
static unsigned char *
b64_decode(const char *s, size_t len, size_t *outlen)
{
	unsigned char *out;
	ssize_t n;

	if (len == 0 || len % 4 != 0 || len > AG_SSHKEY_MAX_B64 ||
	    (out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	if ((n = ag_base64_decode(s, len, out, len / 4 * 3)) < 0) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)n;
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
ag_sshkey_decode(const char *type, size_t typelen, const char *b64, size_t b64len,
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


int
ag_sshkey_fingerprint(const char *auth_info, char *out, size_t outlen)
{
	const char *p = auth_info;
	unsigned char md[AG_SHA256_LEN], *blob = NULL;
	char b64[AG_BASE64_LEN(AG_SHA256_LEN) + 1];
	size_t bloblen = 0;

	if (outlen > 0)
		out[0] = '\0';
	while (p != NULL && *p != '\0') {
		const char *line = p, *type, *b;
		size_t tl, bl;

		p = strchr(p, '\n');
		if (p != NULL)
			p++;
		if (strncmp(line, "publickey ", 10) != 0)
			continue;
		type = line + 10;
		tl = strcspn(type, " \n");
		if (type[tl] != ' ')
			continue;
		b = type + tl + 1;
		bl = strcspn(b, " \n");
		if (ag_sshkey_decode(type, tl, b, bl, &blob, &bloblen, NULL, NULL, NULL) < 0)
			continue;
		ag_sha256(blob, bloblen, md);
		free(blob);
		(void)ag_base64_encode(md, sizeof(md), b64, sizeof(b64));
		if (snprintf(out, outlen, "SHA256:%s", b64) >= (int)outlen) {
			out[0] = '\0';
			return -1;
		}
		return 0;
	}
	return -1;
}
