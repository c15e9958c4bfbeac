/*
 * shapes_impl.h: what the shape driver (shapes.c), the per-op shape
 * functions (shapes_ops.c, shapes_slice.c, shapes_handles.c) and the
 * evaluator's layout ops (eval_layout.c) share.  Not part of the
 * library's API.
 */
#ifndef GE_SHAPES_IMPL_H
#define GE_SHAPES_IMPL_H

#include <stdint.h>

#include "analyses/shapes.h"

#define SH_MAXV 64            /* values followed for tensors this small */
#define SH_UNK INT64_MIN      /* unknown element of a followed value */

typedef struct sh {
	int rank;             /* -1 unknown */
	int64_t d[GE_SHAPE_MAXRANK];
} sh;

typedef struct shval {
	int n;                /* -1: not followed */
	int64_t v[SH_MAXV];
} shval;

typedef struct shctx {
	ge_graph *g;
	struct ge_shapes *c;
	ge_opid id;
	const char *type;
	int nin, nout;
	sh *out;
	shval *val;
	int reason;           /* GE_SHAPE_DATA when a value was missing */
	int failed;
	char msg[320];
} shctx;

typedef void (*shape_fn)(shctx *c);
#define OUT(k) (&c->out[k])
#define VAL(k) (&c->val[k])

/* shapes_slice.c: a StridedSlice over known dims, for the evaluator: for
 * each input dim its begin, stride and size, and the result's shape.
 * masks: begin, end, ellipsis, new_axis, shrink_axis.  -1 and msg on a
 * slice that does not hold. */
int ge_sslice_plan(int rank, const int64_t *dims, int n, const int64_t *b,
		   const int64_t *e, const int64_t *s, const int64_t masks[5],
		   int64_t *beg, int64_t *str, int64_t *size, int *orank,
		   int64_t *odims, char *msg, size_t msglen);

/* shapes_ops.c */
shape_fn ge_shape_fn_find(const char *type);
struct ge_shape_entry {
	const char *name;
	shape_fn fn;
};
/* shapes_handles.c, NULL-terminated */
extern const struct ge_shape_entry ge_shape_handle_fns[];

/* shapes.c: what a shape function may ask of its context. */
void ge_sh_in(shctx *c, int i, sh *s);
int ge_sh_in_val(shctx *c, int i, shval *v);
int ge_sh_in_scalar(shctx *c, int i, int64_t *x);
int ge_sh_in_dtype(shctx *c, int i);
/* whether input i was computed (a loop's back edge may not be yet) */
int ge_sh_in_done(shctx *c, int i);
int64_t ge_sh_attr_int(shctx *c, const char *name, int64_t def);
int ge_sh_attr_ints(shctx *c, const char *name, int64_t *out, int cap);
int ge_sh_attr_str_is(shctx *c, const char *name, const char *s, int def);
int ge_sh_attr_shape(shctx *c, const char *name, sh *s);
int ge_sh_op_attr_shape(ge_graph *g, ge_opid id, const char *name, sh *s);
/* The inferred shape of any output computed so far (0 if not yet). */
int ge_sh_out_shape(shctx *c, ge_tref t, sh *s);
/* Raw protobuf helpers: the first field `num` of a message (payload of a
 * length-delimited field, or a varint in *v); a TensorShapeProto. */
const uint8_t *ge_sh_pb_find(const uint8_t *p, const uint8_t *end, uint32_t num,
			  size_t *len, uint64_t *v);
void ge_sh_shape_raw(const uint8_t *p, size_t n, sh *s);
void ge_sh_fail(shctx *c, const char *fmt, ...) GE_PRINTF(2, 3);

static inline void sh_unknown(sh *s)
{
	s->rank = -1;
}
static inline void sh_ranked(sh *s, int rank)
{
	if (rank < 0 || rank > GE_SHAPE_MAXRANK) {
		s->rank = -1;
		return;
	}
	s->rank = rank;
	for (int i = 0; i < rank; i++)
		s->d[i] = -1;
}
static inline int64_t sh_numel(const sh *s)
{
	if (s->rank < 0)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++) {
		if (s->d[i] < 0)
			return -1;
		if (s->d[i] && n > INT64_MAX / s->d[i])
			return -1;
		n *= s->d[i];
	}
	return n;
}
/* TensorFlow's Merge: the most specific shape compatible with both;
 * -1 when they contradict. */
int ge_sh_merge(sh *a, const sh *b);
/* The most specific shape both are instances of. */
void ge_sh_relax(sh *a, const sh *b);
/* Broadcasting as in TensorFlow's BroadcastBinaryOpOutputShapeFn; -1 when
 * the shapes cannot broadcast. */
int ge_sh_broadcast(const sh *a, const sh *b, sh *out);

#endif
