/**
 * Training checkpoints: everything a run needs to continue exactly where it stopped.
 *
 *   <runDir>/checkpoints/step-000120/
 *     model.safetensors       the trainable parameters under canonical HF names (every parameter
 *                             unless part of the model is frozen, e.g. for adapters)
 *     optimizer.safetensors   AdamW moments: `exp_avg.<name>`, `exp_avg_sq.<name>`
 *     trainer-state.json      step, data position, dropout-mask counter, per-parameter AdamW step
 *                             counts, best metric, the log so far, config fingerprint, shapes
 *
 * A checkpoint is written into a temporary directory beside its final name and renamed into
 * place as the last act (`writeDirectoryAtomicSync`), so a crash mid-write leaves no `step-*`
 * directory that looks complete; stale temporaries are removed by the next save. `latestCheckpoint` trusts only directories whose
 * state file parses and whose step matches the name.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSafetensors, serializeSafetensors, type TensorToWrite } from '../models/safetensors.js';
import { writeDirectoryAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import type { AdamWState } from './adamw.js';

export const TRAINER_STATE_FORMAT = 'angle-notebooks/trainer-state';
export const TRAINER_STATE_VERSION = 1;

export interface StepLog {
  step: number;
  epoch: number;
  lr: number;
  loss: number;
  /** Unweighted objective terms, when the objective has several. */
  terms: Record<string, number>;
  /** Non-padding tokens in the step's batches. */
  tokens: number;
  /** Wall time of the step in seconds. */
  seconds: number;
  /** Global gradient norm (before clipping), when clipping is on. */
  gradNorm?: number;
}

export interface EvalLog {
  step: number;
  metrics: Record<string, number>;
  seconds: number;
}

export interface TrainerState {
  format: typeof TRAINER_STATE_FORMAT;
  version: number;
  /** Optimiser steps completed. */
  step: number;
  /** Position of the next micro-batch to read. */
  epoch: number;
  batchInEpoch: number;
  /** The model's dropoutCounter after `step` steps. */
  dropoutCounter: number;
  seed: number;
  /** sha256 of the settings a resume must share with the run that wrote the checkpoint. */
  configFingerprint: string;
  modelShapes: Record<string, number[]>;
  best?: { metric: string; value: number; step: number };
  log: StepLog[];
  evals: EvalLog[];
  elapsedSeconds: number;
  tokensSeen: number;
  /** When the run first started (ISO time); absent in checkpoints written before it was recorded. */
  startedAt?: string;
}

export interface Checkpoint {
  dir: string;
  state: TrainerState;
  weights: Map<string, { data: Float32Array; shape: number[] }>;
  optimizer: AdamWState;
}

const STEP_DIR = /^step-(\d+)$/;

export function checkpointsDir(runDir: string): string {
  return join(runDir, 'checkpoints');
}

function stepDirName(step: number): string {
  return `step-${String(step).padStart(6, '0')}`;
}

/** Writes a checkpoint atomically (temporary directory, then rename) and returns its directory. */
export function saveCheckpoint(
  runDir: string,
  state: TrainerState,
  weights: Map<string, { data: Float32Array; shape: number[] }>,
  optimizer: AdamWState,
): string {
  const root = checkpointsDir(runDir);
  // Temporaries of any step a crashed save left behind (the helper below clears only this step's).
  if (existsSync(root)) for (const e of readdirSync(root)) if (e.includes('.tmp-')) rmSync(join(root, e), { recursive: true, force: true });
  const final = join(root, stepDirName(state.step));
  writeDirectoryAtomicSync(final, (tmp) => {
    const model: Record<string, TensorToWrite> = {};
    for (const [name, t] of weights) model[name] = { shape: t.shape, data: t.data };
    writeFileSync(join(tmp, 'model.safetensors'), serializeSafetensors(model, { format: 'pt', step: String(state.step) }));
    const opt: Record<string, TensorToWrite> = {};
    for (const [name, t] of optimizer.expAvg) opt[`exp_avg.${name}`] = { shape: t.shape, data: t.data };
    for (const [name, t] of optimizer.expAvgSq) opt[`exp_avg_sq.${name}`] = { shape: t.shape, data: t.data };
    writeFileSync(join(tmp, 'optimizer.safetensors'), serializeSafetensors(opt, { optimizer: 'AdamW' }));
    writeFileSync(join(tmp, 'trainer-state.json'), JSON.stringify({ ...state, optimizerSteps: optimizer.steps }, null, 1));
  });
  return final;
}

