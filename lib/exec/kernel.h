/*
 * exec/kernel.h: the runner's op kernels, as the executor calls them.
 *
 * A kernel computes one op's outputs from its data inputs.  It reads the
 * op's attrs from the graph it belongs to (a graph, or a function body
 * seen as a graph), checks every input's dtype, rank and size and every
 * attr it relies on before it writes anything, charges its work and the
 * memory of its outputs to the budget (ge_k_out does the latter), and
 * on any problem returns a negative GE_ code with a message naming the
 * op (ge_k_fail), leaving no output set.
 *
 * Kernels compute as TensorFlow's CPU kernels do: float32 ops in float32
 * (heavy ones through OpenBLAS), integer ops wrapping at their width,
 * TensorFlow's broadcasting, axis and rounding rules.
 *
 * Control flow (Switch, Merge, Enter, Exit, NextIteration, LoopCond), the
 * functional ops (PartitionedCall, While, If, Case) and dead tensors are
 * the executor's business: a kernel never sees a dead input.  Stateful
 * kernels (variables, TensorList, random, hash tables) reach the
 * executor's state through k->rt and declare GE_K_STATEFUL.
 */
#ifndef GE_EXEC_KERNEL_H
#define GE_EXEC_KERNEL_H

#include "base/base.h"
#include "graph/graph.h"
#include "exec/xtensor.h"

struct ge_xrt; /* executor state, exec/exec.h */

typedef struct ge_kctx {
	const ge_graph *g;    /* the op's graph or function body */
	ge_opid id;
	const char *type;     /* op type */
	const char *name;     /* op name, for messages */
	ge_xt *const *in;     /* data inputs, in order; borrowed */
	int nin;
	ge_xt **out;          /* the kernel sets out[0..nout-1] (owned) */
	int nout;             /* outputs the op has */
	ge_xbudget *budget;
	struct ge_xrt *rt;    /* executor state, for stateful kernels */
	ge_error *err;
} ge_kctx;

typedef int (*ge_kfn)(ge_kctx *k);

enum {
	GE_K_STATEFUL = 1,  /* reads or changes executor state (k->rt) */
	GE_K_FORWARD = 2,   /* may return an input as an output */
};

typedef struct ge_kdef {
	const char *type;
	ge_kfn fn;
	unsigned flags;
} ge_kdef;

/* The kernel of an op type, or NULL. */
const ge_kdef *ge_kernel_find(const char *type);
/* Every op type with a kernel, sorted, NULL-terminated (static). */
const char *const *ge_kernel_types(void);

/* ---------------------------------------------------------------- state */

/* What a stateful kernel may ask of the executor (exec/exec.c).
 *
 * A slot of state owned by one op of one graph for the session's life
 * (a random op's generator, a table's contents): *slot is NULL the first
 * time; the kernel stores an object there, released when the session
 * closes. */
ge_xobj **ge_xrt_slot(struct ge_xrt *rt, const ge_graph *g, ge_opid id);
/* The graph seed (--seed) for random ops whose seed and seed2 are 0. */
uint64_t ge_xrt_seed(const struct ge_xrt *rt);

/* ---------------------------------------------------------------- helpers */

/* err = "<op name> (<type>): <message>"; returns GE_EINVAL. */
int ge_k_fail(ge_kctx *k, const char *fmt, ...) GE_PRINTF(2, 3);
/* GE_OK when the op has at least nin data inputs. */
int ge_k_need(ge_kctx *k, int nin);
/* Output i, allocated and charged: k->out[i] is set and returned, or
 * NULL with k->err set. */
ge_xt *ge_k_out(ge_kctx *k, int i, int dtype, int rank, const int64_t *dims);
/* The same with the elements of a number dtype left unset
 * (ge_xt_new_raw), for a kernel that writes every element itself. */
ge_xt *ge_k_out_raw(ge_kctx *k, int i, int dtype, int rank,
		    const int64_t *dims);
/* Output i is input j, passed on by reference. */
void ge_k_forward(ge_kctx *k, int i, int j);
/* Charges units of work (multiply-adds, elements touched); a refusal
 * names the op. */
int ge_k_work(ge_kctx *k, uint64_t units);

/* Attrs with a default when absent. */
int64_t ge_k_attr_int(ge_kctx *k, const char *name, int64_t def);
int ge_k_attr_bool(ge_kctx *k, const char *name, int def);
int ge_k_attr_type(ge_kctx *k, const char *name, int def);
double ge_k_attr_float(ge_kctx *k, const char *name, double def);
/* Whether the string attr equals s (def when absent). */
int ge_k_attr_str_is(ge_kctx *k, const char *name, const char *s, int def);
/* A list(int) attr into out (at most cap): its length, or -1. */
int ge_k_attr_ints(ge_kctx *k, const char *name, int64_t *out, int cap);

/* Integer elements of input i (int32 or int64) into out, at most cap:
 * the count, or -1 with k->err set. */
int ge_k_ints(ge_kctx *k, int i, int64_t *out, int cap);
int ge_k_scalar_int(ge_kctx *k, int i, int64_t *out);
/* A possibly negative axis of a rank-`rank` tensor into [0, rank). */
int ge_k_axis(ge_kctx *k, int64_t a, int rank, int64_t *out);

/* ---------------------------------------------------------------- paths */

/* What the convolution kernels (exec/k_conv.c) ran, counted by the
 * thread that calls them, so that t/kernels-conv can check that its
 * shapes reach each path. */
typedef struct ge_kconv_counts {
	uint64_t conv_split;    /* Conv2D runs cut into bands over threads */
	uint64_t dw_fast;       /* depthwise output rows x blocks of 8
				 * channels by the register-tiled path */
	uint64_t dw_general;    /* depthwise output rows by the general path */
	uint64_t dw_split;      /* depthwise runs over several threads */
} ge_kconv_counts;
extern ge_kconv_counts ge_kconv_count;

#endif
