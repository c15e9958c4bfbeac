/* bundle.c: see bundle.h and doc/checkpoints.md. */
#include "base/bundle.h"
#include "base/bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/sstable.h"
#include "tensorflow/core/framework/types.pb-c.h"
#include "tensorflow/core/protobuf/tensor_bundle.pb-c.h"

#define DT_STRING 7
/* The bundle format version we write and the newest we read. */
#define BUNDLE_VERSION 1
/* More shards than this is not a checkpoint but a corrupt header. */


struct ge_bundle {
	char *index_path;
	int nshards;
	char **shard_paths;
	int *fds;
	uint64_t *shard_sizes;
	ge_sstable table;        /* owns the names and the entry protos */
	ge_bundle_entry *e;
	size_t n;
	ge_arena arena;          /* dims */
};

static const char *dt_names[] = {
	"DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8",
	"DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64",
	"DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
	"DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
	"DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64",
	"DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ",
	"DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ", "DT_INT4", "DT_UINT4",
	"DT_INT2", "DT_UINT2", "DT_FLOAT4_E2M1FN",
};

/* Indexed by DataType; 0 where elements have no fixed byte size. */
static const unsigned char dt_sizes[] = {
	0, 4, 8, 4, 1, 2, 1, 0, 8, 8,      /* .. DT_INT64 */
	1, 1, 1, 4, 2, 2, 2, 2, 16, 2,     /* .. DT_HALF */
	0, 0, 4, 8, 1, 1, 1, 1, 1,         /* .. DT_FLOAT8_E5M2FNUZ */
};

size_t ge_bundle_dtype_size(int dtype)
{
	if (dtype < 0 || (size_t)dtype >= sizeof dt_sizes)
		return 0;
	return dt_sizes[dtype];
}

const char *ge_bundle_dtype_name(int dtype)
{
	if (dtype >= 0 && (size_t)dtype < sizeof dt_names / sizeof *dt_names)
		return dt_names[dtype];
	return NULL;
}

static const char *dtype_str(int dtype)
{
	static _Thread_local char buf[32];
	const char *s = ge_bundle_dtype_name(dtype);
	if (s)
		return s;
	snprintf(buf, sizeof buf, "dtype %d", dtype);
	return buf;
}

/* Element count of a shape; -1 when it overflows. */
static int64_t count_elems(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] && n > INT64_MAX / dims[i])
			return -1;
		n *= dims[i];
	}
	return n;
}

static char *prefix_of(const char *path)
{
	size_t n = strlen(path);
	if (n > 6 && strcmp(path + n - 6, ".index") == 0)
		n -= 6;
	return ge_xstrndup(path, n);
}

static char *shard_name(const char *prefix, int i, int n)
{
	size_t len = strlen(prefix) + 32;
	char *s = ge_xmalloc(len);
	snprintf(s, len, "%s.data-%05d-of-%05d", prefix, i, n);
	return s;
}

/* ------------------------------------------------------------- reading */

static int check_header(ge_bundle *b, const ge_sstable_kv *kv, ge_error *err)
{
	const char *path = b->index_path;
	if (!kv || kv->klen != 0)
		return ge_err(err, GE_EFORMAT,
			      "%s: no bundle header (no entry under the empty "
			      "key): not a tensor bundle", path);
	Tensorflow__BundleHeaderProto *h =
		(Tensorflow__BundleHeaderProto *)ge_pb_unpack(
		&tensorflow__bundle_header_proto__descriptor, kv->vlen,
							kv->val);
	if (!h)
		return ge_err(err, GE_EFORMAT, "%s: corrupt bundle header",
			      path);
	int rc = GE_OK;
	if (h->num_shards < 1 || h->num_shards > GE_MAX_SHARDS) {
		rc = ge_err(err, GE_EFORMAT, "%s: bad shard count %d", path,
			    (int)h->num_shards);
	} else if (h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE) {
		rc = ge_err(err, GE_EFORMAT,
			    "%s: big-endian tensor data is not supported",
			    path);
	} else if (h->version) {
		if (h->version->min_consumer > BUNDLE_VERSION)
			rc = ge_err(err, GE_EFORMAT,
				    "%s: bundle version %d needs a reader of "
				    "version %d or newer (we are %d)", path,
				    (int)h->version->producer,
				    (int)h->version->min_consumer,
				    BUNDLE_VERSION);
		for (size_t i = 0; !rc && i < h->version->n_bad_consumers; i++)
			if (h->version->bad_consumers[i] == BUNDLE_VERSION)
				rc = ge_err(err, GE_EFORMAT,
					    "%s: bundle marks readers of version "
					    "%d as unable to read it", path,
					    BUNDLE_VERSION);
	}
	if (!rc)
		b->nshards = h->num_shards;
	tensorflow__bundle_header_proto__free_unpacked(h, NULL);
	return rc;
}

