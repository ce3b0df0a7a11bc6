// Data movement: strided copies (transpose, slice, reverse, strided slice, broadcast), tiled 2-D
// transpose, pad, tile, gather, segment sums, one-hot, gather/scatter by index tuples. Every
// tensor element is 4 bytes (float32 or int32), so these kernels move 32-bit words.
#pragma once

#include "common.h"

namespace angle {

// y[i] = x[inOffset + offset of i under inStrides] for i over outDims (row-major y).
void copyStrided(const void* x, void* y, const Dims& outDims, const Strides& inStrides, int64_t inOffset);

// x [batch, rows, cols] -> y [batch, cols, rows].
void transposeBatched(const void* x, void* y, int64_t batch, int64_t rows, int64_t cols);

// y has outDims; x has inDims placed at `before` (elements per dim); the rest is `value`.
void pad(DType t, const void* x, void* y, const Dims& outDims, const Dims& inDims, const Strides& before, double value);

// y[i] = x[index of i modulo inDims].
void tile(const void* x, void* y, const Dims& outDims, const Dims& inDims);

// y[b, o, j, i] = x[b, o, idx[b, j], i]; out-of-range indices give 0.
void gather(const void* x, const int32_t* idx, void* y, int64_t batch, int64_t outer, int64_t n, int64_t nIdx, int64_t inner);

// y[s, i] = sum over rows r with seg[r] == s of x[r, i] (y is cleared first); seg outside
// [0, numSegments) is dropped.
void unsortedSegmentSum(DType t, const void* x, const int32_t* seg, void* y, int64_t rows, int64_t inner, int64_t numSegments);

void oneHot(const int32_t* idx, float* y, int64_t n, int64_t depth, float on, float off);

// Index tuples of `sliceRank` ints address slices of `sliceSize` words; `strides` are in slices'
// units of the indexed tensor's leading dims (words).
void gatherNd(const void* x, const int32_t* idx, void* y, int64_t numSlices, int sliceRank, int64_t sliceSize,
              const Strides& strides, const Dims& leading);
void scatterNd(DType t, const int32_t* idx, const void* updates, void* y, int64_t numSlices, int sliceRank, int64_t sliceSize,
               const Strides& strides, const Dims& leading, int64_t outSize);

}  // namespace angle
