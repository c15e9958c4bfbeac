/*
 * exec/exec.h: runs a model's graph, or one of its function bodies, on fed
 * tensors, as TensorFlow's executor would.
 *
 *	ge_xsession *s;
 *	ge_xopts o = GE_XOPTS_INIT;
 *	if (ge_xsession_open(g, &o, &s, &err)) ...       // variables restored
 *	ge_xfeed feed = {"x:0", x};
 *	const char *fetch[] = {"y:0"};
 *	ge_xt *y;
 *	if (ge_xsession_run(s, &feed, 1, fetch, 1, &y, &err)) ...
 *	ge_xt_unref(y);
 *	ge_xsession_close(s);
 *
 * What runs: the ops the fetches need (and the control inputs of those),
 * in dependency order, each tensor freed after its last reader.  TF1
 * control flow as TensorFlow's executor runs it (frames and iterations,
 * dead tensors through Switch and Merge, Enter with is_constant, Exit,
 * NextIteration, LoopCond, nested loops and conds); the functional ops
 * (PartitionedCall, StatefulPartitionedCall, While, StatelessWhile, If,
 * StatelessIf, Case) run their function bodies from the graph's library.
 * Control edges order execution and never make a value unknown.
 *
 * Variables: a session opened on a model with a checkpoint (a
 * MetaGraphDef beside its checkpoint, a SavedModel's variables/) holds
 * each variable's value, TF1 VariableV2 restored by name and TF2 resource
 * variables through the object graph; VarHandleOp, ReadVariableOp,
 * AssignVariableOp and their kin act on those values.  A SavedModel's
 * init op runs when the session opens, as TensorFlow's loader runs it.
 * doc/runner.md is the reference.
 *
 * Every tensor is charged to the session's budget (o->budget, or one of
 * its own from --max-memory and --max-work); the peak is reported.
 * Errors are one line naming the op (or the feed) and leave no outputs.
 */
#ifndef GE_EXEC_EXEC_H
#define GE_EXEC_EXEC_H

#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "exec/xtensor.h"

typedef struct ge_xsession ge_xsession;

/* Kinds of executor objects (ge_xobj.kind) the executor itself makes:
 * 1..15.  Stateful kernels number theirs from 16. */
enum {
	GE_XOBJ_VARIABLE = 1, /* a variable: VarHandleOp's resource, and
				 the reference a TF1 VariableV2 gives */
};

typedef struct ge_xopts {
	uint64_t seed;          /* the graph seed for random ops with seed
				   and seed2 both 0 (--seed) */
	int64_t max_iterations; /* per while loop; 0: 1,000,000 */
	ge_xbudget *budget;     /* NULL: the session's own */
	/* Called for every tensor an op produces, in execution order, with
	 * the tensor's name: "op:0"; in a function body "fn/op:0"; in
	 * iteration 3 of a TF1 while loop "op:0@3", and "op:0@1.3" in
	 * iteration 3 of a loop nested in iteration 1 of another.  For
	 * --per-op comparisons; may be NULL. */
	void (*on_tensor)(void *ud, const char *name, const ge_xt *t);
	void *ud;
	int no_init;            /* do not run a SavedModel's init op when
				   the session opens */
	const char *checkpoint; /* the bundle prefix variables are read
				   from when the graph has no checkpoint
				   of its own (ge_xcheckpoint_of), or NULL */
} ge_xopts;
#define GE_XOPTS_INIT {0, 0, NULL, NULL, NULL, 0, NULL}

/* The prefix of the checkpoint a session of g reads its variables from:
 * a SavedModel's variables/, the bundle beside a MetaGraphDef (x.meta,
 * x.index); NULL when there is none.  Malloc'd. */
char *ge_xcheckpoint_of(const ge_graph *g);

typedef struct ge_xfeed {
	const char *name; /* a tensor name, "x" meaning "x:0" */
	ge_xt *t;         /* borrowed */
} ge_xfeed;

/* Prepares g to run: finds its checkpoint (variables are read from it
 * when first used) and, for a SavedModel, runs its init op as
 * TensorFlow's loader does (ge_xsession_init) unless o->no_init.  The
 * graph must outlive the session and not change while it is open. */
int ge_xsession_open(ge_graph *g, const ge_xopts *o, ge_xsession **out,
		     ge_error *err);
/* Runs a SavedModel's init op (its main op, legacy init op or
 * __saved_model_init_op), the asset tensors its MetaGraphDef names fed
 * with their files' paths under assets/.  GE_OK when it has none. */
int ge_xsession_init(ge_xsession *s, ge_error *err);
void ge_xsession_close(ge_xsession *s);

/* Runs: feeds replace the tensors they name (a fed op's inputs are not
 * computed); out[i] receives fetches[i] (owned).  A fetch may name a
 * tensor or, with a leading '^', an op to run for its effect (out[i] is
 * then NULL). */
int ge_xsession_run(ge_xsession *s, const ge_xfeed *feeds, int nfeeds,
		    const char *const *fetches, int nfetch, ge_xt **out,
		    ge_error *err);

/* Calls function `fname` of g's library on args (as many as it has
 * inputs), giving its outputs (out must hold as many as it has). */
int ge_xsession_call(ge_xsession *s, const char *fname, ge_xt *const *args,
		     int nargs, ge_xt **out, int nout, ge_error *err);

/* Whether the runner runs ops of this type: the executor's own (control
 * flow, calls, placeholders, variables) or a kernel's.  An op whose type
 * names a function of its graph's library runs as a call besides. */
int ge_xrun_knows_type(const char *type);

/* Peak bytes of live tensors so far, and the work charged. */
uint64_t ge_xsession_peak(const ge_xsession *s);
uint64_t ge_xsession_work(const ge_xsession *s);

#endif
