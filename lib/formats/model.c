/*
 * model.c: files in and out (see model.h), and the containers (MetaGraphDef,
 * SavedModel) read and written around their graph; meta.c reads and
 * edits what they carry.
 *
 * A container is kept as a list of its top-level fields ("segments"), each
 * the exact bytes read.  The graph_def segment is replaced by the graph's
 * own encoding when saved; a segment that an edit decoded and changed is
 * re-packed; every other segment is copied as it was.  This is what keeps
 * files whose fields are out of order, or whose maps are unsorted, byte for
 * byte identical across a load and save.
 */
#include "graph/graph_impl.h"
#include "functions/func.h"
#include "base/bounds.h"
#include "base/fsutil.h"
#include "base/jsonpb.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "base/bundle.h"
#include "base/filemap.h"
#include "base/opreg.h"
#include "base/textpb.h"
#include "formats/tfjs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

#include "formats/meta_impl.h"

/* ------------------------------------------------------------ formats */

static const struct {
	const char *name;
	ge_format f;
} format_names[] = {
	{"graphdef", GE_FMT_GRAPHDEF},
	{"pb", GE_FMT_GRAPHDEF},
	{"graphdef-text", GE_FMT_GRAPHDEF_TEXT},
	{"pbtxt", GE_FMT_GRAPHDEF_TEXT},
	{"text", GE_FMT_GRAPHDEF_TEXT},
	{"meta", GE_FMT_META},
	{"metagraph", GE_FMT_META},
	{"meta-text", GE_FMT_META_TEXT},
	{"savedmodel", GE_FMT_SAVEDMODEL},
	{"savedmodel-text", GE_FMT_SAVEDMODEL_TEXT},
	{"tfjs", GE_FMT_TFJS},
};

const char *ge_format_name(ge_format f)
{
	switch (f) {
	case GE_FMT_AUTO: return "auto";
	case GE_FMT_GRAPHDEF: return "graphdef";
	case GE_FMT_GRAPHDEF_TEXT: return "graphdef-text";
	case GE_FMT_META: return "meta";
	case GE_FMT_META_TEXT: return "meta-text";
	case GE_FMT_SAVEDMODEL: return "savedmodel";
	case GE_FMT_SAVEDMODEL_TEXT: return "savedmodel-text";
	case GE_FMT_TFJS: return "tfjs";
	}
	return "?";
}

int ge_format_from_name(const char *name, ge_format *out)
{
	for (size_t i = 0; i < sizeof format_names / sizeof format_names[0];
	     i++)
		if (!strcmp(name, format_names[i].name)) {
			*out = format_names[i].f;
			return GE_OK;
		}
	if (!strcmp(name, "auto")) {
		*out = GE_FMT_AUTO;
		return GE_OK;
	}
	return GE_EINVAL;
}

int ge_format_is_text(ge_format f)
{
	return f == GE_FMT_GRAPHDEF_TEXT || f == GE_FMT_META_TEXT ||
	       f == GE_FMT_SAVEDMODEL_TEXT;
}

static ge_format to_text(ge_format f)
{
	switch (f) {
	case GE_FMT_GRAPHDEF: return GE_FMT_GRAPHDEF_TEXT;
	case GE_FMT_META: return GE_FMT_META_TEXT;
	case GE_FMT_SAVEDMODEL: return GE_FMT_SAVEDMODEL_TEXT;
	default: return f;
	}
}

static ge_format to_binary(ge_format f)
{
	switch (f) {
	case GE_FMT_GRAPHDEF_TEXT: return GE_FMT_GRAPHDEF;
	case GE_FMT_META_TEXT: return GE_FMT_META;
	case GE_FMT_SAVEDMODEL_TEXT: return GE_FMT_SAVEDMODEL;
	case GE_FMT_TFJS: return GE_FMT_GRAPHDEF;
	default: return f;
	}
}

/* ------------------------------------------------------------ sniffing */

/* Walks the top-level fields of a message; returns 0 if the bytes are a
 * well-formed sequence of fields, and records what it saw. */
struct shape {
	unsigned count[16];   /* occurrences of fields 1..15 */
	unsigned wt[16];      /* wire type of the last occurrence */
	unsigned other;       /* fields above 15 */
	const uint8_t *first_body[16];
	size_t first_len[16];
};

static int wire_shape(const uint8_t *p, const uint8_t *end, struct shape *s)
{
	memset(s, 0, sizeof *s);
	ge_wire w = {p, end, 0};
	ge_wire_field x;
	while (ge_wire_next(&w, &x)) {
		uint32_t f = x.num;
		if (f < 16) {
			if (!s->count[f] && x.wt == GE_WT_LEN) {
				s->first_body[f] = x.data;
				s->first_len[f] = x.len;
			}
			s->count[f]++;
			s->wt[f] = x.wt;
		} else {
			s->other++;
		}
	}
	return w.bad ? -1 : 0;
}

static int is_ident(const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '>' || c == '-' || c == '/'))
			return 0;
	}
	return 1;
}

/* Does a payload look like a NodeDef: a name and an op type, both plain
 * identifiers? */
static int looks_like_node(const uint8_t *p, size_t n)
{
	struct shape s;
	if (wire_shape(p, p + n, &s))
		return 0;
	return s.count[1] == 1 && s.wt[1] == 2 && s.count[2] == 1 &&
	       s.wt[2] == 2 && is_ident(s.first_body[2], s.first_len[2]);
}

static int looks_like_meta(const uint8_t *p, size_t n)
{
	struct shape s;
	if (wire_shape(p, p + n, &s) || s.other)
		return 0;
	for (int f = 1; f < 16; f++)
		if (s.count[f] && (f > 7 || s.wt[f] != 2))
			return 0;
	if (s.count[1] > 1 || s.count[2] > 1 || s.count[3] > 1 ||
	    s.count[7] > 1)
		return 0;
	if (s.count[1] && looks_like_node(s.first_body[1], s.first_len[1]))
		return 0;
	return 1;
}

