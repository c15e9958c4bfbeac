/* sigedit.c: setting, renaming and removing signatures, the TF2 object
 * graph kept in step (see sigedit.h). */
#include "variables/sigedit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "formats/meta.h"
#include "analyses/shapes.h"
#include "base/tensor.h"
#include "variables/tf2.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saved_object_graph.pb-c.h"
#include "tensorflow/core/protobuf/struct.pb-c.h"

#define DEFAULT_METHOD "tensorflow/serving/predict"

typedef Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference
	objref;

/* ------------------------------------------------------------ shapes */

static Tensorflow__TensorShapeProto *shape_of(ge_graph *g, ge_tref t)
{
	int64_t dims[64];
	int r = ge_shapes_best(g, t, dims, 64);
	Tensorflow__TensorShapeProto *s = ge_xmalloc(sizeof *s);
	tensorflow__tensor_shape_proto__init(s);
	if (r < 0 || r > 64) {
		s->unknown_rank = 1;
		return s;
	}
	s->n_dim = (size_t)r;
	s->dim = ge_xmalloc((r ? (size_t)r : 1) * sizeof *s->dim);
	for (int i = 0; i < r; i++) {
		s->dim[i] = ge_xmalloc(sizeof *s->dim[i]);
		tensorflow__tensor_shape_proto__dim__init(s->dim[i]);
		s->dim[i]->size = dims[i] < 0 ? -1 : dims[i];
	}
	return s;
}

static int dtype_of(ge_graph *g, ge_tref t)
{
	int dt = ge_shapes_dtype(g, t);
	if (!dt)
		dt = ge_op_output_dtype(g, t.op, t.index);
	return dt > 0 ? dt : 0;
}

/* ------------------------------------------------------------ checks */

/* Resolves every tensor and checks the keys of one side. */
static int check_side(ge_graph *g, const char *sig, const char *side,
		      const ge_sig_key *k, size_t n, ge_tref *out,
		      ge_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!k[i].key || !*k[i].key)
			return ge_err(err, GE_EINVAL,
				      "signature '%s': empty %s key", sig,
				      side);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(k[i].key, k[j].key))
				return ge_err(err, GE_EINVAL,
					      "signature '%s': duplicate %s "
					      "key '%s'",
					      sig, side, k[i].key);
		ge_error e2 = {0};
		if (!k[i].tensor ||
		    ge_graph_resolve_tensor(g, k[i].tensor, 0, &out[i], &e2) !=
			    GE_OK)
			return ge_err(err, GE_ENOTFOUND,
				      "signature '%s': %s '%s' names no tensor "
				      "'%s'",
				      sig, side, k[i].key,
				      k[i].tensor ? k[i].tensor : "");
	}
	return GE_OK;
}

/* Key order as TensorFlow flattens a dict: sorted. */
static const ge_sig_key *sort_base;
static int by_key(const void *a, const void *b)
{
	return strcmp(sort_base[*(const size_t *)a].key,
		      sort_base[*(const size_t *)b].key);
}
static size_t *sorted(const ge_sig_key *k, size_t n)
{
	size_t *o = ge_xmalloc((n ? n : 1) * sizeof *o);
	for (size_t i = 0; i < n; i++)
		o[i] = i;
	sort_base = k;
	qsort(o, n, sizeof *o, by_key);
	return o;
}

/* ------------------------------------------------------- TF2 objects */

static objref *child(Tensorflow__SavedObject *o, const char *name)
{
	for (size_t i = 0; i < o->n_children; i++)
		if (!strcmp(o->children[i]->local_name, name))
			return o->children[i];
	return NULL;
}

/* The root's `signatures` object, or NULL. */
static Tensorflow__SavedObject *sig_map(Tensorflow__SavedObjectGraph *og)
{
	objref *r = og->n_nodes ? child(og->nodes[0], "signatures") : NULL;
	if (!r || r->node_id < 0 || (size_t)r->node_id >= og->n_nodes)
		return NULL;
	return og->nodes[r->node_id];
}

static Tensorflow__SavedConcreteFunction *
concrete(Tensorflow__SavedObjectGraph *og, const char *name)
{
	for (size_t i = 0; i < og->n_concrete_functions; i++)
		if (!strcmp(og->concrete_functions[i]->key, name))
			return og->concrete_functions[i]->value;
	return NULL;
}

