/**
 * AnglE Table 5 as a training plan: AnglE-BERT trained on pairs an LLM generated from STS-B
 * train's sentence1 texts (lib/llm/llm-supervision.ts), one row per generator and one for their
 * ensemble, tested on STS-B test; the unsupervised rows (SimCSE, ConSERT, DiffCSE) are the
 * paper's reference numbers, not trained here.
 *
 * - `llmSupervisedTaskData`: the generated pairs as a task (label = the pair's score: 1 same
 *   meaning, 0 opposite), with STS-B dev selecting checkpoints and STS-B test reporting, as the
 *   table does.
 * - `angleLlmSupervisedRecipe`: the paper says nothing about how these runs were trained; the
 *   recipe is AnglE's STS-B recipe (lib/experiments/recipes.ts: the authors' train_angle.py
 *   defaults), with in-batch negatives reading the 0/1 labels as they are (`binary`).
 * - `table5Rows`: the rows, each with the key of its data in the notebook's data map.
 */
import { loadStsBenchmark, type LoadOptions } from '../data/sts.js';
import { stsEvaluator } from '../eval/pair-evaluators.js';
import type { TrainingExamples } from '../train/examples.js';
import { InputError } from '../util/errors.js';
import { ANGLE_FILE } from './paper-tables.js';
import { paperCellOf } from './paper-cell.js';
import { defaultRecipe, SOURCES, type Recipe } from './recipes.js';
import type { SuppliedRow } from './supplied-data-plan.js';
import type { TaskData } from './tasks.js';

/** The generators of Table 5, as the paper's rows name them, with the model each row used. */
export const TABLE5_GENERATORS: ReadonlyArray<{ row: string; paperModel: string }> = [
  { row: 'ChatGPT', paperModel: 'gpt-3.5-turbo ("gpt-turbo-3.5" in the caption)' },
  { row: 'LLaMA', paperModel: '7B LLaMA2' },
  { row: 'ChatGLM', paperModel: '6B ChatGLM' },
];

/** The table's unsupervised baselines: printed for reference, not trained by this plan. */
export const TABLE5_UNSUPERVISED = ['SimCSE-BERT', 'ConSERT-BERT', 'DiffCSE-BERT'] as const;

const TABLE = 'Table 5';
const COLUMN = "Spearman's";

/** Generated pairs as a training task: the pairs, STS-B dev (selection) and STS-B test (report). */
export function llmSupervisedTaskData(name: string, pairs: ReadonlyArray<{ a: string; b: string; score: number }>, opts: LoadOptions = {}): TaskData {
  if (pairs.length === 0) throw new InputError(`${name}: no generated pairs to train on`);
  pairs.forEach((p, i) => {
    if (p.score !== 0 && p.score !== 1) throw new InputError(`${name}: pair ${i} has score ${p.score}; generated pairs are labelled 1 (same meaning) or 0 (opposite)`);
  });
  const train: TrainingExamples = { kind: 'pairs', name, items: pairs.map((p) => ({ a: p.a, b: p.b, label: p.score })) };
  return { train, dev: stsEvaluator(loadStsBenchmark('dev', opts)), test: stsEvaluator(loadStsBenchmark('test', opts)) };
}

/** AnglE-BERT on LLM-generated STS-B pairs (see the file comment). */
export function angleLlmSupervisedRecipe(): Recipe {
  const r = defaultRecipe('stsb');
  if (r.config.objective.name !== 'angle') throw new Error("the STS-B default recipe is expected to train the 'angle' objective");
  const loss = r.config.objective.loss ?? {};
  return {
    ...r,
    name: 'angle-stsb-llm-supervised',
    title: "AnglE-BERT on LLM-generated pairs of STS-B train's sentence1 texts (AnglE Table 5)",
    config: { ...r.config, objective: { name: 'angle', loss: { ...loss, ibnPositives: 'binary' } } },
    sources: {
      ...r.sources,
      'objective.loss.ibnPositives': 'generated pairs are labelled 0/1: in-batch negatives take label-1 pairs as positives',
      'objective.name': `${SOURCES.ours}: the paper does not say how the Table 5 runs were trained; AnglE's STS-B recipe (the authors' train_angle.py defaults)`,
    },
  };
}

/**
 * Table 5's rows: the unsupervised ones marked (reference numbers), one row per generator with
 * its data under the key `row` (e.g. 'LLaMA'), and the ensemble under 'Ensemble'.
 */
export function table5Rows(file = ANGLE_FILE): SuppliedRow[] {
  const recipe = angleLlmSupervisedRecipe();
  const cell = (row: string) => paperCellOf({ paper: 'angle', table: TABLE, row, column: COLUMN, file });
  const angle = file.startsWith('000_') ? 'AnglE' : 'Angle';
  const rows: SuppliedRow[] = TABLE5_UNSUPERVISED.map((row) => ({
    row,
    group: 'Unsupervised Models',
    table: TABLE,
    cells: [{ column: COLUMN, paper: cell(row) }],
    unavailable: 'reference (unsupervised; 10-simace-unsupervised trains SimCSE)',
  }));
  for (const g of [...TABLE5_GENERATORS.map((x) => x.row), 'Ensemble']) {
    const row = `${angle}-BERT + ${g}`;
    rows.push({ row, group: 'LLM-supervised Models', table: TABLE, cells: [{ column: COLUMN, paper: cell(row) }], recipe, data: g });
  }
  return rows;
}
