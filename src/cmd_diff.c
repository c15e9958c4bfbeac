/*
 * cmd_diff.c: `gerewrite diff A B`: the ops removed (-), added (+),
 * changed (~) and moved (>) from A to B, matched by name and by
 * provenance (lib/editor/diff.c), one line each, then a count.  A removed op
 * merged into an op of B names it ("-> into y"); a moved op names the op
 * of A it was made from.  A changed attr shows its value on both sides ("shape
 * [-1,3] -> [8,3]"; "(none)" on the side without it); a tensor attr (a
 * Const's value) its dtype and shape and the largest absolute
 * difference.  Then the
 * function libraries: functions only in A (-) or B (+), and for a
 * function in both whose bytes differ, the ops of its body the same way,
 * each line prefixed "function 'f': ".  Then collections, signatures and
 * the checkpoints' entries (diff_meta.c).  Exit 0 when the graphs, libraries, collections and
 * signatures are the same, 1 when not.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "editor/diff.h"
#include "diff_page.h"
#include "exec/verify.h"
#include "functions/func.h"
#include "formats/model.h"
#include "base/tensordiff.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"


/* ------------------------------------------------------------ the command */

/* Prints (unless quiet) and counts the op differences of two graphs;
 * returns how many there are. */
static size_t diff_ops(const ge_graph *ga, const ge_graph *gb,
		       const char *prefix, int print, size_t counts[4],
		       json_t *arr)
{
	ge_diff_entry *e;
	size_t n = ge_graph_diff(ga, gb, &e);
	ge_buf line = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		counts[e[i].kind]++;
		if (arr)
			json_array_append_new(arr, diff_entry_json(ga, gb, &e[i]));
		if (!print)
			continue;
		line.len = 0;
		ge_buf_adds(&line, prefix);
		diff_describe(&line, ga, gb, &e[i]);
		printf("%s\n", line.data);
	}
	ge_buf_free(&line);
	free(e);
	return n;
}

/* A function's entry in --json: {"kind", "name"}, and "ops" for a
 * changed one. */
static json_t *func_json(json_t *farr, const char *kind, const char *name)
{
	if (!farr)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "name", diff_jstr(name));
	json_array_append_new(farr, o);
	return o;
}

/* The function libraries: returns the number of functions that differ
 * (fcounts: removed, added, changed); body op differences go to counts,
 * and with farr (--json) each function's entry to farr. */
static size_t diff_functions(ge_graph *ga, ge_graph *gb, int say,
			     size_t counts[4], size_t fcounts[3], json_t *farr)
{
	if (ge_flib_load(ga, NULL) || ge_flib_load(gb, NULL))
		return 0;
	size_t n = 0;
	ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT, pre = GE_BUF_INIT;
	for (size_t f = 0; f < ge_func_capacity(ga); f++) {
		if (!ge_func_alive(ga, (ge_funcid)f))
			continue;
		const char *name = ge_func_name(ga, (ge_funcid)f);
		ge_funcid g2 = ge_func_find(gb, name);
		if (g2 == GE_NOFUNC) {
			fcounts[GE_DIFF_REMOVED]++;
			n++;
			func_json(farr, "removed", name);
			if (say)
				printf("- function %s\n", name);
			continue;
		}
		/* the same bytes: nothing to parse */
		x.len = y.len = 0;
		ge_func_encode(ga, (ge_funcid)f, &x);
		ge_func_encode(gb, g2, &y);
		if (x.len == y.len && !memcmp(x.data, y.data, x.len))
			continue;
		ge_graph *ba = ge_func_body(ga, (ge_funcid)f, NULL);
		ge_graph *bb = ge_func_body(gb, g2, NULL);
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", name);
		json_t *fo = func_json(farr, "changed", name), *ops = NULL;
		if (fo) {
			ops = json_array();
			json_object_set_new(fo, "ops", ops);
		}
		size_t k = ba && bb ? diff_ops(ba, bb, (char *)pre.data, say,
					       counts, ops)
				    : 0;
		if (!k && say)
			printf("~ function %s: signature, attrs or returns\n",
			       name);
		fcounts[GE_DIFF_CHANGED]++;
		n++;
	}
	for (size_t f = 0; f < ge_func_capacity(gb); f++) {
		if (!ge_func_alive(gb, (ge_funcid)f))
			continue;
		const char *name = ge_func_name(gb, (ge_funcid)f);
		if (ge_func_find(ga, name) == GE_NOFUNC) {
			fcounts[GE_DIFF_ADDED]++;
			n++;
			func_json(farr, "added", name);
			if (say)
				printf("+ function %s\n", name);
		}
	}
	ge_buf_free(&x);
	ge_buf_free(&y);
	ge_buf_free(&pre);
	return n;
}

