/**
 * What an adapter method (./lora.ts) needs from a model, and what a model needs from an adapter:
 * the model names its linear layers (`model.layers.0.self_attn.q_proj`, with weight
 * `<module>.weight` of shape [out, in], PyTorch's layout) and adds an attached adapter's output
 * to that layer's output; the adapter's parameters join the model's `params` under
 * `<module>.<adapter name>` (e.g. `model.layers.0.self_attn.q_proj.lora_A.weight`), so the trainer,
 * AdamW and checkpoints see them like any other parameter.
 */
import type { tf } from '../../backend/index.js';
import type { TextModel } from '../types.js';

/** What a forward pass tells an adapter. */
export interface AdapterContext {
  /** Training mode (adapter dropout on). */
  training: boolean;
  /** The seed of the next dropout mask (the model's seeded counter, so training is reproducible). */
  nextDropoutSeed(): number;
}

/** Something added to a linear layer's output: y = x Wᵀ + delta(x). */
export interface LinearAdapter {
  /** The adapter's parameters, by name relative to the module (e.g. `lora_A.weight`). */
  readonly params: ReadonlyMap<string, tf.Variable>;
  /** The change to the layer's output for inputs x [n, in]: [n, out]. */
  delta(x: tf.Tensor2D, ctx: AdapterContext): tf.Tensor2D;
}

/** A model whose linear layers can carry adapters. */
export interface AdaptableModel extends TextModel {
  /** Every linear layer an adapter may wrap: module name -> [out, in]. */
  linearModules(): ReadonlyMap<string, readonly [number, number]>;
  /** Attaches an adapter to a module (one per module); its parameters join `params`, trainable. */
  attachAdapter(module: string, adapter: LinearAdapter): void;
  /** Detaches a module's adapter, removing its parameters from `params` (not disposing them). */
  detachAdapter(module: string): LinearAdapter | undefined;
  /** The attached adapters by module. */
  adapters(): ReadonlyMap<string, LinearAdapter>;
}
