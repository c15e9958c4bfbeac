/*
 * bigmem: the large arrays of base.h (ge_big_alloc / ge_big_realloc) keep
 * their bytes across every kind of growth (inside malloc, out of malloc
 * into a mapping, a mapping grown in place or moved), read as zero when
 * fresh; sparse blocks read as zero; ge_prefault keeps a range's bytes and
 * takes its faults in one call; arenas keep every string through chunks of every size; the
 * streaming writer gives back exactly what was put, whatever the sizes
 * of the pieces (buffered, direct, across the points where writeback is
 * started).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "tap.h"
#include "testutil.h"

static char tmp[] = "/tmp/ge-bigmem-XXXXXX";

static uint8_t pat(size_t i, unsigned seed)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ seed);
}

static void fill(uint8_t *p, size_t from, size_t to, unsigned seed)
{
	for (size_t i = from; i < to; i++)
		p[i] = pat(i, seed);
}

static int holds(const uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return 0;
	return 1;
}

static int zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_big(void)
{
	static const size_t sizes[] = {
		100, 4000, 900000, 1u << 20, 3u << 20, (5u << 20) + 17,
		24u << 20, 70u << 20,
	};
	size_t ns = sizeof sizes / sizeof *sizes;
	for (size_t i = 0; i < ns; i++) {
		uint8_t *p = ge_big_alloc(sizes[i]);
		ok(zero(p, sizes[i]), "a fresh block of %zu bytes reads as zero",
		   sizes[i]);
		ge_big_free(p);
	}
	/* two arrays grown in turn: the second stands in the way of the
	 * first, which must then move */
	uint8_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int kept = 1;
	for (size_t i = 0; i < ns; i++) {
		a = ge_big_realloc(a, sizes[i]);
		fill(a, na, sizes[i], 1);
		na = sizes[i];
		b = ge_big_realloc(b, sizes[i] + 1000);
		fill(b, nb, sizes[i] + 1000, 2);
		nb = sizes[i] + 1000;
		kept &= holds(a, na, 1) && holds(b, nb, 2);
	}
	ok(kept, "two arrays grown in turn from 100 bytes to 70 MiB keep "
		 "their bytes");
	a = ge_big_realloc(a, 2000);
	ok(holds(a, 2000, 1), "a mapped array shrunk keeps its first bytes");
	a = ge_big_realloc(a, 9u << 20);
	ok(holds(a, 2000, 1), "and grown again still has them");
	b = ge_big_realloc(b, 300);
	ok(holds(b, 300, 2), "a mapped array shrunk under 1 MiB keeps them");
	ge_big_free(a);
	ge_big_free(b);
	ge_big_free(NULL);
	ok(1, "ge_big_free(NULL) does nothing");
}

/* Minor faults of this process so far. */
static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The faults of writing one byte in each page of [p, p + n). */
static long faults_writing(uint8_t *p, size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	long before = minflt();
	for (size_t i = 0; i < n; i += (size_t)pg)
		((volatile uint8_t *)p)[i] = 1;
	return minflt() - before;
}

static void test_prefault(void)
{
	/* ge_big_sparse: zero, whole, its own */
	static const size_t sparse[] = {100, 70000, 5u << 20};
	for (size_t i = 0; i < 3; i++) {
		uint8_t *p = ge_big_sparse(sparse[i]);
		int z = zero(p, sparse[i]);
		p[0] = 1;
		p[sparse[i] - 1] = 2;
		ok(z && p[0] == 1 && p[sparse[i] - 1] == 2,
		   "a sparse block of %zu bytes reads as zero and is writable "
		   "to its end", sparse[i]);
		ge_big_free(p);
	}
	/* the blocks from 64 KiB that are made resident at once */
	uint8_t *q = ge_big_alloc(65536);
	ok(zero(q, 65536), "a block of 64 KiB (made resident) reads as zero");
	q = ge_big_realloc(q, 300000);
	fill(q, 0, 300000, 5);
	q = ge_big_realloc(q, 700000);
	fill(q, 300000, 700000, 5);
	ok(holds(q, 700000, 5), "and grown twice keeps its bytes");
	ge_big_free(q);

	/* ge_prefault keeps what a range holds ... */
	size_t n = 3u << 20;
	uint8_t *m = malloc(n);
	fill(m, 0, n, 6);
	ge_prefault(m + 5, n - 10);
	ge_prefault(m, 100); /* under 64 KiB: nothing */
	ok(holds(m, n, 6), "ge_prefault keeps the bytes of a range");
	free(m);

	/* ... and takes its faults in one call: fresh pages, written after
	 * it, fault no more (a kernel without MADV_POPULATE_WRITE, or one
	 * giving huge pages to this mapping, is not tested) */
#ifdef MADV_POPULATE_WRITE
	size_t len = 1u << 20;
	uint8_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(a, len, MADV_NOHUGEPAGE);
	madvise(b, len, MADV_NOHUGEPAGE);
	long pages = (long)len / sysconf(_SC_PAGESIZE);
	long cold = faults_writing(a, len);
	if (cold < pages / 2 || madvise(b, 4096, MADV_POPULATE_WRITE) != 0) {
		char why[160];
		snprintf(why, sizeof why, "this kernel does not fault page by "
			 "page or cannot populate (%ld faults for %ld pages)",
			 cold, pages);
		tap_skip(1, why);
	} else {
		ge_prefault(b, len);
		long warm = faults_writing(b, len);
		/* (under AddressSanitizer its shadow pages still fault, one
		 * per 32 KiB written) */
		ok(warm <= cold / 4,
		   "writing 1 MiB after ge_prefault faults %ld times (%ld "
		   "without it)", warm, cold);
	}
	munmap(a, len);
	munmap(b, len);
#else
	tap_skip(1, "no MADV_POPULATE_WRITE in this system's headers");
#endif
}

