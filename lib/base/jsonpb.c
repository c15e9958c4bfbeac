/*
 * jsonpb.c: see jsonpb.h.  Jansson reads and writes the text; this file
 * holds the proto3 JSON mapping between its values and protobuf-c messages.
 */
#include "base/jsonpb.h"
#include "base/bounds.h"
#include "base/pbfield.h"
#include "base/textpb.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ text */

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

int ge_json_load(const char *text, size_t len, const char *name,
		 json_t **out, ge_error *err)
{
	json_error_t je;
	if (!name)
		name = "<json>";
	/* a leading byte order mark is allowed by RFC 8259 readers */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		text += 3;
		len -= 3;
	}
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL |
			  JSON_DECODE_ANY, &je);
	if (!*out)
		return ge_err(err, GE_EFORMAT, "%s:%d:%d: %s", name, je.line,
			      je.column, je.text);
	return GE_OK;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	ge_buf_add((ge_buf *)data, buf, size);
	return 0;
}

void ge_json_dump(const json_t *v, ge_buf *out)
{
	json_dump_callback(v, dump_cb, out, JSON_INDENT(2) |
			   JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	ge_buf_add(out, "\n", 1);
}

void ge_json_dump_compact(const json_t *v, ge_buf *out)
{
	json_dump_callback(v, dump_cb, out, JSON_COMPACT | JSON_ENCODE_ANY);
}

const char *ge_json_type_name(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_NULL: return "null";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_STRING: return "string";
	case JSON_ARRAY: return "array";
	case JSON_OBJECT: return "object";
	}
	return "?";
}

/* ================================================================ numbers */

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

/* A JSON number as sign and magnitude when it is an integer: 0, or one of
 * the INT_* codes. */
static int number_integer(const json_t *v, int *neg, uint64_t *mag)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		*neg = i < 0;
		*mag = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
		return INT_OK;
	}
	double d = json_real_value(v);
	*neg = signbit(d) != 0;
	if (d != floor(d))
		return INT_FRACTION;
	double a = fabs(d);
	if (a >= 18446744073709551616.0)
		return INT_RANGE;
	*mag = (uint64_t)a;
	return INT_OK;
}

