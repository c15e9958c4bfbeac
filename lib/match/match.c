/* match.c: the matcher, the op type index and match iteration (match.h). */
#include "match/match_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* ------------------------------------------------------------ results */

void ge_match_free(ge_match *m)
{
	free(m->items);
	free(m->caps);
	free(m->ops);
	free(m->consts);
	memset(m, 0, sizeof *m);
	m->root = GE_NOOP;
}

const ge_capture *ge_match_capture(const ge_match *m, const char *name)
{
	for (size_t i = 0; i < m->n_caps; i++)
		if (!strcmp(m->caps[i].name, name))
			return &m->caps[i];
	return NULL;
}

/* ------------------------------------------------------------ matcher */

/* The capture names of one root pattern, in order of first appearance,
 * and for each: how often it is made inside a rest and outside any, and
 * referred to by a ref; a name made inside a rest is a list capture. */
typedef struct plan_use {
	unsigned in_rest, outside, refs;
	int kind; /* GE_CAP_OP or GE_CAP_TENSOR, of what it holds */
} plan_use;

typedef struct plan {
	const char **names;
	plan_use *use;
	unsigned char *list;
	size_t n;
} plan;

static int plan_walk(plan *pl, const ge_pat *p, int operand, int in_rest,
		     int depth, ge_error *err)
{
	if (depth > MAX_DEPTH)
		return ge_err(err, GE_EINVAL, "pattern nested too deeply");
	if (p->kind == GE_PAT_REST && !operand)
		return ge_err(err, GE_EINVAL,
			      "rest() can only be an operand of op()");
	if (p->capture) {
		size_t i;
		for (i = 0; i < pl->n; i++)
			if (!strcmp(pl->names[i], p->capture))
				break;
		if (i == pl->n) {
			pl->names = ge_xrealloc(pl->names, (pl->n + 1) *
								   sizeof *pl->names);
			pl->use = ge_xrealloc(pl->use,
					      (pl->n + 1) * sizeof *pl->use);
			memset(&pl->use[pl->n], 0, sizeof *pl->use);
			pl->names[pl->n++] = p->capture;
		}
		plan_use *u = &pl->use[i];
		if (p->kind == GE_PAT_REF)
			u->refs++;
		else if (in_rest)
			u->in_rest++;
		else
			u->outside++;
		if (p->kind != GE_PAT_REF)
			u->kind = p->kind == GE_PAT_ANY ? GE_CAP_TENSOR
							: GE_CAP_OP;
	}
	int rc;
	for (size_t i = 0; i < p->n_operands; i++)
		if ((rc = plan_walk(pl, p->operands[i], 1, in_rest, depth + 1,
				    err)))
			return rc;
	for (size_t i = 0; i < p->n_ctrl; i++)
		if ((rc = plan_walk(pl, p->ctrl[i], 0, in_rest, depth + 1,
				    err)))
			return rc;
	if (p->sub &&
	    (rc = plan_walk(pl, p->sub, 0, in_rest || p->kind == GE_PAT_REST,
			    depth + 1, err)))
		return rc;
	return GE_OK;
}

static void plan_free(plan *pl)
{
	free(pl->names);
	free(pl->use);
	free(pl->list);
	memset(pl, 0, sizeof *pl);
}

static int plan_make(plan *pl, const ge_pat *p, ge_error *err)
{
	memset(pl, 0, sizeof *pl);
	int rc = plan_walk(pl, p, 0, 0, 0, err);
	if (!rc)
		pl->list = ge_xcalloc(pl->n + 1, 1);
	for (size_t i = 0; !rc && i < pl->n; i++) {
		const plan_use *u = &pl->use[i];
		if (!u->in_rest)
			continue;
		/* one list per name: the value of each element of the rest */
		if (u->outside || u->refs || u->in_rest > 1)
			rc = ge_err(err, GE_EINVAL,
				    "capture \"%s\" inside rest() holds a "
				    "list: it must appear once, and not in a "
				    "ref (to require one value for every "
				    "element, capture it outside and use "
				    "ref inside)",
				    pl->names[i]);
		pl->list[i] = 1;
	}
	if (rc)
		plan_free(pl);
	return rc;
}

static size_t plan_slot(const plan *pl, const char *name)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->names[i] == name || !strcmp(pl->names[i], name))
			return i;
	return (size_t)-1; /* cannot happen: every name is in the plan */
}

/* Where in the pattern a value is: operand `input` of op `op` (input < 0:
 * a control input), under `up`; NULL at the root. */
typedef struct loc {
	const struct loc *up;
	ge_opid op;
	long input;
} loc;

typedef struct M {
	const ge_graph *g;
	const plan *pl;
	ge_capture *caps;
	ge_tref *items;  /* elements of list captures, in match order */
	size_t *item_slot;
	size_t n_items, cap_items;
	size_t *trail;
	size_t n_trail, cap_trail;
	ge_opid *ops, *consts;
	size_t n_ops, cap_ops, n_consts, cap_consts;
	const uint64_t *claimed; /* non-overlapping mode */
	ge_opid limit;           /* ops at or above are not matched */
	int depth;
	long progress;
	/* explain mode */
	int explain;
	long best;
	ge_buf *why;
	ge_error *err;
} M;

typedef struct mark {
	size_t trail, ops, consts, items;
	long progress;
} mark;

static void m_init(M *m, const ge_graph *g, const plan *pl)
{
	memset(m, 0, sizeof *m);
	m->g = g;
	m->pl = pl;
	m->caps = ge_xcalloc(pl->n + 1, sizeof *m->caps);
	for (size_t i = 0; i < pl->n; i++)
		m->caps[i].name = pl->names[i];
	m->limit = (ge_opid)ge_graph_capacity(g);
	m->best = -1;
}

static void m_free(M *m)
{
	free(m->caps);
	free(m->items);
	free(m->item_slot);
	free(m->trail);
	free(m->ops);
	free(m->consts);
}

static void save(const M *m, mark *k)
{
	k->trail = m->n_trail;
	k->items = m->n_items;
	k->ops = m->n_ops;
	k->consts = m->n_consts;
	k->progress = m->progress;
}

