/**
 * SentEval's STS evaluation (SimCSE's vendored SentEval/senteval/sts.py) for any
 * SentenceEncoder:
 *
 * - per set (an STS12-16 subset, or a split of STS-B / SICK-R): cosine between the two
 *   sentence embeddings vs the gold score, Spearman (and Pearson);
 * - per STS12-16 year: `all` = one Spearman over the concatenation of its subsets (what the
 *   papers report), `mean` = plain average of the subsets' Spearman, `wmean` = average weighted
 *   by subset size;
 * - STS-B and SICK-R: the test split is reported, dev selects checkpoints.
 *
 * Each task's distinct sentences are embedded once (one encode call per task). For a pooling
 * whose result depends on the batch (angle_emb 0.1.x's `cls_avg`, lib/embed/pooling.ts
 * `cls_avg_legacy`), `sentevalBatchSize` encodes instead as SentEval's batcher saw the data
 * (`sentevalBatches`): per set, pairs in SentEval's order, that many pairs at a time, the batch's
 * first sentences in one encode call and its second sentences in another.
 */
import type { EncodeOptions, SentenceEncoder } from '../embed/types.js';
import { loadStsTask, type StsSet, type StsSplit } from '../data/sts.js';
import { STS_TASKS, STS_YEARS, type StsTaskName, type StsYear } from '../data/registry.js';
import { pearson, spearman } from './spearman.js';
import { checkEmbeddings, dedupe, pairCosines } from './vectors.js';
import { UnknownNameError } from '../util/errors.js';

export interface Correlation {
  n: number;
  spearman: number;
  pearson: number;
}

export interface StsSetScores extends Correlation {
  name: string;
  /** Cosine per pair, in the set's pair order. */
  cosines: Float64Array;
  gold: Float64Array;
}

export interface StsTaskResult {
  task: StsTaskName;
  /** Per subset (STS12-16) or per split (STS-B, SICK-R). */
  sets: StsSetScores[];
  /** One correlation over all sets concatenated. */
  all: Correlation;
  /** Average of the sets' Spearman / Pearson. */
  mean: { spearman: number; pearson: number };
  /** Average weighted by set size. */
  wmean: { spearman: number; pearson: number };
  /** Distinct sentences embedded for this task. */
  sentences: number;
}

export interface StsSuiteResult {
  tasks: Partial<Record<StsTaskName, StsTaskResult>>;
  /** The figure the papers report, as a fraction: `all` for STS12-16, test split for STS-B / SICK-R. */
  spearman: Partial<Record<StsTaskName, number>>;
  /** The same × 100. */
  percent: Partial<Record<StsTaskName, number>>;
  /** Mean of the 7 reported figures (fraction); only when all 7 tasks were evaluated. */
  average?: number;
  averagePercent?: number;
  seconds: { load: number; encode: number; score: number; total: number };
  sentences: number;
}

export interface StsSuiteOptions {
  /** Data root; default ANGLE_DATA_DIR. */
  dataDir?: string;
  /** Tasks to run; default the 7 of the papers. */
  tasks?: readonly StsTaskName[];
  /** Splits of STS-B and SICK-R; default dev and test. */
  splits?: readonly StsSplit[];
  encode?: EncodeOptions;
  /**
   * Encode pairs in SentEval's batches of this many pairs (AnglE's eval.py: 16) instead of each
   * distinct sentence once; see `sentevalBatches`. The encoder's own batch size must be at least
   * this, so that one encode call is one forward pass.
   */
  sentevalBatchSize?: number;
  /** Called after each task, e.g. to print progress. */
  onTask?: (r: StsTaskResult) => void;
}

function weightedMeans(sets: readonly StsSetScores[]): Pick<StsTaskResult, 'mean' | 'wmean'> {
  let s = 0;
  let p = 0;
  let ws = 0;
  let wp = 0;
  let w = 0;
  for (const r of sets) {
    s += r.spearman;
    p += r.pearson;
    ws += r.n * r.spearman;
    wp += r.n * r.pearson;
    w += r.n;
  }
  return { mean: { spearman: s / sets.length, pearson: p / sets.length }, wmean: { spearman: ws / w, pearson: wp / w } };
}

/**
 * SentEval's statistics from per-set cosines and gold scores: per-set Spearman/Pearson, `all`
 * over the concatenation, `mean`, and `wmean` (weighted by set size).
 */
