/*
 * func_check.c: validation of bodies and calls, the load-time check of a
 * library that cannot run, reachability of functions.
 */
#include "functions/func_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* ------------------------------------------------------------ checks */

#define PROBLEM(...)                                    \
	do {                                            \
		(*problems)++;                          \
		if (report) {                           \
			ge_buf_printf(report, __VA_ARGS__); \
			ge_buf_addc(report, '\n');      \
		}                                       \
	} while (0)

static size_t list_len(const ge_graph *in, ge_opid id, const char *attr)
{
	const Tensorflow__AttrValue *v = ge_op_attr(in, id, attr, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return (size_t)-1;
	return v->list->n_type;
}

/* The callee's flat input (out = 0) or output dtypes; 0 where unknown. */
static int *flat_dtypes(ge_graph *root, ge_funcid f, int out, size_t *n)
{
	size_t na = out ? ge_func_num_outputs(root, f) : ge_func_num_inputs(root, f);
	int *v = NULL;
	*n = 0;
	for (size_t i = 0; i < na; i++) {
		ge_func_arg a = out ? ge_func_output(root, f, i)
				    : ge_func_input(root, f, i);
		for (int j = 0; j < a.count; j++) {
			v = ge_xrealloc(v, (*n + 1) * sizeof *v);
			v[(*n)++] = a.count == 1 ? a.dtype : 0;
		}
	}
	return v;
}

static void check_types(ge_graph *in, ge_opid id, const char *pre,
			const char *attr, const int *want, size_t n,
			const char *what, const char *fname, size_t skip,
			size_t *problems, ge_buf *report)
{
	const Tensorflow__AttrValue *v = ge_op_attr(in, id, attr, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return;
	for (size_t i = 0; i + skip < v->list->n_type && i < n; i++)
		if (want[i] && v->list->type[i + skip] &&
		    want[i] != (int)v->list->type[i + skip]) {
			const char *a = ge_dtype_name(v->list->type[i + skip]);
			const char *b = ge_dtype_name(want[i]);
			PROBLEM("%snode '%s': %s %zu is %s but function '%s' "
				"has %s there", pre, in->ops[id].name, what, i,
				a ? a : "?", fname, b ? b : "?");
			return;
		}
}

/* Arity and dtypes of one call against the callee's signature. */
static void check_call(ge_graph *root, ge_graph *in, ge_opid id,
		       const ge_func_call *c, const char *pre, int dtypes,
		       size_t *problems, ge_buf *report)
{
	const char *type = in->ops[id].type, *nm = in->ops[id].name;
	size_t nin = in->ops[id].n_in, skip = 0;
	size_t ni, no;
	int *ti = flat_dtypes(root, c->f, 0, &ni);
	int *to = flat_dtypes(root, c->f, 1, &no);
	size_t want_in = nin, want_out = (size_t)-1;
	const char *tin = "Tin", *tout = "Tout";
	if (!c->attr) {
		tin = tout = NULL;
	} else if (strstr(type, "While")) {
		want_out = !strcmp(c->attr, "body") ? nin : (size_t)-1;
		tin = "T";
		tout = NULL;
	} else if (!strcmp(type, "If") || !strcmp(type, "StatelessIf") ||
		   !strcmp(type, "Case") || !strcmp(type, "StatelessCase")) {
		want_in = nin ? nin - 1 : 0;
		want_out = list_len(in, id, "Tout");
		skip = 0;
	} else if (!strcmp(type, "PartitionedCall") ||
		   !strcmp(type, "StatefulPartitionedCall")) {
		want_out = list_len(in, id, "Tout");
	} else if (!strcmp(type, "TPUPartitionedCall")) {
		/* its last input is the device ordinal */
		want_in = nin ? nin - 1 : 0;
		want_out = list_len(in, id, "Tout");
	} else {
		/* another op's func attr (a dataset map, a gradient): its
		 * arity is the op's business */
		goto out;
	}
	if (ni != want_in)
		PROBLEM("%snode '%s' (%s) calls function '%s' with %zu input%s, "
			"but it takes %zu", pre, nm, type, c->name, want_in,
			want_in == 1 ? "" : "s", ni);
	else if (tin && dtypes)
		check_types(in, id, pre, tin, ti, ni, "input", c->name, skip,
			    problems, report);
	if (want_out != (size_t)-1 && no != want_out)
		PROBLEM("%snode '%s' (%s) expects %zu output%s from function "
			"'%s', which returns %zu", pre, nm, type, want_out,
			want_out == 1 ? "" : "s", c->name, no);
	else if (tout && dtypes)
		check_types(in, id, pre, tout, to, no, "output", c->name, 0,
			    problems, report);
out:
	free(ti);
	free(to);
}

struct edge {
	ge_funcid to;
	const char *node;
};

/* Checks every call of graph `in`; records edges between functions. */
static void check_calls(ge_graph *root, ge_graph *in, const char *pre,
			int dtypes, struct edge **edges, size_t *n_edges,
			size_t *problems, ge_buf *report)
{
	fl_walk w;
	ge_fl_walk_init(&w, in);
	/* with an empty library only the ops naming functions can call */
	const ge_opid *only = ge_fl_walk_only(&w);
	size_t n = only ? in->n_fn_attr_ops : in->n_ops;
	for (size_t q = 0; q < n; q++) {
		size_t i = only ? only[q] : q;
		if (in->ops[i].flags & OPF_DEAD)
			continue;
		ge_func_call *c;
		size_t k = ge_fl_walk_calls(&w, (ge_opid)i, &c);
		for (size_t j = 0; j < k; j++) {
			if (c[j].f == GE_NOFUNC) {
				if (*c[j].name &&
				    !ge_graph_opdef(in, c[j].name))
					PROBLEM("%snode '%s': attr '%s' names "
						"function '%s', which is not in "
						"the library", pre,
						in->ops[i].name, c[j].attr,
						c[j].name);
				continue;
			}
			check_call(root, in, (ge_opid)i, &c[j], pre, dtypes,
				   problems, report);
			if (edges) {
				*edges = ge_xrealloc(*edges, (*n_edges + 1) *
								     sizeof **edges);
				(*edges)[(*n_edges)++] =
					(struct edge){c[j].f, in->ops[i].name};
			}
		}
		free(c);
	}
}

/* _Arg / _Retval indices: each of 0..n-1 once. */
static void check_indices(ge_graph *b, const char *type, const char *pre,
			  size_t *problems, ge_buf *report)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n_ops; i++)
		n += !(b->ops[i].flags & OPF_DEAD) && !strcmp(b->ops[i].type, type);
	uint8_t *seen = ge_xcalloc(n + 1, 1);
	for (size_t i = 0; i < b->n_ops; i++) {
		if ((b->ops[i].flags & OPF_DEAD) || strcmp(b->ops[i].type, type))
			continue;
		int64_t ix;
		if (ge_op_attr_int(b, (ge_opid)i, "index", &ix) || ix < 0 ||
		    (uint64_t)ix >= n || seen[ix]) {
			PROBLEM("%snode '%s' (%s): index is missing, repeated "
				"or not below %zu", pre, b->ops[i].name, type, n);
			continue;
		}
		seen[ix] = 1;
		if (!strcmp(type, RET_OP) && b->ops[i].n_in != 1)
			PROBLEM("%snode '%s' (_Retval) has %u inputs, not 1",
				pre, b->ops[i].name, b->ops[i].n_in);
	}
	free(seen);
}

