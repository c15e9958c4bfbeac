/*
 * exec/k_matmul.c: MatMul, BatchMatMul (V1, V2, V3) and _FusedMatMul.
 *
 * float32 and float64 products go to OpenBLAS through exec/xgemm.h (split
 * over the pool's threads when large): accumulation in the dtype, as TensorFlow's Eigen contraction does;
 * int32 and int64 products (TensorFlow has them on CPU) are plain loops
 * that wrap at their width.  BatchMatMulV2 and V3 broadcast the batch
 * dimensions as NumPy does; adj_x and adj_y transpose (the dtypes here
 * are real).
 */
#include "exec/k_nn_impl.h"

#include <string.h>

#include "exec/xgemm.h"

/* Dims of one product: out[m, n] = sum_k a[m, k] * b[k, n]. */
typedef struct mm_dims {
	int64_t m, n, kk;
	int ta, tb;
	int64_t lda, ldb;
} mm_dims;

static int mm_dtype_ok(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE ||
	       dt == DT_INT32 || dt == DT_INT64;
}

/* The matrix dims of a (rows x cols of its last two dims) and b. */
static int mm_shape(ge_kctx *k, const ge_xt *a, const ge_xt *b, int ta,
		    int tb, mm_dims *d)
{
	char ba[96], bb[96];
	int64_t ar = a->dims[a->rank - 2], ac = a->dims[a->rank - 1];
	int64_t br = b->dims[b->rank - 2], bc = b->dims[b->rank - 1];
	d->ta = ta, d->tb = tb;
	d->m = ta ? ac : ar;
	d->kk = ta ? ar : ac;
	d->n = tb ? br : bc;
	d->lda = ac, d->ldb = bc;
	if ((tb ? bc : br) != d->kk)
		return ge_k_fail(k, "inner dimensions differ: %s%s and %s%s",
				 ge_xt_describe(a, ba, sizeof ba),
				 ta ? " transposed" : "",
				 ge_xt_describe(b, bb, sizeof bb),
				 tb ? " transposed" : "");
	/* BLAS takes int dims; an empty product calls no BLAS */
	if (d->m && d->n && d->kk && (ar > INT32_MAX || ac > INT32_MAX ||
				      br > INT32_MAX || bc > INT32_MAX))
		return ge_k_fail(k, "a matrix dimension is over 2^31-1");
	return GE_OK;
}

/* One product, out is m x n row-major, zeroed by its allocation. */
static void mm_one(int dt, const mm_dims *d, const void *a, const void *b,
		   void *out)
{
	if (d->m == 0 || d->n == 0 || d->kk == 0)
		return;
	if (dt == DT_FLOAT || dt == DT_DOUBLE) {
		ge_xgemm(dt == DT_DOUBLE, d->ta, d->tb, d->m, d->n, d->kk, a,
			 d->lda, b, d->ldb, 0.0, out, d->n);
		return;
	}
	for (int64_t i = 0; i < d->m; i++)
		for (int64_t j = 0; j < d->n; j++) {
			uint64_t s = 0;
			for (int64_t p = 0; p < d->kk; p++) {
				int64_t ai = d->ta ? p * d->lda + i
						   : i * d->lda + p;
				int64_t bi = d->tb ? j * d->ldb + p
						   : p * d->ldb + j;
				if (dt == DT_INT32)
					s += (uint64_t)((const int32_t *)a)[ai] *
					     (uint64_t)((const int32_t *)b)[bi];
				else
					s += (uint64_t)((const int64_t *)a)[ai] *
					     (uint64_t)((const int64_t *)b)[bi];
			}
			if (dt == DT_INT32)
				((int32_t *)out)[i * d->n + j] = (int32_t)
					(uint32_t)s;
			else
				((int64_t *)out)[i * d->n + j] = (int64_t)s;
		}
}

