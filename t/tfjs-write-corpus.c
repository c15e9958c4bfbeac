/*
 * t/tfjs-write-corpus.c: TensorFlow.js models written back, on the corpus.
 * Every tfjs model loads, saves with no edit and compares equal to the
 * original: topology as JSON values (member order free, 1 and 1.0 alike),
 * the other top-level members, and the weights entry by entry (manifest
 * entry and stored bytes).  An edit changes only the node edited.  uint8,
 * uint16 and float16 quantization shrink the float weights to 1/4, 1/2
 * and 1/2 of float32, and every dequantized value the reader gives back
 * is within one quantization step of the original.  The cifar frozen
 * GraphDef converted to tfjs and back has the same nodes and Const values.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h"
#include "base/jsonpb.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "tap.h"
#include "formats/tfjs.h"
#include "tfjsutil.h"

#define CIFAR "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow." \
	      "TestModels/cifar_model/frozen_model.pb"
#define BLAZEFACE "tfjs/npm__@vladmandic__human-3.3.6/models/blazeface.json"

static char tmp[] = "/tmp/ge-tfjs-write-XXXXXX";

static char *models[64];
static size_t n_models;

static void from_manifest(const char *corpus)
{
	char p[8192], line[4096];
	snprintf(p, sizeof p, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f) && n_models < 64) {
		char *tab = strchr(line, '\t');
		if (!tab || strncmp(tab + 1, "tfjs-model-json\t", 16))
			continue;
		*tab = 0;
		snprintf(p, sizeof p, "%s/%s", corpus, line);
		models[n_models++] = strdup(p);
	}
	fclose(f);
}

/* ---------------------------------------------------------------- JSON */

static json_t *read_json(const char *path)
{
	uint8_t *d;
	size_t n;
	json_t *v = NULL;
	ge_error err;
	if (ge_file_read(path, &d, &n, &err)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	if (ge_json_load((const char *)d, n, path, &v, &err))
		tap_diag("%s", err.msg);
	free(d);
	return v;
}

/* Where a and b first differ as JSON values ("" when equal), into buf. */
static int jdiff(const json_t *a, const json_t *b, char *buf, size_t n)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_number_value(a) == json_number_value(b))
			return 0;
		snprintf(buf, n, " (numbers %.17g, %.17g)",
			 json_number_value(a), json_number_value(b));
		return 1;
	}
	if (!a || !b || json_typeof(a) != json_typeof(b)) {
		snprintf(buf, n, " (types differ)");
		return 1;
	}
	if (json_is_string(a)) {
		if (json_string_length(a) == json_string_length(b) &&
		    !memcmp(json_string_value(a), json_string_value(b),
			    json_string_length(a)))
			return 0;
		snprintf(buf, n, " (\"%.40s\", \"%.40s\")", json_string_value(a),
			 json_string_value(b));
		return 1;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b)) {
			snprintf(buf, n, " (arrays of %zu, %zu)",
				 json_array_size(a), json_array_size(b));
			return 1;
		}
		for (size_t i = 0; i < json_array_size(a); i++) {
			int k = snprintf(buf, n, "[%zu]", i);
			if (jdiff(json_array_get(a, i), json_array_get(b, i),
				  buf + k, n - (size_t)k))
				return 1;
		}
		buf[0] = 0;
		return 0;
	}
	if (json_is_object(a)) {
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)b, key, v)
			if (!json_object_get(a, key)) {
				snprintf(buf, n, ".%s (only in the copy)", key);
				return 1;
			}
		json_object_foreach((json_t *)a, key, v) {
			int k = snprintf(buf, n, ".%s", key);
			if (jdiff(v, json_object_get(b, key), buf + k,
				  n - (size_t)k))
				return 1;
		}
		buf[0] = 0;
		return 0;
	}
	return 0;
}

/* ---------------------------------------------------------------- weights */

typedef struct wt {
	const json_t *spec;
	const uint8_t *data;
	size_t len;
} wt;

