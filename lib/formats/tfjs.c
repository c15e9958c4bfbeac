/*
 * tfjs.c: TensorFlow.js graph models (model.json) as graphs.
 *
 * A graph model's modelTopology is a GraphDef in protobuf's JSON mapping,
 * with the values of its Const nodes taken out and stored in binary weight
 * files listed by weightsManifest.  Loading maps the topology to a GraphDef
 * message, puts every weight back into the Const of the same name as a
 * TensorProto (dequantized, in the dtype the node declares), packs it and
 * hands the bytes to the ordinary GraphDef reader.  The result is a plain
 * graph: saving it writes a GraphDef.
 *
 * Weight files hold, group by group, the concatenation of the group's files;
 * each weight takes the next numel * element-size bytes (strings: a 32-bit
 * little-endian length before each element's bytes).  Quantized weights
 * are stored as uint8 or uint16 (value = q * scale + min, rounded for
 * int32) or as float16.  The arithmetic is TensorFlow.js's: double, then
 * one rounding to float32.
 *
 * Members of the topology that name no GraphDef field, and enum names this
 * build does not know, are skipped as TensorFlow.js itself skips them, so a
 * model written by a newer converter still loads.  The other top-level
 * members (signature, userDefinedMetadata, modelInitializer...), how each
 * weight was quantized and the weights no Const takes stay with the graph
 * (ge_tfjs_meta) for a save as tfjs (tfjs_write.c).
 */
#include "graph/graph_impl.h"
#include "functions/func.h"
#include "base/bounds.h"
#include "base/fsutil.h"
#include "base/jsonpb.h"
#include "formats/tfjs.h"
#include "formats/model.h"
#include "base/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* What the values of a weight are, before any conversion to the node's
 * dtype. */
enum kind { K_FLOAT, K_INT, K_BOOL, K_COMPLEX, K_STRING };
/* How they are stored. */
enum store { S_RAW, S_UINT8, S_UINT16, S_FLOAT16 };

typedef struct weight {
	const char *name;          /* in the JSON document */
	const char *dtype_name;
	enum kind kind;
	int dtype;                 /* TensorFlow dtype of the values */
	size_t vsize;              /* bytes per raw element; 0 for strings */
	enum store store;
	double scale, min;
	int64_t *shape;
	int rank;
	size_t numel;
	size_t group;
	const json_t *spec;        /* its entry in weightsManifest */
	const uint8_t *data;       /* NULL when the files were not read */
	size_t len;
	int used;
} weight;

typedef struct group {
	uint8_t *data;
	size_t len;
	char *last_path;           /* the file where the group's data ends */
	const json_t *paths;
	size_t first, end;         /* its weights: w[first..end) */
} group;

typedef struct loader {
	const char *name;          /* the model.json, for messages */
	ge_error *err;
	weight *w;
	size_t nw;
	group *g;
	size_t ng;
	size_t *idx;               /* hash of weight names: index + 1, 0 empty */
	size_t idx_cap;
	int can_read;              /* name is a path: weight files can be read */
	ge_tfjs_info info;
} loader;

/* ---------------------------------------------------------------- helpers */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Written out byte by byte so the compiler sees one store on
 * little-endian hosts. */
static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

