/*
 * func.h: the function library of a graph (GraphDef.library), with each
 * FunctionDef body an editable ge_graph.
 *
 * Functions are named by a ge_funcid, their position in the library in
 * creation order; like op ids, ids are never reused: a removed function
 * keeps its id (and its name, for messages) but is no longer alive.  Ids
 * 0..ge_func_capacity()-1 walk the library in file order, new functions
 * last.  The library is scanned on first use (one pass over the bytes,
 * reading names only); until then a graph costs nothing more to load.
 *
 * Bodies.  ge_func_body() parses a FunctionDef into a ge_graph of the same
 * model as the top-level graph, owned by the parent (freed with it; never
 * call ge_graph_free on it), with TensorFlow's instantiation convention
 * made visible:
 *   - one `_Arg` op per input (attrs T, index), named as the arg; an arg
 *     that is a list (number_attr / type_list_attr) of N > 1 tensors gets
 *     N ops named `arg_0`..`arg_<N-1>`, and a node reading the whole list
 *     reads the N ops;
 *   - one `_Retval` op per output (attrs T, index), named `<out>_RetVal`,
 *     whose one input is what the `ret` map names.
 * Body inputs are `node:out_arg:k` on disk and (op, flat output index) in
 * the model, translated with the OpDefs (and the signatures of called
 * functions) on load and back on save.  On save the `_Arg` ops, ordered by
 * their `index` attr, become the signature's input args (a new `_Arg`
 * op's arg is named as the op), the `_Retval` ops the output args and the
 * `ret` map; `control_ret`, `arg_attr`, `resource_arg_unique_id`, the
 * function's attrs and the signature's attrs are kept.  A function never
 * parsed, or whose body was not edited, is written back byte for byte; an
 * edit in one function changes only that function's bytes.
 *
 * References.  A function is named by op types (a direct call), by attrs
 * of kind func / list(func) (PartitionedCall `f`, While `cond`/`body`,
 * If/Case branches, ...) in the graph and in bodies, by GradientDefs, and
 * by the SavedObjectGraph of a SavedModel (reached through the graph's
 * hooks, graph_impl.h).  Rename follows all of them; remove refuses while
 * an op still calls the function or an object stands for it (unless
 * forced) and drops the object graph's concrete function of that name.
 *
 * Typical use (an inliner, a freezer): ge_func_find(g, name) ->
 * ge_func_body(g, f, &err) -> walk the body like any graph; the _Arg op
 * with index i stands for input i of a call, the _Retval op with index i
 * for output i; ge_op_func_calls() says what an op calls.  Edits to the
 * body are saved with g.
 *
 * Errors follow base.h: GE_EFORMAT for bytes that do not parse (message
 * naming the file, the function and the node), GE_EINVAL for misuse.
 */
#ifndef GE_FUNC_H
#define GE_FUNC_H

#include "graph/graph.h"

typedef uint32_t ge_funcid;
#define GE_NOFUNC ((ge_funcid)0xffffffffu)

/* One arg of a signature.  count is the number of tensors (1 for a plain
 * arg, N for a list arg); dtype the first tensor's DataType (0 unknown). */
typedef struct ge_func_arg {
	const char *name;
	int dtype;
	int count;
} ge_func_arg;

/* ---- the library ---- */
/* Scans the library if needed.  GE_EFORMAT when it does not parse. */
int ge_flib_load(ge_graph *g, ge_error *err);
/* Lets the graph core reach the function library (ge_graph_parts in
 * graph_impl.h): a function called as an op type then has its signature
 * as its OpDef, a library is re-encoded on save, freed with its graph.
 * Every entry of this part installs it; the formats layer calls it before
 * it loads a model.  Idempotent. */
void ge_flib_install(void);
size_t ge_func_capacity(ge_graph *g);
size_t ge_func_count(ge_graph *g); /* live functions */
int ge_func_alive(ge_graph *g, ge_funcid f);
ge_funcid ge_func_find(ge_graph *g, const char *name);
const char *ge_func_name(ge_graph *g, ge_funcid f);
/* The graph owning the library a body belongs to (g itself for a
 * top-level graph), and the function a body graph is, or GE_NOFUNC. */
ge_graph *ge_graph_root(ge_graph *g);
ge_funcid ge_graph_func(const ge_graph *g);

/* The body graph, parsed on first call.  NULL on error (err filled). */
ge_graph *ge_func_body(ge_graph *g, ge_funcid f, ge_error *err);
/* Whether the body was parsed (touched). */
int ge_func_touched(ge_graph *g, ge_funcid f);

