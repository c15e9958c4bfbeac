/*
 * check.c: load-time checks of node attrs against their OpDefs.
 *
 * TensorFlow refuses a graph whose node lacks an attr its OpDef requires,
 * holds an attr of the wrong kind, or has a shape with a dimension below
 * -1 (or a tensor with a negative dimension).  Its own fuzzing produced
 * SavedModels with exactly those faults.  These checks read the attr bytes
 * in place, without decoding them, so they cost little even on a graph of
 * a million nodes.
 *
 * And the whole validation of a graph (ge_graph_validate): inputs that
 * name no op or an output the op lacks, colocation with missing nodes,
 * these attr checks, the frames' checks (frames.c) and cycles that do not
 * pass through NextIteration.  It is an analysis over the graph core, so
 * it lives here, beside frames.c, not in the core's graph_io.c.
 */
#include "graph/graph_impl.h"
#include "analyses/frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/op_def.pb-c.h"

/* AttrValue field numbers (the oneof `value`) */
enum { AV_LIST = GE_ATTR_LIST, AV_S = GE_ATTR_S, AV_I = GE_ATTR_I,
       AV_F = GE_ATTR_F, AV_B = GE_ATTR_B, AV_TYPE = GE_ATTR_TYPE,
       AV_SHAPE = GE_ATTR_SHAPE, AV_TENSOR = GE_ATTR_TENSOR,
       AV_PLACEHOLDER = GE_ATTR_PLACEHOLDER, AV_FUNC = GE_ATTR_FUNC };

/* The AttrValue field an OpDef attr type calls for. */
static int field_for_type(const char *t)
{
	/* by first letter: called for every attr of a node that is checked */
	switch (t[0]) {
	case 'l': return !strncmp(t, "list(", 5) ? AV_LIST : 0;
	case 's': return !strcmp(t, "string") ? AV_S
			 : !strcmp(t, "shape") ? AV_SHAPE : 0;
	case 'i': return !strcmp(t, "int") ? AV_I : 0;
	case 'f': return !strcmp(t, "float") ? AV_F
			 : !strcmp(t, "func") ? AV_FUNC : 0;
	case 'b': return !strcmp(t, "bool") ? AV_B : 0;
	case 't': return !strcmp(t, "type") ? AV_TYPE
			 : !strcmp(t, "tensor") ? AV_TENSOR : 0;
	default: return 0;
	}
}

static const char *field_name(int f)
{
	static const char *names[] = {"unset", "list",   "string", "int",
				      "float", "bool",   "type",   "shape",
				      "tensor", "placeholder", "func"};
	return f >= 0 && f <= AV_FUNC ? names[f] : "unknown";
}

/* Smallest dim size of a TensorShapeProto (dim = 2, Dim.size = 1); 0 for
 * none.  *bad set when the bytes do not parse. */
static int64_t min_dim(const uint8_t *p, const uint8_t *end, int *bad)
{
	int64_t m = 0;
	ge_wire w = {p, end, 0}, dw;
	ge_wire_field f, d;
	while (ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, GE_SHAPE_DIM))
			continue;
		ge_wire_init(&dw, f.data, f.len);
		while (ge_wire_next(&dw, &d))
			if (d.num == GE_DIM_SIZE && d.wt == GE_WT_VARINT &&
			    (int64_t)d.v < m)
				m = (int64_t)d.v;
		if (dw.bad)
			*bad = 1;
	}
	if (w.bad)
		*bad = 1;
	return m;
}

/* The oneof field set in an AttrValue (0 when none), and its payload (of
 * a field not length-delimited, its value's bytes). */
static int attr_kind(const uint8_t *p, const uint8_t *end, const uint8_t **body,
		     size_t *len, int *bad)
{
	int kind = 0;
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		*len = f.len;
		if (f.num >= AV_LIST && f.num <= AV_FUNC) {
			kind = (int)f.num;
			*body = f.data;
		}
	}
	if (w.bad)
		*bad = 1;
	return kind;
}

