/**
 * The tokenizer files of an exported model, complete enough for every client to tokenize a batch
 * the way the model was trained: HF transformers (AutoTokenizer), sentence-transformers (which
 * uses it) and transformers.js (which reads `tokenizer_class`, the special tokens and
 * `model_max_length` from tokenizer_config.json, and without a pad token cannot pad a batch:
 * `Cannot convert undefined to a BigInt`).
 *
 * A source directory often has a bare tokenizer_config.json (the golden tiny BERT's is
 * `{"do_lower_case": true}`) and no special_tokens_map.json; tokenizer.json, which every model
 * here has, holds what is missing. What the source's own files say always wins; only absent keys
 * are filled in, each from one place:
 *
 * | key                          | from tokenizer.json                                                   |
 * |------------------------------|------------------------------------------------------------------------|
 * | tokenizer_class              | the model type (config.json `model_type` bert → BertTokenizer), checked against a WordPiece model |
 * | do_lower_case, strip_accents, tokenize_chinese_chars | the BertNormalizer's lowercase, strip_accents, handle_chinese_chars |
 * | unk_token                    | the model's unk_token                                                  |
 * | cls_token, sep_token         | the post-processor: TemplateProcessing's single template (first and last special token) or BertProcessing's cls/sep |
 * | pad_token                    | `padding.pad_token`, else the added token whose id is config.json `pad_token_id`, else an added special token named [PAD] / <pad> |
 * | mask_token                   | an added special token named [MASK] / <mask>                           |
 * | clean_up_tokenization_spaces | the WordPiece decoder's `cleanup`                                      |
 * | added_tokens_decoder         | `added_tokens`, keyed by id (as transformers writes it)                |
 *
 * `model_max_length` is the export's max_seq_length: the length the exported model truncates to,
 * so a client that truncates by the tokenizer (transformers.js) embeds what sentence-transformers
 * embeds. special_tokens_map.json holds the five special tokens. Both files are written with
 * sorted keys and 2-space indentation, as transformers' save_pretrained writes them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';

/** tokenizer_class by config.json model_type, for the architectures that export here. */
export const TOKENIZER_CLASSES: Readonly<Record<string, string>> = { bert: 'BertTokenizer' };

export const SPECIAL_TOKEN_KEYS = ['unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

export interface CompletedTokenizerFiles {
  /** tokenizer_config.json's object. */
  tokenizerConfig: Record<string, unknown>;
  /** special_tokens_map.json's object. */
  specialTokensMap: Record<string, unknown>;
}

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
  single_word?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  normalized?: boolean;
}

interface TokenizerJson {
  added_tokens?: AddedToken[];
  normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean } | null;
  post_processor?: {
    type?: string;
    single?: Array<{ SpecialToken?: { id: string } }>;
    cls?: [string, number];
    sep?: [string, number];
  } | null;
  padding?: { pad_token?: string } | null;
  decoder?: { type?: string; cleanup?: boolean } | null;
  model?: { type?: string; unk_token?: string; continuing_subword_prefix?: string; vocab?: unknown; merges?: unknown };
}

