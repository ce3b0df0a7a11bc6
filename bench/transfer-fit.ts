/**
 * One SentEval logistic-regression fit (scikit-learn's capped lbfgs, lib/eval/transfer/sklearn-lbfgs-fit.ts)
 * with the passes over X in WebAssembly SIMD (lib/eval/transfer/linear-kernels-wasm.ts) against the
 * JS kernels, in one process, alternating, on the same seeded data: MR-like (8,636 × 50 GloVe
 * features, binary), TREC-like (4,900 × 50, six classes) and notebook 07's BERT features (3,000 × 768,
 * binary). Prints CPU and wall ms per fit and the ratio, and checks both fits are bit-identical.
 *
 *   npx tsx bench/transfer-fit.ts [--reps 3] [--json <file>]
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { fitLogisticRegressionSklearn } from '../lib/eval/transfer/sklearn-lbfgs-fit.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

const { values: opts } = parseArgs({ options: { reps: { type: 'string', default: '3' }, json: { type: 'string' }, help: { type: 'boolean' } } });
if (opts.help) {
  console.log('usage: npx tsx bench/transfer-fit.ts [--reps N (default 3)] [--json <file>]');
  process.exit(0);
}
const reps = Number(opts.reps);
if (!(Number.isInteger(reps) && reps >= 1)) throw new Error(`--reps expects a whole number >= 1, got ${opts.reps}`);

const SHAPES = [
  { name: 'MR-like: 8,636 × 50, binary', n: 8636, d: 50, K: 2 },
  { name: 'TREC-like: 4,900 × 50, 6 classes', n: 4900, d: 50, K: 6 },
  { name: 'notebook 07 BERT features: 3,000 × 768, binary', n: 3000, d: 768, K: 2 },
];

const u = mulberry32Uniform(5);
const rows: Array<Record<string, unknown>> = [];
console.log('| data | iterations | JS ms/fit (cpu) | SIMD ms/fit (cpu) | ratio (cpu) | ratio (wall) |\n|---|---|---|---|---|---|');
for (const s of SHAPES) {
  const { n, d, K } = s;
  const x = { data: Float64Array.from({ length: n * d }, () => 2 * u() - 1), rows: n, cols: d };
  // labels from two features plus noise: not separable, so fits run to sklearn's cap as SentEval's do
  const y = Int32Array.from({ length: n }, (_, i) => Math.floor(((x.data[i * d] + x.data[i * d + 1] + 2 * (u() - 0.5)) / 4 + 0.5) * K) % K);
  const cpu = { js: 0, wasm: 0 };
  const wall = { js: 0, wasm: 0 };
  let iterations = 0;
  const thetas: Record<string, Float64Array> = {};
  for (let r = 0; r < reps; r++) {
    for (const mode of ['js', 'wasm'] as const) {
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      const m = fitLogisticRegressionSklearn(x, y, 4, { kernels: mode });
      const c = process.cpuUsage(c0);
      cpu[mode] += (c.user + c.system) / 1e3;
      wall[mode] += performance.now() - w0;
      iterations = m.solver.iterations;
      thetas[mode] = m.theta;
    }
  }
  const same = thetas.js.every((v, i) => Object.is(v, thetas.wasm[i]));
  if (!same) throw new Error(`${s.name}: the two fits differ (they must be bit-identical)`);
  const row = { data: s.name, iterations, jsCpuMs: cpu.js / reps, simdCpuMs: cpu.wasm / reps, ratioCpu: cpu.js / cpu.wasm, ratioWall: wall.js / wall.wasm };
  rows.push(row);
  console.log(`| ${s.name} | ${iterations} | ${row.jsCpuMs.toFixed(0)} | ${row.simdCpuMs.toFixed(0)} | ${row.ratioCpu.toFixed(2)}× | ${row.ratioWall.toFixed(2)}× |`);
}
if (opts.json) {
  writeFileSync(opts.json, JSON.stringify({ bench: 'transfer-fit', date: new Date().toISOString(), cpu: cpus()[0]?.model, cores: cpus().length, node: process.version, reps, rows }, null, 1) + '\n');
}
