/*
 * exec/k_array.c: kernels that move elements without arithmetic:
 * ConcatV2, Concat, Pack, Unpack, Split, SplitV, Slice, StridedSlice
 * (every mask), Tile, Pad, PadV2, MirrorPad, ReverseV2.
 *
 * Every index, begin + size and product of dims is checked before a
 * byte is written; strings are copied, resources referenced.
 */
#include <inttypes.h>
#include <string.h>

#include "exec/kernel_impl.h"

#define MAXV (GE_SHAPE_MAXRANK * 2)

static int deep(int dt)
{
	return dt == DT_STRING || dt == DT_RESOURCE || dt == DT_VARIANT;
}

/* Copies the box of x starting at beg with steps str and extents size
 * into o (whose element count is the product of size). */
static int box(ge_kctx *k, const ge_xt *x, const int64_t *beg,
	       const int64_t *str, const int64_t *size, ge_xt *o)
{
	int r = x->rank;
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0}, src = 0;
	kstrides(r, x->dims, xs);
	for (int i = 0; i < r; i++)
		src += beg[i] * xs[i];
	if (o->n == 0)
		return GE_OK;
	size_t es = ge_xt_elem_size(x->dtype);
	int last = r - 1;
	int64_t len = r ? size[last] : 1, st = r ? str[last] * xs[last] : 0;
	for (int64_t i = 0;;) {
		if (deep(x->dtype)) {
			for (int64_t j = 0; j < len; j++)
				if (ge_kcopy_elem(o, i + j, x, src + j * st))
					return ge_k_fail(k, "out of memory");
		} else if (st == 1) {
			memcpy((char *)o->data + (size_t)i * es,
			       (const char *)x->data + (size_t)src * es,
			       (size_t)len * es);
		} else {
			for (int64_t j = 0; j < len; j++)
				memcpy((char *)o->data + (size_t)(i + j) * es,
				       (const char *)x->data +
					       (size_t)(src + j * st) * es, es);
		}
		i += len;
		int d = last - 1;
		for (; d >= 0; d--) {
			src += str[d] * xs[d];
			if (++idx[d] < size[d])
				break;
			src -= str[d] * xs[d] * size[d];
			idx[d] = 0;
		}
		if (d < 0)
			return GE_OK;
	}
}

/* ---------------------------------------------------------------- concat */

/* Output 0: the inputs in[0..n-1] joined along axis a. */
static int concat(ge_kctx *k, ge_xt *const *in, int n, int64_t a)
{
	char s1[128], s2[128];
	const ge_xt *x0 = in[0];
	if (x0->rank == 0)
		return ge_k_fail(k, "cannot concatenate scalars");
	if (ge_k_axis(k, a, x0->rank, &a))
		return GE_EINVAL;
	int64_t dims[GE_SHAPE_MAXRANK];
	memcpy(dims, x0->dims, sizeof dims);
	dims[a] = 0;
	for (int i = 0; i < n; i++) {
		const ge_xt *x = in[i];
		int okd = x && x->dtype == x0->dtype && x->rank == x0->rank;
		for (int d = 0; okd && d < x0->rank; d++)
			okd = d == a || x->dims[d] == x0->dims[d];
		if (!okd)
			return ge_k_fail(k, "input %d is %s, input 0 %s", i,
					 x ? ge_xt_describe(x, s1, sizeof s1)
					   : "missing",
					 ge_xt_describe(x0, s2, sizeof s2));
		if (dims[a] > INT64_MAX - x->dims[a])
			return ge_k_fail(k, "the result's size overflows");
		dims[a] += x->dims[a];
	}
	int64_t total = kcount(x0->rank, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x0->dtype, x0->rank, dims);
	if (!o)
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < a; d++)
		outer *= dims[d];
	for (int d = (int)a + 1; d < x0->rank; d++)
		inner *= dims[d];
	int64_t orow = dims[a] * inner, off = 0;
	for (int i = 0; i < n; i++) {
		int64_t row = in[i]->dims[a] * inner;
		for (int64_t p = 0; p < outer && row; p++)
			if (ge_kcopy_elems(o, p * orow + off, in[i], p * row, row))
				return ge_k_fail(k, "out of memory");
		off += row;
	}
	return GE_OK;
}

