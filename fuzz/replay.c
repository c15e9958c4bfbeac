/*
 * replay.c: runs the inputs kept in fuzz/regress/<target>/ (inputs that
 * once crashed a target, and a few seeds) through the targets, built
 * without libFuzzer: a TAP test of `make check`.  A folder that is not
 * there (git keeps no empty folder) has nothing to replay.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "tap.h"

int fuzz_binary(const uint8_t *data, size_t len);
int fuzz_text(const uint8_t *data, size_t len);
int fuzz_tfjs(const uint8_t *data, size_t len);
int fuzz_bundle(const uint8_t *data, size_t len);
int fuzz_roundtrip(const uint8_t *data, size_t len);
int fuzz_eval(const uint8_t *data, size_t len);

static const struct {
	const char *name;
	int (*fn)(const uint8_t *, size_t);
} targets[] = {
	{"binary", fuzz_binary}, {"text", fuzz_text}, {"tfjs", fuzz_tfjs},
	{"bundle", fuzz_bundle}, {"roundtrip", fuzz_roundtrip},
	{"eval", fuzz_eval},
};

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	const char *top = getenv("GE_TOP_SRCDIR");
	char dir[PATH_MAX], path[PATH_MAX * 2];
	size_t total = 0;
	printf("# replaying %s/fuzz/regress\n", top ? top : ".");
	for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
		snprintf(dir, sizeof dir, "%s/fuzz/regress/%s", top ? top : ".",
			 targets[t].name);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		char **names = NULL;
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				names = ge_xrealloc(names, (n + 1) * sizeof *names);
				names[n++] = ge_xstrdup(e->d_name);
			}
		closedir(d);
		qsort(names, n, sizeof *names, cmp);
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof path, "%s/%s", dir, names[i]);
			uint8_t *data;
			size_t len;
			ge_error err;
			if (ge_file_read(path, &data, &len, &err) == GE_OK) {
				targets[t].fn(data, len);
				free(data);
				ok(1, "%s: %s", targets[t].name, names[i]);
			} else {
				ok(0, "%s: %s", targets[t].name, err.msg);
			}
			total++;
			free(names[i]);
		}
		free(names);
	}
	if (!total)
		printf("# nothing to replay\n");
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
