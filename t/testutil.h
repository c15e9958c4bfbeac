/*
 * testutil.h: helpers shared by the C unit tests (header only, like tap.h):
 * fixture graphs, lookups, name listings, scratch files.  A fixture that
 * cannot be built is no test result, so a helper that cannot do its job
 * prints a TAP "Bail out!" line and exits (but try_parse, whose callers
 * count the parse as an assertion).
 *
 * The list helpers return comma-joined names in one of eight static
 * buffers taken in turn, so that a few of them fit in one statement; a
 * result stays valid for the next seven calls.
 */
#ifndef GE_TESTUTIL_H
#define GE_TESTUTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

#define TU_UNUSED __attribute__((unused))

/* ------------------------------------------------------------ fixtures */

/* `_output_shapes` of one output, and the 2-vector it mostly is. */
#define FX_SHAPE(d) \
	"attr { key: \"_output_shapes\" value { list { shape { " d " } } } } "
#define FX_DIM2 "dim { size: 2 }"
#define FX_CONST(n) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } " FX_SHAPE(FX_DIM2) \
	"}\n"
#define FX_ADD(n, x, y, extra) \
	"node { name: \"" n "\" op: \"Add\" input: \"" x "\" input: \"" y \
	"\" " extra " attr { key: \"T\" value { type: DT_FLOAT } } " \
	FX_SHAPE(FX_DIM2) "}\n"

/* The graph of graph_editor's own tests; the tests add ops of their own. */
#define FX_EDITOR_GRAPH \
	FX_CONST("a") \
	FX_CONST("foo/b") \
	FX_ADD("foo/c", "a", "foo/b", "") \
	FX_CONST("foo/d") \
	FX_ADD("foo/bar/e", "foo/c", "foo/d", "") \
	FX_ADD("foo/bar/f", "foo/c", "foo/d", "") \
	FX_ADD("foo/bar/g", "foo/c", "a", "") \
	FX_ADD("foo/bar/h", "foo/bar/f", "foo/bar/g", "input: \"^foo/c\"")

TU_UNUSED static ge_graph *parse_as(const char *txt, ge_format fmt)
{
	ge_graph *g = NULL;
	ge_error err = {0};
	if (ge_parse((const uint8_t *)txt, strlen(txt), fmt, "fixture", NULL,
		     &g, &err) != GE_OK) {
		printf("Bail out! fixture does not parse: %s\n", err.msg);
		exit(1);
	}
	return g;
}

/* A GraphDef in text format. */
TU_UNUSED static ge_graph *parse(const char *txt)
{
	return parse_as(txt, GE_FMT_GRAPHDEF_TEXT);
}

/* A GraphDef in text format, or NULL after a diag line when it does not
 * parse: for tests that count the parse as one of their assertions. */
TU_UNUSED static ge_graph *try_parse(const char *txt)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse((const uint8_t *)txt, strlen(txt), GE_FMT_GRAPHDEF_TEXT,
		     "fixture", NULL, &g, &err)) {
		tap_diag("fixture: %s", err.msg);
		return NULL;
	}
	return g;
}

/* The op of that name. */
TU_UNUSED static ge_opid OP(const ge_graph *g, const char *name)
{
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP) {
		printf("Bail out! no op %s\n", name);
		exit(1);
	}
	return id;
}

/* The tensor of that name: "op:1", "op" (output 0) or "^op". */
TU_UNUSED static ge_tref T(const ge_graph *g, const char *name)
{
	ge_tref t;
	if (ge_graph_find_tensor(g, name, &t) != GE_OK) {
		printf("Bail out! no tensor %s\n", name);
		exit(1);
	}
	return t;
}

/* The view of the named ops and passthrough tensors (comma-separated). */
TU_UNUSED static void mkview(ge_view *v, ge_graph *g, const char *ops,
			     const char *ts)
{
	ge_opvec o = GE_VEC_INIT;
	ge_tvec t = GE_VEC_INIT;
	char buf[1024], *save, *p;
	ge_error err = {0};
	snprintf(buf, sizeof buf, "%s", ops);
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		ge_opvec_push(&o, OP(g, p));
	snprintf(buf, sizeof buf, "%s", ts);
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		ge_tvec_push(&t, T(g, p));
	if (ge_view_init(v, g, o.v, o.n, t.v, t.n, &err) != GE_OK) {
		printf("Bail out! view: %s\n", err.msg);
		exit(1);
	}
	ge_opvec_free(&o);
	ge_tvec_free(&t);
}

