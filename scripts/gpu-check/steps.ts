/**
 * The five steps of the GPU check, in the issue's order. Each gets a deadline (its `--budget-s`)
 * and a log file; each returns its items and never throws (scripts/gpu-check.ts records an error
 * that escapes as the step's failure and goes on to the next step).
 *
 * On the GPU (`isolate`), every configuration of the memory, speed and rehearsal steps runs in a
 * fresh process (./one-config.ts), so the allocator's peak starts at zero for each; on the dry run
 * they run in this process on the cpu backend, where tfjs's accounting is per call.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepItem, StepName } from './report.js';

export interface CheckContext {
  dryRun: boolean;
  /** The backend the configurations run on: cuda, or cpu on the dry run. */
  backend: string;
  /** The project root (a checkout, or the bundle's app/), and the extension its scripts have there. */
  root: string;
  ext: 'ts' | 'js';
  /** node and its flags (tsx's loader in a checkout). */
  node: string[];
  /** Absolute path of this step's log. */
  logFile: string;
  /** Epoch ms by which the step must end. */
  deadline: number;
  goldenRoot?: string;
  dataDir?: string;
  rehearsalSummary: string;
  /** One configuration per process (cuda: the allocator's peak is per process). */
  isolate: boolean;
  /** Optimiser steps of each rehearsal row. */
  rehearsalSteps: number;
}

export function log(ctx: CheckContext, line: string): void {
  appendFileSync(ctx.logFile, `${line}\n`);
  console.log(line);
}

const remainingMs = (ctx: CheckContext) => ctx.deadline - Date.now();

