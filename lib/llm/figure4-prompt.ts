/**
 * AnglE's prompt for LLM-supervised data (Figure 4), quoted from the paper
 * (papers/000_c0fdd0968b088fcd.txt line 232; the same words in 003_ae373fbfc2de219d.txt line 224;
 * 001_06941bfad7bf7482.txt line 227 has "system, your job" where the others have "system. Your job"):
 *
 *   "You are a highly smart same-meaning/opposite-meaning sentence-generating system. Your job is to
 *   generate {size} synonymous/antonym sentences of a given input sentence. Input sentence: {text}.
 *   Output:"
 *
 * The slashes are the two prompts: the first words for positives (same-meaning, synonymous), the
 * second for negatives (opposite-meaning, antonym). `{size}` is how many sentences to ask for and
 * `{text}` the input sentence, inserted as is (the template's own period follows it, so a
 * sentence that ends with one gets two, as in the paper's template).
 *
 * The paper says neither how the prompt was sent nor {size}, the temperature or the answer length:
 * here it is one user message; the other settings are the caller's (./llm-supervision.ts has the
 * defaults and says so).
 */
import { InputError } from '../util/errors.js';
import type { ChatMessage } from './types.js';

/** The template as printed in Figure 4 (000_…, line 232). */
export const FIGURE4_TEMPLATE =
  'You are a highly smart same-meaning/opposite-meaning sentence-generating system. Your job is to generate {size} synonymous/antonym sentences of a given input sentence. Input sentence: {text}. Output:';

/** positive: same meaning (pair label 1); negative: opposite meaning (pair label 0). */
export type Polarity = 'positive' | 'negative';

export const POLARITIES: readonly Polarity[] = ['positive', 'negative'];

/** The template with one side of each "a/b" alternative chosen. */
export function figure4Template(polarity: Polarity): string {
  const side = polarity === 'positive' ? 0 : 1;
  return FIGURE4_TEMPLATE.replace('same-meaning/opposite-meaning', ['same-meaning', 'opposite-meaning'][side]).replace('synonymous/antonym', ['synonymous', 'antonym'][side]);
}

/** Figure 4's prompt for one input sentence. */
export function figure4Prompt(polarity: Polarity, text: string, size: number): string {
  if (!Number.isInteger(size) || size < 1) throw new InputError(`{size} must be an integer >= 1, got ${size}`);
  // A function replacement, so that "$&" or "$1" in a sentence stays literal.
  return figure4Template(polarity)
    .replace('{size}', () => String(size))
    .replace('{text}', () => text);
}

/** The prompt as the messages of a chat request. */
export function figure4Messages(polarity: Polarity, text: string, size: number): ChatMessage[] {
  return [{ role: 'user', content: figure4Prompt(polarity, text, size) }];
}
