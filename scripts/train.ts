/**
 * Headless training: one model, one training set, the AnglE (or SimCSE/SimACE/ArcCon) objective,
 * dev evaluation, test evaluation on the best dev checkpoint, a results file.
 *
 *   npm run train -- --task stsb [--model <dir|hub id>] [--objective angle] [--weights cosine=1,ibn=1,angle=1]
 *                    [--taus cosine=20,ibn=20,angle=1] [--pooling cls] [--max-length 32] [--batch-size 32]
 *                    [--epochs 1 | --max-steps N] [--lr 5e-5] [--warmup 0.1] [--schedule linear] [--seed 42]
 *                    [--eval-every N] [--checkpoint-every N] [--run-dir runs/<id>] [--resume]
 *                    [--experiment train-<task>] [--backend cpu] [--data <dir>] [--dropout p] [--limit N]
 *
 * Tasks: stsb, sick (graded scores; dev/test Spearman), mrpc, qnli, qqp, gis (binary labels; QNLI
 * and QQP report their validation split as test, as AnglE does), nli (triplets, evaluated on STS-B).
 * The model defaults to ANGLE_MODEL.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '../lib/backend/index.js';
import { envConfig } from '../lib/config.js';
import { task } from '../lib/experiments/tasks.js';
import { loadModel } from '../lib/models/auto.js';
import { collectProvenance } from '../lib/report/provenance.js';
import { newRunId } from '../lib/report/run-record.js';
import { portableModelIdentity, writeTrainingRecord } from '../lib/report/training-record.js';
import type { TrainingExamples } from '../lib/train/examples.js';
import type { ObjectiveConfig } from '../lib/train/objective.js';
import { Trainer } from '../lib/train/trainer.js';

const { values } = parseArgs({
  options: {
    task: { type: 'string' },
    model: { type: 'string' },
    objective: { type: 'string', default: 'angle' },
    weights: { type: 'string' },
    taus: { type: 'string' },
    pooling: { type: 'string', default: 'cls' },
    'max-length': { type: 'string', default: '32' },
    'batch-size': { type: 'string', default: '32' },
    epochs: { type: 'string', default: '1' },
    'max-steps': { type: 'string' },
    lr: { type: 'string', default: '5e-5' },
    warmup: { type: 'string', default: '0.1' },
    schedule: { type: 'string', default: 'linear' },
    seed: { type: 'string', default: '42' },
    'eval-every': { type: 'string' },
    'checkpoint-every': { type: 'string' },
    'run-dir': { type: 'string' },
    resume: { type: 'boolean', default: false },
    experiment: { type: 'string' },
    backend: { type: 'string' },
    data: { type: 'string' },
    dropout: { type: 'string' },
    limit: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

function usage(code: number): never {
  console.log('usage: npm run train -- --task stsb|sick|mrpc|qnli|qqp|gis|nli [--model dir|id] [options]; see scripts/train.ts');
  process.exit(code);
}
if (values.help) usage(0);
if (!values.task) usage(2);

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) {
    console.error(`train: --${name} must be a number, got '${v}'`);
    process.exit(2);
  }
  return n;
}

function keyValues(name: string, v: string | undefined): Record<string, number> | undefined {
  if (!v) return undefined;
  const out: Record<string, number> = {};
  for (const part of v.split(',')) {
    const [k, x] = part.split('=');
    const n = Number(x);
    if (!k || !Number.isFinite(n)) {
      console.error(`train: --${name} expects name=value pairs like cosine=1,ibn=1,angle=1; got '${part}'`);
      process.exit(2);
    }
    out[k.trim()] = n;
  }
  return out;
}

const dataDir = values.data ?? envConfig().dataDir;

try {
  await initBackend(values.backend);
  const modelId = values.model ?? envConfig().model;
  if (!modelId) {
    console.error('train: no model: pass --model <dir or hub id> or set ANGLE_MODEL');
    process.exit(2);
  }
  const data = task(values.task!).load({ dataDir });
  const limit = num('limit', values.limit);
  if (limit !== undefined) data.train = { ...data.train, name: `${data.train.name} (first ${limit})`, items: data.train.items.slice(0, limit) } as TrainingExamples;
  const m = await loadModel(modelId);
  const weights = keyValues('weights', values.weights);
  const taus = keyValues('taus', values.taus);
  let objective: ObjectiveConfig;
  switch (values.objective) {
    case 'angle':
      objective = { name: 'angle', loss: { preset: 'paper', ...(weights ? { weights } : {}), ...(taus ? { taus } : {}) } };
      break;
    case 'simcse':
    case 'simace':
    case 'arccon':
      objective = { name: values.objective } as ObjectiveConfig;
      break;
    default:
      console.error(`train: unknown objective '${values.objective}': expected angle, simcse, simace or arccon`);
      process.exit(2);
  }
  const experiment = values.experiment ?? `train-${values.task}`;
  const runDir = values['run-dir'] ?? join(envConfig().resultsDir, experiment, 'runs', newRunId());
  console.log(`train: ${data.train.name}, ${data.train.items.length} examples; model ${modelId}; run dir ${runDir}`);
  const trainer = new Trainer({
    model: m,
    train: data.train,
    dev: data.dev,
    test: data.test,
    runDir,
    config: {
      objective,
      pooling: values.pooling,
      maxLength: num('max-length', values['max-length'])!,
      batchSize: num('batch-size', values['batch-size'])!,
      epochs: num('epochs', values.epochs),
      maxSteps: num('max-steps', values['max-steps']),
      lr: num('lr', values.lr)!,
      schedule: values.schedule as 'linear',
      warmupFraction: num('warmup', values.warmup),
      seed: num('seed', values.seed),
      evalEvery: num('eval-every', values['eval-every']),
      checkpointEvery: num('checkpoint-every', values['checkpoint-every']),
      dropout: num('dropout', values.dropout),
    },
    onEval: (e) => console.log(`eval at step ${e.step}: ${Object.entries(e.metrics).map(([k, v]) => `${k} ${(v * 100).toFixed(2)}`).join(', ')} (${e.seconds.toFixed(1)} s)`),
  });
  const provenance = collectProvenance();
  const r = await trainer.run({ resume: values.resume });
  const pct = (v: number | undefined) => (v === undefined ? 'n/a' : (v * 100).toFixed(2));
  console.log(`train: ${r.steps} steps in ${r.wallSeconds.toFixed(1)} s${r.resumedFrom ? ` (resumed from ${r.resumedFrom})` : ''}`);
  console.log(`  dev (${data.dev.name}) Spearman x100: final ${pct(r.final?.spearman)}, best ${pct(r.best?.value)} at step ${r.best?.step ?? 'n/a'}`);
  console.log(`  test (${data.test.name}) Spearman x100: ${pct(r.test?.metrics.spearman)} with ${r.test?.weights ?? 'n/a'}`);
  const resultsFile = writeTrainingRecord(r, {
    experiment,
    provenance,
    model: portableModelIdentity(m),
    paperNote:
      'the papers report these tasks for pretrained checkpoints (AnglE Table 3: bert-base-uncased and LLaMA); ' +
      'the notebooks compare with their numbers, and a randomly initialised model has no paper cell',
  });
  console.log(`  results: ${resultsFile}`);
} catch (e) {
  const err = e as Error;
  console.error(`train: ${err.name === 'InputError' || err.name === 'UnavailableError' ? err.message : err.stack}`);
  process.exit(1);
}
