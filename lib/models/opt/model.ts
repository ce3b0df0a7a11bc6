/**
 * The OPT decoder (Zhang et al. 2022, "OPT: Open Pre-trained Transformer Language Models") in
 * tfjs-core ops, computing what HF `OPTForCausalLM` computes (transformers' modeling_opt.py, eager
 * attention):
 *
 *   positions = cumsum(mask) · mask − 1                  (per row; padding −1)
 *   h = project_in(embed_tokens[ids]) + embed_positions[positions + 2]    (project_in only when
 *                                                         word_embed_proj_dim ≠ hidden_size)
 *   pre-LN layer (every OPT but 350m):
 *     h = h + dropout(out_proj(attn(LN₁(h))));   h = h + dropout(fc2(relu(fc1(LN₂(h)))))
 *   post-LN layer (do_layer_norm_before false, OPT-350m):
 *     h = LN₁(h + dropout(out_proj(attn(h))));   h = LN₂(h + dropout(fc2(relu(fc1(h)))))
 *   attn(x) = softmax((q_proj(x) · head_dim^−½) k_proj(x)ᵀ + causal/padding mask) v_proj(x)
 *             (the query is scaled before the product, as HF does; attention dropout on the probabilities)
 *   last_hidden_state = project_out(final_layer_norm(h))  (each only where the config has it)
 *   logits = last_hidden_state · embed_tokensᵀ           (the LM head is tied to the embeddings)
 *
 * `hiddenStates` are HF's: the input of every layer (the first is the embeddings) and then
 * last_hidden_state; the last layer's raw output is not among them. With project_out the last
 * entry is word_embed_proj_dim wide, narrower than the others, and `hiddenSize` (the width that
 * sentence encoders pool) is word_embed_proj_dim.
 *
 * Positions come from the attention mask (OPT's learned positions are offset by 2: the first real
 * token reads row 2), so a left-padded row computes what the same text computes alone, and a
 * KV-cache step continues each row's numbering. Outputs at padding positions are not defined
 * (HF's eager path, CUDA SDPA and this code each give them something different); only positions
 * whose mask is 1 mean anything.
 *
 * In training, dropout follows the config (`dropout` on the attention and feed-forward outputs,
 * `attention_dropout` on the probabilities), and LayerDrop skips a layer with probability
 * `layerdrop`; all draws come from the model's seeded dropout counter. With `checkpointing` each
 * layer is one op that keeps only its input and is recomputed in backward (../../ops/checkpoint.ts;
 * the same gradients, for one more forward pass). What every decoder does alike (input checks,
 * hidden states, KV cache, per-layer memory scoping and checkpointing, logits) is the decoder
 * base's (../decoder/decoder-model.ts); this file states OPT's positions, embedding, layer, final
 * norm and head. Parameters are tf.Variables under OPTForCausalLM's names (./weights.ts); linear
 * layers of the decoder layers can carry adapters (../adapters/: LoRA).
 */
import { tf } from '../../backend/index.js';
import { groupedQueryAttention } from '../../ops/attention.js';
import { fusedDropout } from '../../ops/dropout.js';
import { fusedLayerNorm } from '../../ops/layer-norm.js';
import { mulberry32Uniform } from '../../util/mulberry32.js';
import { InputError } from '../../util/errors.js';
import { positionsFromMask } from '../causal-decoder.js';
import { DecoderModel, type DecoderCall, type LayerInputs, type LayerKeys, type LayerOutput } from '../decoder/decoder-model.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import type { InitialWeight } from '../transformer-model.js';
import type { OptConfig } from './config.js';
import { OPT_PREFIX, optLinearModules } from './weights.js';

/** OPTLearnedPositionalEmbedding's offset: position p reads row p + 2. */
export const OPT_POSITION_OFFSET = 2;

/**
 * OPT's position ids of the last `queryLen` tokens of each row: cumsum(mask) · mask − 1 over the
 * row's `keyLen` tokens (cached ones first), so real tokens count 0, 1, 2, … and padding gets −1
 * (HF `OPTDecoder.forward`).
 */
export function optPositionIds(mask: Int32Array, batch: number, keyLen: number, queryLen: number): Int32Array {
  return positionsFromMask(mask, batch, keyLen, queryLen, -1);
}

export class OptModel extends DecoderModel<OptConfig> {
  /** `frozenBase`: the linear layers' weights stored in 16 or 4 bits as they load (../frozen-base.ts). */
  constructor(config: OptConfig, weights: ReadonlyMap<string, InitialWeight>, dropoutSeed = 0, frozenBase?: FrozenBaseSpec) {
    super('opt', config, weights, dropoutSeed, frozenBase && { spec: frozenBase, modules: optLinearModules(config) });
  }

  /**
   * The width of `lastHiddenState` and of the sentence embeddings pooled from it:
   * word_embed_proj_dim (equal to hidden_size except where project_out maps back, as in OPT-350m).
   * The decoder layers' own width is `config.hiddenSize`.
   */
  override get hiddenSize(): number {
    return this.config.wordEmbedProjDim;
  }

  /** OPT's two dropouts (outputs of attention and feed-forward; attention probabilities) take the run's probability. */
  protected override applyDropout(p: number): void {
    this.config.dropout = p;
    this.config.attentionDropout = p;
  }

  override linearModules(): Map<string, readonly [number, number]> {
    return optLinearModules(this.config);
  }

  protected layerPrefix(l: number): string {
    return `${OPT_PREFIX}layers.${l}.`;
  }

