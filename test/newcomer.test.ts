/**
 * What a newcomer does, checked: a fresh copy of the repository in a temp directory with the
 * shared folder beside it (`<tmp>/repo`, `<tmp>/shared`), no ANGLE_* variables, and the README's
 * commands run as written through npm. Each must exit 0 and print the line a reader expects; each
 * bad input must print one line (no stack trace) and exit with its code (2 usage/input, 3
 * unavailable, 130 interrupted). Also: killing `npm run train` (SIGINT to npm) stops the training
 * process too, after it wrote a checkpoint, and `--resume` finishes the run.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const skip = SHARED_DIR && existsSync(join(SHARED_DIR, 'golden')) ? false : 'no shared folder (ANGLE_SHARED_DIR or ../shared beside the repository)';

let tmp: string;
let repo: string;

/** The environment of a newcomer: no ANGLE_* variables, no Hub. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HF_HUB_OFFLINE: '1' };
  // A newcomer sets none of the ANGLE_ variables; the ONNX graph cache stays where npm test put it
  // (build/), so the tests never write to the user's own cache.
  for (const k of Object.keys(env)) if (k.startsWith('ANGLE_') && k !== 'ANGLE_ONNX_CACHE') delete env[k];
  return env;
}

function npm(args: string[], timeoutMs = 240_000): { code: number | null; out: string; err: string } {
  const r = spawnSync('npm', ['run', '--silent', ...args], { cwd: repo, env: cleanEnv(), encoding: 'utf8', timeout: timeoutMs });
  // npm's own warnings (unknown configs) are not the command's output.
  const err = r.stderr
    .split('\n')
    .filter((l) => !l.startsWith('npm warn'))
    .join('\n');
  return { code: r.status, out: r.stdout, err };
}

/** The command's own lines on stderr (npm's error footer after a non-zero exit dropped). */
function ownLines(err: string): string[] {
  return err.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('npm error'));
}

before(() => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'angle-newcomer-'));
  repo = join(tmp, 'repo');
  // What a clone holds: tracked files and new files git does not ignore (so uncommitted work is tested too).
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue; // deleted in the working tree
    mkdirSync(dirname(join(repo, f)), { recursive: true });
    cpSync(join(ROOT, f), join(repo, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
  symlinkSync(SHARED_DIR!, join(tmp, 'shared'));
});

after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the README's commands on a fresh copy, shared folder beside it, no variables", { skip, concurrency: false }, () => {
  test('npm run data -- check finds ../shared by itself and says so', () => {
    const r = npm(['data', '--', 'check']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /data root: .*shared\/data \(from \.\.\/shared beside the repository \(its data\/\)\)/);
    assert.match(r.out, /data: 37 splits: \d+ local, 0 cache, 1 sample, \d+ missing, 0 invalid/);
  });

  test('npm run train -- --task stsb runs the smoke preset and writes a results file without a machine path', () => {
    const r = npm(['train', '--', '--task', 'stsb']);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /shared: .*shared \(from \.\.\/shared beside the repository\)/);
    assert.match(r.out, /train: task stsb, recipe angle-stsb, preset smoke; model .*golden\/bert-tiny-seed1234\/model/);
    assert.match(r.out, /test \(STSBenchmark test\) Spearman x100: \d+\.\d\d with best dev spearman/);
    const dir = join(repo, 'results', 'smoke', 'train-stsb');
    const record = readdirSync(dir).find((f) => /^\d{4}-.*Z-[0-9a-f]{4}\.json$/.test(f) && !f.endsWith('.predictions.json'));
    assert.ok(record, readdirSync(dir).join(', '));
    const text = execFileSync('cat', [join(dir, record!)], { encoding: 'utf8' });
    assert.ok(!text.includes(tmp), 'the record holds a path of this machine');
    assert.match(text, /"id": "shared:golden\/bert-tiny-seed1234\/model"/);
  });

  test('npm run parity (losses and decoder suites) finds the golden sets by itself', () => {
    const r = npm(['parity', '--', '--only', 'losses,decoder']);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /golden: .*shared\/golden \(from \.\.\/shared beside the repository \(its golden\/\)\)/);
    assert.match(r.out, /^parity: \d+ passed, 0 failed$/m);
  });

  test('npm run paper -- --table angle:4 prints the table', () => {
    const r = npm(['paper', '--', '--table', 'angle:4']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /cls\s+86\.26/);
  });

  test('npm run notebooks -- 00 runs the smoke preset on the shared folder', () => {
    const r = npm(['notebooks', '--', '00'], 300_000);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /shared: .*shared \(from \.\.\/shared beside the repository\)/);
    assert.match(r.out, /00-encode-and-compare: ok, \d+ code cells/);
  });
});

