/*
 * shapes.c: the shape inference driver (shapes.h): topological order, the
 * cache on the graph, loops, `_output_shapes`, statistics.  The per-op
 * rules live in shapes_ops.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "graph/graph_impl.h"
#include "analyses/shapes_impl.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

typedef struct oshape {
	int32_t rank;
	int32_t dtype;
	uint32_t d;           /* dims at pool[d] */
	int32_t nv;           /* followed values at pool[v], or -1 */
	uint32_t v;
	uint8_t reason;
	uint8_t done;         /* computed in some pass */
} oshape;

/* Outputs tracked per op: an op that declares more (a Split with a
 * million outputs) has none tracked, and all its outputs are unknown. */
#define SH_MAXOUT 4096

struct ge_shapes {
	uint64_t version;
	int valid;
	size_t nops;
	uint32_t *first;      /* tracked outputs of op i: o[first[i] ..
				 first[i+1]) */
	uint8_t *untracked;   /* per op: its outputs were not tracked */
	size_t maxpool;       /* pool entries the memory budget allows */
	oshape *o;
	int64_t *pool;
	size_t npool, cappool;
	ge_buf nofn;          /* "Type:count," */
	ge_buf problems;      /* validate lines */
	size_t nproblems, contradictions;
	char *error;          /* first op whose shape cannot hold */
	ge_shape_stats st;
	/* input overrides */
	char **in_names;
	sh *in_shapes;
	size_t n_in;
};

static void cache_free(void *p)
{
	struct ge_shapes *c = p;
	if (!c)
		return;
	free(c->first);
	free(c->untracked);
	free(c->o);
	free(c->pool);
	ge_buf_free(&c->nofn);
	ge_buf_free(&c->problems);
	free(c->error);
	for (size_t i = 0; i < c->n_in; i++)
		free(c->in_names[i]);
	free(c->in_names);
	free(c->in_shapes);
	free(c);
}

static void hook_free(ge_graph *g)
{
	cache_free(g->shapes);
	g->shapes = NULL;
}

/* A clone starts without a cache; the hook only frees. */
static const ge_graph_hooks shapes_hooks = {.free = hook_free};

static struct ge_shapes *cache_of(ge_graph *g)
{
	if (!g->shapes) {
		g->shapes = ge_xcalloc(1, sizeof(struct ge_shapes));
		ge_graph_add_hooks(g, &shapes_hooks);
	}
	return g->shapes;
}

/* ------------------------------------------------------------ shapes */

int ge_sh_merge(sh *a, const sh *b)
{
	if (b->rank < 0)
		return 0;
	if (a->rank < 0) {
		*a = *b;
		return 0;
	}
	if (a->rank != b->rank)
		return -1;
	for (int i = 0; i < a->rank; i++) {
		if (b->d[i] < 0)
			continue;
		if (a->d[i] >= 0 && a->d[i] != b->d[i])
			return -1;
		a->d[i] = b->d[i];
	}
	return 0;
}

void ge_sh_relax(sh *a, const sh *b)
{
	if (a->rank < 0)
		return;
	if (b->rank < 0 || a->rank != b->rank) {
		a->rank = -1;
		return;
	}
	for (int i = 0; i < a->rank; i++)
		if (a->d[i] != b->d[i])
			a->d[i] = -1;
}

int ge_sh_broadcast(const sh *a, const sh *b, sh *out)
{
	if (a->rank < 0 || b->rank < 0) {
		out->rank = -1;
		return 0;
	}
	int r = a->rank > b->rank ? a->rank : b->rank;
	out->rank = r;
	for (int i = 0; i < r; i++) {
		int ia = a->rank - r + i, ib = b->rank - r + i;
		int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
		int64_t z;
		if (x < 0 || y < 0) {
			int64_t k = x < 0 ? y : x;
			z = k > 1 ? k : -1;
			if (k == 1)
				z = x < 0 ? x : y;
		} else if (x == y || y == 1) {
			z = x;
		} else if (x == 1) {
			z = y;
		} else {
			return -1;
		}
		out->d[i] = z;
	}
	return 0;
}

void ge_shape_format(ge_buf *b, int rank, const int64_t *dims)
{
	if (rank < 0) {
		ge_buf_adds(b, "<unknown>");
		return;
	}
	ge_buf_addc(b, '[');
	for (int i = 0; i < rank; i++) {
		if (i)
			ge_buf_addc(b, ',');
		if (dims[i] < 0)
			ge_buf_addc(b, '?');
		else
			ge_buf_printf(b, "%lld", (long long)dims[i]);
	}
	ge_buf_addc(b, ']');
}

