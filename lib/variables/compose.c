/* compose.c: models one after the other, and servables cut out of a
 * model (see compose.h). */
#include "variables/compose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle.h"
#include "formats/meta.h"
#include "variables/saverconst.h"
#include "editor/select.h"
#include "analyses/shapes.h"
#include "variables/sigedit.h"
#include "base/tensor.h"
#include "variables/tf2.h"
#include "editor/transform.h"
#include "formats/model.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

enum { MAXR = 64 };

static const char *dtname(int dt)
{
	const char *s = dt > 0 ? ge_dtype_name(dt) : NULL;
	return s ? s : "unknown";
}

/* Tensor ta of a can feed tb of b: same dtype, shapes that agree. */
static int fits(ge_graph *a, ge_tref ta, const char *na, ge_graph *b,
		ge_tref tb, const char *nb, ge_error *err)
{
	int da = ge_shapes_dtype(a, ta), db = ge_shapes_dtype(b, tb);
	if (!da)
		da = ge_op_output_dtype(a, ta.op, ta.index);
	if (!db)
		db = ge_op_output_dtype(b, tb.op, tb.index);
	if (da > 100)
		da -= 100;
	if (db > 100)
		db -= 100;
	if (da > 0 && db > 0 && da != db)
		return ge_err(err, GE_EINVAL,
			      "compose: '%s' is %s, '%s' is %s", na, dtname(da),
			      nb, dtname(db));
	int64_t sa[MAXR], sb[MAXR];
	int ra = ge_shapes_best(a, ta, sa, MAXR);
	int rb = ge_shapes_best(b, tb, sb, MAXR);
	int bad = ra >= 0 && rb >= 0 && ra != rb;
	for (int i = 0; !bad && ra >= 0 && ra == rb && i < ra && i < MAXR; i++)
		bad = sa[i] >= 0 && sb[i] >= 0 && sa[i] != sb[i];
	if (bad) {
		ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
		ge_shape_format(&x, ra, sa);
		ge_shape_format(&y, rb, sb);
		ge_buf_addc(&x, 0);
		ge_buf_addc(&y, 0);
		ge_err(err, GE_EINVAL,
		       "compose: '%s' has shape %s, '%s' takes %s", na,
		       (char *)x.data, nb, (char *)y.data);
		ge_buf_free(&x);
		ge_buf_free(&y);
		return GE_EINVAL;
	}
	return GE_OK;
}

static int has_variables(ge_graph *g)
{
	size_t n = ge_graph_capacity(g);
	for (ge_opid i = 0; i < n; i++)
		if (ge_op_alive(g, i) &&
		    ge_is_variable_op_type(ge_op_type(g, i)))
			return 1;
	return 0;
}

/* A key from an op or tensor name: '/' and ':' become '_', ":0"
 * dropped. */
static char *key_of(const char *t)
{
	char *k = ge_xstrdup(t);
	size_t n = strlen(k);
	if (n > 2 && !strcmp(k + n - 2, ":0"))
		k[n - 2] = 0;
	for (char *p = k; *p; p++)
		if (*p == '/' || *p == ':')
			*p = '_';
	return k;
}

static void key_add(ge_sig_key **k, size_t *n, const char *key,
		    const char *prefix, const char *tensor)
{
	size_t len = strlen(tensor) + (prefix ? strlen(prefix) : 0) + 2;
	char *s = ge_xmalloc(len);
	snprintf(s, len, "%s%s%s", prefix ? prefix : "", prefix ? "/" : "",
		 tensor);
	*k = ge_xrealloc(*k, (*n + 1) * sizeof **k);
	(*k)[*n].key = key ? ge_xstrdup(key) : key_of(tensor);
	(*k)[(*n)++].tensor = s;
}

/* One side of a model's interface: its serving_default signature's, or
 * else its Placeholders (inputs) or the outputs 0 of the ops nothing
 * reads (outputs).  Tensor names get the prefix. */