static int open_shards(ge_bundle *b, const char *prefix, ge_error *err)
{
	b->shard_paths = ge_xcalloc((size_t)b->nshards, sizeof(char *));
	b->fds = ge_xmalloc((size_t)b->nshards * sizeof(int));
	b->shard_sizes = ge_xcalloc((size_t)b->nshards, sizeof(uint64_t));
	for (int i = 0; i < b->nshards; i++)
		b->fds[i] = -1;
	for (int i = 0; i < b->nshards; i++) {
		b->shard_paths[i] = shard_name(prefix, i, b->nshards);
		int fd = open(b->shard_paths[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return ge_err(err, GE_EIO,
				      "%s: cannot open data shard %d of %d: %s",
				      b->shard_paths[i], i, b->nshards,
				      strerror(e));
		}
		b->fds[i] = fd;
		b->shard_sizes[i] = (uint64_t)st.st_size;
	}
	return GE_OK;
}

/* Fills e from its stored proto and checks it against the shards. */
static int load_entry(ge_bundle *b, const ge_sstable_kv *kv,
		      ge_bundle_entry *e, ge_error *err)
{
	const char *path = b->index_path;
	const char *name = (const char *)kv->key;
	Tensorflow__BundleEntryProto *m =
		(Tensorflow__BundleEntryProto *)ge_pb_unpack(
		&tensorflow__bundle_entry_proto__descriptor, kv->vlen, kv->val);
	if (!m)
		return ge_err(err, GE_EFORMAT,
			      "%s: tensor '%s': corrupt index entry", path,
			      name);
	int rc = GE_OK;
	e->name = name;
	e->name_len = kv->klen;
	e->proto = kv->val;
	e->proto_len = kv->vlen;
	e->dtype = (int)m->dtype;
	e->shard = m->shard_id;
	e->crc32c = m->crc32c;
	e->nslices = m->n_slices;
	e->rank = 0;
	e->dims = NULL;
	e->nelems = 1;
	if (m->shape && m->shape->unknown_rank) {
		e->rank = -1;
		e->nelems = -1;
	} else if (m->shape && m->shape->n_dim) {
		if (m->shape->n_dim > 1024) {
			rc = ge_err(err, GE_EFORMAT,
				    "%s: tensor '%s': rank %zu is absurd",
				    path, name, m->shape->n_dim);
			goto out;
		}
		int64_t *d = ge_arena_alloc(&b->arena,
					    m->shape->n_dim * sizeof *d);
		e->rank = (int)m->shape->n_dim;
		for (int i = 0; i < e->rank; i++)
			d[i] = m->shape->dim[i]->size;
		e->dims = d;
		e->nelems = count_elems(e->rank, d);
		if (e->nelems < 0) {
			rc = ge_err(err, GE_EFORMAT,
				    "%s: tensor '%s': bad shape (a negative "
				    "or overflowing dimension)", path, name);
			goto out;
		}
	}
	if (m->offset < 0 || m->size < 0) {
		rc = ge_err(err, GE_EFORMAT,
			    "%s: tensor '%s': negative offset or size", path,
			    name);
		goto out;
	}
	e->offset = (uint64_t)m->offset;
	e->size = (uint64_t)m->size;
	if (e->nslices)
		goto out;   /* no bytes of its own */
	if (e->shard < 0 || e->shard >= b->nshards) {
		rc = ge_err(err, GE_EFORMAT,
			    "%s: tensor '%s': shard %d out of range (the "
			    "bundle has %d)", path, name, e->shard,
			    b->nshards);
		goto out;
	}
	uint64_t have = b->shard_sizes[e->shard];
	if (e->offset > have || e->size > have - e->offset) {
		rc = ge_err(err, GE_EFORMAT,
			    "%s: tensor '%s': bytes %llu..%llu lie past the "
			    "end of the data file (%llu bytes): truncated?",
			    b->shard_paths[e->shard], name,
			    (unsigned long long)e->offset,
			    (unsigned long long)(e->offset + e->size),
			    (unsigned long long)have);
		goto out;
	}
	size_t es = ge_bundle_dtype_size(e->dtype);
	if (es && e->nelems >= 0 &&
	    ((uint64_t)e->nelems > UINT64_MAX / es ||
	     (uint64_t)e->nelems * es != e->size))
		rc = ge_err(err, GE_EFORMAT,
			    "%s: tensor '%s': %llu bytes stored, but %lld "
			    "elements of %s take %llu", path, name,
			    (unsigned long long)e->size,
			    (long long)e->nelems, dtype_str(e->dtype),
			    (unsigned long long)e->nelems * es);
out:
	tensorflow__bundle_entry_proto__free_unpacked(m, NULL);
	return rc;
}

int ge_bundle_open(const char *path, ge_bundle **out, ge_error *err)
{
	*out = NULL;
	ge_bundle *b = ge_xcalloc(1, sizeof *b);
	ge_arena_init(&b->arena);
	char *prefix = prefix_of(path);
	size_t n = strlen(prefix);
	b->index_path = ge_xmalloc(n + 7);
	memcpy(b->index_path, prefix, n);
	memcpy(b->index_path + n, ".index", 7);

	int rc = ge_sstable_read(b->index_path, &b->table, err);
	if (!rc)
		rc = check_header(b, b->table.n ? &b->table.kv[0] : NULL, err);
	if (!rc)
		rc = open_shards(b, prefix, err);
	if (!rc) {
		b->n = b->table.n - 1;
		b->e = ge_xcalloc(b->n ? b->n : 1, sizeof *b->e);
		for (size_t i = 0; !rc && i < b->n; i++)
			rc = load_entry(b, &b->table.kv[i + 1], &b->e[i], err);
	}
	free(prefix);
	if (rc) {
		ge_bundle_close(b);
		return rc;
	}
	*out = b;
	return GE_OK;
}

void ge_bundle_close(ge_bundle *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nshards && b->shard_paths; i++) {
		if (b->fds[i] >= 0)
			close(b->fds[i]);
		free(b->shard_paths[i]);
	}
	free(b->shard_paths);
	free(b->fds);
	free(b->shard_sizes);
	free(b->index_path);
	free(b->e);
	ge_sstable_free(&b->table);
	ge_arena_free(&b->arena);
	free(b);
}

