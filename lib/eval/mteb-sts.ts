/**
 * The MTEB protocol for the seven English STS tasks of AnglE Table 2 (embeddings-benchmark/mteb,
 * mteb/abstasks/sts.py `AbsTaskSTS`, mteb/_evaluators/any_sts_evaluator.py): the test split only,
 * each sentence embedded, and per task one correlation over all its pairs of
 *
 *   cosine = 1 − paired cosine distance,   manhattan = −Σ|u − v|,   euclidean = −‖u − v‖₂
 *
 * with the gold score (MTEB first rescales gold to [0, 1], which changes neither Pearson nor
 * Spearman): `cosine_spearman` is the task's `main_score`; `pearson`/`spearman` use the model's
 * own similarity, cosine for the models here.
 *
 * How it differs from SentEval's "all" (./senteval-sts.ts), which the papers report:
 * - SICK-R: MTEB's `mteb/sickr-sts` test split is all of SICK, 9,927 pairs (train 4,500 + trial
 *   500 + test 4,927); SentEval reports its 4,927 test pairs.
 * - STS12–16 and STS-B: the same pairs (3,108 / 1,500 / 3,750 / 3,000 / 1,186 / 1,379, MTEB's
 *   descriptive statistics), one correlation over a year's subsets, as SentEval's "all".
 * - Texts: MTEB's datasets hold the original sentences; computed here from the SentEval copies of
 *   the data folder (Moses-tokenised, STS12–16 lowercased), so a model that sees case or
 *   punctuation spacing can differ slightly from MTEB's own run (`textSource` says which).
 * - Batches: MTEB embeds each side in its own batches; here each distinct sentence is embedded once
 *   (the same numbers for every batch-independent pooling; see lib/embed/pooling.ts for the two that
 *   are not).
 */
import type { EncodeOptions, SentenceEncoder } from '../embed/types.js';
import type { ScoredPair } from '../data/sts.js';
import { loadSickRelatedness, loadStsBenchmark, loadStsTask, type LoadOptions } from '../data/sts.js';
import type { StsTaskName } from '../data/registry.js';
import { UnknownNameError } from '../util/errors.js';
import { pearson, spearman } from './spearman.js';
import { embedUnique, pairCosines } from './vectors.js';

export interface MtebStsTask {
  /** MTEB's task name (its result file is `<name>.json`). */
  name: 'STS12' | 'STS13' | 'STS14' | 'STS15' | 'STS16' | 'STSBenchmark' | 'SICK-R';
  /** The Hub dataset MTEB evaluates, at the revision its task metadata pins (mteb 2.20.0). */
  dataset: string;
  revision: string;
  /** Pairs of its test split (MTEB's descriptive statistics). */
  testPairs: number;
  /** The SentEval task with the same sentences. */
  senteval: StsTaskName;
}

export const MTEB_STS_TASKS: readonly MtebStsTask[] = [
  { name: 'STS12', dataset: 'mteb/sts12-sts', revision: 'a0d554a64d88156834ff5ae9920b964011b16384', testPairs: 3108, senteval: 'STS12' },
  { name: 'STS13', dataset: 'mteb/sts13-sts', revision: '7e90230a92c190f1bf69ae9002b8cea547a64cca', testPairs: 1500, senteval: 'STS13' },
  { name: 'STS14', dataset: 'mteb/sts14-sts', revision: '6031580fec1f6af667f0bd2da0a551cf4f0b2375', testPairs: 3750, senteval: 'STS14' },
  { name: 'STS15', dataset: 'mteb/sts15-sts', revision: 'ae752c7c21bf194d8b67fd573edf7ae58183cbe3', testPairs: 3000, senteval: 'STS15' },
  { name: 'STS16', dataset: 'mteb/sts16-sts', revision: '4d8694f8f0e0100860b497b999b3dbed754a0513', testPairs: 1186, senteval: 'STS16' },
  { name: 'STSBenchmark', dataset: 'mteb/stsbenchmark-sts', revision: 'b0fddb56ed78048fa8b90373c8a3cfc37b684831', testPairs: 1379, senteval: 'STSBenchmark' },
  { name: 'SICK-R', dataset: 'mteb/sickr-sts', revision: '20a6d6f312dd54037fe07a32d58e5e168867909d', testPairs: 9927, senteval: 'SICKRelatedness' },
];

export type MtebStsTaskName = MtebStsTask['name'];

export function mtebStsTask(name: string): MtebStsTask {
  const t = MTEB_STS_TASKS.find((x) => x.name === name);
  if (!t) throw new UnknownNameError('MTEB STS task', name, MTEB_STS_TASKS.map((x) => x.name));
  return t;
}

/** A task's test pairs as MTEB scores them, from the data folder's SentEval copies. */
export interface MtebStsPairs {
  task: MtebStsTask;
  pairs: ScoredPair[];
  /** Where the texts come from, in words. */
  textSource: string;
}