/* What a TF2 set binds: the call and its function. */
struct tf2plan {
	ge_opid call;
	const char *fname;
	Tensorflow__SavedConcreteFunction *cf;
	size_t *in_order, *out_order;
};

static int plan_tf2(ge_graph *g, const char *sig, const ge_sig_spec *s,
		    const ge_tref *in, const ge_tref *out, struct tf2plan *p,
		    ge_error *err)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(g);
	if (!sig_map(og))
		return ge_err(err, GE_EINVAL,
			      "signature '%s': the object graph has no "
			      "'signatures' object", sig);
	if (!s->n_outputs)
		return ge_err(err, GE_EINVAL,
			      "signature '%s': a TF2 signature needs outputs",
			      sig);
	p->call = out[0].op;
	for (size_t i = 1; i < s->n_outputs; i++)
		if (out[i].op != p->call)
			return ge_err(err, GE_EINVAL,
				      "signature '%s': outputs '%s' and '%s' "
				      "come from different ops (TF2: one "
				      "function call)",
				      sig, s->outputs[0].tensor,
				      s->outputs[i].tensor);
	ge_func_call *calls = NULL;
	size_t nc = ge_op_func_calls(g, p->call, &calls);
	p->fname = NULL;
	for (size_t i = 0; i < nc; i++)
		if (calls[i].attr && !strcmp(calls[i].attr, "f"))
			p->fname = calls[i].name;
	free(calls);
	p->cf = p->fname ? concrete(og, p->fname) : NULL;
	if (!p->cf)
		return ge_err(err, GE_EINVAL,
			      "signature '%s': op '%s' is not a call of a "
			      "concrete function of the object graph",
			      sig, ge_op_name(g, p->call));
	size_t nin = ge_op_num_inputs(g, p->call);
	if (nin < p->cf->n_bound_inputs ||
	    nin - p->cf->n_bound_inputs != s->n_inputs)
		return ge_err(err, GE_EINVAL,
			      "signature '%s': call '%s' takes %zu inputs "
			      "besides its captures, the signature gives %zu",
			      sig, ge_op_name(g, p->call),
			      nin - p->cf->n_bound_inputs, s->n_inputs);
	if ((size_t)ge_op_num_outputs(g, p->call) != s->n_outputs)
		return ge_err(err, GE_EINVAL,
			      "signature '%s': call '%s' has %d outputs, the "
			      "signature names %zu",
			      sig, ge_op_name(g, p->call),
			      ge_op_num_outputs(g, p->call), s->n_outputs);
	p->in_order = sorted(s->inputs, s->n_inputs);
	p->out_order = sorted(s->outputs, s->n_outputs);
	for (size_t i = 0; i < s->n_inputs; i++) {
		ge_tref a = ge_op_input(g, p->call, i), b = in[p->in_order[i]];
		if (a.op != b.op || a.index != b.index)
			return ge_err(err, GE_EINVAL,
				      "signature '%s': input '%s' is not input "
				      "%zu of call '%s' (inputs go in key order)",
				      sig, s->inputs[p->in_order[i]].key, i,
				      ge_op_name(g, p->call));
	}
	for (size_t i = 0; i < s->n_outputs; i++)
		if (out[p->out_order[i]].index != (int32_t)i)
			return ge_err(err, GE_EINVAL,
				      "signature '%s': output '%s' is not output "
				      "%zu of call '%s' (outputs go in key order)",
				      sig, s->outputs[p->out_order[i]].key, i,
				      ge_op_name(g, p->call));
	return GE_OK;
}

static Tensorflow__StructuredValue *sv_new(void)
{
	Tensorflow__StructuredValue *v = ge_xmalloc(sizeof *v);
	tensorflow__structured_value__init(v);
	return v;
}

/* {key: TensorSpec(name=key)} over the tensors, keys sorted. */
static Tensorflow__StructuredValue *spec_dict(ge_graph *g,
					      const ge_sig_key *k,
					      const ge_tref *t,
					      const size_t *order, size_t n)
{
	Tensorflow__StructuredValue *v = sv_new();
	v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE;
	v->dict_value = ge_xmalloc(sizeof *v->dict_value);
	tensorflow__dict_value__init(v->dict_value);
	v->dict_value->n_fields = n;
	v->dict_value->fields =
		ge_xmalloc((n ? n : 1) * sizeof *v->dict_value->fields);
	for (size_t i = 0; i < n; i++) {
		size_t j = order[i];
		Tensorflow__DictValue__FieldsEntry *e = ge_xmalloc(sizeof *e);
		tensorflow__dict_value__fields_entry__init(e);
		e->key = ge_xstrdup(k[j].key);
		e->value = sv_new();
		e->value->kind_case =
			TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE;
		Tensorflow__TensorSpecProto *ts = ge_xmalloc(sizeof *ts);
		tensorflow__tensor_spec_proto__init(ts);
		ts->name = ge_xstrdup(k[j].key);
		ts->shape = shape_of(g, t[j]);
		ts->dtype = (Tensorflow__DataType)dtype_of(g, t[j]);
		e->value->tensor_spec_value = ts;
		v->dict_value->fields[i] = e;
	}
	return v;
}

