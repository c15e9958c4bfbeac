/*
 * exec/k_list.c: TensorList kernels, as TF2 loops (While bodies, Keras
 * RNN layers) use them.
 *
 * A list is a variant scalar whose element is a klist object: the element
 * dtype, the element shape as far as it is known, and the items, each a
 * tensor or "not set" (a reserved slot: read as zeros of the element
 * shape, which must then be fully known).  Lists have value semantics:
 * an op that changes a list returns a new variant, and changes the list
 * object in place only when nothing else can see it (the input tensor
 * is unique and holds the one reference to the object); otherwise it
 * copies the item pointers (the items themselves are immutable tensors,
 * shared).  So a loop body's SetItem never changes the list another
 * iteration or a caller still reads.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kstate.h"

typedef struct klist {
	ge_xobj o;
	int dtype;
	kps shape;
	int64_t max;   /* max_num_elements, -1 when unbounded */
	int64_t n, cap;
	ge_xt **t;     /* n items; NULL: not set */
	ge_xbudget *budget;
	uint64_t charged;
} klist;

static void list_destroy(ge_xobj *o)
{
	klist *l = (klist *)o;
	for (int64_t i = 0; i < l->n; i++)
		ge_xt_unref(l->t[i]);
	ge_xbudget_release(l->budget, l->charged);
	free(l->t);
	free(l);
}

/* Room for cap items, charged to the list's budget. */
static int list_room(ge_kctx *k, klist *l, int64_t cap)
{
	char what[256];
	if (cap <= l->cap)
		return GE_OK;
	if (cap > (int64_t)(SIZE_MAX / 2 / sizeof *l->t))
		return ge_k_fail(k, "a list of %" PRId64 " items is too long",
				 cap);
	int64_t ncap = l->cap * 2 > cap ? l->cap * 2 : cap;
	uint64_t more = (uint64_t)(ncap - l->cap) * sizeof *l->t;
	if (ge_xbudget_mem(l->budget, more, ge_k_what(k, what, sizeof what),
			   k->err)) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	ge_xt **nt = realloc(l->t, (size_t)ncap * sizeof *nt);
	if (!nt) {
		ge_xbudget_release(l->budget, more);
		return ge_k_fail(k, "out of memory for a list of %" PRId64
				 " items", ncap);
	}
	memset(nt + l->cap, 0, (size_t)(ncap - l->cap) * sizeof *nt);
	l->t = nt;
	l->cap = ncap;
	l->charged += more;
	return GE_OK;
}

static klist *list_new(ge_kctx *k, int dtype, const kps *shape, int64_t n)
{
	klist *l = calloc(1, sizeof *l);
	if (!l) {
		ge_k_fail(k, "out of memory");
		return NULL;
	}
	l->o.refs = 1;
	l->o.kind = GE_XOBJ_LIST;
	l->o.destroy = list_destroy;
	l->dtype = dtype;
	l->shape = *shape;
	l->max = -1;
	l->budget = k->budget;
	if (list_room(k, l, n > 4 ? n : 4)) {
		free(l);
		return NULL;
	}
	l->n = n;
	return l;
}

static klist *list_copy(ge_kctx *k, const klist *s)
{
	klist *l = list_new(k, s->dtype, &s->shape, s->n);
	if (!l)
		return NULL;
	l->max = s->max;
	for (int64_t i = 0; i < s->n; i++)
		l->t[i] = ge_xt_ref(s->t[i]);
	return l;
}

/* The list of input i, its element dtype checked against the op's
 * element_dtype attr (when it has one). */
static klist *list_in(ge_kctx *k, int i)
{
	klist *l = (klist *)ge_kst_obj(k, i, DT_VARIANT, GE_XOBJ_LIST,
				    "TensorList");
	if (!l)
		return NULL;
	int want = ge_k_attr_type(k, "element_dtype", l->dtype);
	if (want != l->dtype) {
		ge_k_fail(k, "the list holds %s, the op reads %s",
			  kdt(l->dtype), kdt(want));
		return NULL;
	}
	return l;
}

/* A list the op may change: input i's own object when nothing else sees
 * it, else a copy.  *own says which. */
