/*
 * tfjs_write.c: a graph written as a TensorFlow.js graph model.
 *
 * The graph is encoded as a GraphDef and decoded again as a message; every
 * Const whose value TensorFlow.js can hold gives its value to a weight and
 * keeps only dtype and shape in the topology, as the converter does.  The
 * weights are laid end to end in one group, cut into shards of shard_size
 * bytes, and listed in weightsManifest in the same order.
 *
 * Quantization follows the converter: uint8 and uint16 are affine, over the
 * weight's range widened to hold 0 and nudged so 0 is exact (value =
 * q * scale + min); float16 is IEEE half, rounded to nearest even.  Saving
 * a loaded model with no quantize option keeps each weight as it was
 * stored: its old min and scale are reused while they reproduce the values
 * exactly, so an unedited weight comes back byte for byte.
 */
#include "config.h"
#include "base/bounds.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "base/tensor.h"
#include "base/fsutil.h"
#include "formats/tfjs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5,
	DT_INT8 = 6, DT_STRING = 7, DT_COMPLEX64 = 8, DT_INT64 = 9,
	DT_BOOL = 10, DT_BFLOAT16 = 14, DT_UINT16 = 17, DT_HALF = 19,
	DT_UINT32 = 22,
};

typedef struct writer {
	const char *path;          /* the model.json, for messages */
	ge_error *err;
	const ge_save_opts *o;
	ge_tfjs_meta *meta;        /* of the graph, or NULL */
	ge_buf data;               /* all weights, end to end */
	json_t *specs;             /* their manifest entries */
	json_t *names;             /* the weight names taken (a set) */
	ge_tfjs_save_info info;
} writer;