int ge_json_int64(const json_t *v, int64_t *out)
{
	int neg;
	uint64_t m;
	if (!json_is_number(v) || number_integer(v, &neg, &m) != INT_OK)
		return -1;
	if (m > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		return -1;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

/* How a value reads in a message: its text for numbers and strings. */
static const char *val_text(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		snprintf(buf, n, "%.40s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, n, "%.*g", prec, json_real_value(v));
			if (c_strtod(buf) == json_real_value(v))
				break;
		}
	else
		snprintf(buf, n, "%s", ge_json_type_name(v));
	return buf;
}

/* ================================================================ mapping */

typedef struct mapper {
	const char *name;
	ge_error *err;
	unsigned flags;
	int depth;
	char path[512];            /* where in the document, for messages */
	size_t plen;
} mapper;

/* parse_value's answer for a value that IGNORE_UNKNOWN drops */
#define SKIPPED 1

/* Appends ".key" or "[i]" to the path; returns the old length for
 * path_pop. */
static size_t path_key(mapper *m, const char *key)
{
	size_t o = m->plen;
	if (o < sizeof m->path) {
		int k = snprintf(m->path + o, sizeof m->path - o, "%s%s",
				 o ? "." : "", key);
		m->plen = k > 0 ? o + (size_t)k : o;
		if (m->plen >= sizeof m->path)
			m->plen = sizeof m->path - 1;
	}
	return o;
}

static size_t path_idx(mapper *m, size_t i)
{
	size_t o = m->plen;
	if (o < sizeof m->path) {
		int k = snprintf(m->path + o, sizeof m->path - o, "[%zu]", i);
		m->plen = k > 0 ? o + (size_t)k : o;
		if (m->plen >= sizeof m->path)
			m->plen = sizeof m->path - 1;
	}
	return o;
}

static void path_pop(mapper *m, size_t o)
{
	m->plen = o;
	m->path[o] = 0;
}

static int merr(mapper *m, const char *fmt, ...) GE_PRINTF(2, 3);
static int merr(mapper *m, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	/* a deep path keeps its end, where the fault is */
	if (m->plen > 160)
		return ge_err(m->err, GE_EFORMAT, "%s: ...%s: %s", m->name,
			      m->path + m->plen - 157, what);
	if (m->plen)
		return ge_err(m->err, GE_EFORMAT, "%s: %s: %s", m->name,
			      m->path, what);
	return ge_err(m->err, GE_EFORMAT, "%s: %s", m->name, what);
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
		       const json_t *v, int *neg, uint64_t *mag)
{
	char tb[64];
	int rc;
	if (json_is_string(v)) {
		const char *s = json_string_value(v), *bad;
		size_t n = json_string_length(v);
		if (!n || number_len(s, s + n, &bad) != n)
			return merr(m, "field '%s': \"%.40s\" is not an "
				    "integer", f->name, s);
		rc = exact_integer(s, n, neg, mag);
	} else if (json_is_number(v)) {
		rc = number_integer(v, neg, mag);
	} else {
		return merr(m, "field '%s': expected an integer, got %s",
			    f->name, ge_json_type_name(v));
	}
	if (rc == INT_RANGE)
		return merr(m, "field '%s': %s is out of range", f->name,
			    val_text(v, tb, sizeof tb));
	if (rc)
		return merr(m, "field '%s': %s is not an integer", f->name,
			    val_text(v, tb, sizeof tb));
	return GE_OK;
}

static int parse_int(mapper *m, const ProtobufCFieldDescriptor *f,
		     const json_t *v, ProtobufCType t, ge_pbf_value *out)
{
	int neg, rc;
	uint64_t mag;
	char tb[64];
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
		return merr(m, "field '%s': %s is out of range for %s",
			    f->name, val_text(v, tb, sizeof tb),
			    t == PROTOBUF_C_TYPE_ENUM ? "an enum" :
			    ge_pbf_elt_size(t) == 4 ? "32 bits" : "64 bits");
	return GE_OK;
}

static int parse_float(mapper *m, const ProtobufCFieldDescriptor *f,
		       const json_t *v, ge_pbf_value *out)
{
	int is_f = f->type == PROTOBUF_C_TYPE_FLOAT;
	double d;
	char tb[64];
	if (json_is_string(v)) {
		const char *s = json_string_value(v), *bad;
		size_t n = json_string_length(v);
		if (!strcmp(s, "NaN"))
			d = NAN;
		else if (!strcmp(s, "Infinity"))
			d = INFINITY;
		else if (!strcmp(s, "-Infinity"))
			d = -INFINITY;
		else if (n && number_len(s, s + n, &bad) == n)
			goto text;
		else
			return merr(m, "field '%s': \"%.40s\" is not a number",
				    f->name, s);
		if (is_f)
			out->f = (float)d;
		else
			out->d = d;
		return GE_OK;
text:
		if (is_f) {
			float fl = c_strtof(s);
			if (isinf(fl))
				goto range;
			out->f = fl;
		} else {
			d = c_strtod(s);
			if (isinf(d))
				goto range;
			out->d = d;
		}
		return GE_OK;
	}
	if (!json_is_number(v))
		return merr(m, "field '%s': expected a number, got %s",
			    f->name, ge_json_type_name(v));
	d = json_number_value(v);
	if (is_f) {
		/* a float field given a double: the nearest float, but never
		 * infinity for a finite value */
		if (fabs(d) > FLT_MAX &&
		    isinf((float)d))
			goto range;
		out->f = (float)d;
	} else {
		out->d = d;
	}
	return GE_OK;
range:
	return merr(m, "field '%s': %s is out of range for a %s", f->name,
		    val_text(v, tb, sizeof tb), is_f ? "float" : "double");
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

static int parse_message(mapper *m, const json_t *v,
			 const ProtobufCMessageDescriptor *d,
			 ProtobufCMessage **out);

/* One value of field f (an element, for repeated fields).  Returns GE_OK,
 * SKIPPED (an unknown enum name under IGNORE_UNKNOWN), or an error. */
static int parse_value(mapper *m, const ProtobufCFieldDescriptor *f,
		       const json_t *v, ge_pbf_value *out)
{
	memset(out, 0, sizeof *out);
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return parse_message(m, v, f->descriptor, &out->m);
	case PROTOBUF_C_TYPE_STRING:
		if (!json_is_string(v))
			return merr(m, "field '%s': expected a string, got %s",
				    f->name, ge_json_type_name(v));
		if (memchr(json_string_value(v), 0, json_string_length(v)))
			return merr(m, "field '%s': a string field cannot hold "
				    "a NUL character", f->name);
		out->s = ge_xstrndup(json_string_value(v), json_string_length(v));
		return GE_OK;
	case PROTOBUF_C_TYPE_BYTES: {
		size_t at = 0;
		if (!json_is_string(v))
			return merr(m, "field '%s': expected a base64 string, "
				    "got %s", f->name, ge_json_type_name(v));
		if (b64_decode(json_string_value(v), json_string_length(v),
			       &out->bd, &at))
			return merr(m, "field '%s': invalid base64 at "
				    "character %zu", f->name, at + 1);
		return GE_OK;
	}
	case PROTOBUF_C_TYPE_BOOL:
		if (!json_is_boolean(v))
			return merr(m, "field '%s': expected true or false, "
				    "got %s", f->name, ge_json_type_name(v));
		out->b = (protobuf_c_boolean)json_is_true(v);
		return GE_OK;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = f->descriptor;
		if (json_is_string(v)) {
			const char *s = json_string_value(v);
			const ProtobufCEnumValue *ev = NULL;
			if (strlen(s) == json_string_length(v))
				ev = protobuf_c_enum_descriptor_get_value_by_name(
					ed, s);
			if (ev) {
				out->i32 = ev->value;
				return GE_OK;
			}
			if (m->flags & GE_JSONPB_IGNORE_UNKNOWN)
				return SKIPPED;
			return merr(m, "field '%s': unknown value \"%.60s\" of "
				    "enum %s", f->name, s, ed->name);
		}
		if (json_is_number(v))
			return parse_int(m, f, v, PROTOBUF_C_TYPE_ENUM, out);
		return merr(m, "field '%s': expected an enum name or number, "
			    "got %s", f->name, ge_json_type_name(v));
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
		     const char *key, ge_pbf_value *out)
{
	memset(out, 0, sizeof *out);
	if (kf->type == PROTOBUF_C_TYPE_BOOL) {
		if (!strcmp(key, "true") || !strcmp(key, "false")) {
			out->b = key[0] == 't';
			return GE_OK;
		}
		return merr(m, "map key \"%.40s\" is not true or false", key);
	}
	json_t *k = json_string_nocheck(key);
	int rc = parse_value(m, kf, k, out);
	json_decref(k);
	return rc;
}

static int parse_map(mapper *m, ProtobufCMessage *msg,
		     const ProtobufCFieldDescriptor *f, const json_t *v)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
	const char *key;
	json_t *mv;
	if (!json_is_object(v))
		return merr(m, "field '%s': a map is written as an object, "
			    "not as %s", f->name, ge_json_type_name(v));
	json_object_foreach((json_t *)v, key, mv) {
		ProtobufCMessage *ent = ge_pbf_new_message(ed);
		ge_pbf_value kv, vv;
		size_t o = path_key(m, key);
		int rc = parse_key(m, kf, key, &kv);
		if (!rc) {
			ge_pbf_set(ent, kf, &kv);
			if (json_is_null(mv))
				rc = merr(m, "field '%s': null is not allowed "
					  "as a map value", f->name);
			else
				rc = parse_value(m, vf, mv, &vv);
		}
		path_pop(m, o);
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
			  const ProtobufCFieldDescriptor *f, const json_t *v)
{
	if (!json_is_array(v))
		return merr(m, "field '%s' is repeated: expected an array, "
			    "got %s", f->name, ge_json_type_name(v));
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *ev = json_array_get(v, i);
		ge_pbf_value val;
		size_t o = path_idx(m, i);
		int rc;
		if (json_is_null(ev))
			rc = merr(m, "field '%s': null is not allowed in a "
				  "list", f->name);
		else
			rc = parse_value(m, f, ev, &val);
		path_pop(m, o);
		if (rc == SKIPPED)
			continue;
		if (rc)
			return rc;
		ge_pbf_append(msg, f, &val);
	}
	return GE_OK;
}

static int parse_field(mapper *m, ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f, const json_t *mv)
{
	const char *rival = ge_pbf_oneof_rival(msg, f);
	if (rival)
		return merr(m, "field '%s' is in the same oneof as '%s', "
			    "which is already set", f->name, rival);
	if (is_map_field(f))
		return parse_map(m, msg, f, mv);
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return parse_repeated(m, msg, f, mv);
	ge_pbf_value val;
	int rc = parse_value(m, f, mv, &val);
	if (rc == SKIPPED)
		return GE_OK;
	if (!rc)
		ge_pbf_set(msg, f, &val);
	return rc;
}

/* The members of object v (but "@type" when skip_type) into msg. */
static int parse_fields(mapper *m, const json_t *v, ProtobufCMessage *msg,
			int skip_type)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	unsigned char small[64], *seen = small;
	const char *key;
	json_t *mv;
	int rc = GE_OK;
	if (d->n_fields > sizeof small)
		seen = ge_xcalloc(d->n_fields, 1);
	else
		memset(small, 0, sizeof small);
	json_object_foreach((json_t *)v, key, mv) {
		if (skip_type && !strcmp(key, "@type"))
			continue;
		const ProtobufCFieldDescriptor *f =
			find_field(d, key, strlen(key));
		if (!f) {
			if (m->flags & GE_JSONPB_IGNORE_UNKNOWN)
				continue;
			rc = merr(m, "unknown field \"%.60s\" in %s", key,
				  d->name);
			break;
		}
		size_t idx = (size_t)(f - d->fields);
		if (seen[idx]) {
			rc = merr(m, "field '%s' of %s is given more than "
				  "once", f->name, d->name);
			break;
		}
		seen[idx] = 1;
		if (json_is_null(mv))
			continue;
		size_t o = path_key(m, key);
		rc = parse_field(m, msg, f, mv);
		if (!rc)
			path_pop(m, o);
		if (rc)
			break;
	}
	if (seen != small)
		free(seen);
	return rc;
}

static int parse_any(mapper *m, const json_t *v, ProtobufCMessage *msg,
		     const ProtobufCFieldDescriptor *fu,
		     const ProtobufCFieldDescriptor *fv)
{
	if (!json_is_object(v))
		return merr(m, "expected an object for %s, got %s",
			    msg->descriptor->name, ge_json_type_name(v));
	if (!json_object_size(v))
		return GE_OK;
	const json_t *t = json_object_get(v, "@type");
	if (!t)
		return merr(m, "%s without \"@type\"", msg->descriptor->name);
	if (!json_is_string(t) ||
	    strlen(json_string_value(t)) != json_string_length(t))
		return merr(m, "\"@type\" must be a string");
	const char *url = json_string_value(t);
	const char *slash = strrchr(url, '/');
	if (!slash)
		return merr(m, "type URL \"%.80s\" has no '/'", url);
	const ProtobufCMessageDescriptor *td =
		ge_textpb_lookup(slash + 1, strlen(slash + 1));
	if (!td)
		return merr(m, "unknown type \"%.80s\" in %s", slash + 1,
			    msg->descriptor->name);
	ProtobufCMessage *inner;
	int rc;
	const ProtobufCFieldDescriptor *u2, *v2;
	if (wrapper_field(td) || ge_pbf_any_fields(td, &u2, &v2)) {
		/* types with a JSON form of their own sit under "value" */
		const char *key;
		json_t *k, *val = NULL;
		json_object_foreach((json_t *)v, key, k) {
			if (!strcmp(key, "@type"))
				continue;
			if (!strcmp(key, "value")) {
				val = k;
				continue;
			}
			return merr(m, "unexpected member \"%.60s\" in an Any "
				    "holding %s", key, td->name);
		}
		if (!val)
			return merr(m, "Any holding %s needs a \"value\"",
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
	ge_pbf_set_any(msg, fu, fv, inner, url, strlen(url));
	return GE_OK;
}

static int parse_message(mapper *m, const json_t *v,
			 const ProtobufCMessageDescriptor *d,
			 ProtobufCMessage **out)
{
	const ProtobufCFieldDescriptor *wf = wrapper_field(d), *fu, *fv;
	int rc;
	*out = NULL;
	if (m->depth >= GE_JSON_MAX_DEPTH)
		return merr(m, "messages nested deeper than %d levels",
			    GE_JSON_MAX_DEPTH);
	ProtobufCMessage *msg = ge_pbf_new_message(d);
	m->depth++;
	if (wf) {
		ge_pbf_value val;
		rc = json_is_null(v) ? GE_OK : parse_value(m, wf, v, &val);
		if (rc == SKIPPED)
			rc = GE_OK;
		else if (!rc && !json_is_null(v))
			ge_pbf_set(msg, wf, &val);
	} else if (ge_pbf_any_fields(d, &fu, &fv)) {
		rc = parse_any(m, v, msg, fu, fv);
	} else if (!json_is_object(v)) {
		rc = merr(m, "expected an object for %s, got %s", d->name,
			  ge_json_type_name(v));
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

int ge_jsonpb_from_json(const json_t *v,
			const ProtobufCMessageDescriptor *desc,
			const char *name, unsigned flags,
			ProtobufCMessage **out, ge_error *err)
{
	mapper m;
	memset(&m, 0, sizeof m);
	m.name = name ? name : "<json>";
	m.err = err;
	m.flags = flags;
	return parse_message(&m, v, desc, out);
}

int ge_jsonpb_parse(const char *json, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err)
{
	json_t *doc;
	*out = NULL;
	int rc = ge_json_load(json, len, name, &doc, err);
	if (rc)
		return rc;
	rc = ge_jsonpb_from_json(doc, desc, name, 0, out, err);
	json_decref(doc);
	return rc;
}

/* ================================================================ writer */

static const char b64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static json_t *b64_encode(const uint8_t *p, size_t n)
{
	size_t o = 0;
	char *s = ge_xmalloc((n + 2) / 3 * 4 + 1);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		s[o++] = b64_chars[v >> 18 & 63];
		s[o++] = b64_chars[v >> 12 & 63];
		s[o++] = i + 1 < n ? b64_chars[v >> 6 & 63] : '=';
		s[o++] = i + 2 < n ? b64_chars[v & 63] : '=';
	}
	json_t *j = json_stringn_nocheck(s, o);
	free(s);
	return j;
}

/* A float as the shortest decimal that reads back as the same float, so
 * 0.1f is written 0.1 as protobuf's own printers do. */
static json_t *float_json(float f)
{
	if (isnan(f))
		return json_string("NaN");
	if (isinf(f))
		return json_string(f > 0 ? "Infinity" : "-Infinity");
	char buf[48];
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
		if (c_strtof(buf) == f)
			break;
	}
	return json_real(c_strtod(buf));
}

static json_t *double_json(double d)
{
	if (isnan(d))
		return json_string("NaN");
	if (isinf(d))
		return json_string(d > 0 ? "Infinity" : "-Infinity");
	return json_real(d);
}

static json_t *int64_json(int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	return json_string(buf);
}

static json_t *uint64_json(uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	return json_string(buf);
}

static json_t *message_json(const ProtobufCMessage *msg);

/* The value at p of a field of type f (an element, for repeated ones). */
static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return json_integer(*(const int32_t *)p);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return json_integer(*(const uint32_t *)p);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return int64_json(*(const int64_t *)p);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return uint64_json(*(const uint64_t *)p);
	case PROTOBUF_C_TYPE_FLOAT:
		return float_json(*(const float *)p);
	case PROTOBUF_C_TYPE_DOUBLE:
		return double_json(*(const double *)p);
	case PROTOBUF_C_TYPE_BOOL:
		return json_boolean(*(const protobuf_c_boolean *)p);
	case PROTOBUF_C_TYPE_ENUM: {
		int32_t v = *(const int32_t *)p;
		const ProtobufCEnumValue *ev =
			protobuf_c_enum_descriptor_get_value(f->descriptor, v);
		return ev ? json_string(ev->name) : json_integer(v);
	}
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)p;
		json_t *j = json_string(s ? s : "");
		/* not UTF-8: kept byte for byte; the dump refuses it */
		return j ? j : json_stringn_nocheck(s, strlen(s));
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = p;
		return b64_encode(b->data, b->len);
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;
		return m ? message_json(m) : json_object();
	}
	}
	return json_null();
}

