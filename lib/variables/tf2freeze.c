/* tf2freeze.c: one signature of a TF2 SavedModel as a frozen GraphDef
 * (see tf2.h). */
#include "variables/tf2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "functions/func.h"
#include "editor/inline.h"
#include "formats/meta.h"
#include "editor/select.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

enum { DT_RESOURCE = 20 };

/* A captured variable of the signature's calls, by the name of the op
 * that feeds it (an op of the top-level graph, so of the copy too). */
struct capvar {
	char *op;
	char *key;     /* checkpoint key, or NULL */
};

struct job {
	ge_graph *g, *h;
	ge_bundle *b;
	const char *gname, *sig;
	const Tensorflow__SignatureDef *sd;
	struct capvar *cv;
	size_t ncv;
	ge_tvec outs;              /* inputs, then output ops */
	int tensor_names;
	/* tensor_names: IdentityN ops standing for calls, and the names of
	 * the calls, which they take once the calls are inlined */
	ge_opvec stand_in;
	char **stand_for;
};

static const char *tensor_of(const Tensorflow__TensorInfo *ti)
{
	if (!ti || ti->encoding_case != TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
		return NULL;
	return ti->name;
}

/* The ops the given ops need, through data and control inputs. */
static void needed(ge_graph *h, const ge_tref *from, size_t n, ge_opset *keep)
{
	ge_opvec stack = GE_VEC_INIT;
	ge_opset_init(keep, h);
	for (size_t i = 0; i < n; i++)
		if (ge_opset_insert(keep, from[i].op))
			ge_opvec_push(&stack, from[i].op);
	while (stack.n) {
		ge_opid op = stack.v[--stack.n];
		size_t ni = ge_op_num_inputs(h, op), nc = ge_op_num_control_inputs(h, op);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid p = i < ni ? ge_op_input(h, op, i).op
					   : ge_op_control_input(h, op, i - ni);
			if (p != GE_NOOP && ge_opset_insert(keep, p))
				ge_opvec_push(&stack, p);
		}
	}
	ge_opvec_free(&stack);
}

static void set_type(ge_graph *g, ge_opid op, const char *name, int dt)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_tag(&b, 6, 0); /* AttrValue.type */
	ge_buf_varint(&b, (uint64_t)dt);
	ge_op_set_attr_raw(g, op, name, b.data, b.len);
	ge_buf_free(&b);
}

/* Moves an op named `name` out of the way (to name_N). */
static int free_name(ge_graph *h, const char *name, ge_opid except,
		     ge_error *err)
{
	ge_opid q = ge_graph_find(h, name);
	if (q == GE_NOOP || q == except)
		return GE_OK;
	char *nn = ge_xstrdup(ge_graph_unique_name(h, name));
	int rc = ge_op_set_name(h, q, nn, err);
	free(nn);
	return rc;
}

/* An IdentityN passing on every output of call (which is inlined later
 * and leaves its name to it). */
static int stand_in(struct job *j, ge_opid call, ge_error *err)
{
	ge_graph *h = j->h;
	for (size_t i = 0; i < j->stand_in.n; i++)
		if (!strcmp(j->stand_for[i], ge_op_name(h, call)))
			return GE_OK;
	ge_buf nm = GE_BUF_INIT, types = GE_BUF_INIT, lst = GE_BUF_INIT,
	       a = GE_BUF_INIT;
	ge_buf_printf(&nm, "%s/outputs", ge_op_name(h, call));
	ge_opid id = ge_graph_add_op(h, ge_graph_unique_name(h, (char *)nm.data),
				     "IdentityN", err);
	ge_buf_free(&nm);
	if (id == GE_NOOP)
		return err ? err->code : GE_EINVAL;
	int n = ge_op_num_outputs(h, call), rc = GE_OK;
	for (int k = 0; k < n && !rc; k++) {
		ge_tref t = {call, k};
		int dt = ge_op_output_dtype(h, call, k);
		ge_buf_varint(&types, (uint64_t)dt);
		rc = ge_op_add_input(h, id, t, err);
	}
	ge_buf_lenfield(&lst, 6, types.data, types.len); /* ListValue.type */
	ge_buf_lenfield(&a, 1, lst.data, lst.len);       /* AttrValue.list */
	ge_op_set_attr_raw(h, id, "T", a.data, a.len);
	ge_buf_free(&types);
	ge_buf_free(&lst);
	ge_buf_free(&a);
	j->stand_for = ge_xrealloc(j->stand_for,
				   (j->stand_in.n + 1) * sizeof *j->stand_for);
	j->stand_for[j->stand_in.n] = ge_xstrdup(ge_op_name(h, call));
	ge_opvec_push(&j->stand_in, id);
	ge_tref k = {id, GE_CONTROL};
	ge_tvec_push(&j->outs, k);
	return rc;
}

