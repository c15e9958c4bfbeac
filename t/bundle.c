/*
 * t/bundle.c: CRC-32C, LevelDB tables and tensor bundles on fixtures the
 * test writes itself: round trips, copies under new names, and corrupt
 * files that must give one clear error (never a crash).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* memmem */
#endif
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/bundle.h"
#include "base/crc32c.h"
#include "base/sstable.h"
#include "tap.h"
#include "testutil.h"

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_STRING = 7, DT_INT64 = 9, DT_BOOL = 10,
       DT_HALF = 19 };

static char dir[256];

/* Files in the test directory whose name contains s. */
static int count_files(const char *s)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (dp && (de = readdir(dp)))
		if (strstr(de->d_name, s))
			n++;
	if (dp)
		closedir(dp);
	return n;
}

static void copy_file(const char *from, const char *to)
{
	uint8_t *d;
	size_t n;
	ge_error e;
	if (ge_file_read(from, &d, &n, &e) ||
	    ge_file_write_atomic(to, d, n, &e)) {
		tap_diag("copy %s: %s", from, e.msg);
		exit(1);
	}
	free(d);
}

static void xor_byte(const char *path, long off, int x)
{
	FILE *f = fopen(path, "r+b");
	if (!f)
		return;
	if (off < 0) {
		fseek(f, 0, SEEK_END);
		off += ftell(f);
	}
	fseek(f, off, SEEK_SET);
	int c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ x, f);
	fclose(f);
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* Copies the bundle at prefix from to prefix to. */
static void copy_bundle(const char *from, const char *to)
{
	char a[600], b[600];
	snprintf(a, sizeof a, "%s.index", from);
	snprintf(b, sizeof b, "%s.index", to);
	copy_file(a, b);
	snprintf(a, sizeof a, "%s.data-00000-of-00001", from);
	snprintf(b, sizeof b, "%s.data-00000-of-00001", to);
	copy_file(a, b);
}

static int contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* ------------------------------------------------------------- crc32c */

static void test_crc32c(void)
{
	uint8_t z[32];
	is_int(0xe3069283, ge_crc32c("123456789", 9), "crc32c(123456789)");
	memset(z, 0, sizeof z);
	is_int(0x8a9136aa, ge_crc32c(z, 32), "crc32c of 32 zero bytes");
	memset(z, 0xff, sizeof z);
	is_int(0x62a8ab43, ge_crc32c(z, 32), "crc32c of 32 0xff bytes");
	for (int i = 0; i < 32; i++)
		z[i] = (uint8_t)i;
	is_int(0x46dd794e, ge_crc32c(z, 32), "crc32c of bytes 0..31");
	is_int(0, ge_crc32c("", 0), "crc32c of nothing");

	const char *s = "slicing by eight must agree with a byte at a time";
	size_t n = strlen(s);
	uint32_t whole = ge_crc32c(s, n);
	int split_ok = 1;
	for (size_t k = 0; k <= n; k++)
		for (size_t o = 0; o + k <= n && o < 9; o++) {
			uint32_t c = ge_crc32c(s, o);
			c = ge_crc32c_extend(c, s + o, k);
			c = ge_crc32c_extend(c, s + o + k, n - o - k);
			split_ok &= c == whole;
		}
	ok(split_ok, "crc32c_extend over any split gives the same value");
	int mask_ok = 1;
	for (uint32_t v = 0; v < 1000; v++) {
		uint32_t x = v * 2654435761u;
		mask_ok &= ge_crc32c_unmask(ge_crc32c_mask(x)) == x &&
			   ge_crc32c_mask(x) != x;
	}
	ok(mask_ok, "unmask undoes mask");
	/* The checksum TensorFlow stored for b = 2.0f in the half_plus_two
	 * checkpoints. */
	static const uint8_t two[4] = {0, 0, 0, 0x40};
	is_int(1333329168, ge_crc32c_mask(ge_crc32c(two, 4)),
	       "masked crc32c of 2.0f as TensorFlow stores it");
}

/* ------------------------------------------------------------- sstable */

