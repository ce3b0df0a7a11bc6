/**
 * AdamW (Loshchilov & Hutter) as PyTorch's `torch.optim.AdamW` computes it, per parameter:
 *
 *   p ← p · (1 − lr · wd)                       decoupled weight decay (only for decayed params)
 *   m ← β1 · m + (1 − β1) · g
 *   v ← β2 · v + (1 − β2) · g²
 *   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε)
 *
 * with t counted per parameter. A parameter that gets no gradient in a step is left alone (no
 * decay, no moment update, t unchanged), as PyTorch does for `grad is None` — e.g. BERT's pooler
 * when training on [CLS]. Parameter groups follow the usual BERT recipe: no weight decay on
 * biases and LayerNorm weights (`noDecay`).
 *
 * The update itself is `fusedAdamWUpdate` (lib/ops/adamw-step.ts): one kernel per parameter on
 * backends that have one (cpu through lib/backend/cpu-kernels.ts), tfjs ops elsewhere; on cuda
 * `fusedAdamWMultiUpdate`, every parameter in place in ⌈n / 64⌉ launches, with the learning rates
 * and bias corrections in one array (`hyperFeed`) that a replayed step graph uploads
 * (lib/train/step-graphs.ts) — the same arithmetic, the same numbers.
 * The moments are tf.Variables owned by the optimiser; `exportState`/`importState` move them in
 * and out of a checkpoint.
 */
import { tf } from '../backend/index.js';
import { fusedAdamWMultiUpdate, fusedAdamWUpdate, hasMultiTensorAdamW } from '../ops/adamw-step.js';
import { InputError } from '../util/errors.js';

export interface AdamWOptions {
  betas?: [number, number];
  eps?: number;
  /** Decoupled weight decay (PyTorch's default is 0.01). */
  weightDecay?: number;
  /** Parameters excluded from weight decay, by canonical name (default: biases and LayerNorm). */
  noDecay?: (name: string) => boolean;
}

/** BERT's no-decay group: every bias and every LayerNorm parameter. */
export function isNoDecayParameter(name: string): boolean {
  return name.endsWith('.bias') || /(^|\.)LayerNorm\./.test(name) || /(^|\.)(layer_norm|ln_\w+|norm)\./.test(name);
}

/**
 * `tf.variableGrads`' gradients, which are keyed by tfjs variable name, keyed instead by the
 * parameters' own (canonical) names in `params`, as AdamW.step and the checkpoints use them.
 */
export function gradientsByParameterName(params: ReadonlyMap<string, tf.Variable>, grads: tf.NamedTensorMap): Map<string, tf.Tensor> {
  const byVariable = new Map<string, string>();
  for (const [name, v] of params) byVariable.set(v.name, name);
  const named = new Map<string, tf.Tensor>();
  for (const [variableName, g] of Object.entries(grads)) named.set(byVariable.get(variableName) ?? variableName, g);
  return named;
}

/** What a checkpoint stores of the optimiser. */
export interface AdamWState {
  /** Updates done per parameter (PyTorch's `state[p]['step']`). */
  steps: Record<string, number>;
  expAvg: Map<string, { data: Float32Array; shape: number[] }>;
  expAvgSq: Map<string, { data: Float32Array; shape: number[] }>;
}

interface Slot {
  m: tf.Variable;
  v: tf.Variable;
  t: number;
}

