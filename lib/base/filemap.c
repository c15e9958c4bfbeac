/* filemap.c: see filemap.h. */
#include "base/filemap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MAP_POPULATE
#define MAP_POPULATE 0
#endif

/* Live mappings.  The signal handler reads them, so a slot is filled
 * with the lease's signal blocked and published by its fd last. */
enum { MAX_MAPS = 32 };
static struct map {
	volatile int fd;      /* -1 once the lease is given up */
	uint8_t *p;
	size_t len;           /* rounded to pages */
	volatile sig_atomic_t state; /* 0 free, 1 mapped, 2 copied, 3 lost */
} maps[MAX_MAPS];
static int handler_on;

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (n + pg - 1) / pg * pg;
}

/* Async-signal-safe: the bytes go to anonymous memory that is then moved
 * (page tables, no copy) onto the mapping's address, so every pointer
 * into the file stays valid and reads the bytes loaded. */
static void keep_bytes(struct map *m)
{
	void *a = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int kept = 0;
	if (a != MAP_FAILED) {
		memcpy(a, m->p, m->len);
		mprotect(a, m->len, PROT_READ);
		if (mremap(a, m->len, m->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   m->p) != MAP_FAILED)
			kept = 1;
		else
			munmap(a, m->len);
	}
	/* marked before the lease goes: the file may change from then on */
	m->state = kept ? 2 : 3;
	int fd = m->fd;
	m->fd = -1;
	fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
}

/* The kernel is breaking a lease: someone opens the file for writing or
 * truncates it, and waits (up to /proc/sys/fs/lease-break-time) for the
 * lease to go.  A lease being broken no longer reads as F_RDLCK. */
static void on_lease_break(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int e = errno;
	for (int i = 0; i < MAX_MAPS; i++) {
		struct map *m = &maps[i];
		int fd = m->fd;
		if (m->state != 1 || fd < 0)
			continue;
		if ((si && si->si_fd == fd) ||
		    fcntl(fd, F_GETLEASE) != F_RDLCK)
			keep_bytes(m);
	}
	errno = e;
}

static int install_handler(void)
{
	if (handler_on)
		return 0;
	struct sigaction old, sa;
	if (sigaction(SIGIO, NULL, &old) < 0)
		return -1;
	/* a program with its own SIGIO handler keeps it: no leases then */
	if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_lease_break;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGIO, &sa, NULL) < 0)
		return -1;
	handler_on = 1;
	return 0;
}

static size_t map_min(size_t min)
{
	const char *e = getenv("GEREWRITE_MAP_MIN");
	if (e && *e) {
		char *end;
		unsigned long long v = strtoull(e, &end, 10);
		if (!*end)
			return (size_t)v;
	}
	return min;
}

int ge_file_map(const char *path, size_t min, uint8_t **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* a size on a page boundary leaves no zero byte after the last one,
	 * which a read buffer has: such a file is read */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size < map_min(min) ||
	    (uint64_t)st.st_size % pg == 0 || install_handler()) {
		close(fd);
		return 0;
	}
	int slot = -1;
	for (int i = 0; i < MAX_MAPS && slot < 0; i++)
		if (__atomic_exchange_n(&maps[i].state, 1, __ATOMIC_ACQ_REL) == 0)
			slot = i;
	if (slot < 0) {
		close(fd);
		return 0;
	}
	struct map *m = &maps[slot];
	m->fd = -1;
	sigset_t io, old;
	sigemptyset(&io);
	sigaddset(&io, SIGIO);
	sigprocmask(SIG_BLOCK, &io, &old);
	uint8_t *p = MAP_FAILED;
	/* the size is read again under the lease: from then on the file
	 * cannot change without this process hearing of it first.  The
	 * parse reads every byte: the page tables are filled at once
	 * (MAP_POPULATE) rather than by a fault every 16 pages */
	if (fcntl(fd, F_SETSIG, SIGIO) == 0 &&
	    fcntl(fd, F_SETLEASE, F_RDLCK) == 0 && fstat(fd, &st) == 0 &&
	    st.st_size > 0 && (uint64_t)st.st_size % pg != 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ,
			 MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		close(fd);
		__atomic_store_n(&m->state, 0, __ATOMIC_RELEASE);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	m->p = p;
	m->len = page_round((size_t)st.st_size);
	__atomic_store_n(&m->fd, fd, __ATOMIC_RELEASE);
	/* a break that came meanwhile is handled now */
	sigprocmask(SIG_SETMASK, &old, NULL);
	*data = p;
	*len = (size_t)st.st_size;
	return 1;
}

void ge_file_unmap(uint8_t *data, size_t len)
{
	sigset_t io, old;
	sigemptyset(&io);
	sigaddset(&io, SIGIO);
	sigprocmask(SIG_BLOCK, &io, &old);
	for (int i = 0; i < MAX_MAPS; i++) {
		struct map *m = &maps[i];
		if (!m->state || m->p != data)
			continue;
		int fd = m->fd;
		if (fd >= 0) {
			m->fd = -1;
			fcntl(fd, F_SETLEASE, F_UNLCK);
			close(fd);
		}
		munmap(data, m->len);
		m->p = NULL;
		__atomic_store_n(&m->state, 0, __ATOMIC_RELEASE);
		data = NULL;
		break;
	}
	if (data) /* not found: a plain mapping */
		munmap(data, page_round(len));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int ge_file_map_state(const uint8_t *data)
{
	for (int i = 0; i < MAX_MAPS; i++)
		if (maps[i].state && maps[i].p == data)
			return maps[i].state;
	return 0;
}
