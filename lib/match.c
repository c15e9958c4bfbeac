/* match.c: see match.h. */
#include "match.h"
#include "bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* Deeper than any pattern a person writes; a bound keeps a huge variadic
 * op under a non-trivial rest from exhausting the C stack. */
#define MAX_DEPTH 4000

/* ------------------------------------------------------------ patterns */

/* Callback user data, shared by the copies of a node. */
typedef struct udref {
	int refs;
	void *ud;
	ge_ud_free fn;
} udref;

typedef struct attr_req {
	char *name;
	uint8_t *raw;                /* expected value, encoded (or NULL) */
	size_t len;
	Tensorflow__AttrValue *val;  /* the same, decoded */
	ge_pat_attr_fn fn;           /* or a callback */
	udref *ud;
} attr_req;

typedef struct pred {
	ge_pat_fn fn;
	udref *ud;
} pred;

struct ge_pat {
	int refs;
	int kind;
	int commute;
	char *capture;
	char *types_text;            /* as given; NULL: any type */
	char **types;
	size_t n_types;
	ge_pat **operands;
	size_t n_operands;
	ge_pat **ctrl;
	size_t n_ctrl;
	ge_pat *sub;                 /* optional, rest */
	attr_req *attrs;
	size_t n_attrs;
	pred *preds;
	size_t n_preds;
	int *dtypes;
	size_t n_dtypes;
	int64_t *dims;
	int rank, has_shape;
	size_t cons_min, cons_max;
	int has_cons;
	size_t ctl_min, ctl_max;
	int has_ctl;
	ge_regex *name_re;
};

static udref *ud_new(void *ud, ge_ud_free fn)
{
	udref *u = ge_xmalloc(sizeof *u);
	u->refs = 1;
	u->ud = ud;
	u->fn = fn;
	return u;
}

static void ud_drop(udref *u)
{
	if (u && --u->refs == 0) {
		if (u->fn)
			u->fn(u->ud);
		free(u);
	}
}

static ge_pat *pat_new(int kind)
{
	ge_pat *p = ge_xcalloc(1, sizeof *p);
	p->refs = 1;
	p->kind = kind;
	return p;
}

static int parse_types(ge_pat *p, const char *types, ge_error *err)
{
	if (!types)
		return GE_OK;
	const char *s = types;
	char **v = NULL;
	size_t n = 0, any = 0;
	for (;;) {
		const char *e = strchr(s, '|');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const char *a = s, *b = s + len;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b) {
			for (size_t i = 0; i < n; i++)
				free(v[i]);
			free(v);
			return ge_err(err, GE_EINVAL,
				      "bad op type list '%s': empty alternative",
				      types);
		}
		if (b - a == 1 && *a == '*')
			any = 1;
		v = ge_xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = ge_xstrndup(a, (size_t)(b - a));
		if (!e)
			break;
		s = e + 1;
	}
	if (any) {
		/* "*" anywhere in the list accepts every type */
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return GE_OK;
	}
	p->types = v;
	p->n_types = n;
	p->types_text = ge_xstrdup(types);
	return GE_OK;
}

ge_pat *ge_pat_op(const char *types, ge_error *err)
{
	ge_pat *p = pat_new(GE_PAT_OP);
	if (parse_types(p, types, err)) {
		free(p);
		return NULL;
	}
	return p;
}

ge_pat *ge_pat_any(void)
{
	return pat_new(GE_PAT_ANY);
}

ge_pat *ge_pat_const(void)
{
	return pat_new(GE_PAT_CONST);
}

ge_pat *ge_pat_ref(const char *name)
{
	ge_pat *p = pat_new(GE_PAT_REF);
	p->capture = ge_xstrdup(name ? name : "");
	return p;
}

ge_pat *ge_pat_incref(ge_pat *p)
{
	if (p)
		p->refs++;
	return p;
}

static void push_child(ge_pat ***v, size_t *n, ge_pat *c)
{
	*v = ge_xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = ge_pat_incref(c);
}

ge_pat *ge_pat_commute(const char *types, ge_pat *a, ge_pat *b,
		       ge_error *err)
{
	if (!a || !b) {
		ge_err(err, GE_EINVAL, "commute needs two operand patterns");
		return NULL;
	}
	if (a->kind == GE_PAT_REST || b->kind == GE_PAT_REST) {
		ge_err(err, GE_EINVAL, "commute operands cannot be rest");
		return NULL;
	}
	ge_pat *p = ge_pat_op(types, err);
	if (!p)
		return NULL;
	p->commute = 1;
	push_child(&p->operands, &p->n_operands, a);
	push_child(&p->operands, &p->n_operands, b);
	return p;
}

ge_pat *ge_pat_optional(ge_pat *q, ge_error *err)
{
	if (!q || q->kind != GE_PAT_OP || q->n_operands != 1 ||
	    q->operands[0]->kind == GE_PAT_REST) {
		ge_err(err, GE_EINVAL,
		       "optional needs an op pattern with exactly one operand");
		return NULL;
	}
	ge_pat *p = pat_new(GE_PAT_OPTIONAL);
	p->sub = ge_pat_incref(q);
	return p;
}

ge_pat *ge_pat_rest(ge_pat *q, ge_error *err)
{
	if (!q || q->kind == GE_PAT_REST) {
		ge_err(err, GE_EINVAL, "rest needs a pattern that is not a rest");
		return NULL;
	}
	ge_pat *p = pat_new(GE_PAT_REST);
	p->sub = ge_pat_incref(q);
	return p;
}

static Tensorflow__AttrValue *decode_attr(const uint8_t *raw, size_t len)
{
	return (Tensorflow__AttrValue *)ge_pb_unpack(
		&tensorflow__attr_value__descriptor, len, raw);
}