const char *ge_bundle_index_path(const ge_bundle *b)
{
	return b->index_path;
}

int ge_bundle_num_shards(const ge_bundle *b)
{
	return b->nshards;
}

const char *ge_bundle_shard_path(const ge_bundle *b, int i)
{
	return i >= 0 && i < b->nshards ? b->shard_paths[i] : NULL;
}

size_t ge_bundle_count(const ge_bundle *b)
{
	return b->n;
}

const ge_bundle_entry *ge_bundle_entry_at(const ge_bundle *b, size_t i)
{
	return i < b->n ? &b->e[i] : NULL;
}

static int name_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

const ge_bundle_entry *ge_bundle_find(const ge_bundle *b, const char *name)
{
	size_t lo = 0, hi = b->n, nl = strlen(name);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = name_cmp(b->e[mid].name, b->e[mid].name_len, name, nl);
		if (c == 0)
			return &b->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int read_at(int fd, uint8_t *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (r == 0)
			return -1;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static void put_le(uint8_t *q, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		q[i] = (uint8_t)(v >> (8 * i));
}

/* The stored checksum of a string tensor covers each length as a
 * little-endian uint32 (uint64 past 4 GiB), not the varints on disk. */
static uint32_t crc_len(uint32_t crc, uint64_t len)
{
	uint8_t q[8];
	int w = len > UINT32_MAX ? 8 : 4;
	put_le(q, len, w);
	return ge_crc32c_extend(crc, q, (size_t)w);
}

/* Parses the DT_STRING layout: nelems varint lengths, the masked CRC-32C
 * of the lengths (as crc_len counts them), then the bytes back to back.
 * Returns NULL or a static description of what is wrong; on success
 * *body is the offset of the first string byte and *crc the checksum of
 * the whole tensor. */
static const char *parse_strings(const uint8_t *buf, size_t len,
				 int64_t nelems, uint64_t *lens, size_t *body,
				 uint32_t *crc)
{
	const uint8_t *p = buf, *end = buf + len;
	uint32_t c = 0;
	uint64_t total = 0;
	if (nelems < 0)
		return "string tensor of unknown shape";
	if ((uint64_t)nelems > len)
		return "more strings than bytes";
	for (int64_t i = 0; i < nelems; i++) {
		uint64_t l;
		if (ge_read_varint(&p, end, &l))
			return "truncated string lengths";
		if (l > len || total + l > len)
			return "string lengths exceed the tensor size";
		total += l;
		if (lens)
			lens[i] = l;
		c = crc_len(c, l);
	}
	if (end - p < 4)
		return "truncated string lengths";
	uint32_t stored = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			  (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	if (stored != ge_crc32c_mask(c))
		return "checksum of the string lengths does not match";
	c = ge_crc32c_extend(c, p, 4);
	p += 4;
	if ((uint64_t)(end - p) != total)
		return "string lengths do not add up to the tensor size";
	*body = (size_t)(p - buf);
	*crc = ge_crc32c_extend(c, p, total);
	return NULL;
}

int ge_bundle_read(ge_bundle *b, const ge_bundle_entry *e, uint8_t **data,
		   size_t *len, ge_error *err)
{
	*data = NULL;
	*len = 0;
	if (e->nslices)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s' is partitioned into %zu slices "
			      "stored under other keys", b->index_path,
			      e->name, e->nslices);
	const char *path = b->shard_paths[e->shard];
	if (e->size > SIZE_MAX)
		return ge_err(err, GE_EFORMAT, "%s: tensor '%s': too large",
			      path, e->name);
	size_t n = (size_t)e->size;
	uint8_t *buf = ge_xmalloc(n);
	int r = read_at(b->fds[e->shard], buf, n, e->offset);
	if (r) {
		free(buf);
		if (r < 0)
			return ge_err(err, GE_EFORMAT,
				      "%s: tensor '%s': unexpected end of "
				      "file (truncated since opened?)",
				      path, e->name);
		return ge_err(err, GE_EIO, "%s: tensor '%s': %s", path,
			      e->name, strerror(r));
	}
	uint32_t crc;
	if (e->dtype == DT_STRING) {
		size_t body;
		const char *why = parse_strings(buf, n, e->nelems, NULL,
						&body, &crc);
		if (why) {
			free(buf);
			return ge_err(err, GE_EFORMAT, "%s: tensor '%s': %s",
				      path, e->name, why);
		}
	} else {
		crc = ge_crc32c(buf, n);
	}
	if (ge_crc32c_mask(crc) != e->crc32c) {
		free(buf);
		return ge_err(err, GE_EFORMAT,
			      "%s: tensor '%s': checksum mismatch (index says "
			      "%08x, data gives %08x)", path, e->name,
			      e->crc32c, ge_crc32c_mask(crc));
	}
	*data = buf;
	*len = n;
	return GE_OK;
}

int ge_bundle_read_strings(ge_bundle *b, const ge_bundle_entry *e,
			   ge_bundle_string **strs, size_t *n, ge_error *err)
{
	*strs = NULL;
	*n = 0;
	if (e->dtype != DT_STRING)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s' is %s, not DT_STRING",
			      b->index_path, e->name, dtype_str(e->dtype));
	uint8_t *buf;
	size_t len;
	int rc = ge_bundle_read(b, e, &buf, &len, err);
	if (rc)
		return rc;
	/* ge_bundle_read has checked the layout, so nelems <= len and the
	 * lengths add up; parse again to collect them. */
	size_t cnt = (size_t)e->nelems;
	uint64_t *lens = ge_xmalloc((cnt ? cnt : 1) * sizeof *lens);
	size_t body = 0;
	uint32_t crc;
	const char *why = parse_strings(buf, len, e->nelems, lens, &body, &crc);
	if (why) {
		free(lens);
		free(buf);
		return ge_err(err, GE_EFORMAT, "%s: tensor '%s': %s",
			      b->shard_paths[e->shard], e->name, why);
	}
	size_t arr = cnt * sizeof(ge_bundle_string);
	ge_bundle_string *s = ge_xmalloc(arr + (len - body) + cnt + 1);
	char *dst = (char *)s + arr;
	const uint8_t *src = buf + body;
	for (size_t i = 0; i < cnt; i++) {
		memcpy(dst, src, lens[i]);
		dst[lens[i]] = 0;
		s[i].ptr = dst;
		s[i].len = lens[i];
		dst += lens[i] + 1;
		src += lens[i];
	}
	free(lens);
	free(buf);
	*strs = s;
	*n = cnt;
	return GE_OK;
}

/* ------------------------------------------------------------- writing */

typedef struct wentry {
	const char *name;
	size_t name_len;
	const uint8_t *proto;
	size_t proto_len;
} wentry;

struct ge_bundle_writer {
	char *index_path;
	ge_writer data;
	uint64_t off;
	wentry *e;
	size_t n, cap;
	size_t *slots;           /* hash set of names: entry index + 1 */
	size_t nslots;
	ge_arena arena;          /* names and packed protos */
};

int ge_bundle_writer_open(const char *path, ge_bundle_writer **out,
			  ge_error *err)
{
	*out = NULL;
	char *prefix = prefix_of(path);
	char *data = shard_name(prefix, 0, 1);
	ge_bundle_writer *w = ge_xcalloc(1, sizeof *w);
	int rc = ge_writer_open(&w->data, data, err);
	free(data);
	if (rc) {
		free(prefix);
		free(w);
		return rc;
	}
	size_t n = strlen(prefix);
	w->index_path = ge_xmalloc(n + 7);
	memcpy(w->index_path, prefix, n);
	memcpy(w->index_path + n, ".index", 7);
	free(prefix);
	ge_arena_init(&w->arena);
	w->nslots = 64;
	w->slots = ge_xcalloc(w->nslots, sizeof *w->slots);
	*out = w;
	return GE_OK;
}

static void writer_release(ge_bundle_writer *w)
{
	free(w->index_path);
	free(w->e);
	free(w->slots);
	ge_arena_free(&w->arena);
	free(w);
}

void ge_bundle_writer_abort(ge_bundle_writer *w)
{
	if (!w)
		return;
	ge_writer_abort(&w->data);
	writer_release(w);
}

static size_t *slot_for(ge_bundle_writer *w, const char *name, size_t len)
{
	size_t mask = w->nslots - 1;
	size_t i = ge_hash(name, len) & mask;
	while (w->slots[i]) {
		const wentry *e = &w->e[w->slots[i] - 1];
		if (e->name_len == len && memcmp(e->name, name, len) == 0)
			break;
		i = (i + 1) & mask;
	}
	return &w->slots[i];
}

/* Fails if name is taken or unusable, before anything is written. */
static int check_name(ge_bundle_writer *w, const char *name, size_t len,
		      ge_error *err)
{
	if (len == 0)
		return ge_err(err, GE_EINVAL,
			      "%s: a tensor cannot have an empty name (the "
			      "header's key)", w->index_path);
	if (*slot_for(w, name, len))
		return ge_err(err, GE_EINVAL, "%s: tensor '%s' added twice",
			      w->index_path, name);
	return GE_OK;
}

static void record(ge_bundle_writer *w, const char *name, size_t len,
		   const Tensorflow__BundleEntryProto *m)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->e = ge_xrealloc(w->e, w->cap * sizeof *w->e);
	}
	wentry *e = &w->e[w->n++];
	e->name = ge_arena_strndup(&w->arena, name, len);
	e->name_len = len;
	e->proto_len = tensorflow__bundle_entry_proto__get_packed_size(m);
	uint8_t *p = ge_arena_alloc(&w->arena, e->proto_len + 1);
	tensorflow__bundle_entry_proto__pack(m, p);
	e->proto = p;

	if (2 * w->n > w->nslots) {
		free(w->slots);
		w->nslots *= 2;
		w->slots = ge_xcalloc(w->nslots, sizeof *w->slots);
		for (size_t i = 0; i < w->n; i++)
			*slot_for(w, w->e[i].name, w->e[i].name_len) = i + 1;
	} else {
		*slot_for(w, e->name, len) = w->n;
	}
}

