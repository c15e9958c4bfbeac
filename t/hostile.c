/*
 * hostile.c: the limits of lib/base/bounds.c and the file system rules of
 * lib/base/fsutil.c, on inputs built here: nesting, sizes and the budget, the
 * quadratic checkpoint index (case 4 of doc/hostile-input.md), paths
 * inside a model, FIFOs and devices, directory swaps with and without
 * renameat2(RENAME_EXCHANGE), and what killed saves leave behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/bounds.h"
#include "base/fsutil.h"
#include "base/sstable.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

static char dir[1024];

static const char *P(const char *name)
{
	static char buf[8][2048];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_sizes(void)
{
	uint64_t v;
	ok(!ge_parse_size("512M", &v) && v == (512u << 20), "512M");
	ok(!ge_parse_size("2GiB", &v) && v == (2ull << 30), "2GiB");
	ok(!ge_parse_size("1048576", &v) && v == 1048576, "bytes");
	ok(ge_parse_size("12X", &v) && ge_parse_size("", &v) &&
		   ge_parse_size("-1", &v),
	   "bad sizes refused");
	setenv("GEREWRITE_MAX_MEMORY", "64M", 1);
	ok(ge_max_memory() == (64u << 20), "GEREWRITE_MAX_MEMORY read");
	ge_set_max_memory(32u << 20);
	ok(ge_max_memory() == (32u << 20), "the program's setting wins");
	ge_error err;
	ok(ge_budget_check(33u << 20, "m.pb", "node 'w': a tensor", &err) ==
			   GE_EFORMAT &&
		   strstr(err.msg, "m.pb: node 'w'") &&
		   strstr(err.msg, "32 MiB"),
	   "over the budget: file, node and budget named (%s)", err.msg);
	ok(ge_budget_check(1u << 20, "m.pb", "x", &err) == GE_OK,
	   "under it: fine");
	int64_t dims[] = {1, 1, 1, 50000000};
	ok(ge_shape_elems(dims, 4) == 50000000, "elements of a shape");
	int64_t huge[] = {INT64_MAX, INT64_MAX};
	ok(ge_shape_elems(huge, 2) == UINT64_MAX, "overflow saturates");
}

/* AttrValue{func{name: "f", attr{key: "a", value: <v>}}}, n deep */
static void nest(ge_buf *b, int n)
{
	ge_buf v = GE_BUF_INIT, t = GE_BUF_INIT;
	ge_buf_tag(&v, 6, 0);
	ge_buf_varint(&v, 1);
	for (int i = 0; i < n; i++) {
		ge_buf e = GE_BUF_INIT, l = GE_BUF_INIT;
		ge_buf_lenfield(&e, 1, "a", 1);
		ge_buf_lenfield(&e, 2, v.data, v.len);
		ge_buf_lenfield(&l, 1, "f", 1);
		ge_buf_lenfield(&l, 2, e.data, e.len);
		t.len = 0;
		ge_buf_lenfield(&t, 10, l.data, l.len);
		v.len = 0;
		ge_buf_add(&v, t.data, t.len);
		ge_buf_free(&e);
		ge_buf_free(&l);
	}
	ge_buf_add(b, v.data, v.len);
	ge_buf_free(&v);
	ge_buf_free(&t);
}

static void test_depth(void)
{
	const ProtobufCMessageDescriptor *d = &tensorflow__attr_value__descriptor;
	ge_buf b = GE_BUF_INIT;
	const char *why = NULL;
	nest(&b, 3000);
	ok(ge_pb_check(d, b.data, b.len, GE_MAX_DEPTH, &why) < 0 && why &&
		   strstr(why, "too deep"),
	   "3,000 levels refused before protobuf-c sees them");
	ok(ge_pb_unpack(d, b.len, b.data) == NULL, "ge_pb_unpack: NULL");
	b.len = 0;
	nest(&b, 30);
	ProtobufCMessage *m = ge_pb_unpack(d, b.len, b.data);
	ok(m != NULL, "90 levels decode");
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	uint8_t grp[] = {0x0b, 0x0c};
	ok(ge_pb_check(d, grp, sizeof grp, GE_MAX_DEPTH, &why) < 0 &&
		   strstr(why, "wire type"),
	   "groups (wire types 3, 4) refused");
	uint8_t cut[] = {0x12, 0x10, 'a'};
	ok(ge_pb_check(d, cut, sizeof cut, GE_MAX_DEPTH, &why) < 0,
	   "a length past the end refused");
	ge_buf_free(&b);
	char path[256];
	uint8_t gd[] = {0x0a, 0x09, 0x0a, 0x01, 'w', 0x12, 0x05, 'C', 'o'};
	long at = ge_pb_diagnose(&tensorflow__attr_value__descriptor, gd,
				 sizeof gd, path, sizeof path, NULL);
	ok(at >= 0, "diagnose finds where bytes stop (byte %ld: %s)", at,
	   path);
}

