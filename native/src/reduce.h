// Reductions, softmax and top-k.
#pragma once

#include "common.h"

namespace angle {

// x viewed as [outer, r, inner] (row-major); y[o, i] = reduce over r of x[o, :, i].
// Output dtype: ArgMax/ArgMin/Any/All give int32, others the input's.
void reduce3(int op, DType t, const void* x, void* y, int64_t outer, int64_t r, int64_t inner);

// Row softmax (or log-softmax) over the last axis of a [rows, cols] float matrix.
void softmaxRows(const float* x, float* y, int64_t rows, int64_t cols, bool logSoftmax);

// Largest k of each row of [rows, cols] (value descending, ties by lower index), sorted.
void topkRows(DType t, const void* x, void* values, int32_t* indices, int64_t rows, int64_t cols, int64_t k);

// Cumulative sum along the middle axis of [outer, r, inner]; exclusive and/or reversed as tfjs.
void cumsum(DType t, const void* x, void* y, int64_t outer, int64_t r, int64_t inner, bool exclusive, bool reverse);

}  // namespace angle