static void test_sstable(void)
{
	ge_error e;
	for (int compress = 0; compress < 2; compress++) {
		ge_sstable_builder tb;
		ge_sstable_builder_init(&tb);
		tb.block_size = 512;   /* many blocks and restarts */
		tb.compress = compress;
		int rc = 0;
		char key[64], val[128];
		for (int i = 0; i < 2000 && !rc; i++) {
			snprintf(key, sizeof key, "layer_%04d/kernel/%s", i,
				 i % 3 ? "Adam" : "Adam_1");
			memset(val, 'a' + i % 26, sizeof val);
			rc = ge_sstable_builder_add(&tb, key, strlen(key), val,
						    (size_t)(i % 100), &e);
		}
		ok(!rc, "builder takes 2000 sorted keys (compress=%d)",
		   compress);
		rc = ge_sstable_builder_add(&tb, "a", 1, "", 0, &e);
		ok(rc == GE_EINVAL, "builder refuses a key out of order");
		size_t len;
		uint8_t *data = ge_sstable_builder_finish(&tb, &len);
		ge_sstable t;
		rc = ge_sstable_parse("mem", data, len, &t, &e);
		if (!is_int(0, rc, "table reads back (compress=%d)", compress))
			tap_diag("%s", e.msg);
		int same = t.n == 2000;
		for (size_t i = 0; same && i < t.n; i++) {
			snprintf(key, sizeof key, "layer_%04zu/kernel/%s", i,
				 i % 3 ? "Adam" : "Adam_1");
			same = t.kv[i].klen == strlen(key) &&
			       !memcmp(t.kv[i].key, key, t.kv[i].klen) &&
			       t.kv[i].vlen == i % 100 &&
			       (t.kv[i].vlen == 0 ||
				t.kv[i].val[0] == 'a' + i % 26);
		}
		ok(same, "all keys and values come back in order");
		/* Snappy blocks must actually be present when asked for. */
		if (compress) {
			ge_sstable_builder raw;
			ge_sstable_builder_init(&raw);
			raw.block_size = 512;
			for (size_t i = 0; i < t.n; i++)
				ge_sstable_builder_add(&raw, t.kv[i].key,
						       t.kv[i].klen,
						       t.kv[i].val,
						       t.kv[i].vlen, NULL);
			size_t rlen;
			free(ge_sstable_builder_finish(&raw, &rlen));
			ok(len < rlen, "Snappy table is smaller (%zu < %zu)",
			   len, rlen);
		}
		ge_sstable_free(&t);

		/* Every single-byte corruption is either harmless or a clean
		 * error; ASan checks the "never a crash" half. */
		int clean = 1;
		for (size_t i = 0; i < len; i += (len > 4000 ? 7 : 1)) {
			data[i] ^= 0x5a;
			e.msg[0] = 0;
			rc = ge_sstable_parse("mem", data, len, &t, &e);
			if (rc)
				clean &= e.msg[0] && rc == GE_EFORMAT &&
					 !strchr(e.msg, '\n');
			else
				ge_sstable_free(&t);
			data[i] ^= 0x5a;
		}
		ok(clean, "corrupt tables give one-line format errors");
		int trunc = 1;
		for (size_t n = 0; n < len; n += 97) {
			rc = ge_sstable_parse("mem", data, n, &t, &e);
			trunc &= rc == GE_EFORMAT;
		}
		ok(trunc, "truncated tables are refused");
		free(data);
	}

	/* Index keys are shortened the way LevelDB does it. */
	ge_sstable_builder tb;
	ge_sstable_builder_init(&tb);
	ge_sstable_builder_add(&tb, "v/x", 3, "1", 1, &e);
	size_t len;
	uint8_t *data = ge_sstable_builder_finish(&tb, &len);
	/* The index entry: shared 0, 1 key byte, a 2-byte handle, "w",
	 * then the handle of the 15-byte block at offset 0. */
	static const uint8_t want[] = {0, 1, 2, 'w', 0, 15};
	ok(memmem(data, len, want, sizeof want) != NULL,
	   "last index key is the short successor of the last key");
	free(data);
}

