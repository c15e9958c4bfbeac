/* checkpoint.c: see checkpoint.h. */
#include "variables/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/meta.h"
#include "formats/model.h"
#include "graph/sets.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"

/* DataType values used here (types.proto). */
enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5,
	DT_INT8 = 6, DT_STRING = 7, DT_COMPLEX64 = 8, DT_INT64 = 9,
	DT_BOOL = 10, DT_QINT8 = 11, DT_QUINT8 = 12, DT_QINT32 = 13,
	DT_BFLOAT16 = 14, DT_QINT16 = 15, DT_QUINT16 = 16, DT_UINT16 = 17,
	DT_COMPLEX128 = 18, DT_HALF = 19, DT_UINT32 = 22, DT_UINT64 = 23,
	DT_FLOAT8_E5M2 = 24, DT_FLOAT8_E4M3FN = 25,
};

/* Where a TensorProto keeps one element of each dtype when it does not
 * use tensor_content. */
enum {
	F_CONTENT, /* no typed field: tensor_content only */
	F_FLOAT, F_DOUBLE, F_INT, F_INT64, F_BOOL, F_SCOMPLEX, F_DCOMPLEX,
	F_HALF, F_UINT32, F_UINT64, F_FLOAT8,
};

static int typed_field(int dtype)
{
	switch (dtype) {
	case DT_FLOAT:
		return F_FLOAT;
	case DT_DOUBLE:
		return F_DOUBLE;
	case DT_INT32: case DT_UINT8: case DT_INT16: case DT_INT8:
	case DT_QINT8: case DT_QUINT8: case DT_QINT32: case DT_QINT16:
	case DT_QUINT16: case DT_UINT16:
		return F_INT;
	case DT_INT64:
		return F_INT64;
	case DT_BOOL:
		return F_BOOL;
	case DT_COMPLEX64:
		return F_SCOMPLEX;
	case DT_COMPLEX128:
		return F_DCOMPLEX;
	case DT_HALF: case DT_BFLOAT16:
		return F_HALF;
	case DT_UINT32:
		return F_UINT32;
	case DT_UINT64:
		return F_UINT64;
	case DT_FLOAT8_E5M2: case DT_FLOAT8_E4M3FN:
		return F_FLOAT8;
	}
	return F_CONTENT;
}

static int is_signed_int(int dtype)
{
	return dtype == DT_INT32 || dtype == DT_INT16 || dtype == DT_INT8 ||
	       dtype == DT_QINT8 || dtype == DT_QINT32 || dtype == DT_QINT16;
}

static uint64_t rd_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t k = n; k-- > 0;)
		v = v << 8 | p[k];
	return v;
}

static void wr_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t k = 0; k < n; k++, v >>= 8)
		p[k] = (uint8_t)v;
}

/* ------------------------------------------------------------ prefixes */

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static char *cat(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = ge_xmalloc(n);
	snprintf(s, n, "%s%s", a, b);
	return s;
}

/* model_checkpoint_path of a CheckpointState text file, or NULL. */
static char *state_path(const char *file)
{
	uint8_t *data;
	size_t len;
	if (ge_file_read(file, &data, &len, NULL) != GE_OK)
		return NULL;
	char *res = NULL;
	const char *key = "model_checkpoint_path";
	char *p = strstr((char *)data, key);
	while (p && p != (char *)data && p[-1] != '\n')
		p = strstr(p + 1, key);
	if (p) {
		p += strlen(key);
		while (*p == ' ' || *p == '\t' || *p == ':')
			p++;
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			ge_buf b = GE_BUF_INIT;
			for (; *p && *p != q && *p != '\n'; p++) {
				if (*p == '\\' && p[1])
					p++;
				ge_buf_addc(&b, *p);
			}
			if (*p == q && b.len)
				res = (char *)ge_buf_steal(&b, &len);
			ge_buf_free(&b);
		}
	}
	free(data);
	return res;
}

int ge_checkpoint_prefix(const char *path, char **prefix, ge_error *err)
{
	*prefix = NULL;
	char *t;
	if (ends_with(path, ".index") && is_file(path)) {
		*prefix = ge_xstrndup(path, strlen(path) - 6);
		return GE_OK;
	}
	t = cat(path, ".index");
	if (is_file(t)) {
		free(t);
		*prefix = ge_xstrdup(path);
		return GE_OK;
	}
	free(t);
	if (is_dir(path)) {
		t = cat(path, "/variables/variables.index");
		if (is_file(t)) {
			free(t);
			/* a SavedModel's checkpoint stays inside it */
			int rc = ge_savedmodel_verify(path, err);
			if (rc)
				return rc;
			*prefix = cat(path, "/variables/variables");
			return GE_OK;
		}
		free(t);
		t = cat(path, "/checkpoint");
		char *p = is_file(t) ? state_path(t) : NULL;
		free(t);
		if (p) {
			if (p[0] == '/') {
				*prefix = p;
			} else {
				char *d = cat(path, "/");
				*prefix = cat(d, p);
				free(d);
				free(p);
			}
			return GE_OK;
		}
	}
	if (ends_with(path, ".meta")) {
		char *base = ge_xstrndup(path, strlen(path) - 5);
		t = cat(base, ".index");
		int ok = is_file(t);
		free(t);
		if (ok) {
			*prefix = base;
			return GE_OK;
		}
		free(base);
	}
	return ge_err(err, GE_ENOTFOUND,
		      "%s: no checkpoint there (no %s.index, no SavedModel "
		      "variables, no checkpoint file)", path, path);
}

