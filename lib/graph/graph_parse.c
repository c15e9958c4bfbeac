/*
 * graph_parse.c: GraphDef bytes into a graph (ge_graph_parse_graphdef_buf).
 *
 * The reader looks at each NodeDef's top-level fields only: name (1), op
 * (2), input (3) and device (4) are read; attrs (5) and everything else are
 * left in place and found again through op->raw when needed (graph_io.c's
 * writer copies an untouched node's bytes as they were).  Attrs are
 * checked for the lazy decoder at load, once per distinct bytes of a type.
 */
#include "graph/graph_impl.h"
#include "base/bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"

#define ATTR_ENTRY (&tensorflow__node_def__attr_entry__descriptor)

static const char *op_label(char *buf, size_t n, const ge_graph *g, size_t i)
{
	if (i < g->n_ops && g->ops[i].name && *g->ops[i].name)
		snprintf(buf, n, "node '%s'", g->ops[i].name);
	else
		snprintf(buf, n, "node #%zu", i);
	return buf;
}

/* The name (field 1) of possibly truncated NodeDef bytes, for messages. */
static void peek_name(const uint8_t *p, const uint8_t *end, char *out,
		      size_t cap)
{
	ge_wire_peek_str(p, end, GE_NODEDEF_NAME, out, cap);
}

/* Short byte strings (names, op types) are tested and compared eight
 * bytes a step, inline: a call to memchr or memcmp costs more than the
 * work on a name of twenty bytes.  Neither reads outside [p, p + n). */
