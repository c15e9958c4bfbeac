/*
 * exec/xvalue.c: the values the command line feeds a model (npy.h):
 * literals, .npy files, seeded data, checked against the input.
 */
#include "exec/npy.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/tensor.h"

enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_STRING = 7,
	DT_COMPLEX64 = 8, DT_BOOL = 10, DT_BFLOAT16 = 14, DT_COMPLEX128 = 18,
	DT_HALF = 19,
};

/* ---------------------------------------------------------------- random */

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void ge_xrand_init(ge_xrand *r, uint64_t seed, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the name */
	for (const char *p = name ? name : ""; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	r->s = mix(seed) ^ h;
}

uint64_t ge_xrand_next(ge_xrand *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix(r->s);
}

double ge_xrand_unit(ge_xrand *r)
{
	return (double)(ge_xrand_next(r) >> 11) * 0x1.0p-53;
}

/* ---------------------------------------------------------------- elements */

static int is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF ||
	       dt == DT_BFLOAT16 || dt == DT_COMPLEX64 || dt == DT_COMPLEX128;
}

/* Stores a number as element k (the real part of a complex). */
static void set_num(ge_xt *t, int64_t k, double d, int64_t i, int integral)
{
	void *p = t->data;
	switch (t->dtype) {
	case DT_FLOAT: ((float *)p)[k] = (float)d; return;
	case DT_DOUBLE: ((double *)p)[k] = d; return;
	case DT_HALF: ((uint16_t *)p)[k] = ge_half_from_double(d); return;
	case DT_BFLOAT16: ((uint16_t *)p)[k] = ge_bf16_from_double(d); return;
	case DT_COMPLEX64: ((float *)p)[2 * k] = (float)d; return;
	case DT_COMPLEX128: ((double *)p)[2 * k] = d; return;
	default: break;
	}
	if (!integral)
		i = (int64_t)d;
	switch (ge_xt_elem_size(t->dtype)) {
	case 1: ((uint8_t *)p)[k] = (uint8_t)i; break;
	case 2: ((uint16_t *)p)[k] = (uint16_t)i; break;
	case 4: ((uint32_t *)p)[k] = (uint32_t)i; break;
	case 8: ((uint64_t *)p)[k] = (uint64_t)i; break;
	}
}

/* ---------------------------------------------------------------- shapes */

static void shape_str(int rank, const int64_t *dims, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < rank && n < cap; i++) {
		if (dims[i] < 0)
			n += (size_t)snprintf(buf + n, cap - n, "%s?",
					      i ? "," : "");
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64,
					      i ? "," : "", dims[i]);
	}
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
}

int ge_xinput_check(const ge_xinput_info *in, const ge_xt *t,
		     const char *what, ge_error *err)
{
	if (in->dtype && t->dtype != in->dtype) {
		const char *a = ge_dtype_name(t->dtype);
		const char *b = ge_dtype_name(in->dtype);
		return ge_err(err, GE_EINVAL, "input '%s': %s is %s, the "
			      "input is %s", in->name, what, a ? a : "?",
			      b ? b : "?");
	}
	if (in->rank < 0)
		return GE_OK;
	int bad = t->rank != in->rank;
	for (int i = 0; !bad && i < t->rank; i++)
		bad = in->dims[i] >= 0 && in->dims[i] != t->dims[i];
	if (bad) {
		char want[256], got[256];
		shape_str(in->rank, in->dims, want, sizeof want);
		shape_str(t->rank, t->dims, got, sizeof got);
		return ge_err(err, GE_EINVAL, "input '%s': %s has shape %s, "
			      "the input takes %s", in->name, what, got, want);
	}
	return GE_OK;
}

/* The input's shape with unknown dims made concrete. */
static int concrete_shape(const ge_xinput_info *in, int64_t *dims)
{
	if (in->rank < 0)
		return 0;
	for (int i = 0; i < in->rank; i++)
		dims[i] = in->dims[i] >= 0 ? in->dims[i]
			  : in->unknown_dim > 0 ? in->unknown_dim : 1;
	return in->rank;
}

/* Whether values of dt can be made here: not resource or variant
 * handles, which only the executor makes. */
static int valued(const ge_xinput_info *in, int dt, ge_error *err)
{
	if (ge_dtype_info(dt) && ge_xt_elem_size(dt))
		return GE_OK;
	const char *n = ge_dtype_name(dt);
	return ge_err(err, GE_EINVAL, "input '%s': a %s input cannot be given "
		      "a value (only the model makes those)", in->name,
		      n ? n : "?");
}

/* ---------------------------------------------------------------- literals */

