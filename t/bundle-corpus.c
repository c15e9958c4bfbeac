/*
 * t/bundle-corpus.c: every tensor bundle of the corpus (MANIFEST.tsv kind
 * TensorBundle-index) against the expected entries in bundle_values.json:
 * metadata, checksums, decoded values of small tensors; then each
 * checkpoint is rewritten with the writer and must read back the same.
 * One test point per checkpoint; what went wrong goes to diag lines.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "base/bundle.h"
#include "base/jsonpb.h"
#include "tap.h"
#include "testutil.h"

static char tmpdir[256];
static int nfail;            /* diagnostics for the current checkpoint */
static double t_read;        /* seconds spent opening and reading */
static int identical;        /* rewrites byte-identical to the original */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *fmt, ...) GE_PRINTF(1, 2);
static void fail(const char *fmt, ...)
{
	va_list ap;
	char buf[2048];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (nfail++ < 8)
		tap_diag("  %s", buf);
}

/* Compares the decoded elements of a small tensor with the JSON list. */
static void check_values(const ge_bundle_entry *e, const uint8_t *d,
			 size_t n, const json_t *vals)
{
	size_t nv = json_array_size(vals);
	if (!json_is_array(vals) || (int64_t)nv != e->nelems) {
		fail("%s: %zu values listed for %lld elements", e->name,
		     nv, (long long)e->nelems);
		return;
	}
	size_t es = ge_bundle_dtype_size(e->dtype);
	if (!es || n != nv * es) {
		fail("%s: cannot check values of %s", e->name,
		     ge_bundle_dtype_name(e->dtype));
		return;
	}
	for (size_t i = 0; i < nv; i++) {
		const json_t *v = json_array_get(vals, i);
		const uint8_t *p = d + i * es;
		int good;
		float f;
		double g;
		int64_t q = 0;
		switch (e->dtype) {
		case 1:   /* DT_FLOAT: the JSON holds the float widened */
			memcpy(&f, p, 4);
			good = json_is_number(v) &&
			       f == (float)json_number_value(v);
			break;
		case 2:
			memcpy(&g, p, 8);
			good = json_is_number(v) && g == json_number_value(v);
			break;
		case 3: case 9: case 6: case 5: case 4: case 17: case 22:
		case 23: case 10: {
			int sgn = e->dtype == 3 || e->dtype == 9 ||
				  e->dtype == 6 || e->dtype == 5;
			for (size_t k = 0; k < es; k++)
				q |= (int64_t)((uint64_t)p[k] << (8 * k));
			if (sgn && es < 8 && (q >> (8 * es - 1)) & 1)
				q -= (int64_t)1 << (8 * es);
			good = (json_is_integer(v) &&
				json_integer_value(v) == q) ||
			       (json_is_boolean(v) &&
				json_is_true(v) == (q != 0));
			break;
		}
		default:
			fail("%s: no value check for %s", e->name,
			     ge_bundle_dtype_name(e->dtype));
			return;
		}
		if (!good) {
			fail("%s: value %zu differs from the expected %g",
			     e->name, i, json_number_value(v));
			return;
		}
	}
}

static int json_int_is(const json_t *j, long long want)
{
	return json_is_integer(j) && json_integer_value(j) == want;
}

