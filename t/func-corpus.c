/*
 * func-corpus: every SavedModel of the corpus whose graph has a function
 * library.  The library model lists as many functions as the library
 * holds; every body parses and validates (with the calls between them);
 * with every body parsed and nothing edited the save is byte for byte the
 * input; renaming one op in one body changes only that function's bytes
 * (the bytes before and after it stay, and the body reloads with the new
 * name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "functions/func.h"
#include "formats/model.h"
#include "tap.h"
#include "base/wire.h"

static int file_bytes(const char *path, uint8_t **p, size_t *n)
{
	return ge_file_read(path, p, n, NULL) == GE_OK;
}

/* Counts FunctionDefs in a GraphDef's library, from the bytes. */
static size_t count_library(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	size_t k = 0;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			break;
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, end, (int)(tag & 7)))
				break;
			continue;
		}
		if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			break;
		if ((tag >> 3) == 2) {
			const uint8_t *q = p, *qe = p + l;
			while (q < qe) {
				uint64_t t2, l2;
				if (ge_read_varint(&q, qe, &t2) ||
				    ge_read_varint(&q, qe, &l2))
					break;
				if ((t2 >> 3) == 1)
					k++;
				q += l2;
			}
		}
		p += l;
	}
	return k;
}

static void one(const char *dir, const char *tmp, int idx)
{
	ge_graph *g = NULL;
	ge_error err = {0, ""};
	if (ge_load(dir, NULL, &g, &err)) {
		ok(0, "%s loads: %s", dir, err.msg);
		return;
	}
	ge_buf gd = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &gd);
	size_t want = count_library(gd.data, gd.len);
	ge_buf_free(&gd);
	if (!want) {
		ge_graph_free(g);
		return;
	}
	is_int((long long)want, (long long)ge_func_count(g),
	       "%s: g:functions() has the library's %zu functions", dir, want);
	/* every body parses and validates, calls included */
	ge_buf rep = GE_BUF_INIT;
	size_t probs = ge_flib_validate(g, 1, &rep);
	if (!ok(probs == 0, "%s: every body and call validates", dir))
		tap_diag("%.2000s", rep.data ? (char *)rep.data : "");
	ge_buf_free(&rep);
	size_t ops = ge_flib_body_ops(g);
	ok(ops > 0, "%s: %zu ops in %zu bodies", dir, ops, want);
	/* all bodies parsed, nothing edited: byte for byte */
	char out[4096], out2[4096], in[8400];
	snprintf(out, sizeof out, "%s/same%d", tmp, idx);
	snprintf(in, sizeof in, "%s/saved_model.pb", dir);
	int rc = ge_save(g, out, NULL, &err);
	uint8_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	char outpb[4200];
	snprintf(outpb, sizeof outpb, "%s/saved_model.pb", out);
	int same = rc == GE_OK && file_bytes(in, &a, &na) &&
		   file_bytes(outpb, &b, &nb) && na == nb && !memcmp(a, b, na);
	ok(same, "%s: load, parse every body, save: byte-identical", dir);
	free(b);
	b = NULL;
	/* rename one op of one body (a function with a non-arg op) */
	ge_funcid pick = GE_NOFUNC;
	ge_opid op = GE_NOOP;
	for (ge_funcid f = 0; f < ge_func_capacity(g) && pick == GE_NOFUNC; f++) {
		ge_graph *body = ge_func_body(g, f, NULL);
		for (size_t i = 0; body && i < ge_graph_capacity(body); i++) {
			const char *t = ge_op_type(body, (ge_opid)i);
			if (ge_op_alive(body, (ge_opid)i) && strcmp(t, "_Arg") &&
			    strcmp(t, "_Retval")) {
				pick = f;
				op = (ge_opid)i;
				break;
			}
		}
	}
	if (pick == GE_NOFUNC) {
		ok(1, "%s: no body op to rename", dir);
		free(a);
		ge_graph_free(g);
		return;
	}
	ge_graph *body = ge_func_body(g, pick, NULL);
	char newname[600];
	snprintf(newname, sizeof newname, "%s_renamed", ge_op_name(body, op));
	ge_buf before = GE_BUF_INIT, after = GE_BUF_INIT;
	ge_func_encode(g, pick, &before);
	ge_op_set_name(body, op, newname, &err);
	ge_func_encode(g, pick, &after);
	snprintf(out2, sizeof out2, "%s/renamed%d", tmp, idx);
	rc = ge_save(g, out2, NULL, &err);
	snprintf(outpb, sizeof outpb, "%s/saved_model.pb", out2);
	int good = rc == GE_OK && file_bytes(outpb, &b, &nb);
	/* every other function keeps its bytes, this one has new ones, and
	 * the file grows or shrinks by that difference (and the length
	 * prefixes of the messages around the library) */
	ge_graph *g0 = NULL, *g2 = NULL;
	int back = good && ge_load(dir, NULL, &g0, &err) == GE_OK &&
		   ge_load(out2, NULL, &g2, &err) == GE_OK;
	int only = back && ge_func_capacity(g0) == ge_func_capacity(g2);
	for (ge_funcid k = 0; only && k < ge_func_capacity(g0); k++) {
		ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
		ge_func_encode(g0, k, &x);
		ge_func_encode(g2, k, &y);
		int eq = x.len == y.len && !memcmp(x.data, y.data, x.len);
		only = k == pick ? !eq && y.len == after.len &&
					   !memcmp(y.data, after.data, y.len)
				 : eq;
		ge_buf_free(&x);
		ge_buf_free(&y);
	}
	long long delta = (long long)nb - (long long)na -
			  ((long long)after.len - (long long)before.len);
	ok(only && delta >= -8 && delta <= 8,
	   "%s: renaming '%s' in function '%s' changes only that function's "
	   "bytes", dir, newname, ge_func_name(g, pick));
	ge_graph_free(g0);
	ge_funcid f2 = back ? ge_func_find(g2, ge_func_name(g, pick)) : GE_NOFUNC;
	ge_graph *b2 = f2 != GE_NOFUNC ? ge_func_body(g2, f2, NULL) : NULL;
	ok(b2 && ge_graph_find(b2, newname) != GE_NOOP &&
		   ge_flib_validate(g2, 1, NULL) == 0,
	   "%s: reloaded, the body has '%s' and validates", dir, newname);
	ge_graph_free(g2);
	ge_buf_free(&before);
	ge_buf_free(&after);
	free(a);
	free(b);
	ge_graph_free(g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (set GE_CORPUS)");
	char path[4096], tmp[] = "/tmp/ge-func-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f)
		tap_skip_all("no MANIFEST.tsv");
	char line[8192];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (!tab || strncmp(tab + 1, "SavedModel\t", 11) ||
		    strstr(line, "/fuzz_generated/"))
			continue;
		*tab = 0;
		char dir[8300];
		snprintf(dir, sizeof dir, "%s/%s", corpus, line);
		char *slash = strrchr(dir, '/');
		*slash = 0;
		one(dir, tmp, n++);
	}
	fclose(f);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
	if (system(cmd)) {
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