/* A literal: numbers, true/false, quoted strings, nested in lists. */
struct lit {
	const char *p;
	const char *name;
	double *d;      /* the elements, flat */
	int64_t *i;
	char **s;
	size_t n, cap;
	int any_float, any_bool, any_str, any_num;
	int leaf_depth; /* -1 until the first element */
	int maxdepth;   /* lists nest this deep */
	int64_t dims[GE_SHAPE_MAXRANK];
	unsigned char dim_set[GE_SHAPE_MAXRANK];
	ge_error *err;
};

static void lit_ws(struct lit *L)
{
	while (isspace((unsigned char)*L->p))
		L->p++;
}

static int lit_push(struct lit *L, double d, int64_t i, char *s)
{
	if (L->n == L->cap) {
		if (L->cap >= ((size_t)1 << 27)) {
			free(s);
			return ge_err(L->err, GE_EINVAL, "input '%s': the "
				      "literal is too long", L->name);
		}
		L->cap = L->cap ? 2 * L->cap : 16;
		L->d = ge_xrealloc(L->d, L->cap * sizeof *L->d);
		L->i = ge_xrealloc(L->i, L->cap * sizeof *L->i);
		L->s = ge_xrealloc(L->s, L->cap * sizeof *L->s);
	}
	L->d[L->n] = d;
	L->i[L->n] = i;
	L->s[L->n] = s;
	L->n++;
	return GE_OK;
}

static int lit_string(struct lit *L)
{
	const char *s = L->p;
	char q = *s++;
	ge_buf b = GE_BUF_INIT;
	while (*s && *s != q) {
		if (*s == '\\' && s[1])
			s++;
		ge_buf_addc(&b, *s++);
	}
	if (!*s) {
		ge_buf_free(&b);
		return ge_err(L->err, GE_EINVAL, "input '%s': unclosed string "
			      "in the value", L->name);
	}
	L->p = s + 1;
	L->any_str = 1;
	size_t len = b.len;
	ge_buf_addc(&b, 0);
	return lit_push(L, 0, (int64_t)len, (char *)ge_buf_steal(&b, NULL));
}

static int lit_scalar(struct lit *L)
{
	const char *s = L->p;
	if (*s == '"' || *s == '\'')
		return lit_string(L);
	static const char *const words[] = {"true", "True", "false", "False"};
	for (int w = 0; w < 4; w++) {
		size_t n = strlen(words[w]);
		if (!strncmp(s, words[w], n) && !isalnum((unsigned char)s[n])) {
			L->p = s + n;
			L->any_bool = 1;
			return lit_push(L, w < 2, w < 2, NULL);
		}
	}
	char *iend, *dend;
	long long iv = strtoll(s, &iend, 10);
	double dv = strtod(s, &dend);
	if (dend == s || isalpha((unsigned char)*dend))
		return ge_err(L->err, GE_EINVAL, "input '%s': '%.20s' is not a "
			      "number, true, false or a quoted string",
			      L->name, s);
	L->p = dend;
	L->any_num = 1;
	if (iend == dend)
		return lit_push(L, (double)iv, iv, NULL);
	L->any_float = 1;
	return lit_push(L, dv, (int64_t)dv, NULL);
}

static int not_rect(struct lit *L)
{
	return ge_err(L->err, GE_EINVAL, "input '%s': the value's lists are "
		      "not rectangular", L->name);
}

static int lit_value(struct lit *L, int depth)
{
	lit_ws(L);
	if (*L->p != '[') {
		if (L->leaf_depth < 0)
			L->leaf_depth = depth;
		else if (L->leaf_depth != depth)
			return not_rect(L);
		return lit_scalar(L);
	}
	if (depth >= GE_SHAPE_MAXRANK)
		return ge_err(L->err, GE_EINVAL, "input '%s': the value nests "
			      "deeper than %d", L->name, GE_SHAPE_MAXRANK);
	if (depth + 1 > L->maxdepth)
		L->maxdepth = depth + 1;
	L->p++;
	int64_t count = 0;
	lit_ws(L);
	while (*L->p != ']') {
		int rc = lit_value(L, depth + 1);
		if (rc)
			return rc;
		count++;
		lit_ws(L);
		if (*L->p != ',')
			break;
		L->p++;
		lit_ws(L);
	}
	if (*L->p != ']')
		return ge_err(L->err, GE_EINVAL, "input '%s': ']' or ',' "
			      "expected at '%.20s'", L->name, L->p);
	L->p++;
	if (!L->dim_set[depth]) {
		L->dim_set[depth] = 1;
		L->dims[depth] = count;
	} else if (L->dims[depth] != count) {
		return not_rect(L);
	}
	return GE_OK;
}

