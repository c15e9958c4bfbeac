/* textpb.c: see textpb.h. */
#include "base/textpb.h"
#include "base/bounds.h"
#include "base/pbfield.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- registry */

static const ProtobufCMessageDescriptor **registry;
static size_t n_registry, cap_registry;

void ge_textpb_register(const ProtobufCMessageDescriptor *desc)
{
	for (size_t i = 0; i < n_registry; i++)
		if (registry[i] == desc || strcmp(registry[i]->name, desc->name) == 0)
			return;
	if (n_registry == cap_registry) {
		cap_registry = cap_registry ? cap_registry * 2 : 16;
		registry = ge_xrealloc(registry, cap_registry * sizeof *registry);
	}
	registry[n_registry++] = desc;
}

const ProtobufCMessageDescriptor *ge_textpb_lookup(const char *name, size_t n)
{
	for (size_t i = 0; i < n_registry; i++) {
		const char *r = registry[i]->name;
		if (strlen(r) == n && memcmp(r, name, n) == 0)
			return registry[i];
	}
	return NULL;
}

/* Characters allowed in the brackets of an expanded Any. */
static int is_url_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' ||
	       c == '-';
}

/* ---------------------------------------------------------------- helpers */

static const char *type_name(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32: return "int32";
	case PROTOBUF_C_TYPE_SINT32: return "sint32";
	case PROTOBUF_C_TYPE_SFIXED32: return "sfixed32";
	case PROTOBUF_C_TYPE_UINT32: return "uint32";
	case PROTOBUF_C_TYPE_FIXED32: return "fixed32";
	case PROTOBUF_C_TYPE_INT64: return "int64";
	case PROTOBUF_C_TYPE_SINT64: return "sint64";
	case PROTOBUF_C_TYPE_SFIXED64: return "sfixed64";
	case PROTOBUF_C_TYPE_UINT64: return "uint64";
	case PROTOBUF_C_TYPE_FIXED64: return "fixed64";
	case PROTOBUF_C_TYPE_FLOAT: return "float";
	case PROTOBUF_C_TYPE_DOUBLE: return "double";
	case PROTOBUF_C_TYPE_BOOL: return "bool";
	case PROTOBUF_C_TYPE_ENUM: return "enum";
	case PROTOBUF_C_TYPE_STRING: return "string";
	case PROTOBUF_C_TYPE_BYTES: return "bytes";
	case PROTOBUF_C_TYPE_MESSAGE: return "message";
	}
	return "?";
}

/* Element count of a repeated field. */
#define N_REPEATED(msg, f) (*(const size_t *)CMEMBER((msg), (f)->quantifier_offset))

/* ---------------------------------------------------------------- lexer */

enum { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STRING, T_SYM };

typedef struct parser {
	const char *p, *end;     /* what is left to lex */
	const char *line_start;
	int line;

	int tok;                 /* the current token */
	const char *ts;          /* its text (strings: including quotes) */
	size_t tn;
	int tline, tcol;
	ge_buf str;              /* decoded bytes of a T_STRING */
	ge_buf acc;              /* adjacent strings, concatenated */

	const char *name;
	ge_error *err;
	int depth;
} parser;

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int perr_at(parser *ps, int line, int col, const char *fmt, ...)
	GE_PRINTF(4, 5);
static int perr_at(parser *ps, int line, int col, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ge_err(ps->err, GE_EFORMAT, "%s:%d:%d: %s", ps->name, line, col,
		      what);
}

#define perr(ps, ...) perr_at((ps), (ps)->tline, (ps)->tcol, __VA_ARGS__)

/* How the current token reads in an error message. */
static const char *tokdesc(parser *ps, char *buf, size_t n)
{
	if (ps->tok == T_EOF)
		return "end of input";
	if (ps->tok == T_STRING)
		return "a string";
	int len = ps->tn > 40 ? 40 : (int)ps->tn;
	snprintf(buf, n, "'%.*s%s'", len, ps->ts, ps->tn > 40 ? "..." : "");
	return buf;
}

static int col_of(parser *ps, const char *q)
{
	return (int)(q - ps->line_start) + 1;
}

/* Reads exactly n hex digits at *q; -1 if they are not there. */
static long hex_n(const char **q, const char *end, int n)
{
	long v = 0;
	for (int i = 0; i < n; i++) {
		if (*q >= end || ge_pbf_hex_val(**q) < 0)
			return -1;
		v = v * 16 + ge_pbf_hex_val(**q);
		(*q)++;
	}
	return v;
}

