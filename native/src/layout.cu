#include "layout.h"

#include <string.h>

#include "elementwise.h"

namespace angle {

// T is the unit copied (one word, or four as a uint4); I the index type (32-bit index arithmetic is
// several times cheaper than 64-bit division on the GPU, and used whenever the sizes allow it).
template <typename T, typename I>
__global__ void copyStridedKernel(const T* __restrict__ x, T* __restrict__ y, I n, Dims d, Strides st, int64_t off) {
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    I rem = i;
    int64_t o = off;
    for (int k = d.rank - 1; k >= 0; --k) {
      I size = (I)d.size[k];
      I q = rem / size;
      o += (int64_t)(rem - q * size) * st.s[k];
      rem = q;
    }
    y[i] = x[o];
  }
}

static int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int k = 0; k < d.rank; ++k) n *= d.size[k];
  return n;
}

static bool aligned16(const void* p) { return ((uintptr_t)p & 15) == 0; }

template <typename T>
static void launchCopyStrided(const T* x, T* y, int64_t n, const Dims& d, const Strides& st, int64_t off) {
  // The grid-stride loop adds at most gridDim*blockDim (< 2^21) past n, so int32 is safe below 2^30.
  if (n < (int64_t(1) << 30))
    copyStridedKernel<T, int32_t><<<gridFor(n), 256, 0, stream()>>>(x, y, (int32_t)n, d, st, off);
  else
    copyStridedKernel<T, int64_t><<<gridFor(n), 256, 0, stream()>>>(x, y, n, d, st, off);
}

void copyStrided(const void* x, void* y, const Dims& outDims, const Strides& inStrides, int64_t inOffset) {
  int64_t n = numel(outDims);
  if (n == 0) return;
  // Rows of four or more contiguous words (the attention-head transposes [B,T,H,D] -> [B,H,T,D])
  // move as 16-byte units when every stride, the offset and both pointers allow it.
  int last = outDims.rank - 1;
  bool vec4 = last >= 0 && inStrides.s[last] == 1 && outDims.size[last] % 4 == 0 && inOffset % 4 == 0 && aligned16(x) && aligned16(y);
  for (int k = 0; vec4 && k < last; ++k) vec4 = inStrides.s[k] % 4 == 0;
  if (vec4) {
    Dims d4 = outDims;
    Strides s4 = inStrides;
    d4.size[last] /= 4;
    for (int k = 0; k < last; ++k) s4.s[k] /= 4;
    launchCopyStrided<uint4>((const uint4*)x, (uint4*)y, n / 4, d4, s4, inOffset / 4);
  } else {
    launchCopyStrided<uint32_t>((const uint32_t*)x, (uint32_t*)y, n, outDims, inStrides, inOffset);
  }
  LAUNCH_CHECK("copyStrided");
}

// 32x32 tiles through shared memory (padded by one word against bank conflicts): both the read
// of x and the write of y are coalesced.
__global__ void transposeTiles(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t rows, int64_t cols,
                               int64_t tilesR, int64_t tilesC, int64_t totalTiles) {
  __shared__ uint32_t tile[32][33];
  for (int64_t t = blockIdx.x; t < totalTiles; t += gridDim.x) {
    int64_t b = t / (tilesR * tilesC);
    int64_t rem = t - b * tilesR * tilesC;
    int64_t r0 = (rem / tilesC) * 32, c0 = (rem % tilesC) * 32;
    const uint32_t* xb = x + b * rows * cols;
    uint32_t* yb = y + b * rows * cols;
    for (int k = threadIdx.y; k < 32; k += 8) {
      int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = xb[r * cols + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += 8) {
      int64_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) yb[c * rows + r] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

void transposeBatched(const void* x, void* y, int64_t batch, int64_t rows, int64_t cols) {
  if (batch * rows * cols == 0) return;
  int64_t tilesR = (rows + 31) / 32, tilesC = (cols + 31) / 32;
  int64_t total = batch * tilesR * tilesC;
  int64_t cap = (int64_t)smCount() * 16;
  unsigned g = (unsigned)(total < cap ? total : cap);
  transposeTiles<<<g, dim3(32, 8), 0, stream()>>>((const uint32_t*)x, (uint32_t*)y, rows, cols, tilesR, tilesC, total);
  LAUNCH_CHECK("transposeBatched");
}

__global__ void padKernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n, Dims od, Dims id, Strides before,
                          uint32_t value) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, src = 0, mul = 1;
    bool inside = true;
    for (int k = od.rank - 1; k >= 0; --k) {
      int64_t q = rem / od.size[k];
      int64_t c = rem - q * od.size[k] - before.s[k];
      rem = q;
      if (c < 0 || c >= id.size[k]) inside = false;
      src += c * mul;
      mul *= id.size[k];
    }
    y[i] = inside ? x[src] : value;
  }
}

void pad(DType t, const void* x, void* y, const Dims& outDims, const Dims& inDims, const Strides& before, double value) {
  int64_t n = numel(outDims);
  if (n == 0) return;
  uint32_t bits;
  if (t == DT_FLOAT32) {
    float f = (float)value;
    memcpy(&bits, &f, 4);
  } else {
    int32_t v = (int32_t)value;
    memcpy(&bits, &v, 4);
  }
  padKernel<<<gridFor(n), 256, 0, stream()>>>((const uint32_t*)x, (uint32_t*)y, n, outDims, inDims, before, bits);
  LAUNCH_CHECK("pad");
}

__global__ void tileKernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n, Dims od, Dims id) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, src = 0, mul = 1;
    for (int k = od.rank - 1; k >= 0; --k) {
      int64_t q = rem / od.size[k];
      int64_t c = (rem - q * od.size[k]) % id.size[k];
      rem = q;
      src += c * mul;
      mul *= id.size[k];
    }
    y[i] = x[src];
  }
}

