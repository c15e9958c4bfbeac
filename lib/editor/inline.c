/* inline.c: function calls replaced by their bodies (see inline.h). */
#include "editor/inline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "formats/meta.h"
#include "editor/provenance.h"
#include "editor/select.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saver.pb-c.h"

int ge_is_call_op_type(const char *type)
{
	return !strcmp(type, "PartitionedCall") ||
	       !strcmp(type, "StatefulPartitionedCall");
}

/* What one inlining needs to know of the body, all checked first. */
struct site {
	ge_graph *g;
	ge_opid call;
	const ge_graph *body;
	const char *gname, *fname;
	size_t nbody;
	int *arg_of;        /* body op -> arg index, -1 */
	ge_tref *ret;       /* retval index -> what it reads (body tref) */
	size_t nargs, nrets;
	ge_opid *map;       /* body op -> copy, GE_NOOP for _Arg/_Retval */
};

static int bad(struct site *s, ge_error *err, const char *what, ...)
	GE_PRINTF(3, 4);
static int bad(struct site *s, ge_error *err, const char *what, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, what);
	vsnprintf(msg, sizeof msg, what, ap);
	va_end(ap);
	return ge_err(err, GE_EGRAPH, "%s: op '%s' (function '%s'): %s",
		      s->gname, ge_op_name(s->g, s->call), s->fname, msg);
}

static int op_index(const ge_graph *b, ge_opid id, int64_t *out)
{
	return ge_op_attr_int(b, id, "index", out);
}