/* ------------------------------------------------------------- bundles */

static const float wv[6] = {0.5f, -1.0f, 2.25f, 3.0f, 1e-3f, -7.5f};
static const int64_t stepv = 1234567890123LL;
static const uint8_t maskv[4] = {1, 0, 0, 1};
static const uint16_t halfv[2] = {0x3c00, 0xc000};   /* 1.0, -2.0 */
static const char *strv[3] = {"", "hello", "a\0b"};
static const size_t strl[3] = {0, 5, 3};

static uint32_t string_crc(void)
{
	/* Lengths as uint32 LE, then the masked checksum of those, then the
	 * bytes: the checksum TensorFlow stores for a string tensor. */
	uint32_t c = 0;
	for (int i = 0; i < 3; i++) {
		uint8_t q[4] = {(uint8_t)strl[i], 0, 0, 0};
		c = ge_crc32c_extend(c, q, 4);
	}
	uint32_t m = ge_crc32c_mask(c);
	uint8_t q[4] = {(uint8_t)m, (uint8_t)(m >> 8), (uint8_t)(m >> 16),
			(uint8_t)(m >> 24)};
	c = ge_crc32c_extend(c, q, 4);
	for (int i = 0; i < 3; i++)
		c = ge_crc32c_extend(c, strv[i], strl[i]);
	return ge_crc32c_mask(c);
}

static int write_fixture(const char *prefix)
{
	ge_bundle_writer *w;
	ge_error e;
	int64_t d23[2] = {2, 3}, d4[1] = {4}, d2[1] = {2}, d3[1] = {3},
		d0[2] = {0, 5};
	int rc = ge_bundle_writer_open(prefix, &w, &e);
	if (!is_int(0, rc, "writer opens"))
		return tap_diag("%s", e.msg), rc;
	/* Deliberately not in name order. */
	rc |= ge_bundle_writer_add(w, "w", DT_FLOAT, 2, d23, wv, sizeof wv, &e);
	rc |= ge_bundle_writer_add(w, "step", DT_INT64, 0, NULL, &stepv, 8, &e);
	rc |= ge_bundle_writer_add(w, "mask", DT_BOOL, 1, d4, maskv, 4, &e);
	rc |= ge_bundle_writer_add_strings(w, "names", 1, d3, strv, strl, 3,
					   &e);
	rc |= ge_bundle_writer_add(w, "half", DT_HALF, 1, d2, halfv, 4, &e);
	rc |= ge_bundle_writer_add(w, "empty", DT_FLOAT, 2, d0, NULL, 0, &e);
	if (!is_int(0, rc, "six tensors added"))
		tap_diag("%s", e.msg);

	rc = ge_bundle_writer_add(w, "w", DT_INT32, 0, NULL, "abcd", 4, &e);
	ok(rc == GE_EINVAL && contains(e.msg, "'w'") &&
	   contains(e.msg, "twice"), "a name added twice is refused: %s",
	   e.msg);
	rc = ge_bundle_writer_add(w, "bad", DT_FLOAT, 1, d3, wv, 8, &e);
	ok(rc == GE_EINVAL && contains(e.msg, "'bad'"),
	   "a size that does not fit the shape is refused: %s", e.msg);
	rc = ge_bundle_writer_add(w, "s", DT_STRING, 0, NULL, "x", 1, &e);
	ok(rc == GE_EINVAL, "DT_STRING through the numeric call is refused");
	rc = ge_bundle_writer_add(w, "", DT_FLOAT, 0, NULL, wv, 4, &e);
	ok(rc == GE_EINVAL, "the empty name is refused");
	rc = ge_bundle_writer_add_strings(w, "s2", 1, d2, strv, strl, 3, &e);
	ok(rc == GE_EINVAL, "string count must match the shape");
	int64_t neg[1] = {-1};
	rc = ge_bundle_writer_add(w, "neg", DT_FLOAT, 1, neg, NULL, 0, &e);
	ok(rc == GE_EINVAL, "a negative dimension is refused");

	ok(count_files(".index") == 0, "nothing at the prefix before finish");
	rc = ge_bundle_writer_finish(w, &e);
	if (!is_int(0, rc, "writer finishes"))
		tap_diag("%s", e.msg);
	return rc;
}

