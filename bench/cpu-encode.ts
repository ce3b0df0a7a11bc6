/**
 * CPU encoding benchmark (issue 21): BERT-base (random init, HF's initialisation, bert-base-uncased
 * config and tokenizer, 109.5M parameters) embedding the first 2,000 STS-B test sentences
 * (a1, b1, a2, b2, …) at max length 64 with [CLS] pooling in fp32, in identical batches (longest
 * first, each padded to its longest row) of 32, 64 and 128, on every engine of ours against PyTorch:
 *
 * | engine  | what                                                                        | threads |
 * |---------|-----------------------------------------------------------------------------|---------|
 * | `onnx`  | our encoder on ONNX Runtime (onnxruntime-node, CPU provider), graph exported from the model | cores |
 * | `wasm`  | our encoder on the tfjs forward, tfjs-backend-wasm (XNNPACK SIMD)            | 1 (tfjs runs wasm single-threaded under Node) |
 * | `cpu`   | our encoder on the tfjs forward, tfjs-backend-cpu, on the first `--cpu-sample` sentences at `--cpu-batches` (about 3 s a sentence here) | 1 |
 * | `torch` | bench/torch_cpu_encode.py: BERT's forward in plain PyTorch (Debian python3-torch, OpenBLAS) on the same token rows | 2 |
 *
 * Each engine × batch runs in a process of its own (its peak RSS is the row's), after one warm-up
 * batch; `onnx`, `onnx-bare` and `torch` time `--repeat` passes and report the fastest (a shared
 * machine's other work only ever slows a pass down), `wasm` and `cpu` one pass. Our engines are timed from texts to embeddings through PooledSentenceEncoder
 * (tokenisation, sorting, padding, forward, pooling); PyTorch and `onnx-bare` (ONNX Runtime's
 * session.run on the same graph and pre-built batches) time the forward passes only, so
 * `onnx` ÷ `onnx-bare` is what our tokenisation, batching and pooling cost. tokensPerSecond counts
 * real (unpadded) tokens. maxAbsDiffToTorch compares [CLS] embeddings with PyTorch's at the same
 * batch size. Also measured: the whole SentEval STS suite on the ONNX path (from texts to the
 * table), and `wasm` on one batch of 128 × 128 padded tokens (peak live tensor bytes against the
 * weights, the wasm heap, peak RSS). Each row records the load average before and after and the
 * process's CPU use, since this machine is shared. Writes bench/results/cpu-encode-<time>.json.
 * Not a test: nothing asserts a time.
 *
 *   npx tsx bench/cpu-encode.ts [--model <dir>] [--engines torch,onnx,wasm,cpu] [--batches 32,64,128]
 *        [--sentences 2000] [--cpu-sample 64] [--cpu-batches 32] [--repeat 3] [--no-sts] [--no-long-batch]
 *        [--python /usr/bin/python3]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, availableParallelism, cpus, hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { locateDataDir, locateSharedDir } from '../lib/config.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { chooseInferenceEngine } from '../lib/embed/engines/choose.js';
import { loadOnnxRuntime } from '../lib/embed/engines/onnx-runtime.js';
import { TfjsEngine } from '../lib/embed/engines/tfjs-engine.js';
import { evaluateStsSuite } from '../lib/eval/senteval-sts.js';
import { loadModel } from '../lib/models/auto.js';
import { parseBertConfig } from '../lib/models/bert/config.js';
import type { BertModel } from '../lib/models/bert/model.js';
import { bertParameterShapes } from '../lib/models/bert/weights.js';
import { onnxExporterFor } from '../lib/models/onnx/exporter.js';
import { cachedOnnxGraph } from '../lib/models/onnx/graph-cache.js';
import { writeSafetensors } from '../lib/models/safetensors.js';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import type { EncodedText } from '../lib/models/types.js';
import type { Embeddings } from '../lib/embed/types.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { mulberry32 } from '../lib/util/mulberry32.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const MAX_LENGTH = 64;

const { values: opts } = parseArgs({
  options: {
    model: { type: 'string' },
    engines: { type: 'string', default: 'torch,onnx,wasm,cpu' },
    batches: { type: 'string', default: '32,64,128' },
    sentences: { type: 'string', default: '2000' },
    'cpu-sample': { type: 'string', default: '64' },
    'cpu-batches': { type: 'string', default: '32' },
    repeat: { type: 'string', default: '3' },
    'no-sts': { type: 'boolean', default: false },
    'no-long-batch': { type: 'boolean', default: false },
    python: { type: 'string', default: '/usr/bin/python3' },
    // Child-process modes (run by the parent).
    child: { type: 'string' },
    work: { type: 'string' },
    engine: { type: 'string' },
    batch: { type: 'string' },
  },
});

// ---------------------------------------------------------------------------------------------
// Shared helpers

function peakRssMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function load1(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

interface Work {
  modelDir: string;
  texts: string[];
  /** Indices of texts in the benchmark's order (longest first, ties by index): the encoder's order. */
  order: number[];
  onnxCache: string;
}

