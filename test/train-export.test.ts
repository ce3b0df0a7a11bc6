/**
 * Issue 38: `npm run train` saved its weights under runs/<run id> while its record held only the
 * run's key, so `npm run export -- --run <record>` said the run folder was gone and `--run
 * runs/<run id>` said no record had that key. Here the two commands run as a user runs them: train
 * (the smoke preset's tiny BERT, two steps), then export from what train printed — the record and
 * the run folder — and the export loads in transformers.js (local files only) and embeds as the
 * trained weights do. The card's "how made" line runs as written.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { loadModel } from '../lib/models/auto.js';
import { packageRoot } from '../lib/util/package-root.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const work = mkdtempSync(join(tmpdir(), 'angle-train-export-'));
// The results inside the project (build/ is git-ignored), so records and the card write them as `project:…` paths.
mkdirSync(join(ROOT, 'build'), { recursive: true });
const projectWork = mkdtempSync(join(ROOT, 'build', 'test-train-export-'));
after(() => rmSync(projectWork, { recursive: true, force: true }));
after(() => rmSync(work, { recursive: true, force: true }));

function command(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE' || k === 'ANGLE_SHARED_DIR'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('train, then export from what train printed (the record or the run folder), then transformers.js loads the export', { skip: GOLDEN_DIR && DATA_DIR ? false : 'needs the golden tiny BERT and the data folder', timeout: 600_000 }, async () => {
  const results = join(projectWork, 'results');
  const train = command('scripts/train.ts', ['--task', 'stsb', '--backend', 'cpu', '--results', results, '--max-steps', '2', '--limit', '16', '--batch-size', '8', '--max-length', '32', '--eval-every', '2']);
  assert.equal(train.status, 0, train.stderr);
  const record = /^ {2}results: (.+\.json)$/m.exec(train.stdout)?.[1];
  assert.ok(record && existsSync(record), train.stdout);
  const printed = /^ {2}export: npm run export -- --run (\S+) --out <dir> \[--onnx\]$/m.exec(train.stdout)?.[1];
  assert.ok(printed, train.stdout);
  assert.equal(resolve(ROOT, printed), record, 'train prints the export command for its record');
  const runs = readdirSync(join(results, 'train-stsb', 'runs'));
  assert.equal(runs.length, 1);
  const runDir = join(results, 'train-stsb', 'runs', runs[0]!);
  assert.match(String((JSON.parse(readFileSync(record, 'utf8')) as { details: { runDir?: string } }).details.runDir), new RegExp(`^project:build/test-train-export-.*/runs/${runs[0]}$`));

  const models = join(work, 'models');
  const byRecord = command('scripts/export.ts', ['--run', printed, '--out', join(models, 'by-record'), '--onnx']);
  assert.equal(byRecord.status, 0, byRecord.stderr);
  const byFolder = command('scripts/export.ts', ['--run', runDir, '--out', join(models, 'by-folder')]);
  assert.equal(byFolder.status, 0, byFolder.stderr);
  const weights = (name: string) => readFileSync(join(models, name, 'model.safetensors'));
  assert.ok(weights('by-record').equals(weights('by-folder')), 'the record and the folder name the same weights');

  // The card's "how made" line: a command that runs as written (from the project root, as npm runs it).
  const card = readFileSync(join(models, 'by-record', 'README.md'), 'utf8');
  const made = /npm run export -- (.+)$/m.exec(card)?.[1];
  assert.ok(made, 'the card says how it was made');
  const again = command('scripts/export.ts', [...made.split(' ').map((a) => (a === 'by-record' ? join(models, 'again') : a))]);
  assert.equal(again.status, 0, `${made}\n${again.stderr}`);
  assert.ok(weights('again').equals(weights('by-record')));

  await initBackend('cpu', { quiet: true });
  const { env, pipeline } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.localModelPath = `${models}/`;
  const extractor = await pipeline('feature-extraction', 'by-record', { local_files_only: true, dtype: 'fp32' });
  const texts = ['A man is playing a guitar .', 'Someone plays music on a stage tonight .'];
  const theirs = await extractor(texts, { pooling: 'cls', normalize: false });
  const trained = await loadModel(join(models, 'by-record'));
  try {
    const ours = await new PooledSentenceEncoder(trained, { pooling: 'cls', engine: 'tfjs' }).encode(texts);
    const a = theirs.data as Float32Array;
    assert.equal(a.length, ours.data.length);
    let d = 0;
    for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - ours.data[i]!));
    assert.ok(d <= 1e-5, `transformers.js vs our encoder on the exported weights: max |Δ| ${d}`);
  } finally {
    trained.model.dispose();
    await extractor.dispose();
  }
});