/* ((), {inputs}) as TensorFlow canonicalizes a signature's arguments. */
static Tensorflow__StructuredValue *input_sig(Tensorflow__StructuredValue *d)
{
	Tensorflow__StructuredValue *v = sv_new(), *empty = sv_new();
	empty->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE;
	empty->tuple_value = ge_xmalloc(sizeof *empty->tuple_value);
	tensorflow__tuple_value__init(empty->tuple_value);
	v->kind_case = TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE;
	v->tuple_value = ge_xmalloc(sizeof *v->tuple_value);
	tensorflow__tuple_value__init(v->tuple_value);
	v->tuple_value->n_values = 2;
	v->tuple_value->values = ge_xmalloc(2 * sizeof(void *));
	v->tuple_value->values[0] = empty;
	v->tuple_value->values[1] = d;
	return v;
}

static void *append(void *arr, size_t *n, void *item)
{
	void **a = ge_xrealloc(arr, (*n + 1) * sizeof *a);
	a[(*n)++] = item;
	return a;
}

/* Makes the signature function and binds it under `signatures`. */
static int bind_tf2(ge_graph *g, const char *sig, const ge_sig_spec *s,
		    const ge_tref *in, const ge_tref *out, struct tf2plan *p,
		    ge_error *err)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(g);
	ge_graph *root = ge_graph_root(g);
	char *fname = NULL;
	for (size_t n = ge_func_count(root);; n++) {
		size_t len = strlen(sig) + 64;
		fname = ge_xrealloc(fname, len);
		snprintf(fname, len, "__inference_signature_wrapper_%s_%zu",
			 sig, n);
		if (ge_func_find(root, fname) == GE_NOFUNC)
			break;
	}
	ge_funcid src = ge_func_find(root, p->fname);
	if (src == GE_NOFUNC ||
	    ge_func_copy(root, src, fname, err) == GE_NOFUNC) {
		if (src == GE_NOFUNC)
			ge_err(err, GE_EINVAL,
			       "signature '%s': function '%s' is not in the "
			       "library", sig, p->fname);
		free(fname);
		return err->code ? err->code : GE_EINVAL;
	}
	/* the concrete function: captures as the call's, new structure */
	Tensorflow__SavedConcreteFunction *cf = ge_xmalloc(sizeof *cf);
	tensorflow__saved_concrete_function__init(cf);
	cf->n_bound_inputs = p->cf->n_bound_inputs;
	cf->bound_inputs = ge_xmalloc((cf->n_bound_inputs + 1) *
				      sizeof *cf->bound_inputs);
	memcpy(cf->bound_inputs, p->cf->bound_inputs,
	       cf->n_bound_inputs * sizeof *cf->bound_inputs);
	cf->canonicalized_input_signature = input_sig(
		spec_dict(g, s->inputs, in, p->in_order, s->n_inputs));
	cf->output_signature =
		spec_dict(g, s->outputs, out, p->out_order, s->n_outputs);
	Tensorflow__SavedObjectGraph__ConcreteFunctionsEntry *ce =
		ge_xmalloc(sizeof *ce);
	tensorflow__saved_object_graph__concrete_functions_entry__init(ce);
	ce->key = ge_xstrdup(fname);
	ce->value = cf;
	og->concrete_functions =
		append(og->concrete_functions, &og->n_concrete_functions, ce);
	/* the bare concrete function object */
	Tensorflow__SavedBareConcreteFunction *bf = ge_xmalloc(sizeof *bf);
	tensorflow__saved_bare_concrete_function__init(bf);
	bf->concrete_function_name = fname;
	for (size_t i = 0; i < s->n_inputs; i++)
		bf->argument_keywords =
			append(bf->argument_keywords, &bf->n_argument_keywords,
			       ge_xstrdup(s->inputs[p->in_order[i]].key));
	Tensorflow__SavedObject *o = ge_xmalloc(sizeof *o);
	tensorflow__saved_object__init(o);
	o->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION;
	o->bare_concrete_function = bf;
	int id = (int)og->n_nodes;
	og->nodes = append(og->nodes, &og->n_nodes, o);
	Tensorflow__SavedObject *m = sig_map(og);
	objref *r = child(m, sig);
	if (!r) {
		r = ge_xmalloc(sizeof *r);
		tensorflow__trackable_object_graph__trackable_object__object_reference__init(
			r);
		r->local_name = ge_xstrdup(sig);
		m->children = append(m->children, &m->n_children, r);
	}
	r->node_id = id;
	ge_object_graph_touch(g);
	return GE_OK;
}

