/**
 * SICK's entailment judgements as labelled sentence pairs: the smoke preset's stand-in for the NLI
 * training data of AnglE Table 2 where `nli_for_simcse.csv` is not on the machine.
 *
 * SICK (Marelli et al. 2014) annotates every pair with a relatedness score and an entailment
 * judgement (`entailment_judgment`, the fifth column: ENTAILMENT, CONTRADICTION or NEUTRAL). AnglE
 * turns NLI into pairs the same way (its issue #26 and examples/NLI/README.md: entailment -> 1,
 * contradiction -> 0, neutral skipped), so SICK's judgements give pairs of the same kind — from
 * another corpus and far fewer of them (train: 1,299 entailment + 665 contradiction of 4,500) —
 * which exercise the transfer recipes end to end and reproduce nothing.
 *
 * SimCSE's supervised objective needs triplets (anchor, entailed, contradicted), the shape of
 * `nli_for_simcse.csv`: `sickEntailmentTriplets` makes them from the sentences that SICK pairs with
 * both an entailed and a contradicted sentence (107 anchors, 148 triplets in train).
 *
 * The files are the ones SICK-R's loader reads (`<dataDir>/sick/SICK_{train,trial,test_annotated}.txt`,
 * lib/data/sts.ts), with the same text handling (SentEval's whitespace-joined tokens).
 */
import type { NliTriplet } from './nli.js';
import type { LoadOptions, ScoredPair, StsSplit } from './sts.js';
import { locateSplit } from './locate.js';
import { pyFileLines, pyStrip, readText, senteval } from './text.js';
import { InputError } from '../util/errors.js';

/** Label of each judgement; `null`: dropped (AnglE skips neutral pairs). */
export const SICK_ENTAILMENT_LABELS: Readonly<Record<string, 1 | 0 | null>> = { ENTAILMENT: 1, CONTRADICTION: 0, NEUTRAL: null };

export interface SickEntailmentPairs {
  /** What runs record as their training data, saying that it stands in for NLI. */
  name: string;
  split: StsSplit;
  /** (sentence_A, sentence_B, 1 | 0) in file order, neutral pairs left out. */
  pairs: ScoredPair[];
  /** Rows per judgement, neutral included. */
  counts: { entailment: number; contradiction: number; neutral: number };
  file: string;
  where?: 'local' | 'cache';
}

/** Reads a SICK file's entailment column (header line, then pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment). */
export function readSickEntailmentFile(file: string, split: StsSplit): SickEntailmentPairs {
  const lines = pyFileLines(readText(file, 'a header line, then tab-separated SICK rows (pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment)'));
  const header = lines.length > 0 ? pyStrip(lines[0]).split('\t') : [];
  if (header[4] !== 'entailment_judgment') {
    throw new InputError(`expected the header's fifth column to be entailment_judgment, found ${JSON.stringify(header[4] ?? '(none)')}`, { file, line: 1 });
  }
  const pairs: ScoredPair[] = [];
  const counts = { entailment: 0, contradiction: 0, neutral: 0 };
  for (let i = 1; i < lines.length; i++) {
    const where = { file, line: i + 1 };
    const f = pyStrip(lines[i]).split('\t');
    if (f.length < 5) throw new InputError(`expected 5 tab-separated columns (pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment), found ${f.length}`, where);
    const judgement = f[4];
    if (!(judgement in SICK_ENTAILMENT_LABELS)) {
      throw new InputError(`unknown entailment judgement ${JSON.stringify(judgement)}: expected ENTAILMENT, CONTRADICTION or NEUTRAL`, where);
    }
    counts[judgement.toLowerCase() as keyof typeof counts]++;
    const label = SICK_ENTAILMENT_LABELS[judgement];
    if (label !== null) pairs.push({ a: senteval(f[1]), b: senteval(f[2]), score: label, source: where });
  }
  if (pairs.length === 0) throw new InputError('no ENTAILMENT or CONTRADICTION rows after the header line', { file, line: 2 });
  return { name: `SICK ${split} entailment judgements (stand-in for NLI)`, split, pairs, counts, file };
}

/** The labelled pairs of a SICK split from `<dataDir>/sick/` or the Hub copy (the files of SICK-R). */
export function loadSickEntailment(split: StsSplit, opts: LoadOptions = {}): SickEntailmentPairs {
  const loc = locateSplit('SICKRelatedness', split, opts);
  return { ...readSickEntailmentFile(loc.files[0], split), where: loc.where };
}

/**
 * SimCSE-style triplets from the labelled pairs: for each sentence A with entailed sentences
 * E₁…Eₖ and contradicted ones C₁…Cₘ (file order), the triplets (A, Eᵢ, C_{i mod m}); sentences
 * without both kinds give none. Returned in the order of their entailment pairs.
 */
export function sickEntailmentTriplets(set: SickEntailmentPairs): NliTriplet[] {
  const contradicted = new Map<string, string[]>();
  for (const p of set.pairs) if (p.score === 0) contradicted.set(p.a, [...(contradicted.get(p.a) ?? []), p.b]);
  const used = new Map<string, number>();
  const out: NliTriplet[] = [];
  for (const p of set.pairs) {
    if (p.score !== 1) continue;
    const negatives = contradicted.get(p.a);
    if (!negatives) continue;
    const i = used.get(p.a) ?? 0;
    used.set(p.a, i + 1);
    out.push({ sent0: p.a, sent1: p.b, hardNeg: negatives[i % negatives.length], source: p.source });
  }
  return out;
}
