/**
 * The LLaMA decoder in tfjs-core ops, computing what HF `LlamaForCausalLM` computes:
 *
 *   h = embed_tokens[ids]
 *   per layer:  h = h + o_proj(attention(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))),  n = rmsnorm(h)
 *               h = h + down_proj(silu(gate_proj(n)) · up_proj(n)),                      n = rmsnorm(h)
 *   last_hidden_state = rmsnorm(h)  (model.norm),   logits = last_hidden_state · lm_headᵀ
 *
 * with causal attention, grouped-query heads (../../ops/attention.ts), rotary embeddings in HF's
 * half-rotation layout (../../ops/rotary.ts), RMSNorm and SwiGLU (../../ops). `hiddenStates` are
 * HF's: [embeddings, layer 1, ..., layer N−1, norm(layer N)] (the last one is last_hidden_state).
 *
 * Padding and positions. Keys that are padding (attention mask 0) are masked like future tokens.
 * Rotary positions number each row's real tokens from 0 — position = cumsum(mask) − 1, padding
 * gets 1 — which is what HF's `generate` passes (plain `model(**inputs)` uses 0..T−1 whatever the
 * padding). So a left-padded row computes what the same text computes alone, up to summation
 * order, and a KV-cache step continues each row's numbering. For PromptEOL / AnglE-LLaMA
 * embeddings (whose reference code calls `model(**inputs)` on left-padded batches) this changes
 * nothing mathematically: rotary attention scores depend only on the difference of two positions,
 * and padding shifts all real tokens of a row alike, so the reference's embeddings and ours differ
 * by float rounding only, and ours do not depend on which other texts share the batch.
 *
 * Parameters are tf.Variables under LlamaForCausalLM's names (./weights.ts); linear layers can
 * carry adapters (../adapters/types.ts: LoRA), whose parameters join `params`.
 */
import { backendCapabilities, tf } from '../../backend/index.js';
import { causalPaddingMask, groupedQueryAttention } from '../../ops/attention.js';
import { fusedDropout } from '../../ops/dropout.js';
import { rmsNorm } from '../../ops/rms-norm.js';
import { applyRotary, rotaryInverseFrequencies, rotaryTables, type RotaryTables } from '../../ops/rotary.js';
import { swiglu } from '../../ops/swiglu.js';
import { InputError } from '../../util/errors.js';
import type { AdaptableModel, AdapterContext, LinearAdapter } from '../adapters/types.js';
import { ModelParameters } from '../parameters.js';
import type { ForwardOptions, ModelOutput, TokenBatch } from '../types.js';
import type { LlamaConfig } from './config.js';
import { LLAMA_LINEAR_MODULES, llamaLinearShapes, type WeightTensor } from './weights.js';

/** Keys and values of the tokens seen so far, per layer: [batch, numKvHeads, length, headDim], rotary applied. */
export interface KvCache {
  keys: tf.Tensor4D[];
  values: tf.Tensor4D[];
  /** Tokens held (padding included). */
  length: number;
}

/** Frees a cache's tensors. */
export function disposeKvCache(cache: KvCache | undefined): void {
  if (!cache) return;
  tf.dispose([...cache.keys, ...cache.values]);
}

/** One decoder call: new tokens, and the mask over the cached tokens followed by them. */
export interface DecoderInput {
  /** [batch, seqLen] new token ids. */
  inputIds: Int32Array;
  batch: number;
  seqLen: number;
  /** [batch, cacheLength + seqLen]: 1 for real tokens, 0 for padding. */
  attentionMask: Int32Array;
  /** [batch, seqLen] rotary positions; default `positionsFromMask`. */
  positions?: Int32Array;
}

export interface DecoderOptions extends ForwardOptions {
  /** Keys and values of earlier tokens (not disposed by the call). */
  cache?: KvCache;
  /** Return the cache extended by this call's tokens. */
  returnCache?: boolean;
  /** Logits at every position, at the last position only, or none (default). */
  logits?: 'all' | 'last' | 'none';
}

export interface DecoderOutput extends ModelOutput {
  /** [batch, seqLen, vocab] ('all') or [batch, vocab] ('last'). */
  logits?: tf.Tensor;
  cache?: KvCache;
}

/**
 * Rotary positions of the last `queryLen` tokens of each row: the number of real tokens before
 * them in the row (cumsum(mask) − 1), and 1 for padding (HF generate's numbering).
 */
export function positionsFromMask(mask: Int32Array, batch: number, keyLen: number, queryLen: number): Int32Array {
  if (mask.length !== batch * keyLen) throw new Error(`attention mask has ${mask.length} entries, expected ${batch} × ${keyLen}`);
  const out = new Int32Array(batch * queryLen);
  for (let b = 0; b < batch; b++) {
    let seen = 0;
    for (let s = 0; s < keyLen; s++) {
      const real = mask[b * keyLen + s] !== 0;
      if (real) seen++;
      const t = s - (keyLen - queryLen);
      if (t >= 0) out[b * queryLen + t] = real ? seen - 1 : 1;
    }
  }
  return out;
}

