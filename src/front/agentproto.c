/*
 * agentproto.c - the two halves of a structured session (agentproto.h):
 * the gateway's loop over the control socket, and the pump that owns the
 * channel.  The protocols themselves are mcp.c and jsonl.c.
 *
 * Control socket frames, both ways: a 4-byte type and a 4-byte length in
 * host order, then the bytes.  Requests: AG_CALL_RUN / AG_CALL_EXPLAIN,
 * whose first 4 bytes are the timeout in seconds and the rest the text;
 * AG_CALL_INPUT has the text's length after the timeout, then the text,
 * then what the command reads on its stdin.
 * Answers: 'A' and the outcome as JSON.  The gateway answers every request
 * once, in order, after the command's output is all in the pipes; the pump
 * drains them before it reads the answer's outcome as final.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/log.h"
#include "common/misc.h"
#include "common/privsep.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "core/approval.h"
#include "core/core.h"
#include "exec/runner.h"
#include "exec/sandbox.h"
#include "front/agentproto.h"
#include "front/agentproto_int.h"
#include "policy/decision_json.h"
#include "policy/policy.h"

#define FRAME_ANSWER	'A'
#define FRAME_MAX	(AG_PROTO_COMMAND_MAX + AG_PROTO_INPUT_MAX + 64 * 1024)

enum ag_proto
ag_proto_of(const char *req)
{
	const char *p, *w, *base;
	size_t n;

	if (req == NULL)
		return AG_PROTO_NONE;
	for (p = req; *p == ' ' || *p == '\t'; p++)
		;
	for (w = p; *p != '\0' && *p != ' ' && *p != '\t'; p++)
		;
	for (base = p; base > w && base[-1] != '/'; base--)
		;
	if ((size_t)(p - base) != strlen("agentgate") || strncmp(base, "agentgate", 9) != 0)
		return AG_PROTO_NONE;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, " \t\n");
	if (p[n + strspn(p + n, " \t\n")] != '\0')
		return AG_PROTO_NONE;
	if (n == 3 && strncmp(p, "mcp", 3) == 0)
		return AG_PROTO_MCP;
	if (n == 4 && strncmp(p, "json", 4) == 0)
		return AG_PROTO_JSON;
	return AG_PROTO_NONE;
}

const char *
ag_proto_mode(enum ag_proto p)
{
	return p == AG_PROTO_MCP ? "mcp" : p == AG_PROTO_JSON ? "json" : "";
}

/* ---- frames --------------------------------------------------------------- */

static int
read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int
send_frame(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	uint32_t hdr[2] = { type, (uint32_t)(alen + blen) };

	if (ag_write_all(fd, hdr, sizeof(hdr), NULL) < 0 ||
	    (alen > 0 && ag_write_all(fd, a, alen, NULL) < 0) ||
	    (blen > 0 && ag_write_all(fd, b, blen, NULL) < 0))
		return -1;
	return 0;
}

/* A frame's body, malloc'd and NUL-terminated; -1 at EOF or on a bad frame. */
static int
recv_frame(int fd, uint32_t *type, char **body, size_t *len)
{
	uint32_t hdr[2];

	*body = NULL;
	if (read_full(fd, hdr, sizeof(hdr)) < 0 || hdr[1] > FRAME_MAX)
		return -1;
	if ((*body = malloc((size_t)hdr[1] + 1)) == NULL)
		return -1;
	if (read_full(fd, *body, hdr[1]) < 0) {
		free(*body);
		*body = NULL;
		return -1;
	}
	(*body)[hdr[1]] = '\0';
	*type = hdr[0];
	*len = hdr[1];
	return 0;
}

/* ---- the gateway's side ----------------------------------------------------- */

static json_object *
allowed_here(const struct ag_profile *p)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a != NULL && i < p->nallow; i++)
		if (p->allow[i].command != NULL)
			json_object_array_add(a, json_object_new_string(p->allow[i].command));
	return a;
}

/* Beside allowed_here: what a program the profile does not name gets
 * (allow: it runs, so the list is not all that may; trial 20). */