static int looks_like_text(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
			 p[i] == '\r'))
		i++;
	if (i == n)
		return 0;
	if (!(p[i] == '#' || (p[i] >= 'a' && p[i] <= 'z') ||
	      (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_'))
		return 0;
	/* text: no control bytes in the first KiB except white space */
	size_t lim = n < 1024 ? n : 1024;
	for (size_t k = 0; k < lim; k++)
		if (p[k] < 0x20 && p[k] != '\n' && p[k] != '\t' && p[k] != '\r')
			return 0;
	return 1;
}

/* The first field name of a text message, skipping comments. */
static size_t first_text_field(const uint8_t *p, size_t n, const char **out)
{
	size_t i = 0;
	for (;;) {
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
				 p[i] == '\r'))
			i++;
		if (i < n && p[i] == '#') {
			while (i < n && p[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	size_t s = i;
	while (i < n && (p[i] == '_' || (p[i] >= 'a' && p[i] <= 'z') ||
			 (p[i] >= 'A' && p[i] <= 'Z') ||
			 (p[i] >= '0' && p[i] <= '9')))
		i++;
	*out = (const char *)p + s;
	return i - s;
}

static int name_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !memcmp(s, w, n);
}

/* The checks of ge_sniff before its walk of the binary fields: JSON and
 * the text formats.  1 when they decide (*f), 0 when the bytes are to be
 * walked as binary. */
static int sniff_head(const uint8_t *data, size_t len, ge_format *f)
{
	*f = GE_FMT_AUTO;
	if (!len)
		return 1;
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' ||
			   data[i] == '\r'))
		i++;
	if (i < len && data[i] == '{') {
		/* JSON: a tfjs model carries a GraphDef as modelTopology */
		if (memmem(data, len, "\"modelTopology\"", 15))
			*f = GE_FMT_TFJS;
		return 1;
	}
	if (looks_like_text(data, len)) {
		const char *t;
		size_t n = first_text_field(data, len, &t);
		if (name_is(t, n, "node") || name_is(t, n, "versions") ||
		    name_is(t, n, "library") || name_is(t, n, "version") ||
		    name_is(t, n, "debug_info"))
			*f = GE_FMT_GRAPHDEF_TEXT;
		else if (name_is(t, n, "meta_info_def") ||
			 name_is(t, n, "graph_def") ||
			 name_is(t, n, "saver_def") ||
			 name_is(t, n, "collection_def") ||
			 name_is(t, n, "signature_def") ||
			 name_is(t, n, "asset_file_def") ||
			 name_is(t, n, "object_graph_def"))
			*f = GE_FMT_META_TEXT;
		else if (name_is(t, n, "saved_model_schema_version") ||
			 name_is(t, n, "meta_graphs"))
			*f = GE_FMT_SAVEDMODEL_TEXT;
		return 1;
	}
	return 0;
}

ge_format ge_sniff(const uint8_t *data, size_t len)
{
	ge_format head;
	if (sniff_head(data, len, &head))
		return head;
	struct shape s;
	if (wire_shape(data, data + len, &s))
		return GE_FMT_AUTO;
	/* SavedModel: schema version (1, varint) and meta graphs (2) only */
	if (!s.other && (s.count[1] == 0 || s.wt[1] == 0) && s.count[2] &&
	    s.wt[2] == 2) {
		int only = 1;
		for (int f = 3; f < 16; f++)
			if (s.count[f])
				only = 0;
		if (only && s.first_body[2] &&
		    looks_like_meta(s.first_body[2], s.first_len[2]))
			return GE_FMT_SAVEDMODEL;
	}
	/* GraphDef: nodes (1), library (2), version (3, varint), versions
	 * (4), debug_info (5) */
	int gd = !s.other;
	for (int f = 6; f < 16; f++)
		if (s.count[f])
			gd = 0;
	if (s.count[3] && s.wt[3] != 0)
		gd = 0;
	if (s.count[1] && s.wt[1] != 2)
		gd = 0;
	if (s.count[2] > 1 || s.count[4] > 1 || s.count[5] > 1)
		gd = 0;
	if (gd && s.count[1] &&
	    (!s.first_body[1] ||
	     !looks_like_node(s.first_body[1], s.first_len[1])))
		gd = 0;
	if (gd && !s.count[1] && s.count[4]) {
		/* no nodes: versions is a VersionDef of varints */
		struct shape v;
		if (!s.first_body[4] ||
		    wire_shape(s.first_body[4], s.first_body[4] + s.first_len[4],
			       &v) ||
		    (v.count[1] && v.wt[1] != 0))
			gd = 0;
	}
	if (gd && (s.count[1] || s.count[4] || s.count[3]))
		return GE_FMT_GRAPHDEF;
	if (looks_like_meta(data, len) && s.count[2])
		return GE_FMT_META;
	return GE_FMT_AUTO;
}

/* ------------------------------------------------------------ containers */

static int split_segs(const uint8_t *p, size_t len, seg **out, size_t *n)
{
	seg *v = NULL;
	size_t k = 0, cap = 0;
	ge_wire w = ge_wire_of(p, len);
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		int is_len = f.wt == GE_WT_LEN;
		if (k == cap) {
			cap = cap ? cap * 2 : 16;
			v = ge_xrealloc(v, cap * sizeof *v);
		}
		v[k++] = (seg){f.num, f.start, (size_t)(w.p - f.start),
			       is_len ? f.data : NULL, is_len ? f.len : 0,
			       NULL, 0};
	}
	if (w.bad)
		goto bad;
	*out = v;
	*n = k;
	return 0;
bad:
	free(v);
	return -1;
}

static void segs_free(seg *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].msg)
			protobuf_c_message_free_unpacked(v[i].msg, NULL);
	free(v);
}

void ge_meta_free(ge_meta *m)
{
	if (!m)
		return;
	segs_free(m->sm, m->n_sm);
	segs_free(m->mg, m->n_mg);
	if (m->info)
		protobuf_c_message_free_unpacked(&m->info->base, NULL);
	free(m->buf);
	free(m->dir);
	free(m);
}

static seg *segs_clone(const seg *v, size_t n, const uint8_t *ob, uint8_t *nb)
{
	seg *c = ge_xmalloc((n ? n : 1) * sizeof *c);
	for (size_t i = 0; i < n; i++) {
		c[i] = v[i];
		c[i].p = nb + (v[i].p - ob);
		c[i].body = v[i].body ? nb + (v[i].body - ob) : NULL;
		c[i].msg = NULL;
		c[i].dirty = 0;
		if (v[i].msg) {
			/* carry edits over by re-packing into a fresh copy */
			size_t sz = protobuf_c_message_get_packed_size(v[i].msg);
			uint8_t *b = ge_xmalloc(sz ? sz : 1);
			protobuf_c_message_pack(v[i].msg, b);
			c[i].msg = ge_pb_unpack(
				v[i].msg->descriptor, sz, b);
			free(b);
			c[i].dirty = v[i].dirty;
		}
	}
	return c;
}

ge_meta *ge_meta_clone(const ge_meta *m)
{
	ge_meta *c = ge_xcalloc(1, sizeof *c);
	c->buf = ge_xmalloc(m->len ? m->len : 1);
	memcpy(c->buf, m->buf, m->len);
	c->len = m->len;
	c->savedmodel = m->savedmodel;
	c->sm = segs_clone(m->sm, m->n_sm, m->buf, c->buf);
	c->n_sm = m->n_sm;
	c->sm_sel = m->sm_sel;
	c->mg = segs_clone(m->mg, m->n_mg, m->buf, c->buf);
	c->n_mg = m->n_mg;
	if (m->info) {
		size_t sz = protobuf_c_message_get_packed_size(&m->info->base);
		uint8_t *b = ge_xmalloc(sz ? sz : 1);
		protobuf_c_message_pack(&m->info->base, b);
		c->info = (Tensorflow__MetaGraphDef__MetaInfoDef *)
			ge_pb_unpack(
				&tensorflow__meta_graph_def__meta_info_def__descriptor,
				sz, b);
		free(b);
	}
	c->dir = m->dir ? ge_xstrdup(m->dir) : NULL;
	return c;
}

