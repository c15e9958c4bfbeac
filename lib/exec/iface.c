/*
 * exec/iface.c: a model's interface (iface.h): its inputs and outputs
 * from a signature, a TensorFlow.js signature or the graph.
 *
 * Likely outputs (ge_likely_outputs, also what `gerewrite info` lists).
 * A SavedModel's signatures say what its outputs are: when they name
 * tensors of the graph, those ops are the answer.  Otherwise the
 * candidates are the ops nobody reads (data or control) that produce
 * something from some input (an op that reads nothing, a Placeholder
 * above all, is a likely input, never also an output), without what
 * training graphs leave unread around the model: the training machinery
 * (gradients, optimizers and their slot variables, "w/Adam/read", the
 * train_op's scope), the saver, summaries, variable initialization and assignment, asserts
 * and prints; and, when real tensors remain, the integer bookkeeping of
 * loops and shapes (a while loop's counter, a zero state's dims).  How
 * many were left out is reported.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/iface.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/jsonpb.h"
#include "formats/meta.h"
#include "base/tensor.h"
#include "formats/tfjs.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Whether the name's first scope is one training or saving code makes. */
static int machinery_scope(const char *name, const char *train_scope)
{
	static const char *const scopes[] = {
		"gradients", "train", "training", "optimizer", "Adam", "SGD",
		"GradientDescent", "Momentum", "RMSProp", "Adagrad", "Adadelta",
		"Ftrl", "save", "summaries", "init", "report_uninitialized",
		"global_step", NULL};
	size_t n = strcspn(name, "/");
	if (train_scope && *train_scope && strlen(train_scope) == n &&
	    !strncmp(name, train_scope, n))
		return 1;
	for (int i = 0; scopes[i]; i++) {
		size_t k = strlen(scopes[i]);
		if (n < k || strncmp(name, scopes[i], k) != 0)
			continue;
		/* "save", "save_1", "gradients_2" */
		const char *r = name + k;
		if (r == name + n)
			return 1;
		if (*r == '_') {
			r++;
			while (r < name + n && *r >= '0' && *r <= '9')
				r++;
			if (r == name + n)
				return 1;
		}
	}
	return 0;
}

/* Optimizer slots live under their variable: "w/Adam", "w/Momentum_1";
 * any part of the name so spelt marks the slot and what reads it. */
static int slot_part(const char *name)
{
	static const char *const slots[] = {
		"Adam", "Momentum", "RMSProp", "Adagrad", "AdagradDA",
		"Adadelta", "Adamax", "Ftrl", "Nadam", "ProximalAdagrad",
		"GradientDescent", "accumulator", "Adam_1", "Momentum_1",
		"RMSProp_1", "Ftrl_1", NULL};
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		for (int i = 0; slots[i]; i++)
			if (strlen(slots[i]) == n && !strncmp(p, slots[i], n))
				return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int machinery_type(const char *t)
{
	static const char *const types[] = {
		"SaveV2", "RestoreV2", "Save", "Restore",
		"SaveSlices", "RestoreSlice", "MergeV2Checkpoints",
		"ShardedFilename", "ShardedFilespec", "MergeSummary", "Assert",
		"Print", "PrintV2", "IsVariableInitialized",
		"VarIsInitializedOp", NULL};
	for (int i = 0; types[i]; i++)
		if (!strcmp(t, types[i]))
			return 1;
	return prefix(t, "Assign") || prefix(t, "Apply") ||
	       prefix(t, "ResourceApply") || prefix(t, "SparseApply") ||
	       prefix(t, "ResourceSparseApply") || strstr(t, "Summary") ||
	       prefix(t, "WriteSummary") || prefix(t, "Write");
}

/* Integer scalars and short vectors: loop counters, shape arithmetic. */
static int bookkeeping(const ge_graph *g, ge_opid id)
{
	int dt = ge_op_output_dtype(g, id, 0);
	/* DT_INT32 = 3, DT_INT64 = 9, DT_BOOL = 10 */
	if (dt != 3 && dt != 9 && dt != 10)
		return 0;
	const char *t = ge_op_type(g, id);
	if (!strcmp(t, "Shape") || !strcmp(t, "ShapeN") || !strcmp(t, "Size") ||
	    !strcmp(t, "Rank"))
		return 1;
	int64_t dims[2];
	int rank = ge_op_output_shape(g, id, 0, dims, 2);
	/* an unknown shape may be a real output (ArgMax's classes) */
	return rank == 0 || rank == 1;
}

/* The first scope of the train_op collection's first op, if any. */
static const char *train_op_scope(ge_graph *g, char *buf, size_t cap)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, "train_op");
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST ||
	    !c->node_list || !c->node_list->n_value)
		return NULL;
	const char *v = c->node_list->value[0];
	size_t n = strcspn(v, "/:");
	if (n >= cap)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = 0;
	return buf;
}

