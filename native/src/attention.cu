// Fused attention (./attention.h): three kernels for the passes of lib/ops/flash-attention-reference.ts,
// with the same tile sizes (a test reads the constants below and compares them with the reference's).
//
//   forward   block = FWD_ROWS query rows of one head (a warp each); loops over key tiles of FWD_KEYS
//             keys (a lane each) held in shared memory; online softmax per tile.
//   rowDot    R = rowsum(dout * out), a warp per row.
//   dQ        block = DQ_ROWS query rows (a warp each); loops over key tiles of DQ_KEYS (a lane each).
//   dK/dV     block = DKV_KEYS keys of one key/value head (a warp each); loops over the rep query
//             heads of the group and their query tiles of DKV_ROWS rows (a lane each).
// Every output element is written by one warp, so backward needs no atomics and is deterministic.
// Head-dimension vectors are spread over a warp's lanes, lane d holding elements d, d + 32, ...
// (CHUNKS of them). Shared tiles that lanes read row-wise are padded to PAD columns so the 32
// lanes of a warp hit 32 banks.
#include <math.h>

#include "attention.h"
#include "graph.h"
#include "philox.h"

namespace angle {

namespace {

constexpr int FWD_ROWS = 16;
constexpr int FWD_KEYS = 32;
constexpr int DQ_ROWS = 8;
constexpr int DQ_KEYS = 32;
constexpr int DKV_KEYS = 8;
constexpr int DKV_ROWS = 32;
constexpr int MAX_HEAD_DIM = 128;
constexpr int CHUNKS = MAX_HEAD_DIM / 32;
constexpr int PAD = MAX_HEAD_DIM + 1;
constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ float warpMax(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(FULL, x, o));
  return x;
}

__device__ __forceinline__ float warpSum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(FULL, x, o);
  return x;
}

__device__ __forceinline__ float maskAt(const float* mask, const AttentionShape& sh, int64_t b, int64_t t, int64_t s) {
  if (!mask) return 0.0f;
  return mask[((sh.maskB == 1 ? 0 : b) * sh.maskT + (sh.maskT == 1 ? 0 : t)) * sh.S + s];
}

// The dropout multiplier of element `i` of the [B, H, T, S] probabilities: 0 or 1 / (1 - rate).
__device__ __forceinline__ float dropMultiplier(const AttentionShape& sh, float keepScale, int64_t i) {
  if (sh.dropoutRate <= 0.0f) return 1.0f;
  const uint64_t seed = sh.seedBase ? *sh.seedBase + sh.seed : sh.seed;
  return dropoutKeeps(i, seed, sh.dropoutRate) ? keepScale : 0.0f;
}

// Grid (B·H, ⌈T / FWD_ROWS⌉), FWD_ROWS warps.
__global__ void __launch_bounds__(FWD_ROWS * 32) attentionForwardKernel(const float* __restrict__ q, const float* __restrict__ k,
                                                                        const float* __restrict__ v, const float* __restrict__ mask,
                                                                        float* __restrict__ out, float* __restrict__ mOut,
                                                                        float* __restrict__ lOut, AttentionShape sh, float keepScale) {
  __shared__ float Qs[FWD_ROWS][MAX_HEAD_DIM];
  __shared__ float Ks[FWD_KEYS][PAD];
  __shared__ float Vs[FWD_KEYS][MAX_HEAD_DIM];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int D = (int)sh.D;
  const int64_t bh = blockIdx.x, b = bh / sh.H, h = bh % sh.H;
  const int64_t kvBase = (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * D;
  const int64_t t0 = (int64_t)blockIdx.y * FWD_ROWS, t = t0 + warp, row = bh * sh.T + t;
  const bool active = t < sh.T;
  for (int i = threadIdx.x; i < FWD_ROWS * D; i += blockDim.x) {
    int r = i / D, d = i % D;
    Qs[r][d] = t0 + r < sh.T ? q[(bh * sh.T + t0 + r) * D + d] : 0.0f;
  }
  float m = -INFINITY, l = 0.0f, o[CHUNKS];
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) o[c] = 0.0f;
  for (int64_t s0 = 0; s0 < sh.S; s0 += FWD_KEYS) {
    const int n = (int)min((int64_t)FWD_KEYS, sh.S - s0);
    __syncthreads();  // the previous tile's readers are done (and, the first time, Qs is written)
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
      int j = i / D, d = i % D;
      Ks[j][d] = k[kvBase + (s0 + j) * D + d];
      Vs[j][d] = v[kvBase + (s0 + j) * D + d];
    }
    __syncthreads();
    if (!active) continue;
    float score = -INFINITY;
    if (lane < n) {
      float acc = 0.0f;
      for (int d = 0; d < D; ++d) acc += Qs[warp][d] * Ks[lane][d];
      score = acc * sh.scale + maskAt(mask, sh, b, t, s0 + lane);
    }
    const float m2 = fmaxf(m, warpMax(score));
    const float corr = expf(m - m2);
    const float p = lane < n ? expf(score - m2) : 0.0f;
    l = l * corr + warpSum(p);
    const float pd = lane < n ? p * dropMultiplier(sh, keepScale, row * sh.S + s0 + lane) : 0.0f;
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) o[c] *= corr;
    for (int j = 0; j < n; ++j) {
      const float pj = __shfl_sync(FULL, pd, j);
      if (pj == 0.0f) continue;  // the same for the whole warp: pj is broadcast
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        int d = lane + 32 * c;
        if (d < D) o[c] += pj * Vs[j][d];
      }
    }
    m = m2;
  }
  if (!active) return;
  const float inv = 1.0f / l;
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    int d = lane + 32 * c;
    if (d < D) out[row * D + d] = o[c] * inv;
  }
  if (lane == 0) {
    mOut[row] = m;
    lOut[row] = l;
  }
}

