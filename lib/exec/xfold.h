/*
 * exec/xfold.h: the runner's kernels in front of the constant evaluator.
 *
 * Folding (editor/fold.h), ge.evaluate and the shape rules that need a
 * value compute through the evaluator (analyses/eval.h), whose own
 * kernels work in double.  With these installed, an op the runner has a
 * stateless kernel for is computed by that kernel instead, in its own
 * dtype: a folded Const then holds what the runner, and TensorFlow's
 * float32 CPU kernels, compute for the op, so that a folded model runs to
 * the same bits as the model it came from.  An op the runner has no
 * kernel for, a dtype the evaluator does not hold (strings) and an op
 * the runner's kernel refuses are left to the evaluator's kernels, so
 * that nothing folded before is refused now.
 */
#ifndef GE_EXEC_XFOLD_H
#define GE_EXEC_XFOLD_H

#include "analyses/eval.h"

/* Installs the runner's kernels in front of the evaluator's
 * (ge_eval_set_front); idempotent.  The program and the Lua module call
 * it at start. */
void ge_xfold_install(void);

/* The front itself (ge_eval_front_run's contract), for tests. */
int ge_xfold_run(const ge_graph *g, ge_opid id, const ge_value *in, int nin,
		 ge_value *out, int nout, ge_eval_budget *b, ge_error *err);
/* Whether the runner has a stateless kernel for type. */
int ge_xfold_supported(const char *type);

#endif
