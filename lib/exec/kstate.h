/*
 * exec/kstate.h: what the stateful and data-structure kernels share
 * (exec/k_list.c, exec/k_tarray.c, exec/k_random.c, exec/k_table.c,
 * exec/k_parse.c, exec/kstate.c): the kinds of their executor objects,
 * partial shapes, and element copies.  Not part of the API.
 */
#ifndef GE_EXEC_KSTATE_H
#define GE_EXEC_KSTATE_H

#include <stdint.h>

#include "exec/kernel_impl.h"

/* Executor objects of these kernels (exec.h numbers its own below 16). */
enum {
	GE_XOBJ_LIST = 16,   /* a TensorList: a variant element */
	GE_XOBJ_TARRAY = 17, /* a TensorArray: TensorArrayV3's resource */
	GE_XOBJ_TABLE = 18,  /* a lookup table: HashTableV2's resource */
	GE_XOBJ_RNG = 19,    /* a random op's generator (its slot) */
};

/* The most items a list or an array may be indexed up to: an index past
 * it fails before any size is computed from it. */
#define KST_MAX_ITEMS ((int64_t)1 << 40)

/* A partial shape: rank -1 when unknown, a dim -1 when unknown. */
typedef struct kps {
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
} kps;

/* The shape of a tensor as a kps. */
void ge_kps_of(const ge_xt *t, int skip, kps *out);
/* A shape input (int32 or int64: a scalar -1 for an unknown rank, a
 * vector with -1 for unknown dims) into out; GE_OK or a failure naming
 * the op. */
int ge_kps_input(ge_kctx *k, int i, kps *out);
/* A shape attr (TensorShapeProto) into out; unknown when absent. */
void ge_kps_attr(ge_kctx *k, const char *name, kps *out);
/* Merges b into a: GE_OK, or -1 when they disagree. */
int ge_kps_merge(kps *a, const kps *b);
/* Whether every dim is known. */
int ge_kps_full(const kps *a);
/* "[2,?]" or "<unknown>". */
const char *ge_kps_str(const kps *a, char *buf, size_t cap);

/* Copies n elements from src at s to dst at d (same dtype): strings
 * duplicated, objects referenced.  GE_OK or GE_EINVAL (no memory). */
int ge_kst_copy(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s, int64_t n);

/* The object of a resource or variant scalar input i of the given kind,
 * or NULL after a failure naming the op. */
ge_xobj *ge_kst_obj(ge_kctx *k, int i, int dtype, int kind, const char *what);
/* Output i: a scalar of dtype holding o (the reference is taken over). */
int ge_kst_out_obj(ge_kctx *k, int i, int dtype, ge_xobj *o);

#endif