/* Finds the _Arg and _Retval ops and checks them against the call. */
static int scan_body(struct site *s, ge_error *err)
{
	const ge_graph *b = s->body;
	size_t ni = ge_op_num_inputs(s->g, s->call);
	int nout = ge_op_num_outputs(s->g, s->call);
	size_t nrets = 0;
	s->nbody = ge_graph_capacity(b);
	s->arg_of = ge_xmalloc((s->nbody ? s->nbody : 1) * sizeof *s->arg_of);
	size_t nargs = 0;
	for (size_t id = 0; id < s->nbody; id++)
		nargs += ge_op_alive(b, (ge_opid)id) &&
			 !strcmp(ge_op_type(b, (ge_opid)id), "_Arg");
	if (nargs != ni)
		return bad(s, err, "the call gives %zu inputs, the function "
			   "takes %zu", ni, nargs);
	for (size_t id = 0; id < s->nbody; id++) {
		s->arg_of[id] = -1;
		if (!ge_op_alive(b, (ge_opid)id))
			continue;
		const char *t = ge_op_type(b, (ge_opid)id);
		int is_arg = !strcmp(t, "_Arg"), is_ret = !strcmp(t, "_Retval");
		if (!is_arg && !is_ret)
			continue;
		int64_t k;
		if (op_index(b, (ge_opid)id, &k) || k < 0 || k >= (1 << 24))
			return bad(s, err, "%s '%s' has no valid index", t,
				   ge_op_name(b, (ge_opid)id));
		if (is_arg) {
			if ((size_t)k >= ni)
				return bad(s, err, "the body reads argument "
					   "%lld ('%s') but the call has %zu "
					   "inputs", (long long)k,
					   ge_op_name(b, (ge_opid)id), ni);
			s->arg_of[id] = (int)k;
			s->nargs++;
		} else {
			nrets = (size_t)k + 1 > nrets ? (size_t)k + 1 : nrets;
		}
	}
	if (s->nargs != ni) /* two _Args of one index */
		return bad(s, err, "the function's %zu arguments do not have "
			   "the indices 0..%zu", s->nargs, s->nargs - 1);
	if (nout >= 0 && nrets != (size_t)nout)
		return bad(s, err, "the call has %d outputs, the function "
			   "returns %zu", nout, nrets);
	s->nrets = nrets;
	s->ret = ge_xmalloc((nrets ? nrets : 1) * sizeof *s->ret);
	for (size_t i = 0; i < nrets; i++)
		s->ret[i].op = GE_NOOP;
	for (size_t id = 0; id < s->nbody; id++) {
		if (!ge_op_alive(b, (ge_opid)id) ||
		    strcmp(ge_op_type(b, (ge_opid)id), "_Retval"))
			continue;
		int64_t k;
		op_index(b, (ge_opid)id, &k);
		if (s->ret[k].op != GE_NOOP)
			return bad(s, err, "two _Retval ops have index %lld",
				   (long long)k);
		if (ge_op_num_inputs(b, (ge_opid)id) != 1 ||
		    ge_op_input(b, (ge_opid)id, 0).op == GE_NOOP)
			return bad(s, err, "_Retval '%s' reads nothing",
				   ge_op_name(b, (ge_opid)id));
		s->ret[k] = ge_op_input(b, (ge_opid)id, 0);
	}
	for (size_t i = 0; i < nrets; i++)
		if (s->ret[i].op == GE_NOOP)
			return bad(s, err, "no _Retval has index %zu", i);
	size_t nu;
	const ge_use *u = ge_op_uses(s->g, s->call, &nu);
	for (size_t i = 0; i < nu; i++) {
		ge_tref t = ge_op_input(s->g, u[i].op, u[i].slot);
		if (t.index < 0 || (size_t)t.index >= nrets)
			return bad(s, err, "op '%s' reads output %d, the "
				   "function returns %zu",
				   ge_op_name(s->g, u[i].op), t.index, nrets);
	}
	/* a generic function (attrs that name the function's own attrs, as
	 * `placeholder: "T"`) must be instantiated first */
	for (size_t id = 0; id < s->nbody; id++) {
		if (!ge_op_alive(b, (ge_opid)id))
			continue;
		size_t na = ge_op_num_attrs(b, (ge_opid)id);
		for (size_t a = 0; a < na; a++) {
			const char *an = ge_op_attr_name(b, (ge_opid)id, a);
			size_t len;
			const uint8_t *raw = ge_op_attr_raw(b, (ge_opid)id, an,
							    &len);
			if (raw && len && raw[0] == GE_TAG_LEN(GE_ATTR_PLACEHOLDER))
				return bad(s, err, "attr '%s' of op '%s' is a "
					   "placeholder of the function's attrs "
					   "(a generic function cannot be "
					   "inlined)", an,
					   ge_op_name(b, (ge_opid)id));
		}
	}
	/* every edge of the body must lead somewhere */
	for (size_t id = 0; id < s->nbody; id++) {
		if (!ge_op_alive(b, (ge_opid)id))
			continue;
		size_t n = ge_op_num_inputs(b, (ge_opid)id) +
			   ge_op_num_control_inputs(b, (ge_opid)id);
		for (size_t i = 0; i < n; i++) {
			const char *d = ge_op_dangling_input(b, (ge_opid)id, i);
			if (d)
				return bad(s, err, "op '%s' of the body reads "
					   "'%s', which does not exist",
					   ge_op_name(b, (ge_opid)id), d);
			ge_opid p = i < ge_op_num_inputs(b, (ge_opid)id)
					    ? ge_op_input(b, (ge_opid)id, i).op
					    : ge_op_control_input(
						      b, (ge_opid)id,
						      i - ge_op_num_inputs(
								  b, (ge_opid)id));
			if (!strcmp(ge_op_type(b, p), "_Retval"))
				return bad(s, err, "op '%s' of the body reads "
					   "_Retval '%s'",
					   ge_op_name(b, (ge_opid)id),
					   ge_op_name(b, p));
		}
	}
	return GE_OK;
}

/* Everything ge_inline_body checks before it changes anything. */
static int check_site(struct site *s, ge_error *err)
{
	if (s->body == s->g)
		return bad(s, err, "a function cannot be inlined into itself");
	size_t ni = ge_op_num_inputs(s->g, s->call);
	for (size_t i = 0; i < ni; i++)
		if (ge_op_input(s->g, s->call, i).op == GE_NOOP)
			return bad(s, err, "input %zu ('%s') does not exist",
				   i, ge_op_dangling_input(s->g, s->call, i));
	return scan_body(s, err);
}

