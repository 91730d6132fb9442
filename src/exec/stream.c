/* stream.c - one output stream: cap, redact, record, deliver, notice; see stream.h */
#include "agconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/redact.h"
#include "exec/stream.h"
#include "record/recording.h"

int
ag_stream_init(struct ag_stream *s, const struct ag_stream_opts *o, struct ag_err *err)
{
	struct ag_err e;

	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->last = -1;
	ag_strbuf_init(&s->q, AG_STREAM_QUEUE_MAX);
	ag_err_clear(&e);
	/* no redactor, no output: a secret must not pass because one failed */
	if (o->redact != NULL && (s->rd = ag_redact_new(o->redact, &e)) == NULL &&
	    e.msg[0] != '\0') {
		*err = e;
		return -1;
	}
	return 0;
}

void
ag_stream_free(struct ag_stream *s)
{
	ag_redact_free(s->rd);
	s->rd = NULL;
	ag_strbuf_free(&s->q);
	s->qoff = 0;
}

/* To the client, by the writer or into the queue; then, being shown, recorded. */
static int
deliver(struct ag_stream *s, const char *p, size_t n)
{
	struct ag_err e;

	if (n == 0 || s->gone)
		return s->gone ? -1 : 0;
	if (s->o.write != NULL) {
		if (s->o.write(s->o.write_arg, p, n) < 0) {
			s->gone = s->cut = 1;
			return -1;
		}
	} else if (ag_strbuf_append(&s->q, p, n) < 0) {
		/* what the redactor let through does not fit: the rest is not shown */
		s->cut = s->truncated = 1;
		return -1;
	}
	s->last = (unsigned char)p[n - 1];
	ag_err_clear(&e);
	if (s->o.rec != NULL && ag_rec_output(s->o.rec, p, n, &e) < 0) {
		s->o.rec = NULL;
		if (s->o.rec_failed != NULL)
			s->o.rec_failed(s->o.rec_arg, &e);
	}
	return 0;
}

static int
emit(void *ctx, const char *p, size_t n)
{
	return deliver(ctx, p, n);
}

static int
show(struct ag_stream *s, const char *p, size_t n)
{
	if (s->rd != NULL)
		return ag_redact_feed(s->rd, p, n, emit, s);
	return deliver(s, p, n);
}

/* At the cap: what is held goes, and the notice, once. */
static void
cut_at_cap(struct ag_stream *s)
{
	struct ag_stream *to = s->notice_to != NULL ? s->notice_to : s;
	const char *eol = to->o.tty ? "\r\n" : "\n";
	char note[256];
	int m;

	(void)ag_stream_end(s);
	s->cut = s->truncated = 1;
	/* on a line of its own, after a partial line of output */
	m = snprintf(note, sizeof(note), "%sagentgate: output truncated: %s exceeded %lld bytes;"
	    " the rest is discarded%s", s->last >= 0 && s->last != '\n' ? eol : "", s->o.name,
	    s->o.max_output, eol);
	if (m > 0)
		(void)deliver(to, note, (size_t)m < sizeof(note) ? (size_t)m : sizeof(note) - 1);
}

/* The watched words in p, or across the end of the last take and p. */
static void
watch(struct ag_stream *s, const char *p, size_t n)
{
	char win[2 * AG_STREAM_WATCH_MAX];
	size_t i, head = n < AG_STREAM_WATCH_MAX ? n : AG_STREAM_WATCH_MAX, keep;

	if (s->o.watch == NULL || s->watched)
		return;
	memcpy(win, s->carry, s->ncarry);
	memcpy(win + s->ncarry, p, head);
	for (i = 0; s->o.watch[i] != NULL && !s->watched; i++) {
		size_t wl = strlen(s->o.watch[i]);

		if (memmem(win, s->ncarry + head, s->o.watch[i], wl) != NULL ||
		    memmem(p, n, s->o.watch[i], wl) != NULL)
			s->watched = (int)i + 1;
	}
	/* the last AG_STREAM_WATCH_MAX - 1 bytes of what was taken, for the next */
	keep = AG_STREAM_WATCH_MAX - 1;
	if (n >= keep) {
		memcpy(s->carry, p + n - keep, keep);
		s->ncarry = keep;
	} else {
		size_t old = s->ncarry + n > keep ? keep - n : s->ncarry;

		memmove(s->carry, s->carry + s->ncarry - old, old);
		memcpy(s->carry + old, p, n);
		s->ncarry = old + n;
	}
}

int
ag_stream_take(struct ag_stream *s, const char *p, size_t n)
{
	unsigned long long cap = (unsigned long long)s->o.max_output;
	size_t keep = n;

	watch(s, p, n);
	s->bytes += n;
	if (s->cut || s->ended)
		return s->gone ? -1 : 0;	/* read on and dropped: the program never blocks */
	if (s->o.max_output > 0 && s->seen + n > cap)
		keep = (size_t)(cap - s->seen);
	s->seen += keep;
	if (keep > 0 && show(s, p, keep) < 0 && !s->cut)
		s->cut = s->truncated = 1;	/* the redactor could not keep up */
	if (keep < n && !s->cut)
		cut_at_cap(s);
	return s->gone ? -1 : 0;
}

int
ag_stream_pause(struct ag_stream *s)
{
	if (!s->o.tty || s->rd == NULL || s->cut || s->ended)
		return s->gone ? -1 : 0;
	(void)ag_redact_pause(s->rd, emit, s);
	return s->gone ? -1 : 0;
}

int
ag_stream_end(struct ag_stream *s)
{
	if (s->ended)
		return s->gone ? -1 : 0;
	s->ended = 1;
	if (s->rd != NULL && !s->cut)
		(void)ag_redact_end(s->rd, emit, s);
	return s->gone ? -1 : 0;
}

size_t
ag_stream_bypass_room(const struct ag_stream *s)
{
	if (s->rd != NULL || s->o.rec != NULL || s->o.write == NULL || s->cut || s->ended ||
	    (s->o.watch != NULL && !s->watched))
		return 0;
	if (s->o.max_output > 0)
		return (size_t)((unsigned long long)s->o.max_output - s->seen);
	return SIZE_MAX;
}

void
ag_stream_bypassed(struct ag_stream *s, size_t n)
{
	s->bytes += n;
	s->seen += n;
	if (n > 0)
		s->last = -1;	/* not seen: the notice cannot tell */
}

size_t
ag_stream_pending(const struct ag_stream *s)
{
	return s->q.len - s->qoff;
}

int
ag_stream_flush(struct ag_stream *s, int fd)
{
	while (s->qoff < s->q.len) {
		ssize_t w = write(fd, s->q.data + s->qoff, s->q.len - s->qoff);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			/* the client is gone: so is what waited for it */
			s->gone = s->cut = 1;
			ag_strbuf_reset(&s->q);
			s->qoff = 0;
			return -1;
		}
		s->qoff += (size_t)w;
	}
	if (s->qoff == s->q.len) {
		ag_strbuf_reset(&s->q);
		s->qoff = 0;
	} else if (s->qoff >= s->q.len - s->qoff) {
		/* moved no more bytes than were written since: linear overall */
		memmove(s->q.data, s->q.data + s->qoff, s->q.len - s->qoff);
		s->q.len -= s->qoff;
		s->q.data[s->q.len] = '\0';
		s->qoff = 0;
	}
	return 0;
}
