/**
 * The cpu backend's BatchMatMul (lib/backend/cpu-matmul.ts) against tfjs-backend-cpu's stock kernel,
 * in one process on the same inputs, at the shapes of the golden BERT replay (hidden 64, FFN 256,
 * 64 sentences × 32 tokens) and of BERT-base (768/3072, 8 × 64 tokens): forward linear layers, the
 * two gradients of each, attention scores. Prints a markdown table of ms per call and the ratio, and
 * checks the outputs are bit-identical.
 *
 *   npx tsx bench/cpu-matmul.ts [--reps 5] [--small] [--json results.json]
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { registerCpuKernelOverrides } from '../lib/backend/cpu-kernels.js';

const { values: opts } = parseArgs({ options: { reps: { type: 'string', default: '5' }, json: { type: 'string' }, small: { type: 'boolean' }, help: { type: 'boolean' } } });
if (opts.help) {
  console.log('usage: npx tsx bench/cpu-matmul.ts [--reps N (default 5)] [--small (the golden BERT shapes only)] [--json <file>]');
  process.exit(0);
}
const reps = Number(opts.reps);

await tf.setBackend('cpu');
const stock = tf.getKernel(tf.BatchMatMul, 'cpu')!.kernelFunc;
registerCpuKernelOverrides();
const ours = tf.getKernel(tf.BatchMatMul, 'cpu')!.kernelFunc;

const SHAPES: Array<{ name: string; a: number[]; b: number[]; tA: boolean; tB: boolean }> = [
  { name: 'golden BERT: x·Wᵀ (FFN in, 2048×64 · 64→256)', a: [2048, 64], b: [256, 64], tA: false, tB: true },
  { name: 'golden BERT: dy·W (FFN in, grad of x)', a: [2048, 256], b: [256, 64], tA: false, tB: false },
  { name: 'golden BERT: dyᵀ·x (FFN in, grad of W)', a: [2048, 256], b: [2048, 64], tA: true, tB: false },
  { name: 'golden BERT: Q·Kᵀ (64×4 heads, 32×16)', a: [256, 32, 16], b: [256, 32, 16], tA: false, tB: true },
  { name: 'BERT-base: x·Wᵀ (FFN in, 512×768 · 768→3072)', a: [512, 768], b: [3072, 768], tA: false, tB: true },
  { name: 'BERT-base: dyᵀ·x (FFN in, grad of W)', a: [512, 3072], b: [512, 768], tA: true, tB: false },
];

function time(kernel: tf.KernelFunc, a: tf.Tensor, b: tf.Tensor, tA: boolean, tB: boolean): { ms: number; out: Float32Array } {
  let best = Infinity;
  let out = new Float32Array(0);
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const info = kernel({ inputs: { a, b }, backend: tf.backend(), attrs: { transposeA: tA, transposeB: tB } }) as tf.TensorInfo;
    best = Math.min(best, performance.now() - t0);
    const t = tf.engine().makeTensorFromTensorInfo(info);
    out = Float32Array.from(t.dataSync());
    t.dispose();
  }
  return { ms: best, out };
}

const rows = [];
console.log(`| shape | stock ms | ours ms | stock/ours | bits |\n|---|---:|---:|---:|---|`);
let seed = 7;
for (const s of SHAPES.filter((x) => !opts.small || x.name.startsWith('golden'))) {
  const a = tf.randomNormal(s.a, 0, 1, 'float32', seed++);
  const b = tf.randomNormal(s.b, 0, 1, 'float32', seed++);
  const st = time(stock, a, b, s.tA, s.tB);
  const ou = time(ours, a, b, s.tA, s.tB);
  const same = st.out.length === ou.out.length && new Uint32Array(st.out.buffer).every((v, i) => v === new Uint32Array(ou.out.buffer)[i]);
  rows.push({ shape: s.name, stockMs: +st.ms.toFixed(2), oursMs: +ou.ms.toFixed(2), ratio: +(st.ms / ou.ms).toFixed(2), bitIdentical: same });
  console.log(`| ${s.name} | ${st.ms.toFixed(1)} | ${ou.ms.toFixed(1)} | ${(st.ms / ou.ms).toFixed(2)}× | ${same ? 'identical' : 'DIFFER'} |`);
  a.dispose();
  b.dispose();
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown cpu'}`;
console.log(`\nbest of ${reps}; node ${process.version}; ${machine}`);
if (opts.json) writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString().slice(0, 10), node: process.version, machine, reps, rows }, null, 2) + '\n');
if (rows.some((r) => !r.bitIdentical)) process.exit(1);
