/* select.c: graph_editor's util and select modules (lib/editor/select.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* ---------------------------------------------------------------- fixture */

/* The graph of graph_editor's own tests, plus k, a NoOp that depends on e
 * by a control edge only. */
static const char *FIXTURE =
	FX_EDITOR_GRAPH
	"node { name: \"k\" op: \"NoOp\" input: \"^foo/bar/e\" }\n";

static void reset_ops(ge_opvec *v)
{
	v->n = 0;
}

static void reset_ts(ge_tvec *v)
{
	v->n = 0;
}

/* ---------------------------------------------------------------- util */

static void test_scope_helpers(void)
{
	char *s;
	s = ge_scope_finalize("foo/bar");
	is_string("foo/bar/", s, "scope_finalize adds a slash");
	free(s);
	s = ge_scope_finalize("foo/bar/");
	is_string("foo/bar/", s, "scope_finalize keeps one slash");
	free(s);
	s = ge_scope_finalize("");
	is_string("", s, "scope_finalize of the root is empty");
	free(s);
	s = ge_scope_dirname("foo/bar/op");
	is_string("foo/bar/", s, "scope_dirname");
	free(s);
	s = ge_scope_dirname("op");
	is_string("", s, "scope_dirname without a slash");
	free(s);
	s = ge_scope_basename("foo/bar/op");
	is_string("op", s, "scope_basename");
	free(s);
	s = ge_scope_basename("op");
	is_string("op", s, "scope_basename without a slash");
	free(s);
}

static void test_placeholder_names(ge_graph *g)
{
	ge_tref c = T(g, "foo/c:0");
	char *s;
	s = ge_placeholder_name(g, &c, NULL, NULL);
	is_string("foo/geph__c_0", s, "placeholder_name: producer's scope");
	free(s);
	s = ge_placeholder_name(g, &c, "", NULL);
	is_string("geph__c_0", s, "placeholder_name: empty scope is the root");
	free(s);
	s = ge_placeholder_name(g, &c, "x", NULL);
	is_string("x/geph__c_0", s, "placeholder_name: scope gets a slash");
	free(s);
	s = ge_placeholder_name(g, &c, NULL, "pre");
	is_string("foo/pre__c_0", s, "placeholder_name: custom prefix");
	free(s);
	s = ge_placeholder_name(g, NULL, NULL, NULL);
	is_string("geph", s, "placeholder_name without a tensor");
	free(s);
	s = ge_placeholder_name(g, NULL, "s", NULL);
	is_string("s/geph", s, "placeholder_name without a tensor, scoped");
	free(s);

	/* A basename that already carries the prefix is not nested. */
	ge_graph *h = parse(FX_CONST("foo/geph__c_0"));
	ge_tref p = T(h, "foo/geph__c_0:0");
	s = ge_placeholder_name(h, &p, NULL, NULL);
	is_string("foo/geph__c_0", s, "placeholder_name does not nest geph__");
	free(s);
	s = ge_placeholder_name(h, &p, "y/", NULL);
	is_string("y/geph__c_0", s, "placeholder_name re-scopes a geph__ name");
	free(s);
	ge_graph_free(h);
}

static int shape_of_attr(const ge_graph *g, ge_opid op, int64_t *dims,
			 int cap)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "shape", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    !v->shape)
		return -2;
	if (v->shape->unknown_rank)
		return -1;
	for (size_t i = 0; i < v->shape->n_dim && (int)i < cap; i++)
		dims[i] = v->shape->dim[i]->size;
	return (int)v->shape->n_dim;
}

