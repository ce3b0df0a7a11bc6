/**
 * The training loop over any TextModel's trainable parameters: batches -> model (training mode)
 * -> pooling -> objective -> gradients -> (clipping) -> AdamW with a scheduled learning rate; dev
 * evaluation every N steps keeping the best model by the evaluator's primary metric; checkpoints
 * from which `run({ resume: true })` continues exactly; a final test evaluation on the best weights.
 *
 * `run()` is a sequence of phases, each a method below: restore (a fresh state or the newest
 * checkpoint) -> step loop (optimizer step, evaluation and best model, checkpoint; stops early
 * when the abort signal fires, after writing a checkpoint) -> final test. It returns a
 * `TrainResult` that holds everything a results file needs; writing that file is lib/report's
 * job (`writeTrainingRecord`), not the trainer's.
 *
 * One optimiser step = `gradAccumulation` micro-batches of `batchSize` examples (gradients
 * averaged). Frozen parameters (TextModel.setTrainable) get no gradient, no optimizer state, and
 * are not written to checkpoints: a checkpoint of an adapter run holds the adapter only.
 *
 * Everything that can be checked is checked in the constructor (data, objective/data fit, dev set,
 * schedule), so bad input fails before anything is written.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { parseTrainingPrecision, withTrainingPrecision, type TrainingPrecision } from '../backend/training-precision.js';
import { PooledSentenceEncoder } from '../embed/encoder.js';
import { poolingModuleOf } from '../embed/pooling-module.js';
import { parsePooling, type Pooling } from '../embed/pooling.js';
import type { EvaluationResult, Evaluator } from '../eval/evaluator.js';
import { ATTENTION_KINDS, type AttentionKind, type LoadedModel } from '../models/types.js';
import { loadModel } from '../models/auto.js';
import { teacherLookup, type TeacherOptions, type TeacherVectors } from '../losses/teacher-alignment.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import { AdamW } from './adamw.js';
import { BatchPlan, type TrainingBatch } from './batching.js';
import { bestModelDir, restoreBestWeights, saveBestModel, weightsOnHost } from './best-model.js';
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
import { validateExamples, type TrainingExamples } from './examples.js';
import { bindObjective, type BoundObjective, type ObjectiveConfig } from './objective.js';
import { checkSchedule, learningRate, warmupStepsFromFraction, type ScheduleConfig, type ScheduleName } from './schedule.js';
import { StepGraphs, type StepGraphOptions, type StepGraphStats } from './step-graphs.js';
import { optimizerStep, type StepContext } from './training-step.js';

export interface TrainerConfig {
  objective: ObjectiveConfig;
  /** Pooling of the sentence embedding (default: the model's pooling module, lib/embed/pooling-module.ts: its architecture's, BERT cls). */
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
  /** Evaluate the dev set every N optimiser steps, or at the end of every epoch (requires `dev`). */
  evalEvery?: number | 'epoch';
  /** Evaluate the dev set after the last step (default true when a dev set is given). */
  evalAtEnd?: boolean;
  /** Dev metric that picks the best checkpoint (default: the dev evaluator's primary metric). */
  bestMetric?: string;
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
  /**
   * Recompute each layer in the backward pass instead of keeping its activations (activation
   * checkpointing, lib/ops/checkpoint.ts): the same gradients, a layer's input per layer kept
   * instead of everything it saves, one more forward pass of compute (default false).
   */
  checkpointing?: boolean;
  /**
   * 'blocked': attention over key blocks with an online softmax, recomputed in backward, keeping
   * no [T, T] scores (lib/ops/blocked-attention.ts; dropout masks drawn per block); 'fused': each
   * layer's attention forward and backward as one kernel on cuda (lib/ops/fused-attention.ts; plain
   * attention on the other backends); default 'plain'.
   */
  attention?: AttentionKind;
  /**
   * Matmul precision (lib/backend/training-precision.ts): 'tf32' (default; float32 off cuda), 'bf16'
   * or 'fp16' (on cuda tensor cores on 16-bit-rounded inputs with float32 accumulation; on cpu the
   * same rounding emulated). Weights, AdamW state, LayerNorm, softmax and the loss stay float32.
   */
  precision?: TrainingPrecision;
  /**
   * Record each fixed-shape training step once and replay it (lib/train/step-graphs.ts): on the cuda
   * backend one CUDA graph launch per step instead of a host dispatch per kernel, with the numbers of
   * the eager steps. A shape runs two eager steps, is captured on its third, replayed from then on;
   * a shape that cannot be captured, and every step on a backend that cannot record (cpu, wasm),
   * runs eagerly, and the run says why once. `true`, or the options: `bucketLengths` pads every
   * batch up to the first of these lengths that holds it, so batches of other lengths share a graph
   * (masked padding: the embeddings are those of the unpadded batch up to float rounding, so a run
   * with buckets is not bit-identical to one without). Default off.
   */
  stepGraphs?: boolean | StepGraphOptions;
}

