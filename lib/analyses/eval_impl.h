/*
 * eval_impl.h: what the evaluator's files share (eval.c: values, element-
 * wise kernels, casts, reductions; eval_layout.c: shape and layout
 * kernels; eval_nn.c: MatMul, convolutions).  Not part of the API.
 */
#ifndef GE_EVAL_IMPL_H
#define GE_EVAL_IMPL_H

#include "base/ckarith.h"
#include "analyses/eval.h"

#define DT_FLOAT 1
#define DT_DOUBLE 2
#define DT_INT32 3
#define DT_UINT8 4
#define DT_INT16 5
#define DT_INT8 6
#define DT_INT64 9
#define DT_QUINT8 12
#define DT_BOOL 10
#define DT_BFLOAT16 14
#define DT_UINT16 17
#define DT_HALF 19
#define DT_UINT32 22
#define DT_UINT64 23

/* Elements beyond this many are not materialized by a kernel. */
#define EVAL_MAX_ELEMS ((int64_t)1 << 26)

typedef struct kctx {
	const ge_graph *g;
	ge_opid id;
	const char *type;
	const ge_value *in;
	int nin;
	ge_value *out;
	int nout;
	ge_error *err;
	ge_eval_budget *b;
	uint64_t out_bytes;   /* outputs allocated so far by this kernel */
} kctx;

typedef int (*kernel_fn)(kctx *k);

struct ge_kernel {
	const char *name;
	kernel_fn fn;
};
extern const struct ge_kernel ge_layout_kernels[]; /* NULL-terminated */
extern const struct ge_kernel ge_nn_kernels[];

int ge_eval_k_fail(kctx *k, const char *fmt, ...) GE_PRINTF(2, 3);
/* Charges units of work before the kernel does it: GE_EINVAL naming the
 * op when the computation's work budget cannot pay. */
int ge_eval_k_work(kctx *k, uint64_t units);
/* A kernel's output: the shape checked (dims >= 0, at most
 * EVAL_MAX_ELEMS elements, by ckarith.h), its bytes charged to the live
 * budget and its elements to the work budget, then zero-filled as
 * ge_value_init.  GE_EINVAL naming the op, and nothing allocated, when
 * it cannot.  ge_eval_k_copy is ge_eval_k_new with src's shape and elements. */
int ge_eval_k_new(kctx *k, ge_value *o, int dtype, int rank, const int64_t *dims);
int ge_eval_k_copy(kctx *k, ge_value *o, const ge_value *src);
/* Whether dtype is held as integers (its output storage is o->i). */
int ge_eval_k_dtype_int(int dtype);
int ge_eval_k_need(kctx *k, int nin);
int64_t ge_eval_k_attr_int(kctx *k, const char *name, int64_t def);
int ge_eval_k_attr_bool(kctx *k, const char *name, int def);
int ge_eval_k_attr_type(kctx *k, const char *name, int def);
double ge_eval_k_attr_float(kctx *k, const char *name, double def);
int ge_eval_k_attr_str_is(kctx *k, const char *name, const char *s, int def);
int ge_eval_k_attr_ints(kctx *k, const char *name, int64_t *out, int cap);
/* Integer elements of input i as a list (a shape, axes); -1 if too many
 * or not an integer input. */
int ge_eval_k_ints(kctx *k, int i, int64_t *out, int cap);
int ge_eval_k_scalar_int(kctx *k, int i, int64_t *out);
int ge_eval_k_axis(kctx *k, int64_t a, int rank, int64_t *out);

/* Copies element ks of src to element kd of dst (same storage kind). */
static inline void val_move(ge_value *dst, int64_t kd, const ge_value *src,
			    int64_t ks)
{
	if (dst->d)
		dst->d[kd] = src->d[ks];
	else
		dst->i[kd] = src->i[ks];
}

/* Row-major strides of a shape. */
static inline void val_strides(const ge_value *v, int64_t *st)
{
	int64_t s = 1;
	for (int i = v->rank - 1; i >= 0; i--) {
		st[i] = s;
		s = ge_ck_mul_sat(s, v->dims[i]);
	}
}


#endif