/* Case 4: keys that each hold the whole previous one plus a byte. */
static void test_quadratic_index(void)
{
	ge_sstable_builder sb;
	ge_sstable_builder_init(&sb);
	sb.block_size = (size_t)1 << 30;
	sb.restart_interval = 1 << 30;
	char *key = malloc(100001);
	memset(key, 'k', 100001);
	ge_error err;
	int n = 60000;
	for (int i = 1; i <= n; i++)
		ge_sstable_builder_add(&sb, key, (size_t)i, "", 0, &err);
	size_t len;
	uint8_t *data = ge_sstable_builder_finish(&sb, &len);
	ok(len < 1000000, "a %zu-byte index of %d keys", len, n);
	long before = maxrss_kb();
	ge_sstable t;
	int rc = ge_sstable_parse("variables.index", data, len, &t, &err);
	ok(rc == GE_EFORMAT, "refused (would expand to %.1f GB)",
	   (double)n * n / 2 / 1e9);
	ok(strstr(err.msg, "variables.index: entry") != NULL,
	   "naming the file and the entry: %.120s", err.msg);
	long grew = maxrss_kb() - before;
	ok(grew < 200 * 1024, "in bounded memory (+%ld KiB)", grew);
	free(data);

	/* one key over the length limit */
	ge_sstable_builder_init(&sb);
	ge_sstable_builder_add(&sb, key, 100000, "", 0, &err);
	data = ge_sstable_builder_finish(&sb, &len);
	rc = ge_sstable_parse("long.index", data, len, &t, &err);
	ok(rc == GE_EFORMAT && strstr(err.msg, "longer than"),
	   "a 100,000-byte key refused");
	free(data);
	free(key);
}

static void test_paths(void)
{
	char out[PATH_MAX];
	ge_error err;
	mkdir(P("m"), 0777);
	mkdir(P("m/sub"), 0777);
	write_file(P("m/sub/w.bin"), "abcd", 4);
	write_file(P("outside"), "secret", 6);
	ok(ge_path_inside(P("m"), "sub/w.bin", "model.json", "weights", out,
			  sizeof out, &err) == GE_OK,
	   "a file inside");
	ok(ge_path_inside(P("m"), "../outside", "model.json", "weights", out,
			  sizeof out, &err) == GE_EFORMAT &&
		   strstr(err.msg, "model.json: weights"),
	   "'..' refused: %s", err.msg);
	ok(ge_path_inside(P("m"), "sub/../sub/w.bin", "f", "w", out, sizeof out,
			  &err) == GE_EFORMAT,
	   "any '..' component refused");
	ok(ge_path_inside(P("m"), "/etc/passwd", "f", "w", out, sizeof out,
			  &err) == GE_EFORMAT,
	   "absolute refused");
	symlink(P("outside"), P("m/link"));
	ok(ge_path_inside(P("m"), "link", "f", "w", out, sizeof out, &err) ==
			   GE_EFORMAT &&
		   strstr(err.msg, "leads out"),
	   "a symlink leading out refused");
	symlink("sub/w.bin", P("m/inlink"));
	ok(ge_path_inside(P("m"), "inlink", "f", "w", out, sizeof out, &err) ==
		   GE_OK,
	   "a symlink staying inside is fine");
	mkfifo(P("m/fifo"), 0666);
	ok(ge_path_inside(P("m"), "fifo", "f", "w", out, sizeof out, &err) ==
			   GE_EFORMAT &&
		   strstr(err.msg, "not a regular file"),
	   "a FIFO refused");
	symlink("/dev/zero", P("m/zero"));
	uint8_t *d;
	size_t n;
	ok(ge_read_inside(P("m"), "zero", "f", "w", 1 << 20, &d, &n, &err) ==
		   GE_EFORMAT,
	   "/dev/zero through a link refused");
	ok(ge_read_inside(P("m"), "sub/w.bin", "f", "w", 2, &d, &n, &err) ==
		   GE_EFORMAT,
	   "a file over the size allowed refused");

	/* ge_file_read: a FIFO without a writer does not hang, /dev/zero
	 * stops at the budget */
	ok(ge_file_read(P("m/fifo"), &d, &n, &err) == GE_OK && n == 0,
	   "reading a FIFO nobody writes ends");
	free(d);
	ge_set_max_memory(4u << 20);
	ok(ge_file_read("/dev/zero", &d, &n, &err) == GE_EFORMAT &&
		   strstr(err.msg, "memory budget"),
	   "reading /dev/zero stops at the budget");
}

