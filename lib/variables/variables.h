/*
 * variables.h: the variables of a graph.
 *
 * A GraphDef knows nothing of tf.Variable: a variable is a handful of ops
 * that TensorFlow's Python layer created together.  A reference variable
 * is a VariableV2 (or Variable) op holding the value, an Assign op that
 * initializes it from an initial value, and an Identity op (`x/read`) that
 * the model reads.  A resource variable is a VarHandleOp, an
 * AssignVariableOp initializer and ReadVariableOp reads.  A MetaGraphDef
 * describes the variables it knows of with VariableDefs in the variable
 * collections (`variables`, `trainable_variables`, `local_variables`, ...;
 * see ge_collection_holds_variables), naming those ops.
 *
 * ge_graph_variables finds them both ways: every op a VariableDef names as
 * its variable, and every VariableV2, Variable or VarHandleOp op, whether
 * or not a VariableDef describes it.  What a VariableDef says wins when it
 * names ops that exist; the rest is recognised from the ops around the
 * variable (TensorFlow's names `x/Assign`, `x/read`,
 * `x/Read/ReadVariableOp` are preferred when several ops qualify).
 * Initializers never come from a saver: an Assign whose value is restored
 * from a checkpoint is not an initializer.
 *
 * The checkpoint key of a variable (the name its value is saved under) is
 * read from the graph's saver when it has one (SaveV2, SaveSlices or Save
 * ops: their tensor_names constant, matched with the tensors they save),
 * else from a RestoreV2 whose output is assigned to the variable, else it
 * is the variable's name.
 *
 * Cost: linear in the ops and edges of the graph, plus decoding the
 * VariableDefs and the saver's name constants.
 */
#ifndef GE_VARIABLES_H
#define GE_VARIABLES_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

enum { GE_VAR_REF = 0, GE_VAR_RESOURCE = 1 };

typedef struct ge_variable {
	const char *name;          /* the variable op's name */
	int kind;                  /* GE_VAR_REF or GE_VAR_RESOURCE */
	ge_opid op;                /* VariableV2, Variable, VarHandleOp, or
				      the op a VariableDef names */
	ge_opid initializer;       /* Assign / AssignVariableOp, or GE_NOOP */
	ge_tref snapshot;          /* the read tensor (x/read:0); .op is
				      GE_NOOP when there is none */
	ge_tref initial_value;     /* the initializer's value; .op GE_NOOP if
				      unknown */
	int trainable;             /* 1, 0, or -1 when the graph has no
				      variable collections to say */
	int dtype;                 /* the value's DataType (DT_FLOAT, never a
				      _REF type); 0 if unknown */
	int rank;                  /* of the value; -1 if unknown */
	const int64_t *dims;       /* rank sizes, -1 for unknown ones */
	const char *key;           /* checkpoint key */
	const char *const *collections; /* variable collections whose
					   VariableDefs list it, in file
					   order */
	size_t n_collections;
	int has_def;               /* a VariableDef describes it */
	const char *slice_name;    /* partitioned: the full variable's name
				      (SaveSliceInfoDef.full_name), else NULL */
} ge_variable;

/* The variables of a graph, in node order of their variable ops.  All
 * strings and arrays are owned by the list. */
typedef struct ge_varlist {
	ge_variable *v;
	size_t n;
	/* private */
	uint32_t *by_op;           /* op id -> index + 1 (0: none) */
	size_t cap;
	ge_arena arena;
} ge_varlist;

/* Fills *out (which must not hold a list).  A VariableDef naming an op
 * that does not exist is skipped; one that does not decode is an error
 * (GE_EFORMAT, naming the graph and the collection), and then *out is
 * left empty.  The list describes the graph as it is now: any edit makes
 * it stale. */
int ge_graph_variables(ge_graph *g, ge_varlist *out, ge_error *err);
void ge_varlist_free(ge_varlist *l);
/* The variable whose variable op is op, or NULL. */
const ge_variable *ge_varlist_find_op(const ge_varlist *l, ge_opid op);
/* The variable of that name (the variable op's name), or NULL. */
const ge_variable *ge_varlist_find(const ge_varlist *l, const ge_graph *g,
				   const char *name);

/* Whether an op type is one of the variable ops recognised without a
 * VariableDef (VariableV2, Variable, VarHandleOp). */
int ge_is_variable_op_type(const char *type);

#endif
