/**
 * Notebook 11's rows (Espresso, issue 41): angle_emb's Espresso example (ESE) and the same run
 * without ESE (plain AnglE), both trained on NLI triplets and tested on STS-B. Neither is a cell of a
 * paper table here: the Espresso paper is not among the reference papers (../../../shared/papers),
 * so no published number is typed, and the rows are marked off-table with that reason.
 *
 * Widths: under the smoke preset the tiny 64-wide BERT cannot take the example's k = 128, so the
 * ESE row trains ESPRESSO_SMOKE_WIDTH (the recipe's sources say why; both rows take its smaller
 * batch); every other preset keeps the example's 128 and its batch.
 */
import type { PlanRow } from '../plan.js';
import { espressoNli, espressoNliWithoutEse, ESPRESSO_SMOKE_WIDTH } from '../recipes/espresso.js';

/** The column both rows fill: the training record's STS-B test Spearman (last layer, full width). */
export const ESPRESSO_COLUMN = 'STS-B test';

/** Why the rows have no paper number. */
export const ESPRESSO_NO_PAPER = 'no published number typed: the Espresso paper (2D Matryoshka Sentence Embeddings) is not among the reference papers';

/** The ESE row and its plain-AnglE twin, at the preset's widths (see the file comment). */
export function espressoRows(preset?: string): PlanRow[] {
  const cells = [{ column: ESPRESSO_COLUMN }];
  const smoke = preset === 'smoke' ? ESPRESSO_SMOKE_WIDTH : undefined;
  return [
    { row: 'ESE', cells, recipe: espressoNli(smoke), offTable: true },
    { row: 'AnglE (no ESE)', cells, recipe: espressoNliWithoutEse(smoke), offTable: true },
  ];
}
