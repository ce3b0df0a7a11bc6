/**
 * The two passes over X that a logistic-regression fit spends its time in (a profile of SentEval's
 * CR protocol: 59% of it, the per-row losses 15%), as WebAssembly SIMD: the scores
 * z_i = w·x_i + b (./matrix.ts linearScores) and the gradient's data part Xᵀr
 * (./matrix.ts addTransposedProduct). Each is **bit for bit** the JavaScript kernel: the same
 * products and sums in the same order, two of them per f64x2 instruction (IEEE-754 per lane, no
 * fused multiply-add), so a fit iterates exactly as before — only sooner, since the interpreter's
 * bounds checks and scalar loads go.
 *
 * - scores: four rows a block, as the JS kernel, with the rows stored in pairs, interleaved
 *   ([x_{2j,k}, x_{2j+1,k}] adjacent), so one load brings the same feature of two rows and each
 *   row's sum still runs k = 0, 1, … as in JS.
 * - Xᵀr: four rows a block, two features per instruction from the row-major rows, each feature's
 *   sum ((r0·x0 + r1·x1) + (r2·x2 + r3·x3)) as in JS.
 * The last n mod 4 rows go through the JS kernels' own tail loops, after the blocks (as in JS).
 *
 * A fit copies its X in once (`prepareLinearKernels`, both layouts, 16·n·d bytes) and evaluates
 * its objective a few hundred times against it; the scores live in the module's memory, where the
 * per-row losses turn them into residuals in place. One fit at a time (JS is single-threaded and
 * the fits do not nest); preparing again invalidates the previous handle, which then throws.
 * Without WebAssembly SIMD (`available()` false), callers keep the JS kernels.
 *
 * The module is assembled here from its instructions (below, with the text form beside each
 * function), so there is no binary file or toolchain to keep.
 */
import type { Matrix } from './matrix.js';

// --- a minimal assembler: the opcodes these two functions use (WebAssembly core + SIMD) ---------

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
};
const I32 = 0x7f;
const F64 = 0x7c;
const V128 = 0x7b;
const get = (i: number) => [0x20, ...uleb(i)];
const set = (i: number) => [0x21, ...uleb(i)];
const i32 = (v: number) => [0x41, ...sleb(v)];
const add = [0x6a];
const mul = [0x6c];
const ltS = [0x48];
const f64Load = (offset = 0) => [0x2b, 3, ...uleb(offset)];
const f64Store = (offset = 0) => [0x39, 3, ...uleb(offset)];
const f64Add = [0xa0];
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
const v128Load = (offset = 0) => simd(0x00, 3, ...uleb(offset));
const v128Store = (offset = 0) => simd(0x0b, 3, ...uleb(offset));
const load64Splat = (offset = 0) => simd(0x0a, 3, ...uleb(offset));
const f64x2Splat = simd(0x14);
const lane = (l: number) => simd(0x21, l);
const f64x2Add = simd(0xf0);
const f64x2Mul = simd(0xf2);
const v128Zero = simd(0x0c, ...new Array(16).fill(0));

/** for (local = 0; local < limit; local++) body — skipped when limit ≤ 0. */
function forLoop(local: number, limit: number[], body: number[]): number[] {
  return [
    ...i32(0), ...set(local),
    0x02, 0x40, // block
    ...get(local), ...limit, ...ltS, 0x45, 0x0d, 0, // if !(local < limit) break
    0x03, 0x40, // loop
    ...body,
    ...get(local), ...i32(1), ...add, ...set(local),
    ...get(local), ...limit, ...ltS, 0x0d, 0, // continue while local < limit
    0x0b, 0x0b, // end loop, end block
  ];
}

/** A function body: its extra locals ([count, type] runs) and its code. */
function body(locals: [number, number][], code: number[]): number[] {
  const bytes = [...uleb(locals.length), ...locals.flatMap(([n, t]) => [...uleb(n), t]), ...code, 0x0b];
  return [...uleb(bytes.length), ...bytes];
}

/*
 * scores(xp, theta, out, blocks, d, B): for each 4-row block and class c,
 *   a01 = a23 = 0; for k < d: t = splat(theta[c(d+1)+k]); a01 += t·xp[pair 2b][k]; a23 += t·xp[pair 2b+1][k]
 *   out[(4b+j)B + c] = lane(a, j) + theta[c(d+1)+d]
 * params 0..5; locals: 6 b, 7 c, 8 k, 9 p0 (pair 2b's address), 10 w (class c's weights), 11 o (out
 * address), 12 a01, 13 a23, 14 t, 15 bias
 */