static int check_shape(ge_bundle_writer *w, const char *name, int rank,
		       const int64_t *dims, int64_t *nelems, ge_error *err)
{
	if (rank < 0 || rank > 1024 || (rank > 0 && !dims))
		return ge_err(err, GE_EINVAL, "%s: tensor '%s': bad rank %d",
			      w->index_path, name, rank);
	*nelems = count_elems(rank, dims);
	if (*nelems < 0)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': bad shape (a negative or "
			      "overflowing dimension)", w->index_path, name);
	return GE_OK;
}

/* Records an entry for bytes just written at w->off. */
static void add_entry(ge_bundle_writer *w, const char *name, int dtype,
		      int rank, const int64_t *dims, uint64_t size,
		      uint32_t crc)
{
	Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim *dv = NULL, **dp = NULL;
	if (rank > 0) {
		dv = ge_xmalloc((size_t)rank * sizeof *dv);
		dp = ge_xmalloc((size_t)rank * sizeof *dp);
		for (int i = 0; i < rank; i++) {
			Tensorflow__TensorShapeProto__Dim d =
				TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
			d.size = dims[i];
			dv[i] = d;
			dp[i] = &dv[i];
		}
		shape.n_dim = (size_t)rank;
		shape.dim = dp;
	}
	Tensorflow__BundleEntryProto m = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
	m.dtype = (Tensorflow__DataType)dtype;
	m.shape = &shape;
	m.shard_id = 0;
	m.offset = (int64_t)w->off;
	m.size = (int64_t)size;
	m.crc32c = ge_crc32c_mask(crc);
	record(w, name, strlen(name), &m);
	w->off += size;
	free(dv);
	free(dp);
}

