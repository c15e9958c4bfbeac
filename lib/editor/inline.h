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
 * - signatures and the saver that named an output of the call name what
 *   replaces it (and one naming the call as an op, such as a TF2 saver's
 *   restore_op_name, the op that makes output 0);
 * - a v1 loop's frame (frame_name of Enter ops) is renamed `<call>/F`,
 *   so that two inlined copies of a loop are two frames;
 * - the call goes; one that nothing reads (no data or control edge)
 *   leaves its name to an op that stands for it, so that what fetches or
 *   runs it by name still can (a GraphDef's outputs are its unread ops,
 *   and a model file does not say what its users fetch): an Identity of
 *   the body's result, an IdentityN of its results, or, for a call
 *   without results, a NoOp waiting for the body's `control_ret` and
 *   returned ops.  TensorFlow's inliner keeps the caller so ("fetchable")
 *   for the ops it is told are fetched.
 * Unlike TensorFlow's inliner, no Identity per input and no NoOp for the
 * control edges is added: the op count after inlining is the body's ops
 * minus its `_Arg`s and `_Retval`s plus the caller's ops minus the call
 * (plus one when the call was unread).
 *
 * Errors (GE_EGRAPH, naming the graph, the call and the function; nothing
 * changed): a body whose `_Arg`s do not match the call's inputs or whose
 * `_Retval`s do not match its outputs, a body reading a missing op, an
 * `_Arg` or `_Retval` without a valid `index`, an attr that is a
 * placeholder of the function's attrs (a generic function).
 */
#ifndef GE_INLINE_H
#define GE_INLINE_H

#include <stddef.h>

#include "base/base.h"
#include "graph/graph.h"

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

/* ------------------------------------------------------------ by name */

/* Inlines op call of g (the top-level graph or a function body): a
 * PartitionedCall or StatefulPartitionedCall (function in attr `f`), or
 * an op whose type is a function of the library.  The function is looked
 * up in the library of g's root graph.  With recursive, calls among the
 * copied ops are inlined too, depth first.  Before anything changes,
 * every call that will be inlined is checked: a missing function, a
 * function that calls itself (directly or not; the message names the
 * chain of functions) or a body that does not match its call (see
 * ge_inline_body) is GE_EGRAPH, and g is unchanged.  When added is
 * given, the ops copied into g that remain (nested calls inlined away are
 * not among them) are appended to it. */
int ge_inline(ge_graph *g, ge_opid call, int recursive, ge_opvec *added,
	      ge_error *err);

/* Whether op id of g is a call ge_inline takes: a PartitionedCall or
 * StatefulPartitionedCall naming a function (of the library or not), or
 * an op whose type is a function of the library. */
int ge_op_is_call(ge_graph *g, ge_opid id);

/* Inlines every call op of g (as ge_inline finds them), recursively:
 * afterwards no PartitionedCall or StatefulPartitionedCall remains.
 * *n (when given) counts the calls inlined, nested ones included. */
int ge_inline_all(ge_graph *g, size_t *n, ge_error *err);
