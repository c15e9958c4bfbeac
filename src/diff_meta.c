/*
 * diff_meta.c: what `gerewrite diff` says of a MetaGraphDef's collections
 * and signatures (lib/formats/meta.h): each only in A (-), only in B (+), or in
 * both but different (~: a node_list's members removed and added; any
 * other kind as "values"; a signature's method and each input or output
 * key whose tensor, dtype or shape changed, or that is on one side only).
 * And the checkpoints next to the models (lib/variables/checkpoint.h finds them):
 * entries only in one, and for an entry in both whose bytes differ its
 * dtype and shape on both sides and the largest absolute difference.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle.h"
#include "variables/checkpoint.h"
#include "cli.h"
#include "diff_page.h"
#include "formats/meta.h"
#include "base/tensordiff.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* Whether two messages have the same encoding. */
static int same_message(const ProtobufCMessage *x, const ProtobufCMessage *y)
{
	size_t nx = protobuf_c_message_get_packed_size(x);
	size_t ny = protobuf_c_message_get_packed_size(y);
	if (nx != ny)
		return 0;
	uint8_t *px = ge_xmalloc(nx + 1), *py = ge_xmalloc(ny + 1);
	protobuf_c_message_pack(x, px);
	protobuf_c_message_pack(y, py);
	int same = !memcmp(px, py, nx);
	free(px);
	free(py);
	return same;
}

static int in_list(const Tensorflow__CollectionDef__NodeList *l,
		   const char *v)
{
	for (size_t i = 0; l && i < l->n_value; i++)
		if (!strcmp(l->value[i], v))
			return 1;
	return 0;
}

/* " -a, +b" for the members of x not in y (-) and of y not in x (+), at
 * most 8 named; into j's "removed" and "added". */
static void node_lists(ge_buf *b, json_t *j,
		       const Tensorflow__CollectionDef__NodeList *x,
		       const Tensorflow__CollectionDef__NodeList *y)
{
	json_t *rm = json_array(), *add = json_array();
	size_t k = 0;
	for (size_t i = 0; x && i < x->n_value; i++)
		if (!in_list(y, x->value[i])) {
			if (k++ < 8)
				ge_buf_printf(b, "%s-%s", k > 1 ? ", " : " ",
					      x->value[i]);
			json_array_append_new(rm, json_string(x->value[i]));
		}
	for (size_t i = 0; y && i < y->n_value; i++)
		if (!in_list(x, y->value[i])) {
			if (k++ < 8)
				ge_buf_printf(b, "%s+%s", k > 1 ? ", " : " ",
					      y->value[i]);
			json_array_append_new(add, json_string(y->value[i]));
		}
	if (k > 8)
		ge_buf_printf(b, ", ... (%zu)", k);
	if (!k)
		ge_buf_adds(b, " order");
	json_object_set_new(j, "removed", rm);
	json_object_set_new(j, "added", add);
}

static json_t *entry(json_t *arr, const char *kind, const char *name)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "name", json_string(name));
	if (arr)
		json_array_append_new(arr, o);
	return o;
}

static void say(int print, ge_buf *line)
{
	if (print) {
		ge_buf_addc(line, 0);
		printf("%s\n", (char *)line->data);
	}
	line->len = 0;
}

