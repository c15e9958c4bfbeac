/*
 * shapes_ops.c: per-op shape functions, written from TensorFlow's shape
 * rules (the shape functions registered with each op): partial shapes stay
 * partial, an input of unknown rank gives what TensorFlow gives, and small
 * integer tensors are followed by value where TensorFlow's
 * MakeShapeFromShapeTensor would follow them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/ckarith.h"
#include "analyses/shapes_impl.h"


static int norm_axis(int64_t a, int rank, int64_t *out)
{
	if (a < -rank || a >= rank)
		return -1;
	*out = a < 0 ? a + rank : a;
	return 0;
}

/* Products and sums of dims; unknown (-1) on an unknown operand or an
 * overflow (a hostile shape must not be undefined behaviour). */
static int64_t dmul(int64_t a, int64_t b)
{
	int64_t r;
	if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
		return -1;
	return r;
}

static int64_t dadd(int64_t a, int64_t b)
{
	int64_t r;
	if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
		return -1;
	return r;
}

/* A value (shape tensor) as a shape: SH_UNK and -1 become unknown dims. */
static int val_to_shape(const shval *v, sh *s)
{
	if (v->n < 0 || v->n > GE_SHAPE_MAXRANK)
		return -1;
	s->rank = v->n;
	for (int i = 0; i < v->n; i++)
		s->d[i] = v->v[i] < 0 ? -1 : v->v[i];
	return 0;
}

/* Shape from a shape-tensor input: its value, else a rank from its
 * length. */
static void shape_from_input(shctx *c, int i, sh *out)
{
	shval v;
	if (ge_sh_in_val(c, i, &v) && !val_to_shape(&v, out))
		return;
	sh s;
	ge_sh_in(c, i, &s);
	if (s.rank == 1 && s.d[0] >= 0)
		sh_ranked(out, (int)s.d[0]);
	else if (s.rank == 0)
		sh_ranked(out, 0);
	else
		sh_unknown(out);
}

static void set_values_from_shape(shval *v, const sh *s)
{
	v->n = s->rank;
	for (int i = 0; i < s->rank; i++)
		v->v[i] = s->d[i] < 0 ? SH_UNK : s->d[i];
}

/* ------------------------------------------------------------ sources */

static void f_const(shctx *c);

static void f_shape_attr(shctx *c)
{
	if (ge_sh_attr_shape(c, "shape", OUT(0)))
		sh_unknown(OUT(0));
}

static void f_scalar_all(shctx *c)
{
	for (int k = 0; k < c->nout; k++)
		sh_ranked(OUT(k), 0);
}

static void f_from_shape_input0(shctx *c)
{
	shape_from_input(c, 0, OUT(0));
}

static void f_from_shape_input1(shctx *c)
{
	shape_from_input(c, 1, OUT(0));
}

static void f_fill(shctx *c)
{
	shape_from_input(c, 0, OUT(0));
	int64_t x, n = sh_numel(OUT(0));
	if (n >= 0 && n <= SH_MAXV && ge_sh_in_scalar(c, 1, &x)) {
		VAL(0)->n = (int)n;
		for (int64_t i = 0; i < n; i++)
			VAL(0)->v[i] = x;
	}
}

static void f_range(shctx *c)
{
	int64_t a, b, d;
	sh_ranked(OUT(0), 1);
	int ints = ge_sh_in_dtype(c, 0) == 3 || ge_sh_in_dtype(c, 0) == 9;
	if (!ints || !ge_sh_in_scalar(c, 0, &a) || !ge_sh_in_scalar(c, 1, &b) ||
	    !ge_sh_in_scalar(c, 2, &d)) {
		c->reason = GE_SHAPE_DATA;
		return;
	}
	if (d == 0) {
		ge_sh_fail(c, "delta is 0");
		return;
	}
	if ((d > 0 && b <= a) || (d < 0 && b >= a)) {
		OUT(0)->d[0] = 0;
		VAL(0)->n = 0;
		return;
	}
	int64_t span, n;
	if (d == INT64_MIN || __builtin_sub_overflow(d > 0 ? b : a, d > 0 ? a : b,
						     &span)) {
		c->reason = GE_SHAPE_DATA;
		return;
	}
	int64_t ad = d > 0 ? d : -d;
	n = span / ad + (span % ad != 0);
	OUT(0)->d[0] = n;
	if (n <= SH_MAXV) {
		VAL(0)->n = (int)n;
		for (int64_t i = 0; i < n; i++)
			VAL(0)->v[i] = a + i * d;
	}
}

static void f_linspace(shctx *c)
{
	int64_t n;
	sh_ranked(OUT(0), 1);
	if (ge_sh_in_scalar(c, 2, &n))
		OUT(0)->d[0] = n;
}

/* ------------------------------------------------------------ unary */

static void f_same(shctx *c)
{
	ge_sh_in(c, 0, OUT(0));
	for (int k = 1; k < c->nout; k++)
		*OUT(k) = *OUT(0);
	if (c->nout)
		ge_sh_in_val(c, 0, VAL(0));
	c->reason = 0;
}

/* Identity-like ops keep values; value-changing unary ops do not. */
static void f_unary(shctx *c)
{
	ge_sh_in(c, 0, OUT(0));
	for (int k = 1; k < c->nout; k++)
		*OUT(k) = *OUT(0);
}

static void f_cast(shctx *c)
{
	ge_sh_in(c, 0, OUT(0));
	int dt = (int)ge_sh_attr_int(c, "DstT", 0);
	if (dt == 3 || dt == 9)
		ge_sh_in_val(c, 0, VAL(0));
	c->reason = 0;
}

static void f_identity_n(shctx *c)
{
	for (int k = 0; k < c->nout && k < c->nin; k++) {
		ge_sh_in(c, k, OUT(k));
		ge_sh_in_val(c, k, VAL(k));
	}
	c->reason = 0;
}

static void f_merge_inputs(shctx *c)
{
	/* AddN and friends: all inputs have one shape */
	ge_sh_in(c, 0, OUT(0));
	for (int i = 1; i < c->nin; i++) {
		sh s;
		ge_sh_in(c, i, &s);
		if (ge_sh_merge(OUT(0), &s)) {
			ge_sh_fail(c, "inputs 0 and %d have incompatible shapes", i);
			return;
		}
	}
}

static void f_switch(shctx *c)
{
	ge_sh_in(c, 0, OUT(0));
	for (int k = 1; k < c->nout; k++)
		*OUT(k) = *OUT(0);
}

/* Merge: inputs not yet computed (a loop's back edge on the first pass)
 * are left out; the others generalize each other. */
static void f_merge(shctx *c)
{
	int any = 0;
	for (int i = 0; i < c->nin; i++) {
		if (!ge_sh_in_done(c, i))
			continue;
		sh s;
		ge_sh_in(c, i, &s);
		if (!any) {
			*OUT(0) = s;
			any = 1;
		} else {
			ge_sh_relax(OUT(0), &s);
		}
	}
	c->reason = 0;
	if (!any)
		sh_unknown(OUT(0));
	if (c->nout > 1)
		sh_ranked(OUT(1), 0);
}

