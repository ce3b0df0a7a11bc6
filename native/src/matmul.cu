#include "matmul.h"

#include <cublasLt.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

namespace angle {

static void checkBlas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fail("%s failed: %s (%s, status %d) [%s:%d]", call, cublasLtGetStatusName(s), cublasLtGetStatusString(s), (int)s, file, line);
}
#define BLAS_CHECK(call) checkBlas((call), #call, __FILE__, __LINE__)

static cublasLtHandle_t g_lt = nullptr;
static void* g_workspace = nullptr;
static const size_t WORKSPACE_BYTES = 32u << 20;  // what NVIDIA recommends for Hopper

static void ensureHandle() {
  if (g_lt) return;
  BLAS_CHECK(cublasLtCreate(&g_lt));
  CUDA_CHECK(cudaMalloc(&g_workspace, WORKSPACE_BYTES));
}

std::string blasVersion() {
  return std::to_string((unsigned long long)cublasLtGetVersion());
}

// Everything cuBLASLt needs for one problem shape, built once: descriptors and the heuristic's
// first algorithm.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;
};

using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int, int>;
static std::map<PlanKey, Plan> g_plans;
static const size_t MAX_PLANS = 4096;

size_t matmulPlanCount() { return g_plans.size(); }

// Autotuning: cuBLASLt's heuristic ranks algorithms by a model, and its first pick is measurably
// not the fastest for some of BERT's shapes (the K = tokens weight gradients ran at ~110 TFLOP/s
// TF32 on the H100). Each new plan therefore times up to MAX_CANDIDATES of the heuristic's
// algorithms on the real operands and keeps the fastest. ANGLE_CUDA_AUTOTUNE=0 keeps the first.
static const int MAX_CANDIDATES = 8;
static bool autotuneEnabled() {
  static int enabled = -1;
  if (enabled < 0) {
    const char* v = std::getenv("ANGLE_CUDA_AUTOTUNE");
    enabled = (v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0)) ? 0 : 1;
  }
  return enabled == 1;
}

// Mean milliseconds of `reps` runs of one algorithm, or a negative number if it fails to run.
static float timeAlgo(const cublasLtMatmulDesc_t desc, const cublasLtMatrixLayout_t la, const cublasLtMatrixLayout_t lb,
                      const cublasLtMatrixLayout_t lc, const cublasLtMatmulHeuristicResult_t& r, const float* A, const float* B, float* C,
                      cudaEvent_t start, cudaEvent_t stop) {
  const float alpha = 1.0f, beta = 0.0f;
  const int reps = 3;
  // one untimed run (first-use costs), then the timed ones
  if (cublasLtMatmul(g_lt, desc, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &r.algo, g_workspace, r.workspaceSize, stream()) !=
      CUBLAS_STATUS_SUCCESS)
    return -1.0f;
  CUDA_CHECK(cudaEventRecord(start, stream()));
  for (int i = 0; i < reps; ++i)
    if (cublasLtMatmul(g_lt, desc, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &r.algo, g_workspace, r.workspaceSize, stream()) !=
        CUBLAS_STATUS_SUCCESS)
      return -1.0f;
  CUDA_CHECK(cudaEventRecord(stop, stream()));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / reps;
}

static cublasComputeType_t computeTypeOf(int precision) {
  switch (precision) {
    case MM_FP32: return CUBLAS_COMPUTE_32F;
    case MM_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case MM_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case MM_FP16: return CUBLAS_COMPUTE_32F_FAST_16F;
  }
  fail("matmul: unknown precision code %d (0 tf32, 1 fp32, 2 bf16, 3 fp16)", precision);
}

static const char* precisionName(int precision) {
  return precision == MM_FP32 ? "fp32" : precision == MM_BF16 ? "bf16" : precision == MM_FP16 ? "fp16" : "tf32";
}

static void destroyPlan(Plan& p) {
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.c) cublasLtMatrixLayoutDestroy(p.c);
  p = Plan();
}

static cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  BLAS_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, ld));
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    BLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    BLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return l;
}

// Largest power of two (<= 256) dividing the byte address and every byte stride given.
static uint32_t alignmentOf(const void* p, int64_t ldElems, int64_t strideElems) {
  uint64_t v = (uint64_t)(uintptr_t)p | (uint64_t)(ldElems * 4) | (uint64_t)(strideElems * 4) | 256u;
  return (uint32_t)(v & (~v + 1));
}