/* ---------------------------------------------------------------- numbers */

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t bits_of_f32(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

/* ---------------------------------------------------------------- values */

/* Element k of t (tensor.h reads every encoding), or -1. */
static int elem(const Tensorflow__TensorProto *t, size_t k, ge_elem *e)
{
	return ge_tensor_elem(t, (int64_t)k, e) ? -1 : 0;
}

/* Number of elements, or -1 for an unknown or negative shape. */
static int64_t numel_of(const Tensorflow__TensorProto *t)
{
	const Tensorflow__TensorShapeProto *s = t->tensor_shape;
	int64_t n = 1;
	if (!s)
		return 1;
	if (s->unknown_rank)
		return -1;
	for (size_t i = 0; i < s->n_dim; i++) {
		int64_t d = s->dim[i]->size;
		if (d < 0 || (d > 0 && n > INT64_MAX / d))
			return -1;
		n *= d;
	}
	return n;
}

/* ---------------------------------------------------------------- quantize */

int ge_tfjs_quant_from_name(const char *name, ge_tfjs_quant *out)
{
	static const struct {
		const char *n;
		ge_tfjs_quant q;
	} qs[] = {
		{"keep", GE_TFJS_Q_KEEP}, {"none", GE_TFJS_Q_NONE},
		{"uint8", GE_TFJS_Q_UINT8}, {"uint16", GE_TFJS_Q_UINT16},
		{"float16", GE_TFJS_Q_FLOAT16},
	};
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
		if (!strcmp(name, qs[i].n)) {
			*out = qs[i].q;
			return GE_OK;
		}
	return GE_EINVAL;
}

/* The converter's range: widened to hold 0, then nudged so 0 is one of
 * the levels. */
static void affine_range(double lo, double hi, double qmax, double *scale,
			 double *min)
{
	if (lo > 0)
		lo = 0;
	if (hi < 0)
		hi = 0;
	*scale = (hi - lo) / qmax;
	double zero = nearbyint(-lo / *scale);
	*min = -zero * *scale;
}

/* Quantizes v[0..n) to levels of qmax + 1 with the given scale and min
 * into out (1 or 2 bytes each); returns whether every value dequantizes
 * back to itself exactly. */
static int affine_put(const float *v, size_t n, double qmax, double scale,
		      double min, uint8_t *out)
{
	int exact = 1;
	for (size_t i = 0; i < n; i++) {
		double q = nearbyint(((double)v[i] - min) / scale);
		if (!(q >= 0))
			q = 0;
		if (q > qmax)
			q = qmax;
		if ((float)(q * scale + min) != v[i] || isnan(v[i]))
			exact = 0;
		if (qmax == 255)
			out[i] = (uint8_t)q;
		else {
			out[2 * i] = (uint8_t)((unsigned)q & 0xff);
			out[2 * i + 1] = (uint8_t)((unsigned)q >> 8);
		}
	}
	return exact;
}

/* How weight name was stored when loaded: GE_TFJS_Q_NONE, or its
 * quantization, with an affine one's min and scale (*have set). */
static ge_tfjs_quant loaded_quant(const writer *W, const char *name,
				  double *min, double *scale, int *have)
{
	const json_t *qj = W->meta ? json_object_get(W->meta->quant, name)
				   : NULL;
	const char *d = json_string_value(json_object_get(qj, "dtype"));
	*have = 0;
	if (!d)
		return GE_TFJS_Q_NONE;
	if (!strcmp(d, "float16"))
		return GE_TFJS_Q_FLOAT16;
	*min = json_number_value(json_object_get(qj, "min"));
	*scale = json_number_value(json_object_get(qj, "scale"));
	*have = *scale > 0 && isfinite(*scale) && isfinite(*min);
	return !strcmp(d, "uint16") ? GE_TFJS_Q_UINT16 : GE_TFJS_Q_UINT8;
}

/* How weight name is stored: a ge_tfjs_quant other than KEEP, and for an
 * affine quantization the min and scale it was loaded with (*have set)
 * when it was loaded quantized so: put_floats then keeps its bytes
 * where its values still lie on that grid. */
static ge_tfjs_quant choose(const writer *W, const char *name, double *min,
			    double *scale, int *have)
{
	ge_tfjs_quant q = W->o ? (ge_tfjs_quant)W->o->quantize : GE_TFJS_Q_KEEP;
	*have = 0;
	if (q == GE_TFJS_Q_NONE)
		return q;
	if (q == GE_TFJS_Q_KEEP)
		return loaded_quant(W, name, min, scale, have);
	int named = !W->o->n_quantize_names;
	for (size_t i = 0; !named && i < W->o->n_quantize_names; i++)
		named = !fnmatch(W->o->quantize_names[i], name, 0);
	if (!named)
		return GE_TFJS_Q_NONE;
	/* already quantized with the requested scheme: not again */
	if (loaded_quant(W, name, min, scale, have) != q)
		*have = 0;
	return q;
}

/* A float weight's bytes, quantized as choose() says; its "quantization"
 * member goes into spec. */
static void put_floats(writer *W, const char *name, const float *v, size_t n,
		       json_t *spec)
{
	double min = 0, scale = 1;
	int have;
	ge_tfjs_quant q = choose(W, name, &min, &scale, &have);
	if (q == GE_TFJS_Q_NONE || q == GE_TFJS_Q_KEEP) {
		uint8_t *o = ge_xmalloc(4 * n + 1);
		for (size_t i = 0; i < n; i++)
			wr32(o + 4 * i, bits_of_f32(v[i]));
		ge_buf_add(&W->data, o, 4 * n);
		free(o);
		return;
	}
	json_t *qj = json_object();
	if (q == GE_TFJS_Q_FLOAT16) {
		uint8_t *o = ge_xmalloc(2 * n + 1);
		for (size_t i = 0; i < n; i++) {
			uint16_t h = ge_half_from_double(v[i]);
			o[2 * i] = (uint8_t)h;
			o[2 * i + 1] = (uint8_t)(h >> 8);
		}
		ge_buf_add(&W->data, o, 2 * n);
		free(o);
		json_object_set_new(qj, "dtype", json_string("float16"));
	} else {
		double qmax = q == GE_TFJS_Q_UINT8 ? 255 : 65535;
		size_t es = q == GE_TFJS_Q_UINT8 ? 1 : 2;
		uint8_t *o = ge_xmalloc(es * n + 1);
		if (!have || !affine_put(v, n, qmax, scale, min, o)) {
			/* the range of the finite values: NaN and infinities
			 * end up clipped */
			float lo = INFINITY, hi = -INFINITY;
			for (size_t i = 0; i < n; i++) {
				if (!isfinite(v[i]))
					continue;
				if (v[i] < lo)
					lo = v[i];
				if (v[i] > hi)
					hi = v[i];
			}
			if (lo > hi)
				lo = hi = 0;
			if (lo == hi) {
				/* one value: every level 0, min the value */
				scale = 1;
				min = lo;
			} else {
				affine_range(lo, hi, qmax, &scale, &min);
			}
			affine_put(v, n, qmax, scale, min, o);
		}
		ge_buf_add(&W->data, o, es * n);
		free(o);
		json_object_set_new(qj, "dtype", json_string(es == 1 ? "uint8"
								     : "uint16"));
		json_object_set_new(qj, "min", json_real(min));
		json_object_set_new(qj, "scale", json_real(scale));
	}
	json_object_set_new(qj, "original_dtype", json_string("float32"));
	json_object_set_new(spec, "quantization", qj);
	W->info.n_quantized++;
}

/* ---------------------------------------------------------------- weights */

/* The weight's dtype name for a Const of dtype dt, or NULL when its value
 * stays in the topology. */
static const char *weight_dtype(const Tensorflow__TensorProto *t, size_t n)
{
	switch ((int)t->dtype) {
	case DT_FLOAT: case DT_DOUBLE: case DT_HALF: case DT_BFLOAT16:
		return "float32";
	case DT_INT32: case DT_INT16: case DT_INT8: case DT_UINT8:
	case DT_UINT16:
		return "int32";
	case DT_INT64: case DT_UINT32:
		for (size_t i = 0; i < n; i++) {
			ge_elem e;
			if (!elem(t, i, &e) && (e.i < INT32_MIN || e.i > INT32_MAX))
				return "int64";
		}
		return "int32";
	case DT_BOOL:
		return "bool";
	case DT_STRING:
		return "string";
	case DT_COMPLEX64:
		return "complex64";
	default:
		return NULL;
	}
}

/* Whether every element can be read. */
static int readable(const Tensorflow__TensorProto *t, size_t n)
{
	ge_elem e;
	return !n || (!elem(t, 0, &e) && !elem(t, n - 1, &e));
}

/* The bytes of a weight that is not float32, as TensorFlow.js lays them
 * out: strings each after its 32-bit length, complex64 as float pairs,
 * integers and bools little-endian. */
static void put_elems(writer *W, const Tensorflow__TensorProto *t, size_t n,
		      const char *dn)
{
	size_t es = !strcmp(dn, "bool") ? 1 : !strcmp(dn, "int32") ? 4 : 8;
	uint8_t b[8];
	for (size_t i = 0; i < n; i++) {
		ge_elem e;
		elem(t, i, &e);
		if (!strcmp(dn, "string")) {
			wr32(b, (uint32_t)e.len);
			ge_buf_add(&W->data, b, 4);
			ge_buf_add(&W->data, e.s, e.len);
		} else if (!strcmp(dn, "complex64")) {
			wr32(b, bits_of_f32((float)e.d));
			wr32(b + 4, bits_of_f32((float)e.im));
			ge_buf_add(&W->data, b, 8);
		} else {
			for (size_t k = 0; k < es; k++)
				b[k] = (uint8_t)((uint64_t)e.i >> (8 * k));
			ge_buf_add(&W->data, b, es);
		}
	}
}

/* Takes the value of one Const into the weights; returns 1 when it did. */
static int take_value(writer *W, const char *name,
		      Tensorflow__TensorProto *t)
{
	int64_t ne = numel_of(t);
	if (ne < 0 || (uint64_t)ne > SIZE_MAX / 16)
		return 0;
	size_t n = (size_t)ne;
	const char *dn = weight_dtype(t, n);
	if (!dn || !readable(t, n))
		return 0;
	json_t *spec = json_object();
	json_t *shape = json_array();
	for (size_t i = 0; t->tensor_shape && i < t->tensor_shape->n_dim; i++)
		json_array_append_new(shape,
				      json_integer(t->tensor_shape->dim[i]->size));
	json_object_set_new(spec, "name", json_string(name));
	json_object_set_new(spec, "shape", shape);
	json_object_set_new(spec, "dtype", json_string(dn));
	if (!strcmp(dn, "float32")) {
		float *v = ge_xmalloc((n ? n : 1) * sizeof *v);
		for (size_t i = 0; i < n; i++) {
			ge_elem e;
			elem(t, i, &e);
			v[i] = (float)e.d;
		}
		put_floats(W, name, v, n, spec);
		free(v);
	} else {
		put_elems(W, t, n, dn);
	}
	json_array_append_new(W->specs, spec);
	W->info.n_weights++;
	return 1;
}

/* The value of a Const whose value became a weight: dtype and shape only,
 * as the converter leaves it. */
static void strip_value(Tensorflow__TensorProto **slot)
{
	Tensorflow__TensorProto *old = *slot, *t = ge_xmalloc(sizeof *t);
	tensorflow__tensor_proto__init(t);
	t->dtype = old->dtype;
	t->tensor_shape = old->tensor_shape;
	old->tensor_shape = NULL;
	protobuf_c_message_free_unpacked(&old->base, NULL);
	*slot = t;
}

static void take_nodes(writer *W, Tensorflow__NodeDef **nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Tensorflow__NodeDef *nd = nodes[i];
		/* TensorFlow.js's NodeDef has no experimental_debug_info:
		 * provenance stays out of model.json (doc/provenance.md) */
		if (nd->experimental_debug_info) {
			protobuf_c_message_free_unpacked(
				&nd->experimental_debug_info->base, NULL);
			nd->experimental_debug_info = NULL;
		}
		if (!nd->op || strcmp(nd->op, "Const") != 0 || !nd->name)
			continue;
		for (size_t k = 0; k < nd->n_attr; k++) {
			Tensorflow__AttrValue *v = nd->attr[k]->value;
			if (strcmp(nd->attr[k]->key, "value") != 0 || !v ||
			    v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
			    !v->tensor)
				continue;
			/* a name already given (a function's Const named as
			 * one of the graph): its value stays inline, since a
			 * manifest lists each name once */
			if (json_object_get(W->names, nd->name))
				continue;
			if (take_value(W, nd->name, v->tensor)) {
				strip_value(&v->tensor);
				json_object_set_new(W->names, nd->name,
						    json_true());
			}
		}
	}
}

