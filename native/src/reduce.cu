#include "reduce.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#include "allocator.h"
#include "ops.h"

namespace angle {

// ---- value reductions --------------------------------------------------------------------------

template <typename A>
__device__ __forceinline__ A redIdentity(int op);

template <>
__device__ __forceinline__ float redIdentity<float>(int op) {
  switch (op) {
    case R_PROD:
    case R_ALL: return 1.0f;
    case R_MAX: return -INFINITY;
    case R_MIN: return INFINITY;
    default: return 0.0f;
  }
}

template <>
__device__ __forceinline__ int redIdentity<int>(int op) {
  switch (op) {
    case R_PROD:
    case R_ALL: return 1;
    case R_MAX: return INT_MIN;
    case R_MIN: return INT_MAX;
    default: return 0;
  }
}

template <typename A>
__device__ __forceinline__ A redCombine(int op, A a, A b) {
  switch (op) {
    case R_PROD: return a * b;
    case R_MAX: return (a > b || a != a) ? a : b;  // NaN wins, as in tfjs
    case R_MIN: return (a < b || a != a) ? a : b;
    case R_ANY: return (a != (A)0 || b != (A)0) ? (A)1 : (A)0;
    case R_ALL: return (a != (A)0 && b != (A)0) ? (A)1 : (A)0;
    default: return a + b;
  }
}

// Value of an element as it enters the reduction (Any/All see truth values).
template <typename A>
__device__ __forceinline__ A redLoad(int op, A v) {
  if (op == R_ANY || op == R_ALL) return v != (A)0 ? (A)1 : (A)0;
  return v;
}

template <typename A>
__device__ __forceinline__ A warpReduce(int op, A v) {
  for (int o = 16; o > 0; o >>= 1) v = redCombine<A>(op, v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// Row reduction (inner == 1): one warp per row when rows are short, one block per row otherwise.
template <typename T, typename Tout>
__global__ void reduceRowsWarp(int op, const T* __restrict__ x, Tout* __restrict__ y, int64_t rows, int64_t len, float scale) {
  int warpsPerBlock = blockDim.x / 32;
  int lane = threadIdx.x & 31;
  for (int64_t row = (int64_t)blockIdx.x * warpsPerBlock + threadIdx.x / 32; row < rows; row += (int64_t)gridDim.x * warpsPerBlock) {
    const T* p = x + row * len;
    T acc = redIdentity<T>(op);
    for (int64_t j = lane; j < len; j += 32) acc = redCombine<T>(op, acc, redLoad<T>(op, p[j]));
    acc = warpReduce<T>(op, acc);
    if (lane == 0) y[row] = op == R_MEAN ? (Tout)((float)acc * scale) : (Tout)acc;
  }
}

template <typename T, typename Tout>
__global__ void reduceRowsBlock(int op, const T* __restrict__ x, Tout* __restrict__ y, int64_t rows, int64_t len, float scale) {
  __shared__ T part[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * len;
    T acc = redIdentity<T>(op);
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) acc = redCombine<T>(op, acc, redLoad<T>(op, p[j]));
    acc = warpReduce<T>(op, acc);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
      int nw = blockDim.x / 32;
      T v = threadIdx.x < nw ? part[threadIdx.x] : redIdentity<T>(op);
      v = warpReduce<T>(op, v);
      if (threadIdx.x == 0) y[row] = op == R_MEAN ? (Tout)((float)v * scale) : (Tout)v;
    }
    __syncthreads();
  }
}

// Column reduction (inner > 1): block (32, 8) covers 32 adjacent columns; its 8 rows of threads
// stride over the r-range [r0, r1) given by blockIdx.z. Coalesced along inner.
template <typename T, typename Tout>
__global__ void reduceCols(int op, const T* __restrict__ x, Tout* __restrict__ y, int64_t outer, int64_t r, int64_t inner,
                           int64_t chunk, float scale, bool final) {
  __shared__ T part[8][33];
  int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
  int64_t o = blockIdx.y;
  int64_t r0 = (int64_t)blockIdx.z * chunk;
  int64_t r1 = r0 + chunk < r ? r0 + chunk : r;
  T acc = redIdentity<T>(op);
  if (col < inner) {
    const T* p = x + o * r * inner + col;
    for (int64_t j = r0 + threadIdx.y; j < r1; j += 8) acc = redCombine<T>(op, acc, redLoad<T>(op, p[j * inner]));
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < inner) {
    T v = part[0][threadIdx.x];
    for (int k = 1; k < 8; ++k) v = redCombine<T>(op, v, part[k][threadIdx.x]);
    // Partial results go to [outer, splits, inner]; the final pass writes [outer, inner].
    int64_t splits = gridDim.z;
    if (final)
      y[o * inner + col] = op == R_MEAN ? (Tout)((float)v * scale) : (Tout)v;
    else
      y[(o * splits + blockIdx.z) * inner + col] = (Tout)v;
  }
}

// ---- arg reductions ----------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ bool argBetter(int op, T v, int64_t i, T bv, int64_t bi) {
  if (bi < 0) return true;
  if (i < 0) return false;
  bool gt = op == R_ARGMAX ? (v > bv || (v != v && bv == bv)) : (v < bv || (v != v && bv == bv));
  if (gt) return true;
  bool eq = v == bv || (v != v && bv != bv);
  return eq && i < bi;
}

