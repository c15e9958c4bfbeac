/*
 * meta_carry.c: what a whole-graph copy or import carries of the source's
 * MetaGraphDef into the destination, besides the ops and collections:
 * the MetaInfoDef, the SaverDef (its tensor and op names renamed as the
 * copy renamed the ops, so that the checkpoint restores) and the
 * signatures whose tensors all have copies.  graph_editor users did this
 * with export_scoped_meta_graph / import_scoped_meta_graph.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/meta.h"
#include "base/bounds.h"
#include "editor/transform.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saver.pb-c.h"

/* A deep copy of a protobuf-c message. */
static ProtobufCMessage *clone(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = ge_xmalloc(n ? n : 1);
	protobuf_c_message_pack(m, b);
	ProtobufCMessage *c =
		ge_pb_unpack(m->descriptor, n, b);
	free(b);
	return c;
}

/* Replaces *slot (a tensor "x:k" or op "x" / "^x" name of the source)
 * with the copy's name; 0, or -1 when it names nothing that was copied. */
static int rename_slot(ge_tinfo *I, char **slot)
{
	const char *name = *slot;
	if (!name || !*name)
		return 0;
	int caret = name[0] == '^';
	ge_tref t;
	if (!ge_tinfo_transformed_name(I, name + caret, &t) ||
	    t.op == GE_NOOP)
		return -1;
	ge_graph *dst = ge_tinfo_dst_graph(I);
	ge_buf b = GE_BUF_INIT;
	if (caret)
		ge_buf_addc(&b, '^');
	ge_buf_adds(&b, ge_op_name(dst, t.op));
	if (t.index != GE_CONTROL && strchr(name, ':'))
		ge_buf_printf(&b, ":%d", (int)t.index);
	char *s = (char *)ge_buf_steal(&b, NULL);
	if (*slot != protobuf_c_empty_string)
		free(*slot);
	*slot = s;
	return 0;
}

static int rename_info(ge_tinfo *I, Tensorflow__TensorInfo *t)
{
	if (!t)
		return 0;
	switch (t->encoding_case) {
	case TENSORFLOW__TENSOR_INFO__ENCODING_NAME:
		return rename_slot(I, &t->name);
	case TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE:
		return rename_slot(I, &t->coo_sparse->values_tensor_name) |
		       rename_slot(I, &t->coo_sparse->indices_tensor_name) |
		       rename_slot(I, &t->coo_sparse->dense_shape_tensor_name);
	case TENSORFLOW__TENSOR_INFO__ENCODING_COMPOSITE_TENSOR: {
		int rc = 0;
		for (size_t i = 0; i < t->composite_tensor->n_components; i++)
			rc |= rename_info(I, t->composite_tensor->components[i]);
		return rc;
	}
	default:
		return 0;
	}
}

static void carry_saver(ge_tinfo *I, ge_graph *src, ge_graph *dst)
{
	Tensorflow__SaverDef *d = ge_saver_def(src);
	if (!d || ge_saver_def(dst))
		return;
	Tensorflow__SaverDef *c = (Tensorflow__SaverDef *)clone(&d->base);
	if (!c)
		return;
	if (rename_slot(I, &c->filename_tensor_name) ||
	    rename_slot(I, &c->save_tensor_name) ||
	    rename_slot(I, &c->restore_op_name) ||
	    ge_meta_add(dst, GE_META_SAVER, &c->base))
		protobuf_c_message_free_unpacked(&c->base, NULL);
}

static void carry_signatures(ge_tinfo *I, ge_graph *src, ge_graph *dst)
{
	size_t n = ge_signature_count(src);
	for (size_t i = 0; i < n; i++) {
		const char *key = ge_signature_name(src, i);
		Tensorflow__SignatureDef *s = key ? ge_signature_get(src, key)
						  : NULL;
		if (!s || ge_signature_get(dst, key))
			continue;
		Tensorflow__MetaGraphDef__SignatureDefEntry *e =
			ge_xmalloc(sizeof *e);
		tensorflow__meta_graph_def__signature_def_entry__init(e);
		e->key = ge_xstrdup(key);
		e->value = (Tensorflow__SignatureDef *)clone(&s->base);
		int rc = e->value ? 0 : -1;
		for (size_t k = 0; !rc && k < e->value->n_inputs; k++)
			rc = rename_info(I, e->value->inputs[k]->value);
		for (size_t k = 0; !rc && k < e->value->n_outputs; k++)
			rc = rename_info(I, e->value->outputs[k]->value);
		if (rc || ge_meta_add(dst, GE_META_SIGNATURE, &e->base))
			protobuf_c_message_free_unpacked(&e->base, NULL);
	}
}

void ge_meta_carry(ge_tinfo *I)
{
	ge_graph *src = ge_tinfo_graph(I), *dst = ge_tinfo_dst_graph(I);
	const ge_opid *a, *b;
	if (!src || !dst || src == dst || !ge_graph_has_meta(src) ||
	    ge_tinfo_ops(I, &a, &b) != ge_graph_num_ops(src))
		return;
	Tensorflow__MetaGraphDef__MetaInfoDef *mi = ge_meta_info_def(src);
	if (mi && !ge_meta_info_def(dst)) {
		ProtobufCMessage *c = clone(&mi->base);
		if (c && ge_meta_add(dst, GE_META_INFO, c))
			protobuf_c_message_free_unpacked(c, NULL);
	}
	carry_saver(I, src, dst);
	carry_signatures(I, src, dst);
}
