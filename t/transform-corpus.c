/* transform-corpus.c: copies of a real training graph with v1 while loops
 * (SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta): in place under a new
 * scope, by graph_replace, and through export_scoped / import_graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/wire.h"

#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "editor/transform.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define FILE_REL "SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta"

static ge_graph *load(const char *corpus)
{
	char path[4096];
	ge_graph *g = NULL;
	ge_error err = {0};
	snprintf(path, sizeof path, "%s/%s", corpus, FILE_REL);
	if (ge_load(path, NULL, &g, &err) != GE_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return g;
}

static int is_enter(const char *t)
{
	return !strcmp(t, "Enter") || !strcmp(t, "RefEnter");
}

static char *frame(const ge_graph *g, ge_opid id)
{
	const char *s;
	size_t len;
	if (ge_op_attr_string(g, id, "frame_name", &s, &len))
		return NULL;
	char *r = malloc(len + 1);
	memcpy(r, s, len);
	r[len] = 0;
	return r;
}

/* Loose string set: a sorted array is plenty for a few hundred frames. */
typedef struct {
	char **v;
	size_t n;
} sset;

static int sset_has(const sset *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return 1;
	return 0;
}

static void sset_add(sset *s, const char *x)
{
	if (sset_has(s, x))
		return;
	s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
	s->v[s->n++] = strdup(x);
}

static void sset_free(sset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Problems: count of colocation references to missing ops. */
static size_t dangling_colocations(const ge_graph *g)
{
	size_t bad = 0;
	for (size_t i = 0; i < ge_graph_capacity(g); i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		const Tensorflow__AttrValue *v =
			ge_op_attr(g, (ge_opid)i, "_class", NULL);
		if (!v || !v->list)
			continue;
		for (size_t k = 0; k < v->list->n_s; k++) {
			char nm[1024];
			const ProtobufCBinaryData *s = &v->list->s[k];
			if (s->len < 5 || memcmp(s->data, "loc:@", 5) ||
			    s->len - 5 >= sizeof nm)
				continue;
			memcpy(nm, s->data + 5, s->len - 5);
			nm[s->len - 5] = 0;
			if (ge_graph_find(g, nm) == GE_NOOP) {
				if (!bad)
					tap_diag("'%s' colocated with missing '%s'",
						 ge_op_name(g, (ge_opid)i), nm);
				bad++;
			}
		}
	}
	return bad;
}

static int has_tmp(const ge_graph *g)
{
	for (size_t i = 0; i < ge_graph_capacity(g); i++)
		if (ge_op_alive(g, (ge_opid)i) &&
		    strstr(ge_op_name(g, (ge_opid)i), "geph_tmp"))
			return 1;
	return 0;
}

static size_t problems(const ge_graph *g, ge_buf *r)
{
	r->len = 0;
	return ge_graph_validate(g, r);
}

/* The field-1 string (context_name) of each entry of a bytes_list
 * collection. */
static void context_names(ge_graph *g, const char *coll, sset *out)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		const uint8_t *p = c->bytes_list->value[i].data;
		const uint8_t *e = p + c->bytes_list->value[i].len;
		uint64_t tag, len;
		if (ge_read_varint(&p, e, &tag) || tag != 10 ||
		    ge_read_varint(&p, e, &len) || len > (uint64_t)(e - p))
			continue;
		char *s = strndup((const char *)p, len);
		sset_add(out, s);
		free(s);
	}
}

/* Whether every tensor a control-flow context names exists.  kind: 0 a
 * CondContextDef (names 2, 3; values_def 5; nested 6), 1 a WhileContextDef
 * (names 5-8, 10, 11; values_def 9; nested 12), 2 a ValuesDef (names 1;
 * external_values 2), 3 a ControlFlowContextDef (cond 1, while 2). */
static int names_exist(ge_graph *g, const uint8_t *p, const uint8_t *e,
		       int kind)
{
	while (p < e) {
		uint64_t tag, len;
		if (ge_read_varint(&p, e, &tag))
			return 0;
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, e, (int)(tag & 7)))
				return 0;
			continue;
		}
		if (ge_read_varint(&p, e, &len) || len > (uint64_t)(e - p))
			return 0;
		uint32_t f = (uint32_t)(tag >> 3);
		int sub = -1, is_name = 0;
		switch (kind) {
		case 0:
			is_name = f == 2 || f == 3;
			sub = f == 5 ? 2 : f == 6 ? 3 : -1;
			break;
		case 1:
			is_name = (f >= 5 && f <= 8) || f == 10 || f == 11;
			sub = f == 9 ? 2 : f == 12 ? 3 : -1;
			break;
		case 2:
			is_name = f == 1;
			break;
		case 3:
			sub = f == 1 ? 0 : f == 2 ? 1 : -1;
			break;
		}
		if (sub >= 0 && !names_exist(g, p, p + len, sub))
			return 0;
		if (is_name) {
			char *s = strndup((const char *)p, len);
			ge_tref t;
			int found = ge_graph_find_tensor(g, s, &t) == GE_OK;
			if (!found)
				tap_diag("missing '%s'", s);
			free(s);
			if (!found)
				return 0;
		}
		p += len;
	}
	return 1;
}

