/*
 * checkpoint.h: variable values between tensor bundles (bundle.h) and
 * graphs: finding a checkpoint, bundle tensors as TensorProtos and back,
 * and freezing a graph (replacing its variables by constants holding
 * their checkpoint values).
 *
 * Errors follow bundle.h: one line naming the file and the tensor (or the
 * graph and the op).  Functions that edit a graph check and read
 * everything first, so on error the graph is unchanged.
 */
#ifndef GE_CHECKPOINT_H
#define GE_CHECKPOINT_H

#include <stddef.h>

#include "base/base.h"
#include "base/bundle.h"
#include "graph/graph.h"

struct Tensorflow__TensorProto;

/* The bundle prefix a user means by path, as a malloc'd string:
 * - a prefix itself (path.index exists), or an .index file;
 * - a SavedModel directory (its variables/variables);
 * - a directory holding a `checkpoint` file (tf.train's CheckpointState,
 *   text): its model_checkpoint_path, relative to the directory unless
 *   absolute;
 * - a MetaGraphDef `x.meta` next to `x.index`.
 * GE_ENOTFOUND (naming path) when none of these applies. */
int ge_checkpoint_prefix(const char *path, char **prefix, ge_error *err);

/* Appends to out the encoding of a TensorProto holding entry e's value:
 * dtype, shape and the elements, as TensorFlow's make_tensor_proto
 * stores them (one element in its typed field, float_val etc.; more in
 * tensor_content; strings in string_val).  Checksums are verified.
 * GE_EINVAL for a partitioned entry or a dtype without a TensorProto
 * form (resource, variant). */
int ge_bundle_read_tensorproto(ge_bundle *b, const ge_bundle_entry *e,
			       ge_buf *out, ge_error *err);

/* Adds a tensor given as a TensorProto: its elements, expanded the way
 * TensorFlow reads them (tensor_content, or the typed field, whose last
 * value repeats to fill the shape; an empty field means zeros).  GE_EINVAL
 * (naming the tensor) for an unknown or negative shape, a content of the
 * wrong size or a dtype a bundle cannot hold. */
int ge_bundle_writer_add_tensorproto(ge_bundle_writer *w, const char *name,
				     const struct Tensorflow__TensorProto *t,
				     ge_error *err);

/* ------------------------------------------------------------ plans */

struct ge_ckpt_plan;

/* Writes the bundle at dst_prefix: every tensor of src under its own name,
 * then, for each plan entry, src's tensor plan->src[i] again under
 * plan->dst[i] (bytes and checksum unchanged); an entry with a
 * plan->src_from of its own reads that bundle instead.  src may be NULL
 * (a plan whose entries all read other bundles).  dst_prefix may be src's
 * own prefix.  Atomic: on any error (a plan key missing from src, a
 * corrupt tensor, a name given twice) nothing at dst_prefix changes. */
int ge_checkpoint_apply_plan(ge_bundle *src, const char *dst_prefix,
			     const struct ge_ckpt_plan *plan, ge_error *err);

/* The same for a SavedModel directory written by ge_save: rewrites
 * dir/variables/variables from the bundle at src_prefix (normally the
 * variables of the SavedModel the graph was loaded from; NULL: none). */
int ge_savedmodel_apply_plan(const char *dir, const char *src_prefix,
			     const struct ge_ckpt_plan *plan, ge_error *err);


/* ------------------------------------------------------------ freeze */

typedef struct ge_freeze_opts {
	int clear_devices;        /* empty every kept op's device, as
				     freeze_graph does by default */
	/* Keys the bundle does not hold yet: a variable whose key is
	 * plan->dst[i] reads plan->src[i], from the bundle
	 * plan->src_from[i] when the entry names one (a graph with
	 * duplicated or composed variables, before its checkpoint is
	 * written).  May be NULL. */
	const struct ge_ckpt_plan *plan;
} ge_freeze_opts;

/* TensorFlow's freeze_graph (convert_variables_to_constants over
 * extract_sub_graph), in place:
 * - the ops the outputs need are found walking back from the outputs'
 *   ops over data and control inputs; a variable op ends the walk, and
 *   a ReadVariableOp of a variable only leads to the variable;
 * - each variable op among them (ge_graph_variables) becomes a Const of
 *   the same name whose value is read from b under the variable's
 *   checkpoint key; a ReadVariableOp of one becomes an Identity (attr T,
 *   `_class` kept, control inputs dropped); Identity reads stay as they
 *   are, so every consumer reads the same names as before;
 * - every other op is removed, together with its collection entries.
 * outputs are tensors of g (an op given with index GE_CONTROL counts as
 * its op).  b may be NULL when the outputs need no variable.  Fails
 * (nothing changed) when a needed variable is not in the bundle (or there
 * is none), its dtype or shape disagrees with the variable's, the bundle
 * is corrupt, or a needed op other than a read writes to a variable (an
 * Assign the outputs depend on: a frozen graph could not run it). */
int ge_freeze(ge_graph *g, ge_bundle *b, const ge_tref *outputs, size_t n,
	      const ge_freeze_opts *o, ge_error *err);

#endif
