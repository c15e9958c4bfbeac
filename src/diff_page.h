/*
 * diff_page.h: the shared pieces of `gerewrite diff` (cmd_diff.c) and its
 * page, `diff --html` (diff_page.c); one entry's text and JSON are in
 * diff_entry.c, which both call.
 */
#ifndef GE_DIFF_PAGE_H
#define GE_DIFF_PAGE_H

#include <jansson.h>

#include "editor/diff.h"

struct Tensorflow__AttrValue;

/* One attr value, short: 3, 0.5, true, float32, [-1,3], "SAME". */
void diff_attr_value(ge_buf *b, const struct Tensorflow__AttrValue *v);
/* What changed for a changed or moved entry, each part after sep then
 * "; ": "type A -> B; inputs x -> y; attrs k OLD -> NEW". */
void diff_changes(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
		  const ge_diff_entry *e, const char *sep);
/* One line for an entry: "- x (T)", "- x (T) -> into y", "+ y (T)",
 * "+ y (T), a copy of x", "~ y (T): what changed", "> x -> y (T): what
 * changed". */
void diff_describe(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
		   const ge_diff_entry *e);
/* A JSON string of s (null for NULL); the names of the entry kinds. */
json_t *diff_jstr(const char *s);
extern const char *const diff_kind_names[];
/* The entry as --json writes it. */
json_t *diff_entry_json(const ge_graph *ga, const ge_graph *gb,
			const ge_diff_entry *e);

/* The collections and signatures of two models (diff_meta.c): prints a
 * line for each that differs (with print), appends an entry to colls
 * and sigs (when not NULL), returns how many differ. */
size_t diff_meta(ge_graph *ga, ge_graph *gb, int print, json_t *colls,
		 json_t *sigs);

/* The checkpoints next to the models at paths pa and pb (a SavedModel's
 * variables, a .meta's bundle...; lib/variables/checkpoint.h): entries removed,
 * added, changed, as diff_meta does.  Nothing when neither has one. */
size_t diff_checkpoints(const char *pa, const char *pb, int print,
			json_t *arr);

struct diff_page_in {
	const char *name_a, *name_b; /* the paths given */
	const ge_graph *a, *b;
	json_t *verify;              /* --verify's figures, or NULL */
	json_t *more;                /* {functions, collections, signatures,
					checkpoint}: their --json entries */
};

/* Whether the page can be drawn (Graphviz is there); else says so in one
 * line and returns 0. */
int diff_page_can_draw(void);
/* Writes the page to out, whole or not at all.  Returns 0 or
 * EXIT_USAGE after a message. */
int diff_page_write(const char *out, const struct diff_page_in *in);

#endif
