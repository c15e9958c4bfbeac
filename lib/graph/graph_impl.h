/*
 * graph_impl.h: the representation behind graph.h.  Included by the graph
 * layer (graph.c, graph_parse.c, graph_io.c, check.c, frames.c, shapes.c,
 * and the function library's func.c, func_body.c, func_check.c through
 * func_impl.h) and by the files that keep data with a graph through its
 * hooks or parse GraphDef bytes into one: model.c, meta.c (through
 * meta_impl.h), tfjs.c and ckptplan.c; the unique names of names.c,
 * the batch inserts of insert.c and graph_copy.c, the copies that
 * share their source's attr bytes; provenance.c, which writes an op's
 * experimental_debug_info.  Nothing else includes it, nothing
 * outside lib/ ever.
 */
#ifndef GE_GRAPH_IMPL_H
#define GE_GRAPH_IMPL_H

#include "graph/graph.h"
#include "base/wire.h"

struct Tensorflow__AttrValue;
struct Tensorflow__OpList;

/* One attr map entry.  raw points at the encoded AttrValue: into the
 * graph's copy of the input file while untouched, or into `owned` after a
 * set.  `val` is the decoded value, made on first read. */
typedef struct ge_attr_ent {
	const char *key;
	const uint8_t *raw;
	size_t len;
	uint8_t *owned;
	struct Tensorflow__AttrValue *val;
} ge_attr_ent;

enum {
	OPF_DEAD = 1,        /* removed; id kept for "was removed" messages */
	OPF_DIRTY = 2,       /* name/type/inputs/device changed: re-encode */
	OPF_SPLIT = 4,       /* attrs split into ents (raw field 5s unused) */
	OPF_IN_OWNED = 8,    /* in[] malloc'd (else in the load pool) */
	OPF_USES_OWNED = 16,
	OPF_COUTS_OWNED = 32,
	OPF_DUPNAME = 64,    /* loaded with a name another op already had */
	OPF_ENTS_OWNED = 128,/* ents[] allocated (always, once split) */
	OPF_NAMED = 256,     /* named by ge_add_op_unique or a copy (graph_copy.c):
				its name joins the names handed out when it
				leaves the index */
	OPF_RAWATTRS = 512,  /* raw holds attr entries only (a copy's, shared
				with its source: graph_copy.c) */
	/* graph_copy.c's verdict on raw, kept while the attrs are not split
	 * (raw does not change until then): the attr entries are a
	 * shareable run from the first one to the end, holding
	 * `_output_shapes` / `_class` */
	OPF_RUN_OK = 1024,
	OPF_RUN_SHAPES = 2048,
	OPF_RUN_CLASS = 4096,
	/* edited since the last ge_graph_mark_now (with OPF_DIRTY, which an
	 * op without input bytes has from the start) */
	OPF_EDITED = 8192,
	/* raw holds a NodeDef field 6, experimental_debug_info (set by the
	 * load; an op without it needs no scan for provenance) */
	OPF_DBG_RAW = 16384,
	/* with OPF_RUN_OK: where the run starts in raw, + 1, in the bits
	 * from here up (0: not kept, as for an offset that does not fit) */
	OPF_RUN_AT_SHIFT = 16,
};

/* what an edit of an op sets */
#define OPF_EDIT (OPF_DIRTY | OPF_EDITED)

typedef struct ge_op {
	const char *name, *type, *device;
	ge_tref *in;               /* n_in data, then n_ctrl control */
	ge_use *uses;              /* sorted by (op, slot) */
	ge_opid *couts;            /* sorted */
	const uint8_t *raw;        /* original NodeDef bytes (for an op of
				      insert.c, attr entries in the arena),
				      or NULL */
	ge_attr_ent *ents;
	uint32_t n_in, n_ctrl;
	uint32_t n_uses;
	uint32_t n_couts;
	uint32_t raw_len;
	uint32_t n_ents;
	uint32_t flags;
	int32_t nout;              /* cached output count, -1 = not known */
} ge_op;

