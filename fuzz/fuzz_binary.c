/* fuzz_binary.c: binary GraphDef, MetaGraphDef and SavedModel messages;
 * the first byte picks the format (the rest is sniffed when it is 0), and
 * what loads is validated and written back. */
#include <stdlib.h>

#include "fuzz.h"
#include "graph.h"
#include "meta.h"
#include "model.h"

FUZZ_TARGET(binary)
{
	static const ge_format fmts[] = {GE_FMT_AUTO, GE_FMT_GRAPHDEF,
					 GE_FMT_META, GE_FMT_SAVEDMODEL};
	fuzz_limits();
	if (len < 1)
		return 0;
	ge_format f = fmts[data[0] % 4];
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse(data + 1, len - 1, f, "fuzz.pb", NULL, &g, &err) == GE_OK) {
		ge_buf rep = GE_BUF_INIT, out = GE_BUF_INIT;
		ge_graph_validate(g, &rep);
		ge_serialize(g, GE_FMT_AUTO, &out, &err);
		for (size_t i = 0; i < ge_graph_capacity(g); i++)
			if (ge_op_alive(g, (ge_opid)i))
				for (size_t k = 0; k < ge_op_num_attrs(g, (ge_opid)i);
				     k++)
					ge_op_attr(g, (ge_opid)i,
						   ge_op_attr_name(g, (ge_opid)i, k),
						   NULL);
		for (size_t i = 0; i < ge_signature_count(g); i++)
			ge_signature_get(g, ge_signature_name(g, i));
		for (size_t i = 0; i < ge_collection_count(g); i++)
			ge_collection_get(g, ge_collection_name(g, i));
		ge_buf_free(&rep);
		ge_buf_free(&out);
		ge_graph_free(g);
	}
	return 0;
}
