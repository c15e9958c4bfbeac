/*
 * sstable.h: LevelDB table files ("sorted string tables"), the container of
 * a tensor bundle's .index file.
 *
 * A table is a sequence of blocks (sorted key/value entries with shared-key
 * prefix compression and restart points), a metaindex block, an index block
 * mapping each data block's last key to its position, and a 48-byte footer.
 * Each block is followed by a one-byte type (0 raw, 1 Snappy) and a masked
 * CRC-32C of the block and type.  See doc/checkpoints.md.
 *
 * The reader loads every entry in key order; the writer builds a table in
 * memory from entries added in strictly increasing bytewise key order.
 */
#ifndef GE_SSTABLE_H
#define GE_SSTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

typedef struct ge_sstable_kv {
	const uint8_t *key, *val;  /* key is NUL-terminated (not counted) */
	size_t klen, vlen;
} ge_sstable_kv;

/* The entries of a table, strictly increasing by key.  The table owns the
 * keys and values (in its arena); they stay valid until ge_sstable_free. */
typedef struct ge_sstable {
	ge_sstable_kv *kv;
	size_t n;
	ge_arena arena;
} ge_sstable;

/* Decodes a whole table held in memory.  path only names the file in error
 * messages.  Every block's checksum is verified; a truncated, corrupt or
 * out-of-order table gives GE_EFORMAT, a block compressed with anything but
 * Snappy too.  On failure *t is left empty (and needs no ge_sstable_free). */
int ge_sstable_parse(const char *path, const uint8_t *data, size_t len,
		     ge_sstable *t, ge_error *err);
/* Reads and decodes the file at path (GE_EIO if it cannot be read). */
int ge_sstable_read(const char *path, ge_sstable *t, ge_error *err);
void ge_sstable_free(ge_sstable *t);

/* Table builder.  The defaults are those of TensorFlow's bundle writer:
 * 256 KiB blocks, a restart point every 16 keys, and raw blocks.  (Most
 * TensorFlow builds write raw blocks; with compress set, a block is stored
 * Snappy-compressed when that saves at least an eighth of it, as builds
 * with Snappy do.)  Index keys are shortened as LevelDB does, so a table
 * rebuilt from a TensorFlow table's entries comes out byte for byte the
 * same. */
typedef struct ge_sstable_builder {
	size_t block_size;         /* flush a data block once it reaches this */
	int restart_interval;
	int compress;              /* 0: always raw blocks */
	/* private */
	ge_buf out;                /* the file so far */
	ge_buf block;              /* the data block being filled */
	ge_buf restarts;           /* its restart offsets, uint32 LE each */
	int nrestarts, since_restart;
	ge_buf last;               /* last key added */
	ge_buf index;              /* index block entries, restart every key */
	ge_buf index_restarts;
	int nindex;
	int pending;               /* a flushed block awaits its index entry */
	uint64_t pend_off, pend_size;
	size_t nkeys;
} ge_sstable_builder;

void ge_sstable_builder_init(ge_sstable_builder *b);
/* Adds an entry; GE_EINVAL (and nothing added) if key does not sort
 * strictly after the previous one. */
int ge_sstable_builder_add(ge_sstable_builder *b, const void *key, size_t klen,
			   const void *val, size_t vlen, ge_error *err);
/* Completes the table and hands its bytes to the caller (free them); the
 * builder is released and may be initialised again. */
uint8_t *ge_sstable_builder_finish(ge_sstable_builder *b, size_t *len);
/* Releases a builder without producing a table. */
void ge_sstable_builder_free(ge_sstable_builder *b);

#endif
