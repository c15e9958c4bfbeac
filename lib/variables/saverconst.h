/*
 * saverconst.h: what a TF1 saver keeps in its ops, read and written.
 *
 * A SaveV2 or RestoreV2 names its checkpoint keys and slices in string
 * Consts (inputs 1 and 2) and their dtypes in the list attr `dtypes`.
 * Transforms that move variables between savers, or give them new keys,
 * edit those; the helpers here do it for them.
 */
#ifndef GE_SAVERCONST_H
#define GE_SAVERCONST_H

#include <stddef.h>

#include "graph/graph.h"

/* The strings of a string Const, *n of them (TensorFlow repeats the last
 * one when fewer are stored), malloc'd; NULL if op is not such a Const. */
char **ge_const_strings(const ge_graph *g, ge_opid op, size_t *n);
/* Frees what ge_const_strings returned (NULL is fine). */
void ge_strings_free(char **s, size_t n);
/* Sets a Const's value to the rank-1 string tensor s[0..n). */
void ge_const_set_strings(ge_graph *g, ge_opid op, char **s, size_t n);
/* Sets attr `name` of op to a list of n types. */
void ge_attr_set_types(ge_graph *g, ge_opid op, const char *name,
		       const int *t, size_t n);
/* The list of types in attr `name` (*n of them, malloc'd), or NULL. */
int *ge_attr_types(const ge_graph *g, ge_opid op, const char *name,
		   size_t *n);

#endif