static int holds_variables(const Tensorflow__GraphDef *gd, const char **node,
			   const char **op)
{
	static const char *const vars[] = {
		"Variable", "VariableV2", "VarHandleOp", "TemporaryVariable",
		"AutoReloadVariable", "ReadVariableOp",
	};
	for (size_t i = 0; i < gd->n_node; i++)
		for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
			if (gd->node[i]->op && !strcmp(gd->node[i]->op, vars[k])) {
				*node = gd->node[i]->name;
				*op = vars[k];
				return 1;
			}
	return 0;
}

/* ---------------------------------------------------------------- output */

/* The tfjs "signature" of a graph that has SignatureDefs (loaded from a
 * SavedModel or MetaGraphDef, or set with ge_signature_set): its
 * serving_default SignatureDef (or its only one). */
static json_t *signature_json(ge_graph *g)
{
	size_t n = ge_signature_count(g), pick = n;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ge_signature_name(g, i), "serving_default"))
			pick = i;
	if (pick == n && n == 1)
		pick = 0;
	if (pick == n)
		return NULL;
	const Tensorflow__SignatureDef *sd =
		ge_signature_get(g, ge_signature_name(g, pick));
	return sd ? ge_jsonpb_to_json(&sd->base) : NULL;
}

static json_t *model_json(writer *W, ge_graph *g, json_t *topo,
			  size_t nshards)
{
	json_t *root = json_object();
	json_t *top = W->meta ? W->meta->top : NULL;
	char ver[64];
	snprintf(ver, sizeof ver, "gerewrite %s", PACKAGE_VERSION);
	json_object_set_new(root, "format", json_string("graph-model"));
	json_object_set_new(root, "generatedBy", json_string(ver));
	json_object_set_new(root, "convertedBy", json_string(ver));
	if (top)
		json_object_update(root, top);
	/* a SignatureDef (set on the graph, or carried from a SavedModel)
	 * is the signature the model says it has */
	json_t *sig = signature_json(g);
	if (sig)
		json_object_set_new(root, "signature", sig);
	json_object_set_new(root, "modelTopology", topo);
	json_t *group = json_object(), *paths = json_array();
	for (size_t k = 0; k < nshards; k++) {
		char nm[64];
		snprintf(nm, sizeof nm, "group1-shard%zuof%zu.bin", k + 1,
			 nshards);
		json_array_append_new(paths, json_string(nm));
	}
	json_object_set_new(group, "paths", paths);
	json_object_set(group, "weights", W->specs);
	json_t *man = json_array();
	json_array_append_new(man, group);
	json_object_set_new(root, "weightsManifest", man);
	return root;
}

