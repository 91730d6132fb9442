/* termfilter.c - a recording's output made safe to replay; see termfilter.h */
#include "agconfig.h"

#include <string.h>

#include "common/utf8.h"
#include "record/termfilter.h"

enum { GROUND, ESC, CSI, CSI_SKIP, STR, STR_ESC, CHARSET, SKIP_ONE };

const char ag_termfilter_reset[] = "\033[0m\033[?25h\033[?1000l\033[?1002l\033[?1003l"
    "\033[?1006l\033[?2004l\033[?1049l\r\n";

/* CSI finals that only draw: cursor, erase, insert/delete, scroll, SGR,
 * modes, margins, save/restore.  Not n (DSR), c (DA), t (window ops and
 * title reports), i (printer), x (DECREQTPARM), p (DECRQM with $): each
 * makes the terminal act beyond the screen or answer into its input. */
static const char draw_finals[] = "@ABCDEFGHIJKLMPSTXZ`abdefghlmrsu";

void
ag_termfilter_init(struct ag_termfilter *f, int mode)
{
	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->state = GROUND;
}

static int
put(struct ag_strbuf *out, const void *p, size_t n)
{
	return ag_strbuf_append(out, p, n);
}

/* A complete CSI sequence in f->seq: passed on when it only draws. */
static int
csi_done(struct ag_termfilter *f, struct ag_strbuf *out)
{
	char final = f->seq[f->seqlen - 1];
	char inter = f->seqlen >= 2 ? f->seq[f->seqlen - 2] : 0;

	if (f->mode == AG_TERMFILTER_PLAIN)
		return 0;
	if (inter >= 0x20 && inter <= 0x2f) {
		/* an intermediate: only DECSCUSR (cursor shape), "CSI n SP q" */
		if (!(inter == ' ' && final == 'q'))
			return 0;
	} else if (strchr(draw_finals, final) == NULL)
		return 0;
	return put(out, f->seq, f->seqlen);
}

static int
str_end(struct ag_termfilter *f, struct ag_strbuf *out)
{
	f->state = GROUND;
	return f->mode == AG_TERMFILTER_PLAIN ? put(out, ">", 1) : 0;
}

