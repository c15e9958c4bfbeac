/* jsonpb.c: see jsonpb.h. */
#include "jsonpb.h"
#include "pbfield.h"
#include "textpb.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ reader */

typedef struct jreader {
	const char *p, *end;
	const char *line_start;
	uint32_t line;
	const char *name;
	ge_error *err;
	ge_arena *arena;
	ge_json *stk;            /* finished kids of the open containers */
	size_t sn, scap;
	ge_buf sb;               /* scratch for decoding escaped strings */
	int depth;
} jreader;

static uint32_t col_of(const jreader *r, const char *q)
{
	return (uint32_t)(q - r->line_start) + 1;
}

static int rerr(jreader *r, const char *q, const char *fmt, ...)
	GE_PRINTF(3, 4);
static int rerr(jreader *r, const char *q, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ge_err(r->err, GE_EFORMAT, "%s:%u:%u: %s", r->name, r->line,
		      col_of(r, q), what);
}

/* How the byte at q reads in a message. */
static const char *byte_desc(jreader *r, const char *q, char *buf, size_t n)
{
	if (q >= r->end)
		return "end of input";
	unsigned char c = (unsigned char)*q;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, n, "'%c'", c);
	else
		snprintf(buf, n, "byte 0x%02x", c);
	return buf;
}

static void skip_ws(jreader *r)
{
	const char *p = r->p, *e = r->end;
	while (p < e) {
		if (*p == '\n') {
			r->line++;
			r->line_start = p + 1;
		} else if (*p != ' ' && *p != '\t' && *p != '\r') {
			break;
		}
		p++;
	}
	r->p = p;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *e)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if ((size_t)(e - s) < n)
		return 0;
	unsigned lo = 0x80, hi = 0xbf;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Four hex digits at q, or -1. */