template <typename T>
__global__ void argReduce(int op, const T* __restrict__ x, int32_t* __restrict__ y, int64_t outer, int64_t r, int64_t inner) {
  // One warp per output element; lanes stride over r.
  int warpsPerBlock = blockDim.x / 32;
  int lane = threadIdx.x & 31;
  int64_t total = outer * inner;
  for (int64_t e = (int64_t)blockIdx.x * warpsPerBlock + threadIdx.x / 32; e < total; e += (int64_t)gridDim.x * warpsPerBlock) {
    int64_t o = e / inner, c = e % inner;
    const T* p = x + o * r * inner + c;
    T bv = (T)0;
    int64_t bi = -1;
    for (int64_t j = lane; j < r; j += 32) {
      T v = p[j * inner];
      if (argBetter<T>(op, v, j, bv, bi)) {
        bv = v;
        bi = j;
      }
    }
    for (int off = 16; off > 0; off >>= 1) {
      T ov = __shfl_down_sync(0xffffffffu, bv, off);
      long long oi = __shfl_down_sync(0xffffffffu, (long long)bi, off);
      if (argBetter<T>(op, ov, oi, bv, bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == 0) y[e] = (int32_t)bi;
  }
}

static void scaleInPlace(float* y, int64_t n, float s);

template <typename T, typename Tout>
static void reduceTyped(int op, const T* x, Tout* y, int64_t outer, int64_t r, int64_t inner) {
  cudaStream_t s = stream();
  if (op == R_MEAN && sizeof(Tout) == 4 && (Tout)0.5f == (Tout)0) fail("reduce: mean of an int32 tensor (cast it to float32 first)");
  float scale = r > 0 ? 1.0f / (float)r : 0.0f;
  if (inner == 1) {
    if (r >= 2048 && outer < (int64_t)smCount() * 64) {
      unsigned g = (unsigned)(outer < (int64_t)smCount() * 16 ? outer : smCount() * 16);
      reduceRowsBlock<T, Tout><<<g > 0 ? g : 1, 512, 0, s>>>(op, x, y, outer, r, scale);
      LAUNCH_CHECK("reduceRowsBlock");
    } else {
      int64_t blocks = (outer + 7) / 8;
      unsigned g = (unsigned)(blocks < (int64_t)smCount() * 32 ? blocks : smCount() * 32);
      reduceRowsWarp<T, Tout><<<g > 0 ? g : 1, 256, 0, s>>>(op, x, y, outer, r, scale);
      LAUNCH_CHECK("reduceRowsWarp");
    }
    return;
  }
  if (outer > 65535) fail("reduce: outer extent %lld exceeds the grid limit 65535 for a column reduction", (long long)outer);
  int64_t colBlocks = (inner + 31) / 32;
  int64_t blocks = colBlocks * outer;
  int64_t want = (int64_t)smCount() * 8;
  int64_t splits = 1;
  // Too few blocks for the GPU and a long r: split r, then reduce the partials.
  if (blocks < want && r >= 256) {
    splits = want / blocks;
    if (splits > r / 64) splits = r / 64;
    if (splits > 1024) splits = 1024;
    if (splits < 1) splits = 1;
  }
  if (colBlocks > 2147483647) fail("reduce: inner extent too large");
  if (splits == 1) {
    dim3 grid((unsigned)colBlocks, (unsigned)outer, 1);
    reduceCols<T, Tout><<<grid, dim3(32, 8), 0, s>>>(op, x, y, outer, r, inner, r, scale, true);
    LAUNCH_CHECK("reduceCols");
    return;
  }
  int64_t chunk = (r + splits - 1) / splits;
  splits = (r + chunk - 1) / chunk;
  int pass1 = op == R_MEAN ? R_SUM : op;
  T* partial = (T*)deviceAlloc((size_t)(outer * splits * inner) * sizeof(T));
  dim3 grid1((unsigned)colBlocks, (unsigned)outer, (unsigned)splits);
  reduceCols<T, T><<<grid1, dim3(32, 8), 0, s>>>(pass1, x, partial, outer, r, inner, chunk, 1.0f, false);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    // Partial results combine with the same operation (a sum of sums, a max of maxes, ...);
    // the mean divides by the full r at the end.
    int pass2 = op == R_MEAN ? R_SUM : op;
    dim3 grid2((unsigned)colBlocks, (unsigned)outer, 1);
    reduceCols<T, Tout><<<grid2, dim3(32, 8), 0, s>>>(pass2, partial, y, outer, splits, inner, splits, 1.0f, true);
    if (op == R_MEAN) {
      e = cudaGetLastError();
      if (e == cudaSuccess) scaleInPlace((float*)y, outer * inner, scale);
    }
  }
  deviceFree(partial);
  if (e != cudaSuccess) CUDA_CHECK(e);
  LAUNCH_CHECK("reduceCols (split)");
}

__global__ void scaleKernel(float* y, int64_t n, float s) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] *= s;
}

