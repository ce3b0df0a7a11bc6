/**
 * npm run gpu-check: the one command a GPU host runs first (issue 35), so that a 15-minute device
 * window yields every measurement the project lacks. Five steps in order, each with its own time
 * budget, each failure isolated (the next step runs), each writing its part of one JSON and one
 * markdown summary (./gpu-check/report.ts) into --out:
 *
 *   1. build-tests  build the cuda addon, run the GPU test suites
 *   2. parity       golden parity on cuda: BERT, the LLaMA decoder, OPT; TF32 and fp32 matmuls
 *   3. memory       device peak (in use, reserved) per configuration beside the shape-only prediction
 *   4. speed        tokens/s per configuration, PyTorch beside it (eager, SDPA), host-dispatch share
 *   5. rehearsal    a few optimiser steps of one rehearsal row per notebook, beside its projection
 *
 * --dry-run runs every step here on the cpu backend at tiny shapes (the build is left to
 * `npm run build:cuda -- --check`), in under 3 minutes: CI runs it so the script cannot rot
 * between GPU visits. The device route (what to carry, the command, what comes back): docs/gpu.md.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initBackend } from '../lib/backend/index.js';
import { locateDataDir, locateSharedDir } from '../lib/config.js';
import { collectProvenance } from '../lib/report/provenance.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';
import { OUT_FILES, STEP_NAMES, STEP_TITLES, stepStatus, writeReport, type GpuCheckReport, type StepName, type StepResult } from './gpu-check/report.js';
import { DEFAULT_BUDGET_S, STEPS, log, type CheckContext } from './gpu-check/steps.js';

const OPTIONS = {
  out: { type: 'string', value: '<dir>', help: 'where gpu-check.json, gpu-check.md and logs/<step>.txt go (at most 8 files, two folders deep)', default: '$OUT, else results/gpu-check' },
  'dry-run': { type: 'boolean', help: 'every step on the cpu backend at tiny shapes, no build, no GPU (CI; under 3 minutes)' },
  steps: { type: 'string', value: '<names>', help: `comma-separated steps to run, in the fixed order: ${STEP_NAMES.join(', ')}`, default: 'all' },
  'budget-s': { type: 'string', value: '<step>=<s>,...', help: `seconds per step, e.g. memory=120,speed=90; a step still running at its budget is stopped and the next one runs`, default: `GPU ${STEP_NAMES.map((s) => `${s}=${DEFAULT_BUDGET_S.gpu[s]}`).join(',')}; dry run ${STEP_NAMES.map((s) => `${s}=${DEFAULT_BUDGET_S.dry[s]}`).join(',')}` },
  backend: { type: 'string', value: '<name>', help: 'backend of the parity, memory, speed and rehearsal steps', default: 'cuda; cpu with --dry-run' },
  'golden-root': { type: 'string', value: '<dir>', help: 'folder holding the golden sets bert-tiny-seed1234, llama2c-stories260K, opt-tiny-seed7', default: '<shared>/golden, else golden/ in the project root (the bundle)' },
  data: { type: 'string', value: '<dir>', help: "data root for the parity suites that read data", default: 'ANGLE_DATA_DIR, else <shared>/data' },
  'rehearsal-summary': { type: 'string', value: '<file>', help: 'the rehearsal summary whose rows the rehearsal step runs', default: 'results/rehearsal/summary.json' },
  'rehearsal-steps': { type: 'string', value: '<n>', help: 'optimiser steps of each rehearsal row on the GPU', default: '3' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = 'usage: npm run gpu-check -- [--dry-run] [--out <dir>] [--steps <names>] [--budget-s <step>=<s>,...] [--backend <name>] [--golden-root <dir>] [--data <dir>] [--rehearsal-summary <file>] [--rehearsal-steps <n>]';
const FOOTER = `On a GPU host without Node: bash bundle/gpu-host.sh "$OUT" --gpu-check (docs/gpu.md, "The device route").
Exit codes: 0 every step ok (flagged figures included), 1 a step failed or ran out of budget, 2 usage error.`;

const here = dirname(fileURLToPath(import.meta.url));
/** The project root: a checkout, or the bundle's app/ (compiled JavaScript). */
const root = dirname(here);
const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';

function parseBudgets(text: string | undefined, dryRun: boolean): Record<StepName, number> {
  const budgets = { ...DEFAULT_BUDGET_S[dryRun ? 'dry' : 'gpu'] };
  if (!text) return budgets;
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z-]+)=(\d+(?:\.\d+)?)$/.exec(part);
    if (!m) throw new UsageError(`--budget-s ${part}: expected <step>=<seconds>, e.g. memory=120`);
    if (!(STEP_NAMES as readonly string[]).includes(m[1])) throw new UsageError(`--budget-s ${part}: unknown step '${m[1]}' (steps: ${STEP_NAMES.join(', ')})`);
    budgets[m[1] as StepName] = Number(m[2]);
  }
  return budgets;
}