int ge_shape_parse(const char *s, int64_t *dims, int cap)
{
	if (!strcmp(s, "*"))
		return -1;
	int r = 0;
	if (!*s)
		return 0;
	for (;;) {
		int64_t v;
		if (*s == '?') {
			v = -1;
			s++;
		} else {
			char *end;
			errno = 0;
			long long x = strtoll(s, &end, 10);
			if (end == s || errno || x < -1)
				return -2;
			v = x;
			s = end;
		}
		if (r >= cap)
			return -2;
		dims[r++] = v;
		if (!*s)
			return r;
		if (*s != 'x' && *s != 'X' && *s != ',')
			return -2;
		s++;
	}
}

/* ------------------------------------------------------------ raw attrs */

/* Finds the first field `num` of a message; returns its payload (length
 * delimited) or, for varints, stores the value in *v. */
const uint8_t *ge_sh_pb_find(const uint8_t *p, const uint8_t *end,
			      uint32_t num, size_t *len, uint64_t *v)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (f.num != num)
			continue;
		if (f.wt == GE_WT_VARINT) {
			*v = f.v;
			*len = 0;
			return w.p;
		}
		if (f.wt == GE_WT_LEN) {
			*len = f.len;
			return f.data;
		}
	}
	return NULL;
}

/* TensorShapeProto bytes into s. */
void ge_sh_shape_raw(const uint8_t *p, size_t n, sh *s)
{
	ge_wire w = ge_wire_of(p, n);
	ge_wire_field f;
	s->rank = 0;
	while (ge_wire_next(&w, &f)) {
		if (f.num == GE_SHAPE_UNKNOWN_RANK && f.wt == GE_WT_VARINT) {
			if (f.v) {
				s->rank = -1;
				return;
			}
			continue;
		}
		if (ge_wire_is_len(&f, GE_SHAPE_DIM)) {
			size_t dl;
			uint64_t size = 0;
			if (!ge_sh_pb_find(f.data, f.data + f.len, GE_DIM_SIZE, &dl,
					&size))
				size = 0;
			if (s->rank >= GE_SHAPE_MAXRANK)
				goto bad;
			int64_t d = (int64_t)size;
			s->d[s->rank++] = d < 0 ? -1 : d;
		}
	}
	if (!w.bad)
		return;
bad:
	s->rank = -1;
}

static const uint8_t *attr_raw(shctx *c, const char *name, size_t *len)
{
	return ge_op_attr_raw(c->g, c->id, name, len);
}

int64_t ge_sh_attr_int(shctx *c, const char *name, int64_t def)
{
	size_t len, l;
	uint64_t v = 0;
	const uint8_t *p = attr_raw(c, name, &len);
	if (!p)
		return def;
	if (ge_sh_pb_find(p, p + len, GE_ATTR_I, &l, &v) ||
	    ge_sh_pb_find(p, p + len, GE_ATTR_B, &l, &v) ||
	    ge_sh_pb_find(p, p + len, GE_ATTR_TYPE, &l, &v))
		return (int64_t)v;
	return def;
}

int ge_sh_attr_ints(shctx *c, const char *name, int64_t *out, int cap)
{
	size_t len, l;
	uint64_t v;
	const uint8_t *p = attr_raw(c, name, &len);
	if (!p)
		return -1;
	const uint8_t *lp = ge_sh_pb_find(p, p + len, GE_ATTR_LIST, &l, &v);
	if (!lp)
		return -1;
	ge_wire w = ge_wire_of(lp, l);
	ge_wire_field f;
	int n = 0;
	while (ge_wire_next(&w, &f)) {
		if (f.num != GE_ATTRLIST_I)
			continue;
		if (f.wt == GE_WT_LEN) { /* packed */
			const uint8_t *q = f.data, *pe = f.data + f.len;
			while (q < pe) {
				if (ge_read_varint(&q, pe, &v) || n >= cap)
					return -1;
				out[n++] = (int64_t)v;
			}
		} else if (f.wt == GE_WT_VARINT) {
			if (n >= cap)
				return -1;
			out[n++] = (int64_t)f.v;
		}
	}
	return w.bad ? -1 : n;
}

int ge_sh_attr_str_is(shctx *c, const char *name, const char *s, int def)
{
	size_t len, l;
	uint64_t v;
	const uint8_t *p = attr_raw(c, name, &len);
	if (!p)
		return def;
	const uint8_t *sp = ge_sh_pb_find(p, p + len, GE_ATTR_S, &l, &v);
	if (!sp)
		return def;
	return l == strlen(s) && !memcmp(sp, s, l);
}

int ge_sh_attr_shape(shctx *c, const char *name, sh *s)
{
	return ge_sh_op_attr_shape(c->g, c->id, name, s);
}

int ge_sh_op_attr_shape(ge_graph *g, ge_opid id, const char *name, sh *s)
{
	size_t len, l;
	uint64_t v;
	const uint8_t *p = ge_op_attr_raw(g, id, name, &len);
	if (!p)
		return -1;
	const uint8_t *sp = ge_sh_pb_find(p, p + len, GE_ATTR_SHAPE, &l, &v);
	if (!sp)
		return -1;
	ge_sh_shape_raw(sp, l, s);
	return 0;
}

