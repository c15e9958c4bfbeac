/* insert.c: a template of ops after many tensors (lib/editor/insert.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "editor/insert.h"

/* c0 and c1 are the sites; c1/noise/scale exists already, so the second
 * site's scale is c1/noise/scale_1; u is read by nobody; in the loop,
 * body reads the Enter and sits in frame "L". */
static const char *FIXTURE =
	FX_CONST("a")
	FX_CONST("b")
	FX_ADD("c0", "a", "b", "device: \"/cpu:0\"")
	FX_ADD("c1", "a", "c0", "")
	FX_ADD("r0", "c0", "c0", "")
	FX_ADD("r1", "c1", "a", "")
	FX_CONST("c1/noise/scale")
	FX_CONST("u")
	"node { name: \"enter\" op: \"Enter\" input: \"a\" "
	"attr { key: \"T\" value { type: DT_FLOAT } } "
	"attr { key: \"frame_name\" value { s: \"L\" } } }\n"
	FX_ADD("body", "enter", "enter", "")
	FX_ADD("after", "body", "a", "");

/* AttrValue{type: DT_FLOAT} */
static const uint8_t T_FLOAT[] = {0x30, 0x01};

/* scale = Const (anchored in loops), mul = Mul(site, scale) with a
 * per-site seed attr, readers move to mul */
static ge_ins_ref R_SITE = {GE_INS_SITE, 0, 0, {0, 0}};
static ge_ins_ref R_OP0 = {GE_INS_OP, 0, 0, {0, 0}};

static void template(ge_ins_op ops[2], ge_ins_attr at[3], ge_ins_ref in[2],
		     const int64_t *seeds)
{
	memset(ops, 0, 2 * sizeof *ops);
	at[0] = (ge_ins_attr){"dtype", T_FLOAT, sizeof T_FLOAT, NULL, NULL, NULL};
	at[1] = (ge_ins_attr){"T", T_FLOAT, sizeof T_FLOAT, NULL, NULL, NULL};
	at[2] = (ge_ins_attr){"seed", NULL, 0, seeds, NULL, NULL};
	in[0] = R_SITE;
	in[1] = R_OP0;
	ops[0] = (ge_ins_op){"Const", "/noise/scale", NULL, NULL, 0, NULL, 0,
			     1, at, 1};
	ops[1] = (ge_ins_op){"Mul", "/noise/mul", NULL, in, 2, NULL, 0, 0,
			     at + 1, 2};
}

/* The same edit done op by op with the graph primitives. */
static void by_hand(ge_graph *g, const char *site, int64_t seed, int anchor)
{
	ge_error err;
	char nm[256];
	ge_tref x = T(g, site);
	ge_opvec rd = GE_VEC_INIT;
	ge_tvec slots = GE_VEC_INIT;
	size_t n;
	const ge_use *u = ge_op_uses(g, x.op, &n);
	for (size_t i = 0; i < n; i++)
		if (ge_tref_eq(ge_op_input(g, u[i].op, u[i].slot), x)) {
			ge_opvec_push(&rd, u[i].op);
			ge_tvec_push(&slots, (ge_tref){u[i].slot, 0});
		}
	const char *dev = ge_op_device(g, x.op);
	snprintf(nm, sizeof nm, "%s/noise/scale", ge_op_name(g, x.op));
	ge_opid c = ge_graph_add_op(g, ge_graph_unique_name(g, nm), "Const",
				    &err);
	if (anchor)
		ge_op_add_control_input(g, c, x.op, &err);
	const char *k1[] = {"dtype"};
	const uint8_t *b1[] = {T_FLOAT};
	size_t l1[] = {sizeof T_FLOAT};
	ge_op_add_attrs_raw(g, c, 1, k1, b1, l1);
	ge_op_set_device(g, c, dev);
	snprintf(nm, sizeof nm, "%s/noise/mul", ge_op_name(g, x.op));
	ge_opid m = ge_graph_add_op(g, ge_graph_unique_name(g, nm), "Mul",
				    &err);
	ge_op_add_input(g, m, x, &err);
	ge_op_add_input(g, m, (ge_tref){c, 0}, &err);
	uint8_t sb[2] = {0x18, (uint8_t)seed};
	const char *k2[] = {"T", "seed"};
	const uint8_t *b2[] = {T_FLOAT, sb};
	size_t l2[] = {sizeof T_FLOAT, 2};
	ge_op_add_attrs_raw(g, m, 2, k2, b2, l2);
	ge_op_set_device(g, m, dev);
	for (size_t i = 0; i < rd.n; i++)
		ge_op_set_input(g, rd.v[i], (size_t)slots.v[i].op,
				(ge_tref){m, 0}, &err);
	ge_opvec_free(&rd);
	ge_tvec_free(&slots);
}

