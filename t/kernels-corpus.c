/*
 * kernels-corpus: every op type of every corpus model (its graph and every
 * function body of its library) runs in the runner (a kernel, or the
 * executor's own handling: ge_xrun_knows_type), or stands in
 * t/kernels-corpus-exceptions.txt with its reason.  One assertion per op
 * type, naming a model that uses it (an op whose type names a function of
 * the model's library is a call, the executor's business); an exception for a type that has a
 * kernel now fails too, so that the list stays true.  And the Const
 * kernel reads every Const of every model (graph and bodies).
 *
 * GE_KC_LIST=1 prints every op type with its model count and whether it
 * has a kernel, as diagnostics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/kernel.h"
#include "functions/func.h"
#include "formats/model.h"
#include "tap.h"

typedef struct optype {
	char *type;
	char *model; /* the first model using it */
	int models;
	int last;    /* index of the last model counted */
} optype;

static optype *types;
static size_t ntypes, captypes;

static void note(const char *type, const char *model, int idx)
{
	for (size_t i = 0; i < ntypes; i++)
		if (!strcmp(types[i].type, type)) {
			if (types[i].last != idx) {
				types[i].models++;
				types[i].last = idx;
			}
			return;
		}
	if (ntypes == captypes) {
		captypes = captypes ? captypes * 2 : 256;
		types = realloc(types, captypes * sizeof *types);
		if (!types)
			exit(1);
	}
	types[ntypes].type = strdup(type);
	types[ntypes].model = strdup(model);
	types[ntypes].models = 1;
	types[ntypes].last = idx;
	ntypes++;
}

static int calls; /* ops whose type is a function of the library */
static ge_xbudget budget;

/* Runs the Const kernel on every Const of g: the count that failed, the
 * first message in why. */
static int consts(const ge_graph *g, int *count, char *why, size_t cap)
{
	const ge_kdef *d = ge_kernel_find("Const");
	int bad = 0;
	for (ge_opid id = 0; id < ge_graph_capacity(g); id++) {
		if (!ge_op_alive(g, id) || strcmp(ge_op_type(g, id), "Const"))
			continue;
		ge_xt *out[1] = {NULL};
		ge_error err = {0, ""};
		ge_kctx k = {g, id, "Const", ge_op_name(g, id), NULL, 0, out, 1,
			     &budget, NULL, &err};
		(*count)++;
		if (d->fn(&k) != GE_OK || !out[0]) {
			if (!bad++)
				snprintf(why, cap, "%s", err.msg);
		}
		ge_xt_unref(out[0]);
	}
	return bad;
}

/* The op types of g; a type naming a function of root's library is a
 * call, which the executor runs, not a kernel. */
static void graph_types(ge_graph *root, const ge_graph *g, const char *model,
			int idx)
{
	for (ge_opid id = 0; id < ge_graph_capacity(g); id++) {
		if (!ge_op_alive(g, id))
			continue;
		if (ge_func_find(root, ge_op_type(g, id)) != GE_NOFUNC) {
			calls++;
			continue;
		}
		note(ge_op_type(g, id), model, idx);
	}
}

/* The models: the manifest's graph kinds, fuzz inputs left out. */
static int wanted(const char *kind)
{
	static const char *kinds[] = {
		"GraphDef", "GraphDef-text", "MetaGraphDef", "SavedModel",
		"SavedModel-text", "tfjs-model-json", NULL};
	for (int i = 0; kinds[i]; i++)
		if (!strcmp(kind, kinds[i]))
			return 1;
	return 0;
}

typedef struct exc {
	char type[128];
	char reason[256];
	int used;
} exc;

static exc *excs;
static size_t nexc;

