/**
 * Every "Avg." column of the papers, recomputed from its row, and the rows where the printed
 * average disagrees with the recomputed one — as data, so a notebook comparing to such a row can
 * say that the paper's own average does not follow from its cells.
 *
 * Tolerance: the printed inputs are themselves rounded, so with inputs and average printed to
 * d decimals the exact mean of the printed inputs may differ from the printed average by up to
 * ½·10^-d (average rounding) + ½·10^-d (input rounding, averaged) = 10^-d (0.01 for 2 decimals).
 * A row 'agrees' when |printed − mean| ≤ ½·10^-d, is 'within-input-rounding' when it is within
 * the full bound, and 'disagrees' beyond it. A row missing an input or its average is
 * 'not-recomputable'; then the missing number the others imply is given.
 */
import { PAPER_TABLES } from './lookup.js';
import type { PaperId, PaperNumber, PaperTable } from './types.js';

/** Which columns a table's average covers (weights: dataset counts, where the paper weights). */
export interface AverageSpec {
  paper: PaperId;
  table: string;
  column: string;
  over: readonly string[];
  weights?: readonly number[];
  /** Where the weights come from. */
  note?: string;
}

const STS_SENTEVAL = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16', 'STS-B', 'SICK-R'];
const TRANSFER = ['MR', 'CR', 'SUBJ', 'MPQA', 'SST', 'TREC', 'MRPC'];

export const AVERAGE_SPECS: readonly AverageSpec[] = [
  { paper: 'angle', table: 'Table 2', column: 'Avg.', over: ['STS12', 'STS13', 'STS14', 'STS15', 'STS16', 'STS-B', 'SICR-R'] },
  { paper: 'angle', table: 'Table 3', column: 'Avg.', over: ['MRPC', 'STS-B', 'QQP', 'QNLI', 'GitHub Issues'] },
  { paper: 'angle', table: 'Table 6', column: 'Avg.', over: ['MR', 'CR', 'SUBJ', 'MPQA', 'SST2', 'TREC', 'MRPC'] },
  { paper: 'prompteol', table: 'Table 1', column: 'Avg.', over: STS_SENTEVAL },
  { paper: 'prompteol', table: 'Table 2', column: 'Avg.', over: STS_SENTEVAL },
  { paper: 'prompteol', table: 'Table 3', column: 'Avg.', over: TRANSFER },
  { paper: 'simace', table: 'Table 1', column: 'Avg.', over: STS_SENTEVAL },
  { paper: 'simace', table: 'Table 4', column: 'Avg.', over: STS_SENTEVAL },
  {
    paper: 'simace',
    table: 'Table 12',
    column: 'Avg.',
    over: ['Clas', 'Clus', 'Pair', 'Rank', 'Retr', 'STS', 'Sum'],
    weights: [12, 11, 3, 4, 15, 10, 1],
    note: "MTEB average over 56 datasets: each category weighted by its number of datasets (the caption's 12, 11, 3, 4, 15, 10, 1).",
  },
  { paper: 'simace', table: 'Table 13', column: 'Avg.', over: TRANSFER },
  { paper: 'simace', table: 'Table 14', column: 'Avg.', over: STS_SENTEVAL },
];

export type AverageStatus = 'agrees' | 'within-input-rounding' | 'disagrees' | 'not-recomputable';

export interface AverageCheck {
  paper: PaperId;
  file: string;
  table: string;
  group?: string;
  row: string;
  over: readonly string[];
  status: AverageStatus;
  printed?: number;
  /** The (weighted) mean of the printed inputs, unrounded. */
  recomputed?: number;
  /** printed − recomputed. */
  difference?: number;
  /** The largest |difference| print rounding explains. */
  tolerance?: number;
  /** Columns with no number in this row (blank in the text file). */
  missing?: string[];
  /** For a row missing one number: the value the others imply (for a missing average: the mean). */
  implied?: { column: string; value: number };
}

function decimals(printed: string): number {
  const m = /\.(\d+)$/.exec(printed);
  return m ? m[1]!.length : 0;
}

function checkRow(t: PaperTable, spec: AverageSpec, group: string | undefined, row: string): AverageCheck {
  const cellOf = (column: string): PaperNumber | undefined => t.numbers.find((c) => c.group === group && c.row === row && c.column === column);
  const inputs = spec.over.map(cellOf);
  const avg = cellOf(spec.column);
  const weights = spec.weights ?? spec.over.map(() => 1);
  const wsum = weights.reduce((a, b) => a + b, 0);
  const base = { paper: t.paper, file: t.file, table: t.table, ...(group !== undefined ? { group } : {}), row, over: spec.over };
  const missing = [...spec.over.filter((_, i) => !inputs[i]), ...(avg ? [] : [spec.column])];
  if (missing.length > 0) {
    let implied: AverageCheck['implied'];
    if (missing.length === 1 && !avg) {
      implied = { column: spec.column, value: inputs.reduce((s, c, i) => s + c!.value * weights[i]!, 0) / wsum };
    } else if (missing.length === 1 && avg) {
      const i = inputs.findIndex((c) => !c);
      const rest = inputs.reduce((s, c, k) => s + (c ? c.value * weights[k]! : 0), 0);
      implied = { column: spec.over[i]!, value: (avg.value * wsum - rest) / weights[i]! };
    }
    return { ...base, status: 'not-recomputable', ...(avg ? { printed: avg.value } : {}), missing, ...(implied ? { implied } : {}) };
  }
  const recomputed = inputs.reduce((s, c, i) => s + c!.value * weights[i]!, 0) / wsum;
  const difference = avg!.value - recomputed;
  const half = (c: PaperNumber) => 0.5 * 10 ** -decimals(c.printed);
  const tolerance = half(avg!) + inputs.reduce((s, c, i) => s + half(c!) * weights[i]!, 0) / wsum;
  const eps = 1e-9;
  const status: AverageStatus =
    Math.abs(difference) <= half(avg!) + eps ? 'agrees' : Math.abs(difference) <= tolerance + eps ? 'within-input-rounding' : 'disagrees';
  return { ...base, status, printed: avg!.value, recomputed, difference, tolerance };
}

