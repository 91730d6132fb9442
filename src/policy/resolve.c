/*
 * resolve.c - which file a command name runs, and where the admin's own
 * paths lead, cached per thread so a typical line costs no stat(2) at all
 * (see walker.h).
 */
#include "agconfig.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "policy/pathutil.h"
#include "policy/walker.h"

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

/*
 * On the heap, not in the thread's static TLS: every new thread (the exec
 * supervisor's, one per command) would clear 40 KiB of TLS, and while the
 * command's forked runner shares the gateway's pages each of those is a
 * copy-on-write fault.
 */
static __thread struct pcache_ent *pcache;

/* The last PATH hashed, and its hash: a session's lines nearly all use one
 * PATH, and comparing it costs a fraction of hashing it again. */
static __thread char *hpath;
static __thread uint64_t hpath_hash;

/*
 * The caches are per thread (the exec supervisor judges execs in a thread
 * of its own): what a thread cached is freed when it ends.
 */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void rcache_free(void);

static void
cache_free(void *unused)
{
	size_t i;

	(void)unused;
	for (i = 0; pcache != NULL && i < PCACHE_SIZE; i++) {
		free(pcache[i].pathenv);
		free(pcache[i].name);
		free(pcache[i].real);
	}
	free(pcache);
	pcache = NULL;
	free(hpath);
	hpath = NULL;
	rcache_free();
}

static void
cache_key_make(void)
{
	(void)pthread_key_create(&cache_key, cache_free);
}

/* This thread is about to cache something: have it freed when it ends. */
static void
cache_in_use(void)
{
	(void)pthread_once(&cache_once, cache_key_make);
	if (pthread_getspecific(cache_key) == NULL)
		(void)pthread_setspecific(cache_key, (void *)1);
}

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

uint64_t
ag_walk_hash(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	h ^= 0xff;
	h *= 1099511628211ULL;
	return h;
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
	int r;

	if (ag_path_lexical()) {
		/* another host's files: the first PATH entry holds every name */
		if (pathenv != NULL && (r = ag_path_search(pathenv, name, buf, sizeof(buf))) < 0)
			return r;
		return ag_path_normalize(pathenv != NULL ? buf : name, real, realsz) < 0 ? -1 : 0;
	}
	if (pathenv == NULL) {
		if (!ag_path_is_exec_file(name) || realpath(name, rp) == NULL)
			return -1;
		if (strlen(rp) >= realsz)
			return -1;
		strcpy(real, rp);
		return 0;
	}
	if ((r = ag_path_search(pathenv, name, buf, sizeof(buf))) < 0)
		return r;
	if (realpath(buf, rp) == NULL || strlen(rp) >= realsz)
		return -1;
	strcpy(real, rp);
	return 0;
}

static uint64_t
path_hash(const char *pathenv)
{
	char *copy;

	if (hpath != NULL && strcmp(hpath, pathenv) == 0)
		return hpath_hash;
	if ((copy = strdup(pathenv)) == NULL)
		return ag_walk_hash(1469598103934665603ULL, pathenv);
	free(hpath);
	hpath = copy;
	hpath_hash = ag_walk_hash(1469598103934665603ULL, pathenv);
	return hpath_hash;
}

int
ag_walk_lookup(const char *pathenv, const char *name, char *real, size_t realsz)
{
	struct pcache_ent *cand[2], *ce;
	uint64_t key;
	long long now;
	int r, k;

	if (ag_path_lexical())
		return lookup_uncached(pathenv, name, real, realsz);
	if (pcache == NULL) {
		if ((pcache = calloc(PCACHE_SIZE, sizeof(*pcache))) == NULL)
			return lookup_uncached(pathenv, name, real, realsz);
		cache_in_use();
	}
	key = ag_walk_hash(path_hash(pathenv ? pathenv : ""), name);
	now = now_ms();
	/* two-way: a name has two possible slots, so two hot names that
	 * hash alike do not evict each other on every line */
	cand[0] = &pcache[key % PCACHE_SIZE];
	cand[1] = &pcache[(key >> 32) % PCACHE_SIZE];
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
	cache_in_use();
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

static void
rcache_free(void)
{
	size_t i;

	for (i = 0; i < RCACHE_SIZE; i++) {
		free(rcache[i].key);
		free(rcache[i].val);
		memset(&rcache[i], 0, sizeof(rcache[i]));
	}
}

int
ag_walk_cached_resolve(const char *abs, char *out, size_t outsz)
{
	struct rcache_ent *ce = &rcache[ag_walk_hash(1469598103934665603ULL, abs) % RCACHE_SIZE];
	long long now = now_ms();

	if (ag_path_lexical())
		return ag_path_resolve(abs, out, outsz);

	if (ce->key != NULL && ce->expires > now && strcmp(ce->key, abs) == 0 &&
	    strlen(ce->val) < outsz) {
		strcpy(out, ce->val);
		return 0;
	}
	if (ag_path_resolve(abs, out, outsz) < 0)
		return -1;
	cache_in_use();
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
