/*
 * graph.h: the editable graph model of libgerewrite.
 *
 * A ge_graph holds the ops of one TensorFlow GraphDef in node order.  Ops are
 * named by a ge_opid: the op's position in creation order.  Ids are never
 * reused: a removed op keeps its id (and its name, for error messages) but
 * is no longer alive, so a handle held by a script can say "was removed".
 * New ops are appended, so iterating ids 0..ge_graph_capacity()-1 and
 * skipping dead ones walks the ops in node order.
 *
 * Edges: an op's inputs are data inputs followed by control inputs.  A data
 * input is a ge_tref (producer op, output index); a control input is a
 * ge_tref whose index is GE_CONTROL.  An input naming an op that does not
 * exist is "dangling": its op is GE_NOOP and the name it had is kept, so the
 * graph still loads, saves unchanged, and ge_graph_validate reports it.
 *
 * Consumer lists are kept incrementally by every edit: ge_op_uses lists the
 * (consumer, input slot) pairs that read any output of an op, and
 * ge_op_control_outputs the ops that have it as a control input, both
 * sorted by consumer id (node order) then slot.  Nothing rescans the graph to
 * find consumers.  Every structural edit increments ge_graph_version.
 *
 * Attributes are kept as the raw bytes of the input file until read; an op
 * that is never edited is written back byte for byte.
 *
 * Strings returned by this API are owned by the graph and stay valid until
 * the graph is freed (names and types are never freed earlier, even when an
 * op is renamed or removed).
 */
#ifndef GE_GRAPH_H
#define GE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/tensor.h" /* dtypes */

struct Tensorflow__AttrValue;
struct Tensorflow__OpDef;

typedef uint32_t ge_opid;
#define GE_NOOP ((ge_opid)0xffffffffu)
#define GE_CONTROL (-1)

/* Orders op ids for qsort and bsearch. */
static inline int ge_opid_cmp(const void *a, const void *b)
{
	ge_opid x = *(const ge_opid *)a, y = *(const ge_opid *)b;
	return x < y ? -1 : x > y;
}

typedef struct ge_tref {
	ge_opid op;     /* producer, or GE_NOOP when dangling */
	int32_t index;  /* output index, or GE_CONTROL */
} ge_tref;

/* One use of an op's output: input `slot` of op `op` reads it. */
typedef struct ge_use {
	ge_opid op;
	uint32_t slot;
} ge_use;

typedef struct ge_graph ge_graph;

/* Growable lists of op ids and tensor refs, used across the API.  The
 * caller owns them; ge_*vec_free releases the storage. */
typedef struct ge_opvec {
	ge_opid *v;
	size_t n, cap;
} ge_opvec;
typedef struct ge_tvec {
	ge_tref *v;
	size_t n, cap;
} ge_tvec;
#define GE_VEC_INIT {NULL, 0, 0}
void ge_opvec_push(ge_opvec *v, ge_opid id);
void ge_opvec_free(ge_opvec *v);
void ge_tvec_push(ge_tvec *v, ge_tref t);
void ge_tvec_free(ge_tvec *v);
static inline int ge_tref_eq(ge_tref a, ge_tref b)
{
	return a.op == b.op && a.index == b.index;
}

/* ---- lifetime ---- */
ge_graph *ge_graph_new(void);
void ge_graph_free(ge_graph *g);
/* Deep copy: same ops, ids, attrs and container (meta graph) data. */
ge_graph *ge_graph_clone(const ge_graph *g);
/* Exchanges the contents of two top-level graphs (ops, container data,
 * function library and bodies, name), so that a keeps its address with
 * b's state: undo puts a clone taken earlier back this way.  Both
 * versions move past every version either had, so caches and views
 * keyed by (graph, version) see a change.  Function bodies go with
 * their library: pointers to a's bodies are b's afterwards. */
void ge_graph_swap(ge_graph *a, ge_graph *b);
/* A number that changes with every edit of the graph or of its function
 * library and bodies (not with parsing a body): equal stamps of one graph
 * mean no edit between them (collections and signatures aside). */
uint64_t ge_graph_stamp(const ge_graph *g);

/* Parses a binary GraphDef.  The bytes are copied; `name` (a file path or
 * "<string>") is used in error messages and kept as the graph's name. */