describe('bad input: one line, the right exit code', { skip, concurrency: false }, () => {
  const oneLine = (r: { err: string }, pattern: RegExp) => {
    const lines = ownLines(r.err);
    assert.equal(lines.length, 1, `expected one line, got:\n${lines.join('\n')}`);
    assert.match(lines[0], pattern);
    assert.ok(!/\n\s+at /.test(r.err), 'a stack trace was printed');
  };

  test('an unknown flag and an unknown task are usage errors (exit 2)', () => {
    const flag = npm(['train', '--', '--task', 'stsb', '--steps', '3']);
    assert.equal(flag.code, 2);
    oneLine(flag, /^train: Unknown option '--steps' \(see --help\)$/);
    const t = npm(['train', '--', '--task', 'sts-b']);
    assert.equal(t.code, 2);
    oneLine(t, /^train: unknown task 'sts-b': expected one of stsb, sick, mrpc, qnli, qqp, gis, nli, nli-pairs, wiki1m \(see --help\)$/);
    const p = npm(['train', '--', '--task', 'stsb', '--precision', 'fp8']);
    assert.equal(p.code, 2);
    oneLine(p, /^train: --precision expects one of tf32, bf16, fp16; got 'fp8' \(see --help\)$/);
  });

  test('a flag changes the value it names and nothing else; a warmup longer than a short run is accepted (as HF does)', () => {
    const r = npm(['train', '--', '--task', 'stsb', '--max-steps', '3', '--weights', 'angle=2', '--precision', 'bf16', '--attention', 'fused', '--checkpointing', 'on', '--experiment', 'train-flags']);
    assert.equal(r.code, 0, r.err + r.out);
    const dir = join(repo, 'results', 'smoke', 'train-flags');
    const record = readdirSync(dir).find((f) => /^\d{4}-.*\.json$/.test(f) && !f.endsWith('.predictions.json'))!;
    const config = JSON.parse(execFileSync('cat', [join(dir, record)], { encoding: 'utf8' })).config;
    // The recipe's other weights, taus, graded labels' int cast and ISP detection are untouched.
    assert.deepEqual(config.objective, { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 2 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'angle-int', duplicates: 'positive' } });
    assert.equal(config.maxSteps, 3);
    assert.equal(config.precision, 'bf16');
    assert.equal(config.attention, 'fused');
    assert.equal(config.checkpointing, true);
    const card = execFileSync('cat', [join(dir, record.replace(/\.json$/, '.md'))], { encoding: 'utf8' });
    // The run card lists what the flags changed against the recipe.
    assert.match(card, /\| `objective\.loss\.weights\.angle` \| 1 \| 2 \|/);
  });

  test('--help lists every flag with its default and where the default comes from', () => {
    const r = npm(['train', '--', '--help']);
    assert.equal(r.code, 0);
    for (const flag of ['--task', '--preset', '--weights', '--ibn-positives', '--duplicates', '--lr', '--precision', '--attention', '--checkpointing', '--step-graphs', '--resume', '--resume-if-possible']) assert.match(r.out, new RegExp(`\\s${flag}\\b`), flag);
    assert.match(r.out, /--lr <x>\s+peak learning rate \[default: 0\.00001 \(AnglE train_angle\.py defaults at SeanLee97\/AnglE@4428ff1/);
  });

  test('an unwritable results folder is found before training (exit 2, names the folder and the cause)', () => {
    const blocker = join(tmp, 'not-a-folder');
    writeFileSync(blocker, 'a file where a folder should be');
    const r = npm(['train', '--', '--task', 'stsb', '--results', join(blocker, 'results')]);
    assert.equal(r.code, 2);
    oneLine(r, /^train: .*not-a-folder\/results: cannot write the results here \(ENOTDIR\); choose another with --results or ANGLE_RESULTS_DIR$/);
    const nb = npm(['notebooks', '--', '00', '--out', join(blocker, 'nb')]);
    assert.equal(nb.code, 2);
    assert.match(nb.err, /cannot write the executed notebooks here \(ENOTDIR\); choose another with --out/);
  });

  test('--resume with nothing to resume is an error (exit 2)', () => {
    const r = npm(['train', '--', '--task', 'stsb', '--run-dir', join(tmp, 'empty-run'), '--resume']);
    assert.equal(r.code, 2);
    oneLine(r, /^train: .*empty-run: nothing to resume: this run folder has no checkpoints\/ /);
    assert.equal(existsSync(join(tmp, 'empty-run')), false, 'the failed run left its folder behind');
  });

  test('parity on cuda without the native addon: one line, exit 3', () => {
    const r = npm(['parity', '--', '--only', 'losses', '--backend', 'cuda']);
    assert.equal(r.code, 3, r.err + r.out);
    oneLine(r, /^parity: backend 'cuda' is unavailable: .*npm run build:cuda/);
  });

  test('SIGINT to npm run train stops the training process after a checkpoint (exit 130); --resume finishes the run', async () => {
    const runDir = join(tmp, 'interrupted');
    const stepLog = join(tmp, 'interrupted-steps.jsonl');
    const child = spawn('npm', ['run', '--silent', 'train', '--', '--task', 'stsb', '--run-dir', runDir, '--checkpoint-every', '1', '--step-log', stepLog], { cwd: repo, env: cleanEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    // Interrupt on an event the trainer emits: the first finished step's line in --step-log (written
    // as the step ends), not a progress line the bar throttles — on a fast machine the whole run
    // can end before the bar's first line.
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`training did not start: ${out}${err}`)), 120_000);
      const poll = setInterval(() => {
        if (existsSync(stepLog) && readFileSync(stepLog, 'utf8').includes('\n')) {
          clearInterval(poll);
          clearTimeout(t);
          res();
        }
      }, 20);
      void exited.then(() => {
        clearInterval(poll);
        clearTimeout(t);
        rej(new Error(`training ended before its first step was logged: ${out}${err}`));
      });
    });
    child.kill('SIGINT');
    const code = await exited;
    assert.equal(code, 130, out + err);
    assert.match(err, /train: SIGINT: stopping after this step and writing a checkpoint/);
    assert.match(err, /continue with: npm run train -- --task stsb --run-dir .*interrupted --resume/);
    assert.ok(readdirSync(join(runDir, 'checkpoints')).some((d) => /^step-\d+$/.test(d)), 'no checkpoint was written');
    // No training process left behind, reparented to init.
    const left = spawnSync('pgrep', ['-f', `--run-dir ${runDir}`], { encoding: 'utf8' }).stdout.trim();
    assert.equal(left, '', `still running: ${left}`);
    const resumed = npm(['train', '--', '--task', 'stsb', '--run-dir', runDir, '--checkpoint-every', '1', '--resume', '--step-log', stepLog]);
    assert.equal(resumed.code, 0, resumed.err + resumed.out);
    assert.match(resumed.out, /train: 24 steps in .* \(resumed from .*step-\d+\)/);
    // The step log holds one JSON line per step, across the interruption: 24 distinct steps in all.
    const steps = readFileSync(stepLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { step: number; loss: number });
    assert.deepEqual([...new Set(steps.map((s) => s.step))].sort((a, b) => a - b), Array.from({ length: 24 }, (_, i) => i));
    assert.ok(steps.every((s) => Number.isFinite(s.loss)));
  });
});