int ge_bundle_writer_add(ge_bundle_writer *w, const char *name, int dtype,
			 int rank, const int64_t *dims, const void *data,
			 size_t len, ge_error *err)
{
	int64_t nelems;
	int rc = check_name(w, name, strlen(name), err);
	if (rc)
		return rc;
	if (!ge_bundle_dtype_name(dtype) || dtype == 0)
		return ge_err(err, GE_EINVAL, "%s: tensor '%s': unknown %s",
			      w->index_path, name, dtype_str(dtype));
	if (dtype == DT_STRING)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': DT_STRING tensors are added "
			      "with ge_bundle_writer_add_strings",
			      w->index_path, name);
	rc = check_shape(w, name, rank, dims, &nelems, err);
	if (rc)
		return rc;
	size_t es = ge_bundle_dtype_size(dtype);
	if (es && ((uint64_t)nelems > SIZE_MAX / es ||
		   (size_t)nelems * es != len))
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': %zu bytes given, but %lld "
			      "elements of %s take %llu", w->index_path, name,
			      len, (long long)nelems, dtype_str(dtype),
			      (unsigned long long)nelems * es);
	ge_writer_put(&w->data, data, len);
	add_entry(w, name, dtype, rank, dims, len, ge_crc32c(data, len));
	return GE_OK;
}