static void meta_clone_hook(ge_graph *dst, const ge_graph *src)
{
	if (!src->meta)
		return;
	dst->meta = ge_meta_clone(src->meta);
	ge_meta_attach(dst);
}

static void meta_free_hook(ge_graph *g)
{
	ge_meta_free(g->meta);
	g->meta = NULL;
}

const ge_graph_hooks ge_meta_hooks = {
	.on_rename = ge_meta_on_rename,
	.on_remove = ge_meta_on_remove,
	.clone = meta_clone_hook,
	.free = meta_free_hook,
	.on_func_rename = ge_meta_on_func_rename,
	.func_pinned = ge_meta_func_pinned,
	.func_roots = ge_meta_func_roots,
};

void ge_meta_attach(ge_graph *g)
{
	ge_oplist_index_free(g->oplist_idx);
	g->oplist_idx = NULL;
	g->oplist = NULL;
	if (g->meta && g->meta->info && g->meta->info->stripped_op_list) {
		g->oplist = g->meta->info->stripped_op_list;
		g->oplist_idx = ge_oplist_index_new(g->oplist);
	}
}

/* Reads the tags of a MetaGraphDef's meta_info_def without decoding the
 * rest; returns a comma-joined, sorted-as-read list in buf. */
static void meta_tags(const uint8_t *p, size_t len, ge_buf *buf)
{
	seg *v;
	size_t n;
	buf->len = 0;
	ge_buf_addc(buf, 0);
	buf->len = 0;
	if (split_segs(p, len, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (v[i].field != MG_INFO || !v[i].body)
			continue;
		ge_wire w = ge_wire_of(v[i].body, v[i].body_len);
		ge_wire_field f;
		while (ge_wire_next(&w, &f)) {
			if (!ge_wire_is_len(&f, MI_TAGS))
				continue;
			if (buf->len)
				ge_buf_addc(buf, ',');
			ge_buf_add(buf, f.data, f.len);
		}
	}
	free(v);
}

/* Is every comma-separated tag of x also in y? */
static int tags_within(const char *x, const char *y)
{
	while (*x) {
		while (*x == ',' || *x == ' ')
			x++;
		size_t n = strcspn(x, ",");
		while (n && x[n - 1] == ' ')
			n--;
		if (n) {
			int found = 0;
			for (const char *t = y; *t;) {
				while (*t == ',' || *t == ' ')
					t++;
				size_t m = strcspn(t, ",");
				size_t mm = m;
				while (mm && t[mm - 1] == ' ')
					mm--;
				if (mm == n && !memcmp(t, x, n))
					found = 1;
				t += m;
			}
			if (!found)
				return 0;
		}
		x += strcspn(x, ",");
	}
	return 1;
}

/* Do two comma-separated tag lists name the same set? */
static int tagset_eq(const char *want, const char *have)
{
	return tags_within(want, have) && tags_within(have, want);
}

static int load_meta_bytes(ge_meta *m, const uint8_t *p, size_t len,
			   const char *name, ge_graph **out, ge_error *err)
{
	if (split_segs(p, len, &m->mg, &m->n_mg))
		return ge_err(err, GE_EFORMAT,
			      "%s: truncated or corrupt MetaGraphDef", name);
	const uint8_t *gp = (const uint8_t *)"";
	size_t glen = 0;
	int have_graph = 0;
	for (size_t i = 0; i < m->n_mg; i++) {
		seg *s = &m->mg[i];
		if (s->field == MG_GRAPH && s->body) {
			gp = s->body;
			glen = s->body_len;
			have_graph = 1;
		} else if (s->field == MG_INFO && s->body && !m->info) {
			m->info = (Tensorflow__MetaGraphDef__MetaInfoDef *)
				ge_pb_unpack(&tensorflow__meta_graph_def__meta_info_def__descriptor,
					     s->body_len, s->body);
			if (!m->info)
				return ge_err(err, GE_EFORMAT,
					      "%s: meta_info_def does not decode",
					      name);
		}
	}
	(void)have_graph;
	int rc = ge_meta_check_entries(m, name, err);
	if (rc)
		return rc;
	ge_graph *g;
	/* the graph borrows its bytes from the container it belongs to */
	ge_flib_install(); /* calls resolve to functions */
	rc = ge_graph_parse_graphdef_buf((uint8_t *)gp, glen, 0, name, &g,
					     err);
	if (rc)
		return rc;
	g->meta = m;
	ge_graph_add_hooks(g, &ge_meta_hooks);
	ge_meta_attach(g);
	*out = g;
	return GE_OK;
}

static int diagnose_binary(const uint8_t *data, size_t len, ge_format fmt,
			   const char *name, ge_error *err);

/* Parses binary bytes it takes ownership of (freed on failure too). */
static int parse_binary(uint8_t *data, size_t len, ge_format fmt,
			const char *name, const ge_load_opts *opts,
			ge_graph **out, ge_error *err)
{
	int rc;
	if (fmt == GE_FMT_GRAPHDEF) {
		ge_flib_install(); /* calls resolve to functions */
		rc = ge_graph_parse_graphdef_buf(data, len, 1, name, out, err);
		if (!rc)
			(*out)->format = GE_FMT_GRAPHDEF;
		return rc;
	}
	ge_meta *m = ge_xcalloc(1, sizeof *m);
	m->buf = data;
	m->len = len;
	ge_graph *g = NULL;
	if (fmt == GE_FMT_META) {
		rc = load_meta_bytes(m, m->buf, len, name, &g, err);
	} else {
		m->savedmodel = 1;
		if (split_segs(m->buf, len, &m->sm, &m->n_sm)) {
			rc = ge_err(err, GE_EFORMAT,
				    "%s: truncated or corrupt SavedModel", name);
			goto fail;
		}
		const char *want = opts && opts->tags ? opts->tags : NULL;
		size_t n_meta = 0, pick = (size_t)-1, serve = (size_t)-1;
		/* the one meta graph whose tags include "serve" (-2: several) */
		size_t with_serve = (size_t)-1;
		ge_buf tags = GE_BUF_INIT, all = GE_BUF_INIT;
		for (size_t i = 0; i < m->n_sm; i++) {
			if (m->sm[i].field != SM_META || !m->sm[i].body)
				continue;
			n_meta++;
			meta_tags(m->sm[i].body, m->sm[i].body_len, &tags);
			const char *t = tags.data ? (char *)tags.data : "";
			ge_buf_printf(&all, "%s[%s]", all.len ? ", " : "", t);
			if (want && tagset_eq(want, t) && pick == (size_t)-1)
				pick = i;
			if (tagset_eq("serve", t) && serve == (size_t)-1)
				serve = i;
			if (tags_within("serve", t)) {
				with_serve = with_serve == (size_t)-1 ? i
								       : (size_t)-2;
			}
			if (n_meta == 1 && !want)
				pick = i;
		}
		if (!want && n_meta > 1)
			pick = serve != (size_t)-1 ? serve
			       : with_serve < (size_t)-2 ? with_serve
							  : (size_t)-1;
		if (pick == (size_t)-1) {
			if (!n_meta)
				rc = ge_err(err, GE_EFORMAT,
					    "%s: SavedModel has no meta graph",
					    name);
			else
				rc = ge_err(err, GE_ENOTFOUND,
					    "%s: no meta graph with tags [%s]; "
					    "it has %s",
					    name, want ? want : "serve",
					    all.data ? (char *)all.data : "");
			ge_buf_free(&tags);
			ge_buf_free(&all);
			goto fail;
		}
		ge_buf_free(&tags);
		ge_buf_free(&all);
		m->sm_sel = pick;
		rc = load_meta_bytes(m, m->sm[pick].body, m->sm[pick].body_len,
				     name, &g, err);
	}
	if (rc)
		goto fail;
	g->format = fmt;
	*out = g;
	return GE_OK;
fail:
	if (rc == GE_EFORMAT && err &&
	    strstr(err->msg, "truncated or corrupt")) {
		/* a message that knows no more: say where the bytes stop */
		ge_error e2;
		if (diagnose_binary(m->buf, len, fmt, name, &e2))
			*err = e2;
	}
	ge_meta_free(m);
	return rc;
}

static const ProtobufCMessageDescriptor *desc_for(ge_format f)
{
	switch (to_binary(f)) {
	case GE_FMT_GRAPHDEF: return &tensorflow__graph_def__descriptor;
	case GE_FMT_META: return &tensorflow__meta_graph_def__descriptor;
	case GE_FMT_SAVEDMODEL: return &tensorflow__saved_model__descriptor;
	default: return NULL;
	}
}

static void register_any_types(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	ge_meta_register_types();
}

/* Where binary bytes that do not load stop making sense, as one error
 * naming the format and the field path ("node[8] 'w'"): the format that
 * was sniffed, or (fmt GE_FMT_AUTO) the one the bytes fit best.  Returns
 * 0 when the bytes are well formed for every candidate. */
static int diagnose_binary(const uint8_t *data, size_t len, ge_format fmt,
			   const char *name, ge_error *err)
{
	static const ge_format cands[] = {GE_FMT_GRAPHDEF, GE_FMT_META,
					  GE_FMT_SAVEDMODEL};
	char best[512] = "", path[512];
	long best_at = -1;
	unsigned best_mm = UINT32_MAX;
	ge_format best_f = GE_FMT_AUTO;
	for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
		if (fmt != GE_FMT_AUTO && to_binary(fmt) != cands[i])
			continue;
		unsigned mm;
		long at = ge_pb_diagnose(desc_for(cands[i]), data, len, path,
					 sizeof path, &mm);
		/* sniffing failed: claim a format only for bytes that fit it
		 * up to where they stop */
		if (at <= 0 || (fmt == GE_FMT_AUTO && mm))
			continue;
		if (mm < best_mm || (mm == best_mm && at > best_at)) {
			best_mm = mm;
			best_at = at;
			best_f = cands[i];
			snprintf(best, sizeof best, "%s", path);
		}
	}
	if (best_at < 0)
		return 0;
	return ge_err(err, GE_EFORMAT,
		      "%s: truncated or corrupt %s: %s%sbytes stop making sense "
		      "at byte %ld",
		      name,
		      best_f == GE_FMT_GRAPHDEF ? "GraphDef"
		      : best_f == GE_FMT_META   ? "MetaGraphDef"
						: "SavedModel",
		      best, *best ? ": " : "",
		      best_at);
}

