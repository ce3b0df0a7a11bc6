/**
 * A paper's printed number as the cell a run record carries beside its own (lib/report
 * run-record.ts PaperCell: the value and where it is printed), or undefined where the paper prints
 * no number there ('-', 'N/A', a blank the text extraction lost): the row then runs without a
 * number to compare with.
 */
import { paperCell, type PaperCellQuery } from '../paper/lookup.js';
import type { PaperCell } from '../report/run-record.js';
import { InputError } from '../util/errors.js';

export function paperCellOf(q: PaperCellQuery): PaperCell | undefined {
  try {
    const c = paperCell(q);
    return { value: c.value, source: `${c.file}, ${c.table}, ${c.group ? `${c.group} / ` : ''}${c.row}, ${c.column}` };
  } catch (e) {
    // A printed cell that is not a number, or not printed; a row or column that does not exist is still an error.
    if (e instanceof InputError && / is not (a number|printed)/.test(e.message)) return undefined;
    throw e;
  }
}
