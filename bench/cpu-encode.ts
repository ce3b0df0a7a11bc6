/**
 * CPU encoding benchmark (issues 21 and 29): BERT-base (random init, HF's initialisation,
 * bert-base-uncased config and tokenizer, 109.5M parameters) embedding the first `--sentences`
 * STS-B test sentences (a1, b1, a2, b2, …) at max length 64 with [CLS] pooling in fp32, in
 * identical batches (longest first, each padded to its longest row), on our engines against
 * PyTorch and against ONNX Runtime on PyTorch's own ONNX export of the same weights:
 *
 * | engine              | what                                                                  |
 * |---------------------|-----------------------------------------------------------------------|
 * | `onnx`              | our encoder, texts to embeddings, on ONNX Runtime over our fused graph (packed tokens, com.microsoft MultiHeadAttention and Gelu; with [CLS] pooling the last layer for [CLS] only), the model loaded for inference only (loadOnnxInferenceModel: no tfjs copy of the weights) |
 * | `onnx-bare`         | ONNX Runtime's session.run alone on the fused graph (every row of the last layer) and pre-built packed batches |
 * | `onnx-cls-bare`     | the same on the [CLS]-only fused graph the `onnx` row runs                |
 * | `onnx-standard-bare`| the same on our standard-operator graph (what any ONNX runtime runs)   |
 * | `ort-torch-export`  | the same on `torch.onnx.export` of the same weights (bench/torch_cpu_encode.py --export-onnx): the reference plain export |
 * | `onnx-int8`         | our encoder on the int8 dynamically quantised fused graph (an option, never the default) |
 * | `onnx-loadmodel`    | our encoder on the model from loadModel (tfjs weights kept beside ONNX Runtime's): the memory before issue 29 |
 * | `torch`             | bench/torch_cpu_encode.py: BERT's forward in plain PyTorch (Debian python3-torch, OpenBLAS), 2 threads |
 * | `wasm`, `cpu`       | our encoder on the tfjs forward (wasm single-threaded; cpu on `--cpu-sample` sentences) |
 *
 * Rates: per batch size, one process loads every ONNX Runtime variant (`onnx`, `onnx-bare`,
 * `onnx-cls-bare`, `onnx-standard-bare`, `ort-torch-export`, `onnx-int8`) and times `--repeat` rounds of one pass
 * each, in an order that rotates every round, so the ratios between them are measured in the same
 * run under the same load; a row's rate is its fastest pass (a shared machine's other work only
 * ever slows a pass down). PyTorch runs in its own process, alternated with those of `onnx`
 * (peak RSS: each engine once more in a process of its own). tokensPerSecond counts real
 * (unpadded) tokens. maxAbsDiffToTorch compares [CLS] embeddings with PyTorch's. Also measured:
 * the whole SentEval STS suite on `onnx` and on `onnx-int8` (seconds, and every Spearman), and
 * optionally `wasm` on one 128 × 128 batch. Each row records the load average and the process's
 * CPU use, since this machine is shared. Writes bench/results/cpu-encode-<time>.json. Not a test:
 * nothing asserts a time.
 *
 *   npx tsx bench/cpu-encode.ts [--model <dir>] [--engines torch,onnx,ort-torch-export,onnx-int8,onnx-loadmodel]
 *        [--batches 32,64,128] [--sentences 2000] [--cpu-sample 64] [--cpu-batches 32] [--repeat 3]
 *        [--no-sts] [--no-long-batch] [--profile] [--python /usr/bin/python3]
 *
 * `--profile` adds, to each bare alternated row, its share of kernel time by operator from ONNX
 * Runtime's profiler (kernelTimeShareByOp), measured in one more pass after the timed ones.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { loadModel, onnxExporterFor } from '../lib/models/auto.js';
import { parseBertConfig } from '../lib/models/bert/config.js';
import type { BertModel } from '../lib/models/bert/model.js';
import { bertParameterShapes } from '../lib/models/bert/weights.js';
import { loadOnnxInferenceModel } from '../lib/embed/engines/onnx-inference-model.js';
import { cachedOnnxGraphByAlias, onnxGraphAliasKey } from '../lib/models/onnx/graph-cache.js';
import { weightFiles, weightsSha256 } from '../lib/models/weight-files.js';
import { writeSafetensors } from '../lib/models/safetensors.js';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import type { EncodedText, TextTokenizer, TokenBatch } from '../lib/models/types.js';
import { packBatch, packedFeeds, paddedFeeds } from '../lib/embed/engines/graph-feeds.js';
import type { Embeddings } from '../lib/embed/types.js';
import { portableModelRef } from '../lib/report/training-record.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { mulberry32 } from '../lib/util/mulberry32.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const MAX_LENGTH = 64;

const { values: opts } = parseArgs({
  options: {
    model: { type: 'string' },
    engines: { type: 'string', default: 'torch,onnx,ort-torch-export,onnx-int8,onnx-loadmodel' },
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
    quantize: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
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
  /** Graph files of the bare ONNX Runtime rows (written by the prepare step). */
  graphs?: Record<string, string>;
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

