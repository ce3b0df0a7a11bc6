/**
 * npm run notebooks [-- <names...>] [--preset smoke|paper] [--shared <dir>] [--out <dir>]
 *                      [--dir <notebooks dir>] [--timeout-per-cell <s>] [--verbose]
 *
 * Runs notebooks headless, the way the tslab Jupyter kernel runs them, and writes the executed
 * notebooks (outputs filled) to results/notebooks/. Each notebook runs in a fresh kernel process
 * (./kernel.ts, driven by ./runner.ts); this file is the command line: options, which notebooks,
 * the environment a preset gives the kernels, and the run loop. docs/jupyter.md describes the
 * options and how this compares with nbconvert.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isPresetName, presetByName, presetVariables, PRESET_NAMES, type PresetName } from '../../lib/experiments/presets.js';
import { locateSharedDir } from '../../lib/config.js';
import { InputError, UnknownNameError } from '../../lib/util/errors.js';
import { checkWritableDir } from '../cli/command.js';
import { packageRoot } from '../../lib/util/package-root.js';
import { runNotebook, shown, type NotebookRun, type RunContext } from './runner.js';

const DEFAULT_TIMEOUT_S = 30 * 60;
/** The environment variables notebooks read (lib/config.ts), shown in the run's header. */
const ANGLE_VARS = ['ANGLE_PRESET', 'ANGLE_MODEL', 'ANGLE_LLM_MODEL', 'ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_BACKEND', 'ANGLE_RESULTS_DIR', 'ANGLE_SHARED_DIR'];

class UsageError extends Error {}

interface Options {
  names: string[];
  dir: string;
  out: string;
  preset?: string;
  shared?: string;
  timeoutS: number;
  verbose: boolean;
}

const USAGE = `usage: npm run notebooks [-- [names...] [options]]
  names                   notebooks by name or prefix (00, 00-encode-and-compare); none = all, in order
  --preset smoke|paper    environment defaults (explicit ANGLE_* variables win); default: smoke
                          when ANGLE_MODEL is unset, else none
  --shared <dir>          the shared directory the smoke preset reads (default: ANGLE_SHARED_DIR,
                          else ../shared beside the repository, if it exists)
  --out <dir>             where executed notebooks go (default: results/notebooks)
  --dir <dir>             the notebooks directory (default: notebooks)
  --timeout-per-cell <s>  fail a cell that runs longer (default: ${DEFAULT_TIMEOUT_S})
  -v, --verbose           also echo what cells print, as they print it`;

function parseCli(argv: string[], root: string): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      preset: { type: 'string' },
      shared: { type: 'string' },
      out: { type: 'string' },
      dir: { type: 'string' },
      'timeout-per-cell': { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const timeoutS = Number(values['timeout-per-cell'] ?? DEFAULT_TIMEOUT_S);
  if (!(timeoutS > 0)) throw new UsageError(`--timeout-per-cell expects seconds > 0, got ${values['timeout-per-cell']}`);
  return {
    names: positionals,
    dir: resolve(values.dir ?? join(root, 'notebooks')),
    out: resolve(values.out ?? join(root, 'results', 'notebooks')),
    preset: values.preset,
    shared: values.shared,
    timeoutS,
    verbose: values.verbose ?? false,
  };
}

/** A path for messages: relative to the working directory when below it. */
function selectNotebooks(dir: string, names: string[]): string[] {
  let all: string[];
  try {
    all = readdirSync(dir)
      .filter((f) => f.endsWith('.ipynb') && !f.startsWith('.'))
      .map((f) => f.slice(0, -'.ipynb'.length))
      .sort();
  } catch {
    throw new UsageError(`no notebooks directory ${shown(dir)}`);
  }
  if (all.length === 0) throw new UsageError(`no notebooks (*.ipynb) in ${shown(dir)}`);
  if (names.length === 0) return all;
  const chosen = new Set<string>();
  for (const raw of names) {
    const name = basename(raw).replace(/\.ipynb$/, '');
    const hits = all.includes(name) ? [name] : all.filter((n) => n.startsWith(name));
    if (hits.length === 0) {
      throw new UsageError(`no notebook named or starting with "${raw}" in ${shown(dir)}; available: ${all.join(', ')}`);
    }
    hits.forEach((h) => chosen.add(h));
  }
  return all.filter((n) => chosen.has(n));
}