static float f32_of_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint32_t bits_of_f32(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static const char *dt_name(int dt)
{
	const char *n = ge_dtype_name(dt);
	return n ? n : "?";
}

/* "[2,3]" into buf. */
static const char *shape_str(const int64_t *d, int rank, char *buf, size_t n)
{
	size_t o = 0;
	o += (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < rank && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "",
				      (long long)d[i]);
	if (o < n)
		snprintf(buf + o, n - o, "]");
	return buf;
}

/* ---------------------------------------------------------------- manifest */

static const weight *find_weight(const loader *L, const char *name)
{
	if (!L->idx_cap)
		return NULL;
	size_t mask = L->idx_cap - 1;
	for (size_t h = ge_hash(name, strlen(name)) & mask;; h = (h + 1) & mask) {
		size_t i = L->idx[h];
		if (!i)
			return NULL;
		if (!strcmp(L->w[i - 1].name, name))
			return &L->w[i - 1];
	}
}

static int index_weights(loader *L)
{
	size_t cap = 16;
	while (cap < L->nw * 2)
		cap *= 2;
	L->idx = ge_xcalloc(cap, sizeof *L->idx);
	L->idx_cap = cap;
	for (size_t i = 0; i < L->nw; i++) {
		const char *n = L->w[i].name;
		size_t h = ge_hash(n, strlen(n)) & (cap - 1);
		while (L->idx[h]) {
			const weight *o = &L->w[L->idx[h] - 1];
			if (!strcmp(o->name, n))
				return ge_err(L->err, GE_EFORMAT,
					      "%s: weight '%s' is listed twice "
					      "in weightsManifest", L->name, n);
			h = (h + 1) & (cap - 1);
		}
		L->idx[h] = i + 1;
	}
	return GE_OK;
}

static int merr(loader *L, const char *fmt, ...) GE_PRINTF(2, 3);
static int merr(loader *L, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ge_err(L->err, GE_EFORMAT, "%s: %s", L->name, what);
}

static int spec_number(loader *L, const weight *w, const json_t *q,
		       const char *key, double *out)
{
	const json_t *v = json_object_get(q, key);
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return merr(L, "weight '%s': quantization needs a finite "
			    "number '%s'", w->name, key);
	*out = json_number_value(v);
	return GE_OK;
}

static const struct {
	const char *name;
	enum kind kind;
	int dtype;
	size_t size;
} dts[] = {
	{"float32", K_FLOAT, TENSORFLOW__DATA_TYPE__DT_FLOAT, 4},
	{"int32", K_INT, TENSORFLOW__DATA_TYPE__DT_INT32, 4},
	{"bool", K_BOOL, TENSORFLOW__DATA_TYPE__DT_BOOL, 1},
	{"complex64", K_COMPLEX, TENSORFLOW__DATA_TYPE__DT_COMPLEX64, 8},
	{"string", K_STRING, TENSORFLOW__DATA_TYPE__DT_STRING, 0},
	{"int64", K_INT, TENSORFLOW__DATA_TYPE__DT_INT64, 8},
};

static int read_shape(loader *L, const json_t *v, weight *w, ge_arena *a)
{
	size_t n = json_array_size(v);
	if (!json_is_array(v))
		return merr(L, "weight '%s' has no shape (an array)", w->name);
	if (n > 64)
		return merr(L, "weight '%s' has %zu dimensions", w->name, n);
	w->rank = (int)n;
	w->shape = ge_arena_alloc(a, (n ? n : 1) * sizeof *w->shape);
	w->numel = 1;
	int overflow = 0, empty = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t d;
		if (ge_json_int64(json_array_get(v, i), &d) || d < 0)
			return merr(L, "weight '%s': dimension %zu is not a "
				    "non-negative integer", w->name, i);
		w->shape[i] = d;
		empty |= d == 0;
		if ((uint64_t)d > SIZE_MAX ||
		    __builtin_mul_overflow(w->numel, (size_t)d, &w->numel))
			overflow = 1;
	}
	if (empty)
		w->numel = 0;
	else if (overflow)
		return merr(L, "weight '%s': shape is too large", w->name);
	return GE_OK;
}

static int read_quantization(loader *L, const json_t *q, weight *w)
{
	if (!json_is_object(q))
		return merr(L, "weight '%s': quantization is not an object",
			    w->name);
	const json_t *v = json_object_get(q, "dtype");
	if (!json_is_string(v))
		return merr(L, "weight '%s': quantization has no dtype",
			    w->name);
	const char *qd = json_string_value(v);
	int rc;
	if (!strcmp(qd, "uint8") || !strcmp(qd, "uint16")) {
		w->store = qd[4] == '8' ? S_UINT8 : S_UINT16;
		if (w->kind != K_FLOAT && w->kind != K_INT)
			return merr(L, "weight '%s': %s cannot be quantized",
				    w->name, w->dtype_name);
		if ((rc = spec_number(L, w, q, "scale", &w->scale)) ||
		    (rc = spec_number(L, w, q, "min", &w->min)))
			return rc;
	} else if (!strcmp(qd, "float16")) {
		w->store = S_FLOAT16;
		if (w->kind != K_FLOAT ||
		    w->dtype != TENSORFLOW__DATA_TYPE__DT_FLOAT)
			return merr(L, "weight '%s': float16 quantization of "
				    "%s", w->name, w->dtype_name);
	} else {
		return merr(L, "weight '%s': unknown quantization dtype "
			    "\"%.40s\"", w->name, qd);
	}
	L->info.n_quantized++;
	return GE_OK;
}

/* One entry of a group's "weights". */
static int read_spec(loader *L, const json_t *s, weight *w, ge_arena *a)
{
	const json_t *v;
	memset(w, 0, sizeof *w);
	w->spec = s;
	if (!json_is_object(s))
		return merr(L, "weightsManifest entry is %s, not an object",
			    ge_json_type_name(s));
	v = json_object_get(s, "name");
	if (!json_is_string(v) || !json_string_length(v) ||
	    memchr(json_string_value(v), 0, json_string_length(v)))
		return merr(L, "weightsManifest entry without a name");
	w->name = json_string_value(v);
	v = json_object_get(s, "dtype");
	if (!json_is_string(v))
		return merr(L, "weight '%s' has no dtype", w->name);
	w->dtype_name = json_string_value(v);
	size_t k;
	for (k = 0; k < sizeof dts / sizeof dts[0]; k++)
		if (!strcmp(w->dtype_name, dts[k].name))
			break;
	if (k == sizeof dts / sizeof dts[0])
		return merr(L, "weight '%s' has unsupported dtype \"%.40s\"",
			    w->name, w->dtype_name);
	w->kind = dts[k].kind;
	w->dtype = dts[k].dtype;
	w->vsize = dts[k].size;
	int rc = read_shape(L, json_object_get(s, "shape"), w, a);
	if (rc)
		return rc;
	const json_t *q = json_object_get(s, "quantization");
	if (q && !json_is_null(q))
		return read_quantization(L, q, w);
	return GE_OK;
}

/* Bytes a weight takes in its group's data starting at off, or an error
 * when the data is too short. */