export function summarizeStsSets(
  task: StsTaskName,
  sets: readonly { name: string; cosines: Float64Array; gold: Float64Array }[],
  sentences = 0,
): StsTaskResult {
  const out: StsSetScores[] = sets.map((s) => ({
    name: s.name,
    n: s.gold.length,
    cosines: s.cosines,
    gold: s.gold,
    spearman: spearman(s.cosines, s.gold),
    pearson: pearson(s.cosines, s.gold),
  }));
  const total = out.reduce((a, r) => a + r.n, 0);
  const allCos = new Float64Array(total);
  const allGold = new Float64Array(total);
  let o = 0;
  for (const r of out) {
    allCos.set(r.cosines, o);
    allGold.set(r.gold, o);
    o += r.n;
  }
  return {
    task,
    sets: out,
    all: { n: total, spearman: spearman(allCos, allGold), pearson: pearson(allCos, allGold) },
    ...weightedMeans(out),
    sentences,
  };
}

/** Row indices (into embeddings of `unique`) and gold scores of each set's pairs. */
export interface StsSetIndex {
  name: string;
  ia: Uint32Array;
  ib: Uint32Array;
  gold: Float64Array;
}

/** Distinct sentences of a task's sets and, per set, the pairs as indices into them. */
export function indexStsSets(task: StsTaskName, sets: readonly StsSet[]): { unique: string[]; sets: StsSetIndex[] } {
  if (sets.length === 0) throw new RangeError(`${task}: no evaluation sets`);
  const texts: string[] = [];
  for (const s of sets) {
    if (s.pairs.length < 2) throw new RangeError(`${task} ${s.name}: evaluation set has ${s.pairs.length} pairs, needs at least 2`);
    for (const p of s.pairs) texts.push(p.a, p.b);
  }
  const { unique, index } = dedupe(texts);
  let off = 0;
  const out = sets.map((s) => {
    const n = s.pairs.length;
    const ia = new Uint32Array(n);
    const ib = new Uint32Array(n);
    const gold = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      ia[k] = index[off + 2 * k];
      ib[k] = index[off + 2 * k + 1];
      gold[k] = s.pairs[k].score;
    }
    off += 2 * n;
    return { name: s.name, ia, ib, gold };
  });
  return { unique, sets: out };
}

/**
 * The pair batches SentEval's batcher sees for one set (SimCSE's vendored SentEval/senteval/sts.py,
 * which AnglE's eval.py runs): pair indices in SentEval's order, cut into `size`-pair batches.
 * - STS12-16 (STSEval.loadFile): every sentence is padded with '' tokens to the subset's longest
 *   sentence before `sorted(..., key=lambda z: (len(z[0]), len(z[1]), z[2]))`, so both lengths are
 *   equal for every pair and the order is by gold score, ascending, ties in file order (a stable sort).
 * - STS-B and SICK-R (STSBenchmarkEval, SICKRelatednessEval: STSEval subclasses whose loadFile does
 *   not sort): file order.
 */
export function sentevalBatches(task: StsTaskName, gold: ArrayLike<number>, size: number): Uint32Array[] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`SentEval batch size must be a positive integer, got ${size}`);
  const order = Array.from({ length: gold.length }, (_, k) => k);
  if ((STS_YEARS as readonly string[]).includes(task)) order.sort((a, b) => gold[a] - gold[b]);
  const out: Uint32Array[] = [];
  for (let s = 0; s < order.length; s += size) out.push(Uint32Array.from(order.slice(s, s + size)));
  return out;
}

/** Cosine per pair (in the set's pair order), encoding batch by batch as SentEval does. */
async function sentevalCosines(encoder: SentenceEncoder, task: StsTaskName, set: StsSet, size: number, encode?: EncodeOptions): Promise<Float64Array> {
  const cos = new Float64Array(set.pairs.length);
  for (const batch of sentevalBatches(task, Float64Array.from(set.pairs, (p) => p.score), size)) {
    const n = batch.length;
    const a = await encoder.encode(Array.from(batch, (k) => set.pairs[k].a), encode);
    const b = await encoder.encode(Array.from(batch, (k) => set.pairs[k].b), encode);
    checkEmbeddings(a, n);
    checkEmbeddings(b, n);
    const both = new Float32Array(2 * n * a.dim);
    both.set(a.data);
    both.set(b.data, n * a.dim);
    const rows = Uint32Array.from({ length: n }, (_, r) => r);
    const c = pairCosines({ data: both, rows: 2 * n, dim: a.dim }, rows, rows.map((r) => r + n));
    batch.forEach((k, r) => (cos[k] = c[r]));
  }
  return cos;
}

/**
 * Scores already-loaded sets of one task with an encoder: one encode call for all distinct
 * sentences, or SentEval's batches when `sentevalBatchSize` is given.
 */
