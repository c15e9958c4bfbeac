/*
 * fold.c: constant folding (fold.h).  Batch norms and weights are in
 * fold_weights.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "editor/fold.h"
#include "editor/fold_impl.h"
#include "graph/opattrs.h"
#include "editor/provenance.h"
#include "analyses/shapes.h"

void ge_fold_report_free(ge_fold_report *r)
{
	ge_buf_free(&r->notes);
}

/* ------------------------------------------------------------ op edits */

static void put_varint_field(ge_buf *b, uint32_t field, uint64_t v)
{
	ge_buf_tag(b, field, 0);
	ge_buf_varint(b, v);
}

/* The attrs of a Const from its dtype and TensorProto bytes. */
static void set_const_raw(ge_graph *g, ge_opid id, int dtype,
			  const ge_buf *tensor)
{
	ge_buf a = GE_BUF_INIT;
	put_varint_field(&a, 6, (uint64_t)dtype);
	ge_op_set_attr_raw(g, id, "dtype", a.data, a.len);
	a.len = 0;
	ge_buf_lenfield(&a, 8, tensor->data, tensor->len);
	ge_op_set_attr_raw(g, id, "value", a.data, a.len);
	ge_buf_free(&a);
}

void ge_fold_set_const_attrs(ge_graph *g, ge_opid id, const ge_value *v)
{
	ge_buf t = GE_BUF_INIT;
	ge_value_to_tensor(v, &t);
	set_const_raw(g, id, v->dtype, &t);
	ge_buf_free(&t);
}

static void make_const_raw(ge_graph *g, ge_opid id, int dtype,
			   const ge_buf *tensor)
{
	while (ge_op_num_inputs(g, id))
		ge_op_remove_input(g, id, ge_op_num_inputs(g, id) - 1, NULL);
	ge_op_clear_control_inputs(g, id);
	while (ge_op_num_attrs(g, id))
		ge_op_remove_attr(g, id, ge_op_attr_name(g, id, 0));
	ge_op_set_type(g, id, "Const");
	set_const_raw(g, id, dtype, tensor);
}

void ge_fold_make_const(ge_graph *g, ge_opid id, const ge_value *v)
{
	ge_buf t = GE_BUF_INIT;
	ge_value_to_tensor(v, &t);
	make_const_raw(g, id, v->dtype, &t);
	ge_buf_free(&t);
}

static ge_opid new_const_raw(ge_graph *g, const char *name, int dtype,
			     const ge_buf *tensor, const char *device)
{
	const char *n = ge_graph_unique_name(g, name);
	ge_opid id = ge_graph_add_op(g, n, "Const", NULL);
	if (id == GE_NOOP)
		return id;
	set_const_raw(g, id, dtype, tensor);
	if (device && *device)
		ge_op_set_device(g, id, device);
	return id;
}

ge_opid ge_fold_new_const(ge_graph *g, const char *name, const ge_value *v,
			  const char *device)
{
	ge_buf t = GE_BUF_INIT;
	ge_value_to_tensor(v, &t);
	ge_opid id = new_const_raw(g, name, v->dtype, &t, device);
	ge_buf_free(&t);
	return id;
}

/* ------------------------------------------------------------ folding */

enum { F_NO = 0, F_CONST = 1, F_FOLD = 2 };

/* A folded output that becomes a Const: its TensorProto bytes, encoded
 * when the last reader of its value was done, so that the value (held as
 * doubles or int64) is freed early. */
typedef struct pending {
	int dtype;
	int set;
	ge_buf t;
} pending;

/* Values live only while some reader waits: left[] counts the readers
 * (data and control) not yet considered; when it reaches 0 the value is
 * freed, after the Const it becomes (if any) was encoded.  Live values
 * and encodings are charged to the budget b. */
typedef struct folder {
	ge_graph *g;
	size_t cap;
	uint8_t *state;     /* F_* per op */
	ge_value **vals;    /* per op: its outputs' values, or NULL */
	int *nvals;
	uint32_t *left;     /* per op: readers not yet considered */
	pending **pend;     /* per op: its Consts to write, or NULL */
	int *npend;
	ge_opid keep_op;    /* whose value ge_eval_tensor returns */
	const char *const *keep;
	size_t nkeep;
	ge_eval_budget b;
	ge_fold_report *r;
} folder;

