/**
 * The backend choice `auto` (lib/backend/auto.ts) and the paper preset that selects it (issue 26,
 * C7): the preset's variables name `auto`; `auto` without a usable cuda addon starts a CPU backend,
 * says why in its one line and never throws; the notebooks' setup() then warns, in one line, that
 * training BERT-base there is infeasible and what to do. The smoke preset keeps wasm.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AUTO_ORDER, startAuto } from '../lib/backend/auto.js';
import { BACKEND_CHOICES, initBackend, tf } from '../lib/backend/index.js';
import { presetByName, presetVariables } from '../lib/experiments/presets.js';
import { CPU_BERT_BASE_TRAIN_STEP, H100_CUDA_TOKENS_PER_SECOND, paperBackendWarning } from '../lib/notebook/paper-backend-warning.js';
import { setup } from '../lib/notebook/setup.js';
import { UnavailableError } from '../lib/util/errors.js';
import { notebookEnvironment } from '../scripts/notebooks/environment.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'backend-auto-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `f` with ANGLE_CUDA_ADDON set to `path` (the addon `auto` tries first). */
async function withAddon<T>(path: string, f: () => Promise<T>): Promise<T> {
  const before = process.env.ANGLE_CUDA_ADDON;
  process.env.ANGLE_CUDA_ADDON = path;
  try {
    return await f();
  } finally {
    if (before === undefined) delete process.env.ANGLE_CUDA_ADDON;
    else process.env.ANGLE_CUDA_ADDON = before;
  }
}

/** Calls `f` with console.log/console.warn captured. */
async function captured<T>(f: () => Promise<T>): Promise<{ value: T; log: string[]; warn: string[] }> {
  const log: string[] = [];
  const warn: string[] = [];
  const [l, w] = [console.log, console.warn];
  console.log = (...a: unknown[]) => void log.push(a.join(' '));
  console.warn = (...a: unknown[]) => void warn.push(a.join(' '));
  try {
    return { value: await f(), log, warn };
  } finally {
    [console.log, console.warn] = [l, w];
  }
}

describe('the paper preset selects auto', () => {
  test("its variables set ANGLE_BACKEND=auto; smoke keeps wasm; a backend the user set wins", () => {
    assert.equal(presetVariables('paper').ANGLE_BACKEND, 'auto');
    assert.match(presetByName('paper').sets.ANGLE_BACKEND ?? '', /^auto\b/);
    assert.equal(notebookEnvironment({ preset: 'paper' }, ROOT, {}).env.ANGLE_BACKEND, 'auto');
    assert.equal(notebookEnvironment({ preset: 'paper' }, ROOT, { ANGLE_BACKEND: 'cpu' }).env.ANGLE_BACKEND, 'cpu');
    const shared = join(ROOT, '..', 'shared');
    try {
      assert.equal(presetVariables('smoke', shared).ANGLE_BACKEND, 'wasm');
    } catch (e) {
      // Without the shared folder the smoke preset cannot be built; its backend is then checked by the table.
      assert.match((e as Error).message, /shared|golden/);
      assert.equal(presetByName('smoke').sets.ANGLE_BACKEND, 'wasm');
    }
  });

  test('auto is a choice initBackend accepts, listed in unknown-name errors', async () => {
    assert.ok(BACKEND_CHOICES.includes('auto'));
    await assert.rejects(initBackend('gpu', { quiet: true }), /expected one of .*\bauto\b/);
  });
});

describe('auto on a machine without a usable cuda addon', () => {
  test('no addon file: a CPU backend, one line saying which and why, no error', async () => {
    const lines: string[] = [];
    const info = await withAddon(join(tmp, 'missing', 'angle_cuda.node'), () => initBackend('auto', { log: (l) => lines.push(l) }));
    assert.ok(info.name === 'wasm' || info.name === 'cpu', info.name);
    assert.equal(tf.getBackend(), info.name);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, new RegExp(`^backend: ${info.name} on .*; auto: cuda unavailable \\(the native addon .*missing/angle_cuda\\.node is not built: \`npm run build:cuda\``));
    assert.match(info.auto ?? '', /cuda unavailable/);
    // Asked again: the same backend, without starting anything.
    assert.equal(await initBackend('auto', { quiet: true }), info);
  });

  test('an addon that does not load (not a shared library): the loader reason, then a CPU backend', async () => {
    await initBackend('cpu', { quiet: true }); // leave auto's cached choice
    const bogus = join(tmp, 'angle_cuda.node');
    writeFileSync(bogus, 'not an ELF file');
    const lines: string[] = [];
    const info = await withAddon(bogus, () => initBackend('auto', { log: (l) => lines.push(l) }));
    assert.ok(info.name === 'wasm' || info.name === 'cpu', info.name);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /; auto: cuda unavailable \(loading .*angle_cuda\.node failed/);
  });

  test('the order: cuda when it starts, else wasm, else cpu; only a failing cpu throws', async () => {
    assert.deepEqual(AUTO_ORDER, ['cuda', 'wasm', 'cpu']);
    const existing = fileURLToPath(import.meta.url); // any file: the addon "is built"
    const starts = (failing: string[]) => async (name: string) => {
      if (failing.includes(name)) throw name === 'cuda' ? new UnavailableError(`backend 'cuda' is unavailable: no usable CUDA device (no GPU)`) : new Error(`${name} broke`);
      return `${name} device`;
    };
    await withAddon(existing, async () => {
      assert.deepEqual(await startAuto(starts([])), { name: 'cuda', device: 'cuda device', why: 'the cuda addon loaded and a device answered' });
      assert.deepEqual(await startAuto(starts(['cuda'])), { name: 'wasm', device: 'wasm device', why: 'cuda unavailable (no usable CUDA device (no GPU))' });
      assert.deepEqual(await startAuto(starts(['cuda', 'wasm'])), {
        name: 'cpu',
        device: 'cpu device',
        why: 'cuda unavailable (no usable CUDA device (no GPU)); wasm unavailable (failed to start: wasm broke)',
      });
      await assert.rejects(startAuto(starts(['cuda', 'wasm', 'cpu'])), /cpu broke/);
    });
  });
});

