/**
 * The pooling of a model — how token states become one sentence vector — as a name: the one type,
 * the one parser and the one alias table of the library. The math is in lib/embed/pooling.ts; the
 * default of each architecture is in its registry entry (./architecture.ts `defaultPooling`); a
 * model folder saved with its pooling carries it as sentence-transformers modules
 * (lib/embed/sentence-transformer-export.ts writes them, ./sentence-transformers/read.ts reads them).
 * It lives here, below lib/embed, because an architecture's entry states its default.
 *
 * Spellings: ours (`cls_avg`), the papers' (AnglE Table 4's row names `cls-last-avg`, `last-avg`,
 * `last-max`, `first-last-avg`; SimCSE's `cls_before_pooler`; `mean`, `last-token`), and the slug
 * that names files and recipes (`cls-avg`: ours with hyphens), all read by `parsePooling`.
 */
import { UnknownNameError } from '../util/errors.js';

export const POOLING_STRATEGIES = ['cls', 'cls_avg', 'avg', 'max', 'first_last_avg', 'last', 'cls_avg_legacy', 'cls_avg_batch_tokens', 'cls_pooler'] as const;
export type Pooling = (typeof POOLING_STRATEGIES)[number];

/** The papers' names (AnglE Table 4, SimCSE, common usage) mapped to ours: the one alias table. */
export const POOLING_ALIASES: Readonly<Record<string, Pooling>> = {
  'cls-last-avg': 'cls_avg',
  'last-avg': 'avg',
  mean: 'avg',
  'last-max': 'max',
  'first-last-avg': 'first_last_avg',
  avg_first_last: 'first_last_avg',
  'last-token': 'last',
  cls_before_pooler: 'cls',
};

/** AnglE Table 4 (lower)'s rows, as the paper names them (each an alias above or our own name). */
export const ANGLE_TABLE4_POOLING_ROWS = ['cls', 'cls-last-avg', 'last-avg', 'last-max', 'first-last-avg'] as const;

/** A pooling's spelling in file and recipe names: ours with hyphens (`cls_avg` -> `cls-avg`); parsePooling reads it back. */
export function poolingSlug(p: Pooling): string {
  return p.replace(/_/g, '-');
}

/** Our name of a pooling given by any of its spellings; UnknownNameError (listing them) otherwise. */
export function parsePooling(name: string): Pooling {
  const n = name.trim();
  if ((POOLING_STRATEGIES as readonly string[]).includes(n)) return n as Pooling;
  const lower = n.toLowerCase();
  const alias = POOLING_ALIASES[lower] ?? POOLING_STRATEGIES.find((p) => poolingSlug(p) === lower);
  if (alias) return alias;
  throw new UnknownNameError('pooling', name, [...POOLING_STRATEGIES, ...Object.keys(POOLING_ALIASES)]);
}
