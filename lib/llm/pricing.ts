/**
 * Token prices and the cost estimate of generated answers. No price is built in (prices change and
 * differ per account); a caller passes a table, e.g. `{ 'gpt-3.5-turbo': { inputPerMTok: 0.5,
 * outputPerMTok: 1.5 } }` in US dollars per million tokens, and the estimate is
 *
 *   cost = promptTokens · inputPerMTok / 1e6 + completionTokens · outputPerMTok / 1e6.
 *
 * A model missing from the table has no cost (undefined), never zero, so a report cannot mistake
 * "unknown" for "free". `UsageTally` adds up what a run used, keeping what was paid in this run
 * apart from what came from the cache.
 */
import type { ChatResult, TokenUsage } from './types.js';

export interface ModelPrice {
  /** US dollars per million prompt tokens. */
  inputPerMTok: number;
  /** US dollars per million completion tokens. */
  outputPerMTok: number;
}

/** Prices by model name (as the request names it). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The estimated cost of `usage` on `model`, or undefined when the table has no price for it. */
export function costOf(usage: TokenUsage, model: string, prices: PriceTable | undefined): number | undefined {
  const p = prices?.[model];
  if (!p) return undefined;
  return (usage.promptTokens * p.inputPerMTok + usage.completionTokens * p.outputPerMTok) / 1e6;
}

/** A rough token count where a server reports none: 4 characters a token (OpenAI's rule of thumb for English). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** US dollars; undefined when some answer had no known price. */
  costUsd: number | undefined;
  /** Answers whose token counts were estimated. */
  estimated: number;
}

function emptyTotals(): UsageTotals {
  return { requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0, estimated: 0 };
}

/** Running totals of the answers of a run: `paid` (generated in this run) and `cached` (read back). */
export class UsageTally {
  readonly paid = emptyTotals();
  readonly cached = emptyTotals();

  add(r: Pick<ChatResult, 'usage' | 'costUsd' | 'cached'>): void {
    const t = r.cached ? this.cached : this.paid;
    t.requests++;
    t.promptTokens += r.usage.promptTokens;
    t.completionTokens += r.usage.completionTokens;
    t.totalTokens += r.usage.totalTokens;
    t.costUsd = t.costUsd === undefined || r.costUsd === undefined ? undefined : t.costUsd + r.costUsd;
    if (r.usage.estimated) t.estimated++;
  }

  /** One line: "12 requests, 3,456 tokens, $0.0123 (cached: 40 requests, saved $0.04)". */
  toString(): string {
    const money = (c: number | undefined) => (c === undefined ? 'cost unknown (no price for the model)' : `$${c.toFixed(4)}`);
    const p = this.paid;
    const c = this.cached;
    return `${p.requests} requests, ${p.totalTokens.toLocaleString('en-US')} tokens, ${money(p.costUsd)}` + (c.requests > 0 ? ` (from the cache: ${c.requests} requests, ${c.totalTokens.toLocaleString('en-US')} tokens, ${money(c.costUsd)} not paid again)` : '');
  }
}