static int lex_string(parser *ps)
{
	const char *q = ps->p + 1, *e = ps->end;
	char quote = *ps->p;
	ps->str.len = 0;
	for (;;) {
		const char *run = q;
		while (q < e && *q != quote && *q != '\\' && *q != '\n')
			q++;
		ge_buf_add(&ps->str, run, (size_t)(q - run));
		if (q >= e || *q == '\n')
			return perr(ps, "unterminated string");
		if (*q == quote) {
			q++;
			break;
		}
		const char *bs = q++;
		if (q >= e)
			return perr(ps, "unterminated string");
		char c = *q++;
		switch (c) {
		case 'n': ge_buf_addc(&ps->str, '\n'); break;
		case 't': ge_buf_addc(&ps->str, '\t'); break;
		case 'r': ge_buf_addc(&ps->str, '\r'); break;
		case 'a': ge_buf_addc(&ps->str, '\a'); break;
		case 'b': ge_buf_addc(&ps->str, '\b'); break;
		case 'f': ge_buf_addc(&ps->str, '\f'); break;
		case 'v': ge_buf_addc(&ps->str, '\v'); break;
		case '\\': case '\'': case '"': case '?':
			ge_buf_addc(&ps->str, c);
			break;
		case '0': case '1': case '2': case '3':
		case '4': case '5': case '6': case '7': {
			int v = c - '0';
			for (int i = 0; i < 2 && q < e && *q >= '0' && *q <= '7'; i++)
				v = v * 8 + (*q++ - '0');
			if (v > 0377)
				return perr_at(ps, ps->line, col_of(ps, bs),
					       "octal escape '%.*s' is above \\377",
					       (int)(q - bs), bs);
			ge_buf_addc(&ps->str, v);
			break;
		}
		case 'x': case 'X': {
			int v = 0, n = 0;
			for (; n < 2 && q < e && ge_pbf_hex_val(*q) >= 0; n++)
				v = v * 16 + ge_pbf_hex_val(*q++);
			if (n == 0)
				return perr_at(ps, ps->line, col_of(ps, bs),
					       "escape '\\%c' needs hex digits", c);
			ge_buf_addc(&ps->str, v);
			break;
		}
		case 'u': case 'U': {
			long cp = hex_n(&q, e, c == 'u' ? 4 : 8);
			if (cp < 0)
				return perr_at(ps, ps->line, col_of(ps, bs),
					       "escape '\\%c' needs %d hex digits",
					       c, c == 'u' ? 4 : 8);
			/* A surrogate pair written as two \u escapes is one
			 * code point; a lone surrogate is not UTF-8. */
			if (cp >= 0xd800 && cp <= 0xdbff && e - q >= 6 &&
			    q[0] == '\\' && q[1] == 'u') {
				const char *r = q + 2;
				long lo = hex_n(&r, e, 4);
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
					q = r;
				}
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				return perr_at(ps, ps->line, col_of(ps, bs),
					       "escape '%.*s' is not a Unicode "
					       "code point", (int)(q - bs), bs);
			ge_pbf_put_utf8(&ps->str, (uint32_t)cp);
			break;
		}
		default:
			if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
				return perr_at(ps, ps->line, col_of(ps, bs),
					       "invalid escape sequence (backslash "
					       "before byte \\%03o)",
					       (unsigned char)c);
			return perr_at(ps, ps->line, col_of(ps, bs),
				       "invalid escape sequence '\\%c'", c);
		}
	}
	ps->tok = T_STRING;
	ps->tn = (size_t)(q - ps->ts);
	ps->p = q;
	return GE_OK;
}

static int lex_number(parser *ps)
{
	const char *p = ps->p, *q = p, *e = ps->end;
	int is_float = 0;
	if (*q == '0' && q + 1 < e && (q[1] == 'x' || q[1] == 'X')) {
		q += 2;
		const char *s = q;
		while (q < e && ge_pbf_hex_val(*q) >= 0)
			q++;
		if (q == s)
			return perr(ps, "'0x' must be followed by hex digits");
	} else {
		while (q < e && is_digit(*q))
			q++;
		if (q < e && *q == '.') {
			is_float = 1;
			q++;
			while (q < e && is_digit(*q))
				q++;
		}
		if (q < e && (*q == 'e' || *q == 'E')) {
			is_float = 1;
			q++;
			if (q < e && (*q == '+' || *q == '-'))
				q++;
			const char *s = q;
			while (q < e && is_digit(*q))
				q++;
			if (q == s)
				return perr(ps, "exponent needs digits");
		}
		if (q < e && (*q == 'f' || *q == 'F')) {
			is_float = 1;
			q++;
		}
		if (!is_float && *p == '0')
			for (const char *r = p; r < q; r++)
				if (*r > '7')
					return perr(ps, "a number starting with 0 "
						    "is octal; '%c' is not an "
						    "octal digit", *r);
	}
	if (q < e && (is_alpha(*q) || is_digit(*q)))
		return perr_at(ps, ps->line, col_of(ps, q),
			       "need space between number and identifier");
	ps->tok = is_float ? T_FLOAT : T_INT;
	ps->tn = (size_t)(q - p);
	ps->p = q;
	return GE_OK;
}