ge_pat *ge_pat_copy(const ge_pat *q)
{
	ge_pat *p = pat_new(q->kind);
	p->commute = q->commute;
	if (q->capture)
		p->capture = ge_xstrdup(q->capture);
	if (q->types_text)
		p->types_text = ge_xstrdup(q->types_text);
	if (q->n_types) {
		p->types = ge_xmalloc(q->n_types * sizeof *p->types);
		for (size_t i = 0; i < q->n_types; i++)
			p->types[i] = ge_xstrdup(q->types[i]);
		p->n_types = q->n_types;
	}
	for (size_t i = 0; i < q->n_operands; i++)
		push_child(&p->operands, &p->n_operands, q->operands[i]);
	for (size_t i = 0; i < q->n_ctrl; i++)
		push_child(&p->ctrl, &p->n_ctrl, q->ctrl[i]);
	p->sub = ge_pat_incref(q->sub);
	if (q->n_attrs) {
		p->attrs = ge_xcalloc(q->n_attrs, sizeof *p->attrs);
		for (size_t i = 0; i < q->n_attrs; i++) {
			const attr_req *a = &q->attrs[i];
			attr_req *b = &p->attrs[i];
			b->name = ge_xstrdup(a->name);
			if (a->raw) {
				b->raw = ge_xmalloc(a->len + 1);
				memcpy(b->raw, a->raw, a->len);
				b->len = a->len;
				b->val = decode_attr(b->raw, b->len);
			}
			b->fn = a->fn;
			b->ud = a->ud;
			if (b->ud)
				b->ud->refs++;
		}
		p->n_attrs = q->n_attrs;
	}
	if (q->n_preds) {
		p->preds = ge_xmalloc(q->n_preds * sizeof *p->preds);
		for (size_t i = 0; i < q->n_preds; i++) {
			p->preds[i] = q->preds[i];
			if (p->preds[i].ud)
				p->preds[i].ud->refs++;
		}
		p->n_preds = q->n_preds;
	}
	if (q->n_dtypes) {
		p->dtypes = ge_xmalloc(q->n_dtypes * sizeof *p->dtypes);
		memcpy(p->dtypes, q->dtypes, q->n_dtypes * sizeof *p->dtypes);
		p->n_dtypes = q->n_dtypes;
	}
	if (q->has_shape) {
		p->has_shape = 1;
		p->rank = q->rank;
		p->dims = ge_xmalloc(((size_t)q->rank + 1) * sizeof *p->dims);
		if (q->rank > 0)
			memcpy(p->dims, q->dims, (size_t)q->rank * sizeof *p->dims);
	}
	p->has_cons = q->has_cons;
	p->cons_min = q->cons_min;
	p->cons_max = q->cons_max;
	p->has_ctl = q->has_ctl;
	p->ctl_min = q->ctl_min;
	p->ctl_max = q->ctl_max;
	/* the pattern compiled before, so it compiles again */
	if (q->name_re)
		p->name_re = ge_regex_new(ge_regex_pattern(q->name_re), NULL);
	return p;
}

void ge_pat_free(ge_pat *p)
{
	if (!p || --p->refs > 0)
		return;
	free(p->capture);
	free(p->types_text);
	for (size_t i = 0; i < p->n_types; i++)
		free(p->types[i]);
	free(p->types);
	for (size_t i = 0; i < p->n_operands; i++)
		ge_pat_free(p->operands[i]);
	free(p->operands);
	for (size_t i = 0; i < p->n_ctrl; i++)
		ge_pat_free(p->ctrl[i]);
	free(p->ctrl);
	ge_pat_free(p->sub);
	for (size_t i = 0; i < p->n_attrs; i++) {
		free(p->attrs[i].name);
		free(p->attrs[i].raw);
		if (p->attrs[i].val)
			tensorflow__attr_value__free_unpacked(p->attrs[i].val,
							      NULL);
		ud_drop(p->attrs[i].ud);
	}
	free(p->attrs);
	for (size_t i = 0; i < p->n_preds; i++)
		ud_drop(p->preds[i].ud);
	free(p->preds);
	free(p->dtypes);
	free(p->dims);
	ge_regex_free(p->name_re);
	free(p);
}

int ge_pat_kind(const ge_pat *p)
{
	return p->kind;
}

const char *ge_pat_types(const ge_pat *p)
{
	return p->kind == GE_PAT_OP ? p->types_text : NULL;
}

const char *ge_pat_capture(const ge_pat *p)
{
	return p->capture;
}

static const char *kind_name(int kind)
{
	switch (kind) {
	case GE_PAT_OP:
		return "op";
	case GE_PAT_ANY:
		return "any";
	case GE_PAT_CONST:
		return "const";
	case GE_PAT_REF:
		return "ref";
	case GE_PAT_OPTIONAL:
		return "optional";
	default:
		return "rest";
	}
}

static int takes_modifiers(const ge_pat *p, const char *what, ge_error *err)
{
	if (p->kind == GE_PAT_OPTIONAL || p->kind == GE_PAT_REST)
		return ge_err(err, GE_EINVAL,
			      "%s cannot be applied to %s(): apply it to the "
			      "pattern inside",
			      what, kind_name(p->kind));
	return GE_OK;
}

/* Whether target is p or inside it: attaching p under target would then
 * make a cycle. */
static int contains(const ge_pat *p, const ge_pat *target, int depth)
{
	if (p == target)
		return 1;
	if (depth > MAX_DEPTH)
		return 1;
	for (size_t i = 0; i < p->n_operands; i++)
		if (contains(p->operands[i], target, depth + 1))
			return 1;
	for (size_t i = 0; i < p->n_ctrl; i++)
		if (contains(p->ctrl[i], target, depth + 1))
			return 1;
	return p->sub && contains(p->sub, target, depth + 1);
}

int ge_pat_add_operand(ge_pat *p, ge_pat *q, ge_error *err)
{
	if (p->kind != GE_PAT_OP || p->commute)
		return ge_err(err, GE_EINVAL, "operands can only be added to "
			      "op() patterns");
	if (!q)
		return ge_err(err, GE_EINVAL, "missing operand pattern");
	if (contains(q, p, 0))
		return ge_err(err, GE_EINVAL,
			      "a pattern cannot be its own operand");
	push_child(&p->operands, &p->n_operands, q);
	return GE_OK;
}

int ge_pat_set_capture(ge_pat *p, const char *name, ge_error *err)
{
	if (takes_modifiers(p, "a capture name", err))
		return GE_EINVAL;
	if (p->kind == GE_PAT_REF)
		return ge_err(err, GE_EINVAL,
			      "ref(\"%s\") already names its capture",
			      p->capture);
	if (!name || !*name)
		return ge_err(err, GE_EINVAL, "capture names cannot be empty");
	free(p->capture);
	p->capture = ge_xstrdup(name);
	return GE_OK;
}

