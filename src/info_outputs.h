/*
 * info_outputs.h: the likely outputs of a model (info_outputs.c).
 */
#ifndef GE_INFO_OUTPUTS_H
#define GE_INFO_OUTPUTS_H

#include "graph.h"

/* Fills outs with the likely output ops of g: the signatures' outputs
 * (returns 1), else the unread ops that are not training, saver, summary
 * or bookkeeping machinery (returns 0, with *left_out how many unread ops
 * were set aside). */
int info_likely_outputs(ge_graph *g, ge_opvec *outs, size_t *left_out);

#endif