static void test_make_placeholders(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	int64_t dims[4];
	int dt = -1;

	uint64_t v0 = ge_graph_version(g);
	ge_opid p = ge_make_placeholder_from_tensor(g, NULL, T(g, "foo/c:0"),
						    NULL, NULL, &err);
	ok(p != GE_NOOP, "make_placeholder_from_tensor");
	is_string("foo/geph__c_0", ge_op_name(g, p), "its name");
	is_string("Placeholder", ge_op_type(g, p), "its type");
	ok(ge_op_attr_type(g, p, "dtype", &dt) == 0 && dt == 1,
	   "its dtype attr is DT_FLOAT");
	is_int(1, shape_of_attr(g, p, dims, 4), "its shape attr has rank 1");
	is_int(2, dims[0], "... and the tensor's dim");
	ok(ge_graph_version(g) > v0, "adding a placeholder bumps the version");

	ge_opid p2 = ge_make_placeholder_from_tensor(g, NULL, T(g, "foo/c:0"),
						     NULL, NULL, &err);
	is_string("foo/geph__c_0_1", p2 != GE_NOOP ? ge_op_name(g, p2) : "",
		  "a taken placeholder name is uniquified");

	/* from another graph */
	ge_graph *dst = ge_graph_new();
	ge_opid p3 = ge_make_placeholder_from_tensor(dst, g, T(g, "foo/c:0"),
						     "", NULL, &err);
	is_string("geph__c_0", p3 != GE_NOOP ? ge_op_name(dst, p3) : "",
		  "placeholder in another graph, root scope");
	ge_graph_free(dst);

	int64_t d2[2] = {3, -1};
	ge_opid q = ge_make_placeholder(g, 3, d2, 2, NULL, NULL, &err);
	is_string("geph", q != GE_NOOP ? ge_op_name(g, q) : "",
		  "make_placeholder_from_dtype_and_shape is named geph");
	ok(ge_op_attr_type(g, q, "dtype", &dt) == 0 && dt == 3,
	   "with the dtype given");
	is_int(2, shape_of_attr(g, q, dims, 4), "and the rank given");
	ok(dims[0] == 3 && dims[1] == -1, "and the dims given");
	ge_opid q2 = ge_make_placeholder(g, 1, NULL, -1, "s", NULL, &err);
	is_string("s/geph", q2 != GE_NOOP ? ge_op_name(g, q2) : "",
		  "ph in a scope");
	is_int(-1, shape_of_attr(g, q2, dims, 4), "unknown rank is recorded");
	ge_opid q3 = ge_make_placeholder(g, 1, NULL, -1, NULL, NULL, &err);
	is_string("geph_1", q3 != GE_NOOP ? ge_op_name(g, q3) : "",
		  "second ph is geph_1");
	ge_graph_free(g);
}

static void test_lists(ge_graph *g)
{
	ge_opvec v = GE_VEC_INIT;
	ge_tvec tv = GE_VEC_INIT;
	ge_opid a = OP(g, "a"), c = OP(g, "foo/c"), e = OP(g, "foo/bar/e");

	ge_opvec_push(&v, c);
	ge_opvec_push(&v, a);
	ge_opvec_push(&v, c);
	ge_opvec_push(&v, e);
	ge_opvec_push(&v, a);
	ge_opvec_unique(g, &v);
	is_string("foo/c,a,foo/bar/e", opnames(g, &v),
		  "unique keeps first occurrences in order");
	ge_opid more[3] = {e, OP(g, "foo/d"), c};
	ge_opvec_concat_unique(g, &v, more, 3);
	is_string("foo/c,a,foo/bar/e,foo/d", opnames(g, &v),
		  "concatenate_unique appends what is new");

	ge_tref ts[3] = {T(g, "foo/c:0"), T(g, "a:0"), T(g, "foo/c:0")};
	reset_ops(&v);
	ge_get_generating_ops(ts, 3, &v);
	is_string("foo/c,a,foo/c", opnames(g, &v),
		  "get_generating_ops keeps duplicates");
	reset_ops(&v);
	ge_get_consuming_ops(g, ts, 3, &v);
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/c", opnames(g, &v),
		  "get_consuming_ops: data consumers, tensor by tensor, unique");

	ge_tvec_push(&tv, T(g, "a:0"));
	ge_tvec_push(&tv, T(g, "foo/c:0"));
	ge_tvec_push(&tv, T(g, "a:0"));
	ge_tvec_unique(&tv);
	is_string("a:0,foo/c:0", tnames(g, &tv), "tvec unique");

	reset_ops(&v);
	ge_graph_all_ops(g, &v);
	is_int(9, v.n, "all ops of the graph");
	reset_ts(&tv);
	ge_graph_all_ts(g, &tv);
	is_string("a:0,foo/b:0,foo/c:0,foo/d:0,foo/bar/e:0,foo/bar/f:0,"
		  "foo/bar/g:0,foo/bar/h:0", tnames(g, &tv),
		  "get_tensors: op order (a NoOp has no output)");

	/* tensor uses, many tensors of one producer at once */
	ge_tuses u;
	ge_tref us[3] = {T(g, "foo/c:0"), T(g, "a:0"), T(g, "foo/c:0")};
	ge_tuses_compute(&u, g, us, 3);
	ok(u.len[0] == 3 && u.len[1] == 2 && u.len[2] == 3,
	   "tuses: counts per tensor, repeats share");
	ok(u.uses[u.off[1]].op == c && u.uses[u.off[1] + 1].op == OP(g, "foo/bar/g"),
	   "tuses: uses in node order");
	ge_tuses_free(&u);
	/* more than a few tensors take the path through maps: the same
	 * ranges, in the same order */
	ge_tuses w;
	ge_tref many[6] = {us[0], us[1], us[2], T(g, "a:0"), T(g, "foo/c:0"),
			   {GE_NOOP, 0}};
	ge_tuses_compute(&u, g, us, 3);
	ge_tuses_compute(&w, g, many, 6);
	int same = w.len[5] == 0;
	for (size_t i = 0; i < 5; i++) {
		size_t j = i < 3 ? i : i == 3 ? 1 : 0;
		same = same && w.len[i] == u.len[j];
		for (size_t k = 0; same && k < u.len[j]; k++)
			same = w.uses[w.off[i] + k].op == u.uses[u.off[j] + k].op &&
			       w.uses[w.off[i] + k].slot ==
				       u.uses[u.off[j] + k].slot;
	}
	ok(same, "tuses: a few tensors and many give the same uses");
	ge_tuses_free(&u);
	ge_tuses_free(&w);

	ge_opvec_free(&v);
	ge_tvec_free(&tv);
}

