// Standalone benchmark and check of the fused attention kernels (../src/attention.cu), in llm.c's
// habit (dev/cuda/*.cu): its own main, no Node, no addon. For each shape it checks the fused
// forward and backward against a naive implementation that writes the full [B, H, T, S]
// probabilities (one thread per output element, fp32), then times both.
//
//   node native/build.mjs --dev          builds build/cuda/dev/attention
//   build/cuda/dev/attention [--json] [--iters N] [--dropout RATE] [--shape NAME] [--help]
//
// Shapes (the issue's): BERT-base, 12 heads × 64, batch 32, T 64, 128, 512; LLaMA-7B, 32 heads ×
// 128, batch 1, T 512, 2048 (causal). Output: one line per shape (one JSON object with --json):
// fused and naive milliseconds for forward and forward+backward, TFLOP/s of the fused kernels
// (forward 4·B·H·T·S·D FLOPs, backward 2.5× that, FlashAttention's count; the causal mask is not
// exploited, so the full count is used), and the largest differences from the naive outputs relative to
// their largest magnitude (must stay below 1e-4, else the exit status is 1). bench/attention-sdpa.py times PyTorch's SDPA on the same shapes for the device check.
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "../src/attention.cu"

// The four functions of context.cu the kernels use, for a binary without the addon.
namespace angle {
void fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  exit(1);
}
void checkCuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail("%s failed at %s:%d: %s", call, file, line, cudaGetErrorString(e));
}
void checkLaunch(const char* kernel, const char* file, int line) { checkCuda(cudaGetLastError(), kernel, file, line); }
cudaStream_t stream() { return 0; }
int smCount() {
  static int n = 0;
  if (!n) {
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
  }
  return n;
}
}  // namespace angle

using namespace angle;

// A named namespace: nvcc's stubs cannot tell two anonymous ones apart (../src/attention.cu has one).
namespace bench {

struct Config {
  const char* name;
  int64_t B, H, Hkv, T, D;
  bool causal;
};

const Config CONFIGS[] = {
    {"bert-base-T64", 32, 12, 12, 64, 64, false},    {"bert-base-T128", 32, 12, 12, 128, 64, false},
    {"bert-base-T512", 32, 12, 12, 512, 64, false},  {"llama-7b-T512", 1, 32, 32, 512, 128, true},
    {"llama-7b-T2048", 1, 32, 32, 2048, 128, true},
};

__global__ void fillNormalish(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint4 r = philox((uint64_t)i, seed);
    x[i] = (toUniform(r.x) + toUniform(r.y) + toUniform(r.z) - 1.5f) * 2.0f;
  }
}

// ---- the naive attention: every [B, H, T, S] probability written --------------------------------

__device__ float naiveMask(const float* mask, const AttentionShape& sh, int64_t b, int64_t t, int64_t s) {
  return mask ? mask[((sh.maskB == 1 ? 0 : b) * sh.maskT + (sh.maskT == 1 ? 0 : t)) * sh.S + s] : 0.0f;
}

__device__ float naiveDrop(const AttentionShape& sh, int64_t i) {
  if (sh.dropoutRate <= 0.0f) return 1.0f;
  return dropoutKeeps(i, sh.seed, sh.dropoutRate) ? 1.0f / (1.0f - sh.dropoutRate) : 0.0f;
}