static size_t sig_side(ge_graph *g, int outputs, ge_sig_key **k,
		       const char *prefix)
{
	const Tensorflow__SignatureDef *d =
		ge_signature_get(g, "serving_default");
	size_t n = 0;
	*k = NULL;
	if (d) {
		size_t m = outputs ? d->n_outputs : d->n_inputs;
		for (size_t i = 0; i < m; i++) {
			Tensorflow__SignatureDef__InputsEntry *in =
				outputs ? NULL : d->inputs[i];
			Tensorflow__SignatureDef__OutputsEntry *out =
				outputs ? d->outputs[i] : NULL;
			const Tensorflow__TensorInfo *t =
				in ? in->value : out->value;
			if (t && t->encoding_case ==
					 TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
				key_add(k, &n, in ? in->key : out->key, prefix,
					t->name);
		}
		return n;
	}
	size_t cap = ge_graph_capacity(g);
	for (ge_opid id = 0; id < cap; id++) {
		if (!ge_op_alive(g, id))
			continue;
		size_t nu = 0, nc = 0;
		if (outputs) {
			ge_op_uses(g, id, &nu);
			ge_op_control_outputs(g, id, &nc);
			if (nu || nc || ge_op_num_outputs(g, id) < 1)
				continue;
		} else if (strcmp(ge_op_type(g, id), "Placeholder") &&
			   strcmp(ge_op_type(g, id), "PlaceholderV2")) {
			continue;
		}
		key_add(k, &n, NULL, prefix, ge_op_name(g, id));
	}
	return n;
}

static void keys_free(ge_sig_key *k, size_t n)
{
	for (size_t i = 0; k && i < n; i++) {
		free((char *)k[i].key);
		free((char *)k[i].tensor);
	}
	free(k);
}

/* The composition's serving_default: a's inputs, b's outputs (those of
 * their serving_default signatures, else a's Placeholders and the ops of
 * b nothing reads), unless a is a TF2 SavedModel. */
static void compose_signature(ge_graph *a, ge_graph *b, ge_graph *c,
			      const char *prefix)
{
	if (ge_is_tf2_savedmodel(c))
		return;
	ge_sig_key *in, *out;
	size_t ni = sig_side(a, 0, &in, NULL);
	size_t no = sig_side(b, 1, &out, prefix);
	ge_sig_spec s = {in, ni, out, no, NULL};
	ge_error e2;
	if (no && ge_signature_set(c, "serving_default", &s, &e2) != GE_OK)
		ge_signature_drop(c, "serving_default", &e2);
	keys_free(in, ni);
	keys_free(out, no);
}

/* Whether every name is a tensor of g; found[i] set for those that
 * are. */
static int all_there(ge_graph *g, const char *const *names, size_t n,
		     unsigned char *found)
{
	int all = 1;
	for (size_t i = 0; i < n; i++) {
		ge_tref t;
		ge_error e2;
		if (ge_graph_resolve_tensor(g, names[i], 0, &t, &e2))
			all = 0;
		else
			found[i] = 1;
	}
	return all;
}

/* A TF2 SavedModel g frozen (*f, a new plain graph named as g): the first
 * of its signatures (serving_default, then the others in file order)
 * whose frozen form holds every tensor named (ge_tf2_freeze with
 * tensor_names: calls inlined, a body's ops named by the calls that lead
 * to them, variables constants).  what names the caller in messages. */
static int tf2_frozen(ge_graph *g, const char *what, const char *const *n1,
		      size_t k1, const char *const *n2, size_t k2,
		      ge_graph **f, ge_error *err)
{
	char *prefix = NULL;
	ge_bundle *b = NULL;
	ge_error e2;
	*f = NULL;
	if (ge_graph_checkpoint_source(g, &prefix, &e2) == GE_OK &&
	    ge_bundle_open(prefix, &b, err) != GE_OK) {
		free(prefix);
		return err->code;
	}
	free(prefix);
	size_t ns = ge_signature_count(g);
	unsigned char *found = ge_xcalloc(k1 + k2 + 1, 1);
	int rc = GE_OK;
	for (size_t i = 0; i <= ns && !*f; i++) {
		const char *name = i ? ge_signature_name(g, i - 1)
				     : "serving_default";
		if (!name || (i && !strcmp(name, "serving_default")) ||
		    !strncmp(name, "__", 2) || !ge_signature_get(g, name))
			continue;
		ge_tf2_freeze_opts fo = {name, 0, 1};
		ge_graph *h = NULL;
		rc = ge_tf2_freeze(g, b, &fo, &h, err);
		if (rc)
			break;
		int in = all_there(h, n1, k1, found);
		if (all_there(h, n2, k2, found + k1) && in)
			*f = h;
		else
			ge_graph_free(h);
	}
	if (b)
		ge_bundle_close(b);
	const char *miss = NULL;
	for (size_t i = 0; !rc && !*f && !miss && i < k1 + k2; i++)
		if (!found[i])
			miss = i < k1 ? n1[i] : n2[i - k1];
	free(found);
	if (rc)
		return rc;
	if (!*f && miss)
		return ge_err(err, GE_ENOTFOUND,
			      "%s: no tensor '%s' in %s, nor in the "
			      "functions of its signatures", what, miss,
			      ge_graph_name(g));
	if (!*f)
		return ge_err(err, GE_ENOTFOUND,
			      "%s: no signature of %s holds all of "
			      "those tensors", what, ge_graph_name(g));
	ge_graph_set_name(*f, ge_graph_name(g));
	return GE_OK;
}

/* ---------------------------------------------------- b's variables */

static char *scoped(const char *prefix, const char *name)
{
	size_t n = strlen(prefix) + strlen(name) + 2;
	char *s = ge_xmalloc(n);
	snprintf(s, n, "%s/%s", prefix, name);
	return s;
}

static int is_type(const ge_graph *g, ge_opid id, const char *type)
{
	return ge_op_alive(g, id) && !strcmp(ge_op_type(g, id), type);
}

/* b's checkpoint keys under the prefix: every SaveV2 / RestoreV2 of b (a
 * copy of b) names prefix/key where it named key. */
static void rekey_savers(ge_graph *b, const char *prefix)
{
	size_t cap = ge_graph_capacity(b);
	unsigned char *done = ge_xcalloc(cap + 1, 1);
	for (ge_opid id = 0; id < cap; id++) {
		if ((!is_type(b, id, "SaveV2") && !is_type(b, id, "RestoreV2")) ||
		    ge_op_num_inputs(b, id) < 3)
			continue;
		ge_opid c = ge_op_input(b, id, 1).op;
		size_t n = 0;
		char **names = c < cap && !done[c] ? ge_const_strings(b, c, &n)
						   : NULL;
		if (!names)
			continue;
		done[c] = 1;
		for (size_t i = 0; i < n; i++) {
			char *k = scoped(prefix, names[i]);
			free(names[i]);
			names[i] = k;
		}
		ge_const_set_strings(b, c, names, n);
		ge_strings_free(names, n);
	}
	free(done);
}

/* The op a SaverDef field names in c (b's names under the prefix). */
static ge_opid saver_op(ge_graph *c, const char *prefix, const char *name)
{
	if (!name || !*name)
		return GE_NOOP;
	char *full = prefix ? scoped(prefix, name) : ge_xstrdup(name);
	ge_tref t;
	ge_opid id = ge_graph_resolve_tensor(c, full, 1, &t, NULL) == GE_OK
			     ? t.op : ge_graph_find(c, full);
	free(full);
	return id;
}

/* c has no saver of its own: it takes b's, its names under the prefix. */
static void adopt_saver(ge_graph *c, const Tensorflow__SaverDef *sb,
			const char *prefix)
{
	Tensorflow__SaverDef d = *sb;
	char *f = scoped(prefix, sb->filename_tensor_name);
	char *s = scoped(prefix, sb->save_tensor_name);
	char *r = scoped(prefix, sb->restore_op_name);
	d.filename_tensor_name = f;
	d.save_tensor_name = s;
	d.restore_op_name = r;
	size_t n = tensorflow__saver_def__get_packed_size(&d);
	uint8_t *buf = ge_xmalloc(n + 1);
	tensorflow__saver_def__pack(&d, buf);
	Tensorflow__SaverDef *m = tensorflow__saver_def__unpack(NULL, n, buf);
	if (m && ge_meta_add(c, GE_META_SAVER, &m->base))
		tensorflow__saver_def__free_unpacked(m, NULL);
	free(buf);
	free(f);
	free(s);
	free(r);
}

/* a's SaveV2 (the first of a's ops) saves what b's SaveV2 ops saved:
 * their tensors, keys, slices and dtypes are appended to its own. */
static int join_saves(ge_graph *c, size_t first_new)
{
	ge_opid sa = GE_NOOP;
	for (ge_opid id = 0; id < first_new && sa == GE_NOOP; id++)
		if (is_type(c, id, "SaveV2") && ge_op_num_inputs(c, id) >= 3)
			sa = id;
	if (sa == GE_NOOP)
		return 0;
	ge_opid cn = ge_op_input(c, sa, 1).op, cs = ge_op_input(c, sa, 2).op;
	size_t nu1 = 0, nu2 = 0, nn = 0, ns = 0, nt = 0;
	ge_op_uses(c, cn, &nu1);
	ge_op_uses(c, cs, &nu2);
	char **names = ge_const_strings(c, cn, &nn);
	char **slices = ge_const_strings(c, cs, &ns);
	int *types = ge_attr_types(c, sa, "dtypes", &nt);
	int ok = names && slices && types && nu1 == 1 && nu2 == 1 &&
		 nn == ns && nn == nt;
	size_t cap = ge_graph_capacity(c), n0 = nn;
	for (ge_opid id = (ge_opid)first_new; ok && id < cap; id++) {
		size_t ni = ge_op_num_inputs(c, id), bn = 0, bs = 0, bt = 0;
		if (!is_type(c, id, "SaveV2") || ni < 3)
			continue;
		char **kn = ge_const_strings(c, ge_op_input(c, id, 1).op, &bn);
		char **ks = ge_const_strings(c, ge_op_input(c, id, 2).op, &bs);
		int *kt = ge_attr_types(c, id, "dtypes", &bt);
		if (kn && ks && kt && bn == ni - 3 && bs == bn && bt == bn) {
			names = ge_xrealloc(names, (nn + bn) * sizeof *names);
			slices = ge_xrealloc(slices, (nn + bn) * sizeof *slices);
			types = ge_xrealloc(types, (nn + bn) * sizeof *types);
			for (size_t k = 0; k < bn; k++) {
				ge_op_add_input(c, sa, ge_op_input(c, id, 3 + k),
						NULL);
				names[nn] = ge_xstrdup(kn[k]);
				slices[nn] = ge_xstrdup(ks[k]);
				types[nn++] = kt[k];
			}
		}
		ge_strings_free(kn, bn);
		ge_strings_free(ks, bs);
		free(kt);
	}
	if (ok && nn > n0) {
		ge_const_set_strings(c, cn, names, nn);
		ge_const_set_strings(c, cs, slices, nn);
		ge_attr_set_types(c, sa, "dtypes", types, nn);
		ge_op_remove_attr(c, sa, "_output_shapes");
	}
	ge_strings_free(names, nn);
	ge_strings_free(slices, ns > nn ? ns : nn);
	free(types);
	return ok && nn > n0;
}

/* b's save ops go: its save tensor's op, then every op of b's saver
 * scope nothing reads any more. */
static void drop_b_save(ge_graph *c, size_t first_new, ge_opid root)
{
	if (root == GE_NOOP || root < first_new)
		return;
	const char *nm = ge_op_name(c, root), *sl = strrchr(nm, '/');
	char *scope = ge_xstrndup(nm, sl ? (size_t)(sl - nm) + 1 : 0);
	ge_graph_remove_op(c, root, 1, NULL);
	size_t cap = ge_graph_capacity(c);
	for (int again = 1; again && *scope;) {
		again = 0;
		for (ge_opid id = (ge_opid)cap; id-- > first_new;) {
			size_t nu = 0, nc = 0;
			if (!ge_op_alive(c, id) ||
			    strncmp(ge_op_name(c, id), scope, strlen(scope)))
				continue;
			ge_op_uses(c, id, &nu);
			ge_op_control_outputs(c, id, &nc);
			if (!nu && !nc && !ge_graph_remove_op(c, id, 0, NULL))
				again = 1;
		}
	}
	free(scope);
}

/* One saver for both: b's restore reads a's filename tensor and runs
 * with a's restore op, a's save op saves b's variables too. */
static int join_savers(ge_graph *c, const Tensorflow__SaverDef *sb,
		       const char *prefix, size_t first_new, ge_error *err)
{
	Tensorflow__SaverDef *sa = ge_saver_def(c);
	if (!sa) {
		adopt_saver(c, sb, prefix);
		return GE_OK;
	}
	ge_tref fa, fb;
	char *fbn = scoped(prefix, sb->filename_tensor_name);
	int rc = ge_graph_resolve_tensor(c, sa->filename_tensor_name, 0, &fa,
					 err);
	if (!rc)
		rc = ge_graph_resolve_tensor(c, fbn, 0, &fb, err);
	free(fbn);
	ge_opid ra = saver_op(c, NULL, sa->restore_op_name);
	ge_opid rb = saver_op(c, prefix, sb->restore_op_name);
	if (rc || ra == GE_NOOP || rb == GE_NOOP)
		return ge_err(err, GE_EGRAPH, "compose: the savers of %s "
			      "cannot be joined (no filename tensor or "
			      "restore op)", ge_graph_name(c));
	size_t nu = 0;
	const ge_use *u = ge_op_uses(c, fb.op, &nu);
	ge_input_edit *e = ge_xmalloc((nu + 1) * sizeof *e);
	size_t ne = 0;
	for (size_t k = 0; k < nu; k++)
		if (ge_op_input(c, u[k].op, u[k].slot).index == fb.index)
			e[ne++] = (ge_input_edit){u[k].op, u[k].slot, fa};
	rc = ge_graph_set_inputs(c, e, ne, err);
	free(e);
	if (!rc)
		rc = ge_op_add_control_input(c, ra, rb, err);
	if (!rc && join_saves(c, first_new))
		drop_b_save(c, first_new,
			    saver_op(c, prefix, sb->save_tensor_name));
	return rc;
}

/* One init op and one main op: a's `init` runs b's, and a collection
 * that runs once after the restore (legacy_init_op, saved_model_main_op,
 * init_op) keeps one op, which runs the others. */
static void join_inits(ge_graph *c, const char *prefix, size_t first_new)
{
	static const char *const colls[] = {"legacy_init_op",
					    "saved_model_main_op", "init_op"};
	ge_opid ia = ge_graph_find(c, "init");
	char *bn = scoped(prefix, "init");
	ge_opid ib = ge_graph_find(c, bn);
	free(bn);
	if (ia != GE_NOOP && ia < first_new && ib != GE_NOOP)
		ge_op_add_control_input(c, ia, ib, NULL);
	for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++) {
		Tensorflow__CollectionDef *cd = ge_collection_get(c, colls[k]);
		if (!cd || cd->kind_case !=
				   TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST ||
		    cd->node_list->n_value < 2)
			continue;
		ge_tref first, t;
		if (ge_graph_find_tensor(c, cd->node_list->value[0], &first))
			continue;
		for (size_t i = 1; i < cd->node_list->n_value; i++)
			if (!ge_graph_find_tensor(c, cd->node_list->value[i],
						  &t) &&
			    t.op != first.op)
				ge_op_add_control_input(c, first.op, t.op,
							NULL);
		char *keep = ge_xstrdup(cd->node_list->value[0]);
		ge_collection_remove(c, colls[k]);
		ge_collection_add_node(c, colls[k], keep, NULL);
		free(keep);
	}
}

