/*
 * eval.h: a small CPU evaluator of TensorFlow op kernels over constant
 * values, for constant folding and weight rewrites.
 *
 * Values are dense and row-major.  Floating dtypes (float16, bfloat16,
 * float32, float64) are held as doubles and rounded to their dtype after
 * every kernel, so results are those of a kernel computing in the dtype
 * within float rounding; integer dtypes are held as int64 and wrapped to
 * their width after every kernel, so integer, shape and layout kernels are
 * bit-exact.  bool is held as 0/1 integers.
 *
 * Broadcasting, negative axes and the dtype rules are TensorFlow's.
 * Integer division and modulo follow each op: FloorDiv/FloorMod round
 * toward negative infinity (the remainder has the divisor's sign),
 * TruncateDiv/TruncateMod/Div/Mod toward zero (the dividend's sign).
 *
 * A kernel that cannot run (an op or dtype it does not know, an integer
 * division by zero, a shape that does not hold) returns an error and
 * leaves no output: callers keep the op as it was.
 */
#ifndef GE_EVAL_H
#define GE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "analyses/shapes.h"

struct Tensorflow__TensorProto;

typedef struct ge_value {
	int dtype;            /* TensorFlow DataType */
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
	int64_t n;            /* element count */
	double *d;            /* floating dtypes */
	int64_t *i;           /* integer dtypes and bool */
} ge_value;

/* Elements of a shape; -1 for a negative dim or more than the evaluator
 * materializes. */
int64_t ge_shape_count(int rank, const int64_t *dims);

/* Whether dtype is one the evaluator holds, and whether as doubles. */
int ge_eval_dtype_ok(int dtype);
int ge_eval_dtype_float(int dtype);

/* A new value of dtype and shape, zero-filled; NULL-free on any size the
 * caller checked.  ge_value_free releases the elements (not the struct). */
void ge_value_init(ge_value *v, int dtype, int rank, const int64_t *dims);
void ge_value_free(ge_value *v);
void ge_value_copy(ge_value *dst, const ge_value *src);
/* Element k as a double / int64, whatever the storage. */
double ge_value_get(const ge_value *v, int64_t k);
int64_t ge_value_geti(const ge_value *v, int64_t k);
/* Rounds (floats) or wraps (integers) every element to the dtype. */
void ge_value_normalize(ge_value *v);

/* From a TensorProto (GE_EINVAL for a dtype the evaluator does not hold
 * or values that do not match the shape); to TensorProto bytes. */
int ge_value_from_tensor(const struct Tensorflow__TensorProto *t,
			 ge_value *v, ge_error *err);
void ge_value_to_tensor(const ge_value *v, ge_buf *out);
/* A Const op's value. */
int ge_value_from_const(const ge_graph *g, ge_opid id, ge_value *v,
			ge_error *err);

/* What one computation (a fold, an evaluation) may spend: work in units
 * (one multiply-add or one element touched) and bytes of live values
 * (every value held as doubles or int64, 8 bytes an element).  Every
 * kernel estimates its work and the size of its outputs before it runs
 * and charges both; a kernel over either budget refuses with the op's
 * name and leaves no output.  Work only grows; live bytes grow with each
 * output and shrink when the caller releases a value
 * (ge_eval_budget_release). */
typedef struct ge_eval_budget {
	uint64_t work, max_work;
	uint64_t live, max_live;
} ge_eval_budget;

/* Live values a computation holds when --max-memory was not given: folding
 * and evaluation stay well below the program's peak goal (256 MiB plus
 * what a result must materialize). */
#define GE_EVAL_DEFAULT_LIVE ((uint64_t)192 << 20)

/* Work of one computation when --max-work was not given: this evaluator
 * computes in doubles with plain loops (about 10 ns a multiply-add), so
 * that no fold of a small model runs much over 10 s.  The runner of
 * lib/exec/, with its own kernels, has the larger GE_DEFAULT_MAX_WORK. */
#define GE_EVAL_DEFAULT_WORK ((uint64_t)1 << 30)

/* max_work from ge_max_work() when it was given, else the smaller of it
 * and GE_EVAL_DEFAULT_WORK; max_live from ge_max_memory() when it was
 * given, else the smaller of it and GE_EVAL_DEFAULT_LIVE. */
void ge_eval_budget_init(ge_eval_budget *b);
/* Bytes a value holds (at least one element). */
uint64_t ge_value_bytes(const ge_value *v);
/* Charges bytes of a value now live / releases those of one freed. */
int ge_eval_budget_take(ge_eval_budget *b, uint64_t bytes);
void ge_eval_budget_release(ge_eval_budget *b, uint64_t bytes);
/* ge_value_from_const within a budget: the Const's declared size is
 * checked and charged (work and live bytes) before it is decoded; the
 * error names the op. */
int ge_value_from_const_budget(const ge_graph *g, ge_opid id, ge_value *v,
			       ge_eval_budget *b, ge_error *err);

/* Outputs of one op the evaluator computes; an op that declares more
 * (a Split of a million outputs) is refused before anything is made. */
#define GE_EVAL_MAX_OUTPUTS 4096

/* Whether the evaluator has a kernel for an op type (its own, or the
 * front set's below). */
int ge_eval_supported(const char *type);

/* A set of kernels a higher layer puts in front of the evaluator's own:
 * the runner's (exec/xfold.h), so that a folded or evaluated value is
 * what float32 arithmetic as TensorFlow's CPU kernels do it gives, and
 * the same bits the runner computes, rather than a double rounded once
 * per op.  `run` has ge_eval_op_budget's contract (outputs charged to b
 * on success), or returns GE_EVAL_DECLINE, having set and charged
 * nothing, for an op it leaves to the evaluator's own kernels: a type
 * it has no kernel for, a dtype it does not hold, or an op it refuses
 * (the evaluator then says why, or computes it).  `supported` says
 * whether run may take a type.  One set for the program, installed
 * before any evaluation and never changed under one; NULL, NULL goes
 * back to the evaluator's kernels alone. */
#define GE_EVAL_DECLINE 1
typedef int (*ge_eval_front_run)(const ge_graph *g, ge_opid id,
				 const ge_value *in, int nin, ge_value *out,
				 int nout, ge_eval_budget *b, ge_error *err);
void ge_eval_set_front(ge_eval_front_run run,
		       int (*supported)(const char *type));

/* Runs op `id`'s kernel on the values of its data inputs (nin of them, in
 * order), writing its nout outputs.  Attrs are read from the op.  On error
 * (GE_EINVAL: unsupported op or dtype, a division by zero, a shape that
 * cannot hold) err says why and no output is left allocated. */
int ge_eval_op(const ge_graph *g, ge_opid id, const ge_value *in, int nin,
	       ge_value *out, int nout, ge_error *err);
/* The same within budget b (ge_eval_op uses a fresh one whose live bytes
 * start at its inputs'): on success the outputs' bytes are charged to
 * b->live, and the caller releases them when it frees them. */
int ge_eval_op_budget(const ge_graph *g, ge_opid id, const ge_value *in,
		      int nin, ge_value *out, int nout, ge_eval_budget *b,
		      ge_error *err);

#endif
