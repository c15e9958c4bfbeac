/*
 * transform.h: graph_editor's transform module: copying a subgraph view,
 * within its graph or into another one, under a new name scope, with its
 * inputs replaced; and, built on the same machinery (import.c), merging
 * one graph into another and exporting one name scope as a graph.
 *
 * A ge_transformer is a table of handlers, each a C function with a user
 * data pointer, so a language binding can install its own functions.  A
 * transform calls them with a ge_tinfo, the state of the copy (graph_editor's
 * _TmpInfo); the same object is handed back to the caller at the end as the
 * result's TransformerInfo, mapping originals to copies and back.
 *
 * Semantics are graph_editor's (GRAPH_EDITOR.md 1.7) with the project's
 * decisions (section 2; doc/transform.md):
 * - ops are copied in node order, whatever the order of the view's list;
 *   control inputs, colocation, frame names and collections are resolved
 *   after every op exists;
 * - each external input tensor is handed to its handler once, however many
 *   slots read it (one placeholder per tensor);
 * - an input produced by an op of the view that is copied later (the back
 *   edge of a while loop, or a graph not in topological order) is read
 *   through a temporary stand-in that is rewired to the real copy and
 *   removed once all ops exist: Merge input order is kept and no geph_tmp
 *   op is left;
 * - the Enter ops of each copied loop share one fresh frame_name, distinct
 *   from every frame already in the destination;
 * - `_class` colocation (`loc:@X`) points at the copy of X when X was
 *   copied, stays when X exists in the destination graph, and is dropped
 *   otherwise;
 * - `_output_shapes` of a copy whose inputs changed shape is recomputed for
 *   shape-preserving ops and dropped otherwise;
 * - the result view lists the counterparts of the source view's inputs and
 *   outputs, in the source view's order.
 *
 * Cost: linear in the view (arrays indexed by op id, hash maps for tensors
 * and names).  Copying a loop reads the frame names of the destination's
 * Enter ops once; graph_replace reads every op type once to find loops.
 *
 * Errors: functions return GE_OK or a negative GE_E* code with err set.
 * When a transform fails, the ops it added to the destination are removed
 * again; edits a custom handler made to existing ops are not undone.
 */
#ifndef GE_TRANSFORM_H
#define GE_TRANSFORM_H

#include <stddef.h>

#include "base/base.h"
#include "graph/graph.h"
#include "editor/select.h"
#include "editor/subgraph.h"

/* The state of one transform, and its result (TransformerInfo). */
typedef struct ge_tinfo ge_tinfo;

/* A pair of tensors: `from` (source graph) is replaced by `to`. */
typedef struct ge_tpair {
	ge_tref from, to;
} ge_tpair;

/* ------------------------------------------------------------ handlers */

/* Handlers return GE_OK, or a negative code with err set to abort the
 * transform (a binding can keep its own error in ud and re-raise it).
 *
 * transform_op_handler: makes the counterpart of source op `op` in the
 * destination graph, reading new_inputs (the counterparts of op's data
 * inputs).  Sets *op_ to a live op of the destination other than op itself
 * and appends to outputs_ the tensors that stand for op's outputs 0, 1, ...
 * (usually op_'s own outputs; a handler may return other tensors, such as
 * the output of an op it inserted after op_).  Control inputs are added
 * later by the transformer. */
typedef int (*ge_op_handler)(ge_tinfo *info, ge_opid op,
			     const ge_tref *new_inputs, size_t n_inputs,
			     ge_opid *op_, ge_tvec *outputs_, void *ud,
			     ge_error *err);
/* transform_control_input_handler: the counterpart of a control input op
 * (*op_ = GE_NOOP drops the control edge). */
typedef int (*ge_control_input_handler)(ge_tinfo *info, ge_opid op,
					ge_opid *op_, void *ud, ge_error *err);
/* transform_external_input_handler (for the view's inputs) and
 * transform_external_hidden_input_handler (for tensors the view reads that
 * are not among its inputs, e.g. after remap_inputs): the tensor of the
 * destination graph that stands for t.  Called once per tensor. */
typedef int (*ge_input_handler)(ge_tinfo *info, ge_tref t, ge_tref *t_,
				void *ud, ge_error *err);
/* assign_collections_handler: called for every copied op (elem.index ==
 * GE_CONTROL) and then for each of its outputs, with the counterpart. */
typedef int (*ge_collections_handler)(ge_tinfo *info, ge_tref elem,
				      ge_tref elem_, void *ud, ge_error *err);
/* The per-op keep-or-copy decision: returns 1 to keep (share) op instead
 * of copying it (only within one graph: the copy's consumers then read op
 * itself), 0 to copy it, negative to abort.  This is where variable
 * policies plug in. */
