/*
 * pamconf.c - PAM service files as Linux-PAM reads them (pamconf.h).
 */
#include "agconfig.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/pamconf.h"
#include "auth/pamopts.h"
#include "common/err.h"
#include "common/misc.h"

#define LINE_MAX_LEN	4096	/* a longer line is not a module line the doctor judges */

struct walk {
	int	(*fn)(const struct ag_pam_line *, void *);
	void	*arg;
};

/* The next word of *pp, a [...] group being one word (controls and
 * arguments may hold spaces in brackets); NULL at the end. */
static char *
next_word(char **pp)
{
	char *p = *pp + strspn(*pp, " \t\r\n"), *end;

	if (*p == '\0')
		return NULL;
	if (*p == '[' && (end = strchr(p, ']')) != NULL)
		end++;
	else
		end = p + strcspn(p, " \t\r\n");
	if (*end != '\0')
		*end++ = '\0';
	*pp = end;
	return p;
}

static int
each_file(const char *path, int depth, int top_lineno, struct walk *w)
{
	char *buf = NULL, dir[PATH_MAX];
	size_t cap = 0;
	ssize_t n;
	FILE *fp;
	int rc = 0, lineno = 0;
	const char *slash;

	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	/* Linux-PAM looks for an @include'd name beside the file naming it */
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash != NULL ? (int)(slash - path) : 1,
	    slash != NULL ? path : ".");
	while (rc == 0 && (n = getline(&buf, &cap, fp)) >= 0) {
		struct ag_pam_line l;
		char *p = buf, *type, *a;

		lineno++;
		if (n > LINE_MAX_LEN)
			continue;
		p[strcspn(p, "#")] = '\0';
		if ((type = next_word(&p)) == NULL)
			continue;
		if (strcmp(type, "@include") == 0) {
			char inc[PATH_MAX];

			if (depth > 0 || (a = next_word(&p)) == NULL)
				continue;
			if ((size_t)snprintf(inc, sizeof(inc), "%s%s%s", *a == '/' ? "" : dir,
			    *a == '/' ? "" : "/", a) < sizeof(inc))
				rc = each_file(inc, 1, lineno, w);
			continue;
		}
		memset(&l, 0, sizeof(l));
		l.file = path;
		l.lineno = lineno;
		l.depth = depth;
		l.top_lineno = depth > 0 ? top_lineno : lineno;
		l.dash = *type == '-';
		l.type = type + l.dash;
		for (a = type; *a != '\0'; a++)
			*a = (char)tolower((unsigned char)*a);
		if ((l.control = next_word(&p)) == NULL || (l.module = next_word(&p)) == NULL)
			continue;
		while (l.argc < AG_PAMCONF_MAX_ARGS && (a = next_word(&p)) != NULL)
			l.argv[l.argc++] = a;
		rc = w->fn(&l, w->arg);
	}
	free(buf);
	fclose(fp);
	return rc;
}

int
ag_pam_each_line(const char *path, int (*fn)(const struct ag_pam_line *, void *), void *arg)
{
	struct walk w = { fn, arg };

	return each_file(path, 0, 0, &w);
}

int
ag_pam_line_is(const struct ag_pam_line *l, const char *module)
{
	return strcmp(ag_base_name(l->module), module) == 0;
}

int
ag_pam_line_has(const struct ag_pam_line *l, const char *arg)
{
	int i;

	for (i = 0; i < l->argc; i++)
		if (strcmp(l->argv[i], arg) == 0)
			return 1;
	return 0;
}

const char *
ag_pam_line_value(const struct ag_pam_line *l, const char *prefix)
{
	size_t n = strlen(prefix);
	int i;

	for (i = 0; i < l->argc; i++)
		if (strncmp(l->argv[i], prefix, n) == 0)
			return l->argv[i] + n;
	return NULL;
}

/* "FILE:LINE: type control module args" for a message. */
static void
line_text(const struct ag_pam_line *l, char *buf, size_t len)
{
	size_t used;
	int i;

	snprintf(buf, len, "%s:%d: %s%s %s %s", l->file, l->lineno, l->dash ? "-" : "",
	    l->type, l->control, l->module);
	for (i = 0; i < l->argc && (used = strlen(buf)) + 1 < len; i++)
		snprintf(buf + used, len - used, " %s", l->argv[i]);
}

static int
is_bind(const struct ag_pam_line *l, void *arg)
{
	struct ag_pam_bind *b = arg;
	const char *svc;

	if (strcmp(l->type, "session") != 0 || !ag_pam_line_is(l, "pam_agentgate.so") ||
	    !ag_pam_line_has(l, "bind"))
		return 0;
	svc = ag_pam_line_value(l, AG_PAM_SSHD_SERVICE_OPT);
	snprintf(b->service, sizeof(b->service), "%s", svc != NULL ? svc : AG_PAM_SSHD_SERVICE);
	snprintf(b->where, sizeof(b->where), "%s:%d", l->file, l->lineno);
	b->depth = l->depth;
	b->top = l->top_lineno;
	return 1;
}

int
ag_pam_find_bind(const char *path, struct ag_pam_bind *b)
{
	memset(b, 0, sizeof(*b));
	(void)ag_pam_each_line(path, is_bind, b);
	return b->top;
}

struct user_env {
	int	 before;
	char	*buf;
	size_t	 len;
};

