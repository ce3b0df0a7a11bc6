/**
 * Which recipe reproduces which cell of the AnglE paper's tables, as plan rows (../plan.ts) the
 * notebooks run; each cell carries the paper's number and the file it is printed in (lib/paper).
 *
 * - Table 2 (transfer STS): the trained rows — AnglE-BERT (two recipes), SimCSE-BERT, AnglE-LLaMA —
 *   in each paper version (their labels differ: 'AnglE-BERT' / 'Angle-BERT'), filled by the STS
 *   suite on the run's selected weights; the released checkpoints are evaluations, not plans
 *   (../released-evaluations.ts).
 * - Table 3 (non-transfer STS): SimCSE-BERT, SBERT, AnglE-RAN, AnglE-BERT × MRPC, STS-B, QQP, QNLI,
 *   GitHub Issues. AnglE-RAN trains the RAN_base long-text backbone (Li et al., 2023;
 *   lib/models/ran/) with AnglE-BERT's recipe and RanNet's sentence vector (angleRan); its model is
 *   the row's own (../ran-row-model.ts: RAN_base, or a tiny random stand-in under smoke).
 * - Table 4 (ablation on STS-B): the objective rows and the pooling rows.
 * - Table 5 (LLM supervision): one row per generator and their ensemble, each on the data the
 *   notebook generated; the unsupervised rows are reference numbers.
 */
import type { StsTaskName } from '../../data/registry.js';
import type { Table2RowRef } from '../../models/released.js';
import { paperCellOf } from '../paper-cell.js';
import type { PlanCell, PlanRow } from '../plan.js';
import { angleBert, angleLlmSupervised, angleRan, angleStsbWithPooling, angleStsbWithWeights, TABLE4_OBJECTIVES, TABLE4_POOLINGS } from '../recipes/angle.js';
import type { Recipe } from '../recipes/recipe.js';
import { sbertBert } from '../recipes/sbert.js';
import { simcseBert } from '../recipes/simcse.js';
import { TABLE2_AVERAGE, TABLE2_METRICS } from '../sts-suite-run.js';
import type { TaskLoadOptions, TaskName } from '../tasks.js';
import { ranRowModel, type RanRowModel } from '../ran-row-model.js';

/** AnglE's first version: the one with every table (BERT rows are the same in all three). */
export const ANGLE_FILE = '000_c0fdd0968b088fcd.txt';

/** The three versions of the AnglE paper, oldest first (Table 2's LLaMA row differs between them). */
export const ANGLE_VERSIONS = ['000_c0fdd0968b088fcd.txt', '001_06941bfad7bf7482.txt', '003_ae373fbfc2de219d.txt'] as const;

function cell(table: string | number, row: string, column: string, group?: string, file: string = ANGLE_FILE) {
  return paperCellOf({ paper: 'angle', table, row, column, file, ...(group ? { group } : {}) });
}

/** The paper's numbers of a Table 2 row in one version, by our metric names (a cell printed as no number is left out). */
export function table2PaperCells(ref: Table2RowRef): PlanCell[] {
  return [...TABLE2_METRICS, TABLE2_AVERAGE].map(({ column, metric }) => {
    const paper = cell('Table 2', ref.row, column, ref.group, ref.file);
    return { column, metric, ...(paper ? { paper } : {}) };
  });
}

/** The rows of Table 2 (in every version) a trained recipe fills. */
export function table2RowsOf(recipe: string): Table2RowRef[] {
  const each = (rows: Record<string, string>) => ANGLE_VERSIONS.map((file) => ({ file, group: 'Supervised Models' as const, row: rows[file] }));
  switch (recipe) {
    case 'angle-nli-paper':
    case 'angle-nli-later':
      return each({ [ANGLE_VERSIONS[0]]: 'AnglE-BERT', [ANGLE_VERSIONS[1]]: 'Angle-BERT', [ANGLE_VERSIONS[2]]: 'Angle-BERT' });
    case 'simcse-nli-sup':
      return each({ [ANGLE_VERSIONS[0]]: 'SimCSE-BERT', [ANGLE_VERSIONS[1]]: 'SimCSE-BERT', [ANGLE_VERSIONS[2]]: 'SimCSE-BERT' });
    case 'angle-llama-nli':
      return each({ [ANGLE_VERSIONS[0]]: 'AnglE-LLaMA2-7B', [ANGLE_VERSIONS[1]]: 'Angle-LLaMA-2_7B', [ANGLE_VERSIONS[2]]: 'Angle-LLaMA2-7B' });
    default:
      return [];
  }
}

export interface Table2RowOptions {
  /** The decoder LoRA recipes train (the notebook's LLM_MODEL). */
  decoderModel: string;
  /** The STS suite of the BERT rows' evaluations (default all seven tasks). */
  suite?: { tasks?: readonly StsTaskName[] };
  /** The decoder rows' suite and data (a smoke run's shortcuts for a slow encoder; the records say so). */
  decoderSuite?: { tasks?: readonly StsTaskName[]; pairsPerSet?: number };
  decoderTaskOptions?: TaskLoadOptions;
}

/**
 * Table 2's trained rows: for every recipe, one row per paper version (`table` = the version's
 * file), all filled by the same run and its suite evaluation.
 */
