/**
 * Parity of the evaluators against a golden `eval.json` (the golden set's README, shared/golden/README.md): every number in
 * the file is compared, and a key this module does not know is a failed check (never skipped).
 *
 * | eval.json                         | how we compute it                                                   |
 * |-----------------------------------|---------------------------------------------------------------------|
 * | spearman_ties.spearman            | spearman(x, y), average ranks for ties                              |
 * | senteval_sts.<pooling>.<task>.<k> | evaluateStsSets at max length 64 (`all`/`mean`/`wmean`, or a split)  |
 * | align_uniform.n_pos / alignment   | STS-B test pairs with gold ≥ 4 (threshold parsed from `positives`)  |
 * | align_uniform.n_unique / uniform. | distinct STS-B test sentences, all pairs i < j                      |
 * | flickr30k_retrieval.*             | captionRetrieval: strict top-5 set accuracy; other-4 recall at 4    |
 *
 * Tolerances. Default 1e-4 absolute (alignment/uniformity: 1e-4 relative, since both are ~1e-5
 * to 1e-4 in size and an absolute 1e-4 would accept anything). Rank statistics of a model whose
 * embeddings are nearly parallel (a random-init BERT's `cls`: every STS cosine in
 * [0.9998, 1]) cannot be reproduced to 1e-4 by any other fp32 implementation: the reference
 * rounds cosines to float32, which makes ties, and which pairs tie depends on the last bits of
 * the embeddings. For every rank-based number we therefore measure its fp32 reproducibility
 * (recompute it with float32-rounded cosines on embeddings perturbed by `noise.rel` relative
 * noise, `noise.seeds` times) and widen the tolerance to twice the largest deviation seen when
 * that exceeds the base tolerance. The detail line says when and why a tolerance was widened.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embeddings, SentenceEncoder } from '../embed/types.js';
import type { ParityCheck } from './check.js';
import { InputError } from '../util/errors.js';
import { loadFlickr30kCaptions } from '../data/flickr.js';
import { loadStsBenchmark, loadStsTask, type StsSplit } from '../data/sts.js';
import { STS_TASKS, STS_YEARS, type StsTaskName } from '../data/registry.js';
import { alignUniformOnSet } from '../eval/geometry.js';
import { captionRetrieval } from '../eval/retrieval.js';
import { indexStsSets, summarizeStsSets, type StsTaskResult } from '../eval/senteval-sts.js';
import { spearman } from '../eval/spearman.js';
import { embedUnique, gatherRows, pairCosines, pairCosinesF32 } from '../eval/vectors.js';
import { mulberry32 } from '../util/mulberry32.js';

export type GoldenPooling = 'cls' | 'avg';

export interface EvalGoldenOptions {
  /** Max sequence length the reference embedded with (golden README: 64); eval.json `max_length` wins. */
  maxLength?: number;
  /** Base absolute tolerance (default 1e-4). */
  tol?: number;
  /** Relative tolerance for alignment and uniformity (default 1e-4). */
  relTol?: number;
  /** Reproducibility probe; `false` keeps every tolerance at its base value. */
  noise?: { rel: number; seeds: number } | false;
  /** Progress lines (e.g. console.error). */
  log?: (line: string) => void;
}

const POOLINGS: readonly GoldenPooling[] = ['cls', 'avg'];

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fmt(v: number): string {
  return Number.isFinite(v) ? v.toPrecision(8) : String(v);
}

function fail(name: string, detail: string): ParityCheck {
  return { name, ok: false, detail };
}

/** The block's `pooling` (default cls) if we can compute it, else a failed check for it. */
function blockPooling(block: Json, base: string): GoldenPooling | ParityCheck {
  const pooling = block.pooling ?? 'cls';
  if (POOLINGS.includes(pooling as GoldenPooling)) return pooling as GoldenPooling;
  return fail(`${base}/pooling`, `unsupported pooling ${JSON.stringify(pooling)}: expected one of ${POOLINGS.join(', ')}`);
}

/** Compares a number; `widened` is the reproducibility-derived tolerance, if any. */
function compare(name: string, ours: number, ref: unknown, tol: number, reproducibility?: number): ParityCheck {
  if (typeof ref !== 'number') return fail(name, `golden value is not a number: ${JSON.stringify(ref)}`);
  const diff = Math.abs(ours - ref);
  let t = tol;
  let why = '';
  if (reproducibility !== undefined && 2 * reproducibility > tol) {
    t = 2 * reproducibility;
    why = ` = 2 x fp32 reproducibility ${reproducibility.toExponential(1)}`;
  }
  const ok = Number.isFinite(ours) && diff <= t;
  return { name, ok, detail: `|diff| ${diff.toExponential(2)} (tol ${t.toExponential(1)}${why}; ours ${fmt(ours)}, golden ${fmt(ref)})` };
}

