/*
 * sigedit.h: editing a model's serving interface, its SignatureDefs.
 *
 * A SignatureDef names tensors of the top-level graph under keys.  In a
 * TF1 MetaGraphDef or SavedModel that is the whole interface.  A TF2
 * SavedModel says it twice: TensorFlow Serving reads the SignatureDefs,
 * `tf.saved_model.load` the object graph, where the root's child
 * `signatures` (a `signature_map` object) has one child per signature, a
 * bare concrete function whose `argument_keywords` are the input keys and
 * whose concrete function's structured signatures give the input and
 * output keys as TensorSpecs.  The edits here keep both in step:
 *
 * - a set (new or changed signature) makes a new function in the library,
 *   `__inference_signature_wrapper_NAME_N`, a copy of the function whose
 *   call produces the outputs (so its captured variables are read through
 *   the same handles, `bound_inputs` copied), with structured signatures
 *   over the new keys, and binds it under `signatures` as TensorFlow
 *   writes it;
 * - a rename renames the `signatures` child, a remove drops it (the old
 *   function stays in the library, as an unreferenced concrete function).
 *
 * What the TF2 path needs: every output is an output of one call
 * (StatefulPartitionedCall or PartitionedCall) of a concrete function of
 * the object graph; its inputs are exactly the call's inputs that are not
 * captures; and with keys sorted (the order TensorFlow flattens a dict
 * in) inputs and outputs come in the call's order, every output of the
 * call named once.  Otherwise GE_EINVAL says which condition fails.
 *
 * Errors follow base.h: one line naming the graph, the signature and the
 * tensor or key; on error nothing is changed.
 */
#ifndef GE_SIGEDIT_H
#define GE_SIGEDIT_H

#include <stddef.h>

#include "base/base.h"
#include "graph/graph.h"

/* One key of a signature and the tensor it names ("x:0", "x"). */
typedef struct ge_sig_key {
	const char *key;
	const char *tensor;
} ge_sig_key;

typedef struct ge_sig_spec {
	const ge_sig_key *inputs;
	size_t n_inputs;
	const ge_sig_key *outputs;
	size_t n_outputs;
	const char *method_name; /* NULL: the old one, or
				    tensorflow/serving/predict */
} ge_sig_spec;

/* Sets signature `name` (made, or replaced as a whole).  Each tensor must
 * exist (GE_ENOTFOUND naming it), keys must be distinct and non-empty
 * (GE_EINVAL naming the key); dtypes and shapes come from inference.  A
 * graph without a container gets a MetaGraphDef. */
int ge_signature_set(ge_graph *g, const char *name, const ge_sig_spec *s,
		     ge_error *err);
/* GE_ENOTFOUND when absent. */
int ge_signature_drop(ge_graph *g, const char *name, ge_error *err);
/* GE_ENOTFOUND when `from` is absent, GE_EINVAL when `to` is taken. */
int ge_signature_move(ge_graph *g, const char *from, const char *to,
		      ge_error *err);
/* Renames an input (is_output 0) or output key of a signature, keeping
 * its tensor: a set with that one key changed. */
int ge_signature_rename_key(ge_graph *g, const char *name, int is_output,
			    const char *from, const char *to, ge_error *err);

#endif
