/* sstable.c: see sstable.h. */
#include "base/sstable.h"
#include "base/bounds.h"

#include <stdlib.h>
#include <string.h>

#include "base/crc32c.h"
#include "base/snappy.h"

#define FOOTER_LEN 48
#define HANDLES_LEN 40          /* two handles, zero-padded */
#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define TRAILER_LEN 5           /* type byte + masked CRC-32C */
#define BLOCK_RAW 0
#define BLOCK_SNAPPY 1

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

/* ------------------------------------------------------------- reading */

typedef struct reader {
	const char *path;
	const uint8_t *data;
	size_t len;             /* file length minus the footer */
	ge_sstable *t;
	size_t cap;
	ge_error *err;
	uint64_t key_bytes;     /* keys rebuilt so far, all entries */
} reader;

static int read_handle(const uint8_t **p, const uint8_t *end, uint64_t *off,
		       uint64_t *size)
{
	return ge_read_varint(p, end, off) || ge_read_varint(p, end, size);
}

/* Checks and (if need be) decompresses the block at off.  On success *blk
 * points either into the file or into *owned, which the caller frees. */
static int load_block(reader *r, const char *what, uint64_t off,
		      uint64_t size, const uint8_t **blk, size_t *blen,
		      uint8_t **owned)
{
	*owned = NULL;
	if (off > r->len || size > r->len - off ||
	    TRAILER_LEN > r->len - off - size)
		return ge_err(r->err, GE_EFORMAT,
			      "%s: %s block (offset %llu, %llu bytes) lies "
			      "outside the file: truncated?", r->path, what,
			      (unsigned long long)off, (unsigned long long)size);
	const uint8_t *p = r->data + off;
	uint8_t type = p[size];
	uint32_t want = ge_crc32c_unmask(get32(p + size + 1));
	uint32_t got = ge_crc32c(p, size + 1);
	if (want != got)
		return ge_err(r->err, GE_EFORMAT,
			      "%s: %s block at offset %llu: checksum mismatch "
			      "(stored %08x, computed %08x)", r->path, what,
			      (unsigned long long)off, want, got);
	if (type == BLOCK_RAW) {
		*blk = p;
		*blen = size;
		return GE_OK;
	}
	if (type != BLOCK_SNAPPY)
		return ge_err(r->err, GE_EFORMAT,
			      "%s: %s block at offset %llu: unknown compression "
			      "type %u", r->path, what,
			      (unsigned long long)off, type);
	const char *why;
	const ge_snappy_fns *sn = ge_snappy(&why);
	if (!sn)
		return ge_err(r->err, GE_EIO,
			      "%s: %s block at offset %llu is Snappy-compressed:"
			      " %s", r->path, what, (unsigned long long)off,
			      why);
	size_t ulen;
	/* Snappy expands at most about 32-fold; a larger claim is a lie that
	 * would only make us allocate wildly. */
	if (sn->uncompressed_length((const char *)p, size, &ulen) !=
	    SNAPPY_OK || ulen / 64 > size)
		goto bad;
	uint8_t *u = ge_xmalloc(ulen);
	if (sn->uncompress((const char *)p, size, (char *)u, &ulen) !=
	    SNAPPY_OK) {
		free(u);
		goto bad;
	}
	*owned = u;
	*blk = u;
	*blen = ulen;
	return GE_OK;
bad:
	return ge_err(r->err, GE_EFORMAT,
		      "%s: %s block at offset %llu: corrupt Snappy data",
		      r->path, what, (unsigned long long)off);
}

typedef int (*entry_fn)(reader *r, const uint8_t *k, size_t kl,
			const uint8_t *v, size_t vl, void *ctx);

/* Walks the entries of one decoded block, rebuilding each key from the
 * shared prefix of the previous one. */
