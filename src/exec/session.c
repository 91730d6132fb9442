/* session.c - tracked state and the builtins run in the gateway; see session.h */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "policy/envsan.h"
#include "common/log.h"
#include "exec/session.h"
#include "exec/session_int.h"
#include "common/strbuf.h"
#include "common/envv.h"

/* ---- environment vector ------------------------------------------------ */

/*
 * Set in the session's vector with count *np: a name bash accepts, and at
 * most AG_SESSION_MAX_ENV entries.
 */
static int
env_set(char ***envp, size_t *np, const char *name, const char *value)
{
	if (!ag_sh_is_name(name, strlen(name)) ||
	    (*np >= AG_SESSION_MAX_ENV && ag_envv_get(*envp, name) == NULL) ||
	    ag_envv_set(envp, name, value) < 0)
		return -1;
	*np = ag_envv_count(*envp);
	return 0;
}

const char *
ag_session_getenv(const struct ag_session *s, const char *name)
{
	return ag_envv_get(s->env, name);
}

int
ag_session_setenv(struct ag_session *s, const char *name, const char *value)
{
	return env_set(&s->env, &s->nenv, name, value);
}

void
ag_session_unsetenv(struct ag_session *s, const char *name)
{
	if (s->env == NULL)
		return;
	ag_envv_unset(s->env, name);
	s->nenv = ag_envv_count(s->env);
}

/* The profile's env.set, applied last at the start of a session so it wins
 * over what sshd passed on. */
static int
apply_env_set(char ***envp, size_t *np, const struct ag_profile *p)
{
	size_t i;

	if (p == NULL)
		return 0;
	for (i = 0; i < p->env_set_keys.n && i < p->env_set_vals.n; i++)
		if (env_set(envp, np, p->env_set_keys.v[i], p->env_set_vals.v[i]) < 0)
			return -1;
	return 0;
}

/* ---- paths --------------------------------------------------------------- */

/*
 * Lexical canonicalisation as bash's `cd -L` does it: join with the base
 * when relative, drop "." and empty components, let ".." remove the
 * previous component.  Returns a malloc'd absolute path.
 */
char *
ag_session_canon_path(const char *base, const char *path)
{
	size_t blen = base != NULL ? strlen(base) : 0, plen = strlen(path), cap;
	char *joined, *out, *tok, *save;
	size_t olen = 0;

	if (blen > PATH_MAX * 4 || plen > PATH_MAX * 4)
		return NULL;
	cap = blen + plen + 3;
	if ((joined = malloc(cap)) == NULL)
		return NULL;
	if (path[0] == '/' || base == NULL)
		snprintf(joined, cap, "%s", path);
	else
		snprintf(joined, cap, "%s/%s", base, path);
	if ((out = malloc(cap)) == NULL) {
		free(joined);
		return NULL;
	}
	out[0] = '\0';
	for (tok = strtok_r(joined, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			while (olen > 0 && out[olen - 1] != '/')
				olen--;
			if (olen > 0)
				olen--;		/* the slash itself */
			out[olen] = '\0';
			continue;
		}
		out[olen++] = '/';
		memcpy(out + olen, tok, strlen(tok) + 1);
		olen += strlen(tok);
	}
	if (olen == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	free(joined);
	return out;
}

/* 0 when path is a directory we may enter, else an errno value. */
int
ag_session_dir_usable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	if (access(path, X_OK) < 0)
		return errno;
	return 0;
}

