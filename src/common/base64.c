/*
 * base64.c - standard base64 on nettle (base64.h).
 *
 * nettle's decoder skips white space and takes the padding anywhere the
 * final state allows; what this file accepts is checked first, so a key
 * or a token hash has exactly one spelling.
 */
#include "agconfig.h"

#include <string.h>

#include <nettle/base64.h>

#include "common/base64.h"

ssize_t
ag_base64_encode(const unsigned char *in, size_t n, char *out, size_t outsz)
{
	size_t k = AG_BASE64_LEN(n);

	if (n > (((size_t)-1) / 4 - 3) || k >= outsz)
		return -1;
	base64_encode_raw(out, n, in);
	while (k > 0 && out[k - 1] == '=')
		k--;
	out[k] = '\0';
	return (ssize_t)k;
}

static int
b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '+' || c == '/';
}

ssize_t
ag_base64_decode(const char *s, size_t len, unsigned char *out, size_t outsz)
{
	struct base64_decode_ctx ctx;
	size_t i, body = len, got = 0, pad = 0;

	if (len % 4 == 0 && len > 0 && s[len - 1] == '=')
		body -= len > 1 && s[len - 2] == '=' ? 2 : 1;
	else if (len % 4 == 1)
		return -1;	/* 6 bits cannot end a byte */
	for (i = 0; i < body; i++)
		if (!b64_char((unsigned char)s[i]))
			return -1;
	/* what the body decodes to: 3 bytes per 4 characters, then 1 or 2 */
	if (body / 4 * 3 + (body % 4 ? body % 4 - 1 : 0) > outsz)
		return -1;
	/*
	 * The padding is given to nettle whether or not s had it: it is what
	 * checks that the last character's unused bits are zero.  dst_length
	 * is only an output (the bound above is what keeps out safe).
	 */
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &got, out, body, s) ||
	    !base64_decode_update(&ctx, &pad, out + got, (4 - body % 4) % 4, "==") ||
	    !base64_decode_final(&ctx))
		return -1;
	return (ssize_t)(got + pad);
}