static int context_tensors_exist(ge_graph *g, const char *coll)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return 0;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		const uint8_t *p = c->bytes_list->value[i].data;
		if (!names_exist(g, p, p + c->bytes_list->value[i].len,
				 !strcmp(coll, "while_context")))
			return 0;
	}
	return 1;
}

/* How many entries of a bytes_list collection have string field f
 * starting with prefix. */
static size_t field_prefixed(ge_graph *g, const char *coll, uint32_t f,
			     const char *prefix)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	size_t n = 0;
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return 0;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		const uint8_t *p = c->bytes_list->value[i].data;
		const uint8_t *e = p + c->bytes_list->value[i].len;
		while (p < e) {
			uint64_t tag, len;
			if (ge_read_varint(&p, e, &tag))
				break;
			if ((tag & 7) != 2) {
				if (ge_skip_field(&p, e, (int)(tag & 7)))
					break;
				continue;
			}
			if (ge_read_varint(&p, e, &len) ||
			    len > (uint64_t)(e - p))
				break;
			if ((tag >> 3) == f && len >= strlen(prefix) &&
			    !memcmp(p, prefix, strlen(prefix)))
				n++;
			p += len;
		}
	}
	return n;
}

static void test_copy_in_place(const char *corpus)
{
	ge_graph *g = load(corpus);
	ge_buf r = GE_BUF_INIT;
	ge_error err = {0};
	size_t before = problems(g, &r);
	size_t n0 = ge_graph_num_ops(g);
	sset orig_frames = {0};
	for (size_t i = 0; i < ge_graph_capacity(g); i++)
		if (is_enter(ge_op_type(g, (ge_opid)i))) {
			char *f = frame(g, (ge_opid)i);
			sset_add(&orig_frames, f);
			free(f);
		}
	tap_diag("%zu ops, %zu frames, %zu problems before", n0,
		 orig_frames.n, before);
	size_t while0 = 0, cond0 = 0;
	Tensorflow__CollectionDef *c = ge_collection_get(g, "while_context");
	while0 = c ? c->bytes_list->n_value : 0;
	c = ge_collection_get(g, "cond_context");
	cond0 = c ? c->bytes_list->n_value : 0;

	ge_opvec all = GE_VEC_INIT;
	ge_graph_all_ops(g, &all);
	ge_view v;
	ge_view_init(&v, g, all.v, all.n, NULL, 0, &err);
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_tinfo *info = NULL;
	int rc = ge_copy(&v, &o, NULL, &info, &err);
	is_int(GE_OK, rc, "copy the whole graph under copy/ %s", err.msg);
	if (rc) {
		ge_graph_free(g);
		return;
	}
	is_int((long long)(2 * n0), (long long)ge_graph_num_ops(g),
	       "every op copied once, nothing left over");
	size_t after = problems(g, &r);
	is_int((long long)before, (long long)after,
	       "validate finds no new problem");
	if (after != before)
		tap_diag("%s", (char *)r.data);
	ok(!has_tmp(g), "no geph_tmp op is left");
	is_int(0, (long long)dangling_colocations(g),
	       "no loc:@ points at a missing op");

	/* each copy reads the copies of what its original reads, slot by
	 * slot (Merge input order included) */
	int wired = 1;
	for (size_t k = 0; k < all.n && wired; k++) {
		ge_opid s = all.v[k], d = ge_tinfo_transformed_op(info, s);
		if (ge_op_num_inputs(g, s) != ge_op_num_inputs(g, d)) {
			wired = 0;
			break;
		}
		for (size_t i = 0; i < ge_op_num_inputs(g, s); i++) {
			ge_tref a = ge_op_input(g, s, i), b = ge_op_input(g, d, i);
			ge_tref want;
			if (!ge_tinfo_transformed_t(info, a, &want) ||
			    !ge_tref_eq(want, b)) {
				tap_diag("input %zu of '%s'", i,
					 ge_op_name(g, d));
				wired = 0;
			}
		}
		if (ge_op_num_control_inputs(g, s) !=
		    ge_op_num_control_inputs(g, d))
			wired = 0;
	}
	ok(wired, "every copy is wired like its original, slot by slot");

	/* frames: one fresh frame per copied loop */
	int shared = 1, fresh = 1, complete = 1;
	sset new_frames = {0};
	for (size_t i = 0; i < orig_frames.n; i++) {
		char *nf = NULL;
		for (size_t k = 0; k < all.n; k++) {
			ge_opid s = all.v[k];
			if (!is_enter(ge_op_type(g, s)))
				continue;
			char *f = frame(g, s);
			if (strcmp(f, orig_frames.v[i])) {
				free(f);
				continue;
			}
			free(f);
			ge_opid d = ge_tinfo_transformed_op(info, s);
			if (d == GE_NOOP) {
				complete = 0;
				continue;
			}
			char *df = frame(g, d);
			if (!nf)
				nf = strdup(df);
			else if (strcmp(nf, df))
				shared = 0;
			if (sset_has(&orig_frames, df))
				fresh = 0;
			free(df);
		}
		if (nf) {
			if (sset_has(&new_frames, nf))
				shared = 0; /* two loops merged into one */
			sset_add(&new_frames, nf);
		}
		free(nf);
	}
	ok(complete, "every Enter is copied");
	ok(shared, "all Enters of one copied loop share one frame name");
	ok(fresh, "no frame name is shared between original and copy");
	is_int((long long)orig_frames.n, (long long)new_frames.n,
	       "one new frame per loop");

	/* control-flow contexts describe the copies too */
	c = ge_collection_get(g, "while_context");
	is_int((long long)(2 * while0), c ? (long long)c->bytes_list->n_value : 0,
	       "while_context holds a renamed copy of each context");
	c = ge_collection_get(g, "cond_context");
	is_int((long long)(2 * cond0), c ? (long long)c->bytes_list->n_value : 0,
	       "cond_context too");
	sset wn = {0};
	context_names(g, "while_context", &wn);
	int named = wn.n == 2 * while0;
	for (size_t i = 0; i < wn.n; i++)
		if (!sset_has(&orig_frames, wn.v[i]) &&
		    !sset_has(&new_frames, wn.v[i]))
			named = 0;
	ok(named, "each while context is named after its loop's frame");
	sset_free(&wn);
	is_int((long long)while0,
	       (long long)field_prefixed(g, "while_context", 5, "copy/"),
	       "the copied while contexts pivot on the copies");
	is_int((long long)cond0,
	       (long long)field_prefixed(g, "cond_context", 3, "copy/"),
	       "the copied cond contexts pivot on the copies");
	ok(context_tensors_exist(g, "while_context"),
	   "every tensor a while context names exists");
	ok(context_tensors_exist(g, "cond_context"),
	   "every tensor a cond context names exists");
	sset cn = {0};
	context_names(g, "cond_context", &cn);
	is_int((long long)(2 * cond0), (long long)cn.n,
	       "cond context names are distinct");
	sset_free(&cn);

	/* collections: the predefined ones list the copies */
	c = ge_collection_get(g, "train_op");
	ok(c && c->node_list->n_value == 2 &&
		   !strcmp(c->node_list->value[1], "copy/train_step/Adam"),
	   "train_op lists the copy");

	/* the result saves and loads back with the same problems */
	ge_buf b = GE_BUF_INIT;
	rc = ge_serialize(g, GE_FMT_META, &b, &err);
	ge_graph *back = NULL;
	if (!rc)
		rc = ge_parse(b.data, b.len, GE_FMT_META, "copy", NULL, &back,
			      &err);
	is_int(GE_OK, rc, "the copy round-trips as a MetaGraphDef %s", err.msg);
	if (back) {
		is_int((long long)before, (long long)problems(back, &r),
		       "... and validates the same after reloading");
		ge_graph_free(back);
	}
	ge_buf_free(&b);
	sset_free(&new_frames);
	sset_free(&orig_frames);
	ge_tinfo_free(info);
	ge_view_free(&v);
	ge_opvec_free(&all);
	ge_buf_free(&r);
	ge_graph_free(g);
}

