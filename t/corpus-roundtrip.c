/*
 * corpus-roundtrip: every GraphDef, MetaGraphDef and SavedModel of the
 * corpus loads; saved again with no edit, a binary file comes back byte for
 * byte and a text file comes back as text that parses to the same message.
 * The SavedModels of fuzz_generated/ are malformed on purpose and must be
 * refused with a message naming the file and the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/model.h"
#include "tap.h"

static int same_bytes(const char *a, const char *b)
{
	uint8_t *x, *y;
	size_t nx, ny;
	if (ge_file_read(a, &x, &nx, NULL))
		return 0;
	if (ge_file_read(b, &y, &ny, NULL)) {
		free(x);
		return 0;
	}
	int same = nx == ny && memcmp(x, y, nx) == 0;
	if (!same) {
		size_t i = 0;
		while (i < nx && i < ny && x[i] == y[i])
			i++;
		tap_diag("  %s: %zu bytes, saved %zu bytes, first difference "
			 "at byte %zu", a, nx, ny, i);
	}
	free(x);
	free(y);
	return same;
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (set GE_CORPUS)");
	char path[4096], tmpdir[] = "/tmp/ge-rt-XXXXXX";
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	char line[8192];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		char *cols[8] = {0};
		int k = 0;
		for (char *p = strtok(line, "\t\n"); p && k < 8;
		     p = strtok(NULL, "\t\n"))
			cols[k++] = p;
		if (k < 2 || !strcmp(cols[0], "path"))
			continue;
		const char *kind = cols[1];
		int text = strstr(kind, "-text") || (k > 2 && !strncmp(cols[2], "text", 4));
		int sm = !strncmp(kind, "SavedModel", 10);
		if (strcmp(kind, "GraphDef") && strcmp(kind, "GraphDef-text") &&
		    strcmp(kind, "MetaGraphDef") && strcmp(kind, "SavedModel") &&
		    strcmp(kind, "SavedModel-text"))
			continue;
		char in[4096], out[4096];
		snprintf(in, sizeof in, "%s/%s", corpus, cols[0]);
		if (sm) {
			char *slash = strrchr(in, '/');
			*slash = 0;
		}
		snprintf(out, sizeof out, "%s/out%d%s", tmpdir, n++,
			 text && !sm ? ".pbtxt" : "");
		ge_graph *g = NULL;
		ge_error err = {0, ""};
		int rc = ge_load(in, NULL, &g, &err);
		if (strstr(cols[0], "/fuzz_generated/")) {
			/* TensorFlow's fuzzer made these malformed: refused,
			 * with the file and the node named */
			ok(rc == GE_EFORMAT && strstr(err.msg, in) &&
				   strstr(err.msg, "node '"),
			   "%s is refused", cols[0]);
			tap_diag("  %s", rc ? err.msg : "(loaded)");
			ge_graph_free(g);
			continue;
		}
		if (rc) {
			ok(0, "%s loads", cols[0]);
			tap_diag("  %s", err.msg);
			continue;
		}
		rc = ge_save(g, out, NULL, &err);
		if (rc) {
			ok(0, "%s saves", cols[0]);
			tap_diag("  %s", err.msg);
			ge_graph_free(g);
			continue;
		}
		if (!text) {
			char a[8192], b[8192];
			if (sm) {
				snprintf(a, sizeof a, "%s/saved_model.pb", in);
				snprintf(b, sizeof b, "%s/saved_model.pb", out);
			} else {
				snprintf(a, sizeof a, "%s", in);
				snprintf(b, sizeof b, "%s", out);
			}
			ok(same_bytes(a, b), "%s: %zu ops, byte-identical",
			   cols[0], ge_graph_num_ops(g));
		} else {
			ge_graph *h = NULL;
			rc = ge_load(out, NULL, &h, &err);
			ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
			ge_format bf = ge_graph_format(g) == GE_FMT_META_TEXT
					       ? GE_FMT_META
					       : ge_graph_format(g) ==
							 GE_FMT_SAVEDMODEL_TEXT
					       ? GE_FMT_SAVEDMODEL
					       : GE_FMT_GRAPHDEF;
			if (!rc) {
				ge_serialize(g, bf, &x, NULL);
				ge_serialize(h, bf, &y, NULL);
			}
			ok(!rc && x.len == y.len && !memcmp(x.data, y.data, x.len),
			   "%s: %zu ops, text round trip gives the same message",
			   cols[0], ge_graph_num_ops(g));
			if (rc)
				tap_diag("  %s", err.msg);
			ge_buf_free(&x);
			ge_buf_free(&y);
			ge_graph_free(h);
		}
		ge_graph_free(g);
	}
	fclose(f);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}
