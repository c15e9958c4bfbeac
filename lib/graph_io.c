/*
 * graph_io.c: GraphDef bytes in and out, validation, clone and reorder.
 *
 * The reader looks at each NodeDef's top-level fields only: name (1), op
 * (2), input (3) and device (4) are read; attrs (5) and everything else are
 * left in place and found again through op->raw when needed.  The writer
 * copies an untouched node's bytes as they were, so an unedited graph comes
 * back byte for byte and an edit changes only the nodes it touched.
 */
#include "graph_impl.h"
#include "graph_copy.h"
#include "bounds.h"
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"

#define ATTR_ENTRY (&tensorflow__node_def__attr_entry__descriptor)

/* GraphDef and NodeDef field numbers */
enum { GD_NODE = 1, ND_NAME = 1, ND_OP = 2, ND_INPUT = 3, ND_DEVICE = 4,
       ND_ATTR = 5 };

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
	uint64_t tag, l;
	out[0] = 0;
	if (ge_read_varint(&p, end, &tag) || tag != ((ND_NAME << 3) | 2) ||
	    ge_read_varint(&p, end, &l))
		return;
	if (l > (uint64_t)(end - p))
		l = (uint64_t)(end - p);
	if (l >= cap)
		l = cap - 1;
	memcpy(out, p, l);
	out[l] = 0;
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
}

/* First pass over one NodeDef: name, type, device, and the number of
 * inputs; checks the wire structure of the top-level fields. */
struct span {
	const char *p;
	size_t n;
};

/* What the first pass keeps of a node for the second (resolve_inputs),
 * without an array of its own: counts that are zero until fill_uses
 * stand for them in the meantime. */
#define SCAN_NIN(o) ((o)->n_uses)       /* the number of inputs */
#define SCAN_IN0(o) ((o)->n_couts)      /* where the first input starts */
#define SCAN_NAMELEN(o) ((o)->n_ents)   /* the name's length */

static void scan_clear(ge_op *o)
{
	SCAN_NIN(o) = SCAN_IN0(o) = SCAN_NAMELEN(o) = 0;
}

