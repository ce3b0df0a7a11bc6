/**
 * What AnglE §4.5's notebook shows of its Flickr30k runs (./flickr30k-run.ts), as tables and
 * figure data: every model's metrics, the cells of the paper's table each run fills, strict
 * accuracy and recall@k with BCa bootstrap intervals over the queries, the bars of the figure, and
 * the paired differences between models (bootstrap over the same queries: resolved, or within
 * noise) beside the paper's order.
 */
import type { PaperTable } from '../paper/types.js';
import type { BarRow } from '../report/figures/table-bars.js';
import type { CellSource } from '../report/side-by-side.js';
import { bootstrapMeanCI } from '../report/statistics/mean-bootstrap.js';
import { verdictWords } from '../report/stand-in.js';
import type { SimpleTable } from '../util/table.js';
import type { Flickr30kRun } from './flickr30k-run.js';

const fmt = (v: number | undefined) => (v === undefined ? '' : v.toFixed(2));

/** Every model's row: status, strict accuracy, recall@k (× 100), seconds, or why not. */
export function flickr30kRunsTable(runs: readonly Flickr30kRun[], ks: readonly number[]): SimpleTable {
  return {
    caption: 'Every model (metrics × 100)',
    columns: ['model', 'status', 'strict acc.', ...ks.map((k) => `R@${k}`), 'embed s', 'search s', 'why not'],
    rows: runs.map((r) => {
      const m = r.run?.record.metrics ?? {};
      const s = (r.run?.record.details as { seconds?: { encode: number; search: number } } | undefined)?.seconds;
      return [r.entry.label, r.status, fmt(m.test_strict_accuracy), ...ks.map((k) => fmt(m[`test_recall_at_${k}`])), s ? s.encode.toFixed(1) : '', s ? s.search.toFixed(2) : '', r.reason ?? ''];
    }),
  };
}

/** The paper's cells and the run of the model entry that names each row (or why there is none). */
export function flickr30kCellSources(table: PaperTable, runs: readonly Flickr30kRun[]): CellSource[] {
  return table.numbers.map((n) => {
    const r = runs.find((x) => x.entry.paperRow === n.row);
    return r?.run
      ? { row: n.row, column: n.column, runs: { runIds: [r.run.record.runId] }, metric: 'test_strict_accuracy' }
      : { row: n.row, column: n.column, reason: r?.reason ?? 'no model in MODELS for this row' };
  });
}

function measured(runs: readonly Flickr30kRun[]): Flickr30kRun[] {
  return runs.filter((r) => r.queries);
}

function ci(values: number[], resamples: number): string {
  const b = bootstrapMeanCI(values, { resamples, seed: 0 });
  return `${(b.mean * 100).toFixed(2)} [${(b.ci.low * 100).toFixed(2)}, ${(b.ci.high * 100).toFixed(2)}]`;
}

/** Strict accuracy and recall@k (× 100) of each measured model with its 95% BCa interval over queries. */
export function flickr30kIntervalTable(runs: readonly Flickr30kRun[], ks: readonly number[], resamples: number): SimpleTable {
  return {
    caption: `Strict accuracy and recall@k (× 100) with 95% BCa bootstrap intervals over queries (${resamples} resamples)`,
    columns: ['model', 'paper row', 'strict acc. [95% CI]', ...ks.map((k) => `R@${k} [95% CI]`)],
    rows: measured(runs).map((r) => {
      const q = r.queries!;
      return [r.entry.label, r.entry.paperRow ?? '', ci(q.strict, resamples), ...ks.map((k) => ci(q.hitsAtK[String(k)].map((h) => h / (q.perImage - 1)), resamples))];
    }),
  };
}

/** The figure's bars: every measured model with its interval, and the paper's numbers (a paper bar alone where its model did not run here). */
export function flickr30kBars(runs: readonly Flickr30kRun[], table: PaperTable, resamples: number): BarRow[] {
  const done = measured(runs);
  return [
    ...done.map((r) => {
      const b = bootstrapMeanCI(r.queries!.strict, { resamples, seed: 0 });
      const paper = table.numbers.find((n) => n.row === r.entry.paperRow)?.value;
      return { label: r.entry.label, ours: b.mean * 100, ci: [b.ci.low * 100, b.ci.high * 100] as const, n: 1, ...(paper !== undefined ? { paper } : {}) };
    }),
    ...table.numbers.filter((n) => !done.some((r) => r.entry.paperRow === n.row)).map((n) => ({ label: `${n.row} (not run here)`, paper: n.value })),
  ];
}

/**
 * Paired differences of strict accuracy between every two measured models (first − second, × 100),
 * a bootstrap over the same queries: resolved when the interval excludes 0; beside it the order the
 * paper prints where both are its rows.
 */
export function flickr30kVerdictTable(runs: readonly Flickr30kRun[], table: PaperTable, resamples: number): SimpleTable {
  const done = measured(runs);
  const rows: SimpleTable['rows'] = [];
  for (let i = 0; i < done.length; i++) {
    for (let j = i + 1; j < done.length; j++) {
      const [a, b] = [done[i], done[j]];
      const d = a.queries!.strict.map((x, k) => x - b.queries!.strict[k]);
      const r = bootstrapMeanCI(d, { resamples, seed: 0 });
      const resolved = r.ci.low > 0 || r.ci.high < 0;
      const paperA = table.numbers.find((n) => n.row === a.entry.paperRow)?.value;
      const paperB = table.numbers.find((n) => n.row === b.entry.paperRow)?.value;
      const paperSays = paperA !== undefined && paperB !== undefined ? (paperA > paperB ? `${a.entry.paperRow} higher` : `${b.entry.paperRow} higher`) : '(not both in the paper)';
      rows.push([a.entry.label, b.entry.label, (r.mean * 100).toFixed(2), `[${(r.ci.low * 100).toFixed(2)}, ${(r.ci.high * 100).toFixed(2)}]`, verdictWords(resolved ? (r.mean > 0 ? 'first higher (resolved)' : 'second higher (resolved)') : 'within noise', [a.run, b.run]), paperSays]);
    }
  }
  return { caption: 'Paired differences of strict accuracy (first − second, × 100)', columns: ['first', 'second', 'Δ', '95% CI', 'verdict', 'paper'], rows };
}

/** One line: how many of the paper's models ran here, and why the others did not. */
export function flickr30kCoverage(runs: readonly Flickr30kRun[], table: PaperTable): string {
  const ran = runs.filter((r) => r.entry.paperRow && r.queries).length;
  return ran < table.numbers.length
    ? `${ran} of the paper's ${table.numbers.length} models could be evaluated here (${runs.filter((r) => r.entry.paperRow && !r.queries).map((r) => `${r.entry.label}: ${r.reason}`).join('; ')}); the paper's ordering is checked where they run.`
    : "All of the paper's models were evaluated: the table above says whether their order is the paper's.";
}
