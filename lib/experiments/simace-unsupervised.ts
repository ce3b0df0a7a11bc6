/**
 * SimACE's unsupervised setting (papers/004_1238e3534f087b8a.txt) as a training plan: BERT-base
 * trained on wiki1m with dropout positives (each sentence encoded twice), one row per objective —
 * SimCSE's InfoNCE over cosine, ArcCon (ArcCSE's additive angular margin), SimACE (angular
 * similarity with a subtractive margin) — STS-B dev every 125 steps selecting the checkpoint, the
 * seven SentEval STS tasks reporting (SimACE Table 1); and its sweeps as rows: the margin (Table
 * 14: m = 10°, 0, −10°) and the temperature (Figure 7 compares τ 0.05, 0.06, 0.07 without
 * printing STS numbers: those rows are off the table).
 *
 * Recipes, with every value's source:
 * - SimACE Table 7 (BERT-base): batch 64, lr 3e-5, max length 32, dev every 125 steps on STS-B,
 *   τ 0.06, margin 10°, [CLS] pooling; §4 "We train our models for 1 epoch".
 * - SimCSE's run_unsup_example.sh (princeton-nlp/SimCSE): batch 64, lr 3e-5, 1 epoch, max length
 *   32, τ 0.05, eval every 125 steps, [CLS] (SimCSE trains an MLP over [CLS] and evaluates without
 *   it; plain [CLS] here, as the SimACE rows).
 * - ArcCon: the paper grid-searched its settings without printing them; ArcCSE's τ 0.05 and margin
 *   10° (lib/losses/arccon.ts defaults), SimACE's batch, lr and length.
 * - HF Trainer defaults where both are silent: linear decay without warmup, weight decay 0.
 *
 * Only an 11,914-line sample of wiki1m may be on the machine (lib/data/wiki1m.ts `allowSample`):
 * `wiki1mTaskData` says which one it read.
 */
import { loadWiki1m, type Wiki1mCorpus } from '../data/wiki1m.js';
import { loadStsBenchmark, type LoadOptions } from '../data/sts.js';
import { stsEvaluator } from '../eval/pair-evaluators.js';
import { SENTEVAL_STS_COLUMNS, sentevalStsEvaluator } from '../eval/senteval-sts-evaluator.js';
import type { ObjectiveConfig } from '../train/objective.js';
import type { TrainerConfig } from '../train/trainer.js';
import type { SimpleTable } from '../util/table.js';
import { InputError } from '../util/errors.js';
import { paperCellOf } from './paper-cell.js';
import type { Recipe } from './recipes.js';
import type { SuppliedDataPlan, SuppliedRow } from './supplied-data-plan.js';
import type { TaskData } from './tasks.js';

export const SIMACE_PAPER_FILE = '004_1238e3534f087b8a.txt';

const SRC = {
  table7: 'SimACE Table 7 (BERT_base): batch 64, lr 3e-5, max length 32, eval every 125 steps on STS-B dev, τ 0.06, margin 10°, cls',
  epoch: 'SimACE §4 training setups: 1 epoch, evaluation every 125 steps on the STS-B development set',
  simcse: "SimCSE's run_unsup_example.sh: batch 64, lr 3e-5, 1 epoch, max length 32, τ 0.05, eval every 125 steps, cls",
  arccon: 'ArcCSE (Zhang et al. 2022) τ 0.05 and margin 10° (lib/losses/arccon.ts defaults); the SimACE paper grid-searched ArcCon without printing its values',
  hf: "HF Trainer's defaults, which SimCSE's and SimACE's code train with (linear decay, no warmup, weight decay 0)",
  seed: 'SimACE Table 1: default seed 42',
  ours: 'ours: the best STS-B dev checkpoint is tested, as SimCSE and SimACE report',
} as const;

/** The objectives of SimACE Table 1 (BERT_base rows) that this library trains. */
export type UnsupervisedObjective = 'simcse' | 'arccon' | 'simace';

export interface UnsupervisedRecipeOptions {
  temperature?: number;
  /** Margin in degrees (SimACE, ArcCon). */
  margin?: number;
}

function baseConfig(objective: ObjectiveConfig): TrainerConfig {
  return {
    objective,
    pooling: 'cls',
    maxLength: 32,
    batchSize: 64,
    epochs: 1,
    lr: 3e-5,
    schedule: 'linear',
    warmupSteps: 0,
    warmupStart: 'zero',
    weightDecay: 0,
    seed: 42,
    shuffle: true,
    evalEvery: 125,
    checkpointEvery: 125,
  };
}

