/*
 * bench_pbc: the naive design, for comparison with bench_io.
 *
 *   bench_pbc GRAPH.pb OUT.pb [REPEAT]
 *
 * Reads the file, unpacks the whole GraphDef with protobuf-c (every node,
 * every AttrValue, every TensorProto decoded into C structs), packs it
 * again and writes it.  This is what a tool built directly on the
 * generated code does; gerewrite keeps attrs as raw bytes instead.  Prints
 * read, unpack, pack and write seconds, the total and the peak RSS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "tensorflow/core/framework/graph.pb-c.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st)) {
		perror(path);
		exit(2);
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		perror(path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_pbc GRAPH.pb OUT.pb [REPEAT]\n");
		return 2;
	}
	int repeat = argc > 3 ? atoi(argv[3]) : 1;
	for (int r = 0; r < repeat; r++) {
		double t0 = now();
		size_t len;
		uint8_t *in = slurp(argv[1], &len);
		double t1 = now();
		Tensorflow__GraphDef *g =
			tensorflow__graph_def__unpack(NULL, len, in);
		if (!g) {
			fprintf(stderr, "%s: does not unpack as a GraphDef\n",
				argv[1]);
			return 2;
		}
		double t2 = now();
		size_t n = tensorflow__graph_def__get_packed_size(g);
		uint8_t *out = malloc(n ? n : 1);
		if (!out)
			return 2;
		tensorflow__graph_def__pack(g, out);
		double t3 = now();
		FILE *f = fopen(argv[2], "wb");
		if (!f || fwrite(out, 1, n, f) != n || fflush(f) ||
		    fsync(fileno(f)) || fclose(f)) {
			perror(argv[2]);
			return 2;
		}
		double t4 = now();
		size_t nodes = g->n_node;
		tensorflow__graph_def__free_unpacked(g, NULL);
		free(in);
		free(out);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("%zu nodes: read %.3f s, unpack %.3f s, pack %.3f s, "
		       "write %.3f s, total %.3f s, peak RSS %.1f MB\n",
		       nodes, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0,
		       (double)ru.ru_maxrss / 1024.0);
	}
	return 0;
}
