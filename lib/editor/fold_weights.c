/*
 * fold_weights.c: batch-norm folding, weight rounding and 8-bit weight
 * quantization (fold.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "editor/fold.h"
#include "editor/fold_impl.h"
#include "editor/provenance.h"

#define DT_FLOAT 1
#define DT_QUINT8 12

static int is_conv(const char *t)
{
	return !strcmp(t, "Conv2D") || !strcmp(t, "DepthwiseConv2dNative") ||
	       !strcmp(t, "MatMul");
}

static int const_of(ge_graph *g, ge_tref t, ge_value *v)
{
	if (t.op == GE_NOOP || t.index != 0 ||
	    strcmp(ge_op_type(g, t.op), "Const"))
		return -1;
	return ge_value_from_const(g, t.op, v, NULL) == GE_OK ? 0 : -1;
}

static size_t n_uses(ge_graph *g, ge_opid id)
{
	size_t nu, nc;
	ge_op_uses(g, id, &nu);
	ge_op_control_outputs(g, id, &nc);
	return nu + nc;
}

/* Output channels of a conv or MatMul and, for element k of its weights,
 * the channel it feeds. */
static int64_t out_channels(ge_graph *g, ge_opid c, const ge_value *w)
{
	const char *t = ge_op_type(g, c);
	if (!strcmp(t, "MatMul")) {
		if (w->rank != 2)
			return -1;
		return w->dims[1];
	}
	if (w->rank != 4)
		return -1;
	return !strcmp(t, "Conv2D") ? w->dims[3] : w->dims[2] * w->dims[3];
}

static int transposed_b(ge_graph *g, ge_opid c)
{
	size_t len;
	const uint8_t *p = ge_op_attr_raw(g, c, "transpose_b", &len);
	/* AttrValue.b is field 5: 0x28 then the varint */
	return p && len >= 2 && p[0] == 0x28 && p[1] != 0;
}

/* Scales the weights of conv c per output channel and writes them back
 * (in place when only c reads them); the Const of the new weights is
 * made from the old one and op by, whose scale it absorbed. */
static int scale_weights(ge_graph *g, ge_opid c, const double *scale,
			 int64_t nscale, ge_opid by, ge_opvec *gone)
{
	/* frozen graphs read weights through Identity ("weights/read") */
	ge_tref wt = ge_op_input(g, c, 1), via = wt;
	for (int hop = 0; hop < 8 && wt.op != GE_NOOP && wt.index == 0 &&
			  !strcmp(ge_op_type(g, wt.op), "Identity") &&
			  ge_op_num_inputs(g, wt.op) == 1 &&
			  !ge_op_num_control_inputs(g, wt.op);
	     hop++)
		wt = ge_op_input(g, wt.op, 0);
	ge_value w;
	if (const_of(g, wt, &w))
		return -1;
	int tb = !strcmp(ge_op_type(g, c), "MatMul") && transposed_b(g, c);
	int64_t oc = tb ? w.dims[0] : out_channels(g, c, &w);
	if (oc < 0 || (nscale != 1 && nscale != oc) || !w.d) {
		ge_value_free(&w);
		return -1;
	}
	int64_t inner = tb ? w.n / oc : 1;
	for (int64_t k = 0; k < w.n; k++) {
		int64_t ch = tb ? k / inner : k % oc;
		w.d[k] *= scale[nscale == 1 ? 0 : ch];
	}
	ge_value_normalize(&w);
	if (via.op == wt.op && n_uses(g, wt.op) == 1) {
		ge_fold_make_const(g, wt.op, &w);
		ge_opid from[2] = {wt.op, by};
		ge_op_made_from(g, wt.op, from, 2, "fold_batch_norms", NULL);
	} else {
		char nm[1100];
		snprintf(nm, sizeof nm, "%.1000s_bn_folded", ge_op_name(g, wt.op));
		ge_opid nw = ge_fold_new_const(g, nm, &w, ge_op_device(g, wt.op));
		ge_opid from[2] = {wt.op, by};
		ge_op_made_from(g, nw, from, 2, "fold_batch_norms", NULL);
		ge_op_set_input(g, c, 1, (ge_tref){nw, 0}, NULL);
		/* the old path, removed below if nothing else reads it */
		for (ge_tref t = via; t.op != wt.op; t = ge_op_input(g, t.op, 0))
			ge_opvec_push(gone, t.op);
		ge_opvec_push(gone, wt.op);
	}
	ge_value_free(&w);
	return 0;
}

