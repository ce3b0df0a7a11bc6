/**
 * Dev-set evaluation during training: a named function from a sentence encoder to metrics. The
 * trainer calls it every `evalEvery` steps and keeps the checkpoint with the best value of one
 * metric (STS-B dev Spearman in the papers' recipes).
 */
import type { BinarySet } from '../data/pairs.js';
import type { ScoredPair, StsSet } from '../data/sts.js';
import type { SentenceEncoder } from '../embed/types.js';
import { evaluateBinaryPairs } from '../eval/binary-sts.js';
import { spearman } from '../eval/spearman.js';
import { embedUnique, pairCosines } from '../eval/vectors.js';
import { InputError } from '../util/errors.js';

export interface DevEvaluation {
  /** Shown in logs and stored in results, e.g. "STSBenchmark dev". */
  name: string;
  /** Pairs evaluated (for the results file). */
  rows?: number;
  /** Metrics as fractions (Spearman ρ, not ×100), keyed by metric name. */
  evaluate(encoder: SentenceEncoder): Promise<Record<string, number>>;
}

/** Spearman(cosine, gold) over scored pairs (STS-B dev, SICK trial). */
export function stsDevEvaluation(set: StsSet | { name: string; pairs: readonly ScoredPair[] }): DevEvaluation {
  const name = 'task' in set ? `${set.task} ${set.name}` : set.name;
  if (set.pairs.length < 2) throw new InputError(`dev set '${name}' has ${set.pairs.length} pairs; Spearman needs at least 2`);
  return {
    name,
    rows: set.pairs.length,
    async evaluate(encoder) {
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
      return { spearman: spearman(pairCosines(emb, ia, ib), gold) };
    },
  };
}

/** Spearman(cosine, 0/1 label) over a binary pair set (MRPC dev, QQP/QNLI validation). */
export function binaryDevEvaluation(set: BinarySet): DevEvaluation {
  const name = `${set.task} ${set.split}`;
  return {
    name,
    rows: set.pairs.length,
    async evaluate(encoder) {
      const r = await evaluateBinaryPairs(encoder, set.pairs, { task: set.task, encode: { progress: false } });
      return { spearman: r.spearman };
    },
  };
}