export interface TrainerOptions {
  /** The model to train (in place) and where it came from (its directory's config and tokenizer are copied beside the best weights). */
  model: LoadedModel | Pick<LoadedModel, 'model' | 'tokenizer'>;
  train: TrainingExamples;
  /** Evaluated every `evalEvery` steps; its primary metric selects the best model. */
  dev?: Evaluator;
  /**
   * Evaluated once after the last step, on the best dev checkpoint when one was kept (its weights
   * are loaded back into the model, as SimCSE and AnglE report test numbers), else on the final weights.
   */
  test?: Evaluator;
  config: TrainerConfig;
  /**
   * Evaluated with the dev set at every dev evaluation, on the same weights; their metrics join the
   * evaluation log as `<key>.<metric>` (e.g. `geometry.alignment`), never select checkpoints. For
   * tracking a run, e.g. its alignment and uniformity (lib/eval/align-uniform-evaluator.ts).
   */
  probes?: Record<string, Evaluator>;
  /** Checkpoints and the best model go here. */
  runDir?: string;
  onStep?: (log: StepLog) => void;
  onEval?: (log: EvalLog) => void;
  /** Progress line (default: on). */
  progress?: boolean;
}

export interface RunOptions {
  /**
   * Continue from the newest checkpoint in runDir: `true` requires one (an error otherwise, so a
   * typo in the run directory does not silently start over), `'if-possible'` starts fresh when
   * there is none. Default false: start fresh.
   */
  resume?: boolean | 'if-possible';
  /** Stop (without the end-of-run evaluation) once this many steps are done. */
  stopAfterSteps?: number;
  /**
   * Stop early when this fires (Ctrl-C, a notebook interrupt): the step in flight finishes, a
   * checkpoint is written when the run has a runDir, and run() returns with `interrupted: true`.
   */
  signal?: AbortSignal;
}

/** The dev/test evaluation of one step, kept whole (predictions included) for the results. */
export interface TestEvaluation extends EvaluationResult {
  /** Which weights were evaluated, e.g. "best dev spearman (step 60)". */
  weights: string;
  evaluator: string;
  rows: number;
}

export interface TrainResult {
  steps: number;
  log: StepLog[];
  evals: EvalLog[];
  best?: { metric: string; value: number; step: number };
  /** Dev metrics after the last step (when evaluated). */
  final?: Record<string, number>;
  /** Test metrics, per-item predictions and which weights produced them. */
  test?: TestEvaluation;
  resumedFrom?: string;
  bestModelDir?: string;
  /** When the run first started (also across resumes). */
  startedAt: string;
  /** Training and evaluation time across every session of the run. */
  wallSeconds: number;
  tokensSeen: number;
  /** Whether the run reached its last step (false when stopped early). */
  complete: boolean;
  /** Whether the abort signal ended it. */
  interrupted: boolean;
  /** With `stepGraphs`: how this session's steps ran (eager, captured, replayed) and which shapes stayed eager and why. */
  stepGraphs?: StepGraphStats;
  /** What a results file records about the run's inputs and settings. */
  identity: TrainingIdentity;
}

