/**
 * RanNet's tokenizer, `RanNetWordPieceTokenizer(vocab, lowercase)` of `rannet` 0.3.1
 * (tokenizer.py:45-105), built from a checkpoint's own `vocab.txt` (a released RAN zip holds
 * `config.json`, `vocab.txt` and `model.ckpt*`, no tokenizer.json): HF tokenizers' BertNormalizer
 * (clean text, CJK spacing, accents stripped when lowercasing), BertPreTokenizer and WordPiece
 * (`##`, 100 characters per word at most), with
 *   - NO [CLS]/[SEP] around a single text (post-processor `single = $0`), `A [SEP] B [SEP]` for a pair;
 *   - as special tokens matched in raw text, those of `[PAD] [UNK] [MASK] [SEP] [START] [END]
 *     [unused0..999]` the vocab has ([CLS] is not one);
 *   - [PAD] = id 0, since RanNet's mask is `ids > 0` (rannet.py:91-92): a vocab whose line 0 is not
 *     [PAD] is refused.
 * The tokenizer.json it builds is the golden set's (../shared/golden/ran-tiny-seed11/ran_reference.py
 * `tokenizer_json`), run by the same @huggingface/tokenizers as every other HF tokenizer here.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';
import { HfTokenizer } from './hf.js';

export const RAN_VOCAB_FILE = 'vocab.txt';

/** SpecialTokens of tokenizer.py:13-21, in order. */
const SPECIAL_NAMES = ['[PAD]', '[UNK]', '[MASK]', '[SEP]', '[START]', '[END]', ...Array.from({ length: 1000 }, (_, i) => `[unused${i}]`)];

/** token -> id of a vocab.txt: one token a line, id = line number; a repeated token keeps its first id. */
export function readRanVocab(path: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read the RanNet vocabulary (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const vocab = new Map<string, number>();
  lines.forEach((line, i) => {
    const tok = line.replace(/\r$/, '');
    if (!vocab.has(tok)) vocab.set(tok, i);
  });
  for (const t of ['[PAD]', '[UNK]', '[SEP]']) if (!vocab.has(t)) throw new InputError(`the RanNet vocabulary has no ${t} token`, { file: path });
  if (vocab.get('[PAD]') !== 0) throw new InputError(`[PAD] must be id 0 (line 1): RanNet masks ids > 0; it is on line ${vocab.get('[PAD]')! + 1}`, { file: path, line: vocab.get('[PAD]')! + 1 });
  return vocab;
}

/** The tokenizer.json of RanNetWordPieceTokenizer(vocab, lowercase) (tokenizer.py:48-99). */
export function ranTokenizerJson(vocab: ReadonlyMap<string, number>, lowercase = true): Record<string, unknown> {
  const added = SPECIAL_NAMES.filter((t) => vocab.has(t))
    .map((t) => ({ id: vocab.get(t)!, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }))
    .sort((a, b) => a.id - b.id);
  const sep = vocab.get('[SEP]')!;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[SEP]': { id: '[SEP]', ids: [sep], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(vocab) },
  };
}

/**
 * The RanNet tokenizer of a checkpoint folder, from its vocab.txt. Lowercasing follows
 * tokenizer_config.json's `do_lower_case` where the folder has one, else RanNet's English
 * checkpoints' lowercase = True.
 */
export function ranTokenizer(dir: string): HfTokenizer {
  const vocabPath = join(dir, RAN_VOCAB_FILE);
  if (!existsSync(vocabPath)) throw new InputError('a RanNet checkpoint folder needs its vocab.txt (the tokenizer is built from it)', { file: dir });
  const vocab = readRanVocab(vocabPath);
  const cfgPath = join(dir, 'tokenizer_config.json');
  let lowercase = true;
  if (existsSync(cfgPath)) {
    try {
      const cfg = JSON.parse(readFileSync(cfgPath, 'utf8')) as Record<string, unknown>;
      if (typeof cfg.do_lower_case === 'boolean') lowercase = cfg.do_lower_case;
    } catch (e) {
      throw new InputError(`not valid JSON: ${(e as Error).message}`, { file: cfgPath });
    }
  }
  const config = { pad_token: '[PAD]', unk_token: '[UNK]', sep_token: '[SEP]', mask_token: '[MASK]', padding_side: 'right' };
  let tok: Tokenizer;
  try {
    tok = new Tokenizer(ranTokenizerJson(vocab, lowercase) as object, config);
  } catch (e) {
    throw new InputError(`cannot build the RanNet WordPiece tokenizer: ${(e as Error).message}`, { file: vocabPath });
  }
  return new HfTokenizer(tok, config, vocabPath, { padId: 0, padSide: 'right' });
}