static int k_concat(ge_kctx *k)
{
	int64_t a;
	int v2 = !strcmp(k->type, "ConcatV2");
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	int ai = v2 ? k->nin - 1 : 0;
	if (ge_k_scalar_int(k, ai, &a))
		return GE_EINVAL;
	return concat(k, k->in + (v2 ? 0 : 1), k->nin - 1, a);
}

/* Pack: the inputs stacked along a new axis. */
static int k_pack(ge_kctx *k)
{
	char s1[128], s2[128];
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x0 = k->in[0];
	int64_t a = ge_k_attr_int(k, "axis", 0);
	if (x0->rank >= GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "rank %d is already the most", x0->rank);
	if (ge_k_axis(k, a, x0->rank + 1, &a))
		return GE_EINVAL;
	for (int i = 1; i < k->nin; i++) {
		const ge_xt *x = k->in[i];
		if (!x || x->dtype != x0->dtype || x->rank != x0->rank ||
		    memcmp(x->dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank))
			return ge_k_fail(k, "input %d is %s, input 0 %s", i,
					 x ? ge_xt_describe(x, s1, sizeof s1)
					   : "missing",
					 ge_xt_describe(x0, s2, sizeof s2));
	}
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = 0;
	for (int i = 0; i <= x0->rank; i++) {
		if (i == a)
			dims[r++] = k->nin;
		if (i < x0->rank)
			dims[r++] = x0->dims[i];
	}
	int64_t total = kcount(r, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x0->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < a; d++)
		outer *= x0->dims[d];
	for (int d = (int)a; d < x0->rank; d++)
		inner *= x0->dims[d];
	for (int i = 0; i < k->nin; i++)
		for (int64_t p = 0; p < outer && inner; p++)
			if (ge_kcopy_elems(o, (p * k->nin + i) * inner, k->in[i],
					p * inner, inner))
				return ge_k_fail(k, "out of memory");
	return GE_OK;
}

/* ---------------------------------------------------------------- split */

/* Outputs 0..n-1: x cut along axis a into pieces of sizes[i]. */
static int split(ge_kctx *k, const ge_xt *x, int64_t a, const int64_t *sizes,
		 int n)
{
	if (n > k->nout)
		return ge_k_fail(k, "makes %d pieces but has %d outputs", n,
				 k->nout);
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < a; d++)
		outer *= x->dims[d];
	for (int d = (int)a + 1; d < x->rank; d++)
		inner *= x->dims[d];
	int64_t off = 0, xrow = x->dims[a] * inner;
	for (int i = 0; i < n; i++) {
		int64_t dims[GE_SHAPE_MAXRANK];
		memcpy(dims, x->dims, sizeof dims);
		dims[a] = sizes[i];
		ge_xt *o = ge_k_out(k, i, x->dtype, x->rank, dims);
		if (!o)
			return GE_EINVAL;
		int64_t row = sizes[i] * inner;
		for (int64_t p = 0; p < outer && row; p++)
			if (ge_kcopy_elems(o, p * row, x, p * xrow + off, row))
				return ge_k_fail(k, "out of memory");
		off += row;
	}
	return ge_kall_set(k);
}

static int k_split(ge_kctx *k)
{
	int64_t a, sizes[1024];
	if (ge_k_need(k, 2) || ge_k_scalar_int(k, 0, &a))
		return GE_EINVAL;
	const ge_xt *x = k->in[1];
	int64_t n = ge_k_attr_int(k, "num_split", k->nout);
	if (ge_k_axis(k, a, x->rank, &a))
		return GE_EINVAL;
	if (n <= 0 || n > 1024 || x->dims[a] % n)
		return ge_k_fail(k, "cannot split dimension %" PRId64 " of size "
				 "%" PRId64 " into %" PRId64 " equal pieces", a,
				 x->dims[a], n);
	for (int i = 0; i < n; i++)
		sizes[i] = x->dims[a] / n;
	return split(k, x, a, sizes, (int)n);
}

