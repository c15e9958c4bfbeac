/*
 * bench_io: times ge_load + ge_save of a model and reports peak memory.
 *
 *   bench_io MODEL OUT [REPEAT]
 *
 * Prints one line per run: load seconds, save seconds, total (each with
 * the CPU seconds it took), and the process's peak resident set
 * (ru_maxrss) against the input's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "formats/model.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the process, user + system: on a shared machine the
 * wall time also holds the waits for a core */
static double cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_io MODEL OUT [REPEAT]\n");
		return 2;
	}
	int repeat = argc > 3 ? atoi(argv[3]) : 1;
	struct stat st;
	if (stat(argv[1], &st)) {
		perror(argv[1]);
		return 2;
	}
	for (int r = 0; r < repeat; r++) {
		ge_error err;
		ge_graph *g;
		double c0 = cpu();
		double t0 = now();
		if (ge_load(argv[1], NULL, &g, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t1 = now(), c1 = cpu();
		ge_save_opts so = {.format = GE_FMT_AUTO, .overwrite = 1};
		if (ge_save(g, argv[2], &so, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t2 = now(), c2 = cpu();
		size_t n = ge_graph_num_ops(g);
		ge_graph_free(g);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("%zu ops, %.1f MB: load %.3f s (cpu %.3f), save %.3f s "
		       "(cpu %.3f), total %.3f s, peak RSS %.1f MB (%.2fx file)\n",
		       n, (double)st.st_size / 1e6, t1 - t0, c1 - c0, t2 - t1,
		       c2 - c1, t2 - t0,
		       (double)ru.ru_maxrss / 1024.0,
		       (double)ru.ru_maxrss * 1024.0 / (double)st.st_size);
	}
	return 0;
}
