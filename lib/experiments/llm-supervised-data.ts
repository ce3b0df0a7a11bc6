/**
 * AnglE Table 5's training data: pairs an LLM generated from STS-B train's sentence1 texts
 * (lib/llm/llm-supervision.ts) as a task — label = the pair's score, 1 same meaning, 0 opposite —
 * with STS-B dev selecting checkpoints and STS-B test reporting, as the table does. The notebook
 * supplies one per generator to the plan (./tables/angle.ts `table5Rows`: rows name their data
 * by generator).
 */
import { loadStsBenchmark, type LoadOptions } from '../data/sts.js';
import { stsEvaluator } from '../eval/pair-evaluators.js';
import { dropNearCopyNegatives, type LlmSupervisionResult, type SupervisedPair } from '../llm/llm-supervision.js';
import type { TrainingExamples } from '../train/examples.js';
import { InputError } from '../util/errors.js';
import type { TaskData } from './tasks.js';

/** Generated pairs as a training task: the pairs, STS-B dev (selection) and STS-B test (report). */
export function llmSupervisedTaskData(name: string, pairs: ReadonlyArray<{ a: string; b: string; score: number }>, opts: LoadOptions = {}): TaskData {
  if (pairs.length === 0) throw new InputError(`${name}: no generated pairs to train on`);
  pairs.forEach((p, i) => {
    if (p.score !== 0 && p.score !== 1) throw new InputError(`${name}: pair ${i} has score ${p.score}; generated pairs are labelled 1 (same meaning) or 0 (opposite)`);
  });
  const train: TrainingExamples = { kind: 'pairs', name, items: pairs.map((p) => ({ a: p.a, b: p.b, label: p.score })) };
  return { train, dev: stsEvaluator(loadStsBenchmark('dev', opts)), test: stsEvaluator(loadStsBenchmark('test', opts)) };
}

/** One generator of Table 5's rows, or why it is not available here (a sentence). */
export type TableGenerator = { name: string } | string;

/**
 * The plan's data for Table 5 (./tables/angle.ts `table5Rows`: rows name their data by generator):
 * per generator its pairs — ChatGPT's without near-copy negatives, as the paper filters its
 * antonyms — and the ensemble of every generator that produced pairs (it needs two or more, else
 * it would only repeat one row); a generator that is missing or produced nothing says why.
 */
export function table5TrainingData(
  generators: Readonly<Record<string, TableGenerator>>,
  results: ReadonlyArray<LlmSupervisionResult>,
  opts: LoadOptions = {},
): { data: Record<string, TaskData | string>; pairs: Record<string, SupervisedPair[]>; members: number } {
  const pairs: Record<string, SupervisedPair[]> = {};
  for (const [row, g] of Object.entries(generators)) {
    const r = typeof g === 'string' ? undefined : results.find((x) => x.generator === g.name);
    if (r) pairs[row] = row === 'ChatGPT' ? dropNearCopyNegatives(r.pairs) : r.pairs;
  }
  const members = results.filter((r) => r.pairs.length > 0).length;
  if (members >= 2) pairs.Ensemble = dropNearCopyNegatives(results.flatMap((r) => r.pairs));
  const data: Record<string, TaskData | string> = {};
  for (const row of [...Object.keys(generators), 'Ensemble']) {
    const g = generators[row];
    if (typeof g === 'string') data[row] = `generator not available (${g})`;
    else if (row === 'Ensemble' && members < 2) data[row] = `needs two or more generators with pairs; ${members} here (set the endpoints above)`;
    else if (!pairs[row] || pairs[row].length === 0) data[row] = 'no pairs were generated';
    else data[row] = llmSupervisedTaskData(`${row}-generated STS-B pairs (${pairs[row].length})`, pairs[row], opts);
  }
  return { data, pairs, members };
}