int ge_bundle_writer_add_strings(ge_bundle_writer *w, const char *name,
				 int rank, const int64_t *dims,
				 const char *const *strs, const size_t *lens,
				 size_t n, ge_error *err)
{
	int64_t nelems;
	int rc = check_name(w, name, strlen(name), err);
	if (!rc)
		rc = check_shape(w, name, rank, dims, &nelems, err);
	if (rc)
		return rc;
	if ((uint64_t)nelems != n)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': %zu strings given for a shape "
			      "of %lld elements", w->index_path, name, n,
			      (long long)nelems);
	ge_buf head = GE_BUF_INIT;
	uint32_t crc = 0;
	uint64_t size = 0;
	for (size_t i = 0; i < n; i++) {
		ge_buf_varint(&head, lens[i]);
		crc = crc_len(crc, lens[i]);
		size += lens[i];
	}
	uint8_t lc[4];
	put_le(lc, ge_crc32c_mask(crc), 4);
	crc = ge_crc32c_extend(crc, lc, 4);
	ge_buf_add(&head, lc, 4);
	ge_writer_put(&w->data, head.data, head.len);
	size += head.len;
	for (size_t i = 0; i < n; i++) {
		ge_writer_put(&w->data, strs[i], lens[i]);
		crc = ge_crc32c_extend(crc, strs[i], lens[i]);
	}
	ge_buf_free(&head);
	add_entry(w, name, DT_STRING, rank, dims, size, crc);
	return GE_OK;
}

