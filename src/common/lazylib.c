/* lazylib.c - a shared library loaded the first time it is needed; see lazylib.h */
#include "agconfig.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common/lazylib.h"

int
ag_lazylib_load(struct ag_lazylib *lib, const struct ag_lazysym *syms, size_t n, void *table)
{
	void *dl;
	size_t i;

	if (lib->state != 0)
		return lib->state > 0 ? 0 : -1;
	lib->state = -1;
	if ((dl = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(lib->why, sizeof(lib->why), "cannot load %s: %s", lib->soname, dlerror());
		return -1;
	}
	for (i = 0; i < n; i++) {
		void *f = dlsym(dl, syms[i].name);

		if (f == NULL) {
			/* the handle stays open: nothing of a half-resolved
			 * table is ever called, and closing could unmap what a
			 * constructor registered */
			snprintf(lib->why, sizeof(lib->why), "%s has no %s", lib->soname,
			    syms[i].name);
			return -1;
		}
		memcpy((char *)table + syms[i].off, &f, sizeof(f));
	}
	lib->state = 1;
	return 0;
}
