/*
 * ktest.h: running the runner's kernels in the C tests (header only).
 * kt_eval runs the op producing a tensor of a GraphDef given in text,
 * running its inputs first through their own kernels (Const, mostly),
 * and gives the result as text: "float32[2,3] 1,2,3,4,5,6", or
 * "error: <message>".
 */
#ifndef GE_KTEST_H
#define GE_KTEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/kernel.h"
#include "exec/xtensor.h"
#include "testutil.h"

static ge_xbudget kt_budget;

/* Fixture nodes in GraphDef text.  KT_CONST: a Const of DT_ dtype, shape
 * dims text ("dim{size:2}") and value fields; KT_F / KT_I / KT_B: float,
 * int32 and bool Consts from a list of values ("1 2 3"), one dim. */
#define KT_CONST(n, dt, shape, vals) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: " dt " } } " \
	"attr { key: \"value\" value { tensor { dtype: " dt \
	" tensor_shape { " shape " } " vals " } } } }\n"
/* An op: name, type, input list text ("input: \"a\" input: \"b\""),
 * attrs text. */
#define KT_OP(n, type, inputs, attrs) \
	"node { name: \"" n "\" op: \"" type "\" " inputs " " attrs " }\n"
#define KT_IN2(a, b) "input: \"" a "\" input: \"" b "\""
#define KT_IN1(a) "input: \"" a "\""
#define KT_ATTR_INT(key, v) \
	"attr { key: \"" key "\" value { i: " #v " } } "
#define KT_ATTR_TYPE(key, v) \
	"attr { key: \"" key "\" value { type: " v " } } "
#define KT_ATTR_BOOL(key, v) \
	"attr { key: \"" key "\" value { b: " v " } } "
#define KT_ATTR_STR(key, v) \
	"attr { key: \"" key "\" value { s: \"" v "\" } } "

/* Runs op id of g: out[] receives its outputs (nout of them). */
TU_UNUSED static int kt_run_op(ge_graph *g, ge_opid id, ge_xt **out, int nout,
		     ge_error *err)
{
	const char *type = ge_op_type(g, id);
	const ge_kdef *d = ge_kernel_find(type);
	if (!d)
		return ge_err(err, GE_EINVAL, "%s: no kernel for %s",
			      ge_op_name(g, id), type);
	int nin = (int)ge_op_num_inputs(g, id);
	ge_xt *in[64] = {0};
	int rc = GE_OK;
	for (int i = 0; i < nin && i < 64 && rc == GE_OK; i++) {
		ge_tref t = ge_op_input(g, id, i);
		ge_xt *o[16] = {0};
		int n = ge_op_num_outputs(g, t.op);
		if (n < t.index + 1)
			n = t.index + 1;
		rc = kt_run_op(g, t.op, o, n, err);
		for (int j = 0; j < n; j++) {
			if (j == t.index)
				in[i] = o[j];
			else
				ge_xt_unref(o[j]);
		}
	}
	if (rc == GE_OK) {
		ge_kctx k = {g, id, type, ge_op_name(g, id), in, nin, out,
			     nout, &kt_budget, NULL, err};
		rc = d->fn(&k);
		for (int i = 0; rc == GE_OK && i < nout; i++)
			if (!out[i])
				rc = ge_err(err, GE_EINVAL, "%s: output %d not "
					    "set", ge_op_name(g, id), i);
		if (rc != GE_OK)
			for (int i = 0; i < nout; i++)
				if (out[i]) {
					char m[sizeof err->msg];
					snprintf(m, sizeof m, "%s", err->msg);
					ge_err(err, GE_EINVAL, "%s: failed "
					       "but left output %d set (%s)",
					       ge_op_name(g, id), i, m);
					ge_xt_unref(out[i]);
					out[i] = NULL;
				}
	}
	for (int i = 0; i < nin && i < 64; i++)
		ge_xt_unref(in[i]);
	return rc;
}

TU_UNUSED static void kt_format(const ge_xt *t, char *o, size_t cap)
{
	size_t len;
	ge_xt_describe(t, o, cap);
	len = strlen(o);
	for (int64_t k = 0; k < t->n && k < 64 && len < cap; k++) {
		const char *sep = k ? "," : " ";
		if (t->dtype == 7) {
			const ge_xstr *s = &((const ge_xstr *)t->data)[k];
			len += (size_t)snprintf(o + len, cap - len, "%s%.*s",
						sep, (int)s->len,
						s->len ? s->p : "");
		} else if (t->dtype == 1 || t->dtype == 2 || t->dtype == 14 ||
			   t->dtype == 19) {
			double v = ge_xt_get_double(t, k);
			if (isnan(v))
				len += (size_t)snprintf(o + len, cap - len,
							"%snan", sep);
			else if (t->dtype == 1)
				len += (size_t)snprintf(o + len, cap - len,
							"%s%.9g", sep, v);
			else
				len += (size_t)snprintf(o + len, cap - len,
							"%s%.17g", sep, v);
		} else if (t->dtype == 23) {
			len += (size_t)snprintf(o + len, cap - len,
						"%s%" PRIu64, sep,
						((const uint64_t *)t->data)[k]);
		} else {
			len += (size_t)snprintf(o + len, cap - len,
						"%s%" PRId64, sep,
						ge_xt_get_int64(t, k));
		}
	}
}

