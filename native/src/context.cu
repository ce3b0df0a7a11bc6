#include "context.h"
#include "graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mutex>
#include <vector>

namespace angle {

void fail(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw Error(buf);
}

void checkCuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  // Clear a non-sticky error so that the next call does not report it a second time.
  cudaGetLastError();
  fail("%s failed: %s (%s) [%s:%d]", call, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
}

void checkLaunch(const char* kernel, const char* file, int line) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return;
  fail("kernel %s: launch failed: %s (%s) [%s:%d]", kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
}

static DeviceInfo g_info;
static cudaStream_t g_stream = nullptr;
static bool g_ready = false;

bool contextReady() { return g_ready; }

cudaStream_t stream() {
  if (!g_ready) fail("the CUDA context is not initialised (call init() first)");
  return g_stream;
}

int smCount() { return g_info.multiprocessors > 0 ? g_info.multiprocessors : 1; }

// Pinned staging for small uploads: a ring that is reused from its start once every copy queued
// from it has completed (one event wait per ring's worth of uploads).
static const size_t RING_BYTES = 64u << 20;
static const size_t RING_MAX_UPLOAD = 8u << 20;
static char* g_ring = nullptr;
static size_t g_ringHead = 0;
static cudaEvent_t g_ringEvent = nullptr;
static bool g_ringEventRecorded = false;

const DeviceInfo& initContext() {
  if (g_ready) return g_info;
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 1) fail("cudaGetDeviceCount reports no CUDA device");
  int dev = 0;
  CUDA_CHECK(cudaSetDevice(dev));
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  g_info.name = p.name;
  g_info.major = p.major;
  g_info.minor = p.minor;
  g_info.multiprocessors = p.multiProcessorCount;
  g_info.totalMemory = p.totalGlobalMem;
  g_info.device = dev;
  CUDA_CHECK(cudaRuntimeGetVersion(&g_info.runtimeVersion));
  CUDA_CHECK(cudaDriverGetVersion(&g_info.driverVersion));
  CUDA_CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMallocHost((void**)&g_ring, RING_BYTES));
  CUDA_CHECK(cudaEventCreateWithFlags(&g_ringEvent, cudaEventDisableTiming));
  g_ready = true;
  return g_info;
}

void uploadAsync(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  // The ring buffer is reused: a captured copy from it would replay other bytes (graph.h).
  if (graphCapturing()) fail("upload during a graph capture: upload before the capture, or before each launch (lib/backend/cuda defers them)");
  cudaStream_t s = stream();
  if (bytes > RING_MAX_UPLOAD) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  size_t need = (bytes + 255) & ~(size_t)255;
  if (g_ringHead + need > RING_BYTES) {
    // Every copy queued from the ring so far precedes the last recorded event.
    if (g_ringEventRecorded) CUDA_CHECK(cudaEventSynchronize(g_ringEvent));
    g_ringHead = 0;
  }
  char* stage = g_ring + g_ringHead;
  g_ringHead += need;
  memcpy(stage, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, stage, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaEventRecord(g_ringEvent, s));
  g_ringEventRecorded = true;
}

void downloadSync(void* dst, const void* src, size_t bytes) {
  if (graphCapturing()) fail("read back during a graph capture: nothing has run yet (the step reads after graphEnd and the launch)");
  cudaStream_t s = stream();
  if (bytes == 0) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

// Pinned blocks for asynchronous reads, kept for reuse: cudaFreeHost would synchronise the device.
static std::mutex g_pinnedMutex;
static std::vector<std::pair<void*, size_t>> g_pinnedFree;

static void* takePinned(size_t bytes, size_t* got) {
  {
    std::lock_guard<std::mutex> lock(g_pinnedMutex);
    for (size_t i = 0; i < g_pinnedFree.size(); ++i) {
      if (g_pinnedFree[i].second >= bytes && g_pinnedFree[i].second <= 2 * bytes + 4096) {
        void* p = g_pinnedFree[i].first;
        *got = g_pinnedFree[i].second;
        g_pinnedFree.erase(g_pinnedFree.begin() + i);
        return p;
      }
    }
  }
  size_t n = bytes < 4096 ? 4096 : bytes;
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, n));
  *got = n;
  return p;
}

static void givePinned(void* p, size_t n) {
  std::lock_guard<std::mutex> lock(g_pinnedMutex);
  g_pinnedFree.push_back({p, n});
}

PendingRead downloadBegin(const void* src, size_t bytes) {
  if (graphCapturing()) fail("read back during a graph capture: nothing has run yet (the step reads after graphEnd and the launch)");
  cudaStream_t s = stream();
  PendingRead r;
  size_t got = 0;
  r.pinned = takePinned(bytes, &got);
  r.capacity = got;
  r.bytes = bytes;
  cudaError_t e = cudaEventCreateWithFlags(&r.done, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    givePinned(r.pinned, got);
    CUDA_CHECK(e);
  }
  if (bytes > 0) CUDA_CHECK(cudaMemcpyAsync(r.pinned, src, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaEventRecord(r.done, s));
  return r;
}

void downloadWait(const PendingRead& r) { CUDA_CHECK(cudaEventSynchronize(r.done)); }

void downloadFinish(PendingRead& r, void* dst) {
  if (dst && r.bytes > 0) memcpy(dst, r.pinned, r.bytes);
  cudaEventDestroy(r.done);
  givePinned(r.pinned, r.capacity);
  r.pinned = nullptr;
}

void synchronize() {
  if (graphCapturing()) fail("synchronize during a graph capture");
  CUDA_CHECK(cudaStreamSynchronize(stream()));
}

}  // namespace angle