/* ------------------------------------------------------------ reading */

/* The typed fields of a one-element tensor point into one. */
union scalar {
	float f[2];
	double d[2];
	int32_t i;
	int64_t l;
	uint32_t u;
	uint64_t ul;
	protobuf_c_boolean b;
};

/* A one-element value of dtype (es bytes in data, which float8_val points
 * into) in its typed field f, as TensorFlow writes scalars. */
static void set_scalar(Tensorflow__TensorProto *tp, int f, int dtype,
		       uint8_t *data, size_t es, union scalar *one)
{
	switch (f) {
	case F_FLOAT: {
		uint32_t u = (uint32_t)rd_le(data, 4);
		memcpy(&one->f[0], &u, 4);
		tp->n_float_val = 1;
		tp->float_val = one->f;
		break;
	}
	case F_DOUBLE: {
		uint64_t u = rd_le(data, 8);
		memcpy(&one->d[0], &u, 8);
		tp->n_double_val = 1;
		tp->double_val = one->d;
		break;
	}
	case F_INT: {
		uint64_t v = rd_le(data, es);
		if (is_signed_int(dtype) && es < 8 &&
		    (v >> (8 * es - 1)) & 1)
			v |= ~(uint64_t)0 << (8 * es);
		one->i = (int32_t)(int64_t)v;
		tp->n_int_val = 1;
		tp->int_val = &one->i;
		break;
	}
	case F_INT64:
		one->l = (int64_t)rd_le(data, 8);
		tp->n_int64_val = 1;
		tp->int64_val = &one->l;
		break;
	case F_BOOL:
		one->b = data[0] != 0;
		tp->n_bool_val = 1;
		tp->bool_val = &one->b;
		break;
	case F_SCOMPLEX: {
		uint32_t re = (uint32_t)rd_le(data, 4),
			 im = (uint32_t)rd_le(data + 4, 4);
		memcpy(&one->f[0], &re, 4);
		memcpy(&one->f[1], &im, 4);
		tp->n_scomplex_val = 2;
		tp->scomplex_val = one->f;
		break;
	}
	case F_DCOMPLEX: {
		uint64_t re = rd_le(data, 8),
			 im = rd_le(data + 8, 8);
		memcpy(&one->d[0], &re, 8);
		memcpy(&one->d[1], &im, 8);
		tp->n_dcomplex_val = 2;
		tp->dcomplex_val = one->d;
		break;
	}
	case F_HALF:
		one->i = (int32_t)rd_le(data, 2);
		tp->n_half_val = 1;
		tp->half_val = &one->i;
		break;
	case F_UINT32:
		one->u = (uint32_t)rd_le(data, 4);
		tp->n_uint32_val = 1;
		tp->uint32_val = &one->u;
		break;
	case F_UINT64:
		one->ul = rd_le(data, 8);
		tp->n_uint64_val = 1;
		tp->uint64_val = &one->ul;
		break;
	case F_FLOAT8:
		tp->float8_val.data = data;
		tp->float8_val.len = 1;
		break;
	}
}

