/*
 * shapes_slice.c: the two shape functions with the most rules of their own:
 * StridedSlice (TensorFlow's dense-spec construction with its five masks)
 * and Const (shape, and the values of small integer tensors).
 */
#include <stdio.h>
#include <string.h>

#include "analyses/shapes_impl.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define NEW_AXIS (-1)
#define SHRINK_AXIS (-2)

typedef struct dense {
	int n;
	int64_t b[GE_SHAPE_MAXRANK], e[GE_SHAPE_MAXRANK], s[GE_SHAPE_MAXRANK];
	uint8_t bm[GE_SHAPE_MAXRANK], em[GE_SHAPE_MAXRANK], shr[GE_SHAPE_MAXRANK];
	int gather[2 * GE_SHAPE_MAXRANK + 2]; /* final dims: dense index or
						 NEW_AXIS / SHRINK_AXIS */
	int ng;
} dense;

#define GATHER_CAP ((int)(sizeof ((dense *)0)->gather / sizeof(int)))

/* Appends a final dim; -1 when the slice makes more dims than any
 * result can have.  Checked at every growth: an ellipsis adds up to rank
 * entries in one step. */
static int gather_push(dense *d, int x)
{
	if (d->ng >= GATHER_CAP)
		return -1;
	d->gather[d->ng++] = x;
	return 0;
}

/* TensorFlow's BuildDenseSpec: the sparse spec (begin/end/strides of n
 * entries and the masks) expanded to one entry per input dim. */
static int build_dense(int rank, const shval *b, const shval *e,
		       const shval *s, int64_t bmask, int64_t emask,
		       int64_t ell, int64_t newax, int64_t shrink, dense *d)
{
	int n = b->n;
	if (!(ell & ((1LL << n) - 1))) {
		ell |= 1LL << n;
		n++;
	}
	int after = 0, seen = 0;
	for (int i = 0; i < n; i++) {
		if (seen && (newax >> i & 1))
			after++;
		if (ell >> i & 1)
			seen = 1;
	}
	d->n = rank;
	d->ng = 0;
	int full = 0;
	for (int i = 0; i < n; i++) {
		if (ell >> i & 1) {
			int next = rank - (n - i) + 1 + after;
			if (next > rank)
				next = rank;
			for (; full < next; full++) {
				d->b[full] = d->e[full] = 0;
				d->s[full] = 1;
				d->bm[full] = d->em[full] = 1;
				d->shr[full] = 0;
				if (gather_push(d, full))
					return -1;
			}
		} else if (newax >> i & 1) {
			if (gather_push(d, NEW_AXIS))
				return -1;
		} else {
			if (full >= rank)
				return -1;
			d->b[full] = b->v[i];
			d->e[full] = e->v[i];
			d->s[full] = s->v[i];
			d->bm[full] = bmask >> i & 1;
			d->em[full] = emask >> i & 1;
			d->shr[full] = shrink >> i & 1;
			if (gather_push(d, d->shr[full] ? SHRINK_AXIS : full))
				return -1;
			full++;
		}
	}
	return 0;
}

static int64_t canon(int64_t x, int masked, int c, int64_t stride, int64_t dim)
{
	int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
	if (masked)
		return stride > 0 ? (c ? hi : lo) : (c ? lo : hi);
	int64_t f = x < 0 ? dim + x : x;
	return f < lo ? lo : f > hi ? hi : f;
}

