/*
 * cmd_info.c: `gerewrite info MODEL`, a summary of a model for a person:
 * format and sizes, ops by type, the ops that look like inputs and
 * outputs, variables, collections and signatures, and the function
 * library (each function's ops and callers, the ops of bodies by type).
 * With --ops (--scope S, --type T) it lists ops instead, one a line, with
 * the dtype and shape of each output, inferred where the graph records
 * none (shapes.h).
 *
 * "Likely" inputs are Placeholders and the other ops that read nothing
 * (no data input) and produce something, except Consts, variables and
 * NoOps; likely outputs are the signatures' outputs, else the ops whose
 * outputs nobody reads without the training, saver and summary machinery
 * (lib/exec/iface.c).  Const sizes are the encoded
 * values, as the file holds them.  They are guesses, as the words say:
 * a GraphDef does not record its inputs and outputs (a SavedModel's
 * signatures do, and are listed too).
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dot_render.h"
#include "exec/iface.h"
#include "functions/func.h"
#include "analyses/shapes.h"
#include "formats/meta.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define LIST_MAX 20

static void human(char *out, size_t cap, double bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%.0f B", bytes);
	else
		snprintf(out, cap, "%.1f %s", bytes, units[u]);
}

static long long tree_size(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
	long long n = 0;
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		n += tree_size(sub);
	}
	closedir(d);
	return n;
}

/* "float32[?,3]" for output k of an op; "?" for an unknown dtype. */
static void tensor_desc(const ge_graph *g, ge_opid id, int k, char *out,
			size_t cap)
{
	/* inferred shapes where the graph records none (shapes.h) */
	ge_tref t = {id, k};
	const char *dt = ge_dtype_name(ge_shapes_dtype((ge_graph *)g, t));
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = ge_shapes_best((ge_graph *)g, t, dims, GE_SHAPE_MAXRANK);
	size_t n = (size_t)snprintf(out, cap, "%s", dt ? dt : "?");
	if (rank < 0) {
		snprintf(out + n, cap - n, "[*]");
		return;
	}
	if (n < cap)
		out[n++] = '[';
	for (int i = 0; i < rank && n + 24 < cap; i++) {
		if (i >= 8) {
			n += (size_t)snprintf(out + n, cap - n, ",...");
			break;
		}
		if (dims[i] < 0)
			n += (size_t)snprintf(out + n, cap - n, "%s?",
					      i ? "," : "");
		else
			n += (size_t)snprintf(out + n, cap - n, "%s%lld",
					      i ? "," : "", (long long)dims[i]);
	}
	snprintf(out + n, cap - n, "]");
}

struct typecount {
	const char *type;
	size_t n;
};

static int cmp_count(const void *a, const void *b)
{
	const struct typecount *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->type, y->type);
}

static int cmp_type(const void *a, const void *b)
{
	return strcmp(((const struct typecount *)a)->type,
		      ((const struct typecount *)b)->type);
}

static int is_placeholder(const char *t)
{
	return !strcmp(t, "Placeholder") || !strcmp(t, "PlaceholderV2") ||
	       !strcmp(t, "PlaceholderWithDefault");
}

static int is_variable(const char *t)
{
	return !strcmp(t, "VariableV2") || !strcmp(t, "Variable") ||
	       !strcmp(t, "VarHandleOp") || !strcmp(t, "TemporaryVariable") ||
	       !strcmp(t, "AutoReloadVariable");
}

/* A resource variable's output is a handle: describe what it holds. */
static void handle_desc(const ge_graph *g, ge_opid id, char *out, size_t cap)
{
	int dt;
	const char *name = ge_op_attr_type(g, id, "dtype", &dt) == 0
				   ? ge_dtype_name(dt)
				   : NULL;
	size_t n = (size_t)snprintf(out, cap, "%s", name ? name : "?");
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, "shape", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    v->shape->unknown_rank) {
		snprintf(out + n, cap - n, "[*]");
		return;
	}
	n += (size_t)snprintf(out + n, cap - n, "[");
	for (size_t i = 0; i < v->shape->n_dim && n + 24 < cap; i++) {
		int64_t d = v->shape->dim[i]->size;
		if (d < 0)
			n += (size_t)snprintf(out + n, cap - n, "%s?", i ? "," : "");
		else
			n += (size_t)snprintf(out + n, cap - n, "%s%lld",
					      i ? "," : "", (long long)d);
	}
	snprintf(out + n, cap - n, "]");
}

