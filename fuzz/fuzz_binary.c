/* fuzz_binary.c: binary GraphDef, MetaGraphDef and SavedModel messages;
 * the first byte picks the format (the rest is sniffed when it is 0), and
 * what loads is validated and written back.  The bytes are also walked
 * by lib/base/wire.h, whose answers must stay inside them and agree. */
#include <stdlib.h>

#include "fuzz.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "base/wire.h"

/* The wire walk, the finders and the attr walk over any bytes: every
 * field lies within them, a walk ends at the end or bad, and the
 * finders find what the walk finds. */
static void wire_walk(const uint8_t *p, size_t n)
{
	ge_wire w = ge_wire_of(p, n);
	ge_wire_field f;
	const uint8_t *first2 = NULL;
	while (ge_wire_next(&w, &f)) {
		if (f.start < p || f.data + f.len > p + n || w.p <= f.start ||
		    !f.num || f.num > GE_WIRE_MAX_FIELD)
			abort();
		if (!first2 && ge_wire_is_len(&f, 2))
			first2 = f.data;
	}
	if (w.p < p || w.p > p + n || (!w.bad && w.p != p + n))
		abort();
	const uint8_t *body;
	size_t len;
	if (first2 && (ge_wire_find_len(p, p + n, 2, &body, &len) ||
		       body != first2))
		abort();
	if (ge_wire_valid(p, p + n) != !w.bad)
		abort();
	const uint8_t *q = p, *v;
	const char *key;
	size_t kl, vl;
	while (ge_wire_attr_next(&q, p + n, &key, &kl, &v, &vl))
		if ((kl && ((const uint8_t *)key < p ||
			    (const uint8_t *)key + kl > p + n)) ||
		    (vl && (v < p || v + vl > p + n)) || q > p + n)
			abort();
	char nm[64];
	ge_wire_peek_str(p, p + n, 1, nm, sizeof nm);
}

FUZZ_TARGET(binary)
{
	static const ge_format fmts[] = {GE_FMT_AUTO, GE_FMT_GRAPHDEF,
					 GE_FMT_META, GE_FMT_SAVEDMODEL};
	fuzz_limits();
	if (len < 1)
		return 0;
	wire_walk(data + 1, len - 1);
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