/* After b (whose savers were rekeyed) was imported into c: one saver,
 * one init, and the plan that copies b's checkpoint tensors under their
 * new keys into the checkpoint c is saved with. */
static int carry_variables(ge_graph *c, ge_graph *b, const ge_varlist *vl,
			   const char *prefix, size_t first_new, ge_error *err)
{
	Tensorflow__SaverDef *sb = ge_saver_def(b);
	int rc = sb ? join_savers(c, sb, prefix, first_new, err) : GE_OK;
	if (rc)
		return rc;
	join_inits(c, prefix, first_new);
	char *ck = NULL;
	ge_bundle *bd = NULL;
	ge_error e2;
	if (ge_graph_checkpoint_source(b, &ck, &e2) != GE_OK ||
	    ge_bundle_open(ck, &bd, &e2) != GE_OK) {
		free(ck);
		return GE_OK; /* b's variables have no values to carry */
	}
	free(ck);
	/* a has no checkpoint: c's is b's, whose old keys it leaves out */
	int only_b = ge_graph_checkpoint_source(c, &ck, &e2) != GE_OK;
	free(ck);
	for (size_t i = 0; i < vl->n; i++) {
		/* what b's checkpoint holds: a variable no saver saves (a
		 * string one its init op assigns) has no tensor there */
		if (!vl->v[i].key || vl->v[i].slice_name ||
		    !ge_bundle_find(bd, ge_graph_checkpoint_origin(
						b, vl->v[i].key) ?: ""))
			continue;
		char *k = scoped(prefix, vl->v[i].key);
		ge_graph_checkpoint_copy_from(c, b, vl->v[i].key, k);
		if (only_b)
			ge_graph_checkpoint_drop(c, vl->v[i].key);
		free(k);
	}
	ge_bundle_close(bd);
	return GE_OK;
}