export async function evaluateStsSets(
  encoder: SentenceEncoder,
  task: StsTaskName,
  sets: readonly StsSet[],
  encode?: EncodeOptions,
  sentevalBatchSize?: number,
): Promise<StsTaskResult & { encodeSeconds: number }> {
  const { unique, sets: idx } = indexStsSets(task, sets);
  if (sentevalBatchSize !== undefined) {
    const t0 = performance.now();
    const scored = [];
    for (let i = 0; i < sets.length; i++) scored.push({ name: idx[i].name, gold: idx[i].gold, cosines: await sentevalCosines(encoder, task, sets[i], sentevalBatchSize, encode) });
    const encodeSeconds = (performance.now() - t0) / 1000;
    return { ...summarizeStsSets(task, scored, unique.length), encodeSeconds };
  }
  const t0 = performance.now();
  const emb = await encoder.encode(unique, encode);
  checkEmbeddings(emb, unique.length);
  const encodeSeconds = (performance.now() - t0) / 1000;
  const scored = idx.map((s) => ({ name: s.name, gold: s.gold, cosines: pairCosines(emb, s.ia, s.ib) }));
  return { ...summarizeStsSets(task, scored, unique.length), encodeSeconds };
}

/** The figure the papers report for a task result (fraction), or undefined (no test split). */
export function reportedSpearman(r: StsTaskResult): number | undefined {
  if ((STS_YEARS as readonly string[]).includes(r.task)) return r.all.spearman;
  return r.sets.find((s) => s.name === 'test')?.spearman;
}

/** Evaluates one task (loads its files from the data root). */
export async function evaluateStsTask(
  encoder: SentenceEncoder,
  task: StsTaskName,
  opts: Omit<StsSuiteOptions, 'tasks' | 'onTask'> = {},
): Promise<StsTaskResult> {
  const sets = loadStsTask(task, { dataDir: opts.dataDir, splits: opts.splits });
  const { encodeSeconds: _, ...r } = await evaluateStsSets(encoder, task, sets, opts.encode, opts.sentevalBatchSize);
  return r;
}

/**
 * Runs the STS tasks (default: STS12-16, STS-B, SICK-R) and returns per-task results, the
 * reported ρ per task (fraction and ×100) and their average over the 7 tasks.
 */
export async function evaluateStsSuite(encoder: SentenceEncoder, opts: StsSuiteOptions = {}): Promise<StsSuiteResult> {
  const tasks = opts.tasks ?? STS_TASKS;
  for (const t of tasks) {
    if (!(STS_TASKS as readonly string[]).includes(t)) throw new UnknownNameError('STS task', t, STS_TASKS);
  }
  const t0 = performance.now();
  let load = 0;
  let encode = 0;
  let sentences = 0;
  const result: StsSuiteResult = { tasks: {}, spearman: {}, percent: {}, seconds: { load: 0, encode: 0, score: 0, total: 0 }, sentences: 0 };
  for (const task of tasks) {
    const tl = performance.now();
    const sets = loadStsTask(task, { dataDir: opts.dataDir, splits: opts.splits });
    load += (performance.now() - tl) / 1000;
    const { encodeSeconds, ...r } = await evaluateStsSets(encoder, task, sets, opts.encode, opts.sentevalBatchSize);
    encode += encodeSeconds;
    sentences += r.sentences;
    result.tasks[task] = r;
    const rho = reportedSpearman(r);
    if (rho !== undefined) {
      result.spearman[task] = rho;
      result.percent[task] = rho * 100;
    }
    opts.onTask?.(r);
  }
  const reported = STS_TASKS.map((t) => result.spearman[t]);
  if (reported.every((v): v is number => v !== undefined)) {
    result.average = reported.reduce((a, b) => a + b, 0) / reported.length;
    result.averagePercent = result.average * 100;
  }
  const total = (performance.now() - t0) / 1000;
  result.seconds = { load, encode, score: total - load - encode, total };
  result.sentences = sentences;
  return result;
}

/**
 * The suite's numbers in SentEval's (and golden eval.json's) layout:
 * `{STS12: {all, mean, wmean}, ..., STSBenchmark: {test, dev}, SICKRelatedness: {test, dev}}` (Spearman).
 */
export function sentevalSpearmanTable(r: StsSuiteResult): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [task, tr] of Object.entries(r.tasks) as [StsTaskName, StsTaskResult][]) {
    if ((STS_YEARS as readonly string[]).includes(task)) {
      out[task] = { all: tr.all.spearman, mean: tr.mean.spearman, wmean: tr.wmean.spearman };
    } else {
      out[task] = Object.fromEntries(tr.sets.map((s) => [s.name, s.spearman]));
    }
  }
  return out;
}

export type { StsYear };
