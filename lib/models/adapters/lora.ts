/**
 * LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models") as PEFT's
 * `LoraLayer` computes it on a linear layer y = x Wᵀ:
 *
 *   y = x Wᵀ + scaling · (dropout(x) Aᵀ) Bᵀ,   A [r, in], B [out, r],   scaling = α / r
 *   (α / √r with use_rslora)
 *
 * Initialisation as PEFT's default (`init_lora_weights=True`): B = 0, so a fresh adapter leaves
 * the model exactly as it was, and A ~ kaiming_uniform(a = √5) = U(−1/√in, 1/√in) (gain √(2/(1+a²))
 * = 1/√3 times √(3/fan_in)), drawn with tf.randomUniform from a seed (one stream per module, in
 * module order), so an initialisation is reproducible. Dropout on the adapter's input is active in
 * training mode only, with masks from the model's seeded counter.
 *
 * Target modules follow PEFT's matching of a list: a module matches a target t when its name is
 * t or ends in `.t`; the default is `q_proj` and `v_proj` (PEFT's default for LLaMA and for OPT), and
 * `all-linear` means every linear layer of the decoder layers (not the LM head). The names are the
 * model's own: LLaMA's q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj; OPT's q_proj,
 * k_proj, v_proj, out_proj, fc1, fc2 (each model lists them in `linearModules()`). `addLora` freezes
 * every other parameter (the model's setTrainable), `mergeLora` folds W ← W + scaling · B A into
 * the base weights for inference and removes the adapters.
 */
import { tf } from '../../backend/index.js';
import { loraDelta } from '../../ops/lora-delta.js';
import { InputError } from '../../util/errors.js';
import type { AdaptableModel, AdapterContext, LinearAdapter } from './types.js';

export interface LoraConfig {
  /** Rank r. */
  r: number;
  /** α: the update is scaled by α / r. */
  alpha: number;
  /** Dropout probability on the adapter's input (training only). */
  dropout: number;
  /** Module names (or name suffixes) to adapt, or 'all-linear'. Default q_proj, v_proj. */
  targetModules?: readonly string[] | 'all-linear';
  /** Scale by α / √r instead of α / r (rank-stabilised LoRA). */
  useRslora?: boolean;
}

/** PEFT's default target modules for LLaMA (and OPT). */
export const DEFAULT_LORA_TARGETS: readonly string[] = ['q_proj', 'v_proj'];

/** Whether a parameter name is a LoRA matrix (`….lora_A.weight` / `….lora_B.weight`). */
export function isLoraParameter(name: string): boolean {
  return /\.lora_[AB]\.weight$/.test(name);
}

/** The LoRA matrices of one linear layer. */
export class LoraLinear implements LinearAdapter {
  readonly params: Map<string, tf.Variable>;
  readonly scaling: number;

  constructor(
    readonly r: number,
    readonly alpha: number,
    readonly dropout: number,
    readonly useRslora: boolean,
    /** A [r, in] and B [out, r]; the adapter owns them. */
    a: tf.Variable,
    b: tf.Variable,
  ) {
    if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[0] !== r || b.shape[1] !== r) {
      throw new InputError(`LoRA matrices of rank ${r} must be A [${r}, in] and B [out, ${r}], got A ${JSON.stringify(a.shape)} and B ${JSON.stringify(b.shape)}`);
    }
    this.params = new Map([
      ['lora_A.weight', a],
      ['lora_B.weight', b],
    ]);
    this.scaling = useRslora ? alpha / Math.sqrt(r) : alpha / r;
  }

  get a(): tf.Variable {
    return this.params.get('lora_A.weight')!;
  }

  get b(): tf.Variable {
    return this.params.get('lora_B.weight')!;
  }

  delta(x: tf.Tensor2D, ctx: AdapterContext): tf.Tensor2D {
    // One recorded op that keeps x, not dropout(x), and redraws the mask in backward (../../ops/lora-delta.ts).
    const dropout = ctx.training && this.dropout > 0 ? { rate: this.dropout, seed: ctx.nextDropoutSeed() } : undefined;
    return loraDelta(x, this.a, this.b, this.scaling, dropout) as tf.Tensor2D;
  }

  /** scaling · B A: the [out, in] update merging adds to W. */
  update(): tf.Tensor2D {
    return tf.tidy(() => tf.mul(tf.matMul(this.b, this.a), this.scaling) as tf.Tensor2D);
  }

  dispose(): void {
    this.a.dispose();
    this.b.dispose();
  }
}

