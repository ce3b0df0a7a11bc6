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
import { AdaptableTransformerModel } from '../adaptable-transformer-model.js';
import { positionsFromMask, type DecoderInput, type DecoderOptions, type DecoderOutput, type KvCache } from '../causal-decoder.js';
import { causalPaddingMask, groupedQueryAttention } from '../../ops/attention.js';
import { blockedAttention } from '../../ops/blocked-attention.js';
import { checkpoint, replayingDropout, trainableUnder } from '../../ops/checkpoint.js';
import { fusedDropout } from '../../ops/dropout.js';
import { rmsNorm } from '../../ops/rms-norm.js';
import { applyRotary, rotaryInverseFrequencies, rotaryTables, type RotaryTables } from '../../ops/rotary.js';
import { swiglu } from '../../ops/swiglu.js';
import { InputError } from '../../util/errors.js';
import type { AdaptableModel, AdapterContext } from '../adapters/types.js';
import type { ForwardOptions, ModelOutput, TokenBatch } from '../types.js';
import type { LlamaConfig } from './config.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import { llamaLinearModules, type WeightTensor } from './weights.js';

export { disposeKvCache, positionsFromMask, type DecoderInput, type DecoderOptions, type DecoderOutput, type KvCache } from '../causal-decoder.js';

/** What every layer of one decoder call shares. */
interface DecoderStep {
  B: number;
  T: number;
  mask: tf.Tensor;
  rope: RotaryTables;
  ctx: AdapterContext;
  attnDropout?: (p: tf.Tensor) => tf.Tensor;
  attention: 'plain' | 'blocked';
  training: boolean;
}

/** Parameters, adapters, the adapted linear layer and the frozen base in 16 or 4 bits come from AdaptableTransformerModel (../adaptable-transformer-model.ts). */
export class LlamaModel extends AdaptableTransformerModel<LlamaConfig> implements AdaptableModel {
  private readonly invFreq: Float32Array;

  /** `frozenBase`: the linear layers' weights stored in 16 or 4 bits as they load (../frozen-base.ts). */
  constructor(config: LlamaConfig, weights: ReadonlyMap<string, WeightTensor>, dropoutSeed = 0, frozenBase?: FrozenBaseSpec) {
    super('llama', config, weights, dropoutSeed, frozenBase && { spec: frozenBase, modules: llamaLinearModules(config) });
    this.invFreq = rotaryInverseFrequencies(config.headDim, config.ropeTheta, config.ropeLinearScale);
  }

  get vocabSize(): number {
    return this.config.vocabSize;
  }

  /** Attention dropout (LLaMA's only dropout; adapters have their own). */
  protected override applyDropout(p: number): void {
    this.config.attentionDropout = p;
  }

  override linearModules(): Map<string, readonly [number, number]> {
    return llamaLinearModules(this.config);
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
    const ctx: AdapterContext = this.adapterContext(training);
    const wantLogits = opts.logits ?? 'none';
    return tf.tidy(() => {
      const ids = tf.tensor2d(input.inputIds, [B, T], 'int32');
      let h: tf.Tensor = tf.gather(this.p('model.embed_tokens.weight'), ids);
      const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
      const mask = causalPaddingMask(input.attentionMask, B, T, S);
      const rope: RotaryTables = rotaryTables(positions, B, T, this.invFreq);
      const keys: tf.Tensor4D[] = [];
      const values: tf.Tensor4D[] = [];
      const attnDropout = training && cfg.attentionDropout > 0 ? (p: tf.Tensor) => fusedDropout(p, cfg.attentionDropout, ctx.nextDropoutSeed()) : undefined;
      const step: DecoderStep = { B, T, mask, rope, ctx, attnDropout, attention: opts.attention ?? 'plain', training };
      for (let l = 0; l < cfg.numLayers; l++) {
        if (opts.cache || opts.returnCache) {
          h = this.decoderLayer(h, l, step, opts.cache, opts.returnCache ? { keys, values } : undefined);
        } else {
          // Each layer in its own scope, so what the gradient tape did not save is freed when the
          // layer ends; with checkpointing one recomputed op that keeps only the layer's input.
          const layer = replayingDropout(this, (x: tf.Tensor, m: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor) =>
            tf.tidy(() => this.decoderLayer(x, l, { ...step, mask: m, rope: { cos: cos as tf.Tensor4D, sin: sin as tf.Tensor4D } })),
          );
          const consts = [mask, rope.cos, rope.sin];
          h = opts.checkpointing ? checkpoint(layer, h, trainableUnder(this.params, `model.layers.${l}.`), consts) : layer(h, ...consts);
        }
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


  /**
   * Decoder layer l: h + attention(rmsnorm(h)), then + SwiGLU MLP(rmsnorm(·)). With a KV cache,
   * this layer's keys and values are appended to the cached ones; `collect` receives them.
   */
  private decoderLayer(h: tf.Tensor, l: number, s: DecoderStep, cache?: KvCache, collect?: { keys: tf.Tensor4D[]; values: tf.Tensor4D[] }): tf.Tensor {
    const cfg = this.config;
    const { numHeads: H, numKvHeads: Hkv, headDim: D } = cfg;
    const { B, T, ctx } = s;
    const split = (x: tf.Tensor, heads: number) => tf.transpose(tf.reshape(x, [B, T, heads, D]), [0, 2, 1, 3]);
    const p = `model.layers.${l}.`;
    // Sub-expressions in their own scopes: what the tape did not save (a projection before its
    // head split, a head split before rotary) is freed as soon as it is used, not at the layer's end.
    const n1 = rmsNorm(h, this.p(`${p}input_layernorm.weight`), cfg.rmsNormEps);
    const q = tf.tidy(() => applyRotary(split(this.linear(n1, `${p}self_attn.q_proj`, ctx), H), s.rope));
    let k = tf.tidy(() => applyRotary(split(this.linear(n1, `${p}self_attn.k_proj`, ctx), Hkv), s.rope));
    let v = tf.tidy(() => split(this.linear(n1, `${p}self_attn.v_proj`, ctx), Hkv));
    if (cache) {
      k = tf.concat([cache.keys[l], k], 2);
      v = tf.concat([cache.values[l], v], 2);
    }
    if (collect) {
      collect.keys.push(k as tf.Tensor4D);
      collect.values.push(v as tf.Tensor4D);
    }
    let attn: tf.Tensor;
    if (s.attention === 'blocked') {
      const rate = cfg.attentionDropout;
      attn = blockedAttention(q, k, v, s.mask, { dropout: s.training && rate > 0 ? { rate, seed: ctx.nextDropoutSeed() } : undefined });
    } else {
      attn = groupedQueryAttention(q, k, v, s.mask, { dropout: s.attnDropout });
    }
    const h2 = tf.tidy(() => tf.add(h, this.linear(tf.reshape(tf.transpose(attn, [0, 2, 1, 3]), [B, T, H * D]), `${p}self_attn.o_proj`, ctx)));
    const n2 = rmsNorm(h2, this.p(`${p}post_attention_layernorm.weight`), cfg.rmsNormEps);
    const ff = tf.tidy(() => swiglu(this.linear(n2, `${p}mlp.gate_proj`, ctx), this.linear(n2, `${p}mlp.up_proj`, ctx)));
    return tf.tidy(() => tf.add(h2, this.linear(ff, `${p}mlp.down_proj`, ctx)));
  }

}
