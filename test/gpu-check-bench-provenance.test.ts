/**
 * bench/train-memory.ts's figures say where they came from: every row names what produced it
 * ('measured on cpu', 'measured on wasm', 'predicted for cpu', 'predicted for cuda', or PyTorch's
 * projection) and carries the whole-step peak, and the record carries its provenance (commit,
 * package versions, date, machine). Its `backends` section at a small width (64) keeps this quick;
 * the committed results run it at BERT-base width.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const dir = mkdtempSync(join(tmpdir(), 'train-memory-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('train-memory backends: real cpu and wasm steps beside the shape-only predictions, each row saying what produced it, with the record\'s provenance', { timeout: 600_000 }, () => {
  const out = join(dir, 'train-memory.json');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/train-memory.ts', '--sections', 'backends', '--no-torch', '--backends-width', '64', '--out', out], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const record = JSON.parse(readFileSync(out, 'utf8')) as {
    when: string;
    commit: string;
    machine: { cpu: string; cores: number };
    provenance: { gitCommit: string; packages: Record<string, string>; node: string; cpu: string };
    rows: Array<{ producedBy: string; wholeStepPeakBytes: number; peakBytes: number; bytesPerTokenPerLayer: number; engine: string }>;
  };
  assert.deepEqual(record.rows.map((x) => x.producedBy).sort(), ['measured on cpu', 'measured on wasm', 'predicted for cpu', 'predicted for cuda']);
  for (const row of record.rows) {
    assert.equal(row.engine, 'ours');
    assert.ok(row.wholeStepPeakBytes > 0 && row.wholeStepPeakBytes === row.peakBytes, row.producedBy);
    assert.ok(row.bytesPerTokenPerLayer > 0, row.producedBy);
  }
  // The shape-only backend mirroring cpu keeps cpu's accounting (test/shape-only-backend.test.ts): the same whole-step peak, within 1%.
  const by = new Map(record.rows.map((x) => [x.producedBy, x]));
  const cpu = by.get('measured on cpu')!.wholeStepPeakBytes;
  assert.ok(Math.abs(by.get('predicted for cpu')!.wholeStepPeakBytes / cpu - 1) < 0.01, `${by.get('predicted for cpu')!.wholeStepPeakBytes} vs ${cpu}`);
  assert.ok(!Number.isNaN(Date.parse(record.when)));
  assert.match(record.provenance.gitCommit, /^([0-9a-f]{40}|unknown \(not a git checkout\))$/);
  assert.match(record.provenance.packages['@tensorflow/tfjs-core'], /^\d+\.\d+\.\d+/);
  assert.equal(record.provenance.node, process.version);
  assert.ok(record.machine.cores > 0 && record.provenance.cpu.length > 0);
});
