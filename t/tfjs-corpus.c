/*
 * t/tfjs-corpus.c: every TensorFlow.js graph model of the corpus loads and
 * validates; those that a frozen GraphDef of large/ was converted from
 * (found by node names) match it node for node: names, op types, inputs,
 * and Const values within float tolerance once dequantized.
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "graph/graph.h"
#include "base/jsonpb.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "tap.h"
#include "tfjsutil.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define MAX_MODELS 64

static char *models[MAX_MODELS];
static size_t n_models;

static void add_model(const char *p)
{
	for (size_t i = 0; i < n_models; i++)
		if (!strcmp(models[i], p))
			return;
	if (n_models < MAX_MODELS)
		models[n_models++] = strdup(p);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Every .json under dir whose content is a tfjs model. */
static void walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(p);
		} else if (ends_with(p, ".json")) {
			uint8_t *data;
			size_t len;
			if (ge_file_read(p, &data, &len, NULL))
				continue;
			if (ge_sniff(data, len) == GE_FMT_TFJS)
				add_model(p);
			free(data);
		}
	}
	closedir(d);
}

/* Models the manifest lists elsewhere in the corpus. */
static void from_manifest(const char *corpus)
{
	char p[8192], line[4096];
	snprintf(p, sizeof p, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (!tab || strncmp(tab + 1, "tfjs-model-json\t", 16))
			continue;
		*tab = 0;
		snprintf(p, sizeof p, "%s/%s", corpus, line);
		add_model(p);
	}
	fclose(f);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "name:i", "^name" or the dangling text of input i. */
static void input_text(const ge_graph *g, ge_opid id, size_t i, char *buf,
		       size_t n)
{
	size_t nd = ge_op_num_inputs(g, id);
	const char *d = ge_op_dangling_input(g, id, i);
	if (d) {
		snprintf(buf, n, "%s%s", i >= nd ? "^" : "", d);
	} else if (i >= nd) {
		snprintf(buf, n, "^%s",
			 ge_op_name(g, ge_op_control_input(g, id, i - nd)));
	} else {
		ge_tref t = ge_op_input(g, id, i);
		if (t.index)
			snprintf(buf, n, "%s:%d", ge_op_name(g, t.op), t.index);
		else
			snprintf(buf, n, "%s", ge_op_name(g, t.op));
	}
}

/* Node-for-node comparison of a frozen graph with the model it came from. */
static void compare(const ge_graph *fz, const char *fzname, const ge_graph *js,
		    const char *jsname)
{
	size_t cap = ge_graph_capacity(fz);
	size_t missing = 0, optype = 0, inputs = 0, consts = 0, bad_vals = 0;
	size_t shown = 0, inexact = 0;
	double max_abs = 0, max_rel = 0;
	is_int((long long)ge_graph_num_ops(fz), (long long)ge_graph_num_ops(js),
	       "%s and %s: same number of ops", fzname, jsname);
	for (ge_opid id = 0; id < cap; id++) {
		if (!ge_op_alive(fz, id))
			continue;
		const char *name = ge_op_name(fz, id);
		ge_opid j = ge_graph_find(js, name);
		if (j == GE_NOOP) {
			if (shown++ < 5)
				tap_diag("  '%s' is not in %s", name, jsname);
			missing++;
			continue;
		}
		if (strcmp(ge_op_type(fz, id), ge_op_type(js, j))) {
			if (shown++ < 5)
				tap_diag("  '%s': %s in the frozen graph, %s in "
					 "the model.json", name,
					 ge_op_type(fz, id), ge_op_type(js, j));
			optype++;
		}
		size_t na = ge_op_num_inputs(fz, id) +
			    ge_op_num_control_inputs(fz, id);
		size_t nb = ge_op_num_inputs(js, j) +
			    ge_op_num_control_inputs(js, j);
		int same = na == nb &&
			   ge_op_num_inputs(fz, id) == ge_op_num_inputs(js, j);
		for (size_t k = 0; same && k < na; k++) {
			char a[1024], b[1024];
			input_text(fz, id, k, a, sizeof a);
			input_text(js, j, k, b, sizeof b);
			same = !strcmp(a, b);
		}
		if (!same) {
			if (shown++ < 5)
				tap_diag("  '%s': inputs differ", name);
			inputs++;
		}
		if (strcmp(ge_op_type(fz, id), "Const"))
			continue;
		consts++;
		const Tensorflow__TensorProto *ta = value_of(fz, id),
					      *tb = value_of(js, j);
		size_t n1 = 0, n2 = 0;
		double *va = ta ? tensor_values(ta, &n1) : NULL;
		double *vb = tb ? tensor_values(tb, &n2) : NULL;
		int good = va && vb && n1 == n2 && ta->dtype == tb->dtype;
		/* Dequantizing q * scale + min in float32 arithmetic (as the
		 * frozen graphs were made) and in double rounded once (as
		 * TensorFlow.js does, and so do we) can differ by a few ulps
		 * of the tensor's range (at most 3: scale, min, the product
		 * and the sum each round), which is all of a value near
		 * zero: the tolerance follows the largest magnitude in the
		 * tensor. */
		double range = 0;
		for (size_t k = 0; good && k < n1; k++)
			range = fmax(range, fabs(va[k]));
		for (size_t k = 0; good && k < n1; k++) {
			double d = fabs(va[k] - vb[k]);
			if (isnan(va[k]) || isnan(vb[k])) {
				good = isnan(va[k]) && isnan(vb[k]);
				continue;
			}
			if (d > 0)
				inexact++;
			if (d > max_abs)
				max_abs = d;
			if (range > 0 && d / range > max_rel)
				max_rel = d / range;
			if (d > 4 * FLT_EPSILON * range)
				good = 0;
		}
		if (!good) {
			if (shown++ < 5)
				tap_diag("  Const '%s': values differ (%zu vs %zu "
					 "elements, dtype %d vs %d)", name, n1,
					 n2, ta ? (int)ta->dtype : -1,
					 tb ? (int)tb->dtype : -1);
			bad_vals++;
		}
		free(va);
		free(vb);
	}
	is_int(0, (long long)missing, "  every frozen op is in the model.json");
	is_int(0, (long long)optype, "  same op types");
	is_int(0, (long long)inputs, "  same inputs, in order");
	is_int(0, (long long)bad_vals, "  %zu Consts: same dtype, shape and "
	       "values within 4 float32 ulps of each tensor's range", consts);
	tap_diag("  %zu values are not bit-identical: largest difference %.3g, "
		 "%.3g of its tensor's range (float32 versus double "
		 "dequantization)", inexact, max_abs, max_rel);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found");
	char p[4096];
	snprintf(p, sizeof p, "%s/tfjs", corpus);
	walk(p);
	from_manifest(corpus);
	if (!n_models)
		tap_skip_all("no TensorFlow.js model in the corpus");

	ge_graph *graphs[MAX_MODELS] = {0};
	double slowest = 0;
	const char *slowest_name = "";
	for (size_t i = 0; i < n_models; i++) {
		ge_error err = {0, ""};
		ge_graph *g = NULL;
		double t0 = now_ms();
		int rc = ge_load(models[i], NULL, &g, &err);
		double ms = now_ms() - t0;
		const char *rel = models[i] + strlen(corpus) + 1;
		if (!ok(rc == GE_OK, "%s loads: %zu ops, %.1f ms", rel,
			rc ? 0 : ge_graph_num_ops(g), ms)) {
			tap_diag("  %s", err.msg);
			continue;
		}
		if (ms > slowest) {
			slowest = ms;
			slowest_name = rel;
		}
		graphs[i] = g;
		ge_buf rep = GE_BUF_INIT;
		size_t probs = ge_graph_validate(g, &rep);
		size_t dangling = 0;
		for (const char *s = rep.data ? (char *)rep.data : ""; (s = strstr(
			     s, "names no op in the graph")); s++)
			dangling++;
		if (probs)
			tap_diag("  %zu problems:\n%s", probs, (char *)rep.data);
		ge_buf_free(&rep);
		is_int(0, (long long)dangling, "  validates: no dangling input "
		       "(%zu problems in all)", probs);

		uint8_t *data;
		size_t len;
		ge_tfjs_info info;
		ge_graph *g2 = NULL;
		if (!ge_file_read(models[i], &data, &len, NULL)) {
			if (!ge_tfjs_parse_info(data, len, models[i], &g2, &info,
						NULL))
				tap_diag("  %zu weights (%zu quantized, %zu bytes),"
					 " %zu Consts filled, %zu unused",
					 info.n_weights, info.n_quantized,
					 info.weight_bytes, info.n_consts,
					 info.n_unused);
			ge_graph_free(g2);
			free(data);
		}
	}
	tap_diag("slowest load: %s, %.1f ms", slowest_name, slowest);

	/* the frozen graphs of large/ and the models they came from */
	snprintf(p, sizeof p, "%s/large", corpus);
	DIR *d = opendir(p);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!ends_with(e->d_name, ".frozen.pb"))
			continue;
		char fp[8192];
		snprintf(fp, sizeof fp, "%s/%s", p, e->d_name);
		ge_graph *fz = NULL;
		ge_error err = {0, ""};
		if (!ok(ge_load(fp, NULL, &fz, &err) == GE_OK, "large/%s loads",
			e->d_name)) {
			tap_diag("  %s", err.msg);
			continue;
		}
		/* the model sharing the most op names, if most of them */
		size_t best = 0, best_i = 0;
		for (size_t i = 0; i < n_models; i++) {
			if (!graphs[i])
				continue;
			size_t same = 0, cap = ge_graph_capacity(fz);
			for (ge_opid id = 0; id < cap; id++)
				if (ge_op_alive(fz, id) &&
				    ge_graph_find(graphs[i],
						  ge_op_name(fz, id)) != GE_NOOP)
					same++;
			if (same > best) {
				best = same;
				best_i = i;
			}
		}
		if (best * 2 < ge_graph_num_ops(fz)) {
			tap_skip(1, "no model.json of the corpus has its op names");
			tap_diag("  large/%s: at most %zu of its %zu op names are "
				 "in one model.json; the model it was converted "
				 "from is not in the corpus", e->d_name, best,
				 ge_graph_num_ops(fz));
			ge_graph_free(fz);
			continue;
		}
		compare(fz, e->d_name, graphs[best_i], base(models[best_i]));
		ge_graph_free(fz);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < n_models; i++) {
		ge_graph_free(graphs[i]);
		free(models[i]);
	}
	return tap_done();
}