void ge_sh_fail(shctx *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ inputs */

static const oshape *out_of(struct ge_shapes *s, ge_tref t)
{
	if (t.op == GE_NOOP || t.index < 0 || t.op >= s->nops)
		return NULL;
	if ((uint32_t)t.index >= s->first[t.op + 1] - s->first[t.op])
		return NULL;
	uint32_t k = s->first[t.op] + (uint32_t)t.index;
	return &s->o[k];
}

static const oshape *in_out(shctx *c, int i)
{
	if (i < 0 || i >= c->nin)
		return NULL;
	const oshape *o = out_of(c->c, ge_op_input(c->g, c->id, (size_t)i));
	return o && o->done ? o : NULL;
}

void ge_sh_in(shctx *c, int i, sh *s)
{
	const oshape *o = in_out(c, i);
	if (!o || o->rank < 0) {
		s->rank = -1;
		return;
	}
	s->rank = o->rank;
	if (o->rank)
		memcpy(s->d, c->c->pool + o->d,
		       (size_t)o->rank * sizeof s->d[0]);
}

int ge_sh_in_val(shctx *c, int i, shval *v)
{
	const oshape *o = in_out(c, i);
	if (!o || o->nv < 0) {
		v->n = -1;
		c->reason = GE_SHAPE_DATA;
		return 0;
	}
	v->n = o->nv;
	if (o->nv)
		memcpy(v->v, c->c->pool + o->v, (size_t)o->nv * sizeof v->v[0]);
	return 1;
}

int ge_sh_in_scalar(shctx *c, int i, int64_t *x)
{
	shval v;
	if (!ge_sh_in_val(c, i, &v) || v.n != 1 || v.v[0] == SH_UNK) {
		c->reason = GE_SHAPE_DATA;
		return 0;
	}
	*x = v.v[0];
	return 1;
}

int ge_sh_out_shape(shctx *c, ge_tref t, sh *s)
{
	const oshape *o = out_of(c->c, t);
	if (!o || !o->done || o->rank < 0) {
		s->rank = -1;
		return 0;
	}
	s->rank = o->rank;
	if (o->rank)
		memcpy(s->d, c->c->pool + o->d,
		       (size_t)o->rank * sizeof s->d[0]);
	return 1;
}

int ge_sh_in_done(shctx *c, int i)
{
	return in_out(c, i) != NULL;
}

int ge_sh_in_dtype(shctx *c, int i)
{
	const oshape *o = in_out(c, i);
	return o ? o->dtype : 0;
}

/* ------------------------------------------------------------ driver */

/* Stores n dims or values in the pool; UINT32_MAX when the pool has
 * reached what the memory budget allows (the caller leaves the shape
 * unknown). */
static uint32_t pool_put(struct ge_shapes *s, const int64_t *x, size_t n)
{
	if (s->npool + n > s->maxpool)
		return UINT32_MAX;
	if (s->npool + n > s->cappool) {
		size_t cap = s->cappool ? s->cappool * 2 : 1024;
		while (cap < s->npool + n)
			cap *= 2;
		s->pool = ge_xrealloc(s->pool, cap * sizeof *s->pool);
		s->cappool = cap;
	}
	uint32_t at = (uint32_t)s->npool;
	if (n)
		memcpy(s->pool + at, x, n * sizeof *x);
	s->npool += n;
	return at;
}

static int is_type(const char *t, const char *a)
{
	return t[0] == a[0] && !strcmp(t, a);
}

/* What inference needs to know of an op type, looked up once per type:
 * op types are interned by the graph, so the pointer is the key. */
enum { TY_PLACEHOLDER = 1, TY_NEXTITER = 2, TY_MERGE = 4 };
typedef struct tyinfo {
	const char *type;
	shape_fn fn;
	const Tensorflow__OpDef *def;
	int simple_out;   /* every output arg is one tensor of a fixed or
			     attr-given type: dtype read from the raw attr */
	uint8_t flags;
} tyinfo;

#define TYCACHE 512
static tyinfo tycache[TYCACHE];
static const ge_graph *tycache_graph;

static const tyinfo *ty(const ge_graph *g, const char *t)
{
	if (tycache_graph != g) {
		memset(tycache, 0, sizeof tycache);
		tycache_graph = g;
	}
	size_t h = ((uintptr_t)t >> 3) & (TYCACHE - 1);
	for (size_t i = 0; i < TYCACHE; i++, h = (h + 1) & (TYCACHE - 1)) {
		tyinfo *e = &tycache[h];
		if (e->type == t)
			return e;
		if (e->type)
			continue;
		e->type = t;
		e->fn = ge_shape_fn_find(t);
		e->def = ge_graph_opdef(g, t);
		e->flags = (is_type(t, "Placeholder") || is_type(t, "PlaceholderV2"))
				   ? TY_PLACEHOLDER
			   : is_type(t, "NextIteration") ? TY_NEXTITER
			   : (is_type(t, "Merge") || is_type(t, "RefMerge"))
				   ? TY_MERGE
				   : 0;
		e->simple_out = e->def != NULL;
		for (size_t k = 0; e->def && k < e->def->n_output_arg; k++) {
			const Tensorflow__OpDef__ArgDef *a = e->def->output_arg[k];
			if ((a->number_attr && *a->number_attr) ||
			    (a->type_list_attr && *a->type_list_attr))
				e->simple_out = 0;
		}
		return e;
	}
	/* a full table (more types than any graph has): no caching */
	static tyinfo tmp;
	tmp.type = t;
	tmp.fn = ge_shape_fn_find(t);
	tmp.def = ge_graph_opdef(g, t);
	tmp.simple_out = 0;
	tmp.flags = 0;
	return &tmp;
}

/* Output k's dtype from the raw type attr where the OpDef is simple. */
static int out_dtype(ge_graph *g, ge_opid id, const tyinfo *ti, int k)
{
	if (!ti->simple_out || (size_t)k >= ti->def->n_output_arg)
		return ge_op_output_dtype(g, id, k);
	const Tensorflow__OpDef__ArgDef *a = ti->def->output_arg[k];
	if (a->type)
		return a->type;
	size_t len, l;
	uint64_t v;
	const uint8_t *p = a->type_attr && *a->type_attr
				   ? ge_op_attr_raw(g, id, a->type_attr, &len)
				   : NULL;
	if (p && ge_sh_pb_find(p, p + len, GE_ATTR_TYPE, &l, &v))
		return (int)v;
	return ge_op_output_dtype(g, id, k);
}

/* `_output_shapes`: recorded shapes fill what inference left unknown; a
 * contradiction keeps the inferred shape and is reported. */
static void apply_recorded(shctx *c, int pass_final)
{
	size_t len, l;
	uint64_t v;
	const uint8_t *p = attr_raw(c, "_output_shapes", &len);
	if (!p)
		return;
	const uint8_t *lp = ge_sh_pb_find(p, p + len, GE_ATTR_LIST, &l, &v);
	if (!lp)
		return;
	ge_wire w = ge_wire_of(lp, l);
	ge_wire_field f;
	int k = 0;
	while (k < c->nout && ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, GE_ATTRLIST_SHAPE))
			continue;
		sh rec, mine = c->out[k];
		ge_sh_shape_raw(f.data, f.len, &rec);
		if (ge_sh_merge(&mine, &rec) == 0) {
			c->out[k] = mine;
		} else if (pass_final) {
			ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
			ge_shape_format(&a, rec.rank, rec.d);
			ge_shape_format(&b, c->out[k].rank, c->out[k].d);
			ge_buf_printf(&c->c->problems,
				      "op '%s' (%s): _output_shapes[%d] %s "
				      "contradicts the inferred shape %s\n",
				      ge_op_name(c->g, c->id), c->type, k,
				      (char *)a.data, (char *)b.data);
			c->c->contradictions++;
			c->c->nproblems++;
			ge_buf_free(&a);
			ge_buf_free(&b);
		}
		k++;
	}
}

