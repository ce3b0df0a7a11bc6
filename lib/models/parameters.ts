/**
 * A model's parameters: tf.Variables under their checkpoint names, and which of them train. Every
 * TextModel keeps its parameters in one of these, so freezing (the trainer's trainable subset,
 * adapters over a frozen base), counting and disposing work the same for every architecture.
 */
import { tf } from '../backend/index.js';

let instances = 0;

export class ModelParameters {
  readonly all = new Map<string, tf.Variable>();
  private readonly frozen = new Set<string>();
  /** tfjs variable names are global: each model prefixes its own with a scope of its own. */
  private readonly scope: string;

  constructor(architecture: string) {
    this.scope = `${architecture}${instances++}`;
  }

  /** A new trainable variable holding `data`. */
  create(name: string, data: Float32Array, shape: number[]): tf.Variable {
    // Inside tidy, so the tensor the variable starts from is released: otherwise it keeps the
    // loaded weights alive after the first update and after dispose() (a second copy of the model
    // in memory, found on the cuda backend by test/cuda-emulated-model.test.ts).
    const v = tf.tidy(() => tf.variable(tf.tensor(data, shape, 'float32'), true, `${this.scope}/${name}`));
    this.all.set(name, v);
    return v;
  }

  /** Adds a variable made elsewhere (an adapter's), trainable. */
  add(name: string, v: tf.Variable): void {
    this.all.set(name, v);
    this.frozen.delete(name);
    v.trainable = true;
  }

  /** Removes a parameter from the model without disposing it. */
  remove(name: string): void {
    this.all.delete(name);
    this.frozen.delete(name);
  }

  get(name: string): tf.Variable | undefined {
    return this.all.get(name);
  }

  /** The parameters training updates: all but the frozen ones. */
  trainable(): Map<string, tf.Variable> {
    return new Map([...this.all].filter(([name]) => !this.frozen.has(name)));
  }

  /** Freezes every parameter for which `select(name)` is false and unfreezes the others. */
  setTrainable(select: (name: string) => boolean): void {
    this.frozen.clear();
    for (const [name, v] of this.all) {
      const trainable = select(name);
      if (!trainable) this.frozen.add(name);
      v.trainable = trainable;
    }
  }

  /** Number of scalar parameters. */
  count(): number {
    let n = 0;
    for (const v of this.all.values()) n += v.size;
    return n;
  }

  dispose(): void {
    for (const v of this.all.values()) v.dispose();
    this.all.clear();
    this.frozen.clear();
  }
}