/* Cycles of calls: an iterative depth-first walk over the call graph
 * (each function and each edge visited once), reporting each edge that
 * goes back to a function on the walk's stack with the cycle it closes. */
static void check_recursion(struct ge_flib *l, struct edge **adj,
			    size_t *n_adj, size_t *problems, ge_buf *report)
{
	size_t n = l->n_fn;
	uint8_t *color = ge_xcalloc(n + 1, 1); /* 0 new, 1 on stack, 2 done */
	size_t *next = ge_xcalloc(n + 1, sizeof *next);
	ge_funcid *stack = ge_xmalloc((n + 1) * sizeof *stack);
	for (size_t s = 0; s < n; s++) {
		if (color[s] || l->fn[s].dead)
			continue;
		size_t sp = 0;
		stack[sp++] = (ge_funcid)s;
		color[s] = 1;
		while (sp) {
			ge_funcid u = stack[sp - 1];
			if (next[u] == n_adj[u]) {
				color[u] = 2;
				sp--;
				continue;
			}
			const struct edge *e = &adj[u][next[u]++];
			if (color[e->to] == 0) {
				color[e->to] = 1;
				stack[sp++] = e->to;
			} else if (color[e->to] == 1) {
				ge_buf cyc = GE_BUF_INIT;
				size_t k = sp;
				while (k > 0 && stack[k - 1] != e->to)
					k--;
				for (size_t q = k ? k - 1 : 0; q < sp; q++)
					ge_buf_printf(&cyc, "%s -> ",
						      l->fn[stack[q]].name);
				ge_buf_adds(&cyc, l->fn[e->to].name);
				PROBLEM("function '%s': node '%s' calls '%s' "
					"recursively (%s)", l->fn[u].name,
					e->node, l->fn[e->to].name,
					(char *)cyc.data);
				ge_buf_free(&cyc);
			}
		}
	}
	free(color);
	free(next);
	free(stack);
}

