/*
 * exec/exec.c: the executor (exec.h).
 *
 * A run turns the ops the fetches need into a plan (xplan: one node per
 * op, its out edges, the static frame it runs in), then executes it the
 * way TensorFlow's executor does, one op at a time: every op has, in each
 * iteration of each frame instance it runs in, a count of inputs still
 * pending and of dead inputs; an op whose count reaches zero is ready,
 * and runs dead (no kernel, every output dead) when an input was dead.
 * Merge is ready on its first live data input, or dead when all its data
 * inputs are.  Enter hands its value to iteration 0 of the child frame
 * (a constant Enter to every iteration), NextIteration to the next
 * iteration of its frame (a dead one stops there), Exit to the parent
 * frame (a dead Exit of the last iteration marks its consumers dead when
 * the frame ends).  An iteration ends when nothing of it is outstanding
 * and the one before it has ended; a frame ends with its last iteration
 * once all its Enters have run.  doc/runner.md says the same at length.
 *
 * Function bodies (calls, While, If, Case) run through the same loop on
 * the plan of their body graph, cached for the session.
 */
#include "exec/exec_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/frames.h"
#include "functions/func.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

enum { DT_INT32 = 3, DT_STRING = 7, DT_BOOL = 10, DT_RESOURCE = 20 };

#define MAX_CALL_DEPTH 64
#define MAX_OUTPUTS (1 << 20)

/* ---------------------------------------------------------------- plans */

enum {
	XK_KERNEL = 0, XK_FED, XK_ARG, XK_RETVAL, XK_PLACEHOLDER, XK_PWD,
	XK_FORWARD, XK_NOOP, XK_SWITCH, XK_MERGE, XK_ENTER, XK_EXIT, XK_NEXT,
	XK_CALL, XK_WHILE, XK_IF, XK_CASE, XK_ASSERT, XK_PRINTV2,
};

struct xnode {
	ge_opid id;
	uint8_t kind;
	uint8_t trigger;      /* ControlTrigger: never dead */
	uint8_t center;       /* a constant Enter */
	uint8_t takes_ref;    /* reads TF1 references as they are */
	int32_t frame;        /* static frame it runs in */
	int32_t child;        /* Enter: the frame it opens */
	int32_t local;        /* index in its frame's counts */
	int32_t in0;          /* first input slot in its frame */
	int32_t nin, nout;
	uint32_t e0, ne;      /* data out edges */
	uint32_t c0, nc;      /* control out edges */
	uint32_t f0, nf;      /* fetches of its outputs */
	int32_t aux;          /* _Arg / _Retval index */
	const ge_kdef *k;
};

struct xedge {
	uint32_t dst;
	int32_t out, slot;
};

struct xfetch {
	uint32_t node;
	int32_t out;          /* GE_CONTROL: the op runs for its effect */
	int32_t idx;          /* result index */
};

/* A static frame: the root (0) or a loop, as frames.h numbers them. */
struct xsf {
	int32_t nlocal, nslot, nenter;
	int32_t *pend0;       /* initial pending count of each local */
	uint32_t *nodes;      /* node of each local */
};

struct xplan {
	ge_graph *g;
	const char *fname;    /* a body's function, NULL for the top */
	const ge_frames *F;
	struct xnode *n;
	size_t nn;
	struct xedge *e;
	uint32_t *ce;
	struct xfetch *fetch;
	size_t nfetch;
	struct xsf *sf;
	size_t nsf;
	int nargs, nrets;
	uint32_t *roots;      /* ops without inputs, in the order they are
				 pushed on the ready stack */
	size_t nroots;
	uint32_t *feed_node;  /* feeds: node fed (UINT32_MAX: unused) */
	int32_t *feed_out;    /* feeds: output index per feed */
	int32_t *feed_idx;    /* feeds: caller's feed index */
	size_t nfeed;
};

void ge_xplan_free(struct xplan *p)
{
	if (!p)
		return;
	for (size_t f = 0; f < p->nsf; f++) {
		free(p->sf[f].pend0);
		free(p->sf[f].nodes);
	}
	free(p->sf);
	free(p->n);
	free(p->e);
	free(p->ce);
	free(p->fetch);
	free(p->roots);
	free(p->feed_node);
	free(p->feed_out);
	free(p->feed_idx);
	free(p);
}

static int is_ref_forward(const char *t)
{
	return !strncmp(t, "Ref", 3);
}

static const char *base_type(const char *t)
{
	return is_ref_forward(t) ? t + 3 : t;
}

static int kind_of(const char *type)
{
	static const struct {
		const char *t;
		int k;
	} tab[] = {
		{"Identity", XK_FORWARD}, {"IdentityN", XK_FORWARD},
		{"StopGradient", XK_FORWARD}, {"Snapshot", XK_FORWARD},
		{"PreventGradient", XK_FORWARD}, {"Print", XK_FORWARD},
		{"NoOp", XK_NOOP}, {"ControlTrigger", XK_NOOP},
		/* a hint to TensorFlow's variable storage; nothing to do */
		{"DisableCopyOnRead", XK_NOOP},
		{"Switch", XK_SWITCH}, {"Merge", XK_MERGE},
		{"Enter", XK_ENTER}, {"Exit", XK_EXIT},
		{"NextIteration", XK_NEXT}, {"LoopCond", XK_FORWARD},
		{"_Arg", XK_ARG}, {"_Retval", XK_RETVAL},
		{"Placeholder", XK_PLACEHOLDER},
		{"PlaceholderV2", XK_PLACEHOLDER},
		{"PlaceholderWithDefault", XK_PWD},
		{"PartitionedCall", XK_CALL},
		{"StatefulPartitionedCall", XK_CALL},
		{"While", XK_WHILE}, {"StatelessWhile", XK_WHILE},
		{"If", XK_IF}, {"StatelessIf", XK_IF},
		{"Case", XK_CASE}, {"StatelessCase", XK_CASE},
		{"Assert", XK_ASSERT}, {"PrintV2", XK_PRINTV2},
	};
	const char *b = base_type(type);
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(tab[i].t, b))
			return tab[i].k;
	return -1;
}

/* Ops a function body runs although no output needs them, as
 * TensorFlow's function runtime keeps them: control-flow ops and stateful
 * ops (their OpDef says so) but _Arg and the gathers that only read. */
static int has_effect(const ge_graph *g, const char *type)
{
	static const char *const tab[] = {
		"AssignVariableOp", "AssignAddVariableOp",
		"AssignSubVariableOp", "Assign", "AssignAdd", "AssignSub",
		"Assert", "PrintV2",
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(tab[i], type))
			return 1;
	int k = kind_of(type);
	if (k == XK_SWITCH || k == XK_MERGE || k == XK_ENTER ||
	    k == XK_EXIT || k == XK_NEXT)
		return 1;
	if (k == XK_ARG || !strcmp(type, "ResourceGather") ||
	    !strcmp(type, "ResourceGatherNd"))
		return 0;
	const Tensorflow__OpDef *d = ge_graph_opdef(g, type);
	return d && d->is_stateful;
}

static int attr_bool(const ge_graph *g, ge_opid id, const char *name)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, name, NULL);
	return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && v->b;
}

/* "op (Type)" of a plan's op, prefixed by nothing: messages name the
 * function at the end of a body's run. */
static int node_fail(const struct xplan *p, const struct xnode *n,
		     ge_error *err, const char *fmt, ...) GE_PRINTF(4, 5);