static attr_req *new_attr(ge_pat *p, const char *attr)
{
	p->attrs = ge_xrealloc(p->attrs, (p->n_attrs + 1) * sizeof *p->attrs);
	attr_req *a = &p->attrs[p->n_attrs++];
	memset(a, 0, sizeof *a);
	a->name = ge_xstrdup(attr);
	return a;
}

int ge_pat_where_attr_raw(ge_pat *p, const char *attr, const uint8_t *v,
			  size_t len, ge_error *err)
{
	if (takes_modifiers(p, "an attr constraint", err))
		return GE_EINVAL;
	Tensorflow__AttrValue *val = decode_attr(v, len);
	if (!val)
		return ge_err(err, GE_EINVAL,
			      "attr '%s': the expected value does not decode",
			      attr);
	attr_req *a = new_attr(p, attr);
	a->raw = ge_xmalloc(len + 1);
	if (len)
		memcpy(a->raw, v, len);
	a->len = len;
	a->val = val;
	return GE_OK;
}

int ge_pat_where_attr(ge_pat *p, const char *attr,
		      const Tensorflow__AttrValue *v, ge_error *err)
{
	size_t len = tensorflow__attr_value__get_packed_size(v);
	uint8_t *buf = ge_xmalloc(len + 1);
	tensorflow__attr_value__pack(v, buf);
	int rc = ge_pat_where_attr_raw(p, attr, buf, len, err);
	free(buf);
	return rc;
}

int ge_pat_where_attr_fn(ge_pat *p, const char *attr, ge_pat_attr_fn fn,
			 void *ud, ge_ud_free ud_free, ge_error *err)
{
	if (takes_modifiers(p, "an attr constraint", err)) {
		if (ud_free)
			ud_free(ud);
		return GE_EINVAL;
	}
	attr_req *a = new_attr(p, attr);
	a->fn = fn;
	a->ud = ud_new(ud, ud_free);
	return GE_OK;
}

int ge_pat_where(ge_pat *p, ge_pat_fn fn, void *ud, ge_ud_free ud_free,
		 ge_error *err)
{
	if (takes_modifiers(p, "a predicate", err)) {
		if (ud_free)
			ud_free(ud);
		return GE_EINVAL;
	}
	p->preds = ge_xrealloc(p->preds, (p->n_preds + 1) * sizeof *p->preds);
	p->preds[p->n_preds].fn = fn;
	p->preds[p->n_preds].ud = ud_new(ud, ud_free);
	p->n_preds++;
	return GE_OK;
}

/* Reference types (DT_FLOAT_REF = 101) match their base type. */
static int base_dtype(int d)
{
	return d > 100 ? d - 100 : d;
}

int ge_pat_dtype(ge_pat *p, const int *dtypes, size_t n, ge_error *err)
{
	if (takes_modifiers(p, "a dtype", err))
		return GE_EINVAL;
	p->dtypes = ge_xrealloc(p->dtypes, (p->n_dtypes + n + 1) *
						   sizeof *p->dtypes);
	for (size_t i = 0; i < n; i++)
		p->dtypes[p->n_dtypes++] = base_dtype(dtypes[i]);
	return GE_OK;
}

int ge_pat_shape(ge_pat *p, const int64_t *dims, int rank, ge_error *err)
{
	if (takes_modifiers(p, "a shape", err))
		return GE_EINVAL;
	if (rank < 0)
		return ge_err(err, GE_EINVAL, "a shape pattern needs a rank");
	free(p->dims);
	p->dims = ge_xmalloc(((size_t)rank + 1) * sizeof *p->dims);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < -1)
			return ge_err(err, GE_EINVAL,
				      "bad dimension %lld in a shape pattern",
				      (long long)dims[i]);
		p->dims[i] = dims[i];
	}
	p->rank = rank;
	p->has_shape = 1;
	return GE_OK;
}

int ge_pat_consumers(ge_pat *p, size_t min, size_t max, ge_error *err)
{
	if (takes_modifiers(p, "a consumer count", err))
		return GE_EINVAL;
	if (min > max)
		return ge_err(err, GE_EINVAL,
			      "consumer count: minimum above maximum");
	p->has_cons = 1;
	p->cons_min = min;
	p->cons_max = max;
	return GE_OK;
}

int ge_pat_single_use(ge_pat *p, ge_error *err)
{
	return ge_pat_consumers(p, 1, 1, err);
}

int ge_pat_name(ge_pat *p, const char *regex, ge_error *err)
{
	if (takes_modifiers(p, "a name regex", err))
		return GE_EINVAL;
	ge_regex *re = ge_regex_new(regex, err);
	if (!re)
		return GE_EINVAL;
	ge_regex_free(p->name_re);
	p->name_re = re;
	return GE_OK;
}

int ge_pat_control_count(ge_pat *p, size_t min, size_t max, ge_error *err)
{
	if (takes_modifiers(p, "a control-input count", err))
		return GE_EINVAL;
	if (min > max)
		return ge_err(err, GE_EINVAL,
			      "control-input count: minimum above maximum");
	p->has_ctl = 1;
	p->ctl_min = min;
	p->ctl_max = max;
	return GE_OK;
}

int ge_pat_add_control_operand(ge_pat *p, ge_pat *q, ge_error *err)
{
	if (takes_modifiers(p, "a control operand", err))
		return GE_EINVAL;
	if (!q || q->kind == GE_PAT_REST)
		return ge_err(err, GE_EINVAL,
			      "a control operand must be a pattern, not rest");
	if (contains(q, p, 0))
		return ge_err(err, GE_EINVAL,
			      "a pattern cannot be its own operand");
	push_child(&p->ctrl, &p->n_ctrl, q);
	return GE_OK;
}

/* ------------------------------------------------------------ printing */

static void add_quoted(ge_buf *b, const char *s, size_t n, size_t max)
{
	ge_buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (i == max) {
			ge_buf_adds(b, "...");
			break;
		}
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			ge_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			ge_buf_printf(b, "\\x%02x", c);
		else
			ge_buf_addc(b, c);
	}
	ge_buf_addc(b, '"');
}