// A warp per row of [rows, D].
__global__ void attentionRowDotKernel(const float* __restrict__ dout, const float* __restrict__ out, float* __restrict__ rowDot,
                                      int64_t rows, int D) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    float acc = 0.0f;
    for (int d = lane; d < D; d += 32) acc += dout[r * D + d] * out[r * D + d];
    acc = warpSum(acc);
    if (lane == 0) rowDot[r] = acc;
  }
}

// Grid (B·H, ⌈T / DQ_ROWS⌉), DQ_ROWS warps.
__global__ void __launch_bounds__(DQ_ROWS * 32) attentionGradQKernel(const float* __restrict__ q, const float* __restrict__ k,
                                                                     const float* __restrict__ v, const float* __restrict__ mask,
                                                                     const float* __restrict__ dout, const float* __restrict__ mIn,
                                                                     const float* __restrict__ lIn, const float* __restrict__ rowDot,
                                                                     float* __restrict__ dq, AttentionShape sh, float keepScale) {
  __shared__ float Qs[DQ_ROWS][MAX_HEAD_DIM];
  __shared__ float dOs[DQ_ROWS][MAX_HEAD_DIM];
  __shared__ float Ks[DQ_KEYS][PAD];
  __shared__ float Vs[DQ_KEYS][PAD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int D = (int)sh.D;
  const int64_t bh = blockIdx.x, b = bh / sh.H, h = bh % sh.H;
  const int64_t kvBase = (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * D;
  const int64_t t0 = (int64_t)blockIdx.y * DQ_ROWS, t = t0 + warp, row = bh * sh.T + t;
  const bool active = t < sh.T;
  for (int i = threadIdx.x; i < DQ_ROWS * D; i += blockDim.x) {
    int r = i / D, d = i % D;
    bool in = t0 + r < sh.T;
    Qs[r][d] = in ? q[(bh * sh.T + t0 + r) * D + d] : 0.0f;
    dOs[r][d] = in ? dout[(bh * sh.T + t0 + r) * D + d] : 0.0f;
  }
  const float m = active ? mIn[row] : 0.0f, invL = active ? 1.0f / lIn[row] : 0.0f, R = active ? rowDot[row] : 0.0f;
  float acc[CHUNKS];
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) acc[c] = 0.0f;
  for (int64_t s0 = 0; s0 < sh.S; s0 += DQ_KEYS) {
    const int n = (int)min((int64_t)DQ_KEYS, sh.S - s0);
    __syncthreads();
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
      int j = i / D, d = i % D;
      Ks[j][d] = k[kvBase + (s0 + j) * D + d];
      Vs[j][d] = v[kvBase + (s0 + j) * D + d];
    }
    __syncthreads();
    if (!active) continue;
    float ds = 0.0f;
    if (lane < n) {
      float qk = 0.0f, dov = 0.0f;
      for (int d = 0; d < D; ++d) {
        qk += Qs[warp][d] * Ks[lane][d];
        dov += dOs[warp][d] * Vs[lane][d];
      }
      const float p = expf(qk * sh.scale + maskAt(mask, sh, b, t, s0 + lane) - m) * invL;
      ds = p * (dov * dropMultiplier(sh, keepScale, row * sh.S + s0 + lane) - R);
    }
    for (int j = 0; j < n; ++j) {
      const float dsj = __shfl_sync(FULL, ds, j);
      if (dsj == 0.0f) continue;
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        int d = lane + 32 * c;
        if (d < D) acc[c] += dsj * Ks[j][d];
      }
    }
  }
  if (!active) return;
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    int d = lane + 32 * c;
    if (d < D) dq[row * D + d] = acc[c] * sh.scale;
  }
}

