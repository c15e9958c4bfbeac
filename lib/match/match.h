/*
 * match.h: graph patterns, the matcher and the rewrite driver behind
 * ge.match.
 *
 * A pattern is a tree (or a DAG: nodes may be shared) of ge_pat nodes,
 * built node by node, so a language binding can build one from its own
 * values.  Kinds:
 *
 *   op(types, operands...)   an op whose type is in `types`: "Conv2D",
 *                            "Conv2D|DepthwiseConv2dNative" or "*" (any);
 *                            operand i is matched against data input i
 *   any                      any tensor (output of any op)
 *   const                    a Const op
 *   ref(name)                what capture `name` holds (see captures)
 *   commute(types, a, b)     a binary op whose operands match a, b in
 *                            either order
 *   optional(p)              p, an op pattern with exactly one operand q,
 *                            or, when p does not match, q in its place:
 *                            "p's op may be absent"
 *   rest(p)                  as an operand: a run of zero or more inputs,
 *                            each matching p
 *
 * Operands.  An op pattern with no operands leaves the op's inputs
 * unconstrained.  With operands, the op must have exactly as many data
 * inputs as there are operands, except that each rest operand stands for
 * as many inputs as needed: the operands before and after it are matched
 * against the first and the last inputs, so op("ConcatV2", rest(any),
 * const) matches every ConcatV2 with its axis last.  Several rests in one
 * list are allowed; earlier rests take as many inputs as they can first,
 * backtracking as needed.
 *
 * Constraints (modifiers) on op, const, any and ref nodes; on any and ref
 * they apply to the matched tensor and its producer op:
 *   capture name (ge_pat_set_capture), attr equality or an attr callback,
 *   a generic predicate callback, dtype (any of a set; a reference type
 *   matches its base type), static shape (-1 dims are wildcards; the rank
 *   must be known), consumer count (distinct ops reading any data output
 *   of the op; of the tensor for any/ref), single_use (= exactly one
 *   consumer), name regex (PCRE2, unanchored search in the op name),
 *   control-input count and control-input patterns.  optional and rest
 *   nodes take no modifiers: put them on the inner pattern.
 *
 * Dtype and shape look at the tensor the parent reads; at the root, at
 * output 0.  A missing attr is compared using the OpDef's default value.
 *
 * Control operands (ge_pat_add_control_operand): each must match a
 * different control input of the op, in any order; unless a control count
 * is set, the op must have exactly that many control inputs.
 *
 * Captures.  A capture holds either an op (made by op and const patterns)
 * or a tensor (made by any, and by a ref whose name was not bound yet).
 * A name used twice in one pattern means the same thing both times: two
 * op captures must be the same op, two tensor captures the same tensor,
 * an op and a tensor capture the tensor's producer.  ref(name) matches a
 * tensor whose producer is the captured op, or exactly the captured
 * tensor.  Operands are matched left to right, depth first, so in
 * op("Add", any "x", op("Conv2D", ref "x", const)) the ref refers to the
 * Add's first input (a residual block).  A capture inside rest is a list
 * capture: it holds one value per input the rest took, in order (the
 * variadic tail as a list); its name may appear only once, only inside
 * that rest, and not in a ref.  A ref inside rest to a capture made
 * outside it requires every element to be that same value.  A capture
 * inside an absent optional stays unbound.
 *
 * The ops of a match are those matched by op patterns, and (listed
 * separately) by const patterns.  Constants are often shared (one axis
 * Const for every ConcatV2), so they never count as overlap between
 * matches and the rewrite driver never refuses to keep one alive.
 *
 * Callbacks return 1 to accept, 0 to reject, or a negative value to abort:
 * the matching call then returns GE_EINVAL with err "callback failed" (a
 * binding keeps its own error in ud and re-raises it).  A callback must
 * not edit the graph.
 *
 * Memory: patterns are reference counted.  Constructors return a new
 * pattern holding one reference; attaching a pattern to another (as an
 * operand, the inner pattern of optional/rest, a control operand) takes a
 * reference of its own, so the caller still releases its handle with
 * ge_pat_free.  Callback user data is released with the given free
 * function (may be NULL) when the node is freed.  Nodes may be modified
 * until they are used for matching; a binding wanting immutable patterns
 * copies a node (ge_pat_copy, which shares the children) before modifying
 * it.
 */
#ifndef GE_MATCH_H
#define GE_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

struct Tensorflow__AttrValue;

typedef struct ge_pat ge_pat;

enum ge_pat_kind {
	GE_PAT_OP = 1,
	GE_PAT_ANY,
	GE_PAT_CONST,
	GE_PAT_REF,
	GE_PAT_OPTIONAL,
	GE_PAT_REST,
};