/* b's variables can come along unless a is a TF2 SavedModel (whose
 * variables are its object graph's; a TF2 b was frozen before). */
static int vars_check(ge_graph *a, ge_graph *b, const ge_varlist *vl,
		      ge_error *err)
{
	if (vl->n && ge_is_tf2_savedmodel(a))
		return ge_err(err, GE_EINVAL,
			      "compose: the second model, %s, has variables "
			      "('%s') and the first is a TF2 SavedModel: "
			      "freeze the second first",
			      ge_graph_name(b), vl->v[0].name);
	return GE_OK;
}

/* Each mapped pair: both tensors there (to[i], a's, resolved), b's
 * input mapped once, dtypes and shapes that fit. */
static int check_map(ge_graph *a, ge_graph *b, const ge_compose_opts *o,
		     ge_tref *to, ge_error *err)
{
	int rc = GE_OK;
	for (size_t i = 0; rc == GE_OK && i < o->n_map; i++) {
		ge_tref tb;
		ge_error e2;
		if (ge_graph_resolve_tensor(a, o->from[i], 0, &to[i], &e2))
			rc = ge_err(err, GE_ENOTFOUND,
				    "compose: no tensor '%s' in %s", o->from[i],
				    ge_graph_name(a));
		else if (ge_graph_resolve_tensor(b, o->to[i], 0, &tb, &e2))
			rc = ge_err(err, GE_ENOTFOUND,
				    "compose: no tensor '%s' in %s", o->to[i],
				    ge_graph_name(b));
		else
			rc = fits(a, to[i], o->from[i], b, tb, o->to[i], err);
		for (size_t j = 0; rc == GE_OK && j < i; j++)
			if (!strcmp(o->to[i], o->to[j]))
				rc = ge_err(err, GE_EINVAL,
					    "compose: '%s' is mapped twice",
					    o->to[i]);
	}
	return rc;
}

