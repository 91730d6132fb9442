/*
 * utf8.c - UTF-8 validation and safe display (see utf8.h).
 */
#include "agconfig.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

size_t
ag_utf8_seq(const unsigned char *p, size_t n, unsigned *cp)
{
	size_t len, i;
	unsigned c;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

size_t
ag_utf8_cut(const unsigned char *p, size_t n)
{
	size_t back, need;

	for (back = 1; back <= 3 && back <= n; back++) {
		unsigned char b = p[n - back];

		if ((b & 0xc0) == 0x80)
			continue;	/* a continuation byte: the lead is further back */
		need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 :
		    b >= 0xf0 && b <= 0xf4 ? 4 : 0;
		return need > back ? back : 0;
	}
	return 0;
}

int
ag_utf8_valid(const char *s, size_t n)
{
	size_t i, k;
	unsigned cp;

	for (i = 0; i < n; i += k)
		if ((k = ag_utf8_seq((const unsigned char *)s + i, n - i, &cp)) == 0)
			return 0;
	return 1;
}

int
ag_utf8_unsafe(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c ||
	    cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069);
}

char *
ag_utf8_visible(const char *s, size_t n, size_t max, char *out, size_t outsz)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, j = 0, k;
	char esc[16];

	if (outsz == 0)
		return out;
	while (i < n) {
		unsigned cp = 0;
		const char *piece;
		size_t plen;

		k = ag_utf8_seq(p + i, n - i, &cp);
		if (k == 0) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			piece = esc;
			plen = strlen(esc);
			k = 1;
		} else if (cp == '\n') {
			piece = "\\n";
			plen = 2;
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", cp);
			piece = esc;
			plen = strlen(esc);
		} else if (ag_utf8_unsafe(cp)) {
			snprintf(esc, sizeof(esc), "\\u%04x", cp);
			piece = esc;
			plen = strlen(esc);
		} else {
			piece = s + i;
			plen = k;
		}
		/* room for this piece, and for "..." if more follows */
		if (i >= max || j + plen + 4 > outsz) {
			if (j + 4 <= outsz) {
				memcpy(out + j, "...", 3);
				j += 3;
			}
			break;
		}
		memcpy(out + j, piece, plen);
		j += plen;
		i += k;
	}
	out[j] = '\0';
	return out;
}

const char *
ag_utf8_shown(const char *s, char *out, size_t outsz)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return ag_utf8_visible(s != NULL ? s : "", n, n, out, outsz);
}

int
ag_utf8_vline(FILE *fp, const char *fmt, va_list ap)
{
	char line[8192], shown[4 * sizeof(line) + 8];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	return fprintf(fp, "%s\n", ag_utf8_visible(line, n, n, shown, sizeof(shown))) < 0 ?
	    -1 : 0;
}

int
ag_utf8_line(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ag_utf8_vline(fp, fmt, ap);
	va_end(ap);
	return rc;
}

char *
ag_utf8_json_safe(const char *js, size_t n, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)js;
	size_t i, j = 0, k;
	char *out;

	/* an escape (6 bytes) replaces at least one byte; and room for a
	 * newline the caller may add */
	if (n > (SIZE_MAX - 2) / 6 || (out = malloc(n * 6 + 2)) == NULL)
		return NULL;
	for (i = 0; i < n; i += k) {
		unsigned cp = 0;

		k = ag_utf8_seq(p + i, n - i, &cp);
		if (k == 0)
			k = 1;		/* json-c wrote it: not ours to judge */
		if (k > 1 || cp == 0x7f) {
			if (ag_utf8_unsafe(cp)) {
				j += (size_t)snprintf(out + j, 7, "\\u%04x", cp);
				continue;
			}
		}
		memcpy(out + j, js + i, k);
		j += k;
	}
	out[j] = '\0';
	*outlen = j;
	return out;
}

char *
ag_utf8_repair(const char *s, size_t n, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, j = 0, k;
	unsigned cp;
	char *out;

	if (n > (SIZE_MAX - 1) / 3 || (out = malloc(n * 3 + 1)) == NULL)
		return NULL;
	while (i < n) {
		if ((k = ag_utf8_seq(p + i, n - i, &cp)) == 0) {
			memcpy(out + j, "\xef\xbf\xbd", 3);
			j += 3;
			i++;
			continue;
		}
		memcpy(out + j, p + i, k);
		i += k;
		j += k;
	}
	out[j] = '\0';
	*outlen = j;
	return out;
}