export function table2TrainedRows(recipes: readonly Recipe[], o: Table2RowOptions): PlanRow[] {
  return recipes.flatMap((r) =>
    table2RowsOf(r.name).map((ref) => ({
      row: ref.row,
      group: ref.group,
      table: ref.file,
      cells: table2PaperCells(ref),
      recipe: r,
      ...(r.lora ? { model: o.decoderModel, ...(o.decoderSuite ? { suite: o.decoderSuite } : {}), ...(o.decoderTaskOptions ? { taskOptions: o.decoderTaskOptions } : {}) } : o.suite ? { suite: o.suite } : {}),
    })),
  );
}

/** AnglE Table 3's columns and the task each trains on. */
export const TABLE3_COLUMNS: ReadonlyArray<{ column: string; task: TaskName }> = [
  { column: 'MRPC', task: 'mrpc' },
  { column: 'STS-B', task: 'stsb' },
  { column: 'QQP', task: 'qqp' },
  { column: 'QNLI', task: 'qnli' },
  { column: 'GitHub Issues', task: 'gis' },
];

/** The AnglE-RAN row of one column: RAN_base (or the preset's stand-in), or why it cannot run. */
function angleRanRow(task: TaskName, cells: PlanCell[], ran: RanRowModel): PlanRow {
  if ('unavailable' in ran) return { row: 'AnglE-RAN', cells, unavailable: ran.unavailable };
  const recipe = angleRan(task);
  if (ran.standIn) recipe.title = `${recipe.title} — STAND-IN: ${ran.standIn}`;
  return { row: 'AnglE-RAN', cells, recipe, model: ran.model };
}

/**
 * AnglE Table 3: every cell. `ran` is the AnglE-RAN row's model (default: by the preset in
 * ANGLE_PRESET, ../ran-row-model.ts).
 */
export function table3Rows(columns: readonly TaskName[] = TABLE3_COLUMNS.map((c) => c.task), ran: RanRowModel = ranRowModel()): PlanRow[] {
  const out: PlanRow[] = [];
  for (const { column, task } of TABLE3_COLUMNS.filter((c) => columns.includes(c.task))) {
    const cells = (row: string) => [{ column, paper: cell('Table 3', row, column) }];
    out.push({ row: 'SimCSE-BERT', cells: cells('SimCSE-BERT'), recipe: simcseBert(task) });
    out.push({ row: 'SBERT', cells: cells('SBERT'), recipe: sbertBert(task) });
    out.push(angleRanRow(task, cells('AnglE-RAN'), ran));
    out.push({ row: 'AnglE-BERT', cells: cells('AnglE-BERT'), recipe: angleBert(task) });
  }
  return out;
}

const TABLE4_COLUMN = "Spearman's Correlation";

/** AnglE Table 4 (upper): the objective ablation. */
export function table4ObjectiveRows(): PlanRow[] {
  return TABLE4_OBJECTIVES.map(({ row, weights }) => ({
    row,
    group: 'Objective',
    cells: [{ column: TABLE4_COLUMN, paper: cell('Table 4', row, TABLE4_COLUMN, 'Objective') }],
    recipe: angleStsbWithWeights(row, weights),
  }));
}

/** AnglE Table 4 (lower): the pooling strategies. */
export function table4PoolingRows(): PlanRow[] {
  return TABLE4_POOLINGS.map(({ row, pooling }) => ({
    row,
    group: 'Pooling Strategy',
    cells: [{ column: TABLE4_COLUMN, paper: cell('Table 4', row, TABLE4_COLUMN, 'Pooling Strategy') }],
    recipe: angleStsbWithPooling(row, pooling),
  }));
}

/** A row trained beside Table 4 without a cell of its own (e.g. the text's ISP claim). */
export function table4OffTableRow(row: string, recipe: Recipe): PlanRow {
  return { row, cells: [{ column: TABLE4_COLUMN }], recipe, offTable: true };
}

/** The generators of Table 5, as the paper's rows name them, with the model each row used. */
export const TABLE5_GENERATORS: ReadonlyArray<{ row: string; paperModel: string }> = [
  { row: 'ChatGPT', paperModel: 'gpt-3.5-turbo ("gpt-turbo-3.5" in the caption)' },
  { row: 'LLaMA', paperModel: '7B LLaMA2' },
  { row: 'ChatGLM', paperModel: '6B ChatGLM' },
];

/** The table's unsupervised baselines: printed for reference, not trained by this plan. */
export const TABLE5_UNSUPERVISED = ['SimCSE-BERT', 'ConSERT-BERT', 'DiffCSE-BERT'] as const;

/**
 * Table 5's rows: the unsupervised ones marked (reference numbers), one row per generator with
 * its data under the key `row` (e.g. 'LLaMA'), and the ensemble under 'Ensemble'.
 */
export function table5Rows(file = ANGLE_FILE): PlanRow[] {
  const recipe = angleLlmSupervised();
  const column = "Spearman's";
  const cells = (row: string) => [{ column, paper: cell('Table 5', row, column, undefined, file) }];
  const angle = file.startsWith('000_') ? 'AnglE' : 'Angle';
  return [
    ...TABLE5_UNSUPERVISED.map((row) => ({ row, group: 'Unsupervised Models', table: 'Table 5', cells: cells(row), unavailable: 'reference (unsupervised; 10-simace-unsupervised trains SimCSE)' })),
    ...[...TABLE5_GENERATORS.map((x) => x.row), 'Ensemble'].map((g) => {
      const row = `${angle}-BERT + ${g}`;
      return { row, group: 'LLM-supervised Models', table: 'Table 5', cells: cells(row), recipe, data: g };
    }),
  ];
}
