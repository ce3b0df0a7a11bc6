/**
 * npm run parity [-- --golden <dir>] [--data <dir>] [--backend cpu] [--engine tfjs|onnx] [--only forward,losses,...]
 *
 * Checks this implementation against golden reference outputs (their layout:
 * shared/golden/README.md): one line per check, then `parity: N passed, M failed`; exits 1 when a
 * check failed. <dir> is one golden set or a folder of sets; each set runs the suites of its kind
 * (lib/parity/suites.ts: encoder sets forward/losses/eval/train, decoder sets decoder, transfer
 * sets transfer). Without --golden it uses ANGLE_GOLDEN_DIR, else the shared folder's golden/
 * (every set there); the data root is --data, else ANGLE_DATA_DIR, else the shared folder's data/.
 * --engine onnx runs the forward and eval suites' forward passes on ONNX Runtime (the graph
 * exported from the model, lib/embed/engines) instead of the tfjs forward, the reference.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { initBackend } from '../lib/backend/index.js';
import { locateDataDir, locateGoldenDir } from '../lib/config.js';
import type { ParityCheck } from '../lib/parity/check.js';
import { parseEngineChoice } from '../lib/embed/engines/choose.js';
import { loadOnnxRuntime } from '../lib/embed/engines/onnx-runtime.js';
import { goldenSetKind, goldenSuites, GOLDEN_SUITE_NAMES, SUITES_OF_KIND, type GoldenSuiteName } from '../lib/parity/suites.js';
import { REPLAY_PRECISIONS, type ReplayPrecision } from '../lib/parity/train.js';
import { InputError, UnavailableError, UnknownNameError } from '../lib/util/errors.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';

const OPTIONS = {
  golden: { type: 'string', value: '<dir>', help: 'a golden set, or a folder of sets', default: 'ANGLE_GOLDEN_DIR, else <shared>/golden (every set there)' },
  data: { type: 'string', value: '<dir>', help: 'the data root the eval, train and transfer suites read', default: 'ANGLE_DATA_DIR, else <shared>/data' },
  backend: { type: 'string', value: '<name>', help: 'tfjs backend: cpu, wasm, cuda, tensorflow', default: 'ANGLE_BACKEND, else cpu' },
  engine: { type: 'string', value: '<name>', help: 'inference engine of the forward and eval suites: tfjs (the reference) or onnx (ONNX Runtime)', default: 'ANGLE_INFERENCE, else tfjs' },
  'train-precision': { type: 'string', value: REPLAY_PRECISIONS.join('|'), help: "the train suite's matmul precision: bf16/fp16 replay every golden run with 16-bit matmul inputs and fp32 accumulation (cuBLASLt on cuda, emulated by rounding elsewhere) against the 16-bit tolerance (lib/parity/train.ts)", default: 'fp32' },
  only: { type: 'string', value: '<suites>', help: `comma-separated suites to run: ${GOLDEN_SUITE_NAMES.join(', ')}`, default: 'every suite of each set' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = 'usage: npm run parity -- [--golden <dir>] [--data <dir>] [--backend <name>] [--engine <name>] [--only <suites>] [--train-precision fp32|bf16|fp16]';
const FOOTER = `The shared folder is ANGLE_SHARED_DIR, else ../shared beside the repository.
Exit codes: 0 every check passed, 1 a check failed, 2 usage or input error, 3 backend unavailable.`;

/** One golden set, or every subdirectory that is one. */
function goldenSets(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError('not a directory', { file: dir });
  if (goldenSetKind(dir)) return [dir];
  const sets = readdirSync(dir)
    .map((d) => join(dir, d))
    .filter((d) => statSync(d).isDirectory() && goldenSetKind(d) !== undefined)
    .sort();
  if (sets.length === 0) throw new InputError('neither a golden set nor a folder of them (see shared/golden/README.md for the layouts)', { file: dir });
  return sets;
}

function parseOnly(text: string | undefined): GoldenSuiteName[] | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!(GOLDEN_SUITE_NAMES as readonly string[]).includes(n)) throw new UnknownNameError('suite in --only', n, GOLDEN_SUITE_NAMES);
  return names as GoldenSuiteName[];
}

async function main(): Promise<number> {
  const { values } = parseOptions(OPTIONS, process.argv.slice(2));
  if (values.help) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  const golden = locateGoldenDir(values.golden);
  if (!golden) throw new UsageError('no golden reference: pass --golden <dir>, set ANGLE_GOLDEN_DIR, or keep the shared folder beside the repository (../shared)');
  const data = locateDataDir(values.data);
  const only = validateArguments(() => parseOnly(values.only));
  const trainPrecision = values['train-precision'];
  if (trainPrecision !== undefined && !(REPLAY_PRECISIONS as readonly string[]).includes(trainPrecision)) throw new UnknownNameError('--train-precision', trainPrecision, REPLAY_PRECISIONS);
  const engine = validateArguments(() => parseEngineChoice(values.engine ?? (process.env.ANGLE_INFERENCE?.trim() ? undefined : 'tfjs')));
  const sets = goldenSets(golden.path);
  const runnable = sets.filter((s) => !only || SUITES_OF_KIND[goldenSetKind(s)!].some((n) => only.includes(n)));
  if (runnable.length === 0) throw new UsageError(`--only ${values.only}: none of these suites applies to the golden sets under ${golden.path}`);
  console.log(`golden: ${golden.path} (from ${golden.from}); data: ${data ? `${data.path} (from ${data.from})` : 'none (the eval, train and transfer suites need one)'}`);
  await initBackend(values.backend);
  if (engine === 'onnx') {
    const rt = await loadOnnxRuntime();
    if ('error' in rt) throw new UnavailableError(`--engine onnx: ${rt.error}`);
  }
  console.log(`inference engine of the forward and eval suites: ${engine}`);

  let passed = 0;
  let failed = 0;
  const report = (set: string, c: ParityCheck) => {
    if (c.ok) passed++;
    else failed++;
    console.log(`${c.ok ? 'PASS' : 'FAIL'} ${set} ${c.name}: ${c.detail}`);
  };
  for (const dir of runnable) {
    const set = basename(dir);
    for (const suite of goldenSuites({ goldenDir: dir, dataDir: data?.path, only, engine, ...(trainPrecision ? { trainPrecision: trainPrecision as ReplayPrecision } : {}), log: (l) => console.error(`     ${l}`) })) {
      const t0 = Date.now();
      try {
        for (const c of await suite.run()) report(set, c);
      } catch (e) {
        report(set, { name: suite.name, ok: false, detail: `error: ${(e as Error).message}` });
      }
      console.log(`     ${set} ${suite.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
  console.log(`parity: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? EXIT.ok : EXIT.failed;
}

await runCommand('parity', main);
