/**
 * Where runs are recorded is decided in one place, lib/config.ts `resolveResultsDir`: the option
 * or flag, else ANGLE_RESULTS_DIR, else results/, absolute. The readers and writers of lib/ call
 * it (no `resultsDir ?? envConfig().resultsDir` left in lib/report or lib/experiments' store);
 * milliseconds.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { resolveResultsDir } from '../lib/config.js';
import { packageRoot } from '../lib/util/package-root.js';

test('resolveResultsDir: the option, else ANGLE_RESULTS_DIR, else results/, always absolute', () => {
  const env = { ANGLE_RESULTS_DIR: 'results/smoke' };
  assert.equal(resolveResultsDir('/tmp/given', env), '/tmp/given');
  assert.equal(resolveResultsDir('given', env), resolve('given'));
  assert.equal(resolveResultsDir(undefined, env), resolve('results/smoke'));
  assert.equal(resolveResultsDir('  ', env), resolve('results/smoke'), 'an empty option is no option');
  assert.equal(resolveResultsDir(undefined, { ANGLE_RESULTS_DIR: ' ' }), resolve('results'));
  assert.equal(resolveResultsDir(undefined, {}), resolve('results'));
});

test('lib/ writes the rule once: no file but lib/config.ts falls back to envConfig().resultsDir itself', () => {
  const lib = join(packageRoot(), 'lib');
  const files = (dir: string): string[] => readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? files(join(dir, e)) : e.endsWith('.ts') ? [join(dir, e)] : []));
  const offenders = files(lib)
    .map((f) => relative(packageRoot(), f))
    .filter((f) => f !== 'lib/config.ts' && /envConfig\(\)\.resultsDir/.test(readFileSync(join(packageRoot(), f), 'utf8')));
  assert.deepEqual(offenders, []);
});
