/*
 * opmatcher.h: graph_editor's OpMatcher (its tests' small op pattern
 * matcher), kept for compatibility; ge.match is the richer engine.
 *
 * A matcher accepts an op when all its positive filters accept it and,
 * for each of input_ops / control_input_ops / output_ops that was set:
 * - input_ops: the op has exactly that many data inputs and each non-NULL
 *   matcher accepts the producer of the corresponding input;
 * - control_input_ops: the same over the control inputs;
 * - output_ops: the op has exactly that many outputs; for each entry that
 *   is not GE_MATCH_ANY, the output has exactly that many consumer ops
 *   (distinct, node order) and each non-NULL matcher accepts the consumer
 *   at its position.
 *
 * Differences from the reference (decision 11 and the output_ops bug): op
 * types are compared exactly, and a "skip" entry in output_ops is one
 * entry, not two.
 *
 * Matchers are reference counted: setting sub-matchers takes a reference,
 * so a caller may free its own handle (ge_opmatcher_free drops one
 * reference) and one matcher may be shared by several parents.
 */
#ifndef GE_OPMATCHER_H
#define GE_OPMATCHER_H

#include <stddef.h>

#include "base/base.h"
#include "graph/graph.h"
#include "editor/select.h"

typedef struct ge_opmatcher ge_opmatcher;

/* A matcher with no filter (accepts every op until filters are added). */
ge_opmatcher *ge_opmatcher_new(void);
ge_opmatcher *ge_opmatcher_ref(ge_opmatcher *m);
void ge_opmatcher_free(ge_opmatcher *m);

/* Positive filters. */
int ge_opmatcher_add_regex(ge_opmatcher *m, const char *pattern,
			   ge_error *err);           /* search in op name */
void ge_opmatcher_add_op(ge_opmatcher *m, ge_opid op);  /* this op only */
void ge_opmatcher_add_fn(ge_opmatcher *m, ge_op_pred fn, void *ud);
/* Type in the list, compared exactly (op_type). */
void ge_opmatcher_add_types(ge_opmatcher *m, const char *const *types,
			    size_t n);

/* Each may be set once (GE_EINVAL "input_ops is already set.").  NULL
 * entries match anything. */
int ge_opmatcher_input_ops(ge_opmatcher *m, ge_opmatcher *const *subs,
			   size_t n, ge_error *err);
int ge_opmatcher_control_input_ops(ge_opmatcher *m, ge_opmatcher *const *subs,
				   size_t n, ge_error *err);
/* Entry i is lists[i][0 .. lens[i]-1]; lens[i] == GE_MATCH_ANY skips the
 * output (lists[i] is then ignored). */
#define GE_MATCH_ANY ((size_t)-1)
int ge_opmatcher_output_ops(ge_opmatcher *m,
			    ge_opmatcher *const *const *lists,
			    const size_t *lens, size_t n, ge_error *err);

/* 1 if the op matches, 0 if not, GE_EINVAL if the op is not a live op of
 * g, a callback aborted or a regex failed to run. */
int ge_opmatcher_match(ge_opmatcher *m, const ge_graph *g, ge_opid op,
		       ge_error *err);

/* op_type: 1 if the op's type is one of types (exact comparison). */
int ge_op_type_in(const ge_graph *g, ge_opid op, const char *const *types,
		  size_t n);

#endif
