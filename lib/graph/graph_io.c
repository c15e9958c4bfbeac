/*
 * graph_io.c: GraphDef bytes out, validation, clone and reorder (the
 * reader is graph_parse.c).
 *
 * The reader looks at each NodeDef's top-level fields only and keeps the
 * node's bytes.  The writer copies an untouched node's bytes as they were,
 * so an unedited graph comes back byte for byte and an edit changes only
 * the nodes it touched.
 */
#include "graph/graph_impl.h"
#include "graph/graph_copy.h"
#include "base/bounds.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"

/* ------------------------------------------------------------ encoding */

/* An input as the graph names it: the general path of ge_op_encode_ex
 * (a dangling input's text as it was read). */
static void put_input_text(const ge_graph *g, ge_opid id, uint32_t s,
			   ge_buf *b)
{
	const ge_op *o = &g->ops[id];
	ge_tref t = o->in[s];
	if (t.op == GE_NOOP) {
		ge_buf_adds(b, g->dangling[t.index]);
		return;
	}
	if (s >= o->n_in)
		t.index = GE_CONTROL;
	ge_tensor_put(g, t, 1, b);
}

void ge_op_encode(const ge_graph *g, ge_opid id, ge_buf *out)
{
	ge_op_encode_ex(g, id, out, NULL);
}

/* ge_buf_reserve without the call when there is room: the encoder
 * asks once per field of every node it writes. */
static inline void room_for(ge_buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap)
		ge_buf_reserve(b, extra);
}

