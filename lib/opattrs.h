/*
 * opattrs.h: attrs an op gets from its OpDef.
 *
 * TensorFlow fills in the attrs an OpDef declares with a default when a
 * graph is imported; a GraphDef written with defaults stripped (as
 * TensorFlow's own export does for compatibility) lacks them.  These
 * helpers put them back, as transform_graph's add_default_attributes does.
 */
#ifndef GE_OPATTRS_H
#define GE_OPATTRS_H

#include "graph.h"

/* Adds to op id every attr that its OpDef (ge_graph_opdef) declares with
 * a default value and that the op does not have.  Attrs already present
 * are left as they are, whatever their value.  Returns the number of
 * attrs added (>= 0), GE_ENOTFOUND when the op's type has no OpDef, or
 * GE_EINVAL for an op that is not alive. */
int ge_op_fill_default_attrs(ge_graph *g, ge_opid id);

/* The same for every live op; ops without an OpDef are skipped.  Returns
 * the number of attrs added. */
size_t ge_graph_fill_default_attrs(ge_graph *g);

/* Whether the OpDef of `type` is marked stateful (random ops, variables,
 * queues: two such ops with the same inputs are not the same value).
 * Returns 1 or 0, or -1 when the type has no OpDef. */
int ge_op_type_is_stateful(const ge_graph *g, const char *type);

#endif
