#include "allocator.h"

#include <unordered_map>
#include <vector>

#include "common.h"

namespace angle {

static std::unordered_map<size_t, std::vector<void*>> g_free;
static std::unordered_map<void*, std::pair<size_t, size_t>> g_live;  // ptr -> (class size, requested)
static MemoryStats g_stats = {};

size_t sizeClass(size_t bytes) {
  if (bytes <= 256) return 256;
  // Four classes per octave: the top three bits after the leading one decide.
  int lead = 63 - __builtin_clzll((unsigned long long)(bytes - 1));
  if (lead < 3) return 256;
  size_t step = (size_t)1 << (lead - 2);
  size_t rounded = ((bytes + step - 1) / step) * step;
  return rounded < 256 ? 256 : rounded;
}

void emptyCache() {
  for (auto& kv : g_free) {
    for (void* p : kv.second) {
      cudaError_t e = cudaFree(p);
      if (e != cudaSuccess) {
        cudaGetLastError();
        fail("cudaFree of a cached block (%zu bytes) failed: %s (%s)", kv.first, cudaGetErrorName(e), cudaGetErrorString(e));
      }
      g_stats.cached -= kv.first;
    }
  }
  g_free.clear();
}

void setMemoryLimit(size_t bytes) { g_stats.limit = bytes; }

static double mib(size_t b) { return (double)b / (1024.0 * 1024.0); }

[[noreturn]] static void outOfMemory(size_t bytes, size_t cls, const char* why) {
  size_t freeB = 0, totalB = 0;
  cudaMemGetInfo(&freeB, &totalB);
  cudaGetLastError();
  fail(
      "CUDA out of memory: tried to allocate %.2f MiB (%zu bytes, class %zu) - %s; "
      "in use by tensors %.2f MiB, cached %.2f MiB, peak %.2f MiB, device free %.2f of %.2f MiB%s",
      mib(bytes), bytes, cls, why, mib(g_stats.inUse), mib(g_stats.cached), mib(g_stats.peakInUse), mib(freeB), mib(totalB),
      g_stats.limit ? " (a memory limit is set)" : "");
}

void* deviceAlloc(size_t bytes) {
  size_t cls = sizeClass(bytes);
  void* p = nullptr;
  auto it = g_free.find(cls);
  if (it != g_free.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    g_stats.cached -= cls;
  } else {
    if (g_stats.limit && g_stats.inUse + g_stats.cached + cls > g_stats.limit) {
      emptyCache();
      if (g_stats.inUse + cls > g_stats.limit) outOfMemory(bytes, cls, "over the memory limit set with setMemoryLimit");
    }
    cudaError_t e = cudaMalloc(&p, cls);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      emptyCache();
      e = cudaMalloc(&p, cls);
      if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        outOfMemory(bytes, cls, "cudaMalloc failed after returning the cache to the driver");
      }
    }
    CUDA_CHECK(e);
    g_stats.cudaMallocs++;
  }
  g_live[p] = {cls, bytes};
  g_stats.inUse += cls;
  g_stats.requested += bytes;
  g_stats.liveBlocks++;
  g_stats.allocations++;
  if (g_stats.inUse > g_stats.peakInUse) g_stats.peakInUse = g_stats.inUse;
  return p;
}

void deviceFree(void* p) {
  auto it = g_live.find(p);
  if (it == g_live.end()) fail("free of %p: not a live block of this allocator (double free?)", p);
  size_t cls = it->second.first;
  g_stats.inUse -= cls;
  g_stats.requested -= it->second.second;
  g_stats.liveBlocks--;
  g_live.erase(it);
  g_free[cls].push_back(p);
  g_stats.cached += cls;
}

MemoryStats memoryStats() { return g_stats; }

}  // namespace angle