/* The stand-ins take the names of the calls, gone now. */
static int name_stand_ins(struct job *j, ge_error *err)
{
	int rc = GE_OK;
	for (size_t i = 0; i < j->stand_in.n && !rc; i++) {
		rc = free_name(j->h, j->stand_for[i], j->stand_in.v[i], err);
		if (!rc)
			rc = ge_op_set_name(j->h, j->stand_in.v[i],
					    j->stand_for[i], err);
	}
	return rc;
}

/* The signature's outputs kept under their own names: a call's by a
 * stand-in, any other op's by itself. */
static int keep_tensor_names(struct job *j, ge_error *err)
{
	const Tensorflow__SignatureDef *sd = j->sd;
	int rc = GE_OK;
	for (size_t i = 0; i < sd->n_outputs && !rc; i++) {
		ge_tref t;
		const char *tn = tensor_of(sd->outputs[i]->value);
		if (!tn || ge_graph_find_tensor(j->h, tn, &t) != GE_OK)
			return ge_err(err, GE_EGRAPH,
				      "%s: signature '%s': output '%s' is not "
				      "a tensor of the graph (%s)", j->gname,
				      j->sig, sd->outputs[i]->key,
				      tn ? tn : "?");
		if (ge_is_call_op_type(ge_op_type(j->h, t.op)) ||
		    ge_op_is_call(j->h, t.op)) {
			rc = stand_in(j, t.op, err);
		} else {
			t.index = GE_CONTROL;
			ge_tvec_push(&j->outs, t);
		}
	}
	return rc;
}

/* Inputs: the Placeholders take their keys' names.  Outputs: an Identity
 * named by each key reads the signature's tensor. */
static int name_ios(struct job *j, ge_error *err)
{
	ge_graph *h = j->h;
	const Tensorflow__SignatureDef *sd = j->sd;
	int rc = GE_OK;
	for (size_t i = 0; i < sd->n_inputs && !rc; i++) {
		const char *key = sd->inputs[i]->key;
		const char *tn = tensor_of(sd->inputs[i]->value);
		ge_tref t;
		if (!tn || ge_graph_find_tensor(h, tn, &t) != GE_OK ||
		    t.index != 0)
			return ge_err(err, GE_EGRAPH,
				      "%s: signature '%s': input '%s' is not "
				      "the first output of an op of the graph "
				      "(%s)", j->gname, j->sig, key,
				      tn ? tn : "?");
		if (!j->tensor_names && strcmp(ge_op_name(h, t.op), key)) {
			rc = free_name(h, key, t.op, err);
			if (!rc)
				rc = ge_op_set_name(h, t.op, key, err);
		}
		t.index = GE_CONTROL;
		ge_tvec_push(&j->outs, t);
	}
	if (j->tensor_names)
		return rc ? rc : keep_tensor_names(j, err);
	size_t nin = j->outs.n;
	for (size_t i = 0; i < sd->n_outputs && !rc; i++) {
		const char *key = sd->outputs[i]->key;
		const char *tn = tensor_of(sd->outputs[i]->value);
		ge_tref t;
		if (!tn || ge_graph_find_tensor(h, tn, &t) != GE_OK ||
		    t.index < 0)
			return ge_err(err, GE_EGRAPH,
				      "%s: signature '%s': output '%s' is not "
				      "a tensor of the graph (%s)", j->gname,
				      j->sig, key, tn ? tn : "?");
		for (size_t k = 0; k < nin; k++)
			if (!strcmp(ge_op_name(h, j->outs.v[k].op), key))
				return ge_err(err, GE_EGRAPH,
					      "%s: signature '%s': '%s' names "
					      "an input and an output",
					      j->gname, j->sig, key);
		rc = free_name(h, key, GE_NOOP, err);
		if (rc)
			break;
		int dt = ge_op_output_dtype(h, t.op, t.index);
		if (!dt)
			dt = (int)sd->outputs[i]->value->dtype;
		ge_opid id = ge_graph_add_op(h, key, "Identity", err);
		if (id == GE_NOOP)
			return err ? err->code : GE_EINVAL;
		ge_graph_unique_name(h, key);
		set_type(h, id, "T", dt);
		rc = ge_op_add_input(h, id, t, err);
		ge_tref k = {id, GE_CONTROL};
		ge_tvec_push(&j->outs, k);
	}
	return rc;
}

