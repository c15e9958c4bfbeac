/*
 * bundle.h: TensorFlow tensor bundles, the checkpoint format of SavedModels
 * (variables/variables.index + variables.data-00000-of-00001) and of
 * tf.train checkpoints (model.ckpt.index + model.ckpt.data-*).
 *
 * A bundle is named by its prefix (".../variables/variables"): the file
 * prefix.index is a LevelDB table (see sstable.h) whose entry under the
 * empty key is a BundleHeaderProto and whose other entries are
 * BundleEntryProtos keyed by tensor name; the tensor bytes live in
 * prefix.data-NNNNN-of-MMMMM.  See doc/checkpoints.md.
 *
 * Errors: every function that can fail returns GE_OK or a negative GE_E*
 * code and fills err with one line naming the file and, where there is
 * one, the tensor.  Corrupt or truncated input gives GE_EFORMAT, missing or
 * unreadable files GE_EIO, misuse GE_EINVAL.
 */
#ifndef GE_BUNDLE_H
#define GE_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* An open bundle: its header and entries, and an open descriptor on each
 * data shard (so it reads the files as they were when opened, even if a
 * writer replaces them meanwhile). */
typedef struct ge_bundle ge_bundle;

/* One tensor's metadata, as the index stores it.  Owned by the bundle;
 * valid until ge_bundle_close. */
typedef struct ge_bundle_entry {
	const char *name;        /* NUL-terminated; see name_len */
	size_t name_len;         /* keys of partition slices may hold NULs */
	int dtype;               /* tensorflow.DataType value (DT_FLOAT = 1) */
	int rank;                /* -1 if the shape has unknown rank */
	const int64_t *dims;     /* rank sizes */
	int64_t nelems;          /* product of dims (1 for a scalar) */
	int shard;
	uint64_t offset, size;   /* bytes [offset, offset+size) of the shard */
	uint32_t crc32c;         /* masked CRC-32C, as stored */
	size_t nslices;          /* > 0: a partitioned tensor whose parts are
				    stored under other keys; it has no bytes */
	const uint8_t *proto;    /* the BundleEntryProto as stored, so the */
	size_t proto_len;        /* entry can be written back unchanged */
} ge_bundle_entry;

/* Opens prefix.index (prefix may also be the .index path itself) and
 * checks it: every table block's checksum, the header (little-endian data,
 * a version we can read), every entry (shard in range, its bytes inside
 * that shard's file, the size its dtype and shape imply).  Missing data
 * shards are an error (GE_EIO).  Tensor checksums are verified on read. */
int ge_bundle_open(const char *prefix, ge_bundle **out, ge_error *err);
void ge_bundle_close(ge_bundle *b);

const char *ge_bundle_index_path(const ge_bundle *b);
int ge_bundle_num_shards(const ge_bundle *b);
/* Path of shard i (0 <= i < num_shards); owned by the bundle. */
const char *ge_bundle_shard_path(const ge_bundle *b, int i);

/* The entries, without the header, sorted by name bytewise. */
size_t ge_bundle_count(const ge_bundle *b);
const ge_bundle_entry *ge_bundle_entry_at(const ge_bundle *b, size_t i);
/* NULL if there is no tensor of that name. */
const ge_bundle_entry *ge_bundle_find(const ge_bundle *b, const char *name);

/* Reads a tensor's bytes as stored (numeric types: little-endian elements;
 * DT_STRING: the on-disk encoding, see ge_bundle_read_strings) into a
 * malloc'd buffer the caller frees, and verifies its checksum.  A
 * partitioned tensor (nslices > 0) has no bytes: GE_EINVAL. */
int ge_bundle_read(ge_bundle *b, const ge_bundle_entry *e, uint8_t **data,
		   size_t *len, ge_error *err);

typedef struct ge_bundle_string {
	const char *ptr;         /* NUL-terminated for convenience */
	size_t len;
} ge_bundle_string;

/* Reads a DT_STRING tensor (checking both its checksums) and decodes it
 * into nelems strings.  *strs is one malloc'd block holding the array and
 * the bytes: free(*strs) releases everything. */
int ge_bundle_read_strings(ge_bundle *b, const ge_bundle_entry *e,
			   ge_bundle_string **strs, size_t *n, ge_error *err);

/* Bytes per element of a dtype whose elements have a fixed size, else 0
 * (DT_STRING, DT_RESOURCE, DT_VARIANT, sub-byte and unknown types). */
size_t ge_bundle_dtype_size(int dtype);
/* "DT_FLOAT" etc., or NULL for a value TensorFlow does not define. */
const char *ge_bundle_dtype_name(int dtype);

/* ------------------------------------------------------------- writing */

/* Writes a one-shard bundle: prefix.index and prefix.data-00000-of-00001.
 * Tensor bytes go to a temporary file as they are added; finish writes the
 * index and renames both into place (data first, then the index, so that a
 * reader never finds a new index next to old data).  Until then nothing at
 * prefix changes, and abort leaves no trace.  Data shards of an older
 * bundle with more shards are left alone (the new index does not use
 * them).  Sorting is the writer's job: tensors may be added in any order;
 * a name added twice is GE_EINVAL. */
typedef struct ge_bundle_writer ge_bundle_writer;

int ge_bundle_writer_open(const char *prefix, ge_bundle_writer **out,
			  ge_error *err);
/* A numeric tensor: data holds nelems(dims) elements of dtype as
 * little-endian bytes, so len must be nelems * ge_bundle_dtype_size(dtype)
 * (any len for dtypes without a fixed size, except DT_STRING, which has
 * its own function).  rank 0 is a scalar; dims may then be NULL. */
int ge_bundle_writer_add(ge_bundle_writer *w, const char *name, int dtype,
			 int rank, const int64_t *dims, const void *data,
			 size_t len, ge_error *err);
/* A DT_STRING tensor of n = nelems(dims) strings (lens[i] bytes at
 * strs[i]; they may hold NULs). */
int ge_bundle_writer_add_strings(ge_bundle_writer *w, const char *name,
				 int rank, const int64_t *dims,
				 const char *const *strs, const size_t *lens,
				 size_t n, ge_error *err);
/* Copies entry e of src with its bytes (checksum verified on the way) and
 * everything else it stores unchanged, under new_name, or under its own
 * name if new_name is NULL.  A partitioned tensor can only keep its name
 * (its slices are keyed by it). */
int ge_bundle_writer_copy(ge_bundle_writer *w, ge_bundle *src,
			  const ge_bundle_entry *e, const char *new_name,
			  ge_error *err);
/* Writes the index and puts both files in place.  Always releases w. */
int ge_bundle_writer_finish(ge_bundle_writer *w, ge_error *err);
/* Discards everything written; releases w. */
void ge_bundle_writer_abort(ge_bundle_writer *w);

#endif
