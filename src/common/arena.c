/*
 * arena.c - memory released whole (see arena.h).
 *
 * Why: a parse tree is thousands of small pieces, and a decision a dozen
 * strings per command.  Allocated one by one, a 1 MiB command spent most of
 * its parse in malloc and free, and time grew faster than the input; a
 * short line spent a tenth of its decision there.
 */
#include "agconfig.h"
#include "common/compat.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/arena.h"

#define ARENA_EXACT	AG_ASAN

#define ARENA_CHUNK	(32 * 1024)	/* the first chunk, which holds the arena */
#define ARENA_CHUNK_MAX	(4 * 1024 * 1024)	/* later ones double up to this */
/*
 * A chunk this big is aligned for, and asks for, transparent huge pages:
 * a big tree is new memory at every parse, and taking it a 4 KiB page
 * fault at a time cost more than building the tree (a 1 MiB command: 13,000
 * faults for 52 MiB).  With THP off (or unavailable) the request is only
 * ignored.
 */
#define ARENA_HUGE	(2 * 1024 * 1024)
#define ARENA_BIG	(64 * 1024)	/* a piece this big has a chunk of its own */

struct arena_chunk {
	struct arena_chunk	*next, *prev;
	size_t			 size;
	max_align_t		 data[];
};

/*
 * First chunks are kept for the next arenas: the gateway parses and
 * decides every line it is sent (an arena each), and a 32 KiB malloc and
 * free around each cost as much as a short line's whole tree.  Any thread
 * may take or give one back.
 */
#define ARENA_SPARES	2
static _Atomic(struct arena_chunk *) spare_chunk[ARENA_SPARES];

static struct arena_chunk *
spare_take(void)
{
	struct arena_chunk *c;
	int i;

	for (i = 0; i < ARENA_SPARES; i++)
		if ((c = atomic_exchange(&spare_chunk[i], NULL)) != NULL)
			return c;
	return NULL;
}

static int
spare_give(struct arena_chunk *c)
{
	struct arena_chunk *none;
	int i;

	for (i = 0; i < ARENA_SPARES; i++) {
		none = NULL;
		if (atomic_compare_exchange_strong(&spare_chunk[i], &none, c))
			return 1;
	}
	return 0;
}

static size_t
arena_round(size_t sz)
{
	const size_t align = AG_ARENA_ALIGN;

	if (sz == 0)
		return align;
	return sz > SIZE_MAX - align ? SIZE_MAX : (sz + align - 1) & ~(align - 1);
}

/* A chunk of size bytes, not yet any arena's. */
static struct arena_chunk *
chunk_alloc(size_t size)
{
	struct arena_chunk *c;

	if (size >= ARENA_HUGE) {
		void *q;

		if (posix_memalign(&q, ARENA_HUGE, sizeof(*c) + size) != 0)
			return NULL;
		c = q;
#ifdef MADV_HUGEPAGE
		(void)madvise(c, (sizeof(*c) + size) & ~(size_t)(ARENA_HUGE - 1), MADV_HUGEPAGE);
#endif
	} else if ((ARENA_EXACT || size != ARENA_CHUNK || (c = spare_take()) == NULL) &&
	    (c = malloc(sizeof(*c) + size)) == NULL)
		return NULL;
	c->size = size;
	c->prev = c->next = NULL;
	return c;
}

static void
chunk_link(struct ag_arena *a, struct arena_chunk *c)
{
	if ((c->next = a->all) != NULL)
		c->next->prev = c;
	a->all = c;
	a->total += c->size;
}

static struct arena_chunk *
chunk_new(struct ag_arena *a, size_t size)
{
	struct arena_chunk *c;

	if (size > a->limit || a->total > a->limit - size || (c = chunk_alloc(size)) == NULL)
		return NULL;
	chunk_link(a, c);
	return c;
}

/* The arena lives at the start of its first chunk: one allocation, often
 * a spare, per arena. */