/* Checks one attr value against the OpDef attr of type `type`, which calls
 * for AttrValue field `want` (field_for_type), or with type NULL only its
 * shapes.  Writes a message into msg and returns -1 on a problem. */
static int check_value(const char *type, int want, const uint8_t *v,
		       size_t vlen, char *msg, size_t cap)
{
	const uint8_t *body = NULL;
	size_t blen = 0;
	int bad = 0;
	int kind = attr_kind(v, v + vlen, &body, &blen, &bad);
	if (bad) {
		snprintf(msg, cap, "does not decode as an AttrValue");
		return -1;
	}
	if (type && kind && kind != AV_PLACEHOLDER && want && want != kind) {
		snprintf(msg, cap, "holds a %s where the op wants %s",
			 field_name(kind), type);
		return -1;
	}
	if (kind == AV_SHAPE) {
		int64_t m = min_dim(body, body + blen, &bad);
		if (bad) {
			snprintf(msg, cap, "holds a malformed shape");
			return -1;
		}
		if (m < -1) {
			snprintf(msg, cap, "holds a shape with dimension %lld",
				 (long long)m);
			return -1;
		}
	} else if (kind == AV_TENSOR) {
		const uint8_t *sh;
		size_t shl;
		if (ge_wire_find_len(body, body + blen, GE_TENSOR_SHAPE, &sh,
				     &shl) == 0) {
			int64_t m = min_dim(sh, sh + shl, &bad);
			if (bad) {
				snprintf(msg, cap, "holds a tensor with a "
					 "malformed shape");
				return -1;
			}
			if (m < 0) {
				snprintf(msg, cap, "holds a tensor with "
					 "dimension %lld",
					 (long long)m);
				return -1;
			}
		}
	}
	return 0;
}

/* A constant without its value means nothing, whatever else the graph
 * holds; other missing attrs are left to validation, since TensorFlow's
 * own pass tests keep graphs that lack them. */
static int is_const_value(const char *type, const char *attr)
{
	return (!strcmp(type, "Const") || !strcmp(type, "HostConst")) &&
	       !strcmp(attr, "value");
}

struct kv {
	const char *key;
	size_t klen;
	const uint8_t *val;
	size_t vlen;
};

/* Collects the attr map entries (field 5) of NodeDef bytes, as
 * ge_wire_attr_next splits them. */
static size_t raw_attrs(const uint8_t *p, const uint8_t *end, struct kv **out,
			size_t *cap)
{
	size_t n = 0;
	struct kv e;
	while (ge_wire_attr_next(&p, end, &e.key, &e.klen, &e.val, &e.vlen)) {
		if (n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*out = ge_xrealloc(*out, *cap * sizeof **out);
		}
		(*out)[n++] = e;
	}
	return n;
}

/* An OpDef as check_node reads it, worked out once per op type: for each
 * attr its name's length, the AttrValue field its type calls for, and
 * whether it is required (has no default). */
struct adef {
	const Tensorflow__OpDef *d; /* NULL: no OpDef */
	struct aattr {
		size_t len;
		int want, req;
	} *a;
	size_t cap;
};

static void adef_set(struct adef *x, const Tensorflow__OpDef *d)
{
	x->d = d;
	if (!d)
		return;
	if (x->cap < d->n_attr) {
		x->cap = d->n_attr;
		x->a = ge_xrealloc(x->a, x->cap * sizeof *x->a);
	}
	for (size_t i = 0; i < d->n_attr; i++)
		x->a[i] = (struct aattr){strlen(d->attr[i]->name),
					 field_for_type(d->attr[i]->type),
					 !d->attr[i]->default_value};
}

/* Checks one node's attrs; `where` prefixes messages ("" for the graph,
 * "function 'f': " inside the library). */