/** The encoder of an engine row: ONNX Runtime rows load the model for inference only, except onnx-loadmodel. */
async function encoderFor(work: Work, engine: string, batchSize: number): Promise<{ enc: PooledSentenceEncoder; tokenizer: TextTokenizer; description: string; threads: number }> {
  const backend = engine.startsWith('onnx') ? 'cpu' : engine;
  await initBackend(backend, { quiet: true });
  process.env.ANGLE_ONNX_CACHE = work.onnxCache;
  if (engine === 'onnx' || engine === 'onnx-int8') {
    const m = await loadOnnxInferenceModel(work.modelDir, { cache: { dir: work.onnxCache }, ...(engine === 'onnx-int8' ? { quantize: 'int8' as const } : {}) });
    const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize, progressThreshold: Infinity });
    return { enc, tokenizer: m.tokenizer, description: m.model.inferenceEngine.description, threads: availableParallelism() };
  }
  const m = await loadModel(work.modelDir);
  const onnx = engine === 'onnx-loadmodel';
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize, engine: onnx ? 'onnx' : 'tfjs', progressThreshold: Infinity, engineOptions: { log: () => {} } });
  const eng = onnx ? await chooseInferenceEngine(m.model, { engine: 'onnx', log: () => {} }) : new TfjsEngine(m.model);
  return { enc, tokenizer: m.tokenizer, description: eng.description, threads: onnx ? availableParallelism() : 1 };
}

async function childEngine(work: Work, engine: string, batchSize: number, sample: number | undefined, repeat: number): Promise<void> {
  const { enc, tokenizer, description, threads } = await encoderFor(work, engine, batchSize);
  const texts = sample ? work.texts.slice(0, sample) : work.texts;
  const lengths = texts.map((t) => tokenizer.encode(t, null, MAX_LENGTH).ids.length);
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
  emit({ seconds, passSeconds: passes, sentences: texts.length, tokens, peakRssMiB: peakRssMiB(), threads, cpuPerWallSecond: cpu, load1: load, description });
}

/**
 * Writes every graph the ONNX Runtime rows run into the work cache: ours fused, standard and int8
 * (through loadOnnxInferenceModel, so the inference-only loads later find them by alias), and
 * PyTorch's torch.onnx export of the same weights.
 */
