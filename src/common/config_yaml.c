/*
 * config_yaml.c - the policy file as a YAML tree with a line:col on every
 * node (libyaml's event parser, with the resource limits and the refusal of
 * anchors, aliases and tags), and the readers that turn a node into a value
 * or into an error pointing at it (see config_int.h).
 *
 * Anchors, aliases and merge keys are refused rather than supported: an
 * alias makes one node appear in many places (and "billion laughs" style
 * growth), and a policy file is easier to audit when what you read is what
 * applies.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <yaml.h>

#include "common/config.h"
#include "common/misc.h"
#include "common/safepath.h"
#include "common/sshkey.h"
#include "common/strbuf.h"
#include "common/config_int.h"

/* ------------------------------------------------------------------ */
/* The YAML tree                                                        */



void
cf_ynode_free(struct ynode *y)
{
	size_t i;

	if (y == NULL)
		return;
	for (i = 0; i < y->n; i++)
		cf_ynode_free(y->kid[i]);
	free(y->kid);
	free(y->s);
	free(y);
}

/* The message at file:line:col; every cf_err_* comes here. */
static int AG_PRINTF(5, 0)
verr(struct ctx *c, const char *file, int line, int col, const char *fmt, va_list ap)
{
	char msg[AG_ERR_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return ag_err_at(c->err, file, line, col, "%s", msg);
}

int
cf_err_at(struct ctx *c, int line, int col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(c, c->name, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

int
cf_err_node(struct ctx *c, const struct ynode *y, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(c, c->name, y->line, y->col, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error at pos, in whichever file it is. */
int
cf_err_pos(struct ctx *c, const struct ag_pos *pos, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(c, pos->file != NULL ? pos->file : c->name, pos->line, pos->col, fmt, ap);
	va_end(ap);
	return rc;
}

int
cf_oom(struct ctx *c, const struct ynode *y)
{
	return ag_err_at(c->err, c->name, y ? y->line : 0, y ? y->col : 0,
	    "out of memory");
}

/* Where y is, in the file being read (c->name, a string of the config's). */
void
cf_pos(struct ctx *c, struct ag_pos *pos, const struct ynode *y)
{
	pos->file = c->name;
	pos->line = y->line;
	pos->col = y->col;
}

/* pos for a message about the file being read: "L:C", or "FILE:L:C" when
 * it is in another file (an earlier fragment, the main file). */
const char *
cf_pos_text(struct ctx *c, const struct ag_pos *pos)
{
	char *b = c->qbuf[c->qi++ % 4];

	if (pos->file == NULL || strcmp(pos->file, c->name) == 0)
		snprintf(b, sizeof(c->qbuf[0]), "%d:%d", pos->line, pos->col);
	else
		snprintf(b, sizeof(c->qbuf[0]), "%s:%d:%d", pos->file, pos->line, pos->col);
	return b;
}

/*
 * A user-written string made safe to put in a message: control bytes
 * become '?', long strings are cut.  Four rotating buffers so that one
 * message can cf_quote several strings.
 */
const char *
cf_quote(struct ctx *c, const char *s)
{
	char *b = c->qbuf[c->qi++ % 4];
	size_t i, max = 96;

	for (i = 0; s[i] != '\0' && i < max; i++)
		b[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (s[i] != '\0') {
		memcpy(b + i, "...", 3);
		i += 3;
	}
	b[i] = '\0';
	return b;
}

/* ------------------------------------------------------------------ */
/* Pass 1: events → tree                                               */

static void
pos_from_offset(const char *buf, size_t len, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	if (off > len)
		off = len;
	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else
			(*col)++;
	}
}

static int
yaml_failure(struct ctx *c, const yaml_parser_t *p, const char *buf, size_t len)
{
	int line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return cf_err_at(c, 0, 0, "out of memory while reading YAML");
	case YAML_READER_ERROR:
		pos_from_offset(buf, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return cf_err_at(c, line, col, "invalid input: %s (byte 0x%02X)",
			    p->problem ? p->problem : "unreadable",
			    (unsigned)p->problem_value & 0xffu);
		return cf_err_at(c, line, col, "invalid input: %s",
		    p->problem ? p->problem : "unreadable");
	default:
		break;
	}
	if (p->context != NULL)
		return cf_err_at(c, (int)p->problem_mark.line + 1,
		    (int)p->problem_mark.column + 1,
		    "YAML syntax error: %s (%s at %d:%d)",
		    p->problem ? p->problem : "invalid YAML", p->context,
		    (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	return cf_err_at(c, (int)p->problem_mark.line + 1,
	    (int)p->problem_mark.column + 1, "YAML syntax error: %s",
	    p->problem ? p->problem : "invalid YAML");
}

static int
kid_add(struct ctx *c, struct ynode *parent, struct ynode *k)
{
	if (parent->n == parent->cap) {
		size_t ncap = parent->cap ? parent->cap * 2 : 4;
		struct ynode **nk = reallocarray(parent->kid, ncap, sizeof(*nk));

		if (nk == NULL)
			return cf_oom(c, k);
		parent->kid = nk;
		parent->cap = ncap;
	}
	parent->kid[parent->n++] = k;
	return 0;
}

/* Refuse the YAML features this loader does not implement (see top). */
static int
check_node_event(struct ctx *c, const yaml_event_t *ev, int line, int col)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	if (ev->type == YAML_SCALAR_EVENT) {
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
	} else if (ev->type == YAML_SEQUENCE_START_EVENT) {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	}
	if (anchor != NULL)
		return cf_err_at(c, line, col, "YAML anchors ('&%s') are not supported: "
		    "write the value out in full", cf_quote(c, (const char *)anchor));
	if (tag != NULL) {
		const char *t = (const char *)tag;
		const char *std = "tag:yaml.org,2002:";

		/* libyaml hands back "!!int" expanded; show it as written. */
		if (strncmp(t, std, strlen(std)) == 0)
			return cf_err_at(c, line, col, "YAML tags ('!!%s') are not "
			    "supported: remove the tag", cf_quote(c, t + strlen(std)));
		return cf_err_at(c, line, col, "YAML tags ('%s') are not supported: "
		    "remove the tag", cf_quote(c, t));
	}
	return 0;
}

int
cf_build_tree(struct ctx *c, const char *buf, size_t len, struct ynode **rootp)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ynode *stack[AG_CONFIG_MAX_DEPTH];
	struct ynode *root = NULL, *y;
	size_t depth = 0, nevents = 0;
	int docs = 0, done = 0, rc = -1, line, col;

	*rootp = NULL;
	if (!yaml_parser_initialize(&p))
		return cf_err_at(c, 0, 0, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			yaml_failure(c, &p, buf, len);
			goto out;
		}
		line = (int)ev.start_mark.line + 1;
		col = (int)ev.start_mark.column + 1;
		if (++nevents > AG_CONFIG_MAX_NODES) {
			cf_err_at(c, line, col, "too many YAML nodes (the limit is %d)",
			    AG_CONFIG_MAX_NODES);
			goto bad_event;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (docs++ > 0) {
				cf_err_at(c, line, col, "only one YAML document per "
				    "file is supported (remove the second '---')");
				goto bad_event;
			}
			break;
		case YAML_ALIAS_EVENT:
			cf_err_at(c, line, col, "YAML aliases ('*%s') are not supported: "
			    "write the value out in full",
			    cf_quote(c, (const char *)ev.data.alias.anchor));
			goto bad_event;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (check_node_event(c, &ev, line, col) == -1)
				goto bad_event;
			if (ev.type == YAML_SCALAR_EVENT &&
			    ev.data.scalar.length > MAX_SCALAR) {
				cf_err_at(c, line, col, "value is longer than %d bytes",
				    MAX_SCALAR);
				goto bad_event;
			}
			if ((y = calloc(1, sizeof(*y))) == NULL) {
				cf_err_at(c, line, col, "out of memory");
				goto bad_event;
			}
			y->line = line;
			y->col = col;
			if (ev.type == YAML_SCALAR_EVENT) {
				y->type = Y_SCALAR;
				y->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				y->len = ev.data.scalar.length;
				y->s = malloc(y->len + 1);
				if (y->s == NULL) {
					free(y);
					cf_err_at(c, line, col, "out of memory");
					goto bad_event;
				}
				memcpy(y->s, ev.data.scalar.value, y->len);
				y->s[y->len] = '\0';
			} else
				y->type = ev.type == YAML_SEQUENCE_START_EVENT ?
				    Y_SEQ : Y_MAP;
			if (depth == 0) {
				if (root != NULL) {	/* cannot happen: one document */
					cf_ynode_free(y);
					cf_err_at(c, line, col, "unexpected second root node");
					goto bad_event;
				}
				root = y;
			} else {
				struct ynode *par = stack[depth - 1];

				if (par->type == Y_MAP && par->n % 2 == 0) {
					if (y->type != Y_SCALAR) {
						cf_ynode_free(y);
						cf_err_at(c, line, col, "a mapping key must "
						    "be a plain string, not a %s",
						    ev.type == YAML_SEQUENCE_START_EVENT ?
						    "list" : "mapping");
						goto bad_event;
					}
					if (y->plain && strcmp(y->s, "<<") == 0) {
						cf_ynode_free(y);
						cf_err_at(c, line, col, "YAML merge keys "
						    "('<<') are not supported: write the "
						    "keys out in full");
						goto bad_event;
					}
				}
				if (kid_add(c, par, y) == -1) {
					cf_ynode_free(y);
					goto bad_event;
				}
			}
			if (y->type != Y_SCALAR) {
				if (depth == AG_CONFIG_MAX_DEPTH) {
					cf_err_at(c, line, col, "nesting is deeper than "
					    "%d levels", AG_CONFIG_MAX_DEPTH);
					goto bad_event;
				}
				stack[depth++] = y;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	*rootp = root;
	root = NULL;
	rc = 0;
	goto out;
bad_event:
	yaml_event_delete(&ev);
out:
	cf_ynode_free(root);
	yaml_parser_delete(&p);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

int
cf_is_null(const struct ynode *y)
{
	return y->type == Y_SCALAR && y->plain &&
	    (y->len == 0 || strcmp(y->s, "~") == 0 || strcmp(y->s, "null") == 0 ||
	    strcmp(y->s, "Null") == 0 || strcmp(y->s, "NULL") == 0);
}

const char *
cf_kind_of(const struct ynode *y)
{
	if (y->type == Y_MAP)
		return "a mapping";
	if (y->type == Y_SEQ)
		return "a list";
	if (cf_is_null(y))
		return "an empty value";
	return "a string";
}

/* Optimal string alignment distance; small inputs only (names, keys). */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t d[MAX_NAME + 1][MAX_NAME + 1];

	if (la > MAX_NAME || lb > MAX_NAME)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

int
cf_close_enough(const char *typo, const char *cand, size_t *best)
{
	size_t d = edit_distance(typo, cand);
	size_t lim = strlen(cand) >= 6 ? 2 : 1;

	if (d <= lim && d < *best) {
		*best = d;
		return 1;
	}
	return 0;
}

/* " (did you mean 'x'?)" or "" */
const char *
cf_suggest(struct ctx *c, const char *typo, const char *const *cands)
{
	const char *pick = NULL;
	size_t best = SIZE_MAX, i;
	char *b;

	if (cands == NULL)
		return "";
	for (i = 0; cands[i] != NULL; i++)
		if (cf_close_enough(typo, cands[i], &best))
			pick = cands[i];
	if (pick == NULL)
		return "";
	b = c->qbuf[c->qi++ % 4];
	snprintf(b, sizeof(c->qbuf[0]), " (did you mean '%s'?)", pick);
	return b;
}

int
cf_scalar_has_nul(const struct ynode *y)
{
	return strlen(y->s) != y->len;
}

/* A non-empty scalar, else a message about what was expected. */
int
cf_want_scalar(struct ctx *c, const struct ynode *v, const char *key,
    const char *expect)
{
	if (v->type != Y_SCALAR || cf_is_null(v))
		return cf_err_node(c, v, "expected %s for '%s', got %s", expect, key,
		    cf_kind_of(v));
	if (cf_scalar_has_nul(v))
		return cf_err_node(c, v, "'%s' contains a NUL character", key);
	return 0;
}

int
cf_dupstr(struct ctx *c, const struct ynode *v, char **out)
{
	if ((*out = strdup(v->s)) == NULL)
		return cf_oom(c, v);
	return 0;
}

int
cf_get_string(struct ctx *c, const struct ynode *v, const char *key, char **out)
{
	if (cf_want_scalar(c, v, key, "a string") == -1)
		return -1;
	return cf_dupstr(c, v, out);
}

int
cf_check_abs_path(struct ctx *c, const struct ynode *v, const char *key)
{
	if (v->s[0] != '/')
		return cf_err_node(c, v, "'%s' must be an absolute path, got '%s'",
		    key, cf_quote(c, v->s));
	return 0;
}

int
cf_get_abs_path(struct ctx *c, const struct ynode *v, const char *key, char **out)
{
	if (cf_want_scalar(c, v, key, "an absolute path") == -1 ||
	    cf_check_abs_path(c, v, key) == -1)
		return -1;
	return cf_dupstr(c, v, out);
}

int
cf_get_url(struct ctx *c, const struct ynode *v, const char *key, char **out)
{
	if (cf_want_scalar(c, v, key, "a URL") == -1)
		return -1;
	if ((strncmp(v->s, "http://", 7) != 0 || v->s[7] == '\0') &&
	    (strncmp(v->s, "https://", 8) != 0 || v->s[8] == '\0'))
		return cf_err_node(c, v, "'%s' must be an http:// or https:// URL, "
		    "got '%s'", key, cf_quote(c, v->s));
	return cf_dupstr(c, v, out);
}

int
cf_get_bool(struct ctx *c, const struct ynode *v, const char *key, int *out)
{
	if (cf_want_scalar(c, v, key, "true or false") == -1)
		return -1;
	if (strcmp(v->s, "true") == 0)
		*out = 1;
	else if (strcmp(v->s, "false") == 0)
		*out = 0;
	else
		return cf_err_node(c, v, "expected true or false for '%s', got '%s'",
		    key, cf_quote(c, v->s));
	return 0;
}

int
cf_get_enum(struct ctx *c, const struct ynode *v, const char *key,
    const char *const *names, int *out)
{
	char list[200] = "";
	size_t i;

	if (cf_want_scalar(c, v, key, "a string") == -1)
		return -1;
	for (i = 0; names[i] != NULL; i++) {
		if (strcmp(v->s, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
		    i ? ", " : "", names[i]);
	}
	return cf_err_node(c, v, "invalid value '%s' for '%s': expected one of %s%s",
	    cf_quote(c, v->s), key, list, cf_suggest(c, v->s, names));
}

/* Decimal digits only, no sign; 0 ok, -1 not a number, -2 overflow. */
int
cf_parse_uint(const char *s, size_t n, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (max - (unsigned)(s[i] - '0')) / 10)
			return -2;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* A positive count such as processes, open_files, timeout_ms. */
int
cf_get_count(struct ctx *c, const struct ynode *v, const char *key, long max,
    long *out)
{
	unsigned long long u = 0;
	int r;

	if (cf_want_scalar(c, v, key, "a number") == -1)
		return -1;
	r = cf_parse_uint(v->s, v->len, (unsigned long long)max, &u);
	if (r == -1)
		return cf_err_node(c, v, "expected a whole number for '%s', got '%s'",
		    key, cf_quote(c, v->s));
	if (r == -2 || u == 0)
		return cf_err_node(c, v, "'%s' must be between 1 and %ld, got '%s'",
		    key, max, cf_quote(c, v->s));
	*out = (long)u;
	return 0;
}

/* A number with an optional unit letter, and what each letter multiplies by. */
struct unit {
	char			suffix;
	unsigned long long	mult;
};

/* v as a number times its unit: 0; -1 not a number; -2 larger than max. */
static int
scaled_uint(const struct ynode *v, const struct unit *units, unsigned long long max,
    unsigned long long *out)
{
	unsigned long long u, mult = 1;
	size_t n = v->len, i;
	int r;

	for (i = 0; n > 0 && units[i].suffix != '\0'; i++)
		if (v->s[n - 1] == units[i].suffix) {
			mult = units[i].mult;
			n--;
			break;
		}
	if ((r = cf_parse_uint(v->s, n, max, &u)) < 0)
		return r;
	if (u > max / mult)
		return -2;
	*out = u * mult;
	return 0;
}

/* "120", "90s", "2m", "1h", "1d" → seconds. */
int
cf_get_duration(struct ctx *c, const struct ynode *v, const char *key, long *out)
{
	static const struct unit units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { '\0', 0 }
	};
	unsigned long long u;
	int r;

	if (cf_want_scalar(c, v, key, "a duration") == -1)
		return -1;
	r = scaled_uint(v, units, (unsigned long long)MAX_DURATION, &u);
	if (r == -1)
		return cf_err_node(c, v, "invalid duration '%s' for '%s': write seconds "
		    "(120) or a number with s, m, h or d (90s, 2m, 1h, 1d)",
		    cf_quote(c, v->s), key);
	if (r == -2)
		return cf_err_node(c, v, "duration '%s' for '%s' is too long (at most "
		    "%ld seconds)", cf_quote(c, v->s), key, MAX_DURATION);
	if (u == 0)
		return cf_err_node(c, v, "'%s' must be positive (remove the key for "
		    "the default)", key);
	*out = (long)u;
	return 0;
}

/* "1048576", "512K", "1M", "1G", "1T" (binary multiples) → bytes. */
int
cf_get_size(struct ctx *c, const struct ynode *v, const char *key, long long *out)
{
	static const struct unit units[] = {
		{ 'K', 1ULL << 10 }, { 'k', 1ULL << 10 }, { 'M', 1ULL << 20 },
		{ 'G', 1ULL << 30 }, { 'T', 1ULL << 40 }, { '\0', 0 }
	};
	unsigned long long u;
	int r;

	if (cf_want_scalar(c, v, key, "a size") == -1)
		return -1;
	r = scaled_uint(v, units, (unsigned long long)LLONG_MAX, &u);
	if (r == -1)
		return cf_err_node(c, v, "invalid size '%s' for '%s': write bytes "
		    "(1048576) or a number with K, M, G or T (512K, 1M, 1G)",
		    cf_quote(c, v->s), key);
	if (r == -2)
		return cf_err_node(c, v, "size '%s' for '%s' is too large",
		    cf_quote(c, v->s), key);
	if (u == 0)
		return cf_err_node(c, v, "'%s' must be positive (remove the key for "
		    "the default)", key);
	*out = (long long)u;
	return 0;
}

static int
get_port(struct ctx *c, const struct ynode *v, const char *key, int *out)
{
	unsigned long long u;

	if (cf_want_scalar(c, v, key, "a port number") == -1)
		return -1;
	if (cf_parse_uint(v->s, v->len, 65535, &u) != 0 || u == 0)
		return cf_err_node(c, v, "invalid port '%s' in '%s': expected a number "
		    "from 1 to 65535", cf_quote(c, v->s), key);
	*out = (int)u;
	return 0;
}

int
cf_name_ok(const char *s, const char *extra)
{
	size_t i;

	if (s[0] == '\0' || strlen(s) > MAX_NAME)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' &&
		    s[i] != '.' && strchr(extra, s[i]) == NULL)
			return 0;
	return 1;
}

int
cf_env_name_ok(const char *s)
{
	size_t i;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Mappings and lists                                                  */

struct keyref {
	const struct ynode	*k;
	size_t			 order;
};

static int
keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int r = strcmp(x->k->s, y->k->s);

	if (r != 0)
		return r;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Find the first (in file order) key that repeats an earlier one.  Sorting
 * keeps this O(n log n) for large maps such as users.  Returns the repeat
 * and sets *first to the earlier one.
 */
int
cf_find_dup(struct ctx *c, const struct ynode *const *keys, size_t n, size_t stride,
    const struct ynode **dup, const struct ynode **first)
{
	struct keyref *r;
	size_t i, best = SIZE_MAX;

	*dup = *first = NULL;
	if (n < 2)
		return 0;
	if ((r = calloc(n, sizeof(*r))) == NULL)
		return cf_oom(c, keys[0]);
	for (i = 0; i < n; i++) {
		r[i].k = keys[i * stride];
		r[i].order = i;
	}
	qsort(r, n, sizeof(*r), keyref_cmp);
	for (i = 1; i < n; i++) {
		if (strcmp(r[i].k->s, r[i - 1].k->s) == 0 && r[i].order < best) {
			best = r[i].order;
			*dup = r[i].k;
			*first = r[i - 1].k;
		}
	}
	free(r);
	return 0;
}

/*
 * Check that m is a mapping with string keys, no duplicates and only known
 * keys (known == NULL: any key), then call fn for each pair in file order.
 * what: "in profile 'x'" for messages; noun: "key", "profile", "user".
 */
int
cf_walk_map(struct ctx *c, const struct ynode *m, const char *key, const char *what,
    const char *noun, const char *const *known, keyfn fn, void *arg)
{
	const struct ynode *dup, *first;
	size_t i, j;

	if (m->type != Y_MAP)
		return cf_err_node(c, m, "expected a mapping for '%s', got %s", key,
		    cf_kind_of(m));
	if (cf_find_dup(c, (const struct ynode *const *)m->kid, m->n / 2, 2, &dup,
	    &first) == -1)
		return -1;
	for (i = 0; i + 1 < m->n; i += 2) {
		const struct ynode *k = m->kid[i];

		if (k == dup)
			return cf_err_node(c, k, "duplicate %s '%s' %s (first at %d:%d)",
			    noun, cf_quote(c, k->s), what, first->line, first->col);
		if (cf_scalar_has_nul(k) || k->len == 0)
			return cf_err_node(c, k, "empty or invalid key %s", what);
		if (known != NULL) {
			for (j = 0; known[j] != NULL; j++)
				if (strcmp(known[j], k->s) == 0)
					break;
			if (known[j] == NULL)
				return cf_err_node(c, k, "unknown key '%s' %s%s",
				    cf_quote(c, k->s), what, cf_suggest(c, k->s, known));
		}
		if (fn(c, k->s, k, m->kid[i + 1], arg) == -1)
			return -1;
	}
	return 0;
}

struct fieldwalk {
	const struct cf_field	*fields;
	void			*base;
	void			*arg;
};

static int
read_field(struct ctx *c, const char *key, const struct ynode *k, const struct ynode *v,
    void *warg)
{
	const struct fieldwalk *w = warg;
	const struct cf_field *f;
	char *at;

	for (f = w->fields; f->key != NULL; f++)
		if (strcmp(f->key, key) == 0)
			break;
	if (f->key == NULL)
		return cf_unhandled(c, k, key);
	at = (char *)w->base + f->off;
	switch (f->type) {
	case CF_BOOL:
		return cf_get_bool(c, v, key, (int *)at);
	case CF_STRING:
	case CF_ABS_PATH:
	case CF_URL:
		/* a default the loader set goes; a key is never read twice */
		free(*(char **)at);
		*(char **)at = NULL;
		return f->type == CF_STRING ? cf_get_string(c, v, key, (char **)at) :
		    f->type == CF_ABS_PATH ? cf_get_abs_path(c, v, key, (char **)at) :
		    cf_get_url(c, v, key, (char **)at);
	case CF_DURATION:
		return cf_get_duration(c, v, key, (long *)at);
	case CF_SIZE:
		return cf_get_size(c, v, key, (long long *)at);
	case CF_COUNT:
		return cf_get_count(c, v, key, f->max, (long *)at);
	case CF_STRLIST:
		return cf_get_strlist(c, v, key, (struct ag_strlist *)at, f->item,
		    f->allow_empty);
	case CF_ENUM:
		return cf_get_enum(c, v, key, f->names, (int *)at);
	case CF_CUSTOM:
		if (f->read != NULL)
			return f->read(c, key, k, v, w->arg);
		break;
	}
	return cf_unhandled(c, k, key);
}

int
cf_walk_fields(struct ctx *c, const struct ynode *m, const char *key, const char *what,
    const struct cf_field *fields, void *base, void *arg)
{
	/* the largest table has 19 keys */
	const char *names[32];
	struct fieldwalk w = { fields, base, arg };
	size_t n;

	for (n = 0; fields[n].key != NULL && n < sizeof(names) / sizeof(names[0]) - 1; n++)
		names[n] = fields[n].key;
	names[n] = NULL;
	if (fields[n].key != NULL)
		return cf_err_node(c, m, "internal error: the table for '%s' is too long", key);
	return cf_walk_map(c, m, key, what, "key", names, read_field, &w);
}

/*
 * A key its list admits and its reader does not know: a programming
 * error, refused rather than stored in another key's field.
 */
int
cf_unhandled(struct ctx *c, const struct ynode *k, const char *key)
{
	return cf_err_node(c, k, "internal error: '%s' is a known key without a reader; "
	    "please report it", key);
}

const struct ynode *
cf_map_get(const struct ynode *m, const char *key)
{
	size_t i;

	if (m->type != Y_MAP)
		return NULL;
	for (i = 0; i + 1 < m->n; i += 2)
		if (strcmp(m->kid[i]->s, key) == 0)
			return m->kid[i + 1];
	return NULL;
}

/* A list of strings; check (may be NULL) validates each item. */
int
cf_get_strlist(struct ctx *c, const struct ynode *v, const char *key,
    struct ag_strlist *out, itemfn check, int allow_empty)
{
	size_t i;

	if (v->type != Y_SEQ) {
		if (v->type == Y_SCALAR && !cf_is_null(v))
			return cf_err_node(c, v, "expected a list of strings for '%s', "
			    "got a string (write [\"%s\"])", key, cf_quote(c, v->s));
		return cf_err_node(c, v, "expected a list of strings for '%s', got %s",
		    key, cf_kind_of(v));
	}
	if (v->n == 0 && !allow_empty)
		return cf_err_node(c, v, "'%s' is an empty list: name at least one "
		    "entry or remove the key", key);
	if ((out->v = calloc(v->n + 1, sizeof(char *))) == NULL ||
	    (v->n > 0 && (out->pos = calloc(v->n, sizeof(*out->pos))) == NULL))
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->kid[i];

		if (it->type != Y_SCALAR || cf_is_null(it))
			return cf_err_node(c, it, "expected a list of strings for '%s', "
			    "got %s in it", key, cf_kind_of(it));
		if (cf_scalar_has_nul(it))
			return cf_err_node(c, it, "'%s' contains a NUL character", key);
		if (check != NULL && check(c, it, key) == -1)
			return -1;
		if ((out->v[out->n] = strdup(it->s)) == NULL)
			return cf_oom(c, it);
		cf_pos(c, &out->pos[out->n], it);
		out->npos = ++out->n;
	}
	return 0;
}

void
cf_strlist_free(struct ag_strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->pos);
	l->v = NULL;
	l->pos = NULL;
	l->n = l->npos = 0;
}

int
cf_get_ports(struct ctx *c, const struct ynode *v, const char *key, int **out,
    size_t *nout)
{
	size_t i;

	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of ports for '%s', got %s",
		    key, cf_kind_of(v));
	if (v->n == 0)
		return 0;
	if ((*out = calloc(v->n, sizeof(int))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		if (get_port(c, v->kid[i], key, &(*out)[i]) == -1)
			return -1;
		*nout = i + 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Item checks                                                         */

/* Absolute, "~" or "~/...", and no ".." component (it would defeat prefix checks). */
int
cf_check_policy_path(struct ctx *c, const struct ynode *it, const char *key)
{
	const char *s = it->s;

	if (!(s[0] == '/' || strcmp(s, "~") == 0 || strncmp(s, "~/", 2) == 0))
		return cf_err_node(c, it, "path '%s' in '%s' must be absolute or start "
		    "with '~/'", cf_quote(c, s), key);
	if (ag_path_has_dotdot(s))
		return cf_err_node(c, it, "path '%s' in '%s' must not contain "
		    "'..'", cf_quote(c, s), key);
	return 0;
}

int
cf_check_env_name(struct ctx *c, const struct ynode *it, const char *key)
{
	if (!cf_env_name_ok(it->s))
		return cf_err_node(c, it, "'%s' in '%s' is not a valid environment "
		    "variable name", cf_quote(c, it->s), key);
	return 0;
}

int
cf_check_env_glob(struct ctx *c, const struct ynode *it, const char *key)
{
	if (it->len == 0 || strchr(it->s, '=') != NULL)
		return cf_err_node(c, it, "'%s' in '%s' is not a variable name or "
		    "pattern", cf_quote(c, it->s), key);
	return 0;
}

int
cf_check_option(struct ctx *c, const struct ynode *it, const char *key)
{
	if (it->s[0] != '-' || it->len < 2)
		return cf_err_node(c, it, "'%s' in '%s' is not an option (it must "
		    "start with '-')", cf_quote(c, it->s), key);
	return 0;
}

int
cf_check_word(struct ctx *c, const struct ynode *it, const char *key)
{
	size_t i;

	if (it->len == 0)
		return cf_err_node(c, it, "empty string in '%s'", key);
	for (i = 0; i < it->len; i++)
		if (isspace((unsigned char)it->s[i]))
			return cf_err_node(c, it, "'%s' in '%s' contains white space",
			    cf_quote(c, it->s), key);
	return 0;
}
