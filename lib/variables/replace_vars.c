/*
 * replace_vars.c: graph_replace with the variables policy of the copies
 * (varpolicy.c): the ops between the replaced tensors and the targets are
 * copied by copy_with_input_replacements_vars, so variables among them
 * are shared, duplicated (with their checkpoint values planned) or
 * refused as the policy says.
 */
#include "variables/varpolicy.h"

struct vars_copy {
	const ge_var_opts *vo;
	ge_ckpt_plan *plan;
};

static int vars_copy(ge_view *sgv, const ge_tpair *repl, size_t n_repl,
		     const ge_transform_opts *o, void *ud, ge_tinfo **info,
		     ge_error *err)
{
	const struct vars_copy *c = ud;
	return ge_copy_with_input_replacements_vars(sgv, repl, n_repl, o,
						    c->vo, NULL, info,
						    c->plan, err);
}

int ge_graph_replace_vars(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, const ge_transform_opts *o,
			  const ge_var_opts *vo, ge_tref *out,
			  ge_tinfo **info, ge_ckpt_plan *plan, ge_error *err)
{
	struct vars_copy c = {vo, plan};
	return ge_graph_replace_with(g, targets, n_targets, repl, n_repl, o,
				     vars_copy, &c, out, info, err);
}
