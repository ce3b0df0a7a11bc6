/**
 * The Espresso flags of the commands (issue 41 item 3):
 *
 * - `npm run export -- --truncate-layer n --truncate-dim k` writes a sentence-transformers folder
 *   of the first n layers (config.json, weights) whose own pipeline gives the truncated encoder's
 *   vectors; the flags are listed by --help and refused for what they cannot mean;
 * - `npm run train -- --task stsb --objective ese --ese-compression-size k --ese-kl-temperature T
 *   --ese-pca off --weights ...` trains with those values (the run record's config holds them), and
 *   the ESE flags are refused for another objective, before any model loads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { loadModel } from '../lib/models/auto.js';
import { packageRoot } from '../lib/util/package-root.js';
import { DATA_DIR, GOLDEN_DIR, SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const noModel = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'no encoder golden set with model/ (ANGLE_GOLDEN_DIR)';
const TEXTS = ['A man is playing a guitar.', 'Two dogs run across a snowy field while children watch.', 'ok'];

function command(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE' || k === 'ANGLE_SHARED_DIR'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', `scripts/${script}.ts`, ...args], { cwd: ROOT, encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('Espresso flags of npm run export and npm run train', () => {
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'angle-espresso-cli-'));
    await initBackend('cpu', { quiet: true });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test('--help lists the truncation and ESE flags', () => {
    const exp = command('export', ['--help']);
    assert.equal(exp.status, 0);
    assert.match(exp.stdout, /--truncate-layer <n>/);
    assert.match(exp.stdout, /--truncate-dim <n>/);
    const train = command('train', ['--help', '--task', 'nli']);
    assert.equal(train.status, 0);
    for (const flag of ['--ese-compression-size <k>', '--ese-kl-temperature <T>', '--ese-pca on|off', '--teacher <dir|id>', '--teacher-pooling <name>']) assert.ok(train.stdout.includes(flag), flag);
  });

  test('bad values are refused in one line before any model loads', () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['export', ['--model', 'some/model', '--pooling', 'cls', '--out', join(work, 'never'), '--truncate-layer', '0'], /--truncate-layer expects a positive integer, got '0'/],
      ['train', ['--task', 'stsb', '--ese-compression-size', '16'], /--ese-compression-size applies to the Espresso objective only \(--objective ese\), not 'angle'/],
      ['train', ['--task', 'nli', '--recipe', 'espresso-nli', '--ese-pca', 'maybe'], /unknown --ese-pca value 'maybe'/i],
      ['train', ['--task', 'stsb', '--teacher-pooling', 'avg'], /--teacher-pooling needs a teacher: pass --teacher <dir\|id>/],
      ['train', ['--task', 'nli', '--recipe', 'simcse-nli-sup', '--teacher', 'some/model'], /--teacher applies to the angle and ese objectives only, not 'simcse'/],
    ];
    for (const [script, args, message] of cases) {
      const r = command(script, args);
      assert.equal(r.status, 2, `${script} ${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stdout, /^backend:|wrote/m);
    }
  });

  test('export --truncate-layer 1 --truncate-dim 16: a one-layer folder whose pipeline gives the truncated encoder\'s vectors', { skip: noModel, timeout: 120_000 }, async () => {
    const out = join(work, 'truncated');
    const r = command('export', ['--model', MODEL_DIR!, '--pooling', 'avg', '--out', out, '--truncate-layer', '1', '--truncate-dim', '16']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal((JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { num_hidden_layers: number }).num_hidden_layers, 1);
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    assert.match(card, /the first 1 of its 2 layers \(--truncate-layer\)/);
    assert.match(card, /\| embedding dimension \| 16 \(the first components: --truncate-dim\)/);
    const full = await loadModel(MODEL_DIR!);
    const folder = await loadModel(out);
    try {
      const want = await new PooledSentenceEncoder(full, { pooling: 'avg', engine: 'tfjs', truncate: { layer: 1, dim: 16 } }).encode(TEXTS);
      const got = await new PooledSentenceEncoder(folder, { engine: 'tfjs' }).encode(TEXTS);
      assert.equal(got.dim, 16);
      let d = 0;
      for (let i = 0; i < want.data.length; i++) d = Math.max(d, Math.abs(want.data[i] - got.data[i]));
      assert.ok(d < 1e-5, `max |diff| ${d}`);
    } finally {
      full.model.dispose();
      folder.model.dispose();
    }
  });

  test('train --task stsb --objective ese with the ESE flags: the record holds the values given', { skip: SHARED_DIR && DATA_DIR && !noModel ? false : 'needs the shared folder (tiny BERT and data)', timeout: 300_000 }, () => {
    const results = join(work, 'results');
    const r = command('train', ['--task', 'stsb', '--objective', 'ese', '--weights', 'cosine=0,ibn=2,angle=1', '--preset', 'smoke', '--results', results, '--max-steps', '2', '--limit', '16', '--batch-size', '8', '--ese-compression-size', '16', '--ese-kl-temperature', '0.5', '--ese-pca', 'off', '--eval-every', '2', '--teacher', MODEL_DIR!, '--teacher-pooling', 'avg']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const dir = join(results, 'train-stsb');
    const record = readFileSync(join(dir, spawnSync('ls', [dir], { encoding: 'utf8' }).stdout.split('\n').find((f) => f.endsWith('.json') && !f.includes('predictions'))!), 'utf8');
    const config = (JSON.parse(record) as { config: { objective: { name: string; compressionSize: number; klTemperature: number; pca: boolean; loss: { weights: Record<string, number> } } } }).config;
    assert.equal(config.objective.name, 'ese');
    assert.equal(config.objective.compressionSize, 16);
    assert.equal(config.objective.klTemperature, 0.5);
    assert.equal(config.objective.pca, false);
    // --weights sets ESE's base objective.
    assert.deepEqual([config.objective.loss.weights.cosine, config.objective.loss.weights.ibn, config.objective.loss.weights.angle], [0, 2, 1]);
    // The teacher flags, and the teacher's folder recorded without this machine's path.
    const teacher = (config.objective as unknown as { teacher: { model: string; pooling: string } }).teacher;
    assert.equal(teacher.pooling, 'avg');
    assert.match(teacher.model, /^(shared|project|local):.*model$/);
    assert.ok(!record.includes(MODEL_DIR!), 'the record holds the machine path of the teacher');
  });
});