int ge_bundle_read_tensorproto(ge_bundle *b, const ge_bundle_entry *e,
			       ge_buf *out, ge_error *err)
{
	const char *ipath = ge_bundle_index_path(b);
	if (e->nslices)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s' is partitioned (its %zu slices "
			      "are stored under other keys)", ipath, e->name,
			      e->nslices);
	if (e->rank < 0)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s' has an unknown shape", ipath,
			      e->name);
	size_t es = ge_bundle_dtype_size(e->dtype);
	if (!es && e->dtype != DT_STRING)
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': a %s value has no constant "
			      "form", ipath, e->name,
			      ge_bundle_dtype_name(e->dtype)
				      ? ge_bundle_dtype_name(e->dtype)
				      : "DT_INVALID");

	Tensorflow__TensorProto tp = TENSORFLOW__TENSOR_PROTO__INIT;
	Tensorflow__TensorShapeProto sh = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim *dims = NULL, **dimp = NULL;
	tp.dtype = (Tensorflow__DataType)e->dtype;
	tp.tensor_shape = &sh;
	if (e->rank > 0) {
		dims = ge_xmalloc((size_t)e->rank * sizeof *dims);
		dimp = ge_xmalloc((size_t)e->rank * sizeof *dimp);
		for (int i = 0; i < e->rank; i++) {
			Tensorflow__TensorShapeProto__Dim d =
				TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
			d.size = e->dims[i];
			dims[i] = d;
			dimp[i] = &dims[i];
		}
		sh.n_dim = (size_t)e->rank;
		sh.dim = dimp;
	}

	uint8_t *data = NULL;
	size_t len = 0;
	ge_bundle_string *strs = NULL;
	ProtobufCBinaryData *sv = NULL;
	size_t ns = 0;
	union scalar one;
	int rc;
	if (e->dtype == DT_STRING) {
		rc = ge_bundle_read_strings(b, e, &strs, &ns, err);
		if (rc)
			goto out;
		sv = ge_xmalloc((ns ? ns : 1) * sizeof *sv);
		for (size_t i = 0; i < ns; i++) {
			sv[i].data = (uint8_t *)strs[i].ptr;
			sv[i].len = strs[i].len;
		}
		tp.n_string_val = ns;
		tp.string_val = sv;
	} else {
		rc = ge_bundle_read(b, e, &data, &len, err);
		if (rc)
			goto out;
		int f = typed_field(e->dtype);
		if (e->nelems != 1 || f == F_CONTENT) {
			tp.tensor_content.data = data;
			tp.tensor_content.len = len;
		} else {
			set_scalar(&tp, f, e->dtype, data, es, &one);
		}
	}
	size_t n = tensorflow__tensor_proto__get_packed_size(&tp);
	ge_buf_reserve(out, n);
	tensorflow__tensor_proto__pack(&tp, out->data + out->len);
	out->len += n;
	out->data[out->len] = 0;
out:
	free(data);
	free(strs);
	free(sv);
	free(dims);
	free(dimp);
	return rc;
}

/* ------------------------------------------------------------ writing */

/* Number of elements a TensorProto's shape holds, or -1 (and err). */
static int64_t proto_nelems(const Tensorflow__TensorProto *t,
			    const char *where, const char *name,
			    ge_error *err)
{
	const Tensorflow__TensorShapeProto *s = t->tensor_shape;
	if (!s)
		return 1;
	if (s->unknown_rank) {
		ge_err(err, GE_EINVAL, "%s: tensor '%s': unknown rank", where,
		       name);
		return -1;
	}
	int64_t n = 1;
	for (size_t i = 0; i < s->n_dim; i++) {
		int64_t d = s->dim[i]->size;
		if (d < 0 || (d > 0 && n > INT64_MAX / d)) {
			ge_err(err, GE_EINVAL,
			       "%s: tensor '%s': bad dimension %lld", where,
			       name, (long long)d);
			return -1;
		}
		n *= d;
	}
	return n;
}

#define PICK(k, n) ((k) < (n) ? (k) : (n) - 1)

/* Element k from the typed field into dst (es bytes, little-endian);
 * returns 0, or -1 when the field holds a value of another kind. */
static void typed_elem(const Tensorflow__TensorProto *t, int f, size_t es,
		       size_t k, uint8_t *dst)
{
	memset(dst, 0, es);
	switch (f) {
	case F_FLOAT:
		if (t->n_float_val) {
			uint32_t u;
			memcpy(&u, &t->float_val[PICK(k, t->n_float_val)], 4);
			wr_le(dst, u, 4);
		}
		break;
	case F_DOUBLE:
		if (t->n_double_val) {
			uint64_t u;
			memcpy(&u, &t->double_val[PICK(k, t->n_double_val)], 8);
			wr_le(dst, u, 8);
		}
		break;
	case F_INT:
		if (t->n_int_val)
			wr_le(dst, (uint64_t)(int64_t)t->int_val[PICK(
					   k, t->n_int_val)],
			      es);
		break;
	case F_INT64:
		if (t->n_int64_val)
			wr_le(dst, (uint64_t)t->int64_val[PICK(k, t->n_int64_val)],
			      8);
		break;
	case F_BOOL:
		if (t->n_bool_val)
			dst[0] = t->bool_val[PICK(k, t->n_bool_val)] ? 1 : 0;
		break;
	case F_SCOMPLEX:
		if (t->n_scomplex_val >= 2) {
			size_t j = PICK(k, t->n_scomplex_val / 2);
			uint32_t re, im;
			memcpy(&re, &t->scomplex_val[2 * j], 4);
			memcpy(&im, &t->scomplex_val[2 * j + 1], 4);
			wr_le(dst, re, 4);
			wr_le(dst + 4, im, 4);
		}
		break;
	case F_DCOMPLEX:
		if (t->n_dcomplex_val >= 2) {
			size_t j = PICK(k, t->n_dcomplex_val / 2);
			uint64_t re, im;
			memcpy(&re, &t->dcomplex_val[2 * j], 8);
			memcpy(&im, &t->dcomplex_val[2 * j + 1], 8);
			wr_le(dst, re, 8);
			wr_le(dst + 8, im, 8);
		}
		break;
	case F_HALF:
		if (t->n_half_val)
			wr_le(dst, (uint32_t)t->half_val[PICK(k, t->n_half_val)],
			      2);
		break;
	case F_UINT32:
		if (t->n_uint32_val)
			wr_le(dst, t->uint32_val[PICK(k, t->n_uint32_val)], 4);
		break;
	case F_UINT64:
		if (t->n_uint64_val)
			wr_le(dst, t->uint64_val[PICK(k, t->n_uint64_val)], 8);
		break;
	case F_FLOAT8:
		if (t->float8_val.len)
			dst[0] = t->float8_val.data[PICK(k, t->float8_val.len)];
		break;
	}
}

