/**
 * The data an evaluation notebook reads, checked before any model runs: each data set is made
 * available where it can be (the data root, the Hub cache, or downloaded from the Hugging Face Hub
 * on a user's machine; lib/data/ensure.ts) and then every split is checked by its own loader
 * (lib/data/check.ts). The table says per split where it was found and how many rows it has, or —
 * when it is missing or broken — which files to put where (or how to download them), so the notebook
 * can mark the rows that need it and finish the rest.
 */
import { checkDatasets, type CheckRow } from '../data/check.js';
import { ensureDataset } from '../data/ensure.js';
import type { DatasetId } from '../data/registry.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';

export interface EvaluationDataStatus {
  rows: CheckRow[];
  /** Data sets with every split present and readable. */
  ready: Set<DatasetId>;
  /** Per data set that is not ready: what is wrong and what to do. */
  problems: Map<DatasetId, string>;
  table: SimpleTable;
}

/** Ensures (downloads where allowed) and checks the data sets; see the file comment. */
export async function checkEvaluationData(ids: readonly DatasetId[], opts: { dataDir?: string; download?: boolean } = {}): Promise<EvaluationDataStatus> {
  const fetchNotes = new Map<DatasetId, string>();
  if (opts.download ?? true) {
    for (const id of ids) {
      try {
        await ensureDataset(id, { dataDir: opts.dataDir });
      } catch (e) {
        if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
        fetchNotes.set(id, (e as Error).message.split('\n')[0]!);
      }
    }
  }
  const rows = checkDatasets({ dataDir: opts.dataDir, ids });
  const ready = new Set<DatasetId>();
  const problems = new Map<DatasetId, string>();
  for (const id of ids) {
    const bad = rows.filter((r) => r.id === id && (r.status === 'missing' || r.status === 'invalid' || r.status === 'sample'));
    if (bad.length === 0) ready.add(id);
    else problems.set(id, bad.map((r) => `${r.split}: ${r.status}${r.note ? ` — ${r.note}` : ''}`).join('; '));
  }
  const table: SimpleTable = {
    caption: 'Evaluation data: where each split was found, or what to put where',
    columns: ['data set', 'split', 'status', 'rows', 'expected', 'where / what to do'],
    rows: rows.map((r) => [
      r.id,
      r.split,
      r.status,
      r.rows ?? null,
      r.expected,
      r.status === 'local' || r.status === 'cache' ? (r.location ?? '') : [r.note, fetchNotes.get(r.id) ? `(the Hub: ${fetchNotes.get(r.id)})` : ''].filter(Boolean).join(' '),
    ]),
  };
  return { rows, ready, problems, table };
}
