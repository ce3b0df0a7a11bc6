/**
 * SimCSE's supervised NLI data (`nli_for_simcse.csv`: SNLI + MNLI, columns sent0, sent1,
 * hard_neg, where sent1 is entailed by sent0 and hard_neg contradicts it; neutral pairs are
 * already dropped).
 *
 * Two views: the triplets SimCSE trains on, and AnglE's transfer-setting pairs, where each
 * triplet gives (sent0, sent1) with label 1 and (sent0, hard_neg) with label 0, in that order.
 * An empty field is kept as the empty string (SimCSE turns pandas' NaN into " ", which tokenises
 * to nothing as well).
 */
import { csvTable } from './csv.js';
import { locateSplit } from './locate.js';
import { checkSize } from './sizes.js';
import type { LoadOptions, ScoredPair, SourceLine } from './sts.js';
import { readText } from './text.js';

export interface NliTriplet {
  sent0: string;
  /** Entailed by sent0 (SimCSE's positive). */
  sent1: string;
  /** Contradicts sent0 (SimCSE's hard negative). */
  hardNeg: string;
  source: SourceLine;
}

export interface NliTriplets {
  triplets: NliTriplet[];
  file: string;
  where?: 'local' | 'cache';
  sizeNote?: string;
}

export interface NliPairs {
  /** 2 per triplet: (sent0, sent1, 1), (sent0, hard_neg, 0). */
  pairs: ScoredPair[];
  file: string;
  where?: 'local' | 'cache';
  sizeNote?: string;
}

const COLUMNS = ['sent0', 'sent1', 'hard_neg'] as const;

/** Reads an nli_for_simcse-style csv (header sent0, sent1, hard_neg). */
export function readNliCsv(file: string): NliTriplet[] {
  const what = 'a csv with the columns sent0, sent1, hard_neg';
  const { rows } = csvTable(readText(file, what), file, COLUMNS, what);
  return rows.map((r) => ({ sent0: r.values.sent0, sent1: r.values.sent1, hardNeg: r.values.hard_neg, source: { file, line: r.line } }));
}

/** The triplets, from `<dataDir>/nli/nli_for_simcse.csv` or the Hub copy, checked against 275,601 rows. */
export function loadNliTriplets(opts: LoadOptions = {}): NliTriplets {
  const loc = locateSplit('NLI', 'train', opts);
  const triplets = readNliCsv(loc.files[0]);
  const sizeNote = checkSize('NLI', 'train', triplets.length, loc.files[0], opts);
  return { triplets, file: loc.files[0], where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}

/** AnglE's pairs from triplets: entailment -> 1, contradiction -> 0. */
export function nliPairs(triplets: readonly NliTriplet[]): ScoredPair[] {
  return triplets.flatMap((t) => [
    { a: t.sent0, b: t.sent1, score: 1, source: t.source },
    { a: t.sent0, b: t.hardNeg, score: 0, source: t.source },
  ]);
}

/** AnglE's NLI training pairs (transfer setting). */
export function loadNliPairs(opts: LoadOptions = {}): NliPairs {
  const t = loadNliTriplets(opts);
  return { pairs: nliPairs(t.triplets), file: t.file, where: t.where, ...(t.sizeNote ? { sizeNote: t.sizeNote } : {}) };
}