static void check_entry(ge_bundle *b, const char *name, const json_t *spec)
{
	const ge_bundle_entry *e = ge_bundle_find(b, name);
	if (!e) {
		fail("%s: not in the bundle", name);
		return;
	}
	const char *dt = json_string_value(json_object_get(spec, "dtype"));
	const char *dn = ge_bundle_dtype_name(e->dtype);
	if (!dt || !dn || strcmp(dt, dn))
		fail("%s: dtype %s, expected %s", name, dn ? dn : "?",
		     dt ? dt : "?");
	const json_t *sh = json_object_get(spec, "shape");
	int shape_ok = json_is_array(sh) &&
		       (int)json_array_size(sh) == e->rank;
	for (int i = 0; shape_ok && i < e->rank; i++)
		shape_ok = json_int_is(json_array_get(sh, (size_t)i),
				       e->dims[i]);
	if (!shape_ok)
		fail("%s: shape differs (rank %d)", name, e->rank);
	if (!json_int_is(json_object_get(spec, "shard"), e->shard))
		fail("%s: shard %d differs", name, e->shard);
	if (!json_int_is(json_object_get(spec, "offset"),
			 (long long)e->offset))
		fail("%s: offset %llu differs", name,
		     (unsigned long long)e->offset);
	if (!json_int_is(json_object_get(spec, "size"), (long long)e->size))
		fail("%s: size %llu differs", name,
		     (unsigned long long)e->size);
	if (!json_int_is(json_object_get(spec, "crc32c_masked"), e->crc32c))
		fail("%s: crc32c %u differs", name, e->crc32c);
	const json_t *vals = json_object_get(spec, "values");
	if (vals && !e->nslices) {
		uint8_t *d;
		size_t n;
		ge_error err;
		if (ge_bundle_read(b, e, &d, &n, &err)) {
			fail("%s", err.msg);
			return;
		}
		check_values(e, d, n, vals);
		free(d);
	}
}

