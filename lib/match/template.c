/* template.c: declarative replacements instantiated by the rewrite driver
 * (template.h). */
#include "match/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "graph/opattrs.h"
#include "base/opreg.h"
#include "base/tensor.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* A tensor or op of the match (a capture slot) or of the template (a new
 * op's index). */
typedef struct lref {
	int is_new;
	size_t idx;
	int out;            /* an output index; -1: as captured */
} lref;

/* An OpDef default, encoded once: kept only for the built-in registry's
 * OpDefs, whose addresses stay put. */
typedef struct dflt {
	const Tensorflow__OpDef *def;
	int known;          /* def (and the fields below) are filled */
	uint8_t *raw;
	size_t len;
} dflt;

/* An attr of a captured op. */
typedef struct aref {
	size_t cap;
	char *attr;
	dflt d;
} aref;

enum { A_RAW = 1, A_COPY, A_LIST };

typedef struct elem {
	int how;
	char *s;            /* literal */
	int dtype;          /* literal of a list(type) */
	size_t cap;         /* GE_TMPL_TYPE_OF */
	aref a;             /* GE_TMPL_ATTR_OF */
} elem;

typedef struct aspec {
	char *name;
	int how;
	uint8_t *raw;       /* A_RAW */
	size_t len;
	aref src;           /* A_COPY */
	int kind;           /* A_LIST: GE_AK_S or GE_AK_TYPE */
	elem *el;
	size_t n_el;
} aspec;

typedef struct ospec {
	char *as;
	char *type;
	long type_from;     /* capture slot or -1 */
	long name_from;
	char *suffix;
	char *device;
	long device_from;
	lref *in;
	size_t n_in;
	lref *ctl;
	size_t n_ctl;
	aspec *at;
	size_t n_at;
} ospec;

typedef struct group {
	aref *v;
	size_t n;
} group;

struct ge_tmpl {
	ge_pat *pat;
	ge_pat_capinfo *caps;
	size_t n_caps;
	unsigned char *used;   /* capture slots the template reads */
	group *same;
	size_t n_same;
	size_t *noctl;
	size_t n_noctl;
	ospec *ops;
	size_t n_ops;
	lref *from, *to;
	size_t n_repl;
	/* per-site scratch */
	ge_opid *made;
	ge_buf buf, name;
	const char **an;
	const uint8_t **ab;
	size_t *al, *aoff, cap_attrs;
};

ge_tmpl *ge_tmpl_new(const ge_pat *p)
{
	ge_tmpl *t = ge_xcalloc(1, sizeof *t);
	t->pat = ge_pat_incref((ge_pat *)p);
	t->caps = ge_pat_captures(p, &t->n_caps);
	t->used = ge_xcalloc(t->n_caps + 1, 1);
	return t;
}

const ge_pat *ge_tmpl_pattern(const ge_tmpl *t)
{
	return t->pat;
}

static void aref_free(aref *a)
{
	free(a->attr);
	free(a->d.raw);
}

void ge_tmpl_free(ge_tmpl *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_same; i++) {
		for (size_t k = 0; k < t->same[i].n; k++)
			aref_free(&t->same[i].v[k]);
		free(t->same[i].v);
	}
	free(t->same);
	for (size_t i = 0; i < t->n_ops; i++) {
		ospec *o = &t->ops[i];
		for (size_t k = 0; k < o->n_at; k++) {
			aspec *a = &o->at[k];
			free(a->name);
			free(a->raw);
			aref_free(&a->src);
			for (size_t e = 0; e < a->n_el; e++) {
				free(a->el[e].s);
				aref_free(&a->el[e].a);
			}
			free(a->el);
		}
		free(o->at);
		free(o->as);
		free(o->type);
		free(o->suffix);
		free(o->device);
		free(o->in);
		free(o->ctl);
	}
	free(t->ops);
	free(t->noctl);
	free(t->from);
	free(t->to);
	free(t->made);
	ge_buf_free(&t->buf);
	ge_buf_free(&t->name);
	free(t->an);
	free(t->ab);
	free(t->al);
	free(t->aoff);
	free(t->caps);
	free(t->used);
	ge_pat_free(t->pat);
	free(t);
}

/* ------------------------------------------------------------ building */

