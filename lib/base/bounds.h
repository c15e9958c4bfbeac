/*
 * bounds.h: the limits an untrusted model runs into, in one place.
 *
 * A model file is hostile input.  Whatever it declares (nesting, element
 * counts, shapes, key lengths, shard counts) is checked here before the
 * program acts on it, and reaching a limit is an ordinary error that names
 * the file and the node, never an abort.
 */
#ifndef GE_BOUNDS_H
#define GE_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "base/base.h"

/* Nesting of protobuf messages (TensorFlow's own parser stops at 100). */
#define GE_MAX_DEPTH 100
/* A checkpoint index key (a variable name plus slice spec). */
#define GE_MAX_KEY_LEN 65536
/* Data shards of one tensor bundle. */
#define GE_MAX_SHARDS 100000
/* Weight groups and files of one TensorFlow.js model. */
#define GE_MAX_TFJS_FILES 4096

/* Default memory budget: 512 MiB. */
#define GE_DEFAULT_MAX_MEMORY ((uint64_t)512 << 20)

/* The memory budget in bytes: set by ge_set_max_memory, else
 * $GEREWRITE_MAX_MEMORY, else the default. */
uint64_t ge_max_memory(void);
void ge_set_max_memory(uint64_t bytes);
/* Whether the budget was given (--max-memory, GEREWRITE_MAX_MEMORY)
 * rather than the default. */
int ge_max_memory_given(void);
/* Parses "512M", "2G", "1048576", "64k": returns 0, or -1 if malformed. */
int ge_parse_size(const char *s, uint64_t *out);
/* "512 MiB", "3.2 GiB": into buf. */
const char *ge_format_size(uint64_t n, char *buf, size_t cap);

/* Default work budget of one computation (a fold, an eval): 2^34 units,
 * where a unit is one multiply-add or one element touched. */
#define GE_DEFAULT_MAX_WORK ((uint64_t)1 << 34)

/* The work budget: set by ge_set_max_work (--max-work), else
 * $GEREWRITE_MAX_WORK (a count, with k, M or G as for sizes), else the
 * default.  Kernels estimate their work before they run and charge it
 * against this budget (see lib/exec/kernel.h). */
uint64_t ge_max_work(void);
void ge_set_max_work(uint64_t units);
/* Whether the work budget was given (--max-work, GEREWRITE_MAX_WORK)
 * rather than the default. */
int ge_max_work_given(void);

/* GE_OK when bytes fit the budget; else an error "<file>: <what> needs
 * <n>, over the memory budget of <m> (--max-memory,
 * GEREWRITE_MAX_MEMORY)".  what names the node. */
int ge_budget_check(uint64_t bytes, const char *file, const char *what,
		    ge_error *err);

/* Whether saves check the checkpoint they copy (default 1; --no-verify
 * clears it). */
int ge_verify(void);
void ge_set_verify(int on);

/* Elements of a shape (rank dims; negative dims count as 0); UINT64_MAX
 * on overflow. */
uint64_t ge_shape_elems(const int64_t *dims, size_t rank);

/* Walks protobuf wire bytes of message type d without decoding them:
 * checks every wire type, every length and the nesting of sub-messages
 * against max_depth.  Returns 0, or -1 with *why set to a static
 * string. */
int ge_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		size_t len, int max_depth, const char **why);

/* protobuf_c_message_unpack behind ge_pb_check(GE_MAX_DEPTH): NULL for
 * bytes that are malformed or nested too deep.  Every decode of bytes
 * that came from a file goes through here. */
ProtobufCMessage *ge_pb_unpack(const ProtobufCMessageDescriptor *d,
			       size_t len, const uint8_t *p);
/* The same with another nesting limit: a whole SavedModel re-encoded from
 * parts each checked at load nests a few levels deeper than its parts. */
ProtobufCMessage *ge_pb_unpack_depth(const ProtobufCMessageDescriptor *d,
				     size_t len, const uint8_t *p, int depth);

/* Walks bytes of message type d and finds where they stop making sense:
 * returns the byte offset of the first field that is truncated, has a bad
 * tag or nests too deep, with its field path in path
 * ("meta_graphs[0].graph_def.node[8] 'w'.attr[2]"); -1 when the bytes
 * are well formed.  *mismatch counts fields whose wire type or number
 * does not fit d: how unlikely it is that the bytes are a d at all. */
long ge_pb_diagnose(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		    size_t len, char *path, size_t cap, unsigned *mismatch);

#endif
