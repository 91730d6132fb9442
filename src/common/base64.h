/*
 * base64.h - standard base64 (RFC 4648, section 4), on nettle: SSH key
 * blobs and fingerprints, token hashes' salt and key.
 */
#ifndef AG_BASE64_H
#define AG_BASE64_H

#include <stddef.h>
#include <sys/types.h>

/* Characters for n bytes, padding included (the NUL not). */
#define AG_BASE64_LEN(n)	(((n) + 2) / 3 * 4)

/*
 * n bytes at in as base64 without the '=' padding, NUL-terminated, into
 * out (outsz at least AG_BASE64_LEN(n) + 1); returns the length, or -1
 * when out is too small.
 */
ssize_t	ag_base64_encode(const unsigned char *in, size_t n, char *out, size_t outsz);

/*
 * Decode len characters at s: only the standard alphabet, with or
 * without the padding (no spaces, no line breaks).  Returns the number of
 * bytes written to out, or -1 when s is not base64 or decodes to more
 * than outsz bytes.
 */
ssize_t	ag_base64_decode(const char *s, size_t len, unsigned char *out, size_t outsz);

#endif