static int scan_node(ge_graph *g, const uint8_t *p, const uint8_t *end,
		     size_t index, struct span *type_out,
		     struct span *dev_out, struct span *attrs_out, ge_error *err)
{
	const uint8_t *name = NULL, *type = NULL, *dev = NULL, *in0 = NULL;
	size_t name_len = 0, type_len = 0, dev_len = 0, nin = 0;
	const uint8_t *start = p;
	const uint8_t *attr0 = NULL, *attr1 = NULL;
	char lab[300];
	while (p < end) {
		uint64_t tag, len;
		const uint8_t *fs = p;
		if (ge_read_varint(&p, end, &tag))
			goto bad;
		uint32_t f = (uint32_t)(tag >> 3);
		int wt = (int)(tag & 7);
		if (f >= ND_NAME && f <= ND_ATTR) {
			if (wt != 2 || ge_read_varint(&p, end, &len) ||
			    len > (uint64_t)(end - p))
				goto bad;
			switch (f) {
			case ND_NAME: name = p; name_len = len; break;
			case ND_OP: type = p; type_len = len; break;
			case ND_INPUT:
				if (!nin++)
					in0 = fs;
				break;
			case ND_DEVICE: dev = p; dev_len = len; break;
			case ND_ATTR:
				/* checked once the node is known to be
				 * well formed (check_attr_span) */
				if (!attr0)
					attr0 = fs;
				attr1 = p + len;
				break;
			}
			p += len;
		} else if (f == 0 || ge_skip_field(&p, end, wt)) {
			goto bad;
		}
	}
	if (!name || !name_len)
		return ge_err(err, GE_EFORMAT, "%s: node #%zu has no name",
			      g->name, index);
	if (memchr(name, 0, name_len))
		return ge_err(err, GE_EFORMAT, "%s: node #%zu: name holds a NUL "
			      "byte", g->name, index);
	ge_op *o = &g->ops[index]; /* zeroed: scan_nodes callocs them */
	o->name = ge_arena_strndup(&g->arena, (const char *)name, name_len);
	if (!type || !type_len)
		return ge_err(err, GE_EFORMAT, "%s: node '%s' has no op type",
			      g->name, o->name);
	/* a NUL in the op type or device is refused by scan_nodes, which
	 * looks for one only in those it has not met before */
	o->raw = start;
	o->raw_len = (uint32_t)(end - start);
	o->nout = -1;
	SCAN_NIN(o) = (uint32_t)nin;
	SCAN_IN0(o) = in0 ? (uint32_t)(in0 - start) : 0;
	SCAN_NAMELEN(o) = (uint32_t)name_len;
	*type_out = (struct span){(const char *)type, type_len};
	*dev_out = (struct span){(const char *)dev, dev_len};
	*attrs_out = (struct span){(const char *)attr0,
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

/* Parse step 1: counts the nodes and keeps the other top-level fields
 * (with how many nodes came before them) as raw fields. */
static int split_fields(ge_graph *g, size_t *n_nodes_out, ge_error *err)
{
	const uint8_t *p = g->src, *end = g->src + g->src_len;
	size_t n_nodes = 0, n_fields = 0;
	const uint8_t *last_node = NULL;
	size_t last_len = 0;
	char nm[128];
	while (p < end) {
		const uint8_t *fs = p;
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag) || (tag >> 3) == 0) {
			nm[0] = 0;
			if (last_node)
				peek_name(last_node, last_node + last_len, nm,
					  sizeof nm);
			return ge_err(err, GE_EFORMAT,
				      "%s: not a GraphDef (bad field tag at byte "
				      "%zu%s%s%s)", g->name, (size_t)(fs - g->src),
				      *nm ? ", after node '" : "", nm,
				      *nm ? "'" : "");
		}
		if ((tag >> 3) == GD_NODE) {
			if ((tag & 7) != 2 || ge_read_varint(&p, end, &l) ||
			    l > (uint64_t)(end - p)) {
				peek_name(p, end, nm, sizeof nm);
				if (*nm)
					return ge_err(err, GE_EFORMAT,
						      "%s: node '%s' (#%zu) is "
						      "truncated or corrupt (byte "
						      "%zu)", g->name, nm, n_nodes,
						      (size_t)(fs - g->src));
				return ge_err(err, GE_EFORMAT,
					      "%s: node #%zu is truncated or "
					      "corrupt (byte %zu)", g->name,
					      n_nodes, (size_t)(fs - g->src));
			}
			last_node = p;
			last_len = (size_t)l;
			p += l;
			n_nodes++;
			continue;
		}
		if (ge_skip_field(&p, end, (int)(tag & 7))) {
			nm[0] = 0;
			if (last_node)
				peek_name(last_node, last_node + last_len, nm,
					  sizeof nm);
			return ge_err(err, GE_EFORMAT,
				      "%s: truncated or corrupt GraphDef field %u "
				      "(byte %zu%s%s%s)", g->name,
				      (unsigned)(tag >> 3), (size_t)(fs - g->src),
				      *nm ? ", after node '" : "", nm,
				      *nm ? "'" : "");
		}
		g->fields = ge_xrealloc(g->fields,
					(n_fields + 1) * sizeof *g->fields);
		g->fields[n_fields++] = (ge_rawfield){fs, (size_t)(p - fs),
						      (int)n_nodes};
		g->n_fields = n_fields;
	}
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
	uint64_t tag, l, v;
	if (ge_read_varint(&p, end, &tag) || tag != (1 << 3 | 2) ||
	    ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
		return 0;
	p += l;
	if (ge_read_varint(&p, end, &tag) || tag != (2 << 3 | 2) ||
	    ge_read_varint(&p, end, &l) || l != (uint64_t)(end - p) ||
	    ge_read_varint(&p, end, &tag))
		return 0;
	switch (tag) {
	case 3 << 3 | 0: /* i */
	case 5 << 3 | 0: /* b */
	case 6 << 3 | 0: /* type */
		return !ge_read_varint(&p, end, &v) && p == end;
	case 4 << 3 | 5: /* f */
		return end - p == 4;
	case 2 << 3 | 2: /* s */
	case 9 << 3 | 2: /* placeholder */
		return !ge_read_varint(&p, end, &l) && l == (uint64_t)(end - p);
	default:
		return 0;
	}
}

/* Whether message bytes at level lv (0 TensorProto, 1 TensorShapeProto,
 * 2 TensorShapeProto.Dim) are fields ge_pb_check accepts, with every
 * message among them (tensor_shape 2, dim 2) walked likewise.  0 for
 * anything it is not sure of (resource_handle_val 14, variant_val 15, a
 * bad field), which the full check decides. */
static int plain_tensor_fields(const uint8_t *p, const uint8_t *end, int lv,
			       struct span *shape)
{
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag) || (tag >> 3) == 0 ||
		    (tag >> 3) > 0x1fffffff)
			return 0;
		switch ((int)(tag & 7)) {
		case 0:
			if (ge_read_varint(&p, end, &l))
				return 0;
			continue;
		case 1:
		case 5:
			if (ge_skip_field(&p, end, (int)(tag & 7)))
				return 0;
			continue;
		case 2:
			break;
		default:
			return 0;
		}
		if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			return 0;
		uint64_t f = tag >> 3;
		if (lv == 0 && (f == 14 || f == 15))
			return 0;
		/* a Dim of a size under 128 is the bytes 08 nn: no call */
		if (f == 2 && lv < 2 &&
		    !(lv == 1 && l == 2 && p[0] == 0x08 && p[1] < 0x80) &&
		    !plain_tensor_fields(p, p + l, lv + 1, NULL))
			return 0;
		if (f == 2 && shape && !shape->p) /* as check.c's find_len */
			*shape = (struct span){(const char *)p, (size_t)l};
		p += l;
	}
	return 1;
}

/* Whether AttrEntry bytes are a key and a value that is one tensor field
 * (AttrValue 8) whose TensorProto plain_tensor_fields accepts: bytes
 * ge_pb_check accepts (the nesting, 5 deep, is far below its limit).
 * The Consts of a graph each hold their own value, so the memo below
 * rarely spares them this walk.  Sets *key and *shape (the TensorProto's
 * first tensor_shape, {NULL, 0} when none). */