static void placeholder_override(shctx *c)
{
	struct ge_shapes *s = c->c;
	const char *name = ge_op_name(c->g, c->id);
	for (size_t i = 0; i < s->n_in; i++)
		if (!strcmp(s->in_names[i], name)) {
			c->out[0] = s->in_shapes[i];
			return;
		}
}

static int shape_complete(const sh *s)
{
	return sh_numel(s) >= 0;
}

/* An output whose type attr is not set (an op added without `T`) has the
 * dtype of the input that shares the attr, as TensorFlow infers it when an
 * op is built. */
static int dtype_from_inputs(ge_graph *g, struct ge_shapes *s, ge_opid id,
			     int k)
{
	const Tensorflow__OpDef *d = ge_graph_opdef(g, ge_op_type(g, id));
	if (!d)
		return 0;
	const char *attr = NULL;
	int base = 0;
	for (size_t i = 0; i < d->n_output_arg && !attr; i++) {
		const Tensorflow__OpDef__ArgDef *a = d->output_arg[i];
		if (a->type_list_attr && *a->type_list_attr)
			return 0;
		int64_t cnt = 1;
		if (a->number_attr && *a->number_attr &&
		    ge_op_attr_int(g, id, a->number_attr, &cnt))
			return 0;
		if (k < base + cnt)
			attr = a->type_attr;
		base += (int)cnt;
	}
	if (!attr || !*attr)
		return 0;
	size_t pos = 0, nin = ge_op_num_inputs(g, id);
	for (size_t i = 0; i < d->n_input_arg; i++) {
		const Tensorflow__OpDef__ArgDef *a = d->input_arg[i];
		if (a->type_list_attr && *a->type_list_attr)
			return 0;
		if (a->type_attr && !strcmp(a->type_attr, attr) && pos < nin) {
			const oshape *o = out_of(s, ge_op_input(g, id, pos));
			return o && o->done ? o->dtype : 0;
		}
		int64_t cnt = 1;
		if (a->number_attr && *a->number_attr &&
		    ge_op_attr_int(g, id, a->number_attr, &cnt))
			cnt = (int64_t)nin - (int64_t)pos; /* the rest */
		pos += (size_t)cnt;
	}
	return 0;
}

