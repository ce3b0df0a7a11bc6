#include "allocator.h"

#include <unordered_map>
#include <vector>

#include "common.h"

namespace angle {

static std::unordered_map<size_t, std::vector<void*>> g_free;
struct LiveBlock {
  size_t cls;
  size_t requested;
  uint64_t pool;  // 0: shared; else the captured graph that owns it
};
static std::unordered_map<void*, LiveBlock> g_live;
static MemoryStats g_stats = {};

// A captured graph's memory: its free blocks by class, and blocks of others it keeps alive.
struct Pool {
  std::unordered_map<size_t, std::vector<void*>> free;
  std::vector<std::pair<void*, LiveBlock>> retained;
};
static std::unordered_map<uint64_t, Pool> g_pools;
static uint64_t g_capturing = 0;

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
  Pool* pool = g_capturing ? &g_pools[g_capturing] : nullptr;
  auto pit = pool ? pool->free.find(cls) : decltype(Pool::free)::iterator();
  if (pool && pit != pool->free.end() && !pit->second.empty()) {
    // A block this capture freed earlier: stream order makes the reuse safe in the graph too.
    p = pit->second.back();
    pit->second.pop_back();
    g_stats.graphReserved -= cls;
  } else if (it != g_free.end() && !it->second.empty()) {
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
  g_live[p] = LiveBlock{cls, bytes, g_capturing};
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
  LiveBlock b = it->second;
  size_t cls = b.cls;
  g_stats.inUse -= cls;
  g_stats.requested -= b.requested;
  g_stats.liveBlocks--;
  g_live.erase(it);
  if (g_capturing && b.pool != g_capturing) {
    // Read by the graph being captured: kept until that graph is destroyed.
    g_pools[g_capturing].retained.push_back({p, b});
    g_stats.graphReserved += cls;
  } else if (b.pool != 0 && g_pools.count(b.pool)) {
    g_pools[b.pool].free[cls].push_back(p);
    g_stats.graphReserved += cls;
  } else {
    g_free[cls].push_back(p);
    g_stats.cached += cls;
  }
}

void allocatorBeginCapture(uint64_t pool) {
  if (g_capturing) fail("allocator: graph pool %llu is capturing already", (unsigned long long)g_capturing);
  if (pool == 0) fail("allocator: pool 0 is the shared one");
  g_pools[pool];
  g_capturing = pool;
}

void allocatorEndCapture() { g_capturing = 0; }

uint64_t allocatorCapturingPool() { return g_capturing; }

void allocatorReleasePool(uint64_t pool) {
  auto it = g_pools.find(pool);
  if (it == g_pools.end()) return;
  if (g_capturing == pool) g_capturing = 0;
  Pool released = std::move(it->second);
  g_pools.erase(it);
  for (auto& kv : released.free) {
    for (void* p : kv.second) {
      g_stats.graphReserved -= kv.first;
      g_free[kv.first].push_back(p);
      g_stats.cached += kv.first;
    }
  }
  for (auto& r : released.retained) {
    g_stats.graphReserved -= r.second.cls;
    // Owned by another graph still alive: back to its pool; else shared.
    if (r.second.pool != 0 && g_pools.count(r.second.pool)) {
      g_pools[r.second.pool].free[r.second.cls].push_back(r.first);
      g_stats.graphReserved += r.second.cls;
    } else {
      g_free[r.second.cls].push_back(r.first);
      g_stats.cached += r.second.cls;
    }
  }
  // Live blocks the pool allocated (tensors still held) become shared: freed later, they go to g_free.
  for (auto& kv : g_live)
    if (kv.second.pool == pool) kv.second.pool = 0;
}

MemoryStats memoryStats() { return g_stats; }

}  // namespace angle
