/*
 * select.h: graph_editor's `util` and `select` modules over a ge_graph.
 *
 * Semantics follow tf.contrib.graph_editor function by function, with the
 * project's decisions: walk results are deterministic (each wave in node
 * order), name scopes are literal strings, and regexes are PCRE2 used with
 * search (unanchored) semantics.  Every function here costs time linear in
 * the ops and edges it touches: "is in this list" is answered by a bitset
 * over op ids (ge_opset) or a hash of tensors (ge_tmap, sets.h), never by
 * scanning.
 *
 * Conventions:
 * - Lists are ge_opvec / ge_tvec owned by the caller.  Output vectors are
 *   appended to; callers normally pass empty ones.
 * - An `ops` argument equal to GE_ALL_OPS means "every live op of the
 *   graph, in node order" (graph_editor accepts a Graph there); NULL with
 *   n == 0 is an empty list, as in an empty ge_opvec.
 * - Dangling inputs (producer GE_NOOP) are not tensors of the graph and are
 *   skipped everywhere.
 * - Callbacks (ge_op_pred, ge_t_pred) return 1 to accept, 0 to reject, or a
 *   negative value to abort the operation: the function then releases
 *   what it allocated and returns GE_EINVAL with err "callback failed", so
 *   a binding can keep its own error in the user data, let the C code
 *   unwind, and re-raise it.
 */
#ifndef GE_SELECT_H
#define GE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "graph/sets.h"

/* The whole graph as an `ops` argument (n is then ignored). */
extern const ge_opid ge_all_ops_[1];
#define GE_ALL_OPS (ge_all_ops_)

/* ------------------------------------------------------------ uses */

/* The uses of many tensors at once, computed in one pass over the uses of
 * their distinct producers (so a producer with many outputs is scanned
 * once, not once per tensor).  The uses of ts[i] are
 * uses[off[i]] .. uses[off[i] + len[i] - 1], in (consumer id, slot)
 * order; a tensor listed twice shares one range. */
typedef struct ge_tuses {
	size_t n;
	size_t *off, *len;
	ge_use *uses;
} ge_tuses;

void ge_tuses_compute(ge_tuses *u, const ge_graph *g, const ge_tref *ts,
		      size_t n);
void ge_tuses_free(ge_tuses *u);

/* ------------------------------------------------------------ util */

/* Removes repeated entries in place, keeping first occurrences in order
 * (graph_editor's concatenate_unique onto an empty list). */
void ge_opvec_unique(const ge_graph *g, ge_opvec *v);
void ge_tvec_unique(ge_tvec *v);
/* concatenate_unique: appends the items of b not yet in a, in b's order. */
void ge_opvec_concat_unique(const ge_graph *g, ge_opvec *a, const ge_opid *b,
			    size_t n);

/* make_list_of_op(graph) and get_tensors(graph): every live op in node
 * order, and every output of every live op (op order, then index). */
void ge_graph_all_ops(const ge_graph *g, ge_opvec *out);
void ge_graph_all_ts(const ge_graph *g, ge_tvec *out);

/* The producers of ts, duplicates kept. */
void ge_get_generating_ops(const ge_tref *ts, size_t n, ge_opvec *out);
/* The unique union of the data consumers of ts: tensor by tensor, each
 * tensor's consumers in node order. */
void ge_get_consuming_ops(const ge_graph *g, const ge_tref *ts, size_t n,
			  ge_opvec *out);

/* Name helpers; all return malloc'd strings the caller frees.
 * scope_finalize("a/b") = "a/b/" ("" stays ""); scope_dirname("a/b/op") =
 * "a/b/" ("" without a '/'); scope_basename("a/b/op") = "op". */
char *ge_scope_finalize(const char *scope);
char *ge_scope_dirname(const char *name);
char *ge_scope_basename(const char *name);

#define GE_PH_PREFIX "geph"

/* placeholder_name.  With t (non-NULL): scope NULL means the dirname of
 * the producer's name; the name is scope + basename when the producer's
 * basename already starts with prefix + "__", else
 * scope + prefix + "__" + basename + "_" + index.  Without t:
 * (scope or "") + prefix.  A non-empty scope gets a trailing '/'.  prefix
 * NULL means "geph".  The name is not uniquified. */
