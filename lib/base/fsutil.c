/* fsutil.c: see fsutil.h. */
#include "base/fsutil.h"
#include "base/flusher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ inside */

static int has_dotdot(const char *rel)
{
	const char *p = rel;
	while (*p) {
		const char *s = strchr(p, '/');
		size_t n = s ? (size_t)(s - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 1;
		if (!s)
			break;
		p = s + 1;
	}
	return 0;
}

int ge_path_inside(const char *dir, const char *rel, const char *file,
		   const char *what, char *out, size_t cap, ge_error *err)
{
	if (!*rel)
		return ge_err(err, GE_EFORMAT, "%s: %s: empty path", file, what);
	if (rel[0] == '/' || has_dotdot(rel) || strchr(rel, '\\'))
		return ge_err(err, GE_EFORMAT,
			      "%s: %s: path '%s' leaves the model's directory",
			      file, what, rel);
	if ((size_t)snprintf(out, cap, "%s/%s", dir, rel) >= cap)
		return ge_err(err, GE_EFORMAT, "%s: %s: path '%s' too long",
			      file, what, rel);
	char rdir[PATH_MAX], rpath[PATH_MAX];
	if (!realpath(dir, rdir))
		return ge_err(err, GE_EIO, "%s: %s", dir, strerror(errno));
	if (!realpath(out, rpath))
		return ge_err(err, GE_EIO, "%s: %s: '%s': %s", file, what, rel,
			      strerror(errno));
	size_t n = strlen(rdir);
	if (strncmp(rpath, rdir, n) != 0 ||
	    (rpath[n] != '/' && !(n == 1 && rdir[0] == '/')))
		return ge_err(err, GE_EFORMAT,
			      "%s: %s: path '%s' leads out of the model's "
			      "directory (to %s)",
			      file, what, rel, rpath);
	struct stat st;
	if (stat(rpath, &st) < 0)
		return ge_err(err, GE_EIO, "%s: %s: '%s': %s", file, what, rel,
			      strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ge_err(err, GE_EFORMAT,
			      "%s: %s: '%s' is not a regular file", file, what,
			      rel);
	return GE_OK;
}

int ge_read_inside(const char *dir, const char *rel, const char *file,
		   const char *what, uint64_t max, uint8_t **data,
		   size_t *len, ge_error *err)
{
	char path[PATH_MAX];
	int rc = ge_path_inside(dir, rel, file, what, path, sizeof path, err);
	if (rc)
		return rc;
	struct stat st;
	if (stat(path, &st) == 0 && (uint64_t)st.st_size > max)
		return ge_err(err, GE_EFORMAT,
			      "%s: %s: '%s' is larger (%lld bytes) than "
			      "allowed (%llu)",
			      file, what, rel, (long long)st.st_size,
			      (unsigned long long)max);
	rc = ge_file_read(path, data, len, err);
	if (!rc && *len > max) {
		free(*data);
		*data = NULL;
		return ge_err(err, GE_EFORMAT,
			      "%s: %s: '%s' grew past %llu bytes while read",
			      file, what, rel, (unsigned long long)max);
	}
	return rc;
}

/* ------------------------------------------------------------ copies */

void ge_save_pause(void)
{
	static long ms = -1;
	if (ms < 0) {
		const char *e = getenv("GEREWRITE_TEST_SAVE_PAUSE_MS");
		ms = e ? atol(e) : 0;
		if (ms < 0 || ms > 10000)
			ms = 0;
	}
	if (ms > 0)
		usleep((useconds_t)ms * 1000);
}

int ge_copy_file(const char *from, const char *to, ge_error *err)
{
	int in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return ge_err(err, GE_EIO, "%s: %s", from, strerror(errno));
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return ge_err(err, GE_EIO,
			      "%s: not a regular file (FIFO, device or socket):"
			      " refusing to read it",
			      from);
	}
	int outfd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (outfd < 0) {
		int e = errno;
		close(in);
		return ge_err(err, GE_EIO, "%s: %s", to, strerror(e));
	}
	char buf[1 << 16];
	ssize_t r;
	int rc = GE_OK;
	/* a large file is flushed as it is written, as a save's is
	 * (base/flusher.h) */
	ge_flushing fl = {0};
	fl.fd = outfd;
	while (!rc && (r = read(in, buf, sizeof buf)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = ge_err(err, GE_EIO, "%s: %s", from, strerror(errno));
			break;
		}
		char *p = buf;
		while (r > 0) {
			ssize_t w = write(outfd, p, (size_t)r);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				rc = ge_err(err, GE_EIO, "%s: %s", to,
					    strerror(errno));
				break;
			}
			p += w;
			r -= w;
			ge_flushing_wrote(&fl, (size_t)w);
		}
	}
	if (!rc && fsync(outfd) < 0)
		rc = ge_err(err, GE_EIO, "%s: %s", to, strerror(errno));
	int ferr = ge_flushing_end(&fl);
	if (ferr && !rc)
		rc = ge_err(err, GE_EIO, "%s: %s", to, strerror(ferr));
	close(in);
	if (close(outfd) < 0 && !rc)
		rc = ge_err(err, GE_EIO, "%s: %s", to, strerror(errno));
	ge_save_pause();
	return rc;
}