/* Infers one op; returns 1 if anything of its outputs changed. */
static int infer_op(ge_graph *g, struct ge_shapes *s, ge_opid id, int final,
		    sh *outs, shval *vals)
{
	shctx c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.c = s;
	c.id = id;
	c.type = ge_op_type(g, id);
	c.nin = (int)ge_op_num_inputs(g, id);
	c.nout = (int)(s->first[id + 1] - s->first[id]);
	c.out = outs;
	c.val = vals;
	for (int k = 0; k < c.nout; k++) {
		outs[k].rank = -1;
		vals[k].n = -1;
	}
	const tyinfo *ti = ty(g, c.type);
	shape_fn fn = ti->fn;
	int nofn = !fn;
	if (fn && !s->untracked[id])
		fn(&c);
	if (c.failed) {
		for (int k = 0; k < c.nout; k++) {
			outs[k].rank = -1;
			vals[k].n = -1;
		}
	}
	if ((ti->flags & TY_PLACEHOLDER) && s->n_in)
		placeholder_override(&c);
	apply_recorded(&c, final);
	if (c.failed && final) {
		ge_buf_printf(&s->problems, "op '%s' (%s): %s\n",
			      ge_op_name(g, id), c.type, c.msg);
		s->nproblems++;
		if (!s->error) {
			char *m = ge_xmalloc(strlen(c.msg) + 512);
			sprintf(m, "%s: op '%.200s' (%.100s): %s", g->name,
				ge_op_name(g, id), c.type, c.msg);
			s->error = m;
		}
	}
	int changed = 0;
	for (int k = 0; k < c.nout; k++) {
		oshape *o = &s->o[s->first[id] + (uint32_t)k];
		const sh *x = &outs[k];
		int same = o->done && o->rank == x->rank &&
			   (x->rank <= 0 ||
			    !memcmp(s->pool + o->d, x->d,
				    (size_t)x->rank * sizeof x->d[0]));
		if (!same) {
			changed = 1;
			o->rank = x->rank;
			o->d = x->rank > 0 ? pool_put(s, x->d, (size_t)x->rank) : 0;
			if (o->d == UINT32_MAX) {
				o->rank = -1;
				o->d = 0;
				outs[k].rank = -1;
			}
		}
		o->nv = -1;
		if (vals[k].n >= 0 && vals[k].n <= SH_MAXV) {
			o->nv = vals[k].n;
			o->v = pool_put(s, vals[k].v, (size_t)vals[k].n);
			if (o->v == UINT32_MAX) {
				o->nv = -1;
				o->v = 0;
			}
		}
		if (!o->done)
			o->dtype = out_dtype(g, id, ti, k);
		if (!o->dtype)
			o->dtype = dtype_from_inputs(g, s, id, k);
		o->done = 1;
		o->reason = shape_complete(x) ? GE_SHAPE_KNOWN
			    : c.failed	      ? GE_SHAPE_ERROR
			    : nofn	      ? GE_SHAPE_NOFN
			    : c.reason	      ? (uint8_t)c.reason
					      : GE_SHAPE_INPUT;
	}
	return changed;
}

/* Node order is not always an execution order: Kahn's algorithm over data
 * edges, with NextIteration's back edges left out as TensorFlow does. */