static void test_arena(void)
{
	ge_arena ar;
	ge_arena_init(&ar);
	enum { N = 400000 };
	char **s = malloc(N * sizeof *s);
	char buf[64];
	for (size_t i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof buf, "tower_%zu/conv_%zu/weights",
				 i % 7, i);
		s[i] = ge_arena_strndup(&ar, buf, (size_t)n);
	}
	/* one allocation larger than any chunk, then small ones again */
	uint8_t *big = ge_arena_alloc(&ar, 80u << 20);
	fill(big, 0, 80u << 20, 3);
	char *after = ge_arena_strdup(&ar, "after");
	int good = 1;
	for (size_t i = 0; i < N && good; i++) {
		snprintf(buf, sizeof buf, "tower_%zu/conv_%zu/weights", i % 7, i);
		good = !strcmp(s[i], buf) && ((uintptr_t)s[i] & 7) == 0;
	}
	ok(good, "%d strings (about 13 MiB) in an arena are kept, aligned",
	   N);
	ok(holds(big, 80u << 20, 3) && !strcmp(after, "after"),
	   "an 80 MiB allocation and what follows it are kept");
	ge_arena_free(&ar);
	free(s);
}

/* An arena whose next chunk (doubled) does not fit under the address
 * space limit still gives what is asked for, in smaller chunks.  In a
 * child: the limit stays there. */
static void test_arena_limit(void)
{
#ifdef GE_ASAN
	tap_skip(1, "AddressSanitizer needs more address space than a limit");
#else
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		ge_arena ar;
		ge_arena_init(&ar);
		char **s = malloc(2000000 * sizeof *s);
		size_t i = 0, first;
		/* up to the end of a 32 MiB chunk: the next would be 64 */
		while (!(ar.size >= (31u << 20) && ar.used + 100 > ar.size))
			s[i++] = ge_arena_strdup(&ar, "tower_0/conv_0/weights/"
						      "read/_0123456789abcdef");
		first = i;
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long pages = 0;
		if (!f || fscanf(f, "%lu", &pages) != 1)
			_exit(2);
		fclose(f);
		rlim_t as = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
			    (rlim_t)(24u << 20);
		struct rlimit rl = {as, as};
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(2);
		for (size_t k = 0; k < 100000; k++)
			s[i++] = ge_arena_strdup(&ar, "tower_1/conv_1/weights/"
						      "read/_0123456789abcdef");
		for (size_t k = 0; k < i; k++)
			if (strncmp(s[k], k < first ? "tower_0" : "tower_1", 7))
				_exit(1);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "an arena under an address-space limit its next chunk does not "
	   "fit still gives every string (status %d)", st);
#endif
}

static int put_and_read(const char *p, const uint8_t *data, size_t n,
			const size_t *steps, size_t nsteps)
{
	ge_writer w;
	if (ge_writer_open(&w, p, NULL))
		return 0;
	for (size_t off = 0, k = 0; off < n; k++) {
		size_t m = steps[k % nsteps];
		if (m > n - off)
			m = n - off;
		ge_writer_put(&w, data + off, m);
		off += m;
	}
	if (ge_writer_commit(&w, NULL))
		return 0;
	uint8_t *back;
	size_t len;
	if (ge_file_read(p, &back, &len, NULL))
		return 0;
	int same = len == n && !memcmp(back, data, n);
	free(back);
	return same;
}

static void test_writer(void)
{
	size_t n = (19u << 20) + 333;
	uint8_t *data = malloc(n);
	fill(data, 0, n, 4);
	static const size_t small[] = {1, 37, 200, 4096, 65535, 9},
			    mixed[] = {100, 300000, 7, 1u << 20, 65536,
				       (9u << 20) + 1, 262144, 262143};
	ok(put_and_read(path_in(tmp, "small.bin"), data, n, small, 6),
	   "19 MiB put in small pieces reads back the same");
	ok(put_and_read(path_in(tmp, "mixed.bin"), data, n, mixed, 8),
	   "19 MiB put in pieces of mixed sizes reads back the same");
	ok(put_and_read(path_in(tmp, "whole.bin"), data, n, &n, 1),
	   "19 MiB put at once reads back the same");
	free(data);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	tap_plan(26);
	test_big();
	test_prefault();
	test_arena();
	test_arena_limit();
	test_writer();
	rm_dir(tmp);
	return tap_done();
}
