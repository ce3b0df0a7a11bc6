/**
 * npm run train -- --task <task> [--preset smoke|paper|rehearsal] [--model <dir|hub id>] [recipe overrides...]
 *
 * Trains one model on one task with the task's recipe (lib/experiments/recipes.ts: every value
 * from the paper, the authors' code, or a documented choice of ours), evaluates dev as the recipe
 * says, keeps the best dev checkpoint, evaluates test on it, and writes
 * results/<experiment>/<run-id>.json (with a predictions sidecar). `--help` lists every option with
 * its default and where the default comes from.
 *
 * Presets (lib/experiments/presets.ts), as for the notebooks: without --model and ANGLE_MODEL the
 * `smoke` preset applies (the tiny golden BERT and the data of the shared folder, a few dozen
 * steps: about a minute on a CPU); `--preset paper` is the papers' size (bert-base-uncased).
 *
 * Before any expensive work it checks that the results and run folders are writable, the model and
 * data are found and the backend starts. Ctrl-C (or SIGTERM) stops after the current step, writes a
 * checkpoint and exits 130; `--resume --run-dir <dir>` continues exactly.
 */
import { appendFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { initBackend } from '../lib/backend/index.js';
import { envConfig, locateDataDir, locateSharedDir, resolveResultsDir, type Located } from '../lib/config.js';
import { isPresetName, presetByName, presetVariables, PRESET_NAMES, type Preset } from '../lib/experiments/presets.js';
import { applyOverrides, COMMAND_LINE, type RecipeOverrides } from '../lib/experiments/overrides.js';
import { defaultRecipe, recipe as recipeByName, RECIPE_NAMES } from '../lib/experiments/recipes/index.js';
import { scaleRecipe, type Recipe } from '../lib/experiments/recipes/recipe.js';
import { RunInterrupted, runRecipe } from '../lib/experiments/run-recipe.js';
import { loadTaskData, task, TASK_NAMES, type TaskData, type TaskName } from '../lib/experiments/tasks.js';
import { DUPLICATE_HANDLINGS, type DuplicateHandling, type IbnPositives } from '../lib/losses/in-batch-negatives.js';
import { POOLING_STRATEGIES } from '../lib/embed/pooling.js';
import { paperBackendWarning } from '../lib/notebook/paper-backend-warning.js';
import { newRunId, runRecordPath } from '../lib/report/run-record.js';
import { portablePath } from '../lib/report/training-record.js';
import { TRAINING_PRECISIONS } from '../lib/backend/training-precision.js';
import { ATTENTION_KINDS } from '../lib/models/types.js';
import { OBJECTIVE_NAMES } from '../lib/train/objective.js';
import { SCHEDULE_NAMES } from '../lib/train/schedule.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { checkWritableDir, EXIT, helpText, parseOptions, reportError, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';

/** The recipe --help describes: the --task given, else STS-B's. */
function helpRecipe(argv: string[]): Recipe {
  const i = argv.indexOf('--task');
  const t = i >= 0 ? argv[i + 1] : undefined;
  return defaultRecipe((TASK_NAMES as readonly string[]).includes(t ?? '') ? (t as TaskName) : 'stsb');
}

function options(r: Recipe) {
  const c = r.config;
  const loss = c.objective.name === 'angle' || c.objective.name === 'ese' ? (c.objective.loss ?? {}) : {};
  const ese = c.objective.name === 'ese' ? c.objective : undefined;
  const src = (k: string) => (r.sources[k] ? ` (${r.sources[k]})` : '');
  const from = (v: unknown, k: string) => `${typeof v === 'object' ? JSON.stringify(v) : String(v)}${src(k)}`;
  return {
    task: { type: 'string', value: '<name>', help: `what to train on: ${TASK_NAMES.join(', ')} (lib/experiments/tasks.ts)` },
    recipe: { type: 'string', value: '<name>', help: `a recipe other than the task's own: ${RECIPE_NAMES.join(', ')}`, default: `the task's (${r.name} for ${r.task})` },
    preset: { type: 'string', value: '<name>', help: `${PRESET_NAMES.join(' | ')}: where model and data come from and the run size`, default: 'smoke when neither --model nor ANGLE_MODEL is given, else none' },
    shared: { type: 'string', value: '<dir>', help: 'the shared folder the smoke preset reads', default: 'ANGLE_SHARED_DIR, else ../shared beside the repository' },
    model: { type: 'string', value: '<dir|id>', help: 'a local model directory or a Hugging Face Hub id', default: "ANGLE_MODEL, else the preset's" },
    data: { type: 'string', value: '<dir>', help: 'the local data root', default: 'ANGLE_DATA_DIR, else <shared>/data, else the Hub cache' },
    backend: { type: 'string', value: '<name>', help: 'cpu, wasm, cuda, tensorflow, or auto (cuda when its addon loads, else wasm, else cpu)', default: "ANGLE_BACKEND, else the preset's (smoke: wasm, paper: auto), else cpu" },
    objective: { type: 'string', value: '<name>', help: OBJECTIVE_NAMES.join(', '), default: from(c.objective.name, 'objective') },
    'ese-compression-size': { type: 'string', value: '<k>', help: "Espresso (--objective ese): the leading width every layer is trained at (angle_emb's --ese_compression_size; at most the hidden size)", default: ese ? from(ese.compressionSize ?? 128, 'objective') : '128 (the library default) with --objective ese' },
    'ese-kl-temperature': { type: 'string', value: '<T>', help: "Espresso: the KL temperature of the compression term; 0 leaves its MSE only (angle_emb's --ese_kl_temperature)", default: ese ? from(ese.klTemperature ?? 1, 'objective') : '1.0 with --objective ese' },
    'ese-pca': { type: 'string', value: 'on|off', help: "Espresso: add the PCA compression targets (angle_emb's apply_ese_pca)", default: ese ? from(ese.pca ?? true ? 'on' : 'off', 'objective.pca') : 'on with --objective ese' },
    teacher: { type: 'string', value: '<dir|id>', help: "a frozen teacher model aligned to by the angle objective (with its gradient) or ese (its value only), as angle_emb's --teacher_name_or_path; the training texts are embedded by it once before the first step", default: from((c.objective as { teacher?: { model: string } }).teacher?.model ?? 'none', 'objective.teacher.model') },
    'teacher-pooling': { type: 'string', value: '<name>', help: `the teacher's pooling (angle_emb's --teacher_pooling_strategy): ${POOLING_STRATEGIES.join(', ')}`, default: from((c.objective as { teacher?: { pooling?: string } }).teacher?.pooling ?? 'cls', 'objective.teacher.pooling') },
    weights: { type: 'string', value: 'cosine=1,ibn=1,angle=1', help: 'AnglE objective weights (also the base objective of --objective ese)', default: from(loss.weights ?? 'the paper preset', 'objective.loss.weights') },
    taus: { type: 'string', value: 'cosine=20,ibn=20,angle=1', help: 'AnglE objective scales (20 = temperature 0.05)', default: from(loss.taus ?? 'the paper preset', 'objective.loss.taus') },
    'ibn-positives': { type: 'string', value: '<rule>', help: "which pairs in-batch negatives treat as positives: binary (labels 0/1), angle-int (AnglE code's int cast), threshold=<t> (label >= t)", default: from(loss.ibnPositives ?? 'binary', 'objective.loss.ibnPositives') },
    duplicates: { type: 'string', value: '<mode>', help: `identical sentences in a batch (ISP): ${DUPLICATE_HANDLINGS.join(', ')}`, default: from(loss.duplicates ?? 'ignore', 'objective.loss.duplicates') },
    pooling: { type: 'string', value: '<name>', help: POOLING_STRATEGIES.join(', '), default: from(c.pooling ?? 'cls', 'pooling') },
    'max-length': { type: 'string', value: '<n>', help: 'tokens per text, special tokens included', default: from(c.maxLength, 'maxLength') },
    'batch-size': { type: 'string', value: '<n>', help: 'examples (pairs, triplets) per micro-batch', default: from(c.batchSize, 'batchSize') },
    'grad-accumulation': { type: 'string', value: '<n>', help: 'micro-batches per optimiser step', default: '1' },
    epochs: { type: 'string', value: '<n>', help: 'passes over the training data', default: from(c.epochs, 'epochs') },
    'max-steps': { type: 'string', value: '<n>', help: "optimiser steps at most (overrides epochs); the smoke preset's is 24", default: 'the epochs' },
    lr: { type: 'string', value: '<x>', help: 'peak learning rate', default: from(c.lr, 'lr') },
    schedule: { type: 'string', value: '<name>', help: SCHEDULE_NAMES.join(', '), default: from(c.schedule ?? 'linear', 'schedule') },
    'warmup-steps': { type: 'string', value: '<n>', help: 'linear warmup steps', default: from(c.warmupSteps ?? 0, 'warmupSteps') },
    warmup: { type: 'string', value: '<fraction>', help: 'warmup as a fraction of the run (instead of --warmup-steps)' },
    'weight-decay': { type: 'string', value: '<x>', help: 'AdamW decoupled weight decay (not on biases and LayerNorm)', default: from(c.weightDecay ?? 0.01, 'weightDecay') },
    'max-grad-norm': { type: 'string', value: '<x>', help: 'clip gradients to this global norm', default: 'off' },
    dropout: { type: 'string', value: '<p>', help: "hidden and attention dropout", default: "the model config's" },
    seed: { type: 'string', value: '<n>', help: 'data order and dropout masks', default: from(c.seed ?? 42, 'seed') },
    'eval-every': { type: 'string', value: '<n|epoch>', help: 'dev evaluation every n steps or every epoch', default: from(c.evalEvery ?? 'end of the run', 'evalEvery') },
    'checkpoint-every': { type: 'string', value: '<n>', help: 'write a resumable checkpoint every n steps', default: from(c.checkpointEvery ?? 50, 'checkpointEvery') },
    precision: { type: 'string', value: TRAINING_PRECISIONS.join('|'), help: "matmul precision: tf32 (float32 off cuda), bf16 or fp16 inputs with fp32 accumulation (emulated on cpu and wasm by rounding the inputs); weights, AdamW state, LayerNorm, softmax and the loss stay float32", default: from(c.precision ?? 'tf32', 'precision') },
    attention: { type: 'string', value: ATTENTION_KINDS.join('|'), help: "plain; blocked (key blocks with an online softmax, no [T, T] scores kept); fused (one kernel forward and backward on cuda, plain elsewhere)", default: from(c.attention ?? 'plain', 'attention') },
    checkpointing: { type: 'string', value: 'on|off', help: "recompute each layer in the backward pass instead of keeping its activations (same gradients, one more forward)", default: from(c.checkpointing ? 'on' : 'off', 'checkpointing') },
    'step-graphs': { type: 'string', value: 'on|off|<lengths>', help: 'record each fixed-shape step once and replay it as one CUDA graph launch (cuda; elsewhere steps run eagerly, said once); <lengths>, e.g. 32,64,128, also pads batches up to the first length that holds them so they share graphs', default: from(c.stepGraphs === undefined ? 'off' : c.stepGraphs, 'stepGraphs') },
    limit: { type: 'string', value: '<n>', help: 'use only the first n training examples', default: "all (the smoke preset's is 256)" },
    'run-dir': { type: 'string', value: '<dir>', help: 'checkpoints and the best model', default: '<results>/<experiment>/runs/<run id>' },
    'step-log': { type: 'string', value: '<file>', help: 'append one JSON line per finished optimiser step (step, epoch, lr, loss, terms, tokens, seconds) to this file, as the step ends (for plots, and for tools that act on training events)', default: 'none (the progress bar only)' },
    resume: { type: 'boolean', help: 'continue the run in --run-dir from its newest checkpoint (an error when there is none)' },
    'resume-if-possible': { type: 'boolean', help: 'continue when --run-dir has a checkpoint, else start fresh' },
    experiment: { type: 'string', value: '<name>', help: 'the results subfolder', default: 'train-<task>' },
    results: { type: 'string', value: '<dir>', help: 'where results files go', default: 'ANGLE_RESULTS_DIR, else results/smoke/ for the smoke preset (git-ignored), else results/' },
    help: { type: 'boolean', short: 'h', help: 'this text' },
  } satisfies OptionSpecs;
}

const USAGE = 'usage: npm run train -- --task <task> [--preset smoke|paper|rehearsal] [--model <dir|id>] [options]';
const FOOTER = `Defaults in brackets come from the task's recipe (shown for --task given, else stsb); flags override them
one value each (a nested one, e.g. --weights angle=2, keeps the recipe's other weights).
Exit codes: 0 done, 2 usage or input error, 3 backend or resource unavailable, 130 interrupted (a checkpoint was written).`;

type Values = ReturnType<typeof parseOptions<ReturnType<typeof options>>>['values'];

function number(name: string, v: string | undefined, integer = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} expects ${integer ? 'an integer' : 'a number'}, got '${v}'`);
  return n;
}

function keyValues(name: string, v: string | undefined, keys: readonly string[]): Record<string, number> | undefined {
  if (v === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const part of v.split(',')) {
    const [k, x] = part.split('=').map((s) => s.trim());
    if (!keys.includes(k)) throw new UnknownNameError(`--${name} key`, k ?? '', keys);
    const n = Number(x);
    if (x === undefined || x === '' || !Number.isFinite(n)) throw new UsageError(`--${name} expects name=value pairs like ${keys.map((q) => `${q}=1`).join(',')}; got '${part}'`);
    out[k] = n;
  }
  return out;
}

function ibnPositives(v: string | undefined): IbnPositives | undefined {
  if (v === undefined) return undefined;
  if (v === 'binary' || v === 'angle-int') return v;
  const m = /^threshold=(.+)$/.exec(v);
  if (m && Number.isFinite(Number(m[1]))) return { threshold: Number(m[1]) };
  throw new UnknownNameError('--ibn-positives rule', v, ['binary', 'angle-int', 'threshold=<number>']);
}

/** A flag whose value is one of `names` (a usage error naming them otherwise). */
function oneOf<T extends string>(flag: string, v: string, names: readonly T[]): T {
  if ((names as readonly string[]).includes(v)) return v as T;
  throw new UsageError(`--${flag} expects one of ${names.join(', ')}; got '${v}'`);
}

/** --step-graphs on|off|<lengths>: the trainer's stepGraphs. */
function stepGraphs(v: string | undefined): RecipeOverrides['stepGraphs'] {
  if (v === undefined) return undefined;
  if (v === 'on' || v === 'off') return v === 'on';
  const lengths = v.split(',').map((x) => Number(x.trim()));
  if (lengths.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError(`--step-graphs expects on, off or comma-separated lengths like 32,64,128; got '${v}'`);
  return { bucketLengths: lengths };
}

/** The preset that applies, and what it sets (model, data root, run size). */
function choosePreset(v: Values): { preset?: Preset; model?: string; data?: Located; backend?: string; resultsDir?: string } {
  const name = v.preset ?? envConfig().preset ?? (v.model === undefined && envConfig().model === undefined ? 'smoke' : undefined);
  if (name === undefined) return {};
  if (!isPresetName(name)) throw new UnknownNameError('preset', name, PRESET_NAMES);
  const preset = presetByName(name);
  if (!preset.needsShared) {
    const vars = presetVariables(preset.name);
    return { preset, model: vars.ANGLE_MODEL, backend: vars.ANGLE_BACKEND };
  }
  const shared = locateSharedDir(v.shared);
  if (!shared) {
    throw new UsageError(
      `the ${name} preset reads the tiny golden model and the data of a shared folder, and none was found (ANGLE_SHARED_DIR, or ../shared beside the repository): pass --shared <dir>, or --model <dir|hub id> (with --preset paper for the full recipe)`,
    );
  }
  const vars = presetVariables(preset.name, shared.path);
  console.log(`shared: ${shared.path} (from ${shared.from})`);
  return { preset, model: vars.ANGLE_MODEL, data: { path: vars.ANGLE_DATA_DIR, from: `the ${name} preset` }, backend: vars.ANGLE_BACKEND, resultsDir: vars.ANGLE_RESULTS_DIR };
}

/**
 * The run's flags as deep overrides of the recipe (lib/experiments/overrides.ts, as a notebook's
 * parameter cell): each flag changes the value it names and nothing else, and the recipe table of
 * the record's run card says "override (command line)" for it.
 */
function flagOverrides(r: Recipe, v: Values): RecipeOverrides {
  const o: RecipeOverrides = {};
  const objectiveName = v.objective ?? r.config.objective.name;
  if (!(OBJECTIVE_NAMES as readonly string[]).includes(objectiveName)) throw new UnknownNameError('objective', objectiveName, OBJECTIVE_NAMES);
  const angleFlags = (['weights', 'taus', 'ibn-positives', 'duplicates'] as const).filter((k) => v[k] !== undefined);
  if (objectiveName !== 'angle' && objectiveName !== 'ese' && angleFlags.length > 0) throw new UsageError(`--${angleFlags[0]} applies to the angle objective (and ese's base objective) only, not '${objectiveName}'`);
  const eseFlags = (['ese-compression-size', 'ese-kl-temperature', 'ese-pca'] as const).filter((k) => v[k] !== undefined);
  if (objectiveName !== 'ese' && eseFlags.length > 0) throw new UsageError(`--${eseFlags[0]} applies to the Espresso objective only (--objective ese), not '${objectiveName}'`);
  if ((v.teacher !== undefined || v['teacher-pooling'] !== undefined) && objectiveName !== 'angle' && objectiveName !== 'ese') throw new UsageError(`--${v.teacher !== undefined ? 'teacher' : 'teacher-pooling'} applies to the angle and ese objectives only, not '${objectiveName}'`);
  if (v['teacher-pooling'] !== undefined && v.teacher === undefined && !(r.config.objective as { teacher?: unknown }).teacher) throw new UsageError('--teacher-pooling needs a teacher: pass --teacher <dir|id>');
  if (v['teacher-pooling'] !== undefined && !(POOLING_STRATEGIES as readonly string[]).includes(v['teacher-pooling'])) throw new UnknownNameError('--teacher-pooling', v['teacher-pooling'], POOLING_STRATEGIES);
  const teacher = {
    ...(v.teacher !== undefined ? { model: v.teacher } : {}),
    ...(v['teacher-pooling'] !== undefined ? { pooling: v['teacher-pooling'] } : {}),
  };
  const teacherSetting = Object.keys(teacher).length > 0 ? { teacher } : {};
  const pca = v['ese-pca'];
  if (pca !== undefined && pca !== 'on' && pca !== 'off') throw new UnknownNameError('--ese-pca value', pca, ['on', 'off']);
  const eseSettings = {
    ...(v['ese-compression-size'] !== undefined ? { compressionSize: number('ese-compression-size', v['ese-compression-size'], true) } : {}),
    ...(v['ese-kl-temperature'] !== undefined ? { klTemperature: number('ese-kl-temperature', v['ese-kl-temperature']) } : {}),
    ...(pca !== undefined ? { pca: pca === 'on' } : {}),
  };
  const duplicates = v.duplicates as DuplicateHandling | undefined;
  if (duplicates !== undefined && !DUPLICATE_HANDLINGS.includes(duplicates)) throw new UnknownNameError('--duplicates mode', duplicates, DUPLICATE_HANDLINGS);
  const loss = {
    ...(v.weights ? { weights: keyValues('weights', v.weights, ['cosine', 'ibn', 'angle']) } : {}),
    ...(v.taus ? { taus: keyValues('taus', v.taus, ['cosine', 'ibn', 'angle']) } : {}),
    ...(v['ibn-positives'] ? { ibnPositives: ibnPositives(v['ibn-positives']) } : {}),
    ...(duplicates ? { duplicates } : {}),
  };
  // --objective ese on an AnglE recipe trains Espresso over that recipe's AnglE loss (angle_emb's
  // --apply_ese wraps the trainer's own loss the same way); the loss flags then change that loss.
  const baseLoss = objectiveName === 'ese' && r.config.objective.name === 'angle' ? (r.config.objective.loss ?? {}) : {};
  const base = baseLoss as { weights?: object; taus?: object };
  const switchedLoss = {
    ...baseLoss,
    ...loss,
    ...(loss.weights ? { weights: { ...base.weights, ...loss.weights } } : {}),
    ...(loss.taus ? { taus: { ...base.taus, ...loss.taus } } : {}),
  };
  if (objectiveName !== r.config.objective.name) o.objective = { name: objectiveName, ...(Object.keys(switchedLoss).length > 0 ? { loss: switchedLoss } : {}), ...eseSettings, ...teacherSetting } as RecipeOverrides['objective'];
  else if (Object.keys(loss).length > 0 || Object.keys(eseSettings).length > 0 || v.teacher !== undefined || v['teacher-pooling'] !== undefined) o.objective = { ...(Object.keys(loss).length > 0 ? { loss } : {}), ...eseSettings, ...teacherSetting } as RecipeOverrides['objective'];
  const set = <K extends keyof RecipeOverrides>(k: K, x: RecipeOverrides[K] | undefined) => {
    if (x !== undefined) o[k] = x;
  };
  set('pooling', v.pooling);
  set('maxLength', number('max-length', v['max-length'], true));
  set('batchSize', number('batch-size', v['batch-size'], true));
  set('gradAccumulation', number('grad-accumulation', v['grad-accumulation'], true));
  set('epochs', number('epochs', v.epochs, true));
  set('maxSteps', number('max-steps', v['max-steps'], true));
  set('lr', number('lr', v.lr));
  if (v.schedule !== undefined) o.schedule = v.schedule as RecipeOverrides['schedule'];
  set('warmupFraction', number('warmup', v.warmup));
  set('warmupSteps', number('warmup-steps', v['warmup-steps'], true));
  set('weightDecay', number('weight-decay', v['weight-decay']));
  set('maxGradNorm', number('max-grad-norm', v['max-grad-norm']));
  set('dropout', number('dropout', v.dropout));
  set('seed', number('seed', v.seed, true));
  if (v['eval-every'] !== undefined) o.evalEvery = v['eval-every'] === 'epoch' ? 'epoch' : number('eval-every', v['eval-every'], true);
  set('checkpointEvery', number('checkpoint-every', v['checkpoint-every'], true));
  set('stepGraphs', stepGraphs(v['step-graphs']));
  if (v.precision !== undefined) o.precision = oneOf('precision', v.precision, TRAINING_PRECISIONS);
  if (v.attention !== undefined) o.attention = oneOf('attention', v.attention, ATTENTION_KINDS);
  if (v.checkpointing !== undefined) o.checkpointing = oneOf('checkpointing', v.checkpointing, ['on', 'off'] as const) === 'on';
  return o;
}

/** The recipe with the run's flags applied (see flagOverrides). */
function applyFlags(r: Recipe, v: Values): Recipe {
  const out = applyOverrides(r, flagOverrides(r, v), COMMAND_LINE);
  const config = { ...out.config };
  // --epochs replaces a step cap (the smoke preset's), --warmup a warmup given in steps.
  if (v.epochs !== undefined && v['max-steps'] === undefined) delete config.maxSteps;
  if (v.warmup !== undefined && v['warmup-steps'] === undefined) delete config.warmupSteps;
  return { ...out, config };
}

/** Everything a run needs, resolved and checked before any expensive work. */
interface Plan {
  v: Values;
  taskName: TaskName;
  preset?: Preset;
  /** The recipe as it runs: scaled to the preset, the flags applied. */
  recipe: Recipe;
  /** The first N training examples only (--limit, else the preset's). */
  limit?: number;
  modelId: string;
  data?: Located;
  resultsDir: string;
  experiment: string;
  runDir: string;
  backend?: string;
  /** --step-log: where each finished step's JSON line goes. */
  stepLog?: string;
}

function plan(v: Values): Plan {
  if (!v.task) throw new UsageError(`--task is required: one of ${TASK_NAMES.join(', ')} (see --help)`);
  if (v.resume && v['resume-if-possible']) throw new UsageError('give --resume or --resume-if-possible, not both');
  if ((v.resume || v['resume-if-possible']) && !v['run-dir']) throw new UsageError('--resume needs --run-dir <dir> of the run to continue');
  const t = task(v.task);
  const p = choosePreset(v);
  const base = v.recipe ? recipeByName(v.recipe) : defaultRecipe(t.name);
  if (base.task !== t.name) throw new UsageError(`recipe '${base.name}' trains on ${base.task}, not ${t.name}`);
  const recipe = p.preset ? scaleRecipe(base, p.preset.scale) : base;
  const modelId = v.model ?? envConfig().model ?? p.model;
  if (!modelId) throw new UsageError('no model: pass --model <dir or hub id>, set ANGLE_MODEL, or use a preset');
  const data = v.data !== undefined || envConfig().dataDir !== undefined || !p.data ? locateDataDir(v.data) : p.data;
  // --results, else ANGLE_RESULTS_DIR (a blank one counts as unset), else the preset's folder, else results/.
  const resultsDir = resolveResultsDir(v.results ?? (process.env.ANGLE_RESULTS_DIR?.trim() || p.resultsDir));
  const experiment = v.experiment ?? `train-${t.name}`;
  runRecordPath(experiment, 'preflight', resultsDir); // the experiment name must be a file name
  const runDir = resolve(v['run-dir'] ?? join(resultsDir, experiment, 'runs', newRunId()));
  const backend = v.backend ?? envConfig().backend ?? p.backend;
  const limit = number('limit', v.limit, true) ?? p.preset?.scale.trainExamples;
  const stepLog = v['step-log'] === undefined ? undefined : resolve(v['step-log']);
  return { v, taskName: t.name, preset: p.preset, recipe: applyFlags(recipe, v), limit, modelId, data, resultsDir, experiment, runDir, backend, stepLog };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const spec = options(helpRecipe(argv));
  const { values } = parseOptions(spec, argv);
  if (values.help) {
    console.log(helpText(USAGE, spec, FOOTER));
    return EXIT.ok;
  }
  // Every argument is checked before the backend starts or the model loads (a typo costs a second).
  const pl = validateArguments(() => plan(values));
  console.log(
    `train: task ${pl.taskName}, recipe ${pl.recipe.name}${pl.preset ? `, preset ${pl.preset.name}` : ''}; model ${pl.modelId}; ` +
      `data ${pl.data ? `${pl.data.path} (from ${pl.data.from})` : 'the Hugging Face Hub cache'}`,
  );
  // Preflight: what can fail cheaply fails now, before the model loads and training starts.
  checkWritableDir(pl.resultsDir, 'results', 'choose another with --results or ANGLE_RESULTS_DIR');
  const runDirExisted = existsSync(pl.runDir);
  checkWritableDir(pl.runDir, 'run folder', 'choose another with --run-dir');
  if (pl.stepLog) checkWritableDir(dirname(pl.stepLog), 'step log folder', 'choose another file with --step-log');
  try {
    return await trainAndReport(pl);
  } catch (e) {
    // A run that failed before writing anything leaves no empty run folder behind.
    if (!runDirExisted && existsSync(pl.runDir) && readdirSync(pl.runDir).length === 0) rmSync(pl.runDir, { recursive: true });
    throw e;
  }
}

async function trainAndReport(pl: Plan): Promise<number> {
  const { v, runDir } = pl;
  if (v.resume && !existsSync(join(runDir, 'checkpoints'))) {
    throw new InputError('nothing to resume: this run folder has no checkpoints/ (start without --resume, or use --resume-if-possible)', { file: runDir });
  }
  const backend = await initBackend(pl.backend);
  const warning = paperBackendWarning(pl.preset?.name, backend);
  if (warning) console.warn(`train: ${warning}`);
  let taskData: TaskData;
  try {
    taskData = loadTaskData(pl.taskName, { dataDir: pl.data?.path });
  } catch (e) {
    if (e instanceof InputError && !pl.data) throw new InputError(`${e.message} (no local data root: pass --data or set ANGLE_DATA_DIR, or run \`npm run data -- download <id>\`)`);
    throw e;
  }
  const limit = pl.limit;
  const n = Math.min(limit ?? Infinity, taskData.train.items.length);
  console.log(`train: ${taskData.train.name}${n < taskData.train.items.length ? ` (first ${n})` : ''}, ${n} examples; dev ${taskData.dev.name}; test ${taskData.test.name}; run dir ${portablePath(runDir)}`);
  // Ctrl-C / SIGTERM: finish the step, write a checkpoint, exit 130. A second signal exits at once.
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(EXIT.interrupted);
    console.error(`\ntrain: ${sig}: stopping after this step and writing a checkpoint (${sig} again to quit at once)`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let run;
  try {
    // The notebooks' recipe runner, with the command's own run folder and --resume, and no reuse:
    // a command that was asked to train, trains.
    run = await runRecipe({
      recipe: pl.recipe,
      seed: pl.recipe.config.seed ?? 42,
      model: pl.modelId,
      data: taskData,
      trainExamples: limit,
      experiment: pl.experiment,
      resultsDir: pl.resultsDir,
      runDir,
      resume: v.resume ? true : v['resume-if-possible'] ? 'if-possible' : false,
      reuse: false,
      progress: true,
      signal: stop.signal,
      // Written synchronously as each step ends, so a reader sees a step the moment it is done.
      onStep: pl.stepLog ? (log) => appendFileSync(pl.stepLog!, `${JSON.stringify(log)}\n`) : undefined,
      onEval: (e) => console.log(`eval at step ${e.step}: ${Object.entries(e.metrics).map(([k, x]) => `${k} ${(x * 100).toFixed(2)}`).join(', ')} (${e.seconds.toFixed(1)} s)`),
      paperNote:
        'the papers report these tasks for pretrained checkpoints (AnglE Table 3: bert-base-uncased and LLaMA); ' +
        'the notebooks compare with their numbers, and a randomly initialised model has no paper cell',
      // The run folder is named by the run id, not by the key runRecipe records: the record names it, so `export --run` finds the weights.
      details: { preset: pl.preset?.name ?? null, runDir: portablePath(runDir) },
    });
  } catch (e) {
    if (!(e instanceof RunInterrupted)) throw e;
    console.error(`train: stopped at step ${e.steps} of ${e.totalSteps}; continue with: npm run train -- --task ${pl.taskName} --run-dir ${runDir} --resume (and the same options)`);
    return EXIT.interrupted;
  }
  const result = run.result!;
  const pct = (x: number | undefined) => (x === undefined ? 'n/a' : (x * 100).toFixed(2));
  console.log(`train: ${result.steps} steps in ${result.wallSeconds.toFixed(1)} s on ${backend.name}${result.resumedFrom ? ` (resumed from ${portablePath(result.resumedFrom)})` : ''}`);
  console.log(`  dev (${taskData.dev.name}) Spearman x100: final ${pct(result.final?.spearman)}, best ${pct(result.best?.value)} at step ${result.best?.step ?? 'n/a'}`);
  console.log(`  test (${taskData.test.name}) Spearman x100: ${pct(result.test?.metrics.spearman)} with ${result.test?.weights ?? 'n/a'}`);
  console.log(`  results: ${run.run.file}`);
  console.log(`  export: npm run export -- --run ${relativeOrAbsolute(run.run.file)} --out <dir> [--onnx]`);
  return EXIT.ok;
}

/** `path` relative to the working directory when it lies below it (what a user pastes), else absolute. */
function relativeOrAbsolute(path: string): string {
  const r = relative(process.cwd(), path);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : path;
}

process.on('unhandledRejection', (e) => process.exit(reportError('train', e)));
await runCommand('train', main);