/* The GraphDef of g, its Consts' values moved into W. */
static int topology(writer *W, ge_graph *g, json_t **out)
{
	ge_buf b = GE_BUF_INIT;
	int rc = ge_serialize(g, GE_FMT_GRAPHDEF, &b, W->err);
	if (rc)
		return rc;
	Tensorflow__GraphDef *gd = (Tensorflow__GraphDef *)ge_pb_unpack(
		&tensorflow__graph_def__descriptor, b.len,
								 b.data);
	ge_buf_free(&b);
	if (!gd)
		return ge_err(W->err, GE_EFORMAT, "%s: the graph does not encode "
			      "as a valid GraphDef (a raw attr may be corrupt)",
			      ge_graph_name(g));
	const char *node, *op;
	if (holds_variables(gd, &node, &op)) {
		rc = ge_err(W->err, GE_EINVAL, "%s: node '%s' is a %s: a "
			    "TensorFlow.js model holds constants only; freeze "
			    "first", W->path, node, op);
		protobuf_c_message_free_unpacked(&gd->base, NULL);
		return rc;
	}
	for (size_t i = 0; W->meta && i < json_array_size(W->meta->extra_specs);
	     i++)
		json_object_set_new(W->names, json_string_value(json_object_get(
			json_array_get(W->meta->extra_specs, i), "name")),
				    json_true());
	take_nodes(W, gd->node, gd->n_node);
	if (gd->library)
		for (size_t i = 0; i < gd->library->n_function; i++)
			take_nodes(W, gd->library->function[i]->node_def,
				   gd->library->function[i]->n_node_def);
	if (W->meta) {
		/* modelInitializer's weights, as they were */
		for (size_t i = 0; i < json_array_size(W->meta->extra_specs); i++)
			json_array_append(W->specs, json_array_get(
						  W->meta->extra_specs, i));
		ge_buf_add(&W->data, W->meta->extra_data.data,
			   W->meta->extra_data.len);
	}
	*out = ge_jsonpb_to_json(&gd->base);
	protobuf_c_message_free_unpacked(&gd->base, NULL);
	return GE_OK;
}

