/*
 * diff_entry.c: one entry of `gerewrite diff` as text and as JSON, shared
 * by the command (cmd_diff.c) and its page (diff_page.c): the line of an
 * op removed, added, changed or moved, what changed (type, inputs,
 * control inputs, device, attrs with old and new values, the largest
 * difference of a tensor), and the object --json writes for it.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "diff_page.h"
#include "base/tensordiff.h"
#include "editor/provenance.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* "float32[4,2]" for a tensor value. */
static void add_tensor_type(ge_buf *b, const Tensorflow__TensorProto *t)
{
	const char *dt = ge_dtype_name(t->dtype);
	ge_buf_adds(b, dt ? dt : "?");
	const Tensorflow__TensorShapeProto *s = t->tensor_shape;
	if (s && s->unknown_rank) {
		ge_buf_adds(b, "[*]");
		return;
	}
	ge_buf_addc(b, '[');
	for (size_t i = 0; s && i < s->n_dim; i++)
		ge_buf_printf(b, "%s%lld", i ? "," : "",
			      (long long)s->dim[i]->size);
	ge_buf_addc(b, ']');
}

/* For a tensor attr changed on both sides: " (float32[2] -> float32[2],
 * largest absolute difference 0.5)". */
static void add_tensor_change(ge_buf *b, const ge_graph *ga, ge_opid ia,
			      const ge_graph *gb, ge_opid ib, const char *name)
{
	const Tensorflow__AttrValue *x = ge_op_attr(ga, ia, name, NULL);
	const Tensorflow__AttrValue *y = ge_op_attr(gb, ib, name, NULL);
	if (!x || !y || x->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    y->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !x->tensor || !y->tensor)
		return;
	ge_buf_adds(b, " (");
	add_tensor_type(b, x->tensor);
	ge_buf_adds(b, " -> ");
	add_tensor_type(b, y->tensor);
	double d;
	if (ge_tensor_max_abs_diff(x->tensor, y->tensor, &d) == 0)
		ge_buf_printf(b, ", largest absolute difference %.6g", d);
	ge_buf_addc(b, ')');
}

/* "[-1,3]" for a shape, "[*]" for an unknown rank. */
static void add_shape(ge_buf *b, const Tensorflow__TensorShapeProto *s)
{
	if (!s || s->unknown_rank) {
		ge_buf_adds(b, s ? "[*]" : "[]");
		return;
	}
	ge_buf_addc(b, '[');
	for (size_t i = 0; i < s->n_dim; i++)
		ge_buf_printf(b, "%s%lld", i ? "," : "",
			      (long long)s->dim[i]->size);
	ge_buf_addc(b, ']');
}

static void add_bytes(ge_buf *b, const ProtobufCBinaryData *s)
{
	ge_buf_addc(b, '"');
	for (size_t i = 0; i < s->len && i < 40; i++) {
		unsigned char c = s->data[i];
		if (c >= 32 && c < 127 && c != '"' && c != '\\')
			ge_buf_addc(b, c);
		else
			ge_buf_printf(b, "\\x%02x", c);
	}
	ge_buf_adds(b, s->len > 40 ? "...\"" : "\"");
}

/* A list value: its items, at most 8 of them. */
static void add_list(ge_buf *b, const Tensorflow__AttrValue__ListValue *l)
{
	size_t n = l->n_s + l->n_i + l->n_f + l->n_b + l->n_type + l->n_shape +
		   l->n_tensor + l->n_func, k = 0;
	ge_buf_addc(b, '[');
	for (size_t i = 0; i < l->n_s && k < 8; i++, k++) {
		ge_buf_adds(b, k ? ", " : "");
		add_bytes(b, &l->s[i]);
	}
	for (size_t i = 0; i < l->n_i && k < 8; i++, k++)
		ge_buf_printf(b, "%s%lld", k ? ", " : "", (long long)l->i[i]);
	for (size_t i = 0; i < l->n_f && k < 8; i++, k++)
		ge_buf_printf(b, "%s%g", k ? ", " : "", (double)l->f[i]);
	for (size_t i = 0; i < l->n_b && k < 8; i++, k++)
		ge_buf_printf(b, "%s%s", k ? ", " : "",
			      l->b[i] ? "true" : "false");
	for (size_t i = 0; i < l->n_type && k < 8; i++, k++) {
		const char *t = ge_dtype_name((int)l->type[i]);
		ge_buf_printf(b, "%s%s", k ? ", " : "", t ? t : "?");
	}
	for (size_t i = 0; i < l->n_shape && k < 8; i++, k++) {
		ge_buf_adds(b, k ? ", " : "");
		add_shape(b, l->shape[i]);
	}
	for (size_t i = 0; i < l->n_tensor && k < 8; i++, k++) {
		ge_buf_adds(b, k ? ", " : "");
		add_tensor_type(b, l->tensor[i]);
	}
	for (size_t i = 0; i < l->n_func && k < 8; i++, k++)
		ge_buf_printf(b, "%s%s", k ? ", " : "",
			      l->func[i]->name ? l->func[i]->name : "?");
	if (n > k)
		ge_buf_printf(b, ", ... (%zu)", n);
	ge_buf_addc(b, ']');
}

