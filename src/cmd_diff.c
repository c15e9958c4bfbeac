/*
 * cmd_diff.c: `gerewrite diff A B`: the ops removed (-), added (+),
 * changed (~) and moved (>) from A to B, matched by name and by
 * provenance (lib/diff.c), one line each, then a count.  A removed op
 * merged into an op of B names it ("-> into y"); a moved op names the op
 * of A it was made from.  A changed attr shows its value on both sides ("shape
 * [-1,3] -> [8,3]"; "(none)" on the side without it); a tensor attr (a
 * Const's value) its dtype and shape and the largest absolute
 * difference.  Then the
 * function libraries: functions only in A (-) or B (+), and for a
 * function in both whose bytes differ, the ops of its body the same way,
 * each line prefixed "function 'f': ".  Then collections, signatures and
 * the checkpoints' entries (diff_meta.c).  Exit 0 when the graphs, libraries, collections and
 * signatures are the same, 1 when not.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "diff.h"
#include "diff_page.h"
#include "exec/verify.h"
#include "func.h"
#include "model.h"
#include "tensordiff.h"
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
static void describe(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
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

static json_t *jstr(const char *s)
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
	json_object_set_new(o, "name", jstr(name));
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
				    json_pair(jstr(ge_op_type(ga, e->a)),
					      jstr(ge_op_type(gb, e->b))));
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
				    json_pair(jstr(ge_op_device(ga, e->a)),
					      jstr(ge_op_device(gb, e->b))));
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

static const char *const kind_names[] = {"removed", "added", "changed",
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
	json_object_set_new(o, "kind", json_string(kind_names[e->kind]));
	json_object_set_new(o, "name", jstr(ge_op_name(g, id)));
	json_object_set_new(o, "type", jstr(ge_op_type(g, id)));
	if (e->kind == GE_DIFF_MOVED)
		json_object_set_new(o, "from", jstr(ge_op_name(ga, e->a)));
	if (e->kind == GE_DIFF_ADDED && e->a != GE_NOOP)
		json_object_set_new(o, "copy_of", jstr(ge_op_name(ga, e->a)));
	if (e->kind == GE_DIFF_REMOVED && e->b != GE_NOOP)
		json_object_set_new(o, "into", jstr(ge_op_name(gb, e->b)));
	if (e->kind != GE_DIFF_REMOVED) {
		ge_buf names = GE_BUF_INIT;
		if (ge_diff_origins(gb, e->b, &names)) {
			json_t *arr = json_array();
			ge_buf_addc(&names, 0);
			for (char *p = (char *)names.data, *nl;
			     (nl = strchr(p, '\n')); p = nl + 1) {
				*nl = 0;
				json_array_append_new(arr, jstr(p));
			}
			json_object_set_new(o, "origins", arr);
		}
		ge_buf_free(&names);
	}
	if (e->kind == GE_DIFF_CHANGED || (e->kind == GE_DIFF_MOVED && e->what))
		json_object_set_new(o, "changes", json_changes(ga, gb, e));
	return o;
}

/* ------------------------------------------------------------ the command */

/* Prints (unless quiet) and counts the op differences of two graphs;
 * returns how many there are. */
static size_t diff_ops(const ge_graph *ga, const ge_graph *gb,
		       const char *prefix, int print, size_t counts[4],
		       json_t *arr)
{
	ge_diff_entry *e;
	size_t n = ge_graph_diff(ga, gb, &e);
	ge_buf line = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		counts[e[i].kind]++;
		if (arr)
			json_array_append_new(arr, diff_entry_json(ga, gb, &e[i]));
		if (!print)
			continue;
		line.len = 0;
		ge_buf_adds(&line, prefix);
		describe(&line, ga, gb, &e[i]);
		printf("%s\n", line.data);
	}
	ge_buf_free(&line);
	free(e);
	return n;
}

/* A function's entry in --json: {"kind", "name"}, and "ops" for a
 * changed one. */
static json_t *func_json(json_t *farr, const char *kind, const char *name)
{
	if (!farr)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "name", jstr(name));
	json_array_append_new(farr, o);
	return o;
}

/* The function libraries: returns the number of functions that differ
 * (fcounts: removed, added, changed); body op differences go to counts,
 * and with farr (--json) each function's entry to farr. */
