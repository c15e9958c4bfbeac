/* pattern.c: building, copying and describing patterns (match.h). */
#include "match/match_impl.h"
#include "base/bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* ------------------------------------------------------------ patterns */

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
int ge_pat_base_dtype(int d)
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
		p->dtypes[p->n_dtypes++] = ge_pat_base_dtype(dtypes[i]);
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

void ge_pat_add_quoted(ge_buf *b, const char *s, size_t n, size_t max)
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

void ge_pat_add_dtype(ge_buf *b, int d)
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
void ge_pat_add_attr(ge_buf *b, const Tensorflow__AttrValue *v)
{
	if (!v) {
		ge_buf_adds(b, "(none)");
		return;
	}
	switch (v->value_case) {
	case TENSORFLOW__ATTR_VALUE__VALUE_S:
		ge_pat_add_quoted(b, (const char *)v->s.data, v->s.len, 60);
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
		ge_pat_add_dtype(b, (int)v->type);
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
		ITEM(n_s, ge_pat_add_quoted(b, (const char *)l->s[i].data, l->s[i].len,
				     30));
		ITEM(n_i, ge_buf_printf(b, "%lld", (long long)l->i[i]));
		ITEM(n_f, ge_buf_printf(b, "%g", (double)l->f[i]));
		ITEM(n_b, ge_buf_adds(b, l->b[i] ? "true" : "false"));
		ITEM(n_type, ge_pat_add_dtype(b, (int)l->type[i]));
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
		ge_pat_add_quoted(b, p->types_text ? p->types_text : "*",
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
		ge_pat_add_quoted(b, p->capture, strlen(p->capture), (size_t)-1);
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
		ge_pat_add_quoted(b, p->capture, strlen(p->capture), (size_t)-1);
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
				ge_pat_add_attr(b, p->attrs[i].val);
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
			ge_pat_add_dtype(b, p->dtypes[i]);
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
		ge_pat_add_quoted(b, re, strlen(re), (size_t)-1);
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

/* ------------------------------------------------------------ captures */

static void caps_walk(const ge_pat *p, int in_rest, int depth,
		      ge_pat_capinfo **v, size_t *n, size_t *cap)
{
	if (depth > MAX_DEPTH)
		return;
	if (p->capture) {
		size_t i;
		for (i = 0; i < *n; i++)
			if (!strcmp((*v)[i].name, p->capture))
				break;
		if (i == *n) {
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 8;
				*v = ge_xrealloc(*v, *cap * sizeof **v);
			}
			(*v)[(*n)++] = (ge_pat_capinfo){p->capture,
							GE_CAP_TENSOR, NULL, 0};
		}
		ge_pat_capinfo *c = &(*v)[i];
		if (in_rest && p->kind != GE_PAT_REF)
			c->is_list = 1;
		if ((p->kind == GE_PAT_OP || p->kind == GE_PAT_CONST) &&
		    c->kind != GE_CAP_OP) {
			c->kind = GE_CAP_OP;
			c->types = p->kind == GE_PAT_CONST ? "Const"
							   : p->types_text;
		}
	}
	for (size_t i = 0; i < p->n_operands; i++)
		caps_walk(p->operands[i], in_rest, depth + 1, v, n, cap);
	for (size_t i = 0; i < p->n_ctrl; i++)
		caps_walk(p->ctrl[i], in_rest, depth + 1, v, n, cap);
	if (p->sub)
		caps_walk(p->sub, in_rest || p->kind == GE_PAT_REST, depth + 1,
			  v, n, cap);
}

ge_pat_capinfo *ge_pat_captures(const ge_pat *p, size_t *n)
{
	ge_pat_capinfo *v = NULL;
	size_t cap = 0;
	*n = 0;
	caps_walk(p, 0, 0, &v, n, &cap);
	return v;
}
