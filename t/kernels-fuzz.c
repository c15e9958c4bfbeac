/*
 * kernels-fuzz: every kernel of the registry on random inputs and attrs,
 * most of them wrong (dtypes, ranks, sizes, axes, negative and huge
 * values).  A kernel must either succeed, setting every output, or fail
 * with a message naming the op and no output left set; never crash
 * (run under AddressSanitizer by --enable-sanitizers builds), and every
 * tensor must be released.  The PRNG is seeded: a failure repeats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"

static uint64_t rs = 0x2545f4914f6cdd1du;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs % n);
}

static const char *dtypes[] = {"DT_FLOAT", "DT_INT32", "DT_INT64",
			       "DT_BOOL", "DT_STRING", "DT_HALF", "DT_UINT8",
			       "DT_DOUBLE"};

/* A random Const named name. */
static void rconst(const char *name)
{
	const char *dt = dtypes[rnd(8)];
	char shape[64] = "", vals[1024] = "";
	int r = (int)rnd(4);
	int64_t n = 1;
	for (int i = 0; i < r; i++) {
		int d = (int)rnd(4);
		n *= d;
		sprintf(shape + strlen(shape), "%s%d", i ? "," : "", d);
	}
	for (int64_t k = 0; k < n && k < 64; k++) {
		if (!strcmp(dt, "DT_BOOL"))
			strcat(vals, rnd(2) ? " true" : " false");
		else if (!strcmp(dt, "DT_STRING"))
			strcat(vals, rnd(2) ? " ab" : " c,d");
		else if (!strcmp(dt, "DT_HALF"))
			sprintf(vals + strlen(vals), " %u", rnd(65536));
		else if (!strcmp(dt, "DT_UINT8"))
			sprintf(vals + strlen(vals), " %u", rnd(256));
		else {
			static const char *v[] = {"0", "1", "2", "3", "-1",
						  "-2", "5", "2147483647"};
			sprintf(vals + strlen(vals), " %s", v[rnd(8)]);
		}
	}
	kt_c(name, dt, shape, vals);
}

static void rattrs(char *a, size_t cap)
{
	static const char *ints[] = {"axis", "num_split", "N", "num",
				     "seq_dim", "batch_dim", "begin_mask",
				     "end_mask", "ellipsis_mask",
				     "new_axis_mask", "shrink_axis_mask",
				     "batch_dims", "depth"};
	static const char *types[] = {"T", "DstT", "out_type", "output_type",
				      "out_idx", "type", "Tidx", "dtype"};
	a[0] = 0;
	for (int i = 0; i < 4; i++) {
		size_t l = strlen(a);
		switch (rnd(5)) {
		case 0: case 1:
			snprintf(a + l, cap - l, "attr { key: \"%s\" value { "
				 "i: %d } } ", ints[rnd(13)], (int)rnd(9) - 3);
			break;
		case 2:
			snprintf(a + l, cap - l, "attr { key: \"%s\" value { "
				 "type: %s } } ", types[rnd(8)], dtypes[rnd(8)]);
			break;
		case 3:
			snprintf(a + l, cap - l, "attr { key: \"%s\" value { "
				 "b: %s } } ", rnd(2) ? "keep_dims" : "exclusive",
				 rnd(2) ? "true" : "false");
			break;
		default:
			snprintf(a + l, cap - l, "attr { key: \"%s\" value { "
				 "s: \"%s\" } } ", rnd(2) ? "data_format" : "mode",
				 rnd(2) ? "NCHW" : "REFLECT");
			break;
		}
	}
}

int main(void)
{
	const char *const *types = ge_kernel_types();
	if (getenv("GE_KF_SEED")) /* to explore; the test runs the default */
		rs = strtoull(getenv("GE_KF_SEED"), NULL, 10) | 1;
	ge_xbudget_init(&kt_budget);
	kt_budget.mem_limit = (uint64_t)64 << 20;
	kt_budget.work_limit = (uint64_t)1 << 28;
	for (int t = 0; types[t]; t++) {
		int bad = 0, okc = 0, cases = 60;
		char first[1200] = "";
		for (int c = 0; c < cases; c++) {
			int nin = (int)rnd(5);
			char ins[64] = "", attrs[1024];
			for (int i = 0; i < nin; i++) {
				char nm[16];
				sprintf(nm, "i%d", i);
				rconst(nm);
				sprintf(ins + strlen(ins), "%s%s", i ? "," : "", nm);
			}
			rattrs(attrs, sizeof attrs);
			kt_op("y", types[t], ins, attrs);
			const char *r = kt_run("y");
			if (!strncmp(r, "error: ", 7) &&
			    (strstr(r, "left output") || strstr(r, "not set") ||
			     !strstr(r, "y ("))) {
				/* an input Const refused (a dtype the kernel
				 * under test never saw) is no verdict */
				if (strstr(r, "error: i") == r)
					continue;
				if (!bad++)
					snprintf(first, sizeof first, "%s", r);
			} else if (strncmp(r, "error: ", 7)) {
				okc++;
			}
		}
		ok(!bad && kt_budget.mem_live == 0, "%s: %d of %d random cases "
		   "ran, the rest refused cleanly%s%s", types[t], okc, cases,
		   bad ? "; not: " : "", first);
	}
	return tap_done();
}