static void undo(M *m, const mark *k)
{
	while (m->n_trail > k->trail)
		m->caps[m->trail[--m->n_trail]].kind = GE_CAP_NONE;
	m->n_items = k->items;
	m->n_ops = k->ops;
	m->n_consts = k->consts;
	m->progress = k->progress;
}

static void m_reset(M *m)
{
	static const mark zero;
	undo(m, &zero);
	m->depth = 0;
}

static void push_id(ge_opid **v, size_t *n, size_t *cap, ge_opid id)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = ge_xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = id;
}

static void bind(M *m, size_t slot, int kind, ge_tref t)
{
	if (m->n_trail == m->cap_trail) {
		m->cap_trail = m->cap_trail ? m->cap_trail * 2 : 16;
		m->trail = ge_xrealloc(m->trail,
				       m->cap_trail * sizeof *m->trail);
	}
	m->trail[m->n_trail++] = slot;
	m->caps[slot].kind = kind;
	m->caps[slot].t = t;
}

/* One more element of a list capture (undone with the marks). */
static void bind_item(M *m, size_t slot, ge_tref t)
{
	if (m->n_items == m->cap_items) {
		m->cap_items = m->cap_items ? m->cap_items * 2 : 16;
		m->items = ge_xrealloc(m->items,
				       m->cap_items * sizeof *m->items);
		m->item_slot = ge_xrealloc(m->item_slot, m->cap_items *
							 sizeof *m->item_slot);
	}
	m->items[m->n_items] = t;
	m->item_slot[m->n_items++] = slot;
}

/* ---- explanations ---- */

enum { F_SUBJECT, F_GOT, F_PLAIN };

static void add_op(ge_buf *b, const ge_graph *g, ge_opid op)
{
	ge_buf_printf(b, "%s ", ge_op_type(g, op));
	const char *n = ge_op_name(g, op);
	ge_pat_add_quoted(b, n, strlen(n), 200);
}

static void add_subject(ge_buf *b, const ge_graph *g, ge_tref t,
			int tensor)
{
	if (tensor) {
		ge_buf_adds(b, "tensor ");
		ge_buf *tmp = &(ge_buf)GE_BUF_INIT;
		ge_tensor_put(g, (ge_tref){t.op, t.index < 0 ? 0 : t.index}, 0,
			      tmp);
		ge_pat_add_quoted(b, (const char *)tmp->data, tmp->len, 200);
		ge_buf_free(tmp);
	} else {
		add_op(b, g, t.op);
	}
}

static void add_path(ge_buf *b, const ge_graph *g, const loc *at)
{
	/* the chain is innermost first; print it from the root */
	size_t n = 0;
	for (const loc *l = at; l; l = l->up)
		n++;
	const loc **v = ge_xmalloc(n * sizeof *v);
	size_t i = n;
	for (const loc *l = at; l; l = l->up)
		v[--i] = l;
	ge_buf_adds(b, "\n  path: ");
	for (i = 0; i < n; i++) {
		if (i)
			ge_buf_adds(b, " > ");
		add_op(b, g, v[i]->op);
	}
	free(v);
}

static int vfail(M *m, const loc *at, ge_tref t, int style, int tensor,
		 const char *fmt, va_list ap)
{
	if (!m->explain || m->progress <= m->best)
		return 0;
	m->best = m->progress;
	ge_buf *b = m->why;
	b->len = 0;
	ge_buf what = GE_BUF_INIT;
	char tmp[512];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	ge_buf_adds(&what, tmp);
	if (at) {
		if (at->input >= 0)
			ge_buf_printf(b, "operand %ld of ", at->input);
		else
			ge_buf_adds(b, "control input of ");
		add_op(b, m->g, at->op);
	}
	switch (style) {
	case F_GOT:
		if (at)
			ge_buf_adds(b, ": ");
		ge_buf_printf(b, "%s, got ", (char *)what.data);
		add_subject(b, m->g, t, tensor);
		break;
	case F_PLAIN:
		ge_buf_printf(b, "%s%s", at ? ": " : "", (char *)what.data);
		break;
	default:
		if (at) {
			ge_buf_adds(b, " (");
			add_subject(b, m->g, t, tensor);
			ge_buf_adds(b, "): ");
		} else {
			add_subject(b, m->g, t, tensor);
			ge_buf_adds(b, ": ");
		}
		ge_buf_adds(b, (char *)what.data);
	}
	if (at && at->up)
		add_path(b, m->g, at);
	ge_buf_free(&what);
	return 0;
}

static int fail(M *m, const loc *at, ge_tref t, int style, int tensor,
		const char *fmt, ...) GE_PRINTF(6, 7);
static int fail(M *m, const loc *at, ge_tref t, int style, int tensor,
		const char *fmt, ...)
{
	if (!m->explain)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	vfail(m, at, t, style, tensor, fmt, ap);
	va_end(ap);
	return 0;
}

/* ---- local checks ---- */

static int cb_failed(M *m)
{
	return ge_err(m->err, GE_EINVAL, "callback failed");
}

static const Tensorflow__AttrValue *attr_get(const ge_graph *g, ge_opid op,
					     const char *name)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, name, NULL);
	if (v)
		return v;
	const Tensorflow__OpDef *d = ge_graph_opdef(g, ge_op_type(g, op));
	for (size_t i = 0; d && i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name))
			return d->attr[i]->default_value;
	return NULL;
}

static int same_s(const ProtobufCBinaryData *s, int type)
{
	char buf[64];
	if (s->len >= sizeof buf)
		return 0;
	memcpy(buf, s->data, s->len);
	buf[s->len] = 0;
	int d = ge_dtype_from_name(buf);
	return d >= 0 && d == type;
}

static int packed_equal(const Tensorflow__AttrValue *a,
			const Tensorflow__AttrValue *b)
{
	size_t la = tensorflow__attr_value__get_packed_size(a);
	size_t lb = tensorflow__attr_value__get_packed_size(b);
	if (la != lb)
		return 0;
	uint8_t *x = ge_xmalloc(la + 1), *y = ge_xmalloc(lb + 1);
	tensorflow__attr_value__pack(a, x);
	tensorflow__attr_value__pack(b, y);
	int eq = memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return eq;
}

