// N-API surface of the addon: every function takes plain numbers, arrays of numbers and typed
// arrays, and device buffers travel to JavaScript as numbers (their addresses, exact in a double
// below 2^53). Each binding catches the C++ exception of a failed call and throws it as a
// JavaScript Error, so a CUDA or cuBLAS failure always reaches the caller with its message.
#include <node_api.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "allocator.h"
#include "attention.h"
#include "common.h"
#include "context.h"
#include "elementwise.h"
#include "fused.h"
#include "graph.h"
#include "layout.h"
#include "matmul.h"
#include "reduce.h"

using namespace angle;

namespace {

struct Args {
  napi_env env;
  const char* fn;
  size_t argc = 24;
  napi_value argv[24];
  napi_value self;

  Args(napi_env e, napi_callback_info info, const char* name) : env(e), fn(name) {
    if (napi_get_cb_info(env, info, &argc, argv, &self, nullptr) != napi_ok) fail("%s: cannot read the arguments", fn);
  }

  napi_value at(size_t i) const {
    if (i >= argc) fail("%s: missing argument %zu", fn, i);
    return argv[i];
  }

  double num(size_t i) const {
    double v;
    if (napi_get_value_double(env, at(i), &v) != napi_ok) fail("%s: argument %zu must be a number", fn, i);
    return v;
  }

  int64_t i64(size_t i) const {
    double v = num(i);
    if (v != (double)(int64_t)v) fail("%s: argument %zu must be an integer, got %g", fn, i, v);
    return (int64_t)v;
  }

  int i32(size_t i) const { return (int)i64(i); }

  bool flag(size_t i) const {
    bool b;
    if (napi_get_value_bool(env, at(i), &b) != napi_ok) fail("%s: argument %zu must be a boolean", fn, i);
    return b;
  }

  void* ptr(size_t i) const {
    double v = num(i);
    if (v <= 0 || v != (double)(uint64_t)v) fail("%s: argument %zu is not a device buffer address (%g)", fn, i, v);
    return (void*)(uintptr_t)(uint64_t)v;
  }

  std::vector<int64_t> list(size_t i) const {
    bool isArray = false;
    napi_value a = at(i);
    if (napi_is_array(env, a, &isArray) != napi_ok || !isArray) fail("%s: argument %zu must be an array of numbers", fn, i);
    uint32_t n = 0;
    napi_get_array_length(env, a, &n);
    std::vector<int64_t> out(n);
    for (uint32_t k = 0; k < n; ++k) {
      napi_value e;
      double v;
      if (napi_get_element(env, a, k, &e) != napi_ok || napi_get_value_double(env, e, &v) != napi_ok)
        fail("%s: argument %zu[%u] must be a number", fn, i, k);
      out[k] = (int64_t)v;
    }
    return out;
  }

  Dims dims(size_t i) const {
    std::vector<int64_t> v = list(i);
    if (v.size() > (size_t)MAX_RANK) fail("%s: rank %zu exceeds the supported %d", fn, v.size(), MAX_RANK);
    Dims d;
    d.rank = (int)v.size();
    for (int k = 0; k < MAX_RANK; ++k) d.size[k] = k < d.rank ? v[k] : 1;
    return d;
  }

  Strides strides(size_t i, int rank) const {
    std::vector<int64_t> v = list(i);
    if ((int)v.size() != rank) fail("%s: argument %zu has %zu strides for rank %d", fn, i, v.size(), rank);
    Strides s;
    for (int k = 0; k < MAX_RANK; ++k) s.s[k] = k < rank ? v[k] : 0;
    return s;
  }

  // Data pointer and byte length of a TypedArray argument.
  void* typed(size_t i, size_t* bytes) const {
    bool is = false;
    napi_value v = at(i);
    if (napi_is_typedarray(env, v, &is) != napi_ok || !is) fail("%s: argument %zu must be a TypedArray", fn, i);
    napi_typedarray_type type;
    size_t length;
    void* data;
    napi_value ab;
    size_t offset;
    napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &offset);
    size_t el = 1;
    switch (type) {
      case napi_int16_array:
      case napi_uint16_array: el = 2; break;
      case napi_int32_array:
      case napi_uint32_array:
      case napi_float32_array: el = 4; break;
      case napi_float64_array:
      case napi_bigint64_array:
      case napi_biguint64_array: el = 8; break;
      default: el = 1;
    }
    *bytes = length * el;
    return data;
  }
};