  /** Padding numbered −1, as HF's OPT does (it reads row 1 of the position table; its outputs are never used). */
  protected override positionIds(mask: Int32Array, batch: number, keyLen: number, queryLen: number): Int32Array {
    return optPositionIds(mask, batch, keyLen, queryLen);
  }

  /** Every position must have its row in the learned table. */
  protected checkPositions(call: DecoderCall): void {
    for (const position of call.positions) {
      if (position >= this.config.maxPositions) {
        throw new InputError(`position ${position} exceeds the context length ${this.config.maxPositions} (max_position_embeddings); truncate the input`);
      }
    }
  }

  /** project_in(token embeddings) + the learned position embeddings (offset 2). */
  protected embed(ids: tf.Tensor2D, call: DecoderCall): tf.Tensor {
    const cfg = this.config;
    const p = OPT_PREFIX;
    const rows = new Int32Array(call.positions.length);
    // Padding (position −1, or below) reads row 1 as in HF; its outputs are never used.
    for (let i = 0; i < rows.length; i++) rows[i] = Math.max(call.positions[i], -1) + OPT_POSITION_OFFSET;
    let tokens: tf.Tensor = tf.gather(this.p(`${p}embed_tokens.weight`), ids);
    if (cfg.wordEmbedProjDim !== cfg.hiddenSize) tokens = this.project(tokens, `${p}project_in.weight`);
    return tf.add(tokens, tf.gather(this.p(`${p}embed_positions.weight`), tf.tensor2d(rows, [call.batch, call.seqLen], 'int32')));
  }

  /** The final LayerNorm and project_out, each only where the config has it. */
  protected finalHidden(h: tf.Tensor): tf.Tensor {
    const cfg = this.config;
    if (cfg.finalLayerNorm) h = this.layerNorm(h, `${OPT_PREFIX}final_layer_norm`);
    if (cfg.wordEmbedProjDim !== cfg.hiddenSize) h = this.project(h, `${OPT_PREFIX}project_out.weight`);
    return h;
  }

  /** The LM head is tied to the token embeddings. */
  protected lmHeadWeight(): string {
    return `${OPT_PREFIX}embed_tokens.weight`;
  }

  /** Whether LayerDrop skips this layer in this training step (one seeded draw per layer). */
  protected override skipsLayer(call: DecoderCall): boolean {
    if (!call.training || this.config.layerdrop <= 0) return false;
    return mulberry32Uniform(this.nextDropoutSeed())() < this.config.layerdrop;
  }

  /** LayerNorm `name` (without weight and bias when the config's LayerNorms are not affine). */
  private layerNorm(x: tf.Tensor, name: string): tf.Tensor {
    const cfg = this.config;
    if (cfg.layerNormAffine) return fusedLayerNorm(x, this.p(`${name}.weight`), this.p(`${name}.bias`), cfg.layerNormEps);
    const width = x.shape[x.shape.length - 1];
    return fusedLayerNorm(x, tf.ones([width]), tf.zeros([width]), cfg.layerNormEps);
  }

  private dropout(x: tf.Tensor, rate: number, training: boolean): tf.Tensor {
    return training && rate > 0 ? fusedDropout(x, rate, this.nextDropoutSeed()) : x;
  }

  /** Decoder layer l (pre- or post-LN as configured), continuing `past` when given. */
  protected layer(x: tf.Tensor, l: number, inputs: LayerInputs, call: DecoderCall, past?: LayerKeys): LayerOutput {
    const cfg = this.config;
    const { batch: B, seqLen: T, ctx, training } = call;
    const { numHeads: H, headDim: D } = cfg;
    const lp = this.layerPrefix(l);
    const bias = cfg.enableBias;
    const split = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]);
    let h = x;
    const attnIn = cfg.doLayerNormBefore ? this.layerNorm(h, `${lp}self_attn_layer_norm`) : h;
    const q = split(tf.mul(this.linear(attnIn, `${lp}self_attn.q_proj`, ctx, bias), D ** -0.5));
    let k = split(this.linear(attnIn, `${lp}self_attn.k_proj`, ctx, bias));
    let v = split(this.linear(attnIn, `${lp}self_attn.v_proj`, ctx, bias));
    if (past) {
      k = tf.concat([past.keys, k], 2);
      v = tf.concat([past.values, v], 2);
    }
    const attnDropout = training && cfg.attentionDropout > 0 ? (probs: tf.Tensor) => fusedDropout(probs, cfg.attentionDropout, this.nextDropoutSeed()) : undefined;
    const attn = groupedQueryAttention(q, k, v, inputs.mask, { scale: 1, dropout: attnDropout });
    const merged = tf.reshape(tf.transpose(attn, [0, 2, 1, 3]), [B, T, cfg.hiddenSize]);
    h = tf.add(h, this.dropout(this.linear(merged, `${lp}self_attn.out_proj`, ctx, bias), cfg.dropout, training));
    if (!cfg.doLayerNormBefore) h = this.layerNorm(h, `${lp}self_attn_layer_norm`);
    const ffIn = cfg.doLayerNormBefore ? this.layerNorm(h, `${lp}final_layer_norm`) : h;
    const ff = this.linear(tf.relu(this.linear(ffIn, `${lp}fc1`, ctx, bias)), `${lp}fc2`, ctx, bias);
    h = tf.add(h, this.dropout(ff, cfg.dropout, training));
    if (!cfg.doLayerNormBefore) h = this.layerNorm(h, `${lp}final_layer_norm`);
    return { h, keys: k as tf.Tensor4D, values: v as tf.Tensor4D };
  }
}
