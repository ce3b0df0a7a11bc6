/**
 * A training run in its own process, for the resume test: prints one JSON line per step
 * ({"step", "loss"}) and, with --kill-at N, kills itself with SIGKILL right after step N's loss is
 * known and before its checkpoint is written — an abrupt death, no cleanup handlers run.
 *
 *   tsx test/helpers/train-child.ts <modelDir> <runDir> [--kill-at N] [--resume]
 */
import { initBackend } from '../../lib/backend/index.js';
import { loadModel } from '../../lib/models/auto.js';
import { Trainer } from '../../lib/train/trainer.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './train-fixtures.js';

const [modelDir, runDir, ...rest] = process.argv.slice(2);
const killAt = rest.includes('--kill-at') ? Number(rest[rest.indexOf('--kill-at') + 1]) : undefined;
await initBackend('cpu', { quiet: true });
const m = await loadModel(modelDir);
const trainer = new Trainer({
  model: m,
  train: smallPairs(),
  runDir,
  progress: false,
  config: { ...SMALL_TRAIN_CONFIG, checkpointEvery: 1, keepCheckpoints: 3 },
  onStep: (log) => {
    process.stdout.write(JSON.stringify({ step: log.step, loss: log.loss }) + '\n');
    if (log.step === killAt) process.kill(process.pid, 'SIGKILL');
  },
});
const r = await trainer.run({ resume: rest.includes('--resume') });
process.stdout.write(JSON.stringify({ done: r.steps, resumedFrom: r.resumedFrom ?? null }) + '\n');
