/*
 * bench_func: what the function library model costs on a TF2 SavedModel.
 *
 *   bench_func [SAVEDMODEL] [REPEAT]
 *
 * Default model: bert1 of the corpus ($GE_CORPUS, else ../shared/corpus
 * from the current directory, as `make bench` runs).  Times, best of
 * REPEAT (default 5), in one run:
 *   - a plain load;
 *   - load + save (nothing parsed: the library is copied as read);
 *   - a load that parses every function body;
 *   - load, parse every body, save (bodies unedited: byte for byte);
 *   - load, rename one op in every body, save (every function re-encoded);
 *   - ge_flib_validate over every body and call.
 * A path that is not a directory (run.sh passes its GraphDef to every
 * bench) means the default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "functions/func.h"
#include "formats/model.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ge_graph *load(const char *path)
{
	ge_graph *g;
	ge_error err;
	if (ge_load(path, NULL, &g, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	return g;
}

static size_t touch_all(ge_graph *g)
{
	size_t n = 0;
	for (size_t f = 0; f < ge_func_capacity(g); f++) {
		ge_graph *b = ge_func_body(g, (ge_funcid)f, NULL);
		if (b)
			n += ge_graph_num_ops(b);
	}
	return n;
}

static void save(ge_graph *g, const char *out)
{
	ge_error err;
	ge_save_opts so = {.format = GE_FMT_AUTO, .overwrite = 1};
	if (ge_save(g, out, &so, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
}

/* Renames the first non-arg op of every body. */
static void edit_all(ge_graph *g)
{
	for (size_t f = 0; f < ge_func_capacity(g); f++) {
		ge_graph *b = ge_func_body(g, (ge_funcid)f, NULL);
		for (size_t i = 0; b && i < ge_graph_capacity(b); i++) {
			const char *t = ge_op_type(b, (ge_opid)i);
			if (strcmp(t, "_Arg") && strcmp(t, "_Retval")) {
				char nm[600];
				snprintf(nm, sizeof nm, "%s_x",
					 ge_op_name(b, (ge_opid)i));
				ge_op_set_name(b, (ge_opid)i, nm, NULL);
				break;
			}
		}
	}
}

enum { PLAIN, LOAD_SAVE, TOUCH, TOUCH_SAVE, EDIT_SAVE, VALIDATE, N_KIND };

int main(int argc, char **argv)
{
	char def[4096], out[4200];
	const char *path = argc > 1 ? argv[1] : NULL;
	int repeat = argc > 2 ? atoi(argv[2]) : 5;
	struct stat st;
	if (!path || stat(path, &st) || !S_ISDIR(st.st_mode)) {
		const char *c = getenv("GE_CORPUS");
		snprintf(def, sizeof def,
			 "%s/tensorflow__tensorflow/tensorflow/cc/saved_model/"
			 "testdata/bert1",
			 c && *c ? c : "../shared/corpus");
		path = def;
	}
	char tmp[] = "/tmp/ge-bench-func-XXXXXX";
	if (!mkdtemp(tmp))
		return 2;
	snprintf(out, sizeof out, "%s/out", tmp);
	double best[N_KIND];
	for (int k = 0; k < N_KIND; k++)
		best[k] = 1e9;
	size_t nops = 0, nfunc = 0, body_ops = 0;
	for (int r = 0; r < (repeat > 0 ? repeat : 1); r++) {
		for (int k = 0; k < N_KIND; k++) {
			double t0 = now();
			ge_graph *g = load(path);
			switch (k) {
			case LOAD_SAVE:
				save(g, out);
				break;
			case TOUCH:
				body_ops = touch_all(g);
				break;
			case TOUCH_SAVE:
				touch_all(g);
				save(g, out);
				break;
			case EDIT_SAVE:
				edit_all(g);
				save(g, out);
				break;
			case VALIDATE:
				if (ge_flib_validate(g, 1, NULL))
					fprintf(stderr, "%s: library does not "
						"validate\n", path);
				break;
			}
			double t = now() - t0;
			if (t < best[k])
				best[k] = t;
			nops = ge_graph_num_ops(g);
			nfunc = ge_func_count(g);
			ge_graph_free(g);
		}
	}
	static const char *const what[N_KIND] = {
		"plain load",
		"load + save (library copied as read)",
		"load + parse every body",
		"load + parse every body + save (unedited)",
		"load + rename an op in every body + save",
		"load + validate every body and call",
	};
	printf("%s: %zu ops, %zu functions, %zu ops in bodies (with _Arg/_Retval); "
	       "best of %d\n", path, nops, nfunc, body_ops, repeat);
	for (int k = 0; k < N_KIND; k++)
		printf("  %-44s %8.2f ms  (%.2fx plain load)\n", what[k],
		       best[k] * 1e3, best[k] / best[PLAIN]);
	snprintf(def, sizeof def, "rm -rf %s", tmp);
	if (system(def)) {
	}
	return 0;
}
