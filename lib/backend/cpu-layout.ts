/**
 * Transpose, binary arithmetic and sums over leading axes for tfjs-backend-cpu, the stock kernels' values
 * exactly, without their per-element index arithmetic: the stock kernels convert every flat index to
 * a coordinate array and back (`indexToLoc`/`locToIndex`, a fresh array per element), which made a
 * real transpose or a broadcast such as `x − mean` (a [N, 1] operand) cost 15-20% of a CPU training
 * step (profile of the golden BERT replay, 2026-11-28); the stock Sum over a leading axis (every bias
 * gradient) transposes that way first.
 *
 * Both walk the output in order with an odometer over its dimensions, the operands' offsets updated
 * by strides (0 along a broadcast dimension). A transpose only moves values; an arithmetic op is the
 * stock kernel's JavaScript expression on the same two numbers, stored into the same Float32Array,
 * so every result is the same float32.
 */

/** Strides of `shape` aligned to the last dimensions of `outShape`, 0 where the operand broadcasts. */
function alignedStrides(shape: readonly number[], outShape: readonly number[]): number[] {
  const R = outShape.length;
  const strides = new Array<number>(R).fill(0);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    const od = R - shape.length + d;
    strides[od] = shape[d] === 1 && outShape[od] !== 1 ? 0 : s;
    s *= shape[d];
  }
  return strides;
}

/** The values of x (shape xShape) with dimensions permuted by perm, into a new array of x's kind. */
export function transposeValues<T extends Float32Array | Int32Array | Uint8Array>(x: T, xShape: readonly number[], perm: readonly number[]): T {
  const R = xShape.length;
  const outShape = perm.map((p) => xShape[p]);
  const xStrides = new Array<number>(R);
  for (let d = R - 1, s = 1; d >= 0; d--) {
    xStrides[d] = s;
    s *= xShape[d];
  }
  // the input offset moves by the stride of the input dimension each output dimension comes from
  const strides = perm.map((p) => xStrides[p]);
  const out = new (x.constructor as new (n: number) => T)(x.length);
  if (x.length === 0) return out;
  walk(outShape, [strides], (o, n, [off], [st]) => {
    for (let k = 0; k < n; k++) out[o + k] = x[off + k * st];
  });
  return out;
}

/**
 * Σ over the innermost `reduceSize` values of each output element, as the stock Sum kernel sums
 * after its transpose: a float64 running sum in order, stored as float32.
 */
export function sumInnermost(x: ArrayLike<number>, reduceSize: number): Float32Array {
  const out = new Float32Array(reduceSize === 0 ? 0 : x.length / reduceSize);
  for (let i = 0; i < out.length; i++) {
    const o = i * reduceSize;
    let s = 0;
    for (let j = 0; j < reduceSize; j++) s += x[o + j];
    out[i] = s;
  }
  return out;
}

export type BinaryOp = 'add' | 'sub' | 'mul' | 'div';

/** a op b with numpy broadcasting, float32 (outShape: the broadcast shape, already checked). */
export function broadcastBinary(op: BinaryOp, a: ArrayLike<number>, aShape: readonly number[], b: ArrayLike<number>, bShape: readonly number[], outShape: readonly number[]): Float32Array {
  const size = outShape.reduce((x, y) => x * y, 1);
  const out = new Float32Array(size);
  if (size === 0) return out;
  const inner = INNER[op];
  walk(outShape, [alignedStrides(aShape, outShape), alignedStrides(bShape, outShape)], (o, n, [ao, bo], [as, bs]) => inner(out, o, n, a, ao, as, b, bo, bs));
  return out;
}

type Inner = (out: Float32Array, o: number, n: number, a: ArrayLike<number>, ao: number, as: number, b: ArrayLike<number>, bo: number, bs: number) => void;

// One loop per op (the stock kernels' expressions), so the innermost loop calls nothing.
const INNER: Record<BinaryOp, Inner> = {
  add: (out, o, n, a, ao, as, b, bo, bs) => {
    for (let k = 0; k < n; k++) out[o + k] = a[ao + k * as] + b[bo + k * bs];
  },
  sub: (out, o, n, a, ao, as, b, bo, bs) => {
    for (let k = 0; k < n; k++) out[o + k] = a[ao + k * as] - b[bo + k * bs];
  },
  mul: (out, o, n, a, ao, as, b, bo, bs) => {
    for (let k = 0; k < n; k++) out[o + k] = a[ao + k * as] * b[bo + k * bs];
  },
  div: (out, o, n, a, ao, as, b, bo, bs) => {
    for (let k = 0; k < n; k++) out[o + k] = a[ao + k * as] / b[bo + k * bs];
  },
};

/**
 * Calls `row(o, n, offsets, innerStrides)` for each run of the last output dimension in order (o:
 * output offset, n: its length), with each operand's offset and its stride along that dimension.
 */
function walk(outShape: readonly number[], strides: number[][], row: (o: number, n: number, offsets: number[], inner: number[]) => void): void {
  const R = outShape.length;
  if (R === 0) {
    row(0, 1, strides.map(() => 0), strides.map(() => 0));
    return;
  }
  const n = outShape[R - 1];
  const size = outShape.reduce((x, y) => x * y, 1);
  const inner = strides.map((s) => s[R - 1]);
  const offsets = strides.map(() => 0);
  const idx = new Array<number>(R).fill(0);
  for (let o = 0; o < size; o += n) {
    row(o, n, offsets, inner);
    for (let d = R - 2; d >= 0; d--) {
      idx[d]++;
      for (let t = 0; t < strides.length; t++) offsets[t] += strides[t][d];
      if (idx[d] < outShape[d]) break;
      for (let t = 0; t < strides.length; t++) offsets[t] -= strides[t][d] * outShape[d];
      idx[d] = 0;
    }
  }
}