function parseSteps(text: string | undefined): StepName[] {
  if (!text || text === 'all') return [...STEP_NAMES];
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!(STEP_NAMES as readonly string[]).includes(n)) throw new UsageError(`--steps: unknown step '${n}' (steps: ${STEP_NAMES.join(', ')})`);
  return STEP_NAMES.filter((s) => names.includes(s));
}

async function main(): Promise<number> {
  const { values } = parseOptions(OPTIONS, process.argv.slice(2));
  if (values.help) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  const dryRun = values['dry-run'] === true;
  const budgets = validateArguments(() => parseBudgets(values['budget-s'], dryRun));
  const steps = validateArguments(() => parseSteps(values.steps));
  const rehearsalSteps = Number(values['rehearsal-steps'] ?? '3');
  if (!Number.isInteger(rehearsalSteps) || rehearsalSteps < 1) throw new UsageError(`--rehearsal-steps ${values['rehearsal-steps']}: expected a whole number >= 1`);
  const backend = values.backend ?? (dryRun ? 'cpu' : 'cuda');
  const out = resolve(values.out ?? process.env.OUT ?? join(root, 'results', 'gpu-check'));
  const shared = locateSharedDir();
  const goldenRoot = values['golden-root'] ? resolve(values['golden-root']) : shared ? join(shared.path, 'golden') : join(root, 'golden');
  const dataDir = locateDataDir(values.data)?.path ?? join(root, 'data');
  const rehearsalSummary = resolve(values['rehearsal-summary'] ?? join(root, 'results', 'rehearsal', 'summary.json'));

  // A fresh layout: what comes back is this run's files only.
  rmSync(join(out, OUT_FILES.logs), { recursive: true, force: true });
  rmSync(join(out, OUT_FILES.json), { force: true });
  rmSync(join(out, OUT_FILES.markdown), { force: true });
  mkdirSync(join(out, OUT_FILES.logs), { recursive: true });

  // The dry run measures in this process (cpu: tfjs's accounting is per call); on the GPU each
  // configuration runs in a process of its own, and this one never touches the device.
  const isolate = !dryRun;
  if (!isolate) await initBackend(backend, { quiet: true });

  const report: GpuCheckReport = {
    tool: 'gpu-check',
    version: 1,
    date: new Date().toISOString(),
    dryRun,
    backend,
    provenance: collectProvenance() as unknown as Record<string, unknown>,
    steps: [],
    flagged: [],
  };
  console.log(`gpu-check${dryRun ? ' --dry-run' : ''}: steps ${steps.join(', ')} on ${backend}; output ${out}`);
  for (const name of steps) {
    const logRel = `${OUT_FILES.logs}/${name}.txt`;
    const ctx: CheckContext = {
      dryRun,
      backend,
      root,
      ext,
      node: [process.execPath, ...process.execArgv],
      logFile: join(out, logRel),
      deadline: Date.now() + budgets[name] * 1000,
      goldenRoot,
      dataDir,
      rehearsalSummary,
      isolate,
      rehearsalSteps,
    };
    log(ctx, `== ${STEP_TITLES[name]} (budget ${budgets[name]} s)`);
    const t0 = Date.now();
    let result: StepResult;
    try {
      const items = await STEPS[name](ctx);
      result = { step: name, title: STEP_TITLES[name], status: stepStatus(items), seconds: (Date.now() - t0) / 1000, budgetS: budgets[name], log: logRel, items };
    } catch (e) {
      const error = (e as Error).message.split('\n')[0];
      log(ctx, `error: ${(e as Error).stack ?? error}`);
      result = { step: name, title: STEP_TITLES[name], status: 'failed', seconds: (Date.now() - t0) / 1000, budgetS: budgets[name], log: logRel, items: [], error };
    }
    log(ctx, `== ${name}: ${result.status} (${result.seconds.toFixed(1)} s)`);
    report.steps.push(result);
    report.flagged = report.steps.flatMap((s) => s.items.filter((i) => i.status === 'off').map((i) => `${s.step}: ${i.name}: ${i.detail}`));
    // Written after every step: a host that dies mid-run still leaves the steps so far.
    writeReport(out, report);
  }
  const bad = report.steps.filter((s) => s.status !== 'ok');
  console.log(`gpu-check: ${report.steps.length - bad.length} of ${report.steps.length} steps ok${bad.length ? `; not ok: ${bad.map((s) => `${s.step} (${s.status})`).join(', ')}` : ''}; ${report.flagged.length} figure(s) flagged; ${join(out, OUT_FILES.markdown)}`);
  return bad.length ? EXIT.failed : EXIT.ok;
}

await runCommand('gpu-check', main);