/* ---------------------------------------------------------------- select */

static int type_is_add(const ge_graph *g, ge_opid op, void *ud)
{
	(void)ud;
	return strcmp(ge_op_type(g, op), "Add") == 0;
}

static int not_a_or_f(const ge_graph *g, ge_opid op, void *ud)
{
	int *calls = ud;
	(*calls)++;
	const char *n = ge_op_name(g, op);
	return strcmp(n, "a") != 0 && strcmp(n, "foo/bar/f") != 0;
}

static int abort_pred(const ge_graph *g, ge_opid op, void *ud)
{
	(void)g, (void)op, (void)ud;
	return -1;
}

static int t_index0_not_a(const ge_graph *g, ge_tref t, void *ud)
{
	(void)ud;
	return strcmp(ge_op_name(g, t.op), "a") != 0;
}

static void test_filters(ge_graph *g)
{
	ge_error err = {0};
	ge_opvec v = GE_VEC_INIT;
	ge_tvec tv = GE_VEC_INIT;
	ge_opid ce[2] = {OP(g, "foo/c"), OP(g, "foo/bar/e")};

	ge_get_input_ts(g, ce, 2, &tv);
	is_string("a:0,foo/b:0,foo/c:0,foo/d:0", tnames(g, &tv),
		  "_get_input_ts: unique, op order then input order");
	reset_ts(&tv);
	ge_get_output_ts(g, ce, 2, &tv);
	is_string("foo/c:0,foo/bar/e:0", tnames(g, &tv), "_get_output_ts");
	reset_ts(&tv);

	is_int(GE_OK, ge_filter_ts(g, ce, 2, NULL, NULL, &tv, &err),
	       "filter_ts(True)");
	is_string("a:0,foo/b:0,foo/c:0,foo/d:0,foo/bar/e:0", tnames(g, &tv),
		  "filter_ts: inputs then outputs not yet seen");
	reset_ts(&tv);
	ge_filter_ts(g, ce, 2, t_index0_not_a, NULL, &tv, &err);
	is_string("foo/b:0,foo/c:0,foo/d:0,foo/bar/e:0", tnames(g, &tv),
		  "filter_ts with a callback");
	reset_ts(&tv);
	is_int(GE_OK, ge_filter_ts_from_regex(g, ce, 2, "^foo/", &tv, &err),
	       "filter_ts_from_regex");
	is_string("foo/b:0,foo/c:0,foo/d:0,foo/bar/e:0", tnames(g, &tv),
		  "... keeps the matching tensors");
	reset_ts(&tv);
	ge_filter_ts_from_regex(g, ce, 2, "c:0", &tv, &err);
	is_string("foo/c:0", tnames(g, &tv), "tensor regexes see name:index");
	reset_ts(&tv);

	is_int(GE_OK, ge_filter_ops(g, GE_ALL_OPS, 0, type_is_add, NULL, &v, &err),
	       "filter_ops over the graph");
	is_string("foo/c,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h",
		  opnames(g, &v), "... keeps the ops passing the filter");
	reset_ops(&v);
	ge_filter_ops(g, ce, 2, NULL, NULL, &v, &err);
	is_string("foo/c,foo/bar/e", opnames(g, &v), "filter_ops(True)");
	reset_ops(&v);
	is_int(GE_EINVAL, ge_filter_ops(g, GE_ALL_OPS, 0, abort_pred, NULL, &v, &err),
	       "a callback can abort filter_ops");
	reset_ops(&v);
	ge_filter_ops_from_regex(g, GE_ALL_OPS, 0, "bar/[eg]", &v, &err);
	is_string("foo/bar/e,foo/bar/g", opnames(g, &v),
		  "filter_ops_from_regex searches (unanchored)");
	reset_ops(&v);

	ge_get_name_scope_ops(g, GE_ALL_OPS, 0, "foo/bar", &v);
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", opnames(g, &v),
		  "get_name_scope_ops");
	reset_ops(&v);
	ge_get_name_scope_ops(g, GE_ALL_OPS, 0, "foo/bar/", &v);
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", opnames(g, &v),
		  "get_name_scope_ops strips one trailing slash");
	reset_ops(&v);
	ge_get_name_scope_ops(g, GE_ALL_OPS, 0, "foo/c", &v);
	is_string("foo/c", opnames(g, &v), "a scope matches the op of that name");
	reset_ops(&v);
	ge_get_name_scope_ops(g, GE_ALL_OPS, 0, "fo.", &v);
	is_string("", opnames(g, &v), "the scope is literal, not a regex");
	reset_ops(&v);

	ge_graph *h = parse(FX_CONST("a+b/x") FX_CONST("a+b") FX_CONST("a+bc")
			    FX_CONST("aab/y"));
	ge_get_name_scope_ops(h, GE_ALL_OPS, 0, "a+b", &v);
	is_string("a+b/x,a+b", opnames(h, &v),
		  "regex characters in a scope are literal (decision 2)");
	reset_ops(&v);
	ge_graph_free(h);

	ge_opvec_free(&v);
	ge_tvec_free(&tv);
}