ge_opid *ge_shapes_topo_order(ge_graph *g, size_t *n_out)
{
	/* the type cache is keyed by interned pointers of one graph: start
	 * afresh for every pass (another graph may sit at the same address) */
	tycache_graph = NULL;
	size_t cap = ge_graph_capacity(g);
	uint32_t *deg = ge_xcalloc(cap ? cap : 1, sizeof *deg);
	ge_opid *order = ge_xmalloc((cap ? cap : 1) * sizeof *order);
	uint8_t *placed = ge_xcalloc(cap ? cap : 1, 1);
	size_t n = 0, head = 0;
	for (size_t i = 0; i < cap; i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		size_t k = ge_op_num_inputs(g, (ge_opid)i);
		for (size_t j = 0; j < k; j++) {
			ge_tref t = ge_op_input(g, (ge_opid)i, j);
			if (t.op == GE_NOOP || t.op == i ||
			    (ty(g, ge_op_type(g, t.op))->flags & TY_NEXTITER))
				continue;
			deg[i]++;
		}
		if (!deg[i]) {
			order[n++] = (ge_opid)i;
			placed[i] = 1;
		}
	}
	while (head < n) {
		ge_opid id = order[head++];
		if (ty(g, ge_op_type(g, id))->flags & TY_NEXTITER)
			continue;
		size_t nu;
		const ge_use *u = ge_op_uses(g, id, &nu);
		for (size_t j = 0; j < nu; j++) {
			ge_opid d = u[j].op;
			if (d == id || placed[d] || !deg[d])
				continue;
			if (--deg[d] == 0) {
				order[n++] = d;
				placed[d] = 1;
			}
		}
	}
	for (size_t i = 0; i < cap; i++)
		if (!placed[i] && ge_op_alive(g, (ge_opid)i))
			order[n++] = (ge_opid)i;
	free(deg);
	free(placed);
	*n_out = n;
	return order;
}

static void note_nofn(struct ge_shapes *s, ge_graph *g, const ge_opid *order,
		      size_t n)
{
	/* counted per type, reported in first-seen order */
	const char **types = NULL;
	size_t *counts = NULL, nt = 0;
	for (size_t i = 0; i < n; i++) {
		ge_opid id = order[i];
		uint32_t k = s->first[id];
		if (k == s->first[id + 1] || s->o[k].reason != GE_SHAPE_NOFN)
			continue;
		const char *t = ge_op_type(g, id);
		size_t j = 0;
		while (j < nt && types[j] != t)
			j++;
		if (j == nt) {
			types = ge_xrealloc(types, (nt + 1) * sizeof *types);
			counts = ge_xrealloc(counts, (nt + 1) * sizeof *counts);
			types[nt] = t;
			counts[nt++] = 0;
		}
		counts[j]++;
	}
	for (size_t j = 0; j < nt; j++)
		ge_buf_printf(&s->nofn, "%s%s:%zu", j ? "," : "", types[j],
			      counts[j]);
	ge_buf_addc(&s->nofn, 0);
	s->nofn.len--;
	free(types);
	free(counts);
}

static void compute_stats(struct ge_shapes *s, ge_graph *g)
{
	ge_shape_stats *st = &s->st;
	memset(st, 0, sizeof *st);
	for (size_t i = 0; i < s->nops; i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		for (uint32_t k = s->first[i]; k < s->first[i + 1]; k++) {
			const oshape *o = &s->o[k];
			st->outputs++;
			if (o->reason == GE_SHAPE_KNOWN) {
				st->known++;
				continue;
			}
			if (o->rank < 0)
				st->unknown_rank++;
			else
				st->partial++;
			st->by_reason[o->reason]++;
		}
	}
	st->contradictions = s->contradictions;
	st->nofn_types = s->nofn.data ? (const char *)s->nofn.data : "";
}

static int loops_changed(ge_graph *g, struct ge_shapes *s, const ge_opid *ord,
			 size_t n, sh *outs, shval *vals)
{
	int changed = 0;
	for (size_t i = 0; i < n; i++) {
		ge_opid id = ord[i];
		const char *t = ge_op_type(g, id);
		if (!(ty(g, t)->flags & TY_MERGE))
			continue;
		size_t k = ge_op_num_inputs(g, id);
		for (size_t j = 0; j < k; j++) {
			ge_tref in = ge_op_input(g, id, j);
			if (in.op != GE_NOOP &&
			    (ty(g, ge_op_type(g, in.op))->flags & TY_NEXTITER)) {
				changed |= infer_op(g, s, id, 0, outs, vals);
				break;
			}
		}
	}
	return changed;
}

/* Lays out the tracked outputs: at most SH_MAXOUT per op, and in all
 * what a quarter of the memory budget holds (records and their dims
 * share it); an op past either limit has no output tracked.  Returns the
 * most outputs of one op. */
static int layout(ge_graph *g, struct ge_shapes *s, size_t cap)
{
	uint64_t budget = ge_max_memory() / 4;
	uint64_t maxo = budget / 2 / sizeof(oshape);
	if (maxo > UINT32_MAX / 2)
		maxo = UINT32_MAX / 2;
	s->maxpool = (size_t)(budget / 2 / sizeof(int64_t));
	if (s->maxpool > UINT32_MAX / 2)
		s->maxpool = UINT32_MAX / 2;
	free(s->first);
	free(s->untracked);
	s->first = ge_xmalloc((cap + 1) * sizeof *s->first);
	s->untracked = ge_xcalloc(cap ? cap : 1, 1);
	uint64_t tot = 0;
	int maxout = 1;
	for (size_t i = 0; i < cap; i++) {
		s->first[i] = (uint32_t)tot;
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		int k = ge_op_num_outputs(g, (ge_opid)i);
		if (k < 0 || k > SH_MAXOUT || tot + (uint64_t)k > maxo) {
			s->untracked[i] = 1;
			continue;
		}
		if (k > maxout)
			maxout = k;
		tot += (uint64_t)k;
	}
	s->first[cap] = (uint32_t)tot;
	free(s->o);
	s->o = ge_xcalloc(tot ? (size_t)tot : 1, sizeof *s->o);
	return maxout;
}