static void add_dtype(ge_buf *b, int d)
{
	const char *n = ge_dtype_name(d);
	if (n)
		ge_buf_adds(b, n);
	else
		ge_buf_printf(b, "dtype %d", d);
}

static void add_shape_proto(ge_buf *b, const Tensorflow__TensorShapeProto *s)
{
	if (!s || s->unknown_rank) {
		ge_buf_adds(b, "<unknown rank>");
		return;
	}
	ge_buf_addc(b, '[');
	for (size_t i = 0; i < s->n_dim; i++)
		ge_buf_printf(b, "%s%lld", i ? "," : "",
			      (long long)s->dim[i]->size);
	ge_buf_addc(b, ']');
}

/* A short rendering of an attr value for messages. */
static void add_attr(ge_buf *b, const Tensorflow__AttrValue *v)
{
	if (!v) {
		ge_buf_adds(b, "(none)");
		return;
	}
	switch (v->value_case) {
	case TENSORFLOW__ATTR_VALUE__VALUE_S:
		add_quoted(b, (const char *)v->s.data, v->s.len, 60);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_I:
		ge_buf_printf(b, "%lld", (long long)v->i);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_F:
		ge_buf_printf(b, "%g", (double)v->f);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_B:
		ge_buf_adds(b, v->b ? "true" : "false");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
		add_dtype(b, (int)v->type);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
		add_shape_proto(b, v->shape);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
		ge_buf_adds(b, "<tensor>");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
		ge_buf_printf(b, "<placeholder %s>", v->placeholder);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
		ge_buf_printf(b, "<func %s>", v->func ? v->func->name : "");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
		const Tensorflow__AttrValue__ListValue *l = v->list;
		size_t k = 0, max = 8;
		ge_buf_addc(b, '[');
#define ITEM(n, expr)                                         \
	for (size_t i = 0; l && i < l->n; i++, k++) {          \
		if (k)                                         \
			ge_buf_addc(b, ',');                   \
		if (k == max) {                                \
			ge_buf_adds(b, "...");                 \
			break;                                 \
		}                                              \
		expr;                                          \
	}
		ITEM(n_s, add_quoted(b, (const char *)l->s[i].data, l->s[i].len,
				     30));
		ITEM(n_i, ge_buf_printf(b, "%lld", (long long)l->i[i]));
		ITEM(n_f, ge_buf_printf(b, "%g", (double)l->f[i]));
		ITEM(n_b, ge_buf_adds(b, l->b[i] ? "true" : "false"));
		ITEM(n_type, add_dtype(b, (int)l->type[i]));
		ITEM(n_shape, add_shape_proto(b, l->shape[i]));
		ITEM(n_tensor, ge_buf_adds(b, "<tensor>"));
		ITEM(n_func, ge_buf_adds(b, "<func>"));
#undef ITEM
		ge_buf_addc(b, ']');
		break;
	}
	default:
		ge_buf_adds(b, "(unset)");
	}
}

static void describe(const ge_pat *p, ge_buf *b, int depth)
{
	if (depth > 64) {
		ge_buf_adds(b, "...");
		return;
	}
	switch (p->kind) {
	case GE_PAT_OP:
		ge_buf_adds(b, p->commute ? "commute(" : "op(");
		add_quoted(b, p->types_text ? p->types_text : "*",
			   strlen(p->types_text ? p->types_text : "*"),
			   (size_t)-1);
		for (size_t i = 0; i < p->n_operands; i++) {
			ge_buf_adds(b, ", ");
			describe(p->operands[i], b, depth + 1);
		}
		ge_buf_addc(b, ')');
		break;
	case GE_PAT_REF:
		ge_buf_adds(b, "ref(");
		add_quoted(b, p->capture, strlen(p->capture), (size_t)-1);
		ge_buf_addc(b, ')');
		break;
	case GE_PAT_OPTIONAL:
	case GE_PAT_REST:
		ge_buf_printf(b, "%s(", kind_name(p->kind));
		describe(p->sub, b, depth + 1);
		ge_buf_addc(b, ')');
		return;
	default:
		ge_buf_printf(b, "%s()", kind_name(p->kind));
	}
	if (p->capture && p->kind != GE_PAT_REF) {
		ge_buf_adds(b, ":as(");
		add_quoted(b, p->capture, strlen(p->capture), (size_t)-1);
		ge_buf_addc(b, ')');
	}
	if (p->n_attrs) {
		ge_buf_adds(b, ":where{");
		for (size_t i = 0; i < p->n_attrs; i++) {
			ge_buf_printf(b, "%s%s=", i ? ", " : "",
				      p->attrs[i].name);
			if (p->attrs[i].fn)
				ge_buf_adds(b, "<function>");
			else
				add_attr(b, p->attrs[i].val);
		}
		ge_buf_addc(b, '}');
	}
	for (size_t i = 0; i < p->n_preds; i++)
		ge_buf_adds(b, ":where(<function>)");
	if (p->n_dtypes) {
		ge_buf_adds(b, ":dtype(");
		for (size_t i = 0; i < p->n_dtypes; i++) {
			if (i)
				ge_buf_adds(b, ", ");
			ge_buf_addc(b, '"');
			add_dtype(b, p->dtypes[i]);
			ge_buf_addc(b, '"');
		}
		ge_buf_addc(b, ')');
	}
	if (p->has_shape) {
		ge_buf_adds(b, ":shape{");
		for (int i = 0; i < p->rank; i++)
			ge_buf_printf(b, "%s%lld", i ? "," : "",
				      (long long)p->dims[i]);
		ge_buf_addc(b, '}');
	}
	if (p->has_cons) {
		if (p->cons_min == 1 && p->cons_max == 1)
			ge_buf_adds(b, ":single_use()");
		else if (p->cons_max == SIZE_MAX)
			/* spelled as it is built: no upper bound is nil */
			ge_buf_printf(b, ":consumers(%zu, nil)", p->cons_min);
		else if (p->cons_min == p->cons_max)
			ge_buf_printf(b, ":consumers(%zu)", p->cons_min);
		else
			ge_buf_printf(b, ":consumers(%zu, %zu)", p->cons_min,
				      p->cons_max);
	}
	if (p->name_re) {
		const char *re = ge_regex_pattern(p->name_re);
		ge_buf_adds(b, ":name(");
		add_quoted(b, re, strlen(re), (size_t)-1);
		ge_buf_addc(b, ')');
	}
	if (p->has_ctl || p->n_ctrl) {
		ge_buf_adds(b, ":control_inputs(");
		if (p->has_ctl && p->ctl_max == SIZE_MAX)
			ge_buf_printf(b, "%zu+", p->ctl_min);
		else if (p->has_ctl && p->ctl_min == p->ctl_max)
			ge_buf_printf(b, "%zu", p->ctl_min);
		else if (p->has_ctl)
			ge_buf_printf(b, "%zu..%zu", p->ctl_min, p->ctl_max);
		for (size_t i = 0; i < p->n_ctrl; i++) {
			if (i || p->has_ctl)
				ge_buf_adds(b, ", ");
			describe(p->ctrl[i], b, depth + 1);
		}
		ge_buf_addc(b, ')');
	}
}

