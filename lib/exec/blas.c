/*
 * exec/blas.c: OpenBLAS opened on first use (exec/blas.h).
 */
#include "config.h"

#include "exec/blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ge_blas_fns fns;

static void *need(void *h, const char *name)
{
	void *f = dlsym(h, name);
	if (!f) {
		fprintf(stderr, "gerewrite: %s: no %s in it: the runner needs"
			" OpenBLAS\n", GE_BLAS_SONAME, name);
		exit(EXIT_FAILURE);
	}
	return f;
}

static void open_blas(void)
{
	/* RTLD_LOCAL: its symbols serve the four lookups below alone */
	void *h = dlopen(GE_BLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		fprintf(stderr, "gerewrite: the runner needs OpenBLAS (%s): %s\n",
			GE_BLAS_SONAME, why ? why : "cannot open it");
		exit(EXIT_FAILURE);
	}
	/* object pointers to function pointers, as POSIX defines dlsym */
	*(void **)&fns.sgemm = need(h, "cblas_sgemm");
	*(void **)&fns.dgemm = need(h, "cblas_dgemm");
	*(void **)&fns.get_num_threads = need(h, "openblas_get_num_threads");
	*(void **)&fns.set_num_threads = need(h, "openblas_set_num_threads");
}

const ge_blas_fns *ge_blas(void)
{
	pthread_once(&once, open_blas);
	return &fns;
}
