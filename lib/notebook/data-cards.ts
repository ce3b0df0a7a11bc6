/** Showing the data sets' cards in a notebook (or a terminal). */
import { datasetCardsTable } from '../data/cards.js';
import { DATASET_IDS, type DatasetId } from '../data/registry.js';
import type { TableFormat } from '../util/table.js';
import { showTable } from './display.js';

/** Shows one row per data set: splits and sizes, source, Hub files, licence, citation, where it is used. */
export function showDatasetCards(ids: readonly DatasetId[] = DATASET_IDS, opts: TableFormat & { format?: 'html' | 'markdown' } = {}): void {
  showTable(datasetCardsTable(ids), opts);
}