void ge_shape_strided_slice(shctx *c)
{
	sh x;
	shval b, e, s;
	ge_sh_in(c, 0, &x);
	int64_t bmask = ge_sh_attr_int(c, "begin_mask", 0);
	int64_t emask = ge_sh_attr_int(c, "end_mask", 0);
	int64_t ell = ge_sh_attr_int(c, "ellipsis_mask", 0);
	int64_t newax = ge_sh_attr_int(c, "new_axis_mask", 0);
	int64_t shrink = ge_sh_attr_int(c, "shrink_axis_mask", 0);
	int hb = ge_sh_in_val(c, 1, &b), he = ge_sh_in_val(c, 2, &e);
	int hs = ge_sh_in_val(c, 3, &s);
	if (x.rank < 0 || !hs || !hb || !he || b.n != e.n || b.n != s.n ||
	    b.n >= 62) {
		sh_unknown(OUT(0));
		return;
	}
	dense d;
	if (build_dense(x.rank, &b, &e, &s, bmask, emask, ell, newax, shrink,
			&d)) {
		ge_sh_fail(c, "slice has more entries than the input has dims");
		return;
	}
	int64_t size[GE_SHAPE_MAXRANK], beg[GE_SHAPE_MAXRANK];
	for (int i = 0; i < x.rank; i++) {
		int64_t dim = x.d[i], st = d.s[i];
		beg[i] = SH_UNK;
		if (st == SH_UNK) {
			size[i] = d.shr[i] ? 1 : -1;
			continue;
		}
		if (st == 0) {
			ge_sh_fail(c, "stride %d is 0", i);
			return;
		}
		if (dim < 0) {
			size[i] = d.shr[i] ? 1 : -1;
			continue;
		}
		int bu = d.b[i] == SH_UNK && !d.bm[i];
		int eu = d.e[i] == SH_UNK && !d.em[i];
		if (d.shr[i]) {
			size[i] = 1;
			if (bu)
				continue;
			int64_t f = d.b[i] < 0 ? dim + d.b[i] : d.b[i];
			if (f < 0 || f >= dim) {
				ge_sh_fail(c, "index %lld out of bounds for a "
					"dimension of %lld", (long long)d.b[i],
					(long long)dim);
				return;
			}
			beg[i] = f;
			continue;
		}
		if (bu || eu) {
			size[i] = -1;
			continue;
		}
		int64_t bi = canon(d.b[i], d.bm[i], 0, st, dim);
		int64_t ei = canon(d.e[i], d.em[i], 1, st, dim);
		int64_t len = ei - bi;
		beg[i] = bi;
		if (len == 0 || (len < 0) != (st < 0))
			size[i] = 0;
		else
			size[i] = len / st + (len % st != 0);
	}
	sh *o = OUT(0);
	o->rank = 0;
	for (int k = 0; k < d.ng; k++) {
		if (d.gather[k] == SHRINK_AXIS)
			continue;
		if (o->rank >= GE_SHAPE_MAXRANK) {
			sh_unknown(o);
			return;
		}
		o->d[o->rank++] = d.gather[k] == NEW_AXIS ? 1 : size[d.gather[k]];
	}
	/* values: slicing a known 1-D tensor (a shape) */
	shval xv;
	int sv = c->reason;
	if (x.rank == 1 && beg[0] != SH_UNK && size[0] >= 0 &&
	    ge_sh_in_val(c, 0, &xv) && xv.n == x.d[0] && d.s[0] != SH_UNK) {
		VAL(0)->n = (int)size[0];
		for (int64_t k = 0; k < size[0]; k++)
			VAL(0)->v[k] = xv.v[beg[0] + k * d.s[0]];
		if (o->rank == 0 || o->rank > 1 || o->d[0] != size[0])
			VAL(0)->n = o->rank == 0 && size[0] == 1 ? 1 : -1;
	}
	c->reason = sv;
}

/* ------------------------------------------------------------ Const */

static int64_t tensor_int(const Tensorflow__TensorProto *t, int64_t k, int dt)
{
	size_t n;
	const uint8_t *p = t->tensor_content.data;
	if (t->tensor_content.len) {
		if (dt == 3) {
			int32_t v;
			memcpy(&v, p + k * 4, 4);
			return v;
		}
		int64_t v;
		memcpy(&v, p + k * 8, 8);
		return v;
	}
	if (dt == 3) {
		n = t->n_int_val;
		return n ? t->int_val[(size_t)k < n ? (size_t)k : n - 1] : 0;
	}
	n = t->n_int64_val;
	return n ? t->int64_val[(size_t)k < n ? (size_t)k : n - 1] : 0;
}

