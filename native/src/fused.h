// Fused kernels of the training hot path: LayerNorm (forward, backward), erf-GELU (forward,
// backward), the AdamW update and counter-based (Philox) dropout.
#pragma once

#include "common.h"

namespace angle {

// x [rows, cols] -> y, mean [rows], rstd [rows] (biased variance, as PyTorch).
void layerNormForward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd, int64_t rows,
                      int64_t cols, float eps);
// dx [rows, cols], dgamma [cols], dbeta [cols].
void layerNormBackward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd, float* dx,
                       float* dgamma, float* dbeta, int64_t rows, int64_t cols);

void geluForward(const float* x, float* y, int64_t n);
void geluBackward(const float* dy, const float* x, float* dx, int64_t n);

// PyTorch AdamW; outputs may alias inputs.
void adamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n, float lr,
           float beta1, float beta2, float eps, float weightDecay, float biasCorrection1, float biasCorrection2);

// y = x * keep-mask / (1 - rate); element i's uniform number is a pure function of (seed, i).
void dropout(const float* x, float* y, int64_t n, float rate, uint64_t seed);

// Uniform [lo, hi) or normal(mean, std) numbers from the same generator.
void randomUniform(float* y, int64_t n, uint64_t seed, float lo, float hi);
void randomNormal(float* y, int64_t n, uint64_t seed, float mean, float std);

}  // namespace angle