static void f_select(shctx *c)
{
	sh a, b;
	ge_sh_in(c, 1, &a);
	ge_sh_in(c, 2, &b);
	if (ge_sh_merge(&a, &b)) {
		ge_sh_fail(c, "then and else have incompatible shapes");
		return;
	}
	*OUT(0) = a;
}

static void f_selectv2(shctx *c)
{
	sh a, b, x, y;
	ge_sh_in(c, 0, &a);
	ge_sh_in(c, 1, &b);
	ge_sh_in(c, 2, &x);
	if (ge_sh_broadcast(&b, &x, &y) || ge_sh_broadcast(&a, &y, OUT(0)))
		ge_sh_fail(c, "inputs do not broadcast");
}

/* ------------------------------------------------------------ binary */

/* A followed value of a binary op; unknown where the result would
 * overflow (the kernel's wrapped value is not a shape anyone means). */
static int64_t ival(int64_t a, int64_t b, const char *t)
{
	int64_t r;
	if (a == SH_UNK || b == SH_UNK)
		return SH_UNK;
	switch (t[0]) {
	case 'A':
		return ge_ck_add(a, b, &r) ? SH_UNK : r;
	case 'S':
		return ge_ck_sub(a, b, &r) ? SH_UNK : r;
	case 'M':
		if (t[1] == 'u')
			return ge_ck_mul(a, b, &r) ? SH_UNK : r;
		if (t[1] == 'a')
			return a > b ? a : b;
		return a < b ? a : b;
	case 'F':
		if (b == 0 || (a == INT64_MIN && b == -1))
			return SH_UNK;
		{
			int64_t q = a / b;
			if ((a % b != 0) && ((a < 0) != (b < 0)))
				q--;
			return q;
		}
	default:
		return SH_UNK;
	}
}

static void f_binary(shctx *c)
{
	sh a, b;
	ge_sh_in(c, 0, &a);
	ge_sh_in(c, 1, &b);
	if (ge_sh_broadcast(&a, &b, OUT(0))) {
		ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
		ge_shape_format(&x, a.rank, a.d);
		ge_shape_format(&y, b.rank, b.d);
		ge_sh_fail(c, "shapes %s and %s do not broadcast", (char *)x.data,
			(char *)y.data);
		ge_buf_free(&x);
		ge_buf_free(&y);
		return;
	}
	const char *t = c->type;
	if (strcmp(t, "Add") && strcmp(t, "AddV2") && strcmp(t, "Sub") &&
	    strcmp(t, "Mul") && strcmp(t, "Maximum") && strcmp(t, "Minimum") &&
	    strcmp(t, "FloorDiv"))
		return;
	shval x, y;
	int sv = c->reason;
	if (!ge_sh_in_val(c, 0, &x) || !ge_sh_in_val(c, 1, &y)) {
		c->reason = sv;
		return;
	}
	int64_t n = sh_numel(OUT(0));
	if (n < 0 || n > SH_MAXV || (x.n != n && x.n != 1) ||
	    (y.n != n && y.n != 1))
		return;
	VAL(0)->n = (int)n;
	for (int64_t i = 0; i < n; i++)
		VAL(0)->v[i] = ival(x.v[x.n == 1 ? 0 : i], y.v[y.n == 1 ? 0 : i],
				    t);
}

/* ------------------------------------------------------------ linear algebra */

static void f_matmul(shctx *c)
{
	sh a, b;
	ge_sh_in(c, 0, &a);
	ge_sh_in(c, 1, &b);
	sh_ranked(OUT(0), 2);
	int ta = (int)ge_sh_attr_int(c, "transpose_a", 0);
	int tb = (int)ge_sh_attr_int(c, "transpose_b", 0);
	if ((a.rank >= 0 && a.rank != 2) || (b.rank >= 0 && b.rank != 2)) {
		ge_sh_fail(c, "MatMul needs rank-2 inputs");
		return;
	}
	int64_t k1 = -1, k2 = -1;
	if (a.rank == 2) {
		OUT(0)->d[0] = a.d[ta ? 1 : 0];
		k1 = a.d[ta ? 0 : 1];
	}
	if (b.rank == 2) {
		OUT(0)->d[1] = b.d[tb ? 0 : 1];
		k2 = b.d[tb ? 1 : 0];
	}
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		ge_sh_fail(c, "inner dimensions differ (%lld and %lld)",
			(long long)k1, (long long)k2);
}

static void f_batch_matmul(shctx *c)
{
	sh a, b;
	ge_sh_in(c, 0, &a);
	ge_sh_in(c, 1, &b);
	int ax = (int)ge_sh_attr_int(c, "adj_x", 0), ay = (int)ge_sh_attr_int(c, "adj_y", 0);
	if (a.rank < 2 || b.rank < 2) {
		sh_unknown(OUT(0));
		return;
	}
	sh ba = a, bb = b, bo;
	ba.rank -= 2;
	bb.rank -= 2;
	if (!strcmp(c->type, "BatchMatMul")) {
		bo = ba;
		if (ge_sh_merge(&bo, &bb)) {
			ge_sh_fail(c, "batch dimensions differ");
			return;
		}
	} else if (ge_sh_broadcast(&ba, &bb, &bo)) {
		ge_sh_fail(c, "batch dimensions do not broadcast");
		return;
	}
	if (bo.rank + 2 > GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	*OUT(0) = bo;
	OUT(0)->rank = bo.rank + 2;
	OUT(0)->d[bo.rank] = a.d[a.rank - (ax ? 1 : 2)];
	OUT(0)->d[bo.rank + 1] = b.d[b.rank - (ay ? 2 : 1)];
	int64_t k1 = a.d[a.rank - (ax ? 2 : 1)], k2 = b.d[b.rank - (ay ? 1 : 2)];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		ge_sh_fail(c, "inner dimensions differ (%lld and %lld)",
			(long long)k1, (long long)k2);
}

/* ------------------------------------------------------------ convolution */

static int64_t conv_dim(int64_t in, int64_t f, int64_t s, int64_t d, int same,
			int64_t pb, int64_t pa, int expl)
{
	if (in < 0 || s <= 0)
		return -1;
	if (same) {
		int64_t t = dadd(in, s - 1);
		return t < 0 ? -1 : t / s;
	}
	if (f < 0)
		return -1;
	int64_t eff = dadd(dmul(f - 1, d > 0 ? d : 1), 1);
	if (eff < 0)
		return -1;
	if (expl)
		in = dadd(in, dadd(pb, pa));
	if (in < 0)
		return -1;
	if (in < eff)
		return 0;
	return (in - eff) / s + 1;
}

/* Conv2D, DepthwiseConv2dNative and the poolings share the layout work. */
static void conv_like(shctx *c, int pool, int depthwise)
{
	sh x, f;
	f.rank = -1;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 4);
	int nchw = ge_sh_attr_str_is(c, "data_format", "NCHW", 0);
	int hi = nchw ? 2 : 1, wi = nchw ? 3 : 2, ci = nchw ? 1 : 3;
	int64_t st[4] = {1, 1, 1, 1}, dl[4] = {1, 1, 1, 1}, ks[4] = {1, 1, 1, 1};
	int64_t ep[8] = {0};
	ge_sh_attr_ints(c, "strides", st, 4);
	ge_sh_attr_ints(c, "dilations", dl, 4);
	int same = ge_sh_attr_str_is(c, "padding", "SAME", 0);
	int expl = ge_sh_attr_str_is(c, "padding", "EXPLICIT", 0);
	if (expl)
		ge_sh_attr_ints(c, "explicit_paddings", ep, 8);
	int64_t fh = -1, fw = -1, oc = -1;
	if (pool) {
		if (ge_sh_attr_ints(c, "ksize", ks, 4) != 4) {
			shval v;
			if (c->nin >= 3 && ge_sh_in_val(c, 1, &v) && v.n == 4)
				memcpy(ks, v.v, sizeof ks);
			if (c->nin >= 3 && ge_sh_in_val(c, 2, &v) && v.n == 4)
				memcpy(st, v.v, sizeof st);
		}
		fh = ks[hi];
		fw = ks[wi];
		for (int i = 0; i < 4; i++)
			dl[i] = 1;
		oc = x.rank == 4 ? x.d[ci] : -1;
	} else {
		ge_sh_in(c, 1, &f);
		if (f.rank == 4) {
			fh = f.d[0];
			fw = f.d[1];
			oc = depthwise ? dmul(f.d[2], f.d[3]) : f.d[3];
			if (depthwise && oc < 0 && x.rank == 4 && f.d[3] >= 0)
				oc = dmul(x.d[ci], f.d[3]);
		}
	}
	if (x.rank >= 0 && x.rank != 4) {
		ge_sh_fail(c, "input must be 4-D, not %d-D", x.rank);
		return;
	}
	if (!pool && x.rank == 4 && f.rank == 4 && x.d[ci] > 0 && f.d[2] > 0 &&
	    (depthwise ? x.d[ci] != f.d[2] : x.d[ci] % f.d[2] != 0)) {
		ge_sh_fail(c, "input depth %lld does not match the filter's %lld",
			(long long)x.d[ci], (long long)f.d[2]);
		return;
	}
	OUT(0)->d[ci] = oc;
	if (x.rank != 4)
		return;
	OUT(0)->d[0] = x.d[0];
	OUT(0)->d[hi] = conv_dim(x.d[hi], fh, st[hi], dl[hi], same, ep[2 * hi],
				 ep[2 * hi + 1], expl);
	OUT(0)->d[wi] = conv_dim(x.d[wi], fw, st[wi], dl[wi], same, ep[2 * wi],
				 ep[2 * wi + 1], expl);
	for (int k = 1; k < c->nout; k++)
		*OUT(k) = *OUT(0);
}