/* Records the captured variables of the needed calls, with their keys. */
static int find_captures(struct job *j, const ge_opset *keep, ge_error *err)
{
	ge_tf2_objects *ob = NULL;
	int rc = ge_tf2_objects_open(j->g, j->b, &ob, err);
	if (rc)
		return rc;
	size_t cap = ge_graph_capacity(j->h);
	for (size_t id = 0; id < cap && !rc; id++) {
		if (!ge_opset_has(keep, (ge_opid)id) ||
		    !ge_is_call_op_type(ge_op_type(j->h, (ge_opid)id)))
			continue;
		ge_opid call = ge_graph_find(j->g, ge_op_name(j->h, (ge_opid)id));
		if (call == GE_NOOP)
			continue;
		ge_tf2_capture *c = NULL;
		size_t n = 0;
		rc = ge_tf2_call_captures(ob, j->g, call, &c, &n, err);
		for (size_t i = 0; i < n; i++) {
			if (c[i].kind != GE_TF2_VARIABLE ||
			    c[i].t.op == GE_NOOP)
				continue;
			/* the handle may come through Identity ops */
			ge_opid h = c[i].t.op;
			for (int d = 0; d < 64 && !strcmp(ge_op_type(j->g, h),
							  "Identity") &&
					ge_op_num_inputs(j->g, h) > 0 &&
					ge_op_input(j->g, h, 0).op != GE_NOOP;
			     d++)
				h = ge_op_input(j->g, h, 0).op;
			j->cv = ge_xrealloc(j->cv, (j->ncv + 1) * sizeof *j->cv);
			struct capvar *v = &j->cv[j->ncv++];
			v->op = ge_xstrdup(ge_op_name(j->g, h));
			v->key = c[i].key ? ge_xstrdup(c[i].key) : NULL;
		}
		free(c);
	}
	ge_tf2_objects_free(ob);
	return rc;
}

static const struct capvar *capvar_of(const struct job *j, const char *op)
{
	for (size_t i = 0; i < j->ncv; i++)
		if (!strcmp(j->cv[i].op, op))
			return &j->cv[i];
	return NULL;
}

/* Builds the key plan of the needed variables; fails listing those that
 * have no value. */
static int plan_values(struct job *j, ge_ckpt_plan *plan, ge_error *err)
{
	ge_opset keep;
	needed(j->h, j->outs.v, j->outs.n, &keep);
	size_t cap = ge_graph_capacity(j->h), nmiss = 0, nshown = 0;
	ge_buf miss = GE_BUF_INIT;
	for (size_t id = 0; id < cap; id++) {
		if (!ge_opset_has(&keep, (ge_opid)id) ||
		    !ge_is_variable_op_type(ge_op_type(j->h, (ge_opid)id)))
			continue;
		const char *name = ge_op_name(j->h, (ge_opid)id);
		const struct capvar *v = capvar_of(j, name);
		if (v && v->key && j->b) {
			ge_ckpt_plan_add(plan, v->key, name);
			continue;
		}
		if (!v && j->b)
			continue; /* not captured: ge_freeze looks it up */
		/* as many as one line of a message holds */
		if (miss.len < 600) {
			ge_buf_printf(&miss, "%s'%s'", nmiss ? ", " : "", name);
			nshown++;
		}
		nmiss++;
	}
	ge_opset_free(&keep);
	int rc = GE_OK;
	if (nmiss) {
		if (nmiss > nshown)
			ge_buf_printf(&miss, " and %zu more", nmiss - nshown);
		rc = ge_err(err, GE_ENOTFOUND,
			    "%s: signature '%s': %zu variable%s %s no value "
			    "%s: %s", j->gname, j->sig, nmiss,
			    nmiss == 1 ? "" : "s", nmiss == 1 ? "has" : "have",
			    j->b ? "in the checkpoint"
				 : "(the SavedModel has no variables)",
			    (const char *)miss.data);
	}
	ge_buf_free(&miss);
	return rc;
}