static size_t check_node(const struct adef *x,
			 const char *where, const char *name, const char *type,
			 const struct kv *kv, size_t n, int fatal_only,
			 ge_buf *report)
{
	const Tensorflow__OpDef *d = x->d;
	size_t problems = 0;
	char msg[256];
	uint64_t found = 0; /* bit per required attr (the first 64) */
	for (size_t e = 0; e < n; e++) {
		const char *at = NULL; /* the matching attr's type */
		int want = 0;
		if (d) {
			size_t r = 0;
			for (size_t a = 0; a < d->n_attr; a++) {
				const char *an = d->attr[a]->name;
				int req = x->a[a].req;
				/* the name holds no NUL, so equal lengths and
				 * bytes mean a key with a NUL never matches */
				if (x->a[a].len == kv[e].klen && kv[e].klen &&
				    an[0] == kv[e].key[0] &&
				    !memcmp(an, kv[e].key, kv[e].klen)) {
					at = d->attr[a]->type;
					want = x->a[a].want;
					if (req && r < 64)
						found |= 1ull << r;
				}
				r += req;
			}
		}
		if (check_value(at, want, kv[e].val, kv[e].vlen, msg,
				sizeof msg)) {
			problems++;
			if (report)
				ge_buf_printf(report,
					      "%snode '%s' (%s): attr '%.*s' %s\n",
					      where, name, type, (int)kv[e].klen,
					      kv[e].key, msg);
		}
	}
	if (d) {
		size_t r = 0;
		for (size_t a = 0; a < d->n_attr; a++) {
			if (!x->a[a].req)
				continue;
			if (r < 64 && !(found & (1ull << r)) &&
			    (!fatal_only || is_const_value(type, d->attr[a]->name))) {
				problems++;
				if (report)
					ge_buf_printf(report,
						      "%snode '%s' (%s): missing "
						      "required attr '%s'\n",
						      where, name, type,
						      d->attr[a]->name);
			}
			r++;
		}
	}
	return problems;
}

/* The string field `field` of a message, or "". */
static void str_field(const uint8_t *p, const uint8_t *end, uint32_t field,
		      ge_buf *out)
{
	const uint8_t *b;
	size_t l;
	out->len = 0;
	if (ge_wire_find_len(p, end, field, &b, &l) == 0)
		ge_buf_add(out, b, l);
	else
		ge_buf_add(out, "", 0);
}

/* Nodes of the function library: GraphDef.library (2) holds FunctionDefs
 * (1), whose node_def (3) are NodeDefs; a FunctionDef's signature (1) is
 * an OpDef named by its field 1. */
static size_t check_library(const ge_graph *g, const uint8_t *p,
			    const uint8_t *end, size_t max, int fatal_only,
			    ge_buf *report)
{
	size_t problems = 0;
	struct kv *kv = NULL;
	size_t cap = 0;
	struct adef x = {NULL, NULL, 0};
	ge_buf fname = GE_BUF_INIT, nname = GE_BUF_INIT, ntype = GE_BUF_INIT,
	       where = GE_BUF_INIT;
	ge_wire w = {p, end, 0}, fw;
	ge_wire_field ff, nf;
	while (problems < max && ge_wire_next(&w, &ff)) {
		if (!ge_wire_is_len(&ff, GE_FLIB_FUNCTION))
			continue;
		const uint8_t *f = ff.data, *fe = ff.data + ff.len;
		const uint8_t *sig;
		size_t sigl;
		fname.len = 0;
		if (ge_wire_find_len(f, fe, GE_FUNCDEF_SIGNATURE, &sig,
				     &sigl) == 0)
			str_field(sig, sig + sigl, GE_OPDEF_NAME, &fname);
		where.len = 0;
		ge_buf_printf(&where, "function '%s': ",
			      fname.data ? (char *)fname.data : "");
		ge_wire_init(&fw, f, ff.len);
		while (problems < max && ge_wire_next(&fw, &nf)) {
			if (!ge_wire_is_len(&nf, GE_FUNCDEF_NODE_DEF))
				continue;
			const uint8_t *nd = nf.data, *nde = nf.data + nf.len;
			str_field(nd, nde, GE_NODEDEF_NAME, &nname);
			str_field(nd, nde, GE_NODEDEF_OP, &ntype);
			size_t n = raw_attrs(nd, nde, &kv, &cap);
			adef_set(&x, ge_graph_opdef(g, (char *)ntype.data));
			problems += check_node(&x, (char *)where.data,
					       (char *)nname.data,
					       (char *)ntype.data, kv, n, fatal_only,
					       report);
		}
	}
	free(kv);
	free(x.a);
	ge_buf_free(&fname);
	ge_buf_free(&nname);
	ge_buf_free(&ntype);
	ge_buf_free(&where);
	return problems;
}