/* Predicate on a matched value: t is the tensor the parent reads (at the
 * root: output 0 of the root op; for a control operand: {op,
 * GE_CONTROL}). */
typedef int (*ge_pat_fn)(const ge_graph *g, ge_tref t, void *ud);
/* Predicate on one attr of the op; v is NULL when the op has no such
 * attr and its OpDef no default. */
typedef int (*ge_pat_attr_fn)(const ge_graph *g, ge_opid op, const char *attr,
			      const struct Tensorflow__AttrValue *v, void *ud);
typedef void (*ge_ud_free)(void *ud);

/* ---- construction ---- */

/* types: "A", "A|B|C" or "*" (or NULL) for any type; GE_EINVAL for an
 * empty alternative. */
ge_pat *ge_pat_op(const char *types, ge_error *err);
ge_pat *ge_pat_any(void);
ge_pat *ge_pat_const(void);
ge_pat *ge_pat_ref(const char *name);
ge_pat *ge_pat_commute(const char *types, ge_pat *a, ge_pat *b,
		       ge_error *err);
/* p must be an op pattern with exactly one operand, not a rest
 * (GE_EINVAL otherwise). */
ge_pat *ge_pat_optional(ge_pat *p, ge_error *err);
/* p must not itself be a rest. */
ge_pat *ge_pat_rest(ge_pat *p, ge_error *err);
/* A new node with p's kind, types, constraints and capture, sharing p's
 * children (the callbacks' user data is shared too and released with the
 * last node using it). */
ge_pat *ge_pat_copy(const ge_pat *p);
ge_pat *ge_pat_incref(ge_pat *p);
void ge_pat_free(ge_pat *p);

int ge_pat_kind(const ge_pat *p);
/* The op type list as given ("Conv2D|DepthwiseConv2dNative"), or NULL
 * for any type (and for kinds other than op). */
const char *ge_pat_types(const ge_pat *p);
/* The capture name (the referenced name for ref), or NULL. */
const char *ge_pat_capture(const ge_pat *p);
/* What a capture name of a pattern binds, for tools that refer to the
 * values of a match by name (rewrite templates). */
typedef struct ge_pat_capinfo {
	const char *name;   /* owned by the pattern */
	int kind;           /* GE_CAP_OP when an op or const pattern captures
			       it, else GE_CAP_TENSOR */
	const char *types;  /* an op capture's type list as given ("Const"
			       for a const pattern); NULL: any type */
	int is_list;        /* captured inside rest */
} ge_pat_capinfo;
/* The capture names of p in the order of ge_match.caps; *n gets their
 * number.  The array is the caller's to free (NULL when there are none). */
ge_pat_capinfo *ge_pat_captures(const ge_pat *p, size_t *n);
/* One deterministic line describing p, e.g.
 * op("Relu", op("BiasAdd", any, const "b")):as("act"). */
void ge_pat_describe(const ge_pat *p, ge_buf *out);

/* ---- operands and modifiers: GE_OK, or GE_EINVAL with err set when the
 * node's kind does not take it ---- */

/* Op patterns only (not commute, whose operands are fixed). */
int ge_pat_add_operand(ge_pat *p, ge_pat *operand, ge_error *err);
int ge_pat_set_capture(ge_pat *p, const char *name, ge_error *err);
/* The attr must equal v (encoded AttrValue bytes, copied). */
int ge_pat_where_attr_raw(ge_pat *p, const char *attr, const uint8_t *v,
			  size_t len, ge_error *err);
int ge_pat_where_attr(ge_pat *p, const char *attr,
		      const struct Tensorflow__AttrValue *v, ge_error *err);
int ge_pat_where_attr_fn(ge_pat *p, const char *attr, ge_pat_attr_fn fn,
			 void *ud, ge_ud_free ud_free, ge_error *err);
int ge_pat_where(ge_pat *p, ge_pat_fn fn, void *ud, ge_ud_free ud_free,
		 ge_error *err);
/* Adds dtypes to the accepted set. */
int ge_pat_dtype(ge_pat *p, const int *dtypes, size_t n, ge_error *err);
int ge_pat_shape(ge_pat *p, const int64_t *dims, int rank, ge_error *err);
/* Distinct data consumers in [min, max]; max SIZE_MAX for no bound. */
int ge_pat_consumers(ge_pat *p, size_t min, size_t max, ge_error *err);
int ge_pat_single_use(ge_pat *p, ge_error *err);
int ge_pat_name(ge_pat *p, const char *regex, ge_error *err);
/* Number of control inputs in [min, max]. */
int ge_pat_control_count(ge_pat *p, size_t min, size_t max, ge_error *err);
int ge_pat_add_control_operand(ge_pat *p, ge_pat *sub, ge_error *err);

