/*
 * fold_impl.h: op edits shared by fold.c and fold_weights.c.  Not part of
 * the library's API.
 */
#ifndef GE_FOLD_IMPL_H
#define GE_FOLD_IMPL_H

#include "analyses/eval.h"
#include "graph/graph.h"

/* Sets the dtype and value attrs of a Const from v. */
void ge_fold_set_const_attrs(ge_graph *g, ge_opid id, const ge_value *v);
/* Turns op id into a Const holding v: inputs, control inputs and attrs go;
 * name and device stay. */
void ge_fold_make_const(ge_graph *g, ge_opid id, const ge_value *v);
/* A new Const named after name (uniquified); GE_NOOP on failure. */
ge_opid ge_fold_new_const(ge_graph *g, const char *name, const ge_value *v,
			  const char *device);

#endif
