/*
 * tap.h: a small TAP producer for the C unit tests (header only).
 * Argument order is expected, then seen, as in c-tap-harness.
 */
#ifndef GE_TAP_H
#define GE_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned;

__attribute__((unused)) static void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((unused)) static void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

__attribute__((unused)) static void tap_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

__attribute__((unused)) static int tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((unused)) static int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vok(cond, fmt, ap);
	va_end(ap);
	return cond;
}

__attribute__((unused)) static int is_int(long long want, long long got, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vok(want == got, fmt, ap);
	va_end(ap);
	if (want != got)
		tap_diag("  expected %lld, got %lld", want, got);
	return want == got;
}

__attribute__((unused)) static int is_string(const char *want, const char *got, const char *fmt, ...)
{
	int c = (want == NULL && got == NULL) ||
		(want && got && strcmp(want, got) == 0);
	va_list ap;
	va_start(ap, fmt);
	tap_vok(c, fmt, ap);
	va_end(ap);
	if (!c)
		tap_diag("  expected '%s', got '%s'", want ? want : "(null)",
			 got ? got : "(null)");
	return c;
}

__attribute__((unused)) static void tap_skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
}

/* Call at the end of main: prints the plan if none was given. */
__attribute__((unused)) static int tap_done(void)
{
	if (!tap_planned)
		printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* The corpus directory for corpus tests, or NULL (test skips). */
__attribute__((unused)) static const char * tap_corpus(void)
{
	const char *c = getenv("GE_CORPUS");
	static char buf[4096];
	if (!c || !*c)
		return NULL;
	snprintf(buf, sizeof buf, "%s/MANIFEST.tsv", c);
	FILE *f = fopen(buf, "r");
	if (!f)
		return NULL;
	fclose(f);
	return c;
}

#endif