static void list_ops(const char *title, const ge_graph *g, const ge_opvec *v)
{
	printf("%s (%zu):\n", title, v->n);
	for (size_t i = 0; i < v->n && i < LIST_MAX; i++) {
		ge_opid id = v->v[i];
		char d[256];
		if (!strcmp(ge_op_type(g, id), "VarHandleOp"))
			handle_desc(g, id, d, sizeof d);
		else
			tensor_desc(g, id, 0, d, sizeof d);
		if (ge_op_num_outputs(g, id) > 0)
			printf("  %s:0  %s  (%s)\n", ge_op_name(g, id), d,
			       ge_op_type(g, id));
		else
			printf("  %s  (%s)\n", ge_op_name(g, id),
			       ge_op_type(g, id));
	}
	if (v->n > LIST_MAX)
		printf("  ... %zu more\n", v->n - LIST_MAX);
}

/* The signatures' outputs, else the unread ops that are not machinery. */
static void print_likely_outputs(ge_graph *g, ge_opvec *outs)
{
	size_t left = 0;
	int sig = ge_likely_outputs(g, outs, &left);
	list_ops(sig ? "likely outputs, from the signatures" : "likely outputs",
		 g, outs);
	if (left)
		printf("  (%zu more unread op%s left out: training, saver, "
		       "summary, initialization and loop or shape "
		       "bookkeeping)\n",
		       left, left == 1 ? "" : "s");
}

static int is_arg_or_ret(const char *t)
{
	return !strcmp(t, "_Arg") || !strcmp(t, "_Retval");
}

/* Call sites per function, from one pass over the graph and the bodies. */
static void tally_calls(ge_graph *g, ge_graph *in, size_t *calls)
{
	size_t cap = ge_graph_capacity(in);
	for (size_t i = 0; i < cap; i++) {
		if (!ge_op_alive(in, (ge_opid)i))
			continue;
		ge_func_call *c;
		size_t k = ge_op_func_calls(in, (ge_opid)i, &c);
		for (size_t j = 0; j < k; j++)
			if (c[j].f != GE_NOFUNC && c[j].f < ge_func_capacity(g))
				calls[c[j].f]++;
		free(c);
	}
}

/* The library: each function (name, ops of its body without _Arg and
 * _Retval, call sites), then the ops of all bodies by type. */
static void print_functions(ge_graph *g, long top)
{
	size_t nf = ge_func_capacity(g);
	if (!ge_func_count(g))
		return;
	size_t *calls = ge_xcalloc(nf + 1, sizeof *calls);
	size_t *nops = ge_xcalloc(nf + 1, sizeof *nops);
	tally_calls(g, g, calls);
	size_t total = 0, nt = 0, cap_t = 64;
	struct typecount *tc = ge_xmalloc(cap_t * sizeof *tc);
	for (size_t f = 0; f < nf; f++) {
		ge_graph *b = ge_func_alive(g, (ge_funcid)f)
				      ? ge_func_body(g, (ge_funcid)f, NULL)
				      : NULL;
		if (!b)
			continue;
		tally_calls(g, b, calls);
		size_t cap = ge_graph_capacity(b);
		for (size_t i = 0; i < cap; i++) {
			const char *t = ge_op_type(b, (ge_opid)i);
			if (!ge_op_alive(b, (ge_opid)i) || is_arg_or_ret(t))
				continue;
			nops[f]++;
			if (nt == cap_t) {
				cap_t *= 2;
				tc = ge_xrealloc(tc, cap_t * sizeof *tc);
			}
			tc[nt].type = t;
			tc[nt++].n = 1;
		}
		total += nops[f];
	}
	printf("functions (%zu, %zu ops in their bodies):\n", ge_func_count(g),
	       total);
	size_t shown = 0, limit = top >= 0 ? (size_t)top : LIST_MAX;
	for (size_t f = 0; f < nf; f++) {
		if (!ge_func_alive(g, (ge_funcid)f))
			continue;
		if (shown++ == limit) {
			printf("  ... %zu more\n", ge_func_count(g) - limit);
			break;
		}
		printf("  %s  %zu op%s, %zu caller%s\n", ge_func_name(g, (ge_funcid)f),
		       nops[f], nops[f] == 1 ? "" : "s", calls[f],
		       calls[f] == 1 ? "" : "s");
	}
	/* body ops by type: interned per body, so fold by name */
	qsort(tc, nt, sizeof *tc, cmp_type);
	size_t ntypes = 0;
	for (size_t i = 0; i < nt; i++) {
		if (ntypes && !strcmp(tc[ntypes - 1].type, tc[i].type))
			tc[ntypes - 1].n++;
		else
			tc[ntypes++] = tc[i];
	}
	qsort(tc, ntypes, sizeof *tc, cmp_count);
	printf("ops by type in function bodies:\n");
	for (size_t i = 0; i < ntypes; i++) {
		if (top >= 0 && (long)i >= top) {
			printf("  ... %zu more types\n", ntypes - i);
			break;
		}
		printf("  %7zu  %s\n", tc[i].n, tc[i].type);
	}
	free(tc);
	free(calls);
	free(nops);
}

