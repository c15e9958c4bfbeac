/*
 * tf2.h: what a TF2 SavedModel's object graphs say about its functions'
 * captured inputs, and freezing such a model.
 *
 * A TF2 SavedModel keeps its computation in functions.  The top-level
 * graph calls each signature's function with a StatefulPartitionedCall
 * whose last inputs are the function's captures: the resources (variable
 * handles, tables) and constants the Python function closed over.  The
 * MetaGraphDef's SavedObjectGraph says, for each concrete function, which
 * object each capture is (`bound_inputs`, ids of SavedObjectGraph nodes);
 * the checkpoint's own object graph (the TrackableObjectGraph stored as
 * the string tensor `_CHECKPOINTABLE_OBJECT_GRAPH` of the bundle) says
 * under which key each object's value is saved
 * (`v/.ATTRIBUTES/VARIABLE_VALUE`).  The two object graphs are matched
 * the way TensorFlow's loader matches them: from the root, child by child,
 * by their local names.
 *
 * Errors follow base.h: one line naming the file (or graph), the function
 * and the op.
 */
#ifndef GE_TF2_H
#define GE_TF2_H

#include <stddef.h>

#include "base/base.h"
#include "base/bundle.h"
#include "graph/graph.h"

struct Tensorflow__TrackableObjectGraph;

/* The object graphs of one SavedModel, matched. */
typedef struct ge_tf2_objects ge_tf2_objects;

/* Whether g is a TF2 SavedModel: its MetaGraphDef has a SavedObjectGraph
 * with nodes. */
int ge_is_tf2_savedmodel(ge_graph *g);

/* Reads the checkpoint's object graph from the bundle: GE_ENOTFOUND
 * (naming the index file) when the bundle has none, GE_EFORMAT when it
 * does not decode.  The caller frees *out with
 * tensorflow__trackable_object_graph__free_unpacked(*out, NULL). */
int ge_checkpoint_object_graph(ge_bundle *b,
			       struct Tensorflow__TrackableObjectGraph **out,
			       ge_error *err);

/* Matches g's SavedObjectGraph with the object graph of b (b may be NULL:
 * then no object has a key).  GE_EINVAL when g has no SavedObjectGraph.
 * *out refers to g's decoded messages: free it before g. */
int ge_tf2_objects_open(ge_graph *g, ge_bundle *b, ge_tf2_objects **out,
			ge_error *err);
void ge_tf2_objects_free(ge_tf2_objects *o);

enum {
	GE_TF2_VARIABLE = 1, /* a tf.Variable (SavedVariable) */
	GE_TF2_CONSTANT,     /* a captured constant (SavedConstant) */
	GE_TF2_RESOURCE,     /* another resource (table, iterator, ...) */
	GE_TF2_OTHER,        /* any other object */
};

/* One captured input of a call. */
typedef struct ge_tf2_capture {
	size_t slot;        /* data input of the call */
	ge_tref t;          /* what the call reads there */
	int node;           /* SavedObjectGraph node id */
	int kind;           /* GE_TF2_* */
	const char *name;   /* a variable's name, a constant's op, else the
			       object's path */
	const char *path;   /* the object's path from the root, local names
			       joined by '/' ("model/dense/kernel"), or "?"
			       when the root does not reach it */
	const char *key;    /* checkpoint key of its value, or NULL when the
			       checkpoint holds none (or there is none) */
} ge_tf2_capture;

/* The captured inputs of call (a PartitionedCall or
 * StatefulPartitionedCall of g whose `f` is one of the SavedObjectGraph's
 * concrete functions): the last len(bound_inputs) data inputs, in order.
 * *out is malloc'd (free it); its strings belong to o.  A call of a
 * function the SavedObjectGraph does not know has no captures (*n = 0).
 * GE_EFORMAT when the call has fewer inputs than bound_inputs, or a bound
 * input names no node. */
int ge_tf2_call_captures(const ge_tf2_objects *o, const ge_graph *g,
			 ge_opid call, ge_tf2_capture **out, size_t *n,
			 ge_error *err);

/* The checkpoint key TensorFlow derives for the value of the object at
 * path (local names escaped: '.' as "..", '/' as ".S"), malloc'd. */
char *ge_tf2_variable_key(const char *path);

/* ------------------------------------------------------------ freeze */

/* Rewrites the reads of variables that a freeze cannot turn into values
 * as they are, among the ops the outputs need, the way TensorFlow's
 * convert_variables_to_constants_v2 does: a ResourceGather of a variable
 * op becomes a GatherV2 (axis: its batch_dims) of a new ReadVariableOp
 * of it, a ResourceGatherNd a GatherNd, a VariableShape a Shape, so that
 * every remaining use of the variable is a ReadVariableOp (which
 * ge_freeze turns into an Identity of the value); what read an Identity
 * of a variable's handle reads the handle.  Adds the reads and
 * axis constants under the op's name (`x/ReadVariableOp`, `x/axis`).
 * *n (when given) counts the ops rewritten. */
int ge_resource_reads_as_values(ge_graph *g, const ge_tref *outputs,
				size_t n_outputs, size_t *n, ge_error *err);

typedef struct ge_tf2_freeze_opts {
	const char *signature;  /* NULL: "serving_default" */
	int clear_devices;      /* empty every op's device */
	int tensor_names;       /* keep the signature's tensor names rather
				   than its keys (below) */
} ge_tf2_freeze_opts;

/* Freezes one signature of a TF2 SavedModel into a new plain GraphDef
 * (*out, which the caller frees); g is not changed.
 * - the calls the signature's outputs need are inlined, recursively;
 * - every captured variable they read is resolved through the object
 *   graphs to its checkpoint key in b, and its handle becomes a Const of
 *   its value (its ReadVariableOps Identities of it, its gathers and
 *   shapes as ge_resource_reads_as_values says);
 * - what the outputs do not need goes, and so does the function library
 *   but for the functions that ops left in the graph still call (While
 *   and If bodies: functional control flow is not lowered);
 * - inputs are the signature's Placeholders renamed to its input keys,
 *   outputs Identity ops named by its output keys (`x:0` and `output_0:0`
 *   where the signature said `serving_default_x:0` and
 *   `StatefulPartitionedCall:0`); an op that had such a name is renamed
 *   to name_N.  With tensor_names, the signature's own tensor names stay
 *   valid instead: inputs keep their names, and a call the outputs read
 *   is replaced by an IdentityN of the call's name passing on what the
 *   body returns (`StatefulPartitionedCall:1` is still output 1).
 * b may be NULL (a SavedModel without variables): then a signature that
 * needs variables fails with a message listing them.  Fails too, naming
 * the op, when a needed resource is not a variable, or an op other than a
 * read uses one. */
int ge_tf2_freeze(ge_graph *g, ge_bundle *b, const ge_tf2_freeze_opts *o,
		  ge_graph **out, ge_error *err);

#endif
