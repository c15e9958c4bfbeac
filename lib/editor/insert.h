/*
 * insert.h: a chain of new ops after many tensors, in one call.
 *
 * Recipes that instrument a graph (noise after every Conv2D, a Print
 * after chosen tensors) repeat one small pattern at many sites: a few new
 * ops reading the site tensor, named after the site's op, and every op
 * that read the site reading the chain's last output instead.  Done op by
 * op from a script, each site costs a handful of calls, name lookups and
 * attr encodings; ge_insert_after takes the pattern once, as a template,
 * and makes every site's ops in one pass:
 *
 *   - each template op's attrs are given encoded (AttrValue bytes) and
 *     kept once in the graph, shared by all the ops made from it; an attr
 *     may instead take one value per site (a seed, a message that names
 *     the site);
 *   - names are <site op name><template name>, made unique exactly as
 *     ge_graph_unique_name makes them, site by site and in template order,
 *     so the result equals the same ops added one by one;
 *   - every reader of a site tensor (any data input reading it, taken
 *     before the call: the new ops are not readers) is moved to the
 *     template's output, as ge_graph_set_inputs would move it.
 *
 * Nothing changes on error: templates and sites are checked first.
 */
#ifndef GE_INSERT_H
#define GE_INSERT_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

/* What an input of a template op reads. */
enum {
	GE_INS_SITE,   /* the site tensor (as a control input: its op) */
	GE_INS_OP,     /* output `index` of earlier template op `op` (as a
			  control input: that op) */
	GE_INS_TENSOR, /* a tensor of the graph, the same at every site (as
			  a control input: its op) */
};

typedef struct ge_ins_ref {
	int kind;
	uint32_t op;    /* GE_INS_OP: index into the template's ops */
	int32_t index;  /* GE_INS_OP: output index */
	ge_tref t;      /* GE_INS_TENSOR */
} ge_ins_ref;

typedef struct ge_ins_attr {
	const char *name;
	/* the encoded AttrValue, the same at every site... */
	const uint8_t *bytes;
	size_t len;
	/* ...or, when not NULL, an int attr (AttrValue.i) holding
	 * site_ints[k] at site k (indexed like the sites) */
	const int64_t *site_ints;
	/* ...or, when not NULL, the encoded AttrValue site_bytes[k] (of
	 * site_lens[k] bytes) at site k */
	const uint8_t *const *site_bytes;
	const size_t *site_lens;
} ge_ins_attr;

typedef struct ge_ins_op {
	const char *type;
	const char *name;    /* a suffix: the op is <site op name><name> */
	const char *device;  /* NULL: the site op's device */
	const ge_ins_ref *in;
	size_t n_in;
	const ge_ins_ref *ctrl;
	size_t n_ctrl;
	/* When the site's op is not in the graph's root frame (it runs in a
	 * TF1 while loop, or no walk reaches it), the op also waits on the
	 * site's op: an op without data inputs then runs in the loop's frame,
	 * as tf.while_loop anchors its constants on the loop's pivot. */
	int loop_anchor;
	const ge_ins_attr *attrs;  /* written in this order */
	size_t n_attrs;
} ge_ins_op;

typedef struct ge_ins_template {
	const ge_ins_op *ops;
	size_t n_ops;
	/* the readers of the site read output out_index of ops[out_op] */
	uint32_t out_op;
	int32_t out_index;
} ge_ins_template;

enum {
	/* a site nobody reads gets no ops (listed in ge_ins_result.skipped) */
	GE_INS_SKIP_UNREAD = 1,
};

typedef struct ge_ins_result {
	size_t inserted;    /* sites that got their ops */
	size_t *skipped;    /* positions of the skipped sites, in order */
	size_t n_skipped;
	ge_tref *outputs;   /* per site: what its readers read now
			       ({GE_NOOP, 0} when skipped) */
} ge_ins_result;

/* Inserts the template tmpls[site_tmpl[k]] (tmpls[0] for every site when
 * site_tmpl is NULL) after each of the n site tensors, in site order.
 * Sites must be outputs of live ops, each given once.  Returns GE_OK and
 * fills res (free it with ge_ins_result_free), or GE_EINVAL with a message
 * (a bad template, a bad or repeated site) and changes nothing.  Time is
 * linear in the new ops, the sites' readers and the uses of the sites'
 * ops. */
int ge_insert_after(ge_graph *g, const ge_tref *sites, size_t n,
		    const ge_ins_template *tmpls, size_t n_tmpls,
		    const uint32_t *site_tmpl, unsigned flags,
		    ge_ins_result *res, ge_error *err);
void ge_ins_result_free(ge_ins_result *res);

/* The dtype of each of the n sites, as t.dtype gives it (the OpDef and
 * the op's attrs, else shape inference), else that of the op's type attr
 * `attr` when attr is not NULL; 0 when unknown.  The same answers as
 * ge_op_output_dtype and ge_shapes_dtype, with one OpDef lookup per op
 * type and no attr decoded where the type attr's bytes say it. */
void ge_insert_site_dtypes(ge_graph *g, const ge_tref *sites, size_t n,
			   const char *attr, int *out);

/* The live ops whose type is one of the n types (compared exactly), in
 * node order, appended to out. */
void ge_graph_ops_of_types(const ge_graph *g, const char *const *types,
			   size_t n, ge_opvec *out);

#endif
