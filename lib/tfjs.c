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
 * model written by a newer converter still loads.  Other top-level members
 * (signature, userDefinedMetadata, modelInitializer) are not read.
 */
#include "graph_impl.h"
#include "jsonpb.h"
#include "model.h"
#include "tensor.h"

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
	const uint8_t *data;       /* NULL when the files were not read */
	size_t len;
	int used;
} weight;

typedef struct group {
	uint8_t *data;
	size_t len;
	char *last_path;           /* the file where the group's data ends */
	const ge_json *paths;
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

/* Puts "what: " after the "file:line:col: " that starts a message from
 * the JSON mapper, so the node at fault is named. */
static void err_insert(ge_error *err, const char *file, const char *what)
{
	if (!err)
		return;
	size_t fl = strlen(file);
	const char *m = err->msg, *p = m + fl;
	if (strncmp(m, file, fl) != 0)
		return;
	for (int k = 0; k < 2; k++) {
		if (*p != ':')
			return;
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (p[0] != ':' || p[1] != ' ')
		return;
	p += 2;
	char tmp[sizeof err->msg];
	snprintf(tmp, sizeof tmp, "%.*s%s: %s", (int)(p - m), m, what, p);
	memcpy(err->msg, tmp, sizeof tmp);
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

static int merr(loader *L, const ge_json *at, const char *fmt, ...)
	GE_PRINTF(3, 4);
static int merr(loader *L, const ge_json *at, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ge_err(L->err, GE_EFORMAT, "%s:%u:%u: %s", L->name, at->line,
		      at->col, what);
}

static int spec_number(loader *L, const weight *w, const ge_json *q,
		       const char *key, double *out)
{
	const ge_json *v = ge_json_get(q, key);
	if (!v || v->type != GE_JSON_NUMBER || !isfinite(v->num))
		return merr(L, v ? v : q, "weight '%s': quantization needs a "
			    "finite number '%s'", w->name, key);
	*out = v->num;
	return GE_OK;
}

/* One entry of a group's "weights". */
static int read_spec(loader *L, const ge_json *s, weight *w, ge_arena *a)
{
	const ge_json *v;
	memset(w, 0, sizeof *w);
	if (s->type != GE_JSON_OBJECT)
		return merr(L, s, "weightsManifest entry is %s, not an object",
			    ge_json_type_name(s->type));
	v = ge_json_get(s, "name");
	if (!v || v->type != GE_JSON_STRING || !v->len ||
	    memchr(v->str, 0, v->len))
		return merr(L, v ? v : s, "weightsManifest entry without a "
			    "name");
	w->name = v->str;
	v = ge_json_get(s, "dtype");
	if (!v || v->type != GE_JSON_STRING)
		return merr(L, v ? v : s, "weight '%s' has no dtype", w->name);
	w->dtype_name = v->str;
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
	size_t k;
	for (k = 0; k < sizeof dts / sizeof dts[0]; k++)
		if (!strcmp(v->str, dts[k].name))
			break;
	if (k == sizeof dts / sizeof dts[0])
		return merr(L, v, "weight '%s' has unsupported dtype \"%.40s\"",
			    w->name, v->str);
	w->kind = dts[k].kind;
	w->dtype = dts[k].dtype;
	w->vsize = dts[k].size;

	v = ge_json_get(s, "shape");
	if (!v || v->type != GE_JSON_ARRAY)
		return merr(L, v ? v : s, "weight '%s' has no shape (an array)",
			    w->name);
	if (v->n > 64)
		return merr(L, v, "weight '%s' has %zu dimensions", w->name,
			    v->n);
	w->rank = (int)v->n;
	w->shape = ge_arena_alloc(a, (v->n ? v->n : 1) * sizeof *w->shape);
	w->numel = 1;
	int overflow = 0, empty = 0;
	for (size_t i = 0; i < v->n; i++) {
		int64_t d;
		if (ge_json_int64(&v->kids[i], &d) || d < 0)
			return merr(L, &v->kids[i], "weight '%s': dimension %zu "
				    "is not a non-negative integer", w->name, i);
		w->shape[i] = d;
		empty |= d == 0;
		if ((uint64_t)d > SIZE_MAX ||
		    __builtin_mul_overflow(w->numel, (size_t)d, &w->numel))
			overflow = 1;
	}
	if (empty)
		w->numel = 0;
	else if (overflow)
		return merr(L, v, "weight '%s': shape is too large", w->name);

	const ge_json *q = ge_json_get(s, "quantization");
	if (q && q->type != GE_JSON_NULL) {
		if (q->type != GE_JSON_OBJECT)
			return merr(L, q, "weight '%s': quantization is not an "
				    "object", w->name);
		v = ge_json_get(q, "dtype");
		if (!v || v->type != GE_JSON_STRING)
			return merr(L, v ? v : q, "weight '%s': quantization "
				    "has no dtype", w->name);
		int rc;
		if (!strcmp(v->str, "uint8") || !strcmp(v->str, "uint16")) {
			w->store = v->str[4] == '8' ? S_UINT8 : S_UINT16;
			if (w->kind != K_FLOAT && w->kind != K_INT)
				return merr(L, v, "weight '%s': %s cannot be "
					    "quantized", w->name, w->dtype_name);
			if ((rc = spec_number(L, w, q, "scale", &w->scale)) ||
			    (rc = spec_number(L, w, q, "min", &w->min)))
				return rc;
		} else if (!strcmp(v->str, "float16")) {
			w->store = S_FLOAT16;
			if (w->kind != K_FLOAT || w->dtype !=
			    TENSORFLOW__DATA_TYPE__DT_FLOAT)
				return merr(L, v, "weight '%s': float16 "
					    "quantization of %s", w->name,
					    w->dtype_name);
		} else {
			return merr(L, v, "weight '%s': unknown quantization "
				    "dtype \"%.40s\"", w->name, v->str);
		}
		L->info.n_quantized++;
	}
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

static int read_group(loader *L, group *g, const char *dir)
{
	const ge_json *paths = g->paths;
	ge_buf all = GE_BUF_INIT;
	for (size_t i = 0; i < paths->n; i++) {
		const ge_json *p = &paths->kids[i];
		ge_error e;
		if (p->type != GE_JSON_STRING || !p->len ||
		    memchr(p->str, 0, p->len)) {
			ge_buf_free(&all);
			return merr(L, p, "weights path is not a file name");
		}
		if (p->str[0] == '/' || strstr(p->str, "://")) {
			ge_buf_free(&all);
			return merr(L, p, "weights path \"%.200s\" is not relative "
				    "to the model.json", p->str);
		}
		free(g->last_path);
		g->last_path = ge_xmalloc(strlen(dir) + p->len + 1);
		memcpy(g->last_path, dir, strlen(dir));
		memcpy(g->last_path + strlen(dir), p->str, p->len + 1);
		uint8_t *d;
		size_t n;
		if (ge_file_read(g->last_path, &d, &n, &e)) {
			ge_buf_free(&all);
			return ge_err(L->err, e.code, "%s: weights file %s",
				      L->name, e.msg);
		}
		L->info.weight_bytes += n;
		if (paths->n == 1) {
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

static int read_manifest(loader *L, const ge_json *man, ge_arena *a)
{
	int rc;
	if (!man || man->type == GE_JSON_NULL)
		return GE_OK;
	if (man->type != GE_JSON_ARRAY)
		return merr(L, man, "weightsManifest is %s, not an array",
			    ge_json_type_name(man->type));
	size_t total = 0;
	for (size_t i = 0; i < man->n; i++) {
		const ge_json *ws = ge_json_get(&man->kids[i], "weights");
		if (man->kids[i].type != GE_JSON_OBJECT || !ws ||
		    ws->type != GE_JSON_ARRAY)
			return merr(L, &man->kids[i], "weightsManifest group %zu "
				    "has no \"weights\" array", i);
		const ge_json *ps = ge_json_get(&man->kids[i], "paths");
		if (!ps || ps->type != GE_JSON_ARRAY)
			return merr(L, &man->kids[i], "weightsManifest group %zu "
				    "has no \"paths\" array", i);
		total += ws->n;
	}
	L->g = ge_xcalloc(man->n ? man->n : 1, sizeof *L->g);
	L->ng = man->n;
	L->w = ge_xcalloc(total ? total : 1, sizeof *L->w);
	for (size_t i = 0; i < man->n; i++) {
		const ge_json *ws = ge_json_get(&man->kids[i], "weights");
		L->g[i].paths = ge_json_get(&man->kids[i], "paths");
		L->g[i].first = L->nw;
		for (size_t k = 0; k < ws->n; k++) {
			weight *w = &L->w[L->nw];
			if ((rc = read_spec(L, &ws->kids[k], w, a)))
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
	const ge_json *ps = L->g[w->group].paths;
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; ps && i < ps->n && o < n; i++)
		if (ps->kids[i].type == GE_JSON_STRING)
			o += (size_t)snprintf(buf + o, n - o, "%s%s",
					      i ? ", " : "", ps->kids[i].str);
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
	if (!w || !w->data) {
		if (old && tensor_has_data(old))
			return GE_OK;
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
static int map_topology(loader *L, const ge_json *topo,
			Tensorflow__GraphDef **out)
{
	ProtobufCMessage *m;
	ge_json rest = *topo;
	const ge_json *nodes = NULL;
	int rc;
	*out = NULL;
	rest.kids = ge_xcalloc(topo->n ? topo->n : 1, sizeof *rest.kids);
	rest.n = 0;
	for (size_t i = 0; i < topo->n; i++) {
		const ge_json *k = &topo->kids[i];
		if (k->key_len == 4 && !memcmp(k->key, "node", 4)) {
			if (nodes) {
				free(rest.kids);
				return merr(L, k, "modelTopology has more than "
					    "one \"node\" member");
			}
			nodes = k;
		} else {
			rest.kids[rest.n++] = *k;
		}
	}
	rc = ge_jsonpb_from_json(&rest, &tensorflow__graph_def__descriptor,
				 L->name, GE_JSONPB_IGNORE_UNKNOWN, &m, L->err);
	free(rest.kids);
	if (rc) {
		err_insert(L->err, L->name, "modelTopology");
		return rc;
	}
	Tensorflow__GraphDef *gd = (Tensorflow__GraphDef *)m;
	*out = gd;
	if (!nodes || nodes->type == GE_JSON_NULL)
		return GE_OK;
	if (nodes->type != GE_JSON_ARRAY)
		return merr(L, nodes, "modelTopology.node is %s, not an array",
			    ge_json_type_name(nodes->type));
	gd->node = ge_xcalloc(nodes->n ? nodes->n : 1, sizeof *gd->node);
	for (size_t i = 0; i < nodes->n; i++) {
		const ge_json *nj = &nodes->kids[i];
		rc = ge_jsonpb_from_json(nj, &tensorflow__node_def__descriptor,
					 L->name, GE_JSONPB_IGNORE_UNKNOWN, &m,
					 L->err);
		if (rc) {
			const ge_json *nm = ge_json_get(nj, "name");
			char what[300];
			if (nm && nm->type == GE_JSON_STRING)
				snprintf(what, sizeof what, "node '%.250s'",
					 nm->str);
			else
				snprintf(what, sizeof what, "node %zu", i);
			err_insert(L->err, L->name, what);
			return rc;
		}
		gd->node[gd->n_node++] = (Tensorflow__NodeDef *)m;
	}
	return GE_OK;
}

int ge_tfjs_parse_info(const uint8_t *data, size_t len, const char *name,
		       ge_graph **out, ge_tfjs_info *info, ge_error *err)
{
	loader L;
	ge_json_doc *doc = NULL;
	Tensorflow__GraphDef *gd = NULL;
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

	rc = ge_json_parse((const char *)data, len, name, &doc, err);
	if (rc)
		return rc;
	const ge_json *root = doc->root, *topo, *fmt;
	if (root->type != GE_JSON_OBJECT) {
		rc = merr(&L, root, "a model.json is an object, not %s",
			  ge_json_type_name(root->type));
		goto out;
	}
	fmt = ge_json_get(root, "format");
	topo = ge_json_get(root, "modelTopology");
	if (fmt && fmt->type == GE_JSON_STRING &&
	    strcmp(fmt->str, "graph-model") != 0) {
		rc = merr(&L, fmt, "format \"%.60s\" is not a TensorFlow.js "
			  "graph model%s", fmt->str,
			  !strcmp(fmt->str, "layers-model")
				  ? " (Keras layers models are not supported)"
				  : "");
		goto out;
	}
	if (!topo || topo->type != GE_JSON_OBJECT) {
		rc = merr(&L, topo ? topo : root, "modelTopology is %s, not a "
			  "GraphDef object", topo ? ge_json_type_name(topo->type)
						  : "missing");
		goto out;
	}
	if (!ge_json_get(topo, "node") && (ge_json_get(topo, "class_name") ||
					   ge_json_get(topo, "model_config"))) {
		rc = merr(&L, topo, "modelTopology is a Keras model, not a "
			  "GraphDef (layers models are not supported)");
		goto out;
	}
	if ((rc = map_topology(&L, topo, &gd)))
		goto out;
	if ((rc = read_manifest(&L, ge_json_get(root, "weightsManifest"),
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
	rc = ge_graph_parse_graphdef_buf(buf, sz, 1, name, out, err);
	if (!rc) {
		(*out)->format = GE_FMT_TFJS;
		if (info)
			*info = L.info;
	}
out:
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
	ge_json_free(doc);
	return rc;
}

int ge_tfjs_parse(const uint8_t *data, size_t len, const char *name,
		  ge_graph **out, ge_error *err)
{
	return ge_tfjs_parse_info(data, len, name, out, NULL, err);
}