/* Makes the next token current. */
static int next(parser *ps)
{
	const char *p = ps->p, *e = ps->end;
	for (;;) {
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' ||
				 *p == '\r' || *p == '\f' || *p == '\v')) {
			if (*p == '\n') {
				ps->line++;
				ps->line_start = p + 1;
			}
			p++;
		}
		if (p < e && *p == '#') {
			while (p < e && *p != '\n')
				p++;
			continue;
		}
		break;
	}
	ps->p = ps->ts = p;
	ps->tline = ps->line;
	ps->tcol = col_of(ps, p);
	if (p == e) {
		ps->tok = T_EOF;
		ps->tn = 0;
		return GE_OK;
	}
	unsigned char c = (unsigned char)*p;
	if (is_alpha(c)) {
		const char *q = p + 1;
		while (q < e && (is_alpha(*q) || is_digit(*q)))
			q++;
		ps->tok = T_IDENT;
		ps->tn = (size_t)(q - p);
		ps->p = q;
		return GE_OK;
	}
	if (is_digit(c) || (c == '.' && p + 1 < e && is_digit(p[1])))
		return lex_number(ps);
	if (c == '"' || c == '\'')
		return lex_string(ps);
	if (c && strchr("{}<>[]:,;-/.", c)) {
		ps->tok = T_SYM;
		ps->tn = 1;
		ps->p = p + 1;
		return GE_OK;
	}
	if (c >= 0x20 && c < 0x7f)
		return perr(ps, "unexpected character '%c'", c);
	return perr(ps, "unexpected byte \\%03o", c);
}

static int is_sym(parser *ps, char c)
{
	return ps->tok == T_SYM && *ps->ts == c;
}

static int ident_is(parser *ps, const char *s)
{
	return ps->tok == T_IDENT && strlen(s) == ps->tn &&
	       memcmp(ps->ts, s, ps->tn) == 0;
}

