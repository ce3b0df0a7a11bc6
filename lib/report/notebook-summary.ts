/**
 * A notebook's `results/<notebook>/summary.md`: what the notebook concluded, as a file a reader
 * finds beside the results — its side-by-side tables (./side-by-side.ts) in Markdown with their
 * notes, any further tables (paired comparisons, orderings), and a short list of the runs they
 * come from, each linked to its record and run card (./run-card.ts).
 *
 * Written atomically; no time of writing inside, so an unchanged summary rewrites to the same bytes.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { tableToMarkdown, type SimpleTable } from '../util/table.js';
import { formatDuration } from './format-numbers.js';
import type { LoadedRun } from './results-reader.js';
import { runCardPath } from './run-card.js';
import { sideBySideTable, type SideBySide } from './side-by-side.js';
import { standInSentence } from './stand-in.js';

export interface NotebookSummary {
  /** Heading (default: the notebook's name). */
  title?: string;
  /** A paragraph under the heading: what the notebook did. */
  text?: string;
  sideBySide?: readonly SideBySide[];
  /** Further tables, e.g. comparisonTable / orderingTable. */
  tables?: readonly SimpleTable[];
  /** The runs listed at the end (default: every run of the side-by-sides). */
  runs?: readonly LoadedRun[];
  /** The metric shown per run (default 'test_spearman'). */
  metric?: string;
  resultsDir?: string;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function link(fromDir: string, file: string): string {
  return encodeURI(relative(fromDir, file).split(sep).join('/'));
}

/** The summary as Markdown, for a file in `dir`. */
export function notebookSummaryMarkdown(notebook: string, s: NotebookSummary, dir: string): string {
  const parts: string[] = [`# ${s.title ?? notebook}`, ''];
  const runs = [...(s.runs ?? [...new Set((s.sideBySide ?? []).flatMap((x) => x.cells.flatMap((c) => c.runs)))])];
  // On a stand-in model the first line says that nothing here reproduces the paper (./stand-in.ts).
  const standIn = standInSentence(runs);
  const text = [standIn && `**${standIn}**`, s.text].filter(Boolean).join(' ');
  if (text) parts.push(text, '');
  for (const sbs of s.sideBySide ?? []) {
    const t = sideBySideTable(sbs);
    parts.push(`## ${sbs.table.paper} ${sbs.table.table}`, '', tableToMarkdown({ ...t, titles: undefined }), '');
  }
  for (const t of s.tables ?? []) parts.push(tableToMarkdown({ ...t, titles: undefined }), '');
  const metric = s.metric ?? 'test_spearman';
  parts.push('## Runs', '');
  if (runs.length === 0) parts.push('No runs.');
  for (const r of runs) {
    const rec = r.record;
    const card = runCardPath(r.file);
    const value = rec.metrics[metric];
    parts.push(
      `- ${rec.experiment} / [${rec.runId}](${link(dir, r.file)})` +
        `${existsSync(card) ? ` ([card](${link(dir, card)}))` : ''}: seed ${rec.seed}, model \`${rec.model.id}\`` +
        `${typeof value === 'number' ? `, ${metric} ${value.toFixed(2)}` : ''}, ${formatDuration(rec.wallSeconds)}${r.predictions ? ', with test predictions' : ''}`,
    );
  }
  parts.push('');
  return parts.join('\n');
}

/** Writes `results/<notebook>/summary.md` atomically; returns its path. */
export function writeNotebookSummary(notebook: string, s: NotebookSummary): string {
  if (!SAFE_NAME.test(notebook)) throw new InputError(`notebook name '${notebook}' must be letters, digits, '.', '_' or '-' (it names a folder)`);
  const dir = join(resolveResultsDir(s.resultsDir), notebook);
  const path = join(dir, 'summary.md');
  writeFileAtomicSync(path, notebookSummaryMarkdown(notebook, s, dir));
  return path;
}