napi_value undefinedValue(napi_env env) {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

napi_value numberValue(napi_env env, double v) {
  napi_value r;
  napi_create_double(env, v, &r);
  return r;
}

void setNumber(napi_env env, napi_value obj, const char* key, double v) { napi_set_named_property(env, obj, key, numberValue(env, v)); }

void setString(napi_env env, napi_value obj, const char* key, const std::string& s) {
  napi_value v;
  napi_create_string_utf8(env, s.c_str(), s.size(), &v);
  napi_set_named_property(env, obj, key, v);
}

DType dtypeArg(const Args& a, size_t i) {
  int d = a.i32(i);
  if (d != DT_FLOAT32 && d != DT_INT32) fail("%s: unknown dtype code %d", a.fn, d);
  return (DType)d;
}

template <typename F>
napi_value guarded(napi_env env, napi_callback_info info, const char* name, F body) {
  try {
    Args a(env, info, name);
    return body(a);
  } catch (const std::exception& e) {
    std::string msg = std::string("cuda backend: ") + name + ": " + e.what();
    napi_throw_error(env, "ANGLE_CUDA_ERROR", msg.c_str());
    return nullptr;
  }
}

#define FN(name) napi_value js_##name(napi_env env, napi_callback_info info) { return guarded(env, info, #name, [&](Args& a) -> napi_value
#define END ); }

// ---- context and memory ------------------------------------------------------------------------

FN(init) {
  const DeviceInfo& d = initContext();
  napi_value o;
  napi_create_object(env, &o);
  setString(env, o, "name", d.name);
  setString(env, o, "computeCapability", std::to_string(d.major) + "." + std::to_string(d.minor));
  setNumber(env, o, "multiprocessors", d.multiprocessors);
  setNumber(env, o, "totalMemory", (double)d.totalMemory);
  setNumber(env, o, "runtimeVersion", d.runtimeVersion);
  setNumber(env, o, "driverVersion", d.driverVersion);
  setString(env, o, "cublasLtVersion", blasVersion());
  (void)a;
  return o;
} END

FN(malloc) {
  int64_t bytes = a.i64(0);
  if (bytes < 0) fail("negative size %lld", (long long)bytes);
  void* p = deviceAlloc((size_t)(bytes > 0 ? bytes : 4));
  return numberValue(env, (double)(uintptr_t)p);
} END

FN(free) {
  deviceFree(a.ptr(0));
  return undefinedValue(env);
} END

FN(memoryStats) {
  MemoryStats s = memoryStats();
  napi_value o;
  napi_create_object(env, &o);
  setNumber(env, o, "inUse", (double)s.inUse);
  setNumber(env, o, "requested", (double)s.requested);
  setNumber(env, o, "cached", (double)s.cached);
  setNumber(env, o, "peakInUse", (double)s.peakInUse);
  setNumber(env, o, "limit", (double)s.limit);
  setNumber(env, o, "liveBlocks", (double)s.liveBlocks);
  setNumber(env, o, "cudaMallocs", (double)s.cudaMallocs);
  setNumber(env, o, "allocations", (double)s.allocations);
  setNumber(env, o, "graphReserved", (double)s.graphReserved);
  setNumber(env, o, "graphs", (double)graphCount());
  setNumber(env, o, "matmulPlans", (double)matmulPlanCount());
  size_t freeB = 0, totalB = 0;
  if (contextReady() && cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) {
    setNumber(env, o, "deviceFree", (double)freeB);
    setNumber(env, o, "deviceTotal", (double)totalB);
  }
  cudaGetLastError();
  (void)a;
  return o;
} END

FN(emptyCache) {
  synchronize();
  emptyCache();
  (void)a;
  return undefinedValue(env);
} END

FN(setMemoryLimit) {
  setMemoryLimit((size_t)a.i64(0));
  return undefinedValue(env);
} END

FN(sizeClass) { return numberValue(env, (double)sizeClass((size_t)a.i64(0))); } END

FN(upload) {
  size_t bytes;
  void* src = a.typed(1, &bytes);
  uploadAsync(a.ptr(0), src, bytes);
  return undefinedValue(env);
} END

FN(readSync) {
  size_t bytes;
  void* dst = a.typed(1, &bytes);
  downloadSync(dst, a.ptr(0), bytes);
  return undefinedValue(env);
} END

FN(sync) {
  synchronize();
  (void)a;
  return undefinedValue(env);
} END

// Asynchronous read: the device-to-pinned copy is queued at once; a worker thread waits for it;
// the completion (main thread) copies into the TypedArray and settles the promise.
struct ReadJob {
  PendingRead pending;
  napi_ref target = nullptr;
  napi_deferred deferred = nullptr;
  napi_async_work work = nullptr;
  std::string error;
};

void readExecute(napi_env, void* data) {
  ReadJob* j = (ReadJob*)data;
  try {
    downloadWait(j->pending);
  } catch (const std::exception& e) {
    j->error = e.what();
  }
}

void readComplete(napi_env env, napi_status status, void* data) {
  ReadJob* j = (ReadJob*)data;
  napi_value target = nullptr;
  napi_get_reference_value(env, j->target, &target);
  void* dst = nullptr;
  if (target) {
    napi_typedarray_type type;
    size_t length;
    napi_value ab;
    size_t offset;
    napi_get_typedarray_info(env, target, &type, &length, &dst, &ab, &offset);
  }
  if (status != napi_ok && j->error.empty()) j->error = "the asynchronous read was cancelled";
  try {
    downloadFinish(j->pending, j->error.empty() ? dst : nullptr);
  } catch (const std::exception& e) {
    if (j->error.empty()) j->error = e.what();
  }
  if (j->error.empty()) {
    napi_resolve_deferred(env, j->deferred, target);
  } else {
    napi_value msg, err;
    std::string m = "cuda backend: read: " + j->error;
    napi_create_string_utf8(env, m.c_str(), m.size(), &msg);
    napi_create_error(env, nullptr, msg, &err);
    napi_reject_deferred(env, j->deferred, err);
  }
  napi_delete_reference(env, j->target);
  napi_delete_async_work(env, j->work);
  delete j;
}

FN(read) {
  size_t bytes;
  a.typed(1, &bytes);
  void* src = a.ptr(0);
  ReadJob* j = new ReadJob();
  napi_value promise;
  try {
    j->pending = downloadBegin(src, bytes);
  } catch (...) {
    delete j;
    throw;
  }
  napi_create_promise(env, &j->deferred, &promise);
  napi_create_reference(env, a.at(1), 1, &j->target);
  napi_value name;
  napi_create_string_utf8(env, "angle_cuda_read", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, nullptr, name, readExecute, readComplete, j, &j->work) != napi_ok ||
      napi_queue_async_work(env, j->work) != napi_ok) {
    fail("napi_create_async_work/napi_queue_async_work failed");
  }
  return promise;
} END