static void scaleInPlace(float* y, int64_t n, float s) {
  scaleKernel<<<gridFor(n), 256, 0, stream()>>>(y, n, s);
  LAUNCH_CHECK("scaleInPlace");
}

void reduce3(int op, DType t, const void* x, void* y, int64_t outer, int64_t r, int64_t inner) {
  if (op < 0 || op >= R_COUNT) fail("reduce: unknown op code %d", op);
  if (outer * inner == 0) return;
  if (r == 0) fail("reduce: empty reduction axis");
  if (op == R_ARGMAX || op == R_ARGMIN) {
    int64_t total = outer * inner;
    int64_t blocks = (total + 7) / 8;
    unsigned g = (unsigned)(blocks < (int64_t)smCount() * 32 ? blocks : smCount() * 32);
    if (t == DT_FLOAT32)
      argReduce<float><<<g, 256, 0, stream()>>>(op, (const float*)x, (int32_t*)y, outer, r, inner);
    else
      argReduce<int><<<g, 256, 0, stream()>>>(op, (const int*)x, (int32_t*)y, outer, r, inner);
    LAUNCH_CHECK("argReduce");
    return;
  }
  bool boolOut = op == R_ANY || op == R_ALL;
  if (t == DT_FLOAT32 && !boolOut)
    reduceTyped<float, float>(op, (const float*)x, (float*)y, outer, r, inner);
  else if (t == DT_FLOAT32)
    reduceTyped<float, int>(op, (const float*)x, (int*)y, outer, r, inner);
  else
    reduceTyped<int, int>(op, (const int*)x, (int*)y, outer, r, inner);
}

