#include "elementwise.h"

#include <math.h>

#include "ops.h"

namespace angle {

// ---- index modes -------------------------------------------------------------------------------

IndexMode indexMode(const Dims& d, const Strides& s, int64_t* param) {
  *param = 0;
  bool allZero = true;
  for (int k = 0; k < d.rank; ++k)
    if (s.s[k] != 0 && d.size[k] != 1) allZero = false;
  if (allZero) return IX_SCALAR;
  // Contiguous over dims [k, rank) with zero strides before k: index = i % prod(size[k..]).
  int64_t contig = 1;
  int k = d.rank - 1;
  for (; k >= 0; --k) {
    if (d.size[k] != 1 && s.s[k] != contig) break;
    contig *= d.size[k];
  }
  bool zeroBefore = true;
  for (int j = 0; j <= k; ++j)
    if (s.s[j] != 0 && d.size[j] != 1) zeroBefore = false;
  if (k < 0) return IX_CONTIG;
  if (zeroBefore) {
    *param = contig;
    return IX_MOD;
  }
  // Zero strides over dims [k, rank), contiguous before: index = i / prod(size[k..]).
  int64_t inner = 1;
  k = d.rank - 1;
  for (; k >= 0; --k) {
    if (s.s[k] != 0 && d.size[k] != 1) break;
    inner *= d.size[k];
  }
  int64_t c = 1;
  bool contigBefore = true;
  for (int j = k; j >= 0; --j) {
    if (d.size[j] != 1 && s.s[j] != c) contigBefore = false;
    c *= d.size[j];
  }
  if (contigBefore && inner > 1) {
    *param = inner;
    return IX_DIV;
  }
  return IX_GENERAL;
}

__device__ __forceinline__ int64_t operandIndex(int mode, int64_t i, int64_t param, const Dims& d, const Strides& s) {
  switch (mode) {
    case IX_CONTIG:
      return i;
    case IX_SCALAR:
      return 0;
    case IX_MOD:
      return i % param;
    case IX_DIV:
      return i / param;
    default:
      return stridedOffset(i, d, s);
  }
}

// ---- unary -------------------------------------------------------------------------------------

__device__ __forceinline__ float unaryF(int op, float x, float alpha, float beta) {
  switch (op) {
    case U_NEG: return -x;
    case U_ABS: return fabsf(x);
    case U_EXP: return expf(x);
    case U_LOG: return logf(x);
    case U_SQRT: return sqrtf(x);
    case U_RSQRT: return rsqrtf(x);
    case U_SQUARE: return x * x;
    case U_TANH: return tanhf(x);
    case U_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case U_ERF: return erff(x);
    case U_RELU: return x < 0.0f ? 0.0f : x;
    case U_SIGN: return x < 0.0f ? -1.0f : (x > 0.0f ? 1.0f : 0.0f);
    case U_COS: return cosf(x);
    case U_SIN: return sinf(x);
    case U_ACOS: return acosf(x);
    case U_ASIN: return asinf(x);
    case U_ATAN: return atanf(x);
    case U_FLOOR: return floorf(x);
    case U_CEIL: return ceilf(x);
    case U_ROUND: return rintf(x);  // half to even, as tfjs
    case U_RECIPROCAL: return 1.0f / x;
    case U_LOG1P: return log1pf(x);
    case U_EXPM1: return expm1f(x);
    case U_SOFTPLUS: return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    case U_STEP: return isnan(x) ? x : (x > 0.0f ? 1.0f : alpha);
    case U_ELU: return x < 0.0f ? expm1f(x) : x;
    case U_RELU6: return fminf(fmaxf(x, 0.0f), 6.0f);
    case U_CLIP: return isnan(x) ? x : fminf(fmaxf(x, alpha), beta);
    case U_LEAKYRELU: return x < 0.0f ? alpha * x : x;
    case U_ISNAN: return isnan(x) ? 1.0f : 0.0f;
    case U_ISINF: return isinf(x) ? 1.0f : 0.0f;
    case U_ISFINITE: return isfinite(x) ? 1.0f : 0.0f;
    case U_LOGICAL_NOT: return x == 0.0f ? 1.0f : 0.0f;
    case U_COSH: return coshf(x);
    case U_SINH: return sinhf(x);
    case U_TAN: return tanf(x);
    case U_ASINH: return asinhf(x);
    case U_ACOSH: return acoshf(x);
    case U_ATANH: return atanhf(x);
    case U_SELU: {
      const float scale = 1.0507009873554804934193349852946f, a = 1.6732632423543772848170429916717f;
      return x < 0.0f ? scale * a * expm1f(x) : scale * x;
    }
    case U_IDENTITY: return x;
    case U_SCALE_SHIFT: return alpha * x + beta;
  }
  return __int_as_float(0x7fc00000);
}

// Integer inputs: exact integer arithmetic where the op is defined on integers, float otherwise.
__device__ __forceinline__ bool unaryIsInt(int op) {
  return op == U_NEG || op == U_ABS || op == U_SQUARE || op == U_SIGN || op == U_RELU || op == U_LOGICAL_NOT ||
         op == U_IDENTITY || op == U_CLIP || op == U_ISNAN || op == U_ISINF || op == U_ISFINITE || op == U_RELU6 ||
         op == U_FLOOR || op == U_CEIL || op == U_ROUND;
}

__device__ __forceinline__ int unaryI(int op, int x, float alpha, float beta) {
  switch (op) {
    case U_NEG: return -x;
    case U_ABS: return x < 0 ? -x : x;
    case U_SQUARE: return x * x;
    case U_SIGN: return x < 0 ? -1 : (x > 0 ? 1 : 0);
    case U_RELU: return x < 0 ? 0 : x;
    case U_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case U_LOGICAL_NOT: return x == 0 ? 1 : 0;
    case U_CLIP: {
      float f = (float)x;
      return f < alpha ? (int)ceilf(alpha) : (f > beta ? (int)floorf(beta) : x);
    }
    case U_ISNAN: return 0;
    case U_ISINF: return 0;
    case U_ISFINITE: return 1;
    default: return x;  // identity, floor, ceil, round
  }
}

template <typename Tin, typename Tout, bool IntIn>
__global__ void unaryKernel(int op, const Tin* __restrict__ x, Tout* __restrict__ y, int64_t n, float alpha, float beta) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    Tin v = x[i];
    if (IntIn && unaryIsInt(op)) {
      y[i] = (Tout)unaryI(op, (int)v, alpha, beta);
    } else {
      y[i] = (Tout)unaryF(op, (float)v, alpha, beta);
    }
  }
}

