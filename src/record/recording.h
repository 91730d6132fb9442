/*
 * recording.h - asciicast v2 recording of a PTY session.
 *
 * One file per session, DIR/SESSION.cast, created 0600 (0640 when the
 * gateway holds its group, privsep.h: `agentgate join` reads it as it
 * grows) with
 * O_CREAT|O_EXCL|O_NOFOLLOW in a directory that must not be group- or
 * world-writable (the audit directory's rule).  First line, the header:
 *   {"version":2,"width":W,"height":H,"timestamp":T,
 *    "env":{"TERM":..,"SHELL":..},"agentgate_session":ID,
 *    "agentgate_identity":NAME,"agentgate_user":ACCOUNT}
 * (the last two when known: agentgate replay --list shows them)
 * then one event per line, [seconds-since-open, code, data]:
 *   "o" output, "r" resize ("COLSxROWS"), "i" input (only when asked to:
 *   keystrokes carry passwords and tokens), "m" a marker: the gateway's
 *   own lines (the command it ran, a refusal), which a command's output,
 *   being "o" alone, can neither write nor erase (agentgate replay shows
 *   them apart).
 * Strings are encoded by json-c; output that is not UTF-8 becomes U+FFFD,
 * and a multibyte character split across two reads is kept whole.
 *
 * Events are buffered in memory and written at least once a second
 * (ag_rec_tick), when the buffer grows past AG_REC_BUF, and by
 * ag_rec_flush()/ag_rec_close().  Every function returns -1 with err when
 * the file could not be written; the recording is then dead (later calls
 * fail at once) and the caller follows audit.required.
 */
#ifndef AG_RECORDING_H
#define AG_RECORDING_H

#include <stddef.h>

#include "common/err.h"

#define AG_REC_BUF		(64 * 1024)	/* buffered bytes before a write */
#define AG_REC_FLUSH_MS		1000		/* at most this long in memory */
#define AG_REC_SUFFIX		".cast"
#define AG_REC_MARKER_MAX	4096		/* bytes of a marker's label shown */

struct ag_rec;

struct ag_rec_info {
	const char	*dir;		/* gateway.recordings, absolute */
	const char	*session;	/* the session id: [A-Za-z0-9_-], the file's name */
	const char	*identity;	/* the caller's identity, or NULL */
	const char	*user;		/* the account, or NULL */
	unsigned	 width;		/* columns at the start */
	unsigned	 height;	/* rows */
	const char	*term;		/* TERM, or NULL */
	const char	*shell;		/* SHELL, or NULL */
	int		 input;		/* gateway.recordings_input */
};

/* Create the file and write the header.  NULL with err on failure. */
struct ag_rec *ag_rec_open(const struct ag_rec_info *info, struct ag_err *err);

int	ag_rec_output(struct ag_rec *r, const void *buf, size_t len, struct ag_err *err);
/* A no-op returning 0 unless info->input was set. */
int	ag_rec_input(struct ag_rec *r, const void *buf, size_t len, struct ag_err *err);
/* An "m" event: len bytes of label, shown safe (utf8.h), cut at AG_REC_MARKER_MAX. */
int	ag_rec_marker(struct ag_rec *r, const char *label, size_t len, struct ag_err *err);
/* An "r" event, unless the size is the one last recorded. */
int	ag_rec_resize(struct ag_rec *r, unsigned cols, unsigned rows, struct ag_err *err);
/* Write what is buffered if the oldest of it is AG_REC_FLUSH_MS old. */
int	ag_rec_tick(struct ag_rec *r, struct ag_err *err);
/* Milliseconds until ag_rec_tick has work (-1: nothing buffered). */
long	ag_rec_next_tick_ms(const struct ag_rec *r);
int	ag_rec_flush(struct ag_rec *r, struct ag_err *err);
int	ag_rec_input_enabled(const struct ag_rec *r);
/* The file's path (for the session_end audit record). */
const char *ag_rec_path(const struct ag_rec *r);
/* Flush, close and free; returns -1 if the last flush failed.  NULL is fine. */
int	ag_rec_close(struct ag_rec *r, struct ag_err *err);

#endif