function readState(dir: string): TrainerState & { optimizerSteps: Record<string, number> } {
  const file = join(dir, 'trainer-state.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not a readable trainer state (${(e as Error).message})`, { file });
  }
  const s = raw as TrainerState & { optimizerSteps: Record<string, number> };
  if (s?.format !== TRAINER_STATE_FORMAT) throw new InputError(`not a trainer state: format is ${JSON.stringify(s?.format)}, expected '${TRAINER_STATE_FORMAT}'`, { file });
  if (s.version !== TRAINER_STATE_VERSION) throw new InputError(`trainer state version ${s.version}; this code reads version ${TRAINER_STATE_VERSION}`, { file });
  for (const k of ['step', 'epoch', 'batchInEpoch', 'dropoutCounter', 'seed'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new InputError(`'${k}' must be a non-negative integer, got ${JSON.stringify(s[k])}`, { file });
  }
  if (typeof s.optimizerSteps !== 'object' || s.optimizerSteps === null) throw new InputError(`'optimizerSteps' is missing`, { file });
  return s;
}

/** The newest complete checkpoint of a run, if any. */
export function latestCheckpoint(runDir: string): string | undefined {
  const root = checkpointsDir(runDir);
  if (!existsSync(root)) return undefined;
  const steps = readdirSync(root)
    .map((e) => STEP_DIR.exec(e))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ dir: join(root, m[0]), step: Number(m[1]) }))
    .sort((a, b) => b.step - a.step);
  for (const s of steps) {
    try {
      if (readState(s.dir).step === s.step && existsSync(join(s.dir, 'model.safetensors')) && existsSync(join(s.dir, 'optimizer.safetensors'))) return s.dir;
    } catch {
      // An unreadable directory is not a checkpoint; an older one may still be.
    }
  }
  return undefined;
}

/** Reads a checkpoint directory. */
export function loadCheckpoint(dir: string): Checkpoint {
  const state = readState(dir);
  const weights = new Map<string, { data: Float32Array; shape: number[] }>();
  for (const [name, t] of readSafetensors(join(dir, 'model.safetensors')).tensors) {
    weights.set(name, { data: t.data as Float32Array, shape: t.shape });
  }
  const opt = readSafetensors(join(dir, 'optimizer.safetensors')).tensors;
  const optimizer: AdamWState = { steps: state.optimizerSteps, expAvg: new Map(), expAvgSq: new Map() };
  for (const [key, t] of opt) {
    const m = /^(exp_avg|exp_avg_sq)\.(.+)$/.exec(key);
    if (!m) throw new InputError(`unexpected tensor '${key}' (expected exp_avg.<name> or exp_avg_sq.<name>)`, { file: join(dir, 'optimizer.safetensors') });
    (m[1] === 'exp_avg' ? optimizer.expAvg : optimizer.expAvgSq).set(m[2], { data: t.data as Float32Array, shape: t.shape });
  }
  const { optimizerSteps: _drop, ...rest } = state;
  void _drop;
  return { dir, state: rest, weights, optimizer };
}

/**
 * Checks a checkpoint's tensors against the model it is to be loaded into; one error lists every
 * missing, unexpected and mis-shaped tensor.
 */
export function checkCheckpointFits(ckpt: Checkpoint, modelShapes: ReadonlyMap<string, readonly number[]>): void {
  const problems: string[] = [];
  for (const [name, shape] of modelShapes) {
    const t = ckpt.weights.get(name);
    if (!t) problems.push(`missing '${name}'`);
    else if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) problems.push(`'${name}' is [${t.shape}] in the checkpoint, [${shape}] in the model`);
  }
  for (const name of ckpt.weights.keys()) if (!modelShapes.has(name)) problems.push(`unexpected '${name}'`);
  if (problems.length > 0) {
    throw new InputError(`checkpoint was written for another model shape: ${problems.slice(0, 12).join('; ')}${problems.length > 12 ? `; and ${problems.length - 12} more` : ''}`, {
      file: join(ckpt.dir, 'model.safetensors'),
    });
  }
}