char *ge_placeholder_name(const ge_graph *g, const ge_tref *t,
			  const char *scope, const char *prefix);

/* make_placeholder_from_dtype_and_shape: appends a Placeholder op named
 * unique_name(placeholder_name(NULL, scope, prefix)) with attrs `dtype`
 * (when dtype > 0) and `shape` (rank < 0: unknown rank; dims of -1 are
 * unknown).  Returns the new op, or GE_NOOP with err set. */
ge_opid ge_make_placeholder(ge_graph *g, int dtype, const int64_t *dims,
			    int rank, const char *scope, const char *prefix,
			    ge_error *err);
/* make_placeholder_from_tensor: a Placeholder in g with the dtype and
 * static shape of tensor t of graph src (src NULL means g), named
 * unique_name(placeholder_name(t, scope, prefix)). */
ge_opid ge_make_placeholder_from_tensor(ge_graph *g, const ge_graph *src,
					ge_tref t, const char *scope,
					const char *prefix, ge_error *err);

/* ------------------------------------------------------------ select */

typedef int (*ge_op_pred)(const ge_graph *g, ge_opid op, void *ud);
typedef int (*ge_t_pred)(const ge_graph *g, ge_tref t, void *ud);

/* _get_input_ts: unique data inputs, op order then input order.
 * _get_output_ts: all outputs, op order then index. */
void ge_get_input_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		     ge_tvec *out);
void ge_get_output_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		      ge_tvec *out);

/* filter_ops / filter_ts: pred NULL keeps everything.  filter_ts looks at
 * the unique inputs of ops followed by their outputs not yet seen. */
int ge_filter_ops(const ge_graph *g, const ge_opid *ops, size_t n,
		  ge_op_pred pred, void *ud, ge_opvec *out, ge_error *err);
int ge_filter_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		 ge_t_pred pred, void *ud, ge_tvec *out, ge_error *err);
/* The same with a regex searched in op names / "name:index". */
int ge_filter_ops_from_regex(const ge_graph *g, const ge_opid *ops, size_t n,
			     const char *regex, ge_opvec *out, ge_error *err);
int ge_filter_ts_from_regex(const ge_graph *g, const ge_opid *ops, size_t n,
			    const char *regex, ge_tvec *out, ge_error *err);

/* get_name_scope_ops: the ops named exactly `scope` or starting with
 * `scope/` (one trailing '/' of scope is ignored).  The scope is literal
 * text, not a regex. */
void ge_get_name_scope_ops(const ge_graph *g, const ge_opid *ops, size_t n,
			   const char *scope, ge_opvec *out);

/* get_ops_ios: unique neighbours; for each op: producers of its inputs,
 * consumers of each output (output by output), then its control outputs
 * and control inputs when asked.  May include ops of the list itself. */
void ge_get_ops_ios(const ge_graph *g, const ge_opid *ops, size_t n,
		    int control_inputs, int control_outputs, ge_opvec *out);

/* compute_boundary_ts: outside inputs, outside outputs and inside tensors
 * of a set of ops (control edges ignored).  Any out pointer may be NULL. */
void ge_compute_boundary_ts(const ge_graph *g, const ge_opid *ops, size_t n,
			    ge_tvec *in, ge_tvec *out, ge_tvec *inside);

/* get_within_boundary_ops: undirected flood fill from seeds that does not
 * cross boundary ops (added only if inclusive).  The result keeps the ops
 * of `ops` (NULL: the graph) that were reached, in `ops` order.  GE_EINVAL
 * if a boundary op is also a seed. */
int ge_get_within_boundary_ops(const ge_graph *g, const ge_opid *ops,
			       size_t n, const ge_opid *seeds, size_t n_seeds,
			       const ge_opid *boundary, size_t n_boundary,
			       int inclusive, int control_inputs,
			       int control_outputs, ge_opvec *out,
			       ge_error *err);

/* Seeds of a walk: ops, and tensors.  Tensor seeds stand for their
 * consumers in a forward walk and for their producers in a backward walk
 * (graph_editor decides by the type of the first seed; the bindings do
 * that and fill one of the two). */
typedef struct ge_seeds {
	const ge_opid *ops;
	size_t n_ops;
	const ge_tref *ts;
	size_t n_ts;
} ge_seeds;