static int node_fail(const struct xplan *p, const struct xnode *n,
		     ge_error *err, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ge_err(err, GE_EINVAL, "%s (%s): %s", ge_op_name(p->g, n->id),
		      ge_op_type(p->g, n->id), msg);
}

/* The ops a run needs: what the start ops read, back to ops without
 * inputs, not through fed ops.  need[id] = node index + 1. */
static size_t plan_need(const ge_graph *g, const ge_opid *start, size_t ns,
			const uint8_t *fed, uint32_t *need)
{
	size_t cap = ge_graph_capacity(g), nn = 0, sp = 0;
	ge_opid *stack = ge_xmalloc((cap + 1) * sizeof *stack);
	uint8_t *seen = ge_xcalloc(cap + 1, 1);
	for (size_t i = 0; i < ns; i++)
		if (!seen[start[i]]) {
			seen[start[i]] = 1;
			stack[sp++] = start[i];
		}
	while (sp) {
		ge_opid id = stack[--sp];
		need[id] = 1;
		nn++;
		if (fed[id])
			continue;
		size_t ni = ge_op_num_inputs(g, id);
		size_t nc = ge_op_num_control_inputs(g, id);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid q = i < ni ? ge_op_input(g, id, i).op
					   : ge_op_control_input(g, id, i - ni);
			if (q != GE_NOOP && !seen[q]) {
				seen[q] = 1;
				stack[sp++] = q;
			}
		}
	}
	/* node indices in op order, so that a plan is deterministic */
	uint32_t k = 0;
	for (size_t id = 0; id < cap; id++)
		if (need[id])
			need[id] = ++k;
	free(stack);
	free(seen);
	return nn;
}

int ge_xrun_knows_type(const char *type)
{
	return kind_of(type) >= 0 || ge_xvars_kernel(type) ||
	       ge_kernel_find(type);
}

/* Kind, kernel and frame of node n. */
static int plan_node(struct ge_xrt *rt, struct xplan *p, struct xnode *n,
		     int fed, ge_error *err)
{
	const ge_graph *g = p->g;
	const char *type = ge_op_type(g, n->id);
	int k = fed ? XK_FED : kind_of(type);
	if (k < 0) {
		if (ge_func_find(rt->g, type) != GE_NOFUNC) {
			k = XK_CALL;
		} else {
			k = XK_KERNEL;
			n->k = ge_xvars_kernel(type);
			if (!n->k)
				n->k = ge_kernel_find(type);
			if (!n->k)
				return node_fail(p, n, err, "no kernel for "
						 "op type '%s'", type);
		}
	}
	n->kind = (uint8_t)k;
	n->trigger = !strcmp(type, "ControlTrigger");
	n->takes_ref = (uint8_t)ge_xvars_takes_ref(type);
	n->nout = k == XK_RETVAL ? 0 : ge_op_num_outputs(g, n->id);
	n->nin = k == XK_FED ? 0 : (int32_t)ge_op_num_inputs(g, n->id);
	if (n->nout < 0 || n->nout > MAX_OUTPUTS)
		return node_fail(p, n, err, "has %d outputs, over the %d the "
				 "runner takes", n->nout, MAX_OUTPUTS);
	int32_t fr = ge_frames_op(p->F, n->id);
	if (fr < 0)
		return node_fail(p, n, err, "not reachable from the graph's "
				 "inputs (a cycle with no way in)");
	n->child = -1;
	if (k == XK_ENTER) {
		n->child = fr;
		fr = ge_frames_parent(p->F, fr);
		n->center = (uint8_t)attr_bool(g, n->id, "is_constant");
	}
	n->frame = fr;
	if ((k == XK_EXIT || k == XK_NEXT) && fr == 0)
		return node_fail(p, n, err, "is outside any while loop");
	if (k == XK_FED && fr != 0)
		return node_fail(p, n, err, "cannot be fed: it is in the "
				 "while loop frame '%s'",
				 ge_frames_name(p->F, fr));
	if (k == XK_ARG || k == XK_RETVAL) {
		int64_t idx = 0;
		if (ge_op_attr_int(g, n->id, "index", &idx) || idx < 0 ||
		    idx > 1 << 20)
			return node_fail(p, n, err, "no valid 'index' attr");
		n->aux = (int32_t)idx;
		if (k == XK_ARG && idx >= p->nargs)
			p->nargs = (int)idx + 1;
		if (k == XK_RETVAL && idx >= p->nrets)
			p->nrets = (int)idx + 1;
	}
	return GE_OK;
}

/* The frame the consumers of node n are in. */
static int32_t out_frame(const struct xplan *p, const struct xnode *n)
{
	if (n->kind == XK_ENTER)
		return n->child;
	if (n->kind == XK_EXIT)
		return ge_frames_parent(p->F, n->frame);
	return n->frame;
}

/* An edge from src into n must stay in a frame but through Enter and
 * Exit: the executor keeps a frame's inputs with its iterations. */
static int check_frame(const struct xplan *p, const struct xnode *src,
		       const struct xnode *n, ge_error *err)
{
	if (out_frame(p, src) == n->frame)
		return GE_OK;
	return node_fail(p, n, err, "reads '%s' of another while loop frame "
			 "('%s' here, '%s' there): a tensor crossing frames "
			 "not through Enter or Exit",
			 ge_op_name(p->g, src->id),
			 ge_frames_name(p->F, n->frame),
			 ge_frames_name(p->F, out_frame(p, src)));
}

/* Out edges of every node, grouped by source. */
static int plan_edges(struct xplan *p, const uint32_t *need, ge_error *err)
{
	const ge_graph *g = p->g;
	size_t ne = 0, nc = 0;
	for (size_t i = 0; i < p->nn; i++) {
		struct xnode *n = &p->n[i];
		if (n->kind == XK_FED)
			continue;
		size_t ni = ge_op_num_inputs(g, n->id);
		size_t nci = ge_op_num_control_inputs(g, n->id);
		for (size_t s = 0; s < ni + nci; s++) {
			ge_opid q = s < ni ? ge_op_input(g, n->id, s).op
					   : ge_op_control_input(g, n->id,
								 s - ni);
			if (q == GE_NOOP) {
				const char *d = ge_op_dangling_input(g, n->id,
								     s);
				return node_fail(p, n, err, "input %zu names "
						 "no op ('%s')", s,
						 d ? d : "?");
			}
			if (s < ni)
				p->n[need[q] - 1].ne++;
			else
				p->n[need[q] - 1].nc++;
		}
		ne += ni;
		nc += nci;
	}
	p->e = ge_xmalloc((ne + 1) * sizeof *p->e);
	p->ce = ge_xmalloc((nc + 1) * sizeof *p->ce);
	uint32_t eo = 0, co = 0;
	for (size_t i = 0; i < p->nn; i++) {
		p->n[i].e0 = eo;
		p->n[i].c0 = co;
		eo += p->n[i].ne;
		co += p->n[i].nc;
		p->n[i].ne = p->n[i].nc = 0;
	}
	for (size_t i = 0; i < p->nn; i++) {
		struct xnode *n = &p->n[i];
		if (n->kind == XK_FED)
			continue;
		size_t ni = ge_op_num_inputs(g, n->id);
		size_t nci = ge_op_num_control_inputs(g, n->id);
		for (size_t s = 0; s < ni; s++) {
			ge_tref t = ge_op_input(g, n->id, s);
			struct xnode *src = &p->n[need[t.op] - 1];
			if (check_frame(p, src, n, err))
				return GE_EGRAPH;
			if (t.index >= src->nout)
				return node_fail(p, n, err, "input %zu reads "
						 "output %d of '%s', which has "
						 "%d", s, t.index,
						 ge_op_name(g, t.op),
						 src->nout);
			struct xedge *e = &p->e[src->e0 + src->ne++];
			e->dst = (uint32_t)i;
			e->out = t.index;
			e->slot = (int32_t)s;
		}
		for (size_t s = 0; s < nci; s++) {
			ge_opid q = ge_op_control_input(g, n->id, s);
			struct xnode *src = &p->n[need[q] - 1];
			if (check_frame(p, src, n, err))
				return GE_EGRAPH;
			p->ce[src->c0 + src->nc++] = (uint32_t)i;
		}
	}
	return GE_OK;
}

