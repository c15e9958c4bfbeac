/*
 * inline.h: replacing a function call by a copy of the function's body,
 * as TensorFlow's function inliner does (InlineFunctionBody):
 * - every op of the body but its `_Arg` and `_Retval` ops is copied into
 *   the caller's graph under `<call name>/`, attrs byte for byte, its
 *   device kept (or the call's when it has none);
 * - what read `_Arg` i reads the call's data input i instead;
 * - what read output k of the call reads what `_Retval` k reads;
 * - the call's control inputs become control inputs of the copied ops
 *   that read nothing else of the body (every other copied op waits for
 *   one of those), so nothing of the body starts before them;
 * - an op that waited for the call (control input) waits for the body's
 *   `control_ret` ops and for the ops its `_Retval`s read;
 * - the call goes.
 * Unlike TensorFlow's inliner, no Identity per input and no NoOp for the
 * control edges is added: the op count after inlining is the body's ops
 * minus its `_Arg`s and `_Retval`s plus the caller's ops minus the call.
 *
 * Errors (GE_EGRAPH, naming the graph, the call and the function; nothing
 * changed): a body whose `_Arg`s do not match the call's inputs or whose
 * `_Retval`s do not match its outputs, a body reading a missing op, an
 * `_Arg` or `_Retval` without a valid `index`.
 */
#ifndef GE_INLINE_H
#define GE_INLINE_H

#include <stddef.h>

#include "base.h"
#include "graph.h"

/* Inlines body (a function body with `_Arg`/`_Retval` ops; fname names it
 * in messages) at op call of g.  control_ret lists ops of body.  When
 * added is not NULL the copied ops are appended to it, in body order.
 * body may not be g. */
int ge_inline_body(ge_graph *g, ge_opid call, const ge_graph *body,
		   const char *fname, const ge_opid *control_ret,
		   size_t n_control_ret, ge_opvec *added, ge_error *err);

/* Whether ops of this type call the function of their `f` attr and can
 * be inlined: PartitionedCall, StatefulPartitionedCall. */
int ge_is_call_op_type(const char *type);

#endif