/** The environment the kernels get: the runner's, with paths made absolute and the preset applied. */
function kernelEnvironment(opts: Options, root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const set = (k: string) => (env[k] ?? '').trim() !== '';
  // The kernel's working directory is the notebook's, so relative paths are resolved here first.
  for (const k of ['ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_RESULTS_DIR']) if (set(k)) env[k] = resolve(env[k]!.trim());
  if (set('ANGLE_MODEL') && existsSync(env.ANGLE_MODEL!.trim())) env.ANGLE_MODEL = resolve(env.ANGLE_MODEL!.trim());

  const name = opts.preset ?? (set('ANGLE_PRESET') ? env.ANGLE_PRESET!.trim() : set('ANGLE_MODEL') ? undefined : 'smoke');
  if (name === undefined) return env;
  if (!isPresetName(name)) throw new UnknownNameError('preset', name, PRESET_NAMES);
  let shared: string | undefined;
  if (presetByName(name).needsShared) {
    const found = locateSharedDir(opts.shared);
    shared = found?.path;
    if (shared === undefined || !statSync(shared, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(
        `the ${name} preset reads data and the golden model from a shared directory, ` +
          (found === undefined ? `and none was found (ANGLE_SHARED_DIR, or ${resolve(root, '..', 'shared')})` : `and ${shared} (from ${found.from}) is not a directory`) +
          `: pass --shared <dir> (holding data/ and golden/), or use --preset paper (model and data from the Hub), or set ANGLE_MODEL`,
      );
    }
    console.log(`shared: ${shared} (from ${found!.from})`);
  }
  for (const [k, v] of Object.entries(presetVariables(name as PresetName, shared))) if (!set(k)) env[k] = v;
  env.ANGLE_PRESET = name;
  return env;
}

async function main(argv: string[]): Promise<number> {
  const root = packageRoot();
  let opts: Options;
  let names: string[];
  let env: NodeJS.ProcessEnv;
  try {
    opts = parseCli(argv, root);
    names = selectNotebooks(opts.dir, opts.names);
    env = kernelEnvironment(opts, root);
    // Before any notebook runs: a folder that cannot take the executed notebooks fails now.
    checkWritableDir(opts.out, 'executed notebooks', 'choose another with --out');
  } catch (e) {
    if (e instanceof UsageError || e instanceof InputError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`notebooks: ${(e as Error).message} (see --help)`);
      return 2;
    }
    throw e;
  }
  const ctx: RunContext = { env, timeoutS: opts.timeoutS, verbose: opts.verbose };
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) {
      ctx.child?.kill('SIGKILL');
      process.exit(130);
    }
    interrupted = true;
    console.error('notebooks: interrupted; writing the current notebook (Ctrl-C again to quit at once)');
    ctx.child?.kill('SIGINT');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  console.log(
    `running ${names.length} notebook(s) from ${shown(opts.dir)}; ` +
      ANGLE_VARS.filter((k) => env[k]).map((k) => `${k}=${env[k]}`).join(' '),
  );
  const failures: string[] = [];
  for (const [i, name] of names.entries()) {
    const label = `[${i + 1}/${names.length}] ${name}`;
    const file = join(opts.dir, `${name}.ipynb`);
    let run: NotebookRun;
    try {
      run = await runNotebook(file, label, join(opts.out, `${name}.ipynb`), ctx);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      console.error(e.message);
      run = { failure: e.message };
    }
    if (run.failure) failures.push(run.failure);
    if (interrupted) return 130;
  }
  if (failures.length > 0) {
    if (names.length > 1) console.error(`\n${failures.length} of ${names.length} notebooks failed:\n${failures.join('\n')}`);
    return 1;
  }
  return 0;
}


process.exitCode = await main(process.argv.slice(2));