/* Refuses a cycle that does not pass through a NextIteration: its ops
 * would wait for each other forever.  Kahn's walk, linear. */
static int plan_acyclic(const struct xplan *p, ge_error *err)
{
	int32_t *deg = ge_xcalloc(p->nn + 1, sizeof *deg);
	uint32_t *q = ge_xmalloc((p->nn + 1) * sizeof *q);
	size_t qh = 0, qt = 0;
	for (size_t i = 0; i < p->nn; i++) {
		const struct xnode *n = &p->n[i];
		if (n->kind == XK_NEXT)
			continue;
		for (uint32_t k = 0; k < n->ne; k++)
			deg[p->e[n->e0 + k].dst]++;
		for (uint32_t k = 0; k < n->nc; k++)
			deg[p->ce[n->c0 + k]]++;
	}
	for (size_t i = 0; i < p->nn; i++)
		if (!deg[i])
			q[qt++] = (uint32_t)i;
	while (qh < qt) {
		const struct xnode *n = &p->n[q[qh++]];
		if (n->kind == XK_NEXT)
			continue;
		for (uint32_t k = 0; k < n->ne + n->nc; k++) {
			uint32_t d = k < n->ne ? p->e[n->e0 + k].dst
					       : p->ce[n->c0 + k - n->ne];
			if (--deg[d] == 0)
				q[qt++] = d;
		}
	}
	int rc = GE_OK;
	for (size_t i = 0; i < p->nn && qt < p->nn; i++)
		if (deg[i]) {
			rc = node_fail(p, &p->n[i], err, "is on a cycle that "
				       "does not pass through a NextIteration");
			break;
		}
	free(deg);
	free(q);
	return rc;
}

/* The first consumer of a root op, for the order roots run in. */
static uint32_t first_use(const struct xplan *p, uint32_t i)
{
	const struct xnode *n = &p->n[i];
	uint32_t m = UINT32_MAX;
	for (uint32_t k = 0; k < n->ne; k++)
		if (p->e[n->e0 + k].dst < m)
			m = p->e[n->e0 + k].dst;
	for (uint32_t k = 0; k < n->nc; k++)
		if (p->ce[n->c0 + k] < m)
			m = p->ce[n->c0 + k];
	return m;
}

struct rootkey {
	uint32_t use, node;
};

static int by_late_use(const void *a, const void *b)
{
	const struct rootkey *x = a, *y = b;
	if (x->use != y->use)
		return x->use < y->use ? 1 : -1;
	return x->node < y->node ? 1 : x->node > y->node ? -1 : 0;
}

/* The roots, the one whose consumer comes last in node order at the
 * bottom of the ready stack: a Const (a weight) then runs when the op
 * that reads it is about to, not all of them at the start, whatever the
 * order of the GraphDef's nodes. */
static void plan_roots(struct xplan *p)
{
	const struct xsf *f = &p->sf[0];
	struct rootkey *k = ge_xmalloc(((size_t)f->nlocal + 1) * sizeof *k);
	for (int32_t l = 0; l < f->nlocal; l++)
		if (f->pend0[l] == 0) {
			k[p->nroots].node = f->nodes[l];
			k[p->nroots++].use = first_use(p, f->nodes[l]);
		}
	qsort(k, p->nroots, sizeof *k, by_late_use);
	p->roots = ge_xmalloc((p->nroots + 1) * sizeof *p->roots);
	for (size_t i = 0; i < p->nroots; i++)
		p->roots[i] = k[i].node;
	free(k);
}

/* Locals, input slots and initial counts per static frame. */
static void plan_frames(struct xplan *p)
{
	p->nsf = ge_frames_count(p->F);
	p->sf = ge_xcalloc(p->nsf, sizeof *p->sf);
	for (size_t i = 0; i < p->nn; i++) {
		struct xnode *n = &p->n[i];
		struct xsf *f = &p->sf[n->frame];
		n->local = f->nlocal++;
		n->in0 = f->nslot;
		f->nslot += n->nin;
		if (n->kind == XK_ENTER)
			p->sf[n->child].nenter++;
	}
	for (size_t f = 0; f < p->nsf; f++) {
		p->sf[f].pend0 = ge_xcalloc((size_t)p->sf[f].nlocal + 1,
					    sizeof(int32_t));
		p->sf[f].nodes = ge_xcalloc((size_t)p->sf[f].nlocal + 1,
					    sizeof(uint32_t));
	}
	for (size_t i = 0; i < p->nn; i++) {
		struct xnode *n = &p->n[i];
		struct xsf *f = &p->sf[n->frame];
		int32_t nctl = n->kind == XK_FED ? 0 :
			(int32_t)ge_op_num_control_inputs(p->g, n->id);
		f->nodes[n->local] = (uint32_t)i;
		f->pend0[n->local] = n->kind == XK_MERGE ? 1 + 2 * nctl
							 : n->nin + nctl;
	}
}

/* The plan of a run of g needing the start ops, with fed tensors (their
 * ops become sources) and fetches (fetch[i] is result i). */
int ge_xplan_build(struct ge_xrt *rt, ge_graph *g, const char *fname,
		   const ge_opid *start, size_t nstart,
		   const ge_tref *fed, size_t nfed,
		   const ge_tref *fetch, size_t nfetch,
		   struct xplan **out, ge_error *err)
{
	size_t cap = ge_graph_capacity(g);
	uint8_t *isfed = ge_xcalloc(cap + 1, 1);
	uint32_t *need = ge_xcalloc(cap + 1, sizeof *need);
	struct xplan *p = ge_xcalloc(1, sizeof *p);
	int rc = GE_OK;
	p->g = g;
	p->fname = fname;
	p->F = ge_graph_frames(g);
	for (size_t i = 0; i < nfed; i++)
		isfed[fed[i].op] = 1;
	p->nn = plan_need(g, start, nstart, isfed, need);
	p->n = ge_xcalloc(p->nn + 1, sizeof *p->n);
	for (size_t id = 0; id < cap; id++)
		if (need[id])
			p->n[need[id] - 1].id = (ge_opid)id;
	for (size_t i = 0; i < p->nn && !rc; i++)
		rc = plan_node(rt, p, &p->n[i], isfed[p->n[i].id], err);
	if (!rc)
		rc = plan_edges(p, need, err);
	if (!rc)
		rc = plan_acyclic(p, err);
	if (rc)
		goto out;
	plan_frames(p);
	plan_roots(p);
	/* feeds, grouped by node through aux */
	p->nfeed = nfed;
	p->feed_node = ge_xmalloc((nfed + 1) * sizeof *p->feed_node);
	p->feed_out = ge_xmalloc((nfed + 1) * sizeof *p->feed_out);
	p->feed_idx = ge_xmalloc((nfed + 1) * sizeof *p->feed_idx);
	for (size_t i = 0; i < nfed; i++) {
		p->feed_node[i] = need[fed[i].op] ? need[fed[i].op] - 1
						  : UINT32_MAX;
		p->feed_out[i] = fed[i].index;
		p->feed_idx[i] = (int32_t)i;
	}
	/* fetches, grouped by node */
	p->nfetch = nfetch;
	p->fetch = ge_xmalloc((nfetch + 1) * sizeof *p->fetch);
	for (size_t i = 0; i < nfetch; i++)
		p->n[need[fetch[i].op] - 1].nf++;
	uint32_t fo = 0;
	for (size_t i = 0; i < p->nn; i++) {
		p->n[i].f0 = fo;
		fo += p->n[i].nf;
		p->n[i].nf = 0;
	}
	for (size_t i = 0; i < nfetch && !rc; i++) {
		struct xnode *n = &p->n[need[fetch[i].op] - 1];
		struct xfetch *f = &p->fetch[n->f0 + n->nf++];
		f->node = (uint32_t)(n - p->n);
		f->out = fetch[i].index;
		f->idx = (int32_t)i;
		int32_t of = n->kind == XK_EXIT ?
			ge_frames_parent(p->F, n->frame) : n->frame;
		if (of != 0 && f->out != GE_CONTROL)
			rc = node_fail(p, n, err, "cannot be fetched: it is in "
				       "the while loop frame '%s'",
				       ge_frames_name(p->F, n->frame));
	}
out:
	free(isfed);
	free(need);
	if (rc) {
		ge_xplan_free(p);
		return rc;
	}
	*out = p;
	return GE_OK;
}

