import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import { LLAMA2C_BOS_ID, LLAMA2C_EOS_ID, Llama2cTokenizer } from '../lib/models/tokenizers/llama2c.js';
import { InputError } from '../lib/util/errors.js';
import { decoderGoldenOrSkip, readDecoderGolden } from './helpers/decoder.js';

const tmp: string[] = [];
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

function toy(dir: string): Llama2cTokenizer {
  return Llama2cTokenizer.fromFile(join(dir, 'model', 'tok512.bin'), readDecoderGolden(dir).config.vocab_size);
}

/** The toy vocabulary as an HF model directory's tokenizer files, read by the project's HF tokenizer. */
function hfFromToy(tok: Llama2cTokenizer): HfTokenizer {
  const d = mkdtempSync(join(tmpdir(), 'llama-tok-'));
  tmp.push(d);
  writeFileSync(join(d, 'tokenizer.json'), JSON.stringify(tok.toHfTokenizerJson()));
  writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify({ bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', add_bos_token: true, padding_side: 'left' }));
  return HfTokenizer.fromDir(d);
}

/** Texts beyond the golden's: unicode outside the vocabulary, whitespace runs, control characters, specials' look-alikes. */
const EXTRA_TEXTS = [
  'a',
  ' ',
  '  leading and trailing  ',
  'Tab\there, newline\nthere, CR\r\n, and a form feed\f.',
  'naïve café — 東京 ☃ 🙂🙃 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.',
  '"quotes" \'single\' (parens) [brackets] {braces} <0x41> <s',
  '1234567890 3.14159 1e-5 $5 100% #hash @at',
  'ééééé ööö ÄÖÜß',
  'the the the the the',
];

test('llama2.c tokenizer: run.c ids for every golden text; decode gives the text back', (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const tok = toy(g);
  for (const p of readDecoderGolden(g).prompts) {
    assert.deepEqual(tok.encode(p.text).ids, p.ids, `ids of ${JSON.stringify(p.text)}`);
    assert.equal(tok.decode(p.ids), p.text);
    // run.c prints a continuation after the prompt's last token: no leading-space drop unless that is BOS.
    assert.equal(tok.decode(p.greedy_ids, p.ids[p.ids.length - 1]), p.greedy_text);
  }
  assert.deepEqual(tok.encodeIds('', { bos: false }), []);
  assert.deepEqual(tok.encodeIds('Once', { eos: true }).at(-1), LLAMA2C_EOS_ID);
  assert.equal(tok.encodeIds('Once')[0], LLAMA2C_BOS_ID);
});

test('llama2.c tokenizer: byte fallback, decode of split UTF-8, and round trips on odd texts', (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const tok = toy(g);
  // 🙂 is not in a 512-token vocabulary: its four UTF-8 bytes become byte tokens (byte + 3).
  const ids = tok.encodeIds('🙂', { bos: false });
  assert.deepEqual(ids.slice(-4), [0xf0 + 3, 0x9f + 3, 0x99 + 3, 0x82 + 3]);
  assert.equal(tok.decode(ids), ' 🙂');
  for (const text of EXTRA_TEXTS) assert.equal(tok.decode(tok.encodeIds(text)), text, JSON.stringify(text));
});

test("HF tokenizer.json built from the llama2.c vocabulary (LLaMA's BPE + byte-fallback layout) gives run.c's ids through lib/models/tokenizers/hf.ts", (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const tok = toy(g);
  const hf = hfFromToy(tok);
  for (const p of readDecoderGolden(g).prompts) {
    assert.deepEqual(hf.encode(p.text).ids, p.ids, `HF ids of ${JSON.stringify(p.text)}`);
    if (p.text.length > 0) assert.equal(hf.decode(p.ids), p.text);
  }
  // Two implementations (run.c's score merges, HF's ranked BPE merges) agree beyond the golden texts.
  for (const text of EXTRA_TEXTS) assert.deepEqual(hf.encode(text).ids, tok.encode(text).ids, JSON.stringify(text));
  // Where they differ by design: HF matches special tokens written in the text (as transformers
  // does for LLaMA), run.c spells them out of ordinary pieces.
  assert.deepEqual(hf.encode('a <s> b').ids.includes(LLAMA2C_BOS_ID, 1), true);
  assert.deepEqual(tok.encode('a <s> b').ids.includes(LLAMA2C_BOS_ID, 1), false);
  // Left padding comes from tokenizer_config.json's padding_side.
  const b = hf.encodeBatch(['Once upon a time', 'a']);
  assert.equal(hf.padSide, 'left');
  assert.deepEqual(Array.from(b.attentionMask.subarray(b.seqLen, 2 * b.seqLen)), [0, 0, 0, 1, 1]);
});

test('llama2.c tokenizer: left padding by default, truncation, and bad input', (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const tok = toy(g);
  const b = tok.encodeBatch(['Once upon a time', 'Lily']);
  assert.equal(b.seqLen, 5);
  const row1 = Array.from(b.inputIds.subarray(5, 10));
  const mask1 = Array.from(b.attentionMask.subarray(5, 10));
  const lily = tok.encode('Lily').ids;
  assert.deepEqual(mask1, [...new Array(5 - lily.length).fill(0), ...lily.map(() => 1)]);
  assert.deepEqual(row1.slice(5 - lily.length), lily);
  const right = tok.encodeBatch(['Once upon a time', 'Lily'], { padSide: 'right' });
  assert.deepEqual(Array.from(right.inputIds.subarray(5, 5 + lily.length)), lily);
  assert.deepEqual(tok.encode('Once upon a time', null, 3).ids, [1, 403, 407]);
  assert.throws(() => tok.encode('a', 'b'), /single texts, not pairs/);

  const d = mkdtempSync(join(tmpdir(), 'llama-tok-bad-'));
  tmp.push(d);
  const bytes = readFileSync(join(g, 'model', 'tok512.bin'));
  writeFileSync(join(d, 'short.bin'), bytes.subarray(0, 3000));
  assert.throws(() => Llama2cTokenizer.fromFile(join(d, 'short.bin'), 512), (e: Error) => e instanceof InputError && /short\.bin.*truncated llama2\.c tokenizer: token \d+ of 512/.test(e.message));
  assert.throws(() => Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), 500), /bytes after 500 tokens: does it belong to a model with another vocab_size/);
  assert.throws(() => Llama2cTokenizer.fromFile(join(d, 'missing.bin'), 512), /missing\.bin: cannot read llama2\.c tokenizer \(ENOENT\)/);
});
