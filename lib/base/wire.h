/*
 * wire.h: the protobuf wire format of the TensorFlow messages gerewrite
 * reads by hand (base layer).
 *
 * Most of a model's bytes are never decoded: a graph keeps each NodeDef's
 * bytes and reads its fields in place.  Every such read goes through this
 * header: the field numbers are named here once, ge_wire_next steps over
 * a message's fields, and the finders and encoders below are built on it.
 * Code elsewhere in lib/ names fields and tags from here and never walks
 * tags and lengths itself (t/wire-walks.sh checks it).
 *
 * Malformed bytes have one defined answer: ge_wire_next stops, sets the
 * walk's `bad` flag and leaves `p` at the field that is not well formed.
 * A field is well formed when its tag is a varint of a field number from
 * 1 to 2^29 - 1 and wire type 0, 1, 2 or 5 (groups, 3 and 4, are used by
 * no TensorFlow message) and its value lies wholly before the end.
 * Nothing here reads past the end it is given.
 */
#ifndef GE_WIRE_H
#define GE_WIRE_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ numbers */

/* Wire types. */
enum { GE_WT_VARINT = 0, GE_WT_I64 = 1, GE_WT_LEN = 2, GE_WT_I32 = 5 };

/* The tag of field f with wire type wt.  GE_TAG_LEN is the one byte of a
 * length-delimited field below 16. */
#define GE_TAG(f, wt) ((uint32_t)(f) << 3 | (uint32_t)(wt))
#define GE_TAG_LEN(f) GE_TAG(f, GE_WT_LEN)
/* The largest field number. */
#define GE_WIRE_MAX_FIELD 0x1fffffffu

/* GraphDef */
enum { GE_GRAPHDEF_NODE = 1, GE_GRAPHDEF_LIBRARY = 2, GE_GRAPHDEF_VERSION = 3,
       GE_GRAPHDEF_VERSIONS = 4, GE_GRAPHDEF_DEBUG_INFO = 5 };
/* NodeDef */
enum { GE_NODEDEF_NAME = 1, GE_NODEDEF_OP = 2, GE_NODEDEF_INPUT = 3,
       GE_NODEDEF_DEVICE = 4, GE_NODEDEF_ATTR = 5,
       GE_NODEDEF_DEBUG_INFO = 6, GE_NODEDEF_TYPE = 7 };
/* NodeDef.ExperimentalDebugInfo */
enum { GE_DEBUGINFO_NODE_NAMES = 1, GE_DEBUGINFO_FUNC_NAMES = 2 };
/* An entry of a map field (NodeDef.attr, FunctionDef.ret, ...). */
enum { GE_MAPENTRY_KEY = 1, GE_MAPENTRY_VALUE = 2 };
/* FunctionDefLibrary */
enum { GE_FLIB_FUNCTION = 1, GE_FLIB_GRADIENT = 2,
       GE_FLIB_REGISTERED_GRADIENTS = 3 };
/* GradientDef */
enum { GE_GRADIENTDEF_FUNCTION_NAME = 1, GE_GRADIENTDEF_GRADIENT_FUNC = 2 };
/* FunctionDef */
enum { GE_FUNCDEF_SIGNATURE = 1, GE_FUNCDEF_NODE_DEF = 3, GE_FUNCDEF_RET = 4,
       GE_FUNCDEF_ATTR = 5, GE_FUNCDEF_CONTROL_RET = 6,
       GE_FUNCDEF_ARG_ATTR = 7, GE_FUNCDEF_RESOURCE_ARG_UNIQUE_ID = 8 };
/* OpDef (a FunctionDef's signature) and its ArgDef */
enum { GE_OPDEF_NAME = 1, GE_OPDEF_INPUT_ARG = 2, GE_OPDEF_OUTPUT_ARG = 3,
       GE_OPDEF_ATTR = 4, GE_OPDEF_CONTROL_OUTPUT = 20 };
enum { GE_ARGDEF_NAME = 1, GE_ARGDEF_TYPE = 3, GE_ARGDEF_TYPE_ATTR = 4,
       GE_ARGDEF_NUMBER_ATTR = 5, GE_ARGDEF_TYPE_LIST_ATTR = 6 };
