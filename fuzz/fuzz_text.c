/* fuzz_text.c: the text format reader and writer: what parses is written
 * as text, and that text must parse again. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "graph/graph.h"
#include "formats/model.h"

FUZZ_TARGET(text)
{
	static const ge_format fmts[] = {GE_FMT_GRAPHDEF_TEXT, GE_FMT_META_TEXT,
					 GE_FMT_SAVEDMODEL_TEXT, GE_FMT_AUTO};
	fuzz_limits();
	if (len < 1)
		return 0;
	ge_format f = fmts[data[0] % 4];
	ge_graph *g = NULL, *h = NULL;
	ge_error err;
	if (ge_parse(data + 1, len - 1, f, "fuzz.pbtxt", NULL, &g, &err))
		return 0;
	ge_buf out = GE_BUF_INIT;
	ge_format tf = f == GE_FMT_AUTO ? GE_FMT_GRAPHDEF_TEXT : f;
	if (ge_serialize(g, tf, &out, &err) == GE_OK &&
	    ge_parse(out.data, out.len, tf, "again.pbtxt", NULL, &h, &err) !=
		    GE_OK) {
		fprintf(stderr, "written text does not parse: %s\n", err.msg);
		abort();
	}
	ge_graph_free(h);
	ge_buf_free(&out);
	ge_graph_free(g);
	return 0;
}
