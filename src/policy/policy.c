/*
 * policy.c - the decision (see policy.h): every simple command, construct,
 * expansion and redirection in the tree is judged against the profile; the
 * line's verdict is the worst one found (deny > ask > allow) and its reason
 * the first refusal of that severity.
 *
 * The walk is conservative wherever bash's behaviour depends on something
 * the gateway cannot see (a variable's value, a glob's expansion, the
 * arguments xargs appends, the directory after a `cd` it cannot follow): in
 * those places the command is refused ("fail closed") with a reason that
 * says what to write instead.  One exception, in the developer tier only:
 * a relative redirection target or program path after a cd the gateway
 * cannot follow is left to the kernel sandbox, which confines every write
 * and exec of that tier (see check_path and check_command).
 *
 * `cd` is simulated along the line: after `cd DIR &&` (or `cd DIR || exit`)
 * the shell is in DIR; after `cd DIR;` in DIR or where it was.  Paths are
 * resolved as the kernel will open them; cd itself is logical, as bash's.
 *
 * Programs whose own arguments name files they write, checked like
 * redirections: tee FILE..., sed -i FILE..., sort -o F, cp/mv/install/ln
 * destinations (and mv sources), touch, mkdir, rm, rmdir, truncate,
 * dd of=F, time -o F, find -fprint/-fprint0/-fprintf/-fls, git --output=F
 * (and format-patch -o DIR), strace/ltrace -o F.  find -exec/-execdir/-ok
 * commands are checked as commands of their own.
 */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/envsan.h"
#include "common/log.h"
#include "policy/pathutil.h"
#include "policy/policy.h"
#include "common/strbuf.h"

#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define MAX_CWDS	8	/* possible working directories tracked after cd */
#define AG_ALLOWED_SHOWN 60 	/* of the allowed programs, in a refusal */
#define MAX_WRAP	16	/* wrappers inside wrappers */
#define MAX_ARGS_STACK	32

/* ---- verdicts ----------------------------------------------------------- */

static int
sev(enum ag_verdict v)
{
	return v == AG_DENY ? 2 : v == AG_ASK ? 1 : 0;
}

const char *
ag_verdict_name(enum ag_verdict v)
{
	switch (v) {
	case AG_ALLOW:
		return "allow";
	case AG_DENY:
		return "deny";
	case AG_ASK:
		return "ask";
	}
	return "deny";
}

/* ---- PATH lookup cache -------------------------------------------------- */

/*
 * A small direct-mapped cache of PATH lookups and realpath(3) results,
 * per thread, so a typical line costs no stat(2) at all.  Entries expire
 * after a second: an admin who installs a program sees it almost at once,
 * and nothing an agent can do inside that second changes which file a
 * PATH directory holds (PATH directories are not the agent's to write).
 */
#define PCACHE_SIZE	1024
#define PCACHE_TTL_MS	1000

struct pcache_ent {
	uint64_t	 key;
	char		*pathenv;	/* PATH the lookup used; "" for realpath entries */
	char		*name;
	char		*real;		/* NULL: not found */
	long long	 expires;
};

static __thread struct pcache_ent pcache[PCACHE_SIZE];

static long long
now_ms(void)
{
	struct timespec ts;

#ifdef CLOCK_MONOTONIC_COARSE
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
		return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t
fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	h ^= 0xff;
	h *= 1099511628211ULL;
	return h;
}

/* An executable regular file, as bash's search requires. */
static int
is_exec_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/*
 * Resolve name (no '/') through pathenv, or realpath an absolute path
 * (pathenv NULL).  0 and real filled when found; -1 not found; -2 when
 * PATH has a relative or empty entry, which would make the answer depend
 * on the directory the command runs in.
 */
static int
lookup_uncached(const char *pathenv, const char *name, char *real, size_t realsz)
{
	char buf[PATH_MAX], rp[PATH_MAX];
	const char *p, *e;

	if (pathenv == NULL) {
		if (!is_exec_file(name) || realpath(name, rp) == NULL)
			return -1;
		if (strlen(rp) >= realsz)
			return -1;
		strcpy(real, rp);
		return 0;
	}
	for (p = pathenv;; p = e + 1) {
		size_t n;
		int r;

		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n == 0 || p[0] != '/')
			return -2;
		r = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name);
		if (r > 0 && (size_t)r < sizeof(buf) && is_exec_file(buf) &&
		    realpath(buf, rp) != NULL && strlen(rp) < realsz) {
			strcpy(real, rp);
			return 0;
		}
		if (*e == '\0')
			break;
	}
	return -1;
}

static int
lookup(const char *pathenv, const char *name, char *real, size_t realsz)
{
	uint64_t key = fnv(fnv(1469598103934665603ULL, pathenv ? pathenv : ""), name);
	/* two-way: a name has two possible slots, so two hot names that
	 * hash alike do not evict each other on every line */
	struct pcache_ent *cand[2] = {
		&pcache[key % PCACHE_SIZE], &pcache[(key >> 32) % PCACHE_SIZE]
	};
	struct pcache_ent *ce;
	long long now = now_ms();
	int r, k;

	for (k = 0; k < 2; k++) {
		ce = cand[k];
		if (ce->name != NULL && ce->key == key && ce->expires > now &&
		    strcmp(ce->name, name) == 0 &&
		    strcmp(ce->pathenv, pathenv ? pathenv : "") == 0) {
			if (ce->real == NULL)
				return -1;
			if (strlen(ce->real) >= realsz)
				return -1;
			strcpy(real, ce->real);
			return 0;
		}
	}
	ce = cand[0]->name == NULL || cand[0]->expires <= cand[1]->expires ? cand[0] : cand[1];
	if (cand[1]->name == NULL)
		ce = cand[1];
	if (cand[0]->name == NULL)
		ce = cand[0];
	r = lookup_uncached(pathenv, name, real, realsz);
	if (r == -2)
		return -2;	/* not cached: depends on cwd */
	free(ce->pathenv);
	free(ce->name);
	free(ce->real);
	ce->pathenv = strdup(pathenv ? pathenv : "");
	ce->name = strdup(name);
	ce->real = r == 0 ? strdup(real) : NULL;
	ce->key = key;
	ce->expires = now + PCACHE_TTL_MS;
	if (ce->pathenv == NULL || ce->name == NULL || (r == 0 && ce->real == NULL)) {
		free(ce->pathenv);
		free(ce->name);
		free(ce->real);
		memset(ce, 0, sizeof(*ce));
	}
	return r;
}

/*
 * Resolved forms of the admin's own paths (home, paths.write/read
 * entries), cached like PATH lookups.  Never used for a command's targets,
 * which the command line itself may be about to change.
 */
#define RCACHE_SIZE 64

struct rcache_ent {
	char		*key;
	char		*val;
	long long	 expires;
};

static __thread struct rcache_ent rcache[RCACHE_SIZE];

static int
cached_resolve(const char *abs, char *out, size_t outsz)
{
	struct rcache_ent *ce = &rcache[fnv(1469598103934665603ULL, abs) % RCACHE_SIZE];
	long long now = now_ms();

	if (ce->key != NULL && ce->expires > now && strcmp(ce->key, abs) == 0 &&
	    strlen(ce->val) < outsz) {
		strcpy(out, ce->val);
		return 0;
	}
	if (ag_path_resolve(abs, out, outsz) < 0)
		return -1;
	free(ce->key);
	free(ce->val);
	ce->key = strdup(abs);
	ce->val = strdup(out);
	ce->expires = now + PCACHE_TTL_MS;
	if (ce->key == NULL || ce->val == NULL) {
		free(ce->key);
		free(ce->val);
		ce->key = ce->val = NULL;
	}
	return 0;
}

/* ---- builtins ----------------------------------------------------------- */

/* Sorted (strcmp order): looked up with bsearch on every command. */
static const char *const bash_builtins[] = {
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller",
	"cd", "command", "compgen", "complete", "compopt", "continue",
	"declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "getopts", "hash", "help", "history",
	"jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf",
	"pushd", "pwd", "read", "readarray", "readonly", "return", "set",
	"shift", "shopt", "source", "suspend", "test", "times", "trap", "true",
	"type", "typeset", "ulimit", "umask", "unalias", "unset", "wait",
	NULL
};

/* Allowed unless a profile denies them (design.md). */
static const char *const harmless_builtins[] = {
	"cd", "pwd", "echo", "printf", "test", "[", "true", "false", ":",
	"exit", "export", "unset", "pushd", "popd", "dirs",
	NULL
};

static int
in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (**l == *s && strcmp(*l, s) == 0)
			return 1;
	return 0;
}

static int
cmp_key(const void *k, const void *e)
{
	return strcmp((const char *)k, *(const char *const *)e);
}

static int
is_bash_builtin(const char *name)
{
	return bsearch(name, bash_builtins,
	    sizeof(bash_builtins) / sizeof(bash_builtins[0]) - 1,
	    sizeof(bash_builtins[0]), cmp_key) != NULL;
}

/* Wrappers unwrapped without being named in the profile. */
static const char *const safe_wrappers[] = {
	"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "time",
	NULL
};

/* Wrappers refused unless the profile names them. */
static const char *const risky_wrappers[] = {
	"sudo", "doas", "su", "chroot", "flock", "watch", "parallel", "script",
	"unbuffer", "strace", "ltrace", "gdb", "busybox", "pkexec", "runuser",
	"nsenter", "unshare", "firejail", "ionice", "chrt", "taskset", "numactl",
	"catchsegv", "valgrind", "expect", "ssh-agent", "dbus-launch",
	"systemd-run", "fakeroot", "proot",
	NULL
};

static int
is_loader(const char *base)
{
	return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld.so", 5) == 0 ||
	    strncmp(base, "ld64.so", 7) == 0 || strncmp(base, "ld-musl", 7) == 0;
}

/* ---- the walk's state --------------------------------------------------- */

/*
 * The directories the shell may be in at a point of the line.  d is where
 * it is (resolved: relative names are opened from there); l is bash's
 * $PWD for it, from which a later `cd ..` or `cd link/..` starts
 * (bash's cd is logical unless -P).
 */
struct cwdset {
	const char	*d[MAX_CWDS];
	const char	*l[MAX_CWDS];
	int		 n;
	int		 unknown;	/* a cd to somewhere the gateway cannot tell */
};

struct pending {		/* an arithmetic use to re-check once taint is known */
	char	*name;
	long	 cmd;
};

struct arg {
	const struct ag_sh_word	*w;
	char			*lit;	/* NULL: not a literal */
};

struct walker {
	const struct ag_policy_ctx	*ctx;
	const struct ag_profile		*prof;
	const struct ag_sh_node		*tree;
	const char			*src;
	size_t				 srclen;
	const char			*pathenv;
	enum ag_verdict			 unknown_v;

	struct ag_policy_cmd		*cmds;
	size_t				 ncmds, capcmds;
	long				 cur;		/* entry refusals attach to */
	const char			*cname;		/* construct name for a lazy entry */
	size_t				 coff;

	const struct cwdset		*cwd;
	struct cwdset			 cwd0;
	const struct cwdset		*cd_ok;		/* where the last cd goes when it
							 * succeeds; NULL: cannot tell */
	void				**owned;	/* freed at the end */
	size_t				 nowned, capowned;

	const char			**ints;		/* names assigned a literal integer */
	size_t				 nints, capints;
	struct pending			*pend;
	size_t				 npend, cappend;
	const char			**funcs;
	size_t				 nfuncs, capfuncs;

	char				*allowed_list;
	const char			*home;		/* normalised ctx->home, or NULL */
	char				 cwd0res[PATH_MAX];	/* ctx->cwd resolved, */
	int				 cwd0state;	/* once: 0 not yet, 1 ok, -1 failed */
	char				 homebuf[PATH_MAX];
	int				 wrap;
	int				 oom;
};

static void *
own(struct walker *w, void *p)
{
	void **n;

	if (p == NULL) {
		w->oom = 1;
		return NULL;
	}
	if (w->nowned == w->capowned) {
		size_t cap = w->capowned ? w->capowned * 2 : 16;

		n = realloc(w->owned, cap * sizeof(*n));
		if (n == NULL) {
			free(p);
			w->oom = 1;
			return NULL;
		}
		w->owned = n;
		w->capowned = cap;
	}
	w->owned[w->nowned++] = p;
	return p;
}