int ge_bundle_writer_add_tensorproto(ge_bundle_writer *w, const char *name,
				     const Tensorflow__TensorProto *t,
				     ge_error *err)
{
	const char *where = "checkpoint";
	int64_t ne = proto_nelems(t, where, name, err);
	if (ne < 0)
		return GE_EINVAL;
	int rank = t->tensor_shape ? (int)t->tensor_shape->n_dim : 0;
	int64_t *dims = ge_xmalloc((rank ? (size_t)rank : 1) * sizeof *dims);
	for (int i = 0; i < rank; i++)
		dims[i] = t->tensor_shape->dim[i]->size;
	int dt = (int)t->dtype;
	int rc;
	if (dt == DT_STRING) {
		size_t n = (size_t)ne;
		const char **s = ge_xmalloc((n ? n : 1) * sizeof *s);
		size_t *l = ge_xmalloc((n ? n : 1) * sizeof *l);
		for (size_t k = 0; k < n; k++) {
			if (t->n_string_val) {
				const ProtobufCBinaryData *b =
					&t->string_val[PICK(k, t->n_string_val)];
				s[k] = b->data ? (const char *)b->data : "";
				l[k] = b->len;
			} else {
				s[k] = "";
				l[k] = 0;
			}
		}
		rc = ge_bundle_writer_add_strings(w, name, rank, dims, s, l, n,
						  err);
		free(s);
		free(l);
		free(dims);
		return rc;
	}
	size_t es = ge_bundle_dtype_size(dt);
	if (!es) {
		free(dims);
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': cannot store a %s value", where,
			      name,
			      ge_bundle_dtype_name(dt) ? ge_bundle_dtype_name(dt)
						       : "DT_INVALID");
	}
	if ((uint64_t)ne > SIZE_MAX / es) {
		free(dims);
		return ge_err(err, GE_EINVAL, "%s: tensor '%s': too large",
			      where, name);
	}
	size_t len = (size_t)ne * es;
	if (t->tensor_content.len) {
		if (t->tensor_content.len != len) {
			free(dims);
			return ge_err(err, GE_EINVAL,
				      "%s: tensor '%s': tensor_content holds "
				      "%zu bytes, the shape needs %zu", where,
				      name, t->tensor_content.len, len);
		}
		rc = ge_bundle_writer_add(w, name, dt, rank, dims,
					  t->tensor_content.data, len, err);
		free(dims);
		return rc;
	}
	int f = typed_field(dt);
	if (f == F_CONTENT && ne > 0) {
		free(dims);
		return ge_err(err, GE_EINVAL,
			      "%s: tensor '%s': a %s value must use "
			      "tensor_content", where, name,
			      ge_bundle_dtype_name(dt));
	}
	uint8_t *data = ge_xmalloc(len ? len : 1);
	for (size_t k = 0; k < (size_t)ne; k++)
		typed_elem(t, f, es, k, data + k * es);
	rc = ge_bundle_writer_add(w, name, dt, rank, dims, data, len, err);
	free(data);
	free(dims);
	return rc;
}

/* ------------------------------------------------------------ plans */

/* A tensor a rename entry moves elsewhere, unless an entry writes it. */
static int renamed_away(const ge_ckpt_plan *plan, const char *name)
{
	int moved = 0;
	for (size_t i = 0; plan && i < plan->n; i++) {
		if (!strcmp(plan->dst[i], name))
			return 0;
		if (plan->rename && plan->rename[i] &&
		    !strcmp(plan->src[i], name))
			moved = 1;
	}
	return moved;
}

