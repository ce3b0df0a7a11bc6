// Matrix products through cuBLASLt (the only translation unit that needs cuBLAS headers).
#pragma once

#include <string>

#include "common.h"

namespace angle {

// TF32: tensor cores on inputs rounded to TF32. FP32: exact. BF16 / FP16: tensor cores on inputs
// rounded to bf16 / fp16 (CUBLAS_COMPUTE_32F_FAST_16BF / _16F); in every mode the tensors stay
// float32 in memory and the products accumulate in float32 (so LayerNorm, softmax, the loss,
// master weights and AdamW state are float32 throughout).
enum MatmulPrecision : int { MM_TF32 = 0, MM_FP32 = 1, MM_BF16 = 2, MM_FP16 = 3 };

// Row-major C[b] (M x N) = op(A[b]) (M x K) * op(B[b]) (K x N) for b < batch; A is [M, K]
// ([K, M] when transA), B is [K, N] ([N, K] when transB); strideA/strideB are elements between
// consecutive batch matrices (0 broadcasts one matrix to every batch), C is packed.
void matmul(const float* A, const float* B, float* C, int64_t batch, int64_t M, int64_t N, int64_t K, bool transA, bool transB,
            int64_t strideA, int64_t strideB, int precision);

// cuBLASLt version, e.g. "130000"; initialises the handle on first use.
std::string blasVersion();

// Number of cached matmul plans (one per shape, layout and precision).
size_t matmulPlanCount();

}  // namespace angle