static void labels_list(const ge_tmpl *t, ge_buf *b)
{
	if (!t->n_caps) {
		ge_buf_adds(b, "the pattern captures nothing");
		return;
	}
	ge_buf_adds(b, "the pattern binds ");
	for (size_t i = 0; i < t->n_caps; i++)
		ge_buf_printf(b, "%s%s", i ? ", " : "", t->caps[i].name);
	for (size_t i = 0; i < t->n_ops; i++)
		if (t->ops[i].as)
			ge_buf_printf(b, ", %s (new)", t->ops[i].as);
}

static int unknown_label(const ge_tmpl *t, const char *s, size_t n,
			 ge_error *err)
{
	ge_buf b = GE_BUF_INIT;
	labels_list(t, &b);
	int rc = ge_err(err, GE_EINVAL, "unknown label '%.*s' (%s)", (int)n,
			s, (char *)b.data);
	ge_buf_free(&b);
	return rc;
}

/* The capture slot of label s[0..n), or -1. */
static long find_cap(const ge_tmpl *t, const char *s, size_t n)
{
	for (size_t i = 0; i < t->n_caps; i++)
		if (strlen(t->caps[i].name) == n &&
		    !memcmp(t->caps[i].name, s, n))
			return (long)i;
	return -1;
}

static long find_new(const ge_tmpl *t, const char *s, size_t n)
{
	for (size_t i = 0; i < t->n_ops; i++)
		if (t->ops[i].as && strlen(t->ops[i].as) == n &&
		    !memcmp(t->ops[i].as, s, n))
			return (long)i;
	return -1;
}

static int use_cap(ge_tmpl *t, long slot, int need_op, const char *s,
		   size_t n, ge_error *err)
{
	const ge_pat_capinfo *c = &t->caps[slot];
	if (c->is_list)
		return ge_err(err, GE_EINVAL,
			      "label '%.*s' is captured inside rest() and holds "
			      "a list; a template takes single values",
			      (int)n, s);
	if (need_op && c->kind != GE_CAP_OP)
		return ge_err(err, GE_EINVAL,
			      "label '%.*s' binds a tensor, not an op", (int)n,
			      s);
	t->used[slot] = 1;
	return GE_OK;
}

/* A captured op: its slot in *slot. */
static int op_label(ge_tmpl *t, const char *label, size_t n, size_t *slot,
		    ge_error *err)
{
	long c = find_cap(t, label, n);
	if (c < 0) {
		if (find_new(t, label, n) >= 0)
			return ge_err(err, GE_EINVAL,
				      "label '%.*s' is a new op; a captured "
				      "op is needed here",
				      (int)n, label);
		return unknown_label(t, label, n, err);
	}
	*slot = (size_t)c;
	return use_cap(t, c, 1, label, n, err);
}

static int parse_tensor(ge_tmpl *t, const char *ref, int allow_new, lref *out,
			ge_error *err)
{
	const char *colon = strchr(ref, ':');
	size_t n = colon ? (size_t)(colon - ref) : strlen(ref);
	out->out = -1;
	if (colon) {
		char *end;
		long k = strtol(colon + 1, &end, 10);
		if (!colon[1] || *end || k < 0 || k > 1000000)
			return ge_err(err, GE_EINVAL,
				      "bad tensor reference '%s' (label or "
				      "label:output)",
				      ref);
		out->out = (int)k;
	}
	long c = find_cap(t, ref, n);
	if (c >= 0) {
		out->is_new = 0;
		out->idx = (size_t)c;
		return use_cap(t, c, colon != NULL, ref, n, err);
	}
	long k = allow_new ? find_new(t, ref, n) : -1;
	if (k >= 0) {
		out->is_new = 1;
		out->idx = (size_t)k;
		if (out->out < 0)
			out->out = 0;
		return GE_OK;
	}
	if (!allow_new && find_new(t, ref, n) >= 0)
		return ge_err(err, GE_EINVAL,
			      "'%.*s' is a new op: only tensors of the match "
			      "are replaced",
			      (int)n, ref);
	return unknown_label(t, ref, n, err);
}

/* Whether the OpDef of some type in types has attr `name`, and its kind
 * there (-1 when no OpDef is known, so nothing can be said). */
