/*
 * fold.h: rewrites that need tensor values, with transform_graph's names:
 * constant folding, batch-norm folding, weight rounding and 8-bit weight
 * quantization.  They evaluate with eval.h and never write a Const the
 * evaluator could not compute: an op it cannot run (an op type or dtype it
 * has no kernel for, a division by zero) stays as it was, with its
 * subgraph, and is listed in the report.
 */
#ifndef GE_FOLD_H
#define GE_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "analyses/eval.h"
#include "graph/graph.h"

typedef struct ge_fold_report {
	size_t folded;   /* ops replaced by a Const (or BiasAdd, for BN) */
	size_t removed;  /* ops removed because nothing needed them any more */
	size_t skipped;  /* ops left as they were, one line each in notes */
	ge_buf notes;
} ge_fold_report;

void ge_fold_report_free(ge_fold_report *r);

/* Replaces every subgraph whose inputs are all Const (and, for Shape,
 * Size and Rank, whose input shape is fully known) and that holds no
 * stateful or control-flow op by Consts.  An op whose outputs are read
 * outside the subgraph, or that is named in keep, becomes a Const of the
 * same name (output names are kept); a multi-output op gets one Const per
 * read output, named NAME__cf__K.  The ops only the folded values needed
 * are removed. */
int ge_fold_constants(ge_graph *g, const char *const *keep, size_t nkeep,
		      ge_fold_report *r, ge_error *err);

/* Evaluates tensor t when everything it depends on is constant (as
 * ge_fold_constants sees it), without changing the graph.  GE_EINVAL with
 * err naming the op that is not constant or cannot be evaluated. */
int ge_eval_tensor(ge_graph *g, ge_tref t, ge_value *out, ge_error *err);

/* Folds batch normalization into the weights of the Conv2D,
 * DepthwiseConv2dNative or MatMul before it: FusedBatchNorm,
 * FusedBatchNormV2/V3 (is_training false) and
 * BatchNormWithGlobalNormalization with Const parameters become a BiasAdd
 * of the same name over the conv with scaled weights; a Mul of the conv by
 * a Const per-channel (or scalar) scale is folded into the weights and the
 * conv takes the Mul's name. */
int ge_fold_batch_norms(ge_graph *g, ge_fold_report *r, ge_error *err);

/* transform_graph's round_weights: every float32 Const of at least
 * minimum_size elements keeps only num_steps distinct values (bucket
 * centres between its min and max), so the file compresses well.  With
 * per_channel, the kernel of a conv or matrix product (every reader
 * takes it as its input 1: Conv2D, _FusedConv2D, DepthwiseConv2dNative,
 * MatMul, _FusedMatMul) has num_steps values per output channel, between
 * that channel's min and max: one large weight no longer flattens the
 * other channels; and vectors of per-channel offsets and scales (biases,
 * a folded batch norm's) stay as they are, as TensorFlow Lite keeps
 * biases at 32 bits: a small error there moves every output of the
 * channel. */
int ge_round_weights(ge_graph *g, int num_steps, int64_t minimum_size,
		     int per_channel, ge_fold_report *r, ge_error *err);

/* transform_graph's quantize_weights: every float32 Const of at least
 * minimum_size elements becomes a quint8 Const NAME_quantized_const with
 * NAME_quantized_min / NAME_quantized_max and a Dequantize (MIN_FIRST)
 * named NAME.  With per_channel, a kernel (as for ge_round_weights) gets
 * one range per output channel instead: min and max are vectors and the
 * Dequantize is MIN_COMBINED with `axis` that channel's dimension
 * (TensorFlow has no per-axis MIN_FIRST), as TensorFlow Lite quantizes
 * conv and matmul weights per channel; and biases stay float, as for
 * ge_round_weights. */
int ge_quantize_weights(ge_graph *g, int64_t minimum_size, int per_channel,
			ge_fold_report *r, ge_error *err);

#endif