static int
push_ptr(struct walker *w, const char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		const char **nv = realloc((void *)*v, c * sizeof(*nv));

		if (nv == NULL) {
			w->oom = 1;
			return -1;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = s;
	return 0;
}

static const char *
env_get(const struct walker *w, const char *name)
{
	size_t n = strlen(name);
	char *const *e;

	if (w->ctx->env == NULL)
		return NULL;
	for (e = w->ctx->env; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static int
is_plain_int(const char *s, size_t n)
{
	size_t i = 0;

	if (n > 0 && (s[0] == '-' || s[0] == '+'))
		i++;
	if (i == n || n - i > 18)
		return 0;
	for (; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* A word whose value is a number: digits and signs, and $((...)) results. */
static int
word_is_int(const struct ag_sh_word *wd)
{
	size_t i, j, digits = 0;

	if (wd == NULL || wd->nparts == 0)
		return 0;
	for (i = 0; i < wd->nparts; i++) {
		const struct ag_sh_part *p = &wd->parts[i];

		if (p->type == AG_SH_P_ARITH) {
			digits++;
			continue;
		}
		if (p->type != AG_SH_P_LIT)
			return 0;
		for (j = 0; j < p->len; j++) {
			if (isdigit((unsigned char)p->text[j]))
				digits++;
			else if (p->text[j] != '-' && p->text[j] != '+')
				return 0;
		}
	}
	return digits > 0;
}

/* Builtins that assign the variables named in their arguments. */
static const char *const assigning_builtins[] = {
	"read", "mapfile", "readarray", "getopts", "declare", "typeset", "local",
	"export", "readonly", "printf", NULL
};

/* ---- entries and refusals ---------------------------------------------- */

static long
cmd_new(struct walker *w, const char *name, const char *path, size_t off, size_t end)
{
	struct ag_policy_cmd *c;

	if (w->ncmds == w->capcmds) {
		size_t cap = w->capcmds ? w->capcmds * 2 : 8;

		c = realloc(w->cmds, cap * sizeof(*c));
		if (c == NULL) {
			w->oom = 1;
			return -1;
		}
		w->cmds = c;
		w->capcmds = cap;
	}
	c = &w->cmds[w->ncmds];
	memset(c, 0, sizeof(*c));
	c->verdict = AG_ALLOW;
	c->off = off;
	if (name != NULL && (c->name = strdup(name)) == NULL)
		w->oom = 1;
	if (path != NULL && (c->path = strdup(path)) == NULL)
		w->oom = 1;
	if (w->src != NULL && end <= w->srclen) {
		while (end > off && (w->src[end - 1] == ' ' || w->src[end - 1] == '\t' ||
		    w->src[end - 1] == '\n'))
			end--;
		c->text = strndup(w->src + off, end > off ? end - off : 0);
	}
	if (c->text == NULL)
		c->text = strdup(name ? name : "");
	if (c->text == NULL)
		w->oom = 1;
	return (long)w->ncmds++;
}

static void
set_path(struct walker *w, long idx, const char *path)
{
	struct ag_policy_cmd *c;

	if (idx < 0 || (size_t)idx >= w->ncmds)
		return;
	c = &w->cmds[idx];
	free(c->path);
	c->path = path ? strdup(path) : NULL;
	if (path && c->path == NULL)
		w->oom = 1;
}

static void refuse(struct walker *w, enum ag_verdict v, const char *rule,
    const char *fmt, ...) AG_PRINTF(4, 5);

static void
refuse(struct walker *w, enum ag_verdict v, const char *rule, const char *fmt, ...)
{
	struct ag_policy_cmd *c;
	char buf[1800];
	va_list ap;
	int r;

	if (w->cur < 0) {
		w->cur = cmd_new(w, w->cname ? w->cname : "", "keyword", w->coff,
		    w->coff);
		if (w->cur < 0)
			return;
	}
	c = &w->cmds[w->cur];
	if (sev(v) <= sev(c->verdict))
		return;		/* keep the first reason of the worst kind */
	r = snprintf(buf, sizeof(buf), "%s: ", v == AG_ASK ? "ask" : "denied");
	va_start(ap, fmt);
	vsnprintf(buf + r, sizeof(buf) - (size_t)r, fmt, ap);
	va_end(ap);
	free(c->reason);
	free(c->rule);
	c->verdict = v;
	c->reason = strdup(buf);
	c->rule = strdup(rule);
	if (c->reason == NULL || c->rule == NULL)
		w->oom = 1;
}

static void allow_as(struct walker *w, const char *rule, const char *fmt, ...)
    AG_PRINTF(3, 4);

/* The current command is allowed by something other than an allow rule:
 * say what, unless something already refused it. */
static void
allow_as(struct walker *w, const char *rule, const char *fmt, ...)
{
	struct ag_policy_cmd *c;
	char buf[1024];
	va_list ap;

	if (w->cur < 0 || (size_t)w->cur >= w->ncmds)
		return;
	c = &w->cmds[w->cur];
	if (c->rule != NULL || c->verdict != AG_ALLOW)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->rule = strdup(rule);
	c->reason = strdup(buf);
	if (c->rule == NULL || c->reason == NULL)
		w->oom = 1;
}

/* Short, printable excerpt of source text for messages. */
static const char *
excerpt(const char *s, char *buf, size_t bufsz)
{
	size_t i, j = 0;

	if (s == NULL)
		return "";
	for (i = 0; s[i] && j + 4 < bufsz; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[j++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
		/* never cut inside a UTF-8 sequence */
		if (j >= 60 && ((unsigned char)s[i + 1] & 0xc0) == 0x80)
			continue;
		if (j >= 60 && s[i + 1]) {
			memcpy(buf + j, "...", 3);
			j += 3;
			break;
		}
	}
	buf[j] = '\0';
	return buf;
}

static const char *
rule_id(const struct walker *w, const struct ag_rule *r, int deny, size_t i,
    char *buf, size_t bufsz)
{
	if (r->id != NULL)
		return r->id;
	snprintf(buf, bufsz, "profiles.%s.%s[%zu]", w->prof->name ? w->prof->name : "?",
	    deny ? "deny" : "allow", i);
	return buf;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "cat, git (status|log), grep, ls": built on the first refusal and kept
 * per thread, keyed by the rules' content (cheap to hash, dear to sort).
 */
static __thread struct {
	uint64_t	 key;
	char		*list;
} alcache;

static const char *
allowed_list(struct walker *w)
{
	struct ag_strbuf sb;
	char **items;
	size_t i, j, n = 0;
	uint64_t key = 1469598103934665603ULL;

	if (w->allowed_list != NULL)
		return w->allowed_list;
	for (i = 0; i < w->prof->nallow; i++) {
		const struct ag_rule *r = &w->prof->allow[i];

		key = fnv(key, r->command ? r->command : "");
		for (j = 0; j < r->subcommands.n; j++)
			key = fnv(key, r->subcommands.v[j]);
		key = fnv(key, "\n");
	}
	if (alcache.list != NULL && alcache.key == key)
		return alcache.list;
	items = calloc(w->prof->nallow + 1, sizeof(*items));
	if (items == NULL) {
		w->oom = 1;
		return "";
	}
	for (i = 0; i < w->prof->nallow; i++) {
		const struct ag_rule *r = &w->prof->allow[i];

		ag_strbuf_init(&sb, 512);
		if (r->command == NULL)
			continue;
		ag_strbuf_addstr(&sb, r->command);
		if (r->subcommands.n > 0) {
			ag_strbuf_addstr(&sb, " (");
			for (j = 0; j < r->subcommands.n; j++) {
				if (j)
					ag_strbuf_addch(&sb, '|');
				ag_strbuf_addstr(&sb, r->subcommands.v[j]);
			}
			ag_strbuf_addch(&sb, ')');
		}
		items[n] = ag_strbuf_detach(&sb, NULL);
		if (items[n] != NULL)
			n++;
	}
	qsort(items, n, sizeof(*items), cmp_str);
	ag_strbuf_init(&sb, 1200);
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(items[i], items[i - 1]) == 0)
			continue;
		if (sb.len > 0 && ag_strbuf_addstr(&sb, ", ") < 0)
			break;
		if (ag_strbuf_addstr(&sb, items[i]) < 0) {
			ag_strbuf_reset(&sb);
			break;
		}
	}
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
	if (sb.len == 0)
		ag_strbuf_addstr(&sb, n ? "(too many to list)" : "nothing");
	w->allowed_list = ag_strbuf_detach(&sb, NULL);
	if (w->allowed_list == NULL) {
		w->oom = 1;
		return "";
	}
	/* hand it to the cache; the walker keeps only a borrowed pointer */
	free(alcache.list);
	alcache.list = w->allowed_list;
	alcache.key = key;
	return w->allowed_list;
}

static void
refuse_unknown(struct walker *w, const char *name, const char *why)
{
	const char *list = allowed_list(w);
	size_t len = strlen(list), cut, n = 1, i;
	char ex[80];

	/* a refusal is read on every miss: a long list is cut at a program
	 * boundary, with how many there are */
	if (len <= AG_ALLOWED_SHOWN) {
		refuse(w, w->unknown_v, "unknown",
		    "'%s' is not allowed in profile '%s'%s; allowed here: %s",
		    excerpt(name, ex, sizeof(ex)), w->prof->name ? w->prof->name : "?",
		    why ? why : "", list);
		return;
	}
	for (cut = AG_ALLOWED_SHOWN; cut > 0 && strncmp(list + cut, ", ", 2) != 0; cut--)
		;
	for (i = 0; i + 1 < len; i++)
		n += list[i] == ',' && list[i + 1] == ' ';
	refuse(w, w->unknown_v, "unknown",
	    "'%s' is not allowed in profile '%s'%s; allowed here: %.*s, ... (%zu in all)",
	    excerpt(name, ex, sizeof(ex)), w->prof->name ? w->prof->name : "?",
	    why ? why : "", (int)cut, list, n);
}

/* ---- features ----------------------------------------------------------- */

static int
feature_ok(struct walker *w, enum ag_feature f, const char *key, const char *what)
{
	char rule[64];

	if (f == AG_FEATURE_ALLOW)
		return 1;
	snprintf(rule, sizeof(rule), "feature:%s", key);
	refuse(w, AG_DENY, rule, "%s is turned off in profile '%s' (features.%s: deny)",
	    what, w->prof->name ? w->prof->name : "?", key);
	return 0;
}

/* ---- working directory tracking ---------------------------------------- */

/*
 * The session's cwd, resolved, remembered per thread and checked again on
 * every use with one stat(2): the same device and inode as when it was
 * resolved means the same directory, whatever happened to the symlinks on
 * the way to it, so the resolved name still names it.
 */
static __thread struct {
	char	cwd[PATH_MAX];
	char	res[PATH_MAX];
	dev_t	dev;
	ino_t	ino;
	int	valid;
} cwdcache;

static int
resolve_session_cwd(const char *cwd, char *out, size_t outsz)
{
	struct stat st, st2;

	if (stat(cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		return ag_path_resolve(cwd, out, outsz);
	if (cwdcache.valid && strcmp(cwdcache.cwd, cwd) == 0 &&
	    cwdcache.dev == st.st_dev && cwdcache.ino == st.st_ino &&
	    strlen(cwdcache.res) < outsz) {
		strcpy(out, cwdcache.res);
		return 0;
	}
	if (ag_path_resolve(cwd, out, outsz) < 0)
		return -1;
	/* only a name that leads to that same directory is remembered */
	if (strlen(cwd) < sizeof(cwdcache.cwd) && strlen(out) < sizeof(cwdcache.res) &&
	    stat(out, &st2) == 0 && st2.st_dev == st.st_dev && st2.st_ino == st.st_ino) {
		strcpy(cwdcache.cwd, cwd);
		strcpy(cwdcache.res, out);
		cwdcache.dev = st.st_dev;
		cwdcache.ino = st.st_ino;
		cwdcache.valid = 1;
	}
	return 0;
}

/*
 * Resolve p as seen from directory dir (one of w->cwd's): abs gets the
 * lexical absolute path, res the file the kernel will open, resolved
 * component by component ("lnk/.." is the parent of lnk's target, as for
 * open(2) and execve(2), not the directory holding lnk).  Directories in
 * the cwd set are resolved already, except the session's own cwd, which is
 * resolved once per decision, so a relative name costs only its own
 * components.
 */
static int
resolve_in(struct walker *w, const char *dir, const char *p, char *abs, size_t abssz,
    char *res, size_t ressz)
{
	char raw[PATH_MAX * 2];
	int r;

	if (ag_path_absolute(p, dir, w->home, abs, abssz) < 0)
		return -1;
	if (p[0] != '/' && p[0] != '~') {
		const char *base = dir;

		if (dir == w->ctx->cwd) {
			if (w->cwd0state == 0)
				w->cwd0state = resolve_session_cwd(dir, w->cwd0res,
				    sizeof(w->cwd0res)) == 0 ? 1 : -1;
			base = w->cwd0state == 1 ? w->cwd0res : NULL;
		}
		if (base != NULL)
			return ag_path_resolve_under(base, p, res, ressz);
		r = snprintf(raw, sizeof(raw), "%s/%s", dir, p);
	} else if (p[0] == '~')
		r = snprintf(raw, sizeof(raw), "%s%s", w->home, p + 1);	/* "~", "~/..." */
	else
		r = snprintf(raw, sizeof(raw), "%s", p);
	if (r < 0 || (size_t)r >= sizeof(raw)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* not abs: its ".." were taken lexically */
	return ag_path_resolve(raw, res, ressz);
}

/* Add (d, l) to ns unless there; 0 ok, -1 when the set is full (unknown). */
static int
cwd_add(struct cwdset *ns, const char *d, const char *l)
{
	int k;

	for (k = 0; k < ns->n; k++)
		if (strcmp(ns->d[k], d) == 0 && strcmp(ns->l[k], l) == 0)
			return 0;
	if (ns->n >= MAX_CWDS) {
		ns->unknown = 1;
		return -1;
	}
	ns->d[ns->n] = d;
	ns->l[ns->n++] = l;
	return 0;
}

/* The directories of both sets (the shell may be in any of them). */
static const struct cwdset *
cwd_union(struct walker *w, const struct cwdset *a, const struct cwdset *b)
{
	struct cwdset *ns;
	int i;

	if (a == b)
		return a;
	if ((ns = own(w, calloc(1, sizeof(*ns)))) == NULL)
		return b;
	*ns = *a;
	for (i = 0; !ns->unknown && i < b->n; i++)
		(void)cwd_add(ns, b->d[i], b->l[i]);
	ns->unknown |= b->unknown;
	return ns;
}

/*
 * A cd (or pushd) to target from every directory the shell may be in;
 * target NULL: somewhere the gateway cannot tell.  physical: `cd -P`.
 * w->cd_ok becomes the set of where the shell is when the cd succeeded,
 * w->cwd that set and the old one (cd may fail).
 *
 * bash's cd first tries the logical name ($PWD/target with ".." taken
 * lexically) and, when that is no directory, the name as the kernel sees
 * it; which one exists may change before the cd runs (a mkdir earlier in
 * the line), so when they differ both count.
 */
static void
cwd_change(struct walker *w, const char *target, int physical)
{
	struct cwdset *ns;
	const struct cwdset *os = w->cwd;
	int i;

	w->cd_ok = NULL;
	ns = own(w, calloc(1, sizeof(*ns)));
	if (ns == NULL)
		return;
	if (target == NULL || os->unknown) {
		*ns = *os;
		ns->unknown = 1;
		w->cwd = ns;
		return;
	}
	for (i = 0; i < os->n; i++) {
		char abs[PATH_MAX], res[PATH_MAX], lres[PATH_MAX];
		char *d, *l;

		if (resolve_in(w, os->d[i], target, abs, sizeof(abs), res, sizeof(res)) < 0)
			goto unknown;
		if ((d = own(w, strdup(res))) == NULL)
			return;
		if (!physical) {
			if (ag_path_absolute(target, os->l[i], w->home, abs, sizeof(abs)) < 0 ||
			    ag_path_resolve(abs, lres, sizeof(lres)) < 0)
				goto unknown;
			if ((l = own(w, strdup(abs))) == NULL)
				return;
			if (strcmp(lres, res) != 0) {
				char *ld = own(w, strdup(lres));

				if (ld == NULL)
					return;
				if (cwd_add(ns, ld, l) < 0)
					goto unknown;
				l = d;	/* the fallback: bash takes $PWD from getcwd */
			}
		} else
			l = d;
		if (cwd_add(ns, d, l) < 0)
			goto unknown;
	}
	w->cd_ok = ns;
	w->cwd = cwd_union(w, os, ns);
	return;
unknown:
	ns->unknown = 1;
	w->cwd = cwd_union(w, os, ns);
}

/* A plain `cd DIR` or `pushd DIR` as a whole list element. */
static int
is_plain_cd(const struct ag_sh_node *n)
{
	const char *r;

	if (n == NULL || n->type != AG_SH_SIMPLE || n->nwords < 2 || n->nassigns > 0 ||
	    n->nredirs > 0)
		return 0;
	r = n->words[0]->raw ? n->words[0]->raw : "";
	return strcmp(r, "cd") == 0 || strcmp(r, "pushd") == 0;
}

/* A bare `exit [N]` or `return [N]`. */
static int
is_exit(const struct ag_sh_node *n)
{
	const char *r;

	if (n == NULL || n->type != AG_SH_SIMPLE || n->nwords < 1 || n->nwords > 2)
		return 0;
	r = n->words[0]->raw ? n->words[0]->raw : "";
	return strcmp(r, "exit") == 0 || strcmp(r, "return") == 0;
}

static int is_function(const struct walker *w, const char *name);

/*
 * After walking list element n: 1 when it was a plain cd whose success
 * the gateway can place (w->cd_ok), and no function of that name could
 * run instead of the builtin.
 */
static int
cd_succeeded(const struct walker *w, const struct ag_sh_node *n)
{
	return w->cd_ok != NULL && is_plain_cd(n) && !is_function(w, "cd") &&
	    !is_function(w, "pushd");
}

static void walk_node(struct walker *w, const struct ag_sh_node *n);

/* The elements of an && chain in order, however the parser nested them;
 * *any collects every directory set a failure could leave behind. */
static void
walk_and(struct walker *w, const struct ag_sh_node *n, const struct cwdset **any)
{
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i] != NULL && n->kids[i]->type == AG_SH_AND) {
			walk_and(w, n->kids[i], any);
			continue;
		}
		w->cd_ok = NULL;
		walk_node(w, n->kids[i]);
		*any = cwd_union(w, *any, w->cwd);
		if (cd_succeeded(w, n->kids[i]))
			w->cwd = w->cd_ok;
	}
}

/* 1 when the subtree runs cd/pushd/popd in the current shell. */
static int
has_cd(const struct ag_sh_node *n)
{
	size_t i;

	if (n == NULL)
		return 0;
	if (n->type == AG_SH_SIMPLE) {
		for (i = 0; i < n->nwords; i++) {
			const char *r = n->words[i]->raw;

			if (r == NULL)
				continue;
			if (strcmp(r, "cd") == 0 || strcmp(r, "pushd") == 0 ||
			    strcmp(r, "popd") == 0)
				return 1;
			/* a quoted or expanded name could still be cd */
			if (i == 0 && strpbrk(r, "'\"\\$`") != NULL)
				return 1;
		}
		return 0;
	}
	for (i = 0; i < n->nkids; i++)
		if (has_cd(n->kids[i]))
			return 1;
	for (i = 0; i < n->nitems; i++)
		if (has_cd(n->items[i].body))
			return 1;
	return 0;
}

/* ---- paths -------------------------------------------------------------- */

static const char *const protect_builtin[] = {
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout",
	"~/.bash_aliases", "~/.profile", "~/.inputrc", "~/.ssh/**",
	"~/.gitconfig", "~/.config/git/**", "~/.zshrc", "~/.zshenv",
	"~/.zprofile", "~/.zlogin", "~/.zlogout", "~/.config/fish/**",
	"~/.pam_environment", "~/.config/environment.d/**", "~/.config/autostart/**",
	"~/.config/systemd/**", "~/.local/bin/**", "~/bin/**", "~/.xprofile",
	"~/.xsessionrc", "~/.curlrc", "~/.wgetrc", "~/.netrc", "~/.npmrc",
	"~/.pypirc", "~/.vimrc", "~/.exrc", "~/.lesskey", "~/.gnupg/**",
	"~/.forward", "~/.config/pip/**", "~/.cargo/config*",
	"**/.git/config", "**/.git/config.worktree", "**/.git/hooks/**",
	"**/.git/info/attributes", "**/.git/worktrees/*/config*",
	"**/.gitattributes", "**/.gitmodules", "**/.envrc",
	NULL
};

const char *const *
ag_policy_protected(void)
{
	return protect_builtin;
}

const char *const *
ag_policy_wrappers(void)
{
	return safe_wrappers;
}

/* Expand a list entry: "~" and "~/x" from home; relative entries are
 * taken relative to home as well (documented in agentgate.yaml(5)). */
static int
expand_entry(const char *e, const char *home, char *out, size_t outsz)
{
	int r;

	if (home != NULL && strcmp(home, "/") == 0)
		home = "";
	if (e[0] == '~' && e[1] == '\0')
		r = snprintf(out, outsz, "%s", home ? (*home ? home : "/") : "/nonexistent");
	else if (e[0] == '~' && e[1] == '/')
		r = snprintf(out, outsz, "%s%s", home ? home : "/nonexistent", e + 1);
	else if (e[0] == '/' || (e[0] == '*' && e[1] == '*'))
		r = snprintf(out, outsz, "%s", e);
	else
		r = snprintf(out, outsz, "%s/%s", home ? home : "/nonexistent", e);
	return (r < 0 || (size_t)r >= outsz) ? -1 : 0;
}

/* 1 when abs (resolved) is inside one of the list's entries. */
static int
inside_list(const struct walker *w, const struct ag_strlist *l, const char *abs)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		char e[PATH_MAX], r[PATH_MAX];

		if (expand_entry(l->v[i], w->home, e, sizeof(e)) < 0)
			continue;
		if (ag_path_inside(abs, e))
			return 1;
		/* the entry itself may sit behind a symlink (/tmp → /private/tmp) */
		if (!ag_path_has_glob(e) && cached_resolve(e, r, sizeof(r)) == 0 &&
		    strcmp(r, e) != 0 && ag_path_inside(abs, r))
			return 1;
	}
	return 0;
}

/*
 * Cheap test that a protect pattern could match abs or an ancestor, so
 * the common write (somewhere in the work tree) skips most glob matching.
 * Errs towards 1.
 */
static int
protect_prefilter(const char *pat, const char *abs, const char *home)
{
	const char *lit, *g;
	size_t hl, ll;

	if (pat[0] == '~' && (pat[1] == '/' || pat[1] == '\0')) {
		if (home == NULL)
			return 1;
		hl = strcmp(home, "/") == 0 ? 0 : strlen(home);
		if (strncmp(abs, home, hl) != 0)
			return 0;
		lit = pat + 1;
		abs += hl;
	} else if (pat[0] == '*' && pat[1] == '*') {
		lit = pat + 2;
		g = strpbrk(lit, "*?[\\");
		ll = g ? (size_t)(g - lit) : strlen(lit);
		while (ll > 0 && lit[ll - 1] == '/')
			ll--;
		return ll == 0 || memmem(abs, strlen(abs), lit, ll) != NULL;
	} else
		return 1;
	g = strpbrk(lit, "*?[\\");
	ll = g ? (size_t)(g - lit) : strlen(lit);
	while (ll > 0 && lit[ll - 1] == '/')
		ll--;
	return strncmp(abs, lit, ll) == 0;
}

static const char *
protected_by(const struct walker *w, const char *abs)
{
	char e[PATH_MAX], rhome[PATH_MAX], alt[PATH_MAX];
	const char *home = w->home;
	int have_rhome;
	size_t i;

	have_rhome = home && home[0] == '/' &&
	    cached_resolve(home, rhome, sizeof(rhome)) == 0 && strcmp(rhome, home) != 0;
	for (i = 0; protect_builtin[i]; i++) {
		const char *p = protect_builtin[i];

		if (protect_prefilter(p, abs, home) && expand_entry(p, home, e,
		    sizeof(e)) == 0 && ag_path_inside(abs, e))
			return p;
		if (have_rhome && protect_prefilter(p, abs, rhome) &&
		    expand_entry(p, rhome, alt, sizeof(alt)) == 0 && ag_path_inside(abs, alt))
			return p;
	}
	for (i = 0; i < w->prof->paths_protect.n; i++) {
		const char *p = w->prof->paths_protect.v[i];

		if (expand_entry(p, home, e, sizeof(e)) == 0 && ag_path_inside(abs, e))
			return p;
		if (have_rhome && expand_entry(p, rhome, alt, sizeof(alt)) == 0 &&
		    ag_path_inside(abs, alt))
			return p;
	}
	return NULL;
}

/*
 * 1 when abs is a directory above a protected path (".../.git" for the
 * pattern of .git/config in any directory, home for ~/.ssh): moving or
 * recursively copying
 * a directory there would put files at the protected place.
 */
static const char *
protected_below(const struct walker *w, const char *abs)
{
	const char *home = w->home;
	size_t i, n = 0, k;
	const char *pats[128];
	char e[PATH_MAX];

	for (i = 0; protect_builtin[i] && n < 128; i++)
		pats[n++] = protect_builtin[i];
	for (i = 0; i < w->prof->paths_protect.n && n < 128; i++)
		pats[n++] = w->prof->paths_protect.v[i];
	for (k = 0; k < n; k++) {
		char *sl;

		if (expand_entry(pats[k], home, e, sizeof(e)) < 0)
			continue;
		/* every proper prefix that ends before a '/' */
		for (sl = strchr(e + 1, '/'); sl != NULL; sl = strchr(sl + 1, '/')) {
			char save = *sl;
			int only_stars;

			*sl = '\0';
			only_stars = strspn(e, "*/") == strlen(e);
			if (!only_stars && ag_path_glob_match(e, abs)) {
				*sl = save;
				return pats[k];
			}
			*sl = save;
		}
	}
	return NULL;
}

static void
list_text(const struct ag_strlist *l, char *buf, size_t bufsz)
{
	size_t i, j = 0;

	buf[0] = '\0';
	for (i = 0; i < l->n && j + 8 < bufsz; i++) {
		int r = snprintf(buf + j, bufsz - j, "%s%s", i ? ", " : "", l->v[i]);

		if (r < 0 || (size_t)r >= bufsz - j) {
			buf[j] = '\0';
			break;
		}
		j += (size_t)r;
	}
	if (l->n == 0)
		snprintf(buf, bufsz, "none");
}

enum access { ACC_READ = 1, ACC_WRITE = 2, ACC_TREE = 4 /* a whole directory lands here */ };

static int
is_always_ok_dev(const char *p)
{
	return strcmp(p, "/dev/null") == 0 || strcmp(p, "/dev/stdout") == 0 ||
	    strcmp(p, "/dev/stderr") == 0 || strcmp(p, "/dev/stdin") == 0 ||
	    strcmp(p, "/dev/tty") == 0 || strcmp(p, "/dev/zero") == 0 ||
	    (strncmp(p, "/dev/fd/", 8) == 0 && p[8] != '\0' &&
	    strspn(p + 8, "0123456789") == strlen(p + 8));
}

/* The developer tier's /tmp is the session's own tmpfs (sandbox.c). */
static int
in_private_tmp(const char *res)
{
	return strcmp(res, "/tmp") == 0 || strncmp(res, "/tmp/", 5) == 0;
}

/*
 * Check one file access at literal path p (relative to base, or to every
 * directory the shell may be in).  what: "writing to" / "reading".
 */
static void
check_path(struct walker *w, const char *p, int acc, const char *base)
{
	char abs[PATH_MAX], res[PATH_MAX], ex[80], lt[400];
	const struct cwdset *cs = w->cwd;
	const char *prot;
	int i, n;

	if (p[0] == '\0') {
		refuse(w, AG_DENY, "path", "an empty file name cannot be checked");
		return;
	}
	/* bash opens these names itself, without the file system */
	if (strncmp(p, "/dev/tcp/", 9) == 0 || strncmp(p, "/dev/udp/", 9) == 0) {
		refuse(w, AG_DENY, "path:network",
		    "'%s' opens a network connection from bash itself; use an allowed program instead",
		    excerpt(p, ex, sizeof(ex)));
		return;
	}
	if (is_always_ok_dev(p))
		return;
	if (p[0] != '/' && !(p[0] == '~' && (p[1] == '\0' || p[1] == '/')) &&
	    base == NULL && cs->unknown) {
		/*
		 * Developer tier only: its kernel sandbox confines every write
		 * to paths.write and the private /tmp and binds the protected
		 * files beneath them read-only, so a relative target the
		 * gateway cannot place is left to it, not refused.  (A whole
		 * tree landing here could cover a protected path below it:
		 * still refused.)  The strict tier refuses.
		 */
		if (w->prof->tier == AG_TIER_DEVELOPER && !(acc & ACC_TREE))
			return;
		refuse(w, AG_DENY, "path:cwd",
		    "cannot tell which directory '%s' is relative to after a 'cd' in the same line; use an absolute path",
		    excerpt(p, ex, sizeof(ex)));
		return;
	}
	n = (base != NULL || p[0] == '/' || p[0] == '~') ? 1 : cs->n;
	for (i = 0; i < n; i++) {
		const char *dir = base ? base : cs->d[i];

		if (resolve_in(w, dir, p, abs, sizeof(abs), res, sizeof(res)) < 0) {
			refuse(w, AG_DENY, "path", "cannot resolve the path '%s' (%s)",
			    excerpt(p, ex, sizeof(ex)), strerror(errno));
			return;
		}
		if (strncmp(abs, "/dev/tcp/", 9) == 0 || strncmp(abs, "/dev/udp/", 9) == 0) {
			refuse(w, AG_DENY, "path:network",
			    "'%s' opens a network connection from bash itself",
			    excerpt(p, ex, sizeof(ex)));
			return;
		}
		if (is_always_ok_dev(abs) || is_always_ok_dev(res))
			continue;
		if (acc & ACC_WRITE) {
			prot = protected_by(w, res);
			if (prot == NULL && strcmp(res, abs) != 0)
				prot = protected_by(w, abs);
			if (prot == NULL && (acc & ACC_TREE))
				prot = protected_below(w, res);
			if (prot != NULL) {
				refuse(w, AG_DENY, "path:protect",
				    "writing to '%s' is not allowed: it matches the protected path '%s' (files that shells, ssh or git later run or read)",
				    excerpt(res, ex, sizeof(ex)), prot);
				return;
			}
			if (!inside_list(w, &w->prof->paths_write, res) &&
			    !(w->prof->tier == AG_TIER_DEVELOPER && in_private_tmp(res))) {
				list_text(&w->prof->paths_write, lt, sizeof(lt));
				refuse(w, AG_DENY, "path:write",
				    "writing to '%s' is outside paths.write (%s)",
				    excerpt(res, ex, sizeof(ex)), lt);
				return;
			}
		}
		if ((acc & ACC_READ) && !inside_list(w, &w->prof->paths_read, res)) {
			list_text(&w->prof->paths_read, lt, sizeof(lt));
			refuse(w, AG_DENY, "path:read",
			    "reading '%s' is outside paths.read (%s)",
			    excerpt(res, ex, sizeof(ex)), lt);
			return;
		}
	}
}

/*
 * A word usable as a file name: a literal, or "~"/"~/..." followed by
 * literal text.  Returns malloc'd text or NULL.
 */
static char *
word_path(const struct ag_sh_word *wd)
{
	char *lit = ag_sh_word_literal(wd, NULL);
	struct ag_strbuf sb;
	size_t i;

	if (lit != NULL || wd->nparts == 0)
		return lit;
	if (wd->parts[0].type != AG_SH_P_TILDE || wd->parts[0].text == NULL ||
	    wd->parts[0].text[0] != '\0')
		return NULL;
	ag_strbuf_init(&sb, PATH_MAX);
	ag_strbuf_addch(&sb, '~');
	for (i = 1; i < wd->nparts; i++) {
		if (wd->parts[i].type != AG_SH_P_LIT ||
		    ag_strbuf_append(&sb, wd->parts[i].text, wd->parts[i].len) < 0) {
			ag_strbuf_free(&sb);
			return NULL;
		}
	}
	if (sb.len > 1 && sb.data[1] != '/') {
		ag_strbuf_free(&sb);
		return NULL;
	}
	return ag_strbuf_detach(&sb, NULL);
}

/* An argument "~/x" is what the program receives as HOME/x: expand it. */
static char *
tilde_arg(const struct walker *w, const struct ag_sh_word *wd)
{
	char *p = word_path(wd), *r;
	size_t n;

	if (p == NULL || p[0] != '~')
		return p;
	if (w->home == NULL || w->home[0] != '/') {
		free(p);
		return NULL;
	}
	n = strlen(w->home) + strlen(p);
	r = malloc(n);
	if (r != NULL)
		snprintf(r, n, "%s%s", w->home, p + 1);
	free(p);
	return r;
}

/* ---- arithmetic --------------------------------------------------------- */

static int
is_int_special(const char *name)
{
	static const char *const s[] = {
		"?", "#", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO",
		"EPOCHSECONDS", "BASHPID", "PPID", "UID", "EUID", NULL
	};

	return in_list(s, name);
}

/*
 * Variables bash sets itself, some from text an agent controls ("_" is
 * the previous command's last argument, PWD a directory name, REPLY what
 * read read): their value before the line runs is never known.
 */
static int
bash_owned(const char *name)
{
	static const char *const own_vars[] = {
		"_", "REPLY", "MAPFILE", "OPTARG", "PWD", "OLDPWD", "HOSTNAME",
		"HOSTTYPE", "MACHTYPE", "OSTYPE", "PS1", "PS2", "PS3", "PS4",
		"SHELLOPTS", "IFS", "FUNCNAME", "DIRSTACK", "PIPESTATUS", "GROUPS",
		"HISTFILE", "HISTCMD", "TERM", "HOME", "PATH", "SHELL", "COPROC",
		"EPOCHREALTIME", "COLUMNS", "LINES", NULL
	};

	return strncmp(name, "BASH", 4) == 0 || strncmp(name, "COMP_", 5) == 0 ||
	    strncmp(name, "READLINE_", 9) == 0 || in_list(own_vars, name);
}

/*
 * A number for sure when arithmetic reads it: the tracked environment holds
 * a number for it, or it is not in the environment (so it starts unset,
 * which reads as 0) and the line gave it a literal number earlier.  An
 * assignment that may not run (after &&, in an if, in a subshell) then
 * leaves it unset or numeric, both harmless.
 */
static int
known_int(const struct walker *w, const char *name)
{
	const char *v;
	size_t i;

	v = env_get(w, name);
	if (v != NULL)
		return is_plain_int(v, strlen(v));
	if (bash_owned(name))
		return 0;
	for (i = 0; i < w->nints; i++)
		if (strcmp(w->ints[i], name) == 0)
			return 1;
	return 0;
}

static void
mark_int(struct walker *w, const char *name, size_t n)
{
	char *c = own(w, strndup(name, n));

	if (c != NULL)
		push_ptr(w, &w->ints, &w->nints, &w->capints, c);
}

static void
arith_use(struct walker *w, const char *name, size_t n)
{
	char buf[128], ex[80];
	struct pending *p;

	if (n >= sizeof(buf)) {
		refuse(w, AG_DENY, "arith", "a variable name in arithmetic is too long");
		return;
	}
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (is_int_special(buf))
		return;
	if (!known_int(w, buf)) {
		refuse(w, AG_DENY, "arith",
		    "'%s' is used in arithmetic but its value is not known to be a number; bash evaluates such values as expressions, which can run commands (assign it a number earlier in the same line)",
		    excerpt(buf, ex, sizeof(ex)));
		return;
	}
	/* known now; a non-numeric assignment elsewhere in the line (a loop
	 * body, a read) would still change it: checked at the end */
	if (w->npend == w->cappend) {
		size_t cap = w->cappend ? w->cappend * 2 : 8;
		struct pending *np = realloc(w->pend, cap * sizeof(*np));

		if (np == NULL) {
			w->oom = 1;
			return;
		}
		w->pend = np;
		w->cappend = cap;
	}
	p = &w->pend[w->npend];
	p->name = strdup(buf);
	if (p->name == NULL) {
		w->oom = 1;
		return;
	}
	p->cmd = w->cur;
	w->npend++;
}

/* Scan arithmetic source text for variable names. */
static void
arith_scan(struct walker *w, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (isdigit(c)) {		/* 10, 0x1f, 16#ff, 64#@_ */
			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' ||
			    s[i] == '#' || s[i] == '@'))
				i++;
			continue;
		}
		if (isalpha(c) || c == '_') {
			size_t st = i, j;

			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
				i++;
			j = i;
			while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n'))
				j++;
			if (j < n && s[j] == '=' && (j + 1 >= n || s[j + 1] != '=')) {
				/* plain assignment: the old value is not read, the new one
				 * is a number */
				mark_int(w, s + st, i - st);
				continue;
			}
			arith_use(w, s + st, i - st);
			continue;
		}
		i++;
	}
}