static void folder_init(folder *f, ge_graph *g, ge_fold_report *r)
{
	memset(f, 0, sizeof *f);
	f->g = g;
	f->cap = ge_graph_capacity(g);
	f->r = r;
	f->keep_op = GE_NOOP;
	size_t cap = f->cap ? f->cap : 1;
	f->state = ge_xcalloc(cap, 1);
	f->vals = ge_xcalloc(cap, sizeof *f->vals);
	f->nvals = ge_xcalloc(cap, sizeof *f->nvals);
	f->left = ge_xcalloc(cap, sizeof *f->left);
	f->pend = ge_xcalloc(cap, sizeof *f->pend);
	f->npend = ge_xcalloc(cap, sizeof *f->npend);
	ge_eval_budget_init(&f->b);
}

static void free_vals(folder *f, ge_opid id)
{
	for (int k = 0; k < f->nvals[id]; k++) {
		ge_eval_budget_release(&f->b, ge_value_bytes(&f->vals[id][k]));
		ge_value_free(&f->vals[id][k]);
	}
	free(f->vals[id]);
	f->vals[id] = NULL;
	f->nvals[id] = 0;
}

static void folder_free(folder *f)
{
	for (size_t i = 0; i < f->cap; i++) {
		free_vals(f, (ge_opid)i);
		for (int k = 0; k < f->npend[i]; k++)
			ge_buf_free(&f->pend[i][k].t);
		free(f->pend[i]);
	}
	free(f->state);
	free(f->vals);
	free(f->nvals);
	free(f->left);
	free(f->pend);
	free(f->npend);
}

static int never_fold(const char *t)
{
	static const char *const no[] = {
		"Placeholder", "PlaceholderV2", "PlaceholderWithDefault",
		"Switch", "Merge", "Enter", "Exit", "NextIteration",
		"LoopCond", "RefSwitch", "RefMerge", "RefEnter", "RefExit",
		"RefNextIteration", "VariableV2", "Variable", "VarHandleOp",
		"ReadVariableOp", "Assign", "NoOp", "_Arg", "_Retval",
		NULL,
	};
	for (int i = 0; no[i]; i++)
		if (!strcmp(no[i], t))
			return 1;
	return 0;
}

static void note(folder *f, ge_opid id, const char *why)
{
	ge_buf_printf(&f->r->notes, "op '%s' (%s) left as it was: %s\n",
		      ge_op_name(f->g, id), ge_op_type(f->g, id), why);
	f->r->skipped++;
}

/* The values of a Const, decoded (within the budget) when first needed. */
static const ge_value *const_value(folder *f, ge_opid id, ge_error *why)
{
	if (!f->vals[id]) {
		ge_value v;
		if (ge_value_from_const_budget(f->g, id, &v, &f->b, why) !=
		    GE_OK)
			return NULL;
		f->vals[id] = ge_xmalloc(sizeof(ge_value));
		f->vals[id][0] = v;
		f->nvals[id] = 1;
	}
	return &f->vals[id][0];
}

/* Shape, Size, Rank and ShapeN of inputs whose inferred shape is fully
 * known are constants whatever the inputs' values. */
static int shape_known_op(folder *f, ge_opid id)
{
	const char *t = ge_op_type(f->g, id);
	if (strcmp(t, "Shape") && strcmp(t, "Size") && strcmp(t, "Rank") &&
	    strcmp(t, "ShapeN"))
		return 0;
	size_t n = ge_op_num_inputs(f->g, id);
	for (size_t i = 0; i < n; i++) {
		int64_t d[GE_SHAPE_MAXRANK];
		ge_tref in = ge_op_input(f->g, id, i);
		if (in.op == GE_NOOP)
			return 0;
		int r = ge_shapes_get(f->g, in, d, GE_SHAPE_MAXRANK);
		if (r < 0)
			return 0;
		for (int k = 0; k < r; k++)
			if (d[k] < 0)
				return 0;
	}
	return n > 0;
}

/* Placeholder values standing for inputs whose shape alone matters. */
static void shape_stand_in(folder *f, ge_tref in, ge_value *v)
{
	int64_t d[GE_SHAPE_MAXRANK];
	int r = ge_shapes_get(f->g, in, d, GE_SHAPE_MAXRANK);
	memset(v, 0, sizeof *v);
	v->dtype = 3;
	v->rank = r;
	memcpy(v->dims, d, (size_t)r * sizeof d[0]);
	v->n = ge_shape_count(r, d);
}

/* Gathers the values of op id's inputs into in[]; 0 when one is not
 * there (a note says why when it is a Const that does not decode). */