static int ident_is_ci(parser *ps, const char *s)
{
	if (ps->tok != T_IDENT || strlen(s) != ps->tn)
		return 0;
	for (size_t i = 0; i < ps->tn; i++) {
		char c = ps->ts[i];
		if (c >= 'A' && c <= 'Z')
			c += 32;
		if (c != s[i])
			return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- values */

/* The magnitude of the integer token text; -1 when it exceeds 64 bits. */
static int token_u64(parser *ps, uint64_t *out)
{
	const char *s = ps->ts, *e = ps->ts + ps->tn;
	unsigned base = 10;
	if (ps->tn > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (ps->tn > 1 && s[0] == '0') {
		base = 8;
		s++;
	}
	uint64_t v = 0;
	for (; s < e; s++) {
		unsigned d = (unsigned)ge_pbf_hex_val(*s);
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static void value_free(const ProtobufCFieldDescriptor *f, ge_pbf_value *v)
{
	if (f->type == PROTOBUF_C_TYPE_STRING)
		free(v->s);
	else if (f->type == PROTOBUF_C_TYPE_BYTES)
		free(v->bd.data);
	else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		protobuf_c_message_free_unpacked(v->m, NULL);
}

static int parse_int(parser *ps, const ProtobufCFieldDescriptor *f,
		     ge_pbf_value *v)
{
	char tb[64];
	int line = ps->tline, col = ps->tcol, neg = 0;
	if (is_sym(ps, '-')) {
		neg = 1;
		int rc = next(ps);
		if (rc)
			return rc;
	}
	if (ps->tok != T_INT)
		return perr(ps, "expected integer for field '%s', got %s",
			    f->name, tokdesc(ps, tb, sizeof tb));
	uint64_t m;
	int bad = token_u64(ps, &m) != 0;
	if (!bad) {
		switch (f->type) {
		case PROTOBUF_C_TYPE_INT32:
		case PROTOBUF_C_TYPE_SINT32:
		case PROTOBUF_C_TYPE_SFIXED32:
		case PROTOBUF_C_TYPE_ENUM:
			bad = m > (neg ? (uint64_t)INT32_MAX + 1 : INT32_MAX);
			v->i32 = neg ? (int32_t)(0 - (uint32_t)m) : (int32_t)m;
			break;
		case PROTOBUF_C_TYPE_UINT32:
		case PROTOBUF_C_TYPE_FIXED32:
			bad = (neg && m) || m > UINT32_MAX;
			v->u32 = (uint32_t)m;
			break;
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_SFIXED64:
			bad = m > (neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX);
			v->i64 = neg ? (int64_t)(0 - m) : (int64_t)m;
			break;
		default:
			bad = neg && m;
			v->u64 = m;
			break;
		}
	}
	if (bad)
		return perr_at(ps, line, col,
			       "integer %s%.*s out of range for %s field '%s'",
			       neg ? "-" : "", (int)ps->tn, ps->ts,
			       type_name(f->type), f->name);
	return next(ps);
}

static int parse_float(parser *ps, const ProtobufCFieldDescriptor *f,
		       ge_pbf_value *v)
{
	char tb[64];
	int neg = 0, rc;
	double d;
	float fl = 0;
	int is_f = f->type == PROTOBUF_C_TYPE_FLOAT;
	if (is_sym(ps, '-')) {
		neg = 1;
		if ((rc = next(ps)))
			return rc;
	}
	if (ps->tok == T_IDENT) {
		if (ident_is_ci(ps, "inf") || ident_is_ci(ps, "infinity"))
			d = INFINITY;
		else if (ident_is_ci(ps, "nan"))
			d = NAN;
		else
			return perr(ps, "expected number for field '%s', got %s",
				    f->name, tokdesc(ps, tb, sizeof tb));
		fl = (float)d;
	} else if (ps->tok == T_INT || ps->tok == T_FLOAT) {
		uint64_t m;
		if (ps->tok == T_INT && token_u64(ps, &m) == 0) {
			d = (double)m;
			fl = (float)m;
		} else if (ps->tok == T_INT && ps->ts[0] == '0') {
			return perr(ps, "integer %.*s out of range for field '%s'",
				    (int)ps->tn, ps->ts, f->name);
		} else {
			/* Decimal text, including integers too long for 64
			 * bits; strtof for floats avoids rounding twice. */
			char small[128], *s = small;
			size_t n = ps->tn;
			if (ps->tok == T_FLOAT &&
			    (ps->ts[n - 1] == 'f' || ps->ts[n - 1] == 'F'))
				n--;
			if (n >= sizeof small)
				s = ge_xmalloc(n + 1);
			memcpy(s, ps->ts, n);
			s[n] = 0;
			d = strtod(s, NULL);
			fl = strtof(s, NULL);
			if (s != small)
				free(s);
		}
	} else {
		return perr(ps, "expected number for field '%s', got %s",
			    f->name, tokdesc(ps, tb, sizeof tb));
	}
	if (is_f)
		v->f = neg ? -fl : fl;
	else
		v->d = neg ? -d : d;
	return next(ps);
}

static int parse_bool(parser *ps, const ProtobufCFieldDescriptor *f,
		      ge_pbf_value *v)
{
	char tb[64];
	if (ident_is(ps, "true") || ident_is(ps, "True") || ident_is(ps, "t")) {
		v->b = 1;
	} else if (ident_is(ps, "false") || ident_is(ps, "False") ||
		   ident_is(ps, "f")) {
		v->b = 0;
	} else if (ps->tok == T_INT) {
		uint64_t m;
		if (token_u64(ps, &m) || m > 1)
			return perr(ps, "integer %.*s is not a bool (field '%s')",
				    (int)ps->tn, ps->ts, f->name);
		v->b = (protobuf_c_boolean)m;
	} else {
		return perr(ps, "expected true or false for field '%s', got %s",
			    f->name, tokdesc(ps, tb, sizeof tb));
	}
	return next(ps);
}

static int parse_enum(parser *ps, const ProtobufCFieldDescriptor *f,
		      ge_pbf_value *v)
{
	const ProtobufCEnumDescriptor *ed = f->descriptor;
	char tb[64];
	if (ps->tok == T_IDENT) {
		char name[256];
		const ProtobufCEnumValue *ev = NULL;
		if (ps->tn < sizeof name) {
			memcpy(name, ps->ts, ps->tn);
			name[ps->tn] = 0;
			ev = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
		}
		if (!ev)
			return perr(ps, "unknown value '%.*s' of enum %s (field '%s')",
				    (int)ps->tn, ps->ts, ed->name, f->name);
		v->i32 = ev->value;
		return next(ps);
	}
	if (ps->tok == T_INT || is_sym(ps, '-'))
		return parse_int(ps, f, v);
	return perr(ps, "expected enum value for field '%s', got %s", f->name,
		    tokdesc(ps, tb, sizeof tb));
}

static int parse_bytes(parser *ps, const ProtobufCFieldDescriptor *f,
		       ge_pbf_value *v)
{
	char tb[64];
	int line = ps->tline, col = ps->tcol, rc;
	if (ps->tok != T_STRING)
		return perr(ps, "expected string for field '%s', got %s", f->name,
			    tokdesc(ps, tb, sizeof tb));
	ps->acc.len = 0;
	while (ps->tok == T_STRING) {
		ge_buf_add(&ps->acc, ps->str.data, ps->str.len);
		if ((rc = next(ps)))
			return rc;
	}
	size_t n = ps->acc.len;
	if (f->type == PROTOBUF_C_TYPE_STRING) {
		if (n && memchr(ps->acc.data, 0, n))
			return perr_at(ps, line, col, "string field '%s' cannot "
				       "hold a NUL byte", f->name);
		v->s = ge_xstrndup(n ? (char *)ps->acc.data : "", n);
	} else {
		v->bd.len = n;
		v->bd.data = NULL;
		if (n) {
			v->bd.data = ge_xmalloc(n);
			memcpy(v->bd.data, ps->acc.data, n);
		}
	}
	return GE_OK;
}

static int parse_body(parser *ps, ProtobufCMessage *msg, char close);

/* The current token opens a message ('{' or '<'). */
static int parse_message(parser *ps, const ProtobufCMessageDescriptor *d,
			 ProtobufCMessage **out)
{
	char close = is_sym(ps, '{') ? '}' : '>';
	int rc;
	if (ps->depth >= GE_TEXTPB_MAX_DEPTH)
		return perr(ps, "messages nested deeper than %d levels",
			    GE_TEXTPB_MAX_DEPTH);
	if ((rc = next(ps)))
		return rc;
	ProtobufCMessage *m = ge_pbf_new_message(d);
	ps->depth++;
	rc = parse_body(ps, m, close);
	ps->depth--;
	if (!rc)
		rc = next(ps);
	if (rc) {
		protobuf_c_message_free_unpacked(m, NULL);
		return rc;
	}
	*out = m;
	return GE_OK;
}

static int parse_value(parser *ps, const ProtobufCFieldDescriptor *f,
		       ge_pbf_value *v)
{
	char tb[64];
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		if (!is_sym(ps, '{') && !is_sym(ps, '<'))
			return perr(ps, "expected '{' for field '%s', got %s",
				    f->name, tokdesc(ps, tb, sizeof tb));
		return parse_message(ps, f->descriptor, &v->m);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		return parse_bytes(ps, f, v);
	case PROTOBUF_C_TYPE_BOOL:
		return parse_bool(ps, f, v);
	case PROTOBUF_C_TYPE_ENUM:
		return parse_enum(ps, f, v);
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		return parse_float(ps, f, v);
	default:
		return parse_int(ps, f, v);
	}
}

static int parse_and_store(parser *ps, ProtobufCMessage *msg,
			   const ProtobufCFieldDescriptor *f)
{
	ge_pbf_value v;
	memset(&v, 0, sizeof v);
	int rc = parse_value(ps, f, &v);
	if (rc) {
		value_free(f, &v);
		return rc;
	}
	ge_pbf_store(msg, f, &v);
	return GE_OK;
}

/* `[a, b, c]` for a repeated field; the current token is '['. */
static int parse_list(parser *ps, ProtobufCMessage *msg,
		      const ProtobufCFieldDescriptor *f)
{
	char tb[64];
	int rc = next(ps);
	if (rc)
		return rc;
	if (is_sym(ps, ']'))
		return next(ps);
	for (;;) {
		if ((rc = parse_and_store(ps, msg, f)))
			return rc;
		if (is_sym(ps, ']'))
			return next(ps);
		if (!is_sym(ps, ','))
			return perr(ps, "expected ',' or ']' in the list of "
				    "field '%s', got %s", f->name,
				    tokdesc(ps, tb, sizeof tb));
		if ((rc = next(ps)))
			return rc;
	}
}

/* The expanded Any `[type.googleapis.com/pkg.Type] { ... }`; the current
 * token is '['.  The URL is scanned as raw characters, not tokens, so
 * components such as "v2beta1" need no special casing. */
static int parse_any(parser *ps, ProtobufCMessage *msg, unsigned char *seen)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *fu, *fv;
	int line = ps->tline, col = ps->tcol, rc;
	char tb[64];
	const char *q = ps->p, *e = ps->end;
	while (q < e && (*q == ' ' || *q == '\t'))
		q++;
	const char *url = q;
	while (q < e && is_url_char(*q))
		q++;
	size_t n = (size_t)(q - url);
	while (q < e && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= e || *q != ']' || n == 0)
		return perr_at(ps, ps->line, col_of(ps, q),
			       "expected a type URL and ']' after '['");
	if (!ge_pbf_any_fields(d, &fu, &fv))
		return perr_at(ps, line, col, "extensions are not supported "
			       "('[%.*s]' in %s)", (int)n, url, d->name);
	if (seen[fu - d->fields] || seen[fv - d->fields])
		return perr_at(ps, line, col, "%s holds more than one value",
			       d->name);
	const char *slash = NULL;
	for (const char *c = url; c < url + n; c++)
		if (*c == '/')
			slash = c;
	if (!slash)
		return perr_at(ps, line, col, "type URL '%.*s' has no '/'",
			       (int)n, url);
	const ProtobufCMessageDescriptor *td =
		ge_textpb_lookup(slash + 1, n - (size_t)(slash + 1 - url));
	if (!td)
		return perr_at(ps, line, col, "unknown type '%.*s' in %s",
			       (int)(n - (size_t)(slash + 1 - url)), slash + 1,
			       d->name);
	ps->p = q + 1;
	if ((rc = next(ps)))
		return rc;
	if (is_sym(ps, ':') && (rc = next(ps)))
		return rc;
	if (!is_sym(ps, '{') && !is_sym(ps, '<'))
		return perr(ps, "expected '{' after '[%.*s]', got %s", (int)n,
			    url, tokdesc(ps, tb, sizeof tb));
	ProtobufCMessage *m;
	if ((rc = parse_message(ps, td, &m)))
		return rc;
	ge_pbf_set_any(msg, fu, fv, m, url, n);
	seen[fu - d->fields] = seen[fv - d->fields] = 1;
	return GE_OK;
}

static int parse_field(parser *ps, ProtobufCMessage *msg, unsigned char *seen)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f = NULL;
	char tb[64];
	int rc;
	if (is_sym(ps, '['))
		return parse_any(ps, msg, seen);
	if (ps->tok != T_IDENT)
		return perr(ps, "expected field name, got %s",
			    tokdesc(ps, tb, sizeof tb));
	if (ps->tn < 256) {
		char name[256];
		memcpy(name, ps->ts, ps->tn);
		name[ps->tn] = 0;
		f = protobuf_c_message_descriptor_get_field_by_name(d, name);
	}
	if (!f)
		return perr(ps, "unknown field '%.*s' in %s", (int)ps->tn,
			    ps->ts, d->name);
	size_t idx = (size_t)(f - d->fields);
	int repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
	if (!repeated && seen[idx])
		return perr(ps, "field '%s' is given more than once", f->name);
	const char *rival = ge_pbf_oneof_rival(msg, f);
	if (rival)
		return perr(ps, "field '%s' is in the same oneof as '%s', "
			    "which is already set", f->name, rival);
	seen[idx] = 1;
	if ((rc = next(ps)))
		return rc;

	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		if (is_sym(ps, ':') && (rc = next(ps)))
			return rc;
	} else {
		if (!is_sym(ps, ':'))
			return perr(ps, "expected ':' after field '%s', got %s",
				    f->name, tokdesc(ps, tb, sizeof tb));
		if ((rc = next(ps)))
			return rc;
	}
	if (is_sym(ps, '[')) {
		if (!repeated)
			return perr(ps, "field '%s' is not repeated; a list is "
				    "not allowed", f->name);
		rc = parse_list(ps, msg, f);
	} else {
		rc = parse_and_store(ps, msg, f);
	}
	if (rc)
		return rc;
	if (is_sym(ps, ';') || is_sym(ps, ','))
		return next(ps);
	return GE_OK;
}

/* Fields until `close` (left current) or, at the top (close == 0), until
 * the end of the input. */
static int parse_body(parser *ps, ProtobufCMessage *msg, char close)
{
	unsigned char small[64], *seen = small;
	unsigned n = msg->descriptor->n_fields;
	int rc = GE_OK;
	if (n > sizeof small)
		seen = ge_xcalloc(n, 1);
	else
		memset(small, 0, n);
	for (;;) {
		if (ps->tok == T_EOF) {
			if (close)
				rc = perr(ps, "unexpected end of input, expected "
					  "'%c'", close);
			break;
		}
		if (close && is_sym(ps, close))
			break;
		if ((rc = parse_field(ps, msg, seen)))
			break;
	}
	if (seen != small)
		free(seen);
	return rc;
}

int ge_textpb_parse(const char *text, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err)
{
	parser ps;
	memset(&ps, 0, sizeof ps);
	ps.p = ps.line_start = text ? text : "";
	ps.end = ps.p + (text ? len : 0);
	ps.line = 1;
	ps.name = name ? name : "<text>";
	ps.err = err;
	*out = NULL;

	ProtobufCMessage *m = ge_pbf_new_message(desc);
	int rc = next(&ps);
	if (!rc)
		rc = parse_body(&ps, m, 0);
	ge_buf_free(&ps.str);
	ge_buf_free(&ps.acc);
	if (rc) {
		protobuf_c_message_free_unpacked(m, NULL);
		return rc;
	}
	*out = m;
	return GE_OK;
}

/* ---------------------------------------------------------------- printer */

static void put_indent(ge_buf *b, int lvl)
{
	ge_buf_reserve(b, (size_t)lvl * 2);
	memset(b->data + b->len, ' ', (size_t)lvl * 2);
	b->len += (size_t)lvl * 2;
	b->data[b->len] = 0;
}

/* C escapes as TensorFlow writes them: \n \r \t \" \' \\, and three-digit
 * octal for every other byte outside printable ASCII (UTF-8 included). */
static void put_quoted(ge_buf *b, const uint8_t *s, size_t n)
{
	ge_buf_addc(b, '"');
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] >= 0x20 && s[j] < 0x7f && s[j] != '"' &&
		       s[j] != '\'' && s[j] != '\\')
			j++;
		ge_buf_add(b, s + i, j - i);
		if (j == n)
			break;
		char esc[5];
		switch (s[j]) {
		case '\n': ge_buf_add(b, "\\n", 2); break;
		case '\r': ge_buf_add(b, "\\r", 2); break;
		case '\t': ge_buf_add(b, "\\t", 2); break;
		case '"': ge_buf_add(b, "\\\"", 2); break;
		case '\'': ge_buf_add(b, "\\'", 2); break;
		case '\\': ge_buf_add(b, "\\\\", 2); break;
		default:
			snprintf(esc, sizeof esc, "\\%03o", s[j]);
			ge_buf_add(b, esc, 4);
		}
		i = j + 1;
	}
	ge_buf_addc(b, '"');
}

