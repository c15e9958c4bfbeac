/* tf2.c: object graphs of TF2 SavedModels (see tf2.h). */
#include "variables/tf2.h"

#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "formats/meta.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/saved_object_graph.pb-c.h"
#include "tensorflow/core/protobuf/trackable_object_graph.pb-c.h"

#define CKPT_GRAPH_KEY "_CHECKPOINTABLE_OBJECT_GRAPH"
#define VALUE_ATTR "VARIABLE_VALUE"
/* Objects nest at most this deep below the root (Keras models nest a few
 * tens of levels). */
#define TF2_MAX_DEPTH 1000

struct ge_tf2_objects {
	Tensorflow__SavedObjectGraph *sog;      /* owned by the graph */
	Tensorflow__TrackableObjectGraph *tog;  /* owned, or NULL */
	const char *gname;
	size_t n;            /* sog nodes */
	int *ck;             /* saved node -> checkpoint node, or -1 */
	/* the breadth-first tree from the root: each reached node's parent
	 * and local name (paths are made only for the objects a call
	 * captures, so memory stays linear in the object graph) */
	int *parent;         /* -1: the root, or not reached */
	const char **lname;
	uint8_t *reached;
	char **path;         /* saved node -> its path once asked, or NULL */
	uint64_t path_bytes; /* held in path[], against the memory budget */
};

int ge_is_tf2_savedmodel(ge_graph *g)
{
	const Tensorflow__SavedObjectGraph *s = ge_object_graph(g);
	return s && s->n_nodes > 0;
}

int ge_checkpoint_object_graph(ge_bundle *b,
			       Tensorflow__TrackableObjectGraph **out,
			       ge_error *err)
{
	*out = NULL;
	const char *ipath = ge_bundle_index_path(b);
	const ge_bundle_entry *e = ge_bundle_find(b, CKPT_GRAPH_KEY);
	if (!e)
		return ge_err(err, GE_ENOTFOUND,
			      "%s: no object graph (" CKPT_GRAPH_KEY ")", ipath);
	ge_bundle_string *s = NULL;
	size_t n = 0;
	int rc = ge_bundle_read_strings(b, e, &s, &n, err);
	if (rc)
		return rc;
	if (n != 1) {
		free(s);
		return ge_err(err, GE_EFORMAT,
			      "%s: " CKPT_GRAPH_KEY " holds %zu strings, not "
			      "one", ipath, n);
	}
	*out = tensorflow__trackable_object_graph__unpack(
		NULL, s[0].len, (const uint8_t *)s[0].ptr);
	free(s);
	if (!*out)
		return ge_err(err, GE_EFORMAT,
			      "%s: " CKPT_GRAPH_KEY " is not a "
			      "TrackableObjectGraph", ipath);
	return GE_OK;
}

/* Appends a local name as TensorFlow escapes it in checkpoint keys. */
static void add_escaped(ge_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '.')
			ge_buf_adds(b, "..");
		else if (*s == '/')
			ge_buf_adds(b, ".S");
		else
			ge_buf_addc(b, *s);
	}
}

char *ge_tf2_variable_key(const char *path)
{
	ge_buf b = GE_BUF_INIT;
	/* the path's own separators stay; names were joined unescaped, so
	 * split on '/' and escape each part */
	const char *p = path;
	while (*p) {
		const char *q = strchr(p, '/');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		char *part = ge_xstrndup(p, n);
		add_escaped(&b, part);
		free(part);
		ge_buf_addc(&b, '/');
		p += n + (q != NULL);
	}
	ge_buf_adds(&b, ".ATTRIBUTES/" VALUE_ATTR);
	size_t len;
	return (char *)ge_buf_steal(&b, &len);
}

static int tog_child(const Tensorflow__TrackableObjectGraph *tog, int m,
		     const char *name)
{
	const Tensorflow__TrackableObjectGraph__TrackableObject *t =
		tog->nodes[m];
	for (size_t i = 0; i < t->n_children; i++)
		if (!strcmp(t->children[i]->local_name, name) &&
		    t->children[i]->node_id >= 0 &&
		    (size_t)t->children[i]->node_id < tog->n_nodes)
			return t->children[i]->node_id;
	return -1;
}