static void lit_free(struct lit *L)
{
	for (size_t k = 0; k < L->n; k++)
		free(L->s[k]);
	free(L->d);
	free(L->i);
	free(L->s);
}

/* The literal's elements into a new tensor of dtype dt and the given
 * shape (n elements; one literal element fills them all when the
 * literal is a scalar). */
static int lit_fill(struct lit *L, int dt, int rank, const int64_t *dims,
		    ge_xbudget *b, ge_xt **out)
{
	const char *dn = ge_dtype_name(dt) ? ge_dtype_name(dt) : "?";
	if ((dt == DT_STRING) != (L->any_str != 0) ||
	    (L->any_str && (L->any_num || L->any_bool)))
		return ge_err(L->err, GE_EINVAL, "input '%s': the value does "
			      "not fit dtype %s", L->name, dn);
	if (L->any_float && !is_float(dt))
		return ge_err(L->err, GE_EINVAL, "input '%s': a fraction in a "
			      "value of dtype %s", L->name, dn);
	const ge_dtinfo *di = ge_dtype_info(dt);
	ge_xt *t = ge_xt_new(dt, rank, dims, b, L->name, L->err);
	if (!t)
		return L->err ? L->err->code : GE_EINVAL;
	for (int64_t k = 0; k < t->n; k++) {
		size_t e = L->n == 1 ? 0 : (size_t)k;
		if (dt == DT_STRING) {
			ge_xstr *s = &((ge_xstr *)t->data)[k];
			s->len = (size_t)L->i[e];
			s->p = s->len ? ge_xstrdup(L->s[e]) : NULL;
			continue;
		}
		if (!is_float(dt) && dt != DT_BOOL && di && di->bits < 64) {
			int64_t lo, hi;
			ge_dtype_int_range(di, &lo, &hi);
			if (L->i[e] < lo || L->i[e] > hi) {
				ge_xt_unref(t);
				return ge_err(L->err, GE_EINVAL, "input '%s': %"
					      PRId64 " is out of range for %s",
					      L->name, L->i[e], dn);
			}
		}
		if (dt == DT_BOOL && L->i[e] != 0 && L->i[e] != 1) {
			ge_xt_unref(t);
			return ge_err(L->err, GE_EINVAL, "input '%s': a bool "
				      "value is true, false, 0 or 1", L->name);
		}
		set_num(t, k, L->d[e], L->i[e], !L->any_float);
	}
	*out = t;
	return GE_OK;
}

static int parse_literal(const char *text, const ge_xinput_info *in,
			 ge_xbudget *b, ge_xt **out, ge_error *err)
{
	struct lit L;
	memset(&L, 0, sizeof L);
	L.p = text;
	L.name = in->name;
	L.leaf_depth = -1;
	L.err = err;
	int rc = lit_value(&L, 0);
	lit_ws(&L);
	if (!rc && *L.p)
		rc = ge_err(err, GE_EINVAL, "input '%s': unexpected '%.20s' "
			    "after the value", in->name, L.p);
	if (!rc && L.leaf_depth >= 0 && L.leaf_depth != L.maxdepth)
		rc = not_rect(&L);
	if (rc) {
		lit_free(&L);
		return rc;
	}
	int dt = in->dtype;
	if (!dt)
		dt = L.any_str ? DT_STRING : L.any_bool && !L.any_num ? DT_BOOL
		     : L.any_float ? DT_FLOAT : DT_INT32;
	if (valued(in, dt, err)) {
		lit_free(&L);
		return GE_EINVAL;
	}
	int rank = L.maxdepth;
	int64_t dims[GE_SHAPE_MAXRANK];
	memcpy(dims, L.dims, sizeof dims);
	/* a scalar fills the input's whole shape */
	if (rank == 0 && in->rank > 0)
		rank = concrete_shape(in, dims);
	rc = lit_fill(&L, dt, rank, dims, b, out);
	lit_free(&L);
	if (rc)
		return rc;
	if ((rc = ge_xinput_check(in, *out, "the value", err))) {
		ge_xt_unref(*out);
		*out = NULL;
	}
	return rc;
}

/* ---------------------------------------------------------------- seeded */

static void fill_seeded(ge_xt *t, ge_xrand *r, double lo, double hi)
{
	for (int64_t k = 0; k < t->n; k++) {
		if (t->dtype == DT_STRING)
			return;
		if (t->dtype == DT_BOOL) {
			((uint8_t *)t->data)[k] = ge_xrand_next(r) >> 63;
		} else if (is_float(t->dtype)) {
			set_num(t, k, lo + (hi - lo) * ge_xrand_unit(r), 0, 0);
		} else {
			uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo) + 1;
			int64_t v = (int64_t)lo +
				    (int64_t)(span ? ge_xrand_next(r) % span
						   : ge_xrand_next(r));
			set_num(t, k, (double)v, v, 1);
		}
	}
}

