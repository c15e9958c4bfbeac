/*
 * dot_render.h: the picture of `gerewrite dot` (dot_render.c): DOT text
 * with name-scope clusters, labels relative to the scope drawn, scopes
 * collapsed into one node until about N boxes are drawn (--collapse),
 * shapes on edges and a legend; unknown scopes with the nearest ones
 * suggested; output by file extension.
 */
#ifndef GE_DOT_RENDER_H
#define GE_DOT_RENDER_H

#include "base/base.h"
#include "graph/graph.h"

/* Colours of the --highlight marks (cmd_dot.c), drawn by dot_render. */
enum { DOT_MARK_NONE, DOT_MARK_ADDED, DOT_MARK_CHANGED, DOT_MARK_REMOVED };

/* DOT_PAGE: top to bottom, no legend (the page has its own), a collapsed
 * scope holding marked ops amber with their count; DOT_PAGE_OPEN: and
 * every scope holding a marked op drawn open. */
enum { DOT_PAGE = 1, DOT_PAGE_OPEN = 2 };

struct dot_view {
	const char *scope;          /* NULL: the whole graph */
	size_t collapse;            /* 0: none; else about this many boxes:
				       the scopes not opened are one node */
	const unsigned char *mark;  /* per op id, DOT_MARK_*, or NULL */
	size_t removed;             /* ops removed since the --highlight model */
	int page;                   /* DOT_PAGE_*: the picture of the page
				       of diff --html */
	int *drawn_as;              /* when not NULL, filled per op id: -1
				       for an op drawn as node "n<id>", s for
				       one inside collapsed scope "s<s>",
				       -2 for an op not drawn */
};

/* Appends the DOT text of the view of g to b. */
void dot_render(ge_buf *b, const ge_graph *g, const struct dot_view *v);

/* Whether some op lies in scope (the op named scope, or under scope/). */
int dot_scope_exists(const ge_graph *g, const char *scope);
/* Appends to b up to 5 existing scopes nearest to the unknown scope (by
 * edit distance, then name), comma-separated; nothing when none is near. */
void dot_suggest_scopes(const ge_graph *g, const char *scope, ge_buf *b);

/* Writes the DOT text to out in the format its extension names: .dot or
 * .gv (text), .svg, .png, .pdf (through Graphviz's dot, $GEREWRITE_DOT
 * names another program).  Returns 0 or EXIT_USAGE after a message;
 * the file appears whole or not at all. */
int dot_write(const char *out, const ge_buf *dot);

/* Whether Graphviz's dot ($GEREWRITE_DOT) can be run. */
int dot_have_graphviz(void);
/* Lays out the DOT text as SVG into svg (for messages, what is the name
 * of the page it goes into).  Returns 0 or EXIT_USAGE after a message. */
int dot_svg(const char *what, const ge_buf *dot, ge_buf *svg);

#endif
