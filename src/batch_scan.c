/*
 * batch_scan.c: what `gerewrite batch` decides about a file before it
 * runs anything: chunked SavedModels (not supported yet), and files named
 * like models that hold something else (an OpList, a config text proto),
 * which are skipped with a reason rather than failed.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_scan.h"
#include "formats/model.h"

#define HEAD_MAX 4096

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

static ssize_t read_head(const char *path, uint8_t *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap);
	close(fd);
	return n;
}

static int regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int batch_chunked_dir(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/saved_model.cpb", dir);
	if (!regular_file(p))
		return 0;
	snprintf(p, sizeof p, "%s/saved_model.pb", dir);
	if (regular_file(p))
		return 0;
	snprintf(p, sizeof p, "%s/saved_model.pbtxt", dir);
	return !regular_file(p);
}

/* The first field name of a text proto (comments and blanks skipped),
 * copied into name; 0 when the bytes do not start like one. */
static int first_field(const uint8_t *d, size_t n, char *name, size_t cap)
{
	size_t i = 0;
	for (;;) {
		while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' ||
				 d[i] == '\n'))
			i++;
		if (i < n && d[i] == '#') {
			while (i < n && d[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	size_t k = 0;
	while (i < n && k + 1 < cap &&
	       ((d[i] >= 'a' && d[i] <= 'z') || (d[i] >= 'A' && d[i] <= 'Z') ||
		(d[i] >= '0' && d[i] <= '9') || d[i] == '_'))
		name[k++] = (char)d[i++];
	name[k] = 0;
	return k > 0;
}

static int printable(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t')
			return 0;
	return 1;
}

const char *batch_skip_reason(const char *path, char *buf, size_t cap)
{
	if (has_suffix(path, ".cpb")) {
		snprintf(buf, cap, "chunked SavedModel: not supported yet");
		return buf;
	}
	uint8_t head[HEAD_MAX];
	ssize_t n = read_head(path, head, sizeof head);
	if (n <= 0)
		return NULL; /* unreadable or empty: the load reports it */
	if (ge_sniff(head, (size_t)n) != GE_FMT_AUTO)
		return NULL;
	/* a text proto of another message: an OpList starts with "op",
	 * configs with their own fields; binary files are left to the load,
	 * which says what is wrong with them */
	char f[64];
	if (!printable(head, (size_t)n) || !first_field(head, (size_t)n, f,
							sizeof f))
		return NULL;
	if (!strcmp(f, "op"))
		snprintf(buf, cap, "an OpList (op definitions), not a model");
	else
		snprintf(buf, cap,
			 "a text proto whose first field is '%s', not a "
			 "GraphDef, MetaGraphDef or SavedModel",
			 f);
	return buf;
}
