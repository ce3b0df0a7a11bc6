#include "fused.h"
#include "graph.h"

#include <math.h>

#include "allocator.h"
#include "ops.h"
#include "philox.h"
#include "reduce.h"

namespace angle {

// ---- LayerNorm -----------------------------------------------------------------------------------

// LayerNorm's forward over one row (a warp's) once each lane holds its partial sum of the row: the
// warp's sum and mean, the centred variance in a second pass (like tf.moments), y and the row's
// statistics. One body for lnForwardKernel and addLnForwardKernel, so the two round alike.
__device__ __forceinline__ void lnRowFromSum(const float* __restrict__ p, float s, const float* __restrict__ gamma,
                                             const float* __restrict__ beta, float* __restrict__ y, int64_t cols, float eps, int lane,
                                             float* mean, float* rstd) {
  for (int k = 16; k > 0; k >>= 1) s += __shfl_xor_sync(0xffffffffu, s, k);
  float mu = s / (float)cols;
  float q = 0.0f;
  for (int64_t j = lane; j < cols; j += 32) {
    float d = p[j] - mu;
    q += d * d;
  }
  for (int k = 16; k > 0; k >>= 1) q += __shfl_xor_sync(0xffffffffu, q, k);
  float rs = rsqrtf(q / (float)cols + eps);
  for (int64_t j = lane; j < cols; j += 32) y[j] = (p[j] - mu) * rs * gamma[j] + beta[j];
  if (lane == 0) {
    *mean = mu;
    *rstd = rs;
  }
}

// One warp per row; two passes over the row (mean, then centred variance) like tf.moments.
__global__ void lnForwardKernel(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                                float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd, int64_t rows,
                                int64_t cols, float eps) {
  int warps = blockDim.x / 32, lane = threadIdx.x & 31;
  for (int64_t r = (int64_t)blockIdx.x * warps + threadIdx.x / 32; r < rows; r += (int64_t)gridDim.x * warps) {
    const float* p = x + r * cols;
    float s = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) s += p[j];
    lnRowFromSum(p, s, gamma, beta, y + r * cols, cols, eps, lane, mean + r, rstd + r);
  }
}

// LayerNorm of u = dropout(a) + b (the residual connection before it; rate 0: a + b), writing u for
// the backward pass: the dropout and add rounded as dropoutAddKernel rounds them, then
// lnForwardKernel's passes over u, so the numbers are those of the two kernels. Each lane reads
// back only the elements it wrote.
__global__ void addLnForwardKernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ u,
                                   const float* __restrict__ gamma, const float* __restrict__ beta, float* __restrict__ y,
                                   float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int64_t cols, float eps, float rate,
                                   float keepScale, uint64_t seedArg, const uint64_t* __restrict__ seedBase) {
  int warps = blockDim.x / 32, lane = threadIdx.x & 31;
  const uint64_t seed = seedBase ? *seedBase + seedArg : seedArg;
  for (int64_t r = (int64_t)blockIdx.x * warps + threadIdx.x / 32; r < rows; r += (int64_t)gridDim.x * warps) {
    float* p = u + r * cols;
    float s = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) {
      const int64_t i = r * cols + j;
      // With dropout on a: the dropout kernel's mask and scaling (dropoutKeeps), then the add, as dropoutAdd rounds them.
      float ai = rate > 0.0f ? (dropoutKeeps(i, seed, rate) ? __fmul_rn(a[i], keepScale) : 0.0f) : a[i];
      float v = __fadd_rn(ai, b[i]);
      p[j] = v;
      s += v;
    }
    lnRowFromSum(p, s, gamma, beta, y + r * cols, cols, eps, lane, mean + r, rstd + r);
  }
}

static unsigned warpRowsGrid(int64_t rows) {
  int64_t blocks = (rows + 7) / 8;
  int64_t cap = (int64_t)smCount() * 32;
  return (unsigned)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

void layerNormForward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd, int64_t rows,
                      int64_t cols, float eps) {
  if (rows == 0) return;
  lnForwardKernel<<<warpRowsGrid(rows), 256, 0, stream()>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  LAUNCH_CHECK("layerNormForward");
}

