/*
 * termfilter.h - a recording's output made safe for the terminal that
 * replays it.
 *
 * A recording holds whatever the agent's programs printed, and a player
 * (asciinema play) hands it to the admin's terminal as is: OSC 52 writes
 * the admin's clipboard, OSC 0/2 the window title, OSC 8 makes links,
 * DCS/APC/PM/SOS strings and C1 controls reach terminal features, and
 * some CSI sequences (DSR, DA, window reports) make the terminal answer
 * into the admin's input.  The filter passes what draws the screen (text,
 * CR/LF/TAB/BS, cursor movement, erasing, SGR, modes) and drops the rest;
 * a sequence split between two writes is followed across them.
 *
 * A string never terminated would hide everything after it from the
 * replay: one is given up after AG_TERMFILTER_STR_MAX characters.
 *
 * AG_TERMFILTER_PLAIN drops every escape sequence, CR and BS too: the text
 * alone, for a transcript; the strings (OSC, DCS, ...) are shown there as
 * <ESC]...> with their controls as \xNN, so an admin reading it sees what
 * a program tried to send the terminal.
 */
#ifndef AG_TERMFILTER_H
#define AG_TERMFILTER_H

#include <stddef.h>

#include "common/strbuf.h"

#define AG_TERMFILTER_DISPLAY	0
#define AG_TERMFILTER_PLAIN	1
#define AG_TERMFILTER_STR_MAX	4096	/* characters of an OSC/DCS/... string */
#define AG_TERMFILTER_STR_SHOWN	256	/* ... of them a transcript shows */

struct ag_termfilter {
	int		mode;
	int		state;
	char		seq[40];	/* the CSI sequence so far */
	size_t		seqlen;
	size_t		strn;		/* characters of the string so far */
	unsigned char	carry[4];	/* a UTF-8 sequence cut by the write */
	size_t		ncarry;
};

void	ag_termfilter_init(struct ag_termfilter *f, int mode);
/* Append to out what of the n bytes at s may reach the terminal; -1 when out of memory. */
int	ag_termfilter_feed(struct ag_termfilter *f, const char *s, size_t n, struct ag_strbuf *out);
/* What leaves a terminal as a replay found it: attributes, cursor, and the
 * modes a recording may have turned on (mouse, bracketed paste, alternate
 * screen). */
extern const char ag_termfilter_reset[];

#endif
