/**
 * The evaluator contract (as sentence-transformers' evaluators: a name, a primary metric and its
 * direction, one call): the trainer's dev evaluation picks the best checkpoint by the primary
 * metric, the test evaluation reports it, and tables read it. Metrics are fractions (Spearman ρ,
 * not ρ × 100); results files and tables multiply by 100 where the papers do.
 */
import type { SentenceEncoder } from '../embed/types.js';

export interface EvaluationResult {
  /** Every metric by name; always includes the evaluator's primary metric. */
  metrics: Record<string, number>;
  /**
   * Per-item predictions (e.g. the cosine of each test pair) and the gold values they were scored
   * against, in the evaluation set's order: what a bootstrap confidence interval or a paired
   * comparison of two runs on the same set needs.
   */
  predictions?: Float64Array;
  gold?: Float64Array;
}

export interface Evaluator {
  /** Shown in logs and stored in results, e.g. "STSBenchmark dev". */
  readonly name: string;
  /** The metric that selects checkpoints and that tables report, e.g. 'spearman'. */
  readonly primaryMetric: string;
  readonly higherIsBetter: boolean;
  /** Items evaluated (pairs, queries), for the results file. */
  readonly rows: number;
  evaluate(encoder: SentenceEncoder): Promise<EvaluationResult>;
}
