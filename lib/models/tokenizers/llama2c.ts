/**
 * llama2.c's tokenizer (`tokenizer.bin`, e.g. `tok512.bin`): a sentencepiece BPE vocabulary with
 * merge scores, encoded and decoded exactly as `run.c` does.
 *
 * File: int32 max_token_length, then per token (vocab_size of the model): float32 score, int32
 * byte length, the UTF-8 bytes. Token 0 is `<unk>`, 1 BOS (`\n<s>\n`), 2 EOS (`\n</s>\n`), 3..258
 * the byte tokens `<0x00>`..`<0xFF>`; sentencepiece's `▁` is stored as a space.
 *
 * encode(text) (run.c `encode`): BOS; for non-empty text a " " token first (sentencepiece's dummy
 * prefix); then each UTF-8 codepoint (at most 4 bytes) as its own token if the vocabulary has
 * it, else its bytes as byte tokens (byte + 3); then, while some adjacent pair concatenates to a
 * vocabulary entry, merge the pair whose entry has the highest score (the leftmost on ties).
 *
 * decode (run.c `decode`): a token's text, without its leading space when the previous token is
 * BOS, with `<0xXX>` rendered as the byte XX; here bytes are collected and turned into text as
 * UTF-8 at the end, so characters split over byte tokens come out whole.
 *
 * `toHfTokenizerJson()` writes the same vocabulary as a Hugging Face tokenizer.json in the layout
 * of LLaMA's (BPE with byte fallback, merges ranked by the merged token's score), which
 * `@huggingface/tokenizers` reads (see lib/models/tokenizers/hf.ts).
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../../util/errors.js';
import type { BatchOptions, EncodedText, TextTokenizer, TokenBatch } from '../types.js';

export const LLAMA2C_UNK_ID = 0;
export const LLAMA2C_BOS_ID = 1;
export const LLAMA2C_EOS_ID = 2;
const BYTE_OFFSET = 3;

export interface Llama2cEncodeOptions {
  /** Prepend BOS (default true, as run.c's generate). */
  bos?: boolean;
  /** Append EOS (default false). */
  eos?: boolean;
}

export class Llama2cTokenizer implements TextTokenizer {
  /** llama2.c models have no pad token; padded positions are masked, so any id serves: EOS's, as PromptEOL sets it. */
  readonly padId = LLAMA2C_EOS_ID;
  readonly padSide: 'left' | 'right' = 'left';
  readonly bosId = LLAMA2C_BOS_ID;
  readonly eosId = LLAMA2C_EOS_ID;
  /** Whether encode() prepends BOS and appends EOS (the defaults of `encode`'s options). */
  readonly addBos: boolean;
  readonly addEos: boolean;
  private readonly ids = new Map<string, number>();
  /** Each token's bytes, with the byte tokens already resolved to their single byte. */
  private readonly bytes: Uint8Array[];

  constructor(
    /** Token texts (decoded UTF-8 of the file's bytes). */
    readonly vocab: readonly string[],
    readonly scores: Float32Array,
    readonly maxTokenLength: number,
    readonly source = '<memory>',
    opts: Llama2cEncodeOptions = {},
  ) {
    if (vocab.length !== scores.length) throw new Error(`${vocab.length} tokens but ${scores.length} scores`);
    if (vocab.length < BYTE_OFFSET + 256) throw new InputError(`a llama2.c vocabulary has at least ${BYTE_OFFSET + 256} tokens (specials and byte tokens), found ${vocab.length}`, { file: source });
    // run.c looks tokens up by binary search over the sorted vocabulary; with duplicates it may find
    // either. The first occurrence is taken here; the shipped vocabularies have none.
    vocab.forEach((t, i) => {
      if (!this.ids.has(t)) this.ids.set(t, i);
    });
    const enc = new TextEncoder();
    this.bytes = vocab.map((t) => {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
      return m ? Uint8Array.of(parseInt(m[1], 16)) : enc.encode(t);
    });
    this.addBos = opts.bos ?? true;
    this.addEos = opts.eos ?? false;
  }

