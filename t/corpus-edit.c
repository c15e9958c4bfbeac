/*
 * corpus-edit: an edit on a binary corpus model changes only what was
 * edited.  For every binary GraphDef of the corpus: change an attr of one
 * node, add a node, rename a node; save; every other node (for a rename:
 * every node but the renamed one and its consumers) keeps its exact bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* The nodes of GraphDef bytes: name and byte span of each, in order. */
typedef struct {
	char *name;
	const uint8_t *p;
	size_t len;
} span;

static size_t split_nodes(const uint8_t *p, size_t len, span **out)
{
	const uint8_t *end = p + len;
	span *v = NULL;
	size_t n = 0;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			break;
		if ((tag & 7) != 2) {
			ge_skip_field(&p, end, (int)(tag & 7));
			continue;
		}
		ge_read_varint(&p, end, &l);
		if ((tag >> 3) == 1) {
			const uint8_t *q = p;
			uint64_t t2, l2;
			ge_read_varint(&q, p + l, &t2);
			ge_read_varint(&q, p + l, &l2);
			v = realloc(v, (n + 1) * sizeof *v);
			v[n].name = ge_xstrndup((const char *)q, l2);
			v[n].p = p;
			v[n].len = l;
			n++;
		}
		p += l;
	}
	*out = v;
	return n;
}

static void free_spans(span *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* Counts nodes of `after` that differ from the node of the same name in
 * `before`, skipping names for which skip() says so. */
static size_t changed(const ge_buf *before, const ge_buf *after,
		      int (*skip)(const char *, void *), void *ud,
		      size_t *compared)
{
	span *a, *b;
	size_t na = split_nodes(before->data, before->len, &a);
	size_t nb = split_nodes(after->data, after->len, &b);
	size_t diff = 0;
	*compared = 0;
	for (size_t i = 0, j = 0; i < na && j < nb; i++) {
		while (j < nb && strcmp(a[i].name, b[j].name) &&
		       skip(b[j].name, ud))
			j++;
		if (j >= nb)
			break;
		if (skip(a[i].name, ud)) {
			if (!strcmp(a[i].name, b[j].name))
				j++;
			continue;
		}
		(*compared)++;
		if (strcmp(a[i].name, b[j].name) || a[i].len != b[j].len ||
		    memcmp(a[i].p, b[j].p, a[i].len))
			diff++;
		j++;
	}
	free_spans(a, na);
	free_spans(b, nb);
	return diff;
}

struct skipset {
	const char **names;
	size_t n;
};

static int skip_in(const char *name, void *ud)
{
	struct skipset *s = ud;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return 1;
	return 0;
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (set GE_CORPUS)");
	char path[4096], line[8192];
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	while (fgets(line, sizeof line, f)) {
		char *file = strtok(line, "\t\n"), *kind = strtok(NULL, "\t\n");
		if (!file || !kind || strcmp(kind, "GraphDef"))
			continue;
		snprintf(path, sizeof path, "%s/%s", corpus, file);
		ge_graph *g;
		ge_error err;
		if (ge_load(path, NULL, &g, &err)) {
			ok(0, "%s loads", file);
			tap_diag("%s", err.msg);
			continue;
		}
		ge_buf before = GE_BUF_INIT, after = GE_BUF_INIT;
		ge_serialize(g, GE_FMT_GRAPHDEF, &before, NULL);
		size_t n = ge_graph_capacity(g);
		ge_opid mid = (ge_opid)(n / 2);
		char *mid_name = ge_xstrdup(ge_op_name(g, mid));
		size_t cmp;

		/* 1. an attr */
		Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
		v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
		v.s.data = (uint8_t *)"edited";
		v.s.len = 6;
		ge_op_set_attr(g, mid, "_note", &v);
		ge_serialize(g, GE_FMT_GRAPHDEF, &after, NULL);
		const char *one[] = {mid_name};
		struct skipset s1 = {one, 1};
		size_t d = changed(&before, &after, skip_in, &s1, &cmp);
		ok(d == 0 && cmp == n - 1,
		   "%s: attr on '%s': %zu other nodes keep their bytes", file,
		   mid_name, cmp);
		ge_op_remove_attr(g, mid, "_note");

		/* 2. a node */
		const char *nn = ge_graph_unique_name(g, "added");
		ge_opid a = ge_graph_add_op(g, nn, "NoOp", NULL);
		after.len = 0;
		ge_serialize(g, GE_FMT_GRAPHDEF, &after, NULL);
		const char *two[] = {mid_name, nn};
		struct skipset s2 = {two, 2};
		d = changed(&before, &after, skip_in, &s2, &cmp);
		ok(d == 0 && cmp == n - 1,
		   "%s: added a node: %zu other nodes keep their bytes", file,
		   cmp);
		ge_graph_remove_op(g, a, 0, NULL);

		/* 3. a rename: the op and its consumers change, nothing else */
		size_t nu;
		const ge_use *u = ge_op_uses(g, mid, &nu);
		size_t nc;
		const ge_opid *co = ge_op_control_outputs(g, mid, &nc);
		const char **names = malloc((nu + nc + 2) * sizeof *names);
		size_t k = 0;
		const char *newname = ge_graph_unique_name(g, "renamed");
		names[k++] = newname;
		names[k++] = mid_name;
		for (size_t i = 0; i < nu; i++)
			names[k++] = ge_op_name(g, u[i].op);
		for (size_t i = 0; i < nc; i++)
			names[k++] = ge_op_name(g, co[i]);
		ge_op_set_name(g, mid, newname, NULL);
		after.len = 0;
		ge_serialize(g, GE_FMT_GRAPHDEF, &after, NULL);
		struct skipset s3 = {names, k};
		d = changed(&before, &after, skip_in, &s3, &cmp);
		ok(d == 0, "%s: rename: %zu untouched nodes keep their bytes "
		   "(%zu consumers rewritten)", file, cmp, k - 2);
		free(names);
		free(mid_name);
		ge_buf_free(&before);
		ge_buf_free(&after);
		ge_graph_free(g);
	}
	fclose(f);
	return tap_done();
}
