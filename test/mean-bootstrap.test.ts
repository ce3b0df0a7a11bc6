/**
 * Bootstrap interval of a mean (lib/report/statistics/mean-bootstrap.ts) against scipy.stats.bootstrap
 * on the same resamples (test/fixtures/stats/mean-bootstrap.json, made by
 * make-mean-bootstrap-fixture.py beside it): BCa and percentile bounds and the standard error to
 * rounding, for 0/1 query outcomes and a skewed sample; a constant sample gives the point itself;
 * the seeded draw is reproducible; bad input is named.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { bootstrapMeanCI } from '../lib/report/statistics/mean-bootstrap.js';
import { packageRoot } from '../lib/util/package-root.js';

interface Case {
  name: string;
  values: number[];
  indices: number[][];
  mean: number;
  BCa?: { ci: [number, number]; standard_error: number };
  percentile?: { ci: [number, number]; standard_error: number };
}
const fixture = JSON.parse(readFileSync(join(packageRoot(), 'test', 'fixtures', 'stats', 'mean-bootstrap.json'), 'utf8')) as { cases: Case[] };

describe('bootstrapMeanCI against scipy.stats.bootstrap', () => {
  for (const c of fixture.cases.filter((x) => x.BCa)) {
    for (const [method, ref] of [['bca', c.BCa!], ['percentile', c.percentile!]] as const) {
      test(`${c.name}: ${method}`, () => {
        const r = bootstrapMeanCI(c.values, { resampleIndices: c.indices, method });
        assert.ok(Math.abs(r.mean - c.mean) < 1e-14);
        assert.ok(Math.abs(r.ci.low - ref.ci[0]) < 1e-12, `low ${r.ci.low} vs scipy ${ref.ci[0]}`);
        assert.ok(Math.abs(r.ci.high - ref.ci[1]) < 1e-12, `high ${r.ci.high} vs scipy ${ref.ci[1]}`);
        assert.ok(Math.abs(r.standardError - ref.standard_error) < 1e-12);
        assert.equal(r.seed, null);
        assert.equal(r.resamples, c.indices.length);
      });
    }
  }
  test('constant sample (scipy: NaN): the interval is the point', () => {
    const c = fixture.cases.find((x) => x.name === 'constant')!;
    const r = bootstrapMeanCI(c.values, { resampleIndices: c.indices });
    assert.deepEqual([r.ci.low, r.ci.high, r.standardError], [0, 0, 0]);
  });
});

describe('bootstrapMeanCI', () => {
  test('seeded draw: same seed, same interval; another seed, another draw; interval brackets the mean', () => {
    const hits = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 100 < 13 ? 1 : 0));
    const a = bootstrapMeanCI(hits, { seed: 5 });
    const b = bootstrapMeanCI(hits, { seed: 5 });
    const c = bootstrapMeanCI(hits, { seed: 6 });
    assert.deepEqual(a.ci, b.ci);
    assert.notDeepEqual([...a.distribution], [...c.distribution]);
    assert.equal(a.mean, 0.13);
    assert.ok(a.ci.low < 0.13 && a.ci.high > 0.13);
    // the binomial standard error sqrt(p(1-p)/n) = 0.0106; the bootstrap's within a few percent of it
    assert.ok(Math.abs(a.standardError - Math.sqrt(0.13 * 0.87 / 1000)) < 0.001, String(a.standardError));
  });
  test('bad input names the position', () => {
    assert.throws(() => bootstrapMeanCI([1, Number.NaN, 0]), /bootstrapMeanCI: values\[1\] is NaN/);
    assert.throws(() => bootstrapMeanCI([1]), /at least 2 values/);
  });
});