static int opdef_has(const char *types, const char *name, int *kind,
		     ge_buf *tl)
{
	int found = 0, unknown = 0;
	*kind = -1;
	const char *s = types;
	while (s && *s) {
		const char *bar = strchr(s, '|');
		size_t n = bar ? (size_t)(bar - s) : strlen(s);
		char type[256];
		snprintf(type, sizeof type, "%.*s", (int)n, s);
		ge_buf_printf(tl, "%s%s", tl->len ? "|" : "", type);
		const Tensorflow__OpDef *d = ge_opreg_find(type);
		if (!d)
			unknown = 1;
		for (size_t i = 0; d && i < d->n_attr; i++)
			if (!strcmp(d->attr[i]->name, name)) {
				found = 1;
				*kind = ge_attrkind_parse(d->attr[i]->type);
			}
		s = bar ? bar + 1 : NULL;
	}
	return found || unknown || !types;
}

/* Parses "label.attr" (or "label", meaning attr dflt_name) into a. */
static int attr_ref(ge_tmpl *t, const char *ref, const char *dflt_name,
		    int want_kind, aref *a, ge_error *err)
{
	const char *dot = strchr(ref, '.');
	size_t n = dot ? (size_t)(dot - ref) : strlen(ref);
	const char *attr = dot ? dot + 1 : dflt_name;
	if (!attr || !*attr)
		return ge_err(err, GE_EINVAL,
			      "bad attr reference '%s' (label.attr)", ref);
	int rc = op_label(t, ref, n, &a->cap, err);
	if (rc)
		return rc;
	const char *types = t->caps[a->cap].types;
	int kind;
	ge_buf tl = GE_BUF_INIT;
	if (!opdef_has(types, attr, &kind, &tl))
		rc = ge_err(err, GE_EINVAL,
			    "unknown attr '%s' of %s (the op captured as "
			    "'%.*s')",
			    attr, (char *)tl.data, (int)n, ref);
	else if (want_kind >= 0 && kind >= 0 && kind != want_kind)
		rc = ge_err(err, GE_EINVAL,
			    "attr '%s' of %s holds %s, not %s", attr,
			    (char *)tl.data, ge_attrkind_name(kind),
			    ge_attrkind_name(want_kind));
	ge_buf_free(&tl);
	if (!rc)
		a->attr = ge_xstrdup(attr);
	return rc;
}

int ge_tmpl_require_same(ge_tmpl *t, const char *const *refs, size_t n,
			 ge_error *err)
{
	if (n < 2)
		return ge_err(err, GE_EINVAL,
			      "'same' needs two attr references or more");
	aref *v = ge_xcalloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		int rc = attr_ref(t, refs[i], NULL, -1, &v[i], err);
		if (rc) {
			for (size_t k = 0; k < i; k++)
				aref_free(&v[k]);
			free(v);
			return rc;
		}
	}
	t->same = ge_xrealloc(t->same, (t->n_same + 1) * sizeof *t->same);
	t->same[t->n_same++] = (group){v, n};
	return GE_OK;
}

int ge_tmpl_require_no_control_outputs(ge_tmpl *t, const char *label,
				       ge_error *err)
{
	size_t slot;
	int rc = op_label(t, label, strlen(label), &slot, err);
	if (rc)
		return rc;
	t->noctl = ge_xrealloc(t->noctl, (t->n_noctl + 1) * sizeof *t->noctl);
	t->noctl[t->n_noctl++] = slot;
	return GE_OK;
}

int ge_tmpl_add_op(ge_tmpl *t, const char *as, const char *type,
		   const char *type_from, ge_error *err)
{
	if (!type == !type_from || (type && !*type))
		return ge_err(err, GE_EINVAL,
			      "a new op needs a type, or the label of a "
			      "captured op to take it from");
	if (as && (!*as || strchr(as, ':') || strchr(as, '.')))
		return ge_err(err, GE_EINVAL,
			      "bad label '%s' for a new op (no ':' or '.')",
			      as);
	if (as && (find_cap(t, as, strlen(as)) >= 0 ||
		   find_new(t, as, strlen(as)) >= 0))
		return ge_err(err, GE_EINVAL, "label '%s' is taken", as);
	size_t slot = 0;
	if (type_from) {
		int rc = op_label(t, type_from, strlen(type_from), &slot, err);
		if (rc)
			return rc;
	}
	if (t->n_ops >= 100000)
		return ge_err(err, GE_EINVAL, "too many new ops");
	t->ops = ge_xrealloc(t->ops, (t->n_ops + 1) * sizeof *t->ops);
	t->made = ge_xrealloc(t->made, (t->n_ops + 1) * sizeof *t->made);
	ospec *o = &t->ops[t->n_ops];
	memset(o, 0, sizeof *o);
	o->as = as ? ge_xstrdup(as) : NULL;
	o->type = type ? ge_xstrdup(type) : NULL;
	o->type_from = type_from ? (long)slot : -1;
	o->name_from = o->device_from = -1;
	return (int)t->n_ops++;
}

