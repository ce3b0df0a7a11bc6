/**
 * Shape arithmetic of the cuda backend (pure functions, tested on the CPU): strides of
 * row-major layouts, broadcasting, simplifying permutations and planning reductions, so that
 * kernels see the fewest dimensions that describe the same access pattern.
 */

/** The addon's kernels take at most this many dimensions (native/src/common.h MAX_RANK). */
export const MAX_RANK = 6;

export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    s[k] = acc;
    acc *= shape[k];
  }
  return s;
}

/**
 * Element strides for reading an operand of shape `inShape` over the index space `outShape`
 * (numpy broadcasting: shapes right-aligned, a size-1 or missing dimension repeats: stride 0).
 */
export function broadcastStrides(inShape: readonly number[], outShape: readonly number[]): number[] {
  const out = new Array<number>(outShape.length).fill(0);
  const inStrides = contiguousStrides(inShape);
  const shift = outShape.length - inShape.length;
  if (shift < 0) throw new Error(`cannot broadcast shape [${inShape}] to [${outShape}]`);
  for (let k = 0; k < inShape.length; k++) {
    const d = inShape[k];
    const o = outShape[k + shift];
    if (d === o) out[k + shift] = d === 1 ? 0 : inStrides[k];
    else if (d === 1) out[k + shift] = 0;
    else throw new Error(`cannot broadcast shape [${inShape}] to [${outShape}]`);
  }
  return out;
}

/**
 * Merges adjacent dimensions that every operand walks contiguously (stride[k] = stride[k+1] ·
 * size[k+1], or both zero), and drops size-1 dimensions. The result indexes the same elements.
 */
export function mergeDims(shape: readonly number[], strides: readonly (readonly number[])[]): { shape: number[]; strides: number[][] } {
  const keep: number[] = [];
  for (let k = 0; k < shape.length; k++) if (shape[k] !== 1) keep.push(k);
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (const k of keep) {
    const last = outShape.length - 1;
    const mergeable =
      last >= 0 &&
      strides.every((s, i) => {
        const prev = outStrides[i][last];
        return prev === s[k] * shape[k];
      });
    if (mergeable) {
      outShape[last] *= shape[k];
      strides.forEach((s, i) => (outStrides[i][last] = s[k]));
    } else {
      outShape.push(shape[k]);
      strides.forEach((s, i) => outStrides[i].push(s[k]));
    }
  }
  return { shape: outShape, strides: outStrides };
}

/**
 * A transpose reduced to its essentials: size-1 axes dropped and input axes that stay adjacent
 * and in order merged. `shape` is the (merged) input shape, `perm` the permutation of it.
 */
export function simplifyPermutation(shape: readonly number[], perm: readonly number[]): { shape: number[]; perm: number[] } {
  if (perm.length !== shape.length) throw new Error(`permutation [${perm}] does not match rank ${shape.length}`);
  const kept = perm.filter((a) => shape[a] !== 1);
  // Group runs of consecutive input axes in output order.
  const groups: number[][] = [];
  for (const a of kept) {
    const g = groups[groups.length - 1];
    if (g && g[g.length - 1] === a - 1) g.push(a);
    else groups.push([a]);
  }
  // Renumber groups by their position in the input.
  const order = [...groups].sort((x, y) => x[0] - y[0]);
  const newShape = order.map((g) => g.reduce((n, a) => n * shape[a], 1));
  const newPerm = groups.map((g) => order.indexOf(g));
  return { shape: newShape, perm: newPerm };
}

export type ReductionPlan =
  | { kind: 'direct'; outer: number; r: number; inner: number }
  | { kind: 'transpose'; perm: number[]; outer: number; r: number };

/**
 * How to reduce `axes` of `shape`: directly as [outer, r, inner] when the reduced axes are one
 * block (ignoring size-1 axes), else by transposing them to the end first.
 */
export function planReduction(shape: readonly number[], axes: readonly number[]): ReductionPlan {
  const reduced = new Set(axes);
  const nonTrivial = shape.map((d, k) => k).filter((k) => shape[k] !== 1);
  const red = nonTrivial.filter((k) => reduced.has(k));
  const r = red.reduce((n, k) => n * shape[k], 1);
  const total = sizeOf(shape);
  if (red.length === 0) return { kind: 'direct', outer: total, r: 1, inner: 1 };
  const first = nonTrivial.indexOf(red[0]);
  const contiguousBlock = red.every((k, i) => nonTrivial[first + i] === k);
  if (contiguousBlock) {
    const before = nonTrivial.slice(0, first).reduce((n, k) => n * shape[k], 1);
    return { kind: 'direct', outer: before, r, inner: total / (before * r) };
  }
  const keptAxes = shape.map((_, k) => k).filter((k) => !reduced.has(k));
  return { kind: 'transpose', perm: [...keptAxes, ...[...reduced].sort((a, b) => a - b)], outer: total / r, r };
}

/** Pads `v` on the left to `rank` with `fill`. */
export function padLeft(v: readonly number[], rank: number, fill: number): number[] {
  return [...new Array<number>(rank - v.length).fill(fill), ...v];
}
