/*
 * shapes_handles.c: shape functions of ops whose shapes TensorFlow takes
 * from a handle (variables, tensor arrays, stacks) rather than from their
 * inputs: the handle is followed back through Identity, Enter and Switch
 * to the op that made it.
 */
#include <string.h>

#include "analyses/shapes_impl.h"

static int passes_handle(const char *t)
{
	return !strcmp(t, "Identity") || !strcmp(t, "Enter") ||
	       !strcmp(t, "RefEnter") || !strcmp(t, "Switch") ||
	       !strcmp(t, "RefSwitch") || !strcmp(t, "RefIdentity");
}

/* The op that made the tensor, through handle-passing ops. */
static ge_opid source_of(ge_graph *g, ge_tref t)
{
	for (int hop = 0; hop < 64 && t.op != GE_NOOP; hop++) {
		if (!passes_handle(ge_op_type(g, t.op)) ||
		    ge_op_num_inputs(g, t.op) == 0)
			return t.op;
		t = ge_op_input(g, t.op, 0);
	}
	return GE_NOOP;
}

static ge_opid in_source(shctx *c, int i)
{
	if (i >= c->nin)
		return GE_NOOP;
	return source_of(c->g, ge_op_input(c->g, c->id, (size_t)i));
}

/* ReadVariableOp and friends: the VarHandleOp's `shape`. */
static void f_read_variable(shctx *c)
{
	ge_opid src = in_source(c, 0);
	if (src == GE_NOOP || ge_sh_op_attr_shape(c->g, src, "shape", OUT(0)))
		sh_unknown(OUT(0));
	c->reason = GE_SHAPE_DATA;
}