/* The bundles a plan's entries read from another checkpoint
 * (src_from), each opened once. */
struct plan_srcs {
	char **prefix;
	ge_bundle **b;
	size_t n;
};

static void plan_srcs_close(struct plan_srcs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->prefix[i]);
		ge_bundle_close(s->b[i]);
	}
	free(s->prefix);
	free(s->b);
}

/* The bundle entry i of the plan reads: src, or the one it names. */
static int plan_bundle(struct plan_srcs *s, ge_bundle *src,
		       const ge_ckpt_plan *plan, size_t i, ge_bundle **out,
		       ge_error *err)
{
	const char *from = plan->src_from ? plan->src_from[i] : NULL;
	*out = src;
	if (!from)
		return GE_OK;
	for (size_t k = 0; k < s->n; k++)
		if (!strcmp(s->prefix[k], from)) {
			*out = s->b[k];
			return GE_OK;
		}
	ge_bundle *b;
	int rc = ge_bundle_open(from, &b, err);
	if (rc)
		return rc;
	s->prefix = ge_xrealloc(s->prefix, (s->n + 1) * sizeof *s->prefix);
	s->b = ge_xrealloc(s->b, (s->n + 1) * sizeof *s->b);
	s->prefix[s->n] = ge_xstrdup(from);
	s->b[s->n++] = b;
	*out = b;
	return GE_OK;
}

/* Every entry's tensor is there (a rename of a tensor the checkpoint
 * lacks renames nothing). */
static int plan_check(struct plan_srcs *s, ge_bundle *src,
		      const ge_ckpt_plan *plan, ge_error *err)
{
	for (size_t i = 0; plan && i < plan->n; i++) {
		ge_bundle *b;
		int rc = plan_bundle(s, src, plan, i, &b, err);
		if (rc)
			return rc;
		if (plan->rename && plan->rename[i])
			continue;
		if (!b)
			return ge_err(err, GE_ENOTFOUND,
				      "no checkpoint to copy '%s' to '%s' from",
				      plan->src[i], plan->dst[i]);
		if (!ge_bundle_find(b, plan->src[i]))
			return ge_err(err, GE_ENOTFOUND,
				      "%s: no tensor '%s' to copy to '%s'",
				      ge_bundle_index_path(b), plan->src[i],
				      plan->dst[i]);
	}
	return GE_OK;
}

int ge_checkpoint_apply_plan(ge_bundle *src, const char *dst_prefix,
			     const ge_ckpt_plan *plan, ge_error *err)
{
	struct plan_srcs s = {0};
	int rc = plan_check(&s, src, plan, err);
	ge_bundle_writer *w = NULL;
	if (!rc)
		rc = ge_bundle_writer_open(dst_prefix, &w, err);
	if (rc) {
		plan_srcs_close(&s);
		return rc;
	}
	size_t n = src ? ge_bundle_count(src) : 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const ge_bundle_entry *e = ge_bundle_entry_at(src, i);
		if (renamed_away(plan, e->name))
			continue;
		rc = ge_bundle_writer_copy(w, src, e, NULL, err);
	}
	for (size_t i = 0; plan && i < plan->n && !rc; i++) {
		ge_bundle *b = src;
		rc = plan_bundle(&s, src, plan, i, &b, err);
		const ge_bundle_entry *e =
			!rc && b ? ge_bundle_find(b, plan->src[i]) : NULL;
		if (e && *plan->dst[i]) /* a rename to "" drops the tensor */
			rc = ge_bundle_writer_copy(w, b, e, plan->dst[i], err);
	}
	plan_srcs_close(&s);
	if (rc) {
		ge_bundle_writer_abort(w);
		return rc;
	}
	return ge_bundle_writer_finish(w, err);
}

int ge_savedmodel_apply_plan(const char *dir, const char *src_prefix,
			     const ge_ckpt_plan *plan, ge_error *err)
{
	ge_bundle *b = NULL;
	int rc = src_prefix ? ge_bundle_open(src_prefix, &b, err) : GE_OK;
	if (rc)
		return rc;
	char *vdir = cat(dir, "/variables");
	if (mkdir(vdir, 0777) < 0 && errno != EEXIST) {
		rc = ge_err(err, GE_EIO, "%s: %s", vdir, strerror(errno));
		free(vdir);
		if (b)
			ge_bundle_close(b);
		return rc;
	}
	free(vdir);
	char *dst = cat(dir, "/variables/variables");
	rc = ge_checkpoint_apply_plan(b, dst, plan, err);
	free(dst);
	if (b)
		ge_bundle_close(b);
	return rc;
}



/* ------------------------------------------------------------ freeze */

/* Op types that write to the variable they are given (ref inputs of
 * Assign, Apply*, Scatter*, and the resource forms). */
