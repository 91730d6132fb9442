/*
 * castplay.h - a session recording (asciicast v2) shown line by line as
 * `agentgate replay` shows it: the gateway's lines ("m" markers) at the
 * left edge, what the programs printed as plain text behind a margin,
 * without escape sequences (or, raw, filtered: record/termfilter.h).
 * `agentgate replay` feeds it a finished file, `agentgate join` a live
 * one as it grows.
 */
#ifndef AG_CASTPLAY_H
#define AG_CASTPLAY_H

#include <stddef.h>

#include "common/strbuf.h"
#include "record/termfilter.h"

#define AG_CASTPLAY_LINE_MAX	(8 * 1024 * 1024)	/* one event; the gateway's are far smaller */

struct ag_castplay {
	const char		*cmd;		/* "replay", "join": its messages' prefix */
	const char		*file;
	unsigned long		 line;
	double			 speed, idle_limit;	/* idle_limit < 0: none */
	int			 transcript;	/* no pauses */
	int			 raw;		/* the terminal as drawn */
	int			 tty;		/* standard output is a terminal */
	double			 last;		/* the previous event's time */
	struct ag_termfilter	 tf;
	struct ag_strbuf	 out;
	char			*held;		/* an "o" not yet shown */
	size_t			 heldlen;
	int			 at_bol;	/* transcript: at a line's start */
};

/* Ready to show file (named in messages) for cmd; the caller then sets
 * speed, idle_limit, transcript as it wants them.  Free with _end. */
void	ag_castplay_init(struct ag_castplay *p, const char *cmd, const char *file, int raw);
/* One line of the file (the header first), n bytes: 0, or 1 after saying
 * on stderr what is wrong with it (or that the output failed). */
int	ag_castplay_line(struct ag_castplay *p, const char *line, size_t n);
/* Show an output still held back to learn whether a marker copies it: a
 * live recording has no next line yet.  0, or 1 (the output failed). */
int	ag_castplay_flush(struct ag_castplay *p);
/* What is still held, the terminal left as found; frees.  rc, or 1 when
 * the file had no line. */
int	ag_castplay_end(struct ag_castplay *p, int rc);

#endif