static void
add_allowed_here(json_object *o, const struct ag_profile *p)
{
	static const char *const unknown[] = { "deny", "ask", "allow", "approve" };

	json_object_object_add(o, "allowed_here", allowed_here(p));
	json_object_object_add(o, "unlisted_programs", json_object_new_string(
	    (size_t)p->unknown < sizeof(unknown) / sizeof(unknown[0]) ? unknown[p->unknown] : "deny"));
}

static json_object *
run_outcome(struct ag_core *core, const struct ag_core_outcome *oc)
{
	json_object *o = json_object_new_object();

	/* a line that was no command (a comment) ran nothing and is not refused */
	json_object_object_add(o, "decision", json_object_new_string(oc->decision[0] ?
	    oc->decision : "allow"));
	json_object_object_add(o, "reason", json_object_new_string(oc->reason[0] ? oc->reason :
	    oc->decision[0] ? "allowed" : "nothing to run"));
	if (oc->rule[0])
		json_object_object_add(o, "rule", json_object_new_string(oc->rule));
	json_object_object_add(o, "ran", json_object_new_boolean(oc->ran));
	/* as $? has it: 128+N after a signal, 124 after the timeout */
	json_object_object_add(o, "exit_code", json_object_new_int(oc->status));
	json_object_object_add(o, "signal", oc->signal != 0 ?
	    json_object_new_string(sigabbrev_np(oc->signal) ? sigabbrev_np(oc->signal) : "?") :
	    NULL);
	json_object_object_add(o, "timed_out", json_object_new_boolean(oc->timed_out));
	json_object_object_add(o, "cancelled", json_object_new_boolean(oc->cancelled));
	json_object_object_add(o, "truncated", json_object_new_boolean(oc->truncated));
	json_object_object_add(o, "duration_ms", json_object_new_int64(oc->duration_ms));
	json_object_object_add(o, "cwd", json_object_new_string(oc->cwd[0] ? oc->cwd :
	    core->sess.cwd));
	/* what else the profile allows helps only a caller that was refused;
	 * on every result it is the same long list again */
	if (strcmp(oc->decision, "deny") == 0 || strcmp(oc->decision, "ask-deny") == 0)
		add_allowed_here(o, oc->profile != NULL ? oc->profile : core->profile);
	return o;
}

static json_object *
explain_outcome(struct ag_core *core, const char *text, size_t len)
{
	json_object *o;
	struct ag_decision d;

	memset(&d, 0, sizeof(d));
	(void)ag_core_decide(core, text, len, &d);
	if ((o = ag_decision_json(&d, core->cfg)) == NULL) {
		ag_decision_free(&d);
		return NULL;
	}
	json_object_object_add(o, "cwd", json_object_new_string(core->sess.cwd));
	if (d.verdict != AG_ALLOW)	/* as with run: only beside a refusal */
		add_allowed_here(o, core->profile);
	ag_decision_free(&d);
	return o;
}

/* request_access: the line filed for approval with its justification
 * (core/approval.h), answered at once with its id and state. */
static json_object *
request_outcome(struct ag_core *core, const char *text, size_t len, const char *just,
    size_t jlen)
{
	struct ag_core_request rq;
	json_object *o = json_object_new_object();
	char *j = NULL;

	if (o == NULL)
		return NULL;
	if (jlen > 0 && (j = strndup(just, jlen)) == NULL) {
		json_object_put(o);
		return NULL;
	}
	(void)ag_core_request_access(core, text, len, j, &rq);
	free(j);
	json_object_object_add(o, "state", json_object_new_string(rq.state));
	if (rq.id[0])
		json_object_object_add(o, "request_id", json_object_new_string(rq.id));
	json_object_object_add(o, "rule", json_object_new_string(rq.rule));
	json_object_object_add(o, "approvers", json_object_new_string(rq.approvers));
	json_object_object_add(o, "reason", json_object_new_string(rq.why));
	return o;
}