/* MatMul and _FusedMatMul: a and b 2-D of one dtype. */
static int mm_2d(ge_kctx *k, int fused)
{
	const ge_xt *a, *b;
	mm_dims d;
	knn_epi epi = {0};
	int64_t od[2];
	char buf[96];
	ge_xt *o;
	int rc;
	if ((rc = ge_k_need(k, 2)))
		return rc;
	a = k->in[0], b = k->in[1];
	if (a->rank != 2 || b->rank != 2)
		return ge_k_fail(k, "a and b must be 2-D, not %d-D and %d-D",
				 a->rank, b->rank);
	if (a->dtype != b->dtype || !mm_dtype_ok(a->dtype) ||
	    (fused && a->dtype != DT_FLOAT))
		return ge_k_fail(k, "a and b must be %s of one dtype, not %s",
				 fused ? "float32" :
				 "float32, float64, int32 or int64",
				 ge_xt_describe(a->dtype != b->dtype ||
						mm_dtype_ok(a->dtype) ? b : a,
						buf, sizeof buf));
	if ((rc = mm_shape(k, a, b, ge_k_attr_bool(k, "transpose_a", 0),
			   ge_k_attr_bool(k, "transpose_b", 0), &d)))
		return rc;
	if (fused && (rc = ge_knn_epi_parse(k, 2, d.n, 0, &epi)))
		return rc;
	od[0] = d.m, od[1] = d.n;
	if ((rc = ge_k_work(k, ge_knn_mul(ge_knn_mul(d.m, d.n), d.kk ? d.kk : 1))) ||
	    !(o = ge_k_out(k, 0, a->dtype, 2, od))) {
		ge_knn_epi_done(&epi);
		return rc ? rc : GE_EINVAL;
	}
	mm_one(a->dtype, &d, a->data, b->data, o->data);
	if (fused)
		ge_knn_epi_apply(&epi, o->data, d.m, d.n, 0);
	ge_knn_epi_done(&epi);
	return GE_OK;
}

static int k_matmul(ge_kctx *k) { return mm_2d(k, 0); }
static int k_fused_matmul(ge_kctx *k) { return mm_2d(k, 1); }

/* ---------------------------------------------------------------- batched */

/* The broadcast batch shape of x and y (all but their last two dims) into
 * od; V1 requires them equal. */
static int bmm_batch(ge_kctx *k, const ge_xt *x, const ge_xt *y, int bcast,
		     int64_t *od, int *orank)
{
	int xr = x->rank - 2, yr = y->rank - 2, r = xr > yr ? xr : yr;
	if (!bcast && xr != yr)
		return ge_k_fail(k, "x and y must have the same rank, not %d "
				 "and %d", x->rank, y->rank);
	for (int i = 0; i < r; i++) {
		int64_t a = i - (r - xr) >= 0 ? x->dims[i - (r - xr)] : 1;
		int64_t b = i - (r - yr) >= 0 ? y->dims[i - (r - yr)] : 1;
		if (a != b && (!bcast || (a != 1 && b != 1)))
			return ge_k_fail(k, "batch dimension %d differs: %lld "
					 "and %lld", i, (long long)a,
					 (long long)b);
		od[i] = a == 1 ? b : a;
	}
	*orank = r;
	return GE_OK;
}

/* Offset in matrices of operand t (batch rank tr) for output batch index
 * ob (row-major over od[0..r)). */
static int64_t bmm_offset(const ge_xt *t, int tr, const int64_t *od, int r,
			  int64_t ob)
{
	int64_t off = 0, stride = 1;
	for (int i = r - 1; i >= 0; i--) {
		int64_t idx = ob % od[i];
		int ti = i - (r - tr);
		ob /= od[i];
		if (ti < 0)
			break;
		if (t->dims[ti] != 1)
			off += idx * stride;
		stride *= t->dims[ti];
	}
	return off;
}