static int gather_inputs(folder *f, ge_opid id, int byshape, ge_value *in,
			 size_t nin)
{
	ge_error why;
	for (size_t i = 0; i < nin; i++) {
		ge_tref r = ge_op_input(f->g, id, i);
		if (byshape) {
			shape_stand_in(f, r, &in[i]);
			continue;
		}
		const ge_value *v = f->state[r.op] == F_CONST
					    ? const_value(f, r.op, &why)
					    : (r.index < f->nvals[r.op]
						       ? &f->vals[r.op][r.index]
						       : NULL);
		if (!v) {
			if (f->state[r.op] == F_CONST) {
				f->state[r.op] = F_NO;
				note(f, id, why.msg);
			}
			return 0;
		}
		in[i] = *v; /* shallow: the kernel only reads */
	}
	return 1;
}

/* Decides and evaluates one op; every input was seen before (topological
 * order). */
static void consider_op(folder *f, ge_opid id)
{
	ge_graph *g = f->g;
	const char *t = ge_op_type(g, id);
	ge_error why;
	if (!strcmp(t, "Const")) {
		/* a Const with control inputs belongs to a frame or waits on
		 * something: what it feeds is left alone */
		if (!ge_op_num_control_inputs(g, id))
			f->state[id] = F_CONST;
		return;
	}
	if (never_fold(t) || ge_op_type_is_stateful(g, t) == 1)
		return;
	int byshape = shape_known_op(f, id);
	size_t nin = ge_op_num_inputs(g, id), nc = ge_op_num_control_inputs(g, id);
	for (size_t i = 0; i < nc; i++) {
		ge_opid c = ge_op_control_input(g, id, i);
		if (c == GE_NOOP || !f->state[c])
			return;
	}
	if (!byshape)
		for (size_t i = 0; i < nin; i++) {
			ge_tref in = ge_op_input(g, id, i);
			if (in.op == GE_NOOP || !f->state[in.op])
				return;
		}
	if (!ge_eval_supported(t)) {
		if (nin)
			note(f, id, "no kernel for this op type");
		return;
	}
	int nout = ge_op_num_outputs(g, id);
	if (nout > GE_EVAL_MAX_OUTPUTS) {
		ge_buf_printf(&f->r->notes, "op '%s' (%s) left as it was: it "
			      "declares %d outputs, more than the evaluator "
			      "computes (%d)\n", ge_op_name(g, id), t, nout,
			      GE_EVAL_MAX_OUTPUTS);
		f->r->skipped++;
		return;
	}
	ge_value *in = ge_xcalloc(nin ? nin : 1, sizeof *in);
	if (gather_inputs(f, id, byshape, in, nin)) {
		ge_value *out = ge_xcalloc((size_t)(nout ? nout : 1), sizeof *out);
		if (ge_eval_op_budget(g, id, in, (int)nin, out, nout, &f->b,
				      &why) == GE_OK) {
			f->vals[id] = out;
			f->nvals[id] = nout;
			f->state[id] = F_FOLD;
		} else {
			free(out);
			note(f, id, why.msg);
		}
	}
	free(in);
}

static int in_keep(const char *name, const char *const *keep, size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++)
		if (!strcmp(keep[i], name))
			return 1;
	return 0;
}

/* Whether output k of a folded op is read by something not folded. */
static int read_outside(folder *f, ge_opid id, int k)
{
	size_t nu;
	const ge_use *u = ge_op_uses(f->g, id, &nu);
	for (size_t j = 0; j < nu; j++) {
		ge_tref in = ge_op_input(f->g, u[j].op, u[j].slot);
		if ((k < 0 || in.index == k) && f->state[u[j].op] != F_FOLD)
			return 1;
	}
	return 0;
}

static int is_sink(ge_graph *g, ge_opid id)
{
	size_t nu, nc;
	ge_op_uses(g, id, &nu);
	ge_op_control_outputs(g, id, &nc);
	return nu == 0 && nc == 0;
}

/* Whether a folded op becomes Consts: something not folded reads it (or
 * waits on it), it is a sink, or it is named in keep. */
static int on_frontier(folder *f, ge_opid id)
{
	ge_graph *g = f->g;
	size_t nco;
	const ge_opid *co = ge_op_control_outputs(g, id, &nco);
	for (size_t j = 0; j < nco; j++)
		if (f->state[co[j]] != F_FOLD)
			return 1;
	return read_outside(f, id, -1) || is_sink(g, id) ||
	       in_keep(ge_op_name(g, id), f->keep, f->nkeep);
}

static void encode(folder *f, ge_opid id, int k)
{
	pending *p = &f->pend[id][k];
	p->dtype = f->vals[id][k].dtype;
	p->set = 1;
	ge_value_to_tensor(&f->vals[id][k], &p->t);
	f->b.live += p->t.len;
}