void matmul(const float* A, const float* B, float* C, int64_t batch, int64_t M, int64_t N, int64_t K, bool transA, bool transB,
            int64_t strideA, int64_t strideB, int precision) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (batch > 2147483647) fail("matmul: batch %lld exceeds int32", (long long)batch);
  if (K == 0) {
    CUDA_CHECK(cudaMemsetAsync(C, 0, (size_t)(batch * M * N) * sizeof(float), stream()));
    return;
  }
  ensureHandle();
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's "A" is our B
  // and its "B" is our A, each read in its stored (column-major) shape.
  uint64_t ltARows = transB ? K : N, ltACols = transB ? N : K;
  int64_t ltALd = transB ? K : N;
  uint64_t ltBRows = transA ? M : K, ltBCols = transA ? K : M;
  int64_t ltBLd = transA ? M : K;
  int64_t strideC = M * N;
  uint32_t alA = alignmentOf(B, ltALd, batch > 1 ? strideB : 0);
  uint32_t alB = alignmentOf(A, ltBLd, batch > 1 ? strideA : 0);
  uint32_t alC = alignmentOf(C, N, batch > 1 ? strideC : 0);
  PlanKey key{batch, M, N, K, batch > 1 ? strideA : 0, batch > 1 ? strideB : 0, (int)transA | ((int)transB << 1), precision,
              (int)alA | ((int)alB << 9), (int)alC};
  auto it = g_plans.find(key);
  if (it == g_plans.end()) {
    if (g_plans.size() >= MAX_PLANS) {
      for (auto& kv : g_plans) destroyPlan(kv.second);
      g_plans.clear();
    }
    Plan p;
    cublasLtMatmulPreference_t pref = nullptr;
    try {
      cublasComputeType_t compute = computeTypeOf(precision);
      BLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, compute, CUDA_R_32F));
      int32_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
      int32_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
      BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
      BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
      p.a = layout(ltARows, ltACols, ltALd, batch, strideB);
      p.b = layout(ltBRows, ltBCols, ltBLd, batch, strideA);
      p.c = layout((uint64_t)N, (uint64_t)M, N, batch, strideC);
      BLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
      uint64_t ws = WORKSPACE_BYTES;
      BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
      BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alA, sizeof(alA)));
      BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alB, sizeof(alB)));
      BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alC, sizeof(alC)));
      BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alC, sizeof(alC)));
      cublasLtMatmulHeuristicResult_t results[MAX_CANDIDATES];
      int found = 0;
      BLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(g_lt, p.desc, p.a, p.b, p.c, p.c, pref, autotuneEnabled() ? MAX_CANDIDATES : 1, results,
                                                &found));
      int pick = -1;
      int valid = 0;
      for (int i = 0; i < found; ++i)
        if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= WORKSPACE_BYTES) {
          if (pick < 0) pick = i;
          ++valid;
        }
      if (pick >= 0 && valid > 1) {
        cudaEvent_t start = nullptr, stop = nullptr;
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        float best = -1.0f;
        int bestIdx = pick;
        for (int i = 0; i < found; ++i) {
          if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > WORKSPACE_BYTES) continue;
          float ms = timeAlgo(p.desc, p.a, p.b, p.c, results[i], A, B, C, start, stop);
          if (ms >= 0.0f && (best < 0.0f || ms < best)) {
            best = ms;
            bestIdx = i;
          }
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        pick = bestIdx;
      }
      if (pick < 0)
        fail("cuBLASLt has no algorithm for batch %lld x [%lld x %lld] * [%lld x %lld] (transA %d, transB %d, %s, alignments %u/%u/%u)",
             (long long)batch, (long long)M, (long long)K, (long long)K, (long long)N, (int)transA, (int)transB,
             precisionName(precision), alA, alB, alC);
      p.algo = results[pick].algo;
      p.workspace = results[pick].workspaceSize;
      cublasLtMatmulPreferenceDestroy(pref);
      pref = nullptr;
    } catch (...) {
      if (pref) cublasLtMatmulPreferenceDestroy(pref);
      destroyPlan(p);
      throw;
    }
    it = g_plans.emplace(key, p).first;
  }
  Plan& p = it->second;
  const float alpha = 1.0f, beta = 0.0f;
  BLAS_CHECK(cublasLtMatmul(g_lt, p.desc, &alpha, B, p.a, A, p.b, &beta, C, p.c, C, p.c, &p.algo, g_workspace, p.workspace, stream()));
}

}  // namespace angle