static klist *list_mut(ge_kctx *k, int i, klist *l, int *own)
{
	*own = ge_xt_unique(k->in[i]) && l->o.refs == 1;
	return *own ? l : list_copy(k, l);
}

/* Output 0 is the changed list. */
static int list_done(ge_kctx *k, int i, klist *l, int own)
{
	if (own) {
		ge_k_forward(k, 0, i);
		return GE_OK;
	}
	return ge_kst_out_obj(k, 0, DT_VARIANT, &l->o);
}

/* A failure after list_mut: drops the copy. */
static int list_abort(klist *l, int own, int rc)
{
	if (!own)
		ge_xobj_unref(&l->o);
	return rc;
}

/* Whether item t may go into l. */
static int item_ok(ge_kctx *k, const klist *l, const ge_xt *t)
{
	char a[96], b[96];
	kps s, m = l->shape;
	if (t->dtype != l->dtype)
		return ge_k_fail(k, "the list holds %s, the item is %s",
				 kdt(l->dtype), kdt(t->dtype));
	ge_kps_of(t, 0, &s);
	if (ge_kps_merge(&m, &s))
		return ge_k_fail(k, "an item of shape %s does not fit the "
				 "list's element shape %s",
				 ge_kps_str(&s, a, sizeof a),
				 ge_kps_str(&l->shape, b, sizeof b));
	return GE_OK;
}

/* The element shape to read items with: the list's, merged with shape
 * input si (when si >= 0) and with the shape of every item set. */
static int read_shape(ge_kctx *k, const klist *l, int si, kps *out)
{
	char a[96], b[96];
	kps in;
	*out = l->shape;
	if (si >= 0) {
		if (ge_kps_input(k, si, &in))
			return GE_EINVAL;
		if (ge_kps_merge(out, &in))
			return ge_k_fail(k, "element shape %s does not match "
					 "the list's %s",
					 ge_kps_str(&in, a, sizeof a),
					 ge_kps_str(&l->shape, b, sizeof b));
	}
	for (int64_t i = 0; i < l->n && !ge_kps_full(out); i++) {
		if (!l->t[i])
			continue;
		ge_kps_of(l->t[i], 0, &in);
		if (ge_kps_merge(out, &in))
			return ge_k_fail(k, "item %" PRId64 " has shape %s, "
					 "others %s", i,
					 ge_kps_str(&in, a, sizeof a),
					 ge_kps_str(out, b, sizeof b));
	}
	return GE_OK;
}

/* The items at idx[0..m-1] stacked into output o, [m] + element shape;
 * unset items are zeros. */
static int stack_items(ge_kctx *k, const klist *l, const int64_t *idx,
		       int64_t m, int si, int o)
{
	char a[96], b[96];
	kps es;
	if (read_shape(k, l, si, &es))
		return GE_EINVAL;
	if (!ge_kps_full(&es))
		return ge_k_fail(k, "the element shape %s is not fully known "
				 "and no item says it",
				 ge_kps_str(&es, a, sizeof a));
	if (es.rank + 1 > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "items of rank %d are too deep", es.rank);
	int64_t dims[GE_SHAPE_MAXRANK], per = kcount(es.rank, es.dims);
	if (per < 0)
		return ge_k_fail(k, "the element shape %s overflows",
				 ge_kps_str(&es, a, sizeof a));
	dims[0] = m;
	for (int i = 0; i < es.rank; i++)
		dims[i + 1] = es.dims[i];
	for (int64_t j = 0; j < m; j++) {
		if (idx[j] < 0 || idx[j] >= l->n)
			return ge_k_fail(k, "index %" PRId64 " is out of range "
					 "for a list of %" PRId64, idx[j],
					 l->n);
		const ge_xt *t = l->t[idx[j]];
		if (t && t->n != per) {
			kps s;
			ge_kps_of(t, 0, &s);
			return ge_k_fail(k, "item %" PRId64 " has shape %s, "
					 "not %s", idx[j],
					 ge_kps_str(&s, a, sizeof a),
					 ge_kps_str(&es, b, sizeof b));
		}
	}
	ge_xt *out = ge_k_out(k, o, l->dtype, es.rank + 1, dims);
	if (!out || ge_k_work(k, (uint64_t)out->n))
		return GE_EINVAL;
	for (int64_t j = 0; j < m; j++) {
		const ge_xt *t = l->t[idx[j]];
		if (t && ge_kst_copy(out, j * per, t, 0, per))
			return ge_k_fail(k, "out of memory");
	}
	return GE_OK;
}