/* How walk_word reads a word: as a shell word, or as arithmetic. */
enum { WORD_PLAIN = 0, WORD_ARITH = 1 };

static void walk_word(struct walker *w, const struct ag_sh_word *wd, int arith);
static void walk_node(struct walker *w, const struct ag_sh_node *n);
static void walk_param(struct walker *w, const struct ag_sh_part *p, int arith);

static void
walk_body(struct walker *w, const struct ag_sh_node *body)
{
	/* $(...), <(...), ( ... ): a subshell, so a cd inside stays inside */
	const struct cwdset *saved = w->cwd;
	long cur = w->cur;

	walk_node(w, body);
	w->cwd = saved;
	w->cur = cur;
}

static void
walk_part(struct walker *w, const struct ag_sh_part *p, int arith)
{
	char ex[80];

	switch (p->type) {
	case AG_SH_P_LIT:
		if (arith)
			arith_scan(w, p->text, p->len);
		break;
	case AG_SH_P_GLOB:
	case AG_SH_P_BRACE:
		if (arith && p->text)
			arith_scan(w, p->text, p->len);
		break;
	case AG_SH_P_TILDE:
		if (arith)
			refuse(w, AG_DENY, "arith", "a '~' expansion inside arithmetic is not allowed");
		break;
	case AG_SH_P_PARAM:
		walk_param(w, p, arith);
		break;
	case AG_SH_P_CMDSUB:
		feature_ok(w, w->prof->features.command_substitution,
		    "command_substitution", "command substitution $(...)");
		if (arith)
			refuse(w, AG_DENY, "arith",
			    "command output used in arithmetic is evaluated as an expression, which can run commands");
		if (p->body != NULL)
			walk_body(w, p->body);
		break;
	case AG_SH_P_PROCSUB:
		feature_ok(w, w->prof->features.process_substitution,
		    "process_substitution", "process substitution <(...)/>(...)");
		if (arith)
			refuse(w, AG_DENY, "arith", "process substitution inside arithmetic is not allowed");
		if (p->body != NULL)
			walk_body(w, p->body);
		break;
	case AG_SH_P_ARITH:
		if (p->expr != NULL)
			walk_word(w, p->expr, WORD_ARITH);
		else if (p->text != NULL) {
			if (memchr(p->text, '$', p->len) || memchr(p->text, '`', p->len))
				refuse(w, AG_DENY, "parse", "arithmetic expression '%s' was not fully parsed",
				    excerpt(p->text, ex, sizeof(ex)));
			else
				arith_scan(w, p->text, p->len);
		}
		break;
	}
}

static void
walk_param(struct walker *w, const struct ag_sh_part *p, int arith)
{
	const char *op = p->op ? p->op : "";
	const char *name = p->text ? p->text : "";
	char ex[80];

	if (p->indirect) {
		refuse(w, AG_DENY, "expansion:indirect",
		    "'${!%s}' (indirect expansion) is not allowed: it expands a variable named by another variable's value",
		    excerpt(name, ex, sizeof(ex)));
	}
	if (strcmp(op, "@") == 0) {
		char *t = p->operand ? ag_sh_word_literal(p->operand, NULL) : NULL;

		if (t == NULL || strchr(t, 'P') != NULL)
			refuse(w, AG_DENY, "expansion:prompt",
			    "'${%s@...}' with prompt expansion (@P) is not allowed: it can run commands hidden in the value",
			    excerpt(name, ex, sizeof(ex)));
		free(t);
	}
	if (p->subscript != NULL) {
		char *s = ag_sh_word_literal(p->subscript, NULL);

		if (s == NULL || (strcmp(s, "@") != 0 && strcmp(s, "*") != 0))
			walk_word(w, p->subscript, WORD_ARITH);
		free(s);
	}
	if ((strcmp(op, "=") == 0 || strcmp(op, ":=") == 0) &&
	    ag_sh_is_name(name, strlen(name)) && ag_envsan_is_dangerous(name, w->prof)) {
		char rule[160];

		snprintf(rule, sizeof(rule), "env:%s", name);
		refuse(w, AG_DENY, rule,
		    "'${%s%s...}' assigns '%s', which is not allowed (it changes how bash or programs run)",
		    name, op, name);
	}
	if (arith && !p->length) {
		if (op[0] == '\0' || strcmp(op, "-") == 0 || strcmp(op, ":-") == 0 ||
		    strcmp(op, "+") == 0 || strcmp(op, ":+") == 0) {
			if (ag_sh_is_name(name, strlen(name)) || is_int_special(name))
				arith_use(w, name, strlen(name));
			else
				refuse(w, AG_DENY, "arith",
				    "'$%s' is used in arithmetic but its value is not known to be a number",
				    excerpt(name, ex, sizeof(ex)));
			if (p->operand != NULL)
				walk_word(w, p->operand, WORD_ARITH);
		} else {
			refuse(w, AG_DENY, "arith",
			    "'${%s%s...}' inside arithmetic is not allowed: its value is evaluated as an expression",
			    excerpt(name, ex, sizeof(ex)), op);
			if (p->operand != NULL)
				walk_word(w, p->operand, WORD_PLAIN);
			if (p->operand2 != NULL)
				walk_word(w, p->operand2, WORD_PLAIN);
		}
		return;
	}
	if (strcmp(op, ":") == 0) {
		if (p->operand != NULL)
			walk_word(w, p->operand, WORD_ARITH);
	} else if (p->operand != NULL) {
		walk_word(w, p->operand, WORD_PLAIN);
	}
	if (p->operand2 != NULL)
		walk_word(w, p->operand2, WORD_PLAIN);
}

/* Every part of a word; arith: the word is read as an arithmetic expression
 * ($((...)), a subscript, let), where a variable's value is evaluated. */
static void
walk_word(struct walker *w, const struct ag_sh_word *wd, int arith)
{
	size_t i;

	if (wd == NULL)
		return;
	for (i = 0; i < wd->nparts; i++)
		walk_part(w, &wd->parts[i], arith);
}

/* "NAME[SUB]" as text (test -v, unset, read): scan SUB as arithmetic. */
static int
check_name_text(struct walker *w, const char *s)
{
	const char *br = strchr(s, '[');
	char ex[80];

	if (br == NULL)
		return ag_sh_is_name(s, strlen(s));
	if (!ag_sh_is_name(s, (size_t)(br - s))) {
		refuse(w, AG_DENY, "arith", "'%s' is not a variable name",
		    excerpt(s, ex, sizeof(ex)));
		return 0;
	}
	if (strchr(br, '$') != NULL || strchr(br, '`') != NULL) {
		refuse(w, AG_DENY, "arith",
		    "the subscript in '%s' is expanded and evaluated by bash, which can run commands",
		    excerpt(s, ex, sizeof(ex)));
		return 0;
	}
	arith_scan(w, br + 1, strlen(br + 1));
	return 1;
}

/* ---- assignments -------------------------------------------------------- */

static int
check_var_name(struct walker *w, const char *name, const char *how)
{
	char rule[160], ex[80];

	if (!ag_envsan_is_dangerous(name, w->prof))
		return 1;
	snprintf(rule, sizeof(rule), "env:%s", name);
	refuse(w, AG_DENY, rule,
	    "%s '%s' is not allowed: it changes how bash or the programs it starts behave%s",
	    how, excerpt(name, ex, sizeof(ex)),
	    " (a profile may list it in env.allow)");
	return 0;
}

static void
check_assign(struct walker *w, const struct ag_sh_assign *a, int persistent)
{
	size_t i;

	check_var_name(w, a->name, "setting");
	if (a->subscript != NULL)
		walk_word(w, a->subscript, WORD_ARITH);
	if (a->value != NULL)
		walk_word(w, a->value, WORD_PLAIN);
	for (i = 0; i < a->nelems; i++) {
		const struct ag_sh_word *e = a->elems[i];

		walk_word(w, e, WORD_PLAIN);
		/* "[k]=v": k is an arithmetic subscript for indexed arrays */
		if (e->nparts > 0 && e->parts[0].type == AG_SH_P_LIT &&
		    e->parts[0].quote == AG_SH_Q_NONE && e->parts[0].len > 0 &&
		    e->parts[0].text[0] == '[') {
			const char *t = e->parts[0].text;
			const char *cl = memchr(t, ']', e->parts[0].len);

			if (cl != NULL)
				arith_scan(w, t + 1, (size_t)(cl - t - 1));
			else
				refuse(w, AG_DENY, "arith",
				    "array element subscripts must be literal numbers");
		}
	}
	if (persistent && a->value != NULL && a->subscript == NULL && !a->append &&
	    !a->is_array && word_is_int(a->value))
		mark_int(w, a->name, strlen(a->name));
}

/* ---- taint: names that get a non-numeric value somewhere in the line ---- */

struct taint {
	const char	**v;
	size_t		  n, cap;
	struct walker	 *w;
};

static void taint_node(struct taint *t, const struct ag_sh_node *n);

static void
taint_add(struct taint *t, const char *name, size_t len)
{
	char *c = own(t->w, strndup(name, len));

	if (c != NULL)
		push_ptr(t->w, &t->v, &t->n, &t->cap, c);
}

static void
taint_word(struct taint *t, const struct ag_sh_word *wd)
{
	size_t i;

	if (wd == NULL)
		return;
	for (i = 0; i < wd->nparts; i++) {
		const struct ag_sh_part *p = &wd->parts[i];

		if (p->body != NULL)
			taint_node(t, p->body);
		taint_word(t, p->subscript);
		taint_word(t, p->operand);
		taint_word(t, p->operand2);
		taint_word(t, p->expr);
		if (p->type == AG_SH_P_PARAM && p->op != NULL && p->text != NULL &&
		    (strcmp(p->op, "=") == 0 || strcmp(p->op, ":=") == 0))
			taint_add(t, p->text, strlen(p->text));
	}
}