void addLayerNormForward(const float* a, const float* b, float* u, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                         int64_t rows, int64_t cols, float eps, float rate, uint64_t seed) {
  if (rows == 0) return;
  if (!(rate >= 0.0f && rate < 1.0f)) fail("addLayerNorm: dropout rate %g outside [0, 1)", (double)rate);
  const uint64_t* seedBase = rate > 0.0f ? capturedSeed(&seed) : nullptr;
  addLnForwardKernel<<<warpRowsGrid(rows), 256, 0, stream()>>>(a, b, u, gamma, beta, y, mean, rstd, rows, cols, eps, rate, 1.0f / (1.0f - rate),
                                                               seed, seedBase);
  LAUNCH_CHECK("addLayerNormForward");
}

// dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), g = dy · gamma, x̂ = (x − mean) · rstd.
__global__ void lnBackwardDx(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ gamma,
                             const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ dx, int64_t rows,
                             int64_t cols) {
  int warps = blockDim.x / 32, lane = threadIdx.x & 31;
  for (int64_t r = (int64_t)blockIdx.x * warps + threadIdx.x / 32; r < rows; r += (int64_t)gridDim.x * warps) {
    const float* pd = dy + r * cols;
    const float* px = x + r * cols;
    float mu = mean[r], rs = rstd[r];
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) {
      float g = pd[j] * gamma[j];
      sg += g;
      sgx += g * (px[j] - mu) * rs;
    }
    for (int o = 16; o > 0; o >>= 1) {
      sg += __shfl_xor_sync(0xffffffffu, sg, o);
      sgx += __shfl_xor_sync(0xffffffffu, sgx, o);
    }
    float mg = sg / (float)cols, mgx = sgx / (float)cols;
    float* o = dx + r * cols;
    for (int64_t j = lane; j < cols; j += 32) {
      float g = pd[j] * gamma[j];
      float xh = (px[j] - mu) * rs;
      o[j] = rs * (g - mg - xh * mgx);
    }
  }
}

// Partial column sums of dy · x̂ and dy over a chunk of rows: block (32, 8), grid (column tiles,
// row chunks); partials [chunks, cols] each for dgamma and dbeta.
__global__ void lnBackwardParams(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean,
                                 const float* __restrict__ rstd, float* __restrict__ pg, float* __restrict__ pb, int64_t rows,
                                 int64_t cols, int64_t chunk) {
  __shared__ float sg[8][33], sb[8][33];
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.x;
  int64_t r0 = (int64_t)blockIdx.y * chunk;
  int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
  float ag = 0.0f, ab = 0.0f;
  if (c < cols) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) {
      float d = dy[r * cols + c];
      ag += d * (x[r * cols + c] - mean[r]) * rstd[r];
      ab += d;
    }
  }
  sg[threadIdx.y][threadIdx.x] = ag;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    for (int k = 1; k < 8; ++k) {
      ag += sg[k][threadIdx.x];
      ab += sb[k][threadIdx.x];
    }
    pg[blockIdx.y * cols + c] = ag;
    pb[blockIdx.y * cols + c] = ab;
  }
}

void layerNormBackward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd, float* dx,
                       float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0) return;
  lnBackwardDx<<<warpRowsGrid(rows), 256, 0, stream()>>>(dy, x, gamma, mean, rstd, dx, rows, cols);
  LAUNCH_CHECK("layerNormBackward dx");
  int64_t colTiles = (cols + 31) / 32;
  int64_t chunks = ((int64_t)smCount() * 4 + colTiles - 1) / colTiles;
  if (chunks > rows / 32) chunks = rows / 32;
  if (chunks < 1) chunks = 1;
  if (chunks > 65535) chunks = 65535;
  int64_t chunk = (rows + chunks - 1) / chunks;
  chunks = (rows + chunk - 1) / chunk;
  float* pg = (float*)deviceAlloc((size_t)(2 * chunks * cols) * sizeof(float));
  float* pb = pg + chunks * cols;
  lnBackwardParams<<<dim3((unsigned)colTiles, (unsigned)chunks), dim3(32, 8), 0, stream()>>>(dy, x, mean, rstd, pg, pb, rows, cols, chunk);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    try {
      reduce3(R_SUM, DT_FLOAT32, pg, dgamma, 1, chunks, cols);
      reduce3(R_SUM, DT_FLOAT32, pb, dbeta, 1, chunks, cols);
    } catch (...) {
      deviceFree(pg);
      throw;
    }
  }
  deviceFree(pg);
  if (e != cudaSuccess) CUDA_CHECK(e);
}

