// Matrix products through cuBLASLt (the only translation unit that needs cuBLAS headers).
#pragma once

#include <string>

#include "common.h"

namespace angle {

enum MatmulPrecision : int { MM_TF32 = 0, MM_FP32 = 1 };

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
