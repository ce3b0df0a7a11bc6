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
  size_t graphReserved; // bytes in free blocks kept for captured CUDA graphs (graph.cu), not reusable by others
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

// CUDA graph capture (graph.cu). A replayed graph reads and writes the addresses it was captured
// with, so while pool `pool` captures: every new block belongs to it; a block that belongs to it
// and is freed (during or after the capture) goes to the pool's own free list, which only later
// allocations of the same capture use; and a block of anyone else freed during the capture is
// retained by the pool (the graph still reads it when replayed). Nothing of a pool reaches the
// shared free lists until allocatorReleasePool (the graph was destroyed).
void allocatorBeginCapture(uint64_t pool);
void allocatorEndCapture();
void allocatorReleasePool(uint64_t pool);
// The pool capturing now (0: none).
uint64_t allocatorCapturingPool();

}  // namespace angle