static int k_splitv(ge_kctx *k)
{
	int64_t a, sizes[1024];
	if (ge_k_need(k, 3) || ge_k_scalar_int(k, 2, &a))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->rank == 0)
		return ge_k_fail(k, "cannot split a scalar");
	if (ge_k_axis(k, a, x->rank, &a))
		return GE_EINVAL;
	int n = ge_k_ints(k, 1, sizes, 1024);
	if (n < 0)
		return GE_EINVAL;
	int unknown = -1;
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		if (sizes[i] == -1 && unknown < 0) {
			unknown = i;
			continue;
		}
		if (sizes[i] < 0 || sizes[i] > x->dims[a] - sum)
			return ge_k_fail(k, "size_splits do not fit dimension "
					 "%" PRId64 " of size %" PRId64, a,
					 x->dims[a]);
		sum += sizes[i];
	}
	if (unknown >= 0)
		sizes[unknown] = x->dims[a] - sum;
	else if (sum != x->dims[a])
		return ge_k_fail(k, "size_splits add up to %" PRId64 ", "
				 "dimension %" PRId64 " is %" PRId64, sum, a,
				 x->dims[a]);
	return split(k, x, a, sizes, n);
}

static int k_unpack(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int64_t a = ge_k_attr_int(k, "axis", 0);
	if (x->rank == 0)
		return ge_k_fail(k, "cannot unpack a scalar");
	if (ge_k_axis(k, a, x->rank, &a))
		return GE_EINVAL;
	int64_t n = x->dims[a];
	if (n > k->nout)
		return ge_k_fail(k, "makes %" PRId64 " pieces but has %d "
				 "outputs", n, k->nout);
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int64_t dims[GE_SHAPE_MAXRANK], outer = 1, inner = 1;
	int r = 0;
	for (int d = 0; d < x->rank; d++) {
		if (d != a)
			dims[r++] = x->dims[d];
		if (d < a)
			outer *= x->dims[d];
		if (d > a)
			inner *= x->dims[d];
	}
	for (int64_t i = 0; i < n; i++) {
		ge_xt *o = ge_k_out(k, (int)i, x->dtype, r, dims);
		if (!o)
			return GE_EINVAL;
		for (int64_t p = 0; p < outer && inner; p++)
			if (ge_kcopy_elems(o, p * inner, x, (p * n + i) * inner,
					inner))
				return ge_k_fail(k, "out of memory");
	}
	return ge_kall_set(k);
}

/* ---------------------------------------------------------------- slices */

