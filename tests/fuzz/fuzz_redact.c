/*
 * fuzz_redact.c - libFuzzer target for output redaction (src/exec/redact.c):
 * any output must be judged without a crash, a leak or a hang, and the
 * result must not depend on where the stream was split (the first byte
 * chooses the split; the whole and the split stream must come out the
 * same).  The same bytes as a command line go through the audit masking.
 */
#include "agconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "exec/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
collect(void *ctx, const char *p, size_t n)
{
	return ag_strbuf_append(ctx, p, n);
}

static void
judge(const char *p, size_t n, size_t cut, struct ag_strbuf *out)
{
	static char pat[] = "x[0-9]+y";
	static char *pats[] = { pat };
	struct ag_profile prof;
	struct ag_redact *r;
	struct ag_err err;

	memset(&prof, 0, sizeof(prof));
	prof.redact = 1;
	prof.redact_patterns.v = pats;
	prof.redact_patterns.n = 1;
	if ((r = ag_redact_new(&prof, &err)) == NULL)
		abort();
	if (ag_redact_feed(r, p, cut, collect, out) < 0 ||
	    ag_redact_feed(r, p + cut, n - cut, collect, out) < 0 ||
	    ag_redact_end(r, collect, out) < 0)
		abort();
	ag_redact_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_strbuf whole, split;
	const char *p = (const char *)data + 1;
	size_t n, cut, mlen;
	char *masked;

	if (size < 1)
		return 0;
	n = size - 1;
	cut = n > 0 ? data[0] % (n + 1) : 0;
	ag_strbuf_init(&whole, 0);
	ag_strbuf_init(&split, 0);
	judge(p, n, 0, &whole);
	judge(p, n, cut, &split);
	if (whole.len != split.len || (whole.len > 0 && memcmp(whole.data, split.data, whole.len)))
		abort();
	ag_strbuf_free(&whole);
	ag_strbuf_free(&split);
	if ((masked = ag_redact_command(p, n, &mlen)) == NULL)
		abort();
	free(masked);
	return 0;
}
