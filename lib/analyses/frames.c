/*
 * frames.c: TensorFlow's control-flow frames (frames.h), the checks its
 * executor implies, and whole-loop views.
 *
 * The walk follows TensorFlow's BuildControlFlowInfo: roots are the ops
 * with no (live) input, the queue is breadth first along data and control
 * edges, an Enter opens its frame_name under the frame of the edge that
 * first reaches it, an Exit's consumers are in its frame's parent.  What
 * TensorFlow reports as "has inputs from different frames" is kept as a
 * mismatch for ge_frames_validate.
 */
#include "analyses/frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_impl.h"

enum { K_OTHER = 0, K_ENTER, K_EXIT, K_NEXT, K_MERGE, K_SWITCH, K_LOOPCOND };

struct frm {
	char *name;
	int32_t parent, top;
	ge_opid enter;     /* the Enter that opened it */
	size_t n_ops;      /* ops in it (own ops only) */
	size_t n_tree;     /* ops in it and in the loops nested in it */
};

struct mism {
	ge_opid op, late;  /* op, and the input op that disagrees */
	int32_t f_late;
};

struct ge_frames {
	uint64_t version;
	size_t n_ops;      /* graph capacity when computed */
	int valid;
	int32_t *fr;
	ge_opid *via;      /* the op whose edge reached an op first */
	uint8_t *kind;
	struct frm *f;
	size_t n, cap;
	uint32_t *hash;    /* frame id + 1; 0 empty */
	size_t hcap;
	struct mism *mis;
	size_t n_mis, cap_mis;
};

static int kind_of(const char *t)
{
	const char *s = t;
	if (s[0] == 'R' && !strncmp(s, "Ref", 3))
		s += 3;
	switch (s[0]) {
	case 'E':
		if (!strcmp(s, "Enter"))
			return K_ENTER;
		if (!strcmp(s, "Exit"))
			return K_EXIT;
		break;
	case 'N':
		if (!strcmp(s, "NextIteration"))
			return K_NEXT;
		break;
	case 'M':
		if (!strcmp(s, "Merge"))
			return K_MERGE;
		break;
	case 'S':
		if (!strcmp(s, "Switch"))
			return K_SWITCH;
		break;
	case 'L':
		if (s == t && !strcmp(s, "LoopCond"))
			return K_LOOPCOND;
		break;
	case '_':
		/* the executor's own names for the same ops */
		if (s == t && !strcmp(s, "_SwitchN"))
			return K_SWITCH;
		break;
	}
	return K_OTHER;
}