static void
taint_node(struct taint *t, const struct ag_sh_node *n)
{
	size_t i, j;

	if (n == NULL)
		return;
	for (i = 0; i < n->nassigns; i++) {
		const struct ag_sh_assign *a = &n->assigns[i];

		if (a->value == NULL || a->subscript != NULL || a->append ||
		    a->is_array || !word_is_int(a->value))
			taint_add(t, a->name, strlen(a->name));
		taint_word(t, a->value);
		taint_word(t, a->subscript);
		for (j = 0; j < a->nelems; j++)
			taint_word(t, a->elems[j]);
	}
	if ((n->type == AG_SH_FOR || n->type == AG_SH_SELECT ||
	    n->type == AG_SH_COPROC) && n->name != NULL)
		taint_add(t, n->name, strlen(n->name));
	/* any command word that looks like NAME or NAME=... may be a variable
	 * a builtin (read, mapfile, declare, export, getopts, printf -v)
	 * sets: taint them all, which only ever refuses more */
	if (n->type == AG_SH_SIMPLE && n->nwords > 1) {
		int assigning = 0;

		for (i = 0; i < n->nwords; i++)
			if (n->words[i]->raw && in_list(assigning_builtins, n->words[i]->raw))
				assigning = 1;
		for (i = 1; assigning && i < n->nwords; i++) {
			const struct ag_sh_word *wd = n->words[i];
			const char *r = wd->raw ? wd->raw : "";
			size_t k = 0;

			while (isalnum((unsigned char)r[k]) || r[k] == '_')
				k++;
			if (k > 0 && (r[k] == '\0' || r[k] == '=' || r[k] == '[' ||
			    r[k] == '+')) {
				char *lit = ag_sh_word_literal(wd, NULL);
				const char *eq = lit ? strchr(lit, '=') : NULL;

				if (lit == NULL || eq == NULL ||
				    !is_plain_int(eq + 1, strlen(eq + 1)))
					taint_add(t, r, k);
				free(lit);
			}
		}
	}
	for (i = 0; i < n->nwords; i++)
		taint_word(t, n->words[i]);
	for (i = 0; i < n->nredirs; i++)
		taint_word(t, n->redirs[i].target);
	for (i = 0; i < n->nkids; i++)
		taint_node(t, n->kids[i]);
	for (i = 0; i < n->nitems; i++) {
		for (j = 0; j < n->items[i].npatterns; j++)
			taint_word(t, n->items[i].patterns[j]);
		taint_node(t, n->items[i].body);
	}
}

/* ---- redirections ------------------------------------------------------- */

static void
check_redirs(struct walker *w, const struct ag_sh_redir *r, size_t nr)
{
	size_t i;
	char ex[80];

	for (i = 0; i < nr; i++) {
		const struct ag_sh_redir *rd = &r[i];
		char *t;
		int acc = 0;

		if (rd->fdvar != NULL) {
			/* {var}>file assigns the new fd number to var */
			check_var_name(w, rd->fdvar, "setting");
			mark_int(w, rd->fdvar, strlen(rd->fdvar));
		}
		switch (rd->op) {
		case AG_SH_R_HEREDOC:
		case AG_SH_R_HEREDOC_STRIP:
		case AG_SH_R_HERESTRING:
			walk_word(w, rd->target, WORD_PLAIN);
			continue;
		case AG_SH_R_DUP_IN:
		case AG_SH_R_DUP_OUT:
			walk_word(w, rd->target, WORD_PLAIN);
			t = rd->target ? ag_sh_word_literal(rd->target, NULL) : NULL;
			if (t == NULL) {
				refuse(w, AG_DENY, "path:literal",
				    "the target of '>&' must be a literal fd number or '-', not '%s'",
				    excerpt(rd->target ? rd->target->raw : "", ex, sizeof(ex)));
				continue;
			}
			if (t[0] != '\0' && (strspn(t, "0123456789") == strlen(t) ||
			    (strspn(t, "0123456789") == strlen(t) - 1 &&
			    t[strlen(t) - 1] == '-'))) {
				free(t);
				continue;
			}
			if (strcmp(t, "-") == 0) {
				free(t);
				continue;
			}
			/* >&word with a file name is &>word */
			check_path(w, t, rd->op == AG_SH_R_DUP_IN ? ACC_READ : ACC_WRITE, NULL);
			free(t);
			continue;
		case AG_SH_R_IN:
			acc = ACC_READ;
			break;
		case AG_SH_R_RDWR:
			acc = ACC_READ | ACC_WRITE;
			break;
		case AG_SH_R_OUT:
		case AG_SH_R_APPEND:
		case AG_SH_R_CLOBBER:
		case AG_SH_R_OUT_ERR:
		case AG_SH_R_APPEND_ERR:
			acc = ACC_WRITE;
			break;
		}
		walk_word(w, rd->target, WORD_PLAIN);
		t = rd->target ? word_path(rd->target) : NULL;
		if (t == NULL) {
			refuse(w, AG_DENY, "path:literal",
			    "a redirection target must be a literal file name, not '%s'",
			    excerpt(rd->target ? rd->target->raw : "", ex, sizeof(ex)));
			continue;
		}
		check_path(w, t, acc, NULL);
		free(t);
	}
}

/* ---- commands ----------------------------------------------------------- */

enum {
	F_PROG_ONLY = 0x01,	/* exec'd by a wrapper: no builtins or functions */
	F_BUILTIN_ONLY = 0x02,	/* `builtin X` */
	F_UNKNOWN_TAIL = 0x04,	/* xargs appends arguments nobody can see */
	F_NAME_ONLY = 0x08,	/* busybox applet: judged by name */
	F_NO_FUNCS = 0x10,	/* `command X` skips functions */
};

static void check_command(struct walker *w, struct arg *a, size_t na, int flags);
static int deny_hit(struct walker *w, const char *base, struct arg *a, size_t na, int flags);

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int
has_nonlit(const struct arg *a, size_t na)
{
	size_t i;

	for (i = 0; i < na; i++)
		if (a[i].lit == NULL)
			return 1;
	return 0;
}

static int
rule_has_constraints(const struct ag_rule *r)
{
	return r->subcommands.n || r->args.n || r->deny_args.n;
}

/*
 * Developer tier: a program path that does not exist yet names a place
 * beneath paths.exec from every directory the shell may be in, resolved
 * as execve(2) will (the part that exists followed, the rest as written).
 * What the line creates there before it runs (a symlink to a system
 * program) is the kernel's to judge: in this tier anything readable may
 * run, and the exec supervisor applies the deny rules to it.
 */
static int
exec_target_ok(struct walker *w, const char *name)
{
	const char *last = base_name(name);
	int i, n = name[0] == '/' ? 1 : w->cwd->n;

	if ((name[0] != '/' && w->cwd->unknown) || strcmp(last, "..") == 0 ||
	    strcmp(last, ".") == 0 || last[0] == '\0')
		return 0;
	for (i = 0; i < n; i++) {
		char abs[PATH_MAX], res[PATH_MAX];

		if (resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0 ||
		    !inside_list(w, &w->prof->paths_exec, res))
			return 0;
	}
	return 1;
}

/* Resolve a command name to a file.  0 ok; -1 not found; -2 ambiguous. */
static int
resolve_cmd(struct walker *w, const char *name, char *real, size_t realsz)
{
	char abs[PATH_MAX];

	if (strchr(name, '/') == NULL)
		return lookup(w->pathenv, name, real, realsz);
	if (name[0] != '/') {
		char other[PATH_MAX];
		int i, rc = -1;

		if (w->cwd->unknown || w->cwd->n < 1)
			return -2;
		/* from every directory the shell may be in, the same file */
		for (i = 0; i < w->cwd->n; i++) {
			char res[PATH_MAX];
			int r;

			/* resolved as execve(2) will: "lnk/.." is the parent of
			 * lnk's target */
			if (resolve_in(w, w->cwd->d[i], name, abs, sizeof(abs), res, sizeof(res)) < 0)
				return -1;
			r = lookup(NULL, res, i == 0 ? real : other, i == 0 ? realsz : sizeof(other));
			if (i == 0)
				rc = r;
			else if (r != rc || (r == 0 && strcmp(real, other) != 0))
				return -2;
		}
		return rc;
	}
	return lookup(NULL, name, real, realsz);
}

/* Does a rule's command name the same file as (name, real)? */
static int
rule_matches(struct walker *w, const struct ag_rule *r, const char *name,
    const char *real, int by_name_only)
{
	char rr[PATH_MAX];

	if (r->command == NULL)
		return 0;
	if (strcmp(base_name(r->command), base_name(name)) != 0)
		return 0;
	if (by_name_only)
		return 1;
	if (real == NULL)
		return 0;
	if (strchr(r->command, '/') == NULL) {
		if (lookup(w->pathenv, r->command, rr, sizeof(rr)) != 0)
			return 0;
	} else if (lookup(NULL, r->command, rr, sizeof(rr)) != 0)
		return 0;
	return strcmp(rr, real) == 0;
}

/*
 * Match an argument against a glob list.  Path-like globs ("/..." or
 * "~/...") also see the argument as the file it names: in a deny list a
 * match of the written, absolute or resolved form counts, so
 * `cat ../../etc/shadow` and a symlink to it are caught by "/etc/shadow*";
 * in an allow list the resolved file must match (from every directory the
 * shell may be in), so a symlink inside an allowed directory does not lead
 * out of it.
 */
static int
arg_matches_mode(struct walker *w, const struct ag_strlist *globs, const char *arg,
    int allow)
{
	size_t i;
	int k;

	for (i = 0; i < globs->n; i++) {
		const char *g = globs->v[i];
		char e[PATH_MAX];
		int all = 1, any = 0;

		if ((g[0] != '/' && g[0] != '~') || arg[0] == '-') {
			if (fnmatch(g, arg, 0) == 0)
				return 1;
			continue;
		}
		if (!allow && fnmatch(g, arg, 0) == 0)
			return 1;
		if (g[0] == '~') {
			if (expand_entry(g, w->home, e, sizeof(e)) < 0)
				continue;
			g = e;
		}
		/* a relative name after a cd to somewhere unknown could be
		 * anything */
		if (arg[0] != '/' && arg[0] != '~' && w->cwd->unknown) {
			if (!allow)
				return 1;
			continue;
		}
		for (k = 0; k < ((arg[0] == '/' || arg[0] == '~') ? 1 : w->cwd->n); k++) {
			char abs[PATH_MAX], res[PATH_MAX];

			if (resolve_in(w, w->cwd->d[k], arg, abs, sizeof(abs), res,
			    sizeof(res)) < 0) {
				if (!allow)
					return 1;
				all = 0;
				break;
			}
			if (fnmatch(g, abs, 0) == 0 || fnmatch(g, res, 0) == 0)
				any = 1;
			if (fnmatch(g, res, 0) != 0)
				all = 0;
		}
		if (!allow && any)
			return 1;
		if (allow && all)
			return 1;
	}
	return 0;
}

static int
arg_matches(struct walker *w, const struct ag_strlist *globs, const char *arg)
{
	return arg_matches_mode(w, globs, arg, 0);
}

/* ---- tools with global options before a subcommand ---------------------- */

struct gopt {
	const char	*name;
	int		 value;		/* 1: takes a value (attached with = or separate) */
	int		 risky;		/* refused unless in allow_options */
};

static const struct gopt git_opts[] = {
	{ "-C", 1, 0 }, { "-c", 1, 1 }, { "--git-dir", 1, 1 }, { "--work-tree", 1, 1 },
	{ "--namespace", 1, 0 }, { "--super-prefix", 1, 0 }, { "--config-env", 1, 1 },
	{ "--exec-path", 0, 1 }, { "--list-cmds", 1, 0 }, { "--attr-source", 1, 0 },
	{ "-p", 0, 1 }, { "--paginate", 0, 1 }, { "-P", 0, 0 }, { "--no-pager", 0, 0 },
	{ "--bare", 0, 0 }, { "--literal-pathspecs", 0, 0 }, { "--glob-pathspecs", 0, 0 },
	{ "--noglob-pathspecs", 0, 0 }, { "--icase-pathspecs", 0, 0 },
	{ "--no-replace-objects", 0, 0 }, { "--no-optional-locks", 0, 0 },
	{ "--no-lazy-fetch", 0, 0 }, { "--no-advice", 0, 0 }, { "--version", 0, 0 },
	{ "--help", 0, 0 }, { "-h", 0, 0 }, { "-v", 0, 0 }, { "--html-path", 0, 0 },
	{ "--man-path", 0, 0 }, { "--info-path", 0, 0 },
	{ NULL, 0, 0 }
};

static const struct gopt docker_opts[] = {
	{ "-H", 1, 0 }, { "--host", 1, 0 }, { "-c", 1, 0 }, { "--context", 1, 0 },
	{ "--config", 1, 1 }, { "-l", 1, 0 }, { "--log-level", 1, 0 }, { NULL, 0, 0 }
};

static const struct gopt kubectl_opts[] = {
	{ "-n", 1, 0 }, { "--namespace", 1, 0 }, { "--context", 1, 0 },
	{ "--kubeconfig", 1, 1 }, { "-s", 1, 0 }, { "--server", 1, 0 },
	{ "--cluster", 1, 0 }, { "--user", 1, 0 }, { NULL, 0, 0 }
};

static const struct gopt systemctl_opts[] = {
	{ "-H", 1, 0 }, { "--host", 1, 0 }, { "-M", 1, 0 }, { "--machine", 1, 0 },
	{ "-t", 1, 0 }, { "--type", 1, 0 }, { "-p", 1, 0 }, { "--property", 1, 0 },
	{ "-n", 1, 0 }, { "--lines", 1, 0 }, { "-o", 1, 0 }, { "--output", 1, 0 },
	{ "--state", 1, 0 }, { NULL, 0, 0 }
};

static const struct gopt apt_opts[] = {
	{ "-o", 1, 1 }, { "-c", 1, 1 }, { "-t", 1, 0 }, { NULL, 0, 0 }
};

static const struct gopt cargo_go_opts[] = {
	{ "-C", 1, 0 }, { "--config", 1, 1 }, { "-Z", 1, 0 }, { NULL, 0, 0 }
};

static const struct gopt *
tool_opts(const char *base)
{
	if (strcmp(base, "git") == 0)
		return git_opts;
	if (strcmp(base, "docker") == 0 || strcmp(base, "podman") == 0)
		return docker_opts;
	if (strcmp(base, "kubectl") == 0)
		return kubectl_opts;
	if (strcmp(base, "systemctl") == 0 || strcmp(base, "journalctl") == 0)
		return systemctl_opts;
	if (strcmp(base, "apt") == 0 || strcmp(base, "apt-get") == 0 ||
	    strcmp(base, "apt-cache") == 0)
		return apt_opts;
	if (strcmp(base, "cargo") == 0 || strcmp(base, "go") == 0)
		return cargo_go_opts;
	return NULL;
}

/*
 * Walk the tool's global options; return the index of the subcommand (or
 * na when none).  Refuses risky options not in allow_options (unless rid
 * is NULL: only looking).  *cdir is set to the -C argument (git), for
 * output paths.
 */
static size_t
find_subcommand(struct walker *w, const struct ag_rule *r, const char *rid,
    const char *base, struct arg *a, size_t na, const char **cdir, int *bad)
{
	const struct gopt *opts = tool_opts(base);
	size_t i;
	char ex[80];

	*cdir = NULL;
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;
		const struct gopt *o;
		const char *eq;
		size_t nl;

		if (s == NULL)
			return i;	/* caller refuses non-literals */
		if (strcmp(s, "--") == 0)
			return i + 1;
		if (s[0] != '-' || s[1] == '\0')
			return i;
		eq = strchr(s, '=');
		nl = eq ? (size_t)(eq - s) : strlen(s);
		for (o = opts; o && o->name; o++)
			if (strlen(o->name) == nl && strncmp(o->name, s, nl) == 0)
				break;
		if (o == NULL || o->name == NULL) {
			/* an attached short option value (-Cdir) is not understood:
			 * treat the option as taking no value and go on; a wrong
			 * guess only makes the subcommand check stricter */
			continue;
		}
		if (rid != NULL && o->risky &&
		    !(strcmp(o->name, "--exec-path") == 0 && eq == NULL)) {
			char on[64];

			snprintf(on, sizeof(on), "%.*s", (int)nl, s);
			if (!ag_strlist_contains(&r->allow_options, on)) {
				refuse(w, AG_DENY, rid,
				    "'%s %s' is not allowed: that option changes what %s runs or which configuration it reads (not in allow_options)",
				    base, excerpt(s, ex, sizeof(ex)), base);
				*bad = 1;
			}
		}
		if (o->value && eq == NULL) {
			if (i + 1 >= na) {
				if (rid != NULL)
					refuse(w, AG_DENY, rid, "'%s %s' needs a value", base, o->name);
				*bad = 1;
				return na;
			}
			/* -C DIR: later relative paths are inside DIR; "" marks a
			 * directory the gateway cannot tell (not literal, or a
			 * relative -C after another) */
			if (strcmp(o->name, "-C") == 0) {
				const char *d = a[i + 1].lit;

				if (d == NULL || (*cdir != NULL && d[0] != '/'))
					*cdir = "";
				else
					*cdir = d;
			}
			i++;
		}
	}
	return na;
}

/*
 * git and find take some arguments as options, so a word the gateway cannot
 * see could be an option that writes a file or runs a program.  A
 * non-literal is accepted only where it is the value of an option that
 * takes one, or after "--".
 */
static int
nonlit_in_option_position(struct arg *a, size_t na, const char *const *valopts,
    size_t *bad)
{
	size_t i;
	int after_dd = 0;

	for (i = 1; i < na; i++) {
		if (a[i].lit != NULL) {
			if (strcmp(a[i].lit, "--") == 0)
				after_dd = 1;
			continue;
		}
		if (after_dd)
			continue;
		if (a[i - 1].lit != NULL && in_list(valopts, a[i - 1].lit))
			continue;
		*bad = i;
		return 1;
	}
	return 0;
}

static const char *const git_valopts[] = {
	"-m", "--message", "--author", "--date", "-n", "--max-count", "--grep",
	"--format", "--pretty", "-S", "-G", "--since", "--until", "--after",
	"--before", "--committer", "-b", "-B", "--branch", "-C", NULL
};

static const char *const find_valopts[] = {
	"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-lname", "-ilname", "-type", "-xtype", "-newer",
	"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size",
	"-user", "-group", "-perm", "-maxdepth", "-mindepth", "-samefile",
	"-inum", "-links", "-uid", "-gid", "-printf", "-used", NULL
};

/* ---- generic option parsing for programs whose operands we check -------- */

struct optspec {
	const char	 *short_val;	/* letters that take a value */
	const char *const *long_val;	/* long options that take a value */
	const char *const *long_flag;	/* long options without one that we look at */
};

/*
 * GNU getopt and git accept any unambiguous prefix of a long option
 * ("sort --outp=F" is --output), so an option is named by the first of
 * ours it is a prefix of.  Options that make a program more permissive
 * (sed --sandbox) are left out of these lists: they count only when
 * written in full.
 */
static const char *
canon_long(const char *s, size_t nl, const char *const *a, const char *const *b)
{
	const char *const *lv;
	const char *first = NULL;
	int k;

	if (nl < 3)
		return NULL;
	for (k = 0; k < 2; k++)
		for (lv = k ? b : a; lv && *lv; lv++)
			if (strncmp(*lv, s, nl) == 0) {
				if ((*lv)[nl] == '\0')
					return *lv;
				if (first == NULL)
					first = *lv;
			}
	return first;
}

typedef void (*opt_fn)(struct walker *w, void *ud, const char *opt, const char *val);

/* GNU-style: options may follow operands; "--" ends options.  opt is
 * "-x" or "--name"; operands come with opt NULL. */