/* ---------------------------------------------------------------- directory */

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return ge_xstrdup(".");
	if (slash == path)
		return ge_xstrdup("/");
	return ge_xstrndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int is_shard_name(const char *n)
{
	unsigned a, b, c;
	int end = 0;
	return sscanf(n, "group%u-shard%uof%u.bin%n", &a, &b, &c, &end) == 3 &&
	       n[end] == 0;
}

static int listed(const char *name, const json_t *paths)
{
	for (size_t i = 0; i < json_array_size(paths); i++)
		if (json_is_string(json_array_get(paths, i)) &&
		    !strcmp(name, json_string_value(json_array_get(paths, i))))
			return 1;
	return 0;
}

/* The weight files the model.json at path lists, as one array. */
static json_t *old_weight_paths(const char *path)
{
	json_t *all = json_array(), *root = NULL;
	uint8_t *d;
	size_t n;
	if (ge_file_read(path, &d, &n, NULL))
		return all;
	ge_json_load((const char *)d, n, path, &root, NULL);
	free(d);
	const json_t *man = json_object_get(root, "weightsManifest");
	for (size_t i = 0; i < json_array_size(man); i++)
		json_array_extend(all, json_object_get(json_array_get(man, i),
						       "paths"));
	json_decref(root);
	return all;
}

/* Links (or copies) into tmp the files of dir that stay: all but the
 * model.json being replaced and the weight files it lists. */