static void test_ios_and_boundary(ge_graph *g)
{
	ge_error err = {0};
	ge_opvec v = GE_VEC_INIT;
	ge_tvec in = GE_VEC_INIT, out = GE_VEC_INIT, inside = GE_VEC_INIT;
	ge_opid c = OP(g, "foo/c"), h = OP(g, "foo/bar/h");

	ge_get_ops_ios(g, &c, 1, 0, 0, &v);
	is_string("a,foo/b,foo/bar/e,foo/bar/f,foo/bar/g", opnames(g, &v),
		  "get_ops_ios: producers then consumers");
	reset_ops(&v);
	ge_get_ops_ios(g, &c, 1, 0, 1, &v);
	is_string("a,foo/b,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h",
		  opnames(g, &v), "get_ops_ios with control outputs");
	reset_ops(&v);
	ge_get_ops_ios(g, &h, 1, 1, 0, &v);
	is_string("foo/bar/f,foo/bar/g,foo/c", opnames(g, &v),
		  "get_ops_ios with control inputs");
	reset_ops(&v);
	ge_get_ops_ios(g, &h, 1, 0, 0, &v);
	is_string("foo/bar/f,foo/bar/g", opnames(g, &v),
		  "get_ops_ios ignores control edges unless asked");
	reset_ops(&v);

	ge_opid cef[3] = {c, OP(g, "foo/bar/e"), OP(g, "foo/bar/f")};
	ge_compute_boundary_ts(g, cef, 3, &in, &out, &inside);
	is_string("a:0,foo/b:0,foo/d:0", tnames(g, &in),
		  "compute_boundary_ts: outside inputs");
	is_string("foo/c:0,foo/bar/e:0,foo/bar/f:0", tnames(g, &out),
		  "outside outputs keep a tensor also consumed outside");
	is_string("foo/c:0", tnames(g, &inside), "inside tensors");
	reset_ts(&in), reset_ts(&out), reset_ts(&inside);

	ge_opid cefgh[5] = {c, OP(g, "foo/bar/e"), OP(g, "foo/bar/f"),
			    OP(g, "foo/bar/g"), h};
	ge_compute_boundary_ts(g, cefgh, 5, &in, &out, &inside);
	is_string("a:0,foo/b:0,foo/d:0", tnames(g, &in),
		  "outside inputs of a bigger set");
	is_string("foo/bar/e:0,foo/bar/h:0", tnames(g, &out),
		  "only-inside tensors are not outputs; unconsumed ones are");
	is_string("foo/c:0,foo/bar/f:0,foo/bar/g:0", tnames(g, &inside),
		  "inside tensors in input order");
	reset_ts(&in), reset_ts(&out), reset_ts(&inside);

	ge_opid e = OP(g, "foo/bar/e");
	ge_opid bnd[2] = {c, OP(g, "foo/d")};
	is_int(GE_OK, ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &e, 1, bnd, 2, 1,
						 0, 0, &v, &err),
	       "get_within_boundary_ops");
	is_string("foo/c,foo/d,foo/bar/e", opnames(g, &v),
		  "boundary ops are included when inclusive, not crossed");
	reset_ops(&v);
	ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &e, 1, bnd, 2, 0, 0, 0, &v,
				   &err);
	is_string("foo/bar/e", opnames(g, &v), "... and left out otherwise");
	reset_ops(&v);
	ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &e, 1, &c, 1, 1, 0, 0, &v,
				   &err);
	is_string("a,foo/c,foo/d,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h",
		  opnames(g, &v), "the fill is undirected");
	reset_ops(&v);
	ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &e, 1, &c, 1, 1, 0, 1, &v,
				   &err);
	is_string("a,foo/c,foo/d,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h,k",
		  opnames(g, &v), "control outputs are followed when asked");
	reset_ops(&v);
	ge_opid within[2] = {OP(g, "foo/bar/f"), e};
	ge_get_within_boundary_ops(g, within, 2, &e, 1, &c, 1, 1, 0, 0, &v,
				   &err);
	is_string("foo/bar/f,foo/bar/e", opnames(g, &v),
		  "the result keeps the ops of the list, in its order");
	reset_ops(&v);
	is_int(GE_EINVAL, ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &c, 1, &c, 1,
						     1, 0, 0, &v, &err),
	       "a boundary intersecting the seeds is an error");
	ok(strstr(err.msg, "Boundary is intersecting with the seeds") != NULL,
	   "... with the reference's message");

	ge_opvec_free(&v);
	ge_tvec_free(&in);
	ge_tvec_free(&out);
	ge_tvec_free(&inside);
}

