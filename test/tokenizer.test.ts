import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import { goldenOrSkip } from './helpers/env.js';

/** n copies of a one-token word. */
const words = (n: number) => Array(n).fill('a').join(' ');

test('pair truncation follows the Rust tokenizers longest_first lengths', (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const tok = HfTokenizer.fromDir(join(g, 'model'));
  // [n1, n2] -> [kept1, kept2] with a budget of 7 tokens (max length 10 minus [CLS] [SEP] [SEP]),
  // the cases of truncate_encodings_longest_first in huggingface/tokenizers.
  const cases: Array<[number, number, number, number]> = [
    [0, 8, 0, 7], [2, 8, 2, 5], [4, 4, 3, 4], [4, 8, 3, 4], [8, 0, 7, 0], [8, 2, 5, 2], [8, 4, 4, 3], [8, 8, 3, 4], [2, 4, 2, 4],
  ];
  for (const [n1, n2, k1, k2] of cases) {
    const e = tok.encode(words(n1), words(n2), 10);
    const sep = e.typeIds.indexOf(1);
    const first = (sep < 0 ? e.ids.length : sep) - 2; // minus [CLS] and the first [SEP]
    const second = sep < 0 ? 0 : e.ids.length - sep - 1; // minus the last [SEP]
    assert.deepEqual([first, second], [k1, k2], `(${n1}, ${n2})`);
  }
});

test('single truncation keeps room for the special tokens; padding left and right', (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const tok = HfTokenizer.fromDir(join(g, 'model'));
  const e = tok.encode(words(20), null, 8);
  assert.equal(e.ids.length, 8);
  assert.equal(e.ids[0], 101);
  assert.equal(e.ids[7], 102);
  const right = tok.encodeBatch(['a', words(3)]);
  assert.deepEqual(Array.from(right.attentionMask), [1, 1, 1, 0, 0, 1, 1, 1, 1, 1]);
  const left = tok.encodeBatch(['a', words(3)], { padSide: 'left' });
  assert.deepEqual(Array.from(left.attentionMask), [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  assert.deepEqual(Array.from(left.inputIds.subarray(0, 5)), [0, 0, 101, 1037, 102]);
  const fixed = tok.encodeBatch(['a'], { maxLength: 6, padding: 'max_length' });
  assert.equal(fixed.seqLen, 6);
  assert.throws(() => tok.encode('a b', 'c', 2), /max length 2 leaves no room for the 3 special tokens/);
});

test('a model directory with a corrupt tokenizer.json is reported with the file', (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const d = mkdtempSync(join(tmpdir(), 'tok-'));
  try {
    writeFileSync(join(d, 'tokenizer.json'), '{"model": ');
    assert.throws(() => HfTokenizer.fromDir(d), new RegExp(`${d}/tokenizer.json: not valid JSON`));
    copyFileSync(join(g, 'model', 'tokenizer.json'), join(d, 'tokenizer.json'));
    writeFileSync(join(d, 'tokenizer_config.json'), 'nope');
    assert.throws(() => HfTokenizer.fromDir(d), new RegExp(`${d}/tokenizer_config.json: not valid JSON`));
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