int ge_bundle_writer_copy(ge_bundle_writer *w, ge_bundle *src,
			  const ge_bundle_entry *e, const char *new_name,
			  ge_error *err)
{
	const char *name = new_name ? new_name : e->name;
	size_t nlen = new_name ? strlen(new_name) : e->name_len;
	int rc = check_name(w, name, nlen, err);
	if (rc)
		return rc;
	if (e->nslices && new_name &&
	    name_cmp(name, nlen, e->name, e->name_len) != 0)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s' is partitioned: its slices are "
			      "keyed by its name, so it cannot be renamed",
			      ge_bundle_index_path(src), e->name);
	Tensorflow__BundleEntryProto *m =
		(Tensorflow__BundleEntryProto *)ge_pb_unpack(
		&tensorflow__bundle_entry_proto__descriptor, e->proto_len,
						       e->proto);
	if (!m)   /* ge_bundle_open unpacked it once already */
		return ge_err(err, GE_EFORMAT,
			      "%s: tensor '%s': corrupt index entry",
			      ge_bundle_index_path(src), e->name);
	if (!e->nslices) {
		uint8_t *data;
		size_t len;
		rc = ge_bundle_read(src, e, &data, &len, err);
		if (rc) {
			tensorflow__bundle_entry_proto__free_unpacked(m, NULL);
			return rc;
		}
		ge_writer_put(&w->data, data, len);
		free(data);
		m->shard_id = 0;
		m->offset = (int64_t)w->off;
		w->off += len;
	}
	record(w, name, nlen, m);
	tensorflow__bundle_entry_proto__free_unpacked(m, NULL);
	return GE_OK;
}

static int wentry_cmp(const void *a, const void *b)
{
	const wentry *x = a, *y = b;
	return name_cmp(x->name, x->name_len, y->name, y->name_len);
}

int ge_bundle_writer_finish(ge_bundle_writer *w, ge_error *err)
{
	qsort(w->e, w->n, sizeof *w->e, wentry_cmp);

	Tensorflow__VersionDef v = TENSORFLOW__VERSION_DEF__INIT;
	v.producer = BUNDLE_VERSION;
	Tensorflow__BundleHeaderProto h = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
	h.num_shards = 1;
	h.version = &v;
	uint8_t hb[64];
	size_t hlen = tensorflow__bundle_header_proto__pack(&h, hb);

	ge_sstable_builder tb;
	ge_sstable_builder_init(&tb);
	int rc = ge_sstable_builder_add(&tb, "", 0, hb, hlen, err);
	for (size_t i = 0; !rc && i < w->n; i++)
		rc = ge_sstable_builder_add(&tb, w->e[i].name,
					    w->e[i].name_len, w->e[i].proto,
					    w->e[i].proto_len, err);
	if (rc) {   /* cannot happen: names are unique and non-empty */
		ge_sstable_builder_free(&tb);
		ge_bundle_writer_abort(w);
		return rc;
	}
	size_t ilen;
	uint8_t *index = ge_sstable_builder_finish(&tb, &ilen);

	ge_writer iw;
	rc = ge_writer_open(&iw, w->index_path, err);
	if (rc) {
		free(index);
		ge_bundle_writer_abort(w);
		return rc;
	}
	ge_writer_put(&iw, index, ilen);
	free(index);
	rc = ge_writer_commit(&w->data, err);
	if (rc) {
		ge_writer_abort(&iw);
		writer_release(w);
		return rc;
	}
	rc = ge_writer_commit(&iw, err);
	writer_release(w);
	return rc;
}
