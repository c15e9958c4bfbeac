/*
 * exec/k_nn_impl.h: what the heavy kernels share (private to
 * exec/k_nn.c, which implements it, and exec/k_matmul.c, exec/k_conv.c,
 * exec/k_pool.c, exec/k_image.c).
 *
 * Window geometry of convolutions and pools (TensorFlow's padding rules),
 * the layout of a 4-D tensor (NHWC or NCHW), the fused epilogues of
 * _FusedConv2D, _FusedMatMul and FusedDepthwiseConv2dNative, and scratch
 * buffers charged to the op's memory budget.
 */
#ifndef GE_EXEC_K_NN_IMPL_H
#define GE_EXEC_K_NN_IMPL_H

#include <stdint.h>

#include "exec/kernel.h"
#include "exec/kernel_impl.h"

/* Loops over channels compiled vectorized (-O2 leaves loops of unknown
 * length scalar). */
#if defined(__GNUC__) && !defined(__clang__)
#define KNN_VEC __attribute__((optimize("O3")))
#else
#define KNN_VEC
#endif

/* Input i must be float32 of the given rank (rank < 0: any); what names
 * the input in the refusal. */
int ge_knn_in_f32(ge_kctx *k, int i, int rank, const char *what);

/* ---------------------------------------------------------------- layout */

/* A 4-D activation seen as NHWC whatever its data_format. */
typedef struct knn_layout {
	int nchw;               /* data_format is NCHW */
	int64_t n, h, w, c;
} knn_layout;

/* Reads data_format (NHWC or NCHW, default NHWC; anything else refused)
 * and the dims of the rank-4 input x. */
int ge_knn_layout_of(ge_kctx *k, const ge_xt *x, knn_layout *l);
/* An attr of 4 ints given in data_format order, as (n, h, w, c). */
int ge_knn_attr4(ge_kctx *k, const char *name, const knn_layout *l,
	      int64_t v[4], int64_t def);

/* NCHW <-> NHWC copies of n images of c channels and hw pixels. */
void ge_knn_to_nhwc(const float *src, float *dst, int64_t n, int64_t c,
		 int64_t hw);
void ge_knn_to_nchw(const float *src, float *dst, int64_t n, int64_t c,
		 int64_t hw);

/* The NHWC copy of a 4-D float32 x: x's own data when it is NHWC, else
 * a transposed scratch (*owned, *bytes, freed by ge_knn_scratch_free); never
 * NULL but on a failure, even for a tensor of no element. */
const float *ge_knn_nhwc_in(ge_kctx *k, const knn_layout *l, const ge_xt *x,
			 uint64_t *bytes, float **owned);
/* Allocates output 0, float32 [n, oh, ow, ch] in l's data_format, and
 * returns where to write it in NHWC: the output itself, or a scratch of
 * *bytes (NCHW, not zeroed) that ge_knn_out_done transposes into it and
 * frees (a dummy when the output has no element).  NULL with k->err set
 * (outputs dropped). */
float *ge_knn_out_nhwc(ge_kctx *k, const knn_layout *l, int64_t oh,
		    int64_t ow, int64_t ch, uint64_t *bytes);
/* The same with the output's elements unset, for a kernel that writes
 * every one of them (ge_k_out_raw). */
float *ge_knn_out_nhwc_raw(ge_kctx *k, const knn_layout *l, int64_t oh,
			int64_t ow, int64_t ch, uint64_t *bytes);
void ge_knn_out_done(ge_kctx *k, const knn_layout *l, float *y, uint64_t bytes,
		  int64_t hw, int64_t ch);

/* ---------------------------------------------------------------- windows */

/* One spatial dimension of a window op: input size, window size, stride,
 * dilation, and the padding chosen (VALID, SAME, or EXPLICIT before and
 * after).  Computes the output size and the padding before.  Refuses
 * strides or dilations below 1, a window larger than the padded input,
 * negative explicit pads. */
typedef struct knn_dim {
	int64_t in, k, stride, dil;
	int64_t out, pad;       /* results */
} knn_dim;

enum { KNN_VALID, KNN_SAME, KNN_EXPLICIT };

/* padding attr as KNN_*; EXPLICIT only when allow_explicit. -1 refused. */
int ge_knn_padding(ge_kctx *k, int allow_explicit);
/* pads: explicit (before, after) for this dim, ignored unless EXPLICIT. */
int ge_knn_window(ge_kctx *k, knn_dim *d, int mode, const int64_t pads[2],
	       const char *axis);
/* The H and W dims of a conv-like op: strides, dilations (when dil_attr
 * is not NULL), padding and explicit_paddings from the attrs; filter
 * (or pool window) size kh x kw. */
int ge_knn_window2(ge_kctx *k, const knn_layout *l, int64_t kh, int64_t kw,
		const char *dil_attr, int allow_explicit, knn_dim *dh,
		knn_dim *dw);

/* a * b (+ c ...) for work and sizes, saturating at UINT64_MAX. */
uint64_t ge_knn_mul(uint64_t a, uint64_t b);

/* ---------------------------------------------------------------- scratch */

/* bytes of scratch, charged to the op's budget while held; NULL with
 * k->err set. */
float *ge_knn_scratch(ge_kctx *k, uint64_t bytes);
void ge_knn_scratch_free(ge_kctx *k, float *p, uint64_t bytes);

/* ---------------------------------------------------------------- epilogue */

/* What the fused ops do after the product, per output channel. */
enum { KNN_EPI_NONE, KNN_EPI_RELU, KNN_EPI_RELU6, KNN_EPI_ELU,
       KNN_EPI_LEAKY, KNN_EPI_SIGMOID, KNN_EPI_TANH, KNN_EPI_GELU_EXACT,
       KNN_EPI_GELU_APPROX, KNN_EPI_PRELU };

typedef struct knn_epi {
	const float *bias;      /* [c] or NULL */
	float *bn_scale;        /* [c] FusedBatchNorm: owned, or NULL */
	const float *bn_offset, *bn_mean;
	const ge_xt *add;       /* a residual Add of the output's shape */
	int act;                /* KNN_EPI_* */
	float alpha;            /* LeakyRelu */
	const float *prelu;     /* Prelu's alphas: one, or one per channel */
	int64_t nprelu;
} knn_epi;

/* Reads fused_ops and num_args of a fused op whose extra args start at
 * input `first`; c is the output channels.  conv allows FusedBatchNorm
 * and Add; Prelu (TensorFlow.js) takes its alphas as the last arg.  Refuses an unknown op or order, or args of the wrong dtype
 * or shape.  ge_knn_epi_done frees what it holds. */
int ge_knn_epi_parse(ge_kctx *k, int first, int64_t c, int conv, knn_epi *e);
void ge_knn_epi_done(knn_epi *e);
/* Applies e to rows of c channels; off is the index of rows[0] in the
 * whole output (for the residual Add). */
void ge_knn_epi_apply(const knn_epi *e, float *rows, int64_t nrows, int64_t c,
		   int64_t off);

#endif