static int tensor_attr_entry(const uint8_t *p, const uint8_t *end,
			     struct span *key, struct span *shape)
{
	_Static_assert(GE_MAX_DEPTH - 2 > 5, "tensor_attr_entry nests 5 deep");
	uint64_t tag, l;
	if (ge_read_varint(&p, end, &tag) || tag != (1 << 3 | 2) ||
	    ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
		return 0;
	*key = (struct span){(const char *)p, (size_t)l};
	p += l;
	if (ge_read_varint(&p, end, &tag) || tag != (2 << 3 | 2) ||
	    ge_read_varint(&p, end, &l) || l != (uint64_t)(end - p) ||
	    ge_read_varint(&p, end, &tag) || tag != (8 << 3 | 2) ||
	    ge_read_varint(&p, end, &l) || l != (uint64_t)(end - p))
		return 0;
	*shape = (struct span){NULL, 0};
	return plain_tensor_fields(p, end, 0, shape);
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
		    memcmp(a->pc[i].p, b->pc[i].p, a->pc[i].n))
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
	if (!a.n) /* no attrs: a.p is NULL */
		return GE_OK;
	const uint8_t *p = (const uint8_t *)a.p, *end = p + a.n;
	size_t n_attr = 0;
	while (p < end) {
		uint64_t tag, len;
		const uint8_t *fs = p;
		ge_read_varint(&p, end, &tag);
		if ((tag >> 3) != ND_ATTR) {
			ge_skip_field(&p, end, (int)(tag & 7));
			skel_add(k, fs, (size_t)(p - fs), 0);
			continue;
		}
		ge_read_varint(&p, end, &len);
		const char *why = NULL;
		struct span key, shape;
		if (tensor_attr_entry(p, p + len, &key, &shape)) {
			skel_add(k, key.p, key.n, 1);
			if (shape.p)
				skel_add(k, shape.p, shape.n, 2);
			else
				skel_add(k, "", 0, 3);
			k->tensors++;
			p += len;
			n_attr++;
			continue;
		}
		skel_add(k, fs, (size_t)(p + len - fs), 0);
		if (!scalar_attr_entry(p, p + len) &&
		    ge_pb_check(ATTR_ENTRY, p, len, GE_MAX_DEPTH - 2, &why)) {
			char key[128];
			peek_name(p, p + len, key, sizeof key);
			return ge_err(err, GE_EFORMAT,
				      "%s: node '%s': attr %s%s%s#%zu is corrupt "
				      "(%s)",
				      g->name, o->name, *key ? "'" : "", key,
				      *key ? "' " : "", n_attr, why);
		}
		p += len;
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

static uint64_t span_hash(const char *type, struct span a)
{
	uint64_t h = (uint64_t)(uintptr_t)type * 0x9e3779b97f4a7c15ull ^ a.n;
	const char *p = a.p;
	size_t n = a.n;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 32;
	return h * 0xc4ceb9fe1a85ec53ull;
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

static void skel_class(ge_graph *g, struct skel_memo *vmemo, const char *type,
		       const struct skel *k, size_t i)
{
	uint64_t h = skel_hash(type, k);
	struct skel_memo *m = &vmemo[h >> (64 - VMEMO_BITS)];
	if (m->type == type && m->h == h && skel_eq(&m->k, k)) {
		g->attr_vcls[i] = m->id + 1;
		return;
	}
	m->h = h;
	m->type = type;
	m->id = (ge_opid)i;
	m->k = *k;
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
	if (e->s && e->n == t.n && !memcmp(e->s, t.p, t.n)) {
		*out = e->s;
		return 0;
	}
	/* a NUL would cut it short on save */
	if (memchr(t.p, 0, t.n))
		return -1;
	e->s = *out = ge_intern(g, t.p, t.n);
	e->n = t.n;
	return 0;
}

/* Parse step 2: one op per node (name, type, device, raw bytes, and what
 * step 3 needs: SCAN_NIN and the others), and the number of inputs in
 * all. */
static int scan_nodes(ge_graph *g, size_t n_nodes, size_t *total_out,
		      ge_error *err)
{
	const uint8_t *p = g->src, *end = g->src + g->src_len;
	g->ops = ge_big_alloc((n_nodes ? n_nodes : 1) * sizeof *g->ops);
	g->cap_ops = n_nodes ? n_nodes : 1;
	size_t total_in = 0;
	g->attr_cls = ge_big_alloc((n_nodes + 1) * sizeof *g->attr_cls);
	struct attr_memo *memo = ge_xcalloc((size_t)1 << MEMO_BITS,
					    sizeof *memo);
	g->attr_vcls = ge_big_alloc((n_nodes + 1) * sizeof *g->attr_vcls);
	struct skel_memo *vmemo = ge_xcalloc((size_t)1 << VMEMO_BITS,
					     sizeof *vmemo);
	struct skel k;
	struct tcache tcache[TCACHE] = {{NULL, 0}};
	const char *nodev = ge_intern(g, "", 0);
	for (size_t i = 0; p < end;) {
		uint64_t tag, l;
		ge_read_varint(&p, end, &tag);
		if ((tag >> 3) != GD_NODE) {
			ge_skip_field(&p, end, (int)(tag & 7));
			continue;
		}
		ge_read_varint(&p, end, &l);
		struct span ts = {NULL, 0}, ds = {NULL, 0}, as = {NULL, 0};
		g->n_ops = i + 1;
		int rc = scan_node(g, p, p + l, i, &ts, &ds, &as, err);
		ge_op *o = &g->ops[i];
		o->device = nodev;
		if (!rc && (intern_cached(g, tcache, ts, &o->type) ||
			    (ds.n && intern_cached(g, tcache, ds, &o->device))))
			rc = ge_err(err, GE_EFORMAT,
				    "%s: node '%s': op type or device holds a "
				    "NUL byte", g->name, o->name);
		if (!rc) {
			uint64_t h = span_hash(o->type, as);
			struct attr_memo *m = &memo[h >> (64 - MEMO_BITS)];
			if (m->h == h && m->type == o->type && m->n == as.n &&
			    (!as.n || !memcmp(m->p, as.p, as.n))) {
				g->attr_cls[i] = m->id;
			} else if (!(rc = check_attr_span(g, o, as, &k, err))) {
				*m = (struct attr_memo){h, o->type, as.p,
							(uint32_t)as.n,
							(ge_opid)i};
				g->attr_cls[i] = (ge_opid)i;
				if (k.tensors && k.n <= SKEL_MAX)
					skel_class(g, vmemo, o->type, &k, i);
			}
		}
		if (rc) {
			free(memo);
			free(vmemo);
			return rc;
		}
		total_in += SCAN_NIN(o);
		p += l;
		i++;
	}
	free(memo);
	free(vmemo);
	g->attr_cls_version = g->version;
	g->n_ops = n_nodes;
	g->n_live = n_nodes;
	*total_out = total_in;
	return GE_OK;
}

/* The producer an input names: most inputs name one of the last few
 * nodes (TensorFlow writes ops in creation order), whose names are in
 * cache, so those are tried before the index. */
static ge_opid find_producer(const ge_graph *g, size_t i, const char *s,
			     size_t nl)
{
	for (size_t back = 1; back <= 4 && back <= i; back++) {
		if (SCAN_NAMELEN(&g->ops[i - back]) == nl &&
		    !memcmp(g->ops[i - back].name, s, nl) &&
		    !(g->ops[i - back].flags & OPF_DUPNAME))
			return (ge_opid)(i - back);
	}
	return ge_idx_find_n(g, s, nl, 0);
}

/* Parse step 3: every node's inputs resolved into the pool; uses and
 * control outputs counted per producer (nuse, ncout). */
static int resolve_inputs(ge_graph *g, size_t total_in,
			  uint32_t *nuse, uint32_t *ncout, ge_error *err)
{
	g->in_pool = ge_big_alloc((total_in ? total_in : 1) *
				  sizeof *g->in_pool);
	size_t pos = 0;
	char lab[300];
	for (size_t i = 0; i < g->n_ops; i++) {
		ge_op *o = &g->ops[i];
		o->in = g->in_pool + pos;
		/* from the first input to the last: the fields before and
		 * after (name, type, attrs) are not walked */
		const uint8_t *q = o->raw + SCAN_IN0(o),
			      *qe = o->raw + o->raw_len;
		uint32_t nin = SCAN_NIN(o);
		if (!nin)
			q = qe;
		while (q < qe && o->n_in + o->n_ctrl < nin) {
			uint64_t tag, l;
			ge_read_varint(&q, qe, &tag);
			if ((tag >> 3) != ND_INPUT) {
				ge_skip_field(&q, qe, (int)(tag & 7));
				continue;
			}
			ge_read_varint(&q, qe, &l);
			const char *s = (const char *)q;
			q += l;
			size_t off, nl;
			int32_t index;
			/* a NUL would cut the name short on save */
			if (memchr(s, 0, l) ||
			    ge_parse_input(s, l, &off, &nl, &index))
				return ge_err(err, GE_EFORMAT,
					      "%s: %s: malformed input '%.*s'",
					      g->name,
					      op_label(lab, sizeof lab, g, i),
					      (int)(l > 200 ? 200 : l), s);
			if (index != GE_CONTROL && o->n_ctrl)
				return ge_err(err, GE_EFORMAT,
					      "%s: %s: data input '%.*s' comes "
					      "after a control input",
					      g->name,
					      op_label(lab, sizeof lab, g, i),
					      (int)(l > 200 ? 200 : l), s);
			ge_opid pid = find_producer(g, i, s + off, nl);
			ge_tref t;
			if (pid == GE_NOOP)
				t = (ge_tref){GE_NOOP,
					      (int32_t)ge_add_dangling(g, s, l)};
			else
				t = (ge_tref){pid, index};
			o->in[o->n_in + o->n_ctrl] = t;
			if (index == GE_CONTROL)
				o->n_ctrl++;
			else
				o->n_in++;
			if (pid != GE_NOOP) {
				if (index == GE_CONTROL)
					ncout[pid]++;
				else
					nuse[pid]++;
			}
		}
		pos += nin;
	}
	return GE_OK;
}

/* Parse step 4: uses and control outputs in their pools, filled in
 * consumer order so each list is sorted without a sort. */
static void fill_uses(ge_graph *g, const uint32_t *nuse, const uint32_t *ncout)
{
	size_t n_nodes = g->n_ops, total_use = 0, total_cout = 0;
	for (size_t i = 0; i < n_nodes; i++) {
		total_use += nuse[i];
		total_cout += ncout[i];
	}
	g->uses_pool = ge_big_alloc((total_use ? total_use : 1) *
				    sizeof *g->uses_pool);
	g->couts_pool = ge_big_alloc((total_cout ? total_cout : 1) *
				     sizeof *g->couts_pool);
	size_t up = 0, cp = 0;
	for (size_t i = 0; i < n_nodes; i++) {
		scan_clear(&g->ops[i]);
		g->ops[i].uses = g->uses_pool + up;
		g->ops[i].couts = g->couts_pool + cp;
		up += nuse[i];
		cp += ncout[i];
	}
	for (size_t i = 0; i < n_nodes; i++) {
		ge_op *o = &g->ops[i];
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
			ge_tref t = o->in[s];
			if (t.op == GE_NOOP)
				continue;
			ge_op *pr = &g->ops[t.op];
			if (s < o->n_in)
				pr->uses[pr->n_uses++] =
					(ge_use){(ge_opid)i, s};
			else
				pr->couts[pr->n_couts++] = (ge_opid)i;
		}
	}
}

int ge_graph_parse_graphdef_buf(uint8_t *data, size_t len, int take,
				const char *name, ge_graph **out, ge_error *err)
{
	ge_graph *g = ge_graph_new();
	ge_graph_set_name(g, name);
	g->src = data;
	g->src_owned = take;
	g->src_len = len;
	size_t n_nodes = 0, total_in = 0;
	uint32_t *nuse = NULL, *ncout = NULL;
	int rc;
	if ((rc = split_fields(g, &n_nodes, err)) ||
	    (rc = scan_nodes(g, n_nodes, &total_in, err)))
		goto fail;
	/* Name index.  A repeated name keeps the first op in the index. */
	ge_idx_build(g);
	nuse = ge_big_alloc((n_nodes + 1) * sizeof *nuse);
	ncout = ge_big_alloc((n_nodes + 1) * sizeof *ncout);
	if ((rc = resolve_inputs(g, total_in, nuse, ncout, err)))
		goto fail;
	fill_uses(g, nuse, ncout);
	ge_big_free(nuse);
	ge_big_free(ncout);
	*out = g;
	return GE_OK;
fail:
	ge_big_free(nuse);
	ge_big_free(ncout);
	/* pools may be partially filled; the ops point into them */
	for (size_t i = 0; i < g->n_ops; i++) {
		g->ops[i].flags &= ~(uint32_t)(OPF_IN_OWNED | OPF_USES_OWNED |
					       OPF_COUTS_OWNED);
		scan_clear(&g->ops[i]);
	}
	ge_graph_free(g);
	return rc;
}

/* ------------------------------------------------------------ encoding */

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
	ge_op_encode_ex(g, id, out, put_input_text);
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
	*p++ = ND_INPUT << 3 | 2;
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
	*p++ = (uint8_t)(field << 3 | 2);
	p = ge_put_uvarint(p, n);
	memcpy(p, s, n);
	return p + n;
}

void ge_op_encode_ex(const ge_graph *g, ge_opid id, ge_buf *out,
		     ge_input_text_fn text)
{
	const ge_op *o = &g->ops[id];
	size_t nl = strlen(o->name), tl = strlen(o->type);
	room_for(out, nl + tl + 22);
	uint8_t *d = put_strfield(out->data + out->len, ND_NAME, o->name, nl);
	d = put_strfield(d, ND_OP, o->type, tl);
	out->len = (size_t)(d - out->data);
	for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
		if (text == put_input_text && o->in[s].op != GE_NOOP) {
			put_input(out, g, o->in[s], s >= o->n_in);
			continue;
		}
		/* written in place and wrapped: no scratch buffer per op */
		size_t start = out->len;
		text(g, id, s, out);
		ge_buf_wrap(out, start, ND_INPUT);
	}
	if (*o->device) {
		size_t dl = strlen(o->device);
		room_for(out, dl + 11);
		d = put_strfield(out->data + out->len, ND_DEVICE, o->device,
				 dl);
		out->len = (size_t)(d - out->data);
	}
	/* Attrs, then any other field, in the order they were read. */
	if (o->flags & OPF_SPLIT) {
		for (uint32_t i = 0; i < o->n_ents; i++) {
			const ge_attr_ent *e = &o->ents[i];
			size_t kl = strlen(e->key);
			size_t el = 2 + ge_uvarint_size(kl) + kl +
				    ge_uvarint_size(e->len) + e->len;
			ge_buf_reserve(out, el + 11);
			uint8_t *p = out->data + out->len;
			*p++ = ND_ATTR << 3 | 2;
			p = ge_put_uvarint(p, el);
			*p++ = 1 << 3 | 2;
			p = ge_put_uvarint(p, kl);
			memcpy(p, e->key, kl);
			p += kl;
			*p++ = 2 << 3 | 2;
			p = ge_put_uvarint(p, e->len);
			if (e->len)
				memcpy(p, e->raw, e->len);
			out->len = (size_t)(p + e->len - out->data);
		}
	}
	if (o->raw) {
		/* kept fields that follow each other are copied as one run */
		const uint8_t *p = o->raw, *end = o->raw + o->raw_len;
		const uint8_t *run = p;
		const uint8_t attr_tag = ND_ATTR << 3 | 2;
		while (p < end) {
			const uint8_t *fs = p;
			uint64_t tag;
			/* an attr kept whole, one byte of length: most fields
			 * of a node, stepped over without the general reads */
			if (*p == attr_tag && !(o->flags & OPF_SPLIT) &&
			    end - p >= 2 && p[1] < 0x80 &&
			    (size_t)(end - p) - 2 >= p[1]) {
				p += 2 + p[1];
				continue;
			}
			if (ge_read_varint(&p, end, &tag) ||
			    ge_skip_field(&p, end, (int)(tag & 7))) {
				p = fs;
				break;
			}
			uint32_t f = (uint32_t)(tag >> 3);
			if ((f >= ND_NAME && f <= ND_DEVICE) ||
			    (f == ND_ATTR && (o->flags & OPF_SPLIT))) {
				if (run < fs)
					add_bytes(out, run, (size_t)(fs - run));
				run = p;
			}
		}
		if (run < p)
			add_bytes(out, run, (size_t)(p - run));
	}
	if (out->data)
		out->data[out->len] = 0;
}

