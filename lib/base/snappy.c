/*
 * base/snappy.c: Snappy opened on first use (base/snappy.h).
 */
#include "config.h"

#include "base/snappy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ge_snappy_fns fns;
static const ge_snappy_fns *opened; /* &fns once all four are found */
static char reason[256];

static void open_snappy(void)
{
	/* RTLD_LOCAL: its symbols serve the four lookups below alone */
	void *h = dlopen(GE_SNAPPY_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(reason, sizeof reason, "cannot open %s: %s",
			 GE_SNAPPY_SONAME, e ? e : "no reason given");
		return;
	}
	static const char *const names[] = {
		"snappy_compress", "snappy_uncompress",
		"snappy_max_compressed_length", "snappy_uncompressed_length",
	};
	void *f[4];
	for (int i = 0; i < 4; i++)
		if (!(f[i] = dlsym(h, names[i]))) {
			snprintf(reason, sizeof reason, "%s: no %s in it",
				 GE_SNAPPY_SONAME, names[i]);
			return;
		}
	/* object pointers to function pointers, as POSIX defines dlsym */
	*(void **)&fns.compress = f[0];
	*(void **)&fns.uncompress = f[1];
	*(void **)&fns.max_compressed_length = f[2];
	*(void **)&fns.uncompressed_length = f[3];
	opened = &fns;
}

const ge_snappy_fns *ge_snappy(const char **why)
{
	pthread_once(&once, open_snappy);
	if (!opened && why)
		*why = reason;
	return opened;
}