static long hex4(const char *q, const char *e)
{
	if (e - q < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = ge_pbf_hex_val((unsigned char)q[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* The string at r->p (a '"'); its decoded bytes go to the arena. */
static int read_string(jreader *r, const char **out, size_t *out_len)
{
	const char *start = r->p + 1, *q = start, *e = r->end;
	int escaped = 0;
	r->sb.len = 0;
	for (;;) {
		const char *run = q;
		while (q < e && *q != '"' && *q != '\\' &&
		       (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x80)
			q++;
		if (escaped)
			ge_buf_add(&r->sb, run, (size_t)(q - run));
		if (q >= e)
			return rerr(r, q, "unterminated string (started at "
				    "column %u)", col_of(r, r->p));
		unsigned char c = (unsigned char)*q;
		if (c == '"')
			break;
		if (c < 0x20)
			return rerr(r, q, "control character 0x%02x in a string "
				    "must be escaped", c);
		if (c >= 0x80) {
			size_t n = utf8_seq((const unsigned char *)q,
					    (const unsigned char *)e);
			if (!n)
				return rerr(r, q, "invalid UTF-8 byte 0x%02x in "
					    "a string", c);
			if (escaped)
				ge_buf_add(&r->sb, q, n);
			q += n;
			continue;
		}
		/* a backslash: from here on the string is built in sb */
		if (!escaped) {
			escaped = 1;
			ge_buf_add(&r->sb, start, (size_t)(q - start));
		}
		const char *bs = q++;
		if (q >= e)
			return rerr(r, q, "unterminated string (started at "
				    "column %u)", col_of(r, r->p));
		switch (*q++) {
		case '"': ge_buf_addc(&r->sb, '"'); break;
		case '\\': ge_buf_addc(&r->sb, '\\'); break;
		case '/': ge_buf_addc(&r->sb, '/'); break;
		case 'b': ge_buf_addc(&r->sb, '\b'); break;
		case 'f': ge_buf_addc(&r->sb, '\f'); break;
		case 'n': ge_buf_addc(&r->sb, '\n'); break;
		case 'r': ge_buf_addc(&r->sb, '\r'); break;
		case 't': ge_buf_addc(&r->sb, '\t'); break;
		case 'u': {
			long cp = hex4(q, e);
			if (cp < 0)
				return rerr(r, bs, "\\u needs four hex digits");
			q += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return rerr(r, bs, "lone low surrogate \\u%04lx",
					    cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				long lo = -1;
				if (e - q >= 6 && q[0] == '\\' && q[1] == 'u')
					lo = hex4(q + 2, e);
				if (lo < 0xdc00 || lo > 0xdfff)
					return rerr(r, bs, "high surrogate "
						    "\\u%04lx is not followed "
						    "by a low one", cp);
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				q += 6;
			}
			ge_pbf_put_utf8(&r->sb, (uint32_t)cp);
			break;
		}
		default: {
			char tb[32];
			return rerr(r, bs, "invalid escape '\\' before %s",
				    byte_desc(r, q - 1, tb, sizeof tb));
		}
		}
	}
	if (escaped) {
		*out_len = r->sb.len;
		*out = ge_arena_strndup(r->arena, r->sb.len ? (char *)r->sb.data
							    : "", r->sb.len);
	} else {
		*out_len = (size_t)(q - start);
		*out = ge_arena_strndup(r->arena, start, *out_len);
	}
	r->p = q + 1;
	return GE_OK;
}

/* Length of the JSON number at s (RFC 8259 grammar), or 0 with *bad set
 * to where it goes wrong. */
static size_t number_len(const char *s, const char *e, const char **bad)
{
	const char *q = s;
	if (q < e && *q == '-')
		q++;
	if (q >= e || !is_digit(*q)) {
		*bad = q;
		return 0;
	}
	if (*q == '0') {
		q++;
		if (q < e && is_digit(*q)) {
			*bad = q;
			return 0;
		}
	} else {
		while (q < e && is_digit(*q))
			q++;
	}
	if (q < e && *q == '.') {
		q++;
		if (q >= e || !is_digit(*q)) {
			*bad = q;
			return 0;
		}
		while (q < e && is_digit(*q))
			q++;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (q >= e || !is_digit(*q)) {
			*bad = q;
			return 0;
		}
		while (q < e && is_digit(*q))
			q++;
	}
	return (size_t)(q - s);
}

/* strtod and strtof in the C locale, whatever the program's locale is:
 * JSON's decimal point is always '.'. */
static locale_t c_locale(void)
{
	static locale_t loc;
	if (!loc)
		loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	return loc;
}

static double c_strtod(const char *s)
{
	locale_t l = c_locale();
	return l ? strtod_l(s, NULL, l) : strtod(s, NULL);
}

static float c_strtof(const char *s)
{
	locale_t l = c_locale();
	return l ? strtof_l(s, NULL, l) : strtof(s, NULL);
}

static void push(jreader *r, const ge_json *v)
{
	if (r->sn == r->scap) {
		r->scap = r->scap ? r->scap * 2 : 64;
		r->stk = ge_xrealloc(r->stk, r->scap * sizeof *r->stk);
	}
	r->stk[r->sn++] = *v;
}

/* Moves the kids pushed since base into the arena. */
static void pop_kids(jreader *r, size_t base, ge_json *v)
{
	v->n = r->sn - base;
	v->kids = NULL;
	if (v->n) {
		v->kids = ge_arena_alloc(r->arena, v->n * sizeof *v->kids);
		memcpy(v->kids, r->stk + base, v->n * sizeof *v->kids);
	}
	r->sn = base;
}

static int read_value(jreader *r, ge_json *v);

static int read_container(jreader *r, ge_json *v, int is_obj)
{
	char close = is_obj ? '}' : ']';
	char tb[32];
	int rc;
	if (r->depth >= GE_JSON_MAX_DEPTH)
		return rerr(r, r->p, "values nested deeper than %d levels",
			    GE_JSON_MAX_DEPTH);
	r->depth++;
	r->p++;
	size_t base = r->sn;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
	} else {
		for (;;) {
			ge_json kid;
			const char *key = NULL;
			size_t klen = 0;
			skip_ws(r);
			if (is_obj) {
				if (r->p >= r->end || *r->p != '"')
					return rerr(r, r->p, "expected a member "
						    "name (a string), got %s",
						    byte_desc(r, r->p, tb,
							      sizeof tb));
				if ((rc = read_string(r, &key, &klen)))
					return rc;
				skip_ws(r);
				if (r->p >= r->end || *r->p != ':')
					return rerr(r, r->p, "expected ':' after "
						    "member name, got %s",
						    byte_desc(r, r->p, tb,
							      sizeof tb));
				r->p++;
			}
			if ((rc = read_value(r, &kid)))
				return rc;
			kid.key = key;
			kid.key_len = klen;
			push(r, &kid);
			skip_ws(r);
			if (r->p < r->end && *r->p == ',') {
				r->p++;
				continue;
			}
			if (r->p < r->end && *r->p == close) {
				r->p++;
				break;
			}
			return rerr(r, r->p, "expected ',' or '%c', got %s",
				    close, byte_desc(r, r->p, tb, sizeof tb));
		}
	}
	pop_kids(r, base, v);
	r->depth--;
	return GE_OK;
}

static int read_value(jreader *r, ge_json *v)
{
	char tb[32];
	skip_ws(r);
	memset(v, 0, sizeof *v);
	const char *p = r->p, *e = r->end;
	v->line = r->line;
	v->col = col_of(r, p);
	if (p >= e)
		return rerr(r, p, "unexpected end of input, expected a value");
	switch (*p) {
	case '{':
		v->type = GE_JSON_OBJECT;
		return read_container(r, v, 1);
	case '[':
		v->type = GE_JSON_ARRAY;
		return read_container(r, v, 0);
	case '"':
		v->type = GE_JSON_STRING;
		return read_string(r, &v->str, &v->len);
	case 't':
	case 'f':
	case 'n': {
		static const char *const lits[] = {"true", "false", "null"};
		const char *lit = *p == 't' ? lits[0] : *p == 'f' ? lits[1]
								: lits[2];
		size_t n = strlen(lit);
		if ((size_t)(e - p) < n || memcmp(p, lit, n) != 0)
			return rerr(r, p, "invalid literal (expected '%s')", lit);
		v->type = *p == 'n' ? GE_JSON_NULL : GE_JSON_BOOL;
		v->boolean = *p == 't';
		r->p = p + n;
		return GE_OK;
	}
	default:
		break;
	}
	if (*p == '-' || is_digit(*p)) {
		const char *bad = NULL;
		size_t n = number_len(p, e, &bad);
		if (!n) {
			if (bad < e && is_digit(*bad))
				return rerr(r, bad, "leading zeros are not "
					    "allowed in numbers");
			return rerr(r, bad, "malformed number: expected a digit, "
				    "got %s", byte_desc(r, bad, tb, sizeof tb));
		}
		v->type = GE_JSON_NUMBER;
		v->str = ge_arena_strndup(r->arena, p, n);
		v->len = n;
		v->num = c_strtod(v->str);
		r->p = p + n;
		return GE_OK;
	}
	return rerr(r, p, "unexpected %s, expected a value",
		    byte_desc(r, p, tb, sizeof tb));
}

int ge_json_parse(const char *text, size_t len, const char *name,
		  ge_json_doc **out, ge_error *err)
{
	jreader r;
	memset(&r, 0, sizeof r);
	ge_json_doc *doc = ge_xcalloc(1, sizeof *doc);
	ge_arena_init(&doc->arena);
	r.p = r.line_start = text ? text : "";
	r.end = r.p + (text ? len : 0);
	r.line = 1;
	r.name = name ? name : "<json>";
	r.err = err;
	r.arena = &doc->arena;
	*out = NULL;
	/* RFC 8259 lets a parser ignore a byte order mark */
	if (r.end - r.p >= 3 && !memcmp(r.p, "\xef\xbb\xbf", 3))
		r.p += 3;
	ge_json *root = ge_arena_alloc(&doc->arena, sizeof *root);
	int rc = read_value(&r, root);
	if (!rc) {
		skip_ws(&r);
		if (r.p < r.end) {
			char tb[32];
			rc = rerr(&r, r.p, "unexpected %s after the JSON value",
				  byte_desc(&r, r.p, tb, sizeof tb));
		}
	}
	free(r.stk);
	ge_buf_free(&r.sb);
	if (rc) {
		ge_json_free(doc);
		return rc;
	}
	doc->root = root;
	*out = doc;
	return GE_OK;
}

void ge_json_free(ge_json_doc *doc)
{
	if (!doc)
		return;
	ge_arena_free(&doc->arena);
	free(doc);
}

const ge_json *ge_json_get(const ge_json *v, const char *key)
{
	if (!v || v->type != GE_JSON_OBJECT)
		return NULL;
	size_t n = strlen(key);
	for (size_t i = 0; i < v->n; i++)
		if (v->kids[i].key_len == n && !memcmp(v->kids[i].key, key, n))
			return &v->kids[i];
	return NULL;
}

const char *ge_json_type_name(ge_json_type t)
{
	switch (t) {
	case GE_JSON_NULL: return "null";
	case GE_JSON_BOOL: return "boolean";
	case GE_JSON_NUMBER: return "number";
	case GE_JSON_STRING: return "string";
	case GE_JSON_ARRAY: return "array";
	case GE_JSON_OBJECT: return "object";
	}
	return "?";
}

/* ================================================================ numbers */

enum { INT_OK = 0, INT_SYNTAX = -1, INT_FRACTION = -2, INT_RANGE = -3 };

/*
 * The exact integer that number text (already in JSON's grammar) stands
 * for, as sign and magnitude.  Decimal digits are shifted by the exponent
 * by hand rather than through a double, so 9007199254740993 and 1.5e1 come
 * out exact.
 */
static int exact_integer(const char *s, size_t n, int *neg, uint64_t *mag)
{
	const char *e = s + n, *q = s;
	*neg = 0;
	*mag = 0;
	if (q < e && *q == '-') {
		*neg = 1;
		q++;
	}
	const char *ip = q;
	while (q < e && is_digit(*q))
		q++;
	const char *ie = q, *fp = q, *fe = q;
	if (q < e && *q == '.') {
		fp = ++q;
		while (q < e && is_digit(*q))
			q++;
		fe = q;
	}
	long exp = 0;
	if (q < e && (*q == 'e' || *q == 'E')) {
		int eneg = 0;
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			eneg = *q++ == '-';
		while (q < e && is_digit(*q)) {
			if (exp < 100000)
				exp = exp * 10 + (*q - '0');
			q++;
		}
		if (eneg)
			exp = -exp;
	}
	if (q != e || ip == ie)
		return INT_SYNTAX;
	/* digits = int part then fraction; value = digits * 10^scale */
	long scale = exp - (long)(fe - fp);
	size_t nd = (size_t)(ie - ip) + (size_t)(fe - fp);
	char digits_small[64];
	char *d = nd <= sizeof digits_small ? digits_small : ge_xmalloc(nd);
	memcpy(d, ip, (size_t)(ie - ip));
	memcpy(d + (ie - ip), fp, (size_t)(fe - fp));
	int rc = INT_OK;
	size_t keep = nd;
	if (scale < 0) {
		size_t drop = (size_t)-scale < nd ? (size_t)-scale : nd;
		for (size_t i = nd - drop; i < nd; i++)
			if (d[i] != '0')
				rc = INT_FRACTION;
		keep = nd - drop;
		scale = 0;
	}
	uint64_t v = 0;
	int nonzero = 0;
	for (size_t i = 0; rc == INT_OK && i < keep; i++) {
		unsigned dig = (unsigned)(d[i] - '0');
		if (v > (UINT64_MAX - dig) / 10)
			rc = INT_RANGE;
		v = v * 10 + dig;
		nonzero |= dig != 0;
	}
	for (long k = 0; rc == INT_OK && nonzero && k < scale; k++) {
		if (v > UINT64_MAX / 10)
			rc = INT_RANGE;
		v *= 10;
	}
	if (d != digits_small)
		free(d);
	*mag = v;
	return rc;
}

int ge_json_int64(const ge_json *v, int64_t *out)
{
	int neg;
	uint64_t m;
	if (!v || v->type != GE_JSON_NUMBER ||
	    exact_integer(v->str, v->len, &neg, &m) != INT_OK)
		return -1;
	if (m > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		return -1;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

/* ================================================================ mapping */

typedef struct mapper {
	const char *name;
	ge_error *err;
	unsigned flags;
	int depth;
} mapper;

/* parse_value's answer for a value that IGNORE_UNKNOWN drops */
#define SKIPPED 1

static int merr(mapper *m, const ge_json *at, const char *fmt, ...)
	GE_PRINTF(3, 4);
static int merr(mapper *m, const ge_json *at, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ge_err(m->err, GE_EFORMAT, "%s:%u:%u: %s", m->name, at->line,
		      at->col, what);
}

static int is_map_field(const ProtobufCFieldDescriptor *f)
{
	return f->label == PROTOBUF_C_LABEL_REPEATED &&
	       f->type == PROTOBUF_C_TYPE_MESSAGE &&
	       ge_pbf_is_map_entry(f->descriptor);
}

/* google.protobuf.Int64Value and friends: JSON writes their bare value. */
static const ProtobufCFieldDescriptor *
wrapper_field(const ProtobufCMessageDescriptor *d)
{
	static const char *const names[] = {
		"DoubleValue", "FloatValue", "Int64Value", "UInt64Value",
		"Int32Value", "UInt32Value", "BoolValue", "StringValue",
		"BytesValue",
	};
	if (strncmp(d->name, "google.protobuf.", 16) != 0 || d->n_fields != 1 ||
	    d->fields[0].id != 1 || strcmp(d->fields[0].name, "value") != 0 ||
	    d->fields[0].label == PROTOBUF_C_LABEL_REPEATED)
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(d->name + 16, names[i]))
			return &d->fields[0];
	return NULL;
}

/* Whether key is the lowerCamelCase JSON name protoc derives from a field
 * name: underscores dropped, the letter after each one upper-cased. */
static int json_name_is(const char *fname, const char *key, size_t klen)
{
	size_t i = 0;
	int up = 0;
	for (const char *c = fname; *c; c++) {
		if (*c == '_') {
			up = 1;
			continue;
		}
		char want = up && *c >= 'a' && *c <= 'z' ? (char)(*c - 32) : *c;
		up = 0;
		if (i >= klen || key[i] != want)
			return 0;
		i++;
	}
	return i == klen;
}

static const ProtobufCFieldDescriptor *
find_field(const ProtobufCMessageDescriptor *d, const char *key, size_t klen)
{
	if (strlen(key) == klen) {
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(d, key);
		if (f)
			return f;
	}
	for (unsigned i = 0; i < d->n_fields; i++)
		if (json_name_is(d->fields[i].name, key, klen))
			return &d->fields[i];
	return NULL;
}

/* ---- scalars ---- */

/* An integer from a number, or from a string holding one. */
static int get_integer(mapper *m, const ProtobufCFieldDescriptor *f,
		       const ge_json *v, int *neg, uint64_t *mag)
{
	const char *s = v->str;
	size_t n = v->len;
	if (v->type == GE_JSON_STRING) {
		const char *bad;
		if (!n || number_len(s, s + n, &bad) != n)
			return merr(m, v, "field '%s': \"%.40s\" is not an "
				    "integer", f->name, s);
	} else if (v->type != GE_JSON_NUMBER) {
		return merr(m, v, "field '%s': expected an integer, got %s",
			    f->name, ge_json_type_name(v->type));
	}
	int rc = exact_integer(s, n, neg, mag);
	if (rc == INT_FRACTION)
		return merr(m, v, "field '%s': %.40s is not an integer", f->name,
			    s);
	if (rc == INT_RANGE)
		return merr(m, v, "field '%s': %.40s is out of range", f->name,
			    s);
	if (rc)
		return merr(m, v, "field '%s': %.40s is not an integer", f->name,
			    s);
	return GE_OK;
}

static int parse_int(mapper *m, const ProtobufCFieldDescriptor *f,
		     const ge_json *v, ProtobufCType t, ge_pbf_value *out)
{
	int neg, rc;
	uint64_t mag;
	if ((rc = get_integer(m, f, v, &neg, &mag)))
		return rc;
	int bad;
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		bad = mag > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX);
		out->i32 = neg ? (int32_t)(0 - (uint32_t)mag) : (int32_t)mag;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		bad = (neg && mag) || mag > UINT32_MAX;
		out->u32 = (uint32_t)mag;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		bad = mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX);
		out->i64 = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		break;
	default:
		bad = neg && mag;
		out->u64 = mag;
		break;
	}
	if (bad)
		return merr(m, v, "field '%s': %.40s is out of range for %s",
			    f->name, v->str, t == PROTOBUF_C_TYPE_ENUM ? "an enum" :
			    ge_pbf_elt_size(t) == 4 ? "32 bits" : "64 bits");
	return GE_OK;
}

static int parse_float(mapper *m, const ProtobufCFieldDescriptor *f,
		       const ge_json *v, ge_pbf_value *out)
{
	int is_f = f->type == PROTOBUF_C_TYPE_FLOAT;
	double d;
	if (v->type == GE_JSON_STRING) {
		const char *bad;
		if (!strcmp(v->str, "NaN")) {
			d = NAN;
		} else if (!strcmp(v->str, "Infinity")) {
			d = INFINITY;
		} else if (!strcmp(v->str, "-Infinity")) {
			d = -INFINITY;
		} else if (v->len && number_len(v->str, v->str + v->len, &bad) ==
					     v->len) {
			goto finite;
		} else {
			return merr(m, v, "field '%s': \"%.40s\" is not a number",
				    f->name, v->str);
		}
		if (is_f)
			out->f = (float)d;
		else
			out->d = d;
		return GE_OK;
	} else if (v->type != GE_JSON_NUMBER) {
		return merr(m, v, "field '%s': expected a number, got %s",
			    f->name, ge_json_type_name(v->type));
	}
finite:
	if (is_f) {
		float fl = c_strtof(v->str);
		if (isinf(fl))
			return merr(m, v, "field '%s': %.40s is out of range for "
				    "a float", f->name, v->str);
		out->f = fl;
	} else {
		d = c_strtod(v->str);
		if (isinf(d))
			return merr(m, v, "field '%s': %.40s is out of range for "
				    "a double", f->name, v->str);
		out->d = d;
	}
	return GE_OK;
}

static int b64_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Base64 in either alphabet, with or without '=' padding.  Returns 0, or
 * -1 with *bad_at the index of the first character that cannot be. */
static int b64_decode(const char *s, size_t n, ProtobufCBinaryData *out,
		      size_t *bad_at)
{
	size_t len = n;
	if (len && s[len - 1] == '=') {
		len--;
		if (len && s[len - 1] == '=')
			len--;
		if (n % 4) {
			*bad_at = n - 1;
			return -1;
		}
	}
	if (len % 4 == 1) {
		*bad_at = len - 1;
		return -1;
	}
	out->len = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);
	out->data = out->len ? ge_xmalloc(out->len) : NULL;
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		int b = b64_val((unsigned char)s[i]);
		if (b < 0) {
			free(out->data);
			out->data = NULL;
			out->len = 0;
			*bad_at = i;
			return -1;
		}
		acc = acc << 6 | (uint32_t)b;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out->data[o++] = (uint8_t)(acc >> bits);
		}
	}
	return 0;
}