let variables = 0;

/** A fresh tf.Variable with a name no other variable has (tfjs names are global). */
export function loraVariable(module: string, which: 'A' | 'B', value: tf.Tensor): tf.Variable {
  return tf.variable(value, true, `lora${variables++}/${module}.lora_${which}.weight`);
}

function checkConfig(cfg: LoraConfig): void {
  if (!Number.isInteger(cfg.r) || cfg.r <= 0) throw new InputError(`LoRA rank r must be a positive integer, got ${cfg.r}`);
  if (!(cfg.alpha > 0 && Number.isFinite(cfg.alpha))) throw new InputError(`LoRA alpha must be a positive number, got ${cfg.alpha}`);
  if (!(cfg.dropout >= 0 && cfg.dropout < 1)) throw new InputError(`LoRA dropout must be in [0, 1), got ${cfg.dropout}`);
}

/** The modules of `model` a target list selects (PEFT's rule: the name or a `.`-suffix of it). */
export function selectLoraModules(model: AdaptableModel, targets: readonly string[] | 'all-linear' = DEFAULT_LORA_TARGETS): string[] {
  const all = [...model.linearModules().keys()];
  if (targets === 'all-linear') return all;
  if (targets.length === 0) throw new InputError('LoRA target modules: the list is empty');
  const chosen = all.filter((m) => targets.some((t) => m === t || m.endsWith(`.${t}`)));
  const unmatched = targets.filter((t) => !all.some((m) => m === t || m.endsWith(`.${t}`)));
  if (unmatched.length > 0) {
    const kinds = [...new Set(all.map((m) => m.split('.').pop()!))];
    throw new InputError(`LoRA target modules ${unmatched.map((t) => `'${t}'`).join(', ')} match no linear layer of this model (its layers end in ${kinds.join(', ')})`);
  }
  return chosen;
}

/**
 * Attaches fresh LoRA adapters (B = 0, A kaiming-uniform from `seed`) to the target modules and
 * makes them the only trainable parameters. Returns the adapted module names.
 */
export function addLora(model: AdaptableModel, cfg: LoraConfig, seed = 0): string[] {
  checkConfig(cfg);
  const modules = selectLoraModules(model, cfg.targetModules);
  const shapes = model.linearModules();
  modules.forEach((module, i) => {
    const [out, inp] = shapes.get(module)!;
    const bound = 1 / Math.sqrt(inp);
    const a = tf.tidy(() => loraVariable(module, 'A', tf.randomUniform([cfg.r, inp], -bound, bound, 'float32', seed * 1_000_003 + i)));
    const b = tf.tidy(() => loraVariable(module, 'B', tf.zeros([out, cfg.r])));
    model.attachAdapter(module, new LoraLinear(cfg.r, cfg.alpha, cfg.dropout, cfg.useRslora ?? false, a, b));
  });
  model.setTrainable(isLoraParameter);
  return modules;
}

/** The LoRA adapters attached to a model, by module. */
export function loraAdapters(model: AdaptableModel): Map<string, LoraLinear> {
  const out = new Map<string, LoraLinear>();
  for (const [m, a] of model.adapters()) if (a instanceof LoraLinear) out.set(m, a);
  return out;
}

/**
 * Folds every LoRA adapter into its base weight (W ← W + scaling · B A), detaches and frees the
 * adapters, and makes all parameters trainable again. The model then computes what it computed
 * with the adapters (up to float rounding) at the base model's cost.
 */
export function mergeLora(model: AdaptableModel): string[] {
  const merged: string[] = [];
  for (const [module, lora] of loraAdapters(model)) {
    const w = model.params.get(`${module}.weight`);
    if (!w) throw new Error(`no base weight '${module}.weight' to merge into`);
    tf.tidy(() => w.assign(tf.add(w, lora.update())));
    model.detachAdapter(module);
    lora.dispose();
    merged.push(module);
  }
  model.setTrainable(() => true);
  return merged;
}

/** Detaches and frees every LoRA adapter without merging (back to the base model). */
export function removeLora(model: AdaptableModel): void {
  for (const [module, lora] of loraAdapters(model)) {
    model.detachAdapter(module);
    lora.dispose();
  }
  model.setTrainable(() => true);
}