typedef struct weights {
	json_t *doc;
	uint8_t **files;
	size_t nfiles;
	wt *w;
	size_t n;
} weights;

static size_t stored_size(const json_t *spec, const uint8_t *p, size_t avail)
{
	const char *dt = json_string_value(json_object_get(spec, "dtype"));
	const json_t *q = json_object_get(spec, "quantization");
	const json_t *shape = json_object_get(spec, "shape");
	size_t num = 1;
	for (size_t i = 0; i < json_array_size(shape); i++)
		num *= (size_t)json_integer_value(json_array_get(shape, i));
	if (q) {
		const char *qd = json_string_value(json_object_get(q, "dtype"));
		return num * (!strcmp(qd, "uint8") ? 1 : 2);
	}
	if (!strcmp(dt, "string")) {
		size_t o = 0;
		for (size_t i = 0; i < num && o + 4 <= avail; i++)
			o += 4 + (size_t)(p[o] | p[o + 1] << 8 | p[o + 2] << 16 |
					  (uint32_t)p[o + 3] << 24);
		return o;
	}
	if (!strcmp(dt, "bool"))
		return num;
	if (!strcmp(dt, "int64") || !strcmp(dt, "complex64"))
		return num * 8;
	return num * 4;
}

/* The weights of a model.json, each with its bytes. */
static int read_weights(const char *path, weights *W)
{
	memset(W, 0, sizeof *W);
	W->doc = read_json(path);
	if (!W->doc)
		return -1;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *sl = strrchr(dir, '/');
	*(sl ? sl + 1 : dir) = 0;
	const json_t *man = json_object_get(W->doc, "weightsManifest");
	size_t total = 0;
	for (size_t g = 0; g < json_array_size(man); g++)
		total += json_array_size(json_object_get(json_array_get(man, g),
							 "weights"));
	W->w = calloc(total + 1, sizeof *W->w);
	W->files = calloc(json_array_size(man) + 1, sizeof *W->files);
	for (size_t g = 0; g < json_array_size(man); g++) {
		const json_t *grp = json_array_get(man, g);
		const json_t *ps = json_object_get(grp, "paths");
		ge_buf all = GE_BUF_INIT;
		for (size_t i = 0; i < json_array_size(ps); i++) {
			char p[8192];
			uint8_t *d;
			size_t n;
			snprintf(p, sizeof p, "%s%s", dir,
				 json_string_value(json_array_get(ps, i)));
			if (ge_file_read(p, &d, &n, NULL))
				return -1;
			ge_buf_add(&all, d, n);
			free(d);
		}
		size_t len, off = 0;
		uint8_t *data = ge_buf_steal(&all, &len);
		W->files[W->nfiles++] = data;
		const json_t *ws = json_object_get(grp, "weights");
		for (size_t k = 0; k < json_array_size(ws); k++) {
			wt *w = &W->w[W->n++];
			w->spec = json_array_get(ws, k);
			w->data = data + off;
			w->len = stored_size(w->spec, data + off, len - off);
			off += w->len;
		}
	}
	return 0;
}

static void free_weights(weights *W)
{
	for (size_t i = 0; i < W->nfiles; i++)
		free(W->files[i]);
	free(W->files);
	free(W->w);
	json_decref(W->doc);
}

static const wt *find_w(const weights *W, const char *name)
{
	for (size_t i = 0; i < W->n; i++)
		if (!strcmp(json_string_value(json_object_get(W->w[i].spec,
							      "name")), name))
			return &W->w[i];
	return NULL;
}

/* Weights equal entry by entry: same names, entries equal as values,
 * same bytes.  Returns the number that differ (diag for the first). */
static size_t weights_differ(const weights *A, const weights *B)
{
	size_t bad = 0;
	char where[512];
	if (A->n != B->n) {
		tap_diag("  %zu weights, %zu in the copy", A->n, B->n);
		bad++;
	}
	for (size_t i = 0; i < A->n; i++) {
		const char *nm = json_string_value(json_object_get(A->w[i].spec,
								   "name"));
		const wt *o = find_w(B, nm);
		where[0] = 0;
		if (!o || jdiff(A->w[i].spec, o->spec, where, sizeof where) ||
		    o->len != A->w[i].len ||
		    memcmp(o->data, A->w[i].data, o->len)) {
			if (!bad++)
				tap_diag("  weight %s differs%s", nm, where);
		}
	}
	return bad;
}

