/*
 * castplay.c - a recording shown as replay shows it (castplay.h).
 *
 * The transcript keeps what the programs printed apart from the gateway's
 * own lines: output is its text alone, every line of it behind a margin,
 * and the gateway's lines stand at the left edge (in reverse video on a
 * terminal, which output can no longer produce).
 */
#include "agconfig.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/castplay.h"
#include "common/strbuf.h"
#include "record/termfilter.h"

#define OUT_MAX		(32 * 1024 * 1024)

static int
flush_out(struct ag_castplay *p)
{
	size_t off = 0;

	while (off < p->out.len) {
		ssize_t w = write(STDOUT_FILENO, p->out.data + off, p->out.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "agentgate: %s: write: %s\n", p->cmd, strerror(errno));
			return -1;
		}
		off += (size_t)w;
	}
	ag_strbuf_reset(&p->out);
	return 0;
}

static void
pause_for(struct ag_castplay *p, double t)
{
	double d = t - p->last;
	struct timespec ts;

	p->last = t;
	if (p->transcript || !(d > 0))
		return;
	if (p->idle_limit >= 0 && d > p->idle_limit)
		d = p->idle_limit;
	d /= p->speed;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Transcript: text (already plain) under "| ", line by line. */
static int
transcript_text(struct ag_castplay *p, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p->at_bol && ag_strbuf_addstr(&p->out, "           | ") < 0)
			return -1;
		p->at_bol = s[i] == '\n';
		if (ag_strbuf_addch(&p->out, s[i]) < 0)
			return -1;
	}
	return 0;
}

static int
show_output(struct ag_castplay *p, const char *s, size_t n)
{
	struct ag_strbuf clean;
	int rc;

	if (p->raw)
		return ag_termfilter_feed(&p->tf, s, n, &p->out);
	ag_strbuf_init(&clean, OUT_MAX);
	rc = ag_termfilter_feed(&p->tf, s, n, &clean);
	if (rc == 0)
		rc = transcript_text(p, clean.data != NULL ? clean.data : "", clean.len);
	ag_strbuf_free(&clean);
	return rc;
}

/* A marker: one of the gateway's lines, which output cannot write. */
static int
show_marker(struct ag_castplay *p, double t, const char *s, size_t n)
{
	struct ag_termfilter plain;
	struct ag_strbuf label;
	int rc;

	/* written by the gateway already safe; a file from elsewhere may not be */
	ag_termfilter_init(&plain, AG_TERMFILTER_PLAIN);
	ag_strbuf_init(&label, OUT_MAX);
	rc = ag_termfilter_feed(&plain, s, n, &label);
	if (rc == 0 && !p->raw) {
		/* on a terminal a long output line wraps to the left edge: there
		 * reverse video, which output cannot produce, tells them apart */
		if (!p->at_bol)
			rc = ag_strbuf_addch(&p->out, '\n');
		if (rc == 0)
			rc = ag_strbuf_printf(&p->out, "%s[%8.2f] %.*s%s\n", p->tty ? "\033[7m" : "",
			    t, (int)label.len, label.data != NULL ? label.data : "",
			    p->tty ? "\033[0m" : "");
		p->at_bol = 1;
	} else if (rc == 0)
		rc = ag_strbuf_printf(&p->out, "\033[0m\033[7m %.*s \033[0m\r\n", (int)label.len,
		    label.data != NULL ? label.data : "");
	ag_strbuf_free(&label);
	return rc;
}

/*
 * The gateway writes each of its lines twice: as output, for players that
 * ignore markers, and right after as a marker.  An "o" directly followed
 * by an "m" is that copy (output is never followed by a marker directly):
 * the line is shown once, as the marker.
 */