/* A zero item of the list's element shape merged with shape input si. */
static int zero_item(ge_kctx *k, const klist *l, int si, int o)
{
	char a[96];
	kps es;
	if (read_shape(k, l, si, &es))
		return GE_EINVAL;
	if (!ge_kps_full(&es))
		return ge_k_fail(k, "reads an item that was never set, and the "
				 "element shape %s is not fully known",
				 ge_kps_str(&es, a, sizeof a));
	return ge_k_out(k, o, l->dtype, es.rank, es.dims) ? GE_OK : GE_EINVAL;
}

/* ---------------------------------------------------------------- kernels */

/* A new list of n unset items: EmptyTensorList (n 0, a max), Reserve. */
static int k_reserve(ge_kctx *k)
{
	kps es;
	int64_t n = 0, max = -1;
	if (ge_k_need(k, 2) || ge_kps_input(k, 0, &es))
		return GE_EINVAL;
	if (!strcmp(k->type, "EmptyTensorList")) {
		if (ge_k_scalar_int(k, 1, &max))
			return GE_EINVAL;
	} else {
		if (ge_k_scalar_int(k, 1, &n))
			return GE_EINVAL;
		if (n < 0)
			return ge_k_fail(k, "reserves %" PRId64 " items", n);
	}
	int dt = ge_k_attr_type(k, "element_dtype", 0);
	if (!ge_xt_elem_size(dt))
		return ge_k_fail(k, "element_dtype %s is not one the runner "
				 "holds", kdt(dt));
	klist *l = list_new(k, dt, &es, n);
	if (!l)
		return GE_EINVAL;
	l->max = max;
	return ge_kst_out_obj(k, 0, DT_VARIANT, &l->o);
}

/* TensorListFromTensor(tensor, element_shape): one item per row. */
static int k_from_tensor(ge_kctx *k)
{
	char a[96], b[96];
	kps es, rows;
	if (ge_k_need(k, 2) || ge_kps_input(k, 1, &es))
		return GE_EINVAL;
	const ge_xt *t = k->in[0];
	if (t->rank < 1)
		return ge_k_fail(k, "the tensor must have rank 1 or more");
	ge_kps_of(t, 1, &rows);
	kps m = es;
	if (ge_kps_merge(&m, &rows))
		return ge_k_fail(k, "rows of shape %s do not match element "
				 "shape %s", ge_kps_str(&rows, a, sizeof a),
				 ge_kps_str(&es, b, sizeof b));
	int dt = ge_k_attr_type(k, "element_dtype", t->dtype);
	if (dt != t->dtype)
		return ge_k_fail(k, "element_dtype %s but the tensor is %s",
				 kdt(dt), kdt(t->dtype));
	if (ge_k_work(k, (uint64_t)t->n))
		return GE_EINVAL;
	klist *l = list_new(k, dt, &es, t->dims[0]);
	if (!l)
		return GE_EINVAL;
	int64_t per = t->dims[0] ? t->n / t->dims[0] : 0;
	for (int64_t i = 0; i < l->n; i++) {
		ge_xt *r = ge_xt_new(dt, rows.rank, rows.dims, k->budget,
				     k->name, k->err);
		if (!r || ge_kst_copy(r, 0, t, i * per, per)) {
			ge_xt_unref(r);
			ge_xobj_unref(&l->o);
			return r ? ge_k_fail(k, "out of memory") : GE_EINVAL;
		}
		l->t[i] = r;
	}
	return ge_kst_out_obj(k, 0, DT_VARIANT, &l->o);
}

