/*
 * json.h: a small JSON reader for the tests (header only).  Parses a whole
 * document into a tree; objects keep their members in document order.
 * Enough for the corpus' expected-value files, not a general library:
 * no streaming, and errors are reported as one message.
 */
#ifndef GE_TEST_JSON_H
#define GE_TEST_JSON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY,
       JSON_OBJECT };

typedef struct json json;
struct json {
	int type;
	int boolean;
	double num;
	int is_int;               /* the number was written as an integer */
	long long inum;
	char *str;                /* JSON_STRING (NUL-terminated) */
	size_t len;               /* string length or member count */
	json **items;             /* array elements or member values */
	char **keys;              /* object member names */
};

typedef struct json_parser {
	const char *p, *end;
	const char *err;
	const char *err_at;
} json_parser;

static json *json_value(json_parser *ps, int depth);

static void json_ws(json_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static json *json_fail(json_parser *ps, const char *why)
{
	if (!ps->err) {
		ps->err = why;
		ps->err_at = ps->p;
	}
	return NULL;
}

static void json_free(json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->len && j->items; i++) {
		json_free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->str);
	free(j);
}

static void json_put_utf8(char **buf, size_t *n, unsigned cp)
{
	char *b = *buf + *n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		*n += 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		*n += 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		*n += 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		*n += 4;
	}
}

static int json_hex4(json_parser *ps, unsigned *v)
{
	*v = 0;
	if (ps->end - ps->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = *ps->p++;
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* Parses a string at ps->p (on the opening quote) into a malloc'd copy. */
static char *json_string(json_parser *ps, size_t *len)
{
	ps->p++;
	/* Decoding never makes a string longer than its source text (\u
	 * escapes give at most 4 bytes for 6 or 12 characters), so the
	 * distance to the closing quote bounds the output. */
	const char *q = ps->p;
	while (q < ps->end && *q != '"')
		q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
	char *out = malloc((size_t)(q - ps->p) + 1);
	size_t n = 0;
	if (!out)
		abort();
	while (ps->p < ps->end && *ps->p != '"') {
		char c = *ps->p++;
		if ((unsigned char)c < 0x20)
			goto bad;
		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		if (ps->p >= ps->end)
			goto bad;
		c = *ps->p++;
		switch (c) {
		case '"': case '\\': case '/': out[n++] = c; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (json_hex4(ps, &cp))
				goto bad;
			if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 &&
			    ps->p[0] == '\\' && ps->p[1] == 'u') {
				ps->p += 2;
				if (json_hex4(ps, &lo) || lo < 0xdc00 ||
				    lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
			}
			json_put_utf8(&out, &n, cp);
			break;
		}
		default:
			goto bad;
		}
	}
	if (ps->p >= ps->end)
		goto bad;
	ps->p++;
	out[n] = 0;
	*len = n;
	return out;
bad:
	free(out);
	json_fail(ps, "bad string");
	return NULL;
}

static json *json_new(int type)
{
	json *j = calloc(1, sizeof *j);
	if (!j)
		abort();
	j->type = type;
	return j;
}

static void json_push(json *j, char *key, json *v)
{
	j->items = realloc(j->items, (j->len + 1) * sizeof *j->items);
	if (!j->items)
		abort();
	if (j->type == JSON_OBJECT) {
		j->keys = realloc(j->keys, (j->len + 1) * sizeof *j->keys);
		if (!j->keys)
			abort();
		j->keys[j->len] = key;
	}
	j->items[j->len++] = v;
}

static json *json_container(json_parser *ps, int depth, int obj)
{
	json *j = json_new(obj ? JSON_OBJECT : JSON_ARRAY);
	char close = obj ? '}' : ']';
	ps->p++;
	json_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		json_ws(ps);
		if (obj) {
			size_t kl;
			if (ps->p >= ps->end || *ps->p != '"' ||
			    !(key = json_string(ps, &kl)))
				goto bad;
			json_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				goto bad;
			}
			ps->p++;
		}
		json *v = json_value(ps, depth + 1);
		if (!v) {
			free(key);
			goto bad;
		}
		json_push(j, key, v);
		json_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return j;
		}
		goto bad;
	}
bad:
	json_free(j);
	return json_fail(ps, obj ? "bad object" : "bad array");
}

static json *json_value(json_parser *ps, int depth)
{
	json_ws(ps);
	if (ps->p >= ps->end)
		return json_fail(ps, "unexpected end");
	if (depth > 200)
		return json_fail(ps, "nested too deeply");
	char c = *ps->p;
	if (c == '{' || c == '[')
		return json_container(ps, depth, c == '{');
	if (c == '"') {
		size_t n;
		char *s = json_string(ps, &n);
		if (!s)
			return NULL;
		json *j = json_new(JSON_STRING);
		j->str = s;
		j->len = n;
		return j;
	}
	static const struct { const char *w; int type, b; } lit[] = {
		{"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0},
		{"null", JSON_NULL, 0},
	};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(lit[i].w);
		if ((size_t)(ps->end - ps->p) >= n &&
		    memcmp(ps->p, lit[i].w, n) == 0) {
			ps->p += n;
			json *j = json_new(lit[i].type);
			j->boolean = lit[i].b;
			return j;
		}
	}
	/* A number: copy its text so strtod stops where JSON does. */
	const char *s = ps->p;
	int integral = 1;
	while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p)) {
		if (strchr(".eE", *ps->p))
			integral = 0;
		ps->p++;
	}
	size_t n = (size_t)(ps->p - s);
	char tmp[64];
	if (n == 0 || n >= sizeof tmp)
		return json_fail(ps, "unexpected character");
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *e;
	json *j = json_new(JSON_NUMBER);
	j->num = strtod(tmp, &e);
	if (*e) {
		json_free(j);
		return json_fail(ps, "bad number");
	}
	if (integral) {
		j->is_int = 1;
		j->inum = strtoll(tmp, NULL, 10);
	} else {
		j->inum = (long long)j->num;
	}
	return j;
}

/* Parses text[0..n); on error returns NULL and sets *err to a message
 * with the byte offset. */
static json *json_parse(const char *text, size_t n, char *err, size_t errlen)
{
	json_parser ps = {text, text + n, NULL, NULL};
	json *j = json_value(&ps, 0);
	if (j) {
		json_ws(&ps);
		if (ps.p != ps.end) {
			json_free(j);
			j = json_fail(&ps, "trailing garbage");
		}
	}
	if (!j && err)
		snprintf(err, errlen, "%s at byte %zu", ps.err,
			 (size_t)(ps.err_at - text));
	return j;
}

/* The member named key of an object, or NULL. */
static json *json_get(const json *j, const char *key)
{
	if (!j || j->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < j->len; i++)
		if (strcmp(j->keys[i], key) == 0)
			return j->items[i];
	return NULL;
}

#endif
