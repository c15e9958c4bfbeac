/* opmatcher.c: see opmatcher.h. */
#include "editor/opmatcher.h"

#include <stdlib.h>
#include <string.h>

/* Deep enough for any hand-written pattern; it stops a matcher that was
 * made to contain itself from recursing forever on a cyclic graph. */
#define MAX_DEPTH 200

enum { F_REGEX, F_OP, F_FN, F_TYPES };

typedef struct filter {
	int kind;
	ge_regex *re;
	ge_opid op;
	ge_op_pred fn;
	void *ud;
	char **types;
	size_t n_types;
} filter;

typedef struct out_entry {
	size_t len; /* GE_MATCH_ANY: skip this output */
	ge_opmatcher **m;
} out_entry;

struct ge_opmatcher {
	int refs;
	filter *f;
	size_t nf;
	int has_in, has_cin, has_out;
	ge_opmatcher **in, **cin;
	size_t n_in, n_cin;
	out_entry *out;
	size_t n_out;
};

ge_opmatcher *ge_opmatcher_new(void)
{
	ge_opmatcher *m = ge_xcalloc(1, sizeof *m);
	m->refs = 1;
	return m;
}

ge_opmatcher *ge_opmatcher_ref(ge_opmatcher *m)
{
	if (m)
		m->refs++;
	return m;
}

static void free_list(ge_opmatcher **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ge_opmatcher_free(l[i]);
	free(l);
}

void ge_opmatcher_free(ge_opmatcher *m)
{
	if (!m || --m->refs > 0)
		return;
	for (size_t i = 0; i < m->nf; i++) {
		ge_regex_free(m->f[i].re);
		for (size_t k = 0; k < m->f[i].n_types; k++)
			free(m->f[i].types[k]);
		free(m->f[i].types);
	}
	free(m->f);
	free_list(m->in, m->n_in);
	free_list(m->cin, m->n_cin);
	for (size_t i = 0; i < m->n_out; i++)
		if (m->out[i].len != GE_MATCH_ANY)
			free_list(m->out[i].m, m->out[i].len);
	free(m->out);
	free(m);
}

static filter *add_filter(ge_opmatcher *m, int kind)
{
	m->f = ge_xrealloc(m->f, (m->nf + 1) * sizeof *m->f);
	filter *f = &m->f[m->nf++];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	return f;
}

int ge_opmatcher_add_regex(ge_opmatcher *m, const char *pattern,
			   ge_error *err)
{
	ge_regex *re = ge_regex_new(pattern, err);
	if (!re)
		return GE_EINVAL;
	add_filter(m, F_REGEX)->re = re;
	return GE_OK;
}

void ge_opmatcher_add_op(ge_opmatcher *m, ge_opid op)
{
	add_filter(m, F_OP)->op = op;
}

void ge_opmatcher_add_fn(ge_opmatcher *m, ge_op_pred fn, void *ud)
{
	filter *f = add_filter(m, F_FN);
	f->fn = fn;
	f->ud = ud;
}

void ge_opmatcher_add_types(ge_opmatcher *m, const char *const *types,
			    size_t n)
{
	filter *f = add_filter(m, F_TYPES);
	f->types = ge_xmalloc((n ? n : 1) * sizeof *f->types);
	for (size_t i = 0; i < n; i++)
		f->types[i] = ge_xstrdup(types[i]);
	f->n_types = n;
}

static ge_opmatcher **ref_list(ge_opmatcher *const *subs, size_t n)
{
	ge_opmatcher **l = ge_xmalloc((n ? n : 1) * sizeof *l);
	for (size_t i = 0; i < n; i++)
		l[i] = ge_opmatcher_ref(subs ? subs[i] : NULL);
	return l;
}

int ge_opmatcher_input_ops(ge_opmatcher *m, ge_opmatcher *const *subs,
			   size_t n, ge_error *err)
{
	if (m->has_in)
		return ge_err(err, GE_EINVAL, "input_ops is already set.");
	m->has_in = 1;
	m->in = ref_list(subs, n);
	m->n_in = n;
	return GE_OK;
}

int ge_opmatcher_control_input_ops(ge_opmatcher *m, ge_opmatcher *const *subs,
				   size_t n, ge_error *err)
{
	if (m->has_cin)
		return ge_err(err, GE_EINVAL,
			      "control_input_ops is already set.");
	m->has_cin = 1;
	m->cin = ref_list(subs, n);
	m->n_cin = n;
	return GE_OK;
}

