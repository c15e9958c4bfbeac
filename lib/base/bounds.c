/* bounds.c: limits on what an untrusted model can make the program do. */
#include "base/bounds.h"
#include "base/wire.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t max_memory; /* 0: not set by the program */

void ge_set_max_memory(uint64_t bytes)
{
	max_memory = bytes;
}

static int no_verify;

int ge_verify(void)
{
	return !no_verify;
}

void ge_set_verify(int on)
{
	no_verify = !on;
}

int ge_max_memory_given(void)
{
	const char *e = getenv("GEREWRITE_MAX_MEMORY");
	uint64_t v;
	return max_memory || (e && *e && !ge_parse_size(e, &v) && v);
}

uint64_t ge_max_memory(void)
{
	if (max_memory)
		return max_memory;
	const char *e = getenv("GEREWRITE_MAX_MEMORY");
	uint64_t v;
	if (e && *e && !ge_parse_size(e, &v) && v)
		return v;
	return GE_DEFAULT_MAX_MEMORY;
}

static uint64_t max_work; /* 0: not set by the program */

void ge_set_max_work(uint64_t units)
{
	max_work = units;
}

uint64_t ge_max_work(void)
{
	if (max_work)
		return max_work;
	const char *e = getenv("GEREWRITE_MAX_WORK");
	uint64_t v;
	if (e && *e && !ge_parse_size(e, &v) && v)
		return v;
	return GE_DEFAULT_MAX_WORK;
}

int ge_max_work_given(void)
{
	if (max_work)
		return 1;
	const char *e = getenv("GEREWRITE_MAX_WORK");
	uint64_t v;
	return e && *e && !ge_parse_size(e, &v) && v;
}

int ge_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	int shift = 0;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -1;
	}
	/* "512MiB", "512MB" and "512M" mean the same */
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

const char *ge_format_size(uint64_t n, char *buf, size_t cap)
{
	static const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB",
				     "PiB", "EiB"};
	double d = (double)n;
	int u = 0;
	while (d >= 1024 && u < 6) {
		d /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, cap, "%" PRIu64 " bytes", n);
	else
		snprintf(buf, cap, "%.*f %s", d < 10 ? 1 : 0, d, unit[u]);
	return buf;
}

int ge_budget_check(uint64_t bytes, const char *file, const char *what,
		    ge_error *err)
{
	uint64_t max = ge_max_memory();
	if (bytes <= max)
		return GE_OK;
	char a[32], b[32];
	return ge_err(err, GE_EFORMAT,
		      "%s%s%s needs %s, over the memory budget of %s "
		      "(--max-memory, GEREWRITE_MAX_MEMORY)",
		      file ? file : "", file ? ": " : "", what,
		      bytes == UINT64_MAX ? "more than 16 EiB"
					  : ge_format_size(bytes, a, sizeof a),
		      ge_format_size(max, b, sizeof b));
}

uint64_t ge_shape_elems(const int64_t *dims, size_t rank)
{
	uint64_t n = 1;
	for (size_t i = 0; i < rank; i++) {
		uint64_t d = dims[i] > 0 ? (uint64_t)dims[i] : 0;
		if (d && n > UINT64_MAX / d)
			return UINT64_MAX;
		n *= d;
	}
	return n;
}

/* ---- wire walker ---- */

/* A field by number: fields are sorted by number, and in most messages
 * numbered without gaps from the first, so the number is an index. */
static const ProtobufCFieldDescriptor *
field_by_id(const ProtobufCMessageDescriptor *d, unsigned id)
{
	if (d->n_fields) {
		unsigned k = id - d->fields[0].id;
		if (k < d->n_fields && d->fields[k].id == id)
			return &d->fields[k];
	}
	return protobuf_c_message_descriptor_get_field(d, id);
}

static int walk(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		const uint8_t *end, int depth, const char **why)
{
	if (depth < 0) {
		*why = "messages nested too deep";
		return -1;
	}
	ge_wire w = {p, end, 0};
	ge_wire_field x;
	while (ge_wire_next(&w, &x)) {
		if (x.wt != GE_WT_LEN)
			continue;
		const ProtobufCFieldDescriptor *f =
			d ? field_by_id(d, x.num) : NULL;
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    walk(f->descriptor, x.data, x.data + x.len, depth - 1, why))
			return -1;
	}
	if (!w.bad)
		return 0;
	ge_wire_bad b;
	ge_wire_why(&w, &b);
	*why = !b.num ? "bad field tag"
	       : b.wt == 3 || b.wt == 4 || b.wt > 5 ? "bad wire type"
						     : "truncated field";
	return -1;
}

int ge_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		size_t len, int max_depth, const char **why)
{
	const char *w = NULL;
	if (!p && len)
		return -1;
	int rc = p ? walk(d, p, p + len, max_depth, &w) : 0;
	if (why)
		*why = w;
	return rc;
}

ProtobufCMessage *ge_pb_unpack_depth(const ProtobufCMessageDescriptor *d,
				     size_t len, const uint8_t *p, int depth)
{
	static const uint8_t empty[1];
	if (!p)
		p = empty;
	if (ge_pb_check(d, p, len, depth, NULL))
		return NULL;
	return protobuf_c_message_unpack(d, NULL, len, p);
}

