/**
 * Stand-in models: the shared folder's tiny test models that the smoke preset runs in place of the
 * papers' (a model recorded as `shared:…`, ./training-record.ts `portableModelIdentity`), and
 * random weights (`random-init:…`, the rehearsal). Their runs prove the code path and reproduce
 * nothing, whatever a verdict computed on them says — so every verdict and summary over them says
 * so in the same line (`STAND_IN_WORDS`), not in a note a reader may skip.
 */
import type { LoadedRun } from './results-reader.js';

/** What a verdict over a stand-in model carries. */
export const STAND_IN_WORDS = 'stand-in model: reproduces nothing';

/** Whether a recorded model is a stand-in (see the file comment). */
export function isStandInModel(model: { id: string; weightsSha256?: string }): boolean {
  return model.id.startsWith('shared:') || (model.weightsSha256 ?? '').startsWith('random-init:');
}

/** The distinct stand-in models among `runs`, by recorded id. */
export function standInModels(runs: readonly (LoadedRun | undefined)[]): string[] {
  return [...new Set(runs.flatMap((r) => (r && isStandInModel(r.record.model) ? [r.record.model.id] : [])))];
}

/** `verdict` with STAND_IN_WORDS where any of `runs` is a stand-in. */
export function verdictWords(verdict: string, runs: readonly (LoadedRun | undefined)[]): string {
  return standInModels(runs).length > 0 ? `${verdict} (${STAND_IN_WORDS})` : verdict;
}

/** A sentence for the top of a summary when any run is a stand-in; undefined otherwise. */
export function standInSentence(runs: readonly (LoadedRun | undefined)[]): string | undefined {
  const ids = standInModels(runs);
  if (ids.length === 0) return undefined;
  return `Stand-in model${ids.length > 1 ? 's' : ''} (${ids.map((i) => `\`${i}\``).join(', ')}; the smoke preset's tiny test models): these numbers and verdicts reproduce nothing of the papers.`;
}