typedef int (*ge_share_op_fn)(ge_tinfo *info, ge_opid op, void *ud);

/* graph_editor's transform_original_op_handler has no counterpart: a
 * GraphDef has no _original_op. */
typedef struct ge_transformer {
	/* NULL: ge_copy_op_handler, done within one graph without the
	 * handler's calls (the copy shares the source's attr bytes, see
	 * graph_copy.h): a handler that is not NULL is always called */
	ge_op_handler transform_op_handler;
	void *transform_op_ud;
	ge_control_input_handler transform_control_input_handler;
	void *transform_control_input_ud;
	ge_input_handler transform_external_input_handler;
	void *transform_external_input_ud;
	ge_input_handler transform_external_hidden_input_handler;
	void *transform_external_hidden_input_ud;
	ge_collections_handler assign_collections_handler; /* NULL: none */
	void *assign_collections_ud;
	ge_share_op_fn share_op;                           /* NULL: copy all */
	void *share_op_ud;
	/* Copy the cond_context / while_context entries (MetaGraphDef) of
	 * copied conds and loops, renamed to describe the copy. */
	int copy_control_flow_contexts;
} ge_transformer;

/* The stock table: copy_op_handler (as NULL), transform_op_if_inside_handler,
 * replace_t_with_placeholder_handler, keep_t_if_possible_handler,
 * assign_renamed_collections_handler, no sharing, contexts copied. */
void ge_transformer_init(ge_transformer *t);

/* ---- stock handlers (callable from custom ones) ---- */

/* A hook run on each copy made by ge_copy_op_handler, once its name,
 * device, attrs and inputs are set; it may change any of them. */
typedef int (*ge_nodedef_fn)(ge_tinfo *info, ge_opid op, ge_opid op_,
			     void *ud, ge_error *err);
typedef struct ge_copy_op_opts {
	int copy_shape;          /* keep `_output_shapes` even when the
				    inputs changed */
	ge_nodedef_fn nodedef_fn;
	void *nodedef_ud;
} ge_copy_op_opts;

/* copy_op_handler: a new op named unique_name(new_name(op's name)) in the
 * destination, with op's type, device and every attr (byte for byte), and
 * new_inputs as data inputs; outputs_ gets all its outputs.  ud is a
 * ge_copy_op_opts or NULL.  GE_EINVAL if op's name is not under the
 * source scope. */
int ge_copy_op_handler(ge_tinfo *info, ge_opid op, const ge_tref *new_inputs,
		       size_t n_inputs, ge_opid *op_, ge_tvec *outputs_,
		       void *ud, ge_error *err);
/* transform_op_if_inside_handler: the copy of op if op is in the view;
 * else op itself when the graphs are the same (unless ud points at an int
 * 0: keep_if_possible off); else GE_NOOP. */
int ge_transform_op_if_inside_handler(ge_tinfo *info, ge_opid op,
				      ge_opid *op_, void *ud, ge_error *err);
/* How replace_t_with_placeholder_handler names its placeholders, given
 * as its ud (NULL: the default).  name, when set, writes the name for
 * source tensor t into out (under the destination scope, uniquified);
 * else prefix replaces "geph" in placeholder_name. */
typedef struct ge_ph_naming {
	const char *prefix;
	int (*name)(ge_tinfo *info, ge_tref t, ge_buf *out, void *ud,
		    ge_error *err);
	void *ud;
} ge_ph_naming;
/* replace_t_with_placeholder_handler: a Placeholder in the destination
 * with t's dtype and static shape, named
 * placeholder_name(t, destination scope) ("geph__a_0", "copy/geph__a_0"),
 * uniquified; ud: a ge_ph_naming or NULL. */
int ge_replace_t_with_placeholder_handler(ge_tinfo *info, ge_tref t,
					  ge_tref *t_, void *ud,
					  ge_error *err);
/* keep_t_if_possible_handler: t itself within one graph, else the
 * placeholder above. */
int ge_keep_t_if_possible_handler(ge_tinfo *info, ge_tref t, ge_tref *t_,
				  void *ud, ge_error *err);
/* assign_renamed_collections_handler: adds elem_ to every node_list
 * collection of the source (as it was when the transform started) that
 * lists elem.  Predefined collection names (tf.GraphKeys) are kept; others
 * get new_name() when they start with the source scope, and the
 * destination scope prefixed otherwise (graph_editor raises there). */
int ge_assign_renamed_collections_handler(ge_tinfo *info, ge_tref elem,
					  ge_tref elem_, void *ud,
					  ge_error *err);
/* Whether name is one of tf.GraphKeys' collection names. */
int ge_is_predefined_collection(const char *name);