function compareRel(name: string, ours: number, ref: unknown, relTol: number): ParityCheck {
  if (typeof ref !== 'number') return fail(name, `golden value is not a number: ${JSON.stringify(ref)}`);
  const rel = Math.abs(ours - ref) / Math.max(Math.abs(ref), Number.MIN_VALUE);
  const ok = Number.isFinite(ours) && rel <= relTol;
  return { name, ok, detail: `rel diff ${rel.toExponential(2)} (tol ${relTol.toExponential(0)} relative; ours ${fmt(ours)}, golden ${fmt(ref)})` };
}

function compareExact(name: string, ours: number, ref: unknown): ParityCheck {
  return { name, ok: ours === ref, detail: `ours ${ours}, golden ${JSON.stringify(ref)} (exact)` };
}

/** Deterministic standard normal stream (mulberry32 + Box-Muller). */
function gaussian(seed: number): () => number {
  const next = mulberry32(seed);
  // (x + 1) / (2³² + 1) is in (0, 1): log(u) stays finite.
  const u = (): number => (next() + 1) / 4294967297;
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

/** A copy of `e` with every entry multiplied by (1 + rel·N(0, 1)). */
export function perturb(e: Embeddings, rel: number, seed: number): Embeddings {
  const g = gaussian(seed);
  const data = new Float32Array(e.data.length);
  for (let i = 0; i < data.length; i++) data[i] = e.data[i] * (1 + rel * g());
  return { data, rows: e.rows, dim: e.dim };
}

/** The numbers eval.json reports for an STS task result (`all`/`mean`/`wmean` or per split). */
function stsNumbers(r: StsTaskResult): Record<string, number> {
  if ((STS_YEARS as readonly string[]).includes(r.task)) return { all: r.all.spearman, mean: r.mean.spearman, wmean: r.wmean.spearman };
  return Object.fromEntries(r.sets.map((s) => [s.name, s.spearman]));
}

/** Largest |deviation| per key over noisy recomputations. */
function maxDeviation(ours: Record<string, number>, runs: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(ours)) out[k] = Math.max(0, ...runs.map((r) => Math.abs(r[k] - ours[k])));
  return out;
}

async function checkSts(
  pooling: GoldenPooling,
  block: Json,
  encoderFor: (p: GoldenPooling) => Promise<SentenceEncoder>,
  dataDir: string,
  o: Required<Pick<EvalGoldenOptions, 'tol' | 'noise'>>,
): Promise<ParityCheck[]> {
  const checks: ParityCheck[] = [];
  for (const [task, want] of Object.entries(block)) {
    const base = `eval/senteval_sts/${pooling}/${task}`;
    if (!(STS_TASKS as readonly string[]).includes(task)) {
      checks.push(fail(base, `unknown STS task in eval.json: expected one of ${STS_TASKS.join(', ')}`));
      continue;
    }
    if (!isObj(want)) {
      checks.push(fail(base, `expected an object of numbers, found ${JSON.stringify(want)}`));
      continue;
    }
    const isYear = (STS_YEARS as readonly string[]).includes(task);
    const allowed = isYear ? ['all', 'mean', 'wmean'] : ['train', 'dev', 'test'];
    const keys = Object.keys(want);
    for (const k of keys.filter((k) => !allowed.includes(k))) checks.push(fail(`${base}/${k}`, `unknown key: expected one of ${allowed.join(', ')}`));
    const known = keys.filter((k) => allowed.includes(k));
    if (known.length === 0) continue;
    const splits = isYear ? undefined : (known as StsSplit[]);
    const sets = loadStsTask(task as StsTaskName, { dataDir, splits });
    const { unique, sets: idx } = indexStsSets(task as StsTaskName, sets);
    const emb = await (await encoderFor(pooling)).encode(unique);
    const ours = stsNumbers(summarizeStsSets(task as StsTaskName, idx.map((s) => ({ name: s.name, gold: s.gold, cosines: pairCosines(emb, s.ia, s.ib) }))));
    let repro: Record<string, number> | undefined;
    if (o.noise) {
      const runs: Record<string, number>[] = [];
      for (let seed = 1; seed <= o.noise.seeds; seed++) {
        const pe = perturb(emb, o.noise.rel, seed);
        runs.push(stsNumbers(summarizeStsSets(task as StsTaskName, idx.map((s) => ({ name: s.name, gold: s.gold, cosines: pairCosinesF32(pe, s.ia, s.ib) })))));
      }
      repro = maxDeviation(ours, runs);
    }
    for (const k of known) checks.push(compare(`${base}/${k}`, ours[k], want[k], o.tol, repro?.[k]));
  }
  return checks;
}