/* One code point (its UTF-8 bytes at p, len of them). */
static int
step(struct ag_termfilter *f, unsigned cp, const char *p, size_t len, struct ag_strbuf *out)
{
	switch (f->state) {
	case ESC:
		f->state = GROUND;
		switch (cp) {
		case '[':
			memcpy(f->seq, "\033[", 2);
			f->seqlen = 2;
			f->state = CSI;
			return 0;
		case ']': case 'P': case '_': case '^': case 'X':
			/* OSC, DCS, APC, PM, SOS: dropped (in a transcript, shown) */
			f->state = STR;
			f->strn = 0;
			return f->mode == AG_TERMFILTER_PLAIN ?
			    put(out, (char[]){ '<', 'E', 'S', 'C', (char)cp }, 5) : 0;
		case '(': case ')': case '*': case '+':
			f->seq[0] = (char)cp;
			f->state = CHARSET;
			return 0;
		case '#': case '%': case ' ':
			f->state = SKIP_ONE;	/* DEC screen tests, charset modes */
			return 0;
		case '7': case '8': case 'M': case 'D': case 'E': case '=': case '>':
			if (f->mode == AG_TERMFILTER_PLAIN)
				return 0;
			return put(out, (char[]){ '\033', (char)cp }, 2);
		default:
			return 0;	/* RIS and the rest: not the terminal's business */
		}
	case CHARSET:
		f->state = GROUND;
		/* ASCII and line drawing, which full-screen programs use */
		if (f->mode == AG_TERMFILTER_PLAIN || (cp != 'B' && cp != '0'))
			return 0;
		return put(out, (char[]){ '\033', f->seq[0], (char)cp }, 3);
	case SKIP_ONE:
		f->state = GROUND;
		return 0;
	case STR:
		/* BEL and ST (C1 too) end it, CAN and SUB abort it */
		if (cp == 0x07 || cp == 0x9c || cp == 0x18 || cp == 0x1a)
			return str_end(f, out);
		if (cp == 0x1b) {
			f->state = STR_ESC;
			return 0;
		}
		if (++f->strn > AG_TERMFILTER_STR_MAX) {
			/* never ended: what follows is shown, not swallowed */
			if (str_end(f, out) < 0)
				return -1;
			return step(f, cp, p, len, out);
		}
		if (f->mode != AG_TERMFILTER_PLAIN || f->strn > AG_TERMFILTER_STR_SHOWN + 1)
			return 0;
		if (f->strn == AG_TERMFILTER_STR_SHOWN + 1)
			return put(out, "...", 3);
		if (ag_utf8_unsafe(cp)) {
			char hex[12];
			int k = snprintf(hex, sizeof(hex), cp < 0x100 ? "\\x%02x" : "\\u%04x", cp);

			return put(out, hex, (size_t)k);
		}
		return put(out, p, len);
	case STR_ESC:
		/* ST ends the string; any other ESC ends it too and starts anew */
		if (str_end(f, out) < 0)
			return -1;
		if (cp == '\\')
			return 0;
		f->state = ESC;
		return step(f, cp, p, len, out);
	case CSI:
	case CSI_SKIP:
		if (cp >= 0x20 && cp <= 0x3f) {
			if (f->state == CSI && f->seqlen + 1 < sizeof(f->seq))
				f->seq[f->seqlen++] = (char)cp;
			else
				f->state = CSI_SKIP;	/* too long to be drawing */
			return 0;
		}
		if (cp >= 0x40 && cp <= 0x7e) {
			int rc = 0;

			if (f->state == CSI) {
				f->seq[f->seqlen++] = (char)cp;
				rc = csi_done(f, out);
			}
			f->state = GROUND;
			return rc;
		}
		/* anything else breaks the sequence off; the character counts */
		f->state = GROUND;
		return step(f, cp, p, len, out);
	}
	/* GROUND */
	if (cp == 0x1b) {
		f->state = ESC;
		return 0;
	}
	if (cp == '\n' || cp == '\t')
		return put(out, p, len);
	if (cp == '\r' || cp == '\b')
		return f->mode == AG_TERMFILTER_PLAIN ? 0 : put(out, p, len);
	if (ag_utf8_unsafe(cp))
		return 0;	/* other C0, DEL, C1 (CSI as U+009B too), bidi controls */
	return put(out, p, len);
}

int
ag_termfilter_feed(struct ag_termfilter *f, const char *s, size_t n, struct ag_strbuf *out)
{
	unsigned char buf[4096];
	size_t len, i, cut;

	/* a character the last write cut, then this write, a buffer at a time */
	while (f->ncarry > 0 || n > 0) {
		size_t take = n < sizeof(buf) - f->ncarry ? n : sizeof(buf) - f->ncarry;

		memcpy(buf, f->carry, f->ncarry);
		memcpy(buf + f->ncarry, s, take);
		len = f->ncarry + take;
		s += take;
		n -= take;
		cut = ag_utf8_cut(buf, len);	/* goes on with the next buffer or write */
		for (i = 0; i < len - cut; ) {
			unsigned cp;
			size_t k = ag_utf8_seq(buf + i, len - cut - i, &cp);

			if (k == 0) {
				if (f->state == GROUND && put(out, "\xef\xbf\xbd", 3) < 0)
					return -1;	/* U+FFFD */
				i++;
			} else if (step(f, cp, (const char *)buf + i, k, out) < 0)
				return -1;
			else
				i += k;
		}
		memcpy(f->carry, buf + len - cut, cut);
		f->ncarry = cut;
		if (n == 0)
			break;
	}
	return 0;
}
