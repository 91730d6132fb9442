/* lazylib.c - a shared library loaded the first time it is needed; see lazylib.h */
#include "agconfig.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common/lazylib.h"

int
ag_lazylib_load(const char *soname, const struct ag_lazysym *syms, size_t n, void *table,
    char *why, size_t whylen)
{
	void *dl;
	size_t i;

	if ((dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(why, whylen, "cannot load %s: %s", soname, dlerror());
		return -1;
	}
	for (i = 0; i < n; i++) {
		void *f = dlsym(dl, syms[i].name);

		if (f == NULL) {
			/* the handle stays open: nothing of a half-resolved
			 * table is ever called, and closing could unmap what a
			 * constructor registered */
			snprintf(why, whylen, "%s has no %s", soname, syms[i].name);
			return -1;
		}
		memcpy((char *)table + syms[i].off, &f, sizeof(f));
	}
	return 0;
}