static void
parse_opts(struct walker *w, struct arg *a, size_t na, size_t start,
    const struct optspec *sp, opt_fn fn, void *ud)
{
	size_t i;
	int only_operands = 0;

	for (i = start; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (only_operands || s[0] != '-' || s[1] == '\0') {
			fn(w, ud, NULL, s);
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *eq = strchr(s, '=');
			size_t nl = eq ? (size_t)(eq - s) : strlen(s);
			const char *canon = canon_long(s, nl, sp->long_val, sp->long_flag);
			const char *const *lv;
			char on[64];
			int takes = 0;

			if (canon != NULL)
				snprintf(on, sizeof(on), "%s", canon);
			else
				snprintf(on, sizeof(on), "%.*s", (int)(nl < 60 ? nl : 60), s);
			for (lv = sp->long_val; lv && *lv; lv++)
				if (strcmp(*lv, on) == 0)
					takes = 1;
			if (eq != NULL)
				fn(w, ud, on, eq + 1);
			else if (takes && i + 1 < na) {
				fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
				i++;
			} else
				fn(w, ud, on, NULL);
			continue;
		}
		{
			const char *c;

			for (c = s + 1; *c; c++) {
				char on[3] = { '-', *c, '\0' };

				if (sp->short_val && strchr(sp->short_val, *c)) {
					if (c[1] != '\0')
						fn(w, ud, on, c + 1);
					else if (i + 1 < na) {
						fn(w, ud, on, a[i + 1].lit ? a[i + 1].lit : "");
						i++;
					} else
						fn(w, ud, on, "");
					break;
				}
				fn(w, ud, on, NULL);
			}
		}
	}
}

struct outctx {
	const char	*prog;
	const char	*base;		/* -C dir or NULL */
	const char	**ops;		/* operands */
	size_t		 nops;
	const char	*target_dir;	/* -t DIR */
	int		 no_target_dir;	/* -T */
	int		 links;		/* ln, cp -s/-l: the sources become links */
	int		 tree;		/* mv, cp -r: directories move or copy */
	int		 in_place;	/* sed -i */
	int		 sandbox;	/* sed --sandbox */
	int		 script_file;	/* sed -f given */
	const char	*scripts[16];	/* sed -e SCRIPT */
	size_t		 nscripts;
	int		 bad;
};

static void
out_write(struct walker *w, struct outctx *o, const char *p)
{
	char b[PATH_MAX];
	const char *base = o->base;

	/* git -C dir: relative output paths are relative to dir, from every
	 * directory the shell may be in */
	if (base != NULL && p[0] != '/' && p[0] != '~') {
		int i, n = base[0] == '/' || base[0] == '~' ? 1 : w->cwd->n;
		char abs[PATH_MAX];

		if ((w->cwd->unknown && base[0] != '/' && base[0] != '~') || base[0] == '\0') {
			refuse(w, AG_DENY, "path:cwd", "cannot tell where '%s' is relative to", p);
			return;
		}
		for (i = 0; i < n; i++) {
			if (resolve_in(w, w->cwd->d[i], base, abs, sizeof(abs), b, sizeof(b)) < 0) {
				refuse(w, AG_DENY, "path:cwd", "cannot tell where '%s' is relative to", p);
				return;
			}
			check_path(w, p, ACC_WRITE | (o->tree ? ACC_TREE : 0), b);
		}
		return;
	}
	check_path(w, p, ACC_WRITE | (o->tree ? ACC_TREE : 0), NULL);
}

static void
collect_op(struct walker *w, struct outctx *o, const char *v)
{
	const char **n;

	if (o->nops % 16 == 0) {
		n = realloc(o->ops, (o->nops + 16) * sizeof(*n));
		if (n == NULL) {
			w->oom = 1;
			return;
		}
		o->ops = n;
	}
	o->ops[o->nops++] = v;
}

static void
opt_files(struct walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL)
		collect_op(w, o, val);
}

static void
opt_sort(struct walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL)
		return;
	if ((strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		out_write(w, o, val);
	if (strcmp(opt, "--compress-program") == 0) {
		refuse(w, AG_DENY, "program:sort", "'sort --compress-program' runs another program");
		o->bad = 1;
	}
}

static void
opt_cpmv(struct walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL) {
		collect_op(w, o, val);
		return;
	}
	if ((strcmp(opt, "-t") == 0 || strcmp(opt, "--target-directory") == 0) && val)
		o->target_dir = val;
	if (strcmp(opt, "-T") == 0 || strcmp(opt, "--no-target-directory") == 0)
		o->no_target_dir = 1;
	if (strcmp(opt, "-s") == 0 || strcmp(opt, "-l") == 0 ||
	    strcmp(opt, "--link") == 0 || strcmp(opt, "--symbolic-link") == 0)
		o->links = 1;
	if (strcmp(opt, "-r") == 0 || strcmp(opt, "-R") == 0 || strcmp(opt, "-a") == 0 ||
	    strcmp(opt, "--recursive") == 0 || strcmp(opt, "--archive") == 0)
		o->tree = 1;
}

static void
opt_sed(struct walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt == NULL) {
		collect_op(w, o, val);
		return;
	}
	if (strcmp(opt, "-i") == 0 || strcmp(opt, "--in-place") == 0)
		o->in_place = 1;
	if (strcmp(opt, "--sandbox") == 0)
		o->sandbox = 1;
	if ((strcmp(opt, "-e") == 0 || strcmp(opt, "--expression") == 0) && val) {
		if (o->nscripts < sizeof(o->scripts) / sizeof(o->scripts[0]))
			o->scripts[o->nscripts++] = val;
		else
			o->bad = 1;
	}
	if (strcmp(opt, "-f") == 0 || strcmp(opt, "--file") == 0)
		o->script_file = 1;
}

static void
opt_time(struct walker *w, void *ud, const char *opt, const char *val)
{
	struct outctx *o = ud;

	if (opt != NULL && (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val)
		out_write(w, o, val);
}

/*
 * sed can write files (w, W, s///w) and run commands (e, s///e); refuse
 * scripts that might, unless --sandbox.  Deliberately crude: any 'e', 'w'
 * or 'W' that is not inside an s/// pattern or replacement or a y/// list
 * counts, which refuses a few harmless scripts (`/e/d`) rather than miss
 * a harmful one.
 */
static int
sed_script_risky(const char *s)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		char c = s[i];

		if (c == 's' || c == 'y') {
			char d;
			int k;

			if (i + 1 >= n)
				return 1;
			d = s[i + 1];
			if (d == '\\' || d == '\n')
				return 1;
			i += 2;
			for (k = 0; k < 2; k++) {
				while (i < n && s[i] != d) {
					if (s[i] == '\\')
						i++;
					i++;
				}
				if (i >= n)
					return 1;
				i++;
			}
			if (c == 's')
				while (i < n && strchr("gpiImM0123456789", s[i]))
					i++;
			continue;
		}
		if (c == '/' || c == '\\') {	/* address regex */
			char d = c == '/' ? '/' : (i + 1 < n ? s[++i] : '/');

			i++;
			while (i < n && s[i] != d) {
				if (s[i] == '\\')
					i++;
				i++;
			}
			i++;
			continue;
		}
		if (c == 'e' || c == 'w' || c == 'W')
			return 1;
		if (c == 'r' || c == 'R') {	/* reads a file named to end of line */
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == 'a' || c == 'i' || c == 'c') {	/* text to end of line */
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == 'b' || c == 't' || c == 'T' || c == ':') {
			while (i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}')
				i++;
			continue;
		}
		i++;
	}
	return 0;
}

static const char *const sort_long[] = {
	"--output", "--key", "--field-separator", "--buffer-size",
	"--temporary-directory", "--parallel", "--batch-size", "--files0-from",
	"--random-source", "--compress-program", "--sort", NULL
};
static const char *const cp_long[] = {
	"--target-directory", "--suffix", "--backup", "--reflink", "--sparse",
	"--preserve", "--no-preserve", "--context", "--mode", "--owner", "--group",
	"--strip-program", NULL
};
static const char *const sed_long[] = {
	"--expression", "--file", "--line-length", NULL
};
static const char *const sed_flags[] = { "--in-place", NULL };
static const char *const cp_flags[] = {
	"--no-target-directory", "--symbolic-link", "--link", "--recursive",
	"--archive", NULL
};
static const char *const touch_long[] = { "--date", "--reference", "--time", NULL };
static const char *const tee_long[] = { NULL };
static const char *const time_long[] = { "--format", "--output", NULL };

/*
 * Programs whose arguments name files they write.  Returns 1 when the
 * program is one of them (checks done), 0 otherwise.
 */
static int
check_outputs(struct walker *w, const char *base, struct arg *a, size_t na,
    const char *gitc, int flags)
{
	struct outctx o;
	struct optspec sp = { NULL, NULL, NULL };
	size_t i;
	char ex[80];
	enum { K_NONE, K_FILES, K_SORT, K_CPMV, K_SED, K_TIME, K_DD, K_GIT } k = K_NONE;

	if (strchr("tmrscdigul", base[0]) == NULL)
		return 0;	/* none of the names below */

	if (strcmp(base, "tee") == 0 || strcmp(base, "touch") == 0 ||
	    strcmp(base, "mkdir") == 0 || strcmp(base, "rm") == 0 ||
	    strcmp(base, "rmdir") == 0 || strcmp(base, "truncate") == 0 ||
	    strcmp(base, "shred") == 0 || strcmp(base, "unlink") == 0) {
		k = K_FILES;
		if (strcmp(base, "touch") == 0) {
			sp.short_val = "drt";
			sp.long_val = touch_long;
		} else if (strcmp(base, "mkdir") == 0)
			sp.short_val = "m";
		else if (strcmp(base, "truncate") == 0)
			sp.short_val = "sr";
		else if (strcmp(base, "shred") == 0)
			sp.short_val = "nsx";
		else
			sp.long_val = tee_long;
	} else if (strcmp(base, "sort") == 0) {
		k = K_SORT;
		sp.short_val = "okStT";
		sp.long_val = sort_long;
	} else if (strcmp(base, "cp") == 0 || strcmp(base, "mv") == 0 ||
	    strcmp(base, "install") == 0 || strcmp(base, "ln") == 0) {
		k = K_CPMV;
		sp.short_val = strcmp(base, "install") == 0 ? "tSmogZ" : "tSZ";
		sp.long_val = cp_long;
		sp.long_flag = cp_flags;
	} else if (strcmp(base, "sed") == 0) {
		k = K_SED;
		sp.short_val = "efl";
		sp.long_val = sed_long;
		sp.long_flag = sed_flags;
	} else if (strcmp(base, "time") == 0) {
		k = K_TIME;
		sp.short_val = "fo";
		sp.long_val = time_long;
	} else if (strcmp(base, "dd") == 0) {
		k = K_DD;
	} else if (strcmp(base, "git") == 0) {
		k = K_GIT;
	}
	if (k == K_NONE)
		return 0;
	if (k != K_TIME && k != K_GIT) {
		if (flags & F_UNKNOWN_TAIL) {
			refuse(w, AG_DENY, "path:write",
			    "'%s' would get file names from xargs or find that the gateway cannot check",
			    base);
			return 1;
		}
		if (has_nonlit(a, na)) {
			for (i = 1; i < na && a[i].lit; i++)
				;
			refuse(w, AG_DENY, "path:literal",
			    "'%s' writes the files named in its arguments, so they must be literal; '%s' is not",
			    base, excerpt(a[i].w->raw, ex, sizeof(ex)));
			return 1;
		}
	}
	memset(&o, 0, sizeof(o));
	o.prog = base;
	switch (k) {
	case K_FILES:
		parse_opts(w, a, na, 1, &sp, opt_files, &o);
		for (i = 0; i < o.nops; i++)
			out_write(w, &o, o.ops[i]);
		break;
	case K_SORT:
		parse_opts(w, a, na, 1, &sp, opt_sort, &o);
		break;
	case K_CPMV: {
		const char *dest;
		size_t nsrc;

		if (strcmp(base, "mv") == 0)
			o.tree = 1;
		parse_opts(w, a, na, 1, &sp, opt_cpmv, &o);
		if (o.target_dir) {
			dest = o.target_dir;
			nsrc = o.nops;
		} else if (o.nops >= 1) {
			dest = o.ops[o.nops - 1];
			nsrc = o.nops - 1;
		} else
			break;
		out_write(w, &o, dest);
		/* into a directory: each source lands at DIR/basename */
		if (!o.no_target_dir) {
			for (i = 0; i < nsrc; i++) {
				char p[PATH_MAX];
				const char *bn = base_name(o.ops[i]);
				int r;

				if (*bn == '\0')
					continue;
				r = snprintf(p, sizeof(p), "%s/%s", dest, bn);
				if (r > 0 && (size_t)r < sizeof(p))
					out_write(w, &o, p);
			}
		}
		/* mv removes its sources; a link made now is written through
		 * later in the same line before the gateway could see it, so a
		 * link's target must be writable too */
		if (strcmp(base, "mv") == 0 || strcmp(base, "ln") == 0 ||
		    (strcmp(base, "cp") == 0 && o.links))
			for (i = 0; i < nsrc; i++)
				out_write(w, &o, o.ops[i]);
		break;
	}
	case K_SED: {
		size_t first = 0;
		int risky = o.bad;

		parse_opts(w, a, na, 1, &sp, opt_sed, &o);
		if (o.script_file && !o.sandbox) {
			refuse(w, AG_DENY, "program:sed",
			    "'sed -f FILE' runs a script the gateway cannot see; use -e or add --sandbox");
			break;
		}
		if (o.nscripts == 0 && !o.script_file) {
			if (o.nops == 0)
				break;
			risky |= sed_script_risky(o.ops[0]);
			first = 1;	/* the first operand is the script */
		}
		for (i = 0; i < o.nscripts; i++)
			risky |= sed_script_risky(o.scripts[i]);
		if (risky && !o.sandbox) {
			refuse(w, AG_DENY, "program:sed",
			    "this sed script may run commands or write files (e, w, W); add --sandbox if it does not");
			break;
		}
		if (o.in_place)
			for (i = first; i < o.nops; i++)
				out_write(w, &o, o.ops[i]);
		break;
	}
	case K_TIME:
		parse_opts(w, a, na, 1, &sp, opt_time, &o);
		free(o.ops);
		return 0;	/* time is also a wrapper: the caller unwraps it */
	case K_DD:
		for (i = 1; i < na; i++) {
			if (strncmp(a[i].lit, "of=", 3) == 0)
				out_write(w, &o, a[i].lit + 3);
			else if (strncmp(a[i].lit, "if=", 3) == 0)
				check_path(w, a[i].lit + 3, ACC_READ, NULL);
		}
		break;
	case K_GIT:
		o.base = gitc;
		if (flags & F_UNKNOWN_TAIL) {
			refuse(w, AG_DENY, "program:git",
			    "git would get arguments from xargs or find that the gateway cannot check");
			break;
		}
		{
			size_t bi = 0;

			if (nonlit_in_option_position(a, na, git_valopts, &bi)) {
				refuse(w, AG_DENY, "program:git",
				    "'%s' could be a git option that writes a file or runs a program; write it literally (or after --)",
				    excerpt(a[bi].w->raw, ex, sizeof(ex)));
				break;
			}
		}
		for (i = 1; i < na; i++) {
			static const char *const git_out[] = {
				"--output", "--output-directory", NULL
			};
			static const char *const git_run[] = {
				"--upload-pack", "--receive-pack", "--exec",
				"--open-files-in-pager", "--ext-diff", NULL
			};
			const char *s = a[i].lit, *eq, *c;
			size_t nl;

			if (s == NULL || strcmp(s, "--") == 0)
				break;		/* pathspecs follow */
			if (strcmp(s, "-O") == 0 || (s[0] == '-' && s[1] == 'O')) {
				refuse(w, AG_DENY, "program:git",
				    "'git ... %s' makes git run another program", excerpt(s, ex, sizeof(ex)));
				break;
			}
			if (strcmp(s, "-o") == 0 && i + 1 < na && a[i + 1].lit != NULL) {
				out_write(w, &o, a[i + 1].lit);
				continue;
			}
			if (s[0] != '-' || s[1] != '-')
				continue;
			eq = strchr(s, '=');
			nl = eq ? (size_t)(eq - s) : strlen(s);
			if ((c = canon_long(s, nl, git_run, NULL)) != NULL && nl >= 4) {
				refuse(w, AG_DENY, "program:git",
				    "'git ... %s' makes git run another program", excerpt(s, ex, sizeof(ex)));
				break;
			}
			if (canon_long(s, nl, git_out, NULL) != NULL && nl >= 5) {
				if (eq != NULL)
					out_write(w, &o, eq + 1);
				else if (i + 1 < na && a[i + 1].lit != NULL)
					out_write(w, &o, a[i + 1].lit);
			}
		}
		free(o.ops);
		return 0;	/* git has its own rule checks too */
	case K_NONE:
		break;
	}
	free(o.ops);
	return 1;
}

/* ---- wrappers ----------------------------------------------------------- */

/* Skip wrapper options; returns index of the inner command (na: none), or
 * (size_t)-1 after refusing. */