/* Whether two graphs encode to the same GraphDef bytes. */
TU_UNUSED static int same_encoding(const ge_graph *a, const ge_graph *b)
{
	ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
	ge_graph_encode_graphdef(a, &x);
	ge_graph_encode_graphdef(b, &y);
	int same = x.len == y.len && !memcmp(x.data, y.data, x.len);
	ge_buf_free(&x);
	ge_buf_free(&y);
	return same;
}

/* ------------------------------------------------------------ listings */

#define TU_RING_LEN 4096

/* The next of the eight result buffers, emptied. */
TU_UNUSED static char *tu_ring(void)
{
	static char ring[8][TU_RING_LEN];
	static int ring_i;
	char *b = ring[ring_i++ & 7];
	b[0] = 0;
	return b;
}

/* "x:0,y:0": the data inputs of the named op. */
TU_UNUSED static const char *ins(const ge_graph *g, const char *name)
{
	char *b = tu_ring();
	ge_buf s = GE_BUF_INIT;
	ge_opid op = OP(g, name);
	for (size_t i = 0; i < ge_op_num_inputs(g, op); i++) {
		if (i)
			strcat(b, ",");
		strcat(b, ge_tensor_fmt(g, ge_op_input(g, op, i), &s));
	}
	ge_buf_free(&s);
	return b;
}

/* "x,y": the control inputs of the named op. */
TU_UNUSED static const char *cins(const ge_graph *g, const char *name)
{
	char *b = tu_ring();
	ge_opid op = OP(g, name);
	for (size_t i = 0; i < ge_op_num_control_inputs(g, op); i++) {
		if (i)
			strcat(b, ",");
		strcat(b, ge_op_name(g, ge_op_control_input(g, op, i)));
	}
	return b;
}

TU_UNUSED static const char *opnames(const ge_graph *g, const ge_opvec *v)
{
	char *b = tu_ring();
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(b, ",");
		strcat(b, ge_op_name(g, v->v[i]));
	}
	return b;
}

TU_UNUSED static const char *tnames(const ge_graph *g, const ge_tvec *v)
{
	char *b = tu_ring();
	ge_buf s = GE_BUF_INIT;
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(b, ",");
		strcat(b, ge_tensor_fmt(g, v->v[i], &s));
	}
	ge_buf_free(&s);
	return b;
}

/* "a,b": the strings of the Const the named op reads at slot (a saver's
 * tensor_names), "(none)" when there is no such Const. */
TU_UNUSED static const char *names_of(const ge_graph *g, const char *name,
				      size_t slot)
{
	char *b = tu_ring();
	ge_opid o = ge_graph_find(g, name);
	if (o == GE_NOOP || ge_op_num_inputs(g, o) <= slot)
		return "(none)";
	const Tensorflow__AttrValue *v =
		ge_op_attr(g, ge_op_input(g, o, slot).op, "value", NULL);
	if (!v || !v->tensor)
		return "(none)";
	for (size_t i = 0; i < v->tensor->n_string_val; i++) {
		size_t l = strlen(b);
		snprintf(b + l, TU_RING_LEN - l, "%s%.*s", i ? "," : "",
			 (int)v->tensor->string_val[i].len,
			 (const char *)v->tensor->string_val[i].data);
	}
	return b;
}

/* Length of the named op's `dtypes` list attr (SaveV2, RestoreV2), or -1. */
TU_UNUSED static long long n_dtypes(const ge_graph *g, const char *name)
{
	const Tensorflow__AttrValue *v =
		ge_op_attr(g, ge_graph_find(g, name), "dtypes", NULL);
	return v && v->list ? (long long)v->list->n_type : -1;
}

/* ge_graph_validate's count, its report in diag lines. */
TU_UNUSED static size_t issues(const ge_graph *g)
{
	ge_buf b = GE_BUF_INIT;
	size_t n = ge_graph_validate(g, &b);
	if (n)
		tap_diag("%.*s", (int)b.len, (const char *)b.data);
	ge_buf_free(&b);
	return n;
}

/* ------------------------------------------------------------ files */

/* dir/name, in one of eight buffers taken in turn. */
TU_UNUSED static const char *path_in(const char *dir, const char *name)
{
	static char buf[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

TU_UNUSED static void write_file(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, n, f) != n) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	fclose(f);
}

/* Removes a directory of plain files. */
TU_UNUSED static void rm_dir(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	char p[1024];
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", d, de->d_name);
		unlink(p);
	}
	closedir(dp);
	rmdir(d);
}

#endif