function readWork(dir: string): Work {
  return JSON.parse(readFileSync(join(dir, 'work.json'), 'utf8')) as Work;
}

/** Child output: one JSON line on stdout starting with RESULT. */
function emit(result: Record<string, unknown>): void {
  console.log(`RESULT ${JSON.stringify(result)}`);
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Children

async function childEngine(work: Work, engine: string, batchSize: number, sample: number | undefined, repeat: number): Promise<void> {
  const backend = engine === 'onnx' ? 'cpu' : engine;
  await initBackend(backend, { quiet: true });
  process.env.ANGLE_ONNX_CACHE = work.onnxCache;
  const m = await loadModel(work.modelDir);
  const texts = sample ? work.texts.slice(0, sample) : work.texts;
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize, engine: engine === 'onnx' ? 'onnx' : 'tfjs', progressThreshold: Infinity, engineOptions: { log: () => {} } });
  const lengths = texts.map((t) => m.tokenizer.encode(t, null, MAX_LENGTH).ids.length);
  const tokens = lengths.reduce((a, b) => a + b, 0);
  // Warm-up: the longest batch (graph load, kernels, weight copies).
  const longest = texts.map((_, i) => i).sort((a, b) => lengths[b] - lengths[a] || a - b);
  await enc.encode(longest.slice(0, batchSize).map((i) => texts[i]));
  const load = load1();
  const passes: number[] = [];
  let e: Embeddings | undefined;
  let cpu = 0;
  for (let r = 0; r < repeat; r++) {
    const c0 = cpuSeconds();
    const t0 = performance.now();
    e = await enc.encode(texts);
    passes.push((performance.now() - t0) / 1000);
    cpu = Math.max(cpu, (cpuSeconds() - c0) / passes[r]);
  }
  const seconds = Math.min(...passes);
  e = e!;
  writeFileSync(join(workDir(), `emb-${engine}-${batchSize}.f32`), new Uint8Array(e.data.buffer, e.data.byteOffset, e.data.byteLength));
  const eng = engine === 'onnx' ? await chooseInferenceEngine(m.model, { engine: 'onnx', log: () => {} }) : new TfjsEngine(m.model);
  const threads = engine === 'onnx' ? availableParallelism() : 1;
  emit({ seconds, passSeconds: passes, sentences: texts.length, tokens, peakRssMiB: peakRssMiB(), threads, cpuPerWallSecond: cpu, load1: load, description: eng.description });
}

async function childOnnxPrepare(work: Work): Promise<void> {
  await initBackend('cpu', { quiet: true });
  const m = await loadModel(work.modelDir);
  const t0 = performance.now();
  const g = cachedOnnxGraph(m.model, onnxExporterFor('bert')!, { hiddenStates: false }, { dir: work.onnxCache });
  emit({ seconds: (performance.now() - t0) / 1000, path: g.path, built: g.built, peakRssMiB: peakRssMiB() });
}