static int seeded(const ge_xinput_info *in, int dt, int rank,
		  const int64_t *dims, int have_range, double lo, double hi,
		  ge_xbudget *b, ge_xt **out, ge_error *err)
{
	if (valued(in, dt, err))
		return GE_EINVAL;
	if (!have_range) {
		lo = 0;
		hi = is_float(dt) ? 1 : 9;
	}
	ge_xt *t = ge_xt_new(dt, rank, dims, b, in->name, err);
	if (!t)
		return err ? err->code : GE_EINVAL;
	ge_xrand r;
	ge_xrand_init(&r, in->seed, in->name);
	fill_seeded(t, &r, lo, hi);
	*out = t;
	return GE_OK;
}

int ge_xvalue_seeded(const ge_xinput_info *in, ge_xbudget *b, ge_xt **out,
		     ge_error *err)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = concrete_shape(in, dims);
	return seeded(in, in->dtype ? in->dtype : DT_FLOAT, rank, dims, 0, 0,
		      0, b, out, err);
}

/* "1x224x224x3[:DTYPE][:LO..HI]", "3:", ":float32"; 1 when text is
 * not a shape (a literal), else 0 or an error. */
static int parse_shape_spec(const char *text, const ge_xinput_info *in,
			    ge_xbudget *b, ge_xt **out, ge_error *err)
{
	const char *colon = strchr(text, ':');
	int has_x = 0;
	for (const char *p = text; *p && p != colon; p++) {
		if (*p == 'x')
			has_x = 1;
		else if (!isdigit((unsigned char)*p))
			return 1;
	}
	if (!colon && !has_x)
		return 1;
	int rank = 0;
	int64_t dims[GE_SHAPE_MAXRANK];
	const char *p = text;
	while (*p && *p != ':') {
		char *end;
		long long v = strtoll(p, &end, 10);
		if (end == p || v < 0 || rank >= GE_SHAPE_MAXRANK)
			return ge_err(err, GE_EINVAL, "input '%s': bad shape "
				      "'%s' (dims joined by x: 1x224x224x3)",
				      in->name, text);
		dims[rank++] = v;
		p = end;
		if (*p == 'x')
			p++;
	}
	int dt = in->dtype ? in->dtype : DT_FLOAT;
	int have_range = 0;
	double lo = 0, hi = 0;
	while (*p == ':') {
		p++;
		const char *next = strchr(p, ':');
		size_t n = next ? (size_t)(next - p) : strlen(p);
		char part[64];
		if (n >= sizeof part)
			n = sizeof part - 1;
		memcpy(part, p, n);
		part[n] = 0;
		char *dots = strstr(part, "..");
		if (dots) {
			char *e1, *e2;
			*dots = 0;
			lo = strtod(part, &e1);
			hi = strtod(dots + 2, &e2);
			if (e1 == part || *e1 || e2 == dots + 2 || *e2 ||
			    !(lo <= hi))
				return ge_err(err, GE_EINVAL, "input '%s': bad "
					      "range '%s..%s' (LO..HI, LO <= HI)",
					      in->name, part, dots + 2);
			have_range = 1;
		} else if (n) {
			dt = ge_dtype_from_name(part);
			if (dt <= 0 || !ge_xt_elem_size(dt) || dt > 100)
				return ge_err(err, GE_EINVAL, "input '%s': "
					      "unknown dtype '%s'", in->name,
					      part);
		}
		p += n;
	}
	int rc = seeded(in, dt, rank, dims, have_range, lo, hi, b, out, err);
	if (!rc && (rc = ge_xinput_check(in, *out, "the data asked for", err))) {
		ge_xt_unref(*out);
		*out = NULL;
	}
	return rc;
}

int ge_xvalue_parse(const char *text, const ge_xinput_info *in,
		    ge_xbudget *b, ge_xt **out, ge_error *err)
{
	*out = NULL;
	if (text[0] == '@') {
		int rc = ge_npy_read(text + 1, b, out, err);
		if (rc) {
			ge_err_prefix(err, "input '%s'", in->name);
			return rc;
		}
		if ((rc = ge_xinput_check(in, *out, text + 1, err))) {
			ge_xt_unref(*out);
			*out = NULL;
		}
		return rc;
	}
	int rc = parse_shape_spec(text, in, b, out, err);
	if (rc != 1)
		return rc;
	return parse_literal(text, in, b, out, err);
}