// ---- elementwise -------------------------------------------------------------------------------

FN(unary) {
  unary(a.i32(0), dtypeArg(a, 1), dtypeArg(a, 2), a.ptr(3), a.ptr(4), a.i64(5), (float)a.num(6), (float)a.num(7));
  return undefinedValue(env);
} END

FN(binary) {
  Dims d = a.dims(5);
  binary(a.i32(0), dtypeArg(a, 1), dtypeArg(a, 2), a.ptr(3), a.ptr(4), a.ptr(8), d, a.strides(6, d.rank), a.strides(7, d.rank));
  return undefinedValue(env);
} END

FN(select) {
  // (dtype, cond, a, b, y, dims, condStrides, aStrides, bStrides)
  Dims d = a.dims(5);
  selectWhere(dtypeArg(a, 0), (const int32_t*)a.ptr(1), a.ptr(2), a.ptr(3), a.ptr(4), d, a.strides(6, d.rank), a.strides(7, d.rank),
              a.strides(8, d.rank));
  return undefinedValue(env);
} END

FN(cast) {
  cast(dtypeArg(a, 0), dtypeArg(a, 1), a.ptr(2), a.ptr(3), a.i64(4), a.flag(5));
  return undefinedValue(env);
} END

FN(fill) {
  fill(dtypeArg(a, 0), a.ptr(1), a.i64(2), a.num(3));
  return undefinedValue(env);
} END

FN(range) {
  range(dtypeArg(a, 0), a.ptr(1), a.i64(2), a.num(3), a.num(4));
  return undefinedValue(env);
} END

// ---- reductions --------------------------------------------------------------------------------

FN(reduce) {
  reduce3(a.i32(0), dtypeArg(a, 1), a.ptr(2), a.ptr(3), a.i64(4), a.i64(5), a.i64(6));
  return undefinedValue(env);
} END