/* One attr value, short: 3, 0.5, true, float32, [-1,3], "SAME", [1, 2]. */
void diff_attr_value(ge_buf *b, const Tensorflow__AttrValue *v)
{
	if (!v) {
		ge_buf_adds(b, "(none)");
		return;
	}
	switch (v->value_case) {
	case TENSORFLOW__ATTR_VALUE__VALUE_S: add_bytes(b, &v->s); break;
	case TENSORFLOW__ATTR_VALUE__VALUE_I:
		ge_buf_printf(b, "%lld", (long long)v->i);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_F:
		ge_buf_printf(b, "%g", (double)v->f);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_B:
		ge_buf_adds(b, v->b ? "true" : "false");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: {
		const char *t = ge_dtype_name((int)v->type);
		ge_buf_adds(b, t ? t : "?");
		break;
	}
	case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: add_shape(b, v->shape); break;
	case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
		if (v->list)
			add_list(b, v->list);
		else
			ge_buf_adds(b, "[]");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
		if (v->tensor)
			add_tensor_type(b, v->tensor);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
		ge_buf_printf(b, "$%s", v->placeholder ? v->placeholder : "");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
		ge_buf_adds(b, v->func && v->func->name ? v->func->name : "?");
		break;
	default: ge_buf_adds(b, "(empty)"); break;
	}
}

/* For an attr changed but for a tensor on both sides: " OLD -> NEW". */
static void add_attr_change(ge_buf *b, const ge_graph *ga, ge_opid ia,
			    const ge_graph *gb, ge_opid ib, const char *name)
{
	const Tensorflow__AttrValue *x = ge_op_attr(ga, ia, name, NULL);
	const Tensorflow__AttrValue *y = ge_op_attr(gb, ib, name, NULL);
	if (x && y && x->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
	    y->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR)
		return;
	ge_buf_addc(b, ' ');
	diff_attr_value(b, x);
	ge_buf_adds(b, " -> ");
	diff_attr_value(b, y);
}

/* Appends the data inputs of an op as "a, b:1" (at most 8 shown). */
static void add_inputs(ge_buf *b, const ge_graph *g, ge_opid id)
{
	size_t n = ge_op_num_inputs(g, id);
	if (n == 0)
		ge_buf_adds(b, "(none)");
	for (size_t i = 0; i < n && i < 8; i++) {
		ge_tref t = ge_op_input(g, id, i);
		if (i)
			ge_buf_adds(b, ", ");
		if (t.op == GE_NOOP)
			ge_buf_adds(b, ge_op_dangling_input(g, id, i));
		else
			ge_tensor_put(g, t, 1, b);
	}
	if (n > 8)
		ge_buf_printf(b, ", ... (%zu)", n);
}

/* Appends the control inputs of an op as "^a, ^b" (at most 8 shown). */
static void add_controls(ge_buf *b, const ge_graph *g, ge_opid id)
{
	size_t n = ge_op_num_control_inputs(g, id);
	size_t nin = ge_op_num_inputs(g, id);
	if (n == 0)
		ge_buf_adds(b, "(none)");
	for (size_t i = 0; i < n && i < 8; i++) {
		ge_opid c = ge_op_control_input(g, id, i);
		if (i)
			ge_buf_adds(b, ", ");
		if (c == GE_NOOP) {
			const char *d = ge_op_dangling_input(g, id, nin + i);
			ge_buf_printf(b, "%s%s", d && d[0] == '^' ? "" : "^",
				      d ? d : "?");
		} else {
			ge_tensor_put(g, (ge_tref){c, GE_CONTROL}, 1, b);
		}
	}
	if (n > 8)
		ge_buf_printf(b, ", ... (%zu)", n);
}

