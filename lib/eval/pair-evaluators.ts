/**
 * Evaluators over sentence pairs (lib/eval/evaluator.ts): Spearman between the cosine of the two
 * embeddings and the gold score — graded scores (STS-B, SICK-R: `stsEvaluator`) or 0/1 labels
 * (MRPC, QQP, QNLI, GitHub Issues, as AnglE Table 3 scores them: `binaryEvaluator`). The trainer's
 * dev and test evaluations are these.
 */
import type { BinarySet } from '../data/pairs.js';
import type { ScoredPair, StsSet } from '../data/sts.js';
import { InputError } from '../util/errors.js';
import { evaluateBinaryPairs } from './binary-sts.js';
import type { EvaluationResult, Evaluator } from './evaluator.js';
import { spearman } from './spearman.js';
import { embedUnique, pairCosines } from './vectors.js';

/** Spearman(cosine, gold score) over scored pairs (STS-B dev/test, SICK-R). */
export function stsEvaluator(set: StsSet | { name: string; pairs: readonly ScoredPair[] }): Evaluator {
  const name = 'task' in set ? `${set.task} ${set.name}` : set.name;
  if (set.pairs.length < 2) throw new InputError(`evaluation set '${name}' has ${set.pairs.length} pairs; Spearman needs at least 2`);
  return {
    name,
    primaryMetric: 'spearman',
    higherIsBetter: true,
    rows: set.pairs.length,
    async evaluate(encoder): Promise<EvaluationResult> {
      const texts = set.pairs.flatMap((p) => [p.a, p.b]);
      const { emb, index } = await embedUnique(encoder, texts, { progress: false });
      const n = set.pairs.length;
      const ia = new Uint32Array(n);
      const ib = new Uint32Array(n);
      const gold = new Float64Array(n);
      set.pairs.forEach((p, k) => {
        ia[k] = index[2 * k];
        ib[k] = index[2 * k + 1];
        gold[k] = p.score;
      });
      const predictions = pairCosines(emb, ia, ib);
      return { metrics: { spearman: spearman(predictions, gold) }, predictions, gold };
    },
  };
}

/** Spearman(cosine, 0/1 label) over a binary pair set (MRPC dev/test, QQP/QNLI validation). */
export function binaryEvaluator(set: BinarySet): Evaluator {
  return {
    name: `${set.task} ${set.split}`,
    primaryMetric: 'spearman',
    higherIsBetter: true,
    rows: set.pairs.length,
    async evaluate(encoder): Promise<EvaluationResult> {
      const r = await evaluateBinaryPairs(encoder, set.pairs, { task: set.task, encode: { progress: false } });
      return { metrics: { spearman: r.spearman }, predictions: r.cosines, gold: r.labels };
    },
  };
}