void ge_pat_describe(const ge_pat *p, ge_buf *out)
{
	describe(p, out, 0);
}

/* ------------------------------------------------------------ results */

void ge_match_free(ge_match *m)
{
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

/* The capture names of one root pattern, in order of first appearance. */
typedef struct plan {
	const char **names;
	size_t n;
} plan;

static int plan_walk(plan *pl, const ge_pat *p, int operand, int depth,
		     ge_error *err)
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
			pl->names[pl->n++] = p->capture;
		}
	}
	int rc;
	for (size_t i = 0; i < p->n_operands; i++)
		if ((rc = plan_walk(pl, p->operands[i], 1, depth + 1, err)))
			return rc;
	for (size_t i = 0; i < p->n_ctrl; i++)
		if ((rc = plan_walk(pl, p->ctrl[i], 0, depth + 1, err)))
			return rc;
	if (p->sub && (rc = plan_walk(pl, p->sub, 0, depth + 1, err)))
		return rc;
	return GE_OK;
}

static int plan_make(plan *pl, const ge_pat *p, ge_error *err)
{
	pl->names = NULL;
	pl->n = 0;
	int rc = plan_walk(pl, p, 0, 0, err);
	if (rc) {
		free(pl->names);
		pl->names = NULL;
	}
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
	size_t trail, ops, consts;
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
	free(m->trail);
	free(m->ops);
	free(m->consts);
}

static void save(const M *m, mark *k)
{
	k->trail = m->n_trail;
	k->ops = m->n_ops;
	k->consts = m->n_consts;
	k->progress = m->progress;
}

static void undo(M *m, const mark *k)
{
	while (m->n_trail > k->trail)
		m->caps[m->trail[--m->n_trail]].kind = GE_CAP_NONE;
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

/* ---- explanations ---- */

enum { F_SUBJECT, F_GOT, F_PLAIN };

static void add_op(ge_buf *b, const ge_graph *g, ge_opid op)
{
	ge_buf_printf(b, "%s ", ge_op_type(g, op));
	const char *n = ge_op_name(g, op);
	add_quoted(b, n, strlen(n), 200);
}

static void add_subject(ge_buf *b, const ge_graph *g, ge_tref t,
			int tensor)
{
	if (tensor) {
		ge_buf_adds(b, "tensor ");
		ge_buf *tmp = &(ge_buf)GE_BUF_INIT;
		ge_buf_printf(tmp, "%s:%d", ge_op_name(g, t.op),
			      t.index < 0 ? 0 : t.index);
		add_quoted(b, (const char *)tmp->data, tmp->len, 200);
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
	if (p->n_dtypes) {
		int idx = t.index < 0 ? 0 : t.index;
		int d = base_dtype(ge_op_output_dtype(g, op, idx));
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
				add_dtype(&want, p->dtypes[i]);
			}
			if (d)
				add_dtype(&got, d);
			else
				ge_buf_adds(&got, "of unknown dtype");
			fail(m, at, t, F_SUBJECT, tensor,
			     "output %d is %s, expected %s", idx,
			     (char *)got.data, (char *)want.data);
			ge_buf_free(&want);
			ge_buf_free(&got);
			return 0;
		}
	}
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
		add_attr(&want, a->val);
		if (v)
			add_attr(&got, v);
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
	for (size_t i = 0; i < p->n_preds; i++) {
		int r = p->preds[i].fn(g, t, p->preds[i].ud->ud);
		if (r < 0)
			return cb_failed(m);
		if (!r)
			return fail(m, at, t, F_SUBJECT, tensor,
				    "rejected by the predicate");
	}

	if (slot != (size_t)-1)
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
		free(pl.names);
		return 0;
	}
	M m;
	m_init(&m, g, &pl);
	m.err = err;
	rc = m_pat(&m, p, (ge_tref){op, 0}, NULL, NULL);
	if (rc > 0 && out)
		take_result(&m, op, out);
	m_free(&m);
	free(pl.names);
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
		free(pl.names);
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
	free(pl.names);
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
	free(it->pl.names);
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

/* ------------------------------------------------------------ rewriting */

void ge_rewrite_replace(ge_rewrite_repl *r, ge_tref from, ge_tref to)
{
	ge_tvec_push(&r->from, from);
	ge_tvec_push(&r->to, to);
}

#define RNAME(r) ((r)->name ? (r)->name : "(unnamed)")

enum {
	MK_S = 1,        /* in the match */
	MK_CONST = 2,    /* matched by a const pattern */
	MK_NEW = 4,      /* needed by the replacement (or read by new ops) */
	MK_ALL = 8,      /* needed by anything, outside readers included */
	MK_OUT = 16,     /* read directly by a pre-existing op outside */
};

typedef struct rw {
	ge_graph *g;
	uint8_t *mark;
	size_t mark_cap;
	ge_tmap rmap;    /* from -> pair index, for long replacement lists */
	int use_rmap;
	ge_opvec work, tmp;
	ge_tvec slots;   /* (consumer, slot) pairs to reroute */
} rw;