const SCORES = (() => {
  const [xp, theta, out, blocks, d, B, b, c, k, p0, w, o, a01, a23, t, bias] = Array.from({ length: 16 }, (_, i) => i);
  const d16 = [...get(d), ...i32(16), ...mul];
  const kBody = [
    ...get(w), ...get(k), ...i32(8), ...mul, ...add, ...load64Splat(), ...set(t),
    ...get(a01), ...get(t), ...get(p0), ...get(k), ...i32(16), ...mul, ...add, ...v128Load(), ...f64x2Mul, ...f64x2Add, ...set(a01),
    ...get(a23), ...get(t), ...get(p0), ...d16, ...add, ...get(k), ...i32(16), ...mul, ...add, ...v128Load(), ...f64x2Mul, ...f64x2Add, ...set(a23),
  ];
  const store = (acc: number, l: number, row: number) => [
    ...get(o), ...get(B), ...i32(8 * row), ...mul, ...add, ...get(acc), ...lane(l), ...get(bias), ...f64Add, ...f64Store(),
  ];
  const cBody = [
    // w = theta + c·(d+1)·8
    ...get(theta), ...get(c), ...get(d), ...i32(1), ...add, ...mul, ...i32(8), ...mul, ...add, ...set(w),
    ...v128Zero, ...set(a01), ...v128Zero, ...set(a23),
    ...forLoop(k, get(d), kBody),
    ...get(w), ...get(d), ...i32(8), ...mul, ...add, ...f64Load(), ...set(bias),
    // o = out + (4b·B + c)·8
    ...get(out), ...get(b), ...i32(4), ...mul, ...get(B), ...mul, ...get(c), ...add, ...i32(8), ...mul, ...add, ...set(o),
    ...store(a01, 0, 0), ...store(a01, 1, 1), ...store(a23, 0, 2), ...store(a23, 1, 3),
  ];
  const bBody = [
    // p0 = xp + 2b·d·16
    ...get(xp), ...get(b), ...i32(2), ...mul, ...d16, ...mul, ...add, ...set(p0),
    ...forLoop(c, get(B), cBody),
  ];
  return body([[6, I32], [3, V128], [1, F64]], forLoop(b, get(blocks), bBody));
})();

/*
 * xtr(xr, r, grad, blocks, d, B): for each 4-row block and class c, with s_j = splat(r[(4b+j)B + c]),
 *   for k < d - 1, k += 2: grad[c(d+1)+k..k+1] += (s0·x0 + s1·x1) + (s2·x2 + s3·x3)   (x_j: row 4b+j, features k, k+1)
 *   odd d: the last feature the same in f64
 *   grad[c(d+1)+d] += (r0 + r1) + (r2 + r3)
 * params 0..5; locals: 6 b, 7 c, 8 k, 9 q (row 4b's address), 10 g (class c's gradient), 11 e (element
 * offset k·8), 12 dd (d·8), 13 pairs (⌊d/2⌋), 14-17 r0..r3 (f64), 18-21 s0..s3 (v128)
 */