/* Equality of an actual attr value (a) and an expected one (e).  A
 * binding builds e from a script's value without knowing the attr's
 * kind, so a string matches a dtype by name, and an int a float of the
 * same value (in lists too). */
static int attr_equal(const Tensorflow__AttrValue *a,
		      const Tensorflow__AttrValue *e)
{
	int ac = a->value_case, ec = e->value_case;
	if (ac == TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
	    ec == TENSORFLOW__ATTR_VALUE__VALUE_S)
		return same_s(&e->s, (int)a->type);
	if (ac == TENSORFLOW__ATTR_VALUE__VALUE_F &&
	    ec == TENSORFLOW__ATTR_VALUE__VALUE_I)
		return (double)a->f == (double)e->i;
	if (ac == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE &&
	    ec == TENSORFLOW__ATTR_VALUE__VALUE_LIST && e->list) {
		/* a list of ints for a shape: the dims of a known shape */
		const Tensorflow__TensorShapeProto *sh = a->shape;
		if (!sh || sh->unknown_rank || sh->n_dim != e->list->n_i)
			return 0;
		for (size_t i = 0; i < sh->n_dim; i++)
			if (sh->dim[i]->size != e->list->i[i])
				return 0;
		return 1;
	}
	if (ac == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
	    ec == TENSORFLOW__ATTR_VALUE__VALUE_LIST && a->list && e->list) {
		const Tensorflow__AttrValue__ListValue *x = a->list, *y = e->list;
		if (x->n_type && y->n_s && !y->n_type) {
			if (x->n_type != y->n_s)
				return 0;
			for (size_t i = 0; i < x->n_type; i++)
				if (!same_s(&y->s[i], (int)x->type[i]))
					return 0;
			return 1;
		}
		if (x->n_f && y->n_i && !y->n_f) {
			if (x->n_f != y->n_i)
				return 0;
			for (size_t i = 0; i < x->n_f; i++)
				if ((double)x->f[i] != (double)y->i[i])
					return 0;
			return 1;
		}
	}
	if (ac != ec)
		return 0;
	switch (ac) {
	case TENSORFLOW__ATTR_VALUE__VALUE_S:
		return a->s.len == e->s.len &&
		       (!a->s.len || !memcmp(a->s.data, e->s.data, a->s.len));
	case TENSORFLOW__ATTR_VALUE__VALUE_I:
		return a->i == e->i;
	case TENSORFLOW__ATTR_VALUE__VALUE_F:
		return a->f == e->f || (isnan(a->f) && isnan(e->f));
	case TENSORFLOW__ATTR_VALUE__VALUE_B:
		return !a->b == !e->b;
	case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
		return a->type == e->type;
	case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
		return !strcmp(a->placeholder, e->placeholder);
	default:
		/* lists, shapes, tensors, functions: both re-encoded by the
		 * same encoder, so equal values give equal bytes */
		return packed_equal(a, e);
	}
}

static size_t count_consumers(const ge_graph *g, ge_opid op)
{
	size_t n, k = 0;
	const ge_use *u = ge_op_uses(g, op, &n);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || u[i].op != u[i - 1].op)
			k++;
	return k;
}

static void add_range(char *buf, size_t len, size_t min, size_t max)
{
	if (min == max)
		snprintf(buf, len, "exactly %zu", min);
	else if (max == SIZE_MAX)
		snprintf(buf, len, "at least %zu", min);
	else if (min == 0)
		snprintf(buf, len, "at most %zu", max);
	else
		snprintf(buf, len, "between %zu and %zu", min, max);
}

static int is_claimed(const M *m, ge_opid id)
{
	return m->claimed && ((m->claimed[id >> 6] >> (id & 63)) & 1);
}

static int check_shape(M *m, const ge_pat *p, ge_tref t, const loc *at,
		       int tensor)
{
	const ge_graph *g = m->g;
	int idx = t.index < 0 ? 0 : t.index;
	int64_t small[16], *dims = small;
	int rank = ge_op_output_shape(g, t.op, idx, small, 16);
	if (rank > 16) {
		dims = ge_xmalloc((size_t)rank * sizeof *dims);
		rank = ge_op_output_shape(g, t.op, idx, dims, rank);
	}
	int ok = rank == p->rank;
	for (int i = 0; ok && i < rank; i++)
		if (p->dims[i] != -1 && p->dims[i] != dims[i])
			ok = 0;
	if (!ok && m->explain) {
		ge_buf want = GE_BUF_INIT, got = GE_BUF_INIT;
		ge_buf_addc(&want, '[');
		for (int i = 0; i < p->rank; i++)
			ge_buf_printf(&want, "%s%lld", i ? "," : "",
				      (long long)p->dims[i]);
		ge_buf_addc(&want, ']');
		if (rank < 0) {
			ge_buf_adds(&got, "an unknown shape");
		} else {
			ge_buf_adds(&got, "shape [");
			for (int i = 0; i < rank; i++)
				ge_buf_printf(&got, "%s%lld", i ? "," : "",
					      (long long)dims[i]);
			ge_buf_addc(&got, ']');
		}
		fail(m, at, t, F_SUBJECT, tensor, "output %d has %s, expected %s",
		     idx, (char *)got.data, (char *)want.data);
		ge_buf_free(&want);
		ge_buf_free(&got);
	}
	if (dims != small)
		free(dims);
	return ok;
}

/* The checks of one node against the value t (its producer t.op is
 * live).  On success the capture is bound and the op recorded. */
/* The dtype of the matched output is one of p's: 1, or 0 after failing. */
static int check_dtype(M *m, const ge_pat *p, ge_tref t, const loc *at,
		       int tensor)
{
	const ge_graph *g = m->g;
	int idx = t.index < 0 ? 0 : t.index;
	int d = ge_pat_base_dtype(ge_op_output_dtype(g, t.op, idx));
	size_t i;
	for (i = 0; i < p->n_dtypes; i++)
		if (p->dtypes[i] == d)
			break;
	if (i == p->n_dtypes) {
		if (!m->explain)
			return 0;
		ge_buf want = GE_BUF_INIT, got = GE_BUF_INIT;
		for (i = 0; i < p->n_dtypes; i++) {
			if (i)
				ge_buf_adds(&want, " or ");
			ge_pat_add_dtype(&want, p->dtypes[i]);
		}
		if (d)
			ge_pat_add_dtype(&got, d);
		else
			ge_buf_adds(&got, "of unknown dtype");
		fail(m, at, t, F_SUBJECT, tensor,
		     "output %d is %s, expected %s", idx,
		     (char *)got.data, (char *)want.data);
		ge_buf_free(&want);
		ge_buf_free(&got);
		return 0;
	}
	return 1;
}