async function childPrepare(work: Work, python: string): Promise<void> {
  await initBackend('cpu', { quiet: true });
  const cache = { dir: work.onnxCache };
  const configText = readFileSync(join(work.modelDir, 'config.json'), 'utf8');
  const files = weightFiles(work.modelDir);
  const sha = await weightsSha256(files);
  const exporter = onnxExporterFor('bert')!;
  const graphs: Record<string, string> = {};
  const seconds: Record<string, number> = {};
  for (const [name, opts] of [
    ['onnx-bare', { fused: true }],
    ['onnx-cls-bare', { fused: true, rows: 'first' as const }],
    ['onnx-standard-bare', { fused: false }],
    ['onnx-int8', { fused: true, quantize: 'int8' as const }],
  ] as const) {
    const t0 = performance.now();
    const { rows, ...load } = opts as { fused: boolean; rows?: 'first'; quantize?: 'int8' };
    const m = await loadOnnxInferenceModel(work.modelDir, { cache, graph: 'export', ...load });
    // the [CLS]-only graph is exported on its first use by a [CLS] encoder
    if (rows) await new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, progressThreshold: Infinity }).encode(['warm-up']);
    m.model.dispose();
    seconds[name] = (performance.now() - t0) / 1000;
    const hit = cachedOnnxGraphByAlias(onnxGraphAliasKey(exporter, { hiddenStates: false, ...opts }, configText, sha), cache);
    if (!hit) throw new Error(`${name}: the exported graph is not in the cache`);
    graphs[name] = hit.path;
  }
  const torchPath = join(workDir(), 'torch-export', 'model.onnx');
  mkdirSync(dirname(torchPath), { recursive: true });
  const r = spawnSync(python, [join(here, 'torch_cpu_encode.py'), '--model', work.modelDir, '--export-onnx', torchPath], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`torch.onnx export failed: ${r.stderr.split('\n').slice(-3).join(' | ')}`);
  const torchExport = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  graphs['ort-torch-export'] = torchPath;
  emit({ graphs, exportSeconds: seconds, torchExport, peakRssMiB: peakRssMiB() });
}

/**
 * The ONNX Runtime rows of one batch size in one process, alternated: `repeat` rounds, each
 * timing one pass of every row, the order rotating by one every round.
 */
