/*
 * shapes-corpus: shape inference against the shapes TensorFlow recorded.
 * For each corpus model whose nodes carry `_output_shapes`, the attrs are
 * read and then removed; inference must give the recorded shape for at
 * least 95% of the outputs TensorFlow recorded as fully known, and never a
 * shape that contradicts a recorded one (a different rank or a different
 * known dim).  The figure per model is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "analyses/shapes.h"
#include "tap.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

static const char *models[] = {
	"SciSharp__TensorFlow.NET/graph/InceptionV3.meta",
	"SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta",
	"SciSharp__TensorFlow.NET/graph/char_cnn_untrained.meta",
	"SciSharp__TensorFlow.NET/graph/word_cnn.meta",
	"SciSharp__TensorFlow.NET/graph/word2vec.meta",
	"SciSharp__TensorFlow.NET/graph/kmeans.meta",
	"SciSharp__TensorFlow.NET/graph/xor.meta",
	"SciSharp__TensorFlow.NET/graph/cond_test.meta",
	"dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/"
	"cifar_model/model.ckpt.meta",
	"dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/"
	"cifar_saved_model",
	"dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/"
	"mnist_conv_model",
	"dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/"
	"mnist_lr_model",
	"tensorflow__serving/tensorflow_serving/session_bundle/testdata/"
	"half_plus_two/00000123/export.meta",
};

typedef struct rec {
	int rank;
	int64_t d[GE_SHAPE_MAXRANK];
} rec;

static size_t tot_known, tot_equal;

static void check_model(const char *corpus, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(path, NULL, &g, &err) != GE_OK) {
		ok(0, "%s loads: %s", rel, err.msg);
		return;
	}
	size_t cap = ge_graph_capacity(g);
	rec **recs = calloc(cap, sizeof *recs);
	int *nrec = calloc(cap, sizeof *nrec);
	for (size_t i = 0; i < cap; i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		const Tensorflow__AttrValue *v =
			ge_op_attr(g, (ge_opid)i, "_output_shapes", NULL);
		if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
			continue;
		nrec[i] = (int)v->list->n_shape;
		recs[i] = calloc(v->list->n_shape + 1, sizeof(rec));
		for (size_t k = 0; k < v->list->n_shape; k++) {
			const Tensorflow__TensorShapeProto *s = v->list->shape[k];
			rec *r = &recs[i][k];
			if (s->unknown_rank || s->n_dim > GE_SHAPE_MAXRANK) {
				r->rank = -1;
				continue;
			}
			r->rank = (int)s->n_dim;
			for (size_t j = 0; j < s->n_dim; j++)
				r->d[j] = s->dim[j]->size < 0 ? -1 : s->dim[j]->size;
		}
		ge_op_remove_attr(g, (ge_opid)i, "_output_shapes");
	}
	ge_shape_stats st;
	ge_shapes_infer(g, &st, NULL);
	size_t known = 0, equal = 0, contra = 0;
	char first[512] = "";
	for (size_t i = 0; i < cap; i++) {
		int n = ge_op_alive(g, (ge_opid)i) ? ge_op_num_outputs(g, (ge_opid)i)
						   : 0;
		for (int k = 0; k < nrec[i] && k < n; k++) {
			rec *r = &recs[i][k];
			int64_t d[GE_SHAPE_MAXRANK];
			ge_tref t = {(ge_opid)i, k};
			int rank = ge_shapes_get(g, t, d, GE_SHAPE_MAXRANK);
			int full = r->rank >= 0;
			for (int j = 0; j < r->rank; j++)
				if (r->d[j] < 0)
					full = 0;
			int same = rank == r->rank;
			for (int j = 0; same && j < rank; j++)
				if (d[j] != r->d[j])
					same = 0;
			int bad = rank >= 0 && r->rank >= 0 && rank != r->rank;
			for (int j = 0; !bad && rank >= 0 && rank == r->rank && j < rank; j++)
				if (d[j] >= 0 && r->d[j] >= 0 && d[j] != r->d[j])
					bad = 1;
			if (full) {
				known++;
				equal += same;
				if (!same && getenv("GE_SHAPES_DEBUG")) {
					ge_buf a = GE_BUF_INIT;
					ge_shape_format(&a, rank, d);
					ge_buf_addc(&a, ' ');
					ge_shape_format(&a, r->rank, r->d);
					printf("#   miss %s:%d (%s) %s\n",
					       ge_op_name(g, (ge_opid)i), k,
					       ge_op_type(g, (ge_opid)i),
					       (char *)a.data);
					ge_buf_free(&a);
				}
			}
			if (bad && !contra++) {
				ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
				ge_shape_format(&a, r->rank, r->d);
				ge_shape_format(&b, rank, d);
				snprintf(first, sizeof first,
					 "%s:%d (%s) recorded %s inferred %s",
					 ge_op_name(g, (ge_opid)i), k,
					 ge_op_type(g, (ge_opid)i), (char *)a.data,
					 (char *)b.data);
				ge_buf_free(&a);
				ge_buf_free(&b);
			}
		}
		free(recs[i]);
	}
	tot_known += known;
	tot_equal += equal;
	printf("# %s: %zu of %zu fully known recorded shapes inferred equal "
	       "(%.1f%%), %zu contradictions\n",
	       rel, equal, known, known ? 100.0 * equal / known : 100.0, contra);
	if (st.nofn_types && *st.nofn_types)
		printf("#   no shape function: %s\n", st.nofn_types);
	ok(contra == 0, "%s: no inferred shape contradicts a recorded one%s%s",
	   rel, contra ? ": " : "", first);
	ok(known == 0 || equal * 100 >= known * 95,
	   "%s: at least 95%% of the fully known recorded shapes", rel);
	free(recs);
	free(nrec);
	ge_graph_free(g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus) {
		tap_skip_all("corpus not found (set GE_CORPUS)");
		return 0;
	}
	size_t n = sizeof models / sizeof models[0];
	tap_plan((int)(2 * n + 1));
	for (size_t i = 0; i < n; i++)
		check_model(corpus, models[i]);
	printf("# total: %zu of %zu (%.2f%%)\n", tot_equal, tot_known,
	       tot_known ? 100.0 * tot_equal / tot_known : 100.0);
	ok(tot_known > 10000 && tot_equal * 100 >= tot_known * 95,
	   "corpus total at least 95%%");
	return tap_done();
}