static inline uint64_t load8(const void *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* Whether one of the eight bytes of w is 0. */
static inline int word_has_nul(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull;
	return ((w - ones) & ~w & ones * 0x80) != 0;
}

static inline int has_nul(const void *s, size_t n)
{
	const uint8_t *p = s;
	if (n < 8)
		return n && memchr(p, 0, n) != NULL;
	for (size_t i = 0; i + 8 < n; i += 8)
		if (word_has_nul(load8(p + i)))
			return 1;
	return word_has_nul(load8(p + n - 8));
}

static inline int same_bytes(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	if (n < 8)
		return !memcmp(x, y, n);
	for (size_t i = 0; i + 8 < n; i += 8)
		if (load8(x + i) != load8(y + i))
			return 0;
	return load8(x + n - 8) == load8(y + n - 8);
}

/* Node names, copied out of the GraphDef bytes one after the other into
 * blocks of the graph's arena, unaligned: an arena string each would
 * cost a call and round every name up to eight bytes. */
enum { NAMES_BLOCK = 64 << 10 };
struct name_block {
	char *p, *end;
};

/* The n bytes at s as a name of g, or NULL when they hold a NUL: tested
 * as they are copied, eight bytes a step. */
static const char *name_copy(ge_graph *g, struct name_block *nb, const void *s,
			     size_t n)
{
	const uint8_t *p = s;
	if (n < 8 || n >= NAMES_BLOCK / 4) {
		if (has_nul(s, n))
			return NULL;
		if (n >= NAMES_BLOCK / 4)
			return ge_arena_strndup(&g->arena, s, n);
	}
	if ((size_t)(nb->end - nb->p) <= n) {
		nb->p = ge_arena_alloc(&g->arena, NAMES_BLOCK);
		nb->end = nb->p + NAMES_BLOCK;
	}
	char *d = nb->p;
	if (n < 8) {
		memcpy(d, s, n);
	} else {
		uint64_t w;
		for (size_t i = 0; i + 8 < n; i += 8) {
			w = load8(p + i);
			if (word_has_nul(w))
				return NULL;
			memcpy(d + i, &w, 8);
		}
		w = load8(p + n - 8);
		if (word_has_nul(w))
			return NULL;
		memcpy(d + n - 8, &w, 8);
	}
	d[n] = 0;
	nb->p += n + 1;
	return d;
}

struct span {
	const char *p;
	size_t n;
};

/* What the first pass keeps of a node for the second (resolve_inputs), in
 * an array of the load's own, freed once the inputs are resolved: an op's
 * fields mean only what they say.  (resolve_inputs counts each producer's
 * uses and control outputs in its n_uses and n_couts, which fill_uses
 * turns into the pools' offsets.) */
struct scan {
	uint32_t nin;     /* the number of inputs */
	uint32_t in0;     /* where the first input starts in the node */
	uint32_t namelen; /* the name's length */
};

/* What scan_node finds of a node: its op type, device and attr span, and
 * its record for resolve_inputs. */
struct node_scan {
	struct span type, dev, attrs;
	struct scan rec;
};

static void scan_clear(ge_op *o)
{
	o->n_uses = o->n_couts = 0;
}

/* The field number of each one-byte tag of a length-delimited field 1 to
 * 5 of a NodeDef, 0 for any other byte. */
static const uint8_t usual_tag[256] = {
	[GE_TAG_LEN(GE_NODEDEF_NAME)] = GE_NODEDEF_NAME, [GE_TAG_LEN(GE_NODEDEF_OP)] = GE_NODEDEF_OP,
	[GE_TAG_LEN(GE_NODEDEF_INPUT)] = GE_NODEDEF_INPUT, [GE_TAG_LEN(GE_NODEDEF_DEVICE)] = GE_NODEDEF_DEVICE,
	[GE_TAG_LEN(GE_NODEDEF_ATTR)] = GE_NODEDEF_ATTR,
};

/* A NodeDef field the loop below does not read inline: 0 for one of 1 to
 * 5 (its number in *f, its length in *len, *pp at its payload), 1 for
 * another (its number in *f), skipped, -1 for a malformed one (*pp at
 * it). */
static int other_field(const uint8_t **pp, const uint8_t *end, uint32_t *f,
		       uint64_t *len)
{
	ge_wire w = {*pp, end, 0};
	ge_wire_field x;
	if (!ge_wire_next(&w, &x))
		return -1;
	if (x.num > GE_NODEDEF_ATTR) {
		*f = x.num;
		*pp = w.p;
		return 1;
	}
	if (x.wt != GE_WT_LEN)
		return -1;
	*f = x.num;
	*len = x.len;
	*pp = x.data;
	return 0;
}

/* First pass over one NodeDef: name, type, device, and the number of
 * inputs; checks the wire structure of the top-level fields. */
static int scan_node(ge_graph *g, struct name_block *nb, const uint8_t *p,
		     const uint8_t *end, size_t index, struct node_scan *out,
		     ge_error *err)
{
	const uint8_t *name = NULL, *type = NULL, *dev = NULL, *in0 = NULL;
	size_t name_len = 0, type_len = 0, dev_len = 0, nin = 0;
	const uint8_t *start = p;
	const uint8_t *attr0 = NULL, *attr1 = NULL;
	char lab[300];
	while (p < end) {
		uint64_t len;
		uint32_t f;
		const uint8_t *fs = p;
		/* the usual field, one of 1 to 5 with a tag and a length of
		 * one byte each, without the varint reads */
		if ((f = usual_tag[p[0]]) && end - p >= 2 && p[1] < 0x80) {
			len = p[1];
			p += 2;
		} else {
			/* through copies, so that p, f and len, whose
			 * addresses are never taken, stay in registers */
			const uint8_t *q = p;
			uint32_t f2 = 0;
			uint64_t l2 = 0;
			int r = other_field(&q, end, &f2, &l2);
			p = q;
			f = f2;
			len = l2;
			if (r < 0)
				goto bad;
			if (r > 0) {
				/* provenance.c reads only ops marked so; the
				 * ops are zeroed (scan_nodes callocs them) */
				if (f == GE_NODEDEF_DEBUG_INFO)
					g->ops[index].flags |= OPF_DBG_RAW;
				continue;
			}
		}
		if (len > (uint64_t)(end - p))
			goto bad;
		switch (f) {
		case GE_NODEDEF_NAME: name = p; name_len = len; break;
		case GE_NODEDEF_OP: type = p; type_len = len; break;
		case GE_NODEDEF_INPUT:
			if (!nin++)
				in0 = fs;
			break;
		case GE_NODEDEF_DEVICE: dev = p; dev_len = len; break;
		default: /* GE_NODEDEF_ATTR */
			/* checked once the node is known to be well formed
			 * (check_attr_span) */
			if (!attr0)
				attr0 = fs;
			attr1 = p + len;
			break;
		}
		p += len;
	}
	if (!name || !name_len)
		return ge_err(err, GE_EFORMAT, "%s: node #%zu has no name",
			      g->name, index);
	ge_op *o = &g->ops[index]; /* zeroed: scan_nodes callocs them */
	if (!(o->name = name_copy(g, nb, name, name_len)))
		return ge_err(err, GE_EFORMAT, "%s: node #%zu: name holds a NUL "
			      "byte", g->name, index);
	if (!type || !type_len)
		return ge_err(err, GE_EFORMAT, "%s: node '%s' has no op type",
			      g->name, o->name);
	/* a NUL in the op type or device is refused by scan_nodes, which
	 * looks for one only in those it has not met before */
	o->raw = start;
	o->raw_len = (uint32_t)(end - start);
	o->nout = -1;
	out->rec = (struct scan){(uint32_t)nin,
				 in0 ? (uint32_t)(in0 - start) : 0,
				 (uint32_t)name_len};
	out->type = (struct span){(const char *)type, type_len};
	out->dev = (struct span){(const char *)dev, dev_len};
	out->attrs = (struct span){(const char *)attr0,
				   attr0 ? (size_t)(attr1 - attr0) : 0};
	return GE_OK;
bad:
	return ge_err(err, GE_EFORMAT, "%s: %s: malformed NodeDef (bad field "
		      "at byte %zu of the node)", g->name,
		      op_label(lab, sizeof lab, g, index), (size_t)(p - start));
}

int ge_graph_parse_graphdef(const uint8_t *data, size_t len, const char *name,
			    ge_graph **out, ge_error *err)
{
	uint8_t *copy = ge_xmalloc(len ? len : 1);
	if (len)
		memcpy(copy, data, len);
	return ge_graph_parse_graphdef_buf(copy, len, 1, name, out, err);
}

/* How far ahead of the node walks the GraphDef bytes are fetched. */
enum { PREFETCH_AHEAD = 4096 };

/* The error of split_fields at the field where its walk stopped: a tag
 * that does not read, a node, or another field, named with the node
 * before it. */
static int bad_graphdef_field(const ge_graph *g, const ge_wire *w,
			      size_t n_nodes, const uint8_t *last_node,
			      size_t last_len, ge_error *err)
{
	ge_wire_bad b;
	ge_wire_why(w, &b);
	uint32_t num = b.num;
	size_t at = (size_t)(w->p - g->src);
	char nm[128];
	nm[0] = 0;
	if (num == GE_GRAPHDEF_NODE) {
		peek_name(b.data, w->end, nm, sizeof nm);
		if (*nm)
			return ge_err(err, GE_EFORMAT,
				      "%s: node '%s' (#%zu) is truncated or "
				      "corrupt (byte %zu)", g->name, nm, n_nodes,
				      at);
		return ge_err(err, GE_EFORMAT,
			      "%s: node #%zu is truncated or corrupt (byte "
			      "%zu)", g->name, n_nodes, at);
	}
	if (last_node)
		peek_name(last_node, last_node + last_len, nm, sizeof nm);
	if (!num)
		return ge_err(err, GE_EFORMAT,
			      "%s: not a GraphDef (bad field tag at byte "
			      "%zu%s%s%s)", g->name, at,
			      *nm ? ", after node '" : "", nm, *nm ? "'" : "");
	return ge_err(err, GE_EFORMAT,
		      "%s: truncated or corrupt GraphDef field %u (byte "
		      "%zu%s%s%s)", g->name, (unsigned)num, at,
		      *nm ? ", after node '" : "", nm, *nm ? "'" : "");
}

/* Parse step 1: counts the nodes and keeps the other top-level fields
 * (with how many nodes came before them) as raw fields. */
static int split_fields(ge_graph *g, size_t *n_nodes_out, ge_error *err)
{
	ge_wire w = ge_wire_of(g->src, g->src_len);
	ge_wire_field f;
	size_t n_nodes = 0, n_fields = 0;
	const uint8_t *last_node = NULL;
	size_t last_len = 0;
	while (ge_wire_next(&w, &f)) {
		if (f.num == GE_GRAPHDEF_NODE) {
			if (f.wt != GE_WT_LEN) {
				w.bad = 1;
				w.p = f.start;
				break;
			}
			last_node = f.data;
			last_len = f.len;
			n_nodes++;
			/* each node's tag is the first read of its bytes, and
			 * where it is depends on the last one's length: the
			 * bytes a few kilobytes on are fetched meanwhile
			 * (within the buffer) */
			if ((size_t)(w.end - w.p) > PREFETCH_AHEAD + 64) {
				__builtin_prefetch(w.p + PREFETCH_AHEAD);
				__builtin_prefetch(w.p + PREFETCH_AHEAD + 64);
			}
			continue;
		}
		g->fields = ge_xrealloc(g->fields,
					(n_fields + 1) * sizeof *g->fields);
		g->fields[n_fields++] = (ge_rawfield){
			f.start, (size_t)(w.p - f.start), (int)n_nodes};
		g->n_fields = n_fields;
	}
	if (w.bad)
		return bad_graphdef_field(g, &w, n_nodes, last_node, last_len,
					  err);
	/* after the last node: -1, after any nodes a save has */
	for (size_t i = 0; i < n_fields; i++)
		if (g->fields[i].after_nodes &&
		    (size_t)g->fields[i].after_nodes == n_nodes)
			g->fields[i].after_nodes = -1;
	if (n_nodes >= 0xfffffff0u)
		return ge_err(err, GE_EFORMAT, "%s: too many nodes", g->name);
	*n_nodes_out = n_nodes;
	return GE_OK;
}

/* Whether AttrEntry bytes are a key and a value that is one scalar field
 * (i, f, b, type, s or placeholder of AttrValue), each well formed: bytes
 * ge_pb_check accepts, as the only message among them is the value and
 * its one field is no message.  0 for anything else, which the full
 * check decides (most graphs repeat their scalar attrs, which the memo
 * below catches; a graph of distinct Consts does not). */
static int scalar_attr_entry(const uint8_t *p, const uint8_t *end)
{
	ge_wire w = {p, end, 0};
	ge_wire_field k, v, x;
	if (!ge_wire_next(&w, &k) || !ge_wire_is_len(&k, GE_MAPENTRY_KEY) ||
	    !ge_wire_next(&w, &v) || !ge_wire_is_len(&v, GE_MAPENTRY_VALUE) ||
	    w.p != end)
		return 0;
	ge_wire_init(&w, v.data, v.len);
	if (!ge_wire_next(&w, &x) || w.p != w.end)
		return 0;
	switch (x.num) {
	case GE_ATTR_I:
	case GE_ATTR_B:
	case GE_ATTR_TYPE:
		return x.wt == GE_WT_VARINT;
	case GE_ATTR_F:
		return x.wt == GE_WT_I32;
	case GE_ATTR_S:
	case GE_ATTR_PLACEHOLDER:
		return x.wt == GE_WT_LEN;
	default:
		return 0;
	}
}

/* Whether message bytes at level lv (0 TensorProto, 1 TensorShapeProto,
 * 2 TensorShapeProto.Dim) are fields ge_pb_check accepts, with every
 * message among them (tensor_shape 2, dim 2) walked likewise.  0 for
 * anything it is not sure of (resource_handle_val 14, variant_val 15, a
 * bad field), which the full check decides. */
/* What plain_tensor_fields notes of a TensorProto (level 0): its first
 * tensor_shape, and its tensor_content fields (the last one, and how
 * many). */
struct tensor_parts {
	struct span shape, content;
	unsigned n_content;
};

static int plain_tensor_fields(const uint8_t *p, const uint8_t *end, int lv,
			       struct tensor_parts *tp)
{
	enum { DIM = GE_TAG_LEN(GE_SHAPE_DIM),
	       SIZE = GE_TAG(GE_DIM_SIZE, GE_WT_VARINT) };
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	for (;;) {
		/* a Dim of a size under 128, 12 02 08 nn, four bytes at a
		 * time: what the walk below accepts of them, without it */
		if (lv == 1) {
			while (w.end - w.p >= 4 && w.p[0] == DIM &&
			       w.p[1] == 0x02 && w.p[2] == SIZE &&
			       w.p[3] < 0x80)
				w.p += 4;
		}
		if (!ge_wire_next(&w, &f))
			return !w.bad;
		if (f.wt != GE_WT_LEN)
			continue;
		const uint8_t *q = f.data;
		size_t l = f.len;
		if (lv == 0 && (f.num == GE_TENSOR_RESOURCE_HANDLE_VAL ||
				f.num == GE_TENSOR_VARIANT_VAL))
			return 0;
		/* a Dim of a size under 128 is the bytes 08 nn: no call */
		if (f.num == (lv ? GE_SHAPE_DIM : GE_TENSOR_SHAPE) && lv < 2 &&
		    !(lv == 1 && l == 2 && q[0] == SIZE && q[1] < 0x80) &&
		    !plain_tensor_fields(q, q + l, lv + 1, NULL))
			return 0;
		if (tp && f.num == GE_TENSOR_SHAPE && !tp->shape.p)
			/* as check.c's find_len */
			tp->shape = (struct span){(const char *)q, l};
		if (tp && f.num == GE_TENSOR_CONTENT) {
			tp->content = (struct span){(const char *)q, l};
			tp->n_content++;
		}
	}
}

/* Whether AttrEntry bytes are a key and a value that is one tensor field
 * (AttrValue 8) whose TensorProto plain_tensor_fields accepts: bytes
 * ge_pb_check accepts (the nesting, 5 deep, is far below its limit).
 * The Consts of a graph each hold their own value, so the memo below
 * rarely spares them this walk.  Sets *key and *tp (a shape of {NULL, 0}
 * when there is none). */
static int tensor_attr_entry(const uint8_t *p, const uint8_t *end,
			     struct span *key, struct tensor_parts *tp)
{
	_Static_assert(GE_MAX_DEPTH - 2 > 5, "tensor_attr_entry nests 5 deep");
	ge_wire w = {p, end, 0};
	ge_wire_field k, v, t;
	if (!ge_wire_next(&w, &k) || !ge_wire_is_len(&k, GE_MAPENTRY_KEY))
		return 0;
	*key = (struct span){(const char *)k.data, k.len};
	if (!ge_wire_next(&w, &v) || !ge_wire_is_len(&v, GE_MAPENTRY_VALUE) ||
	    w.p != end)
		return 0;
	ge_wire_init(&w, v.data, v.len);
	if (!ge_wire_next(&w, &t) || !ge_wire_is_len(&t, GE_ATTR_TENSOR) ||
	    w.p != w.end)
		return 0;
	*tp = (struct tensor_parts){{NULL, 0}, {NULL, 0}, 0};
	return plain_tensor_fields(t.data, t.data + t.len, 0, tp);
}

/* What the attr check (check.c) reads of a node's attr span: each field
 * whole, but of an attr whose value is a plain tensor only its key and
 * its shape, since of a well-formed tensor that check reads no more.  A
 * node whose span reads as that of an earlier node of its type that
 * passed (a Const with its own value, of the same shape) gets that
 * node's verdict.  Spans of more than SKEL_MAX pieces are not recorded. */
enum { SKEL_MAX = 8 };
struct skel {
	unsigned n, tensors; /* n > SKEL_MAX: not recorded */
	/* with one tensor, its one tensor_content field's bytes, or
	 * {NULL, 0} */
	struct span content;
	struct piece {
		const char *p;
		uint32_t n, kind; /* 0 field bytes, 1 tensor key, 2 shape */
	} pc[SKEL_MAX];
};

static void skel_add(struct skel *k, const void *p, size_t n, unsigned kind)
{
	if (k->n < SKEL_MAX && n <= UINT32_MAX)
		k->pc[k->n] = (struct piece){(const char *)p, (uint32_t)n,
					     kind};
	else
		k->n = SKEL_MAX;
	k->n++;
}

static uint64_t skel_hash(const char *type, const struct skel *k)
{
	uint64_t h = (uint64_t)(uintptr_t)type * 0x9e3779b97f4a7c15ull ^ k->n;
	for (unsigned i = 0; i < k->n; i++) {
		const unsigned char *p = (const unsigned char *)k->pc[i].p;
		size_t n = k->pc[i].n;
		uint64_t w = k->pc[i].kind | (uint64_t)n << 2;
		/* the first and last 8 bytes (a shape of rank 4 whole), or
		 * three of fewer: a collision costs a check, no more */
		if (n >= 8) {
			uint64_t a, b;
			memcpy(&a, p, 8);
			memcpy(&b, p + n - 8, 8);
			w ^= a * 0xff51afd7ed558ccdull ^ b;
		} else if (n) {
			w ^= ((uint64_t)p[0] | (uint64_t)p[n / 2] << 8 |
			      (uint64_t)p[n - 1] << 16) << 40;
		}
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h;
}

static int skel_eq(const struct skel *a, const struct skel *b)
{
	if (a->n != b->n)
		return 0;
	for (unsigned i = 0; i < a->n; i++)
		if (a->pc[i].kind != b->pc[i].kind ||
		    a->pc[i].n != b->pc[i].n ||
		    !same_bytes(a->pc[i].p, b->pc[i].p, a->pc[i].n))
			return 0;
	return 1;
}

/* Attrs are decoded lazily, by protobuf-c, which recurses: their nesting
 * and wire types are checked at load, entry by entry, naming the first
 * bad one.  The span holds the node's attr fields (and whatever fields
 * stand between them), all well formed at the top level. */
static int check_attr_span(const ge_graph *g, const ge_op *o, struct span a,
			   struct skel *k, ge_error *err)
{
	k->n = k->tensors = 0;
	k->content = (struct span){NULL, 0};
	if (!a.n) /* no attrs: a.p is NULL */
		return GE_OK;
	ge_wire w = ge_wire_of(a.p, a.n);
	ge_wire_field f;
	size_t n_attr = 0;
	while (ge_wire_next(&w, &f)) {
		const uint8_t *fs = f.start, *p = f.data;
		size_t len = f.len;
		if (f.num != GE_NODEDEF_ATTR) {
			skel_add(k, fs, (size_t)(w.p - fs), 0);
			continue;
		}
		const char *why = NULL;
		struct span key;
		struct tensor_parts tp;
		if (tensor_attr_entry(p, p + len, &key, &tp)) {
			skel_add(k, key.p, key.n, 1);
			if (tp.shape.p)
				skel_add(k, tp.shape.p, tp.shape.n, 2);
			else
				skel_add(k, "", 0, 3);
			k->content = tp.n_content == 1 && !k->tensors
					     ? tp.content
					     : (struct span){NULL, 0};
			k->tensors++;
			n_attr++;
			continue;
		}
		skel_add(k, fs, (size_t)(p + len - fs), 0);
		if (!scalar_attr_entry(p, p + len) &&
		    ge_pb_check(ATTR_ENTRY, p, len, GE_MAX_DEPTH - 2, &why)) {
			char key[128];
			ge_wire_peek_str(p, p + len, GE_MAPENTRY_KEY, key,
					 sizeof key);
			return ge_err(err, GE_EFORMAT,
				      "%s: node '%s': attr %s%s%s#%zu is corrupt "
				      "(%s)",
				      g->name, o->name, *key ? "'" : "", key,
				      *key ? "' " : "", n_attr, why);
		}
		n_attr++;
	}
	return GE_OK;
}

/* Graphs repeat the same op type with the same attr bytes over and over
 * (every Relu of a float model).  A direct-mapped memo of the ops seen
 * with each (type, attr bytes) lets a load check those bytes once: a hit
 * is a node whose attrs are byte for byte those of an earlier node of the
 * same type, which passed.  Each op gets that earlier op's id as its
 * class (g->attr_cls), so the attr check against the OpDef (check.c) also
 * looks at each class once.  The memo only ever skips work whose result
 * is known, so a collision or an eviction costs a check, never a wrong
 * answer. */
enum { MEMO_BITS = 14 };
struct attr_memo {
	uint64_t h;
	const char *type; /* interned */
	const char *p;    /* attr bytes, in g->src */
	uint32_t n;
	ge_opid id;
};

/* Every node's attr bytes are hashed: sixteen bytes a step, in two
 * independent lanes, with the bytes left over read as the last sixteen
 * (or eight) of the span, overlapping what the lanes read.  The top bits
 * pick the slot, which the multiplies fill from every bit below them. */
static uint64_t span_hash(const char *type, struct span a)
{
	const uint64_t k1 = 0xff51afd7ed558ccdull, k2 = 0xc4ceb9fe1a85ec53ull;
	uint64_t h1 = (uint64_t)(uintptr_t)type * 0x9e3779b97f4a7c15ull ^ a.n;
	uint64_t h2 = a.n * k1;
	const char *p = a.p;
	size_t n = a.n;
	uint64_t w1 = 0, w2 = 0;
	for (; n >= 16; p += 16, n -= 16) {
		memcpy(&w1, p, 8);
		memcpy(&w2, p + 8, 8);
		h1 = (h1 ^ w1) * k1;
		h2 = (h2 ^ w2) * k2;
	}
	if (n && a.n >= 16) {
		memcpy(&w1, a.p + a.n - 16, 8);
		memcpy(&w2, a.p + a.n - 8, 8);
	} else if (n >= 8) {
		memcpy(&w1, p, 8);
		memcpy(&w2, p + n - 8, 8);
	} else if (n) {
		w1 = w2 = 0;
		memcpy(&w1, p, n);
	}
	if (n) {
		h1 = (h1 ^ w1) * k1;
		h2 = (h2 ^ w2) * k2;
	}
	uint64_t h = h1 ^ (h2 >> 31 | h2 << 33);
	h ^= h >> 32;
	h *= k2;
	return h ^ h >> 29;
}

/* The first op of each skeleton (struct skel) met, by type and
 * skeleton; g->attr_vcls holds, for a later op with the same skeleton
 * and other attr bytes, that op's id + 1 (0 for none). */
enum { VMEMO_BITS = 10 };
struct skel_memo {
	uint64_t h;
	const char *type; /* interned; NULL: empty slot */
	ge_opid id;
	struct skel k;
};

static struct skel_memo *skel_class(ge_graph *g, struct skel_memo *vmemo,
				     const char *type, const struct skel *k,
				     size_t i)
{
	uint64_t h = skel_hash(type, k);
	struct skel_memo *m = &vmemo[h >> (64 - VMEMO_BITS)];
	if (m->type == type && m->h == h && skel_eq(&m->k, k)) {
		g->attr_vcls[i] = m->id + 1;
		return m;
	}
	m->h = h;
	m->type = type;
	m->id = (ge_opid)i;
	m->k = *k;
	return m;
}

/* The Consts of a graph hold each their own values, so their attr bytes
 * miss the memo above; but a Const's bytes are mostly those of an
 * earlier one of its type and length, with other values in its
 * tensor_content.  Such bytes read field for field as that earlier
 * node's (every tag and length outside the content is the same byte at
 * the same place, and the walks skip the content whole), so they get its
 * verdict and skeleton without the walks.  One node is kept per slot of
 * (type, length), the last one whose span the walks passed with one
 * tensor of one tensor_content field, with the skeleton memo's slot that
 * holds its skeleton: while that slot holds the same op, a later node
 * with that skeleton gets the op's class without skel_class's hash and
 * compare. */
enum { CMEMO_BITS = 6 };
struct content_memo {
	const char *type; /* interned; NULL: empty slot */
	const char *p;    /* attr bytes, in g->src */
	uint32_t n, c0, c1; /* the span's length, its content's offsets */
	struct skel k;
	struct skel_memo *vm; /* the slot of k, and what it held */
	uint64_t vh;
	ge_opid vid;
};

static void content_class(ge_graph *g, struct skel_memo *vmemo,
			  struct content_memo *c, size_t i)
{
	struct skel_memo *m = c->vm;
	if (m && m->h == c->vh && m->type == c->type && m->id == c->vid) {
		g->attr_vcls[i] = m->id + 1;
		return;
	}
	m = skel_class(g, vmemo, c->type, &c->k, i);
	c->vm = m;
	c->vh = m->h;
	c->vid = m->id;
}

static struct content_memo *content_slot(struct content_memo *cm,
					 const char *type, size_t n)
{
	uint64_t h = ((uint64_t)(uintptr_t)type ^ n) * 0x9e3779b97f4a7c15ull;
	return &cm[h >> (64 - CMEMO_BITS)];
}

/* Whether attr bytes a are those of c's node but within its content. */
static int same_but_content(const struct content_memo *c, const char *type,
			    struct span a)
{
	return c->type == type && c->n == a.n &&
	       same_bytes(c->p, a.p, c->c0) &&
	       same_bytes(c->p + c->c1, a.p + c->c1, a.n - c->c1);
}

/* Op types and devices interned through a small cache of those last
 * seen: a graph has few of them, repeated node after node. */
enum { TCACHE = 16 };
struct tcache {
	const char *s; /* interned */
	size_t n;
};

static inline int intern_cached(ge_graph *g, struct tcache *c,
				struct span t, const char **out)
{
	struct tcache *e = &c[(t.n * 31 + (unsigned char)t.p[0] +
			       (unsigned char)t.p[t.n - 1]) % TCACHE];
	if (e->s && e->n == t.n && same_bytes(e->s, t.p, t.n)) {
		*out = e->s;
		return 0;
	}
	/* a NUL would cut it short on save */
	if (has_nul(t.p, t.n))
		return -1;
	e->s = *out = ge_intern(g, t.p, t.n);
	e->n = t.n;
	return 0;
}

/* The memos of scan_nodes. */
struct memos {
	struct attr_memo *memo;
	struct skel_memo *vmemo;
	struct content_memo *cmemo;
};

static void memos_free(struct memos *M)
{
	free(M->memo);
	free(M->vmemo);
	free(M->cmemo);
}

/* The attr class of op i, whose attr bytes are as: that of an earlier op
 * of its type with the same bytes (the memo), or its own after its attrs
 * pass, with the walks or with those of an earlier Const read as its
 * bytes but for their values; with the skeleton class of a tensor's. */
static int attr_class(ge_graph *g, struct memos *M, const ge_op *o,
		      size_t i, struct span as, ge_error *err)
{
	uint64_t h = span_hash(o->type, as);
	struct attr_memo *m = &M->memo[h >> (64 - MEMO_BITS)];
	if (m->h == h && m->type == o->type && m->n == as.n &&
	    (!as.n || !memcmp(m->p, as.p, as.n))) {
		g->attr_cls[i] = m->id;
		return GE_OK;
	}
	struct content_memo *c = content_slot(M->cmemo, o->type, as.n);
	struct skel k;
	int twin = same_but_content(c, o->type, as);
	if (!twin) {
		int rc = check_attr_span(g, o, as, &k, err);
		if (rc)
			return rc;
	}
	*m = (struct attr_memo){h, o->type, as.p, (uint32_t)as.n,
				(ge_opid)i};
	g->attr_cls[i] = (ge_opid)i;
	if (twin) {
		content_class(g, M->vmemo, c, i);
		return GE_OK;
	}
	struct skel_memo *vm = NULL;
	if (k.tensors && k.n <= SKEL_MAX)
		vm = skel_class(g, M->vmemo, o->type, &k, i);
	if (k.tensors == 1 && k.n <= SKEL_MAX && k.content.p &&
	    as.n <= UINT32_MAX)
		*c = (struct content_memo){
			o->type, as.p, (uint32_t)as.n,
			(uint32_t)(k.content.p - as.p),
			(uint32_t)(k.content.p - as.p + k.content.n),
			k, vm, vm->h, vm->id};
	return GE_OK;
}

/* Parse step 2: one op per node (name, type, device, raw bytes, and what
 * step 3 needs, in sc), and the number of inputs in all. */
static int scan_nodes(ge_graph *g, size_t n_nodes, struct scan *sc,
		      size_t *total_out, ge_error *err)
{
	g->ops = ge_big_alloc((n_nodes ? n_nodes : 1) * sizeof *g->ops);
	g->cap_ops = n_nodes ? n_nodes : 1;
	size_t total_in = 0;
	g->attr_cls = ge_big_alloc((n_nodes + 1) * sizeof *g->attr_cls);
	g->attr_vcls = ge_big_alloc((n_nodes + 1) * sizeof *g->attr_vcls);
	struct memos M = {
		ge_xcalloc((size_t)1 << MEMO_BITS, sizeof *M.memo),
		ge_xcalloc((size_t)1 << VMEMO_BITS, sizeof *M.vmemo),
		ge_xcalloc((size_t)1 << CMEMO_BITS, sizeof *M.cmemo),
	};
	struct tcache tcache[TCACHE] = {{NULL, 0}};
	const char *nodev = ge_intern(g, "", 0);
	struct name_block nb = {NULL, NULL};
	/* split_fields has checked the fields */
	ge_wire w = ge_wire_of(g->src, g->src_len);
	ge_wire_field f;
	for (size_t i = 0; ge_wire_next(&w, &f);) {
		if (f.num != GE_GRAPHDEF_NODE)
			continue;
		const uint8_t *p = f.data, *end = g->src + g->src_len;
		size_t l = f.len;
		/* as in split_fields: the bytes on, fetched meanwhile */
		if ((size_t)(end - p) > PREFETCH_AHEAD + 64) {
			__builtin_prefetch(p + PREFETCH_AHEAD);
			__builtin_prefetch(p + PREFETCH_AHEAD + 64);
		}
		struct node_scan ns = {{NULL, 0}, {NULL, 0}, {NULL, 0},
				       {0, 0, 0}};
		g->n_ops = i + 1;
		int rc = scan_node(g, &nb, p, p + l, i, &ns, err);
		struct span ts = ns.type, ds = ns.dev, as = ns.attrs;
		sc[i] = ns.rec;
		ge_op *o = &g->ops[i];
		o->device = nodev;
		if (!rc && (intern_cached(g, tcache, ts, &o->type) ||
			    (ds.n && intern_cached(g, tcache, ds, &o->device))))
			rc = ge_err(err, GE_EFORMAT,
				    "%s: node '%s': op type or device holds a "
				    "NUL byte", g->name, o->name);
		if (!rc)
			rc = attr_class(g, &M, o, i, as, err);
		if (rc) {
			memos_free(&M);
			return rc;
		}
		total_in += sc[i].nin;
		i++;
	}
	memos_free(&M);
	g->attr_cls_version = g->version;
	g->n_ops = n_nodes;
	g->n_live = n_nodes;
	*total_out = total_in;
	return GE_OK;
}

/* The producer an input names: most inputs name one of the last few
 * nodes (TensorFlow writes ops in creation order), whose names are in
 * cache, so those are tried before the index. */
static ge_opid find_producer(const ge_graph *g, const struct scan *sc,
			     size_t i, const char *s, size_t nl)
{
	for (size_t back = 1; back <= 4 && back <= i; back++) {
		if (sc[i - back].namelen == nl &&
		    same_bytes(g->ops[i - back].name, s, nl) &&
		    !(g->ops[i - back].flags & OPF_DUPNAME))
			return (ge_opid)(i - back);
	}
	return ge_idx_find_n(g, s, nl, 0);
}

/* Parse step 3: every node's inputs resolved into the pool; uses and
 * control outputs counted per producer (in its n_uses and n_couts), and
 * in all (*total_use, *total_cout); *forward set when an input names a
 * later op. */
static int resolve_inputs(ge_graph *g, const struct scan *sc,
			  size_t total_in, size_t *total_use,
			  size_t *total_cout, int *forward, ge_error *err)
{
	g->in_pool = ge_big_alloc((total_in ? total_in : 1) *
				  sizeof *g->in_pool);
	size_t pos = 0, nu = 0, nc = 0;
	int fwd = 0;
	char lab[300];
	for (size_t i = 0; i < g->n_ops; i++) {
		ge_op *o = &g->ops[i];
		/* the inputs of a node a few on, fetched meanwhile */
		if (i + 8 < g->n_ops)
			__builtin_prefetch(g->ops[i + 8].raw +
					   sc[i + 8].in0);
		o->in = g->in_pool + pos;
		/* from the first input to the last: the fields before and
		 * after (name, type, attrs) are not walked */
		const uint8_t *q = o->raw + sc[i].in0,
			      *qe = o->raw + o->raw_len;
		uint32_t nin = sc[i].nin;
		if (!nin)
			q = qe;
		/* n_in and n_ctrl, counted in registers */
		uint32_t n_in = 0, n_ctrl = 0;
		while (q < qe && n_in + n_ctrl < nin) {
			uint64_t l;
			/* scan_node has read each field: an input with a tag
			 * and a length of one byte each is read inline, any
			 * other field through copies (q stays in a register) */
			if (qe - q >= 2 && q[0] == GE_TAG_LEN(GE_NODEDEF_INPUT) &&
			    q[1] < 0x80) {
				l = q[1];
				q += 2;
			} else {
				ge_wire w = {q, qe, 0};
				ge_wire_field f;
				if (!ge_wire_next(&w, &f))
					break; /* scan_node read them all */
				q = w.p;
				if (f.num != GE_NODEDEF_INPUT)
					continue;
				q = f.data;
				l = f.len;
			}
			const char *s = (const char *)q;
			q += l;
			size_t off, nl;
			int32_t index;
			/* a NUL would cut the name short on save */
			int bad = has_nul(s, l) ||
				  ge_parse_input_inline(s, l, &off, &nl, &index);
			if (bad)
				return ge_err(err, GE_EFORMAT,
					      "%s: %s: malformed input '%.*s'",
					      g->name,
					      op_label(lab, sizeof lab, g, i),
					      (int)(l > 200 ? 200 : l), s);
			if (index != GE_CONTROL && n_ctrl)
				return ge_err(err, GE_EFORMAT,
					      "%s: %s: data input '%.*s' comes "
					      "after a control input",
					      g->name,
					      op_label(lab, sizeof lab, g, i),
					      (int)(l > 200 ? 200 : l), s);
			ge_opid pid = find_producer(g, sc, i, s + off, nl);
			ge_tref t;
			if (pid == GE_NOOP)
				t = (ge_tref){GE_NOOP,
					      (int32_t)ge_add_dangling(g, s, l)};
			else
				t = (ge_tref){pid, index};
			o->in[n_in + n_ctrl] = t;
			if (index == GE_CONTROL)
				n_ctrl++;
			else
				n_in++;
			if (pid != GE_NOOP) {
				fwd |= pid > i;
				if (index == GE_CONTROL) {
					g->ops[pid].n_couts++;
					nc++;
				} else {
					g->ops[pid].n_uses++;
					nu++;
				}
			}
		}
		o->n_in = n_in;
		o->n_ctrl = n_ctrl;
		pos += nin;
	}
	*forward = fwd;
	*total_use = nu;
	*total_cout = nc;
	return GE_OK;
}

/* Parse step 4: uses and control outputs in their pools, filled in
 * consumer order so each list is sorted without a sort. */
/* Op i as the consumer in its producers' lists. */
static inline void add_uses(ge_graph *g, size_t i)
{
	ge_op *o = &g->ops[i];
	for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
		ge_tref t = o->in[s];
		if (t.op == GE_NOOP)
			continue;
		ge_op *pr = &g->ops[t.op];
		if (s < o->n_in)
			pr->uses[pr->n_uses++] = (ge_use){(ge_opid)i, s};
		else
			pr->couts[pr->n_couts++] = (ge_opid)i;
	}
}

static void fill_uses(ge_graph *g, void *scratch, size_t total_use,
		      size_t total_cout, int forward)
{
	size_t n_nodes = g->n_ops;
	/* the uses pool takes over the pages of the load's scratch array
	 * (resident since the scan; every entry is written below), so that
	 * the scratch costs the load no fresh pages of its own */
	g->uses_pool = ge_big_realloc(scratch, (total_use ? total_use : 1) *
						       sizeof *g->uses_pool);
	g->couts_pool = ge_big_alloc((total_cout ? total_cout : 1) *
				     sizeof *g->couts_pool);
	size_t up = 0, cp = 0;
	/* When no input names a later op, an op's lists are placed before
	 * the walk reaches any consumer of it, so one pass over the ops
	 * does both (on a large graph each pass reads them all from
	 * memory); else the lists are all placed first. */
	for (size_t i = 0; i < n_nodes; i++) {
		ge_op *o = &g->ops[i];
		o->uses = g->uses_pool + up;
		o->couts = g->couts_pool + cp;
		up += o->n_uses;
		cp += o->n_couts;
		o->n_uses = o->n_couts = 0;
		if (!forward)
			add_uses(g, i);
	}
	for (size_t i = 0; forward && i < n_nodes; i++)
		add_uses(g, i);
}

int ge_graph_parse_graphdef_buf(uint8_t *data, size_t len, int take,
				const char *name, ge_graph **out, ge_error *err)
{
	ge_graph *g = ge_graph_new();
	ge_graph_set_name(g, name);
	g->src = data;
	g->src_owned = take;
	g->src_len = len;
	size_t n_nodes = 0, total_in = 0, total_use = 0, total_cout = 0;
	struct scan *sc = NULL;
	int rc;
	if ((rc = split_fields(g, &n_nodes, err)))
		goto fail;
	sc = ge_big_alloc((n_nodes ? n_nodes : 1) * sizeof *sc);
	if ((rc = scan_nodes(g, n_nodes, sc, &total_in, err)))
		goto fail;
	/* Name index.  A repeated name keeps the first op in the index. */
	ge_idx_build(g);
	int forward = 0;
	if ((rc = resolve_inputs(g, sc, total_in, &total_use, &total_cout,
				 &forward, err)))
		goto fail;
	fill_uses(g, sc, total_use, total_cout, forward);
	*out = g;
	return GE_OK;
fail:
	if (sc)
		ge_big_free(sc);
	/* pools may be partially filled; the ops point into them */
	for (size_t i = 0; i < g->n_ops; i++) {
		g->ops[i].flags &= ~(uint32_t)(OPF_IN_OWNED | OPF_USES_OWNED |
					       OPF_COUTS_OWNED);
		scan_clear(&g->ops[i]);
	}
	ge_graph_free(g);
	return rc;
}