static int copy_tree_depth(const char *from, const char *to, int depth,
			   ge_error *err)
{
	if (depth > 64)
		return ge_err(err, GE_EIO, "%s: directories nested too deep",
			      from);
	if (mkdir(to, 0777) < 0 && errno != EEXIST)
		return ge_err(err, GE_EIO, "%s: %s", to, strerror(errno));
	DIR *d = opendir(from);
	if (!d)
		return ge_err(err, GE_EIO, "%s: %s", from, strerror(errno));
	struct dirent *e;
	int rc = GE_OK;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char a[PATH_MAX], b[PATH_MAX];
		if ((size_t)snprintf(a, sizeof a, "%s/%s", from, e->d_name) >=
			    sizeof a ||
		    (size_t)snprintf(b, sizeof b, "%s/%s", to, e->d_name) >=
			    sizeof b) {
			rc = ge_err(err, GE_EIO, "%s/%s: path too long", from,
				    e->d_name);
			break;
		}
		struct stat st;
		if (lstat(a, &st) < 0) {
			rc = ge_err(err, GE_EIO, "%s: %s", a, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = copy_tree_depth(a, b, depth + 1, err);
		} else if (S_ISREG(st.st_mode)) {
			rc = ge_copy_file(a, b, err);
		} else if (S_ISLNK(st.st_mode)) {
			/* copied as a link: its target is never read */
			char t[PATH_MAX];
			ssize_t n = readlink(a, t, sizeof t - 1);
			if (n < 0)
				rc = ge_err(err, GE_EIO, "%s: %s", a,
					    strerror(errno));
			else {
				t[n] = 0;
				if (symlink(t, b) < 0)
					rc = ge_err(err, GE_EIO, "%s: %s", b,
						    strerror(errno));
			}
		} else {
			rc = ge_err(err, GE_EIO,
				    "%s: not a regular file (FIFO, device or "
				    "socket): refusing to copy it",
				    a);
		}
	}
	closedir(d);
	return rc;
}

int ge_copy_tree(const char *from, const char *to, ge_error *err)
{
	return copy_tree_depth(from, to, 0, err);
}

/* Async-signal-safe: open, getdents64, unlinkat, close. */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void remove_at(int dirfd, const char *name, int depth)
{
	if (unlinkat(dirfd, name, 0) == 0 || errno != EISDIR)
		return;
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && depth < 64) {
		char buf[4096];
		long n;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
			for (long off = 0; off < n;) {
				struct linux_dirent64 *e =
					(struct linux_dirent64 *)(buf + off);
				off += e->d_reclen;
				if (strcmp(e->d_name, ".") &&
				    strcmp(e->d_name, ".."))
					remove_at(fd, e->d_name, depth + 1);
			}
		}
	}
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

int ge_remove_tree(const char *path)
{
	remove_at(AT_FDCWD, path, 0);
	struct stat st;
	return lstat(path, &st) == 0 ? -1 : 0;
}

