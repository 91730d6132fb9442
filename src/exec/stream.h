/*
 * stream.h - one output stream of a running command, as every relay feeds
 * it: the runner's pipes (runner.c), the PTY (pty.c) and an upstream's
 * channel (upstream/channel.c).  A relay keeps only its transport (what it
 * polls, how it reads, when it writes); what happens to the bytes is here,
 * once, in this order:
 *
 *   cap       the first max_output bytes pass; the rest is counted and
 *             dropped, so the program never blocks on a full pipe
 *   redact    through the profile's redactor (redact.h), a line at a time
 *   record    what the redactor let through, which is what the client is
 *             shown, is the recording's "o" event (recording.h): a
 *             recording never holds a secret the client saw masked
 *   deliver   written at once by the stream's writer (a blocking relay), or
 *             queued for the relay to write when the client can take it
 *   notice    at the cap, once: the held partial line goes (redacted), then
 *             "agentgate: output truncated: NAME exceeded N bytes; the rest
 *             is discarded", to this stream or to another (the pipes' stdout
 *             says it on stderr), its lines ended with \r\n on a raw
 *             terminal and \n elsewhere
 *
 * A stream may also watch for words the command wrote (watch: the kernel's
 * refusals as programs print them, "Permission denied"): the first one
 * seen, in what was taken whether shown or not, is remembered (watched),
 * so that the gateway can say why after the command.  A watching stream
 * is not bypassed until a word is seen.
 *
 * A secret split across two takes is judged whole (the redactor holds a
 * partial line).  On a terminal a held partial line goes when the program
 * pauses (ag_stream_pause), as a prompt must show; elsewhere only at its
 * newline or the stream's end.
 *
 * A queue that cannot grow (a redactor that made one read huge, beyond
 * AG_STREAM_QUEUE_MAX) cuts the stream as the cap does, without a notice:
 * nothing unjudged is shown.  A writer that fails (the client is gone) cuts
 * it too and sets gone.
 */
#ifndef AG_STREAM_H
#define AG_STREAM_H

#include <stddef.h>

#include "common/err.h"
#include "common/strbuf.h"

struct ag_profile;
struct ag_rec;
struct ag_redact;

#define AG_STREAM_QUEUE_MAX	((size_t)4 * 1024 * 1024)

struct ag_stream_opts {
	const char		*name;		/* in the notice: "stdout", "stderr", ... */
	long long		 max_output;	/* bytes shown; 0 = unlimited */
	int			 tty;		/* a raw terminal: \r\n, and pauses show */
	const struct ag_profile	*redact;	/* its output.redact applies, or NULL */
	struct ag_rec		*rec;		/* what is shown is recorded here, or NULL */
	/* a recording that failed: called once, then the stream records no more */
	void			(*rec_failed)(void *arg, const struct ag_err *e);
	void			*rec_arg;
	/*
	 * The writer: 0, or -1 when the client is gone.  NULL: what is shown
	 * is queued (ag_stream_pending, ag_stream_flush).
	 */
	int			(*write)(void *arg, const char *p, size_t n);
	void			*write_arg;
	/* words to watch for (each under AG_STREAM_WATCH_MAX bytes), or NULL */
	const char *const	*watch;
};

#define AG_STREAM_WATCH_MAX	64

struct ag_stream {
	struct ag_stream_opts	 o;
	struct ag_redact	*rd;
	struct ag_stream	*notice_to;	/* where the truncation notice goes: NULL, here */
	struct ag_strbuf	 q;		/* queued for the client */
	size_t			 qoff;		/* of q, written already */
	unsigned long long	 bytes;		/* taken: what the command wrote */
	unsigned long long	 seen;		/* let through toward the cap */
	int			 cut;		/* nothing more is shown */
	int			 truncated;	/* cut at the cap or by a full queue */
	int			 gone;		/* the writer failed */
	int			 ended;
	int			 last;		/* the last byte shown, -1 none or unknown */
	int			 watched;	/* 1 + index in o.watch of the word seen, or 0 */
	char			 carry[AG_STREAM_WATCH_MAX];	/* the last bytes taken */
	size_t			 ncarry;
};

/*
 * Set s up (its redactor made now: a profile that redacts and a redactor
 * that cannot be made is an error, so that no output passes unjudged).
 * 0, or -1 with err.  ag_stream_free() releases what it holds.
 */
int	ag_stream_init(struct ag_stream *s, const struct ag_stream_opts *o, struct ag_err *err);
void	ag_stream_free(struct ag_stream *s);

/* n bytes the command wrote.  -1 when the writer failed (s->gone), else 0. */
int	ag_stream_take(struct ag_stream *s, const char *p, size_t n);
/* The program paused: on a terminal, a held partial line is shown. */
int	ag_stream_pause(struct ag_stream *s);
/* The stream ended: what the redactor holds is shown.  Once; idempotent. */
int	ag_stream_end(struct ag_stream *s);

/*
 * A relay that moves bytes itself (splice(2) from pipe to pipe): how many
 * may go past the stream now (0 when it must see them: a redactor, a
 * recording, a queue, the cap reached), and the count of those that went.
 */
size_t	ag_stream_bypass_room(const struct ag_stream *s);
void	ag_stream_bypassed(struct ag_stream *s, size_t n);

/* Queued and not yet written. */
size_t	ag_stream_pending(const struct ag_stream *s);
/* Write the queue to fd (non-blocking): 0 written or would block, -1 gone. */
int	ag_stream_flush(struct ag_stream *s, int fd);

#endif