static void test_basic(void)
{
	ge_graph *g = parse(FIXTURE), *h = parse(FIXTURE);
	ge_error err = {0};
	ge_ins_op ops[2];
	ge_ins_attr at[3];
	ge_ins_ref in[2];
	int64_t seeds[4] = {7, 8, 9, 10};
	template(ops, at, in, seeds);
	ge_ins_template t = {ops, 2, 1, 0};
	ge_tref sites[4] = {T(g, "c0"), T(g, "c1"), T(g, "u"), T(g, "body")};
	ge_ins_result r;
	is_int(GE_OK,
	       ge_insert_after(g, sites, 4, &t, 1, NULL, GE_INS_SKIP_UNREAD,
			       &r, &err),
	       "insert after three read sites and one unread");
	is_int(3, (int)r.inserted, "three sites got their ops");
	ok(r.n_skipped == 1 && r.skipped[0] == 2, "the unread site is skipped");
	ok(r.outputs[2].op == GE_NOOP && r.outputs[0].op != GE_NOOP,
	   "outputs per site");
	is_string("c0/noise/mul", ge_op_name(g, r.outputs[0].op),
		  "names under the site's op");
	is_string("c1/noise/scale_1",
		  ge_op_name(g, ge_op_input(g, r.outputs[1].op, 1).op),
		  "names made unique as unique_name does");
	is_string("/cpu:0", ge_op_device(g, r.outputs[0].op),
		  "the site op's device");
	ok(ge_tref_eq(ge_op_input(g, OP(g, "r0"), 1), r.outputs[0]),
	   "a reader reading the site twice moved (second slot)");
	ok(ge_tref_eq(ge_op_input(g, OP(g, "r0"), 0), r.outputs[0]),
	   "... and first slot");
	ok(ge_tref_eq(ge_op_input(g, r.outputs[0].op, 0), T(g, "c0")),
	   "the new op still reads the site");
	ok(ge_tref_eq(ge_op_input(g, OP(g, "c1"), 1), r.outputs[0]),
	   "a reader that is itself a site moved too");
	ge_opid sc = ge_op_input(g, r.outputs[3].op, 1).op;
	is_int(1, (int)ge_op_num_control_inputs(g, sc),
	       "in a loop the Const waits on the site's op");
	is_int(0, (int)ge_op_num_control_inputs(
			  g, ge_op_input(g, r.outputs[0].op, 1).op),
	       "outside loops it does not");
	int64_t s;
	ok(!ge_op_attr_int(g, r.outputs[1].op, "seed", &s) && s == 8,
	   "per-site int attr");
	by_hand(h, "c0", 7, 0);
	by_hand(h, "c1", 8, 0);
	by_hand(h, "body", 10, 1);
	ok(same_encoding(g, h), "the same bytes as the ops added one by one");
	ge_ins_result_free(&r);
	ge_graph_free(g);
	ge_graph_free(h);
}