/* An op's NodeDef field 6 (experimental_debug_info) as provenance.c
 * set it: the whole field as it is written (tag, length, payload), or
 * len 0 when the op has none.  In the graph's arena; a save writes it in
 * place of the field the op's bytes hold. */
typedef struct ge_dbginfo {
	uint32_t len;
	uint8_t bytes[];
} ge_dbginfo;

/* A piece of the top-level GraphDef that is not a node, kept as read. */
typedef struct ge_rawfield {
	const uint8_t *p;
	size_t len;
	int after_nodes;  /* 0: before the nodes, -1: after them, k: after
			     the k-th node of the input */
} ge_rawfield;

typedef struct ge_meta ge_meta;  /* meta_impl.h: MetaGraphDef / SavedModel */

/* Data a higher layer keeps with a graph (the container of model.c and
 * meta.c, the checkpoint plan of varpolicy.c) comes with hooks that its
 * owner installs: through them the graph, which knows nothing of that
 * data, reports renames and removals, copies it for ge_graph_clone and
 * frees it with itself.  Any hook may be NULL. */
typedef struct ge_graph_hooks {
	void (*on_rename)(ge_graph *g, const char *from, const char *to);
	void (*on_remove)(ge_graph *g, const char *name);
	void (*clone)(ge_graph *dst, const ge_graph *src);
	void (*free)(ge_graph *g);
	/* A SavedModel save of g to path is about to swap in the new
	 * directory dir (made from srcdir, the directory g was loaded from,
	 * or NULL): the hook may add to dir, or fail the save. */
	int (*save_dir)(const ge_graph *g, const char *srcdir, const char *dir,
			const char *path, ge_error *err);
	/* A MetaGraphDef of g is about to be written to path: the hook may
	 * write what goes with it (the checkpoint, to ckpt when the save
	 * names one), or fail the save. */
	int (*save_file)(const ge_graph *g, const char *path, const char *ckpt,
			 ge_error *err);
	/* The function library (func.c) tells the container of a function
	 * renamed (to) or removed (to NULL); asks whether an object of the
	 * container stands for a function (1, with a reason in why: removing
	 * it needs force); and which functions the container makes entry
	 * points (add is called with each name). */
	void (*on_func_rename)(ge_graph *g, const char *from, const char *to);
	int (*func_pinned)(ge_graph *g, const char *name, char *why,
			   size_t cap);
	void (*func_roots)(ge_graph *g, void (*add)(void *ud, const char *name),
			   void *ud);
} ge_graph_hooks;
#define GE_GRAPH_MAX_HOOKS 8

struct ge_graph {
	char *name;
	ge_op *ops;
	size_t n_ops, cap_ops, n_live;
	uint64_t version;

	uint8_t *src;              /* the GraphDef bytes ops point into */
	size_t src_len;
	int src_owned;             /* 1 malloc'd, 2 mapped (filemap.h),
				      0 borrowed from the container */
	ge_tref *in_pool;          /* load-time pools the ops point into */
	ge_use *uses_pool;
	ge_opid *couts_pool;

	ge_rawfield *fields;
	size_t n_fields;

	/* name index: open addressing on a case-insensitive hash; a slot is
	 * hash << 32 | (id + 1), 0 empty, IDX_TOMB deleted. */
	uint64_t *idx;
	size_t idx_cap, idx_used;

	/* names handed out by unique_name, with their counters */
	struct ge_namectr *used;
	size_t used_cap, used_n;

	/* interned op types and devices */
	const char **strs;
	size_t strs_cap, strs_n;

	char **dangling;           /* texts of dangling inputs */
	size_t n_dangling, cap_dangling;

	ge_arena arena;

	/* colocation index, built on the first rename: for each name X, the
	 * ops whose `_class` holds "loc:@X".  Dropped when a `_class` attr is
	 * set from outside (rebuilt lazily). */
	struct ge_coloc *coloc;
	size_t coloc_cap, coloc_n;
	int coloc_built;

