/*
 * provenance.h: which ops an op was made from.
 *
 * TensorFlow keeps this in NodeDef.experimental_debug_info (NodeDef field
 * 6), a message of two repeated strings: original_node_names (field 1),
 * the ops an op stands for, and original_func_names (field 2), the
 * functions it came out of.  Its function inliner and Grappler fill it,
 * and its runtime errors print it.  The rules the library follows are
 * TensorFlow's (see doc/provenance.md):
 *
 *   - an op made from others gets the sorted union of their origins, an
 *     op with no origins counting as its own name (TensorFlow's
 *     MergeDebugInfo);
 *   - an op inlined from a function body gets the call's origins, its
 *     own name in the body, and the function's name in the functions;
 *   - a copy gets its source's origins (or its source's name).
 *
 * An op whose provenance is never set keeps the field as the input had it,
 * byte for byte; one that is set is written with the sorted lists.
 *
 * The rule that made an op (a recipe's name, "copy", "inline") is noted in
 * a log kept with the top-level graph, which the command's report reads;
 * in GE_PROV_ATTR mode the rule also goes into the op's `_gerewrite_rule`
 * attr (a string), which TensorFlow ignores as it ignores every attr
 * whose name begins with `_` that no kernel asks for.
 */
#ifndef GE_PROVENANCE_H
#define GE_PROVENANCE_H

#include <stddef.h>

#include "graph/graph.h"

/* A growable list of strings the caller owns (the strings are not
 * copied); ge_strvec_free releases the list. */
typedef struct ge_strvec {
	const char **v;
	size_t n, cap;
} ge_strvec;
void ge_strvec_push(ge_strvec *v, const char *s);
void ge_strvec_free(ge_strvec *v);

/* The attr that holds the rule in GE_PROV_ATTR mode. */
#define GE_PROV_RULE_ATTR "_gerewrite_rule"

/* The ops op id was made from (original_node_names) and the functions
 * (original_func_names), in the order the op holds them, into nodes and
 * funcs (reset first; either may be NULL).  The strings belong to the
 * graph and live as long as it.  Returns how many names there are in
 * all (0 for an op without provenance), or GE_EFORMAT when the op's
 * field does not decode (err names the graph and the op). */
int ge_op_origins(const ge_graph *g, ge_opid id, ge_strvec *nodes,
		  ge_strvec *funcs, ge_error *err);

/* Adds names to the provenance of op id: its lists become the sorted
 * unions (bytewise, duplicates once) of what it had and nodes[0..n),
 * funcs[0..nf).  The op counts as edited.  GE_OK, GE_EINVAL for a dead
 * op or a name holding nothing, GE_EFORMAT as ge_op_origins. */
int ge_op_add_origins(ge_graph *g, ge_opid id, const char *const *nodes,
		      size_t n, const char *const *funcs, size_t nf,
		      ge_error *err);

/* Drops the provenance of op id (the field is not written). */
void ge_op_clear_origins(ge_graph *g, ge_opid id);

/* What op `from` of graph sg brings to an op made from it, appended to
 * nodes and funcs: its original node names, or its name when it has
 * none, and its function names (TensorFlow's NodeDebugInfo of a node).
 * The strings belong to sg.  GE_OK or GE_EFORMAT. */
int ge_op_origins_of(const ge_graph *sg, ge_opid from, ge_strvec *nodes,
		     ge_strvec *funcs, ge_error *err);

/* ge_op_add_origins of what op from of sg brings (ge_op_origins_of). */
int ge_op_merge_origins(ge_graph *g, ge_opid to, const ge_graph *sg,
			ge_opid from, ge_error *err);

/* Op `to` of g is a copy of op from of sg: it gets what from brings (its
 * name when its field does not decode), and the rule is noted. */
void ge_op_copy_origins(ge_graph *g, ge_opid to, const ge_graph *sg,
			ge_opid from, const char *rule);

/* Copies of many ops by one rule (a copy of a view makes one per op):
 * ge_op_copy_origins for each, with what it looks up per op (the graph's
 * root, its log, the rule's interned name, the mode) looked up once.
 * Holds no memory: there is nothing to end. */
typedef struct ge_prov_batch {
	ge_graph *g, *root;
	struct ge_prov_log *log;
	const char *rule; /* interned in root; NULL: copies are not noted */
	int fast;         /* notes may lengthen a run: top level, not attr */
	size_t run_end;   /* 1 + the run this batch lengthens, or 0 */
	int off;          /* GE_PROV_OFF: copies note nothing */
} ge_prov_batch;
void ge_prov_batch_init(ge_prov_batch *b, ge_graph *g, const char *rule);
/* ge_op_copy_origins(b->g, to, sg, from, the batch's rule). */
void ge_prov_batch_copy(ge_prov_batch *b, ge_opid to, const ge_graph *sg,
			ge_opid from);

/* Op `to` is made from the n ops from[] of g (TensorFlow's fusions):
 * the sorted union of what each brings, rule noted.  GE_OK or
 * GE_EFORMAT. */
int ge_op_made_from(ge_graph *g, ge_opid to, const ge_opid *from, size_t n,
		    const char *rule, ge_error *err);

/* ---- the rule log ---- */
enum { GE_PROV_FIELD = 0, GE_PROV_ATTR = 1, GE_PROV_OFF = 2 };
/* Where rules go for g and its function bodies: the log only
 * (GE_PROV_FIELD, the default) or also the op's GE_PROV_RULE_ATTR.
 * GE_PROV_OFF sets no provenance at all: ge_op_add_origins,
 * ge_op_merge_origins, ge_op_made_from, the batch's copies and
 * ge_prov_note do nothing (after their argument checks), so no op gains
 * a field or a line of the log; what the model's ops held when read is
 * kept, byte for byte, as every field an edit leaves alone. */
void ge_prov_set_mode(ge_graph *g, int mode);
int ge_prov_mode(const ge_graph *g);

/* Notes that op id of g (a top-level graph or a function body) was made
 * by rule (copied: any string, "fold_batch_norms", "copy").  A later
 * note of the same op adds a line. */
void ge_prov_note(ge_graph *g, ge_opid id, const char *rule);

/* One line of the log: the op's name, the function whose body holds it
 * ("" for the top-level graph), the rule, and the op's id there.  Strings
 * live as long as the top-level graph. */
typedef struct ge_prov_rec {
	const char *op, *func, *rule;
	ge_opid id;
} ge_prov_rec;
/* The log of g's top-level graph: *n lines, oldest first (NULL when
 * empty).  Each line names its op as it is named now (a later rename,
 * a rewrite that hands it the name of the op it replaced, shows), or as
 * it was last named when it was removed.  Lines are never removed, so a
 * count taken before a run and the count after delimit what the run
 * noted. */
const ge_prov_rec *ge_prov_log(const ge_graph *g, size_t *n);

/* The log's lines from line `from` on (0: all of them), counted by rule:
 * *n pairs in the order each rule first appears there, in an array the
 * caller frees (NULL when there are none).  What a report of counts
 * needs, without ge_prov_log's line per op. */
typedef struct ge_prov_count {
	const char *rule;
	size_t n;
} ge_prov_count;
ge_prov_count *ge_prov_counts(const ge_graph *g, size_t from, size_t *n);
/* The number of lines of the log (ge_prov_log's *n). */
size_t ge_prov_lines(const ge_graph *g);

#endif
