/*
 * shapes: shape and dtype inference on hand-built graphs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "model.h"
#include "shapes.h"
#include "tap.h"
#include "testutil.h"

static const char *shape_of(ge_graph *g, const char *tensor)
{
	static char out[8][256];
	static int turn;
	char *o = out[turn++ & 7];
	ge_tref t;
	if (ge_graph_find_tensor(g, tensor, &t) != GE_OK)
		return "<no such tensor>";
	int64_t d[GE_SHAPE_MAXRANK];
	int r = ge_shapes_get(g, t, d, GE_SHAPE_MAXRANK);
	ge_buf b = GE_BUF_INIT;
	ge_shape_format(&b, r, d);
	snprintf(o, 256, "%s", (char *)b.data);
	ge_buf_free(&b);
	return o;
}

int main(void)
{
	tap_plan(1);
	ge_graph *g = parse("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
			    "attr { key: 'shape' value { shape { dim { size: 2 } dim { size: 3 } } } } }\n");
	is_string("[2,3]", shape_of(g, "x"), "placeholder");
	ge_graph_free(g);
	return tap_done();
}