function readObject(file: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not readable JSON (${(e as Error).message})`, { file });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError('expected a JSON object', { file });
  return v as Record<string, unknown>;
}

/** A special token's text from a tokenizer_config / special_tokens_map value (a string or an AddedToken dict). */
function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return undefined;
}

/** Whether tokenizer.json's model is WordPiece (its `type`, or, untagged, a vocab with `continuing_subword_prefix` and no merges). */
function isWordPiece(t: TokenizerJson): boolean {
  const m = t.model;
  if (!m) return false;
  if (m.type !== undefined) return m.type === 'WordPiece';
  return typeof m.continuing_subword_prefix === 'string' && m.vocab !== undefined && m.merges === undefined;
}

/** The special tokens tokenizer.json implies, by role (see the file comment). */
function specialTokensFrom(t: TokenizerJson, padTokenId: unknown): Partial<Record<(typeof SPECIAL_TOKEN_KEYS)[number], string>> {
  const out: Partial<Record<(typeof SPECIAL_TOKEN_KEYS)[number], string>> = {};
  const added = t.added_tokens ?? [];
  if (t.model?.unk_token) out.unk_token = t.model.unk_token;
  const pp = t.post_processor;
  if (pp?.type === 'TemplateProcessing' && Array.isArray(pp.single)) {
    const specials = pp.single.filter((p) => p.SpecialToken).map((p) => p.SpecialToken!.id);
    if (specials.length >= 1 && pp.single[0]?.SpecialToken) out.cls_token = specials[0];
    if (specials.length >= 1 && pp.single.at(-1)?.SpecialToken) out.sep_token = specials.at(-1);
  } else if (pp?.type === 'BertProcessing' || pp?.type === 'RobertaProcessing') {
    if (pp.cls) out.cls_token = pp.cls[0];
    if (pp.sep) out.sep_token = pp.sep[0];
  }
  const byId = typeof padTokenId === 'number' ? added.find((a) => a.id === padTokenId) : undefined;
  const named = (re: RegExp) => added.find((a) => a.special !== false && re.test(a.content))?.content;
  out.pad_token = t.padding?.pad_token ?? byId?.content ?? named(/^(\[PAD\]|<pad>)$/i);
  const mask = named(/^(\[MASK\]|<mask>)$/i);
  if (mask) out.mask_token = mask;
  return out;
}

/**
 * The completed tokenizer_config.json and special_tokens_map.json of the tokenizer in
 * `tokenizerDir` (see the file comment). `modelConfig` is the model's config.json object;
 * `modelMaxLength` the export's max_seq_length.
 */
export function completeTokenizerFiles(tokenizerDir: string, modelConfig: Record<string, unknown>, modelMaxLength: number): CompletedTokenizerFiles {
  const tokFile = join(tokenizerDir, 'tokenizer.json');
  if (!existsSync(tokFile)) throw new InputError('the source model has no tokenizer.json to export', { file: tokenizerDir });
  const t = readObject(tokFile) as TokenizerJson;
  const cfgFile = join(tokenizerDir, 'tokenizer_config.json');
  const mapFile = join(tokenizerDir, 'special_tokens_map.json');
  const given = existsSync(cfgFile) ? readObject(cfgFile) : {};
  const givenMap = existsSync(mapFile) ? readObject(mapFile) : {};
  const cfg: Record<string, unknown> = { ...given };

  if (cfg.tokenizer_class === undefined) {
    const modelType = String(modelConfig.model_type ?? '');
    const cls = TOKENIZER_CLASSES[modelType];
    if (!cls) throw new InputError(`cannot tell the tokenizer class of a '${modelType}' model; add "tokenizer_class" to tokenizer_config.json (known: ${Object.entries(TOKENIZER_CLASSES).map(([k, v]) => `${k} → ${v}`).join(', ')})`, { file: cfgFile });
    if (cls === 'BertTokenizer' && !isWordPiece(t)) throw new InputError(`a '${modelType}' model whose tokenizer is not WordPiece: add "tokenizer_class" to tokenizer_config.json`, { file: tokFile });
    cfg.tokenizer_class = cls;
  }
  const n = t.normalizer;
  if (n?.type === 'BertNormalizer') {
    if (cfg.do_lower_case === undefined && typeof n.lowercase === 'boolean') cfg.do_lower_case = n.lowercase;
    if (cfg.strip_accents === undefined && n.strip_accents !== undefined) cfg.strip_accents = n.strip_accents;
    if (cfg.tokenize_chinese_chars === undefined && typeof n.handle_chinese_chars === 'boolean') cfg.tokenize_chinese_chars = n.handle_chinese_chars;
  }
  if (cfg.clean_up_tokenization_spaces === undefined && typeof t.decoder?.cleanup === 'boolean') cfg.clean_up_tokenization_spaces = t.decoder.cleanup;

  const implied = specialTokensFrom(t, modelConfig.pad_token_id);
  const specials: Record<string, string> = {};
  for (const k of SPECIAL_TOKEN_KEYS) {
    const v = tokenText(cfg[k]) ?? tokenText(givenMap[k]) ?? implied[k];
    if (v !== undefined) specials[k] = v;
  }
  for (const k of ['pad_token', 'unk_token'] as const) {
    if (specials[k] === undefined) throw new InputError(`cannot find the tokenizer's ${k} (tokenizer.json names none): add "${k}" to tokenizer_config.json`, { file: tokFile });
  }
  const vocab = new Set((t.added_tokens ?? []).map((a) => a.content));
  for (const [k, v] of Object.entries(specials)) {
    if (!vocab.has(v) && !tokenInVocab(t, v)) throw new InputError(`${k} '${v}' is not a token of this tokenizer`, { file: tokFile });
    if (cfg[k] === undefined) cfg[k] = v;
  }
  cfg.model_max_length = modelMaxLength;
  if (cfg.added_tokens_decoder === undefined && t.added_tokens?.length) {
    cfg.added_tokens_decoder = Object.fromEntries(
      t.added_tokens.map((a) => [String(a.id), { content: a.content, lstrip: a.lstrip ?? false, normalized: a.normalized ?? false, rstrip: a.rstrip ?? false, single_word: a.single_word ?? false, special: a.special ?? false }]),
    );
  }
  const specialTokensMap: Record<string, unknown> = { ...givenMap };
  for (const [k, v] of Object.entries(specials)) if (specialTokensMap[k] === undefined) specialTokensMap[k] = v;
  return { tokenizerConfig: sortKeys(cfg), specialTokensMap: sortKeys(specialTokensMap) };
}

function tokenInVocab(t: TokenizerJson, token: string): boolean {
  const v = t.model?.vocab;
  if (v && typeof v === 'object' && !Array.isArray(v)) return token in (v as Record<string, unknown>);
  if (Array.isArray(v)) return v.some((e) => (Array.isArray(e) ? e[0] === token : e === token));
  return false;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}