// Grid (B·Hkv, ⌈S / DKV_KEYS⌉), DKV_KEYS warps.
__global__ void __launch_bounds__(DKV_KEYS * 32) attentionGradKVKernel(const float* __restrict__ q, const float* __restrict__ k,
                                                                       const float* __restrict__ v, const float* __restrict__ mask,
                                                                       const float* __restrict__ dout, const float* __restrict__ mIn,
                                                                       const float* __restrict__ lIn, const float* __restrict__ rowDot,
                                                                       float* __restrict__ dk, float* __restrict__ dv, AttentionShape sh,
                                                                       float keepScale) {
  __shared__ float Ks[DKV_KEYS][MAX_HEAD_DIM];
  __shared__ float Vs[DKV_KEYS][MAX_HEAD_DIM];
  __shared__ float Qs[DKV_ROWS][PAD];
  __shared__ float dOs[DKV_ROWS][PAD];
  __shared__ float Ms[DKV_ROWS], invLs[DKV_ROWS], Rs[DKV_ROWS];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int D = (int)sh.D;
  const int64_t bg = blockIdx.x, b = bg / sh.Hkv, g = bg % sh.Hkv, rep = sh.H / sh.Hkv;
  const int64_t kvBase = bg * sh.S * D;
  const int64_t s0 = (int64_t)blockIdx.y * DKV_KEYS, s = s0 + warp;
  const bool active = s < sh.S;
  for (int i = threadIdx.x; i < DKV_KEYS * D; i += blockDim.x) {
    int j = i / D, d = i % D;
    bool in = s0 + j < sh.S;
    Ks[j][d] = in ? k[kvBase + (s0 + j) * D + d] : 0.0f;
    Vs[j][d] = in ? v[kvBase + (s0 + j) * D + d] : 0.0f;
  }
  float accK[CHUNKS], accV[CHUNKS];
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) accK[c] = accV[c] = 0.0f;
  for (int64_t r = 0; r < rep; ++r) {
    const int64_t bh = b * sh.H + g * rep + r;
    for (int64_t t0 = 0; t0 < sh.T; t0 += DKV_ROWS) {
      const int n = (int)min((int64_t)DKV_ROWS, sh.T - t0);
      __syncthreads();
      for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        int rr = i / D, d = i % D;
        Qs[rr][d] = q[(bh * sh.T + t0 + rr) * D + d];
        dOs[rr][d] = dout[(bh * sh.T + t0 + rr) * D + d];
      }
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int64_t row = bh * sh.T + t0 + i;
        Ms[i] = mIn[row];
        invLs[i] = 1.0f / lIn[row];
        Rs[i] = rowDot[row];
      }
      __syncthreads();
      if (!active) continue;
      float pd = 0.0f, ds = 0.0f;
      if (lane < n) {
        const int64_t t = t0 + lane, row = bh * sh.T + t;
        float qk = 0.0f, dov = 0.0f;
        for (int d = 0; d < D; ++d) {
          qk += Qs[lane][d] * Ks[warp][d];
          dov += dOs[lane][d] * Vs[warp][d];
        }
        const float p = expf(qk * sh.scale + maskAt(mask, sh, b, t, s) - Ms[lane]) * invLs[lane];
        const float mult = dropMultiplier(sh, keepScale, row * sh.S + s);
        pd = p * mult;
        ds = p * (dov * mult - Rs[lane]);
      }
      for (int i = 0; i < n; ++i) {
        const float pdi = __shfl_sync(FULL, pd, i), dsi = __shfl_sync(FULL, ds, i);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
          int d = lane + 32 * c;
          if (d < D) {
            accV[c] += pdi * dOs[i][d];
            accK[c] += dsi * Qs[i][d];
          }
        }
      }
    }
  }
  if (!active) return;
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    int d = lane + 32 * c;
    if (d < D) {
      dk[kvBase + s * D + d] = accK[c] * sh.scale;
      dv[kvBase + s * D + d] = accV[c];
    }
  }
}