/* A TensorInfo's shape as "[?,1]" (into sb), or "" when it has none. */
static const char *info_shape(const Tensorflow__TensorInfo *t, ge_buf *sb)
{
	sb->len = 0;
	if (!t || !t->tensor_shape || t->tensor_shape->unknown_rank)
		return "";
	int64_t dims[64];
	int r = (int)t->tensor_shape->n_dim;
	if (r > 64)
		return "";
	for (int i = 0; i < r; i++)
		dims[i] = t->tensor_shape->dim[i]->size;
	ge_shape_format(sb, r, dims);
	ge_buf_addc(sb, 0);
	return (const char *)sb->data;
}

static void print_signatures(ge_graph *g)
{
	size_t n = ge_signature_count(g);
	if (!n)
		return;
	ge_buf sb = GE_BUF_INIT;
	printf("signatures (%zu):\n", n);
	for (size_t i = 0; i < n; i++) {
		const char *name = ge_signature_name(g, i);
		Tensorflow__SignatureDef *s = ge_signature_get(g, name);
		if (!s) {
			printf("  %s (does not decode)\n", name);
			continue;
		}
		printf("  %s  %s\n", name, s->method_name ? s->method_name : "");
		for (size_t k = 0; k < s->n_inputs; k++) {
			Tensorflow__TensorInfo *t = s->inputs[k]->value;
			const char *dt = t ? ge_dtype_name((int)t->dtype) : NULL;
			printf("    in   %s -> %s %s%s\n", s->inputs[k]->key,
			       t && t->encoding_case ==
					    TENSORFLOW__TENSOR_INFO__ENCODING_NAME
				       ? t->name
				       : "(composite)",
			       dt ? dt : "", info_shape(t, &sb));
		}
		for (size_t k = 0; k < s->n_outputs; k++) {
			Tensorflow__TensorInfo *t = s->outputs[k]->value;
			const char *dt = t ? ge_dtype_name((int)t->dtype) : NULL;
			printf("    out  %s <- %s %s%s\n", s->outputs[k]->key,
			       t && t->encoding_case ==
					    TENSORFLOW__TENSOR_INFO__ENCODING_NAME
				       ? t->name
				       : "(composite)",
			       dt ? dt : "", info_shape(t, &sb));
		}
	}
	ge_buf_free(&sb);
}

static void print_collections(ge_graph *g)
{
	size_t n = ge_collection_count(g);
	if (!n)
		return;
	printf("collections (%zu):\n", n);
	for (size_t i = 0; i < n; i++) {
		const char *name = ge_collection_name(g, i);
		Tensorflow__CollectionDef *c = ge_collection_get(g, name);
		const char *kind = "empty";
		size_t items = 0;
		if (!c) {
			kind = "does not decode";
		} else {
			switch (c->kind_case) {
			case TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST:
				kind = "node_list";
				items = c->node_list->n_value;
				break;
			case TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST:
				kind = "bytes_list";
				items = c->bytes_list->n_value;
				break;
			case TENSORFLOW__COLLECTION_DEF__KIND_INT64_LIST:
				kind = "int64_list";
				items = c->int64_list->n_value;
				break;
			case TENSORFLOW__COLLECTION_DEF__KIND_FLOAT_LIST:
				kind = "float_list";
				items = c->float_list->n_value;
				break;
			case TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST:
				kind = "any_list";
				items = c->any_list->n_value;
				break;
			default:
				break;
			}
		}
		printf("  %-32s %s, %zu item%s\n", name, kind, items,
		       items == 1 ? "" : "s");
	}
}

/* ------------------------------------------------------------ --ops */

/* Whether type t is one of the comma-separated types. */
static int type_listed(const char *types, const char *t)
{
	size_t n = strlen(t);
	for (const char *p = types; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !strncmp(p, t, n))
			return 1;
		p += k;
		if (*p)
			p++;
	}
	return 0;
}

/* Each type of the list that no op has is an error naming the types
 * present that differ from it only in case, or that start alike. */
