/*
 * replace_vars.c: graph_replace with the variables policy of the copies
 * (varpolicy.c): the ops between the replaced tensors and the targets are
 * copied by copy_with_input_replacements_vars, so variables among them
 * are shared, duplicated (with their checkpoint values planned) or
 * refused as the policy says.
 */
#include "varpolicy.h"

int ge_graph_replace_vars(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, const ge_transform_opts *o,
			  const ge_var_opts *vo, ge_tref *out,
			  ge_tinfo **info, ge_ckpt_plan *plan, ge_error *err)
{
	ge_transform_opts opts = {0};
	if (o)
		opts = *o;
	if (opts.dst_graph && opts.dst_graph != g)
		return ge_err(err, GE_EINVAL,
			      "graph_replace works within one graph");
	opts.dst_graph = g;
	ge_view v = GE_VIEW_INIT;
	ge_tinfo *I = NULL;
	int rc = ge_graph_replace_view(g, targets, n_targets, repl, n_repl, &v,
				       err);
	if (!rc)
		rc = ge_copy_with_input_replacements_vars(&v, repl, n_repl,
							  &opts, vo, NULL, &I,
							  plan, err);
	if (!rc && out)
		for (size_t i = 0; i < n_targets; i++)
			if (!ge_tinfo_transformed_t(I, targets[i], &out[i]))
				out[i] = targets[i];
	if (!rc && info)
		*info = I;
	else
		ge_tinfo_free(I);
	ge_view_free(&v);
	return rc;
}