static void check_fixture(const char *prefix, const char *pre)
{
	ge_bundle *b;
	ge_error e;
	char nm[64];
	int rc = ge_bundle_open(prefix, &b, &e);
	if (!is_int(0, rc, "%sbundle opens", pre)) {
		tap_diag("%s", e.msg);
		return;
	}
	is_int(6, (long long)ge_bundle_count(b), "%ssix entries", pre);
	is_int(1, ge_bundle_num_shards(b), "%sone shard", pre);
	static const char *order[] = {"empty", "half", "mask", "names", "step",
				      "w"};
	int sorted = 1;
	for (size_t i = 0; i < 6 && i < ge_bundle_count(b); i++) {
		snprintf(nm, sizeof nm, "%s%s", pre, order[i]);
		sorted &= !strcmp(ge_bundle_entry_at(b, i)->name, nm);
	}
	ok(sorted, "%sentries sorted by name", pre);

	snprintf(nm, sizeof nm, "%sw", pre);
	const ge_bundle_entry *x = ge_bundle_find(b, nm);
	ok(x && x->dtype == DT_FLOAT && x->rank == 2 && x->dims[0] == 2 &&
	   x->dims[1] == 3 && x->nelems == 6 && x->size == 24 &&
	   x->shard == 0 && x->nslices == 0,
	   "%sw: float [2,3], 24 bytes", pre);
	if (x) {
		is_int(ge_crc32c_mask(ge_crc32c(wv, sizeof wv)), x->crc32c,
		       "%sw: stored checksum is the masked crc32c", pre);
		uint8_t *d;
		size_t n;
		rc = ge_bundle_read(b, x, &d, &n, &e);
		ok(!rc && n == sizeof wv && !memcmp(d, wv, n),
		   "%sw: bytes read back", pre);
		free(d);
		ge_bundle_string *s;
		rc = ge_bundle_read_strings(b, x, &s, &n, &e);
		ok(rc == GE_EINVAL, "%sread_strings refuses a float", pre);
	}
	snprintf(nm, sizeof nm, "%sstep", pre);
	x = ge_bundle_find(b, nm);
	ok(x && x->dtype == DT_INT64 && x->rank == 0 && x->nelems == 1 &&
	   x->size == 8, "%sstep: int64 scalar", pre);
	if (x) {
		uint8_t *d;
		size_t n;
		int64_t v = 0;
		rc = ge_bundle_read(b, x, &d, &n, &e);
		if (!rc)
			memcpy(&v, d, 8);
		ok(!rc && v == stepv, "%sstep: value", pre);
		free(d);
	}
	snprintf(nm, sizeof nm, "%smask", pre);
	x = ge_bundle_find(b, nm);
	ok(x && x->dtype == DT_BOOL && x->rank == 1 && x->dims[0] == 4 &&
	   x->size == 4, "%smask: bool [4]", pre);
	snprintf(nm, sizeof nm, "%shalf", pre);
	x = ge_bundle_find(b, nm);
	if (ok(x && x->dtype == DT_HALF && x->size == 4, "%shalf: 2 halves",
	       pre)) {
		uint8_t *d;
		size_t n;
		rc = ge_bundle_read(b, x, &d, &n, &e);
		ok(!rc && n == 4 && !memcmp(d, halfv, 4),
		   "%shalf: bytes", pre);
		free(d);
	}
	snprintf(nm, sizeof nm, "%sempty", pre);
	x = ge_bundle_find(b, nm);
	if (ok(x && x->nelems == 0 && x->size == 0 && x->rank == 2,
	       "%sempty: [0,5], no bytes", pre)) {
		uint8_t *d;
		size_t n;
		rc = ge_bundle_read(b, x, &d, &n, &e);
		ok(!rc && n == 0, "%sempty: reads as nothing", pre);
		free(d);
	}
	snprintf(nm, sizeof nm, "%snames", pre);
	x = ge_bundle_find(b, nm);
	ok(x && x->dtype == DT_STRING && x->rank == 1 && x->dims[0] == 3 &&
	   x->size == 3 + 4 + 8, "%snames: string [3], 15 bytes on disk",
	   pre);
	if (x) {
		is_int(string_crc(), x->crc32c,
		       "%snames: checksum covers uint32 lengths", pre);
		ge_bundle_string *s;
		size_t n;
		rc = ge_bundle_read_strings(b, x, &s, &n, &e);
		if (!rc)
			ok(n == 3 && s[0].len == 0 && !strcmp(s[1].ptr, "hello") &&
			   s[2].len == 3 && !memcmp(s[2].ptr, "a\0b", 3),
			   "%snames: strings decoded", pre);
		else
			ok(0, "%snames: %s", pre, e.msg);
		free(s);
	}
	ok(ge_bundle_find(b, "nope") == NULL, "%sfind of a missing name", pre);
	ge_bundle_close(b);
}

