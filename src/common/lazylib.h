/*
 * lazylib.h - a shared library loaded the first time it is needed.
 *
 * Most sessions never make an HTTP request or open a line editor, yet
 * linking libcurl and libedit would map them, and the libraries behind
 * them, into every gateway at start-up (issue 20).  A user of one keeps a
 * table of function pointers, typed with __typeof__ of the library's own
 * declarations, and has it filled here, once.  Set-group-ID, the dynamic
 * loader looks only in the system's directories, never LD_LIBRARY_PATH.
 */
#ifndef AG_LAZYLIB_H
#define AG_LAZYLIB_H

#include <stddef.h>

struct ag_lazysym {
	const char	*name;		/* the symbol */
	size_t		 off;		/* where its address goes in the table */
};

#define AG_LAZYSYM(table, sym, member)	{ #sym, offsetof(table, member) }

/* One library: its name, and how the one attempt to load it went. */
struct ag_lazylib {
	const char	*soname;
	int		 state;		/* 0 not tried, 1 loaded, -1 failed */
	char		 why[192];	/* when failed */
};

/*
 * The first call dlopens lib->soname and stores the address of each of
 * the n symbols into table at its offset; every call returns how that
 * went: 0, or -1 with lib->why (the table is then never to be used).
 */
int	ag_lazylib_load(struct ag_lazylib *lib, const struct ag_lazysym *syms, size_t n,
	    void *table);

#endif