static int parse_message(mapper *m, const ge_json *v,
			 const ProtobufCMessageDescriptor *d,
			 ProtobufCMessage **out);

/* One value of field f (an element, for repeated fields).  Returns GE_OK,
 * SKIPPED (an unknown enum name under IGNORE_UNKNOWN), or an error. */
static int parse_value(mapper *m, const ProtobufCFieldDescriptor *f,
		       const ge_json *v, ge_pbf_value *out)
{
	memset(out, 0, sizeof *out);
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return parse_message(m, v, f->descriptor, &out->m);
	case PROTOBUF_C_TYPE_STRING:
		if (v->type != GE_JSON_STRING)
			return merr(m, v, "field '%s': expected a string, got %s",
				    f->name, ge_json_type_name(v->type));
		if (memchr(v->str, 0, v->len))
			return merr(m, v, "field '%s': a string field cannot hold "
				    "a NUL character", f->name);
		out->s = ge_xstrndup(v->str, v->len);
		return GE_OK;
	case PROTOBUF_C_TYPE_BYTES: {
		size_t at = 0;
		if (v->type != GE_JSON_STRING)
			return merr(m, v, "field '%s': expected a base64 string, "
				    "got %s", f->name,
				    ge_json_type_name(v->type));
		if (b64_decode(v->str, v->len, &out->bd, &at))
			return merr(m, v, "field '%s': invalid base64 at "
				    "character %zu", f->name, at + 1);
		return GE_OK;
	}
	case PROTOBUF_C_TYPE_BOOL:
		if (v->type != GE_JSON_BOOL)
			return merr(m, v, "field '%s': expected true or false, "
				    "got %s", f->name,
				    ge_json_type_name(v->type));
		out->b = (protobuf_c_boolean)v->boolean;
		return GE_OK;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = f->descriptor;
		if (v->type == GE_JSON_STRING) {
			const ProtobufCEnumValue *ev = NULL;
			if (strlen(v->str) == v->len)
				ev = protobuf_c_enum_descriptor_get_value_by_name(
					ed, v->str);
			if (ev) {
				out->i32 = ev->value;
				return GE_OK;
			}
			if (m->flags & GE_JSONPB_IGNORE_UNKNOWN)
				return SKIPPED;
			return merr(m, v, "field '%s': unknown value \"%.60s\" of "
				    "enum %s", f->name, v->str, ed->name);
		}
		if (v->type == GE_JSON_NUMBER)
			return parse_int(m, f, v, PROTOBUF_C_TYPE_ENUM, out);
		return merr(m, v, "field '%s': expected an enum name or number, "
			    "got %s", f->name, ge_json_type_name(v->type));
	}
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		return parse_float(m, f, v, out);
	default:
		return parse_int(m, f, v, f->type, out);
	}
}