void diff_changes(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
		  const ge_diff_entry *e, const char *sep)
{
	if (e->what & GE_DIFF_TYPE) {
		ge_buf_printf(b, "%stype %s -> %s", sep, ge_op_type(ga, e->a),
			      ge_op_type(gb, e->b));
		sep = "; ";
	}
	if (e->what & GE_DIFF_INPUTS) {
		ge_buf_printf(b, "%sinputs ", sep);
		add_inputs(b, ga, e->a);
		ge_buf_adds(b, " -> ");
		add_inputs(b, gb, e->b);
		sep = "; ";
	}
	if (e->what & GE_DIFF_CONTROL) {
		ge_buf_printf(b, "%scontrol inputs ", sep);
		add_controls(b, ga, e->a);
		ge_buf_adds(b, " -> ");
		add_controls(b, gb, e->b);
		sep = "; ";
	}
	if (e->what & GE_DIFF_DEVICE) {
		ge_buf_printf(b, "%sdevice \"%s\" -> \"%s\"", sep,
			      ge_op_device(ga, e->a), ge_op_device(gb, e->b));
		sep = "; ";
	}
	if (e->what & GE_DIFF_ATTRS) {
		ge_buf names = GE_BUF_INIT;
		ge_op_diff_attrs(ga, e->a, gb, e->b, &names);
		/* the '\n' separators become ", " */
		while (names.len && names.data[names.len - 1] == '\n')
			names.data[--names.len] = 0;
		ge_buf_printf(b, "%sattrs ", sep);
		ge_buf_addc(&names, 0);
		char *p = (char *)names.data;
		while (p && *p) {
			char *nl = strchr(p, '\n');
			if (nl)
				*nl = 0;
			if (p != (char *)names.data)
				ge_buf_adds(b, ", ");
			ge_buf_adds(b, p);
			add_attr_change(b, ga, e->a, gb, e->b, p);
			add_tensor_change(b, ga, e->a, gb, e->b, p);
			p = nl ? nl + 1 : NULL;
		}
		ge_buf_free(&names);
	}
}

/* One line for an entry: "- x (T)", "- x (T) -> into y", "+ y (T)",
 * "~ y (T): what changed", "> x -> y (T): what changed". */
void diff_describe(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
		     const ge_diff_entry *e)
{
	switch (e->kind) {
	case GE_DIFF_REMOVED:
		ge_buf_printf(b, "- %s (%s)", ge_op_name(ga, e->a),
			      ge_op_type(ga, e->a));
		if (e->b != GE_NOOP)
			ge_buf_printf(b, " -> into %s", ge_op_name(gb, e->b));
		break;
	case GE_DIFF_ADDED:
		ge_buf_printf(b, "+ %s (%s)", ge_op_name(gb, e->b),
			      ge_op_type(gb, e->b));
		if (e->a != GE_NOOP)
			ge_buf_printf(b, ", a copy of %s", ge_op_name(ga, e->a));
		break;
	case GE_DIFF_CHANGED:
		ge_buf_printf(b, "~ %s (%s)", ge_op_name(gb, e->b),
			      ge_op_type(gb, e->b));
		diff_changes(b, ga, gb, e, ": ");
		break;
	case GE_DIFF_MOVED:
		ge_buf_printf(b, "> %s -> %s (%s)", ge_op_name(ga, e->a),
			      ge_op_name(gb, e->b), ge_op_type(gb, e->b));
		diff_changes(b, ga, gb, e, ": ");
		break;
	}
}

/* ------------------------------------------------------------ --json */

json_t *diff_jstr(const char *s)
{
	json_t *v = json_string(s);
	return v ? v : json_stringn_nocheck(s, strlen(s));
}

static json_t *jbuf(ge_buf *b)
{
	return json_stringn_nocheck(b->len ? (const char *)b->data : "",
				    b->len);
}

/* The inputs of an op as names: data inputs, then control ones ("^c"). */
static json_t *json_inputs(const ge_graph *g, ge_opid id, int control)
{
	json_t *arr = json_array();
	ge_buf t = GE_BUF_INIT;
	size_t nin = ge_op_num_inputs(g, id);
	size_t n = control ? ge_op_num_control_inputs(g, id) : nin;
	for (size_t i = 0; i < n; i++) {
		t.len = 0;
		if (control) {
			ge_opid c = ge_op_control_input(g, id, i);
			if (c == GE_NOOP)
				ge_buf_adds(&t, ge_op_dangling_input(g, id, nin + i));
			else
				ge_tensor_put(g, (ge_tref){c, GE_CONTROL}, 1, &t);
		} else {
			ge_tref r = ge_op_input(g, id, i);
			if (r.op == GE_NOOP)
				ge_buf_adds(&t, ge_op_dangling_input(g, id, i));
			else
				ge_tensor_put(g, r, 1, &t);
		}
		json_array_append_new(arr, jbuf(&t));
	}
	ge_buf_free(&t);
	return arr;
}

static json_t *json_pair(json_t *x, json_t *y)
{
	json_t *o = json_object();
	json_object_set_new(o, "old", x);
	json_object_set_new(o, "new", y);
	return o;
}

/* One changed attr: {"name", "old", "new"} (null for a side without it),
 * and for tensors on both sides "max_abs_diff". */