/* ---------------------------------------------------------------- tests */

static ge_graph *load(const char *path)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(path, NULL, &g, &err)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	return g;
}

static int save(ge_graph *g, const char *path, const ge_save_opts *o)
{
	ge_error err;
	ge_save_opts def = {.format = GE_FMT_AUTO};
	if (ge_save(g, path, o ? o : &def, &err)) {
		tap_diag("%s", err.msg);
		return -1;
	}
	return 0;
}

/* Loads, saves with no edit, compares. */
static void test_roundtrip(const char *model, size_t k)
{
	char out[4096], where[1024] = "";
	snprintf(out, sizeof out, "%s/rt%zu/model.json", tmp, k);
	ge_graph *g = load(model);
	if (!ok(g && !save(g, out, NULL), "%s loads and saves as tfjs",
		model)) {
		ge_graph_free(g);
		return;
	}
	ge_graph_free(g);
	weights A, B;
	if (!ok(!read_weights(model, &A) && !read_weights(out, &B),
		"  both read")) {
		return;
	}
	ok(!jdiff(json_object_get(A.doc, "modelTopology"),
		  json_object_get(B.doc, "modelTopology"), where, sizeof where),
	   "  topology equal as JSON values%s", where);
	const char *key;
	json_t *v;
	int same = 1;
	json_object_foreach(A.doc, key, v) {
		if (!strcmp(key, "modelTopology") ||
		    !strcmp(key, "weightsManifest"))
			continue;
		where[0] = 0;
		if (jdiff(v, json_object_get(B.doc, key), where, sizeof where)) {
			tap_diag("  member %s%s", key, where);
			same = 0;
		}
	}
	ok(same, "  format, generatedBy, convertedBy, signature, "
	   "userDefinedMetadata... kept");
	is_int(0, (long long)weights_differ(&A, &B),
	       "  %zu weights equal entry by entry", A.n);
	free_weights(&A);
	free_weights(&B);
}

/* An edit (one op's device) changes that node and nothing else. */
static void test_edit(const char *model)
{
	char out[4096], where[1024] = "";
	snprintf(out, sizeof out, "%s/edit/model.json", tmp);
	ge_graph *g = load(model);
	if (!g)
		return;
	ge_opid id = (ge_opid)(ge_graph_capacity(g) - 1);
	char name[512];
	snprintf(name, sizeof name, "%s", ge_op_name(g, id));
	ge_op_set_device(g, id, "/device:CPU:0");
	save(g, out, NULL);
	ge_graph_free(g);
	weights A, B;
	if (read_weights(model, &A) || read_weights(out, &B))
		return;
	const json_t *na = json_object_get(json_object_get(A.doc,
							   "modelTopology"),
					   "node");
	const json_t *nb = json_object_get(json_object_get(B.doc,
							   "modelTopology"),
					   "node");
	size_t changed = 0, at = 0;
	for (size_t i = 0; i < json_array_size(na); i++)
		if (jdiff(json_array_get(na, i), json_array_get(nb, i), where,
			  sizeof where)) {
			changed++;
			at = i;
		}
	ok(changed == 1 && !strcmp(json_string_value(json_object_get(
		   json_array_get(nb, at), "name")), name) &&
	   !strcmp(json_string_value(json_object_get(json_array_get(nb, at),
						     "device")), "/device:CPU:0"),
	   "edit: only the edited node '%s' changes (%zu changed)", name,
	   changed);
	is_int(0, (long long)weights_differ(&A, &B), "  weights unchanged");
	free_weights(&A);
	free_weights(&B);
}