/* Rewrites `loc:@X` entries naming ops of the body to their copies. */
static void fix_colocation(struct site *s, ge_opid copy)
{
	const Tensorflow__AttrValue *v = ge_op_attr(s->g, copy, "_class", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list || !v->list->n_s)
		return;
	ge_buf list = GE_BUF_INIT, out = GE_BUF_INIT;
	int changed = 0;
	for (size_t i = 0; i < v->list->n_s; i++) {
		const ProtobufCBinaryData *e = &v->list->s[i];
		ge_opid b = GE_NOOP;
		if (e->len > 5 && !memcmp(e->data, "loc:@", 5)) {
			char *name = ge_xstrndup((const char *)e->data + 5,
						 e->len - 5);
			b = ge_graph_find(s->body, name);
			free(name);
		}
		if (b != GE_NOOP && s->map[b] != GE_NOOP) {
			const char *nn = ge_op_name(s->g, s->map[b]);
			ge_buf e2 = GE_BUF_INIT;
			ge_buf_adds(&e2, "loc:@");
			ge_buf_adds(&e2, nn);
			ge_buf_lenfield(&list, 2, e2.data, e2.len);
			ge_buf_free(&e2);
			changed = 1;
		} else {
			ge_buf_lenfield(&list, 2, e->data, e->len);
		}
	}
	if (changed) {
		ge_buf_lenfield(&out, 1, list.data, list.len);
		ge_op_set_attr_raw(s->g, copy, "_class", out.data, out.len);
	}
	ge_buf_free(&list);
	ge_buf_free(&out);
}

/* The op of g that body op p stands for: its copy, or what the call
 * reads in the place of an _Arg. */
static ge_tref outer(const struct site *s, ge_tref t)
{
	if (s->arg_of[t.op] >= 0) {
		ge_tref in = ge_op_input(s->g, s->call, (size_t)s->arg_of[t.op]);
		if (t.index == GE_CONTROL)
			in.index = GE_CONTROL;
		return in;
	}
	ge_tref r = {s->map[t.op], t.index};
	return r;
}

static void add_control(ge_graph *g, ge_opid to, ge_opid c)
{
	size_t n = ge_op_num_control_inputs(g, to);
	for (size_t i = 0; i < n; i++)
		if (ge_op_control_input(g, to, i) == c)
			return;
	ge_op_add_control_input(g, to, c, NULL);
}

/* The v1 control-flow frames of a body are named per call, as
 * TensorFlow's inliner does, so that two inlined copies of one loop are
 * two frames: frame_name F of an Enter becomes `<call>/F`. */
static void uniquify_frame(struct site *s, ge_opid copy)
{
	const char *t = ge_op_type(s->g, copy);
	const char *f;
	size_t n;
	if ((strcmp(t, "Enter") && strcmp(t, "RefEnter")) ||
	    ge_op_attr_string(s->g, copy, "frame_name", &f, &n))
		return;
	ge_buf name = GE_BUF_INIT, a = GE_BUF_INIT;
	ge_buf_printf(&name, "%s/", ge_op_name(s->g, s->call));
	ge_buf_add(&name, f, n);
	ge_buf_lenfield(&a, 2, name.data, name.len); /* AttrValue.s */
	ge_op_set_attr_raw(s->g, copy, "frame_name", a.data, a.len);
	ge_buf_free(&name);
	ge_buf_free(&a);
}

/* The provenance of an inlined op (TensorFlow's inliner): what the call
 * brings (cn, cf), what body op id brings (its origins, or its name in
 * the body) and the function's name. */
static void inlined_origins(struct site *s, ge_opid id, ge_opid c,
			    const ge_strvec *cn, const ge_strvec *cf)
{
	ge_strvec n = GE_VEC_INIT, f = GE_VEC_INIT;
	for (size_t i = 0; i < cn->n; i++)
		ge_strvec_push(&n, cn->v[i]);
	for (size_t i = 0; i < cf->n; i++)
		ge_strvec_push(&f, cf->v[i]);
	if (ge_op_origins_of(s->body, id, &n, &f, NULL))
		ge_strvec_push(&n, ge_op_name(s->body, id));
	ge_strvec_push(&f, s->fname);
	if (!ge_op_add_origins(s->g, c, n.v, n.n, f.v, f.n, NULL))
		ge_prov_note(s->g, c, "inline");
	ge_strvec_free(&n);
	ge_strvec_free(&f);
}