static size_t diff_collections(ge_graph *ga, ge_graph *gb, int print,
			       json_t *arr)
{
	size_t n = 0;
	ge_buf line = GE_BUF_INIT;
	for (size_t i = 0; i < ge_collection_count(ga); i++) {
		const char *name = ge_collection_name(ga, i);
		Tensorflow__CollectionDef *x = ge_collection_get(ga, name);
		Tensorflow__CollectionDef *y = ge_collection_get(gb, name);
		if (!y) {
			json_t *o = entry(arr, "removed", name);
			if (!arr)
				json_decref(o);
			ge_buf_printf(&line, "- collection %s", name);
			say(print, &line);
			n++;
			continue;
		}
		if (!x || same_message(&x->base, &y->base))
			continue;
		json_t *o = entry(arr, "changed", name);
		ge_buf_printf(&line, "~ collection %s:", name);
		if (x->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST &&
		    y->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
			node_lists(&line, o, x->node_list, y->node_list);
		else
			ge_buf_adds(&line, " values");
		if (!arr)
			json_decref(o);
		say(print, &line);
		n++;
	}
	for (size_t i = 0; i < ge_collection_count(gb); i++) {
		const char *name = ge_collection_name(gb, i);
		if (ge_collection_get(ga, name))
			continue;
		json_t *o = entry(arr, "added", name);
		if (!arr)
			json_decref(o);
		ge_buf_printf(&line, "+ collection %s", name);
		say(print, &line);
		n++;
	}
	ge_buf_free(&line);
	return n;
}

/* The inputs (or outputs) of a signature as key -> TensorInfo. */
struct ports {
	size_t n;
	const char **key;
	const Tensorflow__TensorInfo **info;
};

static void ports_of(const Tensorflow__SignatureDef *s, int outputs,
		     struct ports *p)
{
	p->n = outputs ? s->n_outputs : s->n_inputs;
	p->key = ge_xcalloc(p->n + 1, sizeof *p->key);
	p->info = ge_xcalloc(p->n + 1, sizeof *p->info);
	for (size_t i = 0; i < p->n; i++) {
		p->key[i] = outputs ? s->outputs[i]->key : s->inputs[i]->key;
		p->info[i] = outputs ? s->outputs[i]->value : s->inputs[i]->value;
	}
}

static const Tensorflow__TensorInfo *port(const struct ports *p,
					  const char *key, int *found)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->key[i], key)) {
			*found = 1;
			return p->info[i];
		}
	*found = 0;
	return NULL;
}