static void test_walks(ge_graph *g)
{
	ge_error err = {0};
	ge_opvec v = GE_VEC_INIT;
	ge_opid a = OP(g, "a"), c = OP(g, "foo/c"), e = OP(g, "foo/bar/e");
	ge_opid h = OP(g, "foo/bar/h"), k = OP(g, "k");
	ge_tref a0 = T(g, "a:0"), c0 = T(g, "foo/c:0"), h0 = T(g, "foo/bar/h:0");
	ge_walk_opts o = GE_WALK_OPTS_INIT;
	ge_seeds s = {&a, 1, NULL, 0};

	is_int(GE_OK, ge_get_forward_walk_ops(g, &s, &o, &v, &err),
	       "forward walk");
	is_string("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h",
		  opnames(g, &v), "seeds, then waves in node order (decision 1)");
	reset_ops(&v);
	o.inclusive = 0;
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h",
		  opnames(g, &v), "inclusive=false drops the seeds");
	reset_ops(&v);
	o.inclusive = 1;

	ge_seeds st = {NULL, 0, &a0, 1};
	ge_get_forward_walk_ops(g, &st, &o, &v, &err);
	is_string("foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h",
		  opnames(g, &v), "a tensor seed starts at its consumers");
	reset_ops(&v);
	o.inclusive = 0;
	ge_get_forward_walk_ops(g, &st, &o, &v, &err);
	is_string("foo/bar/e,foo/bar/f,foo/bar/h", opnames(g, &v),
		  "... which are the seeds inclusive=false drops");
	reset_ops(&v);
	o.inclusive = 1;

	o.stop_at_ts = &c0;
	o.n_stop = 1;
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("a,foo/c,foo/bar/g,foo/bar/h", opnames(g, &v),
		  "stop_at_ts is not crossed");
	reset_ops(&v);
	o.stop_at_ts = NULL;
	o.n_stop = 0;

	ge_opid within[4] = {h, e, c, a};
	o.within_ops = within;
	o.n_within = 4;
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("a,foo/c,foo/bar/e", opnames(g, &v),
		  "within_ops restricts the walk");
	reset_ops(&v);
	o.n_within = 2;
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("", opnames(g, &v), "within_ops intersects the seeds");
	reset_ops(&v);
	o.within_ops = NULL;
	o.n_within = 0;

	int calls = 0;
	o.within_fn = not_a_or_f;
	o.within_ud = &calls;
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/h", opnames(g, &v),
		  "within_ops_fn filters the walk but not the seeds");
	ok(calls > 0 && calls <= 5, "within_ops_fn is called once per op");
	reset_ops(&v);
	o.within_fn = abort_pred;
	is_int(GE_EINVAL, ge_get_forward_walk_ops(g, &s, &o, &v, &err),
	       "a within_ops_fn can abort the walk");
	reset_ops(&v);
	o.within_fn = NULL;
	o.within_ud = NULL;

	ge_seeds se = {&e, 1, NULL, 0};
	ge_get_forward_walk_ops(g, &se, &o, &v, &err);
	is_string("foo/bar/e", opnames(g, &v),
		  "control outputs are not followed by default");
	reset_ops(&v);
	o.control = 1;
	ge_get_forward_walk_ops(g, &se, &o, &v, &err);
	is_string("foo/bar/e,k", opnames(g, &v),
		  "control outputs are followed when asked");
	reset_ops(&v);
	o.control = 0;

	ge_seeds none = {NULL, 0, NULL, 0};
	is_int(GE_OK, ge_get_forward_walk_ops(g, &none, &o, &v, &err),
	       "no seeds");
	is_int(0, v.n, "... walk to nothing");

	/* backward */
	ge_seeds sh = {&h, 1, NULL, 0};
	ge_get_backward_walk_ops(g, &sh, &o, &v, &err);
	is_string("foo/bar/h,foo/bar/f,foo/bar/g,a,foo/c,foo/d,foo/b",
		  opnames(g, &v), "backward walk, waves in node order");
	reset_ops(&v);
	ge_seeds sh0 = {NULL, 0, &h0, 1};
	ge_get_backward_walk_ops(g, &sh0, &o, &v, &err);
	is_string("foo/bar/h,foo/bar/f,foo/bar/g,a,foo/c,foo/d,foo/b",
		  opnames(g, &v), "a tensor seed of a backward walk is its producer");
	reset_ops(&v);
	ge_seeds sc0 = {NULL, 0, &c0, 1};
	ge_get_backward_walk_ops(g, &sc0, &o, &v, &err);
	is_string("foo/c,a,foo/b", opnames(g, &v),
		  "backward from a tensor: producer side only");
	reset_ops(&v);
	ge_get_forward_walk_ops(g, &sc0, &o, &v, &err);
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", opnames(g, &v),
		  "forward from the same tensor: consumer side only");
	reset_ops(&v);
	o.stop_at_ts = &c0;
	o.n_stop = 1;
	ge_get_backward_walk_ops(g, &sh, &o, &v, &err);
	is_string("foo/bar/h,foo/bar/f,foo/bar/g,a,foo/d", opnames(g, &v),
		  "backward walk with stop_at_ts");
	reset_ops(&v);
	o.stop_at_ts = NULL;
	o.n_stop = 0;
	ge_seeds sk = {&k, 1, NULL, 0};
	ge_get_backward_walk_ops(g, &sk, &o, &v, &err);
	is_string("k", opnames(g, &v), "control inputs not followed by default");
	reset_ops(&v);
	o.control = 1;
	ge_get_backward_walk_ops(g, &sk, &o, &v, &err);
	is_string("k,foo/bar/e,foo/c,foo/d,a,foo/b", opnames(g, &v),
		  "control inputs followed when asked");
	reset_ops(&v);
	o.control = 0;
	o.inclusive = 0;
	ge_get_backward_walk_ops(g, &sh, &o, &v, &err);
	is_string("foo/bar/f,foo/bar/g,a,foo/c,foo/d,foo/b", opnames(g, &v),
		  "backward inclusive=false");
	reset_ops(&v);
	o.inclusive = 1;

	/* intersection and union */
	ge_walk_opts fo = GE_WALK_OPTS_INIT, bo = GE_WALK_OPTS_INIT;
	is_int(GE_OK, ge_get_walks_intersection_ops(g, &s, &sh, &fo, &bo, &v,
						    &err),
	       "walks intersection");
	is_string("a,foo/c,foo/bar/g,foo/bar/f,foo/bar/h", opnames(g, &v),
		  "... in forward order");
	reset_ops(&v);
	ge_get_walks_intersection_ops(g, &st, &sh0, &fo, &bo, &v, &err);
	is_string("foo/c,foo/bar/g,foo/bar/f,foo/bar/h", opnames(g, &v),
		  "intersection from tensors (graph_replace's selection)");
	reset_ops(&v);
	is_int(GE_OK, ge_get_walks_union_ops(g, &s, &sh, &fo, &bo, &v, &err),
	       "walks union");
	is_string("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h,foo/d,foo/b",
		  opnames(g, &v), "forward list, then backward ops not in it");
	reset_ops(&v);

	/* decision 1 on a graph whose names do not follow node order */
	ge_graph *z = parse(FX_CONST("src")
			    "node { name: \"zz\" op: \"Neg\" input: \"src\" }\n"
			    "node { name: \"aa\" op: \"Neg\" input: \"src\" }\n"
			    "node { name: \"mm\" op: \"Add\" input: \"aa\" "
			    "input: \"zz\" }\n");
	ge_opid src = OP(z, "src");
	ge_seeds ss = {&src, 1, NULL, 0};
	ge_walk_opts zo = GE_WALK_OPTS_INIT;
	ge_get_forward_walk_ops(z, &ss, &zo, &v, &err);
	is_string("src,zz,aa,mm", opnames(z, &v),
		  "a wave comes in node order, not name order");
	reset_ops(&v);
	ge_opid mm = OP(z, "mm");
	ge_seeds sm = {&mm, 1, NULL, 0};
	ge_get_backward_walk_ops(z, &sm, &zo, &v, &err);
	is_string("mm,zz,aa,src", opnames(z, &v),
		  "backward waves in node order, not input order");
	reset_ops(&v);
	ge_graph_free(z);

	ge_opvec_free(&v);
}

