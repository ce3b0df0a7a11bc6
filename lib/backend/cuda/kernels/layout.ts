/**
 * Shape and data-movement kernels: Reshape/Identity/ExpandDims (shared buffers),
 * Transpose, Slice, StridedSlice, Concat, Pack, Unpack, SplitV, PadV2, Tile, Reverse, GatherV2,
 * GatherNd, ScatterNd, UnsortedSegmentSum, OneHot.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CudaBackend } from '../backend.js';
import { dtCode } from '../backend.js';
import { contiguousStrides, sizeOf } from '../shapes.js';
import { attr, castTo, copyOf, cudaOf, input, reshapeTo, stridedCopy, transposeImpl, type CudaKernel, type Info } from './core.js';

function sliceImpl(b: CudaBackend, x: Info, begin: number[], size: number[]): Info {
  const strides = contiguousStrides(x.shape);
  const offset = begin.reduce((s, v, k) => s + v * strides[k], 0);
  return stridedCopy(b, x, size, strides, offset);
}

/** Copies `xs` (all of one dtype) side by side along `axis` into one new tensor. */
function concatImpl(b: CudaBackend, xs: Info[], axis: number, outShape: number[]): Info {
  const dtype = xs[0].dtype;
  const out = b.makeTensorInfo(outShape, dtype);
  const outer = sizeOf(outShape.slice(0, axis));
  const pitch = sizeOf(outShape.slice(axis));
  let col = 0;
  for (const x of xs) {
    const width = sizeOf(x.shape.slice(axis));
    if (width > 0 && outer > 0) b.addon.copy2d(b.ptr(out), pitch, col, b.ptr(x), width, 0, width, outer);
    col += width;
  }
  return out;
}

/** Pieces of x along `axis` with the given sizes. */
function splitImpl(b: CudaBackend, x: Info, sizes: number[], axis: number): Info[] {
  const outer = sizeOf(x.shape.slice(0, axis));
  const pitch = sizeOf(x.shape.slice(axis));
  const inner = sizeOf(x.shape.slice(axis + 1));
  let col = 0;
  return sizes.map((s) => {
    const shape = x.shape.slice();
    shape[axis] = s;
    const out = b.makeTensorInfo(shape, x.dtype);
    const width = s * inner;
    if (width > 0 && outer > 0) b.addon.copy2d(b.ptr(out), width, 0, b.ptr(x), pitch, col, width, outer);
    col += width;
    return out;
  });
}