int ge_graph_parse_graphdef(const uint8_t *data, size_t len, const char *name,
			    ge_graph **out, ge_error *err);
/* Appends the binary GraphDef encoding.  Untouched ops are copied byte for
 * byte; non-node fields (versions, library) are kept as read. */
void ge_graph_encode_graphdef(const ge_graph *g, ge_buf *out);
/* Streams the same bytes to a writer (no whole-file buffer in memory). */
void ge_graph_write_graphdef(const ge_graph *g, ge_writer *w);

/* The graph's name (the path it was loaded from, or "" for a new graph). */
const char *ge_graph_name(const ge_graph *g);
void ge_graph_set_name(ge_graph *g, const char *name);

/* ---- what edits did ---- */
/* A mark taken before some edits (a recipe's run) and the delta since:
 * ops added (alive, created after the mark), removed (alive at the mark,
 * gone now) and changed (alive at both and edited since the mark: name,
 * type, device, inputs or attrs); `edited` is whether any edit at all was
 * made (a reorder, an edge moved and moved back), and `library` whether
 * the function library was edited since the mark (a body, a function
 * added, removed or renamed).  Taking a mark resets what the previous
 * one would see.  A reorder renumbers ids: marks taken before one count
 * only `edited`. */
typedef struct ge_graph_mark {
	size_t cap, live;
	uint64_t version;
	int library;
} ge_graph_mark;
typedef struct ge_graph_delta {
	size_t added, removed, changed;
	int edited, library;
} ge_graph_delta;
void ge_graph_mark_now(ge_graph *g, ge_graph_mark *m);
void ge_graph_delta_since(const ge_graph *g, const ge_graph_mark *m,
			  ge_graph_delta *d);

/* ---- size, order and lookup ---- */
uint64_t ge_graph_version(const ge_graph *g);
size_t ge_graph_capacity(const ge_graph *g); /* ids 0..capacity-1 exist */
size_t ge_graph_num_ops(const ge_graph *g);  /* live ops */
int ge_op_alive(const ge_graph *g, ge_opid id);
/* Exact (case-sensitive) lookup of a live op; GE_NOOP if none. */
ge_opid ge_graph_find(const ge_graph *g, const char *name);
/* Parses "name", "name:3" or "^name" against the graph: a live op's tensor
 * (index 0 when omitted; GE_CONTROL for ^name).  Returns GE_ENOTFOUND if the
 * op does not exist, GE_EINVAL if the text is malformed. */
int ge_graph_find_tensor(const ge_graph *g, const char *text, ge_tref *out);

/* ---- tensor names and validity: the one rule of the library ---- */
/* Splits the n bytes of "name", "name:3" or "^name" into the name (at
 * s + *name_off, *name_len bytes) and the index (0 when omitted,
 * GE_CONTROL for ^name).  Returns 0, or -1 when malformed (empty, "^",
 * "name:", ":3", an index over 2^31-1). */
int ge_parse_input(const char *s, size_t n, size_t *name_off,
		   size_t *name_len, int32_t *index);
/* ge_parse_input with its usual case inline, for loops over many inputs
 * (the load): text that ends in neither a digit nor ':' and is no control
 * input is a name whole, by that rule; anything else asks it.  The same
 * answer (t/load-fast). */
static inline int ge_parse_input_inline(const char *s, size_t n,
					size_t *name_off, size_t *name_len,
					int32_t *index)
{
	if (n && s[0] != '^' && (s[n - 1] < '0' || s[n - 1] > '9') &&
	    s[n - 1] != ':') {
		*name_off = 0;
		*name_len = n;
		*index = 0;
		return 0;
	}
	return ge_parse_input(s, n, name_off, name_len, index);
}
/* The op a tensor name, an input or a control input names: the n bytes of
 * "name", "name:3", "^name" or "^name:3" (a control reference written with
 * an output, as hand-written lists do) give the op's name at s + *name_off,
 * *name_len bytes.  Returns 0, or -1 when malformed, as ge_parse_input. */
int ge_op_name_of(const char *s, size_t n, size_t *name_off,
		  size_t *name_len);
