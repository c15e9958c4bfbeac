/*
 * exec/exec_impl.h: the executor's private state, shared by exec.c (the
 * run loop, frames, calls), xsession.c (sessions) and xvars.c (variables
 * and their ops).  Included by those three files only.
 */
#ifndef GE_EXEC_EXEC_IMPL_H
#define GE_EXEC_EXEC_IMPL_H

#include "exec/exec.h"
#include "exec/kernel.h"
#include "functions/func.h"

struct ge_bundle;
struct xvars;
struct xplan;

/* One slot of per-op state (ge_xrt_slot). */
struct xslot {
	const ge_graph *g;
	ge_opid id;
	ge_xobj *obj;
};

/* The session is its runtime: kernels see it as struct ge_xrt. */
struct ge_xrt {
	ge_graph *g;              /* the top-level graph */
	ge_xopts o;
	ge_xbudget own;
	ge_xbudget *budget;
	struct xslot *slots;      /* open addressing, cap a power of two */
	size_t nslots, slotcap;
	struct xplan **plans;     /* function bodies' plans, by body graph */
	size_t nplans, plancap;
	struct xplan *last;       /* the last run's plan, for the same */
	char *last_key;           /* feeds and fetches at the same */
	uint64_t last_version;    /* graph version */
	struct xvars *vars;
	int depth;                /* calls in progress */
};

struct ge_xsession {
	struct ge_xrt rt;
};

/* ---- exec.c ---- */

/* The plan of a run of g (a body when fname is set) needing the start
 * ops, with fed tensors (their ops become sources) and fetches (fetch[i]
 * is result i). */
int ge_xplan_build(struct ge_xrt *rt, ge_graph *g, const char *fname,
		   const ge_opid *start, size_t nstart,
		   const ge_tref *fed, size_t nfed,
		   const ge_tref *fetch, size_t nfetch,
		   struct xplan **out, ge_error *err);
void ge_xplan_free(struct xplan *p);
/* Runs plan p: args are a body's arguments or the feeds; res receives
 * the fetches or the body's outputs (nres of them); prefix goes before
 * the names on_tensor sees. */
int ge_xrun(struct ge_xrt *rt, struct xplan *p, ge_xt *const *args,
	    int nargs, ge_xt **res, int nres, const char *prefix,
	    ge_error *err);
/* Calls function f of the library. */
int ge_xcall(struct ge_xrt *rt, ge_funcid f, ge_xt *const *args, int nargs,
	     ge_xt **outs, int nout, const char *prefix, ge_error *err);

/* ---- xvars.c ---- */

/* Finds the model's checkpoint and what each variable is saved under;
 * values are read when a variable op first runs. */
int ge_xvars_open(struct ge_xrt *rt, ge_error *err);
void ge_xvars_close(struct ge_xrt *rt);
/* The kernel of a variable op type (VarHandleOp, ReadVariableOp,
 * VariableV2, Assign...), or NULL. */
const ge_kdef *ge_xvars_kernel(const char *type);
/* Whether op type takes a TF1 reference as it is (Assign,
 * IsVariableInitialized, the Ref* forwarding ops); any other op reads a
 * reference's value. */
int ge_xvars_takes_ref(const char *type);
/* Whether t is a TF1 variable reference (what VariableV2 outputs). */
int ge_xvars_is_ref(const ge_xt *t);
/* A reference's value (a new reference to it); NULL with err set when
 * the variable holds no value. */
ge_xt *ge_xvars_deref(struct ge_xrt *rt, const ge_xt *ref, const char *what,
		      ge_error *err);

#endif