/* A read-only fd holding n bytes at p, positioned at its start; -1 with errno. */
static int
input_fd(const char *p, size_t n)
{
	int fd = memfd_create("agentgate-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ag_write_all(fd, p, n, NULL) < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* One request after another until the pump goes; the session's status. */
/*
 * The file a write call names (n bytes at p: a path as the client gave
 * it), as the runner's write step opens it: a leading ~/ is the home, as
 * in the judged `cat > ~/'...'`.  malloc'd into *out (NULL: n is 0, no
 * file); -1 when it holds a NUL or memory is short.
 */
static int
write_target(const struct ag_core *core, const char *p, size_t n, char **out)
{
	const char *home = core->sess.home != NULL ? core->sess.home : "";
	int tilde = n >= 2 && p[0] == '~' && p[1] == '/';
	struct ag_strbuf sb;

	*out = NULL;
	if (n == 0)
		return 0;
	if (memchr(p, '\0', n) != NULL)
		return -1;
	ag_strbuf_init(&sb, n + strlen(home) + 2);
	if ((tilde && ag_strbuf_addstr(&sb, home) < 0) ||
	    ag_strbuf_append(&sb, p + tilde, n - (size_t)tilde) < 0) {
		ag_strbuf_free(&sb);
		return -1;
	}
	*out = ag_strbuf_detach(&sb, NULL);
	return 0;
}

static int
core_loop(struct ag_core *core, int ctl)
{
	struct ag_core_outcome oc;
	int status = 0;

	core->outcome = &oc;
	for (;;) {
		uint32_t type, t;
		char *body;
		size_t len;
		json_object *o;
		const char *js;
		int end = 0;

		if (recv_frame(ctl, &type, &body, &len) < 0 || len < sizeof(t)) {
			free(body);
			break;
		}
		/* a cancellation sent from now on is for this request */
		ag_runner_cancel_reset();
		memcpy(&t, body, sizeof(t));
		if (type == AG_CALL_REQUEST) {
			const size_t h = 3 * sizeof(t);
			uint32_t tl, pl;

			if (len < h || (memcpy(&tl, body + sizeof(t), sizeof(tl)),
			    memcpy(&pl, body + 2 * sizeof(t), sizeof(pl)), tl > len - h) ||
			    pl > len - h - tl || memchr(body + h + tl + pl, '\0',
			    len - h - tl - pl) != NULL) {
				free(body);
				break;
			}
			o = request_outcome(core, body + h, tl, body + h + tl + pl,
			    len - h - tl - pl);
		} else if (type == AG_CALL_INPUT) {
			const size_t h = 3 * sizeof(t);
			uint32_t tl, pl;
			char *wpath = NULL;
			int in;

			if (len < h || (memcpy(&tl, body + sizeof(t), sizeof(tl)),
			    memcpy(&pl, body + 2 * sizeof(t), sizeof(pl)), tl > len - h) ||
			    pl > len - h - tl || write_target(core, body + h + tl, pl,
			    &wpath) < 0) {
				free(body);
				break;
			}
			/* the input on the command's stdin, from a sealed memfd */
			if ((in = input_fd(body + h + tl + pl, len - h - tl - pl)) < 0) {
				memset(&oc, 0, sizeof(oc));
				snprintf(oc.decision, sizeof(oc.decision), "deny");
				snprintf(oc.reason, sizeof(oc.reason), "cannot hand the content over: %s",
				    strerror(errno));
				oc.status = AG_STATUS_DENIED;
			} else {
				core->timeout = (long)t;
				core->cmd_in = in;
				core->write_path = wpath;
				status = ag_core_command(core, body + h, tl, 0, &end);
				core->write_path = NULL;
				core->cmd_in = STDIN_FILENO;
				core->timeout = 0;
				close(in);
			}
			free(wpath);
			o = run_outcome(core, &oc);
		} else if (type == AG_CALL_RUN) {
			core->timeout = (long)t;
			status = ag_core_command(core, body + sizeof(t), len - sizeof(t), 0, &end);
			core->timeout = 0;
			o = run_outcome(core, &oc);
		} else if (ag_core_revoked(core)) {
			/* a locked caller may not go on reading its policy either */
			memset(&oc, 0, sizeof(oc));
			snprintf(oc.decision, sizeof(oc.decision), "deny");
			snprintf(oc.reason, sizeof(oc.reason), "this session has been ended: %s",
			    core->ended_why);
			snprintf(oc.rule, sizeof(oc.rule), "revoked");
			oc.status = status = AG_STATUS_ENDED;
			end = 1;
			o = run_outcome(core, &oc);
		} else
			o = explain_outcome(core, body + sizeof(t), len - sizeof(t));
		free(body);
		/* what the line wrote is in the pipes before its answer goes */
		fflush(stdout);
		fflush(stderr);
		js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		if (send_frame(ctl, FRAME_ANSWER, js, strlen(js), NULL, 0) < 0)
			end = 1;
		json_object_put(o);
		if (end || ag_runner_terminating())
			break;
		status = 0;	/* the session's status is that of a closing `exit N` */
	}
	core->outcome = NULL;
	return status;
}

/* ---- the pump ------------------------------------------------------------------ */

struct ag_pump {
	const struct ag_proto_ops *ops;
	int			 in, out, ctl, po, pe;
	pid_t			 gateway;
	struct ag_call		*head, *tail;	/* waiting */
	size_t			 nwaiting;
	struct ag_call		*running;
	long long		 started, last_progress;
	struct ag_strbuf	 so, se;	/* the running call's output */
	int			 so_cut, se_cut;
	size_t			 out_bytes;
	int			 dead;		/* the channel is gone, or the pump failed */
	int			 gateway_gone;	/* the gateway ended the session */
};

struct ag_call *
ag_call_new(enum ag_call_kind kind, json_object *id, const char *text, size_t len)
{
	struct ag_call *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->text = malloc(len + 1)) == NULL) {
		free(c);
		return NULL;
	}
	memcpy(c->text, text, len);
	c->text[len] = '\0';
	c->len = len;
	c->kind = kind;
	c->id = id != NULL ? json_object_get(id) : NULL;
	return c;
}