static int check_types(ge_graph *g, const char *model, const char *types)
{
	size_t cap = ge_graph_capacity(g);
	for (const char *p = types; *p;) {
		size_t k = strcspn(p, ",");
		char *want = ge_xstrndup(p, k);
		int found = 0;
		ge_buf near = GE_BUF_INIT;
		for (size_t i = 0; i < cap && !found; i++) {
			if (!ge_op_alive(g, (ge_opid)i))
				continue;
			const char *t = ge_op_type(g, (ge_opid)i);
			if (!strcmp(t, want)) {
				found = 1;
			} else if ((!strcasecmp(t, want) ||
				    (k >= 4 && !strncasecmp(t, want, 4))) &&
				   near.len < 200) {
				ge_buf_addc(&near, 0);
				int dup = strstr((const char *)near.data, t) != NULL;
				near.len--;
				if (!dup) {
					if (near.len)
						ge_buf_adds(&near, ", ");
					ge_buf_adds(&near, t);
				}
			}
		}
		ge_buf_addc(&near, 0);
		if (!found) {
			if (near.len > 1)
				cli_errmsg("%s: no op of type '%s'; nearest "
					   "types: %s", model, want,
					   (const char *)near.data);
			else
				cli_errmsg("%s: no op of type '%s'", model, want);
		}
		ge_buf_free(&near);
		free(want);
		if (!found)
			return EXIT_USAGE;
		p += k;
		if (*p)
			p++;
	}
	return 0;
}

/* info --ops: every op (of the scope, of the types) in node order, with
 * its type and the dtype and shape of each output, inferred where the
 * graph records none. */
static int print_ops(ge_graph *g, const char *model, const char *scope,
		     const char *types)
{
	if (scope && !dot_scope_exists(g, scope)) {
		ge_buf near = GE_BUF_INIT;
		dot_suggest_scopes(g, scope, &near);
		ge_buf_addc(&near, 0);
		if (near.len > 1)
			cli_errmsg("%s: no op in scope '%s'; nearest scopes: %s",
				   model, scope, (const char *)near.data);
		else
			cli_errmsg("%s: no op in scope '%s'", model, scope);
		ge_buf_free(&near);
		return EXIT_USAGE;
	}
	if (types && check_types(g, model, types))
		return EXIT_USAGE;
	size_t cap = ge_graph_capacity(g), sn = scope ? strlen(scope) : 0;
	size_t shown = 0;
	int wname = 2, wtype = 4;
	unsigned char *sel = ge_xcalloc(cap + 1, 1);
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		const char *name = ge_op_name(g, id), *t = ge_op_type(g, id);
		if (scope && (strncmp(name, scope, sn) != 0 ||
			      (name[sn] && name[sn] != '/')))
			continue;
		if (types && !type_listed(types, t))
			continue;
		sel[i] = 1;
		int n = (int)strlen(name), k = (int)strlen(t);
		wname = n > wname ? (n < 60 ? n : 60) : wname;
		wtype = k > wtype ? (k < 30 ? k : 30) : wtype;
	}
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!sel[i])
			continue;
		if (!shown++)
			printf("%-*s  %-*s  outputs\n", wname, "op", wtype, "type");
		printf("%-*s  %-*s ", wname, ge_op_name(g, id), wtype,
		       ge_op_type(g, id));
		int nout = ge_op_num_outputs(g, id);
		if (nout <= 0)
			printf(" -");
		for (int k = 0; k < nout; k++) {
			char d[256];
			tensor_desc(g, id, k, d, sizeof d);
			printf("%s%s", k ? ", " : " ", d);
		}
		printf("\n");
	}
	free(sel);
	printf("(%zu op%s", shown, shown == 1 ? "" : "s");
	if (scope)
		printf(" in scope %s", scope);
	if (types)
		printf(" of type %s", types);
	printf(")\n");
	return 0;
}

enum { O_FORMAT = 1, O_TAGS, O_TOP, O_OPS, O_SCOPE, O_TYPE };

static const struct cli_opt info_opts[] = {
	{"format", 'f', 1, O_FORMAT},
	{"tags", 't', 1, O_TAGS},
	{"top", 0, 1, O_TOP},
	{"ops", 0, 0, O_OPS},
	{"scope", 's', 1, O_SCOPE},
	{"type", 0, 1, O_TYPE},
	{NULL, 0, 0, 0},
};