static int carry_over(const char *dir, const char *tmp, const char *path,
		      ge_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return GE_OK;
	json_t *old = old_weight_paths(path);
	struct dirent *e;
	int rc = GE_OK;
	while (!rc && (e = readdir(d))) {
		char a[2 * PATH_MAX], b[2 * PATH_MAX];
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, base_of(path)) || listed(e->d_name, old))
			continue;
		if (is_shard_name(e->d_name)) {
			/* another model's shard: ours would replace it */
			rc = ge_err(err, GE_EIO, "%s: %s/%s belongs to another "
				    "model: save into a directory of its own",
				    path, dir, e->d_name);
			break;
		}
		snprintf(a, sizeof a, "%s/%s", dir, e->d_name);
		snprintf(b, sizeof b, "%s/%s", tmp, e->d_name);
		if (lstat(a, &st) < 0)
			continue;
		if (!S_ISREG(st.st_mode)) {
			rc = ge_err(err, GE_EIO, "%s: %s is not a regular file: "
				    "save the model into a directory of its own",
				    path, a);
			break;
		}
		if (link(a, b) == 0)
			continue;
		uint8_t *data;
		size_t n;
		if (!(rc = ge_file_read(a, &data, &n, err))) {
			rc = ge_file_write_atomic(b, data, n, err);
			free(data);
		}
	}
	closedir(d);
	json_decref(old);
	return rc;
}

/* Puts the finished tmp directory in the place of dir: swapped whole
 * (ge_dir_swap), or, for the working directory or /, which cannot be
 * swapped, file by file with the model.json last. */
static int swap_in(const char *tmp, const char *dir, const char *path,
		   int in_place, ge_error *err)
{
	if (!in_place)
		return ge_dir_swap(tmp, dir, err);
	struct stat st;
	DIR *d = opendir(tmp);
	if (!d)
		return ge_err(err, GE_EIO, "%s: %s", tmp, strerror(errno));
	struct dirent *e;
	int rc = GE_OK;
	const char *json = base_of(path);
	for (int pass = 0; pass < 2 && !rc; pass++) {
		rewinddir(d);
		while (!rc && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    (strcmp(e->d_name, json) == 0) != pass)
				continue;
			char a[2 * PATH_MAX], b[2 * PATH_MAX];
			snprintf(a, sizeof a, "%s/%s", tmp, e->d_name);
			snprintf(b, sizeof b, "%s/%s", dir, e->d_name);
			struct stat sb;
			if (stat(b, &sb) == 0 && sb.st_nlink > 1 &&
			    stat(a, &st) == 0 && st.st_ino == sb.st_ino)
				continue;
			if (rename(a, b) < 0)
				rc = ge_err(err, GE_EIO, "%s: %s", b,
					    strerror(errno));
		}
	}
	closedir(d);
	ge_remove_tree(tmp);
	return rc;
}

static int write_files(writer *W, const char *tmp, json_t *root,
		       size_t shard, size_t nshards)
{
	int rc = GE_OK;
	for (size_t k = 0; k < nshards && !rc; k++) {
		char p[2 * PATH_MAX];
		snprintf(p, sizeof p, "%s/group1-shard%zuof%zu.bin", tmp, k + 1,
			 nshards);
		size_t off = k * shard, len = W->data.len - off;
		if (len > shard)
			len = shard;
		rc = ge_file_write_atomic(p, W->data.data + off, len, W->err);
	}
	if (rc)
		return rc;
	ge_buf out = GE_BUF_INIT;
	ge_json_dump_compact(root, &out);
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", tmp, base_of(W->path));
	rc = ge_file_write_atomic(p, out.data, out.len, W->err);
	ge_buf_free(&out);
	return rc;
}

/* Why the temporary directory of write_dir could not be made, said in
 * the user's terms: the directory above the model's is missing, or the
 * temp (named) cannot be created there. */