void
ag_call_free(struct ag_call *c)
{
	if (c == NULL)
		return;
	json_object_put(c->id);
	json_object_put(c->progress);
	free(c->text);
	free(c->input);
	free(c->path);
	free(c);
}

void
ag_pump_send(struct ag_pump *pu, json_object *msg)
{
	const char *js;
	char *safe;
	size_t n;

	if (pu->dead)
		return;
	js = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	/* DEL, C1 and bidi controls as escapes: the same JSON, inert on a terminal */
	if ((safe = ag_utf8_json_safe(js, strlen(js), &n)) == NULL) {
		pu->dead = 1;
		return;
	}
	safe[n++] = '\n';
	if (ag_write_all(pu->out, safe, n, NULL) < 0)
		pu->dead = 1;
	free(safe);
}

/* The gateway has ended the session: c goes back to the head of the
 * queue, to be answered as not run. */
static void
requeue(struct ag_pump *pu, struct ag_call *c)
{
	c->next = pu->head;
	pu->head = c;
	if (pu->tail == NULL)
		pu->tail = c;
	pu->nwaiting++;
	pu->gateway_gone = 1;
}

static void
start_next(struct ag_pump *pu)
{
	struct ag_call *c;
	uint32_t t;

	while (pu->running == NULL && !pu->gateway_gone && (c = pu->head) != NULL) {
		pu->head = c->next;
		if (pu->head == NULL)
			pu->tail = NULL;
		pu->nwaiting--;
		c->next = NULL;
		t = (uint32_t)(c->timeout_s > 0 ? c->timeout_s : 0);
		if (c->kind == AG_CALL_INPUT || c->kind == AG_CALL_REQUEST) {
			size_t plen = c->path != NULL ? strlen(c->path) : 0;
			uint32_t hdr[3] = { t, (uint32_t)c->len, (uint32_t)plen };
			char *b = malloc(c->len + plen + c->inlen + 1);

			if (b == NULL) {
				ag_call_free(c);
				pu->dead = 1;
				return;
			}
			memcpy(b, c->text, c->len);
			memcpy(b + c->len, c->path != NULL ? c->path : "", plen);
			memcpy(b + c->len + plen, c->input != NULL ? c->input : "", c->inlen);
			if (send_frame(pu->ctl, (uint32_t)c->kind, hdr, sizeof(hdr), b,
			    c->len + plen + c->inlen) < 0) {
				free(b);
				requeue(pu, c);
				return;
			}
			free(b);
		} else if (send_frame(pu->ctl, (uint32_t)c->kind, &t, sizeof(t), c->text, c->len) < 0) {
			requeue(pu, c);
			return;
		}
		pu->running = c;
		pu->started = pu->last_progress = ag_now_ms();
		ag_strbuf_reset(&pu->so);
		ag_strbuf_reset(&pu->se);
		pu->so_cut = pu->se_cut = 0;
		pu->out_bytes = 0;
	}
}

