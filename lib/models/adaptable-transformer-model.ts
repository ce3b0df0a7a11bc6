/**
 * A TransformerModel (./transformer-model.ts) whose linear layers can carry adapters
 * (./adapters/types.ts: LoRA): the bookkeeping of attached adapters, their parameters joining the
 * model's, the adapted linear layer y = x Wᵀ (+ b) + delta(x), the frozen base weights kept in 16
 * or 4 bits under the adapters (QLoRA; `storeFrozenBase`), and the base weights without the
 * adapters (to write a checkpoint). The decoders (./llama/, ./opt/) extend it; an architecture
 * names its adaptable layers in `linearModules()`, adds `forward`, and declares
 * `implements AdaptableModel`.
 */
import { backendCapabilities, tf } from '../backend/index.js';
import { isShapeOnlyBackend } from '../backend/shape-only/index.js';
import { disposeFrozenWeight, frozenLinear, frozenWeightBytes, makeFrozenWeight, type BaseStorage, type FrozenWeight } from '../ops/frozen-linear.js';
import { InputError } from '../util/errors.js';
import type { AdapterContext, LinearAdapter } from './adapters/types.js';
import { frozenWeightFromCheckpoint, type FrozenBaseLoad } from './frozen-base.js';
import { TransformerModel, type InitialWeight, type TransformerDimensions } from './transformer-model.js';

/** A parameter's current value, as written to a checkpoint. */
export interface BaseWeight {
  shape: number[];
  data: Float32Array;
}

/**
 * `model` as the adaptable base when it is one, else undefined: a typed way to reach what only
 * this base has (`storeFrozenBase`, `storedBaseBytes`) from a TextModel, instead of a cast.
 */
export function adaptableBaseOf(model: object): AdaptableTransformerModel<TransformerDimensions> | undefined {
  return model instanceof AdaptableTransformerModel ? model : undefined;
}

export abstract class AdaptableTransformerModel<C extends TransformerDimensions> extends TransformerModel<C> {
  private readonly attached = new Map<string, LinearAdapter>();

  /**
   * `frozenBase`: the linear weights it names are stored in 16 or 4 bits as they arrive from
   * `weights` (./frozen-base.ts), never as float32 variables — what `storeFrozenBase` gives after a
   * float32 load, without the float32 model ever existing.
   */
  constructor(architecture: string, config: C, weights: ReadonlyMap<string, InitialWeight>, dropoutSeed = 0, frozenBase?: FrozenBaseLoad) {
    const stored = new Map<string, FrozenWeight>();
    const adopt = frozenBase
      ? (name: string, t: InitialWeight): boolean => {
          const module = name.endsWith('.weight') ? name.slice(0, -'.weight'.length) : undefined;
          const shape = module === undefined ? undefined : frozenBase.modules.get(module);
          if (module === undefined || shape === undefined) return false;
          stored.set(module, frozenWeightFromCheckpoint(name, t, shape, frozenBase.spec));
          return true;
        }
      : undefined;
    super(architecture, config, weights, dropoutSeed, adopt);
    for (const [module, w] of stored) this.storedBases.set(module, w);
  }

  /** Every linear layer an adapter may wrap: module name -> [out, in] (the layers of the blocks, not the LM head). */
  abstract linearModules(): Map<string, readonly [number, number]>;

  attachAdapter(module: string, adapter: LinearAdapter): void {
    const modules = this.linearModules();
    if (!modules.has(module) || !(this.params.has(`${module}.weight`) || this.storedBases.has(module))) {
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
   * Frozen linear weights kept in 16 or 4 bits (`storeFrozenBase`), by module: their float32
   * variables are gone and `linear` decodes them per call (../ops/frozen-linear.ts).
   */
  private readonly storedBases = new Map<string, FrozenWeight>();

  /**
   * Keeps every frozen linear weight of `linearModules()` in `format` — the checkpoint's own 16
   * bits ('fp16' for LLaMA-2's and OPT's Hub files, 'bf16'), or NF4 as QLoRA (`doubleQuant` for
   * its double quantisation) — instead of float32, and frees the float32 copy. Call after
   * attaching adapters (they freeze the base); trainable weights and biases stay float32. On the
   * shape-only backend no values are read (the stored tensors only have their sizes). Returns the
   * modules stored (none when the base was stored while loading: ./frozen-base.ts, which gives the
   * same numbers without the float32 model ever existing). Afterwards mergeLora and baseWeights()
   * have no float32 base to work on for those modules.
   */
  storeFrozenBase(format: Exclude<BaseStorage, 'fp32'>, opts: { doubleQuant?: boolean } = {}): string[] {
    const stored: string[] = [];
    const shapeOnly = isShapeOnlyBackend();
    for (const [module, [out, inp]] of this.linearModules()) {
      const name = `${module}.weight`;
      const v = this.params.get(name);
      if (!v || v.trainable || this.storedBases.has(module)) continue;
      const values = shapeOnly ? undefined : (v.dataSync() as Float32Array);
      this.storedBases.set(module, makeFrozenWeight(values, [out, inp], format, opts));
      this.parameters.remove(name);
      v.dispose();
      stored.push(module);
    }
    return stored;
  }

  /** The frozen weights kept in 16 or 4 bits, by module (read only: the model owns them). */
  frozenBaseWeights(): ReadonlyMap<string, FrozenWeight> {
    return this.storedBases;
  }

  /** Bytes of the frozen weights kept in 16 or 4 bits. */
  storedBaseBytes(): number {
    let n = 0;
    for (const w of this.storedBases.values()) n += frozenWeightBytes(w);
    return n;
  }

  /**
   * x Wᵀ (+ b when `bias`) with a PyTorch-layout [out, in] weight `<module>.weight` — decoded from
   * its 16- or 4-bit storage when it has one — plus the module's adapter output if it has one (the
   * adapter sees the same x as the layer).
   */
  protected linear(x: tf.Tensor, module: string, ctx: AdapterContext, bias = false): tf.Tensor {
    // In a scope of its own: x Wᵀ before the bias and the adapter's update are added is freed right away.
    return tf.tidy(() => {
      const stored = this.storedBases.get(module);
      const shape = x.shape;
      const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]) as tf.Tensor2D;
      let y: tf.Tensor;
      let out: number;
      if (stored) {
        y = frozenLinear(x2, stored);
        out = stored.shape[0];
      } else {
        const w = this.p(`${module}.weight`);
        y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
        out = w.shape[0];
      }
      if (bias) y = tf.add(y, this.p(`${module}.bias`));
      const adapter = this.attached.get(module);
      if (adapter) y = tf.add(y, adapter.delta(x2, ctx));
      return tf.reshape(y, [...shape.slice(0, -1), out]);
    });
  }

  override numParameters(): number {
    let n = super.numParameters();
    for (const w of this.storedBases.values()) n += w.shape[0] * w.shape[1];
    return n;
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
    for (const w of this.storedBases.values()) disposeFrozenWeight(w);
    this.storedBases.clear();
    super.dispose();
    this.attached.clear();
  }
}