static void set_type_attr(ge_graph *g, ge_opid id, const char *name, int dt)
{
	ge_buf a = GE_BUF_INIT;
	ge_buf_tag(&a, 6, 0);
	ge_buf_varint(&a, (uint64_t)dt);
	ge_op_set_attr_raw(g, id, name, a.data, a.len);
	ge_buf_free(&a);
}

static void set_str_attr(ge_graph *g, ge_opid id, const char *name,
			 const char *s)
{
	ge_buf a = GE_BUF_INIT;
	ge_buf_lenfield(&a, 2, s, strlen(s));
	ge_op_set_attr_raw(g, id, name, a.data, a.len);
	ge_buf_free(&a);
}

static double attr_float(ge_graph *g, ge_opid id, const char *name, double def)
{
	size_t len;
	const uint8_t *p = ge_op_attr_raw(g, id, name, &len);
	/* AttrValue.f is field 4, fixed32: 0x25 then 4 bytes */
	if (p && len >= 5 && p[0] == 0x25) {
		float f;
		memcpy(&f, p + 1, 4);
		return f;
	}
	return def;
}

static int attr_bool(ge_graph *g, ge_opid id, const char *name, int def)
{
	size_t len;
	const uint8_t *p = ge_op_attr_raw(g, id, name, &len);
	if (p && len >= 2 && p[0] == 0x28)
		return p[1] != 0;
	return def;
}

/* One batch norm after a conv: returns 1 if folded. */
static int fold_bn(ge_graph *g, ge_opid b, ge_fold_report *r, ge_opvec *gone)
{
	const char *t = ge_op_type(g, b);
	int old = !strcmp(t, "BatchNormWithGlobalNormalization");
	if (ge_op_num_inputs(g, b) != 5)
		return 0;
	ge_tref x = ge_op_input(g, b, 0);
	if (x.op == GE_NOOP || x.index != 0 || !is_conv(ge_op_type(g, x.op)) ||
	    n_uses(g, x.op) != 1)
		return 0;
	if (!old && attr_bool(g, b, "is_training", 1))
		return 0;
	size_t nu;
	const ge_use *u = ge_op_uses(g, b, &nu);
	for (size_t j = 0; j < nu; j++)
		if (ge_op_input(g, u[j].op, u[j].slot).index != 0)
			return 0; /* batch statistics are read */
	ge_value p[4];
	int ip[4] = {1, 2, 3, 4}; /* scale, offset, mean, var */
	if (old) {
		ip[0] = 4; /* gamma */
		ip[1] = 3; /* beta */
		ip[2] = 1;
		ip[3] = 2;
	}
	int got = 0;
	for (; got < 4; got++)
		if (const_of(g, ge_op_input(g, b, (size_t)ip[got]), &p[got]) ||
		    !p[got].d || p[got].n != p[0].n)
			break;
	int done = 0;
	if (got == 4) {
		double eps = old ? attr_float(g, b, "variance_epsilon", 0.001)
				 : attr_float(g, b, "epsilon", 0.0001);
		int after = old ? attr_bool(g, b, "scale_after_normalization", 1)
				: 1;
		int64_t C = p[0].n;
		double *sc = ge_xcalloc((size_t)(C ? C : 1), sizeof *sc);
		ge_value off;
		ge_value_copy(&off, &p[1]);
		for (int64_t c = 0; c < C; c++) {
			sc[c] = (after ? p[0].d[c] : 1) / sqrt(p[3].d[c] + eps);
			off.d[c] = p[1].d[c] - p[2].d[c] * sc[c];
		}
		ge_value_normalize(&off);
		if (scale_weights(g, x.op, sc, C, b, gone) == 0) {
			/* the conv absorbed the batch norm; its bias and the
			 * offset Const stand for the batch norm and its
			 * parameters */
			ge_opid from[6] = {x.op, b};
			ge_op_made_from(g, x.op, from, 2, "fold_batch_norms",
					NULL);
			for (int i = 1; i < 5; i++) {
				from[i + 1] = ge_op_input(g, b, (size_t)i).op;
				ge_opvec_push(gone, ge_op_input(g, b, (size_t)i).op);
			}
			char nm[1100];
			snprintf(nm, sizeof nm, "%.1000s_bn_offset",
				 ge_op_name(g, b));
			ge_opid oc = ge_fold_new_const(g, nm, &off,
						       ge_op_device(g, b));
			ge_op_made_from(g, oc, from + 1, 5, "fold_batch_norms",
					NULL);
			ge_op_made_from(g, b, from + 1, 1, "fold_batch_norms",
					NULL);
			int nchw = 0;
			const char *s;
			size_t len;
			if (!ge_op_attr_string(g, b, "data_format", &s, &len))
				nchw = len == 4 && !memcmp(s, "NCHW", 4);
			while (ge_op_num_inputs(g, b) > 1)
				ge_op_remove_input(g, b, ge_op_num_inputs(g, b) - 1,
						   NULL);
			ge_op_add_input(g, b, (ge_tref){oc, 0}, NULL);
			while (ge_op_num_attrs(g, b))
				ge_op_remove_attr(g, b, ge_op_attr_name(g, b, 0));
			ge_op_set_type(g, b, "BiasAdd");
			set_type_attr(g, b, "T", off.dtype);
			set_str_attr(g, b, "data_format", nchw ? "NCHW" : "NHWC");
			r->folded++;
			done = 1;
		}
		free(sc);
		ge_value_free(&off);
	}
	for (int i = 0; i < got && i < 4; i++)
		ge_value_free(&p[i]);
	if (got == 4 && !done) {
		ge_buf_printf(&r->notes, "op '%s' (%s) left as it was: the "
			      "weights of '%s' are not a float Const of the "
			      "right shape\n", ge_op_name(g, b), t,
			      ge_op_name(g, x.op));
		r->skipped++;
	}
	return done;
}

