/**
 * SICK's entailment column as labelled pairs (lib/data/sick-entailment.ts), the smoke stand-in for
 * NLI in AnglE Table 2's notebook:
 *
 * - the shared SICK files give the judgement counts that `cut -f5 | sort | uniq -c` gives
 *   (train 1299 / 665 / 2536, trial 144 / 74 / 282, test 1414 / 720 / 2793), ENTAILMENT -> 1,
 *   CONTRADICTION -> 0, NEUTRAL dropped, file order kept (first and last kept rows checked by text);
 * - SimCSE triplets: the 107 train sentences SICK pairs with both an entailed and a contradicted
 *   sentence give 148 triplets (one per entailment pair), each hard negative a contradiction of
 *   that very anchor;
 * - bad input names the file and line: an unknown judgement, a missing column, a header without
 *   entailment_judgment, a file with no labelled row.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSickEntailment, readSickEntailmentFile, sickEntailmentTriplets } from '../lib/data/sick-entailment.js';
import { InputError } from '../lib/util/errors.js';
import { DATA_DIR } from './helpers/env.js';

test('SICK splits: judgement counts as coreutils counts them; entailment 1, contradiction 0, neutral dropped', (t) => {
  if (!DATA_DIR) return t.skip('no data folder: set ANGLE_DATA_DIR or keep ../shared beside the repository');
  const want = {
    train: { entailment: 1299, contradiction: 665, neutral: 2536 },
    dev: { entailment: 144, contradiction: 74, neutral: 282 },
    test: { entailment: 1414, contradiction: 720, neutral: 2793 },
  } as const;
  for (const split of ['train', 'dev', 'test'] as const) {
    const s = loadSickEntailment(split, { dataDir: DATA_DIR });
    assert.deepEqual(s.counts, want[split], split);
    assert.equal(s.pairs.length, want[split].entailment + want[split].contradiction);
    assert.equal(s.pairs.filter((p) => p.score === 1).length, want[split].entailment);
    assert.equal(s.pairs.filter((p) => p.score === 0).length, want[split].contradiction);
    assert.match(s.name, /stand-in for NLI/);
  }
  const train = loadSickEntailment('train', { dataDir: DATA_DIR });
  assert.deepEqual(
    { a: train.pairs[0].a, b: train.pairs[0].b, score: train.pairs[0].score, line: train.pairs[0].source?.line },
    { a: 'The young boys are playing outdoors and the man is smiling nearby', b: 'The kids are playing outdoors near a man with a smile', score: 1, line: 4 },
  );
  const last = train.pairs[train.pairs.length - 1];
  assert.deepEqual([last.a, last.b, last.score], ['A dog is running on concrete and is holding a blue ball', 'A dog is running on concrete and is holding a ball', 1]);
  const firstContradiction = train.pairs.find((p) => p.score === 0)!;
  assert.ok(firstContradiction.source!.line > 4);
});

test('SimCSE triplets from SICK: anchors with both kinds, one triplet per entailment pair, negatives that contradict the anchor', (t) => {
  if (!DATA_DIR) return t.skip('no data folder: set ANGLE_DATA_DIR or keep ../shared beside the repository');
  const train = loadSickEntailment('train', { dataDir: DATA_DIR });
  const triplets = sickEntailmentTriplets(train);
  assert.equal(triplets.length, 148);
  assert.equal(new Set(triplets.map((x) => x.sent0)).size, 107);
  const label = new Map(train.pairs.map((p) => [`${p.a}\u0000${p.b}`, p.score]));
  for (const x of triplets) {
    assert.equal(label.get(`${x.sent0}\u0000${x.sent1}`), 1);
    assert.equal(label.get(`${x.sent0}\u0000${x.hardNeg}`), 0);
  }
});

test('bad SICK files name the file and line', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sick-entailment-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const header = 'pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n';
  const write = (name: string, text: string) => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };
  const unknown = write('unknown.txt', `${header}1\tA dog runs\tA dog is running\t4.5\tENTAILMENT\n2\tA cat\tA dog\t1.0\tMAYBE\n`);
  assert.throws(() => readSickEntailmentFile(unknown, 'train'), (e: Error) => e instanceof InputError && e.message.includes(`${unknown}:3`) && /unknown entailment judgement "MAYBE": expected ENTAILMENT, CONTRADICTION or NEUTRAL/.test(e.message));
  const short = write('short.txt', `${header}1\tA dog runs\tA dog is running\t4.5\n`);
  assert.throws(() => readSickEntailmentFile(short, 'train'), (e: Error) => e instanceof InputError && e.message.includes(`${short}:2`) && /expected 5 tab-separated columns/.test(e.message));
  const noColumn = write('relatedness-only.txt', 'pair_ID\tsentence_A\tsentence_B\trelatedness_score\n1\ta\tb\t3\n');
  assert.throws(() => readSickEntailmentFile(noColumn, 'train'), (e: Error) => e instanceof InputError && e.message.includes(`${noColumn}:1`) && /fifth column to be entailment_judgment/.test(e.message));
  const neutral = write('neutral.txt', `${header}1\tA dog runs\tA cat sleeps\t2.0\tNEUTRAL\n`);
  assert.throws(() => readSickEntailmentFile(neutral, 'train'), (e: Error) => e instanceof InputError && /no ENTAILMENT or CONTRADICTION rows/.test(e.message));
});
