/* strbuf.c - see strbuf.h */
#include "agconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"

void
ag_strbuf_init(struct ag_strbuf *sb, size_t limit)
{
	sb->data = NULL;
	sb->len = sb->cap = 0;
	sb->limit = limit ? limit : AG_STRBUF_DEFAULT_LIMIT;
}

static int
grow(struct ag_strbuf *sb, size_t need)
{
	size_t ncap;
	char *p;

	if (sb->limit == 0)
		sb->limit = AG_STRBUF_DEFAULT_LIMIT;
	if (need > sb->limit - sb->len)
		return -1;
	if (sb->len + need + 1 <= sb->cap)
		return 0;
	ncap = sb->cap ? sb->cap : 64;
	while (ncap < sb->len + need + 1) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if ((p = realloc(sb->data, ncap)) == NULL)
		return -1;
	sb->data = p;
	sb->cap = ncap;
	return 0;
}

int
ag_strbuf_append(struct ag_strbuf *sb, const void *p, size_t n)
{
	if (grow(sb, n) == -1)
		return -1;
	if (n > 0)
		memcpy(sb->data + sb->len, p, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
	return 0;
}

int
ag_strbuf_addstr(struct ag_strbuf *sb, const char *s)
{
	return ag_strbuf_append(sb, s, strlen(s));
}

int
ag_strbuf_addch(struct ag_strbuf *sb, char c)
{
	return ag_strbuf_append(sb, &c, 1);
}

/* s in single quotes for a POSIX shell, every byte as it is: ' as '\'' */
int
ag_strbuf_squote(struct ag_strbuf *sb, const char *s, size_t n)
{
	const char *q, *end = s + n;

	if (ag_strbuf_addch(sb, '\'') < 0)
		return -1;
	while ((q = memchr(s, '\'', (size_t)(end - s))) != NULL) {
		if (ag_strbuf_append(sb, s, (size_t)(q - s)) < 0 ||
		    ag_strbuf_addstr(sb, "'\\''") < 0)
			return -1;
		s = q + 1;
	}
	if (ag_strbuf_append(sb, s, (size_t)(end - s)) < 0)
		return -1;
	return ag_strbuf_addch(sb, '\'');
}

int
ag_strbuf_squote_str(struct ag_strbuf *sb, const char *s)
{
	return ag_strbuf_squote(sb, s, strlen(s));
}

int
ag_strbuf_printf(struct ag_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow(sb, (size_t)n) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void
ag_strbuf_reset(struct ag_strbuf *sb)
{
	sb->len = 0;
	if (sb->data != NULL)
		sb->data[0] = '\0';
}

char *
ag_strbuf_detach(struct ag_strbuf *sb, size_t *lenp)
{
	char *p = sb->data;

	if (p == NULL)
		p = calloc(1, 1);
	if (lenp != NULL)
		*lenp = sb->len;
	sb->data = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void
ag_strbuf_free(struct ag_strbuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

int
ag_strbuf_read_fd(struct ag_strbuf *sb, int fd)
{
	char buf[16384];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (ag_strbuf_append(sb, buf, (size_t)n) < 0) {
			errno = sb->len + (size_t)n > sb->limit ? E2BIG : ENOMEM;
			return -1;
		}
	}
	return 0;
}