static size_t
wrapper_inner(struct walker *w, const char *base, struct arg *a, size_t na, int *flags,
    char *replstr, size_t replsz)
{
	/*
	 * Wrappers whose own options are flags, except those listed, which
	 * take the next word as their value; "--" or the first word that is
	 * not an option starts the inner command.
	 */
	static const struct {
		const char		*name;
		const char *const	 valued[4];
	} flag_wrappers[] = {
		{ "nohup", { NULL } },
		{ "setsid", { NULL } },
		{ "unbuffer", { NULL } },
		{ "stdbuf", { "-i", "-o", "-e", NULL } },
		{ "time", { "-f", "-o", NULL } },
	};
	size_t i = 1, fw;
	char ex[80];

	/* a non-literal before the inner command might be an option or the
	 * command itself: NEED_LIT refuses it */
	replstr[0] = '\0';
#define NEED_LIT(j) do { if ((j) >= na || a[j].lit == NULL) { \
	refuse(w, AG_DENY, "wrapper:literal", \
	    "the arguments of '%s' before the command it runs must be literal words", base); \
	return (size_t)-1; } } while (0)

	if (strcmp(base, "env") == 0) {
		for (; i < na; i++) {
			const char *s;
			const char *eq;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0) {
				i++;
				break;
			}
			if (strcmp(s, "-i") == 0 || strcmp(s, "-") == 0 ||
			    strcmp(s, "--ignore-environment") == 0 || strcmp(s, "-0") == 0 ||
			    strcmp(s, "--null") == 0 || strcmp(s, "-v") == 0 ||
			    strcmp(s, "--debug") == 0)
				continue;
			if (strcmp(s, "-u") == 0 || strcmp(s, "--unset") == 0) {
				NEED_LIT(i + 1);
				if (!check_var_name(w, a[i + 1].lit, "unsetting"))
					return (size_t)-1;
				i++;
				continue;
			}
			if (strncmp(s, "--unset=", 8) == 0 || (strncmp(s, "-u", 2) == 0 && s[2])) {
				if (!check_var_name(w, s[1] == '-' ? s + 8 : s + 2, "unsetting"))
					return (size_t)-1;
				continue;
			}
			if (strncmp(s, "--ignore-signal", 15) == 0 ||
			    strncmp(s, "--default-signal", 16) == 0 ||
			    strncmp(s, "--block-signal", 14) == 0 ||
			    strcmp(s, "--list-signal-handling") == 0)
				continue;
			if (s[0] == '-') {
				/* -S/--split-string builds a command line from one
				 * string; -C/--chdir moves the command elsewhere */
				refuse(w, AG_DENY, "wrapper:env",
				    "'env %s' is not allowed: the gateway cannot see the command it would run",
				    excerpt(s, ex, sizeof(ex)));
				return (size_t)-1;
			}
			eq = strchr(s, '=');
			if (eq != NULL) {
				char nm[256];
				size_t nl = (size_t)(eq - s);

				if (nl == 0 || nl >= sizeof(nm)) {
					refuse(w, AG_DENY, "wrapper:env", "bad variable name in env");
					return (size_t)-1;
				}
				memcpy(nm, s, nl);
				nm[nl] = '\0';
				if (!check_var_name(w, nm, "setting"))
					return (size_t)-1;
				continue;
			}
			break;
		}
		return i;
	}
	if (strcmp(base, "nice") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-n") == 0 || strcmp(a[i].lit, "--adjustment") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] == '-')
				continue;	/* -5, -n5, --adjustment=5 */
			break;
		}
		return i;
	}
	for (fw = 0; fw < sizeof(flag_wrappers) / sizeof(flag_wrappers[0]); fw++) {
		const char *const *v;

		if (strcmp(base, flag_wrappers[fw].name) != 0)
			continue;
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] != '-')
				break;
			for (v = flag_wrappers[fw].valued; *v != NULL; v++)
				if (strcmp(a[i].lit, *v) == 0) {
					i++;	/* the option's value */
					break;
				}
		}
		return i;
	}
	if (strcmp(base, "timeout") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-s") == 0 || strcmp(a[i].lit, "-k") == 0 ||
			    strcmp(a[i].lit, "--signal") == 0 ||
			    strcmp(a[i].lit, "--kill-after") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0) {
				i++;
				break;
			}
			if (a[i].lit[0] != '-')
				break;
		}
		return i + 1;	/* the duration */
	}
	if (strcmp(base, "xargs") == 0) {
		*flags |= F_UNKNOWN_TAIL;
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			if (strncmp(s, "--p", 3) == 0) {	/* --process-slot-var, abbreviated or not */
				refuse(w, AG_DENY, "wrapper:xargs",
				    "'xargs --process-slot-var' sets a variable in the command's environment");
				return (size_t)-1;
			}
			if (strcmp(s, "-I") == 0 || strcmp(s, "--replace") == 0) {
				NEED_LIT(i + 1);
				snprintf(replstr, replsz, "%s", a[i + 1].lit);
				i++;
				continue;
			}
			if (strncmp(s, "--replace=", 10) == 0) {
				snprintf(replstr, replsz, "%s", s + 10);
				continue;
			}
			if (strncmp(s, "-I", 2) == 0 || strncmp(s, "-i", 2) == 0) {
				snprintf(replstr, replsz, "%s", s[2] ? s + 2 : "{}");
				continue;
			}
			if (strchr("adEeLlnPs", s[1]) != NULL && s[2] == '\0' &&
			    s[1] != 'e' && s[1] != 'l') {
				if (s[1] == 'a') {
					NEED_LIT(i + 1);
					check_path(w, a[i + 1].lit, ACC_READ, NULL);
				}
				i++;
				continue;
			}
			if (strncmp(s, "--arg-file=", 11) == 0)
				check_path(w, s + 11, ACC_READ, NULL);
		}
		return i;
	}
	if (strcmp(base, "sudo") == 0 || strcmp(base, "doas") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			/* long options only from a short list: getopt would take
			 * "--sh" for --shell */
			if (s[1] == '-' && strncmp(s, "--user=", 7) != 0 &&
			    strncmp(s, "--group=", 8) != 0 &&
			    strcmp(s, "--non-interactive") != 0 &&
			    strcmp(s, "--set-home") != 0) {
				refuse(w, AG_DENY, "wrapper:sudo",
				    "'%s %s' is not an option the gateway understands; use the short form",
				    base, excerpt(s, ex, sizeof(ex)));
				return (size_t)-1;
			}
			if ((s[1] != '-' && strpbrk(s + 1, "sieE") != NULL) ||
			    strcmp(s, "--shell") == 0 ||
			    strcmp(s, "--login") == 0 || strcmp(s, "--edit") == 0 ||
			    strncmp(s, "--preserve-env", 14) == 0 || strcmp(s, "-E") == 0) {
				refuse(w, AG_DENY, "wrapper:sudo",
				    "'%s %s' starts a shell, an editor or keeps the environment; name the command instead",
				    base, s);
				return (size_t)-1;
			}
			/* the last letter of a cluster may take the next word */
			if (s[1] != '-' && strchr("ugCDhprtTUc", s[strlen(s) - 1]) != NULL)
				i++;
		}
		return i;
	}
	if (strcmp(base, "flock") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "-c") == 0 || strcmp(s, "--command") == 0) {
				refuse(w, AG_DENY, "wrapper:flock",
				    "'flock -c' runs a shell command string; give the command as words");
				return (size_t)-1;
			}
			if (strcmp(s, "-w") == 0 || strcmp(s, "-E") == 0 ||
			    strcmp(s, "--timeout") == 0 || strcmp(s, "--conflict-exit-code") == 0) {
				i++;
				continue;
			}
			if (s[0] != '-')
				break;
		}
		return i + 1;	/* the lock file */
	}
	if (strcmp(base, "watch") == 0) {
		size_t k;

		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-n") == 0 || strcmp(a[i].lit, "--interval") == 0 ||
			    strcmp(a[i].lit, "-q") == 0) {
				i++;
				continue;
			}
			if (a[i].lit[0] != '-')
				break;
		}
		/* without -x watch hands the words to sh -c */
		for (k = i; k < na; k++)
			if (a[k].lit == NULL || strpbrk(a[k].lit, ";&|<>()$`\\\"'*?[]{}~#\n!") != NULL) {
				refuse(w, AG_DENY, "wrapper:watch",
				    "watch runs its arguments through sh -c; shell syntax in them cannot be checked");
				return (size_t)-1;
			}
		return i;
	}
	if (strcmp(base, "strace") == 0 || strcmp(base, "ltrace") == 0) {
		for (; i < na; i++) {
			const char *s;

			NEED_LIT(i);
			s = a[i].lit;
			if (strcmp(s, "--") == 0)
				return i + 1;
			if (s[0] != '-')
				break;
			if (strcmp(s, "-p") == 0 || strncmp(s, "-p", 2) == 0 ||
			    strcmp(s, "-E") == 0 || strncmp(s, "-E", 2) == 0) {
				refuse(w, AG_DENY, "wrapper:trace",
				    "'%s %s' attaches to another process or changes its environment", base, s);
				return (size_t)-1;
			}
			if (strcmp(s, "-o") == 0) {
				NEED_LIT(i + 1);
				check_path(w, a[i + 1].lit, ACC_WRITE, NULL);
				i++;
				continue;
			}
			if (s[2] == '\0' && strchr("abeIPsSuXAn", s[1]) != NULL)
				i++;
		}
		return i;
	}
	if (strcmp(base, "busybox") == 0) {
		*flags |= F_NAME_ONLY;
		return i;
	}
	if (strcmp(base, "exec") == 0) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "-a") == 0) {
				i++;
				continue;
			}
			if (strcmp(a[i].lit, "--") == 0)
				return i + 1;
			if (a[i].lit[0] != '-')
				break;
		}
		return i;
	}
	if (is_loader(base)) {
		for (; i < na; i++) {
			NEED_LIT(i);
			if (strcmp(a[i].lit, "--argv0") == 0) {
				i++;
				continue;
			}
			if (a[i].lit[0] == '-') {
				refuse(w, AG_DENY, "wrapper:ld.so",
				    "'%s %s' changes what the loader loads", base, a[i].lit);
				return (size_t)-1;
			}
			break;
		}
		/* the loader takes a file, not a name to look up */
		if (i < na && strchr(a[i].lit, '/') == NULL) {
			refuse(w, AG_DENY, "wrapper:ld.so",
			    "the loader's program must be given as a path");
			return (size_t)-1;
		}
		return i;
	}
	/* chroot, su, script, parallel, gdb, ...: no feasible unwrapping */
	return (size_t)-2;
#undef NEED_LIT
}

static void
check_inner(struct walker *w, const char *base, struct arg *a, size_t na, int flags)
{
	char repl[64];
	size_t k, i;
	int f = flags | F_PROG_ONLY;

	if (w->wrap >= MAX_WRAP) {
		refuse(w, AG_DENY, "wrapper", "too many nested wrappers");
		return;
	}
	k = wrapper_inner(w, base, a, na, &f, repl, sizeof(repl));
	if (k == (size_t)-1)
		return;
	if (k == (size_t)-2)
		return;		/* allowed by name, nothing to unwrap */
	if (k >= na) {
		if ((f & F_UNKNOWN_TAIL) && strcmp(base, "xargs") == 0) {
			/* xargs alone runs the program echo (not the builtin): it
			 * must be allowed like any other, or the kernel would stop
			 * it after the gateway said yes */
			char echo[] = "echo", real[PATH_MAX];
			struct arg e = { a[0].w, echo };

			for (i = 0; i < w->prof->nallow; i++)
				if (rule_matches(w, &w->prof->allow[i], echo,
				    lookup(w->pathenv, echo, real, sizeof(real)) == 0 ? real : NULL, 0))
					break;
			if (i == w->prof->nallow) {
				/* the developer tier's kernel lets echo run; a deny
				 * rule still holds */
				if (w->prof->tier == AG_TIER_DEVELOPER)
					(void)deny_hit(w, echo, &e, 1, f);
				else
					refuse(w, AG_DENY, "wrapper:xargs",
					    "'xargs' without a command runs the program echo, which profile '%s' does not allow; name the command xargs should run",
					    w->prof->name ? w->prof->name : "?");
				return;
			}
			w->wrap++;
			check_command(w, &e, 1, f);
			w->wrap--;
			return;
		}
		if (f & F_UNKNOWN_TAIL)
			refuse(w, AG_DENY, "wrapper",
			    "'%s' would run a command taken from its input, which the gateway cannot see",
			    base);
		return;		/* wrapper without a command: prints or exits */
	}
	if (repl[0] != '\0') {
		/* xargs -I: words holding the replacement string come from input */
		struct arg *c = calloc(na - k, sizeof(*c));

		if (c == NULL) {
			w->oom = 1;
			return;
		}
		for (i = k; i < na; i++) {
			c[i - k] = a[i];
			if (a[i].lit != NULL && strstr(a[i].lit, repl) != NULL)
				c[i - k].lit = NULL;
		}
		w->wrap++;
		check_command(w, c, na - k, f);
		w->wrap--;
		free(c);
		return;
	}
	w->wrap++;
	check_command(w, a + k, na - k, f);
	w->wrap--;
}

/* find -exec CMD ... ; / + : check CMD as a command of its own. */
static void
check_find(struct walker *w, struct arg *a, size_t na, int flags)
{
	size_t i, j;
	char ex[80];

	if (flags & F_UNKNOWN_TAIL) {
		refuse(w, AG_DENY, "program:find",
		    "find would get arguments from xargs that the gateway cannot check");
		return;
	}
	if (nonlit_in_option_position(a, na, find_valopts, &j)) {
		refuse(w, AG_DENY, "program:find",
		    "'%s' could be a find action that deletes, writes or runs something; write it literally",
		    excerpt(a[j].w->raw, ex, sizeof(ex)));
		return;
	}
	/* -delete removes what the search finds below the start paths */
	for (i = 1; i < na; i++)
		if (a[i].lit && strcmp(a[i].lit, "-delete") == 0)
			break;
	if (i < na) {
		size_t nstart = 0;

		/* find's own options come before the start paths */
		for (j = 1; j < na && a[j].lit; j++) {
			if (strcmp(a[j].lit, "-D") == 0)
				j++;
			else if (strcmp(a[j].lit, "-H") != 0 && strcmp(a[j].lit, "-L") != 0 &&
			    strcmp(a[j].lit, "-P") != 0 && strncmp(a[j].lit, "-O", 2) != 0)
				break;
		}
		for (; j < na; j++) {
			const char *s = a[j].lit;

			if (s == NULL) {
				refuse(w, AG_DENY, "path:literal",
				    "'find -delete' needs literal start paths");
				return;
			}
			if (s[0] == '-' || s[0] == '(' || s[0] == '!')
				break;
			check_path(w, s, ACC_WRITE, NULL);
			nstart++;
		}
		if (nstart == 0)
			check_path(w, ".", ACC_WRITE, NULL);
	}
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (strcmp(s, "-exec") == 0 || strcmp(s, "-execdir") == 0 ||
		    strcmp(s, "-ok") == 0 || strcmp(s, "-okdir") == 0) {
			struct arg *inner;
			size_t ni = 0;

			for (j = i + 1; j < na; j++)
				if (a[j].lit && (strcmp(a[j].lit, ";") == 0 ||
				    strcmp(a[j].lit, "+") == 0))
					break;
			if (j == i + 1) {
				refuse(w, AG_DENY, "program:find", "'find %s' without a command", s);
				return;
			}
			inner = calloc(j - i - 1, sizeof(*inner));
			if (inner == NULL) {
				w->oom = 1;
				return;
			}
			for (ni = 0; ni < j - i - 1; ni++) {
				inner[ni] = a[i + 1 + ni];
				if (inner[ni].lit && strstr(inner[ni].lit, "{}") != NULL)
					inner[ni].lit = NULL;	/* a file name find fills in */
			}
			if (inner[0].lit == NULL)
				refuse(w, AG_DENY, "literal",
				    "the command of 'find %s' must be a literal word", s);
			else if (strcmp(s, "-execdir") == 0 || strcmp(s, "-okdir") == 0) {
				/* runs in each file's directory: relative names cannot be
				 * checked */
				if (strchr(inner[0].lit, '/') != NULL && inner[0].lit[0] != '/')
					refuse(w, AG_DENY, "program:find",
					    "'find %s' with a relative program path", s);
				else {
					w->wrap++;
					check_command(w, inner, ni, flags | F_PROG_ONLY);
					w->wrap--;
				}
			} else {
				w->wrap++;
				check_command(w, inner, ni, flags | F_PROG_ONLY);
				w->wrap--;
			}
			free(inner);
			i = j;
			continue;
		}
		if ((strcmp(s, "-fprint") == 0 || strcmp(s, "-fprint0") == 0 ||
		    strcmp(s, "-fls") == 0 || strcmp(s, "-fprintf") == 0)) {
			if (i + 1 >= na || a[i + 1].lit == NULL) {
				refuse(w, AG_DENY, "path:literal",
				    "the file of 'find %s' must be literal", excerpt(s, ex, sizeof(ex)));
				return;
			}
			check_path(w, a[i + 1].lit, ACC_WRITE, NULL);
		}
	}
}

/* ---- builtins ----------------------------------------------------------- */

static const struct ag_rule *
find_builtin_rule(struct walker *w, const char *name, size_t *idx)
{
	size_t i;

	for (i = 0; i < w->prof->nallow; i++)
		if (w->prof->allow[i].command != NULL &&
		    strcmp(w->prof->allow[i].command, name) == 0) {
			*idx = i;
			return &w->prof->allow[i];
		}
	return NULL;
}

/* declare/typeset/local/export/readonly NAME[=VALUE]... */
static void
check_declare(struct walker *w, const char *name, struct arg *a, size_t na)
{
	size_t i;
	int opts_done = 0;
	char ex[80];

	for (i = 1; i < na; i++) {
		const struct ag_sh_word *wd = a[i].w;
		const char *s = a[i].lit;
		char nm[256];
		size_t nl = 0;

		if (!opts_done && s != NULL && (s[0] == '-' || s[0] == '+') && s[1] != '\0') {
			if (strcmp(s, "--") == 0) {
				opts_done = 1;
				continue;
			}
			if (strpbrk(s + 1, "fF") != NULL) {
				refuse(w, AG_DENY, "builtin:functions",
				    "'%s %s' defines, exports or prints functions; not allowed",
				    name, s);
				return;
			}
			if (strpbrk(s + 1, "ni") != NULL && strcmp(name, "export") != 0) {
				refuse(w, AG_DENY, "builtin:declare",
				    "'%s %s' is not allowed: namerefs (-n) and integer variables (-i) make later assignments evaluate or redirect values",
				    name, s);
				return;
			}
			continue;
		}
		opts_done = 1;
		/* the name part must be literal even when the value is not:
		 * join the leading literal parts (quoting does not matter to a
		 * builtin's argument) */
		{
			char pre[512];
			size_t pl = 0, k;
			int whole = 1;
			const char *eq;

			for (k = 0; k < wd->nparts; k++) {
				const struct ag_sh_part *pp = &wd->parts[k];

				if (pp->type != AG_SH_P_LIT) {
					whole = 0;
					break;
				}
				if (pl + pp->len >= sizeof(pre)) {
					whole = 0;	/* too long to judge: the name check fails */
					break;
				}
				memcpy(pre + pl, pp->text, pp->len);
				pl += pp->len;
			}
			pre[pl] = '\0';
			while (nl < pl && (isalnum((unsigned char)pre[nl]) || pre[nl] == '_'))
				nl++;
			if (nl == pl && !whole)
				nl = 0;		/* NAME$x: the name itself is not literal */
			else if (nl < pl && pre[nl] != '=' && pre[nl] != '[' &&
			    !(pre[nl] == '+' && nl + 1 < pl && pre[nl + 1] == '='))
				nl = 0;
			if (nl == 0 || nl >= sizeof(nm) || !ag_sh_is_name(pre, nl)) {
				refuse(w, AG_DENY, "literal",
				    "'%s' needs literal variable names, not '%s'", name,
				    excerpt(wd->raw, ex, sizeof(ex)));
				return;
			}
			memcpy(nm, pre, nl);
			nm[nl] = '\0';
			if (!check_var_name(w, nm, strcmp(name, "export") == 0 ?
			    "exporting" : "setting"))
				return;
			if (pre[nl] == '[') {
				const char *cl = memchr(pre + nl, ']', pl - nl);

				if (cl == NULL) {
					refuse(w, AG_DENY, "arith", "array subscripts must be literal");
					return;
				}
				arith_scan(w, pre + nl + 1, (size_t)(cl - pre - nl - 1));
			}
			eq = memchr(pre, '=', pl);
			/* declare -a a='(...)' is parsed again as a compound
			 * assignment, and so may be an expanded value */
			if (strcmp(name, "export") != 0 && eq != NULL &&
			    (eq[1] == '(' || (eq + 1 == pre + pl && !whole))) {
				refuse(w, AG_DENY, "builtin:declare",
				    "'%s NAME=(...)' in a quoted or expanded value is parsed again by bash; use NAME=(...) directly",
				    name);
				return;
			}
		}
		if (s != NULL) {
			const char *eq = strchr(s, '=');

			if (eq && is_plain_int(eq + 1, strlen(eq + 1)) && eq[-1] != '+')
				mark_int(w, nm, nl);
		}
	}
}

static void
check_test(struct walker *w, const char *name, struct arg *a, size_t na)
{
	size_t i;
	char ex[80];

	for (i = 1; i < na; i++) {
		const struct ag_sh_word *wd = a[i].w;
		size_t k;

		/* unquoted expansions split into any number of words, one of
		 * which may become -v */
		for (k = 0; k < wd->nparts; k++) {
			const struct ag_sh_part *p = &wd->parts[k];

			if (p->quote == AG_SH_Q_NONE && (p->type == AG_SH_P_PARAM ||
			    p->type == AG_SH_P_CMDSUB || p->type == AG_SH_P_ARITH ||
			    p->type == AG_SH_P_GLOB || p->type == AG_SH_P_BRACE)) {
				refuse(w, AG_DENY, "builtin:test",
				    "'%s' with an unquoted expansion ('%s') is not allowed: quote it (\"$x\")",
				    name, excerpt(wd->raw, ex, sizeof(ex)));
				return;
			}
		}
		if ((a[i].lit == NULL || strcmp(a[i].lit, "-v") == 0) && i + 1 < na) {
			const char *nx = a[i + 1].lit;

			if (nx == NULL) {
				refuse(w, AG_DENY, "builtin:test",
				    "'%s' with '-v' (or a word that may be '-v') before a non-literal word is not allowed: bash evaluates a subscript in it",
				    name);
				return;
			}
			if (nx != NULL && strchr(nx, '[') != NULL && !check_name_text(w, nx))
				return;
		}
	}
}

