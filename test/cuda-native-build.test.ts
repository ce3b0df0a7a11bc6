/**
 * The native build's compile check (`node native/build.mjs --check`): where nvcc is present every
 * translation unit whose headers are here must compile; the others must be skipped with the
 * exact reason; the standalone kernel benchmarks of native/dev compile too. Where nvcc is absent the
 * script itself must say so and succeed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../native/build.mjs', import.meta.url));
const units = readdirSync(fileURLToPath(new URL('../native/src', import.meta.url))).filter((f) => f.endsWith('.cu')).sort();
const devUnits = readdirSync(fileURLToPath(new URL('../native/dev', import.meta.url))).filter((f) => f.endsWith('.cu')).sort();

test('native/build.mjs --check compiles every unit it can and names the reason for each one it skips', { timeout: 900_000 }, (t) => {
  const r = spawnSync(process.execPath, [script, '--check', '--json', '--jobs', '2'], { encoding: 'utf8' });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  type Unit = { unit: string; status: string; reason?: string; output?: string };
  const summary = JSON.parse(line) as { nvcc: string | null; cublasInclude: string | null; units: Unit[]; dev: Unit[] };
  assert.deepEqual(summary.units.map((u) => u.unit), units);
  assert.deepEqual(summary.dev.map((u) => u.unit), devUnits);
  assert.ok(devUnits.includes('attention.cu'), 'native/dev/attention.cu (the fused attention benchmark) exists');
  const failed = [...summary.units, ...summary.dev].filter((u) => u.status === 'failed');
  assert.deepEqual(failed.map((u) => `${u.unit}:\n${u.output}`), [], 'units that failed to compile');
  if (summary.nvcc) assert.ok(summary.dev.every((u) => u.status === 'compiled'), 'with nvcc every benchmark compiles');
  assert.equal(r.status, 0, r.stderr);
  for (const u of summary.units.filter((x) => x.status === 'skipped')) {
    assert.match(u.reason ?? '', /not found/);
    t.diagnostic(`skipped ${u.unit}: ${u.reason}`);
  }
  if (!summary.nvcc) {
    assert.ok(summary.units.every((u) => u.status === 'skipped' && /nvcc not found/.test(u.reason ?? '')));
    t.diagnostic('nvcc is not installed here: nothing compiled');
    return;
  }
  // With nvcc, only cuBLAS (matmul.cu) may be missing; everything else compiles.
  const skipped = summary.units.filter((u) => u.status === 'skipped').map((u) => u.unit);
  for (const u of skipped) assert.ok(u === 'matmul.cu' && !summary.cublasInclude, `${u} was skipped although nvcc is present`);
});