/** The settings and data of a run, as its results file records them. */
export interface TrainingIdentity {
  config: TrainerConfig;
  resolved: Resolved;
  train: { id: string; rows: number; sha256: string };
  dev?: { id: string; rows: number };
  test?: { id: string; rows: number };
  /** Parameters trained (all, or the names of a subset). */
  trainableParameters: number;
  frozenParameters: number;
  decayedParameters: number;
}

export interface Resolved {
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

/** What one run() call carries between its phases. */
interface Session {
  state: TrainerState;
  optimizer: AdamW;
  objective: BoundObjective;
  /** The recorded steps, when `stepGraphs` is on. */
  graphs?: StepGraphs;
  /** The step-graph reasons already said (each once). */
  graphNotes: Set<string>;
  graphStats?: StepGraphStats;
  /** The model's trainable parameters and the objective's own (e.g. SBERT's classifier). */
  trainable: Map<string, tf.Variable>;
  /** The model's trainable parameters only (what the best model saves). */
  modelTrainable: Map<string, tf.Variable>;
  resumedFrom?: string;
  bestModelDir?: string;
  final?: Record<string, number>;
  elapsedBefore: number;
  t0: number;
}

export class Trainer {
  readonly plan: BatchPlan;
  readonly resolved: Resolved;

  constructor(readonly o: TrainerOptions) {
    const c = o.config;
    validateExamples(o.train);
    positiveInt(c.batchSize, 'batchSize');
    positiveInt(c.gradAccumulation, 'gradAccumulation');
    positiveInt(c.epochs, 'epochs');
    positiveInt(c.maxSteps, 'maxSteps');
    if (c.evalEvery !== 'epoch') positiveInt(c.evalEvery, 'evalEvery');
    positiveInt(c.checkpointEvery, 'checkpointEvery');
    positiveInt(c.keepCheckpoints, 'keepCheckpoints');
    if (o.probes && !o.dev) throw new InputError('probes are evaluated with the dev set: pass dev as well');
    if (c.evalEvery !== undefined && !o.dev) {
      throw new InputError(`evalEvery is ${c.evalEvery} but no dev set was given: pass 'dev' (e.g. stsEvaluator(loadStsBenchmark('dev'))) or drop evalEvery`);
    }
    if (c.checkpointEvery !== undefined && !o.runDir) throw new InputError(`checkpointEvery needs a runDir to write checkpoints into`);
    if (c.maxGradNorm !== undefined && !(c.maxGradNorm > 0)) throw new InputError(`maxGradNorm must be > 0, got ${c.maxGradNorm}`);
    if (c.dropout !== undefined && !(c.dropout >= 0 && c.dropout < 1)) throw new InputError(`dropout must be in [0, 1), got ${c.dropout}`);
    if (c.attention !== undefined && !(ATTENTION_KINDS as readonly string[]).includes(c.attention)) throw new UnknownNameError('attention', String(c.attention), [...ATTENTION_KINDS]);
    if (c.precision !== undefined) parseTrainingPrecision(c.precision);
    if (c.stepGraphs !== undefined && typeof c.stepGraphs !== 'boolean') new StepGraphs(c.stepGraphs).dispose();
    const model = o.model.model;
    if (c.maxLength > model.maxPositions) throw new InputError(`maxLength ${c.maxLength} exceeds the model's maximum sequence length ${model.maxPositions}`);
    if (model.trainableParameters().size === 0) throw new InputError('every parameter of the model is frozen: nothing to train (see TextModel.setTrainable)');
    // Checked now (objective vs data kind); each run binds its own (fresh classifier weights, if any).
    this.bindObjective().dispose();
    const seed = c.seed ?? 42;
    this.plan = new BatchPlan(o.train, o.model.tokenizer, { batchSize: c.batchSize, maxLength: c.maxLength, shuffle: c.shuffle ?? true, seed, dropLast: c.dropLast });
    const accumulation = c.gradAccumulation ?? 1;
    const stepsPerEpoch = Math.ceil(this.plan.batchesPerEpoch / accumulation);
    const totalSteps = c.maxSteps ?? (c.epochs ?? 1) * stepsPerEpoch;
    const warmupSteps = c.warmupSteps ?? (c.warmupFraction !== undefined ? warmupStepsFromFraction(c.warmupFraction, totalSteps) : 0);
    const schedule: ScheduleConfig = { name: c.schedule ?? 'linear', lr: c.lr, warmupSteps, totalSteps, warmupStart: c.warmupStart };
    checkSchedule(schedule);
    this.resolved = { pooling: parsePooling(c.pooling ?? this.defaultPooling()), accumulation, totalSteps, stepsPerEpoch, schedule, seed };
  }