/*
 * `set`: the options agents put at the top of every script only make the
 * shell stricter or louder (-e -u -x -v -E, -o pipefail ...), on or off.
 * The rest changes how later words are read or what runs, which the
 * decision has already assumed (-k, -a, -f, +B, -h, -H, -o posix, -T, -P,
 * -n, which would also stop the runner's own capture of the environment),
 * or sets the positional parameters (`set --`, `set x`), so it stays
 * refused.  Bare `set`, `set -o` and `set +o` only print: the variables are
 * the filtered environment that `env` shows too and what the line itself
 * set.  All of it lasts for the one command line (each runs in a fresh
 * runner).
 */
static void
check_set(struct walker *w, struct arg *a, size_t na)
{
	static const char *const names[] = {
		"errexit", "nounset", "xtrace", "verbose", "errtrace", "pipefail", NULL
	};
	const char *letters = "euxvE";
	char ex[80];
	size_t i;

	for (i = 1; i < na; i++) {
		const char *o = a[i].lit, *c;
		int want_name = 0;

		if (o == NULL) {
			refuse(w, AG_DENY, "builtin:set", "'set' needs literal options");
			return;
		}
		if ((o[0] != '-' && o[0] != '+') || o[1] == '\0' || strcmp(o, "--") == 0) {
			refuse(w, AG_DENY, "builtin:set",
			    "'set %s' sets the positional parameters; only shell options (set -euo pipefail) are allowed",
			    excerpt(o, ex, sizeof(ex)));
			return;
		}
		for (c = o + 1; *c != '\0'; c++) {
			if (*c == 'o')
				want_name++;
			else if (strchr(letters, *c) == NULL) {
				refuse(w, AG_DENY, "builtin:set",
				    "'set %c%c' changes how the shell reads or runs commands; allowed: set -e -u -x -v -E -o pipefail (errexit, nounset, xtrace, verbose, errtrace)",
				    o[0], *c);
				return;
			}
		}
		for (; want_name > 0; want_name--) {
			if (i + 1 >= na)
				break;	/* `set -o` alone lists the options */
			i++;
			if (a[i].lit == NULL || !in_list(names, a[i].lit)) {
				refuse(w, AG_DENY, "builtin:set",
				    "'set -o %s' is not allowed; allowed: pipefail, errexit, nounset, xtrace, verbose, errtrace",
				    excerpt(a[i].lit ? a[i].lit : a[i].w->raw, ex, sizeof(ex)));
				return;
			}
		}
	}
}

static void
check_builtin(struct walker *w, const char *name, struct arg *a, size_t na, int flags)
{
	size_t ridx = 0, i;
	const struct ag_rule *r = find_builtin_rule(w, name, &ridx);
	char ridbuf[160], ex[80];
	const char *rid = NULL;

	set_path(w, w->cur, "builtin");
	if (strcmp(name, "command") == 0) {
		size_t k = 1;

		for (; k < na && a[k].lit && a[k].lit[0] == '-' && a[k].lit[1]; k++) {
			if (strcmp(a[k].lit, "--") == 0) {
				k++;
				break;
			}
			if (strchr(a[k].lit, 'v') || strchr(a[k].lit, 'V'))
				return;		/* lookup only */
			if (strchr(a[k].lit, 'p')) {
				refuse(w, AG_DENY, "builtin:command",
				    "'command -p' searches a default PATH the profile does not set");
				return;
			}
		}
		if (k >= na)
			return;
		if (a[k].lit == NULL) {
			refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
			    excerpt(a[k].w->raw, ex, sizeof(ex)));
			return;
		}
		w->wrap++;
		check_command(w, a + k, na - k, flags | F_NO_FUNCS);
		w->wrap--;
		return;
	}
	if (strcmp(name, "builtin") == 0) {
		if (na < 2)
			return;
		if (a[1].lit == NULL) {
			refuse(w, AG_DENY, "literal", "builtin name must be a literal word, not '%s'",
			    excerpt(a[1].w->raw, ex, sizeof(ex)));
			return;
		}
		w->wrap++;
		check_command(w, a + 1, na - 1, flags | F_BUILTIN_ONLY);
		w->wrap--;
		return;
	}
	if (r == NULL && strcmp(name, "set") == 0) {
		check_set(w, a, na);
		return;
	}
	if (r == NULL && !in_list(harmless_builtins, name)) {
		char rule[64];

		snprintf(rule, sizeof(rule), "builtin:%s", name);
		refuse(w, AG_DENY, rule,
		    "'%s' is a shell builtin that is not allowed in profile '%s' (it can run code, change the shell, or hide what runs); allowed here: %s",
		    name, w->prof->name ? w->prof->name : "?", allowed_list(w));
		return;
	}
	if (r != NULL) {
		rid = rule_id(w, r, 0, ridx, ridbuf, sizeof(ridbuf));
		if (rule_has_constraints(r) && has_nonlit(a, na)) {
			refuse(w, AG_DENY, rid,
			    "'%s' has argument rules in profile '%s', so its arguments must be literal words",
			    name, w->prof->name ? w->prof->name : "?");
			return;
		}
		for (i = 1; i < na; i++) {
			if (r->deny_args.n && arg_matches(w, &r->deny_args, a[i].lit)) {
				refuse(w, AG_DENY, rid, "argument '%s' of '%s' is denied by the profile",
				    excerpt(a[i].lit, ex, sizeof(ex)), name);
				return;
			}
			if (r->args.n && !arg_matches_mode(w, &r->args, a[i].lit, 1)) {
				refuse(w, AG_DENY, rid, "argument '%s' of '%s' is not among the allowed arguments",
				    excerpt(a[i].lit, ex, sizeof(ex)), name);
				return;
			}
		}
	}
	/* what every allowed builtin still may not do */
	if (strcmp(name, "printf") == 0) {
		if (na > 1 && (a[1].lit == NULL || strncmp(a[1].lit, "-v", 2) == 0)) {
			refuse(w, AG_DENY, "builtin:printf",
			    "'printf -v' (or a non-literal first argument, which could become -v) assigns a variable; not allowed");
		}
	} else if (strcmp(name, "export") == 0 || strcmp(name, "declare") == 0 ||
	    strcmp(name, "typeset") == 0 || strcmp(name, "local") == 0 ||
	    strcmp(name, "readonly") == 0) {
		check_declare(w, name, a, na);
	} else if (strcmp(name, "unset") == 0) {
		for (i = 1; i < na; i++) {
			if (a[i].lit == NULL) {
				refuse(w, AG_DENY, "literal", "'unset' needs literal names");
				return;
			}
			if (strcmp(a[i].lit, "-f") == 0 || a[i].lit[0] == '-')
				continue;
			if (strchr(a[i].lit, '[') != NULL) {
				check_name_text(w, a[i].lit);
				continue;
			}
			check_var_name(w, a[i].lit, "unsetting");
		}
	} else if (strcmp(name, "test") == 0 || strcmp(name, "[") == 0) {
		check_test(w, name, a, na);
	} else if (strcmp(name, "cd") == 0 || strcmp(name, "pushd") == 0) {
		const char *t = NULL;
		int known = 1, physical = 0, is_pushd = name[0] == 'p';

		for (i = 1; i < na; i++) {
			const char *o = a[i].lit;

			if (o == NULL) {
				char *p = word_path(a[i].w);

				if (p == NULL)
					known = 0;
				else
					t = own(w, p);
				break;
			}
			if (strcmp(o, "--") == 0) {
				if (i + 1 < na) {
					t = a[i + 1].lit;
					known = t != NULL;
				}
				break;
			}
			if (o[0] == '-' && o[1] != '\0') {
				if (is_pushd && strcmp(o, "-n") == 0) {
					/* only adds to the stack: no cd */
					w->cd_ok = NULL;
					return;
				}
				/* cd -L -P -e -@ (the last of -L/-P counts); pushd -N
				 * rotates the stack */
				if (is_pushd || strspn(o + 1, "LPe@") != strlen(o + 1)) {
					known = 0;
					break;
				}
				for (o++; *o != '\0'; o++)
					if (*o == 'P' || *o == 'L')
						physical = *o == 'P';
				continue;
			}
			t = o;
			break;
		}
		/* bare cd goes home; bare pushd swaps with the stack */
		if (t == NULL && known && i >= na && !is_pushd)
			t = w->home;
		if (t == NULL || strcmp(t, "-") == 0 || t[0] == '+' ||
		    env_get(w, "CDPATH") != NULL)
			known = 0;
		cwd_change(w, known ? t : NULL, physical);
	} else if (strcmp(name, "popd") == 0) {
		cwd_change(w, NULL, 0);
	} else if (strcmp(name, "read") == 0 || strcmp(name, "mapfile") == 0 ||
	    strcmp(name, "readarray") == 0 || strcmp(name, "getopts") == 0) {
		int is_read = strcmp(name, "read") == 0;

		for (i = 1; i < na; i++) {
			const char *s = a[i].lit;

			if (s == NULL) {
				refuse(w, AG_DENY, "literal", "'%s' needs literal arguments", name);
				return;
			}
			if (s[0] == '-') {
				if ((is_read && strchr(s, 'e')) || (!is_read && strchr(s, 'C'))) {
					refuse(w, AG_DENY, is_read ? "builtin:read" : "builtin:mapfile",
					    "'%s %s' can run commands (readline or a callback)", name, s);
					return;
				}
				if (strlen(s) == 2 && strchr(is_read ? "adinNptu" : "dnOsuc", s[1])) {
					/* read -a NAME assigns an array */
					if (is_read && s[1] == 'a' && i + 1 < na) {
						if (a[i + 1].lit == NULL) {
							refuse(w, AG_DENY, "literal",
							    "'read -a' needs a literal array name");
							return;
						}
						if (!check_var_name(w, a[i + 1].lit, "setting"))
							return;
					}
					i++;
				} else if (is_read && strchr(s, 'a') != NULL) {
					refuse(w, AG_DENY, "builtin:read",
					    "write 'read -a NAME' with -a on its own");
					return;
				}
				continue;
			}
			check_var_name(w, s, "setting");
		}
	} else if (strcmp(name, "let") == 0) {
		for (i = 1; i < na; i++)
			walk_word(w, a[i].w, WORD_ARITH);
	} else if (strcmp(name, "hash") == 0 || strcmp(name, "enable") == 0) {
		for (i = 1; i < na; i++)
			if (a[i].lit == NULL || (a[i].lit[0] == '-' &&
			    strpbrk(a[i].lit, "pf") != NULL)) {
				refuse(w, AG_DENY, strcmp(name, "hash") == 0 ? "builtin:hash" : "builtin:enable",
				    "'%s -p/-f' changes which file a command name runs", name);
				return;
			}
	} else if (strcmp(name, "exec") == 0) {
		if (na > 1)
			check_inner(w, "exec", a, na, flags);
	}
}

/*
 * Does deny rule d's subcommand list cover this command?  1 yes, 0 no,
 * -1 the gateway cannot tell (a word it cannot see before the subcommand,
 * or xargs/find supplying the words where the subcommand would be).
 *
 * Unlike find_subcommand, it errs towards "yes": an option the gateway
 * does not know may take the next word as its value (`make -C dir
 * install`, `npm --prefix x publish`), so that word and the one after
 * it are both taken as the subcommand.
 */
static int
deny_subcommand(const struct ag_rule *d, const char *base, struct arg *a, size_t na,
    int flags)
{
	const struct gopt *opts = tool_opts(base), *o;
	int maybe_value = 0;
	size_t i;

	for (i = 1; i < na; i++) {
		const char *s = a[i].lit, *eq;
		size_t nl;

		if (s == NULL)
			return -1;
		if (strcmp(s, "--") == 0) {
			if (i + 1 >= na)
				break;
			if (a[i + 1].lit == NULL)
				return -1;
			return ag_strlist_contains(&d->subcommands, a[i + 1].lit) ? 1 : 0;
		}
		if (s[0] != '-' || s[1] == '\0') {
			if (ag_strlist_contains(&d->subcommands, s))
				return 1;
			if (maybe_value) {	/* perhaps the value: look on */
				maybe_value = 0;
				continue;
			}
			return 0;
		}
		eq = strchr(s, '=');
		nl = eq ? (size_t)(eq - s) : strlen(s);
		for (o = opts; o && o->name; o++)
			if (strlen(o->name) == nl && strncmp(o->name, s, nl) == 0)
				break;
		if (o != NULL && o->name != NULL) {
			maybe_value = 0;
			if (o->value && eq == NULL) {
				if (++i >= na)
					break;
				if (a[i].lit == NULL)
					return -1;
			}
			continue;
		}
		maybe_value = eq == NULL;
	}
	/* no subcommand among the words: none, or the one xargs appends */
	return (flags & F_UNKNOWN_TAIL) ? -1 : 0;
}

/* Deny rules: 1 when one refuses the command (refusal recorded). */
static int
deny_hit(struct walker *w, const char *base, struct arg *a, size_t na, int flags)
{
	char ridbuf[160], ex[80];
	const char *rid = NULL;
	size_t i;

	for (i = 0; i < w->prof->ndeny; i++) {
		const struct ag_rule *d = &w->prof->deny[i];
		int hit = 0;
		size_t j;

		if (d->command == NULL || strcmp(base_name(d->command), base) != 0)
			continue;
		rid = rule_id(w, d, 1, i, ridbuf, sizeof(ridbuf));
		if (!rule_has_constraints(d))
			hit = 1;
		if (!hit && d->args.n == 0 && d->deny_args.n == 0) {
			/* subcommands only: what follows the subcommand cannot
			 * change which subcommand runs */
			int r = deny_subcommand(d, base, a, na, flags);

			if (r < 0) {
				refuse(w, AG_DENY, rid, has_nonlit(a, na) ?
				    "'%s' has deny rules in profile '%s' and an argument the gateway cannot see before its subcommand; use literal arguments" :
				    "'%s' has deny rules in profile '%s' on its subcommand, which xargs or find would supply; give the subcommand literally",
				    base, w->prof->name ? w->prof->name : "?");
				return 1;
			}
			if (r == 0)
				continue;
			hit = 1;
		}
		if (!hit && (has_nonlit(a, na) || (flags & F_UNKNOWN_TAIL))) {
			refuse(w, AG_DENY, rid,
			    "'%s' has deny rules in profile '%s' and an argument the gateway cannot see; use literal arguments",
			    base, w->prof->name ? w->prof->name : "?");
			return 1;
		}
		for (j = 1; !hit && j < na; j++) {
			if (d->args.n && arg_matches(w, &d->args, a[j].lit))
				hit = 1;
			if (d->deny_args.n && arg_matches(w, &d->deny_args, a[j].lit))
				hit = 1;
		}
		if (!hit && d->subcommands.n && deny_subcommand(d, base, a, na, flags) == 1)
			hit = 1;
		if (hit) {
			refuse(w, AG_DENY, rid, "'%s' is denied by a rule in profile '%s'",
			    excerpt(w->cur >= 0 && w->wrap == 0 && w->cmds[w->cur].text &&
			    w->cmds[w->cur].text[0] != '\0' ? w->cmds[w->cur].text : base,
			    ex, sizeof(ex)),
			    w->prof->name ? w->prof->name : "?");
			return 1;
		}
	}
	return 0;
}

/* ---- one command -------------------------------------------------------- */

static int
is_function(const struct walker *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nfuncs; i++)
		if (strcmp(w->funcs[i], name) == 0)
			return 1;
	return 0;
}

