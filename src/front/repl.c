/* repl.c - the REPL's line readers; see repl.h */
#include "agconfig.h"

#include <errno.h>
#include <histedit.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/target.h"
#include "exec/runner.h"
#include "front/repl.h"
#include "parse/shparse.h"
#include "common/lazylib.h"
#include "common/log.h"
#include "common/strbuf.h"

#define REPL_HISTORY_SIZE	1000

/* ---- reading without a terminal ----------------------------------------- */

/*
 * Whether input is complete is judged without the line's own newline: the
 * parser then reports a trailing backslash as a continuation, which is how
 * bash reads a script line by line.  That parse is the line's: the core
 * takes it (run_line) rather than parsing the line again; without the
 * newline only the span of the whole list ends a byte sooner.
 */
static enum ag_sh_status
parse_input(const struct ag_strbuf *acc, struct ag_core_parsed *p)
{
	size_t len = acc->len > 0 && acc->data[acc->len - 1] == '\n' ? acc->len - 1 : acc->len;

	p->tree = NULL;
	ag_err_clear(&p->err);
	p->status = ag_sh_parse(acc->data, len, &p->tree, &p->err);
	return p->status;
}

/*
 * Run the input, with its parse when there is one.  Input still
 * incomplete at the end of the script is the core's to parse as it
 * stands, its last newline with it, which changes what the refusal says
 * (`echo (` is then a syntax error): the one case of a second parse.
 */
static void
run_line(struct ag_core *core, const struct ag_strbuf *acc, struct ag_core_parsed *p, int *end)
{
	if (p != NULL && p->status == AG_SH_INCOMPLETE) {
		ag_sh_free(p->tree);
		p = NULL;
	}
	(void)ag_core_command_parsed(core, acc->data, acc->len, 0, p, end);
	if (p != NULL)
		ag_sh_free(p->tree);
}

struct reader {
	char	buf[65536];
	size_t	len;
	int	eof;
};

/* RD_TOOLONG: the rest of the line is still unread; RD_TOOLONG_END: the
 * over-long line has been consumed up to and including its newline;
 * RD_TICK: no input for TICK_S seconds, so that a waiting session sees a
 * revocation (a token's overlap ending, a policy written by configuration
 * management) without a line from the agent. */
enum rd { RD_LINE, RD_EOF, RD_IDLE, RD_HANGUP, RD_TOOLONG, RD_TOOLONG_END, RD_TICK };

#define TICK_S	2

/*
 * Append the next line (with its newline, if any) to acc.  Waits at most
 * idle seconds (0 = forever) for input: RD_IDLE after them, or RD_TICK
 * after tick seconds when that is sooner (0 = no tick).
 */