/* TensorListStack(handle, element_shape): [n] + element shape. */
static int k_stack(ge_kctx *k)
{
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 2))
		return GE_EINVAL;
	int64_t want = ge_k_attr_int(k, "num_elements", -1);
	if (want != -1 && want != l->n)
		return ge_k_fail(k, "num_elements is %" PRId64 ", the list "
				 "has %" PRId64, want, l->n);
	int64_t *idx = malloc((size_t)(l->n ? l->n : 1) * sizeof *idx);
	if (!idx)
		return ge_k_fail(k, "out of memory");
	for (int64_t i = 0; i < l->n; i++)
		idx[i] = i;
	int rc = stack_items(k, l, idx, l->n, 1, 0);
	free(idx);
	return rc;
}

/* TensorListGather(handle, indices, element_shape). */
static int k_gather(ge_kctx *k)
{
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *ix = k->in[1];
	if ((ix->dtype != DT_INT32 && ix->dtype != DT_INT64) || ix->rank != 1)
		return ge_k_fail(k, "indices must be an integer vector");
	int64_t *idx = malloc((size_t)(ix->n ? ix->n : 1) * sizeof *idx);
	if (!idx)
		return ge_k_fail(k, "out of memory");
	for (int64_t i = 0; i < ix->n; i++)
		idx[i] = ge_xt_get_int64(ix, i);
	int rc = stack_items(k, l, idx, ix->n, 2, 0);
	free(idx);
	return rc;
}

/* An index input into [0, n). */
static int index_in(ge_kctx *k, int i, int64_t n, int64_t *out)
{
	if (ge_k_scalar_int(k, i, out))
		return GE_EINVAL;
	if (*out < 0 || *out >= n)
		return ge_k_fail(k, "index %" PRId64 " is out of range for a "
				 "list of %" PRId64, *out, n);
	return GE_OK;
}

/* TensorListGetItem(handle, index, element_shape). */
static int k_get_item(ge_kctx *k)
{
	int64_t i;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 3) || index_in(k, 1, l->n, &i))
		return GE_EINVAL;
	if (!l->t[i])
		return zero_item(k, l, 2, 0);
	ge_xt_unref(k->out[0]);
	k->out[0] = ge_xt_ref(l->t[i]);
	return GE_OK;
}

/* TensorListSetItem(handle, index, item). */
static int k_set_item(ge_kctx *k)
{
	int64_t i;
	int own;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 3) || ge_k_scalar_int(k, 1, &i) ||
	    item_ok(k, l, k->in[2]))
		return GE_EINVAL;
	int grow = ge_k_attr_bool(k, "resize_if_index_out_of_bounds", 0);
	if (i < 0 || (i >= l->n && !grow) || i >= KST_MAX_ITEMS)
		return ge_k_fail(k, "index %" PRId64 " is out of range for a "
				 "list of %" PRId64, i, l->n);
	klist *w = list_mut(k, 0, l, &own);
	if (!w)
		return GE_EINVAL;
	if (i >= w->n) {
		if (list_room(k, w, i + 1))
			return list_abort(w, own, GE_EINVAL);
		w->n = i + 1;
	}
	ge_xt_unref(w->t[i]);
	w->t[i] = ge_xt_ref(k->in[2]);
	return list_done(k, 0, w, own);
}

/* TensorListPushBack(handle, tensor). */
static int k_push_back(ge_kctx *k)
{
	int own;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 2) || item_ok(k, l, k->in[1]))
		return GE_EINVAL;
	if (l->max >= 0 && l->n >= l->max)
		return ge_k_fail(k, "the list is full (%" PRId64 " items)",
				 l->max);
	klist *w = list_mut(k, 0, l, &own);
	if (!w)
		return GE_EINVAL;
	if (list_room(k, w, w->n + 1))
		return list_abort(w, own, GE_EINVAL);
	w->t[w->n++] = ge_xt_ref(k->in[1]);
	return list_done(k, 0, w, own);
}

/* TensorListPopBack(handle, element_shape) -> handle, tensor. */
static int k_pop_back(ge_kctx *k)
{
	int own;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 2))
		return GE_EINVAL;
	if (l->n == 0)
		return ge_k_fail(k, "pops from an empty list");
	ge_xt *last = l->t[l->n - 1];
	if (last) {
		ge_xt_unref(k->out[1]);
		k->out[1] = ge_xt_ref(last);
	} else if (zero_item(k, l, 1, 1)) {
		return GE_EINVAL;
	}
	klist *w = list_mut(k, 0, l, &own);
	if (!w) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	ge_xt_unref(w->t[--w->n]);
	w->t[w->n] = NULL;
	return list_done(k, 0, w, own);
}