static uint32_t hash_key(const char *s, size_t len, int32_t parent)
{
	uint32_t h = 2166136261u ^ (uint32_t)parent * 0x9e3779b1u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void hash_grow(ge_frames *F)
{
	size_t cap = F->hcap ? F->hcap * 2 : 64;
	free(F->hash);
	F->hash = ge_xcalloc(cap, sizeof *F->hash);
	F->hcap = cap;
	for (size_t i = 1; i < F->n; i++) {
		uint32_t h = hash_key(F->f[i].name, strlen(F->f[i].name),
				      F->f[i].parent);
		size_t k = h & (cap - 1);
		while (F->hash[k])
			k = (k + 1) & (cap - 1);
		F->hash[k] = (uint32_t)i + 1;
	}
}

/* The frame named s under parent, made on first use. */
static int32_t frame_for(ge_frames *F, const char *s, size_t len,
			 int32_t parent, ge_opid enter)
{
	if (2 * (F->n + 1) > F->hcap)
		hash_grow(F);
	uint32_t h = hash_key(s, len, parent);
	size_t k = h & (F->hcap - 1);
	while (F->hash[k]) {
		struct frm *x = &F->f[F->hash[k] - 1];
		/* s may hold a NUL byte: never read the name past its end */
		if (x->parent == parent && !strncmp(x->name, s, len) &&
		    strnlen(x->name, len + 1) == len)
			return (int32_t)F->hash[k] - 1;
		k = (k + 1) & (F->hcap - 1);
	}
	if (F->n == F->cap) {
		F->cap = F->cap ? F->cap * 2 : 16;
		F->f = ge_xrealloc(F->f, F->cap * sizeof *F->f);
	}
	struct frm *x = &F->f[F->n];
	x->name = ge_xstrndup(s, len);
	x->parent = parent;
	x->top = parent > 0 ? F->f[parent].top : (int32_t)F->n;
	x->enter = enter;
	x->n_ops = x->n_tree = 0;
	F->hash[k] = (uint32_t)F->n + 1;
	return (int32_t)F->n++;
}

static void reset(ge_frames *F, size_t n)
{
	for (size_t i = 1; i < F->n; i++)
		free(F->f[i].name);
	if (!F->cap) {
		F->cap = 16;
		F->f = ge_xmalloc(F->cap * sizeof *F->f);
		F->f[0].name = NULL;
	}
	F->n = 1;
	F->f[0] = (struct frm){NULL, -1, 0, GE_NOOP, 0, 0};
	if (F->hcap)
		memset(F->hash, 0, F->hcap * sizeof *F->hash);
	F->n_mis = 0;
	F->fr = ge_xrealloc(F->fr, (n + 1) * sizeof *F->fr);
	F->via = ge_xrealloc(F->via, (n + 1) * sizeof *F->via);
	F->kind = ge_xrealloc(F->kind, n + 1);
	F->n_ops = n;
}

static void add_mismatch(ge_frames *F, ge_opid op, ge_opid late, int32_t f)
{
	/* one report per op is enough to find it */
	if (F->n_mis && F->mis[F->n_mis - 1].op == op)
		return;
	for (size_t i = F->n_mis; i-- > 0 && F->n_mis - i < 4;)
		if (F->mis[i].op == op)
			return;
	if (F->n_mis == F->cap_mis) {
		F->cap_mis = F->cap_mis ? F->cap_mis * 2 : 16;
		F->mis = ge_xrealloc(F->mis, F->cap_mis * sizeof *F->mis);
	}
	F->mis[F->n_mis++] = (struct mism){op, late, f};
}

/* Classifies every op (one string test per distinct interned type). */
static void classify(const ge_graph *g, ge_frames *F)
{
	struct {
		const char *type;
		int kind;
	} memo[64] = {{NULL, 0}};
	for (size_t i = 0; i < g->n_ops; i++) {
		const char *t = g->ops[i].type;
		size_t slot = ((uintptr_t)t >> 3) & 63;
		if (memo[slot].type != t) {
			memo[slot].type = t;
			memo[slot].kind = kind_of(t);
		}
		F->kind[i] = (uint8_t)memo[slot].kind;
		F->fr[i] = -1;
		F->via[i] = GE_NOOP;
	}
}

static int32_t out_frame(const ge_frames *F, ge_opid id)
{
	int32_t f = F->fr[id];
	if (F->kind[id] == K_EXIT && f > 0)
		return F->f[f].parent;
	return f;
}

/* Gives consumer c the frame of producer cur's outputs (of), or records a
 * mismatch when c already has another.  Returns 1 when c is new. */
static int reach(const ge_graph *g, ge_frames *F, ge_opid cur, int32_t of,
		 ge_opid c)
{
	if (F->kind[c] == K_ENTER) {
		if (F->fr[c] < 0) {
			const char *s = "";
			size_t len = 0;
			/* an empty string may come back as NULL */
			if (ge_op_attr_string(g, c, "frame_name", &s, &len) ||
			    !s) {
				s = "";
				len = 0;
			}
			F->fr[c] = frame_for(F, s, len, of, c);
			F->via[c] = cur;
			return 1;
		}
		if (F->f[F->fr[c]].parent != of)
			add_mismatch(F, c, cur, of);
		return 0;
	}
	if (F->fr[c] < 0) {
		F->fr[c] = of;
		F->via[c] = cur;
		return 1;
	}
	if (F->fr[c] != of)
		add_mismatch(F, c, cur, of);
	return 0;
}

static void compute(const ge_graph *g, ge_frames *F)
{
	size_t n = g->n_ops;
	reset(F, n);
	classify(g, F);
	ge_opid *queue = ge_xmalloc((n + 1) * sizeof *queue);
	size_t qh = 0, qt = 0;
	for (size_t i = 0; i < n; i++) {
		const ge_op *o = &g->ops[i];
		if (o->flags & OPF_DEAD)
			continue;
		int root = 1;
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl && root; s++)
			if (o->in[s].op != GE_NOOP)
				root = 0;
		if (root) {
			/* an Enter without input still opens its frame */
			F->fr[i] = -1;
			reach(g, F, GE_NOOP, 0, (ge_opid)i);
			queue[qt++] = (ge_opid)i;
		}
	}
	while (qh < qt) {
		ge_opid cur = queue[qh++];
		const ge_op *o = &g->ops[cur];
		int32_t of = out_frame(F, cur);
		for (uint32_t k = 0; k < o->n_uses; k++)
			if (reach(g, F, cur, of, o->uses[k].op))
				queue[qt++] = o->uses[k].op;
		for (uint32_t k = 0; k < o->n_couts; k++)
			if (reach(g, F, cur, of, o->couts[k]))
				queue[qt++] = o->couts[k];
	}
	free(queue);
	for (size_t i = 0; i < n; i++) {
		int32_t f = F->fr[i];
		if (f <= 0)
			continue;
		F->f[f].n_ops++;
		for (; f > 0; f = F->f[f].parent)
			F->f[f].n_tree++;
	}
	F->version = g->version;
	F->valid = 1;
}