/* Appends t's name to out: "name:k", or "^name" for GE_CONTROL ("?" for
 * GE_NOOP).  With input_form, index 0 is written "name", as GraphDef
 * inputs write it. */
void ge_tensor_put(const ge_graph *g, ge_tref t, int input_form, ge_buf *out);
/* Writes "name:index" into *scratch (reset first) and returns its data. */
const char *ge_tensor_fmt(const ge_graph *g, ge_tref t, ge_buf *scratch);
/* Whether live op id has output `index`: 0 <= index < its output count,
 * or any index >= 0 when its type has no OpDef (the count is then
 * unknown). */
int ge_op_has_output(const ge_graph *g, ge_opid id, int index);
/* A tensor an edit of the editor layer (reroute, edit, transform, the
 * bindings) may read: a live op (GE_EINVAL "op 'x' was removed from the
 * graph"), not a control input, an output the op has (GE_ENOTFOUND "no
 * tensor 'x:7' (op 'x' has 1 outputs)").  The bindings give these messages
 * as they are.  The edit primitives below (ge_op_set_input, ...) check
 * only that the op is live and the index >= 0: ops may be wired before
 * their attrs make their output count known. */
int ge_graph_check_tensor(const ge_graph *g, ge_tref t, ge_error *err);
/* Text to a checked tensor: ge_graph_find_tensor then
 * ge_graph_check_tensor, with messages naming the text ("no tensor 'x'
 * (no such op)", "malformed tensor name 'x:'").  With allow_control, "^x"
 * gives x's GE_CONTROL ref. */
int ge_graph_resolve_tensor(const ge_graph *g, const char *text,
			    int allow_control, ge_tref *out, ge_error *err);

/* ---- op properties ---- */
const char *ge_op_name(const ge_graph *g, ge_opid id);
const char *ge_op_type(const ge_graph *g, ge_opid id);
const char *ge_op_device(const ge_graph *g, ge_opid id); /* "" if none */
/* Renames a live op.  GE_EINVAL if the name is taken (case-sensitively) or
 * empty.  References by edge follow automatically; colocation attrs
 * (loc:@old) on other ops and container data (collections, signatures) are
 * updated too. */
int ge_op_set_name(ge_graph *g, ge_opid id, const char *name, ge_error *err);
void ge_op_set_type(ge_graph *g, ge_opid id, const char *type);
void ge_op_set_device(ge_graph *g, ge_opid id, const char *device);

/* ---- edges ---- */
size_t ge_op_num_inputs(const ge_graph *g, ge_opid id);         /* data */
size_t ge_op_num_control_inputs(const ge_graph *g, ge_opid id);
ge_tref ge_op_input(const ge_graph *g, ge_opid id, size_t i);
ge_opid ge_op_control_input(const ge_graph *g, ge_opid id, size_t i);
/* For a dangling input (op == GE_NOOP) the text it had, e.g. "missing:1";
 * i counts data inputs then control inputs.  NULL if not dangling. */
const char *ge_op_dangling_input(const ge_graph *g, ge_opid id, size_t i);

const ge_use *ge_op_uses(const ge_graph *g, ge_opid id, size_t *n);
const ge_opid *ge_op_control_outputs(const ge_graph *g, ge_opid id, size_t *n);
/* Consumers of one output: distinct ops, in node order.  Writes at most
 * cap ids and returns how many there are. */
size_t ge_tensor_consumers(const ge_graph *g, ge_tref t, ge_opid *out,
			   size_t cap);

/* Edits.  All of them keep consumer lists consistent and bump the version.
 * They return GE_EINVAL (with a message) for a dead op, an index out of
 * range, or a control/data mix-up. */
int ge_op_add_input(ge_graph *g, ge_opid id, ge_tref t, ge_error *err);
int ge_op_set_input(ge_graph *g, ge_opid id, size_t i, ge_tref t,
		    ge_error *err);
int ge_op_remove_input(ge_graph *g, ge_opid id, size_t i, ge_error *err);

/* Many input changes at once: data input `slot` of op `op` becomes `t`,
 * for each edit.  All edits are checked before any is made (nothing
 * changes on error).  Costs time in proportion to the edits and the use
 * lists they touch, so moving all N readers of a tensor is O(N), where N
 * calls to ge_op_set_input would be O(N^2). */