/* AttrValue */
enum { GE_ATTR_LIST = 1, GE_ATTR_S = 2, GE_ATTR_I = 3, GE_ATTR_F = 4,
       GE_ATTR_B = 5, GE_ATTR_TYPE = 6, GE_ATTR_SHAPE = 7,
       GE_ATTR_TENSOR = 8, GE_ATTR_PLACEHOLDER = 9, GE_ATTR_FUNC = 10 };
/* AttrValue.ListValue */
enum { GE_ATTRLIST_S = 2, GE_ATTRLIST_I = 3, GE_ATTRLIST_F = 4,
       GE_ATTRLIST_B = 5, GE_ATTRLIST_TYPE = 6, GE_ATTRLIST_SHAPE = 7,
       GE_ATTRLIST_TENSOR = 8, GE_ATTRLIST_FUNC = 9 };
/* NameAttrList */
enum { GE_NAMEATTRLIST_NAME = 1, GE_NAMEATTRLIST_ATTR = 2 };
/* TensorProto */
enum { GE_TENSOR_DTYPE = 1, GE_TENSOR_SHAPE = 2, GE_TENSOR_VERSION = 3,
       GE_TENSOR_CONTENT = 4, GE_TENSOR_FLOAT_VAL = 5,
       GE_TENSOR_DOUBLE_VAL = 6, GE_TENSOR_INT_VAL = 7,
       GE_TENSOR_STRING_VAL = 8, GE_TENSOR_SCOMPLEX_VAL = 9,
       GE_TENSOR_INT64_VAL = 10, GE_TENSOR_BOOL_VAL = 11,
       GE_TENSOR_DCOMPLEX_VAL = 12, GE_TENSOR_HALF_VAL = 13,
       GE_TENSOR_RESOURCE_HANDLE_VAL = 14, GE_TENSOR_VARIANT_VAL = 15,
       GE_TENSOR_UINT32_VAL = 16, GE_TENSOR_UINT64_VAL = 17 };
/* TensorShapeProto and its Dim */
enum { GE_SHAPE_DIM = 2, GE_SHAPE_UNKNOWN_RANK = 3 };
enum { GE_DIM_SIZE = 1, GE_DIM_NAME = 2 };

/* ------------------------------------------------------------ the walk */

/* The walk is inlined into every loop over fields: called, it costs
 * its stores of the field (measured: a tenth more instructions on a
 * save that re-encodes every node). */
#define GE_WIRE_INLINE static inline __attribute__((always_inline))

/* A walk over the fields of message bytes [p, end). */
typedef struct ge_wire {
	const uint8_t *p, *end;
	int bad; /* 1 once a field was not well formed (p at it) */
} ge_wire;

/* One field.  [start, data + len) is the field whole, tag included;
 * data + len is where the next field starts. */
typedef struct ge_wire_field {
	uint32_t num;         /* field number, 1 to GE_WIRE_MAX_FIELD */
	uint32_t wt;          /* wire type: 0, 1, 2 or 5 */
	const uint8_t *start; /* the tag's first byte */
	const uint8_t *data;  /* wire type 2: the payload; else the value's
			       * bytes (varint, or 8 or 4 bytes) */
	size_t len;           /* the bytes at data */
	uint64_t v;           /* wire type 0: the value; 1 and 5: the
			       * little-endian value; 2: len */
} ge_wire_field;

static inline void ge_wire_init(ge_wire *w, const void *p, size_t n)
{
	w->p = p;
	w->end = w->p + n;
	w->bad = 0;
}

static inline ge_wire ge_wire_of(const void *p, size_t n)
{
	ge_wire w;
	ge_wire_init(&w, p, n);
	return w;
}

/* The field at p (< end) read the long way: ok 0 when it is not well
 * formed.  Returned by value, so that a walk's state and field, whose
 * addresses are never taken, stay in registers. */
typedef struct ge_wire_step {
	ge_wire_field f;
	int ok;
} ge_wire_step;
ge_wire_step ge_wire_step_slow(const uint8_t *p, const uint8_t *end);

/* The next field: 1 with it in *f, 0 at the end or at a field that is
 * not well formed (then w->bad is set and w->p stays at that field).
 * A tag and a value (or length) of one byte each, most fields of a graph,
 * and a one-byte tag with a two-byte length are read inline. */