static int walk_block(reader *r, const char *what, uint64_t off,
		      const uint8_t *blk, size_t len, entry_fn fn, void *ctx)
{
	ge_buf key = GE_BUF_INIT;
	int rc = GE_OK;

	if (len < 4)
		goto bad;
	uint32_t nres = get32(blk + len - 4);
	if (nres > (len - 4) / 4)
		goto bad;
	size_t limit = len - 4 - (size_t)nres * 4;
	const uint8_t *res = blk + limit;
	uint32_t ri = 0;
	const uint8_t *p = blk, *end = blk + limit;
	/* Restart offsets must increase and each must start an entry that
	 * shares nothing with its predecessor. */
	while (p < end) {
		size_t at = (size_t)(p - blk);
		uint64_t shared, nonshared, vlen;
		if (ge_read_varint(&p, end, &shared) ||
		    ge_read_varint(&p, end, &nonshared) ||
		    ge_read_varint(&p, end, &vlen))
			goto bad;
		if (shared > key.len || nonshared > (uint64_t)(end - p) ||
		    vlen > (uint64_t)(end - p) - nonshared)
			goto bad;
		if (shared + nonshared > GE_MAX_KEY_LEN) {
			rc = ge_err(r->err, GE_EFORMAT,
				    "%s: %s block at offset %llu: key '%.*s...' "
				    "is longer than %d bytes",
				    r->path, what, (unsigned long long)off,
				    (int)(shared < 64 ? shared : 64),
				    key.data ? (char *)key.data : "",
				    GE_MAX_KEY_LEN);
			goto out;
		}
		if (ri < nres && get32(res + 4 * ri) < at)
			goto bad;
		if (ri < nres && get32(res + 4 * ri) == at) {
			if (shared)
				goto bad;
			ri++;
		} else if (at == 0) {
			goto bad;   /* the first entry is always a restart */
		}
		key.len = shared;
		ge_buf_add(&key, p, nonshared);
		p += nonshared;
		rc = fn(r, key.data ? key.data : (const uint8_t *)"", key.len,
			p, vlen, ctx);
		if (rc)
			goto out;
		p += vlen;
	}
	/* An empty block still carries the restart point 0. */
	if (ri != nres && limit > 0)
		goto bad;
	goto out;
bad:
	rc = ge_err(r->err, GE_EFORMAT,
		    "%s: %s block at offset %llu: corrupt entries",
		    r->path, what, (unsigned long long)off);
out:
	ge_buf_free(&key);
	return rc;
}

static int add_data_entry(reader *r, const uint8_t *k, size_t kl,
			  const uint8_t *v, size_t vl, void *ctx)
{
	ge_sstable *t = r->t;
	(void)ctx;
	/* Keys that each repeat the whole previous one grow as the square
	 * of the entries: what a table of this size may hold is bounded. */
	r->key_bytes += kl + vl;
	if (r->key_bytes > 64 * (uint64_t)r->len + (1u << 20))
		return ge_err(r->err, GE_EFORMAT,
			      "%s: entry %zu ('%.*s'): keys and values expand "
			      "to over 64 times the file's size: not a real "
			      "index",
			      r->path, t->n, (int)(kl < 64 ? kl : 64),
			      (const char *)k);
	if (ge_budget_check(r->key_bytes, r->path, "the index entries",
			    r->err))
		return GE_EFORMAT;
	if (t->n && bytes_cmp(t->kv[t->n - 1].key, t->kv[t->n - 1].klen,
			      k, kl) >= 0)
		return ge_err(r->err, GE_EFORMAT,
			      "%s: keys out of order at entry %zu", r->path,
			      t->n);
	if (t->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		t->kv = ge_xrealloc(t->kv, r->cap * sizeof *t->kv);
	}
	ge_sstable_kv *e = &t->kv[t->n++];
	e->key = (const uint8_t *)ge_arena_strndup(&t->arena,
						   (const char *)k, kl);
	e->klen = kl;
	uint8_t *vv = ge_arena_alloc(&t->arena, vl ? vl : 1);
	memcpy(vv, v, vl);
	e->val = vv;
	e->vlen = vl;
	return GE_OK;
}

typedef struct index_ctx {
	int n;
	ge_buf prev;    /* the previous index key, for the order check */
} index_ctx;

