/*
 * opreg.h: OpDefs (an op's inputs, outputs, attrs and their defaults)
 * without TensorFlow.
 *
 * The built-in table is TensorFlow's op registry (ops.pbtxt, converted to
 * binary by gen_opdefs with the prose stripped) compiled into the library.
 * Its bytes are scanned on first use (names and spans only); each OpDef is
 * decoded when its type is first asked for, and stays until ge_opreg_free.  A container's
 * own OpList (a MetaGraphDef's stripped_op_list) is looked up with
 * ge_opreg_find_in or, for many look-ups, through a ge_oplist_index.
 *
 * Nothing here is thread-safe: the lazy decoding assumes one thread.
 */
#ifndef GE_OPREG_H
#define GE_OPREG_H

#include <stddef.h>

#include "tensorflow/core/framework/op_def.pb-c.h"

/* The OpDef registered under op_type (case-sensitive, as in TensorFlow),
 * or NULL when the built-in table has no such op.  The result belongs to
 * the table and stays valid until ge_opreg_free. */
const Tensorflow__OpDef *ge_opreg_find(const char *op_type);

/* The whole built-in table (never NULL), every OpDef decoded: for walks
 * over all ops, which a run that only looks types up never needs.  Its
 * OpDefs are those ge_opreg_find returns.  An OpDef whose bytes do not
 * decode (only a broken build can cause that) is left out. */
const Tensorflow__OpList *ge_opreg_list(void);

/* Releases the built-in table; a later ge_opreg_find decodes it again.
 * Pointers returned before become invalid. */
void ge_opreg_free(void);

/* The first OpDef named op_type in list, or NULL.  A linear scan: for one
 * look-up.  A NULL list finds nothing. */
const Tensorflow__OpDef *ge_opreg_find_in(const Tensorflow__OpList *list,
					  const char *op_type);

/* A hash index over an OpList, built once, for look-ups per node.  The index
 * points into list, which must outlive it; when names repeat, the first
 * OpDef wins (as in ge_opreg_find_in). */
typedef struct ge_oplist_index ge_oplist_index;

ge_oplist_index *ge_oplist_index_new(const Tensorflow__OpList *list);
const Tensorflow__OpDef *ge_oplist_index_find(const ge_oplist_index *x,
					      const char *op_type);
void ge_oplist_index_free(ge_oplist_index *x);

#endif