  private bindObjective(): BoundObjective {
    return bindObjective(this.o.config.objective, this.o.train.kind, { dim: this.o.model.model.hiddenSize, seed: this.o.config.seed ?? 42, ...(this.teacher ? { teacher: this.teacher } : {}) });
  }

  /** The teacher's vectors of every training text (lib/losses/teacher-alignment.ts), for an objective with a `teacher`. */
  private teacher?: TeacherVectors;

  /**
   * Embeds every distinct training text once with the objective's teacher (frozen, no dropout, so
   * its vector of a text never changes), cut to the run's max length as the student's rows are.
   */
  private async prepareTeacher(): Promise<void> {
    const t = (this.o.config.objective as { teacher?: TeacherOptions }).teacher;
    if (!t || this.teacher) return;
    const d = this.o.train;
    const rows: string[] = d.kind === 'pairs' ? d.items.flatMap((x) => [x.a, x.b]) : d.kind === 'triplets' ? d.items.flatMap((x) => [x.anchor, x.positive, x.negative]) : d.items.map((x) => x.text);
    const texts = [...new Set(rows)];
    const teacher = await loadModel(t.model);
    try {
      const e = await new PooledSentenceEncoder(teacher, { pooling: t.pooling ?? 'cls', maxLength: Math.min(this.o.config.maxLength, teacher.model.maxPositions) }).encode(texts);
      this.teacher = teacherLookup(texts, e.data, e.dim, t.model);
    } finally {
      teacher.model.dispose();
    }
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
      // Blocked attention draws other dropout masks, fused attention rounds otherwise on cuda;
      // checkpointing changes no number, so it is not here.
      ...(c.attention === 'blocked' || c.attention === 'fused' ? { attention: c.attention } : {}),
      // Bucketed lengths pad batches (numbers equal up to rounding); step graphs alone change no number.
      ...(typeof c.stepGraphs === 'object' && c.stepGraphs.bucketLengths?.length ? { stepGraphBuckets: c.stepGraphs.bucketLengths } : {}),
      // 16-bit matmuls change the numbers; TF32 (the default) is left out so older checkpoints resume.
      ...(c.precision !== undefined && c.precision !== 'tf32' ? { precision: c.precision } : {}),
    };
    return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
  }

  private dataSha256(): string {
    const h = createHash('sha256');
    for (const e of this.o.train.items) h.update(JSON.stringify(e, ['a', 'b', 'label', 'anchor', 'positive', 'negative', 'text'])).update('\n');
    return h.digest('hex');
  }

  /** The model's own pooling where the config names none: a folder's pooling module when it is one of ours, else its architecture's default. */
  private defaultPooling(): Pooling {
    const module = poolingModuleOf(this.o.model);
    if (!module.pooling) throw new InputError("the model folder's sentence-transformers modules are none of our poolings: name the training's pooling (config.pooling)");
    return module.pooling;
  }

  private encoderForEval(): PooledSentenceEncoder {
    const c = this.o.config;
    return new PooledSentenceEncoder(this.o.model, {
      pooling: this.resolved.pooling,
      maxLength: c.evalMaxLength ?? this.o.model.model.maxPositions,
      batchSize: c.evalBatchSize ?? 64,
      // The weights differ at every evaluation: an ONNX graph goes to memory, not to the disk cache.
      engineOptions: { onnx: { cache: false } },
    });
  }