/* --json: the whole difference as one object on standard output. */
static int print_json(const char *pa, const char *pb, json_t *ops,
		      json_t *funcs, json_t *meta[3], const size_t counts[4],
		      const size_t fcounts[3])
{
	json_t *o = json_object(), *sum = json_object(), *fs = json_object();
	json_object_set_new(o, "a", diff_jstr(pa));
	json_object_set_new(o, "b", diff_jstr(pb));
	for (int k = 0; k < 4; k++)
		json_object_set_new(sum, diff_kind_names[k],
				    json_integer((json_int_t)counts[k]));
	for (int k = 0; k < 3; k++)
		json_object_set_new(fs, diff_kind_names[k],
				    json_integer((json_int_t)fcounts[k]));
	json_object_set_new(sum, "functions", fs);
	json_object_set_new(o, "summary", sum);
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "functions", funcs);
	json_object_set_new(o, "collections", meta[0]);
	json_object_set_new(o, "signatures", meta[1]);
	json_object_set_new(o, "checkpoint", meta[2]);
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return EXIT_USAGE;
	printf("%s\n", text);
	free(text);
	return 0;
}

/* --verify (with --html): runs A and B on the same seeded inputs (the
 * runner, lib/exec/verify.h) and gives the page the figures per output
 * and per tensor both runs produce under one name.  NULL after a
 * message when a run failed. */
static json_t *run_verify(const char *pa, const char *pb,
			  const struct cli_model_opts *mo)
{
	ge_graph *a = NULL, *b = NULL;
	ge_load_opts lo = {0};
	lo.tags = mo->tags;
	ge_error err;
	int rc = ge_load(pa, &lo, &a, &err);
	if (!rc)
		rc = ge_load(pb, &lo, &b, &err);
	ge_xverify_opts o = GE_XVERIFY_OPTS_INIT;
	o.per_op = 1;
	o.per_op_each = 1;
	ge_xverify_result r;
	memset(&r, 0, sizeof r);
	if (!rc)
		rc = ge_xverify(a, b, &o, &r, &err);
	json_t *j = NULL;
	if (rc) {
		cli_errmsg("--verify: %s", err.msg);
	} else {
		ge_buf t = GE_BUF_INIT;
		ge_xverify_json(&r, pa, pb, &t);
		j = json_loadb(t.len ? (const char *)t.data : "{}", t.len, 0,
			       NULL);
		ge_buf_free(&t);
		json_t *each = json_array();
		for (size_t i = 0; j && i < r.neach; i++) {
			const ge_xcmp *c = &r.each_cmp[i];
			json_t *e = json_array();
			json_array_append_new(e, json_string(r.each_tensor[i]));
			json_array_append_new(e, isfinite(c->max_abs)
						 ? json_real(c->max_abs)
						 : json_null());
			json_array_append_new(e, isfinite(c->max_rel)
						 ? json_real(c->max_rel)
						 : json_null());
			json_array_append_new(e, json_boolean(ge_xcmp_ok(c)));
			json_array_append_new(each, e);
		}
		if (j)
			json_object_set_new(j, "tensors", each);
		else
			json_decref(each);
	}
	ge_xverify_result_free(&r);
	if (a)
		ge_graph_free(a);
	if (b)
		ge_graph_free(b);
	return j;
}

enum { O_TAGS = 1, O_QUIET, O_JSON, O_HTML, O_VERIFY };