static enum rd
read_line(struct reader *rd, struct ag_strbuf *acc, long idle, long tick)
{
	for (;;) {
		char *nl = memchr(rd->buf, '\n', rd->len);
		size_t take = nl != NULL ? (size_t)(nl - rd->buf) + 1 : rd->len;
		struct pollfd pf[2];
		ssize_t n;
		int pr;

		if (nl != NULL || (rd->eof && rd->len > 0)) {
			int over = ag_strbuf_append(acc, rd->buf, take) < 0;

			memmove(rd->buf, rd->buf + take, rd->len - take);
			rd->len -= take;
			return over ? RD_TOOLONG_END : RD_LINE;
		}
		if (rd->eof)
			return RD_EOF;
		if (rd->len == sizeof(rd->buf)) {	/* a long line: move it along */
			if (ag_strbuf_append(acc, rd->buf, rd->len) < 0) {
				rd->len = 0;
				return RD_TOOLONG;
			}
			rd->len = 0;
		}
		if (ag_runner_terminating())
			return RD_HANGUP;
		pf[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = ag_runner_signal_fd(), .events = POLLIN };
		if (tick > 0 && (idle <= 0 || tick < idle))
			pr = poll(pf, 2, (int)(tick * 1000));
		else
			pr = poll(pf, 2, idle > 0 ? (int)(idle * 1000) : -1);
		if (pr < 0 && errno != EINTR)
			return RD_EOF;
		if (pr == 0)
			return tick > 0 && (idle <= 0 || tick < idle) ? RD_TICK : RD_IDLE;
		if (pr < 0 || (pf[1].revents & POLLIN)) {
			ag_runner_drain_signal_fd();
			continue;
		}
		n = read(STDIN_FILENO, rd->buf + rd->len, sizeof(rd->buf) - rd->len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			rd->eof = 1;
		else
			rd->len += (size_t)n;
	}
}

/* Skip the rest of an over-long command: everything up to the next newline. */
static void
skip_rest_of_line(struct reader *rd)
{
	struct ag_strbuf junk;

	ag_strbuf_init(&junk, sizeof(rd->buf));
	for (;;) {
		enum rd x;

		ag_strbuf_reset(&junk);
		x = read_line(rd, &junk, 0, 0);
		if (x != RD_TOOLONG)
			break;		/* the newline (or EOF) was reached */
	}
	ag_strbuf_free(&junk);
}

static int
loop_plain(struct ag_core *core)
{
	static struct reader rd;
	struct ag_strbuf acc;
	long idle = core->profile->limits.idle_timeout, waited = 0;
	int end = 0;

	ag_strbuf_init(&acc, AG_CORE_MAX_COMMAND);
	while (!end) {
		enum rd x = idle > 0 && waited >= idle ? RD_IDLE :
		    read_line(&rd, &acc, idle > 0 ? idle - waited : 0, TICK_S);
		struct ag_core_parsed parsed;

		if (x == RD_TICK) {
			waited += TICK_S;
			if (ag_core_revoked(core))
				break;
			continue;
		}
		waited = 0;
		if (x == RD_IDLE) {
			fprintf(stderr, "agentgate: no input for %ld s; closing the session\n", idle);
			break;
		}
		if (x == RD_HANGUP)
			break;
		if (x == RD_TOOLONG || x == RD_TOOLONG_END) {
			fprintf(stderr, "agentgate: command longer than %d bytes; discarded\n",
			    AG_CORE_MAX_COMMAND);
			core->sess.last_status = AG_STATUS_DENIED;
			ag_strbuf_reset(&acc);
			if (x == RD_TOOLONG)
				skip_rest_of_line(&rd);
			continue;
		}
		if (x == RD_EOF && acc.len == 0)
			break;
		if (parse_input(&acc, &parsed) == AG_SH_INCOMPLETE && x != RD_EOF) {
			ag_sh_free(parsed.tree);
			continue;	/* needs the next line */
		}
		run_line(core, &acc, &parsed, &end);
		ag_strbuf_reset(&acc);
		if (x == RD_EOF)
			break;
		if (ag_runner_terminating())
			break;
	}
	ag_strbuf_free(&acc);
	return core->sess.last_status;
}

/* ---- reading from a terminal -------------------------------------------- */

struct tty_state {
	struct ag_core	*core;
	int		 continuation;
	char		 prompt[4096 + 512];
};

/*
 * libedit (and the terminfo, libbsd and libmd behind it) serves only a
 * REPL on a terminal: it is loaded then (lazylib.h), and a REPL on a
 * terminal without it reads plain lines.
 */
static struct ag_lazylib edit_lib = { "libedit.so.2", 0, "" };

static struct {
	__typeof__(el_init)		*init;
	__typeof__(el_end)		*end;
	__typeof__(el_set)		*set;
	__typeof__(el_get)		*get;
	__typeof__(el_gets)		*gets;
	__typeof__(el_push)		*push;
	__typeof__(history_init)	*h_init;
	__typeof__(history_end)		*h_end;
	__typeof__(history)		*history;
} le;

static int
edit_load(void)
{
#define SYM(f, m)	AG_LAZYSYM(__typeof__(le), f, m)
	static const struct ag_lazysym sym[] = {
		SYM(el_init, init), SYM(el_end, end), SYM(el_set, set), SYM(el_get, get),
		SYM(el_gets, gets), SYM(el_push, push), SYM(history_init, h_init),
		SYM(history_end, h_end), SYM(history, history),
	};
#undef SYM

	if (ag_lazylib_load(&edit_lib, sym, sizeof(sym) / sizeof(sym[0]), &le) == 0)
		return 0;
	ag_log(LOG_WARNING, "line editing off: %s", edit_lib.why);
	return -1;
}

static char *
prompt_fn(EditLine *el)
{
	struct tty_state *ts = NULL;
	const struct ag_session *s;
	char cwd[4096 + 2];

	le.get(el, EL_CLIENTDATA, &ts);
	if (ts == NULL)
		return (char *)(uintptr_t)"$ ";
	if (ts->continuation)
		snprintf(ts->prompt, sizeof(ts->prompt), "> ");
	else {
		s = ag_target_session(ts->core);
		snprintf(ts->prompt, sizeof(ts->prompt), "%s@%s:%s$ ", s->user, s->host,
		    ag_session_tilde(s, s->cwd, cwd, sizeof(cwd)));
	}
	return ts->prompt;
}

static int
loop_tty(struct ag_core *core)
{
	struct tty_state ts;
	struct ag_strbuf acc;
	EditLine *el;
	History *hist;
	HistEvent ev;
	long idle = core->profile->limits.idle_timeout;
	int end = 0;

	memset(&ts, 0, sizeof(ts));
	ts.core = core;
	if (edit_load() < 0)
		return loop_plain(core);
	/* no el_source(): nothing is read from the agent's ~/.editrc */
	if ((el = le.init("agentgate", stdin, stdout, stderr)) == NULL)
		return loop_plain(core);
	if ((hist = le.h_init()) == NULL) {
		le.end(el);
		return loop_plain(core);
	}
	le.history(hist, &ev, H_SETSIZE, REPL_HISTORY_SIZE);	/* in memory only, never saved */
	le.set(el, EL_CLIENTDATA, &ts);
	le.set(el, EL_PROMPT, prompt_fn);
	le.set(el, EL_EDITOR, "emacs");
	le.set(el, EL_HIST, le.history, hist);
	le.set(el, EL_SIGNAL, 1);
	ag_strbuf_init(&acc, AG_CORE_MAX_COMMAND);

	while (!end && !ag_runner_terminating()) {
		const char *line;
		int count = 0;
		struct ag_core_parsed parsed, *pp = NULL;

		ts.continuation = acc.len > 0;
		if (core->unread_len > 0) {
			/* typed while the last command ended: as if typed at this prompt */
			char keys[sizeof(core->unread) + 1];

			memcpy(keys, core->unread, core->unread_len);
			keys[core->unread_len] = '\0';
			core->unread_len = 0;
			le.push(el, keys);
		}
		if (idle > 0)
			alarm((unsigned)idle);
		(void)ag_runner_take_alarm();
		errno = 0;
		line = le.gets(el, &count);
		alarm(0);
		if (ag_runner_take_alarm()) {
			fprintf(stderr, "\nagentgate: no input for %ld s; closing the session\n",
			    idle);
			break;
		}
		if (line == NULL || count <= 0) {
			if (errno == EINTR && !ag_runner_terminating()) {
				/* ^C: drop what was typed, as a shell does */
				fputc('\n', stdout);
				ag_strbuf_reset(&acc);
				continue;
			}
			if (acc.len == 0) {
				/* ^D says exit, as bash does; a session the
				 * administrator ends says why instead (its caller) */
				if (!ag_runner_terminating())
					fputs("exit\n", stdout);
				break;
			}
			line = "";	/* EOF inside a continuation: run what we have */
			count = 0;
		}
		if (ag_strbuf_append(&acc, line, (size_t)count) < 0) {
			fprintf(stderr, "agentgate: command longer than %d bytes; discarded\n",
			    AG_CORE_MAX_COMMAND);
			ag_strbuf_reset(&acc);
			core->sess.last_status = AG_STATUS_DENIED;
			continue;
		}
		if (count > 0) {
			if (parse_input(&acc, &parsed) == AG_SH_INCOMPLETE) {
				ag_sh_free(parsed.tree);
				continue;
			}
			pp = &parsed;
		}
		{
			/* history gets the whole command, without the final newline */
			size_t hl = acc.len;
			char *h;

			while (hl > 0 && acc.data[hl - 1] == '\n')
				hl--;
			if (hl > 0 && (h = strndup(acc.data, hl)) != NULL) {
				le.history(hist, &ev, H_ENTER, h);
				free(h);
			}
		}
		run_line(core, &acc, pp, &end);
		ag_strbuf_reset(&acc);
	}
	ag_strbuf_free(&acc);
	le.h_end(hist);
	le.end(el);
	return core->sess.last_status;
}

int
ag_repl_loop(struct ag_core *core)
{
	return core->tty ? loop_tty(core) : loop_plain(core);
}