static void mark_fit(rw *w)
{
	size_t cap = ge_graph_capacity(w->g);
	if (cap <= w->mark_cap)
		return;
	size_t nc = w->mark_cap ? w->mark_cap : 1024;
	while (nc < cap)
		nc *= 2;
	w->mark = ge_xrealloc(w->mark, nc);
	memset(w->mark + w->mark_cap, 0, nc - w->mark_cap);
	w->mark_cap = nc;
}

/* Index of the replacement pair whose `from` is t, or -1. */
static long repl_find(const rw *w, const ge_rewrite_repl *r, ge_tref t)
{
	if (w->use_rmap) {
		size_t v;
		return ge_tmap_get(&w->rmap, t, &v) ? (long)v : -1;
	}
	for (size_t i = 0; i < r->from.n; i++)
		if (ge_tref_eq(r->from.v[i], t))
			return (long)i;
	return -1;
}

/* Marks flag on the match's producers of op, following the edges as they
 * will be after the reroute, and queues the newly marked ones. */
static void propagate(rw *w, const ge_rewrite_repl *r, ge_opid cap_before,
		      int flag)
{
	ge_graph *g = w->g;
	while (w->work.n) {
		ge_opid s = w->work.v[--w->work.n];
		size_t ni = ge_op_num_inputs(g, s);
		size_t nc = ge_op_num_control_inputs(g, s);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid q;
			if (i < ni) {
				ge_tref t = ge_op_input(g, s, i);
				long k = s < cap_before ? repl_find(w, r, t) : -1;
				q = k >= 0 ? r->to.v[k].op : t.op;
			} else {
				q = ge_op_control_input(g, s, i - ni);
			}
			if (q == GE_NOOP || !(w->mark[q] & MK_S) ||
			    (w->mark[q] & flag))
				continue;
			w->mark[q] |= flag;
			ge_opvec_push(&w->work, q);
		}
	}
}

static void add_s(rw *w, const ge_match *m)
{
	for (size_t i = 0; i < m->n_ops; i++)
		w->mark[m->ops[i]] = MK_S;
	for (size_t i = 0; i < m->n_consts; i++)
		w->mark[m->consts[i]] = MK_S | MK_CONST;
}

static void clear_s(rw *w, const ge_match *m)
{
	for (size_t i = 0; i < m->n_ops; i++)
		w->mark[m->ops[i]] = 0;
	for (size_t i = 0; i < m->n_consts; i++)
		w->mark[m->consts[i]] = 0;
}

/* The consumer outside the match that keeps op s alive, for messages. */
static ge_opid outside_reader(rw *w, const ge_rewrite_repl *r, ge_opid s,
			      ge_opid cap_before)
{
	ge_graph *g = w->g;
	size_t n;
	const ge_use *u = ge_op_uses(g, s, &n);
	for (size_t i = 0; i < n; i++) {
		ge_opid c = u[i].op;
		if ((w->mark[c] & MK_S) || c >= cap_before)
			continue;
		if (repl_find(w, r, ge_op_input(g, c, u[i].slot)) < 0)
			return c;
	}
	const ge_opid *co = ge_op_control_outputs(g, s, &n);
	for (size_t i = 0; i < n; i++)
		if (!(w->mark[co[i]] & MK_S) && co[i] < cap_before)
			return co[i];
	return GE_NOOP;
}

static void remove_new_ops(ge_graph *g, ge_opid cap_before)
{
	for (size_t id = ge_graph_capacity(g); id-- > cap_before;)
		if (ge_op_alive(g, (ge_opid)id))
			ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
}