int ge_compose(ge_graph *a, ge_graph *b, const ge_compose_opts *o,
	       ge_graph **out, ge_error *err)
{
	*out = NULL;
	const char *prefix = o->prefix && *o->prefix ? o->prefix : "b";
	if (!o->n_map)
		return ge_err(err, GE_EINVAL,
			      "compose: no tensor of the first model is mapped "
			      "to an input of the second");
	if (ge_is_tf2_savedmodel(b) && has_variables(b) &&
	    !ge_is_tf2_savedmodel(a)) {
		/* b's signature that holds the mapped inputs, frozen */
		ge_graph *bf;
		int rc = tf2_frozen(b, "compose", o->to, o->n_map, NULL, 0,
				    &bf, err);
		if (!rc)
			rc = ge_compose(a, bf, o, out, err);
		if (bf)
			ge_graph_free(bf);
		return rc;
	}
	ge_varlist vl = {0};
	int rc = has_variables(b) ? ge_graph_variables(b, &vl, err) : GE_OK;
	if (!rc)
		rc = vars_check(a, b, &vl, err);
	ge_tref *to = ge_xmalloc(o->n_map * sizeof *to);
	if (!rc)
		rc = check_map(a, b, o, to, err);
	if (rc != GE_OK) {
		ge_varlist_free(&vl);
		free(to);
		return rc;
	}
	/* b's checkpoint keys move under the prefix with its ops */
	ge_graph *bb = vl.n ? ge_graph_clone(b) : b;
	if (vl.n)
		rekey_savers(bb, prefix);
	ge_graph *c = ge_graph_clone(a);
	size_t first_new = ge_graph_capacity(c);
	ge_import_opts io = {prefix, 1, o->to, to, o->n_map};
	rc = ge_import_graph(c, bb, &io, NULL, err);
	free(to);
	if (!rc && vl.n)
		rc = carry_variables(c, b, &vl, prefix, first_new, err);
	if (bb != b)
		ge_graph_free(bb);
	ge_varlist_free(&vl);
	if (rc != GE_OK) {
		ge_graph_free(c);
		return rc;
	}
	/* b's mapped inputs: gone when nothing reads them any more */
	for (size_t i = 0; i < o->n_map; i++) {
		size_t off, len;
		int32_t idx;
		if (ge_parse_input(o->to[i], strlen(o->to[i]), &off, &len, &idx))
			continue;
		char *nm = ge_xmalloc(strlen(prefix) + len + 2);
		sprintf(nm, "%s/%.*s", prefix, (int)len, o->to[i] + off);
		ge_opid id = ge_graph_find(c, nm);
		size_t nu = 0, nc = 0;
		if (id != GE_NOOP) {
			ge_op_uses(c, id, &nu);
			ge_op_control_outputs(c, id, &nc);
		}
		if (id != GE_NOOP && !nu && !nc)
			ge_graph_remove_op(c, id, 0, NULL);
		free(nm);
	}
	compose_signature(a, b, c, prefix);
	*out = c;
	return GE_OK;
}