/** The test pairs of an MTEB STS task from the local SentEval files (see the file comment). */
export function mtebStsPairs(name: MtebStsTaskName, opts: LoadOptions = {}): MtebStsPairs {
  const task = mtebStsTask(name);
  if (task.name === 'SICK-R') {
    const pairs = (['train', 'dev', 'test'] as const).flatMap((s) => loadSickRelatedness(s, opts).pairs);
    return { task, pairs, textSource: 'SentEval copy of SICK (train + trial + test, Moses-tokenised)' };
  }
  if (task.name === 'STSBenchmark') return { task, pairs: loadStsBenchmark('test', opts).pairs, textSource: 'SentEval copy of STS-B test (tokenised, lowercased)' };
  const pairs = loadStsTask(task.senteval, opts).flatMap((s) => s.pairs);
  return { task, pairs, textSource: `SentEval copy of ${task.name} (Moses-tokenised, lowercased; all subsets)` };
}

/** The scores MTEB writes for one STS task and split (fractions, as MTEB stores them). */
export interface MtebStsScores {
  pearson: number;
  spearman: number;
  cosine_pearson: number;
  cosine_spearman: number;
  manhattan_pearson: number;
  manhattan_spearman: number;
  euclidean_pearson: number;
  euclidean_spearman: number;
  main_score: number;
}

export interface MtebStsTaskResult {
  task: MtebStsTask;
  scores: MtebStsScores;
  pairs: number;
  textSource: string;
  /** Seconds this task took (embedding and scoring). */
  seconds: number;
}

/** Negative Manhattan and Euclidean distances of each pair's rows (MTEB's paired distances). */
function pairDistances(data: Float32Array, dim: number, ia: Uint32Array, ib: Uint32Array): { manhattan: Float64Array; euclidean: Float64Array } {
  const n = ia.length;
  const manhattan = new Float64Array(n);
  const euclidean = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const a = ia[k] * dim;
    const b = ib[k] * dim;
    let l1 = 0;
    let l2 = 0;
    for (let j = 0; j < dim; j++) {
      const d = data[a + j] - data[b + j];
      l1 += Math.abs(d);
      l2 += d * d;
    }
    manhattan[k] = -l1;
    euclidean[k] = -Math.sqrt(l2);
  }
  return { manhattan, euclidean };
}

/** MTEB's STS scores of `encoder` on one set of pairs. */
export async function scoreMtebStsPairs(encoder: SentenceEncoder, pairs: readonly ScoredPair[], encode: EncodeOptions = {}): Promise<MtebStsScores> {
  const { emb, index } = await embedUnique(encoder, pairs.flatMap((p) => [p.a, p.b]), encode);
  const n = pairs.length;
  const ia = new Uint32Array(n);
  const ib = new Uint32Array(n);
  const gold = new Float64Array(n);
  pairs.forEach((p, k) => {
    ia[k] = index[2 * k];
    ib[k] = index[2 * k + 1];
    gold[k] = p.score;
  });
  const cosine = pairCosines(emb, ia, ib);
  const { manhattan, euclidean } = pairDistances(emb.data, emb.dim, ia, ib);
  const cosineSpearman = spearman(gold, cosine);
  const cosinePearson = pearson(gold, cosine);
  return {
    pearson: cosinePearson,
    spearman: cosineSpearman,
    cosine_pearson: cosinePearson,
    cosine_spearman: cosineSpearman,
    manhattan_pearson: pearson(gold, manhattan),
    manhattan_spearman: spearman(gold, manhattan),
    euclidean_pearson: pearson(gold, euclidean),
    euclidean_spearman: spearman(gold, euclidean),
    main_score: cosineSpearman,
  };
}

export interface MtebStsOptions extends LoadOptions {
  /** Tasks to run (default all seven). */
  tasks?: readonly MtebStsTaskName[];
  encode?: EncodeOptions;
  /** Called after each task. */
  onTask?: (r: MtebStsTaskResult) => void;
}

/** The MTEB protocol on the STS tasks of AnglE Table 2, from the local data folder. */
export async function evaluateMtebSts(encoder: SentenceEncoder, opts: MtebStsOptions = {}): Promise<MtebStsTaskResult[]> {
  const out: MtebStsTaskResult[] = [];
  for (const name of opts.tasks ?? MTEB_STS_TASKS.map((t) => t.name)) {
    const t0 = performance.now();
    const { task, pairs, textSource } = mtebStsPairs(name, opts);
    const scores = await scoreMtebStsPairs(encoder, pairs, { progress: false, ...opts.encode });
    const r: MtebStsTaskResult = { task, scores, pairs: pairs.length, textSource, seconds: (performance.now() - t0) / 1000 };
    opts.onTask?.(r);
    out.push(r);
  }
  return out;
}