static int weight_extent(loader *L, weight *w, const group *g, size_t off)
{
	size_t esz = w->store == S_UINT8 ? 1 : w->store != S_RAW ? 2 : w->vsize;
	size_t need, avail = off <= g->len ? g->len - off : 0;
	char sb[256];
	if (w->kind == K_STRING) {
		need = 0;
		for (size_t i = 0; i < w->numel; i++) {
			if (avail - need < 4)
				goto short_data;
			size_t sl = rd32(g->data + off + need);
			need += 4;
			if (avail - need < sl) {
				need += sl;
				goto short_data;
			}
			need += sl;
		}
	} else {
		if (__builtin_mul_overflow(w->numel, esz, &need))
			return ge_err(L->err, GE_EFORMAT, "%s: weight '%s' is too "
				      "large", L->name, w->name);
		if (need > avail)
			goto short_data;
	}
	w->data = g->data + off;
	w->len = need;
	return GE_OK;
short_data:
	return ge_err(L->err, GE_EFORMAT,
		      "%s: too short: weight '%s' (%s %s) needs %zu%s bytes "
		      "at offset %zu of its group's data, which has %zu",
		      g->last_path, w->name, w->dtype_name,
		      shape_str(w->shape, w->rank, sb, sizeof sb), need,
		      w->kind == K_STRING ? " or more" : "", off, g->len);
}

/* The directory of the model.json, with a trailing slash ("" for the
 * current one). */
static char *model_dir(const char *name)
{
	const char *slash = strrchr(name, '/');
	return slash ? ge_xstrndup(name, (size_t)(slash - name + 1))
		     : ge_xstrdup("");
}

/* Whether a weights path stays inside the model's directory: relative,
 * no URL, no ".." component. */
static int path_inside(const char *p)
{
	if (p[0] == '/' || strstr(p, "://"))
		return 0;
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return 0;
		c += n;
		if (*c == '/')
			c++;
	}
	return 1;
}

/* Reads a group's shards, each resolved inside the model's directory (no
 * "..", no absolute path, no symlink out, no FIFO or device), their sum
 * held to the memory budget. */
static int read_group(loader *L, group *g, const char *dir)
{
	const json_t *paths = g->paths;
	size_t np = json_array_size(paths);
	ge_buf all = GE_BUF_INIT;
	const char *base = *dir ? dir : ".";
	uint64_t max = ge_max_memory();
	for (size_t i = 0; i < np; i++) {
		const json_t *p = json_array_get(paths, i);
		ge_error e;
		if (!json_is_string(p) || !json_string_length(p) ||
		    memchr(json_string_value(p), 0, json_string_length(p))) {
			ge_buf_free(&all);
			return merr(L, "weights path is not a file name");
		}
		const char *ps = json_string_value(p);
		if (!path_inside(ps)) {
			ge_buf_free(&all);
			return merr(L, "weights path \"%.200s\" leaves the "
				    "directory of the model.json", ps);
		}
		free(g->last_path);
		g->last_path = ge_xmalloc(strlen(dir) + strlen(ps) + 1);
		strcpy(g->last_path, dir);
		strcat(g->last_path, ps);
		uint8_t *d;
		size_t n;
		uint64_t left = max > L->info.weight_bytes
					? max - L->info.weight_bytes
					: 0;
		if (ge_read_inside(base, ps, L->name, "weights path", left, &d,
				   &n, &e)) {
			ge_buf_free(&all);
			if (e.code == GE_EFORMAT && strstr(e.msg, "larger"))
				return ge_budget_check(
					UINT64_MAX, L->name,
					"reading the weights files", L->err);
			return ge_err(L->err, e.code, "%s", e.msg);
		}
		L->info.weight_bytes += n;
		if (np == 1) {
			g->data = d;
			g->len = n;
			return GE_OK;
		}
		ge_buf_add(&all, d, n);
		free(d);
	}
	g->data = ge_buf_steal(&all, &g->len);
	if (!g->data)
		g->data = ge_xmalloc(1);
	return GE_OK;
}

/* Shard paths: at most GE_MAX_TFJS_FILES, none listed twice. */
static int check_paths(loader *L, const json_t *man)
{
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(man); i++) {
		n += json_array_size(
			json_object_get(json_array_get(man, i), "paths"));
		if (n > GE_MAX_TFJS_FILES)
			return merr(L, "weightsManifest lists more than %d "
				    "weights files", GE_MAX_TFJS_FILES);
	}
	const json_t **all = ge_xmalloc((n ? n : 1) * sizeof *all);
	size_t k = 0;
	for (size_t i = 0; i < json_array_size(man); i++) {
		const json_t *ps =
			json_object_get(json_array_get(man, i), "paths");
		for (size_t j = 0; j < json_array_size(ps); j++)
			if (json_is_string(json_array_get(ps, j)))
				all[k++] = json_array_get(ps, j);
	}
	int rc = GE_OK;
	for (size_t i = 0; i < k && !rc; i++)
		for (size_t j = 0; j < i; j++)
			if (json_equal((json_t *)all[i], (json_t *)all[j])) {
				rc = merr(L, "weights path \"%.200s\" is listed "
					  "twice", json_string_value(all[i]));
				break;
			}
	free(all);
	return rc;
}

