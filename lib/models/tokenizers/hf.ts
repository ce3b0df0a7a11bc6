/**
 * A Hugging Face tokenizer (`tokenizer.json` + optional `tokenizer_config.json`) with the
 * truncation and padding that `transformers` applies on top of it.
 *
 * `@huggingface/tokenizers` gives normalisation, pre-tokenisation, the WordPiece/BPE model and the
 * post-processor template, but neither truncation nor padding, so those two are here:
 * - truncation runs on the sequences *before* the special tokens are added, leaving room for them
 *   (as the Rust tokenizers do); for pairs it follows their `longest_first`: the shorter sequence
 *   keeps min(its length, ⌊budget/2⌋) tokens and the longer one gets the rest, the first sequence
 *   counting as the shorter on a tie (test/tokenizer.test.ts checks the Rust crate's own cases);
 * - padding pads a batch to its longest row (or to max length) with the pad token, right side by
 *   default (left for decoder LMs).
 *
 * Decoders whose special ids come from config.json rather than from the tokenizer files (OPT: BOS
 * `</s>` prepended to every text, pad 1; GPT-2-style `add_bos_token`) pass them as options, and a
 * folder with only GPT-2's `vocab.json` + `merges.txt` (what the `facebook/opt-*` repositories
 * ship) loads through `fromByteLevelBpeFiles`.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';
import type { BatchOptions, EncodedText, TextTokenizer, TokenBatch } from '../types.js';

export type { BatchOptions, EncodedText, TokenBatch } from '../types.js';

type TokenConfigValue = string | { content?: string } | null | undefined;

/** What a model's config.json says about special ids, overriding the tokenizer files. */
export interface HfTokenizerOptions {
  /**
   * Put before each sequence when the tokenizer's own post-processor does not already (OPT's BOS
   * `</s>`; GPT-2 tokenizers' add_bos_token, which also puts it before the second text of a pair).
   */
  bosId?: number;
  /** The padding id (a decoder's config.json pad_token_id). */
  padId?: number;
  /** The default padding side. */
  padSide?: 'right' | 'left';
}

/** The special-token entries of tokenizer_config.json / special_tokens_map.json a byte-level BPE folder names. */
const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token'];

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`not valid JSON: ${(e as Error).message}`, { file: path });
  }
}

function tokenContent(v: TokenConfigValue): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof v.content === 'string') return v.content;
  return undefined;
}

export class HfTokenizer implements TextTokenizer {
  readonly padId: number;
  /** tokenizer_config.json's padding_side, else right (what transformers defaults to). */
  readonly padSide: 'right' | 'left';
  /** Number of special tokens the post-processor adds to a single sequence / to a pair. */
  readonly specialsSingle: number;
  readonly specialsPair: number;
  private readonly vocab: Map<string, number>;
  private readonly unkId: number;
  /** The BOS id this class prepends (undefined when none is asked for or the post-processor adds it). */
  private readonly bosId: number | undefined;

  constructor(
    private readonly tok: Tokenizer,
    readonly config: Record<string, unknown>,
    readonly source: string,
    options: HfTokenizerOptions = {},
  ) {
    this.vocab = tok.get_vocab(true);
    const unk = tokenContent(config.unk_token as TokenConfigValue);
    this.unkId = (unk !== undefined ? this.vocab.get(unk) : undefined) ?? this.vocab.get('[UNK]') ?? this.vocab.get('<unk>') ?? 0;
    const padName = tokenContent(config.pad_token as TokenConfigValue);
    const pad = [padName, '[PAD]', '<pad>'].map((t) => (t !== undefined ? this.vocab.get(t) : undefined)).find((x) => x !== undefined);
    this.padId = options.padId ?? pad ?? (typeof config.pad_token_id === 'number' ? config.pad_token_id : 0);
    this.padSide = options.padSide ?? (config.padding_side === 'left' ? 'left' : 'right');
    // A tokenizer.json converted with add_bos_token writes BOS through its post-processor already.
    this.bosId = options.bosId !== undefined && this.postProcess([], null).ids[0] !== options.bosId ? options.bosId : undefined;
    this.specialsSingle = this.postProcess([], null).ids.length;
    this.specialsPair = this.postProcess([], []).ids.length;
  }