const XTR = (() => {
  const [xr, r, grad, blocks, d, B, b, c, k, q, g, e, dd, pairs, r0, r1, r2, r3, s0, s1, s2, s3] = Array.from({ length: 22 }, (_, i) => i);
  const rs = [r0, r1, r2, r3];
  const ss = [s0, s1, s2, s3];
  const xAt = (j: number) => [...get(q), ...get(dd), ...i32(j), ...mul, ...add, ...get(e), ...add];
  const vecTerm = (j: number) => [...get(ss[j]), ...xAt(j), ...v128Load(), ...f64x2Mul];
  const f64Mul = [0xa2];
  const scalarTerm = (j: number) => [...get(rs[j]), ...xAt(j), ...f64Load(), ...f64Mul];
  const kBody = [
    // e = 2k·8
    ...get(k), ...i32(16), ...mul, ...set(e),
    // grad[g + e] = grad[g + e] + ((s0·x0 + s1·x1) + (s2·x2 + s3·x3))
    ...get(g), ...get(e), ...add,
    ...get(g), ...get(e), ...add, ...v128Load(),
    ...vecTerm(0), ...vecTerm(1), ...f64x2Add, ...vecTerm(2), ...vecTerm(3), ...f64x2Add, ...f64x2Add,
    ...f64x2Add, ...v128Store(),
  ];
  const oddTail = [
    // if (d is odd): e = (d-1)·8; grad[g + e] = grad[g + e] + ((r0·x0 + r1·x1) + (r2·x2 + r3·x3))
    ...get(d), ...i32(1), 0x71 /* i32.and */, 0x04, 0x40, // if
    ...get(dd), ...i32(8), 0x6b /* i32.sub */, ...set(e),
    ...get(g), ...get(e), ...add,
    ...get(g), ...get(e), ...add, ...f64Load(),
    ...scalarTerm(0), ...scalarTerm(1), ...f64Add, ...scalarTerm(2), ...scalarTerm(3), ...f64Add, ...f64Add,
    ...f64Add, ...f64Store(),
    0x0b, // end if
  ];
  const cBody = [
    // r_j = r[((4b + j)·B + c)·8], s_j = splat(r_j)
    ...rs.flatMap((rj, j) => [
      ...get(r), ...get(b), ...i32(4), ...mul, ...i32(j), ...add, ...get(B), ...mul, ...get(c), ...add, ...i32(8), ...mul, ...add,
      ...f64Load(), ...set(rj), ...get(rj), ...f64x2Splat, ...set(ss[j]),
    ]),
    // g = grad + c·(d+1)·8
    ...get(grad), ...get(c), ...get(d), ...i32(1), ...add, ...mul, ...i32(8), ...mul, ...add, ...set(g),
    ...forLoop(k, get(pairs), kBody),
    ...oddTail,
    // grad[g + d·8] = grad[g + d·8] + ((r0 + r1) + (r2 + r3))
    ...get(g), ...get(dd), ...add,
    ...get(g), ...get(dd), ...add, ...f64Load(),
    ...get(r0), ...get(r1), ...f64Add, ...get(r2), ...get(r3), ...f64Add, ...f64Add,
    ...f64Add, ...f64Store(),
  ];
  const bBody = [
    // q = xr + 4b·d·8
    ...get(xr), ...get(b), ...i32(4), ...mul, ...get(dd), ...mul, ...add, ...set(q),
    ...forLoop(c, get(B), cBody),
  ];
  const prologue = [...get(d), ...i32(8), ...mul, ...set(dd), ...get(d), ...i32(1), 0x75 /* i32.shr_s */, ...set(pairs)];
  return body([[8, I32], [4, F64], [4, V128]], [...prologue, ...forLoop(b, get(blocks), bBody)]);
})();

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}
const name = (s: string) => [...uleb(s.length), ...Array.from(s, (ch) => ch.charCodeAt(0))];

const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 6, I32, I32, I32, I32, I32, I32, 0]), // one type: (i32 ×6) → ()
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]), // import env.memory, min 1 page
  ...section(3, [2, 0, 0]), // two functions of type 0
  ...section(7, [2, ...name('scores'), 0x00, 0, ...name('xtr'), 0x00, 1]),
  ...section(10, [2, ...SCORES, ...XTR]),
]);

// --- the kernels ----------------------------------------------------------------------------------

/** The part of the WebAssembly API used here (the project's TypeScript lib has no DOM types, and @types/node declares little of it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasmApi = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface Instance {
  memory: WasmMemory;
  scores: (xp: number, theta: number, out: number, blocks: number, d: number, B: number) => void;
  xtr: (xr: number, r: number, grad: number, blocks: number, d: number, B: number) => void;
}

let instance: Instance | null | undefined;
let generation = 0;

function load(): Instance | null {
  if (instance !== undefined) return instance;
  try {
    if (!wasmApi || !wasmApi.validate(MODULE_BYTES)) return (instance = null);
    const memory = new wasmApi.Memory({ initial: 1 });
    const inst = new wasmApi.Instance(new wasmApi.Module(MODULE_BYTES), { env: { memory } });
    const ex = inst.exports as unknown as Pick<Instance, 'scores' | 'xtr'>;
    instance = { memory, scores: ex.scores, xtr: ex.xtr };
  } catch {
    instance = null;
  }
  return instance;
}

/** Whether this runtime runs the SIMD kernels (WebAssembly with SIMD: Node ≥ 16.4, current browsers, Deno). */
export function available(): boolean {
  return load() !== null;
}

/** X of one fit in the module's memory, with the buffers its objective evaluations use. */
export interface LinearKernels {
  readonly rows: number;
  readonly cols: number;
  /** Scores z (rows × blocks), in the module's memory: the caller turns them into residuals in place. */
  scores(theta: Float64Array, blocks: number): Float64Array;
  /** grad[c·(cols+1) + k] += Σ_i r[i·B + c]·x̃_ik, r being the array `scores` returned (residuals by now). */
  addTransposedProduct(r: Float64Array, blocks: number, grad: Float64Array): void;
  /**
   * The fit is over: a module whose memory grew past RELEASE_BYTES is dropped, so that one fit on
   * wide features (4096-d LLM embeddings: 16·n·d bytes) does not hold that memory for the process's
   * life (WebAssembly memory never shrinks); the next fit instantiates a fresh one.
   */
  release(): void;
}