GE_WIRE_INLINE int ge_wire_next(ge_wire *w, ge_wire_field *f)
{
	const uint8_t *p = w->p;
	if (w->end - p >= 2 && !((p[0] | p[1]) & 0x80) && p[0] >= 8) {
		uint32_t wt = p[0] & 7u;
		if (wt == GE_WT_VARINT ||
		    (wt == GE_WT_LEN && (size_t)(w->end - p) - 2 >= p[1])) {
			f->num = (uint32_t)p[0] >> 3;
			f->wt = wt;
			f->start = p;
			f->v = p[1];
			f->data = p + (wt == GE_WT_LEN ? 2 : 1);
			f->len = wt == GE_WT_LEN ? p[1] : 1;
			w->p = f->data + f->len;
			return 1;
		}
	}
	/* a one-byte tag and a two-byte length: a node of a GraphDef */
	if (w->end - p >= 3 && (p[0] & 0x87) == GE_WT_LEN && p[0] >= 8 &&
	    (p[1] & 0x80) && !(p[2] & 0x80)) {
		size_t n = (size_t)(p[1] & 0x7f) | (size_t)p[2] << 7;
		if ((size_t)(w->end - p) - 3 >= n) {
			f->num = (uint32_t)p[0] >> 3;
			f->wt = GE_WT_LEN;
			f->start = p;
			f->v = n;
			f->data = p + 3;
			f->len = n;
			w->p = f->data + n;
			return 1;
		}
	}
	if (p >= w->end)
		return 0;
	ge_wire_step r = ge_wire_step_slow(p, w->end);
	if (!r.ok) {
		w->bad = 1;
		return 0;
	}
	*f = r.f;
	w->p = r.f.data + r.f.len;
	return 1;
}

/* What a walk that stopped bad stopped at, for a message about it. */
typedef struct ge_wire_bad {
	uint32_t num;        /* the field number; 0 when the tag does not
			      * read or is out of range */
	uint32_t wt;         /* its wire type */
	const uint8_t *data; /* after the tag, and after the length when
			      * that reads (then len_read is set: the
			      * payload runs past the end) */
	int len_read;
} ge_wire_bad;
void ge_wire_why(const ge_wire *w, ge_wire_bad *b);

/* Whether f is length-delimited field num. */
static inline int ge_wire_is_len(const ge_wire_field *f, uint32_t num)
{
	return f->num == num && f->wt == GE_WT_LEN;
}

/* Whether [p, end) is a message whose every field is well formed (its
 * length-delimited fields are not looked into). */
int ge_wire_valid(const uint8_t *p, const uint8_t *end);

/* Steps over one well-formed field at *p: 0 and *p after it, or -1
 * (*p unchanged). */
int ge_wire_skip(const uint8_t **p, const uint8_t *end);

/* Skips the value of a field of wire type wt whose tag was read, at *p:
 * 0 and *p after it, or -1 (a wire type that is not 0, 1, 2 or 5, a value
 * past the end).  For readers outside lib/ that take tags apart
 * themselves (tests reading the bytes independently). */
int ge_skip_field(const uint8_t **p, const uint8_t *end, int wt);

/* ------------------------------------------------------------ finders */

/* The first length-delimited field `num` of message bytes [p, end): 0 and
 * its payload, or -1 when it is not there or the bytes are malformed
 * before it. */
int ge_wire_find_len(const uint8_t *p, const uint8_t *end, uint32_t num,
		     const uint8_t **body, size_t *len);

/* The first varint field `num`: 0 and its value, or -1 as above. */
int ge_wire_find_varint(const uint8_t *p, const uint8_t *end, uint32_t num,
			uint64_t *v);

/* The key and value of map entry bytes [p, end) ({1: key, 2: value}): a
 * missing key or value reads as empty, of a repeated one the last counts,
 * and reading stops at the first malformed byte. */
void ge_wire_entry_slow(const uint8_t *p, const uint8_t *end,
			const char **key, size_t *klen, const uint8_t **val,
			size_t *vlen);
