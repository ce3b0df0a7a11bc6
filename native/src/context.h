// The device context: which GPU, the one stream, and host<->device transfers that never stall the
// stream for small uploads.
#pragma once

#include <stddef.h>
#include <string>

#include "common.h"

namespace angle {

struct DeviceInfo {
  std::string name;
  int major, minor;
  int multiprocessors;
  size_t totalMemory;
  int runtimeVersion, driverVersion;
  int device;
};

// Selects the device (CUDA_VISIBLE_DEVICES decides which is 0), creates the stream. Idempotent.
const DeviceInfo& initContext();
bool contextReady();

// Queues a copy of `bytes` host bytes to device `dst`. Small uploads go through a pinned ring
// buffer (copied there by the CPU, then an asynchronous DMA), so they do not synchronise the
// stream as a copy from pageable memory would; large ones copy directly.
void uploadAsync(void* dst, const void* src, size_t bytes);

// Waits for all queued work, then copies device `src` into host `dst`.
void downloadSync(void* dst, const void* src, size_t bytes);

// Asynchronous download: the copy into pinned memory is queued now (so later kernels may reuse
// `src`), `wait` blocks (on any thread) until it landed, `finish` copies it out and releases it.
struct PendingRead {
  void* pinned;
  size_t capacity;  // of the pooled pinned block
  size_t bytes;     // asked for
  cudaEvent_t done;
};
PendingRead downloadBegin(const void* src, size_t bytes);
void downloadWait(const PendingRead& r);
void downloadFinish(PendingRead& r, void* dst);

// Waits for the stream and reports any fault of earlier asynchronous work.
void synchronize();

}  // namespace angle