/* ge_parse on a malloc'd block it takes ownership of.  *none (when not
 * NULL) is set when the bytes are refused as no model at all, rather than
 * as a model of some format that does not parse. */
static int parse_owned(uint8_t *data, size_t len, ge_format fmt,
		       const char *name, const ge_load_opts *opts,
		       ge_graph **out, ge_error *err, int *none)
{
	if (!name)
		name = "<string>";
	if (fmt == GE_FMT_AUTO) {
		if (!len) {
			free(data);
			if (none)
				*none = 1;
			return ge_err(err, GE_EFORMAT,
				      "%s: empty file, not a model", name);
		}
		fmt = ge_sniff(data, len);
		if (fmt == GE_FMT_AUTO && !looks_like_text(data, len) &&
		    data[0] != '{' &&
		    diagnose_binary(data, len, GE_FMT_AUTO, name, err)) {
			free(data);
			return GE_EFORMAT;
		}
		if (fmt == GE_FMT_AUTO) {
			free(data);
			if (none)
				*none = 1;
			return ge_err(err, GE_EFORMAT,
				      "%s: not a TensorFlow model (neither a "
				      "GraphDef, MetaGraphDef nor SavedModel, "
				      "in binary or text form)",
				      name);
		}
	}
	int rc;
	if (fmt == GE_FMT_TFJS) {
		rc = ge_tfjs_parse(data, len, name, out, err);
		free(data);
		return rc;
	}
	if (!ge_format_is_text(fmt))
		return parse_binary(data, len, fmt, name, opts, out, err);

	register_any_types();
	ProtobufCMessage *msg;
	rc = ge_textpb_parse((const char *)data, len, desc_for(fmt), name,
			     &msg, err);
	free(data);
	if (rc)
		return rc;
	size_t sz = protobuf_c_message_get_packed_size(msg);
	uint8_t *b = ge_xmalloc(sz ? sz : 1);
	protobuf_c_message_pack(msg, b);
	protobuf_c_message_free_unpacked(msg, NULL);
	rc = parse_binary(b, sz, to_binary(fmt), name, opts, out, err);
	if (!rc)
		(*out)->format = fmt;
	return rc;
}

int ge_parse(const uint8_t *data, size_t len, ge_format fmt, const char *name,
	     const ge_load_opts *opts, ge_graph **out, ge_error *err)
{
	uint8_t *copy = ge_xmalloc(len + 1);
	if (len) /* an empty buffer may have no data pointer at all */
		memcpy(copy, data, len);
	copy[len] = 0;
	return parse_owned(copy, len, fmt, name, opts, out, err, NULL);
}