static void
check_command(struct walker *w, struct arg *a, size_t na, int flags)
{
	const char *name = a[0].lit;
	const char *base;
	char real[PATH_MAX], ridbuf[160], ex[80];
	const char *rid = NULL;
	const struct ag_rule *r = NULL;
	size_t ridx = 0, i;
	int rc, bad = 0;

	if (name == NULL) {
		refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
		    excerpt(a[0].w ? a[0].w->raw : "", ex, sizeof(ex)));
		return;
	}
	if (name[0] == '\0') {
		refuse(w, AG_DENY, "literal", "an empty command name is not allowed");
		return;
	}
	base = base_name(name);
	if (flags & F_NAME_ONLY) {
		/* a busybox applet: judged by its name alone */
		for (i = 0; i < w->prof->nallow; i++)
			if (rule_matches(w, &w->prof->allow[i], name, NULL, 1))
				break;
		if (strchr(name, '/') != NULL || i == w->prof->nallow) {
			refuse_unknown(w, name, " (as a busybox applet)");
			return;
		}
		flags &= ~F_NAME_ONLY;
		r = &w->prof->allow[i];
		ridx = i;
		rc = 0;
		real[0] = '\0';
		goto have_rule;
	}
	if (strchr(name, '/') == NULL && !(flags & F_PROG_ONLY)) {
		if (!(flags & (F_NO_FUNCS | F_BUILTIN_ONLY)) && is_function(w, name) &&
		    !is_bash_builtin(name) &&
		    lookup(w->pathenv, name, real, sizeof(real)) == -1) {
			/* its body was checked where it was defined; and if the
			 * definition did not run (an if, a subshell), the name
			 * runs nothing.  A function shadowing a builtin or a
			 * program is judged as that builtin or program. */
			set_path(w, w->cur, "function");
			return;
		}
		if (is_bash_builtin(name)) {
			/* deny rules name builtins too */
			if (!deny_hit(w, name, a, na, flags))
				check_builtin(w, name, a, na, flags);
			return;
		}
	}
	if (flags & F_BUILTIN_ONLY) {
		refuse(w, AG_DENY, "builtin", "'%s' is not a shell builtin",
		    excerpt(name, ex, sizeof(ex)));
		return;
	}
	rc = resolve_cmd(w, name, real, sizeof(real));
	if (rc == -2 && w->prof->tier == AG_TIER_DEVELOPER && strchr(name, '/') != NULL &&
	    !deny_hit(w, base, a, na, flags)) {
		/* developer tier only: which file ./x is cannot be told here
		 * (a cd the gateway cannot follow); the kernel lets only
		 * paths.exec and the system's programs run, and the exec
		 * supervisor applies the deny rules to whatever it is.  The
		 * deny rules by name hold here already.  The strict tier
		 * refuses below. */
		if (w->cur >= 0 && w->wrap == 0)
			set_path(w, w->cur, NULL);
		allow_as(w, "kernel:exec", "allowed: which file '%s' is depends on a 'cd' the "
		    "gateway cannot follow; the kernel sandbox decides", excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (rc == -2) {
		refuse(w, AG_DENY, "path",
		    strchr(name, '/') ? "cannot tell which file '%s' is after a 'cd' in the same line"
		    : "PATH has a relative or empty entry, so '%s' cannot be resolved safely",
		    excerpt(name, ex, sizeof(ex)));
		return;
	}
	if (w->cur >= 0 && w->wrap == 0)
		set_path(w, w->cur, rc == 0 ? real : NULL);

	/* deny rules first: matched by name, which also covers other files
	 * with the same name */
	if (deny_hit(w, base, a, na, flags))
		return;

	for (i = 0; i < w->prof->nallow; i++)
		if (rule_matches(w, &w->prof->allow[i], name, rc == 0 ? real : NULL, 0)) {
			r = &w->prof->allow[i];
			ridx = i;
			break;
		}
	if (r == NULL && rc == 0 && strchr(name, '/') != NULL &&
	    w->prof->tier == AG_TIER_DEVELOPER && inside_list(w, &w->prof->paths_exec, real)) {
		char rid2[256];

		snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
		    w->prof->name ? w->prof->name : "?");
		allow_as(w, rid2, "allowed: '%s' lies beneath paths.exec", excerpt(real, ex, sizeof(ex)));
		return;
	}
	if (r == NULL) {
		if (rc == 0 && in_list(safe_wrappers, base)) {
			if (strcmp(base, "time") == 0)
				check_outputs(w, base, a, na, NULL, flags);
			check_inner(w, base, a, na, flags);
			return;
		}
		if (in_list(risky_wrappers, base) || is_loader(base)) {
			char rule[64];

			snprintf(rule, sizeof(rule), "wrapper:%s", base);
			refuse(w, AG_DENY, rule,
			    "'%s' runs other programs with other rights or outside the gateway's view; not allowed in profile '%s'",
			    base, w->prof->name ? w->prof->name : "?");
			return;
		}
		if (rc != 0 && strchr(name, '/') != NULL && w->prof->tier == AG_TIER_DEVELOPER &&
		    exec_target_ok(w, name)) {
			/* built earlier in the same line (`cc -o t t.c && ./t`):
			 * the kernel and the exec supervisor judge it when it runs */
			char rid2[256];

			snprintf(rid2, sizeof(rid2), "profiles.%s.paths.exec",
			    w->prof->name ? w->prof->name : "?");
			allow_as(w, rid2, "allowed: '%s' will lie beneath paths.exec",
			    excerpt(name, ex, sizeof(ex)));
		} else if (rc != 0)
			refuse_unknown(w, name, strchr(name, '/') ? " (no such program)"
			    : " (and not found in PATH)");
		else if (strchr(name, '/') != NULL && w->prof->nallow > 0) {
			/* a path that looks like an allowed name but is another file */
			int same_name = 0;

			for (i = 0; i < w->prof->nallow; i++)
				if (w->prof->allow[i].command &&
				    strcmp(base_name(w->prof->allow[i].command), base) == 0)
					same_name = 1;
			if (same_name)
				refuse(w, AG_DENY, "path",
				    "'%s' is not the '%s' the profile allows (a different file with the same name)",
				    excerpt(name, ex, sizeof(ex)), base);
			else
				refuse_unknown(w, name, NULL);
		} else
			refuse_unknown(w, name, NULL);
		return;
	}
have_rule:
	rid = rule_id(w, r, 0, ridx, ridbuf, sizeof(ridbuf));
	if ((flags & F_UNKNOWN_TAIL) && rule_has_constraints(r)) {
		refuse(w, AG_DENY, rid,
		    "'%s' has argument rules in profile '%s', but xargs/find would add arguments the gateway cannot see",
		    base, w->prof->name ? w->prof->name : "?");
		return;
	}
	if (rule_has_constraints(r) && has_nonlit(a, na)) {
		for (i = 1; i < na && a[i].lit; i++)
			;
		refuse(w, AG_DENY, rid,
		    "'%s' has argument rules in profile '%s', so its arguments must be literal words, not '%s'",
		    base, w->prof->name ? w->prof->name : "?",
		    excerpt(i < na && a[i].w ? a[i].w->raw : "", ex, sizeof(ex)));
		return;
	}
	for (i = 1; i < na; i++) {
		if (a[i].lit == NULL)
			continue;
		if (r->deny_args.n && arg_matches(w, &r->deny_args, a[i].lit)) {
			refuse(w, AG_DENY, rid, "argument '%s' of '%s' is denied in profile '%s'",
			    excerpt(a[i].lit, ex, sizeof(ex)), base,
			    w->prof->name ? w->prof->name : "?");
			return;
		}
		if (r->args.n && !arg_matches_mode(w, &r->args, a[i].lit, 1)) {
			refuse(w, AG_DENY, rid,
			    "argument '%s' of '%s' is not among the arguments profile '%s' allows",
			    excerpt(a[i].lit, ex, sizeof(ex)), base,
			    w->prof->name ? w->prof->name : "?");
			return;
		}
	}
	{
		const char *cdir = NULL;

		if (r->subcommands.n > 0 || tool_opts(base) != NULL) {
			size_t si = find_subcommand(w, r, rid, base, a, na, &cdir, &bad);

			if (bad)
				return;
			if (r->subcommands.n > 0 && si < na &&
			    (a[si].lit == NULL || !ag_strlist_contains(&r->subcommands, a[si].lit))) {
				char sl[400];

				list_text(&r->subcommands, sl, sizeof(sl));
				refuse(w, AG_DENY, rid,
				    "'%s %s' is not allowed in profile '%s'; allowed here: %s (%s)",
				    base, excerpt(a[si].lit ? a[si].lit : a[si].w->raw, ex, sizeof(ex)),
				    w->prof->name ? w->prof->name : "?", base, sl);
				return;
			}
		}
		check_outputs(w, base, a, na, cdir, flags);
	}
	/* say which rule let it through (kept if something refuses later) */
	if (w->cur >= 0 && w->cmds[w->cur].rule == NULL &&
	    (w->cmds[w->cur].rule = strdup(rid)) == NULL)
		w->oom = 1;
	if (strcmp(base, "find") == 0)
		check_find(w, a, na, flags);
	if (in_list(safe_wrappers, base) || in_list(risky_wrappers, base) || is_loader(base))
		check_inner(w, base, a, na, flags);
}

static void
decide_simple(struct walker *w, const struct ag_sh_node *n)
{
	struct arg stack[MAX_ARGS_STACK], *a = stack;
	long saved = w->cur;
	size_t i;
	char ex[80];

	w->cur = cmd_new(w, NULL, NULL, n->off, n->end);
	if (w->cur < 0) {
		w->cur = saved;
		return;
	}
	for (i = 0; i < n->nassigns; i++)
		check_assign(w, &n->assigns[i], n->nwords == 0);
	for (i = 0; i < n->nwords; i++)
		walk_word(w, n->words[i], WORD_PLAIN);
	check_redirs(w, n->redirs, n->nredirs);
	if (n->nwords == 0) {
		struct ag_policy_cmd *c = &w->cmds[w->cur];

		free(c->path);
		c->path = strdup(n->nassigns ? "assignment" : "redirection");
		if (c->path == NULL)
			w->oom = 1;
		w->cur = saved;
		return;
	}
	if (n->nwords > MAX_ARGS_STACK) {
		a = calloc(n->nwords, sizeof(*a));
		if (a == NULL) {
			w->oom = 1;
			w->cur = saved;
			return;
		}
	}
	for (i = 0; i < n->nwords; i++) {
		a[i].w = n->words[i];
		a[i].lit = ag_sh_word_literal(n->words[i], NULL);
		/* "~" is fixed for arguments; as a command name it is refused */
		if (a[i].lit == NULL && i > 0)
			a[i].lit = tilde_arg(w, n->words[i]);
	}
	if (a[0].lit == NULL) {
		refuse(w, AG_DENY, "literal", "command name must be a literal word, not '%s'",
		    excerpt(n->words[0]->raw, ex, sizeof(ex)));
	} else {
		struct ag_policy_cmd *c = &w->cmds[w->cur];

		c->name = strdup(a[0].lit);
		if (c->name == NULL)
			w->oom = 1;
		check_command(w, a, n->nwords, 0);
	}
	/* check_command may have replaced lits with NULL (xargs -I): the
	 * originals are freed through the words' copies */
	for (i = 0; i < n->nwords; i++)
		free(a[i].lit);
	if (a != stack)
		free(a);
	w->cur = saved;
}

/* ---- compound commands -------------------------------------------------- */

static void
construct(struct walker *w, const char *name, size_t off)
{
	w->cur = -1;
	w->cname = name;
	w->coff = off;
}

static void
walk_node(struct walker *w, const struct ag_sh_node *n)
{
	long saved = w->cur;
	const char *scname = w->cname;
	size_t scoff = w->coff;
	size_t i, j;

	if (n == NULL || w->oom)
		return;
	switch (n->type) {
	case AG_SH_SIMPLE:
		decide_simple(w, n);
		return;
	case AG_SH_LIST:
		for (i = 0; i < n->nkids; i++) {
			if (n->background && n->background[i]) {
				const struct cwdset *cs = w->cwd;

				construct(w, "&", n->kids[i]->end);
				feature_ok(w, w->prof->features.background, "background",
				    "running a command in the background (&)");
				w->cur = saved;
				walk_node(w, n->kids[i]);
				w->cwd = cs;
			} else
				walk_node(w, n->kids[i]);
		}
		break;
	case AG_SH_PIPELINE:
		for (i = 0; i < n->nkids; i++) {
			const struct cwdset *cs = w->cwd;

			walk_node(w, n->kids[i]);
			if (n->nkids > 1)
				w->cwd = cs;	/* each part runs in a subshell */
		}
		break;
	case AG_SH_AND: {
		/*
		 * `cd DIR && cmd`: cmd runs only if the cd succeeded, so only in
		 * DIR.  After the whole list the shell may be wherever a failed
		 * element left it, so every set seen along the way counts then.
		 */
		const struct cwdset *any = w->cwd;

		walk_and(w, n, &any);
		w->cwd = cwd_union(w, any, w->cwd);
		break;
	}
	case AG_SH_OR:
		/* `cd DIR || exit 1`: past it the shell is in DIR or gone */
		if (n->nkids == 2 && is_plain_cd(n->kids[0]) && is_exit(n->kids[1])) {
			const struct cwdset *ok;

			w->cd_ok = NULL;
			walk_node(w, n->kids[0]);
			ok = cd_succeeded(w, n->kids[0]) ? w->cd_ok : NULL;
			walk_node(w, n->kids[1]);
			if (ok != NULL)
				w->cwd = ok;
			break;
		}
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_GROUP:
	case AG_SH_IF:
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_SUBSHELL:
		construct(w, "( )", n->off);
		feature_ok(w, w->prof->features.subshell, "subshell", "a subshell ( ... )");
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_body(w, n->kids[i]);
		break;
	case AG_SH_WHILE:
	case AG_SH_UNTIL:
		if (has_cd(n))
			cwd_change(w, NULL, 0);	/* repeated cd: anywhere */
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_FOR:
	case AG_SH_SELECT:
		construct(w, n->type == AG_SH_FOR ? "for" : "select", n->off);
		if (n->name)
			check_var_name(w, n->name, "looping over");
		for (i = 0; i < n->nwords; i++)
			walk_word(w, n->words[i], WORD_PLAIN);
		w->cur = saved;
		if (has_cd(n))
			cwd_change(w, NULL, 0);
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_ARITH_FOR:
		construct(w, "for ((", n->off);
		if (has_cd(n))
			cwd_change(w, NULL, 0);
		for (i = 0; i < n->nwords; i++)
			walk_word(w, n->words[i], WORD_ARITH);
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_node(w, n->kids[i]);
		break;
	case AG_SH_CASE:
		construct(w, "case", n->off);
		for (i = 0; i < n->nwords; i++)
			walk_word(w, n->words[i], WORD_PLAIN);
		for (i = 0; i < n->nitems; i++)
			for (j = 0; j < n->items[i].npatterns; j++)
				walk_word(w, n->items[i].patterns[j], WORD_PLAIN);
		w->cur = saved;
		for (i = 0; i < n->nitems; i++)
			walk_node(w, n->items[i].body);
		break;
	case AG_SH_DBRACKET: {
		static const char *const arith_ops[] = {
			"-eq", "-ne", "-lt", "-le", "-gt", "-ge", NULL
		};
		unsigned char *isar = NULL;

		w->cur = cmd_new(w, "[[", "keyword", n->off, n->end);
		if (n->nwords > 0 && (isar = calloc(n->nwords, 1)) == NULL) {
			w->oom = 1;
			break;
		}
		for (i = 0; i < n->nwords; i++) {
			const char *r = n->words[i]->raw ? n->words[i]->raw : "";

			if (in_list(arith_ops, r)) {
				if (i > 0)
					isar[i - 1] = 1;
				if (i + 1 < n->nwords)
					isar[i + 1] = 1;
			}
			if (strcmp(r, "-v") == 0 && i + 1 < n->nwords) {
				char *t = ag_sh_word_literal(n->words[i + 1], NULL);

				if (t == NULL)
					refuse(w, AG_DENY, "arith",
					    "'[[ -v ... ]]' needs a literal variable name");
				else if (strchr(t, '['))
					check_name_text(w, t);
				free(t);
			}
		}
		for (i = 0; i < n->nwords; i++)
			walk_word(w, n->words[i], isar[i] ? WORD_ARITH : WORD_PLAIN);
		free(isar);
		break;
	}
	case AG_SH_ARITH_CMD:
		w->cur = cmd_new(w, "((", "keyword", n->off, n->end);
		for (i = 0; i < n->nwords; i++)
			walk_word(w, n->words[i], WORD_ARITH);
		break;
	case AG_SH_FUNCDEF:
		w->cur = cmd_new(w, "function", "keyword", n->off, n->end);
		if (feature_ok(w, w->prof->features.functions, "functions",
		    "defining functions")) {
			if (n->name)
				push_ptr(w, &w->funcs, &w->nfuncs, &w->capfuncs, n->name);
		}
		w->cur = saved;
		if (has_cd(n))
			cwd_change(w, NULL, 0);
		{
			const struct cwdset *cs = w->cwd;

			for (i = 0; i < n->nkids; i++)
				walk_node(w, n->kids[i]);
			w->cwd = cs;
		}
		break;
	case AG_SH_COPROC:
		construct(w, "coproc", n->off);
		feature_ok(w, w->prof->features.coproc, "coproc", "coproc");
		if (n->name)
			check_var_name(w, n->name, "naming a coproc");
		w->cur = saved;
		for (i = 0; i < n->nkids; i++)
			walk_body(w, n->kids[i]);
		break;
	}
	/* trailing redirections of a compound command */
	if (n->type != AG_SH_SIMPLE && n->nredirs > 0) {
		construct(w, "redirection", n->off);
		check_redirs(w, n->redirs, n->nredirs);
	}
	w->cur = saved;
	w->cname = scname;
	w->coff = scoff;
}

/* ---- entry points ------------------------------------------------------- */

static void
finish(struct walker *w, struct ag_decision *out)
{
	size_t i;
	int worst = 0;
	const struct ag_policy_cmd *first = NULL;

	/* arithmetic uses that looked numeric, but the line also assigns
	 * the name something else (a loop, read, a later assignment) */
	if (w->npend > 0 && !w->oom) {
		struct taint t;

		memset(&t, 0, sizeof(t));
		t.w = w;
		taint_node(&t, w->tree);
		for (i = 0; i < w->npend; i++) {
			size_t j;

			for (j = 0; j < t.n; j++)
				if (strcmp(t.v[j], w->pend[i].name) == 0)
					break;
			if (j < t.n) {
				w->cur = w->pend[i].cmd;
				if (w->cur < 0) {
					w->cname = "arithmetic";
					w->coff = 0;
				}
				refuse(w, AG_DENY, "arith",
				    "'%s' is used in arithmetic and also given a value that is not a literal number in the same line; bash would evaluate that value as an expression",
				    w->pend[i].name);
			}
		}
		free((void *)t.v);
	}
	out->cmds = w->cmds;
	out->ncmds = w->ncmds;
	w->cmds = NULL;
	for (i = 0; i < out->ncmds; i++) {
		struct ag_policy_cmd *c = &out->cmds[i];

		if (c->reason == NULL && (c->reason = strdup("allowed")) == NULL)
			w->oom = 1;
		if (c->rule == NULL && (c->rule = strdup(c->path &&
		    strcmp(c->path, "builtin") == 0 ? "builtin" : "allow")) == NULL)
			w->oom = 1;
		if (sev(c->verdict) > worst) {
			worst = sev(c->verdict);
			first = c;
		}
	}
	if (w->oom) {
		out->verdict = AG_DENY;
		snprintf(out->reason, sizeof(out->reason), "denied: out of memory while deciding");
		snprintf(out->rule, sizeof(out->rule), "internal");
		return;
	}
	if (first == NULL) {
		out->verdict = AG_ALLOW;
		snprintf(out->reason, sizeof(out->reason), "allowed");
		/* one command: the rule that let it run (profiles.x.allow[3],
		 * profiles.x.paths.exec, builtin, ...) */
		snprintf(out->rule, sizeof(out->rule), "%s",
		    out->ncmds == 1 && out->cmds[0].rule ? out->cmds[0].rule : "allow");
		return;
	}
	out->verdict = first->verdict;
	snprintf(out->reason, sizeof(out->reason), "%s", first->reason ? first->reason : "denied");
	snprintf(out->rule, sizeof(out->rule), "%s", first->rule ? first->rule : "unknown");
}

static int
decide(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    const char *src, size_t srclen, struct ag_decision *out)
{
	struct walker w;
	size_t i;

	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.prof = ctx ? ctx->profile : NULL;
	if (ctx == NULL || w.prof == NULL || ctx->cwd == NULL || ctx->cwd[0] != '/') {
		out->verdict = AG_DENY;
		snprintf(out->reason, sizeof(out->reason),
		    "denied: no profile or working directory to decide with");
		snprintf(out->rule, sizeof(out->rule), "internal");
		return -1;
	}
	w.tree = tree;
	w.src = src;
	w.srclen = srclen;
	w.cur = -1;
	w.unknown_v = w.prof->unknown == AG_UNKNOWN_ASK ? AG_ASK : AG_DENY;
	w.pathenv = env_get(&w, "PATH");
	if (w.pathenv == NULL)
		w.pathenv = DEFAULT_PATH;
	/* "~" and protected paths need one spelling of home: no trailing
	 * slash, no "//" (a home of "/" is kept as "/") */
	if (ctx->home != NULL && ctx->home[0] == '/' &&
	    ag_path_normalize(ctx->home, w.homebuf, sizeof(w.homebuf)) == 0)
		w.home = w.homebuf;
	w.cwd0.d[0] = ctx->cwd;
	w.cwd0.l[0] = ctx->cwd;
	w.cwd0.n = 1;
	w.cwd = &w.cwd0;

	walk_node(&w, tree);
	finish(&w, out);

	if (w.cmds != NULL) {
		for (i = 0; i < w.ncmds; i++) {
			free(w.cmds[i].name);
			free(w.cmds[i].path);
			free(w.cmds[i].text);
			free(w.cmds[i].reason);
			free(w.cmds[i].rule);
		}
		free(w.cmds);
	}
	for (i = 0; i < w.nowned; i++)
		free(w.owned[i]);
	free(w.owned);
	for (i = 0; i < w.npend; i++)
		free(w.pend[i].name);
	free(w.pend);
	free((void *)w.ints);
	free((void *)w.funcs);
	return w.oom ? -1 : 0;
}

int
ag_policy_decide(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
    struct ag_decision *out)
{
	memset(out, 0, sizeof(*out));
	return decide(ctx, tree, NULL, 0, out);
}

int
ag_policy_check(const struct ag_policy_ctx *ctx, const char *line, size_t len,
    struct ag_decision *out)
{
	struct ag_sh_node *tree = NULL;
	struct ag_err err;
	enum ag_sh_status st;
	int r;

	memset(out, 0, sizeof(*out));
	ag_err_clear(&err);
	st = ag_sh_parse(line, len, &tree, &err);
	if (st != AG_SH_OK) {
		out->verdict = AG_DENY;
		out->parse_error = 1;
		out->incomplete = st == AG_SH_INCOMPLETE;
		if (out->incomplete)
			snprintf(out->reason, sizeof(out->reason),
			    "denied: the command is incomplete (%s)",
			    err.msg[0] ? err.msg : "needs more input");
		else if (err.off >= 0)
			snprintf(out->reason, sizeof(out->reason),
			    "denied: cannot parse the command at byte %ld: %s", err.off,
			    err.msg[0] ? err.msg : "syntax error");
		else
			snprintf(out->reason, sizeof(out->reason),
			    "denied: cannot parse the command: %s",
			    err.msg[0] ? err.msg : "syntax error");
		snprintf(out->rule, sizeof(out->rule), "parse");
		ag_sh_free(tree);
		return 0;
	}
	r = decide(ctx, tree, line, len, out);
	ag_sh_free(tree);
	return r;
}

void
ag_decision_free(struct ag_decision *d)
{
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->ncmds; i++) {
		free(d->cmds[i].name);
		free(d->cmds[i].path);
		free(d->cmds[i].text);
		free(d->cmds[i].reason);
		free(d->cmds[i].rule);
	}
	free(d->cmds);
	d->cmds = NULL;
	d->ncmds = 0;
}
