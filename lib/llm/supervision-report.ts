/**
 * Tables of LLM-supervised data runs (./llm-supervision.ts) for a notebook or a report: per
 * generator what was asked, what came back as pairs and what was rejected (by reason), what was
 * paid in this run and what came from the answer cache (requests, tokens, cost); examples of the
 * rejected lines with their reason; examples of the pairs.
 */
import type { SimpleTable } from '../util/table.js';
import { REJECT_REASONS } from './parse-answer.js';
import type { LlmSupervisionResult, SupervisedPair, SupervisedReject } from './llm-supervision.js';

const money = (c: number | undefined) => (c === undefined ? 'unknown (no price given)' : `$${c.toFixed(4)}`);

/** One row per generator: prompts, pairs (positives / negatives), rejects, failures, requests, tokens and cost. */
export function supervisionTable(results: readonly LlmSupervisionResult[]): SimpleTable {
  return {
    caption: 'LLM-supervised data per generator (paid: generated in this run; cache: answers read back, not paid again)',
    columns: ['generator', 'prompts', 'pairs', 'positives', 'negatives', 'rejected lines', 'failed prompts', 'not started', 'requests paid', 'requests from cache', 'tokens paid', 'tokens from cache', 'cost paid'],
    rows: results.map((r) => [
      r.generator,
      r.prompts,
      r.pairs.length,
      r.pairs.filter((p) => p.score === 1).length,
      r.pairs.filter((p) => p.score === 0).length,
      r.rejects.filter((x) => x.reason !== 'failed').length,
      r.failures.length,
      r.notStarted.length,
      r.usage.paid.requests,
      r.usage.cached.requests,
      r.usage.paid.totalTokens,
      r.usage.cached.totalTokens,
      money(r.usage.paid.costUsd),
    ]),
  };
}

/** Rejected lines per reason (columns) and generator (rows); 'failed' counts prompts with no answer. */
export function rejectReasonsTable(results: readonly LlmSupervisionResult[]): SimpleTable {
  const reasons = [...REJECT_REASONS, 'failed'] as const;
  return {
    caption: "Rejected lines by reason (lib/llm/parse-answer.ts says what each reason means; 'failed': a prompt that got no answer)",
    columns: ['generator', ...reasons],
    rows: results.map((r) => [r.generator, ...reasons.map((why) => r.rejects.filter((x) => x.reason === why).length)]),
  };
}

/** Up to `perReason` rejected lines of each reason, with the prompt they answer. */
export function rejectExamplesTable(rejects: readonly SupervisedReject[], perReason = 2): SimpleTable {
  const byReason = new Map<string, SupervisedReject[]>();
  for (const x of rejects) {
    const list = byReason.get(x.reason) ?? [];
    if (list.length < perReason) list.push(x);
    byReason.set(x.reason, list);
  }
  return {
    caption: `Rejected lines, up to ${perReason} per reason`,
    columns: ['reason', 'prompt', 'input sentence', 'line'],
    rows: [...byReason.values()].flat().map((x) => [x.reason, x.promptId, x.input, x.line]),
  };
}

/** The first `n` pairs (input, generated sentence, label). */
export function pairExamplesTable(pairs: readonly SupervisedPair[], n = 8): SimpleTable {
  return {
    caption: `The first ${Math.min(n, pairs.length)} of ${pairs.length} pairs (label 1: same meaning, 0: opposite)`,
    columns: ['prompt', 'generator', 'input sentence (sentence1)', 'generated (sentence2)', 'label'],
    rows: pairs.slice(0, n).map((p) => [p.promptId, p.generator, p.a, p.b, p.score]),
  };
}