/* ------------------------------------------------------------ load */

/* Joins a and b with a slash; -1 if the result would not fit. */
static int pjoin(char *out, size_t cap, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na + nb + 2 > cap)
		return -1;
	memcpy(out, a, na);
	out[na] = '/';
	memcpy(out + na + 1, b, nb + 1);
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cpb_name(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && !strcmp(path + n - 4, ".cpb");
}

/* Why a directory is not a SavedModel we read. */
static const char *chunked_or_missing(const char *dir)
{
	char p[PATH_MAX];
	if (!pjoin(p, sizeof p, dir, "saved_model.cpb") && file_exists(p))
		return "chunked SavedModel: not supported yet";
	return "directory holds no saved_model.pb or saved_model.pbtxt";
}

/* The message file of the SavedModel in dir, into file: its
 * saved_model.pb, else its saved_model.pbtxt.  1 when there is one, 0
 * when there is none, -1 when the path is too long. */
static int savedmodel_file(const char *dir, char *file, size_t cap)
{
	if (pjoin(file, cap, dir, "saved_model.pb"))
		return -1;
	if (file_exists(file))
		return 1;
	pjoin(file, cap, dir, "saved_model.pbtxt");
	return file_exists(file);
}

/* Whether directory d (a path of PATH_MAX bytes) is named variables or
 * assets, as the directories inside a SavedModel are; if so, d becomes
 * the directory above it, in the user's terms ("." becomes "..").  A
 * name of "." or ".." is resolved for its name. */
static int up_from_part(char *d)
{
	char r[PATH_MAX];
	char *slash = strrchr(d, '/');
	const char *last = slash ? slash + 1 : d, *name = last;
	int dots = !strcmp(last, ".") || !strcmp(last, "..");
	if (dots) {
		const char *rs = realpath(d, r) ? strrchr(r, '/') : NULL;
		if (!rs)
			return 0;
		name = rs + 1;
	}
	if (strcmp(name, "variables") && strcmp(name, "assets"))
		return 0;
	if (!dots) {
		if (slash == d)
			d[1] = 0;
		else if (slash)
			*slash = 0;
		else
			snprintf(d, PATH_MAX, ".");
	} else if (!strcmp(d, "."))
		snprintf(d, PATH_MAX, "..");
	else if (pjoin(r, sizeof r, d, ".."))
		return 0;
	else
		snprintf(d, PATH_MAX, "%s", r);
	return 1;
}

/* The SavedModel directory a file that is no model sits in, into sm: its
 * own directory, or the one above a variables/ or assets/ directory,
 * when that holds a SavedModel.  0 when there is none, or when the file
 * is that saved_model.pb itself (its own message says what is wrong
 * with it). */
static int savedmodel_around(const char *file, char *sm, size_t cap)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (!strncmp(base, "saved_model.", 12))
		return 0;
	char d[PATH_MAX], p[PATH_MAX];
	if (base == file)
		snprintf(d, sizeof d, ".");
	else if ((size_t)(base - 1 - file) >= sizeof d)
		return 0;
	else {
		memcpy(d, file, (size_t)(base - 1 - file));
		d[base - 1 - file] = 0;
		if (!*d) /* a file of the root directory */
			snprintf(d, sizeof d, "/");
	}
	if (savedmodel_file(d, p, sizeof p) <= 0 &&
	    (!up_from_part(d) || savedmodel_file(d, p, sizeof p) <= 0))
		return 0;
	snprintf(sm, cap, "%s", d);
	return 1;
}

/* A file that is no model at all (not one that fails to parse), in or
 * beside a SavedModel (its variables.index, fingerprint.pb,
 * keras_metadata.pb): the message says which directory to give instead. */
static void hint_savedmodel(const char *file, ge_error *err)
{
	char sm[PATH_MAX];
	if (!err || !savedmodel_around(file, sm, sizeof sm))
		return;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof err->msg - n,
		 "; %s holds a SavedModel: give that directory to load it", sm);
}

/* Smaller files are read: a mapping and its lease cost more than the
 * copy they save. */
#define MAP_MIN ((size_t)1 << 20)

/* Whether ge_sniff calls bytes that parsed as a GraphDef (g) a GraphDef:
 * its walk of the top-level fields, done from what the parse kept (the
 * fields besides nodes, the first node), so that a large file is walked
 * once, not twice.  0 when unsure: the caller then does it the long way. */
static int sniffs_as_graphdef(const ge_graph *g)
{
	unsigned count[6] = {0}, wt[6] = {0};
	if (!g->n_ops) /* ge_sniff has more to say of a graph without nodes */
		return 0;
	for (size_t i = 0; i < g->n_fields; i++) {
		ge_wire w = ge_wire_of(g->fields[i].p, g->fields[i].len);
		ge_wire_field f;
		if (!ge_wire_next(&w, &f) || f.num >= 6)
			return 0;
		count[f.num]++;
		wt[f.num] = f.wt;
	}
	if ((count[3] && wt[3] != 0) || count[2] > 1 || count[4] > 1 ||
	    count[5] > 1)
		return 0;
	return looks_like_node(g->ops[0].raw, g->ops[0].raw_len);
}

/* A large binary GraphDef: mapped, and parsed before the format is known
 * for sure (sniffs_as_graphdef).  GE_OK with *out; LONG_WAY when the
 * file is to be read and parsed the ordinary way (not mapped, not a
 * GraphDef, or bytes that do not parse: the ordinary way then gives the
 * message); another code is the error of a GraphDef asked for by fmt. */
enum { LONG_WAY = 1 };

static int load_mapped(const char *file, ge_format fmt, ge_graph **out,
		       ge_error *err)
{
	uint8_t *data;
	size_t len;
	ge_format head;
	if (!ge_file_map(file, MAP_MIN, &data, &len))
		return LONG_WAY;
	if (fmt != GE_FMT_GRAPHDEF && sniff_head(data, len, &head)) {
		ge_file_unmap(data, len);
		return LONG_WAY;
	}
	ge_error scratch;
	ge_graph *g;
	/* the graph owns the mapping from here, on failure too */
	ge_flib_install(); /* calls resolve to functions */
	int rc = ge_graph_parse_graphdef_buf(data, len, 2, file, &g,
					     fmt == GE_FMT_GRAPHDEF ? err
								    : &scratch);
	if (rc)
		return fmt == GE_FMT_GRAPHDEF ? rc : LONG_WAY;
	if (fmt != GE_FMT_GRAPHDEF && !sniffs_as_graphdef(g)) {
		ge_graph_free(g);
		return LONG_WAY;
	}
	g->format = GE_FMT_GRAPHDEF;
	*out = g;
	return GE_OK;
}