static int index_entry(reader *r, const uint8_t *k, size_t kl,
		       const uint8_t *v, size_t vl, void *ctx)
{
	index_ctx *ic = ctx;
	uint64_t off, size;
	const uint8_t *p = v;
	if (ic->n && bytes_cmp(ic->prev.data, ic->prev.len, k, kl) >= 0)
		return ge_err(r->err, GE_EFORMAT,
			      "%s: index block keys out of order", r->path);
	ic->prev.len = 0;
	ge_buf_add(&ic->prev, k, kl);
	ic->n++;
	if (read_handle(&p, v + vl, &off, &size))
		return ge_err(r->err, GE_EFORMAT,
			      "%s: index block: bad block handle", r->path);
	const uint8_t *blk;
	size_t blen;
	uint8_t *owned;
	int rc = load_block(r, "data", off, size, &blk, &blen, &owned);
	if (rc)
		return rc;
	size_t before = r->t->n;
	rc = walk_block(r, "data", off, blk, blen, add_data_entry, NULL);
	/* The index key bounds its block from above. */
	if (!rc && r->t->n > before) {
		const ge_sstable_kv *last = &r->t->kv[r->t->n - 1];
		if (bytes_cmp(last->key, last->klen, k, kl) > 0)
			rc = ge_err(r->err, GE_EFORMAT,
				    "%s: data block at offset %llu: keys beyond "
				    "its index entry", r->path,
				    (unsigned long long)off);
	}
	free(owned);
	return rc;
}

static int ignore_entry(reader *r, const uint8_t *k, size_t kl,
			const uint8_t *v, size_t vl, void *ctx)
{
	(void)r, (void)k, (void)kl, (void)v, (void)vl, (void)ctx;
	return GE_OK;
}

int ge_sstable_parse(const char *path, const uint8_t *data, size_t len,
		     ge_sstable *t, ge_error *err)
{
	memset(t, 0, sizeof *t);
	ge_arena_init(&t->arena);
	if (len < FOOTER_LEN)
		return ge_err(err, GE_EFORMAT,
			      "%s: %zu bytes: too short for a table (truncated?)",
			      path, len);
	const uint8_t *foot = data + len - FOOTER_LEN;
	uint64_t magic = (uint64_t)get32(foot + HANDLES_LEN) |
			 (uint64_t)get32(foot + HANDLES_LEN + 4) << 32;
	if (magic != TABLE_MAGIC)
		return ge_err(err, GE_EFORMAT,
			      "%s: not a table file (bad magic number at the "
			      "end: truncated?)", path);
	const uint8_t *p = foot, *hend = foot + HANDLES_LEN;
	uint64_t moff, msize, ioff, isize;
	if (read_handle(&p, hend, &moff, &msize) ||
	    read_handle(&p, hend, &ioff, &isize))
		return ge_err(err, GE_EFORMAT, "%s: corrupt footer", path);

	reader r = {path, data, len - FOOTER_LEN, t, 0, err, 0};
	const uint8_t *blk;
	size_t blen;
	uint8_t *owned;
	int rc = load_block(&r, "metaindex", moff, msize, &blk, &blen, &owned);
	if (!rc)
		rc = walk_block(&r, "metaindex", moff, blk, blen, ignore_entry,
				NULL);
	free(owned);
	if (rc)
		return rc;

	index_ctx ic = {0, GE_BUF_INIT};
	rc = load_block(&r, "index", ioff, isize, &blk, &blen, &owned);
	if (!rc)
		rc = walk_block(&r, "index", ioff, blk, blen, index_entry, &ic);
	free(owned);
	ge_buf_free(&ic.prev);
	if (rc)
		ge_sstable_free(t);
	return rc;
}

int ge_sstable_read(const char *path, ge_sstable *t, ge_error *err)
{
	uint8_t *data;
	size_t len;
	memset(t, 0, sizeof *t);
	int rc = ge_file_read(path, &data, &len, err);
	if (rc)
		return rc;
	rc = ge_sstable_parse(path, data, len, t, err);
	free(data);
	return rc;
}