void checkShape(const AttentionShape& sh, const float* mask, const char* fn) {
  if (sh.B < 0 || sh.H < 1 || sh.Hkv < 1 || sh.T < 0 || sh.S < 0 || sh.D < 1)
    fail("%s: shape B %lld, H %lld, Hkv %lld, T %lld, S %lld, D %lld is not valid", fn, (long long)sh.B, (long long)sh.H,
         (long long)sh.Hkv, (long long)sh.T, (long long)sh.S, (long long)sh.D);
  if (sh.H % sh.Hkv != 0) fail("%s: %lld query heads are not a multiple of %lld key/value heads", fn, (long long)sh.H, (long long)sh.Hkv);
  if (sh.D > MAX_HEAD_DIM) fail("%s: head dimension %lld exceeds %d", fn, (long long)sh.D, MAX_HEAD_DIM);
  if (mask && ((sh.maskB != 1 && sh.maskB != sh.B) || (sh.maskT != 1 && sh.maskT != sh.T)))
    fail("%s: mask [%lld, 1, %lld, S] does not broadcast to [%lld, 1, %lld, S]", fn, (long long)sh.maskB, (long long)sh.maskT,
         (long long)sh.B, (long long)sh.T);
  if (!(sh.dropoutRate >= 0.0f && sh.dropoutRate < 1.0f)) fail("%s: dropout rate %g outside [0, 1)", fn, (double)sh.dropoutRate);
  if ((sh.T + FWD_ROWS - 1) / FWD_ROWS > 65535 || (sh.S + DKV_KEYS - 1) / DKV_KEYS > 65535)
    fail("%s: %lld queries or %lld keys exceed the grid", fn, (long long)sh.T, (long long)sh.S);
}

float keepScaleOf(const AttentionShape& sh) { return 1.0f / (1.0f - sh.dropoutRate); }

}  // namespace

void attentionForward(const float* q, const float* k, const float* v, const float* mask, float* out, float* m, float* l,
                      const AttentionShape& shape) {
  AttentionShape sh = shape;
  // In a captured graph the dropout seed is the launch's base plus this call's offset (graph.h).
  if (sh.dropoutRate > 0) sh.seedBase = capturedSeed(&sh.seed);
  checkShape(sh, mask, "attentionForward");
  if (sh.B == 0 || sh.T == 0) return;
  if (sh.S == 0) fail("attentionForward: no keys");
  dim3 grid((unsigned)(sh.B * sh.H), (unsigned)((sh.T + FWD_ROWS - 1) / FWD_ROWS));
  attentionForwardKernel<<<grid, FWD_ROWS * 32, 0, stream()>>>(q, k, v, mask, out, m, l, sh, keepScaleOf(sh));
  LAUNCH_CHECK("attentionForward");
}

void attentionBackward(const float* q, const float* k, const float* v, const float* mask, const float* out, const float* dout,
                       const float* m, const float* l, float* rowDot, float* dq, float* dk, float* dv, const AttentionShape& shape) {
  AttentionShape sh = shape;
  if (sh.dropoutRate > 0) sh.seedBase = capturedSeed(&sh.seed);
  checkShape(sh, mask, "attentionBackward");
  if (sh.B == 0 || sh.T == 0 || sh.S == 0) {
    if (sh.B > 0 && sh.S > 0) {
      CUDA_CHECK(cudaMemsetAsync(dk, 0, sizeof(float) * sh.B * sh.Hkv * sh.S * sh.D, stream()));
      CUDA_CHECK(cudaMemsetAsync(dv, 0, sizeof(float) * sh.B * sh.Hkv * sh.S * sh.D, stream()));
    }
    return;
  }
  const int64_t rows = sh.B * sh.H * sh.T;
  attentionRowDotKernel<<<gridFor(rows * 32), 256, 0, stream()>>>(dout, out, rowDot, rows, (int)sh.D);
  LAUNCH_CHECK("attentionRowDot");
  const float keepScale = keepScaleOf(sh);
  dim3 gq((unsigned)(sh.B * sh.H), (unsigned)((sh.T + DQ_ROWS - 1) / DQ_ROWS));
  attentionGradQKernel<<<gq, DQ_ROWS * 32, 0, stream()>>>(q, k, v, mask, dout, m, l, rowDot, dq, sh, keepScale);
  LAUNCH_CHECK("attentionGradQ");
  dim3 gkv((unsigned)(sh.B * sh.Hkv), (unsigned)((sh.S + DKV_KEYS - 1) / DKV_KEYS));
  attentionGradKVKernel<<<gkv, DKV_KEYS * 32, 0, stream()>>>(q, k, v, mask, dout, m, l, rowDot, dk, dv, sh, keepScale);
  LAUNCH_CHECK("attentionGradKV");
}

}  // namespace angle