/* ---------------------------------------------------------------- runs */

struct xframe;

struct xiter {
	int64_t num;
	size_t bytes;           /* charged to the budget */
	int32_t *pend, *dead;
	ge_xt **in;
	int64_t outstanding;    /* ops of it ready or running */
	int nframes;            /* child frames alive */
	struct xframe *kids;
	struct xiter *spare;    /* next on its spare list */
};

struct xinv {
	uint32_t node;
	ge_xt *t;               /* NULL: dead */
};

struct xframe {
	int32_t sf;
	struct xframe *parent;
	struct xiter *piter;
	struct xframe *sib;     /* next child of piter */
	struct xframe *next, *prev; /* every frame of the run */
	struct xiter **it;      /* iterations base.. */
	int64_t base, count, cap;
	int64_t last;           /* highest iteration made */
	int pending_inputs;     /* Enters yet to run */
	struct xinv *inv;
	size_t ninv, capinv;
	uint32_t *dexits;
	size_t ndexits, capdexits;
};

struct xready {
	uint32_t node;
	int dead;
	struct xframe *f;
	struct xiter *it;
};

struct xrun {
	struct ge_xrt *rt;
	struct xplan *p;
	ge_error *err;
	int failed;
	struct xready *q;
	size_t nq, capq;
	struct xframe *root;
	struct xframe *frames;
	ge_xt *const *args;      /* a body's args, or the feeds */
	int nargs;
	ge_xt **res;             /* fetches or a body's outputs */
	uint8_t *res_dead;
	int nres;
	const char *prefix;      /* names for on_tensor: "" or "fn/" */
	int64_t max_iter;
	struct xiter **spare;    /* ended iterations to reuse, by frame */
};

static int run_fail(struct xrun *r, const struct xnode *n, const char *fmt,
		    ...) GE_PRINTF(3, 4);
static int run_fail(struct xrun *r, const struct xnode *n, const char *fmt,
		    ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return node_fail(r->p, n, r->err, "%s", msg);
}

/* A new iteration of F, its counts as the plan sets them: one that ended
 * is reused when there is one (a loop allocates nothing per iteration). */
static struct xiter *iter_new(struct xrun *r, struct xframe *F, int64_t num)
{
	const struct xsf *sf = &r->p->sf[F->sf];
	size_t bytes = sizeof(struct xiter) + ((size_t)sf->nlocal + 1) *
		2 * sizeof(int32_t) + ((size_t)sf->nslot + 1) * sizeof(ge_xt *);
	if (ge_xbudget_mem(r->rt->budget, bytes, "iteration state", r->err)) {
		if (F->sf)
			ge_err_prefix(r->err, "while loop '%s', iteration %"
				      PRId64, ge_frames_name(r->p->F, F->sf),
				      num);
		r->failed = 1;
		return NULL;
	}
	struct xiter *I = r->spare[F->sf];
	if (I) {
		r->spare[F->sf] = I->spare;
		memset(I->dead, 0, ((size_t)sf->nlocal + 1) * sizeof *I->dead);
	} else {
		I = ge_xcalloc(1, sizeof *I);
		I->pend = ge_xmalloc(((size_t)sf->nlocal + 1) *
				     sizeof *I->pend);
		I->dead = ge_xcalloc((size_t)sf->nlocal + 1, sizeof *I->dead);
		I->in = ge_xcalloc((size_t)sf->nslot + 1, sizeof *I->in);
	}
	I->kids = NULL;
	I->num = num;
	I->bytes = bytes;
	I->outstanding = 0;
	I->nframes = 0;
	memcpy(I->pend, sf->pend0, (size_t)sf->nlocal * sizeof *I->pend);
	if (F->count == F->cap) {
		F->cap = F->cap ? 2 * F->cap : 4;
		F->it = ge_xrealloc(F->it, (size_t)F->cap * sizeof *F->it);
	}
	F->it[F->count++] = I;
	F->last = num;
	return I;
}

static void iter_free(struct xrun *r, struct xframe *F, struct xiter *I)
{
	int32_t ns = r->p->sf[F->sf].nslot;
	for (int32_t i = 0; i < ns; i++) {
		ge_xt_unref(I->in[i]);
		I->in[i] = NULL;
	}
	ge_xbudget_release(r->rt->budget, I->bytes);
	/* kept for the next iteration of a frame of the same loop */
	I->spare = r->spare[F->sf];
	r->spare[F->sf] = I;
}

static void iter_destroy(struct xiter *I)
{
	free(I->pend);
	free(I->dead);
	free(I->in);
	free(I);
}

static struct xiter *iter_get(struct xframe *F, int64_t num)
{
	if (num < F->base || num >= F->base + F->count)
		return NULL;
	return F->it[num - F->base];
}

static struct xframe *frame_new(struct xrun *r, int32_t sf,
				struct xframe *parent, struct xiter *piter)
{
	struct xframe *F = ge_xcalloc(1, sizeof *F);
	F->sf = sf;
	F->parent = parent;
	F->piter = piter;
	F->pending_inputs = r->p->sf[sf].nenter;
	F->next = r->frames;
	if (r->frames)
		r->frames->prev = F;
	r->frames = F;
	if (piter) {
		F->sib = piter->kids;
		piter->kids = F;
		piter->nframes++;
	}
	iter_new(r, F, 0);
	return F;
}

static void frame_free(struct xrun *r, struct xframe *F)
{
	for (int64_t i = 0; i < F->count; i++)
		iter_free(r, F, F->it[i]);
	for (size_t i = 0; i < F->ninv; i++)
		ge_xt_unref(F->inv[i].t);
	if (F->prev)
		F->prev->next = F->next;
	else
		r->frames = F->next;
	if (F->next)
		F->next->prev = F->prev;
	free(F->it);
	free(F->inv);
	free(F->dexits);
	free(F);
}