static int count_tmp(const char *base)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	size_t bl = strlen(base);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, base, bl) &&
		    (strstr(e->d_name + bl, ".tmp-") ||
		     strstr(e->d_name + bl, ".old-")))
			n++;
	closedir(d);
	return n;
}

static void test_swap(int exchange)
{
	ge_error err;
	const char *name = exchange ? "sw" : "sf";
	if (!exchange)
		setenv("GEREWRITE_NO_RENAME_EXCHANGE", "1", 1);
	char dst[2048], tmp[2048], f[PATH_MAX];
	snprintf(dst, sizeof dst, "%s", P(name));
	mkdir(dst, 0777);
	snprintf(f, sizeof f, "%s/old", dst);
	write_file(f, "o", 1);
	ok(ge_tmp_create(dst, 1, tmp, sizeof tmp) == 0, "%s: a temp dir",
	   name);
	char pid[32];
	snprintf(pid, sizeof pid, ".tmp-%ld-", (long)getpid());
	ok(strstr(tmp, pid) != NULL, "  its name carries the pid");
	snprintf(f, sizeof f, "%s/new", tmp);
	write_file(f, "n", 1);
	ok(ge_dir_swap(tmp, dst, &err) == GE_OK, "  swapped in");
	snprintf(f, sizeof f, "%s/new", dst);
	ok(access(f, F_OK) == 0, "  the new directory is there");
	snprintf(f, sizeof f, "%s/old", dst);
	ok(access(f, F_OK) != 0, "  the old one is gone");
	ok(count_tmp(name) == 0, "  nothing left beside it");
	unsetenv("GEREWRITE_NO_RENAME_EXCHANGE");
}

/* What a process killed mid-save leaves: cleaned by the next save. */
static void test_leftovers(void)
{
	char dst[PATH_MAX];
	snprintf(dst, sizeof dst, "%s", P("left.pb"));
	pid_t pid = fork();
	if (pid == 0) {
		char t[PATH_MAX];
		ge_tmp_create(dst, 0, t, sizeof t);
		ge_tmp_create(P("leftdir"), 1, t, sizeof t);
		kill(getpid(), SIGKILL);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	ok(count_tmp("left.pb") == 1 && count_tmp("leftdir") == 1,
	   "a killed save leaves its temps");
	ge_error err;
	ok(ge_file_write_atomic(dst, "x", 1, &err) == GE_OK &&
		   count_tmp("left.pb") == 0,
	   "the next save to the same path removes them");
	ge_tmp_clean(P("leftdir"));
	ok(count_tmp("leftdir") == 0, "directories too");

	/* killed between the fallback's two renames: the old directory is
	 * put back */
	mkdir(P("back"), 0777);
	char old[PATH_MAX];
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &st, 0);
	snprintf(old, sizeof old, "%s.old-%ld-abcdef", P("back"), (long)pid);
	rename(P("back"), old);
	ge_tmp_clean(P("back"));
	struct stat sb;
	ok(stat(P("back"), &sb) == 0 && S_ISDIR(sb.st_mode) &&
		   count_tmp("back") == 0,
	   "a dead save's .old- directory goes back in place");

	/* SIGTERM mid-save removes the temp file */
	int pfd[2];
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		ge_writer w;
		close(pfd[0]);
		ge_writer_open(&w, P("term.pb"), NULL);
		if (write(pfd[1], "r", 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	char c;
	if (read(pfd[0], &c, 1) != 1)
		c = 0;
	close(pfd[0]);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM &&
		   count_tmp("term.pb") == 0,
	   "SIGTERM during a save removes its temp file");
}

/* `hostile --maxrss CMD...`: runs CMD and prints its peak resident set
 * in KiB and its exit status (for t/hostile-mem.sh). */
static int maxrss_of(char **argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return 1;
	printf("%ld %d\n", ru.ru_maxrss,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--maxrss"))
		return maxrss_of(argv + 2);
	snprintf(dir, sizeof dir, "%s/gerewrite-hostile-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	tap_plan(49);
	test_sizes();
	test_depth();
	ge_set_max_memory(512u << 20);
	test_quadratic_index();
	test_paths();
	test_swap(1);
	test_swap(0);
	test_leftovers();
	ge_remove_tree(dir);
	return tap_failed != 0;
}