void unary(int op, DType in, DType out, const void* x, void* y, int64_t n, float alpha, float beta) {
  if (op < 0 || op >= U_COUNT) fail("unary: unknown op code %d", op);
  if (n == 0) return;
  unsigned g = gridFor(n);
  cudaStream_t s = stream();
  if (in == DT_FLOAT32 && out == DT_FLOAT32)
    unaryKernel<float, float, false><<<g, 256, 0, s>>>(op, (const float*)x, (float*)y, n, alpha, beta);
  else if (in == DT_FLOAT32 && out == DT_INT32)
    unaryKernel<float, int, false><<<g, 256, 0, s>>>(op, (const float*)x, (int*)y, n, alpha, beta);
  else if (in == DT_INT32 && out == DT_INT32)
    unaryKernel<int, int, true><<<g, 256, 0, s>>>(op, (const int*)x, (int*)y, n, alpha, beta);
  else
    unaryKernel<int, float, true><<<g, 256, 0, s>>>(op, (const int*)x, (float*)y, n, alpha, beta);
  LAUNCH_CHECK("unary");
}

// ---- binary ------------------------------------------------------------------------------------

__device__ __forceinline__ float binaryF(int op, float a, float b) {
  switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_FLOORDIV: return floorf(a / b);
    case B_MOD: {
      float r = fmodf(a, b);
      return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
    }
    case B_POW: return powf(a, b);
    case B_MAX: return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
    case B_MIN: return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fminf(a, b);
    case B_SQDIFF: return (a - b) * (a - b);
    case B_ATAN2: return atan2f(a, b);
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0.0f) && (b != 0.0f);
    case B_OR: return (a != 0.0f) || (b != 0.0f);
    case B_PRELU: return a < 0.0f ? a * b : a;
    case B_ELU_GRAD: return b < 0.0f ? a * (b + 1.0f) : a;
  }
  return __int_as_float(0x7fc00000);
}

__device__ __forceinline__ int binaryI(int op, int a, int b) {
  switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return b == 0 ? 0 : (int)floorf((float)a / (float)b);
    case B_FLOORDIV: {
      if (b == 0) return 0;
      int q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
      return q;
    }
    case B_MOD: {
      if (b == 0) return 0;
      int r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case B_POW: return (int)rintf(powf((float)a, (float)b));
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    case B_SQDIFF: return (a - b) * (a - b);
    case B_ATAN2: return (int)atan2f((float)a, (float)b);
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0) && (b != 0);
    case B_OR: return (a != 0) || (b != 0);
    case B_PRELU: return a < 0 ? a * b : a;
    case B_ELU_GRAD: return b < 0 ? a * (b + 1) : a;
  }
  return 0;
}