/* The lowerCamelCase JSON name of a field, into buf. */
static const char *json_name(const char *fname, char *buf, size_t n)
{
	size_t o = 0;
	int up = 0;
	for (const char *c = fname; *c && o + 1 < n; c++) {
		if (*c == '_') {
			up = 1;
			continue;
		}
		buf[o++] = up && *c >= 'a' && *c <= 'z' ? (char)(*c - 32) : *c;
		up = 0;
	}
	buf[o] = 0;
	return buf;
}

static json_t *map_json(const ProtobufCFieldDescriptor *f, const void *arr,
			size_t n)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++) {
		const ProtobufCMessage *e = ((const ProtobufCMessage *const *)arr)[i];
		json_t *k = value_json(kf, CMEMBER(e, kf->offset));
		char kb[32];
		const char *ks = kb;
		if (json_is_string(k))
			ks = json_string_value(k);
		else if (json_is_boolean(k))
			ks = json_is_true(k) ? "true" : "false";
		else
			snprintf(kb, sizeof kb, "%lld",
				 (long long)json_integer_value(k));
		json_object_set_new_nocheck(o, ks, value_json(vf, CMEMBER(e,
						vf->offset)));
		json_decref(k);
	}
	return o;
}

static json_t *any_json(const ProtobufCMessage *msg,
			const ProtobufCFieldDescriptor *fu,
			const ProtobufCFieldDescriptor *fv)
{
	json_t *o = json_object();
	const char *url = *(const char *const *)CMEMBER(msg, fu->offset);
	const ProtobufCBinaryData *val = CMEMBER(msg, fv->offset);
	if (!url || !*url)
		return o;
	json_object_set_new(o, "@type", json_string(url));
	const char *slash = strrchr(url, '/');
	const ProtobufCMessageDescriptor *td =
		slash ? ge_textpb_lookup(slash + 1, strlen(slash + 1)) : NULL;
	ProtobufCMessage *inner =
		td ? ge_pb_unpack(td, val->len, val->data)
		   : NULL;
	const ProtobufCFieldDescriptor *u2, *v2;
	if (!inner) {
		/* a type this build does not know: its bytes, so nothing is
		 * lost */
		json_object_set_new(o, "value", b64_encode(val->data, val->len));
	} else if (wrapper_field(td) || ge_pbf_any_fields(td, &u2, &v2)) {
		json_object_set_new(o, "value", message_json(inner));
	} else {
		json_t *in = message_json(inner);
		json_object_update(o, in);
		json_decref(in);
	}
	if (inner)
		protobuf_c_message_free_unpacked(inner, NULL);
	return o;
}

static json_t *message_json(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *wf = wrapper_field(d), *fu, *fv;
	if (wf)
		return value_json(wf, CMEMBER(msg, wf->offset));
	if (ge_pbf_any_fields(d, &fu, &fv))
		return any_json(msg, fu, fv);
	json_t *o = json_object();
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char nb[256];
		if (!ge_pbf_is_present(msg, f))
			continue;
		const char *key = json_name(f->name, nb, sizeof nb);
		const void *mem = CMEMBER(msg, f->offset);
		json_t *v;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)CMEMBER(msg,
							    f->quantifier_offset);
			const char *arr = *(const char *const *)mem;
			if (is_map_field(f)) {
				v = map_json(f, arr, n);
			} else {
				size_t es = ge_pbf_elt_size(f->type);
				v = json_array();
				for (size_t k = 0; k < n; k++)
					json_array_append_new(
						v, value_json(f, arr + k * es));
			}
		} else {
			v = value_json(f, mem);
		}
		json_object_set_new_nocheck(o, key, v);
	}
	return o;
}

json_t *ge_jsonpb_to_json(const ProtobufCMessage *msg)
{
	return message_json(msg);
}
