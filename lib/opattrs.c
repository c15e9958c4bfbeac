/*
 * opattrs.c: default attrs from OpDefs (opattrs.h).
 */
#include <string.h>

#include "opattrs.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

int ge_op_fill_default_attrs(ge_graph *g, ge_opid id)
{
	if (!ge_op_alive(g, id))
		return GE_EINVAL;
	const Tensorflow__OpDef *d = ge_graph_opdef(g, ge_op_type(g, id));
	if (!d)
		return GE_ENOTFOUND;
	int added = 0;
	for (size_t i = 0; i < d->n_attr; i++) {
		const Tensorflow__OpDef__AttrDef *a = d->attr[i];
		size_t len;
		if (!a->default_value || ge_op_attr_raw(g, id, a->name, &len))
			continue;
		ge_op_set_attr(g, id, a->name, a->default_value);
		added++;
	}
	return added;
}

size_t ge_graph_fill_default_attrs(ge_graph *g)
{
	size_t n = 0, cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		int k = ge_op_fill_default_attrs(g, (ge_opid)i);
		if (k > 0)
			n += (size_t)k;
	}
	return n;
}

int ge_op_type_is_stateful(const ge_graph *g, const char *type)
{
	const Tensorflow__OpDef *d = ge_graph_opdef(g, type);
	if (!d)
		return -1;
	return d->is_stateful ? 1 : 0;
}