static int writes_variable(const char *type)
{
	static const char *const prefixes[] = {
		"Assign", "Apply", "SparseApply", "Scatter", "ResourceApply",
		"ResourceSparseApply", "ResourceScatter", "CountUpTo",
		"ResourceCountUpTo", "StridedSliceAssign",
		"ResourceStridedSliceAssign", "DestroyResourceOp",
	};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(type, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Removes every attr of op. */
static void clear_attrs(ge_graph *g, ge_opid op)
{
	while (ge_op_num_attrs(g, op) > 0) {
		char *n = ge_xstrdup(ge_op_attr_name(g, op, 0));
		ge_op_remove_attr(g, op, n);
		free(n);
	}
}

static void set_type_attr(ge_graph *g, ge_opid op, const char *name, int dt)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_tag(&b, 6, 0); /* AttrValue.type */
	ge_buf_varint(&b, (uint64_t)dt);
	ge_op_set_attr_raw(g, op, name, b.data, b.len);
	ge_buf_free(&b);
}

/* Drops `loc:@X` entries of kept ops' `_class` whose X was removed, so
 * the frozen graph imports in TensorFlow. */
static void fix_colocation(ge_graph *g, ge_opid op)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "_class", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list || !v->list->n_s)
		return;
	size_t n = v->list->n_s, keep = 0;
	int *ok = ge_xmalloc(n * sizeof *ok);
	for (size_t i = 0; i < n; i++) {
		const ProtobufCBinaryData *s = &v->list->s[i];
		ok[i] = 1;
		if (s->len > 5 && !memcmp(s->data, "loc:@", 5)) {
			char *name = ge_xstrndup((const char *)s->data + 5,
						 s->len - 5);
			ok[i] = ge_graph_find(g, name) != GE_NOOP;
			free(name);
		}
		keep += (size_t)ok[i];
	}
	if (keep == n) {
		free(ok);
		return;
	}
	if (!keep) {
		free(ok);
		ge_op_remove_attr(g, op, "_class");
		return;
	}
	ge_buf list = GE_BUF_INIT, b = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (ok[i])
			ge_buf_lenfield(&list, 2, v->list->s[i].data,
					v->list->s[i].len);
	free(ok);
	ge_buf_lenfield(&b, 1, list.data, list.len); /* AttrValue.list */
	ge_op_set_attr_raw(g, op, "_class", b.data, b.len);
	ge_buf_free(&list);
	ge_buf_free(&b);
}

/* Removes the ops not in keep, each after the ops that read it, so no
 * consumer is left with a dangling reference on the way (ops on cycles,
 * which never get there, are removed by force at the end). */
static int remove_unkept(ge_graph *g, const ge_opset *keep, ge_error *err)
{
	size_t cap = ge_graph_capacity(g);
	uint32_t *cnt = ge_xcalloc(cap ? cap : 1, sizeof *cnt);
	ge_opvec ready = GE_VEC_INIT;
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id) || ge_opset_has(keep, (ge_opid)id))
			continue;
		size_t nu, nc;
		ge_op_uses(g, (ge_opid)id, &nu);
		ge_op_control_outputs(g, (ge_opid)id, &nc);
		cnt[id] = (uint32_t)(nu + nc);
		if (!cnt[id])
			ge_opvec_push(&ready, (ge_opid)id);
	}
	int rc = GE_OK;
	while (ready.n && !rc) {
		ge_opid id = ready.v[--ready.n];
		size_t ni = ge_op_num_inputs(g, id), nc = ge_op_num_control_inputs(g, id);
		ge_opid *prod = ge_xmalloc((ni + nc + 1) * sizeof *prod);
		size_t np = 0;
		for (size_t i = 0; i < ni; i++)
			prod[np++] = ge_op_input(g, id, i).op;
		for (size_t i = 0; i < nc; i++)
			prod[np++] = ge_op_control_input(g, id, i);
		rc = ge_graph_remove_op(g, id, 0, err);
		for (size_t i = 0; !rc && i < np; i++) {
			ge_opid p = prod[i];
			if (p == GE_NOOP || ge_opset_has(keep, p) || !cnt[p])
				continue;
			if (--cnt[p] == 0)
				ge_opvec_push(&ready, p);
		}
		free(prod);
	}
	for (size_t id = 0; !rc && id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id) && !ge_opset_has(keep, (ge_opid)id))
			rc = ge_graph_remove_op(g, (ge_opid)id, 1, err);
	ge_opvec_free(&ready);
	free(cnt);
	return rc;
}

struct frozen {
	const ge_variable *v;
	int dtype;    /* the tensor's */
	ge_buf value; /* encoded AttrValue holding the tensor */
};

/* What the outputs need, once the variables are constants: a variable's
 * resource reads need the variable, not what assigns it. */
