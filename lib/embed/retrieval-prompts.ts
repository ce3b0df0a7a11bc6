/**
 * Prompts for queries and documents, by name: angle_emb 0.6 trains and encodes asymmetric data with
 * a query template and a document template (`--query_prompt "query: {text}"`, `--doc_prompt
 * "document: {text}"`; format A's `--text_prompt` for both sides of a pair), each a string with
 * `{text}` once. An encoder wrapped with a template fills it in before encoding; nothing else about
 * the encoder changes (its pooling, truncation, engine).
 *
 * The named sets here are what a caller picks by name (`retrievalPrompts('angle-uae')`); a set is
 * two templates, and `'{text}'` leaves that side as it is.
 */
import { checkTemplate } from '../llm/prompt-template.js';
import { UnknownNameError } from '../util/errors.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

export interface QueryDocumentPrompts {
  /** Template of queries (default `{text}`: no prompt). */
  query: string;
  /** Template of documents (default `{text}`). */
  document: string;
}

/**
 * The named prompt sets. `angle-uae`: the retrieval query prompt angle_emb's README gives for
 * UAE-Large-V1 (`Prompts.C`; the instruction BGE uses too), documents as they are; `query-document`:
 * angle_emb's documented CLI example (`query: {text}`, `document: {text}`); `none`: no prompt.
 */
export const RETRIEVAL_PROMPTS = {
  none: { query: '{text}', document: '{text}' },
  'query-document': { query: 'query: {text}', document: 'document: {text}' },
  'angle-uae': { query: 'Represent this sentence for searching relevant passages: {text}', document: '{text}' },
} as const satisfies Record<string, QueryDocumentPrompts>;

export type RetrievalPromptName = keyof typeof RETRIEVAL_PROMPTS;

/** A named prompt set; an unknown name is an error listing the names. */
export function retrievalPrompts(name: string): QueryDocumentPrompts {
  const p = (RETRIEVAL_PROMPTS as Record<string, QueryDocumentPrompts>)[name];
  if (!p) throw new UnknownNameError('prompt set', name, Object.keys(RETRIEVAL_PROMPTS));
  return p;
}

/** `template` with `{text}` replaced by `text` (literally: `$&` in a text stays as it is). */
export function fillPrompt(template: string, text: string): string {
  checkTemplate(template);
  return template.replace('{text}', () => text);
}

/** `encoder` with every text put into `template` first. */
export function promptedEncoder(encoder: SentenceEncoder, template: string): SentenceEncoder {
  checkTemplate(template);
  if (template === '{text}') return encoder;
  return { encode: (texts: string[], opts?: EncodeOptions): Promise<Embeddings> => encoder.encode(texts.map((t) => fillPrompt(template, t)), opts) };
}

/** A query encoder and a document encoder over one encoder, with a prompt set (a name or the two templates). */
export function queryDocumentEncoders(encoder: SentenceEncoder, prompts: RetrievalPromptName | QueryDocumentPrompts): { query: SentenceEncoder; document: SentenceEncoder } {
  const p = typeof prompts === 'string' ? retrievalPrompts(prompts) : prompts;
  return { query: promptedEncoder(encoder, p.query), document: promptedEncoder(encoder, p.document) };
}