/* Copies the body's ops and their edges. */
static void copy_ops(struct site *s)
{
	const ge_graph *b = s->body;
	ge_graph *g = s->g;
	const char *cname = ge_op_name(g, s->call);
	const char *cdev = ge_op_device(g, s->call);
	ge_buf nb = GE_BUF_INIT;
	/* a call whose provenance does not decode brings its name */
	ge_strvec cn = GE_VEC_INIT, cf = GE_VEC_INIT;
	if (ge_op_origins_of(g, s->call, &cn, &cf, NULL)) {
		cn.n = cf.n = 0;
		ge_strvec_push(&cn, cname);
	}
	for (size_t id = 0; id < s->nbody; id++) {
		s->map[id] = GE_NOOP;
		if (!ge_op_alive(b, (ge_opid)id) || s->arg_of[id] >= 0 ||
		    !strcmp(ge_op_type(b, (ge_opid)id), "_Retval"))
			continue;
		nb.len = 0;
		ge_buf_printf(&nb, "%s/%s", cname, ge_op_name(b, (ge_opid)id));
		const char *name = ge_graph_unique_name(g, (const char *)nb.data);
		ge_opid c = ge_graph_add_op(g, name, ge_op_type(b, (ge_opid)id),
					    NULL);
		s->map[id] = c;
		const char *dev = ge_op_device(b, (ge_opid)id);
		if (*dev || *cdev)
			ge_op_set_device(g, c, *dev ? dev : cdev);
		size_t na = ge_op_num_attrs(b, (ge_opid)id);
		for (size_t a = 0; a < na; a++) {
			const char *an = ge_op_attr_name(b, (ge_opid)id, a);
			size_t len;
			const uint8_t *raw = ge_op_attr_raw(b, (ge_opid)id, an,
							    &len);
			if (raw)
				ge_op_set_attr_raw(g, c, an, raw, len);
		}
		inlined_origins(s, (ge_opid)id, c, &cn, &cf);
	}
	ge_buf_free(&nb);
	ge_strvec_free(&cn);
	ge_strvec_free(&cf);
	for (size_t id = 0; id < s->nbody; id++) {
		ge_opid c = s->map[id];
		if (c == GE_NOOP)
			continue;
		size_t ni = ge_op_num_inputs(b, (ge_opid)id);
		for (size_t i = 0; i < ni; i++)
			ge_op_add_input(g, c, outer(s, ge_op_input(b, (ge_opid)id, i)),
					NULL);
		size_t nc = ge_op_num_control_inputs(b, (ge_opid)id);
		for (size_t i = 0; i < nc; i++) {
			ge_tref t = {ge_op_control_input(b, (ge_opid)id, i),
				     GE_CONTROL};
			ge_tref o = outer(s, t);
			if (o.op != GE_NOOP)
				add_control(g, c, o.op);
		}
		fix_colocation(s, c);
		uniquify_frame(s, c);
	}
}

/* Whether body op id reads another op of the body that is copied. */
static int reads_body(const struct site *s, ge_opid id)
{
	const ge_graph *b = s->body;
	size_t ni = ge_op_num_inputs(b, id), nc = ge_op_num_control_inputs(b, id);
	for (size_t i = 0; i < ni; i++)
		if (s->arg_of[ge_op_input(b, id, i).op] < 0)
			return 1;
	for (size_t i = 0; i < nc; i++)
		if (s->arg_of[ge_op_control_input(b, id, i)] < 0)
			return 1;
	return 0;
}

/* Whether op w has a data input from op p (then a control input from p
 * would say nothing more). */
static int reads_data(const ge_graph *g, ge_opid w, ge_opid p)
{
	size_t n = ge_op_num_inputs(g, w);
	for (size_t i = 0; i < n; i++)
		if (ge_op_input(g, w, i).op == p)
			return 1;
	return 0;
}

/* A reference to the call in the graph's container ("call:k", or "call"
 * for the op) names what replaces it: the tensor the body returns as
 * output k, or for the op the producer of output 0.  Returns 1 if it
 * changed *slot. */
static int retarget(struct site *s, char **slot)
{
	ge_tref t;
	if (!*slot || ge_graph_find_tensor(s->g, *slot, &t) != GE_OK ||
	    t.op != s->call)
		return 0;
	int k = t.index == GE_CONTROL ? 0 : t.index;
	if (k < 0 || (size_t)k >= s->nrets)
		return 0;
	ge_tref o = outer(s, s->ret[k]);
	if (o.op == GE_NOOP)
		return 0;
	ge_buf b = GE_BUF_INIT;
	if (strchr(*slot, ':'))
		ge_buf_printf(&b, "%s:%d", ge_op_name(s->g, o.op), o.index);
	else
		ge_buf_adds(&b, ge_op_name(s->g, o.op));
	free(*slot);
	size_t len;
	*slot = (char *)ge_buf_steal(&b, &len);
	return 1;
}