/* A map key (always a JSON string) converted to the key field's type. */
static int parse_key(mapper *m, const ProtobufCFieldDescriptor *kf,
		     const ge_json *member, ge_pbf_value *out)
{
	ge_json k;
	memset(&k, 0, sizeof k);
	k.type = GE_JSON_STRING;
	k.line = member->line;
	k.col = member->col;
	k.str = member->key;
	k.len = member->key_len;
	memset(out, 0, sizeof *out);
	if (kf->type == PROTOBUF_C_TYPE_BOOL) {
		if (!strcmp(k.str, "true") || !strcmp(k.str, "false")) {
			out->b = k.str[0] == 't';
			return GE_OK;
		}
		return merr(m, member, "map key \"%.40s\" is not true or false",
			    k.str);
	}
	return parse_value(m, kf, &k, out);
}

static int parse_map(mapper *m, ProtobufCMessage *msg,
		     const ProtobufCFieldDescriptor *f, const ge_json *v)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
	if (v->type != GE_JSON_OBJECT)
		return merr(m, v, "field '%s': a map is written as an object, "
			    "not as %s", f->name, ge_json_type_name(v->type));
	for (size_t i = 0; i < v->n; i++) {
		const ge_json *mv = &v->kids[i];
		ProtobufCMessage *ent = ge_pbf_new_message(ed);
		ge_pbf_value kv, vv;
		int rc = parse_key(m, kf, mv, &kv);
		if (rc) {
			protobuf_c_message_free_unpacked(ent, NULL);
			return rc;
		}
		ge_pbf_set(ent, kf, &kv);
		if (mv->type == GE_JSON_NULL)
			rc = merr(m, mv, "field '%s': null is not allowed as a "
				  "map value", f->name);
		else
			rc = parse_value(m, vf, mv, &vv);
		if (rc == SKIPPED) {
			protobuf_c_message_free_unpacked(ent, NULL);
			continue;
		}
		if (rc) {
			protobuf_c_message_free_unpacked(ent, NULL);
			return rc;
		}
		ge_pbf_set(ent, vf, &vv);
		ge_pbf_value entry = {.m = ent};
		ge_pbf_append(msg, f, &entry);
	}
	return GE_OK;
}