static void test_select(ge_graph *g)
{
	ge_error err = {0};
	ge_opvec v = GE_VEC_INIT;
	ge_tvec tv = GE_VEC_INIT;
	ge_opid a = OP(g, "a"), c = OP(g, "foo/c"), h = OP(g, "foo/bar/h");

	ge_sel_arg r1 = {GE_SEL_REGEX, "^foo/bar/", NULL, 0, NULL, 0};
	is_int(GE_OK, ge_select_ops(g, &r1, 1, NULL, &v, &err), "select_ops");
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", opnames(g, &v),
		  "select_ops by regex");
	reset_ops(&v);

	ge_opid ha[2] = {h, a};
	ge_tref cten = T(g, "foo/c:0");
	ge_sel_arg args[3] = {
		{GE_SEL_REGEX, "^a$", NULL, 0, NULL, 0},
		{GE_SEL_LIST, NULL, ha, 2, &cten, 1},
		{GE_SEL_REGEX, "(?#ts)foo", NULL, 0, NULL, 0},
	};
	ge_select_ops(g, args, 3, NULL, &v, &err);
	is_string("a,foo/bar/h", opnames(g, &v),
		  "unique, first seen; tensors and (?#ts) ignored");
	reset_ops(&v);

	ge_select_opts so = {0};
	so.restrict_ops_regex = 1;
	ge_sel_arg r2[2] = {
		{GE_SEL_REGEX, "^foo/bar/", NULL, 0, NULL, 0},
		{GE_SEL_REGEX, "(?#ops)^foo/c$", NULL, 0, NULL, 0},
	};
	ge_select_ops(g, r2, 2, &so, &v, &err);
	is_string("foo/c", opnames(g, &v),
		  "restrict_ops_regex keeps only (?#ops) patterns");
	reset_ops(&v);

	ge_select_opts sf = {0};
	sf.op_filter = type_is_add;
	ge_sel_arg r3[2] = {
		{GE_SEL_REGEX, "^foo/[bc]$", NULL, 0, NULL, 0},
		{GE_SEL_LIST, NULL, ha, 2, NULL, 0},
	};
	ge_select_ops(g, r3, 2, &sf, &v, &err);
	is_string("foo/c,foo/bar/h", opnames(g, &v),
		  "positive_filter applies to regexes and lists");
	reset_ops(&v);

	is_int(GE_EINVAL, ge_select_ops(NULL, &r1, 1, NULL, &v, &err),
	       "a regex needs a graph");

	ge_sel_arg bad = {GE_SEL_REGEX, "a(b", NULL, 0, NULL, 0};
	is_int(GE_EINVAL, ge_select_ops(g, &bad, 1, NULL, &v, &err),
	       "a bad regex is an error");
	ok(strstr(err.msg, "a(b") && strstr(err.msg, "offset 3"),
	   "... naming the pattern and the offset: %s", err.msg);

	/* tensors */
	ge_select_ts(g, &r1, 1, NULL, &tv, &err);
	is_string("foo/bar/f:0,foo/bar/g:0,foo/bar/e:0,foo/bar/h:0",
		  tnames(g, &tv),
		  "select_ts: consumed tensors (input order) then the rest");
	reset_ts(&tv);
	ge_sel_arg t2[3] = {
		{GE_SEL_REGEX, "(?#ops)foo", NULL, 0, NULL, 0},
		{GE_SEL_REGEX, "(?#ts)^a:0$", NULL, 0, NULL, 0},
		{GE_SEL_LIST, NULL, &c, 1, &cten, 1},
	};
	ge_select_ts(g, t2, 3, NULL, &tv, &err);
	is_string("a:0,foo/c:0", tnames(g, &tv),
		  "select_ts skips (?#ops) and the ops of lists");
	reset_ts(&tv);
	ge_select_opts sr = {0};
	sr.restrict_ts_regex = 1;
	ge_select_ts(g, &r1, 1, &sr, &tv, &err);
	is_int(0, tv.n, "restrict_ts_regex skips plain patterns");

	ge_sel_arg both[2] = {
		{GE_SEL_REGEX, "^foo/bar/e$", NULL, 0, NULL, 0},
		{GE_SEL_REGEX, "(?#ts)^a:0$", NULL, 0, NULL, 0},
	};
	reset_ops(&v);
	reset_ts(&tv);
	is_int(GE_OK, ge_select_ops_and_ts(g, both, 2, NULL, &v, &tv, &err),
	       "select_ops_and_ts");
	is_string("foo/bar/e", opnames(g, &v), "a plain regex selects ops");
	is_string("a:0", tnames(g, &tv), "a (?#ts) regex selects tensors");

	/* the regex cache and direct use */
	ge_regex *re = ge_regex_cached("^foo/", &err);
	ok(re && ge_regex_cached("^foo/", &err) == re,
	   "a pattern is compiled once and cached");
	ok(re && ge_regex_search(re, "x/foo/y", 7, &err) == 0 &&
	   ge_regex_search(re, "foo/y", 5, &err) == 1,
	   "search semantics with anchors honoured");
	ge_regex_cache_clear();

	ge_opvec_free(&v);
	ge_tvec_free(&tv);
}