/* Shortest %g form that reads back to the same value. */
static void put_float(ge_buf *b, double v, int is_float)
{
	char s[40];
	if (isnan(v)) {
		ge_buf_adds(b, "nan");
		return;
	}
	if (isinf(v)) {
		ge_buf_adds(b, v < 0 ? "-inf" : "inf");
		return;
	}
	if (is_float) {
		float f = (float)v;
		for (int prec = 6; prec <= 9; prec++) {
			snprintf(s, sizeof s, "%.*g", prec, (double)f);
			if (strtof(s, NULL) == f)
				break;
		}
	} else {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(s, sizeof s, "%.*g", prec, v);
			if (strtod(s, NULL) == v)
				break;
		}
	}
	ge_buf_adds(b, s);
}

static void print_body(ge_buf *b, const ProtobufCMessage *m, int lvl);

static int has_unknown(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (m->n_unknown_fields)
		return 1;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE ||
		    !ge_pbf_is_present(m, f))
			continue;
		const void *mem = CMEMBER(m, f->offset);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = N_REPEATED(m, f);
			ProtobufCMessage *const *arr = *(void *const *)mem;
			for (size_t k = 0; k < n; k++)
				if (has_unknown(arr[k]))
					return 1;
		} else if (has_unknown(*(ProtobufCMessage *const *)mem)) {
			return 1;
		}
	}
	return 0;
}