/** Runs a command with the time left to the step, its output into the log. */
export function runLogged(ctx: CheckContext, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ rc: number | null; timedOut: boolean; output: string }> {
  const limit = remainingMs(ctx);
  log(ctx, `$ ${[cmd, ...args].join(' ')}${Object.keys(env).length ? `  (${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')})` : ''}`);
  if (limit <= 0) return Promise.resolve({ rc: null, timedOut: true, output: '' });
  return new Promise((resolve) => {
    // Not NODE_TEST_CONTEXT: under a test runner, a child `node --test` would report to it instead of printing its totals.
    const { NODE_TEST_CONTEXT: _t, ...inherited } = process.env;
    const child = spawn(cmd, args, { cwd: ctx.root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (b: Buffer) => {
      output += b.toString();
      appendFileSync(ctx.logFile, b);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, limit);
    child.on('close', (rc) => {
      clearTimeout(timer);
      if (timedOut) log(ctx, `(timed out: the step's budget ran out)`);
      resolve({ rc, timedOut, output });
    });
  });
}

function script(ctx: CheckContext, path: string): string {
  return `${path}.${ctx.ext}`;
}

// ---- 1. build and GPU tests ----------------------------------------------------------------------

async function buildAndTests(ctx: CheckContext): Promise<StepItem[]> {
  const items: StepItem[] = [];
  if (ctx.dryRun) {
    items.push({ name: 'build the cuda addon', status: 'skipped', detail: 'dry run: the compile of every kernel is checked by npm run build:cuda -- --check (CI)' });
  } else {
    const b = await runLogged(ctx, ctx.node[0], ['native/build.mjs']);
    items.push({ name: 'build the cuda addon', status: b.timedOut ? 'timed-out' : b.rc === 0 ? 'ok' : 'failed', detail: b.rc === 0 ? (b.output.trim().split('\n').pop() ?? '') : `exit ${b.rc}: ${b.output.trim().split('\n').slice(-1)[0] ?? ''}` });
    if (b.rc !== 0) return items;
  }
  // The GPU suites; the emulated-addon ones test the TypeScript layer without a GPU (npm test runs them).
  const files = readdirSync(join(ctx.root, 'test'))
    .filter((f) => f.startsWith('cuda-') && f.endsWith(`.test.${ctx.ext}`) && !f.startsWith('cuda-emulated'))
    .filter((f) => !ctx.dryRun || f === script(ctx, 'cuda-kernels.test') || f === script(ctx, 'cuda-training.test'))
    .map((f) => `test/${f}`);
  const t = await runLogged(ctx, ctx.node[0], [...ctx.node.slice(1), '--test', '--test-reporter=spec', '--test-concurrency=1', ...files]);
  // The spec reporter's totals: '# pass 3' on a terminal-less TAP stream, 'ℹ pass 3' from spec.
  const count = (k: string) => Number(t.output.split('\n').map((l) => new RegExp(`^(?:#|ℹ) ${k} (\\d+)`).exec(l)?.[1]).filter((v) => v !== undefined).pop() ?? NaN);
  const [pass, fail, skipped] = [count('pass'), count('fail'), count('skipped')];
  const detail = `${files.length} files: ${pass} passed, ${fail} failed, ${skipped} skipped`;
  let status: StepItem['status'] = t.timedOut ? 'timed-out' : t.rc === 0 && fail === 0 ? 'ok' : 'failed';
  // On the GPU a skipped GPU test means the device or the addon did not answer.
  if (!ctx.dryRun && status === 'ok' && skipped > 0) status = 'failed';
  items.push({ name: 'GPU tests', status, detail: ctx.dryRun ? `${detail} (no GPU here: they skip with the loader's reason)` : detail, values: { files, pass, fail, skipped } });
  return items;
}

// ---- 2. golden parity ----------------------------------------------------------------------------

/**
 * The golden sets per model family. The dry run runs BERT's forward suite only: the decoder suites
 * take 40 s or more each on a 2-core CPU, and npm test runs them on cpu (test/parity-golden.test.ts).
 */
const PARITY_SETS: ReadonlyArray<{ suite: string; set: string; dry: 'forward' | 'skip' }> = [
  { suite: 'BERT', set: 'bert-tiny-seed1234', dry: 'forward' },
  { suite: 'LLaMA decoder', set: 'llama2c-stories260K', dry: 'skip' },
  { suite: 'OPT', set: 'opt-tiny-seed7', dry: 'skip' },
];

async function parity(ctx: CheckContext): Promise<StepItem[]> {
  const items: StepItem[] = [];
  const precisions = ctx.dryRun ? ['fp32'] : ['fp32', 'tf32'];
  for (const p of PARITY_SETS) {
    const dir = ctx.goldenRoot ? join(ctx.goldenRoot, p.set) : undefined;
    for (const precision of precisions) {
      const name = `${p.suite} (${p.set}) ${ctx.dryRun ? `on ${ctx.backend}` : precision}`;
      if (ctx.dryRun && p.dry === 'skip') {
        items.push({ name, status: 'skipped', detail: 'dry run: the decoder suite takes 40 s or more on this CPU; npm test runs it on cpu (test/parity-golden.test.ts), gpu-check on cuda' });
        continue;
      }
      if (!dir || !existsSync(dir)) {
        items.push({ name, status: 'skipped', detail: `golden set not found${ctx.goldenRoot ? ` under ${ctx.goldenRoot}` : ''} (--golden-root)` });
        continue;
      }
      const args = [...ctx.node.slice(1), script(ctx, 'scripts/parity'), '--golden', dir, '--backend', ctx.backend];
      if (ctx.dataDir) args.push('--data', ctx.dataDir);
      if (ctx.dryRun) args.push('--only', p.dry);
      const r = await runLogged(ctx, ctx.node[0], args, ctx.backend === 'cuda' ? { ANGLE_CUDA_MATMUL: precision } : {});
      const m = /^parity: (\d+) passed, (\d+) failed/m.exec(r.output);
      const detail = m ? `${m[1]} passed, ${m[2]} failed${ctx.dryRun ? ` (dry run: the ${p.dry} suite only)` : ''}` : `exit ${r.rc}: ${r.output.trim().split('\n').pop() ?? ''}`;
      let status: StepItem['status'] = r.timedOut ? 'timed-out' : r.rc === 0 ? 'ok' : 'failed';
      // TF32 rounds matmul inputs to 10 bits: beyond the golden fp32 tolerance is expected, reported.
      if (status === 'failed' && precision === 'tf32' && m) status = 'off';
      items.push({ name, status, detail: status === 'off' ? `${detail} (TF32 rounding beyond the fp32 tolerances: reported, not failed)` : detail, values: m ? { passed: Number(m[1]), failed: Number(m[2]) } : undefined });
    }
  }
  // bf16 (issue 39): BERT's golden training runs replayed with cuBLASLt on bf16 inputs, fp32
  // accumulation, against the 16-bit tolerance the CPU emulation set (lib/parity/train.ts). Not in
  // the dry run: the emulation replays three runs (minutes on a 2-core CPU; test/bf16-parity runs one).
  const bert = ctx.goldenRoot ? join(ctx.goldenRoot, PARITY_SETS[0]!.set) : undefined;
  if (!ctx.dryRun && bert && existsSync(bert)) {
    const args = [...ctx.node.slice(1), script(ctx, 'scripts/parity'), '--golden', bert, '--backend', ctx.backend, '--only', 'train', '--train-precision', 'bf16'];
    if (ctx.dataDir) args.push('--data', ctx.dataDir);
    const r = await runLogged(ctx, ctx.node[0], args, {});
    const m = /^parity: (\d+) passed, (\d+) failed/m.exec(r.output);
    items.push({
      name: `BERT (${PARITY_SETS[0]!.set}) train bf16`,
      status: r.timedOut ? 'timed-out' : r.rc === 0 ? 'ok' : 'failed',
      detail: m ? `${m[1]} passed, ${m[2]} failed (16-bit tolerance)` : `exit ${r.rc}: ${r.output.trim().split('\n').pop() ?? ''}`,
      values: m ? { passed: Number(m[1]), failed: Number(m[2]) } : undefined,
    });
  }
  return items;
}

// ---- 3-5. configurations -------------------------------------------------------------------------

/** Runs configuration `index` of `step` in a fresh process (./one-config.ts), or here. */
async function runConfig(ctx: CheckContext, step: 'memory' | 'speed' | 'rehearsal', index: number): Promise<{ name: string; result?: Record<string, unknown>; error?: string; timedOut?: boolean }> {
  const { runOneConfig } = await import('./one-config.js');
  if (!ctx.isolate) {
    try {
      return await runOneConfig({ step, index, tiny: ctx.dryRun, rehearsalSummary: ctx.rehearsalSummary, rehearsalSteps: ctx.rehearsalSteps });
    } catch (e) {
      return { name: `#${index}`, error: (e as Error).message.split('\n')[0] };
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'gpu-check-'));
  const file = join(dir, 'result.json');
  try {
    const r = await runLogged(ctx, ctx.node[0], [...ctx.node.slice(1), script(ctx, 'scripts/gpu-check/one-config'), '--step', step, '--index', String(index), '--backend', ctx.backend, '--rehearsal-summary', ctx.rehearsalSummary, '--rehearsal-steps', String(ctx.rehearsalSteps), '--result', file]);
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
    return { name: `#${index}`, error: r.timedOut ? 'timed out' : `exit ${r.rc}: ${r.output.trim().split('\n').pop() ?? ''}`, timedOut: r.timedOut };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const GiB = 2 ** 30;
const gib = (b: unknown) => `${(Number(b) / GiB).toFixed(2)} GiB`;
const mib = (b: unknown) => `${(Number(b) / 2 ** 20).toFixed(1)} MiB`;

/**
 * Every configuration of a step in turn while its budget lasts. `sameAs(i)` names an earlier
 * configuration that configuration i is identical to at the dry run's size (the three BERT shapes
 * all shrink to 2 × 16; cpu has no TF32): the dry run skips it and says so.
 */
async function configSteps(ctx: CheckContext, step: 'memory' | 'speed' | 'rehearsal', count: number, describe: (r: Record<string, unknown>) => { status: StepItem['status']; detail: string }, sameAs?: (i: number) => string | undefined, names?: readonly string[]): Promise<StepItem[]> {
  const items: StepItem[] = [];
  for (let i = 0; i < count; i++) {
    const same = ctx.dryRun ? sameAs?.(i) : undefined;
    if (same) {
      items.push({ name: names?.[i] ?? `configuration ${i + 1} of ${count}`, status: 'skipped', detail: `dry run: the same at tiny shapes on ${ctx.backend} as ${same}` });
      continue;
    }
    if (remainingMs(ctx) <= 0) {
      items.push({ name: names?.[i] ?? `configuration ${i + 1} of ${count}`, status: 'timed-out', detail: 'not started: the step\'s budget ran out' });
      continue;
    }
    const t0 = Date.now();
    const r = await runConfig(ctx, step, i);
    const seconds = (Date.now() - t0) / 1000;
    if (r.error || !r.result) {
      log(ctx, `${r.name}: ${r.error}`);
      items.push({ name: r.name, status: r.timedOut ? 'timed-out' : 'failed', detail: r.error ?? 'no result' });
      continue;
    }
    const d = describe(r.result);
    log(ctx, `${r.name}: ${d.status} — ${d.detail} (${seconds.toFixed(1)} s)`);
    items.push({ name: r.name, ...d, values: r.result });
  }
  return items;
}

/** For each configuration, the first earlier one it equals once shrunk (name and precision aside). */
async function tinyDuplicates(list: ReadonlyArray<import('./train-config.js').TrainConfig>): Promise<(i: number) => string | undefined> {
  const { tiny } = await import('./train-config.js');
  const keys = list.map((c) => {
    const { name: _n, precision: _p, ...rest } = tiny(c);
    return JSON.stringify(rest);
  });
  return (i) => {
    const j = keys.indexOf(keys[i]);
    return j < i ? list[j].name : undefined;
  };
}

async function memory(ctx: CheckContext): Promise<StepItem[]> {
  const { memoryConfigs } = await import('./train-config.js');
  const sameAs = await tinyDuplicates(memoryConfigs());
  return configSteps(ctx, 'memory', memoryConfigs().length, (r) => {
    const ratio = Number(r.ratio);
    const off = Math.abs(ratio - 1) > 0.1;
    const fmt = ctx.dryRun ? mib : gib;
    return {
      status: off ? 'off' : 'ok',
      detail: `measured on ${r.backend} ${fmt(r.measuredPeakBytes)}${r.reservedBytes !== undefined ? ` (reserved ${fmt(r.reservedBytes)})` : ''}, predicted by ${r.predictedBy} ${fmt(r.predictedPeakBytes)}: ratio ${ratio.toFixed(3)}${off ? ', off by more than 10%' : ''}`,
    };
  }, sameAs, memoryConfigs().map((c) => c.name));
}

function hasTorchCuda(): boolean {
  const r = spawnSync(process.env.PYTHON ?? 'python3', ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)'], { encoding: 'utf8', timeout: 60_000 });
  return r.status === 0;
}

/** How a configuration's steps ran through step graphs (lib/train/step-graphs.ts StepGraphStats), for the speed line. */
function stepGraphsDetail(st: unknown): string {
  if (!st) return '';
  const g = st as { eager: number; captured: number; replayed: number; refused: Record<string, string>; kernels: Record<string, number>; unsupported?: string };
  const why = g.unsupported ?? Object.values(g.refused)[0];
  const kernels = Object.values(g.kernels)[0];
  return `; step graphs: ${g.eager} eager, ${g.captured} captured, ${g.replayed} replayed${kernels ? ` (${kernels} kernels a launch)` : ''}${why ? ` — eager because ${why}` : ''}`;
}

async function speed(ctx: CheckContext): Promise<StepItem[]> {
  const { speedConfigs } = await import('./train-config.js');
  const sameAs = await tinyDuplicates(speedConfigs());
  const items = await configSteps(ctx, 'speed', speedConfigs().length, (r) => ({
    status: 'ok',
    detail: `${Math.round(Number(r.tokensPerSecond)).toLocaleString('en-US')} tokens/s on ${r.backend}${r.precision ? ` ${r.precision}` : ''} (${(Number(r.secondsPerStep) * 1000).toFixed(1)} ms/step, ${r.steps} steps); host dispatch ${(Number(r.dispatchMsPerStep)).toFixed(1)} ms/step = ${(Number(r.dispatchShare) * 100).toFixed(0)}% of the step, ${r.kernelsPerStep} kernels${stepGraphsDetail(r.stepGraphs)}`,
  }), sameAs, speedConfigs().map((c) => c.name));
  if (!ctx.dryRun && ctx.backend === 'cuda') items.push(...(await attentionBenchmark(ctx)));
  // PyTorch's peer of the BERT-base configurations, eager and SDPA, on the same GPU.
  if (ctx.backend !== 'cuda' || !hasTorchCuda()) {
    items.push({ name: 'PyTorch (bench/torch_train_step.py)', status: 'skipped', detail: ctx.backend !== 'cuda' ? 'needs torch with a CUDA device' : 'python3 -c "import torch" with a CUDA device fails here' });
    return items;
  }
  const shapes = [...new Set(speedConfigs().filter((c) => c.model === 'google-bert/bert-base-uncased').map((c) => `${c.examples}x${c.length}`))].join(',');
  for (const attention of ['eager', 'sdpa']) {
    const dir = mkdtempSync(join(tmpdir(), 'gpu-check-torch-'));
    const file = join(dir, 'torch.json');
    const r = await runLogged(ctx, process.env.PYTHON ?? 'python3', ['bench/torch_train_step.py', '--configs', shapes, '--precisions', 'fp32,tf32,bf16', '--steps', '10', '--warmup', '2', '--attention', attention, '--out', file]);
    if (!existsSync(file)) {
      items.push({ name: `PyTorch ${attention}`, status: r.timedOut ? 'timed-out' : 'failed', detail: `exit ${r.rc}: ${r.output.trim().split('\n').pop() ?? ''}` });
    } else {
      const t = JSON.parse(readFileSync(file, 'utf8')) as { model: string; attention: string; rows: Array<{ config: string; precision: string; tokensPerSecond: number; maxMemoryAllocated?: number }> };
      for (const row of t.rows) {
        items.push({ name: `PyTorch ${attention} bert-base ${row.config} ${row.precision}`, status: 'ok', detail: `${Math.round(row.tokensPerSecond).toLocaleString('en-US')} tokens/s, torch.cuda.max_memory_allocated ${gib(row.maxMemoryAllocated)} (${t.model}, attention ${t.attention})`, values: { ...row, model: t.model, attention: t.attention } });
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return items;
}

/**
 * The fused attention kernel's standalone benchmark (native/dev/attention.cu, llm.c's habit): built
 * with `native/build.mjs --dev`, it checks forward and backward against a naive kernel (max relative
 * difference < 1e-4, else exit 1) and times both at BERT-base and LLaMA-7B shapes; PyTorch's SDPA on
 * the same shapes beside it (bench/torch_attention_sdpa.py, fp32 and bf16) where torch has CUDA.
 */
async function attentionBenchmark(ctx: CheckContext): Promise<StepItem[]> {
  const items: StepItem[] = [];
  const b = await runLogged(ctx, ctx.node[0], ['native/build.mjs', '--dev']);
  const bin = join(ctx.root, 'build', 'cuda', 'dev', 'attention');
  if (b.rc !== 0 || !existsSync(bin)) {
    items.push({ name: 'fused attention benchmark (native/dev/attention.cu)', status: b.timedOut ? 'timed-out' : 'failed', detail: `build --dev: exit ${b.rc}: ${b.output.trim().split('\n').pop() ?? ''}` });
    return items;
  }
  const jsonRows = (out: string) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const r = await runLogged(ctx, bin, ['--json', '--iters', '20']);
  const rows = jsonRows(r.output);
  if (rows.length === 0) items.push({ name: 'fused attention benchmark', status: r.timedOut ? 'timed-out' : 'failed', detail: `exit ${r.rc}: ${r.output.trim().split('\n').pop() ?? ''}` });
  for (const row of rows) {
    const d = row.maxRelDiff as Record<string, number>;
    items.push({
      name: `fused attention ${String(row.shape)}`,
      status: row.pass ? 'ok' : 'failed',
      detail: `fwd ${Number(row.fusedForwardMs).toFixed(3)} ms (${row.forwardTflops} TFLOP/s), fwd+bwd ${Number(row.fusedForwardBackwardMs).toFixed(3)} ms (${row.forwardBackwardTflops} TFLOP/s); naive ${Number(row.naiveForwardBackwardMs).toFixed(3)} ms; max rel diff out ${d.out} dq ${d.dq} dk ${d.dk} dv ${d.dv} (tol ${row.tolerance})`,
      values: row,
    });
  }
  if (!hasTorchCuda()) return items;
  for (const dtype of ['fp32', 'bf16']) {
    const t = await runLogged(ctx, process.env.PYTHON ?? 'python3', ['bench/torch_attention_sdpa.py', '--json', '--iters', '20', '--dtype', dtype]);
    const trows = jsonRows(t.output);
    if (trows.length === 0) items.push({ name: `PyTorch SDPA ${dtype}`, status: t.timedOut ? 'timed-out' : 'failed', detail: `exit ${t.rc}: ${t.output.trim().split('\n').pop() ?? ''}` });
    for (const row of trows) {
      items.push({ name: `PyTorch SDPA ${String(row.shape)} ${dtype}`, status: 'ok', detail: `fwd ${row.forwardMs} ms (${row.forwardTflops} TFLOP/s), fwd+bwd ${row.forwardBackwardMs} ms (${row.forwardBackwardTflops} TFLOP/s), extra peak ${gib(Number(row.peakExtraBytes))} (torch ${String(row.torch)})`, values: row });
    }
  }
  return items;
}

async function rehearsal(ctx: CheckContext): Promise<StepItem[]> {
  const { rehearsalRowsToRun } = await import('./one-config.js');
  let count: number;
  try {
    count = rehearsalRowsToRun(ctx.rehearsalSummary).length;
  } catch (e) {
    return [{ name: 'rehearsal summary', status: 'failed', detail: (e as Error).message }];
  }
  const fmt = ctx.dryRun ? mib : gib;
  return configSteps(ctx, 'rehearsal', count, (r) => ({
    status: 'ok',
    detail: `${Number(r.stepSeconds).toFixed(2)} s/step on ${r.backend}, peak ${fmt(r.measuredPeakBytes)}${r.measuredPeakKind ? ` (${r.measuredPeakKind})` : ''}; the row projects ${Number(r.projectedStepSeconds).toFixed(2)} s/step and peaks ${fmt(r.projectedStepPeakBytes)} (step) / ${fmt(r.projectedLoadPeakBytes)} (loading) on the H100${ctx.dryRun ? ' (dry run: the row shrunk to 2 layers of width 64, 2 examples × 16 tokens; the projection is the full row\'s)' : ''}`,
  }));
}

export const STEPS: Record<StepName, (ctx: CheckContext) => Promise<StepItem[]>> = {
  'build-tests': buildAndTests,
  parity,
  memory,
  speed,
  rehearsal,
};

/** Default budgets in seconds: on the GPU the five fit 8 minutes; the dry run, 3. */
export const DEFAULT_BUDGET_S: Record<'gpu' | 'dry', Record<StepName, number>> = {
  gpu: { 'build-tests': 100, parity: 100, memory: 90, speed: 150, rehearsal: 90 },
  dry: { 'build-tests': 25, parity: 35, memory: 50, speed: 25, rehearsal: 45 },
};