const ge_frames *ge_graph_frames(const ge_graph *cg)
{
	/* a cache, not a change of the graph */
	ge_graph *g = (ge_graph *)cg;
	if (!g->frames) {
		/* the core frees the cache through the parts table */
		ge_parts.frames_release = ge_frames_release;
		g->frames = ge_xcalloc(1, sizeof *g->frames);
	}
	ge_frames *F = g->frames;
	if (!F->valid || F->version != g->version || F->n_ops != g->n_ops)
		compute(g, F);
	return F;
}

void ge_frames_release(ge_frames *F)
{
	if (!F)
		return;
	for (size_t i = 1; i < F->n; i++)
		free(F->f[i].name);
	free(F->f);
	free(F->fr);
	free(F->via);
	free(F->kind);
	free(F->hash);
	free(F->mis);
	free(F);
}

size_t ge_frames_count(const ge_frames *F)
{
	return F->n;
}

int32_t ge_frames_op(const ge_frames *F, ge_opid id)
{
	return id < F->n_ops ? F->fr[id] : -1;
}

const char *ge_frames_name(const ge_frames *F, int32_t f)
{
	return f > 0 && (size_t)f < F->n ? F->f[f].name : "";
}

int32_t ge_frames_parent(const ge_frames *F, int32_t f)
{
	return f > 0 && (size_t)f < F->n ? F->f[f].parent : -1;
}

int32_t ge_frames_top(const ge_frames *F, int32_t f)
{
	return f > 0 && (size_t)f < F->n ? F->f[f].top : 0;
}

int32_t ge_frames_out(const ge_graph *g, const ge_frames *F, ge_opid id)
{
	(void)g;
	return id < F->n_ops ? out_frame(F, id) : -1;
}

/* ------------------------------------------------------------ views */

/* Whether any live op is an Enter: a graph without one has no loop, and
 * every copy asks, so this costs one pointer compare per op (types are
 * interned) instead of the frames' walk. */
static int has_enter(const ge_graph *g)
{
	const char *seen[8] = {NULL};
	for (size_t i = 0; i < g->n_ops; i++) {
		const char *t = g->ops[i].type;
		size_t slot = ((uintptr_t)t >> 3) & 7;
		if (seen[slot] == t)
			continue;
		seen[slot] = t;
		if (kind_of(t) == K_ENTER && !(g->ops[i].flags & OPF_DEAD))
			return 1;
		if (kind_of(t) == K_ENTER)
			seen[slot] = NULL; /* a dead Enter: look at the next */
	}
	return 0;
}

int ge_frames_all_root(const ge_graph *g)
{
	if (has_enter(g))
		return 0;
	for (size_t i = 0; i < g->n_ops; i++) {
		const ge_op *o = &g->ops[i];
		if (o->flags & OPF_DEAD)
			continue;
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
			ge_opid p = o->in[s].op;
			if (p != GE_NOOP &&
			    (p >= i || (g->ops[p].flags & OPF_DEAD)))
				return 0;
		}
	}
	return 1;
}

/* Whether the frames must be looked at: they are cached, or an Enter
 * exists. */
static int may_have_loops(const ge_graph *g)
{
	const ge_frames *c = g->frames;
	if (c && c->valid && c->version == g->version && c->n_ops == g->n_ops)
		return c->n > 1;
	return has_enter(g);
}