/* ------------------------------------------------------------ transform */

typedef struct ge_transform_opts {
	ge_graph *dst_graph;     /* NULL: the view's graph */
	const char *dst_scope;   /* NULL or "": the root */
	const char *src_scope;   /* NULL or "": the root */
	int reuse_dst_scope;     /* else a non-empty dst_scope is uniquified
				    once (imported, imported_1, ...) */
	/* Every use of these source tensors (ops, with index GE_CONTROL, for
	 * control inputs) reads the given destination tensor instead, whether
	 * or not the tensor is an input of the view (import_graph_def's
	 * input_map). */
	const ge_tpair *input_map;
	size_t n_input_map;
	/* Keep the Enter ops' frame names unless one is already used in the
	 * destination (import_graph_def's behaviour); by default a copied
	 * loop's frame name is re-scoped like an op name. */
	int keep_frame_names;
	/* Copy a view holding part of a while loop (export_scoped of a
	 * scope that TensorFlow's gradients reach into); by default such a
	 * view is refused, naming the loop (frames.h). */
	int allow_loop_cuts;
} ge_transform_opts;

/* Transformer.__call__: copies the view.  out (may be NULL) receives the
 * result view over the destination graph (it must not hold a view);
 * *info (info may be NULL) receives the TransformerInfo, to be freed with
 * ge_tinfo_free.  The view is checked against its graph first. */
int ge_transform(const ge_transformer *tr, ge_view *sgv,
		 const ge_transform_opts *o, ge_view *out, ge_tinfo **info,
		 ge_error *err);

/* copy: the stock transformer; the copy's inputs become placeholders even
 * within one graph, hidden inputs are kept within one graph. */
int ge_copy(ge_view *sgv, const ge_transform_opts *o, ge_view *out,
	    ge_tinfo **info, ge_error *err);
/* copy_with_input_replacements: view inputs listed in repl read the
 * replacement (a tensor of the destination graph); other inputs are kept
 * within one graph and become placeholders across graphs.  GE_EINVAL if a
 * tensor is replaced twice. */
int ge_copy_with_input_replacements(ge_view *sgv, const ge_tpair *repl,
				    size_t n_repl, const ge_transform_opts *o,
				    ge_view *out, ge_tinfo **info,
				    ge_error *err);
/* graph_replace: copies, within g, the ops on paths from the replaced
 * tensors to the targets (walking data and control edges), plus every op
 * of the while loops those ops are in, with the replacements applied.
 * out (n_targets entries) receives each target's counterpart, or the
 * target itself when it was not copied.  o->dst_graph must be NULL or g.
 * GE_EINVAL "targets and replacements are not connected" when no op lies
 * between them. */
int ge_graph_replace(ge_graph *g, const ge_tref *targets, size_t n_targets,
		     const ge_tpair *repl, size_t n_repl,
		     const ge_transform_opts *o, ge_tref *out, ge_tinfo **info,
		     ge_error *err);
/* How ge_graph_replace_with copies the view: a copy with input
 * replacements (ge_copy_with_input_replacements or a variant of it, such
 * as the one with a variables policy of varpolicy.h), given ud. */
typedef int (*ge_replace_copy_fn)(ge_view *sgv, const ge_tpair *repl,
				  size_t n_repl, const ge_transform_opts *o,
				  void *ud, ge_tinfo **info, ge_error *err);
/* graph_replace with the copy done by copy(ud): what ge_graph_replace
 * and the variables layer's ge_graph_replace_vars share. */
int ge_graph_replace_with(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, const ge_transform_opts *o,
			  ge_replace_copy_fn copy, void *ud, ge_tref *out,
			  ge_tinfo **info, ge_error *err);
/* After a transform copied the whole of a graph into another graph
 * (meta_carry.c): gives the destination the source's MetaInfoDef and
 * SaverDef when it has none, and its signatures whose tensors were all
 * copied (not one of the same key), every name renamed as the copy was.
 * A SaverDef naming an op that was not copied is dropped. */
void ge_meta_carry(ge_tinfo *I);
/* The view graph_replace copies: the ops between the replaced tensors and
 * the targets (with the rest of any while loop they touch), in v. */
int ge_graph_replace_view(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, ge_view *v, ge_error *err);

/* ------------------------------------------------------------ info */

void ge_tinfo_free(ge_tinfo *info);

ge_graph *ge_tinfo_graph(const ge_tinfo *info);      /* source */
ge_graph *ge_tinfo_dst_graph(const ge_tinfo *info);  /* destination */
/* Scopes with their trailing '/' ("" for the root); the destination scope
 * is the one actually used (after uniquifying). */