static void test_graph_replace(const char *corpus)
{
	ge_graph *g = load(corpus);
	ge_buf r = GE_BUF_INIT;
	ge_error err = {0};
	size_t before = problems(g, &r);
	ge_opid ph = ge_graph_find(g, "dropout");
	ge_opid nph = ge_make_placeholder_from_tensor(g, g, (ge_tref){ph, 0},
						      "", "keep", &err);
	ge_tref target, out;
	ge_graph_find_tensor(g, "loss:0", &target);
	ge_tpair rp = {{ph, 0}, {nph, 0}};
	ge_transform_opts o = {0};
	o.dst_scope = "replaced";
	size_t n0 = ge_graph_num_ops(g);
	size_t cap0 = ge_graph_capacity(g);
	ge_tinfo *info = NULL;
	int rc = ge_graph_replace(g, &target, 1, &rp, 1, &o, &out, &info,
				  &err);
	is_int(GE_OK, rc, "graph_replace(loss, {dropout = new}) %s", err.msg);
	ok(ge_graph_num_ops(g) > n0 + 100, "a large part is copied (%zu ops)",
	   ge_graph_num_ops(g) - n0);
	ok(rc == GE_OK && out.op != target.op &&
		   !strncmp(ge_op_name(g, out.op), "replaced/", 9),
	   "the target is mapped into replaced/");
	is_int((long long)before, (long long)problems(g, &r),
	       "validate finds no new problem");
	ok(!has_tmp(g), "no geph_tmp op is left");
	is_int(0, (long long)dangling_colocations(g),
	       "no loc:@ points at a missing op");
	/* whole loops: every Enter of a frame the copy touches is copied */
	sset copied = {0}, all_frames = {0};
	size_t enters_orig = 0, enters_copy = 0;
	for (size_t i = 0; i < ge_graph_capacity(g); i++) {
		if (!ge_op_alive(g, (ge_opid)i) ||
		    !is_enter(ge_op_type(g, (ge_opid)i)))
			continue;
		char *f = frame(g, (ge_opid)i);
		if (!strncmp(ge_op_name(g, (ge_opid)i), "replaced/", 9)) {
			sset_add(&copied, f);
			enters_copy++;
		} else {
			sset_add(&all_frames, f);
			enters_orig++;
		}
		free(f);
	}
	int disjoint = 1;
	for (size_t i = 0; i < copied.n; i++)
		if (sset_has(&all_frames, copied.v[i]))
			disjoint = 0;
	ok(copied.n > 0, "loops were copied (%zu frames)", copied.n);
	ok(disjoint, "their frames are fresh");
	/* a loop is copied whole or not at all */
	int whole = 1;
	for (size_t i = 0; i < cap0 && info; i++) {
		if (!is_enter(ge_op_type(g, (ge_opid)i)))
			continue;
		char *fi = frame(g, (ge_opid)i);
		int in = ge_tinfo_transformed_op(info, (ge_opid)i) != GE_NOOP;
		for (size_t k = 0; k < cap0; k++) {
			if (!is_enter(ge_op_type(g, (ge_opid)k)))
				continue;
			char *fk = frame(g, (ge_opid)k);
			if (!strcmp(fi, fk) &&
			    (ge_tinfo_transformed_op(info, (ge_opid)k) !=
			     GE_NOOP) != in)
				whole = 0;
			free(fk);
		}
		free(fi);
	}
	ok(whole, "every loop is copied whole or not at all");
	ge_tinfo_free(info);
	sset_free(&copied);
	sset_free(&all_frames);
	ge_buf_free(&r);
	ge_graph_free(g);
}