void tile(const void* x, void* y, const Dims& outDims, const Dims& inDims) {
  int64_t n = numel(outDims);
  if (n == 0) return;
  tileKernel<<<gridFor(n), 256, 0, stream()>>>((const uint32_t*)x, (uint32_t*)y, n, outDims, inDims);
  LAUNCH_CHECK("tile");
}

__global__ void gatherKernel(const uint32_t* __restrict__ x, const int32_t* __restrict__ idx, uint32_t* __restrict__ y, int64_t total,
                             int64_t outer, int64_t n, int64_t nIdx, int64_t inner) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % inner;
    int64_t t = e / inner;
    int64_t j = t % nIdx;
    t /= nIdx;
    int64_t o = t % outer;
    int64_t b = t / outer;
    int64_t k = idx[b * nIdx + j];
    y[e] = (k >= 0 && k < n) ? x[((b * outer + o) * n + k) * inner + i] : 0u;
  }
}

void gather(const void* x, const int32_t* idx, void* y, int64_t batch, int64_t outer, int64_t n, int64_t nIdx, int64_t inner) {
  int64_t total = batch * outer * nIdx * inner;
  if (total == 0) return;
  gatherKernel<<<gridFor(total), 256, 0, stream()>>>((const uint32_t*)x, idx, (uint32_t*)y, total, outer, n, nIdx, inner);
  LAUNCH_CHECK("gather");
}

template <typename T>
__global__ void segmentSumKernel(const T* __restrict__ x, const int32_t* __restrict__ seg, T* __restrict__ y, int64_t total,
                                 int64_t inner, int64_t numSegments) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = e / inner, i = e - r * inner;
    int64_t s = seg[r];
    if (s >= 0 && s < numSegments) atomicAdd(&y[s * inner + i], x[e]);
  }
}

void unsortedSegmentSum(DType t, const void* x, const int32_t* seg, void* y, int64_t rows, int64_t inner, int64_t numSegments) {
  fill(t, y, numSegments * inner, 0.0);
  int64_t total = rows * inner;
  if (total == 0) return;
  if (t == DT_FLOAT32)
    segmentSumKernel<float><<<gridFor(total), 256, 0, stream()>>>((const float*)x, seg, (float*)y, total, inner, numSegments);
  else
    segmentSumKernel<int><<<gridFor(total), 256, 0, stream()>>>((const int*)x, seg, (int*)y, total, inner, numSegments);
  LAUNCH_CHECK("unsortedSegmentSum");
}

__global__ void oneHotKernel(const int32_t* __restrict__ idx, float* __restrict__ y, int64_t total, int64_t depth, float on, float off) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = e / depth, c = e - r * depth;
    y[e] = idx[r] == c ? on : off;
  }
}

void oneHot(const int32_t* idx, float* y, int64_t n, int64_t depth, float on, float off) {
  int64_t total = n * depth;
  if (total == 0) return;
  oneHotKernel<<<gridFor(total), 256, 0, stream()>>>(idx, y, total, depth, on, off);
  LAUNCH_CHECK("oneHot");
}

__device__ __forceinline__ int64_t sliceBase(const int32_t* idx, int64_t s, int rank, const Strides& st, const Dims& lead, bool* ok) {
  int64_t base = 0;
  for (int k = 0; k < rank; ++k) {
    int64_t v = idx[s * rank + k];
    if (v < 0 || v >= lead.size[k]) *ok = false;
    base += v * st.s[k];
  }
  return base;
}

__global__ void gatherNdKernel(const uint32_t* __restrict__ x, const int32_t* __restrict__ idx, uint32_t* __restrict__ y, int64_t total,
                               int rank, int64_t sliceSize, Strides st, Dims lead) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t s = e / sliceSize, i = e - s * sliceSize;
    bool ok = true;
    int64_t base = sliceBase(idx, s, rank, st, lead, &ok);
    y[e] = ok ? x[base + i] : 0u;
  }
}

void gatherNd(const void* x, const int32_t* idx, void* y, int64_t numSlices, int sliceRank, int64_t sliceSize, const Strides& strides,
              const Dims& leading) {
  int64_t total = numSlices * sliceSize;
  if (total == 0) return;
  gatherNdKernel<<<gridFor(total), 256, 0, stream()>>>((const uint32_t*)x, idx, (uint32_t*)y, total, sliceRank, sliceSize, strides, leading);
  LAUNCH_CHECK("gatherNd");
}

template <typename T>
__global__ void scatterNdKernel(const int32_t* __restrict__ idx, const T* __restrict__ u, T* __restrict__ y, int64_t total, int rank,
                                int64_t sliceSize, Strides st, Dims lead) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t s = e / sliceSize, i = e - s * sliceSize;
    bool ok = true;
    int64_t base = sliceBase(idx, s, rank, st, lead, &ok);
    if (ok) atomicAdd(&y[base + i], u[e]);
  }
}

void scatterNd(DType t, const int32_t* idx, const void* updates, void* y, int64_t numSlices, int sliceRank, int64_t sliceSize,
               const Strides& strides, const Dims& leading, int64_t outSize) {
  fill(t, y, outSize, 0.0);
  int64_t total = numSlices * sliceSize;
  if (total == 0) return;
  if (t == DT_FLOAT32)
    scatterNdKernel<float><<<gridFor(total), 256, 0, stream()>>>(idx, (const float*)updates, (float*)y, total, sliceRank, sliceSize, strides, leading);
  else
    scatterNdKernel<int><<<gridFor(total), 256, 0, stream()>>>(idx, (const int*)updates, (int*)y, total, sliceRank, sliceSize, strides, leading);
  LAUNCH_CHECK("scatterNd");
}

}  // namespace angle