/* Bytes of the weights stored for float32 values. */
static size_t float_bytes(const weights *W)
{
	size_t n = 0;
	for (size_t i = 0; i < W->n; i++)
		if (!strcmp(json_string_value(json_object_get(W->w[i].spec,
							      "dtype")),
			    "float32"))
			n += W->w[i].len;
	return n;
}

static size_t shard_bytes(const weights *W)
{
	size_t n = 0;
	for (size_t i = 0; i < W->n; i++)
		n += W->w[i].len;
	return n;
}

/* One quantization step of the stored value: scale for affine, the
 * spacing of half floats at v for float16. */
static double step_of(const json_t *q, double v)
{
	const char *d = json_string_value(json_object_get(q, "dtype"));
	if (strcmp(d, "float16") != 0)
		return json_number_value(json_object_get(q, "scale"));
	double a = fabs(v);
	if (a < ldexp(1, -14))
		return ldexp(1, -24);
	return ldexp(1, ilogb(a) - 10);
}

/* Every Const of orig against the graph loaded from the quantized model:
 * within one step; returns the number of values outside. */
static size_t check_dequantized(const ge_graph *orig, const ge_graph *q,
				const weights *W, size_t *checked,
				size_t *quantized)
{
	size_t bad = 0;
	for (size_t id = 0; id < ge_graph_capacity(orig); id++) {
		if (!ge_op_alive(orig, (ge_opid)id) ||
		    strcmp(ge_op_type(orig, (ge_opid)id), "Const") != 0)
			continue;
		const char *nm = ge_op_name(orig, (ge_opid)id);
		ge_opid qid = ge_graph_find(q, nm);
		const Tensorflow__TensorProto *ta = value_of(orig, (ge_opid)id);
		const Tensorflow__TensorProto *tb =
			qid == GE_NOOP ? NULL : value_of(q, qid);
		size_t na = 0, nb = 0;
		double *va = ta ? tensor_values(ta, &na) : NULL;
		double *vb = tb ? tensor_values(tb, &nb) : NULL;
		const wt *w = find_w(W, nm);
		const json_t *qs = w ? json_object_get(w->spec, "quantization")
				     : NULL;
		if (va && (!vb || na != nb)) {
			if (!bad++)
				tap_diag("  Const %s lost", nm);
		}
		for (size_t i = 0; va && vb && i < na && i < nb; i++) {
			double lim = qs ? step_of(qs, va[i]) : 0;
			if (!(fabs(va[i] - vb[i]) <= lim)) {
				if (!bad++)
					tap_diag("  %s[%zu]: %.9g became %.9g "
						 "(step %.3g)", nm, i, va[i],
						 vb[i], lim);
			}
			(*checked)++;
		}
		if (qs)
			(*quantized)++;
		free(va);
		free(vb);
	}
	return bad;
}

static void test_quantize(const char *model)
{
	static const struct {
		const char *name;
		int q;
		double ratio;
	} qs[] = {
		{"uint8", GE_TFJS_Q_UINT8, 0.25},
		{"uint16", GE_TFJS_Q_UINT16, 0.5},
		{"float16", GE_TFJS_Q_FLOAT16, 0.5},
	};
	char out[4096];
	ge_graph *g = load(model);
	if (!g)
		return;
	ge_save_opts o = {.format = GE_FMT_AUTO, .quantize = GE_TFJS_Q_NONE};
	snprintf(out, sizeof out, "%s/q-float32/model.json", tmp);
	weights F;
	if (save(g, out, &o) || read_weights(out, &F)) {
		ge_graph_free(g);
		return;
	}
	size_t f32 = float_bytes(&F);
	for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
		weights Q;
		o.quantize = qs[k].q;
		snprintf(out, sizeof out, "%s/q-%s/model.json", tmp,
			 qs[k].name);
		if (save(g, out, &o) || read_weights(out, &Q))
			continue;
		size_t qb = float_bytes(&Q);
		ok((double)qb == qs[k].ratio * (double)f32,
		   "%s: float weights take %zu bytes, %.2f of float32's %zu "
		   "(all shards: %zu of %zu)", qs[k].name, qb,
		   (double)qb / (double)f32, f32, shard_bytes(&Q),
		   shard_bytes(&F));
		ge_graph *h = load(out);
		size_t checked = 0, nq = 0;
		size_t bad = h ? check_dequantized(g, h, &Q, &checked, &nq) : 1;
		ok(h && !bad && nq > 0,
		   "  every Const value (%zu values, %zu weights quantized) "
		   "within one step after the reader's dequantization",
		   checked, nq);
		ge_graph_free(h);
		free_weights(&Q);
	}
	free_weights(&F);
	ge_graph_free(g);
}

