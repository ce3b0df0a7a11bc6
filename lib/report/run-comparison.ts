/**
 * Two configurations compared on the same test set, from their runs' predictions sidecars
 * (./training-record.ts): is the difference of their test Spearmans (e.g. AnglE Table 4's
 * 86.26 vs 86.00 for "all" vs "w/o ibn") resolved by the test set, or within its noise?
 *
 * Evidence: the paired bootstrap over test pairs (./statistics/paired-bootstrap.ts: BCa 95%
 * interval of ρ_A − ρ_B, seeded, 1000 resamples) and the paired permutation test
 * (./statistics/paired-permutation.ts: 9999 swap patterns, seeded); the verdict
 * (./statistics/verdict.ts) is "resolved" only when the interval excludes 0 and p < 0.05.
 *
 * The two sidecars must hold the same gold values in the same order (the same test pairs);
 * anything else is an error naming both files.
 */
import { verdictWords } from './stand-in.js';
import { InputError } from '../util/errors.js';
import type { SimpleTable, TableValue } from '../util/table.js';
import type { PaperNumber } from '../paper/types.js';
import { signed } from './format-numbers.js';
import type { LoadedRun } from './results-reader.js';
import type { ConfidenceInterval } from './statistics/bootstrap-interval.js';
import { pairedBootstrapTest } from './statistics/paired-bootstrap.js';
import { DEFAULT_PERMUTATIONS, pairedPermutationTest } from './statistics/paired-permutation.js';
import { DEFAULT_RESAMPLES } from './statistics/rank-bootstrap.js';
import { differenceVerdict, type VerdictResult } from './statistics/verdict.js';

export interface CompareRunsOptions {
  /** Names shown for the two sides (default: their run ids). */
  labelA?: string;
  labelB?: string;
  /** The paper's numbers of the two cells, to show the paper's difference beside ours. */
  paper?: { a: PaperNumber; b: PaperNumber };
  /** Bootstrap resamples (default 1000) and permutation patterns (default 9999). */
  resamples?: number;
  permutations?: number;
  /** Seed of both tests (default 0). */
  seed?: number;
  level?: number;
}

export interface RunComparison {
  labelA: string;
  labelB: string;
  runA: LoadedRun;
  runB: LoadedRun;
  /** Test pairs. */
  n: number;
  spearmanA: number;
  spearmanB: number;
  /** spearmanA − spearmanB (ρ, not × 100). */
  difference: number;
  ci: ConfidenceInterval;
  bootstrapP: number;
  permutationP: number;
  resamples: number;
  permutations: number;
  seed: number;
  verdict: VerdictResult;
  /** paper a − paper b, as printed (× 100), when given. */
  paperDifference?: number;
}

function sidecarOf(run: LoadedRun, side: string): { predictions: number[]; gold: number[] } {
  if (!run.predictions) {
    throw new InputError(`run ${side} '${run.record.runId}' has no predictions sidecar (${run.record.runId}.predictions.json); a paired comparison needs the per-pair test predictions of both runs`, { file: run.file });
  }
  return run.predictions;
}

/** Checks that two sidecars score the same test pairs (identical gold, same order). */
export function checkSameTestPairs(a: LoadedRun, b: LoadedRun): number {
  const pa = sidecarOf(a, 'A');
  const pb = sidecarOf(b, 'B');
  const where = `${a.predictionsFile} and ${b.predictionsFile}`;
  if (pa.gold.length !== pb.gold.length) {
    throw new InputError(`${where} are not the same test set: ${pa.gold.length} vs ${pb.gold.length} pairs (evaluators '${a.predictions!.evaluator}' and '${b.predictions!.evaluator}')`);
  }
  const i = pa.gold.findIndex((g, k) => g !== pb.gold[k]);
  if (i >= 0) throw new InputError(`${where} are not the same test pairs: gold[${i}] is ${pa.gold[i]} vs ${pb.gold[i]} (a paired test needs both runs scored on the same pairs in the same order)`);
  return pa.gold.length;
}