static int k_slice(ge_kctx *k)
{
	int64_t b[GE_SHAPE_MAXRANK], s[GE_SHAPE_MAXRANK],
		one[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int nb = ge_k_ints(k, 1, b, GE_SHAPE_MAXRANK);
	int ns = nb < 0 ? -1 : ge_k_ints(k, 2, s, GE_SHAPE_MAXRANK);
	if (ns < 0)
		return GE_EINVAL;
	if (nb != x->rank || ns != x->rank)
		return ge_k_fail(k, "begin and size must have %d elements, have "
				 "%d and %d", x->rank, nb, ns);
	for (int d = 0; d < x->rank; d++) {
		if (s[d] == -1 && b[d] >= 0 && b[d] <= x->dims[d])
			s[d] = x->dims[d] - b[d];
		if (b[d] < 0 || s[d] < 0 || b[d] > x->dims[d] ||
		    s[d] > x->dims[d] - b[d])
			return ge_k_fail(k, "begin %" PRId64 " and size %" PRId64
					 " are outside dimension %d of size %"
					 PRId64, b[d], s[d], d, x->dims[d]);
		one[d] = 1;
	}
	int64_t n = kcount(x->rank, s);
	if (ge_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, s);
	return o ? box(k, x, b, one, s, o) : GE_EINVAL;
}

enum { NEW_AXIS = -1, SHRINK = -2 };

/* TensorFlow's strided slice: the sparse spec (begin, end, strides and
 * masks over n entries, with ellipsis and new axes) made dense over the
 * input's rank, each dimension canonicalized and clamped. */
typedef struct sspec {
	int64_t beg[GE_SHAPE_MAXRANK], str[GE_SHAPE_MAXRANK],
		size[GE_SHAPE_MAXRANK];
	int orank;
	int64_t odims[GE_SHAPE_MAXRANK];
} sspec;

static int dense_spec(ge_kctx *k, const ge_xt *x, int n, const int64_t *b,
		      const int64_t *e, const int64_t *s, sspec *sp)
{
	uint64_t bm = (uint64_t)ge_k_attr_int(k, "begin_mask", 0),
		 em = (uint64_t)ge_k_attr_int(k, "end_mask", 0),
		 elm = (uint64_t)ge_k_attr_int(k, "ellipsis_mask", 0),
		 nam = (uint64_t)ge_k_attr_int(k, "new_axis_mask", 0),
		 sam = (uint64_t)ge_k_attr_int(k, "shrink_axis_mask", 0);
	int r = x->rank;
	int64_t db[GE_SHAPE_MAXRANK] = {0}, de[GE_SHAPE_MAXRANK] = {0},
		ds[GE_SHAPE_MAXRANK];
	int dbm[GE_SHAPE_MAXRANK] = {0}, dem[GE_SHAPE_MAXRANK] = {0},
	    dsh[GE_SHAPE_MAXRANK] = {0};
	int gather[MAXV + GE_SHAPE_MAXRANK], ng = 0;
	for (int i = 0; i < r; i++)
		ds[i] = 1;
	if (elm & (elm - 1))
		return ge_k_fail(k, "more than one ellipsis");
	int sparse = n, full = 0;
	if (!(elm & (((uint64_t)1 << n) - 1))) {
		/* no ellipsis among the n entries (a bit past them does not
		 * count): an implied one at the end */
		elm |= (uint64_t)1 << n;
		sparse = n + 1;
	}
	for (int i = 0; i < sparse; i++) {
		uint64_t bit = (uint64_t)1 << i;
		if (elm & bit) {
			int after = 0;
			for (int j = i + 1; j < sparse; j++)
				after += (nam >> j) & 1;
			int next = r - (sparse - i) + 1 + after;
			if (next > r)
				next = r;
			for (; full < next; full++) {
				dbm[full] = dem[full] = 1;
				gather[ng++] = full;
			}
			continue;
		}
		if (nam & bit) {
			gather[ng++] = NEW_AXIS;
			continue;
		}
		if (full >= r)
			return ge_k_fail(k, "slice index %d of a rank %d input",
					 i, r);
		db[full] = b[i];
		de[full] = e[i];
		ds[full] = s[i];
		dbm[full] = (bm & bit) != 0;
		dem[full] = (em & bit) != 0;
		dsh[full] = (sam & bit) != 0;
		gather[ng++] = dsh[full] ? SHRINK : full;
		full++;
	}
	for (int i = 0; i < r; i++) {
		int64_t dim = x->dims[i], st = ds[i];
		if (st == 0)
			return ge_k_fail(k, "stride %d is 0", i);
		sp->str[i] = st;
		if (dsh[i]) {
			int64_t f = db[i] < 0 ? db[i] + dim : db[i];
			if (f < 0 || f >= dim)
				return ge_k_fail(k, "index %" PRId64 " is out of "
						 "bounds for dimension %d of size "
						 "%" PRId64, db[i], i, dim);
			sp->beg[i] = f;
			sp->size[i] = 1;
			sp->str[i] = 1;
			continue;
		}
		int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
		int64_t bi, ei;
		if (dbm[i])
			bi = st > 0 ? lo : hi;
		else {
			bi = db[i] < 0 ? db[i] + dim : db[i];
			bi = bi < lo ? lo : bi > hi ? hi : bi;
		}
		if (dem[i])
			ei = st > 0 ? hi : lo;
		else {
			ei = de[i] < 0 ? de[i] + dim : de[i];
			ei = ei < lo ? lo : ei > hi ? hi : ei;
		}
		int64_t len = ei - bi;
		sp->beg[i] = bi;
		if (len == 0 || (len < 0) != (st < 0))
			sp->size[i] = 0;
		else
			sp->size[i] = len / st + (len % st != 0);
		if (sp->size[i] <= 1)
			sp->str[i] = 1; /* no step is taken */
	}
	sp->orank = 0;
	for (int g = 0; g < ng; g++) {
		if (gather[g] == SHRINK)
			continue;
		if (sp->orank >= GE_SHAPE_MAXRANK)
			return ge_k_fail(k, "the result has too many dimensions");
		sp->odims[sp->orank++] = gather[g] == NEW_AXIS
						 ? 1 : sp->size[gather[g]];
	}
	return GE_OK;
}

static int k_strided_slice(ge_kctx *k)
{
	int64_t b[MAXV], e[MAXV], s[MAXV];
	if (ge_k_need(k, 4))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int n = ge_k_ints(k, 1, b, MAXV);
	int ne = n < 0 ? -1 : ge_k_ints(k, 2, e, MAXV);
	int ns = ne < 0 ? -1 : ge_k_ints(k, 3, s, MAXV);
	if (ns < 0)
		return GE_EINVAL;
	if (ne != n || ns != n)
		return ge_k_fail(k, "begin, end and strides must have one "
				 "length");
	if (n >= 62)
		return ge_k_fail(k, "too many slice entries");
	sspec sp;
	if (dense_spec(k, x, n, b, e, s, &sp))
		return GE_EINVAL;
	int64_t cnt = kcount(x->rank, sp.size);
	if (ge_k_work(k, (uint64_t)cnt))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, sp.size);
	if (!o || box(k, x, sp.beg, sp.str, sp.size, o))
		return GE_EINVAL;
	o->rank = sp.orank;
	memcpy(o->dims, sp.odims, sizeof o->dims);
	return GE_OK;
}