static int check_groups(loader *L, const json_t *man)
{
	size_t total = 0;
	for (size_t i = 0; i < json_array_size(man); i++) {
		const json_t *gj = json_array_get(man, i);
		const json_t *ws = json_object_get(gj, "weights");
		if (!json_is_object(gj) || !json_is_array(ws))
			return merr(L, "weightsManifest group %zu has no "
				    "\"weights\" array", i);
		if (!json_is_array(json_object_get(gj, "paths")))
			return merr(L, "weightsManifest group %zu has no "
				    "\"paths\" array", i);
		total += json_array_size(ws);
	}
	L->w = ge_xcalloc(total ? total : 1, sizeof *L->w);
	return GE_OK;
}

static int read_manifest(loader *L, const json_t *man, ge_arena *a)
{
	int rc;
	if (!man || json_is_null(man))
		return GE_OK;
	if (!json_is_array(man))
		return merr(L, "weightsManifest is %s, not an array",
			    ge_json_type_name(man));
	if ((rc = check_groups(L, man)) || (rc = check_paths(L, man)))
		return rc;
	size_t ng = json_array_size(man);
	L->g = ge_xcalloc(ng ? ng : 1, sizeof *L->g);
	L->ng = ng;
	for (size_t i = 0; i < ng; i++) {
		const json_t *ws = json_object_get(json_array_get(man, i),
						   "weights");
		L->g[i].paths = json_object_get(json_array_get(man, i),
						"paths");
		L->g[i].first = L->nw;
		for (size_t k = 0; k < json_array_size(ws); k++) {
			weight *w = &L->w[L->nw];
			if ((rc = read_spec(L, json_array_get(ws, k), w, a)))
				return rc;
			w->group = i;
			L->nw++;
		}
		L->g[i].end = L->nw;
	}
	L->info.n_weights = L->nw;
	if ((rc = index_weights(L)) || !L->can_read)
		return rc;
	char *dir = model_dir(L->name);
	for (size_t i = 0; i < L->ng && !rc; i++) {
		group *g = &L->g[i];
		if (g->first == g->end)
			continue;
		if ((rc = read_group(L, g, dir)))
			break;
		size_t off = 0;
		for (size_t k = g->first; k < g->end && !rc; k++) {
			rc = weight_extent(L, &L->w[k], g, off);
			off += L->w[k].len;
		}
		/* the converter writes nothing after the last weight: more
		 * bytes mean the manifest and the files disagree */
		if (!rc && off != g->len)
			rc = ge_err(L->err, GE_EFORMAT,
				    "%s: weightsManifest group %zu takes %zu "
				    "bytes but its files hold %zu", g->last_path,
				    i, off, g->len);
	}
	free(dir);
	return rc;
}

/* ---------------------------------------------------------------- values */

/* The i-th value of a float weight, dequantized. */
static double get_float(const weight *w, size_t i)
{
	const uint8_t *p = w->data;
	switch (w->store) {
	case S_UINT8:
		return (double)(float)(p[i] * w->scale + w->min);
	case S_UINT16:
		return (double)(float)(rd16(p + 2 * i) * w->scale + w->min);
	case S_FLOAT16:
		return ge_half_to_float(rd16(p + 2 * i));
	default:
		return f32_of_bits(rd32(p + 4 * i));
	}
}

/* The i-th value of an int or bool weight; quantized ints round half up,
 * as TensorFlow.js does. */
static int64_t get_int(const weight *w, size_t i)
{
	const uint8_t *p = w->data;
	switch (w->store) {
	case S_UINT8:
		return (int64_t)floor(p[i] * w->scale + w->min + 0.5);
	case S_UINT16:
		return (int64_t)floor(rd16(p + 2 * i) * w->scale + w->min + 0.5);
	default:
		break;
	}
	if (w->kind == K_BOOL)
		return p[i] != 0;
	if (w->vsize == 8)
		return (int64_t)rd64(p + 8 * i);
	return (int32_t)rd32(p + 4 * i);
}

/* The common cases without a per-element switch: float32 Consts from raw,
 * uint8 (through a table of the 256 values), uint16 or float16 data, and
 * raw int32 or bool.  Returns 0 when the general loop must do it. */
static int fast_copy(const weight *w, int dt, uint8_t *o)
{
	const uint8_t *p = w->data;
	size_t n = w->numel;
	if (!n)
		return 1;
	if (w->kind == K_FLOAT && dt == TENSORFLOW__DATA_TYPE__DT_FLOAT) {
		switch (w->store) {
		case S_RAW:
			memcpy(o, p, 4 * n);
			return 1;
		case S_UINT8: {
			uint32_t lut[256];
			for (int q = 0; q < 256; q++)
				lut[q] = bits_of_f32((float)(q * w->scale + w->min));
			for (size_t i = 0; i < n; i++)
				wr32(o + 4 * i, lut[p[i]]);
			return 1;
		}
		case S_UINT16:
			for (size_t i = 0; i < n; i++)
				wr32(o + 4 * i, bits_of_f32((float)(
					rd16(p + 2 * i) * w->scale + w->min)));
			return 1;
		case S_FLOAT16:
			for (size_t i = 0; i < n; i++)
				wr32(o + 4 * i,
				     bits_of_f32(ge_half_to_float(rd16(p + 2 * i))));
			return 1;
		}
	}
	if (w->store == S_RAW &&
	    ((w->kind == K_INT && w->vsize == 4 &&
	      dt == TENSORFLOW__DATA_TYPE__DT_INT32) ||
	     (w->kind == K_BOOL && dt == TENSORFLOW__DATA_TYPE__DT_BOOL))) {
		if (w->kind == K_BOOL)
			for (size_t i = 0; i < n; i++)
				o[i] = p[i] != 0;
		else
			memcpy(o, p, 4 * n);
		return 1;
	}
	return 0;
}

