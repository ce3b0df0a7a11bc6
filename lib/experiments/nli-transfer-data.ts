/**
 * The training data of AnglE Table 2's transfer setting, as the trainer takes it (TaskData: train
 * examples, STS-B dev to select checkpoints, STS-B test for the run's own test number; the table's
 * numbers come from the SentEval suite on the selected weights, ./sts-suite-run.ts):
 *
 * | source         | what                                                                  | AnglE rows (pairs)             | SimCSE row (triplets)        |
 * |----------------|-----------------------------------------------------------------------|--------------------------------|------------------------------|
 * | `nli`          | SimCSE's `nli_for_simcse.csv` (SNLI + MNLI; the Hub's datasets-for-simcse) | (sent0, sent1, 1), (sent0, hard_neg, 0) | (sent0, sent1, hard_neg) |
 * | `sick-standin` | SICK train's entailment judgements (smoke: NLI is not on this machine) | entailment 1, contradiction 0  | lib/data/sick-entailment.ts triplets |
 *
 * AnglE's own NLI pairs came from sentence-transformers' AllNLI.tsv.gz (SNLI + MNLI train,
 * entailment 1, contradiction 0, neutral skipped: train_angle.py at SeanLee97/AnglE@a02b3b3,
 * confirmed in its issue #26 and examples/NLI/README.md); SimCSE's file holds the same corpora with
 * each premise's entailed and contradicted hypothesis side by side, so its pairs are the same kind
 * (not the same count: 551,202 pairs from 275,601 triplets). The records name the data they used.
 */
import { loadNliTriplets, nliPairs } from '../data/nli.js';
import { loadSickEntailment, sickEntailmentTriplets } from '../data/sick-entailment.js';
import { loadStsBenchmark, type LoadOptions } from '../data/sts.js';
import { stsEvaluator } from '../eval/pair-evaluators.js';
import { pairExamples, type TrainingExamples } from '../train/examples.js';
import { UnknownNameError } from '../util/errors.js';
import type { TaskData } from './tasks.js';

export const NLI_TRANSFER_SOURCES = ['nli', 'sick-standin'] as const;
export type NliTransferSource = (typeof NLI_TRANSFER_SOURCES)[number];

/** Labelled pairs (AnglE) or triplets (SimCSE). */
export type NliView = 'pairs' | 'triplets';

/** Which data a preset trains the transfer rows on: the Hub's NLI, or SICK standing in for it under smoke. */
export function nliSourceFor(preset: string | undefined): NliTransferSource {
  return preset === 'smoke' ? 'sick-standin' : 'nli';
}

function triplets(name: string, items: ReturnType<typeof loadNliTriplets>['triplets']): TrainingExamples {
  return { kind: 'triplets', name, items: items.map((x) => ({ anchor: x.sent0, positive: x.sent1, negative: x.hardNeg, source: x.source })) };
}

/**
 * The training examples of a source in a view, with STS-B dev and test; `evalPairs` keeps the
 * first N pairs of dev and test (a smoke run's shortcut for slow encoders; the evaluators' names say so).
 */
export function nliTransferData(source: NliTransferSource, view: NliView, opts: LoadOptions = {}, evalPairs?: number): TaskData {
  if (!(NLI_TRANSFER_SOURCES as readonly string[]).includes(source)) throw new UnknownNameError('NLI transfer data source', source, NLI_TRANSFER_SOURCES);
  let train: TrainingExamples;
  if (source === 'nli') {
    const t = loadNliTriplets(opts);
    train = view === 'pairs' ? pairExamples('NLI (nli_for_simcse.csv) as AnglE pairs: entailment 1, contradiction 0', nliPairs(t.triplets)) : triplets('NLI (nli_for_simcse.csv) triplets', t.triplets);
  } else {
    const s = loadSickEntailment('train', opts);
    train = view === 'pairs' ? pairExamples(s.name, s.pairs) : triplets(`${s.name}, as SimCSE triplets`, sickEntailmentTriplets(s));
  }
  const split = (s: 'dev' | 'test') => {
    const set = loadStsBenchmark(s, opts);
    return evalPairs === undefined ? stsEvaluator(set) : stsEvaluator({ name: `STSBenchmark ${s} (first ${evalPairs} pairs, smoke)`, pairs: set.pairs.slice(0, evalPairs) });
  };
  return { train, dev: split('dev'), test: split('test') };
}
