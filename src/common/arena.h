/*
 * arena.h - memory for many small pieces that live and die together (a
 * parse tree, a decision's strings), released whole.
 *
 * Nothing in an arena is freed on its own, so an error path only stops
 * building.  Under AddressSanitizer each piece is a chunk of its own, so a
 * read or write past one is still caught.
 */
#ifndef AG_ARENA_H
#define AG_ARENA_H

#include <stddef.h>
#include <string.h>

struct arena_chunk;

/* Only arena.c and ag_arena_alloc() below look inside. */
struct ag_arena {
	char			*next, *end;	/* the room left in the current chunk */
	struct arena_chunk	*all;		/* every chunk, the arena's own first */
	size_t			 total;		/* bytes of all chunks */
	size_t			 limit;
	size_t			 grow;		/* the next chunk for small pieces */
};

#define AG_ARENA_ALIGN	_Alignof(max_align_t)
#define AG_ARENA_SMALL	4096		/* pieces the inline path may take */

/* An empty arena that will hold at most limit bytes; NULL: out of memory. */
struct ag_arena	*ag_arena_new(size_t limit);
void		 ag_arena_free(struct ag_arena *a);

void	*ag_arena_alloc_slow(struct ag_arena *a, size_t sz);

/*
 * sz bytes, zeroed and aligned for any type; NULL past the limit or when
 * out of memory.  Inline because the parser takes tens of pieces a line,
 * most of a size the compiler knows, so the clearing is a few stores.
 */
static inline void *
ag_arena_alloc(struct ag_arena *a, size_t sz)
{
	size_t need = (sz + AG_ARENA_ALIGN - 1) & ~(size_t)(AG_ARENA_ALIGN - 1);

	if (sz - 1 < AG_ARENA_SMALL && need <= (size_t)(a->end - a->next)) {
		void *q = a->next;

		a->next += need;
		return memset(q, 0, sz);
	}
	return ag_arena_alloc_slow(a, sz);
}

/* The piece q (old bytes, from this arena; NULL with old 0 for none) made
 * sz bytes, the new ones zeroed; it may move.  A big piece is resized where
 * it is; a small one is copied and its old room stays in the arena. */
void	*ag_arena_grow(struct ag_arena *a, void *q, size_t old, size_t sz);
char	*ag_arena_strndup(struct ag_arena *a, const char *s, size_t n);
char	*ag_arena_strdup(struct ag_arena *a, const char *s);

#endif
