// Fused kernels of the training hot path: LayerNorm (forward, backward), erf-GELU (forward,
// backward), the AdamW update and counter-based (Philox) dropout.
#pragma once

#include "common.h"

namespace angle {

// x [rows, cols] -> y, mean [rows], rstd [rows] (biased variance, as PyTorch).
void layerNormForward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd, int64_t rows,
                      int64_t cols, float eps);
// LayerNorm of u = dropout(a; rate, seed) + b (a residual connection and its LayerNorm in one
// launch; rate 0: a + b); u is written too, for layerNormBackward.
void addLayerNormForward(const float* a, const float* b, float* u, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                         int64_t rows, int64_t cols, float eps, float rate, uint64_t seed);
// dx [rows, cols], dgamma [cols], dbeta [cols].
void layerNormBackward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd, float* dx,
                       float* dgamma, float* dbeta, int64_t rows, int64_t cols);

void geluForward(const float* x, float* y, int64_t n);
void geluBackward(const float* dy, const float* x, float* dx, int64_t n);
// GELU(x + bias) with bias [cols] over x [rows, cols], and its gradient at x + bias (one launch each).
void biasGeluForward(const float* x, const float* bias, float* y, int64_t rows, int64_t cols);
void biasGeluBackward(const float* dy, const float* x, const float* bias, float* du, int64_t rows, int64_t cols);

// PyTorch AdamW; outputs may alias inputs.
void adamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n, float lr,
           float beta1, float beta2, float eps, float weightDecay, float biasCorrection1, float biasCorrection2);

// Parameters per launch of adamWMulti: the chunk travels as a kernel argument (40 bytes a
// parameter, under the 4 KiB parameter limit of every CUDA version).
constexpr int ADAMW_MULTI_MAX = 64;
struct AdamWMultiChunk {
  float* p[ADAMW_MULTI_MAX];
  const float* g[ADAMW_MULTI_MAX];
  float* m[ADAMW_MULTI_MAX];
  float* v[ADAMW_MULTI_MAX];
  int64_t n[ADAMW_MULTI_MAX];
  int hyperIndex[ADAMW_MULTI_MAX];
  int count;
};
// AdamW of `count` parameters in place, ceil(count / ADAMW_MULTI_MAX) launches (returned).
// hyper: device floats [count, 4] = lr, weight decay, 1 - beta1^t, 1 - beta2^t per parameter.
int adamWMulti(float* const* p, const float* const* g, float* const* m, float* const* v, const int64_t* n, int64_t count, const float* hyper,
               float beta1, float beta2, float eps);

// y = x * keep-mask / (1 - rate); element i's uniform number is a pure function of (seed, i).
void dropout(const float* x, float* y, int64_t n, float rate, uint64_t seed);

// y = dropout(x; rate, seed) + residual: dropout's mask, one launch instead of two.
void dropoutAdd(const float* x, const float* residual, float* y, int64_t n, float rate, uint64_t seed);

// Uniform [lo, hi) or normal(mean, std) numbers from the same generator.
void randomUniform(float* y, int64_t n, uint64_t seed, float lo, float hi);
void randomNormal(float* y, int64_t n, uint64_t seed, float mean, float std);

}  // namespace angle