/* ------------------------------------------------------------ extract */

/* Marks in keep every op the seeds need, back through data and control
 * inputs (seeds included). */
static void walk(ge_graph *g, const ge_opid *seeds, size_t n,
		 unsigned char *keep)
{
	size_t cap = ge_graph_capacity(g);
	ge_opid *stack = ge_xmalloc((cap + 1) * sizeof *stack);
	size_t sp = 0;
	for (size_t i = 0; i < n; i++)
		if (seeds[i] < cap && !keep[seeds[i]]) {
			keep[seeds[i]] = 1;
			stack[sp++] = seeds[i];
		}
	while (sp) {
		ge_opid id = stack[--sp];
		size_t ni = ge_op_num_inputs(g, id);
		size_t nc = ge_op_num_control_inputs(g, id);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid p = i < ni ? ge_op_input(g, id, i).op
					   : ge_op_control_input(g, id, i - ni);
			if (p != GE_NOOP && p < cap && !keep[p]) {
				keep[p] = 1;
				stack[sp++] = p;
			}
		}
	}
	free(stack);
}

/* The ops that keep a TF1 container's variables alive: the saver's
 * restore and save ops and the init ops (of the collections a SavedModel
 * runs, and `init`), and the asset tensors its loader feeds. */
static size_t saver_roots(ge_graph *g, ge_opid **out)
{
	/* asset_filepaths: the loader feeds the asset tensors the
	 * SavedModel's AssetFileDefs name */
	static const char *const colls[] = {"legacy_init_op",
					    "saved_model_main_op", "init_op",
					    "table_initializer",
					    "asset_filepaths"};
	ge_opid *r = ge_xmalloc(64 * sizeof *r);
	size_t n = 0, cap = 64;
	const char *names[8];
	size_t nn = 0;
	Tensorflow__SaverDef *sd = ge_saver_def(g);
	if (sd) {
		names[nn++] = sd->restore_op_name;
		names[nn++] = sd->save_tensor_name;
		names[nn++] = sd->filename_tensor_name;
	}
	names[nn++] = "init";
	for (size_t i = 0; i < nn; i++) {
		ge_tref t;
		if (names[i] && *names[i] &&
		    ge_graph_resolve_tensor(g, names[i], 1, &t, NULL) == GE_OK)
			r[n++] = t.op;
		else if (names[i] && ge_graph_find(g, names[i]) != GE_NOOP)
			r[n++] = ge_graph_find(g, names[i]);
	}
	for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++) {
		Tensorflow__CollectionDef *c = ge_collection_get(g, colls[k]);
		if (!c || c->kind_case !=
				  TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
			continue;
		for (size_t i = 0; i < c->node_list->n_value; i++) {
			ge_tref t; /* an op (a NoOp has no tensor) */
			if (ge_graph_find_tensor(g, c->node_list->value[i],
						 &t) != GE_OK)
				continue;
			if (n == cap)
				r = ge_xrealloc(r, (cap *= 2) * sizeof *r);
			r[n++] = t.op;
		}
	}
	*out = r;
	return n;
}

