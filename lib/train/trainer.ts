/**
 * The training loop: batches -> BERT (training mode) -> pooling -> objective -> gradients ->
 * (clipping) -> AdamW with a scheduled learning rate; dev evaluation every N steps with the best
 * checkpoint kept by a named metric; checkpoints from which `run({ resume: true })` continues
 * exactly; a results file with provenance at the end.
 *
 * One optimiser step = `gradAccumulation` micro-batches of `batchSize` examples (gradients
 * averaged). Each step reads back one small tensor (the loss and its terms), so the loop does not
 * stall an asynchronous backend more than once per step.
 *
 * Everything that can be checked is checked in the constructor (data, objective/data fit, dev set,
 * schedule), so bad input fails before anything is written.
 */
import { copyFileSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { BertSentenceEncoder } from '../embed/encoder.js';
import { needsHiddenStates, parsePooling, pool, type Pooling } from '../embed/pooling.js';
import type { BertModel } from '../models/bert/model.js';
import { readSafetensors, serializeSafetensors, type TensorToWrite } from '../models/safetensors.js';
import type { HfTokenizer } from '../models/tokenizers/hf.js';
import { collectProvenance } from '../report/provenance.js';
import { newRunId, writeRunRecord, type RunRecord } from '../report/run-record.js';
import { writeDirectoryAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import { AdamW, gradientsByParameterName } from './adamw.js';
import { BatchPlan, type TrainingBatch } from './batching.js';
import {
  checkCheckpointFits,
  checkpointsDir,
  latestCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
  TRAINER_STATE_FORMAT,
  TRAINER_STATE_VERSION,
  type EvalLog,
  type StepLog,
  type TrainerState,
} from './checkpoint.js';
import { clipByGlobalNorm } from './clip.js';
import type { DevEvaluation } from './dev-evaluation.js';
import { validateExamples, type TrainingExamples } from './examples.js';
import { bindObjective, type ObjectiveConfig, type ObjectiveFn } from './objective.js';
import { checkSchedule, learningRate, warmupStepsFromFraction, type ScheduleConfig, type ScheduleName } from './schedule.js';

export interface TrainerConfig {
  objective: ObjectiveConfig;
  /** Pooling of the sentence embedding (default cls). */
  pooling?: Pooling | string;
  /** Token limit per text, special tokens included. */
  maxLength: number;
  /** Examples (pairs / triplets / sentences) per micro-batch. */
  batchSize: number;
  /** Micro-batches per optimiser step (default 1). */
  gradAccumulation?: number;
  /** Passes over the data (default 1); `maxSteps` caps the run instead when given. */
  epochs?: number;
  maxSteps?: number;
  lr: number;
  schedule?: ScheduleName;
  /** Warmup in steps, or as a fraction of the run (floored); default 0. */
  warmupSteps?: number;
  warmupFraction?: number;
  warmupStart?: 'one-step' | 'zero';
  weightDecay?: number;
  betas?: [number, number];
  eps?: number;
  /** Clip gradients to this global L2 norm (off when undefined). */
  maxGradNorm?: number;
  /** Shuffle the examples each epoch (default true). */
  shuffle?: boolean;
  seed?: number;
  dropLast?: boolean;
  /** Sets the model's hidden and attention dropout for this run (default: the model config's). */
  dropout?: number;
  /** Evaluate the dev set every N optimiser steps (requires `dev`). */
  evalEvery?: number;
  /** Evaluate the dev set after the last step (default true when a dev set is given). */
  evalAtEnd?: boolean;
  /** Dev metric that picks the best checkpoint (default 'spearman'); higher is better unless `lowerIsBetter`. */
  bestMetric?: string;
  lowerIsBetter?: boolean;
  /**
   * Token limit when embedding the dev set (default: the model's max positions, i.e. untruncated,
   * as SimCSE's and AnglE's evaluation; the golden runs' dev Spearman also needs the full length).
   */
  evalMaxLength?: number;
  evalBatchSize?: number;
  /** Write a checkpoint every N optimiser steps (requires `runDir`). */
  checkpointEvery?: number;
  /** Step checkpoints kept on disk (default 2; the best model is kept separately). */
  keepCheckpoints?: number;
}

export interface TrainerModel {
  model: BertModel;
  tokenizer: HfTokenizer;
  /** Hub id or path, for the results file. */
  id?: string;
  weightsSha256?: string;
  /** The model's directory; its config and tokenizer files are copied next to the best weights. */
  dir?: string;
}

export interface TrainerOptions {
  model: TrainerModel;
  train: TrainingExamples;
  dev?: DevEvaluation;
  /**
   * Evaluated once after the last step, on the best dev checkpoint when one was kept (its weights
   * are loaded back into the model, as SimCSE and AnglE report test numbers), else on the final weights.
   */
  test?: DevEvaluation;
  config: TrainerConfig;
  /** Checkpoints and the best model go here. */
  runDir?: string;
  /** Write `results/<experiment>/<run-id>.json` at the end. */
  experiment?: string;
  resultsDir?: string;
  /** The paper's numbers for this run's metrics, copied into the results file. */
  paper?: RunRecord['paper'];
  /** Recorded when there is no paper number for this run, saying why. */
  paperNote?: string;
  onStep?: (log: StepLog) => void;
  onEval?: (log: EvalLog) => void;
  /** Progress line (default: on). */
  progress?: boolean;
}

export interface RunOptions {
  /** Continue from the newest checkpoint in runDir (default false: start fresh). */
  resume?: boolean;
  /** Stop (without the end-of-run evaluation and results) once this many steps are done. */
  stopAfterSteps?: number;
}

export interface TrainResult {
  steps: number;
  log: StepLog[];
  evals: EvalLog[];
  best?: { metric: string; value: number; step: number };
  /** Dev metrics after the last step (when evaluated). */
  final?: Record<string, number>;
  /** Test metrics and which weights produced them. */
  test?: { metrics: Record<string, number>; weights: string };
  resumedFrom?: string;
  resultsFile?: string;
  bestModelDir?: string;
  wallSeconds: number;
  /** Whether the run reached its last step (false when `stopAfterSteps` ended it). */
  complete: boolean;
}

interface Resolved {
  pooling: Pooling;
  accumulation: number;
  totalSteps: number;
  stepsPerEpoch: number;
  schedule: ScheduleConfig;
  seed: number;
}

function positiveInt(v: number | undefined, what: string): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new InputError(`${what} must be a positive integer, got ${v}`);
}

export class Trainer {
  readonly plan: BatchPlan;
  readonly resolved: Resolved;
  private readonly objective: ObjectiveFn;

  constructor(readonly o: TrainerOptions) {
    const c = o.config;
    validateExamples(o.train);
    positiveInt(c.batchSize, 'batchSize');
    positiveInt(c.gradAccumulation, 'gradAccumulation');
    positiveInt(c.epochs, 'epochs');
    positiveInt(c.maxSteps, 'maxSteps');
    positiveInt(c.evalEvery, 'evalEvery');
    positiveInt(c.checkpointEvery, 'checkpointEvery');
    positiveInt(c.keepCheckpoints, 'keepCheckpoints');
    if (c.evalEvery !== undefined && !o.dev) {
      throw new InputError(`evalEvery is ${c.evalEvery} but no dev set was given: pass 'dev' (e.g. stsDevEvaluation(loadStsBenchmark('dev'))) or drop evalEvery`);
    }
    if (c.checkpointEvery !== undefined && !o.runDir) throw new InputError(`checkpointEvery needs a runDir to write checkpoints into`);
    if (c.maxGradNorm !== undefined && !(c.maxGradNorm > 0)) throw new InputError(`maxGradNorm must be > 0, got ${c.maxGradNorm}`);
    if (c.dropout !== undefined && !(c.dropout >= 0 && c.dropout < 1)) throw new InputError(`dropout must be in [0, 1), got ${c.dropout}`);
    if (c.maxLength > o.model.model.config.maxPositions) {
      throw new InputError(`maxLength ${c.maxLength} exceeds the model's max_position_embeddings ${o.model.model.config.maxPositions}`);
    }
    this.objective = bindObjective(c.objective, o.train.kind);
    const seed = c.seed ?? 42;
    this.plan = new BatchPlan(o.train, o.model.tokenizer, { batchSize: c.batchSize, maxLength: c.maxLength, shuffle: c.shuffle ?? true, seed, dropLast: c.dropLast });
    const accumulation = c.gradAccumulation ?? 1;
    const stepsPerEpoch = Math.ceil(this.plan.batchesPerEpoch / accumulation);
    const totalSteps = c.maxSteps ?? (c.epochs ?? 1) * stepsPerEpoch;
    const warmupSteps = c.warmupSteps ?? (c.warmupFraction !== undefined ? warmupStepsFromFraction(c.warmupFraction, totalSteps) : 0);
    const schedule: ScheduleConfig = { name: c.schedule ?? 'linear', lr: c.lr, warmupSteps, totalSteps, warmupStart: c.warmupStart };
    checkSchedule(schedule);
    this.resolved = { pooling: parsePooling(c.pooling ?? 'cls'), accumulation, totalSteps, stepsPerEpoch, schedule, seed };
  }

  /** The settings a resumed run must share with the run that wrote its checkpoint. */
  private fingerprint(): string {
    const c = this.o.config;
    const r = this.resolved;
    const identity = {
      objective: c.objective,
      pooling: r.pooling,
      maxLength: c.maxLength,
      batchSize: c.batchSize,
      accumulation: r.accumulation,
      schedule: r.schedule,
      weightDecay: c.weightDecay ?? 0.01,
      betas: c.betas ?? [0.9, 0.999],
      eps: c.eps ?? 1e-8,
      maxGradNorm: c.maxGradNorm ?? null,
      shuffle: c.shuffle ?? true,
      seed: r.seed,
      dropLast: c.dropLast ?? false,
      dropout: c.dropout ?? null,
      data: { name: this.o.train.name, kind: this.o.train.kind, n: this.o.train.items.length },
    };
    return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
  }

  private dataSha256(): string {
    const h = createHash('sha256');
    for (const e of this.o.train.items) h.update(JSON.stringify(e, ['a', 'b', 'label', 'anchor', 'positive', 'negative', 'text'])).update('\n');
    return h.digest('hex');
  }

  /** Loss of one micro-batch and gradients by canonical parameter name; caller disposes. */
  private microStep(b: TrainingBatch): { loss: tf.Scalar; terms: Record<string, tf.Scalar>; grads: Map<string, tf.Tensor> } {
    const m = this.o.model.model;
    const pooling = this.resolved.pooling;
    const hidden = needsHiddenStates(pooling);
    let terms: Record<string, tf.Scalar> = {};
    const vars = [...m.params.values()];
    const { value, grads } = tf.variableGrads(() => {
      const out = m.forward(b.tokens, { training: true, outputHiddenStates: hidden });
      const mask = tf.tensor2d(b.tokens.attentionMask, [b.tokens.batch, b.tokens.seqLen], 'int32');
      const emb = pool(pooling, { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, attentionMask: mask });
      const r = this.objective(emb, { labels: b.labels, keys: b.keys });
      terms = Object.fromEntries(Object.entries(r.terms).map(([k, t]) => [k, tf.keep(t)]));
      return r.total;
    }, vars);
    return { loss: value, terms, grads: gradientsByParameterName(m.params, grads) };
  }

  private encoderForEval(): BertSentenceEncoder {
    const c = this.o.config;
    return new BertSentenceEncoder(this.o.model, { pooling: this.resolved.pooling, maxLength: c.evalMaxLength ?? this.o.model.model.config.maxPositions, batchSize: c.evalBatchSize ?? 64 });
  }

  private async evaluate(step: number): Promise<EvalLog> {
    const t0 = performance.now();
    const metrics = await this.o.dev!.evaluate(this.encoderForEval());
    const log: EvalLog = { step, metrics, seconds: (performance.now() - t0) / 1000 };
    this.o.onEval?.(log);
    return log;
  }

  private async weightsOnHost(): Promise<Map<string, { data: Float32Array; shape: number[] }>> {
    const out = new Map<string, { data: Float32Array; shape: number[] }>();
    for (const [name, v] of this.o.model.model.params) out.set(name, { data: (await v.data()) as Float32Array, shape: v.shape.slice() });
    return out;
  }

  /** Writes the current weights as a loadable model directory `<runDir>/best` (atomically). */
  private async saveBest(meta: Record<string, string>): Promise<string> {
    const final = join(this.o.runDir!, 'best');
    const weights = await this.weightsOnHost();
    writeDirectoryAtomicSync(final, (tmp) => {
      const tensors: Record<string, TensorToWrite> = {};
      for (const [name, t] of weights) tensors[name] = { shape: t.shape, data: t.data };
      writeFileSync(join(tmp, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt', ...meta }));
      const src = this.o.model.dir;
      if (src) {
        for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt']) {
          if (existsSync(join(src, f))) copyFileSync(join(src, f), join(tmp, f));
        }
      }
      writeFileSync(join(tmp, 'best.json'), JSON.stringify(meta, null, 1));
    });
    return final;
  }

  private pruneCheckpoints(): void {
    const keep = this.o.config.keepCheckpoints ?? 2;
    const root = checkpointsDir(this.o.runDir!);
    const dirs = readdirSync(root).filter((e) => /^step-\d+$/.test(e)).sort();
    for (const d of dirs.slice(0, Math.max(0, dirs.length - keep))) rmSync(join(root, d), { recursive: true, force: true });
  }

  async run(opts: RunOptions = {}): Promise<TrainResult> {
    const c = this.o.config;
    const r = this.resolved;
    const m = this.o.model.model;
    const started = new Date();
    // Taken now, not at the end: the commit and backend that the run starts with are the ones
    // whose code it runs (a long run may outlive several commits).
    const provenance = collectProvenance();
    if (c.dropout !== undefined) {
      m.config.hiddenDropout = c.dropout;
      m.config.attentionDropout = c.dropout;
    }
    const shapes = new Map<string, number[]>([...m.params].map(([n, v]) => [n, v.shape.slice()]));
    const optimizer = new AdamW(m.params, { betas: c.betas, eps: c.eps, weightDecay: c.weightDecay ?? 0.01 });
    const fingerprint = this.fingerprint();
    let state: TrainerState = {
      format: TRAINER_STATE_FORMAT,
      version: TRAINER_STATE_VERSION,
      step: 0,
      epoch: 0,
      batchInEpoch: 0,
      dropoutCounter: 0,
      seed: r.seed,
      configFingerprint: fingerprint,
      modelShapes: Object.fromEntries(shapes),
      log: [],
      evals: [],
      elapsedSeconds: 0,
      tokensSeen: 0,
    };
    let resumedFrom: string | undefined;
    if (opts.resume) {
      if (!this.o.runDir) throw new InputError('resume needs the runDir of the run to continue');
      const dir = latestCheckpoint(this.o.runDir);
      if (dir) {
        const ckpt = loadCheckpoint(dir);
        checkCheckpointFits(ckpt, shapes);
        if (ckpt.state.configFingerprint !== fingerprint) {
          throw new InputError(
            'this checkpoint was written by a run with other settings (objective, batching, schedule, seed or data differ); resume with the same configuration or start a new runDir',
            { file: join(dir, 'trainer-state.json') },
          );
        }
        optimizer.importState(ckpt.optimizer, join(dir, 'optimizer.safetensors'));
        for (const [name, v] of m.params) {
          const w = ckpt.weights.get(name)!;
          tf.tidy(() => v.assign(tf.tensor(w.data, w.shape, 'float32')));
        }
        state = ckpt.state;
        resumedFrom = dir;
      }
    }
    m.dropoutCounter = state.dropoutCounter;
    const elapsedBefore = state.elapsedSeconds;
    const t0 = performance.now();
    const progress = new Progress({ label: 'training', total: r.totalSteps, unit: 'steps', enabled: this.o.progress ?? true });
    progress.tick(state.step);
    let bestModelDir: string | undefined = this.o.runDir && existsSync(join(this.o.runDir, 'best')) && state.best ? join(this.o.runDir, 'best') : undefined;
    const better = (v: number, best?: number) => best === undefined || (c.lowerIsBetter ? v < best : v > best);
    const bestMetric = c.bestMetric ?? 'spearman';
    let final: Record<string, number> | undefined;

    try {
      while (state.step < r.totalSteps) {
        if (opts.stopAfterSteps !== undefined && state.step >= opts.stopAfterSteps) break;
        const stepStart = performance.now();
        const lr = learningRate(r.schedule, state.step);
        const epochAtStart = state.epoch;
        // Micro-batches of this step; a step does not cross an epoch boundary.
        const micro: TrainingBatch[] = [];
        while (micro.length < r.accumulation) {
          micro.push(this.plan.batch(state.epoch, state.batchInEpoch));
          state.batchInEpoch++;
          if (state.batchInEpoch >= this.plan.batchesPerEpoch) {
            state.epoch++;
            state.batchInEpoch = 0;
            break;
          }
        }
        let tokens = 0;
        const lossValues = tf.tidy(() => {
          let sumGrads: Map<string, tf.Tensor> | undefined;
          const losses: tf.Scalar[] = [];
          const termSums: Record<string, tf.Scalar> = {};
          // Terms were tf.keep()-ed out of the gradient scope; no tidy frees them, so we do.
          const kept: tf.Tensor[] = [];
          for (const b of micro) {
            tokens += b.realTokens;
            const s = this.microStep(b);
            losses.push(s.loss);
            kept.push(...Object.values(s.terms));
            for (const [k, t] of Object.entries(s.terms)) termSums[k] = termSums[k] ? tf.add(termSums[k], t) : t;
            if (!sumGrads) sumGrads = s.grads;
            else for (const [k, g] of s.grads) sumGrads.set(k, sumGrads.has(k) ? tf.add(sumGrads.get(k)!, g) : g);
          }
          const scale = 1 / micro.length;
          let grads = sumGrads!;
          if (micro.length > 1) grads = new Map([...grads].map(([k, g]) => [k, tf.mul(g, scale)]));
          let norm: tf.Scalar | undefined;
          if (c.maxGradNorm !== undefined) ({ grads, norm } = clipByGlobalNorm(grads, c.maxGradNorm));
          optimizer.step(grads, lr);
          const names = Object.keys(termSums);
          const loss = tf.mul(tf.addN(losses), scale) as tf.Scalar;
          const parts = [loss, ...names.map((k) => tf.mul(termSums[k], scale) as tf.Scalar), ...(norm ? [norm] : [])];
          const values = tf.stack(parts);
          tf.dispose(kept);
          return { values, names };
        });
        const values = (await lossValues.values.data()) as Float32Array;
        lossValues.values.dispose();
        const terms: Record<string, number> = {};
        lossValues.names.forEach((k, i) => (terms[k] = values[i + 1]));
        const log: StepLog = {
          step: state.step,
          epoch: epochAtStart,
          lr,
          loss: values[0],
          terms,
          tokens,
          seconds: (performance.now() - stepStart) / 1000,
        };
        if (c.maxGradNorm !== undefined) log.gradNorm = values[values.length - 1];
        if (!Number.isFinite(log.loss)) {
          throw new Error(`training diverged: loss is ${log.loss} at step ${state.step} (lr ${lr}); lower the learning rate or check the data`);
        }
        state.log.push(log);
        state.step++;
        state.tokensSeen += tokens;
        state.dropoutCounter = m.dropoutCounter;
        state.elapsedSeconds = elapsedBefore + (performance.now() - t0) / 1000;
        this.o.onStep?.(log);
        progress.tick(1, `loss ${log.loss.toFixed(4)} lr ${lr.toExponential(2)} ${Math.round(tokens / Math.max(log.seconds, 1e-9))} tok/s`);

        const last = state.step === r.totalSteps;
        const evalNow = this.o.dev && ((c.evalEvery !== undefined && state.step % c.evalEvery === 0) || (last && (c.evalAtEnd ?? true)));
        if (evalNow) {
          const ev = await this.evaluate(state.step);
          state.evals.push(ev);
          if (last) final = ev.metrics;
          const v = ev.metrics[bestMetric];
          if (v === undefined) throw new InputError(`dev evaluation '${this.o.dev!.name}' returned no metric '${bestMetric}' (it returned ${Object.keys(ev.metrics).join(', ')})`);
          if (better(v, state.best?.value)) {
            state.best = { metric: bestMetric, value: v, step: state.step };
            if (this.o.runDir) bestModelDir = await this.saveBest({ step: String(state.step), metric: bestMetric, value: String(v), dev: this.o.dev!.name });
          }
        }
        if (this.o.runDir && c.checkpointEvery !== undefined && (state.step % c.checkpointEvery === 0 || last)) {
          saveCheckpoint(this.o.runDir, state, await this.weightsOnHost(), await optimizer.exportState());
          this.pruneCheckpoints();
        }
      }
    } finally {
      optimizer.dispose();
    }

    const complete = state.step >= r.totalSteps;
    let test: TrainResult['test'];
    if (complete && this.o.test) {
      let weights = `final (step ${state.step})`;
      if (bestModelDir && state.best && state.best.step !== state.step) {
        const saved = readSafetensors(join(bestModelDir, 'model.safetensors')).tensors;
        for (const [name, v] of m.params) {
          const t = saved.get(name);
          if (t) tf.tidy(() => v.assign(tf.tensor(t.data, t.shape, 'float32')));
        }
        weights = `best dev ${state.best.metric} (step ${state.best.step})`;
      }
      const t1 = performance.now();
      test = { metrics: await this.o.test.evaluate(this.encoderForEval()), weights };
      this.o.onEval?.({ step: state.step, metrics: Object.fromEntries(Object.entries(test.metrics).map(([k, v]) => [`test_${k}`, v])), seconds: (performance.now() - t1) / 1000 });
    }
    const wallSeconds = (performance.now() - t0) / 1000;
    const result: TrainResult = { steps: state.step, log: state.log, evals: state.evals, best: state.best, final, test, resumedFrom, bestModelDir, wallSeconds, complete };
    if (complete && this.o.experiment) {
      const metrics: Record<string, number> = {};
      if (final) for (const [k, v] of Object.entries(final)) metrics[`dev_${k}`] = v * 100;
      if (state.best) metrics[`best_dev_${state.best.metric}`] = state.best.value * 100;
      if (test) for (const [k, v] of Object.entries(test.metrics)) metrics[`test_${k}`] = v * 100;
      metrics.final_loss = state.log[state.log.length - 1]?.loss ?? NaN;
      const record: RunRecord = {
        experiment: this.o.experiment,
        runId: newRunId(started),
        startedAt: started.toISOString(),
        finishedAt: new Date().toISOString(),
        // Training (across resumes) plus this session's final evaluations.
        wallSeconds: elapsedBefore + (performance.now() - t0) / 1000,
        seed: r.seed,
        config: { ...c, resolved: { ...r }, resumedFrom: resumedFrom ?? null, decayedParameters: optimizer.decayedParameters().length },
        data: [{ id: this.o.train.name, split: 'train', rows: this.o.train.items.length, sha256: this.dataSha256() }, ...(this.o.dev ? [{ id: this.o.dev.name, split: 'dev', rows: this.o.dev.rows ?? 0 }] : []), ...(this.o.test ? [{ id: this.o.test.name, split: 'test', rows: this.o.test.rows ?? 0 }] : [])],
        model: { id: this.o.model.id ?? 'unnamed model', weightsSha256: this.o.model.weightsSha256 },
        provenance,
        metrics,
        paper: this.o.paper,
        ...(this.o.paper ? {} : { paperNote: this.o.paperNote ?? 'no paper cell was given for this run' }),
        details: { log: state.log, evals: state.evals, best: state.best ?? null, testWeights: test?.weights ?? null, tokensSeen: state.tokensSeen },
      };
      result.resultsFile = writeRunRecord(record, this.o.resultsDir);
    }
    return result;
  }
}