void ge_shape_const(shctx *c)
{
	/* shape and dtype from the raw bytes: weights are never decoded */
	size_t len, l, sl;
	uint64_t dt = 0, u;
	sh *o = OUT(0);
	sh_unknown(o);
	const uint8_t *p = ge_op_attr_raw(c->g, c->id, "value", &len);
	const uint8_t *tp = p ? ge_sh_pb_find(p, p + len, GE_ATTR_TENSOR, &l, &u) : NULL;
	if (!tp)
		return;
	if (!ge_sh_pb_find(tp, tp + l, GE_TENSOR_DTYPE, &sl, &dt))
		dt = 0;
	const uint8_t *sp = ge_sh_pb_find(tp, tp + l, GE_TENSOR_SHAPE, &sl, &u);
	if (sp)
		ge_sh_shape_raw(sp, sl, o);
	else
		o->rank = 0;
	int64_t n = sh_numel(o);
	if ((dt != 3 && dt != 9) || n < 0 || n > SH_MAXV)
		return;
	const Tensorflow__AttrValue *v = ge_op_attr(c->g, c->id, "value", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !v->tensor)
		return;
	const Tensorflow__TensorProto *t = v->tensor;
	if (t->tensor_content.len &&
	    t->tensor_content.len != (size_t)n * (dt == 3 ? 4 : 8))
		return;
	VAL(0)->n = (int)n;
	for (int64_t k = 0; k < n; k++)
		VAL(0)->v[k] = tensor_int(t, k, (int)dt);
}

/* ------------------------------------------------------------ plans */

int ge_sslice_plan(int rank, const int64_t *dims, int n, const int64_t *b,
		   const int64_t *e, const int64_t *s, const int64_t masks[5],
		   int64_t *beg, int64_t *str, int64_t *size, int *orank,
		   int64_t *odims, char *msg, size_t msglen)
{
	shval bv, ev, sv;
	if (n > SH_MAXV || n >= 62) {
		snprintf(msg, msglen, "too many slice entries");
		return -1;
	}
	bv.n = ev.n = sv.n = n;
	memcpy(bv.v, b, (size_t)n * sizeof *b);
	memcpy(ev.v, e, (size_t)n * sizeof *e);
	memcpy(sv.v, s, (size_t)n * sizeof *s);
	dense d;
	if (build_dense(rank, &bv, &ev, &sv, masks[0], masks[1], masks[2],
			masks[3], masks[4], &d)) {
		snprintf(msg, msglen, "slice has more entries than dims");
		return -1;
	}
	for (int i = 0; i < rank; i++) {
		int64_t dim = dims[i], st = d.s[i];
		if (st == 0) {
			snprintf(msg, msglen, "stride %d is 0", i);
			return -1;
		}
		str[i] = st;
		if (d.shr[i]) {
			int64_t f = d.b[i] < 0 ? dim + d.b[i] : d.b[i];
			if (f < 0 || f >= dim) {
				snprintf(msg, msglen, "index %lld out of bounds",
					 (long long)d.b[i]);
				return -1;
			}
			beg[i] = f;
			size[i] = 1;
			continue;
		}
		int64_t bi = canon(d.b[i], d.bm[i], 0, st, dim);
		int64_t ei = canon(d.e[i], d.em[i], 1, st, dim);
		int64_t len = ei - bi;
		beg[i] = bi;
		if (len == 0 || (len < 0) != (st < 0))
			size[i] = 0;
		else
			size[i] = len / st + (len % st != 0);
	}
	*orank = 0;
	for (int k = 0; k < d.ng; k++) {
		if (d.gather[k] == SHRINK_AXIS)
			continue;
		if (*orank >= GE_SHAPE_MAXRANK) {
			snprintf(msg, msglen, "result has too many dims");
			return -1;
		}
		odims[(*orank)++] = d.gather[k] == NEW_AXIS ? 1 : size[d.gather[k]];
	}
	return 0;
}
