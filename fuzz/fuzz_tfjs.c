/* fuzz_tfjs.c: the TensorFlow.js model.json reader (JSON, the node
 * mapping; without weight files, as for bytes with no file behind them). */
#include "fuzz.h"
#include "graph/graph.h"
#include "base/jsonpb.h"
#include "formats/model.h"

FUZZ_TARGET(tfjs)
{
	fuzz_limits();
	ge_graph *g = NULL;
	ge_error err;
	if (ge_tfjs_parse(data, len, "<fuzz>", &g, &err) == GE_OK) {
		ge_buf out = GE_BUF_INIT;
		ge_serialize(g, GE_FMT_GRAPHDEF_TEXT, &out, &err);
		ge_buf_free(&out);
		ge_graph_free(g);
	}
	return 0;
}