static ospec *op_at(ge_tmpl *t, int op, ge_error *err)
{
	if (op < 0 || (size_t)op >= t->n_ops) {
		ge_err(err, GE_EINVAL, "no new op %d", op);
		return NULL;
	}
	return &t->ops[op];
}

int ge_tmpl_op_name(ge_tmpl *t, int op, const char *label,
		    const char *suffix, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	size_t slot;
	if (!o)
		return GE_EINVAL;
	int rc = op_label(t, label, strlen(label), &slot, err);
	if (rc)
		return rc;
	if (!suffix || !*suffix)
		for (size_t i = 0; i < t->n_ops; i++)
			if ((int)i != op && t->ops[i].name_from == (long)slot &&
			    !t->ops[i].suffix)
				return ge_err(err, GE_EINVAL,
					      "two new ops take the name of "
					      "'%s'",
					      label);
	o->name_from = (long)slot;
	free(o->suffix);
	o->suffix = suffix && *suffix ? ge_xstrdup(suffix) : NULL;
	return GE_OK;
}

int ge_tmpl_op_device(ge_tmpl *t, int op, const char *device,
		      const char *label, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	if (!device == !label)
		return ge_err(err, GE_EINVAL,
			      "a device, or the label of a captured op");
	if (label) {
		size_t slot;
		int rc = op_label(t, label, strlen(label), &slot, err);
		if (rc)
			return rc;
		o->device_from = (long)slot;
	} else {
		free(o->device);
		o->device = ge_xstrdup(device);
	}
	return GE_OK;
}

int ge_tmpl_op_input(ge_tmpl *t, int op, const char *ref, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	lref r;
	int rc = parse_tensor(t, ref, 1, &r, err);
	if (rc)
		return rc;
	if (r.is_new && r.idx >= (size_t)op)
		return ge_err(err, GE_EINVAL,
			      "'%s' is not made yet: a new op reads only the "
			      "ops made before it",
			      ref);
	o->in = ge_xrealloc(o->in, (o->n_in + 1) * sizeof *o->in);
	o->in[o->n_in++] = r;
	return GE_OK;
}

int ge_tmpl_op_control_input(ge_tmpl *t, int op, const char *label,
			     ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	lref r = {0, 0, -1};
	long k = find_new(t, label, strlen(label));
	if (k >= 0) {
		if (k >= op)
			return ge_err(err, GE_EINVAL,
				      "'%s' is not made yet", label);
		r.is_new = 1;
		r.idx = (size_t)k;
	} else {
		int rc = op_label(t, label, strlen(label), &r.idx, err);
		if (rc)
			return rc;
	}
	o->ctl = ge_xrealloc(o->ctl, (o->n_ctl + 1) * sizeof *o->ctl);
	o->ctl[o->n_ctl++] = r;
	return GE_OK;
}

static aspec *new_attr(ospec *o, const char *name, int how)
{
	o->at = ge_xrealloc(o->at, (o->n_at + 1) * sizeof *o->at);
	aspec *a = &o->at[o->n_at++];
	memset(a, 0, sizeof *a);
	a->name = ge_xstrdup(name);
	a->how = how;
	return a;
}

static int attr_name_ok(const ospec *o, const char *name, ge_error *err)
{
	if (!name || !*name)
		return ge_err(err, GE_EINVAL, "an attr needs a name");
	for (size_t i = 0; i < o->n_at; i++)
		if (!strcmp(o->at[i].name, name))
			return ge_err(err, GE_EINVAL, "attr '%s' given twice",
				      name);
	return GE_OK;
}

int ge_tmpl_op_attr_raw(ge_tmpl *t, int op, const char *name,
			const uint8_t *bytes, size_t len, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	int rc = attr_name_ok(o, name, err);
	if (rc)
		return rc;
	aspec *a = new_attr(o, name, A_RAW);
	a->raw = ge_xmalloc(len + 1);
	if (len)
		memcpy(a->raw, bytes, len);
	a->len = len;
	return GE_OK;
}