size_t ge_flib_validate(ge_graph *g, int functions, ge_buf *report)
{
	ge_graph *root = ge_fl_root(g);
	size_t n_problems = 0, *problems = &n_problems;
	ge_error err = {0, ""};
	if (ge_flib_load(root, &err)) {
		PROBLEM("%s", err.msg);
		return n_problems;
	}
	struct ge_flib *l = root->flib;
	check_calls(root, root, "", 1, NULL, NULL, problems, report);
	if (!functions)
		return n_problems;
	size_t nf = l->n_fn;
	struct edge **adj = ge_xcalloc(nf + 1, sizeof *adj);
	size_t *n_adj = ge_xcalloc(nf + 1, sizeof *n_adj);
	ge_buf tmp = GE_BUF_INIT, pre = GE_BUF_INIT;
	for (size_t i = 0; i < nf; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, &err);
		if (!b) {
			PROBLEM("%s", err.msg);
			continue;
		}
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", l->fn[i].name);
		tmp.len = 0;
		size_t k = ge_graph_validate(b, &tmp);
		*problems += k;
		if (report && k) {
			const char *s = (const char *)tmp.data;
			while (*s) {
				const char *e = strchr(s, '\n');
				size_t len = e ? (size_t)(e - s) : strlen(s);
				ge_buf_add(report, pre.data, pre.len);
				ge_buf_add(report, s, len);
				ge_buf_addc(report, '\n');
				s += len + (e ? 1 : 0);
			}
		}
		check_indices(b, ARG_OP, (char *)pre.data, problems, report);
		check_indices(b, RET_OP, (char *)pre.data, problems, report);
		check_calls(root, b, (char *)pre.data, 1, &adj[i], &n_adj[i],
			    problems, report);
	}
	check_recursion(l, adj, n_adj, problems, report);
	for (size_t i = 0; i < nf; i++)
		free(adj[i]);
	free(adj);
	free(n_adj);
	ge_buf_free(&tmp);
	ge_buf_free(&pre);
	return n_problems;
}

struct walk {
	struct ge_flib *l;
	uint8_t *seen;
	ge_funcid *queue;
	size_t qt;
};

static void add_root(void *ud, const char *name)
{
	struct walk *w = ud;
	ge_funcid f = ge_fl_idx_find(w->l, name, strlen(name));
	if (f != GE_NOFUNC && !w->seen[f]) {
		w->seen[f] = 1;
		w->queue[w->qt++] = f;
	}
}