static void push_ready(struct xrun *r, uint32_t node, struct xframe *F,
		       struct xiter *I, int dead)
{
	if (r->nq == r->capq) {
		r->capq = r->capq ? 2 * r->capq : 64;
		r->q = ge_xrealloc(r->q, r->capq * sizeof *r->q);
	}
	if (r->p->n[node].trigger)
		dead = 0;
	r->q[r->nq++] = (struct xready){node, dead, F, I};
	I->outstanding++;
}

/* Hands outputs (NULL: no value) of node n, dead or not, to its
 * consumers in iteration I of frame F; TensorFlow's rules for Merge. */
static void activate(struct xrun *r, struct xframe *F, struct xiter *I,
		     const struct xnode *n, ge_xt *const *outs, int dead)
{
	const struct xplan *p = r->p;
	for (uint32_t k = 0; k < n->ne; k++) {
		const struct xedge *e = &p->e[n->e0 + k];
		const struct xnode *d = &p->n[e->dst];
		int32_t *pend = &I->pend[d->local], *dc = &I->dead[d->local];
		ge_xt *v = dead ? NULL : outs[e->out];
		ge_xt **slot = &I->in[d->in0 + e->slot];
		if (d->kind == XK_MERGE) {
			if (v) {
				int32_t c = *pend;
				if (!(c & 1))
					continue; /* a live input came */
				*pend = c & ~1;
				ge_xt_unref(*slot);
				*slot = ge_xt_ref(v);
				if (c == 1)
					push_ready(r, e->dst, F, I, 0);
			} else {
				++*dc;
				int ddead = *dc == d->nin ||
					    n->kind == XK_ENTER;
				if (*pend == 1 && ddead) {
					*pend = 0;
					push_ready(r, e->dst, F, I, 1);
				}
			}
			continue;
		}
		ge_xt_unref(*slot);
		*slot = ge_xt_ref(v);
		if (!v)
			++*dc;
		if (--*pend == 0)
			push_ready(r, e->dst, F, I, *dc > 0);
	}
	for (uint32_t k = 0; k < n->nc; k++) {
		uint32_t di = p->ce[n->c0 + k];
		const struct xnode *d = &p->n[di];
		int32_t *pend = &I->pend[d->local], *dc = &I->dead[d->local];
		if (d->kind == XK_MERGE) {
			*pend -= 2;
			int ddead = *dc == d->nin;
			if (*pend == 0 || (*pend == 1 && ddead)) {
				int dd = *pend == 1;
				*pend = 0;
				push_ready(r, di, F, I, dd);
			}
			continue;
		}
		if (dead)
			++*dc;
		if (--*pend == 0)
			push_ready(r, di, F, I, *dc > 0);
	}
}

static int iter_done(const struct xframe *F, const struct xiter *I)
{
	return I->outstanding == 0 && I->nframes == 0 && I->num == F->base &&
	       (I->num != 0 || F->pending_inputs == 0);
}

/* A dead input to node di of iteration I, from a dead Exit. */
static void dead_into(struct xrun *r, struct xframe *F, struct xiter *I,
		      uint32_t di, int control)
{
	const struct xnode *d = &r->p->n[di];
	int32_t *pend = &I->pend[d->local], *dc = &I->dead[d->local];
	if (d->kind == XK_MERGE) {
		if (control)
			*pend -= 2;
		else
			++*dc;
		int ddead = *dc == d->nin;
		if ((control && *pend == 0) || (*pend == 1 && ddead)) {
			*pend = 0;
			push_ready(r, di, F, I, ddead);
		}
		return;
	}
	++*dc;
	if (--*pend == 0)
		push_ready(r, di, F, I, 1);
}

/* Ends frame F: its dead Exits reach their consumers in the parent. */
static void delete_frame(struct xrun *r, struct xframe *F)
{
	struct xframe *P = F->parent;
	struct xiter *PI = F->piter;
	for (size_t i = 0; i < F->ndexits; i++) {
		const struct xnode *x = &r->p->n[F->dexits[i]];
		for (uint32_t k = 0; k < x->ne; k++)
			dead_into(r, P, PI, r->p->e[x->e0 + k].dst, 0);
		for (uint32_t k = 0; k < x->nc; k++)
			dead_into(r, P, PI, r->p->ce[x->c0 + k], 1);
	}
	for (struct xframe **pp = &PI->kids; *pp; pp = &(*pp)->sib)
		if (*pp == F) {
			*pp = F->sib;
			break;
		}
	PI->nframes--;
	frame_free(r, F);
}

/* Ends the iterations of F that are done, from I on, and F itself when
 * nothing of it is left. */
static void cleanup(struct xrun *r, struct xframe *F, struct xiter *I)
{
	for (;;) {
		while (I && iter_done(F, I)) {
			iter_free(r, F, I);
			memmove(F->it, F->it + 1, (size_t)(F->count - 1) *
				sizeof *F->it);
			F->count--;
			F->base++;
			I = iter_get(F, F->base);
		}
		if (F == r->root || F->pending_inputs != 0 || F->count != 0)
			return;
		/* the frame ended: its parent iteration may end too */
		struct xframe *P = F->parent;
		I = F->piter;
		delete_frame(r, F);
		F = P;
	}
}

static struct xframe *child_frame(struct xrun *r, struct xframe *F,
				  struct xiter *I, int32_t sf)
{
	for (struct xframe *c = I->kids; c; c = c->sib)
		if (c->sf == sf)
			return c;
	return frame_new(r, sf, F, I);
}

/* A new iteration of F, with the loop invariants given to it. */
static struct xiter *next_iter(struct xrun *r, struct xframe *F,
			       const struct xnode *n)
{
	if (F->last + 1 > r->max_iter) {
		r->failed = 1;
		ge_err(r->err, GE_EINVAL, "while loop '%s': more than %" PRId64
		       " iterations (--max-iterations), at %s",
		       ge_frames_name(r->p->F, F->sf), r->max_iter,
		       ge_op_name(r->p->g, n->id));
		return NULL;
	}
	struct xiter *J = iter_new(r, F, F->last + 1);
	if (!J)
		return NULL;
	J->outstanding++; /* held while the invariants go in */
	for (size_t i = 0; i < F->ninv; i++) {
		const struct xnode *e = &r->p->n[F->inv[i].node];
		activate(r, F, J, e, &F->inv[i].t, F->inv[i].t == NULL);
	}
	J->outstanding--;
	return J;
}

/* Where node n's outputs go. */
static void propagate(struct xrun *r, const struct xnode *n, struct xframe *F,
		      struct xiter *I, ge_xt **outs, int dead)
{
	switch (n->kind) {
	case XK_ENTER: {
		struct xframe *C = child_frame(r, F, I, n->child);
		if (r->failed)
			return;
		C->pending_inputs--;
		if (n->center) {
			if (C->ninv == C->capinv) {
				C->capinv = C->capinv ? 2 * C->capinv : 4;
				C->inv = ge_xrealloc(C->inv, C->capinv *
						     sizeof *C->inv);
			}
			C->inv[C->ninv++] = (struct xinv){
				(uint32_t)(n - r->p->n),
				dead ? NULL : ge_xt_ref(outs[0])};
			for (int64_t i = 0; i < C->count; i++) {
				struct xiter *J = C->it[i];
				J->outstanding++;
				activate(r, C, J, n, outs, dead);
				J->outstanding--;
			}
		} else {
			struct xiter *J = iter_get(C, 0);
			J->outstanding++;
			activate(r, C, J, n, outs, dead);
			J->outstanding--;
		}
		cleanup(r, C, C->it[0]);
		break;
	}
	case XK_EXIT:
		if (dead) {
			if (I->num == F->last) {
				if (F->ndexits == F->capdexits) {
					F->capdexits = F->capdexits ?
						2 * F->capdexits : 4;
					F->dexits = ge_xrealloc(F->dexits,
						F->capdexits *
						sizeof *F->dexits);
				}
				F->dexits[F->ndexits++] =
					(uint32_t)(n - r->p->n);
			}
		} else {
			activate(r, F->parent, F->piter, n, outs, 0);
		}
		break;
	case XK_NEXT: {
		if (dead)
			break;
		struct xiter *J = iter_get(F, I->num + 1);
		if (!J && I->num + 1 <= F->last)
			break; /* that iteration ended: nothing reads it */
		if (!J) {
			F->ndexits = 0;
			J = next_iter(r, F, n);
			if (!J)
				return;
		}
		J->outstanding++;
		activate(r, F, J, n, outs, 0);
		J->outstanding--;
		if (J->outstanding == 0)
			cleanup(r, F, J);
		break;
	}
	default:
		activate(r, F, I, n, outs, dead);
	}
}