const AU_KEYS = ['pooling', 'positives', 'n_pos', 'alignment_alpha2', 'uniformity_t2', 'n_unique_sentences'];

async function checkAlignUniform(
  block: Json,
  encoderFor: (p: GoldenPooling) => Promise<SentenceEncoder>,
  dataDir: string,
  relTol: number,
): Promise<ParityCheck[]> {
  const base = 'eval/align_uniform';
  const checks: ParityCheck[] = [];
  for (const k of Object.keys(block).filter((k) => !AU_KEYS.includes(k))) checks.push(fail(`${base}/${k}`, `unknown key: expected ${AU_KEYS.join(', ')}`));
  const pooling = blockPooling(block, base);
  if (typeof pooling !== 'string') return [...checks, pooling];
  let threshold = 4;
  if (block.positives !== undefined) {
    const m = typeof block.positives === 'string' ? /STS-B test pairs with gold(?: score)? >= ?([0-9.]+)/.exec(block.positives) : null;
    if (!m) {
      checks.push(fail(`${base}/positives`, `unrecognised definition ${JSON.stringify(block.positives)}: expected "STS-B test pairs with gold score >= T"`));
      return checks;
    }
    threshold = Number(m[1]);
    checks.push({ name: `${base}/positives`, ok: true, detail: `STS-B test pairs with gold >= ${threshold}` });
  }
  const enc = await encoderFor(pooling);
  const r = await alignUniformOnSet(enc, loadStsBenchmark('test', { dataDir }), { threshold, alpha: 2, t: 2 });
  if ('n_pos' in block) checks.push(compareExact(`${base}/n_pos`, r.nPos, block.n_pos));
  if ('alignment_alpha2' in block) checks.push(compareRel(`${base}/alignment_alpha2`, r.alignment, block.alignment_alpha2, relTol));
  if ('n_unique_sentences' in block) checks.push(compareExact(`${base}/n_unique_sentences`, r.nUnique, block.n_unique_sentences));
  if ('uniformity_t2' in block) checks.push(compareRel(`${base}/uniformity_t2`, r.uniformity, block.uniformity_t2, relTol));
  return checks;
}

const FLICKR_KEYS = ['pooling', 'queries', 'corpus', 'strict_accuracy_at5', 'recall_of_other4_at4_excluding_self'];

async function checkFlickr(
  block: Json,
  encoderFor: (p: GoldenPooling) => Promise<SentenceEncoder>,
  dataDir: string,
  o: Required<Pick<EvalGoldenOptions, 'tol' | 'noise'>>,
): Promise<ParityCheck[]> {
  const base = 'eval/flickr30k_retrieval';
  const checks: ParityCheck[] = [];
  for (const k of Object.keys(block).filter((k) => !FLICKR_KEYS.includes(k))) checks.push(fail(`${base}/${k}`, `unknown key: expected ${FLICKR_KEYS.join(', ')}`));
  const pooling = blockPooling(block, base);
  if (typeof pooling !== 'string') return [...checks, pooling];
  const set = loadFlickr30kCaptions('test', { dataDir });
  if (block.queries !== undefined) {
    const ok = typeof block.queries === 'string' && /caption 5i\b/.test(block.queries);
    checks.push({ name: `${base}/queries`, ok, detail: ok ? 'query = caption 5i of each image' : `unrecognised definition ${JSON.stringify(block.queries)}` });
  }
  if (block.corpus !== undefined) {
    const m = typeof block.corpus === 'string' ? /all (\d+) test captions incl\. the query/.exec(block.corpus) : null;
    const ok = m !== null && Number(m[1]) === set.captions.length;
    checks.push({
      name: `${base}/corpus`,
      ok,
      detail: ok ? `all ${set.captions.length} test captions incl. the query` : `unrecognised definition or caption count ${JSON.stringify(block.corpus)} (we have ${set.captions.length})`,
    });
  }
  const enc = await encoderFor(pooling);
  const { emb, index } = await embedUnique(enc, set.captions);
  const all = gatherRows(emb, index);
  const r = await captionRetrieval(all, set.captionsPerImage);
  const ours: Record<string, number> = {
    strict_accuracy_at5: r.strictAccuracyAt5,
    recall_of_other4_at4_excluding_self: r.recallOther4At4ExcludingSelf,
  };
  let repro: Record<string, number> | undefined;
  if (o.noise) {
    const runs: Record<string, number>[] = [];
    for (let seed = 1; seed <= o.noise.seeds; seed++) {
      const rr = await captionRetrieval(perturb(all, o.noise.rel, seed), set.captionsPerImage, { ks: [], search: { float32Scores: true } });
      runs.push({ strict_accuracy_at5: rr.strictAccuracyAt5, recall_of_other4_at4_excluding_self: rr.recallOther4At4ExcludingSelf });
    }
    repro = maxDeviation(ours, runs);
  }
  for (const k of ['strict_accuracy_at5', 'recall_of_other4_at4_excluding_self']) {
    if (k in block) checks.push(compare(`${base}/${k}`, ours[k], block[k], o.tol, repro?.[k]));
  }
  return checks;
}