static int bmm(ge_kctx *k, int version)
{
	const ge_xt *x, *y;
	int64_t od[GE_SHAPE_MAXRANK], nb = 1;
	int r = 0, rc, adj_x, adj_y;
	size_t es;
	mm_dims d;
	ge_xt *o;
	char buf[96];
	if ((rc = ge_k_need(k, 2)))
		return rc;
	x = k->in[0], y = k->in[1];
	if (x->rank < 2 || y->rank < 2)
		return ge_k_fail(k, "x and y must be at least 2-D, not %d-D "
				 "and %d-D", x->rank, y->rank);
	if (x->dtype != y->dtype || !mm_dtype_ok(x->dtype) ||
	    (version == 3 && ge_k_attr_type(k, "Tout", x->dtype) != x->dtype))
		return ge_k_fail(k, "x, y (and Tout) must be of one dtype, "
				 "float32, float64, int32 or int64, not %s",
				 ge_xt_describe(x->dtype != y->dtype ? y : x,
						buf, sizeof buf));
	adj_x = ge_k_attr_bool(k, "adj_x", 0);
	adj_y = ge_k_attr_bool(k, "adj_y", 0);
	if ((rc = mm_shape(k, x, y, adj_x, adj_y, &d)) ||
	    (rc = bmm_batch(k, x, y, version > 1, od, &r)))
		return rc;
	for (int i = 0; i < r; i++) {
		uint64_t p = ge_knn_mul((uint64_t)nb, (uint64_t)od[i]);
		if (p > INT64_MAX)
			return ge_k_fail(k, "the batch size overflows");
		nb = (int64_t)p;
	}
	od[r] = d.m, od[r + 1] = d.n;
	if ((rc = ge_k_work(k, ge_knn_mul(ge_knn_mul(nb, ge_knn_mul(d.m, d.n)),
				       d.kk ? d.kk : 1))) ||
	    !(o = ge_k_out(k, 0, x->dtype, r + 2, od)))
		return rc ? rc : GE_EINVAL;
	es = ge_xt_elem_size(x->dtype);
	for (int64_t b = 0; o->n && b < nb; b++) {
		int64_t xo = bmm_offset(x, x->rank - 2, od, r, b);
		int64_t yo = bmm_offset(y, y->rank - 2, od, r, b);
		mm_one(x->dtype, &d,
		       (const char *)x->data + xo * d.m * d.kk * es,
		       (const char *)y->data + yo * d.kk * d.n * es,
		       (char *)o->data + b * d.m * d.n * es);
	}
	return GE_OK;
}

static int k_bmm1(ge_kctx *k) { return bmm(k, 1); }
static int k_bmm2(ge_kctx *k) { return bmm(k, 2); }
static int k_bmm3(ge_kctx *k) { return bmm(k, 3); }

/* ---------------------------------------------------------------- einsum */

/* Einsum of two operands as one batched product: each operand is
 * permuted (when it is not already) to [batch, free, contracted] and
 * [batch, contracted, free], multiplied matrix by matrix, and the result
 * [batch, free a, free b] permuted to the output's order.  Labels are
 * letters; "..." (broadcast dims), a label twice in one operand
 * (diagonals) and a label summed away within one operand are refused. */

enum { ES_BATCH, ES_FREE_A, ES_FREE_B, ES_SUM };

typedef struct es_side {
	char lab[GE_SHAPE_MAXRANK + 1];
	int rank;
} es_side;

typedef struct einsum {
	es_side a, b, o;
	int64_t size[128];            /* by label */
	int cls[128];
} einsum;

static int es_parse_side(ge_kctx *k, const char *s, size_t n, es_side *d)
{
	if (n > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "equation: over %d labels in one operand",
				 GE_SHAPE_MAXRANK);
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return ge_k_fail(k, "equation: '%c' is not a label "
					 "(\"...\" is not supported)", s[i]);
		if (memchr(s, s[i], i))
			return ge_k_fail(k, "equation: label %c twice in one "
					 "operand is not supported", s[i]);
		d->lab[i] = s[i];
	}
	d->lab[n] = 0;
	d->rank = (int)n;
	return GE_OK;
}

