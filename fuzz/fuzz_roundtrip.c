/* fuzz_roundtrip.c: load -> edit -> save -> reload.  Whatever loads (any
 * format, sniffed) is edited (an op renamed, one added and wired, one
 * removed, an attr set), saved in its own format and in binary, and both
 * must load again with the same number of ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

static void reload(const ge_graph *g, ge_format f, size_t want)
{
	ge_buf out = GE_BUF_INIT;
	ge_error err;
	ge_graph *h = NULL;
	if (ge_serialize(g, f, &out, &err) != GE_OK) {
		ge_buf_free(&out);
		return;
	}
	ge_load_opts lo = {0};
	lo.no_check = 1;
	if (ge_parse(out.data, out.len, f, "saved", &lo, &h, &err) != GE_OK) {
		fprintf(stderr, "a saved graph does not load: %s\n", err.msg);
		abort();
	}
	if (ge_graph_num_ops(h) != want) {
		fprintf(stderr, "%zu ops saved, %zu loaded\n", want,
			ge_graph_num_ops(h));
		abort();
	}
	ge_graph_free(h);
	ge_buf_free(&out);
}

FUZZ_TARGET(roundtrip)
{
	fuzz_limits();
	ge_graph *g = NULL;
	ge_error err;
	ge_load_opts lo = {0};
	lo.no_check = 1;
	if (ge_parse(data, len, GE_FMT_AUTO, "fuzz", &lo, &g, &err))
		return 0;
	ge_format f = ge_graph_format(g);
	if (f == GE_FMT_TFJS)
		f = GE_FMT_GRAPHDEF;
	ge_opid first = GE_NOOP;
	for (size_t i = 0; i < ge_graph_capacity(g) && first == GE_NOOP; i++)
		if (ge_op_alive(g, (ge_opid)i))
			first = (ge_opid)i;
	if (first != GE_NOOP) {
		const char *nn = ge_graph_unique_name(g, "renamed");
		ge_op_set_name(g, first, nn, &err);
		ge_opid id = ge_graph_add_op(g, ge_graph_unique_name(g, "added"),
					     "Identity", &err);
		if (id != GE_NOOP) {
			ge_op_add_input(g, id, (ge_tref){first, 0}, &err);
			Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
			v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
			v.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
			ge_op_set_attr(g, id, "T", &v);
		}
		ge_graph_remove_op(g, first, 1, &err);
	}
	size_t n = ge_graph_num_ops(g);
	reload(g, f, n);
	if (f != GE_FMT_GRAPHDEF)
		reload(g, GE_FMT_GRAPHDEF, n);
	ge_graph_free(g);
	return 0;
}