/* Every reader of op id's values was considered: the Consts it becomes
 * are encoded and its values freed. */
static void retire(folder *f, ge_opid id)
{
	if (id == f->keep_op || !f->vals[id])
		return;
	if (f->state[id] == F_FOLD && on_frontier(f, id)) {
		int nout = f->nvals[id];
		f->pend[id] = ge_xcalloc((size_t)(nout ? nout : 1),
					 sizeof *f->pend[id]);
		f->npend[id] = nout;
		for (int k = 0; k < nout; k++)
			if (nout == 1 || read_outside(f, id, k))
				encode(f, id, k);
	}
	free_vals(f, id);
}

static void consider(folder *f, ge_opid id)
{
	consider_op(f, id);
	ge_graph *g = f->g;
	size_t ni = ge_op_num_inputs(g, id), nc = ge_op_num_control_inputs(g, id);
	for (size_t i = 0; i < ni + nc; i++) {
		ge_opid p = i < ni ? ge_op_input(g, id, i).op
				   : ge_op_control_input(g, id, i - ni);
		if (p != GE_NOOP && f->left[p] && !--f->left[p])
			retire(f, p);
	}
	if (!f->left[id])
		retire(f, id);
}

/* Counts the readers each op's values wait for among the ops that will be
 * considered (need NULL: all of ord). */
static void count_readers(folder *f, const ge_opid *ord, size_t n,
			  const uint8_t *need)
{
	ge_graph *g = f->g;
	for (size_t k = 0; k < n; k++) {
		ge_opid id = ord[k];
		if (need && !need[id])
			continue;
		size_t ni = ge_op_num_inputs(g, id),
		       nc = ge_op_num_control_inputs(g, id);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid p = i < ni ? ge_op_input(g, id, i).op
					   : ge_op_control_input(g, id, i - ni);
			if (p != GE_NOOP)
				f->left[p]++;
		}
	}
}

/* The ops folded into the Consts of frontier op id, into cone: id and
 * the folded ops and Consts it reads, directly or not (seen: zero for
 * every op before and after). */
static void fold_cone(folder *f, ge_opid id, uint8_t *seen, ge_opvec *cone)
{
	ge_graph *g = f->g;
	cone->n = 0;
	ge_opvec_push(cone, id);
	seen[id] = 1;
	for (size_t k = 0; k < cone->n; k++) {
		ge_opid o = cone->v[k];
		size_t ni = ge_op_num_inputs(g, o),
		       nc = ge_op_num_control_inputs(g, o);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid p = i < ni ? ge_op_input(g, o, i).op
					   : ge_op_control_input(g, o, i - ni);
			if (p != GE_NOOP && f->state[p] && !seen[p]) {
				seen[p] = 1;
				ge_opvec_push(cone, p);
			}
		}
	}
	for (size_t k = 0; k < cone->n; k++)
		seen[cone->v[k]] = 0;
}

/* Replaces the frontier of the folded region by the Consts encoded for
 * it; each lists the ops folded into it. */
static void materialize(folder *f, const ge_opid *ord, size_t n,
			uint8_t *turned)
{
	ge_graph *g = f->g;
	uint8_t *seen = ge_xcalloc(f->cap ? f->cap : 1, 1);
	ge_opvec cone = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++) {
		ge_opid id = ord[i];
		if (f->state[id] != F_FOLD || !f->pend[id])
			continue;
		const char *name = ge_op_name(g, id);
		int nout = f->npend[id];
		fold_cone(f, id, seen, &cone);
		if (nout == 1) {
			make_const_raw(g, id, f->pend[id][0].dtype,
				       &f->pend[id][0].t);
			ge_op_made_from(g, id, cone.v, cone.n,
					"fold_constants", NULL);
			turned[id] = 1;
			f->r->folded++;
			continue;
		}
		for (int k = 0; k < nout; k++) {
			if (!f->pend[id][k].set)
				continue;
			char nm[1100];
			snprintf(nm, sizeof nm, "%.1000s__cf__%d", name, k);
			ge_opid c = new_const_raw(g, nm, f->pend[id][k].dtype,
						  &f->pend[id][k].t,
						  ge_op_device(g, id));
			ge_op_made_from(g, c, cone.v, cone.n, "fold_constants",
					NULL);
			size_t nu;
			const ge_use *u = ge_op_uses(g, id, &nu);
			ge_input_edit *e = ge_xcalloc(nu ? nu : 1, sizeof *e);
			size_t ne = 0;
			for (size_t j = 0; j < nu; j++) {
				ge_tref in = ge_op_input(g, u[j].op, u[j].slot);
				if (in.index == k && f->state[u[j].op] != F_FOLD)
					e[ne++] = (ge_input_edit){
						u[j].op, u[j].slot, {c, 0}};
			}
			ge_graph_set_inputs(g, e, ne, NULL);
			free(e);
			f->r->folded++;
		}
	}
	ge_opvec_free(&cone);
	free(seen);
}