// ---- softmax -----------------------------------------------------------------------------------

__global__ void softmaxWarp(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols, bool logSm) {
  int warpsPerBlock = blockDim.x / 32;
  int lane = threadIdx.x & 31;
  for (int64_t row = (int64_t)blockIdx.x * warpsPerBlock + threadIdx.x / 32; row < rows; row += (int64_t)gridDim.x * warpsPerBlock) {
    const float* p = x + row * cols;
    float* q = y + row * cols;
    float m = -INFINITY;
    for (int64_t j = lane; j < cols; j += 32) m = fmaxf(m, p[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) s += expf(p[j] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (logSm) {
      float ls = logf(s);
      for (int64_t j = lane; j < cols; j += 32) q[j] = p[j] - m - ls;
    } else {
      float inv = 1.0f / s;
      for (int64_t j = lane; j < cols; j += 32) q[j] = expf(p[j] - m) * inv;
    }
  }
}

__global__ void softmaxBlock(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols, bool logSm) {
  __shared__ float red[32];
  __shared__ float bcast;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* p = x + row * cols;
    float* q = y + row * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, p[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
      float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -INFINITY;
      for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
      if (threadIdx.x == 0) bcast = v;
    }
    __syncthreads();
    m = bcast;
    __syncthreads();
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(p[j] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
      float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.0f;
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (threadIdx.x == 0) bcast = v;
    }
    __syncthreads();
    s = bcast;
    if (logSm) {
      float ls = logf(s);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) q[j] = p[j] - m - ls;
    } else {
      float inv = 1.0f / s;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) q[j] = expf(p[j] - m) * inv;
    }
    __syncthreads();
  }
}

void softmaxRows(const float* x, float* y, int64_t rows, int64_t cols, bool logSoftmax) {
  if (rows == 0 || cols == 0) return;
  if (cols <= 1024) {
    int64_t blocks = (rows + 7) / 8;
    unsigned g = (unsigned)(blocks < (int64_t)smCount() * 32 ? blocks : smCount() * 32);
    softmaxWarp<<<g, 256, 0, stream()>>>(x, y, rows, cols, logSoftmax);
    LAUNCH_CHECK("softmaxWarp");
  } else {
    unsigned g = (unsigned)(rows < (int64_t)smCount() * 16 ? rows : smCount() * 16);
    softmaxBlock<<<g, 512, 0, stream()>>>(x, y, rows, cols, logSoftmax);
    LAUNCH_CHECK("softmaxBlock");
  }
}

// ---- top-k ---------------------------------------------------------------------------------------

// Ordering of candidates: larger value first, then lower index; NaN ranks below everything.
template <typename T>
__device__ __forceinline__ float rankKey(T v) {
  float f = (float)v;
  return f != f ? -INFINITY : f;
}

template <typename T>
__device__ __forceinline__ bool before(float va, int64_t ia, float vb, int64_t ib) {
  if (ib < 0) return ia >= 0;
  if (ia < 0) return false;
  return va > vb || (va == vb && ia < ib);
}