/* The attrs of the op equal p's or pass their callbacks: 1, 0 after
 * failing, < 0 when a callback failed. */
static int check_attrs(M *m, const ge_pat *p, ge_tref t, const loc *at,
		       int tensor)
{
	const ge_graph *g = m->g;
	ge_opid op = t.op;
	for (size_t i = 0; i < p->n_attrs; i++) {
		const attr_req *a = &p->attrs[i];
		const Tensorflow__AttrValue *v = attr_get(g, op, a->name);
		if (a->fn) {
			int r = a->fn(g, op, a->name, v, a->ud->ud);
			if (r < 0)
				return cb_failed(m);
			if (!r)
				return fail(m, at, t, F_SUBJECT, tensor,
					    "attr %s rejected by the predicate",
					    a->name);
			continue;
		}
		if (v && attr_equal(v, a->val))
			continue;
		if (!m->explain)
			return 0;
		ge_buf want = GE_BUF_INIT, got = GE_BUF_INIT;
		ge_pat_add_attr(&want, a->val);
		if (v)
			ge_pat_add_attr(&got, v);
		if (v)
			fail(m, at, t, F_SUBJECT, tensor,
			     "attr %s is %s, expected %s", a->name,
			     (char *)got.data, (char *)want.data);
		else
			fail(m, at, t, F_SUBJECT, tensor,
			     "no attr %s, expected %s", a->name,
			     (char *)want.data);
		ge_buf_free(&want);
		ge_buf_free(&got);
		return 0;
	}
	return 1;
}

static int check_local(M *m, const ge_pat *p, ge_tref t, const loc *at)
{
	const ge_graph *g = m->g;
	ge_opid op = t.op;
	int tensor = p->kind == GE_PAT_ANY || p->kind == GE_PAT_REF;
	int is_op = p->kind == GE_PAT_OP || p->kind == GE_PAT_CONST;
	const char *type = ge_op_type(g, op);

	if (p->kind == GE_PAT_CONST && strcmp(type, "Const"))
		return fail(m, at, t, F_GOT, 0, "expected Const");
	if (p->kind == GE_PAT_OP && p->n_types) {
		size_t i;
		for (i = 0; i < p->n_types; i++)
			if (!strcmp(type, p->types[i]))
				break;
		if (i == p->n_types)
			return fail(m, at, t, F_GOT, 0, "expected %s",
				    p->types_text);
	}
	if (is_op && op >= m->limit)
		return fail(m, at, t, F_SUBJECT, 0,
			    "created after the matching started");
	if (p->kind == GE_PAT_OP && is_claimed(m, op))
		return fail(m, at, t, F_SUBJECT, 0,
			    "already part of an earlier match");

	size_t slot = (size_t)-1;
	int kind = is_op ? GE_CAP_OP : GE_CAP_TENSOR;
	if (p->capture) {
		slot = plan_slot(m->pl, p->capture);
		const ge_capture *c = &m->caps[slot];
		if (c->kind != GE_CAP_NONE) {
			int same = c->kind == GE_CAP_TENSOR &&
						   kind == GE_CAP_TENSOR
					   ? ge_tref_eq(c->t, t)
					   : c->t.op == op;
			if (!same) {
				if (!m->explain)
					return 0;
				ge_buf b = GE_BUF_INIT;
				add_subject(&b, g, c->t,
					    c->kind == GE_CAP_TENSOR);
				fail(m, at, t, F_SUBJECT, tensor,
				     "is not the same as capture \"%s\" (%s)",
				     p->capture, (char *)b.data);
				ge_buf_free(&b);
				return 0;
			}
			slot = (size_t)-1; /* already bound */
		}
	}

	if (p->n_ctrl || p->has_ctl) {
		size_t nc = ge_op_num_control_inputs(g, op);
		size_t lo = p->has_ctl ? p->ctl_min : p->n_ctrl;
		size_t hi = p->has_ctl ? p->ctl_max : p->n_ctrl;
		if (nc < lo || nc > hi) {
			char r[64];
			add_range(r, sizeof r, lo, hi);
			return fail(m, at, t, F_SUBJECT, tensor,
				    "has %zu control input%s, expected %s", nc,
				    nc == 1 ? "" : "s", r);
		}
	}
	if (p->has_cons) {
		size_t nc = tensor ? ge_tensor_consumers(g, t, NULL, 0)
				   : count_consumers(g, op);
		if (nc < p->cons_min || nc > p->cons_max) {
			char r[64];
			add_range(r, sizeof r, p->cons_min, p->cons_max);
			return fail(m, at, t, F_SUBJECT, tensor,
				    "has %zu consumer%s, expected %s", nc,
				    nc == 1 ? "" : "s", r);
		}
	}
	if (p->n_dtypes && !check_dtype(m, p, t, at, tensor))
		return 0;
	if (p->has_shape && !check_shape(m, p, t, at, tensor))
		return 0;
	if (p->name_re) {
		const char *name = ge_op_name(g, op);
		int r = ge_regex_search(p->name_re, name, strlen(name), m->err);
		if (r < 0)
			return r;
		if (!r)
			return fail(m, at, t, F_SUBJECT, tensor,
				    "name does not match /%s/",
				    ge_regex_pattern(p->name_re));
	}
	int r = check_attrs(m, p, t, at, tensor);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < p->n_preds; i++) {
		int r = p->preds[i].fn(g, t, p->preds[i].ud->ud);
		if (r < 0)
			return cb_failed(m);
		if (!r)
			return fail(m, at, t, F_SUBJECT, tensor,
				    "rejected by the predicate");
	}

	if (slot != (size_t)-1 && m->pl->list[slot])
		bind_item(m, slot, t);
	else if (slot != (size_t)-1)
		bind(m, slot, kind, t);
	if (p->kind == GE_PAT_OP)
		push_id(&m->ops, &m->n_ops, &m->cap_ops, op);
	else if (p->kind == GE_PAT_CONST)
		push_id(&m->consts, &m->n_consts, &m->cap_consts, op);
	return 1;
}