/* Reads the equation and classifies and sizes every label. */
static int es_parse(ge_kctx *k, einsum *e)
{
	const char *eq, *comma, *arrow;
	size_t len;
	int rc;
	const ge_xt *t[2] = {k->in[0], k->in[1]};
	const es_side *sd[2] = {&e->a, &e->b};
	memset(e, 0, sizeof *e);
	if (ge_op_attr_string(k->g, k->id, "equation", &eq, &len))
		return ge_k_fail(k, "attr equation missing");
	comma = memchr(eq, ',', len);
	arrow = memchr(eq, '-', len);
	if (!comma || !arrow || arrow < comma ||
	    arrow + 1 >= eq + len || arrow[1] != '>')
		return ge_k_fail(k, "equation \"%.*s\" is not \"ab,bc->ac\" "
				 "(two operands)", (int)len, eq);
	if ((rc = es_parse_side(k, eq, comma - eq, &e->a)) ||
	    (rc = es_parse_side(k, comma + 1, arrow - comma - 1, &e->b)) ||
	    (rc = es_parse_side(k, arrow + 2, eq + len - arrow - 2, &e->o)))
		return rc;
	for (int s = 0; s < 2; s++) {
		if (t[s]->rank != sd[s]->rank)
			return ge_k_fail(k, "operand %d is %d-D, the equation "
					 "gives it %d labels", s, t[s]->rank,
					 sd[s]->rank);
		for (int i = 0; i < sd[s]->rank; i++) {
			int l = sd[s]->lab[i];
			if (e->size[l] && e->size[l] != t[s]->dims[i] + 1)
				return ge_k_fail(k, "label %c is %lld and %lld",
						 l, (long long)e->size[l] - 1,
						 (long long)t[s]->dims[i]);
			e->size[l] = t[s]->dims[i] + 1; /* 0: not seen */
		}
	}
	for (const char *p = e->a.lab; *p; p++) {
		int inb = strchr(e->b.lab, *p) != NULL;
		int ino = strchr(e->o.lab, *p) != NULL;
		if (!inb && !ino)
			return ge_k_fail(k, "label %c is summed within one "
					 "operand: not supported", *p);
		e->cls[(int)*p] = inb ? (ino ? ES_BATCH : ES_SUM) : ES_FREE_A;
	}
	for (const char *p = e->b.lab; *p; p++)
		if (!strchr(e->a.lab, *p)) {
			if (!strchr(e->o.lab, *p))
				return ge_k_fail(k, "label %c is summed within "
						 "one operand: not supported",
						 *p);
			e->cls[(int)*p] = ES_FREE_B;
		}
	for (const char *p = e->o.lab; *p; p++)
		if (!e->size[(int)*p])
			return ge_k_fail(k, "output label %c is in no operand",
					 *p);
	return GE_OK;
}

/* The labels of one operand in the order [classes c0, c1, c2]. */
static void es_order(const einsum *e, const es_side *s, const int *cls,
		     char *out)
{
	int n = 0;
	for (int c = 0; c < 3; c++)
		for (const char *p = s->lab; *p; p++)
			if (e->cls[(int)*p] == cls[c])
				out[n++] = *p;
	out[n] = 0;
}