	/* the hooks of the data below, in the order installed */
	const ge_graph_hooks *hooks[GE_GRAPH_MAX_HOOKS];
	size_t n_hooks;

	/* checkpoint keys a save must add (varpolicy.h), or NULL */
	struct ge_ckpt_plan *ckpt_plan;

	ge_meta *meta;             /* container data, or NULL */
	struct ge_tfjs_meta *tfjs; /* what a model.json held beyond the
				      graph (tfjs.h), or NULL */
	int format;                /* ge_format it was loaded from */
	/* op types of the container's stripped_op_list, or NULL */
	const struct Tensorflow__OpList *oplist;
	struct ge_oplist_index *oplist_idx;
	/* control-flow frames (frames.c), recomputed when version moves */
	struct ge_frames *frames;

	/* function library model (func.c), made on first use, or NULL */
	struct ge_flib *flib;
	/* for a function body: the graph owning the library, and the
	 * function's id there; NULL / GE_NOFUNC-like for a top-level graph */
	ge_graph *parent;
	uint32_t func_id;

	/* inferred shapes (shapes.c, freed through its hooks), checked
	 * against version by their owner */
	void *shapes;

	/* set by a load (graph_parse.c), for the attr check (check.c): the
	 * first op with the same type and attr bytes as each op; meaningful
	 * while version is attr_cls_version, or NULL */
	ge_opid *attr_cls;
	uint64_t attr_cls_version;
	/* with attr_cls: for an op whose attrs differ from an earlier op's
	 * of its type only in what the attr check does not read (a
	 * Const's tensor values), that op's id + 1, else 0 */
	ge_opid *attr_vcls;

	/* set by a load from attr_cls (func.c, ge_note_attr_funcs): the
	 * ops whose attrs name a function, in id order (arena), every other
	 * op naming none; meaningful while fn_attr_known and version is
	 * fn_attr_version */
	ge_opid *fn_attr_ops;
	size_t n_fn_attr_ops;
	uint64_t fn_attr_version;
	int fn_attr_known;

	/* provenance.c: the rule log of a top-level graph (its bodies note
	 * there), or NULL, and where rules go (GE_PROV_*) */
	struct ge_prov_log *prov;
	int prov_mode;
	/* experimental_debug_info set since the load (provenance.c), by op
	 * id, in place of the one in the op's bytes: NULL for an op without
	 * one, and for every op past n_dbg.  Beside the ops rather than in
	 * them: most ops of most graphs have none (ge_op_dbg, ge_op_set_dbg;
	 * made on the first set, renumbered by a reorder, copied by a
	 * clone) */
	const struct ge_dbginfo **dbg;
	size_t n_dbg;
};

static inline const struct ge_dbginfo *ge_op_dbg(const ge_graph *g,
						 ge_opid id)
{
	return id < g->n_dbg ? g->dbg[id] : NULL;
}
/* ge_op_set_dbg past the end of the array: grows it (graph_io.c). */
void ge_op_dbg_grow(ge_graph *g, ge_opid id, const struct ge_dbginfo *d);
/* Sets op id's field (inline: a copy of a view sets one per op, and the
 * array is made for all the graph's ops at the first set). */
static inline void ge_op_set_dbg(ge_graph *g, ge_opid id,
				 const struct ge_dbginfo *d)
{
	if (id < g->n_dbg)
		g->dbg[id] = d;
	else
		ge_op_dbg_grow(g, id, d);
}

/* provenance.c, reached by the core through ge_parts: frees a graph's
 * rule log; follows a reorder of its ops (newid: old id -> new id,
 * GE_NOOP for a removed op, n of them). */
void ge_prov_free(struct ge_prov_log *l);
void ge_prov_renumber(ge_graph *g, const ge_opid *newid, size_t n);

#define IDX_TOMB 0xffffffffull

/* func.c: records which ops name functions in attrs (the fields above),
 * reading one op of each attr class; a load calls it while attr_cls holds. */