/* ---- the search ----
 *
 * Backtracking in continuation-passing style: m_pat(p, t, k) matches p
 * against t and then runs the continuation k (the rest of the pattern);
 * it returns 1 when both succeed, leaving the bindings in place, 0 after
 * undoing what it bound, or a negative error.  Continuations live on the
 * C stack of the frames that made them. */

typedef struct K K;
struct K {
	int (*fn)(M *m, const K *k);
};

static int run(M *m, const K *k)
{
	return k ? k->fn(m, k) : 1;
}

static int m_pat(M *m, const ge_pat *p, ge_tref t, const loc *at,
		 const K *k);

/* Whether p has a single way to match: then the elements of a rest can
 * be matched in a loop instead of by nested continuations. */
static int is_det(const ge_pat *p, int depth)
{
	if (p->kind == GE_PAT_OPTIONAL || p->kind == GE_PAT_REST ||
	    p->commute || p->n_ctrl || depth > 32)
		return 0;
	for (size_t i = 0; i < p->n_operands; i++)
		if (!is_det(p->operands[i], depth + 1))
			return 0;
	return 1;
}

typedef struct restk {
	K k;
	const ge_pat *sub;
	ge_opid op;
	size_t j, end;
	const loc *at;
	const K *after;
} restk;

static int m_rest(M *m, const ge_pat *sub, ge_opid op, size_t j, size_t end,
		  const loc *at, const K *after);

static int rest_cont(M *m, const K *k)
{
	const restk *r = (const restk *)k;
	return m_rest(m, r->sub, r->op, r->j, r->end, r->at, r->after);
}

static int m_rest(M *m, const ge_pat *sub, ge_opid op, size_t j, size_t end,
		  const loc *at, const K *after)
{
	int r;
	if (j == end)
		return run(m, after);
	if (is_det(sub, 0)) {
		mark mk;
		save(m, &mk);
		for (; j < end; j++) {
			loc l = {at, op, (long)j};
			r = m_pat(m, sub, ge_op_input(m->g, op, j), &l, NULL);
			if (r <= 0) {
				if (!r)
					undo(m, &mk);
				return r;
			}
		}
		r = run(m, after);
		if (!r)
			undo(m, &mk);
		return r;
	}
	loc l = {at, op, (long)j};
	restk nk = {{rest_cont}, sub, op, j + 1, end, at, after};
	return m_pat(m, sub, ge_op_input(m->g, op, j), &l, &nk.k);
}

typedef struct seqk {
	K k;
	const ge_pat *p;
	ge_opid op;
	size_t ip, ii;
	int swap;
	const loc *at;
	const K *next;
} seqk;

static int m_seq(M *m, const ge_pat *p, ge_opid op, size_t ip, size_t ii,
		 int swap, const loc *at, const K *k);

static int seq_cont(M *m, const K *k)
{
	const seqk *s = (const seqk *)k;
	return m_seq(m, s->p, s->op, s->ip, s->ii, s->swap, s->at, s->next);
}

/* Operands ip.. of p against inputs ii.. of op; `at` is op's own place. */
static int m_seq(M *m, const ge_pat *p, ge_opid op, size_t ip, size_t ii,
		 int swap, const loc *at, const K *k)
{
	size_t np = p->n_operands, ni = ge_op_num_inputs(m->g, op);
	if (ip == np)
		return ii == ni ? run(m, k) : 0;
	const ge_pat *q = p->operands[swap ? ip ^ 1 : ip];
	if (q->kind == GE_PAT_REST) {
		size_t fixed = 0;
		int more = 0;
		for (size_t j = ip + 1; j < np; j++) {
			if (p->operands[j]->kind == GE_PAT_REST)
				more = 1;
			else
				fixed++;
		}
		if (ni - ii < fixed)
			return 0;
		size_t max = ni - ii - fixed, min = more ? 0 : max;
		for (size_t len = max;; len--) {
			seqk nk = {{seq_cont}, p, op, ip + 1, ii + len, swap,
				   at, k};
			int r = m_rest(m, q->sub, op, ii, ii + len, at, &nk.k);
			if (r || len == min)
				return r;
		}
	}
	loc l = {at, op, (long)ii};
	seqk nk = {{seq_cont}, p, op, ip + 1, ii + 1, swap, at, k};
	return m_pat(m, q, ge_op_input(m->g, op, ii), &l, &nk.k);
}

typedef struct ctrlk {
	K k;
	const ge_pat *p;
	ge_opid op;
	size_t j;
	uint8_t *used;
	const loc *at;
	const K *next;
} ctrlk;

static int m_ctrl(M *m, const ge_pat *p, ge_opid op, size_t j, uint8_t *used,
		  const loc *at, const K *k);

static int ctrl_cont(M *m, const K *k)
{
	const ctrlk *c = (const ctrlk *)k;
	return m_ctrl(m, c->p, c->op, c->j, c->used, c->at, c->next);
}

/* Control operand j onwards, each against a control input not used yet. */
static int m_ctrl(M *m, const ge_pat *p, ge_opid op, size_t j, uint8_t *used,
		  const loc *at, const K *k)
{
	if (j == p->n_ctrl)
		return run(m, k);
	size_t nc = ge_op_num_control_inputs(m->g, op);
	for (size_t i = 0; i < nc; i++) {
		ge_opid c = ge_op_control_input(m->g, op, i);
		if (used[i] || c == GE_NOOP)
			continue;
		used[i] = 1;
		loc l = {at, op, -1};
		ctrlk nk = {{ctrl_cont}, p, op, j + 1, used, at, k};
		int r = m_pat(m, p->ctrl[j], (ge_tref){c, GE_CONTROL}, &l,
			      &nk.k);
		used[i] = 0;
		if (r)
			return r;
	}
	return 0;
}

typedef struct ctrlstart {
	K k;
	const ge_pat *p;
	ge_opid op;
	const loc *at;
	const K *next;
} ctrlstart;