static int
is_user_env(const struct ag_pam_line *l, void *arg)
{
	struct user_env *u = arg;
	const char *v = ag_pam_line_value(l, "user_readenv=");

	/* auth: sshd's pam_setcred, which may run before the session opens */
	if (!ag_pam_line_is(l, "pam_env.so") || v == NULL || strcmp(v, "1") != 0 ||
	    (strcmp(l->type, "auth") != 0 && strcmp(l->type, "session") != 0) ||
	    (strcmp(l->type, "session") == 0 && u->before > 0 && l->top_lineno >= u->before))
		return 0;
	line_text(l, u->buf, u->len);
	return l->top_lineno;
}

int
ag_pam_user_env_line(const char *path, int before_top, char *buf, size_t len)
{
	struct user_env u = { before_top, buf, len };

	return ag_pam_each_line(path, is_user_env, &u);
}

/* ---- does a refusal hold ------------------------------------------------- */

/* What pam_agentgate.so returns when it refuses (pam_agentgate.c). */
static const char *const refusals[] = {
	"auth_err", "authinfo_unavail", "maxtries", "service_err", "buf_err",
	"user_unknown", "perm_denied", "acct_expired", "cred_insufficient",
};

/* The action a [value=action ...] control gives value, into buf; NULL if none. */
static const char *
action(const char *control, const char *value, char *buf, size_t len)
{
	size_t vl = strlen(value);
	const char *p = control + 1;

	while (*p != '\0' && *p != ']') {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, " \t]");
		if (n > vl && strncmp(p, value, vl) == 0 && p[vl] == '=') {
			snprintf(buf, len, "%.*s", (int)(n - vl - 1), p + vl + 1);
			return buf;
		}
		p += n;
	}
	return NULL;
}

/* Some value of a [...] control ends the stack or jumps over lines. */
static int
any_action(const char *control, int (*pred)(const char *a, size_t n))
{
	const char *p = control + 1;

	while (*p != '\0' && *p != ']') {
		size_t n, eq;

		p += strspn(p, " \t");
		n = strcspn(p, " \t]");
		eq = strcspn(p, "=");
		if (eq < n && pred(p + eq + 1, n - eq - 1))
			return 1;
		p += n;
	}
	return 0;
}

static int
ends_or_jumps(const char *a, size_t n)
{
	return (n == 4 && strncmp(a, "done", 4) == 0) || (n > 0 && isdigit((unsigned char)*a));
}

static int
resets(const char *a, size_t n)
{
	return n == 5 && strncmp(a, "reset", 5) == 0;
}

/* Every refusal of the module fails the stack ("bad" or "die"), and none jumps. */
static int
decisive(const char *control)
{
	char buf[32];
	size_t i;

	if (strcmp(control, "required") == 0 || strcmp(control, "requisite") == 0)
		return 1;
	if (*control != '[')
		return 0;
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const char *a = action(control, refusals[i], buf, sizeof(buf));

		if (a == NULL)
			a = action(control, "default", buf, sizeof(buf));
		if (a == NULL || (strcmp(a, "bad") != 0 && strcmp(a, "die") != 0))
			return 0;
	}
	return 1;
}

struct judge {
	const char	*type;
	int		 ours;		/* a line of pam_agentgate.so in the phase */
	int		 holds;		/* a decisive one ran, nothing before it escaping */
	int		 escaped;	/* a line ran that can end the stack or jump */
	char		*buf;		/* why not, the first reason found */
	size_t		 len;
};

static void AG_PRINTF(3, 4)
reason(struct judge *j, const struct ag_pam_line *l, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	size_t used;

	if (j->buf[0] != '\0')
		return;
	line_text(l, text, sizeof(text));
	snprintf(j->buf, j->len, "%s: ", text);
	used = strlen(j->buf);
	va_start(ap, fmt);
	vsnprintf(j->buf + used, j->len - used, fmt, ap);
	va_end(ap);
}

static int
judge_line(const struct ag_pam_line *l, void *arg)
{
	struct judge *j = arg;
	int bracket = *l->control == '[';

	if (strcmp(l->type, j->type) != 0)
		return 0;
	if (bracket && any_action(l->control, resets)) {
		j->holds = 0;
		j->buf[0] = '\0';
		reason(j, l, "'reset' forgets a refusal before it");
		return 1;
	}
	if (ag_pam_line_is(l, "pam_agentgate.so")) {
		j->ours = 1;
		if (j->holds)
			return 0;
		if (l->dash)
			reason(j, l, "'-%s' skips the module when it does not load", l->type);
		else if (!decisive(l->control))
			reason(j, l, "a refusal there does not fail the stack (it must be "
			    "required or requisite, or bad/die for every failure)");
		else if (!j->escaped)
			j->holds = 1;
		return 0;
	}
	if (j->holds || j->escaped)
		return 0;
	if (strcmp(l->control, "sufficient") == 0 || (bracket &&
	    any_action(l->control, ends_or_jumps))) {
		j->escaped = 1;
		reason(j, l, "runs before pam_agentgate.so and can end the stack with success "
		    "or jump past it");
	} else if (strcmp(l->control, "include") == 0 || strcmp(l->control, "substack") == 0) {
		j->escaped = 1;
		reason(j, l, "runs before pam_agentgate.so a stack the doctor does not follow "
		    "(write its lines here)");
	}
	return 0;
}

int
ag_pam_refusal_holds(const char *path, const char *type, char *buf, size_t len)
{
	struct judge j = { type, 0, 0, 0, buf, len };

	buf[0] = '\0';
	if (ag_pam_each_line(path, judge_line, &j) == 0 && j.holds)
		return 0;
	if (!j.ours) {
		snprintf(buf, len, "no %s line of %s runs pam_agentgate.so", type, path);
		return -2;
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "no %s line of %s runs pam_agentgate.so so that a refusal "
		    "fails the stack", type, path);
	return -1;
}