/* ------------------------------------------------------ SignatureDef */

static Tensorflow__TensorInfo *tinfo(ge_graph *g, const char *name,
				     ge_tref t)
{
	Tensorflow__TensorInfo *ti = ge_xmalloc(sizeof *ti);
	tensorflow__tensor_info__init(ti);
	ge_buf b = GE_BUF_INIT;
	const char *s = ge_tensor_fmt(g, t, &b);
	ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
	ti->name = ge_xstrdup(s && *s ? s : name);
	ge_buf_free(&b);
	ti->dtype = (Tensorflow__DataType)dtype_of(g, t);
	ti->tensor_shape = shape_of(g, t);
	return ti;
}

static Tensorflow__MetaGraphDef__SignatureDefEntry *
make_entry(ge_graph *g, const char *name, const ge_sig_spec *s,
	   const char *method, const ge_tref *in, const ge_tref *out)
{
	Tensorflow__MetaGraphDef__SignatureDefEntry *e = ge_xmalloc(sizeof *e);
	tensorflow__meta_graph_def__signature_def_entry__init(e);
	e->key = ge_xstrdup(name);
	Tensorflow__SignatureDef *d = ge_xmalloc(sizeof *d);
	tensorflow__signature_def__init(d);
	d->method_name = ge_xstrdup(method);
	d->n_inputs = s->n_inputs;
	d->inputs = ge_xmalloc((s->n_inputs + 1) * sizeof *d->inputs);
	for (size_t i = 0; i < s->n_inputs; i++) {
		Tensorflow__SignatureDef__InputsEntry *x = ge_xmalloc(sizeof *x);
		tensorflow__signature_def__inputs_entry__init(x);
		x->key = ge_xstrdup(s->inputs[i].key);
		x->value = tinfo(g, s->inputs[i].tensor, in[i]);
		d->inputs[i] = x;
	}
	d->n_outputs = s->n_outputs;
	d->outputs = ge_xmalloc((s->n_outputs + 1) * sizeof *d->outputs);
	for (size_t i = 0; i < s->n_outputs; i++) {
		Tensorflow__SignatureDef__OutputsEntry *x =
			ge_xmalloc(sizeof *x);
		tensorflow__signature_def__outputs_entry__init(x);
		x->key = ge_xstrdup(s->outputs[i].key);
		x->value = tinfo(g, s->outputs[i].tensor, out[i]);
		d->outputs[i] = x;
	}
	e->value = d;
	return e;
}

int ge_signature_set(ge_graph *g, const char *name, const ge_sig_spec *s,
		     ge_error *err)
{
	if (!name || !*name)
		return ge_err(err, GE_EINVAL, "signature: empty name");
	ge_tref *in = ge_xmalloc((s->n_inputs + 1) * sizeof *in);
	ge_tref *out = ge_xmalloc((s->n_outputs + 1) * sizeof *out);
	struct tf2plan p = {0};
	int rc = check_side(g, name, "input", s->inputs, s->n_inputs, in, err);
	if (rc == GE_OK)
		rc = check_side(g, name, "output", s->outputs, s->n_outputs,
				out, err);
	int tf2 = rc == GE_OK && ge_is_tf2_savedmodel(g);
	if (tf2)
		rc = plan_tf2(g, name, s, in, out, &p, err);
	if (tf2 && rc == GE_OK)
		rc = bind_tf2(g, name, s, in, out, &p, err);
	if (rc == GE_OK) {
		const Tensorflow__SignatureDef *old = ge_signature_get(g, name);
		const char *method =
			s->method_name ? s->method_name
			: old && old->method_name && *old->method_name
				? old->method_name
				: DEFAULT_METHOD;
		Tensorflow__MetaGraphDef__SignatureDefEntry *e =
			make_entry(g, name, s, method, in, out);
		ge_signature_remove(g, name);
		ge_meta_add(g, GE_META_SIGNATURE, &e->base);
	}
	free(p.in_order);
	free(p.out_order);
	free(in);
	free(out);
	return rc;
}