// One block per row; k rounds, each selecting the best element ranked after the previous pick.
template <typename T>
__global__ void topkKernel(const T* __restrict__ x, T* __restrict__ vals, int32_t* __restrict__ idx, int64_t rows, int64_t cols,
                           int64_t k) {
  __shared__ float sv[32];
  __shared__ long long si[32];
  __shared__ float pickV;
  __shared__ long long pickI;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * cols;
    float prevV = INFINITY;
    long long prevI = -1;
    for (int64_t round = 0; round < k; ++round) {
      float bv = -INFINITY;
      long long bi = -1;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = rankKey<T>(p[j]);
        bool eligible = v < prevV || (v == prevV && j > prevI);
        if (eligible && before<T>(v, j, bv, bi)) {
          bv = v;
          bi = j;
        }
      }
      for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_down_sync(0xffffffffu, bv, o);
        long long oi = __shfl_down_sync(0xffffffffu, bi, o);
        if (before<T>(ov, oi, bv, bi)) {
          bv = ov;
          bi = oi;
        }
      }
      if ((threadIdx.x & 31) == 0) {
        sv[threadIdx.x / 32] = bv;
        si[threadIdx.x / 32] = bi;
      }
      __syncthreads();
      if (threadIdx.x < 32) {
        int nw = blockDim.x / 32;
        float v = threadIdx.x < nw ? sv[threadIdx.x] : -INFINITY;
        long long i = threadIdx.x < nw ? si[threadIdx.x] : -1;
        for (int o = 16; o > 0; o >>= 1) {
          float ov = __shfl_down_sync(0xffffffffu, v, o);
          long long oi = __shfl_down_sync(0xffffffffu, i, o);
          if (before<T>(ov, oi, v, i)) {
            v = ov;
            i = oi;
          }
        }
        if (threadIdx.x == 0) {
          pickV = v;
          pickI = i;
          vals[row * k + round] = i >= 0 ? p[i] : (T)0;
          idx[row * k + round] = (int32_t)i;
        }
      }
      __syncthreads();
      prevV = pickV;
      prevI = pickI;
      __syncthreads();
    }
  }
}

void topkRows(DType t, const void* x, void* values, int32_t* indices, int64_t rows, int64_t cols, int64_t k) {
  if (rows == 0 || k == 0) return;
  if (k > cols) fail("topk: k = %lld exceeds the row length %lld", (long long)k, (long long)cols);
  unsigned g = (unsigned)(rows < (int64_t)smCount() * 8 ? rows : smCount() * 8);
  if (t == DT_FLOAT32)
    topkKernel<float><<<g, 256, 0, stream()>>>((const float*)x, (float*)values, indices, rows, cols, k);
  else
    topkKernel<int><<<g, 256, 0, stream()>>>((const int*)x, (int*)values, indices, rows, cols, k);
  LAUNCH_CHECK("topk");
}

// ---- cumsum --------------------------------------------------------------------------------------

// One thread per (outer, inner) line, sequential along r: simple and exact in order.
template <typename T>
__global__ void cumsumKernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t r, int64_t inner, bool exclusive,
                             bool reverse) {
  int64_t lines = outer * inner;
  for (int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; l < lines; l += (int64_t)gridDim.x * blockDim.x) {
    int64_t o = l / inner, c = l % inner;
    const T* p = x + o * r * inner + c;
    T* q = y + o * r * inner + c;
    T acc = (T)0;
    for (int64_t j = 0; j < r; ++j) {
      int64_t jj = reverse ? r - 1 - j : j;
      T v = p[jj * inner];
      if (exclusive) {
        q[jj * inner] = acc;
        acc += v;
      } else {
        acc += v;
        q[jj * inner] = acc;
      }
    }
  }
}

void cumsum(DType t, const void* x, void* y, int64_t outer, int64_t r, int64_t inner, bool exclusive, bool reverse) {
  int64_t lines = outer * inner;
  if (lines == 0 || r == 0) return;
  if (t == DT_FLOAT32)
    cumsumKernel<float><<<gridFor(lines), 256, 0, stream()>>>((const float*)x, (float*)y, outer, r, inner, exclusive, reverse);
  else
    cumsumKernel<int><<<gridFor(lines), 256, 0, stream()>>>((const int*)x, (int*)y, outer, r, inner, exclusive, reverse);
  LAUNCH_CHECK("cumsum");
}

}  // namespace angle