typedef struct ge_walk_opts {
	int inclusive;              /* keep the seeds in the result */
	const ge_opid *within_ops;  /* NULL: unrestricted; else seeds are
				       intersected with it and only its ops
				       are admitted (an empty list admits
				       nothing beyond the seeds, as in the
				       reference) */
	size_t n_within;
	ge_op_pred within_fn;       /* not applied to seeds; called at most
				       once per op */
	void *within_ud;
	const ge_tref *stop_at_ts;  /* tensors the walk does not cross */
	size_t n_stop;
	int control;                /* forward: follow control outputs;
				       backward: follow control inputs */
} ge_walk_opts;
#define GE_WALK_OPTS_INIT {1, NULL, 0, NULL, NULL, NULL, 0, 0}

/* Result: the seeds (unique, node order), then each wave of newly reached
 * ops in node order; without inclusive the seeds are left out. */
int ge_get_forward_walk_ops(const ge_graph *g, const ge_seeds *seeds,
			    const ge_walk_opts *o, ge_opvec *out,
			    ge_error *err);
int ge_get_backward_walk_ops(const ge_graph *g, const ge_seeds *seeds,
			     const ge_walk_opts *o, ge_opvec *out,
			     ge_error *err);
/* The forward walk (fo) filtered by membership in the backward walk (bo),
 * in forward order; the union is the forward walk followed by the backward
 * ops not in it. */
int ge_get_walks_intersection_ops(const ge_graph *g, const ge_seeds *fwd,
				  const ge_seeds *bwd,
				  const ge_walk_opts *fo,
				  const ge_walk_opts *bo, ge_opvec *out,
				  ge_error *err);
int ge_get_walks_union_ops(const ge_graph *g, const ge_seeds *fwd,
			   const ge_seeds *bwd, const ge_walk_opts *fo,
			   const ge_walk_opts *bo, ge_opvec *out,
			   ge_error *err);

/* One argument of select_ops / select_ts / make_view: a regex, or a list
 * of ops and tensors (select_ops ignores the tensors of a list, select_ts
 * its ops). */
enum { GE_SEL_LIST = 0, GE_SEL_REGEX = 1 };
typedef struct ge_sel_arg {
	int kind;
	const char *regex;
	const ge_opid *ops;
	size_t n_ops;
	const ge_tref *ts;
	size_t n_ts;
} ge_sel_arg;

typedef struct ge_select_opts {
	ge_op_pred op_filter;  /* positive_filter for ops, or NULL */
	void *op_filter_ud;
	ge_t_pred t_filter;    /* positive_filter for tensors, or NULL */
	void *t_filter_ud;
	int restrict_ops_regex; /* select_ops: only "(?#ops)" patterns */
	int restrict_ts_regex;  /* select_ts: only "(?#ts)" patterns */
} ge_select_opts;

/* select_ops: regexes (g required, else GE_EINVAL) are searched in all op
 * names; "(?#ts)" patterns are skipped.  The result is unique, first seen
 * first.  o may be NULL. */
int ge_select_ops(const ge_graph *g, const ge_sel_arg *args, size_t n,
		  const ge_select_opts *o, ge_opvec *out, ge_error *err);
/* select_ts: "(?#ops)" patterns are skipped; a regex is searched in the
 * names of all tensors of the graph. */
int ge_select_ts(const ge_graph *g, const ge_sel_arg *args, size_t n,
		 const ge_select_opts *o, ge_tvec *out, ge_error *err);
/* select_ops_and_ts: select_ops without restriction and select_ts with
 * restrict_ts_regex, so a plain regex selects ops and "(?#ts)..."
 * tensors. */
int ge_select_ops_and_ts(const ge_graph *g, const ge_sel_arg *args, size_t n,
			 const ge_select_opts *o, ge_opvec *ops, ge_tvec *ts,
			 ge_error *err);

/* ------------------------------------------------------------ colocation */

/* The ops other ops are colocated with: every live op named X by a
 * "loc:@X" entry in some op's `_class` attr, appended to out once each,
 * in the order first named.  Names of ops not in the graph are skipped.  Recipes that
 * remove or merge ops keep these, as TensorFlow's own graph transforms
 * do, since a colocation group pointing at a missing op fails at import.
 * Only ops whose bytes mention `_class` are decoded. */
void ge_colocation_targets(const ge_graph *g, ge_opvec *out);

#endif