/* Mul(conv, Const scale): the scale goes into the weights, the conv takes
 * the Mul's name. */
static int fold_mul(ge_graph *g, ge_opid m, ge_fold_report *r, ge_opvec *gone)
{
	if (ge_op_num_inputs(g, m) != 2 || ge_op_num_control_inputs(g, m))
		return 0;
	for (int side = 0; side < 2; side++) {
		ge_tref x = ge_op_input(g, m, (size_t)side);
		ge_tref s = ge_op_input(g, m, (size_t)!side);
		if (x.op == GE_NOOP || x.index != 0 ||
		    !is_conv(ge_op_type(g, x.op)) || n_uses(g, x.op) != 1)
			continue;
		ge_value sv;
		if (const_of(g, s, &sv))
			continue;
		int ok = sv.d != NULL;
		for (int d = 0; ok && d + 1 < sv.rank; d++)
			ok = sv.dims[d] == 1;
		size_t nco;
		ge_op_control_outputs(g, m, &nco);
		if (ok && !nco &&
		    scale_weights(g, x.op, sv.d, sv.n, m, gone) == 0) {
			/* before the conv takes the Mul's name */
			ge_opid from[3] = {x.op, m, s.op};
			ge_op_made_from(g, x.op, from, 3, NULL, NULL);
			ge_opvec_push(gone, s.op);
			size_t nu;
			const ge_use *u = ge_op_uses(g, m, &nu);
			ge_input_edit *e = ge_xcalloc(nu ? nu : 1, sizeof *e);
			for (size_t j = 0; j < nu; j++)
				e[j] = (ge_input_edit){u[j].op, u[j].slot,
						       {x.op, 0}};
			ge_graph_set_inputs(g, e, nu, NULL);
			free(e);
			char *name = ge_xstrdup(ge_op_name(g, m));
			ge_graph_remove_op(g, m, 1, NULL);
			ge_op_set_name(g, x.op, name, NULL);
			ge_prov_note(g, x.op, "fold_batch_norms");
			free(name);
			ge_value_free(&sv);
			r->folded++;
			return 1;
		}
		ge_value_free(&sv);
	}
	return 0;
}