/* ---------------------------------------------------------------- ops */


/* TensorFlow's truth of a cond tensor: a scalar's value (a string's
 * being non-empty), else whether it has elements. */
static int to_bool(const ge_xt *t)
{
	if (t->rank > 0)
		return t->n > 0;
	if (t->dtype == DT_STRING)
		return ((const ge_xstr *)t->data)[0].len > 0;
	if (t->dtype == DT_RESOURCE || !ge_xt_elem_size(t->dtype))
		return 1;
	return ge_xt_get_double(t, 0) != 0;
}

/* The function an attr of a functional op names (entry i of a list). */
static ge_funcid attr_func(struct xrun *r, const struct xnode *n,
			   const char *attr, size_t i)
{
	const Tensorflow__AttrValue *v = ge_op_attr(r->p->g, n->id, attr,
						    NULL);
	const char *s = NULL;
	if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC &&
	    v->func)
		s = v->func->name;
	else if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		 v->list && i < v->list->n_func)
		s = v->list->func[i]->name;
	ge_funcid f = s ? ge_func_find(r->rt->g, s) : GE_NOFUNC;
	if (f == GE_NOFUNC)
		run_fail(r, n, "attr '%s' names no function of the library%s%s",
			 attr, s ? ": " : "", s ? s : "");
	return f;
}

/* Calls f from node n of run r, naming the callee in on_tensor names. */
static int call_from(struct xrun *r, const struct xnode *n, ge_funcid f,
		     ge_xt *const *args, int nargs, ge_xt **outs, int nout)
{
	ge_buf pre = GE_BUF_INIT;
	if (r->rt->o.on_tensor)
		ge_buf_printf(&pre, "%s%s/", r->prefix,
			      ge_func_name(r->rt->g, f));
	ge_buf_addc(&pre, 0);
	int rc = ge_xcall(r->rt, f, args, nargs, outs, nout,
			  (const char *)pre.data, r->err);
	ge_buf_free(&pre);
	if (rc) {
		r->failed = 1;
		for (int i = 0; i < nout; i++) {
			ge_xt_unref(outs[i]);
			outs[i] = NULL;
		}
	}
	(void)n;
	return rc;
}

static int run_while(struct xrun *r, const struct xnode *n, ge_xt **in,
		     ge_xt **outs)
{
	ge_funcid cond = attr_func(r, n, "cond", 0);
	ge_funcid body = cond == GE_NOFUNC ? GE_NOFUNC :
			 attr_func(r, n, "body", 0);
	int nv = n->nin, rc = GE_OK;
	if (body == GE_NOFUNC)
		return GE_EINVAL;
	if (n->nout != nv)
		return run_fail(r, n, "has %d inputs but %d outputs", nv,
				n->nout);
	ge_xt **state = ge_xcalloc((size_t)nv + 1, sizeof *state);
	for (int i = 0; i < nv; i++)
		state[i] = ge_xt_ref(in[i]);
	for (int64_t it = 0;; it++) {
		ge_xt *c = NULL;
		rc = call_from(r, n, cond, state, nv, &c, 1);
		if (rc)
			break;
		int b = to_bool(c);
		ge_xt_unref(c);
		if (!b)
			break;
		if (it >= r->max_iter) {
			rc = run_fail(r, n, "more than %" PRId64 " iterations "
				      "(--max-iterations)", r->max_iter);
			break;
		}
		ge_xt **next = ge_xcalloc((size_t)nv + 1, sizeof *next);
		rc = call_from(r, n, body, state, nv, next, nv);
		for (int i = 0; i < nv; i++)
			ge_xt_unref(state[i]);
		free(state);
		state = next;
		if (rc)
			break;
	}
	for (int i = 0; i < nv; i++) {
		if (rc)
			ge_xt_unref(state[i]);
		else
			outs[i] = state[i];
	}
	free(state);
	return rc;
}

static int run_branch(struct xrun *r, const struct xnode *n, ge_xt **in,
		      ge_xt **outs)
{
	ge_funcid f;
	if (n->nin < 1)
		return run_fail(r, n, "has no condition input");
	if (n->kind == XK_IF) {
		f = attr_func(r, n, to_bool(in[0]) ? "then_branch"
						   : "else_branch", 0);
	} else {
		size_t nb = 0;
		if (in[0]->dtype != DT_INT32 || in[0]->n != 1)
			return run_fail(r, n, "branch_index is not an int32 "
					"scalar");
		int64_t b = ge_xt_get_int64(in[0], 0);
		const Tensorflow__AttrValue *v = ge_op_attr(r->p->g, n->id,
							    "branches", NULL);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		    v->list)
			nb = v->list->n_func;
		if (nb == 0)
			return run_fail(r, n, "has no branches");
		if (b < 0 || (uint64_t)b >= nb)
			b = (int64_t)nb - 1; /* the default branch */
		f = attr_func(r, n, "branches", (size_t)b);
	}
	if (f == GE_NOFUNC)
		return GE_EINVAL;
	return call_from(r, n, f, in + 1, n->nin - 1, outs, n->nout);
}

static int run_assert(struct xrun *r, const struct xnode *n, ge_xt **in)
{
	if (n->nin < 1 || in[0]->dtype != DT_BOOL || in[0]->n != 1)
		return run_fail(r, n, "condition is not a bool scalar");
	if (((const uint8_t *)in[0]->data)[0])
		return GE_OK;
	ge_buf b = GE_BUF_INIT;
	for (int i = 1; i < n->nin && b.len < 300; i++) {
		const ge_xt *t = in[i];
		if (t->dtype == DT_STRING && t->n > 0) {
			const ge_xstr *s = t->data;
			ge_buf_printf(&b, " %.*s", (int)(s[0].len > 200 ? 200 :
					s[0].len), s[0].p ? s[0].p : "");
		} else {
			char d[96];
			ge_buf_printf(&b, " %s", ge_xt_describe(t, d, sizeof d));
		}
	}
	ge_buf_addc(&b, 0);
	run_fail(r, n, "assertion failed:%s", (const char *)b.data);
	ge_buf_free(&b);
	return GE_EINVAL;
}

static int run_kernel(struct xrun *r, const struct xnode *n, ge_xt **in,
		      ge_xt **outs)
{
	ge_kctx k = {
		r->p->g, n->id, ge_op_type(r->p->g, n->id),
		ge_op_name(r->p->g, n->id), in, n->nin, outs, n->nout,
		r->rt->budget, r->rt, r->err,
	};
	int rc = n->k->fn(&k);
	if (rc) {
		r->failed = 1;
		for (int i = 0; i < n->nout; i++) {
			ge_xt_unref(outs[i]);
			outs[i] = NULL;
		}
	}
	return rc;
}