/* Emits the GraphDef through a sink, so that the same code fills a
 * buffer or streams to a file. */
typedef void (*sink_fn)(void *ctx, const void *p, size_t n);

static void sink_buf(void *ctx, const void *p, size_t n)
{
	ge_buf_add(ctx, p, n);
}

static void sink_writer(void *ctx, const void *p, size_t n)
{
	ge_writer_put(ctx, p, n);
}

/* What emit_graphdef hands to its sink, gathered: the pieces of a save
 * are many and small (a node each), a sink call costs more than a copy,
 * and nodes are encoded straight into the gathered bytes.  A buffer sink
 * is written to directly, and so is a file writer's own buffer. */
struct emit {
	sink_fn put;
	void *ctx;
	ge_buf *b;   /* where pieces go: own, or the sink's */
	ge_writer *w;/* the file writer whose buffer b is, or NULL */
	ge_buf own;
	/* b's length at which to flush next: EMIT_FLUSH past what the last
	 * flush left (a writer spills only past its own size, a buffer
	 * sink never: not a call per node once b holds that much) */
	size_t flush_at;
};
enum { EMIT_DIRECT = 4096, EMIT_FLUSH = 1 << 16 };

static void em_flush(struct emit *e)
{
	if (e->w)
		ge_writer_spill(e->w);
	else if (e->b == &e->own && e->own.len) {
		e->put(e->ctx, e->own.data, e->own.len);
		e->own.len = 0;
	}
	e->flush_at = e->b->len + EMIT_FLUSH;
}