static void read_exceptions(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;
	if (!f) {
		printf("Bail out! cannot read %s\n", path);
		exit(1);
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		size_t n = strcspn(line, " \t");
		const char *r = line + n + strspn(line + n, " \t");
		if (nexc == cap) {
			cap = cap ? cap * 2 : 64;
			excs = realloc(excs, cap * sizeof *excs);
			if (!excs)
				exit(1);
		}
		snprintf(excs[nexc].type, sizeof excs[nexc].type, "%.*s",
			 (int)n, line);
		snprintf(excs[nexc].reason, sizeof excs[nexc].reason, "%s", r);
		excs[nexc].used = 0;
		if (!*r) {
			printf("Bail out! %s: %s has no reason\n", path,
			       excs[nexc].type);
			exit(1);
		}
		nexc++;
	}
	fclose(f);
}

static exc *exception(const char *type)
{
	for (size_t i = 0; i < nexc; i++)
		if (!strcmp(excs[i].type, type))
			return &excs[i];
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const optype *)a)->type, ((const optype *)b)->type);
}

static void load_one(const char *corpus, const char *rel, const char *kind,
		     int idx)
{
	char path[8300];
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	if (!strncmp(kind, "SavedModel", 10)) { /* the directory */
		char *slash = strrchr(path, '/');
		if (slash)
			*slash = 0;
	}
	ge_graph *g = NULL;
	ge_error err = {0, ""};
	ge_load_opts o = {0};
	o.no_check = 1;
	if (ge_load(path, &o, &g, &err)) {
		tap_diag("%s does not load: %s", rel, err.msg);
		return;
	}
	int n = 0, bad;
	char why[1024] = "";
	graph_types(g, g, rel, idx);
	bad = consts(g, &n, why, sizeof why);
	for (ge_funcid f = 0; f < ge_func_capacity(g); f++) {
		if (!ge_func_alive(g, f))
			continue;
		ge_graph *body = ge_func_body(g, f, NULL);
		if (body) {
			graph_types(g, body, rel, idx);
			bad += consts(body, &n, why, sizeof why);
		}
	}
	ok(bad == 0 && budget.mem_live == 0, "%s: the Const kernel reads its "
	   "%d Consts%s%s", rel, n, bad ? ", not: " : "", why);
	ge_graph_free(g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (set GE_CORPUS)");
	const char *src = getenv("GE_TOP_SRCDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/t/kernels-corpus-exceptions.txt",
		 src ? src : ".");
	read_exceptions(path);
	ge_xbudget_init(&budget);
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f)
		tap_skip_all("no MANIFEST.tsv");
	char line[8192];
	int models = 0;
	while (fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		char *kind = tab + 1;
		kind[strcspn(kind, "\t\n")] = 0;
		if (!wanted(kind) || strstr(line, "fuzz_generated/"))
			continue;
		load_one(corpus, line, kind, models++);
	}
	fclose(f);
	qsort(types, ntypes, sizeof *types, by_name);
	int list = getenv("GE_KC_LIST") != NULL;
	int with = 0;
	for (size_t i = 0; i < ntypes; i++) {
		const optype *t = &types[i];
		int has = ge_xrun_knows_type(t->type);
		exc *e = exception(t->type);
		with += has;
		if (list)
			tap_diag("%-40s %3d %s%s %s", t->type, t->models,
				 has ? "kernel" : "-", e ? " (exception)" : "", t->model);
		if (e)
			e->used = 1;
		if (has && e)
			ok(0, "%s has a kernel now: remove it from the "
			   "exceptions (%s)", t->type, e->reason);
		else if (has)
			ok(1, "%s has a kernel", t->type);
		else
			ok(e != NULL, "%s: %s (%d models, e.g. %s)", t->type,
			   e ? e->reason : "no kernel", t->models, t->model);
	}
	for (size_t i = 0; i < nexc; i++)
		if (!excs[i].used && ge_xrun_knows_type(excs[i].type))
			ok(0, "exception %s has a kernel now: remove it",
			   excs[i].type);
	tap_diag("%d models, %zu op types, %d with a kernel; %d calls of "
		 "library functions by name", models, ntypes, with, calls);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