/* ------------------------------------------------------------ temps */

#define MAX_TMPS 8
static char tmps[MAX_TMPS][PATH_MAX];
static volatile sig_atomic_t n_tmps;

void ge_tmp_remove_all(void)
{
	for (int i = 0; i < MAX_TMPS; i++)
		if (tmps[i][0])
			remove_at(AT_FDCWD, tmps[i], 0);
}

static void on_signal(int sig)
{
	ge_tmp_remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void hook_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO))
			signal(sigs[i], on_signal);
	}
}

static void remember(const char *tmp)
{
	hook_signals();
	for (int i = 0; i < MAX_TMPS; i++)
		if (!tmps[i][0]) {
			snprintf(tmps[i], sizeof tmps[i], "%s", tmp);
			n_tmps++;
			return;
		}
}

void ge_tmp_forget(const char *tmp)
{
	for (int i = 0; i < MAX_TMPS; i++)
		if (tmps[i][0] && !strcmp(tmps[i], tmp)) {
			tmps[i][0] = 0;
			n_tmps--;
		}
}

int ge_tmp_create(const char *path, int dir, char *out, size_t cap)
{
	if ((size_t)snprintf(out, cap, "%s.tmp-%ld-XXXXXX", path,
			     (long)getpid()) >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* blocked while the name is registered, so a signal finds it */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	int rc;
	if (dir)
		rc = mkdtemp(out) ? 0 : -1;
	else
		rc = mkstemp(out);
	int e = errno;
	if (rc >= 0)
		remember(out);
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return rc;
}

/* "<base><infix><pid>-..." of a dead process: its pid, else 0. */
static long dead_pid(const char *name, const char *base, const char *infix)
{
	size_t bl = strlen(base), il = strlen(infix);
	if (strncmp(name, base, bl) || strncmp(name + bl, infix, il))
		return 0;
	char *end;
	long pid = strtol(name + bl + il, &end, 10);
	if (pid <= 0 || *end != '-')
		return 0;
	if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
	    errno != ESRCH)
		return 0;
	return pid;
}

void ge_tmp_clean(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base)
		return;
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct stat st;
	int have = lstat(path, &st) == 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >=
		    sizeof p)
			continue;
		if (dead_pid(e->d_name, base, ".old-")) {
			/* killed between the two renames of the fallback:
			 * the old directory goes back where it was */
			if (!have && rename(p, path) == 0)
				have = 1;
			else
				ge_remove_tree(p);
		} else if (dead_pid(e->d_name, base, ".tmp-")) {
			ge_remove_tree(p);
		}
	}
	closedir(d);
}

static int exchange(const char *a, const char *b)
{
#ifdef RENAME_EXCHANGE
	const char *off = getenv("GEREWRITE_NO_RENAME_EXCHANGE");
	if (off && *off && strcmp(off, "0")) {
		errno = EINVAL;
		return -1;
	}
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
	(void)a;
	(void)b;
	errno = ENOSYS;
	return -1;
#endif
}

int ge_dir_swap(const char *tmp, const char *path, ge_error *err)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (rename(tmp, path) < 0)
			return ge_err(err, GE_EIO, "%s: %s", path,
				      strerror(errno));
		ge_tmp_forget(tmp);
		return GE_OK;
	}
	ge_save_pause();
	if (exchange(tmp, path) == 0) {
		/* tmp now names the old directory */
		ge_remove_tree(tmp);
		ge_tmp_forget(tmp);
		return GE_OK;
	}
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP &&
	    errno != EOPNOTSUPP)
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(errno));
	char old[PATH_MAX];
	if ((size_t)snprintf(old, sizeof old, "%s.old-%ld-XXXXXX", path,
			     (long)getpid()) >= sizeof old ||
	    !mkdtemp(old))
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(errno));
	rmdir(old);
	if (rename(path, old) < 0)
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(errno));
	ge_save_pause();
	if (rename(tmp, path) < 0) {
		int e = errno;
		rename(old, path);
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(e));
	}
	ge_tmp_forget(tmp);
	ge_remove_tree(old);
	return GE_OK;
}
