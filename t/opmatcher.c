/* opmatcher.c: graph_editor's OpMatcher (lib/editor/opmatcher.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/opmatcher.h"
#include "editor/select.h"

#define CONST(n) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
#define ADD(n, x, y, extra) \
	"node { name: \"" n "\" op: \"Add\" input: \"" x "\" input: \"" y \
	"\" " extra " attr { key: \"T\" value { type: DT_FLOAT } } }\n"

static const char *FIXTURE =
	CONST("a")
	CONST("foo/b")
	ADD("foo/c", "a", "foo/b", "")
	CONST("foo/d")
	ADD("foo/bar/e", "foo/c", "foo/d", "")
	ADD("foo/bar/f", "foo/c", "foo/d", "")
	ADD("foo/bar/g", "foo/c", "a", "")
	ADD("foo/bar/h", "foo/bar/f", "foo/bar/g", "input: \"^foo/c\"");

static ge_opmatcher *rx(const char *pattern)
{
	ge_error err = {0};
	ge_opmatcher *m = ge_opmatcher_new();
	if (ge_opmatcher_add_regex(m, pattern, &err) != GE_OK) {
		printf("Bail out! regex %s: %s\n", pattern, err.msg);
		exit(1);
	}
	return m;
}

static ge_opmatcher *ty(const char *type)
{
	ge_opmatcher *m = ge_opmatcher_new();
	ge_opmatcher_add_types(m, &type, 1);
	return m;
}

static int match(ge_opmatcher *m, const ge_graph *g, const char *op)
{
	ge_error err = {0};
	return ge_opmatcher_match(m, g, OP(g, op), &err);
}

static int name_has_f(const ge_graph *g, ge_opid op, void *ud)
{
	(void)ud;
	return strstr(ge_op_name(g, op), "/f") != NULL;
}

int main(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_opmatcher *m, *s[3];

	m = rx("^.*/f$");
	is_int(1, match(m, g, "foo/bar/f"), "a regex filter");
	is_int(0, match(m, g, "foo/bar/e"), "... rejects other names");
	ge_opmatcher_free(m);

	m = rx("bar/f");
	is_int(1, match(m, g, "foo/bar/f"), "regexes search, unanchored");
	ge_opmatcher_free(m);

	m = ge_opmatcher_new();
	ge_opmatcher_add_op(m, OP(g, "foo/c"));
	is_int(1, match(m, g, "foo/c"), "an op filter accepts that op");
	is_int(0, match(m, g, "a"), "... only");
	ge_opmatcher_free(m);

	m = ge_opmatcher_new();
	ge_opmatcher_add_fn(m, name_has_f, NULL);
	is_int(1, match(m, g, "foo/bar/f"), "a callback filter");
	is_int(0, match(m, g, "foo/bar/g"), "... rejecting");
	ge_opmatcher_add_regex(m, "^foo/", &err);
	is_int(1, match(m, g, "foo/bar/f"), "all positive filters must pass");
	ge_opmatcher_free(m);

	m = ge_opmatcher_new();
	is_int(1, match(m, g, "a"), "no filter matches everything (True)");
	ge_opmatcher_free(m);

	/* input_ops */
	m = rx("^.*/f$");
	s[0] = rx("^.*/c$");
	s[1] = rx("^.*/d$");
	is_int(GE_OK, ge_opmatcher_input_ops(m, s, 2, &err), "input_ops");
	is_int(1, match(m, g, "foo/bar/f"), "inputs matched in order");
	is_int(GE_EINVAL, ge_opmatcher_input_ops(m, s, 2, &err),
	       "input_ops can be set once");
	ok(strstr(err.msg, "already set") != NULL, "... says so: %s", err.msg);
	ge_opmatcher_free(m);

	m = rx("^.*/f$");
	ge_opmatcher *rev[2] = {s[1], s[0]};
	ge_opmatcher_input_ops(m, rev, 2, &err);
	is_int(0, match(m, g, "foo/bar/f"), "input order matters");
	ge_opmatcher_free(m);

	m = rx("^.*/f$");
	ge_opmatcher_input_ops(m, s, 1, &err);
	is_int(0, match(m, g, "foo/bar/f"), "the input count must be equal");
	ge_opmatcher_free(m);

	m = rx("^.*/f$");
	ge_opmatcher *any_d[2] = {NULL, s[1]};
	ge_opmatcher_input_ops(m, any_d, 2, &err);
	is_int(1, match(m, g, "foo/bar/f"), "a NULL input matcher is a wildcard");
	ge_opmatcher_free(m);
	ge_opmatcher_free(s[0]);
	ge_opmatcher_free(s[1]);

	/* op_type: exact (decision 11) */
	m = rx("^.*/f$");
	s[0] = ty("Add");
	s[1] = ty("Const");
	ge_opmatcher_input_ops(m, s, 2, &err);
	is_int(1, match(m, g, "foo/bar/f"), "op_type on inputs");
	ge_opmatcher_free(m);
	ge_opmatcher_free(s[0]);
	ge_opmatcher_free(s[1]);
	const char *ad = "Ad", *addx = "AddN,Add";
	is_int(0, ge_op_type_in(g, OP(g, "foo/c"), &ad, 1),
	       "op_type(\"Ad\") does not match Add (no substrings)");
	is_int(0, ge_op_type_in(g, OP(g, "foo/c"), &addx, 1),
	       "op_type is not a substring test either way");
	const char *two[2] = {"Const", "Add"};
	is_int(1, ge_op_type_in(g, OP(g, "foo/c"), two, 2), "a list of types");

	/* output_ops and control_input_ops (graph_editor's test) */
	m = rx("^.*/f$");
	s[0] = rx("^.*/c$");
	s[1] = rx("^.*/d$");
	ge_opmatcher_input_ops(m, s, 2, &err);
	ge_opmatcher *h = rx("^.*/h$");
	ge_opmatcher *hc = rx("^.*/c$");
	is_int(GE_OK, ge_opmatcher_control_input_ops(h, &hc, 1, &err),
	       "control_input_ops");
	size_t zero = 0;
	is_int(GE_OK, ge_opmatcher_output_ops(h, NULL, &zero, 1, &err),
	       "output_ops([]): one output with no consumers");
	ge_opmatcher *const hl[1] = {h};
	ge_opmatcher *const *lists[1] = {hl};
	size_t one = 1;
	is_int(GE_OK, ge_opmatcher_output_ops(m, lists, &one, 1, &err),
	       "output_ops");
	is_int(1, match(m, g, "foo/bar/f"), "nested matchers");
	is_int(GE_EINVAL, ge_opmatcher_control_input_ops(h, &hc, 1, &err),
	       "control_input_ops can be set once");
	is_int(GE_EINVAL, ge_opmatcher_output_ops(h, NULL, &zero, 1, &err),
	       "output_ops can be set once");
	ge_opmatcher_free(h);   /* still referenced by m */
	ge_opmatcher_free(hc);
	is_int(1, match(m, g, "foo/bar/f"), "sub-matchers are kept alive");
	ge_opmatcher_free(m);
	ge_opmatcher_free(s[0]);
	ge_opmatcher_free(s[1]);

	m = rx("^.*/h$");
	hc = rx("^a$");
	ge_opmatcher_control_input_ops(m, &hc, 1, &err);
	is_int(0, match(m, g, "foo/bar/h"), "control inputs are matched");
	ge_opmatcher_free(m);
	ge_opmatcher_free(hc);

	/* consumer order matters */
	ge_opmatcher *e = rx("/e$"), *f = rx("/f$"), *gg = rx("/g$");
	ge_opmatcher *const efg[3] = {e, f, gg};
	ge_opmatcher *const feg[3] = {f, e, gg};
	ge_opmatcher *const *l1[1] = {efg}, *const *l2[1] = {feg};
	size_t three = 3;
	m = rx("^foo/c$");
	ge_opmatcher_output_ops(m, l1, &three, 1, &err);
	is_int(1, match(m, g, "foo/c"), "consumers in node order");
	ge_opmatcher_free(m);
	m = rx("^foo/c$");
	ge_opmatcher_output_ops(m, l2, &three, 1, &err);
	is_int(0, match(m, g, "foo/c"), "consumer order matters");
	ge_opmatcher_free(m);
	m = rx("^foo/c$");
	size_t two_c = 2;
	ge_opmatcher_output_ops(m, l1, &two_c, 1, &err);
	is_int(0, match(m, g, "foo/c"), "the consumer count must be equal");
	ge_opmatcher_free(m);

	/* a skipped output is one entry (the reference's None bug fixed) */
	m = rx("^foo/c$");
	size_t skip = GE_MATCH_ANY;
	ge_opmatcher_output_ops(m, NULL, &skip, 1, &err);
	is_int(1, match(m, g, "foo/c"), "output_ops(None) matches one output");
	ge_opmatcher_free(m);
	m = rx("^foo/c$");
	size_t skip2[2] = {GE_MATCH_ANY, GE_MATCH_ANY};
	ge_opmatcher_output_ops(m, NULL, skip2, 2, &err);
	is_int(0, match(m, g, "foo/c"), "the output count must be equal");
	ge_opmatcher_free(m);
	ge_opmatcher_free(e);
	ge_opmatcher_free(f);
	ge_opmatcher_free(gg);

	m = ge_opmatcher_new();
	is_int(GE_EINVAL, ge_opmatcher_add_regex(m, "(", &err),
	       "a bad regex is refused");
	is_int(GE_EINVAL, ge_opmatcher_match(m, g, 12345, &err),
	       "matching a non-op is an error");
	ge_opmatcher_free(m);

	ge_graph_free(g);
	ge_regex_cache_clear();
	return tap_done();
}
