/*
 * varpolicy.h: what a transform does with the variables it meets.
 *
 * graph_editor copies a variable's ops like any others, so the copy of a
 * variable is missing from `variables` / `trainable_variables`, its
 * initializer never runs, no saver saves it and no checkpoint holds its
 * value.  Here the choice is explicit, per variable, and everything that
 * names a variable follows it.
 *
 * A variable v meets a transform of view V when V holds one of its ops
 * (the variable op, its initializer, its initial value ops under its name
 * scope, its read snapshot) or V reads one of its tensors from outside
 * (the variable op's output, or the output of any op that reads it).
 * Its policy is then:
 *
 * - share: v's ops are not copied (share_op keeps them) and tensors of v
 *   read from outside V are kept, not replaced by placeholders, so the
 *   copy reads v itself.  Only within one graph.
 * - duplicate: v's ops are added to the view, so the copy gets its own
 *   variable under the destination scope, with its initializer, initial
 *   value and read, and every copied op reads the duplicate.  Then:
 *   VariableDefs naming the duplicate join every variable collection that
 *   lists v; the ops that group v's initializer (the `init` op), or else
 *   the graph's `init` / `init_op` / `saved_model_main_op` /
 *   `legacy_init_op`, get the duplicate's initializer as a control input;
 *   a V2 saver (SaveV2 / RestoreV2 with their tensor_names and
 *   shape_and_slices constants and per-variable restore assigns) that
 *   saves v saves and restores the duplicate too, under a new checkpoint
 *   key; and the checkpoint plan lists (v's key -> new key), so a
 *   checkpoint written for the result holds the duplicate with v's value.
 * - auto (0): what graph_editor users expect, with its bug fixed: a
 *   variable whose variable op is in V is duplicated as above; one that V
 *   only reads from outside is left to the transformer's handlers.
 *
 * New checkpoint keys: a key equal to v's name becomes the duplicate's
 * name; another key is re-scoped like an op name (destination scope +
 * key minus source scope, or destination scope + key when it is not under
 * the source scope).
 *
 * The result view lists the copies of V's ops and the duplicated variables'
 * ops; its inputs, outputs and passthroughs are the counterparts of V's,
 * in V's order (a variable tensor V read from outside has the duplicate's
 * tensor as counterpart).
 *
 * A SaveV2 / RestoreV2 copied by the transform names the duplicates'
 * keys (its tensor_names elements holding a source key hold the new
 * key), and the source's saver is not extended for a duplicate such a
 * copy saves.  Savers and the init op are extended only within one graph
 * (the destination's own saver is not touched by a copy into another
 * graph); VariableDefs are added to the destination either way.
 */
#ifndef GE_VARPOLICY_H
#define GE_VARPOLICY_H

#include "editor/transform.h"
#include "variables/variables.h"

enum { GE_VARS_AUTO = 0, GE_VARS_SHARE = 1, GE_VARS_DUPLICATE = 2 };

/* Decides for one variable of the source graph: GE_VARS_SHARE or
 * GE_VARS_DUPLICATE, or negative to abort the transform (a binding keeps
 * its own error in ud).  Called once per variable met, in node order of
 * the variable ops, before anything is copied. */
typedef int (*ge_var_decide_fn)(ge_graph *g, const ge_variable *v, void *ud);

typedef struct ge_var_opts {
	int policy;               /* GE_VARS_* for every variable met */
	ge_var_decide_fn decide;  /* if set, asked instead of policy */
	void *decide_ud;
} ge_var_opts;

/* Which checkpoint tensors the transformed graph needs that the source
 * checkpoint holds under another key: dst[i] gets src[i]'s value.  A
 * rename entry (rename[i] set, by ge_variable_rename) also says nothing
 * needs src[i] any more: a checkpoint written from the plan leaves it
 * out. */
typedef struct ge_ckpt_plan {
	char **src, **dst;
	unsigned char *rename;
	/* per entry, the bundle prefix src[i] is read from when it is not
	 * `from` below (a variable of another model, as compose imports
	 * them), else NULL */
	char **src_from;
	size_t n, cap;
	/* the bundle prefix the src keys are read from (the checkpoint of
	 * the graph the variables were copied from), or NULL: the graph's
	 * own checkpoint */
	char *from;
} ge_ckpt_plan;

void ge_ckpt_plan_add(ge_ckpt_plan *p, const char *src, const char *dst);
void ge_ckpt_plan_add_rename(ge_ckpt_plan *p, const char *src,
			     const char *dst);
void ge_ckpt_plan_free(ge_ckpt_plan *p);

/* The plan a graph carries: what a transform that duplicated variables
 * left for the checkpoint.  ge_save of a SavedModel applies it, writing
 * each dst key with its src tensor from the variables of the SavedModel
 * the graph was loaded from.  NULL when empty. */
const ge_ckpt_plan *ge_graph_checkpoint_plan(const ge_graph *g);
/* Adds one entry (for variables a script duplicated by hand).  A src
 * that an earlier entry produces (dst of it) is read where that entry
 * reads, so a variable renamed, then duplicated, copies the source
 * checkpoint's tensor. */
void ge_graph_add_checkpoint_copy(ge_graph *g, const char *src,
				  const char *dst);