typedef struct ge_input_edit {
	ge_opid op;
	uint32_t slot;
	ge_tref t;
} ge_input_edit;
int ge_graph_set_inputs(ge_graph *g, const ge_input_edit *edits, size_t n,
			ge_error *err);
/* Appends a control input; a duplicate is an error (as in graph_editor). */
int ge_op_add_control_input(ge_graph *g, ge_opid id, ge_opid c, ge_error *err);
/* Removes control input c; GE_ENOTFOUND if c is not one. */
int ge_op_remove_control_input(ge_graph *g, ge_opid id, ge_opid c,
			       ge_error *err);
void ge_op_clear_control_inputs(ge_graph *g, ge_opid id);

/* Appends a new op named `name` (which must be free: use ge_graph_unique_name
 * first) of type `type`, with no inputs and no attrs.  GE_NOOP on error. */
ge_opid ge_graph_add_op(ge_graph *g, const char *name, const char *type,
			ge_error *err);
/* Removes an op.  If anything still reads it (data or control) this fails
 * with a message naming a consumer, unless force is set; then the
 * consumers' inputs become dangling references to the removed name. */
int ge_graph_remove_op(ge_graph *g, ge_opid id, int force, ge_error *err);

/* TensorFlow's Graph.unique_name: returns name if no op has it (compared
 * case-insensitively) and it was not returned before, else the first free
 * name_N counting from a per-name counter.  The result is marked as used.
 * The returned string is owned by the graph. */
const char *ge_graph_unique_name(ge_graph *g, const char *name);

/* Brings src's GraphDef fields other than nodes into dst, as an import
 * does: `versions` when dst has none, and the functions (and gradients) of
 * src's function library that dst does not define by name. */
void ge_graph_merge_fields(ge_graph *dst, const ge_graph *src);

/* Moves ops into a new node order: perm lists every live op id once, in the
 * wanted order.  Ids are renumbered (old handles become invalid), so this is
 * for whole-graph recipes only.  GE_EINVAL if perm is not a permutation. */
int ge_graph_reorder(ge_graph *g, const ge_opid *perm, size_t n, ge_error *err);

/* ---- attributes ---- */
size_t ge_op_num_attrs(const ge_graph *g, ge_opid id);
/* The i-th attr name, in the order of the file (new attrs last). */
const char *ge_op_attr_name(const ge_graph *g, ge_opid id, size_t i);
/* Decoded value, owned by the graph (valid until the attr is set or the
 * op removed); NULL if the op has no such attr.  Returns NULL too when the
 * stored bytes do not decode, and then fills err if given. */
const struct Tensorflow__AttrValue *ge_op_attr(const ge_graph *g, ge_opid id,
					       const char *name, ge_error *err);
/* Sets (or adds) an attr; the value is packed and copied, the caller keeps
 * ownership of v. */
void ge_op_set_attr(ge_graph *g, ge_opid id, const char *name,
		    const struct Tensorflow__AttrValue *v);
/* Same from already-encoded AttrValue bytes. */
void ge_op_set_attr_raw(ge_graph *g, ge_opid id, const char *name,
			const uint8_t *bytes, size_t len);
/* ge_op_set_attr_raw for each of n attrs, in order, on an op that has no
 * attrs yet (a new op): their names are interned and their bytes kept in
 * the graph's memory, as a loaded op's are in its file, so a new op costs
 * no allocation per attr.  An op with attrs gets them one by one. */
void ge_op_add_attrs_raw(ge_graph *g, ge_opid id, size_t n,
			 const char *const *names,
			 const uint8_t *const *bytes, const size_t *lens);
/* Raw encoded AttrValue bytes of an attr, or NULL. */
const uint8_t *ge_op_attr_raw(const ge_graph *g, ge_opid id, const char *name,
			      size_t *len);
int ge_op_remove_attr(ge_graph *g, ge_opid id, const char *name);
/* 0 when the op certainly has no attr `name` (its bytes, not yet split,
 * never mention it), 1 when it may: a cheap filter before ge_op_attr on
 * every op of a graph. */