static void info_text(ge_buf *b, const Tensorflow__TensorInfo *t)
{
	const char *dt = t ? ge_dtype_name((int)t->dtype) : NULL;
	if (t && t->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
		ge_buf_adds(b, t->name ? t->name : "");
	else
		ge_buf_adds(b, t ? "(sparse or composite)" : "(none)");
	if (dt)
		ge_buf_printf(b, " %s", dt);
}

/* "; inputs k: a:0 float32 -> b:0 float32" for each key that differs. */
static void diff_ports(ge_buf *b, json_t *changes, const char *what,
		       const struct ports *x, const struct ports *y)
{
	for (int side = 0; side < 2; side++) {
		const struct ports *p = side ? y : x, *q = side ? x : y;
		for (size_t i = 0; i < p->n; i++) {
			int found;
			const Tensorflow__TensorInfo *o = port(q, p->key[i], &found);
			if (side && found)
				continue;
			const Tensorflow__TensorInfo *tx = side ? o : p->info[i];
			const Tensorflow__TensorInfo *ty = side ? p->info[i] : o;
			if (found && tx && ty &&
			    same_message(&tx->base, &ty->base))
				continue;
			ge_buf t = GE_BUF_INIT;
			ge_buf_printf(b, "; %s %s: ", what, p->key[i]);
			info_text(&t, tx);
			ge_buf_adds(&t, " -> ");
			info_text(&t, ty);
			ge_buf_add(b, t.data, t.len);
			json_t *c = json_object();
			json_object_set_new(c, "port", json_string(what));
			json_object_set_new(c, "key", json_string(p->key[i]));
			json_object_set_new(c, "change",
					    json_stringn_nocheck((char *)t.data, t.len));
			json_array_append_new(changes, c);
			ge_buf_free(&t);
		}
	}
}

static void diff_signature(ge_buf *line, json_t *o,
			   const Tensorflow__SignatureDef *x,
			   const Tensorflow__SignatureDef *y)
{
	json_t *changes = json_array();
	const char *mx = x->method_name ? x->method_name : "";
	const char *my = y->method_name ? y->method_name : "";
	if (strcmp(mx, my) != 0)
		ge_buf_printf(line, "; method %s -> %s", mx, my);
	struct ports px, py;
	for (int outputs = 0; outputs < 2; outputs++) {
		ports_of(x, outputs, &px);
		ports_of(y, outputs, &py);
		diff_ports(line, changes, outputs ? "outputs" : "inputs", &px,
			   &py);
		free(px.key);
		free(px.info);
		free(py.key);
		free(py.info);
	}
	json_object_set_new(o, "changes", changes);
}

static size_t diff_signatures(ge_graph *ga, ge_graph *gb, int print,
			      json_t *arr)
{
	size_t n = 0;
	ge_buf line = GE_BUF_INIT;
	for (size_t i = 0; i < ge_signature_count(ga); i++) {
		const char *name = ge_signature_name(ga, i);
		Tensorflow__SignatureDef *x = ge_signature_get(ga, name);
		Tensorflow__SignatureDef *y = ge_signature_get(gb, name);
		json_t *o;
		if (!y) {
			o = entry(arr, "removed", name);
			ge_buf_printf(&line, "- signature %s", name);
		} else if (x && !same_message(&x->base, &y->base)) {
			o = entry(arr, "changed", name);
			ge_buf_printf(&line, "~ signature %s", name);
			size_t at = line.len;
			diff_signature(&line, o, x, y);
			if (line.len > at) /* the first "; " becomes ": " */
				line.data[at] = ':';
			else
				ge_buf_adds(&line, ": defaults");
		} else {
			continue;
		}
		if (!arr)
			json_decref(o);
		say(print, &line);
		n++;
	}
	for (size_t i = 0; i < ge_signature_count(gb); i++) {
		const char *name = ge_signature_name(gb, i);
		if (ge_signature_get(ga, name))
			continue;
		json_t *o = entry(arr, "added", name);
		if (!arr)
			json_decref(o);
		ge_buf_printf(&line, "+ signature %s", name);
		say(print, &line);
		n++;
	}
	ge_buf_free(&line);
	return n;
}

size_t diff_meta(ge_graph *ga, ge_graph *gb, int print, json_t *colls,
		 json_t *sigs)
{
	return diff_collections(ga, gb, print, colls) +
	       diff_signatures(ga, gb, print, sigs);
}

/* ------------------------------------------------------------ checkpoints */

static void entry_type(ge_buf *b, const ge_bundle_entry *e)
{
	const char *dt = ge_dtype_name(e->dtype);
	ge_buf_adds(b, dt ? dt : "?");
	if (e->rank < 0) {
		ge_buf_adds(b, "[*]");
		return;
	}
	ge_buf_addc(b, '[');
	for (int i = 0; i < e->rank; i++)
		ge_buf_printf(b, "%s%lld", i ? "," : "", (long long)e->dims[i]);
	ge_buf_addc(b, ']');
}

static Tensorflow__TensorProto *entry_value(ge_bundle *b,
					    const ge_bundle_entry *e)
{
	ge_buf t = GE_BUF_INIT;
	ge_error err;
	Tensorflow__TensorProto *p = NULL;
	if (ge_bundle_read_tensorproto(b, e, &t, &err) == GE_OK)
		p = tensorflow__tensor_proto__unpack(NULL, t.len, t.data);
	ge_buf_free(&t);
	return p;
}

/* The largest absolute difference of two entries' values, or -1. */
static double entry_diff(ge_bundle *ba, const ge_bundle_entry *x,
			 ge_bundle *bb, const ge_bundle_entry *y)
{
	Tensorflow__TensorProto *p = entry_value(ba, x), *q = entry_value(bb, y);
	double d = -1;
	if (!p || !q || ge_tensor_max_abs_diff(p, q, &d) != 0)
		d = -1;
	if (p)
		tensorflow__tensor_proto__free_unpacked(p, NULL);
	if (q)
		tensorflow__tensor_proto__free_unpacked(q, NULL);
	return d;
}

/* "- checkpoint x (float32[3])", "~ checkpoint x (float32[3] ->
 * float32[3], largest absolute difference 0.5)", "+ ...". */
static void ckpt_line(int print, json_t *arr, const char *kind,
		      const ge_bundle_entry *x, const ge_bundle_entry *y,
		      double d)
{
	ge_buf line = GE_BUF_INIT;
	const ge_bundle_entry *e = x ? x : y;
	json_t *o = entry(NULL, kind, e->name);
	ge_buf_printf(&line, "%c checkpoint %s (", !y ? '-' : !x ? '+' : '~',
		      e->name);
	size_t at = line.len;
	if (x)
		entry_type(&line, x);
	if (x && y)
		ge_buf_adds(&line, " -> ");
	if (y)
		entry_type(&line, y);
	json_object_set_new(o, "type", json_stringn_nocheck(
		(char *)line.data + at, line.len - at));
	if (d >= 0) {
		ge_buf_printf(&line, ", largest absolute difference %.6g", d);
		json_object_set_new(o, "max_abs_diff", json_real(d));
	}
	ge_buf_addc(&line, ')');
	if (arr)
		json_array_append_new(arr, o);
	else
		json_decref(o);
	say(print, &line);
	ge_buf_free(&line);
}

/* The bundle next to a model, or NULL when it has none. */
static ge_bundle *open_ckpt(const char *path)
{
	char *prefix = NULL;
	ge_bundle *b = NULL;
	ge_error err;
	if (ge_checkpoint_prefix(path, &prefix, &err) == GE_OK &&
	    ge_bundle_open(prefix, &b, &err) != GE_OK)
		b = NULL;
	free(prefix);
	return b;
}

/* An entry of a tensor of its own: not the header (empty key), not a
 * slice of a partitioned one (a key holding NULs). */
static int plain_entry(const ge_bundle_entry *e)
{
	return e->name_len && strlen(e->name) == e->name_len;
}

size_t diff_checkpoints(const char *pa, const char *pb, int print,
			json_t *arr)
{
	ge_bundle *ba = open_ckpt(pa), *bb = open_ckpt(pb);
	size_t n = 0;
	if (!ba || !bb) {
		if (ba || bb) {
			if (print)
				printf("%c checkpoint (%s has none)\n",
				       ba ? '-' : '+', ba ? pb : pa);
			if (arr)
				entry(arr, ba ? "removed" : "added", "");
			n = 1;
		}
		goto out;
	}
	for (size_t i = 0; i < ge_bundle_count(ba); i++) {
		const ge_bundle_entry *x = ge_bundle_entry_at(ba, i);
		if (!plain_entry(x))
			continue;
		const ge_bundle_entry *y = ge_bundle_find(bb, x->name);
		if (!y) {
			ckpt_line(print, arr, "removed", x, NULL, -1);
			n++;
			continue;
		}
		int same_type = x->dtype == y->dtype && x->rank == y->rank &&
				(x->rank <= 0 ||
				 !memcmp(x->dims, y->dims,
					 (size_t)x->rank * sizeof *x->dims));
		if (same_type && x->size == y->size && x->crc32c == y->crc32c)
			continue;
		ckpt_line(print, arr, "changed", x, y,
			  same_type ? entry_diff(ba, x, bb, y) : -1);
		n++;
	}
	for (size_t i = 0; i < ge_bundle_count(bb); i++) {
		const ge_bundle_entry *y = ge_bundle_entry_at(bb, i);
		if (plain_entry(y) && !ge_bundle_find(ba, y->name)) {
			ckpt_line(print, arr, "added", NULL, y, -1);
			n++;
		}
	}
out:
	if (ba)
		ge_bundle_close(ba);
	if (bb)
		ge_bundle_close(bb);
	return n;
}