/* Every output a consumer or a fetch reads is there. */
static int check_outputs(struct xrun *r, const struct xnode *n, ge_xt **outs)
{
	const struct xplan *p = r->p;
	for (uint32_t k = 0; k < n->ne; k++) {
		int32_t o = p->e[n->e0 + k].out;
		if (!outs[o])
			return run_fail(r, n, "gave no output %d, which '%s' "
					"reads", o,
					ge_op_name(p->g,
						   p->n[p->e[n->e0 + k].dst].id));
	}
	for (uint32_t k = 0; k < n->nf; k++) {
		int32_t o = p->fetch[n->f0 + k].out;
		if (o != GE_CONTROL && !outs[o])
			return run_fail(r, n, "gave no output %d, which is "
					"fetched", o);
	}
	return GE_OK;
}

static int run_fed(struct xrun *r, const struct xnode *n, ge_xt **outs)
{
	const struct xplan *p = r->p;
	uint32_t self = (uint32_t)(n - p->n);
	for (size_t i = 0; i < p->nfeed; i++)
		if (p->feed_node[i] == self && !outs[p->feed_out[i]])
			outs[p->feed_out[i]] = ge_xt_ref(r->args[p->feed_idx[i]]);
	return GE_OK;
}

/* Runs live node n: its outputs into outs. */
static int execute(struct xrun *r, const struct xnode *n, ge_xt **in,
		   ge_xt **outs)
{
	if (!n->takes_ref)
		for (int i = 0; i < n->nin; i++)
			if (in[i] && ge_xvars_is_ref(in[i])) {
				ge_xt *v = ge_xvars_deref(r->rt, in[i],
					ge_op_name(r->p->g, n->id), r->err);
				if (!v) {
					r->failed = 1;
					return GE_EINVAL;
				}
				ge_xt_unref(in[i]);
				in[i] = v;
			}
	switch (n->kind) {
	case XK_KERNEL:
		return run_kernel(r, n, in, outs);
	case XK_FED:
		return run_fed(r, n, outs);
	case XK_ARG:
		if (!r->p->fname)
			return run_fail(r, n, "is a function's argument in a "
					"graph: it must be fed");
		if (n->aux >= r->nargs)
			return run_fail(r, n, "reads argument %d of %d",
					n->aux, r->nargs);
		outs[0] = ge_xt_ref(r->args[n->aux]);
		return GE_OK;
	case XK_RETVAL:
		if (!r->p->fname)
			return run_fail(r, n, "is a function's return value in "
					"a graph: it cannot run");
		if (n->nin < 1 || n->aux >= r->nres)
			return run_fail(r, n, "has no input or a bad index");
		ge_xt_unref(r->res[n->aux]);
		r->res[n->aux] = ge_xt_ref(in[0]);
		return GE_OK;
	case XK_PLACEHOLDER:
		return run_fail(r, n, "must be fed: no value was given for "
				"'%s:0'", ge_op_name(r->p->g, n->id));
	case XK_PWD:
	case XK_FORWARD:
	case XK_ENTER:
	case XK_EXIT:
	case XK_NEXT:
		for (int i = 0; i < n->nin && i < n->nout; i++)
			outs[i] = ge_xt_ref(in[i]);
		return GE_OK;
	case XK_NOOP:
	case XK_PRINTV2:
		return GE_OK;
	case XK_SWITCH:
		if (n->nin != 2 || in[1]->dtype != DT_BOOL || in[1]->n != 1)
			return run_fail(r, n, "pred is not a bool scalar");
		outs[((const uint8_t *)in[1]->data)[0] ? 1 : 0] =
			ge_xt_ref(in[0]);
		return GE_OK;
	case XK_MERGE:
		for (int i = 0; i < n->nin; i++)
			if (in[i]) {
				outs[0] = ge_xt_ref(in[i]);
				outs[1] = ge_xt_scalar(DT_INT32, r->rt->budget,
						       ge_op_name(r->p->g,
								  n->id),
						       r->err);
				if (!outs[1]) {
					r->failed = 1;
					return GE_EINVAL;
				}
				((int32_t *)outs[1]->data)[0] = i;
				return GE_OK;
			}
		return run_fail(r, n, "ran without a live input");
	case XK_CALL: {
		ge_funcid f = GE_NOFUNC;
		const char *type = ge_op_type(r->p->g, n->id);
		if (kind_of(type) == XK_CALL)
			f = attr_func(r, n, "f", 0);
		else
			f = ge_func_find(r->rt->g, type);
		if (f == GE_NOFUNC)
			return GE_EINVAL;
		return call_from(r, n, f, in, n->nin, outs, n->nout);
	}
	case XK_WHILE:
		return run_while(r, n, in, outs);
	case XK_IF:
	case XK_CASE:
		return run_branch(r, n, in, outs);
	case XK_ASSERT:
		return run_assert(r, n, in);
	}
	return run_fail(r, n, "unknown kind %d", n->kind);
}

/* "@3" (or "@1.4" nested) for a tensor of an iteration of a loop. */
static void iter_path(ge_buf *b, const struct xframe *F, const struct xiter *I)
{
	size_t depth = 0, k = 0;
	for (const struct xframe *f = F; f->parent; f = f->parent)
		depth++;
	if (!depth)
		return;
	int64_t *num = ge_xmalloc(depth * sizeof *num);
	for (; F->parent; I = F->piter, F = F->parent)
		num[depth - 1 - k++] = I->num;
	for (k = 0; k < depth; k++)
		ge_buf_printf(b, "%c%" PRId64, k ? '.' : '@', num[k]);
	free(num);
}

/* Fetches and the on_tensor callback, after node n ran. */
static void report(struct xrun *r, const struct xnode *n,
		   const struct xframe *F, const struct xiter *I,
		   ge_xt **outs, int dead)
{
	const struct xplan *p = r->p;
	int exit = n->kind == XK_EXIT;
	int root = exit ? F->parent == r->root : F == r->root;
	for (uint32_t k = 0; k < n->nf; k++) {
		const struct xfetch *f = &p->fetch[n->f0 + k];
		uint8_t *st = &r->res_dead[f->idx];
		if (f->out == GE_CONTROL) {
			/* ran, live or dead; in a loop, in some iteration */
			if (*st != 2)
				*st = (uint8_t)(dead ? 1 : 2);
			continue;
		}
		/* a Switch's untaken output is dead, its op live */
		int d = dead || !outs[f->out];
		if (!root || (exit && (d || *st == 2))) {
			/* an Exit is dead in every iteration but the last */
			if (!*st)
				*st = 1;
			continue;
		}
		ge_xt *v = d ? NULL : ge_xt_ref(outs[f->out]);
		if (v && ge_xvars_is_ref(v)) {
			/* a TF1 variable is fetched as its value */
			ge_xt *val = ge_xvars_deref(r->rt, v,
						    ge_op_name(p->g, n->id),
						    r->err);
			ge_xt_unref(v);
			if (!(v = val)) {
				r->failed = 1;
				return;
			}
		}
		ge_xt_unref(r->res[f->idx]);
		r->res[f->idx] = v;
		*st = (uint8_t)(d ? 1 : 2);
	}
	if (n->kind == XK_RETVAL && dead && p->fname && n->aux < r->nres)
		r->res_dead[n->aux] = 1;
	if (dead || !r->rt->o.on_tensor)
		return;
	ge_buf b = GE_BUF_INIT;
	for (int i = 0; i < n->nout; i++) {
		if (!outs[i])
			continue;
		b.len = 0;
		ge_buf_printf(&b, "%s%s:%d", r->prefix,
			      ge_op_name(p->g, n->id), i);
		if (exit)
			iter_path(&b, F->parent, F->piter);
		else
			iter_path(&b, F, I);
		ge_buf_addc(&b, 0);
		r->rt->o.on_tensor(r->rt->o.ud, (const char *)b.data, outs[i]);
	}
	ge_buf_free(&b);
}