async function childOnnxBare(work: Work, batchSize: number, graphPath: string, repeat: number): Promise<void> {
  const rt = await loadOnnxRuntime();
  if ('error' in rt) throw new Error(rt.error);
  const { ort } = rt;
  const tok = HfTokenizer.fromDir(work.modelDir);
  const rows = work.order.map((i) => tok.encode(work.texts[i], null, MAX_LENGTH));
  const session = await ort.InferenceSession.create(graphPath, { executionProviders: ['cpu'], intraOpNumThreads: availableParallelism(), interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  const feeds = [];
  let tokens = 0;
  for (let s = 0; s < rows.length; s += batchSize) {
    const b = tok.pad(rows.slice(s, s + batchSize));
    const i64 = (a: Int32Array) => new ort.Tensor('int64', BigInt64Array.from(a, (x) => BigInt(x)), [b.batch, b.seqLen]);
    feeds.push({ input_ids: i64(b.inputIds), attention_mask: i64(b.attentionMask), token_type_ids: i64(b.tokenTypeIds) });
    tokens += b.attentionMask.reduce((x, y) => x + y, 0);
  }
  await session.run(feeds[0]);
  const load = load1();
  const passes: number[] = [];
  let cpu = 0;
  for (let r = 0; r < repeat; r++) {
    const c0 = cpuSeconds();
    const t0 = performance.now();
    for (const f of feeds) await session.run(f, ['last_hidden_state']);
    passes.push((performance.now() - t0) / 1000);
    cpu = Math.max(cpu, (cpuSeconds() - c0) / passes[r]);
  }
  emit({ seconds: Math.min(...passes), passSeconds: passes, sentences: rows.length, tokens, peakRssMiB: peakRssMiB(), threads: availableParallelism(), cpuPerWallSecond: cpu, load1: load });
}

async function childSts(work: Work): Promise<void> {
  await initBackend('cpu', { quiet: true });
  process.env.ANGLE_ONNX_CACHE = work.onnxCache;
  const t0 = performance.now();
  const m = await loadModel(work.modelDir);
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize: 64, engine: 'onnx', engineOptions: { log: () => {} } });
  const load = load1();
  const c0 = cpuSeconds();
  const t1 = performance.now();
  const r = await evaluateStsSuite(enc, { dataDir: locateDataDir()?.path });
  const seconds = (performance.now() - t1) / 1000;
  emit({
    seconds,
    secondsWithModelLoad: (performance.now() - t0) / 1000,
    sentences: r.sentences,
    averagePercent: r.averagePercent,
    percent: r.percent,
    phases: r.seconds,
    peakRssMiB: peakRssMiB(),
    cpuPerWallSecond: (cpuSeconds() - c0) / seconds,
    load1: load,
  });
}

/** wasm, one batch of 128 rows × 128 padded tokens: peak live tensor bytes, wasm heap, RSS. */
async function childWasmLong(work: Work): Promise<void> {
  await initBackend('wasm', { quiet: true });
  const m = await loadModel(work.modelDir);
  const weightBytes = 4 * m.model.numParameters();
  const rows: EncodedText[] = work.order.slice(0, 128).map((i) => m.tokenizer.encode(work.texts[i], null, 128));
  const batch = m.tokenizer.pad(rows, { padding: 'max_length', maxLength: 128 });
  const engine = new TfjsEngine(m.model);
  const before = tf.memory().numBytes;
  const load = load1();
  const t0 = performance.now();
  const profile = await tf.profile(async () => {
    const o = await engine.run(batch, { hiddenStates: false });
    return o.lastHiddenState;
  });
  const seconds = (performance.now() - t0) / 1000;
  const peak = profile.peakBytes;
  tf.dispose(profile.result as tf.Tensor);
  const copies = (m.model as BertModel as unknown as { inference: { bytes(): number } }).inference.bytes();
  const heap = (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.byteLength;
  emit({
    rows: batch.batch,
    seqLen: batch.seqLen,
    seconds,
    weightBytes,
    tensorBytesBefore: before,
    peakLiveTensorBytes: peak,
    peakOverWeights: peak / weightBytes,
    transposedWeightCopiesBytes: copies,
    peakOverWeightsAndCopies: peak / (weightBytes + copies),
    maxPaddedTokensPerPass: engine.maxPaddedTokens(128),
    wasmHeapBytes: heap,
    peakRssMiB: peakRssMiB(),
    load1: load,
  });
}

function workDir(): string {
  return opts.work!;
}

// ---------------------------------------------------------------------------------------------
// Parent

/** HF's initialisation (normal(0, 0.02) weights and embeddings, zero biases, LayerNorm 1 and 0), seeded. */
function writeRandomBertBase(dir: string, tokenizerDir: string, seed = 1234): number {
  mkdirSync(dir, { recursive: true });
  const raw = JSON.parse(readFileSync(join(tokenizerDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  raw.architectures = ['BertModel'];
  writeFileSync(join(dir, 'config.json'), JSON.stringify(raw, null, 2));
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'vocab.txt']) copyFileSync(join(tokenizerDir, f), join(dir, f));
  const next = mulberry32(seed);
  const uniform = () => (next() + 0.5) / 4294967296;
  const cfg = parseBertConfig(raw, join(tokenizerDir, 'config.json'));
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  let params = 0;
  for (const [name, shape] of bertParameterShapes(cfg, true)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (name.endsWith('LayerNorm.weight')) data.fill(1);
    else if (!name.endsWith('.bias')) {
      for (let i = 0; i < n; i += 2) {
        const r = Math.sqrt(-2 * Math.log(uniform())) * 0.02;
        const a = 2 * Math.PI * uniform();
        data[i] = r * Math.cos(a);
        if (i + 1 < n) data[i + 1] = r * Math.sin(a);
      }
    }
    tensors[name] = { shape, data };
    params += n;
  }
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  return params;
}

interface ChildResult {
  ok: boolean;
  result?: Record<string, unknown>;
  error?: string;
  load1Before: number;
  load1After: number;
  wallSeconds: number;
}

function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildResult {
  const load1Before = load1();
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const wallSeconds = (performance.now() - t0) / 1000;
  const load1After = load1();
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('RESULT ') || l.startsWith('{'));
  if (r.status === 0 && line) return { ok: true, result: JSON.parse(line.replace(/^RESULT /, '')) as Record<string, unknown>, load1Before, load1After, wallSeconds };
  const tail = `${r.stderr ?? ''}\n${r.stdout ?? ''}`.trim().split('\n').slice(-3).join(' | ');
  return { ok: false, error: `exit ${r.status ?? r.signal}: ${tail}`, load1Before, load1After, wallSeconds };
}

function nodeChild(args: string[]): ChildResult {
  return runChild(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args]);
}

