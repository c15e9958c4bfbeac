/*
 * compose.h: models put one after the other, and a servable cut out of a
 * model.
 *
 * ge_compose is onnx.compose's merge_models for TensorFlow graphs: one
 * graph where the second model's inputs read the first model's outputs.
 * The second model is imported under a prefix (ge_import_graph, so its
 * collections and functions come along); what is mapped is checked first,
 * tensor by tensor: both ends exist, their dtypes are the same and their
 * shapes can be the same (ranks and known dims agree).
 *
 * ge_extract keeps what some outputs need, from some inputs on: each input
 * tensor becomes a Placeholder (named as its op when that is free), and
 * every op the outputs do not need, walking back through data and control
 * inputs, goes; the variables that stay are the ones the outputs read.
 *
 * Errors follow base.h: one line naming the model and the tensor; on error
 * nothing is made.
 */
#ifndef GE_COMPOSE_H
#define GE_COMPOSE_H

#include <stddef.h>

#include "base/base.h"
#include "graph/graph.h"

typedef struct ge_compose_opts {
	const char *prefix;      /* b's scope; NULL or "": "b" */
	const char *const *from; /* tensors of a ("a_out:0") */
	const char *const *to;   /* inputs of b they feed ("b_input") */
	size_t n_map;
} ge_compose_opts;

/* A new graph (*out, the caller frees it): a copy of a (its container,
 * signatures and variables with it) with b imported under the prefix,
 * b's mapped inputs reading a's tensors and then removed when nothing else
 * reads them.  The composition's serving_default takes a's inputs and b's
 * outputs: those of their serving_default signatures, else a's
 * Placeholders and the ops of b nothing reads (a TF2 SavedModel a keeps
 * its signatures).  GE_EINVAL (naming
 * the tensors) when the map is empty, a b input is mapped twice, or two
 * mapped tensors differ in dtype or shape; GE_ENOTFOUND when a tensor is
 * not there.  b's TF1 variables come along (variables.md, Composed
 * models): b's checkpoint keys under the prefix, a's saver saving and
 * restoring them, a's init running b's, and plan entries copying b's
 * checkpoint tensors into the checkpoint c is saved with.  A TF2
 * SavedModel b with variables is composed frozen (the first signature
 * holding the mapped inputs, as ge_extract freezes one).  GE_EINVAL when
 * b has variables and a is a TF2 SavedModel (freeze b first); GE_EGRAPH
 * when both have savers that cannot be joined. */
int ge_compose(ge_graph *a, ge_graph *b, const ge_compose_opts *o,
	       ge_graph **out, ge_error *err);

/* A new graph (*out): g cut to what the outputs need from the inputs on
 * (see above), with a serving_default signature over them, keyed by op
 * names ('/' and ':' made '_').  A TF2 SavedModel g is cut from the
 * first of its signatures (serving_default, then the others in file
 * order) whose frozen form (ge_tf2_freeze with tensor_names: calls
 * inlined, a body's ops named by the calls that lead to them, variables
 * constants) holds every tensor named.  GE_ENOTFOUND naming a missing
 * tensor, GE_EINVAL when there are no outputs or an input is given
 * twice. */
int ge_extract(ge_graph *g, const char *const *inputs, size_t n_in,
	       const char *const *outputs, size_t n_out, ge_graph **out,
	       ge_error *err);

#endif