static int by_position(const void *a, const void *b)
{
	const ge_bundle_entry *x = *(const ge_bundle_entry *const *)a;
	const ge_bundle_entry *y = *(const ge_bundle_entry *const *)b;
	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/* Rewrites b under dir/variables, copying tensors in their order in the
 * data files (which reproduces TensorFlow's layout for one shard), then
 * checks the copy entry by entry and byte by byte. */
static void rewrite(ge_bundle *b, const char *dir)
{
	char prefix[600];
	ge_error err;
	ge_bundle_writer *w;
	snprintf(prefix, sizeof prefix, "%s/variables", dir);
	if (ge_bundle_writer_open(prefix, &w, &err)) {
		fail("%s", err.msg);
		return;
	}
	size_t n = ge_bundle_count(b);
	const ge_bundle_entry **order = ge_xmalloc((n ? n : 1) * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = ge_bundle_entry_at(b, i);
	qsort(order, n, sizeof *order, by_position);
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = ge_bundle_writer_copy(w, b, order[i], NULL, &err);
	free(order);
	if (rc) {
		ge_bundle_writer_abort(w);
		fail("copy: %s", err.msg);
		return;
	}
	if (ge_bundle_writer_finish(w, &err)) {
		fail("finish: %s", err.msg);
		return;
	}
	ge_bundle *c;
	if (ge_bundle_open(prefix, &c, &err)) {
		fail("reopen: %s", err.msg);
		return;
	}
	if (ge_bundle_count(c) != n)
		fail("copy has %zu entries, not %zu", ge_bundle_count(c), n);
	for (size_t i = 0; i < n && i < ge_bundle_count(c); i++) {
		const ge_bundle_entry *x = ge_bundle_entry_at(b, i);
		const ge_bundle_entry *y = ge_bundle_entry_at(c, i);
		int same = x->name_len == y->name_len &&
			   !memcmp(x->name, y->name, x->name_len) &&
			   x->dtype == y->dtype && x->rank == y->rank &&
			   x->size == y->size && x->crc32c == y->crc32c &&
			   x->nslices == y->nslices;
		for (int k = 0; same && k < x->rank; k++)
			same = x->dims[k] == y->dims[k];
		if (!same) {
			fail("copy: entry %s differs", x->name);
			continue;
		}
		if (x->nslices)
			continue;
		uint8_t *d1, *d2;
		size_t n1, n2;
		if (ge_bundle_read(b, x, &d1, &n1, &err)) {
			fail("%s", err.msg);
			continue;
		}
		if (ge_bundle_read(c, y, &d2, &n2, &err)) {
			fail("copy: %s", err.msg);
			free(d1);
			continue;
		}
		if (n1 != n2 || memcmp(d1, d2, n1))
			fail("copy: bytes of %s differ", x->name);
		free(d1);
		free(d2);
	}
	/* Not required, but worth knowing: does our writer reproduce the
	 * file TensorFlow wrote? */
	uint8_t *a, *z;
	size_t al, zl;
	if (!ge_file_read(ge_bundle_index_path(b), &a, &al, NULL)) {
		if (!ge_file_read(ge_bundle_index_path(c), &z, &zl, NULL)) {
			identical += al == zl && !memcmp(a, z, al);
			free(z);
		}
		free(a);
	}
	ge_bundle_close(c);
}

static void check_checkpoint(const char *corpus, const char *rel,
			     const json_t *expect, int k)
{
	char path[2048];
	ge_error err;
	ge_bundle *b;
	nfail = 0;
	snprintf(path, sizeof path, "%s/%s", corpus, rel);

	double t0 = now();
	int rc = ge_bundle_open(path, &b, &err);
	if (rc) {
		ok(0, "%s", rel);
		tap_diag("  %s", err.msg);
		return;
	}
	/* Every tensor's bytes, checksums verified. */
	for (size_t i = 0; i < ge_bundle_count(b); i++) {
		const ge_bundle_entry *e = ge_bundle_entry_at(b, i);
		uint8_t *d;
		size_t n;
		if (e->nslices)
			continue;
		if (ge_bundle_read(b, e, &d, &n, &err))
			fail("%s", err.msg);
		else
			free(d);
		if (e->dtype == 7) {
			ge_bundle_string *s;
			if (ge_bundle_read_strings(b, e, &s, &n, &err))
				fail("%s", err.msg);
			free(s);
		}
	}
	t_read += now() - t0;

	if (!json_is_object(expect)) {
		fail("not listed in bundle_values.json");
	} else {
		const char *key;
		json_t *spec;
		if (json_object_size(expect) != ge_bundle_count(b))
			fail("%zu entries, bundle_values.json lists %zu",
			     ge_bundle_count(b), json_object_size(expect));
		json_object_foreach((json_t *)expect, key, spec)
			check_entry(b, key, spec);
	}

	char dir[512];
	snprintf(dir, sizeof dir, "%s/ck%d", tmpdir, k);
	if (mkdir(dir, 0700) == 0) {
		rewrite(b, dir);
		rm_dir(dir);
	} else {
		fail("mkdir %s: %s", dir, strerror(errno));
	}
	ge_bundle_close(b);
	ok(nfail == 0, "%s (%zu tensors)", rel, json_object_size(expect));
}

int main(void)
{
	const char *corpus = tap_corpus();
	char path[2048];
	ge_error err;
	if (!corpus)
		tap_skip_all("corpus not found");

	uint8_t *text;
	size_t len;
	snprintf(path, sizeof path, "%s/bundle_values.json", corpus);
	if (ge_file_read(path, &text, &len, &err)) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	json_t *values = NULL;
	int rc_json = ge_json_load((const char *)text, len, path, &values, &err);
	free(text);
	if (rc_json) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}

	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	if (ge_file_read(path, &text, &len, &err)) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/ge-bundle-corpus-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}

	int k = 0;
	char *save, *line = strtok_r((char *)text, "\n", &save);
	for (; line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (!tab || strncmp(tab + 1, "TensorBundle-index\t", 19))
			continue;
		*tab = 0;
		check_checkpoint(corpus, line, json_object_get(values, line),
				 k++);
	}
	free(text);
	json_decref(values);
	rmdir(tmpdir);
	if (k == 0)
		ok(0, "MANIFEST.tsv lists tensor bundles");
	tap_diag("opened and read %d checkpoints in %.1f ms", k,
		 t_read * 1e3);
	tap_diag("%d of %d rewritten indexes are byte-identical to the "
		 "originals", identical, k);
	return tap_done();
}