static int parse_repeated(mapper *m, ProtobufCMessage *msg,
			  const ProtobufCFieldDescriptor *f, const ge_json *v)
{
	if (v->type != GE_JSON_ARRAY)
		return merr(m, v, "field '%s' is repeated: expected an array, "
			    "got %s", f->name, ge_json_type_name(v->type));
	for (size_t i = 0; i < v->n; i++) {
		const ge_json *ev = &v->kids[i];
		ge_pbf_value val;
		if (ev->type == GE_JSON_NULL)
			return merr(m, ev, "field '%s': null is not allowed in "
				    "a list", f->name);
		int rc = parse_value(m, f, ev, &val);
		if (rc == SKIPPED)
			continue;
		if (rc)
			return rc;
		ge_pbf_append(msg, f, &val);
	}
	return GE_OK;
}

/* The members of object v (but "@type" when skip_type) into msg. */
static int parse_fields(mapper *m, const ge_json *v, ProtobufCMessage *msg,
			int skip_type)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	unsigned char small[64], *seen = small;
	int rc = GE_OK;
	if (d->n_fields > sizeof small)
		seen = ge_xcalloc(d->n_fields, 1);
	else
		memset(small, 0, sizeof small);
	for (size_t i = 0; i < v->n; i++) {
		const ge_json *mv = &v->kids[i];
		if (skip_type && mv->key_len == 5 && !memcmp(mv->key, "@type", 5))
			continue;
		const ProtobufCFieldDescriptor *f =
			find_field(d, mv->key, mv->key_len);
		if (!f) {
			if (m->flags & GE_JSONPB_IGNORE_UNKNOWN)
				continue;
			rc = merr(m, mv, "unknown field \"%.60s\" in %s", mv->key,
				  d->name);
			break;
		}
		size_t idx = (size_t)(f - d->fields);
		if (seen[idx]) {
			rc = merr(m, mv, "field '%s' of %s is given more than "
				  "once", f->name, d->name);
			break;
		}
		seen[idx] = 1;
		if (mv->type == GE_JSON_NULL)
			continue;
		const char *rival = ge_pbf_oneof_rival(msg, f);
		if (rival) {
			rc = merr(m, mv, "field '%s' is in the same oneof as "
				  "'%s', which is already set", f->name, rival);
			break;
		}
		if (is_map_field(f)) {
			rc = parse_map(m, msg, f, mv);
		} else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			rc = parse_repeated(m, msg, f, mv);
		} else {
			ge_pbf_value val;
			rc = parse_value(m, f, mv, &val);
			if (rc == SKIPPED) {
				rc = GE_OK;
				continue;
			}
			if (!rc)
				ge_pbf_set(msg, f, &val);
		}
		if (rc)
			break;
	}
	if (seen != small)
		free(seen);
	return rc;
}

