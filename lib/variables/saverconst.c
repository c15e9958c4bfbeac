/* saverconst.c: the string Consts and type lists of savers (see
 * saverconst.h). */
#include "variables/saverconst.h"

#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* The strings of a string Const, n of them (TensorFlow repeats the last
 * one when fewer are stored); NULL if op is not such a Const. */
char **ge_const_strings(const ge_graph *g, ge_opid op, size_t *n)
{
	if (op == GE_NOOP || strcmp(ge_op_type(g, op), "Const"))
		return NULL;
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "value", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !v->tensor || v->tensor->dtype != TENSORFLOW__DATA_TYPE__DT_STRING)
		return NULL;
	const Tensorflow__TensorProto *t = v->tensor;
	size_t cnt = 1;
	if (t->tensor_shape)
		for (size_t i = 0; i < t->tensor_shape->n_dim; i++)
			cnt *= t->tensor_shape->dim[i]->size > 0
				       ? (size_t)t->tensor_shape->dim[i]->size
				       : 0;
	char **s = ge_xcalloc(cnt + 1, sizeof *s);
	for (size_t i = 0; i < cnt; i++) {
		if (!t->n_string_val) {
			s[i] = ge_xstrdup("");
			continue;
		}
		size_t k = i < t->n_string_val ? i : t->n_string_val - 1;
		s[i] = t->string_val[k].len
			       ? ge_xstrndup((const char *)t->string_val[k].data,
					     t->string_val[k].len)
			       : ge_xstrdup("");
	}
	*n = cnt;
	return s;
}

void ge_strings_free(char **s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

/* Sets a Const's value to a rank-1 string tensor. */
void ge_const_set_strings(ge_graph *g, ge_opid op, char **s, size_t n)
{
	Tensorflow__TensorProto tp = TENSORFLOW__TENSOR_PROTO__INIT;
	Tensorflow__TensorShapeProto sh = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim d =
		TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
	Tensorflow__TensorShapeProto__Dim *dp = &d;
	ProtobufCBinaryData *sv = ge_xmalloc((n ? n : 1) * sizeof *sv);
	for (size_t i = 0; i < n; i++) {
		sv[i].data = (uint8_t *)s[i];
		sv[i].len = strlen(s[i]);
	}
	d.size = (int64_t)n;
	sh.n_dim = 1;
	sh.dim = &dp;
	tp.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
	tp.tensor_shape = &sh;
	tp.n_string_val = n;
	tp.string_val = sv;
	Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
	av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
	av.tensor = &tp;
	ge_op_set_attr(g, op, "value", &av);
	ge_op_remove_attr(g, op, "_output_shapes");
	free(sv);
}

/* Sets attr `name` to a list of types. */
void ge_attr_set_types(ge_graph *g, ge_opid op, const char *name,
		      const int *t, size_t n)
{
	Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__AttrValue__ListValue l =
		TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
	Tensorflow__DataType *ty = ge_xmalloc((n ? n : 1) * sizeof *ty);
	for (size_t i = 0; i < n; i++)
		ty[i] = (Tensorflow__DataType)t[i];
	l.n_type = n;
	l.type = ty;
	av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
	av.list = &l;
	ge_op_set_attr(g, op, name, &av);
	free(ty);
}

/* The list of types in attr `name` (n entries written to a malloc'd
 * array), or NULL. */
int *ge_attr_types(const ge_graph *g, ge_opid op, const char *name,
		      size_t *n)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list)
		return NULL;
	*n = v->list->n_type;
	int *t = ge_xmalloc((*n + 1) * sizeof *t);
	for (size_t i = 0; i < *n; i++)
		t[i] = (int)v->list->type[i];
	return t;
}
