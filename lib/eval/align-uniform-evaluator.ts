/**
 * Alignment and uniformity (Wang & Isola 2020, as SimCSE computes them: lib/eval/geometry.ts) as an
 * evaluator, so the trainer can track a model's geometry while it trains (SimACE Figure 6: the path of
 * a run in the alignment–uniformity plane). Both are "lower is better"; the primary metric is
 * alignment. `sample` takes the first N pairs of the set, so every evaluation sees the same texts.
 */
import type { StsSet } from '../data/sts.js';
import type { EvaluationResult, Evaluator } from './evaluator.js';
import { alignUniformOnSet } from './geometry.js';

export interface AlignUniformEvaluatorOptions {
  /** Use the first N pairs of the set (a fixed sample); default all. */
  sample?: number;
  /** Pairs with gold ≥ threshold are the positives of the alignment (default 4, SimCSE's). */
  threshold?: number;
}

export function alignUniformEvaluator(set: StsSet, opts: AlignUniformEvaluatorOptions = {}): Evaluator {
  const pairs = opts.sample !== undefined ? set.pairs.slice(0, opts.sample) : set.pairs;
  const sampled: StsSet = { ...set, pairs };
  return {
    name: `${set.task} ${set.name} alignment/uniformity${opts.sample !== undefined ? ` (first ${pairs.length} pairs)` : ''}`,
    primaryMetric: 'alignment',
    higherIsBetter: false,
    rows: pairs.length,
    async evaluate(encoder): Promise<EvaluationResult> {
      const r = await alignUniformOnSet(encoder, sampled, { threshold: opts.threshold, encode: { progress: false } });
      return { metrics: { alignment: r.alignment, uniformity: r.uniformity } };
    },
  };
}
