/**
 * checkEvalGolden plumbing. The BERT encoder is not used here: a hashing bag-of-words stands in,
 * so model-dependent numbers are expected to fail and only the structure is asserted (every
 * number in eval.json gets a check, data-only numbers pass, unknown keys fail). The real parity
 * run plugs in the project's encoder (`npm run parity`).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEvalGolden, type GoldenPooling } from '../lib/parity/eval.js';
import { hashingBowEncoder } from '../lib/eval/baselines.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const DATA = DATA_DIR;
const GOLDEN = GOLDEN_DIR;
const skipBoth = DATA && GOLDEN ? false : 'needs a data root and an encoder golden set (ANGLE_DATA_DIR, ANGLE_GOLDEN_DIR, or ../shared beside the repository)';

/** Paths of the numeric leaves of a JSON object, joined by '/'. */
function numericLeaves(o: unknown, prefix = ''): string[] {
  if (typeof o === 'number') return [prefix];
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return [];
  return Object.entries(o).flatMap(([k, v]) => numericLeaves(v, prefix ? `${prefix}/${k}` : k));
}

describe('checkEvalGolden', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'angle-golden-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('unknown keys are failed checks, never skipped; spearman_ties checked for real', async () => {
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({
        spearman_ties: { x: [1, 2, 2, 3, 3, 3, 4, 5, 5, 6], y: [2, 1, 4, 3, 3, 6, 5, 5, 8, 7], spearman: 0.8106215541707001 },
        senteval_sts: { max: { STS12: { all: 0.5 } }, cls: { STS17: { all: 0.5 } } },
        align_uniform: { pooling: 'mean' },
        flickr30k_retrieval: { pooling: 'max' },
        mystery: { value: 1 },
      }),
    );
    let made = 0;
    const checks = await checkEvalGolden(dir, '/nonexistent', async () => {
      made++;
      return hashingBowEncoder(16);
    });
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    assert.equal(byName['eval/spearman_ties'].ok, true, byName['eval/spearman_ties'].detail);
    for (const name of [
      'eval/senteval_sts/max',
      'eval/senteval_sts/cls/STS17',
      'eval/align_uniform/pooling',
      'eval/flickr30k_retrieval/pooling',
      'eval/mystery',
    ]) {
      assert.ok(byName[name], `missing check ${name}: ${checks.map((c) => c.name).join(', ')}`);
      assert.equal(byName[name].ok, false, name);
    }
    assert.equal(made, 0, 'no encoder needed for unknown keys');
  });

  test('a missing eval.json is an InputError naming the file', async () => {
    await assert.rejects(checkEvalGolden(join(dir, 'nope'), '/x', async () => hashingBowEncoder(4)), /nope\/eval\.json: cannot read golden eval\.json/);
  });

  test('every number of the real eval.json gets a check (fake encoder: plumbing only)', { skip: skipBoth }, async () => {
    const ev = JSON.parse(readFileSync(join(GOLDEN!, 'eval.json'), 'utf8'));
    const leaves = numericLeaves(ev).filter((p) => !p.startsWith('spearman_ties/x') && !p.startsWith('spearman_ties/y'));
    const made: [GoldenPooling, number][] = [];
    const t0 = performance.now();
    const checks = await checkEvalGolden(GOLDEN!, DATA!, async (pooling, maxLength) => {
      made.push([pooling, maxLength]);
      return hashingBowEncoder(64);
    });
    const seconds = (performance.now() - t0) / 1000;
    const names = new Set(checks.map((c) => c.name));
    for (const leaf of leaves) {
      const name = leaf === 'spearman_ties/spearman' ? 'eval/spearman_ties' : `eval/${leaf}`;
      assert.ok(names.has(name), `no check for ${leaf}`);
    }
    assert.deepEqual(made.map((m) => m[1]), made.map(() => 64), 'golden README: max length 64');
    assert.deepEqual(made.map((m) => m[0]).sort(), ['avg', 'cls'], 'one encoder per pooling, reused');
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    for (const n of ['eval/spearman_ties', 'eval/align_uniform/n_pos', 'eval/align_uniform/n_unique_sentences', 'eval/align_uniform/positives', 'eval/flickr30k_retrieval/corpus', 'eval/flickr30k_retrieval/queries']) {
      assert.equal(byName[n]?.ok, true, `${n}: ${byName[n]?.detail}`);
    }
    assert.ok(!byName['eval/senteval_sts/cls/STSBenchmark/test'].ok, 'a bag of words is not the golden BERT');
    console.log(`# checkEvalGolden with a fake encoder: ${checks.length} checks in ${seconds.toFixed(1)} s`);
  });
});