int
ag_pump_submit(struct ag_pump *pu, struct ag_call *c)
{
	if (pu->nwaiting >= AG_PROTO_QUEUE_MAX) {
		ag_call_free(c);
		return -1;
	}
	if (pu->tail != NULL)
		pu->tail->next = c;
	else
		pu->head = c;
	pu->tail = c;
	pu->nwaiting++;
	start_next(pu);
	return 0;
}

static int
same_id(json_object *a, json_object *b)
{
	return a != NULL && b != NULL && json_object_get_type(a) == json_object_get_type(b) &&
	    strcmp(json_object_to_json_string(a), json_object_to_json_string(b)) == 0;
}

int
ag_pump_cancel(struct ag_pump *pu, json_object *id)
{
	struct ag_call *c, *prev = NULL;

	if (pu->running != NULL && same_id(pu->running->id, id)) {
		if (!pu->running->cancelled)
			kill(pu->gateway, SIGUSR1);
		pu->running->cancelled = 1;
		return 0;
	}
	for (c = pu->head; c != NULL; prev = c, c = c->next)
		if (same_id(c->id, id)) {
			if (prev != NULL)
				prev->next = c->next;
			else
				pu->head = c->next;
			if (pu->tail == c)
				pu->tail = prev;
			pu->nwaiting--;
			ag_call_free(c);
			return 0;
		}
	return -1;
}

/* Read what a pipe has now; 0 at EOF. */
static int
drain(struct ag_pump *pu, int fd, struct ag_strbuf *sb, int *cut)
{
	char buf[16384];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 1;	/* EAGAIN: nothing more now */
		if (n == 0)
			return 0;
		if (pu->running == NULL)
			continue;	/* output between calls belongs to none */
		pu->out_bytes += (size_t)n;
		if (!*cut && sb->len + (size_t)n <= AG_PROTO_OUTPUT_MAX)
			(void)ag_strbuf_append(sb, buf, (size_t)n);
		else if (!*cut) {
			(void)ag_strbuf_append(sb, buf, AG_PROTO_OUTPUT_MAX - sb->len);
			*cut = 1;
		}
	}
}

static json_object *
text_of(const struct ag_strbuf *sb)
{
	size_t n;
	char *s = ag_utf8_repair(sb->data != NULL ? sb->data : "", sb->len, &n);
	json_object *o;

	if (s == NULL)
		return json_object_new_string("");
	o = json_object_new_string_len(s, (int)n);
	free(s);
	return o;
}

static void
answered(struct ag_pump *pu, const char *body)
{
	struct ag_call *c = pu->running;
	json_object *o = json_tokener_parse(body);

	drain(pu, pu->po, &pu->so, &pu->so_cut);
	drain(pu, pu->pe, &pu->se, &pu->se_cut);
	pu->running = NULL;
	if (c == NULL) {
		json_object_put(o);
		return;
	}
	if (o == NULL)
		o = json_object_new_object();
	if (c->kind != AG_CALL_EXPLAIN && c->kind != AG_CALL_REQUEST) {
		json_object_object_add(o, "stdout", text_of(&pu->so));
		json_object_object_add(o, "stderr", text_of(&pu->se));
		if (pu->so_cut || pu->se_cut)
			json_object_object_add(o, "truncated", json_object_new_boolean(1));
	}
	/* a cancelled call gets no answer (the client has stopped waiting) */
	if (!c->cancelled)
		pu->ops->done(pu, c, o);
	json_object_put(o);
	ag_call_free(c);
}

/*
 * A call the session ended without answering: a waiting one never ran; the
 * one handed over may have started (a gateway killed under it).
 */
static void
not_run(struct ag_pump *pu, struct ag_call *c, int handed_over)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "decision", json_object_new_string("deny"));
	json_object_object_add(o, "reason", json_object_new_string(handed_over ?
	    "the session ended before this request was answered" :
	    "the session ended before this request ran"));
	json_object_object_add(o, "rule", json_object_new_string("session_ended"));
	if (!handed_over)
		json_object_object_add(o, "ran", json_object_new_boolean(0));
	json_object_object_add(o, "exit_code", json_object_new_int(AG_STATUS_ENDED));
	pu->ops->done(pu, c, o);
	json_object_put(o);
	ag_call_free(c);
}

