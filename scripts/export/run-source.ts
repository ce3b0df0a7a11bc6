/**
 * What `npm run export` exports, found from what was given: a trained run (its run directory
 * `results/<experiment>/runs/<key>/`, or its record `results/<experiment>/<run-id>.json`) or a
 * model directory / Hub id. For a run: its record (the one whose `details.runKey` is the key, or
 * whose `details.runDir` is the folder: `npm run train` names its folder by the run id and records
 * it there; the newest when a forced rerun wrote several), the results folder above it, the best checkpoint
 * (`<runDir>/best`, with `best.json`) and whether it holds the whole model or only adapters.
 *
 * Also: the records of this results folder that evaluated given weights (an STS-suite evaluation
 * names the weights it scored in `details.evaluatedWeightsSha256`; an evaluation of fixed weights
 * names them as its `model.weightsSha256`), and local paths back from the portable form records
 * store (`shared:…`, `project:…`; lib/report/training-record.ts `portablePath`).
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { locateSharedDir } from '../../lib/config.js';
import { loadRun, readResults, type LoadedRun } from '../../lib/report/results-reader.js';
import { readBestModelInfo, type BestModelInfo } from '../../lib/train/best-model.js';
import { InputError } from '../../lib/util/errors.js';
import { packageRoot } from '../../lib/util/package-root.js';

export interface RunSource {
  kind: 'run';
  run: LoadedRun;
  resultsDir: string;
  experiment: string;
  key: string;
  runDir: string;
  bestDir: string;
  best: BestModelInfo;
  /** The LoRA configuration the record keeps, for an adapter run. */
  lora?: { r: number; alpha: number; dropout: number; targetModules?: string[] | 'all-linear'; useRslora?: boolean; seed?: number };
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

/** The run folder a record names: `details.runDir` (`npm run train`'s, by run id), else runs/<runKey>; the first that exists. */
function recordedRunDir(run: LoadedRun, resultsDir: string, experiment: string, key: string): { dir?: string; tried: string[] } {
  const recorded = (run.record.details as { runDir?: unknown } | undefined)?.runDir;
  const tried: string[] = [];
  if (typeof recorded === 'string') {
    // Beside the record first (the results folder may have moved with its runs), then where it was written.
    tried.push(join(resultsDir, experiment, 'runs', basename(recorded)));
    try {
      tried.push(resolve(localModelRef(recorded)));
    } catch {
      /* a folder of another machine: only the one beside the record can be it */
    }
  }
  tried.push(join(resultsDir, experiment, 'runs', key));
  return { dir: tried.find(isDir), tried: [...new Set(tried)] };
}

/** Whether `run` is the record of the run folder `runDir` (by its recorded folder, or its key as the folder name). */
function recordsFolder(run: LoadedRun, runDir: string): boolean {
  const d = (run.record.details ?? {}) as { runKey?: unknown; runDir?: unknown };
  return d.runKey === basename(runDir) || (typeof d.runDir === 'string' && basename(d.runDir) === basename(runDir));
}

/** The run that `given` (a run directory or a record file, local or in a record's portable form `project:…`) names; see the file comment. */
export function runSource(given: string): RunSource {
  const path = resolve(/^(shared|project):/.test(given) ? localModelRef(given) : given);
  if (!existsSync(path)) throw new InputError('no such run directory or record file', { file: given });
  let run: LoadedRun;
  let runDir: string;
  let key: string;
  let resultsDir: string;
  let experiment: string;
  if (statSync(path).isFile()) {
    run = loadRun(path);
    key = (run.record.details as { runKey?: unknown } | undefined)?.runKey as string;
    if (typeof key !== 'string') throw new InputError('this record has no details.runKey: it is not a training run of a notebook or recipe (pass --model <its model folder> instead)', { file: given });
    experiment = basename(dirname(path));
    resultsDir = dirname(dirname(path));
    const found = recordedRunDir(run, resultsDir, experiment, key);
    if (!found.dir) throw new InputError(`the record's run folder is gone (its weights with it): looked for ${found.tried.join(', ')}`, { file: given });
    runDir = found.dir;
  } else {
    runDir = basename(path) === 'best' ? dirname(path) : path;
    if (basename(dirname(runDir)) !== 'runs') throw new InputError('expected a run folder results/<experiment>/runs/<key>/ (or its best/ subfolder), or a record file results/<experiment>/<run-id>.json', { file: given });
    key = basename(runDir);
    experiment = basename(dirname(dirname(runDir)));
    resultsDir = dirname(dirname(dirname(runDir)));
    const frame = readResults({ resultsDir, experiments: experiment });
    const matches = frame.runs.filter((r) => recordsFolder(r, runDir));
    if (matches.length === 0) {
      throw new InputError(
        `no record in ${join(resultsDir, experiment)} names this run folder (details.runDir) or has details.runKey '${key}': the run did not finish, or its record was removed ` +
          '(export its weights with --model <folder>/best --pooling <name>)',
        { file: runDir },
      );
    }
    run = matches.sort((a, b) => a.record.finishedAt.localeCompare(b.record.finishedAt)).at(-1)!;
  }
  const bestDir = join(runDir, 'best');
  if (!existsSync(join(bestDir, 'best.json'))) throw new InputError('the run kept no best checkpoint (best/best.json): it never evaluated dev', { file: runDir });
  const best = readBestModelInfo(bestDir);
  const lora = (run.record.details as { lora?: RunSource['lora'] } | undefined)?.lora;
  if (best.trainable === 'subset' && !lora) throw new InputError('the best checkpoint holds only part of the model, and the record names no LoRA configuration (details.lora) to rebuild it with', { file: bestDir });
  return { kind: 'run', run, resultsDir, experiment, key, runDir, bestDir, best, ...(lora ? { lora } : {}) };
}

/** A model reference as records store it, back to something loadModel takes (see the file comment). */
export function localModelRef(ref: string): string {
  const m = /^(shared|project|local):(.*)$/.exec(ref);
  if (!m) return ref;
  const [, root, rest] = m;
  if (root === 'project') return join(packageRoot(), rest);
  if (root === 'shared') {
    const shared = locateSharedDir();
    if (!shared) throw new InputError(`the record's model '${ref}' lies in the shared folder, and none was found (ANGLE_SHARED_DIR, or ../shared beside the repository)`);
    return join(shared.path, rest);
  }
  throw new InputError(`the record's model '${ref}' was a local folder on the machine that trained it (only its last two path parts are kept): pass --base-model <its folder>`);
}

/** Records under `resultsDir` that evaluated the weights with sha256 `weightsSha256` (not training records), oldest first. */
export function evaluationsOf(resultsDir: string, weightsSha256: string): LoadedRun[] {
  if (!isDir(resultsDir)) return [];
  const frame = readResults({ resultsDir });
  return frame.runs
    .filter((r) => {
      const d = (r.record.details ?? {}) as { evaluatedWeightsSha256?: unknown; log?: unknown };
      if (d.evaluatedWeightsSha256 !== undefined) return d.evaluatedWeightsSha256 === weightsSha256;
      // A training record names the weights it started from; those are not the weights it evaluated.
      return !Array.isArray(d.log) && r.record.model.weightsSha256 === weightsSha256;
    })
    .sort((a, b) => a.record.finishedAt.localeCompare(b.record.finishedAt));
}