describe("the paper preset's warning on a CPU backend", () => {
  test('setup() under paper with auto and no addon: the CPU backend and one warning line saying infeasible and what to do', async () => {
    await initBackend('cpu', { quiet: true });
    const env = { ANGLE_PRESET: 'paper', ANGLE_BACKEND: 'auto', ANGLE_MODEL: 'google-bert/bert-base-uncased' };
    const { value, warn, log } = await withAddon(join(tmp, 'missing.node'), () => captured(() => setup(env)));
    assert.ok(value.backend.name === 'wasm' || value.backend.name === 'cpu');
    assert.ok(log.some((l) => /^backend: .*; auto: cuda unavailable/.test(l)), log.join('\n'));
    assert.equal(warn.length, 1, warn.join('\n'));
    const line = warn[0]!;
    assert.ok(!line.includes('\n'), 'one line');
    assert.match(line, new RegExp(`the paper preset is running on the ${value.backend.name} backend, where training BERT-base is infeasible`));
    assert.match(line, /took at best \d+ s on (wasm|cpu) \([\d.]+ tokens\/s; measured on the 2-core development machine, bench\/results\/cpu-bert-base-train-step-/);
    assert.match(line, /npm run build:cuda/);
    assert.match(line, /docs\/gpu\.md/);
    assert.match(line, /--preset smoke/);
  });

  test('no warning for another preset or a device backend', async () => {
    assert.equal(paperBackendWarning('smoke', { name: 'wasm' }), undefined);
    assert.equal(paperBackendWarning(undefined, { name: 'cpu' }), undefined);
    assert.equal(paperBackendWarning('paper', { name: 'cuda' }), undefined);
    assert.match(paperBackendWarning('paper', { name: 'cpu' }) ?? '', /on the cpu backend, where training BERT-base is infeasible/);
  });

  test('the figures it quotes are the committed measurements (the fastest step of each backend)', () => {
    type Row = { backend: string; pairs: number; tokens: number; secondsPerStep: number };
    const rows = CPU_BERT_BASE_TRAIN_STEP.sources.flatMap((f) => (JSON.parse(readFileSync(join(ROOT, f), 'utf8')) as { rows: Row[] }).rows);
    for (const name of ['wasm', 'cpu'] as const) {
      const mine = rows.filter((r) => r.backend === name);
      assert.equal(mine.length, CPU_BERT_BASE_TRAIN_STEP.sources.length, `a ${name} row in each file`);
      for (const r of mine) assert.deepEqual([r.pairs, r.tokens], [CPU_BERT_BASE_TRAIN_STEP.pairs, CPU_BERT_BASE_TRAIN_STEP.tokens]);
      assert.equal(CPU_BERT_BASE_TRAIN_STEP.secondsPerStep[name], Number(Math.min(...mine.map((r) => r.secondsPerStep)).toFixed(2)));
    }
    const gpu = JSON.parse(readFileSync(join(ROOT, H100_CUDA_TOKENS_PER_SECOND.source), 'utf8')) as { rows?: { tokensPerSecond: number }[]; results?: { tokensPerSecond: number }[] };
    const ours = (gpu.rows ?? gpu.results ?? []).map((r) => Math.round(r.tokensPerSecond));
    assert.equal(Math.min(...ours), H100_CUDA_TOKENS_PER_SECOND.min);
    assert.equal(Math.max(...ours), H100_CUDA_TOKENS_PER_SECOND.max);
  });
});