static void f_resource_gather(shctx *c)
{
	sh p, ix;
	ge_opid src = in_source(c, 0);
	ge_sh_in(c, 1, &ix);
	if (src == GE_NOOP || ge_sh_op_attr_shape(c->g, src, "shape", &p) ||
	    p.rank < 1 || ix.rank < 0 ||
	    ix.rank + p.rank - 1 > GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = ix.rank + p.rank - 1;
	int k = 0;
	for (int i = 0; i < ix.rank; i++)
		OUT(0)->d[k++] = ix.d[i];
	for (int i = 1; i < p.rank; i++)
		OUT(0)->d[k++] = p.d[i];
}

/* The variable a restored tensor is assigned to, read through Identity. */
static int restored_shape(ge_graph *g, ge_tref t, sh *s, int depth)
{
	size_t nu;
	const ge_use *u = ge_op_uses(g, t.op, &nu);
	for (size_t j = 0; j < nu; j++) {
		ge_tref in = ge_op_input(g, u[j].op, u[j].slot);
		if (in.index != t.index)
			continue;
		const char *ty = ge_op_type(g, u[j].op);
		if (!strcmp(ty, "Identity") && depth < 4) {
			ge_tref n = {u[j].op, 0};
			if (restored_shape(g, n, s, depth + 1))
				return 1;
			continue;
		}
		if ((strcmp(ty, "Assign") && strcmp(ty, "AssignVariableOp")) ||
		    u[j].slot != 1)
			continue;
		ge_opid v = source_of(g, ge_op_input(g, u[j].op, 0));
		if (v != GE_NOOP && !ge_sh_op_attr_shape(g, v, "shape", s) &&
		    s->rank >= 0)
			return 1;
	}
	return 0;
}

static void f_restore(shctx *c)
{
	for (int k = 0; k < c->nout; k++) {
		ge_tref t = {c->id, k};
		if (!restored_shape(c->g, t, OUT(k), 0))
			sh_unknown(OUT(k));
	}
	c->reason = GE_SHAPE_DATA;
}

static void f_handle2(shctx *c)
{
	/* tensor arrays and stacks: a 2-vector handle, a scalar flow */
	sh_ranked(OUT(0), 1);
	OUT(0)->d[0] = 2;
	for (int k = 1; k < c->nout; k++)
		sh_ranked(OUT(k), 0);
}

static void f_scalar(shctx *c)
{
	for (int k = 0; k < c->nout; k++)
		sh_ranked(OUT(k), 0);
}

static void f_ta_read(shctx *c)
{
	ge_opid src = in_source(c, 0);
	if (src == GE_NOOP || strcmp(ge_op_type(c->g, src), "TensorArrayV3") ||
	    ge_sh_op_attr_shape(c->g, src, "element_shape", OUT(0)))
		sh_unknown(OUT(0));
	c->reason = GE_SHAPE_DATA;
}

static void f_ta_gather(shctx *c)
{
	sh e, ix;
	if (ge_sh_attr_shape(c, "element_shape", &e) || e.rank < 0) {
		ge_opid src = in_source(c, 0);
		if (src == GE_NOOP ||
		    ge_sh_op_attr_shape(c->g, src, "element_shape", &e))
			e.rank = -1;
	}
	ge_sh_in(c, 1, &ix);
	if (e.rank < 0 || e.rank >= GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = e.rank + 1;
	OUT(0)->d[0] = ix.rank == 1 ? ix.d[0] : -1;
	memcpy(OUT(0)->d + 1, e.d, (size_t)e.rank * sizeof e.d[0]);
}

static void f_stack_push(shctx *c)
{
	ge_sh_in(c, 1, OUT(0));
}

/* StackPopV2: what is pushed onto the same stack. */
static void f_stack_pop(shctx *c)
{
	ge_opid st = in_source(c, 0);
	sh_unknown(OUT(0));
	c->reason = GE_SHAPE_DATA;
	if (st == GE_NOOP)
		return;
	/* breadth-first over the handle's readers, through Enter/Identity */
	ge_opid q[64];
	int n = 0, head = 0;
	q[n++] = st;
	while (head < n) {
		size_t nu;
		const ge_use *u = ge_op_uses(c->g, q[head++], &nu);
		for (size_t j = 0; j < nu; j++) {
			const char *t = ge_op_type(c->g, u[j].op);
			if (!strcmp(t, "StackPushV2") && u[j].slot == 0) {
				ge_tref o = {u[j].op, 0};
				sh s;
				if (ge_sh_out_shape(c, o, &s)) {
					*OUT(0) = s;
					return;
				}
			} else if (passes_handle(t) && u[j].slot == 0 && n < 64) {
				q[n++] = u[j].op;
			}
		}
	}
}

static void f_concat_offset(shctx *c)
{
	sh s;
	ge_sh_in(c, 1, &s);
	for (int k = 0; k < c->nout; k++)
		*OUT(k) = s;
}

static void f_unsorted_segment(shctx *c)
{
	sh d, ids;
	int64_t n;
	ge_sh_in(c, 0, &d);
	ge_sh_in(c, 1, &ids);
	if (d.rank < 0 || ids.rank < 0 || ids.rank > d.rank) {
		sh_unknown(OUT(0));
		return;
	}
	if (!ge_sh_in_scalar(c, 2, &n))
		n = -1;
	OUT(0)->rank = d.rank - ids.rank + 1;
	OUT(0)->d[0] = n;
	for (int i = ids.rank; i < d.rank; i++)
		OUT(0)->d[i - ids.rank + 1] = d.d[i];
}

/* DynamicStitch: known indices give the first dim (and small values). */
static void f_dynamic_stitch(shctx *c)
{
	int n = c->nin / 2;
	int64_t mx = -1;
	int known = 1;
	shval all;
	all.n = 0;
	int64_t tmp[SH_MAXV];
	for (int i = 0; i < SH_MAXV; i++)
		tmp[i] = SH_UNK;
	for (int i = 0; i < n; i++) {
		shval ix, dv;
		if (!ge_sh_in_val(c, i, &ix)) {
			known = 0;
			break;
		}
		int hv = ge_sh_in_val(c, n + i, &dv) && dv.n == ix.n;
		for (int k = 0; k < ix.n; k++) {
			if (ix.v[k] == SH_UNK) {
				known = 0;
				break;
			}
			if (ix.v[k] > mx)
				mx = ix.v[k];
			if (ix.v[k] >= 0 && ix.v[k] < SH_MAXV)
				tmp[ix.v[k]] = hv ? dv.v[k] : SH_UNK;
			else
				hv = 0;
			if (!hv)
				all.n = -1;
		}
	}
	sh data, idx;
	ge_sh_in(c, n, &data);
	ge_sh_in(c, 0, &idx);
	if (data.rank < 0 || idx.rank < 0 || data.rank < idx.rank) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = data.rank - idx.rank + 1;
	OUT(0)->d[0] = known ? mx + 1 : -1;
	for (int i = idx.rank; i < data.rank; i++)
		OUT(0)->d[i - idx.rank + 1] = data.d[i];
	if (known && all.n == 0 && OUT(0)->rank == 1 && mx + 1 <= SH_MAXV) {
		VAL(0)->n = (int)(mx + 1);
		memcpy(VAL(0)->v, tmp, (size_t)(mx + 1) * sizeof tmp[0]);
	}
	c->reason = known ? 0 : GE_SHAPE_DATA;
}

static void f_invert_perm(shctx *c)
{
	shval v;
	ge_sh_in(c, 0, OUT(0));
	if (ge_sh_in_val(c, 0, &v)) {
		VAL(0)->n = v.n;
		for (int i = 0; i < v.n; i++)
			VAL(0)->v[i] = SH_UNK;
		for (int i = 0; i < v.n; i++)
			if (v.v[i] >= 0 && v.v[i] < v.n)
				VAL(0)->v[v.v[i]] = i;
	}
	c->reason = 0;
}

static void f_ref_input0(shctx *c)
{
	ge_sh_in(c, 0, OUT(0));
}

static void f_candidate_sampler(shctx *c)
{
	int64_t n = ge_sh_attr_int(c, "num_sampled", -1);
	sh_ranked(OUT(0), 1);
	OUT(0)->d[0] = n;
	ge_sh_in(c, 0, OUT(1));
	*OUT(2) = *OUT(0);
}

static void f_string_join(shctx *c)
{
	/* scalars broadcast; the other inputs share one shape */
	sh_ranked(OUT(0), 0);
	for (int i = 0; i < c->nin; i++) {
		sh s;
		ge_sh_in(c, i, &s);
		if (s.rank == 0)
			continue;
		if (OUT(0)->rank == 0) {
			*OUT(0) = s;
		} else if (ge_sh_merge(OUT(0), &s)) {
			ge_sh_fail(c, "input %d has a different shape", i);
			return;
		}
	}
}

/* A TensorList's element shape input: -1 (a scalar) is an unknown rank,
 * -1 entries unknown dims. */
static int element_shape(shctx *c, int i, sh *e)
{
	shval v;
	if (!ge_sh_in_val(c, i, &v) || v.n > GE_SHAPE_MAXRANK)
		return -1;
	sh s;
	ge_sh_in(c, i, &s);
	if (s.rank == 0)
		return -1;
	e->rank = v.n;
	for (int k = 0; k < v.n; k++)
		e->d[k] = v.v[k] < 0 ? -1 : v.v[k];
	return 0;
}

static void f_list_get(shctx *c)
{
	if (element_shape(c, 2, OUT(0)))
		sh_unknown(OUT(0));
}

static void f_list_stack(shctx *c)
{
	sh e;
	if (element_shape(c, 1, &e) || e.rank >= GE_SHAPE_MAXRANK) {
		sh_unknown(OUT(0));
		return;
	}
	OUT(0)->rank = e.rank + 1;
	OUT(0)->d[0] = ge_sh_attr_int(c, "num_elements", -1);
	if (OUT(0)->d[0] < 0)
		OUT(0)->d[0] = -1;
	memcpy(OUT(0)->d + 1, e.d, (size_t)e.rank * sizeof e.d[0]);
}

static void f_nms(shctx *c)
{
	/* NonMaxSuppressionV4/V5: selected indices (and scores) of a length
	 * known only at run time, then a scalar count */
	for (int k = 0; k < c->nout; k++)
		sh_ranked(OUT(k), k == c->nout - 1 && c->nout > 1 ? 0 : 1);
	c->reason = GE_SHAPE_DATA;
}

const struct ge_shape_entry ge_shape_handle_fns[] = {
	{"NonMaxSuppressionV5", f_nms}, {"NonMaxSuppressionV4", f_nms},
	{"TensorListReserve", f_scalar}, {"TensorListFromTensor", f_scalar},
	{"TensorListSetItem", f_scalar}, {"TensorListGetItem", f_list_get},
	{"TensorListStack", f_list_stack},
	{"StringJoin", f_string_join}, {"ShardedFilename", f_scalar},
	{"ShardedFilespec", f_scalar}, {"MergeV2Checkpoints", f_scalar},
	{"SaveV2", f_scalar}, {"Save", f_scalar}, {"SaveSlices", f_scalar},
	{"LogUniformCandidateSampler", f_candidate_sampler},
	{"UniformCandidateSampler", f_candidate_sampler},
	{"LearnedUnigramCandidateSampler", f_candidate_sampler},
	{"FixedUnigramCandidateSampler", f_candidate_sampler},
	{"ReadVariableOp", f_read_variable},
	{"ResourceGather", f_resource_gather},
	{"RestoreV2", f_restore}, {"VarIsInitializedOp", f_scalar},
	{"IsVariableInitialized", f_scalar},
	{"TensorArrayV3", f_handle2}, {"TensorArrayGradV3", f_handle2},
	{"StackV2", f_handle2}, {"TensorArrayWriteV3", f_scalar},
	{"TensorArrayScatterV3", f_scalar}, {"TensorArraySizeV3", f_scalar},
	{"TensorArrayReadV3", f_ta_read}, {"TensorArrayGatherV3", f_ta_gather},
	{"StackPushV2", f_stack_push}, {"StackPopV2", f_stack_pop},
	{"ConcatOffset", f_concat_offset},
	{"UnsortedSegmentSum", f_unsorted_segment},
	{"UnsortedSegmentMax", f_unsorted_segment},
	{"UnsortedSegmentMin", f_unsorted_segment},
	{"UnsortedSegmentProd", f_unsorted_segment},
	{"DynamicStitch", f_dynamic_stitch},
	{"ParallelDynamicStitch", f_dynamic_stitch},
	{"InvertPermutation", f_invert_perm},
	{"ScatterAdd", f_ref_input0}, {"ScatterSub", f_ref_input0},
	{"ScatterUpdate", f_ref_input0}, {"ScatterMul", f_ref_input0},
	{NULL, NULL},
};