  private identity(s: Session): TrainingIdentity {
    const all = this.o.model.model.params.size;
    return {
      config: this.o.config,
      resolved: this.resolved,
      train: { id: this.o.train.name, rows: this.o.train.items.length, sha256: this.dataSha256() },
      dev: this.o.dev ? { id: this.o.dev.name, rows: this.o.dev.rows } : undefined,
      test: this.o.test ? { id: this.o.test.name, rows: this.o.test.rows } : undefined,
      trainableParameters: s.modelTrainable.size,
      frozenParameters: all - s.modelTrainable.size,
      decayedParameters: s.optimizer.decayedParameters().length,
    };
  }

  async run(opts: RunOptions = {}): Promise<TrainResult> {
    return withTrainingPrecision(this.o.config.precision ?? 'tf32', () => this.runSteps(opts));
  }

  private async runSteps(opts: RunOptions): Promise<TrainResult> {
    await this.prepareTeacher();
    const s = this.restore(opts);
    const r = this.resolved;
    const progress = new Progress({ label: 'training', total: r.totalSteps, unit: 'steps', enabled: this.o.progress ?? true });
    progress.tick(s.state.step);
    let interrupted = false;
    try {
      while (s.state.step < r.totalSteps) {
        if (opts.stopAfterSteps !== undefined && s.state.step >= opts.stopAfterSteps) break;
        // A step only awaits promises that settle as microtasks (and checkpoints write synchronously), so
        // without this turn of the event loop a Ctrl-C handler would not run until training ended.
        await new Promise<void>((res) => setImmediate(res));
        if (opts.signal?.aborted) {
          interrupted = true;
          if (this.o.runDir) await this.writeCheckpoint(s);
          break;
        }
        const log = await this.step(s);
        progress.tick(1, `loss ${log.loss.toFixed(4)} lr ${log.lr.toExponential(2)} ${Math.round(log.tokens / Math.max(log.seconds, 1e-9))} tok/s`);
        const last = s.state.step === r.totalSteps;
        if (this.evaluationDue(s.state.step, last)) await this.evaluateAndKeepBest(s, last);
        const c = this.o.config;
        if (this.o.runDir && c.checkpointEvery !== undefined && (s.state.step % c.checkpointEvery === 0 || last)) await this.writeCheckpoint(s);
      }
    } finally {
      // Kept before the graphs go (their kernels are counted while they exist).
      s.graphStats = s.graphs?.stats();
      s.graphs?.dispose();
      s.optimizer.dispose();
      s.objective.dispose();
    }
    const complete = s.state.step >= r.totalSteps;
    const test = complete && this.o.test ? await this.finalTest(s) : undefined;
    return {
      steps: s.state.step,
      log: s.state.log,
      evals: s.state.evals,
      best: s.state.best,
      final: s.final,
      test,
      resumedFrom: s.resumedFrom,
      bestModelDir: s.bestModelDir,
      startedAt: s.state.startedAt ?? new Date().toISOString(),
      // Training (across resumes) plus this session's final evaluations.
      wallSeconds: s.elapsedBefore + (performance.now() - s.t0) / 1000,
      tokensSeen: s.state.tokensSeen,
      complete,
      interrupted,
      identity: this.identity(s),
      ...(s.graphStats ? { stepGraphs: s.graphStats } : {}),
    };
  }