static void freeze_needed(ge_graph *g, const ge_varlist *vl,
			  const ge_tref *outputs, size_t n, ge_opset *keep)
{
	ge_opvec stack = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++)
		if (ge_opset_insert(keep, outputs[i].op))
			ge_opvec_push(&stack, outputs[i].op);
	while (stack.n) {
		ge_opid op = stack.v[--stack.n];
		if (ge_varlist_find_op(vl, op))
			continue;
		size_t ni = ge_op_num_inputs(g, op);
		if (!strcmp(ge_op_type(g, op), "ReadVariableOp") && ni >= 1 &&
		    ge_varlist_find_op(vl, ge_op_input(g, op, 0).op)) {
			if (ge_opset_insert(keep, ge_op_input(g, op, 0).op))
				ge_opvec_push(&stack, ge_op_input(g, op, 0).op);
			continue;
		}
		for (size_t i = 0; i < ni; i++) {
			ge_opid p = ge_op_input(g, op, i).op;
			if (p != GE_NOOP && ge_opset_insert(keep, p))
				ge_opvec_push(&stack, p);
		}
		size_t nc = ge_op_num_control_inputs(g, op);
		for (size_t i = 0; i < nc; i++) {
			ge_opid p = ge_op_control_input(g, op, i);
			if (p != GE_NOOP && ge_opset_insert(keep, p))
				ge_opvec_push(&stack, p);
		}
	}
	ge_opvec_free(&stack);
}

/* A needed variable may only be read by what stays. */
static int freeze_check_uses(ge_graph *g, const ge_variable *v,
			     const ge_opset *keep, const char *gname,
			     ge_error *err)
{
	size_t nu;
	const ge_use *u = ge_op_uses(g, v->op, &nu);
	for (size_t k = 0; k < nu; k++) {
		if (!ge_opset_has(keep, u[k].op))
			continue;
		const char *ct = ge_op_type(g, u[k].op);
		if (v->kind == GE_VAR_RESOURCE
			    ? strcmp(ct, "ReadVariableOp") != 0
			    : writes_variable(ct))
			return ge_err(err, GE_EGRAPH,
				      "%s: freeze: the outputs need op '%s' "
				      "(%s), which %s variable '%s'",
				      gname, ge_op_name(g, u[k].op), ct,
				      v->kind == GE_VAR_RESOURCE
					      ? "uses the resource of"
					      : "writes to",
				      v->name);
	}
	return GE_OK;
}

/* The checkpoint entry of v (by key, by the plan's copies, by name),
 * checked against the variable's dtype and shape; *eb is the bundle
 * that holds it (b, or another one a plan entry names, opened in s). */
static int freeze_entry(ge_bundle *b, struct plan_srcs *s,
			const ge_freeze_opts *o, const ge_variable *v,
			const ge_bundle_entry **out, ge_bundle **eb,
			ge_error *err)
{
	/* no bundle: fine for a graph whose outputs need no variable */
	const char *ipath = b ? ge_bundle_index_path(b) : "(no checkpoint)";
	const ge_bundle_entry *e = b ? ge_bundle_find(b, v->key) : NULL;
	*eb = b;
	for (size_t k = 0; !e && o && o->plan && k < o->plan->n; k++) {
		if (strcmp(o->plan->dst[k], v->key))
			continue;
		int rc = plan_bundle(s, b, o->plan, k, eb, err);
		if (rc)
			return rc;
		e = *eb ? ge_bundle_find(*eb, o->plan->src[k]) : NULL;
		if (*eb)
			ipath = ge_bundle_index_path(*eb);
	}
	if (!e)
		*eb = b;
	if (!e && b && strcmp(v->key, v->name))
		e = ge_bundle_find(b, v->name);
	if (!e)
		return ge_err(err, GE_ENOTFOUND,
			      "%s: no tensor '%s' for variable '%s'", ipath,
			      v->key, v->name);
	if (v->dtype && e->dtype != v->dtype)
		return ge_err(err, GE_EFORMAT,
			      "%s: tensor '%s' is %s, variable '%s' is %s",
			      ipath, e->name,
			      ge_dtype_name(e->dtype) ? ge_dtype_name(e->dtype)
						      : "?",
			      v->name,
			      ge_dtype_name(v->dtype) ? ge_dtype_name(v->dtype)
						      : "?");
	int shape_ok = v->rank < 0 || e->rank == v->rank;
	for (int d = 0; shape_ok && d < v->rank && e->rank >= 0; d++)
		if (v->dims[d] >= 0 && v->dims[d] != e->dims[d])
			shape_ok = 0;
	if (!shape_ok)
		return ge_err(err, GE_EFORMAT,
			      "%s: tensor '%s' does not have the shape of "
			      "variable '%s'", ipath, e->name, v->name);
	*out = e;
	return GE_OK;
}