// P[bh, t, s] = softmax_s(scale q·k + mask), a thread per row.
__global__ void naiveProbs(const float* q, const float* k, const float* mask, float* P, AttentionShape sh) {
  int64_t rows = sh.B * sh.H * sh.T;
  for (int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; row < rows; row += (int64_t)gridDim.x * blockDim.x) {
    int64_t bh = row / sh.T, t = row % sh.T, b = bh / sh.H, h = bh % sh.H;
    const float* kk = k + (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * sh.D;
    float* p = P + row * sh.S;
    float mx = -INFINITY;
    for (int64_t s = 0; s < sh.S; ++s) {
      float acc = 0.0f;
      for (int64_t d = 0; d < sh.D; ++d) acc += q[row * sh.D + d] * kk[s * sh.D + d];
      p[s] = acc * sh.scale + naiveMask(mask, sh, b, t, s);
      mx = fmaxf(mx, p[s]);
    }
    float sum = 0.0f;
    for (int64_t s = 0; s < sh.S; ++s) sum += (p[s] = expf(p[s] - mx));
    for (int64_t s = 0; s < sh.S; ++s) p[s] /= sum;
  }
}

// out[bh, t, d] = Σ_s drop(P) v, a thread per element.
__global__ void naiveOut(const float* P, const float* v, float* out, AttentionShape sh) {
  int64_t n = sh.B * sh.H * sh.T * sh.D;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t row = i / sh.D, d = i % sh.D, bh = row / sh.T, b = bh / sh.H, h = bh % sh.H;
    const float* vv = v + (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * sh.D;
    float acc = 0.0f;
    for (int64_t s = 0; s < sh.S; ++s) acc += P[row * sh.S + s] * naiveDrop(sh, row * sh.S + s) * vv[s * sh.D + d];
    out[i] = acc;
  }
}

// dS[bh, t, s] = P (drop · dout·v − rowsum(dout ∘ out)), a thread per element (R recomputed per element: naive).
__global__ void naiveDS(const float* P, const float* v, const float* out, const float* dout, float* dS, AttentionShape sh) {
  int64_t n = sh.B * sh.H * sh.T * sh.S;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t row = i / sh.S, s = i % sh.S, bh = row / sh.T, b = bh / sh.H, h = bh % sh.H;
    const float* vv = v + (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * sh.D;
    float dov = 0.0f, R = 0.0f;
    for (int64_t d = 0; d < sh.D; ++d) {
      dov += dout[row * sh.D + d] * vv[s * sh.D + d];
      R += dout[row * sh.D + d] * out[row * sh.D + d];
    }
    dS[i] = P[i] * (dov * naiveDrop(sh, i) - R);
  }
}

__global__ void naiveDQ(const float* dS, const float* k, float* dq, AttentionShape sh) {
  int64_t n = sh.B * sh.H * sh.T * sh.D;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t row = i / sh.D, d = i % sh.D, bh = row / sh.T, b = bh / sh.H, h = bh % sh.H;
    const float* kk = k + (b * sh.Hkv + h / (sh.H / sh.Hkv)) * sh.S * sh.D;
    float acc = 0.0f;
    for (int64_t s = 0; s < sh.S; ++s) acc += dS[row * sh.S + s] * kk[s * sh.D + d];
    dq[i] = acc * sh.scale;
  }
}

// dk, dv [b, g, s, d]: sums over the rep query heads of group g and their rows.
__global__ void naiveDKV(const float* P, const float* dS, const float* q, const float* dout, float* dk, float* dv, AttentionShape sh) {
  int64_t n = sh.B * sh.Hkv * sh.S * sh.D, rep = sh.H / sh.Hkv;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t d = i % sh.D, s = (i / sh.D) % sh.S, bg = i / (sh.D * sh.S), b = bg / sh.Hkv, g = bg % sh.Hkv;
    float ak = 0.0f, av = 0.0f;
    for (int64_t r = 0; r < rep; ++r) {
      int64_t bh = b * sh.H + g * rep + r;
      for (int64_t t = 0; t < sh.T; ++t) {
        int64_t row = bh * sh.T + t, e = row * sh.S + s;
        ak += dS[e] * q[row * sh.D + d];
        av += P[e] * naiveDrop(sh, e) * dout[row * sh.D + d];
      }
    }
    dk[i] = ak * sh.scale;
    dv[i] = av;
  }
}

unsigned blocksFor(int64_t n) { return (unsigned)std::min<int64_t>((n + 255) / 256, (int64_t)smCount() * 32); }

float* deviceArray(int64_t n) {
  float* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, sizeof(float) * std::max<int64_t>(n, 1)));
  return p;
}