static void run(ge_graph *g, struct ge_shapes *s)
{
	size_t cap = ge_graph_capacity(g);
	s->nops = cap;
	int maxout = layout(g, s, cap);
	s->npool = 0;
	s->problems.len = 0;
	s->nofn.len = 0;
	s->nproblems = s->contradictions = 0;
	free(s->error);
	s->error = NULL;
	sh *outs = ge_xmalloc((size_t)maxout * sizeof *outs);
	shval *vals = ge_xmalloc((size_t)maxout * sizeof *vals);
	size_t n;
	ge_opid *ord = ge_shapes_topo_order(g, &n);
	/* loops: Merge first sees only its entry; passes repeat while a
	 * back edge generalizes a Merge (bounded: a Merge only relaxes) */
	int pass = 0, again = 1;
	while (again && pass < 4) {
		for (size_t i = 0; i < n; i++)
			infer_op(g, s, ord[i], 0, outs, vals);
		again = loops_changed(g, s, ord, n, outs, vals);
		pass++;
	}
	for (size_t i = 0; i < n; i++)
		infer_op(g, s, ord[i], 1, outs, vals);
	note_nofn(s, g, ord, n);
	free(ord);
	free(outs);
	free(vals);
	compute_stats(s, g);
	s->version = ge_graph_version(g);
	s->valid = 1;
}

static struct ge_shapes *fresh(ge_graph *g)
{
	struct ge_shapes *s = cache_of(g);
	if (!s->valid || s->version != ge_graph_version(g))
		run(g, s);
	return s;
}

/* ------------------------------------------------------------ API */

int ge_shapes_set_inputs(ge_graph *g, const ge_shape_input *in, size_t n,
			 ge_error *err)
{
	for (size_t i = 0; i < n; i++) {
		ge_opid id = ge_graph_find(g, in[i].name);
		if (id == GE_NOOP)
			return ge_err(err, GE_ENOTFOUND,
				      "%s: no op named '%s'", g->name,
				      in[i].name);
		const char *t = ge_op_type(g, id);
		if (strcmp(t, "Placeholder") && strcmp(t, "PlaceholderV2"))
			return ge_err(err, GE_EINVAL,
				      "%s: '%s' is a %s, not a Placeholder",
				      g->name, in[i].name, t);
		if (in[i].rank > GE_SHAPE_MAXRANK)
			return ge_err(err, GE_EINVAL,
				      "%s: shape of '%s' has too many dims",
				      g->name, in[i].name);
	}
	struct ge_shapes *s = cache_of(g);
	for (size_t i = 0; i < s->n_in; i++)
		free(s->in_names[i]);
	free(s->in_names);
	free(s->in_shapes);
	s->in_names = ge_xmalloc((n ? n : 1) * sizeof *s->in_names);
	s->in_shapes = ge_xmalloc((n ? n : 1) * sizeof *s->in_shapes);
	for (size_t i = 0; i < n; i++) {
		s->in_names[i] = ge_xstrdup(in[i].name);
		s->in_shapes[i].rank = in[i].rank < 0 ? -1 : in[i].rank;
		for (int k = 0; k < in[i].rank; k++)
			s->in_shapes[i].d[k] = in[i].dims[k] < 0 ? -1 : in[i].dims[k];
	}
	s->n_in = n;
	s->valid = 0;
	return GE_OK;
}

int ge_shapes_infer(ge_graph *g, ge_shape_stats *st, ge_error *err)
{
	struct ge_shapes *s = fresh(g);
	if (st)
		*st = s->st;
	if (s->error)
		return ge_err(err, GE_EGRAPH, "%s", s->error);
	return GE_OK;
}

static const oshape *get(ge_graph *g, ge_tref t)
{
	if (t.op == GE_NOOP || !ge_op_alive(g, t.op))
		return NULL;
	struct ge_shapes *s = fresh(g);
	return out_of(s, t);
}

int ge_shapes_get(ge_graph *g, ge_tref t, int64_t *dims, int cap)
{
	const oshape *o = get(g, t);
	if (!o || o->rank < 0)
		return -1;
	if (!o->rank)
		return 0;
	const int64_t *p = ((struct ge_shapes *)g->shapes)->pool + o->d;
	for (int i = 0; i < o->rank && i < cap; i++)
		dims[i] = p[i];
	return o->rank;
}

