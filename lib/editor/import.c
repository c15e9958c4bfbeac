/*
 * import.c: merging one graph into another (import_graph_def with
 * import_meta_graph's collections) and exporting one name scope as a graph
 * of its own (export_scoped_meta_graph).  Both are whole-view transforms
 * (transform.c) with a collection pass that keeps collection names.
 */
#include "editor/transform_impl.h"

#include <stdlib.h>
#include <string.h>

#include "formats/meta.h"
#include "editor/select.h"
#include "editor/subgraph.h"

/* "x:0" and "x" name the same tensor: the spelling compared. */
static size_t base_len(const char *s)
{
	size_t n = strlen(s);
	return n > 2 && !strcmp(s + n - 2, ":0") ? n - 2 : n;
}

static int cmp_str(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = base_len(x), ly = base_len(y);
	int c = memcmp(x, y, lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

/* Whether every name has a dangling input of g spelled like it: the
 * dangling inputs are listed once and sorted, then each name looked up. */
static int bind_check(const ge_graph *g, const char **names, size_t n,
		      ge_error *err)
{
	const char **d = NULL;
	size_t nd = 0, cap = 0, ccap = ge_graph_capacity(g);
	int rc = GE_OK;
	for (size_t id = 0; id < ccap; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		size_t k = ge_op_num_inputs(g, (ge_opid)id) +
			   ge_op_num_control_inputs(g, (ge_opid)id);
		for (size_t i = 0; i < k; i++) {
			const char *t = ge_op_dangling_input(g, (ge_opid)id, i);
			if (!t)
				continue;
			if (nd == cap) {
				cap = cap ? cap * 2 : 16;
				d = ge_xrealloc(d, cap * sizeof *d);
			}
			d[nd++] = t;
		}
	}
	if (nd)
		qsort(d, nd, sizeof *d, cmp_str);
	for (size_t i = 0; i < n && !rc; i++)
		if (!nd || !bsearch(&names[i], d, nd, sizeof *d, cmp_str))
			rc = ge_err(err, GE_EINVAL,
				    "input_map: '%s' names no tensor of the "
				    "imported graph",
				    names[i]);
	free(d);
	return rc;
}

int ge_import_graph(ge_graph *dst, ge_graph *src, const ge_import_opts *o,
		    ge_tinfo **info, ge_error *err)
{
	static const ge_import_opts none = {0};
	if (!o)
		o = &none;
	if (info)
		*info = NULL;
	if (!dst || !src)
		return ge_err(err, GE_EINVAL, "import needs two graphs");
	size_t n = o->n_map;
	ge_tpair *map = ge_xmalloc((n + 1) * sizeof *map);
	const char **bind = ge_xmalloc((n + 1) * sizeof *bind);
	ge_tref *bind_to = ge_xmalloc((n + 1) * sizeof *bind_to);
	size_t n_map = 0, n_bind = 0;
	int rc = GE_OK, unbound = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *name = o->map_from[i];
		ge_tref to = o->map_to[i], from;
		int ctrl = name[0] == '^';
		if ((to.index == GE_CONTROL) != ctrl || to.op == GE_NOOP ||
		    !ge_op_alive(dst, to.op)) {
			rc = ge_err(err, GE_EINVAL,
				    "input_map: '%s' must map to %s of the "
				    "destination graph",
				    name, ctrl ? "an op" : "a tensor");
			break;
		}
		/* "x" is the tensor x:0 here, as in import_graph_def */
		if (ctrl) {
			from.op = ge_graph_find(src, name + 1);
			from.index = GE_CONTROL;
		} else if (ge_graph_find_tensor(src, name, &from) != GE_OK) {
			from.op = GE_NOOP;
		}
		if (from.op != GE_NOOP) {
			map[n_map++] = (ge_tpair){from, to};
		} else {
			bind[n_bind] = name;
			bind_to[n_bind++] = to;
			unbound = 1;
		}
	}
	if (!rc && unbound)
		rc = bind_check(src, bind, n_bind, err);
	ge_opvec ops = GE_VEC_INIT;
	ge_view v = GE_VIEW_INIT;
	ge_tinfo *I = NULL;
	if (!rc) {
		ge_graph_all_ops(src, &ops);
		rc = ge_view_init(&v, src, ops.v, ops.n, NULL, 0, err);
	}
	if (!rc) {
		ge_transformer tr;
		ge_transformer_init(&tr);
		/* collections are merged below, under their own names */
		tr.assign_collections_handler = NULL;
		ge_transform_opts to = {0};
		to.dst_graph = dst;
		to.dst_scope = o->prefix;
		to.reuse_dst_scope = o->reuse_prefix;
		to.input_map = map;
		to.n_input_map = n_map;
		to.keep_frame_names = 1;
		rc = ge_transform_bind(&tr, &v, &to, bind, bind_to, n_bind, NULL,
				       &I, err);
	}
	if (!rc)
		rc = ge_tinfo_merge_collections(I, err);
	if (!rc)
		ge_graph_merge_fields(dst, src);
	if (rc)
		ge_err_prefix(err, "importing '%s'", ge_graph_name(src));
	if (!rc && info)
		*info = I;
	else
		ge_tinfo_free(I);
	ge_view_free(&v);
	ge_opvec_free(&ops);
	free(map);
	free(bind);
	free(bind_to);
	return rc;
}

int ge_graph_export_scoped(ge_graph *g, const char *scope, ge_graph **out,
			   ge_error *err)
{
	*out = NULL;
	char *sc = ge_scope_finalize(scope ? scope : "");
	ge_opvec ops = GE_VEC_INIT;
	if (*sc) {
		ge_opvec all = GE_VEC_INIT;
		ge_get_name_scope_ops(g, GE_ALL_OPS, 0, sc, &all);
		/* an op named like the scope itself has no name once the
		 * scope is stripped: it stays behind */
		size_t sl = strlen(sc) - 1;
		for (size_t i = 0; i < all.n; i++) {
			const char *nm = ge_op_name(g, all.v[i]);
			if (strlen(nm) != sl)
				ge_opvec_push(&ops, all.v[i]);
		}
		ge_opvec_free(&all);
	} else {
		ge_graph_all_ops(g, &ops);
	}
	ge_graph *dst = ge_graph_new();
	ge_view v = GE_VIEW_INIT;
	ge_tinfo *I = NULL;
	int rc = GE_OK;
	if (ops.n) {
		rc = ge_view_init(&v, g, ops.v, ops.n, NULL, 0, err);
		if (!rc) {
			ge_transformer tr;
			ge_transformer_init(&tr);
			tr.assign_collections_handler = NULL;
			ge_transform_opts to = {0};
			to.dst_graph = dst;
			to.src_scope = sc;
			to.reuse_dst_scope = 1;
			/* a scope is exported as it is, loops cut or not */
			to.allow_loop_cuts = 1;
			rc = ge_transform(&tr, &v, &to, NULL, &I, err);
		}
		if (!rc)
			rc = ge_tinfo_merge_collections(I, err);
	}
	ge_tinfo_free(I);
	ge_view_free(&v);
	ge_opvec_free(&ops);
	free(sc);
	if (rc) {
		ge_err_prefix(err, "exporting scope '%s'", scope ? scope : "");
		ge_graph_free(dst);
		return rc;
	}
	ge_graph_merge_fields(dst, g);
	*out = dst;
	return GE_OK;
}
