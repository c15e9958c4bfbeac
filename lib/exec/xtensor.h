/*
 * exec/xtensor.h: the runner's tensors.
 *
 * A ge_xt is a dense, row-major tensor in its dtype's own storage (float32
 * as float, int32 as int32_t, bool as one byte 0/1, float16 and bfloat16
 * as their 16-bit patterns), reference-counted so that Identity, Reshape
 * and the control-flow ops pass a tensor on without copying it.  A tensor
 * is immutable once a kernel has returned it; a kernel that wants to write
 * into an input in place may do so only while ge_xt_unique() says it holds
 * the one reference.
 *
 * Storage by dtype (ge_xt_elem_size):
 *   numbers and bool  n * size bytes, 64-byte aligned
 *   string            n ge_xstr, each owning its bytes
 *   resource, variant n ge_xobj pointers (executor objects: a variable, a
 *                     TensorList, a hash table), each holding a reference
 *
 * Every byte a tensor holds is charged to the budget it was made under
 * (ge_xbudget) and given back when its last reference goes, so the peak
 * of live tensors is known and bounded by --max-memory.  The same budget
 * counts work: a kernel charges what it will do (multiply-adds, elements
 * touched) before it does it, bounded by --max-work.
 */
#ifndef GE_EXEC_XTENSOR_H
#define GE_EXEC_XTENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "analyses/shapes.h" /* GE_SHAPE_MAXRANK */

/* ---------------------------------------------------------------- budget */

typedef struct ge_xbudget {
	uint64_t mem_limit; /* bytes of live tensors allowed */
	uint64_t mem_live;  /* bytes held now */
	uint64_t mem_peak;  /* most held at once */
	uint64_t work_limit;
	uint64_t work_used;
} ge_xbudget;

/* Limits from ge_max_memory() and ge_max_work(), nothing held. */
void ge_xbudget_init(ge_xbudget *b);
/* Charges bytes of memory / units of work.  GE_OK, or GE_EINVAL with err
 * "<what>: needs N, over the memory budget of M (--max-memory)" (or the
 * work budget, --max-work); what names the op.  A failed charge charges
 * nothing. */
int ge_xbudget_mem(ge_xbudget *b, uint64_t bytes, const char *what,
		   ge_error *err);
void ge_xbudget_release(ge_xbudget *b, uint64_t bytes);
int ge_xbudget_work(ge_xbudget *b, uint64_t units, const char *what,
		    ge_error *err);

/* ---------------------------------------------------------------- objects */

/* An executor object held by a resource or variant element. */
typedef struct ge_xobj ge_xobj;
struct ge_xobj {
	int refs;
	int kind;                      /* the executor's GE_XOBJ_* */
	void (*destroy)(ge_xobj *o);   /* frees o when refs reach 0 */
};
ge_xobj *ge_xobj_ref(ge_xobj *o);
void ge_xobj_unref(ge_xobj *o);

typedef struct ge_xstr {
	size_t len;
	char *p; /* len bytes, NUL after them; NULL when len is 0 */
} ge_xstr;

/* ---------------------------------------------------------------- tensors */

typedef struct ge_xt {
	int refs;
	int dtype;                       /* TensorFlow DataType, never a _ref */
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
	int64_t n;                       /* elements: the product of dims */
	size_t nbytes;                   /* bytes charged for this tensor */
	void *data;                      /* see the storage table above */
	ge_xbudget *budget;              /* charged, or NULL */
} ge_xt;

/* Bytes of one element in a tensor's storage, 0 for a dtype the runner
 * does not hold. */
size_t ge_xt_elem_size(int dtype);

/* A new tensor of dtype and shape, its elements zero (strings empty,
 * objects NULL), charged to b (may be NULL).  Dims must be >= 0.  NULL
 * with err set when the dtype is not held, the element count or byte
 * size overflows, or the budget refuses; what names the op for the
 * message. */
ge_xt *ge_xt_new(int dtype, int rank, const int64_t *dims, ge_xbudget *b,
		 const char *what, ge_error *err);
/* The same with the elements of a number or bool dtype left unset (a
 * string or object tensor is still zeroed): for a kernel that writes
 * every element, so that its output is not written twice. */
ge_xt *ge_xt_new_raw(int dtype, int rank, const int64_t *dims,
		     ge_xbudget *b, const char *what, ge_error *err);
/* Storage of cap bytes (a multiple of 64), 64-byte aligned, zeroed when
 * zero is set, or NULL when there is no memory; freed (NULL is fine) by
 * ge_xt_storage_free.  A tensor's numbers and a kernel's scratch: blocks
 * of one size asked again and again reuse the one just freed
 * (xtensor.c says why aligned_alloc does not). */
void *ge_xt_storage(size_t cap, int zero);
void ge_xt_storage_free(void *p);
/* A scalar. */
ge_xt *ge_xt_scalar(int dtype, ge_xbudget *b, const char *what,
		    ge_error *err);
ge_xt *ge_xt_ref(ge_xt *t);
void ge_xt_unref(ge_xt *t); /* NULL is fine */
static inline int ge_xt_unique(const ge_xt *t) { return t->refs == 1; }
/* The same elements under another shape of the same element count: a
 * new header sharing nothing (the elements are copied) unless t is
 * unique, in which case t itself is reshaped and returned with a new
 * reference. */
ge_xt *ge_xt_reshape(ge_xt *t, int rank, const int64_t *dims,
		     const char *what, ge_error *err);
/* A deep copy (strings and objects duplicated or re-referenced). */
ge_xt *ge_xt_copy(const ge_xt *t, const char *what, ge_error *err);

/* "float32[1,224,224,3]" into buf. */
const char *ge_xt_describe(const ge_xt *t, char *buf, size_t cap);

/* Element k as a double or an int64, whatever the numeric dtype (bool as
 * 0/1, float16/bfloat16 widened).  For tests and printing, not kernels. */
double ge_xt_get_double(const ge_xt *t, int64_t k);
int64_t ge_xt_get_int64(const ge_xt *t, int64_t k);

#endif