int ge_tmpl_op_attr_copy(ge_tmpl *t, int op, const char *name,
			 const char *ref, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	int rc = attr_name_ok(o, name, err);
	aref src;
	memset(&src, 0, sizeof src);
	if (!rc)
		rc = attr_ref(t, ref, name, -1, &src, err);
	if (rc)
		return rc;
	new_attr(o, name, A_COPY)->src = src;
	return GE_OK;
}

int ge_tmpl_op_attr_list(ge_tmpl *t, int op, const char *name, int kind,
			 const ge_tmpl_elem *elems, size_t n, ge_error *err)
{
	ospec *o = op_at(t, op, err);
	if (!o)
		return GE_EINVAL;
	int rc = attr_name_ok(o, name, err);
	if (rc)
		return rc;
	if (kind != GE_AK_S && kind != GE_AK_TYPE)
		return ge_err(err, GE_EINVAL,
			      "attr '%s': a list built per site holds strings "
			      "or types",
			      name);
	elem *el = ge_xcalloc(n + 1, sizeof *el);
	for (size_t i = 0; !rc && i < n; i++) {
		const ge_tmpl_elem *e = &elems[i];
		el[i].how = e->how;
		if (!e->s) {
			rc = ge_err(err, GE_EINVAL, "element %zu is empty",
				    i + 1);
		} else if (e->how == GE_TMPL_LIT) {
			el[i].s = ge_xstrdup(e->s);
			if (kind == GE_AK_TYPE &&
			    (el[i].dtype = ge_dtype_from_name(e->s)) < 0)
				rc = ge_err(err, GE_EINVAL,
					    "element %zu: '%s' is not a dtype",
					    i + 1, e->s);
		} else if (e->how == GE_TMPL_TYPE_OF) {
			if (kind != GE_AK_S)
				rc = ge_err(err, GE_EINVAL,
					    "element %zu: an op type is a "
					    "string, not a type",
					    i + 1);
			else
				rc = op_label(t, e->s, strlen(e->s), &el[i].cap,
					      err);
		} else if (e->how == GE_TMPL_ATTR_OF) {
			rc = attr_ref(t, e->s, NULL, kind, &el[i].a, err);
		} else {
			rc = ge_err(err, GE_EINVAL, "element %zu: bad kind",
				    i + 1);
		}
		if (rc)
			ge_err_prefix(err, "attr '%s'", name);
	}
	if (rc) {
		for (size_t i = 0; i < n; i++) {
			free(el[i].s);
			aref_free(&el[i].a);
		}
		free(el);
		return rc;
	}
	aspec *a = new_attr(o, name, A_LIST);
	a->kind = kind;
	a->el = el;
	a->n_el = n;
	return GE_OK;
}

int ge_tmpl_replace(ge_tmpl *t, const char *from, const char *to,
		    ge_error *err)
{
	lref f, x;
	int rc = parse_tensor(t, from, 0, &f, err);
	if (!rc)
		rc = parse_tensor(t, to, 1, &x, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < t->n_repl; i++)
		if (t->from[i].idx == f.idx && t->from[i].out == f.out)
			return ge_err(err, GE_EINVAL, "'%s' is replaced twice",
				      from);
	t->from = ge_xrealloc(t->from, (t->n_repl + 1) * sizeof *t->from);
	t->to = ge_xrealloc(t->to, (t->n_repl + 1) * sizeof *t->to);
	t->from[t->n_repl] = f;
	t->to[t->n_repl++] = x;
	return GE_OK;
}

int ge_tmpl_check(const ge_tmpl *t, ge_error *err)
{
	if (!t->n_repl)
		return ge_err(err, GE_EINVAL,
			      "the template replaces no tensor of the match");
	return GE_OK;
}

/* ------------------------------------------------------------ instances */

/* The encoded value of attr a->attr of op, or its OpDef's default; NULL
 * when neither.  *fleeting is set when the bytes are only good until the
 * next call (a default from the graph's own OpDef). */
