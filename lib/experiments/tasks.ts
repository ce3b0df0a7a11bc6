/**
 * The training tasks, in one table: for each, the data it trains on, the evaluator that selects
 * checkpoints (dev) and the one that reports (test), and the data sets it needs (so a missing file
 * can be named before any work starts). `npm run train`, the golden training replay and the
 * notebooks all read this table.
 *
 * | task   | trains on                        | dev                  | test                         | labels  |
 * |--------|----------------------------------|----------------------|------------------------------|---------|
 * | stsb   | STS-B train                      | STS-B dev            | STS-B test                   | 0..5    |
 * | sick   | SICK-R train                     | SICK-R dev (trial)   | SICK-R test                  | 1..5    |
 * | mrpc   | MRPC train                       | MRPC dev             | MRPC test                    | 0/1     |
 * | qnli   | QNLI train                       | QNLI validation      | QNLI validation (as AnglE)   | 0/1     |
 * | qqp    | QQP train                        | QQP validation       | QQP validation (as AnglE)    | 0/1     |
 * | gis    | GitHub Issues train              | GitHub Issues valid  | GitHub Issues test           | 0/1     |
 * | nli    | SimCSE's NLI triplets            | STS-B dev            | STS-B test                   | triplets|
 *
 * AnglE Table 3 reports QQP and QNLI on their validation splits (GLUE's test labels are hidden),
 * so there the test evaluator is the dev one.
 */
import { loadNliTriplets } from '../data/nli.js';
import { loadGithubIssues, loadMrpc, loadQnli, loadQqp } from '../data/pairs.js';
import type { DatasetId } from '../data/registry.js';
import { loadSickRelatedness, loadStsBenchmark, type LoadOptions } from '../data/sts.js';
import type { Evaluator } from '../eval/evaluator.js';
import { binaryEvaluator, stsEvaluator } from '../eval/pair-evaluators.js';
import { pairExamples, type TrainingExamples } from '../train/examples.js';
import { UnknownNameError } from '../util/errors.js';

export const TASK_NAMES = ['stsb', 'sick', 'mrpc', 'qnli', 'qqp', 'gis', 'nli'] as const;
export type TaskName = (typeof TASK_NAMES)[number];

export interface TaskData {
  train: TrainingExamples;
  dev: Evaluator;
  test: Evaluator;
}

export interface TaskDefinition {
  name: TaskName;
  /** What a table calls it. */
  title: string;
  /** graded: scores (Spearman against them); binary: 0/1 labels; triplets: (anchor, positive, hard negative). */
  labels: 'graded' | 'binary' | 'triplets';
  /** The data sets it reads (lib/data registry ids), to check for or download before a run. */
  datasets: readonly DatasetId[];
  load(opts?: LoadOptions): TaskData;
}

const TASKS: Record<TaskName, TaskDefinition> = {
  stsb: {
    name: 'stsb',
    title: 'STS-B',
    labels: 'graded',
    datasets: ['STSBenchmark'],
    load: (o) => ({
      train: pairExamples('STSBenchmark train', loadStsBenchmark('train', o).pairs),
      dev: stsEvaluator(loadStsBenchmark('dev', o)),
      test: stsEvaluator(loadStsBenchmark('test', o)),
    }),
  },
  sick: {
    name: 'sick',
    title: 'SICK-R',
    labels: 'graded',
    datasets: ['SICKRelatedness'],
    load: (o) => ({
      train: pairExamples('SICKRelatedness train', loadSickRelatedness('train', o).pairs),
      dev: stsEvaluator(loadSickRelatedness('dev', o)),
      test: stsEvaluator(loadSickRelatedness('test', o)),
    }),
  },
  mrpc: {
    name: 'mrpc',
    title: 'MRPC',
    labels: 'binary',
    datasets: ['MRPC'],
    load: (o) => ({ train: pairExamples('MRPC train', loadMrpc('train', o).pairs), dev: binaryEvaluator(loadMrpc('dev', o)), test: binaryEvaluator(loadMrpc('test', o)) }),
  },
  qnli: {
    name: 'qnli',
    title: 'QNLI',
    labels: 'binary',
    datasets: ['QNLI'],
    load: (o) => {
      const dev = binaryEvaluator(loadQnli('dev', o));
      return { train: pairExamples('QNLI train', loadQnli('train', o).pairs), dev, test: dev };
    },
  },
  qqp: {
    name: 'qqp',
    title: 'QQP',
    labels: 'binary',
    datasets: ['QQP'],
    load: (o) => {
      const dev = binaryEvaluator(loadQqp('dev', o));
      return { train: pairExamples('QQP train', loadQqp('train', o).pairs), dev, test: dev };
    },
  },
  gis: {
    name: 'gis',
    title: 'GitHub Issues',
    labels: 'binary',
    datasets: ['GitHubIssues'],
    load: (o) => ({
      train: pairExamples('GitHubIssues train', loadGithubIssues('train', o).pairs),
      dev: binaryEvaluator(loadGithubIssues('valid', o)),
      test: binaryEvaluator(loadGithubIssues('test', o)),
    }),
  },
  nli: {
    name: 'nli',
    title: 'NLI (SimCSE triplets)',
    labels: 'triplets',
    datasets: ['NLI', 'STSBenchmark'],
    load: (o) => {
      const t = loadNliTriplets(o);
      return {
        train: { kind: 'triplets', name: 'NLI (SimCSE triplets)', items: t.triplets.map((x) => ({ anchor: x.sent0, positive: x.sent1, negative: x.hardNeg, source: x.source })) },
        dev: stsEvaluator(loadStsBenchmark('dev', o)),
        test: stsEvaluator(loadStsBenchmark('test', o)),
      };
    },
  },
};

/** The task called `name`, or an error listing the tasks. */
export function task(name: string): TaskDefinition {
  const t = (TASKS as Record<string, TaskDefinition | undefined>)[name];
  if (!t) throw new UnknownNameError('task', name, TASK_NAMES);
  return t;
}

export function allTasks(): TaskDefinition[] {
  return TASK_NAMES.map((n) => TASKS[n]);
}
