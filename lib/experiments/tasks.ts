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
 * | nli-pairs | the same file as AnglE's pairs (entailment 1, contradiction 0) | STS-B dev | STS-B test | 0/1   |
 * | wiki1m | SimCSE's wiki1m sentences (unsupervised: two dropout views) | STS-B dev | SentEval STS suite | none |
 *
 * AnglE Table 3 reports QQP and QNLI on their validation splits (GLUE's test labels are hidden),
 * so there the test evaluator is the dev one.
 *
 * A task may name a stand-in: data of the same kind that a plan trains on instead when the task's
 * own data is missing and the plan allows stand-ins (the smoke preset: SICK's entailment
 * judgements for NLI, which is not on this project's machines). The training set's name says what
 * stood in, and the run's identity holds the data's hash, so a stand-in run is never mistaken for
 * the real one. wiki1m's partial sample is used only when a plan allows samples
 * (`allowSample`; the paper preset refuses it).
 */
import { loadNliTriplets, nliPairs, type NliTriplet } from '../data/nli.js';
import { loadGithubIssues, loadMrpc, loadQnli, loadQqp, type BinarySet } from '../data/pairs.js';
import type { DatasetId } from '../data/registry.js';
import { loadSickEntailment, sickEntailmentTriplets } from '../data/sick-entailment.js';
import { loadSickRelatedness, loadStsBenchmark, type LoadOptions, type StsSet } from '../data/sts.js';
import { loadWiki1m } from '../data/wiki1m.js';
import type { Evaluator } from '../eval/evaluator.js';
import { binaryEvaluator, stsEvaluator } from '../eval/pair-evaluators.js';
import { sentevalStsEvaluator } from '../eval/senteval-sts-evaluator.js';
import { pairExamples, type TrainingExamples } from '../train/examples.js';
import { InputError, UnknownNameError } from '../util/errors.js';

export const TASK_NAMES = ['stsb', 'sick', 'mrpc', 'qnli', 'qqp', 'gis', 'nli', 'nli-pairs', 'wiki1m'] as const;
export type TaskName = (typeof TASK_NAMES)[number];

export interface TaskData {
  train: TrainingExamples;
  dev: Evaluator;
  test: Evaluator;
  /** What a reader must know about the data (e.g. that it is a sample of the corpus), shown wherever the data is. */
  note?: string;
}

/** Where a task's data comes from, and how much of its evaluation sets to use. */
export interface TaskLoadOptions extends LoadOptions {
  /** Accept a partial sample of the corpus (wiki1m's); the paper preset refuses it. */
  allowSample?: boolean;
  /** Keep the first N pairs of the dev and test sets (a smoke run's shortcut for a slow encoder; the set names say so). */
  evalPairs?: number;
  /** Report on the SentEval STS suite instead of the task's own test set (PromptEOL, SimACE report it). */
  test?: 'own' | 'senteval-sts';
  /** With the SentEval STS suite: the first N pairs of every set only (a smoke run's shortcut). */
  testPairsPerSet?: number;
}

export interface TaskDefinition {
  name: TaskName;
  /** What a table calls it. */
  title: string;
  /** graded: scores (Spearman against them); binary: 0/1 labels; triplets: (anchor, positive, hard negative); none: unlabelled sentences. */
  labels: 'graded' | 'binary' | 'triplets' | 'none';
  /** The data sets it reads (lib/data registry ids), to check for or download before a run. */
  datasets: readonly DatasetId[];
  /** The task's data (`loadTaskData` applies the evaluation options on top). */
  load(opts?: TaskLoadOptions): TaskData;
  /** Data of the same kind to train on when this task's is missing and stand-ins are allowed (see the file comment). */
  standIn?: { title: string; datasets: readonly DatasetId[]; load(opts?: TaskLoadOptions): TaskData };
}

function nliTripletExamples(name: string, items: readonly NliTriplet[]): TrainingExamples {
  return { kind: 'triplets', name, items: items.map((x) => ({ anchor: x.sent0, positive: x.sent1, negative: x.hardNeg, source: x.source })) };
}

/** An STS set as an evaluator, its first `evalPairs` pairs only when asked. */
function sts(set: StsSet, o: TaskLoadOptions | undefined): Evaluator {
  const n = o?.evalPairs;
  return stsEvaluator(n === undefined ? set : { name: `${set.task} ${set.name} (first ${n} pairs, smoke)`, pairs: set.pairs.slice(0, n) });
}

/** A 0/1 set as an evaluator, its first `evalPairs` pairs only when asked. */
function binary(set: BinarySet, o: TaskLoadOptions | undefined): Evaluator {
  const n = o?.evalPairs;
  return binaryEvaluator(n === undefined ? set : { ...set, split: `${set.split} (first ${n} pairs, smoke)`, pairs: set.pairs.slice(0, n) });
}

/** STS-B dev selects, STS-B test reports: the transfer tasks' own evaluators. */
function stsbDevTest(o: TaskLoadOptions | undefined): Pick<TaskData, 'dev' | 'test'> {
  return { dev: sts(loadStsBenchmark('dev', o), o), test: sts(loadStsBenchmark('test', o), o) };
}

const TASKS: Record<TaskName, TaskDefinition> = {
  stsb: {
    name: 'stsb',
    title: 'STS-B',
    labels: 'graded',
    datasets: ['STSBenchmark'],
    load: (o) => ({ train: pairExamples('STSBenchmark train', loadStsBenchmark('train', o).pairs), ...stsbDevTest(o) }),
  },
  sick: {
    name: 'sick',
    title: 'SICK-R',
    labels: 'graded',
    datasets: ['SICKRelatedness'],
    load: (o) => ({
      train: pairExamples('SICKRelatedness train', loadSickRelatedness('train', o).pairs),
      dev: sts(loadSickRelatedness('dev', o), o),
      test: sts(loadSickRelatedness('test', o), o),
    }),
  },
  mrpc: {
    name: 'mrpc',
    title: 'MRPC',
    labels: 'binary',
    datasets: ['MRPC'],
    load: (o) => ({ train: pairExamples('MRPC train', loadMrpc('train', o).pairs), dev: binary(loadMrpc('dev', o), o), test: binary(loadMrpc('test', o), o) }),
  },
  qnli: {
    name: 'qnli',
    title: 'QNLI',
    labels: 'binary',
    datasets: ['QNLI'],
    load: (o) => {
      const dev = binary(loadQnli('dev', o), o);
      return { train: pairExamples('QNLI train', loadQnli('train', o).pairs), dev, test: dev };
    },
  },
  qqp: {
    name: 'qqp',
    title: 'QQP',
    labels: 'binary',
    datasets: ['QQP'],
    load: (o) => {
      const dev = binary(loadQqp('dev', o), o);
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
      dev: binary(loadGithubIssues('valid', o), o),
      test: binary(loadGithubIssues('test', o), o),
    }),
  },
  nli: {
    name: 'nli',
    title: 'NLI (SimCSE triplets)',
    labels: 'triplets',
    datasets: ['NLI', 'STSBenchmark'],
    load: (o) => ({ train: nliTripletExamples('NLI (SimCSE triplets)', loadNliTriplets(o).triplets), ...stsbDevTest(o) }),
    standIn: {
      title: "SICK train's entailment judgements as SimCSE triplets",
      datasets: ['SICKRelatedness', 'STSBenchmark'],
      load: (o) => {
        const s = loadSickEntailment('train', o);
        return { train: nliTripletExamples(`${s.name}, as SimCSE triplets`, sickEntailmentTriplets(s)), ...stsbDevTest(o) };
      },
    },
  },
  'nli-pairs': {
    name: 'nli-pairs',
    title: 'NLI (AnglE pairs)',
    labels: 'binary',
    datasets: ['NLI', 'STSBenchmark'],
    // AnglE's NLI pairs (train_angle.py: AllNLI, entailment 1, contradiction 0, neutral skipped; issue #26)
    // from SimCSE's file, which holds the same corpora with each premise's two hypotheses side by side.
    load: (o) => ({ train: pairExamples('NLI (nli_for_simcse.csv) as AnglE pairs: entailment 1, contradiction 0', nliPairs(loadNliTriplets(o).triplets)), ...stsbDevTest(o) }),
    standIn: {
      title: "SICK train's entailment judgements (entailment 1, contradiction 0)",
      datasets: ['SICKRelatedness', 'STSBenchmark'],
      load: (o) => {
        const s = loadSickEntailment('train', o);
        return { train: pairExamples(s.name, s.pairs), ...stsbDevTest(o) };
      },
    },
  },
  wiki1m: {
    name: 'wiki1m',
    title: 'Wiki1M (unsupervised)',
    labels: 'none',
    datasets: ['Wiki1M', 'STSBenchmark'],
    load: (o) => {
      const corpus = loadWiki1m(o);
      const items = corpus.sentences.map((text, i) => ({ text, source: { file: corpus.file, line: i + 1 } }));
      if (items.length === 0) throw new InputError('wiki1m: no sentences', { file: corpus.file });
      const name = corpus.sample ? `Wiki1M sample (${items.length.toLocaleString('en-US')} of ${corpus.fullSize.toLocaleString('en-US')} sentences)` : 'Wiki1M';
      return {
        train: { kind: 'unsupervised', name, items },
        // SimACE reports the SentEval STS suite; loadTaskData puts it in place of STS-B test.
        ...stsbDevTest(o),
        ...(corpus.sample ? { note: `⚠ a SAMPLE of wiki1m: ${items.length.toLocaleString('en-US')} of ${corpus.fullSize.toLocaleString('en-US')} sentences, not the papers' corpus` } : {}),
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

/**
 * A task's data with the evaluation options applied: `evalPairs` caps the dev and test sets (the
 * loaders do it), `test: 'senteval-sts'` reports on the SentEval STS suite (wiki1m's default).
 * `standIn` loads the task's stand-in data instead.
 */
export function loadTaskData(name: TaskName, opts: TaskLoadOptions = {}, which: 'own' | 'standIn' = 'own'): TaskData {
  const t = task(name);
  if (which === 'standIn' && !t.standIn) throw new InputError(`task ${name} has no stand-in data`);
  const d = which === 'own' ? t.load(opts) : t.standIn!.load(opts);
  const suite = opts.test === 'senteval-sts' || (opts.test === undefined && name === 'wiki1m');
  return suite ? { ...d, test: sentevalStsEvaluator({ dataDir: opts.dataDir, pairsPerSet: opts.testPairsPerSet }) } : d;
}

export function allTasks(): TaskDefinition[] {
  return TASK_NAMES.map((n) => TASKS[n]);
}