static const uint8_t *attr_value(const ge_graph *g, ge_opid op, aref *a,
				 size_t *len, int *fleeting)
{
	*fleeting = 0;
	const uint8_t *p = ge_op_attr_raw(g, op, a->attr, len);
	if (p)
		return p;
	const char *type = ge_op_type(g, op);
	const Tensorflow__OpDef *def = ge_graph_opdef(g, type);
	if (!def)
		return NULL;
	if (a->d.known && a->d.def == def) {
		*len = a->d.len;
		return a->d.raw;
	}
	const Tensorflow__AttrValue *v = NULL;
	for (size_t i = 0; i < def->n_attr; i++)
		if (!strcmp(def->attr[i]->name, a->attr))
			v = def->attr[i]->default_value;
	uint8_t *raw = NULL;
	size_t n = 0;
	if (v) {
		n = tensorflow__attr_value__get_packed_size(v);
		raw = ge_xmalloc(n + 1);
		tensorflow__attr_value__pack(v, raw);
	}
	/* The built-in table's OpDefs stay put: their defaults are encoded
	 * once.  A graph's own OpDef may go with its graph. */
	int keep = def == ge_opreg_find(type);
	free(a->d.raw);
	a->d = (dflt){keep ? def : NULL, keep, raw, n};
	*fleeting = !keep;
	*len = n;
	return raw;
}

static Tensorflow__AttrValue *unpack_attr(const uint8_t *p, size_t n)
{
	return (Tensorflow__AttrValue *)ge_pb_unpack(
		&tensorflow__attr_value__descriptor, n, p);
}

/* Equal values, told apart from equal bytes only when the bytes differ. */
static int same_value(const uint8_t *a, size_t la, const uint8_t *b,
		      size_t lb)
{
	if (la == lb && !memcmp(a, b, la))
		return 1;
	Tensorflow__AttrValue *x = unpack_attr(a, la), *y = unpack_attr(b, lb);
	int eq = 0;
	if (x && y) {
		size_t nx = tensorflow__attr_value__get_packed_size(x);
		size_t ny = tensorflow__attr_value__get_packed_size(y);
		if (nx == ny) {
			uint8_t *px = ge_xmalloc(nx + 1), *py = ge_xmalloc(ny + 1);
			tensorflow__attr_value__pack(x, px);
			tensorflow__attr_value__pack(y, py);
			eq = !memcmp(px, py, nx);
			free(px);
			free(py);
		}
	}
	if (x)
		protobuf_c_message_free_unpacked(&x->base, NULL);
	if (y)
		protobuf_c_message_free_unpacked(&y->base, NULL);
	return eq;
}

static ge_opid cap_op(const ge_match *m, size_t slot)
{
	return m->caps[slot].t.op;
}

static int conditions_hold(const ge_tmpl *t, const ge_graph *g,
			   const ge_match *m)
{
	for (size_t i = 0; i < t->n_noctl; i++) {
		size_t n;
		ge_op_control_outputs(g, cap_op(m, t->noctl[i]), &n);
		if (n)
			return 0;
	}
	for (size_t i = 0; i < t->n_same; i++) {
		group *s = &t->same[i];
		size_t l0;
		int fl;
		const uint8_t *v0 = attr_value(g, cap_op(m, s->v[0].cap),
					       &s->v[0], &l0, &fl);
		if (!v0)
			return 0;
		/* the graph's memory may move while defaults are read */
		uint8_t stack[64], *c0 = l0 <= sizeof stack ? stack
							    : ge_xmalloc(l0);
		memcpy(c0, v0, l0);
		int ok = 1;
		for (size_t k = 1; ok && k < s->n; k++) {
			size_t lk;
			const uint8_t *vk = attr_value(
				g, cap_op(m, s->v[k].cap), &s->v[k], &lk, &fl);
			ok = vk && same_value(c0, l0, vk, lk);
		}
		if (c0 != stack)
			free(c0);
		if (!ok)
			return 0;
	}
	return 1;
}

/* The value of field `field` (wire type wt) of AttrValue bytes: a varint
 * in *v, or bytes in *s, *n.  0 when found. */
static int attr_field(const uint8_t *p, size_t len, uint32_t field, int wt,
		      uint64_t *v, const uint8_t **s, size_t *n)
{
	ge_wire w = ge_wire_of(p, len);
	ge_wire_field f;
	int found = -1;
	/* the last of a repeated field, as a parser keeps it */
	while (ge_wire_next(&w, &f)) {
		if (f.num != field || (int)f.wt != wt)
			continue;
		if (wt == GE_WT_LEN) {
			*s = f.data;
			*n = f.len;
		} else {
			*v = f.v;
		}
		found = 0;
	}
	return w.bad ? -1 : found;
}

