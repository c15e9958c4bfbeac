/*
 * ckptplan.c: the checkpoint plan a graph carries (varpolicy.h), kept with
 * the graph through its hooks and applied when it is saved as a
 * SavedModel.
 */
#include "varpolicy.h"
#include "graph_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

/* ------------------------------------------------------------ plans */

static void plan_add(ge_ckpt_plan *p, const char *src, const char *dst,
		     int rename)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->src = ge_xrealloc(p->src, p->cap * sizeof *p->src);
		p->dst = ge_xrealloc(p->dst, p->cap * sizeof *p->dst);
		p->rename = ge_xrealloc(p->rename, p->cap);
	}
	p->src[p->n] = ge_xstrdup(src);
	p->dst[p->n] = ge_xstrdup(dst);
	p->rename[p->n] = (unsigned char)(rename != 0);
	p->n++;
}

void ge_ckpt_plan_add(ge_ckpt_plan *p, const char *src, const char *dst)
{
	plan_add(p, src, dst, 0);
}

void ge_ckpt_plan_add_rename(ge_ckpt_plan *p, const char *src,
			     const char *dst)
{
	plan_add(p, src, dst, 1);
}

static void ckpt_plan_release(ge_ckpt_plan *p)
{
	if (!p)
		return;
	ge_ckpt_plan_free(p);
	free(p);
}

static ge_ckpt_plan *ckpt_plan_dup(const ge_ckpt_plan *p)
{
	if (!p || !p->n)
		return NULL;
	ge_ckpt_plan *c = ge_xcalloc(1, sizeof *c);
	for (size_t i = 0; i < p->n; i++)
		plan_add(c, p->src[i], p->dst[i], p->rename[i]);
	return c;
}

static void plan_clone_hook(ge_graph *dst, const ge_graph *src)
{
	dst->ckpt_plan = ckpt_plan_dup(src->ckpt_plan);
}

static void plan_free_hook(ge_graph *g)
{
	ckpt_plan_release(g->ckpt_plan);
	g->ckpt_plan = NULL;
}

/* A SavedModel saved from a graph whose transforms duplicated variables:
 * the new checkpoint holds them too, under their new keys. */
static int plan_save_hook(const ge_graph *g, const char *srcdir,
			  const char *dir, const char *path, ge_error *err)
{
	const ge_ckpt_plan *plan = ge_graph_checkpoint_plan(g);
	if (!plan)
		return GE_OK;
	if (!srcdir)
		return ge_err(err, GE_EINVAL,
			      "%s: the graph has duplicated variables but no "
			      "SavedModel variables to copy them from",
			      path);
	char vars[PATH_MAX];
	if ((size_t)snprintf(vars, sizeof vars, "%s/variables/variables",
			     srcdir) >= sizeof vars)
		return ge_err(err, GE_EIO, "%s: path too long", srcdir);
	return ge_savedmodel_apply_plan(dir, vars, plan, err);
}

/* The plan is the graph's, kept through the graph's hooks. */
static const ge_graph_hooks plan_hooks = {
	.clone = plan_clone_hook,
	.free = plan_free_hook,
	.save_dir = plan_save_hook,
};

static ge_ckpt_plan *graph_plan(ge_graph *g)
{
	if (!g->ckpt_plan) {
		g->ckpt_plan = ge_xcalloc(1, sizeof *g->ckpt_plan);
		ge_graph_add_hooks(g, &plan_hooks);
	}
	return g->ckpt_plan;
}

const ge_ckpt_plan *ge_graph_checkpoint_plan(const ge_graph *g)
{
	return g->ckpt_plan && g->ckpt_plan->n ? g->ckpt_plan : NULL;
}

void ge_graph_add_checkpoint_copy(ge_graph *g, const char *src,
				  const char *dst)
{
	ge_ckpt_plan *p = graph_plan(g);
	/* the source checkpoint does not hold what the plan itself makes */
	for (size_t i = p->n; i-- > 0;)
		if (!strcmp(p->dst[i], src)) {
			src = p->src[i];
			break;
		}
	ge_ckpt_plan_add(p, src, dst);
}

void ge_graph_checkpoint_drop(ge_graph *g, const char *key)
{
	ge_ckpt_plan_add_rename(graph_plan(g), key, "");
}

void ge_ckpt_plan_free(ge_ckpt_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->src[i]);
		free(p->dst[i]);
	}
	free(p->src);
	free(p->dst);
	free(p->rename);
	memset(p, 0, sizeof *p);
}

void ge_graph_checkpoint_rename(ge_graph *g, const char *from, const char *to)
{
	ge_ckpt_plan *p = g->ckpt_plan;
	for (size_t i = 0; p && i < p->n; i++) {
		if (strcmp(p->dst[i], from))
			continue;
		/* the plan made `from`: it makes `to` instead */
		free(p->dst[i]);
		p->dst[i] = ge_xstrdup(to);
		if (!strcmp(p->src[i], to)) {
			/* renamed back: nothing left to do */
			free(p->src[i]);
			free(p->dst[i]);
			p->n--;
			memmove(p->src + i, p->src + i + 1,
				(p->n - i) * sizeof *p->src);
			memmove(p->dst + i, p->dst + i + 1,
				(p->n - i) * sizeof *p->dst);
			memmove(p->rename + i, p->rename + i + 1, p->n - i);
		}
		return;
	}
	ge_ckpt_plan_add_rename(graph_plan(g), from, to);
}