void ge_note_attr_funcs(ge_graph *g);

/* Internals shared by graph.c, graph_parse.c and graph_io.c. */
const char *ge_intern(ge_graph *g, const char *s, size_t n);
void ge_idx_grow(ge_graph *g, size_t want);
void ge_idx_add(ge_graph *g, ge_opid id);
void ge_idx_build(ge_graph *g);
/* Inserts op id under its name unless an op of the same (exact) name is
 * indexed: then returns that op and leaves the index alone. */
ge_opid ge_idx_insert(ge_graph *g, ge_opid id);
ge_opid ge_idx_find_n(const ge_graph *g, const char *name, size_t n, int ci);
/* The same two for a name whose ge_hash_ci is h. */
ge_opid ge_idx_insert_h(ge_graph *g, ge_opid id, uint32_t h);
ge_opid ge_idx_find_h(const ge_graph *g, const char *name, size_t n, int ci,
		      uint32_t h);
/* ge_idx_insert_h for an op whose name is n bytes long, when no op holds
 * it in any case (ge_idx_find_h with ci, then ge_idx_insert_h, in one
 * probe): else returns the op that does and leaves the index alone. */
ge_opid ge_idx_claim_h(ge_graph *g, ge_opid id, size_t n, uint32_t h);
/* A new live op named nm (kept: an arena string) of the interned type and
 * device, without edges or attrs; not indexed. */
ge_opid ge_new_op(ge_graph *g, const char *nm, const char *itype,
		  const char *idevice);
size_t ge_add_dangling(ge_graph *g, const char *s, size_t n);
/* For the batch inserts of insert.c: ge_graph_unique_name of the n bytes
 * of name (NUL-terminated there; hash is their ge_hash_ci), then a new op
 * so named, of the interned type and device, without edges or attrs (it
 * is dirty).  With keep, name is in g's arena and becomes the op's name
 * when it is free, without a copy. */
ge_opid ge_add_op_unique(ge_graph *g, const char *name, size_t n,
			 uint32_t hash, int keep, const char *itype,
			 const char *idevice);
/* An op leaves the name index (removed or renamed): a name it was given
 * by ge_add_op_unique stays taken for unique names. */
void ge_names_release(ge_graph *g, ge_opid id);
/* dst, a fresh graph, remembers the names src handed out (ge_graph_clone):
 * a clone's unique names are those the source would give next. */
void ge_names_copy(ge_graph *dst, const ge_graph *src);
/* Room for n more ops (the ops array, the name index), so that adding
 * them moves no table. */
void ge_graph_reserve_ops(ge_graph *g, size_t n);
/* Starts fetching the table slots that naming a name of ge_hash_ci h
 * will probe: on a large graph each probe is a cache miss, which a batch
 * can overlap. */
void ge_names_prefetch(const ge_graph *g, uint32_t h);


/* Parses GraphDef bytes in place.  With take, the graph owns data (a
 * malloc'd block, freed even on failure); without, data must outlive the
 * graph (it belongs to the graph's container). */
int ge_graph_parse_graphdef_buf(uint8_t *data, size_t len, int take,
				const char *name, ge_graph **out,
				ge_error *err);

/* The room a heap edge array of n elements has (graph.c's growth rule,
 * which copies of the arrays must follow): the next power of two at or
 * above n, at least 4. */
size_t ge_edge_room(uint32_t n);
/* An edge (or attr entry) array of n elements, moved or grown by that
 * rule so that element n (0-based) fits: a heap array (owned_flag set in
 * *flags) is grown when n is such a power, a pooled or arena one is
 * copied to the heap and owned_flag set. */
void *ge_edge_make_room(void *a, uint32_t n, size_t elsz, uint32_t *flags,
			uint32_t owned_flag);

/* Installs h on g, once: installing it again does nothing. */
void ge_graph_add_hooks(ge_graph *g, const ge_graph_hooks *h);