FN(softmax) {
  softmaxRows((const float*)a.ptr(0), (float*)a.ptr(1), a.i64(2), a.i64(3), a.flag(4));
  return undefinedValue(env);
} END

FN(topk) {
  topkRows(dtypeArg(a, 0), a.ptr(1), a.ptr(2), (int32_t*)a.ptr(3), a.i64(4), a.i64(5), a.i64(6));
  return undefinedValue(env);
} END

FN(cumsum) {
  cumsum(dtypeArg(a, 0), a.ptr(1), a.ptr(2), a.i64(3), a.i64(4), a.i64(5), a.flag(6), a.flag(7));
  return undefinedValue(env);
} END

// ---- layout ------------------------------------------------------------------------------------

FN(copyStrided) {
  Dims d = a.dims(2);
  copyStrided(a.ptr(0), a.ptr(1), d, a.strides(3, d.rank), a.i64(4));
  return undefinedValue(env);
} END

FN(transposeBatched) {
  transposeBatched(a.ptr(0), a.ptr(1), a.i64(2), a.i64(3), a.i64(4));
  return undefinedValue(env);
} END

FN(copy2d) {
  // (dst, dstPitch, dstOffset, src, srcPitch, srcOffset, width, rows), all in 4-byte words
  char* dst = (char*)a.ptr(0) + a.i64(2) * 4;
  const char* src = (const char*)a.ptr(3) + a.i64(5) * 4;
  int64_t width = a.i64(6), rows = a.i64(7);
  if (width > 0 && rows > 0)
    CUDA_CHECK(cudaMemcpy2DAsync(dst, (size_t)a.i64(1) * 4, src, (size_t)a.i64(4) * 4, (size_t)width * 4, (size_t)rows,
                                 cudaMemcpyDeviceToDevice, stream()));
  return undefinedValue(env);
} END

FN(pad) {
  Dims od = a.dims(3), id = a.dims(4);
  pad(dtypeArg(a, 0), a.ptr(1), a.ptr(2), od, id, a.strides(5, od.rank), a.num(6));
  return undefinedValue(env);
} END

FN(tile) {
  tile(a.ptr(0), a.ptr(1), a.dims(2), a.dims(3));
  return undefinedValue(env);
} END

FN(gather) {
  gather(a.ptr(0), (const int32_t*)a.ptr(1), a.ptr(2), a.i64(3), a.i64(4), a.i64(5), a.i64(6), a.i64(7));
  return undefinedValue(env);
} END

FN(segmentSum) {
  unsortedSegmentSum(dtypeArg(a, 0), a.ptr(1), (const int32_t*)a.ptr(2), a.ptr(3), a.i64(4), a.i64(5), a.i64(6));
  return undefinedValue(env);
} END

FN(oneHot) {
  oneHot((const int32_t*)a.ptr(0), (float*)a.ptr(1), a.i64(2), a.i64(3), (float)a.num(4), (float)a.num(5));
  return undefinedValue(env);
} END

FN(gatherNd) {
  // (x, idx, y, numSlices, sliceRank, sliceSize, strides[], leading[])
  int rank = a.i32(4);
  gatherNd(a.ptr(0), (const int32_t*)a.ptr(1), a.ptr(2), a.i64(3), rank, a.i64(5), a.strides(6, rank), a.dims(7));
  return undefinedValue(env);
} END

FN(scatterNd) {
  // (dtype, idx, updates, y, numSlices, sliceRank, sliceSize, strides[], leading[], outSize)
  int rank = a.i32(5);
  scatterNd(dtypeArg(a, 0), (const int32_t*)a.ptr(1), a.ptr(2), a.ptr(3), a.i64(4), rank, a.i64(6), a.strides(7, rank), a.dims(8),
            a.i64(9));
  return undefinedValue(env);
} END

// ---- matmul and fused ops ----------------------------------------------------------------------

FN(matmul) {
  matmul((const float*)a.ptr(0), (const float*)a.ptr(1), (float*)a.ptr(2), a.i64(3), a.i64(4), a.i64(5), a.i64(6), a.flag(7), a.flag(8),
         a.i64(9), a.i64(10), a.i32(11));
  return undefinedValue(env);
} END

FN(layerNorm) {
  layerNormForward((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), (float*)a.ptr(3), (float*)a.ptr(4),
                   (float*)a.ptr(5), a.i64(6), a.i64(7), (float)a.num(8));
  return undefinedValue(env);
} END