int ge_signature_drop(ge_graph *g, const char *name, ge_error *err)
{
	if (!ge_signature_get(g, name))
		return ge_err(err, GE_ENOTFOUND, "no signature '%s'", name);
	if (ge_is_tf2_savedmodel(g)) {
		Tensorflow__SavedObject *m = sig_map(ge_object_graph(g));
		for (size_t i = 0; m && i < m->n_children; i++)
			if (!strcmp(m->children[i]->local_name, name)) {
				protobuf_c_message_free_unpacked(
					&m->children[i]->base, NULL);
				memmove(&m->children[i], &m->children[i + 1],
					(m->n_children - i - 1) *
						sizeof *m->children);
				m->n_children--;
				ge_object_graph_touch(g);
				break;
			}
	}
	ge_signature_remove(g, name);
	return GE_OK;
}

int ge_signature_move(ge_graph *g, const char *from, const char *to,
		      ge_error *err)
{
	if (!to || !*to)
		return ge_err(err, GE_EINVAL, "signature '%s': empty new name",
			      from);
	if (!ge_signature_get(g, from))
		return ge_err(err, GE_ENOTFOUND, "no signature '%s'", from);
	if (strcmp(from, to) && ge_signature_get(g, to))
		return ge_err(err, GE_EINVAL,
			      "signature '%s': '%s' is taken", from, to);
	if (!strcmp(from, to))
		return GE_OK;
	if (ge_is_tf2_savedmodel(g)) {
		Tensorflow__SavedObject *m = sig_map(ge_object_graph(g));
		objref *r = m ? child(m, from) : NULL;
		if (r) {
			free(r->local_name);
			r->local_name = ge_xstrdup(to);
			ge_object_graph_touch(g);
		}
	}
	return ge_signature_rename(g, from, to);
}

int ge_signature_rename_key(ge_graph *g, const char *name, int is_output,
			    const char *from, const char *to, ge_error *err)
{
	const Tensorflow__SignatureDef *d = ge_signature_get(g, name);
	if (!d)
		return ge_err(err, GE_ENOTFOUND, "no signature '%s'", name);
	size_t ni = d->n_inputs, no = d->n_outputs, hit = 0;
	ge_sig_key *k = ge_xmalloc((ni + no + 1) * sizeof *k);
	for (size_t i = 0; i < ni + no; i++) {
		int o = i >= ni;
		const char *key = o ? d->outputs[i - ni]->key : d->inputs[i]->key;
		const Tensorflow__TensorInfo *t =
			o ? d->outputs[i - ni]->value : d->inputs[i]->value;
		k[i].key = key;
		k[i].tensor = t && t->encoding_case ==
				 TENSORFLOW__TENSOR_INFO__ENCODING_NAME
			? t->name
			: NULL;
		if (o == !!is_output && !strcmp(key, from)) {
			k[i].key = to;
			hit = 1;
		}
	}
	int rc;
	if (!hit) {
		rc = ge_err(err, GE_ENOTFOUND, "signature '%s': no %s key '%s'",
			    name, is_output ? "output" : "input", from);
	} else {
		/* copies: the set replaces the SignatureDef they point into */
		char **own = ge_xmalloc((2 * (ni + no) + 1) * sizeof *own);
		for (size_t i = 0; i < ni + no; i++) {
			own[2 * i] = ge_xstrdup(k[i].key);
			own[2 * i + 1] = k[i].tensor ? ge_xstrdup(k[i].tensor)
						     : NULL;
			k[i].key = own[2 * i];
			k[i].tensor = own[2 * i + 1];
		}
		char *method = ge_xstrdup(d->method_name ? d->method_name : "");
		ge_sig_spec s = {k, ni, k + ni, no, *method ? method : NULL};
		rc = ge_signature_set(g, name, &s, err);
		for (size_t i = 0; i < 2 * (ni + no); i++)
			free(own[i]);
		free(own);
		free(method);
	}
	free(k);
	return rc;
}