void ge_flib_reachable(ge_graph *g, ge_funcid **out, size_t *n)
{
	ge_graph *root = ge_fl_root(g);
	struct ge_flib *l = ge_fl_lib(root);
	if (!l->n_fn) { /* nothing to reach: no walk over every op */
		*n = 0;
		*out = ge_xmalloc(sizeof **out);
		return;
	}
	uint8_t *seen = ge_xcalloc(l->n_fn + 1, 1);
	ge_funcid *queue = ge_xmalloc((l->n_fn + 1) * sizeof *queue);
	size_t qh = 0, qt = 0;
	/* TF2 loads a SavedModel's concrete functions (the object graph's
	 * methods and signatures) as entry points of their own: the
	 * container names them through the graph's hooks */
	struct walk w = {l, seen, queue, 0};
	for (size_t i = 0; i < root->n_hooks; i++)
		if (root->hooks[i]->func_roots)
			root->hooks[i]->func_roots(root, add_root, &w);
	qt = w.qt;
	ge_graph *in = root;
	for (;;) {
		fl_walk fw;
		ge_fl_walk_init(&fw, in);
		for (size_t i = 0; i < in->n_ops; i++) {
			if (in->ops[i].flags & OPF_DEAD)
				continue;
			ge_func_call *c;
			size_t k = ge_fl_walk_calls(&fw, (ge_opid)i, &c);
			for (size_t j = 0; j < k; j++)
				if (c[j].f != GE_NOFUNC && !seen[c[j].f]) {
					seen[c[j].f] = 1;
					queue[qt++] = c[j].f;
				}
			free(c);
		}
		in = NULL;
		while (qh < qt && !in)
			in = ge_func_body(root, queue[qh++], NULL);
		if (!in)
			break;
	}
	*n = 0;
	*out = ge_xmalloc((l->n_fn + 1) * sizeof **out);
	for (size_t i = 0; i < l->n_fn; i++)
		if (seen[i] && !l->fn[i].dead)
			(*out)[(*n)++] = (ge_funcid)i;
	free(seen);
	free(queue);
}

size_t ge_flib_body_ops(ge_graph *g)
{
	ge_graph *root = ge_fl_root(g);
	struct ge_flib *l = ge_fl_lib(root);
	size_t n = 0;
	for (size_t i = 0; i < l->n_fn; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, NULL);
		if (b)
			n += ge_graph_num_ops(b);
	}
	return n;
}

size_t ge_func_validate_graph(ge_graph *g, ge_buf *report)
{
	size_t n_problems = 0, *problems = &n_problems;
	if (g->parent) {
		check_indices(g, ARG_OP, "", problems, report);
		check_indices(g, RET_OP, "", problems, report);
		check_calls(ge_fl_root(g), g, "", 1, NULL, NULL, problems, report);
		return n_problems;
	}
	return ge_flib_validate(g, 1, report);
}

/* The first line of a report, as an error naming the file. */
static int first_problem(ge_graph *root, const ge_buf *rep, ge_error *err)
{
	const char *s = (const char *)rep->data;
	const char *e = strchr(s, '\n');
	return ge_err(err, GE_EGRAPH, "%s: %.*s", ge_fl_label(root),
		      (int)(e ? e - s : (long)strlen(s)), s);
}

int ge_flib_check(ge_graph *g, ge_error *err)
{
	ge_graph *root = ge_fl_root(g);
	int rc = ge_flib_load(root, err);
	if (rc)
		return rc;
	struct ge_flib *l = root->flib;
	ge_buf rep = GE_BUF_INIT, pre = GE_BUF_INIT;
	size_t n_problems = 0, *problems = &n_problems;
	ge_buf *report = &rep;
	/* dtypes are validate's business: TensorFlow's own test data has
	 * calls whose dtypes differ, and they load */
	check_calls(root, root, "", 0, NULL, NULL, problems, report);
	size_t nf = l->n_fn;
	struct edge **adj = ge_xcalloc(nf + 1, sizeof *adj);
	size_t *n_adj = ge_xcalloc(nf + 1, sizeof *n_adj);
	for (size_t i = 0; i < nf && !n_problems; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, err);
		if (!b) {
			rc = GE_EFORMAT;
			break;
		}
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", l->fn[i].name);
		for (size_t k = 0; k < b->n_ops && !n_problems; k++) {
			const ge_op *o = &b->ops[k];
			if (o->flags & OPF_DEAD)
				continue;
			for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++)
				if (o->in[s].op == GE_NOOP) {
					PROBLEM("%snode '%s': input '%s' names no "
						"node or arg of the function",
						(char *)pre.data,
						o->name, b->dangling[o->in[s].index]);
					break;
				}
		}
		check_calls(root, b, (char *)pre.data, 0, &adj[i], &n_adj[i],
			    problems, report);
	}
	if (!rc && !n_problems)
		check_recursion(l, adj, n_adj, problems, report);
	if (!rc && n_problems)
		rc = first_problem(root, &rep, err);
	for (size_t i = 0; i < nf; i++)
		free(adj[i]);
	free(adj);
	free(n_adj);
	ge_buf_free(&rep);
	ge_buf_free(&pre);
	return rc;
}
#undef PROBLEM

