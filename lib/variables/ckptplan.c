/*
 * ckptplan.c: the checkpoint plan a graph carries (varpolicy.h), kept with
 * the graph through its hooks and applied when it is saved as a
 * SavedModel.
 */
#include "variables/varpolicy.h"
#include "graph/graph_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "formats/model.h"

/* ------------------------------------------------------------ plans */

static void plan_add_from(ge_ckpt_plan *p, const char *src, const char *dst,
			  int rename, const char *from)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->src = ge_xrealloc(p->src, p->cap * sizeof *p->src);
		p->dst = ge_xrealloc(p->dst, p->cap * sizeof *p->dst);
		p->rename = ge_xrealloc(p->rename, p->cap);
		p->src_from = ge_xrealloc(p->src_from,
					  p->cap * sizeof *p->src_from);
	}
	p->src[p->n] = ge_xstrdup(src);
	p->dst[p->n] = ge_xstrdup(dst);
	p->rename[p->n] = (unsigned char)(rename != 0);
	p->src_from[p->n] = from ? ge_xstrdup(from) : NULL;
	p->n++;
}

static void plan_add(ge_ckpt_plan *p, const char *src, const char *dst,
		     int rename)
{
	plan_add_from(p, src, dst, rename, NULL);
}

/* The bundle entry i of p reads from, NULL for the plan's own. */
static const char *entry_from(const ge_ckpt_plan *p, size_t i)
{
	return p->src_from ? p->src_from[i] : NULL;
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
		plan_add_from(c, p->src[i], p->dst[i], p->rename[i],
			      entry_from(p, i));
	c->from = p->from ? ge_xstrdup(p->from) : NULL;
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

static ge_ckpt_plan *graph_plan(ge_graph *g);

int ge_graph_checkpoint_source(const ge_graph *g, char **prefix,
			       ge_error *err)
{
	*prefix = NULL;
	if (g->ckpt_plan && g->ckpt_plan->from) {
		*prefix = ge_xstrdup(g->ckpt_plan->from);
		return GE_OK;
	}
	const char *dir = ge_graph_savedmodel_dir(g);
	const char *name = ge_graph_name(g);
	if (!dir && !(name && *name))
		return ge_err(err, GE_ENOTFOUND,
			      "graph: not loaded from a file, so it has no "
			      "checkpoint");
	return ge_checkpoint_prefix(dir ? dir : name, prefix, err);
}

const char *ge_graph_checkpoint_origin(const ge_graph *g, const char *key)
{
	const ge_ckpt_plan *p = g->ckpt_plan;
	for (size_t i = p ? p->n : 0; i-- > 0;)
		if (!strcmp(p->dst[i], key))
			return entry_from(p, i) ? NULL : p->src[i];
	return key;
}

void ge_graph_checkpoint_copy_from(ge_graph *g, const ge_graph *src,
				   const char *key, const char *dst)
{
	const ge_ckpt_plan *sp = src->ckpt_plan;
	const char *skey = key, *sfrom = NULL;
	for (size_t i = sp ? sp->n : 0; i-- > 0;)
		if (!strcmp(sp->dst[i], key)) {
			skey = sp->src[i];
			sfrom = entry_from(sp, i);
			break;
		}
	char *from = NULL, *own = NULL;
	ge_error e;
	if (sfrom)
		from = ge_xstrdup(sfrom);
	else if (ge_graph_checkpoint_source(src, &from, &e) != GE_OK)
		from = NULL;
	if (!from) {
		/* src has no values: the key is planned all the same */
		ge_graph_add_checkpoint_copy(g, skey, dst);
		return;
	}
	int has_own = ge_graph_checkpoint_source(g, &own, &e) == GE_OK;
	if (!has_own) {
		graph_plan(g)->from = from;
		ge_ckpt_plan_add(graph_plan(g), skey, dst);
		return;
	}
	if (!strcmp(own, from))
		ge_ckpt_plan_add(graph_plan(g), skey, dst);
	else
		plan_add_from(graph_plan(g), skey, dst, 0, from);
	free(own);
	free(from);
}

void ge_graph_checkpoint_from(ge_graph *g, const ge_graph *src)
{
	char *own = NULL, *from = NULL;
	ge_error e;
	if (g->ckpt_plan && g->ckpt_plan->from)
		return;
	if (ge_graph_checkpoint_source(g, &own, &e) == GE_OK) {
		free(own);
		return;
	}
	if (ge_graph_checkpoint_source(src, &from, &e) == GE_OK)
		graph_plan(g)->from = from;
}

/* Where the planned values come from: *prefix, or NULL when the graph
 * (and the graph its variables were copied from) has no checkpoint at
 * all, so that there are no values to write. */
static int plan_source(const ge_graph *g, const char *srcdir,
		       char **prefix, ge_error *err)
{
	const ge_ckpt_plan *plan = ge_graph_checkpoint_plan(g);
	*prefix = NULL;
	if (srcdir && !plan->from) {
		size_t n = strlen(srcdir) + sizeof "/variables/variables";
		*prefix = ge_xmalloc(n);
		snprintf(*prefix, n, "%s/variables/variables", srcdir);
		return GE_OK;
	}
	int rc = ge_graph_checkpoint_source(g, prefix, err);
	return rc == GE_ENOTFOUND ? GE_OK : rc;
}

/* Whether an entry of the plan reads a bundle of its own. */
static int reads_elsewhere(const ge_ckpt_plan *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		if (entry_from(p, i))
			return 1;
	return 0;
}

/* A SavedModel saved from a graph whose transforms duplicated variables:
 * the new checkpoint holds them too, under their new keys. */
static int plan_save_hook(const ge_graph *g, const char *srcdir,
			  const char *dir, const char *path, ge_error *err)
{
	const ge_ckpt_plan *plan = ge_graph_checkpoint_plan(g);
	if (!plan)
		return GE_OK;
	(void)path;
	char *from;
	int rc = plan_source(g, srcdir, &from, err);
	if (!rc && (from || reads_elsewhere(plan)))
		rc = ge_savedmodel_apply_plan(dir, from, plan, err);
	free(from);
	return rc;
}

/* A MetaGraphDef saved to path: the checkpoint the plan describes goes
 * to ckpt, or else next to it (path minus `.meta`, as tf.train.Saver
 * names them). */
static int plan_save_file_hook(const ge_graph *g, const char *path,
			       const char *ckpt, ge_error *err)
{
	const ge_ckpt_plan *plan = ge_graph_checkpoint_plan(g);
	if (!plan)
		return GE_OK;
	char *from;
	int rc = plan_source(g, NULL, &from, err);
	if (rc || (!from && !reads_elsewhere(plan)))
		return rc;
	char *dst;
	if (ckpt) {
		dst = ge_xstrdup(ckpt);
	} else {
		size_t n = strlen(path);
		const char *dot = strrchr(path, '.');
		const char *slash = strrchr(path, '/');
		if (dot && dot > path && (!slash || dot > slash + 1))
			n = (size_t)(dot - path);
		dst = ge_xstrndup(path, n);
	}
	ge_bundle *b = NULL;
	if (from)
		rc = ge_bundle_open(from, &b, err);
	if (!rc) {
		rc = ge_checkpoint_apply_plan(b, dst, plan, err);
		if (b)
			ge_bundle_close(b);
	}
	free(dst);
	free(from);
	return rc;
}

/* The plan is the graph's, kept through the graph's hooks. */
static const ge_graph_hooks plan_hooks = {
	.clone = plan_clone_hook,
	.free = plan_free_hook,
	.save_dir = plan_save_hook,
	.save_file = plan_save_file_hook,
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
		if (p->src_from)
			free(p->src_from[i]);
	}
	free(p->src);
	free(p->dst);
	free(p->src_from);
	free(p->rename);
	free(p->from);
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
			if (p->src_from) {
				free(p->src_from[i]);
				memmove(p->src_from + i, p->src_from + i + 1,
					(p->n - i - 1) * sizeof *p->src_from);
			}
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