/* Prints the body of an Any in the expanded form when that loses nothing:
 * the type is registered, the value decodes, re-encodes to the same bytes
 * and has no unknown fields.  Returns 0 when the caller must print it raw. */
static int print_any(ge_buf *b, const ProtobufCMessage *any, int lvl)
{
	const ProtobufCFieldDescriptor *fu, *fv;
	if (!ge_pbf_any_fields(any->descriptor, &fu, &fv) ||
	    !ge_pbf_is_present(any, fu))
		return 0;
	const char *url = *(char *const *)CMEMBER(any, fu->offset);
	const ProtobufCBinaryData *bd = CMEMBER(any, fv->offset);
	for (const char *c = url; *c; c++)
		if (!is_url_char(*c))
			return 0;
	const char *slash = strrchr(url, '/');
	if (!slash)
		return 0;
	const ProtobufCMessageDescriptor *td =
		ge_textpb_lookup(slash + 1, strlen(slash + 1));
	if (!td)
		return 0;
	ProtobufCMessage *sub = ge_pb_unpack(td, bd->len,
							  bd->data);
	if (!sub)
		return 0;
	int same = !has_unknown(sub) &&
		   protobuf_c_message_get_packed_size(sub) == bd->len;
	if (same && bd->len) {
		uint8_t *tmp = ge_xmalloc(bd->len);
		protobuf_c_message_pack(sub, tmp);
		same = memcmp(tmp, bd->data, bd->len) == 0;
		free(tmp);
	}
	if (same) {
		put_indent(b, lvl);
		ge_buf_printf(b, "[%s] {\n", url);
		print_body(b, sub, lvl + 1);
		put_indent(b, lvl);
		ge_buf_adds(b, "}\n");
	}
	protobuf_c_message_free_unpacked(sub, NULL);
	return same;
}

