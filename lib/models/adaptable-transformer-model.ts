/**
 * A TransformerModel (./transformer-model.ts) whose linear layers can carry adapters
 * (./adapters/types.ts: LoRA): the bookkeeping of attached adapters, their parameters joining the
 * model's, the adapted linear layer y = x Wᵀ (+ b) + delta(x), and the base weights without the
 * adapters (to write a checkpoint). The decoders (./llama/, ./opt/) extend it; an architecture
 * names its adaptable layers in `linearModules()`, adds `forward`, and declares
 * `implements AdaptableModel`.
 */
import { backendCapabilities, tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import type { AdapterContext, LinearAdapter } from './adapters/types.js';
import { TransformerModel, type TransformerDimensions } from './transformer-model.js';

/** A parameter's current value, as written to a checkpoint. */
export interface BaseWeight {
  shape: number[];
  data: Float32Array;
}

export abstract class AdaptableTransformerModel<C extends TransformerDimensions> extends TransformerModel<C> {
  private readonly attached = new Map<string, LinearAdapter>();

  /** Every linear layer an adapter may wrap: module name -> [out, in] (the layers of the blocks, not the LM head). */
  abstract linearModules(): Map<string, readonly [number, number]>;

  attachAdapter(module: string, adapter: LinearAdapter): void {
    const modules = this.linearModules();
    if (!modules.has(module) || !this.params.has(`${module}.weight`)) {
      const example = modules.keys().next().value ?? '(none)';
      throw new InputError(`'${module}' is not a linear module of this model (e.g. ${example})`);
    }
    if (this.attached.has(module)) throw new InputError(`module '${module}' already has an adapter`);
    for (const name of adapter.params.keys()) {
      if (this.params.has(`${module}.${name}`)) throw new InputError(`parameter '${module}.${name}' exists already`);
    }
    this.attached.set(module, adapter);
    for (const [name, v] of adapter.params) this.parameters.add(`${module}.${name}`, v);
  }

  detachAdapter(module: string): LinearAdapter | undefined {
    const a = this.attached.get(module);
    if (!a) return undefined;
    this.attached.delete(module);
    for (const name of a.params.keys()) this.parameters.remove(`${module}.${name}`);
    return a;
  }

  adapters(): ReadonlyMap<string, LinearAdapter> {
    return this.attached;
  }

  /** The context a forward pass gives adapters: training mode and the model's seeded dropout counter. */
  protected adapterContext(training: boolean): AdapterContext {
    return { training, nextDropoutSeed: () => this.nextDropoutSeed() };
  }

  /**
   * x Wᵀ (+ b when `bias`) with a PyTorch-layout [out, in] weight `<module>.weight`, plus the
   * module's adapter output if it has one (the adapter sees the same x as the layer).
   */
  protected linear(x: tf.Tensor, module: string, ctx: AdapterContext, bias = false): tf.Tensor {
    const w = this.p(`${module}.weight`);
    const shape = x.shape;
    const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]) as tf.Tensor2D;
    let y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
    if (bias) y = tf.add(y, this.p(`${module}.bias`));
    const adapter = this.attached.get(module);
    if (adapter) y = tf.add(y, adapter.delta(x2, ctx));
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
  }

  /** The current values of the model's own parameters (adapters excluded), e.g. to write an HF directory. */
  async baseWeights(): Promise<Map<string, BaseWeight>> {
    const adapterParams = new Set([...this.attached].flatMap(([m, a]) => [...a.params.keys()].map((n) => `${m}.${n}`)));
    const out = new Map<string, BaseWeight>();
    for (const [name, v] of this.params) {
      if (!adapterParams.has(name)) out.set(name, { shape: v.shape.slice(), data: (await v.data()) as Float32Array });
    }
    return out;
  }

  override dispose(): void {
    super.dispose();
    this.attached.clear();
  }
}