/* Removes every op of c that neither the outputs nor the saver and init
 * ops need. */
static unsigned char *prune(ge_graph *c, const ge_tref *to, size_t n_out)
{
	size_t cap = ge_graph_capacity(c);
	unsigned char *keep = ge_xcalloc(cap + 1, 1);
	ge_opid *seeds = ge_xmalloc((n_out + 1) * sizeof *seeds);
	for (size_t i = 0; i < n_out; i++)
		seeds[i] = to[i].op;
	walk(c, seeds, n_out, keep);
	free(seeds);
	unsigned char *all = ge_xmalloc(cap + 1);
	memcpy(all, keep, cap + 1);
	ge_opid *roots;
	size_t nr = saver_roots(c, &roots);
	walk(c, roots, nr, all);
	free(roots);
	for (ge_opid id = (ge_opid)cap; id-- > 0;)
		if (ge_op_alive(c, id) && !all[id])
			ge_graph_remove_op(c, id, 1, NULL);
	free(all);
	return keep; /* what the outputs need */
}

/* Variables the outputs do not read go, with their saver entries and
 * checkpoint tensors; then what only they needed. */
static int drop_variables(ge_graph *c, const ge_tref *to, size_t n_out,
			  ge_error *err)
{
	unsigned char *need = prune(c, to, n_out);
	ge_varlist vl = {0};
	int rc = ge_graph_variables(c, &vl, err);
	for (size_t i = 0; rc == GE_OK && i < vl.n; i++) {
		if (need[vl.v[i].op])
			continue;
		char *key = vl.v[i].key ? ge_xstrdup(vl.v[i].key) : NULL;
		rc = ge_variable_remove(c, vl.v[i].name, err);
		if (rc == GE_OK && key && ge_graph_savedmodel_dir(c))
			ge_graph_checkpoint_drop(c, key);
		free(key);
	}
	ge_varlist_free(&vl);
	free(need);
	if (rc == GE_OK)
		free(prune(c, to, n_out));
	return rc;
}

/* Input i becomes a Placeholder read by everything that read it. */
static int cut_input(ge_graph *c, ge_tref t, ge_opid *ph, ge_error *err)
{
	int64_t dims[MAXR];
	int rank = ge_shapes_best(c, t, dims, MAXR);
	int dt = ge_shapes_dtype(c, t);
	if (!dt)
		dt = ge_op_output_dtype(c, t.op, t.index);
	if (dt > 100)
		dt -= 100;
	*ph = ge_make_placeholder(c, dt, dims, rank > MAXR ? -1 : rank, NULL,
				  "extract_input", err);
	if (*ph == GE_NOOP)
		return err->code;
	size_t nu = 0;
	const ge_use *u = ge_op_uses(c, t.op, &nu);
	ge_input_edit *e = ge_xmalloc((nu + 1) * sizeof *e);
	size_t ne = 0;
	for (size_t k = 0; k < nu; k++) {
		ge_tref in = ge_op_input(c, u[k].op, u[k].slot);
		if (u[k].op != *ph && in.index == t.index)
			e[ne++] = (ge_input_edit){u[k].op, u[k].slot,
						  (ge_tref){*ph, 0}};
	}
	int rc = ge_graph_set_inputs(c, e, ne, err);
	free(e);
	return rc;
}

