/*
 * lazylib.h - a shared library loaded the first time it is needed.
 *
 * Most sessions never make an HTTP request or open a line editor, yet
 * linking libcurl and libedit would map them, and the libraries behind
 * them, into every gateway at start-up (issue 20).  A user of one keeps a
 * table of function pointers, typed with __typeof__ of the library's own
 * declarations, and fills it here.  Set-group-ID, the dynamic loader looks
 * only in the system's directories, never LD_LIBRARY_PATH.
 */
#ifndef AG_LAZYLIB_H
#define AG_LAZYLIB_H

#include <stddef.h>

struct ag_lazysym {
	const char	*name;		/* the symbol */
	size_t		 off;		/* where its address goes in the table */
};

#define AG_LAZYSYM(table, sym, member)	{ #sym, offsetof(table, member) }

/*
 * dlopen soname and store the address of each of the n symbols into table
 * at its offset.  0, or -1 with why (the table is then not to be used).
 */
int	ag_lazylib_load(const char *soname, const struct ag_lazysym *syms, size_t n,
	    void *table, char *why, size_t whylen);

#endif
