/*
 * fuzz_termfilter.c - libFuzzer target for the replay filter
 * (src/record/termfilter.c): any output must be filtered without a crash,
 * a leak or a hang; the result must not depend on where the stream was
 * split (the first byte chooses the split); what the display filter lets
 * through never starts an OSC, DCS, APC, PM or SOS string nor holds a C1
 * control, and the plain filter lets no ESC through at all.
 */
#include "agconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/utf8.h"
#include "record/termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
run(int mode, const char *p, size_t n, size_t cut, struct ag_strbuf *out)
{
	struct ag_termfilter f;

	ag_termfilter_init(&f, mode);
	if (ag_termfilter_feed(&f, p, cut, out) < 0 ||
	    ag_termfilter_feed(&f, p + cut, n - cut, out) < 0)
		abort();
}

static void
check(int mode, const struct ag_strbuf *o)
{
	const unsigned char *u = (const unsigned char *)o->data;
	size_t i = 0;

	while (i < o->len) {
		unsigned cp;
		size_t k = ag_utf8_seq(u + i, o->len - i, &cp);

		if (k == 0)
			abort();	/* not UTF-8 */
		if (cp >= 0x80 && cp <= 0x9f)
			abort();	/* C1 */
		if (cp == 0x1b && (mode == AG_TERMFILTER_PLAIN || (i + 1 < o->len &&
		    strchr("]P_^X", u[i + 1]) != NULL)))
			abort();
		i += k;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int mode;

	if (size < 1)
		return 0;
	for (mode = AG_TERMFILTER_DISPLAY; mode <= AG_TERMFILTER_PLAIN; mode++) {
		const char *p = (const char *)data + 1;
		size_t n = size - 1, cut = n > 0 ? data[0] % (n + 1) : 0;
		struct ag_strbuf whole, split;

		ag_strbuf_init(&whole, 1 << 24);
		ag_strbuf_init(&split, 1 << 24);
		run(mode, p, n, 0, &whole);
		run(mode, p, n, cut, &split);
		if (whole.len != split.len || (whole.len > 0 && memcmp(whole.data, split.data, whole.len) != 0))
			abort();
		check(mode, &whole);
		ag_strbuf_free(&whole);
		ag_strbuf_free(&split);
	}
	return 0;
}