/* ---- match results ---- */

enum { GE_CAP_NONE = 0, GE_CAP_OP = 1, GE_CAP_TENSOR = 2 };

typedef struct ge_capture {
	const char *name;   /* owned by the pattern */
	int kind;           /* GE_CAP_NONE: not bound (absent optional);
			       for a list: the kind of its elements */
	ge_tref t;          /* GE_CAP_OP: t.op (t.index: the output the
			       parent read, 0 at the root, GE_CONTROL for a
			       control operand); GE_CAP_TENSOR: the tensor */
	int is_list;        /* a capture inside rest: items, one per input
			       the rest took (in order; fewer when an
			       optional inside was absent) */
	const ge_tref *items; /* owned by the ge_match */
	size_t n_items;
} ge_capture;

/* Filled by the matching functions; reuse one across calls and release
 * it with ge_match_free.  The arrays belong to the struct. */
typedef struct ge_match {
	ge_opid root;
	ge_capture *caps;   /* every capture name of the pattern, in order of
			       first appearance (depth first) */
	size_t n_caps;
	ge_opid *ops;       /* ops matched by op patterns, node order */
	size_t n_ops;
	ge_opid *consts;    /* ops matched by const patterns only */
	size_t n_consts;
	size_t cap_caps, cap_ops, cap_consts;
	ge_tref *items;     /* the elements of list captures */
	size_t cap_items;
} ge_match;
#define GE_MATCH_INIT {GE_NOOP, NULL, 0, NULL, 0, NULL, 0, 0, 0, 0, NULL, 0}
void ge_match_free(ge_match *m);
/* The capture named name, or NULL when the pattern has no such name. */
const ge_capture *ge_match_capture(const ge_match *m, const char *name);

/* ---- matching ---- */

/* Matches p with its root at op.  Returns 1 (out filled; out may be NULL),
 * 0 for no match (also for a dead op), GE_EINVAL for a pattern that
 * cannot be a root (a rest), a failed callback or regex. */
int ge_match_at(const ge_pat *p, const ge_graph *g, ge_opid op, ge_match *out,
		ge_error *err);

/* Why p does (not) match at op: writes one line saying which part of the
 * pattern failed and why, e.g.
 *   operand 1 of Conv2D "conv": expected Const, got Identity "w/read"
 * followed, when the failure is deeper than the root's operands, by a
 * line giving the path from the root.  Of all the ways the matcher tried,
 * the one that got furthest is reported.  Returns 1 (and writes "matches")
 * if p matches, 0 if not, a negative code on error. */
int ge_match_explain(const ge_pat *p, const ge_graph *g, ge_opid op,
		     ge_buf *out, ge_error *err);

/* An index of a graph's live ops by type, each list in node order.  Kept
 * beside the graph by its user: ge_opindex_sync rebuilds it (one pass
 * over the ops) only when the graph's version changed. */
typedef struct ge_opindex ge_opindex;
ge_opindex *ge_opindex_new(void);
void ge_opindex_free(ge_opindex *ix);
void ge_opindex_sync(ge_opindex *ix, const ge_graph *g);
/* The ops of one type (valid until the next sync); NULL, 0 if none. */
const ge_opid *ge_opindex_get(const ge_opindex *ix, const char *type,
			      size_t *n);

enum {
	/* Greedy in node order of the roots: an op already in an earlier
	 * match (constants aside) is not matched again; the matcher then
	 * looks for another way to match that avoids it. */
	GE_MATCH_NONOVERLAP = 1,
};

/* Visits the matches of p in the node order of their roots.  The
 * candidate roots come from the type index (ix, synced here; NULL: one is
 * built for the call), so the cost follows the number of ops of the root's
 * types.  The roots are fixed when the iteration starts; ops created after
 * that are never part of its matches, and ops removed are skipped, so the
 * graph may be edited between two calls of ge_match_iter_next (each match
 * is computed on the graph as it is then).  ge_graph_reorder invalidates
 * an iterator. */
typedef struct ge_match_iter ge_match_iter;
int ge_match_iter_new(const ge_pat *p, const ge_graph *g, ge_opindex *ix,
		      int flags, ge_match_iter **out, ge_error *err);
/* 1: *out holds the next match; 0: no more; < 0: error. */
int ge_match_iter_next(ge_match_iter *it, ge_match *out, ge_error *err);
/* Non-overlapping mode: gives the ops of m (a match this iterator
 * returned) back, so later matches may use them. */
