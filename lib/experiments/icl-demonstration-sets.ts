/**
 * The candidate sets of PromptEOL's demonstration search (§3.2, §4.1; the search itself is
 * ./icl-demonstration-search.ts):
 *
 * - Table 4's eight demonstrations (`table4DemonstrationSet`): the published pairs this project
 *   holds, the default;
 * - a file (lib/llm/demonstration-set.ts `readDemonstrationFile`): JSON lines
 *   `{"sentence", "word"}`, or the authors' `icl_examples.txt` (kongds/scaling_sentemb: the paper's
 *   300 pairs of Appendix A, which our copy of the paper lacks) where a user has it;
 * - STS-B train sentences labelled with one word by an OpenAI-compatible chat endpoint
 *   (`labelStsbTrainDemonstrations`, through lib/llm/one-word-labels.ts), written as such a JSON-lines
 *   file so the set a search ran on is recorded.
 *
 * Which 100 train sentences the authors labelled the paper does not say: here a seeded sample of
 * STS-B train's distinct sentences (both columns). Our STS-B copy is SentEval's, tokenised and
 * lowercased ("a man is smoking ."), where the authors' pairs keep the original text ("A man is
 * smoking."): say so beside results.
 */
import { loadStsBenchmark } from '../data/sts.js';
import type { LoadOptions } from '../data/sts.js';
import { readDemonstrationsJsonl, writeDemonstrationsJsonl, type DemonstrationCandidate } from '../llm/demonstration-set.js';
import { labelOneWord, type OneWordLabelOptions, type OneWordLabelResult } from '../llm/one-word-labels.js';
import type { ChatGenerator } from '../llm/types.js';
import { mulberry32 } from '../util/mulberry32.js';
import type { SimpleTable } from '../util/table.js';
import { PROMPTEOL_ICL_DEMONSTRATIONS } from './tables/prompteol.js';

/** The demonstration set of the paper: 100 STS-B train pairs and 200 dictionary pairs (§4.1). */
export const PROMPTEOL_DEMONSTRATION_SET_SIZE = 300;

/** Table 4's demonstrations, one per OPT size, as a candidate set. */
export function table4DemonstrationSet(): DemonstrationCandidate[] {
  return PROMPTEOL_ICL_DEMONSTRATIONS.map((d) => ({ demonstration: { ...d.demonstration }, source: `PromptEOL Table 4 (OPT ${d.size})` }));
}

/**
 * `count` distinct sentences of STS-B train (both columns, in file order before the draw), drawn
 * without replacement by a seeded Fisher–Yates shuffle (mulberry32), in the order drawn.
 */
export function stsbTrainSentences(o: LoadOptions & { count?: number; seed?: number } = {}): string[] {
  const count = o.count ?? 100;
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be an integer >= 1, got ${o.count}`);
  const distinct = [...new Set(loadStsBenchmark('train', o).pairs.flatMap((p) => [p.a, p.b]))];
  const next = mulberry32(o.seed ?? 0);
  const n = Math.min(count, distinct.length);
  for (let i = 0; i < n; i++) {
    const j = i + (next() % (distinct.length - i));
    [distinct[i], distinct[j]] = [distinct[j]!, distinct[i]!];
  }
  return distinct.slice(0, n);
}

export interface LabelledDemonstrations {
  /** The set as read back from `file` (empty when no sentence got a word; `why` says so). */
  candidates: DemonstrationCandidate[];
  /** The JSON-lines file written (absent when nothing was accepted). */
  file?: string;
  labelling: OneWordLabelResult;
  sentences: string[];
  why?: string;
}

/**
 * STS-B train sentences (`stsbTrainSentences`) labelled with one word by `generator`
 * (lib/llm/one-word-labels.ts; resumable with `cacheDir`), the accepted pairs written to `out` as
 * JSON lines and read back from it: the set a search runs on is the recorded one.
 */
export async function labelStsbTrainDemonstrations(
  generator: ChatGenerator,
  o: LoadOptions & OneWordLabelOptions & { out: string; count?: number; seed?: number; log?: (line: string) => void },
): Promise<LabelledDemonstrations> {
  const { out, count, seed, log, ...rest } = o;
  const sentences = stsbTrainSentences({ ...rest, count, seed });
  log?.(`labelling ${sentences.length} STS-B train sentences with one word by ${generator.name}${o.cacheDir ? ' (answers cached: a rerun pays only for new ones)' : ''}`);
  const labelling = await labelOneWord(generator, sentences, rest);
  const rejected = labelling.rejects.length ? `; ${labelling.rejects.length} without a word (${reasonCounts(labelling)})` : '';
  log?.(`one-word labels: ${labelling.labels.length} of ${sentences.length}${rejected}; ${labelling.usage}`);
  if (labelling.labels.length === 0) return { candidates: [], labelling, sentences, why: `no sentence got a one-word label from ${generator.name}${rejected}` };
  await writeDemonstrationsJsonl(out, labelling.labels.map((l) => ({ text: l.sentence, word: l.word })));
  return { candidates: readDemonstrationsJsonl(out), file: out, labelling, sentences };
}

function reasonCounts(r: OneWordLabelResult): string {
  const counts = new Map<string, number>();
  for (const x of r.rejects) counts.set(x.reason, (counts.get(x.reason) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k}: ${n}`).join(', ');
}

/** The labelled pairs and the rejected answers with their reasons (the first `limit` of each, default 20). */
export function oneWordLabelsTable(r: OneWordLabelResult, o: { limit?: number; caption?: string } = {}): SimpleTable {
  const limit = o.limit ?? 20;
  const rows = [
    ...r.labels.slice(0, limit).map((l) => [l.promptId, l.sentence, l.word, 'labelled']),
    ...r.rejects.slice(0, limit).map((x) => [x.promptId, x.sentence, x.answer.length > 80 ? `${x.answer.slice(0, 77)}…` : x.answer, `rejected: ${x.reason}`]),
  ];
  const shown = Math.min(limit, r.labels.length) + Math.min(limit, r.rejects.length);
  const total = r.labels.length + r.rejects.length;
  return {
    caption: o.caption ?? `One-word labels by ${r.generator}: ${r.labels.length} labelled, ${r.rejects.length} rejected`,
    columns: ['prompt', 'sentence', 'word (or the answer)', 'outcome'],
    rows,
    ...(shown < total ? { notes: [`${shown} of ${total} shown`] } : {}),
  };
}