async function childAlternate(work: Work, batchSize: number, repeat: number, rowsWanted: string[]): Promise<void> {
  await initBackend('cpu', { quiet: true });
  const rt = await loadOnnxRuntime();
  if ('error' in rt) throw new Error(rt.error);
  const { ort } = rt;
  const graphs = work.graphs ?? {};
  const cache = { dir: work.onnxCache };
  const tok = HfTokenizer.fromDir(work.modelDir);
  const rows = work.order.map((i) => tok.encode(work.texts[i], null, MAX_LENGTH));
  // the same batches in both layouts: padded (HF's) for the standard graph and the torch export,
  // packed for our fused graphs (lib/embed/engines/graph-feeds.ts)
  const batches: TokenBatch[] = [];
  let tokens = 0;
  for (let s = 0; s < rows.length; s += batchSize) {
    const b = tok.pad(rows.slice(s, s + batchSize));
    batches.push(b);
    tokens += b.attentionMask.reduce((x, y) => x + y, 0);
  }
  const paddedInputs = ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => ({ name, type: 'int64' as const }));
  const sessionOptions = { executionProviders: ['cpu'], intraOpNumThreads: availableParallelism(), interOpNumThreads: 1, graphOptimizationLevel: 'all' as const, logSeverityLevel: 3 as const };
  const runners: Record<string, () => Promise<void>> = {};
  const bare: Record<string, { path: string; feeds: Record<string, unknown>[] }> = {};
  const cls: Record<string, Float32Array> = {};
  for (const row of rowsWanted) {
    if (row === 'onnx' || row === 'onnx-int8') {
      const m = await loadOnnxInferenceModel(work.modelDir, { cache, ...(row === 'onnx-int8' ? { quantize: 'int8' as const } : {}) });
      const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize, progressThreshold: Infinity });
      runners[row] = async () => {
        const e = await enc.encode(work.texts);
        cls[row] = e.data;
      };
    } else {
      const path = row === 'onnx-int8-bare' ? graphs['onnx-int8'] : graphs[row];
      if (!path) throw new Error(`no graph for ${row}`);
      const session = await ort.InferenceSession.create(path, sessionOptions);
      const packed = row === 'onnx-bare' || row === 'onnx-cls-bare' || row === 'onnx-int8-bare';
      const feeds = batches.map((b) => (packed ? packedFeeds(ort, b, packBatch(b), session.inputNames) : paddedFeeds(ort, b, paddedInputs)));
      bare[row] = { path, feeds };
      runners[row] = async () => {
        for (const f of feeds) await session.run(f, ['last_hidden_state']);
      };
    }
    await runners[row](); // warm-up pass (prepacking, first allocations)
  }
  const names = Object.keys(runners);
  const passes: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const cpu: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const load = load1();
  for (let r = 0; r < repeat; r++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(k + r) % names.length];
      const c0 = cpuSeconds();
      const t0 = performance.now();
      await runners[n]();
      const sec = (performance.now() - t0) / 1000;
      passes[n].push(sec);
      cpu[n] = Math.max(cpu[n], (cpuSeconds() - c0) / sec);
    }
  }
  // --profile: each bare row's share of kernel time by operator, from ONNX Runtime's own profiler,
  // in one more pass per row after the timed rounds (profiling costs time, so never in them)
  const opShares: Record<string, Record<string, number>> = {};
  if (opts.profile) {
    for (const [row, { path, feeds }] of Object.entries(bare)) {
      const prefix = `profile-${row}-`;
      const session = await ort.InferenceSession.create(path, { ...sessionOptions, enableProfiling: true, profileFilePrefix: join(workDir(), prefix) });
      for (const f of feeds) await session.run(f as never, ['last_hidden_state']);
      session.endProfiling();
      await session.release();
      const file = readdirSync(workDir()).find((f) => f.startsWith(prefix) && f.endsWith('.json'));
      if (!file) throw new Error(`ONNX Runtime wrote no profile for ${row}`);
      const byOp = new Map<string, number>();
      let total = 0;
      for (const e of JSON.parse(readFileSync(join(workDir(), file), 'utf8')) as Array<{ cat: string; name: string; dur: number; args?: { op_name?: string } }>) {
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !e.args?.op_name) continue;
        byOp.set(e.args.op_name, (byOp.get(e.args.op_name) ?? 0) + e.dur);
        total += e.dur;
      }
      opShares[row] = Object.fromEntries([...byOp].sort((a, b) => b[1] - a[1]).map(([op, us]) => [op, Math.round((1000 * us) / total) / 1000]));
    }
  }
  for (const [row, data] of Object.entries(cls)) writeFileSync(join(workDir(), `emb-${row}-${batchSize}.f32`), new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  emit({
    rows: Object.fromEntries(names.map((n) => [n, { seconds: Math.min(...passes[n]), passSeconds: passes[n], cpuPerWallSecond: cpu[n], ...(opShares[n] ? { kernelTimeShareByOp: opShares[n] } : {}) }])),
    sentences: work.texts.length,
    tokens,
    threads: availableParallelism(),
    load1: load,
    order: 'rotating by one every round',
  });
}

async function childSts(work: Work, quantize: boolean): Promise<void> {
  await initBackend('cpu', { quiet: true });
  process.env.ANGLE_ONNX_CACHE = work.onnxCache;
  const t0 = performance.now();
  const m = await loadOnnxInferenceModel(work.modelDir, { cache: { dir: work.onnxCache }, ...(quantize ? { quantize: 'int8' as const } : {}) });
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: MAX_LENGTH, batchSize: 64 });
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