/* Appends the list attr's AttrValue to t->buf (lists_ok said it can). */
static void encode_list(ge_tmpl *t, const ge_graph *g, const ge_match *m,
		       aspec *a)
{
	ge_buf *b = &t->buf;
	size_t start = b->len, packed = 0;
	if (a->kind == GE_AK_TYPE && a->n_el)
		packed = b->len;
	for (size_t i = 0; i < a->n_el; i++) {
		elem *e = &a->el[i];
		const char *s = NULL;
		size_t n = 0;
		uint64_t v = 0;
		if (e->how == GE_TMPL_LIT) {
			s = e->s;
			n = strlen(s);
			v = (uint64_t)e->dtype;
		} else if (e->how == GE_TMPL_TYPE_OF) {
			s = ge_op_type(g, cap_op(m, e->cap));
			n = strlen(s);
		} else {
			size_t len;
			int fl;
			const uint8_t *raw = attr_value(
				g, cap_op(m, e->a.cap), &e->a, &len, &fl);
			const uint8_t *bs = NULL;
			if (!raw || (a->kind == GE_AK_TYPE
					     ? attr_field(raw, len, 6, 0, &v, &bs, &n)
					     : attr_field(raw, len, 2, 2, &v, &bs,
							  &n)))
				continue; /* cannot happen after lists_ok */
			s = (const char *)bs;
		}
		if (a->kind == GE_AK_S)
			ge_buf_lenfield(b, 2, s, n);
		else
			ge_buf_varint(b, v);
	}
	if (a->kind == GE_AK_TYPE && a->n_el)
		ge_buf_wrap(b, packed, 6);
	ge_buf_wrap(b, start, 1);
}

static void fit_attrs(ge_tmpl *t, size_t n)
{
	if (n <= t->cap_attrs)
		return;
	t->cap_attrs = n;
	t->an = ge_xrealloc(t->an, n * sizeof *t->an);
	t->ab = ge_xrealloc(t->ab, n * sizeof *t->ab);
	t->al = ge_xrealloc(t->al, n * sizeof *t->al);
	t->aoff = ge_xrealloc(t->aoff, n * sizeof *t->aoff);
}

/* Sets the attrs of new op id (lists_ok said its lists encode). */
static void make_attrs(ge_tmpl *t, ge_graph *g, const ge_match *m,
		      const ospec *o, ge_opid id)
{
	fit_attrs(t, o->n_at + 1);
	t->buf.len = 0;
	size_t n = 0;
	for (size_t i = 0; i < o->n_at; i++) {
		aspec *a = &o->at[i];
		t->aoff[n] = (size_t)-1;
		t->an[n] = a->name;
		if (a->how == A_RAW) {
			t->ab[n] = a->raw;
			t->al[n] = a->len;
		} else if (a->how == A_COPY) {
			int fl;
			t->ab[n] = attr_value(g, cap_op(m, a->src.cap), &a->src,
					      &t->al[n], &fl);
			if (!t->ab[n])
				continue; /* neither set nor defaulted */
			if (fl) {
				t->aoff[n] = t->buf.len;
				ge_buf_add(&t->buf, t->ab[n], t->al[n]);
			}
		} else {
			t->aoff[n] = t->buf.len;
			encode_list(t, g, m, a);
			t->al[n] = t->buf.len - t->aoff[n];
		}
		n++;
	}
	for (size_t i = 0; i < n; i++)
		if (t->aoff[i] != (size_t)-1)
			t->ab[i] = t->buf.data + t->aoff[i];
	if (n)
		ge_op_add_attrs_raw(g, id, n, t->an, t->ab, t->al);
}

/* Whether every list element taken from an attr holds a value of the
 * list's kind at this site (checked before anything is made, so a site
 * left alone leaves the graph as it was). */
static int lists_ok(const ge_tmpl *t, const ge_graph *g, const ge_match *m)
{
	for (size_t i = 0; i < t->n_ops; i++)
		for (size_t k = 0; k < t->ops[i].n_at; k++) {
			aspec *a = &t->ops[i].at[k];
			for (size_t e = 0; a->how == A_LIST && e < a->n_el;
			     e++) {
				elem *el = &a->el[e];
				if (el->how != GE_TMPL_ATTR_OF)
					continue;
				size_t len, n;
				int fl;
				uint64_t v;
				const uint8_t *s, *raw = attr_value(
					g, cap_op(m, el->a.cap), &el->a, &len,
					&fl);
				if (!raw || (a->kind == GE_AK_TYPE
						     ? attr_field(raw, len, 6, 0,
								  &v, &s, &n)
						     : attr_field(raw, len, 2, 2,
								  &v, &s, &n)))
					return 0;
			}
		}
	return 1;
}

