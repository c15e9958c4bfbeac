/*
 * match_impl.h: what the pattern builder (pattern.c) and the matcher
 * (match.c) share behind match.h: the pattern node and the helpers that
 * render dtypes and attr values in explanations.  Only those two files
 * include this.
 */
#ifndef GE_MATCH_IMPL_H
#define GE_MATCH_IMPL_H

#include "match/match.h"
#include "graph/sets.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* Deeper than any pattern a person writes; a bound keeps a huge variadic
 * op under a non-trivial rest from exhausting the C stack. */
#define MAX_DEPTH 4000

/* Callback user data, shared by the copies of a node. */
typedef struct udref {
	int refs;
	void *ud;
	ge_ud_free fn;
} udref;

typedef struct attr_req {
	char *name;
	uint8_t *raw;                /* expected value, encoded (or NULL) */
	size_t len;
	Tensorflow__AttrValue *val;  /* the same, decoded */
	ge_pat_attr_fn fn;           /* or a callback */
	udref *ud;
} attr_req;

typedef struct pred {
	ge_pat_fn fn;
	udref *ud;
} pred;

struct ge_pat {
	int refs;
	int kind;
	int commute;
	char *capture;
	char *types_text;            /* as given; NULL: any type */
	char **types;
	size_t n_types;
	ge_pat **operands;
	size_t n_operands;
	ge_pat **ctrl;
	size_t n_ctrl;
	ge_pat *sub;                 /* optional, rest */
	attr_req *attrs;
	size_t n_attrs;
	pred *preds;
	size_t n_preds;
	int *dtypes;
	size_t n_dtypes;
	int64_t *dims;
	int rank, has_shape;
	size_t cons_min, cons_max;
	int has_cons;
	size_t ctl_min, ctl_max;
	int has_ctl;
	ge_regex *name_re;
};

/* Reference types (DT_FLOAT_REF = 101) match their base type. */
int ge_pat_base_dtype(int d);
/* s quoted as in messages, cut after max bytes. */
void ge_pat_add_quoted(ge_buf *b, const char *s, size_t n, size_t max);
void ge_pat_add_dtype(ge_buf *b, int d);
/* A short rendering of an attr value for messages. */
void ge_pat_add_attr(ge_buf *b, const Tensorflow__AttrValue *v);

#endif
