/* pbfield.c: see pbfield.h. */
#include "base/pbfield.h"

#include <stdlib.h>
#include <string.h>

size_t ge_pbf_elt_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	}
	return 0;
}

ProtobufCMessage *ge_pbf_new_message(const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = ge_xmalloc(d->sizeof_message);
	protobuf_c_message_init(d, m);
	return m;
}

int ge_pbf_is_map_entry(const ProtobufCMessageDescriptor *d)
{
	size_t n = strlen(d->short_name);
	return d->n_fields == 2 && n > 5 &&
	       strcmp(d->short_name + n - 5, "Entry") == 0 &&
	       d->fields[0].id == 1 && strcmp(d->fields[0].name, "key") == 0 &&
	       d->fields[1].id == 2 && strcmp(d->fields[1].name, "value") == 0;
}

int ge_pbf_any_fields(const ProtobufCMessageDescriptor *d,
		      const ProtobufCFieldDescriptor **url,
		      const ProtobufCFieldDescriptor **val)
{
	if (strcmp(d->name, "google.protobuf.Any") != 0)
		return 0;
	*url = protobuf_c_message_descriptor_get_field_by_name(d, "type_url");
	*val = protobuf_c_message_descriptor_get_field_by_name(d, "value");
	return *url && *val && (*url)->type == PROTOBUF_C_TYPE_STRING &&
	       (*val)->type == PROTOBUF_C_TYPE_BYTES &&
	       (*url)->label != PROTOBUF_C_LABEL_REPEATED &&
	       (*val)->label != PROTOBUF_C_LABEL_REPEATED;
}

const char *ge_pbf_oneof_rival(const ProtobufCMessage *msg,
			       const ProtobufCFieldDescriptor *f)
{
	if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
		return NULL;
	uint32_t c = *(const uint32_t *)CMEMBER(msg, f->quantifier_offset);
	if (!c || c == f->id)
		return NULL;
	const ProtobufCFieldDescriptor *o =
		protobuf_c_message_descriptor_get_field(msg->descriptor, c);
	return o ? o->name : "?";
}

void ge_pbf_set(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		const ge_pbf_value *v)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		*(uint32_t *)MEMBER(msg, f->quantifier_offset) = f->id;
	else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		 f->type != PROTOBUF_C_TYPE_STRING &&
		 f->type != PROTOBUF_C_TYPE_MESSAGE)
		*(protobuf_c_boolean *)MEMBER(msg, f->quantifier_offset) = 1;
	memcpy(MEMBER(msg, f->offset), v, ge_pbf_elt_size(f->type));
}

void ge_pbf_append(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		   const ge_pbf_value *v)
{
	size_t sz = ge_pbf_elt_size(f->type);
	size_t *n = MEMBER(msg, f->quantifier_offset);
	void **arr = MEMBER(msg, f->offset);
	if ((*n & (*n - 1)) == 0)
		*arr = ge_xrealloc(*arr, (*n ? *n * 2 : 1) * sz);
	memcpy((char *)*arr + *n * sz, v, sz);
	(*n)++;
}

void ge_pbf_store(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		  const ge_pbf_value *v)
{
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		ge_pbf_append(msg, f, v);
	else
		ge_pbf_set(msg, f, v);
}

void ge_pbf_set_any(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *url,
		    const ProtobufCFieldDescriptor *val,
		    ProtobufCMessage *inner, const char *type_url,
		    size_t url_len)
{
	ge_pbf_value v;
	v.bd.len = protobuf_c_message_get_packed_size(inner);
	v.bd.data = NULL;
	if (v.bd.len) {
		v.bd.data = ge_xmalloc(v.bd.len);
		protobuf_c_message_pack(inner, v.bd.data);
	}
	protobuf_c_message_free_unpacked(inner, NULL);
	ge_pbf_set(msg, val, &v);
	v.s = ge_xstrndup(type_url, url_len);
	ge_pbf_set(msg, url, &v);
}

int ge_pbf_hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void ge_pbf_put_utf8(ge_buf *b, uint32_t cp)
{
	uint8_t u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (uint8_t)(0xc0 | (cp >> 6));
		u[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (uint8_t)(0xe0 | (cp >> 12));
		u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (uint8_t)(0xf0 | (cp >> 18));
		u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	ge_buf_add(b, u, n);
}

/* Mirrors protobuf-c's rules for what it serializes, so that printing and
 * packing agree on which fields exist. */
int ge_pbf_is_present(const ProtobufCMessage *m,
		      const ProtobufCFieldDescriptor *f)
{
	const void *mem = CMEMBER(m, f->offset);
	int ptr_type = f->type == PROTOBUF_C_TYPE_STRING ||
		       f->type == PROTOBUF_C_TYPE_MESSAGE;
	if (f->label == PROTOBUF_C_LABEL_REQUIRED)
		return 1;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return *(const size_t *)CMEMBER(m, f->quantifier_offset) != 0;
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		if (*(const uint32_t *)CMEMBER(m, f->quantifier_offset) != f->id)
			return 0;
		if (ptr_type) {
			const void *p = *(const void *const *)mem;
			return p && p != f->default_value;
		}
		return 1;
	}
	if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
		if (ptr_type) {
			const void *p = *(const void *const *)mem;
			return p && p != f->default_value;
		}
		return *(const protobuf_c_boolean *)CMEMBER(m, f->quantifier_offset);
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)mem != 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)mem != 0;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)mem;
		return s && *s;
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)mem)->len != 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(const void *const *)mem != NULL;
	default:
		if (ge_pbf_elt_size(f->type) == 8)
			return *(const uint64_t *)mem != 0;
		return *(const uint32_t *)mem != 0;
	}
}
