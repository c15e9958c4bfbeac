/*
 * graph_copy.h: copies of ops within their own graph that share the
 * source's encoded attrs, for the transform's copy (tinfo.c).
 *
 * A copy made here points at the source's attr entries in the graph's
 * input bytes instead of decoding or re-encoding them; a save writes them
 * in one piece after the copy's name, type, inputs and device.  The copy
 * is byte for byte what ge_graph_add_op followed by ge_op_add_attrs_raw of
 * every attr and ge_op_add_input of every input makes, so the fast path
 * is taken only where that holds (see ge_op_attr_run); callers fall back
 * to those functions otherwise.
 */
#ifndef GE_GRAPH_COPY_H
#define GE_GRAPH_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graph/graph.h"

enum {
	GE_RUN_SHAPES = 1, /* an `_output_shapes` attr is among them */
	GE_RUN_CLASS = 2,  /* a `_class` attr is among them */
	/* for ge_graph_add_copy: no name handed out by unique_name begins
	 * as the copy's does (ge_names_handed_out_under), so the copy's is
	 * not one of them */
	GE_COPY_UNHANDED = 4,
};

/* Whether the attrs of op id are a run of entries in its NodeDef bytes
 * that a copy can share: each entry holds its key then its value, in the
 * shortest encoding, keys are distinct and hold no NUL, and nothing
 * edited them since the load.  Then returns 1 with the run (len 0 when the
 * op has no attrs) and GE_RUN_* bits in *fl; else 0. */
int ge_op_attr_run(const ge_graph *g, ge_opid id, const uint8_t **run,
		   size_t *len, unsigned *fl);

/* Room in g's arena for a name of n bytes and its NUL (for
 * ge_graph_add_copy, which keeps the name where it is; room that no copy
 * takes goes with the graph). */
char *ge_graph_name_room(ge_graph *g, size_t n);

/* The attr classes of g's load, while nothing changed since: for each op
 * (n of them) the first op of the same type whose attr fields, from the
 * first to the last, are the same bytes; else NULL. */
const ge_opid *ge_graph_attr_classes(const ge_graph *g, size_t *n);

/* ge_op_attr_run for op id, whose attr fields are byte for byte those of
 * op like (its class in ge_graph_attr_classes, taken while valid): like's
 * verdict serves, once id's attr fields are found where it says and
 * nothing follows them; else it is ge_op_attr_run. */
int ge_op_attr_run_like(const ge_graph *g, ge_opid id, ge_opid like,
			const uint8_t **run, size_t *len, unsigned *fl);

/* The n data inputs of op id as the graph keeps them: a dangling one has
 * op GE_NOOP and no meaningful index (ge_op_input gives its index); and
 * how many control inputs follow them. */
const ge_tref *ge_op_data_inputs(const ge_graph *g, ge_opid id, size_t *n,
				 size_t *n_ctrl);

/* Adds a copy of op src (type, device, the attrs run and its GE_RUN_*
 * bits from ge_op_attr_run) named name (n bytes, NUL-terminated, in room
 * from ge_graph_name_room; h its ge_hash_ci), claimed as
 * ge_graph_unique_name claims a free name, reading in (live tensors of g).
 * *nout gets the source's output count where the source knows it, else
 * -1.  The producers do not list the copy as a consumer until
 * ge_graph_link_inputs runs over it.  Returns GE_NOOP, adding nothing,
 * when the name is taken. */
ge_opid ge_graph_add_copy(ge_graph *g, ge_opid src, const uint8_t *run,
			  size_t len, unsigned fl, const char *name, size_t n,
			  uint32_t h, const ge_tref *in, size_t n_in,
			  int32_t *nout);

/* How many names unique_name handed out in g so far (never fewer later),
 * and whether one of them begins with the n bytes of prefix, ignoring
 * case: the check of a whole series of copies whose names begin so. */
size_t ge_names_handed_out_n(const ge_graph *g);
int ge_names_handed_out_under(const ge_graph *g, const char *prefix,
			      size_t n);

/* Adds ops (made by ge_graph_add_copy, in increasing id order) to the
 * consumer lists of the ops they read, in one pass over their inputs.
 * The scratch (zeroed before the first use, freed with
 * ge_link_scratch_free) serves every call of one series of copies. */
typedef struct ge_link_scratch {
	uint32_t *at;  /* per op id, zero between calls */
	size_t cap;
	ge_opvec prod;
} ge_link_scratch;
void ge_graph_link_inputs(ge_graph *g, const ge_opid *ops, size_t n,
			  ge_link_scratch *x);
void ge_link_scratch_free(ge_link_scratch *x);

/* The save of a copy made here (neither its attrs read since, which
 * splits them, nor set): appends the whole GraphDef.node field, header
 * included, in one piece, the bytes ge_op_encode gives; returns 1.  For
 * any other op returns 0 and appends nothing.  types: the lengths of the
 * op types met so far in the save (interned: one pointer a type), zeroed
 * before the first call. */
typedef struct ge_type_lens {
	const char *type[8];
	size_t len[8];
} ge_type_lens;
int ge_op_encode_shared(const ge_graph *g, ge_opid id, ge_buf *out,
			ge_type_lens *types);

/* memcpy of the few bytes of a name, in moves of 16, 8 or 4 bytes that
 * may overlap, rather than a call: names are copied several times per op
 * by a copy and its save. */
typedef struct ge_w16 {
	uint64_t w[2];
} ge_w16;
static inline void ge_copy_short(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	if (n > 64) {
		memcpy(d, s, n);
	} else if (n >= 16) {
		/* the first and last 16, and for more than 32 the 16 after
		 * the first and before the last */
		ge_w16 a, b, c, e;
		memcpy(&a, s, 16);
		memcpy(&e, s + n - 16, 16);
		if (n > 32) {
			memcpy(&b, s + 16, 16);
			memcpy(&c, s + n - 32, 16);
			memcpy(d + 16, &b, 16);
			memcpy(d + n - 32, &c, 16);
		}
		memcpy(d, &a, 16);
		memcpy(d + n - 16, &e, 16);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

#endif