static int int_range(int dt, int64_t *lo, uint64_t *hi)
{
	switch (dt) {
	case TENSORFLOW__DATA_TYPE__DT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return 1;
	case TENSORFLOW__DATA_TYPE__DT_UINT8: *lo = 0; *hi = UINT8_MAX; return 1;
	case TENSORFLOW__DATA_TYPE__DT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return 2;
	case TENSORFLOW__DATA_TYPE__DT_UINT16: *lo = 0; *hi = UINT16_MAX; return 2;
	case TENSORFLOW__DATA_TYPE__DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return 4;
	case TENSORFLOW__DATA_TYPE__DT_UINT32: *lo = 0; *hi = UINT32_MAX; return 4;
	case TENSORFLOW__DATA_TYPE__DT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return 8;
	case TENSORFLOW__DATA_TYPE__DT_UINT64: *lo = 0; *hi = UINT64_MAX; return 8;
	default: return 0;
	}
}

/* The tensor of weight w as the node declares it (dtype dt), or an error
 * naming the node. */
static int make_tensor(loader *L, const weight *w, const char *node, int dt,
		       Tensorflow__TensorProto **out)
{
	Tensorflow__TensorProto *t = ge_xmalloc(sizeof *t);
	tensorflow__tensor_proto__init(t);
	t->dtype = (Tensorflow__DataType)dt;
	t->tensor_shape = ge_xmalloc(sizeof *t->tensor_shape);
	tensorflow__tensor_shape_proto__init(t->tensor_shape);
	if (w->rank) {
		t->tensor_shape->dim =
			ge_xcalloc((size_t)w->rank, sizeof *t->tensor_shape->dim);
		for (int i = 0; i < w->rank; i++) {
			Tensorflow__TensorShapeProto__Dim *d =
				ge_xmalloc(sizeof *d);
			tensorflow__tensor_shape_proto__dim__init(d);
			d->size = w->shape[i];
			t->tensor_shape->dim[t->tensor_shape->n_dim++] = d;
		}
	}
	*out = t;
	size_t n = w->numel;
	int64_t lo;
	uint64_t hi;
	int isz = int_range(dt, &lo, &hi);
	int ok = 1;
	if (w->kind == K_STRING) {
		ok = dt == TENSORFLOW__DATA_TYPE__DT_STRING;
		if (ok && n) {
			t->string_val = ge_xcalloc(n, sizeof *t->string_val);
			const uint8_t *p = w->data;
			for (size_t i = 0; i < n; i++) {
				size_t sl = rd32(p);
				ProtobufCBinaryData *b = &t->string_val[i];
				b->len = sl;
				b->data = sl ? ge_xmalloc(sl) : NULL;
				if (sl)
					memcpy(b->data, p + 4, sl);
				p += 4 + sl;
				t->n_string_val++;
			}
		}
		goto done;
	}
	size_t osz = ge_dtype_size(dt);
	if (dt == TENSORFLOW__DATA_TYPE__DT_BOOL)
		osz = 1;
	switch (w->kind) {
	case K_FLOAT:
		ok = dt == TENSORFLOW__DATA_TYPE__DT_FLOAT ||
		     dt == TENSORFLOW__DATA_TYPE__DT_DOUBLE ||
		     dt == TENSORFLOW__DATA_TYPE__DT_HALF ||
		     dt == TENSORFLOW__DATA_TYPE__DT_BFLOAT16;
		break;
	case K_INT:
		ok = isz != 0;
		break;
	case K_BOOL:
		ok = dt == TENSORFLOW__DATA_TYPE__DT_BOOL;
		break;
	case K_COMPLEX:
		ok = dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX64 ||
		     dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX128;
		break;
	default:
		ok = 0;
	}
	if (!osz)
		ok = 0;
	if (!ok)
		goto done;
	size_t bytes;
	if (__builtin_mul_overflow(n, osz, &bytes))
		return ge_err(L->err, GE_EFORMAT, "%s: Const '%s' is too large",
			      L->name, node);
	uint8_t *o = bytes ? ge_xmalloc(bytes) : NULL;
	t->tensor_content.data = o;
	t->tensor_content.len = bytes;
	if (fast_copy(w, dt, o))
		return GE_OK;
	for (size_t i = 0; i < n; i++) {
		switch (w->kind) {
		case K_FLOAT: {
			double v = get_float(w, i);
			if (dt == TENSORFLOW__DATA_TYPE__DT_FLOAT)
				wr32(o + 4 * i, bits_of_f32((float)v));
			else if (dt == TENSORFLOW__DATA_TYPE__DT_DOUBLE) {
				uint64_t b;
				memcpy(&b, &v, 8);
				wr64(o + 8 * i, b);
			} else if (dt == TENSORFLOW__DATA_TYPE__DT_HALF)
				wr16(o + 2 * i, ge_half_from_double(v));
			else
				wr16(o + 2 * i, ge_bf16_from_double(v));
			break;
		}
		case K_INT: {
			int64_t v = get_int(w, i);
			if (v < lo || (v > 0 && (uint64_t)v > hi)) {
				char sb[256];
				return ge_err(L->err, GE_EFORMAT,
					      "%s: Const '%s': value %lld of its "
					      "weight (%s %s) does not fit its "
					      "dtype %s", L->name, node,
					      (long long)v, w->dtype_name,
					      shape_str(w->shape, w->rank, sb,
							sizeof sb),
					      dt_name(dt));
			}
			if (isz == 1)
				o[i] = (uint8_t)v;
			else if (isz == 2)
				wr16(o + 2 * i, (uint16_t)v);
			else if (isz == 4)
				wr32(o + 4 * i, (uint32_t)v);
			else
				wr64(o + 8 * i, (uint64_t)v);
			break;
		}
		case K_BOOL:
			o[i] = (uint8_t)get_int(w, i);
			break;
		case K_COMPLEX: {
			const uint8_t *p = w->data + 8 * i;
			if (dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX64) {
				memcpy(o + 8 * i, p, 8);
			} else {
				for (int k = 0; k < 2; k++) {
					double v = f32_of_bits(rd32(p + 4 * k));
					uint64_t b;
					memcpy(&b, &v, 8);
					wr64(o + 16 * i + 8 * k, b);
				}
			}
			break;
		}
		default:
			break;
		}
	}
done:
	if (!ok)
		return ge_err(L->err, GE_EFORMAT,
			      "%s: Const '%s' has dtype %s but its weight is %s",
			      L->name, node, dt_name(dt), w->dtype_name);
	return GE_OK;
}

