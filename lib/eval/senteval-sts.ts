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
 * Each task's distinct sentences are embedded once (one encode call per task).
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

/** Scores already-loaded sets of one task with an encoder (one encode call for all of them). */
export async function evaluateStsSets(
  encoder: SentenceEncoder,
  task: StsTaskName,
  sets: readonly StsSet[],
  encode?: EncodeOptions,
): Promise<StsTaskResult & { encodeSeconds: number }> {
  const { unique, sets: idx } = indexStsSets(task, sets);
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
  const { encodeSeconds: _, ...r } = await evaluateStsSets(encoder, task, sets, opts.encode);
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
    const { encodeSeconds, ...r } = await evaluateStsSets(encoder, task, sets, opts.encode);
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