  /** Reads `tokenizer.bin`; vocabSize is the model's (the file does not store it). */
  static fromFile(path: string, vocabSize: number, opts: Llama2cEncodeOptions = {}): Llama2cTokenizer {
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch (e) {
      throw new InputError(`cannot read llama2.c tokenizer (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
    }
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const dec = new TextDecoder('utf-8', { fatal: true });
    if (buf.byteLength < 4) throw new InputError('not a llama2.c tokenizer: shorter than its 4-byte header', { file: path });
    const maxTokenLength = dv.getInt32(0, true);
    if (!(maxTokenLength > 0 && maxTokenLength < 4096)) throw new InputError(`not a llama2.c tokenizer: max_token_length ${maxTokenLength}`, { file: path });
    const vocab: string[] = [];
    const scores = new Float32Array(vocabSize);
    let o = 4;
    for (let i = 0; i < vocabSize; i++) {
      if (o + 8 > buf.byteLength) throw new InputError(`truncated llama2.c tokenizer: token ${i} of ${vocabSize} starts at byte ${o} of ${buf.byteLength}`, { file: path });
      scores[i] = dv.getFloat32(o, true);
      const len = dv.getInt32(o + 4, true);
      o += 8;
      if (len < 0 || len > maxTokenLength || o + len > buf.byteLength) {
        throw new InputError(`llama2.c tokenizer: token ${i} has length ${len} (max_token_length ${maxTokenLength}, ${buf.byteLength - o} bytes left)`, { file: path });
      }
      try {
        vocab.push(dec.decode(buf.subarray(o, o + len)));
      } catch {
        throw new InputError(`llama2.c tokenizer: token ${i} is not valid UTF-8`, { file: path });
      }
      o += len;
    }
    if (o !== buf.byteLength) {
      throw new InputError(`llama2.c tokenizer has ${buf.byteLength - o} bytes after ${vocabSize} tokens: does it belong to a model with another vocab_size?`, { file: path });
    }
    return new Llama2cTokenizer(vocab, scores, maxTokenLength, path, opts);
  }

  get vocabSize(): number {
    return this.vocab.length;
  }

  /** run.c's encode: token ids of `text`, with BOS/EOS as asked (default: the tokenizer's). */
  encodeIds(text: string, opts: Llama2cEncodeOptions = {}): number[] {
    const tokens: number[] = [];
    if (opts.bos ?? this.addBos) tokens.push(LLAMA2C_BOS_ID);
    if (text.length > 0) tokens.push(this.ids.get(' ') ?? LLAMA2C_UNK_ID);
    const utf8 = new TextEncoder().encode(text);
    // Codepoints as run.c groups bytes: a byte that is not a continuation byte starts a group; at
    // most 4 bytes per group.
    let start = 0;
    for (let i = 0; i < utf8.length; i++) {
      const next = i + 1 < utf8.length ? utf8[i + 1] : 0;
      if ((next & 0xc0) === 0x80 && i + 1 - start < 4) continue;
      const group = utf8.subarray(start, i + 1);
      const id = this.ids.get(new TextDecoder().decode(group));
      if (id !== undefined) tokens.push(id);
      else for (const b of group) tokens.push(b + BYTE_OFFSET);
      start = i + 1;
    }
    // Merge the best-scoring adjacent pair until none merges.
    for (;;) {
      let bestScore = -1e10;
      let bestId = -1;
      let bestIdx = -1;
      for (let i = 0; i + 1 < tokens.length; i++) {
        const id = this.ids.get(this.vocab[tokens[i]] + this.vocab[tokens[i + 1]]);
        if (id !== undefined && this.scores[id] > bestScore) {
          bestScore = this.scores[id];
          bestId = id;
          bestIdx = i;
        }
      }
      if (bestIdx < 0) break;
      tokens.splice(bestIdx, 2, bestId);
    }
    if (opts.eos ?? this.addEos) tokens.push(LLAMA2C_EOS_ID);
    return tokens;
  }

  /** TextTokenizer: a text (pairs are not a thing for this tokenizer) truncated to maxLength tokens. */
  encode(text: string, pair?: string | null, maxLength?: number): EncodedText {
    if (pair !== undefined && pair !== null) throw new InputError('the llama2.c tokenizer encodes single texts, not pairs');
    let ids = this.encodeIds(text);
    if (maxLength !== undefined) {
      if (!(Number.isInteger(maxLength) && maxLength > 0)) throw new InputError(`max length must be a positive integer, got ${maxLength}`);
      if (ids.length > maxLength) ids = ids.slice(0, maxLength);
    }
    return { ids, typeIds: ids.map(() => 0) };
  }

  encodeBatch(inputs: Array<string | [string, string]>, opts: BatchOptions = {}): TokenBatch {
    return this.pad(
      inputs.map((x) => (typeof x === 'string' ? this.encode(x, null, opts.maxLength) : this.encode(x[0], x[1], opts.maxLength))),
      opts,
    );
  }

  pad(rows: EncodedText[], opts: BatchOptions = {}): TokenBatch {
    const longest = rows.reduce((m, r) => Math.max(m, r.ids.length), 0);
    const seqLen = opts.padding === 'max_length' && opts.maxLength !== undefined ? Math.max(opts.maxLength, longest) : longest;
    const batch = rows.length;
    const inputIds = new Int32Array(batch * seqLen).fill(this.padId);
    const attentionMask = new Int32Array(batch * seqLen);
    const tokenTypeIds = new Int32Array(batch * seqLen);
    const left = (opts.padSide ?? this.padSide) === 'left';
    rows.forEach((r, i) => {
      const start = i * seqLen + (left ? seqLen - r.ids.length : 0);
      inputIds.set(r.ids, start);
      attentionMask.fill(1, start, start + r.ids.length);
    });
    return { inputIds, attentionMask, tokenTypeIds, batch, seqLen };
  }

  /**
   * The bytes run.c's decode prints for `token` after `prev`: the token's text without its leading
   * space after BOS, a byte token as its byte. BOS and EOS print as their stored text in run.c;
   * here they print nothing (they are special tokens).
   */
  pieceBytes(prev: number, token: number): Uint8Array {
    if (!(token >= 0 && token < this.vocab.length)) throw new InputError(`token id ${token} is outside the vocabulary [0, ${this.vocab.length})`);
    if (token === LLAMA2C_BOS_ID || token === LLAMA2C_EOS_ID) return new Uint8Array(0);
    const b = this.bytes[token];
    return prev === LLAMA2C_BOS_ID && b[0] === 0x20 ? b.subarray(1) : b;
  }

  /**
   * Text of token ids as run.c prints them one after the other; `prev` is the token before the
   * first (default: none; pass the last prompt token to decode a continuation as run.c does).
   */
  decode(ids: readonly number[], prev = -1): string {
    const parts: Uint8Array[] = [];
    let p = prev;
    for (const id of ids) {
      parts.push(this.pieceBytes(p, id));
      p = id;
    }
    return Buffer.concat(parts).toString('utf8');
  }

  /**
   * The vocabulary as a Hugging Face tokenizer.json in LLaMA's layout: `▁` for spaces, BPE with
   * byte fallback, a Prepend("▁") + Replace(" ", "▁") normaliser (the dummy prefix), a BOS
   * template, and LLaMA's decoder. Merges follow transformers' sentencepiece conversion: every
   * split of a vocabulary entry into two entries is a merge, ranked by the merged entry's score
   * (highest first), which is run.c's "best score first" rule.
   */
  toHfTokenizerJson(): Record<string, unknown> {
    const sp = (t: string) => t.replaceAll(' ', '\u2581');
    const special = new Set([LLAMA2C_UNK_ID, LLAMA2C_BOS_ID, LLAMA2C_EOS_ID]);
    const names = this.vocab.map((t, i) => (i === LLAMA2C_UNK_ID ? '<unk>' : i === LLAMA2C_BOS_ID ? '<s>' : i === LLAMA2C_EOS_ID ? '</s>' : sp(t)));
    const vocab: Record<string, number> = {};
    names.forEach((n, i) => {
      if (!(n in vocab)) vocab[n] = i;
    });
    const merges: Array<{ l: string; r: string; score: number; id: number; lid: number; rid: number }> = [];
    names.forEach((merged, id) => {
      if (special.has(id) || (id >= BYTE_OFFSET && id < BYTE_OFFSET + 256)) return;
      const chars = Array.from(merged);
      for (let k = 1; k < chars.length; k++) {
        const l = chars.slice(0, k).join('');
        const r = chars.slice(k).join('');
        const lid = vocab[l];
        const rid = vocab[r];
        if (lid !== undefined && rid !== undefined && !special.has(lid) && !special.has(rid)) merges.push({ l, r, score: this.scores[id], id, lid, rid });
      }
    });
    merges.sort((a, b) => b.score - a.score || a.id - b.id || a.lid - b.lid || a.rid - b.rid);
    const added = [
      [LLAMA2C_UNK_ID, '<unk>'],
      [LLAMA2C_BOS_ID, '<s>'],
      [LLAMA2C_EOS_ID, '</s>'],
    ].map(([id, content]) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: {
        type: 'Sequence',
        normalizers: [
          { type: 'Prepend', prepend: '\u2581' },
          { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
        ],
      },
      pre_tokenizer: null,
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '<s>': { id: '<s>', ids: [LLAMA2C_BOS_ID], tokens: ['<s>'] } },
      },
      decoder: {
        type: 'Sequence',
        decoders: [
          { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
          { type: 'ByteFallback' },
          { type: 'Fuse' },
          { type: 'Strip', content: ' ', start: 1, stop: 0 },
        ],
      },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: '<unk>',
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: true,
        byte_fallback: true,
        ignore_merges: false,
        vocab,
        merges: merges.map((m) => [m.l, m.r]),
      },
    };
  }
}