template <typename Tin, typename Tout, bool IntMath>
__global__ void binaryKernel(int op, const Tin* __restrict__ a, const Tin* __restrict__ b, Tout* __restrict__ y,
                             int64_t n, int modeA, int64_t pA, int modeB, int64_t pB, Dims d, Strides sa, Strides sb) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    Tin va = a[operandIndex(modeA, i, pA, d, sa)];
    Tin vb = b[operandIndex(modeB, i, pB, d, sb)];
    if (IntMath)
      y[i] = (Tout)binaryI(op, (int)va, (int)vb);
    else
      y[i] = (Tout)binaryF(op, (float)va, (float)vb);
  }
}

// Same-shape contiguous float operands, four elements per thread with 16-byte accesses.
__global__ void binaryContigF4(int op, const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ y,
                               int64_t n4) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
    float4 u = a[i], v = b[i], r;
    r.x = binaryF(op, u.x, v.x);
    r.y = binaryF(op, u.y, v.y);
    r.z = binaryF(op, u.z, v.z);
    r.w = binaryF(op, u.w, v.w);
    y[i] = r;
  }
}

// Float operands that are each contiguous or a repeated row (bias-like, IX_MOD with a period that
// is a multiple of four): four elements per thread with 16-byte accesses and 32-bit index math.
// binaryF is the same function as on the scalar path, so the results are identical.
__global__ void binaryRowsF4(int op, const float4* __restrict__ a, int32_t periodA, const float4* __restrict__ b, int32_t periodB,
                             float4* __restrict__ y, int32_t n4) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 u = a[periodA ? i % periodA : i], v = b[periodB ? i % periodB : i], r;
    r.x = binaryF(op, u.x, v.x);
    r.y = binaryF(op, u.y, v.y);
    r.z = binaryF(op, u.z, v.z);
    r.w = binaryF(op, u.w, v.w);
    y[i] = r;
  }
}

static int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int k = 0; k < d.rank; ++k) n *= d.size[k];
  return n;
}

static bool aligned16(const void* p) { return ((uintptr_t)p & 15) == 0; }

// The float4 period of an operand read contiguously (0) or as a repeated row, or -1 if neither.
static int64_t rowPeriod4(int mode, int64_t param) {
  if (mode == IX_CONTIG) return 0;
  if (mode == IX_MOD && param % 4 == 0) return param / 4;
  return -1;
}

void binary(int op, DType in, DType out, const void* a, const void* b, void* y, const Dims& d, const Strides& sa,
            const Strides& sb) {
  if (op < 0 || op >= B_COUNT) fail("binary: unknown op code %d", op);
  if (d.rank < 0 || d.rank > MAX_RANK) fail("binary: rank %d outside 0..%d", d.rank, MAX_RANK);
  int64_t n = numel(d);
  if (n == 0) return;
  int64_t pA, pB;
  int mA = indexMode(d, sa, &pA), mB = indexMode(d, sb, &pB);
  cudaStream_t s = stream();
  if (in == DT_FLOAT32 && out == DT_FLOAT32 && mA == IX_CONTIG && mB == IX_CONTIG && n % 4 == 0 && aligned16(a) &&
      aligned16(b) && aligned16(y)) {
    binaryContigF4<<<gridFor(n / 4), 256, 0, s>>>(op, (const float4*)a, (const float4*)b, (float4*)y, n / 4);
    LAUNCH_CHECK("binaryContigF4");
    return;
  }
  if (in == DT_FLOAT32 && out == DT_FLOAT32 && n % 4 == 0 && n < (int64_t(1) << 30) && aligned16(a) && aligned16(b) && aligned16(y)) {
    int64_t qA = rowPeriod4(mA, pA), qB = rowPeriod4(mB, pB);
    if (qA >= 0 && qB >= 0) {
      binaryRowsF4<<<gridFor(n / 4), 256, 0, s>>>(op, (const float4*)a, (int32_t)qA, (const float4*)b, (int32_t)qB, (float4*)y,
                                                   (int32_t)(n / 4));
      LAUNCH_CHECK("binaryRowsF4");
      return;
    }
  }
  unsigned g = gridFor(n);
  bool intMath = in == DT_INT32 && op != B_ATAN2;
  if (in == DT_FLOAT32 && out == DT_FLOAT32)
    binaryKernel<float, float, false><<<g, 256, 0, s>>>(op, (const float*)a, (const float*)b, (float*)y, n, mA, pA, mB, pB, d, sa, sb);
  else if (in == DT_FLOAT32 && out == DT_INT32)
    binaryKernel<float, int, false><<<g, 256, 0, s>>>(op, (const float*)a, (const float*)b, (int*)y, n, mA, pA, mB, pB, d, sa, sb);
  else if (in == DT_INT32 && out == DT_INT32 && intMath)
    binaryKernel<int, int, true><<<g, 256, 0, s>>>(op, (const int*)a, (const int*)b, (int*)y, n, mA, pA, mB, pB, d, sa, sb);
  else if (in == DT_INT32 && out == DT_INT32)
    binaryKernel<int, int, false><<<g, 256, 0, s>>>(op, (const int*)a, (const int*)b, (int*)y, n, mA, pA, mB, pB, d, sa, sb);
  else
    binaryKernel<int, float, false><<<g, 256, 0, s>>>(op, (const int*)a, (const int*)b, (float*)y, n, mA, pA, mB, pB, d, sa, sb);
  LAUNCH_CHECK("binary");
}

