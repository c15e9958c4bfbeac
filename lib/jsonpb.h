/*
 * jsonpb.h: JSON (RFC 8259) as a tree, and protobuf's proto3 JSON mapping
 * onto any message protobuf-c knows, driven by its descriptors alone.
 *
 * The reader is strict: UTF-8 only (a leading byte order mark is skipped),
 * no comments, no trailing commas, no NaN or Infinity literals, no leading
 * zeros or '+' in numbers, no control characters in strings, no lone
 * surrogates in \u escapes.  Nesting deeper than GE_JSON_MAX_DEPTH is
 * refused, so hostile input cannot exhaust the stack.  Errors read
 * "<name>:<line>:<col>: <what>", line and column 1-based, the column counted
 * in bytes.
 */
#ifndef GE_JSONPB_H
#define GE_JSONPB_H

#include <protobuf-c/protobuf-c.h>

#include "base.h"

#define GE_JSON_MAX_DEPTH 200

typedef enum ge_json_type {
	GE_JSON_NULL,
	GE_JSON_BOOL,
	GE_JSON_NUMBER,
	GE_JSON_STRING,
	GE_JSON_ARRAY,
	GE_JSON_OBJECT,
} ge_json_type;

/* One value.  Everything it points to belongs to its document. */
typedef struct ge_json ge_json;
struct ge_json {
	ge_json_type type;
	int boolean;            /* GE_JSON_BOOL: 0 or 1 */
	uint32_t line, col;     /* where the value starts */
	const char *key;        /* member name (decoded) inside an object,
				   else NULL */
	size_t key_len;
	const char *str;        /* STRING: the decoded UTF-8 (may hold NUL
				   bytes, from \u0000); NUMBER: the text as
				   written.  NUL-terminated either way. */
	size_t len;             /* length of str */
	double num;             /* NUMBER: nearest double (+-HUGE_VAL when
				   beyond double's range) */
	ge_json *kids;          /* ARRAY elements or OBJECT members, in
				   document order (duplicate keys kept) */
	size_t n;               /* number of kids */
};

/* A parsed document: the root value and the memory behind the tree. */
typedef struct ge_json_doc {
	const ge_json *root;
	ge_arena arena;
} ge_json_doc;

/* Parses len bytes of text (need not be NUL-terminated).  On success
 * *out is a document the caller frees with ge_json_free; on failure it is
 * NULL, nothing is leaked, and the code is GE_EFORMAT.  name (NULL:
 * "<json>") prefixes error messages. */
int ge_json_parse(const char *text, size_t len, const char *name,
		  ge_json_doc **out, ge_error *err);
void ge_json_free(ge_json_doc *doc);

/* The first member named key of an object; NULL if v is not an object or
 * has no such member. */
const ge_json *ge_json_get(const ge_json *v, const char *key);
/* The value of a number written as an integer, or with a fraction or
 * exponent that still makes it one exactly ("1e3", "2.0"): returns 0 and
 * sets *out, or -1 when v is no number, not integral or beyond int64. */
int ge_json_int64(const ge_json *v, int64_t *out);
/* "null", "boolean", "number", "string", "array", "object". */
const char *ge_json_type_name(ge_json_type t);

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
 * nothing is leaked, the code is GE_EFORMAT and err reads
 * "<name>:<line>:<col>: <what>", naming the field at fault.
 */
int ge_jsonpb_parse(const char *json, size_t len,
		    const ProtobufCMessageDescriptor *desc, const char *name,
		    ProtobufCMessage **out, ge_error *err);

/* The same mapping from a value of an already parsed document (an object,
 * or the bare value of a wrapper type); flags are GE_JSONPB_* bits. */
int ge_jsonpb_from_json(const ge_json *v,
			const ProtobufCMessageDescriptor *desc,
			const char *name, unsigned flags,
			ProtobufCMessage **out, ge_error *err);

/* ---- TensorFlow.js graph models (lib/tfjs.c) ---- */

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