void ge_frames_whole_loops(const ge_graph *g, ge_opvec *ops)
{
	if (!ops->n || !may_have_loops(g))
		return;
	const ge_frames *F = ge_graph_frames(g);
	if (F->n < 2)
		return;
	uint8_t *want = ge_xcalloc(F->n, 1);
	int any = 0;
	for (size_t i = 0; i < ops->n; i++) {
		int32_t f = ge_frames_op(F, ops->v[i]);
		if (f > 0)
			any = want[F->f[f].top] = 1;
	}
	if (any) {
		uint8_t *have = ge_xcalloc(g->n_ops + 1, 1);
		for (size_t i = 0; i < ops->n; i++)
			if (ops->v[i] < g->n_ops)
				have[ops->v[i]] = 1;
		for (size_t i = 0; i < g->n_ops; i++) {
			int32_t f = F->fr[i];
			if (f > 0 && want[F->f[f].top] && !have[i])
				ge_opvec_push(ops, (ge_opid)i);
		}
		free(have);
	}
	free(want);
}

int ge_frames_check_view(const ge_graph *g, const ge_opid *ops, size_t n,
			 ge_error *err)
{
	if (!n || !may_have_loops(g))
		return GE_OK;
	const ge_frames *F = ge_graph_frames(g);
	if (F->n < 2 || !n)
		return GE_OK;
	size_t *count = ge_xcalloc(F->n, sizeof *count);
	uint8_t *have = ge_xcalloc(g->n_ops + 1, 1);
	ge_opid *some = ge_xmalloc(F->n * sizeof *some);
	for (size_t i = 0; i < n; i++) {
		ge_opid id = ops[i];
		int32_t f = ge_frames_op(F, id);
		if (f <= 0 || have[id])
			continue;
		have[id] = 1;
		int32_t t = F->f[f].top;
		if (!count[t]++)
			some[t] = id;
	}
	int rc = GE_OK;
	for (size_t t = 1; t < F->n && !rc; t++) {
		if (!count[t] || count[t] == F->f[t].n_tree)
			continue;
		ge_opid miss = GE_NOOP;
		for (size_t i = 0; i < g->n_ops && miss == GE_NOOP; i++)
			if (F->fr[i] > 0 && F->f[F->fr[i]].top == (int32_t)t &&
			    !have[i])
				miss = (ge_opid)i;
		rc = ge_err(err, GE_EINVAL,
			    "the ops cut while loop '%s': '%s' is in them but "
			    "'%s' (%s) of the same loop is not; take the whole "
			    "loop (ge.whole_loops) or none of it",
			    F->f[t].name, g->ops[some[t]].name,
			    miss != GE_NOOP ? g->ops[miss].name : "?",
			    miss != GE_NOOP ? g->ops[miss].type : "?");
	}
	free(count);
	free(have);
	free(some);
	return rc;
}

/* ------------------------------------------------------------ validate */

struct vstate {
	const ge_graph *g;
	const ge_frames *F;
	ge_buf *report;
	size_t problems;
	uint8_t *loop_merge;  /* per op: a Merge that reads a NextIteration */
};

static const char *fname(const ge_frames *F, int32_t f)
{
	return f > 0 ? F->f[f].name : "(root)";
}

#define PROBLEM(V, ...)                                         \
	do {                                                    \
		(V)->problems++;                                \
		if ((V)->report) {                              \
			ge_buf_printf((V)->report, __VA_ARGS__); \
			ge_buf_addc((V)->report, '\n');         \
		}                                               \
	} while (0)

/* The kind of the op a data input reads (K_OTHER when dangling). */
static int in_kind(const struct vstate *V, const ge_op *o, uint32_t s)
{
	ge_opid p = o->in[s].op;
	return p == GE_NOOP ? -1 : V->F->kind[p];
}