/* ---------------------------------------------------------------- misc */

static void test_versions(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	size_t n;
	ge_opid a = OP(g, "a"), h = OP(g, "foo/bar/h");
	const ge_opid *co = ge_op_control_outputs(g, a, &n);
	(void)co;
	is_int(0, n, "a has no control outputs");
	uint64_t v0 = ge_graph_version(g);
	ge_op_add_control_input(g, h, a, &err);
	ok(ge_graph_version(g) > v0, "an edit bumps the version (decision 12)");
	co = ge_op_control_outputs(g, a, &n);
	ok(n == 1 && co[0] == h, "control outputs notice the edit at once");
	ge_opvec v = GE_VEC_INIT;
	ge_walk_opts o = GE_WALK_OPTS_INIT;
	o.control = 1;
	ge_seeds s = {&a, 1, NULL, 0};
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	is_string("a,foo/c,foo/bar/g,foo/bar/h,foo/bar/e,foo/bar/f,k",
		  opnames(g, &v), "walks see the new control edge");
	ge_opvec_free(&v);
	ge_graph_free(g);
}

/* ---------------------------------------------------------------- colocation */

static void test_colocation_targets(void)
{
	ge_graph *g = parse(
		"node { name: \"v\" op: \"NoOp\" }\n"
		"node { name: \"w\" op: \"NoOp\" }\n"
		"node { name: \"a\" op: \"NoOp\" attr { key: \"_class\" value {"
		" list { s: \"loc:@w\" s: \"loc:@gone\" s: \"other\""
		" s: \"loc:@\" } } } }\n"
		"node { name: \"b\" op: \"NoOp\" attr { key: \"_class\" value {"
		" list { s: \"loc:@v\" s: \"loc:@w\" } } } }\n"
		"node { name: \"c\" op: \"NoOp\" attr { key: \"_class\" value {"
		" s: \"loc:@a\" } } }\n");
	ge_opvec v = GE_VEC_INIT;
	ge_colocation_targets(g, &v);
	is_string("w,v", opnames(g, &v),
		  "colocation targets: each once, first named first; missing "
		  "ops, empty names, other strings and non-list _class skipped");
	ge_opvec_free(&v);
	ge_graph_free(g);
	g = parse("node { name: \"x\" op: \"NoOp\" }\n");
	ge_colocation_targets(g, &v);
	ok(v.n == 0, "no _class, no colocation targets");
	ge_opvec_free(&v);
	ge_graph_free(g);
}

int main(void)
{
	ge_graph *g = parse(FIXTURE);
	test_scope_helpers();
	test_placeholder_names(g);
	test_make_placeholders();
	test_lists(g);
	test_filters(g);
	test_ios_and_boundary(g);
	test_walks(g);
	test_select(g);
	test_versions();
	test_colocation_targets();
	ge_graph_free(g);
	ge_regex_cache_clear();
	return tap_done();
}