static inline void ge_wire_entry(const uint8_t *p, size_t n, const char **key,
				 size_t *klen, const uint8_t **val,
				 size_t *vlen)
{
	/* {0a kl key 12 vl value}, one-byte lengths, as TensorFlow writes
	 * small entries */
	if (n >= 4 && p[0] == GE_TAG_LEN(GE_MAPENTRY_KEY) && p[1] < 0x80 &&
	    n >= 4u + p[1]) {
		const uint8_t *v = p + 2 + p[1];
		if (v[0] == GE_TAG_LEN(GE_MAPENTRY_VALUE) && v[1] < 0x80 &&
		    n == 4u + p[1] + v[1]) {
			*key = (const char *)p + 2;
			*klen = p[1];
			*val = v + 2;
			*vlen = v[1];
			return;
		}
	}
	ge_wire_entry_slow(p, p + n, key, klen, val, vlen);
}

/* Steps through the entries of map field `num` of message bytes: 1 and
 * the next entry's key and value (as ge_wire_entry reads them), *pp after
 * it; or 0 at the end or at the first malformed field (*pp is then
 * end). */
static inline int ge_wire_map_next(const uint8_t **pp, const uint8_t *end,
				   uint32_t num, const char **key,
				   size_t *klen, const uint8_t **val,
				   size_t *vlen)
{
	ge_wire w = {*pp, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (f.num != num || f.wt != GE_WT_LEN)
			continue;
		*pp = w.p;
		ge_wire_entry(f.data, f.len, key, klen, val, vlen);
		return 1;
	}
	*pp = end;
	return 0;
}
/* A NodeDef's attr entries (field 5). */
static inline int ge_wire_attr_next(const uint8_t **pp, const uint8_t *end,
				    const char **key, size_t *klen,
				    const uint8_t **val, size_t *vlen)
{
	return ge_wire_map_next(pp, end, GE_NODEDEF_ATTR, key, klen, val,
				vlen);
}

/* The string of length-delimited field `num` when it is the first field
 * of possibly truncated bytes (a NodeDef's name, for a message about
 * bytes that did not parse): at most cap - 1 bytes of it into out, NUL
 * ended, control characters as '?'; "" when the bytes do not start so. */
void ge_wire_peek_str(const uint8_t *p, const uint8_t *end, uint32_t num,
		      char *out, size_t cap);

/* ------------------------------------------------------------ encoders */

/* The bytes of a map entry field `num` {1: key, 2: value} of key kl bytes
 * and value vl bytes, tag and length included. */
static inline size_t ge_wire_entry_size(uint32_t num, size_t kl, size_t vl)
{
	size_t el = 2 + ge_uvarint_size(kl) + kl + ge_uvarint_size(vl) + vl;
	return ge_uvarint_size(GE_TAG_LEN(num)) + ge_uvarint_size(el) + el;
}
/* A length-delimited field at p (room for its tag, length and n bytes);
 * returns the end.  Inline: a save writes one per attr entry, and with
 * num a constant the tag is one store. */
GE_WIRE_INLINE uint8_t *ge_wire_put_len(uint8_t *p, uint32_t num,
					const void *s, size_t n)
{
	p = ge_put_uvarint(p, GE_TAG_LEN(num));
	p = ge_put_uvarint(p, n);
	if (n)
		memcpy(p, s, n);
	return p + n;
}
/* Writes that entry at p, which has room for ge_wire_entry_size bytes;
 * returns the end. */
GE_WIRE_INLINE uint8_t *ge_wire_put_entry(uint8_t *p, uint32_t num,
					  const void *key, size_t kl,
					  const void *val, size_t vl)
{
	size_t el = 2 + ge_uvarint_size(kl) + kl + ge_uvarint_size(vl) + vl;
	p = ge_put_uvarint(p, GE_TAG_LEN(num));
	p = ge_put_uvarint(p, el);
	p = ge_wire_put_len(p, GE_MAPENTRY_KEY, key, kl);
	return ge_wire_put_len(p, GE_MAPENTRY_VALUE, val, vl);
}
/* Appends that entry to b. */
void ge_wire_buf_entry(ge_buf *b, uint32_t num, const void *key, size_t kl,
		       const void *val, size_t vl);

#endif