static void test_errors(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_ins_op ops[2];
	ge_ins_attr at[3];
	ge_ins_ref in[2];
	int64_t seeds[2] = {1, 2};
	template(ops, at, in, seeds);
	ge_ins_template t = {ops, 2, 1, 0};
	ge_ins_result r;
	uint64_t v = ge_graph_version(g);
	size_t n = ge_graph_num_ops(g);
	ge_tref twice[2] = {T(g, "c0"), T(g, "c0")};
	is_int(GE_EINVAL, ge_insert_after(g, twice, 2, &t, 1, NULL, 0, &r,
					  &err),
	       "a site given twice is refused");
	is_string("site 'c0:0' is given twice", err.msg, "... naming it");
	ge_tref bad[1] = {{OP(g, "c0"), 3}};
	is_int(GE_EINVAL, ge_insert_after(g, bad, 1, &t, 1, NULL, 0, &r, &err),
	       "an output the op does not have is refused");
	ge_ins_ref fwd = {GE_INS_OP, 1, 0, {0, 0}};
	in[1] = fwd;
	ge_tref one[1] = {T(g, "c0")};
	is_int(GE_EINVAL, ge_insert_after(g, one, 1, &t, 1, NULL, 0, &r, &err),
	       "an input naming a later template op is refused");
	in[1] = R_OP0;
	ge_ins_ref ctl[1] = {R_SITE};
	ops[0].ctrl = ctl;
	ops[0].n_ctrl = 1;
	is_int(GE_EINVAL, ge_insert_after(g, one, 1, &t, 1, NULL, 0, &r, &err),
	       "a control input on the site beside loop_anchor is refused");
	ops[0].n_ctrl = 0;
	uint32_t st[1] = {1};
	is_int(GE_EINVAL, ge_insert_after(g, one, 1, &t, 1, st, 0, &r, &err),
	       "a site's template out of range is refused");
	ok(ge_graph_version(g) == v && ge_graph_num_ops(g) == n,
	   "nothing changed");
	ge_graph_free(g);
}

static void test_dtypes(void)
{
	char txt[8192];
	snprintf(txt, sizeof txt, "%s%s", FIXTURE,
		 "node { name: \"m\" op: \"Mystery\" "
		 "attr { key: \"T\" value { type: DT_INT32 } } }\n"
		 "node { name: \"h\" op: \"Const\" "
		 "attr { key: \"dtype\" value { type: DT_HALF } } }\n");
	ge_graph *g = parse(txt);
	ge_tref s[4] = {T(g, "c0"), T(g, "h"), T(g, "m"), T(g, "enter")};
	int dt[4], dt2[4];
	ge_insert_site_dtypes(g, s, 4, NULL, dt);
	ge_insert_site_dtypes(g, s, 4, "T", dt2);
	ok(dt[0] == 1 && dt[1] == 19 && dt[3] == 1,
	   "site dtypes from the OpDef and the type attrs");
	ok(dt[2] == 0 && dt2[2] == 3, "an op without OpDef: its type attr "
				      "when asked for");
	ge_graph_free(g);
}

static void test_by_type(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_opvec v = GE_VEC_INIT;
	const char *types[] = {"Enter", "Add"};
	ge_graph_ops_of_types(g, types, 2, &v);
	is_int(7, (int)v.n, "ops of two types");
	ok(v.n == 7 && v.v[0] == OP(g, "c0") && v.v[4] == OP(g, "enter"),
	   "in node order");
	ge_opvec_free(&v);
	const char *none[] = {"Nope"};
	ge_graph_ops_of_types(g, none, 1, &v);
	is_int(0, (int)v.n, "a type no op has");
	ge_opvec_free(&v);
	ge_graph_free(g);
}

/* Names that differ only in ASCII case hash alike, whatever their
 * length (the hash folds eight bytes at a time); the bytes of
 * TensorFlow's name alphabet stay apart. */
static void test_hash_ci(void)
{
	int bad = 0;
	for (int b = 0; b < 256; b++) {
		uint8_t x[19], y[19];
		int l = b >= 'A' && b <= 'Z' ? b + 32 : b;
		for (size_t n = 1; n <= sizeof x; n++) {
			memset(x, 'q', n);
			memset(y, 'Q', n);
			x[n - 1] = (uint8_t)b;
			y[n - 1] = (uint8_t)l;
			bad += ge_hash_ci(x, n) != ge_hash_ci(y, n);
		}
	}
	is_int(0, bad, "ge_hash_ci folds ASCII case at every position");
	const char *abc = "abcdefghijklmnopqrstuvwxyz0123456789._-/\\>";
	bad = 0;
	for (size_t i = 0; abc[i]; i++)
		for (size_t j = i + 1; abc[j]; j++)
			bad += ge_hash_ci(&abc[i], 1) == ge_hash_ci(&abc[j], 1);
	is_int(0, bad, "... and keeps apart the other bytes of names");
}

int main(void)
{
	test_hash_ci();
	test_basic();
	test_errors();
	test_dtypes();
	test_by_type();
	return tap_done();
}
