/*
 * diff.c: op-by-op comparison of two graphs (diff.h): by name, then by
 * provenance (NodeDef.experimental_debug_info).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor/diff.h"
#include "editor/provenance.h"

/* The name an input reads, as text: "op" for output 0, "op:k", or the
 * text a dangling input had. */
static void input_text(const ge_graph *g, ge_opid id, size_t i, char *out,
		       size_t cap)
{
	ge_tref t = ge_op_input(g, id, i);
	if (t.op == GE_NOOP) {
		const char *d = ge_op_dangling_input(g, id, i);
		size_t n = d ? strlen(d) : 0;
		/* "x:0" and "x" are the same tensor */
		if (n > 2 && !strcmp(d + n - 2, ":0"))
			snprintf(out, cap, "%.*s", (int)(n - 2), d);
		else
			snprintf(out, cap, "%s", d ? d : "");
		return;
	}
	if (t.index == 0)
		snprintf(out, cap, "%s", ge_op_name(g, t.op));
	else
		snprintf(out, cap, "%s:%d", ge_op_name(g, t.op), (int)t.index);
}

static int same_inputs(const ge_graph *a, ge_opid ia, const ge_graph *b,
		       ge_opid ib)
{
	size_t n = ge_op_num_inputs(a, ia);
	if (n != ge_op_num_inputs(b, ib))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char x[1024], y[1024];
		input_text(a, ia, i, x, sizeof x);
		input_text(b, ib, i, y, sizeof y);
		if (strcmp(x, y) != 0)
			return 0;
	}
	return 1;
}

static const char *control_name(const ge_graph *g, ge_opid id, size_t i)
{
	ge_opid c = ge_op_control_input(g, id, i);
	if (c != GE_NOOP)
		return ge_op_name(g, c);
	const char *d = ge_op_dangling_input(g, id, ge_op_num_inputs(g, id) + i);
	if (!d)
		return "";
	return d[0] == '^' ? d + 1 : d;
}

/* Control inputs are a set: same size and each of b's is one of a's. */
static int same_controls(const ge_graph *a, ge_opid ia, const ge_graph *b,
			 ge_opid ib)
{
	size_t n = ge_op_num_control_inputs(a, ia);
	if (n != ge_op_num_control_inputs(b, ib))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *y = control_name(b, ib, i);
		size_t j;
		for (j = 0; j < n; j++)
			if (!strcmp(control_name(a, ia, j), y))
				break;
		if (j == n)
			return 0;
	}
	return 1;
}

size_t ge_op_diff_attrs(const ge_graph *a, ge_opid ia, const ge_graph *b,
			ge_opid ib, ge_buf *names)
{
	size_t n = 0;
	size_t nb = ge_op_num_attrs(b, ib), na = ge_op_num_attrs(a, ia);
	for (size_t i = 0; i < nb; i++) {
		const char *k = ge_op_attr_name(b, ib, i);
		size_t la, lb;
		const uint8_t *pa = ge_op_attr_raw(a, ia, k, &la);
		const uint8_t *pb = ge_op_attr_raw(b, ib, k, &lb);
		if (!pa || la != lb || memcmp(pa, pb, la) != 0) {
			if (names) {
				ge_buf_adds(names, k);
				ge_buf_addc(names, '\n');
			}
			n++;
		}
	}
	for (size_t i = 0; i < na; i++) {
		const char *k = ge_op_attr_name(a, ia, i);
		size_t lb;
		if (!ge_op_attr_raw(b, ib, k, &lb)) {
			if (names) {
				ge_buf_adds(names, k);
				ge_buf_addc(names, '\n');
			}
			n++;
		}
	}
	return n;
}

static unsigned op_changes(const ge_graph *a, ge_opid ia, const ge_graph *b,
			   ge_opid ib)
{
	unsigned w = 0;
	if (strcmp(ge_op_type(a, ia), ge_op_type(b, ib)) != 0)
		w |= GE_DIFF_TYPE;
	if (!same_inputs(a, ia, b, ib))
		w |= GE_DIFF_INPUTS;
	if (!same_controls(a, ia, b, ib))
		w |= GE_DIFF_CONTROL;
	if (strcmp(ge_op_device(a, ia), ge_op_device(b, ib)) != 0)
		w |= GE_DIFF_DEVICE;
	if (ge_op_diff_attrs(a, ia, b, ib, NULL))
		w |= GE_DIFF_ATTRS;
	return w;
}