/* One `name: value` line, or a `name { ... }` block; mem points at the
 * storage of one value (an array element for repeated fields). */
static void print_value(ge_buf *b, const ProtobufCFieldDescriptor *f,
			const void *mem, int lvl)
{
	put_indent(b, lvl);
	ge_buf_adds(b, f->name);
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const ProtobufCMessage *sub = *(ProtobufCMessage *const *)mem;
		ge_buf_adds(b, " {\n");
		if (sub && !print_any(b, sub, lvl + 1))
			print_body(b, sub, lvl + 1);
		put_indent(b, lvl);
		ge_buf_adds(b, "}\n");
		return;
	}
	ge_buf_adds(b, ": ");
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		ge_buf_printf(b, "%" PRId32, *(const int32_t *)mem);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		ge_buf_printf(b, "%" PRIu32, *(const uint32_t *)mem);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		ge_buf_printf(b, "%" PRId64, *(const int64_t *)mem);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		ge_buf_printf(b, "%" PRIu64, *(const uint64_t *)mem);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		put_float(b, *(const float *)mem, 1);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		put_float(b, *(const double *)mem, 0);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		ge_buf_adds(b, *(const protobuf_c_boolean *)mem ? "true" : "false");
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		int32_t v = *(const int32_t *)mem;
		const ProtobufCEnumValue *ev =
			protobuf_c_enum_descriptor_get_value(f->descriptor, v);
		if (ev)
			ge_buf_adds(b, ev->name);
		else
			ge_buf_printf(b, "%" PRId32, v);
		break;
	}
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)mem;
		put_quoted(b, (const uint8_t *)(s ? s : ""), s ? strlen(s) : 0);
		break;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *bd = mem;
		put_quoted(b, bd->data, bd->len);
		break;
	}
	default:
		break;
	}
	ge_buf_addc(b, '\n');
}