FN(layerNormGrad) {
  layerNormBackward((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), (const float*)a.ptr(3),
                    (const float*)a.ptr(4), (float*)a.ptr(5), (float*)a.ptr(6), (float*)a.ptr(7), a.i64(8), a.i64(9));
  return undefinedValue(env);
} END

FN(gelu) {
  geluForward((const float*)a.ptr(0), (float*)a.ptr(1), a.i64(2));
  return undefinedValue(env);
} END

FN(geluGrad) {
  geluBackward((const float*)a.ptr(0), (const float*)a.ptr(1), (float*)a.ptr(2), a.i64(3));
  return undefinedValue(env);
} END

FN(addLayerNorm) {
  // (a, b, u, gamma, beta, y, mean, rstd, rows, cols, eps, rate, seed)
  addLayerNormForward((const float*)a.ptr(0), (const float*)a.ptr(1), (float*)a.ptr(2), (const float*)a.ptr(3), (const float*)a.ptr(4),
                      (float*)a.ptr(5), (float*)a.ptr(6), (float*)a.ptr(7), a.i64(8), a.i64(9), (float)a.num(10), (float)a.num(11),
                      (uint64_t)a.i64(12));
  return undefinedValue(env);
} END

FN(biasGelu) {
  // (x, bias, y, rows, cols)
  biasGeluForward((const float*)a.ptr(0), (const float*)a.ptr(1), (float*)a.ptr(2), a.i64(3), a.i64(4));
  return undefinedValue(env);
} END

FN(biasGeluGrad) {
  // (dy, x, bias, du, rows, cols)
  biasGeluBackward((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), (float*)a.ptr(3), a.i64(4), a.i64(5));
  return undefinedValue(env);
} END

FN(adamW) {
  adamW((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), (const float*)a.ptr(3), (float*)a.ptr(4),
        (float*)a.ptr(5), (float*)a.ptr(6), a.i64(7), (float)a.num(8), (float)a.num(9), (float)a.num(10), (float)a.num(11),
        (float)a.num(12), (float)a.num(13), (float)a.num(14));
  return undefinedValue(env);
} END

FN(adamWMulti) {
  // (params[], grads[], m[], v[], sizes[], hyper, beta1, beta2, eps) -> launches
  std::vector<int64_t> p = a.list(0), g = a.list(1), m = a.list(2), v = a.list(3), n = a.list(4);
  size_t count = p.size();
  if (g.size() != count || m.size() != count || v.size() != count || n.size() != count)
    fail("adamWMulti: %zu params, %zu grads, %zu first and %zu second moments, %zu sizes: expected as many of each", count, g.size(),
         m.size(), v.size(), n.size());
  std::vector<float*> pp(count), mp(count), vp(count);
  std::vector<const float*> gp(count);
  for (size_t k = 0; k < count; ++k) {
    if (p[k] <= 0 || g[k] <= 0 || m[k] <= 0 || v[k] <= 0) fail("adamWMulti: parameter %zu has a null device address", k);
    pp[k] = (float*)(uintptr_t)p[k];
    gp[k] = (const float*)(uintptr_t)g[k];
    mp[k] = (float*)(uintptr_t)m[k];
    vp[k] = (float*)(uintptr_t)v[k];
  }
  int launches = adamWMulti(pp.data(), gp.data(), mp.data(), vp.data(), n.data(), (int64_t)count, (const float*)a.ptr(5),
                            (float)a.num(6), (float)a.num(7), (float)a.num(8));
  napi_value r;
  napi_create_double(env, launches, &r);
  return r;
} END

FN(graphBegin) {
  graphBegin();
  return undefinedValue(env);
} END

FN(graphEnd) {
  GraphInfo g = graphEnd();
  napi_value o;
  napi_create_object(env, &o);
  setNumber(env, o, "id", (double)g.id);
  setNumber(env, o, "kernels", (double)g.kernels);
  setNumber(env, o, "nodes", (double)g.nodes);
  setNumber(env, o, "firstSeed", (double)g.firstSeed);
  setNumber(env, o, "seeds", (double)g.seeds);
  return o;
} END

FN(graphAbort) {
  graphAbort();
  return undefinedValue(env);
} END

FN(graphLaunch) {
  graphLaunch((uint64_t)a.i64(0), (uint64_t)a.i64(1));
  return undefinedValue(env);
} END

FN(graphDestroy) {
  graphDestroy((uint64_t)a.i64(0));
  return undefinedValue(env);
} END