/* ---------------------------------------------------------------- nodes */

static Tensorflow__AttrValue *get_attr(Tensorflow__NodeDef *n, const char *key)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (n->attr[i]->key && !strcmp(n->attr[i]->key, key))
			return n->attr[i]->value;
	return NULL;
}

/* Sets an attr, taking ownership of v. */
static void put_attr(Tensorflow__NodeDef *n, const char *key,
		     Tensorflow__AttrValue *v)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (n->attr[i]->key && !strcmp(n->attr[i]->key, key)) {
			if (n->attr[i]->value)
				protobuf_c_message_free_unpacked(
					&n->attr[i]->value->base, NULL);
			n->attr[i]->value = v;
			return;
		}
	Tensorflow__NodeDef__AttrEntry *e = ge_xmalloc(sizeof *e);
	tensorflow__node_def__attr_entry__init(e);
	e->key = ge_xstrdup(key);
	e->value = v;
	n->attr = ge_xrealloc(n->attr, (n->n_attr + 1) * sizeof *n->attr);
	n->attr[n->n_attr++] = e;
}

static int tensor_has_data(const Tensorflow__TensorProto *t)
{
	if (t->tensor_content.len || t->n_float_val || t->n_double_val ||
	    t->n_int_val || t->n_string_val || t->n_scomplex_val ||
	    t->n_int64_val || t->n_bool_val || t->n_dcomplex_val ||
	    t->n_half_val || t->n_resource_handle_val || t->n_variant_val ||
	    t->n_uint32_val || t->n_uint64_val || t->float8_val.len)
		return 1;
	/* an empty tensor needs no values */
	const Tensorflow__TensorShapeProto *s = t->tensor_shape;
	if (s && !s->unknown_rank)
		for (size_t i = 0; i < s->n_dim; i++)
			if (s->dim[i]->size == 0)
				return 1;
	return 0;
}

/* Which group's files hold a weight, for messages. */
static const char *group_files(const loader *L, const weight *w, char *buf,
			       size_t n)
{
	const json_t *ps = L->g[w->group].paths;
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < json_array_size(ps) && o < n; i++)
		if (json_is_string(json_array_get(ps, i)))
			o += (size_t)snprintf(buf + o, n - o, "%s%s",
					      i ? ", " : "",
					      json_string_value(
						      json_array_get(ps, i)));
	return buf;
}