static void test_export_import(const char *corpus)
{
	ge_graph *g = load(corpus);
	ge_buf r = GE_BUF_INIT;
	ge_error err = {0};
	ge_graph *e = NULL;
	int rc = ge_graph_export_scoped(g, "bi-lstm", &e, &err);
	is_int(GE_OK, rc, "export_scoped(bi-lstm) %s", err.msg);
	if (!e) {
		ge_graph_free(g);
		return;
	}
	size_t pe = problems(e, &r);
	is_int(0, (long long)pe, "the exported scope validates on its own");
	if (pe)
		tap_diag("%s", (char *)r.data);
	ok(ge_graph_find(e, "bidirectional_rnn/fw/fw/while/Enter") != GE_NOOP,
	   "names are stripped of the scope");
	ge_opid en = ge_graph_find(e, "bidirectional_rnn/fw/fw/while/Enter");
	char *f = en == GE_NOOP ? NULL : frame(e, en);
	is_string("bidirectional_rnn/fw/fw/while/while_context", f,
		  "frame names are stripped too");
	free(f);
	is_int(0, (long long)dangling_colocations(e),
	       "no loc:@ points outside");
	Tensorflow__CollectionDef *c = ge_collection_get(e, "while_context");
	is_int(2, c ? (long long)c->bytes_list->n_value : 0,
	       "the scope's two while contexts are exported");

	size_t n0 = ge_graph_num_ops(g);
	ge_import_opts io = {0};
	io.prefix = "again";
	rc = ge_import_graph(g, e, &io, NULL, &err);
	is_int(GE_OK, rc, "import it back under again/ %s", err.msg);
	is_int((long long)(n0 + ge_graph_num_ops(e)),
	       (long long)ge_graph_num_ops(g), "every op imported");
	ge_graph_free(e);
	ge_buf_free(&r);
	ge_graph_free(g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found");
	test_copy_in_place(corpus);
	test_graph_replace(corpus);
	test_export_import(corpus);
	return tap_done();
}