static ge_tref tensor_of(const ge_tmpl *t, const ge_match *m, lref r)
{
	if (r.is_new)
		return (ge_tref){t->made[r.idx], r.out};
	const ge_capture *c = &m->caps[r.idx];
	if (r.out >= 0)
		return (ge_tref){c->t.op, r.out};
	if (c->kind == GE_CAP_TENSOR)
		return c->t;
	return (ge_tref){c->t.op, 0};
}

static const char *new_name(ge_tmpl *t, ge_graph *g, const ge_match *m,
			    const ospec *o, const char *type)
{
	if (o->name_from < 0)
		return ge_graph_unique_name(g, type);
	t->name.len = 0;
	ge_buf_adds(&t->name, ge_op_name(g, cap_op(m, (size_t)o->name_from)));
	/* a stand-in until the op whose name it takes is gone */
	ge_buf_adds(&t->name, o->suffix ? o->suffix : "/_new");
	return ge_graph_unique_name(g, (char *)t->name.data);
}

/* Makes new op i; 1 done, < 0 error. */
static int make_op(ge_tmpl *t, ge_graph *g, const ge_match *m, size_t i,
		   ge_rewrite_repl *r, ge_error *err)
{
	const ospec *o = &t->ops[i];
	const char *type = o->type ? o->type
				   : ge_op_type(g, cap_op(m, (size_t)o->type_from));
	ge_opid id = ge_graph_add_op(g, new_name(t, g, m, o, type), type, err);
	if (id == GE_NOOP)
		return GE_EINVAL;
	t->made[i] = id;
	for (size_t k = 0; k < o->n_in; k++) {
		int rc = ge_op_add_input(g, id, tensor_of(t, m, o->in[k]), err);
		if (rc)
			return rc;
	}
	for (size_t k = 0; k < o->n_ctl; k++) {
		lref c = o->ctl[k];
		ge_opid q = c.is_new ? t->made[c.idx] : cap_op(m, c.idx);
		int rc = ge_op_add_control_input(g, id, q, err);
		if (rc)
			return rc;
	}
	make_attrs(t, g, m, o, id);
	if (o->device)
		ge_op_set_device(g, id, o->device);
	else if (o->device_from >= 0)
		ge_op_set_device(g, id, ge_op_device(g, cap_op(m,
					(size_t)o->device_from)));
	if (o->name_from >= 0 && !o->suffix)
		ge_rewrite_take_name(r, id, cap_op(m, (size_t)o->name_from));
	return 1;
}

int ge_tmpl_action(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		   void *ud, ge_error *err)
{
	ge_tmpl *t = ud;
	if (m->n_caps != t->n_caps)
		return ge_err(err, GE_EINVAL,
			      "the template was made for another pattern");
	for (size_t i = 0; i < t->n_caps; i++)
		if (t->used[i] && m->caps[i].kind == GE_CAP_NONE)
			return 0;
	if (!conditions_hold(t, g, m) || !lists_ok(t, g, m))
		return 0;
	ge_opid cap0 = (ge_opid)ge_graph_capacity(g);
	int rc = 1;
	for (size_t i = 0; rc == 1 && i < t->n_ops; i++)
		rc = make_op(t, g, m, i, r, err);
	if (rc != 1) {
		/* nothing of a half-made site stays */
		for (size_t id = ge_graph_capacity(g); id-- > cap0;)
			if (ge_op_alive(g, (ge_opid)id))
				ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
		r->names.n = 0;
		return rc;
	}
	/* in the order of the replaced tensors, as ge.rewrite's Lua
	 * actions hand them over */
	size_t base = r->from.n;
	for (size_t i = 0; i < t->n_repl; i++) {
		ge_tref f = tensor_of(t, m, t->from[i]);
		ge_tref x = tensor_of(t, m, t->to[i]);
		ge_rewrite_replace(r, f, x);
		for (size_t k = base + i; k > base; k--) {
			ge_tref a = r->from.v[k - 1], b = r->from.v[k];
			if (a.op < b.op || (a.op == b.op && a.index <= b.index))
				break;
			r->from.v[k - 1] = b;
			r->from.v[k] = a;
			ge_tref c = r->to.v[k - 1];
			r->to.v[k - 1] = r->to.v[k];
			r->to.v[k] = c;
		}
	}
	return 1;
}