int ge_op_may_have_attr(const ge_graph *g, ge_opid id, const char *name);
/* Convenience readers: return 0 and fill *out, or -1 when absent/other. */
int ge_op_attr_int(const ge_graph *g, ge_opid id, const char *name, int64_t *out);
int ge_op_attr_type(const ge_graph *g, ge_opid id, const char *name, int *out);
int ge_op_attr_string(const ge_graph *g, ge_opid id, const char *name,
		      const char **s, size_t *len);

/* ---- outputs ---- */
/* The OpDef for an op type: the graph's own op list (a MetaGraphDef's
 * stripped_op_list) first, then the built-in registry.  NULL if unknown. */
const struct Tensorflow__OpDef *ge_graph_opdef(const ge_graph *g,
					       const char *type);
/* Number of outputs: from the OpDef and the op's attrs, else the length of
 * `_output_shapes`, else one more than the highest index any consumer reads
 * (and at least 1 for an unknown op type). */
int ge_op_num_outputs(const ge_graph *g, ge_opid id);
/* TensorFlow DataType of an output (DT_INVALID = 0 when unknown). */
int ge_op_output_dtype(const ge_graph *g, ge_opid id, int index);
/* Static shape of an output, if known: returns the rank (>= 0) and writes
 * up to cap dims (-1 for an unknown dim), or -1 for unknown rank. */
int ge_op_output_shape(const ge_graph *g, ge_opid id, int index,
		       int64_t *dims, int cap);

/* ---- checks ---- */
/* Appends one line per problem to `report` (dangling inputs, bad output
 * indices, duplicate names, cycles that do not pass through NextIteration,
 * colocation references to missing ops).  Returns the number of problems. */
size_t ge_graph_validate(const ge_graph *g, ge_buf *report);

/* Checks the attrs of every node, and of every node in the function
 * library, against their OpDefs, reading the bytes in place: attrs the
 * OpDef requires are present, each holds the kind of value the OpDef
 * declares, shapes have no dimension below -1 and tensors none below 0.
 * Appends one line per problem (up to max) to report and returns the number
 * found.  With fatal_only, only what makes a graph meaningless counts: an
 * attr that does not decode or has the wrong kind, a bad dimension, a Const
 * without a value.  ge_load refuses graphs with fatal problems;
 * ge_graph_validate reports all of them. */
size_t ge_graph_check_attrs(const ge_graph *g, size_t max, int fatal_only,
			    ge_buf *report);

/* ---- for walks and edits over many ops (the editor's fast paths) ---- */

/* 0 when no op of g has that type (op types are interned, and this asks
 * the table of interned strings); 1 when some op may have it.  Lets a
 * search by type over a large graph stop before it starts. */
int ge_graph_may_have_type(const ge_graph *g, const char *type);

/* Whether the n op ids at ops, stride bytes apart (a ge_opid at the start
 * of each; sizeof (ge_opid) for a list of ids, sizeof (ge_tref) for the
 * ops of a list of tensors), are all live ops of g: the check a view makes
 * when the graph moved, in one pass. */
int ge_graph_all_alive(const ge_graph *g, const ge_opid *ops, size_t n,
		       size_t stride);

/* ge_op_num_outputs, for a walk over many ops of g: the output count of
 * a type whose OpDef fixes it (no output arg counted by an attr) is
 * worked out once per type and walk.  The memo starts zeroed and serves
 * one graph. */
enum { GE_NOUT_MEMO = 64 };
typedef struct ge_nout_memo {
	const char *type[GE_NOUT_MEMO];
	int n[GE_NOUT_MEMO];
} ge_nout_memo;
int ge_op_num_outputs_memo(const ge_graph *g, ge_opid id, ge_nout_memo *m);

/* The walk of ge_view_init_graph (subgraph.c), over the op table: the
 * live ops of g in id order appended to ops (room for all made by the
 * caller), and each output that no op reads to outs. */
void ge_graph_walk_unread(const ge_graph *g, ge_opvec *ops, ge_tvec *outs);

/* Makes room for n more ops, in the op table and the name index (one
 * reallocation each instead of several). */
void ge_graph_reserve(ge_graph *g, size_t n);
/* Asks the cache for the name index slot of a name (h its ge_hash_ci)
 * that is about to be looked up: on a large graph each lookup is a cache
 * miss otherwise. */
void ge_graph_prefetch_name(const ge_graph *g, uint32_t h);

#endif