int ge_fold_batch_norms(ge_graph *g, ge_fold_report *r, ge_error *err)
{
	(void)err;
	ge_opvec gone = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		const char *t = ge_op_type(g, id);
		if (!strncmp(t, "FusedBatchNorm", 14) ||
		    !strcmp(t, "BatchNormWithGlobalNormalization"))
			fold_bn(g, id, r, &gone);
		else if (!strcmp(t, "Mul"))
			fold_mul(g, id, r, &gone);
	}
	/* parameters and old weights that nothing reads any more (in the
	 * order pushed: an Identity before the Const it reads) */
	for (size_t i = 0; i < gone.n; i++) {
		ge_opid id = gone.v[i];
		if (id == GE_NOOP || !ge_op_alive(g, id) || n_uses(g, id))
			continue;
		const char *t = ge_op_type(g, id);
		if ((!strcmp(t, "Const") || !strcmp(t, "Identity")) &&
		    ge_graph_remove_op(g, id, 0, NULL) == GE_OK)
			r->removed++;
	}
	ge_opvec_free(&gone);
	return GE_OK;
}

/* ------------------------------------------------------------ weights */

static int float_weights(ge_graph *g, ge_opid id, int64_t minimum_size,
			 ge_value *v)
{
	if (strcmp(ge_op_type(g, id), "Const"))
		return -1;
	int dt;
	if (ge_op_attr_type(g, id, "dtype", &dt) || dt != DT_FLOAT)
		return -1;
	if (ge_value_from_const(g, id, v, NULL) != GE_OK)
		return -1;
	if (v->n < minimum_size || v->n < 1) {
		ge_value_free(v);
		return -1;
	}
	return 0;
}

/* The output-channel axis of weights v when every reader takes them as
 * the kernel of a conv or matrix product (input 1, directly or through
 * Identity ops), else -1: Conv2D's HWIO filter along O, a depthwise
 * filter [H, W, C, multiplier] along C, MatMul's b along its columns
 * (its rows with transpose_b). */
static int kernel_axis(ge_graph *g, ge_opid id, const ge_value *v, int depth)
{
	size_t nu, nc;
	const ge_use *u = ge_op_uses(g, id, &nu);
	ge_op_control_outputs(g, id, &nc);
	if (!nu || nc || depth > 4)
		return -1;
	int axis = -2;
	for (size_t j = 0; j < nu; j++) {
		const char *t = ge_op_type(g, u[j].op);
		int a = -1;
		if (!strcmp(t, "Identity"))
			a = kernel_axis(g, u[j].op, v, depth + 1);
		else if (u[j].slot != 1)
			a = -1;
		else if (v->rank == 4 && (!strcmp(t, "Conv2D") ||
					  !strcmp(t, "_FusedConv2D")))
			a = 3;
		else if (v->rank == 4 &&
			 (!strcmp(t, "DepthwiseConv2dNative") ||
			  !strcmp(t, "FusedDepthwiseConv2dNative")))
			a = 2;
		else if (v->rank == 2 && (!strcmp(t, "MatMul") ||
					  !strcmp(t, "_FusedMatMul")))
			a = transposed_b(g, u[j].op) ? 0 : 1;
		if (a < 0 || (axis != -2 && a != axis))
			return -1;
		axis = a;
	}
	return axis < 0 ? -1 : axis;
}

/* Whether weights v are a vector of per-channel offsets or scales: a
 * bias (BiasAdd's input 1, a fused conv's or matmul's inputs from 2 on)
 * or a folded batch norm's vector (read by Add, AddV2 or Mul). */
static int is_bias(ge_graph *g, ge_opid id, const ge_value *v)
{
	size_t nu;
	const ge_use *u = ge_op_uses(g, id, &nu);
	if (v->rank != 1 || !nu)
		return 0;
	for (size_t j = 0; j < nu; j++) {
		const char *t = ge_op_type(g, u[j].op);
		int fused = !strcmp(t, "_FusedConv2D") ||
			    !strcmp(t, "_FusedMatMul") ||
			    !strcmp(t, "FusedDepthwiseConv2dNative");
		if (!(fused && u[j].slot >= 2) &&
		    !(!strcmp(t, "BiasAdd") && u[j].slot == 1) &&
		    strcmp(t, "Add") && strcmp(t, "AddV2") && strcmp(t, "Mul"))
			return 0;
	}
	return 1;
}