export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  private readonly decays = new Map<string, boolean>();
  private readonly slots = new Map<string, Slot>();
  /** The multi-tensor step's per-parameter [lr, wd, 1 − β1^t, 1 − β2^t], rewritten in place each step. */
  private hyper = new Float32Array(0);
  /** The parameters the last multi-tensor step updated, in order. */
  private lastNames: string[] = [];

  constructor(
    readonly params: ReadonlyMap<string, tf.Variable>,
    opts: AdamWOptions = {},
  ) {
    [this.beta1, this.beta2] = opts.betas ?? [0.9, 0.999];
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0.01;
    for (const [k, b] of [['beta1', this.beta1], ['beta2', this.beta2]] as const) {
      if (!(b >= 0 && b < 1)) throw new InputError(`AdamW: ${k} must be in [0, 1), got ${b}`);
    }
    if (!(this.eps > 0)) throw new InputError(`AdamW: eps must be > 0, got ${this.eps}`);
    if (!(this.weightDecay >= 0 && Number.isFinite(this.weightDecay))) throw new InputError(`AdamW: weight decay must be >= 0, got ${this.weightDecay}`);
    const noDecay = opts.noDecay ?? isNoDecayParameter;
    for (const name of params.keys()) this.decays.set(name, this.weightDecay > 0 && !noDecay(name));
  }

  /** Names of the parameters that get weight decay (for the run record). */
  decayedParameters(): string[] {
    return [...this.decays].filter(([, d]) => d).map(([n]) => n);
  }

  private slot(name: string, p: tf.Variable): Slot {
    let s = this.slots.get(name);
    if (!s) {
      // Made inside tidy so the zero tensors the variables start from are freed (tfjs's own optimisers do the same).
      s = { m: tf.tidy(() => tf.variable(tf.zerosLike(p), false)), v: tf.tidy(() => tf.variable(tf.zerosLike(p), false)), t: 0 };
      this.slots.set(name, s);
    }
    return s;
  }

  /**
   * One update with learning rate `lr`. `grads` maps canonical parameter names to gradients;
   * names without a gradient are skipped. The gradients are not disposed (they are the caller's).
   */
  step(grads: ReadonlyMap<string, tf.Tensor>, lr: number): void {
    if (!(lr >= 0 && Number.isFinite(lr))) throw new InputError(`AdamW: learning rate must be finite and >= 0, got ${lr}`);
    for (const [name, g] of grads) {
      const p = this.params.get(name);
      if (!p) throw new InputError(`AdamW: gradient for '${name}', which is not a parameter of this optimiser`);
      if (g.shape.length !== p.shape.length || g.shape.some((d, i) => d !== p.shape[i])) {
        throw new InputError(`AdamW: gradient of '${name}' has shape [${g.shape}], parameter has [${p.shape}]`);
      }
    }
    if (hasMultiTensorAdamW()) {
      const names = [...grads.keys()];
      const entries = names.map((name) => {
        const p = this.params.get(name)!;
        const s = this.slot(name, p);
        return { param: p, grad: grads.get(name)!, m: s.m, v: s.v };
      });
      fusedAdamWMultiUpdate(entries, this.advance(names, lr), this.beta1, this.beta2, this.eps);
      return;
    }
    for (const [name, g] of grads) {
      const p = this.params.get(name)!;
      const s = this.slot(name, p);
      s.t += 1;
      tf.tidy(() => {
        const out = fusedAdamWUpdate({
          param: p,
          grad: g,
          m: s.m,
          v: s.v,
          lr,
          beta1: this.beta1,
          beta2: this.beta2,
          eps: this.eps,
          weightDecay: this.decays.get(name) === true ? this.weightDecay : 0,
          step: s.t,
        });
        s.m.assign(out.m);
        s.v.assign(out.v);
        p.assign(out.param);
      });
    }
  }

  /** Counts one more step for each of `names` and writes their hyper-parameters into `hyperFeed` (same array while the count is the same). */
  private advance(names: readonly string[], lr: number): Float32Array {
    if (this.hyper.length !== 4 * names.length) this.hyper = new Float32Array(4 * names.length);
    names.forEach((name, i) => {
      const s = this.slots.get(name);
      if (!s) throw new Error(`AdamW: '${name}' has no optimiser state yet (a replayed step needs one eager step first)`);
      s.t += 1;
      this.hyper.set([lr, this.decays.get(name) === true ? this.weightDecay : 0, 1 - Math.pow(this.beta1, s.t), 1 - Math.pow(this.beta2, s.t)], 4 * i);
    });
    this.lastNames = names.slice();
    return this.hyper;
  }

  /** The array the multi-tensor step uploads its hyper-parameters from (a step graph's feed). */
  get hyperFeed(): Float32Array {
    return this.hyper;
  }

  /** The parameters the last multi-tensor step updated, in order. */
  get lastStepNames(): readonly string[] {
    return this.lastNames;
  }

  /**
   * For a replayed step graph (lib/train/step-graphs.ts), which runs the update on the device
   * without calling step(): counts the step for the parameters the captured step updated and writes
   * their learning rate and bias corrections into `hyperFeed`, exactly as step() would have.
   */
  advanceForReplay(names: readonly string[], lr: number): Float32Array {
    if (!(lr >= 0 && Number.isFinite(lr))) throw new InputError(`AdamW: learning rate must be finite and >= 0, got ${lr}`);
    return this.advance(names, lr);
  }

  /** The step count of every parameter with state (to undo a step that did not happen). */
  stepCounts(): Map<string, number> {
    return new Map([...this.slots].map(([k, s]) => [k, s.t]));
  }

  restoreStepCounts(counts: ReadonlyMap<string, number>): void {
    for (const [k, t] of counts) {
      const s = this.slots.get(k);
      if (s) s.t = t;
    }
  }

  /** The moments and step counts, read back to the host. */
  async exportState(): Promise<AdamWState> {
    const state: AdamWState = { steps: {}, expAvg: new Map(), expAvgSq: new Map() };
    for (const [name, s] of this.slots) {
      state.steps[name] = s.t;
      state.expAvg.set(name, { data: (await s.m.data()) as Float32Array, shape: s.m.shape.slice() });
      state.expAvgSq.set(name, { data: (await s.v.data()) as Float32Array, shape: s.v.shape.slice() });
    }
    return state;
  }

  /** Replaces the optimiser state (after checking every tensor against its parameter). */
  importState(state: AdamWState, source = 'optimizer state'): void {
    const problems: string[] = [];
    for (const [name, t] of Object.entries(state.steps)) {
      const p = this.params.get(name);
      if (!p) {
        problems.push(`'${name}' is not a parameter of this model`);
        continue;
      }
      if (!Number.isInteger(t) || t < 1) problems.push(`'${name}': step count ${t} is not a positive integer`);
      for (const [what, map] of [['exp_avg', state.expAvg], ['exp_avg_sq', state.expAvgSq]] as const) {
        const e = map.get(name);
        if (!e) problems.push(`'${name}': no ${what}`);
        else if (e.shape.length !== p.shape.length || e.shape.some((d, i) => d !== p.shape[i])) {
          problems.push(`'${name}': ${what} has shape [${e.shape}], the parameter [${p.shape}]`);
        }
      }
    }
    if (problems.length > 0) throw new InputError(`${source} does not fit this model: ${problems.join('; ')}`);
    this.disposeSlots();
    for (const [name, t] of Object.entries(state.steps)) {
      const m = state.expAvg.get(name)!;
      const v = state.expAvgSq.get(name)!;
      this.slots.set(name, {
        m: tf.tidy(() => tf.variable(tf.tensor(m.data, m.shape, 'float32'), false)),
        v: tf.tidy(() => tf.variable(tf.tensor(v.data, v.shape, 'float32'), false)),
        t,
      });
    }
  }

  private disposeSlots(): void {
    for (const s of this.slots.values()) {
      s.m.dispose();
      s.v.dispose();
    }
    this.slots.clear();
  }

  dispose(): void {
    this.disposeSlots();
  }
}
