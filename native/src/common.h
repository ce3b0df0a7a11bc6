// Shared by every translation unit of the addon: error reporting, dtypes, the one stream, and the
// small by-value structs that carry shapes and strides to kernels.
//
// Errors are C++ exceptions (angle::Error) carrying a message that names the CUDA call that
// failed; addon.cu turns each into a JavaScript exception at the N-API boundary, so no error is
// ever only printed.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdexcept>
#include <string>

namespace angle {

struct Error : std::runtime_error {
  explicit Error(const std::string& m) : std::runtime_error(m) {}
};

[[noreturn]] void fail(const char* fmt, ...);

// Throws when `e` is not cudaSuccess, naming the call and where it was made.
void checkCuda(cudaError_t e, const char* call, const char* file, int line);

// After a kernel launch: configuration errors show at once, faults of earlier asynchronous work
// show here too (sticky), named after the launch that observed them.
void checkLaunch(const char* kernel, const char* file, int line);

}  // namespace angle

#define CUDA_CHECK(call) ::angle::checkCuda((call), #call, __FILE__, __LINE__)
#define LAUNCH_CHECK(name) ::angle::checkLaunch((name), __FILE__, __LINE__)

namespace angle {

// Element types on the device. bool tensors are stored as int32 (0/1) so that every integer
// kernel serves them.
enum DType : int { DT_FLOAT32 = 0, DT_INT32 = 1 };

constexpr int MAX_RANK = 6;

// An N-d index space (the output's) and, per operand, element strides into that operand
// (0 along broadcast dimensions, negative for reversed views). Passed to kernels by value.
struct Dims {
  int rank;
  int64_t size[MAX_RANK];
};

struct Strides {
  int64_t s[MAX_RANK];
};

// The stream every kernel, copy and cuBLASLt call of the addon is queued on.
cudaStream_t stream();

// Number of multiprocessors, for grid sizing.
int smCount();

// Blocks for a grid-stride loop over n items with `threads` per block.
inline unsigned gridFor(int64_t n, int threads = 256) {
  int64_t b = (n + threads - 1) / threads;
  int64_t cap = (int64_t)smCount() * 32;
  if (b > cap) b = cap;
  if (b < 1) b = 1;
  return (unsigned)b;
}

// Offset of linear index `i` (in the row-major order of `d`) under strides `st`.
__host__ __device__ inline int64_t stridedOffset(int64_t i, const Dims& d, const Strides& st) {
  int64_t off = 0;
  for (int k = d.rank - 1; k >= 0; --k) {
    int64_t n = d.size[k];
    int64_t q = i / n;
    off += (i - q * n) * st.s[k];
    i = q;
  }
  return off;
}

}  // namespace angle