int ge_load(const char *path, const ge_load_opts *opts, ge_graph **out,
	    ge_error *err)
{
	ge_format fmt = opts ? opts->format : GE_FMT_AUTO;
	char file[PATH_MAX];
	int dir = is_dir(path);
	if (dir) {
		int found = savedmodel_file(path, file, sizeof file);
		if (found < 0)
			return ge_err(err, GE_EIO, "%s: path too long", path);
		if (!found)
			return ge_err(err, GE_EIO, "%s: %s", path,
				      chunked_or_missing(path));
	} else {
		if (cpb_name(path))
			return ge_err(err, GE_EFORMAT,
				      "%s: chunked SavedModel: not supported "
				      "yet",
				      path);
		if (strlen(path) >= sizeof file)
			return ge_err(err, GE_EIO, "%s: path too long", path);
		memcpy(file, path, strlen(path) + 1);
	}
	uint8_t *data;
	size_t len;
	ge_graph *g;
	int rc;
	/* a binary GraphDef's ops point into its bytes: a large one is
	 * mapped, not copied (filemap.h says why that is safe) */
	if (!dir && (fmt == GE_FMT_AUTO || fmt == GE_FMT_GRAPHDEF)) {
		rc = load_mapped(file, fmt, &g, err);
		if (rc == GE_OK)
			goto check;
		if (rc != LONG_WAY)
			return rc;
	}
	rc = ge_file_read(file, &data, &len, err);
	if (rc)
		return rc;
	if (dir && fmt == GE_FMT_AUTO) {
		fmt = ge_sniff(data, len);
		if (fmt != GE_FMT_SAVEDMODEL && fmt != GE_FMT_SAVEDMODEL_TEXT) {
			if (!len || looks_like_text(data, len) ||
			    !diagnose_binary(data, len, GE_FMT_SAVEDMODEL, file,
					     err))
				ge_err(err, GE_EFORMAT,
				       "%s: not a SavedModel message", file);
			free(data);
			return GE_EFORMAT;
		}
	}
	int none = 0;
	rc = parse_owned(data, len, fmt, file, opts, &g, err, &none);
	if (rc) {
		if (none && !dir)
			hint_savedmodel(file, err);
		return rc;
	}
check:;
	ge_buf why = GE_BUF_INIT;
	if (!(opts && opts->no_check) && ge_graph_check_attrs(g, 1, 1, &why)) {
		if (why.len && why.data[why.len - 1] == '\n')
			why.data[--why.len] = 0;
		rc = ge_err(err, GE_EFORMAT, "%s: %s", file, (char *)why.data);
		ge_buf_free(&why);
		ge_graph_free(g);
		return rc;
	}
	ge_buf_free(&why);
	/* the classes stay for the copies' attr verdicts (graph_copy.c),
	 * which read them while nothing changed since the load; the call
	 * check's list of ops naming functions is made from them now */
	ge_note_attr_funcs(g);
	if (g->meta && g->meta->savedmodel) {
		char real[PATH_MAX];
		const char *d = dir ? path : NULL;
		char tmp[PATH_MAX];
		if (!d) {
			/* a saved_model.pb named directly: its directory */
			snprintf(tmp, sizeof tmp, "%s", path);
			char *slash = strrchr(tmp, '/');
			if (slash)
				*slash = 0;
			else
				snprintf(tmp, sizeof tmp, ".");
			d = tmp;
		}
		g->meta->dir = ge_xstrdup(realpath(d, real) ? real : d);
		ge_graph_set_name(g, path);
	}
	*out = g;
	return GE_OK;
}

/* ------------------------------------------------------------ encoding */

static void put_seg(ge_buf *out, const seg *s)
{
	if (!s->dirty || !s->msg) {
		ge_buf_add(out, s->p, s->len);
		return;
	}
	size_t sz = protobuf_c_message_get_packed_size(s->msg);
	ge_buf_tag(out, s->field, 2);
	ge_buf_varint(out, sz);
	ge_buf_reserve(out, sz);
	protobuf_c_message_pack(s->msg, out->data + out->len);
	out->len += sz;
	out->data[out->len] = 0;
}

static void encode_meta(const ge_graph *g, ge_buf *out)
{
	const ge_meta *m = g->meta;
	int wrote_graph = 0;
	for (size_t i = 0; i < m->n_mg; i++) {
		const seg *s = &m->mg[i];
		if (s->field == MG_GRAPH) {
			if (wrote_graph)
				continue;
			ge_buf gb = GE_BUF_INIT;
			ge_graph_encode_graphdef(g, &gb);
			ge_buf_lenfield(out, MG_GRAPH, gb.data, gb.len);
			ge_buf_free(&gb);
			wrote_graph = 1;
			continue;
		}
		put_seg(out, s);
	}
	if (!wrote_graph && g->n_live) {
		ge_buf gb = GE_BUF_INIT;
		ge_graph_encode_graphdef(g, &gb);
		ge_buf_lenfield(out, MG_GRAPH, gb.data, gb.len);
		ge_buf_free(&gb);
	}
}

static void encode_binary(const ge_graph *g, ge_format f, ge_buf *out)
{
	const ge_meta *m = g->meta;
	if (f == GE_FMT_GRAPHDEF || !m) {
		if (f == GE_FMT_GRAPHDEF) {
			ge_graph_encode_graphdef(g, out);
			return;
		}
		/* a plain graph asked for as a container: wrap it */
		ge_buf gb = GE_BUF_INIT;
		ge_graph_encode_graphdef(g, &gb);
		if (f == GE_FMT_META) {
			ge_buf_lenfield(out, MG_GRAPH, gb.data, gb.len);
		} else {
			ge_buf mb = GE_BUF_INIT;
			ge_buf_tag(out, 1, 0);
			ge_buf_varint(out, 1);
			ge_buf_lenfield(&mb, MG_GRAPH, gb.data, gb.len);
			ge_buf_lenfield(out, SM_META, mb.data, mb.len);
			ge_buf_free(&mb);
		}
		ge_buf_free(&gb);
		return;
	}
	if (f == GE_FMT_META || !m->savedmodel) {
		if (f == GE_FMT_SAVEDMODEL) {
			ge_buf mb = GE_BUF_INIT;
			encode_meta(g, &mb);
			ge_buf_tag(out, 1, 0);
			ge_buf_varint(out, 1);
			ge_buf_lenfield(out, SM_META, mb.data, mb.len);
			ge_buf_free(&mb);
			return;
		}
		encode_meta(g, out);
		return;
	}
	for (size_t i = 0; i < m->n_sm; i++) {
		if (i == m->sm_sel) {
			ge_buf mb = GE_BUF_INIT;
			encode_meta(g, &mb);
			ge_buf_lenfield(out, SM_META, mb.data, mb.len);
			ge_buf_free(&mb);
			continue;
		}
		put_seg(out, &m->sm[i]);
	}
}