const char *ge_tinfo_scope(const ge_tinfo *info);
const char *ge_tinfo_dst_scope(const ge_tinfo *info);
const ge_view *ge_tinfo_view(const ge_tinfo *info);
int ge_tinfo_in_view(const ge_tinfo *info, ge_opid op);
/* new_name: destination scope + (name minus the source scope) into out
 * (reset first).  GE_EINVAL if name is not under the source scope. */
int ge_tinfo_new_name(const ge_tinfo *info, const char *name, ge_buf *out,
		      ge_error *err);

/* transformed: the counterpart of a source op (GE_NOOP if none) or tensor
 * (returns 1 and sets *out, or 0).  Tensors cover the copied ops' outputs
 * and the view's inputs and hidden inputs (their replacement, placeholder
 * or kept tensor). */
ge_opid ge_tinfo_transformed_op(const ge_tinfo *info, ge_opid op);
int ge_tinfo_transformed_t(const ge_tinfo *info, ge_tref t, ge_tref *out);
/* original: the inverse (the reverse maps are built on first use). */
ge_opid ge_tinfo_original_op(ge_tinfo *info, ge_opid op_);
int ge_tinfo_original_t(ge_tinfo *info, ge_tref t_, ge_tref *out);
/* Lookups by name: "op" names an op (out->index == GE_CONTROL), "op:k" a
 * tensor.  transformed_name resolves name in the source graph,
 * original_name in the destination.  Returns 1 and sets *out, or 0. */
int ge_tinfo_transformed_name(ge_tinfo *info, const char *name, ge_tref *out);
int ge_tinfo_original_name(ge_tinfo *info, const char *name, ge_tref *out);

/* The copied ops as (source, destination) pairs in copy order; ops kept
 * by share_op are not listed.  Returns the count; src/dst may be NULL. */
size_t ge_tinfo_ops(const ge_tinfo *info, const ge_opid **src,
		    const ge_opid **dst);
/* The source collections (node_list) that list elem (an op of the view
 * with index GE_CONTROL, or one of their tensors), as they were when the
 * transform started (recorded only when the transformer has an
 * assign_collections_handler).  Writes up to cap names (owned by info) and
 * returns how many there are. */
size_t ge_tinfo_collections_of(ge_tinfo *info, ge_tref elem,
			       const char **names, size_t cap);

/* graph_editor's __str__ layout: "Transform result info:", the graphs,
 * the scopes, then "Operations mapping:" and one "  src => dst" line per
 * copied op. */
void ge_tinfo_format(const ge_tinfo *info, ge_buf *out);
/* One line: `transform info: 12 ops "a.pb" => "b.pb", scope "f/" => "g/"`
 * (the scope part only where there is one). */
void ge_tinfo_summary(const ge_tinfo *info, ge_buf *out);

/* ------------------------------------------------------------ import.c */

typedef struct ge_import_opts {
	/* import_graph_def's `name`: NULL or "" imports at the root;
	 * otherwise names are put under this scope, uniquified once
	 * (import, import_1, ...) unless reuse_prefix. */
	const char *prefix;
	int reuse_prefix;
	/* input_map: each source tensor name ("x", "x:1", or "^x" for control
	 * inputs, whose target then is an op: index GE_CONTROL) is read as
	 * the given destination tensor by every importing consumer.  A name
	 * may also be a dangling input of the source (an unbound input), which
	 * the map then binds. */
	const char *const *map_from;
	const ge_tref *map_to;
	size_t n_map;
} ge_import_opts;

/* import_graph_def (and import_meta_graph's collections): copies every op
 * of src into dst with names prefixed, `loc:@` references and control
 * inputs remapped, input_map applied; node_list collections, VariableDefs
 * and control-flow contexts of src are merged into dst's collections of
 * the same name with the names mapped.  Frame names are kept unless
 * already used in dst.  *info (may be NULL) maps src to dst.  GE_EINVAL if
 * an input_map name is neither a tensor nor a dangling input of src, or if
 * an op of src has a dangling input the map does not bind. */
int ge_import_graph(ge_graph *dst, ge_graph *src, const ge_import_opts *o,
		    ge_tinfo **info, ge_error *err);

/* export_scoped_meta_graph: a new graph holding the ops under `scope`
 * (scope/...), with the scope stripped from their names, from `loc:@`
 * references and from frame names under it.  Tensors read from outside
 * the scope become placeholders (geph__<producer>_<index>), control inputs
 * from outside are dropped; collections keep the entries for exported ops
 * with their names stripped.  The GraphDef's versions and function library
 * are not carried over. */
int ge_graph_export_scoped(ge_graph *g, const char *scope, ge_graph **out,
			   ge_error *err);

#endif