export const layoutKernels: CudaKernel[] = [
  { kernelName: tf.Reshape, kernelFunc: (a) => reshapeTo(cudaOf(a), input(a, 'x'), attr<number[]>(a, 'shape')) },
  { kernelName: tf.Identity, kernelFunc: (a) => cudaOf(a).share(input(a, 'x')) },
  {
    kernelName: tf.ExpandDims,
    kernelFunc: (a) => {
      const x = input(a, 'input');
      const rank = x.shape.length;
      let dim = attr<number>(a, 'dim');
      if (dim < 0) dim = rank + dim + 1;
      const shape = x.shape.slice();
      shape.splice(dim, 0, 1);
      return cudaOf(a).share(x, shape);
    },
  },
  { kernelName: tf.Transpose, kernelFunc: (a) => transposeImpl(cudaOf(a), input(a, 'x'), attr<number[]>(a, 'perm')) },
  {
    kernelName: tf.Slice,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const [begin, size] = tf.slice_util.parseSliceParams(x, attr<number[]>(a, 'begin'), attr<number[]>(a, 'size'));
      tf.slice_util.assertParamsValid(x, begin, size);
      return sliceImpl(cudaOf(a), x, begin, size);
    },
  },
  {
    kernelName: tf.StridedSlice,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const info = tf.slice_util.sliceInfo(
        x.shape,
        attr<number[]>(a, 'begin'),
        attr<number[]>(a, 'end'),
        attr<number[]>(a, 'strides'),
        attr<number>(a, 'beginMask'),
        attr<number>(a, 'endMask'),
        attr<number>(a, 'ellipsisMask'),
        attr<number>(a, 'newAxisMask'),
        attr<number>(a, 'shrinkAxisMask'),
      );
      if (info.isIdentity) return reshapeTo(b, x, info.finalShape);
      if (info.sliceDim0 || info.isSimpleSlice) {
        const size = tf.slice_util.computeOutShape(info.begin, info.end, info.strides);
        const sliced = sliceImpl(b, x, info.begin, size);
        const out = reshapeTo(b, sliced, info.finalShape);
        b.disposeIntermediateTensorInfo(sliced);
        return out;
      }
      // General case: one strided read over x's own axes (a shrunk axis has size 1 there;
      // finalShapeSparse drops it and so does not line up with x's axes), then the final reshape.
      const xs = contiguousStrides(x.shape);
      const size = tf.slice_util.computeOutShape(info.begin, info.end, info.strides).map((n) => Math.max(0, n));
      const strides = x.shape.map((_, k) => xs[k] * info.strides[k]);
      const offset = info.begin.reduce((s, v, k) => s + v * xs[k], 0);
      const flat = stridedCopy(b, x, size, strides, offset);
      const out = reshapeTo(b, flat, info.finalShape);
      b.disposeIntermediateTensorInfo(flat);
      return out;
    },
  },
  {
    kernelName: tf.Concat,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const xs = Object.keys(a.inputs)
        .sort((p, q) => Number(p) - Number(q))
        .map((k) => a.inputs[k]!);
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), xs[0].shape)[0];
      const outShape = tf.backend_util.computeOutShape(xs.map((t) => t.shape), axis);
      const nonEmpty = xs.filter((t) => sizeOf(t.shape) > 0);
      if (nonEmpty.length === 1 && sizeOf(outShape) === sizeOf(nonEmpty[0].shape)) return reshapeTo(b, nonEmpty[0], outShape);
      const dtype = xs.some((t) => t.dtype === 'float32') ? 'float32' : xs[0].dtype;
      const $xs = xs.map((t) => (t.dtype === dtype ? t : castTo(b, t, dtype)));
      const out = concatImpl(b, $xs, axis, outShape);
      $xs.forEach((t, i) => t !== xs[i] && b.disposeIntermediateTensorInfo(t));
      return out;
    },
  },
  {
    kernelName: tf.Pack,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const xs = Object.keys(a.inputs)
        .sort((p, q) => Number(p) - Number(q))
        .map((k) => a.inputs[k]!);
      const rank = xs[0].shape.length;
      let axis = attr<number>(a, 'axis');
      if (axis < 0) axis += rank + 1;
      const expanded = xs.map((t) => {
        const s = t.shape.slice();
        s.splice(axis, 0, 1);
        return { ...t, shape: s };
      });
      const outShape = expanded[0].shape.slice();
      outShape[axis] = xs.length;
      return concatImpl(b, expanded, axis, outShape);
    },
  },
  {
    kernelName: tf.Unpack,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'value');
      let axis = attr<number>(a, 'axis');
      if (axis < 0) axis += x.shape.length;
      const n = x.shape[axis];
      const pieces = splitImpl(b, x, new Array(n).fill(1), axis);
      const outShape = x.shape.filter((_, k) => k !== axis);
      return pieces.map((p) => {
        const r = reshapeTo(b, p, outShape);
        b.disposeIntermediateTensorInfo(p);
        return r;
      });
    },
  },
  {
    kernelName: tf.SplitV,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), x.shape)[0];
      const sizes = tf.backend_util.prepareSplitSize(x, attr<number[] | number>(a, 'numOrSizeSplits'), axis);
      return splitImpl(b, x, sizes, axis);
    },
  },
  {
    kernelName: tf.PadV2,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const paddings = attr<Array<[number, number]>>(a, 'paddings');
      const outShape = x.shape.map((d, k) => paddings[k][0] + d + paddings[k][1]);
      const out = b.makeTensorInfo(outShape, x.dtype);
      if (sizeOf(outShape) === 0) return out;
      if (outShape.length > 6) throw new Error(`cuda backend: PadV2 of rank ${outShape.length}: at most 6 dimensions are supported`);
      b.addon.pad(dtCode(x.dtype), b.ptr(x), b.ptr(out), outShape, x.shape, paddings.map((p) => p[0]), Number(attr<number>(a, 'constantValue') ?? 0));
      return out;
    },
  },
  {
    kernelName: tf.Tile,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const reps = attr<number[]>(a, 'reps');
      const outShape = x.shape.map((d, k) => d * reps[k]);
      const out = b.makeTensorInfo(outShape, x.dtype);
      if (sizeOf(outShape) === 0) return out;
      if (outShape.length > 6) throw new Error(`cuda backend: Tile of rank ${outShape.length}: at most 6 dimensions are supported`);
      b.addon.tile(b.ptr(x), b.ptr(out), outShape, x.shape);
      return out;
    },
  },
  {
    kernelName: tf.Reverse,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const dims = tf.util.parseAxisParam(attr<number | number[]>(a, 'dims'), x.shape);
      if (dims.length === 0) return copyOf(b, x);
      const xs = contiguousStrides(x.shape);
      let offset = 0;
      const strides = xs.map((s, k) => {
        if (!dims.includes(k)) return s;
        offset += (x.shape[k] - 1) * s;
        return -s;
      });
      return stridedCopy(b, x, x.shape, strides, offset);
    },
  },
  {
    kernelName: tf.GatherV2,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const indices = input(a, 'indices');
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), x.shape)[0];
      const batchDims = attr<number>(a, 'batchDims') ?? 0;
      const info = tf.backend_util.segment_util.collectGatherOpShapeInfo(x, indices, axis, batchDims);
      const out = b.makeTensorInfo(info.outputShape, x.dtype);
      const idx = indices.dtype === 'int32' ? indices : castTo(b, indices, 'int32');
      const nIdx = sizeOf(indices.shape) / info.batchSize;
      b.addon.gather(b.ptr(x), b.ptr(idx), b.ptr(out), info.batchSize, info.outerSize, info.dimSize, nIdx, info.sliceSize);
      if (idx !== indices) b.disposeIntermediateTensorInfo(idx);
      return out;
    },
  },
  {
    kernelName: tf.GatherNd,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const params = input(a, 'params');
      const indices = input(a, 'indices');
      const [resultShape, numSlices, sliceSize, strides] = tf.backend_util.prepareAndValidate(params, indices);
      const out = b.makeTensorInfo(resultShape, params.dtype);
      const sliceRank = indices.shape[indices.shape.length - 1];
      if (sliceRank > 6) throw new Error(`cuda backend: GatherNd with index tuples of ${sliceRank}: at most 6 are supported`);
      const idx = indices.dtype === 'int32' ? indices : castTo(b, indices, 'int32');
      // tfjs gives strides in slices; the native kernel indexes elements.
      const elementStrides = strides.map((s) => s * sliceSize);
      b.addon.gatherNd(b.ptr(params), b.ptr(idx), b.ptr(out), numSlices, sliceRank, sliceSize, elementStrides, params.shape.slice(0, sliceRank));
      if (idx !== indices) b.disposeIntermediateTensorInfo(idx);
      return out;
    },
  },
  {
    kernelName: tf.ScatterNd,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const indices = input(a, 'indices');
      const updates = input(a, 'updates');
      const shape = attr<number[]>(a, 'shape');
      const s = tf.backend_util.calculateShapes(updates, indices, shape);
      if (s.sliceRank > 6) throw new Error(`cuda backend: ScatterNd with index tuples of ${s.sliceRank}: at most 6 are supported`);
      const dtype = updates.dtype === 'bool' ? 'int32' : updates.dtype;
      const out = b.makeTensorInfo(shape, dtype);
      const idx = indices.dtype === 'int32' ? indices : castTo(b, indices, 'int32');
      // tfjs gives strides in slices (one per index column); the native kernel indexes elements.
      const elementStrides = s.strides.slice(0, s.sliceRank).map((v) => v * s.sliceSize);
      b.addon.scatterNd(dtCode(dtype), b.ptr(idx), b.ptr(updates), b.ptr(out), s.numUpdates, s.sliceRank, s.sliceSize, elementStrides, shape.slice(0, s.sliceRank), s.outputSize);
      if (idx !== indices) b.disposeIntermediateTensorInfo(idx);
      return out;
    },
  },
  {
    kernelName: tf.UnsortedSegmentSum,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const seg = input(a, 'segmentIds');
      const numSegments = attr<number>(a, 'numSegments');
      const outShape = [numSegments, ...x.shape.slice(seg.shape.length)];
      const dtype = x.dtype === 'bool' ? 'int32' : x.dtype;
      const out = b.makeTensorInfo(outShape, dtype);
      const rows = sizeOf(seg.shape);
      const inner = rows > 0 ? sizeOf(x.shape) / rows : 0;
      const ids = seg.dtype === 'int32' ? seg : castTo(b, seg, 'int32');
      b.addon.segmentSum(dtCode(dtype), b.ptr(x), b.ptr(ids), b.ptr(out), rows, inner, numSegments);
      if (ids !== seg) b.disposeIntermediateTensorInfo(ids);
      return out;
    },
  },
  {
    kernelName: tf.OneHot,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const indices = input(a, 'indices');
      const depth = attr<number>(a, 'depth');
      const dtype = attr<tf.DataType>(a, 'dtype') ?? 'int32';
      const shape = [...indices.shape, depth];
      const f = b.makeTensorInfo(shape, 'float32');
      const idx = indices.dtype === 'int32' ? indices : castTo(b, indices, 'int32');
      b.addon.oneHot(b.ptr(idx), b.ptr(f), sizeOf(indices.shape), depth, attr<number>(a, 'onValue') ?? 1, attr<number>(a, 'offValue') ?? 0);
      if (idx !== indices) b.disposeIntermediateTensorInfo(idx);
      if (dtype === 'float32') return f;
      const out = castTo(b, f, dtype);
      b.disposeIntermediateTensorInfo(f);
      return out;
    },
  },
];