static int fill_const(loader *L, Tensorflow__NodeDef *nd)
{
	const char *node = nd->name ? nd->name : "";
	Tensorflow__AttrValue *val = get_attr(nd, "value");
	Tensorflow__AttrValue *dta = get_attr(nd, "dtype");
	const Tensorflow__TensorProto *old =
		val && val->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR
			? val->tensor : NULL;
	weight *w = (weight *)find_weight(L, node);
	char fb[512];
	/* a value in the topology is the Const's own (a function's Const
	 * may share its name with a weight of the graph's) */
	if (old && tensor_has_data(old))
		return GE_OK;
	if (!w || !w->data) {
		if (w)
			return ge_err(L->err, GE_ENOTFOUND,
				      "%s: Const '%s' has no value: its weight "
				      "is in %s, which cannot be read without "
				      "the path of the model.json",
				      L->name, node,
				      group_files(L, w, fb, sizeof fb));
		return ge_err(L->err, GE_EFORMAT,
			      "%s: Const '%s' has no value and "
			      "weightsManifest has no weight of that name",
			      L->name, node);
	}
	int dt = w->dtype;
	if (dta && dta->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
		dt = (int)dta->type;
	else if (old && old->dtype)
		dt = (int)old->dtype;
	if (old && old->tensor_shape && !old->tensor_shape->unknown_rank) {
		const Tensorflow__TensorShapeProto *s = old->tensor_shape;
		int same = s->n_dim == (size_t)w->rank;
		for (size_t i = 0; same && i < s->n_dim; i++)
			same = s->dim[i]->size == w->shape[i];
		if (!same) {
			char a[256], b[256];
			int64_t dims[64];
			size_t k = s->n_dim < 64 ? s->n_dim : 64;
			for (size_t i = 0; i < k; i++)
				dims[i] = s->dim[i]->size;
			return ge_err(L->err, GE_EFORMAT,
				      "%s: weight '%s' has shape %s but Const "
				      "'%s' declares %s", L->name, w->name,
				      shape_str(w->shape, w->rank, a, sizeof a),
				      node, shape_str(dims, (int)k, b, sizeof b));
		}
	}
	Tensorflow__TensorProto *t;
	int rc = make_tensor(L, w, node, dt, &t);
	if (rc) {
		protobuf_c_message_free_unpacked(&t->base, NULL);
		return rc;
	}
	Tensorflow__AttrValue *nv = ge_xmalloc(sizeof *nv);
	tensorflow__attr_value__init(nv);
	nv->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
	nv->tensor = t;
	put_attr(nd, "value", nv);
	if (!dta) {
		Tensorflow__AttrValue *tv = ge_xmalloc(sizeof *tv);
		tensorflow__attr_value__init(tv);
		tv->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
		tv->type = (Tensorflow__DataType)dt;
		put_attr(nd, "dtype", tv);
	}
	w->used = 1;
	L->info.n_consts++;
	return GE_OK;
}

static int fill_nodes(loader *L, Tensorflow__NodeDef **nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i]->op || strcmp(nodes[i]->op, "Const") != 0)
			continue;
		int rc = fill_const(L, nodes[i]);
		if (rc)
			return rc;
	}
	return GE_OK;
}

/* modelTopology to a GraphDef.  Nodes are mapped one by one so an error
 * can name the node it is in. */
static int map_topology(loader *L, const json_t *topo,
			Tensorflow__GraphDef **out)
{
	ProtobufCMessage *m;
	char what[400];
	int rc;
	*out = NULL;
	json_t *rest = json_copy((json_t *)topo);
	json_object_del(rest, "node");
	snprintf(what, sizeof what, "%s: modelTopology", L->name);
	rc = ge_jsonpb_from_json(rest, &tensorflow__graph_def__descriptor,
				 what, GE_JSONPB_IGNORE_UNKNOWN, &m, L->err);
	json_decref(rest);
	if (rc)
		return rc;
	Tensorflow__GraphDef *gd = (Tensorflow__GraphDef *)m;
	*out = gd;
	const json_t *nodes = json_object_get(topo, "node");
	if (!nodes || json_is_null(nodes))
		return GE_OK;
	if (!json_is_array(nodes))
		return merr(L, "modelTopology.node is %s, not an array",
			    ge_json_type_name(nodes));
	size_t n = json_array_size(nodes);
	gd->node = ge_xcalloc(n ? n : 1, sizeof *gd->node);
	for (size_t i = 0; i < n; i++) {
		const json_t *nj = json_array_get(nodes, i);
		const json_t *nm = json_object_get(nj, "name");
		if (json_is_string(nm))
			snprintf(what, sizeof what, "%s: node '%.250s'",
				 L->name, json_string_value(nm));
		else
			snprintf(what, sizeof what, "%s: node %zu", L->name, i);
		rc = ge_jsonpb_from_json(nj, &tensorflow__node_def__descriptor,
					 what, GE_JSONPB_IGNORE_UNKNOWN, &m,
					 L->err);
		if (rc)
			return rc;
		gd->node[gd->n_node++] = (Tensorflow__NodeDef *)m;
	}
	return GE_OK;
}

/* What the graph keeps of the model.json for a save as tfjs: the other
 * members, how each weight was stored, and the weights no Const of the
 * graph took (those of modelInitializer), bytes and all. */
static ge_tfjs_meta *capture_meta(loader *L, const json_t *root)
{
	ge_tfjs_meta *m = ge_xcalloc(1, sizeof *m);
	m->refs = 1;
	m->top = json_copy((json_t *)root);
	json_object_del(m->top, "modelTopology");
	json_object_del(m->top, "weightsManifest");
	m->quant = json_object();
	m->extra_specs = json_array();
	for (size_t i = 0; i < L->nw; i++) {
		const weight *w = &L->w[i];
		const json_t *q = json_object_get(w->spec, "quantization");
		if (w->store != S_RAW && q)
			json_object_set(m->quant, w->name, (json_t *)q);
		if (w->used || !w->data)
			continue;
		json_array_append(m->extra_specs, (json_t *)w->spec);
		ge_buf_add(&m->extra_data, w->data, w->len);
	}
	return m;
}

static void tfjs_clone(ge_graph *dst, const ge_graph *src)
{
	dst->tfjs = ge_tfjs_meta_ref(src->tfjs);
}

