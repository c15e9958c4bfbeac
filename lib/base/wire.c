/*
 * wire.c: the protobuf wire walk, finders and encoders (wire.h).
 */
#include "base/wire.h"

#include <string.h>

ge_wire_step ge_wire_step_slow(const uint8_t *p, const uint8_t *end)
{
	ge_wire_step r;
	ge_wire_field *f = &r.f;
	uint64_t tag, v;
	r.ok = 0;
	f->start = p;
	if (ge_read_varint(&p, end, &tag) || (tag >> 3) == 0 ||
	    (tag >> 3) > GE_WIRE_MAX_FIELD)
		return r;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	switch (f->wt) {
	case GE_WT_VARINT:
		f->data = p;
		if (ge_read_varint(&p, end, &v))
			return r;
		f->v = v;
		f->len = (size_t)(p - f->data);
		break;
	case GE_WT_LEN:
		if (ge_read_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return r;
		f->data = p;
		f->len = (size_t)v;
		f->v = v;
		break;
	case GE_WT_I64:
	case GE_WT_I32:
		f->len = f->wt == GE_WT_I64 ? 8 : 4;
		if ((size_t)(end - p) < f->len)
			return r;
		f->data = p;
		f->v = 0;
		for (size_t i = f->len; i-- > 0;)
			f->v = f->v << 8 | p[i];
		break;
	default: /* groups (3, 4) and 6, 7 */
		return r;
	}
	r.ok = 1;
	return r;
}

void ge_wire_why(const ge_wire *w, ge_wire_bad *b)
{
	const uint8_t *p = w->p;
	uint64_t tag, l;
	*b = (ge_wire_bad){0, 0, p, 0};
	if (ge_read_varint(&p, w->end, &tag) || (tag >> 3) == 0 ||
	    (tag >> 3) > GE_WIRE_MAX_FIELD)
		return;
	b->num = (uint32_t)(tag >> 3);
	b->wt = (uint32_t)(tag & 7);
	b->data = p;
	if (b->wt == GE_WT_LEN && !ge_read_varint(&p, w->end, &l)) {
		b->data = p;
		b->len_read = 1;
	}
}

int ge_wire_valid(const uint8_t *p, const uint8_t *end)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		;
	return !w.bad;
}

int ge_wire_skip(const uint8_t **p, const uint8_t *end)
{
	ge_wire w = {*p, end, 0};
	ge_wire_field f;
	if (!ge_wire_next(&w, &f))
		return -1;
	*p = w.p;
	return 0;
}

int ge_skip_field(const uint8_t **p, const uint8_t *end, int wt)
{
	uint64_t v;
	size_t n = wt == GE_WT_I64 ? 8 : 4;
	switch (wt) {
	case GE_WT_VARINT:
		return ge_read_varint(p, end, &v);
	case GE_WT_LEN:
		if (ge_read_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return -1;
		*p += v;
		return 0;
	case GE_WT_I64:
	case GE_WT_I32:
		if ((size_t)(end - *p) < n)
			return -1;
		*p += n;
		return 0;
	default: /* groups (3, 4) are used by no TensorFlow message */
		return -1;
	}
}

int ge_wire_find_len(const uint8_t *p, const uint8_t *end, uint32_t num,
		     const uint8_t **body, size_t *len)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		if (ge_wire_is_len(&f, num)) {
			*body = f.data;
			*len = f.len;
			return 0;
		}
	return -1;
}

int ge_wire_find_varint(const uint8_t *p, const uint8_t *end, uint32_t num,
			uint64_t *v)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		if (f.num == num && f.wt == GE_WT_VARINT) {
			*v = f.v;
			return 0;
		}
	return -1;
}

void ge_wire_entry_slow(const uint8_t *p, const uint8_t *end,
			const char **key, size_t *klen, const uint8_t **val,
			size_t *vlen)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	*key = "";
	*klen = 0;
	*val = (const uint8_t *)"";
	*vlen = 0;
	while (ge_wire_next(&w, &f)) {
		if (f.wt != GE_WT_LEN)
			continue;
		if (f.num == GE_MAPENTRY_KEY) {
			*key = (const char *)f.data;
			*klen = f.len;
		} else if (f.num == GE_MAPENTRY_VALUE) {
			*val = f.data;
			*vlen = f.len;
		}
	}
}

void ge_wire_peek_str(const uint8_t *p, const uint8_t *end, uint32_t num,
		      char *out, size_t cap)
{
	uint64_t tag, l;
	if (!cap)
		return;
	out[0] = 0;
	/* not ge_wire_next: the bytes may end inside the string */
	if (ge_read_varint(&p, end, &tag) || tag != GE_TAG_LEN(num) ||
	    ge_read_varint(&p, end, &l))
		return;
	if (l > (uint64_t)(end - p))
		l = (uint64_t)(end - p);
	if (l >= cap)
		l = cap - 1;
	memcpy(out, p, l);
	out[l] = 0;
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
}

void ge_wire_buf_entry(ge_buf *b, uint32_t num, const void *key, size_t kl,
		       const void *val, size_t vl)
{
	size_t n = ge_wire_entry_size(num, kl, vl);
	ge_buf_reserve(b, n);
	uint8_t *e = ge_wire_put_entry(b->data + b->len, num, key, kl, val,
				       vl);
	b->len = (size_t)(e - b->data);
	b->data[b->len] = 0;
}