static void em_put(struct emit *e, const void *p, size_t n)
{
	if (e->w && n >= EMIT_DIRECT) {
		/* writes what it gathered first */
		ge_writer_put(e->w, p, n);
		return;
	}
	if (e->b == &e->own && n >= EMIT_DIRECT) {
		em_flush(e);
		e->put(e->ctx, p, n);
		return;
	}
	ge_buf_add(e->b, p, n);
	if (e->b->len >= e->flush_at)
		em_flush(e);
}

/* GraphDef.library: a field that starts with its tag byte */
static int is_library_field(const ge_rawfield *f)
{
	return f->len && f->p[0] == ((2 << 3) | 2);
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
		ge_flib_encode_payload(g, &pl);
		ge_buf_tag(&hdr, 2, 2);
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
	h[n++] = (GD_NODE << 3) | 2;
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
	h[0] = GD_NODE << 3 | 2;
	size_t hl = (size_t)(e - h);
	if (hl > 2) {
		ge_buf_reserve(b, hl - 2);
		memmove(b->data + at + hl, b->data + at + 2, blen);
		b->len += hl - 2;
		b->data[b->len] = 0;
	}
	memcpy(b->data + at, h, hl);
}

static void emit_graphdef(const ge_graph *g, sink_fn put, void *ctx)
{
	ge_buf hdr = GE_BUF_INIT;
	struct emit em = {put, ctx, NULL, NULL, GE_BUF_INIT, EMIT_FLUSH},
		    *e = &em;
	ge_type_lens types;
	memset(&types, 0, sizeof types);
	em.b = put == sink_buf ? (ge_buf *)ctx : &em.own;
	if (put == sink_writer) {
		em.w = ctx;
		em.b = ge_writer_buf(em.w);
	}
	int lib_changed = ge_flib_changed(g), lib_done = 0;
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
		ge_buf_tag(&hdr, GD_NODE, 2);
		ge_buf_varint(&hdr, o->raw_len);
		em_put(e, hdr.data, hdr.len);
		em_put(e, o->raw, o->raw_len);
	}
	if (run)
		em_put(e, run, (size_t)(run_end - run));
	emit_fields(g, fj, g->n_fields, lib_changed, &lib_done, e);
	if (lib_changed && !lib_done) {
		ge_buf pl = GE_BUF_INIT;
		ge_flib_encode_payload(g, &pl);
		hdr.len = 0;
		ge_buf_tag(&hdr, 2, 2);
		ge_buf_varint(&hdr, pl.len);
		em_put(e, hdr.data, hdr.len);
		em_put(e, pl.data, pl.len);
		ge_buf_free(&pl);
	}
	em_flush(e);
	ge_buf_free(&em.own);
	ge_buf_free(&hdr);
}