/* The ranges of v: one (nch 1) or one per slice along axis, in mn[] and
 * mx[] (nch entries each); the slice of element k is (k / post) % nch. */
static void channel_ranges(const ge_value *v, int axis, int64_t *nch,
			   int64_t *post, double **mn, double **mx)
{
	*nch = axis < 0 ? 1 : v->dims[axis];
	*post = 1;
	for (int d = axis + 1; axis >= 0 && d < v->rank; d++)
		*post *= v->dims[d];
	*mn = ge_xcalloc((size_t)*nch, sizeof **mn);
	*mx = ge_xcalloc((size_t)*nch, sizeof **mx);
	for (int64_t c = 0; c < *nch; c++) {
		(*mn)[c] = INFINITY;
		(*mx)[c] = -INFINITY;
	}
	for (int64_t k = 0; k < v->n; k++) {
		int64_t c = (k / *post) % *nch;
		if (v->d[k] < (*mn)[c])
			(*mn)[c] = v->d[k];
		if (v->d[k] > (*mx)[c])
			(*mx)[c] = v->d[k];
	}
}

int ge_round_weights(ge_graph *g, int num_steps, int64_t minimum_size,
		     int per_channel, ge_fold_report *r, ge_error *err)
{
	if (num_steps < 2)
		return ge_err(err, GE_EINVAL, "num_steps must be at least 2");
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_value v;
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || float_weights(g, id, minimum_size, &v))
			continue;
		if (per_channel && is_bias(g, id, &v)) {
			ge_value_free(&v);
			continue;
		}
		int axis = per_channel ? kernel_axis(g, id, &v, 0) : -1;
		int64_t nch, post, changed = 0;
		double *mn, *mx;
		channel_ranges(&v, axis, &nch, &post, &mn, &mx);
		for (int64_t k = 0; k < v.n; k++) {
			int64_t c = (k / post) % nch;
			if (!isfinite(mn[c]) || !isfinite(mx[c]) ||
			    !(mx[c] > mn[c]))
				continue;
			/* the centre of each of num_steps buckets, computed in
			 * float as transform_graph does */
			float width = (float)((mx[c] - mn[c]) / num_steps);
			double b = floor((v.d[k] - mn[c]) / width);
			if (b > num_steps - 1)
				b = num_steps - 1;
			if (b < 0)
				b = 0;
			v.d[k] = (float)mn[c] + width * ((float)b + 0.5f);
			changed = 1;
		}
		if (changed) {
			ge_value_normalize(&v);
			ge_fold_set_const_attrs(g, id, &v);
			r->folded++;
		}
		free(mn);
		free(mx);
		ge_value_free(&v);
	}
	return GE_OK;
}

/* TensorFlow's FloatToQuantized for quint8. */
static int64_t to_quint8(double x, double mn, double mx)
{
	if (mn == mx)
		return 0;
	double range = (mx - mn) * (256.0 / 255.0);
	double scale = 256.0 / range;
	int64_t q = (int64_t)round(x * scale) - (int64_t)round(mn * scale);
	return q < 0 ? 0 : q > 255 ? 255 : q;
}

/* The range of one tensor as transform_graph takes it: it holds 0, and
 * is never empty; float bounds. */
static void tensor_range(double *mn, double *mx)
{
	*mn = *mn < 0 ? *mn : 0;
	*mx = *mx > 0 ? *mx : 0;
	if (*mn == *mx)
		*mx = fabs(*mn) < 1e-6 ? *mn + 1 : *mn > 0 ? 2 * *mn : *mn / 2;
	*mn = (float)*mn;
	*mx = (float)*mx;
}

/* MIN_COMBINED for quint8, one slice's range: x = mn + q (mx - mn) / 255. */
static int64_t to_quint8_combined(double x, double mn, double mx)
{
	double q = round((x - mn) * 255.0 / (mx - mn));
	return q < 0 ? 0 : q > 255 ? 255 : (int64_t)q;
}

static void set_int_attr(ge_graph *g, ge_opid id, const char *name,
			 int64_t v)
{
	ge_buf a = GE_BUF_INIT;
	ge_buf_tag(&a, 3, 0);
	ge_buf_varint(&a, (uint64_t)v);
	ge_op_set_attr_raw(g, id, name, a.data, a.len);
	ge_buf_free(&a);
}