/* The checkpoint a graph's values come from, as a malloc'd bundle prefix:
 * its plan's `from`; else the variables of the SavedModel it was loaded
 * from; else the bundle next to the file it was loaded from (an x.meta
 * next to x.index).  GE_ENOTFOUND when there is none. */
int ge_graph_checkpoint_source(const ge_graph *g, char **prefix,
			       ge_error *err);

/* Adds an entry to g's plan: g's key dst gets the value that graph src
 * has under its key `key` (read through src's own plan, from src's
 * checkpoint).  When g has no checkpoint of its own the entry reads
 * where src's values are (ge_graph_checkpoint_from); when g's checkpoint
 * is another one, the entry names src's bundle, so that a save writes
 * g's values and src's side by side. */
void ge_graph_checkpoint_copy_from(ge_graph *g, const ge_graph *src,
				   const char *key, const char *dst);

/* Records that the graph's plan reads its src keys from the checkpoint
 * of graph src (a copy of src's variables into g), unless g has a
 * checkpoint of its own or its plan already names one. */
void ge_graph_checkpoint_from(ge_graph *g, const ge_graph *src);

/* The key of g's source checkpoint that holds the value of g's key `key`:
 * the src of the plan entry making it, else key itself; NULL when the
 * entry making it reads another bundle (ge_graph_checkpoint_copy_from). */
const char *ge_graph_checkpoint_origin(const ge_graph *g, const char *key);

/* Leaves checkpoint key `key` out of the checkpoint a save writes (a
 * rename entry to "": the tensor goes nowhere). */
void ge_graph_checkpoint_drop(ge_graph *g, const char *key);
/* Follows the rename of checkpoint key `from` to `to` (a variable
 * renamed by ge_variable_rename): an entry that made `from` makes `to`;
 * otherwise the plan gets a rename entry. */
void ge_graph_checkpoint_rename(ge_graph *g, const char *from,
				const char *to);

/* Savers, variables and the checkpoint against each other (varcheck.c):
 * a RestoreV2 restoring a variable from another key than it is saved
 * under, a saver's dtype that is not the variable's, one key saved (or
 * restored) for two variables, a plan entry making a key no variable is
 * saved under, and, when the graph has a checkpoint
 * (ge_graph_checkpoint_source), a saved key it lacks (read through the
 * plan) or holds with another dtype or shape.  One line per problem on
 * report, naming the variable, the saver op and the key; returns their
 * number. */
size_t ge_variables_validate(ge_graph *g, ge_buf *report);

/* ---------------------------------------------------------- editing */

/* Renames variable `name` (a variable op, see ge_graph_variables) to
 * new_name: the variable op, and the ops of the variable named under its
 * scope (`name/Assign`, `name/read`, `name/initial_value`, ...), whose
 * names become new_name/...; collections follow (ge_op_set_name).  When
 * its checkpoint key is its name, the key becomes new_name (a key under
 * `name/` is re-scoped; another key stays): every SaveV2 / RestoreV2
 * tensor_names entry holding the old key then holds the new one, and the
 * graph's plan gets a rename entry (old key -> new key), so a SavedModel
 * saved from the graph has the value under the new key only.  GE_ENOTFOUND
 * when name is not a variable; GE_EINVAL (nothing changed) when a new
 * name is taken or the saver already holds the new key. */
int ge_variable_rename(ge_graph *g, const char *name, const char *new_name,
		       ge_error *err);

/* Removes variable `name`: its ops (variable op, initializer, initial
 * value ops under its scope, reads), its VariableDefs, its saver entries
 * (SaveV2 input, tensor_names / shape_and_slices elements and dtypes; the
 * RestoreV2 output or the whole per-variable RestoreV2 with its
 * constants, and the restore assign), and the control edges NoOps (init,
 * restore_all) have on them.  GE_EGRAPH (nothing changed) naming the
 * consumer when another op reads one of its ops or tensors (reroute it
 * first).  A checkpoint written for the graph still holds the tensor. */
int ge_variable_remove(ge_graph *g, const char *name, ge_error *err);

/* ge_transform with a variables policy (vo NULL: GE_VARS_AUTO).  The keys
 * of duplicated variables go into the destination graph's plan, and into
 * plan too when given.  On error the ops added to the destination are
 * removed and nothing else has changed. */
int ge_transform_vars(const ge_transformer *tr, ge_view *sgv,
		      const ge_transform_opts *o, const ge_var_opts *vo,
		      ge_view *out, ge_tinfo **info, ge_ckpt_plan *plan,
		      ge_error *err);
/* ge_copy and ge_copy_with_input_replacements with a policy. */
int ge_copy_vars(ge_view *sgv, const ge_transform_opts *o,
		 const ge_var_opts *vo, ge_view *out, ge_tinfo **info,
		 ge_ckpt_plan *plan, ge_error *err);
int ge_copy_with_input_replacements_vars(ge_view *sgv, const ge_tpair *repl,
					 size_t n_repl,
					 const ge_transform_opts *o,
					 const ge_var_opts *vo, ge_view *out,
					 ge_tinfo **info, ge_ckpt_plan *plan,
					 ge_error *err);
/* graph_replace (transform.h) with a variables policy, as
 * copy_with_input_replacements has (replace_vars.c). */
int ge_graph_replace_vars(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, const ge_transform_opts *o,
			  const ge_var_opts *vo, ge_tref *out,
			  ge_tinfo **info, ge_ckpt_plan *plan, ge_error *err);

#endif
