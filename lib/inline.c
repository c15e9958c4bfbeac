/* inline.c: function calls replaced by their bodies (see inline.h). */
#include "inline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

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
	if (s->nargs != ni)
		return bad(s, err, "the call gives %zu inputs, the function "
			   "takes %zu", ni, s->nargs);
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

/* Copies the body's ops and their edges. */
static void copy_ops(struct site *s)
{
	const ge_graph *b = s->body;
	ge_graph *g = s->g;
	const char *cname = ge_op_name(g, s->call);
	const char *cdev = ge_op_device(g, s->call);
	ge_buf nb = GE_BUF_INIT;
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
	}
	ge_buf_free(&nb);
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

/* Moves the call's consumers to the body's copies and removes the call. */
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
		ge_op_remove_control_input(g, waiters.v[i], s->call, NULL);
		for (size_t k = 0; k < done.n; k++)
			add_control(g, waiters.v[i], done.v[k]);
	}
	ge_opvec_free(&waiters);
	ge_opvec_free(&done);
	return ge_graph_remove_op(g, s->call, 0, err);
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
	if (body == g)
		return bad(&s, err, "a function cannot be inlined into "
			   "itself");
	size_t ni = ge_op_num_inputs(g, call);
	for (size_t i = 0; i < ni; i++)
		if (ge_op_input(g, call, i).op == GE_NOOP)
			return bad(&s, err, "input %zu ('%s') does not exist",
				   i, ge_op_dangling_input(g, call, i));
	int rc = scan_body(&s, err);
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