enum { DT_INT32 = 3 };

/* A Const int32 scalar named after op (name/axis). */
static ge_opid axis_const(ge_graph *g, ge_opid op, int64_t v)
{
	ge_buf nm = GE_BUF_INIT, t = GE_BUF_INIT, a = GE_BUF_INIT, pk = GE_BUF_INIT;
	ge_buf_printf(&nm, "%s/axis", ge_op_name(g, op));
	ge_opid c = ge_graph_add_op(g, ge_graph_unique_name(g, (char *)nm.data),
				    "Const", NULL);
	ge_op_set_device(g, c, ge_op_device(g, op));
	set_type(g, c, "dtype", DT_INT32);
	ge_buf_tag(&t, 1, 0); /* TensorProto.dtype */
	ge_buf_varint(&t, DT_INT32);
	ge_buf_lenfield(&t, 2, "", 0); /* a scalar's shape */
	ge_buf_varint(&pk, (uint64_t)v);
	ge_buf_lenfield(&t, 7, pk.data, pk.len); /* int_val, packed */
	ge_buf_lenfield(&a, 8, t.data, t.len); /* AttrValue.tensor */
	ge_op_set_attr_raw(g, c, "value", a.data, a.len);
	ge_buf_free(&nm);
	ge_buf_free(&t);
	ge_buf_free(&a);
	ge_buf_free(&pk);
	return c;
}

/* One read: op reads variable op v through a new ReadVariableOp. */
static int read_through(ge_graph *g, ge_opid op, ge_opid v, int dt,
			ge_error *err)
{
	ge_buf nm = GE_BUF_INIT;
	ge_buf_printf(&nm, "%s/ReadVariableOp", ge_op_name(g, op));
	ge_opid r = ge_graph_add_op(g, ge_graph_unique_name(g, (char *)nm.data),
				    "ReadVariableOp", err);
	ge_buf_free(&nm);
	if (r == GE_NOOP)
		return err ? err->code : GE_EINVAL;
	ge_op_set_device(g, r, ge_op_device(g, op));
	set_type(g, r, "dtype", dt);
	ge_tref h = {v, 0}, rt = {r, 0};
	int rc = ge_op_add_input(g, r, h, err);
	return rc ? rc : ge_op_set_input(g, op, 0, rt, err);
}

/* The variable op a resource tensor comes from through Identity ops, or
 * GE_NOOP. */
static ge_opid handle_of(ge_graph *g, ge_tref t)
{
	for (int d = 0; d < 64 && t.op != GE_NOOP; d++) {
		const char *ty = ge_op_type(g, t.op);
		if (ge_is_variable_op_type(ty))
			return t.op;
		if (strcmp(ty, "Identity") || ge_op_num_inputs(g, t.op) < 1)
			break;
		t = ge_op_input(g, t.op, 0);
	}
	return GE_NOOP;
}

/* Readers of an Identity of a variable's handle read the handle. */
static int bypass_handle_identities(ge_graph *g, const ge_opset *keep,
				    ge_error *err)
{
	size_t cap = ge_graph_capacity(g);
	int rc = GE_OK;
	for (size_t id = 0; id < cap && !rc; id++) {
		int dt = 0;
		if (!ge_opset_has(keep, (ge_opid)id) ||
		    strcmp(ge_op_type(g, (ge_opid)id), "Identity") ||
		    ge_op_attr_type(g, (ge_opid)id, "T", &dt) ||
		    dt != DT_RESOURCE)
			continue;
		ge_tref self = {(ge_opid)id, 0};
		ge_opid v = handle_of(g, self);
		if (v == GE_NOOP)
			continue;
		size_t nu;
		const ge_use *u = ge_op_uses(g, (ge_opid)id, &nu);
		ge_input_edit *ed = ge_xmalloc((nu ? nu : 1) * sizeof *ed);
		for (size_t k = 0; k < nu; k++) {
			ed[k].op = u[k].op;
			ed[k].slot = u[k].slot;
			ed[k].t.op = v;
			ed[k].t.index = 0;
		}
		rc = ge_graph_set_inputs(g, ed, nu, err);
		free(ed);
	}
	return rc;
}