static int parse_any(mapper *m, const ge_json *v, ProtobufCMessage *msg,
		     const ProtobufCFieldDescriptor *fu,
		     const ProtobufCFieldDescriptor *fv)
{
	if (v->type != GE_JSON_OBJECT)
		return merr(m, v, "expected an object for %s, got %s",
			    msg->descriptor->name, ge_json_type_name(v->type));
	if (!v->n)
		return GE_OK;
	const ge_json *t = ge_json_get(v, "@type");
	if (!t)
		return merr(m, v, "%s without \"@type\"", msg->descriptor->name);
	if (t->type != GE_JSON_STRING || memchr(t->str, 0, t->len))
		return merr(m, t, "\"@type\" must be a string");
	const char *slash = strrchr(t->str, '/');
	if (!slash)
		return merr(m, t, "type URL \"%.80s\" has no '/'", t->str);
	const ProtobufCMessageDescriptor *td =
		ge_textpb_lookup(slash + 1, strlen(slash + 1));
	if (!td)
		return merr(m, t, "unknown type \"%.80s\" in %s", slash + 1,
			    msg->descriptor->name);
	ProtobufCMessage *inner;
	int rc;
	const ProtobufCFieldDescriptor *u2, *v2;
	if (wrapper_field(td) || ge_pbf_any_fields(td, &u2, &v2)) {
		/* types with a JSON form of their own sit under "value" */
		const ge_json *val = NULL;
		for (size_t i = 0; i < v->n; i++) {
			const ge_json *k = &v->kids[i];
			if (k->key_len == 5 && !memcmp(k->key, "@type", 5))
				continue;
			if (k->key_len == 5 && !memcmp(k->key, "value", 5) &&
			    !val) {
				val = k;
				continue;
			}
			return merr(m, k, "unexpected member \"%.60s\" in an "
				    "Any holding %s", k->key, td->name);
		}
		if (!val)
			return merr(m, v, "Any holding %s needs a \"value\"",
				    td->name);
		rc = parse_message(m, val, td, &inner);
	} else {
		inner = ge_pbf_new_message(td);
		m->depth++;
		rc = parse_fields(m, v, inner, 1);
		m->depth--;
		if (rc) {
			protobuf_c_message_free_unpacked(inner, NULL);
			inner = NULL;
		}
	}
	if (rc)
		return rc;
	ge_pbf_set_any(msg, fu, fv, inner, t->str, t->len);
	return GE_OK;
}