int cmd_info(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val;
	int key, rc = 0, ops = 0;
	long top = -1;
	const char *scope = NULL, *types = NULL;
	cli_args_init(&a, "info", argc, argv);
	while ((key = cli_getopt(&a, info_opts, &val)) > 0) {
		switch (key) {
		case O_FORMAT: mo.format = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_OPS: ops = 1; break;
		case O_SCOPE: scope = val; ops = 1; break;
		case O_TYPE: types = val; ops = 1; break;
		case O_TOP: {
			char *end;
			top = strtol(val, &end, 10);
			if (*end || top < 0) {
				rc = cli_usage("info", "--top needs a number "
						       "(got '%s')", val);
				goto out;
			}
			break;
		}
		}
	}
	if (key < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.npos != 1) {
		rc = cli_usage("info", "one MODEL is needed");
		goto out;
	}
	const char *path = a.pos[0];
	mo.allow_missing_variables = 1;
	mo.no_check = 1;
	ge_graph *g;
	if ((rc = cli_load_model(path, &mo, &g)))
		goto out;
	if (ops) {
		rc = print_ops(g, path, scope, types);
		ge_graph_free(g);
		goto out;
	}

	/* ---- header and sizes */
	size_t cap = ge_graph_capacity(g), nops = ge_graph_num_ops(g);
	ge_format f = ge_graph_format(g);
	printf("%s\n", path);
	printf("  format:  %s\n", ge_format_name(f));
	struct stat st;
	char h1[32], h2[32];
	const char *dir = ge_graph_savedmodel_dir(g);
	if (dir) {
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", dir,
			 ge_format_is_text(f) ? "saved_model.pbtxt"
					      : "saved_model.pb");
		human(h1, sizeof h1, stat(p, &st) == 0 ? (double)st.st_size : 0);
		snprintf(p, sizeof p, "%s/variables", dir);
		long long vs = tree_size(p);
		human(h2, sizeof h2, (double)vs);
		printf("  size:    %s (%s), variables/ %s\n", h1,
		       ge_format_is_text(f) ? "saved_model.pbtxt"
					    : "saved_model.pb",
		       vs ? h2 : "absent or empty");
	} else if (stat(path, &st) == 0) {
		human(h1, sizeof h1, (double)st.st_size);
		printf("  size:    %s\n", h1);
	}

	/* ---- ops by type, inputs, outputs, variables */
	struct typecount *tc = ge_xcalloc(nops + 1, sizeof *tc);
	size_t nt = 0, nconst = 0;
	double const_bytes = 0;
	ge_opvec ins = GE_VEC_INIT, outs = GE_VEC_INIT, vars = GE_VEC_INIT;
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		const char *t = ge_op_type(g, id);
		tc[nt].type = t;
		tc[nt++].n = 1;
		int nout = ge_op_num_outputs(g, id);
		size_t nuses, ncouts;
		ge_op_uses(g, id, &nuses);
		ge_op_control_outputs(g, id, &ncouts);
		int is_const = !strcmp(t, "Const");
		if (is_const) {
			size_t len;
			if (ge_op_attr_raw(g, id, "value", &len))
				const_bytes += (double)len;
			nconst++;
		}
		if (is_variable(t))
			ge_opvec_push(&vars, id);
		else if (is_placeholder(t) ||
			 (!is_const && strcmp(t, "NoOp") != 0 && nout > 0 &&
			  ge_op_num_inputs(g, id) == 0))
			ge_opvec_push(&ins, id);
	}
	/* count by type: sort by name, fold, then by count */
	qsort(tc, nt, sizeof *tc, cmp_type);
	size_t ntypes = 0;
	for (size_t i = 0; i < nt; i++) {
		if (ntypes && !strcmp(tc[ntypes - 1].type, tc[i].type))
			tc[ntypes - 1].n++;
		else
			tc[ntypes++] = tc[i];
	}
	qsort(tc, ntypes, sizeof *tc, cmp_count);
	human(h1, sizeof h1, const_bytes);
	printf("  ops:     %zu (%zu types)\n", nops, ntypes);
	printf("  consts:  %zu, %s of values\n", nconst, h1);
	printf("ops by type:\n");
	for (size_t i = 0; i < ntypes; i++) {
		if (top >= 0 && (long)i >= top) {
			printf("  ... %zu more types\n", ntypes - i);
			break;
		}
		printf("  %7zu  %s\n", tc[i].n, tc[i].type);
	}
	list_ops("likely inputs", g, &ins);
	print_likely_outputs(g, &outs);
	if (vars.n)
		list_ops("variables", g, &vars);
	print_collections(g);
	print_signatures(g);
	print_functions(g, top);
	free(tc);
	ge_opvec_free(&ins);
	ge_opvec_free(&outs);
	ge_opvec_free(&vars);
	ge_graph_free(g);
out:
	cli_args_free(&a);
	return rc;
}
