/**
 * A table notebook run twice (04-pooling, smoke preset, through the headless runner): the first run
 * trains every row and writes a record per run; the second trains nothing — every row is reused —
 * and writes no new record, while the side-by-side table shows the same numbers.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const skip = SHARED_DIR && existsSync(join(ROOT, 'dist', 'index.js')) ? false : 'needs the shared folder and a build (dist/; npm test builds it first)';
const tmp = mkdtempSync(join(tmpdir(), 'angle-table-nb-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function runNotebook(out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  // Only the numbers are checked here: no static figure images (each kernel would start Chromium for them).
  env.ANGLE_STATIC_FIGURES = 'off';
  Object.assign(env, { ANGLE_SHARED_DIR: SHARED_DIR!, ANGLE_RESULTS_DIR: join(tmp, 'results'), HF_HUB_OFFLINE: '1' });
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/notebooks/cli.ts', '04-pooling', '--preset', 'smoke', '--out', out], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Everything the executed notebook printed (streams and text results), in order. */
function printed(file: string): string {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as { cells: Array<{ cell_type: string; outputs?: Array<{ output_type: string; text?: string[]; data?: Record<string, string[]> }> }> };
  return nb.cells
    .flatMap((c) => c.outputs ?? [])
    .map((o) => (o.output_type === 'stream' ? (o.text ?? []).join('') : (o.data?.['text/html'] ?? o.data?.['text/plain'] ?? []).join('')))
    .join('\n');
}

const records = () => readdirSync(join(tmp, 'results', '04-pooling')).filter((f) => /^\d{4}-.*\.json$/.test(f) && !f.includes('.predictions.'));

test('04-pooling run twice: the second run reuses every run and trains nothing', { skip, timeout: 900_000 }, async () => {
  const first = await runNotebook(join(tmp, 'first'));
  assert.equal(first.code, 0, first.stderr + first.stdout);
  const a = printed(join(tmp, 'first', '04-pooling.ipynb'));
  assert.equal((a.match(/: trained, 24 steps/g) ?? []).length, 5, a);
  assert.equal(records().length, 5);

  const second = await runNotebook(join(tmp, 'second'));
  assert.equal(second.code, 0, second.stderr + second.stdout);
  const b = printed(join(tmp, 'second', '04-pooling.ipynb'));
  assert.equal((b.match(/: reused run /g) ?? []).length, 5, b);
  assert.doesNotMatch(b, /: trained, /);
  assert.equal(records().length, 5, 'the second run wrote no record');
  // The same numbers in both side-by-side tables.
  const cells = (s: string) => [...s.matchAll(/\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] \(95% BCa CI\)/g)].map((m) => m[0]);
  assert.equal(cells(a).length, 5);
  assert.deepEqual(cells(b), cells(a));
  assert.ok(existsSync(join(tmp, 'results', '04-pooling', 'summary.md')));
});
