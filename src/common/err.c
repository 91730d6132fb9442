/* err.c - see err.h */
#include "agconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/utf8.h"

void
ag_err_clear(struct ag_err *err)
{
	if (err == NULL)
		return;
	err->msg[0] = '\0';
	err->file[0] = '\0';
	err->line = err->col = 0;
	err->off = -1;
}

static void vset(struct ag_err *, const char *, va_list) AG_PRINTF(2, 0);

static void
vset(struct ag_err *err, const char *fmt, va_list ap)
{
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int
ag_err_set(struct ag_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	ag_err_clear(err);
	va_start(ap, fmt);
	vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

int
ag_err_at(struct ag_err *err, const char *file, int line, int col,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	ag_err_clear(err);
	if (file != NULL)
		snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

int
ag_err_off(struct ag_err *err, long off, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	ag_err_clear(err);
	err->off = off;
	va_start(ap, fmt);
	vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
ag_err_format(const struct ag_err *err, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (err->file[0] != '\0' && err->line > 0 && err->col > 0)
		snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line,
		    err->col, err->msg);
	else if (err->file[0] != '\0' && err->line > 0)
		snprintf(buf, len, "%s:%d: %s", err->file, err->line, err->msg);
	else if (err->file[0] != '\0')
		snprintf(buf, len, "%s: %s", err->file, err->msg);
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}

void
ag_err_print(FILE *fp, const struct ag_err *err)
{
	char buf[AG_ERR_MSG_MAX + 300], shown[4 * sizeof(buf) + 8];

	/* a message may quote what a caller chose: a path, a policy's text */
	fprintf(fp, "agentgate: %s\n", ag_utf8_shown(ag_err_format(err, buf, sizeof(buf)),
	    shown, sizeof(shown)));
}
