/*
 * textpb.h: the protobuf text format, for any message protobuf-c knows,
 * driven by its descriptors alone (no generated code is needed here).
 *
 * The dialect is the one TensorFlow reads and writes (.pbtxt files):
 * `name: value` for scalars, `name { ... }` (or `< ... >`) for messages,
 * one line per element of a repeated field, map fields as repeated entry
 * messages with `key` and `value`, enums by name, C-escaped strings, and
 * google.protobuf.Any in the expanded form `[type.googleapis.com/X] {...}`
 * for the types made known with ge_textpb_register.
 */
#ifndef GE_TEXTPB_H
#define GE_TEXTPB_H

#include <protobuf-c/protobuf-c.h>

#include "base/base.h"

/* Messages nested deeper than this are refused by the parser, so hostile
 * input cannot exhaust the stack. */
#define GE_TEXTPB_MAX_DEPTH 100

/*
 * Parses text-format `text` (len bytes, need not be NUL-terminated) as a
 * message of type desc.  On success returns GE_OK and *out is a message
 * allocated with protobuf-c's default allocator; the caller frees it with
 * protobuf_c_message_free_unpacked(*out, NULL).  On failure returns
 * GE_EFORMAT, sets *out to NULL, frees everything it allocated, and err
 * reads "<name>:<line>:<col>: <what>" (line and column 1-based, the column
 * counted in bytes).
 *
 * A non-repeated field given twice, or two members of one oneof, is an
 * error, as in TensorFlow's parser.  Map fields keep the order of the text,
 * duplicate keys included.  String fields cannot hold NUL bytes in
 * protobuf-c, so a string field whose value contains one is an error;
 * bytes fields can.  Floats are read with strtod in the C locale's syntax.
 */
int ge_textpb_parse(const char *text, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err);

/*
 * Appends the text format of msg to out: fields in the order of the
 * descriptor (protoc-c sorts them by field number, which is also the order
 * TensorFlow prints), two spaces of indentation per level, only the fields
 * that protobuf-c would serialize.  Floats use the shortest form that reads
 * back to the same bits.  An Any whose type is registered and whose value
 * decodes and re-encodes to the same bytes is printed expanded; any other
 * Any prints as its type_url and value.  Map entries print their key and
 * value even when zero, as TensorFlow does.  Unknown fields (kept by
 * protobuf-c from binary input) cannot be written as text; each is noted by
 * a `# unknown field N not printed` comment line instead.
 *
 * Deterministic: the same message always gives the same bytes, and the
 * output parses back (ge_textpb_parse) to a message with the same binary
 * encoding, unknown fields aside.
 */
void ge_textpb_print(const ProtobufCMessage *msg, ge_buf *out);

/*
 * Makes a message type known for google.protobuf.Any expansion: an Any whose
 * type_url ends in "/<desc->name>" (for instance
 * "type.googleapis.com/tensorflow.AssetFileDef") is printed and parsed in
 * the expanded form.  Registering the same descriptor twice is harmless.
 * The registry is process-wide and not thread-safe; register at start-up.
 */
void ge_textpb_register(const ProtobufCMessageDescriptor *desc);

/* The registered descriptor whose full name is `name` (length n), or NULL. */
const ProtobufCMessageDescriptor *ge_textpb_lookup(const char *name, size_t n);

#endif