int ge_shapes_best(ge_graph *g, ge_tref t, int64_t *dims, int cap)
{
	int rank = ge_op_output_shape(g, t.op, t.index, dims, cap);
	int full = rank >= 0 && rank <= cap;
	for (int i = 0; full && i < rank; i++)
		if (dims[i] < 0)
			full = 0;
	if (full)
		return rank;
	int64_t tmp[GE_SHAPE_MAXRANK];
	int r2 = ge_shapes_get(g, t, tmp, GE_SHAPE_MAXRANK);
	if (r2 < 0)
		return rank;
	for (int i = 0; i < r2 && i < cap; i++)
		dims[i] = tmp[i];
	return r2;
}

int ge_shapes_dtype(ge_graph *g, ge_tref t)
{
	const oshape *o = get(g, t);
	return o ? o->dtype : 0;
}

int ge_shapes_reason(ge_graph *g, ge_tref t)
{
	const oshape *o = get(g, t);
	return o ? o->reason : GE_SHAPE_INPUT;
}

int ge_shapes_value(ge_graph *g, ge_tref t, int64_t *vals, int cap)
{
	const oshape *o = get(g, t);
	if (!o || o->nv < 0)
		return -1;
	if (!o->nv)
		return 0;
	const int64_t *p = ((struct ge_shapes *)g->shapes)->pool + o->v;
	for (int i = 0; i < o->nv && i < cap; i++)
		vals[i] = p[i];
	return o->nv;
}

size_t ge_shapes_validate(ge_graph *g, ge_buf *report)
{
	struct ge_shapes *s = fresh(g);
	if (s->problems.len)
		ge_buf_add(report, s->problems.data, s->problems.len);
	return s->nproblems;
}

size_t ge_shapes_write_attrs(ge_graph *g)
{
	struct ge_shapes *s = fresh(g);
	size_t nops = s->nops, written = 0;
	/* snapshot first: writing attrs bumps the version */
	uint32_t *first = ge_xmalloc((nops + 1) * sizeof *first);
	memcpy(first, s->first, (nops + 1) * sizeof *first);
	size_t no = first[nops];
	oshape *o = ge_xmalloc((no ? no : 1) * sizeof *o);
	memcpy(o, s->o, no * sizeof *o);
	int64_t *pool = ge_xmalloc((s->npool ? s->npool : 1) * sizeof *pool);
	if (s->npool)
		memcpy(pool, s->pool, s->npool * sizeof *pool);
	uint8_t *untracked = ge_xmalloc(nops ? nops : 1);
	memcpy(untracked, s->untracked, nops);
	for (size_t i = 0; i < nops; i++) {
		/* an op whose outputs were not tracked keeps what it had */
		if (!ge_op_alive(g, (ge_opid)i) || untracked[i])
			continue;
		size_t k = first[i + 1] - first[i];
		Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
		Tensorflow__AttrValue__ListValue l =
			TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
		Tensorflow__TensorShapeProto *sp = ge_xcalloc(k + 1, sizeof *sp);
		Tensorflow__TensorShapeProto **spp =
			ge_xcalloc(k + 1, sizeof *spp);
		Tensorflow__TensorShapeProto__Dim *dims = NULL;
		Tensorflow__TensorShapeProto__Dim **dimp = NULL;
		size_t nd = 0;
		for (size_t j = 0; j < k; j++)
			if (o[first[i] + j].rank > 0)
				nd += (size_t)o[first[i] + j].rank;
		dims = ge_xcalloc(nd + 1, sizeof *dims);
		dimp = ge_xcalloc(nd + 1, sizeof *dimp);
		size_t at = 0;
		for (size_t j = 0; j < k; j++) {
			const oshape *x = &o[first[i] + j];
			tensorflow__tensor_shape_proto__init(&sp[j]);
			spp[j] = &sp[j];
			if (x->rank < 0) {
				sp[j].unknown_rank = 1;
				continue;
			}
			sp[j].n_dim = (size_t)x->rank;
			sp[j].dim = dimp + at;
			for (int r = 0; r < x->rank; r++, at++) {
				tensorflow__tensor_shape_proto__dim__init(&dims[at]);
				dims[at].size = pool[x->d + (uint32_t)r];
				dimp[at] = &dims[at];
			}
		}
		l.n_shape = k;
		l.shape = spp;
		v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
		v.list = &l;
		ge_op_set_attr(g, (ge_opid)i, "_output_shapes", &v);
		written++;
		free(sp);
		free(spp);
		free(dims);
		free(dimp);
	}
	free(first);
	free(untracked);
	free(o);
	free(pool);
	return written;
}