/* TensorListResize(handle, size). */
static int k_resize(ge_kctx *k)
{
	int64_t n;
	int own;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 2) || ge_k_scalar_int(k, 1, &n))
		return GE_EINVAL;
	if (n < 0)
		return ge_k_fail(k, "resizes to %" PRId64 " items", n);
	klist *w = list_mut(k, 0, l, &own);
	if (!w)
		return GE_EINVAL;
	if (list_room(k, w, n))
		return list_abort(w, own, GE_EINVAL);
	while (w->n > n) {
		ge_xt_unref(w->t[--w->n]);
		w->t[w->n] = NULL;
	}
	w->n = n;
	return list_done(k, 0, w, own);
}

/* TensorListLength(handle) -> int32. */
static int k_length(ge_kctx *k)
{
	klist *l = (klist *)ge_kst_obj(k, 0, DT_VARIANT, GE_XOBJ_LIST,
				    "TensorList");
	if (!l)
		return GE_EINVAL;
	if (l->n > INT32_MAX)
		return ge_k_fail(k, "the list's length overflows int32");
	ge_xt *t = ge_k_out(k, 0, DT_INT32, 0, NULL);
	if (!t)
		return GE_EINVAL;
	((int32_t *)t->data)[0] = (int32_t)l->n;
	return GE_OK;
}

/* TensorListElementShape(handle): -1 for an unknown rank or dim. */
static int k_element_shape(ge_kctx *k)
{
	klist *l = (klist *)ge_kst_obj(k, 0, DT_VARIANT, GE_XOBJ_LIST,
				    "TensorList");
	if (!l)
		return GE_EINVAL;
	int dt = ge_k_attr_type(k, "shape_type", DT_INT32);
	if (dt != DT_INT32 && dt != DT_INT64)
		return ge_k_fail(k, "shape_type must be int32 or int64");
	int64_t d = l->shape.rank < 0 ? 0 : l->shape.rank;
	ge_xt *t = ge_k_out(k, 0, dt, l->shape.rank < 0 ? 0 : 1, &d);
	if (!t)
		return GE_EINVAL;
	for (int64_t i = 0; i < t->n; i++) {
		int64_t v = l->shape.rank < 0 ? -1 : l->shape.dims[i];
		if (dt == DT_INT32)
			((int32_t *)t->data)[i] = (int32_t)v;
		else
			((int64_t *)t->data)[i] = v;
	}
	return GE_OK;
}

/* TensorListScatterIntoExistingList(handle, tensor, indices), and the
 * new-list forms TensorListScatter(V2)(tensor, indices, element_shape
 * [, num_elements]). */
static int scatter(ge_kctx *k, klist *w, const ge_xt *t, const ge_xt *ix)
{
	if ((ix->dtype != DT_INT32 && ix->dtype != DT_INT64) || ix->rank != 1)
		return ge_k_fail(k, "indices must be an integer vector");
	if (t->rank < 1 || t->dims[0] != ix->n)
		return ge_k_fail(k, "the tensor has %" PRId64 " rows for %"
				 PRId64 " indices", t->rank ? t->dims[0] : 0,
				 ix->n);
	if (t->dtype != w->dtype)
		return ge_k_fail(k, "the list holds %s, the tensor is %s",
				 kdt(w->dtype), kdt(t->dtype));
	kps rows, m = w->shape;
	ge_kps_of(t, 1, &rows);
	if (ge_kps_merge(&m, &rows))
		return ge_k_fail(k, "rows do not fit the list's element "
				 "shape");
	int64_t top = w->n;
	for (int64_t i = 0; i < ix->n; i++) {
		int64_t j = ge_xt_get_int64(ix, i);
		if (j < 0 || j >= KST_MAX_ITEMS)
			return ge_k_fail(k, "index %" PRId64 " is out of range",
					 j);
		if (j + 1 > top)
			top = j + 1;
	}
	if (ge_k_work(k, (uint64_t)t->n) || list_room(k, w, top))
		return GE_EINVAL;
	w->n = top;
	int64_t per = ix->n ? t->n / ix->n : 0;
	for (int64_t i = 0; i < ix->n; i++) {
		int64_t j = ge_xt_get_int64(ix, i);
		ge_xt *r = ge_xt_new(t->dtype, rows.rank, rows.dims, k->budget,
				     k->name, k->err);
		if (!r)
			return GE_EINVAL;
		if (ge_kst_copy(r, 0, t, i * per, per)) {
			ge_xt_unref(r);
			return ge_k_fail(k, "out of memory");
		}
		ge_xt_unref(w->t[j]);
		w->t[j] = r;
	}
	return GE_OK;
}