// ---- GELU ----------------------------------------------------------------------------------------

__global__ void geluFwdKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

__global__ void geluBwdKernel(const float* __restrict__ dy, const float* __restrict__ x, float* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = x[i];
    float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
    dx[i] = dy[i] * (cdf + v * pdf);
  }
}

void geluForward(const float* x, float* y, int64_t n) {
  if (n == 0) return;
  geluFwdKernel<<<gridFor(n), 256, 0, stream()>>>(x, y, n);
  LAUNCH_CHECK("geluForward");
}

void geluBackward(const float* dy, const float* x, float* dx, int64_t n) {
  if (n == 0) return;
  geluBwdKernel<<<gridFor(n), 256, 0, stream()>>>(dy, x, dx, n);
  LAUNCH_CHECK("geluBackward");
}

// GELU of x + bias (bias [cols] broadcast over rows): the bias add rounded on its own, then
// geluFwdKernel's arithmetic, so the numbers are those of the add kernel and the GELU kernel.
__global__ void biasGeluFwdKernel(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y, int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = __fadd_rn(x[i], b[i % cols]);
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// d/du GELU(u) · dy at u = x + bias (the bias gradient is this summed over rows, by the caller).
__global__ void biasGeluBwdKernel(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ du,
                                  int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = __fadd_rn(x[i], b[i % cols]);
    float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
    du[i] = dy[i] * (cdf + v * pdf);
  }
}

void biasGeluForward(const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
  int64_t n = rows * cols;
  if (n == 0) return;
  biasGeluFwdKernel<<<gridFor(n), 256, 0, stream()>>>(x, bias, y, n, cols);
  LAUNCH_CHECK("biasGeluForward");
}

void biasGeluBackward(const float* dy, const float* x, const float* bias, float* du, int64_t rows, int64_t cols) {
  int64_t n = rows * cols;
  if (n == 0) return;
  biasGeluBwdKernel<<<gridFor(n), 256, 0, stream()>>>(dy, x, bias, du, n, cols);
  LAUNCH_CHECK("biasGeluBackward");
}

// ---- AdamW ---------------------------------------------------------------------------------------

// One element of AdamW (decoupled weight decay, bias-corrected moments): the arithmetic of every
// AdamW kernel, so the single-tensor and the multi-tensor launches give the same numbers. The
// outputs may be the inputs (in place).
__device__ __forceinline__ void adamWElement(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut,
                                             float* vOut, int64_t i, float lr, float b1, float b2, float eps, float wd, float bc1, float bc2) {
  float gi = g[i];
  float mi = b1 * m[i] + (1.0f - b1) * gi;
  float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
  float pi = p[i] * (1.0f - lr * wd);
  pi -= lr * (mi / bc1) / (sqrtf(vi / bc2) + eps);
  mOut[i] = mi;
  vOut[i] = vi;
  pOut[i] = pi;
}

__global__ void adamWKernel(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut,
                            int64_t n, float lr, float b1, float b2, float eps, float wd, float bc1, float bc2) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    adamWElement(p, g, m, v, pOut, mOut, vOut, i, lr, b1, b2, eps, wd, bc1, bc2);
  }
}

void adamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n, float lr,
           float beta1, float beta2, float eps, float weightDecay, float biasCorrection1, float biasCorrection2) {
  if (n == 0) return;
  adamWKernel<<<gridFor(n), 256, 0, stream()>>>(p, g, m, v, pOut, mOut, vOut, n, lr, beta1, beta2, eps, weightDecay, biasCorrection1,
                                               biasCorrection2);
  LAUNCH_CHECK("adamW");
}

