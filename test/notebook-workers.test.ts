/**
 * `npm run notebooks -- --workers 2` (scripts/notebooks/workers.ts) on a three-run plan
 * (test/fixtures/plan-notebooks/plan-fixture.ipynb, the smoke preset's tiny BERT on the CPU
 * backends): the plan's runs go to two worker processes while a plain run of the same notebook on
 * the same results folder races them; no run key trains twice (three training records, one per
 * run), and the notebook rendered from the workers' records shows the numbers a plain run on a
 * fresh folder computes. Needs dist/ (npm test builds it first), as every notebook does.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readPlanRunMarker } from '../lib/experiments/plan-workers.js';
import { packageRoot } from '../lib/util/package-root.js';
import { renderedNumbers, runNotebooks, runsTableHtml } from './helpers/notebook-cli.js';

const ROOT = packageRoot();
const tmp = mkdtempSync(join(tmpdir(), 'nb-workers-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function trainingRecords(resultsDir: string): string[] {
  const dir = join(resultsDir, 'plan-fixture');
  return readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json'));
}

test('arguments: --gpus and --workers are checked before anything runs', async () => {
  const r = join(tmp, 'args');
  for (const [args, pattern] of [
    [['--gpus', 'zero'], /--gpus expects device ids/],
    [['--gpus', '0,0'], /--gpus names a device twice/],
    [['--workers', '0'], /--workers expects a whole number >= 1/],
    [['--gpus', '0', '--workers', '2'], /give one/],
    [['--only-run', 'nokey'], /--only-run expects a plan-run key/],
  ] as const) {
    const out = await runNotebooks(['plan-fixture', ...args], r);
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr, pattern);
  }
  assert.equal(existsSync(r), false, 'nothing was written');
});

test('two workers and a racing plain run train each run once; the rendered numbers equal a plain run on a fresh folder', { skip: existsSync(join(ROOT, 'dist', 'index.js')) ? false : 'dist/ is not built (npm run build; npm test builds it first)' }, async () => {
  const plainDir = join(tmp, 'plain');
  const sharedDir = join(tmp, 'shared-results');
  const plain = await runNotebooks(['plan-fixture', '--out', join(tmp, 'nb-plain')], plainDir);
  assert.equal(plain.code, 0, plain.stderr);
  const expected = renderedNumbers(join(tmp, 'nb-plain', 'plan-fixture.ipynb'));
  assert.equal(expected.length, 3);

  // The workers and, at the same time, a second notebook run by hand on the same results folder.
  const [workers, racer] = await Promise.all([
    runNotebooks(['plan-fixture', '--workers', '2', '--out', join(tmp, 'nb-workers')], sharedDir),
    runNotebooks(['plan-fixture', '--out', join(tmp, 'nb-racer')], sharedDir),
  ]);
  assert.equal(workers.code, 0, workers.stderr);
  assert.equal(racer.code, 0, racer.stderr);
  assert.match(workers.stdout, /3 run\(s\) in the plan, \d finished already, \d to run, on 2 worker\(s\): worker 1, worker 2/);

  // Each run key trained once: one training record per run, whoever ran it.
  assert.equal(trainingRecords(sharedDir).length, 3, `records: ${trainingRecords(sharedDir).join(', ')}`);
  assert.deepEqual(renderedNumbers(join(tmp, 'nb-workers', 'plan-fixture.ipynb')), expected);
  assert.deepEqual(renderedNumbers(join(tmp, 'nb-racer', 'plan-fixture.ipynb')), expected);
  // The rendering reused every run; the runs a worker ran link its log (a file under the results folder).
  const html = runsTableHtml(join(tmp, 'nb-workers', 'plan-fixture.ipynb'));
  assert.equal((html.match(/<td>reused /g) ?? []).length, 3, html);
  const markers = readdirSync(join(sharedDir, 'plan-fixture', 'plan-runs')).map((f) => readPlanRunMarker(sharedDir, 'plan-fixture', f.replace(/\.json$/, ''))!);
  assert.equal(markers.length, 3);
  for (const m of markers.filter((x) => x.worker)) {
    assert.ok(existsSync(join(sharedDir, m.worker!.log!)), `the worker's log ${m.worker!.log}`);
    assert.ok(html.includes(`log: ${m.worker!.log}`), `the runs table links ${m.worker!.log}`);
  }

  // Listing the plan again: all three finished, nothing to run.
  const list = await runNotebooks(['plan-fixture', '--list-runs'], sharedDir);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /3 run\(s\) in the plan, 3 finished already, 0 to run/);
});
