/*
 * info_outputs.c: the "likely outputs" of `gerewrite info`.
 *
 * A SavedModel's signatures say what its outputs are: when they name
 * tensors of the graph, those ops are the answer.  Otherwise the
 * candidates are the ops nobody reads (data or control) that produce
 * something from some input (an op that reads nothing, a Placeholder
 * above all, is a likely input, never also an output), without what training graphs leave unread around the model:
 * the training machinery (gradients, optimizers and their slot
 * variables, "w/Adam/read", the train_op's scope), the saver, summaries, variable initialization and assignment, asserts
 * and prints; and, when real tensors remain, the integer bookkeeping of
 * loops and shapes (a while loop's counter, a zero state's dims).  How
 * many were left out is reported.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "info_outputs.h"
#include "meta.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Whether the name's first scope is one training or saving code makes. */
static int machinery_scope(const char *name, const char *train_scope)
{
	static const char *const scopes[] = {
		"gradients", "train", "training", "optimizer", "Adam", "SGD",
		"GradientDescent", "Momentum", "RMSProp", "Adagrad", "Adadelta",
		"Ftrl", "save", "summaries", "init", "report_uninitialized",
		"global_step", NULL};
	size_t n = strcspn(name, "/");
	if (train_scope && *train_scope && strlen(train_scope) == n &&
	    !strncmp(name, train_scope, n))
		return 1;
	for (int i = 0; scopes[i]; i++) {
		size_t k = strlen(scopes[i]);
		if (n < k || strncmp(name, scopes[i], k) != 0)
			continue;
		/* "save", "save_1", "gradients_2" */
		const char *r = name + k;
		if (r == name + n)
			return 1;
		if (*r == '_') {
			r++;
			while (r < name + n && *r >= '0' && *r <= '9')
				r++;
			if (r == name + n)
				return 1;
		}
	}
	return 0;
}

/* Optimizer slots live under their variable: "w/Adam", "w/Momentum_1";
 * any part of the name so spelt marks the slot and what reads it. */
static int slot_part(const char *name)
{
	static const char *const slots[] = {
		"Adam", "Momentum", "RMSProp", "Adagrad", "AdagradDA",
		"Adadelta", "Adamax", "Ftrl", "Nadam", "ProximalAdagrad",
		"GradientDescent", "accumulator", "Adam_1", "Momentum_1",
		"RMSProp_1", "Ftrl_1", NULL};
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		for (int i = 0; slots[i]; i++)
			if (strlen(slots[i]) == n && !strncmp(p, slots[i], n))
				return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int machinery_type(const char *t)
{
	static const char *const types[] = {
		"SaveV2", "RestoreV2", "Save", "Restore",
		"SaveSlices", "RestoreSlice", "MergeV2Checkpoints",
		"ShardedFilename", "ShardedFilespec", "MergeSummary", "Assert",
		"Print", "PrintV2", "IsVariableInitialized",
		"VarIsInitializedOp", NULL};
	for (int i = 0; types[i]; i++)
		if (!strcmp(t, types[i]))
			return 1;
	return prefix(t, "Assign") || prefix(t, "Apply") ||
	       prefix(t, "ResourceApply") || prefix(t, "SparseApply") ||
	       prefix(t, "ResourceSparseApply") || strstr(t, "Summary") ||
	       prefix(t, "WriteSummary") || prefix(t, "Write");
}

/* Integer scalars and short vectors: loop counters, shape arithmetic. */
static int bookkeeping(const ge_graph *g, ge_opid id)
{
	int dt = ge_op_output_dtype(g, id, 0);
	/* DT_INT32 = 3, DT_INT64 = 9, DT_BOOL = 10 */
	if (dt != 3 && dt != 9 && dt != 10)
		return 0;
	const char *t = ge_op_type(g, id);
	if (!strcmp(t, "Shape") || !strcmp(t, "ShapeN") || !strcmp(t, "Size") ||
	    !strcmp(t, "Rank"))
		return 1;
	int64_t dims[2];
	int rank = ge_op_output_shape(g, id, 0, dims, 2);
	/* an unknown shape may be a real output (ArgMax's classes) */
	return rank == 0 || rank == 1;
}

/* The first scope of the train_op collection's first op, if any. */
static const char *train_op_scope(ge_graph *g, char *buf, size_t cap)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, "train_op");
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST ||
	    !c->node_list || !c->node_list->n_value)
		return NULL;
	const char *v = c->node_list->value[0];
	size_t n = strcspn(v, "/:");
	if (n >= cap)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = 0;
	return buf;
}

static int from_signatures(ge_graph *g, ge_opvec *outs)
{
	size_t n = ge_signature_count(g);
	unsigned char *seen = ge_xcalloc(ge_graph_capacity(g) + 1, 1);
	for (size_t i = 0; i < n; i++) {
		Tensorflow__SignatureDef *s =
			ge_signature_get(g, ge_signature_name(g, i));
		for (size_t k = 0; s && k < s->n_outputs; k++) {
			Tensorflow__TensorInfo *t = s->outputs[k]->value;
			ge_tref r;
			if (!t ||
			    t->encoding_case !=
				    TENSORFLOW__TENSOR_INFO__ENCODING_NAME ||
			    ge_graph_find_tensor(g, t->name, &r) != GE_OK ||
			    seen[r.op])
				continue;
			seen[r.op] = 1;
			ge_opvec_push(outs, r.op);
		}
	}
	free(seen);
	return outs->n > 0;
}

int info_likely_outputs(ge_graph *g, ge_opvec *outs, size_t *left_out)
{
	*left_out = 0;
	if (from_signatures(g, outs))
		return 1;
	char tb[256];
	const char *train = train_op_scope(g, tb, sizeof tb);
	ge_opvec ints = GE_VEC_INIT;
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || ge_op_num_outputs(g, id) <= 0)
			continue;
		size_t nuses, ncouts;
		ge_op_uses(g, id, &nuses);
		ge_op_control_outputs(g, id, &ncouts);
		const char *t = ge_op_type(g, id);
		/* never outputs, and not counted as left out: what reads
		 * nothing is a likely input (a Placeholder fed and never
		 * read), not an output */
		if (nuses || ncouts || !strcmp(t, "Const") ||
		    !strcmp(t, "NoOp") || !strcmp(t, "VariableV2") ||
		    !strcmp(t, "Variable") || !strcmp(t, "VarHandleOp") ||
		    !strncmp(t, "Placeholder", 11) ||
		    ge_op_num_inputs(g, id) == 0)
			continue;
		if (machinery_type(t) ||
		    machinery_scope(ge_op_name(g, id), train) ||
		    slot_part(ge_op_name(g, id))) {
			(*left_out)++;
			continue;
		}
		if (bookkeeping(g, id))
			ge_opvec_push(&ints, id);
		else
			ge_opvec_push(outs, id);
	}
	if (outs->n) {
		*left_out += ints.n;
	} else {
		for (size_t i = 0; i < ints.n; i++)
			ge_opvec_push(outs, ints.v[i]);
	}
	ge_opvec_free(&ints);
	return 0;
}