/* ge_buf_add, less the NUL (the encoder ends with one). */
static inline void add_bytes(ge_buf *b, const void *p, size_t n)
{
	room_for(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* An input as GraphDef writes it ("x", "x:1", "^x"), for a live op,
 * written into room reserved once (the field number is below 16, so its
 * tag is one byte): a re-encoded op costs one reserve per field and no
 * moves, which matters when a recipe adds ops by the hundred thousand. */
static void put_input(ge_buf *b, const ge_graph *g, ge_tref t, int ctl)
{
	/* the contract: a live op of this graph, and its name */
	assert(t.op < g->n_ops && g->ops[t.op].name);
	const char *nm = g->ops[t.op].name;
	size_t nl = strlen(nm), k = 0;
	char num[12];
	uint32_t x = t.index > 0 && !ctl ? (uint32_t)t.index : 0;
	while (x) {
		num[k++] = (char)('0' + x % 10);
		x /= 10;
	}
	size_t n = nl + (ctl ? 1 : 0) + (k ? k + 1 : 0);
	room_for(b, n + 11);
	uint8_t *p = b->data + b->len;
	*p++ = GE_TAG_LEN(GE_NODEDEF_INPUT);
	p = ge_put_uvarint(p, n);
	if (ctl)
		*p++ = '^';
	memcpy(p, nm, nl);
	p += nl;
	if (k) {
		*p++ = ':';
		while (k)
			*p++ = (uint8_t)num[--k];
	}
	b->len = (size_t)(p - b->data);
}

/* A string field whose tag is one byte, into room reserved by the
 * caller. */
static uint8_t *put_strfield(uint8_t *p, uint32_t field, const char *s,
			     size_t n)
{
	*p++ = (uint8_t)GE_TAG_LEN(field);
	p = ge_put_uvarint(p, n);
	memcpy(p, s, n);
	return p + n;
}

void ge_op_dbg_grow(ge_graph *g, ge_opid id, const ge_dbginfo *d)
{
	if (!d)
		return;
	/* at first as many as the graph has room for ops (a rewrite sets
	 * the fields of its ops in one pass), then by half */
	size_t n = g->n_dbg + g->n_dbg / 2;
	if (n < g->cap_ops)
		n = g->cap_ops;
	if (n <= id)
		n = (size_t)id + 1;
	g->dbg = ge_big_grow_zeroed(g->dbg, g->n_dbg, n, sizeof *g->dbg);
	g->n_dbg = n;
	g->dbg[id] = d;
}

void ge_op_encode_ex(const ge_graph *g, ge_opid id, ge_buf *out,
		     ge_input_text_fn text)
{
	const ge_op *o = &g->ops[id];
	const ge_dbginfo *dbg = ge_op_dbg(g, id);
	size_t nl = strlen(o->name), tl = strlen(o->type);
	room_for(out, nl + tl + 22);
	uint8_t *d = put_strfield(out->data + out->len, GE_NODEDEF_NAME, o->name, nl);
	d = put_strfield(d, GE_NODEDEF_OP, o->type, tl);
	out->len = (size_t)(d - out->data);
	for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
		/* the fast path: the graph's own names of live ops */
		if (!text && o->in[s].op != GE_NOOP) {
			put_input(out, g, o->in[s], s >= o->n_in);
			continue;
		}
		/* written in place and wrapped: no scratch buffer per op */
		size_t start = out->len;
		(text ? text : put_input_text)(g, id, s, out);
		ge_buf_wrap(out, start, GE_NODEDEF_INPUT);
	}
	if (*o->device) {
		size_t dl = strlen(o->device);
		room_for(out, dl + 11);
		d = put_strfield(out->data + out->len, GE_NODEDEF_DEVICE, o->device,
				 dl);
		out->len = (size_t)(d - out->data);
	}
	/* Attrs, then any other field, in the order they were read. */
	if (o->flags & OPF_SPLIT) {
		for (uint32_t i = 0; i < o->n_ents; i++) {
			const ge_attr_ent *e = &o->ents[i];
			size_t kl = strlen(e->key);
			room_for(out, ge_wire_entry_size(GE_NODEDEF_ATTR, kl,
							 e->len));
			uint8_t *p = ge_wire_put_entry(out->data + out->len,
						       GE_NODEDEF_ATTR, e->key,
						       kl, e->raw, e->len);
			out->len = (size_t)(p - out->data);
		}
	}
	if (o->raw) {
		/* kept fields that follow each other are copied as one run */
		const uint8_t *p = o->raw, *end = o->raw + o->raw_len;
		const uint8_t *run = p;
		ge_wire w = {p, end, 0};
		ge_wire_field f;
		/* up to the first malformed field, if any */
		while (ge_wire_next(&w, &f)) {
			if ((f.num >= GE_NODEDEF_NAME &&
			     f.num <= GE_NODEDEF_DEVICE) ||
			    (f.num == GE_NODEDEF_ATTR &&
			     (o->flags & OPF_SPLIT)) ||
			    (f.num == GE_NODEDEF_DEBUG_INFO && dbg)) {
				if (run < f.start)
					add_bytes(out, run,
						  (size_t)(f.start - run));
				run = w.p;
			}
		}
		if (run < w.p)
			add_bytes(out, run, (size_t)(w.p - run));
	}
	/* provenance set since the load, where the op's bytes had theirs */
	if (dbg && dbg->len)
		add_bytes(out, dbg->bytes, dbg->len);
	if (out->data)
		out->data[out->len] = 0;
}


/* Where emit_graphdef writes: a buffer, or a file writer's own buffer,
 * which it spills now and then.  The pieces of a save are many and small
 * (a node each), and nodes are encoded straight into that buffer. */
struct emit {
	ge_buf *b;   /* where pieces go: the caller's buffer or w's */
	ge_writer *w;/* the file writer whose buffer b is, or NULL */
	/* b's length at which to spill next: EMIT_FLUSH past what the last
	 * spill left (a writer spills only past its own size: not a call per
	 * node once b holds that much) */
	size_t flush_at;
};
enum { EMIT_DIRECT = 4096, EMIT_FLUSH = 1 << 16 };

static void em_flush(struct emit *e)
{
	if (e->w)
		ge_writer_spill(e->w);
	e->flush_at = e->b->len + EMIT_FLUSH;
}

static void em_put(struct emit *e, const void *p, size_t n)
{
	if (e->w && n >= EMIT_DIRECT) {
		/* writes what it gathered first */
		ge_writer_put(e->w, p, n);
		return;
	}
	ge_buf_add(e->b, p, n);
	if (e->b->len >= e->flush_at)
		em_flush(e);
}

/* GraphDef.library: a field that starts with its tag byte */
static int is_library_field(const ge_rawfield *f)
{
	return f->len && f->p[0] == GE_TAG_LEN(GE_GRAPHDEF_LIBRARY);
}

/* Writes the non-node fields from..to-1 (in file order: those before the
 * nodes, those between them, those after).  When the function library
 * changed, its first field is replaced by the library as it is now and
 * the others (a merge may add some) dropped; a graph that had none gets
 * it after the nodes. */
static void emit_fields(const ge_graph *g, size_t from, size_t to,
			int lib_changed, int *lib_done, struct emit *e)
{
	for (size_t i = from; i < to; i++) {
		const ge_rawfield *f = &g->fields[i];
		if (!lib_changed || !is_library_field(f)) {
			em_put(e, f->p, f->len);
			continue;
		}
		if (*lib_done)
			continue;
		*lib_done = 1;
		ge_buf pl = GE_BUF_INIT, hdr = GE_BUF_INIT;
		ge_parts.flib_encode_payload(g, &pl);
		ge_buf_tag(&hdr, GE_GRAPHDEF_LIBRARY, GE_WT_LEN);
		ge_buf_varint(&hdr, pl.len);
		em_put(e, hdr.data, hdr.len);
		em_put(e, pl.data, pl.len);
		ge_buf_free(&pl);
		ge_buf_free(&hdr);
	}
}

/* GraphDef.node's tag and a node's length (raw_len is 32 bits: at most
 * five varint bytes). */
static size_t node_header(uint8_t *h, uint32_t len)
{
	size_t n = 0;
	h[n++] = GE_TAG_LEN(GE_GRAPHDEF_NODE);
	while (len >= 0x80) {
		h[n++] = (uint8_t)(len | 0x80);
		len >>= 7;
	}
	h[n++] = (uint8_t)len;
	return n;
}

/* Encodes op id as a GraphDef node (tag, length, NodeDef) at the end of
 * b: room for a one-byte length is left before the NodeDef, and the
 * NodeDef moved along when its length takes more. */
static void encode_node(const ge_graph *g, ge_opid id, ge_buf *b)
{
	size_t at = b->len;
	room_for(b, 2);
	b->len += 2;
	ge_op_encode(g, id, b);
	size_t blen = b->len - at - 2;
	uint8_t h[11], *e = ge_put_uvarint(h + 1, blen);
	h[0] = GE_TAG_LEN(GE_GRAPHDEF_NODE);
	size_t hl = (size_t)(e - h);
	if (hl > 2) {
		ge_buf_reserve(b, hl - 2);
		memmove(b->data + at + hl, b->data + at + 2, blen);
		b->len += hl - 2;
		b->data[b->len] = 0;
	}
	memcpy(b->data + at, h, hl);
}

/* The GraphDef into buffer out, or through file writer w (out NULL). */
static void emit_graphdef(const ge_graph *g, ge_buf *out, ge_writer *w)
{
	ge_buf hdr = GE_BUF_INIT;
	struct emit em = {w ? ge_writer_buf(w) : out, w, EMIT_FLUSH}, *e = &em;
	ge_type_lens types;
	memset(&types, 0, sizeof types);
	int lib_changed = ge_graph_flib_changed(g), lib_done = 0;
	size_t fj = 0;
	while (fj < g->n_fields && g->fields[fj].after_nodes == 0)
		fj++;
	emit_fields(g, 0, fj, lib_changed, &lib_done, e);
	/* Untouched nodes that were neighbours in the input are one run of
	 * bytes there, header included: copy runs, not nodes. */
	const uint8_t *run = NULL, *run_end = NULL;
	for (size_t i = 0; i < g->n_ops; i++) {
		const ge_op *o = &g->ops[i];
		/* a field that stood between nodes goes back there */
		if (fj < g->n_fields && g->fields[fj].after_nodes > 0 &&
		    (size_t)g->fields[fj].after_nodes <= i) {
			if (run)
				em_put(e, run, (size_t)(run_end - run));
			run = NULL;
			size_t from = fj;
			while (fj < g->n_fields && g->fields[fj].after_nodes > 0 &&
			       (size_t)g->fields[fj].after_nodes <= i)
				fj++;
			emit_fields(g, from, fj, lib_changed, &lib_done, e);
		}
		if (o->flags & OPF_DEAD)
			continue;
		if (o->raw && !(o->flags & OPF_DIRTY)) {
			/* the node's tag and length stand right before it
			 * (made here, not in a ge_buf: once per node) */
			uint8_t h[8];
			size_t hl = node_header(h, o->raw_len);
			const uint8_t *start = o->raw - hl;
			size_t k = 0;
			if (start >= g->src)
				while (k < hl && start[k] == h[k])
					k++;
			if (k == hl) {
				if (run && start == run_end) {
					run_end = o->raw + o->raw_len;
					continue;
				}
				if (run)
					em_put(e, run, (size_t)(run_end - run));
				run = start;
				run_end = o->raw + o->raw_len;
				continue;
			}
		}
		if (run) {
			em_put(e, run, (size_t)(run_end - run));
			run = NULL;
		}
		/* a copy (graph_copy.h), written where the nodes gather */
		if (ge_op_encode_shared(g, (ge_opid)i, e->b, &types)) {
			if (e->b->len >= e->flush_at)
				em_flush(e);
			continue;
		}
		if (!o->raw || (o->flags & OPF_DIRTY)) {
			encode_node(g, (ge_opid)i, e->b);
			if (e->b->len >= e->flush_at)
				em_flush(e);
			continue;
		}
		hdr.len = 0;
		ge_buf_tag(&hdr, GE_GRAPHDEF_NODE, GE_WT_LEN);
		ge_buf_varint(&hdr, o->raw_len);
		em_put(e, hdr.data, hdr.len);
		em_put(e, o->raw, o->raw_len);
	}
	if (run)
		em_put(e, run, (size_t)(run_end - run));
	emit_fields(g, fj, g->n_fields, lib_changed, &lib_done, e);
	if (lib_changed && !lib_done) {
		ge_buf pl = GE_BUF_INIT;
		ge_parts.flib_encode_payload(g, &pl);
		hdr.len = 0;
		ge_buf_tag(&hdr, GE_GRAPHDEF_LIBRARY, GE_WT_LEN);
		ge_buf_varint(&hdr, pl.len);
		em_put(e, hdr.data, hdr.len);
		em_put(e, pl.data, pl.len);
		ge_buf_free(&pl);
	}
	em_flush(e);
	ge_buf_free(&hdr);
}

void ge_graph_encode_graphdef(const ge_graph *g, ge_buf *out)
{
	emit_graphdef(g, out, NULL);
}

void ge_graph_write_graphdef(const ge_graph *g, ge_writer *w)
{
	emit_graphdef(g, NULL, w);
}

/* ------------------------------------------------------------ merging */

/* Calls fn for each entry (field 1 or 2) of every library field of g,
 * with the name it defines. */
typedef void (*lib_fn)(void *ud, uint32_t field, const uint8_t *entry,
		       size_t entry_len, const uint8_t *name, size_t name_len);

static void each_library_entry(const ge_graph *g, lib_fn fn, void *ud)
{
	/* an edited library is read as it is now, not as it was loaded */
	ge_buf now = GE_BUF_INIT;
	ge_rawfield one;
	const ge_rawfield *fields = g->fields;
	size_t n_fields = g->n_fields;
	if (ge_graph_flib_changed(g)) {
		ge_buf pl = GE_BUF_INIT;
		ge_parts.flib_encode_payload(g, &pl);
		ge_buf_lenfield(&now, GE_GRAPHDEF_LIBRARY, pl.data, pl.len);
		ge_buf_free(&pl);
		one = (ge_rawfield){now.data, now.len, -1};
		fields = &one;
		n_fields = 1;
	}
	for (size_t i = 0; i < n_fields; i++) {
		ge_wire w = ge_wire_of(fields[i].p, fields[i].len), lw;
		ge_wire_field lf, ef;
		/* the field is the library whole, or not one */
		if (!ge_wire_next(&w, &lf) ||
		    !ge_wire_is_len(&lf, GE_GRAPHDEF_LIBRARY))
			continue;
		ge_wire_init(&lw, lf.data, lf.len);
		while (ge_wire_next(&lw, &ef)) {
			if (ef.wt != GE_WT_LEN)
				continue;
			const uint8_t *es = ef.start, *b = ef.data;
			size_t l2 = ef.len;
			uint32_t f = ef.num;
			const uint8_t *nm = NULL, *sig;
			size_t nl = 0, sl;
			if (f == GE_FLIB_FUNCTION &&
			    ge_wire_find_len(b, b + l2, GE_FUNCDEF_SIGNATURE, &sig,
					      &sl) == 0)
				ge_wire_find_len(sig, sig + sl, GE_OPDEF_NAME, &nm,
						  &nl);
			else if (f == GE_FLIB_GRADIENT)
				ge_wire_find_len(b, b + l2, GE_GRADIENTDEF_FUNCTION_NAME,
						  &nm, &nl);
			if (f == GE_FLIB_FUNCTION || f == GE_FLIB_GRADIENT)
				fn(ud, f, es, (size_t)(lw.p - es), nm,
				   nm ? nl : 0);
		}
	}
ge_buf_free(&now);
}

struct names {
	ge_buf list; /* NUL-separated "f<field>:name" */
};

static void collect_name(void *ud, uint32_t field, const uint8_t *e, size_t el,
			 const uint8_t *nm, size_t nl)
{
	(void)e;
	(void)el;
	struct names *n = ud;
	ge_buf_printf(&n->list, "%u:", field);
	ge_buf_add(&n->list, nm ? nm : (const uint8_t *)"", nl);
	ge_buf_addc(&n->list, 0);
}

struct merge {
	const struct names *have;
	ge_buf out; /* FunctionDefLibrary entries to add */
};

static void add_missing(void *ud, uint32_t field, const uint8_t *e, size_t el,
			const uint8_t *nm, size_t nl)
{
	struct merge *m = ud;
	char key[300];
	int k = snprintf(key, sizeof key, "%u:%.*s", field,
			 (int)(nl > 256 ? 256 : nl), nm ? (const char *)nm : "");
	const char *p = (const char *)m->have->list.data;
	const char *end = p ? p + m->have->list.len : NULL;
	for (; p && p < end; p += strlen(p) + 1)
		if ((size_t)k == strlen(p) && !memcmp(p, key, (size_t)k))
			return;
	ge_buf_add(&m->out, e, el);
}

static void append_field(ge_graph *g, const uint8_t *p, size_t n)
{
	uint8_t *copy = ge_arena_alloc(&g->arena, n ? n : 1);
	memcpy(copy, p, n);
	g->fields = ge_xrealloc(g->fields, (g->n_fields + 1) * sizeof *g->fields);
	g->fields[g->n_fields++] = (ge_rawfield){copy, n, -1};
}

void ge_graph_merge_fields(ge_graph *dst, const ge_graph *src)
{
	int have_versions = 0;
	for (size_t i = 0; i < dst->n_fields; i++)
		if (dst->fields[i].len && dst->fields[i].p[0] == GE_TAG_LEN(GE_GRAPHDEF_VERSIONS))
			have_versions = 1;
	for (size_t i = 0; i < src->n_fields && !have_versions; i++)
		if (src->fields[i].len &&
		    src->fields[i].p[0] == GE_TAG_LEN(GE_GRAPHDEF_VERSIONS)) {
			append_field(dst, src->fields[i].p, src->fields[i].len);
			break;
		}
	struct names have = {GE_BUF_INIT};
	each_library_entry(dst, collect_name, &have);
	struct merge m = {&have, GE_BUF_INIT};
	each_library_entry(src, add_missing, &m);
	if (m.out.len) {
		/* a second `library` field: protobuf merges repeated fields of
		 * a message given twice, so readers see one library */
		ge_buf f = GE_BUF_INIT;
		ge_buf_lenfield(&f, GE_GRAPHDEF_LIBRARY, m.out.data, m.out.len);
		append_field(dst, f.data, f.len);
		if (dst->flib)
			ge_parts.flib_add_field(dst,
					dst->fields[dst->n_fields - 1].p,
					dst->fields[dst->n_fields - 1].len);
		ge_buf_free(&f);
		dst->version++;
	}
	ge_buf_free(&have.list);
	ge_buf_free(&m.out);
}

/* ------------------------------------------------------------ validate */

/* Whether an op's attrs can include `key`: always for split attrs, else a
 * search of the node's bytes (a false positive only costs a split). */
static int op_may_have_attr(const ge_op *o, const char *key)
{
	if ((o->flags & OPF_SPLIT) || !o->raw)
		return 1;
	return memmem(o->raw, o->raw_len, key, strlen(key)) != NULL;
}

int ge_op_may_have_attr(const ge_graph *g, ge_opid id, const char *key)
{
	return op_may_have_attr(&g->ops[id], key);
}

/* ------------------------------------------------------------ clone */

void ge_graph_swap(ge_graph *a, ge_graph *b)
{
	ge_graph t = *a;
	*a = *b;
	*b = t;
	if (a->flib)
		ge_parts.flib_adopt(a);
	if (b->flib)
		ge_parts.flib_adopt(b);
	uint64_t v = (a->version > b->version ? a->version : b->version) + 1;
	a->version = v;
	b->version = v + 1;
}

ge_graph *ge_graph_clone(const ge_graph *src)
{
	ge_graph *g = ge_graph_new();
	ge_graph_set_name(g, src->name);
	g->format = src->format;
	g->prov_mode = src->prov_mode;
	g->version = src->version;
	g->src = ge_xmalloc(src->src_len ? src->src_len : 1);
	if (src->src_len)
		memcpy(g->src, src->src, src->src_len);
	g->src_len = src->src_len;
	g->src_owned = 1;
#define REBASE(ptr) ((ptr) ? g->src + ((const uint8_t *)(ptr) - src->src) : NULL)
	g->fields = ge_xmalloc((src->n_fields + 1) * sizeof *g->fields);
	for (size_t i = 0; i < src->n_fields; i++) {
		g->fields[i] = src->fields[i];
		g->fields[i].p = REBASE(src->fields[i].p);
	}
	g->n_fields = src->n_fields;
	if (ge_graph_flib_changed(src)) {
		/* the clone reads the library as it is now */
		size_t k = 0;
		for (size_t i = 0; i < g->n_fields; i++)
			if (!is_library_field(&g->fields[i]))
				g->fields[k++] = g->fields[i];
		g->n_fields = k;
		ge_buf pl = GE_BUF_INIT, f = GE_BUF_INIT;
		ge_parts.flib_encode_payload(src, &pl);
		ge_buf_lenfield(&f, GE_GRAPHDEF_LIBRARY, pl.data, pl.len);
		append_field(g, f.data, f.len);
		ge_buf_free(&pl);
		ge_buf_free(&f);
	}
	g->ops = ge_big_alloc((src->n_ops + 1) * sizeof *g->ops);
	g->cap_ops = src->n_ops + 1;
	g->n_ops = src->n_ops;
	g->n_live = src->n_live;
	for (size_t i = 0; i < src->n_ops; i++) {
		const ge_op *s = &src->ops[i];
		ge_op *o = &g->ops[i];
		*o = *s;
		o->name = ge_arena_strdup(&g->arena, s->name);
		o->type = ge_intern(g, s->type, strlen(s->type));
		o->device = ge_intern(g, s->device, strlen(s->device));
		o->raw = REBASE(s->raw);
		if (s->raw && !(src->src && s->raw >= src->src &&
				s->raw < src->src + src->src_len)) {
			/* a new op's attrs, in the source's arena */
			uint8_t *c = ge_arena_alloc(&g->arena, s->raw_len + 1);
			memcpy(c, s->raw, s->raw_len);
			o->raw = c;
		}
		/* heap arrays keep room for the next power of two (graph.c) */
		uint32_t nin = s->n_in + s->n_ctrl;
		o->in = ge_xmalloc(ge_edge_room(nin) * sizeof *o->in);
		if (nin) /* a new op's arrays may be NULL */
			memcpy(o->in, s->in, nin * sizeof *o->in);
		o->uses = ge_xmalloc(ge_edge_room(s->n_uses) * sizeof *o->uses);
		if (s->n_uses)
			memcpy(o->uses, s->uses, s->n_uses * sizeof *o->uses);
		o->couts = ge_xmalloc(ge_edge_room(s->n_couts) *
				      sizeof *o->couts);
		if (s->n_couts)
			memcpy(o->couts, s->couts,
			       s->n_couts * sizeof *o->couts);
		const ge_dbginfo *sd = ge_op_dbg(src, (ge_opid)i);
		if (sd) {
			size_t dl = sizeof *sd + sd->len;
			void *c = ge_arena_alloc(&g->arena, dl);
			memcpy(c, sd, dl);
			ge_op_set_dbg(g, (ge_opid)i, c);
		}
		o->flags |= OPF_IN_OWNED | OPF_USES_OWNED | OPF_COUTS_OWNED;
		o->flags &= ~(uint32_t)OPF_ENTS_OWNED;
		o->ents = NULL;
		if (s->n_ents) {
			o->ents = ge_xmalloc(ge_edge_room(s->n_ents) *
					     sizeof *o->ents);
			o->flags |= OPF_ENTS_OWNED;
			for (uint32_t k = 0; k < s->n_ents; k++) {
				const ge_attr_ent *se = &s->ents[k];
				ge_attr_ent *e = &o->ents[k];
				e->key = ge_arena_strdup(&g->arena, se->key);
				e->val = NULL;
				e->len = se->len;
				if (se->owned) {
					e->owned = ge_xmalloc(se->len ? se->len : 1);
					memcpy(e->owned, se->owned, se->len);
					e->raw = e->owned;
				} else if (se->raw >= src->src &&
					   se->raw < src->src + src->src_len) {
					e->owned = NULL;
					e->raw = REBASE(se->raw);
				} else { /* in the source's arena */
					uint8_t *c = ge_arena_alloc(
						&g->arena, se->len ? se->len : 1);
					if (se->len)
						memcpy(c, se->raw, se->len);
					e->owned = NULL;
					e->raw = c;
				}
			}
		}
	}
#undef REBASE
	ge_idx_grow(g, src->n_ops + 16);
	for (size_t i = 0; i < g->n_ops; i++)
		if (!(g->ops[i].flags & (OPF_DEAD | OPF_DUPNAME)))
			ge_idx_add(g, (ge_opid)i);
	for (size_t i = 0; i < src->n_dangling; i++)
		ge_add_dangling(g, src->dangling[i], strlen(src->dangling[i]));
	ge_names_copy(g, src);
	for (size_t i = 0; i < src->n_hooks; i++) {
		ge_graph_add_hooks(g, src->hooks[i]);
		if (src->hooks[i]->clone)
			src->hooks[i]->clone(g, src);
	}
	return g;
}

/* ------------------------------------------------------------ reorder */

int ge_graph_reorder(ge_graph *g, const ge_opid *perm, size_t n, ge_error *err)
{
	/* a body's ids are held by its function's signature tables */
	if (g->parent)
		return ge_err(err, GE_EINVAL,
			      "reorder: %s is a function body, whose node order "
			      "is not kept", g->name);
	if (n != g->n_live)
		return ge_err(err, GE_EINVAL,
			      "reorder: %zu ids given for %zu ops", n, g->n_live);
	ge_opid *newid = ge_xmalloc((g->n_ops + 1) * sizeof *newid);
	for (size_t i = 0; i < g->n_ops; i++)
		newid[i] = GE_NOOP;
	for (size_t i = 0; i < n; i++) {
		ge_opid id = perm[i];
		if (id >= g->n_ops || (g->ops[id].flags & OPF_DEAD) ||
		    newid[id] != GE_NOOP) {
			free(newid);
			return ge_err(err, GE_EINVAL,
				      "reorder: not a permutation of the live "
				      "ops (at position %zu)", i);
		}
		newid[id] = (ge_opid)i;
	}
	ge_op *ops = ge_big_alloc((n + 1) * sizeof *ops);
	for (size_t i = 0; i < g->n_ops; i++) {
		if (newid[i] == GE_NOOP) {
			/* dead op: its storage goes */
			ge_op *o = &g->ops[i];
			for (uint32_t k = 0; k < o->n_ents; k++) {
				free(o->ents[k].owned);
				if (o->ents[k].val)
					protobuf_c_message_free_unpacked(
						&o->ents[k].val->base, NULL);
			}
			o->n_ents = 0;
			if (o->flags & OPF_ENTS_OWNED)
				free(o->ents);
			if (o->flags & OPF_IN_OWNED)
				free(o->in);
			if (o->flags & OPF_USES_OWNED)
				free(o->uses);
			if (o->flags & OPF_COUTS_OWNED)
				free(o->couts);
			continue;
		}
		ops[newid[i]] = g->ops[i];
	}
	for (size_t i = 0; i < n; i++) {
		ge_op *o = &ops[i];
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++)
			if (o->in[s].op != GE_NOOP)
				o->in[s].op = newid[o->in[s].op];
		for (uint32_t k = 0; k < o->n_uses; k++)
			o->uses[k].op = newid[o->uses[k].op];
		for (uint32_t k = 0; k < o->n_couts; k++)
			o->couts[k] = newid[o->couts[k]];
	}
	/* the lists must be sorted by the new ids */
	for (size_t i = 0; i < n; i++) {
		ge_op *o = &ops[i];
		for (uint32_t a = 1; a < o->n_uses; a++) {
			ge_use u = o->uses[a];
			uint32_t b = a;
			while (b > 0 && (o->uses[b - 1].op > u.op ||
					 (o->uses[b - 1].op == u.op &&
					  o->uses[b - 1].slot > u.slot))) {
				o->uses[b] = o->uses[b - 1];
				b--;
			}
			o->uses[b] = u;
		}
		for (uint32_t a = 1; a < o->n_couts; a++) {
			ge_opid c = o->couts[a];
			uint32_t b = a;
			while (b > 0 && o->couts[b - 1] > c) {
				o->couts[b] = o->couts[b - 1];
				b--;
			}
			o->couts[b] = c;
		}
		/* the writer must not reuse bytes in the old position order;
		 * the bytes are still right, so nothing else changes */
	}
	if (g->prov)
		ge_parts.prov_renumber(g, newid, g->n_ops);
	if (g->dbg) {
		const ge_dbginfo **d = ge_big_alloc((n + 1) * sizeof *d);
		for (size_t i = 0; i < g->n_ops && i < g->n_dbg; i++)
			if (newid[i] != GE_NOOP)
				d[newid[i]] = g->dbg[i];
		ge_big_free(g->dbg);
		g->dbg = d;
		g->n_dbg = n + 1;
	}
	ge_big_free(g->ops);
	g->ops = ops;
	g->n_ops = n;
	g->cap_ops = n + 1;
	free(newid);
	ge_big_free(g->idx);
	g->idx = NULL;
	g->idx_cap = g->idx_used = 0;
	ge_coloc_drop(g);
	ge_idx_grow(g, n + 16);
	for (size_t i = 0; i < n; i++)
		if (!(g->ops[i].flags & OPF_DUPNAME))
			ge_idx_add(g, (ge_opid)i);
	g->version++;
	return GE_OK;
}
