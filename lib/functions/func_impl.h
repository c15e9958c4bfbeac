/*
 * func_impl.h: the representation behind func.h, shared by func.c (the
 * library, references, edits), func_body.c (parsing bodies, signatures
 * and encoding) and func_check.c (validation, reachability).  Nothing
 * outside those files includes it.
 */
#ifndef GE_FUNC_IMPL_H
#define GE_FUNC_IMPL_H

#include "functions/func.h"
#include "graph/graph_impl.h"

struct Tensorflow__OpDef;
struct Tensorflow__OpDef__ArgDef;
struct Tensorflow__AttrValue;

/* The library's side of the graph core (ge_graph_parts in graph_impl.h):
 * ge_flib_install fills the table with the functions below; every entry
 * of the library into a graph (a scan, a body) installs it first. */
void ge_flib_free(struct ge_flib *l);
int ge_flib_changed(const ge_graph *g);
void ge_flib_adopt(ge_graph *root);
void ge_flib_encode_payload(const ge_graph *g, ge_buf *out);
const struct Tensorflow__OpDef *ge_flib_opdef(const ge_graph *g,
					      const char *type);
void ge_flib_add_field(ge_graph *g, const uint8_t *p, size_t len);


/* An arg of the signature as the body stands for it: its name, where its
 * ops are (_Arg / _Retval ops, count of them) and the original arg index
 * (-1 for one the body added). */
typedef struct fnarg {
	char *name;
	int dtype, count, orig, is_list;
	ge_opid *ops;
} fnarg;

/* One entry of a string map (ret, control_ret) as read. */
typedef struct mapent {
	char *key, *val;
	ge_opid op;  /* control_ret: the op it names */
} mapent;

/* Output args of an op type without an OpDef, as the body names them:
 * flat indices given in order of first mention, each as wide as the
 * highest index read. */
typedef struct unkout {
	ge_opid op;
	char *arg;
	int start, count;
} unkout;

typedef struct ge_fn {
	unkout *unk;
	size_t n_unk;
	uint32_t *argof;           /* _Arg op id -> index in in0 (parse) */
	size_t n_argops;
	char *name;
	const uint8_t *raw;        /* FunctionDef payload */
	size_t raw_len;
	uint8_t *owned;            /* raw, when made here */
	int dead, renamed;
	ge_graph *body;
	uint64_t base_ver;         /* body version right after the parse */
	struct Tensorflow__OpDef *sig;    /* raw signature decoded, lazily */
	/* the body's view, made at parse time (orig) and at sync (cur) */
	fnarg *in0, *out0;
	size_t n_in0, n_out0;
	mapent *ret0, *cret0;
	size_t n_ret0, n_cret0;
	fnarg *in, *out;
	size_t n_in, n_out;
	uint64_t sync_ver;
	int synced, sig_changed;
	ge_buf sig_bytes;          /* packed signature when it changed */
	struct Tensorflow__OpDef *cur;    /* unpacked sig_bytes */
	ge_func_arg *view_in, *view_out;
	size_t n_view_in, n_view_out;
	int view_from_body;
} ge_fn;

typedef struct fitem {
	ge_funcid f;               /* a function, or GE_NOFUNC for raw */
	const uint8_t *p;          /* raw entry (tag, length, payload) */
	size_t len;
	uint8_t *owned;
	uint32_t field;
} fitem;

struct ge_flib {
	ge_fn *fn;
	size_t n_fn, cap_fn, n_live;
	fitem *items;
	size_t n_items, cap_items;
	int changed;               /* items added, removed or rewritten */
	uint64_t edits;            /* how many times changed or a function
				      renamed (ge_graph_stamp) */
	/* name index: open addressing, slot = id + 1, 0 empty */
	uint32_t *idx;
	size_t idx_cap;
};

#define ARG_OP "_Arg"
#define RET_OP "_Retval"

/* The graph owning the library (g itself unless g is a body). */
ge_graph *ge_fl_root(const ge_graph *g);
/* The graph's name for messages. */
const char *ge_fl_label(const ge_graph *g);
/* The library of g's root, scanned if needed (empty if it does not
 * parse: ge_flib_load reports that). */
struct ge_flib *ge_fl_lib(const ge_graph *g);
/* Function f of g's root library, or NULL. */
ge_fn *ge_fl_fn(const ge_graph *g, ge_funcid f);
ge_funcid ge_fl_idx_find(const struct ge_flib *l, const char *name, size_t n);
void ge_fl_fnargs_free(fnarg *a, size_t n);
void ge_fl_mapents_free(mapent *m, size_t n);

/* ge_op_func_calls of graph `in`'s ops, asked in increasing id order:
 * while the load's record of the ops whose attrs name functions holds
 * (graph_impl.h), the others are answered from their type alone, each
 * type looked up in the library once. */
enum { FL_WALK_MEMO = 64 };
typedef struct fl_walk {
	ge_graph *in;
	struct ge_flib *l;
	int fast;
	size_t next;               /* in in->fn_attr_ops */
	struct {
		const char *type;  /* interned */
		ge_funcid f;
	} memo[FL_WALK_MEMO];
} fl_walk;
void ge_fl_walk_init(fl_walk *w, ge_graph *in);
size_t ge_fl_walk_calls(fl_walk *w, ge_opid id, ge_func_call **out);
/* The only ops that can call anything (in->fn_attr_ops) when the
 * library is empty and the record holds, else NULL: all must be asked. */
const ge_opid *ge_fl_walk_only(const fl_walk *w);

/* The FunctionDef's signature as read, decoded on first use. */
const struct Tensorflow__OpDef *ge_fl_raw_sig(ge_fn *f);
/* The default of a signature attr, or NULL. */
const struct Tensorflow__AttrValue *
ge_fl_sig_default(const struct Tensorflow__OpDef *d, const char *name);
/* An arg's tensor count and first dtype from the signature alone; types
 * (if given) points at a type_list_attr default's types. */
void ge_fl_sig_arg_info(const struct Tensorflow__OpDef *d,
		     const struct Tensorflow__OpDef__ArgDef *a, int *count,
		     int *dtype, int *is_list, int **types);

/* func_body.c: brings f's current signature up to date with its body;
 * appends the FunctionDef bytes as they would be saved. */
void ge_fl_fn_sync(ge_fn *f);
void ge_fl_encode_fn(ge_fn *f, ge_buf *out);

#endif