static int apply_repl(rw *w, const ge_rule *rule, const ge_match *m,
		      const ge_rewrite_repl *r, ge_opid cap_before, int allow,
		      ge_error *err)
{
	ge_graph *g = w->g;
	int rc = GE_OK;
	const char *root = ge_op_name(g, m->root);
	mark_fit(w);
	add_s(w, m);
	/* a few pairs are scanned; many are hashed, to stay linear */
	w->use_rmap = r->from.n > 8;
	if (w->use_rmap) {
		ge_tmap_init(&w->rmap, r->from.n);
		for (size_t i = 0; i < r->from.n; i++)
			ge_tmap_put(&w->rmap, r->from.v[i], i);
	}
	for (size_t i = 0; i < r->from.n; i++) {
		ge_tref f = r->from.v[i], t = r->to.v[i];
		if (f.op == GE_NOOP || f.op >= w->mark_cap ||
		    !(w->mark[f.op] & MK_S) || f.index < 0) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': replacement %zu: the "
				    "tensor replaced is not an output of the "
				    "match",
				    RNAME(rule), root, i + 1);
			goto out;
		}
		if (!ge_op_alive(g, t.op) || t.index < 0) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': replacement %zu for "
				    "'%s:%d' is not a tensor of the graph",
				    RNAME(rule), root, i + 1,
				    ge_op_name(g, f.op), f.index);
			goto out;
		}
		if (repl_find(w, r, f) != (long)i) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': '%s:%d' is replaced "
				    "twice",
				    RNAME(rule), root, ge_op_name(g, f.op),
				    f.index);
			goto out;
		}
	}

	/* Who will still read each op of the match once the consumers of
	 * the replaced tensors read the replacements?  What the replacement
	 * keeps on purpose (MK_NEW): ops read by the action's new ops, the
	 * replacements themselves, and the root when readers of its other
	 * outputs remain (its outputs are the match's outputs: those not
	 * replaced stay).  Other outside readers (MK_OUT) of an op that
	 * would otherwise go mean the rewrite forgot an output. */
	const ge_opid *lists[2] = {m->ops, m->consts};
	size_t lens[2] = {m->n_ops, m->n_consts};
	w->work.n = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++) {
			ge_opid s = lists[l][i];
			size_t n;
			const ge_use *u = ge_op_uses(g, s, &n);
			int news = 0, outside = 0;
			for (size_t k = 0; k < n; k++) {
				ge_opid c = u[k].op;
				if (w->mark[c] & MK_S)
					continue;
				if (c >= cap_before)
					news = 1;
				else if (repl_find(w, r, ge_op_input(
							      g, c, u[k].slot)) < 0)
					outside = 1;
			}
			const ge_opid *co = ge_op_control_outputs(g, s, &n);
			for (size_t k = 0; k < n; k++) {
				if (w->mark[co[k]] & MK_S)
					continue;
				if (co[k] >= cap_before)
					news = 1;
				else
					outside = 1;
			}
			if (outside && s == m->root)
				news = 1;
			else if (outside)
				w->mark[s] |= MK_OUT;
			if (news && !(w->mark[s] & MK_NEW)) {
				w->mark[s] |= MK_NEW;
				ge_opvec_push(&w->work, s);
			}
		}
	for (size_t i = 0; i < r->to.n; i++) {
		ge_opid q = r->to.v[i].op;
		if (q < w->mark_cap && (w->mark[q] & MK_S) &&
		    !(w->mark[q] & MK_NEW)) {
			w->mark[q] |= MK_NEW;
			ge_opvec_push(&w->work, q);
		}
	}
	propagate(w, r, cap_before, MK_NEW);
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++) {
			ge_opid s = lists[l][i];
			if (w->mark[s] & (MK_NEW | MK_OUT)) {
				w->mark[s] |= MK_ALL;
				ge_opvec_push(&w->work, s);
			}
		}
	propagate(w, r, cap_before, MK_ALL);

	if (!allow) {
		/* An op the replacement makes useless but an outsider still
		 * needs: name the outsider when there is a direct one. */
		ge_opid bad = GE_NOOP;
		for (size_t i = 0; i < m->n_ops; i++) {
			ge_opid s = m->ops[i];
			if ((w->mark[s] & (MK_NEW | MK_ALL)) != MK_ALL)
				continue;
			if (bad == GE_NOOP || ((w->mark[s] & MK_OUT) &&
					       !(w->mark[bad] & MK_OUT)))
				bad = s;
		}
		if (bad != GE_NOOP) {
			ge_opid c = outside_reader(w, r, bad, cap_before);
			if (c != GE_NOOP)
				rc = ge_err(err, GE_EGRAPH,
					    "rule '%s' at '%s': the replacement "
					    "would remove '%s' (%s), but '%s' "
					    "outside the match still reads it",
					    RNAME(rule), root, ge_op_name(g, bad),
					    ge_op_type(g, bad), ge_op_name(g, c));
			else
				rc = ge_err(err, GE_EGRAPH,
					    "rule '%s' at '%s': the replacement "
					    "would remove '%s' (%s), but ops "
					    "outside the match still need it",
					    RNAME(rule), root, ge_op_name(g, bad),
					    ge_op_type(g, bad));
			remove_new_ops(g, cap_before);
			goto out;
		}
	}

	/* Reroute the consumers that existed before the action. */
	for (size_t i = 0; i < r->from.n; i++) {
		ge_tref f = r->from.v[i], t = r->to.v[i];
		if (ge_tref_eq(f, t))
			continue;
		size_t n;
		const ge_use *u = ge_op_uses(g, f.op, &n);
		w->slots.n = 0;
		for (size_t k = 0; k < n; k++) {
			if (u[k].op >= cap_before)
				continue;
			if (ge_op_input(g, u[k].op, u[k].slot).index != f.index)
				continue;
			ge_tvec_push(&w->slots,
				     (ge_tref){u[k].op, (int32_t)u[k].slot});
		}
		for (size_t k = 0; k < w->slots.n; k++) {
			rc = ge_op_set_input(g, w->slots.v[k].op,
					     (size_t)w->slots.v[k].index, t, err);
			if (rc) {
				ge_err_prefix(err, "rule '%s' at '%s'",
					      RNAME(rule), root);
				goto out;
			}
		}
	}

	/* Remove what nothing needs, consumers before producers. */
	w->work.n = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++)
			if (!(w->mark[lists[l][i]] & MK_ALL))
				ge_opvec_push(&w->work, lists[l][i]);
	while (w->work.n) {
		ge_opid s = w->work.v[--w->work.n];
		if (!ge_op_alive(g, s))
			continue;
		size_t nu, nco;
		ge_op_uses(g, s, &nu);
		ge_op_control_outputs(g, s, &nco);
		if (nu || nco)
			continue;
		size_t ni = ge_op_num_inputs(g, s);
		size_t nc = ge_op_num_control_inputs(g, s);
		w->tmp.n = 0;
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid q = i < ni ? ge_op_input(g, s, i).op
					   : ge_op_control_input(g, s, i - ni);
			if (q != GE_NOOP && (w->mark[q] & MK_S) &&
			    !(w->mark[q] & MK_ALL))
				ge_opvec_push(&w->tmp, q);
		}
		rc = ge_graph_remove_op(g, s, 0, err);
		if (rc) {
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      root);
			goto out;
		}
		for (size_t i = 0; i < w->tmp.n; i++)
			ge_opvec_push(&w->work, w->tmp.v[i]);
	}
out:
	clear_s(w, m);
	if (w->use_rmap)
		ge_tmap_free(&w->rmap);
	w->use_rmap = 0;
	return rc;
}

/* Runs one rule over the graph once; *count gets its rewrites. */
static int run_rule(rw *w, const ge_rule *rule, ge_opindex *ix,
		    const ge_rewrite_opts *o, size_t *count, ge_error *err)
{
	ge_graph *g = w->g;
	ge_match_iter *it;
	ge_match m = GE_MATCH_INIT;
	ge_rewrite_repl r = {GE_VEC_INIT, GE_VEC_INIT};
	int rc = ge_match_iter_new(rule->pattern, g, ix, GE_MATCH_NONOVERLAP,
				   &it, err);
	*count = 0;
	if (rc) {
		ge_err_prefix(err, "rule '%s'", RNAME(rule));
		return rc;
	}
	for (;;) {
		rc = ge_match_iter_next(it, &m, err);
		if (rc < 0)
			ge_err_prefix(err, "rule '%s'", RNAME(rule));
		if (rc <= 0)
			break;
		uint64_t v0 = ge_graph_version(g);
		ge_opid cap0 = (ge_opid)ge_graph_capacity(g);
		r.from.n = r.to.n = 0;
		if (err) {
			err->code = GE_OK;
			err->msg[0] = 0;
		}
		int a = rule->action(g, &m, &r, rule->ud, err);
		if (a < 0) {
			if (!err || !err->msg[0])
				ge_err(err, GE_EINVAL, "the action failed");
			if (err && err->code == GE_OK)
				err->code = GE_EINVAL;
			/* names outlive removed ops */
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      ge_op_name(g, m.root));
			rc = err ? err->code : GE_EINVAL;
			break;
		}
		if (r.from.n) {
			rc = apply_repl(w, rule, &m, &r, cap0,
					o->allow_remove_consumed, err);
			if (rc)
				break;
		}
		if (a > 0 || r.from.n || ge_graph_version(g) != v0)
			(*count)++;
		else
			ge_match_iter_release(it, &m);
	}
	if (rc > 0)
		rc = GE_OK;
	ge_tvec_free(&r.from);
	ge_tvec_free(&r.to);
	ge_match_free(&m);
	ge_match_iter_free(it);
	return rc;
}