void ge_sstable_free(ge_sstable *t)
{
	free(t->kv);
	ge_arena_free(&t->arena);
	memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------- writing */

void ge_sstable_builder_init(ge_sstable_builder *b)
{
	memset(b, 0, sizeof *b);
	b->block_size = 262144;
	b->restart_interval = 16;
	b->compress = 0;
}

static void put_u32(ge_buf *b, uint32_t v)
{
	uint8_t q[4];
	put32(q, v);
	ge_buf_add(b, q, 4);
}

/* Appends block contents plus trailer to the file, compressing when that
 * pays off by at least an eighth (the rule LevelDB and TensorFlow apply, so
 * our tables match theirs); returns the handle. */
static void emit_block(ge_sstable_builder *b, const uint8_t *raw, size_t n,
		       uint64_t *off, uint64_t *size)
{
	uint8_t *z = NULL;
	const uint8_t *body = raw;
	size_t blen = n;
	uint8_t type = BLOCK_RAW;
	/* without the library, blocks stay raw: a reader takes either */
	const ge_snappy_fns *sn = b->compress ? ge_snappy(NULL) : NULL;
	if (sn) {
		size_t zlen = sn->max_compressed_length(n);
		z = ge_xmalloc(zlen);
		if (sn->compress((const char *)raw, n, (char *)z, &zlen) ==
		    SNAPPY_OK && zlen < n - n / 8) {
			body = z;
			blen = zlen;
			type = BLOCK_SNAPPY;
		}
	}
	*off = b->out.len;
	*size = blen;
	ge_buf_add(&b->out, body, blen);
	uint8_t tr[TRAILER_LEN];
	tr[0] = type;
	uint32_t c = ge_crc32c_extend(ge_crc32c(body, blen), &type, 1);
	put32(tr + 1, ge_crc32c_mask(c));
	ge_buf_add(&b->out, tr, TRAILER_LEN);
	free(z);
}

/* Closes a block: appends the restart array (which always has at least
 * the offset 0) and emits it. */
static void finish_block(ge_sstable_builder *b, ge_buf *blk, ge_buf *res,
			 int nres, uint64_t *off, uint64_t *size)
{
	if (nres == 0) {
		put_u32(res, 0);
		nres = 1;
	}
	ge_buf_add(blk, res->data, res->len);
	put_u32(blk, (uint32_t)nres);
	emit_block(b, blk->data, blk->len, off, size);
	blk->len = 0;
	res->len = 0;
}

static size_t common_prefix(const uint8_t *a, size_t an, const uint8_t *b,
			    size_t bn)
{
	size_t i = 0, n = an < bn ? an : bn;
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

static void block_add(ge_buf *blk, ge_buf *res, int *nres, int *since,
		      int interval, const ge_buf *last, const uint8_t *k,
		      size_t kl, const uint8_t *v, size_t vl)
{
	size_t shared = 0;
	if (*since < interval && blk->len > 0) {
		shared = common_prefix(last->data, last->len, k, kl);
	} else {
		put_u32(res, (uint32_t)blk->len);
		(*nres)++;
		*since = 0;
	}
	ge_buf_varint(blk, shared);
	ge_buf_varint(blk, kl - shared);
	ge_buf_varint(blk, vl);
	ge_buf_add(blk, k + shared, kl - shared);
	ge_buf_add(blk, v, vl);
	(*since)++;
}

/* An index key for a block must sort at or after the block's last key and
 * before the next block's first; shorter keys keep the index small.  We
 * shorten as LevelDB's bytewise comparator does, to write the same files. */
static void separator(ge_buf *k, const uint8_t *next, size_t nlen)
{
	size_t i = common_prefix(k->data, k->len, next, nlen);
	if (i >= k->len || i >= nlen)
		return;   /* one is a prefix of the other */
	uint8_t c = k->data[i];
	if (c < 0xff && c + 1 < next[i]) {
		k->data[i] = c + 1;
		k->len = i + 1;
	}
}

static void successor(ge_buf *k)
{
	for (size_t i = 0; i < k->len; i++) {
		if (k->data[i] != 0xff) {
			k->data[i]++;
			k->len = i + 1;
			return;
		}
	}
}

static void add_index_entry(ge_sstable_builder *b, const ge_buf *key)
{
	ge_buf tmp = GE_BUF_INIT;
	ge_buf_varint(&tmp, b->pend_off);
	ge_buf_varint(&tmp, b->pend_size);
	int since = 1;   /* every index entry is a restart point */
	block_add(&b->index, &b->index_restarts, &b->nindex, &since, 1, key,
		  key->data, key->len, tmp.data, tmp.len);
	ge_buf_free(&tmp);
	b->pending = 0;
}

static void flush_data(ge_sstable_builder *b)
{
	if (b->block.len == 0)
		return;
	finish_block(b, &b->block, &b->restarts, b->nrestarts, &b->pend_off,
		     &b->pend_size);
	b->nrestarts = 0;
	b->since_restart = 0;
	b->pending = 1;
}

int ge_sstable_builder_add(ge_sstable_builder *b, const void *key, size_t klen,
			   const void *val, size_t vlen, ge_error *err)
{
	const uint8_t *k = key;
	if (b->nkeys && bytes_cmp(b->last.data, b->last.len, k, klen) >= 0)
		return ge_err(err, GE_EINVAL,
			      "table keys must be added in increasing order "
			      "(key %zu)", b->nkeys);
	if (b->pending) {
		ge_buf sep = GE_BUF_INIT;
		ge_buf_add(&sep, b->last.data, b->last.len);
		separator(&sep, k, klen);
		add_index_entry(b, &sep);
		ge_buf_free(&sep);
	}
	block_add(&b->block, &b->restarts, &b->nrestarts, &b->since_restart,
		  b->restart_interval, &b->last, k, klen, val, vlen);
	b->last.len = 0;
	ge_buf_add(&b->last, k, klen);
	b->nkeys++;
	if (b->block.len + b->restarts.len + 4 >= b->block_size)
		flush_data(b);
	return GE_OK;
}

uint8_t *ge_sstable_builder_finish(ge_sstable_builder *b, size_t *len)
{
	flush_data(b);
	if (b->pending) {
		ge_buf key = GE_BUF_INIT;
		ge_buf_add(&key, b->last.data, b->last.len);
		successor(&key);
		add_index_entry(b, &key);
		ge_buf_free(&key);
	}
	/* No filters or statistics: the metaindex block is empty. */
	ge_buf meta = GE_BUF_INIT, mres = GE_BUF_INIT;
	uint64_t moff, msize, ioff, isize;
	finish_block(b, &meta, &mres, 0, &moff, &msize);
	finish_block(b, &b->index, &b->index_restarts, b->nindex, &ioff,
		     &isize);
	ge_buf_free(&meta);
	ge_buf_free(&mres);

	ge_buf foot = GE_BUF_INIT;
	ge_buf_varint(&foot, moff);
	ge_buf_varint(&foot, msize);
	ge_buf_varint(&foot, ioff);
	ge_buf_varint(&foot, isize);
	while (foot.len < HANDLES_LEN)
		ge_buf_addc(&foot, 0);
	put_u32(&foot, (uint32_t)TABLE_MAGIC);
	put_u32(&foot, (uint32_t)(TABLE_MAGIC >> 32));
	ge_buf_add(&b->out, foot.data, foot.len);
	ge_buf_free(&foot);

	uint8_t *r = ge_buf_steal(&b->out, len);
	ge_sstable_builder_free(b);
	return r;
}

void ge_sstable_builder_free(ge_sstable_builder *b)
{
	ge_buf_free(&b->out);
	ge_buf_free(&b->block);
	ge_buf_free(&b->restarts);
	ge_buf_free(&b->last);
	ge_buf_free(&b->index);
	ge_buf_free(&b->index_restarts);
	size_t bs = b->block_size;
	int ri = b->restart_interval, c = b->compress;
	memset(b, 0, sizeof *b);
	b->block_size = bs;
	b->restart_interval = ri;
	b->compress = c;
}
