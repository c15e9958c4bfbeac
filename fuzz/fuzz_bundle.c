/* fuzz_bundle.c: a checkpoint's index (LevelDB table) and its bundle
 * reader.  The input is the index, then (after a 4-byte little-endian
 * length of the index) the data shard; both are written to a scratch
 * directory, the bundle is opened and every entry read. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bundle.h"
#include "base/fsutil.h"
#include "fuzz.h"
#include "base/sstable.h"

static char prefix[PATH_MAX], scratch[PATH_MAX];

static void cleanup(void)
{
	ge_remove_tree(scratch);
}

static void put(const char *suffix, const uint8_t *p, size_t n)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%s", prefix, suffix);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n)
		fwrite(p, 1, n, f);
	fclose(f);
}

FUZZ_TARGET(bundle)
{
	fuzz_limits();
	if (!prefix[0]) {
		/* in memory where there is a tmpfs */
		char d[] = "/dev/shm/ge-fuzz-bundle-XXXXXX";
		char t[] = "/tmp/ge-fuzz-bundle-XXXXXX";
		const char *dd = mkdtemp(d) ? d : mkdtemp(t);
		if (!dd)
			abort();
		snprintf(prefix, sizeof prefix, "%s/variables", dd);
		snprintf(scratch, sizeof scratch, "%s", dd);
		atexit(cleanup);
	}
	ge_sstable t;
	ge_error err;
	if (ge_sstable_parse("fuzz.index", data, len, &t, &err) == GE_OK)
		ge_sstable_free(&t);
	if (len < 4)
		return 0;
	size_t il = (size_t)data[0] | (size_t)data[1] << 8 |
		    (size_t)data[2] << 16 | (size_t)data[3] << 24;
	if (il > len - 4)
		il = len - 4;
	put(".index", data + 4, il);
	put(".data-00000-of-00001", data + 4 + il, len - 4 - il);
	ge_bundle *b;
	if (ge_bundle_open(prefix, &b, &err) == GE_OK) {
		for (size_t i = 0; i < ge_bundle_count(b); i++) {
			const ge_bundle_entry *e = ge_bundle_entry_at(b, i);
			uint8_t *p;
			size_t n;
			if (ge_bundle_read(b, e, &p, &n, &err) == GE_OK)
				free(p);
		}
		ge_bundle_close(b);
	}
	return 0;
}