// Multi-tensor AdamW: one launch updates up to ADAMW_MULTI_MAX parameters in place, their
// addresses passed by value (PyTorch's multi_tensor_apply habit), the per-parameter learning rate,
// weight decay and bias corrections read from the device (hyper: 4 floats per parameter) so that a
// replayed graph sees the step's new values. blockIdx.y picks the parameter, blocks along x stride
// over its elements; the arithmetic is adamWKernel's, so the numbers equal one launch per tensor.
__global__ void adamWMultiKernel(AdamWMultiChunk c, const float* __restrict__ hyper, float b1, float b2, float eps) {
  int t = blockIdx.y;
  if (t >= c.count) return;
  float* p = c.p[t];
  const float* g = c.g[t];
  float* m = c.m[t];
  float* v = c.v[t];
  int64_t n = c.n[t];
  const float* h = hyper + 4 * (int64_t)c.hyperIndex[t];
  float lr = h[0], wd = h[1], bc1 = h[2], bc2 = h[3];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    adamWElement(p, g, m, v, p, m, v, i, lr, b1, b2, eps, wd, bc1, bc2);
  }
}

int adamWMulti(float* const* p, const float* const* g, float* const* m, float* const* v, const int64_t* n, int64_t count, const float* hyper,
               float beta1, float beta2, float eps) {
  int launches = 0;
  for (int64_t start = 0; start < count; start += ADAMW_MULTI_MAX) {
    AdamWMultiChunk c = {};
    c.count = (int)(count - start < ADAMW_MULTI_MAX ? count - start : ADAMW_MULTI_MAX);
    int64_t longest = 0;
    for (int k = 0; k < c.count; ++k) {
      c.p[k] = p[start + k];
      c.g[k] = g[start + k];
      c.m[k] = m[start + k];
      c.v[k] = v[start + k];
      c.n[k] = n[start + k];
      c.hyperIndex[k] = (int)(start + k);
      if (n[start + k] > longest) longest = n[start + k];
    }
    if (longest == 0) continue;
    int64_t blocks = (longest + 255) / 256;
    dim3 grid((unsigned)(blocks < 1024 ? blocks : 1024), (unsigned)c.count);
    adamWMultiKernel<<<grid, 256, 0, stream()>>>(c, hyper, beta1, beta2, eps);
    LAUNCH_CHECK("adamWMulti");
    launches++;
  }
  return launches;
}

// ---- dropout and random tensors (Philox4x32-10, ./philox.h) -----------------------------------

// Calls f(i, w) for every element i < n, w being the i-th 32-bit word of Philox4x32-10 under `seed`
// (counter i / 4, word i mod 4): the stream the dropout, dropout-add and uniform kernels draw from,
// element for element, so their masks agree (and the CPU mirror's, lib/ops/philox-dropout-mask.ts). Grid-stride.
template <typename F>
__device__ __forceinline__ void forEachPhiloxWord(int64_t n, uint64_t seed, F f) {
  int64_t groups = (n + 3) / 4;
  for (int64_t gi = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; gi < groups; gi += (int64_t)gridDim.x * blockDim.x) {
    uint4 r = philox((uint64_t)gi, seed);
    uint32_t w[4] = {r.x, r.y, r.z, r.w};
    for (int k = 0; k < 4; ++k) {
      int64_t i = gi * 4 + k;
      if (i < n) f(i, w[k]);
    }
  }
}

__global__ void dropoutKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, float rate, float scale, uint64_t seedArg,
                              const uint64_t* __restrict__ seedBase) {
  // In a captured graph the seed is the replay's base plus this kernel's offset (graph.h).
  uint64_t seed = seedBase ? *seedBase + seedArg : seedArg;
  forEachPhiloxWord(n, seed, [&](int64_t i, uint32_t w) { y[i] = toUniform(w) >= rate ? x[i] * scale : 0.0f; });
}