static json_t *json_attr(const ge_graph *ga, ge_opid ia, const ge_graph *gb,
			 ge_opid ib, const char *name)
{
	const Tensorflow__AttrValue *x = ge_op_attr(ga, ia, name, NULL);
	const Tensorflow__AttrValue *y = ge_op_attr(gb, ib, name, NULL);
	json_t *o = json_object();
	ge_buf t = GE_BUF_INIT;
	json_object_set_new(o, "name", diff_jstr(name));
	if (x) {
		diff_attr_value(&t, x);
		json_object_set_new(o, "old", jbuf(&t));
	} else {
		json_object_set_new(o, "old", json_null());
	}
	t.len = 0;
	if (y) {
		diff_attr_value(&t, y);
		json_object_set_new(o, "new", jbuf(&t));
	} else {
		json_object_set_new(o, "new", json_null());
	}
	double d;
	if (x && y && x->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
	    y->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
	    x->tensor && y->tensor &&
	    ge_tensor_max_abs_diff(x->tensor, y->tensor, &d) == 0)
		json_object_set_new(o, "max_abs_diff", json_real(d));
	ge_buf_free(&t);
	return o;
}

static json_t *json_changes(const ge_graph *ga, const ge_graph *gb,
			    const ge_diff_entry *e)
{
	json_t *c = json_object();
	if (e->what & GE_DIFF_TYPE)
		json_object_set_new(c, "type",
				    json_pair(diff_jstr(ge_op_type(ga, e->a)),
					      diff_jstr(ge_op_type(gb, e->b))));
	if (e->what & GE_DIFF_INPUTS)
		json_object_set_new(c, "inputs",
				    json_pair(json_inputs(ga, e->a, 0),
					      json_inputs(gb, e->b, 0)));
	if (e->what & GE_DIFF_CONTROL)
		json_object_set_new(c, "control_inputs",
				    json_pair(json_inputs(ga, e->a, 1),
					      json_inputs(gb, e->b, 1)));
	if (e->what & GE_DIFF_DEVICE)
		json_object_set_new(c, "device",
				    json_pair(diff_jstr(ge_op_device(ga, e->a)),
					      diff_jstr(ge_op_device(gb, e->b))));
	if (e->what & GE_DIFF_ATTRS) {
		ge_buf names = GE_BUF_INIT;
		ge_op_diff_attrs(ga, e->a, gb, e->b, &names);
		ge_buf_addc(&names, 0);
		json_t *arr = json_array();
		for (char *p = (char *)names.data, *nl; (nl = strchr(p, '\n'));
		     p = nl + 1) {
			*nl = 0;
			json_array_append_new(arr, json_attr(ga, e->a, gb, e->b, p));
		}
		json_object_set_new(c, "attrs", arr);
		ge_buf_free(&names);
	}
	return c;
}

const char *const diff_kind_names[] = {"removed", "added", "changed",
					 "moved"};

/* One entry as an object: kind, name, type (of the op of B but for a
 * removed one), "from" (moved), "copy_of" (copied), "into"
 * (merged), "origins", "changes". */
json_t *diff_entry_json(const ge_graph *ga, const ge_graph *gb,
			const ge_diff_entry *e)
{
	json_t *o = json_object();
	const ge_graph *g = e->kind == GE_DIFF_REMOVED ? ga : gb;
	ge_opid id = e->kind == GE_DIFF_REMOVED ? e->a : e->b;
	json_object_set_new(o, "kind", json_string(diff_kind_names[e->kind]));
	json_object_set_new(o, "name", diff_jstr(ge_op_name(g, id)));
	json_object_set_new(o, "type", diff_jstr(ge_op_type(g, id)));
	if (e->kind == GE_DIFF_MOVED)
		json_object_set_new(o, "from", diff_jstr(ge_op_name(ga, e->a)));
	if (e->kind == GE_DIFF_ADDED && e->a != GE_NOOP)
		json_object_set_new(o, "copy_of", diff_jstr(ge_op_name(ga, e->a)));
	if (e->kind == GE_DIFF_REMOVED && e->b != GE_NOOP)
		json_object_set_new(o, "into", diff_jstr(ge_op_name(gb, e->b)));
	if (e->kind != GE_DIFF_REMOVED) {
		ge_strvec names = {0};
		ge_error err;
		if (ge_op_origins(gb, e->b, &names, NULL, &err) > 0) {
			json_t *arr = json_array();
			for (size_t k = 0; k < names.n; k++)
				json_array_append_new(arr, diff_jstr(names.v[k]));
			json_object_set_new(o, "origins", arr);
		}
		ge_strvec_free(&names);
	}
	if (e->kind == GE_DIFF_CHANGED || (e->kind == GE_DIFF_MOVED && e->what))
		json_object_set_new(o, "changes", json_changes(ga, gb, e));
	return o;
}