/* Breadth first from the root, as TensorFlow names objects: the first
 * path found is the shortest, the one checkpoint keys are made of.  Each
 * node keeps its parent and local name, not its path; a node deeper than
 * TF2_MAX_DEPTH is an error. */
static int match_graphs(ge_tf2_objects *o, ge_error *err)
{
	size_t n = o->n;
	int *queue = ge_xmalloc(n * sizeof *queue);
	int *depth = ge_xcalloc(n, sizeof *depth);
	size_t head = 0, tail = 0;
	int rc = GE_OK;
	o->reached[0] = 1;
	if (o->tog && o->tog->n_nodes)
		o->ck[0] = 0;
	queue[tail++] = 0;
	while (head < tail && rc == GE_OK) {
		int s = queue[head++];
		const Tensorflow__SavedObject *so = o->sog->nodes[s];
		for (size_t i = 0; i < so->n_children; i++) {
			int c = so->children[i]->node_id;
			const char *ln = so->children[i]->local_name;
			if (c < 0 || (size_t)c >= n || o->reached[c])
				continue;
			if (depth[s] + 1 > TF2_MAX_DEPTH) {
				rc = ge_err(err, GE_EFORMAT,
					    "%s: the object graph nests deeper "
					    "than %d levels (object %d, child "
					    "'%.100s' of object %d)", o->gname,
					    TF2_MAX_DEPTH, c, ln, s);
				break;
			}
			o->reached[c] = 1;
			o->parent[c] = s;
			o->lname[c] = ln;
			depth[c] = depth[s] + 1;
			if (o->ck[s] >= 0)
				o->ck[c] = tog_child(o->tog, o->ck[s], ln);
			queue[tail++] = c;
		}
	}
	free(depth);
	free(queue);
	return rc;
}

/* The path of a reached node, local names joined by '/', made when first
 * asked and kept; NULL when the paths asked so far would pass the memory
 * budget (err says so). */
static const char *node_path(const ge_tf2_objects *o, int node, ge_error *err)
{
	if (o->path[node])
		return o->path[node];
	size_t len = 0;
	for (int x = node; o->parent[x] >= 0; x = o->parent[x])
		len += strlen(o->lname[x]) + 1;
	uint64_t total = o->path_bytes + len + 1;
	if (ge_budget_check(total, o->gname, "the paths of captured objects",
			    err))
		return NULL;
	char *p = ge_xmalloc(len + 1);
	p[len] = 0;
	size_t at = len;
	for (int x = node; o->parent[x] >= 0; x = o->parent[x]) {
		size_t l = strlen(o->lname[x]);
		at -= l;
		memcpy(p + at, o->lname[x], l);
		if (at)
			p[--at] = '/';
	}
	/* the cache is not part of what o means: filled on demand */
	((ge_tf2_objects *)o)->path_bytes = total;
	o->path[node] = p;
	return p;
}

int ge_tf2_objects_open(ge_graph *g, ge_bundle *b, ge_tf2_objects **out,
			ge_error *err)
{
	*out = NULL;
	const char *gname = *ge_graph_name(g) ? ge_graph_name(g) : "graph";
	Tensorflow__SavedObjectGraph *sog = ge_object_graph(g);
	if (!sog || !sog->n_nodes)
		return ge_err(err, GE_EINVAL,
			      "%s: not a TF2 SavedModel (no object graph)",
			      gname);
	Tensorflow__TrackableObjectGraph *tog = NULL;
	if (b) {
		int rc = ge_checkpoint_object_graph(b, &tog, err);
		if (rc)
			return rc;
	}
	ge_tf2_objects *o = ge_xcalloc(1, sizeof *o);
	o->sog = sog;
	o->tog = tog;
	o->gname = gname;
	o->n = sog->n_nodes;
	o->ck = ge_xmalloc(o->n * sizeof *o->ck);
	for (size_t i = 0; i < o->n; i++)
		o->ck[i] = -1;
	o->path = ge_xcalloc(o->n, sizeof *o->path);
	o->parent = ge_xmalloc(o->n * sizeof *o->parent);
	for (size_t i = 0; i < o->n; i++)
		o->parent[i] = -1;
	o->lname = ge_xcalloc(o->n, sizeof *o->lname);
	o->reached = ge_xcalloc(o->n, 1);
	int rc = match_graphs(o, err);
	if (rc != GE_OK) {
		ge_tf2_objects_free(o);
		return rc;
	}
	*out = o;
	return GE_OK;
}