/**
 * Compares every number in `<goldenDir>/eval.json` with ours, computed with encoders from
 * `makeEncoder(pooling, maxLength)` (called once per pooling) on the data under `dataDir`.
 * Some texts are asked for twice (STS-B test feeds the STS suite and alignment/uniformity), so
 * give an encoder that remembers what it embedded: `sharedPoolingEncoders` (lib/embed) does, and
 * `cachingEncoder` wraps any other.
 */
export async function checkEvalGolden(
  goldenDir: string,
  dataDir: string,
  makeEncoder: (pooling: GoldenPooling, maxLength: number) => Promise<SentenceEncoder>,
  opts: EvalGoldenOptions = {},
): Promise<ParityCheck[]> {
  const file = join(goldenDir, 'eval.json');
  let ev: unknown;
  try {
    ev = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read golden eval.json: ${(e as Error).message}`, { file });
  }
  if (!isObj(ev)) throw new InputError('expected a JSON object', { file, line: 1 });
  const maxLength = typeof ev.max_length === 'number' ? ev.max_length : (opts.maxLength ?? 64);
  const o = { tol: opts.tol ?? 1e-4, noise: opts.noise ?? { rel: 1e-6, seeds: 8 } };
  const relTol = opts.relTol ?? 1e-4;
  const log = opts.log ?? (() => {});
  const encoders = new Map<GoldenPooling, Promise<SentenceEncoder>>();
  const encoderFor = (p: GoldenPooling): Promise<SentenceEncoder> => {
    let e = encoders.get(p);
    if (!e) {
      e = makeEncoder(p, maxLength);
      encoders.set(p, e);
    }
    return e;
  };
  const checks: ParityCheck[] = [];
  for (const [key, block] of Object.entries(ev)) {
    const t0 = performance.now();
    if (key === 'max_length' && typeof block === 'number') continue;
    if (!isObj(block)) {
      checks.push(fail(`eval/${key}`, `expected an object, found ${JSON.stringify(block)}`));
      continue;
    }
    switch (key) {
      case 'spearman_ties': {
        const { x, y } = block;
        for (const k of Object.keys(block).filter((k) => !['x', 'y', 'spearman'].includes(k))) checks.push(fail(`eval/spearman_ties/${k}`, 'unknown key: expected x, y, spearman'));
        if (!Array.isArray(x) || !Array.isArray(y)) checks.push(fail('eval/spearman_ties', 'expected arrays x and y'));
        else checks.push(compare('eval/spearman_ties', spearman(x as number[], y as number[]), block.spearman, 1e-10));
        break;
      }
      case 'senteval_sts':
        for (const [pooling, tasks] of Object.entries(block)) {
          if (!POOLINGS.includes(pooling as GoldenPooling)) {
            checks.push(fail(`eval/senteval_sts/${pooling}`, `unsupported pooling: expected one of ${POOLINGS.join(', ')}`));
            continue;
          }
          if (!isObj(tasks)) {
            checks.push(fail(`eval/senteval_sts/${pooling}`, 'expected an object of tasks'));
            continue;
          }
          checks.push(...(await checkSts(pooling as GoldenPooling, tasks, encoderFor, dataDir, o)));
        }
        break;
      case 'align_uniform':
        checks.push(...(await checkAlignUniform(block, encoderFor, dataDir, relTol)));
        break;
      case 'flickr30k_retrieval':
        checks.push(...(await checkFlickr(block, encoderFor, dataDir, o)));
        break;
      default:
        checks.push(fail(`eval/${key}`, 'unknown key in eval.json: no check implemented for it'));
    }
    log(`eval golden: ${key} checked in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return checks;
}