/* Const id with values v becomes Dequantize(q, lo, hi) of the mode, with
 * axis >= 0 for ranges per slice. */
static void make_dequantize(ge_graph *g, ge_opid id, const ge_value *q,
			    const ge_value *lo, const ge_value *hi,
			    const char *mode, int axis)
{
	char *name = ge_xstrdup(ge_op_name(g, id)), nm[1100];
	const char *dev = ge_op_device(g, id);
	snprintf(nm, sizeof nm, "%.1000s_quantized_const", name);
	ge_opid qc = ge_fold_new_const(g, nm, q, dev);
	snprintf(nm, sizeof nm, "%.1000s_quantized_min", name);
	ge_opid qmin = ge_fold_new_const(g, nm, lo, dev);
	snprintf(nm, sizeof nm, "%.1000s_quantized_max", name);
	ge_opid qmax = ge_fold_new_const(g, nm, hi, dev);
	/* the Const becomes the Dequantize: its name and readers stay */
	while (ge_op_num_attrs(g, id))
		ge_op_remove_attr(g, id, ge_op_attr_name(g, id, 0));
	ge_op_set_type(g, id, "Dequantize");
	ge_op_add_input(g, id, (ge_tref){qc, 0}, NULL);
	ge_op_add_input(g, id, (ge_tref){qmin, 0}, NULL);
	ge_op_add_input(g, id, (ge_tref){qmax, 0}, NULL);
	set_type_attr(g, id, "T", DT_QUINT8);
	set_str_attr(g, id, "mode", mode);
	if (axis >= 0)
		set_int_attr(g, id, "axis", axis);
	free(name);
}

int ge_quantize_weights(ge_graph *g, int64_t minimum_size, int per_channel,
			ge_fold_report *r, ge_error *err)
{
	(void)err;
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_value v;
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || float_weights(g, id, minimum_size, &v))
			continue;
		if (per_channel && is_bias(g, id, &v)) {
			ge_value_free(&v);
			continue;
		}
		int axis = per_channel ? kernel_axis(g, id, &v, 0) : -1;
		int64_t nch, post, c;
		double *mn, *mx;
		channel_ranges(&v, axis, &nch, &post, &mn, &mx);
		for (c = 0; c < nch; c++)
			if (!isfinite(mn[c]) || !isfinite(mx[c]))
				break;
		if (c < nch) {
			free(mn);
			free(mx);
			ge_value_free(&v);
			continue;
		}
		ge_value q, lo, hi;
		ge_value_init(&q, DT_QUINT8, v.rank, v.dims);
		if (axis < 0) {
			tensor_range(&mn[0], &mx[0]);
			ge_value_init(&lo, DT_FLOAT, 0, NULL);
			ge_value_init(&hi, DT_FLOAT, 0, NULL);
			for (int64_t k = 0; k < v.n; k++)
				q.i[k] = to_quint8(v.d[k], mn[0], mx[0]);
		} else {
			/* one range per output channel, each its own min and
			 * max (a constant channel: a range of 1 above it) */
			ge_value_init(&lo, DT_FLOAT, 1, &nch);
			ge_value_init(&hi, DT_FLOAT, 1, &nch);
			for (c = 0; c < nch; c++) {
				mn[c] = (float)mn[c];
				mx[c] = mx[c] > mn[c] ? (float)mx[c] : mn[c] + 1;
			}
			for (int64_t k = 0; k < v.n; k++) {
				c = (k / post) % nch;
				q.i[k] = to_quint8_combined(v.d[k], mn[c], mx[c]);
			}
		}
		for (c = 0; c < nch; c++) {
			lo.d[c] = mn[c];
			hi.d[c] = mx[c];
		}
		make_dequantize(g, id, &q, &lo, &hi,
				axis < 0 ? "MIN_FIRST" : "MIN_COMBINED", axis);
		r->folded++;
		free(mn);
		free(mx);
		ge_value_free(&v);
		ge_value_free(&q);
		ge_value_free(&lo);
		ge_value_free(&hi);
	}
	return GE_OK;
}
