// CUDA graphs of a fixed-shape training step: the stream's work between graphBegin and graphEnd
// is recorded (nothing runs), instantiated once, and replayed with one cudaGraphLaunch per step —
// no host work per kernel. What makes a replay correct:
//   - memory: the allocator hands the capture a private pool (allocator.h), so every address the
//     graph reads or writes stays its own until graphDestroy;
//   - host data: uploads may not happen during a capture (the ring buffer they go through is
//     reused): the host uploads into the graph's buffers before it launches (lib/backend/cuda);
//   - randomness: a dropout kernel (dropout, dropout-add, fused attention) captured with seed s draws
//     with *seedBase + (s - first seed of the capture), seedBase a device word the host sets before
//     each launch, so each replay draws new masks exactly as the next eager step would have (its
//     seeds are the captured ones shifted);
//   - no reads back, no synchronisation and no cudaFree while capturing (they fail the capture).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common.h"

namespace angle {

struct GraphInfo {
  uint64_t id;
  size_t kernels;     // kernel nodes in the graph
  size_t nodes;       // all nodes (kernels, memsets, ...)
  bool seeded;        // whether a captured kernel draws random numbers
  uint64_t firstSeed; // the smallest seed captured
  uint64_t seeds;     // largest - smallest + 1
};

void graphBegin();
GraphInfo graphEnd();
// Ends a capture that failed (a kernel refused, or the host gave up), freeing what it held.
void graphAbort();
bool graphCapturing();
// seedBase: the seed that replaces the capture's first seed (ignored if nothing was seeded).
void graphLaunch(uint64_t id, uint64_t seedBase);
void graphDestroy(uint64_t id);
size_t graphCount();

// For kernels that draw random numbers: outside a capture returns nullptr and leaves *seed alone;
// inside one returns the device word to add and turns *seed into its offset from the capture's first.
const uint64_t* capturedSeed(uint64_t* seed);

}  // namespace angle