void ge_graph_encode_graphdef(const ge_graph *g, ge_buf *out)
{
	emit_graphdef(g, sink_buf, out);
}

void ge_graph_write_graphdef(const ge_graph *g, ge_writer *w)
{
	emit_graphdef(g, sink_writer, w);
}

/* ------------------------------------------------------------ merging */

/* GraphDef fields besides nodes; FunctionDefLibrary and FunctionDef fields */
enum { GD_LIBRARY = 2, GD_VERSIONS = 4, FL_FUNCTION = 1, FL_GRADIENT = 2,
       FD_SIGNATURE = 1, OD_NAME = 1, GR_FUNCTION_NAME = 1 };

int ge_find_len_field(const uint8_t *p, const uint8_t *end, uint32_t field,
		      const uint8_t **body, size_t *len)
{
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			return -1;
		if ((tag >> 3) == field && (tag & 7) == 2) {
			if (ge_read_varint(&p, end, &l) ||
			    l > (uint64_t)(end - p))
				return -1;
			*body = p;
			*len = (size_t)l;
			return 0;
		}
		if (ge_skip_field(&p, end, (int)(tag & 7)))
			return -1;
	}
	return -1;
}

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
	if (ge_flib_changed(g)) {
		ge_buf pl = GE_BUF_INIT;
		ge_flib_encode_payload(g, &pl);
		ge_buf_lenfield(&now, GD_LIBRARY, pl.data, pl.len);
		ge_buf_free(&pl);
		one = (ge_rawfield){now.data, now.len, -1};
		fields = &one;
		n_fields = 1;
	}
	for (size_t i = 0; i < n_fields; i++) {
		const uint8_t *p = fields[i].p, *end = p + fields[i].len;
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag) || tag != ((GD_LIBRARY << 3) | 2) ||
		    ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			continue;
		const uint8_t *q = p, *qe = p + l;
		while (q < qe) {
			const uint8_t *es = q;
			uint64_t t2, l2;
			if (ge_read_varint(&q, qe, &t2))
				break;
			if ((t2 & 7) != 2 || ge_read_varint(&q, qe, &l2) ||
			    l2 > (uint64_t)(qe - q)) {
				if ((t2 & 7) == 2 || ge_skip_field(&q, qe, (int)(t2 & 7)))
					break;
				continue;
			}
			const uint8_t *b = q;
			q += l2;
			uint32_t f = (uint32_t)(t2 >> 3);
			const uint8_t *nm = NULL, *sig;
			size_t nl = 0, sl;
			if (f == FL_FUNCTION &&
			    ge_find_len_field(b, b + l2, FD_SIGNATURE, &sig,
					      &sl) == 0)
				ge_find_len_field(sig, sig + sl, OD_NAME, &nm,
						  &nl);
			else if (f == FL_GRADIENT)
				ge_find_len_field(b, b + l2, GR_FUNCTION_NAME,
						  &nm, &nl);
			if (f == FL_FUNCTION || f == FL_GRADIENT)
				fn(ud, f, es, (size_t)(q - es), nm, nm ? nl : 0);
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
		if (dst->fields[i].len && dst->fields[i].p[0] == ((GD_VERSIONS << 3) | 2))
			have_versions = 1;
	for (size_t i = 0; i < src->n_fields && !have_versions; i++)
		if (src->fields[i].len &&
		    src->fields[i].p[0] == ((GD_VERSIONS << 3) | 2)) {
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
		ge_buf_lenfield(&f, GD_LIBRARY, m.out.data, m.out.len);
		append_field(dst, f.data, f.len);
		ge_flib_add_field(dst, dst->fields[dst->n_fields - 1].p,
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

static int is_next_iteration(const char *t)
{
	return !strcmp(t, "NextIteration") || !strcmp(t, "RefNextIteration");
}

size_t ge_graph_validate(const ge_graph *g, ge_buf *report)
{
	size_t problems = 0;
	size_t n = g->n_ops;
#define PROBLEM(...)                                    \
	do {                                            \
		problems++;                             \
		if (report) {                           \
			ge_buf_printf(report, __VA_ARGS__); \
			ge_buf_addc(report, '\n');      \
		}                                       \
	} while (0)

	int32_t *nouts = ge_xmalloc((n + 1) * sizeof *nouts);
	for (size_t i = 0; i < n; i++)
		nouts[i] = -1;
	for (size_t i = 0; i < n; i++) {
		const ge_op *o = &g->ops[i];
		if (o->flags & OPF_DEAD)
			continue;
		if (o->flags & OPF_DUPNAME)
			PROBLEM("node '%s' (#%zu): duplicate name", o->name, i);
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
			ge_tref t = o->in[s];
			if (t.op == GE_NOOP) {
				PROBLEM("node '%s': input '%s' names no op in "
					"the graph",
					o->name, g->dangling[t.index]);
				continue;
			}
			if (s >= o->n_in)
				continue;
			/* an op's output count, once per validation (for unknown
			 * op types it is worked out from the consumers) */
			if (nouts[t.op] < 0)
				nouts[t.op] = ge_op_num_outputs(g, t.op);
			int k = nouts[t.op];
			if (t.index >= k)
				PROBLEM("node '%s': input %u reads '%s:%d' but "
					"'%s' (%s) has %d output%s",
					o->name, s, g->ops[t.op].name, t.index,
					g->ops[t.op].name, g->ops[t.op].type, k,
					k == 1 ? "" : "s");
		}
		/* colocation: _class = ["loc:@X", ...]; most ops have none,
		 * so look at the raw bytes before splitting any attrs */
		/* in a function body, colocation names nodes of the graph
		 * the function was traced in: not checked */
		if (!g->parent && op_may_have_attr(o, "_class") &&
		    ge_op_attr_raw(g, (ge_opid)i, "_class", &(size_t){0})) {
			const struct Tensorflow__AttrValue *v =
				ge_op_attr(g, (ge_opid)i, "_class", NULL);
			if (!v) {
				PROBLEM("node '%s': attr '_class' does not decode",
					o->name);
			} else {
				size_t ns = 0;
				const ProtobufCBinaryData *ss = NULL;
				if (v->value_case ==
					    TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
				    v->list) {
					ns = v->list->n_s;
					ss = v->list->s;
				}
				for (size_t k = 0; k < ns; k++) {
					if (ss[k].len < 5 ||
					    memcmp(ss[k].data, "loc:@", 5))
						continue;
					if (ge_idx_find_n(g,
							  (const char *)ss[k].data + 5,
							  ss[k].len - 5, 0) == GE_NOOP)
						PROBLEM("node '%s': colocated with "
							"missing node '%.*s'",
							o->name, (int)ss[k].len - 5,
							(const char *)ss[k].data + 5);
				}
			}
		}
	}

	free(nouts);
	problems += ge_graph_check_attrs(g, (size_t)-1, 0, report);
	problems += ge_frames_validate(g, report);

	/* Cycles: Kahn's algorithm over data and control edges, leaving out
	 * the back edges of while loops (those out of NextIteration). */
	uint32_t *indeg = ge_xcalloc(n + 1, sizeof *indeg);
	uint8_t *back = ge_xcalloc(n + 1, 1); /* NextIteration ops */
	struct {
		const char *type;
		int ni;
	} memo[64] = {{NULL, 0}};
	for (size_t i = 0; i < n; i++) {
		const ge_op *o = &g->ops[i];
		/* op types are interned: test each distinct pointer once */
		size_t slot = ((uintptr_t)o->type >> 3) & 63;
		if (memo[slot].type != o->type) {
			memo[slot].type = o->type;
			memo[slot].ni = is_next_iteration(o->type);
		}
		back[i] = (uint8_t)memo[slot].ni;
	}
	for (size_t i = 0; i < n; i++) {
		const ge_op *o = &g->ops[i];
		if ((o->flags & OPF_DEAD) || back[i])
			continue;
		for (uint32_t k = 0; k < o->n_uses; k++)
			indeg[o->uses[k].op]++;
		for (uint32_t k = 0; k < o->n_couts; k++)
			indeg[o->couts[k]]++;
	}
	ge_opid *queue = ge_xmalloc((n + 1) * sizeof *queue);
	size_t qh = 0, qt = 0, done = 0;
	for (size_t i = 0; i < n; i++)
		if (!(g->ops[i].flags & OPF_DEAD) && indeg[i] == 0)
			queue[qt++] = (ge_opid)i;
	while (qh < qt) {
		ge_opid id = queue[qh++];
		const ge_op *o = &g->ops[id];
		done++;
		if (back[id])
			continue;
		for (uint32_t k = 0; k < o->n_uses; k++)
			if (--indeg[o->uses[k].op] == 0)
				queue[qt++] = o->uses[k].op;
		for (uint32_t k = 0; k < o->n_couts; k++)
			if (--indeg[o->couts[k]] == 0)
				queue[qt++] = o->couts[k];
	}
	if (done < g->n_live) {
		/* name the first op (in node order) left on a cycle */
		for (size_t i = 0; i < n; i++)
			if (!(g->ops[i].flags & OPF_DEAD) && indeg[i]) {
				PROBLEM("node '%s': on a cycle that does not "
					"pass through NextIteration (%zu ops "
					"involved or downstream)",
					g->ops[i].name, g->n_live - done);
				break;
			}
	}
	free(indeg);
	free(back);
	free(queue);
#undef PROBLEM
	return problems;
}

/* ------------------------------------------------------------ clone */

ge_graph *ge_graph_clone(const ge_graph *src)
{
	ge_graph *g = ge_graph_new();
	ge_graph_set_name(g, src->name);
	g->format = src->format;
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
	if (ge_flib_changed(src)) {
		/* the clone reads the library as it is now */
		size_t k = 0;
		for (size_t i = 0; i < g->n_fields; i++)
			if (!is_library_field(&g->fields[i]))
				g->fields[k++] = g->fields[i];
		g->n_fields = k;
		ge_buf pl = GE_BUF_INIT, f = GE_BUF_INIT;
		ge_flib_encode_payload(src, &pl);
		ge_buf_lenfield(&f, GD_LIBRARY, pl.data, pl.len);
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