void ge_match_iter_release(ge_match_iter *it, const ge_match *m);
void ge_match_iter_free(ge_match_iter *it);

/* Calls cb for each match (the iterator above, without edits: cb must not
 * change the graph).  cb returns 0 to go on, > 0 to stop, < 0 to abort
 * (GE_EINVAL "callback failed" unless cb set err).  *count (may be NULL)
 * receives the number of matches visited. */
typedef int (*ge_match_cb)(const ge_graph *g, const ge_match *m, void *ud,
			   ge_error *err);
int ge_match_all(const ge_pat *p, const ge_graph *g, ge_opindex *ix,
		 int flags, ge_match_cb cb, void *ud, size_t *count,
		 ge_error *err);

/* ---- rewriting ---- */

/* What a rule's action hands back: the tensors of the match to replace
 * (from[i]) and their replacements (to[i]); see ge_rewrite. */
typedef struct ge_rewrite_repl {
	ge_tvec from, to;
	ge_opvec names;     /* (new op, op of the match) pairs */
} ge_rewrite_repl;
#define GE_REWRITE_REPL_INIT {GE_VEC_INIT, GE_VEC_INIT, GE_VEC_INIT}
void ge_rewrite_replace(ge_rewrite_repl *r, ge_tref from, ge_tref to);
/* Once the match's unneeded ops are removed, new_op (made by the action)
 * takes the name of old_op, an op of the match, which must be gone by
 * then: the replacement keeps the name a reader may fetch. */
void ge_rewrite_take_name(ge_rewrite_repl *r, ge_opid new_op, ge_opid old_op);

/* An action gets the graph and one match (valid during the call).  It
 * edits the graph itself, or fills r, or both.  It returns > 0 when it
 * rewrote the site, 0 to say "judge by the effect" (a site counts as
 * rewritten if r is not empty or the graph version changed; otherwise the
 * site is declined and its ops may be used by later matches of the pass),
 * or < 0 to abort the rewrite (err may be set by the action). */
typedef int (*ge_rule_fn)(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
			  void *ud, ge_error *err);

typedef struct ge_rule {
	const char *name;      /* for counts and errors */
	const ge_pat *pattern;
	ge_rule_fn action;
	void *ud;
} ge_rule;

enum { GE_REWRITE_ONCE = 0, GE_REWRITE_FIXPOINT = 1 };

typedef struct ge_rewrite_opts {
	int mode;                  /* GE_REWRITE_ONCE: one pass */
	int max_iterations;        /* fixpoint: at most this many passes
				      (0: 100) */
	int allow_remove_consumed; /* see ge_rewrite */
	int no_validate;           /* skip the check after each pass */
} ge_rewrite_opts;
#define GE_REWRITE_OPTS_INIT {GE_REWRITE_ONCE, 0, 0, 0}

/*
 * Runs the rules over g.  A pass runs each rule in turn, in the order
 * given: the rule's non-overlapping matches (GE_MATCH_NONOVERLAP over the
 * graph as the rule starts; each match computed just before its action
 * runs, so earlier actions never leave it stale) each get the action.
 * ONCE runs one pass; FIXPOINT runs passes until one rewrites nothing,
 * and fails with an error naming the rules that still fired when pass
 * max_iterations rewrote something.
 *
 * Replacements: for each pair, every consumer of from that existed before
 * the action is made to read to instead (ops the action created keep their
 * inputs, so an action may insert an op after a matched tensor).  Then the
 * ops of the match that nothing reads any more are removed.  The root
 * stays while outputs of it that were not replaced have readers.  If
 * another op of the match would have been removed but an op outside the
 * match still reads it (or has it as a control input), the rewrite fails:
 * the ops the action created are removed again and nothing is rerouted,
 * unless allow_remove_consumed is set: then such ops are kept for their
 * outside consumers and only the rest is removed.  Constants are always
 * kept silently while something reads them.
 *
 * After each pass that rewrote something the graph is validated
 * (ge_graph_validate) unless no_validate is set: problems that were not
 * there before the first pass make the rewrite fail with them.
 *
 * counts (may be NULL) receives n entries: the rewrites made by each rule;
 * *passes (may be NULL) the number of passes run.  On error the edits of
 * the passes before it stay; work on a clone for all or nothing.
 */
int ge_rewrite(ge_graph *g, const ge_rule *rules, size_t n,
	       const ge_rewrite_opts *o, size_t *counts, size_t *passes,
	       ge_error *err);

#endif
