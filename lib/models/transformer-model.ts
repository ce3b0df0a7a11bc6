/**
 * What every architecture's model class shares, written once: its parameters as tf.Variables under
 * their checkpoint names (./parameters.ts), which of them train, the size getters every TextModel
 * has, the seeded dropout counter, counting and disposing. An architecture (./bert/model.ts,
 * ./llama/model.ts, ./opt/model.ts) extends this class and adds only its config, its forward pass
 * and its own dropout settings; decoders whose linear layers take adapters extend
 * ./adaptable-transformer-model.ts instead.
 */
import type { tf } from '../backend/index.js';
import { ModelParameters } from './parameters.js';

/** The config fields the shared getters read; every architecture's parsed config has them. */
export interface TransformerDimensions {
  hiddenSize: number;
  numLayers: number;
  /** Longest sequence the model accepts (position embeddings or context length). */
  maxPositions: number;
}

/** A tensor as a checkpoint reader returns it (PyTorch layout, float32 values). */
export interface InitialWeight {
  shape: number[];
  data: ArrayLike<number>;
}

/**
 * Everything of TextModel (./types.ts) but `forward`, which each architecture adds (and then
 * declares `implements TextModel`).
 */
export abstract class TransformerModel<C extends TransformerDimensions> {
  /** Every parameter (adapters included) and which of them are frozen. */
  protected readonly parameters: ModelParameters;
  /**
   * Dropout masks drawn so far. Each mask's seed derives from `dropoutSeed` and this count, so a
   * training checkpoint saves it and a resumed run draws the same masks as an uninterrupted one.
   */
  dropoutCounter = 0;

  constructor(
    /** The config.json `model_type` this implements, e.g. 'bert'; also the scope of its variable names. */
    readonly architecture: string,
    readonly config: C,
    /** Initial values under their canonical names: each becomes one trainable tf.Variable. */
    weights: ReadonlyMap<string, InitialWeight>,
    /** Seed of the dropout masks (training only). */
    public dropoutSeed = 0,
    /**
     * Takes a weight the subclass keeps in another form (a frozen base in 16 or 4 bits,
     * ./frozen-base.ts) and returns true, or returns false for a plain variable. Called in the
     * weights' order, so a lazy source is read one tensor at a time and in the order it was written.
     */
    adopt?: (name: string, t: InitialWeight) => boolean,
  ) {
    this.parameters = new ModelParameters(architecture);
    for (const [name, t] of weights) if (!adopt?.(name, t)) this.parameters.create(name, t.data as Float32Array, t.shape);
  }

  get hiddenSize(): number {
    return this.config.hiddenSize;
  }

  get numLayers(): number {
    return this.config.numLayers;
  }

  get maxPositions(): number {
    return this.config.maxPositions;
  }

  get params(): ReadonlyMap<string, tf.Variable> {
    return this.parameters.all;
  }

  trainableParameters(): Map<string, tf.Variable> {
    return this.parameters.trainable();
  }

  setTrainable(select: (name: string) => boolean): void {
    this.parameters.setTrainable(select);
  }

  /** Overrides the config's dropout probabilities (a training run's setting) with p in [0, 1). */
  setDropout(p: number): void {
    if (!(p >= 0 && p < 1)) throw new RangeError(`dropout must be in [0, 1), got ${p}`);
    this.applyDropout(p);
  }

  /** Writes a checked dropout probability into the config fields the architecture's forward reads. */
  protected abstract applyDropout(p: number): void;

  /** The seed of the next dropout mask: a function of (dropoutSeed, dropoutCounter), which it advances. */
  protected nextDropoutSeed(): number {
    return this.dropoutSeed * 1_000_003 + this.dropoutCounter++;
  }

  /** The parameter `name`; an error naming it and the architecture when it was not loaded. */
  protected p(name: string): tf.Variable {
    const v = this.parameters.get(name);
    if (!v) throw new Error(`${this.architecture} parameter '${name}' is not loaded`);
    return v;
  }

  /** Number of scalar parameters. */
  numParameters(): number {
    return this.parameters.count();
  }

  /** Frees every parameter; the model is unusable afterwards. */
  dispose(): void {
    this.parameters.dispose();
  }
}