static void f_conv2d(shctx *c)
{
	conv_like(c, 0, 0);
}

static void f_depthwise(shctx *c)
{
	conv_like(c, 0, 1);
}

static void f_pool(shctx *c)
{
	conv_like(c, 1, 0);
}

static void f_bias_add(shctx *c)
{
	sh b;
	ge_sh_in(c, 0, OUT(0));
	ge_sh_in(c, 1, &b);
	int nchw = ge_sh_attr_str_is(c, "data_format", "NCHW", 0);
	if (OUT(0)->rank >= 2 && b.rank == 1) {
		int ci = nchw ? 1 : OUT(0)->rank - 1;
		if (OUT(0)->d[ci] < 0)
			OUT(0)->d[ci] = b.d[0];
		else if (b.d[0] >= 0 && b.d[0] != OUT(0)->d[ci])
			ge_sh_fail(c, "bias of %lld for %lld channels",
				(long long)b.d[0], (long long)OUT(0)->d[ci]);
	}
}

static void f_fused_bn(shctx *c)
{
	sh x, s;
	ge_sh_in(c, 0, &x);
	int nchw = ge_sh_attr_str_is(c, "data_format", "NCHW", 0);
	if (x.rank >= 0 && x.rank != 4) {
		ge_sh_fail(c, "input must be 4-D");
		return;
	}
	if (x.rank < 0)
		sh_ranked(&x, 4);
	int ci = nchw ? 1 : 3;
	for (int i = 1; i < 5 && i < c->nin; i++) {
		ge_sh_in(c, i, &s);
		if (s.rank == 1 && x.d[ci] < 0)
			x.d[ci] = s.d[0];
	}
	*OUT(0) = x;
	for (int k = 1; k < c->nout && k < 5; k++) {
		sh_ranked(OUT(k), 1);
		OUT(k)->d[0] = x.d[ci];
	}
	/* FusedBatchNormV3's reserve_space_3 is left unknown by TensorFlow */
}

static void f_depth_space(shctx *c, int to_space)
{
	sh x;
	ge_sh_in(c, 0, &x);
	int64_t b = ge_sh_attr_int(c, "block_size", 0);
	sh_ranked(OUT(0), 4);
	if (x.rank != 4 || b <= 0 || b > (1 << 20))
		return;
	int nchw = ge_sh_attr_str_is(c, "data_format", "NCHW", 0);
	int hi = nchw ? 2 : 1, wi = nchw ? 3 : 2, ci = nchw ? 1 : 3;
	OUT(0)->d[0] = x.d[0];
	if (to_space) {
		OUT(0)->d[hi] = dmul(x.d[hi], b);
		OUT(0)->d[wi] = dmul(x.d[wi], b);
		OUT(0)->d[ci] = x.d[ci] < 0 ? -1 : x.d[ci] / (b * b);
	} else {
		OUT(0)->d[hi] = x.d[hi] < 0 ? -1 : x.d[hi] / b;
		OUT(0)->d[wi] = x.d[wi] < 0 ? -1 : x.d[wi] / b;
		OUT(0)->d[ci] = dmul(x.d[ci], b * b);
	}
}

static void f_d2s(shctx *c)
{
	f_depth_space(c, 1);
}

static void f_s2d(shctx *c)
{
	f_depth_space(c, 0);
}

static void f_resize(shctx *c)
{
	sh x;
	shval v;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 4);
	if (x.rank == 4) {
		OUT(0)->d[0] = x.d[0];
		OUT(0)->d[3] = x.d[3];
	}
	if (ge_sh_in_val(c, 1, &v) && v.n == 2) {
		OUT(0)->d[1] = v.v[0] < 0 ? -1 : v.v[0];
		OUT(0)->d[2] = v.v[1] < 0 ? -1 : v.v[1];
	}
}

/* ------------------------------------------------------------ shape ops */

static void f_shape(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 1);
	c->reason = 0;
	if (x.rank < 0)
		return;
	OUT(0)->d[0] = x.rank;
	set_values_from_shape(VAL(0), &x);
}

static void f_shape_n(shctx *c)
{
	for (int k = 0; k < c->nout && k < c->nin; k++) {
		sh x;
		ge_sh_in(c, k, &x);
		sh_ranked(OUT(k), 1);
		if (x.rank >= 0) {
			OUT(k)->d[0] = x.rank;
			set_values_from_shape(VAL(k), &x);
		}
	}
	c->reason = 0;
}

static void f_size(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 0);
	int64_t n = sh_numel(&x);
	VAL(0)->n = 1;
	VAL(0)->v[0] = n < 0 ? SH_UNK : n;
}