static ge_format resolve_format(const ge_graph *g, ge_format f)
{
	if (f != GE_FMT_AUTO)
		return f;
	f = (ge_format)g->format;
	if (f == GE_FMT_TFJS || f == GE_FMT_AUTO)
		f = GE_FMT_GRAPHDEF;
	return f;
}

int ge_serialize(const ge_graph *g, ge_format fmt, ge_buf *out, ge_error *err)
{
	fmt = resolve_format(g, fmt);
	if (fmt == GE_FMT_TFJS)
		return ge_err(err, GE_EINVAL,
			      "%s: a TensorFlow.js model is a model.json and "
			      "its shards, not one message: save it to a path "
			      "ending in .json",
			      g->name);
	if (!ge_format_is_text(fmt)) {
		encode_binary(g, fmt, out);
		return GE_OK;
	}
	register_any_types();
	ge_buf b = GE_BUF_INIT;
	encode_binary(g, to_binary(fmt), &b);
	const ProtobufCMessageDescriptor *d = desc_for(fmt);
	ProtobufCMessage *msg =
		ge_pb_unpack_depth(d, b.len, b.data, GE_MAX_DEPTH + 16);
	ge_buf_free(&b);
	if (!msg)
		return ge_err(err, GE_EFORMAT,
			      "%s: the graph does not encode as a valid %s "
			      "(a raw attr may be corrupt)",
			      g->name, d->name);
	ge_textpb_print(msg, out);
	protobuf_c_message_free_unpacked(msg, NULL);
	return GE_OK;
}

/* ------------------------------------------------------------ save */

ge_format ge_graph_format(const ge_graph *g)
{
	return (ge_format)g->format;
}

const char *ge_graph_savedmodel_dir(const ge_graph *g)
{
	return g->meta && g->meta->savedmodel ? g->meta->dir : NULL;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A SavedModel's checkpoint: when variables/ holds an index or data
 * shards, the index must read (table structure, block checksums, header)
 * and every entry must lie inside its data shard. */
int ge_savedmodel_verify(const char *dir, ge_error *err)
{
	char vdir[PATH_MAX], index[PATH_MAX];
	if (pjoin(vdir, sizeof vdir, dir, "variables") ||
	    pjoin(index, sizeof index, vdir, "variables.index"))
		return ge_err(err, GE_EIO, "%s: path too long", dir);
	struct stat st;
	int have_index = lstat(index, &st) == 0;
	int have_data = 0, rc = GE_OK;
	DIR *d = opendir(vdir);
	if (d) {
		struct dirent *e;
		while (!rc && (e = readdir(d))) {
			if (strncmp(e->d_name, "variables.", 10))
				continue;
			if (!strncmp(e->d_name, "variables.data-", 15))
				have_data = 1;
			/* the checkpoint's files stay inside the model */
			char rel[PATH_MAX], out[PATH_MAX];
			snprintf(rel, sizeof rel, "variables/%s", e->d_name);
			rc = ge_path_inside(dir, rel, dir, "checkpoint", out,
					    sizeof out, err);
		}
		closedir(d);
	}
	if (rc)
		return rc;
	if (!have_index && !have_data)
		return GE_OK;
	if (!have_index)
		return ge_err(err, GE_EFORMAT,
			      "%s: data shards without variables.index", vdir);
	ge_bundle *b;
	char prefix[PATH_MAX];
	pjoin(prefix, sizeof prefix, vdir, "variables");
	rc = ge_bundle_open(prefix, &b, err);
	if (rc)
		return rc;
	ge_bundle_close(b);
	return GE_OK;
}

/* A graph loaded from x.meta next to its checkpoint x.index: a SavedModel
 * saved from it gets that checkpoint as variables/ (entries copied with
 * their bytes and checksums).  Nothing when there is none. */
static int copy_meta_checkpoint(const ge_graph *g, const char *dir,
				ge_error *err)
{
	const char *name = g->name;
	size_t n = name ? strlen(name) : 0;
	if (n <= 5 || strcmp(name + n - 5, ".meta"))
		return GE_OK;
	char prefix[PATH_MAX], index[PATH_MAX], vdir[PATH_MAX], dst[PATH_MAX];
	if ((size_t)snprintf(prefix, sizeof prefix, "%.*s", (int)(n - 5),
			     name) >= sizeof prefix ||
	    (size_t)snprintf(index, sizeof index, "%s.index", prefix) >=
		    sizeof index ||
	    pjoin(vdir, sizeof vdir, dir, "variables") ||
	    pjoin(dst, sizeof dst, vdir, "variables"))
		return ge_err(err, GE_EIO, "%s: path too long", name);
	struct stat st;
	if (stat(index, &st) != 0)
		return GE_OK;
	ge_bundle *b;
	int rc = ge_bundle_open(prefix, &b, err);
	if (rc)
		return rc;
	ge_bundle_writer *w = NULL;
	if (mkdir(vdir, 0777) < 0 && errno != EEXIST)
		rc = ge_err(err, GE_EIO, "%s: %s", vdir, strerror(errno));
	if (!rc)
		rc = ge_bundle_writer_open(dst, &w, err);
	for (size_t i = 0; !rc && i < ge_bundle_count(b); i++)
		rc = ge_bundle_writer_copy(w, b, ge_bundle_entry_at(b, i), NULL,
					   err);
	if (w && rc)
		ge_bundle_writer_abort(w);
	else if (w)
		rc = ge_bundle_writer_finish(w, err);
	ge_bundle_close(b);
	return rc;
}

static int save_savedmodel(ge_graph *g, const char *path, ge_format fmt,
			   const ge_save_opts *o, ge_error *err)
{
	const char *srcdir = ge_graph_savedmodel_dir(g);
	if (srcdir && same_file(srcdir, path) && !(o && o->overwrite))
		return ge_err(err, GE_EIO,
			      "%s: refusing to overwrite the SavedModel the "
			      "graph was loaded from (use overwrite)",
			      path);
	if (srcdir && ge_verify()) {
		int vr = ge_savedmodel_verify(srcdir, err);
		if (vr)
			return vr;
	}
	char tmp[PATH_MAX];
	ge_tmp_clean(path);
	if (ge_tmp_create(path, 1, tmp, sizeof tmp) < 0)
		return ge_err(err, GE_EIO, "%s: cannot create: %s", path,
			      strerror(errno));
	chmod(tmp, 0777 & ~(mode_t)0022);
	int rc = GE_OK;
	/* everything of the source directory but the model file itself and
	 * the fingerprint, which describes the old saved_model.pb */
	if (srcdir) {
		DIR *d = opendir(srcdir);
		if (!d) {
			rc = ge_err(err, GE_EIO, "%s: %s", srcdir,
				    strerror(errno));
			goto fail;
		}
		struct dirent *e;
		while (!rc && (e = readdir(d))) {
			const char *n = e->d_name;
			if (!strcmp(n, ".") || !strcmp(n, "..") ||
			    !strcmp(n, "saved_model.pb") ||
			    !strcmp(n, "saved_model.pbtxt") ||
			    !strcmp(n, "fingerprint.pb"))
				continue;
			char a[PATH_MAX], b[PATH_MAX];
			if (pjoin(a, sizeof a, srcdir, n) ||
			    pjoin(b, sizeof b, tmp, n)) {
				rc = ge_err(err, GE_EIO, "%s/%s: path too long",
					    srcdir, n);
				break;
			}
			struct stat st;
			if (lstat(a, &st) == 0 && S_ISDIR(st.st_mode))
				rc = ge_copy_tree(a, b, err);
			else if (lstat(a, &st) == 0 && S_ISLNK(st.st_mode))
				rc = ge_err(err, GE_EIO,
					    "%s: a symlink at the top of a "
					    "SavedModel: refusing to copy it",
					    a);
			else
				rc = ge_copy_file(a, b, err);
		}
		closedir(d);
		if (rc)
			goto fail;
	}
	ge_buf out = GE_BUF_INIT;
	rc = ge_serialize(g, fmt, &out, err);
	if (rc) {
		ge_buf_free(&out);
		goto fail;
	}
	char file[PATH_MAX];
	pjoin(file, sizeof file, tmp,
	      ge_format_is_text(fmt) ? "saved_model.pbtxt" : "saved_model.pb");
	rc = ge_file_write_atomic(file, out.data, out.len, err);
	ge_buf_free(&out);
	if (!rc && !srcdir)
		rc = copy_meta_checkpoint(g, tmp, err);
	if (rc)
		goto fail;
	/* what the layers above keep with the graph (the variables that
	 * transforms duplicated) goes into the new directory too */
	for (size_t i = 0; i < g->n_hooks && !rc; i++)
		if (g->hooks[i]->save_dir)
			rc = g->hooks[i]->save_dir(g, srcdir, tmp, path, err);
	if (rc)
		goto fail;
	/* swap the new directory in: the destination holds the old or the
	 * new one at every instant */
	rc = ge_dir_swap(tmp, path, err);
	if (rc)
		goto fail;
	return GE_OK;
fail:
	ge_remove_tree(tmp);
	ge_tmp_forget(tmp);
	return rc;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* A tfjs model saved to a path that names no .json: the directory of its
 * model.json, as the converter's output directory. */
static int save_tfjs_dir(ge_graph *g, const char *dir,
			 const ge_save_opts *o, ge_error *err)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n + sizeof "/model.json" > sizeof p)
		return ge_err(err, GE_EIO, "%s: path too long", dir);
	snprintf(p, sizeof p, "%.*s/model.json", (int)n, dir);
	return ge_save(g, p, o, err);
}

