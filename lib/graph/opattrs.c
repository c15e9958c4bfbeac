/*
 * opattrs.c: default attrs from OpDefs and attr value kinds (opattrs.h).
 */
#include <string.h>

#include "graph/opattrs.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
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

/* ---------------------------------------------------------------- kinds */

static const char *const base_names[GE_AK_NBASE] = {
	"none", "s", "i", "f", "b", "type", "shape", "tensor", "func",
	"placeholder",
};
static const char *const list_names[GE_AK_NBASE] = {
	"list",        "list(s)",      "list(i)",      "list(f)",
	"list(b)",     "list(type)",   "list(shape)",  "list(tensor)",
	"list(func)",  NULL,
};

const char *ge_attrkind_name(int k)
{
	if (k & GE_AK_LIST)
		return list_names[k & 0xf];
	return base_names[k];
}

/* Base kind from a name, accepting OpDef spellings too; -1 if unknown. */
static int base_kind(const char *s, size_t n)
{
	static const struct {
		const char *name;
		int kind;
	} alias[] = {
		{"string", GE_AK_S}, {"int", GE_AK_I},
		{"float", GE_AK_F},  {"bool", GE_AK_B},
	};
	for (int k = 0; k < GE_AK_NBASE; k++)
		if (strlen(base_names[k]) == n && !memcmp(base_names[k], s, n))
			return k;
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strlen(alias[i].name) == n && !memcmp(alias[i].name, s, n))
			return alias[i].kind;
	return -1;
}

int ge_attrkind_parse(const char *s)
{
	size_t n = strlen(s);
	if (!strcmp(s, "list"))
		return GE_AK_LIST;
	if (n > 6 && !memcmp(s, "list(", 5) && s[n - 1] == ')') {
		int k = base_kind(s + 5, n - 6);
		if (k <= GE_AK_NONE || k == GE_AK_PLACEHOLDER)
			return -1;
		return GE_AK_LIST | k;
	}
	return base_kind(s, n);
}

int ge_attrkind_of_list(const Tensorflow__AttrValue__ListValue *l)
{
	if (!l)
		return GE_AK_LIST;
	if (l->n_s)
		return GE_AK_LIST | GE_AK_S;
	if (l->n_i)
		return GE_AK_LIST | GE_AK_I;
	if (l->n_f)
		return GE_AK_LIST | GE_AK_F;
	if (l->n_b)
		return GE_AK_LIST | GE_AK_B;
	if (l->n_type)
		return GE_AK_LIST | GE_AK_TYPE;
	if (l->n_shape)
		return GE_AK_LIST | GE_AK_SHAPE;
	if (l->n_tensor)
		return GE_AK_LIST | GE_AK_TENSOR;
	if (l->n_func)
		return GE_AK_LIST | GE_AK_FUNC;
	return GE_AK_LIST;
}

int ge_attrkind_of(const Tensorflow__AttrValue *v)
{
	switch (v->value_case) {
	case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
		return ge_attrkind_of_list(v->list);
	case TENSORFLOW__ATTR_VALUE__VALUE_S:
		return GE_AK_S;
	case TENSORFLOW__ATTR_VALUE__VALUE_I:
		return GE_AK_I;
	case TENSORFLOW__ATTR_VALUE__VALUE_F:
		return GE_AK_F;
	case TENSORFLOW__ATTR_VALUE__VALUE_B:
		return GE_AK_B;
	case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
		return GE_AK_TYPE;
	case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
		return GE_AK_SHAPE;
	case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
		return GE_AK_TENSOR;
	case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
		return GE_AK_PLACEHOLDER;
	case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
		return GE_AK_FUNC;
	default:
		return GE_AK_NONE;
	}
}

int ge_opdef_attrkind(const ge_graph *g, const char *type, const char *name)
{
	const Tensorflow__OpDef *d = ge_graph_opdef(g, type);
	if (!d)
		return -1;
	for (size_t i = 0; i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name))
			return ge_attrkind_parse(d->attr[i]->type);
	return -1;
}