  /** Loads `tokenizer.json` (required) and `tokenizer_config.json` (optional) from a model directory. */
  static fromDir(dir: string, options: HfTokenizerOptions = {}): HfTokenizer {
    const tj = join(dir, 'tokenizer.json');
    if (!existsSync(tj)) {
      throw new InputError(
        'model directory has no tokenizer.json (a fast-tokenizer file is required; save it with `tokenizer.save_pretrained` or copy it from the base model)',
        { file: dir },
      );
    }
    const json = readJson(tj);
    const cfgPath = join(dir, 'tokenizer_config.json');
    const cfg = existsSync(cfgPath) ? (readJson(cfgPath) as Record<string, unknown>) : {};
    let tok: Tokenizer;
    try {
      tok = new Tokenizer(json as object, cfg);
    } catch (e) {
      throw new InputError(`cannot build a tokenizer from it: ${(e as Error).message}`, { file: tj });
    }
    return new HfTokenizer(tok, cfg, tj, options);
  }

  /**
   * A GPT-2 byte-level BPE from `vocab.json` and `merges.txt` (a folder without tokenizer.json, as
   * the `facebook/opt-*` repositories are): the tokenizer.json that transformers' converter makes
   * of them (ByteLevel pre-tokenizer without prefix space, BPE, ByteLevel decoder, no
   * post-processor), with the special tokens that tokenizer_config.json and
   * special_tokens_map.json name as added tokens, so they are matched whole in text and dropped
   * when decoding.
   */
  static fromByteLevelBpeFiles(dir: string, options: HfTokenizerOptions = {}): HfTokenizer {
    const vocabPath = join(dir, 'vocab.json');
    const mergesPath = join(dir, 'merges.txt');
    for (const f of [vocabPath, mergesPath]) {
      if (!existsSync(f)) throw new InputError('a byte-level BPE tokenizer needs vocab.json and merges.txt (or a tokenizer.json)', { file: f });
    }
    const vocab = readJson(vocabPath);
    if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab) || !Object.values(vocab).every((v) => Number.isInteger(v) && (v as number) >= 0)) {
      throw new InputError('expected a JSON object mapping tokens to ids (integers >= 0)', { file: vocabPath });
    }
    const merges: string[] = [];
    readFileSync(mergesPath, 'utf8')
      .split(/\r?\n/)
      .forEach((line, i) => {
        // The first line is a '#version: …' header; blank lines carry nothing.
        if (line.trim() === '' || (i === 0 && line.startsWith('#'))) return;
        if (line.split(' ').length !== 2) throw new InputError(`expected a merge 'left right', found ${JSON.stringify(line)}`, { file: mergesPath, line: i + 1 });
        merges.push(line);
      });
    const cfg: Record<string, unknown> = {};
    for (const f of ['special_tokens_map.json', 'tokenizer_config.json']) {
      const path = join(dir, f);
      if (existsSync(path)) Object.assign(cfg, readJson(path) as Record<string, unknown>);
    }
    const ids = vocab as Record<string, number>;
    const specials = [...new Set(SPECIAL_TOKEN_KEYS.map((k) => tokenContent(cfg[k] as TokenConfigValue)).filter((t): t is string => t !== undefined && ids[t] !== undefined))];
    const byteLevel = { type: 'ByteLevel', add_prefix_space: cfg.add_prefix_space === true, trim_offsets: true, use_regex: true };
    const json = {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: specials.map((content) => ({ id: ids[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: null,
      pre_tokenizer: byteLevel,
      post_processor: null,
      decoder: byteLevel,
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
    };
    let tok: Tokenizer;
    try {
      tok = new Tokenizer(json, cfg);
    } catch (e) {
      throw new InputError(`cannot build a byte-level BPE tokenizer from vocab.json and merges.txt: ${(e as Error).message}`, { file: dir });
    }
    return new HfTokenizer(tok, cfg, vocabPath, options);
  }

  /** Sub-word tokens of a text, without special tokens. */
  tokenize(text: string): string[] {
    return this.tok.tokenize(text, { add_special_tokens: false });
  }

  private toId(token: string): number {
    return this.vocab.get(token) ?? this.unkId;
  }

  private postProcess(a: string[], b: string[] | null): EncodedText {
    if (this.bosId !== undefined) {
      // GPT-2's build_inputs_with_special_tokens with add_bos_token: BOS before each text.
      const ids = [this.bosId, ...a.map((t) => this.toId(t)), ...(b ? [this.bosId, ...b.map((t) => this.toId(t))] : [])];
      return { ids, typeIds: ids.map(() => 0) };
    }
    const out = this.tok.post_processor
      ? this.tok.post_processor(a, b, true) as { tokens: string[]; token_type_ids?: number[] }
      : { tokens: b ? [...a, ...b] : a };
    const ids = out.tokens.map((t) => this.toId(t));
    const typeIds = out.token_type_ids ?? ids.map(() => 0);
    return { ids, typeIds };
  }

  /** Encodes a text or a text pair with special tokens, truncated to maxLength tokens in total. */
  encode(text: string, pair?: string | null, maxLength?: number): EncodedText {
    let a = this.tokenize(text);
    let b = pair === undefined || pair === null ? null : this.tokenize(pair);
    if (maxLength !== undefined) {
      const budget = maxLength - (b ? this.specialsPair : this.specialsSingle);
      if (budget < 0) throw new InputError(`max length ${maxLength} leaves no room for the ${b ? this.specialsPair : this.specialsSingle} special tokens`);
      if (!b) {
        if (a.length > budget) a = a.slice(0, budget);
      } else if (a.length + b.length > budget) {
        const aShorter = a.length <= b.length;
        const short = Math.min(aShorter ? a.length : b.length, Math.floor(budget / 2));
        const long = budget - short;
        if (aShorter) {
          a = a.slice(0, short);
          b = b.slice(0, long);
        } else {
          a = a.slice(0, long);
          b = b.slice(0, short);
        }
      }
    }
    return this.postProcess(a, b);
  }

  /** Text of token ids, special tokens dropped (the tokenizer.json decoder). */
  decode(ids: readonly number[]): string {
    return this.tok.decode([...ids], { skip_special_tokens: true });
  }

  /** Encodes texts (or [text, pair] tuples) into one padded batch. */
  encodeBatch(inputs: Array<string | [string, string]>, opts: BatchOptions = {}): TokenBatch {
    const rows = inputs.map((x) => (typeof x === 'string' ? this.encode(x, null, opts.maxLength) : this.encode(x[0], x[1], opts.maxLength)));
    return this.pad(rows, opts);
  }

  /** Pads already-encoded rows into a batch. */
  pad(rows: EncodedText[], opts: BatchOptions = {}): TokenBatch {
    const longest = rows.reduce((m, r) => Math.max(m, r.ids.length), 0);
    const seqLen = opts.padding === 'max_length' && opts.maxLength !== undefined ? opts.maxLength : longest;
    const batch = rows.length;
    const inputIds = new Int32Array(batch * seqLen).fill(this.padId);
    const attentionMask = new Int32Array(batch * seqLen);
    const tokenTypeIds = new Int32Array(batch * seqLen);
    rows.forEach((r, i) => {
      const start = (opts.padSide ?? this.padSide) === 'left' ? seqLen - r.ids.length : 0;
      for (let j = 0; j < r.ids.length; j++) {
        inputIds[i * seqLen + start + j] = r.ids[j];
        attentionMask[i * seqLen + start + j] = 1;
        tokenTypeIds[i * seqLen + start + j] = r.typeIds[j];
      }
    });
    return { inputIds, attentionMask, tokenTypeIds, batch, seqLen };
  }
}