/** ONNX Runtime rows timed together in the alternating child. */
const ALTERNATED = ['onnx', 'onnx-bare', 'onnx-cls-bare', 'onnx-standard-bare', 'ort-torch-export', 'onnx-int8'];

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

    const alternated = ALTERNATED.filter((e) => engines.includes(e) || (e !== 'onnx' && e !== 'onnx-int8' && engines.includes('onnx')));
    let prepare: Record<string, unknown> | undefined;
    if (alternated.length) {
      const r = nodeChild(['--child', 'prepare', '--work', work, '--python', opts.python!]);
      if (!r.ok) throw new Error(`exporting the ONNX graphs failed: ${r.error}`);
      prepare = r.result!;
      w.graphs = prepare.graphs as Record<string, string>;
      writeFileSync(join(work, 'work.json'), JSON.stringify(w));
      log(`graphs: ours exported in ${JSON.stringify(prepare.exportSeconds)} s; torch.onnx export ${JSON.stringify(prepare.torchExport)}`);
    }

    const rows: Array<Record<string, unknown>> = [];
    const torchEmb = new Map<number, Float32Array>();
    const describe = (row: Record<string, unknown>, r: { load1Before: number; load1After: number }) =>
      log(
        `${String(row.engine).padEnd(18)} batch ${String(row.batch).padStart(3)}: ` +
          (row.error
            ? `error ${row.error}`
            : `${(row.sentencesPerSecond as number).toFixed(1)} sentences/s, ${(row.tokensPerSecond as number).toFixed(0)} tokens/s` +
              (row.peakRssMiB !== undefined ? `, peak RSS ${(row.peakRssMiB as number).toFixed(0)} MiB` : '') +
              (row.maxAbsDiffToTorch !== undefined ? `, max |diff| to torch ${(row.maxAbsDiffToTorch as number).toExponential(1)}` : '')) +
          ` (load ${r.load1Before.toFixed(2)} -> ${r.load1After.toFixed(2)})`,
      );
    const compareToTorch = (row: Record<string, unknown>, file: string, batch: number) => {
      const ref = torchEmb.get(batch);
      if (!ref || !existsSync(file)) return;
      const mine = readF32(file);
      let d = 0;
      for (let i = 0; i < mine.length; i++) d = Math.max(d, Math.abs(mine[i] - ref[i]));
      row.maxAbsDiffToTorch = d;
    };
    const separate = engines.filter((e) => !['onnx-bare', 'onnx-cls-bare', 'onnx-standard-bare', 'ort-torch-export'].includes(e));
    for (const batch of batches) {
      // processes of their own, alternated engine by engine: torch first (the reference embeddings), peak RSS of each
      for (const engine of separate) {
        if (engine === 'cpu') continue;
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
          const passes = engine.startsWith('onnx') ? repeat : 1; // wasm takes minutes a pass
          r = nodeChild(['--child', 'engine', '--work', work, '--engine', engine, '--batch', String(batch), '--sentences', '0', '--repeat', String(passes)]);
        }
        const row: Record<string, unknown> = { engine, batch, process: 'own', load1Before: r.load1Before, load1After: r.load1After };
        if (!r.ok) row.error = r.error;
        else {
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
          if (engine !== 'torch') compareToTorch(row, join(work, `emb-${engine}-${batch}.f32`), batch);
        }
        describe(row, r);
        rows.push(row);
      }
      // the ONNX Runtime variants, alternated in one process
      if (alternated.length) {
        const r = nodeChild(['--child', 'alternate', '--work', work, '--batch', String(batch), '--repeat', String(repeat), '--engine', alternated.join(','), ...(opts.profile ? ['--profile'] : [])]);
        if (!r.ok) {
          const row = { engine: 'alternated', batch, error: r.error, load1Before: r.load1Before, load1After: r.load1After };
          describe(row, r);
          rows.push(row);
        } else {
          const x = r.result!;
          for (const [engine, v] of Object.entries(x.rows as Record<string, { seconds: number; passSeconds: number[]; cpuPerWallSecond: number; kernelTimeShareByOp?: Record<string, number> }>)) {
            const row: Record<string, unknown> = {
              engine,
              batch,
              process: 'alternated',
              threads: x.threads,
              sentences: x.sentences,
              tokensPerSecond: (x.tokens as number) / v.seconds,
              sentencesPerSecond: (x.sentences as number) / v.seconds,
              seconds: v.seconds,
              passSeconds: v.passSeconds,
              cpuUtilisation: v.cpuPerWallSecond / (x.threads as number),
              load1Before: r.load1Before,
              load1After: r.load1After,
              ...(v.kernelTimeShareByOp ? { kernelTimeShareByOp: v.kernelTimeShareByOp } : {}),
            };
            if (engine === 'onnx' || engine === 'onnx-int8') compareToTorch(row, join(work, `emb-${engine}-${batch}.f32`), batch);
            describe(row, r);
            rows.push(row);
          }
        }
      }
    }
    if (engines.includes('cpu')) {
      for (const batch of cpuBatches) {
        const r = nodeChild(['--child', 'engine', '--work', work, '--engine', 'cpu', '--batch', String(batch), '--sentences', String(cpuSample), '--repeat', '1']);
        const row: Record<string, unknown> = { engine: 'cpu', batch, process: 'own', load1Before: r.load1Before, load1After: r.load1After, ...(r.ok ? { sentencesPerSecond: (r.result!.sentences as number) / (r.result!.seconds as number), tokensPerSecond: (r.result!.tokens as number) / (r.result!.seconds as number), peakRssMiB: r.result!.peakRssMiB, seconds: r.result!.seconds, sentences: r.result!.sentences } : { error: r.error }) };
        describe(row, r);
        rows.push(row);
      }
    }

    const stsSuite: Record<string, unknown> = {};
    if (!opts['no-sts'] && engines.includes('onnx')) {
      for (const variant of engines.includes('onnx-int8') ? ['onnx', 'onnx-int8'] : ['onnx']) {
        const r = nodeChild(['--child', 'sts', '--work', work, ...(variant === 'onnx-int8' ? ['--quantize'] : [])]);
        stsSuite[variant] = r.ok ? { ...r.result, load1Before: r.load1Before, load1After: r.load1After } : { error: r.error };
        log(r.ok ? `STS suite on ${variant}: ${(r.result!.seconds as number).toFixed(1)} s for ${r.result!.sentences} sentences, average ${(r.result!.averagePercent as number).toFixed(2)} (load ${r.load1Before.toFixed(2)} -> ${r.load1After.toFixed(2)})` : `STS suite on ${variant}: error ${r.error}`);
      }
    }
    let wasmLongBatch: Record<string, unknown> | undefined;
    if (!opts['no-long-batch'] && engines.includes('wasm')) {
      const r = nodeChild(['--child', 'wasm-long', '--work', work]);
      wasmLongBatch = r.ok ? { ...r.result, load1Before: r.load1Before, load1After: r.load1After } : { error: r.error };
      log(r.ok ? `wasm 128 x 128: ${(r.result!.seconds as number).toFixed(1)} s, peak live tensors ${(r.result!.peakOverWeights as number).toFixed(2)}x the weights, wasm heap ${((r.result!.wasmHeapBytes as number) / 2 ** 30).toFixed(2)} GiB` : `wasm 128 x 128: error ${r.error}`);
    }

    const at = (engine: string, batch: number, proc?: string) => rows.find((r) => r.engine === engine && r.batch === batch && r.error === undefined && (proc === undefined || r.process === proc));
    const rate = (engine: string, batch: number, proc?: string) => at(engine, batch, proc)?.tokensPerSecond as number | undefined;
    const ratio = (a?: number, b?: number) => (a !== undefined && b !== undefined ? a / b : undefined);
    const maxRss = (engine: string) => {
      const v = rows.filter((r) => r.engine === engine && r.peakRssMiB !== undefined).map((r) => r.peakRssMiB as number);
      return v.length ? Math.max(...v) : undefined;
    };
    const spearmanChange = (() => {
      const f = stsSuite.onnx as { percent?: Record<string, number>; averagePercent?: number } | undefined;
      const q = stsSuite['onnx-int8'] as { percent?: Record<string, number>; averagePercent?: number } | undefined;
      if (!f?.percent || !q?.percent) return undefined;
      const per = Object.fromEntries(Object.keys(f.percent).map((k) => [k, q.percent![k] - f.percent![k]]));
      return { averagePoints: (q.averagePercent ?? NaN) - (f.averagePercent ?? NaN), perTaskPoints: per };
    })();
    /** Per round of the alternating child: rate of `a` over rate of `b` (pass time of b over pass time of a), and their median. */
    const perRound = (a: string, b: string, batch: number) => {
      const pa = at(a, batch, 'alternated')?.passSeconds as number[] | undefined;
      const pb = at(b, batch, 'alternated')?.passSeconds as number[] | undefined;
      if (!pa || !pb) return undefined;
      const r = pa.map((t, k) => pb[k] / t);
      const sorted = [...r].sort((x, y) => x - y);
      return { rounds: r, median: sorted[sorted.length >> 1] };
    };
    const targets = {
      note: 'ratios of rows measured in the same run; the alternated rows in one process, passes interleaved (perRound: the ratio within each round, whose passes ran back to back)',
      fusedOverTorchExportAtBatch64: ratio(rate('onnx-bare', 64, 'alternated'), rate('ort-torch-export', 64, 'alternated')),
      clsGraphOverTorchExportAtBatch64: ratio(rate('onnx-cls-bare', 64, 'alternated'), rate('ort-torch-export', 64, 'alternated')),
      encoderOverTorchExportAtBatch64: ratio(rate('onnx', 64, 'alternated'), rate('ort-torch-export', 64, 'alternated')),
      fusedOverStandardAtBatch64: ratio(rate('onnx-bare', 64, 'alternated'), rate('onnx-standard-bare', 64, 'alternated')),
      perRoundAtBatch64: {
        fusedOverTorchExport: perRound('onnx-bare', 'ort-torch-export', 64),
        clsGraphOverTorchExport: perRound('onnx-cls-bare', 'ort-torch-export', 64),
        encoderOverTorchExport: perRound('onnx', 'ort-torch-export', 64),
        fusedOverStandard: perRound('onnx-bare', 'onnx-standard-bare', 64),
        int8OverFloatEncoder: perRound('onnx-int8', 'onnx', 64),
      },
      onnxOverTorchAtBatch64: ratio(rate('onnx', 64, 'own'), rate('torch', 64, 'own')),
      int8OverFloatEncoderAtBatch64: ratio(rate('onnx-int8', 64, 'alternated'), rate('onnx', 64, 'alternated')),
      stsSuiteSeconds: (stsSuite.onnx as { seconds?: number } | undefined)?.seconds,
      stsSuiteSecondsInt8: (stsSuite['onnx-int8'] as { seconds?: number } | undefined)?.seconds,
      int8StsSpearmanChange: spearmanChange,
      peakRssMiB: { onnx: maxRss('onnx'), 'onnx-loadmodel': maxRss('onnx-loadmodel'), torch: maxRss('torch') },
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
      model: opts.model ? { dir: portableModelRef(opts.model) } : { what: 'random BERT-base, HF initialisation (seed 1234), bert-base-uncased config and tokenizer', parameters: params },
      workload: { sentences: texts.length, source: 'STS-B test, first pairs, a1 b1 a2 b2 ...', maxLength: MAX_LENGTH, tokens, pooling: 'cls', dtype: 'float32', batching: 'longest first, each batch padded to its longest row (our fused graphs take the same batches packed: real tokens only)', batches, cpuSample, cpuBatches },
      method:
        `rows with process "own": each engine x batch in its own process after one warm-up batch (peak RSS = VmHWM / ru_maxrss of that process; torch alternated with ours, batch by batch); ` +
        `rows with process "alternated": every ONNX Runtime variant loaded in one process, ${repeat} rounds of one pass each in an order rotating every round; ` +
        `seconds = the fastest pass (passSeconds lists them); ours timed through PooledSentenceEncoder (texts to embeddings), torch and the *-bare / ort-torch-export rows time forward passes on pre-built batches; ` +
        `tokensPerSecond counts real tokens; cpuUtilisation = the highest process CPU seconds per wall second and thread over the passes, below 1 when the shared machine was busy`,
      graphs: prepare && { exportSeconds: prepare.exportSeconds, torchExport: { ...(prepare.torchExport as Record<string, unknown>), path: undefined } },
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
    case 'prepare':
      await childPrepare(work, opts.python!);
      break;
    case 'alternate':
      await childAlternate(work, Number(opts.batch), Number(opts.repeat), opts.engine!.split(','));
      break;
    case 'sts':
      await childSts(work, opts.quantize!);
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