static void check_next(struct vstate *V, ge_opid i)
{
	const ge_op *o = &V->g->ops[i];
	const ge_frames *F = V->F;
	int32_t f = F->fr[i];
	if (f == 0) {
		PROBLEM(V, "node '%s' (%s) in frame '(root)': NextIteration "
			"outside any while loop", o->name, o->type);
		return;
	}
	size_t merges = 0;
	for (uint32_t k = 0; k < o->n_uses; k++) {
		ge_opid c = o->uses[k].op;
		if (F->kind[c] == K_MERGE && F->fr[c] == f) {
			merges++;
			continue;
		}
		PROBLEM(V, "node '%s' (%s) in frame '%s': NextIteration feeds "
			"'%s' (%s), not a Merge of its loop",
			o->name, o->type, fname(F, f), V->g->ops[c].name,
			V->g->ops[c].type);
		return;
	}
	if (!merges)
		PROBLEM(V, "node '%s' (%s) in frame '%s': NextIteration does "
			"not close a loop (no Merge reads it)",
			o->name, o->type, fname(F, f));
}

static void check_merge(struct vstate *V, ge_opid i)
{
	const ge_op *o = &V->g->ops[i];
	const ge_frames *F = V->F;
	int enters = 0, nexts = 0;
	for (uint32_t s = 0; s < o->n_in; s++) {
		int k = in_kind(V, o, s);
		enters += k == K_ENTER;
		nexts += k == K_NEXT;
	}
	if (!nexts)
		return;
	V->loop_merge[i] = 1;
	if (o->n_in != 2 || enters != 1 || nexts != 1)
		PROBLEM(V, "node '%s' (%s) in frame '%s': a loop's Merge reads "
			"one Enter and one NextIteration, this one reads %u "
			"input%s (%d Enter, %d NextIteration)",
			o->name, o->type, fname(F, F->fr[i]), o->n_in,
			o->n_in == 1 ? "" : "s", enters, nexts);
	int switched = 0;
	for (uint32_t k = 0; k < o->n_uses && !switched; k++)
		switched = F->kind[o->uses[k].op] == K_SWITCH &&
			   o->uses[k].slot == 0;
	if (!switched)
		PROBLEM(V, "node '%s' (%s) in frame '%s': the loop's Merge "
			"feeds no Switch, so the loop never ends",
			o->name, o->type, fname(F, F->fr[i]));
}

/* Per op checks that need loop_merge of every op: Switches of a loop and
 * control edges from Switches. */
static void check_switch_uses(struct vstate *V, ge_opid i)
{
	const ge_op *o = &V->g->ops[i];
	const ge_frames *F = V->F;
	int32_t f = F->fr[i];
	if (F->kind[i] == K_SWITCH && o->n_in >= 2 &&
	    o->in[0].op != GE_NOOP && V->loop_merge[o->in[0].op] &&
	    in_kind(V, o, 1) != K_LOOPCOND)
		PROBLEM(V, "node '%s' (%s) in frame '%s': the Switch of a "
			"loop variable is driven by '%s' (%s), not by the "
			"loop's LoopCond",
			o->name, o->type, fname(F, f),
			o->in[1].op == GE_NOOP ? "?" : V->g->ops[o->in[1].op].name,
			o->in[1].op == GE_NOOP ? "?" : V->g->ops[o->in[1].op].type);
	/* A value source (a Const) anchored in a loop by a control edge from
	 * a loop variable's Switch runs on the exiting iteration too, where
	 * tf.while_loop anchors it on the Identity of the Switch's taken
	 * output; TensorFlow.js's executor cannot run it.  NoOps may wait on
	 * a Switch: gradient loops group their Merge_grad Switches so. */
	if (f <= 0 || o->n_in || !strcmp(o->type, "NoOp"))
		return;
	for (uint32_t s = o->n_in; s < o->n_in + o->n_ctrl; s++)
		if (in_kind(V, o, s) == K_SWITCH &&
		    V->g->ops[o->in[s].op].n_in &&
		    V->g->ops[o->in[s].op].in[0].op != GE_NOOP &&
		    V->loop_merge[V->g->ops[o->in[s].op].in[0].op]) {
			PROBLEM(V, "node '%s' (%s) in frame '%s': waits on "
				"the loop Switch '%s' through a control "
				"edge, so it runs on the exiting iteration "
				"too (a loop's values wait on the Identity "
				"of the Switch's output, its pivot)",
				o->name, o->type, fname(F, f),
				V->g->ops[o->in[s].op].name);
			break;
		}
}