function readF32(path: string): Float32Array {
  const b = readFileSync(path);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

async function parent(): Promise<void> {
  const engines = opts.engines!.split(',').map((s) => s.trim());
  const batches = opts.batches!.split(',').map(Number);
  const nSentences = Number(opts.sentences);
  const cpuSample = Number(opts['cpu-sample']);
  const cpuBatches = opts['cpu-batches']!.split(',').map(Number);
  const repeat = Number(opts.repeat);
  const work = mkdtempSync(join(tmpdir(), 'cpu-encode-'));
  const log = (l: string) => console.log(l);
  try {
    const shared = locateSharedDir();
    let modelDir = opts.model;
    let params: number | undefined;
    if (!modelDir) {
      const tokDir = shared && join(shared.path, 'models', 'bert-base-uncased-tokenizer');
      if (!tokDir || !existsSync(tokDir)) throw new Error('no bert-base-uncased tokenizer/config: pass --model <dir> or keep ../shared (models/bert-base-uncased-tokenizer) beside the repository');
      modelDir = join(work, 'bert-base-random');
      params = writeRandomBertBase(modelDir, tokDir);
      log(`model: random BERT-base (${(params / 1e6).toFixed(1)}M parameters) in ${modelDir}`);
    }
    const pairs = loadStsBenchmark('test', { dataDir: locateDataDir()?.path }).pairs.slice(0, Math.ceil(nSentences / 2));
    const texts = pairs.flatMap((p) => [p.a, p.b]).slice(0, nSentences);
    const tok = HfTokenizer.fromDir(modelDir);
    const encoded = texts.map((t) => tok.encode(t, null, MAX_LENGTH));
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].ids.length - encoded[a].ids.length || a - b);
    const w: Work = { modelDir, texts, order, onnxCache: join(work, 'onnx-cache') };
    writeFileSync(join(work, 'work.json'), JSON.stringify(w));
    writeFileSync(join(work, 'rows.json'), JSON.stringify({ rows: order.map((i) => ({ ids: encoded[i].ids, typeIds: encoded[i].typeIds })) }));
    const tokens = encoded.reduce((s, e) => s + e.ids.length, 0);
    log(`workload: ${texts.length} STS-B test sentences, ${tokens} tokens at max length ${MAX_LENGTH}; batches ${batches.join(', ')}; load average ${readFileSync('/proc/loadavg', 'utf8').trim()}`);

    const rows: Array<Record<string, unknown>> = [];
    const torchEmb = new Map<number, Float32Array>();
    let graphPath: string | undefined;
    let onnxExport: Record<string, unknown> | undefined;
    if (engines.includes('onnx')) {
      const r = nodeChild(['--child', 'onnx-prepare', '--work', work]);
      if (!r.ok) throw new Error(`exporting the ONNX graph failed: ${r.error}`);
      graphPath = r.result!.path as string;
      onnxExport = { seconds: r.result!.seconds, peakRssMiB: r.result!.peakRssMiB };
      log(`onnx: graph exported in ${(r.result!.seconds as number).toFixed(1)} s`);
    }
    for (const engine of engines) {
      for (const batch of engine === 'cpu' ? cpuBatches : batches) {
        let r: ChildResult;
        if (engine === 'torch') {
          const out = join(work, `emb-torch-${batch}.f32`);
          r = runChild(opts.python!, [join(here, 'torch_cpu_encode.py'), '--model', modelDir, '--rows', join(work, 'rows.json'), '--batch', String(batch), '--threads', '2', '--repeat', String(repeat), '--out', out]);
          if (r.ok) {
            // Rows come back in the benchmark's order: put them in input order.
            const sorted = readF32(out);
            const dim = sorted.length / order.length;
            const byInput = new Float32Array(sorted.length);
            order.forEach((orig, k) => byInput.set(sorted.subarray(k * dim, (k + 1) * dim), orig * dim));
            torchEmb.set(batch, byInput);
          }
        } else {
          const sample = engine === 'cpu' ? String(cpuSample) : '0';
          // wasm and cpu take minutes a pass: one pass.
          const passes = engine === 'onnx' ? repeat : 1;
          r = nodeChild(['--child', 'engine', '--work', work, '--engine', engine, '--batch', String(batch), '--sentences', sample, '--repeat', String(passes)]);
        }
        const row: Record<string, unknown> = { engine, batch, load1Before: r.load1Before, load1After: r.load1After };
        if (!r.ok) {
          row.error = r.error;
          log(`${engine} batch ${batch}: error ${r.error}`);
        } else {
          const x = r.result!;
          const seconds = x.seconds as number;
          Object.assign(row, {
            threads: x.threads,
            sentences: x.sentences,
            tokensPerSecond: (x.tokens as number) / seconds,
            sentencesPerSecond: (x.sentences as number) / seconds,
            peakRssMiB: x.peakRssMiB,
            seconds,
            passSeconds: x.passSeconds,
            cpuUtilisation: x.cpuPerWallSecond !== undefined ? (x.cpuPerWallSecond as number) / (x.threads as number) : undefined,
            ...(x.description ? { description: x.description } : {}),
            ...(x.torch ? { description: `PyTorch ${x.torch} (${x.blas}), plain BERT forward` } : {}),
          });
          if (engine !== 'torch') {
            const mine = readF32(join(work, `emb-${engine}-${batch}.f32`));
            const ref = torchEmb.get(batch);
            if (ref) {
              let d = 0;
              for (let i = 0; i < mine.length; i++) d = Math.max(d, Math.abs(mine[i] - ref[i]));
              row.maxAbsDiffToTorch = d;
            }
          }
          if (engine === 'onnx' && graphPath) {
            const bare = nodeChild(['--child', 'onnx-bare', '--work', work, '--batch', String(batch), '--engine', graphPath, '--repeat', String(repeat)]);
            if (bare.ok) {
              const b = bare.result!;
              row.bareGraphTokensPerSecond = (b.tokens as number) / (b.seconds as number);
              row.bareGraphPeakRssMiB = b.peakRssMiB;
              row.fractionOfBareGraphRate = (row.tokensPerSecond as number) / (row.bareGraphTokensPerSecond as number);
            } else row.bareGraphError = bare.error;
          }
          log(
            `${engine.padEnd(5)} batch ${String(batch).padStart(3)}: ${(row.sentencesPerSecond as number).toFixed(1)} sentences/s, ${(row.tokensPerSecond as number).toFixed(0)} tokens/s, peak RSS ${(row.peakRssMiB as number).toFixed(0)} MiB` +
              (row.maxAbsDiffToTorch !== undefined ? `, max |diff| to torch ${(row.maxAbsDiffToTorch as number).toExponential(1)}` : '') +
              (row.fractionOfBareGraphRate !== undefined ? `, ${((row.fractionOfBareGraphRate as number) * 100).toFixed(0)}% of the bare graph's rate` : '') +
              ` (load ${r.load1Before.toFixed(2)} -> ${r.load1After.toFixed(2)})`,
          );
        }
        rows.push(row);
      }
    }

    let stsSuite: Record<string, unknown> | undefined;
    if (!opts['no-sts'] && engines.includes('onnx')) {
      const r = nodeChild(['--child', 'sts', '--work', work]);
      stsSuite = r.ok ? { ...r.result, load1Before: r.load1Before, load1After: r.load1After } : { error: r.error };
      log(r.ok ? `STS suite on onnx: ${(r.result!.seconds as number).toFixed(1)} s for ${r.result!.sentences} sentences (load ${r.load1Before.toFixed(2)} -> ${r.load1After.toFixed(2)})` : `STS suite: error ${r.error}`);
    }
    let wasmLongBatch: Record<string, unknown> | undefined;
    if (!opts['no-long-batch'] && engines.includes('wasm')) {
      const r = nodeChild(['--child', 'wasm-long', '--work', work]);
      wasmLongBatch = r.ok ? { ...r.result, load1Before: r.load1Before, load1After: r.load1After } : { error: r.error };
      log(r.ok ? `wasm 128 x 128: ${(r.result!.seconds as number).toFixed(1)} s, peak live tensors ${((r.result!.peakOverWeights as number)).toFixed(2)}x the weights, wasm heap ${((r.result!.wasmHeapBytes as number) / 2 ** 30).toFixed(2)} GiB` : `wasm 128 x 128: error ${r.error}`);
    }

    const at = (engine: string, batch: number) => rows.find((r) => r.engine === engine && r.batch === batch && r.error === undefined);
    const onnx64 = at('onnx', 64);
    const torch64 = at('torch', 64);
    const maxRss = (engine: string) => {
      const v = rows.filter((r) => r.engine === engine && r.peakRssMiB !== undefined).map((r) => r.peakRssMiB as number);
      return v.length ? Math.max(...v) : undefined;
    };
    const torchRss = maxRss('torch');
    const onnxRss = maxRss('onnx');
    const targets = {
      onnxOverTorchTokensPerSecondAtBatch64: onnx64 && torch64 ? (onnx64.tokensPerSecond as number) / (torch64.tokensPerSecond as number) : undefined,
      onnxFractionOfBareGraphRateAtBatch64: onnx64?.fractionOfBareGraphRate,
      stsSuiteSeconds: stsSuite?.seconds,
      peakRssMiB: { onnx: onnxRss, torch: torchRss },
      wasmLongBatchPeakOverWeights: wasmLongBatch?.peakOverWeights,
    };
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    } catch {
      /* not a git checkout */
    }
    const when = new Date().toISOString();
    const record = {
      benchmark: 'cpu-encode',
      when,
      commit,
      machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, tfjsCore: tf.version_core, loadavgAtEnd: readFileSync('/proc/loadavg', 'utf8').trim() },
      model: opts.model ? { dir: opts.model } : { what: 'random BERT-base, HF initialisation (seed 1234), bert-base-uncased config and tokenizer', parameters: params },
      workload: { sentences: texts.length, source: 'STS-B test, first pairs, a1 b1 a2 b2 ...', maxLength: MAX_LENGTH, tokens, pooling: 'cls', dtype: 'float32', batching: 'longest first, each batch padded to its longest row', batches, cpuSample, cpuBatches },
      method: `each engine x batch in its own process after one warm-up batch; ours timed through PooledSentenceEncoder (texts to embeddings), torch and the bare ONNX graph time forward passes on pre-built batches; seconds = the fastest of ${repeat} passes for onnx, onnx-bare and torch (passSeconds lists them), one pass for wasm and cpu; tokensPerSecond counts real tokens; peak RSS is VmHWM / ru_maxrss of that process; cpuUtilisation = the highest process CPU seconds per wall second and thread over the passes, below 1 when the shared machine was busy`,
      onnxExport,
      rows,
      stsSuite,
      wasmLongBatch,
      targets,
    };
    const file = join(root, 'bench', 'results', `cpu-encode-${when.replace(/[:.]/g, '-')}.json`);
    await writeFileAtomic(file, JSON.stringify(record, null, 2) + '\n');
    log(`targets: ${JSON.stringify(targets)}`);
    log(`wrote ${file}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

if (opts.child) {
  const work = readWork(opts.work!);
  switch (opts.child) {
    case 'engine':
      await childEngine(work, opts.engine!, Number(opts.batch), Number(opts.sentences) || undefined, Number(opts.repeat));
      break;
    case 'onnx-prepare':
      await childOnnxPrepare(work);
      break;
    case 'onnx-bare':
      await childOnnxBare(work, Number(opts.batch), opts.engine!, Number(opts.repeat));
      break;
    case 'sts':
      await childSts(work);
      break;
    case 'wasm-long':
      await childWasmLong(work);
      break;
    default:
      throw new Error(`unknown child task ${opts.child}`);
  }
} else {
  await parent();
}