/** One objective's recipe on wiki1m (see the file comment), with an optional τ / margin for a sweep. */
export function unsupervisedRecipe(objective: UnsupervisedObjective, o: UnsupervisedRecipeOptions = {}): Recipe {
  const shared = { pooling: SRC.table7, maxLength: SRC.table7, batchSize: SRC.table7, lr: SRC.table7, evalEvery: SRC.table7, epochs: SRC.epoch, schedule: SRC.hf, warmupSteps: SRC.hf, warmupStart: SRC.hf, weightDecay: SRC.hf, seed: SRC.seed, checkpointEvery: 'ours: resumable at every evaluation' };
  const sweep = (what: string) => `${what} (a sweep value of this notebook's parameter cell)`;
  switch (objective) {
    case 'simcse': {
      const t = o.temperature ?? 0.05;
      return {
        name: `unsup-simcse-t${t}`,
        title: "Unsupervised SimCSE (InfoNCE over cosine, dropout positives) on wiki1m (SimACE Table 1's SimCSE row)",
        task: 'stsb',
        config: baseConfig({ name: 'simcse', temperature: t }),
        sources: { ...shared, objective: o.temperature === undefined ? SRC.simcse : sweep('τ'), pooling: SRC.simcse, maxLength: SRC.simcse, batchSize: SRC.simcse, lr: SRC.simcse, evalEvery: SRC.simcse, epochs: SRC.simcse },
      };
    }
    case 'arccon': {
      const t = o.temperature ?? 0.05;
      const m = o.margin ?? 10;
      return {
        name: `unsup-arccon-t${t}-m${m}`,
        title: 'ArcCon (additive angular margin on the positive) on wiki1m, dropout positives (SimACE Table 1)',
        task: 'stsb',
        config: baseConfig({ name: 'arccon', options: { temperature: t, margin: m, marginUnit: 'degrees' } }),
        sources: { ...shared, objective: o.temperature === undefined && o.margin === undefined ? SRC.arccon : sweep('τ / margin') },
      };
    }
    case 'simace': {
      const t = o.temperature ?? 0.06;
      const m = o.margin ?? 10;
      return {
        name: `unsup-simace-t${t}-m${m}`,
        title: 'SimACE (angular similarity, subtractive margin) on wiki1m, dropout positives (SimACE Table 1)',
        task: 'stsb',
        config: baseConfig({ name: 'simace', options: { temperature: t, margin: m, marginUnit: 'degrees' } }),
        sources: { ...shared, objective: o.temperature === undefined && o.margin === undefined ? SRC.table7 : sweep(o.margin !== undefined ? 'margin' : 'τ') },
      };
    }
  }
}

export interface Wiki1mTask {
  data: TaskData;
  corpus: Omit<Wiki1mCorpus, 'sentences'> & { sentences: number };
}

/**
 * wiki1m as an unsupervised task: its sentences (the full corpus where it is, else the sample
 * with `allowSample`), STS-B dev selecting, the SentEval STS suite reporting (`pairsPerSet`: a
 * smoke run's shortcut, see lib/eval/senteval-sts-evaluator.ts).
 */
export function wiki1mTaskData(opts: LoadOptions & { allowSample?: boolean; pairsPerSet?: number; dataDir?: string } = {}): Wiki1mTask {
  const corpus = loadWiki1m(opts);
  const items = corpus.sentences.map((text, i) => ({ text, source: { file: corpus.file, line: i + 1 } }));
  if (items.length === 0) throw new InputError('wiki1m: no sentences', { file: corpus.file });
  const name = corpus.sample ? `Wiki1M sample (${items.length.toLocaleString('en-US')} of ${corpus.fullSize.toLocaleString('en-US')} sentences)` : 'Wiki1M';
  const { sentences, ...rest } = corpus;
  return {
    data: {
      train: { kind: 'unsupervised', name, items },
      dev: stsEvaluator(loadStsBenchmark('dev', opts)),
      test: sentevalStsEvaluator({ dataDir: opts.dataDir, pairsPerSet: opts.pairsPerSet }),
    },
    corpus: { ...rest, sentences: sentences.length },
  };
}

/** The eight cells (STS12 … Avg.) of a row of SimACE Table 1 or 14, each filled by the run's SentEval metric. */
function sentevalCells(table: 1 | 14, row: string, group: string) {
  return SENTEVAL_STS_COLUMNS.map(({ column, metric }) => ({
    column,
    metric: `test_${metric}`,
    paper: paperCellOf({ paper: 'simace', table, row, column, group, file: SIMACE_PAPER_FILE }),
  }));
}