static int ctrl_start(M *m, const K *k)
{
	const ctrlstart *c = (const ctrlstart *)k;
	size_t nc = ge_op_num_control_inputs(m->g, c->op);
	uint8_t *used = ge_xcalloc(nc + 1, 1);
	int r = m_ctrl(m, c->p, c->op, 0, used, c->at, c->next);
	free(used);
	return r;
}

static int m_operands(M *m, const ge_pat *p, ge_tref t, const loc *at,
		      const K *k)
{
	ge_opid op = t.op;
	ctrlstart cs = {{ctrl_start}, p, op, at, k};
	const K *after = p->n_ctrl ? &cs.k : k;
	if (!p->n_operands)
		return run(m, after);
	size_t ni = ge_op_num_inputs(m->g, op), rests = 0;
	for (size_t i = 0; i < p->n_operands; i++)
		rests += p->operands[i]->kind == GE_PAT_REST;
	size_t fixed = p->n_operands - rests;
	if (!rests && ni != fixed)
		return fail(m, at, t, F_SUBJECT, 0,
			    "has %zu data input%s, expected %zu", ni,
			    ni == 1 ? "" : "s", fixed);
	if (rests && ni < fixed)
		return fail(m, at, t, F_SUBJECT, 0,
			    "has %zu data input%s, expected at least %zu", ni,
			    ni == 1 ? "" : "s", fixed);
	int r = m_seq(m, p, op, 0, 0, 0, at, after);
	if (r == 0 && p->commute && p->operands[0] != p->operands[1])
		r = m_seq(m, p, op, 0, 0, 1, at, after);
	return r;
}

static int m_pat(M *m, const ge_pat *p, ge_tref t, const loc *at,
		 const K *k)
{
	int r;
	if (m->depth >= MAX_DEPTH)
		return ge_err(m->err, GE_EINVAL,
			      "pattern matching nested too deeply at '%s'",
			      ge_op_name(m->g, at ? at->op : t.op));
	m->depth++;
	mark mk;
	save(m, &mk);
	if (p->kind == GE_PAT_OPTIONAL) {
		r = m_pat(m, p->sub, t, at, k);
		if (r == 0) {
			undo(m, &mk);
			r = m_pat(m, p->sub->operands[0], t, at, k);
		}
		m->depth--;
		return r;
	}
	if (t.op == GE_NOOP) {
		if (m->explain) {
			const char *d = at && at->input >= 0
						? ge_op_dangling_input(
							  m->g, at->op,
							  (size_t)at->input)
						: NULL;
			fail(m, at, t, F_PLAIN, 0,
			     "the input names no op in the graph (\"%s\")",
			     d ? d : "?");
		}
		m->depth--;
		return 0;
	}
	r = check_local(m, p, t, at);
	if (r > 0) {
		m->progress++;
		if ((p->kind == GE_PAT_OP || p->kind == GE_PAT_CONST) &&
		    (p->n_operands || p->n_ctrl))
			r = m_operands(m, p, t, at, k);
		else
			r = run(m, k);
	}
	if (r == 0)
		undo(m, &mk);
	m->depth--;
	return r;
}

/* The operands' place is the op's own place, extended per operand by
 * m_seq: at the root it is NULL, and the root's operands get
 * {NULL, root, i}. */

static int cmp_id(const void *a, const void *b)
{
	ge_opid x = *(const ge_opid *)a, y = *(const ge_opid *)b;
	return x < y ? -1 : x > y;
}