// ---- select, cast, fill, range -----------------------------------------------------------------

template <typename T>
__global__ void selectKernel(const int32_t* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b,
                             T* __restrict__ y, int64_t n, int mC, int64_t pC, int mA, int64_t pA, int mB, int64_t pB,
                             Dims d, Strides sc, Strides sa, Strides sb) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    y[i] = c[operandIndex(mC, i, pC, d, sc)] != 0 ? a[operandIndex(mA, i, pA, d, sa)] : b[operandIndex(mB, i, pB, d, sb)];
  }
}

void selectWhere(DType t, const int32_t* cond, const void* a, const void* b, void* y, const Dims& d, const Strides& sc,
                 const Strides& sa, const Strides& sb) {
  int64_t n = numel(d);
  if (n == 0) return;
  int64_t pC, pA, pB;
  int mC = indexMode(d, sc, &pC), mA = indexMode(d, sa, &pA), mB = indexMode(d, sb, &pB);
  unsigned g = gridFor(n);
  if (t == DT_FLOAT32)
    selectKernel<float><<<g, 256, 0, stream()>>>(cond, (const float*)a, (const float*)b, (float*)y, n, mC, pC, mA, pA, mB, pB, d, sc, sa, sb);
  else
    selectKernel<int><<<g, 256, 0, stream()>>>(cond, (const int*)a, (const int*)b, (int*)y, n, mC, pC, mA, pA, mB, pB, d, sc, sa, sb);
  LAUNCH_CHECK("select");
}

template <typename Tin, typename Tout>
__global__ void castKernel(const Tin* __restrict__ x, Tout* __restrict__ y, int64_t n, bool toBool) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    Tin v = x[i];
    // float -> int truncates toward zero, as tfjs's Int32Array conversion does.
    y[i] = toBool ? (Tout)(v != (Tin)0 ? 1 : 0) : (Tout)v;
  }
}

void cast(DType in, DType out, const void* x, void* y, int64_t n, bool toBool) {
  if (n == 0) return;
  unsigned g = gridFor(n);
  cudaStream_t s = stream();
  if (in == DT_FLOAT32 && out == DT_FLOAT32)
    castKernel<float, float><<<g, 256, 0, s>>>((const float*)x, (float*)y, n, toBool);
  else if (in == DT_FLOAT32 && out == DT_INT32)
    castKernel<float, int><<<g, 256, 0, s>>>((const float*)x, (int*)y, n, toBool);
  else if (in == DT_INT32 && out == DT_FLOAT32)
    castKernel<int, float><<<g, 256, 0, s>>>((const int*)x, (float*)y, n, toBool);
  else
    castKernel<int, int><<<g, 256, 0, s>>>((const int*)x, (int*)y, n, toBool);
  LAUNCH_CHECK("cast");
}

template <typename T>
__global__ void fillKernel(T* __restrict__ y, int64_t n, T v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = v;
}

void fill(DType t, void* y, int64_t n, double value) {
  if (n == 0) return;
  if (t == DT_FLOAT32)
    fillKernel<float><<<gridFor(n), 256, 0, stream()>>>((float*)y, n, (float)value);
  else
    fillKernel<int><<<gridFor(n), 256, 0, stream()>>>((int*)y, n, (int)value);
  LAUNCH_CHECK("fill");
}

template <typename T>
__global__ void rangeKernel(T* __restrict__ y, int64_t n, double start, double step) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = (T)(start + step * (double)i);
}

void range(DType t, void* y, int64_t n, double start, double step) {
  if (n == 0) return;
  if (t == DT_FLOAT32)
    rangeKernel<float><<<gridFor(n), 256, 0, stream()>>>((float*)y, n, start, step);
  else
    rangeKernel<int><<<gridFor(n), 256, 0, stream()>>>((int*)y, n, start, step);
  LAUNCH_CHECK("range");
}

}  // namespace angle