// max |a − b| / max(1, max |b|): b is the naive result.
float maxRelDiff(const float* a, const float* b, int64_t n) {
  std::vector<float> x(n), y(n);
  CUDA_CHECK(cudaMemcpy(x.data(), a, sizeof(float) * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(y.data(), b, sizeof(float) * n, cudaMemcpyDeviceToHost));
  float m = 0.0f, scale = 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    m = fmaxf(m, fabsf(x[i] - y[i]));
    scale = fmaxf(scale, fabsf(y[i]));
  }
  return m / scale;
}

template <typename F>
float timeMs(F f, int iters) {
  f();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  CUDA_CHECK(cudaEventRecord(a));
  for (int i = 0; i < iters; ++i) f();
  CUDA_CHECK(cudaEventRecord(b));
  CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / iters;
}

void usage() {
  printf(
      "usage: attention [--json] [--iters N] [--dropout RATE] [--shape NAME] [--help]\n"
      "  --json          one JSON object per shape instead of a text line\n"
      "  --iters N       timed iterations per kernel (default 20)\n"
      "  --dropout RATE  attention dropout rate in [0, 1) (default 0; BERT trains with 0.1)\n"
      "  --shape NAME    run one shape only; shapes:");
  for (const Config& c : CONFIGS) printf(" %s", c.name);
  printf("\n  --help          this text\n");
}

}  // namespace bench

using namespace bench;