static size_t sort_unique(ge_opid *v, size_t n)
{
	if (n < 2)
		return n;
	qsort(v, n, sizeof *v, cmp_id);
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* The list captures of a result: each slot's elements, in match order,
 * gathered slot by slot into out->items. */
static void take_lists(const M *m, ge_match *out)
{
	if (out->cap_items < m->n_items + 1) {
		out->cap_items = m->n_items + 1;
		out->items = ge_xrealloc(out->items,
					 out->cap_items * sizeof *out->items);
	}
	size_t k = 0;
	for (size_t s = 0; s < m->pl->n; s++) {
		ge_capture *c = &out->caps[s];
		c->is_list = m->pl->list[s];
		c->items = NULL;
		c->n_items = 0;
		if (!c->is_list)
			continue;
		c->kind = m->pl->use[s].kind;
		c->items = out->items + k;
		for (size_t i = 0; i < m->n_items; i++)
			if (m->item_slot[i] == s)
				out->items[k++] = m->items[i];
		c->n_items = (size_t)(out->items + k - c->items);
	}
}

static void take_result(M *m, ge_opid root, ge_match *out)
{
	out->root = root;
	if (out->cap_caps < m->pl->n) {
		out->cap_caps = m->pl->n;
		out->caps = ge_xrealloc(out->caps,
					out->cap_caps * sizeof *out->caps);
	}
	if (m->pl->n)
		memcpy(out->caps, m->caps, m->pl->n * sizeof *out->caps);
	out->n_caps = m->pl->n;
	take_lists(m, out);
	if (out->cap_ops < m->n_ops) {
		out->cap_ops = m->n_ops;
		out->ops = ge_xrealloc(out->ops, out->cap_ops * sizeof *out->ops);
	}
	if (m->n_ops)
		memcpy(out->ops, m->ops, m->n_ops * sizeof *out->ops);
	out->n_ops = sort_unique(out->ops, m->n_ops);
	if (out->cap_consts < m->n_consts) {
		out->cap_consts = m->n_consts;
		out->consts = ge_xrealloc(out->consts,
					  out->cap_consts * sizeof *out->consts);
	}
	if (m->n_consts)
		memcpy(out->consts, m->consts,
		       m->n_consts * sizeof *out->consts);
	size_t nc = sort_unique(out->consts, m->n_consts), k = 0, j = 0;
	/* an op matched by both kinds is listed once, with the ops */
	for (size_t i = 0; i < nc; i++) {
		while (j < out->n_ops && out->ops[j] < out->consts[i])
			j++;
		if (j < out->n_ops && out->ops[j] == out->consts[i])
			continue;
		out->consts[k++] = out->consts[i];
	}
	out->n_consts = k;
}

static int root_ok(const ge_pat *p, ge_error *err)
{
	if (p->kind == GE_PAT_REST)
		return ge_err(err, GE_EINVAL,
			      "rest() can only be an operand of op()");
	return GE_OK;
}

int ge_match_at(const ge_pat *p, const ge_graph *g, ge_opid op, ge_match *out,
		ge_error *err)
{
	plan pl;
	int rc;
	if ((rc = root_ok(p, err)) || (rc = plan_make(&pl, p, err)))
		return rc;
	if (!ge_op_alive(g, op)) {
		plan_free(&pl);
		return 0;
	}
	M m;
	m_init(&m, g, &pl);
	m.err = err;
	rc = m_pat(&m, p, (ge_tref){op, 0}, NULL, NULL);
	if (rc > 0 && out)
		take_result(&m, op, out);
	m_free(&m);
	plan_free(&pl);
	return rc;
}

int ge_match_explain(const ge_pat *p, const ge_graph *g, ge_opid op,
		     ge_buf *out, ge_error *err)
{
	plan pl;
	int rc;
	if ((rc = root_ok(p, err)) || (rc = plan_make(&pl, p, err)))
		return rc;
	if (!ge_op_alive(g, op)) {
		plan_free(&pl);
		if (op < ge_graph_capacity(g))
			ge_buf_printf(out, "op \"%s\" was removed from the graph",
				      ge_op_name(g, op));
		else
			ge_buf_printf(out, "no op with id %u", op);
		return 0;
	}
	M m;
	ge_buf why = GE_BUF_INIT;
	m_init(&m, g, &pl);
	m.err = err;
	m.explain = 1;
	m.why = &why;
	rc = m_pat(&m, p, (ge_tref){op, 0}, NULL, NULL);
	if (rc > 0)
		ge_buf_adds(out, "matches");
	else if (rc == 0)
		ge_buf_add(out, why.data ? why.data : (const uint8_t *)"",
			   why.len);
	ge_buf_free(&why);
	m_free(&m);
	plan_free(&pl);
	return rc;
}

/* ------------------------------------------------------------ type index */

struct ge_opindex {
	const ge_graph *g;
	uint64_t version;
	size_t capacity;
	int built;
	const char **types;  /* the graph's interned type strings */
	size_t n_types;
	size_t *start;       /* ops of types[i]: ids[start[i] .. start[i+1]) */
	ge_opid *ids;
};

ge_opindex *ge_opindex_new(void)
{
	return ge_xcalloc(1, sizeof(ge_opindex));
}

void ge_opindex_free(ge_opindex *ix)
{
	if (!ix)
		return;
	free(ix->types);
	free(ix->start);
	free(ix->ids);
	free(ix);
}

static uint32_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

void ge_opindex_sync(ge_opindex *ix, const ge_graph *g)
{
	size_t cap = ge_graph_capacity(g);
	if (ix->built && ix->g == g && ix->version == ge_graph_version(g) &&
	    ix->capacity == cap)
		return;
	/* Op types are interned by the graph, so a pointer names a type:
	 * one hash probe per op, no string compares.  A pointer not seen
	 * before is compared by content with the known types, so two
	 * copies of one type string still share a bucket. */
	uint32_t *bucket = ge_xmalloc((cap + 1) * sizeof *bucket);
	struct pslot {
		const char *p;
		uint32_t b;
	} *h;
	size_t hcap = 256, hn = 0, nt = 0;
	h = ge_xcalloc(hcap, sizeof *h);
	const char **types = NULL;
	size_t *count = NULL, tcap = 0;
	const char *last = NULL;
	uint32_t lastb = 0;
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id)) {
			bucket[id] = UINT32_MAX;
			continue;
		}
		const char *t = ge_op_type(g, (ge_opid)id);
		uint32_t b;
		if (t == last) {
			b = lastb;
		} else {
			size_t j = ptr_hash(t) & (hcap - 1);
			while (h[j].p && h[j].p != t)
				j = (j + 1) & (hcap - 1);
			if (h[j].p) {
				b = h[j].b;
			} else {
				size_t k;
				for (k = 0; k < nt; k++)
					if (!strcmp(types[k], t))
						break;
				if (k == nt) {
					if (nt == tcap) {
						tcap = tcap ? tcap * 2 : 64;
						types = ge_xrealloc(
							types, tcap * sizeof *types);
						count = ge_xrealloc(
							count, tcap * sizeof *count);
					}
					types[nt] = t;
					count[nt++] = 0;
				}
				b = (uint32_t)k;
				h[j].p = t;
				h[j].b = b;
				if (++hn * 2 > hcap) {
					size_t nh = hcap * 2;
					struct pslot *h2 = ge_xcalloc(nh, sizeof *h2);
					for (size_t q = 0; q < hcap; q++) {
						if (!h[q].p)
							continue;
						size_t r = ptr_hash(h[q].p) & (nh - 1);
						while (h2[r].p)
							r = (r + 1) & (nh - 1);
						h2[r] = h[q];
					}
					free(h);
					h = h2;
					hcap = nh;
				}
			}
			last = t;
			lastb = b;
		}
		bucket[id] = b;
		count[b]++;
	}
	free(h);
	free(ix->types);
	free(ix->start);
	free(ix->ids);
	ix->types = types;
	ix->n_types = nt;
	ix->start = ge_xmalloc((nt + 1) * sizeof *ix->start);
	size_t total = 0;
	for (size_t i = 0; i < nt; i++) {
		ix->start[i] = total;
		total += count[i];
		count[i] = ix->start[i]; /* fill cursor */
	}
	ix->start[nt] = total;
	ix->ids = ge_xmalloc((total + 1) * sizeof *ix->ids);
	for (size_t id = 0; id < cap; id++)
		if (bucket[id] != UINT32_MAX)
			ix->ids[count[bucket[id]]++] = (ge_opid)id;
	free(count);
	free(bucket);
	ix->g = g;
	ix->version = ge_graph_version(g);
	ix->capacity = cap;
	ix->built = 1;
}

const ge_opid *ge_opindex_get(const ge_opindex *ix, const char *type,
			      size_t *n)
{
	for (size_t i = 0; i < ix->n_types; i++)
		if (!strcmp(ix->types[i], type)) {
			*n = ix->start[i + 1] - ix->start[i];
			return ix->ids + ix->start[i];
		}
	*n = 0;
	return NULL;
}