const char *
ag_session_tilde(const struct ag_session *s, const char *path, char *buf, size_t len)
{
	const char *home = ag_session_getenv(s, "HOME");
	size_t hl = home != NULL ? strlen(home) : 0;

	if (hl > 1 && strncmp(path, home, hl) == 0 && (path[hl] == '\0' || path[hl] == '/'))
		snprintf(buf, len, "~%s", path + hl);
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

/* ---- starting state ---------------------------------------------------- */

/* Values that sshd copied from the client (TERM, LANG) are kept only when
 * they look like what they claim to be. */
static int
plain_value(const char *v)
{
	size_t i;

	if (v == NULL || v[0] == '\0' || strlen(v) > 64)
		return 0;
	for (i = 0; v[i] != '\0'; i++)
		if (!(isalnum((unsigned char)v[i]) || strchr("._-@+", v[i]) != NULL))
			return 0;
	return 1;
}

int
ag_session_init(struct ag_session *s, const struct ag_profile *profile,
    const struct ag_session_origin *o, struct ag_err *err)
{
	const struct passwd *pw;
	char hostbuf[256], *dot;
	int e;

	memset(s, 0, sizeof(*s));
	s->profile = profile;
	errno = 0;
	if ((pw = o->pw) == NULL && (pw = getpwuid(getuid())) == NULL)
		return ag_err_set(err, "cannot look up the account (uid %ld): %s",
		    (long)getuid(), errno ? strerror(errno) : "no such user");
	if (gethostname(hostbuf, sizeof(hostbuf)) < 0)
		snprintf(hostbuf, sizeof(hostbuf), "localhost");
	hostbuf[sizeof(hostbuf) - 1] = '\0';
	if ((dot = strchr(hostbuf, '.')) != NULL)
		*dot = '\0';
	s->user = strdup(pw->pw_name);
	s->home = strdup(pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir : "/");
	s->shell = strdup(pw->pw_shell != NULL && pw->pw_shell[0] != '\0' ?
	    pw->pw_shell : "/bin/sh");
	s->host = strdup(hostbuf);
	if (s->user == NULL || s->home == NULL || s->shell == NULL || s->host == NULL)
		goto nomem;
	if (o->cwd != NULL)
		s->cwd = ag_session_canon_path(NULL, o->cwd);
	else if ((e = ag_session_dir_usable(s->home)) != 0) {
		fprintf(stderr, "agentgate: could not chdir to home directory %s: %s\n",
		    s->home, strerror(e));
		s->cwd = strdup("/");
	} else
		s->cwd = ag_session_canon_path(NULL, s->home);
	if (s->cwd == NULL)
		goto nomem;

	if (ag_session_setenv(s, "HOME", s->home) < 0 ||
	    ag_session_setenv(s, "USER", s->user) < 0 ||
	    ag_session_setenv(s, "LOGNAME", s->user) < 0 ||
	    ag_session_setenv(s, "SHELL", s->shell) < 0 ||
	    ag_session_setenv(s, "PATH", AG_DEFAULT_PATH) < 0 ||
	    ag_session_setenv(s, "LANG", plain_value(o->lang) ? o->lang : "C.UTF-8") < 0 ||
	    ag_session_setenv(s, "PWD", s->cwd) < 0)
		goto nomem;
	if (o->tty && ag_session_setenv(s, "TERM", plain_value(o->term) ? o->term : "dumb") < 0)
		goto nomem;
	if ((o->ssh_connection != NULL &&
	    ag_session_setenv(s, "SSH_CONNECTION", o->ssh_connection) < 0) ||
	    (o->ssh_client != NULL && ag_session_setenv(s, "SSH_CLIENT", o->ssh_client) < 0) ||
	    (o->ssh_tty != NULL && ag_session_setenv(s, "SSH_TTY", o->ssh_tty) < 0))
		goto nomem;
	if (apply_env_set(&s->env, &s->nenv, profile) < 0)
		goto nomem;
	return 0;
nomem:
	ag_session_free(s);
	return ag_err_set(err, "out of memory setting up the session");
}

void
ag_session_free(struct ag_session *s)
{
	size_t i;

	if (s == NULL)
		return;
	free(s->user);
	free(s->home);
	free(s->shell);
	free(s->host);
	free(s->cwd);
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	ag_envv_free(s->env);
	free(s->shell_state);
	memset(s, 0, sizeof(*s));
}

int
ag_session_init_remote(struct ag_session *s, const struct ag_profile *profile,
    const char *user, const char *host, const char *buf, size_t len, struct ag_err *err)
{
	const char *home, *pwd;
	size_t off = 0;

	memset(s, 0, sizeof(*s));
	s->profile = profile;
	s->remote = 1;
	while (off < len) {
		const char *rec = buf + off, *end = memchr(rec, '\0', len - off), *eq;
		char name[256];
		size_t nl;

		if (end == NULL)
			break;
		off += (size_t)(end - rec) + 1;
		if ((eq = memchr(rec, '=', (size_t)(end - rec))) == NULL ||
		    !ag_sh_is_name(rec, (nl = (size_t)(eq - rec))) || nl >= sizeof(name) ||
		    (nl == 5 && strncmp(rec, "SHLVL", 5) == 0) || (nl == 1 && rec[0] == '_'))
			continue;
		memcpy(name, rec, nl);
		name[nl] = '\0';
		if (env_set(&s->env, &s->nenv, name, eq + 1) < 0 && s->nenv < AG_SESSION_MAX_ENV)
			goto nomem;
	}
	if (s->env == NULL && (s->env = calloc(1, sizeof(*s->env))) == NULL)
		goto nomem;
	{
		/* what that sshd gave, as far as a command could not have set it:
		 * the login's own PATH, HOME, SHELL and PWD stay, a BASH_ENV or an
		 * LD_PRELOAD from the host's ~/.ssh/environment does not */
		static const char *const keep[] = { "PATH", "HOME", "SHELL", "PWD", NULL };
		char *kept[4] = { NULL, NULL, NULL, NULL };
		size_t i;
		int bad = 0;

		for (i = 0; keep[i] != NULL; i++)
			if ((home = ag_session_getenv(s, keep[i])) != NULL &&
			    (kept[i] = strdup(home)) == NULL)
				bad = 1;
		ag_envsan_filter(s->env, profile);
		s->nenv = ag_envv_count(s->env);
		for (i = 0; keep[i] != NULL; i++) {
			if (!bad && kept[i] != NULL && env_set(&s->env, &s->nenv, keep[i], kept[i]) < 0)
				bad = 1;
			free(kept[i]);
		}
		if (bad)
			goto nomem;
	}
	home = ag_session_getenv(s, "HOME");
	pwd = ag_session_getenv(s, "PWD");
	s->user = strdup(user);
	s->host = strdup(host);
	s->shell = strdup("/bin/bash");
	s->home = ag_session_canon_path(NULL, home != NULL && home[0] == '/' ? home : "/");
	if (s->user == NULL || s->host == NULL || s->shell == NULL || s->home == NULL)
		goto nomem;
	s->cwd = ag_session_canon_path(NULL, pwd != NULL && pwd[0] == '/' ? pwd : s->home);
	if (s->cwd == NULL || ag_session_setenv(s, "PWD", s->cwd) < 0 ||
	    apply_env_set(&s->env, &s->nenv, profile) < 0)
		goto nomem;
	return 0;
nomem:
	ag_session_free(s);
	return ag_err_set(err, "out of memory setting up the session on %s", host);
}

/* ---- capture ----------------------------------------------------------- */

/* A PATH whose every entry is absolute: an empty or relative one would
 * make a name run a file that depends on the cwd. */
static int
path_usable(const char *v)
{
	const char *p = v;

	if (*v == '\0')
		return 0;
	for (;;) {
		if (*p != '/')
			return 0;
		if ((p = strchr(p, ':')) == NULL)
			return 1;
		p++;
	}
}

/*
 * Names whose value is not carried to the next line: those that change
 * how bash or a program reads what follows (the same names a command
 * cannot export), the runner's own (__ag_: its trap's report sets them
 * after the script began) and bash's bookkeeping, which the next runner
 * sets itself (PIPESTATUS, BASH_REMATCH, FUNCNAME ...).
 */
static int
not_kept(const char *name, const struct ag_profile *profile)
{
	static const char *const own[] = { "PIPESTATUS", "FUNCNAME", "GROUPS", "DIRSTACK",
	    "COMP_WORDS", "COPROC", "PATH", NULL };
	size_t i;

	if (ag_envsan_is_dangerous(name, profile) || strncmp(name, "__ag_", 5) == 0 ||
	    strncmp(name, "BASH_", 5) == 0)
		return 1;
	for (i = 0; own[i] != NULL; i++)
		if (strcmp(name, own[i]) == 0)
			return 1;
	return 0;
}

/* The first entry of a capture's state that is not as the trap writes
 * it: said once (state_forged). */
static void
forged(struct ag_session *s, const char *name, const char *what)
{
	/* a long name is cut: the note names it, nothing reads it back */
	if (s->state_forged[0] == '\0')
		snprintf(s->state_forged, sizeof(s->state_forged), "%.64s (%s)",
		    name != NULL ? name : "an entry", what);
}

/*
 * One record of bash's state beyond the environment: "vNAME=VALUE", a
 * plain variable, becomes an assignment (quoted: a value is never code),
 * unless its name is one that changes how bash or a program reads what
 * follows (the same names a command cannot export); "fTEXT" is `declare
 * -f`'s text, kept as bash wrote it.
 */
static int
keep_state(struct ag_session *s, struct ag_strbuf *vars, struct ag_strbuf *funcs,
    const char *rec, size_t n)
{
	const char *eq;
	char name[256];
	size_t nl;

	if (rec[0] == 'f')
		return ag_strbuf_append(funcs, rec + 1, n - 1);
	if ((eq = memchr(rec + 1, '=', n - 1)) == NULL ||
	    (nl = (size_t)(eq - rec - 1)) >= sizeof(name) || !ag_sh_is_name(rec + 1, nl)) {
		forged(s, NULL, "a variable record with no name bash allows");
		return 0;
	}
	memcpy(name, rec + 1, nl);
	name[nl] = '\0';
	if (not_kept(name, s->profile))
		return 0;
	if (ag_strbuf_append(vars, name, nl) < 0 || ag_strbuf_addch(vars, '=') < 0 ||
	    ag_strbuf_squote(vars, eq + 1, n - (size_t)(eq + 1 - rec)) < 0)
		return -1;
	return ag_strbuf_addch(vars, '\n');
}

/*
 * An array, from its records ("=aTNAME", then "=kKEY" "=eVALUE" for each
 * element; runner.c): NAME=([KEY]=VALUE ...), `declare -A` before it for
 * an associative one.  What comes back is the line's to write (fd 3 is
 * its shell's, and it can remove the trap): it is read as untrusted text
 * and kept only as `declare -p` prints it.  An indexed array's key is a
 * number bash prints (0, or a digit 1-9 and at most 17 more), written
 * unquoted: bash evaluates such a key as arithmetic and expands what is in
 * it, so a quoted `$(..)` there would run at the next line's start.  An
 * associative array's key is quoted (bash never expands a quoted one), and
 * so is every value.  Names refused as keep_state refuses them are left
 * out silently (the trap writes them); an entry that is not as the trap
 * writes it is left out and said (state_forged).
 */
struct kept_arr {
	int		 open;		/* an "=a" record began an array */
	int		 skip;		/* ... whose name is not kept: no text */
	int		 badkey;	/* the last "=k" was left out: its "=e" too */
	char		 type;		/* 'a' or 'A' */
	char		 name[256];	/* for the note */
	const char	*key;		/* the last "=k" record's key, or NULL */
	size_t		 keylen;
};

/* A key as bash prints an indexed array's: no sign, no leading 0, no
 * more digits than a 64-bit index has for sure. */
static int
index_key(const char *k, size_t n)
{
	size_t i;

	if (n == 0 || n > 18 || (k[0] == '0' && n > 1))
		return 0;
	for (i = 0; i < n; i++)
		if (k[i] < '0' || k[i] > '9')
			return 0;
	return 1;
}

static int
keep_array(struct ag_session *s, struct ag_strbuf *vars, struct kept_arr *a, const char *rec,
    size_t n)
{
	const char *key;

	if (rec != NULL && rec[0] == 'k') {
		if (!a->open) {
			forged(s, NULL, "a key of no array");
			return 0;
		}
		if (a->key != NULL)
			forged(s, a->name, "a key with no value");
		a->key = NULL;
		a->badkey = 0;
		if (a->type == 'a' ? !index_key(rec + 1, n - 1) : n < 2) {
			/* an empty key is left out as before, silently: a
			 * bash may hold one where it cannot be written back */
			if (a->type == 'a')
				forged(s, a->name, "an indexed array's key that is not a "
				    "number as bash writes it");
			a->badkey = 1;
			return 0;
		}
		a->key = rec + 1;
		a->keylen = n - 1;
		return 0;
	}
	if (rec != NULL && rec[0] == 'e') {
		if (a->key == NULL) {
			if (!a->badkey)
				forged(s, a->open ? a->name : NULL, "a value with no key");
			a->badkey = 0;
			return 0;
		}
		key = a->key;
		a->key = NULL;
		if (a->skip)
			return 0;
		if (ag_strbuf_addch(vars, '[') < 0 ||
		    (a->type == 'a' ? ag_strbuf_append(vars, key, a->keylen) :
		    ag_strbuf_squote(vars, key, a->keylen)) < 0 ||
		    ag_strbuf_addstr(vars, "]=") < 0 || ag_strbuf_squote(vars, rec + 1, n - 1) < 0 ||
		    ag_strbuf_addch(vars, ' ') < 0)
			return -1;
		return 0;
	}
	/* 'a' or NULL rec: the one open ends */
	if (a->key != NULL)
		forged(s, a->name, "a key with no value");
	if (a->open && !a->skip && ag_strbuf_addstr(vars, ")\n") < 0)
		return -1;
	a->open = a->skip = a->badkey = 0;
	a->key = NULL;
	if (rec == NULL)
		return 0;
	if (n < 3 || (rec[1] != 'a' && rec[1] != 'A') || n - 2 >= sizeof(a->name) ||
	    !ag_sh_is_name(rec + 2, n - 2)) {
		forged(s, NULL, "an array record with no name bash allows");
		/* its elements are left out with it */
		a->open = a->skip = 1;
		a->type = 'A';
		snprintf(a->name, sizeof(a->name), "an array");
		return 0;
	}
	memcpy(a->name, rec + 2, n - 2);
	a->name[n - 2] = '\0';
	a->type = rec[1];
	a->open = 1;
	/* a name not kept: its elements are left out with it, silently */
	a->skip = not_kept(a->name, s->profile);
	if (!a->skip && ((a->type == 'A' && ag_strbuf_addstr(vars, "declare -A ") < 0) ||
	    ag_strbuf_addstr(vars, a->name) < 0 || ag_strbuf_addstr(vars, "=(") < 0))
		return -1;
	return 0;
}

/* The kept state becomes vars then funcs, or stays as it was when they
 * are over the bound (state_dropped says so). */
static int
set_state(struct ag_session *s, struct ag_strbuf *vars, struct ag_strbuf *funcs)
{
	char *t;

	if (vars->len + funcs->len > AG_SESSION_MAX_STATE) {
		s->state_dropped = 1;
		return 0;
	}
	t = NULL;
	if ((funcs->len > 0 && ag_strbuf_append(vars, funcs->data, funcs->len) < 0) ||
	    (vars->len > 0 && (t = ag_strbuf_detach(vars, NULL)) == NULL))
		return -1;
	/* most lines leave what they found: nothing new to judge */
	s->state_changed = (t == NULL) != (s->shell_state == NULL) ||
	    (t != NULL && strcmp(t, s->shell_state) != 0);
	free(s->shell_state);
	s->shell_state = t;
	s->has_funcs = funcs->len > 0;
	return 0;
}

/*
 * The exported names the filter below drops whose value the command
 * changed (`export LD_LIBRARY_PATH=.`): the agent is told they are not
 * carried to the next line, rather than finding them gone.
 */
static void
not_kept_note(struct ag_session *s, char *const *nv)
{
	size_t i, at = 0;

	s->env_not_kept[0] = '\0';
	for (i = 0; nv[i] != NULL; i++) {
		const char *eq = strchr(nv[i], '='), *old;
		char name[64];
		size_t nl;
		int n;

		if (eq == NULL || (nl = (size_t)(eq - nv[i])) >= sizeof(name))
			continue;
		memcpy(name, nv[i], nl);
		name[nl] = '\0';
		/* the loader's and bash's (the gateway sets none of them for a
		 * command, so a changed one is the command's) */
		if (!ag_envsan_is_hard(name) || strcmp(name, "PATH") == 0 ||
		    strncmp(name, "AGENTGATE_", 10) == 0 ||
		    ((old = ag_envv_get(s->env, name)) != NULL && strcmp(old, eq + 1) == 0))
			continue;
		n = snprintf(s->env_not_kept + at, sizeof(s->env_not_kept) - at, "%s%s",
		    at > 0 ? ", " : "", name);
		if (n < 0 || (size_t)n >= sizeof(s->env_not_kept) - at) {
			s->env_not_kept[at] = '\0';
			break;
		}
		at += (size_t)n;
	}
}

int
ag_session_apply_capture(struct ag_session *s, const char *buf, size_t len,
    struct ag_err *err)
{
	char **nv = NULL, *pwd = NULL, *path = NULL;
	struct ag_strbuf vars, funcs, arrs;
	struct kept_arr arr;
	size_t nn = 0, i, off = 0;
	int e, keep = !s->remote && ag_profile_exec_judged(s->profile), has_state = 0;

	ag_strbuf_init(&vars, 0);
	ag_strbuf_init(&funcs, 0);
	ag_strbuf_init(&arrs, 0);
	memset(&arr, 0, sizeof(arr));
	s->state_forged[0] = '\0';
	while (off < len) {
		const char *rec = buf + off, *end = memchr(rec, '\0', len - off), *eq;
		size_t rlen;

		if (end == NULL)
			break;		/* an unterminated tail is ignored */
		rlen = (size_t)(end - rec);
		off += rlen + 1;
		/* what bash kept that the environment does not carry: code and
		 * values of the agent's own, whose every exec is judged */
		if (rlen >= 2 && rec[0] == '=' && (rec[1] == 'v' || rec[1] == 'f')) {
			has_state = 1;
			if (keep && keep_state(s, &vars, &funcs, rec + 1, rlen - 1) < 0)
				goto nomem;
			continue;
		}
		if (rlen >= 2 && rec[0] == '=' && (rec[1] == 'a' || rec[1] == 'k' || rec[1] == 'e')) {
			has_state = 1;
			if (keep && keep_array(s, &arrs, &arr, rec + 1, rlen - 1) < 0)
				goto nomem;
			continue;
		}
		if (rlen >= 1 && rec[0] == '=') {
			/* no record of the trap's */
			if (keep)
				forged(s, NULL, "a record the runner does not write");
			continue;
		}
		if ((eq = memchr(rec, '=', rlen)) == NULL ||
		    !ag_sh_is_name(rec, (size_t)(eq - rec)))
			continue;
		/* bash's own bookkeeping must not accumulate across runners */
		if ((eq - rec == 5 && strncmp(rec, "SHLVL", 5) == 0) ||
		    (eq - rec == 1 && rec[0] == '_'))
			continue;
		if (eq - rec == 3 && strncmp(rec, "PWD", 3) == 0) {
			free(pwd);
			if ((pwd = strdup(eq + 1)) == NULL)
				goto nomem;
			continue;
		}
		if (eq - rec == 4 && strncmp(rec, "PATH", 4) == 0 &&
		    ag_profile_exec_judged(s->profile)) {
			s->path_kept = !path_usable(eq + 1);
			free(path);
			path = NULL;
			if (!s->path_kept && (path = strdup(eq + 1)) == NULL)
				goto nomem;
			continue;
		}
		{
			char name[256];
			size_t nl = (size_t)(eq - rec);

			if (nl >= sizeof(name))
				continue;
			memcpy(name, rec, nl);
			name[nl] = '\0';
			if (env_set(&nv, &nn, name, eq + 1) < 0) {
				if (nn >= AG_SESSION_MAX_ENV)
					continue;
				goto nomem;
			}
		}
	}
	if (keep && (keep_array(s, &arrs, &arr, NULL, 0) < 0 ||
	    (arrs.len > 0 && ag_strbuf_append(&vars, arrs.data, arrs.len) < 0)))
		goto nomem;
	if (nv == NULL && (nv = calloc(1, sizeof(*nv))) == NULL)
		goto nomem;
	not_kept_note(s, nv);
	ag_envsan_filter(nv, s->profile);
	for (nn = 0; nv[nn] != NULL; nn++)
		;
	/*
	 * A dangerous name keeps the value it had before the command (PATH
	 * from the profile, say): the command can neither set nor unset it.
	 */
	for (i = 0; i < s->nenv; i++) {
		const char *eq = strchr(s->env[i], '=');
		char name[256];
		size_t nl;

		if (eq == NULL || (nl = (size_t)(eq - s->env[i])) >= sizeof(name))
			continue;
		memcpy(name, s->env[i], nl);
		name[nl] = '\0';
		if (strcmp(name, "OLDPWD") == 0)
			continue;	/* cd inside the command moves it legitimately */
		if (ag_envsan_is_dangerous(name, s->profile) &&
		    env_set(&nv, &nn, name, eq + 1) < 0)
			goto nomem;
	}
	/* env.set gave the starting values; what is not dangerous the
	 * session may change (export GIT_AUTHOR_NAME=...) */
	/* PATH too, where the exec supervisor judges every exec
	 * (`source .venv/bin/activate` holds for the lines after it) */
	if (path != NULL && env_set(&nv, &nn, "PATH", path) < 0)
		goto nomem;

	if (pwd != NULL && pwd[0] == '/') {
		if ((e = s->remote ? 0 : ag_session_dir_usable(pwd)) == 0) {
			char *c = ag_session_canon_path(NULL, pwd);

			if (c == NULL)
				goto nomem;
			free(s->cwd);
			s->cwd = c;
		} else
			ag_log(LOG_DEBUG, "captured PWD %s not usable: %s", pwd, strerror(e));
	}
	if (env_set(&nv, &nn, "PWD", s->cwd) < 0)
		goto nomem;
	ag_envv_free(s->env);
	s->env = nv;
	s->nenv = nn;
	if (keep && has_state && set_state(s, &vars, &funcs) < 0)
		goto nomem;
	ag_strbuf_free(&vars);
	ag_strbuf_free(&funcs);
	ag_strbuf_free(&arrs);
	free(pwd);
	free(path);
	return 0;
nomem:
	ag_envv_free(nv);
	ag_strbuf_free(&vars);
	ag_strbuf_free(&funcs);
	ag_strbuf_free(&arrs);
	free(pwd);
	free(path);
	return ag_err_set(err, "out of memory applying the captured environment");
}

/* ---- builtins ---------------------------------------------------------- */

static const struct ag_sh_node *
single_simple(const struct ag_sh_node *n)
{
	if (n == NULL || n->type != AG_SH_LIST || n->nkids != 1 ||
	    (n->background != NULL && n->background[0]))
		return NULL;
	n = n->kids[0];
	while (n != NULL && n->type == AG_SH_PIPELINE) {
		if (n->nkids != 1 || n->negated || n->timed)
			return NULL;
		n = n->kids[0];
	}
	if (n == NULL || n->type != AG_SH_SIMPLE || n->nassigns != 0 ||
	    n->nredirs != 0 || n->nwords == 0)
		return NULL;
	return n;
}

/*
 * A word the gateway can expand itself: literal parts, optionally led by
 * an unquoted tilde.  NULL when anything else (a parameter, a glob, ...)
 * is involved; the runner handles those.
 */
static char *
expand_word(const struct ag_session *s, const struct ag_sh_word *w)
{
	struct ag_strbuf sb;
	size_t i;

	ag_strbuf_init(&sb, PATH_MAX * 4);
	if (ag_strbuf_addstr(&sb, "") < 0)
		return NULL;
	for (i = 0; i < w->nparts; i++) {
		const struct ag_sh_part *p = &w->parts[i];

		if (p->type == AG_SH_P_LIT) {
			if (memchr(p->text, '\0', p->len) != NULL ||
			    ag_strbuf_append(&sb, p->text, p->len) < 0)
				goto fail;
		} else if (p->type == AG_SH_P_TILDE && i == 0) {
			const char *v = NULL;

			if (p->text[0] == '\0')
				v = ag_session_getenv(s, "HOME");
			else if (strcmp(p->text, "+") == 0)
				v = s->cwd;
			else if (strcmp(p->text, "-") == 0)
				v = ag_session_getenv(s, "OLDPWD");
			else if (isdigit((unsigned char)p->text[0]) ||
			    ((p->text[0] == '+' || p->text[0] == '-') &&
			    isdigit((unsigned char)p->text[1])))
				goto fail;	/* ~N: dir stack, leave to bash */
			else {
				struct passwd *pw = getpwnam(p->text);

				v = pw != NULL ? pw->pw_dir : NULL;
			}
			if (v == NULL) {	/* bash leaves it as written */
				if (ag_strbuf_addch(&sb, '~') < 0 ||
				    ag_strbuf_addstr(&sb, p->text) < 0)
					goto fail;
			} else if (ag_strbuf_addstr(&sb, v) < 0)
				goto fail;
		} else
			goto fail;
	}
	return ag_strbuf_detach(&sb, NULL);
fail:
	ag_strbuf_free(&sb);
	return NULL;
}

/* The builtins the gateway runs itself: they change only tracked state. */
static const struct {
	const char	*name;
	int		(*run)(struct ag_session *, size_t, char **, FILE *, FILE *);
} gateway_builtins[] = {
	{ "cd", ag_dirstack_cd },
	{ "dirs", ag_dirstack_dirs },
	{ "popd", ag_dirstack_popd },
	{ "pushd", ag_dirstack_pushd },
};

/*
 * The argv of the builtin the gateway would run itself for tree (its
 * entry in *bp, the count in *argcp), or NULL when tree is not one: not a
 * single simple command of those names, or a word the gateway cannot
 * expand (the runner does it then).
 */
static char **
builtin_argv(const struct ag_session *s, const struct ag_sh_node *tree, size_t *bp,
    size_t *argcp)
{
	const struct ag_sh_node *n = single_simple(tree);
	char *name, **argv;
	size_t i, b;

	if (n == NULL || (name = ag_sh_word_literal(n->words[0], NULL)) == NULL)
		return NULL;
	for (b = 0; b < sizeof(gateway_builtins) / sizeof(gateway_builtins[0]); b++)
		if (strcmp(name, gateway_builtins[b].name) == 0)
			break;
	if (b == sizeof(gateway_builtins) / sizeof(gateway_builtins[0]) ||
	    (argv = calloc(n->nwords + 1, sizeof(*argv))) == NULL) {
		free(name);
		return NULL;
	}
	argv[0] = name;
	for (i = 1; i < n->nwords; i++)
		if ((argv[i] = expand_word(s, n->words[i])) == NULL) {
			while (i-- > 0)
				free(argv[i]);
			free(argv);
			return NULL;
		}
	*bp = b;
	*argcp = n->nwords;
	return argv;
}

static void
argv_free(char **argv, size_t argc)
{
	size_t i;

	for (i = 0; argv != NULL && i < argc; i++)
		free(argv[i]);
	free(argv);
}

int
ag_session_is_builtin(const struct ag_session *s, const struct ag_sh_node *tree)
{
	size_t b, argc = 0;
	char **argv = builtin_argv(s, tree, &b, &argc);

	argv_free(argv, argc);
	return argv != NULL;
}

int
ag_session_try_builtin(struct ag_session *s, const struct ag_sh_node *tree,
    FILE *out, FILE *errf, int *status)
{
	size_t b, argc = 0;
	char **argv = builtin_argv(s, tree, &b, &argc);
	int st;

	if (argv == NULL)
		return 0;
	st = gateway_builtins[b].run(s, argc, argv, out, errf);
	fflush(out);
	fflush(errf);
	*status = st;
	s->last_status = st;
	argv_free(argv, argc);
	return 1;
}

int
ag_session_is_bare_exit(const struct ag_session *s, const struct ag_sh_node *tree,
    int *status)
{
	const struct ag_sh_node *n = single_simple(tree);
	char *name, *arg = NULL, *end;
	long v;
	int ok = 0;

	if (n == NULL || n->nwords > 2 || (name = ag_sh_word_literal(n->words[0], NULL)) == NULL)
		return 0;
	if (strcmp(name, "exit") != 0)
		goto out;
	if (n->nwords == 1) {
		*status = s->last_status;
		ok = 1;
		goto out;
	}
	if ((arg = ag_sh_word_literal(n->words[1], NULL)) == NULL || arg[0] == '\0')
		goto out;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (*end != '\0' || errno != 0)
		goto out;	/* bash complains; let the runner say so */
	*status = (int)(v & 0xff);
	ok = 1;
out:
	free(name);
	free(arg);
	return ok;
}

/* ---- can a command change the state? ------------------------------------ */

/* bash's builtins and reserved words, sorted; any of them may touch state
 * unless it is in stateless_builtins below. */
static const char *const bash_builtins[] = {
	"!", ".", ":", "[", "[[", "]]", "alias", "bg", "bind", "break", "builtin", "caller",
	"case", "cd", "command", "compgen", "complete", "compopt", "continue",
	"coproc", "declare", "dirs", "disown", "do", "done", "echo", "elif", "else",
	"enable", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg",
	"fi", "for", "function", "getopts", "hash", "help", "history", "if", "in",
	"jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf",
	"pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set",
	"shift", "shopt", "source", "suspend", "test", "then", "time", "times",
	"trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset",
	"until", "wait", "while", "{", "}",
};

static const char *const stateless_builtins[] = {
	":", "[", "echo", "false", "pwd", "test", "true",
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
in_sorted(const char *const *set, size_t n, const char *name)
{
	return bsearch(&name, set, n, sizeof(*set), cmp_str) != NULL;
}

static int word_stateful(const struct ag_sh_word *w);

static int
part_stateful(const struct ag_sh_part *p)
{
	switch (p->type) {
	case AG_SH_P_PARAM:
		if (p->op != NULL && (strcmp(p->op, "=") == 0 || strcmp(p->op, ":=") == 0))
			return 1;		/* ${x:=v} assigns */
		return word_stateful(p->subscript) || word_stateful(p->operand) ||
		    word_stateful(p->operand2);
	case AG_SH_P_ARITH:
		return 1;			/* $((x=1)), $((x++)) assign */
	case AG_SH_P_CMDSUB:
	case AG_SH_P_PROCSUB:
		return 0;			/* a subshell: its changes die with it */
	default:
		return 0;
	}
}

static int
word_stateful(const struct ag_sh_word *w)
{
	size_t i;

	if (w == NULL)
		return 0;
	for (i = 0; i < w->nparts; i++)
		if (part_stateful(&w->parts[i]))
			return 1;
	return 0;
}

static int
redirs_stateful(const struct ag_sh_node *n)
{
	size_t i;

	for (i = 0; i < n->nredirs; i++)
		if (n->redirs[i].fdvar != NULL || word_stateful(n->redirs[i].target))
			return 1;	/* {var}>file assigns var */
	return 0;
}

static int
node_stateful(const struct ag_sh_node *n, int depth)
{
	size_t i;

	if (n == NULL)
		return 0;
	if (depth > AG_SH_MAX_DEPTH)
		return 1;
	if (redirs_stateful(n))
		return 1;
	switch (n->type) {
	case AG_SH_SIMPLE: {
		char *name;
		int builtin, safe;

		if (n->nassigns != 0)
			return 1;
		if (n->nwords == 0)
			return 0;
		if ((name = ag_sh_word_literal(n->words[0], NULL)) == NULL)
			return 1;
		builtin = in_sorted(bash_builtins, sizeof(bash_builtins) /
		    sizeof(bash_builtins[0]), name);
		safe = in_sorted(stateless_builtins, sizeof(stateless_builtins) /
		    sizeof(stateless_builtins[0]), name);
		free(name);
		if (builtin && !safe)
			return 1;
		for (i = 0; i < n->nwords; i++)
			if (word_stateful(n->words[i]))
				return 1;
		return 0;
	}
	case AG_SH_SUBSHELL:
		return 0;		/* ( ... ) cannot change the caller */
	case AG_SH_PIPELINE:
		if (n->nkids > 1)
			return 0;	/* every part of a real pipeline is a subshell */
		break;
	case AG_SH_LIST:
		for (i = 0; i < n->nkids; i++)
			if ((n->background == NULL || !n->background[i]) &&
			    node_stateful(n->kids[i], depth + 1))
				return 1;
		return 0;
	case AG_SH_AND:
	case AG_SH_OR:
	case AG_SH_GROUP:
	case AG_SH_IF:
	case AG_SH_WHILE:
	case AG_SH_UNTIL:
	case AG_SH_DBRACKET:
		break;
	case AG_SH_CASE:
		for (i = 0; i < n->nitems; i++) {
			size_t k;

			for (k = 0; k < n->items[i].npatterns; k++)
				if (word_stateful(n->items[i].patterns[k]))
					return 1;
			if (node_stateful(n->items[i].body, depth + 1))
				return 1;
		}
		break;
	default:
		return 1;	/* for/select (loop variable), (( )), functions, coproc */
	}
	for (i = 0; i < n->nwords; i++)
		if (word_stateful(n->words[i]))
			return 1;
	for (i = 0; i < n->nkids; i++)
		if (node_stateful(n->kids[i], depth + 1))
			return 1;
	return 0;
}

void
ag_session_keep_state(struct ag_session *s, char *state, int has_funcs)
{
	free(s->shell_state);
	s->shell_state = state;
	s->has_funcs = state != NULL && has_funcs;
}

void
ag_session_forget_state(struct ag_session *s)
{
	free(s->shell_state);
	s->shell_state = NULL;
	s->has_funcs = 0;
}

int
ag_session_shell_word(const char *name)
{
	return name != NULL && in_sorted(bash_builtins, sizeof(bash_builtins) /
	    sizeof(bash_builtins[0]), name);
}

int
ag_session_needs_capture(const struct ag_session *s, const struct ag_sh_node *tree)
{
	/* a kept function (deactivate) changes what the line cannot show */
	return tree == NULL || (s != NULL && s->has_funcs) || node_stateful(tree, 0);
}