struct ag_arena *
ag_arena_new(size_t limit)
{
	struct arena_chunk *c;
	struct ag_arena *a;

	if (ARENA_EXACT) {
		if ((a = calloc(1, sizeof(*a))) != NULL)
			a->limit = limit;
		return a;
	}
	if ((c = chunk_alloc(ARENA_CHUNK)) == NULL)
		return NULL;
	a = (struct ag_arena *)(void *)c->data;
	memset(a, 0, sizeof(*a));
	a->limit = limit;
	a->grow = ARENA_CHUNK * 2;
	a->next = (char *)c->data + arena_round(sizeof(*a));
	a->end = (char *)c->data + ARENA_CHUNK;
	chunk_link(a, c);
	return a;
}

void
ag_arena_free(struct ag_arena *a)
{
	struct arena_chunk *c, *next;

	if (a == NULL)
		return;
	/* a itself is in one of the chunks unless each piece is exact */
	for (c = a->all; c != NULL; c = next) {
		next = c->next;
		if (ARENA_EXACT || c->size != ARENA_CHUNK || !spare_give(c))
			free(c);
	}
	if (ARENA_EXACT)
		free(a);
}

/* need bytes (rounded) from the current chunk, or a new one twice as big. */
static void *
bump(struct ag_arena *a, size_t need)
{
	struct arena_chunk *c;
	void *q;

	if (need > (size_t)(a->end - a->next)) {
		size_t size = a->grow < ARENA_CHUNK_MAX ? a->grow : ARENA_CHUNK_MAX;

		if ((c = chunk_new(a, size)) == NULL)
			return NULL;
		if (a->grow < ARENA_CHUNK_MAX)
			a->grow *= 2;
		a->next = (char *)c->data;
		a->end = (char *)c->data + size;
	}
	q = a->next;
	a->next += need;
	return q;
}

void *
ag_arena_alloc_slow(struct ag_arena *a, size_t sz)
{
	struct arena_chunk *c;
	size_t need = arena_round(sz);
	void *q;

	if (ARENA_EXACT || need >= ARENA_BIG) {
		if ((c = chunk_new(a, need)) == NULL)
			return NULL;
		q = c->data;
	} else if ((q = bump(a, need)) == NULL)
		return NULL;
	memset(q, 0, sz);
	return q;
}

/*
 * The piece q has a chunk of its own: make it sz bytes in place where the
 * allocator can.  The parts of a long word or the kids of a long list are
 * one array that would otherwise be copied at every doubling and leave
 * each old copy behind.
 */
static void *
chunk_resize(struct ag_arena *a, void *q, size_t sz)
{
	struct arena_chunk *c = (struct arena_chunk *)(void *)((char *)q -
	    offsetof(struct arena_chunk, data)), *n;
	size_t need = arena_round(sz), old = c->size;

	/* a stack (open braces) shrinks and grows again: it may have the room */
	if (need <= old)
		return q;
	if (need > a->limit || a->total - old > a->limit - need ||
	    (n = realloc(c, sizeof(*n) + need)) == NULL)
		return NULL;
	memset((char *)n->data + old, 0, need - old);
	n->size = need;
	a->total = a->total - old + need;
	if (n->prev != NULL)
		n->prev->next = n;
	else
		a->all = n;
	if (n->next != NULL)
		n->next->prev = n;
	return n->data;
}

void *
ag_arena_grow(struct ag_arena *a, void *q, size_t old, size_t sz)
{
	void *n;

	if (q == NULL)
		return ag_arena_alloc(a, sz);
	if (ARENA_EXACT || arena_round(old) >= ARENA_BIG)
		return chunk_resize(a, q, sz);
	if ((n = ag_arena_alloc(a, sz)) != NULL)
		memcpy(n, q, old < sz ? old : sz);
	return n;
}

char *
ag_arena_strndup(struct ag_arena *a, const char *s, size_t n)
{
	char *d;

	n = strnlen(s, n);
	if (n == SIZE_MAX)
		return NULL;
	/* a string needs no clearing: only its terminator is written */
	if (!ARENA_EXACT && n < AG_ARENA_SMALL)
		d = bump(a, arena_round(n + 1));
	else
		d = ag_arena_alloc_slow(a, n + 1);
	if (d == NULL)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *
ag_arena_strdup(struct ag_arena *a, const char *s)
{
	return ag_arena_strndup(a, s, SIZE_MAX);
}
