// Caching device allocator. Requests are rounded up to size classes (four per power of two, so
// at most 25% is wasted); a freed block goes to its class's free list and the next request of
// that class takes it without cudaMalloc. All work runs on one stream, so a block freed while
// kernels that use it are still queued can be handed out again at once: anything queued later on
// the stream runs after them.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace angle {

struct MemoryStats {
  size_t inUse;         // bytes in live blocks (class sizes)
  size_t requested;     // bytes asked for by live allocations
  size_t cached;        // bytes in free lists
  size_t peakInUse;
  size_t limit;         // 0 = no limit besides the device
  uint64_t liveBlocks;
  uint64_t cudaMallocs; // calls that reached cudaMalloc
  uint64_t allocations; // all allocations served
};

void* deviceAlloc(size_t bytes);
void deviceFree(void* p);
// Size class of an allocation made for `bytes` (exposed for tests).
size_t sizeClass(size_t bytes);
MemoryStats memoryStats();
// Returns every cached block to the driver (synchronises the device).
void emptyCache();
// A soft cap on inUse + cached (0 removes it); an allocation beyond it fails like a device OOM.
void setMemoryLimit(size_t bytes);

}  // namespace angle