static void process(struct xrun *r, const struct xready *rd)
{
	const struct xnode *n = &r->p->n[rd->node];
	struct xframe *F = rd->f;
	struct xiter *I = rd->it;
	ge_xt **in = I->in + n->in0;
	ge_xt *small[8];
	ge_xt **outs = n->nout <= 8 ? small :
		       ge_xmalloc((size_t)n->nout * sizeof *outs);
	memset(outs, 0, (size_t)(n->nout > 8 ? n->nout : 8) * sizeof *outs);
	if (!rd->dead && execute(r, n, in, outs) == GE_OK &&
	    n->kind != XK_SWITCH)
		check_outputs(r, n, outs);
	for (int i = 0; i < n->nin; i++) {
		ge_xt_unref(in[i]);
		in[i] = NULL;
	}
	if (!r->failed) {
		report(r, n, F, I, outs, rd->dead);
		propagate(r, n, F, I, outs, rd->dead);
	}
	for (int i = 0; i < n->nout; i++)
		ge_xt_unref(outs[i]);
	if (outs != small)
		free(outs);
	if (r->failed)
		return;
	if (--I->outstanding == 0)
		cleanup(r, F, I);
}

/* Runs plan p: args are a body's arguments or the feeds; res receives
 * the fetches or the body's outputs (nres of them). */
int ge_xrun(struct ge_xrt *rt, struct xplan *p, ge_xt *const *args,
	    int nargs, ge_xt **res, int nres, const char *prefix,
	    ge_error *err)
{
	struct xrun r = {0};
	r.rt = rt;
	r.p = p;
	r.err = err;
	r.args = args;
	r.nargs = nargs;
	r.res = res;
	r.nres = nres;
	r.res_dead = ge_xcalloc((size_t)nres + 1, 1);
	r.prefix = prefix ? prefix : "";
	r.max_iter = rt->o.max_iterations;
	r.spare = ge_xcalloc(p->nsf + 1, sizeof *r.spare);
	r.root = frame_new(&r, 0, NULL, NULL);
	struct xiter *I0 = r.failed ? NULL : r.root->it[0];
	for (size_t i = 0; I0 && i < p->nroots; i++)
		push_ready(&r, p->roots[i], r.root, I0, 0);
	while (r.nq && !r.failed) {
		struct xready rd = r.q[--r.nq];
		process(&r, &rd);
	}
	while (r.frames)
		frame_free(&r, r.frames);
	for (size_t f = 0; f < p->nsf; f++)
		while (r.spare[f]) {
			struct xiter *I = r.spare[f];
			r.spare[f] = I->spare;
			iter_destroy(I);
		}
	free(r.spare);
	free(r.q);
	int rc = r.failed ? (err->code ? err->code : GE_EINVAL) : GE_OK;
	for (int i = 0; i < nres && !rc; i++) {
		if (res[i] || (p->fname == NULL && r.res_dead[i] == 2))
			continue;
		if (p->fname) {
			rc = ge_err(err, GE_EINVAL, "output %d has no value "
				    "(%s)", i, r.res_dead[i] ? "it is dead: "
				    "an untaken branch" : "never computed");
			continue;
		}
		const struct xfetch *f = NULL;
		for (size_t k = 0; k < p->nfetch; k++)
			if (p->fetch[k].idx == i)
				f = &p->fetch[k];
		if (f->out == GE_CONTROL && r.res_dead[i])
			continue;
		ge_buf b = GE_BUF_INIT;
		rc = ge_err(err, GE_EINVAL, "fetch '%s': %s",
			    ge_tensor_fmt(p->g, (ge_tref){p->n[f->node].id,
				    f->out}, &b),
			    r.res_dead[i] ? "it is dead (on an untaken "
			    "branch of a cond)" : "its op never ran (an input "
			    "never came)");
		ge_buf_free(&b);
	}
	if (rc)
		for (int i = 0; i < nres; i++) {
			ge_xt_unref(res[i]);
			res[i] = NULL;
		}
	free(r.res_dead);
	return rc;
}

/* ---------------------------------------------------------------- calls */

/* The plan of a function body: what its _Retval ops need, and the ops
 * with an effect (assignments, asserts) wherever they are. */
static int body_plan(struct ge_xrt *rt, ge_funcid f, struct xplan **out,
		     ge_error *err)
{
	ge_graph *b = ge_func_body(rt->g, f, err);
	if (!b)
		return err->code ? err->code : GE_EFORMAT;
	for (size_t i = 0; i < rt->nplans; i++)
		if (rt->plans[i]->g == b) {
			*out = rt->plans[i];
			return GE_OK;
		}
	ge_opvec start = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(b);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(b, (ge_opid)id))
			continue;
		const char *t = ge_op_type(b, (ge_opid)id);
		if (!strcmp(t, "_Retval") || has_effect(b, t))
			ge_opvec_push(&start, (ge_opid)id);
	}
	struct xplan *p = NULL;
	int rc = ge_xplan_build(rt, b, ge_func_name(rt->g, f), start.v,
				start.n, NULL, 0, NULL, 0, &p, err);
	ge_opvec_free(&start);
	if (rc)
		return rc;
	if (rt->nplans == rt->plancap) {
		rt->plancap = rt->plancap ? 2 * rt->plancap : 8;
		rt->plans = ge_xrealloc(rt->plans, rt->plancap *
					sizeof *rt->plans);
	}
	rt->plans[rt->nplans++] = p;
	*out = p;
	return GE_OK;
}

int ge_xcall(struct ge_xrt *rt, ge_funcid f, ge_xt *const *args, int nargs,
	     ge_xt **outs, int nout, const char *prefix, ge_error *err)
{
	const char *fname = ge_func_name(rt->g, f);
	struct xplan *p = NULL;
	int rc;
	if (rt->depth >= MAX_CALL_DEPTH)
		return ge_err(err, GE_EINVAL, "function '%s': calls nest "
			      "deeper than %d", fname, MAX_CALL_DEPTH);
	rc = body_plan(rt, f, &p, err);
	if (!rc && (nargs < p->nargs || nout > p->nrets ||
		    (size_t)nargs != ge_func_num_in_tensors(rt->g, f)))
		rc = ge_err(err, GE_EINVAL, "called with %d inputs and %d "
			    "outputs, it takes %zu and gives %zu", nargs, nout,
			    ge_func_num_in_tensors(rt->g, f),
			    ge_func_num_out_tensors(rt->g, f));
	if (!rc) {
		ge_xt **res = ge_xcalloc((size_t)p->nrets + 1, sizeof *res);
		rt->depth++;
		rc = ge_xrun(rt, p, args, nargs, res, p->nrets, prefix, err);
		rt->depth--;
		for (int i = 0; i < p->nrets; i++) {
			if (i < nout)
				outs[i] = res[i];
			else
				ge_xt_unref(res[i]);
		}
		free(res);
	}
	if (rc)
		ge_err_prefix(err, "function '%s'", fname);
	return rc;
}