/* A frozen GraphDef to tfjs and back: the same nodes, inputs and Const
 * values. */
static void test_cifar(const char *corpus)
{
	char in[4096], js[4096], back[4096];
	snprintf(in, sizeof in, "%s/%s", corpus, CIFAR);
	snprintf(js, sizeof js, "%s/cifar/model.json", tmp);
	snprintf(back, sizeof back, "%s/cifar-back.pb", tmp);
	ge_graph *a = load(in), *j = NULL, *b = NULL;
	if (!ok(a && !save(a, js, NULL) && (j = load(js)) &&
		!save(j, back, NULL) && (b = load(back)),
		"cifar frozen GraphDef to tfjs and back to a GraphDef"))
		goto out;
	weights W;
	if (!read_weights(js, &W)) {
		ok(W.n > 0, "  its %zu Consts became weights", W.n);
		free_weights(&W);
	}
	is_int((long long)ge_graph_num_ops(a), (long long)ge_graph_num_ops(b),
	       "  same number of nodes");
	size_t bad = 0, consts = 0;
	for (size_t id = 0; id < ge_graph_capacity(a); id++) {
		if (!ge_op_alive(a, (ge_opid)id))
			continue;
		const char *nm = ge_op_name(a, (ge_opid)id);
		ge_opid o = ge_graph_find(b, nm);
		if (o == GE_NOOP ||
		    strcmp(ge_op_type(a, (ge_opid)id), ge_op_type(b, o)) ||
		    ge_op_num_inputs(a, (ge_opid)id) != ge_op_num_inputs(b, o)) {
			if (!bad++)
				tap_diag("  node %s differs", nm);
			continue;
		}
		for (size_t i = 0; i < ge_op_num_inputs(b, o); i++) {
			ge_tref x = ge_op_input(a, (ge_opid)id, i);
			ge_tref y = ge_op_input(b, o, i);
			if (x.index != y.index || strcmp(ge_op_name(a, x.op),
							 ge_op_name(b, y.op)))
				bad++;
		}
		const Tensorflow__TensorProto *ta = value_of(a, (ge_opid)id);
		const Tensorflow__TensorProto *tb = value_of(b, o);
		if (!ta)
			continue;
		consts++;
		size_t na, nb;
		double *va = tensor_values(ta, &na);
		double *vb = tb ? tensor_values(tb, &nb) : NULL;
		if (!tb || ta->dtype != tb->dtype || !va || !vb || na != nb ||
		    memcmp(va, vb, na * sizeof *va)) {
			if (!bad++)
				tap_diag("  Const %s differs", nm);
		}
		free(va);
		free(vb);
	}
	is_int(0, (long long)bad, "  every node: name, op, inputs; %zu Consts "
	       "with the same dtype and values", consts);
out:
	ge_graph_free(a);
	ge_graph_free(j);
	ge_graph_free(b);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus) {
		printf("1..0 # SKIP corpus not found\n");
		return 0;
	}
	from_manifest(corpus);
	if (!n_models || !mkdtemp(tmp)) {
		printf("1..0 # SKIP no tfjs models in the corpus manifest\n");
		return 0;
	}
	for (size_t i = 0; i < n_models; i++)
		test_roundtrip(models[i], i);
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", corpus, BLAZEFACE);
	test_edit(p);
	test_quantize(p);
	test_cifar(corpus);
	for (size_t i = 0; i < n_models; i++)
		free(models[i]);
	ge_remove_tree(tmp);
	return tap_done();
}
