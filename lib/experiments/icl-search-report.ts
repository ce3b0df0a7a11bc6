/**
 * What a notebook shows of PromptEOL's demonstration searches (./icl-demonstration-search.ts): a
 * table per model (the best demonstration, the plain template, the share of candidates below it,
 * Table 4's choice and its rank among ours), every candidate of one search ranked, and Figure 3
 * (lib/report/figures/icl-demonstrations.ts). Spearman values are ρ × 100.
 */
import type { Demonstration } from '../embed/prompt-encoder.js';
import { iclDemonstrationsFigure, type IclDistributionPanel } from '../report/figures/icl-demonstrations.js';
import type { Figure } from '../report/figures/figure.js';
import type { SimpleTable } from '../util/table.js';
import { quotedDemonstration, type IclSearch, type IclSearchResult } from './icl-demonstration-search.js';

const same = (a: Demonstration, b: Demonstration) => a.text === b.text && a.word === b.word;

/** A search, optionally with the demonstration the paper chose for that model (Table 4). */
export type IclSearchEntry = IclSearch | { search: IclSearch; demonstration?: Demonstration };

function entryOf(e: IclSearchEntry): { search: IclSearch; paper?: Demonstration } {
  return 'kind' in e ? { search: e } : { search: e.search, paper: e.demonstration };
}

const f2 = (v: number) => v.toFixed(2);

/**
 * The search per model: candidates evaluated, Spearman on STS-B dev without a demonstration and
 * with the best one (ρ × 100), the best demonstration, the share of candidates below the plain
 * template, and — where the entry carries it (`searchIclDemonstrationsForModels`) — Table 4's
 * choice with its Spearman and rank among ours when it is in the set.
 */
export function iclSearchTable(entries: readonly IclSearchEntry[], caption = 'In-context demonstration search on STS-B dev (Spearman ρ × 100)'): SimpleTable {
  const rows = entries.map(entryOf).map(({ search: s, paper }) => {
    if (s.kind !== 'searched') return [s.label, '', '', '', '', '', '', paper ? quotedDemonstration(paper) : '', s.kind === 'rehearsed' ? `rehearsed (${s.row.status}${s.row.why ? `: ${s.row.why}` : ''})` : `not run: ${s.why}`];
    const ranked = [...s.scores].sort((a, b) => b.spearman - a.spearman);
    const mine = paper ? ranked.findIndex((x) => same(x.candidate.demonstration, paper)) : -1;
    const paperCell = !paper ? '' : mine >= 0 ? `${quotedDemonstration(paper)}: ${f2(ranked[mine]!.spearman)} (rank ${mine + 1} of ${ranked.length})` : `${quotedDemonstration(paper)} (not in the set)`;
    const notes = [s.standIn ?? '', s.skipped.length ? `${s.skipped.length} skipped (${s.skipped[0]!.why})` : ''].filter(Boolean).join('; ');
    return [
      s.label,
      s.scores.length,
      f2(s.baseline.spearman),
      s.best ? f2(s.best.spearman) : '',
      s.best ? `${s.best.spearman >= s.baseline.spearman ? '+' : ''}${f2(s.best.spearman - s.baseline.spearman)}` : '',
      s.best ? `${quotedDemonstration(s.best.candidate.demonstration)} (${s.best.candidate.source})` : '',
      s.fractionBelowBaseline !== undefined ? `${(100 * s.fractionBelowBaseline).toFixed(0)}%` : '',
      paperCell,
      notes,
    ];
  });
  return {
    caption,
    columns: ['model', 'candidates', 'no demonstration', 'best', 'gain', 'best demonstration', 'below no demonstration', "Table 4's demonstration", 'note'],
    rows,
    notes: [
      "The paper's text on Figure 3 (§3.2): one demonstration of 300 helps OPT 125M; about 98% help OPT 2.7B.",
      'Spearman ρ × 100 between cosine and gold on STS-B dev; "below": candidates whose Spearman is under the plain template\'s.',
    ],
  };
}

/** Every candidate of one search by Spearman, best first (the first `limit`, default all). */
export function iclCandidatesTable(s: IclSearchResult, o: { limit?: number; caption?: string } = {}): SimpleTable {
  const ranked = [...s.scores].sort((a, b) => b.spearman - a.spearman || a.index - b.index);
  const shown = ranked.slice(0, o.limit ?? ranked.length);
  return {
    caption: o.caption ?? `${s.label}: every candidate on ${s.evaluator.name} (ρ × 100; no demonstration ${f2(s.baseline.spearman)})`,
    columns: ['rank', 'ρ', 'vs none', 'sentence', 'word', 'source', 'run'],
    rows: shown.map((x, i) => [i + 1, f2(x.spearman), `${x.spearman >= s.baseline.spearman ? '+' : ''}${f2(x.spearman - s.baseline.spearman)}`, x.candidate.demonstration.text, x.candidate.demonstration.word, x.candidate.source, x.runId]),
    ...(shown.length < ranked.length ? { notes: [`${shown.length} of ${ranked.length} shown`] } : {}),
  };
}

/** PromptEOL Figure 3 from the searches that ran: one panel per model (lib/report/figures/icl-demonstrations.ts). */
export function iclSearchFigure(entries: readonly IclSearchEntry[], o: { title?: string } = {}): Figure {
  const panels: IclDistributionPanel[] = entries
    .map((e) => entryOf(e).search)
    .filter((s): s is IclSearchResult => s.kind === 'searched')
    .map((s) => ({
      name: s.standIn ? `${s.label} (stand-in)` : s.label,
      baseline: s.baseline.spearman,
      values: s.scores.map((x) => x.spearman),
      labels: s.scores.map((x) => `${quotedDemonstration(x.candidate.demonstration)} (${x.candidate.source})`),
    }));
  return iclDemonstrationsFigure(panels, o);
}