/* Removes what only the folded values needed, consumers first. */
static void sweep(folder *f, const ge_opid *ord, size_t n,
		  const uint8_t *turned, const uint8_t *had_users)
{
	ge_graph *g = f->g;
	for (size_t i = n; i-- > 0;) {
		ge_opid id = ord[i];
		if (!ge_op_alive(g, id) || turned[id] || !f->state[id])
			continue;
		if (f->state[id] == F_CONST && !had_users[id])
			continue;
		if (!is_sink(g, id) || in_keep(ge_op_name(g, id), f->keep,
					       f->nkeep))
			continue;
		if (ge_graph_remove_op(g, id, 0, NULL) == GE_OK)
			f->r->removed++;
	}
}

int ge_fold_constants(ge_graph *g, const char *const *keep, size_t nkeep,
		      ge_fold_report *r, ge_error *err)
{
	(void)err;
	folder f;
	folder_init(&f, g, r);
	f.keep = keep;
	f.nkeep = nkeep;
	size_t cap = f.cap ? f.cap : 1;
	uint8_t *turned = ge_xcalloc(cap, 1), *had = ge_xcalloc(cap, 1);
	size_t n;
	ge_opid *ord = ge_shapes_topo_order(g, &n);
	ge_shapes_infer(g, NULL, NULL);
	count_readers(&f, ord, n, NULL);
	for (size_t i = 0; i < n; i++)
		had[ord[i]] = !is_sink(g, ord[i]);
	for (size_t i = 0; i < n; i++)
		consider(&f, ord[i]);
	materialize(&f, ord, n, turned);
	sweep(&f, ord, n, turned, had);
	folder_free(&f);
	free(ord);
	free(turned);
	free(had);
	return GE_OK;
}

/* The ancestors of op t (data and control), t included. */
static uint8_t *ancestors(ge_graph *g, ge_opid t, size_t cap)
{
	uint8_t *need = ge_xcalloc(cap, 1);
	ge_opvec stack = GE_VEC_INIT;
	ge_opvec_push(&stack, t);
	need[t] = 1;
	while (stack.n) {
		ge_opid id = stack.v[--stack.n];
		size_t ni = ge_op_num_inputs(g, id), nc = ge_op_num_control_inputs(g, id);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid p = i < ni ? ge_op_input(g, id, i).op
					   : ge_op_control_input(g, id, i - ni);
			if (p != GE_NOOP && !need[p]) {
				need[p] = 1;
				ge_opvec_push(&stack, p);
			}
		}
	}
	ge_opvec_free(&stack);
	return need;
}

int ge_eval_tensor(ge_graph *g, ge_tref t, ge_value *out, ge_error *err)
{
	if (t.op == GE_NOOP || !ge_op_alive(g, t.op) || t.index < 0)
		return ge_err(err, GE_EINVAL, "no such tensor");
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	folder f;
	folder_init(&f, g, &r);
	f.keep_op = t.op;
	uint8_t *need = ancestors(g, t.op, f.cap ? f.cap : 1);
	size_t n;
	ge_opid *ord = ge_shapes_topo_order(g, &n);
	ge_shapes_infer(g, NULL, NULL);
	count_readers(&f, ord, n, need);
	for (size_t i = 0; i < n; i++)
		if (need[ord[i]])
			consider(&f, ord[i]);
	int rc = GE_OK;
	if (f.state[t.op] == F_CONST) {
		const ge_value *v = const_value(&f, t.op, err);
		if (v)
			ge_value_copy(out, v);
		else
			rc = GE_EINVAL;
	} else if (f.state[t.op] == F_FOLD && t.index < f.nvals[t.op]) {
		ge_value_copy(out, &f.vals[t.op][t.index]);
	} else {
		rc = ge_err(err, GE_EINVAL, "%s",
			    r.notes.len ? (char *)r.notes.data
					: "the tensor depends on a value "
					  "that is not constant");
		if (err) {
			size_t l = strlen(err->msg);
			if (l && err->msg[l - 1] == '\n')
				err->msg[l - 1] = 0;
		}
	}
	folder_free(&f);
	free(ord);
	free(need);
	ge_fold_report_free(&r);
	return rc;
}