/* Signature args, from the body when it is parsed (its _Arg/_Retval ops),
 * else from the FunctionDef's signature.  Strings are owned by the graph
 * and valid until the next call for this function. */
size_t ge_func_num_inputs(ge_graph *g, ge_funcid f);
size_t ge_func_num_outputs(ge_graph *g, ge_funcid f);
ge_func_arg ge_func_input(ge_graph *g, ge_funcid f, size_t i);
ge_func_arg ge_func_output(ge_graph *g, ge_funcid f, size_t i);
/* Number of tensors in and out (list args counted by their length). */
size_t ge_func_num_in_tensors(ge_graph *g, ge_funcid f);
size_t ge_func_num_out_tensors(ge_graph *g, ge_funcid f);
/* The FunctionDef's attrs (not the signature's): names and raw AttrValue
 * bytes, in file order. */
size_t ge_func_num_attrs(ge_graph *g, ge_funcid f);
const char *ge_func_attr(ge_graph *g, ge_funcid f, size_t i,
			 const uint8_t **val, size_t *len);

/* The FunctionDef bytes as they would be saved now. */
void ge_func_encode(ge_graph *g, ge_funcid f, ge_buf *out);

/* ---- edits ---- */
/* A new empty function (no args, no nodes); GE_NOFUNC if the name is
 * taken or empty. */
ge_funcid ge_func_add(ge_graph *g, const char *name, ge_error *err);
/* A copy of f named new_name (its body as it is now). */
ge_funcid ge_func_copy(ge_graph *g, ge_funcid f, const char *new_name,
		       ge_error *err);
/* Renames f and every reference to it (see above). */
int ge_func_rename(ge_graph *g, ge_funcid f, const char *new_name,
		   ge_error *err);
/* Removes f.  Refuses (naming a call site) while an op calls it or an
 * object of the SavedObjectGraph stands for it (a bare concrete
 * function), unless force.  Drops the GradientDefs and the object graph's
 * concrete function entries naming it; with force, an object that stood
 * for it becomes a plain (generic) object. */
int ge_func_remove(ge_graph *g, ge_funcid f, int force, ge_error *err);

/* ---- references ---- */
/* A call site: op `op` of graph `in` (the top-level graph or a body) names
 * the function, by its type (attr == NULL) or by attr `attr`. */
typedef struct ge_func_ref {
	ge_graph *in;
	ge_opid op;
	const char *attr;
} ge_func_ref;
/* Appends the call sites of f to *out (malloc'd, caller frees) and
 * returns how many there are.  Bodies that cannot mention f (its name is
 * not in their bytes) are not parsed. */
size_t ge_func_callers(ge_graph *g, ge_funcid f, ge_func_ref **out);
/* The functions op `id` of graph `in` names (by type or attr), appended to
 * out (distinct by attr).  Names of no function of the library are
 * included too (with GE_NOFUNC ids) so validate can report them. */
typedef struct ge_func_call {
	const char *attr;   /* NULL: the op type is the function name */
	const char *name;   /* owned by the graph */
	ge_funcid f;
} ge_func_call;
size_t ge_op_func_calls(ge_graph *in, ge_opid id, ge_func_call **out);

/* ---- checks ---- */
/* Validates every body (as ge_graph_validate does a graph, messages
 * prefixed "function 'f': ") and every call: a function that does not
 * exist, a call whose input or output count or dtypes differ from the
 * callee's signature, a body `_Arg` whose index is out of range, and
 * recursion (a cycle of calls), found in time linear in the calls.
 * With `functions` 0 only the calls of the top-level graph are checked.
 * Returns the number of problems. */
size_t ge_flib_validate(ge_graph *g, int functions, ge_buf *report);

/* What g:validate() adds to ge_graph_validate: for a top-level graph,
 * ge_flib_validate(g, 1, report) when it has a library; for a body, the
 * checks of its own calls and _Arg/_Retval indices. */
size_t ge_func_validate_graph(ge_graph *g, ge_buf *report);

/* The first problem of the library that makes a model unusable: a call
 * to a function that does not exist, a call of the wrong arity, a body
 * input naming no node or arg, recursion.  GE_OK or GE_EGRAPH with one
 * line naming the file, the function and the node. */
int ge_flib_check(ge_graph *g, ge_error *err);

/* Functions reachable through calls from the top-level graph and from a
 * SavedModel's concrete functions (the entry points TF2 loads), in
 * library order (*out is malloc'd; the caller frees it). */
void ge_flib_reachable(ge_graph *g, ge_funcid **out, size_t *n);

/* The total number of ops in all bodies (_Arg/_Retval included), parsing
 * every body. */
size_t ge_flib_body_ops(ge_graph *g);

#endif