static size_t diff_functions(ge_graph *ga, ge_graph *gb, int say,
			     size_t counts[4], size_t fcounts[3], json_t *farr)
{
	if (ge_flib_load(ga, NULL) || ge_flib_load(gb, NULL))
		return 0;
	size_t n = 0;
	ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT, pre = GE_BUF_INIT;
	for (size_t f = 0; f < ge_func_capacity(ga); f++) {
		if (!ge_func_alive(ga, (ge_funcid)f))
			continue;
		const char *name = ge_func_name(ga, (ge_funcid)f);
		ge_funcid g2 = ge_func_find(gb, name);
		if (g2 == GE_NOFUNC) {
			fcounts[GE_DIFF_REMOVED]++;
			n++;
			func_json(farr, "removed", name);
			if (say)
				printf("- function %s\n", name);
			continue;
		}
		/* the same bytes: nothing to parse */
		x.len = y.len = 0;
		ge_func_encode(ga, (ge_funcid)f, &x);
		ge_func_encode(gb, g2, &y);
		if (x.len == y.len && !memcmp(x.data, y.data, x.len))
			continue;
		ge_graph *ba = ge_func_body(ga, (ge_funcid)f, NULL);
		ge_graph *bb = ge_func_body(gb, g2, NULL);
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", name);
		json_t *fo = func_json(farr, "changed", name), *ops = NULL;
		if (fo) {
			ops = json_array();
			json_object_set_new(fo, "ops", ops);
		}
		size_t k = ba && bb ? diff_ops(ba, bb, (char *)pre.data, say,
					       counts, ops)
				    : 0;
		if (!k && say)
			printf("~ function %s: signature, attrs or returns\n",
			       name);
		fcounts[GE_DIFF_CHANGED]++;
		n++;
	}
	for (size_t f = 0; f < ge_func_capacity(gb); f++) {
		if (!ge_func_alive(gb, (ge_funcid)f))
			continue;
		const char *name = ge_func_name(gb, (ge_funcid)f);
		if (ge_func_find(ga, name) == GE_NOFUNC) {
			fcounts[GE_DIFF_ADDED]++;
			n++;
			func_json(farr, "added", name);
			if (say)
				printf("+ function %s\n", name);
		}
	}
	ge_buf_free(&x);
	ge_buf_free(&y);
	ge_buf_free(&pre);
	return n;
}

/* --json: the whole difference as one object on standard output. */
static int print_json(const char *pa, const char *pb, json_t *ops,
		      json_t *funcs, json_t *meta[3], const size_t counts[4],
		      const size_t fcounts[3])
{
	json_t *o = json_object(), *sum = json_object(), *fs = json_object();
	json_object_set_new(o, "a", jstr(pa));
	json_object_set_new(o, "b", jstr(pb));
	for (int k = 0; k < 4; k++)
		json_object_set_new(sum, kind_names[k],
				    json_integer((json_int_t)counts[k]));
	for (int k = 0; k < 3; k++)
		json_object_set_new(fs, kind_names[k],
				    json_integer((json_int_t)fcounts[k]));
	json_object_set_new(sum, "functions", fs);
	json_object_set_new(o, "summary", sum);
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "functions", funcs);
	json_object_set_new(o, "collections", meta[0]);
	json_object_set_new(o, "signatures", meta[1]);
	json_object_set_new(o, "checkpoint", meta[2]);
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return EXIT_USAGE;
	printf("%s\n", text);
	free(text);
	return 0;
}

/* --verify (with --html): runs A and B on the same seeded inputs (the
 * runner, lib/exec/verify.h) and gives the page the figures per output
 * and per tensor both runs produce under one name.  NULL after a
 * message when a run failed. */
static json_t *run_verify(const char *pa, const char *pb,
			  const struct cli_model_opts *mo)
{
	ge_graph *a = NULL, *b = NULL;
	ge_load_opts lo = {0};
	lo.tags = mo->tags;
	ge_error err;
	int rc = ge_load(pa, &lo, &a, &err);
	if (!rc)
		rc = ge_load(pb, &lo, &b, &err);
	ge_xverify_opts o = GE_XVERIFY_OPTS_INIT;
	o.per_op = 1;
	o.per_op_each = 1;
	ge_xverify_result r;
	memset(&r, 0, sizeof r);
	if (!rc)
		rc = ge_xverify(a, b, &o, &r, &err);
	json_t *j = NULL;
	if (rc) {
		cli_errmsg("--verify: %s", err.msg);
	} else {
		ge_buf t = GE_BUF_INIT;
		ge_xverify_json(&r, pa, pb, &t);
		j = json_loadb(t.len ? (const char *)t.data : "{}", t.len, 0,
			       NULL);
		ge_buf_free(&t);
		json_t *each = json_array();
		for (size_t i = 0; j && i < r.neach; i++) {
			const ge_xcmp *c = &r.each_cmp[i];
			json_t *e = json_array();
			json_array_append_new(e, json_string(r.each_tensor[i]));
			json_array_append_new(e, isfinite(c->max_abs)
						 ? json_real(c->max_abs)
						 : json_null());
			json_array_append_new(e, isfinite(c->max_rel)
						 ? json_real(c->max_rel)
						 : json_null());
			json_array_append_new(e, json_boolean(ge_xcmp_ok(c)));
			json_array_append_new(each, e);
		}
		if (j)
			json_object_set_new(j, "tensors", each);
		else
			json_decref(each);
	}
	ge_xverify_result_free(&r);
	if (a)
		ge_graph_free(a);
	if (b)
		ge_graph_free(b);
	return j;
}