static int from_signatures(ge_graph *g, ge_opvec *outs)
{
	size_t n = ge_signature_count(g);
	unsigned char *seen = ge_xcalloc(ge_graph_capacity(g) + 1, 1);
	for (size_t i = 0; i < n; i++) {
		Tensorflow__SignatureDef *s =
			ge_signature_get(g, ge_signature_name(g, i));
		for (size_t k = 0; s && k < s->n_outputs; k++) {
			Tensorflow__TensorInfo *t = s->outputs[k]->value;
			ge_tref r;
			if (!t ||
			    t->encoding_case !=
				    TENSORFLOW__TENSOR_INFO__ENCODING_NAME ||
			    ge_graph_find_tensor(g, t->name, &r) != GE_OK ||
			    seen[r.op])
				continue;
			seen[r.op] = 1;
			ge_opvec_push(outs, r.op);
		}
	}
	free(seen);
	return outs->n > 0;
}

int ge_likely_outputs(ge_graph *g, ge_opvec *outs, size_t *left_out)
{
	*left_out = 0;
	if (from_signatures(g, outs))
		return 1;
	char tb[256];
	const char *train = train_op_scope(g, tb, sizeof tb);
	ge_opvec ints = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || ge_op_num_outputs(g, id) <= 0)
			continue;
		size_t nuses, ncouts;
		ge_op_uses(g, id, &nuses);
		ge_op_control_outputs(g, id, &ncouts);
		const char *t = ge_op_type(g, id);
		/* never outputs, and not counted as left out */
		if (nuses || ncouts || !strcmp(t, "Const") ||
		    !strcmp(t, "NoOp") || !strcmp(t, "VariableV2") ||
		    !strcmp(t, "Variable") || !strcmp(t, "VarHandleOp") ||
		    !strncmp(t, "Placeholder", 11) ||
		    ge_op_num_inputs(g, id) == 0)
			continue;
		if (machinery_type(t) ||
		    machinery_scope(ge_op_name(g, id), train) ||
		    slot_part(ge_op_name(g, id))) {
			(*left_out)++;
			continue;
		}
		if (bookkeeping(g, id))
			ge_opvec_push(&ints, id);
		else
			ge_opvec_push(outs, id);
	}
	if (outs->n) {
		*left_out += ints.n;
	} else {
		for (size_t i = 0; i < ints.n; i++)
			ge_opvec_push(outs, ints.v[i]);
	}
	ge_opvec_free(&ints);
	return 0;
}

/* ---------------------------------------------------------------- ports */

static ge_xport *add_port(ge_xport **v, size_t *n, const char *key,
			  const char *tensor)
{
	*v = ge_xrealloc(*v, (*n + 1) * sizeof **v);
	ge_xport *p = &(*v)[(*n)++];
	memset(p, 0, sizeof *p);
	p->key = ge_xstrdup(key);
	p->tensor = ge_xstrdup(tensor);
	p->rank = -1;
	return p;
}

static int cmp_port(const void *a, const void *b)
{
	return strcmp(((const ge_xport *)a)->key, ((const ge_xport *)b)->key);
}

/* "x" means "x:0". */
static int same_tensor(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na == nb)
		return !strcmp(a, b);
	if (na + 2 == nb)
		return !strncmp(a, b, na) && !strcmp(b + na, ":0");
	if (nb + 2 == na)
		return !strncmp(a, b, nb) && !strcmp(a + nb, ":0");
	return 0;
}

const ge_xport *ge_xiface_find(const ge_xport *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].key, name))
			return &v[i];
	for (size_t i = 0; i < n; i++)
		if (same_tensor(v[i].tensor, name) || same_tensor(v[i].key, name))
			return &v[i];
	return NULL;
}

const char *ge_xiface_names(const ge_xport *v, size_t n, char *buf,
			    size_t cap)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s",
					i ? ", " : "", v[i].key);
	if (!n)
		snprintf(buf, cap, "none");
	return buf;
}

void ge_xiface_free(ge_xiface *f)
{
	for (size_t i = 0; i < f->nin; i++) {
		free(f->in[i].key);
		free(f->in[i].tensor);
	}
	for (size_t i = 0; i < f->nout; i++) {
		free(f->out[i].key);
		free(f->out[i].tensor);
	}
	free(f->in);
	free(f->out);
	free(f->signature);
	memset(f, 0, sizeof *f);
}

/* ---------------------------------------------------------------- signature */

static int runnable_key(const char *k)
{
	return strncmp(k, "__", 2) != 0;
}