static int
event(struct ag_castplay *p, double t, const char *code, const char *data, size_t len)
{
	int rc = 0;

	if (strcmp(code, "m") == 0) {
		free(p->held);
		p->held = NULL;
		p->heldlen = 0;
		pause_for(p, t);
		return show_marker(p, t, data, len);
	}
	if (p->held != NULL) {
		rc = show_output(p, p->held, p->heldlen);
		free(p->held);
		p->held = NULL;
		p->heldlen = 0;
		if (rc < 0 || flush_out(p) < 0)
			return -1;
	}
	if (strcmp(code, "o") != 0)
		return 0;	/* input and resizes are not played */
	pause_for(p, t);
	if ((p->held = malloc(len + 1)) == NULL)
		return -1;
	memcpy(p->held, data, len);
	p->heldlen = len;
	return 0;
}

static int
bad(struct ag_castplay *p, const char *what)
{
	fprintf(stderr, "agentgate: %s: %s:%lu: %s\n", p->cmd, p->file, p->line, what);
	return 1;
}

int
ag_castplay_line(struct ag_castplay *p, const char *buf, size_t n)
{
	json_object *o, *v;
	int rc = 0;

	p->line++;
	if (n > AG_CASTPLAY_LINE_MAX)
		return bad(p, "a line over 8 MiB: not a recording of agentgate's");
	if (n == 0 || (n == 1 && (buf[0] == '\n' || buf[0] == '\0')))
		return 0;
	if ((o = json_tokener_parse(buf)) == NULL)
		return bad(p, "not JSON");
	if (p->line == 1) {
		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, "version", &v) ||
		    json_object_get_int(v) != 2)
			rc = bad(p, "not an asciicast v2 header");
		json_object_put(o);
		return rc;
	}
	if (!json_object_is_type(o, json_type_array) || json_object_array_length(o) != 3 ||
	    !json_object_is_type(json_object_array_get_idx(o, 1), json_type_string) ||
	    !json_object_is_type(json_object_array_get_idx(o, 2), json_type_string) ||
	    (!json_object_is_type(json_object_array_get_idx(o, 0), json_type_double) &&
	     !json_object_is_type(json_object_array_get_idx(o, 0), json_type_int)) ||
	    !isfinite(json_object_get_double(json_object_array_get_idx(o, 0)))) {
		json_object_put(o);
		return bad(p, "not an event [time, code, data]");
	}
	v = json_object_array_get_idx(o, 2);
	if (event(p, json_object_get_double(json_object_array_get_idx(o, 0)),
	    json_object_get_string(json_object_array_get_idx(o, 1)),
	    json_object_get_string(v), (size_t)json_object_get_string_len(v)) < 0 ||
	    (p->held == NULL && flush_out(p) < 0))
		rc = bad(p, "out of memory, or the output failed");
	json_object_put(o);
	return rc;
}

int
ag_castplay_flush(struct ag_castplay *p)
{
	int rc = 0;

	if (p->held != NULL) {
		rc = show_output(p, p->held, p->heldlen);
		free(p->held);
		p->held = NULL;
		p->heldlen = 0;
	}
	return rc < 0 || flush_out(p) < 0 ? 1 : 0;
}

int
ag_castplay_end(struct ag_castplay *p, int rc)
{
	if (rc == 0 && p->line == 0)
		rc = bad(p, "empty: not a recording");
	if (p->held != NULL) {
		(void)show_output(p, p->held, p->heldlen);
		free(p->held);
		p->held = NULL;
	}
	if (p->raw)
		(void)ag_strbuf_addstr(&p->out, ag_termfilter_reset);
	else if (!p->at_bol)
		(void)ag_strbuf_addch(&p->out, '\n');
	(void)flush_out(p);
	ag_strbuf_free(&p->out);
	return rc;
}

void
ag_castplay_init(struct ag_castplay *p, const char *cmd, const char *file, int raw)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->file = file;
	p->raw = raw;
	p->speed = 1;
	p->idle_limit = 2;
	p->at_bol = 1;
	ag_termfilter_init(&p->tf, raw ? AG_TERMFILTER_DISPLAY : AG_TERMFILTER_PLAIN);
	p->tty = isatty(STDOUT_FILENO);
	ag_strbuf_init(&p->out, OUT_MAX);
}