static int k_scatter_into(ge_kctx *k)
{
	int own;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 3))
		return GE_EINVAL;
	klist *w = list_mut(k, 0, l, &own);
	if (!w)
		return GE_EINVAL;
	int rc = scatter(k, w, k->in[1], k->in[2]);
	if (rc)
		return list_abort(w, own, rc);
	return list_done(k, 0, w, own);
}

static int k_scatter_new(ge_kctx *k)
{
	kps es;
	int64_t n = -1;
	int v2 = !strcmp(k->type, "TensorListScatterV2");
	if (ge_k_need(k, v2 ? 4 : 3) || ge_kps_input(k, 2, &es) ||
	    (v2 && ge_k_scalar_int(k, 3, &n)))
		return GE_EINVAL;
	klist *l = list_new(k, k->in[0]->dtype, &es, 0);
	if (!l)
		return GE_EINVAL;
	int rc = scatter(k, l, k->in[0], k->in[1]);
	if (!rc && n > l->n) {
		rc = list_room(k, l, n);
		if (!rc)
			l->n = n;
	}
	if (rc) {
		ge_xobj_unref(&l->o);
		return rc;
	}
	return ge_kst_out_obj(k, 0, DT_VARIANT, &l->o);
}

/* TensorListConcatV2(handle, element_shape, leading_dims) -> tensor,
 * lengths: items (rank >= 1) joined along their first dimension; an
 * unset item i has leading_dims[i] rows of zeros. */
static int k_concat(ge_kctx *k)
{
	char a[96];
	kps es;
	klist *l = list_in(k, 0);
	if (!l || ge_k_need(k, 3) || read_shape(k, l, 1, &es))
		return GE_EINVAL;
	if (es.rank < 1)
		return ge_k_fail(k, "concatenates items of rank 0 or of "
				 "unknown rank");
	kps tail = es;
	tail.rank = es.rank - 1;
	memmove(tail.dims, es.dims + 1, (size_t)tail.rank * sizeof *tail.dims);
	if (!ge_kps_full(&tail))
		return ge_k_fail(k, "the element shape %s is not known past "
				 "its first dimension", ge_kps_str(&es, a,
								sizeof a));
	const ge_xt *lead = k->in[2];
	int64_t rows = 0, per = kcount(tail.rank, tail.dims);
	if (per < 0)
		return ge_k_fail(k, "the element shape %s overflows",
				 ge_kps_str(&es, a, sizeof a));
	int64_t *len = malloc((size_t)(l->n ? l->n : 1) * sizeof *len);
	if (!len)
		return ge_k_fail(k, "out of memory");
	for (int64_t i = 0; i < l->n; i++) {
		const ge_xt *t = l->t[i];
		if (t)
			len[i] = t->rank >= 1 ? t->dims[0] : -1;
		else if (es.dims[0] >= 0)
			len[i] = es.dims[0];
		else
			len[i] = i < lead->n ? ge_xt_get_int64(lead, i) : -1;
		if (len[i] < 0 || (t && t->n != len[i] * per)) {
			free(len);
			return ge_k_fail(k, "item %" PRId64 " does not fit the "
					 "element shape %s", i,
					 ge_kps_str(&es, a, sizeof a));
		}
		rows += len[i];
	}
	int64_t dims[GE_SHAPE_MAXRANK], nl = l->n;
	dims[0] = rows;
	memcpy(dims + 1, tail.dims, (size_t)tail.rank * sizeof *dims);
	ge_xt *out = ge_k_out(k, 0, l->dtype, es.rank, dims);
	ge_xt *lo = out ? ge_k_out(k, 1, DT_INT64, 1, &nl) : NULL;
	int rc = !lo || ge_k_work(k, (uint64_t)out->n) ? GE_EINVAL : GE_OK;
	for (int64_t i = 0, at = 0; !rc && i < l->n; i++) {
		((int64_t *)lo->data)[i] = len[i];
		if (l->t[i] && ge_kst_copy(out, at, l->t[i], 0, len[i] * per))
			rc = ge_k_fail(k, "out of memory");
		at += len[i] * per;
	}
	free(len);
	return rc;
}