static void check_frames(struct vstate *V, const ge_opid *first_cond,
			 const ge_opid *second_cond)
{
	const ge_frames *F = V->F;
	for (size_t f = 1; f < F->n; f++) {
		const char *enter = F->f[f].enter != GE_NOOP
					    ? V->g->ops[F->f[f].enter].name
					    : "?";
		if (first_cond[f] == GE_NOOP)
			PROBLEM(V, "frame '%s' (entered by '%s'): while loop "
				"without a LoopCond, nothing ends its "
				"iterations",
				F->f[f].name, enter);
		else if (second_cond[f] != GE_NOOP)
			PROBLEM(V, "frame '%s' (entered by '%s'): two loops "
				"share the frame_name (LoopCond '%s' and '%s'); "
				"each loop needs its own",
				F->f[f].name, enter,
				V->g->ops[first_cond[f]].name,
				V->g->ops[second_cond[f]].name);
	}
}

static void check_mismatches(struct vstate *V)
{
	const ge_frames *F = V->F;
	const ge_graph *g = V->g;
	for (size_t k = 0; k < F->n_mis; k++) {
		const struct mism *m = &F->mis[k];
		const ge_op *o = &g->ops[m->op];
		int32_t f0 = F->kind[m->op] == K_ENTER
				     ? F->f[F->fr[m->op]].parent
				     : F->fr[m->op];
		ge_opid v = F->via[m->op];
		PROBLEM(V, "node '%s' (%s) in frame '%s': reads '%s' of frame "
			"'%s' and '%s' of frame '%s'; a tensor goes into a loop "
			"only through Enter and out only through Exit",
			o->name, o->type,
			fname(F, F->kind[m->op] == K_ENTER ? F->fr[m->op] : f0),
			v != GE_NOOP ? g->ops[v].name : "?", fname(F, f0),
			g->ops[m->late].name, fname(F, m->f_late));
	}
}

size_t ge_frames_validate(const ge_graph *g, ge_buf *report)
{
	const ge_frames *F = ge_graph_frames(g);
	struct vstate V = {g, F, report, 0, NULL};
	int has_cf = F->n > 1 || F->n_mis;
	for (size_t i = 0; i < g->n_ops && !has_cf; i++)
		has_cf = F->kind[i] != K_OTHER;
	if (!has_cf)
		return 0;
	V.loop_merge = ge_xcalloc(g->n_ops + 1, 1);
	ge_opid *c1 = ge_xmalloc(F->n * sizeof *c1);
	ge_opid *c2 = ge_xmalloc(F->n * sizeof *c2);
	for (size_t f = 0; f < F->n; f++)
		c1[f] = c2[f] = GE_NOOP;
	check_mismatches(&V);
	for (size_t i = 0; i < g->n_ops; i++) {
		const ge_op *o = &g->ops[i];
		int32_t f = F->fr[i];
		if ((o->flags & OPF_DEAD) || f < 0)
			continue;
		switch (F->kind[i]) {
		case K_ENTER: {
			const char *s = NULL;
			size_t len = 0;
			if (ge_op_attr_string(g, (ge_opid)i, "frame_name", &s,
					      &len) || !len)
				PROBLEM(&V, "node '%s' (%s) in frame '%s': "
					"Enter without a frame_name",
					o->name, o->type, fname(F, f));
			break;
		}
		case K_EXIT:
			if (f == 0)
				PROBLEM(&V, "node '%s' (%s) in frame '(root)': "
					"Exit outside any while loop",
					o->name, o->type);
			break;
		case K_NEXT:
			check_next(&V, (ge_opid)i);
			break;
		case K_MERGE:
			check_merge(&V, (ge_opid)i);
			break;
		case K_LOOPCOND:
			if (f == 0)
				PROBLEM(&V, "node '%s' (%s) in frame '(root)': "
					"LoopCond outside any while loop",
					o->name, o->type);
			else if (c1[f] == GE_NOOP)
				c1[f] = (ge_opid)i;
			else if (c2[f] == GE_NOOP)
				c2[f] = (ge_opid)i;
			break;
		}
	}
	for (size_t i = 0; i < g->n_ops; i++)
		if (!(g->ops[i].flags & OPF_DEAD) && F->fr[i] >= 0 &&
		    (F->kind[i] == K_SWITCH || g->ops[i].n_ctrl))
			check_switch_uses(&V, (ge_opid)i);
	check_frames(&V, c1, c2);
	free(c1);
	free(c2);
	free(V.loop_merge);
	return V.problems;
}
