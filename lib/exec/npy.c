/* exec/npy.c: NumPy .npy files in and out (see npy.h). */
#include "exec/npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/tensor.h"

enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5,
	DT_INT8 = 6, DT_STRING = 7, DT_COMPLEX64 = 8, DT_INT64 = 9,
	DT_BOOL = 10, DT_BFLOAT16 = 14, DT_UINT16 = 17, DT_COMPLEX128 = 18,
	DT_HALF = 19, DT_UINT32 = 22, DT_UINT64 = 23,
};

#define NPY_MAX_HEADER (64u << 10)

/* NumPy's kind letter and item size of a dtype. */
static const struct {
	int dtype;
	char kind;
	int size;
} kinds[] = {
	{DT_HALF, 'f', 2}, {DT_FLOAT, 'f', 4}, {DT_DOUBLE, 'f', 8},
	{DT_INT8, 'i', 1}, {DT_INT16, 'i', 2}, {DT_INT32, 'i', 4},
	{DT_INT64, 'i', 8}, {DT_UINT8, 'u', 1}, {DT_UINT16, 'u', 2},
	{DT_UINT32, 'u', 4}, {DT_UINT64, 'u', 8}, {DT_BOOL, 'b', 1},
	{DT_COMPLEX64, 'c', 8}, {DT_COMPLEX128, 'c', 16},
};

static int host_little(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 1;
}

/* ---------------------------------------------------------------- header */

/* The dict literal's parts, read by a small scanner: strings in single
 * or double quotes, True/False, tuples of integers. */
struct hdr {
	const char *p, *end;
	char descr[32];
	int have_descr, have_order, have_shape;
	int fortran;
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
};

static void skip_ws(struct hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' ||
				 *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static int eat(struct hdr *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return 1;
	}
	return 0;
}

static int str_lit(struct hdr *h, char *buf, size_t cap)
{
	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	char q = *h->p++;
	size_t n = 0;
	while (h->p < h->end && *h->p != q) {
		if (n + 1 >= cap || *h->p == '\\')
			return -1;
		buf[n++] = *h->p++;
	}
	if (h->p >= h->end)
		return -1;
	h->p++;
	buf[n] = 0;
	return 0;
}

static int word(struct hdr *h, const char *w)
{
	size_t n = strlen(w);
	skip_ws(h);
	if ((size_t)(h->end - h->p) >= n && !memcmp(h->p, w, n)) {
		h->p += n;
		return 1;
	}
	return 0;
}

static int shape_tuple(struct hdr *h)
{
	if (!eat(h, '('))
		return -1;
	h->rank = 0;
	for (;;) {
		if (eat(h, ')'))
			return 0;
		skip_ws(h);
		int64_t v = 0;
		const char *s = h->p;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (*h->p++ - '0');
		}
		if (h->p == s || h->rank >= GE_SHAPE_MAXRANK)
			return -1;
		/* NumPy writes "3L" in files from Python 2 */
		if (h->p < h->end && *h->p == 'L')
			h->p++;
		h->dims[h->rank++] = v;
		if (!eat(h, ',')) {
			if (eat(h, ')'))
				return 0;
			return -1;
		}
	}
}

static int parse_header(struct hdr *h)
{
	if (!eat(h, '{'))
		return -1;
	for (;;) {
		char key[32];
		if (eat(h, '}'))
			break;
		if (str_lit(h, key, sizeof key) || !eat(h, ':'))
			return -1;
		if (!strcmp(key, "descr")) {
			if (str_lit(h, h->descr, sizeof h->descr))
				return -1;
			h->have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (word(h, "True"))
				h->fortran = 1;
			else if (!word(h, "False"))
				return -1;
			h->have_order = 1;
		} else if (!strcmp(key, "shape")) {
			if (shape_tuple(h))
				return -1;
			h->have_shape = 1;
		} else {
			return -1;
		}
		if (!eat(h, ',')) {
			if (eat(h, '}'))
				break;
			return -1;
		}
	}
	skip_ws(h);
	return h->p == h->end && h->have_descr && h->have_order &&
			       h->have_shape
		       ? 0
		       : -1;
}

/* The dtype of a descr; *swap when its byte order is not the host's;
 * *strsize for 'S<n>'. */
static int descr_dtype(const char *d, int *swap, size_t *strsize)
{
	char order = d[0];
	if (order != '<' && order != '>' && order != '|' && order != '=')
		return -1;
	*swap = (order == '<' && !host_little()) ||
		(order == '>' && host_little());
	char kind = d[1];
	char *end;
	long size = strtol(d + 2, &end, 10);
	if (!kind || end == d + 2 || *end || size <= 0)
		return -1;
	if (kind == 'S') {
		if (size > (1L << 20))
			return -1;
		*strsize = (size_t)size;
		return DT_STRING;
	}
	if (kind == '?')
		kind = 'b';
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (kinds[i].kind == kind && kinds[i].size == size)
			return kinds[i].dtype;
	return -1;
}