void ge_tf2_objects_free(ge_tf2_objects *o)
{
	if (!o)
		return;
	if (o->tog)
		tensorflow__trackable_object_graph__free_unpacked(o->tog, NULL);
	for (size_t i = 0; i < o->n; i++)
		free(o->path[i]);
	free(o->path);
	free(o->parent);
	free(o->lname);
	free(o->reached);
	free(o->ck);
	free(o);
}

static const Tensorflow__SavedConcreteFunction *
concrete(const Tensorflow__SavedObjectGraph *sog, const char *name)
{
	for (size_t i = 0; i < sog->n_concrete_functions; i++)
		if (!strcmp(sog->concrete_functions[i]->key, name))
			return sog->concrete_functions[i]->value;
	return NULL;
}

static const char *value_key(const ge_tf2_objects *o, int node)
{
	int m = o->ck[node];
	if (m < 0)
		return NULL;
	const Tensorflow__TrackableObjectGraph__TrackableObject *t =
		o->tog->nodes[m];
	for (size_t i = 0; i < t->n_attributes; i++)
		if (!strcmp(t->attributes[i]->name, VALUE_ATTR) &&
		    *t->attributes[i]->checkpoint_key)
			return t->attributes[i]->checkpoint_key;
	return NULL;
}

int ge_tf2_call_captures(const ge_tf2_objects *o, const ge_graph *g,
			 ge_opid call, ge_tf2_capture **out, size_t *n,
			 ge_error *err)
{
	*out = NULL;
	*n = 0;
	const Tensorflow__AttrValue *f = ge_op_attr(g, call, "f", NULL);
	if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC ||
	    !f->func)
		return GE_OK;
	const Tensorflow__SavedConcreteFunction *cf =
		concrete(o->sog, f->func->name);
	if (!cf || !cf->n_bound_inputs)
		return GE_OK;
	size_t ni = ge_op_num_inputs(g, call), nb = cf->n_bound_inputs;
	if (nb > ni)
		return ge_err(err, GE_EFORMAT,
			      "%s: op '%s' calls '%s' with %zu inputs, but "
			      "the function captures %zu", o->gname,
			      ge_op_name(g, call), f->func->name, ni, nb);
	ge_tf2_capture *c = ge_xcalloc(nb, sizeof *c);
	for (size_t i = 0; i < nb; i++) {
		int node = cf->bound_inputs[i];
		if (node < 0 || (size_t)node >= o->n) {
			free(c);
			return ge_err(err, GE_EFORMAT,
				      "%s: function '%s' captures object %d, "
				      "which the object graph does not have",
				      o->gname, f->func->name, node);
		}
		const Tensorflow__SavedObject *so = o->sog->nodes[node];
		c[i].slot = ni - nb + i;
		c[i].t = ge_op_input(g, call, c[i].slot);
		c[i].node = node;
		c[i].path = "?";
		if (o->reached[node]) {
			c[i].path = node_path(o, node, err);
			if (!c[i].path) {
				free(c);
				return GE_EFORMAT;
			}
		}
		c[i].name = c[i].path;
		switch (so->kind_case) {
		case TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE:
			c[i].kind = GE_TF2_VARIABLE;
			if (so->variable && *so->variable->name)
				c[i].name = so->variable->name;
			c[i].key = value_key(o, node);
			break;
		case TENSORFLOW__SAVED_OBJECT__KIND_CONSTANT:
			c[i].kind = GE_TF2_CONSTANT;
			if (so->constant && *so->constant->operation)
				c[i].name = so->constant->operation;
			break;
		case TENSORFLOW__SAVED_OBJECT__KIND_RESOURCE:
			c[i].kind = GE_TF2_RESOURCE;
			break;
		default:
			c[i].kind = GE_TF2_OTHER;
			c[i].key = value_key(o, node);
			break;
		}
	}
	*out = c;
	*n = nb;
	return GE_OK;
}