/* The value of tensor "op" or "op:i" of g as text. */
TU_UNUSED static const char *kt_eval(ge_graph *g, const char *tensor)
{
	static char outs[8][4096];
	static int turn;
	char *o = outs[turn++ & 7];
	ge_tref t;
	ge_error err = {0};
	if (ge_graph_find_tensor(g, tensor, &t) != GE_OK)
		return "<no such tensor>";
	ge_xt *out[16] = {0};
	int n = ge_op_num_outputs(g, t.op);
	if (n == 0) { /* an op run for its effect (Assert) */
		if (kt_run_op(g, t.op, out, 0, &err) != GE_OK)
			snprintf(o, 4096, "error: %s", err.msg);
		else
			snprintf(o, 4096, "(no outputs)");
		return o;
	}
	if (n < t.index + 1)
		n = t.index + 1;
	if (kt_run_op(g, t.op, out, n, &err) != GE_OK) {
		snprintf(o, 4096, "error: %s", err.msg);
		return o;
	}
	kt_format(out[t.index], o, 4096);
	for (int j = 0; j < n; j++)
		ge_xt_unref(out[j]);
	return o;
}

/* kt_eval over a graph given in text, freed after. */
TU_UNUSED static const char *kt_eval_text(const char *txt, const char *tensor)
{
	ge_graph *g = parse(txt);
	const char *r = kt_eval(g, tensor);
	ge_graph_free(g);
	return r;
}

/* ------------------------------------------------------------ builder */

/* A graph built node by node, then run:
 *
 *	kt_c("a", "DT_FLOAT", "2,3", "1 2 3 4 5 6");
 *	kt_op("y", "Add", "a,b", KT_ATTR_TYPE("T", "DT_FLOAT"));
 *	is_string("float32[2,3] ...", kt_run("y"), "...");
 *
 * kt_run runs a tensor of the graph built so far and starts a new one. */
static char kt_text[65536];
static size_t kt_len;

TU_UNUSED static void kt_add(const char *fmt, ...) GE_PRINTF(1, 2);
TU_UNUSED static void kt_add(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(kt_text + kt_len, sizeof kt_text - kt_len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof kt_text - kt_len)
		kt_len += (size_t)n;
}

TU_UNUSED static const char *kt_field(const char *dt)
{
	if (!strcmp(dt, "DT_FLOAT")) return "float_val";
	if (!strcmp(dt, "DT_DOUBLE")) return "double_val";
	if (!strcmp(dt, "DT_INT64")) return "int64_val";
	if (!strcmp(dt, "DT_UINT64")) return "uint64_val";
	if (!strcmp(dt, "DT_UINT32")) return "uint32_val";
	if (!strcmp(dt, "DT_BOOL")) return "bool_val";
	if (!strcmp(dt, "DT_STRING")) return "string_val";
	if (!strcmp(dt, "DT_HALF") || !strcmp(dt, "DT_BFLOAT16"))
		return "half_val";
	return "int_val";
}

/* A Const: shape "2,3" ("" a scalar), values space-separated. */
TU_UNUSED static void kt_c(const char *name, const char *dt, const char *shape,
		 const char *vals)
{
	kt_add("node { name: \"%s\" op: \"Const\" attr { key: \"dtype\" "
	       "value { type: %s } } attr { key: \"value\" value { tensor { "
	       "dtype: %s tensor_shape {", name, dt, dt);
	for (const char *p = shape; *p;) {
		kt_add(" dim { size: %ld }", strtol(p, NULL, 10));
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	kt_add(" }");
	const char *field = kt_field(dt);
	int str = !strcmp(dt, "DT_STRING");
	for (const char *p = vals; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, " ");
		kt_add(str ? " %s: \"%.*s\"" : " %s: %.*s", field, (int)n, p);
		p += n;
	}
	kt_add(" } } } }\n");
}

/* An op with data inputs "a,b:1" and attrs text. */
TU_UNUSED static void kt_op(const char *name, const char *type, const char *inputs,
		  const char *attrs)
{
	kt_add("node { name: \"%s\" op: \"%s\"", name, type);
	for (const char *p = inputs; *p;) {
		size_t n = strcspn(p, ",");
		kt_add(" input: \"%.*s\"", (int)n, p);
		p += n;
		if (*p)
			p++;
	}
	kt_add(" %s }\n", attrs ? attrs : "");
}

TU_UNUSED static const char *kt_run(const char *tensor)
{
	const char *r = kt_eval_text(kt_text, tensor);
	kt_len = 0;
	kt_text[0] = 0;
	return r;
}

/* Whether a result is an error whose message starts with prefix. */
TU_UNUSED static int kt_err(const char *got, const char *prefix)
{
	size_t n = strlen("error: ");
	return !strncmp(got, "error: ", n) &&
	       !strncmp(got + n, prefix, strlen(prefix));
}

#endif