static const char *choose_signature(ge_graph *g, const char *want,
				    ge_error *err, int *rc)
{
	size_t n = ge_signature_count(g), runnable = 0;
	const char *only = NULL;
	char names[512];
	size_t len = 0;
	names[0] = 0;
	*rc = GE_OK;
	for (size_t i = 0; i < n; i++) {
		const char *k = ge_signature_name(g, i);
		if (want && !strcmp(k, want))
			return k;
		if (!runnable_key(k))
			continue;
		if (!want && !strcmp(k, "serving_default"))
			return k;
		runnable++;
		only = k;
		if (len < sizeof names)
			len += (size_t)snprintf(names + len, sizeof names - len,
						"%s%s", len ? ", " : "", k);
	}
	if (want) {
		*rc = ge_err(err, GE_ENOTFOUND, "%s: no signature '%s' "
			     "(signatures: %s)", ge_graph_name(g), want,
			     runnable ? names : "none");
		return NULL;
	}
	if (runnable == 1)
		return only;
	if (runnable > 1)
		*rc = ge_err(err, GE_EINVAL, "%s: %zu signatures and no "
			     "serving_default: choose one with --signature "
			     "(%s)", ge_graph_name(g), runnable, names);
	return NULL;
}

static int sig_ports(ge_graph *g, const char *sig, size_t n,
		     Tensorflow__SignatureDef__InputsEntry **ents,
		     ge_xport **v, size_t *nv, ge_error *err)
{
	for (size_t i = 0; i < n; i++) {
		Tensorflow__TensorInfo *t = ents[i]->value;
		if (!t || t->encoding_case !=
				  TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
			return ge_err(err, GE_EINVAL, "%s: '%s' of signature "
				      "'%s' is a sparse or composite tensor, "
				      "which the runner does not feed",
				      ge_graph_name(g), ents[i]->key, sig);
		ge_xport *p = add_port(v, nv, ents[i]->key, t->name);
		p->dtype = (int)t->dtype;
		Tensorflow__TensorShapeProto *s = t->tensor_shape;
		if (s && !s->unknown_rank && s->n_dim <= GE_SHAPE_MAXRANK) {
			p->rank = (int)s->n_dim;
			for (size_t d = 0; d < s->n_dim; d++)
				p->dims[d] = s->dim[d]->size < 0
						     ? -1 : s->dim[d]->size;
		}
		/* the graph may know more of the shape than the signature */
		ge_tref r;
		if (ge_graph_find_tensor(g, p->tensor, &r) == GE_OK &&
		    r.index >= 0) {
			int64_t dims[GE_SHAPE_MAXRANK];
			int rank = ge_op_output_shape(g, r.op, r.index, dims,
						      GE_SHAPE_MAXRANK);
			if (rank >= 0 && (p->rank < 0 || p->rank == rank)) {
				for (int d = 0; d < rank; d++)
					if (p->rank < 0 || p->dims[d] < 0)
						p->dims[d] = dims[d];
				p->rank = rank;
			}
			if (!p->dtype)
				p->dtype = ge_op_output_dtype(g, r.op, r.index);
		}
	}
	if (*nv > 1)
		qsort(*v, *nv, sizeof **v, cmp_port);
	return GE_OK;
}

static int from_signature(ge_graph *g, const char *sig, ge_xiface *f,
			  ge_error *err)
{
	Tensorflow__SignatureDef *s = ge_signature_get(g, sig);
	if (!s)
		return ge_err(err, GE_ENOTFOUND, "%s: no signature '%s'",
			      ge_graph_name(g), sig);
	f->signature = ge_xstrdup(sig);
	f->from = "signature";
	int rc = sig_ports(g, sig, s->n_inputs, s->inputs, &f->in, &f->nin,
			   err);
	if (!rc)
		rc = sig_ports(g, sig, s->n_outputs,
			       (Tensorflow__SignatureDef__InputsEntry **)
				       s->outputs,
			       &f->out, &f->nout, err);
	return rc;
}

/* ---------------------------------------------------------------- tfjs */

static int tfjs_ports(ge_graph *g, json_t *side, ge_xport **v, size_t *n)
{
	const char *key;
	json_t *val;
	json_object_foreach(side, key, val) {
		json_t *name = json_object_get(val, "name");
		if (!json_is_string(name))
			continue;
		ge_xport *p = add_port(v, n, key, json_string_value(name));
		json_t *dt = json_object_get(val, "dtype");
		if (json_is_string(dt) &&
		    ge_dtype_from_name(json_string_value(dt)) > 0)
			p->dtype = ge_dtype_from_name(json_string_value(dt));
		json_t *shape = json_object_get(val, "tensorShape");
		json_t *dims = json_object_get(shape, "dim");
		json_t *unk = json_object_get(shape, "unknownRank");
		if (shape && !json_is_true(unk) &&
		    json_array_size(dims) <= GE_SHAPE_MAXRANK) {
			p->rank = (int)json_array_size(dims);
			for (int d = 0; d < p->rank; d++) {
				int64_t size = -1;
				json_t *sz = json_object_get(
					json_array_get(dims, (size_t)d), "size");
				if (json_is_string(sz))
					size = strtoll(json_string_value(sz),
						       NULL, 10);
				else if (sz)
					ge_json_int64(sz, &size);
				p->dims[d] = size < 0 ? -1 : size;
			}
		}
		ge_tref r;
		if (!p->dtype &&
		    ge_graph_find_tensor(g, p->tensor, &r) == GE_OK &&
		    r.index >= 0)
			p->dtype = ge_op_output_dtype(g, r.op, r.index);
	}
	if (*n > 1)
		qsort(*v, *n, sizeof **v, cmp_port);
	return GE_OK;
}


/* ---------------------------------------------------------------- graph */

static void graph_port(ge_graph *g, ge_opid id, int k, ge_xport **v,
		       size_t *n)
{
	ge_buf b = GE_BUF_INIT;
	const char *t = ge_tensor_fmt(g, (ge_tref){id, k}, &b);
	ge_xport *p = add_port(v, n, t, t);
	ge_buf_free(&b);
	if (k == 0) {
		/* "x", not "x:0", as users name a placeholder */
		free(p->key);
		p->key = ge_xstrdup(ge_op_name(g, id));
	}
	p->dtype = ge_op_output_dtype(g, id, k);
	p->rank = ge_op_output_shape(g, id, k, p->dims, GE_SHAPE_MAXRANK);
	if (p->rank > GE_SHAPE_MAXRANK)
		p->rank = -1;
}

static int is_pwd(const char *type)
{
	return !strcmp(type, "PlaceholderWithDefault");
}

/* The graph's placeholders as inputs, with or without a default. */
static void graph_inputs(ge_graph *g, ge_xiface *f)
{
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		const char *t = ge_op_type(g, id);
		if (!strcmp(t, "Placeholder") || !strcmp(t, "PlaceholderV2") ||
		    is_pwd(t))
			graph_port(g, id, 0, &f->in, &f->nin);
	}
}

