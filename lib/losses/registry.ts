/**
 * The registry of training objectives: one entry per loss, written in the loss's own file beside its
 * formula (`defineLoss`), and registered once: one line in ./objectives.ts. An entry says
 *
 * - `name`: what a recipe's `objective.name` and `npm run train --objective` call it;
 * - `options`: the schema of its configuration (every key an `objective` object may hold besides
 *   `name`, nested objects as nested schemas). The override keys of lib/experiments/overrides.ts are
 *   read from it, so a key added to a loss's options is overridable without a second list to keep;
 * - `kinds`: the layouts of training data it accepts (pairs, triplets, unsupervised);
 * - `inputs`: what the trainer must feed it beside the pooled embeddings of the last layer —
 *   `'layers'` asks for the pooled embedding of every hidden state (Espresso's layer-wise term);
 * - `bind`: the objective ready to train on one kind of data (a loss function and the trainable
 *   parameters it owns, e.g. SBERT's classifier).
 *
 * The trainer (lib/train/objective.ts) looks the entry up by name and takes the bound objective as
 * it is: nothing else dispatches on an objective's name.
 */
import type { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { TeacherVectors } from './teacher-alignment.js';

/** The layouts of training data (lib/train/examples.ts `TrainingExamples['kind']`). */
export type ObjectiveDataKind = 'pairs' | 'triplets' | 'unsupervised';

/** One micro-batch as the objective sees it beside the embedding matrix. */
export interface ObjectiveBatch {
  labels: readonly number[];
  keys: readonly string[];
  /**
   * The pooled embedding of every hidden state, embedding output first (`layers[i]` = pool(H[i]),
   * `layers[L]` = the matrix the objective receives); given only to objectives whose entry asks
   * for `inputs: ['layers']`.
   */
  layers?: readonly tf.Tensor2D[];
  /**
   * What the objective derives from `labels` and `keys`, as host arrays of the batch's shape, made
   * before the step by its BoundObjective's `labelInputs` (same arrays for the whole step, so a step
   * graph feeds them like the token ids; lib/train/step-graphs.ts); the objective then builds its
   * label masks on the device from them. Absent: it builds them on the host from `labels`.
   */
  labelInputs?: LabelInputs;
}

/** Per-batch host arrays an objective reads its labels through (see ObjectiveBatch.labelInputs). */
export type LabelInputs = Readonly<Record<string, Int32Array>>;

export interface ObjectiveValue {
  total: tf.Scalar;
  /** Unweighted terms by name (e.g. cosine, ibn, angle); empty for single-term objectives. */
  terms: Record<string, tf.Scalar>;
}

export type ObjectiveFn = (emb: tf.Tensor2D, batch: ObjectiveBatch) => ObjectiveValue;

/** An objective ready to train: its loss, and the trainable parameters it owns (most own none). */
export interface BoundObjective {
  loss: ObjectiveFn;
  parameters: Map<string, tf.Variable>;
  /** What the trainer must feed beside the last layer's embeddings (the entry's `inputs`). */
  inputs: readonly ObjectiveInput[];
  /** The batch's label inputs (ObjectiveBatch.labelInputs), for objectives that can build their label masks on the device; checks the labels as the loss would. */
  labelInputs?(batch: Pick<ObjectiveBatch, 'labels' | 'keys'>): LabelInputs;
  dispose(): void;
}

/** What some objectives need to create their parameters. */
export interface ObjectiveContext {
  /** Sentence-embedding size. */
  dim?: number;
  /** Seed of parameter initialisation. */
  seed?: number;
  /** The teacher's vectors of training texts, for objectives with a `teacher` (./teacher-alignment.ts; the trainer prepares them). */
  teacher?: TeacherVectors;
}

/** Extra inputs an objective can ask the trainer for. */
export type ObjectiveInput = 'layers';

/** A configuration schema: each key an option; `true` a value, an object a nested configuration. */
export interface OptionsSchema {
  readonly [key: string]: true | OptionsSchema;
}

/** A registered objective; `C` is its configuration (the recipe's `objective` object without `name`). */
export interface LossDefinition<N extends string = string, C = Record<string, unknown>> {
  name: N;
  /** One line: what it computes (shown by `npm run train --help`). */
  summary: string;
  options: OptionsSchema;
  kinds: readonly ObjectiveDataKind[];
  inputs?: readonly ObjectiveInput[];
  /** The loss on data of `kind` (always one of `kinds`) with configuration `config`. */
  bind(config: C, kind: ObjectiveDataKind, ctx: ObjectiveContext): Omit<BoundObjective, 'inputs'>;
}

/** The configuration of a definition as a recipe writes it: `{ name, ...options }`. */
export type ObjectiveConfigOf<D> = D extends LossDefinition<infer N, infer C> ? { name: N } & C : never;

/** A loss with no trainable parameters. */
export function withoutParameters(loss: ObjectiveFn): Omit<BoundObjective, 'inputs'> {
  return { loss, parameters: new Map(), dispose: () => {} };
}

/** Refuses a batch of pairs that are not all labelled 1, for objectives that read every pair as a positive. */
export function positivesOnly(name: string, labels: readonly number[]): void {
  const bad = labels.findIndex((y) => y !== 1);
  if (bad >= 0) {
    throw new InputError(`objective '${name}' treats every pair as a positive, but pair ${bad} of the batch has label ${labels[bad]}; keep only label-1 pairs`);
  }
}

/** A loss's entry, typed (registration is separate: one line in ./objectives.ts, or registerLoss). */
export function defineLoss<N extends string, C>(def: LossDefinition<N, C>): LossDefinition<N, C> {
  return def;
}

const REGISTRY = new Map<string, LossDefinition<string, never>>();

/** Adds an objective; a second entry of one name is an error (two losses cannot share a name). */
export function registerLoss<N extends string, C>(def: LossDefinition<N, C>): LossDefinition<N, C> {
  if (REGISTRY.has(def.name) && REGISTRY.get(def.name) !== (def as unknown)) throw new InputError(`objective '${def.name}' is registered twice`);
  if (def.kinds.length === 0) throw new InputError(`objective '${def.name}' accepts no kind of training data`);
  if ('name' in def.options) throw new InputError(`objective '${def.name}': 'name' cannot be one of its options`);
  REGISTRY.set(def.name, def as unknown as LossDefinition<string, never>);
  return def;
}

/** The names of every registered objective, in registration order. */
export function registeredLossNames(): string[] {
  return [...REGISTRY.keys()];
}

/** The entry of `name`; throws UnknownNameError listing the registered ones. */
export function lossDefinition(name: string): LossDefinition<string, Record<string, unknown>> {
  const def = REGISTRY.get(name);
  if (!def) throw new UnknownNameError('objective', String(name), registeredLossNames());
  return def as unknown as LossDefinition<string, Record<string, unknown>>;
}

/** Whether `name` is a registered objective. */
export function isRegisteredLoss(name: string): boolean {
  return REGISTRY.has(name);
}

/**
 * The option keys under a dotted path of an objective's configuration (`''` = its top level, which
 * includes `name`; `'loss.weights'` = a nested schema); undefined when the path is a plain value.
 */
export function lossOptionKeys(name: string, path: string): readonly string[] | undefined {
  let schema: OptionsSchema | true = lossDefinition(name).options;
  if (path !== '') {
    for (const part of path.split('.')) {
      if (schema === true || !(part in schema)) return undefined;
      schema = schema[part];
    }
  }
  if (schema === true) return undefined;
  return path === '' ? ['name', ...Object.keys(schema)] : Object.keys(schema);
}

/** Binds a configuration `{ name, ...options }` to a kind of data (checks the kind). */
export function bindLoss(config: { name: string }, kind: ObjectiveDataKind, ctx: ObjectiveContext = {}): BoundObjective {
  const def = lossDefinition(config.name);
  if (!def.kinds.includes(kind)) throw new InputError(`objective '${def.name}' cannot train on ${kind} data (it takes ${def.kinds.join(', ')})`);
  const { name: _name, ...options } = config as { name: string } & Record<string, unknown>;
  return { ...def.bind(options, kind, ctx), inputs: def.inputs ?? [] };
}
