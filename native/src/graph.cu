#include "graph.h"

#include <unordered_map>
#include <vector>

#include "allocator.h"
#include "context.h"

namespace angle {

namespace {

struct Captured {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  uint64_t* seedWord = nullptr;  // device
  GraphInfo info = {};
};

std::unordered_map<uint64_t, Captured> g_graphs;
uint64_t g_nextId = 1;
uint64_t g_capturing = 0;
Captured g_current;
bool g_anySeed = false;
uint64_t g_minSeed = 0, g_maxSeed = 0;

void freeCaptured(Captured& c) {
  if (c.exec) cudaGraphExecDestroy(c.exec);
  if (c.graph) cudaGraphDestroy(c.graph);
  if (c.seedWord) cudaFree(c.seedWord);
  cudaGetLastError();
  c = Captured{};
}

}  // namespace

bool graphCapturing() { return g_capturing != 0; }

void graphBegin() {
  if (g_capturing) fail("graphBegin: graph %llu is being captured already", (unsigned long long)g_capturing);
  // Work queued before the capture must not become part of it, and the seed word is made now
  // (cudaMalloc is not allowed while capturing).
  synchronize();
  g_current = Captured{};
  CUDA_CHECK(cudaMalloc(&g_current.seedWord, sizeof(uint64_t)));
  CUDA_CHECK(cudaMemset(g_current.seedWord, 0, sizeof(uint64_t)));
  g_anySeed = false;
  g_capturing = g_nextId++;
  allocatorBeginCapture(g_capturing);
  cudaError_t e = cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    allocatorReleasePool(g_capturing);
    g_capturing = 0;
    freeCaptured(g_current);
    fail("cudaStreamBeginCapture failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
  }
}

const uint64_t* capturedSeed(uint64_t* seed) {
  if (!g_capturing) return nullptr;
  if (!g_anySeed) {
    g_anySeed = true;
    g_minSeed = g_maxSeed = *seed;
  }
  // Seeds are drawn from a counter that only grows (lib/models), so the first is the smallest.
  if (*seed < g_minSeed) fail("graph capture: seed %llu is below the capture's first seed %llu (seeds must increase)", (unsigned long long)*seed, (unsigned long long)g_minSeed);
  if (*seed > g_maxSeed) g_maxSeed = *seed;
  *seed -= g_minSeed;
  return g_current.seedWord;
}

GraphInfo graphEnd() {
  if (!g_capturing) fail("graphEnd: no capture is in progress");
  uint64_t id = g_capturing;
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream(), &graph);
  allocatorEndCapture();
  g_capturing = 0;
  if (e != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    allocatorReleasePool(id);
    freeCaptured(g_current);
    fail("cudaStreamEndCapture failed: %s (%s): something in the step cannot be captured (a read back, a synchronisation?)",
         cudaGetErrorName(e), cudaGetErrorString(e));
  }
  g_current.graph = graph;
  e = cudaGraphInstantiate(&g_current.exec, graph, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    allocatorReleasePool(id);
    freeCaptured(g_current);
    fail("cudaGraphInstantiate failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
  }
  size_t n = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  size_t kernels = 0;
  if (n > 0) {
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &n));
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType t;
      CUDA_CHECK(cudaGraphNodeGetType(node, &t));
      if (t == cudaGraphNodeTypeKernel) kernels++;
    }
  }
  g_current.info = GraphInfo{id, kernels, n, g_anySeed, g_anySeed ? g_minSeed : 0, g_anySeed ? g_maxSeed - g_minSeed + 1 : 0};
  g_graphs[id] = g_current;
  g_current = Captured{};
  return g_graphs[id].info;
}

void graphAbort() {
  if (!g_capturing) return;
  uint64_t id = g_capturing;
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream(), &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  allocatorEndCapture();
  g_capturing = 0;
  allocatorReleasePool(id);
  freeCaptured(g_current);
}

void graphLaunch(uint64_t id, uint64_t seedBase) {
  if (g_capturing) fail("graphLaunch: a capture is in progress");
  auto it = g_graphs.find(id);
  if (it == g_graphs.end()) fail("graphLaunch: no graph %llu (destroyed, or never captured)", (unsigned long long)id);
  if (it->second.info.seeded) uploadAsync(it->second.seedWord, &seedBase, sizeof(uint64_t));
  CUDA_CHECK(cudaGraphLaunch(it->second.exec, stream()));
}

void graphDestroy(uint64_t id) {
  auto it = g_graphs.find(id);
  if (it == g_graphs.end()) return;
  // Replays still queued read the pool: wait for them before the memory is shared again.
  synchronize();
  freeCaptured(it->second);
  g_graphs.erase(it);
  allocatorReleasePool(id);
}

size_t graphCount() { return g_graphs.size(); }

}  // namespace angle