/** Recomputes every average of every table (all files) listed in AVERAGE_SPECS. */
export function checkAverages(tables: readonly PaperTable[] = PAPER_TABLES): AverageCheck[] {
  const out: AverageCheck[] = [];
  for (const t of tables) {
    const spec = AVERAGE_SPECS.find((s) => s.paper === t.paper && s.table === t.table);
    if (!spec) continue;
    for (const b of t.blocks) {
      if (!b.columns.includes(spec.column)) continue;
      for (const r of b.rows) out.push(checkRow(t, spec, r.group, r.label));
    }
  }
  return out;
}

/** A printed average that does not follow from its row, by name. */
export interface AverageDisagreement {
  paper: PaperId;
  file: string;
  table: string;
  group?: string;
  row: string;
  printed: number;
  /** Mean of the row's printed cells, to 4 decimals. */
  recomputed: number;
  /** What probably happened, where the text shows it. */
  note?: string;
}

const A000 = '000_c0fdd0968b088fcd.txt';
const A001 = '001_06941bfad7bf7482.txt';
const A003 = '003_ae373fbfc2de219d.txt';
const P = '002_684352d32195eadd.txt';
const S = '004_1238e3534f087b8a.txt';
const SBERT_NOTE = 'Row marked † (taken from Reimers & Gurevych, 2019) with its average.';
const BERT_AVG_NOTE = 'The same row (average BERT embeddings, from Reimers & Gurevych 2019) in AnglE Table 6 and PromptEOL Table 3.';

/** Every row whose printed average disagrees with its cells beyond print rounding (checked by test/paper.test.ts). */
export const KNOWN_AVERAGE_DISAGREEMENTS: readonly AverageDisagreement[] = [
  { paper: 'angle', file: A000, table: 'Table 2', group: 'Supervised Models', row: 'SBERT', printed: 74.89, recomputed: 74.86, note: SBERT_NOTE },
  { paper: 'angle', file: A001, table: 'Table 2', group: 'Supervised Models', row: 'SBERT', printed: 74.89, recomputed: 74.86, note: SBERT_NOTE },
  { paper: 'angle', file: A003, table: 'Table 2', group: 'Supervised Models', row: 'SBERT', printed: 74.89, recomputed: 74.86, note: SBERT_NOTE },
  { paper: 'angle', file: A000, table: 'Table 6', row: 'Avg. BERT', printed: 84.94, recomputed: 84.9543, note: BERT_AVG_NOTE },
  { paper: 'prompteol', file: P, table: 'Table 1', group: 'Fine-tuning on unsupervised datasets', row: 'PromptBERT 110M', printed: 78.54, recomputed: 78.5229 },
  {
    paper: 'prompteol',
    file: P,
    table: 'Table 3',
    group: 'Fine-tuning on supervised datasets',
    row: 'SimCSE-RoBERTa 220M',
    printed: 89.61,
    recomputed: 88.6114,
    note: 'Off by exactly 1.00: the MR cell printed 81.12 would give 89.61 as 88.12 (likely a digit lost in the extraction; recorded as printed).',
  },
  { paper: 'prompteol', file: P, table: 'Table 3', group: 'Without fine-tuning', row: 'BERT avg. 110M', printed: 84.94, recomputed: 84.9543, note: BERT_AVG_NOTE },
  { paper: 'simace', file: S, table: 'Table 4', group: 'BERT_base', row: 'RankCSE_listMLE', printed: 80.06, recomputed: 80.0971 },
  { paper: 'simace', file: S, table: 'Table 4', group: 'BERT_large', row: 'RankCSE_listMLE', printed: 80.11, recomputed: 80.1229 },
  { paper: 'simace', file: S, table: 'Table 12', group: 'BERT_base', row: 'SimCSE', printed: 46.16, recomputed: 46.1489 },
  {
    paper: 'simace',
    file: S,
    table: 'Table 13',
    group: 'BERT_base',
    row: 'ArcCon',
    printed: 85.41,
    recomputed: 85.8429,
    note: 'An SST cell of 85.56 instead of the printed 88.56 would give 85.41.',
  },
  { paper: 'simace', file: S, table: 'Table 13', group: 'BERT_large', row: 'ArcCon', printed: 87.94, recomputed: 87.7014 },
];

/** The known disagreement of a row's printed average, if it has one. */
export function averageDisagreement(q: { paper: string; table: string; row: string; file?: string; group?: string }): AverageDisagreement | undefined {
  return KNOWN_AVERAGE_DISAGREEMENTS.find(
    (d) =>
      d.paper === q.paper &&
      d.table === q.table &&
      d.row === q.row &&
      (q.file === undefined || d.file === q.file) &&
      (q.group === undefined || d.group === q.group),
  );
}
