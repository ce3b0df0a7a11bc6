/**
 * The float32 GEMM ceiling of ONNX Runtime's CPU provider on this machine (issue 29): one MatMul
 * with a constant weight (what MLAS pre-packs, as in every BERT dense layer) at BERT-base's four
 * dense shapes — [rows, 768]·[768, 2304] (Q, K, V), ·[768, 768] (attention output),
 * ·[768, 3072] (intermediate), [rows, 3072]·[3072, 768] (output) — for a range of rows (the
 * tokens of a batch), on one thread and on one per core. An encoder whose time is nearly all
 * GEMM cannot run faster than this many FLOP/s, whatever its graph; bench/cpu-encode.ts's rates
 * divided by it say how close each graph gets. Writes bench/results/ort-gemm-ceiling-<time>.json.
 * Not a test: nothing asserts a time.
 *
 *   npx tsx bench/ort-gemm-ceiling.ts [--rows 256,512,896,1536,2048] [--repeat 5]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadOnnxRuntime } from '../lib/embed/engines/onnx-runtime.js';
import { OnnxGraphBuilder } from '../lib/models/onnx/graph-builder.js';
import { encodeOnnxModel } from '../lib/models/onnx/model-file.js';
import { ONNX_DTYPE } from '../lib/models/onnx/proto.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { mulberry32 } from '../lib/util/mulberry32.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({ options: { rows: { type: 'string', default: '256,512,896,1536,2048' }, repeat: { type: 'string', default: '5' } } });
const rowsList = opts.rows!.split(',').map(Number);
const repeat = Number(opts.repeat);
const SHAPES: Array<[string, number, number]> = [
  ['qkv', 768, 2304],
  ['attention-output', 768, 768],
  ['intermediate', 768, 3072],
  ['output', 3072, 768],
];

const rt = await loadOnnxRuntime();
if ('error' in rt) throw new Error(rt.error);
const { ort } = rt;
const next = mulberry32(7);
const random = (n: number) => Float32Array.from({ length: n }, () => next() / 4294967296 - 0.5);
const results: Array<Record<string, unknown>> = [];
for (const threads of [1, availableParallelism()]) {
  for (const [name, k, n] of SHAPES) {
    const g = new OnnxGraphBuilder('gemm');
    const x = g.input('x', ONNX_DTYPE.float, ['rows', k]);
    g.output(g.op('MatMul', [x, g.initializer('w', random(k * n), [k, n])], {}, { output: 'y' }), ONNX_DTYPE.float, ['rows', n]);
    const model = encodeOnnxModel(g.model({ opsets: { '': 17 }, producer: 'bench/ort-gemm-ceiling.ts', producerVersion: '1' }));
    const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 3 });
    for (const m of rowsList) {
      const feed = { x: new ort.Tensor('float32', random(m * k), [m, k]) };
      await session.run(feed);
      let best = Infinity;
      for (let r = 0; r < repeat; r++) {
        const t0 = performance.now();
        for (let i = 0; i < 5; i++) await session.run(feed);
        best = Math.min(best, (performance.now() - t0) / 5000);
      }
      const gflops = (2 * m * k * n) / best / 1e9;
      results.push({ threads, shape: name, rows: m, k, n, seconds: best, gflopsPerSecond: gflops });
      console.log(`${threads} thread${threads > 1 ? 's' : ''}, ${name.padEnd(16)} [${m}, ${k}]·[${k}, ${n}]: ${gflops.toFixed(1)} GFLOP/s`);
    }
    await session.release();
  }
}
const best = (threads: number) => Math.max(...results.filter((r) => r.threads === threads).map((r) => r.gflopsPerSecond as number));
const median = (threads: number) => {
  const v = results.filter((r) => r.threads === threads).map((r) => r.gflopsPerSecond as number).sort((a, b) => a - b);
  return v[v.length >> 1];
};
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
} catch {
  /* not a git checkout */
}
const when = new Date().toISOString();
const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].split(/\s+/).filter((f) => /^(avx|fma|amx)/.test(f)) ?? [];
const record = {
  benchmark: 'ort-gemm-ceiling',
  when,
  commit,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, simd: flags, onnxRuntime: rt.version, loadavgAtEnd: readFileSync('/proc/loadavg', 'utf8').trim() },
  method: `one MatMul with a constant float32 weight per shape, ${repeat} rounds of 5 runs after a warm-up, seconds = the fastest round's mean; FLOPs = 2·rows·k·n`,
  results,
  summary: Object.fromEntries([1, availableParallelism()].map((t) => [`threads${t}`, { bestGflopsPerSecond: best(t), medianGflopsPerSecond: median(t) }])),
};
const out = join(root, 'bench', 'results', `ort-gemm-ceiling-${when.replace(/[:.]/g, '-')}.json`);
mkdirSync(dirname(out), { recursive: true });
await writeFileAtomic(out, JSON.stringify(record, null, 2) + '\n');
console.log(`wrote ${out}`);