static void tfjs_free(ge_graph *g)
{
	ge_tfjs_meta_release(g->tfjs);
	g->tfjs = NULL;
}

/* The meta goes with the graph: shared by its clones, freed with it. */
static const ge_graph_hooks tfjs_hooks = {
	.clone = tfjs_clone,
	.free = tfjs_free,
};

void ge_tfjs_meta_release(ge_tfjs_meta *m)
{
	if (!m || --m->refs)
		return;
	json_decref(m->top);
	json_decref(m->quant);
	json_decref(m->extra_specs);
	ge_buf_free(&m->extra_data);
	free(m);
}

ge_tfjs_meta *ge_graph_tfjs(const ge_graph *g)
{
	return g->tfjs;
}

ge_tfjs_meta *ge_tfjs_meta_ref(ge_tfjs_meta *m)
{
	if (m)
		m->refs++;
	return m;
}

/* The checks of the top level before the topology is mapped. */
static int check_root(loader *L, const json_t *root)
{
	if (!json_is_object(root))
		return merr(L, "a model.json is an object, not %s",
			    ge_json_type_name(root));
	const json_t *fmt = json_object_get(root, "format");
	const json_t *topo = json_object_get(root, "modelTopology");
	if (json_is_string(fmt) &&
	    strcmp(json_string_value(fmt), "graph-model") != 0)
		return merr(L, "format \"%.60s\" is not a TensorFlow.js graph "
			    "model%s", json_string_value(fmt),
			    !strcmp(json_string_value(fmt), "layers-model")
				    ? " (Keras layers models are not supported)"
				    : "");
	if (!json_is_object(topo))
		return merr(L, "modelTopology is %s, not a GraphDef object",
			    topo ? ge_json_type_name(topo) : "missing");
	if (!json_object_get(topo, "node") &&
	    (json_object_get(topo, "class_name") ||
	     json_object_get(topo, "model_config")))
		return merr(L, "modelTopology is a Keras model, not a GraphDef "
			    "(layers models are not supported)");
	return GE_OK;
}

int ge_tfjs_parse_info(const uint8_t *data, size_t len, const char *name,
		       ge_graph **out, ge_tfjs_info *info, ge_error *err)
{
	loader L;
	json_t *root = NULL;
	Tensorflow__GraphDef *gd = NULL;
	ge_tfjs_meta *meta = NULL;
	ge_arena arena;
	int rc;
	memset(&L, 0, sizeof L);
	ge_arena_init(&arena);
	if (!name)
		name = "<string>";
	L.name = name;
	L.err = err;
	/* "<string>", "<stdin>": bytes with no file behind them */
	L.can_read = name[0] != '<';
	*out = NULL;
	if (info)
		memset(info, 0, sizeof *info);

	rc = ge_json_load((const char *)data, len, name, &root, err);
	if (rc)
		return rc;
	if ((rc = check_root(&L, root)))
		goto out;
	if ((rc = map_topology(&L, json_object_get(root, "modelTopology"),
			       &gd)))
		goto out;
	if ((rc = read_manifest(&L, json_object_get(root, "weightsManifest"),
				&arena)))
		goto out;
	if ((rc = fill_nodes(&L, gd->node, gd->n_node)))
		goto out;
	if (gd->library)
		for (size_t i = 0; i < gd->library->n_function; i++) {
			Tensorflow__FunctionDef *f = gd->library->function[i];
			if ((rc = fill_nodes(&L, f->node_def, f->n_node_def)))
				goto out;
		}
	for (size_t i = 0; i < L.nw; i++)
		if (!L.w[i].used)
			L.info.n_unused++;
	meta = capture_meta(&L, root);

	size_t sz = protobuf_c_message_get_packed_size(&gd->base);
	uint8_t *buf = ge_xmalloc(sz ? sz : 1);
	protobuf_c_message_pack(&gd->base, buf);
	protobuf_c_message_free_unpacked(&gd->base, NULL);
	gd = NULL;
	/* the weights are in the GraphDef now: free them before it is
	 * parsed, so the peak holds one copy less */
	for (size_t i = 0; i < L.ng; i++) {
		free(L.g[i].data);
		L.g[i].data = NULL;
	}
	ge_flib_install(); /* calls resolve to functions */
	rc = ge_graph_parse_graphdef_buf(buf, sz, 1, name, out, err);
	if (!rc) {
		(*out)->format = GE_FMT_TFJS;
		(*out)->tfjs = meta;
		ge_graph_add_hooks(*out, &tfjs_hooks);
		meta = NULL;
		if (info)
			*info = L.info;
	}
out:
	ge_tfjs_meta_release(meta);
	if (gd)
		protobuf_c_message_free_unpacked(&gd->base, NULL);
	for (size_t i = 0; i < L.ng; i++) {
		free(L.g[i].data);
		free(L.g[i].last_path);
	}
	free(L.g);
	free(L.w);
	free(L.idx);
	ge_arena_free(&arena);
	json_decref(root);
	return rc;
}

int ge_tfjs_parse(const uint8_t *data, size_t len, const char *name,
		  ge_graph **out, ge_error *err)
{
	return ge_tfjs_parse_info(data, len, name, out, NULL, err);
}