FN(dropout) {
  dropout((const float*)a.ptr(0), (float*)a.ptr(1), a.i64(2), (float)a.num(3), (uint64_t)a.i64(4));
  return undefinedValue(env);
} END

FN(dropoutAdd) {
  // (x, residual, y, n, rate, seed)
  dropoutAdd((const float*)a.ptr(0), (const float*)a.ptr(1), (float*)a.ptr(2), a.i64(3), (float)a.num(4), (uint64_t)a.i64(5));
  return undefinedValue(env);
} END

FN(randomUniform) {
  randomUniform((float*)a.ptr(0), a.i64(1), (uint64_t)a.i64(2), (float)a.num(3), (float)a.num(4));
  return undefinedValue(env);
} END

FN(randomNormal) {
  randomNormal((float*)a.ptr(0), a.i64(1), (uint64_t)a.i64(2), (float)a.num(3), (float)a.num(4));
  return undefinedValue(env);
} END

// ---- fused attention (attention.h) ----------------------------------------------------------------

// (…, B, H, Hkv, T, S, D, maskB, maskT, scale, rate, seed) starting at argument `i`; mask address 0 = no mask.
AttentionShape attentionShapeArg(const Args& a, size_t i) {
  return AttentionShape{a.i64(i),     a.i64(i + 1),        a.i64(i + 2),         a.i64(i + 3),        a.i64(i + 4), a.i64(i + 5),
                        a.i64(i + 6), a.i64(i + 7),        (float)a.num(i + 8),  (float)a.num(i + 9), (uint64_t)a.i64(i + 10)};
}

const float* maskArg(const Args& a, size_t i) { return a.num(i) == 0 ? nullptr : (const float*)a.ptr(i); }

FN(attentionForward) {
  // (q, k, v, mask|0, out, m, l, shape…)
  attentionForward((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), maskArg(a, 3), (float*)a.ptr(4),
                   (float*)a.ptr(5), (float*)a.ptr(6), attentionShapeArg(a, 7));
  return undefinedValue(env);
} END

FN(attentionBackward) {
  // (q, k, v, mask|0, out, dout, m, l, rowDot, dq, dk, dv, shape…)
  attentionBackward((const float*)a.ptr(0), (const float*)a.ptr(1), (const float*)a.ptr(2), maskArg(a, 3), (const float*)a.ptr(4),
                    (const float*)a.ptr(5), (const float*)a.ptr(6), (const float*)a.ptr(7), (float*)a.ptr(8), (float*)a.ptr(9),
                    (float*)a.ptr(10), (float*)a.ptr(11), attentionShapeArg(a, 12));
  return undefinedValue(env);
} END

#define EXPORT(name) {#name, nullptr, js_##name, nullptr, nullptr, nullptr, napi_default, nullptr}

napi_value moduleInit(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      EXPORT(init),      EXPORT(malloc),      EXPORT(free),       EXPORT(memoryStats),   EXPORT(emptyCache),
      EXPORT(setMemoryLimit), EXPORT(sizeClass), EXPORT(upload),  EXPORT(readSync),      EXPORT(read),
      EXPORT(sync),      EXPORT(unary),       EXPORT(binary),     EXPORT(select),        EXPORT(cast),
      EXPORT(fill),      EXPORT(range),       EXPORT(reduce),     EXPORT(softmax),       EXPORT(topk),
      EXPORT(cumsum),    EXPORT(copyStrided), EXPORT(transposeBatched), EXPORT(copy2d),  EXPORT(pad),
      EXPORT(tile),      EXPORT(gather),      EXPORT(segmentSum), EXPORT(oneHot),        EXPORT(gatherNd),
      EXPORT(scatterNd), EXPORT(matmul),      EXPORT(layerNorm),  EXPORT(layerNormGrad), EXPORT(gelu),
      EXPORT(geluGrad),  EXPORT(adamW),       EXPORT(dropout),    EXPORT(randomUniform), EXPORT(randomNormal),
      EXPORT(attentionForward), EXPORT(attentionBackward), EXPORT(adamWMulti), EXPORT(graphBegin), EXPORT(graphEnd),
      EXPORT(graphAbort), EXPORT(graphLaunch), EXPORT(graphDestroy), EXPORT(dropoutAdd),
      EXPORT(biasGelu), EXPORT(biasGeluGrad), EXPORT(addLayerNorm),
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, moduleInit)