/* Output names whose extension promises a format gerewrite does not
 * write: refused before anything is written, so that no file of the wrong
 * format appears under such a name.  NULL when the name is fine. */
static const char *unwritable_ext(const char *path)
{
	static const char *const exts[] = {
		".onnx", ".tflite", ".h5", ".hdf5", ".keras", ".pt",
		".pth", ".mlmodel", ".zip", NULL};
	size_t n = strlen(path);
	for (size_t i = 0; exts[i]; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && !strcasecmp(path + n - e, exts[i]))
			return exts[i];
	}
	return NULL;
}

int ge_save(ge_graph *g, const char *path, const ge_save_opts *o,
	    ge_error *err)
{
	ge_format fmt = o ? o->format : GE_FMT_AUTO;
	if (fmt == GE_FMT_AUTO && unwritable_ext(path))
		return ge_err(err, GE_EINVAL,
			      "%s: cannot write %s files (not a TensorFlow "
			      "graph format); name the output .pb, .pbtxt, "
			      ".meta, model.json (TensorFlow.js) or a "
			      "directory (SavedModel), or give a format",
			      path, unwritable_ext(path));
	if (fmt == GE_FMT_AUTO) {
		fmt = resolve_format(g, GE_FMT_AUTO);
		if (ends_with(path, ".json"))
			fmt = GE_FMT_TFJS;
		else if (ends_with(path, ".pbtxt") || ends_with(path, ".txt"))
			fmt = to_text(fmt);
		else if (ends_with(path, ".meta"))
			fmt = GE_FMT_META; /* what TensorFlow names .meta */
		else if (ends_with(path, ".pb"))
			fmt = to_binary(fmt);
		if ((fmt == GE_FMT_SAVEDMODEL || fmt == GE_FMT_SAVEDMODEL_TEXT) &&
		    (ends_with(path, ".pb") || ends_with(path, ".pbtxt"))) {
			/* a file path for a SavedModel graph: its GraphDef */
			fmt = ge_format_is_text(fmt) ? GE_FMT_GRAPHDEF_TEXT
						     : GE_FMT_GRAPHDEF;
		}
	}
	if (fmt == GE_FMT_SAVEDMODEL || fmt == GE_FMT_SAVEDMODEL_TEXT)
		return save_savedmodel(g, path, fmt, o, err);
	if (fmt == GE_FMT_TFJS && !ends_with(path, ".json"))
		return save_tfjs_dir(g, path, o, err);
	if (!(o && o->overwrite) && same_file(g->name, path))
		return ge_err(err, GE_EIO,
			      "%s: refusing to overwrite the file the graph "
			      "was loaded from (use overwrite)",
			      path);
	if (is_dir(path))
		return ge_err(err, GE_EIO, "%s: is a directory", path);
	if (fmt == GE_FMT_TFJS)
		return ge_tfjs_save(g, path, o, NULL, err);
	if (fmt == GE_FMT_GRAPHDEF) {
		/* stream: no second copy of a large graph in memory */
		ge_writer w;
		int rc = ge_writer_open(&w, path, err);
		if (rc)
			return rc;
		ge_graph_write_graphdef(g, &w);
		return ge_writer_commit(&w, err);
	}
	ge_buf out = GE_BUF_INIT;
	int rc = ge_serialize(g, fmt, &out, err);
	/* what the layers above keep with the graph (the values of
	 * duplicated variables) goes next to a MetaGraphDef, first: a save
	 * that cannot write them writes nothing */
	int meta = fmt == GE_FMT_META || fmt == GE_FMT_META_TEXT;
	for (size_t i = 0; i < g->n_hooks && !rc && meta; i++)
		if (g->hooks[i]->save_file)
			rc = g->hooks[i]->save_file(g, path,
						    o ? o->checkpoint : NULL,
						    err);
	if (!rc)
		rc = ge_file_write_atomic(path, out.data, out.len, err);
	ge_buf_free(&out);
	return rc;
}