static void f_rank(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 0);
	VAL(0)->n = 1;
	VAL(0)->v[0] = x.rank < 0 ? SH_UNK : x.rank;
}

static void f_reshape(shctx *c)
{
	sh x, t;
	ge_sh_in(c, 0, &x);
	shval v;
	if (!ge_sh_in_val(c, 1, &v)) {
		shape_from_input(c, 1, OUT(0));
		return;
	}
	if (v.n > GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	t.rank = v.n;
	int infer = -1, unk = 0;
	int64_t known = 1;
	for (int i = 0; i < v.n; i++) {
		if (v.v[i] == -1 && infer < 0) {
			infer = i;
			t.d[i] = -1;
		} else if (v.v[i] < 0) {
			if (v.v[i] != SH_UNK) {
				ge_sh_fail(c, "dimension %d of the target shape is %lld",
					i, (long long)v.v[i]);
				return;
			}
			t.d[i] = -1;
			unk = 1;
		} else {
			t.d[i] = v.v[i];
			known = dmul(known, v.v[i]);
			if (known < 0)
				unk = 1;
		}
	}
	int64_t n = sh_numel(&x);
	if (n >= 0 && !unk) {
		ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
		ge_shape_format(&a, x.rank, x.d);
		ge_shape_format(&b, t.rank, t.d);
		if (infer >= 0) {
			if (known == 0 ? n != 0 : n % known)
				ge_sh_fail(c, "cannot reshape %s (%lld elements) into "
					"%s", (char *)a.data, (long long)n,
					(char *)b.data);
			else
				t.d[infer] = known ? n / known : 0;
		} else if (known != n) {
			ge_sh_fail(c, "cannot reshape %s (%lld elements) into %s "
				"(%lld elements)", (char *)a.data, (long long)n,
				(char *)b.data, (long long)known);
		}
		ge_buf_free(&a);
		ge_buf_free(&b);
	}
	*OUT(0) = t;
	if (ge_sh_in_val(c, 0, VAL(0)) && VAL(0)->n != sh_numel(&t))
		VAL(0)->n = -1;
	c->reason = 0;
}

static void f_squeeze(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	int64_t ax[GE_SHAPE_MAXRANK];
	int na = ge_sh_attr_ints(c, "squeeze_dims", ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		na = ge_sh_attr_ints(c, "axis", ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		na = 0;
	if (x.rank < 0) {
		sh_unknown(OUT(0));
		return;
	}
	uint8_t drop[GE_SHAPE_MAXRANK] = {0};
	for (int i = 0; i < na; i++) {
		int64_t a;
		if (norm_axis(ax[i], x.rank, &a)) {
			ge_sh_fail(c, "axis %lld out of range", (long long)ax[i]);
			return;
		}
		if (x.d[a] > 1) {
			ge_sh_fail(c, "cannot squeeze dim %lld of size %lld",
				(long long)a, (long long)x.d[a]);
			return;
		}
		drop[a] = 1;
	}
	OUT(0)->rank = 0;
	for (int i = 0; i < x.rank; i++) {
		if (na == 0 && x.d[i] < 0) {
			sh_unknown(OUT(0));
			return;
		}
		if (na ? drop[i] : x.d[i] == 1)
			continue;
		OUT(0)->d[OUT(0)->rank++] = x.d[i];
	}
	if (ge_sh_in_val(c, 0, VAL(0)) && OUT(0)->rank > 1)
		VAL(0)->n = -1;
	c->reason = 0;
}

static void f_expand_dims(shctx *c)
{
	sh x;
	int64_t a;
	ge_sh_in(c, 0, &x);
	if (x.rank < 0 || x.rank >= GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	if (!ge_sh_in_scalar(c, 1, &a)) {
		sh_ranked(OUT(0), x.rank + 1);
		return;
	}
	if (norm_axis(a, x.rank + 1, &a)) {
		ge_sh_fail(c, "axis out of range");
		return;
	}
	OUT(0)->rank = x.rank + 1;
	for (int i = 0, j = 0; i <= x.rank; i++)
		OUT(0)->d[i] = i == a ? 1 : x.d[j++];
	if (ge_sh_in_val(c, 0, VAL(0)) && OUT(0)->rank > 1)
		VAL(0)->n = -1;
}

static void f_transpose(shctx *c)
{
	sh x;
	shval p;
	ge_sh_in(c, 0, &x);
	if (!ge_sh_in_val(c, 1, &p)) {
		sh s;
		ge_sh_in(c, 1, &s);
		if (x.rank >= 0)
			sh_ranked(OUT(0), x.rank);
		else if (s.rank == 1)
			sh_ranked(OUT(0), (int)s.d[0]);
		else
			sh_unknown(OUT(0));
		return;
	}
	if (x.rank >= 0 && p.n != x.rank) {
		ge_sh_fail(c, "perm has %d entries for a %d-D input", p.n, x.rank);
		return;
	}
	sh_ranked(OUT(0), p.n);
	if (x.rank < 0 || OUT(0)->rank < 0)
		return;
	for (int i = 0; i < p.n; i++) {
		int64_t a;
		if (p.v[i] == SH_UNK)
			continue;
		if (norm_axis(p.v[i], x.rank, &a)) {
			ge_sh_fail(c, "perm entry %lld out of range", (long long)p.v[i]);
			return;
		}
		OUT(0)->d[i] = x.d[a];
	}
}

static void concat_common(shctx *c, int first, int n, int axis_in)
{
	int64_t ax;
	int have_axis = ge_sh_in_scalar(c, axis_in, &ax);
	int rank = -1;
	for (int i = 0; i < n; i++) {
		sh s;
		ge_sh_in(c, first + i, &s);
		if (s.rank >= 0)
			rank = s.rank;
	}
	if (rank < 0) {
		sh_unknown(OUT(0));
		return;
	}
	if (!have_axis) {
		sh_ranked(OUT(0), rank);
		return;
	}
	if (norm_axis(ax, rank, &ax)) {
		ge_sh_fail(c, "axis %lld out of range for rank %d", (long long)ax,
			rank);
		return;
	}
	sh out;
	sh_ranked(&out, rank);
	int64_t sum = 0;
	shval all;
	all.n = rank == 1 ? 0 : -1;
	for (int i = 0; i < n; i++) {
		sh s;
		ge_sh_in(c, first + i, &s);
		if (s.rank >= 0 && s.rank != rank) {
			ge_sh_fail(c, "input %d has rank %d, not %d", first + i,
				s.rank, rank);
			return;
		}
		if (s.rank < 0) {
			sum = -1;
			all.n = -1;
			continue;
		}
		int64_t a = s.d[ax];
		s.d[ax] = -1;
		sh o2 = out;
		o2.d[ax] = -1;
		if (ge_sh_merge(&o2, &s)) {
			ge_sh_fail(c, "input %d does not match the others",
				first + i);
			return;
		}
		out = o2;
		sum = dadd(sum, a);
		shval v;
		int sv = c->reason;
		if (all.n >= 0 && ge_sh_in_val(c, first + i, &v) &&
		    all.n + v.n <= SH_MAXV) {
			memcpy(all.v + all.n, v.v, (size_t)v.n * sizeof v.v[0]);
			all.n += v.n;
		} else {
			all.n = -1;
			c->reason = sv;
		}
	}
	out.d[ax] = sum;
	*OUT(0) = out;
	if (all.n >= 0)
		*VAL(0) = all;
}

static void f_concatv2(shctx *c)
{
	concat_common(c, 0, c->nin - 1, c->nin - 1);
}

static void f_concat(shctx *c)
{
	concat_common(c, 1, c->nin - 1, 0);
}

static void f_pack(shctx *c)
{
	sh s;
	ge_sh_in(c, 0, &s);
	for (int i = 1; i < c->nin; i++) {
		sh t;
		ge_sh_in(c, i, &t);
		if (ge_sh_merge(&s, &t)) {
			ge_sh_fail(c, "input %d has a different shape", i);
			return;
		}
	}
	if (s.rank < 0 || s.rank >= GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	int64_t ax = ge_sh_attr_int(c, "axis", 0);
	if (norm_axis(ax, s.rank + 1, &ax)) {
		ge_sh_fail(c, "axis out of range");
		return;
	}
	OUT(0)->rank = s.rank + 1;
	for (int i = 0, j = 0; i <= s.rank; i++)
		OUT(0)->d[i] = i == ax ? c->nin : s.d[j++];
	if (s.rank == 0 && c->nin <= SH_MAXV) {
		VAL(0)->n = c->nin;
		int sv = c->reason;
		for (int i = 0; i < c->nin; i++) {
			int64_t x;
			VAL(0)->v[i] = ge_sh_in_scalar(c, i, &x) ? x : SH_UNK;
		}
		c->reason = sv;
	}
}

static void f_unpack(shctx *c)
{
	sh s;
	ge_sh_in(c, 0, &s);
	int64_t ax = ge_sh_attr_int(c, "axis", 0);
	if (s.rank < 0) {
		for (int k = 0; k < c->nout; k++)
			sh_unknown(OUT(k));
		return;
	}
	if (norm_axis(ax, s.rank, &ax)) {
		ge_sh_fail(c, "axis out of range");
		return;
	}
	sh o;
	o.rank = s.rank - 1;
	for (int i = 0, j = 0; i < s.rank; i++)
		if (i != ax)
			o.d[j++] = s.d[i];
	shval v;
	int sv = c->reason;
	int vals = s.rank == 1 && ge_sh_in_val(c, 0, &v) && v.n == c->nout;
	c->reason = sv;
	for (int k = 0; k < c->nout; k++) {
		*OUT(k) = o;
		if (vals) {
			VAL(k)->n = 1;
			VAL(k)->v[0] = v.v[k];
		}
	}
}

static void split_common(shctx *c, int axis_in, int value_in, shval *sizes)
{
	sh s;
	int64_t ax;
	ge_sh_in(c, value_in, &s);
	for (int k = 0; k < c->nout; k++)
		sh_unknown(OUT(k));
	if (s.rank < 0)
		return;
	if (!ge_sh_in_scalar(c, axis_in, &ax)) {
		for (int k = 0; k < c->nout; k++)
			sh_ranked(OUT(k), s.rank);
		return;
	}
	if (norm_axis(ax, s.rank, &ax)) {
		ge_sh_fail(c, "axis out of range");
		return;
	}
	int64_t dim = s.d[ax];
	if (!sizes) {
		int64_t n = c->nout;
		if (dim >= 0 && n && dim % n) {
			ge_sh_fail(c, "dimension %lld does not split into %lld",
				(long long)dim, (long long)n);
			return;
		}
		for (int k = 0; k < c->nout; k++) {
			*OUT(k) = s;
			OUT(k)->d[ax] = dim < 0 ? -1 : dim / n;
		}
		return;
	}
	int64_t known = 0;
	int infer = -1;
	for (int k = 0; k < sizes->n; k++) {
		if (sizes->v[k] == -1)
			infer = k;
		else if (sizes->v[k] >= 0 &&
			 ge_ck_add(known, sizes->v[k], &known)) {
			ge_sh_fail(c, "size_splits overflow");
			return;
		}
	}
	for (int k = 0; k < c->nout; k++) {
		*OUT(k) = s;
		int64_t z = k < sizes->n ? sizes->v[k] : -1;
		if (k == infer)
			z = dim >= 0 ? dim - known : -1;
		OUT(k)->d[ax] = z < 0 ? -1 : z;
	}
}

static void f_split(shctx *c)
{
	split_common(c, 0, 1, NULL);
}

static void f_splitv(shctx *c)
{
	shval v, a;
	if (!ge_sh_in_val(c, 1, &v)) {
		/* sizes known at run time only: the other dimensions stay */
		sh s;
		ge_sh_in(c, 0, &s);
		int ax = -1;
		if (s.rank > 0 && ge_sh_in_val(c, 2, &a) && a.n == 1 &&
		    a.v[0] >= -s.rank && a.v[0] < s.rank)
			ax = (int)(a.v[0] < 0 ? a.v[0] + s.rank : a.v[0]);
		for (int k = 0; k < c->nout; k++) {
			if (ax < 0) {
				sh_ranked(OUT(k), s.rank);
				continue;
			}
			*OUT(k) = s;
			OUT(k)->d[ax] = -1;
		}
		return;
	}
	split_common(c, 2, 0, &v);
}

static void f_slice(shctx *c)
{
	sh x;
	shval b, z;
	ge_sh_in(c, 0, &x);
	int hb = ge_sh_in_val(c, 1, &b), hz = ge_sh_in_val(c, 2, &z);
	if (!hz) {
		if (x.rank >= 0)
			sh_ranked(OUT(0), x.rank);
		else
			shape_from_input(c, 2, OUT(0));
		return;
	}
	if (x.rank >= 0 && z.n != x.rank) {
		ge_sh_fail(c, "size has %d entries for a %d-D input", z.n, x.rank);
		return;
	}
	sh_ranked(OUT(0), z.n);
	if (OUT(0)->rank < 0)
		return;
	for (int i = 0; i < z.n; i++) {
		int64_t s = z.v[i];
		int64_t bb = hb && i < b.n ? b.v[i] : SH_UNK;
		int64_t dim = x.rank >= 0 ? x.d[i] : -1;
		if (s == -1) {
			if (dim >= 0 && bb != SH_UNK &&
			    ge_ck_window(bb, 0, dim, NULL)) {
				ge_sh_fail(c, "begin %lld out of bounds of dim %d "
					"(%lld)", (long long)bb, i,
					(long long)dim);
				return;
			}
			s = dim >= 0 && bb != SH_UNK ? dim - bb : -1;
		} else if (s == SH_UNK) {
			s = -1;
		} else if (bb != SH_UNK && (s < 0 || bb < 0 ||
					    (dim >= 0 &&
					     ge_ck_window(bb, s, dim, NULL)))) {
			/* begin + size is checked without overflow */
			ge_sh_fail(c, "begin %lld size %lld out of bounds of dim "
				"%d (%lld)", (long long)bb, (long long)s, i,
				(long long)dim);
			return;
		}
		OUT(0)->d[i] = s;
	}
	shval xv;
	int sv = c->reason;
	if (x.rank == 1 && hb && b.n == 1 && b.v[0] >= 0 && OUT(0)->d[0] >= 0 &&
	    ge_sh_in_val(c, 0, &xv) && !ge_ck_window(b.v[0], OUT(0)->d[0], xv.n,
						   NULL)) {
		VAL(0)->n = (int)OUT(0)->d[0];
		memcpy(VAL(0)->v, xv.v + b.v[0],
		       (size_t)VAL(0)->n * sizeof xv.v[0]);
	}
	c->reason = sv;
}

static void f_pad(shctx *c)
{
	sh x;
	shval p;
	ge_sh_in(c, 0, &x);
	if (!ge_sh_in_val(c, 1, &p)) {
		sh s;
		ge_sh_in(c, 1, &s);
		if (x.rank >= 0)
			sh_ranked(OUT(0), x.rank);
		else if (s.rank == 2)
			sh_ranked(OUT(0), (int)s.d[0]);
		else
			sh_unknown(OUT(0));
		return;
	}
	int r = p.n / 2;
	if (x.rank >= 0 && r != x.rank) {
		ge_sh_fail(c, "paddings has %d rows for a %d-D input", r, x.rank);
		return;
	}
	sh_ranked(OUT(0), r);
	if (x.rank < 0 || OUT(0)->rank < 0)
		return;
	for (int i = 0; i < r; i++) {
		int64_t a = p.v[2 * i], b = p.v[2 * i + 1];
		if (a == SH_UNK || b == SH_UNK || x.d[i] < 0) {
			OUT(0)->d[i] = -1;
		} else if (ge_ck_dim_grow(x.d[i], a, b, &OUT(0)->d[i])) {
			ge_sh_fail(c, "paddings %lld, %lld of dim %d (%lld) do "
				"not hold", (long long)a, (long long)b, i,
				(long long)x.d[i]);
			return;
		}
	}
}

static void f_tile(shctx *c)
{
	sh x;
	shval m;
	ge_sh_in(c, 0, &x);
	if (!ge_sh_in_val(c, 1, &m)) {
		if (x.rank >= 0)
			sh_ranked(OUT(0), x.rank);
		else
			sh_unknown(OUT(0));
		return;
	}
	if (x.rank >= 0 && m.n != x.rank) {
		ge_sh_fail(c, "multiples has %d entries for a %d-D input", m.n,
			x.rank);
		return;
	}
	sh_ranked(OUT(0), m.n);
	if (x.rank < 0 || OUT(0)->rank < 0)
		return;
	for (int i = 0; i < m.n; i++)
		OUT(0)->d[i] = m.v[i] == SH_UNK ? -1 : dmul(x.d[i], m.v[i]);
}

static void f_broadcast_to(shctx *c)
{
	shape_from_input(c, 1, OUT(0));
}

static void gather_common(shctx *c, int64_t ax, int have_axis, int batch)
{
	sh p, ix;
	ge_sh_in(c, 0, &p);
	ge_sh_in(c, 1, &ix);
	if (p.rank < 0 || ix.rank < 0 || !have_axis) {
		sh_unknown(OUT(0));
		return;
	}
	if (norm_axis(ax, p.rank, &ax)) {
		ge_sh_fail(c, "axis out of range");
		return;
	}
	if (batch < 0)
		batch += ix.rank;
	if (batch < 0 || batch > ix.rank) {
		ge_sh_fail(c, "batch_dims out of range");
		return;
	}
	int r = (int)ax + ix.rank - batch + p.rank - (int)ax - 1;
	if (r > GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = r;
	int k = 0;
	for (int i = 0; i < ax; i++)
		OUT(0)->d[k++] = p.d[i];
	for (int i = batch; i < ix.rank; i++)
		OUT(0)->d[k++] = ix.d[i];
	for (int i = (int)ax + 1; i < p.rank; i++)
		OUT(0)->d[k++] = p.d[i];
	/* values: a 1-D params gathered at known indices */
	shval pv, iv;
	int sv = c->reason;
	if (p.rank == 1 && ix.rank <= 1 && ge_sh_in_val(c, 0, &pv) &&
	    ge_sh_in_val(c, 1, &iv)) {
		VAL(0)->n = iv.n;
		for (int i = 0; i < iv.n; i++) {
			int64_t j = iv.v[i];
			VAL(0)->v[i] = j >= 0 && j < pv.n ? pv.v[j] : SH_UNK;
		}
	}
	c->reason = sv;
}

static void f_gather(shctx *c)
{
	gather_common(c, 0, 1, 0);
}

static void f_gatherv2(shctx *c)
{
	int64_t ax = 0;
	int have = ge_sh_in_scalar(c, 2, &ax);
	gather_common(c, ax, have, (int)ge_sh_attr_int(c, "batch_dims", 0));
}

static void f_gather_nd(shctx *c)
{
	sh p, ix;
	ge_sh_in(c, 0, &p);
	ge_sh_in(c, 1, &ix);
	if (p.rank < 0 || ix.rank < 1 || ix.d[ix.rank - 1] < 0) {
		sh_unknown(OUT(0));
		return;
	}
	int64_t m = ix.d[ix.rank - 1];
	if (m > p.rank) {
		ge_sh_fail(c, "index depth %lld exceeds rank %d", (long long)m,
			p.rank);
		return;
	}
	int r = ix.rank - 1 + p.rank - (int)m;
	if (r > GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = r;
	int k = 0;
	for (int i = 0; i < ix.rank - 1; i++)
		OUT(0)->d[k++] = ix.d[i];
	for (int i = (int)m; i < p.rank; i++)
		OUT(0)->d[k++] = p.d[i];
}

static void f_reduce(shctx *c)
{
	sh x;
	shval a;
	ge_sh_in(c, 0, &x);
	int keep = (int)(ge_sh_attr_int(c, "keep_dims", 0) ||
			 ge_sh_attr_int(c, "keepdims", 0));
	if (!ge_sh_in_val(c, 1, &a)) {
		if (keep && x.rank >= 0)
			sh_ranked(OUT(0), x.rank);
		else
			sh_unknown(OUT(0));
		return;
	}
	if (x.rank < 0) {
		sh_unknown(OUT(0));
		return;
	}
	uint8_t red[GE_SHAPE_MAXRANK] = {0};
	for (int i = 0; i < a.n; i++) {
		int64_t ax;
		if (a.v[i] == SH_UNK) {
			sh_ranked(OUT(0), keep ? x.rank : -1);
			return;
		}
		if (norm_axis(a.v[i], x.rank, &ax)) {
			ge_sh_fail(c, "axis %lld out of range for rank %d",
				(long long)a.v[i], x.rank);
			return;
		}
		red[ax] = 1;
	}
	OUT(0)->rank = 0;
	for (int i = 0; i < x.rank; i++) {
		if (!red[i])
			OUT(0)->d[OUT(0)->rank++] = x.d[i];
		else if (keep)
			OUT(0)->d[OUT(0)->rank++] = 1;
	}
	/* Prod of a shape: how reshapes compute element counts */
	shval xv;
	int sv = c->reason;
	if (x.rank == 1 && a.n == 1 && !keep && ge_sh_in_val(c, 0, &xv) &&
	    (!strcmp(c->type, "Prod") || !strcmp(c->type, "Sum"))) {
		int prod = c->type[0] == 'P';
		int64_t r = prod ? 1 : 0;
		for (int i = 0; i < xv.n; i++) {
			if (xv.v[i] == SH_UNK) {
				r = SH_UNK;
				break;
			}
			if (prod ? ge_ck_mul(r, xv.v[i], &r)
				 : ge_ck_add(r, xv.v[i], &r)) {
				r = SH_UNK;
				break;
			}
		}
		VAL(0)->n = 1;
		VAL(0)->v[0] = r;
	}
	c->reason = sv;
}

static void f_argmax(shctx *c)
{
	sh x;
	int64_t ax;
	ge_sh_in(c, 0, &x);
	if (x.rank < 0) {
		sh_unknown(OUT(0));
		return;
	}
	if (!ge_sh_in_scalar(c, 1, &ax)) {
		sh_ranked(OUT(0), x.rank - 1);
		return;
	}
	if (norm_axis(ax, x.rank, &ax)) {
		ge_sh_fail(c, "dimension out of range");
		return;
	}
	OUT(0)->rank = x.rank - 1;
	for (int i = 0, j = 0; i < x.rank; i++)
		if (i != ax)
			OUT(0)->d[j++] = x.d[i];
}

static void f_one_hot(shctx *c)
{
	sh x;
	int64_t depth = -1, ax = ge_sh_attr_int(c, "axis", -1);
	ge_sh_in(c, 0, &x);
	if (!ge_sh_in_scalar(c, 1, &depth))
		depth = -1;
	if (x.rank < 0 || x.rank >= GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	if (ax < 0)
		ax = x.rank;
	OUT(0)->rank = x.rank + 1;
	for (int i = 0, j = 0; i <= x.rank; i++)
		OUT(0)->d[i] = i == ax ? depth : x.d[j++];
}

static void f_xent(shctx *c)
{
	sh f;
	ge_sh_in(c, 0, &f);
	if (!strcmp(c->type, "SoftmaxCrossEntropyWithLogits")) {
		sh l, b;
		ge_sh_in(c, 1, &l);
		if (!ge_sh_broadcast(&f, &l, &b))
			f = b;
	}
	sh_ranked(OUT(0), 1);
	if (f.rank == 2) {
		OUT(0)->d[0] = f.d[0];
		*OUT(1) = f;
	} else {
		sh_ranked(OUT(1), 2);
	}
}

static void f_topk(shctx *c)
{
	sh x;
	int64_t k = -1;
	ge_sh_in(c, 0, &x);
	if (c->nin > 1) {
		if (!ge_sh_in_scalar(c, 1, &k))
			k = -1;
	} else {
		k = ge_sh_attr_int(c, "k", -1);
	}
	if (x.rank < 1) {
		sh_unknown(OUT(0));
		sh_unknown(OUT(1));
		return;
	}
	x.d[x.rank - 1] = k;
	*OUT(0) = x;
	*OUT(1) = x;
}

static void f_where(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 2);
	OUT(0)->d[1] = x.rank;
	c->reason = GE_SHAPE_DATA;
}

static void f_in_top_k(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	sh_ranked(OUT(0), 1);
	if (x.rank == 2)
		OUT(0)->d[0] = x.d[0];
}

static void f_bias_add_grad(shctx *c)
{
	sh x;
	ge_sh_in(c, 0, &x);
	int nchw = ge_sh_attr_str_is(c, "data_format", "NCHW", 0);
	sh_ranked(OUT(0), 1);
	if (x.rank >= 2)
		OUT(0)->d[0] = x.d[nchw ? 1 : x.rank - 1];
}

static void f_unknown_data(shctx *c)
{
	c->reason = GE_SHAPE_DATA;
}

static void f_none(shctx *c)
{
	(void)c;
}

/* ------------------------------------------------------------ table */

void ge_shape_strided_slice(shctx *c); /* shapes_slice.c */
void ge_shape_const(shctx *c);

static void f_const(shctx *c)
{
	ge_shape_const(c);
}

static struct ge_shape_entry table[] = {
	/* sources */
	{"Const", f_const}, {"HostConst", f_const},
	{"Placeholder", f_shape_attr}, {"PlaceholderV2", f_shape_attr},
	{"PlaceholderWithDefault", f_shape_attr}, {"VariableV2", f_shape_attr},
	{"Variable", f_shape_attr}, {"TemporaryVariable", f_shape_attr},
	{"VarHandleOp", f_scalar_all},
	{"Fill", f_fill}, {"Range", f_range}, {"LinSpace", f_linspace},
	{"RandomUniform", f_from_shape_input0},
	{"RandomStandardNormal", f_from_shape_input0},
	{"TruncatedNormal", f_from_shape_input0},
	{"RandomUniformInt", f_from_shape_input0},
	{"Conv2DBackpropInput", f_from_shape_input0},
	{"Conv2DBackpropFilter", f_from_shape_input1},
	{"SparseToDense", f_from_shape_input1},
	{"BroadcastTo", f_broadcast_to},
	/* identity-like: shape and value pass through */
	{"Identity", f_same}, {"StopGradient", f_same},
	{"PreventGradient", f_same}, {"Snapshot", f_same},
	{"RefIdentity", f_same}, {"Enter", f_same}, {"RefEnter", f_same},
	{"Exit", f_same}, {"RefExit", f_same}, {"NextIteration", f_same},
	{"RefNextIteration", f_same}, {"LoopCond", f_same},
	{"CheckNumerics", f_same}, {"Print", f_same},
	{"EnsureShape", f_same}, {"IdentityN", f_identity_n},
	{"Cast", f_cast}, {"Switch", f_switch}, {"RefSwitch", f_switch},
	{"Merge", f_merge}, {"RefMerge", f_merge},
	/* unary element-wise */
	{"Relu", f_unary}, {"Relu6", f_unary}, {"Elu", f_unary},
	{"Selu", f_unary}, {"Sigmoid", f_unary}, {"Tanh", f_unary},
	{"Softplus", f_unary}, {"Softsign", f_unary}, {"Neg", f_unary},
	{"Abs", f_unary}, {"Exp", f_unary}, {"Expm1", f_unary},
	{"Log", f_unary}, {"Log1p", f_unary}, {"Sqrt", f_unary},
	{"Rsqrt", f_unary}, {"Square", f_unary}, {"Reciprocal", f_unary},
	{"Inv", f_unary}, {"Floor", f_unary}, {"Ceil", f_unary},
	{"Round", f_unary}, {"Rint", f_unary}, {"Sign", f_unary},
	{"Sin", f_unary}, {"Cos", f_unary}, {"Tan", f_unary},
	{"Asin", f_unary}, {"Acos", f_unary}, {"Atan", f_unary},
	{"Sinh", f_unary}, {"Cosh", f_unary}, {"Erf", f_unary},
	{"Erfc", f_unary}, {"LeakyRelu", f_unary}, {"Softmax", f_unary},
	{"LogSoftmax", f_unary}, {"ZerosLike", f_unary},
	{"OnesLike", f_unary}, {"IsNan", f_unary}, {"IsFinite", f_unary},
	{"IsInf", f_unary}, {"LogicalNot", f_unary}, {"Invert", f_unary},
	{"LRN", f_unary}, {"ClipByValue", f_unary}, {"Cumsum", f_unary},
	{"Cumprod", f_unary}, {"ReverseV2", f_unary},
	{"FakeQuantWithMinMaxVars", f_unary},
	{"FakeQuantWithMinMaxArgs", f_unary}, {"Assign", f_unary},
	{"AssignAdd", f_unary}, {"Dequantize", f_unary}, {"AssignSub", f_unary},
	{"BatchNormWithGlobalNormalization", f_unary},
	{"ReluGrad", f_unary}, {"Relu6Grad", f_unary},
	{"SigmoidGrad", f_unary}, {"TanhGrad", f_unary},
	{"EluGrad", f_unary}, {"SoftplusGrad", f_unary},
	{"RsqrtGrad", f_unary}, {"SqrtGrad", f_unary},
	{"ReciprocalGrad", f_unary}, {"LRNGrad", f_unary},
	{"MaxPoolGrad", f_unary}, {"Roll", f_unary},
	{"MatrixBandPart", f_unary}, {"MatrixSetDiag", f_unary},
	{"ApplyGradientDescent", f_unary}, {"ApplyMomentum", f_unary},
	{"ApplyAdam", f_unary}, {"ApplyRMSProp", f_unary},
	{"ApplyAdagrad", f_unary},
	/* binary broadcasting */
	{"Add", f_binary}, {"AddV2", f_binary}, {"Sub", f_binary},
	{"Mul", f_binary}, {"Div", f_binary}, {"RealDiv", f_binary},
	{"DivNoNan", f_binary}, {"FloorDiv", f_binary}, {"FloorMod", f_binary},
	{"TruncateDiv", f_binary}, {"TruncateMod", f_binary},
	{"Mod", f_binary}, {"Maximum", f_binary}, {"Minimum", f_binary},
	{"Pow", f_binary}, {"SquaredDifference", f_binary},
	{"Equal", f_binary}, {"NotEqual", f_binary}, {"Less", f_binary},
	{"LessEqual", f_binary}, {"Greater", f_binary},
	{"GreaterEqual", f_binary}, {"LogicalAnd", f_binary},
	{"LogicalOr", f_binary}, {"Atan2", f_binary},
	{"BitwiseAnd", f_binary}, {"BitwiseOr", f_binary},
	{"BitwiseXor", f_binary}, {"MulNoNan", f_binary},
	{"Xdivy", f_binary}, {"Xlogy", f_binary},
	{"ApproximateEqual", f_binary}, {"BroadcastGradientArgs", f_none},
	{"AddN", f_merge_inputs}, {"Select", f_select},
	{"SelectV2", f_selectv2},
	/* linear algebra, convolution, normalization */
	{"MatMul", f_matmul}, {"BatchMatMul", f_batch_matmul},
	{"BatchMatMulV2", f_batch_matmul}, {"BatchMatMulV3", f_batch_matmul},
	{"Conv2D", f_conv2d}, {"DepthwiseConv2dNative", f_depthwise},
	{"_FusedConv2D", f_conv2d},
	{"FusedDepthwiseConv2dNative", f_depthwise},
	{"MaxPool", f_pool}, {"AvgPool", f_pool}, {"MaxPoolV2", f_pool},
	{"MaxPoolWithArgmax", f_pool}, {"BiasAdd", f_bias_add},
	{"BiasAddV1", f_bias_add}, {"BiasAddGrad", f_bias_add_grad},
	{"FusedBatchNorm", f_fused_bn}, {"FusedBatchNormV2", f_fused_bn},
	{"FusedBatchNormV3", f_fused_bn},
	{"DepthToSpace", f_d2s}, {"SpaceToDepth", f_s2d},
	{"ResizeBilinear", f_resize}, {"ResizeNearestNeighbor", f_resize},
	{"ResizeBicubic", f_resize}, {"ResizeArea", f_resize},
	/* shape manipulation */
	{"Shape", f_shape}, {"ShapeN", f_shape_n}, {"Size", f_size},
	{"Rank", f_rank}, {"Reshape", f_reshape}, {"Squeeze", f_squeeze},
	{"ExpandDims", f_expand_dims}, {"Transpose", f_transpose},
	{"ConcatV2", f_concatv2}, {"Concat", f_concat}, {"Pack", f_pack},
	{"Unpack", f_unpack}, {"Split", f_split}, {"SplitV", f_splitv},
	{"Slice", f_slice}, {"StridedSlice", ge_shape_strided_slice},
	{"Pad", f_pad}, {"PadV2", f_pad}, {"MirrorPad", f_pad},
	{"Tile", f_tile}, {"Gather", f_gather}, {"GatherV2", f_gatherv2},
	{"GatherNd", f_gather_nd},
	{"Sum", f_reduce}, {"Mean", f_reduce}, {"Max", f_reduce},
	{"Min", f_reduce}, {"Prod", f_reduce}, {"All", f_reduce},
	{"Any", f_reduce}, {"EuclideanNorm", f_reduce},
	{"ArgMax", f_argmax}, {"ArgMin", f_argmax}, {"OneHot", f_one_hot},
	{"L2Loss", f_scalar_all},
	{"SoftmaxCrossEntropyWithLogits", f_xent},
	{"SparseSoftmaxCrossEntropyWithLogits", f_xent},
	{"TopKV2", f_topk}, {"TopK", f_topk}, {"Where", f_where},
	{"InTopK", f_in_top_k}, {"InTopKV2", f_in_top_k},
	{"Unique", f_unknown_data}, {"NoOp", f_none},
	{"ScalarSummary", f_scalar_all}, {"HistogramSummary", f_scalar_all},
	{"MergeSummary", f_scalar_all},
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct ge_shape_entry *)a)->name,
		      ((const struct ge_shape_entry *)b)->name);
}

#define NTABLE (sizeof table / sizeof table[0])
static struct ge_shape_entry all[NTABLE + 64];
static size_t nall;

shape_fn ge_shape_fn_find(const char *type)
{
	static int sorted;
	static const char *last_type;
	static char last_name[64];
	static shape_fn last_fn;
	if (!sorted) {
		memcpy(all, table, sizeof table);
		nall = NTABLE;
		for (size_t i = 0; ge_shape_handle_fns[i].name && nall < NTABLE + 64; i++)
			all[nall++] = ge_shape_handle_fns[i];
		qsort(all, nall, sizeof all[0], cmp_entry);
		sorted = 1;
	}
	if (type == last_type && !strcmp(type, last_name))
		return last_fn;
	struct ge_shape_entry key = {type, NULL};
	struct ge_shape_entry *e = bsearch(&key, all, nall, sizeof all[0],
					   cmp_entry);
	last_type = NULL;
	if (strlen(type) < sizeof last_name) {
		strcpy(last_name, type);
		last_type = type;
	}
	last_fn = e ? e->fn : NULL;
	return last_fn;
}