static const struct cli_opt diff_opts[] = {
	{"tags", 't', 1, O_TAGS},
	{"quiet", 'q', 0, O_QUIET},
	{"json", 0, 0, O_JSON},
	{"html", 0, 1, O_HTML},
	{"verify", 0, 0, O_VERIFY},
	{NULL, 0, 0, 0},
};

int cmd_diff(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val, *html = NULL;
	int key, rc = 0, quiet = 0, json = 0, verify = 0;
	cli_args_init(&a, "diff", argc, argv);
	while ((key = cli_getopt(&a, diff_opts, &val)) > 0) {
		switch (key) {
		case O_TAGS: mo.tags = val; break;
		case O_QUIET: quiet = 1; break;
		case O_JSON: json = 1; break;
		case O_HTML: html = val; break;
		case O_VERIFY: verify = 1; break;
		}
	}
	if (key < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.npos != 2) {
		rc = cli_usage("diff", "two models are needed (A B)");
		goto out;
	}
	if (verify && !html) {
		rc = cli_usage("diff", "--verify goes with --html");
		goto out;
	}
	if (html && !diff_page_can_draw()) {
		rc = EXIT_USAGE;
		goto out;
	}
	mo.allow_missing_variables = 1;
	mo.no_check = 1;
	ge_graph *ga, *gb;
	if ((rc = cli_load_model(a.pos[0], &mo, &ga)))
		goto out;
	if ((rc = cli_load_model(a.pos[1], &mo, &gb))) {
		ge_graph_free(ga);
		goto out;
	}
	size_t counts[4] = {0, 0, 0, 0}, fcounts[3] = {0, 0, 0};
	/* the page shows the functions, collections, signatures and
	 * checkpoint entries as --json gives them */
	int keep = json || html;
	json_t *ops = json ? json_array() : NULL;
	json_t *funcs = keep ? json_array() : NULL;
	int say = !quiet && !json;
	size_t n = diff_ops(ga, gb, "", say, counts, ops);
	size_t nf = diff_functions(ga, gb, say, counts, fcounts, funcs);
	json_t *meta[3] = {keep ? json_array() : NULL,
			   keep ? json_array() : NULL,
			   keep ? json_array() : NULL};
	size_t nm = diff_meta(ga, gb, say, meta[0], meta[1]);
	nm += diff_checkpoints(a.pos[0], a.pos[1], say, meta[2]);
	if (html) {
		struct diff_page_in in = {a.pos[0], a.pos[1], ga, gb, NULL,
					  json_object()};
		json_object_set(in.more, "functions", funcs);
		json_object_set(in.more, "collections", meta[0]);
		json_object_set(in.more, "signatures", meta[1]);
		json_object_set(in.more, "checkpoint", meta[2]);
		if (verify && !(in.verify = run_verify(a.pos[0], a.pos[1], &mo)))
			rc = EXIT_USAGE;
		if (!rc)
			rc = diff_page_write(html, &in);
		json_decref(in.verify);
		json_decref(in.more);
	}
	if (say && (n || nf)) {
		printf("%zu removed, %zu added, %zu changed",
		       counts[GE_DIFF_REMOVED], counts[GE_DIFF_ADDED],
		       counts[GE_DIFF_CHANGED]);
		if (counts[GE_DIFF_MOVED])
			printf(", %zu moved", counts[GE_DIFF_MOVED]);
		printf("\n");
	}
	if (say && nf)
		printf("functions: %zu removed, %zu added, %zu changed\n",
		       fcounts[GE_DIFF_REMOVED], fcounts[GE_DIFF_ADDED],
		       fcounts[GE_DIFF_CHANGED]);
	if (json && !rc && !quiet)
		rc = print_json(a.pos[0], a.pos[1], ops, funcs, meta, counts,
				fcounts);
	else {
		json_decref(ops);
		json_decref(funcs);
		json_decref(meta[0]);
		json_decref(meta[1]);
		json_decref(meta[2]);
	}
	n += nf + nm;
	ge_graph_free(ga);
	ge_graph_free(gb);
	if (!rc)
		rc = n ? EXIT_RUNTIME : 0;
out:
	cli_args_free(&a);
	return rc;
}
