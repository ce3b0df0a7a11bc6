/**
 * npm run gpu-check: the dry run on the CPU runs every step and leaves the layout the device tool
 * returns (at most 8 files, at most two folders deep: gpu-check.json, gpu-check.md, logs/<step>.txt),
 * every step present with a status; a failing or out-of-budget step does not stop the next one;
 * --help lists every option. Budgets are generous here so that a slow machine cannot fail the test
 * (the dry run's own 3-minute budgets are CI's concern: .ci/run runs it with them).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MAX_DEPTH, MAX_FILES, OUT_FILES, STEP_NAMES, outputFiles, renderMarkdown, stepStatus, type GpuCheckReport } from '../scripts/gpu-check/report.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function gpuCheck(args: string[]): { code: number; out: string; dir: string; report?: GpuCheckReport } {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-check-test-'));
  dirs.push(dir);
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/gpu-check.ts', '--out', dir, ...args], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  let report: GpuCheckReport | undefined;
  try {
    report = JSON.parse(readFileSync(join(dir, OUT_FILES.json), 'utf8'));
  } catch {
    report = undefined;
  }
  return { code: r.status ?? -1, out: r.stdout + r.stderr, dir, report };
}

const GENEROUS = STEP_NAMES.map((s) => `${s}=3600`).join(',');

test('gpu-check --dry-run: every step runs on the cpu, one JSON and one markdown summary, at most 8 files two folders deep', { timeout: 1_200_000 }, () => {
  const r = gpuCheck(['--dry-run', '--budget-s', GENEROUS]);
  assert.equal(r.code, 0, r.out.slice(-4000));
  const files = outputFiles(r.dir);
  assert.ok(files.length <= MAX_FILES, `${files.length} files: ${files.map((f) => f.path).join(', ')}`);
  assert.ok(files.every((f) => f.depth <= MAX_DEPTH), files.map((f) => `${f.path} (${f.depth})`).join(', '));
  assert.deepEqual(files.map((f) => f.path).sort(), [OUT_FILES.json, OUT_FILES.markdown, ...STEP_NAMES.map((s) => `${OUT_FILES.logs}/${s}.txt`)].sort());
  const report = r.report!;
  assert.equal(report.dryRun, true);
  assert.equal(report.backend, 'cpu');
  assert.deepEqual(report.steps.map((s) => s.step), [...STEP_NAMES]);
  const md = readFileSync(join(r.dir, OUT_FILES.markdown), 'utf8');
  for (const s of report.steps) {
    assert.equal(s.status, 'ok', `${s.step}: ${JSON.stringify(s.items)}`);
    assert.ok(s.items.length > 0, `${s.step} has items`);
    assert.ok(md.includes(`## ${s.title}`), `markdown has ${s.step}`);
    for (const i of s.items) assert.ok(['ok', 'skipped', 'off'].includes(i.status), `${s.step} ${i.name}: ${i.status}`);
  }
  // Each step measured something here: the dry run may skip configurations, not whole steps.
  for (const s of report.steps.filter((x) => x.step !== 'build-tests')) assert.ok(s.items.some((i) => i.status === 'ok'), `${s.step} ran at least one item`);
  // The cpu backend and its shape-only mirror keep the same accounting (test/shape-only-backend.test.ts): the memory step's ratios are 1.
  const memory = report.steps.find((s) => s.step === 'memory')!;
  for (const i of memory.items.filter((x) => x.status !== 'skipped')) {
    const v = i.values as { measuredPeakBytes: number; predictedPeakBytes: number; ratio: number; predictedBy: string };
    assert.ok(v.measuredPeakBytes > 0 && v.predictedPeakBytes > 0, i.name);
    assert.equal(v.predictedBy, 'meta-cpu');
    assert.ok(Math.abs(v.ratio - 1) <= 0.1, `${i.name}: ratio ${v.ratio}`);
  }
  // Every notebook's rehearsal row that ran reports its step time beside the committed projection.
  const rehearsal = report.steps.find((s) => s.step === 'rehearsal')!;
  for (const i of rehearsal.items.filter((x) => x.status === 'ok')) {
    const v = i.values as { stepSeconds: number; projectedStepSeconds: number; projectedStepPeakBytes: number };
    assert.ok(v.stepSeconds > 0 && v.projectedStepSeconds > 0 && v.projectedStepPeakBytes > 0, i.name);
  }
});

test('gpu-check: a failing step and a step out of budget are reported, the other steps still run, exit 1', { timeout: 300_000 }, () => {
  const r = gpuCheck(['--dry-run', '--steps', 'parity,memory,rehearsal', '--budget-s', 'parity=3600,memory=0,rehearsal=3600', '--golden-root', join(tmpdir(), 'no-such-golden'), '--rehearsal-summary', join(tmpdir(), 'no-such-summary.json')]);
  assert.equal(r.code, 1, r.out.slice(-4000));
  const byStep = new Map(r.report!.steps.map((s) => [s.step, s]));
  assert.deepEqual([...byStep.keys()], ['parity', 'memory', 'rehearsal']);
  // No golden sets: every parity item says so (skipped), which is not a failure.
  assert.equal(byStep.get('parity')!.status, 'ok');
  assert.ok(byStep.get('parity')!.items.some((i) => i.status === 'skipped' && /golden set not found/.test(i.detail)));
  assert.equal(byStep.get('memory')!.status, 'timed-out');
  assert.ok(byStep.get('memory')!.items.every((i) => i.status === 'timed-out' || i.status === 'skipped'));
  assert.equal(byStep.get('rehearsal')!.status, 'failed');
  assert.match(byStep.get('rehearsal')!.items[0].detail, /no-such-summary\.json: no rehearsal summary/);
  assert.match(readFileSync(join(r.dir, OUT_FILES.markdown), 'utf8'), /\| 3\. Memory[^|]*\| timed-out \|/);
});

test('gpu-check --help lists every option; a bad --budget-s is a usage error', () => {
  const help = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/gpu-check.ts', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  for (const o of ['--out', '--dry-run', '--steps', '--budget-s', '--backend', '--golden-root', '--data', '--rehearsal-summary', '--rehearsal-steps', '--help']) assert.ok(help.stdout.includes(o), o);
  const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/gpu-check.ts', '--dry-run', '--budget-s', 'warp=3'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown step 'warp'/);
});

test('the report: a step fails with a failed item or an error, times out with a timed-out item; flagged figures are listed', () => {
  assert.equal(stepStatus([{ name: 'a', status: 'ok', detail: '' }, { name: 'b', status: 'off', detail: '' }, { name: 'c', status: 'skipped', detail: '' }]), 'ok');
  assert.equal(stepStatus([{ name: 'a', status: 'ok', detail: '' }, { name: 'b', status: 'failed', detail: '' }]), 'failed');
  assert.equal(stepStatus([{ name: 'a', status: 'timed-out', detail: '' }]), 'timed-out');
  assert.equal(stepStatus([], 'boom'), 'failed');
  const md = renderMarkdown({
    tool: 'gpu-check', version: 1, date: '2026-11-28T00:00:00Z', dryRun: false, backend: 'cuda', provenance: { gitCommit: 'abc', cpu: 'x' },
    steps: [{ step: 'memory', title: 'Memory', status: 'ok', seconds: 1, budgetS: 2, log: 'logs/memory.txt', items: [{ name: 'bert | 32x64', status: 'off', detail: 'ratio 1.2' }] }],
    flagged: ['memory: bert 32x64: ratio 1.2'],
  });
  assert.match(md, /^# GPU check\n/);
  assert.match(md, /Flagged:\n\n- memory: bert 32x64: ratio 1\.2/);
  assert.match(md, /\| bert \\\| 32x64 \| off \| ratio 1\.2 \|/);
});