/* ------------------------------------------------------------ iteration */

struct ge_match_iter {
	const ge_pat *p;
	const ge_graph *g;
	plan pl;
	M m;
	int flags;
	int all;            /* every op is a candidate root */
	ge_opid *cand;
	size_t n_cand, pos;
	ge_opid limit;
	uint64_t *claimed;
};

/* The types the root can have; *all when any type can be the root. */
static void root_types(const ge_pat *p, const char ***v, size_t *n,
		       size_t *cap, int *all)
{
	switch (p->kind) {
	case GE_PAT_OP:
		if (!p->n_types) {
			*all = 1;
			return;
		}
		for (size_t i = 0; i < p->n_types; i++) {
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 8;
				*v = ge_xrealloc(*v, *cap * sizeof **v);
			}
			(*v)[(*n)++] = p->types[i];
		}
		return;
	case GE_PAT_CONST:
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*v = ge_xrealloc(*v, *cap * sizeof **v);
		}
		(*v)[(*n)++] = "Const";
		return;
	case GE_PAT_OPTIONAL:
		root_types(p->sub, v, n, cap, all);
		root_types(p->sub->operands[0], v, n, cap, all);
		return;
	default:
		*all = 1;
	}
}

int ge_match_iter_new(const ge_pat *p, const ge_graph *g, ge_opindex *ix,
		      int flags, ge_match_iter **out, ge_error *err)
{
	int rc;
	*out = NULL;
	if ((rc = root_ok(p, err)))
		return rc;
	ge_match_iter *it = ge_xcalloc(1, sizeof *it);
	if ((rc = plan_make(&it->pl, p, err))) {
		free(it);
		return rc;
	}
	/* the iterator may outlive the caller's handle (a binding's) */
	it->p = ge_pat_incref((ge_pat *)p);
	it->g = g;
	it->flags = flags;
	it->limit = (ge_opid)ge_graph_capacity(g);
	m_init(&it->m, g, &it->pl);
	it->m.limit = it->limit;
	if (flags & GE_MATCH_NONOVERLAP) {
		it->claimed = ge_xcalloc(it->limit / 64 + 1,
					 sizeof *it->claimed);
		it->m.claimed = it->claimed;
	}
	const char **types = NULL;
	size_t nt = 0, tcap = 0;
	root_types(p, &types, &nt, &tcap, &it->all);
	if (!it->all) {
		ge_opindex *own = NULL;
		if (!ix)
			ix = own = ge_opindex_new();
		ge_opindex_sync(ix, g);
		size_t total = 0, n;
		for (size_t i = 0; i < nt; i++) {
			ge_opindex_get(ix, types[i], &n);
			total += n;
		}
		it->cand = ge_xmalloc((total + 1) * sizeof *it->cand);
		for (size_t i = 0; i < nt; i++) {
			const ge_opid *v = ge_opindex_get(ix, types[i], &n);
			if (n)
				memcpy(it->cand + it->n_cand, v,
				       n * sizeof *v);
			it->n_cand += n;
		}
		/* several types: merge the lists into node order (each
		 * list is sorted already) */
		if (nt > 1)
			it->n_cand = sort_unique(it->cand, it->n_cand);
		ge_opindex_free(own);
	}
	free(types);
	*out = it;
	return GE_OK;
}

int ge_match_iter_next(ge_match_iter *it, ge_match *out, ge_error *err)
{
	M *m = &it->m;
	m->err = err;
	for (;;) {
		ge_opid id;
		if (it->all) {
			if (it->pos >= it->limit)
				return 0;
			id = (ge_opid)it->pos++;
		} else {
			if (it->pos >= it->n_cand)
				return 0;
			id = it->cand[it->pos++];
		}
		if (!ge_op_alive(it->g, id))
			continue;
		m_reset(m);
		int r = m_pat(m, it->p, (ge_tref){id, 0}, NULL, NULL);
		if (r < 0)
			return r;
		if (!r)
			continue;
		take_result(m, id, out);
		if (it->claimed)
			for (size_t i = 0; i < out->n_ops; i++)
				it->claimed[out->ops[i] >> 6] |=
					(uint64_t)1 << (out->ops[i] & 63);
		return 1;
	}
}

void ge_match_iter_release(ge_match_iter *it, const ge_match *m)
{
	if (!it->claimed)
		return;
	for (size_t i = 0; i < m->n_ops; i++)
		if (m->ops[i] < it->limit)
			it->claimed[m->ops[i] >> 6] &=
				~((uint64_t)1 << (m->ops[i] & 63));
}

void ge_match_iter_free(ge_match_iter *it)
{
	if (!it)
		return;
	m_free(&it->m);
	plan_free(&it->pl);
	ge_pat_free((ge_pat *)it->p);
	free(it->cand);
	free(it->claimed);
	free(it);
}

int ge_match_all(const ge_pat *p, const ge_graph *g, ge_opindex *ix,
		 int flags, ge_match_cb cb, void *ud, size_t *count,
		 ge_error *err)
{
	ge_match_iter *it;
	ge_match m = GE_MATCH_INIT;
	size_t n = 0;
	int rc = ge_match_iter_new(p, g, ix, flags, &it, err);
	if (count)
		*count = 0;
	if (rc)
		return rc;
	uint64_t v = ge_graph_version(g);
	while ((rc = ge_match_iter_next(it, &m, err)) > 0) {
		n++;
		if (err) {
			err->code = GE_OK;
			err->msg[0] = 0;
		}
		int r = cb ? cb(g, &m, ud, err) : 0;
		if (ge_graph_version(g) != v) {
			rc = ge_err(err, GE_EINVAL,
				    "the graph was changed while its matches "
				    "were being visited");
			break;
		}
		if (r < 0) {
			if (!err || !err->msg[0])
				ge_err(err, GE_EINVAL, "callback failed");
			rc = GE_EINVAL;
			break;
		}
		if (r > 0) {
			rc = 0;
			break;
		}
	}
	ge_match_free(&m);
	ge_match_iter_free(it);
	if (count)
		*count = n;
	return rc < 0 ? rc : GE_OK;
}
