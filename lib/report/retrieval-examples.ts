/**
 * What a retrieval model actually returned, for a reader to look at: a few queries of a caption
 * retrieval (lib/eval/caption-queries.ts) with their top-k captions, each marked as one of the
 * query's own image's captions (✓), the query itself, or another image's (✗, naming the image).
 * `pickExampleQueries` chooses which queries to show: some the strict rule counts as hits and some
 * misses, so the table shows both what success and what failure look like.
 */
import { InputError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';

export interface RetrievalExamplesInput {
  /** Every caption, in file order (caption j belongs to image floor(j / perImage)). */
  captions: readonly string[];
  perImage: number;
  /** Per query (image i, whose query is caption perImage·i): its retrieved caption indices, best first. */
  top: readonly (readonly number[])[];
  /** Per query, 1 for a strict hit (optional: shown in the query's row). */
  strict?: readonly number[];
  /** The images whose queries to show. */
  images: readonly number[];
  caption?: string;
}

/** Up to `hits` strict hits and `misses` misses, in image order (fewer when there are fewer). */
export function pickExampleQueries(strict: readonly number[], hits = 2, misses = 2): number[] {
  const h: number[] = [];
  const m: number[] = [];
  strict.forEach((s, i) => {
    if (s === 1 && h.length < hits) h.push(i);
    else if (s !== 1 && m.length < misses) m.push(i);
  });
  return [...h, ...m].sort((a, b) => a - b);
}

export function retrievalExamplesTable(o: RetrievalExamplesInput): SimpleTable {
  const rows: SimpleTable['rows'] = [];
  for (const i of o.images) {
    const list = o.top[i];
    if (!list) throw new InputError(`retrieval examples: no retrieved list for image ${i} (${o.top.length} queries)`);
    const q = i * o.perImage;
    const verdict = o.strict ? (o.strict[i] === 1 ? ' — strict hit' : ' — strict miss') : '';
    list.forEach((c, r) => {
      const img = Math.floor(c / o.perImage);
      const mark = c === q ? '✓ the query itself' : img === i ? '✓ same image' : `✗ image ${img}`;
      rows.push([r === 0 ? `image ${i}: “${o.captions[q]}”${verdict}` : '', r + 1, o.captions[c] ?? `(caption ${c})`, mark]);
    });
  }
  return { caption: o.caption ?? 'Example queries and their top results', columns: ['query', 'rank', 'retrieved caption', 'correct?'], rows };
}