  /** Phase 1: a fresh state, or the newest checkpoint's (weights, optimizer, data position, dropout counter). */
  private restore(opts: RunOptions): Session {
    const c = this.o.config;
    const m = this.o.model.model;
    if (c.dropout !== undefined) m.setDropout(c.dropout);
    const modelTrainable = m.trainableParameters();
    const objective = this.bindObjective();
    const trainable = new Map([...modelTrainable, ...objective.parameters]);
    const shapes = new Map<string, number[]>([...trainable].map(([n, v]) => [n, v.shape.slice()]));
    const optimizer = new AdamW(trainable, { betas: c.betas, eps: c.eps, weightDecay: c.weightDecay ?? 0.01 });
    const fingerprint = this.fingerprint();
    let state: TrainerState = {
      format: TRAINER_STATE_FORMAT,
      version: TRAINER_STATE_VERSION,
      step: 0,
      epoch: 0,
      batchInEpoch: 0,
      dropoutCounter: 0,
      seed: this.resolved.seed,
      configFingerprint: fingerprint,
      modelShapes: Object.fromEntries(shapes),
      log: [],
      evals: [],
      elapsedSeconds: 0,
      tokensSeen: 0,
      startedAt: new Date().toISOString(),
    };
    let resumedFrom: string | undefined;
    if (opts.resume) {
      if (!this.o.runDir) throw new InputError('resume needs the runDir of the run to continue');
      const dir = latestCheckpoint(this.o.runDir);
      if (!dir && opts.resume === true) {
        throw new InputError(`nothing to resume: no complete checkpoint under ${checkpointsDir(this.o.runDir)} (start without resume, or resume 'if-possible')`);
      }
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
        for (const [name, v] of trainable) {
          const w = ckpt.weights.get(name)!;
          tf.tidy(() => v.assign(tf.tensor(w.data, w.shape, 'float32')));
        }
        state = { ...ckpt.state, startedAt: ckpt.state.startedAt ?? state.startedAt };
        resumedFrom = dir;
      }
    }
    m.dropoutCounter = state.dropoutCounter;
    const best = this.o.runDir && state.best && existsSync(bestModelDir(this.o.runDir)) ? bestModelDir(this.o.runDir) : undefined;
    const graphs = c.stepGraphs ? new StepGraphs(c.stepGraphs === true ? {} : c.stepGraphs) : undefined;
    return { state, optimizer, objective, graphs, graphNotes: new Set(), trainable, modelTrainable, resumedFrom, bestModelDir: best, elapsedBefore: state.elapsedSeconds, t0: performance.now() };
  }

  /** Phase 2a: the micro-batches of the next step (a step does not cross an epoch boundary), then the step. */
  private async step(s: Session): Promise<StepLog> {
    const stepStart = performance.now();
    const state = s.state;
    const lr = learningRate(this.resolved.schedule, state.step);
    const epochAtStart = state.epoch;
    const micro: TrainingBatch[] = [];
    while (micro.length < this.resolved.accumulation) {
      micro.push(this.plan.batch(state.epoch, state.batchInEpoch));
      state.batchInEpoch++;
      if (state.batchInEpoch >= this.plan.batchesPerEpoch) {
        state.epoch++;
        state.batchInEpoch = 0;
        break;
      }
    }
    const ctx: StepContext = {
      model: this.o.model.model,
      trainable: s.trainable,
      pooling: this.resolved.pooling,
      padSide: this.o.model.tokenizer.padSide,
      objective: s.objective.loss,
      objectiveInputs: s.objective.inputs,
      labelInputs: s.objective.labelInputs,
      optimizer: s.optimizer,
      maxGradNorm: this.o.config.maxGradNorm,
      checkpointing: this.o.config.checkpointing,
      attention: this.o.config.attention,
    };
    const v = s.graphs ? await s.graphs.step(ctx, micro, lr) : await optimizerStep(ctx, micro, lr);
    if (s.graphs) this.noteStepGraphs(s);
    const log: StepLog = { step: state.step, epoch: epochAtStart, lr, loss: v.loss, terms: v.terms, tokens: v.tokens, seconds: (performance.now() - stepStart) / 1000 };
    if (v.gradNorm !== undefined) log.gradNorm = v.gradNorm;
    if (!Number.isFinite(log.loss)) {
      throw new Error(`training diverged: loss is ${log.loss} at step ${state.step} (lr ${lr}); lower the learning rate or check the data`);
    }
    state.log.push(log);
    state.step++;
    state.tokensSeen += v.tokens;
    state.dropoutCounter = this.o.model.model.dropoutCounter;
    state.elapsedSeconds = s.elapsedBefore + (performance.now() - s.t0) / 1000;
    this.o.onStep?.(log);
    return log;
  }

  /** Says once each why steps run eagerly although step graphs were asked for (a backend that cannot record, a shape that could not be captured). */
  private noteStepGraphs(s: Session): void {
    const st = s.graphs!.stats();
    const notes = [...(st.unsupported ? [`every step runs eagerly: ${st.unsupported}`] : []), ...Object.entries(st.refused).map(([key, why]) => `batches of shape ${key} run eagerly: ${why}`)];
    for (const n of notes) {
      if (s.graphNotes.has(n)) continue;
      s.graphNotes.add(n);
      console.warn(`step graphs: ${n}`);
    }
  }

  /** Whether the dev set is evaluated after `step` completed steps. */
  private evaluationDue(step: number, last: boolean): boolean {
    const c = this.o.config;
    if (!this.o.dev) return false;
    const every = c.evalEvery === 'epoch' ? this.resolved.stepsPerEpoch : c.evalEvery;
    return (every !== undefined && step % every === 0) || (last && (c.evalAtEnd ?? true));
  }

  /** Phase 2b: the dev evaluation, and the best model when it improved. */
  private async evaluateAndKeepBest(s: Session, last: boolean): Promise<void> {
    const dev = this.o.dev!;
    const t0 = performance.now();
    const encoder = this.encoderForEval();
    const { metrics } = await dev.evaluate(encoder);
    for (const [key, probe] of Object.entries(this.o.probes ?? {})) {
      const r = await probe.evaluate(encoder);
      for (const [k, v] of Object.entries(r.metrics)) metrics[`${key}.${k}`] = v;
    }
    const ev: EvalLog = { step: s.state.step, metrics, seconds: (performance.now() - t0) / 1000 };
    this.o.onEval?.(ev);
    s.state.evals.push(ev);
    if (last) s.final = ev.metrics;
    const metric = this.o.config.bestMetric ?? dev.primaryMetric;
    const v = ev.metrics[metric];
    if (v === undefined) throw new InputError(`dev evaluation '${dev.name}' returned no metric '${metric}' (it returned ${Object.keys(ev.metrics).join(', ')})`);
    const best = s.state.best?.value;
    const better = best === undefined || (dev.higherIsBetter ? v > best : v < best);
    if (!better) return;
    s.state.best = { metric, value: v, step: s.state.step };
    if (!this.o.runDir) return;
    const m = this.o.model.model;
    const all = s.modelTrainable.size === m.params.size;
    s.bestModelDir = await saveBestModel(
      this.o.runDir,
      all ? m.params : s.modelTrainable,
      { step: s.state.step, metric, value: v, dev: dev.name, trainable: all ? 'all' : 'subset' },
      'dir' in this.o.model ? this.o.model.dir : undefined,
      // Saved as best/'s sentence-transformers modules: the trained model loads back with its pooling.
      { pooling: this.resolved.pooling, model: m },
    );
  }

  /** Phase 2c: a checkpoint of the trainable weights, the optimizer and the state; old ones pruned. */
  private async writeCheckpoint(s: Session): Promise<void> {
    saveCheckpoint(this.o.runDir!, s.state, await weightsOnHost(s.trainable), await s.optimizer.exportState());
    const keep = this.o.config.keepCheckpoints ?? 2;
    const root = checkpointsDir(this.o.runDir!);
    const dirs = readdirSync(root).filter((e) => /^step-\d+$/.test(e)).sort();
    for (const d of dirs.slice(0, Math.max(0, dirs.length - keep))) rmSync(join(root, d), { recursive: true, force: true });
  }

  /** Phase 3: the test evaluation, on the best dev weights when a best model was kept. */
  private async finalTest(s: Session): Promise<TestEvaluation> {
    const test = this.o.test!;
    let weights = `final (step ${s.state.step})`;
    if (s.bestModelDir && s.state.best && s.state.best.step !== s.state.step) {
      restoreBestWeights(s.bestModelDir, this.o.model.model.params);
      weights = `best dev ${s.state.best.metric} (step ${s.state.best.step})`;
    }
    const t1 = performance.now();
    const result = await test.evaluate(this.encoderForEval());
    this.o.onEval?.({ step: s.state.step, metrics: Object.fromEntries(Object.entries(result.metrics).map(([k, v]) => [`test_${k}`, v])), seconds: (performance.now() - t1) / 1000 });
    return { ...result, weights, evaluator: test.name, rows: test.rows };
  }
}