ProtobufCMessage *ge_pb_unpack(const ProtobufCMessageDescriptor *d,
			       size_t len, const uint8_t *p)
{
	return ge_pb_unpack_depth(d, len, p, GE_MAX_DEPTH);
}

/* ---- where bytes stop ---- */

struct diag {
	const uint8_t *base;
	char *path;
	size_t cap, len;
	size_t fail_at;
	int failed;
	unsigned mismatch;
};

static void dpush(struct diag *g, const char *fmt, ...) GE_PRINTF(2, 3);
static void dpush(struct diag *g, const char *fmt, ...)
{
	if (g->len >= g->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(g->path + g->len, g->cap - g->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		g->len = g->len + (size_t)n < g->cap ? g->len + (size_t)n
						     : g->cap - 1;
}

/* The string value of field 1 ("name", "key") of message bytes of type
 * d, if it comes first: what a reader calls the node or the entry. */
static void first_name(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		       const uint8_t *end, char *out, size_t cap)
{
	out[0] = 0;
	const ProtobufCFieldDescriptor *f =
		d ? protobuf_c_message_descriptor_get_field(d, 1) : NULL;
	if (!f || f->type != PROTOBUF_C_TYPE_STRING)
		return;
	ge_wire_peek_str(p, end, 1, out, cap);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c >= 0x7f || *c == '\'')
			*c = '?';
}

/* The failure of dwalk at the field starting at fs. */
static void dfail(struct diag *g, const uint8_t *fs)
{
	g->failed = 1;
	g->fail_at = (size_t)(fs - g->base);
}

static void dwalk(struct diag *g, const ProtobufCMessageDescriptor *d,
		  const uint8_t *p, const uint8_t *end, int depth)
{
	unsigned counts[64] = {0};
	size_t mark = g->len;
	ge_wire w = {p, end, 0};
	ge_wire_field x;
	while (!g->failed) {
		const uint8_t *fs = w.p, *body;
		uint32_t num, wt;
		size_t l = 0;
		int whole = ge_wire_next(&w, &x), len_read = 1;
		g->len = mark;
		g->path[mark] = 0;
		if (whole) {
			num = x.num;
			wt = x.wt;
			body = x.data;
			l = x.len;
		} else if (!w.bad) {
			break;
		} else {
			ge_wire_bad b;
			ge_wire_why(&w, &b);
			if (!b.num) {
				dfail(g, fs);
				return;
			}
			num = b.num;
			wt = b.wt;
			body = b.data;
			len_read = b.len_read;
		}
		const ProtobufCFieldDescriptor *f =
			d ? protobuf_c_message_descriptor_get_field(d, num)
			  : NULL;
		if (f) {
			size_t fi = (size_t)(f - d->fields);
			dpush(g, "%s%s", mark ? "." : "", f->name);
			if (f->label == PROTOBUF_C_LABEL_REPEATED) {
				dpush(g, "[%u]", fi < 64 ? counts[fi] : 0);
				if (fi < 64)
					counts[fi]++;
			}
		} else {
			dpush(g, "%sfield %u", mark ? "." : "", (unsigned)num);
		}
		if (!f)
			g->mismatch++;
		else if (wt != GE_WT_LEN &&
			 (f->type == PROTOBUF_C_TYPE_MESSAGE ||
			  f->type == PROTOBUF_C_TYPE_STRING ||
			  f->type == PROTOBUF_C_TYPE_BYTES))
			g->mismatch++;
		if (wt != GE_WT_LEN) {
			if (!whole)
				dfail(g, fs);
			continue;
		}
		if (!len_read) {
			dfail(g, fs);
			return;
		}
		if (!whole) {
			/* cut short: the bytes that are there say where */
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    depth < GE_MAX_DEPTH) {
				char nm[80];
				first_name(f->descriptor, body, end, nm,
					   sizeof nm);
				if (*nm)
					dpush(g, " '%s'", nm);
				dwalk(g, f->descriptor, body, end, depth + 1);
			}
			if (!g->failed)
				dfail(g, fs);
			return;
		}
		if (f && f->label != PROTOBUF_C_LABEL_REPEATED &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE &&
		    f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_BYTES)
			g->mismatch++;
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			char nm[80];
			first_name(f->descriptor, body, body + l, nm, sizeof nm);
			if (*nm)
				dpush(g, " '%s'", nm);
			if (depth >= GE_MAX_DEPTH) {
				dfail(g, fs);
				return;
			}
			dwalk(g, f->descriptor, body, body + l, depth + 1);
			if (g->failed)
				return;
		}
	}
	g->len = mark;
	g->path[mark] = 0;
}

long ge_pb_diagnose(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		    size_t len, char *path, size_t cap, unsigned *mismatch)
{
	struct diag g = {p, path, cap, 0, 0, 0, 0};
	path[0] = 0;
	dwalk(&g, d, p, p + len, 0);
	if (mismatch)
		*mismatch = g.mismatch;
	return g.failed ? (long)g.fail_at : -1;
}