/** Memory kept between fits (above it, release() drops the module). */
const RELEASE_BYTES = 64 * 2 ** 20;

const PAGE = 65536;
const align16 = (n: number) => Math.ceil(n / 16) * 16;

/**
 * X copied into the module's memory for the fit about to run (up to `maxBlocks` parameter blocks:
 * 1 binary, K multinomial); undefined where WebAssembly SIMD is missing. Valid until the next call.
 */
export function prepareLinearKernels(x: Matrix, maxBlocks: number): LinearKernels | undefined {
  const inst = load();
  if (!inst) return undefined;
  const { rows: n, cols: d } = x;
  const p = d + 1;
  const blocks4 = n >> 2;
  // layout: [pairs (interleaved, 4·blocks4 rows)] [row-major x] [theta] [scores] [grad]
  const offPairs = 0;
  const offRows = align16(offPairs + blocks4 * 4 * d * 8);
  const offTheta = align16(offRows + n * d * 8);
  const offScores = align16(offTheta + maxBlocks * p * 8);
  const offGrad = align16(offScores + n * maxBlocks * 8);
  const end = align16(offGrad + maxBlocks * p * 8);
  const have = inst.memory.buffer.byteLength;
  if (end > have) inst.memory.grow(Math.ceil((end - have) / PAGE));
  const buf = inst.memory.buffer;
  const xs = x.data;
  const pairs = new Float64Array(buf, offPairs, blocks4 * 4 * d);
  for (let j = 0; j < blocks4 * 2; j++) {
    const a = 2 * j * d;
    const o = 2 * j * d;
    for (let k = 0; k < d; k++) {
      pairs[o + 2 * k] = xs[a + k];
      pairs[o + 2 * k + 1] = xs[a + d + k];
    }
  }
  new Float64Array(buf, offRows, n * d).set(xs);
  const theta = new Float64Array(buf, offTheta, maxBlocks * p);
  const gradIn = new Float64Array(buf, offGrad, maxBlocks * p);
  const mine = ++generation;
  const check = (B: number) => {
    if (mine !== generation) throw new Error('linear kernels: this fit\'s X was replaced by a later prepareLinearKernels call (fits do not nest)');
    if (!(B >= 1 && B <= maxBlocks)) throw new RangeError(`linear kernels: ${B} parameter blocks, prepared for at most ${maxBlocks}`);
  };
  let scoresView = new Float64Array(0);
  return {
    rows: n,
    cols: d,
    scores(th, B) {
      check(B);
      if (th.length !== B * p) throw new RangeError(`linear kernels: ${th.length} parameters, expected ${B} × ${p}`);
      theta.set(th);
      if (scoresView.length !== n * B) scoresView = new Float64Array(buf, offScores, n * B);
      inst.scores(offPairs, offTheta, offScores, blocks4, d, B);
      // the last n mod 4 rows as the JS kernel's tail
      for (let i = blocks4 * 4; i < n; i++) {
        for (let c = 0; c < B; c++) {
          const w = c * p;
          let a = 0;
          for (let k = 0; k < d; k++) a += th[w + k] * xs[i * d + k];
          scoresView[i * B + c] = a + th[w + d];
        }
      }
      return scoresView;
    },
    addTransposedProduct(r, B, grad) {
      check(B);
      if (r !== scoresView || r.length !== n * B) throw new RangeError('linear kernels: the residuals must be the array scores() returned');
      if (grad.length !== B * p) throw new RangeError(`linear kernels: gradient of ${grad.length}, expected ${B} × ${p}`);
      const g = gradIn.subarray(0, B * p);
      g.set(grad);
      inst.xtr(offRows, offScores, offGrad, blocks4, d, B);
      grad.set(g);
      for (let i = blocks4 * 4; i < n; i++) {
        for (let c = 0; c < B; c++) {
          const rc = r[i * B + c];
          const w = c * p;
          for (let k = 0; k < d; k++) grad[w + k] += rc * xs[i * d + k];
          grad[w + d] += rc;
        }
      }
    },
    release() {
      if (mine === generation && instance === inst && inst.memory.buffer.byteLength > RELEASE_BYTES) instance = undefined;
    },
  };
}