static void push(ge_diff_entry **v, size_t *n, size_t *cap, ge_diff_entry e)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = ge_xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = e;
}

/* Pairs by provenance: moved[ib] is the op of a that op ib of b (which a
 * does not name) was made from when b no longer has it (a rename, a
 * move), copied[ib] the op of a it was made from when b still has it (a
 * copy), merged[ia] the op of b that op ia of a (gone from b) went into;
 * GE_NOOP elsewhere. */
static void pair_origins(const ge_graph *a, const ge_graph *b, ge_opid *moved,
			 ge_opid *copied, ge_opid *merged)
{
	size_t cb = ge_graph_capacity(b);
	ge_strvec names = {0};
	ge_error err;
	for (size_t i = 0; i < cb; i++) {
		ge_opid ib = (ge_opid)i;
		/* an op whose field does not decode counts as one without
		 * provenance: the diff pairs what it can */
		if (!ge_op_alive(b, ib) ||
		    ge_op_origins(b, ib, &names, NULL, &err) <= 0)
			continue;
		int renamed = ge_graph_find(a, ge_op_name(b, ib)) == GE_NOOP;
		for (size_t k = 0; k < names.n; k++) {
			const char *p = names.v[k];
			ge_opid ia = ge_graph_find(a, p);
			if (ia == GE_NOOP || !strcmp(p, ge_op_name(b, ib)))
				continue;
			int gone = ge_graph_find(b, p) == GE_NOOP;
			if (renamed && gone && moved[ib] == GE_NOOP)
				moved[ib] = ia;
			if (renamed && !gone && copied[ib] == GE_NOOP)
				copied[ib] = ia;
			if (gone && merged[ia] == GE_NOOP)
				merged[ia] = ib;
		}
	}
	ge_strvec_free(&names);
}

size_t ge_graph_diff(const ge_graph *a, const ge_graph *b,
		     ge_diff_entry **out)
{
	ge_diff_entry *v = NULL;
	size_t n = 0, cap = 0;
	size_t ca = ge_graph_capacity(a), cb = ge_graph_capacity(b);
	ge_opid *moved = ge_xmalloc((cb + 1) * sizeof *moved);
	ge_opid *copied = ge_xmalloc((cb + 1) * sizeof *copied);
	ge_opid *merged = ge_xmalloc((ca + 1) * sizeof *merged);
	for (size_t i = 0; i <= cb; i++)
		moved[i] = copied[i] = GE_NOOP;
	for (size_t i = 0; i <= ca; i++)
		merged[i] = GE_NOOP;
	pair_origins(a, b, moved, copied, merged);
	for (size_t i = 0; i < ca; i++) {
		ge_opid ia = (ge_opid)i;
		/* an op renamed is reported once, as moved */
		if (ge_op_alive(a, ia) &&
		    ge_graph_find(b, ge_op_name(a, ia)) == GE_NOOP &&
		    (merged[ia] == GE_NOOP || moved[merged[ia]] != ia))
			push(&v, &n, &cap,
			     (ge_diff_entry){GE_DIFF_REMOVED, ia, merged[ia], 0});
	}
	for (size_t i = 0; i < cb; i++) {
		ge_opid ib = (ge_opid)i;
		if (ge_op_alive(b, ib) && moved[ib] == GE_NOOP &&
		    ge_graph_find(a, ge_op_name(b, ib)) == GE_NOOP)
			push(&v, &n, &cap,
			     (ge_diff_entry){GE_DIFF_ADDED, copied[ib], ib,
					     0});
	}
	for (size_t i = 0; i < cb; i++) {
		ge_opid ib = (ge_opid)i;
		if (!ge_op_alive(b, ib))
			continue;
		ge_opid ia = ge_graph_find(a, ge_op_name(b, ib));
		if (ia == GE_NOOP)
			continue;
		unsigned w = op_changes(a, ia, b, ib);
		if (w)
			push(&v, &n, &cap,
			     (ge_diff_entry){GE_DIFF_CHANGED, ia, ib, w});
	}
	for (size_t i = 0; i < cb; i++) {
		ge_opid ib = (ge_opid)i;
		if (ge_op_alive(b, ib) && moved[ib] != GE_NOOP)
			push(&v, &n, &cap,
			     (ge_diff_entry){GE_DIFF_MOVED, moved[ib], ib,
					     op_changes(a, moved[ib], b, ib)});
	}
	free(moved);
	free(copied);
	free(merged);
	*out = v;
	return n;
}