/* Which inputs have a default (iface.h), wherever the ports came from. */
static void mark_defaults(ge_graph *g, ge_xiface *f)
{
	for (size_t i = 0; i < f->nin; i++) {
		ge_tref r;
		f->in[i].has_default =
			ge_graph_find_tensor(g, f->in[i].tensor, &r) == GE_OK &&
			r.index == 0 && is_pwd(ge_op_type(g, r.op));
	}
}

/* The graph's likely outputs as outputs. */
static void graph_outputs(ge_graph *g, ge_xiface *f)
{
	ge_opvec outs = GE_VEC_INIT;
	size_t left;
	ge_likely_outputs(g, &outs, &left);
	for (size_t i = 0; i < outs.n; i++) {
		int n = ge_op_num_outputs(g, outs.v[i]);
		for (int k = 0; k < n; k++)
			graph_port(g, outs.v[i], k, &f->out, &f->nout);
	}
	ge_opvec_free(&outs);
}

static int from_graph(ge_graph *g, ge_xiface *f)
{
	f->from = "graph";
	graph_inputs(g, f);
	graph_outputs(g, f);
	return GE_OK;
}

/* A TensorFlow.js signature may name one side only (faceboxes lists its
 * outputs): the other comes from the graph. */
static int from_tfjs(ge_graph *g, json_t *sig, ge_xiface *f)
{
	f->from = "tfjs signature";
	tfjs_ports(g, json_object_get(sig, "inputs"), &f->in, &f->nin);
	tfjs_ports(g, json_object_get(sig, "outputs"), &f->out, &f->nout);
	if (!json_object_size(json_object_get(sig, "inputs")))
		graph_inputs(g, f);
	if (!json_object_size(json_object_get(sig, "outputs")))
		graph_outputs(g, f);
	return GE_OK;
}

int ge_xiface_get(ge_graph *g, const char *signature, ge_xiface *f,
		  ge_error *err)
{
	memset(f, 0, sizeof *f);
	int rc;
	const char *sig = choose_signature(g, signature, err, &rc);
	if (sig)
		rc = from_signature(g, sig, f, err);
	else if (!rc) {
		ge_tfjs_meta *m = ge_graph_tfjs(g);
		json_t *js = m ? json_object_get(m->top, "signature") : NULL;
		if (signature && !js)
			rc = ge_err(err, GE_ENOTFOUND, "%s: no signature '%s' "
				    "(the model has none)", ge_graph_name(g),
				    signature);
		else if (js && json_object_size(js))
			rc = from_tfjs(g, js, f);
		else
			rc = from_graph(g, f);
	}
	if (rc)
		ge_xiface_free(f);
	else
		mark_defaults(g, f);
	return rc;
}