enum { O_TAGS = 1, O_QUIET, O_JSON, O_HTML, O_VERIFY };

static const struct cli_opt diff_opts[] = {
	{"tags", 't', 1, O_TAGS},
	{"quiet", 'q', 0, O_QUIET},
	{"json", 0, 0, O_JSON},
	{"html", 0, 1, O_HTML},
	{"verify", 0, 0, O_VERIFY},
	{NULL, 0, 0, 0},
};

int cmd_diff(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val, *html = NULL;
	int key, rc = 0, quiet = 0, json = 0, verify = 0;
	cli_args_init(&a, "diff", argc, argv);
	while ((key = cli_getopt(&a, diff_opts, &val)) > 0) {
		switch (key) {
		case O_TAGS: mo.tags = val; break;
		case O_QUIET: quiet = 1; break;
		case O_JSON: json = 1; break;
		case O_HTML: html = val; break;
		case O_VERIFY: verify = 1; break;
		}
	}
	if (key < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.npos != 2) {
		rc = cli_usage("diff", "two models are needed (A B)");
		goto out;
	}
	if (verify && !html) {
		rc = cli_usage("diff", "--verify goes with --html");
		goto out;
	}
	if (html && !diff_page_can_draw()) {
		rc = EXIT_USAGE;
		goto out;
	}
	mo.allow_missing_variables = 1;
	mo.no_check = 1;
	ge_graph *ga, *gb;
	if ((rc = cli_load_model(a.pos[0], &mo, &ga)))
		goto out;
	if ((rc = cli_load_model(a.pos[1], &mo, &gb))) {
		ge_graph_free(ga);
		goto out;
	}
	size_t counts[4] = {0, 0, 0, 0}, fcounts[3] = {0, 0, 0};
	/* the page shows the functions, collections, signatures and
	 * checkpoint entries as --json gives them */
	int keep = json || html;
	json_t *ops = json ? json_array() : NULL;
	json_t *funcs = keep ? json_array() : NULL;
	int say = !quiet && !json;
	size_t n = diff_ops(ga, gb, "", say, counts, ops);
	size_t nf = diff_functions(ga, gb, say, counts, fcounts, funcs);
	json_t *meta[3] = {keep ? json_array() : NULL,
			   keep ? json_array() : NULL,
			   keep ? json_array() : NULL};
	size_t nm = diff_meta(ga, gb, say, meta[0], meta[1]);
	nm += diff_checkpoints(a.pos[0], a.pos[1], say, meta[2]);
	if (html) {
		struct diff_page_in in = {a.pos[0], a.pos[1], ga, gb, NULL,
					  json_object()};
		json_object_set(in.more, "functions", funcs);
		json_object_set(in.more, "collections", meta[0]);
		json_object_set(in.more, "signatures", meta[1]);
		json_object_set(in.more, "checkpoint", meta[2]);
		if (verify && !(in.verify = run_verify(a.pos[0], a.pos[1], &mo)))
			rc = EXIT_USAGE;
		if (!rc)
			rc = diff_page_write(html, &in);
		json_decref(in.verify);
		json_decref(in.more);
	}
	if (say && (n || nf)) {
		printf("%zu removed, %zu added, %zu changed",
		       counts[GE_DIFF_REMOVED], counts[GE_DIFF_ADDED],
		       counts[GE_DIFF_CHANGED]);
		if (counts[GE_DIFF_MOVED])
			printf(", %zu moved", counts[GE_DIFF_MOVED]);
		printf("\n");
	}
	if (say && nf)
		printf("functions: %zu removed, %zu added, %zu changed\n",
		       fcounts[GE_DIFF_REMOVED], fcounts[GE_DIFF_ADDED],
		       fcounts[GE_DIFF_CHANGED]);
	if (json && !rc && !quiet)
		rc = print_json(a.pos[0], a.pos[1], ops, funcs, meta, counts,
				fcounts);
	else {
		json_decref(ops);
		json_decref(funcs);
		json_decref(meta[0]);
		json_decref(meta[1]);
		json_decref(meta[2]);
	}
	n += nf + nm;
	ge_graph_free(ga);
	ge_graph_free(gb);
	if (!rc)
		rc = n ? EXIT_RUNTIME : 0;
out:
	cli_args_free(&a);
	return rc;
}