const GROUP = 'BERT_base';
const TABLE1_ROWS: ReadonlyArray<{ row: string; objective: UnsupervisedObjective }> = [
  { row: 'SimCSE', objective: 'simcse' },
  { row: 'ArcCon', objective: 'arccon' },
  { row: 'SimACE', objective: 'simace' },
];

/** SimACE Table 1's BERT_base rows this library trains (data key 'wiki1m'); 'first-last' (no training) is marked. */
export function simaceTable1Rows(): SuppliedRow[] {
  return [
    { row: 'first-last', group: GROUP, table: 'Table 1', cells: sentevalCells(1, 'first-last', GROUP), unavailable: 'reference (BERT without training, Gao et al. 2021)' },
    ...TABLE1_ROWS.map(({ row, objective }) => ({ row, group: GROUP, table: 'Table 1', cells: sentevalCells(1, row, GROUP), recipe: unsupervisedRecipe(objective), data: 'wiki1m' })),
  ];
}

/** A row of a sweep: which parameter and value it runs. */
export interface SweepRow extends SuppliedRow {
  sweep: { parameter: 'margin' | 'temperature'; value: number };
}

const TABLE14_MARGINS: Readonly<Record<number, string>> = { 10: 'SimACE', 0: '+ m = 0', [-10]: '+ m = -10' };

/**
 * SimACE with each margin (degrees; τ 0.06) and each temperature (margin 10°): margins 10, 0, −10
 * are Table 14's rows, any other value and every temperature row are off the table. The row at
 * SimACE's own setting is the Table 1 run again (same recipe: reused, not retrained).
 */
export function simaceSweepRows(sweep: { margins?: readonly number[]; temperatures?: readonly number[] }): SweepRow[] {
  const rows: SweepRow[] = [];
  for (const m of sweep.margins ?? []) {
    if (!Number.isFinite(m)) throw new InputError(`a margin must be a number of degrees, got ${m}`);
    const label = TABLE14_MARGINS[m];
    const recipe = unsupervisedRecipe('simace', { margin: m, temperature: 0.06 });
    rows.push(
      label
        ? { row: label, group: GROUP, table: 'Table 14', cells: sentevalCells(14, label, GROUP), recipe, data: 'wiki1m', sweep: { parameter: 'margin', value: m } }
        : { row: `SimACE m = ${m}°`, table: 'Table 14', cells: [{ column: 'Avg.', metric: 'test_avg' }], recipe, data: 'wiki1m', offTable: true, sweep: { parameter: 'margin', value: m } },
    );
  }
  for (const t of sweep.temperatures ?? []) {
    if (!(t > 0)) throw new InputError(`a temperature must be > 0, got ${t}`);
    rows.push({
      row: `SimACE τ = ${t}`,
      table: 'Figure 7',
      cells: [{ column: 'Avg.', metric: 'test_avg' }],
      recipe: unsupervisedRecipe('simace', { margin: 10, temperature: t }),
      data: 'wiki1m',
      offTable: true,
      sweep: { parameter: 'temperature', value: t },
    });
  }
  return rows;
}

/**
 * The sweep as a table: per row, the parameter's value, our SentEval STS average and best STS-B
 * dev Spearman (mean over the row's runs), and the paper's average where Table 14 prints one.
 */
export function sweepTable(plan: SuppliedDataPlan, rows: readonly SweepRow[]): SimpleTable {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);
  const fmt = (v: number | undefined) => (v === undefined ? '' : v.toFixed(2));
  return {
    caption: "SimACE sweeps (ours: SentEval STS average and best STS-B dev, ×100; paper: Table 14's Avg. where printed — Figure 7 prints no STS numbers for τ)",
    columns: ['parameter', 'value', 'row', 'runs', 'ours: STS avg', 'ours: best STS-B dev', 'paper: STS avg'],
    rows: rows.map((r) => {
      const runs = plan.runsOf(r).map((x) => x.run.record.metrics);
      const skipped = plan.runs.find((x) => x.row === r && x.skipped)?.skipped;
      const paper = r.cells.find((c) => c.column === 'Avg.')?.paper?.value;
      return [
        r.sweep.parameter,
        r.sweep.parameter === 'margin' ? `${r.sweep.value}°` : String(r.sweep.value),
        r.row,
        runs.length || (skipped ?? plan.blocked(r) ?? 'not run'),
        fmt(mean(runs.map((m) => m.test_avg).filter((v): v is number => v !== undefined))),
        fmt(mean(runs.map((m) => m.best_dev_spearman).filter((v): v is number => v !== undefined))),
        fmt(paper),
      ];
    }),
  };
}