export class LlamaModel implements AdaptableModel {
  readonly architecture = 'llama';
  dropoutCounter = 0;
  private readonly parameters = new ModelParameters('llama');
  private readonly attached = new Map<string, LinearAdapter>();
  private readonly invFreq: Float32Array;

  constructor(
    readonly config: LlamaConfig,
    weights: ReadonlyMap<string, WeightTensor>,
    /** Seed of the dropout masks (training only). */
    public dropoutSeed = 0,
  ) {
    for (const [name, t] of weights) this.parameters.create(name, t.data as Float32Array, t.shape);
    this.invFreq = rotaryInverseFrequencies(config.headDim, config.ropeTheta, config.ropeLinearScale);
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

  get vocabSize(): number {
    return this.config.vocabSize;
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

  /** Attention dropout (LLaMA's only dropout; adapters have their own). */
  setDropout(p: number): void {
    if (!(p >= 0 && p < 1)) throw new RangeError(`dropout must be in [0, 1), got ${p}`);
    this.config.attentionDropout = p;
  }

  linearModules(): Map<string, readonly [number, number]> {
    const shapes = llamaLinearShapes(this.config);
    const m = new Map<string, readonly [number, number]>();
    for (let l = 0; l < this.config.numLayers; l++) for (const mod of LLAMA_LINEAR_MODULES) m.set(`model.layers.${l}.${mod}`, shapes[mod]);
    return m;
  }

  attachAdapter(module: string, adapter: LinearAdapter): void {
    if (!this.params.has(`${module}.weight`) || !/^model\.layers\.\d+\./.test(module)) {
      throw new InputError(`'${module}' is not a linear module of this model (e.g. model.layers.0.self_attn.q_proj)`);
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

  private p(name: string): tf.Variable {
    const v = this.params.get(name);
    if (!v) throw new Error(`LLaMA parameter '${name}' is not loaded`);
    return v;
  }

  /** x Wᵀ with a PyTorch-layout [out, in] weight, plus the module's adapter output if it has one. */
  private linear(x: tf.Tensor, module: string, ctx: AdapterContext): tf.Tensor {
    const w = this.p(`${module}.weight`);
    const shape = x.shape;
    const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]) as tf.Tensor2D;
    let y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
    const adapter = this.attached.get(module);
    if (adapter) y = tf.add(y, adapter.delta(x2, ctx));
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
  }

  /** [.., hidden] -> [.., vocab] through lm_head, or the embedding matrix when tied. */
  private lmHead(h: tf.Tensor): tf.Tensor {
    const w = this.p(this.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
    const shape = h.shape;
    const h2 = tf.reshape(h, [-1, shape[shape.length - 1]]);
    const y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(h2, w, false, true) : tf.matMul(h2, tf.transpose(w));
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
  }

  /** The hidden states of a tokenised batch (no cache, no logits): TextModel's forward. */
  forward(batch: TokenBatch, opts: ForwardOptions = {}): ModelOutput {
    const out = this.decode({ inputIds: batch.inputIds, batch: batch.batch, seqLen: batch.seqLen, attentionMask: batch.attentionMask }, opts);
    return { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates };
  }

  /** Logits at every position of a tokenised batch: [batch, seqLen, vocab]. */
  logits(batch: TokenBatch, opts: ForwardOptions = {}): tf.Tensor3D {
    const out = this.decode({ inputIds: batch.inputIds, batch: batch.batch, seqLen: batch.seqLen, attentionMask: batch.attentionMask }, { ...opts, logits: 'all' });
    tf.dispose([out.lastHiddenState, ...out.hiddenStates]);
    return out.logits as tf.Tensor3D;
  }

  /**
   * One decoder call over new tokens, optionally continuing a KV cache: hidden states, logits and
   * the extended cache as asked. The returned tensors belong to the caller; the input cache is
   * left as it was.
   */
  decode(input: DecoderInput, opts: DecoderOptions = {}): DecoderOutput {
    const cfg = this.config;
    const { batch: B, seqLen: T } = input;
    const past = opts.cache?.length ?? 0;
    const S = past + T;
    if (input.inputIds.length !== B * T) throw new InputError(`input ids hold ${input.inputIds.length} tokens, expected batch ${B} × ${T}`);
    if (input.attentionMask.length !== B * S) {
      throw new InputError(`attention mask holds ${input.attentionMask.length} entries, expected batch ${B} × (${past} cached + ${T} new) tokens`);
    }
    if (S > cfg.maxPositions) {
      throw new InputError(`sequence of ${S} tokens (${past} cached + ${T} new) exceeds the context length ${cfg.maxPositions} (max_position_embeddings); truncate the input`);
    }
    for (let i = 0; i < input.inputIds.length; i++) {
      const id = input.inputIds[i];
      if (!(id >= 0 && id < cfg.vocabSize)) throw new InputError(`token id ${id} at index ${i} is outside the vocabulary [0, ${cfg.vocabSize})`);
    }
    if (opts.cache && (opts.cache.keys.length !== cfg.numLayers || opts.cache.keys[0].shape[0] !== B)) {
      throw new InputError(`KV cache of ${opts.cache.keys.length} layers × batch ${opts.cache.keys[0]?.shape[0]} does not fit ${cfg.numLayers} layers × batch ${B}`);
    }
    const positions = input.positions ?? positionsFromMask(input.attentionMask, B, S, T);
    const training = opts.training ?? false;
    const ctx: AdapterContext = { training, nextDropoutSeed: () => this.dropoutSeed * 1_000_003 + this.dropoutCounter++ };
    const wantLogits = opts.logits ?? 'none';
    return tf.tidy(() => {
      const ids = tf.tensor2d(input.inputIds, [B, T], 'int32');
      let h: tf.Tensor = tf.gather(this.p('model.embed_tokens.weight'), ids);
      const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
      const mask = causalPaddingMask(input.attentionMask, B, T, S);
      const rope: RotaryTables = rotaryTables(positions, B, T, this.invFreq);
      const { numHeads: H, numKvHeads: Hkv, headDim: D } = cfg;
      const split = (x: tf.Tensor, heads: number) => tf.transpose(tf.reshape(x, [B, T, heads, D]), [0, 2, 1, 3]);
      const keys: tf.Tensor4D[] = [];
      const values: tf.Tensor4D[] = [];
      const attnDropout = training && cfg.attentionDropout > 0 ? (p: tf.Tensor) => fusedDropout(p, cfg.attentionDropout, ctx.nextDropoutSeed()) : undefined;
      for (let l = 0; l < cfg.numLayers; l++) {
        const p = `model.layers.${l}.`;
        const n1 = rmsNorm(h, this.p(`${p}input_layernorm.weight`), cfg.rmsNormEps);
        const q = applyRotary(split(this.linear(n1, `${p}self_attn.q_proj`, ctx), H), rope);
        let k = applyRotary(split(this.linear(n1, `${p}self_attn.k_proj`, ctx), Hkv), rope);
        let v = split(this.linear(n1, `${p}self_attn.v_proj`, ctx), Hkv);
        if (opts.cache) {
          k = tf.concat([opts.cache.keys[l], k], 2);
          v = tf.concat([opts.cache.values[l], v], 2);
        }
        if (opts.returnCache) {
          keys.push(k as tf.Tensor4D);
          values.push(v as tf.Tensor4D);
        }
        const attn = groupedQueryAttention(q, k, v, mask, { dropout: attnDropout });
        const merged = tf.reshape(tf.transpose(attn, [0, 2, 1, 3]), [B, T, H * D]);
        h = tf.add(h, this.linear(merged, `${p}self_attn.o_proj`, ctx));
        const n2 = rmsNorm(h, this.p(`${p}post_attention_layernorm.weight`), cfg.rmsNormEps);
        const ff = swiglu(this.linear(n2, `${p}mlp.gate_proj`, ctx), this.linear(n2, `${p}mlp.up_proj`, ctx));
        h = tf.add(h, this.linear(ff, `${p}mlp.down_proj`, ctx));
        if (opts.outputHiddenStates && l < cfg.numLayers - 1) hidden.push(h as tf.Tensor3D);
      }
      const last = rmsNorm(h, this.p('model.norm.weight'), cfg.rmsNormEps) as tf.Tensor3D;
      if (opts.outputHiddenStates) hidden.push(last);
      const out: DecoderOutput = { lastHiddenState: last, hiddenStates: hidden };
      if (wantLogits === 'all') out.logits = this.lmHead(last);
      else if (wantLogits === 'last') out.logits = this.lmHead(tf.reshape(tf.slice(last, [0, T - 1, 0], [B, 1, cfg.hiddenSize]), [B, cfg.hiddenSize]));
      if (opts.returnCache) out.cache = { keys, values, length: S };
      return out as unknown as tf.TensorContainerObject;
    }) as unknown as DecoderOutput;
  }

  /** The current values of the model's own parameters (adapters excluded), e.g. to write an HF directory. */
  async baseWeights(): Promise<Map<string, WeightTensor>> {
    const adapterParams = new Set([...this.attached].flatMap(([m, a]) => [...a.params.keys()].map((n) => `${m}.${n}`)));
    const out = new Map<string, WeightTensor>();
    for (const [name, v] of this.params) {
      if (!adapterParams.has(name)) out.set(name, { shape: v.shape.slice(), data: (await v.data()) as Float32Array });
    }
    return out;
  }

  numParameters(): number {
    return this.parameters.count();
  }

  dispose(): void {
    this.parameters.dispose();
    this.attached.clear();
  }
}