static void print_body(ge_buf *b, const ProtobufCMessage *m, int lvl)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	/* TensorFlow writes both halves of a map entry even when one is zero
	 * (`key: 0`); so do we for proto3 scalars, which read back the same.
	 * An absent message value stays absent: `value {}` would add bytes. */
	int entry = ge_pbf_is_map_entry(d);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!ge_pbf_is_present(m, f) &&
		    !(entry && f->label == PROTOBUF_C_LABEL_NONE &&
		      f->type != PROTOBUF_C_TYPE_MESSAGE &&
		      !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)))
			continue;
		const void *mem = CMEMBER(m, f->offset);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = N_REPEATED(m, f);
			size_t sz = ge_pbf_elt_size(f->type);
			const char *arr = *(const char *const *)mem;
			for (size_t k = 0; k < n; k++)
				print_value(b, f, arr + k * sz, lvl);
		} else {
			print_value(b, f, mem, lvl);
		}
	}
	for (unsigned i = 0; i < m->n_unknown_fields; i++) {
		put_indent(b, lvl);
		ge_buf_printf(b, "# unknown field %" PRIu32 " not printed\n",
			      m->unknown_fields[i].tag);
	}
}

void ge_textpb_print(const ProtobufCMessage *msg, ge_buf *out)
{
	if (!print_any(out, msg, 0))
		print_body(out, msg, 0);
	if (!out->data) {
		/* Callers may read the text as a C string even when empty. */
		ge_buf_reserve(out, 0);
		out->data[out->len] = 0;
	}
}
