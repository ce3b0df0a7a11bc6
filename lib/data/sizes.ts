/**
 * Known split sizes: what a loader read is compared with the registry's count, so a truncated
 * download, a different release or a loader bug fails loudly instead of shifting a table.
 */
import { InputError } from '../util/errors.js';
import { splitEntry, type DatasetId } from './registry.js';

export interface SizeOptions {
  /**
   * Accept a split whose row count differs from the known size; the difference is then recorded
   * in the result's `sizeNote` instead of being an error.
   */
  allowSizeMismatch?: boolean;
}

/**
 * Checks `found` rows of `id`/`split` (read from `file`) against the registry. Returns a note when
 * a mismatch was accepted, else undefined; throws an InputError naming the file otherwise.
 */
export function checkSize(id: DatasetId, split: string, found: number, file: string, opts: SizeOptions = {}): string | undefined {
  const s = splitEntry(id, split);
  if (found === s.rows) return undefined;
  const msg = `${id} ${split}: read ${found} ${s.unit} but expected ${s.rows} (${s.rowsSource})`;
  if (opts.allowSizeMismatch) return `${msg}; accepted (allowSizeMismatch)`;
  throw new InputError(
    `${msg}. The file may be truncated or from another release; pass allowSizeMismatch: true (npm run data -- check --allow-size-mismatch) to use it anyway`,
    { file },
  );
}
