/*
 * meta_impl.h: a container (MetaGraphDef or SavedModel) as model.c keeps
 * it, shared by model.c (reading, writing) and meta.c (collections,
 * signatures, saver).  Only those two files include this.
 */
#ifndef GE_META_IMPL_H
#define GE_META_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "graph_impl.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* MetaGraphDef fields */
enum { MG_INFO = 1, MG_GRAPH = 2, MG_SAVER = 3, MG_COLLECTION = 4,
       MG_SIGNATURE = 5 };
/* SavedModel fields */
enum { SM_META = 2 };
/* MetaInfoDef.tags */
enum { MI_TAGS = 4 };

typedef struct seg seg;
struct seg {
	uint32_t field;
	const uint8_t *p;    /* the whole field: tag, length, payload */
	size_t len;
	const uint8_t *body; /* payload of a length-delimited field */
	size_t body_len;
	ProtobufCMessage *msg; /* decoded payload, when something read it */
	int dirty;            /* msg changed: re-pack on save */
};

struct ge_meta {
	uint8_t *buf;        /* the outer message's bytes; segs point here */
	size_t len;
	int savedmodel;
	seg *sm;             /* SavedModel top level */
	size_t n_sm, sm_sel;
	seg *mg;             /* the (selected) MetaGraphDef's top level */
	size_t n_mg;
	Tensorflow__MetaGraphDef__MetaInfoDef *info; /* decoded, read-only */
	char *dir;           /* SavedModel directory */
};

#endif