static void test_copy(const char *src_prefix)
{
	ge_bundle *src;
	ge_bundle_writer *w;
	ge_error e;
	char nm[64];
	if (ge_bundle_open(src_prefix, &src, &e)) {
		ok(0, "reopen for copy: %s", e.msg);
		return;
	}
	int rc = ge_bundle_writer_open(path_in(dir, "copy"), &w, &e);
	for (size_t i = 0; !rc && i < ge_bundle_count(src); i++) {
		const ge_bundle_entry *x = ge_bundle_entry_at(src, i);
		snprintf(nm, sizeof nm, "copy/%s", x->name);
		rc = ge_bundle_writer_copy(w, src, x, nm, &e);
	}
	if (!is_int(0, rc, "all entries copied under new names"))
		tap_diag("%s", e.msg);
	rc = ge_bundle_writer_copy(w, src, ge_bundle_entry_at(src, 0),
				   "copy/w", &e);
	ok(rc == GE_EINVAL, "copy onto a taken name is refused");
	rc = ge_bundle_writer_finish(w, &e);
	if (!is_int(0, rc, "copy finishes"))
		tap_diag("%s", e.msg);
	check_fixture(path_in(dir, "copy"), "copy/");

	/* Same entries, same checksums and bytes. */
	ge_bundle *c;
	if (!ge_bundle_open(path_in(dir, "copy"), &c, &e)) {
		int same = ge_bundle_count(c) == ge_bundle_count(src);
		for (size_t i = 0; same && i < ge_bundle_count(c); i++) {
			const ge_bundle_entry *a = ge_bundle_entry_at(src, i);
			const ge_bundle_entry *b = ge_bundle_entry_at(c, i);
			same = a->dtype == b->dtype && a->rank == b->rank &&
			       a->size == b->size && a->crc32c == b->crc32c &&
			       !strcmp(b->name + 5, a->name);
		}
		ok(same, "copies keep dtype, shape, size and checksum");
		ge_bundle_close(c);
	}

	/* Rewriting a bundle in place, from itself. */
	rc = ge_bundle_writer_open(src_prefix, &w, &e);
	for (size_t i = 0; !rc && i < ge_bundle_count(src); i++)
		rc = ge_bundle_writer_copy(w, src, ge_bundle_entry_at(src, i),
					   NULL, &e);
	if (!rc)
		rc = ge_bundle_writer_finish(w, &e);
	if (!is_int(0, rc, "bundle rewritten over itself"))
		tap_diag("%s", e.msg);
	ge_bundle_close(src);
	check_fixture(src_prefix, "");
	ok(count_files(".tmp-") == 0, "no temporary files left behind");

	/* abort leaves nothing. */
	rc = ge_bundle_writer_open(path_in(dir, "aborted"), &w, &e);
	ge_bundle_writer_add(w, "x", DT_FLOAT, 0, NULL, wv, 4, &e);
	ge_bundle_writer_abort(w);
	ok(!rc && count_files("aborted") == 0, "abort leaves no files");
}