int ge_resource_reads_as_values(ge_graph *g, const ge_tref *outputs,
				size_t n_outputs, size_t *n, ge_error *err)
{
	if (n)
		*n = 0;
	ge_opset keep;
	needed(g, outputs, n_outputs, &keep);
	size_t cap = ge_graph_capacity(g);
	int rc = bypass_handle_identities(g, &keep, err);
	for (size_t id = 0; id < cap && !rc; id++) {
		ge_opid op = (ge_opid)id;
		if (!ge_opset_has(&keep, op))
			continue;
		const char *t = ge_op_type(g, op);
		int gather = !strcmp(t, "ResourceGather"),
		    gathernd = !strcmp(t, "ResourceGatherNd"),
		    shape = !strcmp(t, "VariableShape");
		if ((!gather && !gathernd && !shape) ||
		    ge_op_num_inputs(g, op) < 1)
			continue;
		ge_opid v = ge_op_input(g, op, 0).op;
		if (v == GE_NOOP || !ge_is_variable_op_type(ge_op_type(g, v)))
			continue;
		int dt = 0;
		if (ge_op_attr_type(g, shape ? v : op, "dtype", &dt) || !dt)
			continue;
		rc = read_through(g, op, v, dt, err);
		if (rc)
			break;
		if (gather) {
			int64_t bd = 0;
			ge_op_attr_int(g, op, "batch_dims", &bd);
			ge_tref ax = {axis_const(g, op, bd), 0};
			rc = ge_op_add_input(g, op, ax, err);
			ge_op_set_type(g, op, "GatherV2");
			set_type(g, op, "Tparams", dt);
			set_type(g, op, "Taxis", DT_INT32);
			ge_op_remove_attr(g, op, "dtype");
			ge_op_remove_attr(g, op, "validate_indices");
		} else if (gathernd) {
			ge_op_set_type(g, op, "GatherNd");
			set_type(g, op, "Tparams", dt);
			ge_op_remove_attr(g, op, "dtype");
		} else {
			ge_op_set_type(g, op, "Shape");
			set_type(g, op, "T", dt);
		}
		if (n)
			(*n)++;
	}
	ge_opset_free(&keep);
	return rc;
}

/* What a graph executor without functions or resources cannot run. */
static int check_plain(struct job *j, ge_error *err)
{
	ge_graph *h = j->h;
	size_t cap = ge_graph_capacity(h);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(h, (ge_opid)id))
			continue;
		const char *t = ge_op_type(h, (ge_opid)id);
		int bad = ge_is_call_op_type(t) || ge_is_variable_op_type(t) ||
			  ge_op_is_call(h, (ge_opid)id);
		int n = bad ? 0 : ge_op_num_outputs(h, (ge_opid)id);
		for (int k = 0; k < n && !bad; k++)
			bad = ge_op_output_dtype(h, (ge_opid)id, k) == DT_RESOURCE;
		if (bad)
			return ge_err(err, GE_EGRAPH,
				      "%s: signature '%s': op '%s' (%s) would "
				      "stay in the frozen graph, which cannot "
				      "hold calls or resources", j->gname,
				      j->sig, ge_op_name(h, (ge_opid)id), t);
	}
	return GE_OK;
}

/* The function library of the frozen graph: only the functions that ops
 * left in it still call (the bodies of functional control flow, While
 * and If, which inlining does not remove), and when there are none no
 * library at all, not even an empty one, so tools that know nothing of
 * functions read the graph. */
static int drop_library(struct job *j, ge_error *err)
{
	int rc = ge_flib_load(j->h, err);
	if (rc)
		return rc;
	ge_funcid *keep = NULL;
	size_t nkeep = 0;
	ge_flib_reachable(j->h, &keep, &nkeep);
	if (nkeep) {
		size_t nf = ge_func_capacity(j->h), k = 0;
		for (size_t f = 0; f < nf && !rc; f++) {
			if (k < nkeep && keep[k] == (ge_funcid)f) {
				k++;
				continue;
			}
			if (ge_func_alive(j->h, (ge_funcid)f))
				rc = ge_func_remove(j->h, (ge_funcid)f, 1, err);
		}
		free(keep);
		return rc;
	}
	free(keep);
	ge_buf in = GE_BUF_INIT, out = GE_BUF_INIT;
	ge_graph_encode_graphdef(j->h, &in);
	/* the graph without its library */
	ge_wire w = ge_wire_of(in.data, in.len);
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		if (f.num != GE_GRAPHDEF_LIBRARY)
			ge_buf_add(&out, f.start, (size_t)(w.p - f.start));
	if (w.bad)
		rc = ge_err(err, GE_EFORMAT, "%s: the frozen graph does not "
			    "encode", j->gname);
	ge_buf_free(&in);
	ge_graph *h2 = NULL;
	if (!rc)
		rc = ge_graph_parse_graphdef(out.data, out.len,
					     ge_graph_name(j->h), &h2, err);
	ge_buf_free(&out);
	if (!rc) {
		ge_graph_free(j->h);
		j->h = h2;
	}
	return rc;
}