/* TensorListSplit(tensor, element_shape, lengths). */
static int k_split(ge_kctx *k)
{
	kps es;
	if (ge_k_need(k, 3) || ge_kps_input(k, 1, &es))
		return GE_EINVAL;
	const ge_xt *t = k->in[0], *len = k->in[2];
	if (t->rank < 1 || len->rank != 1 ||
	    (len->dtype != DT_INT64 && len->dtype != DT_INT32))
		return ge_k_fail(k, "needs a tensor of rank 1 or more and a "
				 "vector of lengths");
	int64_t per = t->dims[0] ? t->n / t->dims[0] : 0, sum = 0;
	for (int64_t i = 0; i < len->n; i++) {
		int64_t v = ge_xt_get_int64(len, i);
		if (v < 0 || v > t->dims[0] - sum)
			return ge_k_fail(k, "the lengths do not add up to the "
					 "tensor's %" PRId64 " rows",
					 t->dims[0]);
		sum += v;
	}
	if (sum != t->dims[0])
		return ge_k_fail(k, "the lengths add up to %" PRId64 ", the "
				 "tensor has %" PRId64 " rows", sum,
				 t->dims[0]);
	klist *l = list_new(k, t->dtype, &es, len->n);
	if (!l || ge_k_work(k, (uint64_t)t->n)) {
		if (l)
			ge_xobj_unref(&l->o);
		return GE_EINVAL;
	}
	int64_t at = 0;
	for (int64_t i = 0; i < len->n; i++) {
		int64_t dims[GE_SHAPE_MAXRANK];
		memcpy(dims, t->dims, sizeof dims);
		dims[0] = ge_xt_get_int64(len, i);
		ge_xt *r = ge_xt_new(t->dtype, t->rank, dims, k->budget,
				     k->name, k->err);
		if (!r || ge_kst_copy(r, 0, t, at, dims[0] * per)) {
			ge_xt_unref(r);
			ge_xobj_unref(&l->o);
			return r ? ge_k_fail(k, "out of memory") : GE_EINVAL;
		}
		at += dims[0] * per;
		l->t[i] = r;
	}
	return ge_kst_out_obj(k, 0, DT_VARIANT, &l->o);
}

const ge_kdef ge_kernels_list[] = {
	{"EmptyTensorList", k_reserve, 0},
	{"TensorListConcatV2", k_concat, 0},
	{"TensorListElementShape", k_element_shape, 0},
	{"TensorListFromTensor", k_from_tensor, 0},
	{"TensorListGather", k_gather, 0},
	{"TensorListGetItem", k_get_item, 0},
	{"TensorListLength", k_length, 0},
	{"TensorListPopBack", k_pop_back, GE_K_FORWARD},
	{"TensorListPushBack", k_push_back, GE_K_FORWARD},
	{"TensorListReserve", k_reserve, 0},
	{"TensorListResize", k_resize, GE_K_FORWARD},
	{"TensorListScatter", k_scatter_new, 0},
	{"TensorListScatterIntoExistingList", k_scatter_into, GE_K_FORWARD},
	{"TensorListScatterV2", k_scatter_new, 0},
	{"TensorListSetItem", k_set_item, GE_K_FORWARD},
	{"TensorListSplit", k_split, 0},
	{"TensorListStack", k_stack, 0},
	{NULL, NULL, 0},
};