/* dst = src (labels from) permuted to labels to; es element size. */
static void es_permute(const einsum *e, const char *from, const char *to,
		       const void *src, void *dst, size_t es)
{
	int r = (int)strlen(to);
	int64_t st[GE_SHAPE_MAXRANK], dims[GE_SHAPE_MAXRANK];
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, n = 1, s = 1;
	for (int i = (int)strlen(from) - 1; i >= 0; i--) {
		int j = (int)(strchr(to, from[i]) - to);
		st[j] = s;
		s *= e->size[(int)from[i]] - 1;
	}
	for (int i = 0; i < r; i++) {
		dims[i] = e->size[(int)to[i]] - 1;
		n *= dims[i];
	}
	for (int64_t o = 0; o < n; o++) {
		int64_t off = 0;
		for (int i = 0; i < r; i++)
			off += idx[i] * st[i];
		memcpy((char *)dst + o * es, (const char *)src + off * es, es);
		for (int i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
}

static int64_t es_prod(const einsum *e, const char *labs, int cls)
{
	int64_t n = 1;
	for (const char *p = labs; *p; p++)
		if (e->cls[(int)*p] == cls)
			n *= e->size[(int)*p] - 1;
	return n;
}

static int k_einsum(ge_kctx *k)
{
	static const int ca[3] = {ES_BATCH, ES_FREE_A, ES_SUM};
	static const int cb[3] = {ES_BATCH, ES_SUM, ES_FREE_B};
	einsum e;
	char la[GE_SHAPE_MAXRANK + 1], lb[GE_SHAPE_MAXRANK + 1];
	char lo[2 * GE_SHAPE_MAXRANK + 1];
	int64_t od[GE_SHAPE_MAXRANK], nb, m, n, kk;
	const ge_xt *a, *b;
	size_t es;
	uint64_t bytes[3], work;
	float *tmp[3] = {NULL, NULL, NULL};
	const void *pa, *pb;
	void *po;
	mm_dims d;
	ge_xt *o;
	int rc;
	if ((rc = ge_k_need(k, 2)))
		return rc;
	if (k->nin != 2)
		return ge_k_fail(k, "only Einsum of two operands is supported");
	a = k->in[0], b = k->in[1];
	if (a->dtype != b->dtype || !mm_dtype_ok(a->dtype))
		return ge_k_fail(k, "operands must be of one dtype, float32, "
				 "float64, int32 or int64");
	if ((rc = es_parse(k, &e)))
		return rc;
	es_order(&e, &e.a, ca, la);
	es_order(&e, &e.b, cb, lb);
	{
		/* the product's labels: batch and free a (from a), free b */
		int nlo = 0;
		for (const char *p = la; *p; p++)
			if (e.cls[(int)*p] != ES_SUM)
				lo[nlo++] = *p;
		for (const char *p = lb; *p; p++)
			if (e.cls[(int)*p] == ES_FREE_B)
				lo[nlo++] = *p;
		lo[nlo] = 0;
	}
	nb = es_prod(&e, la, ES_BATCH), m = es_prod(&e, la, ES_FREE_A);
	kk = es_prod(&e, la, ES_SUM), n = es_prod(&e, lb, ES_FREE_B);
	if (m > INT32_MAX || n > INT32_MAX || kk > INT32_MAX)
		return ge_k_fail(k, "a matrix dimension is over 2^31-1");
	for (int i = 0; i < e.o.rank; i++)
		od[i] = e.size[(int)e.o.lab[i]] - 1;
	work = ge_knn_mul(ge_knn_mul(nb, m), ge_knn_mul(n, kk ? kk : 1));
	if ((rc = ge_k_work(k, work)) ||
	    !(o = ge_k_out(k, 0, a->dtype, e.o.rank, od)))
		return rc ? rc : GE_EINVAL;
	es = ge_xt_elem_size(a->dtype);
	bytes[0] = (uint64_t)a->n * es, bytes[1] = (uint64_t)b->n * es;
	bytes[2] = (uint64_t)o->n * es;
	pa = a->data, pb = b->data, po = o->data;
	if (strcmp(la, e.a.lab) && (tmp[0] = ge_knn_scratch(k, bytes[0])))
		es_permute(&e, e.a.lab, la, a->data, tmp[0], es), pa = tmp[0];
	if (strcmp(lb, e.b.lab) && (tmp[1] = ge_knn_scratch(k, bytes[1])))
		es_permute(&e, e.b.lab, lb, b->data, tmp[1], es), pb = tmp[1];
	if (strcmp(lo, e.o.lab) && (tmp[2] = ge_knn_scratch(k, bytes[2])))
		po = tmp[2];
	if ((strcmp(la, e.a.lab) && !tmp[0]) ||
	    (strcmp(lb, e.b.lab) && !tmp[1]) ||
	    (strcmp(lo, e.o.lab) && !tmp[2]))
		rc = GE_EINVAL;
	else {
		d = (mm_dims){m, n, kk, 0, 0, kk, n};
		if (tmp[2])
			memset(tmp[2], 0, bytes[2]);
		for (int64_t i = 0; o->n && i < nb; i++)
			mm_one(a->dtype, &d, (const char *)pa + i * m * kk * es,
			       (const char *)pb + i * kk * n * es,
			       (char *)po + i * m * n * es);
		if (tmp[2])
			es_permute(&e, lo, e.o.lab, tmp[2], o->data, es);
	}
	for (int i = 0; i < 3; i++)
		ge_knn_scratch_free(k, tmp[i], bytes[i]);
	return rc;
}

/* ---------------------------------------------------------------- table */

const ge_kdef ge_kernels_matmul[] = {
	{"BatchMatMul", k_bmm1, 0},
	{"BatchMatMulV2", k_bmm2, 0},
	{"BatchMatMulV3", k_bmm3, 0},
	{"Einsum", k_einsum, 0},
	{"MatMul", k_matmul, 0},
	{"_FusedMatMul", k_fused_matmul, 0},
	{NULL, NULL, 0},
};