size_t ge_graph_check_attrs(const ge_graph *g, size_t max, int fatal_only,
			    ge_buf *report)
{
	size_t problems = 0;
	struct kv *kv = NULL;
	size_t cap = 0;
	struct {
		const char *type;
		struct adef x;
	} memo[64];
	memset(memo, 0, sizeof memo);
	/* a fresh load's classes (graph_parse.c): an op whose attrs are those
	 * of an earlier op of its type that passed gets the same answer */
	const ge_opid *cls = g->attr_cls &&
				     g->attr_cls_version == g->version
			     ? g->attr_cls
			     : NULL;
	/* and an op whose attrs read as those of an earlier op that passed,
	 * but for tensor values this check does not read, passes too */
	const ge_opid *vcls = cls ? g->attr_vcls : NULL;
	uint64_t *passed = cls ? ge_xcalloc(g->n_ops / 64 + 1, 8) : NULL;
	for (size_t i = 0; i < g->n_ops && problems < max; i++) {
		/* while the classes hold, no op has changed since the load
		 * (every edit moves the version): none is dead or dirty, and
		 * an op of a class that passed is passed over without a read
		 * of it, which on a large graph would bring each op into
		 * the cache */
		if (cls && cls[i] != i &&
		    (passed[cls[i] / 64] >> (cls[i] % 64) & 1))
			continue;
		if (vcls && vcls[i] &&
		    (passed[(vcls[i] - 1) / 64] >> ((vcls[i] - 1) % 64) & 1))
			continue;
		const ge_op *o = &g->ops[i];
		if (o->flags & OPF_DEAD)
			continue;
		size_t n = 0;
		if (o->flags & OPF_SPLIT) {
			if (cap < o->n_ents) {
				cap = o->n_ents;
				kv = ge_xrealloc(kv, cap * sizeof *kv);
			}
			for (uint32_t e = 0; e < o->n_ents; e++)
				kv[n++] = (struct kv){o->ents[e].key,
						      strlen(o->ents[e].key),
						      o->ents[e].raw,
						      o->ents[e].len};
		} else if (o->raw) {
			n = raw_attrs(o->raw, o->raw + o->raw_len, &kv, &cap);
		}
		/* op types are interned: one OpDef lookup per distinct
		 * pointer, remembered in a small direct-mapped cache */
		size_t slot = ((uintptr_t)o->type >> 3) & 63;
		if (memo[slot].type != o->type) {
			memo[slot].type = o->type;
			adef_set(&memo[slot].x, ge_graph_opdef(g, o->type));
		}
		size_t pr = check_node(&memo[slot].x, "", o->name, o->type,
				       kv, n, fatal_only, report);
		if (passed && !pr)
			passed[i / 64] |= 1ull << (i % 64);
		problems += pr;
	}
	free(kv);
	free(passed);
	for (size_t i = 0; i < 64; i++)
		free(memo[i].x.a);
	/* once the library is modelled (func.h), its bodies are checked as
	 * graphs of their own, as they are now: the bytes read may be stale */
	for (size_t i = 0; i < g->n_fields && problems < max && !g->flib; i++) {
		ge_wire w = ge_wire_of(g->fields[i].p, g->fields[i].len);
		ge_wire_field f;
		if (!ge_wire_next(&w, &f) ||
		    !ge_wire_is_len(&f, GE_GRAPHDEF_LIBRARY))
			continue;
		problems += check_library(g, f.data, f.data + f.len,
					  max - problems, fatal_only, report);
	}
	return problems;
}

/* ------------------------------------------------------------ validate */

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
		if (!g->parent && ge_op_may_have_attr(g, (ge_opid)i, "_class") &&
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