static int parse_message(mapper *m, const ge_json *v,
			 const ProtobufCMessageDescriptor *d,
			 ProtobufCMessage **out)
{
	const ProtobufCFieldDescriptor *wf = wrapper_field(d), *fu, *fv;
	int rc;
	*out = NULL;
	if (m->depth >= GE_JSON_MAX_DEPTH)
		return merr(m, v, "messages nested deeper than %d levels",
			    GE_JSON_MAX_DEPTH);
	ProtobufCMessage *msg = ge_pbf_new_message(d);
	m->depth++;
	if (wf) {
		ge_pbf_value val;
		rc = v->type == GE_JSON_NULL ? GE_OK : parse_value(m, wf, v, &val);
		if (rc == SKIPPED)
			rc = GE_OK;
		else if (!rc && v->type != GE_JSON_NULL)
			ge_pbf_set(msg, wf, &val);
	} else if (ge_pbf_any_fields(d, &fu, &fv)) {
		rc = parse_any(m, v, msg, fu, fv);
	} else if (v->type != GE_JSON_OBJECT) {
		rc = merr(m, v, "expected an object for %s, got %s", d->name,
			  ge_json_type_name(v->type));
	} else {
		rc = parse_fields(m, v, msg, 0);
	}
	m->depth--;
	if (rc) {
		protobuf_c_message_free_unpacked(msg, NULL);
		return rc;
	}
	*out = msg;
	return GE_OK;
}

int ge_jsonpb_from_json(const ge_json *v,
			const ProtobufCMessageDescriptor *desc,
			const char *name, unsigned flags,
			ProtobufCMessage **out, ge_error *err)
{
	mapper m;
	m.name = name ? name : "<json>";
	m.err = err;
	m.flags = flags;
	m.depth = 0;
	return parse_message(&m, v, desc, out);
}

int ge_jsonpb_parse(const char *json, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err)
{
	ge_json_doc *doc;
	*out = NULL;
	int rc = ge_json_parse(json, len, name, &doc, err);
	if (rc)
		return rc;
	rc = ge_jsonpb_from_json(doc->root, desc, name, 0, out, err);
	ge_json_free(doc);
	return rc;
}