static int made_error(const char *path, const char *dir, int in_place, int e,
		      ge_error *err)
{
	if (in_place)
		return ge_err(err, GE_EIO, "%s: cannot create a temporary "
			      "directory in %s to write the model in: %s",
			      path, dir, strerror(e));
	char *up = dir_of(dir);
	struct stat st;
	int rc;
	if (e == ENOENT && stat(up, &st) != 0)
		rc = ge_err(err, GE_EIO, "%s: the directory %s does not exist",
			    path, up);
	else if (e == ENOTDIR)
		rc = ge_err(err, GE_EIO, "%s: %s is not a directory", path, up);
	else
		rc = ge_err(err, GE_EIO, "%s: cannot create %s.tmp-*, the "
			    "temporary directory the model is written in "
			    "before it replaces %s (in %s): %s",
			    path, dir, dir, up, strerror(e));
	free(up);
	return rc;
}

/* The model's directory written whole beside the destination and swapped
 * in. */
static int write_dir(writer *W, json_t *root, size_t shard, size_t nshards)
{
	const char *path = W->path;
	ge_error *err = W->err;
	int rc;
	char *dir = dir_of(path);
	struct stat ds;
	char real[PATH_MAX];
	/* a symlink to the directory stays one: the real directory is the
	 * one swapped */
	if (lstat(dir, &ds) == 0 && S_ISLNK(ds.st_mode) && realpath(dir, real)) {
		free(dir);
		dir = ge_xstrdup(real);
	}
	if (stat(dir, &ds) == 0 && !S_ISDIR(ds.st_mode)) {
		rc = ge_err(err, GE_EIO, "%s: %s is not a directory", path, dir);
		free(dir);
		return rc;
	}
	/* the working directory (or /) cannot be swapped: then the new
	 * files are made inside it and moved into place one by one */
	int in_place = !strcmp(dir, ".") || !strcmp(dir, "/");
	char tmp[PATH_MAX];
	int made;
	if (in_place) {
		snprintf(tmp, sizeof tmp, "%s/.%s.tmp-XXXXXX",
			 !strcmp(dir, "/") ? "" : ".", base_of(path));
		made = mkdtemp(tmp) != NULL;
	} else {
		/* what killed saves to dir left, then a temp name carrying
		 * our pid, removed on SIGINT/SIGTERM */
		ge_tmp_clean(dir);
		made = ge_tmp_create(dir, 1, tmp, sizeof tmp) == 0;
	}
	if (!made) {
		rc = made_error(path, dir, in_place, errno, err);
	} else {
		/* mkdtemp makes it private; it gets the mode the directory
		 * has, or a new one's */
		struct stat st;
		mode_t um = umask(0);
		umask(um);
		chmod(tmp, stat(dir, &st) == 0 ? st.st_mode & 07777
					       : 0777 & ~um);
		rc = in_place ? GE_OK : carry_over(dir, tmp, path, err);
		if (!rc)
			rc = write_files(W, tmp, root, shard, nshards);
		if (!rc)
			rc = swap_in(tmp, dir, path, in_place, err);
		if (rc) {
			ge_remove_tree(tmp);
			ge_tmp_forget(tmp);
		}
	}
	free(dir);
	return rc;
}

int ge_tfjs_save(ge_graph *g, const char *path, const ge_save_opts *o,
		 ge_tfjs_save_info *info, ge_error *err)
{
	writer W;
	json_t *topo = NULL;
	memset(&W, 0, sizeof W);
	W.path = path;
	W.err = err;
	W.o = o;
	W.meta = ge_graph_tfjs(g);
	W.specs = json_array();
	W.names = json_object();
	if (!*base_of(path) || strlen(path) + 32 > PATH_MAX) {
		json_decref(W.specs);
		json_decref(W.names);
		return ge_err(err, GE_EINVAL, "%s: not a file name for a "
			      "model.json", path);
	}
	int rc = topology(&W, g, &topo);
	if (rc) {
		json_decref(W.specs);
		json_decref(W.names);
		ge_buf_free(&W.data);
		return rc;
	}
	size_t shard = o && o->shard_size ? o->shard_size : GE_TFJS_SHARD_SIZE;
	size_t nshards = (W.data.len + shard - 1) / shard;
	json_t *root = model_json(&W, g, topo, nshards);
	rc = write_dir(&W, root, shard, nshards);
	W.info.n_shards = nshards;
	W.info.weight_bytes = W.data.len;
	if (info && !rc)
		*info = W.info;
	json_decref(root);
	json_decref(W.specs);
	json_decref(W.names);
	ge_buf_free(&W.data);
	return rc;
}
