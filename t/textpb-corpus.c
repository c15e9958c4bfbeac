/*
 * t/textpb-corpus.c: every text-format GraphDef, MetaGraphDef, SavedModel
 * and OpList of the corpus (MANIFEST.tsv) parses, and printing it then
 * parsing the print gives the same binary encoding.
 */
#include <string.h>
#include <time.h>

#include "tap.h"
#include "base/textpb.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The message type of a manifest row, or NULL for rows not in text. */
static const ProtobufCMessageDescriptor *text_type(const char *kind,
						   const char *encoding)
{
	static const struct {
		const char *kind;
		const ProtobufCMessageDescriptor *d;
	} types[] = {
		{"GraphDef", &tensorflow__graph_def__descriptor},
		{"MetaGraphDef", &tensorflow__meta_graph_def__descriptor},
		{"SavedModel", &tensorflow__saved_model__descriptor},
		{"OpList", &tensorflow__op_list__descriptor},
	};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		size_t n = strlen(types[i].kind);
		if (strncmp(kind, types[i].kind, n) != 0)
			continue;
		if (strcmp(kind + n, "-text") == 0 ||
		    (kind[n] == 0 && strncmp(encoding, "text", 4) == 0))
			return types[i].d;
	}
	return NULL;
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *p = ge_xmalloc(*n + 1);
	protobuf_c_message_pack(m, p);
	return p;
}

/* Parses, prints, parses the print and compares the encodings; 0 or -1
 * with why in err. */
static int check(const char *path, const ProtobufCMessageDescriptor *d,
		 size_t *n_ops, double *ms, ge_error *err)
{
	uint8_t *text;
	size_t len;
	ProtobufCMessage *m = NULL, *m2 = NULL;
	ge_buf out = GE_BUF_INIT;
	int rc = -1;
	if (ge_file_read(path, &text, &len, err))
		return -1;
	double t0 = now_ms();
	if (ge_textpb_parse((char *)text, len, d, path, &m, err))
		goto done;
	*ms = now_ms() - t0;
	if (d == &tensorflow__op_list__descriptor)
		*n_ops = ((Tensorflow__OpList *)m)->n_op;
	ge_textpb_print(m, &out);
	if (ge_textpb_parse((char *)out.data, out.len, d, "(printed)", &m2, err))
		goto done;
	size_t n1, n2;
	uint8_t *a = pack(m, &n1), *b = pack(m2, &n2);
	if (n1 == n2 && memcmp(a, b, n1) == 0)
		rc = 0;
	else
		ge_err(err, GE_EFORMAT, "%s: %zu bytes, %zu after print and "
		       "parse", path, n1, n2);
	free(a);
	free(b);
done:
	free(text);
	ge_buf_free(&out);
	protobuf_c_message_free_unpacked(m, NULL);
	protobuf_c_message_free_unpacked(m2, NULL);
	return rc;
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found");
	ge_textpb_register(&tensorflow__asset_file_def__descriptor);

	char path[4096];
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	uint8_t *man;
	size_t man_len;
	ge_error err;
	if (ge_file_read(path, &man, &man_len, &err)) {
		ok(0, "read %s", path);
		tap_diag("%s", err.msg);
		return tap_done();
	}
	int files = 0, opslists = 0;
	char *save = NULL;
	for (char *line = strtok_r((char *)man, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *col[3] = {line, NULL, NULL};
		for (int i = 1; i < 3 && col[i - 1]; i++) {
			char *tab = strchr(col[i - 1], '\t');
			if (tab) {
				*tab = 0;
				col[i] = tab + 1;
			}
		}
		if (!col[2])
			continue;
		char *tab = strchr(col[2], '\t');
		if (tab)
			*tab = 0;
		const ProtobufCMessageDescriptor *d = text_type(col[1], col[2]);
		if (!d)
			continue;
		snprintf(path, sizeof path, "%s/%s", corpus, col[0]);
		size_t n_ops = 0;
		double ms = 0;
		int rc = check(path, d, &n_ops, &ms, &err);
		if (!ok(rc == 0, "%s (%s): parses, print->parse keeps the bytes",
			col[0], d->short_name))
			tap_diag("  %s", err.msg);
		files++;
		if (d == &tensorflow__op_list__descriptor && rc == 0) {
			is_int(1563, (long long)n_ops, "%s holds 1563 ops", col[0]);
			tap_diag("parsing %s took %.1f ms", col[0], ms);
			opslists++;
		}
	}
	free(man);
	ok(files >= 30, "%d text files in the manifest (at least 30)", files);
	ok(opslists == 1, "the op registry was among them");
	return tap_done();
}