static int k_reverse(ge_kctx *k)
{
	int64_t ax[GE_SHAPE_MAXRANK], beg[GE_SHAPE_MAXRANK],
		str[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int na = ge_k_ints(k, 1, ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		return GE_EINVAL;
	for (int d = 0; d < x->rank; d++) {
		beg[d] = 0;
		str[d] = 1;
	}
	for (int i = 0; i < na; i++) {
		int64_t a;
		if (ge_k_axis(k, ax[i], x->rank, &a))
			return GE_EINVAL;
		if (str[a] < 0)
			return ge_k_fail(k, "axis %" PRId64 " is given twice", a);
		str[a] = -1;
		beg[a] = x->dims[a] ? x->dims[a] - 1 : 0;
	}
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, x->dims);
	return o ? box(k, x, beg, str, x->dims, o) : GE_EINVAL;
}

/* ---------------------------------------------------------------- tile, pad */

static int k_tile(ge_kctx *k)
{
	int64_t m[GE_SHAPE_MAXRANK], dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int n = ge_k_ints(k, 1, m, GE_SHAPE_MAXRANK);
	if (n < 0)
		return GE_EINVAL;
	if (n != x->rank)
		return ge_k_fail(k, "multiples has %d elements, the input rank "
				 "%d", n, x->rank);
	for (int d = 0; d < n; d++) {
		if (m[d] < 0 || (m[d] && x->dims[d] > INT64_MAX / m[d]))
			return ge_k_fail(k, "multiple %" PRId64 " of dimension "
					 "%d is negative or overflows", m[d], d);
		dims[d] = x->dims[d] * m[d];
	}
	int64_t total = kcount(n, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, n, dims);
	if (!o)
		return GE_EINVAL;
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(n, x->dims, xs);
	if (total == 0)
		return GE_OK;
	/* row by row: an output row is the input's last-dimension row
	 * repeated m[last] times */
	int64_t row = n ? x->dims[n - 1] : 1, reps = n ? m[n - 1] : 1;
	for (int64_t i = 0; i < total;) {
		int64_t src = 0;
		for (int d = 0; d < n - 1; d++)
			src += (idx[d] % x->dims[d]) * xs[d];
		for (int64_t r = 0; r < reps; r++, i += row)
			if (ge_kcopy_elems(o, i, x, src, row))
				return ge_k_fail(k, "out of memory");
		for (int d = n - 2; d >= 0; d--) {
			if (++idx[d] < dims[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* Constant padding into o (zeros, or pv's value): the fill, then each
 * row of x copied into place. */
static int pad_constant(ge_kctx *k, const ge_xt *x, const ge_xt *pv,
			const int64_t *pads, ge_xt *o)
{
	int r = x->rank;
	int64_t os[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(r, o->dims, os);
	for (int64_t i = 0; pv && i < o->n; i++)
		if (ge_kcopy_elem(o, i, pv, 0))
			return ge_k_fail(k, "out of memory");
	if (x->n == 0)
		return GE_OK;
	int64_t row = r ? x->dims[r - 1] : 1, lead = r ? pads[2 * (r - 1)] : 0;
	for (int64_t src = 0; src < x->n; src += row) {
		int64_t dst = lead;
		for (int d = 0; d < r - 1; d++)
			dst += (idx[d] + pads[2 * d]) * os[d];
		if (ge_kcopy_elems(o, dst, x, src, row))
			return ge_k_fail(k, "out of memory");
		for (int d = r - 2; d >= 0; d--) {
			if (++idx[d] < x->dims[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* Pad, PadV2 (constant), MirrorPad (REFLECT or SYMMETRIC). */
static int k_pad(ge_kctx *k)
{
	int64_t pads[GE_SHAPE_MAXRANK * 2], dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0], *pv = NULL;
	int mirror = !strcmp(k->type, "MirrorPad");
	int refl = mirror && ge_k_attr_str_is(k, "mode", "REFLECT", 0);
	if (mirror && !refl && !ge_k_attr_str_is(k, "mode", "SYMMETRIC", 0))
		return ge_k_fail(k, "mode must be REFLECT or SYMMETRIC");
	if (!strcmp(k->type, "PadV2")) {
		if (ge_k_need(k, 3))
			return GE_EINVAL;
		pv = k->in[2];
		if (pv->dtype != x->dtype || pv->n != 1)
			return ge_k_fail(k, "constant_values must be a scalar "
					 "of the input's dtype");
	}
	const ge_xt *p = k->in[1];
	if (p->rank != 2 || p->dims[0] != x->rank || p->dims[1] != 2)
		return ge_k_fail(k, "paddings must be [%d,2]", x->rank);
	if (ge_kints_any(k, 1, pads, GE_SHAPE_MAXRANK * 2) < 0)
		return GE_EINVAL;
	for (int d = 0; d < x->rank; d++) {
		int64_t a = pads[2 * d], b = pads[2 * d + 1], lim = INT64_MAX;
		if (mirror)
			lim = x->dims[d] - refl;
		if (a < 0 || b < 0 || a > lim || b > lim ||
		    x->dims[d] > INT64_MAX - a - b)
			return ge_k_fail(k, "paddings %" PRId64 ", %" PRId64
					 " do not fit dimension %d of size %"
					 PRId64, a, b, d, x->dims[d]);
		dims[d] = x->dims[d] + a + b;
	}
	int64_t total = kcount(x->rank, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, dims);
	if (!o)
		return GE_EINVAL;
	if (!mirror)
		return pad_constant(k, x, pv, pads, o);
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(x->rank, x->dims, xs);
	for (int64_t i = 0; i < total; i++) {
		int64_t src = 0;
		int inside = 1;
		for (int d = 0; d < x->rank; d++) {
			int64_t j = idx[d] - pads[2 * d], n = x->dims[d];
			if (j < 0 || j >= n) {
				if (!mirror) {
					inside = 0;
					break;
				}
				j = j < 0 ? (refl ? -j : -j - 1)
					  : (refl ? 2 * n - 2 - j : 2 * n - 1 - j);
			}
			src += j * xs[d];
		}
		int rc = inside ? ge_kcopy_elem(o, i, x, src)
			 : pv ? ge_kcopy_elem(o, i, pv, 0) : GE_OK;
		if (rc)
			return ge_k_fail(k, "out of memory");
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++idx[d] < dims[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

const ge_kdef ge_kernels_array[] = {
	{"ConcatV2", k_concat, 0}, {"Concat", k_concat, 0},
	{"Pack", k_pack, 0}, {"Unpack", k_unpack, 0},
	{"Split", k_split, 0}, {"SplitV", k_splitv, 0},
	{"Slice", k_slice, 0}, {"StridedSlice", k_strided_slice, 0},
	{"ReverseV2", k_reverse, 0}, {"Tile", k_tile, 0},
	{"Pad", k_pad, 0}, {"PadV2", k_pad, 0}, {"MirrorPad", k_pad, 0},
	{NULL, NULL, 0},
};