/* Signatures and the saver keep naming tensors that exist. */
static void retarget_meta(struct site *s)
{
	ge_graph *g = s->g;
	if (!ge_graph_has_meta(g))
		return;
	size_t ns = ge_signature_count(g);
	for (size_t i = 0; i < ns; i++) {
		const char *name = ge_signature_name(g, i);
		Tensorflow__SignatureDef *sd = ge_signature_get(g, name);
		int changed = 0;
		for (size_t k = 0; sd && k < sd->n_inputs + sd->n_outputs; k++) {
			Tensorflow__TensorInfo *ti =
				k < sd->n_inputs
					? sd->inputs[k]->value
					: sd->outputs[k - sd->n_inputs]->value;
			if (ti && ti->encoding_case ==
					  TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
				changed |= retarget(s, &ti->name);
		}
		if (changed)
			ge_signature_touch(g, name);
	}
	Tensorflow__SaverDef *sv = ge_saver_def(g);
	if (sv && (retarget(s, &sv->save_tensor_name) |
		   retarget(s, &sv->restore_op_name) |
		   retarget(s, &sv->filename_tensor_name)))
		ge_saver_def_touch(g);
}

/* The op that takes the name of a call nobody read, so that what
 * fetched or ran the call by name still can (TensorFlow's inliner keeps
 * the caller "fetchable" so for the ops it is asked to fetch; a model
 * file does not say what its users fetch, and an unread op is what they
 * may): an Identity of the body's result, an IdentityN of its results,
 * or for a call without outputs a NoOp waiting for the ops in `done`.
 * Its device is the call's, its provenance the call's and the function's;
 * the call is gone, its name free. */
struct keep {
	char *name, *device;
	int nout;
	int *dtype;
	ge_strvec cn, cf;
};

static void keep_take(struct site *s, struct keep *k)
{
	ge_graph *g = s->g;
	k->name = ge_xstrdup(ge_op_name(g, s->call));
	k->device = ge_xstrdup(ge_op_device(g, s->call));
	/* scan_body made the call's outputs, when known, the body's */
	k->nout = (int)s->nrets;
	k->dtype = ge_xmalloc(((size_t)k->nout + 1) * sizeof *k->dtype);
	for (int i = 0; i < k->nout; i++)
		k->dtype[i] = ge_op_output_dtype(g, s->call, i);
	k->cn = (ge_strvec)GE_VEC_INIT;
	k->cf = (ge_strvec)GE_VEC_INIT;
	if (ge_op_origins_of(g, s->call, &k->cn, &k->cf, NULL)) {
		k->cn.n = k->cf.n = 0;
		ge_strvec_push(&k->cn, k->name);
	}
	ge_strvec_push(&k->cf, s->fname);
}

static int keep_make(struct site *s, struct keep *k, const ge_opvec *done,
		     ge_error *err)
{
	ge_graph *g = s->g;
	const char *type = k->nout == 0 ? "NoOp"
			   : k->nout == 1 ? "Identity" : "IdentityN";
	ge_opid id = ge_graph_add_op(g, k->name, type, err);
	if (id == GE_NOOP)
		return err ? err->code : GE_EGRAPH;
	int rc = GE_OK;
	ge_buf types = GE_BUF_INIT, a = GE_BUF_INIT, lst = GE_BUF_INIT;
	for (int i = 0; i < k->nout && !rc; i++) {
		rc = ge_op_add_input(g, id, outer(s, s->ret[i]), err);
		ge_buf_varint(&types, (uint64_t)k->dtype[i]);
	}
	if (k->nout == 1) {
		ge_buf_addc(&a, GE_TAG(GE_ATTR_TYPE, GE_WT_VARINT));
		ge_buf_varint(&a, (uint64_t)k->dtype[0]);
	} else if (k->nout > 1) {
		ge_buf_lenfield(&lst, GE_ATTRLIST_TYPE, types.data, types.len);
		ge_buf_lenfield(&a, GE_ATTR_LIST, lst.data, lst.len);
	}
	if (a.len)
		ge_op_set_attr_raw(g, id, "T", a.data, a.len);
	for (size_t i = 0; k->nout == 0 && i < done->n; i++)
		add_control(g, id, done->v[i]);
	if (*k->device)
		ge_op_set_device(g, id, k->device);
	if (!ge_op_add_origins(g, id, k->cn.v, k->cn.n, k->cf.v, k->cf.n,
			       NULL))
		ge_prov_note(g, id, "inline");
	ge_buf_free(&types);
	ge_buf_free(&lst);
	ge_buf_free(&a);
	return rc;
}

static void keep_free(struct keep *k)
{
	free(k->name);
	free(k->device);
	free(k->dtype);
	ge_strvec_free(&k->cn);
	ge_strvec_free(&k->cf);
}

/* Moves the call's consumers to the body's copies and removes the call
 * (an unread call leaves its name to the op of keep_make). */
static int reroute_out(struct site *s, const ge_opid *cret, size_t ncret,
		       ge_error *err)
{
	ge_graph *g = s->g;
	size_t nu;
	const ge_use *u = ge_op_uses(g, s->call, &nu);
	ge_input_edit *ed = ge_xmalloc((nu ? nu : 1) * sizeof *ed);
	for (size_t i = 0; i < nu; i++) {
		ge_tref t = ge_op_input(g, u[i].op, u[i].slot);
		ed[i].op = u[i].op;
		ed[i].slot = u[i].slot;
		ed[i].t = outer(s, s->ret[t.index]);
	}
	int rc = ge_graph_set_inputs(g, ed, nu, err);
	free(ed);
	if (rc)
		return rc;
	size_t ncc;
	const ge_opid *cc = ge_op_control_outputs(g, s->call, &ncc);
	ge_opvec waiters = GE_VEC_INIT, done = GE_VEC_INIT;
	for (size_t i = 0; i < ncc; i++)
		ge_opvec_push(&waiters, cc[i]);
	for (size_t i = 0; i < ncret; i++)
		if (cret[i] < s->nbody && s->map[cret[i]] != GE_NOOP)
			ge_opvec_push(&done, s->map[cret[i]]);
	for (size_t i = 0; i < s->nrets; i++) {
		ge_tref o = outer(s, s->ret[i]);
		if (o.op != GE_NOOP)
			ge_opvec_push(&done, o.op);
	}
	for (size_t i = 0; i < waiters.n; i++) {
		ge_opid w = waiters.v[i];
		ge_op_remove_control_input(g, w, s->call, NULL);
		for (size_t k = 0; k < done.n; k++)
			if (!reads_data(g, w, done.v[k]))
				add_control(g, w, done.v[k]);
	}
	ge_opvec_free(&waiters);
	if (nu || ncc) {
		ge_opvec_free(&done);
		retarget_meta(s);
		return ge_graph_remove_op(g, s->call, 0, err);
	}
	/* what named the call (a signature, the saver, control_ret) still
	 * finds it by its name */
	struct keep k;
	keep_take(s, &k);
	rc = ge_graph_remove_op(g, s->call, 0, err);
	if (!rc)
		rc = keep_make(s, &k, &done, err);
	keep_free(&k);
	ge_opvec_free(&done);
	return rc;
}

int ge_inline_body(ge_graph *g, ge_opid call, const ge_graph *body,
		   const char *fname, const ge_opid *control_ret,
		   size_t n_control_ret, ge_opvec *added, ge_error *err)
{
	struct site s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.call = call;
	s.body = body;
	s.fname = fname ? fname : "?";
	s.gname = *ge_graph_name(g) ? ge_graph_name(g) : "graph";
	if (call == GE_NOOP || !ge_op_alive(g, call))
		return ge_err(err, GE_EINVAL, "%s: inline: not an op of the "
			      "graph", s.gname);
	int rc = check_site(&s, err);
	if (rc)
		goto out;
	s.map = ge_xmalloc((s.nbody ? s.nbody : 1) * sizeof *s.map);
	copy_ops(&s);
	size_t nc = ge_op_num_control_inputs(g, call);
	for (size_t id = 0; nc && id < s.nbody; id++) {
		if (s.map[id] == GE_NOOP || reads_body(&s, (ge_opid)id))
			continue;
		for (size_t i = 0; i < nc; i++)
			add_control(g, s.map[id], ge_op_control_input(g, call, i));
	}
	rc = reroute_out(&s, control_ret, n_control_ret, err);
	if (!rc && added)
		for (size_t id = 0; id < s.nbody; id++)
			if (s.map[id] != GE_NOOP)
				ge_opvec_push(added, s.map[id]);
out:
	free(s.arg_of);
	free(s.ret);
	free(s.map);
	return rc;
}


/* ------------------------------------------------------------ by name */

/* The function op id of g calls, or NULL when it is no call. */
static const char *callee(ge_graph *g, ge_opid id)
{
	const char *t = ge_op_type(g, id);
	if (ge_is_call_op_type(t)) {
		const Tensorflow__AttrValue *f = ge_op_attr(g, id, "f", NULL);
		if (f && f->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC &&
		    f->func)
			return f->func->name;
		return "";
	}
	if (ge_func_find(ge_graph_root(g), t) != GE_NOFUNC)
		return t;
	return NULL;
}

int ge_op_is_call(ge_graph *g, ge_opid id)
{
	const char *name = callee(g, id);
	return name && *name;
}

static const char *gname_of(const ge_graph *g)
{
	return *ge_graph_name(g) ? ge_graph_name(g) : "graph";
}

/* Where a message says an op is: "op 'x'" or "op 'x' of function 'f'". */
static void where(ge_buf *b, ge_graph *g, ge_opid id)
{
	ge_funcid f = ge_graph_func(g);
	ge_buf_printf(b, "op '%s'", ge_op_name(g, id));
	if (f != GE_NOFUNC)
		ge_buf_printf(b, " of function '%s'",
			      ge_func_name(ge_graph_root(g), f));
}

enum { WHITE = 0, GREY, BLACK };

struct check {
	ge_graph *root;
	int recursive;
	unsigned char *color;    /* by function id */
	const char **chain;      /* functions being checked, outermost first */
	size_t depth, cap;
};

static int check_fn(struct check *c, ge_funcid f, ge_error *err);

/* Checks the call at op id of g (a graph or a body). */
static int check_call(struct check *c, ge_graph *g, ge_opid id,
		      ge_error *err)
{
	const char *name = callee(g, id);
	if (!name)
		return GE_OK;
	ge_funcid f = *name ? ge_func_find(c->root, name) : GE_NOFUNC;
	if (f == GE_NOFUNC) {
		ge_buf b = GE_BUF_INIT;
		where(&b, g, id);
		int rc = ge_err(err, GE_EGRAPH, "%s: %s calls '%s', which is "
				"not in the function library", gname_of(c->root),
				(const char *)b.data, name);
		ge_buf_free(&b);
		return rc;
	}
	if (c->color[f] == GREY) {
		ge_buf b = GE_BUF_INIT;
		size_t k = 0;
		while (k < c->depth && strcmp(c->chain[k], name))
			k++;
		for (; k < c->depth; k++)
			ge_buf_printf(&b, "%s -> ", c->chain[k]);
		ge_buf_adds(&b, name);
		ge_buf w = GE_BUF_INIT;
		where(&w, g, id);
		int rc = ge_err(err, GE_EGRAPH, "%s: function '%s' calls "
				"itself (%s), at %s", gname_of(c->root), name,
				(const char *)b.data, (const char *)w.data);
		ge_buf_free(&b);
		ge_buf_free(&w);
		return rc;
	}
	/* the call against its body, as inlining it will check it */
	ge_graph *body = ge_func_body(c->root, f, err);
	if (!body)
		return err ? err->code : GE_EFORMAT;
	struct site st;
	memset(&st, 0, sizeof st);
	st.g = g;
	st.call = id;
	st.body = body;
	st.fname = ge_func_name(c->root, f);
	st.gname = gname_of(g);
	int rc = check_site(&st, err);
	free(st.arg_of);
	free(st.ret);
	if (rc || c->color[f] == BLACK || !c->recursive)
		return rc;
	return check_fn(c, f, err);
}

static int check_fn(struct check *c, ge_funcid f, ge_error *err)
{
	if (c->depth >= 1000)
		return ge_err(err, GE_EGRAPH, "%s: calls nested deeper than "
			      "1000 functions, at '%s'", gname_of(c->root),
			      ge_func_name(c->root, f));
	ge_graph *body = ge_func_body(c->root, f, err);
	if (!body)
		return err ? err->code : GE_EFORMAT;
	c->color[f] = GREY;
	if (c->depth == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->chain = ge_xrealloc(c->chain, c->cap * sizeof *c->chain);
	}
	c->chain[c->depth++] = ge_func_name(c->root, f);
	size_t cap = ge_graph_capacity(body);
	int rc = GE_OK;
	for (size_t id = 0; id < cap && !rc; id++)
		if (ge_op_alive(body, (ge_opid)id))
			rc = check_call(c, body, (ge_opid)id, err);
	c->depth--;
	if (!rc)
		c->color[f] = BLACK;
	return rc;
}

/* Checks the calls ops[0..n) of g and, with recursive, every call they
 * lead to. */
static int check_calls(ge_graph *g, const ge_opid *ops, size_t n,
		       int recursive, ge_error *err)
{
	struct check c;
	memset(&c, 0, sizeof c);
	c.root = ge_graph_root(g);
	int rc = ge_flib_load(c.root, err);
	if (rc)
		return rc;
	size_t nf = ge_func_capacity(c.root);
	c.color = ge_xcalloc(nf ? nf : 1, 1);
	ge_funcid self = ge_graph_func(g);
	if (self != GE_NOFUNC) {
		c.color[self] = GREY;
		c.cap = 16;
		c.chain = ge_xmalloc(c.cap * sizeof *c.chain);
		c.chain[c.depth++] = ge_func_name(c.root, self);
	}
	c.recursive = recursive;
	for (size_t i = 0; i < n && !rc; i++)
		rc = check_call(&c, g, ops[i], err);
	free(c.color);
	free(c.chain);
	return rc;
}

/* The control_ret ops of function f, by the names its FunctionDef maps
 * them to (a map<string, string>, field 6: entries key 1, value 2). */
static void control_rets(ge_graph *root, ge_funcid f, const ge_graph *body,
			 ge_opvec *out)
{
	ge_buf fd = GE_BUF_INIT;
	ge_func_encode(root, f, &fd);
	const uint8_t *p = fd.data, *end = fd.data + fd.len, *v;
	const char *k;
	size_t kl, vl;
	while (ge_wire_map_next(&p, end, GE_FUNCDEF_CONTROL_RET, &k, &kl, &v,
				&vl)) {
		char *name = ge_xstrndup((const char *)v, vl);
		ge_opid id = ge_graph_find(body, name);
		if (id != GE_NOOP)
			ge_opvec_push(out, id);
		free(name);
	}
	ge_buf_free(&fd);
}

static int inline_rec(ge_graph *g, ge_opid call, int recursive,
		      ge_opvec *added, size_t *count, ge_error *err)
{
	ge_graph *root = ge_graph_root(g);
	const char *name = callee(g, call);
	ge_funcid f = name && *name ? ge_func_find(root, name) : GE_NOFUNC;
	if (f == GE_NOFUNC)
		return ge_err(err, GE_EINVAL, "%s: op '%s' is not a call of "
			      "a function of the library", gname_of(g),
			      ge_op_name(g, call));
	ge_graph *body = ge_func_body(root, f, err);
	if (!body)
		return err ? err->code : GE_EFORMAT;
	ge_opvec cret = GE_VEC_INIT, mine = GE_VEC_INIT;
	control_rets(root, f, body, &cret);
	int rc = ge_inline_body(g, call, body, ge_func_name(root, f), cret.v,
				cret.n, &mine, err);
	ge_opvec_free(&cret);
	if (!rc && count)
		(*count)++;
	for (size_t i = 0; i < mine.n && !rc; i++) {
		ge_opid id = mine.v[i];
		if (recursive && ge_op_alive(g, id) && callee(g, id))
			rc = inline_rec(g, id, 1, added, count, err);
		else if (added)
			ge_opvec_push(added, id);
	}
	ge_opvec_free(&mine);
	return rc;
}

int ge_inline(ge_graph *g, ge_opid call, int recursive, ge_opvec *added,
	      ge_error *err)
{
	if (call == GE_NOOP || !ge_op_alive(g, call))
		return ge_err(err, GE_EINVAL, "%s: inline: not an op of the "
			      "graph", gname_of(g));
	int rc = check_calls(g, &call, 1, recursive, err);
	if (rc)
		return rc;
	return inline_rec(g, call, recursive, added, NULL, err);
}

int ge_inline_all(ge_graph *g, size_t *n, ge_error *err)
{
	if (n)
		*n = 0;
	int rc = ge_flib_load(ge_graph_root(g), err);
	if (rc)
		return rc;
	ge_opvec calls = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id) && callee(g, (ge_opid)id))
			ge_opvec_push(&calls, (ge_opid)id);
	rc = check_calls(g, calls.v, calls.n, 1, err);
	for (size_t i = 0; i < calls.n && !rc; i++)
		if (ge_op_alive(g, calls.v[i]))
			rc = inline_rec(g, calls.v[i], 1, NULL, n, err);
	ge_opvec_free(&calls);
	return rc;
}
