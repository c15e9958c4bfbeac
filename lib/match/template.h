/*
 * template.h: declarative replacements for the rewrite driver (match.h).
 *
 * A template says, as data, what a rule puts in place of each match: new
 * ops whose type, name, device, inputs and attrs refer to the match's
 * captures by their labels (the capture names of the pattern), the
 * tensors of the match that the new ops (or captured tensors) replace,
 * and conditions a site must meet.  It is built once against its pattern
 * (every label is checked there) and then instantiated by the rewrite
 * driver for each match, in C, as a ge_rule action: ge_tmpl_action with
 * the template as user data.
 *
 * References (ref) name a label of the pattern or of a new op of the
 * template ("as"):
 *   "x"        the tensor captured as x; for an op capture, its output 0
 *   "conv:1"   output 1 of the op captured as conv (or of new op conv)
 *   "conv.T"   attr T of the op captured as conv (attr references only)
 *
 * Attr values of a new op, in the order they are added (the order of the
 * NodeDef):
 *   raw     fixed encoded AttrValue bytes, encoded once by the caller
 *   copy    the attr of a captured op, or its OpDef's default when the op
 *           leaves it out (the default as the graph's OpDef gives it,
 *           encoded); when there is neither the attr is not written
 *   list    a list(string) or list(type) built per site from literal
 *           elements, op types of captured ops and attrs of captured ops
 *
 * Conditions (a site that fails one is left alone, as an action returning
 * 0 leaves it): attrs of captured ops that must be equal (defaults
 * included; an attr neither set nor defaulted fails), ops that must have
 * no control outputs, and every label the template uses must be bound (a
 * capture in an absent optional is not).
 *
 * Names: a new op is named after a captured op: with a suffix, the
 * unique name "<name><suffix>"; without one it takes the captured op's
 * own name once the rewrite has removed that op (the rewrite fails if it
 * stays).  Without a name source, the unique name of its type.
 *
 * Builder calls return GE_OK or GE_EINVAL with one line in err (unknown
 * label, an attr the label's op types do not have, a reference of the
 * wrong kind); a caller prefixes the entry it was building.
 */
#ifndef GE_TEMPLATE_H
#define GE_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "match/match.h"

typedef struct ge_tmpl ge_tmpl;

/* A template for matches of p (which it keeps a reference to). */
ge_tmpl *ge_tmpl_new(const ge_pat *p);
void ge_tmpl_free(ge_tmpl *t);
/* The pattern the template was made for. */
const ge_pat *ge_tmpl_pattern(const ge_tmpl *t);

/* ---- conditions ---- */

/* The attrs refs[0..n) ("label.attr", n >= 2) must hold equal values. */
int ge_tmpl_require_same(ge_tmpl *t, const char *const *refs, size_t n,
			 ge_error *err);
/* The op captured as label must have no control outputs. */
int ge_tmpl_require_no_control_outputs(ge_tmpl *t, const char *label,
				       ge_error *err);

/* ---- new ops, created in the order added ---- */

/* A new op of the given type, or of the type of the op captured as
 * type_from (exactly one of them); as (may be NULL) labels it for later
 * references.  Returns its index (>= 0) or GE_EINVAL. */
int ge_tmpl_add_op(ge_tmpl *t, const char *as, const char *type,
		   const char *type_from, ge_error *err);
int ge_tmpl_op_name(ge_tmpl *t, int op, const char *label,
		    const char *suffix, ge_error *err);
/* A fixed device (device) or the device of the op captured as label. */
int ge_tmpl_op_device(ge_tmpl *t, int op, const char *device,
		      const char *label, ge_error *err);
/* Appends a data input (a tensor ref, of the match or of an earlier new
 * op). */
int ge_tmpl_op_input(ge_tmpl *t, int op, const char *ref, ge_error *err);
/* Appends a control input: a captured op or an earlier new op. */
int ge_tmpl_op_control_input(ge_tmpl *t, int op, const char *label,
			     ge_error *err);
int ge_tmpl_op_attr_raw(ge_tmpl *t, int op, const char *name,
			const uint8_t *bytes, size_t len, ge_error *err);
/* ref: "label" (the attr of the same name) or "label.attr". */
int ge_tmpl_op_attr_copy(ge_tmpl *t, int op, const char *name,
			 const char *ref, ge_error *err);

/* One element of a list attr: a literal string (or dtype name for
 * list(type)), the op type of a captured op, or an attr of one
 * ("label.attr", of the list's element kind). */
enum { GE_TMPL_LIT = 1, GE_TMPL_TYPE_OF, GE_TMPL_ATTR_OF };
typedef struct ge_tmpl_elem {
	int how;
	const char *s;
} ge_tmpl_elem;
/* kind: GE_AK_S or GE_AK_TYPE (opattrs.h). */
int ge_tmpl_op_attr_list(ge_tmpl *t, int op, const char *name, int kind,
			 const ge_tmpl_elem *elems, size_t n, ge_error *err);

/* ---- replacements ---- */

/* Readers of the match's tensor `from` read `to` instead (a tensor ref). */
int ge_tmpl_replace(ge_tmpl *t, const char *from, const char *to,
		    ge_error *err);

/* Whether the template is complete: GE_EINVAL unless it replaces at
 * least one tensor (a template that changes nothing would only add
 * unread ops). */
int ge_tmpl_check(const ge_tmpl *t, ge_error *err);

/* The ge_rule action instantiating template ud at match m. */
int ge_tmpl_action(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		   void *ud, ge_error *err);

#endif