export function compareRuns(a: LoadedRun, b: LoadedRun, options: CompareRunsOptions = {}): RunComparison {
  const n = checkSameTestPairs(a, b);
  const pa = a.predictions!;
  const pb = b.predictions!;
  const seed = options.seed ?? 0;
  const level = options.level ?? 0.95;
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const permutations = options.permutations ?? DEFAULT_PERMUTATIONS;
  const source = `${a.predictionsFile} vs ${b.predictionsFile}`;
  const boot = pairedBootstrapTest(pa.predictions, pb.predictions, pa.gold, { resamples, seed, level, source });
  const perm = pairedPermutationTest(pa.predictions, pb.predictions, pa.gold, { permutations, seed, source });
  const verdict = differenceVerdict({ difference: boot.difference, ci: boot.ci, pValue: perm.pValue }, { level });
  return {
    labelA: options.labelA ?? a.record.runId,
    labelB: options.labelB ?? b.record.runId,
    runA: a,
    runB: b,
    n,
    spearmanA: boot.spearmanA,
    spearmanB: boot.spearmanB,
    difference: boot.difference,
    ci: boot.ci,
    bootstrapP: boot.pValue,
    permutationP: perm.pValue,
    resamples: boot.resamples,
    permutations: perm.permutations,
    seed,
    verdict,
    ...(options.paper ? { paperDifference: options.paper.a.value - options.paper.b.value } : {}),
  };
}

const pValueText = (p: number) => (p < 0.001 ? p.toExponential(1) : p.toFixed(3));

/** Comparisons as a small table (Spearman × 100): A, B, ρA, ρB, Δ, CI, p-values, verdict. */
export function comparisonTable(comparisons: readonly RunComparison[], options: { caption?: string; digits?: number } = {}): SimpleTable {
  const d = options.digits ?? 2;
  const withPaper = comparisons.some((c) => c.paperDifference !== undefined);
  const columns = ['A', 'B', 'ours A', 'ours B', 'Δ ours (A − B)', ...(withPaper ? ['Δ paper'] : []), 'CI of Δ', 'p (bootstrap)', 'p (permutation)', 'verdict'];
  const rows: TableValue[][] = comparisons.map((c) => [
    c.labelA,
    c.labelB,
    (c.spearmanA * 100).toFixed(d),
    (c.spearmanB * 100).toFixed(d),
    signed(c.difference * 100, d),
    ...(withPaper ? [c.paperDifference === undefined ? '' : signed(c.paperDifference, d)] : []),
    `[${signed(c.ci.low * 100, d)}, ${signed(c.ci.high * 100, d)}]`,
    pValueText(c.bootstrapP),
    pValueText(c.permutationP),
    verdictWords(c.verdict.verdict, [c.runA, c.runB]),
  ]);
  const titles = comparisons.map((c) => [
    `${c.runA.record.experiment}/${c.runA.record.runId}`,
    `${c.runB.record.experiment}/${c.runB.record.runId}`,
    '',
    '',
    '',
    ...(withPaper ? [''] : []),
    `${Math.round(c.ci.level * 100)}% ${c.ci.method} interval, ${c.resamples} paired resamples of ${c.n} test pairs (seed ${c.seed})`,
    `${c.resamples} resamples`,
    `${c.permutations} swap patterns (seed ${c.seed})`,
    c.verdict.reason,
  ]);
  const level = comparisons[0] ? Math.round(comparisons[0].ci.level * 100) : 95;
  return {
    caption: options.caption ?? 'Paired comparisons on the same test pairs (Spearman ρ × 100)',
    columns,
    rows,
    notes: [
      `CI: ${level}% paired bootstrap interval of ρA − ρB over the test pairs; p: two-sided, paired bootstrap and paired permutation. ` +
        `"resolved" when the interval excludes 0 and the permutation p < ${((100 - level) / 100).toFixed(2)}, else "within noise".`,
    ],
    titles,
  };
}