int ge_opmatcher_output_ops(ge_opmatcher *m,
			    ge_opmatcher *const *const *lists,
			    const size_t *lens, size_t n, ge_error *err)
{
	if (m->has_out)
		return ge_err(err, GE_EINVAL, "output_ops is already set.");
	m->has_out = 1;
	m->out = ge_xmalloc((n ? n : 1) * sizeof *m->out);
	m->n_out = n;
	for (size_t i = 0; i < n; i++) {
		m->out[i].len = lens[i];
		m->out[i].m = lens[i] == GE_MATCH_ANY ? NULL :
			ref_list(lists ? lists[i] : NULL, lens[i]);
	}
	return GE_OK;
}

int ge_op_type_in(const ge_graph *g, ge_opid op, const char *const *types,
		  size_t n)
{
	const char *t = ge_op_type(g, op);
	for (size_t i = 0; i < n; i++)
		if (strcmp(t, types[i]) == 0)
			return 1;
	return 0;
}

static int match(ge_opmatcher *m, const ge_graph *g, ge_opid op, int depth,
		 ge_error *err);

static int sub_match(ge_opmatcher *m, const ge_graph *g, ge_opid op,
		     int depth, ge_error *err)
{
	if (!m)
		return 1;
	if (op == GE_NOOP) /* a dangling input has no producer to match */
		return 0;
	return match(m, g, op, depth + 1, err);
}

static int filters_pass(ge_opmatcher *m, const ge_graph *g, ge_opid op,
			ge_error *err)
{
	for (size_t i = 0; i < m->nf; i++) {
		filter *f = &m->f[i];
		int r = 1;
		switch (f->kind) {
		case F_REGEX: {
			const char *name = ge_op_name(g, op);
			r = ge_regex_search(f->re, name, strlen(name), err);
			break;
		}
		case F_OP:
			r = f->op == op;
			break;
		case F_FN:
			r = f->fn(g, op, f->ud);
			if (r < 0)
				r = ge_err(err, GE_EINVAL, "callback failed");
			break;
		case F_TYPES:
			r = ge_op_type_in(g, op, (const char *const *)f->types,
					  f->n_types);
			break;
		}
		if (r <= 0)
			return r;
	}
	return 1;
}

static int match(ge_opmatcher *m, const ge_graph *g, ge_opid op, int depth,
		 ge_error *err)
{
	int r;
	if (depth > MAX_DEPTH)
		return ge_err(err, GE_EINVAL, "matcher nested deeper than %d",
			      MAX_DEPTH);
	if (op >= ge_graph_capacity(g) || !ge_op_alive(g, op))
		return ge_err(err, GE_EINVAL, "%s: not an op of the graph",
			      ge_graph_name(g));
	if ((r = filters_pass(m, g, op, err)) <= 0)
		return r;
	if (m->has_in) {
		if (ge_op_num_inputs(g, op) != m->n_in)
			return 0;
		for (size_t i = 0; i < m->n_in; i++)
			if ((r = sub_match(m->in[i], g, ge_op_input(g, op, i).op,
					   depth, err)) <= 0)
				return r;
	}
	if (m->has_cin) {
		if (ge_op_num_control_inputs(g, op) != m->n_cin)
			return 0;
		for (size_t i = 0; i < m->n_cin; i++)
			if ((r = sub_match(m->cin[i], g,
					   ge_op_control_input(g, op, i), depth,
					   err)) <= 0)
				return r;
	}
	if (m->has_out) {
		if ((size_t)ge_op_num_outputs(g, op) != m->n_out)
			return 0;
		for (size_t i = 0; i < m->n_out; i++) {
			out_entry *e = &m->out[i];
			if (e->len == GE_MATCH_ANY)
				continue;
			ge_tref t = {op, (int32_t)i};
			size_t nc = ge_tensor_consumers(g, t, NULL, 0);
			if (nc != e->len)
				return 0;
			ge_opid *cs = ge_xmalloc((nc ? nc : 1) * sizeof *cs);
			ge_tensor_consumers(g, t, cs, nc);
			r = 1;
			for (size_t k = 0; k < nc && r > 0; k++)
				r = sub_match(e->m[k], g, cs[k], depth, err);
			free(cs);
			if (r <= 0)
				return r;
		}
	}
	return 1;
}

int ge_opmatcher_match(ge_opmatcher *m, const ge_graph *g, ge_opid op,
		       ge_error *err)
{
	return match(m, g, op, 0, err);
}
