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
 * What every decoder does alike (input checks, hidden states, KV cache, per-layer memory scoping
 * and checkpointing, logits) is the decoder base's (../decoder/decoder-model.ts); this file states
 * LLaMA's embedding, layer, final norm and head. Parameters are tf.Variables under
 * LlamaForCausalLM's names (./weights.ts); linear layers can carry adapters (../adapters/types.ts:
 * LoRA), whose parameters join `params`.
 */
import { tf } from '../../backend/index.js';
import { blockedAttention } from '../../ops/blocked-attention.js';
import { fusedAttention } from '../../ops/fused-attention.js';
import { groupedQueryAttention } from '../../ops/attention.js';
import { fusedDropout } from '../../ops/dropout.js';
import { rmsNorm } from '../../ops/rms-norm.js';
import { applyRotary, rotaryInverseFrequencies, rotaryTables, type RotaryTables } from '../../ops/rotary.js';
import { swiglu } from '../../ops/swiglu.js';
import { InputError } from '../../util/errors.js';
import { DecoderModel, type DecoderCall, type LayerInputs, type LayerKeys, type LayerOutput } from '../decoder/decoder-model.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import type { LlamaConfig } from './config.js';
import { llamaLinearModules, type WeightTensor } from './weights.js';

export { disposeKvCache, positionsFromMask, type DecoderInput, type DecoderOptions, type DecoderOutput, type KvCache } from '../causal-decoder.js';

export class LlamaModel extends DecoderModel<LlamaConfig> {
  private readonly invFreq: Float32Array;

  /** `frozenBase`: the linear layers' weights stored in 16 or 4 bits as they load (../frozen-base.ts). */
  constructor(config: LlamaConfig, weights: ReadonlyMap<string, WeightTensor>, dropoutSeed = 0, frozenBase?: FrozenBaseSpec) {
    super('llama', config, weights, dropoutSeed, frozenBase && { spec: frozenBase, modules: llamaLinearModules(config) });
    this.invFreq = rotaryInverseFrequencies(config.headDim, config.ropeTheta, config.ropeLinearScale);
  }

  /** Attention dropout (LLaMA's only dropout; adapters have their own). */
  protected override applyDropout(p: number): void {
    this.config.attentionDropout = p;
  }

  override linearModules(): Map<string, readonly [number, number]> {
    return llamaLinearModules(this.config);
  }

  protected layerPrefix(l: number): string {
    return `model.layers.${l}.`;
  }

  /** Rotary positions have no table to run out of, but the model holds max_position_embeddings tokens. */
  protected checkPositions(call: DecoderCall): void {
    if (call.keyLen > this.config.maxPositions) {
      const past = call.keyLen - call.seqLen;
      throw new InputError(`sequence of ${call.keyLen} tokens (${past} cached + ${call.seqLen} new) exceeds the context length ${this.config.maxPositions} (max_position_embeddings); truncate the input`);
    }
  }

  /** Token embeddings only: positions enter through rotary in every layer. */
  protected embed(ids: tf.Tensor2D): tf.Tensor {
    return tf.gather(this.p('model.embed_tokens.weight'), ids);
  }

  /** The rotary tables of the call's positions, [cos, sin]. */
  protected override layerConstants(call: DecoderCall): tf.Tensor[] {
    const rope = rotaryTables(call.positions, call.batch, call.seqLen, this.invFreq);
    return [rope.cos, rope.sin];
  }

  protected finalHidden(h: tf.Tensor): tf.Tensor {
    return rmsNorm(h, this.p('model.norm.weight'), this.config.rmsNormEps);
  }

  /** lm_head, or the embedding matrix when tied. */
  protected lmHeadWeight(): string {
    return this.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  }

  /**
   * Decoder layer l: h + attention(rmsnorm(h)), then + SwiGLU MLP(rmsnorm(·)). With `past`, this
   * layer's keys and values are appended to the cached ones.
   */
  protected layer(h: tf.Tensor, l: number, inputs: LayerInputs, s: DecoderCall, past?: LayerKeys): LayerOutput {
    const cfg = this.config;
    const { numHeads: H, numKvHeads: Hkv, headDim: D } = cfg;
    const { batch: B, seqLen: T, ctx } = s;
    const rope: RotaryTables = { cos: inputs.extra[0] as tf.Tensor4D, sin: inputs.extra[1] as tf.Tensor4D };
    const split = (x: tf.Tensor, heads: number) => tf.transpose(tf.reshape(x, [B, T, heads, D]), [0, 2, 1, 3]);
    const p = this.layerPrefix(l);
    // Sub-expressions in their own scopes: what the tape did not save (a projection before its
    // head split, a head split before rotary) is freed as soon as it is used, not at the layer's end.
    const n1 = rmsNorm(h, this.p(`${p}input_layernorm.weight`), cfg.rmsNormEps);
    const q = tf.tidy(() => applyRotary(split(this.linear(n1, `${p}self_attn.q_proj`, ctx), H), rope));
    let k = tf.tidy(() => applyRotary(split(this.linear(n1, `${p}self_attn.k_proj`, ctx), Hkv), rope));
    let v = tf.tidy(() => split(this.linear(n1, `${p}self_attn.v_proj`, ctx), Hkv));
    if (past) {
      k = tf.concat([past.keys, k], 2);
      v = tf.concat([past.values, v], 2);
    }
    const rate = cfg.attentionDropout;
    const dropout = s.training && rate > 0;
    let attn: tf.Tensor;
    if (s.attention === 'blocked') {
      attn = blockedAttention(q, k, v, inputs.mask, { dropout: dropout ? { rate, seed: ctx.nextDropoutSeed() } : undefined });
    } else if (s.attention === 'fused') {
      // One kernel on cuda (the causal/padding mask [B, 1, T, S] as its additive mask, GQA as is); plain attention elsewhere.
      attn = fusedAttention(q, k, v, inputs.mask, { dropout: dropout ? { rate, seed: ctx.nextDropoutSeed() } : undefined });
    } else {
      attn = groupedQueryAttention(q, k, v, inputs.mask, { dropout: dropout ? (probs: tf.Tensor) => fusedDropout(probs, rate, ctx.nextDropoutSeed()) : undefined });
    }
    const h2 = tf.tidy(() => tf.add(h, this.linear(tf.reshape(tf.transpose(attn, [0, 2, 1, 3]), [B, T, H * D]), `${p}self_attn.o_proj`, ctx)));
    const n2 = rmsNorm(h2, this.p(`${p}post_attention_layernorm.weight`), cfg.rmsNormEps);
    const ff = tf.tidy(() => swiglu(this.linear(n2, `${p}mlp.gate_proj`, ctx), this.linear(n2, `${p}mlp.up_proj`, ctx)));
    return { h: tf.tidy(() => tf.add(h2, this.linear(ff, `${p}mlp.down_proj`, ctx))), keys: k as tf.Tensor4D, values: v as tf.Tensor4D };
  }
}