static void swap_bytes(uint8_t *p, size_t n, size_t width)
{
	for (size_t k = 0; k < n; k++, p += width)
		for (size_t i = 0; i < width / 2; i++) {
			uint8_t t = p[i];
			p[i] = p[width - 1 - i];
			p[width - 1 - i] = t;
		}
}

/* ---------------------------------------------------------------- read */

static int fill_strings(ge_xt *t, const uint8_t *p, size_t width,
			const char *name, ge_error *err)
{
	ge_xstr *s = t->data;
	for (int64_t k = 0; k < t->n; k++, p += width) {
		size_t len = width;
		while (len && p[len - 1] == 0)
			len--;
		if (!len)
			continue;
		s[k].p = malloc(len + 1);
		if (!s[k].p)
			return ge_err(err, GE_EINVAL, "%s: out of memory", name);
		memcpy(s[k].p, p, len);
		s[k].p[len] = 0;
		s[k].len = len;
	}
	return GE_OK;
}

int ge_npy_parse(const uint8_t *data, size_t len, const char *name,
		 ge_xbudget *b, ge_xt **out, ge_error *err)
{
	*out = NULL;
	if (len < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
		return ge_err(err, GE_EFORMAT, "%s: not a .npy file (no "
			      "\\x93NUMPY magic)", name);
	int major = data[6], minor = data[7];
	size_t hlen, off;
	if (major == 1) {
		hlen = (size_t)data[8] | (size_t)data[9] << 8;
		off = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return ge_err(err, GE_EFORMAT, "%s: truncated .npy "
				      "header", name);
		hlen = (size_t)data[8] | (size_t)data[9] << 8 |
		       (size_t)data[10] << 16 | (size_t)data[11] << 24;
		off = 12;
	} else {
		return ge_err(err, GE_EFORMAT, "%s: .npy version %d.%d is not "
			      "one of 1.0, 2.0, 3.0", name, major, minor);
	}
	if (hlen > NPY_MAX_HEADER)
		return ge_err(err, GE_EFORMAT, "%s: .npy header of %zu bytes "
			      "(at most %u)", name, hlen, NPY_MAX_HEADER);
	if (hlen > len - off)
		return ge_err(err, GE_EFORMAT, "%s: truncated .npy header "
			      "(%zu bytes said, %zu there)", name, hlen,
			      len - off);
	struct hdr h;
	memset(&h, 0, sizeof h);
	h.p = (const char *)data + off;
	h.end = h.p + hlen;
	if (parse_header(&h))
		return ge_err(err, GE_EFORMAT, "%s: the .npy header is not a "
			      "{'descr', 'fortran_order', 'shape'} dict: "
			      "%.*s", name, (int)(hlen > 120 ? 120 : hlen),
			      (const char *)data + off);
	if (h.fortran)
		return ge_err(err, GE_EFORMAT, "%s: Fortran-order arrays are "
			      "not read (save it C-ordered: "
			      "np.ascontiguousarray)", name);
	int swap = 0;
	size_t strsize = 0;
	int dt = descr_dtype(h.descr, &swap, &strsize);
	if (dt < 0)
		return ge_err(err, GE_EFORMAT, "%s: .npy dtype '%s' is not one "
			      "the runner holds%s", name, h.descr,
			      strchr(h.descr, 'O') ? " (object arrays are "
						     "not read)" : "");
	int64_t count = 1;
	for (int i = 0; i < h.rank; i++) {
		if (h.dims[i] && count > INT64_MAX / h.dims[i])
			return ge_err(err, GE_EFORMAT, "%s: the .npy shape's "
				      "size overflows", name);
		count *= h.dims[i];
	}
	ge_xt *t = ge_xt_new(dt, h.rank, h.dims, b, name, err);
	if (!t)
		return err ? err->code : GE_EINVAL;
	size_t width = dt == DT_STRING ? strsize : ge_xt_elem_size(dt);
	size_t avail = len - off - hlen;
	if ((uint64_t)t->n > SIZE_MAX / width) {
		ge_xt_unref(t);
		return ge_err(err, GE_EFORMAT, "%s: the .npy shape's size "
			      "overflows", name);
	}
	size_t want = (size_t)t->n * width;
	if (avail != want) {
		int64_t n = t->n;
		ge_xt_unref(t);
		return ge_err(err, GE_EFORMAT, "%s: %s .npy data: %zu bytes for "
			      "%" PRId64 " elements of '%s' (%zu expected)",
			      name, avail < want ? "truncated" : "too long",
			      avail, n, h.descr, want);
	}
	const uint8_t *p = data + off + hlen;
	if (dt == DT_STRING) {
		if (fill_strings(t, p, width, name, err)) {
			ge_xt_unref(t);
			return GE_EINVAL;
		}
	} else if (want) {
		memcpy(t->data, p, want);
		if (swap && width > 1) {
			size_t w = dt == DT_COMPLEX64 ? 4
				 : dt == DT_COMPLEX128 ? 8 : width;
			swap_bytes(t->data, want / w, w);
		}
		if (dt == DT_BOOL) {
			uint8_t *q = t->data;
			for (size_t k = 0; k < want; k++)
				q[k] = q[k] != 0;
		}
	}
	*out = t;
	return GE_OK;
}

int ge_npy_read(const char *path, ge_xbudget *b, ge_xt **out, ge_error *err)
{
	uint8_t *data;
	size_t len;
	*out = NULL;
	int rc = ge_file_read(path, &data, &len, err);
	if (rc)
		return rc;
	rc = ge_npy_parse(data, len, path, b, out, err);
	free(data);
	return rc;
}

/* ---------------------------------------------------------------- write */

int ge_npy_encode(const ge_xt *t, ge_buf *out, ge_error *err)
{
	char descr[32];
	size_t width = 0;
	int dt = t->dtype == DT_BFLOAT16 ? DT_FLOAT : t->dtype;
	if (dt == DT_STRING) {
		const ge_xstr *s = t->data;
		width = 1;
		for (int64_t k = 0; k < t->n; k++)
			if (s[k].len > width)
				width = s[k].len;
		snprintf(descr, sizeof descr, "|S%zu", width);
	} else {
		for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
			if (kinds[i].dtype == dt) {
				width = (size_t)kinds[i].size;
				snprintf(descr, sizeof descr, "%c%c%d",
					 width == 1 ? '|' : '<', kinds[i].kind,
					 kinds[i].size);
			}
	}
	if (!width) {
		const char *n = ge_dtype_name(t->dtype);
		return ge_err(err, GE_EINVAL, ".npy cannot hold dtype %s",
			      n ? n : "?");
	}
	ge_buf h = GE_BUF_INIT;
	ge_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, "
			  "'shape': (", descr);
	for (int i = 0; i < t->rank; i++)
		ge_buf_printf(&h, "%" PRId64 "%s", t->dims[i],
			      t->rank == 1 || i + 1 < t->rank ? ", " : "");
	if (t->rank == 1)
		h.len -= 1; /* "(3,)" as NumPy writes it */
	ge_buf_adds(&h, "), }");
	/* padded with spaces and a newline to a multiple of 64 */
	int v2 = h.len + 11 > 65535;
	size_t pre = v2 ? 12 : 10;
	size_t total = (pre + h.len + 1 + 63) / 64 * 64;
	while (pre + h.len + 1 < total)
		ge_buf_addc(&h, ' ');
	ge_buf_addc(&h, '\n');
	uint8_t head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 0, 0};
	head[6] = v2 ? 2 : 1;
	for (size_t i = 0; i < pre - 8; i++)
		head[8 + i] = (uint8_t)(h.len >> (8 * i));
	ge_buf_add(out, head, pre);
	ge_buf_add(out, h.data, h.len);
	ge_buf_free(&h);
	size_t start = out->len;
	if (t->dtype == DT_STRING) {
		const ge_xstr *s = t->data;
		for (int64_t k = 0; k < t->n; k++) {
			ge_buf_add(out, s[k].p ? s[k].p : "", s[k].len);
			for (size_t i = s[k].len; i < width; i++)
				ge_buf_addc(out, 0);
		}
	} else if (t->dtype == DT_BFLOAT16) {
		const uint16_t *p = t->data;
		for (int64_t k = 0; k < t->n; k++) {
			float f = ge_bf16_to_float(p[k]);
			ge_buf_add(out, &f, 4);
		}
	} else if (t->n) {
		ge_buf_add(out, t->data, (size_t)t->n * width);
	}
	if (!host_little() && width > 1 && t->dtype != DT_STRING) {
		size_t w = dt == DT_COMPLEX64 ? 4 : dt == DT_COMPLEX128 ? 8
									 : width;
		swap_bytes(out->data + start, (out->len - start) / w, w);
	}
	return GE_OK;
}

int ge_npy_write(const char *path, const ge_xt *t, ge_error *err)
{
	ge_buf b = GE_BUF_INIT;
	int rc = ge_npy_encode(t, &b, err);
	if (rc) {
		ge_err_prefix(err, "%s", path);
		ge_buf_free(&b);
		return rc;
	}
	rc = ge_file_write_atomic(path, b.data, b.len, err);
	ge_buf_free(&b);
	return rc;
}