/* Variable f->v becomes a Const of its value; its resource reads that
 * stay become Identity ops (keeping their colocation). */
static void freeze_to_const(ge_graph *g, const struct frozen *f,
			    const ge_opset *keep)
{
	ge_opid op = f->v->op;
	int dt = f->v->dtype;
	if (!dt)
		dt = f->dtype;
	while (ge_op_num_inputs(g, op) > 0)
		ge_op_remove_input(g, op, ge_op_num_inputs(g, op) - 1, NULL);
	ge_op_clear_control_inputs(g, op);
	ge_op_set_type(g, op, "Const");
	ge_op_set_device(g, op, "");
	clear_attrs(g, op);
	set_type_attr(g, op, "dtype", dt);
	ge_op_set_attr_raw(g, op, "value", f->value.data, f->value.len);
	if (f->v->kind != GE_VAR_RESOURCE)
		return;
	size_t nu;
	const ge_use *u = ge_op_uses(g, op, &nu);
	ge_opvec reads = GE_VEC_INIT;
	for (size_t k = 0; k < nu; k++)
		if (ge_opset_has(keep, u[k].op))
			ge_opvec_push(&reads, u[k].op);
	for (size_t k = 0; k < reads.n; k++) {
		ge_opid r = reads.v[k];
		if (k && reads.v[k - 1] == r)
			continue;
		size_t cl;
		const uint8_t *cls = ge_op_attr_raw(g, r, "_class", &cl);
		uint8_t *keepcls = cls ? ge_xmalloc(cl ? cl : 1) : NULL;
		if (cls)
			memcpy(keepcls, cls, cl);
		ge_op_clear_control_inputs(g, r);
		ge_op_set_type(g, r, "Identity");
		ge_op_set_device(g, r, "");
		clear_attrs(g, r);
		set_type_attr(g, r, "T", dt);
		if (keepcls)
			ge_op_set_attr_raw(g, r, "_class", keepcls, cl);
		free(keepcls);
	}
	ge_opvec_free(&reads);
}

int ge_freeze(ge_graph *g, ge_bundle *b, const ge_tref *outputs, size_t n,
	      const ge_freeze_opts *o, ge_error *err)
{
	const char *gname = ge_graph_name(g);
	if (!*gname)
		gname = "graph";
	for (size_t i = 0; i < n; i++)
		if (outputs[i].op == GE_NOOP ||
		    !ge_op_alive(g, outputs[i].op))
			return ge_err(err, GE_EINVAL,
				      "%s: freeze: output %zu is not an op of "
				      "the graph", gname, i + 1);
	if (!n)
		return ge_err(err, GE_EINVAL, "%s: freeze: no outputs given",
			      gname);
	ge_varlist vl;
	int rc = ge_graph_variables(g, &vl, err);
	if (rc)
		return rc;
	ge_opset keep;
	ge_opset_init(&keep, g);
	freeze_needed(g, &vl, outputs, n, &keep);

	/* read every value before changing anything */
	struct frozen *fz = ge_xcalloc(vl.n ? vl.n : 1, sizeof *fz);
	size_t nfz = 0;
	struct plan_srcs srcs = {0};
	for (size_t i = 0; i < vl.n && !rc; i++) {
		const ge_variable *v = &vl.v[i];
		const ge_bundle_entry *e = NULL;
		ge_bundle *eb = b;
		if (!ge_opset_has(&keep, v->op))
			continue;
		if ((rc = freeze_check_uses(g, v, &keep, gname, err)) ||
		    (rc = freeze_entry(b, &srcs, o, v, &e, &eb, err)))
			break;
		struct frozen *f = &fz[nfz++];
		f->v = v;
		f->dtype = e->dtype;
		ge_buf tp = GE_BUF_INIT;
		rc = ge_bundle_read_tensorproto(eb, e, &tp, err);
		if (!rc)
			ge_buf_lenfield(&f->value, 8, tp.data, tp.len);
		ge_buf_free(&tp);
	}
	plan_srcs_close(&srcs);

	/* the variables become constants, what nothing needs goes */
	for (size_t i = 0; i < nfz && !rc; i++)
		freeze_to_const(g, &fz[i], &keep);
	if (!rc)
		rc = remove_unkept(g, &keep, err);
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap && !rc; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		if (o && o->clear_devices)
			ge_op_set_device(g, (ge_opid)id, "");
		fix_colocation(g, (ge_opid)id);
	}
	for (size_t i = 0; i < nfz; i++)
		ge_buf_free(&fz[i].value);
	free(fz);
	ge_opset_free(&keep);
	ge_varlist_free(&vl);
	return rc;
}