static void expect_open_error(const char *prefix, int code,
			      const char *what, const char *must1,
			      const char *must2)
{
	ge_bundle *b;
	ge_error e;
	e.msg[0] = 0;
	int rc = ge_bundle_open(prefix, &b, &e);
	if (!rc)
		ge_bundle_close(b);
	ok(rc == code && contains(e.msg, must1) &&
	   (!must2 || contains(e.msg, must2)) && !strchr(e.msg, '\n'),
	   "%s: %s", what, rc ? e.msg : "(opened!)");
}

static void test_corrupt(const char *good)
{
	char idx[600];
	const char *p = path_in(dir, "bad");
	ge_error e;

	/* A flipped byte inside the data block of the index. */
	copy_bundle(good, p);
	snprintf(idx, sizeof idx, "%s.index", p);
	xor_byte(idx, 20, 0x01);
	expect_open_error(p, GE_EFORMAT, "flipped index byte", idx,
			  "checksum");

	/* A truncated index. */
	copy_bundle(good, p);
	if (truncate(idx, file_size(idx) / 2) == 0)
		expect_open_error(p, GE_EFORMAT, "truncated index", idx,
				  "truncated");
	copy_bundle(good, p);
	if (truncate(idx, 0) == 0)
		expect_open_error(p, GE_EFORMAT, "empty index", idx, NULL);

	/* No index at all. */
	unlink(idx);
	expect_open_error(p, GE_EIO, "missing index", idx, NULL);

	/* A missing data file. */
	copy_bundle(good, p);
	char data[600];
	snprintf(data, sizeof data, "%s.data-00000-of-00001", p);
	unlink(data);
	expect_open_error(p, GE_EIO, "missing data file", data, NULL);

	/* A truncated data file: the last tensor now points past the end. */
	copy_bundle(good, p);
	if (truncate(data, file_size(data) - 2) == 0)
		expect_open_error(p, GE_EFORMAT, "truncated data file", data,
				  "past the end");

	/* A flipped data byte: open succeeds, reading that tensor fails. */
	copy_bundle(good, p);
	ge_bundle *b;
	if (ge_bundle_open(p, &b, &e) == 0) {
		const ge_bundle_entry *w = ge_bundle_find(b, "w");
		const ge_bundle_entry *s = ge_bundle_find(b, "names");
		const ge_bundle_entry *h = ge_bundle_find(b, "half");
		xor_byte(data, (long)w->offset + 5, 0x40);
		xor_byte(data, (long)s->offset + 12, 0x40);
		uint8_t *d;
		size_t n;
		int rc = ge_bundle_read(b, w, &d, &n, &e);
		ok(rc == GE_EFORMAT && contains(e.msg, data) &&
		   contains(e.msg, "'w'") && contains(e.msg, "checksum"),
		   "flipped data byte: %s", e.msg);
		rc = ge_bundle_read(b, s, &d, &n, &e);
		ok(rc == GE_EFORMAT && contains(e.msg, "'names'"),
		   "flipped string byte: %s", e.msg);
		ge_bundle_string *ss;
		rc = ge_bundle_read_strings(b, s, &ss, &n, &e);
		ok(rc == GE_EFORMAT, "read_strings checks the checksum too");
		rc = ge_bundle_read(b, h, &d, &n, &e);
		ok(rc == 0, "other tensors still read");
		free(d);
		/* Damage the string lengths themselves. */
		xor_byte(data, (long)s->offset + 12, 0x40);
		xor_byte(data, (long)s->offset + 1, 0x7f);
		rc = ge_bundle_read_strings(b, s, &ss, &n, &e);
		ok(rc == GE_EFORMAT && contains(e.msg, "'names'"),
		   "bad string lengths: %s", e.msg);
		ge_bundle_close(b);
	} else {
		ok(0, "reopen: %s", e.msg);
	}

	/* Not a table at all. */
	copy_bundle(good, p);
	ge_file_write_atomic(idx, "not a checkpoint\n", 17, &e);
	expect_open_error(p, GE_EFORMAT, "not a table", idx, NULL);

	/* A table without a bundle header. */
	ge_sstable_builder tb;
	ge_sstable_builder_init(&tb);
	ge_sstable_builder_add(&tb, "w", 1, "", 0, &e);
	size_t len;
	uint8_t *t = ge_sstable_builder_finish(&tb, &len);
	ge_file_write_atomic(idx, t, len, &e);
	free(t);
	expect_open_error(p, GE_EFORMAT, "no header", idx, "header");

	/* A header announcing two shards, of which one is missing. */
	static const uint8_t hdr2[] = {0x08, 0x02, 0x1a, 0x02, 0x08, 0x01};
	ge_sstable_builder_init(&tb);
	ge_sstable_builder_add(&tb, "", 0, hdr2, sizeof hdr2, &e);
	t = ge_sstable_builder_finish(&tb, &len);
	ge_file_write_atomic(idx, t, len, &e);
	free(t);
	char d0[600];
	snprintf(d0, sizeof d0, "%s.data-00000-of-00002", p);
	ge_file_write_atomic(d0, "", 0, &e);
	snprintf(d0, sizeof d0, "%s.data-00001-of-00002", p);
	expect_open_error(p, GE_EIO, "missing second shard", d0, NULL);

	/* A header from the future. */
	static const uint8_t hdrv[] = {0x08, 0x01, 0x1a, 0x04, 0x08, 0x05,
				       0x10, 0x05};
	ge_sstable_builder_init(&tb);
	ge_sstable_builder_add(&tb, "", 0, hdrv, sizeof hdrv, &e);
	t = ge_sstable_builder_finish(&tb, &len);
	ge_file_write_atomic(idx, t, len, &e);
	free(t);
	expect_open_error(p, GE_EFORMAT, "newer version", idx, "version");

	/* Every single-byte corruption of the index: a clean error or a
	 * bundle that still reads (bytes with no effect on checksummed data,
	 * e.g. the footer padding). */
	copy_bundle(good, p);
	uint8_t *orig;
	size_t olen;
	ge_file_read(idx, &orig, &olen, &e);
	int clean = 1, refused = 0;
	for (size_t i = 0; i < olen; i++) {
		orig[i] ^= 0x24;
		ge_file_write_atomic(idx, orig, olen, &e);
		orig[i] ^= 0x24;
		e.msg[0] = 0;
		int rc = ge_bundle_open(p, &b, &e);
		if (rc) {
			refused++;
			clean &= rc < 0 && e.msg[0] && !strchr(e.msg, '\n');
		} else {
			for (size_t j = 0; j < ge_bundle_count(b); j++) {
				uint8_t *d;
				size_t n;
				if (!ge_bundle_read(b, ge_bundle_entry_at(b, j),
						    &d, &n, &e))
					free(d);
			}
			ge_bundle_close(b);
		}
	}
	free(orig);
	ok(clean && refused > (int)olen / 2,
	   "each of %zu corrupt indexes refused cleanly or harmless "
	   "(%d refused)", olen, refused);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ge-bundle-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_crc32c();
	test_sstable();
	const char *prefix = path_in(dir, "variables");
	if (write_fixture(prefix) == 0) {
		ok(count_files("variables.index") == 1 &&
		   count_files("variables.data-00000-of-00001") == 1,
		   "finish writes prefix.index and prefix.data-00000-of-00001");
		check_fixture(prefix, "");
		/* The .index path works as well as the prefix. */
		ge_bundle *b;
		ge_error e;
		char ip[600];
		snprintf(ip, sizeof ip, "%s.index", prefix);
		int rc = ge_bundle_open(ip, &b, &e);
		ok(!rc && ge_bundle_count(b) == 6, "open by .index path");
		if (!rc)
			ge_bundle_close(b);
		test_copy(prefix);
		test_corrupt(prefix);
	}
	rm_dir(dir);
	return tap_done();
}
