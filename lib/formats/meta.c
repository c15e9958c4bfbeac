/*
 * meta.c: what a MetaGraphDef carries besides the graph (see meta.h):
 * collections, signatures and the saver, decoded on first use from the
 * segments model.c keeps, and kept consistent with renamed and removed
 * ops.
 */
#include "graph/graph_impl.h"
#include "base/bounds.h"
#include "formats/meta.h"
#include "formats/meta_impl.h"
#include "base/textpb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/saved_object_graph.pb-c.h"
#include "tensorflow/core/protobuf/saver.pb-c.h"
#include "tensorflow/core/protobuf/struct.pb-c.h"
#include "tensorflow/core/protobuf/trackable_object_graph.pb-c.h"

void ge_meta_register_types(void)
{
	static const ProtobufCMessageDescriptor *const types[] = {
		&tensorflow__meta_graph_def__descriptor,
		&tensorflow__graph_def__descriptor,
		&tensorflow__saver_def__descriptor,
		&tensorflow__variable_def__descriptor,
		&tensorflow__asset_file_def__descriptor,
		&tensorflow__tensor_info__descriptor,
		&tensorflow__signature_def__descriptor,
		&tensorflow__collection_def__descriptor,
		&tensorflow__saved_object_graph__descriptor,
		&tensorflow__trackable_object_graph__descriptor,
		&tensorflow__structured_value__descriptor,
		&tensorflow__type_spec_proto__descriptor,
		&tensorflow__op_list__descriptor,
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ge_textpb_register(types[i]);
}

int ge_graph_has_meta(const ge_graph *g)
{
	return g->meta != NULL;
}

static ge_meta *meta_of(ge_graph *g)
{
	if (!g->meta) {
		g->meta = ge_xcalloc(1, sizeof *g->meta);
		g->meta->buf = ge_xmalloc(1);
		ge_graph_add_hooks(g, &ge_meta_hooks);
	}
	return g->meta;
}

/* Decodes a map-entry segment on first use. */
static ProtobufCMessage *seg_msg(seg *s, const ProtobufCMessageDescriptor *d)
{
	if (!s->msg && s->body)
		s->msg = ge_pb_unpack(d, s->body_len, s->body);
	return s->msg;
}

static seg *seg_append(ge_meta *m, uint32_t field, ProtobufCMessage *msg)
{
	m->mg = ge_xrealloc(m->mg, (m->n_mg + 1) * sizeof *m->mg);
	seg *s = &m->mg[m->n_mg++];
	memset(s, 0, sizeof *s);
	s->field = field;
	s->msg = msg;
	s->dirty = 1;
	return s;
}

/* The i-th segment with a given field number, or NULL. */
static seg *nth_seg(const ge_graph *g, uint32_t field, size_t i)
{
	if (!g->meta)
		return NULL;
	for (size_t k = 0; k < g->meta->n_mg; k++)
		if (g->meta->mg[k].field == field && i-- == 0)
			return &g->meta->mg[k];
	return NULL;
}

static size_t count_segs(const ge_graph *g, uint32_t field)
{
	size_t n = 0;
	if (g->meta)
		for (size_t k = 0; k < g->meta->n_mg; k++)
			n += g->meta->mg[k].field == field;
	return n;
}

static Tensorflow__MetaGraphDef__CollectionDefEntry *coll_entry(seg *s)
{
	return (Tensorflow__MetaGraphDef__CollectionDefEntry *)seg_msg(
		s, &tensorflow__meta_graph_def__collection_def_entry__descriptor);
}

static Tensorflow__MetaGraphDef__SignatureDefEntry *sig_entry(seg *s)
{
	return (Tensorflow__MetaGraphDef__SignatureDefEntry *)seg_msg(
		s, &tensorflow__meta_graph_def__signature_def_entry__descriptor);
}

/* The key of a collection_def or signature_def map-entry segment: both
 * entry messages hold it as field 1, found through the descriptor. */
static const char *entry_key(seg *s)
{
	const ProtobufCMessageDescriptor *d =
		s->field == MG_COLLECTION
			? &tensorflow__meta_graph_def__collection_def_entry__descriptor
			: &tensorflow__meta_graph_def__signature_def_entry__descriptor;
	ProtobufCMessage *m = seg_msg(s, d);
	if (!m)
		return NULL;
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(d, 1);
	return *(char **)((char *)m + f->offset);
}

/* Every collection_def and signature_def entry decodes, so that a name
 * looked up later is never missing: checked once at load, the entry
 * named by its position and the key before it. */
int ge_meta_check_entries(ge_meta *m, const char *name, ge_error *err)
{
	const char *prev = NULL;
	size_t nth[2] = {0, 0};
	for (size_t i = 0; i < m->n_mg; i++) {
		seg *s = &m->mg[i];
		if (s->field != MG_COLLECTION && s->field != MG_SIGNATURE)
			continue;
		int sig = s->field == MG_SIGNATURE;
		size_t k = nth[sig]++;
		const char *key = s->body ? entry_key(s) : NULL;
		if (!key)
			return ge_err(err, GE_EFORMAT,
				      "%s: %s entry #%zu%s%s%s is truncated or "
				      "corrupt",
				      name,
				      sig ? "signature_def" : "collection_def", k,
				      prev ? " (after '" : "", prev ? prev : "",
				      prev ? "')" : "");
		prev = key;
	}
	return GE_OK;
}

/* The map-entry segment of that field whose key is name, or NULL: one
 * pass over the segments. */
static seg *find_entry(ge_graph *g, uint32_t field, const char *name)
{
	if (!g->meta)
		return NULL;
	for (size_t k = 0; k < g->meta->n_mg; k++) {
		seg *s = &g->meta->mg[k];
		const char *key;
		if (s->field == field && (key = entry_key(s)) &&
		    !strcmp(key, name))
			return s;
	}
	return NULL;
}

size_t ge_collection_count(const ge_graph *g)
{
	return count_segs(g, MG_COLLECTION);
}

const char *ge_collection_name(const ge_graph *g, size_t i)
{
	seg *s = nth_seg(g, MG_COLLECTION, i);
	return s ? entry_key(s) : NULL;
}

static seg *find_coll(ge_graph *g, const char *name)
{
	return find_entry(g, MG_COLLECTION, name);
}

Tensorflow__CollectionDef *ge_collection_get(ge_graph *g, const char *name)
{
	seg *s = find_coll(g, name);
	return s ? coll_entry(s)->value : NULL;
}

void ge_collection_touch(ge_graph *g, const char *name)
{
	seg *s = find_coll(g, name);
	if (s)
		s->dirty = 1;
}

static void coll_fill(Tensorflow__CollectionDef *c,
		      Tensorflow__CollectionDef__KindCase k)
{
	c->kind_case = k;
	if (k == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST) {
		c->node_list = ge_xmalloc(sizeof *c->node_list);
		tensorflow__collection_def__node_list__init(c->node_list);
	} else {
		c->bytes_list = ge_xmalloc(sizeof *c->bytes_list);
		tensorflow__collection_def__bytes_list__init(c->bytes_list);
	}
}

/* The collection `name` of kind k, made (empty) if absent; NULL if it
 * exists with another kind.  Marks it changed. */
static Tensorflow__CollectionDef *coll_make(ge_graph *g, const char *name,
					    Tensorflow__CollectionDef__KindCase k,
					    ge_error *err)
{
	seg *s = find_coll(g, name);
	if (!s) {
		Tensorflow__MetaGraphDef__CollectionDefEntry *e =
			ge_xmalloc(sizeof *e);
		tensorflow__meta_graph_def__collection_def_entry__init(e);
		e->key = ge_xstrdup(name);
		s = seg_append(meta_of(g), MG_COLLECTION, &e->base);
	}
	Tensorflow__MetaGraphDef__CollectionDefEntry *e = coll_entry(s);
	if (!e->value) {
		e->value = ge_xmalloc(sizeof *e->value);
		tensorflow__collection_def__init(e->value);
	}
	Tensorflow__CollectionDef *c = e->value;
	if (c->kind_case == TENSORFLOW__COLLECTION_DEF__KIND__NOT_SET)
		coll_fill(c, k);
	if (c->kind_case != k) {
		ge_err(err, GE_EINVAL,
		       "collection '%s' holds another kind of value", name);
		return NULL;
	}
	s->dirty = 1;
	return c;
}

int ge_collection_add_node(ge_graph *g, const char *name, const char *value,
			   ge_error *err)
{
	Tensorflow__CollectionDef *c = coll_make(
		g, name, TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST, err);
	if (!c)
		return GE_EINVAL;
	Tensorflow__CollectionDef__NodeList *l = c->node_list;
	l->value = ge_xrealloc(l->value, (l->n_value + 1) * sizeof *l->value);
	l->value[l->n_value++] = ge_xstrdup(value);
	return GE_OK;
}

int ge_collection_add_bytes(ge_graph *g, const char *name, const void *p,
			    size_t n, ge_error *err)
{
	Tensorflow__CollectionDef *c = coll_make(
		g, name, TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST, err);
	if (!c)
		return GE_EINVAL;
	Tensorflow__CollectionDef__BytesList *l = c->bytes_list;
	l->value = ge_xrealloc(l->value, (l->n_value + 1) * sizeof *l->value);
	uint8_t *d = ge_xmalloc(n ? n : 1);
	memcpy(d, p, n);
	l->value[l->n_value++] = (ProtobufCBinaryData){n, d};
	return GE_OK;
}

int ge_collection_remove(ge_graph *g, const char *name)
{
	seg *s = find_coll(g, name);
	if (!s)
		return GE_ENOTFOUND;
	ge_meta *m = g->meta;
	if (s->msg)
		protobuf_c_message_free_unpacked(s->msg, NULL);
	size_t i = (size_t)(s - m->mg);
	memmove(s, s + 1, (m->n_mg - i - 1) * sizeof *s);
	m->n_mg--;
	return GE_OK;
}

int ge_collection_holds_variables(const char *name)
{
	static const char *const names[] = {
		"variables", "trainable_variables", "local_variables",
		"model_variables", "moving_average_variables",
		"metric_variables", "concatenated_variables",
		"trainable_resource_variables", "global_step",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

size_t ge_signature_count(const ge_graph *g)
{
	return count_segs(g, MG_SIGNATURE);
}

const char *ge_signature_name(const ge_graph *g, size_t i)
{
	seg *s = nth_seg(g, MG_SIGNATURE, i);
	return s ? entry_key(s) : NULL;
}

static seg *find_sig(ge_graph *g, const char *name)
{
	return find_entry(g, MG_SIGNATURE, name);
}

Tensorflow__SignatureDef *ge_signature_get(ge_graph *g, const char *name)
{
	seg *s = find_sig(g, name);
	return s ? sig_entry(s)->value : NULL;
}

void ge_signature_touch(ge_graph *g, const char *name)
{
	seg *s = find_sig(g, name);
	if (s)
		s->dirty = 1;
}

int ge_signature_remove(ge_graph *g, const char *name)
{
	seg *s = find_sig(g, name);
	if (!s)
		return GE_ENOTFOUND;
	ge_meta *m = g->meta;
	if (s->msg)
		protobuf_c_message_free_unpacked(s->msg, NULL);
	size_t i = (size_t)(s - m->mg);
	memmove(s, s + 1, (m->n_mg - i - 1) * sizeof *s);
	m->n_mg--;
	return GE_OK;
}

int ge_signature_rename(ge_graph *g, const char *from, const char *to)
{
	seg *s = find_sig(g, from);
	if (!s)
		return GE_ENOTFOUND;
	if (find_sig(g, to))
		return GE_EINVAL;
	Tensorflow__MetaGraphDef__SignatureDefEntry *e = sig_entry(s);
	free(e->key);
	e->key = ge_xstrdup(to);
	s->dirty = 1;
	return GE_OK;
}

Tensorflow__SaverDef *ge_saver_def(ge_graph *g)
{
	seg *s = nth_seg(g, MG_SAVER, 0);
	return s ? (Tensorflow__SaverDef *)seg_msg(
			   s, &tensorflow__saver_def__descriptor)
		 : NULL;
}

void ge_saver_def_touch(ge_graph *g)
{
	seg *s = nth_seg(g, MG_SAVER, 0);
	if (s)
		s->dirty = 1;
}

Tensorflow__MetaGraphDef__MetaInfoDef *ge_meta_info_def(ge_graph *g)
{
	seg *s = nth_seg(g, MG_INFO, 0);
	return s ? (Tensorflow__MetaGraphDef__MetaInfoDef *)seg_msg(
			   s, &tensorflow__meta_graph_def__meta_info_def__descriptor)
		 : NULL;
}

int ge_meta_add(ge_graph *g, int field, ProtobufCMessage *msg)
{
	if ((field == MG_INFO || field == MG_SAVER) && nth_seg(g, field, 0))
		return -1;
	seg_append(meta_of(g), (uint32_t)field, msg);
	return 0;
}

/* The SavedObjectGraph (MetaGraphDef field 7), decoded on first use;
 * callers that change it call ge_object_graph_touch. */
enum { MG_OBJECT_GRAPH = 7 };

Tensorflow__SavedObjectGraph *ge_object_graph(ge_graph *g)
{
	seg *s = nth_seg(g, MG_OBJECT_GRAPH, 0);
	return s ? (Tensorflow__SavedObjectGraph *)seg_msg(
			   s, &tensorflow__saved_object_graph__descriptor)
		 : NULL;
}

void ge_object_graph_touch(ge_graph *g)
{
	seg *s = nth_seg(g, MG_OBJECT_GRAPH, 0);
	if (s)
		s->dirty = 1;
}

/* The SavedObjectGraph: concrete function keys, SavedFunction lists,
 * bare concrete functions and captured tensors naming `from` follow a
 * rename (to) or a removal (to == NULL). */
void ge_meta_on_func_rename(ge_graph *root, const char *from,
			    const char *to)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	if (!og)
		return;
	int changed = 0;
	for (size_t i = 0; i < og->n_concrete_functions; i++) {
		Tensorflow__SavedObjectGraph__ConcreteFunctionsEntry *e =
			og->concrete_functions[i];
		if (strcmp(e->key, from))
			continue;
		changed = 1;
		if (to) {
			free(e->key);
			e->key = ge_xstrdup(to);
			continue;
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		memmove(og->concrete_functions + i, og->concrete_functions + i + 1,
			(og->n_concrete_functions - i - 1) * sizeof *og->concrete_functions);
		og->n_concrete_functions--;
		i--;
	}
	for (size_t i = 0; i < og->n_nodes; i++) {
		Tensorflow__SavedObject *o = og->nodes[i];
		char **slot = NULL;
		if (o->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_FUNCTION &&
		    o->function) {
			Tensorflow__SavedFunction *sf = o->function;
			for (size_t k = 0; k < sf->n_concrete_functions; k++) {
				if (strcmp(sf->concrete_functions[k], from))
					continue;
				changed = 1;
				free(sf->concrete_functions[k]);
				if (to) {
					sf->concrete_functions[k] = ge_xstrdup(to);
					continue;
				}
				memmove(sf->concrete_functions + k,
					sf->concrete_functions + k + 1,
					(sf->n_concrete_functions - k - 1) *
						sizeof(char *));
				sf->n_concrete_functions--;
				k--;
			}
		} else if (o->kind_case ==
				   TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION &&
			   o->bare_concrete_function) {
			slot = &o->bare_concrete_function->concrete_function_name;
		} else if (o->kind_case ==
				   TENSORFLOW__SAVED_OBJECT__KIND_CAPTURED_TENSOR &&
			   o->captured_tensor) {
			slot = &o->captured_tensor->concrete_function;
		}
		if (!slot || !*slot || strcmp(*slot, from))
			continue;
		changed = 1;
		if (to) {
			free(*slot);
			*slot = ge_xstrdup(to);
			continue;
		}
		/* the object stood for the function alone: it becomes a
		 * generic trackable object, as TF2 saves one without state */
		if (o->kind_case ==
		    TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION)
			protobuf_c_message_free_unpacked(
				&o->bare_concrete_function->base, NULL);
		else
			protobuf_c_message_free_unpacked(
				&o->captured_tensor->base, NULL);
		Tensorflow__SavedUserObject *u = ge_xmalloc(sizeof *u);
		tensorflow__saved_user_object__init(u);
		u->identifier = ge_xstrdup("_generic_user_object");
		o->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_USER_OBJECT;
		o->user_object = u;
	}
	if (changed)
		ge_object_graph_touch(root);
}

/* Whether an object of the SavedObjectGraph is the function `name` (a
 * bare concrete function or a captured tensor of it), with the reason. */
int ge_meta_func_pinned(ge_graph *root, const char *name, char *why,
			size_t cap)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	for (size_t i = 0; og && i < og->n_nodes; i++) {
		const Tensorflow__SavedObject *o = og->nodes[i];
		const char *n = NULL;
		if (o->kind_case ==
			    TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION &&
		    o->bare_concrete_function)
			n = o->bare_concrete_function->concrete_function_name;
		else if (o->kind_case ==
				 TENSORFLOW__SAVED_OBJECT__KIND_CAPTURED_TENSOR &&
			 o->captured_tensor)
			n = o->captured_tensor->concrete_function;
		if (n && !strcmp(n, name)) {
			snprintf(why, cap, "object %zu of the SavedObjectGraph "
				 "stands for it (force makes it a plain object)",
				 i);
			return 1;
		}
	}
	return 0;
}

/* The concrete functions of the SavedObjectGraph: the entry points TF2
 * loads. */
void ge_meta_func_roots(ge_graph *root, void (*add)(void *ud, const char *name),
			void *ud)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	for (size_t i = 0; og && i < og->n_concrete_functions; i++)
		add(ud, og->concrete_functions[i]->key);
}

/* ---- keeping names consistent ---- */

/* If `ref` names op `from` ("from", "from:3", "^from"), rewrites it to
 * name `to` and returns the new string (malloc'd); else NULL. */
static char *rename_ref(const char *ref, const char *from, const char *to)
{
	const char *r = ref;
	int caret = *r == '^';
	r += caret;
	size_t n = strlen(from);
	if (strncmp(r, from, n) || (r[n] != 0 && r[n] != ':'))
		return NULL;
	ge_buf b = GE_BUF_INIT;
	if (caret)
		ge_buf_addc(&b, '^');
	ge_buf_adds(&b, to);
	ge_buf_adds(&b, r + n);
	return (char *)ge_buf_steal(&b, NULL);
}

static int rename_str(char **slot, const char *from, const char *to)
{
	if (!*slot)
		return 0;
	char *s = rename_ref(*slot, from, to);
	if (!s)
		return 0;
	if (*slot != protobuf_c_empty_string)
		free(*slot);
	*slot = s;
	return 1;
}

/* Renames inside a serialized VariableDef; returns 1 and replaces *v if
 * anything changed. */
static int rename_vardef(ProtobufCBinaryData *v, const char *from,
			 const char *to)
{
	Tensorflow__VariableDef *d =
		(Tensorflow__VariableDef *)ge_pb_unpack(
		&tensorflow__variable_def__descriptor, v->len, v->data);
	if (!d)
		return 0;
	int ch = rename_str(&d->variable_name, from, to) |
		 rename_str(&d->initializer_name, from, to) |
		 rename_str(&d->snapshot_name, from, to) |
		 rename_str(&d->initial_value_name, from, to);
	if (ch) {
		size_t sz = tensorflow__variable_def__get_packed_size(d);
		uint8_t *b = ge_xmalloc(sz ? sz : 1);
		tensorflow__variable_def__pack(d, b);
		free(v->data);
		v->data = b;
		v->len = sz;
	}
	tensorflow__variable_def__free_unpacked(d, NULL);
	return ch;
}

static int rename_tensor_info(Tensorflow__TensorInfo *t, const char *from,
			      const char *to)
{
	if (!t)
		return 0;
	int ch = 0;
	switch (t->encoding_case) {
	case TENSORFLOW__TENSOR_INFO__ENCODING_NAME:
		ch |= rename_str(&t->name, from, to);
		break;
	case TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE:
		ch |= rename_str(&t->coo_sparse->values_tensor_name, from, to);
		ch |= rename_str(&t->coo_sparse->indices_tensor_name, from, to);
		ch |= rename_str(&t->coo_sparse->dense_shape_tensor_name, from,
				 to);
		break;
	case TENSORFLOW__TENSOR_INFO__ENCODING_COMPOSITE_TENSOR:
		for (size_t i = 0; i < t->composite_tensor->n_components; i++)
			ch |= rename_tensor_info(
				t->composite_tensor->components[i], from, to);
		break;
	default:
		break;
	}
	return ch;
}

/* A cheap test before decoding: does the segment's payload contain the
 * name at all? */
static int seg_mentions(const seg *s, const char *name)
{
	if (s->msg)
		return 1;
	return s->body && memmem(s->body, s->body_len, name, strlen(name));
}

void ge_meta_on_rename(ge_graph *g, const char *from, const char *to)
{
	ge_meta *m = g->meta;
	for (size_t k = 0; k < m->n_mg; k++) {
		seg *s = &m->mg[k];
		if (!seg_mentions(s, from))
			continue;
		if (s->field == MG_COLLECTION) {
			Tensorflow__MetaGraphDef__CollectionDefEntry *e =
				coll_entry(s);
			if (!e || !e->value)
				continue;
			Tensorflow__CollectionDef *c = e->value;
			if (c->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
				for (size_t i = 0; i < c->node_list->n_value; i++)
					s->dirty |= rename_str(
						&c->node_list->value[i], from, to);
			else if (c->kind_case ==
					 TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST &&
				 ge_collection_holds_variables(e->key))
				for (size_t i = 0; i < c->bytes_list->n_value; i++)
					s->dirty |= rename_vardef(
						&c->bytes_list->value[i], from, to);
		} else if (s->field == MG_SIGNATURE) {
			Tensorflow__MetaGraphDef__SignatureDefEntry *e =
				sig_entry(s);
			if (!e || !e->value)
				continue;
			for (size_t i = 0; i < e->value->n_inputs; i++)
				s->dirty |= rename_tensor_info(
					e->value->inputs[i]->value, from, to);
			for (size_t i = 0; i < e->value->n_outputs; i++)
				s->dirty |= rename_tensor_info(
					e->value->outputs[i]->value, from, to);
		} else if (s->field == MG_SAVER) {
			Tensorflow__SaverDef *d = (Tensorflow__SaverDef *)seg_msg(
				s, &tensorflow__saver_def__descriptor);
			if (!d)
				continue;
			s->dirty |= rename_str(&d->filename_tensor_name, from, to) |
				    rename_str(&d->save_tensor_name, from, to) |
				    rename_str(&d->restore_op_name, from, to);
		}
	}
}

void ge_meta_on_remove(ge_graph *g, const char *name)
{
	ge_meta *m = g->meta;
	for (size_t k = 0; k < m->n_mg; k++) {
		seg *s = &m->mg[k];
		if (s->field != MG_COLLECTION || !seg_mentions(s, name))
			continue;
		Tensorflow__MetaGraphDef__CollectionDefEntry *e = coll_entry(s);
		if (!e || !e->value)
			continue;
		Tensorflow__CollectionDef *c = e->value;
		if (c->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST) {
			Tensorflow__CollectionDef__NodeList *l = c->node_list;
			size_t w = 0;
			for (size_t i = 0; i < l->n_value; i++) {
				char *t = rename_ref(l->value[i], name, name);
				if (t) {
					free(t);
					free(l->value[i]);
					s->dirty = 1;
					continue;
				}
				l->value[w++] = l->value[i];
			}
			l->n_value = w;
		} else if (c->kind_case ==
				   TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST &&
			   ge_collection_holds_variables(e->key)) {
			Tensorflow__CollectionDef__BytesList *l = c->bytes_list;
			size_t w = 0;
			for (size_t i = 0; i < l->n_value; i++) {
				Tensorflow__VariableDef *d =
					(Tensorflow__VariableDef *)ge_pb_unpack(
		&tensorflow__variable_def__descriptor, l->value[i].len,
						l->value[i].data);
				char *t = d ? rename_ref(d->variable_name, name,
							 name)
					    : NULL;
				if (d)
					tensorflow__variable_def__free_unpacked(
						d, NULL);
				if (t) {
					free(t);
					free(l->value[i].data);
					s->dirty = 1;
					continue;
				}
				l->value[w++] = l->value[i];
			}
			l->n_value = w;
		}
	}
}