/* Split what the client sent into lines; a line over the limit is skipped. */
struct linebuf {
	char	*buf;
	size_t	 len;
	int	 skipping;
};

static void
client_input(struct ag_pump *pu, struct linebuf *lb, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl != NULL ? (size_t)(nl - p) : n;

		if (!lb->skipping && lb->len + take > AG_PROTO_LINE_MAX) {
			lb->skipping = 1;
			lb->len = 0;
			pu->ops->too_long(pu);
		}
		if (!lb->skipping) {
			memcpy(lb->buf + lb->len, p, take);
			lb->len += take;
		}
		if (nl == NULL)
			return;
		if (!lb->skipping) {
			size_t l = lb->len;

			if (l > 0 && lb->buf[l - 1] == '\r')
				l--;
			lb->buf[l] = '\0';
			if (l > 0)
				pu->ops->line(pu, lb->buf, l);
		}
		lb->len = 0;
		lb->skipping = 0;
		p = nl + 1;
		n -= take + 1;
	}
}

static int
pump_main(const struct ag_proto_ops *ops, int ctl, int po, int pe, pid_t gateway)
{
	struct ag_pump pu;
	struct linebuf lb;
	int in_eof = 0;

	memset(&pu, 0, sizeof(pu));
	memset(&lb, 0, sizeof(lb));
	pu.ops = ops;
	pu.in = STDIN_FILENO;
	pu.out = STDOUT_FILENO;
	pu.ctl = ctl;
	pu.po = po;
	pu.pe = pe;
	pu.gateway = gateway;
	ag_strbuf_init(&pu.so, AG_PROTO_OUTPUT_MAX + 1);
	ag_strbuf_init(&pu.se, AG_PROTO_OUTPUT_MAX + 1);
	if ((lb.buf = malloc(AG_PROTO_LINE_MAX + 1)) == NULL)
		return 1;
	ag_set_nonblock(po);
	ag_set_nonblock(pe);
	signal(SIGPIPE, SIG_IGN);

	while (!pu.dead && !pu.gateway_gone) {
		struct pollfd pf[4];
		int i_in = -1, i_ctl, i_po, i_pe, n = 0;
		long long tmo = -1, now = ag_now_ms();

		if (in_eof && pu.running == NULL && pu.head == NULL)
			break;
		if (!in_eof) {
			pf[n] = (struct pollfd){ .fd = pu.in, .events = POLLIN };
			i_in = n++;
		}
		pf[n] = (struct pollfd){ .fd = ctl, .events = POLLIN };
		i_ctl = n++;
		pf[n] = (struct pollfd){ .fd = po, .events = POLLIN };
		i_po = n++;
		pf[n] = (struct pollfd){ .fd = pe, .events = POLLIN };
		i_pe = n++;
		if (pu.running != NULL && pu.running->progress != NULL && ops->progress != NULL) {
			tmo = pu.last_progress + AG_PROTO_PROGRESS_MS - now;
			if (tmo <= 0) {
				pu.last_progress = now;
				ops->progress(&pu, pu.running, now - pu.started, pu.out_bytes);
				continue;
			}
		}
		if (ag_poll(pf, (size_t)n, tmo) < 0)
			break;
		if (pf[i_po].revents)
			drain(&pu, po, &pu.so, &pu.so_cut);
		if (pf[i_pe].revents)
			drain(&pu, pe, &pu.se, &pu.se_cut);
		if (pf[i_ctl].revents) {
			uint32_t type;
			char *body;
			size_t len;

			if (recv_frame(ctl, &type, &body, &len) < 0) {
				pu.gateway_gone = 1;	/* it ended the session (exit) */
				break;
			}
			if (type == FRAME_ANSWER)
				answered(&pu, body);
			free(body);
			start_next(&pu);
		}
		if (i_in >= 0 && pf[i_in].revents) {
			char buf[65536];
			ssize_t r = read(pu.in, buf, sizeof(buf));

			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				/* the client has said all it will: what it asked for
				 * is still done and answered (a closed connection shows
				 * as a failed write instead) */
				in_eof = 1;
				continue;
			}
			client_input(&pu, &lb, buf, (size_t)r);
		}
	}
	/* the client is gone (or the pump failed): what runs for it goes too */
	if (!pu.gateway_gone && pu.running != NULL && !pu.running->cancelled)
		kill(gateway, SIGUSR1);
	/* the gateway ended the session (exit, a revocation) with requests
	 * unanswered: each is told so, not left waiting */
	if (pu.gateway_gone && !pu.dead) {
		if (pu.running != NULL && !pu.running->cancelled)
			not_run(&pu, pu.running, 1);
		pu.running = NULL;
		while (pu.head != NULL) {
			struct ag_call *c = pu.head;

			pu.head = c->next;
			if (!c->cancelled)
				not_run(&pu, c, 0);
			else
				ag_call_free(c);
		}
	}
	free(lb.buf);
	ag_strbuf_free(&pu.so);
	ag_strbuf_free(&pu.se);
	ag_call_free(pu.running);
	while (pu.head != NULL) {
		struct ag_call *c = pu.head;

		pu.head = c->next;
		ag_call_free(c);
	}
	return 0;
}

