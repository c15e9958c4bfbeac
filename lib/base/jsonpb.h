/*
 * jsonpb.h: JSON text through Jansson, and protobuf's proto3 JSON mapping
 * between Jansson's values and any message protobuf-c knows, driven by its
 * descriptors alone.
 *
 * Jansson's reader is strict (RFC 8259, UTF-8 checked, no NaN or Infinity
 * literals); on top of it duplicate member names are refused, \u0000 is
 * allowed in strings (bytes fields can hold it) and a leading byte order
 * mark is skipped.  Integers beyond 64 bits must be written as strings, as
 * the mapping writes every 64-bit integer.  Reader errors read
 * "<name>:<line>:<col>: <what>"; mapping errors "<name>: <path>: <what>",
 * the path naming the member at fault ("node[3].attr.T").
 */
#ifndef GE_JSONPB_H
#define GE_JSONPB_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "base/base.h"

/* How deep messages may nest in the mapping, so hostile input cannot
 * exhaust the stack. */
#define GE_JSON_MAX_DEPTH 200

/* Parses len bytes of text (need not be NUL-terminated) into *out (free
 * with json_decref); on failure *out is NULL and the code GE_EFORMAT.
 * name (NULL: "<json>") prefixes error messages. */
int ge_json_load(const char *text, size_t len, const char *name,
		 json_t **out, ge_error *err);
/* Appends v as text: indented by two spaces, ASCII only, with a final
 * newline; the compact form has neither. */
void ge_json_dump(const json_t *v, ge_buf *out);
void ge_json_dump_compact(const json_t *v, ge_buf *out);
/* The value of a number that is an integer ("1e3" and 2.0 are): returns 0
 * and sets *out, or -1 when v is no number, not integral or beyond
 * int64. */
int ge_json_int64(const json_t *v, int64_t *out);
/* "null", "boolean", "number", "string", "array", "object". */
const char *ge_json_type_name(const json_t *v);

/* ---- proto3 JSON mapping ---- */

/* Flags of ge_jsonpb_from_json. */
enum {
	/* Skip members that name no field, and enum names the enum does
	 * not know, instead of failing (protobuf's ignore_unknown_fields). */
	GE_JSONPB_IGNORE_UNKNOWN = 1,
};

/*
 * Parses JSON text as a message of type desc, following protobuf's proto3
 * JSON mapping:
 *   - members named by the lowerCamelCase JSON name of a field or by its
 *     name in the .proto; a field given twice (under either name), or two
 *     members of one oneof, is an error;
 *   - null means the field's default (left unset);
 *   - 32-bit and 64-bit integers as numbers or strings holding numbers
 *     (an exponent or fraction is fine when the value stays integral);
 *   - float and double as numbers, numeric strings, or "NaN",
 *     "Infinity", "-Infinity"; a finite value beyond float's range is an
 *     error for a float field;
 *   - bytes as base64, standard or URL-safe alphabet, padded or not;
 *   - enums by value name or integer;
 *   - repeated fields as arrays; maps (protobuf-c's repeated entry messages
 *     with key 1 and value 2) as objects whose member names are the keys;
 *   - google.protobuf.Any as {"@type": URL, ...fields of the type} for
 *     types registered with ge_textpb_register (textpb.h), wrapper types
 *     (google.protobuf.Int64Value and friends) as their bare value.
 * Strings cannot hold NUL bytes in protobuf-c: a string field given one is
 * an error (bytes fields can).
 *
 * On success *out is allocated with protobuf-c's default allocator: free it
 * with protobuf_c_message_free_unpacked(*out, NULL).  On failure it is NULL,
 * nothing is leaked, the code is GE_EFORMAT and err names the member at
 * fault by its path.
 */
int ge_jsonpb_parse(const char *json, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err);

/* The same mapping from a value of an already parsed document (an object,
 * or the bare value of a wrapper type); flags are GE_JSONPB_* bits. */
int ge_jsonpb_from_json(const json_t *v,
			const ProtobufCMessageDescriptor *desc,
			const char *name, unsigned flags,
			ProtobufCMessage **out, ge_error *err);

/* The message in the proto3 JSON mapping, as protobuf's own printers write
 * it: lowerCamelCase member names, fields at their default left out (but a
 * oneof member that is set), 64-bit integers as strings, bytes as padded
 * base64, enums by name (by number when the name is unknown), floats as
 * the shortest decimal that reads back the same, NaN and infinities as
 * strings, maps as objects.  A new reference. */
json_t *ge_jsonpb_to_json(const ProtobufCMessage *msg);

/* ---- TensorFlow.js graph models (lib/formats/tfjs.c) ---- */

struct ge_graph;

/* What loading a model.json found, beyond the graph itself. */
typedef struct ge_tfjs_info {
	size_t n_weights;     /* entries of weightsManifest */
	size_t n_quantized;   /* of which stored as uint8, uint16 or float16 */
	size_t n_consts;      /* Consts whose value came from a weight */
	size_t n_unused;      /* weights that name no Const (ignored) */
	size_t weight_bytes;  /* bytes read from the weight files */
} ge_tfjs_info;

/* A TensorFlow.js model.json as a graph (ge_parse's tfjs format). */
int ge_tfjs_parse(const uint8_t *data, size_t len, const char *name,
		  struct ge_graph **out, ge_error *err);
/* ge_tfjs_parse, also filling *info (may be NULL) on success.
 * name is the path of the model.json: weight files are read relative to
 * its directory.  A name that starts with '<' ("<string>") has no
 * directory: then every Const must carry its value in the topology. */
int ge_tfjs_parse_info(const uint8_t *data, size_t len, const char *name,
		       struct ge_graph **out, ge_tfjs_info *info,
		       ge_error *err);

#endif
