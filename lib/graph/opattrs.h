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

#include "graph/graph.h"

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

/* The kind of value an attr holds, named as the Lua API names it ("s",
 * "i", "f", "b", "type", "shape", "tensor", "func", "placeholder", "none",
 * "list" for an empty list, "list(s)", ...).  A list kind is GE_AK_LIST |
 * its element kind. */
enum {
	GE_AK_NONE,
	GE_AK_S,
	GE_AK_I,
	GE_AK_F,
	GE_AK_B,
	GE_AK_TYPE,
	GE_AK_SHAPE,
	GE_AK_TENSOR,
	GE_AK_FUNC,
	GE_AK_PLACEHOLDER,
	GE_AK_NBASE,
	GE_AK_LIST = 0x10 /* | element kind; GE_AK_LIST alone: elements inferred */
};

struct Tensorflow__AttrValue__ListValue;

const char *ge_attrkind_name(int kind);
/* A kind from its name, accepting OpDef spellings ("string", "int",
 * "list(float)"); -1 if unknown. */
int ge_attrkind_parse(const char *s);
int ge_attrkind_of(const struct Tensorflow__AttrValue *v);
int ge_attrkind_of_list(const struct Tensorflow__AttrValue__ListValue *l);
/* The kind the OpDef of `type` declares for attr `name`; -1 when the type
 * has no OpDef, the OpDef no such attr, or the kind is not one of these. */
int ge_opdef_attrkind(const ge_graph *g, const char *type, const char *name);

#endif
