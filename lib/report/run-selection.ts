/**
 * Choosing runs of a results frame (./results-reader.ts) for one cell of a table: by column values
 * (`{ where: { experiment: 'table4', 'config.pooling': 'cls' } }`), by run ids, or by a predicate
 * on the row. The chosen runs must be seeds of one configuration — a mean over runs that differ in
 * more than the seed would mix configurations — so a selection that spans several is an error
 * naming the columns in which they differ.
 */
import { InputError, UnknownNameError } from '../util/errors.js';
import type { ColumnValue } from './record-columns.js';
import type { LoadedRun, ResultsFrame } from './results-reader.js';

export type RunSelection =
  | { where: Readonly<Record<string, ColumnValue>> }
  | { runIds: readonly string[] }
  | { filter: (row: Readonly<Record<string, ColumnValue>>) => boolean; description?: string };

/** The frame's row `i` as an object. */
function rowObject(frame: ResultsFrame, i: number): Record<string, ColumnValue> {
  return frame.table.object(i) as Record<string, ColumnValue>;
}

/** A selection in words, for messages. */
export function describeSelection(s: RunSelection): string {
  if ('where' in s) return Object.entries(s.where).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ') || 'every run';
  if ('runIds' in s) return `runs ${s.runIds.join(', ')}`;
  return s.description ?? 'a filter';
}

/** The runs a selection chooses, in frame order (no check of their configurations). */
export function selectRuns(frame: ResultsFrame, s: RunSelection): LoadedRun[] {
  if ('runIds' in s) {
    if (frame.runs.length === 0) return [];
    const all = frame.runs.map((r) => r.record.runId);
    return s.runIds.map((id) => {
      const i = all.indexOf(id);
      if (i < 0) throw new UnknownNameError('run id', id, all);
      return frame.runs[i]!;
    });
  }
  // No runs yet (a fresh checkout): nothing is selected, and the table says "not run".
  if (frame.runs.length === 0) return [];
  const names = frame.table.columnNames();
  if ('where' in s) for (const c of Object.keys(s.where)) if (!names.includes(c)) throw new UnknownNameError('results column', c, names);
  const keep = (row: Record<string, ColumnValue>) => ('where' in s ? Object.entries(s.where).every(([k, v]) => row[k] === v) : s.filter(row));
  return frame.runs.filter((_, i) => keep(rowObject(frame, i)));
}

/**
 * The configuration columns in which the given runs differ (empty: they are seeds of one
 * configuration).
 */
export function differingConfiguration(frame: ResultsFrame, runs: readonly LoadedRun[]): string[] {
  const rows = runs.map((r) => rowObject(frame, frame.runs.indexOf(r)));
  return frame.configurationColumns.filter((c) => new Set(rows.map((row) => JSON.stringify(row[c] ?? null))).size > 1);
}

/** `selectRuns`, then the check that the runs are seeds of one configuration. */
export function selectSeeds(frame: ResultsFrame, s: RunSelection): LoadedRun[] {
  const runs = selectRuns(frame, s);
  for (const r of runs) if (!frame.runs.includes(r)) throw new InputError(`run '${r.record.runId}' is not in this frame`);
  const differ = differingConfiguration(frame, runs);
  if (differ.length > 0) {
    const shown = differ.slice(0, 6).map((c) => {
      const values = [...new Set(runs.map((r) => JSON.stringify(rowObject(frame, frame.runs.indexOf(r))[c] ?? null)))];
      return `${c} (${values.join(' / ')})`;
    });
    throw new InputError(
      `the runs chosen by ${describeSelection(s)} are not seeds of one configuration: they differ in ${shown.join(', ')}${differ.length > 6 ? `, and ${differ.length - 6} more` : ''}; narrow the selection`,
    );
  }
  return runs;
}