static int run(struct job *j, const ge_tf2_freeze_opts *o, ge_error *err)
{
	int rc = name_ios(j, err);
	if (rc)
		return rc;
	ge_opset keep;
	needed(j->h, j->outs.v, j->outs.n, &keep);
	rc = find_captures(j, &keep, err);
	ge_opvec calls = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(j->h);
	for (size_t id = 0; id < cap; id++)
		if (ge_opset_has(&keep, (ge_opid)id) &&
		    (ge_is_call_op_type(ge_op_type(j->h, (ge_opid)id)) ||
		     ge_op_is_call(j->h, (ge_opid)id)))
			ge_opvec_push(&calls, (ge_opid)id);
	ge_opset_free(&keep);
	for (size_t i = 0; i < calls.n && !rc; i++)
		rc = ge_inline(j->h, calls.v[i], 1, NULL, err);
	ge_opvec_free(&calls);
	if (rc)
		return rc;
	rc = ge_resource_reads_as_values(j->h, j->outs.v, j->outs.n, NULL, err);
	if (rc)
		return rc;
	ge_ckpt_plan plan;
	memset(&plan, 0, sizeof plan);
	rc = plan_values(j, &plan, err);
	if (!rc) {
		ge_freeze_opts fo = {o->clear_devices, &plan};
		rc = ge_freeze(j->h, j->b, j->outs.v, j->outs.n, &fo, err);
	}
	ge_ckpt_plan_free(&plan);
	if (!rc)
		rc = name_stand_ins(j, err);
	if (!rc)
		rc = drop_library(j, err);
	if (!rc)
		rc = check_plain(j, err);
	return rc;
}

int ge_tf2_freeze(ge_graph *g, ge_bundle *b, const ge_tf2_freeze_opts *o,
		  ge_graph **out, ge_error *err)
{
	static const ge_tf2_freeze_opts dflt = {NULL, 1, 0};
	if (!o)
		o = &dflt;
	*out = NULL;
	struct job j;
	memset(&j, 0, sizeof j);
	j.g = g;
	j.b = b;
	j.gname = *ge_graph_name(g) ? ge_graph_name(g) : "graph";
	j.sig = o->signature ? o->signature : "serving_default";
	j.tensor_names = o->tensor_names;
	j.sd = ge_signature_get(g, j.sig);
	if (!j.sd) {
		ge_buf names = GE_BUF_INIT;
		size_t ns = ge_signature_count(g);
		for (size_t i = 0; i < ns; i++)
			ge_buf_printf(&names, "%s%s", i ? ", " : "",
				      ge_signature_name(g, i));
		int rc = ge_err(err, GE_ENOTFOUND,
				"%s: no signature '%s' (it has: %s)", j.gname,
				j.sig, ns ? (const char *)names.data : "none");
		ge_buf_free(&names);
		return rc;
	}
	if (!ge_is_tf2_savedmodel(g))
		return ge_err(err, GE_EINVAL, "%s: not a TF2 SavedModel (no "
			      "object graph)", j.gname);
	ge_buf bytes = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &bytes);
	int rc = ge_graph_parse_graphdef(bytes.data, bytes.len, ge_graph_name(g),
					 &j.h, err);
	ge_buf_free(&bytes);
	if (!rc)
		rc = run(&j, o, err);
	for (size_t i = 0; i < j.ncv; i++) {
		free(j.cv[i].op);
		free(j.cv[i].key);
	}
	free(j.cv);
	ge_tvec_free(&j.outs);
	for (size_t i = 0; i < j.stand_in.n; i++)
		free(j.stand_for[i]);
	free(j.stand_for);
	ge_opvec_free(&j.stand_in);
	if (rc) {
		ge_graph_free(j.h);
		return rc;
	}
	*out = j.h;
	return GE_OK;
}