/* The lines of a validation report, as hashes, sorted. */
typedef struct lineset {
	uint64_t *h;
	size_t n;
} lineset;

static uint64_t line_hash(const char *s, size_t n)
{
	return ((uint64_t)ge_hash(s, n) << 32) | (uint64_t)(n & 0xffffffffu);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void lines_make(lineset *ls, const ge_buf *b)
{
	ls->h = NULL;
	ls->n = 0;
	size_t cap = 0;
	const char *s = (const char *)b->data, *end = s + b->len;
	while (s && s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
		if (ls->n == cap) {
			cap = cap ? cap * 2 : 16;
			ls->h = ge_xrealloc(ls->h, cap * sizeof *ls->h);
		}
		ls->h[ls->n++] = line_hash(s, len);
		s += len + 1;
	}
	if (ls->n)
		qsort(ls->h, ls->n, sizeof *ls->h, cmp_u64);
}

static int lines_has(const lineset *ls, uint64_t h)
{
	return ls->n && bsearch(&h, ls->h, ls->n, sizeof h, cmp_u64) != NULL;
}

/* Fails with the validation problems that were not in the baseline. */
static int check_pass(ge_graph *g, const lineset *base, int pass,
		      const ge_rule *rules, const size_t *pc, size_t n,
		      ge_error *err)
{
	ge_buf rep = GE_BUF_INIT, msg = GE_BUF_INIT;
	size_t bad = 0;
	if (!ge_graph_validate(g, &rep)) {
		ge_buf_free(&rep);
		return GE_OK;
	}
	const char *s = (const char *)rep.data, *end = s + rep.len;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
		if (!lines_has(base, line_hash(s, len))) {
			if (bad++ < 3) {
				ge_buf_adds(&msg, bad > 1 ? "; " : "");
				ge_buf_add(&msg, s, len);
			}
		}
		s += len + 1;
	}
	int rc = GE_OK;
	if (bad) {
		ge_buf who = GE_BUF_INIT;
		for (size_t i = 0; i < n; i++)
			if (pc[i])
				ge_buf_printf(&who, "%s'%s'", who.len ? ", " : "",
					      RNAME(&rules[i]));
		rc = ge_err(err, GE_EGRAPH,
			    "%s: pass %d (rules %s) left the graph invalid: "
			    "%s%s",
			    ge_graph_name(g)[0] ? ge_graph_name(g) : "graph",
			    pass, (char *)who.data, (char *)msg.data,
			    bad > 3 ? " (and more)" : "");
		ge_buf_free(&who);
	}
	ge_buf_free(&rep);
	ge_buf_free(&msg);
	return rc;
}

int ge_rewrite(ge_graph *g, const ge_rule *rules, size_t n,
	       const ge_rewrite_opts *o, size_t *counts, size_t *passes,
	       ge_error *err)
{
	static const ge_rewrite_opts defaults = GE_REWRITE_OPTS_INIT;
	if (!o)
		o = &defaults;
	int max_it = o->max_iterations > 0 ? o->max_iterations : 100;
	int rc = GE_OK, pass;
	if (counts)
		memset(counts, 0, n * sizeof *counts);
	if (passes)
		*passes = 0;
	for (size_t i = 0; i < n; i++)
		if (!rules[i].pattern || !rules[i].action)
			return ge_err(err, GE_EINVAL,
				      "rule %zu ('%s') needs a pattern and an "
				      "action",
				      i + 1, rules[i].name ? rules[i].name : "");
	lineset base = {NULL, 0};
	if (!o->no_validate) {
		ge_buf rep = GE_BUF_INIT;
		if (ge_graph_validate(g, &rep))
			lines_make(&base, &rep);
		ge_buf_free(&rep);
	}
	rw w;
	memset(&w, 0, sizeof w);
	w.g = g;
	ge_opindex *ix = ge_opindex_new();
	size_t *pc = ge_xcalloc(n + 1, sizeof *pc);
	for (pass = 1;; pass++) {
		size_t total = 0;
		for (size_t i = 0; i < n; i++) {
			rc = run_rule(&w, &rules[i], ix, o, &pc[i], err);
			if (counts)
				counts[i] += pc[i];
			if (rc)
				goto out;
			total += pc[i];
		}
		if (passes)
			*passes = (size_t)pass;
		if (total && !o->no_validate &&
		    (rc = check_pass(g, &base, pass, rules, pc, n, err)))
			goto out;
		if (o->mode != GE_REWRITE_FIXPOINT || total == 0)
			break;
		if (pass >= max_it) {
			ge_buf who = GE_BUF_INIT;
			for (size_t i = 0; i < n; i++)
				if (pc[i])
					ge_buf_printf(&who, "%s'%s' (%zu)",
						      who.len ? ", " : "",
						      RNAME(&rules[i]), pc[i]);
			rc = ge_err(err, GE_EINVAL,
				    "no fixpoint after %d passes: rule%s %s "
				    "still rewrote in the last pass",
				    max_it, strchr((char *)who.data, ',') ? "s"
									   : "",
				    (char *)who.data);
			ge_buf_free(&who);
			goto out;
		}
	}
out:
	free(pc);
	free(base.h);
	free(w.mark);
	ge_opvec_free(&w.work);
	ge_opvec_free(&w.tmp);
	ge_tvec_free(&w.slots);
	ge_opindex_free(ix);
	return rc;
}
