/**
 * Prompt templates of prompt-based sentence embeddings (PromptEOL, Jiang et al. 2023, "Scaling
 * sentence embeddings with large language models"; AnglE-LLaMA): the text is put into a template
 * that asks for a one-word summary, and the embedding is the decoder's state at the prompt's last
 * token.
 *
 *   PromptEOL:   This sentence : "{text}" means in one word:"
 *   AnglE-LLaMA: Summarize sentence "{text}" in one word:"
 *
 * In-context learning (PromptEOL §3.2): demonstrations are the same template filled with an
 * example text and followed by its word and `".`, prepended to the prompt, e.g.
 * `This sentence : "A jockey riding a horse." means in one word:"Equestrian".This sentence : "{text}" means in one word:"`.
 *
 * As in the reference code (kongds/scaling_sentemb evaluation.py): the filled prompt is stripped of
 * surrounding whitespace; with `prepareText: 'prompteol'` each text first gets PromptEOL's
 * clean-up (a final '.' unless it ends in . ? " ', double quotes turned into single quotes, a final
 * '?' into '.').
 *
 * One implementation for both ends of an embedding: the in-process encoder
 * (lib/embed/prompt-encoder.ts, which re-exports these) and the client of a serving engine
 * (./openai-embeddings-client.ts), which fills the template on our side so the engine embeds exactly
 * the text our own encoder would. It lives here, below lib/embed, because the client does.
 */
import { InputError } from '../util/errors.js';

export const PROMPTEOL_TEMPLATE = 'This sentence : "{text}" means in one word:"';
export const ANGLE_LLAMA_TEMPLATE = 'Summarize sentence "{text}" in one word:"';
const TEXT_FIELD = '{text}';

export interface Demonstration {
  text: string;
  /** The one word the demonstration's text means. */
  word: string;
}

/** How a text becomes a prompt. */
export interface PromptTemplateOptions {
  /** The template, with `{text}` once (default PromptEOL's). */
  template?: string;
  /** In-context demonstrations, prepended in order. */
  demonstrations?: readonly Demonstration[];
  /** What closes a demonstration after its word (default `".`, PromptEOL's). */
  demonstrationEnd?: string;
  /** Text clean-up before filling the template: none (default) or PromptEOL's evaluation clean-up. */
  prepareText?: 'none' | 'prompteol';
}

/** PromptEOL's clean-up of a sentence before it goes into the template. */
export function prepareTextPromptEol(s: string): string {
  let t = s;
  if (t.length > 0 && !'.?"\''.includes(t[t.length - 1])) t += '.';
  t = t.replaceAll('"', "'");
  if (t.length > 0 && t[t.length - 1] === '?') t = t.slice(0, -1) + '.';
  return t;
}

/** Fails unless `template` holds `{text}` exactly once. */
export function checkTemplate(template: string): void {
  const n = template.split(TEXT_FIELD).length - 1;
  if (n !== 1) throw new InputError(`a prompt template needs '${TEXT_FIELD}' exactly once, found ${n} in ${JSON.stringify(template)}`);
}

/** The template with demonstrations prepended: what each text is substituted into. */
export function inContextTemplate(template: string, demonstrations: readonly Demonstration[], end = '".'): string {
  checkTemplate(template);
  return demonstrations.map((d) => template.replace(TEXT_FIELD, () => d.text) + d.word + end).join('') + template;
}

/** The prompt string for one text. */
export function promptFor(text: string, opts: PromptTemplateOptions = {}): string {
  const template = inContextTemplate(opts.template ?? PROMPTEOL_TEMPLATE, opts.demonstrations ?? [], opts.demonstrationEnd);
  const t = opts.prepareText === 'prompteol' ? prepareTextPromptEol(text) : text;
  // A function replacement, so `$&` and friends in a text stay literal.
  return template.replace(TEXT_FIELD, () => t).trim();
}
