/*
 * pbfield.h: what the two descriptor-driven readers (textpb.c, jsonpb.c)
 * share: building protobuf-c messages field by field through their
 * descriptors, and two character helpers of their lexers.  Internal to
 * lib/; nothing outside it includes this.
 *
 * The store functions take ownership of what a value points to (string,
 * bytes, sub-message): from then on protobuf_c_message_free_unpacked of the
 * message frees it.  They never fail; memory exhaustion aborts.
 */
#ifndef GE_PBFIELD_H
#define GE_PBFIELD_H

#include <protobuf-c/protobuf-c.h>

#include "base/base.h"

/* One value of a field, as protobuf-c lays it out in a message. */
typedef union ge_pbf_value {
	int32_t i32;
	uint32_t u32;
	int64_t i64;
	uint64_t u64;
	float f;
	double d;
	protobuf_c_boolean b;
	char *s;
	ProtobufCBinaryData bd;
	ProtobufCMessage *m;
} ge_pbf_value;

/* The storage at byte offset off of a message. */
#define MEMBER(msg, off) ((void *)((char *)(msg) + (off)))
#define CMEMBER(msg, off) ((const void *)((const char *)(msg) + (off)))

/* Bytes one value of type t takes in a message or a repeated array. */
size_t ge_pbf_elt_size(ProtobufCType t);

/* A new message of type d with its defaults. */
ProtobufCMessage *ge_pbf_new_message(const ProtobufCMessageDescriptor *d);

/* Whether d is the entry message protoc makes for a map field: protoc-c
 * gives such messages no mark of their own, so this goes by their shape. */
int ge_pbf_is_map_entry(const ProtobufCMessageDescriptor *d);

/* Whether d is google.protobuf.Any, recognised by its full name and the
 * shape of its two fields (so no generated code is needed); if so, *url
 * and *val are its type_url and value fields. */
int ge_pbf_any_fields(const ProtobufCMessageDescriptor *d,
		      const ProtobufCFieldDescriptor **url,
		      const ProtobufCFieldDescriptor **val);

/* The name of the other member of f's oneof that msg already holds, or
 * NULL when f is in no oneof or its oneof is free or holds f itself. */
const char *ge_pbf_oneof_rival(const ProtobufCMessage *msg,
			       const ProtobufCFieldDescriptor *f);

/* Sets non-repeated field f to v, marking it present (oneof case, or the
 * has_ flag of an optional scalar).  What the field held before is not
 * freed: the readers set each field once. */
void ge_pbf_set(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		const ge_pbf_value *v);

/* Appends v to repeated field f.  The array grows to the next power of two
 * whenever the count reaches one, so no capacity has to be kept beside
 * protobuf-c's count; a field is only ever grown by this function. */
void ge_pbf_append(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		   const ge_pbf_value *v);

/* ge_pbf_append for a repeated field, else ge_pbf_set. */
void ge_pbf_store(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		  const ge_pbf_value *v);

/* Fills the Any msg (fields url and val, from ge_pbf_any_fields): packs
 * inner into val and frees it, and sets type_url to the url_len bytes at
 * url. */
void ge_pbf_set_any(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *url,
		    const ProtobufCFieldDescriptor *val,
		    ProtobufCMessage *inner, const char *type_url,
		    size_t url_len);

/* Whether protobuf-c would serialize field f of m (and a printer should
 * show it). */
int ge_pbf_is_present(const ProtobufCMessage *m,
		      const ProtobufCFieldDescriptor *f);
/* The value of hex digit c, or -1. */
int ge_pbf_hex_val(int c);

/* Appends code point cp (at most U+10FFFF, checked by the caller) in
 * UTF-8. */
void ge_pbf_put_utf8(ge_buf *b, uint32_t cp);

#endif