void dropout(const float* x, float* y, int64_t n, float rate, uint64_t seed) {
  if (n == 0) return;
  if (!(rate >= 0.0f && rate < 1.0f)) fail("dropout: rate %g outside [0, 1)", (double)rate);
  const uint64_t* seedBase = capturedSeed(&seed);
  dropoutKernel<<<gridFor((n + 3) / 4), 256, 0, stream()>>>(x, y, n, rate, 1.0f / (1.0f - rate), seed, seedBase);
  LAUNCH_CHECK("dropout");
}

// y = dropout(x) + residual in one pass (the residual connection after a dropped-out sublayer):
// the mask and scaling of dropoutKernel, then the add, rounded as the two kernels round (no fma).
__global__ void dropoutAddKernel(const float* __restrict__ x, const float* __restrict__ r, float* __restrict__ y, int64_t n, float rate,
                                 float scale, uint64_t seedArg, const uint64_t* __restrict__ seedBase) {
  uint64_t seed = seedBase ? *seedBase + seedArg : seedArg;
  forEachPhiloxWord(n, seed, [&](int64_t i, uint32_t w) { y[i] = __fadd_rn(toUniform(w) >= rate ? __fmul_rn(x[i], scale) : 0.0f, r[i]); });
}

void dropoutAdd(const float* x, const float* residual, float* y, int64_t n, float rate, uint64_t seed) {
  if (n == 0) return;
  if (!(rate >= 0.0f && rate < 1.0f)) fail("dropoutAdd: rate %g outside [0, 1)", (double)rate);
  const uint64_t* seedBase = capturedSeed(&seed);
  dropoutAddKernel<<<gridFor((n + 3) / 4), 256, 0, stream()>>>(x, residual, y, n, rate, 1.0f / (1.0f - rate), seed, seedBase);
  LAUNCH_CHECK("dropoutAdd");
}

__global__ void uniformKernel(float* __restrict__ y, int64_t n, uint64_t seed, float lo, float hi) {
  forEachPhiloxWord(n, seed, [&](int64_t i, uint32_t w) { y[i] = lo + (hi - lo) * toUniform(w); });
}

__global__ void normalKernel(float* __restrict__ y, int64_t n, uint64_t seed, float mean, float std) {
  int64_t groups = (n + 3) / 4;
  for (int64_t gi = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; gi < groups; gi += (int64_t)gridDim.x * blockDim.x) {
    uint4 r = philox((uint64_t)gi, seed);
    // Box-Muller on two pairs; u1 in (0, 1] so the log is finite.
    float u1 = 1.0f - toUniform(r.x), u2 = toUniform(r.y), u3 = 1.0f - toUniform(r.z), u4 = toUniform(r.w);
    float a = sqrtf(-2.0f * logf(u1)), b = sqrtf(-2.0f * logf(u3));
    float z[4] = {a * cospif(2.0f * u2), a * sinpif(2.0f * u2), b * cospif(2.0f * u4), b * sinpif(2.0f * u4)};
    for (int k = 0; k < 4; ++k) {
      int64_t i = gi * 4 + k;
      if (i < n) y[i] = mean + std * z[k];
    }
  }
}

void randomUniform(float* y, int64_t n, uint64_t seed, float lo, float hi) {
  if (n == 0) return;
  if (graphCapturing()) fail("randomUniform cannot be captured in a graph (initialisation, not a training step)");
  uniformKernel<<<gridFor((n + 3) / 4), 256, 0, stream()>>>(y, n, seed, lo, hi);
  LAUNCH_CHECK("randomUniform");
}

void randomNormal(float* y, int64_t n, uint64_t seed, float mean, float std) {
  if (n == 0) return;
  if (graphCapturing()) fail("randomNormal cannot be captured in a graph (initialisation, not a training step)");
  normalKernel<<<gridFor((n + 3) / 4), 256, 0, stream()>>>(y, n, seed, mean, std);
  LAUNCH_CHECK("randomNormal");
}

}  // namespace angle