static int extract_check(ge_graph *g, const char *const *names, size_t n,
			 ge_tref *t, ge_error *err)
{
	for (size_t i = 0; i < n; i++) {
		ge_error e2;
		if (ge_graph_resolve_tensor(g, names[i], 0, &t[i], &e2))
			return ge_err(err, GE_ENOTFOUND,
				      "extract: no tensor '%s' in %s", names[i],
				      ge_graph_name(g));
		for (size_t j = 0; j < i; j++)
			if (t[j].op == t[i].op && t[j].index == t[i].index)
				return ge_err(err, GE_EINVAL,
					      "extract: '%s' is given twice",
					      names[i]);
	}
	return GE_OK;
}

int ge_extract(ge_graph *g, const char *const *inputs, size_t n_in,
	       const char *const *outputs, size_t n_out, ge_graph **out,
	       ge_error *err)
{
	*out = NULL;
	if (!n_out)
		return ge_err(err, GE_EINVAL, "extract: no outputs");
	if (ge_is_tf2_savedmodel(g)) {
		/* cut from the signature that holds the tensors, frozen */
		ge_graph *f;
		int rc = tf2_frozen(g, "extract", inputs, n_in, outputs, n_out,
				    &f, err);
		if (!rc)
			rc = ge_extract(f, inputs, n_in, outputs, n_out, out,
					err);
		if (f)
			ge_graph_free(f);
		return rc;
	}
	ge_tref *ti = ge_xmalloc((n_in + 1) * sizeof *ti);
	ge_tref *to = ge_xmalloc((n_out + 1) * sizeof *to);
	int rc = extract_check(g, inputs, n_in, ti, err);
	if (rc == GE_OK)
		rc = extract_check(g, outputs, n_out, to, err);
	ge_graph *c = rc == GE_OK ? ge_graph_clone(g) : NULL;
	ge_opid *ph = ge_xmalloc((n_in + 1) * sizeof *ph);
	for (size_t i = 0; rc == GE_OK && i < n_in; i++) {
		rc = cut_input(c, ti[i], &ph[i], err);
		/* an output that is an input reads the placeholder */
		for (size_t k = 0; k < n_out; k++)
			if (to[k].op == ti[i].op && to[k].index == ti[i].index)
				to[k] = (ge_tref){ph[i], 0};
	}
	if (rc == GE_OK)
		rc = drop_variables(c, to, n_out, err);
	if (rc == GE_OK) {
		/* inputs take their op's name when it is free now */
		for (size_t i = 0; i < n_in; i++) {
			if (!ge_op_alive(c, ph[i]) || ti[i].index != 0)
				continue;
			size_t off, len;
			int32_t idx;
			if (ge_parse_input(inputs[i], strlen(inputs[i]), &off,
					   &len, &idx))
				continue;
			char *nm = ge_xmalloc(len + 1);
			memcpy(nm, inputs[i] + off, len);
			nm[len] = 0;
			if (ge_graph_find(c, nm) == GE_NOOP)
				ge_op_set_name(c, ph[i], nm, NULL);
			free(nm);
		}
		/* the servable's interface */
		while (ge_signature_count(c))
			ge_signature_drop(c, ge_signature_name(c, 0), NULL);
		ge_sig_key *k = ge_xcalloc(n_in + n_out + 1, sizeof *k);
		ge_buf sb = GE_BUF_INIT;
		for (size_t i = 0; i < n_in + n_out; i++) {
			ge_tref t = i < n_in ? (ge_tref){ph[i], 0} : to[i - n_in];
			k[i].key = key_of(i < n_in ? inputs[i]
						   : outputs[i - n_in]);
			k[i].tensor = ge_xstrdup(ge_tensor_fmt(c, t, &sb));
		}
		ge_buf_free(&sb);
		ge_sig_spec s = {k, n_in, k + n_in, n_out, NULL};
		rc = ge_signature_set(c, "serving_default", &s, err);
		keys_free(k, n_in + n_out);
	}
	free(ph);
	free(ti);
	free(to);
	if (rc != GE_OK) {
		if (c)
			ge_graph_free(c);
		return rc;
	}
	*out = c;
	return GE_OK;
}