/* Forgets the colocation index (rebuilt on the next rename). */
void ge_coloc_drop(ge_graph *g);

/* Whether name s (n bytes, h its ge_hash_ci) is free for
 * ge_graph_unique_name: no op has it (in any case) and unique_name never
 * handed it out.  An op added under such a name with OPF_NAMED holds it
 * as unique_name would have (graph_copy.c). */
int ge_name_free(const ge_graph *g, const char *s, size_t n, uint32_t h);
/* The half of it that asks the names unique_name handed out. */
int ge_name_handed_out(const ge_graph *g, const char *s, size_t n,
		       uint32_t h);

/* Re-encodes one op as NodeDef bytes. */
void ge_op_encode(const ge_graph *g, ge_opid id, ge_buf *out);
/* The same with the text of each input written by `text` (function
 * bodies spell inputs `node:out_arg:k`); text NULL is ge_op_encode, whose
 * inputs naming live ops of g are written inline (the fast path: its
 * contract, an input naming a live op of g, is asserted). */
typedef void (*ge_input_text_fn)(const ge_graph *g, ge_opid id, uint32_t slot,
				 ge_buf *b);
void ge_op_encode_ex(const ge_graph *g, ge_opid id, ge_buf *out,
		     ge_input_text_fn text);

/* ---- the parts above the core ----
 * The graph core (graph.c, graph_parse.c, graph_io.c, graph_copy.c,
 * names.c) keeps data of the function library (g->flib, layer 3) and of
 * the analyses (g->frames, layer 2) but never calls those files by name:
 * what it asks of them goes through this one table, which a part fills
 * (ge_flib_install in func_body.c, frames.c itself) before it attaches
 * its data to any graph.  A graph whose g->flib (g->frames) is NULL never
 * needs the part's pointers; ge_graph_opdef asks the library only when
 * the function library part is installed, which the formats layer does
 * before it loads a model (a GraphDef read by the core alone then knows
 * no function called as an op type). */
struct ge_flib;
struct Tensorflow__OpDef;
typedef struct ge_graph_parts {
	/* the library: freed with its graph; whether it must be
	 * re-encoded; root made the parent of every parsed body of its
	 * library (after ge_graph_swap moved the library into root); its
	 * payload as it is now (FunctionDefLibrary bytes); the signature
	 * of a function called as an op type; told of a library field
	 * appended to g->fields */
	void (*flib_free)(struct ge_flib *l);
	int (*flib_changed)(const ge_graph *g);
	void (*flib_adopt)(ge_graph *root);
	void (*flib_encode_payload)(const ge_graph *g, ge_buf *out);
	const struct Tensorflow__OpDef *(*flib_opdef)(const ge_graph *g,
						      const char *type);
	void (*flib_add_field)(ge_graph *g, const uint8_t *p, size_t len);
	/* the cached control-flow frames, freed with their graph */
	void (*frames_release)(struct ge_frames *F);
	/* the log of provenance rules (provenance.c): freed with its
	 * graph; told of the ops renumbered by ge_graph_compact's reorder
	 * (newid[old], GE_NOOP for a removed op) */
	void (*prov_free)(struct ge_prov_log *l);
	void (*prov_renumber)(ge_graph *g, const ge_opid *newid, size_t n);
} ge_graph_parts;
extern ge_graph_parts ge_parts;
/* Whether g's library must be re-encoded (0 without a library). */
static inline int ge_graph_flib_changed(const ge_graph *g)
{
	return g->flib && ge_parts.flib_changed(g);
}

/* Number of tensors an OpDef output arg stands for on op id (its
 * number_attr or type_list_attr, the OpDef's default when the op lacks
 * it); -1 if an attr it depends on is missing. */
struct Tensorflow__OpDef__ArgDef;
int ge_op_arg_count(const ge_graph *g, ge_opid id,
		    const struct Tensorflow__OpDef *d,
		    const struct Tensorflow__OpDef__ArgDef *a);

#endif