/* ---- both ----------------------------------------------------------------- */

char ag_proto_targets[512];

int
ag_proto_serve(struct ag_core *core, enum ag_proto p)
{
	const struct ag_proto_ops *ops = p == AG_PROTO_MCP ? &ag_mcp_ops : &ag_jsonl_ops;
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 }, devnull = -1;
	int status = 1, wst;
	pid_t gw = getpid(), pid;

	(void)ag_profile_targets_text(core->caller, 0, ag_proto_targets, sizeof(ag_proto_targets));
	fflush(stdout);
	fflush(stderr);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		fprintf(stderr, "agentgate: cannot start the %s session: %s\n",
		    ag_proto_mode(p), strerror(errno));
		goto out;
	}
	if ((pid = fork()) < 0) {
		fprintf(stderr, "agentgate: fork: %s\n", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* the pump: the channel (0, 1), the control socket, the pipes' read
		 * ends, and nothing of the gateway's (audit, policy, helpers) */
		int keep[] = { sv[1], po[0], pe[0] }, i;

		/* not the gateway's group, nor its private files (audit, recording):
		 * the pump needs no privilege.  First: those fds are numbered as
		 * the gateway opened them. */
		if (ag_privsep_child() < 0)
			_exit(1);
		/* out of the way first, so that no dup2 below lands on another */
		for (i = 0; i < 3; i++)
			if ((keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 64)) < 0)
				_exit(1);
		for (i = 0; i < 3; i++)
			if (dup2(keep[i], 3 + i) < 0)
				_exit(1);
		if (dup2(devnull, STDERR_FILENO) < 0)
			_exit(1);
		ag_close_range(6, ~0U);
		_exit(pump_main(ops, 3, 4, 5, gw));
	}
	/* the sweep after each command spares the pump */
	ag_runner_keep_child(pid, 1);
	close(sv[1]);
	close(po[0]);
	close(pe[0]);
	sv[1] = po[0] = pe[0] = -1;
	/* the channel is the pump's alone: ours are the pipes and /dev/null */
	if (dup2(devnull, STDIN_FILENO) < 0 || dup2(po[1], STDOUT_FILENO) < 0 ||
	    dup2(pe[1], STDERR_FILENO) < 0) {
		kill(pid, SIGKILL);
	} else {
		close(po[1]);
		close(pe[1]);
		po[1] = pe[1] = -1;
		core->cmd_in = STDIN_FILENO;
		core->pty = 0;
		status = core_loop(core, sv[0]);
	}
	close(sv[0]);
	sv[0] = -1;
	/* the pump sees EOF on the socket (or the client went first) */
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	ag_runner_keep_child(pid, 0);
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (po[0] >= 0)
		close(po[0]);
	if (po[1] >= 0)
		close(po[1]);
	if (pe[0] >= 0)
		close(pe[0]);
	if (pe[1] >= 0)
		close(pe[1]);
	if (devnull >= 0)
		close(devnull);
	return status;
}
