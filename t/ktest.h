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
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/kernel.h"
#include "exec/xtensor.h"
#include "testutil.h"

static ge_xbudget kt_budget;

/* Runs op id of g: out[] receives its outputs (nout of them). */
static int kt_run_op(ge_graph *g, ge_opid id, ge_xt **out, int nout,
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
					ge_err(err, GE_EINVAL, "%s: failed "
					       "but left output %d set (%s)",
					       ge_op_name(g, id), i, err->msg);
					ge_xt_unref(out[i]);
					out[i] = NULL;
				}
	}
	for (int i = 0; i < nin && i < 64; i++)
		ge_xt_unref(in[i]);
	return rc;
}

static void kt_format(const ge_xt *t, char *o, size_t cap)
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
			if (t->dtype == 1)
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
static const char *kt_eval(ge_graph *g, const char *tensor)
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
static const char *kt_eval_text(const char *txt, const char *tensor)
{
	ge_graph *g = parse(txt);
	const char *r = kt_eval(g, tensor);
	ge_graph_free(g);
	return r;
}

#endif