int main(int argc, char** argv) {
  bool json = false;
  int iters = 20;
  float rate = 0.0f;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) {
      if (i + 1 >= argc) fail("attention: %s needs a value (see --help)", what);
      return std::string(argv[++i]);
    };
    if (a == "--json") json = true;
    else if (a == "--iters") iters = atoi(value("--iters").c_str());
    else if (a == "--dropout") rate = (float)atof(value("--dropout").c_str());
    else if (a == "--shape") only = value("--shape");
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else fail("attention: unknown option %s (see --help)", a.c_str());
  }
  if (iters < 1) fail("attention: --iters must be at least 1");
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (!json) printf("device: %s\n", prop.name);
  bool ran = false, ok = true;
  for (const Config& c : CONFIGS) {
    if (!only.empty() && only != c.name) continue;
    ran = true;
    AttentionShape sh{c.B, c.H, c.Hkv, c.T, c.T, c.D, c.causal ? 1 : c.B, c.causal ? c.T : 1, 1.0f / sqrtf((float)c.D), rate, 1234};
    const int64_t nq = c.B * c.H * c.T * c.D, nkv = c.B * c.Hkv * c.T * c.D, rows = c.B * c.H * c.T, np = rows * c.T;
    float *q = deviceArray(nq), *k = deviceArray(nkv), *v = deviceArray(nkv), *dout = deviceArray(nq);
    std::vector<float> hmask(sh.maskB * sh.maskT * sh.S, 0.0f);
    // BERT: the last quarter of every other sequence is padding; LLaMA: causal.
    for (int64_t b = 0; b < sh.maskB; ++b)
      for (int64_t t = 0; t < sh.maskT; ++t)
        for (int64_t s = 0; s < sh.S; ++s)
          if (c.causal ? s > t : (b % 2 == 1 && s >= sh.S * 3 / 4)) hmask[(b * sh.maskT + t) * sh.S + s] = -1e9f;
    float* mask = deviceArray((int64_t)hmask.size());
    CUDA_CHECK(cudaMemcpy(mask, hmask.data(), sizeof(float) * hmask.size(), cudaMemcpyHostToDevice));
    fillNormalish<<<blocksFor(nq), 256>>>(q, nq, 1);
    fillNormalish<<<blocksFor(nkv), 256>>>(k, nkv, 2);
    fillNormalish<<<blocksFor(nkv), 256>>>(v, nkv, 3);
    fillNormalish<<<blocksFor(nq), 256>>>(dout, nq, 4);
    float *out = deviceArray(nq), *m = deviceArray(rows), *l = deviceArray(rows), *R = deviceArray(rows);
    float *dq = deviceArray(nq), *dk = deviceArray(nkv), *dv = deviceArray(nkv);
    float *P = deviceArray(np), *dS = deviceArray(np), *outN = deviceArray(nq), *dqN = deviceArray(nq), *dkN = deviceArray(nkv),
          *dvN = deviceArray(nkv);
    auto fusedFwd = [&] { attentionForward(q, k, v, mask, out, m, l, sh); };
    auto fusedBwd = [&] { attentionBackward(q, k, v, mask, out, dout, m, l, R, dq, dk, dv, sh); };
    auto naiveFwd = [&] {
      naiveProbs<<<blocksFor(rows), 256>>>(q, k, mask, P, sh);
      naiveOut<<<blocksFor(nq), 256>>>(P, v, outN, sh);
    };
    auto naiveBwd = [&] {
      naiveDS<<<blocksFor(np), 256>>>(P, v, outN, dout, dS, sh);
      naiveDQ<<<blocksFor(nq), 256>>>(dS, k, dqN, sh);
      naiveDKV<<<blocksFor(nkv), 256>>>(P, dS, q, dout, dkN, dvN, sh);
    };
    fusedFwd();
    fusedBwd();
    naiveFwd();
    naiveBwd();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    const float dOut = maxRelDiff(out, outN, nq), dQ = maxRelDiff(dq, dqN, nq), dK = maxRelDiff(dk, dkN, nkv), dV = maxRelDiff(dv, dvN, nkv);
    // fp32 sums in other orders: far below 1e-4 of the largest value unless a tile is wrong.
    const float tol = 1e-4f;
    const bool pass = dOut < tol && dQ < tol && dK < tol && dV < tol;
    ok = ok && pass;
    const int n = iters;
    const float fwdMs = timeMs(fusedFwd, n), bothMs = timeMs([&] { fusedFwd(); fusedBwd(); }, n);
    const float naiveFwdMs = timeMs(naiveFwd, std::max(1, n / 4)), naiveBothMs = timeMs([&] { naiveFwd(); naiveBwd(); }, std::max(1, n / 4));
    const double flops = 4.0 * c.B * c.H * c.T * c.T * c.D;
    const double fwdTflops = flops / (fwdMs * 1e-3) / 1e12, bothTflops = 3.5 * flops / (bothMs * 1e-3) / 1e12;
    if (json)
      printf(
          "{\"kernel\":\"attention\",\"device\":\"%s\",\"shape\":\"%s\",\"B\":%lld,\"H\":%lld,\"T\":%lld,\"D\":%lld,\"causal\":%s,"
          "\"dropout\":%g,\"fusedForwardMs\":%.4f,\"fusedForwardBackwardMs\":%.4f,\"naiveForwardMs\":%.4f,\"naiveForwardBackwardMs\":%.4f,"
          "\"forwardTflops\":%.2f,\"forwardBackwardTflops\":%.2f,\"maxRelDiff\":{\"out\":%.3g,\"dq\":%.3g,\"dk\":%.3g,\"dv\":%.3g},"
          "\"tolerance\":%g,\"pass\":%s}\n",
          prop.name, c.name, (long long)c.B, (long long)c.H, (long long)c.T, (long long)c.D, c.causal ? "true" : "false", rate, fwdMs,
          bothMs, naiveFwdMs, naiveBothMs, fwdTflops, bothTflops, dOut, dQ, dK, dV, tol, pass ? "true" : "false");
    else
      printf("%-16s fused fwd %8.3f ms (%6.1f TFLOP/s) fwd+bwd %8.3f ms (%6.1f TFLOP/s) | naive fwd %8.3f ms fwd+bwd %8.3f ms | max rel diff out %.2e dq %.2e dk %.2e dv %.2e %s\n",
             c.name, fwdMs, fwdTflops, bothMs, bothTflops, naiveFwdMs, naiveBothMs, dOut, dQ, dK, dV, pass ? "ok" : "FAILED");
    for (float* p : {q, k, v, dout, mask, out, m, l, R, dq, dk, dv, P, dS, outN, dqN, dkN, dvN}) cudaFree(p);
  }
  if (!ran) fail("attention: no shape called %s (see --help)", only.c_str());
  return ok ? 0 : 1;
}
